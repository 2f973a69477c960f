"""Reliability diagram statistics: RMSE and RMV per bin, with intervals (Pernot (2023), eq. 5)."""

from __future__ import annotations

import warnings

import numpy as np
import xarray as xr

from uqviz._array.bca import verdict
from uqviz._array.lazy import lazy_module
from uqviz.conditional.local import compute_local_bins
from uqviz.data.model import check_dataset
from uqviz.engine.options import warn_points_independent
from uqviz.engine import checks
from uqviz.engine.binning import bin_coords
from uqviz.engine.bootstrap import bootstrap_statistics
from uqviz.engine.options import BinningSpec, BootstrapOptions
from uqviz.engine.parallel import resolve_client
from uqviz.engine.tree import map_datasets
from uqviz.engine.warning_classes import UnreliableWarning

sps = lazy_module("scipy.stats")

__all__ = ["reliability", "RELIABILITY_METHODS"]

RELIABILITY_METHODS = ("bca", "percentile", "basic", "chi2")


def _reliability_one(ds, *, rng, spec, boot):
    """One dataset of :func:`reliability`: ``spec`` the BinningSpec, ``boot`` the
    BootstrapOptions (``method="chi2"``: no bootstrap)."""
    check_dataset(ds)
    warn_points_independent(ds, "reliability")
    name, bins = compute_local_bins(
        ds, spec.conditioning, n_bins=spec.n_bins, binning=spec.binning, min_count=spec.min_count
    )
    n_boot, ci, method = boot.n_boot, boot.ci, boot.method
    e = ds["E"].values[bins.order]
    u = ds["uE"].values[bins.order]
    sizes = bins.sizes
    if method == "chi2":  # n MSE / sigma^2 ~ chi2(n) for normal errors of variance sigma^2
        mse = np.add.reduceat(e * e, bins.starts) / sizes
        alpha = (1.0 - ci) / 2.0
        values = {
            "rmse": np.sqrt(mse),
            "rmse_lower": np.sqrt(sizes * mse / sps.chi2.ppf(1.0 - alpha, sizes)),
            "rmse_upper": np.sqrt(sizes * mse / sps.chi2.ppf(alpha, sizes)),
        }
    else:
        rmse = bootstrap_statistics(
            e,
            u,
            ["RMSE"],
            n_boot=n_boot,
            ci=ci,
            method=method,
            rng=rng,
            engine=boot.engine,
            starts=bins.starts,
            sizes=sizes,
        )["RMSE"]
        values = {"rmse": rmse.estimate, "rmse_lower": rmse.lower, "rmse_upper": rmse.upper}
        bad = int(np.count_nonzero(np.isnan(rmse.lower) | np.isnan(rmse.upper)))
        if bad:
            label = ds.attrs.get("name", "")
            warnings.warn(
                f"{bad} of {sizes.size} bin intervals of RMSE"
                f"{f' in {label!r}' if label else ''} could not be computed "
                f"(degenerate bootstrap distribution, n_boot={n_boot}): NaN, "
                "valid False",
                UnreliableWarning,
                stacklevel=4,
            )
    # RMV is the x coordinate of the diagram: no interval (constant in a bin of a stratified uE)
    values["rmv"] = np.sqrt(np.add.reduceat(u * u, bins.starts) / sizes)
    units = ds["E"].attrs.get("units", ds.attrs.get("units", ""))
    data_vars = {
        k: ("bin", np.asarray(v, dtype=float), {"units": units}) for k, v in values.items()
    }
    zeta, valid = verdict(values["rmse"], values["rmv"], values["rmse_lower"], values["rmse_upper"])
    data_vars["zeta"] = ("bin", zeta)
    data_vars["valid"] = ("bin", valid)
    return xr.Dataset(
        data_vars,
        coords=bin_coords(bins),
        attrs={"conditioning": name, "units": units, **bins.attrs, "n_bins": bins.n_bins},
    )


def reliability(
    data,
    *,
    conditioning="uE",
    n_bins=None,
    binning="equal_count",
    min_count=None,
    n_boot=5000,
    ci=0.95,
    method="bca",
    rng=None,
    engine=None,
    client=None,
):
    r"""RMV and RMSE per bin, with intervals: the numbers of a reliability diagram.

    Parameters
    ----------
    data : xarray.Dataset or xarray.DataTree
        Errors ``E`` and standard uncertainties ``uE`` on dim ``point`` (with any features), as
        made by :func:`uqviz.from_arrays` and the other constructors; a DataTree gives one
        result per dataset, on dim ``dataset``.
    conditioning : str or array_like, default "uE"
        Variable the bins are cut on: "uE" (consistency), a feature name (adaptivity), or one
        value per point.
    n_bins : int, optional
        Number of bins; default ``min(round(sqrt(M)), M // 100)``, at least 1 (bins of at least
        100 points, Pernot (2023)).
    binning : {"equal_count", "equal_width", "stratified", "edges"}, default "equal_count"
        How the bins are cut: equal numbers of points, equal widths, one bin per distinct value
        (for few-valued features), or at the given ``edges``.
    min_count : int, optional
        Fewest points a bin may hold: smaller equal-width, stratified or edges bins are merged
        with their smaller neighbour (default 100 for "stratified", else no merging).
    n_boot : int, default 5000
        Number of bootstrap replicates, an int >= 2.
    ci : float, default 0.95
        Confidence level of the intervals, in (0, 1).
    rng : None, int, numpy.random.SeedSequence or numpy.random.Generator, default None
        Random stream: None (fresh entropy), an int >= 0, a numpy.random.SeedSequence (copied,
        never consumed) or a numpy.random.Generator; the same ``rng`` gives the same numbers on
        any number of threads or workers (docs/conventions.md, "Randomness").
    engine : {"numba", "numpy"}, optional
        Resampling kernel of the bootstrap (default numba).
    method : {"bca", "percentile", "basic", "chi2"}, default "bca"
        RMSE interval: bootstrap ("bca", "percentile", "basic"), or "chi2" (:math:`n
        \mathrm{MSE}/\sigma^2 \sim \chi^2(n)`, normal errors).
    client : None, "local" or dask.distributed.Client, default None
        Where the bootstrap runs (datasets as tasks) (docs/conventions.md); the numbers do
        not depend on it.

    Returns
    -------
    xarray.Dataset
        On ``bin``: ``rmv``, ``rmse``, ``rmse_lower``, ``rmse_upper``, ``zeta``,
        ``valid`` (RMV inside the RMSE interval); bin coords.

    See Also
    --------
    uqviz.local_calibration : LZMS per bin, the z-score counterpart.
    uqviz.binned_errors : ENCE, which summarises the same bins.
    uqviz.plots.conditional.reliability_diagram : draws RMSE against RMV.

    Notes
    -----
    In each bin :math:`b`,

    .. math::

       \mathrm{RMV}_b = \sqrt{\langle u_E^2 \rangle_b}, \qquad
       \mathrm{RMSE}_b = \sqrt{\langle E^2 \rangle_b},

    and the bin is valid when :math:`\mathrm{RMV}_b` lies in the interval of
    :math:`\mathrm{RMSE}_b` (Pernot (2023), eq. 5; Levi et al. (2022)). ``method="chi2"``:
    :math:`n_b \mathrm{MSE}_b / \sigma^2 \sim \chi^2(n_b)`, so the interval is
    :math:`[\sqrt{n_b \mathrm{MSE}_b / \chi^2_{(1+\mathrm{ci})/2}(n_b)},
    \sqrt{n_b \mathrm{MSE}_b / \chi^2_{(1-\mathrm{ci})/2}(n_b)}]`.

    References
    ----------
    - Pernot (2023), eq. 5: conditional calibration in uncertainty space.
    - Levi et al. (2022): the reliability diagram, RMSE vs RMV.
    - DiCiccio & Efron (1996): the BCa interval.

    Full entries: :doc:`/docs/references`.

    Examples
    --------
    >>> import uqviz
    >>> rel = uqviz.reliability(uqviz.synthetic.nig(3000, nu=10, rng=0), n_bins=10,
    ...                         n_boot=1000, rng=0)
    >>> rel.sizes["bin"]
    10
    """
    spec = BinningSpec.check(
        conditioning=conditioning, n_bins=n_bins, binning=binning, min_count=min_count
    )
    boot = BootstrapOptions.check(
        n_boot=n_boot, ci=ci, method=method, rng=rng, engine=engine, methods=RELIABILITY_METHODS
    )
    out = map_datasets(
        _reliability_one,
        data,
        rng=checks.rng(rng),
        spec=spec,
        boot=boot,
        on_client=resolve_client(client),
    )
    b = boot.attrs
    out.attrs.update(
        {
            "n_boot": 0 if method == "chi2" else b["n_boot"],
            "ci": b["ci"],
            "method": b["method"],
            "binning": spec.binning,
            "rng": b["rng"],
            "engine": b["engine"],
        }
    )
    if spec.n_bins is not None:
        out.attrs["n_bins"] = spec.n_bins
    return out
