"""The CI gate: ``uqviz average ... --fail-on {average,consistency,adaptivity,any}``.

Exit status 1 when a named verdict fails, 3 when none fails but one is unreliable or cannot
be tested, 0 otherwise, 2 for bad input; ``--json`` writes the numbers and verdicts. Checked
in-process (``uqviz.cli.main``) and from a real process.
"""

import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from uqviz.cli import main
from uqviz.reporting.verdicts import average_entry

N_BOOT = ["--n-boot", "500"]


def _write(path, e, u, x):
    pd.DataFrame({"E": e, "uE": u, "x": x}).to_csv(path, index=False)
    return str(path)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """Four data sets of 2000 points with one clear defect each (or none)."""
    d = tmp_path_factory.mktemp("gate")
    rng = np.random.default_rng(0)
    n = 2000
    x = rng.uniform(0, 1, n)
    u = rng.uniform(0.5, 2, n)
    z = rng.standard_normal(n)
    s = np.where(x < 0.5, 0.6, 1.3)  # error spread depends on x, not on uE
    return {
        "good": _write(d / "good.csv", u * z, u, x),
        # calibrated on average (ZMS ~ 1) but uE says nothing about the spread
        "inconsistent": _write(d / "inconsistent.csv", z / np.sqrt(np.mean(u**-2)), u, x),
        # uE twice too small everywhere
        "overconfident": _write(d / "overconfident.csv", 2 * u * z, u, x),
        # consistent in uE, fails in x
        "adaptivity": _write(
            d / "adaptivity.csv", s * z, np.sqrt(np.mean(s**2)) * rng.uniform(0.9, 1.1, n), x
        ),
    }


def _run(argv, capsys):
    status = main(argv)
    return status, capsys.readouterr()


@pytest.mark.parametrize(
    "name, gate, expected",
    [
        ("good", "any", 0),
        ("inconsistent", "average", 0),  # ZMS only: RCE compares RMV and RMSE, which differ here
        ("inconsistent", "consistency", 1),
        ("overconfident", "average", 1),
        ("adaptivity", "consistency", 0),
        ("adaptivity", "adaptivity", 1),
        ("adaptivity", "any", 1),
    ],
)
def test_exit_status_follows_the_named_verdict(files, capsys, name, gate, expected):
    status, out = _run(
        [
            "average",
            files[name],
            "--features",
            "x",
            "--fail-on",
            gate,
            "--statistics",
            "ZMS",
            *N_BOOT,
        ],
        capsys,
    )
    assert status == expected, out.out
    assert f"Gate (--fail-on {gate}): " + ("passed" if expected == 0 else "FAILED") in out.out


def test_without_fail_on_the_status_is_0_even_when_a_verdict_fails(files, capsys):
    status, out = _run(["average", files["overconfident"], *N_BOOT], capsys)
    assert status == 0 and "fails" in out.out and "Gate" not in out.out


def test_repeated_fail_on_and_the_json_file(files, capsys, tmp_path):
    path = tmp_path / "v.json"
    status, out = _run(
        [
            "average",
            files["adaptivity"],
            "--features",
            "x",
            "--fail-on",
            "average",
            "--fail-on",
            "adaptivity",
            "--json",
            str(path),
            *N_BOOT,
        ],
        capsys,
    )
    assert status == 1
    doc = json.loads(path.read_text())
    assert doc["exit_status"] == 1 and doc["failed"] == ["adaptivity:x"]
    assert doc["settings"]["fail_on"] == ["average", "adaptivity"]
    assert doc["verdicts"]["average:ZMS"]["verdict"] == "OK"
    assert doc["verdicts"]["adaptivity:x"]["verdict"] == "fails"
    assert doc["verdicts"]["adaptivity:x"]["adjusted"] is True  # beyond the uE effect
    # the two gated tests of the family, Holm-adjusted
    assert doc["verdicts"]["adaptivity:x"]["family_size"] == 3  # ZMS, RCE, x
    assert "consistency" not in doc["verdicts"]
    zms = doc["average"]["data"]["estimate"]["values"][0]
    e, u = pd.read_csv(files["adaptivity"])[["E", "uE"]].to_numpy().T
    assert zms == pytest.approx(np.mean((e / u) ** 2), rel=1e-12)
    fv = doc["adaptivity:x"]["fv_LZMS"]["data"]
    assert fv["valid"]["values"] is False and fv["p_value"]["values"] < 0.05 / 3
    assert str(path) in out.out


def test_json_without_a_gate_holds_the_average_numbers(files, capsys, tmp_path):
    path = tmp_path / "a.json"
    assert main(["average", files["good"], "--json", str(path), *N_BOOT]) == 0
    doc = json.loads(path.read_text())
    assert doc["exit_status"] == 0 and doc["verdicts"] == {}
    assert {"average", "tailedness"} <= set(doc)


def test_same_seed_same_verdict(files, capsys, tmp_path):
    docs = []
    for i in range(2):
        path = tmp_path / f"{i}.json"
        main(["average", files["good"], "--fail-on", "consistency", "--json", str(path), *N_BOOT])
        docs.append(json.loads(path.read_text()))
    assert docs[0]["consistency"] == docs[1]["consistency"]


def _refused(argv, capsys, *words):
    status, out = _run(argv, capsys)
    assert status == 2, out.out
    assert out.err.startswith("uqviz: error:") and "Traceback" not in out.err
    for w in words:
        assert w in out.err, out.err


def test_bad_input_exits_2(files, capsys, tmp_path):
    _refused(
        ["average", files["good"], "--fail-on", "adaptivity"],
        capsys,
        "--fail-on adaptivity needs --features",
    )
    _refused(
        ["average", files["good"], "--fail-on", "any", "--json", str(tmp_path / "nope" / "v.json")],
        capsys,
        "no such folder",
    )
    _refused(
        ["average", files["good"], "--fail-on", "any", "--json", str(tmp_path)],
        capsys,
        "is a directory",
    )
    bad = tmp_path / "bad.csv"
    pd.DataFrame({"E": [0.1, np.nan, 0.2], "uE": [1.0, 1.0, 0.0]}).to_csv(bad, index=False)
    _refused(["average", str(bad), "--fail-on", "any"], capsys, "1 row with NaN")
    _refused(["average", files["good"], "--features", "mass", "--fail-on", "any"], capsys, "'mass'")
    with pytest.raises(SystemExit) as exc:
        main(["average", files["good"], "--fail-on", "everything"])
    assert exc.value.code == 2
    assert "invalid choice" in capsys.readouterr().err


def test_a_verdict_that_cannot_be_reached_does_not_pass(tmp_path, capsys):
    rng = np.random.default_rng(2)
    path = _write(
        tmp_path / "const.csv", rng.standard_normal(500), np.ones(500), rng.uniform(size=500)
    )
    status, out = _run(["average", path, "--fail-on", "consistency", *N_BOOT], capsys)
    assert status == 3 and "Consistency: not tested (uE is constant" in out.out
    assert "UNRELIABLE (consistency" in out.out


def test_average_verdict_rules():
    def result(valid, ref, lo, hi, beta_z2):
        return xr.Dataset(
            {
                "valid": ("statistic", valid),
                "reference": ("statistic", ref),
                "ci_lower": ("statistic", lo),
                "ci_upper": ("statistic", hi),
                "estimate": ("statistic", [1.0, 0.0, 0.2]),
                "beta_gm": ("variable", [0.3, 0.5, beta_z2]),
            },
            coords={"statistic": ["ZMS", "RCE", "CC"], "variable": ["uE2", "E2", "Z2"]},
        )

    ok = result([True, True, False], [1.0, 0.0, np.nan], [0.9, -0.1, 0.1], [1.1, 0.1, 0.2], 0.6)
    assert [average_entry(ok, s)["verdict"] for s in ("ZMS", "RCE", "CC")] == [
        "OK",
        "OK",
        "not tested",
    ]
    heavy = result([True, True, False], [1.0, 0.0, np.nan], [0.9, -0.1, 0.1], [1.1, 0.1, 0.2], 0.9)
    e = average_entry(heavy, "ZMS")
    assert e["verdict"] == "unreliable" and "beta_GM(Z^2) = 0.90 > 0.8" in e["reason"]
    nan = result(
        [False, True, False], [1.0, 0.0, np.nan], [np.nan, -0.1, 0.1], [1.1, 0.1, 0.2], 0.6
    )
    e = average_entry(nan, "ZMS")
    assert e["verdict"] == "unreliable" and "could not be computed" in e["reason"]


def test_one_huge_error_never_passes_consistency(tmp_path, capsys):
    """Issue 20: a bin with LZMS = 1e50 has an enormous interval that holds 1; it is
    heavy-tailed, so it is not valid, and the whole set's Z^2 screen makes the gate
    unreliable (exit 3), never passed."""
    import uqviz

    ds = uqviz.synthetic.nig(1000, nu=20, rng=0)
    e = ds["E"].values.copy()
    e[0] = 1e26
    path = _write(tmp_path / "huge.csv", e, ds["uE"].values, np.arange(1000.0))
    status, out = _run(
        ["average", path, "--fail-on", "consistency", "--json", str(tmp_path / "h.json"), *N_BOOT],
        capsys,
    )
    assert status != 0, out.out
    doc = json.loads((tmp_path / "h.json").read_text())
    assert doc["verdicts"]["consistency"]["verdict"] in ("unreliable", "fails")
    assert doc["verdicts"]["consistency"]["n_unreliable"] >= 1


def test_exit_codes_from_a_real_process(files, tmp_path):
    def run(*argv):
        return subprocess.run(
            [sys.executable, "-m", "uqviz.cli", "average", *argv, *N_BOOT],
            capture_output=True,
            text=True,
        )

    assert run(files["good"], "--fail-on", "average").returncode == 0
    proc = run(files["overconfident"], "--fail-on", "average", "--json", str(tmp_path / "o.json"))
    assert proc.returncode == 1 and "FAILED (average:ZMS" in proc.stdout
    assert json.loads((tmp_path / "o.json").read_text())["exit_status"] == 1
    proc = run(str(tmp_path / "missing.csv"), "--fail-on", "average")
    assert proc.returncode == 2 and proc.stderr.startswith("uqviz: error:")


# ------------------------------------------------------------------------------------------
# --fail-on pit: the PIT of the forecast as given
# ------------------------------------------------------------------------------------------

LEVELS = (0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95)


def _quantile_csv(path, spread, n=2000, seed=3):
    """Normal quantiles of y around the prediction with sd 1; y drawn with sd ``spread``."""
    from scipy import stats

    rng = np.random.default_rng(seed)
    pred = rng.uniform(-5, 5, n)
    y = pred + spread * rng.standard_normal(n)
    cols = {"y": y, "pred": pred}
    for lv in LEVELS:
        cols[f"q{round(100 * lv):02d}"] = pred + stats.norm.ppf(lv)
    pd.DataFrame(cols).to_csv(path, index=False)
    return str(path)


def _quantile_args():
    return [
        "--reference",
        "y",
        "--prediction",
        "pred",
        "--quantiles",
        *[f"{lv}:q{round(100 * lv):02d}" for lv in LEVELS],
    ]


def test_fail_on_pit_exit_status_and_json(tmp_path, capsys):
    import uqviz

    bad = _quantile_csv(tmp_path / "overconfident_q.csv", spread=1.4)
    good = _quantile_csv(tmp_path / "calibrated_q.csv", spread=1.0)
    path = tmp_path / "pit.json"
    status, out = _run(
        ["average", bad, *_quantile_args(), "--fail-on", "pit", "--json", str(path), *N_BOOT],
        capsys,
    )
    assert status == 1, out.out
    assert "PIT uniformity (forecast: quantiles): fails (ECDF outside" in out.out
    assert "FAILED (pit)" in out.out
    doc = json.loads(path.read_text())
    assert doc["failed"] == ["pit"] and doc["settings"]["fail_on"] == ["pit"]
    e = doc["verdicts"]["pit"]
    assert e["verdict"] == "fails" and e["forecast"] == "quantiles" and e["gated"]
    # the numbers are validate_pit's on the forecast as given, with the gate's PIT stream
    # (the child after average, consistency, the uE adjustment: rng.spawn(3 + 0 features + 1))
    ds = uqviz.read_csv(
        bad,
        reference="y",
        prediction="pred",
        quantiles={lv: f"q{round(100 * lv):02d}" for lv in LEVELS},
    )
    gen = np.random.default_rng(0)
    gen.spawn(3)
    res = uqviz.validate_pit(ds, rng=gen.spawn(1)[0])
    assert e["p_value"] == float(res["band_p_value"]) <= 0.05
    assert e["p_adjusted"] == e["p_value"] and e["family_size"] == 1  # only the PIT gated
    assert e["ks_p_value"] == float(res["ks_p_value"])
    assert e["pit_var"] == pytest.approx(float(res["pit_var"]), rel=1e-15) and e["pit_var"] > 1 / 12
    assert doc["pit"]["data"]["pit_count"]["values"] == res["pit_count"].values.tolist()
    assert doc["pit"]["attrs"]["forecast"] == "quantiles"

    status, out = _run(["average", good, *_quantile_args(), "--fail-on", "pit", *N_BOOT], capsys)
    assert status == 0, out.out
    assert "PIT uniformity (forecast: quantiles): OK (ECDF inside" in out.out


def test_fail_on_pit_is_holm_with_the_other_gates_and_not_in_any(files, tmp_path, capsys):
    path = tmp_path / "v.json"
    assert (
        main(
            [
                "average",
                files["overconfident"],
                "--fail-on",
                "average",
                "--fail-on",
                "pit",
                "--statistics",
                "ZMS",
                "--json",
                str(path),
                *N_BOOT,
            ]
        )
        == 1
    )
    doc = json.loads(path.read_text())
    v = doc["verdicts"]
    assert set(v) == {"average:ZMS", "pit"} and v["pit"]["forecast"] == "std"
    assert v["pit"]["family_size"] == v["average:ZMS"]["family_size"] == 2
    # Holm over two p-values: the smaller doubled, the larger at least that
    p = sorted([v["pit"]["p_value"], v["average:ZMS"]["p_value"]])
    adj = sorted([v["pit"]["p_adjusted"], v["average:ZMS"]["p_adjusted"]])
    assert adj[0] == pytest.approx(min(1.0, 2 * p[0])) and adj[1] == pytest.approx(
        max(adj[0], p[1])
    )
    assert v["pit"]["verdict"] == "fails"  # uE twice too small: the PIT piles at 0 and 1
    capsys.readouterr()
    path = tmp_path / "any.json"
    main(["average", files["good"], "--fail-on", "any", "--json", str(path), *N_BOOT])
    assert "pit" not in json.loads(path.read_text())["verdicts"]  # "any" keeps its meaning
