"""Several targets and groups (issue 39, item 1): the targets tree, groups=, pool_targets.

Every number below is written out by hand from the small inputs of the test.
"""

from __future__ import annotations

import io
import warnings

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
import xarray as xr  # noqa: E402

import uqviz  # noqa: E402
from uqviz.engine.tree import map_datasets  # noqa: E402

NAN = np.nan
# 4 rows, 2 targets; logP missing in row 1 (NaN y), logS missing in row 3 (NaN prediction)
Y = np.array([[1.0, 0.5], [2.0, NAN], [3.0, 1.5], [4.0, 2.0]])
P = np.array([[1.5, 0.0], [1.0, 1.0], [3.5, 1.0], [NAN, 3.0]])
S = np.array([[0.5, 0.25], [1.0, 0.25], [0.5, 0.5], [1.0, 0.5]])


def tree_of_predictions(**kw):
    return uqviz.from_predictions(Y, P, std=S, targets=["logS", "logP"], **kw)


def test_predictions_give_one_child_per_target_on_its_observed_rows():
    tree = tree_of_predictions()
    assert list(tree.children) == ["logS", "logP"]
    assert tree.attrs["layout"] == "targets" and tree.attrs["targets"] == ["logS", "logP"]
    assert tree.attrs["n_rows"] == 4 and tree.attrs["n_missing"] == [1, 1]
    assert tree.attrs["missing"] == "missing targets (of 4 rows): logS 1, logP 1"
    s, p = tree["logS"].to_dataset(), tree["logP"].to_dataset()
    assert s["point"].values.tolist() == [0, 1, 2] and p["point"].values.tolist() == [0, 2, 3]
    assert s["E"].values.tolist() == [-0.5, 1.0, -0.5]
    assert p["E"].values.tolist() == [0.5, 0.5, -1.0]
    assert s["uE"].values.tolist() == [0.5, 1.0, 0.5] and p["uE"].values.tolist() == [
        0.25,
        0.5,
        0.5,
    ]
    assert (s.attrs["target"], s.attrs["n_missing"], s.attrs["name"]) == ("logS", 1, "logS")
    assert s.attrs["uE_source"] == "std" and s.attrs["forecast"] == "std"
    uqviz.check_dataset(tree)


def test_points_align_on_the_original_rows():
    tree = tree_of_predictions()
    both = xr.align(tree["logS"]["E"], tree["logP"]["E"], join="inner")
    assert both[0]["point"].values.tolist() == [0, 2]
    assert both[0].values.tolist() == [-0.5, -0.5] and both[1].values.tolist() == [0.5, 0.5]


def test_default_names_and_a_nan_uncertainty_is_missing_too():
    std = S.copy()
    std[0, 1] = NAN
    tree = uqviz.from_predictions(Y, P, variance=std**2)
    assert list(tree.children) == ["target0", "target1"]
    assert tree.attrs["n_missing"] == [1, 2]
    assert tree["target1"]["point"].values.tolist() == [2, 3]
    df_y = pd.DataFrame(Y, columns=["a", "b"])
    tree = uqviz.from_predictions(df_y, P, std=S)
    assert list(tree.children) == ["a", "b"]


def test_interval_of_several_targets():
    lo, hi = P - 1.645 * S, P + 1.645 * S
    tree = uqviz.from_predictions(Y, P, lower=lo, upper=hi, level=0.9)
    np.testing.assert_allclose(tree["target0"]["uE"].values, [0.5, 1.0, 0.5], rtol=1e-3)
    assert tree["target1"]["upper"].values.tolist() == hi[[0, 2, 3], 1].tolist()


def test_one_dimensional_inputs_keep_todays_dataset_bit_identical():
    y, p, s = Y[:3, 0], P[:3, 0], S[:3, 0]
    ds = uqviz.from_predictions(y, p, std=s)
    assert isinstance(ds, xr.Dataset) and "group" not in ds.coords
    assert ds["point"].values.tolist() == [0, 1, 2]
    assert ds["E"].values.tobytes() == (y - p).tobytes()
    assert ds["uE"].values.tobytes() == s.tobytes()
    assert set(ds.attrs) == {"name", "units", "uE_source", "forecast"}
    child = uqviz.from_predictions(y[:, None], p[:, None], std=s[:, None])["target0"]
    for v in ("E", "uE"):
        xr.testing.assert_identical(child.to_dataset()[v], ds[v])
    a = uqviz.from_arrays(y - p, s)
    assert set(a.attrs) == {"name", "units"} and list(a.data_vars) == ["E", "uE"]


def test_arrays_and_features_by_row():
    e = Y - P
    tree = uqviz.from_arrays(e, S, features={"x": [10.0, 20.0, 30.0, 40.0]}, units="eV")
    assert tree["target0"]["x"].values.tolist() == [10.0, 20.0, 30.0]
    assert tree["target1"]["x"].values.tolist() == [10.0, 30.0, 40.0]
    assert tree["target1"].attrs["units"] == "eV"


def test_dataframe_lists_of_columns_and_csv_with_empty_cells():
    csv = (
        "logS,logP,pS,pP,uS,uP,mol\n"
        "1.0,0.5,1.5,0.0,0.5,0.25,m1\n"
        "2.0,,1.0,1.0,1.0,0.25,m1\n"
        "3.0,1.5,3.5,1.0,0.5,0.5,m2\n"
        ",2.0,4.0,3.0,1.0,0.5,m3\n"
    )
    kw = dict(
        reference=["logS", "logP"],
        prediction=["pS", "pP"],
        uncertainties=["uS", "uP"],
        groups="mol",
    )
    tree = uqviz.read_csv(io.StringIO(csv), **kw)
    assert tree.attrs["n_missing"] == [1, 1] and tree.attrs["groups"] == "mol"
    assert tree["logS"]["E"].values.tolist() == [-0.5, 1.0, -0.5]
    assert tree["logP"]["group"].values.tolist() == ["m1", "m2", "m3"]
    assert tree["logS"].attrs["groups"] == "mol"
    df = pd.read_csv(io.StringIO(csv))
    same = uqviz.from_dataframe(df, **kw)
    for t in ("logS", "logP"):
        xr.testing.assert_identical(same[t].to_dataset(), tree[t].to_dataset())
    var = uqviz.from_dataframe(
        df.assign(vS=df.uS**2),
        reference=["logS"],
        prediction=["pS"],
        variances=["vS"],
        targets=["solubility"],
    )
    assert var["solubility"]["uE"].values.tolist() == [0.5, 1.0, 0.5]


def test_groups_on_a_single_dataset_and_every_child():
    ds = uqviz.from_arrays(
        [0.1, 0.2, 0.3], [1.0, 1.0, 1.0], groups=pd.Series([5, 5, 7], name="structure")
    )
    assert ds["group"].values.tolist() == [5, 5, 7] and ds["group"].dtype.kind == "i"
    assert ds.attrs["groups"] == "structure" and "group" in ds.coords
    tree = tree_of_predictions(groups=["a", "a", "b", "b"])
    assert tree["logS"]["group"].values.tolist() == ["a", "a", "b"]
    assert tree["logP"]["group"].values.tolist() == ["a", "b", "b"]
    assert tree["logP"].attrs["groups"] == "group"


def test_pooled_child_is_the_hand_concatenation():
    tree = uqviz.pool_targets(tree_of_predictions(groups=[1, 1, 2, 2]))
    assert list(tree.children) == ["logS", "logP", "pooled"]
    assert tree.attrs["targets"] == ["logS", "logP", "pooled"] and tree.attrs["pooled"] == "pooled"
    pooled = tree["pooled"].to_dataset()
    assert pooled["E"].values.tolist() == [-0.5, 1.0, -0.5, 0.5, 0.5, -1.0]
    assert pooled["uE"].values.tolist() == [0.5, 1.0, 0.5, 0.25, 0.5, 0.5]
    assert pooled["point"].values.tolist() == [0, 1, 2, 3, 4, 5]
    assert pooled["row"].values.tolist() == [0, 1, 2, 0, 2, 3]
    assert pooled["target"].values.tolist() == ["logS"] * 3 + ["logP"] * 3
    assert pooled["group"].values.tolist() == [1, 1, 2, 1, 2, 2]
    assert pooled.attrs["pooled_targets"] == ["logS", "logP"]
    only = uqviz.pool_targets(tree_of_predictions(), targets=["logP"], name="p")["p"]
    assert only["E"].values.tolist() == [0.5, 0.5, -1.0]
    with pytest.raises(ValueError, match="'pooled' is already a child"):
        uqviz.pool_targets(tree)
    with pytest.raises(ValueError, match="'fz' not in the tree"):
        uqviz.pool_targets(tree_of_predictions(), targets=["fz"])
    with pytest.raises(ValueError, match="not a targets tree"):
        uqviz.pool_targets(uqviz.from_datasets({"a": uqviz.from_arrays([0.1], [1.0])}))


def test_errors_name_the_target_and_count_the_rows():
    p = P.copy()
    p[2, 1] = np.inf
    with pytest.raises(ValueError, match=r"(?s)target 'logP': .*E: 1 row with inf \(row 2\)"):
        uqviz.from_predictions(Y, p, std=S, targets=["logS", "logP"])
    s = S.copy()
    s[[0, 3], 1] = [0.0, -1.0]
    with pytest.raises(
        ValueError, match=r"(?s)target 'logP': .*uE: 2 rows with uE <= 0 \(rows 0, 3"
    ):
        uqviz.from_predictions(Y, P, std=s, targets=["logS", "logP"])
    with pytest.raises(ValueError, match=r"std has shape \(4, 1\)"):
        uqviz.from_predictions(Y, P, std=S[:, :1])
    with pytest.raises(ValueError, match="duplicate target names: 'a'"):
        uqviz.from_predictions(Y, P, std=S, targets=["a", "a"])
    with pytest.raises(ValueError, match="3 names for 2 targets"):
        uqviz.from_predictions(Y, P, std=S, targets=["a", "b", "c"])
    with pytest.raises(ValueError, match=r"target 'b': no observed row \(all 4 rows"):
        uqviz.from_arrays(np.c_[Y[:, 0], np.full(4, NAN)], S, targets=["a", "b"])
    with pytest.raises(ValueError, match="takes one target"):
        uqviz.from_predictions(Y, P, samples=np.ones((4, 3)))


def test_bad_groups_are_counted():
    with pytest.raises(ValueError, match=r"groups: 3 labels for 4 rows \(1 fewer\)"):
        tree_of_predictions(groups=[1, 2, 3])
    with pytest.raises(ValueError, match=r"groups: 2 of 4 rows without a group label .*rows 1, 3"):
        tree_of_predictions(groups=[1.0, NAN, 2.0, NAN])
    with pytest.raises(ValueError, match="groups: 1 of 3 rows without a group label"):
        uqviz.from_arrays([0.1, 0.2, 0.3], [1.0, 1.0, 1.0], groups=["a", None, "b"])
    df = pd.DataFrame({"E": [0.1, 0.2], "uE": [1.0, 1.0]})
    with pytest.raises(ValueError, match=r"column\(s\) not found: 'mol'"):
        uqviz.from_dataframe(df, groups="mol")


def _targets_tree(n=240, seed=0):
    rng = np.random.default_rng(seed)
    u = np.exp(0.3 * rng.normal(size=(n, 3)))
    y = rng.normal(size=(n, 3))
    p = y + u * rng.normal(size=(n, 3))
    y[rng.random((n, 3)) < 0.2] = NAN
    return uqviz.from_predictions(
        y, p, std=u, targets=["fx", "fy", "fz"], features={"x": rng.normal(size=n)}
    )


def test_results_of_a_targets_tree_are_on_dim_target():
    tree = _targets_tree()
    res = map_datasets(lambda ds, *, rng: xr.Dataset({"n": ds.sizes["point"]}), tree)
    assert res["n"].dims == ("target",)
    assert res["target"].values.tolist() == ["fx", "fy", "fz"]
    assert res["n"].values.tolist() == [240 - k for k in tree.attrs["n_missing"]]
    plain = uqviz.from_datasets({t: tree[t].to_dataset() for t in tree.children})
    assert "dataset" in map_datasets(lambda ds, *, rng: xr.Dataset({"n": 1}), plain).dims
    va = uqviz.validate_average(tree, n_boot=50, rng=1)
    va_fx = uqviz.validate_average(
        tree["fx"].to_dataset(), n_boot=50, rng=np.random.SeedSequence(1).spawn(3)[0]
    )
    assert va["target"].values.tolist() == ["fx", "fy", "fz"]
    assert float(va["estimate"].sel(target="fx", statistic="ZMS")) == float(
        va_fx["estimate"].sel(statistic="ZMS")
    )


def test_plots_draw_results_of_a_targets_tree():
    tree = uqviz.pool_targets(_targets_tree())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        va = uqviz.validate_average(tree, n_boot=50, rng=1)
        lc = uqviz.local_calibration(tree, n_bins=4, n_boot=50, rng=1)
    ax = uqviz.plots.average.intervals(va)
    labels = [t.get_text() for t in ax.get_yticklabels() + ax.get_xticklabels()]
    labels += [t.get_text() for t in ax.get_legend().get_texts()] if ax.get_legend() else []
    assert any("pooled" in lab for lab in labels), labels
    plt.close("all")
    ax = uqviz.plots.conditional.local(lc.sel(target="fy"))
    assert len(ax.lines) >= 1
    plt.close("all")
    with pytest.raises(ValueError, match=r"target=\.\.\."):
        uqviz.plots.conditional.local(lc)


def test_groups_reach_the_bootstrap_of_every_target_and_of_the_pooled_child():
    rng = np.random.default_rng(3)
    e, u = rng.normal(size=(120, 3)), np.ones((120, 3))
    e[rng.random((120, 3)) < 0.1] = NAN
    tree = uqviz.from_arrays(e, u, targets=["fx", "fy", "fz"], groups=np.repeat(np.arange(12), 10))
    tree = uqviz.pool_targets(tree)
    assert tree["pooled"].sizes["point"] == int(np.isfinite(e).sum())
    assert set(tree["pooled"]["group"].values.tolist()) == set(range(12))
    res = uqviz.validate_average(tree, statistics=("ZMS",), n_boot=50, rng=1)
    assert res["target"].values.tolist() == ["fx", "fy", "fz", "pooled"]
    assert res.attrs["resample"] == "groups" and res.attrs["n_groups"] == 12
    plain = uqviz.validate_average(
        tree["fx"].to_dataset().drop_vars("group"), statistics=("ZMS",), n_boot=50, rng=1
    )
    assert plain.attrs.get("resample", "points") == "points" and "n_groups" not in plain.attrs
