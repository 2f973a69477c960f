"""Kernels of the comparison of models: paired bootstrap sums of many columns, the
systematic improvement probability and the ranking probabilities.

:func:`paired_column_sums` gives the sums of :func:`uqviz._array.resample.resample_sums`
(the same resamples: the same seed draws the same points, engine by engine) but draws the
points once per replicate for all columns: each task counts how many times each point is
drawn (the draws of ``resample_sums``, in its order) and adds ``count * row`` for every
column at once, instead of drawing the points again for every three columns. The sums
equal those of ``resample_sums`` to rounding (other order of addition).

Examples
--------
>>> cols = np.arange(12.0).reshape(6, 2)
>>> s = paired_column_sums(cols, 4, 7, engine="numpy")
>>> s.shape
(4, 2)
>>> from uqviz._array.resample import resample_sums
>>> bool(np.allclose(s, resample_sums(cols, 4, 7, engine="numpy")[0]))
True
>>> sip, gain, loss = improvement(np.array([[1.0, 2.0, 3.0], [2.0, 2.0, 1.0]]))
>>> sip.tolist()
[[0.0, 0.3333333333333333], [0.3333333333333333, 0.0]]
"""

from __future__ import annotations

import numpy as np

from uqviz._array.jit import HAVE_NUMBA, njit, prange, uint64
from uqviz._array.resample import (
    BLOCK,
    BLOCKED_ABOVE,
    POINT_BITS,
    block_generator,
    group_seeds,
    resample_sums,
    resolve_engine,
)

try:  # limits BLAS to one thread inside the numba kernel (a dependency of uqviz)
    from threadpoolctl import threadpool_limits
except ImportError:  # pragma: no cover
    threadpool_limits = None

if HAVE_NUMBA:
    from uqviz._array.resample import (
        block_draw_counts,
        block_stream,
        count_draws_among,
        count_draws_bits,
        task_stream,
    )

__all__ = ["paired_column_sums", "improvement", "rank_probabilities"]

_U64 = uint64


# ------------------------------------------------------------------ numba ---
if HAVE_NUMBA:

    @njit(nogil=True, parallel=True, cache=True)
    def _count_sums_kernel(cols, n_boot, seed, block, bits, blocked_above):
        # the draws of resample._sums_numba_kernel for one group (same streams, same order),
        # counted per point, block of points by block; every column summed at once with the
        # counts: a matrix product of the counts of the task's replicates with the block's rows
        m, k = cols.shape
        n_blocks = (n_boot + block - 1) // block
        out = np.zeros((n_boot, k))
        for blk in prange(n_blocks):
            b0 = blk * block
            b1 = min(n_boot, (blk + 1) * block)
            n_rep = b1 - b0
            acc = np.zeros((n_rep, k))
            if m > blocked_above:
                counts = block_draw_counts(seed, blk, m, bits, n_rep)
                drawn = np.zeros((n_rep, 1 << bits))
                for j in range(counts.shape[1]):
                    lo = j << bits
                    hi = min(m, lo + (1 << bits))
                    s = block_stream(seed, blk, j)
                    full = hi - lo == (1 << bits)
                    n = _U64(hi - lo)
                    threshold = (_U64(0x100000000) - n) % n
                    drawn[:, :] = 0.0
                    for r in range(n_rep):
                        if full:
                            count_draws_bits(drawn[r], counts[r, j], s, bits)
                        else:
                            count_draws_among(drawn[r], counts[r, j], n, s, threshold)
                    if full:
                        acc += np.dot(drawn, cols[lo:hi])
                    else:
                        acc += np.dot(np.ascontiguousarray(drawn[:, : hi - lo]), cols[lo:hi])
            else:
                s = task_stream(seed, blk)
                n = _U64(m)
                threshold = (_U64(0x100000000) - n) % n
                drawn = np.zeros((n_rep, m))
                for r in range(n_rep):
                    count_draws_among(drawn[r], m, n, s, threshold)
                acc += np.dot(drawn, cols)
            out[b0:b1] = acc
        return out


# ------------------------------------------------------------------ numpy ---
def _count_sums_numpy(cols, n_boot, seed):
    # the draws of resample._sums_numpy (PCG64 per block of BLOCK replicates), as counts
    m = cols.shape[0]
    out = np.empty((n_boot, cols.shape[1]))
    for blk in range(-(-n_boot // BLOCK)):
        b0, b1 = blk * BLOCK, min(n_boot, (blk + 1) * BLOCK)
        idx = block_generator(seed, blk).integers(0, m, size=(b1 - b0, m))
        flat = idx + (np.arange(b1 - b0) * m)[:, None]
        counts = np.bincount(flat.ravel(), minlength=(b1 - b0) * m).reshape(b1 - b0, m)
        out[b0:b1] = counts.astype(float) @ cols
    return out


def paired_column_sums(cols, n_boot, seed, *, engine=None):
    """Sums of every column over ``n_boot`` bootstrap resamples of the rows, the same
    resamples as :func:`uqviz._array.resample.resample_sums` (one group).

    Parameters
    ----------
    cols : ndarray, shape (M, C)
        Per-point columns (any number: the draws are made once for all of them).
    n_boot : int
        Replicates.
    seed : int
        The seed of ``resample_sums``.
    engine : {"numba", "numpy"}, optional
        The draws of that engine of ``resample_sums`` (default numba when installed).

    Returns
    -------
    ndarray, shape (n_boot, C)

    Examples
    --------
    >>> paired_column_sums(np.ones((5, 3)), 2, 1).tolist()
    [[5.0, 5.0, 5.0], [5.0, 5.0, 5.0]]
    """
    cols = np.ascontiguousarray(cols, dtype=np.float64)
    if cols.ndim != 2 or cols.shape[0] < 1:
        raise ValueError(f"cols must have shape (M, C) with M >= 1, got {cols.shape}")
    engine = resolve_engine(engine)
    if engine == "numba":
        if threadpool_limits is None:  # BLAS threads inside numba's threads: oversubscribed
            return resample_sums(cols, n_boot, seed, engine="numba")[0]
        s = group_seeds(seed, 1)[0]
        with threadpool_limits(1, user_api="blas"):  # one BLAS thread per numba thread
            return _count_sums_kernel(cols, int(n_boot), s, BLOCK, POINT_BITS, BLOCKED_ABOVE)
    return _count_sums_numpy(cols, int(n_boot), int(group_seeds(seed, 1)[0]))


def improvement(values):
    r"""Systematic improvement probability, mean gain and mean loss of every pair of models.

    Parameters
    ----------
    values : ndarray, shape (K, M)
        Per-point values of K models on the same M points, negatively oriented (smaller
        is better).

    Returns
    -------
    sip, mean_gain, mean_loss : ndarray, shape (K, K)
        ``sip[a, b]`` = share of points where ``values[a] < values[b]`` (a improves on b;
        ties count for neither); ``mean_gain[a, b]`` = mean of ``values[b] - values[a]``
        (> 0) over those points, ``mean_loss[a, b]`` = mean of ``values[b] - values[a]``
        (< 0) over the points where a is worse; 0 where there is no such point (the
        diagonal). Hence ``mean(values[b] - values[a]) = sip[a, b] mean_gain[a, b] +
        sip[b, a] mean_loss[a, b]``.

    Examples
    --------
    >>> sip, gain, loss = improvement(np.array([[1.0, 1.0, 4.0], [2.0, 1.0, 3.0]]))
    >>> float(sip[0, 1]), float(gain[0, 1]), float(loss[0, 1])
    (0.3333333333333333, 1.0, -1.0)
    """
    v = np.asarray(values, dtype=float)
    k, m = v.shape
    sip = np.zeros((k, k))
    gain = np.zeros((k, k))
    loss = np.zeros((k, k))
    for a in range(k):
        for b in range(a + 1, k):
            d = v[b] - v[a]  # > 0: a better
            up, down = d > 0, d < 0
            n_up, n_down = int(np.count_nonzero(up)), int(np.count_nonzero(down))
            sip[a, b], sip[b, a] = n_up / m, n_down / m
            g = float(d[up].sum()) / n_up if n_up else 0.0
            lo = float(d[down].sum()) / n_down if n_down else 0.0
            gain[a, b], loss[a, b] = g, lo
            gain[b, a], loss[b, a] = -lo, -g
    return sip, gain, loss


def rank_probabilities(replicates):
    """Share of the replicates in which each model has each rank (1 = smallest value).

    Parameters
    ----------
    replicates : ndarray, shape (K, B)
        A negatively oriented statistic of K models in B bootstrap replicates.

    Returns
    -------
    ndarray, shape (K, K)
        ``p[k, r - 1]`` = probability of rank r for model k. Models tied in a replicate
        share the ranks they span equally (two models tied for first get 1/2 of rank 1 and
        1/2 of rank 2 each), so every row and every column sums to 1. NaN replicates (of
        any model) are left out.

    Examples
    --------
    >>> rank_probabilities(np.array([[1.0, 1.0, 3.0, 0.0], [2.0, 1.0, 2.0, 5.0]])).tolist()
    [[0.625, 0.375], [0.375, 0.625]]
    """
    x = np.asarray(replicates, dtype=float)
    k = x.shape[0]
    x = x[:, np.all(np.isfinite(x), axis=0)]
    if x.shape[1] == 0:
        return np.full((k, k), np.nan)
    # smallest and largest rank of each model in each replicate (ties span several)
    less = (x[:, None, :] < x[None, :, :]).sum(axis=0)  # [j, b]: models below j
    equal = (x[:, None, :] == x[None, :, :]).sum(axis=0)
    rmin = less + 1
    rmax = less + equal
    share = 1.0 / equal
    ranks = np.arange(1, k + 1)[:, None, None]
    inside = (rmin[None] <= ranks) & (ranks <= rmax[None])  # [r, j, b]
    return (inside * share[None]).mean(axis=2).T
