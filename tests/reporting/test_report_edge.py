"""The edge of the report reads the verdict table (issue 38): the sentences, the HTML table of
the tests and the JSON's ``verdict_table`` are written from ``Report.verdicts``, with the same
words and HTML as before for the same inputs (pinned in ``data/edge_golden.json``)."""

import json
import os

import numpy as np
import pytest
import xarray as xr

from tests.reporting import edge_cases
from uqviz.reporting import render, wording
from uqviz.reporting.serialise import dataset_from_json, dataset_to_json
from uqviz.reporting.verdicts import verdict_table

GOLDEN = os.path.join(os.path.dirname(__file__), "data", "edge_golden.json")


@pytest.fixture(scope="module")
def reports():
    return edge_cases.cases()


@pytest.fixture(scope="module")
def golden():
    with open(GOLDEN) as f:
        return json.load(f)


@pytest.mark.parametrize("case", ["default", "calibrated", "heavy", "pit_fails"])
def test_words_html_and_json_are_those_pinned(reports, golden, case):
    got, want = edge_cases.pinned(reports[case]), golden[case]
    assert got["conclusion"] == want["conclusion"]
    assert got["headline"] == want["headline"] and got["verdict"] == want["verdict"]
    assert got["verdict_section"] == want["verdict_section"]
    assert got["html_sha256"] == want["html_sha256"]
    assert got["json_sha256"] == want["json_sha256"]  # every key as before, verdict_table aside


def test_the_pinned_cases_cover_every_kind_of_sentence(golden):
    words = {k: " ".join(v["conclusion"]) for k, v in golden.items()}
    assert golden["default"]["verdict"] == "fails" and "Remedy" in words["default"]
    assert "Average calibration: unreliable" in words["heavy"]
    assert "Consistency: unreliable" in words["heavy"]
    assert "PIT of the forecast as given (quantiles): fails" in words["pit_fails"]
    assert "(beyond the uE effect): fails" in words["default"]
    assert golden["calibrated"]["verdict"] == "OK"


def _details(rep):
    return rep.numbers["verdicts"]


def test_the_sentences_read_the_table(reports):
    rep = reports["default"]
    tested = {
        "uE": {"LZMS": rep.analyses["local/uE/LZMS"].ds},
        "X": {"LZMS": rep.analyses["beyond_uE/X/LZMS"].ds},
    }
    local = {"uE": {"LZMS": rep.analyses["local/uE/LZMS"].ds}, "X": tested["X"]}
    curve = rep.analyses["calibration_curve"].ds
    lines, further = wording.conclusion_lines(
        rep.verdicts, _details(rep), tested, local, ["X"], curve
    )
    n_remedy = sum(c.startswith(("Remedy", "Distribution")) for c in rep.conclusion)
    assert lines == rep.conclusion[: len(rep.conclusion) - n_remedy]
    assert further == rep.numbers["further_diagnostics"]["conclusion"]
    table = rep.verdicts.copy(deep=True)
    i = list(table["test"].values).index("average")
    table["estimate"].values[i] = 1.2345
    table["verdict"].values[i] = "unreliable"
    table["reason"].values[i] = "a reason of the table"
    i = list(table["test"].values).index("consistency")
    table["n_bins"].values[i] = 7.0
    table["family_size"].values[i] = 9.0
    changed, _ = wording.conclusion_lines(table, _details(rep), tested, local, ["X"], curve)
    assert changed[0].startswith("Average calibration: unreliable (ZMS = 1.234,")
    assert changed[0].endswith("but a reason of the table).")
    assert "in 7 bins" in changed[1] and "adjusted over the 9 tests" in changed[1]


def test_the_html_table_of_the_tests_reads_the_table(reports):
    rep = reports["default"]
    table = rep.verdicts.copy(deep=True)
    i = list(table["test"].values).index("ENCE")
    table["verdict"].values[i] = "fails"
    table["p_adjusted"].values[i] = 0.0123
    html = render.fragment([(*rep._section()[:5], table)])
    row = html[html.index("<tr data-test='ENCE'>") :]
    row = row[: row.index("</tr>")]
    assert "<span class='v-fails'>fails</span>" in row and "0.012 <small>" in row
    assert "simulated references" in row  # the references per D: from numbers
    assert html != rep._repr_html_()
    assert render.fragment([rep._section()[:5]]) == rep._repr_html_()  # default: the same table


def test_entry_of_gives_counts_as_int_and_leaves_out_missing_numbers(reports):
    rep = reports["heavy"]
    e = wording.entry_of(rep.verdicts, "consistency", _details(rep)["consistency"])
    want = _details(rep)["consistency"]
    for k in ("n_bins", "n_unreliable", "family_size", "n_valid"):
        assert e[k] == want[k] and type(e[k]) is int
    assert e["heavy_tail"] is True and e["reliable"] is False
    assert e["adjusted"] is want["adjusted"] and e["valid"] is want["valid"]
    e = wording.entry_of(rep.verdicts, "coverage", _details(rep)["coverage"])
    assert "n_bins" not in e and e["levels"] == [0.5, 0.68, 0.9, 0.95, 0.99]
    t = verdict_table({"a": {"verdict": "OK", "n_bins": 3.5}})
    assert wording.entry_of(t, "a")["n_bins"] == 3.5  # not a count: kept as it is


def test_the_json_holds_the_table(reports):
    for rep in reports.values():
        doc = json.loads(rep.to_json())
        assert doc["verdict_table"] == json.loads(json.dumps(dataset_to_json(rep.verdicts)))
        back = dataset_from_json(doc["verdict_table"])
        xr.testing.assert_identical(back, rep.verdicts)
        assert list(doc["verdict_table"]["coords"]["test"]) == list(doc["verdicts"])
        assert doc["verdict_table"]["data"]["verdict"]["values"] == [
            e["verdict"] for e in doc["verdicts"].values()
        ]


def test_dataset_from_json_refuses_what_it_cannot_read():
    with pytest.raises(ValueError, match="lacks data"):
        dataset_from_json({"dims": {}, "coords": {}})
    ds = xr.Dataset({"x": ("bin", [1.0, 2.0])}, coords={"lo": ("bin", [0.0, 1.0])})
    with pytest.raises(ValueError, match="'lo' is not a dimension"):
        dataset_from_json(dataset_to_json(ds))
    ds = xr.Dataset(
        {"n": ("bin", [1.0, np.nan]), "ok": ("bin", [True, False])},
        coords={"bin": [0, 1], "level": 0.9},
    )
    xr.testing.assert_identical(dataset_from_json(dataset_to_json(ds)), ds)
