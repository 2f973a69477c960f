"""Kernels of the adversarial groups: random groups of points and their calibration curves.

A calibration curve over ``L`` expected proportions counts, for each level ``j``, the points
inside the central interval (or below the quantile) of that level. The intervals of the
levels are nested, so each point has a *threshold*: the first level whose interval holds it
(``L`` when none does), and the count at level ``j`` of a group is the number of its points
with threshold ``<= j``. A group's curve is then the cumulative histogram of its points'
thresholds, ``O(n + L)`` per group, for many groups at once (numba, or numpy through one
``bincount``).

Examples
--------
>>> t = level_thresholds(np.array([0.0, 1.0, -3.0]), np.array([0.0, -1.0, -2.0]),
...                      np.array([0.0, 1.0, 2.0]))
>>> t.tolist()
[0, 1, 3]
>>> mace, rmsce = group_curve_errors(t, np.array([[0, 1], [1, 2]]), 3)
>>> [round(float(x), 6) for x in mace]
[0.333333, 0.166667]
"""

from __future__ import annotations

import numpy as np

from uqviz._array.jit import HAVE_NUMBA, njit, prange

__all__ = [
    "level_thresholds",
    "draw_groups",
    "group_curve_errors",
    "drawn_curve_errors",
    "group_counts_below",
    "BINCOUNT_ELEMENTS",
]

#: thresholds counted per numpy ``bincount`` call (memory of the numpy path)
BINCOUNT_ELEMENTS = 1 << 23


def level_thresholds(z, lower, upper=None):
    """First level whose interval holds each value (``L`` when none does).

    Parameters
    ----------
    z : ndarray, shape (M,)
        Normalised residuals.
    lower, upper : ndarray, shape (L,)
        Interval bounds per level, nested (``lower`` non-increasing, ``upper``
        non-decreasing): ``lower_j <= z <= upper_j`` holds z at level j. With ``upper=None``,
        ``lower`` holds the quantiles (non-decreasing) and level j holds z when
        ``z <= lower_j``.

    Returns
    -------
    ndarray of int32, shape (M,)
    """
    z = np.asarray(z, dtype=float)
    if upper is None:
        return np.searchsorted(np.asarray(lower, dtype=float), z, side="left").astype(np.int32)
    first_hi = np.searchsorted(np.asarray(upper, dtype=float), z, side="left")
    first_lo = np.searchsorted(-np.asarray(lower, dtype=float), -z, side="left")
    return np.maximum(first_hi, first_lo).astype(np.int32)


def draw_groups(seed, m, size, n_groups, replace=False):
    """``n_groups`` random groups of ``size`` row numbers among ``m``, shape (n_groups, size).

    With numba, group g is drawn by a partial Fisher-Yates shuffle (with replacement: ``size``
    uniform draws; an index below r is ``floor(w r / 2^32)`` of the upper 32 bits w of a
    64-bit output, exact for ``m < 2^32``, biased by at most ``m / 2^32``) from its own
    splitmix64 stream seeded by
    ``SeedSequence(seed).generate_state(n_groups, uint64)[g]``, so the groups do not depend
    on the threads. Without numba, ``numpy.random.default_rng(seed)`` draws them in turn
    (``choice(m, size, replace=False)``, or one ``integers`` call): the same distribution,
    other numbers (docs/conventions.md, "Without numba").

    Parameters
    ----------
    seed : int
        A 63-bit seed (``uqviz.engine.seeds.kernel_seed``).
    m, size, n_groups : int
    replace : bool, default False

    Returns
    -------
    ndarray of int64, shape (n_groups, size)
    """
    if HAVE_NUMBA:
        seeds = np.random.SeedSequence(int(seed)).generate_state(n_groups, np.uint64)
        return _draw_groups_numba(seeds, int(m), int(size), bool(replace))
    rng = np.random.default_rng(int(seed))
    if replace:
        return rng.integers(0, m, size=(n_groups, size))
    out = np.empty((n_groups, size), dtype=np.int64)
    for g in range(n_groups):
        out[g] = rng.choice(m, size, replace=False)
    return out


if HAVE_NUMBA:

    @njit(nogil=True, cache=True)
    def _splitmix(x):  # pragma: no cover - compiled
        x = x + np.uint64(0x9E3779B97F4A7C15)
        z = x
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return x, z ^ (z >> np.uint64(31))

    @njit(nogil=True, cache=True)
    def _draw_one(x, perm, m, size, replace, out):  # pragma: no cover - compiled
        """One group into ``out`` (perm: scratch of m row numbers, left permuted)."""
        if replace:
            for j in range(size):
                x, z = _splitmix(x)
                out[j] = np.int64(((z >> np.uint64(32)) * np.uint64(m)) >> np.uint64(32))
            return
        for j in range(m):
            perm[j] = j
        # partial Fisher-Yates of the smaller side: the chosen, or the points left out
        r = size if 2 * size <= m else m - size
        for j in range(r):
            x, z = _splitmix(x)
            k = j + np.int64(((z >> np.uint64(32)) * np.uint64(m - j)) >> np.uint64(32))
            t = perm[j]
            perm[j] = perm[k]
            perm[k] = t
        first = 0 if 2 * size <= m else r
        for j in range(size):
            out[j] = perm[first + j]

    @njit(parallel=True, nogil=True, cache=True)
    def _draw_groups_numba(seeds, m, size, replace):  # pragma: no cover - compiled
        n_groups = seeds.size
        out = np.empty((n_groups, size), dtype=np.int64)
        for g in prange(n_groups):
            perm = np.empty(m, dtype=np.int64)
            _draw_one(seeds[g], perm, m, size, replace, out[g])
        return out

    @njit(parallel=True, nogil=True, cache=True)
    def _draw_score_numba(seeds, t, m, size, replace, n_levels):  # pragma: no cover
        n_groups = seeds.size
        mace = np.empty(n_groups)
        rmsce = np.empty(n_groups)
        for g in prange(n_groups):
            perm = np.empty(m, dtype=np.int64)
            idx = np.empty(size, dtype=np.int64)
            _draw_one(seeds[g], perm, m, size, replace, idx)
            hist = np.zeros(n_levels + 1, dtype=np.int64)
            for i in range(size):
                hist[t[idx[i]]] += 1
            mace[g], rmsce[g] = _errors(hist, size, n_levels)
        return mace, rmsce

    @njit(nogil=True, cache=True)
    def _errors(hist, n, n_levels):  # pragma: no cover - compiled
        cum = 0
        s1 = 0.0
        s2 = 0.0
        for j in range(n_levels):
            cum += hist[j]
            d = cum / n - j / (n_levels - 1)
            s1 += abs(d)
            s2 += d * d
        return s1 / n_levels, np.sqrt(s2 / n_levels)

    @njit(parallel=True, nogil=True, cache=True)
    def _curve_errors_numba(t, idx, n_levels):  # pragma: no cover - compiled
        n_groups, n = idx.shape
        mace = np.empty(n_groups)
        rmsce = np.empty(n_groups)
        for g in prange(n_groups):
            hist = np.zeros(n_levels + 1, dtype=np.int64)
            for i in range(n):
                hist[t[idx[g, i]]] += 1
            mace[g], rmsce[g] = _errors(hist, n, n_levels)
        return mace, rmsce


def _curve_errors_numpy(t, idx, n_levels):
    n_groups, n = idx.shape
    counts = np.empty((n_groups, n_levels + 1), dtype=np.int64)
    step = max(1, BINCOUNT_ELEMENTS // max(n, 1))
    for g0 in range(0, n_groups, step):
        g1 = min(n_groups, g0 + step)
        flat = (t[idx[g0:g1]] + (np.arange(g1 - g0)[:, None] * (n_levels + 1))).ravel()
        counts[g0:g1] = np.bincount(flat, minlength=(g1 - g0) * (n_levels + 1)).reshape(
            g1 - g0, n_levels + 1
        )
    observed = np.cumsum(counts[:, :n_levels], axis=1) / n
    d = observed - np.linspace(0.0, 1.0, n_levels)
    return np.abs(d).mean(axis=1), np.sqrt((d * d).mean(axis=1))


def group_curve_errors(t, idx, n_levels, *, engine=None):
    """MACE and RMSCE of the calibration curve of each group of points.

    Parameters
    ----------
    t : ndarray of int, shape (M,)
        Threshold level of each point (:func:`level_thresholds`).
    idx : ndarray of int, shape (G, n)
        Row numbers of the points of each group.
    n_levels : int
        Number of expected proportions ``linspace(0, 1, n_levels)``, >= 2.
    engine : {"numba", "numpy"}, optional
        numba where installed by default; the two agree to rounding.

    Returns
    -------
    mace, rmsce : ndarray, shape (G,)
    """
    t = np.ascontiguousarray(t, dtype=np.int32)
    idx = np.asarray(idx)
    # row numbers as given (int16/int32 compile their own kernel): no copy of many groups
    idx = np.ascontiguousarray(
        idx, dtype=idx.dtype if idx.dtype in (np.int16, np.int32, np.int64) else np.int64
    )
    use_numba = HAVE_NUMBA if engine is None else engine == "numba"
    if use_numba and idx.shape[0] > 0:
        return _curve_errors_numba(t, idx, int(n_levels))
    return _curve_errors_numpy(t, idx, int(n_levels))


def drawn_curve_errors(seed, t, size, n_groups, n_levels, replace=False):
    """MACE and RMSCE of ``n_groups`` random groups of ``size`` points, drawn as
    :func:`draw_groups` draws them (the same groups), without storing them.

    Parameters
    ----------
    seed : int
    t : ndarray of int, shape (M,)
        Threshold level of each point (:func:`level_thresholds`).
    size, n_groups, n_levels : int
    replace : bool, default False

    Returns
    -------
    mace, rmsce : ndarray, shape (n_groups,)
    """
    t = np.ascontiguousarray(t, dtype=np.int32)
    m = t.size
    if HAVE_NUMBA:
        seeds = np.random.SeedSequence(int(seed)).generate_state(n_groups, np.uint64)
        return _draw_score_numba(seeds, t, m, int(size), bool(replace), int(n_levels))
    step = max(1, BINCOUNT_ELEMENTS // max(int(size), 1))
    idx = draw_groups(seed, m, size, n_groups, replace)
    parts = [_curve_errors_numpy(t, idx[g : g + step], n_levels) for g in range(0, n_groups, step)]
    return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])


def group_counts_below(t, idx, level):
    """Points of each group whose threshold is at most ``level`` (inside its interval).

    Parameters
    ----------
    t : ndarray of int, shape (M,)
    idx : ndarray of int, shape (G, n)
    level : int

    Returns
    -------
    ndarray of int64, shape (G,)
    """
    inside = np.asarray(t) <= level
    return inside[idx].sum(axis=1, dtype=np.int64)
