"""``read_csv`` and the command line read a forecast given as quantiles, members or an interval.

The numbers are those of :func:`uqviz.from_predictions` on the same columns (its own tests
check the conversions by hand); here: the routing, the column checks and the CLI syntax.
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import uqviz
from uqviz.cli import load_data, quantile_columns
from uqviz.data.readers import read_csv


@pytest.fixture
def table(tmp_path):
    rng = np.random.default_rng(3)
    n = 40
    y = rng.normal(size=n)
    yhat = y + rng.normal(scale=0.5, size=n)
    df = pd.DataFrame({"y": y, "yhat": yhat, "x": rng.uniform(size=n)})
    for p in (0.1, 0.5, 0.9):
        df[f"q{int(p * 100):02d}"] = yhat + 0.5 * stats.norm.ppf(p)
    for k in range(5):
        df[f"m{k}"] = yhat + rng.normal(scale=0.5, size=n)
    df["lo"], df["hi"] = yhat - 0.8, yhat + 1.0
    path = tmp_path / "forecast.csv"
    df.to_csv(path, index=False)
    return path, df


def test_quantile_columns_equal_from_predictions(table):
    path, df = table
    ds = read_csv(
        path,
        reference="y",
        prediction="yhat",
        features=["x"],
        quantiles={0.1: "q10", 0.5: "q50", 0.9: "q90"},
    )
    ref = uqviz.from_predictions(
        df["y"],
        df["yhat"],
        features=df[["x"]],
        quantiles={0.1: df["q10"], 0.5: df["q50"], 0.9: df["q90"]},
    )
    np.testing.assert_array_equal(ds["E"].values, df["y"] - df["yhat"])
    np.testing.assert_allclose(ds["uE"].values, 0.5, rtol=1e-12)  # 0.5 sd by construction
    np.testing.assert_array_equal(ds["uE"].values, ref["uE"].values)
    assert ds.attrs["uE_source"] == "quantiles" and ds.attrs["name"] == "forecast"
    np.testing.assert_array_equal(ds["x"].values, df["x"].values)


def test_member_columns_give_the_sd_of_the_members(table):
    path, df = table
    cols = [f"m{k}" for k in range(5)]
    ds = read_csv(path, reference="y", samples=cols)
    members = df[cols].to_numpy()
    np.testing.assert_allclose(ds["uE"].values, members.std(axis=1, ddof=1), rtol=1e-12)
    np.testing.assert_allclose(ds["E"].values, df["y"] - members.mean(axis=1), rtol=1e-12)


def test_interval_columns(table):
    path, df = table
    with pytest.warns(uqviz.DataWarning, match="40 rows of 40 with an asymmetric interval"):
        ds = read_csv(path, reference="y", prediction="yhat", lower="lo", upper="hi", level=0.9)
    np.testing.assert_allclose(ds["uE"].values, 0.9 / stats.norm.ppf(0.95), rtol=1e-12)
    assert ds.attrs["n_asymmetric"] == len(df)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (
            {"prediction": "yhat", "quantiles": {0.1: "q10", 0.9: "nope"}},
            "'nope' not in the header",
        ),
        (
            {"quantiles": {0.1: "q10", 0.9: "q90"}, "prediction": "yhat", "uncertainties": "x"},
            "uncertainties: not used with a forecast",
        ),
        ({"prediction": "yhat", "level": 0.9}, "give those columns too"),
        ({"samples": ["m0", "m1"]}, "needs reference="),
    ],
)
def test_bad_forecast_columns(table, kwargs, match):
    path, _ = table
    kw = {"reference": "y", **kwargs}
    if match == "needs reference=":
        kw.pop("reference")
    with pytest.raises(ValueError, match=match):
        read_csv(path, **kw)


def test_cli_quantile_syntax():
    assert quantile_columns(["0.05:q05", "0.95:q95"]) == {0.05: "q05", 0.95: "q95"}
    for bad in ("q05", "0.05:", "low:q05"):
        with pytest.raises(ValueError, match="expected LEVEL:COLUMN"):
            quantile_columns([bad])


def test_cli_loads_the_forecast(table):
    path, df = table
    ns = argparse.Namespace(
        csv=str(path),
        errors=None,
        reference="y",
        prediction="yhat",
        uncertainties=None,
        variances=None,
        features=None,
        sep=",",
        decimal=".",
        drop_invalid=False,
        quantiles=["0.1:q10", "0.9:q90"],
        samples=None,
        lower=None,
        upper=None,
        level=None,
    )
    ds = load_data(ns)
    ref = read_csv(path, reference="y", prediction="yhat", quantiles={0.1: "q10", 0.9: "q90"})
    np.testing.assert_array_equal(ds["uE"].values, ref["uE"].values)
    ns.csv = None
    with pytest.raises(ValueError, match="column options need a CSV file"):
        load_data(ns)


def _with_cells(table, tmp_path, cells):
    """The table's CSV with some cells (row, column) replaced by text."""
    _, df = table
    text = df.astype(object)
    for (row, col), value in cells.items():
        text.loc[row, col] = value
    path = tmp_path / "cells.csv"
    text.to_csv(path, index=False)
    return path


def test_forecast_cells_that_are_not_numbers_name_their_column_and_rows(table, tmp_path):
    """issue 38, item 3: the forecast's cells are checked by read_csv, naming the column
    of the header and the rows (a word in a member column was a TypeError naming neither)."""
    path = _with_cells(table, tmp_path, {(3, "m1"): "abc", (7, "m1"): "n/a?", (5, "q10"): "1e400"})
    with pytest.raises(ValueError) as info:
        read_csv(path, reference="y", samples=[f"m{k}" for k in range(5)])
    msg = str(info.value)
    assert "samples[1] [column 'm1']: 2 rows with values that are not numbers (rows 3, 7)" in msg
    assert "'abc'" in msg and "q10" not in msg  # only the columns read are checked
    with pytest.raises(
        ValueError,
        match=r"quantiles\[0\.1\] \[column 'q10'\]: 1 row with "
        r"numbers beyond the range of float64 .*'1e400'.*"
        r"\(row 5\)",
    ):
        read_csv(path, reference="y", prediction="yhat", quantiles={0.1: "q10", 0.9: "q90"})
    with pytest.raises(ValueError, match=r"lower \[column 'q10'\]: 1 row .*\(row 5\)"):
        read_csv(path, reference="y", prediction="yhat", lower="q10", upper="q90", level=0.8)


def test_forecast_reference_and_prediction_cells_are_named(table, tmp_path):
    path = _with_cells(table, tmp_path, {(2, "y"): "1e999", (4, "yhat"): "x"})
    with pytest.raises(ValueError) as info:
        read_csv(path, reference="y", prediction="yhat", quantiles={0.1: "q10", 0.9: "q90"})
    msg = str(info.value)
    assert "reference [column 'y']: 1 row with numbers beyond the range of float64" in msg
    assert "(row 2)" in msg
    assert "prediction [column 'yhat']: 1 row with values that are not numbers (row 4)" in msg


def test_forecast_empty_cells_stay_the_rules_of_from_predictions(table, tmp_path):
    """An empty cell is NaN, not a bad cell: from_predictions's invalid-row rules apply,
    and drop_invalid drops the row, the other numbers unchanged."""
    path = _with_cells(table, tmp_path, {(6, "q90"): ""})
    with pytest.raises(ValueError, match="drop_invalid"):
        read_csv(path, reference="y", prediction="yhat", quantiles={0.1: "q10", 0.9: "q90"})
    with pytest.warns(uqviz.DataWarning, match="dropped 1 of 40 rows"):
        ds = read_csv(
            path,
            reference="y",
            prediction="yhat",
            quantiles={0.1: "q10", 0.9: "q90"},
            drop_invalid=True,
        )
    _, df = table
    assert ds.sizes["point"] == len(df) - 1 and 6 not in ds["point"].values.tolist()
    keep = df.drop(index=6)
    np.testing.assert_array_equal(ds["E"].values, (keep["y"] - keep["yhat"]).to_numpy())
