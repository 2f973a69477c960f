r"""Kernels of the coverage across groups: coverage gap, worst-slab coverage, HSIC.

Imported as ``group_coverage_kernels``; nothing of uqviz outside ``_array``.

* :func:`group_sums` and :func:`coverage_gap`: the coverage of each group and the coverage gap
  CovGap (Ding et al. 2023), unweighted and weighted by ``n_g / n``.
* :func:`slab_orders` and :func:`worst_slab`: worst-slab coverage (Cauchois et al. 2021),
  the smallest mean coverage over runs of at least ``m`` consecutive points in the order of
  each direction's projection, exactly, in O(n) per direction and iteration (below).
* :func:`gaussian_gram` and :func:`hsic_traces`: the HSIC between interval width and
  coverage (Feldman et al. 2021), in the form of MAPIE's ``hsic`` (its square).

The minimum mean of a window of length >= m over a 0/1 sequence with prefix sums P is the
fractional program ``min S/L`` over windows (i, j] with ``S = P_j - P_i``, ``L = j - i >= m``.
Dinkelbach's iteration solves it exactly: from a candidate ``t = S'/L'`` (the mean of some
window), the window minimising ``S L' - S' L = Q_j - Q_i`` with ``Q_k = P_k L' - S' k`` (the
best ``i <= j - m`` for each ``j`` is the running maximum of ``Q``) is found in one O(n) pass;
if its value is negative, its mean is the new, strictly smaller candidate, else ``t`` is the
minimum. All in int64 (``|Q| <= 2 n^2``), so the result is the exact ratio of two integers,
bit-identical to the O(n^2) enumeration of MAPIE/covmetrics. Over the directions the best
candidate so far is carried, so a direction that holds no poorer window costs one pass.

Examples
--------
>>> import numpy as np
>>> c = np.array([1, 1, 0, 0, 1, 0, 1, 1], dtype=np.uint8)
>>> float(worst_slab(c[None], np.arange(8)[None], 3)[0])  # the window [0, 0, 1, 0]: 1/4
0.25
>>> sums, counts = group_sums(c[None].astype(float), np.array([0, 0, 0, 0, 1, 1, 1, 1]), 2)
>>> sums.tolist(), counts.tolist()
([[2.0, 3.0]], [4, 4])
>>> [round(float(v), 3) for v in coverage_gap(sums[0] / counts, counts, 0.9)]
[0.275, 0.275]
"""

from __future__ import annotations

import os

import numpy as np

from uqviz._array.jit import USE_NUMBA, njit, prange

__all__ = [
    "group_sums",
    "coverage_gap",
    "slab_orders",
    "worst_slab",
    "worst_slab_numpy",
    "gaussian_gram",
    "hsic_traces",
    "HAVE_FAST_SLAB",
]

#: worst_slab runs the numba kernel (else its numpy form, the same numbers)
HAVE_FAST_SLAB = USE_NUMBA


def group_sums(rows, labels, n_groups):
    """Sums of each row of ``rows`` (k, n) per group label (0..n_groups-1), and the counts.

    Returns ``(sums (k, n_groups), counts (n_groups,))``.
    """
    rows = np.atleast_2d(np.asarray(rows, dtype=float))
    labels = np.asarray(labels, dtype=np.int64)
    counts = np.bincount(labels, minlength=n_groups)
    order = np.argsort(labels, kind="stable")
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    sums = np.add.reduceat(rows[:, order], starts, axis=1)
    sums[:, counts == 0] = 0.0
    return sums, counts


def coverage_gap(coverage, counts, level):
    """CovGap of group coverages ``coverage`` (..., G): the mean over groups of
    ``|coverage_g - level|`` and its form weighted by ``n_g / n``.

    Returns ``(unweighted, weighted)``, each of shape ``coverage.shape[:-1]``.
    """
    gap = np.abs(np.asarray(coverage, dtype=float) - level)
    counts = np.asarray(counts, dtype=float)
    return gap.mean(axis=-1), gap @ (counts / counts.sum())


@njit(nogil=True, cache=True)
def _prefix(c, order, p):
    p[0] = 0
    for t in range(order.size):
        p[t + 1] = p[t] + c[order[t]]


@njit(nogil=True, cache=True)
def _prefix_beats(c, order, bnd, p, m, sb, lb):
    """The prefix sums of ``c`` in ``order`` into ``p``, and whether a window of at least ``m``
    points, cut at tie boundaries ``bnd``, has a mean below ``sb / lb`` (the first pass of
    :func:`_dinkelbach`, fused)."""
    p[0] = 0
    for t in range(order.size):
        p[t + 1] = p[t] + c[order[t]]
    return _dinkelbach(p, bnd, m, sb, lb, True)[0] >= 0


@njit(nogil=True, cache=True)
def _dinkelbach(p, bnd, m, sb, lb, first_only=False):
    """Smallest window mean of the prefix sums ``p`` below ``sb / lb`` (or ``sb, lb``), over
    windows ``(i, j]`` of at least ``m`` points whose ends are tie boundaries (``bnd[i]`` and
    ``bnd[j]`` nonzero). ``first_only``: one pass, ``(1, 0)`` when it found a poorer window
    else ``(-1, 0)``."""
    n = p.size - 1
    while True:
        best = 0
        bi = -1
        bj = -1
        runmax = np.int64(-(2**62))
        ri = -1
        nxt = 0
        for j in range(m, n + 1):
            while nxt <= j - m:
                if bnd[nxt]:
                    qi = p[nxt] * lb - sb * nxt
                    if qi > runmax:
                        runmax = qi
                        ri = nxt
                nxt += 1
            if not bnd[j] or ri < 0:
                continue
            g = p[j] * lb - sb * j - runmax
            if g < best:
                best = g
                bi = ri
                bj = j
        if first_only:
            return (np.int64(1) if bj >= 0 else np.int64(-1)), np.int64(0)
        if bj < 0:
            return sb, lb
        sb = p[bj] - p[bi]
        lb = bj - bi


@njit(nogil=True, parallel=True, cache=True)
def _worst_slab_numba(cover, orders, bounds, m):
    k, n = cover.shape
    out = np.empty(k)
    for s in prange(k):
        p = np.empty(n + 1, dtype=np.int64)
        sb = np.int64(1)
        lb = np.int64(1)
        for d in range(orders.shape[0]):
            if _prefix_beats(cover[s], orders[d], bounds[d], p, m, sb, lb):
                sb, lb = _dinkelbach(p, bounds[d], m, sb, lb)
        out[s] = sb / lb
    return out


@njit(nogil=True, parallel=True, cache=True)
def _worst_slab_directions_numba(cover, orders, bounds, m):
    n_dir, n = orders.shape
    sbs = np.empty(n_dir, dtype=np.int64)
    lbs = np.empty(n_dir, dtype=np.int64)
    for d in prange(n_dir):
        p = np.empty(n + 1, dtype=np.int64)
        p[0] = 0
        for t in range(n):
            p[t + 1] = p[t] + cover[orders[d, t]]
        sbs[d], lbs[d] = _dinkelbach(p, bounds[d], m, np.int64(1), np.int64(1))
    return sbs, lbs


def _dinkelbach_numpy(p, bnd, m, sb, lb):
    """:func:`_dinkelbach` in numpy: the window ends restricted to the tie boundaries."""
    pos = np.flatnonzero(bnd)
    pb = p[pos]
    while True:
        q = pb * lb - sb * pos
        # for each end j, the starts i with pos_i <= pos_j - m: a prefix of the boundaries
        last = np.searchsorted(pos, pos - m, side="right") - 1
        ok = last >= 0
        if not ok.any():
            return sb, lb
        runmax = np.maximum.accumulate(q)
        arg = _running_argmax(q)
        g = np.where(ok, q - runmax[np.maximum(last, 0)], 0)
        j = int(np.argmin(g))
        if g[j] >= 0:
            return sb, lb
        i = int(arg[last[j]])
        sb, lb = int(pb[j] - pb[i]), int(pos[j] - pos[i])


def _running_argmax(q):
    """Index of the first running maximum of ``q`` at each position."""
    new = np.concatenate([[True], q[1:] > np.maximum.accumulate(q)[:-1]])
    return np.maximum.accumulate(np.where(new, np.arange(q.size), 0))


def _all_bounds(orders):
    return np.ones((orders.shape[0], orders.shape[1] + 1), dtype=np.uint8)


def worst_slab_numpy(cover, orders, m, bounds=None):
    """:func:`worst_slab` in numpy (the same numbers)."""
    cover = np.atleast_2d(np.asarray(cover, dtype=np.int64))
    orders = np.atleast_2d(np.asarray(orders, dtype=np.int64))
    bounds = _all_bounds(orders) if bounds is None else np.atleast_2d(bounds)
    out = np.empty(cover.shape[0])
    for s in range(cover.shape[0]):
        sb, lb = 1, 1
        for order, bnd in zip(orders, bounds):
            p = np.concatenate([[0], np.cumsum(cover[s][order])])
            sb, lb = _dinkelbach_numpy(p, bnd.astype(bool), m, sb, lb)
        out[s] = sb / lb
    return out


def worst_slab(cover, orders, m, *, bounds=None, engine=None):
    """Worst-slab coverage of each row of ``cover`` (k, n) of 0/1 values.

    ``orders`` (n_directions, n): the points sorted by their projection on each direction;
    ``m``: the fewest points of a slab (``ceil(delta n)``); ``bounds`` (n_directions, n + 1),
    from :func:`slab_orders`: nonzero where a slab may begin or end (between two distinct
    projections, and at both ends), so that tied points stay together as in a slab
    ``{a <= v.x <= b}`` (None: every position, MAPIE's and covmetrics' windows). The minimum
    over directions and over such runs of at least ``m`` points of the mean coverage, at
    most 1 (the start of MAPIE's and covmetrics' search). ``engine``: None (numba where it
    runs), ``"numba"`` or ``"numpy"``.

    Examples
    --------
    >>> c = np.array([1, 0, 0, 1, 1, 1], dtype=np.uint8)
    >>> order = np.arange(6)[None]
    >>> float(worst_slab(c[None], order, 2)[0])             # the run [0, 0]
    0.0
    >>> tied = np.array([[1, 1, 1, 0, 1, 1, 1]], dtype=np.uint8)  # points 2 and 3 tied
    >>> round(float(worst_slab(c[None], order, 2, bounds=tied)[0]), 4)  # [0, 0, 1]
    0.3333
    """
    cover = np.ascontiguousarray(np.atleast_2d(cover), dtype=np.uint8)
    orders = np.ascontiguousarray(np.atleast_2d(orders), dtype=np.int64)
    n = cover.shape[1]
    if not 1 <= m <= n:
        raise ValueError(f"a slab of at least m = {m} points among n = {n}")
    bounds = (
        _all_bounds(orders)
        if bounds is None
        else np.ascontiguousarray(np.atleast_2d(bounds), dtype=np.uint8)
    )
    if bounds.shape != (orders.shape[0], n + 1):
        raise ValueError(f"bounds: shape {bounds.shape}, expected {(orders.shape[0], n + 1)}")
    use = HAVE_FAST_SLAB if engine is None else engine == "numba"
    if not use:
        return worst_slab_numpy(cover, orders, m, bounds)
    if cover.shape[0] == 1:  # one set: the directions in parallel
        sbs, lbs = _worst_slab_directions_numba(cover[0], orders, bounds, np.int64(m))
        return np.array([min(1.0, float(np.min(sbs / lbs)))])
    return _worst_slab_numba(cover, orders, bounds, np.int64(m))


def _sorted_bounds(values):
    """Stable order of ``values`` and the tie boundaries of the sorted values (n + 1)."""
    order = np.argsort(values, kind="stable")
    v = values[order]
    bnd = np.ones(v.size + 1, dtype=np.uint8)
    bnd[1:-1] = v[1:] != v[:-1]
    return order, bnd


def slab_orders(xs, directions):
    """The points sorted by their projection on each direction and where slabs may cut.

    Returns ``(orders, bounds)``: ``orders`` (n_directions, n) indices of a stable sort (the
    same on every numpy version), ``bounds`` (n_directions, n + 1) uint8, 1 at the positions
    between two distinct projections and at both ends (:func:`worst_slab`: tied points stay
    in one slab). The directions on the local threads.
    """
    from concurrent.futures import ThreadPoolExecutor

    xs = np.asarray(xs, dtype=float)
    v = np.atleast_2d(np.asarray(directions, dtype=float))
    proj = np.ascontiguousarray(v @ xs.T)
    workers = max(1, min(len(proj), os.cpu_count() or 1))
    if workers == 1:
        parts = [_sorted_bounds(row) for row in proj]
    else:
        with ThreadPoolExecutor(workers) as pool:
            parts = list(pool.map(_sorted_bounds, proj))
    orders = np.array([o for o, _ in parts], dtype=np.int64).reshape(proj.shape)
    bounds = np.array([b for _, b in parts], dtype=np.uint8).reshape(proj.shape[0], -1)
    return orders, bounds


def gaussian_gram(w, s):
    """``exp(-(w_i - w_j)^2 / s)`` (MAPIE's kernel: ``s`` divides the squared distance)."""
    w = np.asarray(w, dtype=float)
    return np.exp(-(np.subtract.outer(w, w) ** 2) / s)


def hsic_traces(gram, rows, s_c):
    r"""``trace(L H K H) / (n - 1)^2`` for each row of 0/1 coverage ``rows`` (k, n).

    ``gram`` is K (the widths' Gaussian kernel), L the coverage's kernel of size ``s_c``.
    A 0/1 coverage makes L = e 11' + (1 - e)(cc' + (1 - c)(1 - c)') with e = exp(-1/s_c),
    so that, with d = c - mean(c) and H 1 = 0, the trace is 2 (1 - e) d' K d: one
    quadratic form per row (a matrix product for all rows), no n x n product per row.
    MAPIE's ``hsic`` is the square root.
    """
    rows = np.atleast_2d(np.asarray(rows, dtype=float))
    n = rows.shape[1]
    d = rows - rows.mean(axis=1, keepdims=True)
    quad = np.einsum("ij,ij->i", d @ gram, d)
    return np.maximum(2.0 * (1.0 - np.exp(-1.0 / s_c)) * quad, 0.0) / (n - 1) ** 2
