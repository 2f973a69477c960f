"""The report as data (issue 38, item 3): ``Report.verdicts`` (an xarray.Dataset, dim
``test``), ``Report.analyses`` (a DataTree), the named streams of a report, the verdict table
and its family decision, and a ``reporting/`` without import circle."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest
import xarray as xr

import uqviz
from uqviz.reporting import build
from uqviz.reporting import verdicts as vd
from uqviz.reporting.gate import _decision, gate

PKG = Path(uqviz.__file__).parent


@pytest.fixture(scope="module")
def rep():
    return uqviz.report(
        uqviz.synthetic.default_example(), n_boot=200, n_mc=50, rng=0, figures=False, progress=False
    )


def _nan(x):
    return np.nan if x is None else float(x)


def test_verdicts_is_a_dataset_of_every_entry(rep):
    t = rep.verdicts
    entries = rep.numbers["verdicts"]
    assert isinstance(t, xr.Dataset) and t["verdict"].dims == ("test",)
    assert list(t["test"].values) == list(entries)
    assert list(t.data_vars)[:5] == ["verdict", "p_value", "p_adjusted", "reliable", "reason"]
    for k, e in entries.items():
        row = t.sel(test=k)
        assert row["verdict"].item() == e["verdict"]
        assert row["reason"].item() == (e.get("reason") or "")
        assert bool(row["reliable"]) == bool(e.get("reliable", True))
        assert bool(row["headline"]) == e["headline"]
        np.testing.assert_equal(float(row["p_value"]), _nan(e.get("p_value")))
        adj = e.get("p_adjusted")
        np.testing.assert_equal(
            float(row["p_adjusted"]), np.nan if isinstance(adj, list) else _nan(adj)
        )
    assert rep.verdicts["verdict"].sel(test="adaptivity:X").item() == "fails"
    assert t["p_adjusted"].dtype == float and t["reliable"].dtype == bool


def test_verdicts_quote_the_numbers_of_the_analyses(rep):
    t, a = rep.verdicts, rep.analyses
    zms = a["average"].ds.sel(statistic="ZMS")
    assert float(t["estimate"].sel(test="average")) == float(zms["estimate"])
    assert float(t["ci_lower"].sel(test="average")) == float(zms["ci_lower"])
    fv = a["beyond_uE/X/fv_LZMS"].ds
    assert float(t["estimate"].sel(test="adaptivity:X")) == float(fv["estimate"])
    assert float(t["n_bins"].sel(test="consistency")) == a["local/uE/LZMS"].ds.sizes["bin"]
    assert np.isnan(float(t["estimate"].sel(test="coverage")))  # a test without the number


def test_analyses_is_the_tree_of_the_result_datasets(rep):
    a = rep.analyses
    assert isinstance(a, xr.DataTree)
    paths = {n.path for n in a.subtree if n.has_data}
    assert {
        "/tailedness",
        "/average",
        "/coverage",
        "/calibration_curve",
        "/simulated_references/ENCE",
        "/simulated_references/CC",
        "/local/uE/LZMS",
        "/local/X/fv_LZMS",
        "/beyond_uE/X/LZMS",
    } <= paths
    # the numbers of the JSON are those of the tree
    lzms = rep.numbers["local_uE"]["LZMS"]["data"]["estimate"]["values"]
    np.testing.assert_allclose(a["local/uE/LZMS"].ds["estimate"].values, lzms)
    assert a["coverage"].ds.identical(uqviz.interval_coverage(uqviz.synthetic.default_example()))


def test_repr_lists_the_tests_and_the_analyses(rep):
    text = repr(rep)
    assert text.startswith("<uqviz Report 'default_example': fails>")
    for k in rep.numbers["verdicts"]:
        assert f"  {k} " in text
    assert "/local/uE/LZMS" in text


def test_a_report_built_by_hand_makes_its_table_from_its_numbers():
    r = build.Report("x", {"verdicts": {"average": {"verdict": "OK", "p_value": 0.4}}}, [], [])
    assert r.verdicts["verdict"].values.tolist() == ["OK"]
    assert float(r.verdicts["p_value"][0]) == 0.4 and not r.analyses.has_data


def test_report_streams_are_the_children_of_one_spawn_in_order():
    for nf in (0, 1, 3):
        s = build.report_streams(7, nf)
        ref = [g.integers(2**31) for g in np.random.default_rng(7).spawn(8 + 2 * nf)]
        got = [
            s.average,
            *s.local,
            s.references,
            s.adjustment,
            *s.beyond,
            s.pit,
            s.distribution,
            s.spare,
            s.remedy,
        ]
        assert [g.integers(2**31) for g in got] == ref
        assert len(s.local) == nf + 1 and len(s.beyond) == nf


def test_verdict_table_columns():
    t = vd.verdict_table(
        {
            "a": {
                "verdict": "OK",
                "p_value": 0.2,
                "p_adjusted": 0.4,
                "n_bins": 5,
                "valid": True,
                "levels": [0.5, 0.9],
                "statistic": "ZMS",
                "heavy_tail": True,
            },
            "b": {
                "verdict": "fails",
                "p_value": None,
                "p_adjusted": [0.01, 0.2],
                "references": {"normal": 1.0},
                "estimate": 2.5,
            },
        }
    )
    assert t["p_adjusted"].values[0] == 0.4 and np.isnan(t["p_adjusted"].values[1])
    assert np.isnan(t["p_value"].values[1])
    assert t["n_bins"].values[0] == 5.0 and np.isnan(t["n_bins"].values[1])
    assert t["statistic"].values.tolist() == ["ZMS", ""]
    assert t["heavy_tail"].values.tolist() == [True, False]
    assert t["reliable"].values.tolist() == [True, True]
    assert t["reason"].values.tolist() == ["", ""]
    for gone in ("levels", "references", "valid"):  # lists, dicts, other booleans: the JSON
        assert gone not in t


def test_decide_tests_is_decide_family_on_the_table():
    rng = np.random.default_rng(0)
    for _ in range(30):
        entries = {}
        for i in range(rng.integers(1, 7)):
            word = rng.choice(["OK", "fails", "unreliable", "not tested"])
            entries[f"t{i}"] = {
                "verdict": str(word),
                "p_value": None if rng.random() < 0.2 else float(rng.random() ** 3),
                "reliable": bool(rng.random() < 0.7),
                "heavy_tail": bool(rng.random() < 0.3),
                "gated": bool(rng.random() < 0.8),
            }
        table = vd.verdict_table(entries)
        keys = [k for k in entries if rng.random() < 0.7] or list(entries)
        sub = {k: dict(entries[k]) for k in keys}
        vd.decide_family(sub)
        got = vd.decide_tests(table, keys)
        assert got["verdict"].values.tolist() == [sub[k]["verdict"] for k in keys]
        np.testing.assert_equal(
            got["p_adjusted"].values, [sub[k].get("p_adjusted", np.nan) for k in keys]
        )
        assert table["verdict"].values.tolist() == [e["verdict"] for e in entries.values()]


def test_the_gate_reads_its_exit_status_from_the_table():
    out = gate(
        uqviz.synthetic.default_example(), fail_on=("any",), features=["X"], n_boot=200, rng=0
    )
    table = out["table"]
    assert list(table["test"].values) == list(out["verdicts"])
    assert out["failed"] == ["adaptivity:X"] and out["exit_status"] == 1
    assert (
        table["verdict"].sel(test="adaptivity:X").item(),
        bool(table["gated"].sel(test="adaptivity:X")),
    ) == ("fails", True)
    t = vd.verdict_table(
        {"a": {"verdict": "not tested", "gated": True}, "b": {"verdict": "OK", "gated": True}}
    )
    assert _decision(t) == ([], ["a"], 3)
    t = vd.verdict_table(
        {"a": {"verdict": "fails", "gated": True}, "b": {"verdict": "unreliable", "gated": True}}
    )
    assert _decision(t) == (["a"], ["b"], 1)
    assert _decision(vd.verdict_table({"a": {"verdict": "fails", "gated": False}})) == ([], [], 0)


def _own_imports(path):
    """``(module-level, inside-function)`` imports of uqviz modules in one file."""
    tree = ast.parse(path.read_text())
    top, inner = set(), []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names = (
                [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else [a.name for a in node.names]
            )
            for n in names:
                if n.startswith("uqviz"):
                    (top.add(n) if node in tree.body else inner.append(n))
    return top, inner


def test_no_import_circle_and_no_inner_imports_but_plotting():
    files = (
        sorted((PKG / "reporting").glob("*.py"))
        + sorted((PKG / "experiments").glob("*.py"))
        + [PKG / "cli.py"]
    )
    for f in files:
        top, inner = _own_imports(f)
        assert all(n.startswith("uqviz.plots") for n in inner), (f.name, inner)
    assert "uqviz.reporting.build" not in _own_imports(PKG / "reporting/comparison.py")[0]
    assert "uqviz.reporting.serialise" in _own_imports(PKG / "reporting/comparison.py")[0]
