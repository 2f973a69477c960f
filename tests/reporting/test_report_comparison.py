"""The comparison section of a report on a DataTree of models of the same points (issue 24, item 3)."""

from __future__ import annotations

import json

import numpy as np
import pytest
import xarray as xr

import uqviz
from uqviz.reporting.comparison import decide, shared_points

SMALL = dict(n_boot=200, n_mc=20, progress=False, remedy=False)


def _models(m=400, seed=0, with_y=True):
    """Three models of the same m points: calibrated, too wide (uE x 2), too narrow (uE / 2);
    a fourth, nearly the calibrated one (uE x 1.02)."""
    rng = np.random.default_rng(seed)
    y = rng.normal(size=m)
    u = np.exp(0.3 * rng.normal(size=m))
    pred = y - u * rng.normal(size=m)  # E = y - pred ~ N(0, u^2): calibrated
    out = {}
    for name, f in (("calibrated", 1.0), ("wide", 2.0), ("narrow", 0.5), ("near", 1.02)):
        ds = uqviz.from_arrays(y - pred, f * u)
        if with_y:
            ds["y"] = ("point", y)
        out[name] = ds
    return xr.DataTree.from_dict(out)


@pytest.fixture(scope="module")
def compared():
    tree = _models()
    col = uqviz.report(tree, rng=3, figures=True, **SMALL)
    plain = uqviz.report(tree, rng=3, figures=False, compare=False, **SMALL)
    return tree, col, plain


def test_auto_compares_models_that_give_the_same_y(compared):
    tree, col, _ = compared
    c = col.comparison
    assert c is not None and c["compare"] == "auto"
    assert c["models"] == ["calibrated", "wide", "narrow", "near"]
    assert c["measures"] == ["ZMS", "RCE", "NLL", "CRPS"]
    assert c["n_points"] == 400


def test_the_numbers_are_those_of_compare_models_on_the_next_stream(compared):
    tree, col, _ = compared
    child = np.random.default_rng(3).spawn(5)[4]  # the datasets take children 0..3
    res = uqviz.compare_models(tree, n_boot=200, rng=child, progress=False)
    c = col.comparison
    assert c["result"]["data"]["value"]["values"] == res["value"].values.tolist()
    for m in c["measures"]:
        for k in c["models"]:
            row = c["table"][m][k]
            p = res["rank_probability"].sel(measure=m, model=k).values
            assert row["value"] == float(res["value"].sel(measure=m, model=k))
            assert row["lower"] == float(res["value_lower"].sel(measure=m, model=k))
            assert row["upper"] == float(res["value_upper"].sel(measure=m, model=k))
            assert row["most_probable_rank"] == int(res["rank"].values[np.argmax(p)])
            assert row["probability"] == float(p.max())


def test_pair_verdicts_in_words_only_when_the_interval_excludes_zero(compared):
    _, col, _ = compared
    pairs = col.comparison["pairs"]
    assert all(len(v) == 6 for v in pairs.values())  # 4 models: 6 pairs, each once
    for m, rows in pairs.items():
        for p in rows:
            if p["comparison"] == "better":
                assert p["upper"] < 0
                assert p["text"].startswith(f"model {p['model']} has a better {m}")
                assert p["text"].endswith(f"{p['difference']:.3g} [{p['lower']:.3g}, "
                                          f"{p['upper']:.3g}]")
            elif p["comparison"] == "no difference":
                assert p["lower"] <= 0 <= p["upper"]
                assert f"no difference detected in {m}" in p["text"]
    nll = {(p["model"], p["versus"]): p for p in pairs["NLL"]}
    # the calibrated model has a clearly better NLL than the too narrow and too wide ones
    for other in ("narrow", "wide"):
        p = nll[("calibrated", other)]
        assert p["comparison"] == "better", p
        assert p["text"] == (f"model calibrated has a better NLL than model {other}: difference "
                             f"{p['difference']:.3g} [{p['lower']:.3g}, {p['upper']:.3g}]")
    # 2 % wider uncertainties: no difference detected
    near = [p for p in pairs["ZMS"] if {p["model"], p["versus"]} == {"calibrated", "near"}][0]
    assert near["comparison"] == "no difference"
    assert near["text"].startswith("models calibrated and near: no difference detected in ZMS "
                                   "(difference of |ZMS - 1| ")


def test_conclusion_and_ranking_sentences(compared):
    _, col, _ = compared
    c = col.comparison
    assert len(c["conclusion"]) == 4
    nll = c["conclusion"][2]
    assert nll.startswith("Comparison of the models by NLL: most probable ranks ")
    assert "model calibrated has a better NLL than model narrow" in nll
    best = min(c["models"], key=lambda k: (c["table"]["NLL"][k]["most_probable_rank"],
                                           -c["table"]["NLL"][k]["probability"]))
    prob = c["table"]["NLL"][best]["probability"]
    assert f"ranks {best} 1 (probability {prob:.2f})" in nll


def test_html_json_and_figures(compared, tmp_path):
    _, col, _ = compared
    assert set(col.comparison_figures) == {"comparison_ranking", "comparison_sip",
                                           "comparison_differences"}
    assert all(png.startswith(b"\x89PNG") for png in col.comparison_figures.values())
    page = col.to_html()
    assert "<h2 id='comparison-of-the-models'>Comparison of the models</h2>" in page
    assert "href='#comparison-of-the-models'" in page
    for p in col.comparison["pairs"]["NLL"]:
        text = p["text"].replace("|", "|")
        assert text in page
    data = json.loads(col.to_json())
    assert data["comparison"]["pairs"] == col.comparison["pairs"]
    assert list(data["datasets"]) == ["calibrated", "wide", "narrow", "near"]
    paths = col.save(tmp_path)
    assert json.loads(open(paths["json"]).read())["comparison"]["measures"][0] == "ZMS"


def test_the_datasets_numbers_do_not_depend_on_the_comparison(compared):
    _, col, plain = compared
    assert plain.comparison is None and "comparison" not in json.loads(plain.to_json())
    assert "comparison-of-the-models" not in plain.to_html()
    for k in col.reports:
        assert col[k].numbers == plain[k].numbers
        assert col[k].conclusion == plain[k].conclusion
    # the JSON without the comparison is that of compare=False, key for key
    with_c = json.loads(col.to_json())
    with_c.pop("comparison")
    assert with_c == json.loads(plain.to_json())


def test_without_y_the_tree_is_not_compared_unless_asked():
    tree = _models(m=150, with_y=False)
    assert shared_points(list((k, v.to_dataset()) for k, v in tree.children.items()))[:2] \
        == (True, False)
    assert decide(tree, None) is False and decide(tree, True) is True
    assert decide(tree, False) is False
    col = uqviz.report(tree, rng=0, figures=False, compare=True, **SMALL)
    assert col.comparison["compare"] == "requested"
    assert "compared as requested, compare=True" in col.to_html()


def test_auto_leaves_a_tree_of_independent_sets_as_before():
    tree = uqviz.synthetic.nig(150, nu=8.0, n_datasets=2, rng=4)
    auto = uqviz.report(tree, rng=7, figures=False, **SMALL)
    off = uqviz.report(tree, rng=7, figures=False, compare=False, **SMALL)
    assert auto.comparison is None
    assert auto.to_json() == off.to_json()


def test_compare_true_errors_name_the_mismatch():
    a = uqviz.from_arrays(np.ones(5), np.ones(5))
    b = uqviz.from_arrays(np.ones(4), np.ones(4))
    with pytest.raises(ValueError, match=r"compare=True: the datasets are not models of the "
                                         r"same points: their numbers of points differ "
                                         r"\(a: 5, b: 4\)"):
        uqviz.report(xr.DataTree.from_dict({"a": a, "b": b}), compare=True, **SMALL)
    y = np.arange(5.0)
    a["y"], c = ("point", y), a.copy()
    c["y"] = ("point", np.where(y > 2, -y, y))
    with pytest.raises(ValueError, match=r"their observed values y differ from a's \(c at 2 of "
                                         r"5 points\)"):
        uqviz.report(xr.DataTree.from_dict({"a": a, "c": c}), compare=True, **SMALL)
    # different y: auto does not compare either
    assert decide(xr.DataTree.from_dict({"a": a, "c": c}), None) is False
    with pytest.raises(ValueError, match=r"compare=True: a comparison of models needs a "
                                         r"DataTree .* got one Dataset"):
        uqviz.report(a, compare=True, **SMALL)
    with pytest.raises(ValueError, match=r"at least two models, got 1"):
        uqviz.report(xr.DataTree.from_dict({"a": a}), compare=True, **SMALL)
    with pytest.raises(TypeError, match="compare"):
        uqviz.report(a, compare="yes", **SMALL)


def test_a_feature_named_y_does_not_identify_the_points():
    rng = np.random.default_rng(1)
    kids = {}
    for k in ("a", "b"):
        ds = uqviz.from_arrays(rng.normal(size=50), np.ones(50), features={"y": np.arange(50.0)})
        kids[k] = ds
    assert kids["a"]["y"].attrs.get("role") == "feature"
    assert decide(xr.DataTree.from_dict(kids), None) is False
