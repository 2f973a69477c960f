"""Normalised estimation error squared (NEES) and the average-NEES chi-square test."""

from __future__ import annotations

import numpy as np
import xarray as xr

from uqviz._array import bca
from uqviz._array import nees as nees_kernels
from uqviz._array import tails as tail_kernels
from uqviz.average.validation import BCA_MIN_POINTS
from uqviz.average.validation import MIN_TESTED as _AVERAGE_MIN_TESTED
from uqviz.engine import checks
from uqviz.engine.verdicts import decide
from uqviz.quantile import inputs

__all__ = ["nees", "nees_test", "nees_null_p_value", "nees_tail_region"]


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
        raise ValueError(
            f"y: the NEES overflows (|y - mean| / scale beyond 1e154) in "
            f"{inputs.indices_text(over, p.point)}; rescale y, mean and scale"
        )
    attrs = {"dof": int(p.d), "input": p.source}
    if p.source.startswith("samples"):
        attrs["sample_model"] = sample_model
    eps = xr.DataArray(
        values.sum(axis=0),
        dims=("point",),
        coords={"point": p.point},
        attrs={"long_name": "normalised estimation error squared"},
    )
    return xr.Dataset({"nees": eps}, attrs=attrs)


def _check_nees_model(sample_model):
    inputs.check_sample_model(sample_model)
    if sample_model == "hpdi":
        raise ValueError(
            "sample_model: 'hpdi' defines intervals, not a NEES; use 'normal' or 'mvnormal'"
        )
    return sample_model


def nees(y, mean=None, scale=None, *, samples=None, sample_model="normal"):
    r"""Normalised estimation error squared ``(y - mean)^T Sigma^-1 (y - mean)`` of every point.

    Parameters
    ----------
    y : array_like, shape (n,) or (n, d); xarray.Dataset or xarray.DataTree
        Observed values; or a Dataset with ``y``, ``mean``, ``scale`` (or
        ``samples``), or ``E``, ``uE`` (read as ``y = E``, ``mean = 0``, ``scale = uE``).
        DataArrays (``y``, ``mean``, ``scale`` all DataArrays) are matched by their dims
        ``point`` and ``variable`` (or ``target``), a covariance ``scale`` with a second
        target dim of any name: the data of :func:`uqviz.dawid_sebastiani_score`.
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
        return inputs.apply(
            lambda d, m, s, r, rng: _nees_one(d, m, s, r, sample_model).reindex(point=union),
            y,
            mean,
            scale,
            samples,
        )
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


def nees_null_p_value(eps, d, df):
    """Two-sided p-value of the mean NEES under calibrated z-vectors as heavy-tailed as
    ``df`` says: multivariate Student-t of ``df`` degrees of freedom, unit covariance.

    For d = 1 the NEES is Z^2 and the mean NEES the ZMS: the Student-t null table of the ZMS
    (:func:`uqviz._array.tails.null_p_value`, at least 0.0027); for d > 1 a Monte Carlo null
    of ``MVT_NULL_SETS`` sets (:func:`uqviz._array.nees.mvt_null_p_value`, at least
    1/2001). With a sequence ``df`` (the 99.9 % likelihood-ratio set of
    ``nees_tail_region``), the largest p-value over the set plus 0.001 (Berger & Boos
    (1994)), as :func:`uqviz.validate_average`'s tail-allowing test. NaN when ``df`` is NaN
    or empty.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> z = rng.standard_t(3, 3000) / np.sqrt(3.0)
    >>> (bool(nees_null_p_value(z ** 2, 1, 2.8) > 0.05),
    ...  bool(nees_null_p_value(4 * z ** 2, 1, 2.8) < 0.01))
    (True, True)
    >>> region = nees_tail_region(z ** 2, 1)
    >>> bool(nees_null_p_value(z ** 2, 1, region) >= nees_null_p_value(z ** 2, 1, region[0]))
    True
    """
    eps = np.asarray(eps, dtype=float).ravel()
    if np.ndim(df) > 0:
        dfs = np.asarray(df, dtype=float)
        if dfs.size == 0 or eps.size < 3:
            return np.nan
        p = max(nees_null_p_value(eps, d, nu) for nu in dfs)
        return float(min(1.0, p + tail_kernels.REGION_LEVEL)) if np.isfinite(p) else np.nan
    if np.isnan(df) or eps.size < 3:
        return np.nan
    mean = float(np.mean(eps))
    if int(d) == 1:
        return float(tail_kernels.null_p_value(np.log(mean), eps.size, df, "ZMS"))
    return nees_kernels.mvt_null_p_value(mean, eps.size, int(d), df)


def nees_tail_region(eps, d):
    """The degrees of freedom of a multivariate Student-t the NEES are consistent with: the
    99.9 % likelihood-ratio set on ``uqviz._array.tails.PROFILE_DF`` (empty if degenerate),
    as :func:`uqviz.average.tails.tail_region` for d = 1.

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> x = rng.standard_normal((4000, 3)) / np.sqrt(rng.chisquare(4, (4000, 1)) / 2)
    >>> r = nees_tail_region(np.sum(x * x, axis=1), 3)
    >>> bool(r[0] < 4.0 < r[-1])
    True
    """
    df = tail_kernels.PROFILE_DF
    return tail_kernels.profile_region(df, nees_kernels.mvt_profile(eps, int(d), df))


#: fewer points: "not tested" (as the ZMS of :func:`uqviz.validate_average`, the mean NEES in
#: one dimension)
MIN_TESTED = _AVERAGE_MIN_TESTED["ZMS"]


def _df_text(df_lower, df_upper):
    if not np.isfinite(df_lower):
        return "inf (normal)"
    if not np.isfinite(df_upper):
        return f"{df_lower:.3g} to inf (normal)"
    return f"{df_lower:.3g}-{df_upper:.3g}"


def _nees_verdict(valid, p_chi2, heavy, null_p, dfs, ratio, limit, alpha, m):
    """(word, p-value, reason) of :func:`nees_test`: the heavy-tail rule of
    :func:`uqviz.validate_average` (``MIN_TESTED``, ``BCA_MIN_POINTS``) on the mean NEES."""
    if m < MIN_TESTED:
        return (
            decide(False, tested=False),
            np.nan,
            (f"{m} points are fewer than the {MIN_TESTED} a verdict on the mean NEES needs"),
        )
    df_text = _df_text(*dfs)
    if not heavy:
        if m < BCA_MIN_POINTS and np.isfinite(null_p):
            return (
                decide(null_p <= alpha),
                null_p,
                (
                    f"{m} points: decided against calibrated multivariate Student-t z-vectors of "
                    f"{df_text} degrees of freedom (below {BCA_MIN_POINTS} points the tail screen "
                    "cannot see the tails that make the chi-square test cry wolf)"
                ),
            )
        return decide(not valid), p_chi2, ""
    why = (
        f"the NEES are heavier-tailed than chi2(d) (q99/q50 = {ratio:.3g} > {limit:.3g}): "
        "the chi-square test cries wolf"
    )
    if np.isnan(null_p):
        return decide(False, reliable=False), p_chi2, why + " and no Student-t fit is possible"
    word = decide(null_p <= alpha, heavy_tail=True)
    how = (
        "the departure is larger than such tails explain"
        if word == "fails"
        else "within what such tails produce on calibrated data: no conclusion"
    )
    return (
        word,
        null_p,
        (
            f"{why}; against calibrated z-vectors as heavy-tailed as the data's "
            f"(multivariate Student-t, {df_text} degrees of freedom), "
            f"p = {null_p:.2g}: {how}"
        ),
    )


def _nees_test_one(y, mean, scale, samples, sample_model, ci):
    res = _nees_one(y, mean, scale, samples, sample_model)
    eps, d = res["nees"], res.attrs["dof"]
    out = nees_kernels.anees_test(eps.values, d, ci)
    zeta, valid = bca.verdict(out["mean_nees"], float(d), out["ci_lower"], out["ci_upper"])
    ratio, limit = nees_tail_screen(eps.values, d)
    heavy = not bool(ratio <= limit)
    df_est = nees_kernels.mvt_tail_df(eps.values, d)[0]
    region = nees_tail_region(eps.values, d)
    df_low, df_high = (float(region[0]), float(region[-1])) if region.size else (np.nan, np.nan)
    m = eps.sizes["point"]
    # d > 1: a Monte Carlo null per df of the set, computed only when it decides
    null_p = (
        nees_null_p_value(eps.values, d, region)
        if heavy or d == 1 or MIN_TESTED <= m < BCA_MIN_POINTS
        else np.nan
    )
    word, verdict_p, reason = _nees_verdict(
        bool(valid),
        float(out["p_value"]),
        heavy,
        null_p,
        (df_low, df_high),
        ratio,
        limit,
        1.0 - ci,
        m,
    )
    attrs = {
        "ci": ci,
        "input": res.attrs["input"],
        "test": "sum of NEES ~ chi2(n d), two-sided p = 2 min(F, 1 - F)",
        "tail_screen": f"q99/q50 of the NEES <= its {TAIL_SCREEN_LEVEL} quantile for "
        "chi2(d) values",
        "tail_test": "under a failed tail screen: the mean NEES against calibrated "
        "multivariate Student-t z-vectors, the largest p-value over the "
        "99.9 % likelihood-ratio set of degrees of freedom tail_df_lower-"
        "tail_df_upper plus 0.001 (Berger & Boos (1994); d = 1: the ZMS "
        "table of uqviz._array.tails; d > 1: "
        f"{nees_kernels.MVT_NULL_SETS} simulated sets)",
    }
    if "sample_model" in res.attrs:
        attrs["sample_model"] = sample_model
    return xr.Dataset(
        {
            "estimate": float(out["mean_nees"]),
            "ci_lower": float(out["ci_lower"]),
            "ci_upper": float(out["ci_upper"]),
            "reference": float(d),
            "reference_lower": out["acceptance_lower"],
            "reference_upper": out["acceptance_upper"],
            "zeta": float(zeta),
            "valid": bool(valid),
            "p_value": float(out["p_value"]),
            "reliable": not heavy,
            "tail_ratio": ratio,
            "tail_limit": limit,
            "null_p_value": null_p,
            "tail_df": df_est,
            "tail_df_lower": df_low,
            "tail_df_upper": df_high,
            "verdict": word,
            "verdict_p_value": verdict_p,
            "reason": reason,
            "nees_sum": float(out["nees_sum"]),
            "dof": out["dof"],
            "n_points": eps.sizes["point"],
        },
        attrs=attrs,
    )


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
        ``tail_limit``, ``nees_tail_screen``), ``tail_df``, ``tail_df_lower`` and
        ``tail_df_upper`` (the degrees of freedom of the multivariate Student-t fitted to
        the whitened errors, and the heaviest and lightest in their 99.9 % likelihood-ratio
        set, ``nees_tail_region``), ``null_p_value`` (the tail-allowing
        test, ``nees_null_p_value``; for d > 1 only under a failed screen, else NaN),
        ``verdict`` ("OK", "fails" or "unreliable"), ``verdict_p_value`` (the p-value it
        rests on) and ``reason``; ``nees_sum``, ``dof``, ``n_points``.

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

    The ``verdict``: with the tail screen passed and at least 1000 points, "OK" when the mean
    NEES is valid, else "fails"; below 10 points "not tested"; from 10 to 999 points the
    tail-allowing test below decides "OK" or "fails" (a screen of so few points cannot see
    the tails, as in :func:`uqviz.validate_average`). Heavier tails than the normal's
    (calibrated Student-t errors) make the sum of NEES spread more than :math:`\chi^2(Md)`
    and the chi-square test cry wolf; they widen the zone of doubt but do not erase the
    answer (issue 36, docs/conventions.md). Under a failed screen the mean NEES is compared
    with its law on calibrated z-vectors as heavy-tailed as the data's: multivariate
    Student-t of unit covariance,
    :math:`\mathrm{NEES} = (\nu - 2)\chi^2_d / \chi^2_\nu` (for d = 1, :math:`Z^2` of a
    unit-variance t: the ZMS null of :func:`uqviz.validate_average`), for every
    :math:`\nu` of the 99.9 % likelihood-ratio set of the NEES (``tail_df_lower`` to
    ``tail_df_upper``, ``nees_tail_region``); the p-value is the largest over the set
    plus 0.001 (Berger & Boos (1994)); "fails" when it is at most ``1 - ci``,
    "unreliable" otherwise, never "OK". Measured in docs/guide/verdicts.md ("The NEES test").

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
    >>> t3 = u * rng.standard_t(3, 5000) / np.sqrt(3.0)   # calibrated, heavy-tailed
    >>> (str(uq.nees_test(t3, 0.0, u)["verdict"].values),
    ...  str(uq.nees_test(2 * t3, 0.0, u)["verdict"].values))
    ('unreliable', 'fails')
    """
    ci = checks.probability("ci", ci)
    _check_nees_model(sample_model)
    return inputs.apply(
        lambda d, m, s, r, rng: _nees_test_one(d, m, s, r, sample_model, ci),
        y,
        mean,
        scale,
        samples,
    )
