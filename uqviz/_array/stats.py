"""Numpy kernels for calibration statistics (no xarray).

The core axis (``point``) is the **last** axis; every function is vectorised
over leading axes (replicates, datasets).

Most calibration statistics are smooth functions of a few *means* of per-point
columns (Z, Z^2, E^2, uE^2, ln uE^2). They are written as ``statistic(means,
n)`` where ``means`` maps a column name to an array of means; the same function
then serves the point estimate, the bootstrap replicates (means of resampled
sums) and the jackknife (leave-one-out means).

Scale
-----
E and uE may take any float64 value (1e-300 .. 1e155 are legitimate units),
but E^2 and uE^2 overflow above ~1e154 and underflow below ~1e-154. Hence:

- ``Z`` and ``Z2`` are computed from ``Z = E/uE`` directly (exact at any scale);
- ``E2`` and ``V`` are computed from E and uE divided by a common power of two
  ``2**k`` (exact), ``k = log2_scale(e, u)``: 0 while max(|E|, uE) lies in
  [2**-200, 2**200] (the means are then plain E^2 and uE^2), else chosen so that
  the largest value is in [0.5, 1). ``means["log2_scale"]`` carries k (absent
  means 0);
- ratios (RCE, RCE2, ENCE) are therefore exact at any scale; MSE, MV, RMSE,
  RMV (and UCE) undo the scale with :func:`unscale`. Where the result is not
  representable in float64 (MSE of errors of 1e155 is 1e310), :func:`evaluate`
  raises a ValueError naming the statistic, instead of returning inf or 0.

A statistic registered by a user that reads ``E2``/``V`` is correct whenever
max(|E|, uE) is in [2**-200, 2**200]; outside, it must apply :func:`unscale`.
Squares of values more than ~1e150 times smaller than the largest one
underflow to 0 (their share of a mean is below 1e-300).
"""

from __future__ import annotations

import functools

import numpy as np
from scipy import special, stats

LN_2PI = float(np.log(2.0 * np.pi))
SAFE_LOG2 = 200  # no rescaling while max(|E|, uE) is within 2**-200 .. 2**200
TINY = np.finfo(float).tiny

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
SCALED_COLUMNS = ("E2", "V")  # computed on E/2**k and uE/2**k


def log2_scale(e, u) -> int:
    """Common power-of-two exponent k of the columns E2 and V (see the module docstring).

    Examples
    --------
    >>> log2_scale(np.array([1.0, -2.0]), np.array([1.0, 3.0]))
    0
    >>> log2_scale(np.array([1e155]), np.array([3e155]))
    517
    """
    e = np.asarray(e, dtype=float)
    u = np.asarray(u, dtype=float)
    with np.errstate(invalid="ignore"):
        top = max(float(np.max(np.abs(e), initial=0.0)), float(np.max(np.abs(u), initial=0.0)))
    if not np.isfinite(top) or top == 0.0 or 2.0**-SAFE_LOG2 <= top <= 2.0**SAFE_LOG2:
        return 0
    return int(np.frexp(top)[1])


def unscale(x, means, power):
    """``x * 2**(power k)`` with k = ``means["log2_scale"]``: a value back in the data's units.

    Overflow gives inf and underflow 0 without a numpy warning;
    :func:`evaluate` turns them into an error.

    Examples
    --------
    >>> float(unscale(0.5, {"log2_scale": 3}, 2))
    32.0
    """
    k = int(means.get("log2_scale", 0)) if isinstance(means, dict) else int(means)
    if k == 0:
        return x
    with np.errstate(over="ignore", under="ignore"):
        return np.ldexp(x, power * k)


def columns(e, u, names, log2_scale=0):
    """Stack the per-point columns ``names`` of errors ``e`` and uncertainties ``u``.

    ``E2`` and ``V`` are in units of ``2**(2 log2_scale)``. Returns an array of
    shape ``(..., M, k)`` (C-contiguous, float64) so that a bootstrap draw of
    one point reads one contiguous row.

    Examples
    --------
    >>> columns(np.array([2.0]), np.array([4.0]), ("Z", "E2"), log2_scale=1).tolist()
    [[0.5, 1.0]]
    """
    e = np.asarray(e, dtype=float)
    u = np.asarray(u, dtype=float)
    es, us = (e, u) if not log2_scale else (np.ldexp(e, -log2_scale), np.ldexp(u, -log2_scale))
    with np.errstate(over="ignore", under="ignore"):
        cols = [COLUMN_FUNCS[c](es, us) if c in SCALED_COLUMNS else COLUMN_FUNCS[c](e, u)
                for c in names]
    return np.ascontiguousarray(np.stack(cols, axis=-1))


def column_means(e, u, names):
    """Means over the last axis of each column, as a dict name -> array, plus ``log2_scale``.

    Examples
    --------
    >>> m = column_means(np.array([1e155, -1e155]), np.array([1e155, 1e155]), ("E2", "V"))
    >>> float(rce2(m, 2)), float(rmse(m, 2))
    (0.0, 1e+155)
    """
    e = np.asarray(e, dtype=float)
    u = np.asarray(u, dtype=float)
    k = log2_scale(e, u)
    es, us = (e, u) if not k else (np.ldexp(e, -k), np.ldexp(u, -k))
    with np.errstate(over="ignore", under="ignore"):
        out = {c: np.mean(COLUMN_FUNCS[c](es, us) if c in SCALED_COLUMNS
                          else COLUMN_FUNCS[c](e, u), axis=-1) for c in names}
    out["log2_scale"] = k
    return out


def evaluate(name, func, means, *args):
    """``func(means, *args)`` as a float array, or a ValueError naming ``name`` when not finite.

    The error says whether the value leaves float64 because of the data's
    scale (overflow or underflow of a scale-dependent statistic such as MSE),
    or is undefined for the data (NaN, inf).

    Examples
    --------
    >>> m = column_means(np.array([1e155]), np.array([1e155]), ("E2",))
    >>> evaluate("MSE", mse, m, 1)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: MSE overflows float64 for these data (|E|, uE up to 2**515): not representable; ...
    """
    with np.errstate(all="ignore"):
        value = np.asarray(func(means, *args), dtype=float)
    k = int(means.get("log2_scale", 0))
    if k:
        with np.errstate(all="ignore"):
            raw = np.asarray(func({**means, "log2_scale": 0}, *args), dtype=float)
        over = np.isfinite(raw) & ~np.isfinite(value)
        under = np.isfinite(raw) & (raw != 0) & (np.abs(value) < TINY) & (value != raw)
        if np.any(over) or np.any(under):
            how = "overflows" if np.any(over) else "underflows"
            raise ValueError(f"{name} {how} float64 for these data (|E|, uE up to 2**{k}): "
                             "not representable; use a scale-free statistic (ZMS, RCE) or "
                             "RMSE/RMV, or express E and uE in other units")
    bad = ~np.isfinite(value)
    if np.any(bad):
        raise ValueError(f"{name} is not finite for these data ({int(bad.sum())} of "
                         f"{bad.size} value(s) NaN or inf)")
    return value


# --------------------------------------------------------------------------
# statistics as functions of means: f(means, n)
# --------------------------------------------------------------------------
def zm(m, n):
    """Mean of z-scores <Z>."""
    return m["Z"]


def zms(m, n):
    """Mean of squared z-scores <Z^2>.

    Examples
    --------
    >>> float(zms(column_means(np.array([1.0, -2.0]), np.array([1.0, 2.0]), ("Z2",)), 2))
    1.0
    """
    return m["Z2"]


def zvar(m, n):
    """Unbiased variance of the z-scores (ddof=1)."""
    return (m["Z2"] - m["Z"] ** 2) * (n / (n - 1.0))


def mse(m, n):
    """Mean squared error <E^2>."""
    return unscale(m["E2"], m, 2)


def mv(m, n):
    """Mean variance <uE^2>."""
    return unscale(m["V"], m, 2)


def rmse(m, n):
    """Root mean squared error."""
    return unscale(np.sqrt(m["E2"]), m, 1)


def rmv(m, n):
    """Root mean variance."""
    return unscale(np.sqrt(m["V"]), m, 1)


def rce(m, n):
    """Relative calibration error (RMV - RMSE)/RMV, Pernot (2024b), eq. 7.

    Examples
    --------
    >>> float(rce(column_means(np.array([1.0, -1.0]), np.array([1.0, 1.0]), ("E2", "V")), 2))
    0.0
    """
    return 1.0 - np.sqrt(m["E2"] / m["V"])


def rce2(m, n):
    """Alternative relative calibration error (MV - MSE)/MV, Pernot (2024b), eq. A1."""
    return 1.0 - m["E2"] / m["V"]


def nll(m, n):
    """Gaussian negative log-likelihood, Pernot (2024b), eq. 12."""
    return 0.5 * (m["Z2"] + m["lnV"] + LN_2PI)


def nll_ref(m, n):
    """Reference NLL of a calibrated set with these uncertainties, Pernot (2024c), eq. 16."""
    return 0.5 * (1.0 + m["lnV"] + LN_2PI)


# --------------------------------------------------------------------------
# rank statistics
# --------------------------------------------------------------------------
def rankdata(x):
    """Average ranks (1-based) along the last axis, ties averaged (as R's rank).

    Rows without ties (the rule for continuous data) take a fast path: the
    inverse of an unstable argsort; rows with ties get averaged ranks.

    Examples
    --------
    >>> rankdata(np.array([3.0, 1.0, 3.0, 2.0])).tolist()
    [3.5, 1.0, 3.5, 2.0]
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
    """CC: Spearman rank correlation between |E| and uE along the last axis.

    Examples
    --------
    >>> float(spearman_cc(np.array([0.1, -0.5, 1.0]), np.array([1.0, 2.0, 3.0])))
    1.0
    """
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
    ``a = (n+1) p``, ``b = (n+1)(1-p)`` and I the regularised incomplete beta
    (Harrell & Davis 1982). The weights of the last few (n, probs) are cached
    (read-only arrays): Monte Carlo studies screen thousands of sets of one size.

    Examples
    --------
    >>> w = harrell_davis_weights(5, [0.5])
    >>> w.shape, round(float(w.sum()), 12)
    ((1, 5), 1.0)
    """
    probs = tuple(float(p) for p in np.atleast_1d(np.asarray(probs, dtype=float)))
    return _hd_weights(int(n), probs)


@functools.lru_cache(maxsize=16)
def _hd_weights(n, probs):
    p = np.asarray(probs)[:, None]
    grid = np.arange(n + 1) / n
    w = np.diff(special.betainc((n + 1) * p, (n + 1) * (1.0 - p), grid[None, :]), axis=-1)
    w.setflags(write=False)
    return w


def hd_quantiles(x, probs):
    """Harrell-Davis quantile estimates along the last axis.

    Returns an array of shape ``x.shape[:-1] + (len(probs),)``.

    Examples
    --------
    >>> float(hd_quantiles(np.arange(5.0), [0.5])[0])
    2.0
    """
    x = np.sort(np.asarray(x, dtype=float), axis=-1)
    w = harrell_davis_weights(x.shape[-1], probs)
    return x @ w.T


def beta_gm(x):
    """Robust skewness beta_GM = (mean - median) / mean|x - median| (Groeneveld & Meeden (1984)).

    The median is the Harrell-Davis estimate. Bounded in [-1, 1], 0 for symmetry.

    Examples
    --------
    >>> round(float(beta_gm(np.array([0.0, 0.0, 0.0, 0.0, 10.0]))), 6)
    0.605234
    """
    x = np.asarray(x, dtype=float)
    med = hd_quantiles(x, [0.5])
    return (x.mean(axis=-1) - med[..., 0]) / np.abs(x - med).mean(axis=-1)


KAPPA_CS_NORMAL = 2.91


def kappa_cs(x):
    """Robust excess kurtosis of Crow & Siddiqui (1967), with Harrell & Davis (1982) quantiles.

    kappa_CS = (q0.975 - q0.025)/(q0.75 - q0.25) - 2.91 (0 for a normal variate).
    """
    q = hd_quantiles(x, [0.025, 0.25, 0.75, 0.975])
    return (q[..., 3] - q[..., 0]) / (q[..., 2] - q[..., 1]) - KAPPA_CS_NORMAL
