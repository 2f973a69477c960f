"""Wilson score interval for a binomial proportion (Newcombe (1998))."""

from __future__ import annotations

import numpy as np

from uqviz._array import checks
from uqviz._array.lazy import lazy_module

special = lazy_module("scipy.special")

__all__ = ["wilson_interval", "poisson_binomial_cdf", "lower_critical", "wilson_coverage"]


def wilson_interval(k, n, ci=0.95, continuity=False):
    """Wilson score interval for ``k / n`` (Newcombe (1998), methods 3 and 4).

    Parameters
    ----------
    k, n : array_like of int
        Successes and trials, ``0 <= k <= n``; ``n = 0`` gives NaN bounds.
    ci : float, default 0.95
    continuity : bool, default False
        Apply the continuity correction.

    Returns
    -------
    lower, upper : ndarray

    Raises
    ------
    ValueError
        If `ci` is outside (0, 1) or some ``k``, ``n`` are invalid (with their count).

    Examples
    --------
    >>> lo, hi = wilson_interval(81, 263, continuity=True)
    >>> round(float(lo), 4), round(float(hi), 4)
    (0.2535, 0.3682)
    """
    ci = checks.probability("ci", ci)
    continuity = checks.boolean("continuity", continuity)
    k = np.asarray(k, dtype=float)
    n = np.asarray(n, dtype=float)
    k, n = np.broadcast_arrays(k, n)
    bad = (n < 0) | (k < 0) | (k > n) | ~np.isfinite(k) | ~np.isfinite(n)
    if np.any(bad):
        raise ValueError(
            f"k and n must satisfy 0 <= k <= n (finite); {int(bad.sum())} cell(s) do not"
        )
    z = float(special.ndtri(0.5 + ci / 2.0))
    z2 = z * z
    empty = n == 0
    nn = np.where(empty, 1.0, n)  # placeholder, masked below
    p = k / nn
    q = 1.0 - p
    with np.errstate(invalid="ignore", divide="ignore"):
        if not continuity:
            center = (k + z2 / 2.0) / (nn + z2)
            half = z * np.sqrt(nn) / (nn + z2) * np.sqrt(p * q + z2 / (4.0 * nn))
            lower, upper = center - half, center + half
        else:
            denom = 2.0 * (nn + z2)
            rad_lo = z2 - 2.0 - 1.0 / nn + 4.0 * p * (nn * q + 1.0)
            rad_hi = z2 + 2.0 - 1.0 / nn + 4.0 * p * (nn * q - 1.0)
            lower = (2.0 * nn * p + z2 - 1.0 - z * np.sqrt(np.maximum(rad_lo, 0.0))) / denom
            upper = (2.0 * nn * p + z2 + 1.0 + z * np.sqrt(np.maximum(rad_hi, 0.0))) / denom
            lower = np.where(k == 0, 0.0, lower)
            upper = np.where(k == nn, 1.0, upper)
    lower = np.clip(lower, 0.0, 1.0)
    upper = np.clip(upper, 0.0, 1.0)
    lower = np.where(empty, np.nan, lower)
    upper = np.where(empty, np.nan, upper)
    return lower, upper


def poisson_binomial_cdf(p):
    """CDF of the number of successes of independent Bernoulli trials with probabilities ``p``.

    Exact recursion over the trials (O(N^2) for N trials): the distribution of the number of
    valid bins of a calibrated set when bin ``i`` is valid with probability ``p[i]``.

    Parameters
    ----------
    p : array_like, shape (N,)
        Success probabilities in [0, 1].

    Returns
    -------
    ndarray, shape (N + 1,)
        ``P(K <= k)`` for ``k = 0, ..., N``.

    Examples
    --------
    >>> [round(float(c), 6) for c in poisson_binomial_cdf([0.5, 0.5])]
    [0.25, 0.75, 1.0]
    """
    p = np.asarray(p, dtype=float).ravel()
    if np.any(~((p >= 0.0) & (p <= 1.0))):
        raise ValueError(
            f"p: probabilities must be in [0, 1]; {int(np.sum(~((p >= 0) & (p <= 1))))} are not"
        )
    pmf = np.zeros(p.size + 1)
    pmf[0] = 1.0
    for i, pi in enumerate(p):
        pmf[1 : i + 2] = pmf[1 : i + 2] * (1.0 - pi) + pmf[: i + 1] * pi
        pmf[0] *= 1.0 - pi
    return np.minimum(np.cumsum(pmf), 1.0)


def lower_critical(cdf, alpha):
    """Smallest count ``k`` with ``P(K <= k) > alpha``: counts below it are rejected at ``alpha``.

    Examples
    --------
    >>> int(lower_critical(poisson_binomial_cdf([0.9] * 20), 0.05))
    16
    """
    return int(np.searchsorted(np.asarray(cdf), alpha, side="right"))


def wilson_coverage(n, p, ci=0.95, continuity=True):
    """Probability that the Wilson interval of ``k / n``, ``k ~ Binomial(n, p)``, contains ``p``.

    The exact coverage of the binomial interval of a local PICP for a calibrated bin of ``n``
    points (Newcombe (1998)).

    Parameters
    ----------
    n : int
    p : float
    ci : float, default 0.95
    continuity : bool, default True

    Returns
    -------
    float

    Examples
    --------
    >>> 0.95 <= wilson_coverage(100, 0.9) <= 1.0
    True
    """
    from scipy import stats

    k = np.arange(int(n) + 1)
    lower, upper = wilson_interval(k, np.full(k.size, int(n)), ci=ci, continuity=continuity)
    inside = (lower <= p) & (p <= upper)
    return float(stats.binom.pmf(k, int(n), p)[inside].sum())
