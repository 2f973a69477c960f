"""Student-t null of the mean square of z-scores: the tail-allowing test of the verdicts.

Pernot (2024b) models the shape D of the errors by a Student-t (its TIG model) and shows that
the bootstrap interval of a mean square is too narrow when D is heavy-tailed (validation
probability 0.65 at nu_D = 2.1). The kernels here give the test that allows for the tails:

- :func:`t_profile` and :func:`tail_df`: the profile likelihood of the degrees of freedom of a
  zero-centred Student-t fitted to the z-scores (its scale profiled out, so the shape is the
  same whatever the scale of uE), and the heaviest t consistent with them (one-sided 95 %
  lower bound, likelihood ratio);
- :func:`null_p_value`: the two-sided p-value of an observed log ZMS (or log ZVar) under
  calibrated unit-variance t_nu z-scores of size M, read from a table simulated once
  (``scripts/make-tail-null``, ``tables/tail_null.npz``) and interpolated in 1/nu and log M;
  beyond the table's largest M the quantiles are rescaled by the law's rate, M^(-1/2) for
  nu >= 4 and M^(2/nu - 1) below (the stable law of index nu/2 of Z^2).

Core axes last, no xarray (uqviz/_array).
"""

from __future__ import annotations

import functools
import pathlib

import numpy as np

__all__ = [
    "PROFILE_DF",
    "LR_HALF_WIDTH",
    "REGION_LEVEL",
    "REGION_HALF_WIDTH",
    "P_FLOOR",
    "MAX_PROFILE_POINTS",
    "t_profile",
    "tail_df",
    "df_region",
    "profile_region",
    "null_table",
    "null_quantiles",
    "null_p_value",
    "sup_null_p_value",
    "effective_size",
]

#: degrees of freedom of the profile likelihood (inf: the normal)
PROFILE_DF = np.concatenate([np.geomspace(2.05, 400.0, 60), [np.inf]])
#: half the 90 % quantile of chi2(1): the one-sided 95 % likelihood-ratio bound
LR_HALF_WIDTH = 1.3527717270950852
#: the confidence set of the degrees of freedom over which the p-value is maximised holds the
#: true df with probability 1 - REGION_LEVEL; the p-value then adds REGION_LEVEL (Berger &
#: Boos (1994)): a valid p-value whatever the df
REGION_LEVEL = 0.001
#: the smallest p-value the table resolves (normal score 3, both sides) plus REGION_LEVEL
P_FLOOR = 0.0026997960632601866 + REGION_LEVEL  # 2 Phi(-3): scipy is not loaded at import
#: half the 1 - REGION_LEVEL quantile of chi2(1): the likelihood-ratio confidence set
REGION_HALF_WIDTH = 5.413780261661737
#: above this many points the profile is computed on as many evenly spaced order statistics of
#: Z^2 (each weighted M / MAX_PROFILE_POINTS): the same degrees of freedom, its bound within 2 %
#: (tests/_array/test_tails.py)
MAX_PROFILE_POINTS = 20_000
_TABLE = pathlib.Path(__file__).with_name("tables") / "tail_null.npz"


def _squares(z):
    z2 = np.asarray(z, dtype=float).ravel() ** 2
    m = z2.size
    if m > MAX_PROFILE_POINTS:
        # evenly spaced order statistics: a deterministic thinning of the sample
        ranks = ((np.arange(MAX_PROFILE_POINTS) + 0.5) * (m / MAX_PROFILE_POINTS)).astype(int)
        z2 = np.sort(z2)[ranks]
        return z2, m / MAX_PROFILE_POINTS
    return z2, 1.0


def t_profile(z, df=PROFILE_DF, n_iter=200, tol=1e-9):
    """Profile log-likelihood of a zero-centred Student-t's degrees of freedom.

    For each ``df`` the scale is its maximum-likelihood value (EM fixed point
    ``s^2 = <w Z^2>``, ``w = (nu + 1) / (nu + Z^2 / s^2)``); ``df = inf`` is the normal.

    Parameters
    ----------
    z : array_like
        z-scores (any scale: the profile does not depend on it).
    df : array_like
        Degrees of freedom, increasing.

    Returns
    -------
    ndarray
        The profile log-likelihood at each ``df`` (NaN when the z-scores are all zero or
        non-finite).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> ll = t_profile(rng.standard_t(3, 4000))
    >>> round(float(PROFILE_DF[np.argmax(ll)]), 1)
    2.9
    """
    from scipy.special import gammaln  # here: `import uqviz` stays light

    z2, weight = _squares(z)
    df = np.asarray(df, dtype=float)
    out = np.full(df.size, np.nan)
    if z2.size == 0 or not np.all(np.isfinite(z2)) or not np.any(z2 > 0):
        return out
    m = z2.size
    s2 = float(np.mean(z2))
    for k, nu in enumerate(df):
        if not np.isfinite(nu):
            s2n = float(np.mean(z2))
            out[k] = -0.5 * m * (np.log(2 * np.pi * s2n) + 1.0)
            continue
        for _ in range(n_iter):
            new = float(np.mean(z2 * ((nu + 1.0) / (nu + z2 / s2))))
            done = abs(new - s2) <= tol * s2
            s2 = new
            if done:
                break
        out[k] = m * (
            gammaln((nu + 1) / 2) - gammaln(nu / 2) - 0.5 * np.log(nu * np.pi * s2)
        ) - 0.5 * (nu + 1) * np.sum(np.log1p(z2 / (nu * s2)))
    return out * weight


def tail_df(z, df=PROFILE_DF):
    """The degrees of freedom of the t that fits the z-scores, and the heaviest consistent one.

    Parameters
    ----------
    z : array_like
        z-scores.

    Returns
    -------
    estimate, lower : float
        The maximum-likelihood degrees of freedom (inf: the normal fits best) and its one-sided
        95 % likelihood-ratio lower bound (the heaviest tail the z-scores do not reject), at
        least ``df[0]``; NaN for degenerate z-scores.

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> est, low = tail_df(rng.standard_t(4, 5000))
    >>> bool(3.4 < low < est < 5.0)
    True
    >>> tail_df(np.zeros(10))
    (nan, nan)
    """
    df = np.asarray(df, dtype=float)
    ll = t_profile(z, df)
    if not np.all(np.isfinite(ll)):
        return np.nan, np.nan
    best = int(np.argmax(ll))
    inside = ll >= ll[best] - LR_HALF_WIDTH
    k = int(np.argmax(inside))  # first (heaviest) df inside the region
    lower = df[k]
    if k > 0:  # interpolate the crossing in 1/df between df[k-1] (outside) and df[k]
        x0, x1 = 1.0 / df[k - 1], 1.0 / df[k]
        y0, y1 = ll[k - 1] - ll[best] + LR_HALF_WIDTH, ll[k] - ll[best] + LR_HALF_WIDTH
        x = x0 + (x1 - x0) * (0.0 - y0) / (y1 - y0)
        lower = 1.0 / x if x > 0 else np.inf
    return float(df[best]), float(lower)


def df_region(z, df=PROFILE_DF, half_width=REGION_HALF_WIDTH):
    """The degrees of freedom the z-scores are consistent with (likelihood-ratio set).

    Parameters
    ----------
    z : array_like
        z-scores.
    half_width : float
        Half the chi2(1) quantile of the set's level (default: 99.9 %).

    Returns
    -------
    ndarray
        The grid ``df`` inside the set ``2 (max ll - ll(df)) <= 2 half_width`` (at least the
        maximum; empty for degenerate z-scores), in increasing order; ``inf`` (the normal) may
        be among them.

    Examples
    --------
    >>> rng = np.random.default_rng(3)
    >>> r = df_region(rng.standard_t(3, 5000))
    >>> bool(2.4 < r[0] < 3.0 < r[-1] < 4.0)
    True
    """
    return profile_region(np.asarray(df, dtype=float), t_profile(z, df), half_width)


def profile_region(df, ll, half_width=REGION_HALF_WIDTH):
    """The ``df`` whose profile log-likelihood ``ll`` is within ``half_width`` of its maximum
    (empty when ``ll`` is not finite)."""
    if not np.all(np.isfinite(ll)):
        return np.array([])
    return np.asarray(df, dtype=float)[ll >= ll.max() - half_width]


@functools.lru_cache(maxsize=1)
def null_table():
    """The simulated table: ``dict`` of nu, m, z_levels, log_zms, log_zvar, n_sets."""
    with np.load(_TABLE) as f:
        return {k: f[k] for k in f.files}


def _rate(nu):
    """Exponent gamma of the spread of log ZMS, ~ M^-gamma, for large M."""
    return 0.5 if nu >= 4 else 1.0 - 2.0 / nu


def _at_df_row(q, i, m, table):
    """Quantiles of row nu index i at size m (log-M interpolation, rate beyond the table)."""
    ms = table["m"].astype(float)
    if m >= ms[-1]:
        return q[i, -1] * (ms[-1] / m) ** _rate(table["nu"][i])
    return np.array([np.interp(np.log(m), np.log(ms), q[i, :, k]) for k in range(q.shape[2])])


def null_quantiles(m, nu, statistic="ZMS"):
    """Quantiles of log ZMS (or log ZVar) of M calibrated unit-variance t_nu z-scores.

    Parameters
    ----------
    m : float
        Number of points (at least 3).
    nu : float
        Degrees of freedom (inf: normal), clipped to the table's range [2.1, inf].
    statistic : {"ZMS", "ZVar"}

    Returns
    -------
    ndarray
        The quantiles at the normal-score levels ``null_table()["z_levels"]``.

    Examples
    --------
    >>> q = null_quantiles(1000, np.inf)
    >>> round(float(q[15]), 3)  # the median of log(chi2(1000)/1000)
    -0.001
    """
    table = null_table()
    q = table["log_zms" if statistic == "ZMS" else "log_zvar"]
    nus = table["nu"]
    x = 1.0 / np.clip(float(nu), nus[0], np.inf)
    xs = 1.0 / nus  # decreasing, ends at 0 (normal)
    j = int(np.clip(np.searchsorted(-xs, -x), 1, xs.size - 1))
    w = (x - xs[j]) / (xs[j - 1] - xs[j])
    return w * _at_df_row(q, j - 1, m, table) + (1 - w) * _at_df_row(q, j, m, table)


def null_p_value(log_statistic, m, nu, statistic="ZMS"):
    """Two-sided p-value of an observed log ZMS (or log ZVar) under the t_nu null.

    The level of the observed value in the null's quantiles (interpolated in normal score),
    ``p = 2 min(F, 1 - F)``; beyond the table's levels (normal score 3) it is the smallest
    p-value the table resolves, ``2 Phi(-3) = 0.0027`` (read "at most 0.0027").

    Examples
    --------
    >>> float(null_p_value(0.0, 5000, np.inf)) > 0.5
    True
    >>> round(float(null_p_value(np.log(0.5), 5000, 3.0)), 4)
    0.0027
    """
    from scipy.special import ndtr

    x = float(log_statistic)
    if not np.isfinite(x) or np.isnan(nu) or m < 3:
        return np.nan
    z_levels = null_table()["z_levels"]
    q = null_quantiles(m, nu, statistic)
    z = float(np.interp(x, q, z_levels))
    return float(2.0 * ndtr(-abs(z)))


def sup_null_p_value(log_statistic, m, dfs, statistic="ZMS", level=REGION_LEVEL):
    """The largest p-value over a confidence set of degrees of freedom, plus its level.

    ``min(1, max_{nu in dfs} null_p_value(nu) + level)``: with ``dfs`` a ``1 - level``
    confidence set of the z-scores' df (:func:`df_region`), a valid p-value whatever the true
    df (Berger & Boos (1994)). A heavier null is not conservative on both sides (its median
    ZMS is lower), so no single df of the set would do: the maximum is.

    Examples
    --------
    >>> p = sup_null_p_value(0.0, 5000, [3.0, 4.0, np.inf])
    >>> bool(p >= null_p_value(0.0, 5000, 3.0))
    True
    >>> float(sup_null_p_value(0.0, 5000, []))
    nan
    """
    dfs = np.asarray(dfs, dtype=float)
    if dfs.size == 0:
        return np.nan
    p = max(null_p_value(log_statistic, m, nu, statistic) for nu in dfs)
    return float(min(1.0, p + level)) if np.isfinite(p) else np.nan


def effective_size(weights):
    """Kish's effective number of points of a weighted mean, ``(sum w)^2 / sum w^2``.

    Examples
    --------
    >>> effective_size(np.ones(10)), round(effective_size([1.0, 1.0, 2.0]), 3)
    (10.0, 2.667)
    """
    w = np.asarray(weights, dtype=float)
    return float(w.sum() ** 2 / np.sum(w * w))
