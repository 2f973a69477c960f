"""Quantile calibration: NEES kernels, M-QCE/C-QCE against netcal 1.4.0, intervals, plots.

The netcal fixtures (tests/fixtures/netcal_qce.{npz,json}) were made with
tests/fixtures/make_netcal_fixtures.py in a venv with netcal 1.4.0.
"""

import json
import os

import matplotlib.pyplot as plt
import numpy as np
import pytest
from scipy import special, stats

import uqviz.quantile as uq
from uqviz._array import bca
from uqviz._array import nees as kn
from uqviz.quantile.nees import nees_null_p_value, nees_tail_region
from uqviz.data import from_arrays
from uqviz.datasets import load_dataset
from uqviz.plots.quantile import coverage_map, quantile_reliability

FIX = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures")
Q19 = np.linspace(0.05, 0.95, 19)


def _spd(rng, n, d):
    a = rng.normal(size=(n, d, d))
    return a @ np.swapaxes(a, -1, -2) + 0.3 * np.eye(d)


def _mvn(rng, cov, factor=1.0):
    return factor * np.einsum("nij,nj->ni", np.linalg.cholesky(cov), rng.normal(size=cov.shape[:2]))


# --------------------------------------------------------------------------
# netcal fixtures
# --------------------------------------------------------------------------
with open(os.path.join(FIX, "netcal_qce.json")) as _f:
    NETCAL = json.load(_f)
RUNS = [(case, run) for case, meta in NETCAL["cases"].items() for run in meta["runs"]]


@pytest.fixture(scope="module")
def netcal_arrays():
    with np.load(os.path.join(FIX, "netcal_qce.npz")) as z:
        return {k: z[k] for k in z.files}


@pytest.mark.parametrize("case,run", RUNS, ids=[r["key"][4:] for _, r in RUNS])
def test_equals_netcal_1_4_0(netcal_arrays, case, run):
    meta = NETCAL["cases"][case]
    z = netcal_arrays
    inp = {k: z[f"in/{case}/{k}"] for k in meta["inputs"]}
    kw = dict(
        levels=z[f"in/{case}/quantiles"],
        n_bins=run["bins"],
        marginal=run["marginal"],
        sample_threshold=run["sample_threshold"],
        reduction=run["reduction"],
        value_range=meta["range"],
        n_boot=0,
    )
    if "samples" in inp:
        res = uq.qce(inp["y"], samples=inp["samples"], sample_model="hpdi", **kw)
    else:
        res = uq.qce(inp["y"], inp["mean"], inp["scale"], **kw)
    out = uq.qce_to_numpy(res, return_map=True, return_num_samples=True)
    ref = z[run["key"] + "/metric"]
    assert isinstance(out[0], float) == run["metric_is_float"]
    assert np.shape(out[0]) == ref.shape
    np.testing.assert_allclose(out[0], ref, rtol=0, atol=1e-12)
    if run["marginal"]:
        assert len(out) == 1  # netcal appends map/counts only for C-QCE
    else:
        np.testing.assert_allclose(np.stack(out[1]), z[run["key"] + "/map"], rtol=0, atol=1e-12)
        np.testing.assert_array_equal(np.stack(out[2]), z[run["key"] + "/counts"])


def test_netcal_fixtures_cover_every_input_kind_and_reduction():
    kinds = {m["kind"] for m in NETCAL["cases"].values()}
    assert kinds == {"std", "covariance", "samples (hpdi)"}
    assert NETCAL["netcal"] == "1.4.0"
    assert {r["reduction"] for _, r in RUNS} == {"none", "mean", "batchmean"}
    assert {r["sample_threshold"] for _, r in RUNS} >= {1, 5, 12}
    assert any(m["range"] for m in NETCAL["cases"].values())


# --------------------------------------------------------------------------
# definitions
# --------------------------------------------------------------------------
def test_1d_inside_iff_z2_below_chi2_1_on_logp():
    ds = load_dataset("logP_10k_a_LS-GCN")
    e, u = ds["E"].values, ds["uE"].values
    z2 = (e / u) ** 2
    eps = uq.nees(ds)["nees"]
    np.testing.assert_allclose(eps.values, z2, rtol=1e-14)
    np.testing.assert_array_equal(eps["point"].values, ds["point"].values)
    res = uq.qce(ds, levels=Q19, n_boot=0)
    thr = stats.chi2.ppf(Q19, 1)
    np.testing.assert_array_equal(res["n_inside"].values, [(z2 <= t).sum() for t in thr])
    # the same as the two-sided central interval |Z| <= Phi^-1((1 + tau)/2)
    half = special.ndtri((1 + Q19) / 2)
    np.testing.assert_array_equal(
        res["n_inside"].values, [(np.abs(e / u) <= h).sum() for h in half]
    )
    # a uqviz dataset is read as y = E, mean = 0, scale = uE
    res2 = uq.qce(e, 0.0, u, levels=Q19, n_boot=0)
    np.testing.assert_array_equal(res["qce"].values, res2["qce"].values)


def test_calibrated_multivariate_gaussian_has_mqce_within_binomial_error():
    rng = np.random.default_rng(11)
    n, d = 4000, 3
    cov = _spd(rng, n, d)
    mean = rng.normal(size=(n, d))
    y = mean + _mvn(rng, cov)
    res = uq.qce(y, mean, cov, levels=Q19, n_boot=0)
    assert res["m_qce"].dims == ("level",) and "variable" not in res.dims
    se = np.sqrt(Q19 * (1 - Q19) / n)
    assert np.all(res["m_qce"].values <= 3.5 * se)
    # and the Wilson interval holds tau at most levels
    held = (res["coverage_lower"] <= res["level"]) & (res["level"] <= res["coverage_upper"])
    assert int(held.sum()) >= 16
    # too narrow covariances: coverage below tau at every level
    narrow = uq.qce(y, mean, 0.5 * cov, levels=Q19, n_boot=0)
    assert np.all(narrow["coverage"].values < Q19)


def test_nees_cholesky_equals_explicit_inverse_small_and_large_d():
    rng = np.random.default_rng(3)
    for d in (2, 3, 12):  # d > 8 goes through numpy.linalg.solve
        cov = _spd(rng, 50, d)
        r = rng.normal(size=(50, d))
        ref = np.einsum("ni,nij,nj->n", r, np.linalg.inv(cov), r)
        got = uq.nees(r, 0.0, cov)
        np.testing.assert_allclose(got["nees"].values, ref, rtol=1e-10)
        assert got.attrs["dof"] == d
    # diagonal covariance == per-dimension std: NEES is the sum of Z_j^2
    std = rng.uniform(0.5, 2.0, size=(20, 3))
    r = rng.normal(size=(20, 3))
    cov = np.einsum("ni,ij->nij", std**2, np.eye(3))
    np.testing.assert_allclose(
        uq.nees(r, 0.0, std)["nees"].values, uq.nees(r, 0.0, cov)["nees"].values, rtol=1e-13
    )
    np.testing.assert_allclose(
        uq.nees(r, 0.0, std)["nees"].values, ((r / std) ** 2).sum(1), rtol=1e-14
    )


def test_generalized_std_is_det_to_the_1_over_2d():
    rng = np.random.default_rng(4)
    cov = _spd(rng, 30, 3)
    sg = kn.generalized_std(kn.cholesky(cov))
    np.testing.assert_allclose(sg, np.sqrt(np.linalg.det(cov) ** (1 / 3)), rtol=1e-13)


# --------------------------------------------------------------------------
# hand-computed C-QCE
# --------------------------------------------------------------------------
def _six_points():
    # std 1, 1, 1 (bin 0) and 2, 2, 2 (bin 1); edges [1, 1.5, 2]
    # at tau = 0.5 a point is inside iff |Z| <= 0.6745
    std = np.array([1.0, 1.0, 1.0, 2.0, 2.0, 2.0])
    z = np.array([0.1, 0.5, 2.0, 0.3, 1.5, 3.0])  # bin 0: 2/3 inside, bin 1: 1/3 inside
    return z * std, std


def test_hand_computed_cqce_six_points_two_bins():
    y, std = _six_points()
    res = uq.qce(y, 0.0, std, levels=[0.5], n_bins=2, marginal=False, n_boot=0)
    # M-QCE = |3/6 - 0.5| = 0; C-QCE = 3/6 |2/3 - 1/2| + 3/6 |1/3 - 1/2| = 1/6
    assert res["m_qce"].item() == pytest.approx(0.0, abs=1e-15)
    assert res["qce"].item() == pytest.approx(1 / 6, abs=1e-15)
    np.testing.assert_allclose(res["bin_coverage"].values, [[2 / 3, 1 / 3]])
    np.testing.assert_array_equal(res["bin_count"].values, [3, 3])
    np.testing.assert_allclose(res["bin_lower"].values, [1.0, 1.5])
    np.testing.assert_allclose(res["bin_upper"].values, [1.5, 2.0])
    np.testing.assert_allclose(res["qce_map"].values, [[1 / 6, 1 / 6]])
    # netcal's threshold rule: bins below the threshold get coverage 0, still weighted
    thr = uq.qce(y, 0.0, std, levels=[0.5], n_bins=2, marginal=False, sample_threshold=4, n_boot=0)
    assert thr["qce"].item() == pytest.approx(0.5, abs=1e-15)
    assert np.isnan(thr["bin_coverage"].values).all()
    # marginal: the metric does not look at the bins
    assert uq.qce(y, 0.0, std, levels=[0.5], n_boot=0)["qce"].item() == pytest.approx(0.0)


def test_range_excludes_points_and_constant_std_widens():
    y, std = _six_points()
    res = uq.qce(
        y, 0.0, std, levels=[0.5], n_bins=2, marginal=False, value_range=(0.5, 1.5), n_boot=0
    )
    # only the std = 1 points are binned (bin [1.0, 1.5]); normalised by them
    np.testing.assert_array_equal(res["bin_count"].values, [0, 3])
    assert res["qce"].item() == pytest.approx(abs(2 / 3 - 0.5))
    with pytest.raises(ValueError, match="no point"):
        uq.qce(y, 0.0, std, levels=[0.5], marginal=False, value_range=(5, 6), n_boot=0)
    const = uq.qce(y, 0.0, np.ones(6), levels=[0.5], n_bins=4, marginal=False, n_boot=0)
    np.testing.assert_allclose(const["bin_lower"].values, [0.5, 0.75, 1.0, 1.25])
    assert int(const["bin_count"].sum()) == 6


def test_bin_edges_follow_scipy_rules():
    edges = np.array([0.0, 1.0, 2.0])
    x = np.array([0.0, 0.999, 1.0, 2.0, 2.0 + 1e-12, 2.1, -1e-12])
    assert kn.bin_indices(x, edges).tolist() == [0, 0, 1, 1, 1, -1, -1]


# --------------------------------------------------------------------------
# shapes, reductions, sample input
# --------------------------------------------------------------------------
def test_per_dimension_shapes_and_reductions():
    rng = np.random.default_rng(5)
    n = 300
    std = rng.uniform(0.5, 2, size=(n, 3))
    y = std * rng.normal(size=(n, 3)) * np.array([1.0, 0.5, 2.0])
    kw = dict(levels=Q19, marginal=False, n_bins=5, n_boot=0)
    none = uq.qce(y, 0.0, std, variable_names=["x", "y", "z"], **kw)
    assert none["qce"].dims == ("level", "variable")
    assert none["variable"].values.tolist() == ["x", "y", "z"]
    assert none["bin_coverage"].dims == ("level", "variable", "bin")
    assert none["bin_lower"].dims == ("variable", "bin")
    batch = uq.qce(y, 0.0, std, reduction="batchmean", **kw)
    np.testing.assert_allclose(batch["qce"].values, none["qce"].mean("level").values)
    mean = uq.qce(y, 0.0, std, reduction="mean", **kw)
    assert mean["qce"].dims == () and mean["qce"].item() == pytest.approx(none["qce"].mean().item())
    assert isinstance(uq.qce_to_numpy(mean), float)
    # the dimension with the too-large std (0.5 factor) over-covers, the 2x one under-covers
    cov = none["coverage"]
    assert bool((cov.sel(variable="y") > cov["level"]).all())
    assert bool((cov.sel(variable="z") < cov["level"]).all())


def test_samples_equal_mean_std_input_when_built_with_that_mean_and_std():
    rng = np.random.default_rng(6)
    n, r = 200, 30
    mean = rng.normal(size=(n, 2))
    std = rng.uniform(0.5, 2.0, size=(n, 2))
    y = mean + 1.3 * std * rng.normal(size=(n, 2))
    x = rng.normal(size=(r, n, 2))
    x = (x - x.mean(0)) / x.std(0)  # exactly mean 0, std 1 (ddof = 0)
    samples = mean + std * x
    kw = dict(levels=Q19, marginal=False, n_bins=6, n_boot=0)
    a = uq.qce(y, mean, std, **kw)
    b = uq.qce(y, samples=samples, **kw)
    for v in ("qce", "coverage", "bin_count", "qce_map"):
        np.testing.assert_allclose(b[v].values, a[v].values, rtol=0, atol=1e-12)
    assert b.attrs["input"] == "samples:normal"
    # 1-D
    a1 = uq.qce(y[:, 0], mean[:, 0], std[:, 0], **kw)
    b1 = uq.qce(y[:, 0], samples=samples[..., 0], **kw)
    np.testing.assert_allclose(b1["qce"].values, a1["qce"].values, atol=1e-12)
    # mvnormal: samples with exactly a given covariance give the covariance result
    cov = _spd(rng, n, 2)
    w = rng.normal(size=(r, n, 2))
    w -= w.mean(0)
    s_chol = np.linalg.cholesky(np.einsum("rni,rnj->nij", w, w) / r)
    w = np.einsum("nij,rnj->rni", np.linalg.inv(s_chol), w)  # whitened: sample cov = I
    draws = mean + np.einsum("nij,rnj->rni", np.linalg.cholesky(cov), w)
    c1 = uq.qce(y, mean, cov, **kw)
    c2 = uq.qce(y, samples=draws, sample_model="mvnormal", **kw)
    np.testing.assert_allclose(c2["qce"].values, c1["qce"].values, atol=1e-12)
    np.testing.assert_allclose(
        uq.nees(y, samples=draws, sample_model="mvnormal")["nees"].values,
        uq.nees(y, mean, cov)["nees"].values,
        rtol=1e-9,
    )


# --------------------------------------------------------------------------
# invalid input
# --------------------------------------------------------------------------
def test_invalid_covariances_report_count_and_indices():
    rng = np.random.default_rng(7)
    cov = _spd(rng, 40, 3)
    cov[5] = [[1.0, 0.5, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]  # not symmetric
    cov[12] = np.diag([1.0, -1.0, 1.0])  # not positive definite
    cov[30] = np.ones((3, 3))  # singular (rank 1)
    cov[31] = np.diag([1.0, 0.0, 1.0])  # singular
    y = rng.normal(size=(40, 3))
    with pytest.raises(ValueError) as err:
        uq.qce(y, 0.0, cov, levels=[0.5])
    msg = str(err.value)
    assert "4 of 40 covariance matrices" in msg
    assert "not symmetric: 1 point(s) at [5]" in msg
    assert "not positive definite: 1 point(s) at [12]" in msg
    assert "singular: 2 point(s) at [30, 31]" in msg
    with pytest.raises(ValueError, match="non-finite: 1 point"):
        bad = cov.copy()
        bad[2, 0, 0] = np.nan
        uq.nees(y, 0.0, bad)
    # more than 10: the first 10 indices and an ellipsis
    many = _spd(rng, 30, 2)
    many[10:25] = [[1.0, 2.0], [2.0, 1.0]]
    with pytest.raises(
        ValueError,
        match=r"15 of 30 .* at \[10, 11, 12, 13, 14, 15, 16, 17, 18, "
        r"19, \.\.\.\]",
    ):
        uq.nees(rng.normal(size=(30, 2)), 0.0, many)


def test_bad_inputs_name_the_problem():
    y = np.array([0.1, 0.2, 0.3])
    with pytest.raises(
        ValueError,
        match=r"scale: standard deviations must be > 0; 2 point\(s\), "
        r"first at \[0, 2\]",
    ):
        uq.qce(y, 0.0, [0.0, 1.0, -1.0], levels=[0.5])
    with pytest.raises(ValueError, match="levels must be in"):
        uq.qce(y, 0.0, np.ones(3), levels=[0.5, 1.0])
    # no levels: the documented default 0.05, 0.10, ..., 0.95
    default = uq.qce(y, 0.0, np.ones(3), n_boot=0)
    np.testing.assert_array_equal(default["level"].values, Q19)
    assert default.identical(uq.qce(y, 0.0, np.ones(3), levels=Q19, n_boot=0))
    with pytest.raises(ValueError, match="reduction"):
        uq.qce(y, 0.0, np.ones(3), levels=[0.5], reduction="sum")
    with pytest.raises(ValueError, match="scale: expected shape"):
        uq.qce(y, 0.0, np.ones(4), levels=[0.5])
    with pytest.raises(
        ValueError,
        match=r"y: NaN or infinite values in 1 point\(s\), "
        r"first at \[1\]",
    ):
        uq.nees([0.0, np.nan], 0.0, [1.0, 1.0])
    with pytest.raises(ValueError, match="not both"):
        uq.qce(y, 0.0, np.ones(3), samples=np.ones((4, 3)), levels=[0.5])
    with pytest.raises(ValueError, match="hpdi"):
        uq.nees(y, samples=np.ones((4, 3)), sample_model="hpdi")
    with pytest.raises(ValueError, match="zero spread"):
        uq.qce(y, samples=np.ones((4, 3)), levels=[0.5])


# --------------------------------------------------------------------------
# intervals and the NEES test
# --------------------------------------------------------------------------
def test_mqce_jackknife_acceleration_equals_brute_force():
    rng = np.random.default_rng(8)
    inside = rng.random(57) < 0.3
    n = inside.size
    for tau in (0.1, 0.3, 0.32, 0.6):
        jack = np.array([abs(np.delete(inside, i).mean() - tau) for i in range(n)])
        exact = kn.mqce_jackknife(inside[None, :], [tau])[0]
        np.testing.assert_allclose(exact, jack, rtol=0, atol=1e-15)
        assert float(bca.acceleration(exact)) == pytest.approx(
            float(bca.acceleration(jack)), abs=1e-12
        )


def test_signed_jackknife_acceleration_and_folding():
    rng = np.random.default_rng(14)
    inside = rng.random(40) < 0.7
    jack = np.array([np.delete(inside, i).mean() - 0.6 for i in range(40)])
    exact = kn.mqce_jackknife(inside[None, :], [0.6], signed=True)[0]
    assert float(bca.acceleration(exact)) == pytest.approx(float(bca.acceleration(jack)), abs=1e-12)
    lo, hi = kn.fold_interval(np.array([-0.1, 0.02, -0.3]), np.array([0.05, 0.04, -0.1]))
    np.testing.assert_allclose(lo, [0.0, 0.02, 0.1])
    np.testing.assert_allclose(hi, [0.1, 0.04, 0.3])


def test_folded_mqce_interval_holds_zero_for_calibrated_models():
    # |coverage - tau| is biased away from 0: a BCa interval on it ("direct")
    # excludes 0 far too often for a calibrated model; the folded one does not
    tau = np.array([0.2, 0.5, 0.8, 0.9])
    excluded = {"bca": 0, "bca-direct": 0}
    for seed in range(12):
        rng = np.random.default_rng(100 + seed)
        u = rng.uniform(0.5, 2.0, 1000)
        y = u * rng.standard_normal(1000)
        for mode in excluded:
            res = uq.qce(y, 0.0, u, levels=tau, n_boot=500, method=mode, rng=seed)
            excluded[mode] += int((res["m_qce_lower"] > 0).sum())
    assert excluded["bca"] <= 8  # of 48 (expected about 2.4)
    assert excluded["bca-direct"] >= 15


def test_pattern_bootstrap_has_the_moments_of_index_resampling():
    rng = np.random.default_rng(9)
    nees_vals = rng.chisquare(1, size=500)
    inside = kn.inside_from_nees(nees_vals, stats.chi2.ppf([0.2, 0.5, 0.9], 1))
    reps = kn.pattern_bootstrap(inside, 20000, np.random.default_rng(1))  # (q, B)
    p = inside.mean(axis=1)
    np.testing.assert_allclose(reps.mean(axis=1) / 500, p, atol=0.003)
    np.testing.assert_allclose(reps.var(axis=1), 500 * p * (1 - p), rtol=0.05)
    # nesting is kept within each replicate: more inside at a larger tau
    assert np.all(np.diff(reps, axis=0) >= 0)


def test_bca_interval_of_mqce_is_reproducible_and_brackets_the_estimate():
    rng = np.random.default_rng(10)
    u = rng.uniform(0.5, 2, 3000)
    y = 1.15 * u * rng.standard_normal(3000)
    a = uq.qce(y, 0.0, u, levels=Q19, n_boot=1000, rng=3)
    b = uq.qce(y, 0.0, u, levels=Q19, n_boot=1000, rng=3)
    np.testing.assert_array_equal(a["m_qce_lower"].values, b["m_qce_lower"].values)
    lo, hi, est = a["m_qce_lower"].values, a["m_qce_upper"].values, a["m_qce"].values
    ok = np.isfinite(lo)
    assert ok.sum() >= 15
    assert np.all(lo[ok] <= est[ok] + 1e-12) and np.all(est[ok] <= hi[ok] + 1e-12)
    assert a.attrs["rng"] == 3 and a.attrs["method"] == "bca"
    # 15 % too narrow: the central levels' M-QCE intervals exclude 0
    assert np.all(lo[(Q19 > 0.3) & (Q19 < 0.9)] > 0)


def test_nees_test_statistic_and_p_value():
    rng = np.random.default_rng(12)
    n, d = 2000, 3
    cov = _spd(rng, n, d)
    y = _mvn(rng, cov)
    res = uq.nees_test(y, 0.0, cov)
    eps = np.einsum("ni,nij,nj->n", y, np.linalg.inv(cov), y)
    assert res["nees_sum"].item() == pytest.approx(eps.sum(), rel=1e-10)
    assert res["dof"].item() == n * d and res["reference"].item() == d
    cdf = stats.chi2.cdf(eps.sum(), n * d)
    assert res["p_value"].item() == pytest.approx(2 * min(cdf, 1 - cdf), rel=1e-8)
    assert bool(res["valid"])
    wide = uq.nees_test(1.2 * y, 0.0, cov)
    assert not bool(wide["valid"]) and wide["estimate"].item() > wide["reference_upper"].item()


def _mvt(rng, n, d, nu, scale=1.0):
    """Calibrated unit-covariance multivariate Student-t errors (inf: normal), std uE."""
    g = rng.standard_normal((n, d))
    if np.isfinite(nu):
        g *= np.sqrt((nu - 2.0) / rng.chisquare(nu, (n, 1)))
    u = np.exp(0.5 * rng.standard_normal((n, d)))
    return scale * u * g, u


@pytest.mark.parametrize("d", [1, 3])
def test_nees_heavy_tails_widen_the_zone_of_doubt(d):
    """Issue 36: under a failed tail screen a calibrated heavy-tailed set reads "unreliable"
    (never "OK"), uE twice too small (or too large) under t3 reads "fails"."""
    rng = np.random.default_rng(40 + d)
    y, u = _mvt(rng, 3000, d, 3.0)
    arg = (y, 0.0, u) if d > 1 else (y[:, 0], 0.0, u[:, 0])
    res = uq.nees_test(*arg)
    assert not bool(res["reliable"]) and str(res["verdict"].values) == "unreliable"
    assert float(res["verdict_p_value"]) == float(res["null_p_value"]) > 0.05
    assert 2.1 < float(res["tail_df_lower"]) < float(res["tail_df"]) < 4.5
    assert "heavier-tailed than chi2(d)" in str(res["reason"].values)
    for k in (2.0, 0.5):
        bad = uq.nees_test(k * arg[0], 0.0, arg[2])
        assert str(bad["verdict"].values) == "fails" and not bool(bad["reliable"])
        assert float(bad["null_p_value"]) <= 0.05
    y, u = _mvt(rng, 3000, d, np.inf)
    arg = (y, 0.0, u) if d > 1 else (y[:, 0], 0.0, u[:, 0])
    good = uq.nees_test(*arg)
    assert bool(good["reliable"]) and str(good["verdict"].values) == "OK"
    assert float(good["verdict_p_value"]) == float(good["p_value"])
    assert str(uq.nees_test(1.5 * arg[0], 0.0, arg[2])["verdict"].values) == "fails"


def test_nees_small_calibrated_heavy_tailed_sets_do_not_cry_wolf():
    """Issue 36: 20 points cannot show their tails (the screen passes), so the tail-allowing
    test decides below 1000 points, over the 99.9 % set of degrees of freedom (Berger & Boos
    (1994)): calibrated t6 sets read "fails" in at most 5 % (+2 se) of 150 sets, where the
    chi-square test alone rejects more (t-tails spread the sum of NEES); below 10 points
    "not tested"."""
    n_sets, fails, chi2_rejects = 150, 0, 0
    for s in range(n_sets):
        g = np.random.default_rng([36, s])
        u = np.exp(0.5 * g.standard_normal(20))
        res = uq.nees_test(u * g.standard_t(6.0, 20) / np.sqrt(1.5), 0.0, u)
        fails += str(res["verdict"].values) == "fails"
        chi2_rejects += not bool(res["valid"])
        assert float(res["verdict_p_value"]) == float(res["null_p_value"])
    se = np.sqrt(0.05 * 0.95 / n_sets)
    assert fails / n_sets <= 0.05 + 2 * se
    assert chi2_rejects > fails
    few = uq.nees_test(np.ones(9), 0.0, np.ones(9))
    assert str(few["verdict"].values) == "not tested" and "fewer than the 10" in str(
        few["reason"].values
    )


def test_nees_null_p_value_over_a_set_is_the_largest_plus_its_level():
    rng = np.random.default_rng(8)
    z = rng.standard_t(4.0, 3000) / np.sqrt(2.0)
    eps = (1.1 * z) ** 2
    region = nees_tail_region(eps, 1)
    assert region.size >= 2 and region[0] < 4.0 < region[-1]
    singles = [nees_null_p_value(eps, 1, nu) for nu in region]
    assert nees_null_p_value(eps, 1, region) == pytest.approx(min(1.0, max(singles) + 0.001))
    assert np.isnan(nees_null_p_value(eps, 1, np.array([])))


def test_nees_mvt_fit_is_the_t_fit_in_one_dimension():
    from uqviz._array import tails

    z = np.random.default_rng(3).standard_t(3.5, 4000)
    np.testing.assert_allclose(
        kn.mvt_profile(z * z, 1, tails.PROFILE_DF), tails.t_profile(z), rtol=1e-9
    )
    assert kn.mvt_tail_df(z * z, 1) == pytest.approx(tails.tail_df(z), rel=1e-9)


@pytest.mark.parametrize(
    "d, nu, mean", [(1, 3.0, 1.4), (1, 5.0, 0.9), (3, 3.0, 1.3), (3, 4.0, 0.85), (2, 6.0, 1.1)]
)
def test_nees_null_p_value_equals_a_direct_simulation(d, nu, mean):
    """The tail-allowing p-value against an independent simulation: calibrated sets of
    multivariate t vectors (normal / sqrt(chi2(nu) / (nu - 2)) per point), their NEES
    |x|^2, the two-sided rank of the observed mean NEES."""
    n, sets = 300, 4000
    g = np.random.default_rng([7, d, int(nu)])
    x = g.standard_normal((sets, n, d)) * np.sqrt((nu - 2.0) / g.chisquare(nu, (sets, n, 1)))
    sims = np.mean(np.sum(x * x, axis=2), axis=1)
    f = np.mean(sims <= mean * d)
    direct = 2 * min(f, 1 - f)
    eps = np.full(n, mean * d)  # a set of that mean NEES (only the mean is read)
    got = nees_null_p_value(eps, d, nu)
    se = np.sqrt(direct * (1 - direct) / sets) + np.sqrt(direct * (1 - direct) / 2000)
    assert got == pytest.approx(direct, abs=max(4 * se, 0.01))


# --------------------------------------------------------------------------
# plots
# --------------------------------------------------------------------------
def test_plots_return_axes_and_use_the_result_only():
    rng = np.random.default_rng(13)
    std = rng.uniform(0.5, 2, size=(400, 2))
    y = std * rng.normal(size=(400, 2))
    res = uq.qce(y, 0.0, std, levels=Q19, marginal=False, n_bins=5, n_boot=0)
    ax = quantile_reliability(res)
    assert len(ax.lines) == 3  # two dimensions + diagonal
    ax2 = quantile_reliability(res, variable=1, kind="deviation")
    np.testing.assert_allclose(
        ax2.lines[0].get_ydata(), res["coverage"].sel(variable=1).values - Q19
    )
    with pytest.raises(ValueError, match="variable: choose"):
        coverage_map(res)
    fig, axs = plt.subplots(1, 2)
    assert coverage_map(res, variable=0, ax=axs[0], annotate=True) is axs[0]
    marg = uq.qce(y, 0.0, std, levels=Q19, n_boot=0)
    with pytest.raises(ValueError, match="marginal=False"):
        coverage_map(marg, variable=0)
    plt.close("all")


def test_qce_accepts_a_uqviz_dataset():
    ds = from_arrays([0.1, -0.5, 0.3, 1.2], [0.2, 0.4, 0.3, 0.5])
    res = uq.qce(ds, levels=[0.5, 0.9], n_boot=0)
    ref = uq.qce(ds["E"].values, 0.0, ds["uE"].values, levels=[0.5, 0.9], n_boot=0)
    np.testing.assert_array_equal(res["qce"].values, ref["qce"].values)
    with pytest.raises(ValueError, match="mean, scale, samples: leave them unset"):
        uq.qce(ds, 0.0, [1.0], levels=[0.5])
