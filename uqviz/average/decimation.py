"""Decimation: statistics after removing the largest uncertainties (Pernot (2024b), Fig. 8)."""

from __future__ import annotations


import numpy as np
import xarray as xr

from uqviz._array.bca import METHODS
from uqviz.average.validation import average_statistic_names, validate_average
from uqviz.data.model import check_dataset
from uqviz.engine.options import warn_points_independent
from uqviz.engine import checks
from uqviz.engine.options import BootstrapOptions
from uqviz.engine.statistics import point_estimate
from uqviz.engine.tree import datasets_of, map_datasets, naming_child

__all__ = ["DEFAULT_FRACTIONS", "decimated", "decimation_curve", "decimation_order", "n_removed"]

#: 0, 1, ..., 10 % (Pernot (2024b), Fig. 8).
DEFAULT_FRACTIONS = np.round(np.arange(0, 0.105, 0.01), 12)

_ROUNDING = ("floor", "round")
_TIES = ("stable", "E")


def _check_options(rounding, ties):
    checks.choice("rounding", rounding, _ROUNDING)
    checks.choice("ties", ties, _TIES)


def _check_fraction(fraction):
    if np.ndim(fraction) != 0 and not isinstance(fraction, str):
        raise ValueError(
            f"fraction must be a single number in [0, 1), got shape {np.shape(fraction)}"
        )
    return float(checks.fractions("fraction", fraction)[0])


def n_removed(fraction, m, *, rounding="floor"):
    """Number of points removed for a ``fraction`` of ``m`` points.

    Parameters
    ----------
    fraction : float or array_like
        In [0, 1); ``fraction * m`` is rounded to 9 decimals first.
    m : int
    rounding : {"floor", "round"}, default "floor"

    Returns
    -------
    numpy.ndarray of int

    Examples
    --------
    >>> n_removed([0.0, 0.05, 0.29], 100).tolist()
    [0, 5, 29]
    """
    _check_options(rounding, "stable")
    x = np.round(np.asarray(fraction, dtype=float) * int(m), 9)
    return (np.floor(x) if rounding == "floor" else np.round(x)).astype(np.int64)


def decimation_order(e, u, *, ties="stable"):
    """Indices sorting the points by decreasing uncertainty (first = removed first).

    Parameters
    ----------
    e, u : array_like, shape (M,)
    ties : {"stable", "E"}, default "stable"
        Equal ``u`` in row order, or by decreasing ``e``.

    Returns
    -------
    numpy.ndarray of int

    Examples
    --------
    >>> decimation_order([1.0, 2.0, 3.0, 0.5], [0.2, 0.3, 0.2, 0.1], ties="E").tolist()
    [1, 2, 0, 3]
    """
    _check_options("floor", ties)
    e = np.asarray(e, dtype=float)
    u = np.asarray(u, dtype=float)
    if ties == "stable":
        return np.argsort(-u, kind="stable")
    return np.lexsort((-e, -u))


def _kept_rows(ds, fraction, rounding, ties):
    e, u = np.asarray(ds["E"].values, dtype=float), np.asarray(ds["uE"].values, dtype=float)
    k = int(n_removed(fraction, u.size, rounding=rounding))
    if k >= u.size:
        raise ValueError(f"fraction={fraction} removes all {u.size} points of the data")
    order = decimation_order(e, u, ties=ties)
    return np.sort(order[k:]), k


def decimated(data, *, fraction, rounding="floor", ties="stable"):
    r"""Remove the ``fraction`` of points with the largest uncertainties.

    Parameters
    ----------
    data : xarray.Dataset or xarray.DataTree
        Errors ``E`` and standard uncertainties ``uE`` on dim ``point`` (with any features), as
        made by :func:`uqviz.from_arrays` and the other constructors; a DataTree is decimated
        dataset by dataset.
    fraction : float
        Share of the points removed, in [0, 1).
    rounding : {"floor", "round"}, default "floor"
        How the number of removed points ``fraction * M`` is made an integer.
    ties : {"stable", "E"}, default "stable"
        Order of removal among equal ``uE``: "stable" removes them in row order, "E" by
        decreasing ``E``.

    Returns
    -------
    xarray.Dataset or xarray.DataTree
        The remaining points in their original order; attrs ``decimation_fraction``,
        ``n_decimated``.

    See Also
    --------
    uqviz.decimation_curve : the statistics over a range of fractions.
    uqviz.validate_average : validate the decimated data.

    Notes
    -----
    The :math:`n = \lfloor f M \rfloor` (``rounding="floor"``) or :math:`\mathrm{round}(f M)`
    points with the largest :math:`u_E` are removed, :math:`f` the ``fraction`` and :math:`M` the
    number of points (Pernot (2024b), Fig. 8).

    References
    ----------
    - Pernot (2024b), Fig. 8: decimation.
    - Pernot (2024a), Fig. 2: decimation.

    Full entries: :doc:`/docs/references`.

    Examples
    --------
    >>> import uqviz
    >>> ds = uqviz.from_arrays([0.1, -0.2, 0.3, 0.0], [0.1, 0.4, 0.2, 0.3])
    >>> decimated(ds, fraction=0.25)["point"].values.tolist()
    [0, 2, 3]
    """
    fraction = _check_fraction(fraction)
    _check_options(rounding, ties)

    def one(ds, name=None):
        with naming_child(name):
            check_dataset(ds)
        keep, k = _kept_rows(ds, fraction, rounding, ties)
        out = ds.isel(point=keep)
        out.attrs = {
            **ds.attrs,
            "decimation_fraction": fraction,
            "n_decimated": k,
            "decimation": f"largest uE removed ({rounding}, ties {ties})",
        }
        return out

    if isinstance(data, xr.DataTree):
        tree = xr.DataTree.from_dict({name: one(ds, name) for name, ds in datasets_of(data)})
        tree.attrs = dict(data.attrs)
        return tree
    return one(datasets_of(data)[0][1])


def _decimation_one(ds, *, rng=None, statistics, fractions, rounding, ties):
    check_dataset(ds)
    warn_points_independent(ds, "decimation_curve")
    e, u = np.asarray(ds["E"].values, dtype=float), np.asarray(ds["uE"].values, dtype=float)
    m = u.size
    ks = n_removed(fractions, m, rounding=rounding)
    if ks.max() >= m:
        raise ValueError(
            f"fractions: {fractions[ks.argmax()]:g} removes all {m} points of the data"
        )
    order = decimation_order(e, u, ties=ties)
    es, us = e[order], u[order]
    values = np.array([[point_estimate(s, es[k:], us[k:]) for k in ks] for s in statistics])
    # stat_0 on the same (sorted) arrays, so that delta is exactly 0 at k = 0
    full = np.array([point_estimate(s, es, us) for s in statistics])
    return xr.Dataset(
        {
            "delta": (
                ("statistic", "fraction"),
                values - full[:, None],
                {"long_name": "stat_k - stat_0 (decimation curve)"},
            ),
            "estimate": (
                ("statistic", "fraction"),
                values,
                {"long_name": "statistic after removing the largest uE (stat_k)"},
            ),
            "full_estimate": (
                "statistic",
                full,
                {"long_name": "statistic on the full set (stat_0)"},
            ),
            "n_removed": ("fraction", ks, {"long_name": "points removed"}),
            "n_points": ((), m),
        },
        coords={"statistic": list(statistics), "fraction": fractions},
    )


def decimation_curve(
    data,
    *,
    statistics=("ZMS", "RCE"),
    fractions=None,
    n_boot=10_000,
    ci=0.95,
    method="bca",
    rng=None,
    rounding="floor",
    ties="stable",
    client=None,
    engine=None,
):
    r"""Statistics after removing the largest uncertainties, with the CI of the full set
    (Pernot (2024b), Fig. 8).

    Parameters
    ----------
    data : xarray.Dataset or xarray.DataTree
        Errors ``E`` and standard uncertainties ``uE`` on dim ``point`` (with any features), as
        made by :func:`uqviz.from_arrays` and the other constructors; a DataTree gives one
        result per dataset, on dim ``dataset``.
    statistics : sequence of str, default ("ZMS", "RCE")
        Moment statistics with a reference (``uqviz.list_statistics()``).
    fractions : array_like, optional
        Fractions of points removed, in [0, 1); default 0, 0.01, ..., 0.10
        (``uqviz.average.decimation.DEFAULT_FRACTIONS``).
    n_boot : int, default 10000
        Number of bootstrap replicates, an int >= 2.
    ci : float, default 0.95
        Confidence level of the intervals, in (0, 1).
    method : {"bca", "percentile", "basic"}, default "bca"
        How the bootstrap interval is computed: "bca" (bias-corrected and accelerated, DiCiccio
        & Efron (1996)), "percentile" or "basic".
    rng : None, int, numpy.random.SeedSequence or numpy.random.Generator, default None
        Random stream: None (fresh entropy), an int >= 0, a numpy.random.SeedSequence (copied,
        never consumed) or a numpy.random.Generator; the same ``rng`` gives the same numbers on
        any number of threads or workers (docs/conventions.md, "Randomness").
    rounding : {"floor", "round"}, default "floor"
        How the number of removed points ``fraction * M`` is made an integer.
    ties : {"stable", "E"}, default "stable"
        Order of removal among equal ``uE``: "stable" removes them in row order, "E" by
        decreasing ``E``.
    client : None, "local" or dask.distributed.Client, default None
        Where the bootstrap runs (docs/conventions.md); the numbers do not depend on it.
    engine : {"numba", "numpy"}, optional
        Resampling kernel of the bootstrap (docs/conventions.md); passed to
        :func:`uqviz.validate_average`, whose intervals these are.

    Returns
    -------
    xarray.Dataset
        On (``dataset``,) ``statistic``, ``fraction``: ``delta``, ``estimate``,
        ``outside_ci``; ``full_estimate``, ``ci_lower_halfwidth``,
        ``ci_upper_halfwidth``; ``n_removed``; ``n_points``.

    See Also
    --------
    uqviz.decimated : the data after one decimation.
    uqviz.validate_average : the interval of the full set.
    uqviz.plots.average.decimation_curves : draws ``delta`` against the fraction.

    Notes
    -----
    For each fraction :math:`f`, the :math:`n = \lfloor f M \rfloor` points (``rounding="floor"``)
    with the largest :math:`u_E` are removed and the statistic recomputed,
    :math:`\delta(f) = \vartheta(f) - \vartheta(0)`. ``outside_ci`` flags
    :math:`\delta(f) \notin [I^- - \vartheta(0), I^+ - \vartheta(0)]`, the interval of the full set
    centred on zero (Pernot (2024b), Fig. 8; Pernot (2024a), Fig. 2).

    With the z-scores :math:`Z_i = E_i / u_{E_i}` of the :math:`M` points,

    .. math::

       \mathrm{ZMS} = \langle Z^2 \rangle = \frac{1}{M}\sum_{i=1}^M Z_i^2, \qquad
       \mathrm{RCE} = \frac{\mathrm{RMV} - \mathrm{RMSE}}{\mathrm{RMV}}, \quad
       \mathrm{RMV} = \sqrt{\langle u_E^2 \rangle}, \ \mathrm{RMSE} = \sqrt{\langle E^2 \rangle}

    with references 1 and 0 (Pernot (2024b), eqs. 11 and 7).

    References
    ----------
    - Pernot (2024b), Fig. 8: decimation of the nine sets.
    - Pernot (2024a), Fig. 2: decimation.
    - DiCiccio & Efron (1996): the BCa interval of the full set.

    Full entries: :doc:`/docs/references`.

    Examples
    --------
    >>> import uqviz
    >>> res = decimation_curve(uqviz.synthetic.nig(2000, nu=20, rng=0), n_boot=1000, rng=1)
    >>> res["n_removed"].sel(fraction=0.05).item()
    100
    """
    _check_options(rounding, ties)
    fractions = (
        DEFAULT_FRACTIONS
        if fractions is None
        else np.round(checks.fractions("fractions", fractions), 12)
    )
    boot = BootstrapOptions.check(
        n_boot=n_boot, ci=ci, method=method, rng=rng, engine=engine, methods=METHODS
    )
    statistics = average_statistic_names(statistics)
    out = map_datasets(
        _decimation_one,
        data,
        statistics=statistics,
        fractions=fractions,
        rounding=rounding,
        ties=ties,
    )
    # the CI bars are exactly those of validate_average(data) with the same settings
    va = validate_average(
        data,
        statistics=statistics,
        n_boot=boot.n_boot,
        ci=boot.ci,
        method=boot.method,
        rng=rng,
        client=client,
        engine=boot.engine,
    )
    lo = va["ci_lower"] - va["estimate"]
    hi = va["ci_upper"] - va["estimate"]
    out["ci_lower_halfwidth"] = lo.assign_attrs(long_name="ci_lower - estimate (full set, <= 0)")
    out["ci_upper_halfwidth"] = hi.assign_attrs(long_name="ci_upper - estimate (full set, >= 0)")
    outside = (out["delta"] < lo) | (out["delta"] > hi)
    outside.attrs = {"long_name": "delta outside the zero-centred CI of the full set"}
    out["outside_ci"] = outside  # a flag: not the attrs (units) of delta
    out.attrs.update(
        {
            "statistics": list(statistics),
            "n_boot": boot.n_boot,
            "ci": boot.ci,
            "method": boot.method,
            "rng": boot.attrs["rng"],
            "rounding": rounding,
            "ties": ties,
            "engine": boot.engine,
            "decimation": "points sorted by decreasing uE; the first n_removed = "
            f"{rounding}(fraction * M) are discarded",
            "citation": "Pernot (2024b), sect. V C, Fig. 8",
        }
    )
    return out
