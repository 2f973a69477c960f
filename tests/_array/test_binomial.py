"""Wilson score intervals: against statsmodels, Newcombe (1998) and a root finder."""

import numpy as np
import pytest
from scipy import optimize, special
from statsmodels.stats.proportion import proportion_confint

from uqviz._array.binomial import wilson_interval

# Newcombe 1998 (Statist. Med. 17, 857), Table II, methods 3 and 4
NEWCOMBE = [
    # k, n, (wilson lower, upper), (continuity-corrected lower, upper)
    (81, 263, (0.2553, 0.3662), (0.2535, 0.3682)),
    (15, 148, (0.0624, 0.1605), (0.0598, 0.1644)),
    (0, 20, (0.0, 0.1611), (0.0, 0.2005)),
    (1, 29, (0.0061, 0.1718), (0.0018, 0.1963)),
]


@pytest.mark.parametrize("ci", [0.8, 0.95, 0.99])
def test_wilson_matches_statsmodels(ci):
    n = np.array([1, 2, 7, 30, 100, 263, 1000, 5000])
    for nn in n:
        k = np.unique(np.linspace(0, nn, 12).round().astype(int))
        lo, hi = wilson_interval(k, nn, ci=ci)
        ref_lo, ref_hi = proportion_confint(k, nn, alpha=1 - ci, method="wilson")
        np.testing.assert_allclose(lo, ref_lo, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(hi, ref_hi, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("k, n, wilson, corrected", NEWCOMBE)
def test_newcombe_table(k, n, wilson, corrected):
    np.testing.assert_allclose(wilson_interval(k, n), wilson, atol=5e-5)
    np.testing.assert_allclose(wilson_interval(k, n, continuity=True), corrected, atol=5e-5)


def _corrected_by_root_finding(k, n, ci):
    """Bounds solving |k/n - p| - 1/(2n) = z sqrt(p(1-p)/n), found numerically."""
    z = special.ndtri(0.5 + ci / 2)
    phat = k / n

    def below(p):  # lower bound: p < phat
        return (phat - p) - 0.5 / n - z * np.sqrt(p * (1 - p) / n)

    def above(p):  # upper bound: p > phat
        return (p - phat) - 0.5 / n - z * np.sqrt(p * (1 - p) / n)

    lo = 0.0 if k == 0 else optimize.brentq(below, 0.0, phat, xtol=1e-15)
    hi = 1.0 if k == n else optimize.brentq(above, phat, 1.0, xtol=1e-15)
    return lo, hi


@pytest.mark.parametrize(
    "k, n",
    [
        (1, 10),
        (3, 10),
        (9, 10),
        (17, 40),
        (939, 1000),
        (780, 1000),
        (1, 1000),
        (999, 1000),
        (50, 51),
    ],
)
@pytest.mark.parametrize("ci", [0.9, 0.95])
def test_continuity_correction_hand_computed(k, n, ci):
    lo, hi = wilson_interval(k, n, ci=ci, continuity=True)
    ref = _corrected_by_root_finding(k, n, ci)
    np.testing.assert_allclose([lo, hi], ref, atol=1e-10)
    # the correction widens the interval
    wlo, whi = wilson_interval(k, n, ci=ci)
    assert lo <= wlo and hi >= whi


def test_vectorised_broadcast_and_edges():
    k = np.array([[0, 5, 10], [0, 1, 2]])
    n = np.array([[10], [2]])
    lo, hi = wilson_interval(k, n)
    assert lo.shape == hi.shape == (2, 3)
    assert np.all(lo[:, 0] == 0.0) and hi[0, 2] == 1.0 and hi[1, 2] == 1.0
    assert np.all((lo <= k / n) & (k / n <= hi))
    for cont in (False, True):
        lo, hi = wilson_interval([0, 3], [0, 5], continuity=cont)
        assert np.isnan(lo[0]) and np.isnan(hi[0]) and 0 < lo[1] < hi[1] < 1


@pytest.mark.parametrize("k, n", [(-1, 5), (6, 5), (1, -1), (np.nan, 4)])
def test_rejects_impossible_counts(k, n):
    with pytest.raises(ValueError, match="0 <= k <= n"):
        wilson_interval(k, n)


def test_rejects_bad_level():
    with pytest.raises(ValueError, match="ci"):
        wilson_interval(1, 2, ci=1.0)


def test_options_are_checked_by_the_shared_validators():
    with pytest.raises(TypeError, match="ci must be a number"):
        wilson_interval(1, 2, ci="0.95")
    with pytest.raises(TypeError, match="continuity must be True or False"):
        wilson_interval(1, 2, continuity=1)
