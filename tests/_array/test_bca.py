"""BCa / percentile / basic intervals against scipy.stats.bootstrap on the same resamples."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps

from uqviz._array import bca
from uqviz._array.bootstrap import _moment_jackknife_accel
from uqviz._array.stats import columns, rce, zms


def _data(m=120, seed=0):
    rng = np.random.default_rng(seed)
    u = np.sqrt(1.0 / rng.gamma(3.0, 1.0 / 3.0, m))
    e = u * rng.standard_normal(m)
    return e, u


def _zms(e, u, axis=-1):
    return np.mean((e / u) ** 2, axis=axis)


def _rce(e, u, axis=-1):
    return 1.0 - np.sqrt(np.mean(e**2, axis=axis) / np.mean(u**2, axis=axis))


@pytest.mark.parametrize("stat", [_zms, _rce])
@pytest.mark.parametrize("method", ["BCa", "percentile", "basic"])
def test_equal_to_scipy_given_the_same_resamples(stat, method):
    e, u = _data()
    n_boot = 3000
    ref = sps.bootstrap(
        (e, u),
        stat,
        n_resamples=n_boot,
        paired=True,
        vectorized=True,
        method=method,
        confidence_level=0.9,
        rng=np.random.default_rng(11),
    )
    # scipy's paired bootstrap draws rng.integers(0, M, (B, M)) on the indices
    idx = np.random.default_rng(11).integers(0, e.size, (n_boot, e.size))
    reps = stat(e[idx], u[idx])
    keep = ~np.eye(e.size, dtype=bool)
    jack = stat(
        np.broadcast_to(e, keep.shape)[keep].reshape(e.size, -1),
        np.broadcast_to(u, keep.shape)[keep].reshape(e.size, -1),
    )
    ours = bca.interval(stat(e, u), reps, jackknife=jack, ci=0.9, method=method.lower())
    assert ours["lower"] == pytest.approx(ref.confidence_interval.low, rel=1e-12)
    assert ours["upper"] == pytest.approx(ref.confidence_interval.high, rel=1e-12)


@pytest.mark.parametrize("func, names", [(zms, ("Z2",)), (rce, ("E2", "V"))])
def test_moment_jackknife_equals_explicit_deletion(func, names):
    e, u = _data(m=97, seed=4)
    cols = columns(e, u, names)
    fast = _moment_jackknife_accel(cols, names, func, np.array([0, 40]), np.array([40, 57]))
    for g, (s, n) in enumerate([(0, 40), (40, 57)]):
        ee, uu = e[s : s + n], u[s : s + n]
        jack = np.array(
            [
                func(
                    {
                        c: np.mean(columns(np.delete(ee, i), np.delete(uu, i), names)[:, j])
                        for j, c in enumerate(names)
                    },
                    n - 1,
                )
                for i in range(n)
            ]
        )
        assert fast[g] == pytest.approx(bca.acceleration(jack), rel=1e-9)


def test_acceleration_formula_by_hand():
    jack = np.array([1.0, 2.0, 4.0])  # mean 7/3; d = [4/3, 1/3, -5/3]
    d = np.array([4.0, 1.0, -5.0]) / 3.0
    expected = np.sum(d**3) / (6.0 * np.sum(d**2) ** 1.5)
    assert bca.acceleration(jack) == pytest.approx(expected, rel=1e-14)
    assert bca.acceleration(np.ones(5)) == 0.0


def test_bca_reduces_to_percentile_without_bias_and_acceleration():
    reps = np.linspace(-1.0, 1.0, 2001)
    out = bca.interval(0.0, reps, accel=0.0, ci=0.95)
    pct = bca.interval(0.0, reps, ci=0.95, method="percentile")
    assert out["z0"] == pytest.approx(0.0, abs=1e-12)
    assert out["lower"] == pytest.approx(pct["lower"], rel=1e-9)
    assert out["upper"] == pytest.approx(pct["upper"], rel=1e-9)


def test_interval_vectorised_over_leading_axes():
    rng = np.random.default_rng(0)
    reps = rng.standard_normal((3, 4, 500))
    est = rng.standard_normal((3, 4)) * 0.05
    jack = rng.standard_normal((3, 4, 30))
    out = bca.interval(est, reps, jackknife=jack)
    single = bca.interval(est[1, 2], reps[1, 2], jackknife=jack[1, 2])
    assert out["lower"].shape == (3, 4)
    assert out["lower"][1, 2] == pytest.approx(float(single["lower"]))
    assert out["upper"][1, 2] == pytest.approx(float(single["upper"]))


def test_bad_arguments():
    with pytest.raises(ValueError, match="ci must be"):
        bca.interval(0.0, np.ones(10), accel=0.0, ci=1.5)
    with pytest.raises(ValueError, match="method must be"):
        bca.interval(0.0, np.ones(10), accel=0.0, method="studentized")
    with pytest.raises(ValueError, match="jackknife"):
        bca.interval(0.0, np.ones(10))


def test_zeta_hand_values():
    # est below ref: distance to the upper limit; above: to the lower limit
    assert bca.zeta_score(0.9, 1.0, 0.8, 0.95) == pytest.approx(-2.0)
    assert bca.zeta_score(1.1, 1.0, 1.05, 1.2) == pytest.approx(2.0)
    assert bca.zeta_score(0.97, 1.0, 0.9, 1.03) == pytest.approx(-0.5)
    assert bca.zeta_score(1.0, 1.0, 0.9, 1.1) == 0.0


@settings(max_examples=200, deadline=None)
@given(
    est=st.floats(-10, 10),
    ref=st.floats(-10, 10),
    lo_gap=st.floats(1e-3, 5),
    hi_gap=st.floats(1e-3, 5),
)
def test_zeta_within_one_iff_reference_in_interval(est, ref, lo_gap, hi_gap):
    lower, upper = est - lo_gap, est + hi_gap
    z = float(bca.zeta_score(est, ref, lower, upper))
    inside = lower <= ref <= upper
    if abs(abs(z) - 1.0) > 1e-9:  # away from the boundary, where rounding decides
        assert (abs(z) <= 1.0) == inside


def test_degenerate_bootstrap_distribution_gives_nan_bounds():
    # every replicate above the estimate: z0 = -inf, the BCa interval is undefined
    out = bca.interval(1.0, np.full(100, 2.0), accel=0.0)
    assert np.isnan(out["lower"]) and np.isnan(out["upper"])


def test_verdict_issue_case_outside_although_the_ratio_rounds_to_one():
    # ZMS = 5e21 with CI [9, 2.5e22], reference 1: (est - ref)/(est - lower) rounds to 1.0
    assert float(bca.zeta_score(5e21, 1.0, 9.0, 2.5e22)) == 1.0
    zeta, valid = bca.verdict(5e21, 1.0, 9.0, 2.5e22)
    assert not valid and float(zeta) > 1.0


@pytest.mark.parametrize(
    "est, ref, lower, upper, valid, sign",
    [
        (0.9, 1.0, 0.8, 0.95, False, -1),  # reference above the interval: zeta < -1
        (1.1, 1.0, 1.05, 1.2, False, 1),  # reference below the interval: zeta > 1
        (0.97, 1.0, 0.9, 1.03, True, -1),  # inside, estimate below the reference
        (1.02, 1.0, 0.95, 1.1, True, 1),  # inside, estimate above the reference
    ],
)
def test_verdict_both_sides(est, ref, lower, upper, valid, sign):
    zeta, ok = bca.verdict(est, ref, lower, upper)
    assert bool(ok) is valid
    assert np.sign(float(zeta)) == sign
    assert (abs(float(zeta)) <= 1.0) is valid


def test_verdict_estimate_equal_to_reference_and_boundaries():
    zeta, ok = bca.verdict(1.0, 1.0, 0.9, 1.1)
    assert ok and float(zeta) == 0.0
    # reference on a bound: valid, |zeta| clipped to 1 at most
    for lower, upper in [(1.0, 1.2), (0.8, 1.0)]:
        zeta, ok = bca.verdict(1.0 + 1e-17, 1.0, lower, upper)
        assert ok and abs(float(zeta)) <= 1.0
    zeta, ok = bca.verdict(1.0 + 1e-9, 1.0, 1.0, 1.0 + 2e-9)
    assert ok and abs(float(zeta)) <= 1.0


def test_verdict_nan_bounds_are_not_valid():
    zeta, ok = bca.verdict([1.2, 1.0], [1.0, 1.0], [np.nan, np.nan], [np.nan, 1.5])
    assert not ok.any()
    assert np.isnan(zeta).all()


def test_verdict_never_rounds_across_one_against_the_interval():
    rng = np.random.default_rng(0)
    est = 10.0 ** rng.uniform(-3, 25, 2000)
    lower = est * rng.uniform(1e-25, 1.0, 2000)
    upper = est * rng.uniform(1.0, 5.0, 2000)
    ref = np.where(rng.random(2000) < 0.5, 1.0, lower * (1 + rng.uniform(-1e-15, 1e-15, 2000)))
    zeta, ok = bca.verdict(est, ref, lower, upper)
    assert np.array_equal(ok, (lower <= ref) & (ref <= upper))
    assert np.array_equal(np.abs(zeta) <= 1.0, ok)


def test_degenerate_replicates_give_nan_for_every_method():
    for method in ("bca", "percentile", "basic"):
        for reps in (np.full(100, 2.0), np.r_[np.ones(99), np.nan], np.r_[np.ones(99), np.inf]):
            out = bca.interval(2.0, reps, accel=0.0, method=method)
            assert np.isnan(out["lower"]) and np.isnan(out["upper"])
    out = bca.interval(
        np.array([1.0, 1.0]), np.stack([np.linspace(0, 2, 50), np.ones(50)]), accel=np.zeros(2)
    )
    assert np.isfinite(out["lower"][0]) and np.isnan(out["lower"][1])


def test_grouped_jackknife_uses_the_one_acceleration_formula():
    # sums helper == the jackknife-values formula, per group, at any scale
    e, u = _data(m=60, seed=2)
    for scale in (1.0, 1e200):
        fast = _moment_jackknife_accel(
            columns(e * scale, u * scale, ("Z2",)), ("Z2",), zms, np.array([0]), np.array([60])
        )
        jack = np.array([np.mean((np.delete(e, i) / np.delete(u, i)) ** 2) for i in range(60)])
        assert fast[0] == pytest.approx(float(bca.acceleration(jack)), rel=1e-9)


# --------------------------------------------------------------------------
# issue 20: p-values, the inverse of the intervals
# --------------------------------------------------------------------------
def test_p_value_hand_example():
    reps = np.array([5.0, 1.0, 4.0, 2.0, 3.0])  # sorted 1..5, Q(p) = 1 + 4 p
    # reference 4.5: Q(G) = 4.5 at G = 3.5/4 = 0.875
    assert float(bca.quantile_level(reps, 4.5)) == pytest.approx(0.875, abs=1e-15)
    assert float(bca.p_value(3.0, reps, 4.5, method="percentile")) == pytest.approx(0.25)
    # basic: reflected reference 2*3 - 4.5 = 1.5, G = 0.125
    assert float(bca.p_value(3.0, reps, 4.5, method="basic")) == pytest.approx(0.25)
    # BCa, z0 = Phi^-1(2.5/5) = 0, a = 0.1: w = Phi^-1(0.875) = 1.150349,
    # z = w / (1 + 0.1 w) = 1.031671, p = 2 (1 - Phi(z)) = 0.302226
    p = float(bca.p_value(3.0, reps, 4.5, method="bca", accel=0.1))
    w = sps.norm.ppf(0.875)
    assert p == pytest.approx(2 * sps.norm.sf(w / (1 + 0.1 * w)), rel=1e-12)
    assert p == pytest.approx(0.302226, abs=1e-6)
    # the interval at ci = 1 - p has the reference on its bound
    for method in ("percentile", "basic", "bca"):
        p = float(bca.p_value(3.0, reps, 4.5, method=method, accel=0.1))
        ivl = bca.interval(3.0, reps, ci=1 - p, method=method, accel=0.1)
        assert 4.5 in (pytest.approx(float(ivl["lower"])), pytest.approx(float(ivl["upper"])))


def test_p_value_edges_ties_and_nan():
    reps = np.array([1.0, 2.0, 2.0, 2.0, 3.0])
    # a run of ties: the middle of the levels where Q equals the value
    assert float(bca.quantile_level(reps, 2.0)) == pytest.approx(0.5)
    assert float(bca.p_value(2.0, reps, 2.0, method="percentile")) == pytest.approx(1.0)
    # beyond every replicate: p = 0 (below the 1/B resolution); BCa with a = 0 too
    for method in ("percentile", "basic", "bca"):
        assert float(bca.p_value(2.0, reps, 10.0, method=method, accel=0.0)) == 0.0
        assert float(bca.p_value(2.0, reps, -10.0, method=method, accel=0.0)) == 0.0
    # BCa with a > 0: G = 1 gives z = 1/a - z0, a finite but tiny p
    p = float(bca.p_value(2.0, reps, 10.0, method="bca", accel=0.2))
    assert p == pytest.approx(2 * sps.norm.sf(5.0), rel=1e-9)
    # NaN reference, degenerate or non-finite replicates: NaN, as the bounds of interval()
    assert np.isnan(bca.p_value(2.0, reps, np.nan, method="percentile"))
    assert np.isnan(bca.p_value(2.0, np.full(5, 2.0), 1.0, method="bca", accel=0.0))
    assert np.isnan(bca.p_value(2.0, np.r_[reps[:4], np.nan], 1.0, method="percentile"))
    with pytest.raises(ValueError, match="jackknife"):
        bca.p_value(2.0, reps, 1.0)


def test_p_value_agrees_with_the_interval_for_random_data():
    # p <= 1 - ci exactly when the reference is outside the interval (G inverts the
    # interpolated quantile of interval(), so there is no interpolation band left)
    disagree, total = 0, 0
    for seed in range(40):
        r = np.random.default_rng(seed)
        m, n_boot = int(r.integers(5, 150)), int(r.integers(50, 1500))
        x = r.standard_exponential(m) ** r.uniform(0.5, 2.0)
        reps = x[r.integers(0, m, (n_boot, m))].mean(-1)
        jack = (x.sum() - x) / (m - 1)
        refs = x.mean() + 2 * reps.std() * r.standard_normal(100)
        for method in ("bca", "percentile", "basic"):
            p = bca.p_value(x.mean(), reps, refs, method=method, jackknife=jack)
            assert np.all((p >= 0) & (p <= 1))
            for ci in (0.5, 0.9, 0.95, 0.99):
                ivl = bca.interval(x.mean(), reps, jackknife=jack, ci=ci, method=method)
                outside = (refs < ivl["lower"]) | (refs > ivl["upper"])
                disagree += int(np.sum((p <= 1 - ci) != outside))
                total += refs.size
    assert total == 48_000 and disagree == 0


def test_p_value_vectorised_over_leading_axes():
    r = np.random.default_rng(3)
    reps = r.standard_normal((2, 3, 400))
    est, ref, a = r.normal(0, 0.1, (2, 3)), r.normal(0, 1, (2, 3)), r.normal(0, 0.05, (2, 3))
    p = bca.p_value(est, reps, ref, accel=a)
    assert p.shape == (2, 3)
    for i in range(2):
        for j in range(3):
            assert p[i, j] == bca.p_value(est[i, j], reps[i, j], ref[i, j], accel=a[i, j])


@pytest.mark.parametrize("method", ["bca", "percentile"])
def test_p_value_uniform_under_the_null(method):
    # the mean of M = 100 normal points against the true mean: p ~ U(0, 1)
    r = np.random.default_rng(20)
    n_sets, m, n_boot = 400, 100, 1000
    p = np.empty(n_sets)
    for k in range(n_sets):
        x = r.standard_normal(m)
        reps = x[r.integers(0, m, (n_boot, m))].mean(-1)
        p[k] = bca.p_value(x.mean(), reps, 0.0, method=method, jackknife=(x.sum() - x) / (m - 1))
    assert sps.kstest(p, "uniform").pvalue > 0.01
    # rejection rate at 0.05 within 2.5 binomial se (0.011) of 0.05
    assert abs(np.mean(p <= 0.05) - 0.05) < 0.03
