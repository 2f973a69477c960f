"""uqviz.data: constructors, round trips and the bad-input rules."""

import re
import warnings

import numpy as np
import pandas as pd
import pytest
import xarray as xr
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from uqviz.data import (
    check_dataset,
    from_arrays,
    from_dataframe,
    from_datasets,
    read_csv,
    z_scores,
)

E3 = np.array([0.5, -1.0, 2.0])
U3 = np.array([0.5, 2.0, 1.0])


def raises(msg):
    """pytest.raises(ValueError) matching ``msg`` literally."""
    return pytest.raises(ValueError, match=re.escape(msg))


# --------------------------------------------------------------------------
# constructors and round trips
# --------------------------------------------------------------------------
def test_from_arrays_structure():
    ds = from_arrays(
        E3,
        U3,
        features={"X": [1, 2, 3]},
        metadata={"formula": ["CH4", "H2O", "NH3"]},
        name="toy",
        units="eV",
    )
    assert set(ds.data_vars) == {"E", "uE", "X", "formula"}
    assert ds["E"].dims == ("point",) and ds["E"].dtype == np.float64
    assert ds["uE"].dtype == np.float64 and ds["X"].dtype == np.float64
    np.testing.assert_array_equal(ds["E"].values, E3)
    np.testing.assert_array_equal(ds["uE"].values, U3)
    np.testing.assert_array_equal(ds["X"].values, [1.0, 2.0, 3.0])
    assert list(ds["formula"].values) == ["CH4", "H2O", "NH3"]
    np.testing.assert_array_equal(ds["point"].values, [0, 1, 2])
    assert ds["point"].dtype.kind == "i"
    assert ds.attrs["name"] == "toy" and ds.attrs["units"] == "eV"
    assert ds["X"].attrs["role"] == "feature" and ds["formula"].attrs["role"] == "metadata"
    assert "n_dropped" not in ds.attrs and "n_filtered" not in ds.attrs
    assert check_dataset(ds) is ds


def test_from_arrays_defaults_and_input_types():
    ds = from_arrays(pd.Series([1.0, 2.0]), xr.DataArray([3.0, 4.0], dims="i"))
    assert ds.attrs == {"name": "dataset", "units": ""}
    np.testing.assert_array_equal(ds["uE"].values, [3.0, 4.0])
    # integer errors become float64; missing values in an object list are NaN
    assert from_arrays([1, 2], [1, 1])["E"].dtype == np.float64
    with raises("E: 1 row with NaN (row 1)"):
        from_arrays([1.0, None], [1.0, 1.0])


def test_z_scores():
    z = z_scores(from_arrays(E3, U3))
    assert z.name == "Z"
    np.testing.assert_allclose(z.values, [1.0, -0.5, 2.0], rtol=0, atol=0)
    np.testing.assert_array_equal(z["point"].values, [0, 1, 2])


def test_from_dataframe_reference_minus_prediction_and_variances():
    df = pd.DataFrame(
        {
            "ref": [1.0, 2.0, 3.0],
            "pred": [0.5, 2.5, 1.0],
            "var": [0.25, 4.0, 0.01],
            "mass": [16.0, 18.0, 17.0],
            "formula": ["CH4", "H2O", "NH3"],
        }
    )
    ds = from_dataframe(
        df,
        reference="ref",
        prediction="pred",
        variances="var",
        features=["mass"],
        metadata=["formula"],
        name="mols",
    )
    np.testing.assert_allclose(ds["E"].values, [0.5, -0.5, 2.0])  # reference - prediction
    np.testing.assert_allclose(ds["uE"].values, [0.5, 2.0, 0.1])  # sqrt(variances)
    np.testing.assert_array_equal(ds["mass"].values, [16.0, 18.0, 17.0])
    assert list(ds["formula"].values) == ["CH4", "H2O", "NH3"]
    assert ds.attrs["name"] == "mols"


def test_from_dataframe_default_columns_and_explicit_columns():
    df = pd.DataFrame({"E": [0.1, -0.2], "uE": [0.3, 0.4], "err": [1.0, 2.0], "u": [5.0, 6.0]})
    ds = from_dataframe(df)
    np.testing.assert_array_equal(ds["E"].values, [0.1, -0.2])
    np.testing.assert_array_equal(ds["uE"].values, [0.3, 0.4])
    ds = from_dataframe(df, errors="err", uncertainties="u")
    np.testing.assert_array_equal(ds["E"].values, [1.0, 2.0])
    np.testing.assert_array_equal(ds["uE"].values, [5.0, 6.0])


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(errors="E", reference="r", prediction="p"), "not both"),
        (dict(reference="r"), "reference= needs prediction="),
        (dict(prediction="p"), "prediction= needs reference="),
        (dict(uncertainties="uE", variances="v"), "either uncertainties= or variances="),
    ],
)
def test_from_dataframe_contradictory_choices(kwargs, message):
    df = pd.DataFrame({"E": [0.1], "uE": [0.2], "r": [1.0], "p": [1.0], "v": [1.0]})
    with raises(message):
        from_dataframe(df, **kwargs)


def test_from_dataframe_missing_columns_are_named():
    df = pd.DataFrame({"a": [0.1], "b": [0.2]})
    with raises("no errors column"):
        from_dataframe(df, uncertainties="b")
    with raises("no uncertainties column"):
        from_dataframe(df, errors="a")
    with raises("column(s) not found: 'zz', 'mass'"):
        from_dataframe(df, errors="a", uncertainties="zz", features=["mass"])


def test_read_csv_round_trip(tmp_path):
    rng = np.random.default_rng(3)
    ref, pred = rng.normal(size=50), rng.normal(size=50)
    var = rng.uniform(0.1, 2.0, size=50)
    x = rng.uniform(size=50)
    df = pd.DataFrame(
        {"y": ref, "y_pred": pred, "u2": var, "x": x, "smiles": [f"C{i}" for i in range(50)]}
    )
    path = tmp_path / "my_set.csv"
    df.to_csv(path, index=False, float_format="%.17g")
    ds = read_csv(
        path,
        reference="y",
        prediction="y_pred",
        variances="u2",
        features=["x"],
        metadata=["smiles"],
        units="kcal/mol",
    )
    assert ds.attrs["name"] == "my_set" and ds.attrs["units"] == "kcal/mol"
    np.testing.assert_array_equal(ds["E"].values, ref - pred)
    np.testing.assert_array_equal(ds["uE"].values, np.sqrt(var))
    np.testing.assert_array_equal(ds["x"].values, x)
    assert list(ds["smiles"].values) == list(df["smiles"])
    np.testing.assert_array_equal(ds["point"].values, np.arange(50))
    # other separator, explicit name, default E/uE columns
    path2 = tmp_path / "semi.csv"
    path2.write_text("E;uE\n0.25;0.5\n-1;2\n")
    ds2 = read_csv(path2, sep=";", name="other")
    assert ds2.attrs["name"] == "other"
    np.testing.assert_array_equal(ds2["E"].values, [0.25, -1.0])
    np.testing.assert_array_equal(ds2["uE"].values, [0.5, 2.0])


def test_read_csv_non_numeric_column_names_rows(tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text("E,uE\n0.1,0.2\n0.2,oops\n0.3,0.1\n0.4,err\n")
    with raises("uE: 2 rows with values that are not numbers (rows 1, 3)"):
        read_csv(path)


@settings(max_examples=30, deadline=None)
@given(
    hnp.arrays(
        np.float64,
        st.integers(1, 30),
        elements=st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False),
    ),
    st.floats(1e-3, 1e3),
)
def test_from_arrays_keeps_values_exactly(e, scale):
    u = scale * (1.0 + np.abs(e))
    ds = from_arrays(e, u)
    np.testing.assert_array_equal(ds["E"].values, e)
    np.testing.assert_array_equal(ds["uE"].values, u)
    np.testing.assert_array_equal(ds["point"].values, np.arange(e.size))


# --------------------------------------------------------------------------
# bad input
# --------------------------------------------------------------------------
@pytest.mark.parametrize(
    "e, u, feats, message",
    [
        ([0.1, np.nan, 0.3, np.nan], [1, 1, 1, 1], None, "E: 2 rows with NaN (rows 1, 3)"),
        ([0.1, 0.2, 0.3], [1, np.inf, 1], None, "uE: 1 row with inf (row 1)"),
        ([0.1, 0.2, 0.3], [1, 1, -np.inf], None, "uE: 1 row with inf (row 2)"),
        ([0.1, 0.2, 0.3], [0.0, 1, 0.0], None, "uE: 2 rows with uE <= 0 (rows 0, 2)"),
        ([0.1, 0.2, 0.3], [1, -0.5, 1], None, "uE: 1 row with uE <= 0 (row 1)"),
        ([0.1, 0.2, 0.3], [1, 1, 1], {"X": [1.0, np.nan, 2.0]}, "X: 1 row with NaN (row 1)"),
        ([0.1, 0.2, 0.3], [1, 1, 1], {"X": [np.inf, 1.0, 2.0]}, "X: 1 row with inf (row 0)"),
    ],
)
def test_invalid_values_raise_with_count(e, u, feats, message):
    with raises(message):
        from_arrays(e, u, features=feats)


def test_several_problems_reported_together():
    with pytest.raises(ValueError) as info:
        from_arrays([np.nan, 1.0, 2.0], [1.0, 0.0, -1.0])
    msg = str(info.value)
    assert "E: 1 row with NaN (row 0)" in msg
    assert "uE: 2 rows with uE <= 0 (rows 1, 2)" in msg


def test_row_list_is_truncated_to_ten():
    u = np.ones(30)
    u[5:30] = 0.0
    with raises("uE: 25 rows with uE <= 0 (rows 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, ...)"):
        from_arrays(np.zeros(30), u)


def test_length_mismatch_always_raises():
    with raises("length mismatch: E has 3 rows, uE has 2 rows; uE has 1 row fewer than E"):
        from_arrays([1.0, 2.0, 3.0], [1.0, 1.0], drop_invalid=True)
    with raises("X has 2 rows more than E"):
        from_arrays([1.0], [1.0], features={"X": [1.0, 2.0, 3.0]})
    with raises("formula has 1 row"):
        from_arrays([1.0, 2.0], [1.0, 1.0], metadata={"formula": ["CH4"]})


def test_empty_input_raises():
    with raises("empty input: E and uE have 0 rows"):
        from_arrays([], [])
    with raises("empty input"):
        from_dataframe(
            pd.DataFrame({"E": pd.Series([], dtype=float), "uE": pd.Series([], dtype=float)})
        )


@pytest.mark.parametrize(
    "e, message",
    [
        (["0.1", "x", "0.3"], "E: 1 row with values that are not numbers (row 1)"),
        (np.array(["0.1", "0.2"]), "E: 2 rows with values that are not numbers (rows 0, 1)"),
        (
            pd.Series(["0.1", "a", "b"], dtype="str"),
            "E: 2 rows with values that are not numbers (rows 1, 2)",
        ),
        (
            pd.Series([0.1, "a", 0.3], dtype=object),
            "E: 1 row with values that are not numbers (row 1)",
        ),
        ([True, False, True], "E: non-numeric column (boolean dtype): 3 rows"),
    ],
)
def test_non_numeric_errors_always_raise(e, message):
    with raises(message):
        from_arrays(e, np.ones(len(e)), drop_invalid=True)


def test_non_numeric_dataframe_columns():
    df = pd.DataFrame({"E": [0.1, 0.2, 0.3], "uE": [1.0, 1.0, 1.0], "f": ["a", "b", "c"]})
    with raises("f: 3 rows with values that are not numbers (rows 0, 1, 2)"):
        from_dataframe(df, features=["f"])
    # the same column is fine as metadata
    ds = from_dataframe(df, metadata=["f"])
    assert list(ds["f"].values) == ["a", "b", "c"]
    df2 = pd.DataFrame({"r": ["1", "x"], "p": [0.0, 0.0], "uE": [1.0, 1.0]})
    with raises("reference [column 'r']: 1 row with values that are not numbers (row 1)"):
        from_dataframe(df2, reference="r", prediction="p")


def test_dataframe_labels_name_the_source_column():
    df = pd.DataFrame({"err": [0.1, 0.2, 0.3], "u": [1.0, 0.0, 1.0]})
    with raises("uE: 1 row with uE <= 0 (row 1) [column 'u']"):
        from_dataframe(df, errors="err", uncertainties="u")
    # a negative variance is an uncertainty <= 0 (not a silent NaN)
    dfv = pd.DataFrame({"E": [0.1, 0.2, 0.3], "v": [1.0, -4.0, 1.0]})
    with raises("uE: 1 row with uE <= 0 (row 1) [sqrt of column 'v']"):
        from_dataframe(dfv, variances="v")


def test_names_and_options_are_checked():
    with raises("feature name 'E' is reserved"):
        from_arrays(E3, U3, features={"E": [1, 2, 3]})
    with raises("both as feature and metadata"):
        from_arrays(E3, U3, features={"a": [1, 2, 3]}, metadata={"a": [1, 2, 3]})
    with raises("min_uncertainty must be None"):
        from_arrays(E3, U3, min_uncertainty="paper")
    with raises("min_uncertainty must be None"):
        from_arrays(E3, U3, min_uncertainty=-1.0)
    with raises("expected a 1-D array, got an array of shape (2, 2, 1)"):
        from_arrays(np.ones((2, 2, 1)), np.ones((2, 2, 1)))
    # (row, target) arrays are several targets since issue 39 (tests/data/test_targets.py)
    assert from_arrays(np.ones((2, 2)), np.ones((2, 2))).attrs["layout"] == "targets"


@pytest.mark.parametrize("arg", ["features", "metadata"])
@pytest.mark.parametrize("value", [[[1, 2, 3]], [1, 2, 3], np.ones((3, 2)), "x"])
def test_features_and_metadata_must_be_named_columns(arg, value):
    # issue 22 item 7: features=[[1, 2]] raised AttributeError: 'list' object has no attribute
    with pytest.raises(
        TypeError, match=f"{arg} must be a mapping {{name: values}} or a pandas DataFrame, got"
    ):
        from_arrays(E3, U3, **{arg: value})
    ds = from_arrays(E3, U3, **{arg: pd.DataFrame({"a": [1.0, 2.0, 3.0]})})
    np.testing.assert_array_equal(ds["a"].values, [1.0, 2.0, 3.0])


# --------------------------------------------------------------------------
# drop_invalid and min_uncertainty
# --------------------------------------------------------------------------
def test_drop_invalid_drops_exactly_the_bad_rows():
    e = np.array([0.1, np.nan, 0.3, 0.4, np.inf, 0.6, 0.7])
    u = np.array([1.0, 1.0, 0.0, 2.0, 1.0, -1.0, 3.0])
    x = np.array([1.0, 2.0, 3.0, np.nan, 5.0, 6.0, 7.0])
    with pytest.warns(
        UserWarning,
        match=re.escape(
            "dropped 5 of 7 rows (E NaN: 1; E inf: 1; uE <= 0: 2; x NaN: 1); kept 2 rows"
        ),
    ):
        ds = from_arrays(
            e, u, features={"x": x}, metadata={"m": list("abcdefg")}, drop_invalid=True
        )
    np.testing.assert_array_equal(ds["point"].values, [0, 6])
    np.testing.assert_array_equal(ds["E"].values, [0.1, 0.7])
    np.testing.assert_array_equal(ds["uE"].values, [1.0, 3.0])
    np.testing.assert_array_equal(ds["x"].values, [1.0, 7.0])
    assert list(ds["m"].values) == ["a", "g"]
    assert ds.attrs["n_dropped"] == 5
    assert ds.attrs["dropped_reasons"] == "E NaN: 1; E inf: 1; uE <= 0: 2; x NaN: 1"


def test_drop_invalid_counts_rows_once_and_records_nothing_dropped():
    with pytest.warns(UserWarning, match=re.escape("dropped 1 of 3 rows (E NaN: 1; uE NaN: 1)")):
        ds = from_arrays([1.0, np.nan, 2.0], [1.0, np.nan, 1.0], drop_invalid=True)
    assert ds.attrs["n_dropped"] == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ds = from_arrays(E3, U3, drop_invalid=True)
    assert ds.attrs["n_dropped"] == 0 and ds.sizes["point"] == 3


def test_drop_invalid_everything_dropped_raises():
    with raises("drop_invalid: all 2 rows are invalid"):
        from_arrays([np.nan, 1.0], [1.0, 0.0], drop_invalid=True)


def test_min_uncertainty_papers():
    e = np.array([1.0, -1.0, 2.0, -2.0, 0.5, 0.0])
    sd = np.std(e, ddof=1)
    thr = 1e-6 * sd
    u = np.array([1.0, thr, 0.5 * thr, 1.01 * thr, 2.0, 1.0])
    with pytest.warns(UserWarning, match=re.escape(f"dropped 2 rows with uE <= {thr:.6g}")):
        ds = from_arrays(e, u, min_uncertainty="papers")
    np.testing.assert_array_equal(ds["point"].values, [0, 3, 4, 5])
    np.testing.assert_array_equal(ds["uE"].values, u[[0, 3, 4, 5]])
    assert ds.attrs["n_filtered"] == 2
    assert ds.attrs["min_uncertainty"] == pytest.approx(thr, rel=1e-15)


def test_min_uncertainty_absolute_and_nonpositive_rows():
    e = np.array([0.1, 0.2, 0.3, 0.4, 0.5])
    u = np.array([0.05, 0.2, -0.01, 0.0, 0.11])
    with pytest.warns(
        UserWarning,
        match=re.escape(
            "dropped 3 rows with uE <= 0.1 (absolute threshold; "
            "2 of them with uE <= 0; rows 0, 2, 3)"
        ),
    ):
        ds = from_arrays(e, u, min_uncertainty=0.1)
    np.testing.assert_array_equal(ds["point"].values, [1, 4])
    assert ds.attrs["n_filtered"] == 3 and ds.attrs["min_uncertainty"] == 0.1
    # no row below: no warning, the attrs still record the filter
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ds = from_arrays(E3, U3, min_uncertainty=0.01)
    assert ds.attrs["n_filtered"] == 0 and ds.sizes["point"] == 3


def test_min_uncertainty_runs_after_drop_invalid():
    # the papers' sd(E) is computed on the rows kept by drop_invalid
    e = np.array([np.nan, 1.0, -1.0, 3.0])
    thr = 1e-6 * np.std(e[1:], ddof=1)
    u = np.array([1.0, 1.0, 0.9 * thr, 1.0])
    with pytest.warns(UserWarning) as record:
        ds = from_arrays(e, u, drop_invalid=True, min_uncertainty="papers")
    texts = [str(w.message) for w in record]
    assert any("drop_invalid: dropped 1 of 4 rows (E NaN: 1)" in t for t in texts)
    assert any("min_uncertainty: dropped 1 row" in t for t in texts)
    np.testing.assert_array_equal(ds["point"].values, [1, 3])
    assert ds.attrs["n_dropped"] == 1 and ds.attrs["n_filtered"] == 1
    assert ds.attrs["min_uncertainty"] == pytest.approx(thr, rel=1e-15)
    with raises("min_uncertainty: all 2 rows have uE <= 5"):
        from_arrays([1.0, 2.0], [1.0, 2.0], min_uncertainty=5.0)


def test_caller_data_not_mutated():
    e = np.array([0.1, np.nan, 0.3])
    u = np.array([1.0, 1.0, 0.0])
    x = np.array([1.0, 2.0, 3.0])
    e0, u0, x0 = e.copy(), u.copy(), x.copy()
    with pytest.warns(UserWarning):
        ds = from_arrays(e, u, features={"x": x}, drop_invalid=True)
    ds["E"].values[:] = 99.0
    ds["x"].values[:] = 99.0
    np.testing.assert_array_equal(e, e0)
    np.testing.assert_array_equal(u, u0)
    np.testing.assert_array_equal(x, x0)
    df = pd.DataFrame(
        {"E": [0.1, 0.2, np.nan], "uE": [1.0, 0.0, 1.0], "x": [1.0, 2.0, 3.0], "s": ["a", "b", "c"]}
    )
    df0 = df.copy(deep=True)
    with pytest.warns(UserWarning):
        ds = from_dataframe(df, features=["x"], metadata=["s"], drop_invalid=True)
    ds["E"].values[:] = 99.0
    ds["x"].values[:] = 99.0
    pd.testing.assert_frame_equal(df, df0)
    # no drop: still a copy
    ds = from_arrays(x, x)
    ds["E"].values[:] = -5.0
    np.testing.assert_array_equal(x, x0)


# --------------------------------------------------------------------------
# check_dataset, from_datasets
# --------------------------------------------------------------------------
def test_check_dataset_rejects_bad_datasets():
    good = from_arrays(E3, U3, features={"X": [1.0, 2.0, 3.0]}, metadata={"m": [np.nan, 1.0, 2.0]})
    assert check_dataset(good) is good  # NaN in metadata is allowed
    with pytest.raises(TypeError):
        check_dataset(good.to_dataframe())
    with raises("no dimension 'point'"):
        check_dataset(xr.Dataset({"E": ("i", E3), "uE": ("i", U3)}))
    with raises("lacks variable(s) 'uE'"):
        check_dataset(good.drop_vars("uE"))
    bad = good.copy(deep=True)
    bad["uE"].values[1] = 0.0
    with raises("uE: 1 row with uE <= 0 (row 1)"):
        check_dataset(bad)
    bad = good.copy(deep=True)
    bad["X"].values[2] = np.inf
    with raises("X: 1 row with inf (row 2)"):
        check_dataset(bad)
    bad = good.isel(point=[0, 2]).copy(deep=True)
    bad["E"].values[1] = np.nan  # row numbers are the original rows
    with raises("E: 1 row with NaN (row 2)"):
        check_dataset(bad)
    with raises("empty input"):
        check_dataset(good.isel(point=slice(0, 0)))
    with raises("E: must have dims ('point',)"):
        check_dataset(good.expand_dims(replicate=2))
    strings = good.assign(E=("point", np.array(["a", "b", "c"], dtype=object)))
    with raises("E: 3 rows with values that are not numbers"):
        check_dataset(strings)


def test_check_dataset_and_z_scores_accept_a_datatree():
    a = from_arrays(E3, U3, name="a")
    b = from_arrays(E3[:2], U3[:2], name="b")
    tree = from_datasets({"a": a, "b": b})
    assert check_dataset(tree) is tree
    z = z_scores(tree)
    assert isinstance(z, xr.DataTree) and list(z.children) == ["a", "b"]
    np.testing.assert_array_equal(z["a"]["Z"].values, E3 / U3)
    np.testing.assert_array_equal(z["b"]["Z"].values, E3[:2] / U3[:2])
    # every child is checked, and the error names the child (a tree built around the check)
    bad = b.copy(deep=True)
    bad["uE"].values[1] = -1.0
    bad_tree = xr.DataTree.from_dict({"a": a, "b": bad})
    with raises("dataset 'b': invalid values:\n  uE: 1 row with uE <= 0 (row 1)"):
        check_dataset(bad_tree)
    with raises("dataset 'b'"):
        z_scores(bad_tree)
    with raises("dataset 'a': dataset lacks variable(s) 'E', 'uE'"):
        check_dataset(xr.DataTree.from_dict({"a": xr.Dataset({"x": ("point", E3)})}))
    with raises("no child holding a dataset"):
        check_dataset(xr.DataTree())


def test_from_datasets_order_and_names():
    a = from_arrays(E3, U3, name="a")
    b = from_arrays(E3[:2], U3[:2], name="b")
    c = from_arrays(E3[:1], U3[:1], name="c")
    tree = from_datasets([c, a, b])
    assert isinstance(tree, xr.DataTree)
    assert list(tree.children) == ["c", "a", "b"]
    assert tree["a"].to_dataset().sizes["point"] == 3
    xr.testing.assert_identical(tree["b"].to_dataset(), b)
    tree2 = from_datasets({"second": b, "first": a})
    assert list(tree2.children) == ["second", "first"]
    assert tree2["first"].attrs["name"] == "first"
    assert a.attrs["name"] == "a"  # the input is not modified


def test_from_datasets_errors():
    a = from_arrays(E3, U3, name="a")
    a2 = from_arrays(E3, U3, name="a")
    with raises("duplicate dataset names: 'a'"):
        from_datasets([a, a2])
    with raises("no dataset given"):
        from_datasets([])
    with raises("no 'name' attribute"):
        from_datasets([xr.Dataset({"E": ("point", E3), "uE": ("point", U3)})])
    with raises("invalid dataset name 'x/y'"):
        from_datasets({"x/y": a})
    bad = a.copy(deep=True)
    bad["uE"].values[0] = -1.0
    with raises("uE: 1 row with uE <= 0 (row 0)"):
        from_datasets({"bad": bad})


# --------------------------------------------------------------------------
# bad input found by the sweep (issue 11): CSV shape, BOM, separators, indexes,
# subnormal uE, dtypes, no mutation
# --------------------------------------------------------------------------
def test_read_csv_rows_with_more_fields_than_the_header_are_an_error(tmp_path):
    # pandas would take column 0 as the index and shift E and uE silently
    path = tmp_path / "extra.csv"
    path.write_text("E,uE\n1,0.1,0.2\n2,0.3,0.4\n3,0.5,0.6\n")
    with raises("3 lines with more fields than the header's 2 (lines 2, 3, 4)"):
        read_csv(path)


def test_read_csv_ragged_lines_are_named(tmp_path):
    path = tmp_path / "ragged.csv"
    path.write_text("E,uE,x\n0.1,0.2,1\n0.3,0.4\n0.5,0.6,1,9\n\n0.7,0.8,2\n0.9\n")
    with pytest.raises(ValueError) as info:
        read_csv(path)
    msg = str(info.value)
    assert "ragged.csv" in msg
    assert "1 line with more fields than the header's 3 (line 4)" in msg
    assert "2 lines with fewer fields than the header's 3 (lines 3, 7)" in msg


def test_read_csv_malformed_and_empty_files(tmp_path):
    (tmp_path / "quote.csv").write_text('E,uE\n0.1,0.2\n0.3,"0.4\n')
    with raises("malformed CSV at line 3"):
        read_csv(tmp_path / "quote.csv")
    (tmp_path / "empty.csv").write_text("")
    with raises("empty.csv: the file is empty"):
        read_csv(tmp_path / "empty.csv")
    (tmp_path / "dup.csv").write_text("E,uE,E\n0.1,0.2,0.3\n")
    with raises("duplicate column names in the header: 'E'"):
        read_csv(tmp_path / "dup.csv")
    (tmp_path / "latin.csv").write_bytes("E,uE,nom\n0.1,0.2,\xe9\n".encode("latin-1"))
    with raises("not utf-8 text (byte 0xe9"):
        read_csv(tmp_path / "latin.csv", metadata=["nom"])
    assert (
        read_csv(tmp_path / "latin.csv", metadata=["nom"], encoding="latin-1")["nom"].values[0]
        == "é"
    )


def test_read_csv_paths_that_are_not_files(tmp_path):
    with pytest.raises(IsADirectoryError, match="is a directory"):
        read_csv(tmp_path)
    with pytest.raises(FileNotFoundError, match="no such file"):
        read_csv(tmp_path / "missing.csv")


def test_read_csv_utf8_bom(tmp_path):
    path = tmp_path / "bom.csv"
    path.write_bytes(b"\xef\xbb\xbfE,uE\n0.1,0.2\n-0.3,0.4\n")
    ds = read_csv(path)
    np.testing.assert_array_equal(ds["E"].values, [0.1, -0.3])
    np.testing.assert_array_equal(ds["uE"].values, [0.2, 0.4])
    with open(path, "rb") as f:  # a binary file object too
        np.testing.assert_array_equal(read_csv(f)["E"].values, [0.1, -0.3])


def test_read_csv_semicolon_file_names_the_separator_to_pass(tmp_path):
    path = tmp_path / "semi.csv"
    path.write_text("E;uE\n0.1;0.2\n0.3;0.4\n")
    with raises("the file looks ';'-separated; pass sep=';'"):
        read_csv(path)
    np.testing.assert_array_equal(read_csv(path, sep=";")["uE"].values, [0.2, 0.4])
    # European decimal commas: the hint names decimal=',' as well, and it works
    path.write_text("E;uE\n0,1;0,2\n0,3;0,4\n")
    with raises("pass sep=';' and decimal=','"):
        read_csv(path)
    np.testing.assert_array_equal(read_csv(path, sep=";", decimal=",")["E"].values, [0.1, 0.3])
    with raises("sep must be one character"):
        read_csv(path, sep=";;")


def test_series_with_different_indexes_are_an_error():
    e = pd.Series([0.1, 0.2, 0.3], index=[10, 11, 12])
    u = pd.Series([0.3, 0.2, 0.1], index=[12, 11, 10])
    with raises("pandas inputs with different indexes: 'uE' vs 'E'"):
        from_arrays(e, u)
    with raises("'x' vs 'E'"):
        from_arrays(e, u.sort_index().set_axis(e.index), features={"x": pd.Series([1, 2, 3])})
    # aligned explicitly, or as arrays: accepted
    ds = from_arrays(e, u.reindex(e.index))
    np.testing.assert_array_equal(ds["uE"].values, [0.1, 0.2, 0.3])
    ds = from_arrays(e, u.to_numpy())
    np.testing.assert_array_equal(ds["uE"].values, [0.3, 0.2, 0.1])


@pytest.mark.parametrize("tiny", [5e-324, 1e-310])
def test_subnormal_uncertainties_are_invalid(tiny):
    with raises("uE: 2 rows with 0 < uE < 2.23e-308 (subnormal: 1/uE is not finite) (rows 1, 3)"):
        from_arrays([0.1, 0.2, 0.3, 0.0], [0.1, tiny, 0.2, tiny])
    with pytest.warns(UserWarning, match="dropped 2 of 4 rows"):
        ds = from_arrays([0.1, 0.2, 0.3, 0.0], [0.1, tiny, 0.2, tiny], drop_invalid=True)
    np.testing.assert_array_equal(ds["point"].values, [0, 2])
    bad = xr.Dataset({"E": ("point", [0.1, 0.2]), "uE": ("point", [0.1, tiny])})
    with raises("uE: 1 row with 0 < uE < 2.23e-308"):
        check_dataset(bad)
    # small but normal uncertainties are legitimate
    assert from_arrays([1e-300, 2e-300], [1e-300, 3e-300]).sizes["point"] == 2


def test_overflowing_z_scores_are_invalid():
    with raises("E/uE: 1 row with |Z| = |E/uE| too large to be a finite number (row 0)"):
        from_arrays([1e300, 0.1], [1e-10, 0.1])
    # with a filter the check runs on the rows kept
    with raises("subnormal"):
        from_arrays([0.1, 0.2, 0.3], [0.1, 5e-324, 0.2], min_uncertainty=0.0)
    with pytest.warns(UserWarning, match="min_uncertainty: dropped 1 row"):
        ds = from_arrays([0.1, 0.2, 0.3], [0.1, 5e-324, 0.2], min_uncertainty=1e-12)
    assert ds.sizes["point"] == 2


@pytest.mark.parametrize(
    "make",
    [
        lambda a: a.astype(np.float32),
        lambda a: (a * 100).astype(np.int64),
        lambda a: a.astype(object),
        lambda a: pd.Series(a.astype(np.float32)),
        lambda a: list(a),
    ],
)
def test_dtypes_become_float64_without_touching_the_input(make):
    base = np.array([0.5, 1.5, 2.5])
    e, u = make(base), make(base + 1)
    e_copy, u_copy = pd.Series(e).copy(), pd.Series(u).copy()
    ds = from_arrays(e, u, features={"x": make(base)})
    assert ds["E"].dtype == ds["uE"].dtype == ds["x"].dtype == np.float64
    np.testing.assert_array_equal(ds["E"].values, np.asarray(e, dtype=float))
    ds["E"].values[0] = 99.0  # the dataset does not share memory with the input
    pd.testing.assert_series_equal(pd.Series(e), e_copy)
    pd.testing.assert_series_equal(pd.Series(u), u_copy)
    assert type(e) is type(make(base))


def test_read_csv_and_from_dataframe_leave_inputs_alone(tmp_path):
    df = pd.DataFrame(
        {"y": [1.0, 2.0], "p": [0.5, 2.5], "v": [0.25, 0.04], "s": ["a", "b"]}, index=[5, 9]
    )
    before = df.copy()
    from_dataframe(df, reference="y", prediction="p", variances="v", metadata=["s"])
    pd.testing.assert_frame_equal(df, before)
    path = tmp_path / "t.csv"
    path.write_text("E,uE\n0.1,0.2\n")
    text = path.read_text()
    read_csv(path)
    assert path.read_text() == text


def test_from_datasets_of_what_is_not_datasets_is_a_type_error():
    """issue 38, item 9: ``from_datasets(None)`` said "'NoneType' object is not iterable"."""
    with pytest.raises(
        TypeError,
        match=r"datasets: expected a mapping name -> xarray.Dataset "
        r"or a sequence of named datasets, got NoneType",
    ):
        from_datasets(None)


@pytest.mark.parametrize("errors", [[[1.0, 2.0], [3.0]], [1.0, [2.0, 3.0]]])
def test_ragged_input_is_named(errors):
    """issue 38, item 9: numpy's "inhomogeneous shape" message before."""
    with pytest.raises(ValueError, match="E: expected a 1-D array of numbers, got a ragged"):
        from_arrays(errors, [1.0, 1.0])


def test_a_masked_array_is_refused_with_its_masked_count():
    """issue 38, item 9: the mask was ignored and the masked values used."""
    e = np.ma.masked_array([0.1, 0.2, -0.3, 0.4], mask=[True, False, True, False])
    with pytest.raises(ValueError, match="E: a masked array with 2 rows masked"):
        from_arrays(e, np.ones(4))
    u = np.ma.masked_array(np.ones(4), mask=[False, False, False, True])
    with pytest.raises(ValueError, match="uE: a masked array with 1 row masked"):
        from_arrays(e.data, u)
    # nothing masked: the values
    ds = from_arrays(np.ma.masked_array(e.data), np.ones(4))
    assert ds["E"].values.tolist() == e.data.tolist()


def test_read_csv_names_the_cell_beyond_float64(tmp_path):
    """issue 38, item 9: one ``1e400`` cell blamed the 51 rows of its column."""
    path = tmp_path / "big.csv"
    path.write_text("E,uE\n" + "0.1,1\n" * 50 + "1e400,1\n")
    with pytest.raises(
        ValueError,
        match=r"E: 1 row with numbers beyond the range of float64 "
        r".*'1e400'.*\(row 50\)",
    ):
        read_csv(path)
