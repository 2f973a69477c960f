"""Bootstrap engine on errors and uncertainties: check the input, pick the path, return arrays.

This thin layer maps statistic names to the numpy kernels of
:mod:`uqviz._array.bootstrap`: moment statistics go through resampled sums
(numba, parallel); binned statistics (with moments riding along) through
re-binned resampled sums; any generic statistic switches the whole call to
index resampling so that all statistics stay paired.

Non-finite values
-----------------
- Data: E and uE must be finite, uE > 0 and Z = E/uE finite (ValueError counting
  the offending points); at least 2 points.
- Scale: every statistic is computed exactly for E, uE anywhere in float64
  (see :mod:`uqviz._array.stats`); a scale-dependent statistic whose value is
  not representable (MSE of errors of 1e155) is a ValueError naming it.
- Undefined statistics (CC with constant uE or |E|, ZMSE with a bin of zero
  errors) are a ValueError naming the statistic and the reason.
- Degenerate bootstrap distributions (all replicates equal, on one side of the
  estimate, or non-finite; e.g. all-zero errors, M = 2): the bounds are NaN and
  ``result.degenerate`` is True. Callers report ``valid=False`` and warn with the
  number of such cells.
"""

from __future__ import annotations

import numpy as np

from uqviz._array import bootstrap as kb
from uqviz._array import stats as ks
from uqviz._array.bca import METHODS
from uqviz.engine import checks, seeds
from uqviz.engine.statistics import DEFAULT_N_BINS, binned_estimate, get_statistic

__all__ = ["bootstrap_statistics", "check_points"]


def _as_generic(stat, n_bins):
    if stat.kind == "generic":
        return stat.func, stat.counts
    if stat.kind == "binned":
        def binned(e, u):
            return binned_estimate(stat, e, u, n_bins)

        return binned, None

    def func(e, u):
        return stat.func(ks.column_means(e, u, stat.columns), np.shape(e)[-1])

    return func, None


def check_points(e, u, *, minimum=2):
    """Errors and uncertainties as float64 1-D arrays, or a ValueError counting bad points.

    E and uE finite, uE > 0, Z = E/uE finite (not overflowing), at least
    ``minimum`` points, the same length.

    Examples
    --------
    >>> check_points([1.0, -1.0], [1.0, 2.0])[1].tolist()
    [1.0, 2.0]
    >>> check_points([1.0, 1.0], [1.0, 5e-324])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: Z = E/uE overflows float64 for 1 point(s) (uE down to 4.94e-324): ...
    """
    e = np.ascontiguousarray(e, dtype=float)
    u = np.ascontiguousarray(u, dtype=float)
    if e.ndim != 1 or e.shape != u.shape:
        raise ValueError(f"E and uE must be 1-D arrays of the same length, got shapes "
                         f"{e.shape} and {u.shape}")
    if e.size < minimum:
        raise ValueError(f"data: the bootstrap needs at least {minimum} points (E, uE), got M = "
                         f"{e.size}")
    bad_e = int(np.count_nonzero(~np.isfinite(e)))
    bad_u = int(np.count_nonzero(~np.isfinite(u) | ~(u > 0)))
    if bad_e or bad_u:
        raise ValueError(f"E must be finite and uE finite and > 0: {bad_e} point(s) with "
                         f"non-finite E, {bad_u} with non-finite or non-positive uE")
    with np.errstate(over="ignore"):
        bad_z = ~np.isfinite(e / u)
    if bad_z.any():
        raise ValueError(f"Z = E/uE overflows float64 for {int(bad_z.sum())} point(s) "
                         f"(uE down to {u[bad_z].min():.3g}): rescale or drop them")
    return e, u


def _check_cc(names, e, u):
    if "CC" not in names:
        return
    for label, x in (("uE", u), ("|E|", np.abs(e))):
        if np.all(x == x[0]):
            raise ValueError(f"CC (rank correlation of |E| and uE) is undefined: {label} is "
                             f"constant ({x[0]:.6g} for all {x.size} points)")


def bootstrap_statistics(e, u, statistics, *, n_boot=10_000, ci=0.95, method="bca",
                         rng=None, engine=None, starts=None, sizes=None,
                         n_bins=DEFAULT_N_BINS, key=None):
    """Paired bootstrap of several statistics on one set of points.

    Parameters
    ----------
    e, u : ndarray, shape (M,)
        Errors and uncertainties (finite, uE > 0, M >= 2).
    statistics : sequence of str or Statistic
        Registered statistic names (distinct, at least one).
    n_boot : int
        Number of bootstrap replicates (>= 2).
    ci : float
        Confidence level in (0, 1).
    method : {"bca", "percentile", "basic"}
    rng : None, int, SeedSequence or numpy.random.Generator
        The same rng gives the same numbers.
    engine : {"numba", "numpy"}, optional
        Resampling engine for moment statistics (default numba).
    starts, sizes : array_like of int, optional
        Contiguous groups of rows (bins), each resampled on its own. Only for
        moment statistics.
    n_bins : int, default 20
        Equal-count bins of uE for binned statistics (ENCE, UCE, ZMSE); each
        resample is re-binned. At least 2 points per bin.
    key : ndarray, shape (M,), optional
        Binning variable of the binned statistics (default uE).

    Returns
    -------
    dict
        name -> :class:`uqviz._array.bootstrap.BootstrapResult`; arrays have a
        leading group axis (length 1 without groups). ``degenerate`` marks the
        groups whose interval could not be computed (NaN bounds).

    Raises
    ------
    ValueError
        Bad options or data (see the module docstring), a statistic not
        representable in float64 or undefined for the data.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> u = rng.uniform(0.5, 2.0, 500); e = u * rng.standard_normal(500)
    >>> res = bootstrap_statistics(e, u, ["ZMS", "RCE"], n_boot=2000, rng=1)
    >>> bool(res["ZMS"].lower[0] < 1.0 < res["ZMS"].upper[0])
    True
    >>> res = bootstrap_statistics(np.zeros(20), np.ones(20), ["ZMS"], n_boot=100, rng=1)
    >>> bool(res["ZMS"].degenerate[0]), float(res["ZMS"].estimate[0])
    (True, 0.0)
    """
    rng = checks.rng(rng)
    n_boot = checks.count("n_boot", n_boot, minimum=2)
    ci = checks.probability("ci", ci)
    method = checks.choice("method", method, METHODS)
    if engine is not None:
        checks.choice("engine", engine, ("numba", "numpy"))
    stats = [get_statistic(s) for s in checks.names("statistics", statistics)]
    if len({s.name for s in stats}) != len(stats):
        raise ValueError(f"statistics must be distinct, got {[s.name for s in stats]}")
    e, u = check_points(e, u)
    _check_cc({s.name for s in stats}, e, u)
    kinds = {s.kind for s in stats}
    if kinds == {"moments"}:
        return kb.bootstrap_moments(
            e, u, {s.name: (s.func, s.columns) for s in stats}, n_boot=n_boot,
            seed=seeds.kernel_seed(rng), ci=ci, method=method, starts=starts, sizes=sizes,
            engine=engine)
    if starts is not None:
        raise ValueError("grouped bootstrap is available for moment statistics only")
    if "binned" in kinds:
        n_bins = checks.count("n_bins", n_bins, minimum=1)
        if n_bins > e.size // 2:
            raise ValueError(f"n_bins = {n_bins} leaves fewer than 2 points per bin for "
                             f"M = {e.size} points: use n_bins <= {max(e.size // 2, 1)}")
    if key is not None:
        key = checks.finite_array("key", key, ndim=1)
        if key.shape != e.shape:
            raise ValueError(f"key must have one value per point ({e.size}), got {key.size}")
    if "generic" not in kinds:
        return kb.bootstrap_binned(
            e, u, {s.name: (s.kind, s.func, s.columns) for s in stats}, n_bins=n_bins,
            n_boot=n_boot, seed=seeds.kernel_seed(rng), ci=ci, method=method, engine=engine,
            key=key)
    if key is not None:
        raise ValueError("a binning variable other than uE is available for binned and "
                         "moment statistics only")
    return kb.bootstrap_generic(e, u, {s.name: _as_generic(s, n_bins) for s in stats},
                                n_boot=n_boot, rng=rng, ci=ci, method=method)
