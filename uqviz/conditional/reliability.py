"""Reliability diagram statistics: RMSE and RMV per bin, with intervals (Pernot (2023), eq. 5)."""

from __future__ import annotations

import numpy as np
import xarray as xr
from scipy import stats as sps

from uqviz._array.bca import verdict
from uqviz.conditional.local import check_local_options, compute_local_bins
from uqviz.data.model import check_dataset
from uqviz.engine import checks, seeds
from uqviz.engine.binning import bin_coords
from uqviz.engine.bootstrap import bootstrap_statistics
from uqviz.engine.parallel import resolve_client
from uqviz.engine.tree import map_datasets

__all__ = ["reliability", "RELIABILITY_METHODS"]

RELIABILITY_METHODS = ("bca", "percentile", "basic", "chi2")


def _reliability_one(ds, *, rng, conditioning, n_bins, binning, min_count, n_boot, ci, method,
                     engine):
    check_dataset(ds)
    name, bins = compute_local_bins(ds, conditioning, n_bins=n_bins, binning=binning,
                                    min_count=min_count)
    e = ds["E"].values[bins.order]
    u = ds["uE"].values[bins.order]
    sizes = bins.sizes
    if method == "chi2":  # n MSE / sigma^2 ~ chi2(n) for normal errors of variance sigma^2
        mse = np.add.reduceat(e * e, bins.starts) / sizes
        alpha = (1.0 - ci) / 2.0
        values = {"rmse": np.sqrt(mse),
                  "rmse_lower": np.sqrt(sizes * mse / sps.chi2.ppf(1.0 - alpha, sizes)),
                  "rmse_upper": np.sqrt(sizes * mse / sps.chi2.ppf(alpha, sizes))}
    else:
        rmse = bootstrap_statistics(e, u, ["RMSE"], n_boot=n_boot, ci=ci, method=method,
                                    rng=rng, engine=engine, starts=bins.starts,
                                    sizes=sizes)["RMSE"]
        values = {"rmse": rmse.estimate, "rmse_lower": rmse.lower, "rmse_upper": rmse.upper}
    # RMV is the x coordinate of the diagram: no interval (constant in a bin of a stratified uE)
    values["rmv"] = np.sqrt(np.add.reduceat(u * u, bins.starts) / sizes)
    units = ds["E"].attrs.get("units", ds.attrs.get("units", ""))
    data_vars = {k: ("bin", np.asarray(v, dtype=float), {"units": units})
                 for k, v in values.items()}
    zeta, valid = verdict(values["rmse"], values["rmv"], values["rmse_lower"],
                          values["rmse_upper"])
    data_vars["zeta"] = ("bin", zeta)
    data_vars["valid"] = ("bin", valid)
    return xr.Dataset(data_vars, coords=bin_coords(bins),
                      attrs={"conditioning": name, "units": units, **bins.attrs,
                             "n_bins": bins.n_bins})


def reliability(data, *, conditioning="uE", n_bins=None, binning="equal_count", min_count=None,
                n_boot=5000, ci=0.95, method="bca", rng=None, engine=None, client=None):
    """RMV and RMSE per bin, with intervals: the numbers of a reliability diagram.

    Parameters
    ----------
    data : xarray.Dataset or xarray.DataTree
    conditioning : str or array_like, default "uE"
    n_bins, binning, min_count
        As :func:`uqviz.local_calibration`.
    n_boot, ci, rng
        See docs/conventions.md.
    engine : {"numba", "numpy"}, optional
        Resampling kernel of the bootstrap (default numba).
    method : {"bca", "percentile", "basic", "chi2"}
        RMSE interval: bootstrap, or ``"chi2"`` (n MSE / sigma^2 ~ chi2(n), normal errors).
    client : None, "local" or dask.distributed.Client, default None
        Where the bootstrap runs (datasets as tasks) (docs/conventions.md); the numbers do not depend on it.

    Returns
    -------
    xarray.Dataset
        On ``bin``: ``rmv``, ``rmse``, ``rmse_lower``, ``rmse_upper``, ``zeta``,
        ``valid`` (RMV inside the RMSE interval); bin coords.

    Examples
    --------
    >>> import uqviz
    >>> rel = uqviz.reliability(uqviz.synthetic.nig(3000, nu=10, rng=0), n_bins=10, n_boot=1000, rng=0)
    >>> rel.sizes["bin"]
    10
    """
    checks.choice("method", method, RELIABILITY_METHODS)
    n_bins, min_count, n_boot, ci = check_local_options(n_bins=n_bins, binning=binning,
                                                        min_count=min_count, n_boot=n_boot,
                                                        ci=ci, rng=rng, engine=engine)
    engine = checks.engine(engine)
    out = map_datasets(_reliability_one, data, rng=checks.rng(rng), conditioning=conditioning,
                       n_bins=n_bins, binning=binning, min_count=min_count, n_boot=n_boot,
                       ci=ci, method=method, engine=engine,
                       on_client=resolve_client(client))
    out.attrs.update({"n_boot": 0 if method == "chi2" else n_boot, "ci": ci, "method": method,
                      "binning": binning, "rng": seeds.seed_attr(rng), "engine": engine})
    if n_bins is not None:
        out.attrs["n_bins"] = n_bins
    return out
