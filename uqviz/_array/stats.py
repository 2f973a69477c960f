"""Numpy kernels for calibration statistics (no xarray).

Conventions (as in arviz-stats' ``base/array.py``): the core axis (``point``)
is the **last** axis; every function is vectorised over leading axes
(replicates, datasets).

Most calibration statistics are smooth functions of a few *means* of per-point
columns (Z, Z^2, E^2, uE^2, ln uE^2). They are written as
``statistic(means, n)`` where ``means`` maps a column name to an array of
means; the same function then serves the point estimate, the bootstrap
replicates (means of resampled sums) and the jackknife (leave-one-out means).
"""

from __future__ import annotations

import numpy as np
from scipy import special, stats

LN_2PI = float(np.log(2.0 * np.pi))

# --------------------------------------------------------------------------
# per-point columns
# --------------------------------------------------------------------------
COLUMN_FUNCS = {
    "Z": lambda e, u: e / u,
    "Z2": lambda e, u: (e / u) ** 2,
    "E2": lambda e, u: e * e,
    "V": lambda e, u: u * u,
    "lnV": lambda e, u: 2.0 * np.log(u),
}


def columns(e, u, names):
    """Stack the per-point columns ``names`` of errors ``e`` and uncertainties ``u``.

    Returns an array of shape ``(..., M, k)`` (C-contiguous, float64) so that a
    bootstrap draw of one point reads one contiguous row.
    """
    e = np.asarray(e, dtype=float)
    u = np.asarray(u, dtype=float)
    return np.ascontiguousarray(np.stack([COLUMN_FUNCS[c](e, u) for c in names], axis=-1))


def column_means(e, u, names):
    """Means over the last axis of each column, as a dict name -> array."""
    e = np.asarray(e, dtype=float)
    u = np.asarray(u, dtype=float)
    return {c: np.mean(COLUMN_FUNCS[c](e, u), axis=-1) for c in names}


# --------------------------------------------------------------------------
# statistics as functions of means: f(means, n)
# --------------------------------------------------------------------------
def zm(m, n):
    """Mean of z-scores <Z>."""
    return m["Z"]


def zms(m, n):
    """Mean of squared z-scores <Z^2>."""
    return m["Z2"]


def zvar(m, n):
    """Unbiased variance of the z-scores (ddof=1)."""
    return (m["Z2"] - m["Z"] ** 2) * (n / (n - 1.0))


def mse(m, n):
    """Mean squared error <E^2>."""
    return m["E2"]


def mv(m, n):
    """Mean variance <uE^2>."""
    return m["V"]


def rmse(m, n):
    """Root mean squared error."""
    return np.sqrt(m["E2"])


def rmv(m, n):
    """Root mean variance."""
    return np.sqrt(m["V"])


def rce(m, n):
    """Relative calibration error (RMV - RMSE)/RMV (004 eq. 7)."""
    return 1.0 - np.sqrt(m["E2"] / m["V"])


def rce2(m, n):
    """Alternative relative calibration error (MV - MSE)/MV (004 eq. A1)."""
    return 1.0 - m["E2"] / m["V"]


def nll(m, n):
    """Gaussian negative log-likelihood (004 eq. 12)."""
    return 0.5 * (m["Z2"] + m["lnV"] + LN_2PI)


def nll_ref(m, n):
    """Reference NLL of a calibrated set with these uncertainties (002 eq. 16)."""
    return 0.5 * (1.0 + m["lnV"] + LN_2PI)


# --------------------------------------------------------------------------
# rank statistics
# --------------------------------------------------------------------------
def rankdata(x):
    """Average ranks (1-based) along the last axis, ties averaged (as R's rank).

    Rows without ties (the rule for continuous data) take a fast path: the
    inverse of an unstable argsort; rows with ties get averaged ranks.
    """
    x = np.asarray(x, dtype=float)
    order = np.argsort(x, axis=-1)
    ranks = np.empty(x.shape)
    np.put_along_axis(ranks, order, np.arange(1.0, x.shape[-1] + 1.0), axis=-1)
    tied = np.any(np.diff(np.take_along_axis(x, order, axis=-1), axis=-1) == 0, axis=-1)
    if np.any(tied):
        ranks[tied] = stats.rankdata(x[tied], axis=-1, method="average")
    return ranks


def pearson(x, y):
    """Pearson correlation along the last axis."""
    x = x - x.mean(axis=-1, keepdims=True)
    y = y - y.mean(axis=-1, keepdims=True)
    return (x * y).sum(axis=-1) / np.sqrt((x * x).sum(axis=-1) * (y * y).sum(axis=-1))


def spearman_cc(e, u):
    """CC: Spearman rank correlation between |E| and uE along the last axis."""
    return pearson(rankdata(np.abs(e)), rankdata(u))


def spearman_cc_given_u(u):
    """CC as a function of the errors alone, for fixed uncertainties (ranked once)."""
    ru = rankdata(u)

    def cc(e):
        return pearson(rankdata(np.abs(e)), ru)

    return cc


def _tie_groups(x):
    """Order of x and the start of each group of equal values in that order."""
    order = np.argsort(x, kind="stable")
    xs = x[order]
    starts = np.flatnonzero(np.r_[True, xs[1:] != xs[:-1]])
    return order, starts


def _ranks_from_counts(counts, order, starts):
    """Average ranks of every point in resamples given by ``counts`` (rows).

    A point drawn c times contributes c copies; tied values (and the copies)
    share the average of the positions they occupy in the sorted resample.
    """
    c = counts[:, order]
    totals = np.add.reduceat(c, starts, axis=1)
    before = np.cumsum(totals, axis=1) - totals
    group_rank = before + (totals + 1.0) / 2.0
    sizes = np.diff(np.r_[starts, order.size])
    ranks = np.empty(counts.shape)
    ranks[:, order] = np.repeat(group_rank, sizes, axis=1)
    return ranks


def cc_counts_prepare(e, u):
    """Sorting information of |E| and uE, computed once for :func:`spearman_cc_counts`."""
    return _tie_groups(np.abs(e)), _tie_groups(u)


def spearman_cc_counts(counts, prepared):
    """CC of bootstrap resamples given as draw counts per point (rows), in O(M) per row.

    Equal to ``spearman_cc`` of the expanded resamples: the Pearson
    correlation of average ranks, with each point weighted by its count.
    """
    (oe, se), (ou, su) = prepared
    re = _ranks_from_counts(counts, oe, se)
    ru = _ranks_from_counts(counts, ou, su)
    n = counts.sum(axis=1)
    mean = (n + 1.0) / 2.0  # the mean of average ranks is always (n + 1)/2
    de, du = re - mean[:, None], ru - mean[:, None]
    sxy = np.sum(counts * de * du, axis=1)
    return sxy / np.sqrt(np.sum(counts * de * de, axis=1) * np.sum(counts * du * du, axis=1))


# --------------------------------------------------------------------------
# robust shape statistics (Harrell-Davis quantiles)
# --------------------------------------------------------------------------
def harrell_davis_weights(n, probs):
    """Harrell-Davis weights, shape ``(len(probs), n)``, for a sorted sample of size n.

    The p-quantile is ``sum_i w_i x_(i)`` with ``w_i = I_{i/n}(a, b) - I_{(i-1)/n}(a, b)``,
    ``a = (n+1) p``, ``b = (n+1)(1-p)`` and I the regularised incomplete beta.
    """
    probs = np.atleast_1d(np.asarray(probs, dtype=float))
    grid = np.arange(n + 1) / n
    a = (n + 1) * probs[:, None]
    b = (n + 1) * (1.0 - probs[:, None])
    cdf = special.betainc(a, b, grid[None, :])
    return np.diff(cdf, axis=-1)


def hd_quantiles(x, probs):
    """Harrell-Davis quantile estimates along the last axis.

    Returns an array of shape ``x.shape[:-1] + (len(probs),)``.
    """
    x = np.sort(np.asarray(x, dtype=float), axis=-1)
    w = harrell_davis_weights(x.shape[-1], probs)
    return x @ w.T


def beta_gm(x):
    """Robust skewness beta_GM = (mean - median) / mean|x - median| (Groeneveld-Meeden).

    The median is the Harrell-Davis estimate. Bounded in [-1, 1], 0 for symmetry.
    """
    x = np.asarray(x, dtype=float)
    med = hd_quantiles(x, [0.5])
    return (x.mean(axis=-1) - med[..., 0]) / np.abs(x - med).mean(axis=-1)


KAPPA_CS_NORMAL = 2.91


def kappa_cs(x):
    """Robust excess kurtosis of Crow & Siddiqui, with Harrell-Davis quantiles.

    kappa_CS = (q0.975 - q0.025)/(q0.75 - q0.25) - 2.91 (0 for a normal variate).
    """
    q = hd_quantiles(x, [0.025, 0.25, 0.75, 0.975])
    return (q[..., 3] - q[..., 0]) / (q[..., 2] - q[..., 1]) - KAPPA_CS_NORMAL
