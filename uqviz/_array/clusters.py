"""The cluster bootstrap: whole groups of points (structures, molecules) resampled together.

Points of one group share their errors (the force components of one structure), so a bootstrap
over points gives intervals too narrow by the design effect 1 + (m - 1) rho (Cameron & Miller
(2015)); resampling whole groups keeps the dependence inside them (Davison & Hinkley (1997),
section 3.8, "Hierarchical data").

Moment statistics are functions of column means. Per bin (a contiguous run of points, the
``starts``/``sizes`` of :func:`uqviz._array.resample.resample_sums`), the points of one group
are summed into one aggregated row, with the group's point count as one more column; the
resampling engine draws these rows with replacement as it draws points, and a replicate's means
are its column sums over its count. So the cluster bootstrap has the engine's streams (the same
numbers on any number of threads or dask workers) and costs O(M) once plus O(G B).

The BCa acceleration comes from the delete-one-group jackknife (Davison & Hinkley (1997),
section 3.8), its values ``f(means without group g)``.

Examples
--------
>>> codes, n = group_codes(["b", "a", "b", "c"])
>>> codes.tolist(), n
([0, 1, 0, 2], 3)
>>> agg = aggregate(np.arange(8.0).reshape(4, 2), codes)
>>> agg.sums.tolist(), agg.counts.tolist(), agg.sizes.tolist()
([[4.0, 6.0], [2.0, 3.0], [6.0, 7.0]], [2.0, 1.0, 1.0], [3])
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from uqviz._array import bca
from uqviz._array.resample import resample_sums

JACKKNIFE_BLOCKS = 1000  # generic statistics: above this many groups, delete blocks of groups


def group_codes(labels):
    """Integer codes 0..G-1 of group labels, in order of first appearance.

    Parameters
    ----------
    labels : array_like, shape (M,)
        One label per point (int, str or any hashable); NaN or None is refused.

    Returns
    -------
    codes : ndarray of int64, shape (M,)
    n_groups : int

    Examples
    --------
    >>> group_codes([7, 7, 3])[0].tolist()
    [0, 0, 1]
    """
    labels = np.asarray(labels)
    if labels.ndim != 1:
        raise ValueError(f"groups must be one label per point (1-D), got shape {labels.shape}")
    missing = _missing_labels(labels)
    if missing:
        raise ValueError(f"groups: {missing} point(s) without a group label (NaN or None)")
    _, first, inverse = np.unique(labels, return_index=True, return_inverse=True)
    rank = np.empty(first.size, dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(first.size)
    return rank[inverse.ravel()], int(first.size)


def _missing_labels(labels) -> int:
    if labels.dtype.kind == "f":
        return int(np.count_nonzero(np.isnan(labels)))
    if labels.dtype.kind == "O":
        return sum(x is None or (isinstance(x, float) and x != x) for x in labels)
    return 0


class Aggregated(NamedTuple):
    """Per-(bin, group) column sums: rows sorted by bin, then group code."""

    sums: np.ndarray  # (R, k)
    counts: np.ndarray  # (R,) points of the group in the bin, float
    starts: np.ndarray  # (n_bins,) first row of each bin
    sizes: np.ndarray  # (n_bins,) groups met in each bin


def aggregate(cols, codes, starts=None, sizes=None) -> Aggregated:
    """Sum the columns of the points of each group, separately in each bin.

    Parameters
    ----------
    cols : ndarray, shape (M, k)
    codes : ndarray of int, shape (M,)
        Group code of each point (:func:`group_codes`).
    starts, sizes : array_like of int, optional
        Contiguous bins of points (default one bin).

    Returns
    -------
    Aggregated
    """
    cols = np.asarray(cols, dtype=float)
    codes = np.asarray(codes, dtype=np.int64)
    m = cols.shape[0]
    if codes.shape != (m,):
        raise ValueError(f"groups: need one group per point ({m}), got shape {codes.shape}")
    if starts is None:
        starts, sizes = np.array([0]), np.array([m])
    sizes = np.asarray(sizes, dtype=np.int64)
    bins = np.repeat(np.arange(sizes.size), sizes)
    n_codes = int(codes.max(initial=-1)) + 1
    key = bins * n_codes + codes
    order = np.argsort(key, kind="stable")
    key = key[order]
    first = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
    sums = np.add.reduceat(cols[order], first, axis=0) if m else np.empty((0, cols.shape[1]))
    counts = np.diff(np.r_[first, m]).astype(float)
    row_bins = key[first] // max(n_codes, 1)
    per_bin = np.bincount(row_bins, minlength=sizes.size).astype(np.int64)
    return Aggregated(sums, counts, np.r_[0, np.cumsum(per_bin)[:-1]].astype(np.int64), per_bin)


def resample_cluster_sums(agg: Aggregated, n_boot, seed, *, engine=None, blocked_above=None):
    """Column sums and point counts over resamples of the groups of each bin.

    Returns
    -------
    sums : ndarray, shape (n_bins, B, k)
    counts : ndarray, shape (n_bins, B)
        Points in each replicate (the sum of the drawn groups' counts).
    """
    rows = np.column_stack([agg.sums, agg.counts])
    out = resample_sums(
        rows,
        n_boot,
        seed,
        starts=agg.starts,
        sizes=agg.sizes,
        engine=engine,
        blocked_above=blocked_above,
    )
    return out[..., :-1], out[..., -1]


def jackknife_accel(agg: Aggregated, statistic):
    """BCa acceleration per bin from the delete-one-group jackknife.

    Parameters
    ----------
    agg : Aggregated
    statistic : callable
        ``statistic(means (R, k), n (R,))`` of column means and point counts, vectorised.

    Returns
    -------
    ndarray, shape (n_bins,)
        NaN in a bin of fewer than two groups.
    """
    bin_of = np.repeat(np.arange(agg.sizes.size), agg.sizes)
    totals = np.add.reduceat(agg.sums, agg.starts, axis=0) if agg.sums.size else agg.sums
    n_tot = np.add.reduceat(agg.counts, agg.starts) if agg.counts.size else agg.counts
    n_loo = n_tot[bin_of] - agg.counts
    with np.errstate(all="ignore"):
        jack = np.asarray(
            statistic((totals[bin_of] - agg.sums) / n_loo[:, None], n_loo), dtype=float
        )
    accel = np.full(agg.sizes.size, np.nan)
    for b, (s, g) in enumerate(zip(agg.starts, agg.sizes)):
        if g >= 2:
            accel[b] = bca.acceleration(jack[s : s + g])
    return accel


def group_members(codes, n_groups):
    """Points of each group: ``order`` (points sorted by group) and each group's start and size."""
    codes = np.asarray(codes, dtype=np.int64)
    order = np.argsort(codes, kind="stable")
    size = np.bincount(codes, minlength=n_groups).astype(np.int64)
    return order, np.r_[0, np.cumsum(size)[:-1]].astype(np.int64), size


def replicate_points(members, drawn):
    """Point indices of one cluster replicate: all points of the drawn groups, in draw order.

    Examples
    --------
    >>> members = group_members(np.array([0, 1, 0, 2]), 3)
    >>> replicate_points(members, np.array([2, 0, 0])).tolist()
    [3, 0, 2, 0, 2]
    """
    order, start, size = members
    lengths = size[drawn]
    offsets = np.repeat(start[drawn] - np.r_[0, np.cumsum(lengths)[:-1]], lengths)
    return order[offsets + np.arange(int(lengths.sum()))]


def jackknife_blocks(n_groups, max_blocks=JACKKNIFE_BLOCKS):
    """Block of each group in a delete-block jackknife: one group per block up to max_blocks."""
    n_blocks = min(n_groups, max_blocks)
    return (np.arange(n_groups) * n_blocks) // max(n_groups, 1), n_blocks


def intraclass_correlation(x, codes):
    """One-way ANOVA estimate of the intraclass correlation of ``x`` in groups, floored at 0.

    ``(MSB - MSW) / (MSB + (n0 - 1) MSW)`` with ``n0`` the ANOVA's mean group size for unequal
    groups; 0 with fewer than two groups or no replication.

    Examples
    --------
    >>> x = np.array([1.0, 1.2, -1.0, -0.8, 0.1, 0.0])
    >>> round(float(intraclass_correlation(x, np.array([0, 0, 1, 1, 2, 2]))), 4)
    0.9851
    """
    x = np.asarray(x, dtype=float)
    codes = np.asarray(codes, dtype=np.int64)
    n = np.bincount(codes).astype(float)
    n = n[n > 0]
    g, m = n.size, x.size
    if g < 2 or m <= g:
        return 0.0
    means = np.bincount(codes, x)[np.bincount(codes) > 0] / n
    between = np.sum(n * (means - x.mean()) ** 2) / (g - 1)
    inv = np.zeros(int(codes.max()) + 1)
    inv[np.bincount(codes) > 0] = means
    within = np.sum((x - inv[codes]) ** 2) / (m - g)
    n0 = (m - np.sum(n**2) / m) / (g - 1)
    denom = between + (n0 - 1.0) * within
    return float(max(0.0, (between - within) / denom)) if denom > 0 else 0.0


def design_effect_of_counts(k_g, sizes):
    """Design effect of proportions from the counts ``k_g`` (..., G) of True in each group of
    ``sizes`` (G,) points: the cluster-robust (CR1) variance of the share over its binomial
    variance, floored at 1 (see :func:`proportion_design_effect`).

    Examples
    --------
    >>> design_effect_of_counts(np.array([[2, 0, 1], [1, 1, 1]]), np.array([2, 2, 2])).tolist()
    [2.0, 1.0]
    """
    k_g = np.asarray(k_g, dtype=float)
    sizes = np.asarray(sizes, dtype=float)
    g, m = sizes.size, sizes.sum()
    out = np.ones(k_g.shape[:-1])
    if g < 2:
        return out
    p = k_g.sum(axis=-1) / m
    robust = g / (g - 1.0) * np.sum((k_g - p[..., None] * sizes) ** 2, axis=-1) / m**2
    mixed = (p > 0.0) & (p < 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = robust / (p * (1.0 - p) / m)
    out[mixed] = np.maximum(1.0, ratio[mixed])
    return out


def group_counts_below(values, codes, grid):
    """Counts of ``values`` (M,) at or below each ``grid`` value in each group: (K, G), the
    groups in the order of their codes (each code used at least once).

    O(M log M + K G log M), from one sort of (group, value) pairs.

    Examples
    --------
    >>> group_counts_below(np.array([0.1, 0.5, 0.2, 0.9]), np.array([0, 0, 1, 1]),
    ...                    np.array([0.3, 1.0])).tolist()
    [[1, 1], [2, 2]]
    """
    v = np.asarray(values, dtype=float)
    codes = np.asarray(codes, dtype=np.int64)
    grid = np.asarray(grid, dtype=float)
    order = np.lexsort((v, codes))
    c, vs = codes[order], v[order]
    g = int(codes.max()) + 1
    starts = np.searchsorted(c, np.arange(g), side="left")
    out = np.empty((grid.size, g), dtype=np.int64)
    for j in range(g):
        lo = starts[j]
        hi = starts[j + 1] if j + 1 < g else c.size
        out[:, j] = np.searchsorted(vs[lo:hi], grid, side="right")
    return out


def proportion_design_effect(inside, codes):
    """Design effect of proportions of points in groups: the cluster-robust variance of each
    row's share of True over its binomial variance, floored at 1.

    With :math:`k_g` the count of True in group g of size :math:`m_g`, :math:`\\hat p = k / M`
    and G groups, the cluster-robust (CR1) variance of :math:`\\hat p` is
    :math:`\\frac{G}{G - 1} \\sum_g (k_g - \\hat p m_g)^2 / M^2` (Cameron & Miller (2015),
    eq. 11 for a mean); the design effect is its ratio to :math:`\\hat p (1 - \\hat p) / M`,
    the variance of independent points, and ``M / deff`` the effective number of points
    (Kish). Floored at 1 (a proportion of grouped points is never taken as surer than one of
    independent points); 1 where :math:`\\hat p` is 0 or 1, or with fewer than 2 groups.

    Parameters
    ----------
    inside : array_like of bool, shape (..., M)
        One row of indicators per proportion (a level), the points on the last axis.
    codes : array_like of int, shape (M,)
        Group code of each point (:func:`group_codes`).

    Returns
    -------
    ndarray, shape (...)

    Examples
    --------
    >>> inside = np.array([[1, 1, 0, 0, 1, 0], [1, 0, 1, 0, 1, 0]], dtype=bool)
    >>> proportion_design_effect(inside, np.array([0, 0, 1, 1, 2, 2])).round(4).tolist()
    [2.0, 1.0]
    """
    x = np.asarray(inside, dtype=float)
    codes = np.asarray(codes, dtype=np.int64)
    sizes = np.bincount(codes).astype(float)
    used = sizes > 0
    flat = x.reshape(-1, x.shape[-1])
    k_g = np.stack([np.bincount(codes, row, minlength=sizes.size)[used] for row in flat])
    return design_effect_of_counts(k_g, sizes[used]).reshape(x.shape[:-1])
