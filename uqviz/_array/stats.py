"""Numpy kernels for calibration statistics; the point axis is last, leading axes are batches.

Most statistics are functions ``statistic(means, n)`` of the means of per-point
columns (Z, Z2, E2, V = uE^2, lnV), so one function serves the estimate, the
bootstrap and the jackknife.

Scale convention (referred to by the other kernels): ``Z``, ``Z2`` come from
E/uE; ``E2``, ``V`` from E and uE divided by ``2**k``, ``k = log2_scale(e, u)``
(0 unless max(|E|, uE) is outside [2**-200, 2**200]), carried as
``means["log2_scale"]``. Ratios are thus exact at any scale; MSE, MV, RMSE,
RMV, UCE apply :func:`unscale`, and :func:`evaluate` raises a ValueError where
a result is not representable in float64.

Examples
--------
>>> log2_scale(np.array([1e155]), np.array([3e155])), float(unscale(0.5, {"log2_scale": 3}, 2))
(517, 32.0)
>>> columns(np.array([2.0]), np.array([4.0]), ("Z", "E2"), log2_scale=1).tolist()
[[0.5, 1.0]]
>>> m = column_means(np.array([1.0, -2.0]), np.array([1.0, 2.0]), ("Z2", "E2", "V"))
>>> float(zms(m, 2)), float(rce(m, 2))
(1.0, 0.0)
>>> rankdata(np.array([3.0, 1.0, 3.0, 2.0])).tolist()
[3.5, 1.0, 3.5, 2.0]
>>> float(spearman_cc(np.array([0.1, -0.5, 1.0]), np.array([1.0, 2.0, 3.0])))
1.0
>>> float(hd_quantiles(np.arange(5.0), [0.5])[0])
2.0
>>> round(float(beta_gm(np.array([0.0, 0.0, 0.0, 0.0, 10.0]))), 6)
0.605234
"""

from __future__ import annotations

import functools

import numpy as np

from uqviz._array.lazy import lazy_module

special = lazy_module("scipy.special")
stats = lazy_module("scipy.stats")

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
COLUMN_CHUNK = 1 << 16  # points per chunk in columns()


def log2_scale(e, u) -> int:
    """Common power-of-two exponent k of the columns E2 and V."""
    e = np.asarray(e, dtype=float)
    u = np.asarray(u, dtype=float)
    with np.errstate(invalid="ignore"):
        top = max(float(np.max(np.abs(e), initial=0.0)), float(np.max(np.abs(u), initial=0.0)))
    if not np.isfinite(top) or top == 0.0 or 2.0**-SAFE_LOG2 <= top <= 2.0**SAFE_LOG2:
        return 0
    return int(np.frexp(top)[1])


def unscale(x, means, power):
    """``x * 2**(power k)`` with k = ``means["log2_scale"]``: back in the data's units."""
    k = int(means.get("log2_scale", 0)) if isinstance(means, dict) else int(means)
    if k == 0:
        return x
    with np.errstate(over="ignore", under="ignore"):
        return np.ldexp(x, power * k)


def columns(e, u, names, log2_scale=0):
    """Per-point columns ``names`` stacked as a C-contiguous ``(..., M, k)`` array."""
    e = np.asarray(e, dtype=float)
    u = np.asarray(u, dtype=float)
    shape = np.broadcast_shapes(e.shape, u.shape)
    e, u = np.broadcast_to(e, shape), np.broadcast_to(u, shape)
    out = np.empty(shape + (len(names),))
    m = shape[-1] if shape else 1
    # in chunks of points: the temporaries stay small whatever M (same values)
    for a in range(0, max(m, 1), COLUMN_CHUNK):
        ec, uc = e[..., a : a + COLUMN_CHUNK], u[..., a : a + COLUMN_CHUNK]
        es, us = (
            (ec, uc) if not log2_scale else (np.ldexp(ec, -log2_scale), np.ldexp(uc, -log2_scale))
        )
        with np.errstate(over="ignore", under="ignore"):
            for i, c in enumerate(names):
                out[..., a : a + COLUMN_CHUNK, i] = (
                    COLUMN_FUNCS[c](es, us) if c in SCALED_COLUMNS else COLUMN_FUNCS[c](ec, uc)
                )
    return out


def column_means(e, u, names):
    """Means over the last axis of each column (dict name -> array), plus ``log2_scale``.

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
        out = {
            c: np.mean(
                COLUMN_FUNCS[c](es, us) if c in SCALED_COLUMNS else COLUMN_FUNCS[c](e, u), axis=-1
            )
            for c in names
        }
    out["log2_scale"] = k
    return out


def evaluate(name, func, means, *args):
    """``func(means, *args)`` as a float array, or a ValueError naming ``name`` if not finite.

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
    problem = unrepresentable(name, func, means, value, *args)
    if problem:
        raise ValueError(problem)
    bad = ~np.isfinite(value)
    if np.any(bad):
        raise ValueError(
            f"{name} is not finite for these data ({int(bad.sum())} of "
            f"{bad.size} value(s) NaN or inf)"
        )
    return value


def unrepresentable(name, func, means, value, *args) -> str | None:
    """Why ``value = func(means, *args)`` over- or underflowed float64 on rescaled data, or None.

    Examples
    --------
    >>> m = column_means(np.array([1e155]), np.array([1e155]), ("E2",))
    >>> unrepresentable("MSE", mse, m, mse(m, 1), 1)[:25], unrepresentable("MSE", mse, {}, 1.0, 1)
    ('MSE overflows float64 for', None)
    """
    k = int(means.get("log2_scale", 0))
    if not k:
        return None
    value = np.asarray(value, dtype=float)
    with np.errstate(all="ignore"):
        raw = np.asarray(func({**means, "log2_scale": 0}, *args), dtype=float)
    over = np.isfinite(raw) & ~np.isfinite(value)
    under = np.isfinite(raw) & (raw != 0) & (np.abs(value) < TINY) & (value != raw)
    if not (np.any(over) or np.any(under)):
        return None
    how = "overflows" if np.any(over) else "underflows"
    return (
        f"{name} {how} float64 for these data (|E|, uE up to 2**{k}): not representable; "
        "use a scale-free statistic (ZMS, RCE) or RMSE/RMV, or express E and uE in other "
        "units"
    )


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


def zisd(m, n):
    """Inverse standard deviation of the z-scores 1/SD(Z) (ddof=1), Pernot (2022, JCP)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return 1.0 / np.sqrt(zvar(m, n))


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
    """Relative calibration error (RMV - RMSE)/RMV, Pernot (2024b), eq. 7."""
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
    """Average ranks (1-based) along the last axis, ties averaged (as R's rank)."""
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
    """Average ranks of every point in resamples given by draw ``counts`` (rows)."""
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
    """CC of bootstrap resamples given as draw counts per point (rows), in O(M) per row."""
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
    """Harrell & Davis (1982) quantile weights, shape ``(len(probs), n)``, cached per (n, probs).

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
    """Harrell-Davis quantiles along the last axis -> ``x.shape[:-1] + (len(probs),)``."""
    x = np.sort(np.asarray(x, dtype=float), axis=-1)
    w = harrell_davis_weights(x.shape[-1], probs)
    return x @ w.T


def range_ratio(e, u, level, q):
    """Range ratio 2 q sqrt(<uE^2>) / (Q_HD(E, (1+level)/2) - Q_HD(E, (1-level)/2)).

    The width of the central ``level`` prediction interval of a calibrated model,
    ``2 q`` RMV with ``q`` the quantile ``(1 + level)/2`` of the unit distribution D, over the
    width of the empirical ``level`` interval of the errors (Harrell-Davis quantiles), along
    the last axis (ErrViewLib ``plotLRR``, Pernot (2023)).

    Examples
    --------
    >>> e = np.array([-2.0, -1.0, 0.0, 1.0, 2.0])
    >>> round(float(range_ratio(e, np.ones(5), 0.95, 1.96)), 3)
    0.995
    """
    e = np.asarray(e, dtype=float)
    u = np.asarray(u, dtype=float)
    lo_hi = hd_quantiles(e, [(1.0 - level) / 2.0, (1.0 + level) / 2.0])
    with np.errstate(divide="ignore", invalid="ignore"):
        return 2.0 * q * np.sqrt(np.mean(u * u, axis=-1)) / (lo_hi[..., 1] - lo_hi[..., 0])


def beta_gm(x):
    """Robust skewness (mean - median)/mean|x - median|, Groeneveld & Meeden (1984), HD median."""
    x = np.asarray(x, dtype=float)
    med = hd_quantiles(x, [0.5])
    return (x.mean(axis=-1) - med[..., 0]) / np.abs(x - med).mean(axis=-1)


KAPPA_CS_NORMAL = 2.91


def kappa_cs(x):
    """Robust excess kurtosis (q.975 - q.025)/(q.75 - q.25) - 2.91 (Crow & Siddiqui (1967))."""
    q = hd_quantiles(x, [0.025, 0.25, 0.75, 0.975])
    return (q[..., 3] - q[..., 0]) / (q[..., 2] - q[..., 1]) - KAPPA_CS_NORMAL
