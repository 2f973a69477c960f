"""Kernels of the distribution recalibrations: numpy arrays in and out, no xarray.

- :func:`conformal_rank`: the rank ``k = ceil((n + 1) level)`` of split conformal prediction,
  in exact rational arithmetic on the decimal the level prints as;
- :func:`equal_count_ranges`: the value ranges of equal-count bins (the bins of
  ``uqviz.engine.binning.compute_bins``) from order statistics alone (``np.partition``);
- :func:`bin_score_quantiles`: the k-th smallest score of each bin (``np.partition``, no full
  sort), ``inf`` where ``k > n``;
- :func:`cqr_scores`: the conformity scores ``max(q_lo - y, y - q_hi)`` of conformalized
  quantile regression;
- :func:`observed_proportions`: the observed proportions below the quantiles (or inside the
  central intervals) of a standardised forecast at the nominal probabilities, counted as
  uncertainty-toolbox 0.1.1's ``get_proportion_lists_vectorized`` counts them;
- :func:`isotonic_map` / :func:`isotonic_eval`: the increasing isotonic regression with the
  semantics of ``sklearn.isotonic.IsotonicRegression(increasing=True, out_of_bounds="clip")``
  (ties pooled, PAVA, redundant knots dropped, linear interpolation, clipped).

Examples
--------
>>> conformal_rank(np.array([49, 57]), 0.9).tolist()
[45, 53]
>>> bin_score_quantiles(np.array([3.0, 1.0, 2.0, 9.0]), np.array([0, 0, 0, 1]), 2,
...                     np.array([2, 1])).tolist()
[2.0, 9.0]
>>> cqr_scores(np.array([0.0, 5.0]), np.array([1.0, 1.0]), np.array([3.0, 3.0])).tolist()
[1.0, 2.0]
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from uqviz._array.binning import equal_count_bounds
from uqviz._array.lazy import lazy_module

optimize = lazy_module("scipy.optimize")
special = lazy_module("scipy.special")

__all__ = [
    "conformal_rank",
    "equal_count_ranges",
    "bin_score_quantiles",
    "cqr_scores",
    "observed_proportions",
    "isotonic_map",
    "isotonic_eval",
]


def conformal_rank(n, level):
    """``ceil((n + 1) level)`` for each count ``n``, exactly.

    ``level`` is read as the decimal it prints as (``repr``: 0.9 is 9/10, not the binary
    float just above it), so ``(n + 1) level`` that is an integer in decimals gives that
    integer. A rank above ``n`` means the interval is the whole line.

    Examples
    --------
    >>> conformal_rank(np.array([9, 18, 19]), 0.95).tolist()
    [10, 19, 19]
    """
    frac = Fraction(repr(float(level)))
    p, q = frac.numerator, frac.denominator
    n = np.asarray(n, dtype=np.int64)
    return np.array([-((-(int(m) + 1) * p) // q) for m in n.ravel()], dtype=np.int64).reshape(
        n.shape
    )


def equal_count_ranges(x, n_bins):
    """``(lower, upper)`` of ``n_bins`` equal-count bins of ``x``: the smallest and largest
    value of each block of the sorted values (bounds ``floor(k M / n_bins + 1/2)``), found by
    one ``np.partition`` at the 2 n_bins positions, O(M log n_bins), no sort.

    Examples
    --------
    >>> [a.tolist() for a in equal_count_ranges(np.array([5.0, 1.0, 3.0, 2.0, 4.0, 0.0]), 2)]
    [[0.0, 3.0], [2.0, 5.0]]
    """
    x = np.asarray(x, dtype=float)
    bounds = equal_count_bounds(x.size, n_bins)
    first, last = bounds[:-1], bounds[1:] - 1
    part = np.partition(x, np.unique(np.concatenate([first, last])))
    return part[first], part[last]


def bin_score_quantiles(scores, labels, n_bins, ranks):
    """The ``ranks[b]``-th smallest score of each bin ``b`` (1-based); ``inf`` when the rank
    exceeds the bin's count (an empty bin gives ``inf`` too).

    One stable sort of the (small-integer) labels groups the bins, then ``np.partition``
    selects within each bin: O(M) beyond the grouping.

    Examples
    --------
    >>> bin_score_quantiles(np.array([1.0, 5.0, 2.0]), np.zeros(3, int), 1, np.array([4]))
    array([inf])
    """
    scores = np.asarray(scores, dtype=float)
    labels = np.asarray(labels)
    ranks = np.asarray(ranks, dtype=np.int64)
    out = np.full(n_bins, np.inf)
    if n_bins == 1:
        groups, starts, counts = [scores], [0], [scores.size]
    else:
        small = labels.astype(np.int16 if n_bins < 2**15 else np.int64)
        order = np.argsort(small, kind="stable")
        counts = np.bincount(labels, minlength=n_bins)
        starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
        ordered = scores[order]
        groups = [ordered[s : s + c] for s, c in zip(starts, counts)]
    for b, (g, c) in enumerate(zip(groups, counts)):
        k = int(ranks[b])
        if 1 <= k <= c:
            out[b] = np.partition(g, k - 1)[k - 1]
    return out


def cqr_scores(y, q_lo, q_hi):
    """Conformity scores of CQR (Romano et al. 2019): ``max(q_lo - y, y - q_hi)``.

    Examples
    --------
    >>> cqr_scores(np.array([2.0]), np.array([1.0]), np.array([3.0])).tolist()
    [-1.0]
    """
    return np.maximum(q_lo - y, y - q_hi)


def observed_proportions(z, expected, kind="quantile", ppf=None, strict=False):
    """Observed proportions of the scores ``z`` at the nominal ``expected``.

    ``kind="quantile"``: the share of ``z <= ppf(p)`` (for standardised errors and the
    normal ``ppf``, the share of PIT values at most p; for PIT values, ``ppf`` the
    identity); ``"interval"``: the share of ``ppf(1/2 - p/2) <= z <= ppf(1/2 + p/2)``.
    ``ppf=None`` (the default) is the normal quantile function, ``scipy.special.ndtri``.
    Counted on the sorted ``z`` with ``searchsorted`` (the same comparisons as
    uncertainty-toolbox 0.1.1's ``get_proportion_lists_vectorized``, O((M + L) log M)).
    ``strict=True`` counts ``z < ppf(p)`` (and ``ppf(1/2 - p/2) <= z < ppf(1/2 + p/2)``): for a
    step CDF F and its quantile function ``Q(p) = min{x: F(x) >= p}``, ``y <= Q(p)`` holds
    exactly when ``F(y) < p`` (y not tied with a step), so that share is the coverage of Q(p).

    Examples
    --------
    >>> observed_proportions(np.array([-1.0, 0.0, 2.0]), np.array([0.0, 0.5, 1.0])).tolist()
    [0.0, 0.6666666666666666, 1.0]
    >>> observed_proportions(np.array([0.1, 0.5, 0.95]), np.array([0.5]), "quantile",
    ...                      ppf=lambda p: p).tolist()
    [0.6666666666666666]
    """
    if ppf is None:
        ppf = special.ndtri
    zs = np.sort(np.asarray(z, dtype=float))
    p = np.asarray(expected, dtype=float)
    with np.errstate(divide="ignore"):
        side = "left" if strict else "right"
        if kind == "quantile":
            count = np.searchsorted(zs, ppf(p), side=side)
        else:
            lo, hi = ppf(0.5 - p / 2.0), ppf(0.5 + p / 2.0)
            count = np.searchsorted(zs, hi, side=side) - np.searchsorted(zs, lo, side="left")
    return count / zs.size


def isotonic_map(x, y):
    """Knots ``(x_k, y_k)`` of the increasing isotonic regression of ``y`` on ``x``.

    As ``sklearn.isotonic.IsotonicRegression(increasing=True)``: ties in ``x`` pooled (mean
    of their ``y``, weight their count), the pool-adjacent-violators fit
    (:func:`scipy.optimize.isotonic_regression`), interior knots equal to both neighbours
    dropped.

    Examples
    --------
    >>> [a.tolist() for a in isotonic_map(np.array([0.0, 0.5, 0.5, 1.0]),
    ...                                   np.array([0.0, 1.0, 0.5, 0.0]))]
    [[0.0, 0.5, 1.0], [0.0, 0.5, 0.5]]
    """
    order = np.argsort(x, kind="stable")
    xs, ys = np.asarray(x, dtype=float)[order], np.asarray(y, dtype=float)[order]
    ux, first, counts = np.unique(xs, return_index=True, return_counts=True)
    means = np.add.reduceat(ys, first) / counts
    fit = optimize.isotonic_regression(means, weights=counts.astype(float), increasing=True).x
    keep = np.ones(fit.size, dtype=bool)
    keep[1:-1] = (fit[1:-1] != fit[:-2]) | (fit[1:-1] != fit[2:])
    return ux[keep], fit[keep]


def isotonic_eval(x_knots, y_knots, x):
    """The isotonic map at ``x``: linear interpolation, clipped to the knots' range.

    Examples
    --------
    >>> isotonic_eval(np.array([0.25, 0.75]), np.array([0.0, 1.0]),
    ...               np.array([0.0, 0.5])).tolist()
    [0.0, 0.5]
    """
    if x_knots.size == 1:
        return np.full(np.shape(x), float(y_knots[0]))
    return np.interp(np.clip(x, x_knots[0], x_knots[-1]), x_knots, y_knots)
