"""`uqviz report` and `uqviz average` on a chemprop-style multi-task CSV (issue 39, item 1).

tests/data/multitask.csv (written by tests/data/make_multitask_csv.py, fixed seed): 300
molecules, 3 targets with 10-30 % empty cells, a scaffold column.
"""

import json
import pathlib

import pandas as pd
import pytest

import uqviz
from uqviz.cli import column_list, main

CSV = pathlib.Path(__file__).parents[1] / "data" / "multitask.csv"
COLUMNS = [
    "--reference",
    "logS,logP,logD",
    "--prediction",
    "logS_pred,logP_pred,logD_pred",
    "--uncertainties",
    "logS_unc,logP_unc,logD_unc",
    "--groups",
    "scaffold",
]


def test_the_committed_csv_is_the_scripts_output():
    from tests.data.make_multitask_csv import make

    committed = pd.read_csv(CSV)
    pd.testing.assert_frame_equal(
        committed, pd.read_csv(pd.io.common.StringIO(make().to_csv(index=False)))
    )
    masked = committed[["logS", "logP", "logD"]].isna().mean()
    assert ((masked > 0.05) & (masked < 0.35)).all() and len(committed) == 300


def test_report_of_a_multitask_csv_with_masked_cells(tmp_path, capsys):
    out = tmp_path / "rep"
    assert (
        main(["report", str(CSV), *COLUMNS, "--n-boot", "100", "--n-mc", "50", "--out", str(out)])
        == 0
    )
    text = capsys.readouterr().out
    tree = uqviz.read_csv(
        CSV,
        reference=["logS", "logP", "logD"],
        prediction=["logS_pred", "logP_pred", "logD_pred"],
        uncertainties=["logS_unc", "logP_unc", "logD_unc"],
        groups="scaffold",
    )
    assert tree.attrs["missing"] in text
    for t in ("logS", "logP", "logD"):
        assert f"== {t} ==" in text
    doc = json.loads((out / "multitask_report.json").read_text())
    assert list(doc["datasets"]) == ["logS", "logP", "logD"]
    assert (out / "multitask_report.html").stat().st_size > 1000
    n = [300 - k for k in tree.attrs["n_missing"]]
    assert [tree[t].sizes["point"] for t in ("logS", "logP", "logD")] == n
    assert tree["logD"]["group"].dtype.kind == "i"


def test_average_counts_the_points_of_every_target(capsys):
    assert main(["average", str(CSV), *COLUMNS, "--n-boot", "100"]) == 0
    tree = uqviz.read_csv(
        CSV,
        reference=["logS", "logP", "logD"],
        prediction=["logS_pred", "logP_pred", "logD_pred"],
        uncertainties=["logS_unc", "logP_unc", "logD_unc"],
    )
    out = capsys.readouterr().out
    for t in tree.children:  # one section per target, its own points and missing count
        n, missing = tree[t].sizes["point"], 300 - tree[t].sizes["point"]
        assert f"target {t!r}: M = {n} points ({missing} missing)" in out


def test_column_lists_and_their_errors(capsys):
    assert column_list("a, b") == ["a", "b"]
    with pytest.raises(ValueError, match="empty column name"):
        column_list("a,,b")
    assert (
        main(
            [
                "report",
                str(CSV),
                "--reference",
                "logS,logP",
                "--prediction",
                "logS_pred",
                "--uncertainties",
                "logS_unc,logP_unc",
            ]
        )
        == 2
    )
    assert "one column per target" in capsys.readouterr().err
