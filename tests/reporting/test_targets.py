"""The report and the gate of a targets tree (issue 39, items 2 and 3).

A targets tree (docs/design of issue 39): a DataTree with attrs ``layout = "targets"``,
``targets = [names]``, one child per target (the rows where that target is observed, coordinate
``point`` = the original row, attr ``n_missing``) and an optional pooled child (the targets'
points stacked). The trees here are built by hand (``xr.DataTree.from_dict``), as
``uqviz.pool_targets`` would build them.

Checked: one Holm family over every target's tests and the pooled child's (the adjusted p-values
equal statsmodels' ``multipletests(method="holm")`` over the raw p-values of the family); the raw
p-values are those of the same tree reported as plain datasets (the same streams); the
per-target table (text, HTML, JSON, Dataset) reads the children's reports; the gate decides on
the family; the family's false alarm on calibrated targets is at most the per-target families'
(set by set: fewer rejections), which are at most the unadjusted tests'; the line of a report
whose bootstraps resampled whole groups.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import xarray as xr
from statsmodels.stats.multitest import multipletests

import uqviz
from uqviz.reporting import build, gate as gate_mod, text, wording
from uqviz.reporting import verdicts as vd
from uqviz.reporting.serialise import dataset_from_json

TARGETS = ("fx", "fy", "fz")
pytestmark = pytest.mark.filterwarnings("ignore::uqviz.UnreliableWarning")

CHEAP = dict(n_boot=200, n_mc=50, figures=False, remedy=False)


def targets_tree(n=400, *, rng=0, scales=(1.0, 1.0, 1.0), missing=(0, 40, 7), pooled=True):
    """A hand-built targets tree: calibrated targets (z-scores N(0, 1) times ``scales``), the
    first ``missing[k]`` rows of target k unobserved, and a pooled child."""
    gen = np.random.default_rng(rng)
    children, parts = {}, []
    for name, scale, miss in zip(TARGETS, scales, missing):
        uE = np.exp(gen.normal(0.0, 0.3, n))
        E = scale * uE * gen.normal(size=n)
        rows = np.arange(miss, n)
        ds = xr.Dataset(
            {"E": ("point", E[rows]), "uE": ("point", uE[rows])},
            coords={"point": rows},
            attrs={"name": name, "units": "", "target": name, "n_missing": int(miss)},
        )
        children[name] = ds
        parts.append(ds.assign_coords(target=("point", [name] * rows.size)))
    tree = {f"/{k}": v for k, v in children.items()}
    if pooled:
        stacked = xr.concat(parts, dim="point")
        stacked = stacked.assign_coords(row=("point", stacked["point"].values)).assign_coords(
            point=np.arange(stacked.sizes["point"])
        )
        stacked.attrs = {"name": "pooled", "units": "", "target": "pooled", "n_missing": 0}
        tree["/pooled"] = stacked
    out = xr.DataTree.from_dict(tree)
    out.attrs["layout"] = "targets"
    out.attrs["targets"] = list(TARGETS)
    return out


def plain(tree):
    """The same children as a tree of datasets (no targets layout)."""
    out = tree.copy()
    out.attrs = {}
    return out


@pytest.fixture(scope="module")
def tree():
    return targets_tree()


@pytest.fixture(scope="module")
def col(tree):
    return uqviz.report(tree, rng=3, **CHEAP)


@pytest.fixture(scope="module")
def col_plain(tree):
    return uqviz.report(plain(tree), rng=3, **CHEAP)


def _family_rows(verdicts):
    """``(target, test)`` of the gated rows with a p-value, in the family's order."""
    out = []
    for t in verdicts["target"].values:
        row = verdicts.sel(target=t)
        for k in row["test"].values:
            r = row.sel(test=k)
            if (
                bool(r["gated"])
                and str(r["verdict"].values) not in ("not tested", "")
                and np.isfinite(float(r["p_value"]))
            ):
                out.append((str(t), str(k)))
    return out


def test_one_holm_family_over_every_target_and_the_pooled_child(col):
    v = col.verdicts
    assert v["verdict"].dims == ("target", "test")
    assert v["target"].values.tolist() == [*TARGETS, "pooled"]
    rows = _family_rows(v)
    assert {t for t, _ in rows} == {*TARGETS, "pooled"} and len(rows) == col.family["size"]
    assert col.family["tests"] == [f"{t}/{k}" for t, k in rows]
    p = np.array([float(v["p_value"].sel(target=t, test=k)) for t, k in rows])
    reject, want, _, _ = multipletests(p, alpha=0.05, method="holm")
    got = np.array([float(v["p_adjusted"].sel(target=t, test=k)) for t, k in rows])
    np.testing.assert_allclose(got, want, rtol=1e-12)
    sizes = [float(v["family_size"].sel(target=t, test=k)) for t, k in rows]
    assert sizes == [len(rows)] * len(rows)
    words = [str(v["verdict"].sel(target=t, test=k).values) for t, k in rows]
    assert [w == "fails" for w in words] == reject.tolist()  # calibrated, reliable: OK or fails
    # the family is larger than one target's: each adjusted p at least the per-target one
    for t in TARGETS:
        own = [i for i, (tt, _) in enumerate(rows) if tt == t]
        _, per, _, _ = multipletests(p[own], method="holm")
        assert np.all(got[own] >= per - 1e-15)


def test_raw_p_values_are_those_of_the_tree_as_plain_datasets(col, col_plain):
    a, b = col.verdicts, col_plain.verdicts
    assert "dataset" in b.dims and "target" not in b.dims  # the plain tree: as before
    np.testing.assert_array_equal(a["p_value"].values, b["p_value"].values)
    np.testing.assert_array_equal(a["estimate"].values, b["estimate"].values)
    # the plain tree decides each dataset's family on its own: its adjusted p are smaller
    fam = np.isfinite(a["p_adjusted"].values) & np.isfinite(b["p_adjusted"].values)
    assert np.all(a["p_adjusted"].values[fam] >= b["p_adjusted"].values[fam] - 1e-15)
    assert b["family_size"].max() < a["family_size"].max()
    assert "targets" not in json.loads(col_plain.to_json())
    assert "layout" not in json.loads(col_plain.to_json())
    assert "id='targets'" not in col_plain.to_html()
    with pytest.raises(ValueError, match="targets tree"):
        col_plain.table


def test_the_per_target_table(col, tree):
    t = col.table
    assert t["target"].values.tolist() == [*TARGETS, "pooled"]
    assert t["n_points"].values.tolist() == [400, 360, 393, 1153]
    assert t["n_missing"].values.tolist() == [0, 40, 7, 0]
    assert t["n_groups"].values.tolist() == [-1] * 4
    assert t["resampling"].values.tolist() == ["points"] * 4
    v = col.verdicts
    for name in t["target"].values:
        rep = col[str(name)]
        assert float(t["ZMS"].sel(target=name)) == float(
            rep.analyses["average"].ds["estimate"].sel(statistic="ZMS")
        )
        assert float(t["ZMS_lower"].sel(target=name)) == float(
            v["ci_lower"].sel(target=name, test="average")
        )
        for col_name, test in (("average", "average"), ("consistency", "consistency")):
            assert str(t[col_name].sel(target=name).values) == str(
                v["verdict"].sel(target=name, test=test).values
            )
            assert float(t[f"{col_name}_p_adjusted"].sel(target=name)) == float(
                v["p_adjusted"].sel(target=name, test=test)
            )
        assert str(t["coverage"].sel(target=name).values) == str(
            v["verdict"].sel(target=name, test="coverage").values
        )
        assert str(t["verdict"].sel(target=name).values) == rep.verdict
    assert int(t.attrs["size"]) == col.family["size"] and t.attrs["method"] == "Holm (1979)"
    # the per-target columns beside the (target, test) verdicts
    assert v["target_n_missing"].values.tolist() == [0, 40, 7, 0]
    assert col.family["targets"] == list(TARGETS) and col.family["pooled"] == ["pooled"]


def test_the_table_in_text_html_and_json(col):
    lines = col.summary().splitlines()
    assert lines[0].split()[:3] == ["target", "n", "points"]
    assert [ln.split()[0] for ln in lines[2:6]] == [*TARGETS, "pooled"]
    assert lines[3].split()[1:5] == ["360", "40", "-", "points"]
    assert lines[-1].startswith(f"One Holm (1979) family of {col.family['size']} tests over the")
    assert "and their pooled points (pooled)" in lines[-1]
    html = col.to_html()
    assert "<h2 id='targets'>Targets</h2>" in html
    assert html.index("id='targets'") < html.index("id='ds-fx'")
    for name in (*TARGETS, "pooled"):
        assert f"<tr data-target='{name}'><td>{name}</td>" in html
    padj = float(col.table["average_p_adjusted"].sel(target="fy"))
    assert text._padj(padj) in html.split("data-target='fy'")[1].split("</tr>")[0]
    doc = json.loads(col.to_json())
    assert doc["layout"] == "targets" and list(doc["datasets"]) == [*TARGETS, "pooled"]
    assert doc["targets"]["family"]["size"] == col.family["size"]
    back = dataset_from_json(doc["targets"]["table"])
    xr.testing.assert_equal(back.reset_coords(drop=True), col.table.reset_coords(drop=True))
    assert doc["datasets"]["fy"]["family"]["scope"] == "targets"
    assert doc["datasets"]["fy"]["data"]["n_missing"] == 40


def test_the_words_quote_the_family_size(col):
    size = col.family["size"]
    assert f"adjusted over the {size} tests of the report" in col["fx"].conclusion[0]
    assert f"Holm over the {size} tests of the family at 0.05" in col["fx"].headline


def test_compare_true_on_a_targets_tree_says_why(tree):
    with pytest.raises(ValueError, match="targets tree"):
        uqviz.report(tree, compare=True, **CHEAP)


def test_a_miscalibrated_target_fails_and_is_named(tmp_path):
    # >= 1000 points: the bootstrap's p-value decides (below, the Student-t null's, floored
    # at 0.0037: more than 13 tests in the family and the average calibration cannot fail)
    tree = targets_tree(n=1100, scales=(1.0, 1.6, 1.0), rng=1, missing=(0, 60, 7))
    col = uqviz.report(tree, rng=0, **CHEAP)
    t = col.table
    assert str(t["average"].sel(target="fy").values) == "fails"
    assert float(t["average_p_adjusted"].sel(target="fy")) <= 0.05
    assert str(t["verdict"].sel(target="fy").values) == "fails"
    paths = col.save(tmp_path)
    assert json.loads(open(paths["json"]).read())["targets"]["table"]
    assert "fails" in open(paths["html"]).read().split("id='targets'")[1].split("</table>")[0]


# ---------------------------------------------------------------------------------------
# the gate
# ---------------------------------------------------------------------------------------


def test_the_gate_decides_on_the_family(tree):
    out = gate_mod.gate(tree, fail_on=("any",), n_boot=200, rng=5)
    table = out["table"]
    keys = [str(k) for k in table["test"].values]
    assert keys[:3] == ["fx/average:ZMS", "fx/average:RCE", "fx/consistency"]
    assert len(keys) == 12 and out["family"]["size"] == 12
    p = table["p_value"].values
    _, want, _, _ = multipletests(p, method="holm")
    np.testing.assert_allclose(table["p_adjusted"].values, want, rtol=1e-12)
    # each child's raw p-values: those of gate(child, rng=<its child stream>)
    streams = np.random.default_rng(5).spawn(4)
    for (name, child), s in zip(tree.children.items(), streams):
        one = gate_mod.gate(child.to_dataset(), fail_on=("any",), n_boot=200, rng=s)
        for k, e in one["verdicts"].items():
            assert out["verdicts"][f"{name}/{k}"]["p_value"] == e["p_value"]
            assert out["verdicts"][f"{name}/{k}"]["p_adjusted"] >= e["p_adjusted"]
    assert out["exit_status"] in (0, 3) and out["failed"] == []


def test_the_gate_fails_on_a_miscalibrated_target():
    out = gate_mod.gate(targets_tree(scales=(1.0, 1.0, 1.6), rng=1), n_boot=200, rng=0)
    assert out["exit_status"] == gate_mod.EXIT_FAILS
    assert "fz/average:ZMS" in out["failed"]
    assert not any(k.startswith(("fx/", "fy/")) for k in out["failed"])


def _rejections(table, alpha=0.05):
    """The failing rows of a gate's table: decided in the family of all targets, in each
    target's own family, and unadjusted."""
    joint = {str(k) for k, w in zip(table["test"].values, table["verdict"].values) if w == "fails"}
    per = set()
    for t in dict.fromkeys(str(k).split("/")[0] for k in table["test"].values):
        rows = [str(k) for k in table["test"].values if str(k).startswith(t + "/")]
        d = vd.decide_tests(table, rows, alpha)
        per |= {k for k, w in zip(rows, d["verdict"].values) if w == "fails"}
    raw = {
        str(k)
        for k, p, g in zip(table["test"].values, table["p_value"].values, table["gated"].values)
        if g and p <= alpha
    }
    return joint, per, raw


def test_false_alarm_of_the_family_is_at_most_the_per_target_families():
    """20 calibrated sets (3 targets + pooled, M = 200 each): set by set the family's
    rejections are among the per-target families', themselves among the unadjusted tests';
    the family rarely cries wolf (expected 1 set in 20 at most)."""
    counts = np.zeros(3, dtype=int)
    for s in range(20):
        out = gate_mod.gate(targets_tree(n=200, rng=100 + s), n_boot=100, rng=s)
        joint, per, raw = _rejections(out["table"])
        assert joint <= per <= raw
        assert set(out["failed"]) == joint
        counts += [bool(joint), bool(per), bool(raw)]
    assert counts[0] <= counts[1] <= counts[2]
    assert counts[0] <= 4


# ---------------------------------------------------------------------------------------
# which resampling the report says
# ---------------------------------------------------------------------------------------


def test_resampling_reads_the_results_attrs():
    data = xr.Dataset(coords={"group": ("point", [3, 3, 1, 7])}, attrs={"groups": "structure"})
    pts = xr.Dataset(attrs={"resample": "points"})
    grp = xr.Dataset(attrs={"resample": "groups"})
    assert build.resampling({"average": pts}, data)["resample"] == "points"
    how = build.resampling({"average": pts, "local/uE": {"LZMS": grp}}, data)
    assert how == {
        "resample": "groups",
        "n_groups": 3,  # the result has no n_groups: the data's distinct labels
        "groups": "structure",
        "analyses": ["local/uE/LZMS"],
    }
    line = wording.resampling_line(how)
    assert line.startswith("Bootstrap: whole groups resampled (3 groups of the `structure`")


def _grouped(n=400, rng=0):
    gen = np.random.default_rng(rng)
    uE = np.exp(gen.normal(0.0, 0.3, n))
    ds = uqviz.from_arrays(uE * gen.normal(size=n), uE)
    return ds.assign_coords(group=("point", np.arange(n) // 10)).assign_attrs(groups="structure")


def test_the_report_says_whole_groups_were_resampled(monkeypatch):
    """The analyses of a grouped dataset say ``resample = "groups"`` in their attrs (their
    own tests check that they do); the report writes the line from them."""
    real = build.validate_average

    def grouped_average(data, **kw):
        res = real(data, **kw)
        n = int(np.unique(data["group"].values).size) if "group" in data.coords else None
        return res if n is None else res.assign_attrs(resample="groups", n_groups=n)

    monkeypatch.setattr(build, "validate_average", grouped_average)
    ds = _grouped()
    rep = uqviz.report(ds, rng=0, **CHEAP)
    want = (
        "Bootstrap: whole groups resampled (40 groups of the `structure` coordinate): the "
        "intervals allow for the correlation of the points of a group."
    )
    assert rep.conclusion[-1] == want
    how = rep.numbers["resampling"]
    assert {k: how[k] for k in ("resample", "n_groups", "groups")} == {
        "resample": "groups",
        "n_groups": 40,
        "groups": "structure",
    }
    assert how["analyses"][0] == "average"  # and the local ones, once they resample groups
    assert rep.numbers["data"]["n_groups"] == 40
    assert want in rep.to_html()
    assert json.loads(rep.to_json())["resampling"]["n_groups"] == 40
    # in a targets tree: the table's columns
    tree = xr.DataTree.from_dict({"/energy": ds, "/gap": _grouped(rng=1).isel(point=slice(0, 300))})
    tree.attrs.update(layout="targets", targets=["energy", "gap"])
    t = uqviz.report(tree, rng=0, **CHEAP).table
    assert t["resampling"].values.tolist() == ["groups", "groups"]
    assert t["n_groups"].values.tolist() == [40, 30]


def test_ungrouped_data_get_no_line(col):
    assert not any(c.startswith("Bootstrap:") for c in col["fx"].conclusion)
    assert "resampling" not in col["fx"].numbers and "n_groups" not in col["fx"].numbers["data"]


def test_decide_targets_family_by_hand():
    """Holm by hand: p = 0.01, 0.04 (target a), 0.03 (b), 0.5 (pooled); m = 4."""
    entries = {
        "a": {
            "average": {"p_value": 0.01, "reliable": True, "gated": True, "verdict": "fails"},
            "consistency": {"p_value": 0.04, "reliable": True, "gated": True, "verdict": "fails"},
            "coverage": {"p_value": 0.001, "gated": False, "verdict": "fails"},
        },
        "b": {"average": {"p_value": 0.03, "reliable": True, "gated": True, "verdict": "fails"}},
        "pooled": {"average": {"p_value": 0.5, "reliable": True, "gated": True, "verdict": "OK"}},
    }
    fam = vd.decide_targets_family(entries)
    assert fam["size"] == 4
    # sorted 0.01, 0.03, 0.04, 0.5 -> 0.04, max(0.04, 0.09), max(0.09, 0.08), max(.., 0.5)
    got = [
        entries["a"]["average"]["p_adjusted"],
        entries["b"]["average"]["p_adjusted"],
        entries["a"]["consistency"]["p_adjusted"],
        entries["pooled"]["average"]["p_adjusted"],
    ]
    np.testing.assert_allclose(got, [0.04, 0.09, 0.09, 0.5])
    assert [entries["a"]["average"]["verdict"], entries["b"]["average"]["verdict"]] == [
        "fails",
        "OK",
    ]
    assert entries["a"]["coverage"]["verdict"] == "fails"  # not gated: untouched
    assert "p_adjusted" not in entries["a"]["coverage"]


# ---------------------------------------------------------------------------------------
# the command line on a targets tree (load_data returns one once the CLI reads several
# targets: here it is replaced by a hand-built tree)
# ---------------------------------------------------------------------------------------


def test_cli_average_gates_on_the_family(monkeypatch, capsys, tmp_path):
    from uqviz import cli

    bad = targets_tree(scales=(1.0, 1.0, 1.6), rng=1)
    monkeypatch.setattr(cli, "load_data", lambda args: bad)
    js = tmp_path / "v.json"
    argv = ["average", "--fail-on", "any", "--n-boot", "200", "--seed", "4", "--json", str(js)]
    assert cli.main(argv) == 1
    got = capsys.readouterr().out
    assert "Average calibration of target 'fy': M = 360 points (40 missing)" in got
    assert "Gated verdicts (12 tests of 4 targets, one family" in got
    assert "  fz: Average calibration (ZMS): fails" in got
    assert "FAILED (fz/average:ZMS" in got
    doc = json.loads(js.read_text())
    direct = gate_mod.gate(bad, fail_on=("any",), n_boot=200, rng=4)
    assert doc["exit_status"] == 1 and doc["failed"] == direct["failed"]
    assert doc["family"]["size"] == 12
    assert doc["verdicts"]["fz/average:ZMS"]["p_adjusted"] == pytest.approx(
        direct["verdicts"]["fz/average:ZMS"]["p_adjusted"], abs=0
    )
    # without --fail-on: the same averages (the gate's streams), exit 0
    monkeypatch.setattr(cli, "load_data", lambda args: bad)
    assert cli.main(["average", "--n-boot", "200", "--seed", "4"]) == 0
    plain_out = capsys.readouterr().out
    zms = float(direct["average"]["fz"]["estimate"].sel(statistic="ZMS"))
    assert f"{zms:.4g}" in plain_out and "Gate" not in plain_out


def test_cli_report_prints_the_table(monkeypatch, capsys, tmp_path, tree):
    from uqviz import cli

    monkeypatch.setattr(cli, "load_data", lambda args: tree)
    argv = ["report", "--n-boot", "200", "--n-mc", "50", "--no-remedy", "--out", str(tmp_path)]
    assert cli.main(argv) == 0
    got = capsys.readouterr().out
    assert got.splitlines()[0].split()[:3] == ["target", "n", "points"]
    assert "== fy ==\nHeadline:" in got and "One Holm (1979) family of" in got
    assert json.loads((tmp_path / "targets_report.json").read_text())["layout"] == "targets"
