"""Quantile calibration error: M-QCE and C-QCE (Küppers et al. (2022)).

Input forms (``scale`` decides):

=====================  ========================  ===============================
``y``, ``mean``        ``scale``                 meaning
=====================  ========================  ===============================
``(n,)``               ``(n,)``                  1-D, standard deviations
``(n, d)``             ``(n, d)``                per variable (independent)
``(n, d)``             ``(n, d, d)``             covariance matrices (NEES)
``(n[, d])``           ``samples=(r, n[, d])``   predictive draws, ``mean=None``
=====================  ========================  ===============================
"""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np
import xarray as xr

from uqviz._array import bca
from uqviz._array import nees as nees_kernels
from uqviz._array.binomial import wilson_interval
from uqviz.engine import checks
from uqviz.engine.options import BootstrapOptions
from uqviz.engine.parallel import run_task
from uqviz.engine.warning_classes import UnreliableWarning
from uqviz.quantile import inputs
from uqviz.quantile.inputs import SAMPLE_MODELS
from uqviz.quantile.nees import nees_values

__all__ = ["qce", "qce_to_numpy", "SAMPLE_MODELS", "REDUCTIONS", "METHODS"]

#: netcal's reductions of the QCE over quantile levels (and variables).
REDUCTIONS = ("none", "mean", "batchmean")
#: Interval methods of the M-QCE: the first three on the signed deviation
#: ``coverage - tau``, folded onto ``|.|``; ``"bca-direct"``: BCa on ``|.|`` itself.
METHODS = ("bca", "percentile", "basic", "bca-direct")


#: Default quantile levels tau: 0.05, 0.10, ..., 0.95.
DEFAULT_LEVELS = np.linspace(0.05, 0.95, 19)


def _levels(levels):
    if levels is None:
        return DEFAULT_LEVELS.copy()
    return checks.levels("levels", levels)


def _value_range_rows(value_range, rows):
    if value_range is None:
        return None
    r = checks.finite_array("value_range", value_range)
    if r.shape == (2,):
        r = np.broadcast_to(r, (rows, 2))
    if r.shape != (rows, 2):
        raise ValueError(
            f"value_range: expected (lower, upper) or {rows} such pairs, got shape {r.shape}"
        )
    if np.any(r[:, 1] < r[:, 0]):
        raise ValueError(f"value_range: need lower <= upper, got {r.tolist()}")
    return r


def _inside(p, tau):
    """Inside flags ``(L, q, n)`` and the dispersion to bin on ``(L, n)``."""
    if p.sorted_samples is not None:
        inside = np.empty((p.d, tau.size, p.n), dtype=bool)
        for j, t in enumerate(tau):
            lo, hi = nees_kernels.hpdi(p.sorted_samples, t)  # (n, d)
            inside[:, j, :] = ((p.y >= lo) & (p.y <= hi)).T
        return inside, p.std.T
    values, df = nees_values(p)
    inside = nees_kernels.inside_from_nees(values, nees_kernels.chi2_thresholds(tau, df))
    if p.kind == "cov":
        return inside, nees_kernels.generalized_std(p.chol)[None, :]
    return inside, p.std.T


def _mqce_interval(inside, coverage, tau, n_boot, ci, method, gen):
    """Interval of the M-QCE per variable and level, ``(L, q)`` each."""
    n = inside.shape[-1]
    reps = nees_kernels.pattern_bootstrap(inside, n_boot, gen) / n - tau[:, None]  # (L, q, B)
    est = coverage - tau
    signed = method != "bca-direct"
    if not signed:
        reps, est = np.abs(reps), np.abs(est)
    base = "bca" if method == "bca-direct" else method
    jack = nees_kernels.mqce_jackknife(inside, tau, signed=signed) if base == "bca" else None
    res = bca.interval(est, reps, jackknife=jack, ci=ci, method=base)
    lower, upper = res["lower"], res["upper"]
    if signed:
        lower, upper = nees_kernels.fold_interval(lower, upper)
    return lower, upper


@dataclasses.dataclass(frozen=True)
class _QceSpec:
    """The checked options of :func:`qce` besides the bootstrap: the levels, the binning of
    the dispersion (C-QCE), the reduction and how the inputs are read."""

    tau: np.ndarray
    n_bins: int
    marginal: bool
    sample_threshold: int
    value_range: object
    reduction: str
    sample_model: str
    variable_names: object


def _qce_one(y, mean, scale, samples, gen, *, spec, boot):
    """One dataset of :func:`qce`: ``spec`` a _QceSpec, ``boot`` the BootstrapOptions
    (``n_boot`` 0: no interval), ``gen`` its random stream."""
    tau, n_bins, marginal = spec.tau, spec.n_bins, spec.marginal
    sample_threshold, value_range, reduction = (
        spec.sample_threshold,
        spec.value_range,
        spec.reduction,
    )
    sample_model = spec.sample_model
    n_boot, ci, method = boot.n_boot, boot.ci, boot.method
    p = inputs.prepare(y, mean, scale, samples, sample_model, spec.variable_names)
    n = p.n
    if n_boot and n < 2:
        raise ValueError(
            f"y: the bootstrap interval of the M-QCE needs at least 2 points, got {n}; use n_boot=0"
        )
    inside, disp = _inside(p, tau)  # (L, q, n), (L, n)
    squeeze = p.squeeze or p.kind != "std"  # no `variable` in the output
    lv, lvb, vb = ("variable", "level"), ("variable", "level", "bin"), ("variable", "bin")

    def da(values, dims):
        values = np.asarray(values)
        if squeeze and dims[0] == "variable":
            return dims[1:], values[0]
        return dims, values

    k = inside.sum(axis=-1)  # (L, q)
    coverage = k / n
    m_qce = np.abs(coverage - tau)
    lo, hi = wilson_interval(k, n, ci)
    data = {
        "n_inside": da(k, lv),
        "coverage": da(coverage, lv),
        "coverage_lower": da(lo, lv),
        "coverage_upper": da(hi, lv),
        "m_qce": da(m_qce, lv),
    }
    attrs = {
        "metric": "M-QCE" if marginal else "C-QCE",
        "input": p.source,
        "scale_kind": p.kind,
        "n_variables": int(p.d),
        "one_dimensional_input": int(p.squeeze),
        "n_bins": int(n_bins),
        "sample_threshold": int(sample_threshold),
        "marginal": int(marginal),
        "reduction": reduction,
        "n_boot": int(n_boot),
        "ci": ci,
        "method": method,
        "rng": boot.attrs["rng"],
        "engine": boot.engine,
        "n_points": int(n),
        "inside": (
            "eps <= chi2_d.ppf(tau)"
            if p.kind == "cov"
            else "y in HPDI of the draws"
            if p.sorted_samples is not None
            else "Z^2 <= chi2_1.ppf(tau) per variable"
        ),
    }
    if p.source.startswith("samples"):
        attrs["sample_model"] = sample_model

    if n_boot:
        lower, upper = _mqce_interval(inside, coverage, tau, n_boot, ci, method, gen)
        bad = int(np.count_nonzero(~(np.isfinite(lower) & np.isfinite(upper))))
        if bad:
            warnings.warn(
                f"m_qce: the {method} interval could not be computed for {bad} of "
                f"{lower.size} levels (degenerate bootstrap distribution); they are NaN",
                UnreliableWarning,
                stacklevel=3,
            )
        data["m_qce_lower"] = da(lower, lv)
        data["m_qce_upper"] = da(upper, lv)

    coords = {"level": tau}
    if not squeeze:
        coords["variable"] = p.variable_labels
    if marginal:
        metric = m_qce
    else:
        rows = disp.shape[0]
        vr = _value_range_rows(value_range, rows)
        edges = nees_kernels.equal_width_edges(disp, n_bins, vr)  # (L, B+1)
        idx = nees_kernels.bin_indices(disp, edges)
        count, kb = nees_kernels.binned_counts(inside, idx, n_bins)  # (L, B), (L, q, B)
        empty_rows = count.sum(axis=-1) == 0
        if empty_rows.any():
            raise ValueError(
                f"value_range: no point has its dispersion inside {value_range} "
                f"(rows {np.flatnonzero(empty_rows).tolist()})"
            )
        bin_cov, qmap, c_qce = nees_kernels.binned_qce(kb, count, tau, sample_threshold)
        metric = c_qce
        data["c_qce"] = da(c_qce, lv)
        data["bin_count"] = da(count, vb)
        data["bin_coverage"] = da(bin_cov, lvb)
        data["qce_map"] = da(qmap, lvb)
        coords["bin"] = np.arange(n_bins)
        for name, val in (
            ("bin_lower", edges[:, :-1]),
            ("bin_upper", edges[:, 1:]),
            ("bin_center", 0.5 * (edges[:, :-1] + edges[:, 1:])),
        ):
            coords[name] = da(val, vb)
        attrs["value_range"] = "min-max" if vr is None else str(np.asarray(vr).tolist())
        attrs["binned_on"] = (
            "sigma_G = det(Sigma)^(1/(2d))"
            if p.kind == "cov"
            else "standard deviation per variable"
        )

    if reduction == "none":
        data["qce"] = da(metric, lv)
    elif reduction == "mean":
        data["qce"] = ((), float(np.mean(metric)))
    else:
        data["qce"] = da(np.mean(metric, axis=-1), ("variable",))
    out = xr.Dataset(data, coords=coords, attrs=attrs).transpose("level", ...)
    out["qce"].attrs["long_name"] = attrs["metric"]
    out["coverage"].attrs["long_name"] = "share of points inside the central tau region"
    return out


def qce(
    y,
    mean=None,
    scale=None,
    *,
    levels=None,
    n_bins=10,
    marginal=True,
    sample_threshold=1,
    value_range=None,
    reduction="none",
    samples=None,
    sample_model="normal",
    variable_names=None,
    n_boot=5000,
    ci=0.95,
    method="bca",
    rng=None,
    client=None,
    engine=None,
):
    r"""Marginal (M-QCE) or conditional (C-QCE) quantile calibration error (Küppers et al. (2022)).

    ``M-QCE(tau) = |mean(inside) - tau|``; ``C-QCE(tau) = sum_b (N_b / N) |freq_b - tau|``
    over equal-width bins of the std (or of ``det(Sigma)^(1/(2d))``). The numbers equal
    netcal 1.4.0's ``QCE.measure(..., kind="meanstd")``.

    Parameters
    ----------
    y : array_like, shape (n,) or (n, d); xarray.Dataset or xarray.DataTree
        Observed values, or a Dataset as in :func:`nees`; DataArrays are matched by their
        dims, as in :func:`nees`.
    mean : array_like, optional
        Predicted means (``None`` with `samples` or a Dataset).
    scale : array_like, optional
        Standard deviations with the shape of `y` (dim ``variable`` when ``d >= 2``)
        or covariances ``(n, d, d)``.
    levels : array_like, shape (q,), optional
        Quantile levels in (0, 1); default 0.05, 0.10, ..., 0.95.
    n_bins : int, default 10
        Equal-width bins of the dispersion (C-QCE).
    marginal : bool, default True
        M-QCE (True) or C-QCE (False).
    sample_threshold : int, default 1
        Bins with fewer points count as coverage 0 (NaN in ``bin_coverage``), as netcal.
    value_range : (float, float) or one pair per variable, optional
        Binning range of the dispersion; default its min and max.
    reduction : {"none", "mean", "batchmean"}, default "none"
        How ``qce`` is reduced over the levels and variables, as netcal's ``reduction``: "none"
        keeps them, "mean" averages all, "batchmean" averages the levels.
    samples : array_like, shape (r, n[, d]), optional
        Predictive draws, with ``mean=None, scale=None``.
    sample_model : {"normal", "mvnormal", "hpdi"}, default "normal"
        With ``samples``: a normal per variable, a multivariate normal, or the highest posterior
        density interval of the draws.
    variable_names : sequence, optional
        Labels of the ``d`` variables (dim ``variable``); default 0, 1, ...
    n_boot : int, default 5000
        Bootstrap replicates of the M-QCE interval; 0: no interval.
    ci : float, default 0.95
        Confidence level of the intervals, in (0, 1).
    rng : None, int, numpy.random.SeedSequence or numpy.random.Generator, default None
        Random stream: None (fresh entropy), an int >= 0, a numpy.random.SeedSequence (copied,
        never consumed) or a numpy.random.Generator; the same ``rng`` gives the same numbers on
        any number of threads or workers (docs/conventions.md, "Randomness").
    method : {"bca", "percentile", "basic", "bca-direct"}, default "bca"
        M-QCE interval: of ``coverage - tau`` folded onto ``|.|``, or (``"bca-direct"``)
        BCa on ``|coverage - tau|`` (biased away from 0).
    client : None, "local" or dask.distributed.Client, default None
        Where the bootstrap runs (one task; docs/conventions.md); the numbers do not
        depend on it.
    engine : {"numba", "numpy"}, optional
        Resampling kernel of the bootstrap (docs/conventions.md). The pattern bootstrap of
        the M-QCE draws its resamples from numpy streams whatever the engine: checked and
        recorded, the numbers are the same for every engine.

    Returns
    -------
    xarray.Dataset
        ``qce`` (netcal's value), ``n_inside``, ``coverage``, ``coverage_lower``,
        ``coverage_upper``, ``m_qce`` (``m_qce_lower``, ``m_qce_upper``) on ``level``;
        C-QCE: ``c_qce``, ``bin_count``, ``bin_coverage``, ``qce_map``.

    Raises
    ------
    ValueError
        Bad shapes, values or options, or no point inside `value_range`.

    See Also
    --------
    uqviz.nees_test : the chi-square test of Gaussian predictions.
    uqviz.calibration_curve : observed vs expected proportions.
    uqviz.plots.quantile.quantile_reliability : draws the coverage per level.
    uqviz.plots.quantile.coverage_map : draws the C-QCE map.

    Notes
    -----
    For the quantile level :math:`\tau`, a point is inside when its NEES is below
    :math:`\chi^2_\tau(d)`, the share of points inside being :math:`\bar c(\tau)`;

    .. math::

       \mathrm{M\text{-}QCE}(\tau) = |\bar c(\tau) - \tau|, \qquad
       \mathrm{C\text{-}QCE}(\tau) = \sum_b \frac{N_b}{N} |c_b(\tau) - \tau|,

    over equal-width bins :math:`b` of the standard deviation (or of
    :math:`\det(\Sigma)^{1/(2d)}`), :math:`N_b` points each (Küppers et al. (2022)).

    References
    ----------
    - Küppers et al. (2022): NEES, M-QCE and C-QCE (netcal's ``QCE``).
    - DiCiccio & Efron (1996): the BCa interval of M-QCE.

    Full entries: :doc:`/docs/references`.

    Examples
    --------
    >>> import numpy as np, uqviz
    >>> rng = np.random.default_rng(1)
    >>> u = rng.uniform(0.5, 2.0, 2000)
    >>> y = u * rng.standard_normal(2000)
    >>> res = uqviz.quantile.qce(y, 0.0, u, levels=[0.5, 0.9], n_boot=500, rng=0)
    >>> res["qce"].dims, bool((res["qce"] < 0.03).all())
    (('level',), True)
    """
    reduction = checks.choice("reduction", "none" if reduction is None else reduction, REDUCTIONS)
    n_bins = checks.count("n_bins", n_bins, minimum=1)
    sample_threshold = checks.count("sample_threshold", sample_threshold, minimum=0)
    marginal = checks.boolean("marginal", marginal)
    boot = BootstrapOptions.check(
        n_boot=n_boot,
        ci=ci,
        method=method,
        rng=rng,
        engine=engine,
        methods=METHODS,
        zero="no interval",
    )
    inputs.check_sample_model(sample_model)
    gen = checks.rng(rng)
    spec = _QceSpec(
        tau=_levels(levels),
        n_bins=n_bins,
        marginal=marginal,
        sample_threshold=sample_threshold,
        value_range=value_range,
        reduction=reduction,
        sample_model=sample_model,
        variable_names=variable_names,
    )
    options = dict(spec=spec, boot=boot)
    return run_task(_qce_apply, y, mean, scale, samples, gen, options, client=client)


def _qce_apply(y, mean, scale, samples, gen, options):
    return inputs.apply(
        lambda d, m, s, r, g: _qce_one(d, m, s, r, g, **options), y, mean, scale, samples, rng=gen
    )


def qce_to_numpy(result, *, return_map=False, return_num_samples=False):
    """The result of :func:`qce` in netcal 1.4.0's return layout.

    Parameters
    ----------
    result : xarray.Dataset
        Output of :func:`qce` for one dataset.
    return_map, return_num_samples : bool, default False
        As netcal's ``measure`` (appended for C-QCE only).

    Returns
    -------
    metric : float or ndarray
    qce_map : list of ndarray, optional
    num_samples : list of ndarray, optional

    Examples
    --------
    >>> import numpy as np
    >>> import uqviz.quantile as uq
    >>> res = uq.qce(np.random.default_rng(0).standard_normal(100), 0.0, np.ones(100),
    ...              levels=[0.5], n_boot=0)
    >>> uq.qce_to_numpy(res).shape
    (1, 1)
    """
    checks.result(
        "result",
        result,
        "uqviz.qce",
        variables=("qce",),
        attrs=("scale_kind", "reduction", "marginal"),
    )
    if "dataset" in result.dims:
        raise ValueError(
            "result: holds several datasets; select one first, e.g. result.isel(dataset=0)"
        )
    return_map = checks.boolean("return_map", return_map)
    return_num_samples = checks.boolean("return_num_samples", return_num_samples)
    std_kind = result.attrs["scale_kind"] == "std"
    red = result.attrs["reduction"]

    def with_variable(da, axis):
        vals = np.asarray(da.values, dtype=np.float64)
        if std_kind and "variable" not in da.dims:
            vals = np.expand_dims(vals, axis)
        return vals

    if red == "mean":
        metric = float(result["qce"].values)
    elif red == "batchmean":
        metric = with_variable(result["qce"], 0) if std_kind else np.float64(result["qce"].values)
    else:
        metric = with_variable(result["qce"].transpose("level", ...), 1)
    if not (return_map or return_num_samples):
        return metric
    out = (metric,)
    if result.attrs["marginal"]:
        return out

    def per_variable(da, *dims):
        if "variable" in da.dims:
            return [
                da.isel(variable=j).transpose(*dims).values.astype(np.float64)
                for j in range(da.sizes["variable"])
            ]
        return [da.transpose(*dims).values.astype(np.float64)]

    if return_map:
        out += (per_variable(result["qce_map"], "level", "bin"),)
    if return_num_samples:
        out += (per_variable(result["bin_count"], "bin"),)
    return out
