"""Bootstrap confidence intervals and verdicts from replicates (numpy kernels, no xarray).

All functions are vectorised over leading axes; the replicate axis (B) and the
jackknife axis (M) are last. BCa follows DiCiccio & Efron (1996), eqs. 2.3-2.8
and 6.6-6.7; the zeta-score is Pernot (2024b), eq. 14.

Degenerate bootstrap distributions
----------------------------------
:func:`interval` returns NaN bounds where no interval can be computed: all
replicates on one side of the estimate (BCa), replicates without spread (one
point, a constant statistic), or non-finite replicates. Callers detect them
with ``np.isnan(lower)`` (``BootstrapResult.degenerate``) and report
``valid=False`` with a warning; :func:`verdict` already gives ``valid=False``
for NaN bounds.
"""

from __future__ import annotations

import numpy as np
from scipy import special

from uqviz.engine import checks

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

    Examples
    --------
    >>> float(bias_correction(0.5, np.linspace(0.0, 1.0, 101)))
    0.0
    """
    est = np.asarray(estimate)[..., None]
    below = np.count_nonzero(replicates < est, axis=-1)
    below_or_tie = np.count_nonzero(replicates <= est, axis=-1)
    return special.ndtri((below + below_or_tie) / (2.0 * replicates.shape[-1]))


def power_of_two_scale(x, axis=-1):
    """Exponent k with max|x| / 2**k in [0.5, 1) along ``axis`` (kept as a length-1 axis).

    k is 0 where x is all zero or holds a non-finite value.

    Dividing by a power of two is exact, so rescaled sums of powers neither
    overflow nor lose digits.

    Examples
    --------
    >>> power_of_two_scale(np.array([3.0, -1e300])).tolist()
    [997]
    """
    with np.errstate(invalid="ignore"):
        top = np.max(np.abs(x), axis=axis, keepdims=True)
    k = np.frexp(np.where(np.isfinite(top), top, 0.0))[1]
    return k


def acceleration_from_sums(sum_d2, sum_d3):
    """BCa acceleration a = sum d^3 / (6 (sum d^2)^1.5) from the sums.

    DiCiccio & Efron (1996), eq. 6.6. ``d`` are jackknife deviations
    ``mean(jack) - jack_i``, in any common unit per cell (a is scale-free:
    rescale d before cubing it). 0 where all d are 0, NaN where a sum is NaN.

    Examples
    --------
    >>> d = np.array([4.0, 1.0, -5.0]) / 3.0
    >>> round(float(acceleration_from_sums(np.sum(d**2), np.sum(d**3))), 6)
    -0.036739
    """
    sum_d2 = np.asarray(sum_d2, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(sum_d2 > 0, sum_d3 / (6.0 * np.where(sum_d2 > 0, sum_d2, 1.0) ** 1.5),
                        np.where(np.isnan(sum_d2), np.nan, 0.0))


def acceleration(jackknife):
    """Acceleration a from jackknife values (last axis), DiCiccio & Efron (1996), eq. 6.6.

    a = sum(d^3) / (6 (sum d^2)^1.5) with d = mean(jack) - jack_i; 0 when all
    jackknife values are equal, NaN when one is not finite. Values are rescaled
    by a power of two first, so a is exact for jackknife values up to 1e308.

    Examples
    --------
    >>> round(float(acceleration(np.array([1.0, 2.0, 4.0]))), 6)
    -0.036739
    >>> round(float(acceleration(np.array([1.0, 2.0, 4.0]) * 1e300)), 6)
    -0.036739
    """
    jack = np.asarray(jackknife, dtype=float)
    with np.errstate(invalid="ignore", over="ignore", under="ignore"):
        jack = np.ldexp(jack, -power_of_two_scale(jack))
        d = np.mean(jack, axis=-1, keepdims=True) - jack
        d = np.ldexp(d, -power_of_two_scale(d))
        return acceleration_from_sums(np.sum(d * d, axis=-1), np.sum(d**3, axis=-1))


def bca_levels(z0, a, ci):
    """Adjusted lower/upper percentile levels of the BCa interval.

    Examples
    --------
    >>> np.round(bca_levels(0.0, 0.0, 0.9), 6).tolist()
    [0.05, 0.95]
    """
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
        Bounds are NaN where the bootstrap distribution is degenerate: all
        replicates on one side of the estimate (BCa), replicates without
        spread, a non-finite replicate or estimate.

    Examples
    --------
    >>> import numpy as np
    >>> reps = np.linspace(0.0, 2.0, 1001)
    >>> out = interval(1.0, reps, ci=0.9, method="percentile")
    >>> round(float(out["lower"]), 3), round(float(out["upper"]), 3)
    (0.1, 1.9)
    >>> bool(np.isnan(interval(1.0, np.ones(50), accel=0.0)["lower"]))
    True
    """
    ci = checks.probability("ci", ci)
    checks.choice("method", method, METHODS)
    estimate = np.asarray(estimate, dtype=float)
    replicates = np.asarray(replicates, dtype=float)
    with np.errstate(invalid="ignore"):
        degenerate = (~np.isfinite(estimate)
                      | ~np.all(np.isfinite(replicates), axis=-1)
                      | (np.max(replicates, axis=-1) == np.min(replicates, axis=-1)))
    alpha = np.array([(1.0 - ci) / 2.0, (1.0 + ci) / 2.0])
    out = {}
    if method in ("percentile", "basic"):
        probs = np.broadcast_to(alpha, estimate.shape + (2,))
        q = _quantiles(replicates[..., None, :], probs)
        if method == "percentile":
            lower, upper = q[..., 0], q[..., 1]
        else:
            lower, upper = 2.0 * estimate - q[..., 1], 2.0 * estimate - q[..., 0]
    else:
        if accel is None and jackknife is None:
            raise ValueError("method='bca' needs the jackknife values or the acceleration")
        z0 = bias_correction(estimate, replicates)
        a = acceleration(np.asarray(jackknife, dtype=float)) if accel is None else np.asarray(accel)
        levels = bca_levels(z0, a, ci)
        q = _quantiles(replicates[..., None, :], levels)
        lower, upper = q[..., 0], q[..., 1]
        out = {"z0": z0, "a": a}
    nan = degenerate | np.isnan(lower) | np.isnan(upper)
    return {"lower": np.where(nan, np.nan, lower), "upper": np.where(nan, np.nan, upper), **out}


def zeta_score(estimate, reference, lower, upper):
    """Zeta-score, Pernot (2024b), eq. 14.

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
        zeta = np.where(diff <= 0, diff / (upper - est), diff / (est - lower))
    return np.where(diff == 0, 0.0, zeta)  # est == ref on a bound: 0, not 0/0


def verdict(estimate, reference, lower, upper):
    """Zeta-score and validity, the validity decided by the interval itself.

    ``valid`` is ``lower <= reference <= upper`` (False where any of them is NaN).
    ``zeta`` is :func:`zeta_score`, made consistent with ``valid``: where the
    reference is inside the interval, |zeta| <= 1; where it is outside, |zeta| > 1
    even when the ratio rounds to 1 (e.g. an estimate of 5e21 with lower limit 9
    and reference 1). Where a bound is NaN (degenerate interval), zeta is NaN
    and ``valid`` False.

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
    zeta = np.where(np.isnan(lower) | np.isnan(upper), np.nan, zeta)  # no interval, no zeta
    return zeta, valid
