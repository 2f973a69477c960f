"""The comparison section of a report on a DataTree of models of the same points (issue 24,
item 3)."""

from __future__ import annotations

import json

import numpy as np
import pytest
import xarray as xr

import uqviz
from dataclasses import replace

from uqviz.comparison import same_points
from uqviz.reporting.comparison import comparison_section, decide

SMALL = dict(n_boot=200, n_mc=20, progress=False, remedy=False)


def _models(m=300, seed=1, with_y=True):
    """Three models of the same m points: calibrated, too narrow (uE / 2), and a twin of the
    calibrated one (calibrated too, with its own errors)."""
    rng = np.random.default_rng(seed)
    y = rng.normal(size=m)
    u = np.exp(0.3 * rng.normal(size=m))
    pred = y - u * rng.normal(size=m)  # E = y - pred ~ N(0, u^2): calibrated
    twin = y - u * rng.normal(size=m)
    out = {}
    for name, p, f in (("calibrated", pred, 1.0), ("narrow", pred, 0.5), ("twin", twin, 1.0)):
        ds = uqviz.from_arrays(y - p, f * u)
        if with_y:
            ds["y"] = ("point", y)
        out[name] = ds
    return xr.DataTree.from_dict(out)


@pytest.fixture(scope="module")
def compared():
    tree = _models()
    col = uqviz.report(tree, rng=3, figures=False, **SMALL)  # figures: the test below
    plain = uqviz.report(tree, rng=3, figures=False, compare=False, **SMALL)
    return tree, col, plain


def test_auto_compares_models_that_give_the_same_y(compared):
    tree, col, _ = compared
    c = col.comparison
    assert c is not None and c["compare"] == "auto"
    assert c["models"] == ["calibrated", "narrow", "twin"]
    assert c["measures"] == ["ZMS", "RCE", "nll", "crps"]
    assert c["labels"] == {"ZMS": "ZMS", "RCE": "RCE", "nll": "NLL", "crps": "CRPS"}
    assert c["references"] == {"ZMS": 1.0, "RCE": 0.0, "nll": None, "crps": None}
    assert c["n_points"] == 300


def test_the_numbers_are_those_of_compare_models_on_the_next_stream(compared):
    tree, col, _ = compared
    child = np.random.default_rng(3).spawn(4)[3]  # the datasets take children 0..2
    res = uqviz.compare_models(tree, n_boot=200, rng=child, progress=False)
    c = col.comparison
    assert c["result"]["data"]["estimate"]["values"] == res["estimate"].values.tolist()
    for m in c["measures"]:
        for k in c["models"]:
            row = c["table"][m][k]
            p = res["rank_probability"].sel(measure=m, model=k).values
            assert row["value"] == float(res["estimate"].sel(measure=m, model=k))
            assert row["lower"] == float(res["ci_lower"].sel(measure=m, model=k))
            assert row["upper"] == float(res["ci_upper"].sel(measure=m, model=k))
            assert row["most_probable_rank"] == int(res["rank"].values[np.argmax(p)])
            assert row["probability"] == float(p.max())


def test_pair_verdicts_in_words_only_when_the_interval_excludes_zero(compared):
    _, col, _ = compared
    pairs = col.comparison["pairs"]
    assert all(len(v) == 3 for v in pairs.values())  # 3 models: 3 pairs, each once
    for m, rows in pairs.items():
        m = col.comparison["labels"][m]
        for p in rows:
            if p["comparison"] == "better":
                assert p["upper"] < 0
                assert p["text"].startswith(f"model {p['model']} has a better {m}")
                assert p["text"].endswith(
                    f"{p['difference']:.3g} [{p['lower']:.3g}, {p['upper']:.3g}]"
                )
            elif p["comparison"] == "no difference":
                assert p["lower"] <= 0 <= p["upper"]
                assert f"no difference detected in {m}" in p["text"]
    nll = {(p["model"], p["versus"]): p for p in pairs["nll"]}
    # the calibrated models have a clearly better NLL than the too narrow one
    for good in ("calibrated", "twin"):
        p = nll[(good, "narrow")]
        assert p["comparison"] == "better", p
        assert p["text"] == (
            f"model {good} has a better NLL than model narrow: difference "
            f"{p['difference']:.3g} [{p['lower']:.3g}, {p['upper']:.3g}]"
        )
    # two calibrated models: no difference detected
    twin = [p for p in pairs["ZMS"] if {p["model"], p["versus"]} == {"calibrated", "twin"}][0]
    assert twin["comparison"] == "no difference"
    assert twin["text"] == (
        "models calibrated and twin: no difference detected in ZMS "
        f"(difference of |ZMS - 1| {twin['difference']:.3g} "
        f"[{twin['lower']:.3g}, {twin['upper']:.3g}] holds 0)"
    )


def test_conclusion_and_ranking_sentences(compared):
    _, col, _ = compared
    c = col.comparison
    assert len(c["conclusion"]) == 4
    nll = c["conclusion"][2]
    assert nll.startswith("Comparison of the models by NLL: most probable ranks ")
    assert "model calibrated has a better NLL than model narrow" in nll
    best = min(
        c["models"],
        key=lambda k: (
            c["table"]["nll"][k]["most_probable_rank"],
            -c["table"]["nll"][k]["probability"],
        ),
    )
    prob = c["table"]["nll"][best]["probability"]
    assert f"ranks {best} 1 (probability {prob:.2f})" in nll


def test_html_and_json(compared, tmp_path):
    _, col, _ = compared
    assert col.comparison_figures == {}  # figures=False
    page = col.to_html()
    assert "<h2 id='comparison-of-the-models'>Comparison of the models</h2>" in page
    assert "href='#comparison-of-the-models'" in page
    assert "<th>model</th><th>ZMS</th><th>RCE</th><th>NLL</th><th>CRPS</th>" in page
    for p in col.comparison["pairs"]["nll"]:
        assert p["text"] in page
    for line in col.comparison["conclusion"]:
        assert line in page
    data = json.loads(col.to_json())
    assert data["comparison"]["pairs"] == col.comparison["pairs"]
    assert list(data["datasets"]) == ["calibrated", "narrow", "twin"]
    paths = col.save(tmp_path)
    assert json.loads(open(paths["json"]).read())["comparison"]["measures"][0] == "ZMS"


def test_the_figures_of_the_section(compared):
    import base64

    import matplotlib.pyplot as plt

    tree, col, _ = compared
    numbers, figs = comparison_section(tree, n_boot=200, rng=1, figures=True)
    assert set(figs) == {"comparison_ranking", "comparison_sip", "comparison_differences"}
    titles = {k: [ax.get_title() for ax in f.axes if ax.get_title()] for k, f in figs.items()}
    assert titles["comparison_ranking"] == [
        "ZMS ranks (M = 300)",
        "RCE ranks (M = 300)",
        "NLL ranks (M = 300)",
        "CRPS ranks (M = 300)",
    ]
    # SIP: the measures that are means of per-point values (the scores)
    assert numbers["sip_measures"] == ["nll", "crps"]
    assert [t.split(" (")[0] for t in titles["comparison_sip"]] == ["SIP of NLL", "SIP of CRPS"]
    assert len(titles["comparison_differences"]) == 4
    plt.close("all")
    pngs = {k: b"\x89PNG-" + k.encode() for k in figs}
    page = replace(col, comparison_figures=pngs).to_html()
    for png in pngs.values():
        assert base64.b64encode(png).decode() in page


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
    assert same_points(list((k, v.to_dataset()) for k, v in tree.children.items()))[:2] == (
        True,
        False,
    )
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
    with pytest.raises(
        ValueError,
        match=r"compare=True: the datasets are not models of the "
        r"same points: numbers of points differ "
        r"\('a': 5, 'b': 4\)",
    ):
        uqviz.report(xr.DataTree.from_dict({"a": a, "b": b}), compare=True, **SMALL)
    y = np.arange(5.0)
    a["y"], c = ("point", y), a.copy()
    c["y"] = ("point", np.where(y > 2, -y, y))
    with pytest.raises(ValueError, match=r"y of 'c' differs from y of 'a' at 2 of 5 points"):
        uqviz.report(xr.DataTree.from_dict({"a": a, "c": c}), compare=True, **SMALL)
    # different y: auto does not compare either
    assert decide(xr.DataTree.from_dict({"a": a, "c": c}), None) is False
    with pytest.raises(
        ValueError,
        match=r"compare=True: a comparison of models needs a "
        r"DataTree .* got one Dataset",
    ):
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


def test_auto_skips_a_comparison_that_cannot_be_computed(monkeypatch):
    import uqviz.comparison.models as models

    def broken(*args, **kwargs):
        raise ValueError("no score applies")

    monkeypatch.setattr(models, "compare_models", broken)
    tree = _models(m=150)
    col = uqviz.report(tree, rng=0, figures=False, **SMALL)
    assert col.comparison == {
        "compare": "auto",
        "skipped": "the models could not be compared: no score applies",
        "warnings": [],
        "conclusion": [
            "Comparison of the models: not done (the models could "
            "not be compared: no score applies)."
        ],
    }
    assert "<p>not done: the models could not be compared: no score applies</p>" in col.to_html()
    with pytest.raises(ValueError, match="no score applies"):
        uqviz.report(tree, rng=0, figures=False, compare=True, **SMALL)


def test_the_scores_compared_are_those_every_form_takes():
    from uqviz.reporting.comparison import common_scores

    rng = np.random.default_rng(0)
    y, p = rng.normal(size=20), np.zeros(20)
    std = uqviz.from_predictions(y, p, std=np.ones(20))
    forms = {
        "samples": (uqviz.from_predictions(y, p, samples=rng.normal(size=(20, 5))), ("crps",)),
        "quantiles": (
            uqviz.from_predictions(y, p, quantiles={0.1: p - 1.3, 0.5: p, 0.9: p + 1.3}),
            ("crps",),
        ),
        "interval": (uqviz.from_predictions(y, p, lower=p - 1.6, upper=p + 1.6, level=0.9), None),
    }
    assert common_scores([("a", std), ("b", std)]) == ("nll", "crps")
    for form, (ds, want) in forms.items():
        assert ds.attrs["forecast"] == form
        assert common_scores([("a", std), ("b", ds)]) == want
