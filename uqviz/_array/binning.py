"""Binning kernels (numpy): an ordering of the points and contiguous bins in it.

Examples
--------
>>> stable_order(np.array([2.0, 1.0, 2.0, 0.5])).tolist()
[3, 1, 0, 2]
>>> equal_count_bounds(10, 4).tolist(), [s.tolist() for s in equal_count_starts(10, 4)]
([0, 3, 5, 8, 10], [[0, 3, 5, 8], [3, 2, 3, 2]])
>>> split_ties(np.array([0.0, 0.0, 0.0, 1.0, 1.0, 2.0]), np.array([0, 2, 4]))
(2, 5)
>>> stratified_labels(np.array([0.0, 0.0, 1.0, 2.0, 2.0, 2.0]), min_count=2).tolist()
[0, 0, 0, 1, 1, 1]
>>> width_edges(np.array([0.0, 1.0, 4.0]), 2).tolist()
[0.0, 2.0, 4.0]
>>> edge_labels(np.array([0.0, 0.5, 1.0, 2.0, 3.0]), [0.0, 1.0, 2.0]).tolist()
[0, 0, 1, 1, -1]
>>> merge_labels(np.array([0, 0, 0, 1, 3, 3, 3]), 2).tolist()
[0, 0, 0, 0, 1, 1, 1]
>>> [a.tolist() for a in labels_to_groups(np.array([1, 0, 1, 0]))]
[[1, 3, 0, 2], [0, 2], [2, 2]]
"""

from __future__ import annotations

import heapq

import numpy as np


def stable_order(x, rng=None):
    """Permutation sorting ``x`` ascending; ties in data order, or random order with ``rng``."""
    x = np.asarray(x)
    if rng is None:
        return np.argsort(x, kind="stable")
    perm = np.random.default_rng(rng).permutation(x.size)
    return perm[np.argsort(x[perm], kind="stable")]


def equal_count_bounds(m, n_bins):
    """Bounds ``floor(k m / n_bins + 0.5)`` of equal-count bins: the one implementation in uqviz."""
    m, n_bins = int(m), int(n_bins)
    if not 1 <= n_bins <= m:
        raise ValueError(
            f"n_bins must be between 1 and the number of points M = {m}, got n_bins = {n_bins}"
        )
    return np.floor(np.arange(n_bins + 1) * m / n_bins + 0.5).astype(np.int64)


def equal_count_starts(m, n_bins):
    """Starts and sizes of ``n_bins`` equal-count bins over ``m`` sorted points."""
    bounds = equal_count_bounds(m, n_bins)
    return bounds[:-1], np.diff(bounds)


def split_ties(sorted_x, starts):
    """Number of tie groups cut by bin boundaries, and the points they hold."""
    sorted_x = np.asarray(sorted_x)
    cuts = np.asarray(starts)[1:]
    cuts = cuts[sorted_x[cuts - 1] == sorted_x[cuts]]
    if cuts.size == 0:
        return 0, 0
    values, counts = np.unique(sorted_x, return_counts=True)
    cut_values = np.unique(sorted_x[cuts])
    return int(cut_values.size), int(counts[np.isin(values, cut_values)].sum())


def _merge_small(counts, min_count):
    """Group label after merging groups below ``min_count`` with their smaller neighbour.

    Repeatedly the smallest group (the leftmost among equal sizes) is merged with its smaller
    neighbour (the left one on a tie), until every group holds ``min_count`` or one is left.
    A heap of (size, first member) with a linked list of groups: O(n log n).
    """
    n = len(counts)
    if n == 0:
        return np.empty(0, dtype=np.int64)
    size = [int(c) for c in counts]
    left = list(range(-1, n - 1))
    right = list(range(1, n)) + [-1]
    alive = [True] * n
    heap = [(size[i], i) for i in range(n)]
    heapq.heapify(heap)
    groups = n
    while groups > 1 and heap:
        s, i = heapq.heappop(heap)
        if not alive[i] or s != size[i]:
            continue  # stale entry
        if s >= min_count:
            break
        lo = size[left[i]] if left[i] >= 0 else np.inf
        hi = size[right[i]] if right[i] >= 0 else np.inf
        a, b = (left[i], i) if lo <= hi else (i, right[i])
        size[a] += size[b]
        alive[b] = False
        right[a] = right[b]
        if right[b] >= 0:
            left[right[b]] = a
        groups -= 1
        heapq.heappush(heap, (size[a], a))
    label = np.empty(n, dtype=np.int64)
    g = -1
    for i in range(n):
        if alive[i]:
            g += 1
        label[i] = g
    return label


def stratified_labels(x, min_count=100):
    """Bin label per point: one stratum per distinct value, strata below ``min_count`` merged."""
    values, inverse, counts = np.unique(x, return_inverse=True, return_counts=True)
    return _merge_small(counts, min_count)[inverse]


def width_edges(x, n_bins, *, log=False):
    """``n_bins + 1`` equal-width (or log-spaced) edges between min(x) and max(x)."""
    x = np.asarray(x, dtype=float)
    lo, hi = x.min(), x.max()
    if log:
        if lo <= 0:
            raise ValueError(f"log-spaced bins need positive values; min is {lo}")
        return np.geomspace(lo, hi, n_bins + 1)
    return np.linspace(lo, hi, n_bins + 1)


def edge_labels(x, edges):
    """Bin label per point for bins [e0, e1), ..., [e_{n-1}, e_n]; -1 outside."""
    x = np.asarray(x, dtype=float)
    edges = np.asarray(edges, dtype=float)
    if edges.ndim != 1 or edges.size < 2 or np.any(np.diff(edges) <= 0):
        raise ValueError("edges must be a strictly increasing 1-D array of length >= 2")
    lab = np.searchsorted(edges, x, side="right") - 1
    lab[x == edges[-1]] = edges.size - 2
    lab[(x < edges[0]) | (x > edges[-1])] = -1
    return lab


def merge_labels(labels, min_count):
    """Drop empty bins and merge bins below ``min_count`` with their smaller neighbour."""
    used, inverse, counts = np.unique(labels, return_inverse=True, return_counts=True)
    return _merge_small(counts, min_count)[inverse]


def labels_to_groups(labels, order_within=None):
    """Ordering and contiguous ``starts``/``sizes`` from bin labels 0..n-1."""
    labels = np.asarray(labels)
    base = np.arange(labels.size) if order_within is None else np.asarray(order_within)
    order = base[np.argsort(labels[base], kind="stable")]
    sizes = np.bincount(labels, minlength=labels.max() + 1).astype(np.int64)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
    return order, starts, sizes
