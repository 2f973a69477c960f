"""The one-call report: numbers equal the library's, files written, bad input handled."""

import copy
import json
import re

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
    return uqviz.report(
        uqviz.synthetic.default_example(), n_boot=1000, n_mc=200, rng=3, progress=False
    )


def test_numbers_in_the_json_equal_the_library(default_report, tmp_path):
    ds = uqviz.synthetic.default_example()
    paths = default_report.save(tmp_path)
    numbers = json.loads(open(paths["json"]).read())
    avg = numbers["average"]["data"]
    assert avg["estimate"]["values"][0] == pytest.approx(
        float(((ds.E / ds.uE) ** 2).mean()), rel=1e-12
    )
    assert numbers["data"]["n_points"] == 5000 and numbers["data"]["features"] == ["X"]
    beta = numbers["tailedness"]["data"]["beta_gm"]["values"]
    np.testing.assert_allclose(beta, uqviz.tailedness(ds).beta_gm.values, rtol=1e-12)
    # the local results equal a direct call with the same bins
    lzm = uqviz.local_calibration(ds, statistic="ZM", conditioning="X", n_bins=50)
    np.testing.assert_allclose(
        numbers["local_X"]["LZM"]["data"]["estimate"]["values"], lzm.estimate.values, rtol=1e-12
    )
    html = open(paths["html"]).read()
    assert html.startswith("<!DOCTYPE html>") and "data:image/png;base64," in html
    # the HTML shows the JSON's numbers: f_v of both local statistics, references per D
    for stat in ("LZMS", "LZM"):
        fv = numbers["local_X"][f"fv_{stat}"]["data"]
        assert (
            f"f<sub>v</sub>({stat}) = {fv['estimate']['values']:.3f} "
            f"[{fv['ci_lower']['values']:.3f}"
        ) in html
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
    assert c[2].startswith("Adaptivity in X (beyond the uE effect): fails") and "X < 0." in c[2]
    assert "overestimated" in c[2]


def test_describe_failures_by_hand():
    res = xr.Dataset(
        {
            "valid": ("bin", [True, True, False, True, False, False]),
            "estimate": ("bin", [1.0, 1.0, 1.5, 1.1, 1.6, 1.7]),
            "reference": 1.0,
        },
        coords={
            "bin_lower": ("bin", [0, 1, 2, 3, 4, 5.0]),
            "bin_upper": ("bin", [1, 2, 3, 4, 5, 6.0]),
        },
    )
    # a single valid bin inside the run is bridged
    assert describe_failures(res, "x") == (
        "x > 2 (3 of 4 bins invalid there; uncertainties underestimated)"
    )
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
    avg = uqviz.validate_average(
        ds, statistics=("ZMS", "RCE", "NLL"), n_boot=500, rng=next(streams)
    )
    for var in ("estimate", "ci_lower", "ci_upper", "zeta"):
        np.testing.assert_allclose(_values(numbers["average"], var), avg[var].values, rtol=1e-12)
    n_bins = 4000 // 100
    with pytest.warns(UserWarning, match="heavy"):  # QM9 has heavy-tailed bins
        for cond in ["uE", *feats]:
            lzms = uqviz.local_calibration(
                ds, statistic="ZMS", conditioning=cond, n_bins=n_bins, n_boot=500, rng=next(streams)
            )
            block = numbers[f"local_{cond}"]
            for var in ("estimate", "ci_lower", "ci_upper"):
                np.testing.assert_allclose(
                    _values(block["LZMS"], var), lzms[var].values, rtol=1e-12
                )
            fv = uqviz.fraction_valid(lzms)
            assert _values(block["fv_LZMS"], "estimate") == pytest.approx(float(fv.estimate))
    shared = next(streams)  # ENCE, ZMSE and CC share one stream (and their synthetic sets)
    with pytest.warns(UserWarning, match="bias correction"):  # as in the report's warnings
        for stat in ("ENCE", "ZMSE", "CC"):
            wf = uqviz.validate_with_references(
                ds, statistic=stat, n_mc=100, n_boot=500, rng=copy.deepcopy(shared)
            )
            block = numbers["simulated_references"][stat]
            np.testing.assert_allclose(_values(block, "reference"), wf.reference.values, rtol=1e-12)
            assert block["data"]["verdict"]["values"] == str(wf.verdict.values)
    assert any("bias correction" in w for w in rep.warnings)
    # QM9 is not adaptive in mass (Pernot (2023): f_v = 0.61 on the full set): said in words
    line = next(c for c in rep.conclusion if c.startswith("Adaptivity in mass"))
    assert "fails" in line and "mass <" in line and "overestimated" in line


def test_cli_report_bad_rows_error_and_drop_invalid(tmp_path, capsys):
    rng = np.random.default_rng(0)
    u = rng.uniform(0.5, 2, 1000)
    df = pd.DataFrame({"E": u * rng.standard_normal(1000), "uE": u, "f": rng.random(1000)})
    df.loc[[3, 7], "uE"] = -1.0
    df.to_csv(tmp_path / "bad.csv", index=False)
    args = [
        "report",
        str(tmp_path / "bad.csv"),
        "--features",
        "f",
        "--n-boot",
        "300",
        "--n-mc",
        "50",
        "--out",
        str(tmp_path / "out"),
    ]
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


# --------------------------------------------------------------------------
# issue 11: all regions, ties, discrete features, heavy tails, NaN, trees, file names
# --------------------------------------------------------------------------
def test_all_failing_regions_are_named_with_their_direction(default_report):
    # the default example: LZMS too low at small X AND too high at large X
    line = default_report.conclusion[2]
    assert "X < 0." in line and "overestimated" in line
    assert "X > 0." in line and "underestimated" in line
    regions = default_report.numbers["local_X"]["failing_regions"]
    assert len(regions) >= 2
    assert regions[0].startswith("X < ") and regions[-1].startswith("X > ")


def test_describe_failures_names_every_run_in_order():
    res = xr.Dataset(
        {
            "valid": ("bin", [False, False, True, True, True, False, False]),
            "estimate": ("bin", [0.5, 0.6, 1.0, 1.0, 1.0, 1.5, 1.6]),
            "reference": 1.0,
        },
        coords={"bin_lower": ("bin", np.arange(7.0)), "bin_upper": ("bin", np.arange(1.0, 8.0))},
    )
    assert describe_failures(res, "x") == (
        "x < 2 (2 of 2 bins invalid there; uncertainties overestimated) and "
        "x > 5 (2 of 2 bins invalid there; uncertainties underestimated)"
    )
    # two adjacent runs of opposite directions are two regions, not one
    res2 = res.assign(
        valid=("bin", [True, True, True, False, False, True, True]),
        estimate=("bin", [1.0, 1.0, 1.0, 0.5, 1.5, 1.0, 1.0]),
    )
    assert describe_failures(res2, "x") == (
        "3 < x < 4 (1 bin invalid there; uncertainties overestimated) and "
        "4 < x < 5 (1 bin invalid there; uncertainties underestimated)"
    )


def test_a_tied_region_reads_as_one_value():
    res = xr.Dataset(
        {
            "valid": ("bin", [True, False, True]),
            "estimate": ("bin", [1.0, 1.7, 1.0]),
            "reference": 1.0,
        },
        coords={
            "bin_lower": ("bin", [0.001, 0.008148, 0.01]),
            "bin_upper": ("bin", [0.008148, 0.008148, 0.02]),
        },
    )
    text = describe_failures(res, "uE")
    assert text == "uE = 0.008148 (1 bin invalid there; uncertainties underestimated)"
    assert "0.008148 < uE < 0.008148" not in text
    # distinct values that print alike at 4 digits get more digits
    res = res.assign_coords(
        bin_lower=("bin", [0.001, 0.0081481, 0.01]), bin_upper=("bin", [0.0081481, 0.0081482, 0.02])
    )
    assert describe_failures(res, "uE").startswith("0.0081481 < uE < 0.0081482")


def test_a_tied_region_of_a_long_value_reads_with_four_digits():
    # QM9_E: one tied uE value, 0.00633590302218, filled a bin; the report printed all 12 digits
    u = 0.00633590302218
    res = xr.Dataset(
        {
            "valid": ("bin", [True, False, True]),
            "estimate": ("bin", [1.0, 1.7, 1.0]),
            "reference": 1.0,
        },
        coords={"bin_lower": ("bin", [0.001, u, 0.01]), "bin_upper": ("bin", [u, u, 0.02])},
    )
    assert describe_failures(res, "uE") == (
        "uE = 0.006336 (1 bin invalid there; uncertainties underestimated)"
    )


def test_discrete_feature_is_binned_by_value_and_the_report_says_so():
    rng = np.random.default_rng(5)
    m = 3000
    charge = rng.integers(-1, 2, m).astype(float)  # 3 distinct values
    u = rng.uniform(0.5, 2.0, m)
    e = u * rng.standard_normal(m) * np.where(charge > 0, 1.6, 1.0)
    ds = uqviz.from_arrays(e, u, features={"charge": charge}, name="discrete")
    rep = uqviz.report(ds, n_boot=300, n_mc=50, rng=0, progress=False, figures=False)
    block = rep.numbers["local_charge"]
    assert block["binning"] == "stratified"
    lower = block["LZMS"]["coords"]["bin_lower"]
    upper = block["LZMS"]["coords"]["bin_upper"]
    assert lower == upper == [-1.0, 0.0, 1.0]  # one bin per value: no tie is split
    assert rep.numbers["local_uE"]["binning"] == "equal_count"
    note = next(c for c in rep.conclusion if c.startswith("charge has 3 distinct values"))
    assert 'binning="stratified"' in note
    line = next(c for c in rep.conclusion if c.startswith("Adaptivity in charge"))
    assert "charge = 1 (1 bin invalid there; uncertainties underestimated)" in line
    assert block["failing_regions"] == [
        "charge = 1 (1 bin invalid there; uncertainties underestimated)"
    ]
    import html

    assert html.escape('binned by value (binning="stratified"') in rep.to_html()


def test_one_aberrant_outlier_fails_average_calibration_under_the_tail_rule():
    """One error 1e13 times its uncertainty: the tail screen fails, the BCa interval holds 1,
    and the Student-t null of the heaviest tails the z-scores allow still rejects (issue 36):
    "fails", with the screen and the tail-allowing test in the sentence, never "OK"."""
    rng = np.random.default_rng(0)
    u = rng.uniform(0.5, 2, 2000)
    e = u * rng.standard_normal(2000)
    e[5] = 1e13 * u[5]  # ZMS ~ 5e22
    ds = uqviz.from_arrays(e, u, name="outlier")
    rep = uqviz.report(ds, n_boot=300, n_mc=50, rng=0, progress=False, figures=False)
    first = rep.conclusion[0]
    assert first.startswith("Average calibration: fails (")
    assert "OK" not in first and re.search(r"beta_GM\(Z\^2\) = 1(\.0*)? > 0\.8", first)
    assert "Table II" in first and "as heavy-tailed as the data's" in first


def test_nan_interval_limits_read_n_a_and_the_page_says_why(monkeypatch, tmp_path):
    import uqviz.reporting.build as build

    real = build.validate_shared

    def with_nan(*args, **kw):
        return {
            s: res.assign(ci_lower=res.ci_lower * np.nan) for s, res in real(*args, **kw).items()
        }

    monkeypatch.setattr(build, "validate_shared", with_nan)
    rep = uqviz.report(
        uqviz.synthetic.nig(400, rng=1), n_boot=200, n_mc=50, rng=0, progress=False, figures=False
    )
    assert rep.numbers["simulated_references"]["ENCE"]["data"]["ci_lower"]["values"] is None
    page = rep.to_html()  # used to raise TypeError on the None limit
    assert "[n/a, " in page and "n/a: the value could not be computed" in page
    paths = rep.save(tmp_path)
    assert open(paths["html"]).read() == page
    assert json.loads(open(paths["json"]).read())["name"] == rep.name


def test_save_writes_atomically_and_leaves_no_partial_file(monkeypatch, tmp_path):
    rep = uqviz.report(
        uqviz.synthetic.nig(300, rng=2), n_boot=100, n_mc=20, rng=0, progress=False, figures=False
    )

    def broken(self):
        raise TypeError("cannot render")

    monkeypatch.setattr(type(rep), "to_html", broken)
    with pytest.raises(TypeError):
        rep.save(tmp_path / "out")
    assert not (tmp_path / "out").exists() or not list((tmp_path / "out").iterdir())
    monkeypatch.undo()
    # a failure while writing leaves neither a partial file nor a temporary one
    import uqviz.reporting.build as build

    def failing_replace(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(build.os, "replace", failing_replace)
    with pytest.raises(OSError, match="disk full"):
        rep.save(tmp_path / "out2")
    assert list((tmp_path / "out2").iterdir()) == []


@pytest.mark.parametrize(
    "name", ["../../x", "/tmp/uqviz_abs_name", "..", "a/../../b", "", "C:\\evil", "..\\..\\win"]
)
def test_dataset_names_never_write_outside_the_folder(tmp_path, name):
    out = tmp_path / "deep" / "out"
    ds = uqviz.synthetic.nig(300, rng=0)
    ds.attrs["name"] = name
    rep = uqviz.report(ds, n_boot=100, n_mc=20, rng=0, progress=False, figures=False)
    before = set(tmp_path.rglob("*"))
    paths = rep.save(out)
    new = set(tmp_path.rglob("*")) - before
    written = {p for p in new if p.is_file()}
    assert written == {out / (p.split("/")[-1]) for p in paths.values()}
    for p in paths.values():
        assert (out / p.split("/")[-1]).resolve().parent == out.resolve()
        assert not p.split("/")[-1].startswith(".")
    import os

    assert not os.path.exists("/tmp/uqviz_abs_name_report.html")


def test_report_of_a_tree_has_one_section_per_dataset(tmp_path):
    tree = uqviz.synthetic.nig(400, nu=8.0, n_datasets=2, rng=4)
    col = uqviz.report(tree, n_boot=200, n_mc=30, rng=7, progress=False, figures=False)
    assert isinstance(col, uqviz.reporting.ReportCollection)
    assert list(col.reports) == ["set_0", "set_1"]
    # each dataset uses its own child stream of rng, in order
    child = np.random.default_rng(7).spawn(2)[1]
    one = tree["set_1"].to_dataset()
    alone = uqviz.report(one, n_boot=200, n_mc=30, rng=child, progress=False, figures=False)
    assert col["set_1"].numbers == alone.numbers
    assert col.conclusion["set_1"] == alone.conclusion
    paths = col.save(tmp_path)
    page = open(paths["html"]).read()
    assert page.count("<h2 id='ds-set-") == 2
    numbers = json.loads(open(paths["json"]).read())
    assert list(numbers["datasets"]) == ["set_0", "set_1"]


@pytest.mark.parametrize(
    "kwargs, exc",
    [
        (dict(n_boot=2.5), ValueError),
        (dict(n_boot=1), ValueError),
        (dict(n_mc=0), ValueError),
        (dict(n_bins="10"), TypeError),
        (dict(figures=1), TypeError),
        (dict(rng=np.random.RandomState(0)), TypeError),
        (dict(features=[]), ValueError),
    ],
)
def test_report_options_are_checked(kwargs, exc):
    with pytest.raises(exc, match=next(iter(kwargs))):
        uqviz.report(uqviz.synthetic.nig(200, rng=0), progress=False, figures=False, **kwargs)


def test_constant_uncertainties_are_reported_not_crashed_on():
    """Constant uE: consistency and the binned statistics are said to be untestable; errors
    three times their uncertainty and one aberrant outlier: average calibration fails (issue
    36: the tails do not explain it), never OK."""
    e = np.r_[np.full(199, 3.0), 1e12]
    ds = uqviz.from_arrays(e, np.ones(200), name="outlier")
    rep = uqviz.report(ds, n_boot=300, n_mc=20, progress=False, figures=False)
    assert rep.conclusion[0].startswith("Average calibration: fails")
    assert rep.conclusion[1] == (
        "Consistency: not tested (uE is constant: one value, nothing to condition on)."
    )
    for s in ("ENCE", "ZMSE", "CC"):
        assert any(line.startswith(f"{s}: not tested (uE is constant") for line in rep.conclusion)
    numbers = json.loads(rep.to_json())
    assert numbers["simulated_references"] == {}
    assert numbers["local_uE"] == {"skipped": "uE is constant: one value, nothing to condition on"}
    assert "not tested" in rep.to_html()


@pytest.mark.parametrize("m", [3, 10])
def test_tiny_sets_say_what_cannot_be_computed(m):
    rng = np.random.default_rng(m)
    u = rng.uniform(0.5, 2.0, m)
    rep = uqviz.report(
        uqviz.from_arrays(u * rng.standard_normal(m), u),
        n_boot=200,
        n_mc=20,
        progress=False,
        figures=False,
    )
    assert f"ENCE: not tested ({m} points are too few for 20 bins of uE)." in rep.conclusion
    # the uE bins are few (binned by value into one bin): said, not hidden
    assert any(line.startswith("uE has ") and line.endswith(", 1 bin.") for line in rep.conclusion)


def test_saved_files_have_the_permissions_of_ordinary_files(tmp_path):
    import os
    import stat

    rep = uqviz.report(
        uqviz.synthetic.default_example(), n_boot=200, n_mc=20, progress=False, figures=False
    )
    umask = os.umask(0)
    os.umask(umask)
    for path in rep.save(tmp_path).values():
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o666 & ~umask


def test_report_of_object_dtype_errors_equals_the_float_report():
    # found by the bad-input sweep: numbers stored as Python objects reached np.sqrt
    ds = uqviz.synthetic.default_example()
    as_objects = ds.assign(E=ds.E.astype(object))
    got = json.loads(uqviz.report(as_objects, rng=0).to_json())
    want = json.loads(uqviz.report(ds, rng=0).to_json())
    # the data summary (mean, sd) sums Python objects in another order: last bits differ
    np.testing.assert_allclose(got["data"]["E"]["sd"], want["data"]["E"]["sd"], rtol=1e-12)
    for summary in (got, want):
        summary["data"]["E"].pop("mean"), summary["data"]["E"].pop("sd")
    assert got == want


def test_report_of_recalibrated_data_tests_adaptivity_and_passes_progress(monkeypatch):
    """Data from Recalibration.apply keep uE_original: the report validates their uE (every
    adaptivity test run, not 'not tested'), and report(progress=False) reaches the simulated
    references."""
    from uqviz.reporting import build

    seen = {}
    original = build.validate_shared

    def spy(*args, **kwargs):
        seen.update(kwargs)
        return original(*args, **kwargs)

    monkeypatch.setattr(build, "validate_shared", spy)
    ds = uqviz.synthetic.default_example()
    rec = uqviz.fit_recalibration(ds, method="bvs", conditioning="X").apply(ds)
    assert "uE_original" in rec
    rep = uqviz.report(rec, n_boot=200, n_mc=100, rng=0, remedy=False, progress=False)
    verdicts = rep.numbers["verdicts"]
    assert verdicts["adaptivity:X"]["verdict"] != "not tested"
    assert "uE_original" not in rep.numbers["data"]["features"]
    assert seen["progress"] is False
