"""Normalised estimation error squared (NEES) and the average-NEES chi-square test."""

from __future__ import annotations

import numpy as np
import xarray as xr

from uqviz._array import bca
from uqviz._array import nees as nees_kernels
from uqviz.engine import checks
from uqviz.quantile import inputs

__all__ = ["nees", "nees_test"]


def nees_values(p):
    """Per-point values compared with chi2 thresholds, ``(L, n)``, and their dof."""
    if p.kind == "cov":
        return nees_kernels.nees_from_cholesky(p.chol, p.residual)[None, :], p.d
    return nees_kernels.nees_std(p.residual, p.std).T, 1


def _nees_one(y, mean, scale, samples, sample_model):
    p = inputs.prepare(y, mean, scale, samples, sample_model, None)
    values, _ = nees_values(p)
    over = ~np.isfinite(values).all(axis=0)
    if over.any():
        raise ValueError(f"y: the NEES overflows (|y - mean| / scale beyond 1e154) in "
                         f"{inputs.indices_text(over, p.point)}; rescale y, mean and scale")
    attrs = {"dof": int(p.d), "input": p.source}
    if p.source.startswith("samples"):
        attrs["sample_model"] = sample_model
    eps = xr.DataArray(values.sum(axis=0), dims=("point",), coords={"point": p.point},
                       attrs={"long_name": "normalised estimation error squared"})
    return xr.Dataset({"nees": eps}, attrs=attrs)


def _check_nees_model(sample_model):
    inputs.check_sample_model(sample_model)
    if sample_model == "hpdi":
        raise ValueError("sample_model: 'hpdi' defines intervals, not a NEES; use 'normal' or "
                         "'mvnormal'")
    return sample_model


def nees(y, mean=None, scale=None, *, samples=None, sample_model="normal"):
    r"""Normalised estimation error squared ``(y - mean)^T Sigma^-1 (y - mean)`` of every point.

    Parameters
    ----------
    y : array_like, shape (n,) or (n, d); xarray.Dataset or xarray.DataTree
        Observed values; or a Dataset with ``y``, ``mean``, ``scale`` (or
        ``samples``), or ``E``, ``uE`` (read as ``y = E``, ``mean = 0``, ``scale = uE``).
    mean : array_like, optional
        Predicted means, with the shape of ``y`` (None with ``samples`` or a Dataset).
    scale : array_like, shape (n,), (n, d) or (n, d, d), optional
        Standard deviations (shape of `y`) or covariance matrices.
    samples : array_like, shape (r, n[, d]), optional
        Predictive draws instead of `mean` and `scale`.
    sample_model : {"normal", "mvnormal"}, default "normal"
        With ``samples``: "normal" takes the mean and standard deviation of each variable,
        "mvnormal" the mean and covariance matrix of the draws.

    Returns
    -------
    xarray.Dataset
        ``nees`` on dim ``point``; attrs ``dof``, ``input``.

    Raises
    ------
    ValueError
        Bad shapes, NaN/inf, non-positive stds, non-SPD covariances (with counts).

    See Also
    --------
    uqviz.nees_test : the chi-square test of the mean NEES.
    uqviz.qce : quantile calibration error of the same predictions.

    Notes
    -----
    For point :math:`i` with observation :math:`y_i`, predicted mean :math:`\mu_i` and covariance
    :math:`\Sigma_i` (:math:`d` dimensions),

    .. math::

       \mathrm{NEES}_i = (y_i - \mu_i)^\top \Sigma_i^{-1} (y_i - \mu_i) \sim \chi^2(d)

    for calibrated Gaussian predictions; in one dimension :math:`\mathrm{NEES}_i = Z_i^2`.

    References
    ----------
    - Küppers et al. (2022): NEES, M-QCE and C-QCE (netcal's ``QCE``).

    Full entries: :doc:`/docs/references`.

    Examples
    --------
    >>> import uqviz.quantile as uq
    >>> uq.nees([1.0, -2.0], 0.0, [1.0, 2.0])["nees"].values.tolist()
    [1.0, 1.0]
    """
    _check_nees_model(sample_model)
    if inputs.is_tree(y):  # align the points of all datasets (NaN where a set has none)
        union = inputs.point_union(y)
        return inputs.apply(lambda d, m, s, r, rng: _nees_one(d, m, s, r, sample_model)
                             .reindex(point=union), y, mean, scale, samples)
    return _nees_one(y, mean, scale, samples, sample_model)


#: the tail screen of nees_test: q99/q50 of the NEES against its law for chi2(d) values
TAIL_SCREEN_LEVEL = 0.995
_TAIL_SCREEN_SETS = 1000
_TAIL_SCREEN_MAX = 5000


def nees_tail_screen(eps, d):
    """``(ratio, limit)``: q99/q50 of the NEES values and its ``TAIL_SCREEN_LEVEL`` quantile for
    the same number of chi2(d) values (Monte Carlo, 1000 sets, a seed fixed by ``(n, d)``;
    above 5000 values, on a fixed subsample of 5000).

    The chi-square test of :func:`nees_test` assumes Gaussian predictions: with heavier-tailed
    errors (Student-t, still calibrated) the sum of NEES has a larger variance than chi2(n d)
    and the test cries wolf (17 % of calibrated t6 sets of 2000 points at 5 %). A ratio above
    its limit says so (the test is then unreliable); it fires on about 0.5-2.5 % of Gaussian
    sets (2.5 % measured on 200 sets of 2000 points) and on every t6 set of 2000 points.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> r, lim = nees_tail_screen(rng.standard_normal(2000) ** 2, 1)
    >>> bool(r <= lim)
    True
    >>> r, lim = nees_tail_screen((rng.standard_t(3, 2000) / np.sqrt(3)) ** 2, 1)
    >>> bool(r <= lim)
    False
    """
    eps = np.asarray(eps, dtype=float).ravel()
    g = np.random.default_rng([eps.size, int(d), 20])
    if eps.size > _TAIL_SCREEN_MAX:  # a fixed subsample: the ratio is already precise
        eps = eps[np.sort(g.choice(eps.size, _TAIL_SCREEN_MAX, replace=False))]
    n = eps.size

    def ratio(x):
        q = np.quantile(x, [0.99, 0.5], axis=-1)
        return q[0] / q[1]

    sims = ratio(g.chisquare(d, (_TAIL_SCREEN_SETS, n)))
    return float(ratio(eps)), float(np.quantile(sims, TAIL_SCREEN_LEVEL))


def _nees_test_one(y, mean, scale, samples, sample_model, ci):
    res = _nees_one(y, mean, scale, samples, sample_model)
    eps, d = res["nees"], res.attrs["dof"]
    out = nees_kernels.anees_test(eps.values, d, ci)
    zeta, valid = bca.verdict(out["mean_nees"], float(d), out["ci_lower"], out["ci_upper"])
    ratio, limit = nees_tail_screen(eps.values, d)
    attrs = {"ci": ci, "input": res.attrs["input"],
             "test": "sum of NEES ~ chi2(n d), two-sided p = 2 min(F, 1 - F)",
             "tail_screen": f"q99/q50 of the NEES <= its {TAIL_SCREEN_LEVEL} quantile for "
                            "chi2(d) values"}
    if "sample_model" in res.attrs:
        attrs["sample_model"] = sample_model
    return xr.Dataset(
        {"estimate": float(out["mean_nees"]), "ci_lower": float(out["ci_lower"]),
         "ci_upper": float(out["ci_upper"]), "reference": float(d),
         "reference_lower": out["acceptance_lower"], "reference_upper": out["acceptance_upper"],
         "zeta": float(zeta), "valid": bool(valid), "p_value": float(out["p_value"]),
         "reliable": bool(ratio <= limit), "tail_ratio": ratio, "tail_limit": limit,
         "nees_sum": float(out["nees_sum"]), "dof": out["dof"],
         "n_points": eps.sizes["point"]},
        attrs=attrs)


def nees_test(y, mean=None, scale=None, *, samples=None, sample_model="normal", ci=0.95):
    r"""Chi-square test of the mean NEES of Gaussian predictions (mean ``d`` when calibrated).

    Parameters
    ----------
    y : array_like, shape (n,) or (n, d); xarray.Dataset or xarray.DataTree
        Observed values, or a Dataset, as in :func:`uqviz.nees`.
    mean : array_like, optional
        Predicted means (None with ``samples`` or a Dataset).
    scale : array_like, shape (n,), (n, d) or (n, d, d), optional
        Standard deviations (shape of ``y``) or covariance matrices.
    samples : array_like, shape (r, n[, d]), optional
        Predictive draws instead of ``mean`` and ``scale``.
    sample_model : {"normal", "mvnormal"}, default "normal"
        How ``samples`` become a Gaussian prediction, as in :func:`uqviz.nees`.
    ci : float, default 0.95
        Level of the chi-square test, in (0, 1).

    Returns
    -------
    xarray.Dataset
        ``estimate`` (mean NEES), ``ci_lower``, ``ci_upper``, ``reference`` (``d``),
        ``reference_lower``, ``reference_upper``, ``zeta``, ``valid``, ``p_value``,
        ``reliable`` (the tail screen: False when the NEES are heavier-tailed than chi2(d),
        which makes the chi-square test cry wolf; ``tail_ratio`` q99/q50 of the NEES and its
        ``tail_limit``, ``nees_tail_screen``), ``nees_sum``, ``dof``, ``n_points``.

    See Also
    --------
    uqviz.nees : the NEES of every point.
    uqviz.validate_average : ZMS, the mean NEES in one dimension.
    uqviz.qce : quantile calibration error.

    Notes
    -----
    For point :math:`i` with observation :math:`y_i`, predicted mean :math:`\mu_i` and covariance
    :math:`\Sigma_i` (:math:`d` dimensions),

    .. math::

       \mathrm{NEES}_i = (y_i - \mu_i)^\top \Sigma_i^{-1} (y_i - \mu_i) \sim \chi^2(d)

    for calibrated Gaussian predictions; in one dimension :math:`\mathrm{NEES}_i = Z_i^2`.

    The sum over the :math:`M` points follows :math:`\chi^2(M d)`: the mean NEES is valid when
    it lies in :math:`[\chi^2_{(1-\mathrm{ci})/2}(Md), \chi^2_{(1+\mathrm{ci})/2}(Md)] / M`, the
    acceptance interval around the reference :math:`d`.

    References
    ----------
    - Küppers et al. (2022): NEES, M-QCE and C-QCE (netcal's ``QCE``).

    Full entries: :doc:`/docs/references`.

    Examples
    --------
    >>> import numpy as np
    >>> import uqviz.quantile as uq
    >>> rng = np.random.default_rng(0)
    >>> u = rng.uniform(0.5, 2.0, 5000)
    >>> bool(uq.nees_test(u * rng.standard_normal(5000), 0.0, u)["valid"])
    True
    """
    ci = checks.probability("ci", ci)
    _check_nees_model(sample_model)
    return inputs.apply(lambda d, m, s, r, rng: _nees_test_one(d, m, s, r, sample_model, ci),
                         y, mean, scale, samples)
