"""Bootstrap resampling of column sums, in numba (parallel) or numpy, without an M x B index array.

Work is split into tasks (one group x one block of ``BLOCK`` replicates), each
with a stream derived from (group seed, block) only, so results do not depend
on threads or scheduling. numba: xoshiro256** (Blackman & Vigna (2021)) with
unbiased integers (Lemire (2019)); numpy: PCG64 per task, same distribution,
other numbers.
"""

from __future__ import annotations

import os

import numpy as np

from uqviz.engine import checks

BLOCK = 32  # replicates per task; fixed so results do not depend on threads

try:  # numba is a hard dependency, but keep a working fallback
    import numba

    HAVE_NUMBA = os.environ.get("UQVIZ_DISABLE_NUMBA", "0") != "1"
except ImportError:  # pragma: no cover - exercised only without numba
    numba = None
    HAVE_NUMBA = False


def default_engine() -> str:
    """The engine used when ``engine=None``: numba when available.

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

    @numba.njit(inline="always")
    def _rotl(x, k):
        return (x << _U64(k)) | (x >> _U64(64 - k))

    @numba.njit(inline="always")
    def _splitmix64(x):
        x = x + _U64(0x9E3779B97F4A7C15)
        z = x
        z = (z ^ (z >> _U64(30))) * _U64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> _U64(27))) * _U64(0x94D049BB133111EB)
        return x, z ^ (z >> _U64(31))

    @numba.njit(inline="always")
    def _next(s):
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

    @numba.njit(inline="always")
    def _seed_state(seed, blk):
        # the xoshiro256** state of one task: SplitMix64 of seed ^ (blk * odd constant)
        s = np.empty(4, dtype=np.uint64)
        x = seed ^ (_U64(blk) * _U64(0xD1B54A32D192ED03))
        for i in range(4):
            x, s[i] = _splitmix64(x)
        return s

    @numba.njit(inline="always")
    def _below(s, n, threshold):
        # one unbiased integer in [0, n): Lemire's multiply-shift with rejection
        mask = _U64(0xFFFFFFFF)
        m = (_next(s) >> _U64(32)) * n
        while (m & mask) < threshold:
            m = (_next(s) >> _U64(32)) * n
        return np.int64(m >> _U64(32))

    @numba.njit(inline="always")
    def _pair(s, n, threshold):
        # Two 32-bit uniforms per 64-bit output, each mapped to [0, n) by
        # Lemire's multiply-shift. A pair with a biased low word (probability
        # < 2 n / 2**32) is replaced by two draws with rejection, so every
        # index is exactly uniform.
        mask = _U64(0xFFFFFFFF)
        r = _next(s)
        m1 = (r >> _U64(32)) * n
        m2 = (r & mask) * n
        if (m1 & mask) >= threshold and (m2 & mask) >= threshold:
            return np.int64(m1 >> _U64(32)), np.int64(m2 >> _U64(32))
        return _below(s, n, threshold), _below(s, n, threshold)

    @numba.njit(parallel=True, cache=True)
    def _sums_numba_kernel(cols, starts, sizes, n_boot, seeds, block):
        # cols: (M, 3) row-major, so the three values of a drawn point share a
        # cache line; three scalar accumulators stay in registers (measured
        # about 2x faster than an accumulator array over separate columns).
        n_groups = sizes.shape[0]
        n_blocks = (n_boot + block - 1) // block
        out = np.zeros((n_groups, n_boot, 3))
        for t in numba.prange(n_groups * n_blocks):
            g = t // n_blocks
            blk = t - g * n_blocks
            s = _seed_state(seeds[g], blk)
            size = sizes[g]
            n = _U64(size)
            threshold = (_U64(0x100000000) - n) % n
            grp = cols[starts[g]:starts[g] + size]
            for b in range(blk * block, min(n_boot, (blk + 1) * block)):
                a0 = 0.0
                a1 = 0.0
                a2 = 0.0
                for _ in range(size // 2):
                    j1, j2 = _pair(s, n, threshold)
                    a0 += grp[j1, 0] + grp[j2, 0]
                    a1 += grp[j1, 1] + grp[j2, 1]
                    a2 += grp[j1, 2] + grp[j2, 2]
                if size % 2 == 1:
                    j1 = _below(s, n, threshold)
                    a0 += grp[j1, 0]
                    a1 += grp[j1, 1]
                    a2 += grp[j1, 2]
                out[g, b, 0] = a0
                out[g, b, 1] = a1
                out[g, b, 2] = a2
        return out


if numba is not None:

    @numba.njit(inline="always")
    def _count_draws(counts, size, s, threshold):
        # the draws of _sums_numba_kernel, counting how often each point is drawn
        n = _U64(size)
        for _ in range(size // 2):
            j1, j2 = _pair(s, n, threshold)
            counts[j1] += 1
            counts[j2] += 1
        if size % 2 == 1:
            counts[_below(s, n, threshold)] += 1

    @numba.njit(parallel=True, cache=True)
    def _binned_sums_numba_kernel(cols, bounds, n_boot, seed, block):
        k, m = cols.shape
        n_bins = bounds.shape[0] - 1
        n_blocks = (n_boot + block - 1) // block
        out = np.zeros((n_boot, n_bins, k))
        for blk in numba.prange(n_blocks):
            s = _seed_state(seed, blk)
            n = _U64(m)
            threshold = (_U64(0x100000000) - n) % n
            counts = np.zeros(m, dtype=np.int64)
            for b in range(blk * block, min(n_boot, (blk + 1) * block)):
                counts[:] = 0
                _count_draws(counts, m, s, threshold)
                # walk the sorted points; a point drawn c times fills c positions
                pos = 0
                cur = 0
                for i in range(m):
                    c = counts[i]
                    while c > 0:
                        take = min(c, bounds[cur + 1] - pos)
                        for j in range(k):
                            out[b, cur, j] += take * cols[j, i]
                        pos += take
                        c -= take
                        if pos == bounds[cur + 1] and cur < n_bins - 1:
                            cur += 1
        return out


def _sums_numba_triplets(cols, starts, sizes, n_boot, seeds):
    """Columns three at a time (zero-padded); every pass redraws the same indices."""
    m, k = cols.shape
    width = -(-k // 3) * 3
    padded = np.zeros((m, width))
    padded[:, :k] = cols
    parts = [_sums_numba_kernel(np.ascontiguousarray(padded[:, c:c + 3]), starts, sizes,
                                n_boot, seeds, BLOCK) for c in range(0, width, 3)]
    return np.concatenate(parts, axis=-1)[..., :k]


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
    if (cols.ndim != 2 or bounds[0] != 0 or bounds[-1] != cols.shape[0]
            or np.any(np.diff(bounds) < 1)):
        raise ValueError("bounds must increase strictly from 0 to the number of points")
    n_boot = checks.count("n_boot", n_boot, minimum=1)
    seed = int(group_seeds(seed, 1)[0]) if np.ndim(seed) == 0 else int(seed[0])
    engine = _engine(engine)
    if engine == "numba":
        return _binned_sums_numba_kernel(np.ascontiguousarray(cols.T), bounds, n_boot,
                                         np.uint64(seed), BLOCK)
    return _binned_sums_numpy(cols, bounds, n_boot, seed)


def _engine(engine):
    engine = default_engine() if engine is None else checks.choice("engine", engine,
                                                                   ("numba", "numpy"))
    if engine == "numba" and numba is None:  # pragma: no cover
        raise ValueError("engine='numba' needs numba installed")
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


def resample_sums(cols, n_boot, seed, *, starts=None, sizes=None, engine=None):
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
    if _engine(engine) == "numba":
        return _sums_numba_triplets(cols, starts, sizes, n_boot, seeds)
    return _sums_numpy(cols, starts, sizes, n_boot, seeds)
