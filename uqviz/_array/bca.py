"""Bootstrap confidence intervals from replicates (numpy kernels, no xarray).

All functions are vectorised over leading axes; the replicate axis (B) and the
jackknife axis (M) are last.

Reference: T. J. DiCiccio and B. Efron, "Bootstrap confidence intervals",
Statist. Sci. 11 (1996) 189-212, eqs. (2.3)-(2.8) and (6.6)-(6.7).
"""

from __future__ import annotations

import numpy as np
from scipy import special

METHODS = ("bca", "percentile", "basic")


def _quantiles(replicates, probs):
    """Linear-interpolation quantiles along the last axis, one prob per leading cell."""
    probs = np.asarray(probs, dtype=float)
    reps = np.sort(replicates, axis=-1)
    n = reps.shape[-1]
    pos = np.nan_to_num(np.clip(probs, 0.0, 1.0)) * (n - 1)  # NaN levels masked below
    lo = np.floor(pos).astype(np.intp)
    hi = np.minimum(lo + 1, n - 1)
    frac = pos - lo
    lower = np.take_along_axis(reps, lo[..., None], axis=-1)[..., 0]
    upper = np.take_along_axis(reps, hi[..., None], axis=-1)[..., 0]
    out = lower + frac * (upper - lower)
    return np.where(np.isnan(probs), np.nan, out)


def bias_correction(estimate, replicates):
    """z0 = Phi^-1(share of replicates below the estimate), ties counted half.

    Counting ties half (as scipy.stats.bootstrap does) keeps z0 finite and
    unbiased for statistics with atoms at the estimate (small or discrete data).
    """
    est = np.asarray(estimate)[..., None]
    below = np.count_nonzero(replicates < est, axis=-1)
    below_or_tie = np.count_nonzero(replicates <= est, axis=-1)
    return special.ndtri((below + below_or_tie) / (2.0 * replicates.shape[-1]))


def acceleration(jackknife):
    """Acceleration a from jackknife values (last axis), DiCiccio & Efron eq. (6.6).

    a = sum(d^3) / (6 (sum d^2)^1.5) with d = mean(jack) - jack_i; 0 when all
    jackknife values are equal.
    """
    d = np.mean(jackknife, axis=-1, keepdims=True) - jackknife
    num = np.sum(d**3, axis=-1)
    den = 6.0 * np.sum(d**2, axis=-1) ** 1.5
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), 0.0)


def bca_levels(z0, a, ci):
    """Adjusted lower/upper percentile levels of the BCa interval."""
    z = special.ndtri(np.array([(1.0 - ci) / 2.0, (1.0 + ci) / 2.0]))
    z0 = np.asarray(z0, dtype=float)[..., None]
    a = np.asarray(a, dtype=float)[..., None]
    with np.errstate(invalid="ignore", divide="ignore"):
        return special.ndtr(z0 + (z0 + z) / (1.0 - a * (z0 + z)))


def interval(estimate, replicates, *, jackknife=None, accel=None, ci=0.95, method="bca"):
    """Bootstrap confidence interval.

    Parameters
    ----------
    estimate : array_like, shape (...)
        Statistic on the full data.
    replicates : ndarray, shape (..., B)
        Bootstrap replicates of the statistic.
    jackknife : ndarray, shape (..., M), optional
        Leave-one-out values, for the acceleration of ``method="bca"``.
    accel : array_like, shape (...), optional
        Acceleration computed elsewhere (e.g. per group); overrides ``jackknife``.
    ci : float
        Confidence level in (0, 1).
    method : {"bca", "percentile", "basic"}

    Returns
    -------
    dict
        ``lower``, ``upper`` (shape (...)) and, for BCa, ``z0`` and ``a``.
        Bounds are NaN where the bootstrap distribution is degenerate
        (all replicates on one side of the estimate).

    Examples
    --------
    >>> import numpy as np
    >>> reps = np.linspace(0.0, 2.0, 1001)
    >>> out = interval(1.0, reps, ci=0.9, method="percentile")
    >>> round(float(out["lower"]), 3), round(float(out["upper"]), 3)
    (0.1, 1.9)
    """
    if not 0.0 < ci < 1.0:
        raise ValueError(f"ci must be in (0, 1), got {ci}")
    estimate = np.asarray(estimate, dtype=float)
    replicates = np.asarray(replicates, dtype=float)
    alpha = np.array([(1.0 - ci) / 2.0, (1.0 + ci) / 2.0])
    if method == "percentile":
        probs = np.broadcast_to(alpha, estimate.shape + (2,))
        q = _quantiles(replicates[..., None, :], probs)
        return {"lower": q[..., 0], "upper": q[..., 1]}
    if method == "basic":
        probs = np.broadcast_to(alpha, estimate.shape + (2,))
        q = _quantiles(replicates[..., None, :], probs)
        return {"lower": 2.0 * estimate - q[..., 1], "upper": 2.0 * estimate - q[..., 0]}
    if method != "bca":
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    if accel is None and jackknife is None:
        raise ValueError("method='bca' needs the jackknife values or the acceleration")
    z0 = bias_correction(estimate, replicates)
    a = acceleration(np.asarray(jackknife, dtype=float)) if accel is None else np.asarray(accel)
    levels = bca_levels(z0, a, ci)
    q = _quantiles(replicates[..., None, :], levels)
    return {"lower": q[..., 0], "upper": q[..., 1], "z0": z0, "a": a}


def zeta_score(estimate, reference, lower, upper):
    """Zeta-score of 004 eq. (14).

    (est - ref)/(upper - est) when est <= ref, else (est - ref)/(est - lower).
    |zeta| <= 1 is equivalent to ``lower <= ref <= upper``.

    Examples
    --------
    >>> round(float(zeta_score(0.9, 1.0, 0.8, 0.95)), 12)
    -2.0
    """
    est, ref = np.asarray(estimate, dtype=float), np.asarray(reference, dtype=float)
    diff = est - ref
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(diff <= 0, diff / (upper - est), diff / (est - lower))


def verdict(estimate, reference, lower, upper):
    """Zeta-score and validity, the validity decided by the interval itself.

    ``valid`` is ``lower <= reference <= upper`` (False where any of them is NaN).
    ``zeta`` is :func:`zeta_score`, made consistent with ``valid``: where the
    reference is inside the interval, |zeta| <= 1; where it is outside, |zeta| > 1
    even when the ratio rounds to 1 (e.g. an estimate of 5e21 with lower limit 9
    and reference 1).

    Returns
    -------
    zeta, valid : ndarray

    Examples
    --------
    >>> z, ok = verdict(5e21, 1.0, 9.0, 2.5e22)
    >>> bool(ok), bool(abs(z) > 1)
    (False, True)
    >>> z, ok = verdict(0.9, 1.0, 0.8, 1.2)
    >>> bool(ok), round(float(z), 12)
    (True, -0.333333333333)
    """
    est = np.asarray(estimate, dtype=float)
    ref = np.asarray(reference, dtype=float)
    lower = np.asarray(lower, dtype=float)
    upper = np.asarray(upper, dtype=float)
    with np.errstate(invalid="ignore"):
        valid = (lower <= ref) & (ref <= upper)
    zeta = np.asarray(zeta_score(est, ref, lower, upper), dtype=float)
    above_one = np.nextafter(1.0, 2.0)
    with np.errstate(invalid="ignore"):
        zeta = np.where(valid, np.clip(zeta, -1.0, 1.0), zeta)
        outside = ~valid & np.isfinite(zeta) & (np.abs(zeta) <= 1.0)
        side = np.where(ref > upper, -1.0, 1.0)  # ref above the interval: estimate too low
    zeta = np.where(outside, side * above_one, zeta)
    return zeta, valid
