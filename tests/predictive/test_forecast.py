"""The forecast kept as given by from_predictions, and its predictive CDF and quantiles."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import uqviz
from uqviz.engine.warning_classes import DataWarning
from uqviz.predictive import forecast_form, observed, predictive_cdf, predictive_quantiles


@pytest.fixture
def toy():
    rng = np.random.default_rng(3)
    yp = rng.normal(size=6)
    s = rng.uniform(0.5, 2.0, size=6)
    y = yp + s * rng.normal(size=6)
    return y, yp, s


def _normal_quantiles(yp, s, levels):
    return {p: yp + s * stats.norm.ppf(p) for p in levels}


# ------------------------------------------------------------------------------------------
# from_predictions keeps the forecast as given
# ------------------------------------------------------------------------------------------


def test_quantiles_are_kept_with_their_levels_and_y(toy):
    y, yp, s = toy
    q = _normal_quantiles(yp, s, [0.9, 0.1, 0.5])  # keys out of order: sorted
    ds = uqviz.from_predictions(y, yp, quantiles=q)
    assert ds.attrs["forecast"] == "quantiles" and forecast_form(ds) == "quantiles"
    assert ds["quantiles"].dims == ("point", "level")
    assert ds["level"].values.tolist() == [0.1, 0.5, 0.9]
    np.testing.assert_array_equal(
        ds["quantiles"].values, np.stack([q[0.1], q[0.5], q[0.9]], axis=1)
    )
    np.testing.assert_array_equal(ds["y"].values, y)
    np.testing.assert_allclose(ds["E"].values, y - yp, rtol=0, atol=0)


def test_dataframe_levels_out_of_order_are_sorted_with_their_columns(toy):
    y, yp, s = toy
    q = _normal_quantiles(yp, s, [0.1, 0.5, 0.9])
    df = pd.DataFrame({0.9: q[0.9], 0.5: q[0.5], 0.1: q[0.1]})
    ds = uqviz.from_predictions(y, yp, quantiles=df)
    assert ds["level"].values.tolist() == [0.1, 0.5, 0.9]
    np.testing.assert_array_equal(ds["quantiles"].sel(level=0.9).values, q[0.9])


def test_interval_is_kept_with_its_level(toy):
    y, yp, s = toy
    ds = uqviz.from_predictions(y, yp, lower=yp - 1.645 * s, upper=yp + 1.645 * s, level=0.9)
    assert ds.attrs["forecast"] == "interval" and ds.attrs["level"] == 0.9
    assert ds["lower"].attrs["level"] == 0.9 and ds["upper"].attrs["level"] == 0.9
    np.testing.assert_array_equal(ds["lower"].values, yp - 1.645 * s)
    np.testing.assert_array_equal(ds["upper"].values, yp + 1.645 * s)
    np.testing.assert_array_equal(ds["y"].values, y)


def test_samples_are_kept_unchanged_and_std_keeps_no_y(toy):
    y, yp, s = toy
    draws = yp[:, None] + s[:, None] * np.random.default_rng(0).normal(size=(6, 5))
    ds = uqviz.from_predictions(y, None, samples=draws)
    assert ds.attrs["forecast"] == "samples"
    np.testing.assert_array_equal(ds["samples"].values, draws)
    std = uqviz.from_predictions(y, yp, std=s)
    assert std.attrs["forecast"] == "std" and "y" not in std
    assert uqviz.from_predictions(y, yp, variance=s**2).attrs["forecast"] == "variance"


def test_drop_invalid_keeps_the_forecast_of_the_rows_kept(toy):
    y, yp, s = toy
    q = _normal_quantiles(yp, s, [0.1, 0.5, 0.9])
    q[0.5] = q[0.5].copy()
    q[0.5][2] = np.nan  # a NaN at a level that uE does not use: the row is invalid all the same
    with pytest.raises(ValueError, match=r"uE: 1 row with NaN \(row 2\)"):
        uqviz.from_predictions(y, yp, quantiles=q)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataWarning)
        ds = uqviz.from_predictions(y, yp, quantiles=q, drop_invalid=True)
    assert ds["point"].values.tolist() == [0, 1, 3, 4, 5]
    np.testing.assert_array_equal(ds["quantiles"].sel(level=0.5).values, q[0.5][[0, 1, 3, 4, 5]])
    np.testing.assert_array_equal(ds["y"].values, y[[0, 1, 3, 4, 5]])


def test_crossing_quantiles_are_sorted_and_counted(toy):
    y, yp, s = toy
    q = _normal_quantiles(yp, s, [0.1, 0.5, 0.9])
    q[0.5] = q[0.5].copy()
    q[0.5][[1, 4]] = q[0.9][[1, 4]] + 1.0  # above the 0.9 quantile
    with pytest.warns(
        DataWarning,
        match=r"2 rows of 6 with crossing quantiles.*rows 1, 4.*"
        r"repaired by sorting each row",
    ):
        ds = uqviz.from_predictions(y, yp, quantiles=q)
    assert ds.attrs["n_crossing"] == 2 and ds.attrs["crossing"] == "sort"
    want = np.sort(np.stack([q[0.1], q[0.5], q[0.9]], axis=1), axis=1)
    np.testing.assert_array_equal(ds["quantiles"].values, want)
    assert (np.diff(ds["quantiles"].values, axis=1) >= 0).all()
    # uE from the sorted rows: the nearest rule takes the 0.1 and 0.9 quantiles
    z = stats.norm.ppf(0.9) - stats.norm.ppf(0.1)
    np.testing.assert_allclose(ds["uE"].values, (want[:, 2] - want[:, 0]) / z, rtol=1e-12)


def test_crossing_raise_counts_the_rows(toy):
    y, yp, s = toy
    q = _normal_quantiles(yp, s, [0.1, 0.5, 0.9])
    q[0.1] = q[0.1].copy()
    q[0.1][[0, 2, 5]] = q[0.9][[0, 2, 5]] + 0.1
    with pytest.raises(
        ValueError,
        match=r"quantiles: 3 rows of 6 with crossing quantiles.*"
        r"rows 0, 2, 5",
    ):
        uqviz.from_predictions(y, yp, quantiles=q, crossing="raise")


@pytest.mark.parametrize(
    "kwargs, words",
    [
        (dict(crossing="sorted"), "crossing"),
        (dict(std=[1.0] * 6, crossing="raise"), "crossing: used only with quantiles="),
    ],
)
def test_crossing_option_is_checked(toy, kwargs, words):
    y, yp, s = toy
    if "std" not in kwargs:
        kwargs = dict(kwargs, quantiles=_normal_quantiles(yp, s, [0.1, 0.9]))
    with pytest.raises(ValueError, match=words):
        uqviz.from_predictions(y, yp, **kwargs)


def test_an_interval_not_containing_the_prediction_is_an_error(toy):
    y, yp, s = toy
    with pytest.raises(ValueError, match=r"y_pred: 1 row with y_pred outside \[lower, upper\]"):
        uqviz.from_predictions(y, yp, lower=np.r_[yp[0] + 0.1, yp[1:] - 1], upper=yp + 1, level=0.9)


def test_ensemble_of_one_member_and_clashing_features_are_errors(toy):
    y, yp, s = toy
    with pytest.raises(ValueError, match=r"need at least 2 draws per point"):
        uqviz.from_predictions(y, None, samples=yp[:, None])
    with pytest.raises(ValueError, match=r"'quantiles' hold the forecast kept"):
        uqviz.from_predictions(
            y, yp, quantiles=_normal_quantiles(yp, s, [0.1, 0.9]), features={"quantiles": s}
        )


# ------------------------------------------------------------------------------------------
# forms, observed values, predictive CDF
# ------------------------------------------------------------------------------------------


def test_observed_in_error_space_and_with_y(toy):
    y, yp, s = toy
    ds = uqviz.from_arrays(y - yp, s, features={"y": s * 2})  # a feature named y is an input
    yy, pred = observed(ds)
    np.testing.assert_array_equal(yy.values, y - yp)
    assert (pred.values == 0).all()
    q = uqviz.from_predictions(y, yp, quantiles=_normal_quantiles(yp, s, [0.1, 0.9]))
    yy, pred = observed(q)
    np.testing.assert_array_equal(yy.values, y)
    np.testing.assert_allclose(pred.values, yp, atol=1e-15)


def test_forecast_form_errors():
    ds = uqviz.from_arrays([0.1, 0.2], [1.0, 1.0])
    with pytest.raises(ValueError, match="unknown form 'cdf'"):
        forecast_form(ds.assign_attrs(forecast="cdf"))
    with pytest.raises(ValueError, match="lacks quantiles"):
        forecast_form(ds.assign_attrs(forecast="quantiles"))
    with pytest.raises(TypeError, match="expected an xarray.Dataset"):
        forecast_form({"E": 1})


@pytest.mark.parametrize(
    "gen, ref",
    [
        ("normal", lambda z: stats.norm.cdf(z)),
        ("t6", lambda z: stats.t.cdf(z * np.sqrt(6 / 4), 6)),
        ("laplace", lambda z: stats.laplace.cdf(z, scale=1 / np.sqrt(2))),
        ("uniform", lambda z: stats.uniform.cdf(z, -np.sqrt(3), 2 * np.sqrt(3))),
    ],
)
def test_cdf_of_the_forecast_uE_D(toy, gen, ref):
    y, yp, s = toy
    ds = uqviz.from_predictions(y, yp, std=s)
    v = np.linspace(-3, 3, 6)
    np.testing.assert_allclose(predictive_cdf(ds, v, generative=gen), ref(v / s), rtol=1e-12)
    grid = np.stack([v, v + 1], axis=1)  # (point, k); error space: y_pred = 0
    np.testing.assert_allclose(
        predictive_cdf(ds, grid, generative=gen), ref(grid / s[:, None]), rtol=1e-12
    )


def test_cdf_of_quantiles_hand_computed():
    q = {0.1: [-1.0], 0.5: [0.0], 0.9: [2.0]}
    ds = uqviz.from_predictions([1.0], [0.0], quantiles=q)
    u = 3.0 / (stats.norm.ppf(0.9) - stats.norm.ppf(0.1))  # nearest rule: 0.1 and 0.9
    assert float(ds["uE"][0]) == pytest.approx(u, rel=1e-12)
    values = np.array([[-1.0, -0.5, 0.0, 1.0, 2.0, 3.0, -2.0]])
    want = [
        0.1,
        0.1 + 0.4 * 0.5,
        0.5,
        0.5 + 0.4 * 0.5,
        0.9,
        stats.norm.cdf(stats.norm.ppf(0.9) + 1.0 / u),
        stats.norm.cdf(stats.norm.ppf(0.1) - 1.0 / u),
    ]
    np.testing.assert_allclose(predictive_cdf(ds, values)[0], want, rtol=1e-12)
    # continuous at the extreme quantiles: the tails pass through them
    eps = 1e-9
    np.testing.assert_allclose(predictive_cdf(ds, [[2.0 - eps, 2.0 + eps]])[0], 0.9, atol=1e-8)
    np.testing.assert_allclose(predictive_cdf(ds, [[-1.0 - eps, -1.0 + eps]])[0], 0.1, atol=1e-8)


def test_cdf_of_tied_quantiles_is_an_atom():
    q = {0.1: [-1.0], 0.3: [0.0], 0.6: [0.0], 0.9: [1.0]}
    ds = uqviz.from_predictions([0.0], [0.0], quantiles=q)
    assert predictive_cdf(ds, [0.0]).tolist() == [0.6]
    assert predictive_cdf(ds, [0.0], side="left").tolist() == [0.3]


def test_cdf_of_an_interval_is_that_of_three_quantiles():
    y, yp, lo, hi = [1.0, 2.0], np.array([0.0, 1.0]), np.array([-1.0, 0.5]), np.array([2.0, 1.5])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataWarning)  # asymmetric intervals
        ds = uqviz.from_predictions(y, yp, lower=lo, upper=hi, level=0.8)
        qs = uqviz.from_predictions(y, yp, quantiles={0.1: lo, 0.5: yp, 0.9: hi})
    qs["uE"] = ds["uE"]  # the same tails
    v = np.array([[-2.0, -0.5, 0.5, 1.0, 3.0], [0.0, 0.7, 1.2, 1.5, 2.0]])
    np.testing.assert_allclose(predictive_cdf(ds, v), predictive_cdf(qs, v), rtol=1e-14)
    assert predictive_cdf(ds, [[1.0], [1.25]]).ravel().tolist() == [0.5 + 0.4 / 2, 0.5 + 0.4 / 2]


def test_cdf_of_samples_is_the_empirical_cdf():
    ds = uqviz.from_predictions(
        [1.0, 0.0], None, samples=[[0.0, 1.0, 1.0, 2.0], [3.0, -1.0, 0.5, 0.5]]
    )
    v = np.array([[1.0, 0.5, -5.0], [0.5, 1.0, 3.0]])
    assert predictive_cdf(ds, v).tolist() == [[0.75, 0.25, 0.0], [0.75, 0.75, 1.0]]
    assert predictive_cdf(ds, v, side="left").tolist() == [[0.25, 0.25, 0.0], [0.25, 0.75, 0.75]]


def test_values_of_the_wrong_shape_and_empirical_d_are_errors():
    ds = uqviz.from_arrays([0.1, 0.2], [1.0, 1.0])
    with pytest.raises(ValueError, match=r"values: expected a number, one value per point \(2\)"):
        predictive_cdf(ds, [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="'empirical' has no predictive CDF"):
        predictive_cdf(ds, 0.0, generative="empirical")


@pytest.mark.parametrize("form", ["std", "quantiles", "interval"])
def test_quantiles_invert_the_cdf(toy, form):
    y, yp, s = toy
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataWarning)
        ds = {
            "std": lambda: uqviz.from_predictions(y, yp, std=s),
            "quantiles": lambda: uqviz.from_predictions(
                y, yp, quantiles=_normal_quantiles(yp, s, [0.05, 0.3, 0.5, 0.8, 0.95])
            ),
            "interval": lambda: uqviz.from_predictions(
                y, yp, lower=yp - s, upper=yp + 2 * s, level=0.7
            ),
        }[form]()
    levels = [0.01, 0.05, 0.2, 0.5, 0.8, 0.95, 0.999]
    qv = predictive_quantiles(ds, levels, generative="t6")
    assert qv.shape == (6, 7)
    np.testing.assert_allclose(
        predictive_cdf(ds, qv, generative="t6"), np.broadcast_to(levels, (6, 7)), rtol=1e-10
    )
    if form == "quantiles":  # a given level returns its given quantile
        np.testing.assert_allclose(
            predictive_quantiles(ds, [0.3])[:, 0], ds["quantiles"].sel(level=0.3).values, rtol=1e-14
        )


def test_quantiles_of_samples_are_the_inverse_empirical_cdf():
    draws = np.random.default_rng(1).normal(size=(4, 9))
    ds = uqviz.from_predictions(np.zeros(4), None, samples=draws)
    levels = [0.1, 0.5, 0.9]
    np.testing.assert_array_equal(
        predictive_quantiles(ds, levels),
        np.quantile(draws, levels, axis=1, method="inverted_cdf").T,
    )
