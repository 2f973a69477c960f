"""Conditional calibration: local statistics per bin (LZM, LZMS, LRCE, LZVar).

Binning on ``uE`` tests *consistency*; binning on an input feature tests
*adaptivity* (Pernot 2023, APL Mach. Learn. 1:046121). Per bin, LZMS, LRCE
and LZVar get BCa bootstrap intervals from the grouped resampling engine
(each bin resampled on its own, all bins in one parallel pass); LZM gets the
Student-t interval.
"""

from __future__ import annotations

import warnings

import numpy as np
import xarray as xr
from scipy import stats as sps

from uqviz._array import binned as kbin
from uqviz._array import stats as ks
from uqviz._array.binomial import wilson_interval
from uqviz.engine.tree import map_datasets
from uqviz.engine.binning import bin_coords, compute_bins, conditioning_values
from uqviz.engine.bootstrap import bootstrap_statistics
from uqviz.data.model import check_dataset
from uqviz.engine.statistics import get_statistic

__all__ = ["local_calibration", "fraction_valid", "acf", "binned_errors", "LOCAL_STATISTICS",
           "BINNED_ERRORS", "SMALL_BIN", "HEAVY_TAIL_Z2"]

LOCAL_STATISTICS = ("ZMS", "ZM", "RCE", "ZVar")
SMALL_BIN = 100  # bins with fewer points get a warning (001 sect. III)
HEAVY_TAIL_Z2 = 0.8  # beta_GM(Z^2) limit of 004 Table II


def _student_t_interval(z, starts, sizes, ci):
    means = np.add.reduceat(z, starts) / sizes
    dev2 = (z - np.repeat(means, sizes)) ** 2
    sd = np.sqrt(np.add.reduceat(dev2, starts) / (sizes - 1))
    half = sps.t.ppf((1.0 + ci) / 2.0, sizes - 1) * sd / np.sqrt(sizes)
    return means, means - half, means + half


def _beta_gm_per_bin(z2, starts, sizes):
    return np.array([ks.beta_gm(z2[s:s + n]) for s, n in zip(starts, sizes)])


def _local_one(ds, *, rng, statistic, conditioning, n_bins, binning, min_count, edges, log,
               n_boot, ci, method, engine, random_ties):
    check_dataset(ds)
    name, x = conditioning_values(ds, conditioning)
    rng = np.random.default_rng(rng)
    ties_rng, boot_rng = rng.spawn(2)
    bins = compute_bins(x, n_bins=n_bins, scheme=binning, min_count=min_count, edges=edges,
                        log=log, rng=ties_rng if random_ties else None)
    if np.any(bins.sizes < 2):
        raise ValueError(f"{int(np.sum(bins.sizes < 2))} bins have fewer than 2 points: "
                         "use fewer bins")
    e = ds["E"].values[bins.order]
    u = ds["uE"].values[bins.order]
    if statistic == "ZM":
        est, lower, upper = _student_t_interval(e / u, bins.starts, bins.sizes, ci)
    else:
        r = bootstrap_statistics(e, u, [statistic], n_boot=n_boot, ci=ci, method=method,
                                 rng=boot_rng, engine=engine, starts=bins.starts,
                                 sizes=bins.sizes)[statistic]
        est, lower, upper = r.estimate, r.lower, r.upper
    ref = float(get_statistic(statistic).reference)
    beta = _beta_gm_per_bin((e / u) ** 2, bins.starts, bins.sizes)
    out = xr.Dataset(
        {
            "estimate": ("bin", est),
            "ci_lower": ("bin", lower),
            "ci_upper": ("bin", upper),
            "reference": ((), ref),
            "valid": ("bin", (lower <= ref) & (ref <= upper)),
            "beta_gm_z2": ("bin", beta),
            "heavy_tail": ("bin", beta > HEAVY_TAIL_Z2),
        },
        coords=bin_coords(bins),
        attrs={"conditioning": name, **bins.attrs},
    )
    _warn_bins(out, ds.attrs.get("name", ""))
    return out


def _warn_bins(out, name):
    small = int((out["count"] < SMALL_BIN).sum())
    heavy = int(out["heavy_tail"].sum())
    where = f" in {name!r}" if name else ""
    if small:
        warnings.warn(f"{small} of {out.sizes['bin']} bins{where} have fewer than {SMALL_BIN} "
                      "points: their intervals are unreliable", UserWarning, stacklevel=4)
    if heavy:
        warnings.warn(f"{heavy} of {out.sizes['bin']} bins{where} have beta_GM(Z^2) > "
                      f"{HEAVY_TAIL_Z2} (heavy-tailed z-scores): their intervals may be too "
                      "narrow (flagged in 'heavy_tail')", UserWarning, stacklevel=4)


def local_calibration(data, *, statistic="ZMS", conditioning="uE", n_bins=None,
                      binning="equal_count", min_count=None, edges=None, log=False,
                      n_boot=5000, ci=0.95, method="bca", rng=None, engine=None,
                      random_ties=False):
    """Local calibration statistic per bin of a conditioning variable, with intervals.

    Parameters
    ----------
    data : xarray.Dataset or xarray.DataTree
    statistic : {"ZMS", "ZM", "RCE", "ZVar"}
        LZMS, LZM, LRCE or LZVar. LZM uses the Student-t interval, the others
        the BCa bootstrap per bin.
    conditioning : str or array_like
        ``"uE"`` (consistency), a feature (adaptivity), or one value per point.
    n_bins : int, optional
        Default round(sqrt(M)) (the validation metric's default).
    binning : {"equal_count", "equal_width", "stratified", "edges"}
        See :func:`uqviz.engine.binning.compute_bins`.
    min_count, edges, log
        Options of the binning scheme.
    n_boot : int, default 5000
    ci : float, default 0.95
    method : {"bca", "percentile", "basic"}
    rng : None, int or Generator
    engine : {"numba", "numpy"}, optional
    random_ties : bool, default False
        Randomise the order of tied conditioning values (stratified variables,
        001 sect. III C); otherwise ties keep the data's order.

    Returns
    -------
    xarray.Dataset
        Dim ``bin`` (and ``dataset`` for a DataTree): ``estimate``,
        ``ci_lower``, ``ci_upper``, ``reference``, ``valid``, ``beta_gm_z2``,
        ``heavy_tail``; coords ``bin_lower``, ``bin_upper``, ``bin_center``,
        ``count``. Warns (with counts) about bins below 100 points and bins
        with beta_GM(Z^2) > 0.8.

    Examples
    --------
    >>> import uqviz
    >>> ds = uqviz.synthetic.default_example()
    >>> res = uqviz.local_calibration(ds, conditioning="X", n_bins=10, n_boot=1000, rng=0)
    >>> int(res.sizes["bin"])
    10
    """
    if statistic not in LOCAL_STATISTICS:
        raise ValueError(f"statistic must be one of {LOCAL_STATISTICS}, got {statistic!r}")
    out = map_datasets(_local_one, data, rng=rng, statistic=statistic,
                       conditioning=conditioning, n_bins=n_bins, binning=binning,
                       min_count=min_count, edges=edges, log=log, n_boot=int(n_boot), ci=ci,
                       method=method, engine=engine, random_ties=random_ties)
    out.attrs.update({"statistic": statistic, "n_boot": int(n_boot), "ci": ci,
                      "method": "student-t" if statistic == "ZM" else method})
    return out


# ---------------------------------------------------------------------------
# validation metric, serial structure, binned calibration errors
# ---------------------------------------------------------------------------
def fraction_valid(local_result, *, ci=0.95, nominal=None):
    """Fraction of bins whose interval contains the reference (f_v, 001 sect. II C).

    Parameters
    ----------
    local_result : xarray.Dataset
        Output of :func:`local_calibration` (uses ``valid`` on dim ``bin``;
        NaN-padded bins of a DataTree result are ignored).
    ci : float, default 0.95
        Level of the binomial interval on f_v (Wilson score interval with
        continuity correction).
    nominal : float, optional
        Target coverage; default the ``ci`` of the local intervals (0.95).

    Returns
    -------
    xarray.Dataset
        ``estimate``, ``ci_lower``, ``ci_upper``, ``n_valid``, ``n_bins`` and
        ``nominal_inside`` (whether the nominal coverage lies in the interval).

    Examples
    --------
    >>> import uqviz
    >>> ds = uqviz.synthetic.nig(4000, nu=10, rng=0)
    >>> loc = uqviz.local_calibration(ds, n_bins=20, n_boot=1000, rng=1)
    >>> fv = uqviz.fraction_valid(loc)
    >>> 0.0 <= float(fv.estimate) <= 1.0
    True
    """
    valid = local_result["valid"]
    present = local_result["count"].notnull() if "count" in local_result.coords else True
    n_valid = (valid.where(present, False)).sum("bin")
    n_bins = xr.ones_like(valid, dtype=int).where(present, 0).sum("bin")
    lower, upper = wilson_interval(n_valid.values, n_bins.values, ci=ci, continuity=True)
    nominal = local_result.attrs.get("ci", 0.95) if nominal is None else nominal
    dims = n_valid.dims
    out = xr.Dataset(
        {
            "estimate": (dims, n_valid.values / n_bins.values),
            "ci_lower": (dims, lower),
            "ci_upper": (dims, upper),
            "n_valid": n_valid,
            "n_bins": n_bins,
            "nominal_inside": (dims, (lower <= nominal) & (nominal <= upper)),
        },
        attrs={"nominal": nominal, "ci": ci, "interval": "Wilson score with continuity "
               "correction", **{k: v for k, v in local_result.attrs.items()
                                if k in ("statistic", "conditioning", "binning")}},
    )
    return out


def acf(local_result, *, max_lag=None, variable="estimate"):
    """Autocorrelation of the per-bin series, with the +-1.96/sqrt(n) white-noise band.

    Parameters
    ----------
    local_result : xarray.Dataset
        Output of :func:`local_calibration` for one dataset.
    max_lag : int, optional
        Default min(n_bins - 1, 10 log10(n_bins)) (as R's ``acf``).
    variable : str
        The per-bin series (default the local statistic).

    Returns
    -------
    xarray.Dataset
        ``acf`` on dim ``lag`` and the scalar ``band`` = 1.96/sqrt(n_bins).

    Examples
    --------
    >>> import numpy as np, xarray as xr
    >>> res = xr.Dataset({"estimate": ("bin", np.arange(10.0))})
    >>> float(acf(res, max_lag=1).acf[0])
    1.0
    """
    series = local_result[variable]
    if "dataset" in series.dims:
        raise ValueError("acf takes the result of one dataset: select it with .sel(dataset=...)")
    x = series.dropna("bin").values
    n = x.size
    if max_lag is None:
        max_lag = int(min(n - 1, np.floor(10 * np.log10(n))))
    if not 1 <= max_lag < n:
        raise ValueError(f"max_lag must be between 1 and n_bins - 1 ({n - 1}), got {max_lag}")
    return xr.Dataset({"acf": ("lag", kbin.acf(x, max_lag)),
                       "band": ((), 1.96 / np.sqrt(n))},
                      coords={"lag": np.arange(max_lag + 1)},
                      attrs={"variable": variable, "n_bins": n})


BINNED_ERRORS = tuple(kbin.BINNED)


def binned_bins(ds, *, conditioning="uE", n_bins=20, binning="equal_count", **kw):
    """Bins used by the binned calibration errors (shared with simulated references)."""
    _, x = conditioning_values(ds, conditioning)
    return compute_bins(x, n_bins=n_bins, scheme=binning, **kw)


def _binned_one(ds, *, rng=None, statistics, conditioning, n_bins, binning):
    check_dataset(ds)
    bins = binned_bins(ds, conditioning=conditioning, n_bins=n_bins, binning=binning)
    e = ds["E"].values[bins.order]
    u = ds["uE"].values[bins.order]
    values = [kbin.BINNED[s](e, u, bins.starts, bins.sizes) for s in statistics]
    return xr.Dataset({"estimate": ("statistic", np.array(values, dtype=float)),
                       "n_bins": ((), bins.n_bins)},
                      coords={"statistic": list(statistics)})


def binned_errors(data, *, statistics=BINNED_ERRORS, conditioning="uE", n_bins=20,
                  binning="equal_count"):
    """Binned calibration errors ENCE, UCE and ZMSE on the same bins.

    ENCE = mean_b |RMV_b - RMSE_b|/RMV_b, UCE = mean_b |MV_b - MSE_b|,
    ZMSE = mean_b |ln ZMS_b| (002 eq. 17). They have no predefined reference:
    compare them with a simulated reference.

    Parameters
    ----------
    data : xarray.Dataset or xarray.DataTree
    statistics : sequence of {"ENCE", "UCE", "ZMSE"}
    conditioning : str, default "uE"
        Any variable of the dataset (uE: consistency; a feature: adaptivity).
    n_bins : int, default 20
        Number of bins (20 as in 002).
    binning : str, default "equal_count"

    Returns
    -------
    xarray.Dataset
        ``estimate`` on dim ``statistic`` (and ``dataset``), ``n_bins``.

    Examples
    --------
    >>> import uqviz
    >>> res = uqviz.binned_errors(uqviz.synthetic.nig(2000, nu=8, rng=0))
    >>> res.statistic.values.tolist()
    ['ENCE', 'UCE', 'ZMSE']
    """
    for s in statistics:
        if s not in kbin.BINNED:
            raise ValueError(f"unknown binned statistic {s!r}; known: {', '.join(kbin.BINNED)}")
    out = map_datasets(_binned_one, data, statistics=tuple(statistics),
                       conditioning=conditioning, n_bins=n_bins, binning=binning)
    out.attrs.update({"conditioning": conditioning if isinstance(conditioning, str)
                      else "array", "binning": binning})
    return out
