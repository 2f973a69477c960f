"""CC (Spearman rank correlation of |E| and uE) at scale: ranks once, counts per replicate.

A bootstrap replicate is a vector of draw counts ``c`` per point. The mid-ranks of the
resample (ties averaged, repeated draws being ties) are those of a count-weighted sample:
a group of equal values holding ``T`` draws, after ``before`` draws of smaller values, has
the mid-rank ``before + (T + 1)/2``. With the points sorted once by |E| and once by uE,
Spearman's correlation of a replicate is then two sequential passes over the points in
O(M): no sort per replicate. The grouped jackknife is the same computation with counts
1 (kept) and 0 (deleted group). For the simulated references uE is fixed, so its ranks
are computed once; only |E*| must be ordered for every Monte Carlo draw (a new set of
values has a new order: one O(M log M) sort per draw is unavoidable), done as one sort of
64-bit keys (the value's bits with the point's position in uE order in the low bits, ties
resolved exactly afterwards), about 4x faster than ``argsort``; without ties in uE the
rank of uE is that position, so the pass after the sort reads nothing else.

At large M (above ``resample.BLOCKED_ABOVE`` points) the bootstrap draws each count vector
with the cache-blocked exact sampler of :mod:`uqviz._array.resample`, on the points in |E|
order (the order of the first pass; relabelling the points does not change the law of a
multiset of draws): the count vector is written block by block in cache. The uE pass must
still read every point in uE order (M random reads): the count and the point's |E| term are
then packed in one int32 (:func:`_pack_e`), so that pass reads 4 bytes a point instead of 16,
its random reads of a chunk are issued before the arithmetic, and the sums are exact
integers (twice a centred mid-rank is an integer).

Examples
--------
>>> e, u = np.array([0.1, -0.5, 1.0, 2.0, -3.0]), np.arange(1.0, 6.0)
>>> prep = cc_prepare(e, u)
>>> float(cc_from_counts(np.ones(5), prep))
1.0
>>> float(cc_given_u(u)(e[None, :])[0])
1.0
"""

from __future__ import annotations

import numpy as np

from uqviz._array import resample as _resample
from uqviz._array.cc_jackknife import cc_jackknife_ranks, rank_update_pays
from uqviz._array.jit import HAVE_NUMBA, get_num_threads, njit, prange, uint64
from uqviz._array.resample import BLOCK, block_generator

if HAVE_NUMBA:
    from uqviz._array.resample import (
        block_draw_counts,
        block_stream,
        count_draws_among,
        count_draws_bits,
        n_point_blocks,
        task_stream,
    )

_U64 = uint64


class CCPrepared(tuple):
    """Orders and tie groups of |E| and uE, computed once (``cc_prepare``)."""

    __slots__ = ()


def _groups(x_sorted):
    """Start of every group of equal values in a sorted array, and the end."""
    starts = np.flatnonzero(np.r_[True, x_sorted[1:] != x_sorted[:-1]])
    return np.r_[starts, x_sorted.size].astype(np.int64)


def cc_prepare(e, u):
    """Orders, tie groups and the e-position of each point in uE order, computed once.

    Parameters
    ----------
    e, u : ndarray, shape (M,)

    Returns
    -------
    CCPrepared
        ``(e_order, e_bounds, u_bounds, epos_of_u)``: points sorted by |E| (stable), the
        bounds of its tie groups, the bounds of the tie groups of uE, and for each
        position in uE order the position of that point in |E| order.
    """
    a = np.abs(np.asarray(e, dtype=float))
    u = np.asarray(u, dtype=float)
    oe = np.argsort(a, kind="stable")
    ou = np.argsort(u, kind="stable")
    inv_e = np.empty(a.size, dtype=np.int64)
    inv_e[oe] = np.arange(a.size)
    return CCPrepared((oe, _groups(a[oe]), _groups(u[ou]), inv_e[ou]))


@njit(nogil=True, cache=True, error_model="numpy")
def _cc_counts(cnt, cd, e_bounds, u_bounds, epos_u):
    """Spearman CC of the count-weighted sample.

    ``cnt[p]``: draw count of the point at position ``p`` in |E| order; ``cd`` (M, 2) is
    filled with the count and the centred mid-rank of every point (count and rank share a
    cache line for the random reads of the uE pass).
    """
    n = 0.0
    for p in range(cnt.shape[0]):
        n += cnt[p]
    mean = 0.5 * (n + 1.0)
    before = 0.0
    sse = 0.0
    for g in range(e_bounds.shape[0] - 1):
        t = 0.0
        for p in range(e_bounds[g], e_bounds[g + 1]):
            t += cnt[p]
        d = before + 0.5 * (t + 1.0) - mean
        sse += t * d * d
        for p in range(e_bounds[g], e_bounds[g + 1]):
            cd[p, 0] = cnt[p]
            cd[p, 1] = d
        before += t
    before = 0.0
    ssu = 0.0
    cross = 0.0
    for g in range(u_bounds.shape[0] - 1):
        t = 0.0
        s = 0.0
        for q in range(u_bounds[g], u_bounds[g + 1]):
            p = epos_u[q]
            c = cd[p, 0]
            t += c
            s += c * cd[p, 1]
        d = before + 0.5 * (t + 1.0) - mean
        ssu += t * d * d
        cross += d * s
        before += t
    return cross / np.sqrt(sse * ssu)


# --------------------------------------------------------------------------
# large M: counts packed with the |E| mid-ranks in 4 bytes, sums in exact integers
# --------------------------------------------------------------------------
#: largest M of the packed path: 2 n << 4 must fit in an int32
PACKED_MAX_M = (1 << 26) - 1
#: largest count a packed point holds (4 bits); a replicate with more takes the
#: unpacked path (a count above 15 has probability about M e^-1 / 16!, 4e-8 at M = 2e6)
_PACKED_MAX_COUNT = 15


@njit(nogil=True, inline="always")
def _chunk_len(n):
    """Points per exact int64 partial sum: terms are at most 60 n^2 (c <= 15, |2d| <= 2n)."""
    return max(1, min(1024, (1 << 62) // max(1, 60 * n * n)))


@njit(nogil=True, cache=True, error_model="numpy")
def _pack_e(cnt, pk, e_bounds, e_single):
    """``pk[p] = (2 before + t) << 4 | c`` in |E| order, and 4 x the |E| sum of squares.

    ``2 before + t - n`` is twice the centred mid-rank of the point's |E| group (an exact
    integer). Returns ``(n, 4 sse)``, or ``(n, -1)`` when a count exceeds 15 (``cnt`` is
    left unchanged: the caller takes the unpacked path).
    """
    m = cnt.shape[0]
    n = 0
    for p in range(m):
        n += cnt[p]
    chunk = _chunk_len(n)
    big = 0
    sse = 0.0
    bi = 0
    if e_single:  # no ties in |E|: a group is a point
        for p0 in range(0, m, chunk):
            part = 0
            for p in range(p0, min(m, p0 + chunk)):
                c = np.int64(cnt[p])
                big |= c
                h = 2 * bi + c
                pk[p] = np.int32((h << 4) | (c & 15))
                part += c * (h - n) * (h - n)
                bi += c
            sse += float(part)
    else:
        for g in range(e_bounds.shape[0] - 1):
            lo, hi = e_bounds[g], e_bounds[g + 1]
            t = 0
            for p in range(lo, hi):
                t += cnt[p]
            h = 2 * bi + t
            for p in range(lo, hi):
                c = np.int64(cnt[p])
                big |= c
                pk[p] = np.int32((h << 4) | (c & 15))
            sse += float(t) * float(h - n) * float(h - n)
            bi += t
    if big > _PACKED_MAX_COUNT:
        return n, -1.0
    return n, sse


@njit(nogil=True, cache=True, error_model="numpy")
def _cross_u(pk, n, u_bounds, u_single, epos_u):
    """4 x the cross sum and 4 x the uE sum of squares, reading ``pk`` in uE order."""
    m = epos_u.shape[0]
    cross = 0.0
    ssu = 0.0
    bu = 0
    if u_single:  # no ties in uE: exact int64 sums over chunks of points
        chunk = _chunk_len(n)
        buf = np.empty(chunk, dtype=np.int32)
        for q0 in range(0, m, chunk):
            q1 = min(m, q0 + chunk)
            # the random reads of a chunk first, apart from the arithmetic: many in flight
            for q in range(q0, q1):
                buf[q - q0] = pk[epos_u[q]]
            pc = 0
            pu = 0
            for j in range(q1 - q0):
                v = np.int64(buf[j])
                c = v & 15
                du = 2 * bu + c - n
                pc += c * du * ((v >> 4) - n)
                pu += c * du * du
                bu += c
            cross += float(pc)
            ssu += float(pu)
    else:
        for g in range(u_bounds.shape[0] - 1):
            t = 0
            sh = 0
            for q in range(u_bounds[g], u_bounds[g + 1]):
                v = np.int64(pk[epos_u[q]])
                c = v & 15
                t += c
                sh += c * ((v >> 4) - n)
            du = float(2 * bu + t - n)
            cross += du * float(sh)
            ssu += float(t) * du * du
            bu += t
    return cross, ssu


@njit(nogil=True, cache=True, error_model="numpy")
def _cc_packed(cnt, pk, e_bounds, u_bounds, epos_u, e_single, u_single, epos32):
    """CC of the count-weighted sample (large M): as :func:`_cc_counts`, whose value it
    equals to rounding, with the random reads of the uE pass on 4 bytes per point."""
    if cnt.shape[0] > PACKED_MAX_M:
        n, sse = 0, -1.0
    else:
        n, sse = _pack_e(cnt, pk, e_bounds, e_single)
    if sse < 0.0:
        cd = np.empty((cnt.shape[0], 2))
        return _cc_counts(cnt, cd, e_bounds, u_bounds, epos_u)
    cross, ssu = _cross_u(pk, n, u_bounds, u_single, epos32)
    return cross / np.sqrt(sse * ssu)


def _packed_extras(prepared):
    """``(e_single, u_single, epos_u as int32)`` of the packed path."""
    oe, e_bounds, u_bounds, epos_u = prepared
    m = oe.size
    return e_bounds.size == m + 1, u_bounds.size == m + 1, epos_u.astype(np.int32)


def _packed(m):
    """True when CC of M points takes the packed path (cache-blocked sizes that fit)."""
    return _resample.BLOCKED_ABOVE < m <= PACKED_MAX_M


def cc_from_counts(counts, prepared):
    """CC of resamples given as draw counts per point (data order), in O(M) per row.

    Parameters
    ----------
    counts : ndarray, shape (..., M)
    prepared : CCPrepared

    Returns
    -------
    ndarray, shape (...)
    """
    oe, e_bounds, u_bounds, epos_u = prepared
    counts = np.asarray(counts, dtype=float)
    flat = counts.reshape(-1, counts.shape[-1])
    if not HAVE_NUMBA:
        step = _rows_per_batch(flat.shape[-1])
        out = [
            _cc_counts_numpy(flat[i : i + step][:, oe], e_bounds, u_bounds, epos_u)
            for i in range(0, flat.shape[0], step)
        ]
        return np.concatenate(out).reshape(counts.shape[:-1])
    out = np.empty(flat.shape[0])
    cd = np.empty((counts.shape[-1], 2))
    for i, row in enumerate(flat):
        out[i] = _cc_counts(np.ascontiguousarray(row[oe]), cd, e_bounds, u_bounds, epos_u)
    return out.reshape(counts.shape[:-1])


@njit(nogil=True, parallel=True, cache=True, error_model="numpy")
def _cc_boot_kernel(m, e_bounds, u_bounds, epos_u, seed, blk0, blk1, n_boot, block):
    """Replicates of blocks ``blk0 .. blk1-1``; the draws of a block depend on (seed, block)."""
    b_first = blk0 * block
    b_last = min(n_boot, blk1 * block)
    out = np.empty(max(b_last - b_first, 0))
    for blk in prange(blk0, blk1):
        s = task_stream(seed, blk)
        n = _U64(m)
        threshold = (_U64(0x100000000) - n) % n
        cnt = np.zeros(m, dtype=np.int32)
        cd = np.empty((m, 2))
        for b in range(blk * block, min(n_boot, (blk + 1) * block)):
            cnt[:] = 0
            # draws are positions in |E| order: uniform over points all the same
            count_draws_among(cnt, m, n, s, threshold)
            out[b - b_first] = _cc_counts(cnt, cd, e_bounds, u_bounds, epos_u)
    return out


@njit(nogil=True, cache=True)
def _blocked_states(seed, blk, m, bits):
    """The streams of the point blocks of task ``blk`` (those of the blocked sampler)."""
    n_parts = n_point_blocks(m, bits)
    states = np.empty((n_parts, 4), dtype=np.uint64)
    for j in range(n_parts):
        states[j] = block_stream(seed, blk, j)
    return states


@njit(nogil=True, cache=True)
def _blocked_replicate(cnt, block_counts, states, bits):
    """Draw counts of one replicate, point block after point block (each in cache).

    ``block_counts[j]`` draws fall in block ``j``; they are drawn from the stream
    ``states[j]``, continued from the previous replicate, exactly as
    :func:`uqviz._array.resample._blocked_binned` consumes it: the same counts.
    """
    m = cnt.shape[0]
    cnt[:] = 0
    for j in range(states.shape[0]):
        lo = j << bits
        hi = min(m, lo + (1 << bits))
        s = states[j]
        c = block_counts[j]
        part = cnt[lo:hi]
        if hi - lo == (1 << bits):
            count_draws_bits(part, c, s, bits)
        else:
            n = _U64(hi - lo)
            threshold = (_U64(0x100000000) - n) % n
            count_draws_among(part, c, n, s, threshold)


@njit(nogil=True, parallel=True, cache=True, error_model="numpy")
def _cc_boot_blocked_kernel(
    m, e_bounds, u_bounds, epos_u, e_single, u_single, epos32, seed, blk0, blk1, n_boot, block, bits
):
    """As :func:`_cc_boot_kernel` with the cache-blocked exact sampler (large M).

    The points are taken in |E| order, so the counts are drawn block by block in the
    order in which the mid-rank pass reads them (a count vector is a multiset of
    points: relabelling the points does not change the law of the bootstrap).
    """
    b_first = blk0 * block
    b_last = min(n_boot, blk1 * block)
    out = np.empty(max(b_last - b_first, 0))
    for blk in prange(blk0, blk1):
        b0 = blk * block
        b1 = min(n_boot, (blk + 1) * block)
        counts = block_draw_counts(seed, blk, m, bits, b1 - b0)
        states = _blocked_states(seed, blk, m, bits)
        cnt = np.zeros(m, dtype=np.int32)
        pk = np.empty(m, dtype=np.int32)
        for r in range(b1 - b0):
            _blocked_replicate(cnt, counts[r], states, bits)
            out[b0 + r - b_first] = _cc_packed(
                cnt, pk, e_bounds, u_bounds, epos_u, e_single, u_single, epos32
            )
    return out


@njit(nogil=True, cache=True)
def _blocked_counts_kernel(out, seed, block, bits):
    n_boot, m = out.shape
    cnt = np.zeros(m, dtype=np.int32)
    for blk in range((n_boot + block - 1) // block):
        b0 = blk * block
        b1 = min(n_boot, (blk + 1) * block)
        counts = block_draw_counts(seed, blk, m, bits, b1 - b0)
        states = _blocked_states(seed, blk, m, bits)
        for r in range(b1 - b0):
            _blocked_replicate(cnt, counts[r], states, bits)
            for i in range(m):
                out[b0 + r, i] = cnt[i]


def _blocked(m):
    """True when M is resampled by the cache-blocked sampler (as resample.py decides)."""
    return m > _resample.BLOCKED_ABOVE


def n_blocks(n_boot):
    """Number of independently seeded blocks of ``BLOCK`` replicates."""
    return -(-int(n_boot) // BLOCK)


def cc_bootstrap(prepared, n_boot, seed, blocks=None):
    """Bootstrap replicates of CC from draw counts, O(M) per replicate.

    Parameters
    ----------
    prepared : CCPrepared
    n_boot : int
    seed : int
        63-bit seed; block ``k`` of ``BLOCK`` replicates draws from the stream (seed, k),
        so any split of the blocks (threads, dask tasks) gives the same replicates.
    blocks : (int, int), optional
        Compute only the replicates of blocks ``[first, last)`` (default: all).

    Returns
    -------
    ndarray, shape (B,) (or the replicates of the requested blocks)

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> u = rng.uniform(1, 2, 50); e = u * rng.standard_normal(50)
    >>> cc_bootstrap(cc_prepare(e, u), 100, seed=3).shape
    (100,)
    """
    oe, e_bounds, u_bounds, epos_u = prepared
    first, last = (0, n_blocks(n_boot)) if blocks is None else blocks
    if not HAVE_NUMBA:
        return _cc_bootstrap_numpy(prepared, int(n_boot), seed, int(first), int(last))
    if _blocked(oe.size):
        return _cc_boot_blocked_kernel(
            oe.size,
            e_bounds,
            u_bounds,
            epos_u,
            *_packed_extras(prepared),
            np.uint64(seed),
            int(first),
            int(last),
            int(n_boot),
            BLOCK,
            int(_resample.POINT_BITS),
        )
    return _cc_boot_kernel(
        oe.size,
        e_bounds,
        u_bounds,
        epos_u,
        np.uint64(seed),
        int(first),
        int(last),
        int(n_boot),
        BLOCK,
    )


def cc_bootstrap_counts(prepared, n_boot, seed):
    """The draw counts (data order) of the replicates of :func:`cc_bootstrap` (for tests)."""
    oe = prepared[0]
    m = oe.size
    out = np.zeros((n_boot, m))
    if not HAVE_NUMBA:
        out = np.concatenate(
            [
                c
                for blk in range(n_blocks(n_boot))
                for c in _block_counts_numpy(m, int(seed), blk, n_boot)
            ]
        )
        out = out.astype(float)
    elif _blocked(m):
        _blocked_counts_kernel(out, np.uint64(seed), BLOCK, int(_resample.POINT_BITS))
    else:
        _counts_kernel(out, np.uint64(seed), BLOCK)
    res = np.empty_like(out)
    res[:, oe] = out  # columns were |E| positions
    return res


@njit(nogil=True, cache=True)
def _counts_kernel(out, seed, block):
    n_boot, m = out.shape
    n = _U64(m)
    threshold = (_U64(0x100000000) - n) % n
    for blk in range((n_boot + block - 1) // block):
        s = task_stream(seed, blk)
        for b in range(blk * block, min(n_boot, (blk + 1) * block)):
            count_draws_among(out[b], m, n, s, threshold)


@njit(nogil=True, parallel=True, cache=True, error_model="numpy")
def _cc_jack_kernel(
    inv_e, edges, e_bounds, u_bounds, epos_u, n_chunks, packed, e_single, u_single, epos32
):
    m = inv_e.shape[0]
    n_groups = edges.shape[0] - 1
    out = np.empty(n_groups)
    for k in prange(n_chunks):
        g0 = k * n_groups // n_chunks
        g1 = (k + 1) * n_groups // n_chunks
        cnt = np.ones(m, dtype=np.int32)
        cd = np.empty((m, 2))
        pk = np.empty(m if packed else 0, dtype=np.int32)
        for g in range(g0, g1):
            for i in range(edges[g], edges[g + 1]):
                cnt[inv_e[i]] = 0
            if packed:
                out[g] = _cc_packed(cnt, pk, e_bounds, u_bounds, epos_u, e_single, u_single, epos32)
            else:
                out[g] = _cc_counts(cnt, cd, e_bounds, u_bounds, epos_u)
            for i in range(edges[g], edges[g + 1]):
                cnt[inv_e[i]] = 1
    return out


def cc_jackknife(prepared, edges):
    """Delete-group jackknife values of CC: group ``g`` = points ``edges[g]:edges[g+1]``.

    The same values as recomputing CC on the kept points. Small groups (at most
    ``RANK_UPDATE_MAX_GROUP`` points on average, as the engine's 1000 groups up to
    32 000 points) take the rank update of :mod:`uqviz._array.cc_jackknife`, O(g^2 log M)
    per group; larger ones one count pass each, O(M) per group.

    Examples
    --------
    >>> e, u = np.array([0.1, -0.5, 1.0, 2.0, -3.0]), np.array([1.0, 2.0, 2.0, 4.0, 5.0])
    >>> cc_jackknife(cc_prepare(e, u), np.arange(6)).shape
    (5,)
    """
    oe, e_bounds, u_bounds, epos_u = prepared
    inv_e = np.empty(oe.size, dtype=np.int64)
    inv_e[oe] = np.arange(oe.size)
    edges = np.ascontiguousarray(edges, dtype=np.int64)
    if not HAVE_NUMBA:
        return _cc_jackknife_numpy(inv_e, edges, e_bounds, u_bounds, epos_u)
    if rank_update_pays(oe.size, edges):
        return cc_jackknife_ranks(prepared, edges)
    n_chunks = max(1, min(get_num_threads(), edges.size - 1))
    packed = _packed(oe.size)
    extras = _packed_extras(prepared) if packed else (False, False, np.empty(0, np.int32))
    return _cc_jack_kernel(inv_e, edges, e_bounds, u_bounds, epos_u, n_chunks, packed, *extras)


# --------------------------------------------------------------------------
# simulated references: uE fixed, |E*| ranked per draw
# --------------------------------------------------------------------------
@njit(nogil=True, cache=True)
def _cc_keys(row, scale, upos, mask, keys):
    """Sort keys of one draw: the bits of |e| (-0 as +0), e = row scale (``scale`` of
    size M) or row, with the uE position in the low bits."""
    tmp = np.empty(1)
    bits = tmp.view(np.uint64)
    mult = scale.shape[0] == row.shape[0]
    for p in range(row.shape[0]):
        tmp[0] = abs(row[p] * scale[p] if mult else row[p]) + 0.0
        keys[p] = (bits[0] & ~mask) | upos[p]


@njit(nogil=True, inline="always")
def _val(row, scale, p, mult):
    return abs(row[p] * scale[p] if mult else row[p])


@njit(nogil=True, cache=True)
def _cc_sorted_keys(keys, row, scale, ou, du2, no_ties, shift, m):
    """Sums over points of (2 x centred rank of x) (2 x centred rank of uE), and of the
    first squared, from the sorted keys (value bits | uE position): exact integers.

    The low bits of a key are the point's position in uE order, so when uE has no ties
    twice its centred rank is ``2 q + 1 - m``, computed, not read: the pass reads the
    sorted keys sequentially. ``du2`` (uE order) is read only when uE has ties; ``row``
    (times ``scale`` when given; data order, through ``ou``) only inside runs of equal
    truncated keys. Twice a
    centred mid-rank is an integer, so the sums are exact (int64 over chunks whose terms
    are at most 4 m^2).
    """
    mask = (_U64(1) << _U64(shift)) - _U64(1)
    chunk = max(1, min(1024, (1 << 62) // max(1, 4 * m * m)))
    mult = scale.shape[0] == m
    cross = 0.0
    sse = 0.0
    pc = 0
    ps = 0
    done = 0
    idx = np.empty(m, dtype=np.int64)
    i = 0
    while i < m:
        # a run of equal truncated keys: order it exactly by the true values
        j = i + 1
        high = keys[i] & ~mask
        while j < m and (keys[j] & ~mask) == high:
            j += 1
        if j - i == 1:  # the common case: a value of its own, rank i + 1
            q = np.int64(keys[i] & mask)
            d = 2 * i + 1 - m
            pc += d * ((2 * q + 1 - m) if no_ties else du2[q])
            ps += d * d
        else:
            for k in range(i, j):
                idx[k] = np.int64(keys[k] & mask)
            # insertion sort by (value, uE position): rare, short runs
            for k in range(i + 1, j):
                v = idx[k]
                h = k - 1
                while h >= i and (
                    _val(row, scale, ou[idx[h]], mult) > _val(row, scale, ou[v], mult)
                    or (
                        _val(row, scale, ou[idx[h]], mult) == _val(row, scale, ou[v], mult)
                        and idx[h] > v
                    )
                ):
                    idx[h + 1] = idx[h]
                    h -= 1
                idx[h + 1] = v
            # mid-ranks of exact ties inside the run
            k = i
            while k < j:
                h = k + 1
                while h < j and (
                    _val(row, scale, ou[idx[h]], mult) == _val(row, scale, ou[idx[k]], mult)
                ):
                    h += 1
                d = k + h - m  # twice the centred mid-rank of positions k..h-1
                for r in range(k, h):
                    q = idx[r]
                    cross += float(d) * float((2 * q + 1 - m) if no_ties else du2[q])
                sse += float(h - k) * float(d) * float(d)
                k = h
        done += j - i
        i = j
        if done >= chunk:
            cross += float(pc)
            sse += float(ps)
            pc = 0
            ps = 0
            done = 0
    return cross + float(pc), sse + float(ps)


def cc_given_u(u):
    """CC as a function of the errors alone for fixed uE: uE ranked once.

    Returns ``f(e, scale=None)`` for ``e`` of shape ``(..., M)``, equal to
    ``spearman_cc(e * scale, u)`` row by row (ties averaged); with ``scale`` (shape (M,))
    the products are formed point by point, not as an array.

    Examples
    --------
    >>> u = np.array([1.0, 2.0, 2.0, 3.0])
    >>> round(float(cc_given_u(u)(np.array([[0.1, 0.3, 0.2, 0.4]]))[0]), 6)
    0.948683
    """
    u = np.asarray(u, dtype=float)
    m = u.size
    ou = np.argsort(u, kind="stable")
    bounds = _groups(u[ou])
    no_ties = bounds.size - 1 == m
    # twice the centred mid-rank of uE, in uE order (an integer)
    du2 = np.repeat(bounds[:-1] + bounds[1:] - m, np.diff(bounds)).astype(np.int64)
    ssu = float(np.sum(du2.astype(float) ** 2))
    shift = max(1, int(m - 1).bit_length())
    mask = np.uint64((1 << shift) - 1)
    upos = np.empty(m, dtype=np.uint64)
    upos[ou] = np.arange(m, dtype=np.uint64)  # the low bits of the keys: uE positions

    def cc(e, scale=None):
        e = np.asarray(e, dtype=float)
        scale = np.empty(0) if scale is None else np.ascontiguousarray(scale, dtype=float)
        flat = e.reshape(-1, m)
        if not HAVE_NUMBA:
            return _cc_given_u_numpy(flat, scale, upos, du2, ssu).reshape(e.shape[:-1])
        out = np.empty(flat.shape[0])
        keys = np.empty(m, dtype=np.uint64)
        for r, row in enumerate(flat):
            row = np.ascontiguousarray(row)
            _cc_keys(row, scale, upos, mask, keys)
            keys.sort()
            cross, sse = _cc_sorted_keys(keys, row, scale, ou, du2, no_ties, shift, m)
            out[r] = cross / np.sqrt(sse * ssu) if sse > 0 and ssu > 0 else np.nan
        return out.reshape(e.shape[:-1])

    return cc


# --------------------------------------------------------------------------
# numpy forms, used when numba is not installed
# --------------------------------------------------------------------------
#: values (rows x points) per batch of the numpy forms
_NUMPY_BATCH = 1 << 20


def _rows_per_batch(m, most=None):
    rows = max(1, _NUMPY_BATCH // max(1, int(m)))
    return rows if most is None else min(rows, most)


def _cc_counts_numpy(cnt, e_bounds, u_bounds, epos_u):
    """:func:`_cc_counts` of every row of ``cnt`` ((R, M), |E| order), vectorised.

    The same sums in another order: equal to rounding.
    """
    cnt = np.asarray(cnt, dtype=float)
    n = cnt.sum(axis=-1, keepdims=True)
    mean = 0.5 * (n + 1.0)
    t = np.add.reduceat(cnt, e_bounds[:-1], axis=-1)
    d = (np.cumsum(t, axis=-1) - t) + 0.5 * (t + 1.0) - mean
    sse = np.sum(t * d * d, axis=-1)
    d_u = np.repeat(d, np.diff(e_bounds), axis=-1)[:, epos_u]  # |E| mid-ranks, uE order
    c_u = cnt[:, epos_u]
    tu = np.add.reduceat(c_u, u_bounds[:-1], axis=-1)
    su = np.add.reduceat(c_u * d_u, u_bounds[:-1], axis=-1)
    du = (np.cumsum(tu, axis=-1) - tu) + 0.5 * (tu + 1.0) - mean
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.sum(du * su, axis=-1) / np.sqrt(sse * np.sum(tu * du * du, axis=-1))


def _block_counts_numpy(m, seed, blk, n_boot):
    """Draw counts (rows: the replicates of block ``blk``; columns: positions in |E| order)
    from the numpy stream of the task (:func:`uqviz._array.resample.block_generator`)."""
    b0, b1 = blk * BLOCK, min(n_boot, (blk + 1) * BLOCK)
    rng = block_generator(seed, blk)
    step = _rows_per_batch(m, BLOCK)
    for r0 in range(b0, b1, step):
        r = min(step, b1 - r0)
        idx = rng.integers(0, m, size=(r, m)) + m * np.arange(r)[:, None]
        yield np.bincount(idx.ravel(), minlength=r * m).reshape(r, m)


def _cc_bootstrap_numpy(prepared, n_boot, seed, first, last):
    oe, e_bounds, u_bounds, epos_u = prepared
    out = [
        _cc_counts_numpy(c, e_bounds, u_bounds, epos_u)
        for blk in range(first, last)
        for c in _block_counts_numpy(oe.size, int(seed), blk, n_boot)
    ]
    return np.concatenate(out) if out else np.empty(0)


def _cc_jackknife_numpy(inv_e, edges, e_bounds, u_bounds, epos_u):
    m, n_groups = inv_e.size, edges.size - 1
    out = np.empty(n_groups)
    step = _rows_per_batch(m)
    for g0 in range(0, n_groups, step):
        g1 = min(n_groups, g0 + step)
        cnt = np.ones((g1 - g0, m))
        for g in range(g0, g1):
            cnt[g - g0, inv_e[edges[g] : edges[g + 1]]] = 0.0
        out[g0:g1] = _cc_counts_numpy(cnt, e_bounds, u_bounds, epos_u)
    return out


def _cc_given_u_numpy(flat, scale, upos, du2, ssu):
    """:func:`cc_given_u`'s values from numpy's mid-ranks: the same exact integer sums."""
    from scipy.stats import rankdata

    m = flat.shape[-1]
    du_data = du2[upos.astype(np.int64)]  # twice the centred mid-rank of uE, data order
    exact = m <= 2_000_000  # int64 sums of terms up to m^2 do not overflow
    out = np.empty(flat.shape[0])
    step = _rows_per_batch(m)
    for r0 in range(0, flat.shape[0], step):
        x = flat[r0 : r0 + step]
        x = np.abs(x * scale if scale.shape[0] == m else x)
        d = (2.0 * rankdata(x, axis=-1)).astype(np.int64) - (m + 1)
        if exact:
            cross = np.sum(d * du_data, axis=-1).astype(float)
            sse = np.sum(d * d, axis=-1).astype(float)
        else:
            d = d.astype(float)
            cross, sse = d @ du_data.astype(float), np.sum(d * d, axis=-1)
        with np.errstate(divide="ignore", invalid="ignore"):
            out[r0 : r0 + step] = np.where(
                (sse > 0) & (ssu > 0), cross / np.sqrt(sse * ssu), np.nan
            )
    return out
