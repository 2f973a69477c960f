"""Quantile calibration: NEES, M-QCE and C-QCE (xarray layer over ``_array.nees``).

For a Gaussian predictive distribution with mean ``mu`` and covariance
``Sigma`` (or standard deviation ``s``), the normalised estimation error
squared ``eps = (y - mu)^T Sigma^-1 (y - mu)`` follows ``chi2_d`` when the
prediction is calibrated, so the central region of probability ``tau``
contains ``y`` exactly when ``eps <= chi2_d.ppf(tau)``. For one dimension
``eps = Z^2`` and this is the two-sided interval
``|Z| <= Phi^-1((1 + tau) / 2)``.

* M-QCE(tau) = |share of points inside - tau| (marginal coverage error);
* C-QCE(tau) = sum_b N_b/N |share inside in bin b - tau| over equal-width bins
  of the predicted dispersion (std per dimension, or the generalised standard
  deviation ``sigma_G = det(Sigma)^(1/(2d))`` for covariance input).

The numbers are those of netcal 1.4.0's ``QCE.measure(..., kind="meanstd")``
(Küppers et al., ECCV Workshops 2022; documentation in
/work/shared/papers/003), checked against fixtures made with netcal
(``tests/fixtures``); :func:`qce_to_numpy` gives netcal's array layout.

Input forms (``scale`` decides, see :func:`qce`):

=====================  =====================  ==============================
``y``, ``mean``        ``scale``              meaning
=====================  =====================  ==============================
``(n,)``               ``(n,)``               1-D, standard deviations
``(n, d)``             ``(n, d)``             per dimension (independent)
``(n, d)``             ``(n, d, d)``          covariance matrices (NEES)
``(n[, d])``           ``samples=(r, n[, d])``  predictive draws, ``mean=None``
=====================  =====================  ==============================
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import xarray as xr

from uqviz._array import bca
from uqviz._array import nees as kn
from uqviz._array.binomial import wilson_interval

__all__ = ["nees", "nees_test", "qce", "qce_to_numpy", "SAMPLE_MODELS", "REDUCTIONS"]

#: How predictive draws ``samples=(r, n[, d])`` are turned into intervals.
SAMPLE_MODELS = ("normal", "mvnormal", "hpdi")
#: netcal's reductions of the QCE over quantile levels (and dimensions).
REDUCTIONS = ("none", "mean", "batchmean")


# --------------------------------------------------------------------------
# input handling
# --------------------------------------------------------------------------
@dataclass
class _Prepared:
    kind: str            # "std" (per dimension) or "cov"
    source: str          # "std", "cov", "samples:normal", "samples:mvnormal", "samples:hpdi"
    squeeze: bool        # 1-D input: no `dim` dimension in the output
    residual: np.ndarray  # (n, d)
    std: np.ndarray | None      # (n, d) for kind "std"
    chol: np.ndarray | None     # (n, d, d) for kind "cov"
    sorted_samples: np.ndarray | None  # (r, n, d) for hpdi
    y: np.ndarray        # (n, d)
    point: np.ndarray
    dim_labels: np.ndarray

    @property
    def n(self):
        return self.residual.shape[0]

    @property
    def d(self):
        return self.residual.shape[1]


def _indices_text(mask, point):
    idx = np.flatnonzero(mask)
    head = ", ".join(str(p) for p in np.asarray(point)[idx[:10]])
    return f"{idx.size} point(s), first at [{head}{', ...' if idx.size > 10 else ''}]"


def _float_array(name, x):
    try:
        arr = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as err:
        raise ValueError(f"{name}: expected numbers ({err})") from None
    return arr


def _check_finite(name, arr, point):
    bad = ~np.isfinite(arr)
    if bad.any():
        per_point = bad.reshape(arr.shape[0], -1).any(axis=1)
        raise ValueError(f"{name}: NaN or infinite values in {_indices_text(per_point, point)}")


def _prepare(y, mean, scale, samples, sample_model, dim_names):
    point = None
    if isinstance(y, xr.Dataset):
        from uqviz.data.model import check_dataset

        check_dataset(y)
        if mean is not None or scale is not None or samples is not None:
            raise ValueError("with a uqviz dataset (variables E, uE), leave mean, scale and "
                             "samples unset: y = E, mean = 0, scale = uE")
        point = np.asarray(y["point"].values)
        y, mean, scale = y["E"].values, 0.0, y["uE"].values
    y = _float_array("y", y)
    if y.ndim not in (1, 2) or y.shape[0] == 0:
        raise ValueError(f"y: expected shape (n,) or (n, d) with n >= 1, got {y.shape}")
    n = y.shape[0]
    if point is None:
        point = np.arange(n)
    squeeze = y.ndim == 1
    y2 = y[:, None] if squeeze else y
    d = y2.shape[1]
    _check_finite("y", y2, point)
    sorted_samples = None
    std = chol = None

    if samples is not None:
        if mean is not None or scale is not None:
            raise ValueError("give either mean and scale, or samples (with mean=None, "
                             "scale=None), not both")
        if sample_model not in SAMPLE_MODELS:
            raise ValueError(f"sample_model must be one of {SAMPLE_MODELS}, got {sample_model!r}")
        s = _float_array("samples", samples)
        if s.shape[1:] != y.shape or s.ndim != y.ndim + 1:
            want = ", ".join(map(str, y.shape))
            raise ValueError(f"samples: expected shape (r,) + y.shape = (r, {want}), "
                             f"got {s.shape}")
        if s.shape[0] < 2:
            raise ValueError(f"samples: need at least 2 draws per point, got {s.shape[0]}")
        s2 = s[..., None] if squeeze else s
        _check_finite("samples", np.moveaxis(s2, 0, 1), point)
        if sample_model == "mvnormal" and d > 1:
            mu, cov = kn.sample_moments(s2, covariance=True)
            chol = kn.cholesky(cov, name="samples (sample covariance)")
            kind = "cov"
        else:
            mu, var = kn.sample_moments(s2)
            std = np.sqrt(var)
            bad = ~(std > 0)
            if bad.any():
                raise ValueError(f"samples: zero spread (all draws equal) in "
                                 f"{_indices_text(bad.any(axis=1), point)}")
            kind = "std"
            if sample_model == "hpdi":
                sorted_samples = np.sort(s2, axis=0)
        source = f"samples:{sample_model}"
    else:
        if mean is None or scale is None:
            raise ValueError("mean and scale are required unless samples= is given")
        mu = _float_array("mean", mean)
        if mu.shape not in ((), y.shape, y.shape[1:]):
            raise ValueError(f"mean: expected shape {y.shape} (or a scalar), got {mu.shape}")
        mu = np.broadcast_to(mu, y.shape)
        mu = mu[:, None] if squeeze else mu
        _check_finite("mean", np.broadcast_to(mu, y2.shape), point)
        sc = _float_array("scale", scale)
        if sc.shape == y.shape:
            std = sc[:, None] if squeeze else sc
            _check_finite("scale", std, point)
            bad = ~(std > 0)
            if bad.any():
                raise ValueError(f"scale: standard deviations must be > 0; "
                                 f"{_indices_text(bad.any(axis=1), point)}")
            kind, source = "std", "std"
        elif sc.shape == (n, d, d) and not squeeze:
            chol = kn.cholesky(sc, name="scale")
            kind, source = "cov", "cov"
        else:
            want = f"({n},)" if squeeze else f"({n}, {d}) (std) or ({n}, {d}, {d}) (covariance)"
            raise ValueError(f"scale: expected shape {want}, got {sc.shape}")
    residual = y2 - mu
    if dim_names is None:
        dim_labels = np.arange(d)
    else:
        dim_labels = np.asarray(dim_names)
        if dim_labels.shape != (d,):
            raise ValueError(f"dim_names: expected {d} labels, got {dim_labels.shape}")
    return _Prepared(kind, source, squeeze, residual, std, chol, sorted_samples, y2, point,
                     dim_labels)


def _quantile_levels(quantiles):
    if quantiles is None:
        raise ValueError("quantiles: give the quantile levels tau, "
                         "e.g. np.linspace(0.05, 0.95, 19)")
    tau = np.atleast_1d(_float_array("quantiles", quantiles))
    if tau.ndim != 1 or tau.size == 0:
        raise ValueError(f"quantiles: expected a non-empty 1-D sequence, got shape {tau.shape}")
    bad = ~((tau > 0) & (tau < 1))
    if bad.any():
        raise ValueError(f"quantiles: levels must be in (0, 1); {int(bad.sum())} are not: "
                         f"{tau[bad][:10].tolist()}")
    return tau


def _nees_values(p):
    """Per-point values compared with chi2 thresholds: (L, n) and their dof."""
    if p.kind == "cov":
        return kn.nees_from_cholesky(p.chol, p.residual)[None, :], p.d
    return kn.nees_std(p.residual, p.std).T, 1


def _inside(p, tau):
    """Inside flags (q, L, n) and dispersion values to bin on (L, n)."""
    if p.sorted_samples is not None:
        inside = np.empty((tau.size, p.d, p.n), dtype=bool)
        for j, t in enumerate(tau):
            lo, hi = kn.hpdi(p.sorted_samples, t)  # (n, d)
            inside[j] = ((p.y >= lo) & (p.y <= hi)).T
        return inside, p.std.T
    values, df = _nees_values(p)
    inside = kn.inside_from_nees(values, kn.chi2_thresholds(tau, df))
    if p.kind == "cov":
        return inside, kn.generalized_std(p.chol)[None, :]
    return inside, p.std.T


def _range_rows(value_range, rows):
    if value_range is None:
        return None
    r = _float_array("range", value_range)
    if r.shape == (2,):
        r = np.broadcast_to(r, (rows, 2))
    if r.shape != (rows, 2):
        raise ValueError(f"range: expected (lower, upper) or {rows} such pairs, "
                         f"got shape {r.shape}")
    if np.any(~np.isfinite(r)) or np.any(r[:, 1] < r[:, 0]):
        raise ValueError(f"range: need finite lower <= upper, got {r.tolist()}")
    return r


def _seed_attr(rng):
    return int(rng) if isinstance(rng, (int, np.integer)) else str(type(rng).__name__)


def _da(values, dims, squeeze_dim):
    """Drop the `dim` axis (position given) for 1-D input."""
    values = np.asarray(values)
    if squeeze_dim and "dim" in dims:
        ax = dims.index("dim")
        values = np.take(values, 0, axis=ax)
        dims = tuple(x for x in dims if x != "dim")
    return dims, values


# --------------------------------------------------------------------------
# public functions
# --------------------------------------------------------------------------
def nees(y, mean=None, scale=None, *, samples=None, sample_model="normal"):
    """Normalised estimation error squared of every point.

    ``eps = (y - mean)^T Sigma^-1 (y - mean)``, computed through batched
    Cholesky factorisations and triangular solves (no matrix inverse). For
    standard deviations the covariance is diagonal: ``eps = sum_j Z_j^2``,
    and for 1-D input ``eps = Z^2``.

    Parameters
    ----------
    y : array_like, shape (n,) or (n, d), or xarray.Dataset
        Observed values; or a uqviz dataset (``E``, ``uE``), read as
        ``y = E``, ``mean = 0``, ``scale = uE``.
    mean : array_like, shape of `y` (or scalar), optional
        Predicted means (``None`` with `samples`).
    scale : array_like, shape (n,), (n, d) or (n, d, d), optional
        Standard deviations (same shape as `y`) or covariance matrices.
    samples : array_like, shape (r, n[, d]), optional
        Predictive draws instead of ``mean``/``scale``: ``sample_model="normal"``
        uses the draws' mean and per-dimension variance (``ddof=0``),
        ``"mvnormal"`` their mean and covariance. ``"hpdi"`` has no NEES.
    sample_model : {"normal", "mvnormal"}, default "normal"

    Returns
    -------
    xarray.DataArray
        Named ``"nees"`` on dim ``point``; attrs ``dof`` (``d``) and ``input``.

    Raises
    ------
    ValueError
        Bad shapes, non-finite values, non-positive standard deviations, or
        covariances that are not symmetric positive definite (with the count
        and the first 10 point indices of each problem).

    Examples
    --------
    >>> import numpy as np
    >>> import uqviz.quantile as uq
    >>> uq.nees([1.0, -2.0], 0.0, [1.0, 2.0]).values.tolist()   # Z^2
    [1.0, 1.0]
    >>> cov = np.array([[[2.0, 1.0], [1.0, 2.0]]])
    >>> round(float(uq.nees([[1.0, 1.0]], [[0.0, 0.0]], cov)[0]), 12)
    0.666666666667
    """
    if sample_model == "hpdi":
        raise ValueError("sample_model='hpdi' defines intervals, not a NEES; use 'normal' or "
                         "'mvnormal'")
    p = _prepare(y, mean, scale, samples, sample_model, None)
    values, _ = _nees_values(p)
    eps = values.sum(axis=0)
    return xr.DataArray(eps, dims=("point",), coords={"point": p.point}, name="nees",
                        attrs={"dof": int(p.d), "input": p.source,
                               "long_name": "normalised estimation error squared"})


def nees_test(y, mean=None, scale=None, *, samples=None, sample_model="normal", ci=0.95):
    """Average-NEES chi-square test of calibrated Gaussian predictions.

    For calibrated Gaussian predictions each NEES is ``chi2(d)``, hence the
    mean NEES is ``d`` on average and ``sum eps ~ chi2(n d)``. The test
    reports the sum, its two-sided p-value and the ``ci`` acceptance region
    of the mean NEES, ``chi2_{nd}.ppf((1 -+ ci)/2) / n``. (netcal's
    documentation states the tracking-literature rule of accepting when the
    mean NEES is below ``chi2_d(tau)``; the test here is the exact one for
    the sum.) It assumes independent points; unlike the QCE it is sensitive
    to the scale of the NEES, not to the shape of its distribution.

    Parameters
    ----------
    y, mean, scale, samples, sample_model
        As :func:`nees`.
    ci : float, default 0.95
        Level of the acceptance region (``valid`` when the mean NEES is in it,
        i.e. ``p_value >= 1 - ci``).

    Returns
    -------
    xarray.Dataset
        Scalars ``mean_nees``, ``statistic`` (sum of NEES), ``dof`` (``n d``),
        ``p_value``, ``mean_nees_lower``, ``mean_nees_upper``, ``reference``
        (``d``), ``valid``, ``n_points``; attrs ``ci``, ``input``.

    Examples
    --------
    >>> import numpy as np
    >>> import uqviz.quantile as uq
    >>> rng = np.random.default_rng(0)
    >>> u = rng.uniform(0.5, 2.0, 5000)
    >>> res = uq.nees_test(u * rng.standard_normal(5000), 0.0, u)
    >>> bool(res["valid"]), int(res["dof"])
    (True, 5000)
    >>> bool(uq.nees_test(2 * u * rng.standard_normal(5000), 0.0, u)["valid"])
    False
    """
    if not 0.0 < ci < 1.0:
        raise ValueError(f"ci must be in (0, 1), got {ci}")
    eps = nees(y, mean, scale, samples=samples, sample_model=sample_model)
    d = eps.attrs["dof"]
    out = kn.anees_test(eps.values, d, ci)
    valid = out["lower"] <= out["mean_nees"] <= out["upper"]
    return xr.Dataset(
        {"mean_nees": out["mean_nees"], "statistic": out["statistic"], "dof": out["dof"],
         "p_value": out["p_value"], "mean_nees_lower": out["lower"],
         "mean_nees_upper": out["upper"], "reference": float(d), "valid": bool(valid),
         "n_points": eps.sizes["point"]},
        attrs={"ci": ci, "input": eps.attrs["input"],
               "test": "sum of NEES ~ chi2(n d), two-sided p = 2 min(F, 1 - F)"})


def qce(y, mean=None, scale=None, *, quantiles=None, bins=10, marginal=True, sample_threshold=1,
        range=None, reduction="none", samples=None, sample_model="normal", dim_names=None,
        n_boot=2000, ci=0.95, mqce_ci="folded", rng=None):
    """Marginal (M-QCE) or conditional (C-QCE) quantile calibration error.

    A point is inside quantile level ``tau`` when the central region of
    probability ``tau`` of its predictive distribution contains ``y``:
    ``eps <= chi2_d.ppf(tau)`` for covariance input, ``Z_j^2 <= chi2_1.ppf(tau)``
    per dimension ``j`` for standard deviations (the two-sided interval
    ``mean -+ Phi^-1((1 + tau)/2) std``).

    * ``M-QCE(tau) = |mean(inside) - tau|``;
    * ``C-QCE(tau) = sum_b (N_b / N) |freq_b - tau|`` over `bins` equal-width
      bins of the std (per dimension) or of ``sigma_G = det(Sigma)^(1/(2d))``
      (covariance input) between its min and max (or `range`).

    The numbers equal netcal 1.4.0's
    ``QCE(bins, marginal=marginal, sample_threshold=...).measure(X, y, q=quantiles,
    kind="meanstd", reduction=..., range_=...)`` (see :func:`qce_to_numpy`).

    Parameters
    ----------
    y : array_like, shape (n,) or (n, d), or xarray.Dataset
        Observed values; or a uqviz dataset (``E``, ``uE``), read as
        ``y = E``, ``mean = 0``, ``scale = uE``.
    mean : array_like, shape of `y` (or scalar), optional
        Predicted means. ``None`` when `samples` is given.
    scale : array_like, optional
        Standard deviations with the shape of `y` ((n,) or (n, d): one
        interval per dimension, results on dim ``dim``), or covariance
        matrices (n, d, d) (joint NEES region, no ``dim``). ``None`` when
        `samples` is given.
    quantiles : array_like, shape (q,)
        Quantile levels ``tau`` in (0, 1) (required).
    bins : int, default 10
        Number of equal-width bins of the dispersion (C-QCE).
    marginal : bool, default True
        M-QCE (True) or C-QCE (False) as ``qce``.
    sample_threshold : int, default 1
        Bins with fewer points are excluded as netcal does: their coverage is
        *set to 0* (NaN in ``bin_coverage``), so they still count in the
        C-QCE, with weight ``N_b / N`` and error ``tau``.
    range : (float, float) or sequence of such pairs, optional
        Binning range of the dispersion (one pair for all dimensions, or one
        per dimension); points outside are not binned and the C-QCE is
        normalised by the binned points. Default: min and max (if they are
        equal, min -+ 0.5).
    reduction : {"none", "mean", "batchmean"}, default "none"
        ``qce`` per quantile level (and dimension); mean over everything; or
        mean over quantile levels per dimension (same as "mean" for
        covariance input).
    samples : array_like, shape (r, n[, d]), optional
        Sample-based predictive distribution (``r`` draws per point), given
        with ``mean=None, scale=None``; see `sample_model`.
    sample_model : {"normal", "mvnormal", "hpdi"}, default "normal"
        How `samples` become intervals. ``"normal"``: Gaussian with the draws'
        mean and standard deviation per dimension (``ddof=0``), then as std
        input. ``"mvnormal"``: Gaussian with the draws' mean and covariance,
        then as covariance input. ``"hpdi"``: netcal 1.4.0's own treatment of
        a sample array, the highest-density interval of the draws per
        dimension (inside when ``lower <= y <= upper``), binned on the
        draws' std.
    dim_names : sequence, optional
        Labels of the ``dim`` coordinate (default 0, 1, ...).
    n_boot : int, default 2000
        Bootstrap replicates for the BCa interval of the M-QCE per level
        (points resampled; 0 to skip). The jackknife values of the M-QCE are
        exact and cheap (leaving a point out moves the share inside by a known
        amount).
    ci : float, default 0.95
        Level of the Wilson interval of the coverage and of the BCa interval.
    mqce_ci : {"folded", "direct"}, default "folded"
        How the BCa interval of the M-QCE is made. ``"folded"``: BCa interval
        of the signed deviation ``coverage - tau``, folded onto ``|.|``
        (``[0, max|bound|]`` when it contains 0): its coverage is that of the
        signed interval, also for a calibrated model. ``"direct"``: BCa on
        ``|coverage - tau|`` itself; because the absolute value is biased away
        from 0 at the boundary, this interval excludes 0 far more often than
        ``1 - ci`` when the model is calibrated (use it to size a clear error,
        not to test for zero).
    rng : None, int or numpy.random.Generator
        Seed of the bootstrap (``numpy.random.default_rng(rng)``).

    Returns
    -------
    xarray.Dataset
        Coordinates ``quantile`` (and ``dim`` for per-dimension input with
        ``d >= 2``, ``bin`` with ``bin_lower``, ``bin_upper``, ``bin_center``
        for C-QCE). Variables:

        * ``qce`` - the requested metric after `reduction` (netcal's value);
        * ``coverage``, ``n_inside``, ``coverage_lower``/``coverage_upper``
          (Wilson), ``m_qce`` and, with ``n_boot``, ``m_qce_lower``/``m_qce_upper``
          (BCa, see `mqce_ci`) per level (and dimension);
        * for C-QCE: ``c_qce`` per level, ``bin_count``, ``bin_coverage``
          (NaN where excluded) and ``qce_map`` (netcal's per-bin map).

        Settings in attrs (``metric``, ``input``, ``bins``, ...).

    Raises
    ------
    ValueError
        Bad shapes or values (with counts and point indices), invalid
        covariance matrices, quantile levels outside (0, 1), unknown
        reduction, or no point inside `range`.

    See Also
    --------
    qce_to_numpy : netcal's array layout of the result.
    nees, nees_test

    Examples
    --------
    >>> import numpy as np
    >>> import uqviz
    >>> rng = np.random.default_rng(1)
    >>> u = rng.uniform(0.5, 2.0, 2000)
    >>> y = u * rng.standard_normal(2000)
    >>> res = uqviz.quantile.qce(y, 0.0, u, quantiles=[0.5, 0.9], n_boot=500, rng=0)
    >>> res["qce"].dims, bool((res["qce"] < 0.03).all())
    (('quantile',), True)
    >>> res = uqviz.quantile.qce(y, 0.0, 0.5 * u, quantiles=[0.5, 0.9], marginal=False,
    ...                          bins=4, n_boot=0)
    >>> res["bin_coverage"].dims, bool((res["c_qce"] > 0.2).all())
    (('quantile', 'bin'), True)
    """
    if reduction is None:
        reduction = "none"
    if reduction not in REDUCTIONS:
        raise ValueError(f"reduction must be one of {REDUCTIONS}, got {reduction!r}")
    if isinstance(bins, bool) or not isinstance(bins, (int, np.integer)) or bins < 1:
        raise ValueError(f"bins must be an int >= 1, got {bins!r}")
    if isinstance(sample_threshold, bool) or not isinstance(sample_threshold, (int, np.integer)) \
            or sample_threshold < 0:
        raise ValueError(f"sample_threshold must be an int >= 0, got {sample_threshold!r}")
    if not 0.0 < ci < 1.0:
        raise ValueError(f"ci must be in (0, 1), got {ci}")
    if mqce_ci not in ("folded", "direct"):
        raise ValueError(f"mqce_ci must be 'folded' or 'direct', got {mqce_ci!r}")
    n_boot = int(n_boot)
    if n_boot < 0 or n_boot == 1:
        raise ValueError(f"n_boot must be 0 (no bootstrap) or >= 2, got {n_boot}")
    tau = _quantile_levels(quantiles)
    p = _prepare(y, mean, scale, samples, sample_model, dim_names)
    inside, disp = _inside(p, tau)  # (q, L, n), (L, n)
    n = p.n
    per_dim = p.kind == "std"
    squeeze = p.squeeze or not per_dim  # no `dim` in the output

    k = inside.sum(axis=-1)  # (q, L)
    coverage = k / n
    m_qce = np.abs(coverage - tau[:, None])
    lo, hi = wilson_interval(k, n, ci)
    dims_ql = ("quantile", "dim")
    data = {}
    for name, val in (("n_inside", k), ("coverage", coverage), ("coverage_lower", lo),
                      ("coverage_upper", hi), ("m_qce", m_qce)):
        data[name] = _da(val, dims_ql, squeeze)
    attrs = {"metric": "M-QCE" if marginal else "C-QCE", "input": p.source,
             "scale_kind": p.kind, "n_dims": int(p.d), "one_dimensional_input": int(p.squeeze),
             "bins": int(bins), "sample_threshold": int(sample_threshold),
             "marginal": int(bool(marginal)), "reduction": reduction, "ci": ci,
             "n_boot": n_boot, "n_points": int(n),
             "inside": ("eps <= chi2_d.ppf(tau)" if p.kind == "cov" else
                        "y in HPDI of the draws" if p.sorted_samples is not None else
                        "Z^2 <= chi2_1.ppf(tau) per dimension")}

    if n_boot:
        gen = np.random.default_rng(rng)
        k_rep = kn.pattern_bootstrap(inside, n_boot, gen)  # (L, q, B)
        signed = mqce_ci == "folded"
        reps = k_rep / n - tau[:, None]
        est = (coverage - tau[:, None]).T
        if not signed:
            reps, est = np.abs(reps), np.abs(est)
        accel = kn.mqce_acceleration(k.T, n, tau, signed=signed)  # (L, q)
        res = bca.interval(est, reps, accel=accel, ci=ci, method="bca")
        lo_b, hi_b = res["lower"], res["upper"]
        if signed:
            lo_b, hi_b = kn.fold_interval(lo_b, hi_b)
        data["m_qce_lower"] = _da(lo_b.T, dims_ql, squeeze)
        data["m_qce_upper"] = _da(hi_b.T, dims_ql, squeeze)
        attrs.update({"method": "bca", "mqce_ci": mqce_ci, "rng": _seed_attr(rng)})

    coords = {"quantile": tau}
    if not squeeze:
        coords["dim"] = p.dim_labels
    if marginal:
        metric = m_qce
    else:
        rows = disp.shape[0]
        value_range = _range_rows(range, rows)
        edges = kn.equal_width_edges(disp, bins, value_range)  # (L, B+1)
        idx = kn.bin_indices(disp, edges)
        count, kb_ = kn.binned_counts(inside, idx, bins)  # (L, B), (q, L, B)
        empty_rows = count.sum(axis=-1) == 0
        if empty_rows.any():
            raise ValueError(f"range: no point has its dispersion inside {range} "
                             f"(rows {np.flatnonzero(empty_rows).tolist()})")
        bin_cov, qmap, c_qce = kn.binned_qce(kb_, count, tau, sample_threshold)
        metric = c_qce
        data["c_qce"] = _da(c_qce, dims_ql, squeeze)
        data["bin_count"] = _da(count, ("dim", "bin"), squeeze)
        data["bin_coverage"] = _da(bin_cov, ("quantile", "dim", "bin"), squeeze)
        data["qce_map"] = _da(qmap, ("quantile", "dim", "bin"), squeeze)
        coords["bin"] = np.arange(bins)
        for name, val in (("bin_lower", edges[:, :-1]), ("bin_upper", edges[:, 1:]),
                          ("bin_center", 0.5 * (edges[:, :-1] + edges[:, 1:]))):
            coords[name] = _da(val, ("dim", "bin"), squeeze)
        attrs["range"] = "min-max" if range is None else str(np.asarray(value_range).tolist())
        attrs["binned_on"] = "sigma_G = det(Sigma)^(1/(2d))" if p.kind == "cov" else \
            "standard deviation per dimension"

    if reduction == "none":
        data["qce"] = _da(metric, dims_ql, squeeze)
    elif reduction == "mean":
        data["qce"] = ((), float(np.mean(metric)))
    else:
        data["qce"] = _da(np.mean(metric, axis=0), ("dim",), squeeze)
    out = xr.Dataset(data, coords=coords, attrs=attrs)
    out["qce"].attrs["long_name"] = attrs["metric"]
    out["coverage"].attrs["long_name"] = "share of points inside the central tau region"
    return out


def qce_to_numpy(result, *, return_map=False, return_num_samples=False):
    """The result of :func:`qce` in netcal 1.4.0's return layout.

    Parameters
    ----------
    result : xarray.Dataset
        Output of :func:`qce`.
    return_map, return_num_samples : bool, default False
        As netcal's ``measure``: with either, a tuple is returned; the map and
        the counts are only appended for C-QCE (``marginal=False``).

    Returns
    -------
    metric : float or ndarray
        ``reduction="none"``: ``(q, d)`` for standard deviations (``(q, 1)``
        for 1-D input), ``(q,)`` for covariances; ``"batchmean"``: ``(d,)``
        (``(1,)``), or a 0-d value for covariances; ``"mean"``: a float.
    qce_map : list of ndarray, optional
        One ``(q, bins)`` array per dimension (one for covariances).
    num_samples : list of ndarray, optional
        One ``(bins,)`` array of float counts per dimension.

    Examples
    --------
    >>> import numpy as np
    >>> import uqviz.quantile as uq
    >>> rng = np.random.default_rng(0)
    >>> res = uq.qce(rng.standard_normal(100), 0.0, np.ones(100), quantiles=[0.5], n_boot=0)
    >>> uq.qce_to_numpy(res).shape
    (1, 1)
    """
    std_kind = result.attrs["scale_kind"] == "std"
    red = result.attrs["reduction"]

    def with_dim(da, axis):
        vals = np.asarray(da.values, dtype=np.float64)
        if std_kind and "dim" not in da.dims:
            vals = np.expand_dims(vals, axis)
        return vals

    if red == "mean":
        metric = float(result["qce"].values)
    elif red == "batchmean":
        metric = with_dim(result["qce"], 0) if std_kind else np.float64(result["qce"].values)
    else:
        metric = with_dim(result["qce"].transpose("quantile", ...), 1)
    if not (return_map or return_num_samples):
        return metric
    out = (metric,)
    if result.attrs["marginal"]:
        return out
    if return_map:
        qmap = result["qce_map"]
        if "dim" in qmap.dims:
            out += ([qmap.isel(dim=j).transpose("quantile", "bin").values
                     for j in np.arange(qmap.sizes["dim"])],)
        else:
            out += ([qmap.transpose("quantile", "bin").values],)
    if return_num_samples:
        cnt = result["bin_count"]
        if "dim" in cnt.dims:
            out += ([cnt.isel(dim=j).values.astype(np.float64)
                     for j in np.arange(cnt.sizes["dim"])],)
        else:
            out += ([cnt.values.astype(np.float64)],)
    return out
