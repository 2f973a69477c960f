"""The ``uqviz`` command with bad files: exit status 2 and one clear line on stderr.

Missing file, a directory given as the CSV, a wrong column name, an ``--out`` that
cannot be a folder (a regular file, or below one), a ragged CSV (a row with more fields
than the header), an empty or binary file: ``main`` returns 2 and stderr says what is
wrong, naming the file, the column or the line; never a traceback, never a shifted or
partial result. A BOM CSV is read correctly; a semicolon CSV is read correctly or
refused with a message naming the columns or the separator.
"""

import re

import numpy as np
import pandas as pd
import pytest

from uqviz.cli import main


def _run(argv, capsys):
    """``(status, stdout, stderr)``; an exception out of ``main`` is a traceback: fail."""
    try:
        status = main(argv)
    except SystemExit as exc:  # argparse usage errors exit with 2 by themselves
        status = exc.code
    except Exception as exc:  # noqa: BLE001
        pytest.fail(
            f"uqviz {' '.join(argv)} raised {type(exc).__name__}: {exc} "
            "(the user sees a traceback)",
            pytrace=False,
        )
    out, err = capsys.readouterr()
    assert "Traceback" not in err + out
    return status, out, err


def _refused(argv, capsys, *words):
    status, out, err = _run(argv, capsys)
    assert status == 2, f"exit status {status} (expected 2); stdout {out[-300:]!r}"
    errors = [ln for ln in err.splitlines() if "error:" in ln]
    assert len(errors) == 1 and "uqviz: error:" in errors[0], f"not one clear message: {err!r}"
    for w in words:
        assert w.lower() in err.lower(), f"stderr does not name {w!r}: {err!r}"
    return err


def _frame(n=300, seed=0):
    rng = np.random.default_rng(seed)
    u = rng.uniform(0.5, 1.5, n)
    return pd.DataFrame({"E": u * rng.standard_normal(n), "uE": u})


def _zms(out):
    line = next(ln for ln in out.splitlines() if ln.startswith("ZMS"))
    return float(line.split()[1])


def test_missing_file(tmp_path, capsys):
    path = tmp_path / "nope.csv"
    _refused(["average", str(path), "--n-boot", "100"], capsys, "nope.csv")


def test_directory_as_csv(tmp_path, capsys):
    _refused(["average", str(tmp_path), "--n-boot", "100"], capsys, str(tmp_path.name))


def test_wrong_column_name(tmp_path, capsys):
    path = tmp_path / "d.csv"
    _frame().to_csv(path, index=False)
    _refused(["average", str(path), "--errors", "err", "--n-boot", "100"], capsys, "err")
    _refused(["average", str(path), "--uncertainties", "sigma", "--n-boot", "100"], capsys, "sigma")


def test_ragged_csv_is_an_error_naming_the_line(tmp_path, capsys):
    df = _frame()
    lines = ["E,uE"] + [f"{e!r},{u!r}" for e, u in zip(df.E, df.uE)]
    lines[3] += ",7.5"  # line 4 of the file has 3 fields, the header 2
    path = tmp_path / "ragged.csv"
    path.write_text("\n".join(lines) + "\n")
    err = _refused(["average", str(path), "--n-boot", "100"], capsys, "line")
    assert re.search(r"\b4\b", err), f"stderr does not name line 4: {err!r}"


def test_every_row_ragged_is_not_read_with_shifted_columns(tmp_path, capsys):
    # pandas takes the first column as the index when every row has one field more
    df = _frame()
    lines = ["E,uE"] + [f"{i},{e!r},{u!r}" for i, (e, u) in enumerate(zip(df.E, df.uE))]
    path = tmp_path / "shifted.csv"
    path.write_text("\n".join(lines) + "\n")
    _refused(["average", str(path), "--n-boot", "100"], capsys, "line")


def test_empty_and_header_only_and_binary_files(tmp_path, capsys):
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    _refused(["average", str(empty), "--n-boot", "100"], capsys, "empty.csv")
    header = tmp_path / "header.csv"
    header.write_text("E,uE\n")
    _refused(["average", str(header), "--n-boot", "100"], capsys)
    binary = tmp_path / "binary.csv"
    binary.write_bytes(bytes(range(256)) * 4)
    _refused(["average", str(binary), "--n-boot", "100"], capsys, "binary.csv")


def test_bom_csv_is_read_correctly(tmp_path, capsys):
    df = _frame()
    path = tmp_path / "bom.csv"
    path.write_text("\ufeff" + df.to_csv(index=False), encoding="utf-8")
    status, out, err = _run(["average", str(path), "--n-boot", "200"], capsys)
    assert status == 0, err
    assert "M = 300" in out
    assert _zms(out) == pytest.approx(np.mean(df.E**2 / df.uE**2), rel=1e-3)


def test_semicolon_csv_is_read_or_refused_clearly(tmp_path, capsys):
    df = _frame()
    path = tmp_path / "semi.csv"
    path.write_text(df.to_csv(index=False, sep=";"))
    status, out, err = _run(["average", str(path), "--n-boot", "200"], capsys)
    if status == 0:
        assert "M = 300" in out
        assert _zms(out) == pytest.approx(np.mean(df.E**2 / df.uE**2), rel=1e-3)
    else:
        assert status == 2 and "error:" in err, (status, err)
        assert re.search(r"separator|delimiter|sep\b|;|column", err, flags=re.I), err


def test_out_is_a_regular_file(tmp_path, capsys):
    csv = tmp_path / "d.csv"
    _frame().to_csv(csv, index=False)
    target = tmp_path / "taken"
    target.write_text("not a folder")
    _refused(
        ["report", str(csv), "--out", str(target), "--n-boot", "200", "--n-mc", "50"],
        capsys,
        "taken",
    )
    assert target.read_text() == "not a folder"


def test_out_below_a_regular_file(tmp_path, capsys):
    csv = tmp_path / "d.csv"
    _frame().to_csv(csv, index=False)
    blocker = tmp_path / "file"
    blocker.write_text("x")
    _refused(
        ["report", str(csv), "--out", str(blocker / "sub"), "--n-boot", "200", "--n-mc", "50"],
        capsys,
        "file",
    )
    assert blocker.read_text() == "x"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d.csv", "file"]
