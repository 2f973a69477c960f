"""The machinery of the verdicts (issue 20): Holm's family, the calibrated null of f_v, the
Poisson-binomial law of the count of valid bins, the unreliable bins, the verdict words and
the summed-up failing regions. Checked against statsmodels, scipy, brute-force enumeration and
exact coverages (Pernot (2023), section III.2.1; Holm (1979))."""

import itertools
import warnings

import numpy as np
import pytest
import xarray as xr
from scipy import stats as sps

import uqviz
from uqviz._array.binomial import lower_critical, poisson_binomial_cdf, wilson_coverage
from uqviz.conditional.null import size_classes
from uqviz.engine.verdicts import holm, overall
from uqviz.reporting import verdicts as vd
from uqviz.reporting.wording import describe_failures, failing_regions


@pytest.mark.parametrize("seed", range(5))
def test_holm_equals_statsmodels(seed):
    from statsmodels.stats.multitest import multipletests

    p = np.random.default_rng(seed).uniform(0, 0.2, 7) ** 2
    rej, adj = holm(p, 0.05)
    want_rej, want_adj, _, _ = multipletests(p, alpha=0.05, method="holm")
    np.testing.assert_allclose(adj, want_adj, rtol=1e-12)
    assert rej.tolist() == want_rej.tolist()


def test_holm_ignores_tests_not_run():
    rej, adj = holm([0.01, np.nan, 0.02], 0.05)
    assert rej.tolist() == [True, False, True] and np.isnan(adj[1])
    assert adj[0] == pytest.approx(0.02) and adj[2] == pytest.approx(0.02)


def test_overall_word():
    assert overall(["OK", "OK"]) == "OK"
    assert overall(["OK", "unreliable", "not tested"]) == "unreliable"
    assert overall(["unreliable", "fails"]) == "fails"


def test_poisson_binomial_cdf_against_enumeration_and_scipy():
    p = np.array([0.9, 0.6, 0.95, 0.3, 0.8])
    pmf = np.zeros(6)
    for outcome in itertools.product([0, 1], repeat=5):
        o = np.array(outcome)
        pmf[o.sum()] += np.prod(np.where(o == 1, p, 1 - p))
    np.testing.assert_allclose(poisson_binomial_cdf(p), np.cumsum(pmf), rtol=1e-12)
    np.testing.assert_allclose(
        poisson_binomial_cdf(np.full(100, 0.93)),
        sps.binom.cdf(np.arange(101), 100, 0.93),
        rtol=1e-10,
    )
    cdf = poisson_binomial_cdf(np.full(100, 0.93))
    k = lower_critical(cdf, 0.05)
    assert cdf[k - 1] <= 0.05 < cdf[k]


def test_wilson_coverage_is_exact():
    # direct enumeration of the Wilson interval with continuity correction, by scipy
    n, p = 60, 0.9
    inside = [sps.binomtest(k, n).proportion_ci(0.95, method="wilsoncc") for k in range(n + 1)]
    want = sum(sps.binom.pmf(k, n, p) for k, ci in enumerate(inside) if ci.low <= p <= ci.high)
    assert wilson_coverage(n, p) == pytest.approx(want, rel=1e-9)


def test_size_classes_group_similar_bins():
    assert size_classes([139, 140, 139, 300, 310, 100]).tolist() == [1, 1, 1, 2, 2, 0]


def test_null_of_lzm_matches_the_exact_student_t_coverage():
    """For normal z-scores the Student-t interval of the LZM covers exactly 95 %: the
    Monte Carlo null of local_calibration must find it (within 4 se), and a bin is heavy-tailed
    (beta_GM(Z^2) > 0.8) with probability ~0 for normal 100-point bins."""
    u = np.random.default_rng(0).uniform(0.5, 2, 4000)
    ds = uqviz.from_arrays(u * np.random.default_rng(1).standard_normal(4000), u)
    loc = uqviz.local_calibration(
        ds, statistic="ZM", n_bins=40, rng=3, n_mc=8000, generative="normal"
    )
    p, se = float(loc["null_coverage"].mean()), float(loc["null_coverage_se"].mean())
    assert abs(p - 0.95) < 4 * se, (p, se)


def test_null_of_picp_is_the_exact_wilson_coverage():
    ds = uqviz.synthetic.nig(2000, nu=20, rng=0)
    loc = uqviz.local_interval_coverage(ds, level=0.9, n_bins=20)
    assert np.allclose(loc["null_coverage"], wilson_coverage(100, 0.9))


def _fake_local(valid, heavy, lower, upper, null=0.9):
    n = len(valid)
    return xr.Dataset(
        {
            "valid": ("bin", valid),
            "heavy_tail": ("bin", heavy),
            "ci_lower": ("bin", lower),
            "ci_upper": ("bin", upper),
            "estimate": ("bin", np.ones(n)),
            "reference": 1.0,
            "null_coverage": ("bin", np.full(n, null)),
        },
        coords={"count": ("bin", np.full(n, 100))},
        attrs={"ci": 0.95},
    )


def test_f_v_counts_every_bin_whose_interval_holds_the_reference():
    """Issue 36, item 4: f_v is Pernot (2023)'s, every bin whose interval holds the reference
    counted (the heavy-tailed bin with LZMS 1e50 and its enormous interval too); the bins
    that cannot be trusted (heavy-tailed, no interval) are counted beside it, and the test
    is that of the published f_v (its null counts simulated bins the same way)."""
    loc = _fake_local(
        [True, True, True, True],
        [False, True, False, False],
        [0.9, 0.5, np.nan, 0.9],
        [1.1, 1e50, 1.1, 1.1],
    )
    fv = uqviz.fraction_valid(loc)
    assert int(fv.n_valid) == 3 and int(fv.n_unreliable) == 2 and float(fv.estimate) == 0.75
    assert float(fv.p_value) == pytest.approx(sps.binom.cdf(3, 4, 0.9))
    assert bool(fv.valid) == (float(fv.p_value) > 0.05)
    assert bool(fv.valid) == (float(fv.estimate) >= float(fv.reference_lower))


def _tail(beta_z2):
    return xr.Dataset(
        {"beta_gm": ("variable", [0.3, 0.4, beta_z2])}, coords={"variable": ["uE2", "E2", "Z2"]}
    )


def _fv_of(valid, p_value, method="calibrated", generative="empirical"):
    return xr.Dataset(
        {
            "estimate": 0.9,
            "ci_lower": 0.8,
            "ci_upper": 0.95,
            "reference": 0.93,
            "reference_lower": 0.88,
            "n_valid": 90,
            "n_bins": 100,
            "n_unreliable": 1,
            "valid": valid,
            "p_value": p_value,
        },
        attrs={"method": method, "generative": generative},
    )


def test_failed_tail_screen_widens_the_doubt_but_keeps_the_answer():
    """Issue 36, item 4: under a failed Z^2 screen of the whole set, consistency and
    adaptivity read "fails" when the tail-allowing calibrated null rejects (after Holm),
    else "unreliable"; never "OK"."""
    heavy = _tail(0.95)
    e = vd.local_entry(_fv_of(True, 0.4), None, heavy, conditioning="uE")
    assert (e["verdict"], e["reliable"], e["heavy_tail"]) == ("unreliable", False, True)
    assert "beta_GM(Z^2) = 0.95 > 0.8" in e["reason"]
    e = vd.local_entry(_fv_of(False, 0.001), None, heavy, conditioning="uE")
    assert e["verdict"] == "fails" and e["p_value"] == 0.001
    # after Holm: a rejection that the family does not keep is "unreliable", not "OK"
    fam = vd.decide_family(
        {
            "consistency": vd.local_entry(_fv_of(False, 0.03), None, heavy, conditioning="uE"),
            "other": {"p_value": 0.04, "reliable": True, "gated": True, "verdict": "fails"},
        }
    )
    assert fam["consistency"]["verdict"] == "unreliable"
    fam = vd.decide_family(
        {"consistency": vd.local_entry(_fv_of(False, 0.001), None, heavy, conditioning="uE")}
    )
    assert fam["consistency"]["verdict"] == "fails"
    # a p-value that does not allow for the tails (Wilson rule, a normal null): unreliable
    for fv in (_fv_of(False, 0.001, method="wilson"), _fv_of(False, 0.001, generative="normal")):
        e = vd.local_entry(fv, None, heavy, conditioning="uE")
        assert e["verdict"] == "unreliable" and not e["heavy_tail"]
        assert vd.decide_family({"c": e})["c"]["verdict"] == "unreliable"
    # a passed screen: the plain verdict
    e = vd.local_entry(_fv_of(True, 0.4), None, _tail(0.5), conditioning="uE")
    assert (e["verdict"], e["reliable"], e["heavy_tail"]) == ("OK", True, False)


def test_one_aberrant_error_never_reads_ok_for_consistency():
    """Issue 20 and 36: one error of 1e26 gives a bin LZMS ~ 1e50 whose interval holds 1; f_v
    counts it (Pernot (2023)), n_unreliable flags it, and the entry is never "OK"."""
    ds = uqviz.synthetic.nig(1000, nu=20, rng=0)
    e = ds["E"].values.copy()
    e[0] = 1e26
    bad = uqviz.from_arrays(e, ds["uE"].values)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        loc = uqviz.local_calibration(bad, n_boot=500, n_mc=200, rng=0)
        tail = uqviz.tailedness(bad)
    fv = uqviz.fraction_valid(loc)
    assert float(loc["estimate"].max()) > 1e49 and int(fv.n_unreliable) >= 1
    big = int(np.argmax(loc["estimate"].values))
    assert bool(loc["valid"][big]) and bool(loc["heavy_tail"][big])
    entry = vd.local_entry(fv, loc, tail, conditioning="uE")
    assert entry["heavy_tail"] and entry["verdict"] != "OK"
    assert vd.decide_family({"consistency": entry})["consistency"]["verdict"] != "OK"


def test_calibrated_test_rejects_too_few_valid_bins():
    ok = uqviz.fraction_valid(
        _fake_local([True] * 18 + [False] * 2, [False] * 20, [0.9] * 20, [1.1] * 20)
    )
    bad = uqviz.fraction_valid(
        _fake_local([True] * 13 + [False] * 7, [False] * 20, [0.9] * 20, [1.1] * 20)
    )
    assert bool(ok.valid) and not bool(bad.valid)
    assert float(bad.p_value) == pytest.approx(sps.binom.cdf(13, 20, 0.9))
    # the paper's rule on the same counts: 0.95 inside the Wilson interval of 18/20, not 13/20
    wilson = [
        uqviz.fraction_valid(
            _fake_local([True] * k + [False] * (20 - k), [False] * 20, [0.9] * 20, [1.1] * 20),
            method="wilson",
        )
        for k in (18, 13)
    ]
    assert [bool(w.valid) for w in wilson] == [True, False]


def test_calibrated_method_needs_the_null():
    loc = _fake_local([True] * 3, [False] * 3, [0.9] * 3, [1.1] * 3).drop_vars("null_coverage")
    assert uqviz.fraction_valid(loc).attrs["method"] == "wilson"
    with pytest.raises(ValueError, match="n_mc"):
        uqviz.fraction_valid(loc, method="calibrated")


def _regions_result():
    # 8 failing regions of different sizes, two of them at the same tied value 0.5
    valid = np.array(
        [0, 1, 1, 0, 0, 0, 1, 1, 0, 1, 1, 0, 0, 1, 1, 0, 1, 1, 0, 1, 0, 0, 1], dtype=bool
    )
    est = np.where(valid, 1.0, 1.6)
    est[11] = 0.5  # a run of the other direction at the tied value
    lower = np.arange(23.0)
    upper = lower + 1
    lower[11:13] = upper[11:13] = 0.5 + 11  # bins 11, 12 hold one tied value
    return xr.Dataset(
        {"valid": ("bin", valid), "estimate": ("bin", est), "reference": 1.0},
        coords={
            "bin_lower": ("bin", lower),
            "bin_upper": ("bin", upper),
            "count": ("bin", np.full(23, 100)),
        },
    )


def test_regions_at_one_tied_value_are_merged():
    res = _regions_result()
    texts = [r["text"] for r in failing_regions(res, "x")]
    assert sum(t.startswith("x = 11.5") for t in texts) == 1
    merged = next(r for r in failing_regions(res, "x") if r["where"] == "x = 11.5")
    assert merged["n_invalid"] == 2 and merged["direction"] == "mixed directions"


def test_conclusion_names_the_three_largest_regions_and_sums_up_the_rest():
    res = _regions_result()
    regions = failing_regions(res, "x")
    assert len(regions) > 4
    text = describe_failures(res, "x", top=3)
    named = [r for r in regions if r["text"] in text]
    assert len(named) == 3
    rest = len(regions) - 3
    assert f"and {rest} more regions" in text
    n_bins = sum(r["n_invalid"] for r in regions if r not in named)
    assert f"({n_bins} invalid bins, {100 * n_bins} points:" in text
    # the largest region (3 bins) is among those named
    assert max(regions, key=lambda r: r["n_invalid"])["text"] in text


def test_coverage_at_normal_quantiles_is_a_finding_on_the_shape():
    """Issue 20: variance-calibrated t errors cover differently at normal quantiles: a finding
    on the shape ("unreliable"), never a calibration failure, unless the variance fails."""
    rng = np.random.default_rng(0)
    u = rng.uniform(0.5, 2, 20000)
    ds = uqviz.from_arrays(u * rng.standard_t(3, 20000) / np.sqrt(3), u)
    cov = uqviz.interval_coverage(ds)
    shape = vd.coverage_entry(cov, "OK")
    assert shape["verdict"] == "unreliable" and "shape of the errors" in shape["reason"]
    assert vd.coverage_entry(cov, "fails")["verdict"] == "fails"
    # the p-values are exact binomial tests, Holm over the levels
    k, n = int(cov["n_inside"].isel(level=0)), int(cov["n_points"])
    assert shape["p_values"][0] == pytest.approx(sps.binomtest(k, n, 0.5).pvalue)


def test_report_family_is_holm_over_the_calibration_tests():
    ds = uqviz.synthetic.default_example()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rep = uqviz.report(
            ds, n_boot=300, n_mc=100, rng=0, progress=False, figures=False, remedy=False
        )
    v = rep.numbers["verdicts"]
    family = rep.numbers["family"]["tests"]
    assert "coverage" not in family and {"average", "consistency", "adaptivity:X"} <= set(family)
    rej, adj = holm([v[k]["p_value"] for k in family], 0.05)
    for k, a in zip(family, adj):
        assert v[k]["p_adjusted"] == pytest.approx(a)
        assert v[k]["family_size"] == len(family)
    assert v["adaptivity:X"]["verdict"] == "fails" and v["adaptivity:X"]["adjusted"] is True
    assert rep.numbers["verdict"] == "fails"
    assert {e["verdict"] for e in v.values()} <= {"OK", "fails", "unreliable", "not tested"}


def test_nees_test_says_unreliable_for_heavy_tails():
    """Issue 20: the chi-square NEES test assumes Gaussian predictions; on calibrated t6 errors
    it failed 17 % of sets of 2000 points at 5 %. Its tail screen fires on those; issue 36:
    they are then decided by the tail-allowing test (calibrated t z-scores as heavy-tailed as
    the data's): "unreliable" in the zone of doubt, "fails" beyond it, never "OK"."""
    import uqviz.quantile as uq

    out = {"normal": [0, 0, 0], "t6": [0, 0, 0]}
    for s in range(40):
        rng = np.random.default_rng(s)
        u = rng.uniform(0.5, 2, 2000)
        for d, z in (
            ("normal", rng.standard_normal(2000)),
            ("t6", rng.standard_t(6, 2000) / np.sqrt(1.5)),
        ):
            r = uq.nees_test(u * z, 0.0, u)
            word = str(r["verdict"].values)
            out[d][0] += word == "fails"
            out[d][1] += word == "unreliable"
            out[d][2] += word == "OK"
            if not bool(r["reliable"]):
                assert word != "OK"
    assert out["normal"][0] <= 5 and out["normal"][1] <= 4  # about 2 and 1 expected
    assert out["t6"][0] <= 4 and out["t6"][1] >= 34
