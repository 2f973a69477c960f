"""The report's interval coverage, calibration curve and "Remedy" section.

Acceptance (issue 13): the report on a miscalibrated CSV shows a validated remedy.
"""

import json

import numpy as np
import pandas as pd
import pytest

import uqviz
from uqviz.cli import main
from uqviz.engine import seeds
from uqviz.reporting.remedy import REMEDY_N_BOOT, remedy_methods
from uqviz.reporting.wording import remedy_sentence

SMALL = dict(n_boot=300, n_mc=50, progress=False)


def _miscalibrated(m=6000, seed=1):
    """NIG data with uE three times too small, and wrong by a factor 0.5 + x in a feature x:
    scaling restores average calibration, not adaptivity in x; BVS on x repairs both."""
    ds = uqviz.synthetic.nig(m, nu=20, rng=seed)
    x = np.random.default_rng(seed + 100).uniform(0.0, 1.0, m)
    u = ds["uE"].values / 3.0 * (0.5 + x)
    return uqviz.from_arrays(ds["E"].values, u, features={"x": x}, name="miscalibrated")


@pytest.fixture(scope="module")
def miscalibrated_report():
    return uqviz.report(_miscalibrated(), rng=5, figures=False, **SMALL)


def test_cli_report_on_a_miscalibrated_csv_shows_a_validated_remedy(tmp_path, capsys):
    ds = _miscalibrated()
    csv = tmp_path / "model.csv"
    pd.DataFrame({"E": ds["E"].values, "uE": ds["uE"].values, "x": ds["x"].values}).to_csv(
        csv, index=False
    )
    out = tmp_path / "out"
    status = main(
        [
            "report",
            str(csv),
            "--errors",
            "E",
            "--uncertainties",
            "uE",
            "--features",
            "x",
            "--out",
            str(out),
            "--n-boot",
            "300",
            "--n-mc",
            "50",
        ]
    )
    printed = capsys.readouterr().out
    assert status == 0
    numbers = json.loads((out / "model_report.json").read_text())
    rem = numbers["remedy"]
    assert set(rem["triggered_by"]) >= {"average calibration", "adaptivity in x"}
    best = next(r for r in rem["methods"] if r["label"] == rem["recommended"])
    # the remedy named is re-validated: every reference inside its interval
    assert best["validated"] and all(s == "OK" for s in best["status"].values())
    z = best["zms"]
    assert z["valid"] and z["ci_lower"] <= 1.0 <= z["ci_upper"] and not z["heavy_tails"]
    for fv in best["fv"].values():
        assert fv["valid"] and fv["ci_lower"] <= 0.95 <= fv["ci_upper"]
    assert best["label"] == "bvs_x" and rem["n_boot"] == 300 and rem["folds"] == 5
    # in words: scaling restores average calibration, adaptivity in x needs BVS on x
    assert rem["summary"].startswith("Scaling by 3")
    assert "restores average calibration" in rem["summary"]
    assert "adaptivity in x still fails; BVS on x" in rem["summary"]
    assert "Validated remedy: BVS on x" in rem["summary"]
    assert "Remedy" in printed and "Validated remedy: BVS on x" in printed
    html = (out / "model_report.html").read_text()
    assert "Remedy: cross-fitted recalibrations, re-validated" in html
    assert "Interval coverage" in html and "Calibration curve" in html
    # NLL and CRPS improve after the remedy
    for s in ("nll", "crps"):
        assert best["scores"][s]["estimate"] < rem["before"]["scores"][s]["estimate"]
    # --no-remedy: no section
    out2 = tmp_path / "out2"
    assert (
        main(
            [
                "report",
                str(csv),
                "--errors",
                "E",
                "--uncertainties",
                "uE",
                "--features",
                "x",
                "--out",
                str(out2),
                "--n-boot",
                "100",
                "--n-mc",
                "20",
                "--no-remedy",
            ]
        )
        == 0
    )
    assert "remedy" not in json.loads((out2 / "model_report.json").read_text())
    assert "Remedy" not in (out2 / "model_report.html").read_text()


def test_remedy_numbers_equal_the_library_calls(miscalibrated_report):
    ds = _miscalibrated()
    rem = miscalibrated_report.numbers["remedy"]
    # the documented stream: the last child of rng.spawn(8 + 2 n_features), then 3 seeds
    child = np.random.default_rng(5).spawn(8 + 2)[-1]
    fold, boot, score = (seeds.kernel_seed(r) for r in seeds.spawn(child, 3))
    assert [r["label"] for r in rem["methods"]] == [m[0] for m in remedy_methods(["x"])]
    row = rem["methods"][0]
    rec = uqviz.recalibrate(ds, method="scaling", rng=fold)
    avg = uqviz.validate_average(rec, statistics=("ZMS",), n_boot=300, rng=boot)
    for var in ("estimate", "ci_lower", "ci_upper"):
        assert row["zms"][var] == pytest.approx(float(avg[var][0]), rel=1e-12)
    lzms = uqviz.local_calibration(rec, conditioning="x", n_bins=60, n_boot=300, rng=boot)
    assert row["fv"]["x"]["estimate"] == pytest.approx(float(uqviz.fraction_valid(lzms).estimate))
    cov = uqviz.interval_coverage(rec, levels=(0.95,))
    assert row["coverage"]["picp"] == pytest.approx(float(cov["picp"][0]), rel=1e-12)
    # NLL and CRPS paired: the same seed before and after
    for data, got in ((ds, rem["before"]["scores"]), (rec, row["scores"])):
        ps = uqviz.proper_scores(data, scores=("nll", "crps"), n_boot=300, rng=score)
        for i, s in enumerate(("nll", "crps")):
            assert got[s]["ci_lower"] == pytest.approx(float(ps["ci_lower"][i]), rel=1e-12)
    # the isotonic output is re-validated vs uE with stratified bins
    iso = next(r for r in rem["methods"] if r["label"] == "isotonic")
    assert iso["fv"]["uE"]["binning"] == "stratified" and iso["fv"]["x"]["binning"] == "equal_count"
    # coverage and calibration curve of the data equal the library's
    numbers = miscalibrated_report.numbers
    np.testing.assert_allclose(
        numbers["coverage"]["data"]["picp"]["values"],
        uqviz.interval_coverage(ds)["picp"].values,
        rtol=1e-12,
    )
    curve = uqviz.calibration_curve(ds)
    for k in ("miscalibration_area", "mace", "rmsce"):
        assert numbers["calibration_curve"]["data"][k]["values"] == pytest.approx(
            float(curve[k]), rel=1e-12
        )
    assert any(
        c.startswith("Interval coverage (normal D)") for c in miscalibrated_report.conclusion
    )
    assert miscalibrated_report.conclusion[-2].startswith("Remedy")
    # then the distribution remedy (conformal), in its own block and sentence
    assert miscalibrated_report.conclusion[-1].startswith("Distribution recalibration")
    assert "conformal" in rem["distribution"] and "methods" not in rem["distribution"]


def test_same_rng_same_remedy_numbers(miscalibrated_report):
    again = uqviz.report(_miscalibrated(), rng=5, figures=False, **SMALL)
    assert json.dumps(again.numbers["remedy"]) == json.dumps(miscalibrated_report.numbers["remedy"])
    other = uqviz.report(_miscalibrated(), rng=6, figures=False, **SMALL)
    assert json.dumps(other.numbers["remedy"]) != json.dumps(miscalibrated_report.numbers["remedy"])


def test_report_without_failures_has_no_remedy_section():
    ds = uqviz.synthetic.nig(3000, nu=20, rng=2)
    ds = ds.assign(x=("point", np.random.default_rng(0).uniform(size=3000), {"role": "feature"}))
    rep = uqviz.report(ds, rng=0, **SMALL)
    assert rep.conclusion[0].startswith("Average calibration: OK")
    assert all("OK" in c for c in rep.conclusion[1:3]), rep.conclusion
    assert "remedy" not in rep.numbers and "remedy" not in rep.figures
    assert "Remedy" not in rep.to_html() and not any(c.startswith("Remedy") for c in rep.conclusion)
    assert "coverage" in rep.figures and "calibration_curve" in rep.figures


def test_remedy_switched_off_and_its_figure():
    ds = _miscalibrated(3000, seed=3)
    off = uqviz.report(ds, rng=0, remedy=False, figures=False, **SMALL)
    assert "remedy" not in off.numbers
    on = uqviz.report(ds, rng=0, **SMALL)
    assert "remedy" in on.figures and "Remedy" in on.to_html()
    # the report's other numbers do not depend on the remedy
    assert json.dumps(off.numbers["local_x"]) == json.dumps(on.numbers["local_x"])
    with pytest.raises(TypeError, match="remedy"):
        uqviz.report(ds, remedy="yes")


def test_remedy_n_boot_is_moderate():
    assert REMEDY_N_BOOT == 1000
    rep = uqviz.report(
        _miscalibrated(2000, seed=4), n_boot=2000, n_mc=20, rng=0, progress=False, figures=False
    )
    assert rep.numbers["remedy"]["n_boot"] == 1000


# ------------------------------------------------------------------- wording by hand
_B = {"average calibration": "fails", "consistency": "OK", "adaptivity in mass": "fails"}


def _m(desc, **status):
    base = dict.fromkeys(_B, "OK")
    base.update({k.replace("_", " "): v for k, v in status.items()})
    return {"description": desc, "status": base}


def test_remedy_sentence_example_of_the_issue():
    methods = [
        _m("scaling by 5.05", adaptivity_in_mass="fails"),
        _m("isotonic regression", adaptivity_in_mass="fails"),
        _m("BVS on mass"),
    ]
    assert remedy_sentence(_B, methods) == (
        "Scaling by 5.05 restores average calibration; adaptivity in mass still fails; "
        "BVS on mass repairs it. Validated remedy: BVS on mass (every test passes after it)."
    )


def test_remedy_sentence_scaling_repairs_everything():
    text = remedy_sentence(_B, [_m("scaling by 2"), _m("BVS on mass")])
    assert text == (
        "Scaling by 2 restores average calibration and repairs adaptivity in mass. "
        "Validated remedy: scaling by 2 (every test passes after it)."
    )


def test_remedy_sentence_a_repair_that_breaks_another_test():
    methods = [
        _m("scaling by 3", adaptivity_in_mass="fails"),
        _m("BVS on mass", consistency="fails"),
    ]
    text = remedy_sentence(_B, methods)
    assert "BVS on mass (but not consistency) repairs it" in text
    assert text.endswith("No method passes every test.")


def test_remedy_sentence_heavy_tails_are_never_ok():
    before = {"average calibration": "unreliable", "consistency": "fails"}
    methods = [
        {
            "description": "scaling by 0.57",
            "zms": {"valid": True},
            "status": {"average calibration": "unreliable", "consistency": "fails"},
        },
        {
            "description": "isotonic regression",
            "status": {"average calibration": "unreliable", "consistency": "OK"},
        },
    ]
    text = remedy_sentence(before, methods)
    assert text.startswith(
        "Scaling by 0.57 repairs none of the failures (its ZMS interval "
        "holds 1, but with heavy tails no conclusion"
    )
    assert "average calibration stays unreliable after every method (heavy tails)" in text
    assert (
        "consistency still fails; isotonic regression (but not average calibration) "
        "repairs it" in text
    )
    assert "Validated remedy" not in text
    assert text.endswith(
        "after isotonic regression every test passes but the ZMS verdict is "
        "unreliable (heavy tails)."
    )


def test_remedy_sentence_no_repair_and_errors():
    methods = [
        _m("scaling by 1", average_calibration="fails", adaptivity_in_mass="fails"),
        {
            "description": "BVS on mass",
            "error": "too few points",
            "status": dict.fromkeys(_B, "n/a"),
        },
    ]
    text = remedy_sentence(_B, methods)
    assert text == (
        "Scaling by 1 repairs none of the failures; average calibration still "
        "fails; no method repairs it; adaptivity in mass still fails; no method "
        "repairs it. No method passes every test."
    )
    assert remedy_sentence(_B, methods[1:]).startswith("No recalibration could be computed")


def test_remedy_zms_status_is_validate_averages_verdict():
    """Issue 36: the re-validated ZMS reads validate_average's verdict: under a failed tail
    screen a calibrated t3 set is "unreliable" (never "OK"), uE twice too small "fails"."""
    import warnings

    import numpy as np

    import uqviz
    from uqviz.reporting import remedy

    rng = np.random.default_rng(3)
    u = np.sqrt(1.0 / rng.gamma(3.0, 1.0, 3000))
    z = rng.standard_t(3, 3000) / np.sqrt(3.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ok = remedy._zms(uqviz.from_arrays(u * z, u), 300, 0)
        bad = remedy._zms(uqviz.from_arrays(2 * u * z, u), 300, 0)
    assert ok["heavy_tails"] and ok["status"] == "unreliable"
    assert bad["heavy_tails"] and bad["status"] == "fails"
    assert bad["verdict_p_value"] <= 0.05
