"""The one-call report: numbers equal the library's, files written, bad input handled."""

import json

import numpy as np
import pandas as pd
import pytest
import xarray as xr

import uqviz
from uqviz.cli import main
from uqviz.datasets import load_dataset
from uqviz.reporting.build import describe_failures


@pytest.fixture(scope="module")
def default_report():
    return uqviz.report(uqviz.synthetic.default_example(), n_boot=1000, n_mc=200, rng=3,
                        progress=False)


def test_numbers_in_the_json_equal_the_library(default_report, tmp_path):
    ds = uqviz.synthetic.default_example()
    paths = default_report.save(tmp_path)
    numbers = json.loads(open(paths["json"]).read())
    avg = numbers["average"]["data"]
    assert avg["estimate"]["values"][0] == pytest.approx(
        float(((ds.E / ds.uE) ** 2).mean()), rel=1e-12)
    assert numbers["data"]["n_points"] == 5000 and numbers["data"]["features"] == ["X"]
    beta = numbers["tailedness"]["data"]["beta_gm"]["values"]
    np.testing.assert_allclose(beta, uqviz.tailedness(ds).beta_gm.values, rtol=1e-12)
    # the local results equal a direct call with the same bins
    lzm = uqviz.local_calibration(ds, statistic="ZM", conditioning="X", n_bins=50)
    np.testing.assert_allclose(numbers["local_X"]["LZM"]["data"]["estimate"]["values"],
                               lzm.estimate.values, rtol=1e-12)
    html = open(paths["html"]).read()
    assert html.startswith("<!DOCTYPE html>") and "data:image/png;base64," in html
    # the HTML shows the JSON's numbers: f_v of both local statistics, references per D
    for stat in ("LZMS", "LZM"):
        fv = numbers["local_X"][f"fv_{stat}"]["data"]
        assert (f"f<sub>v</sub>({stat}) = {fv['estimate']['values']:.3f} "
                f"[{fv['ci_lower']['values']:.3f}") in html
    ence = numbers["simulated_references"]["ENCE"]["data"]
    for ref in ence["reference"]["values"]:
        assert f"<td>{ref:.4g}</td>" in html
    assert "Bad input: none" in html


def test_inline_html_is_a_scoped_fragment_of_the_page(default_report):
    import html
    import re

    inline = default_report._repr_html_()
    assert "<html" not in inline and "<body" not in inline
    assert inline in default_report.to_html()  # the page is the same content
    css = re.search(r"<style>(.*?)</style>", inline, re.S).group(1)
    selectors = [sel.strip() for rule in re.findall(r"([^{}]+)\{", css) for sel in rule.split(",")]
    assert selectors and all(sel.startswith(".uqviz-report") for sel in selectors), selectors
    assert all(html.escape(line) in inline for line in default_report.conclusion)


def test_conclusion_names_the_failing_region(default_report):
    c = default_report.conclusion
    assert c[0].startswith("Average calibration: OK") and c[1].startswith("Consistency: OK")
    assert c[2].startswith("Adaptivity in X: fails") and "X < 0." in c[2]
    assert "overestimated" in c[2]


def test_describe_failures_by_hand():
    res = xr.Dataset({"valid": ("bin", [True, True, False, True, False, False]),
                      "estimate": ("bin", [1.0, 1.0, 1.5, 1.1, 1.6, 1.7]), "reference": 1.0},
                     coords={"bin_lower": ("bin", [0, 1, 2, 3, 4, 5.0]),
                             "bin_upper": ("bin", [1, 2, 3, 4, 5, 6.0])})
    # a single valid bin inside the run is bridged
    assert describe_failures(res, "x") == ("x > 2 (3 of 4 bins invalid there; uncertainties "
                                           "underestimated)")
    assert describe_failures(res.assign(valid=res.valid | True), "x") is None


def _values(block, var):
    return np.asarray(block["data"][var]["values"], dtype=float)


def test_report_on_a_literature_set_equals_the_library_call_by_call(data_root):
    ds = load_dataset("QM9_U0").isel(point=slice(0, 4000))
    rep = uqviz.report(ds, n_boot=500, n_mc=100, rng=0, progress=False, figures=False)
    numbers = json.loads(rep.to_json())  # what the JSON file holds
    feats = numbers["data"]["features"]
    assert feats == ["mass", "hetero_fraction"]
    # the documented streams: average, LZMS per variable (uE first), ENCE, ZMSE, CC
    streams = iter(np.random.default_rng(0).spawn(8 + 2 * len(feats)))
    avg = uqviz.validate_average(ds, statistics=("ZMS", "RCE", "NLL"), n_boot=500,
                                 rng=next(streams))
    for var in ("estimate", "ci_lower", "ci_upper", "zeta"):
        np.testing.assert_allclose(_values(numbers["average"], var), avg[var].values,
                                   rtol=1e-12)
    n_bins = 4000 // 100
    with pytest.warns(UserWarning, match="heavy"):  # QM9 has heavy-tailed bins
        for cond in ["uE", *feats]:
            lzms = uqviz.local_calibration(ds, statistic="ZMS", conditioning=cond,
                                           n_bins=n_bins, n_boot=500, rng=next(streams))
            block = numbers[f"local_{cond}"]
            for var in ("estimate", "ci_lower", "ci_upper"):
                np.testing.assert_allclose(_values(block["LZMS"], var), lzms[var].values,
                                           rtol=1e-12)
            fv = uqviz.fraction_valid(lzms)
            assert _values(block["fv_LZMS"], "estimate") == pytest.approx(float(fv.estimate))
    with pytest.warns(UserWarning, match="bias correction"):  # as in the report's warnings
        for stat in ("ENCE", "ZMSE", "CC"):
            wf = uqviz.validate(ds, statistic=stat, n_mc=100, n_boot=500, rng=next(streams))
            block = numbers["simulated_references"][stat]
            np.testing.assert_allclose(_values(block, "reference"), wf.reference.values,
                                       rtol=1e-12)
            assert block["data"]["verdict"]["values"] == str(wf.verdict.values)
    assert any("bias correction" in w for w in rep.warnings)
    # QM9 is not adaptive in mass (001: f_v = 0.61 on the full set): said in words
    line = next(c for c in rep.conclusion if c.startswith("Adaptivity in mass"))
    assert "fails" in line and "mass <" in line and "overestimated" in line


def test_cli_report_bad_rows_error_and_drop_invalid(tmp_path, capsys):
    rng = np.random.default_rng(0)
    u = rng.uniform(0.5, 2, 1000)
    df = pd.DataFrame({"E": u * rng.standard_normal(1000), "uE": u, "f": rng.random(1000)})
    df.loc[[3, 7], "uE"] = -1.0
    df.to_csv(tmp_path / "bad.csv", index=False)
    args = ["report", str(tmp_path / "bad.csv"), "--features", "f", "--n-boot", "300",
            "--n-mc", "50", "--out", str(tmp_path / "out")]
    assert main(args) == 2
    assert "2 rows with uE <= 0" in capsys.readouterr().err
    with pytest.warns(UserWarning, match="2"):
        assert main(args + ["--drop-invalid"]) == 0
    out = capsys.readouterr().out
    assert "HTML report:" in out and (tmp_path / "out" / "bad_report.html").exists()
    numbers = json.loads((tmp_path / "out" / "bad_report.json").read_text())
    assert numbers["data"]["n_points"] == 998 and numbers["data"]["n_dropped"] == 2
    html = (tmp_path / "out" / "bad_report.html").read_text()
    assert "Bad input: 2 rows dropped (uE &lt;= 0: 2)" in html
