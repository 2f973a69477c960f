"""Running statistics of z-scores and reliability-diagram statistics.

- :func:`running_statistics`: the z-scores sorted by a conditioning variable
  with their running mean and running mean of squares over a moving window,
  the numbers behind the homoscedasticity plots of 001 Fig. 2 (drawn by
  :func:`uqviz.plots.conditional.zscores_vs`).
- :func:`reliability`: RMV and RMSE per bin of the uncertainty (or any
  conditioning variable) with confidence intervals, the numbers behind a
  reliability diagram (RMSE vs RMV, :func:`uqviz.plots.conditional.reliability_diagram`).

Statistics are computed here; the plot functions only draw them.
"""

from __future__ import annotations

import numpy as np
import xarray as xr
from scipy import stats as sps

from uqviz.engine.tree import map_datasets
from uqviz.engine.binning import bin_coords, compute_bins, conditioning_values
from uqviz.engine.bootstrap import bootstrap_statistics
from uqviz.data.model import check_dataset

__all__ = ["running_statistics", "reliability", "default_window", "default_reliability_bins"]

RELIABILITY_METHODS = ("bootstrap", "chi2")


def default_window(m: int) -> int:
    """Default running window: M // 100 points (at least 10, at most M).

    001 Fig. 2 uses ErrViewLib's ``plotEvsPU(..., nBin = 100)`` with sliding
    windows, i.e. windows of floor(M / 100) points (138 for QM9).

    Examples
    --------
    >>> default_window(13885), default_window(500)
    (138, 10)
    """
    return int(min(m, max(m // 100, 10)))


def _running_means(v, w):
    cs = np.concatenate([[0.0], np.cumsum(v)])
    return (cs[w:] - cs[:-w]) / w


def _running_one(ds, *, rng=None, conditioning, window):
    check_dataset(ds)
    name, x = conditioning_values(ds, conditioning)
    m = x.size
    w = default_window(m) if window is None else int(window)
    if not 1 <= w <= m:
        raise ValueError(f"window must be between 1 and the number of points ({m}), got {w}")
    order = np.argsort(x, kind="stable")
    xs = x[order]
    z = (ds["E"].values / ds["uE"].values)[order]
    lower, upper = xs[: m - w + 1], xs[w - 1:]
    attrs_x = dict(ds[conditioning].attrs) if isinstance(conditioning, str) else {}
    return xr.Dataset(
        {
            "z": ("rank", z, {"long_name": "z-score", "units": ""}),
            "running_mean": ("window", _running_means(z, w),
                             {"long_name": "running mean of z", "reference": 0.0}),
            "running_ms": ("window", _running_means(z * z, w),
                           {"long_name": "running mean of z^2", "reference": 1.0}),
        },
        coords={
            "rank": np.arange(m),
            "point": ("rank", ds["point"].values[order]),
            "x": ("rank", xs, attrs_x),
            "window": np.arange(m - w + 1),
            "x_window": ("window", 0.5 * (lower + upper), attrs_x),
            "x_window_lower": ("window", lower, attrs_x),
            "x_window_upper": ("window", upper, attrs_x),
        },
        attrs={"conditioning": name, "window": w, "n_points": m,
               "units": attrs_x.get("units", ""),
               "long_name": attrs_x.get("long_name", name),
               "n_distinct": int(np.unique(x).size)},
    )


def running_statistics(data, *, conditioning="uE", window=None):
    """Z-scores sorted by a conditioning variable, with their running mean and mean square.

    The homoscedasticity check of 001 sect. III A (Fig. 2): against ``uE``
    (consistency) or an input feature (adaptivity), the running mean of z
    should stay near 0 and the running mean of z^2 near 1.

    Parameters
    ----------
    data : xarray.Dataset or xarray.DataTree
    conditioning : str or array_like, default "uE"
        Variable to sort by (``"uE"``, a feature, or one value per point).
    window : int, optional
        Points per moving window; default :func:`default_window` (M // 100,
        as the paper's Fig. 2, at least 10).

    Returns
    -------
    xarray.Dataset
        On dim ``rank`` (points sorted by the conditioning variable, ties in
        data order): ``z`` with coords ``x`` (conditioning value) and
        ``point`` (original row). On dim ``window`` (the M - window + 1
        windows of consecutive sorted points): ``running_mean`` and
        ``running_ms`` with coords ``x_window`` (mid-range of the window's
        x, as ErrViewLib), ``x_window_lower``, ``x_window_upper``.
        Attributes: ``conditioning``, ``window``, ``n_points``, ``units``,
        ``long_name``, ``n_distinct``.

    Examples
    --------
    >>> import uqviz
    >>> from uqviz import running_statistics
    >>> ds = uqviz.synthetic.default_example()
    >>> res = running_statistics(ds, conditioning="X", window=100)
    >>> res.sizes["window"] == ds.sizes["point"] - 99
    True
    """
    out = map_datasets(_running_one, data, conditioning=conditioning, window=window)
    return out


def default_reliability_bins(m: int) -> int:
    """Default number of bins of a reliability diagram: max(min(M // 150, 15), 2).

    The default of ErrViewLib's ``plotRelDiag`` (at least 150 points per bin
    up to 15 bins).

    Examples
    --------
    >>> default_reliability_bins(13885), default_reliability_bins(600)
    (15, 4)
    """
    return int(max(min(m // 150, 15), 2))


def _reliability_one(ds, *, rng, conditioning, n_bins, binning, min_count, n_boot, ci, method,
                     engine):
    check_dataset(ds)
    name, x = conditioning_values(ds, conditioning)
    n = default_reliability_bins(x.size) if n_bins is None else int(n_bins)
    bins = compute_bins(x, n_bins=n, scheme=binning, min_count=min_count)
    if np.any(bins.sizes < 2):
        raise ValueError(f"{int(np.sum(bins.sizes < 2))} bins have fewer than 2 points: "
                         "use fewer bins")
    e = ds["E"].values[bins.order]
    u = ds["uE"].values[bins.order]
    sizes = bins.sizes
    if method == "bootstrap":
        rmse = bootstrap_statistics(e, u, ["RMSE"], n_boot=n_boot, ci=ci, method="bca",
                                    rng=rng, engine=engine, starts=bins.starts,
                                    sizes=sizes)["RMSE"]
        values = {"rmse": rmse.estimate, "rmse_lower": rmse.lower, "rmse_upper": rmse.upper}
    else:  # chi2: n MSE / sigma^2 ~ chi2(n) for normal errors of variance sigma^2
        mse = np.add.reduceat(e * e, bins.starts) / sizes
        alpha = (1.0 - ci) / 2.0
        values = {"rmse": np.sqrt(mse),
                  "rmse_lower": np.sqrt(sizes * mse / sps.chi2.ppf(1.0 - alpha, sizes)),
                  "rmse_upper": np.sqrt(sizes * mse / sps.chi2.ppf(alpha, sizes))}
    # RMV is the x coordinate of the diagram: no interval (within a bin of a
    # stratified uE it is a constant)
    values["rmv"] = np.sqrt(np.add.reduceat(u * u, bins.starts) / sizes)
    units = ds["E"].attrs.get("units", ds.attrs.get("units", ""))
    data_vars = {k: ("bin", np.asarray(v, dtype=float), {"units": units})
                 for k, v in values.items()}
    data_vars["valid"] = ("bin", (values["rmse_lower"] <= values["rmv"])
                          & (values["rmv"] <= values["rmse_upper"]))
    return xr.Dataset(data_vars, coords=bin_coords(bins),
                      attrs={"conditioning": name, "units": units, **bins.attrs})


def reliability(data, *, conditioning="uE", n_bins=None, binning="equal_count", min_count=None,
                n_boot=5000, ci=0.95, method="bootstrap", rng=None, engine=None):
    """RMV and RMSE per bin, with intervals: the numbers of a reliability diagram.

    For a consistent set the RMSE of the errors in each bin of uE matches
    the RMV (root mean variance) of the uncertainties (001 eq. 5; the
    "RMSE vs RMV" or reliability diagram). Any conditioning variable can be
    used (a feature for adaptivity), but the z-score statistics of
    :func:`uqviz.local_calibration` are preferred there (001 sect. III B).

    Parameters
    ----------
    data : xarray.Dataset or xarray.DataTree
    conditioning : str or array_like, default "uE"
    n_bins : int, optional
        Default :func:`default_reliability_bins` (ErrViewLib's
        max(min(M // 150, 15), 2)).
    binning : {"equal_count", "equal_width", "stratified"}
    min_count : int, optional
        Minimum bin population for merging (see :func:`uqviz.engine.binning.compute_bins`).
    n_boot : int, default 5000
    ci : float, default 0.95
    method : {"bootstrap", "chi2"}
        Interval of the RMSE per bin. ``"bootstrap"``: BCa. ``"chi2"``:
        from n MSE / sigma^2 ~ chi2(n) (normal errors). The RMV is the x
        coordinate of the diagram and gets no interval.
    rng : None, int or Generator
    engine : {"numba", "numpy"}, optional

    Returns
    -------
    xarray.Dataset
        On dim ``bin``: ``rmv``, ``rmse``, ``rmse_lower``, ``rmse_upper``
        (units of E) and ``valid`` (RMV inside the RMSE interval); coords ``bin_lower``, ``bin_upper``,
        ``bin_center``, ``count``.

    Examples
    --------
    >>> import uqviz
    >>> from uqviz import reliability
    >>> ds = uqviz.synthetic.nig(3000, nu=10, rng=0)
    >>> rel = reliability(ds, n_bins=10, n_boot=1000, rng=0)
    >>> rel.sizes["bin"]
    10
    """
    if method not in RELIABILITY_METHODS:
        raise ValueError(f"method must be one of {RELIABILITY_METHODS}, got {method!r}")
    if not 0.0 < ci < 1.0:
        raise ValueError(f"ci must be in (0, 1), got {ci}")
    out = map_datasets(_reliability_one, data, rng=rng, conditioning=conditioning,
                       n_bins=n_bins, binning=binning, min_count=min_count, n_boot=int(n_boot),
                       ci=ci, method=method, engine=engine)
    out.attrs.update({"n_boot": int(n_boot) if method == "bootstrap" else 0, "ci": ci,
                      "method": "bca" if method == "bootstrap" else "chi2"})
    return out
