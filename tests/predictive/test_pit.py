"""PIT values, their uniformity tests and the simultaneous ECDF band."""

from __future__ import annotations


import numpy as np
import pytest
import xarray as xr
from scipy import stats

import uqviz
from uqviz._array import pit as pit_kernels
from uqviz.predictive.pit import PIT_GRID, default_histogram_bins


def _normal_set(n, rng, scale=1.0):
    u = np.exp(0.3 * rng.normal(size=n))
    return uqviz.from_arrays(scale * u * rng.normal(size=n), u)


def _with_pit(u):
    """A std forecast whose PIT is (to rounding) ``u``: E = uE Phi^-1(u)."""
    s = np.linspace(0.5, 2.0, u.size)
    return uqviz.from_arrays(s * stats.norm.ppf(u), s)


# ------------------------------------------------------------------------------------------
# PIT values
# ------------------------------------------------------------------------------------------


def test_pit_of_a_normal_forecast_is_the_normal_cdf_exactly():
    ds = _normal_set(500, np.random.default_rng(0))
    res = uqviz.pit(ds, rng=1)
    np.testing.assert_array_equal(
        res["PIT"].values, stats.norm.cdf(ds["E"].values / ds["uE"].values)
    )
    assert res.attrs["generative"] == "normal" and res.attrs["forecast"] == "std"


def test_pit_of_a_t_forecast_and_the_same_numbers_for_the_same_rng():
    ds = _normal_set(50, np.random.default_rng(0))
    z = ds["E"].values / ds["uE"].values
    np.testing.assert_allclose(
        uqviz.pit(ds, generative="t5")["PIT"].values, stats.t.cdf(z * np.sqrt(5 / 3), 5), rtol=1e-12
    )
    ens = uqviz.from_predictions(
        np.zeros(50), None, samples=np.random.default_rng(2).integers(-3, 4, (50, 6))
    )
    a, b = uqviz.pit(ens, rng=7), uqviz.pit(ens, rng=7)
    np.testing.assert_array_equal(a["PIT"].values, b["PIT"].values)
    assert not np.array_equal(a["PIT"].values, uqviz.pit(ens, rng=8)["PIT"].values)


def test_randomised_pit_of_an_ensemble_lies_between_the_left_and_right_limits():
    draws = np.array([[0.0, 1.0, 1.0, 2.0]] * 4000)
    ds = uqviz.from_predictions(np.ones(4000), None, samples=draws)
    u = uqviz.pit(ds, rng=0)["PIT"].values
    # 1 member below y, 2 tied: the rank of y among the 5 values is 1, 2 or 3
    assert u.min() >= 0.2 and u.max() <= 0.8
    # uniform on (0.2, 0.8): KS against that law
    assert stats.kstest(u, "uniform", args=(0.2, 0.6)).pvalue > 0.01
    # no tie: the rank bin of y, (b/(S+1), (b+1)/(S+1))
    ds = uqviz.from_predictions(np.full(2000, 0.5), None, samples=[[0.0, 1.0, 1.0, 2.0]] * 2000)
    u = uqviz.pit(ds, rng=0)["PIT"].values
    assert u.min() >= 0.2 and u.max() <= 0.4


def test_randomised_pit_of_calibrated_discrete_ensembles_is_uniform():
    # y and the 9 members drawn from the same Poisson law: many ties, a calibrated ensemble
    rng = np.random.default_rng(11)
    lam = rng.uniform(1.0, 4.0, size=(3000, 1))
    y = rng.poisson(lam[:, 0]).astype(float)
    draws = rng.poisson(lam, size=(3000, 9)).astype(float)
    ds = uqviz.from_predictions(y, None, samples=draws)
    res = uqviz.validate_pit(ds, rng=3)
    # the randomised PIT of an ensemble has the law of a rank among 10 values: uniform
    assert float(res["ks_p_value"]) > 0.05 and float(res["cvm_p_value"]) > 0.05
    assert bool(res["valid"])
    # an overdispersed truth (y more spread than the members) fails
    y_wide = rng.poisson(lam[:, 0] * rng.choice([0.2, 3.0], 3000)).astype(float)
    bad = uqviz.validate_pit(uqviz.from_predictions(y_wide, None, samples=draws), rng=3)
    assert not bool(bad["valid"]) and float(bad["ks_p_value"]) < 1e-6


def test_pit_of_quantiles_randomised_within_tied_quantiles():
    q = {0.1: [-1.0] * 2000, 0.3: [0.0] * 2000, 0.6: [0.0] * 2000, 0.9: [1.0] * 2000}
    ds = uqviz.from_predictions(np.zeros(2000), np.zeros(2000), quantiles=q)
    u = uqviz.pit(ds, rng=0)["PIT"].values
    assert u.min() >= 0.3 and u.max() <= 0.6 and abs(u.mean() - 0.45) < 0.01


def test_pit_of_an_interval_forecast_is_drawn_in_the_bracketing_levels():
    # 80 % interval [-1, 1]: levels 0.1 and 0.9; y inside -> U(0.1, 0.9), below -> U(0, 0.1),
    # above -> U(0.9, 1); the prediction (here off-centre) plays no part
    n = 3000
    y = np.repeat([0.5, -2.0, 3.0], n)
    with pytest.warns(uqviz.DataWarning, match="asymmetric interval"):
        ds = uqviz.from_predictions(
            y, np.full(3 * n, 0.2), lower=np.full(3 * n, -1.0), upper=np.full(3 * n, 1.0), level=0.8
        )
    u = uqviz.pit(ds, rng=0)["PIT"].values.reshape(3, n)
    for row, (a, b) in zip(u, [(0.1, 0.9), (0.0, 0.1), (0.9, 1.0)]):
        assert row.min() >= a and row.max() <= b
        assert stats.kstest(row, "uniform", args=(a, b - a)).pvalue > 0.01


def test_pit_of_quantiles_at_a_given_quantile_is_its_level():
    q = {0.1: [-1.0, -1.0], 0.5: [0.0, 0.0], 0.9: [1.0, 1.0]}
    ds = uqviz.from_predictions([0.0, 1.0], [0.0, 0.0], quantiles=q)
    np.testing.assert_array_equal(uqviz.pit(ds, rng=0)["PIT"].values, [0.5, 0.9])


@pytest.mark.parametrize("levels", [(0.05, 0.25, 0.5, 0.75, 0.95), (0.1, 0.9)])
def test_calibrated_quantile_forecast_few_levels_has_a_uniform_pit(levels):
    # quantiles of the true normal law at a few levels: the PIT is exactly uniform (the
    # piecewise-linear CDF between them was not: five levels, 3000 points failed the band)
    rng = np.random.default_rng(11)
    n = 20_000
    mu, sd = rng.normal(size=n), np.exp(rng.normal(scale=0.3, size=n))
    y = mu + sd * rng.standard_normal(n)
    q = {p: mu + sd * stats.norm.ppf(p) for p in levels}
    ds = uqviz.from_predictions(y, mu, quantiles=q)
    u = uqviz.pit(ds, rng=0)["PIT"].values
    assert stats.kstest(u, "uniform").pvalue > 0.01
    fails = 0
    for k in range(40):  # false alarm of the band verdict at ci = 0.95 on 3000 points
        r = np.random.default_rng(100 + k)
        mu, sd = r.normal(size=3000), np.exp(r.normal(scale=0.3, size=3000))
        yk = mu + sd * r.standard_normal(3000)
        dk = uqviz.from_predictions(
            yk, mu, quantiles={p: mu + sd * stats.norm.ppf(p) for p in levels}
        )
        fails += not bool(uqviz.validate_pit(dk, rng=k, n_band=500)["valid"])
    assert fails <= 6  # binomial(40, 0.05): P(X >= 7) < 0.01


def test_pit_of_a_datatree_is_one_per_child():
    rng = np.random.default_rng(0)
    tree = xr.DataTree.from_dict({"a": _normal_set(30, rng), "b": _normal_set(20, rng)})
    res = uqviz.pit(tree, rng=0)
    assert res["dataset"].values.tolist() == ["a", "b"]
    b = tree["b"].to_dataset()
    np.testing.assert_array_equal(
        res["PIT"].sel(dataset="b").dropna("point").values,
        stats.norm.cdf(b["E"].values / b["uE"].values),
    )


# ------------------------------------------------------------------------------------------
# uniformity: histogram, KS, CvM, moments
# ------------------------------------------------------------------------------------------


def test_ks_and_cvm_equal_scipy():
    ds = _normal_set(3000, np.random.default_rng(5), scale=1.05)
    res = uqviz.validate_pit(ds, rng=0, n_band=100)
    u = uqviz.pit(ds)["PIT"].values
    ks = stats.kstest(u, "uniform")
    cvm = stats.cramervonmises(u, "uniform")
    assert float(res["ks_statistic"]) == pytest.approx(ks.statistic, rel=1e-12)
    assert float(res["ks_p_value"]) == pytest.approx(ks.pvalue, rel=1e-9)
    assert float(res["cvm_statistic"]) == pytest.approx(cvm.statistic, rel=1e-12)
    assert float(res["cvm_p_value"]) == pytest.approx(cvm.pvalue, rel=1e-9)


def test_histogram_counts_hand_checked():
    u = np.array([0.05, 0.15, 0.12, 0.55, 0.95, 0.99, 0.51, 0.52, 0.53, 0.31])
    res = uqviz.validate_pit(_with_pit(u), n_bins=5, n_band=50, rng=0)
    assert res["pit_count"].values.tolist() == [3, 1, 4, 0, 2]
    assert res["bin_lower"].values.tolist() == pytest.approx([0.0, 0.2, 0.4, 0.6, 0.8])
    lo, hi = stats.binom.ppf([0.025, 0.975], 10, 0.2)
    assert res["pit_count_lower"].values.tolist() == [lo] * 5
    assert res["pit_count_upper"].values.tolist() == [hi] * 5
    assert res.attrs["n_bins"] == 5


def test_moments_and_their_normal_intervals():
    u = np.random.default_rng(2).uniform(size=400) ** 1.2
    res = uqviz.validate_pit(_with_pit(u), ci=0.9, n_band=50, rng=0)
    pit = uqviz.pit(_with_pit(u))["PIT"].values
    z = stats.norm.ppf(0.95)
    m, s2 = pit.mean(), pit.var(ddof=1)
    m4 = np.mean((pit - m) ** 4)
    assert float(res["pit_mean"]) == pytest.approx(m, rel=1e-12)
    assert float(res["pit_mean_upper"]) == pytest.approx(m + z * np.sqrt(s2 / 400), rel=1e-12)
    assert float(res["pit_var"]) == pytest.approx(s2, rel=1e-12)
    assert float(res["pit_var_lower"]) == pytest.approx(
        s2 - z * np.sqrt((m4 - s2**2) / 400), rel=1e-12
    )


def test_default_histogram_bins():
    assert [default_histogram_bins(m) for m in (5, 10, 73, 200, 10**6)] == [1, 1, 7, 20, 20]


# ------------------------------------------------------------------------------------------
# the simultaneous band and the verdict
# ------------------------------------------------------------------------------------------


def test_band_false_alarm_rate_is_about_one_minus_ci():
    n, ci = 150, 0.9
    lo, hi, gamma = pit_kernels.simultaneous_band(n, PIT_GRID, ci, 2000, 123)
    assert ci < gamma < 1.0  # the pointwise level is raised to make the band simultaneous
    rng = np.random.default_rng(99)
    u = np.sort(rng.uniform(size=(4000, n)), axis=1)
    counts = np.stack([np.searchsorted(r, PIT_GRID, side="right") for r in u])
    outside = ~((lo <= counts) & (counts <= hi)).all(axis=1)
    rate = outside.mean()
    # Monte Carlo se of the rate 0.005; the band's own simulation error about 0.007
    assert abs(rate - (1 - ci)) < 0.03, rate
    # pointwise bands (gamma = ci) would cry wolf far more often
    plo, phi = stats.binom.interval(ci, n, PIT_GRID)
    assert (~((plo <= counts) & (counts <= phi)).all(axis=1)).mean() > 0.4


def test_band_shortlist_equals_the_full_search():
    grid = tuple(PIT_GRID)
    full = pit_kernels.band_levels.__wrapped__  # uncached: SHORTLIST_N is read at each call
    old = pit_kernels.SHORTLIST_N
    try:
        pit_kernels.SHORTLIST_N = 10**12
        a = full(20_000, grid, 300, 4)
    finally:
        pit_kernels.SHORTLIST_N = old
    np.testing.assert_array_equal(full(20_000, grid, 300, 4), a)
    assert np.quantile(a, 0.95) == pit_kernels.band_gamma.__wrapped__(20_000, grid, 0.95, 300, 4)


@pytest.mark.parametrize("n", [40, 300])
def test_band_level_is_the_ci_quantile_of_the_simulated_pointwise_levels(n):
    # the definition, evaluated directly (every trial, every grid value)
    grid = np.asarray(PIT_GRID)
    rng = np.random.default_rng(6)
    probs = np.diff(np.concatenate(([0.0], grid, [1.0])))
    c = np.cumsum(rng.multinomial(n, probs, size=500)[:, :-1], axis=1)
    lower = stats.binom.cdf(c, n, grid).min(axis=1)
    upper = stats.binom.sf(c - 1, n, grid).min(axis=1)
    want = np.quantile(1.0 - 2.0 * np.minimum(lower, upper), 0.9)
    assert pit_kernels.band_gamma.__wrapped__(n, tuple(PIT_GRID), 0.9, 500, 6) == pytest.approx(
        want, rel=1e-12
    )
    lo, hi, gamma = pit_kernels.simultaneous_band(n, PIT_GRID, 0.9, 500, 6)
    np.testing.assert_array_equal(
        np.stack([lo, hi]), np.stack(stats.binom.interval(gamma, n, grid))
    )


def test_valid_is_the_ecdf_inside_the_band():
    for scale, want in ((1.0, True), (1.3, False)):
        ds = _normal_set(2000, np.random.default_rng(8), scale=scale)
        res = uqviz.validate_pit(ds, rng=0, n_band=400)
        inside = (
            (res["ecdf_difference_lower"] <= res["ecdf_difference"])
            & (res["ecdf_difference"] <= res["ecdf_difference_upper"])
        ).all()
        assert bool(res["valid"]) == bool(inside) == want
        assert res.attrs["band_level"] > 0.95


def test_band_p_value_is_hopes_monte_carlo_p_value_of_the_band_statistic():
    # the definition evaluated directly: the simulated uniform ECDFs of the band (the same
    # multinomial draws as the kernel, seeded by the kernel seed of the stream after the PIT
    # randomisation), their smallest pointwise levels, and the data's
    n, n_band = 300, 400
    ds = _normal_set(n, np.random.default_rng(3), scale=1.15)
    res = uqviz.validate_pit(ds, rng=5, n_band=n_band)
    from uqviz.engine import seeds

    gen = seeds.spawn(5, 1)[0]  # a single dataset's stream: the first child of rng
    gen.random(n)  # the PIT randomisation's draw (unused for a std forecast, drawn all the same)
    seed = seeds.kernel_seed(gen)
    grid = np.asarray(PIT_GRID)
    sim = np.random.default_rng(seed)
    probs = np.diff(np.concatenate(([0.0], grid, [1.0])))
    c = np.cumsum(sim.multinomial(n, probs, size=n_band)[:, :-1], axis=1)
    levels = 1.0 - 2.0 * np.minimum(
        stats.binom.cdf(c, n, grid).min(axis=1), stats.binom.sf(c - 1, n, grid).min(axis=1)
    )
    u = np.sort(stats.norm.cdf((ds["E"] / ds["uE"]).values))
    d = np.searchsorted(u, grid, side="right")
    mine = 1.0 - 2.0 * min(stats.binom.cdf(d, n, grid).min(), stats.binom.sf(d - 1, n, grid).min())
    want = (1 + np.sum(levels >= mine * (1 - 1e-12))) / (1 + n_band)
    assert float(res["band_p_value"]) == pytest.approx(want, abs=1e-12)
    assert res.attrs["band_level"] == pytest.approx(np.quantile(levels, 0.95), rel=1e-12)
    assert res["band_p_value"].attrs["long_name"]


def test_band_p_value_agrees_with_valid_up_to_the_discreteness():
    # valid <=> p > 1 - ci; outside the band p <= 1 - ci + 2 / (1 + n_band) (Notes)
    n_band, ci, seen = 500, 0.95, set()
    for n in (30, 200, 2000):
        for s in range(25):
            rng = np.random.default_rng(s)
            ds = _normal_set(n, rng, scale=1.0 + 0.15 * abs(rng.standard_normal()))
            res = uqviz.validate_pit(ds, rng=s, n_band=n_band, ci=ci)
            valid, p = bool(res["valid"]), float(res["band_p_value"])
            seen.add(valid)
            if valid:
                assert p > 1 - ci, (n, s, p)
            else:
                assert p <= 1 - ci + 2 / (1 + n_band), (n, s, p)
            assert 1 / (1 + n_band) <= p <= 1
    assert seen == {True, False}  # both sides checked


def test_validate_pit_of_a_datatree_and_bad_options():
    rng = np.random.default_rng(0)
    tree = xr.DataTree.from_dict({"a": _normal_set(300, rng), "b": _normal_set(200, rng)})
    res = uqviz.validate_pit(tree, rng=0, n_band=50)
    assert res["dataset"].values.tolist() == ["a", "b"]
    assert res["n_points"].values.tolist() == [300, 200]
    ds = tree["a"].to_dataset()
    with pytest.raises(ValueError, match="n_band"):
        uqviz.validate_pit(ds, n_band=1)
    with pytest.raises(ValueError, match="ci"):
        uqviz.validate_pit(ds, ci=1.5)
    with pytest.raises(ValueError, match="'empirical' has no predictive CDF"):
        uqviz.validate_pit(ds, generative="empirical")
    with pytest.raises(ValueError, match="lacks samples"):
        uqviz.validate_pit(ds.assign_attrs(forecast="samples"))


# ------------------------------------------------------------------------------------------
# local PIT
# ------------------------------------------------------------------------------------------


def test_local_pit_per_bin_of_uE():
    rng = np.random.default_rng(4)
    u = np.exp(0.5 * rng.normal(size=2000))
    # calibrated for small uE, overconfident for large uE: the PIT is not uniform there
    e = u * rng.normal(size=2000) * np.where(u > np.median(u), 1.6, 1.0)
    ds = uqviz.from_arrays(e, u)
    res = uqviz.local_pit(ds, n_bins=4, rng=0, n_band=300)
    assert res["count"].values.tolist() == [500] * 4
    assert res["valid"].values.tolist()[:2] == [True, True]
    assert res["valid"].values.tolist()[2:] == [False, False]
    assert float(res["fv"]) == 0.5 and int(res["n_valid"]) == 2
    # each bin's KS is scipy's on the bin's PIT values
    pit = uqviz.pit(ds)["PIT"].values
    first = np.argsort(u, kind="stable")[:500]
    ks = stats.kstest(pit[first], "uniform")
    assert float(res["ks_statistic"][0]) == pytest.approx(ks.statistic, rel=1e-12)
    assert float(res["ks_p_value"][0]) == pytest.approx(ks.pvalue, rel=1e-9)
    assert res.attrs["conditioning"] == "uE" and res.attrs["n_bins"] == 4


def test_local_pit_on_a_feature():
    rng = np.random.default_rng(4)
    x = rng.uniform(size=1000)
    ds = uqviz.from_arrays(rng.normal(size=1000), np.ones(1000), features={"x": x})
    res = uqviz.local_pit(ds, conditioning="x", n_bins=2, rng=0, n_band=100)
    assert res.sizes["bin"] == 2 and res.attrs["conditioning"] == "x"
    with pytest.raises(ValueError, match="conditioning variable 'nope'"):
        uqviz.local_pit(ds, conditioning="nope")


def test_a_forecast_without_y_is_read_in_error_space():
    # quantiles of E (prediction 0) give the PIT of the same quantiles of y shifted by y_pred
    rng = np.random.default_rng(4)
    n = 400
    y_pred, u = rng.normal(size=n), np.exp(rng.normal(scale=0.3, size=n))
    y = y_pred + u * rng.standard_normal(n)
    levels = (0.1, 0.5, 0.9)
    given = uqviz.from_predictions(
        y, y_pred, quantiles={p: y_pred + u * stats.norm.ppf(p) for p in levels}
    )
    errors = given.drop_vars("y").assign(quantiles=given["quantiles"] - (y - given["E"]))
    np.testing.assert_allclose(
        uqviz.pit(errors, rng=0)["PIT"].values, uqviz.pit(given, rng=0)["PIT"].values, rtol=1e-12
    )


def test_local_pit_never_ignores_edges():
    """issue 38, item 9: ``local_pit(edges=[nan, 1])`` ran on equal-count bins."""
    r = np.random.default_rng(0)
    u = r.uniform(0.5, 2.0, 80)
    ds = uqviz.from_arrays(r.standard_normal(80) * u, u)
    with pytest.raises(ValueError, match="edges: bin edges are used only with binning='edges'"):
        uqviz.local_pit(ds, edges=[np.nan, 1.0], rng=0)
    with pytest.raises(ValueError, match="edges has 1 non-finite value"):
        uqviz.local_pit(ds, binning="edges", edges=[np.nan, 1.0], rng=0)
