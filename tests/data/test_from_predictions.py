"""uqviz.from_predictions: each uncertainty form against a hand computation, and bad input."""

import re
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import uqviz

Z1 = stats.norm.ppf(0.95)  # 1.6449: half-width of a 90 % normal interval, in sd


@pytest.fixture
def toy():
    rng = np.random.default_rng(3)
    n = 50
    y = rng.normal(size=n)
    yp = y + rng.normal(0, 0.5, n)
    s = rng.uniform(0.2, 1.0, n)
    return y, yp, s


# ---------------------------------------------------------------------------------------
# std and variance
# ---------------------------------------------------------------------------------------
def test_std_gives_e_and_ue(toy):
    y, yp, s = toy
    ds = uqviz.from_predictions(y, yp, std=s, name="m")
    np.testing.assert_array_equal(ds["E"].values, y - yp)
    np.testing.assert_array_equal(ds["uE"].values, s)
    assert ds.attrs["uE_source"] == "std" and ds.attrs["name"] == "m"
    assert uqviz.check_dataset(ds) is ds


def test_variance_is_square_rooted(toy):
    y, yp, s = toy
    ds = uqviz.from_predictions(y, yp, variance=s**2)
    np.testing.assert_allclose(ds["uE"].values, s, rtol=1e-15)
    assert ds.attrs["uE_source"] == "variance"


def test_negative_variance_is_a_ue_error_with_the_count(toy):
    y, yp, s = toy
    v = s**2
    v[[3, 7]] = -1.0
    with pytest.raises(
        ValueError, match=r"uE: 2 rows with uE <= 0 \(rows 3, 7\) \[sqrt of variance\]"
    ):
        uqviz.from_predictions(y, yp, variance=v)


# ---------------------------------------------------------------------------------------
# central intervals
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "generative, q",
    [
        ("normal", stats.norm.ppf(0.95)),
        ("t6", stats.t.ppf(0.95, 6) * np.sqrt(4 / 6)),
        ("uniform", np.sqrt(3.0) * 0.9),
        ("laplace", -np.log(1 - 0.9) / np.sqrt(2.0)),
    ],
)
def test_interval_half_width_over_the_quantile_of_d(toy, generative, q):
    y, yp, s = toy
    ds = uqviz.from_predictions(
        y, yp, lower=yp - 2 * s, upper=yp + 2 * s, level=0.9, generative=generative
    )
    np.testing.assert_allclose(ds["uE"].values, 2 * s / q, rtol=1e-12)
    assert ds.attrs["level"] == 0.9 and ds.attrs["generative"] == generative
    assert ds.attrs["n_asymmetric"] == 0


def test_interval_of_a_calibrated_normal_model_gives_its_sd(toy):
    y, yp, s = toy
    ds = uqviz.from_predictions(y, yp, lower=yp - Z1 * s, upper=yp + Z1 * s, level=0.9)
    np.testing.assert_allclose(ds["uE"].values, s, rtol=1e-12)


def test_asymmetric_intervals_are_counted_in_a_warning_and_attrs(toy):
    y, yp, s = toy
    lo, hi = yp - s, yp + s
    hi[[1, 4, 9]] += s[[1, 4, 9]]  # centre moved by half a half-width
    with pytest.warns(UserWarning, match=r"3 rows of 50 with an asymmetric interval.*rows 1, 4, 9"):
        ds = uqviz.from_predictions(y, yp, lower=lo, upper=hi, level=0.5)
    assert ds.attrs["n_asymmetric"] == 3
    np.testing.assert_allclose(ds["uE"].values, (hi - lo) / 2 / stats.norm.ppf(0.75))


def test_rounding_is_not_asymmetry(toy):
    y, yp, s = toy
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ds = uqviz.from_predictions(
            y, yp, lower=np.round(yp - s, 6), upper=np.round(yp + s, 6), level=0.68
        )
    assert ds.attrs["n_asymmetric"] == 0


def test_prediction_outside_its_interval_or_inverted_interval_is_an_error(toy):
    y, yp, s = toy
    lo, hi = yp - s, yp + s
    lo2 = lo.copy()
    lo2[[2, 5]] = yp[[2, 5]] + 0.1
    with pytest.raises(
        ValueError,
        match=r"y_pred: 2 rows with y_pred outside \[lower, upper\] "
        r"\(rows 2, 5\)",
    ):
        uqviz.from_predictions(y, yp, lower=lo2, upper=hi, level=0.9)
    with pytest.raises(ValueError, match=r"lower: 1 row with lower > upper \(row 0\)"):
        uqviz.from_predictions(y, yp, lower=np.r_[hi[0] + 1, lo[1:]], upper=hi, level=0.9)


def test_zero_width_interval_is_a_ue_error(toy):
    y, yp, s = toy
    with pytest.raises(
        ValueError,
        match=r"uE: 50 rows with uE <= 0 \(.*\) "
        r"\[half-width of the 0.9 interval / 1.645\]",
    ):
        uqviz.from_predictions(y, yp, lower=yp, upper=yp, level=0.9)


@pytest.mark.parametrize(
    "kwargs, words",
    [
        (dict(lower=0.0, upper=1.0), "needs lower=, upper= and level=; missing level"),
        (dict(lower=0.0, level=0.9), "missing upper"),
        (dict(std=1.0, level=0.9), "level: the coverage of an interval"),
        (dict(std=1.0, generative="t6"), "generative: used only by lower=/upper= and quantiles="),
        (dict(std=1.0, quantile_rule="fit"), "quantile_rule: used only with quantiles="),
        (dict(lower=0.0, upper=1.0, level=1.5), "level must be in (0, 1)"),
        (dict(lower=0.0, upper=1.0, level=0.9, generative="empirical"), "no quantile function"),
        (dict(std=1.0, quantile_rule="median"), "quantile_rule must be one of"),
        ({}, "give exactly one uncertainty form"),
        (dict(std=1.0, variance=1.0), "got std=, variance="),
    ],
)
def test_option_errors_name_the_option(kwargs, words):
    y = np.zeros(4)
    kw = {
        k: (np.full(4, v) if k in ("std", "variance", "lower", "upper") else v)
        for k, v in kwargs.items()
    }
    with pytest.raises(ValueError, match=re.escape(words)):
        uqviz.from_predictions(y, y + 0.5, **kw)


# ---------------------------------------------------------------------------------------
# quantiles
# ---------------------------------------------------------------------------------------
def _quantiles(yp, s, levels, dist=stats.norm):
    return {p: yp + s * dist.ppf(p) for p in levels}


def test_quantiles_nearest_one_sd_recover_a_normal_sd(toy):
    y, yp, s = toy
    q = _quantiles(yp, s, [0.05, 0.16, 0.5, 0.84, 0.95])
    q[0.16] = q[0.16] - 0.01  # the rule uses 0.16 and 0.84 only: change one of them
    ds = uqviz.from_predictions(y, yp, quantiles=q)
    expect = (q[0.84] - q[0.16]) / (stats.norm.ppf(0.84) - stats.norm.ppf(0.16))
    np.testing.assert_allclose(ds["uE"].values, expect, rtol=1e-12)
    assert ds.attrs["quantile_levels_used"] == [0.16, 0.84]
    assert ds.attrs["quantile_levels"] == [0.05, 0.16, 0.5, 0.84, 0.95]
    assert ds.attrs["quantile_rule"] == "nearest"


def test_quantiles_at_10_and_90_percent(toy):
    y, yp, s = toy
    q = {0.9: yp + 2 * s, 0.1: yp - 2 * s}  # unsorted keys
    ds = uqviz.from_predictions(y, yp, quantiles=q)
    np.testing.assert_allclose(ds["uE"].values, 4 * s / (2 * stats.norm.ppf(0.9)), rtol=1e-12)


def test_quantiles_as_a_dataframe_equal_the_mapping(toy):
    y, yp, s = toy
    q = _quantiles(yp, s, [0.1, 0.5, 0.9])
    a = uqviz.from_predictions(y, yp, quantiles=q)
    b = uqviz.from_predictions(y, yp, quantiles=pd.DataFrame(q))
    np.testing.assert_array_equal(a["uE"].values, b["uE"].values)


def test_quantiles_scaled_by_the_quantiles_of_d(toy):
    y, yp, s = toy
    t6 = stats.t(6, scale=np.sqrt(4 / 6))  # unit-variance t6
    q = _quantiles(yp, s, [0.025, 0.5, 0.975], dist=t6)
    ds = uqviz.from_predictions(y, yp, quantiles=q, generative="t6")
    np.testing.assert_allclose(ds["uE"].values, s, rtol=1e-10)


def test_quantile_fit_is_per_point_least_squares(toy):
    y, yp, s = toy
    levels = [0.05, 0.25, 0.5, 0.75, 0.95]
    rng = np.random.default_rng(0)
    q = {p: yp + s * stats.norm.ppf(p) + rng.normal(0, 0.01, yp.size) for p in levels}
    ds = uqviz.from_predictions(y, yp, quantiles=q, quantile_rule="fit")
    z = stats.norm.ppf(levels)
    slopes = [np.polyfit(z, [q[p][i] for p in levels], 1)[0] for i in range(yp.size)]
    np.testing.assert_allclose(ds["uE"].values, slopes, rtol=1e-10)
    assert ds.attrs["quantile_levels_used"] == levels


def test_crossing_quantiles_are_counted(toy):
    y, yp, s = toy
    q = _quantiles(yp, s, [0.1, 0.5, 0.9])
    q[0.5] = q[0.5].copy()
    q[0.5][[0, 3]] = q[0.9][[0, 3]] + 1.0
    with pytest.warns(UserWarning, match=r"2 rows of 50 with crossing quantiles.*rows 0, 3"):
        ds = uqviz.from_predictions(y, yp, quantiles=q)
    assert ds.attrs["n_crossing"] == 2


@pytest.mark.parametrize(
    "q, words",
    [
        ({0.5: [1.0, 2.0]}, "need at least 2 levels"),
        ({"q10": [1.0, 2.0], "q90": [2.0, 3.0]}, "levels (keys or column labels) must be"),
        ({0.0: [1.0, 2.0], 0.9: [2.0, 3.0]}, "quantiles level must be in (0, 1)"),
        ({0.1: [1.0, 2.0], 0.2: [2.0, 3.0]}, "nearest 0.1587 and 0.8413 are both 0.2"),
        ([[1.0, 2.0]], "quantiles must be a mapping"),
    ],
)
def test_bad_quantiles(q, words):
    err = TypeError if isinstance(q, list) else ValueError
    with pytest.raises(err, match=re.escape(words)):
        uqviz.from_predictions([1.0, 2.0], [1.5, 2.5], quantiles=q)


# ---------------------------------------------------------------------------------------
# samples
# ---------------------------------------------------------------------------------------
def test_samples_sd_with_ddof_1_and_kept_for_qce():
    rng = np.random.default_rng(1)
    n, r = 300, 8
    draws = rng.normal(size=(n, r)) * rng.uniform(0.5, 2, (n, 1))
    y = rng.normal(size=n)
    ds = uqviz.from_predictions(y, None, samples=draws)
    np.testing.assert_allclose(ds["uE"].values, np.std(draws, axis=1, ddof=1), rtol=1e-14)
    np.testing.assert_allclose(ds["E"].values, y - draws.mean(axis=1), rtol=1e-14)
    assert ds["samples"].dims == ("point", "sample") and ds.sizes["sample"] == r
    assert ds.attrs["ddof"] == 1 and ds.attrs["n_samples"] == r
    np.testing.assert_array_equal(ds["y"].values, y)
    a = uqviz.qce(ds, n_boot=0)
    b = uqviz.qce(y, samples=draws.T, n_boot=0)
    np.testing.assert_array_equal(a["qce"].values, b["qce"].values)
    # the other analyses ignore the draws
    res = uqviz.validate_average(ds, statistics=("ZMS",), n_boot=200, rng=0)
    ref = uqviz.validate_average(
        uqviz.from_arrays(ds["E"].values, ds["uE"].values), statistics=("ZMS",), n_boot=200, rng=0
    )
    np.testing.assert_array_equal(res["estimate"].values, ref["estimate"].values)


def test_samples_with_an_explicit_prediction():
    draws = np.array([[1.0, 2.0, 3.0], [0.0, 0.0, 1.0]])
    ds = uqviz.from_predictions([2.5, 1.0], [2.2, 0.3], samples=draws)
    np.testing.assert_allclose(ds["E"].values, [0.3, 0.7])
    np.testing.assert_allclose(ds["uE"].values, [1.0, np.sqrt(1 / 3)])


def test_samples_bad_input():
    with pytest.raises(ValueError, match=r"at least 2 draws per point"):
        uqviz.from_predictions([1.0, 2.0], None, samples=[[1.0], [2.0]])
    with pytest.raises(ValueError, match=r"shape \(point, sample\), got \(3,\)"):
        uqviz.from_predictions([1.0, 2.0, 3.0], None, samples=[1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match=r"length mismatch: y_true has 2 rows, samples has 3 rows"):
        uqviz.from_predictions([1.0, 2.0], None, samples=np.ones((3, 4)))
    draws = np.random.default_rng(0).normal(size=(6, 4))
    draws[[1, 4], 0] = np.nan
    with pytest.raises(
        ValueError,
        match=r"uE: 2 rows with NaN \(rows 1, 4\) "
        r"\[sd of samples, ddof=1\]",
    ):
        uqviz.from_predictions(np.zeros(6), None, samples=draws)
    with pytest.raises(ValueError, match="rename that feature"):
        uqviz.from_predictions(np.zeros(6), None, samples=np.eye(6), features={"y": np.ones(6)})
    with pytest.raises(ValueError, match="y_pred: required"):
        uqviz.from_predictions(np.zeros(6), None, std=np.ones(6))


def test_drop_invalid_keeps_the_draws_of_the_rows_kept():
    draws = np.random.default_rng(0).normal(size=(6, 4))
    draws[2, 1] = np.inf
    with pytest.warns(UserWarning, match="dropped 1 of 6 rows"):
        ds = uqviz.from_predictions(np.zeros(6), None, samples=draws, drop_invalid=True)
    assert ds["point"].values.tolist() == [0, 1, 3, 4, 5]
    np.testing.assert_array_equal(ds["samples"].values, draws[[0, 1, 3, 4, 5]])


# ---------------------------------------------------------------------------------------
# the bad-input rules of from_arrays
# ---------------------------------------------------------------------------------------
def test_length_mismatch_names_every_input():
    with pytest.raises(
        ValueError,
        match=r"length mismatch: y_true has 3 rows, y_pred has 2 rows, "
        r"std has 3 rows; y_pred has 1 row fewer than y_true",
    ):
        uqviz.from_predictions([1.0, 2.0, 3.0], [1.0, 2.0], std=[1.0, 1.0, 1.0])


# NaN and inf counted with their source ([y_true - y_pred]): the contract sweep's folded
# cases "from_predictions: NaN and inf ..." (tests/contract/test_sweep.py, BAD_INPUT_CASES)


def test_non_numeric_and_misaligned_input():
    with pytest.raises(ValueError, match=r"y_pred: 1 row with values that are not numbers"):
        uqviz.from_predictions([1.0, 2.0], np.array([1.0, "x"], dtype=object), std=[1.0, 1.0])
    a = pd.Series([1.0, 2.0], index=[0, 1])
    b = pd.Series([1.0, 2.0], index=[1, 0])
    with pytest.raises(ValueError, match="different indexes"):
        uqviz.from_predictions(a, b, std=[1.0, 1.0])
    with pytest.raises(ValueError, match="empty input"):
        uqviz.from_predictions([], [], std=[])


def test_features_from_a_mapping_or_a_dataframe(toy):
    y, yp, s = toy
    df = pd.DataFrame({"a": np.arange(50.0), "b": np.ones(50)})
    ds = uqviz.from_predictions(y, yp, std=s, features=df)
    assert ds["a"].attrs["role"] == "feature"
    np.testing.assert_array_equal(ds["a"].values, np.arange(50.0))
    ds2 = uqviz.from_predictions(y, yp, std=s, features={"a": np.arange(50.0)})
    np.testing.assert_array_equal(ds2["a"].values, ds["a"].values)
    with pytest.raises(TypeError, match="features must be a mapping"):
        uqviz.from_predictions(y, yp, std=s, features=[1, 2])
    with pytest.raises(ValueError, match="length mismatch"):
        uqviz.from_predictions(y, yp, std=s, features={"a": np.arange(3.0)})


def test_inputs_are_not_modified(toy):
    y, yp, s = toy
    copies = [a.copy() for a in (y, yp, s)]
    uqviz.from_predictions(y, yp, lower=yp - s, upper=yp + s, level=0.8)
    for a, b in zip((y, yp, s), copies):
        np.testing.assert_array_equal(a, b)


def test_samples_dataframe_with_another_index_is_refused():
    # issue 22 item 7: a samples DataFrame was paired with y_true by position
    y = pd.Series([1.0, 2.0, 3.0], index=[0, 1, 2])
    draws = np.random.default_rng(0).normal(size=(3, 4))
    with pytest.raises(ValueError, match=r"different indexes: 'samples' vs 'y_true'"):
        uqviz.from_predictions(y, None, samples=pd.DataFrame(draws, index=[2, 1, 0]))
    with pytest.raises(ValueError, match=r"different indexes: 'samples' vs 'y_true'"):
        uqviz.from_predictions(y, y, samples=pd.DataFrame(draws, index=[5, 6, 7]))
    # the same index, or plain arrays: paired row by row
    ds = uqviz.from_predictions(y, None, samples=pd.DataFrame(draws, index=y.index))
    np.testing.assert_allclose(ds["samples"].values, draws)
    uqviz.from_predictions(y.to_numpy(), None, samples=pd.DataFrame(draws, index=[2, 1, 0]))
