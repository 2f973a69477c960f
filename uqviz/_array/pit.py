"""Predictive CDFs, PIT values and their uniformity tests (numpy kernels, no xarray).

The predictive CDF of each point is evaluated on float arrays: piecewise-linear between given
quantiles (each row increasing) with tails of a standardised distribution D, or the empirical CDF
of ensemble members. Standardised distributions are passed as ``cdf``/``ppf`` callables, so that
nothing of uqviz outside ``_array/`` is imported. The uniformity statistics sort the PIT values
once; the simultaneous ECDF band (Säilynoja et al. 2022) is calibrated by simulating uniform
ECDFs through multinomial counts on the grid (no sample of size n is drawn) and cached per
``(n, grid, ci, n_band, seed)``.

Examples
--------
>>> import numpy as np
>>> from scipy import special
>>> q = np.array([[0.0, 1.0, 3.0]]); p = np.array([0.1, 0.5, 0.9])
>>> cdf_quantiles(np.array([[2.0]]), q, p, np.array([1.0]), special.ndtr, special.ndtri).tolist()
[[0.7]]
>>> lo, hi = ecdf_bounds(np.array([1.0]), np.array([[0.0, 1.0, 1.0, 2.0]]))
>>> lo.tolist(), hi.tolist()
([0.25], [0.75])
"""

from __future__ import annotations

import functools

import numpy as np

from uqviz._array.lazy import lazy_module

stats = lazy_module("scipy.stats")
special = lazy_module("scipy.special")

__all__ = [
    "cdf_quantiles",
    "quantiles_inverse",
    "ecdf_bounds",
    "rank_bounds",
    "ecdf_quantiles",
    "segment_bounds",
    "randomised",
    "cvm_sf_asymptotic",
    "uniformity",
    "histogram_counts",
    "binomial_band",
    "band_levels",
    "band_gamma",
    "ecdf_level",
    "band_p_value",
    "simultaneous_band",
    "ecdf_counts",
]


def _counts(q, y, side):
    """Per row and value, the number of quantiles ``<= y`` (side "right") or ``< y``."""
    k = np.zeros(y.shape, dtype=np.int64)
    for j in range(q.shape[1]):
        col = q[:, j][:, None]
        k += (col <= y) if side == "right" else (col < y)
    return k


def cdf_quantiles(y, q, p, u, cdf, ppf, *, side="right"):
    r"""Piecewise-linear predictive CDF between quantiles, with tails of D scaled by ``u``.

    Parameters
    ----------
    y : ndarray, shape (n, k)
        Values at which each row's CDF is evaluated.
    q : ndarray, shape (n, L)
        Quantiles of each row, non-decreasing along the row (L >= 2).
    p : ndarray, shape (L,)
        Their increasing probabilities in (0, 1).
    u : ndarray, shape (n,)
        Scale of the tails (the standard uncertainty).
    cdf, ppf : callables
        CDF and quantile function of the standardised (unit-variance) D.
    side : {"right", "left"}
        ``F(y)`` (right-continuous) or ``F(y-)`` (the left limit; they differ where
        quantiles are tied: an atom).

    Returns
    -------
    ndarray, shape (n, k)

    Notes
    -----
    Between :math:`q_j \le y < q_{j+1}`,
    :math:`F(y) = p_j + (p_{j+1} - p_j)(y - q_j)/(q_{j+1} - q_j)`; below :math:`q_1`,
    :math:`F(y) = F_D(z_1 + (y - q_1)/u)` and above :math:`q_L`,
    :math:`F(y) = F_D(z_L + (y - q_L)/u)` with :math:`z_j = F_D^{-1}(p_j)`: the distribution D,
    scaled by u, shifted to pass through the extreme quantile, so that F is continuous.
    """
    n, L = q.shape
    k = _counts(q, y, side)
    z = ppf(p)
    j = np.clip(k, 1, L - 1)  # q[j - 1] <= y < q[j] (right); q[j - 1] < y <= q[j] (left)
    q0 = np.take_along_axis(q, j - 1, axis=1)
    q1 = np.take_along_axis(q, j, axis=1)
    p0 = p[j - 1]
    w = q1 - q0
    with np.errstate(invalid="ignore", divide="ignore"):
        frac = np.where(w > 0, (y - q0) / np.where(w > 0, w, 1.0), 0.0)
        out = p0 + (p[j] - p0) * frac
        for mask, col, zj in ((k == 0, 0, z[0]), (k == L, L - 1, z[-1])):
            if mask.any():  # the tails: D scaled by u through the extreme quantile
                rows = np.nonzero(mask)[0]
                out[mask] = cdf(zj + (y[mask] - q[rows, col]) / u[rows])
    return out


def quantiles_inverse(levels, q, p, u, ppf):
    """Quantiles at ``levels`` of the piecewise-linear CDF of :func:`cdf_quantiles`.

    Parameters
    ----------
    levels : ndarray, shape (m,)
        Probabilities in (0, 1).
    q, p, u, ppf
        As in :func:`cdf_quantiles`.

    Returns
    -------
    ndarray, shape (n, m)
    """
    n, L = q.shape
    z = ppf(p)
    out = np.empty((n, levels.size), dtype=float)
    for c, a in enumerate(levels):
        if a < p[0]:
            out[:, c] = q[:, 0] + u * (ppf(a) - z[0])
        elif a > p[-1]:
            out[:, c] = q[:, -1] + u * (ppf(a) - z[-1])
        else:
            j = min(int(np.searchsorted(p, a, side="right")), L - 1)  # p[j-1] <= a < p[j]
            t = (a - p[j - 1]) / (p[j] - p[j - 1])
            out[:, c] = q[:, j - 1] + t * (q[:, j] - q[:, j - 1])
    return out


def ecdf_bounds(y, samples):
    """``(F(y-), F(y))`` of each row's empirical CDF: shares of members ``< y`` and ``<= y``.

    Parameters
    ----------
    y : ndarray, shape (n,) or (n, k)
    samples : ndarray, shape (n, S)

    Returns
    -------
    tuple of ndarray, shaped like ``y``
    """
    y = np.asarray(y, dtype=float)
    yy = y if y.ndim == 2 else y[:, None]
    below = np.zeros(yy.shape, dtype=np.int64)
    equal = np.zeros(yy.shape, dtype=np.int64)
    for j in range(samples.shape[1]):
        col = samples[:, j][:, None]
        below += col < yy
        equal += col == yy
    s = samples.shape[1]
    lo, hi = below / s, (below + equal) / s
    return (lo, hi) if y.ndim == 2 else (lo[:, 0], hi[:, 0])


def ecdf_quantiles(levels, samples):
    """Quantiles of each row's empirical CDF (the inverse CDF: smallest member with F >= level).

    Returns
    -------
    ndarray, shape (n, m)
    """
    s = np.sort(samples, axis=1)
    idx = np.clip(np.ceil(np.asarray(levels) * s.shape[1]).astype(np.int64) - 1, 0, s.shape[1] - 1)
    return s[:, idx]


def rank_bounds(y, samples):
    """``(lo, hi)`` of the randomised PIT of an ensemble: ``#{s < y}/(S+1)``,
    ``(#{s <= y}+1)/(S+1)``.

    The left and right limits at y of the empirical CDF of the S members and y itself: the
    randomised rank of y among the S + 1 values, scaled to (0, 1).

    Examples
    --------
    >>> lo, hi = rank_bounds(np.array([1.0, 5.0]), np.array([[0.0, 1.0, 1.0, 2.0]] * 2))
    >>> lo.tolist(), hi.tolist()
    ([0.2, 0.8], [0.8, 1.0])
    """
    s = samples.shape[1]
    lo, hi = ecdf_bounds(y, samples)
    return lo * s / (s + 1.0), (hi * s + 1.0) / (s + 1.0)


def segment_bounds(y, q, p):
    """``(lo, hi)``: the given levels bracketing each ``y`` among its row of quantiles.

    With ``b`` quantiles of the row below ``y`` and ``c`` at most ``y`` (levels ``p``
    increasing, ``p_0 = 0``, ``p_{K+1} = 1``): ``(p_b, p_{b+1})`` when no quantile equals
    ``y`` (``c == b``), else ``(p_{b+1}, p_c)``. The PIT of a forecast known only by these
    quantiles lies in that range; drawn uniformly in it, it is uniform for a calibrated
    forecast whatever the distribution between the quantiles.

    Examples
    --------
    >>> q = np.array([[0.0, 1.0, 3.0], [0.0, 1.0, 3.0], [0.0, 1.0, 3.0]])
    >>> lo, hi = segment_bounds(np.array([2.0, 1.0, 5.0]), q, np.array([0.1, 0.5, 0.9]))
    >>> lo.tolist(), hi.tolist()
    ([0.5, 0.5, 0.9], [0.9, 0.5, 1.0])
    """
    tau = np.concatenate(([0.0], np.asarray(p, dtype=float), [1.0]))
    below = (q < y[:, None]).sum(axis=1)
    at_most = (q <= y[:, None]).sum(axis=1)
    tied = at_most > below
    lo = np.where(tied, tau[np.minimum(below + 1, tau.size - 1)], tau[below])
    hi = np.where(tied, tau[at_most], tau[np.minimum(below + 1, tau.size - 1)])
    return lo, hi


def randomised(lo, hi, v):
    """``lo + v (hi - lo)``: U(F(y-), F(y)) from uniforms ``v`` (exactly ``lo`` where no atom)."""
    return np.where(hi > lo, lo + v * (hi - lo), lo)


def uniformity(u_sorted):
    """KS and Cramér–von Mises tests of sorted PIT values against U(0, 1).

    Returns
    -------
    dict
        ``ks_statistic``, ``ks_p_value`` (:func:`scipy.stats.kstest`'s exact two-sided
        p-value, ``kstwo.sf(D, n)``), ``cvm_statistic``, ``cvm_p_value``
        (:func:`scipy.stats.cramervonmises`, given the sorted values and the identity CDF).

    Examples
    --------
    >>> r = uniformity(np.array([0.1, 0.4, 0.8]))
    >>> round(r["ks_statistic"], 6), round(r["cvm_statistic"], 6)
    (0.266667, 0.043333)
    """
    n = u_sorted.size
    i = np.arange(1, n + 1, dtype=float)
    d = max(float(np.max(i / n - u_sorted)), float(np.max(u_sorted - (i - 1.0) / n)))
    cvm = stats.cramervonmises(u_sorted, _identity)
    return {
        "ks_statistic": d,
        "ks_p_value": float(np.clip(stats.kstwo.sf(d, n), 0.0, 1.0)),
        "cvm_statistic": float(cvm.statistic),
        "cvm_p_value": float(cvm.pvalue),
    }


def _identity(x):
    return x


def cvm_sf_asymptotic(w2, terms=6):
    """Survival function of the limiting Cramér-von Mises distribution at ``w2`` (the
    statistic ``n * int (F_n - F)^2 dF``), from the series of Anderson & Darling (1952), as
    scipy's ``cramervonmises`` uses it before its finite-n correction (Csörgő & Faraway 1996).

    Examples
    --------
    >>> round(cvm_sf_asymptotic(0.461), 3)  # the 5 % critical value of the limit
    0.05
    """
    x = float(w2)
    if x <= 0.0:
        return 1.0
    k = np.arange(terms, dtype=float)
    y = (4.0 * k + 1.0) ** 2 / (16.0 * x)
    coef = special.gamma(k + 0.5) / (special.gamma(0.5) * special.gamma(k + 1.0))
    cdf = np.sum(coef * np.sqrt(4.0 * k + 1.0) * np.exp(-y) * special.kv(0.25, y))
    cdf /= np.pi * np.sqrt(x)
    return float(np.clip(1.0 - cdf, 0.0, 1.0))


def histogram_counts(u, n_bins):
    """Counts of PIT values in ``n_bins`` equal bins of [0, 1] (the last bin closed)."""
    idx = np.minimum((np.asarray(u) * n_bins).astype(np.int64), n_bins - 1)
    return np.bincount(idx, minlength=n_bins)


def binomial_band(n, p, ci):
    """Central ``ci`` interval ``[lower, upper]`` of Binomial(n, p) counts (scipy's ppf)."""
    lo = stats.binom.ppf((1.0 - ci) / 2.0, n, p)
    hi = stats.binom.ppf((1.0 + ci) / 2.0, n, p)
    return np.asarray(lo, dtype=float), np.asarray(hi, dtype=float)


def ecdf_counts(u_sorted, grid):
    """``n F_n(z)``: the number of PIT values ``<= z`` for each grid value."""
    return np.searchsorted(u_sorted, grid, side="right")


#: Sample size from which the smallest tail probability of a simulated ECDF is sought among
#: the ``SHORTLIST`` most extreme standardised deviations of each side only (the binomial
#: tails are then ordered as the deviations, up to a skewness below 0.1).
SHORTLIST_N, SHORTLIST = 10_000, 8


@functools.lru_cache(maxsize=64)
def band_levels(n, grid, n_band, seed):
    """Sorted smallest pointwise levels of ``n_band`` simulated uniform ECDFs (read-only).

    ``n_band`` uniform samples of size ``n`` are simulated through their counts on the grid
    (multinomial increments, one draw per trial); for each, the smallest pointwise level
    ``1 - 2 min(min_k P(X_k <= c_k), min_k P(X_k >= c_k))`` (``X_k ~ Binomial(n, z_k)``) whose
    central binomial intervals hold the whole simulated ECDF is found. Cached per
    ``(n, grid, n_band, seed)`` (``grid`` a tuple). Below ``n = SHORTLIST_N`` the binomial
    tails of each grid value are evaluated once per distinct simulated count (exact); from
    it, at the ``SHORTLIST`` largest standardised deviations of each side of each trial only.

    Examples
    --------
    >>> lv = band_levels(100, (0.25, 0.5, 0.75), 200, 0)
    >>> lv.shape, bool(np.all(np.diff(lv) >= 0))
    ((200,), True)
    """
    from scipy import special

    z = np.asarray(grid, dtype=float)
    rng = np.random.default_rng(seed)
    probs = np.diff(np.concatenate(([0.0], z, [1.0])))
    counts = np.cumsum(rng.multinomial(n, probs, size=n_band)[:, :-1], axis=1)
    zz = np.broadcast_to(z, counts.shape)
    if n >= SHORTLIST_N and z.size > 2 * SHORTLIST:
        dev = (counts - n * z) / np.sqrt(n * z * (1.0 - z))
        rows = np.arange(n_band)[:, None]
        low = np.argpartition(dev, SHORTLIST, axis=1)[:, :SHORTLIST]
        high = np.argpartition(-dev, SHORTLIST, axis=1)[:, :SHORTLIST]
        lower = special.bdtr(counts[rows, low], n, zz[rows, low]).min(axis=1)
        upper = special.bdtrc(counts[rows, high] - 1, n, zz[rows, high]).min(axis=1)
    else:  # each grid value's tails once per distinct count (the same numbers, fewer calls)
        lower = np.empty(counts.shape)
        upper = np.empty(counts.shape)
        for k in range(z.size):
            uniq, inv = np.unique(counts[:, k], return_inverse=True)
            lower[:, k] = special.bdtr(uniq, n, z[k])[inv]
            upper[:, k] = special.bdtrc(uniq - 1, n, z[k])[inv]
        lower, upper = lower.min(axis=1), upper.min(axis=1)
    level = np.sort(1.0 - 2.0 * np.minimum(lower, upper))
    level.flags.writeable = False
    return level


@functools.lru_cache(maxsize=64)
def band_gamma(n, grid, ci, n_band, seed):
    """Pointwise level of the simultaneous ``ci`` band of a uniform ECDF (Säilynoja et al. 2022).

    The ``ci`` quantile of the smallest pointwise levels of :func:`band_levels` (the simulated
    uniform ECDFs). Cached per ``(n, grid, ci, n_band, seed)`` (``grid`` a tuple).

    Examples
    --------
    >>> g = band_gamma(100, (0.25, 0.5, 0.75), 0.95, 200, 0)
    >>> 0.95 < g < 1.0
    True
    """
    return float(np.quantile(band_levels(n, grid, n_band, seed), ci))


def ecdf_level(counts, n, grid):
    """The smallest pointwise level whose central binomial intervals hold the ECDF counts.

    ``1 - 2 min(min_k P(X_k <= c_k), min_k P(X_k >= c_k))``, ``X_k ~ Binomial(n, z_k)``: the
    statistic of :func:`band_levels`, for one ECDF (every grid value, exact).

    Examples
    --------
    >>> from scipy import stats
    >>> lv = ecdf_level(np.array([60]), 100, np.array([0.5]))  # P(X >= 60) = 0.0284
    >>> bool(abs(lv - (1 - 2 * stats.binom.sf(59, 100, 0.5))) < 1e-12), round(lv, 4)
    (True, 0.9431)
    """
    from scipy import special

    z = np.asarray(grid, dtype=float)
    c = np.asarray(counts)
    low = float(np.min(special.bdtr(c, n, z)))
    high = float(np.min(special.bdtrc(c - 1, n, z)))
    return 1.0 - 2.0 * min(low, high)


def band_p_value(counts, n, grid, n_band, seed):
    """Monte Carlo p-value of the simultaneous band test (Hope (1968) form).

    ``(1 + #{simulated levels >= the data's level}) / (1 + n_band)``, with the simulated
    uniform ECDFs of :func:`band_levels` (those that set the band's level) and the data's level
    :func:`ecdf_level`.

    Examples
    --------
    >>> p = band_p_value(np.array([25, 50, 75]), 100, (0.25, 0.5, 0.75), 200, 0)
    >>> 0.5 < p <= 1.0
    True
    """
    levels = band_levels(int(n), tuple(float(g) for g in grid), int(n_band), int(seed))
    stat = ecdf_level(counts, int(n), grid)
    # a relative tolerance so that a tie with a simulated level (the same binomial tail,
    # computed in another order) counts as a tie
    k = levels.size - int(np.searchsorted(levels, stat * (1.0 - 1e-12) - 1e-15, side="left"))
    return (1.0 + k) / (1.0 + levels.size)


def simultaneous_band(n, grid, ci, n_band, seed):
    """``(lower, upper)`` counts of the simultaneous ``ci`` band of ``n F_n`` on ``grid``."""
    gamma = band_gamma(int(n), tuple(float(g) for g in grid), float(ci), int(n_band), int(seed))
    lo, hi = stats.binom.interval(gamma, n, np.asarray(grid, dtype=float))
    return np.asarray(lo, dtype=float), np.asarray(hi, dtype=float), gamma
