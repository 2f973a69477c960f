"""Delete-group jackknife of CC by rank updates: O(g^2 log M) per group instead of O(M).

Deleting a group G of g points from the sample lowers the mid-rank of every kept point j
by ``A_j = sum_{k in G} h(x_k, x_j)``, with ``h(a, b) = [a < b] + [a = b]/2`` (ties
averaged). Spearman's correlation of the kept points (Pernot (2024c)'s CC of |E| and uE;
the delete-group jackknife of Efron & Tibshirani (1993), sect. 11.5) needs
only three sums over them, ``sum r'x r'y``, ``sum r'x^2`` and ``sum r'y^2``
(``r' = r - A``), since the mean mid-rank of n' points is always ``(n' + 1)/2``. Expanded,
each sum is the full sample's sum (computed once), corrections through the deleted points
only, and sums over all points of products such as ``h(x_k, x_j) h(y_l, y_j)`` for the
pairs (k, l) of G: counts of the points above a threshold in |E| and one in uE, the
two-dimensional dominance counts, answered for every group together by one sweep over
|E| with a Fenwick tree on uE positions. All sums are exact integers (twice a mid-rank
and twice ``h`` are integers), so a value equals the correlation recomputed on the kept
points to rounding.

With about M/1000 points per group (the engine's 1000 groups), the cost is
O(M log M + M g log M) against O(M) per group, 1000 M in all, for
:func:`uqviz._array.rank.cc_jackknife`'s count pass: far less up to groups of some tens of
points (:func:`rank_update_pays`).

Examples
--------
>>> from uqviz._array.rank import cc_prepare
>>> e, u = np.array([0.1, -0.5, 1.0, 2.0, -3.0]), np.array([1.0, 2.0, 2.0, 4.0, 5.0])
>>> np.round(cc_jackknife_ranks(cc_prepare(e, u), np.arange(6)), 6)
array([0.948683, 1.      , 1.      , 0.948683, 0.948683])
"""

from __future__ import annotations

import numpy as np

from uqviz._array.jit import njit, prange

#: largest mean group size (points, weighted by size) for which the rank update is used:
#: its cost per group grows as g^2 log M, the count pass's as M (measured by
#: benchmarks/bench_cc_jackknife.py: the rank update is faster up to about 40 points a
#: group with ties in both |E| and uE, up to about 80 without)
RANK_UPDATE_MAX_GROUP = 32
#: largest M of the rank update: its sums (at most 4 M^3) must fit in an int64
RANK_UPDATE_MAX_M = 1 << 20


def rank_update_pays(m, edges):
    """True when the rank update is the cheaper jackknife for these groups.

    Examples
    --------
    >>> rank_update_pays(5000, np.linspace(0, 5000, 1001).astype(int))  # 5 points a group
    True
    >>> rank_update_pays(100_000, np.linspace(0, 100_000, 1001).astype(int))  # 100
    False
    """
    sizes = np.diff(np.asarray(edges, dtype=np.int64)).astype(float)
    return (
        bool(sizes.sum() > 0)
        and m <= RANK_UPDATE_MAX_M
        and float(sizes @ sizes) <= RANK_UPDATE_MAX_GROUP * float(sizes.sum())
    )


def positions(prepared):
    """Per point (data order): position and tie-group bounds in |E| and in uE order.

    Returns
    -------
    px, lox, hix, py, loy, hiy : ndarray of int64, shape (M,)
        ``px[i]``: position of point i in |E| order; ``[lox[i], hix[i])``: the positions of
        its tie group (``lox + hix + 1`` is twice its mid-rank); the same in uE order.
    """
    oe, e_bounds, u_bounds, epos_u = prepared
    m = oe.size
    px = np.empty(m, dtype=np.int64)
    px[oe] = np.arange(m)
    ou = oe[epos_u]  # the point at each uE position
    py = np.empty(m, dtype=np.int64)
    py[ou] = np.arange(m)
    out = [px]
    for pos, bounds, order in ((px, e_bounds, oe), (py, u_bounds, ou)):
        group = np.repeat(np.arange(bounds.size - 1), np.diff(bounds))  # group at a position
        lo, hi = np.empty(m, np.int64), np.empty(m, np.int64)
        lo[order], hi[order] = bounds[group], bounds[group + 1]
        out += [lo, hi] if pos is px else [py, lo, hi]
    return tuple(out)


@njit(nogil=True, cache=True)
def _suffix(pos, w):
    """``s[t]`` = sum of ``w`` over the points at positions >= t (t = 0 .. M)."""
    m = pos.shape[0]
    s = np.zeros(m + 1, dtype=np.int64)
    for i in range(m):
        s[pos[i]] = w[i]
    for t in range(m - 1, -1, -1):
        s[t] += s[t + 1]
    return s


@njit(nogil=True, inline="always")
def _fenwick_below(tree, b):
    """Points inserted with uE position < b."""
    n = 0
    while b > 0:
        n += tree[b]
        b -= b & -b
    return n


@njit(nogil=True, inline="always")
def _pairs_at(tree, inserted, a, k, gid, edges, px, py, loy, hiy, derive_hi):
    """Sum over the points l of k's group of N(a, loy[l]) + N(a, hiy[l]), plus, with
    ``derive_hi`` (k alone in its |E| tie group, a = its position), the same at a + 1:
    N(a + 1, b) = N(a, b) - [py[k] >= b]. N(a, hiy[l]) is N(a, loy[l]) - [px[l] >= a]
    when l is alone in its uE tie group, else a second query."""
    g = gid[k]
    total = 0
    for l in range(edges[g], edges[g + 1]):  # noqa: E741 (l: the docstring's index)
        n_lo = inserted - _fenwick_below(tree, loy[l])
        if hiy[l] - loy[l] == 1:
            n_hi = n_lo - np.int64(px[l] >= a)
        else:
            n_hi = inserted - _fenwick_below(tree, hiy[l])
        total += n_lo + n_hi
        if derive_hi:
            total += (n_lo - np.int64(py[k] >= loy[l])) + (n_hi - np.int64(py[k] >= hiy[l]))
    return total


@njit(nogil=True, cache=True)
def _dominance_sums(oe, e_bounds, px, py, loy, hiy, gid, edges):
    """Per group, the sum over the pairs (k, l) of its points of N(a, b) for a in
    {lox[k], hix[k]} and b in {loy[l], hiy[l]}, N(a, b) the count of points with |E|
    position >= a and uE position >= b (twice h(x_k, .) times twice h(y_l, .), summed
    over all points). One sweep over the |E| tie groups from the top, a Fenwick tree
    holding the uE positions of the points above the current threshold; the thresholds
    of a point alone in its tie group (in |E| or in uE) are derived from its neighbour's
    count, so untied data make one query per pair."""
    m = px.shape[0]
    tree = np.zeros(m + 1, dtype=np.int64)
    acc = np.zeros(edges.shape[0] - 1, dtype=np.int64)
    for t in range(e_bounds.shape[0] - 2, -1, -1):
        lo, hi = e_bounds[t], e_bounds[t + 1]
        single = hi - lo == 1
        if not single and hi < m:  # threshold hi: the points above this tie group
            for p in range(lo, hi):
                k = oe[p]
                if gid[k] >= 0:
                    acc[gid[k]] += _pairs_at(
                        tree, m - hi, hi, k, gid, edges, px, py, loy, hiy, False
                    )
        for p in range(lo, hi):
            j = py[oe[p]] + 1
            while j <= m:
                tree[j] += 1
                j += j & -j
        for p in range(lo, hi):
            k = oe[p]
            if gid[k] >= 0:
                acc[gid[k]] += _pairs_at(tree, m - lo, lo, k, gid, edges, px, py, loy, hiy, single)
    return acc


@njit(nogil=True, inline="always")
def _h2(pos_j, lo_k, hi_k):
    """Twice h(x_k, x_j): 2 above k's tie group, 1 within it, 0 below."""
    return np.int64(pos_j >= hi_k) + np.int64(pos_j >= lo_k)


@njit(nogil=True, parallel=True, cache=True, error_model="numpy")
def _jack_kernel(px, lox, hix, py, loy, hiy, edges, dominance, sr_x, ss_x, sr_y, ss_y, full):
    """CC of the kept points of every group from the sums above (exact int64)."""
    m = px.shape[0]
    n_groups = edges.shape[0] - 1
    out = np.empty(n_groups)
    for g in prange(n_groups):
        e0, e1 = edges[g], edges[g + 1]
        gs = e1 - e0
        s_rs, s_rr, s_ss = full[0], full[1], full[2]
        t_rb = t_sa = t_ra = t_sb = 0
        t_ab = t_aa = t_bb = 0
        for j in range(e0, e1):
            r = lox[j] + hix[j] + 1
            s = loy[j] + hiy[j] + 1
            s_rs -= r * s
            s_rr -= r * r
            s_ss -= s * s
            # first-order terms: all points, then the deleted ones removed
            t_rb += sr_y[hiy[j]] + sr_y[loy[j]]
            t_sb += ss_y[hiy[j]] + ss_y[loy[j]]
            t_ra += sr_x[hix[j]] + sr_x[lox[j]]
            t_sa += ss_x[hix[j]] + ss_x[lox[j]]
            a2 = 0
            b2 = 0
            for k in range(e0, e1):
                a2 += _h2(px[j], lox[k], hix[k])
                b2 += _h2(py[j], loy[k], hiy[k])
                # pairs within |E| (and within uE): points at or above both thresholds
                t_aa += (
                    4 * m
                    - max(hix[j], hix[k])
                    - max(hix[j], lox[k])
                    - max(lox[j], hix[k])
                    - max(lox[j], lox[k])
                )
                t_bb += (
                    4 * m
                    - max(hiy[j], hiy[k])
                    - max(hiy[j], loy[k])
                    - max(loy[j], hiy[k])
                    - max(loy[j], loy[k])
                )
            t_rb -= r * b2
            t_sb -= s * b2
            t_ra -= r * a2
            t_sa -= s * a2
            t_ab -= a2 * b2
            t_aa -= a2 * a2
            t_bb -= b2 * b2
        t_ab += dominance[g]
        n2 = m - gs
        c2 = n2 * (n2 + 1) * (n2 + 1)
        cross = s_rs - t_rb - t_sa + t_ab - c2
        sxx = s_rr - 2 * t_ra + t_aa - c2
        syy = s_ss - 2 * t_sb + t_bb - c2
        out[g] = float(cross) / np.sqrt(float(sxx) * float(syy))
    return out


def cc_jackknife_ranks(prepared, edges):
    """Delete-group jackknife values of CC by rank updates (numba).

    Parameters
    ----------
    prepared : CCPrepared
        :func:`uqviz._array.rank.cc_prepare` of (E, uE).
    edges : ndarray of int64
        Group ``g`` = points ``edges[g]:edges[g+1]`` (data order).

    Returns
    -------
    ndarray, shape (len(edges) - 1,)
        CC of the points kept when each group is deleted (NaN where the kept ranks of
        |E| or uE are constant).
    """
    edges = np.ascontiguousarray(edges, dtype=np.int64)
    px, lox, hix, py, loy, hiy = positions(prepared)
    r, s = lox + hix + 1, loy + hiy + 1  # twice the mid-ranks
    full = np.array([r @ s, r @ r, s @ s], dtype=np.int64)
    oe, e_bounds = prepared[0], prepared[1]
    gid = np.full(px.size, -1, dtype=np.int64)  # -1: in no group
    gid[edges[0] : edges[-1]] = np.repeat(np.arange(edges.size - 1), np.diff(edges))
    dominance = _dominance_sums(oe, e_bounds, px, py, loy, hiy, gid, edges)
    return _jack_kernel(
        px,
        lox,
        hix,
        py,
        loy,
        hiy,
        edges,
        dominance,
        _suffix(px, r),
        _suffix(px, s),
        _suffix(py, r),
        _suffix(py, s),
        full,
    )
