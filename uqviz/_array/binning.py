"""Binning kernels (numpy, no xarray): orderings and contiguous bins.

Every scheme returns an *ordering* of the points (a permutation) and the
``starts``/``sizes`` of contiguous bins in that ordering, so that the
bootstrap can resample each bin on its own (see ``resample.resample_sums``).
"""

from __future__ import annotations

import numpy as np


def stable_order(x, rng=None):
    """Permutation sorting ``x`` ascending; ties keep the data's order.

    With ``rng`` the order of ties is randomised (a random permutation is
    applied before the stable sort), everything else unchanged.

    Examples
    --------
    >>> stable_order(np.array([2.0, 1.0, 2.0, 0.5])).tolist()
    [3, 1, 0, 2]
    """
    x = np.asarray(x)
    if rng is None:
        return np.argsort(x, kind="stable")
    perm = np.random.default_rng(rng).permutation(x.size)
    return perm[np.argsort(x[perm], kind="stable")]


def equal_count_bounds(m, n_bins):
    """Bounds of ``n_bins`` equal-count bins over ``m`` sorted points: ``floor(k m / n + 0.5)``.

    Bin k holds the sorted positions ``bounds[k]`` to ``bounds[k + 1] - 1``
    (halves rounded up), the split of the authors' R library ErrViewLib. The
    one implementation of equal-count bins in uqviz.

    Examples
    --------
    >>> equal_count_bounds(10, 4).tolist()
    [0, 3, 5, 8, 10]
    """
    m, n_bins = int(m), int(n_bins)
    if not 1 <= n_bins <= m:
        raise ValueError(f"n_bins must be between 1 and the number of points M = {m}, "
                         f"got n_bins = {n_bins}")
    return np.floor(np.arange(n_bins + 1) * m / n_bins + 0.5).astype(np.int64)


def equal_count_starts(m, n_bins):
    """Starts and sizes of ``n_bins`` equal-count bins over ``m`` sorted points.

    See :func:`equal_count_bounds`.

    Examples
    --------
    >>> equal_count_starts(10, 4)
    (array([0, 3, 5, 8]), array([3, 2, 3, 2]))
    """
    bounds = equal_count_bounds(m, n_bins)
    return bounds[:-1], np.diff(bounds)


def split_ties(sorted_x, starts):
    """Tie groups cut by bin boundaries: their number and the points they hold.

    Parameters
    ----------
    sorted_x : ndarray, shape (M,)
        Values in bin order (ascending).
    starts : ndarray of int
        Start of each contiguous bin.

    Returns
    -------
    n_groups, n_points : int
        Groups of equal values that straddle at least one boundary, and their size.

    Examples
    --------
    >>> split_ties(np.array([0.0, 0.0, 0.0, 1.0, 1.0, 2.0]), np.array([0, 2, 4]))
    (2, 5)
    """
    sorted_x = np.asarray(sorted_x)
    cuts = np.asarray(starts)[1:]
    cuts = cuts[sorted_x[cuts - 1] == sorted_x[cuts]]
    if cuts.size == 0:
        return 0, 0
    values, counts = np.unique(sorted_x, return_counts=True)
    cut_values = np.unique(sorted_x[cuts])
    return int(cut_values.size), int(counts[np.isin(values, cut_values)].sum())


def _merge_small(counts, min_count):
    """Merge groups below ``min_count`` with their smaller neighbour, repeatedly.

    Returns the group index (into the merged list) of each original group. The
    smallest under-populated group is merged first (the leftmost on ties), with
    its smaller neighbour (the left one on ties).
    """
    groups = [[i] for i in range(len(counts))]
    sizes = list(np.asarray(counts, dtype=np.int64))
    while len(sizes) > 1 and min(sizes) < min_count:
        i = int(np.argmin(sizes))
        left = sizes[i - 1] if i > 0 else np.inf
        right = sizes[i + 1] if i + 1 < len(sizes) else np.inf
        j = i - 1 if left <= right else i + 1
        a, b = min(i, j), max(i, j)
        groups[a] = groups[a] + groups[b]
        sizes[a] = sizes[a] + sizes[b]
        del groups[b], sizes[b]
    label = np.empty(len(counts), dtype=np.int64)
    for g, members in enumerate(groups):
        label[members] = g
    return label


def stratified_labels(x, min_count=100):
    """Bin label of each point: one stratum per distinct value, small strata merged.

    Strata (distinct values, ascending) with fewer than ``min_count`` points
    are merged with their smaller neighbour until none is left.

    Examples
    --------
    >>> stratified_labels(np.array([0.0, 0.0, 1.0, 2.0, 2.0, 2.0]), min_count=2).tolist()
    [0, 0, 0, 1, 1, 1]
    """
    values, inverse, counts = np.unique(x, return_inverse=True, return_counts=True)
    return _merge_small(counts, min_count)[inverse]


def width_edges(x, n_bins, *, log=False):
    """``n_bins + 1`` equal-width edges between min(x) and max(x) (log-spaced with ``log``).

    Examples
    --------
    >>> width_edges(np.array([0.0, 1.0, 4.0]), 2).tolist()
    [0.0, 2.0, 4.0]
    """
    x = np.asarray(x, dtype=float)
    lo, hi = x.min(), x.max()
    if log:
        if lo <= 0:
            raise ValueError(f"log-spaced bins need positive values; min is {lo}")
        return np.geomspace(lo, hi, n_bins + 1)
    return np.linspace(lo, hi, n_bins + 1)


def edge_labels(x, edges):
    """Label of each point for bins [e0, e1), ..., [e_{n-1}, e_n] (last one closed).

    Points outside [e0, e_n] get label -1.

    Examples
    --------
    >>> edge_labels(np.array([0.0, 0.5, 1.0, 2.0, 3.0]), [0.0, 1.0, 2.0]).tolist()
    [0, 0, 1, 1, -1]
    """
    x = np.asarray(x, dtype=float)
    edges = np.asarray(edges, dtype=float)
    if edges.ndim != 1 or edges.size < 2 or np.any(np.diff(edges) <= 0):
        raise ValueError("edges must be a strictly increasing 1-D array of length >= 2")
    lab = np.searchsorted(edges, x, side="right") - 1
    lab[x == edges[-1]] = edges.size - 2
    lab[(x < edges[0]) | (x > edges[-1])] = -1
    return lab


def merge_labels(labels, min_count):
    """Relabel so that bins below ``min_count`` are merged with their smaller neighbour.

    Empty bins are dropped first; labels stay ordered.

    Examples
    --------
    >>> merge_labels(np.array([0, 0, 0, 1, 3, 3, 3]), 2).tolist()
    [0, 0, 0, 0, 1, 1, 1]
    """
    used, inverse, counts = np.unique(labels, return_inverse=True, return_counts=True)
    return _merge_small(counts, min_count)[inverse]


def labels_to_groups(labels, order_within=None):
    """Ordering and contiguous ``starts``/``sizes`` from bin labels 0..n-1.

    Points keep ``order_within`` (default: data order) inside each bin.

    Examples
    --------
    >>> order, starts, sizes = labels_to_groups(np.array([1, 0, 1, 0]))
    >>> order.tolist(), starts.tolist(), sizes.tolist()
    ([1, 3, 0, 2], [0, 2], [2, 2])
    """
    labels = np.asarray(labels)
    base = np.arange(labels.size) if order_within is None else np.asarray(order_within)
    order = base[np.argsort(labels[base], kind="stable")]
    sizes = np.bincount(labels, minlength=labels.max() + 1).astype(np.int64)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
    return order, starts, sizes
