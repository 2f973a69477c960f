"""Bootstrap resampling of column sums, in numba (parallel) or numpy, without an M x B index array.

Work is split into tasks (one group x one block of ``BLOCK`` replicates), each
with a stream derived from (group seed, block) only, so results do not depend
on threads or scheduling. numba: xoshiro256** (Blackman & Vigna (2021)) with
unbiased integers (Lemire (2019)); numpy: PCG64 per task, same distribution,
other numbers.

With numba, groups of more than ``BLOCKED_ABOVE`` points are drawn by the cache-blocked exact
sampler: the points are cut into blocks of ``2**POINT_BITS``; for each replicate the
number of draws falling in each block is drawn first (a multinomial over blocks, by
sequential exact binomials), then the draws inside each block, for all replicates of
the task while the block is in cache. This is exactly the law of M uniform draws with
replacement; each block has its own sub-stream of the task, so results still do not
depend on threads. Smaller groups keep the unblocked path and its numbers. The numpy engine
(the default where numba is not installed, :func:`default_engine`) draws every group's indices
directly, ``BLOCK`` replicates at a time.
"""

from __future__ import annotations

import math

import numpy as np

from uqviz._array import checks
from uqviz._array.jit import USE_NUMBA as HAVE_NUMBA  # numba installed and not disabled
from uqviz._array.jit import numba

BLOCK = 32  # replicates per task; fixed so results do not depend on threads
# The cache-blocked sampler. Both constants decide which numbers a seed gives, so they are
# fixed, not read from the machine: blocks of 4096 points (96 KiB for three columns) are
# cache resident on any CPU with an L2 of 256 KiB or more; below 16384 points (384 KiB)
# the unblocked path is as fast (measured) and keeps the numbers of earlier versions.
POINT_BITS = 12  # blocks of 2**12 points (at most 12: five indices per 64-bit output)
BLOCKED_ABOVE = 16384  # groups of more points are resampled block by block


def default_engine() -> str:
    """The engine used when ``engine=None``: numba when installed (and not disabled by
    ``UQVIZ_DISABLE_NUMBA=1``), else numpy.

    Examples
    --------
    >>> default_engine() in ("numba", "numpy")
    True
    """
    return "numba" if HAVE_NUMBA else "numpy"


def _tasks(sizes, n_boot):
    n_blocks = -(-n_boot // BLOCK)
    return len(sizes) * n_blocks, n_blocks


def block_generator(seed, block) -> np.random.Generator:
    """The numpy stream of one task: PCG64 seeded by ``[seed, block]``.

    Examples
    --------
    >>> int(block_generator(1, 0).integers(100)) == int(block_generator(1, 0).integers(100))
    True
    """
    return np.random.default_rng([int(seed), int(block)])


# ---------------------------------------------------------------- numpy ---
def _sums_numpy(cols, starts, sizes, n_boot, seeds):
    n_groups, k = len(sizes), cols.shape[1]
    out = np.empty((n_groups, n_boot, k))
    n_tasks, n_blocks = _tasks(sizes, n_boot)
    for t in range(n_tasks):
        g, blk = divmod(t, n_blocks)
        b0, b1 = blk * BLOCK, min(n_boot, (blk + 1) * BLOCK)
        idx = block_generator(seeds[g], blk).integers(0, sizes[g], size=(b1 - b0, sizes[g]))
        out[g, b0:b1] = cols[starts[g] + idx].sum(axis=1)
    return out


# ---------------------------------------------------------------- numba ---
if numba is not None:
    _U64 = numba.uint64

    @numba.njit(nogil=True, inline="always")
    def _rotl(x, k):
        return (x << _U64(k)) | (x >> _U64(64 - k))

    @numba.njit(nogil=True, inline="always")
    def _splitmix64(x):
        x = x + _U64(0x9E3779B97F4A7C15)
        z = x
        z = (z ^ (z >> _U64(30))) * _U64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> _U64(27))) * _U64(0x94D049BB133111EB)
        return x, z ^ (z >> _U64(31))

    # the stream primitives below without an underscore (xoshiro_next, task_stream,
    # n_point_blocks, block_draw_counts, block_stream, count_draws_among, count_draws_bits) are
    # shared with the kernels of rank.py and variates.py, so that they draw the same streams

    @numba.njit(nogil=True, inline="always")
    def xoshiro_next(s):
        # xoshiro256** (Blackman & Vigna): all 64 output bits are usable
        result = _rotl(s[1] * _U64(5), 7) * _U64(9)
        t = s[1] << _U64(17)
        s[2] ^= s[0]
        s[3] ^= s[1]
        s[1] ^= s[2]
        s[0] ^= s[3]
        s[2] ^= t
        s[3] = _rotl(s[3], 45)
        return result

    @numba.njit(nogil=True, inline="always")
    def task_stream(seed, blk):
        # the xoshiro256** state of one task: SplitMix64 of seed ^ (blk * odd constant)
        s = np.empty(4, dtype=np.uint64)
        x = seed ^ (_U64(blk) * _U64(0xD1B54A32D192ED03))
        for i in range(4):
            x, s[i] = _splitmix64(x)
        return s

    @numba.njit(nogil=True, inline="always")
    def _below(s, n, threshold):
        # one unbiased integer in [0, n): Lemire's multiply-shift with rejection
        mask = _U64(0xFFFFFFFF)
        m = (xoshiro_next(s) >> _U64(32)) * n
        while (m & mask) < threshold:
            m = (xoshiro_next(s) >> _U64(32)) * n
        return np.int64(m >> _U64(32))

    @numba.njit(nogil=True, inline="always")
    def _pair(s, n, threshold):
        # Two 32-bit uniforms per 64-bit output, each mapped to [0, n) by
        # Lemire's multiply-shift. A pair with a biased low word (probability
        # < 2 n / 2**32) is replaced by two draws with rejection, so every
        # index is exactly uniform.
        mask = _U64(0xFFFFFFFF)
        r = xoshiro_next(s)
        m1 = (r >> _U64(32)) * n
        m2 = (r & mask) * n
        if (m1 & mask) >= threshold and (m2 & mask) >= threshold:
            return np.int64(m1 >> _U64(32)), np.int64(m2 >> _U64(32))
        return _below(s, n, threshold), _below(s, n, threshold)

    @numba.njit(nogil=True, inline="always")
    def _uniform(s):
        # a double in [0, 1) from the top 53 bits
        return np.float64(xoshiro_next(s) >> _U64(11)) * 1.1102230246251565e-16

    @numba.njit(nogil=True, inline="always")
    def _sub_seed(seed, key):
        # the seed of sub-stream ``key`` >= 1 of a group (SplitMix64 of seed + key * odd)
        return _splitmix64(seed + _U64(key) * _U64(0x9FB21C651E98DF25))[1]

    @numba.njit(nogil=True)
    def _binomial_inversion(s, n, p):
        # small mean (n p < 10): sequential search of the cdf (as numpy's legacy inversion)
        q = 1.0 - p
        qn = math.exp(n * math.log(q))
        mean = n * p
        bound = min(float(n), mean + 10.0 * math.sqrt(mean * q + 1.0))
        x = 0
        px = qn
        u = _uniform(s)
        while u > px:
            x += 1
            if x > bound:
                x = 0
                px = qn
                u = _uniform(s)
            else:
                u -= px
                px = ((n - x + 1) * p * px) / (x * q)
        return x

    @numba.njit(nogil=True)
    def _binomial_btrs(s, n, p):
        # n p >= 10, p <= 1/2: transformed rejection with squeeze, Hörmann (1993), algorithm
        # BTRS; the final test compares with the exact log-ratio f(k)/f(mode) (lgamma)
        spq = math.sqrt(n * p * (1.0 - p))
        b = 1.15 + 2.53 * spq
        a = -0.0873 + 0.0248 * b + 0.01 * p
        c = n * p + 0.5
        v_r = 0.92 - 4.2 / b
        lr = math.log(p / (1.0 - p))
        alpha = (2.83 + 5.1 / b) * spq
        mode = math.floor((n + 1) * p)
        lf_mode = math.lgamma(mode + 1.0) + math.lgamma(n - mode + 1.0)
        while True:
            u = _uniform(s) - 0.5
            v = _uniform(s)
            us = 0.5 - abs(u)
            if us <= 0.0:
                continue
            k = math.floor((2.0 * a / us + b) * u + c)
            if us >= 0.07 and v <= v_r:
                return np.int64(k)
            if k < 0 or k > n:
                continue
            v = math.log(v * alpha / (a / (us * us) + b))
            h = lf_mode - math.lgamma(k + 1.0) - math.lgamma(n - k + 1.0) + (k - mode) * lr
            if v <= h:
                return np.int64(k)

    @numba.njit(nogil=True)
    def _binomial(s, n, p):
        # one exact Binomial(n, p) variate from the stream s
        if n <= 0 or p <= 0.0:
            return np.int64(0)
        if p >= 1.0:
            return np.int64(n)
        if p > 0.5:
            return np.int64(n) - _binomial(s, n, 1.0 - p)
        if n * p < 10.0:
            return np.int64(_binomial_inversion(s, n, p))
        return _binomial_btrs(s, n, p)

    # ------------------------------------------------ cache-blocked sampler ---
    # A group of more than BLOCKED_ABOVE points is cut into blocks of 2**bits points (the
    # last one shorter). For each replicate, how many of its draws fall in each block is
    # drawn first (a multinomial, by sequential binomials, from sub-stream 1); then, block
    # after block, the draws of every replicate of the task inside the block (from
    # sub-stream j + 1 of block j, block 0 from the task's own stream), while the block's
    # data stay in cache. Given the block counts the draws are uniform in their blocks, so
    # the multiset of drawn points has exactly the law of M uniform draws with replacement.
    # In a full block an index is a bit field of a 64-bit output (five per output): exact,
    # since the block size is a power of two.

    @numba.njit(nogil=True, inline="always")
    def n_point_blocks(size, bits):
        return (size + (1 << bits) - 1) >> bits

    @numba.njit(nogil=True)
    def _block_counts(s, size, bits, n_parts, row):
        # how many of the size draws fall in each block: a multinomial, by sequential binomials
        left = size
        for j in range(n_parts - 1):
            c = _binomial(s, left, (1 << bits) / (size - (j << bits)))
            row[j] = c
            left -= c
        row[n_parts - 1] = left

    @numba.njit(nogil=True)
    def block_draw_counts(seed, blk, size, bits, n_rep):
        n_parts = n_point_blocks(size, bits)
        counts = np.empty((n_rep, n_parts), dtype=np.int64)
        s = task_stream(_sub_seed(seed, 1), blk)
        for r in range(n_rep):
            _block_counts(s, size, bits, n_parts, counts[r])
        return counts

    @numba.njit(nogil=True, inline="always")
    def block_stream(seed, blk, j):
        return task_stream(seed if j == 0 else _sub_seed(seed, j + 1), blk)

    @numba.njit(nogil=True, inline="always")
    def _sum3(part, c, s, n, threshold):
        # sums of the three columns over c uniform draws from the rows of part (Lemire pairs)
        a0 = 0.0
        a1 = 0.0
        a2 = 0.0
        for _ in range(c // 2):
            j1, j2 = _pair(s, n, threshold)
            a0 += part[j1, 0] + part[j2, 0]
            a1 += part[j1, 1] + part[j2, 1]
            a2 += part[j1, 2] + part[j2, 2]
        if c % 2 == 1:
            j1 = _below(s, n, threshold)
            a0 += part[j1, 0]
            a1 += part[j1, 1]
            a2 += part[j1, 2]
        return a0, a1, a2

    @numba.njit(nogil=True, inline="always")
    def _sum1(part, c, s, n, threshold):
        a0 = 0.0
        for _ in range(c // 2):
            j1, j2 = _pair(s, n, threshold)
            a0 += part[j1, 0] + part[j2, 0]
        if c % 2 == 1:
            a0 += part[_below(s, n, threshold), 0]
        return a0

    @numba.njit(nogil=True, inline="always")
    def _sum3_bits(part, c, s, bits):
        # as _sum3 on a full block of 2**bits rows: five bit-field indices per output
        mask = _U64((1 << bits) - 1)
        b1, b2, b3, b4 = _U64(bits), _U64(2 * bits), _U64(3 * bits), _U64(4 * bits)
        a0 = 0.0
        a1 = 0.0
        a2 = 0.0
        for _ in range(c // 5):
            x = xoshiro_next(s)
            i1 = np.int64(x & mask)
            i2 = np.int64((x >> b1) & mask)
            i3 = np.int64((x >> b2) & mask)
            i4 = np.int64((x >> b3) & mask)
            i5 = np.int64((x >> b4) & mask)
            a0 += part[i1, 0] + part[i2, 0] + part[i3, 0] + part[i4, 0] + part[i5, 0]
            a1 += part[i1, 1] + part[i2, 1] + part[i3, 1] + part[i4, 1] + part[i5, 1]
            a2 += part[i1, 2] + part[i2, 2] + part[i3, 2] + part[i4, 2] + part[i5, 2]
        rest = c % 5
        if rest:
            x = xoshiro_next(s)
            for _ in range(rest):
                i1 = np.int64(x & mask)
                x >>= b1
                a0 += part[i1, 0]
                a1 += part[i1, 1]
                a2 += part[i1, 2]
        return a0, a1, a2

    @numba.njit(nogil=True, inline="always")
    def _sum1_bits(part, c, s, bits):
        mask = _U64((1 << bits) - 1)
        b1, b2, b3, b4 = _U64(bits), _U64(2 * bits), _U64(3 * bits), _U64(4 * bits)
        a0 = 0.0
        for _ in range(c // 5):
            x = xoshiro_next(s)
            a0 += (
                part[np.int64(x & mask), 0]
                + part[np.int64((x >> b1) & mask), 0]
                + part[np.int64((x >> b2) & mask), 0]
                + part[np.int64((x >> b3) & mask), 0]
                + part[np.int64((x >> b4) & mask), 0]
            )
        rest = c % 5
        if rest:
            x = xoshiro_next(s)
            for _ in range(rest):
                a0 += part[np.int64(x & mask), 0]
                x >>= b1
        return a0

    @numba.njit(nogil=True)
    def _blocked_sums(grp, out, b0, b1, seed, blk, bits, prefetch, sink):
        # replicates b0..b1 of one group, block by block of points
        size = grp.shape[0]
        width = grp.shape[1]
        n_rep = b1 - b0
        counts = block_draw_counts(seed, blk, size, bits, n_rep)
        acc = np.zeros((n_rep, width))
        for j in range(counts.shape[1]):
            lo = j << bits
            hi = min(size, lo + (1 << bits))
            part = grp[lo:hi]
            s = block_stream(seed, blk, j)
            full = hi - lo == (1 << bits)
            n = _U64(hi - lo)
            threshold = (_U64(0x100000000) - n) % n
            if prefetch:
                # read the block in order first: its cache lines then arrive by hardware
                # prefetch, not one latency-bound miss per line at random
                warm = 0.0
                for i in range(0, hi - lo, 2):
                    warm += part[i, 0]
                sink[0] = warm
            for r in range(n_rep):
                c = counts[r, j]
                if width == 1:
                    acc[r, 0] += (
                        _sum1_bits(part, c, s, bits) if full else _sum1(part, c, s, n, threshold)
                    )
                else:
                    if full:
                        a0, a1, a2 = _sum3_bits(part, c, s, bits)
                    else:
                        a0, a1, a2 = _sum3(part, c, s, n, threshold)
                    acc[r, 0] += a0
                    acc[r, 1] += a1
                    acc[r, 2] += a2
        for r in range(n_rep):
            for c in range(width):
                out[b0 + r, c] = acc[r, c]

    @numba.njit(nogil=True, parallel=True, cache=True)
    def _sums_numba_kernel(
        cols, starts, sizes, n_boot, seeds, block, bits, blocked_above, prefetch=True
    ):
        # cols: (M, w), w = 1 or 3, row-major, so the three values of a drawn point share a
        # cache line; scalar accumulators stay in registers (measured about 2x faster than
        # an accumulator array over separate columns). Groups above ``blocked_above``
        # points are drawn block by block (cache-blocked sampler above).
        n_groups = sizes.shape[0]
        width = cols.shape[1]
        n_blocks = (n_boot + block - 1) // block
        out = np.zeros((n_groups, n_boot, width))
        sink = np.zeros(n_groups * n_blocks)
        for t in numba.prange(n_groups * n_blocks):
            g = t // n_blocks
            blk = t - g * n_blocks
            size = sizes[g]
            grp = cols[starts[g] : starts[g] + size]
            b0 = blk * block
            b1 = min(n_boot, (blk + 1) * block)
            if size > blocked_above:
                _blocked_sums(grp, out[g], b0, b1, seeds[g], blk, bits, prefetch, sink[t : t + 1])
                continue
            s = task_stream(seeds[g], blk)
            n = _U64(size)
            threshold = (_U64(0x100000000) - n) % n
            for b in range(b0, b1):
                if width == 1:
                    out[g, b, 0] = _sum1(grp, size, s, n, threshold)
                else:
                    a0, a1, a2 = _sum3(grp, size, s, n, threshold)
                    out[g, b, 0] = a0
                    out[g, b, 1] = a1
                    out[g, b, 2] = a2
        return out


if numba is not None:

    @numba.njit(nogil=True, inline="always")
    def count_draws_among(counts, c, n, s, threshold):
        # c uniform draws among n points (the pairs of _sums_numba_kernel), counted per point
        for _ in range(c // 2):
            j1, j2 = _pair(s, n, threshold)
            counts[j1] += 1
            counts[j2] += 1
        if c % 2 == 1:
            counts[_below(s, n, threshold)] += 1

    @numba.njit(nogil=True, inline="always")
    def _count_draws(counts, size, s, threshold):
        # the draws of _sums_numba_kernel: size draws among size points
        count_draws_among(counts, size, _U64(size), s, threshold)

    @numba.njit(nogil=True, inline="always")
    def count_draws_bits(counts, c, s, bits):
        mask = _U64((1 << bits) - 1)
        b1, b2, b3, b4 = _U64(bits), _U64(2 * bits), _U64(3 * bits), _U64(4 * bits)
        for _ in range(c // 5):
            x = xoshiro_next(s)
            counts[np.int64(x & mask)] += 1
            counts[np.int64((x >> b1) & mask)] += 1
            counts[np.int64((x >> b2) & mask)] += 1
            counts[np.int64((x >> b3) & mask)] += 1
            counts[np.int64((x >> b4) & mask)] += 1
        rest = c % 5
        if rest:
            x = xoshiro_next(s)
            for _ in range(rest):
                counts[np.int64(x & mask)] += 1
                x >>= b1

    @numba.njit(nogil=True, inline="always")
    def _walk(out_b, cols, counts, lo, hi, bounds, pos, cur):
        # points lo..hi (sorted) drawn counts[i - lo] times fill positions pos.. of the
        # sorted resample; equal-count bins are cut at ``bounds``. Returns (pos, cur).
        # cols: (3, M) (zero-padded). The sums of the current bin stay in registers; a point
        # whose copies reach the end of the bin takes the general path.
        n_bins = bounds.shape[0] - 1
        a0 = 0.0
        a1 = 0.0
        a2 = 0.0
        end = bounds[cur + 1]
        for i in range(lo, hi):
            c = counts[i - lo]
            if pos + c < end:  # c = 0 adds +0.0: the same sums, without a branch on c
                a0 += c * cols[0, i]
                a1 += c * cols[1, i]
                a2 += c * cols[2, i]
                pos += c
                continue
            while c > 0:
                take = min(c, end - pos)
                a0 += take * cols[0, i]
                a1 += take * cols[1, i]
                a2 += take * cols[2, i]
                pos += take
                c -= take
                if pos == end and cur < n_bins - 1:
                    out_b[cur, 0] += a0
                    out_b[cur, 1] += a1
                    out_b[cur, 2] += a2
                    a0 = 0.0
                    a1 = 0.0
                    a2 = 0.0
                    cur += 1
                    end = bounds[cur + 1]
        out_b[cur, 0] += a0
        out_b[cur, 1] += a1
        out_b[cur, 2] += a2
        return pos, cur

    @numba.njit(nogil=True)
    def _blocked_binned(cols, bounds, out, b0, b1, seed, blk, bits):
        m = cols.shape[1]
        n_rep = b1 - b0
        counts = block_draw_counts(seed, blk, m, bits, n_rep)
        pos = np.zeros(n_rep, dtype=np.int64)
        cur = np.zeros(n_rep, dtype=np.int64)
        drawn = np.zeros(1 << bits, dtype=np.int64)
        for j in range(counts.shape[1]):
            lo = j << bits
            hi = min(m, lo + (1 << bits))
            s = block_stream(seed, blk, j)
            full = hi - lo == (1 << bits)
            n = _U64(hi - lo)
            threshold = (_U64(0x100000000) - n) % n
            for r in range(n_rep):
                drawn[: hi - lo] = 0
                c = counts[r, j]
                if full:
                    count_draws_bits(drawn, c, s, bits)
                else:
                    count_draws_among(drawn, c, n, s, threshold)
                pos[r], cur[r] = _walk(out[b0 + r], cols, drawn, lo, hi, bounds, pos[r], cur[r])

    @numba.njit(nogil=True, parallel=True, cache=True)
    def _binned_sums_numba_kernel(cols, bounds, n_boot, seed, block, bits, blocked_above):
        k, m = cols.shape
        n_bins = bounds.shape[0] - 1
        n_blocks = (n_boot + block - 1) // block
        out = np.zeros((n_boot, n_bins, k))
        for blk in numba.prange(n_blocks):
            b0 = blk * block
            b1 = min(n_boot, (blk + 1) * block)
            if m > blocked_above:
                _blocked_binned(cols, bounds, out, b0, b1, seed, blk, bits)
                continue
            s = task_stream(seed, blk)
            n = _U64(m)
            threshold = (_U64(0x100000000) - n) % n
            counts = np.zeros(m, dtype=np.int64)
            for b in range(b0, b1):
                counts[:] = 0
                _count_draws(counts, m, s, threshold)
                # walk the sorted points; a point drawn c times fills c positions
                _walk(out[b], cols, counts, 0, m, bounds, 0, 0)
        return out


def _sums_numba_triplets(cols, starts, sizes, n_boot, seeds, blocked_above=BLOCKED_ABOVE):
    """One column alone, else three at a time (zero-padded); every pass redraws the same indices."""
    m, k = cols.shape
    if k in (1, 3):  # no copy
        parts = [cols]
    else:
        width = -(-k // 3) * 3
        padded = np.zeros((m, width))
        padded[:, :k] = cols
        parts = [np.ascontiguousarray(padded[:, c : c + 3]) for c in range(0, width, 3)]
        del padded
    out = [
        _sums_numba_kernel(p, starts, sizes, n_boot, seeds, BLOCK, POINT_BITS, blocked_above)
        for p in parts
    ]
    return (out[0] if len(out) == 1 else np.concatenate(out, axis=-1))[..., :k]


def _binned_sums_numpy(cols, bounds, n_boot, seed):
    m, k = cols.shape
    out = np.empty((n_boot, len(bounds) - 1, k))
    for blk in range(-(-n_boot // BLOCK)):
        b0, b1 = blk * BLOCK, min(n_boot, (blk + 1) * BLOCK)
        # sorting the drawn indices sorts the resample by the binning variable,
        # ties (and repeated draws) kept in data order
        idx = np.sort(block_generator(seed, blk).integers(0, m, size=(b1 - b0, m)), axis=1)
        out[b0:b1] = np.add.reduceat(cols[idx], bounds[:-1], axis=1)
    return out


def binned_resample_sums(cols, bounds, n_boot, seed, *, engine=None):
    """Per-bin column sums of bootstrap resamples, re-binned by equal counts.

    Parameters
    ----------
    cols : ndarray, shape (M, k)
        Columns of the points sorted by the binning variable.
    bounds : array_like of int, shape (n_bins + 1,)
        Bin bounds in positions, from 0 to M.
    n_boot : int
    seed : int
    engine : {"numba", "numpy"}, optional

    Returns
    -------
    ndarray, shape (B, n_bins, k)

    Examples
    --------
    >>> binned_resample_sums(np.ones((10, 1)), [0, 5, 10], 2, seed=1)[:, :, 0].tolist()
    [[5.0, 5.0], [5.0, 5.0]]
    """
    cols = np.ascontiguousarray(cols, dtype=np.float64)
    bounds = np.ascontiguousarray(bounds, dtype=np.int64)
    if (
        cols.ndim != 2
        or bounds[0] != 0
        or bounds[-1] != cols.shape[0]
        or np.any(np.diff(bounds) < 1)
    ):
        raise ValueError("bounds must increase strictly from 0 to the number of points")
    n_boot = checks.count("n_boot", n_boot, minimum=1)
    seed = int(group_seeds(seed, 1)[0]) if np.ndim(seed) == 0 else int(seed[0])
    engine = resolve_engine(engine)
    if engine == "numba":
        k = cols.shape[1]
        padded = np.zeros((-(-k // 3) * 3, cols.shape[0]))  # (3 j, M): three rows per pass
        padded[:k] = cols.T
        out = [
            _binned_sums_numba_kernel(
                padded[r : r + 3], bounds, n_boot, np.uint64(seed), BLOCK, POINT_BITS, BLOCKED_ABOVE
            )
            for r in range(0, padded.shape[0], 3)
        ]
        return (out[0] if len(out) == 1 else np.concatenate(out, axis=-1))[..., :k]
    return _binned_sums_numpy(cols, bounds, n_boot, seed)


#: the resampling engines (the ``engine`` option)
ENGINES = ("numba", "numpy")


def resolve_engine(engine, *, name: str = "engine") -> str:
    """The ``engine`` option resolved: None is :func:`default_engine`; "numba" needs numba.

    The one check of the option (re-exported as :func:`uqviz.engine.checks.engine`).

    Examples
    --------
    >>> resolve_engine("numpy")
    'numpy'
    """
    engine = default_engine() if engine is None else checks.choice(name, engine, ENGINES)
    if engine == "numba" and numba is None:
        raise ValueError(
            f"{name}='numba' needs numba installed (pip install numba); use {name}='numpy' or None"
        )
    return engine


def group_seeds(seed, n_groups):
    """One uint64 seed per group: given as an array, or derived from one integer.

    Examples
    --------
    >>> group_seeds(1, 3).shape
    (3,)
    """
    if np.ndim(seed) == 0:
        return np.random.SeedSequence(int(seed)).generate_state(n_groups, np.uint64)
    seeds = np.ascontiguousarray(seed, dtype=np.uint64)
    if seeds.shape != (n_groups,):
        raise ValueError(f"need one seed per group ({n_groups}), got shape {seeds.shape}")
    return seeds


def resample_sums(cols, n_boot, seed, *, starts=None, sizes=None, engine=None, blocked_above=None):
    """Sums of the columns over bootstrap resamples of the points of each group.

    Parameters
    ----------
    cols : ndarray, shape (M, k)
    n_boot : int
    seed : int or array_like of uint64, shape (G,)
        One seed, or one seed per group (a group's results then do not depend on the others).
    starts, sizes : array_like of int, optional
        Contiguous groups of rows; default one group.
    engine : {"numba", "numpy"}, optional
    blocked_above : int, optional
        numba: groups of more points are resampled block by block (binomial counts per
        block of ``2**POINT_BITS`` points); default :data:`BLOCKED_ABOVE`. Another value
        gives the same distribution, other numbers (``adversarial_validation`` blocks its
        large groups, faster for 1 000 replicates).

    Returns
    -------
    ndarray, shape (G, B, k)

    Examples
    --------
    >>> resample_sums(np.arange(6.0).reshape(3, 2), 4, seed=1).shape
    (1, 4, 2)
    """
    cols = np.ascontiguousarray(cols, dtype=np.float64)
    if cols.ndim != 2:
        raise ValueError(f"cols must have shape (M, k), got {cols.shape}")
    if starts is None:
        starts, sizes = np.array([0]), np.array([cols.shape[0]])
    starts = np.ascontiguousarray(starts, dtype=np.int64)
    sizes = np.ascontiguousarray(sizes, dtype=np.int64)
    if np.any(sizes < 1):
        raise ValueError("every group needs at least one point")
    if np.any(starts + sizes > cols.shape[0]) or np.any(starts < 0):
        raise ValueError("groups fall outside the rows of cols")
    n_boot = checks.count("n_boot", n_boot, minimum=1)
    seeds = group_seeds(seed, len(sizes))
    if resolve_engine(engine) == "numba":
        return _sums_numba_triplets(
            cols,
            starts,
            sizes,
            n_boot,
            seeds,
            BLOCKED_ABOVE if blocked_above is None else int(blocked_above),
        )
    return _sums_numpy(cols, starts, sizes, n_boot, seeds)
