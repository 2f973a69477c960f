"""The Student-t null of the verdicts (uqviz._array.tails) against scipy and exact laws."""

import numpy as np
import pytest
from scipy import optimize, stats

from uqviz._array import tails


def _scipy_profile(z, nu):
    """max over the scale of the t log-likelihood, by scipy's optimiser and logpdf."""

    def nll(log_s):
        return -np.sum(stats.t.logpdf(z, nu, loc=0.0, scale=np.exp(log_s)))

    res = optimize.minimize_scalar(nll, bounds=(-5, 5), method="bounded", options={"xatol": 1e-10})
    return -res.fun


@pytest.mark.parametrize("nu", [2.5, 4.0, 10.0])
def test_profile_equals_scipy_maximised_likelihood(nu):
    z = 3.0 * np.random.default_rng(0).standard_t(4, 800)
    got = tails.t_profile(z, [nu])[0]
    assert got == pytest.approx(_scipy_profile(z, nu), abs=1e-6)


def test_profile_normal_is_the_gaussian_likelihood():
    z = np.random.default_rng(1).normal(0, 2.0, 500)
    got = tails.t_profile(z, [np.inf])[0]
    want = np.sum(stats.norm.logpdf(z, 0, np.sqrt(np.mean(z * z))))
    assert got == pytest.approx(want, rel=1e-12)


def test_profile_does_not_depend_on_the_scale():
    z = np.random.default_rng(2).standard_t(3, 1000)
    a, b = tails.t_profile(z), tails.t_profile(7.5 * z)
    # a scale change shifts the log-likelihood by -M log 7.5 at every df: the same shape
    np.testing.assert_allclose(b - a, -1000 * np.log(7.5), rtol=1e-8)


def test_estimate_agrees_with_scipy_fit():
    z = np.random.default_rng(3).standard_t(3.5, 5000)
    df_scipy = stats.t.fit(z, floc=0)[0]
    est, low = tails.tail_df(z)
    grid = tails.PROFILE_DF
    step = grid[1] / grid[0]  # geometric grid: the estimate is a grid point
    assert df_scipy / step <= est <= df_scipy * step
    assert low < est


def test_lower_bound_covers_95_percent():
    """The one-sided 95 % bound exceeds the true df in about 5 % of sets (binomial se)."""
    rng = np.random.default_rng(4)
    above = [tails.tail_df(rng.standard_t(4.0, 1000))[1] > 4.0 for _ in range(300)]
    rate = np.mean(above)
    assert rate <= 0.05 + 3 * np.sqrt(0.05 * 0.95 / 300)
    assert rate >= 0.005  # a bound, not a constant


def test_thinned_profile_matches_full_likelihood(monkeypatch):
    z = np.random.default_rng(5).standard_t(3, 40_000)
    monkeypatch.setattr(tails, "MAX_PROFILE_POINTS", 10**6)
    full = tails.tail_df(z)
    monkeypatch.setattr(tails, "MAX_PROFILE_POINTS", 10_000)
    thin = tails.tail_df(z)
    assert thin[0] == full[0]
    assert thin[1] == pytest.approx(full[1], rel=0.02)


def test_degenerate_inputs():
    assert np.isnan(tails.tail_df(np.zeros(20))).all()
    assert np.isnan(tails.tail_df([1.0, np.inf, 2.0])).all()
    assert np.isnan(tails.null_p_value(np.nan, 100, 3.0))
    assert np.isnan(tails.null_p_value(0.0, 100, np.nan))


def _log_chi2_quantiles(levels, k):
    """Quantiles of log(chi2(k)/k) and their Monte Carlo se from the table's n_sets draws."""
    x = stats.chi2.ppf(levels, k)
    density = stats.chi2.pdf(x, k) * x  # density of log(chi2) at log(x)
    return np.log(x / k), density


@pytest.mark.parametrize("m", [10, 200, 5000])
def test_normal_null_is_chi_square(m):
    """With nu = inf, M ZMS ~ chi2(M) and (M - 1) ZVar ~ chi2(M - 1): the table's quantiles,
    within 4 Monte Carlo se of a quantile of n_sets draws, sqrt(p (1 - p) / n) / density."""
    t = tails.null_table()
    levels = stats.norm.cdf(t["z_levels"])
    n = t["n_sets"][np.searchsorted(t["m"], m)]
    for stat, k in (("ZMS", m), ("ZVar", m - 1)):
        exact, density = _log_chi2_quantiles(levels, k)
        se = np.sqrt(levels * (1 - levels) / n) / density
        got = tails.null_quantiles(m, np.inf, stat)
        assert np.all(np.abs(got - exact) <= 4 * se + 1e-4), stat


@pytest.mark.parametrize("m", [20_000, 1_000_000])
def test_normal_null_beyond_the_table_by_its_rate(m):
    levels = stats.norm.cdf([-2.0, 0.0, 2.0])
    exact = np.log(stats.chi2.ppf(levels, m) / m)
    q = tails.null_quantiles(m, np.inf, "ZMS")[[5, 15, 25]]
    np.testing.assert_allclose(q, exact, atol=0.02 * (exact[2] - exact[0]))


def test_p_value_of_the_normal_null():
    m = 1000
    for x in (-0.1, -0.05, 0.0, 0.06):
        f = stats.chi2.cdf(m * np.exp(x), m)
        assert tails.null_p_value(x, m, np.inf) == pytest.approx(2 * min(f, 1 - f), abs=0.01)


def test_t_null_is_calibrated_on_fresh_t_draws():
    """p-values of independent calibrated t3 sets (unit variance) are about uniform."""
    rng = np.random.default_rng(6)
    m, nu = 800, 3.0
    z = rng.standard_t(nu, (2000, m)) / np.sqrt(nu / (nu - 2))
    p = np.array([tails.null_p_value(np.log(np.mean(r * r)), m, nu) for r in z])
    assert np.mean(p <= 0.05) == pytest.approx(0.05, abs=3 * np.sqrt(0.05 * 0.95 / 2000))
    assert np.mean(p <= 0.5) == pytest.approx(0.5, abs=0.04)


def test_heavier_null_is_wider():
    """A heavier t gives a larger upper quantile of the ZMS: the null is conservative."""
    hi = [tails.null_quantiles(5000, nu)[-6] for nu in (3.0, 5.0, 20.0, np.inf)]
    assert np.all(np.diff(hi) < 0)


def test_effective_size():
    assert tails.effective_size(np.ones(7)) == 7.0
    assert tails.effective_size([1.0, 0.0, 0.0]) == 1.0
