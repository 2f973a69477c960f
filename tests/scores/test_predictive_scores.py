"""Scores of the forecast as given (issue 23, item 3): kernels against the peer fixtures,
predictive_scores and compare_forecasts.

The fixtures (tests/fixtures/predictive.npz, written by make_predictive_fixtures.py in a side
environment) hold properscoring 0.1's and scoringrules 0.10.0's per-point outputs: the CRPS of
an ensemble, plain (properscoring ``crps_ensemble``; scoringrules ``nrg``, ``int``, ``qd``) and
fair (scoringrules ``fair``, ``pwm``; Ferro (2014)), the quantile, interval and weighted
interval scores (Bracher et al. (2021); the numba backend, the numpy one being wrong in 0.10.0).
"""

from __future__ import annotations


import numpy as np
import pytest
import xarray as xr
from scipy import stats

import uqviz
from uqviz._array import predictive_scores as predictive_scores_kernels
from uqviz._array.jit import USE_NUMBA

from tests.conftest import PeerFixtures

PEER = PeerFixtures("predictive")
FIXTURES, META, ARRAYS, SET = PEER.folder, PEER.meta, PEER.arrays, PEER.settings
TOL = dict(rtol=0.0, atol=1e-9)
K = predictive_scores_kernels
PATHS = [False, True] if USE_NUMBA else [False]


_in, _out = PEER.inputs, PEER.output


CRPS_RUNS = [
    (case, key[len("ens_") :])
    for case in sorted(META["cases"]["crps"])
    for key in sorted(_in("crps", case))
    if key.startswith("ens_")
]


def _interval_case(case):
    """y, the quantiles sorted by level, the sorted levels, lower, upper, alpha."""
    inp = _in("intervals", case)
    y, med, lo, hi = inp["y"], inp["median"], inp["lower"], inp["upper"]
    levels = np.asarray(SET["quantile_levels"])
    fct = np.concatenate([lo, med[:, None], hi[:, ::-1]], axis=1)  # in the order of levels
    order = np.argsort(levels)
    return y, fct[:, order], levels[order], lo, hi, np.asarray(SET["interval_alpha"]), fct, levels


def _dataset(y, form, **variables):
    """A dataset of the brief's data model, built by hand (from_arrays + the forecast)."""
    n = y.size
    ds = uqviz.from_arrays(np.zeros(n) + 0.0 * y, np.ones(n))
    level = variables.pop("level", None)
    levels = variables.pop("levels", None)
    ds = ds.assign(y=("point", y))
    for name, value in variables.items():
        dims = (
            ("point", "sample")
            if name == "samples"
            else ("point", "level")
            if name == "quantiles"
            else ("point",)
        )
        ds = ds.assign({name: (dims, value)})
    if levels is not None:
        ds = ds.assign_coords(level=levels)
    if level is not None:
        ds["lower"].attrs["level"] = level
        ds.attrs["level"] = level
    ds.attrs["forecast"] = form
    return ds


def _ensemble_dataset(case, m):
    inp = _in("crps", case)
    return _dataset(inp["y"], "samples", samples=inp[f"ens_{m}"])


# ------------------------------------------------------------------------------------
# kernels = the peers, to 1e-9
# ------------------------------------------------------------------------------------


@pytest.mark.parametrize("use_numba", PATHS)
@pytest.mark.parametrize(("case", "m"), CRPS_RUNS)
def test_ensemble_crps_equals_properscoring_and_scoringrules(case, m, use_numba):
    inp = _in("crps", case)
    plain, fair = K.crps_ensemble_pair(inp["y"], inp[f"ens_{m}"], use_numba=use_numba)
    for name in SET["crps_plain"]:  # properscoring, sr nrg, int, qd
        np.testing.assert_allclose(plain, _out("crps", case, f"{m}/{name}"), **TOL, err_msg=name)
    for name in SET["crps_fair"]:  # sr fair, pwm
        np.testing.assert_allclose(fair, _out("crps", case, f"{m}/{name}"), **TOL, err_msg=name)
    np.testing.assert_array_equal(
        K.crps_ensemble(inp["y"], inp[f"ens_{m}"], fair=True, use_numba=use_numba), fair
    )


def test_ties_case_ensembles_of_points_equal_to_y_score_zero():
    inp = _in("crps", "ties")
    plain, fair = K.crps_ensemble_pair(inp["y"], inp["ens_m2"])
    assert set(SET["crps_plain"]) >= {"properscoring", "sr_nrg"}
    np.testing.assert_allclose(plain[:5], 0.0, atol=1e-15)
    np.testing.assert_allclose(fair[:5], 0.0, atol=1e-15)
    # a point mass (all members 3) scores |y - 3| under both estimators
    plain, fair = K.crps_ensemble_pair(inp["y"], inp["ens_m10"])
    np.testing.assert_allclose(plain[5:10], np.abs(inp["y"][5:10] - 3.0), atol=1e-12)
    np.testing.assert_allclose(fair[5:10], np.abs(inp["y"][5:10] - 3.0), atol=1e-12)


def test_ensemble_crps_by_hand():
    # members 0, 1, 2 and y = 0.5: mean|x - y| = 5/6; sum_ij |x_i - x_j| = 8
    plain, fair = K.crps_ensemble_pair([0.5], [[2.0, 0.0, 1.0]])
    assert plain[0] == pytest.approx(5 / 6 - 8 / 18, abs=1e-15)
    assert fair[0] == pytest.approx(5 / 6 - 8 / 12, abs=1e-15)


def test_ensemble_crps_keeps_its_digits_far_from_zero():
    """The members are centred on y: a shift by 1e8 changes nothing beyond rounding of x."""
    inp = _in("crps", "small")
    y, x = inp["y"], inp["ens_m100"]
    p0, f0 = K.crps_ensemble_pair(y, x)
    p1, f1 = K.crps_ensemble_pair(y + 2.0**27, x + 2.0**27)  # exact shift (grid inputs)
    np.testing.assert_allclose(p1, p0, atol=1e-9)
    np.testing.assert_allclose(f1, f0, atol=1e-9)


@pytest.mark.parametrize("case", sorted(META["cases"]["intervals"]))
def test_quantile_interval_and_weighted_interval_scores_equal_scoringrules(case):
    y, q, levels, lo, hi, alpha, fct, raw_levels = _interval_case(case)
    # pinball per level, in the fixture's order of levels
    np.testing.assert_allclose(
        K.quantile_scores(y, fct, raw_levels), _out("intervals", case, "quantile_score"), **TOL
    )
    np.testing.assert_allclose(
        K.interval_score(y, lo, hi, 1.0 - alpha), _out("intervals", case, "interval_score"), **TOL
    )
    for use_numba in PATHS:
        wis = K.weighted_interval_score(y, q, levels, use_numba=use_numba)
        np.testing.assert_allclose(wis, _out("intervals", case, "wis"), **TOL)
        assert not np.allclose(wis, _out("intervals", case, "wis_numpy_backend"))
        # CRPS from the quantiles = WIS for symmetric levels with the median
        np.testing.assert_allclose(
            K.crps_quantiles(y, q, levels, use_numba=use_numba), wis, rtol=1e-13, atol=1e-13
        )


def test_crps_from_quantiles_by_hand_and_its_documented_bias():
    # y = 0; quantiles -1, 0, 1 at 0.25, 0.5, 0.75: QS = 0.25, 0, 0.25 -> 2/3 * 0.5
    assert K.crps_quantiles([0.0], [[-1.0, 0.0, 1.0]], [0.25, 0.5, 0.75])[0] == pytest.approx(
        1 / 3, abs=1e-15
    )
    # expected bias for a calibrated normal, as stated in the docstring
    rng = np.random.default_rng(4)
    y = rng.standard_normal(400_000)
    for levels, bias in [
        (np.linspace(0.01, 0.99, 99), 0.010),
        (np.linspace(0.05, 0.95, 19), 0.048),
    ]:
        q = np.broadcast_to(stats.norm.ppf(levels), (y.size, levels.size))
        ratio = K.crps_quantiles(y, q, levels).mean() * np.sqrt(np.pi)
        assert ratio - 1.0 == pytest.approx(bias, abs=0.004)
        exact = 2.0 / levels.size * stats.norm.pdf(stats.norm.ppf(levels)).sum() * np.sqrt(np.pi)
        assert exact - 1.0 == pytest.approx(bias, abs=5e-4)


def test_interval_score_by_hand():
    # [-1, 1] at level 0.5 (alpha 0.5): width 2; y = 3 adds 2/0.5 * 2 = 8
    np.testing.assert_array_equal(
        K.interval_score([0.0, 3.0, -2.0], [-1.0] * 3, [1.0] * 3, 0.5), [2.0, 10.0, 6.0]
    )


@pytest.mark.skipif(not USE_NUMBA, reason="numba not installed")
def test_numpy_and_numba_paths_give_the_same_numbers():
    rng = np.random.default_rng(11)
    y = rng.normal(size=3000)
    x = np.round(rng.normal(size=(3000, 37)) * 4) / 4  # ties
    for a, b in zip(
        K.crps_ensemble_pair(y, x, use_numba=False), K.crps_ensemble_pair(y, x, use_numba=True)
    ):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-13)
    levels = np.array([0.025, 0.1, 0.25, 0.5, 0.75, 0.9, 0.975])
    q = np.sort(rng.normal(size=(3000, 7)), axis=1)
    np.testing.assert_allclose(
        K.weighted_interval_score(y, q, levels, use_numba=False),
        K.weighted_interval_score(y, q, levels, use_numba=True),
        rtol=1e-12,
        atol=1e-13,
    )
    np.testing.assert_allclose(
        K.crps_quantiles(y, q, levels, use_numba=False),
        K.crps_quantiles(y, q, levels, use_numba=True),
        rtol=1e-12,
        atol=1e-13,
    )


@pytest.mark.skipif(not USE_NUMBA, reason="numba not installed")
def test_threaded_blocks_of_large_ensembles_give_the_numbers_of_one_block():
    rng = np.random.default_rng(12)
    n, m = 20_000, 64
    assert n * m >= K.THREADED_ABOVE
    y = rng.normal(size=n)
    x = np.round(rng.normal(size=(n, m)) * 8) / 8
    for a, b in zip(
        K.crps_ensemble_pair(y, x, use_numba=True), K.crps_ensemble_pair(y, x, use_numba=False)
    ):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-13)
    x[[5, 15_000, 19_999], [0, 63, 7]] = [np.nan, np.inf, -np.inf]
    with pytest.raises(ValueError, match=r"3 point\(s\) with a non-finite"):
        K.crps_ensemble_pair(y, x, use_numba=True)


# ------------------------------------------------------------------------------------
# predictive_scores
# ------------------------------------------------------------------------------------


def test_samples_form_estimates_are_the_means_of_the_peer_scores():
    ds = _ensemble_dataset("medium", "m100")
    res = uqviz.predictive_scores(ds, n_boot=200, rng=3)
    assert res["score"].values.tolist() == ["crps", "crps_fair"]
    assert str(res["forecast"].values) == "samples"
    want = [
        _out("crps", "medium", "m100/properscoring").mean(),
        _out("crps", "medium", "m100/sr_fair").mean(),
    ]
    np.testing.assert_allclose(res["estimate"].values, want, **TOL)
    assert np.all(res["ci_lower"] < res["estimate"]) and np.all(res["estimate"] < res["ci_upper"])
    assert int(res["n_points"]) == 200


def test_quantile_form_scores_equal_scoringrules():
    y, q, levels, lo, hi, alpha, _, _ = _interval_case("large")
    ds = _dataset(y, "quantiles", quantiles=q, levels=levels)
    res = uqviz.predictive_scores(ds, n_boot=100, rng=0, method="percentile")
    assert res["score"].values.tolist() == ["crps", "check", "interval", "wis"]
    qs = _out("intervals", "large", "quantile_score")  # in the fixture's order of levels
    order = np.argsort(np.asarray(SET["quantile_levels"]))
    np.testing.assert_allclose(res["check"].values, qs[:, order].mean(axis=0), **TOL)
    est = res["estimate"].to_series()
    assert est["check"] == pytest.approx(qs.mean(), abs=1e-9)
    assert est["interval"] == pytest.approx(
        _out("intervals", "large", "interval_score").mean(), abs=1e-9
    )
    assert est["wis"] == pytest.approx(_out("intervals", "large", "wis").mean(), abs=1e-9)
    assert est["crps"] == pytest.approx(est["wis"], abs=1e-12)
    assert np.all(res["check_lower"] <= res["check"]) and np.all(res["check"] <= res["check_upper"])
    # a subset of the given levels
    sub = uqviz.predictive_scores(ds, scores=("check",), levels=(0.1, 0.9), n_boot=0)
    assert sub["check"].values.tolist() == pytest.approx(
        qs[:, [1, 7]].mean(axis=0).tolist(), abs=1e-12
    )


def test_interval_form_equals_scoringrules():
    y, _, _, lo, hi, alpha, _, _ = _interval_case("small")
    ds = _dataset(y, "interval", lower=lo[:, 1], upper=hi[:, 1], level=1.0 - alpha[1])
    res = uqviz.predictive_scores(ds, n_boot=0)
    assert res["score"].values.tolist() == ["interval"]
    assert float(res["estimate"][0]) == pytest.approx(
        _out("intervals", "small", "interval_score")[:, 1].mean(), abs=1e-9
    )


def test_std_form_defers_to_proper_scores():
    ds = uqviz.synthetic.default_example()
    res = uqviz.predictive_scores(ds, n_boot=0)
    ref = uqviz.proper_scores(ds, n_boot=0)
    assert res["score"].values.tolist() == ["nll", "crps", "check", "interval"]
    np.testing.assert_array_equal(res["estimate"].values, ref["estimate"].values)
    assert str(res["forecast"].values) == "std"


def test_same_rng_same_numbers_and_engines_agree_on_estimates():
    ds = _ensemble_dataset("small", "m10")
    a = uqviz.predictive_scores(ds, n_boot=300, rng=7)
    b = uqviz.predictive_scores(ds, n_boot=300, rng=7)
    xr.testing.assert_identical(a, b)
    c = uqviz.predictive_scores(ds, n_boot=300, rng=8)
    assert not np.array_equal(a["ci_lower"].values, c["ci_lower"].values)
    d = uqviz.predictive_scores(ds, n_boot=300, rng=7, engine="numpy")
    np.testing.assert_array_equal(a["estimate"].values, d["estimate"].values)
    tree = uqviz.predictive_scores(xr.DataTree.from_dict({"only": ds}), n_boot=300, rng=7)
    np.testing.assert_array_equal(tree["ci_lower"].isel(dataset=0).values, a["ci_lower"].values)


def test_interval_is_that_of_the_mean_of_the_per_point_scores():
    """percentile interval = quantiles of the resampled means of the per-point scores."""
    ds = _ensemble_dataset("small", "m10")
    res = uqviz.predictive_scores(ds, scores=("crps",), n_boot=2000, rng=1, method="percentile")
    crps = _out("crps", "small", "m10/properscoring")
    se = crps.std(ddof=1) / np.sqrt(crps.size)
    assert float(res["se"][0]) == pytest.approx(se * np.sqrt((crps.size - 1) / crps.size), rel=0.1)
    half = float(res["ci_upper"][0] - res["ci_lower"][0]) / 2
    assert half == pytest.approx(1.96 * se, rel=0.15)


def test_a_datatree_of_forms():
    y, q, levels, *_ = _interval_case("small")
    tree = xr.DataTree.from_dict(
        {
            "q": _dataset(y, "quantiles", quantiles=q, levels=levels),
            "s": _ensemble_dataset("small", "m10"),
        }
    )
    res = uqviz.predictive_scores(tree, n_boot=0)
    assert res["forecast"].values.tolist() == ["quantiles", "samples"]
    assert np.isnan(float(res["estimate"].sel(dataset="s", score="wis")))
    assert float(res["estimate"].sel(dataset="s", score="crps_fair")) == pytest.approx(
        _out("crps", "small", "m10/sr_fair").mean(), abs=1e-9
    )


# ------------------------------------------------------------------------------------
# bad input
# ------------------------------------------------------------------------------------


def test_an_ensemble_of_one_member_is_refused():
    ds = _dataset(np.zeros(5), "samples", samples=np.ones((5, 1)))
    with pytest.raises(ValueError, match="ensemble of one member.*got 1"):
        uqviz.predictive_scores(ds, n_boot=0)


def test_nan_members_are_counted():
    x = _in("crps", "small")["ens_m10"].copy()
    x[3, 2] = np.nan
    x[7, [0, 5]] = np.nan
    ds = _dataset(_in("crps", "small")["y"], "samples", samples=x)
    # the dataset's one forecast check (uqviz.data.model.forecast_problems) counts the rows
    with pytest.raises(ValueError, match=r"samples: 2 rows with a NaN member \(rows 3, 7\)"):
        uqviz.predictive_scores(ds, n_boot=0)
    x[[0, 1, 2], [0, 4, 9]] = [-np.inf, np.inf, np.nan]
    y = _in("crps", "small")["y"].copy()
    y[10] = np.nan
    with pytest.raises(
        ValueError,
        match=r"5 point\(s\) with a non-finite \(NaN or inf\) "
        r"member, 1 with a non-finite y",
    ):
        K.crps_ensemble_pair(y, x)


def test_wis_needs_symmetric_levels_with_the_median():
    y = np.zeros(4)
    levels = np.array([0.1, 0.5, 0.8])
    ds = _dataset(y, "quantiles", quantiles=np.tile([-1.0, 0.0, 1.0], (4, 1)), levels=levels)
    with pytest.raises(
        ValueError,
        match=r"symmetric about 0.5.*2 level\(s\) without their "
        r"mirror \[0.1, 0.8\]",
    ):
        uqviz.predictive_scores(ds, scores=("wis",), n_boot=0)
    # the default leaves out what does not apply
    assert uqviz.predictive_scores(ds, n_boot=0)["score"].values.tolist() == ["crps", "check"]
    no_median = _dataset(
        y, "quantiles", quantiles=np.tile([-1.0, 1.0], (4, 1)), levels=np.array([0.1, 0.9])
    )
    with pytest.raises(ValueError, match="no level 0.5"):
        uqviz.predictive_scores(no_median, scores=("wis",), n_boot=0)


def test_crossing_quantiles_and_lower_above_upper_are_counted():
    q = np.tile([-1.0, 0.0, 1.0], (6, 1))
    q[[1, 4]] = [0.5, 0.0, 1.0]
    ds = _dataset(np.zeros(6), "quantiles", quantiles=q, levels=np.array([0.25, 0.5, 0.75]))
    with pytest.raises(ValueError, match=r"quantiles: 2 rows with crossing quantiles"):
        uqviz.predictive_scores(ds, n_boot=0)
    lo, hi = np.full(6, -1.0), np.full(6, 1.0)
    lo[[0, 2, 5]] = 2.0
    ds = _dataset(np.zeros(6), "interval", lower=lo, upper=hi, level=0.9)
    with pytest.raises(ValueError, match=r"lower: 3 rows with lower > upper \(rows 0, 2, 5\)"):
        uqviz.predictive_scores(ds, n_boot=0)


def test_scores_that_do_not_apply_to_the_form():
    ds = _ensemble_dataset("small", "m10")
    with pytest.raises(
        ValueError,
        match=r"\['wis'\] do not apply to a forecast given as "
        r"'samples', which takes \['crps', 'crps_fair'\]",
    ):
        uqviz.predictive_scores(ds, scores=("crps", "wis"), n_boot=0)
    with pytest.raises(ValueError, match="levels apply to forecasts given as"):
        uqviz.predictive_scores(ds, levels=(0.5,), n_boot=0)
    with pytest.raises(ValueError, match="not allowed here"):
        uqviz.predictive_scores(ds, scores=("pinball",), n_boot=0)
    y, q, levels, *_ = _interval_case("small")
    dq = _dataset(y, "quantiles", quantiles=q, levels=levels)
    with pytest.raises(ValueError, match=r"1 level\(s\) not among the given quantile levels"):
        uqviz.predictive_scores(dq, levels=(0.5, 0.3), n_boot=0)
    with pytest.raises(ValueError, match="does not apply|do not apply"):
        uqviz.predictive_scores(uqviz.synthetic.default_example(), scores=("crps_fair",), n_boot=0)


# ------------------------------------------------------------------------------------
# compare_forecasts
# ------------------------------------------------------------------------------------


def _normal_ensemble(y, scale, m, rng):
    return _dataset(y, "samples", samples=scale * rng.standard_normal((y.size, m)))


def _expected_crps(scale):
    """E[CRPS(N(0, s^2), Y)], Y ~ N(0, 1): E|X - Y| - E|X - X'|/2."""
    return np.sqrt(2.0 * (1.0 + scale**2) / np.pi) - scale / np.sqrt(np.pi)


def test_paired_difference_interval_covers_the_true_difference():
    """The fair CRPS is unbiased for the CRPS of the members' distribution (Ferro 2014): the
    interval of a - b covers E[CRPS(N(0, 1))] - E[CRPS(N(0, 1.5^2))] at about its level."""
    rng = np.random.default_rng(2023)
    true = _expected_crps(1.0) - _expected_crps(1.5)
    inside, words = 0, []
    n_rep = 40
    for _ in range(n_rep):
        y = rng.standard_normal(500)
        a, b = _normal_ensemble(y, 1.0, 10, rng), _normal_ensemble(y, 1.5, 10, rng)
        res = uqviz.compare_forecasts(
            a,
            b,
            scores=("crps_fair",),
            n_boot=400,
            rng=int(rng.integers(2**31)),
            method="percentile",
            ci=0.9,
        )
        inside += bool(res["ci_lower"][0] <= true <= res["ci_upper"][0])
        words.append(str(res["comparison"].values[0]))
    assert 0.75 <= inside / n_rep <= 1.0
    assert "b better" not in words and "a better" in words


def test_compare_estimates_are_differences_of_the_means_and_seeded():
    rng = np.random.default_rng(5)
    y = rng.standard_normal(300)
    a, b = _normal_ensemble(y, 1.0, 20, rng), _normal_ensemble(y, 4.0, 20, rng)
    res = uqviz.compare_forecasts(a, b, n_boot=300, rng=9)
    pa = K.crps_ensemble_pair(y, a["samples"].values)
    pb = K.crps_ensemble_pair(y, b["samples"].values)
    np.testing.assert_allclose(res["score_a"].values, [p.mean() for p in pa], rtol=1e-14)
    np.testing.assert_allclose(res["score_b"].values, [p.mean() for p in pb], rtol=1e-14)
    np.testing.assert_allclose(
        res["estimate"].values, [(pa[i] - pb[i]).mean() for i in range(2)], rtol=1e-12
    )
    assert res["comparison"].values.tolist() == ["a better", "a better"]
    xr.testing.assert_identical(res, uqviz.compare_forecasts(a, b, n_boot=300, rng=9))
    flipped = uqviz.compare_forecasts(b, a, n_boot=300, rng=9)
    assert flipped["comparison"].values.tolist() == ["b better", "b better"]
    with pytest.warns(uqviz.UnreliableWarning, match="2 of 6 intervals"):  # d = 0: degenerate
        same = uqviz.compare_forecasts(a, a, n_boot=300, rng=9)
    assert same["comparison"].values.tolist() == ["no difference", "no difference"]
    assert [str(res["forecast_a"].values), str(res["forecast_b"].values)] == ["samples"] * 2


def test_compare_a_quantile_forecast_with_an_ensemble_and_trees():
    y, q, levels, *_ = _interval_case("small")
    dq = _dataset(y, "quantiles", quantiles=q, levels=levels)
    de = _dataset(y, "samples", samples=_in("crps", "small")["ens_m10"][:, :10])
    res = uqviz.compare_forecasts(dq, de, n_boot=200, rng=0)
    assert res["score"].values.tolist() == ["crps"]
    tree = uqviz.compare_forecasts(
        xr.DataTree.from_dict({"x": dq}), xr.DataTree.from_dict({"x": de}), n_boot=200, rng=0
    )
    assert tree["dataset"].values.tolist() == ["x"]
    with pytest.raises(ValueError, match="same datasets"):
        uqviz.compare_forecasts(
            xr.DataTree.from_dict({"x": dq}), xr.DataTree.from_dict({"z": de}), n_boot=200
        )


def test_compare_refuses_different_observations_and_scores_not_shared():
    rng = np.random.default_rng(1)
    y = rng.standard_normal(50)
    a = _normal_ensemble(y, 1.0, 5, rng)
    y2 = y.copy()
    y2[[3, 9, 20]] += 1.0
    b = _normal_ensemble(y2, 1.0, 5, rng)
    with pytest.raises(ValueError, match="y differs at 3 of 50 points"):
        uqviz.compare_forecasts(a, b, n_boot=50)
    with pytest.raises(ValueError, match="a has 50, b has 40"):
        uqviz.compare_forecasts(a, a.isel(point=slice(0, 40)), n_boot=50)
    iv = _dataset(y, "interval", lower=y - 1.0, upper=y + 1.0, level=0.9)
    with pytest.raises(ValueError, match="no score applies to both forecasts"):
        uqviz.compare_forecasts(a, iv, n_boot=50)
    with pytest.raises(ValueError, match=r"\['crps_fair'\] do not apply to forecast b"):
        uqviz.compare_forecasts(a, iv, scores=("crps_fair",), n_boot=50)
    with pytest.raises(ValueError, match="n_boot"):
        uqviz.compare_forecasts(a, a, n_boot=0)
