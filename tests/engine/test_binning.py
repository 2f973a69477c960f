"""Binning schemes: hand-checked bins with ties, merging rules, bad input."""

import numpy as np
import pytest

import uqviz
from uqviz._array import binning as kb
from uqviz.engine.binning import compute_bins, conditioning_values, default_n_bins


def test_equal_count_split_is_the_errviewlib_rounding():
    # M = 10, n = 4: bounds floor(k*10/4 + 0.5) = 0, 3, 5, 8, 10
    starts, sizes = kb.equal_count_starts(10, 4)
    assert starts.tolist() == [0, 3, 5, 8] and sizes.tolist() == [3, 2, 3, 2]
    # M = 7, n = 2: 3.5 rounds up -> [0..3], [4..6]
    assert kb.equal_count_starts(7, 2)[1].tolist() == [4, 3]
    for m, n in [(13885, 100), (5000, 71), (101, 101)]:
        st, sz = kb.equal_count_starts(m, n)
        assert sz.sum() == m and st[0] == 0 and np.all(sz >= m // n) and np.all(sz <= m // n + 1)


def test_equal_count_with_ties_keeps_data_order():
    x = np.array([2.0, 1.0, 2.0, 1.0, 3.0, 2.0])
    with pytest.warns(UserWarning, match="splits 1 group"):  # the 2.0s straddle the bins
        b = compute_bins(x, n_bins=2)
    # stable sort: 1.0 at rows 1, 3; 2.0 at rows 0, 2, 5; 3.0 at row 4
    assert b.order.tolist() == [1, 3, 0, 2, 5, 4]
    assert b.sizes.tolist() == [3, 3]
    assert b.labels().tolist() == [0, 0, 1, 0, 1, 1]  # row 0 (first 2.0) in bin 0
    assert b.lower.tolist() == [1.0, 2.0] and b.upper.tolist() == [2.0, 3.0]
    np.testing.assert_allclose(b.center, [4.0 / 3.0, 7.0 / 3.0])


def test_random_ties_permute_only_within_ties():
    x = np.repeat([1.0, 2.0, 3.0], 20)
    orders = {tuple(compute_bins(x, n_bins=6, rng=s).order) for s in range(5)}
    assert len(orders) == 5
    for s in range(5):
        b = compute_bins(x, n_bins=6, rng=s)
        assert np.all(np.diff(x[b.order]) >= 0)
    a1 = compute_bins(x, n_bins=6, rng=3).order
    np.testing.assert_array_equal(a1, compute_bins(x, n_bins=6, rng=3).order)


def test_stratified_merges_small_strata_with_smaller_neighbour():
    x = np.r_[np.zeros(150), np.ones(20), np.full(300, 2.0), np.full(50, 3.0)]
    b = compute_bins(np.random.default_rng(0).permutation(x), binning="stratified")
    # 20 merges with 150 (smaller neighbour), then 50 merges with 300
    assert b.sizes.tolist() == [170, 350]
    assert b.lower.tolist() == [0.0, 2.0] and b.upper.tolist() == [1.0, 3.0]
    b2 = compute_bins(x, binning="stratified", min_count=10)
    assert b2.sizes.tolist() == [150, 20, 300, 50]


def test_equal_width_and_edges_with_merging():
    x = np.r_[np.linspace(0.0, 0.99, 100), 1.5, 4.5]
    b = compute_bins(x, binning="equal_width", n_bins=5, min_count=1)
    # widths 0.9: [0,0.9) holds 0.00..0.89 (90), [0.9,1.8) 0.90..0.99 and 1.5 (11),
    # two empty bins, [3.6,4.5] holds 4.5
    assert b.sizes.tolist() == [90, 11, 1]
    np.testing.assert_allclose(b.lower, [0.0, 0.9, 3.6])
    np.testing.assert_allclose(b.upper, [0.9, 1.8, 4.5])
    merged = compute_bins(x, binning="equal_width", n_bins=5, min_count=5)
    assert merged.sizes.tolist() == [90, 12]
    e = compute_bins(x, binning="edges", edges=[0.0, 0.5, 1.0, 5.0])
    assert e.sizes.tolist() == [50, 50, 2]
    lg = compute_bins(np.geomspace(1, 1000, 31), binning="equal_width", n_bins=3, log=True)
    assert lg.sizes.tolist() == [10, 10, 11]


def test_bad_input():
    ds = uqviz.from_arrays(np.ones(10), np.ones(10), features={"c": np.full(10, 2.0)})
    with pytest.raises(ValueError, match="between 1 and the number of points"):
        compute_bins(np.arange(10.0), n_bins=11)
    with pytest.raises(ValueError, match="constant"):
        conditioning_values(ds, "c")
    with pytest.raises(ValueError, match="not in the dataset"):
        conditioning_values(ds, "mass")
    bad = np.arange(10.0)
    bad[[2, 5]] = np.nan
    with pytest.raises(ValueError, match="2 rows with NaN"):
        conditioning_values(ds, bad)
    with pytest.raises(ValueError, match="outside the bin edges"):
        compute_bins(np.arange(10.0), binning="edges", edges=[0.0, 5.0])
    with pytest.raises(ValueError, match="binning must be"):
        compute_bins(np.arange(10.0), binning="quantile")
    with pytest.raises(ValueError, match="positive"):
        compute_bins(np.arange(10.0), binning="equal_width", log=True)


def test_default_number_of_bins_is_sqrt_m_with_at_least_100_points():
    assert default_n_bins(13885) == 118 and default_n_bins(100) == 1
    assert default_n_bins(5000) == 50 and default_n_bins(10**6) == 1000
    assert compute_bins(np.arange(400.0)).n_bins == 4
    assert compute_bins(np.arange(40_000.0)).n_bins == 200


@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        ({"n_bins": True}, TypeError, "n_bins must be an integer"),
        ({"n_bins": "10"}, TypeError, "n_bins must be an integer"),
        ({"n_bins": 2.5}, ValueError, "n_bins must be a whole number"),
        ({"n_bins": 0}, ValueError, r"between 1 and the number of points M = 10, got n_bins = 0"),
        ({"n_bins": 11}, ValueError, r"M = 10, got n_bins = 11"),
        ({"n_bins": -3, "binning": "equal_width"}, ValueError, "M = 10"),
        (
            {"binning": "quantile"},
            ValueError,
            "'equal_count', 'equal_width', 'stratified', 'edges'",
        ),
        ({"binning": "edges", "edges": [0.0, np.nan, 10.0]}, ValueError, "edges has 1 non-finite"),
        ({"binning": "edges", "edges": [0.0, 5.0, 5.0, 10.0]}, ValueError, "increase strictly"),
        ({"binning": "edges", "edges": [10.0, 0.0]}, ValueError, "edges must increase strictly"),
        ({"binning": "edges", "edges": [0.0]}, ValueError, "at least 2"),
        ({"binning": "stratified", "min_count": 0}, ValueError, "min_count must be >= 1"),
        ({"binning": "stratified", "min_count": 2.5}, ValueError, "min_count must be a whole"),
        ({"binning": "equal_width", "log": 1}, TypeError, "log must be True or False"),
    ],
)
def test_options_are_validated(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        compute_bins(np.arange(10.0), **kwargs)


def test_data_are_validated():
    with pytest.raises(ValueError, match="x has 2 non-finite"):
        compute_bins(np.array([1.0, np.nan, 2.0, np.inf]), n_bins=2)
    with pytest.raises(ValueError, match="M = 0"):
        compute_bins(np.array([]), n_bins=1)


def test_equal_count_bins_splitting_ties_warn_and_stay_unchanged():
    x = np.repeat([0.0, 1.0], 50)  # a binary feature
    with pytest.warns(
        UserWarning,
        match=r"splits 2 group\(s\) of tied values \(100 points; "
        r"the variable has 2 distinct values\).*stratified",
    ):
        b = compute_bins(x, n_bins=3)
    assert b.sizes.tolist() == [33, 34, 33]  # the bins themselves do not change
    assert b.order.tolist() == list(range(100))
    with pytest.warns(UserWarning, match=r"splits 1 group\(s\) .*\(50 points; .* 51 distinct"):
        compute_bins(np.r_[np.zeros(50), np.arange(1.0, 51.0)], n_bins=3)
    assert kb.split_ties(np.sort(x), np.array([0, 50])) == (0, 0)


def test_no_tie_warning_when_no_tie_is_split_or_ties_are_randomised():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        compute_bins(np.random.default_rng(0).normal(size=500), n_bins=7)
        compute_bins(np.repeat([0.0, 1.0], 50), n_bins=2)  # the boundary falls between ties
        compute_bins(np.repeat([0.0, 1.0], 50), n_bins=3, rng=0)  # random ties on purpose
        compute_bins(np.repeat([0.0, 1.0], 50), binning="stratified", min_count=10)


def test_one_implementation_of_equal_count_bounds():
    from uqviz._array import binned

    assert binned.equal_count_bounds is kb.equal_count_bounds
    assert kb.equal_count_bounds(10, 4).tolist() == [0, 3, 5, 8, 10]
    with pytest.raises(ValueError, match="M = 3, got n_bins = 4"):
        kb.equal_count_bounds(3, 4)


def _merge_small_by_list(counts, min_count):
    """The literal rule: merge the leftmost smallest group with its smaller neighbour (left on
    a tie) until every group holds min_count (quadratic; the reference of the heap version)."""
    groups = [[i] for i in range(len(counts))]
    sizes = [int(c) for c in counts]
    while len(sizes) > 1 and min(sizes) < min_count:
        i = int(np.argmin(sizes))
        left = sizes[i - 1] if i > 0 else np.inf
        right = sizes[i + 1] if i + 1 < len(sizes) else np.inf
        a, b = (i - 1, i) if left <= right else (i, i + 1)
        groups[a] += groups[b]
        sizes[a] += sizes[b]
        del groups[b], sizes[b]
    label = np.empty(len(counts), dtype=np.int64)
    for g, members in enumerate(groups):
        label[members] = g
    return label


def test_stratum_merging_follows_the_literal_rule():
    from uqviz._array.binning import _merge_small

    rng = np.random.default_rng(11)
    for _ in range(500):
        counts = rng.integers(1, 8, rng.integers(1, 40))
        min_count = int(rng.integers(1, 30))
        np.testing.assert_array_equal(
            _merge_small(counts, min_count), _merge_small_by_list(counts, min_count)
        )
    assert _merge_small(np.array([], dtype=int), 5).size == 0
