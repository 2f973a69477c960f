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

from ._array import stats as ks
from ._tree import map_datasets
from .binning import bin_coords, compute_bins, conditioning_values
from .bootstrap import bootstrap_statistics
from .data import check_dataset
from .statistics import get_statistic

__all__ = ["local_calibration", "LOCAL_STATISTICS", "SMALL_BIN", "HEAVY_TAIL_Z2"]

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
        See :func:`uqviz.binning.compute_bins`.
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
