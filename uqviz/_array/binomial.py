"""Wilson score interval for a binomial proportion (Newcombe (1998))."""

from __future__ import annotations

import numpy as np
from scipy import special

from uqviz.engine import checks

__all__ = ["wilson_interval"]


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
        raise ValueError(f"k and n must satisfy 0 <= k <= n (finite); {int(bad.sum())} "
                         f"cell(s) do not")
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
