"""The `uqviz validate` console command."""

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from uqviz.cli import main


def test_default_example_prints_table_and_screen(capsys):
    assert main(["validate", "--n-boot", "2000"]) == 0
    out = capsys.readouterr().out
    assert "default_example" in out and "M = 5000" in out
    for word in ["ZMS", "RCE", "zeta", "beta_GM", "uE^2", "E^2", "Z^2"]:
        assert word in out
    assert "calibrated" in out


def test_csv_with_reference_and_prediction_and_variances(tmp_path, capsys):
    rng = np.random.default_rng(0)
    u = rng.uniform(0.5, 1.5, 400)
    y = rng.normal(size=400)
    df = pd.DataFrame({"y": y, "yhat": y - u * rng.standard_normal(400), "var": u**2})
    path = tmp_path / "preds.csv"
    df.to_csv(path, index=False)
    assert main(["validate", str(path), "--reference", "y", "--prediction", "yhat",
                 "--variances", "var", "--n-boot", "1000", "--seed", "3"]) == 0
    out = capsys.readouterr().out
    assert "'preds'" in out and "M = 400" in out
    zms = float(next(line for line in out.splitlines() if line.startswith("ZMS")).split()[1])
    e = df.y - df.yhat
    assert zms == pytest.approx(np.mean(e**2 / df["var"]), rel=1e-3)


def test_heavy_tails_give_plain_language_warnings(tmp_path, capsys):
    rng = np.random.default_rng(1)
    u = np.sqrt(1.0 / rng.gamma(0.6, 1 / 0.6, 3000))
    pd.DataFrame({"E": u * rng.standard_t(2.5, 3000), "uE": u}).to_csv(tmp_path / "h.csv",
                                                                      index=False)
    assert main(["validate", str(tmp_path / "h.csv"), "--n-boot", "500"]) == 0
    out = capsys.readouterr().out
    assert "WARNING: beta_GM(uE^2)" in out and "prefer ZMS" in out


def test_bad_rows_give_a_clear_error_and_drop_invalid_counts_them(tmp_path, capsys):
    pd.DataFrame({"E": [0.1, np.nan, 0.3, -0.2] * 50,
                  "uE": [1.0, 1.0, -1.0, 0.5] * 50}).to_csv(tmp_path / "bad.csv", index=False)
    assert main(["validate", str(tmp_path / "bad.csv"), "--n-boot", "200"]) == 2
    err = capsys.readouterr().err
    assert "uqviz: error:" in err and "50 rows" in err
    with pytest.warns(UserWarning, match="100"):
        assert main(["validate", str(tmp_path / "bad.csv"), "--n-boot", "200",
                     "--drop-invalid"]) == 0
    assert "M = 100" in capsys.readouterr().out


def test_console_script_runs_as_module():
    proc = subprocess.run([sys.executable, "-m", "uqviz.cli", "validate", "--n-boot", "300"],
                          capture_output=True, text=True, check=True)
    assert "Average calibration" in proc.stdout
