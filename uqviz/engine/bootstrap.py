"""Bootstrap engine on errors and uncertainties: pick the path, return arrays.

This thin layer maps statistic names to the numpy kernels of
:mod:`uqviz._array.bootstrap`: moment statistics go through resampled sums
(numba, parallel); binned statistics (with moments riding along) through
re-binned resampled sums; any generic statistic switches the whole call to
index resampling so that all statistics stay paired.
"""

from __future__ import annotations

import numpy as np

from uqviz._array import bootstrap as kb
from uqviz._array import stats as ks
from uqviz.engine.statistics import DEFAULT_N_BINS, binned_estimate, get_statistic

__all__ = ["bootstrap_statistics"]


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


def bootstrap_statistics(e, u, statistics, *, n_boot=10_000, ci=0.95, method="bca",
                         rng=None, engine=None, starts=None, sizes=None,
                         n_bins=DEFAULT_N_BINS, key=None):
    """Paired bootstrap of several statistics on one set of points.

    Parameters
    ----------
    e, u : ndarray, shape (M,)
        Errors and uncertainties.
    statistics : sequence of str
        Registered statistic names.
    n_boot : int
        Number of bootstrap replicates.
    ci : float
        Confidence level.
    method : {"bca", "percentile", "basic"}
    rng : None, int or numpy.random.Generator
        Seed (SPEC 7); the same seed gives the same numbers.
    engine : {"numba", "numpy"}, optional
        Resampling engine for moment statistics (default numba).
    starts, sizes : array_like of int, optional
        Contiguous groups of rows (bins), each resampled on its own. Only for
        moment statistics.
    n_bins : int, default 20
        Equal-count bins of uE for binned statistics (ENCE, UCE, ZMSE); each
        resample is re-binned.
    key : ndarray, shape (M,), optional
        Binning variable of the binned statistics (default uE).

    Returns
    -------
    dict
        name -> :class:`uqviz._array.bootstrap.BootstrapResult`; arrays have a
        leading group axis (length 1 without groups).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> u = rng.uniform(0.5, 2.0, 500); e = u * rng.standard_normal(500)
    >>> res = bootstrap_statistics(e, u, ["ZMS", "RCE"], n_boot=2000, rng=1)
    >>> bool(res["ZMS"].lower[0] < 1.0 < res["ZMS"].upper[0])
    True
    """
    rng = np.random.default_rng(rng)
    e = np.ascontiguousarray(e, dtype=float)
    u = np.ascontiguousarray(u, dtype=float)
    stats = [get_statistic(s) for s in statistics]
    if len({s.name for s in stats}) != len(stats):
        raise ValueError(f"statistics must be distinct, got {list(statistics)}")
    kinds = {s.kind for s in stats}
    if kinds == {"moments"}:
        seed = int(rng.integers(0, 2**63))
        return kb.bootstrap_moments(
            e, u, {s.name: (s.func, s.columns) for s in stats}, n_boot=n_boot, seed=seed,
            ci=ci, method=method, starts=starts, sizes=sizes, engine=engine)
    if starts is not None:
        raise ValueError("grouped bootstrap is available for moment statistics only")
    if "generic" not in kinds:
        seed = int(rng.integers(0, 2**63))
        return kb.bootstrap_binned(
            e, u, {s.name: (s.kind, s.func, s.columns) for s in stats}, n_bins=n_bins,
            n_boot=n_boot, seed=seed, ci=ci, method=method, engine=engine, key=key)
    if key is not None:
        raise ValueError("a binning variable other than uE is available for binned and "
                         "moment statistics only")
    return kb.bootstrap_generic(e, u, {s.name: _as_generic(s, n_bins) for s in stats},
                                n_boot=n_boot, rng=rng, ci=ci, method=method)
