"""Interval coverage, calibration curves, proper scores (issue 13, items 1-3 and 6).

References: uncertainty-toolbox 0.1.1 and scoringrules 0.10.0 outputs written by
tests/fixtures/make_uct_fixtures.py (run in a side environment), compared to 1e-9;
hand computations; coverage of calibrated synthetic normal and Student-t data.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest
import xarray as xr
from scipy import special, stats

import uqviz
from uqviz._array import scores as ksc
from uqviz._array.binomial import wilson_interval

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
META = json.loads((FIXTURES / "uct_scores.json").read_text())
ARRAYS = np.load(FIXTURES / "uct_scores.npz")
CASES = sorted(META["cases"])
TOL = dict(rtol=1e-9, atol=1e-12)


def _case(name):
    y_pred, y_std, y_true = (ARRAYS[f"in/{name}/{k}"] for k in ("y_pred", "y_std", "y_true"))
    return y_pred, y_std, y_true


def _data(name, *, negate=False):
    y_pred, y_std, y_true = _case(name)
    e = (y_pred - y_true) if negate else (y_true - y_pred)  # uqviz: E = reference - prediction
    return uqviz.from_arrays(e, y_std, name=name)


def _normal_data(m, *, seed=0, nu=None, factor=1.0):
    rng = np.random.default_rng(seed)
    u = np.exp(rng.normal(0.0, 0.5, m))
    d = rng.standard_normal(m) if nu is None else rng.standard_t(nu, m) * np.sqrt((nu - 2.0) / nu)
    return uqviz.from_arrays(factor * u * d, u, features={"x": rng.uniform(0, 1, m)})


# ------------------------------------------------------------------------------------
# uncertainty-toolbox 0.1.1 and scoringrules fixtures
# ------------------------------------------------------------------------------------


def test_fixture_versions():
    assert META["versions"]["uncertainty-toolbox"] == "0.1.1"
    assert META["settings"]["num_bins"] == 100


@pytest.mark.parametrize("case", CASES)
def test_calibration_curve_equals_uncertainty_toolbox(case):
    ref = META["cases"][case]
    curve = uqviz.calibration_curve(_data(case))
    np.testing.assert_allclose(
        float(curve["miscalibration_area"]), ref["miscalibration_area_interval"], **TOL
    )
    np.testing.assert_allclose(float(curve["mace"]), ref["mace_interval"], **TOL)
    np.testing.assert_allclose(float(curve["rmsce"]), ref["rmsce_interval"], **TOL)
    np.testing.assert_allclose(
        curve["level"].values, ARRAYS[f"out/{case}/expected_interval"], **TOL
    )
    np.testing.assert_allclose(
        curve["observed"].values, ARRAYS[f"out/{case}/observed_interval"], **TOL
    )


@pytest.mark.parametrize("case", CASES)
def test_quantile_curve_equals_uncertainty_toolbox_on_negated_errors(case):
    """uncertainty-toolbox's prop_type="quantile" counts -Z below the quantile."""
    ref = META["cases"][case]
    curve = uqviz.calibration_curve(_data(case, negate=True), kind="quantile")
    for name in ("miscalibration_area", "mace", "rmsce"):
        np.testing.assert_allclose(float(curve[name]), ref[f"{name}_quantile"], **TOL)
    np.testing.assert_allclose(
        curve["observed"].values, ARRAYS[f"out/{case}/observed_quantile"], **TOL
    )


@pytest.mark.parametrize("case", CASES)
def test_proper_scores_equal_uncertainty_toolbox(case):
    ref = META["cases"][case]
    res = uqviz.proper_scores(_data(case), n_boot=0)
    for name in ("nll", "crps", "check", "interval"):
        np.testing.assert_allclose(
            float(res["estimate"].sel(score=name)), ref[name], **TOL, err_msg=name
        )
    np.testing.assert_allclose(float(res["sharpness"]), ref["sharpness"], **TOL)


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize(
    "generative,key", [("normal", "normal"), ("t6", "t"), ("laplace", "laplace")]
)
def test_nll_crps_equal_scoringrules(case, generative, key):
    ref = META["cases"][case]
    assert META["settings"]["student_t_nu"] == 6.0
    res = uqviz.proper_scores(_data(case), scores=("nll", "crps"), generative=generative, n_boot=0)
    np.testing.assert_allclose(float(res["estimate"].sel(score="nll")), ref[f"sr_nll_{key}"], **TOL)
    np.testing.assert_allclose(
        float(res["estimate"].sel(score="crps")), ref[f"sr_crps_{key}"], **TOL
    )


@pytest.mark.parametrize("case", CASES)
def test_check_and_interval_scores_equal_scoringrules(case):
    ref = META["cases"][case]
    res = uqviz.proper_scores(
        _data(case),
        scores=("check", "interval"),
        n_boot=0,
        levels=META["settings"]["scoringrules_levels"],
    )
    np.testing.assert_allclose(
        float(res["estimate"].sel(score="check")), ref["sr_check_normal"], **TOL
    )
    np.testing.assert_allclose(
        float(res["estimate"].sel(score="interval")), ref["sr_interval_normal"], **TOL
    )


# ------------------------------------------------------------------------------------
# hand computations
# ------------------------------------------------------------------------------------

E4 = np.array([0.5, -1.5, 2.5, 0.1])
U4 = np.array([1.0, 1.0, 2.0, 0.5])  # Z = 0.5, -1.5, 1.25, 0.2


def test_interval_coverage_by_hand():
    ds = uqviz.from_arrays(E4, U4)
    res = uqviz.interval_coverage(ds, levels=(0.5, 0.9), ci=0.9)
    q = special.ndtri([0.75, 0.95])
    k = np.array([2, 4])  # |Z| <= 0.674: 0.5, 0.2; |Z| <= 1.645: all
    assert res["n_inside"].values.tolist() == k.tolist()
    np.testing.assert_allclose(res["picp"].values, k / 4)
    lo, hi = wilson_interval(k, 4, ci=0.9, continuity=True)
    np.testing.assert_allclose(res["picp_lower"].values, lo)
    np.testing.assert_allclose(res["picp_upper"].values, hi)
    np.testing.assert_allclose(res["mpiw"].values, 2 * q * U4.mean())
    np.testing.assert_allclose(res["multiplier"].values, q)
    assert res["valid"].values.tolist() == ((lo <= [0.5, 0.9]) & ([0.5, 0.9] <= hi)).tolist()
    assert res.attrs["generative"] == "normal" and res.attrs["method"] == "wilson"


def test_student_t_multipliers():
    """Unit-variance t4: narrower than the normal at 50 %, wider at 99 %."""
    ds = uqviz.from_arrays(E4, U4)
    res = uqviz.interval_coverage(ds, levels=(0.5, 0.99), generative="t4")
    q = stats.t.ppf([0.75, 0.995], 4) * np.sqrt(2.0 / 4.0)
    np.testing.assert_allclose(res["multiplier"].values, q)
    normal = special.ndtri([0.75, 0.995])
    assert q[0] < normal[0] and q[1] > normal[1]


def test_calibration_curve_by_hand():
    ds = uqviz.from_arrays(E4, U4)
    curve = uqviz.calibration_curve(ds, n_levels=3)
    p = np.array([0.0, 0.5, 1.0])
    obs = np.array([0.0, 0.5, 1.0])  # |Z| <= 0; |Z| <= 0.674: 2 of 4; all
    np.testing.assert_allclose(curve["observed"].values, obs)
    np.testing.assert_allclose(float(curve["mace"]), 0.0)
    quant = uqviz.calibration_curve(ds, n_levels=3, kind="quantile")
    np.testing.assert_allclose(quant["observed"].values, [0.0, 0.25, 1.0])  # Z <= 0: -1.5
    np.testing.assert_allclose(float(quant["mace"]), np.mean(np.abs([0.0, 0.25, 1.0] - p)))
    np.testing.assert_allclose(float(quant["rmsce"]), np.sqrt(np.mean(([0.0, 0.25, 1.0] - p) ** 2)))
    np.testing.assert_allclose(float(quant["miscalibration_area"]), 0.5 * 0.5 * 0.25 * 2)


def test_miscalibration_area_splits_crossings():
    x = np.array([0.0, 1.0])
    assert ksc.miscalibration_area(x, np.array([1.0, 0.0])) == pytest.approx(0.5)
    assert ksc.miscalibration_area(x, np.array([0.5, 0.5])) == pytest.approx(0.25)


def test_scores_by_hand():
    ds = uqviz.from_arrays(E4, U4)
    tau = np.array([0.25, 0.5])
    res = uqviz.proper_scores(ds, levels=tau, n_boot=0)
    z = E4 / U4
    nll = np.mean(0.5 * np.log(2 * np.pi) + np.log(U4) + 0.5 * z**2)
    crps = np.mean(
        U4 * (z * (2 * stats.norm.cdf(z) - 1) + 2 * stats.norm.pdf(z) - 1 / np.sqrt(np.pi))
    )
    check = 0.0
    for t in tau:
        q = U4 * stats.norm.ppf(t)
        check += np.mean(np.where(E4 <= q, (1 - t) * (q - E4), t * (E4 - q))) / tau.size
    inter = 0.0
    for p in tau:
        lo, hi = U4 * stats.norm.ppf(0.5 - p / 2), U4 * stats.norm.ppf(0.5 + p / 2)
        inter += (
            np.mean(
                (hi - lo)
                + 2 / (1 - p) * np.maximum(lo - E4, 0)
                + 2 / (1 - p) * np.maximum(E4 - hi, 0)
            )
            / tau.size
        )
    np.testing.assert_allclose(res["estimate"].values, [nll, crps, check, inter], rtol=1e-12)
    np.testing.assert_allclose(float(res["sharpness"]), np.sqrt(np.mean(U4**2)))
    np.testing.assert_allclose(float(res["dispersion"]), np.std(U4, ddof=1) / np.mean(U4))


def test_nll_is_the_nll_statistic_and_sharpness_is_rmv():
    ds = _normal_data(3000, seed=4)
    res = uqviz.proper_scores(ds, scores=("nll",), n_boot=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the tailedness screen of E^2 (uE log-normal)
        av = uqviz.validate_average(ds, statistics=("NLL",), n_boot=50, rng=0)
    np.testing.assert_allclose(
        float(res["estimate"][0]), float(av["estimate"].sel(statistic="NLL")), rtol=1e-12
    )
    np.testing.assert_allclose(
        float(res["sharpness"]), np.sqrt(np.mean(ds["uE"].values ** 2)), rtol=1e-12
    )


@pytest.mark.parametrize("levels", [np.linspace(0.01, 0.99, 99), np.array([0.9, 0.2, 0.5])])
def test_check_interval_cumulative_sums_equal_the_definitions(levels):
    rng = np.random.default_rng(2)
    z = np.concatenate([rng.standard_t(2.5, 500) * 3, [0.0, 1e3, -1e3]])
    u = rng.uniform(0.1, 3, z.size)
    z[:5] = special.ndtri(levels[0])  # ties with a quantile
    kw = dict(
        q_check=special.ndtri(levels),
        tau=levels,
        q_lower=special.ndtri(0.5 - levels / 2),
        q_upper=special.ndtri(0.5 + levels / 2),
        p=levels,
    )
    c1, i1 = ksc.check_interval_points(z, u, **kw)
    c2, i2 = ksc._check_interval_direct(z, u, *kw.values(), True, True)
    np.testing.assert_allclose(c1, c2, rtol=1e-11, atol=1e-12)
    np.testing.assert_allclose(i1, i2, rtol=1e-11, atol=1e-12)


def test_generative_ppf():
    from uqviz.generative import get_generative

    p = np.array([0.1, 0.5, 0.975])
    np.testing.assert_allclose(get_generative("t5").ppf(p), stats.t.ppf(p, 5) * np.sqrt(3 / 5))
    np.testing.assert_allclose(
        get_generative("uniform").ppf(p), stats.uniform.ppf(p, -np.sqrt(3), 2 * np.sqrt(3))
    )
    np.testing.assert_allclose(
        get_generative("laplace").ppf(p), stats.laplace.ppf(p, scale=1 / np.sqrt(2))
    )
    with pytest.raises(ValueError, match="ppf"):
        get_generative("normal").ppf(1.5)


# ------------------------------------------------------------------------------------
# calibrated synthetic data
# ------------------------------------------------------------------------------------

LEVELS = (0.5, 0.68, 0.9, 0.95, 0.99)


@pytest.mark.parametrize("nu,generative", [(None, "normal"), (4.0, "t4"), (6.0, "t6")])
def test_coverage_of_calibrated_data(nu, generative):
    ds = _normal_data(20_000, seed=11, nu=nu)
    res = uqviz.interval_coverage(ds, levels=LEVELS, generative=generative)
    assert res["valid"].values.all(), res["picp"].values
    np.testing.assert_allclose(res["picp"].values, LEVELS, atol=0.012)
    curve = uqviz.calibration_curve(ds, generative=generative)
    assert float(curve["mace"]) < 0.01 and float(curve["miscalibration_area"]) < 0.01


def test_normal_intervals_misjudge_student_t_errors():
    """Unit-variance t3 errors: the normal 99 % interval misses too many points, the
    50 % one too few, the t3 intervals are right (heavy tails show in coverage)."""
    ds = _normal_data(20_000, seed=5, nu=3.0)
    normal = uqviz.interval_coverage(ds, levels=(0.5, 0.99))
    assert not normal["valid"].values.any()
    assert float(normal["picp"][0]) > 0.5 and float(normal["picp"][1]) < 0.99
    assert uqviz.interval_coverage(ds, levels=(0.5, 0.99), generative="t3")["valid"].all()


def test_underestimated_uncertainties_fail_coverage():
    ds = _normal_data(5000, seed=3, factor=2.0)
    res = uqviz.interval_coverage(ds)
    assert not res["valid"].values.any()
    assert (res["picp"].values < np.array(LEVELS)).all()


def test_score_intervals_contain_the_expected_scores():
    """Calibrated normal data: E[CRPS | uE] = uE / sqrt(pi), E[NLL | uE] = ln(2 pi)/2 + ln uE
    + 1/2; the bootstrap intervals (BCa and percentile) contain their means over the points."""
    ds = _normal_data(4000, seed=21)
    u = ds["uE"].values
    expect = {
        "nll": np.mean(0.5 * np.log(2 * np.pi) + np.log(u) + 0.5),
        "crps": np.mean(u) / np.sqrt(np.pi),
    }
    for method in ("bca", "percentile"):
        res = uqviz.proper_scores(ds, scores=("nll", "crps"), n_boot=2000, method=method, rng=3)
        for name, value in expect.items():
            r = res.sel(score=name)
            assert float(r["ci_lower"]) <= value <= float(r["ci_upper"]), (method, name)
        assert (
            float(res["sharpness_lower"])
            <= float(res["sharpness"])
            <= float(res["sharpness_upper"])
        )
        assert (
            float(res["dispersion_lower"])
            <= float(res["dispersion"])
            <= float(res["dispersion_upper"])
        )
    assert (res["se"] > 0).all()


def test_student_t_scores_prefer_the_true_distribution():
    ds = _normal_data(20_000, seed=8, nu=4.0)
    normal = uqviz.proper_scores(ds, n_boot=0)
    t4 = uqviz.proper_scores(ds, generative="t4", n_boot=0)
    assert (
        t4["estimate"].sel(score=["nll", "crps"]) < normal["estimate"].sel(score=["nll", "crps"])
    ).all()
    # any D with a quantile function for check and interval scores
    uni = uqviz.proper_scores(ds, scores=("check", "interval"), generative="uniform", n_boot=0)
    assert np.isfinite(uni["estimate"]).all()


def test_proper_scores_seeded_tree_and_engines():
    ds = _normal_data(600, seed=1)
    a = uqviz.proper_scores(ds, n_boot=200, rng=5)
    b = uqviz.proper_scores(ds, n_boot=200, rng=5)
    xr.testing.assert_identical(a, b)
    tree = uqviz.proper_scores(xr.DataTree.from_dict({"only": ds}), n_boot=200, rng=5)
    np.testing.assert_array_equal(tree["ci_lower"].values[0], a["ci_lower"].values)
    c = uqviz.proper_scores(ds, n_boot=200, rng=5, engine="numpy")
    np.testing.assert_array_equal(c["estimate"].values, a["estimate"].values)
    assert np.isfinite(c["ci_lower"]).all()
    # the same rng on a dataset of the same size: the same resamples (paired comparisons)
    doubled = ds.assign(uE=2.0 * ds["uE"], E=2.0 * ds["E"])
    d = uqviz.proper_scores(doubled, n_boot=200, rng=5, method="percentile")
    p = uqviz.proper_scores(ds, n_boot=200, rng=5, method="percentile")
    np.testing.assert_array_equal(d["sharpness_lower"].values, 2 * p["sharpness_lower"].values)
    np.testing.assert_allclose(
        d["ci_upper"].sel(score="crps").values,
        2 * p["ci_upper"].sel(score="crps").values,
        rtol=1e-13,
    )
    none = uqviz.proper_scores(ds, n_boot=0)
    assert "ci_lower" not in none and "sharpness_lower" not in none


# ------------------------------------------------------------------------------------
# local coverage (PICP per bin): local_interval_coverage
# ------------------------------------------------------------------------------------


def test_local_picp_by_hand():
    e = np.array([0.1, 3.0, -0.2, 0.3, -2.5, 0.0])
    u = np.ones(6)
    ds = uqviz.from_arrays(e, u, features={"x": np.arange(6.0)})
    with pytest.warns(UserWarning, match="fewer than 100 points"):
        res = uqviz.local_interval_coverage(ds, conditioning="x", n_bins=2, ci=0.9)
    k = np.array([2, 2])  # bins {0, 1, 2}: 0.1, -0.2 inside; {3, 4, 5}: 0.3, 0.0
    np.testing.assert_allclose(res["estimate"].values, k / 3)
    lo, hi = wilson_interval(k, 3, ci=0.9, continuity=True)
    np.testing.assert_allclose(res["ci_lower"].values, lo)
    np.testing.assert_allclose(res["ci_upper"].values, hi)
    assert float(res["reference"]) == 0.95
    assert res.attrs["method"] == "wilson" and res.attrs["level"] == 0.95
    assert not res["heavy_tail"].any()


def test_local_picp_feeds_fraction_valid_plots_and_explorer():
    ds = _normal_data(8000, seed=2, nu=6.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = uqviz.local_interval_coverage(
            ds, level=0.9, generative="t6", conditioning="x", n_bins=20
        )
    fv = uqviz.fraction_valid(res)
    assert float(fv["estimate"]) >= 0.8
    ax = uqviz.plots.conditional.local(res, fv=fv)
    assert ax.get_ylabel() == "PICP per bin"
    from uqviz.widgets import ConditionalExplorer

    ex = ConditionalExplorer(ds, statistic="PICP", n_bins=10)
    assert ex.result.attrs["statistic"] == "PICP" and ex.fv is not None


def test_local_picp_and_picp_agree_on_one_bin():
    ds = _normal_data(3000, seed=9)
    loc = uqviz.local_interval_coverage(ds, level=0.9, n_bins=1)
    cov = uqviz.interval_coverage(ds, levels=(0.9,))
    np.testing.assert_allclose(loc["estimate"].values, cov["picp"].values)
    np.testing.assert_allclose(loc["ci_lower"].values, cov["picp_lower"].values)


# ------------------------------------------------------------------------------------
# plots
# ------------------------------------------------------------------------------------


def test_plots_take_results():
    import matplotlib.axes

    ds = _normal_data(2000, seed=6)
    tree = xr.DataTree.from_dict({"a": ds, "b": _normal_data(1500, seed=7, factor=1.5)})
    ax = uqviz.plots.scores.calibration_curve(uqviz.calibration_curve(ds))
    assert isinstance(ax, matplotlib.axes.Axes)
    assert any("miscalibration area" in t.get_text() for t in ax.get_legend().get_texts())
    ax = uqviz.plots.scores.calibration_curve(uqviz.calibration_curve(tree, kind="quantile"))
    assert ax.get_xlabel() == "Expected proportion below quantile"
    ax = uqviz.plots.scores.coverage(uqviz.interval_coverage(tree), dataset="b")
    assert ax.get_ylabel() == "PICP"
    with pytest.raises(TypeError, match="curve_result"):
        uqviz.plots.scores.calibration_curve(ds["E"])
    with pytest.raises(ValueError, match="unknown dataset"):
        uqviz.plots.scores.coverage(uqviz.interval_coverage(tree), dataset="c")


# ------------------------------------------------------------------------------------
# bad input
# ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call,match",
    [
        (lambda ds: uqviz.interval_coverage(ds, levels=(0.5, 1.0)), "levels must be in"),
        (lambda ds: uqviz.interval_coverage(ds, levels=(0.0,)), "levels must be in"),
        (lambda ds: uqviz.interval_coverage(ds, levels=()), "levels must be a non-empty"),
        (lambda ds: uqviz.interval_coverage(ds, levels=(0.9, 0.9)), "levels must be distinct"),
        (lambda ds: uqviz.interval_coverage(ds, levels="0.9"), "levels must be a sequence"),
        (lambda ds: uqviz.interval_coverage(ds, generative="t1"), "nu > 2"),
        (lambda ds: uqviz.interval_coverage(ds, ci=1.0), "ci must be in"),
        (lambda ds: uqviz.calibration_curve(ds, n_levels=1), "n_levels must be >= 2"),
        (lambda ds: uqviz.calibration_curve(ds, kind="cdf"), "kind must be one of"),
        (lambda ds: uqviz.proper_scores(ds, scores=("nll", "brier")), "scores"),
        (lambda ds: uqviz.proper_scores(ds, scores=()), "scores must name"),
        (lambda ds: uqviz.proper_scores(ds, n_boot=1), "n_boot must be 0"),
        (lambda ds: uqviz.proper_scores(ds, levels=(1.2,)), "levels must be in"),
        (lambda ds: uqviz.proper_scores(ds, generative="uniform", n_boot=0), "closed forms"),
        (lambda ds: uqviz.proper_scores(ds, method="wilson"), "method must be one of"),
        (lambda ds: uqviz.local_interval_coverage(ds, level=1.5), "level must be in"),
        (
            lambda ds: uqviz.local_calibration(ds, statistic="PICP", method="bca"),
            "method must be one of",
        ),
        (lambda ds: uqviz.local_calibration(ds, level=0.9), "statistic='PICP' only"),
        # for the other statistics, generative is the D of the calibrated null of f_v
        (lambda ds: uqviz.local_calibration(ds, generative="nope"), "generative"),
    ],
)
def test_bad_options(call, match):
    with pytest.raises((ValueError, TypeError), match=match):
        call(_normal_data(300, seed=0))


def test_bad_data():
    # uE <= 0 (interval_coverage) and one point with a bootstrap (proper_scores): the
    # contract sweep's folded cases (tests/contract/test_sweep.py, BAD_INPUT_CASES)
    one = uqviz.proper_scores(uqviz.from_arrays([0.1], [1.0]), n_boot=0)
    assert np.isfinite(one["estimate"]).all() and np.isnan(float(one["dispersion"]))
    with pytest.raises(ValueError, match="generative='empirical'"):
        uqviz.calibration_curve(uqviz.from_arrays([0.1, 0.1], [1.0, 1.0]), generative="empirical")


@pytest.mark.parametrize("form", ["samples", "quantiles", "interval"])
def test_proper_scores_refuses_a_forecast_given_as_more_than_uE(form):
    """Issue 38, item 4: an ensemble's CRPS is not that of a normal with its mean and sd
    (0.4761 against properscoring's 0.4827 on a test ensemble): proper_scores names
    predictive_scores instead of scoring a silent normal, and scores the summary uE only
    when D is given."""
    rng = np.random.default_rng(38)
    n = 300
    y = rng.standard_normal(n)
    members = rng.standard_normal((n, 15)) * 1.2
    mean = members.mean(axis=1)
    kw = {
        "samples": {"samples": members},
        "quantiles": {"quantiles": {0.16: mean - 1.2, 0.5: mean, 0.84: mean + 1.2}},
        "interval": {"lower": mean - 2.0, "upper": mean + 2.0, "level": 0.9},
    }[form]
    data = uqviz.from_predictions(y, mean, **kw)
    with pytest.raises(ValueError, match=f"given as {form}.*predictive_scores"):
        uqviz.proper_scores(data, scores=("crps",), n_boot=0)
    summary = uqviz.proper_scores(data, scores=("crps",), generative="normal", n_boot=0)
    z = (data["E"] / data["uE"]).values
    want = np.mean(
        data["uE"].values
        * (z * (2 * stats.norm.cdf(z) - 1) + 2 * stats.norm.pdf(z) - 1 / np.sqrt(np.pi))
    )
    assert float(summary["estimate"][0]) == pytest.approx(want, rel=1e-10)
