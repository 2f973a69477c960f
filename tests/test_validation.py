"""validate_average and tailedness: structure, numbers, invariances, reproducibility."""

import numpy as np
import pytest
import xarray as xr
from hypothesis import given, settings
from hypothesis import strategies as st

import uqviz
from uqviz._array.bca import zeta_score
from uqviz.statistics import list_statistics, point_estimate


def _calibrated(m, seed, nu=6.0):
    rng = np.random.default_rng(seed)
    u = np.sqrt(nu / 2 / rng.gamma(nu / 2, 1.0, m))
    return u * rng.standard_normal(m), u


def test_result_layout_and_zeta_definition():
    e, u = _calibrated(1500, 0)
    res = uqviz.validate_average(uqviz.from_arrays(e, u), statistics=("ZMS", "RCE", "NLL"),
                                 n_boot=2000, rng=1)
    assert list(res["statistic"].values) == ["ZMS", "RCE", "NLL"]
    for var in ["estimate", "reference", "bias", "se", "ci_lower", "ci_upper", "zeta", "valid"]:
        assert res[var].dims == ("statistic",)
    assert res.attrs["n_boot"] == 2000 and res.attrs["method"] == "bca"
    np.testing.assert_allclose(res["estimate"], [point_estimate(s, e, u)
                                                 for s in ["ZMS", "RCE", "NLL"]], rtol=1e-12)
    np.testing.assert_allclose(res["reference"][:2], [1.0, 0.0])
    # NLL's reference is the NLL of a calibrated set with the same uE (002 eq. 16)
    assert float(res["reference"][2]) == pytest.approx(point_estimate("NLL_ref", e, u))
    expected = zeta_score(res.estimate, res.reference, res.ci_lower, res.ci_upper)
    np.testing.assert_allclose(res["zeta"], expected)
    np.testing.assert_array_equal(res["valid"], (res.ci_lower <= res.reference)
                                  & (res.reference <= res.ci_upper))
    # NLL - NLL_ref = (ZMS - 1)/2: testing NLL is testing ZMS
    assert float(res.zeta[2]) == pytest.approx(float(res.zeta[0]), rel=1e-6)


def test_se_and_bias_are_those_of_the_replicates():
    e, u = _calibrated(800, 2)
    res = uqviz.validate_average(uqviz.from_arrays(e, u), n_boot=3000, rng=5,
                                 return_replicates=True)
    reps = res["replicates"]
    assert reps.dims == ("statistic", "replicate")
    np.testing.assert_allclose(res.se, reps.std("replicate", ddof=1), rtol=1e-12)
    np.testing.assert_allclose(res.bias, reps.mean("replicate") - res.estimate, rtol=1e-9,
                               atol=1e-15)
    # the bootstrap se of ZMS is close to the analytic sd(Z^2)/sqrt(M)
    z2 = (e / u) ** 2
    assert float(res.se.sel(statistic="ZMS")) == pytest.approx(z2.std() / np.sqrt(z2.size),
                                                               rel=0.08)


def test_same_rng_same_numbers_and_different_rng_different():
    ds = uqviz.from_arrays(*_calibrated(500, 3))
    a = uqviz.validate_average(ds, n_boot=1000, rng=7)
    b = uqviz.validate_average(ds, n_boot=1000, rng=7)
    c = uqviz.validate_average(ds, n_boot=1000, rng=8)
    xr.testing.assert_identical(a, b)
    assert not np.array_equal(a.ci_lower.values, c.ci_lower.values)
    gen = uqviz.validate_average(ds, n_boot=1000, rng=np.random.default_rng(7))
    np.testing.assert_array_equal(gen.ci_lower, a.ci_lower)


def test_datatree_adds_dataset_dim_in_tree_order():
    sets = {name: uqviz.from_arrays(*_calibrated(300 + 50 * i, i), name=name)
            for i, name in enumerate(["zeta", "alpha", "mid"])}
    tree = uqviz.from_datasets(sets)
    res = uqviz.validate_average(tree, n_boot=500, rng=0)
    assert res["estimate"].dims == ("dataset", "statistic")
    assert list(res["dataset"].values) == ["zeta", "alpha", "mid"]
    np.testing.assert_allclose(res.estimate.sel(dataset="alpha", statistic="ZMS"),
                               point_estimate("ZMS", sets["alpha"].E.values,
                                              sets["alpha"].uE.values))
    assert list(res["n_points"].values) == [300, 350, 400]


@settings(max_examples=15, deadline=None)
@given(c=st.floats(1e-3, 1e3), seed=st.integers(0, 2**31))
def test_scaling_e_and_u_leaves_zms_rce_and_zeta_unchanged(c, seed):
    e, u = _calibrated(200, seed % 1000)
    a = uqviz.validate_average(uqviz.from_arrays(e, u), n_boot=400, rng=seed)
    b = uqviz.validate_average(uqviz.from_arrays(c * e, c * u), n_boot=400, rng=seed)
    for var in ["estimate", "ci_lower", "ci_upper", "zeta"]:
        np.testing.assert_allclose(a[var], b[var], rtol=1e-7, atol=1e-10)


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**31))
def test_permuting_points_leaves_every_statistic_unchanged(seed):
    e, u = _calibrated(150, seed % 997)
    perm = np.random.default_rng(seed).permutation(e.size)
    for name in list_statistics():
        assert point_estimate(name, e[perm], u[perm]) == pytest.approx(
            point_estimate(name, e, u), rel=1e-10, abs=1e-12)


def test_bca_coverage_of_zms_on_calibrated_normal_data():
    # 600 calibrated sets (M = 500, uE^2 ~ IG(5, 5), D = N(0, 1)): the 95% BCa
    # interval must contain ZMS = 1 in 95% of them, within binomial error.
    n_sets, m = 600, 500
    rng = np.random.default_rng(2024)
    hits = 0
    for i in range(n_sets):
        u = np.sqrt(5.0 / rng.gamma(5.0, 1.0, m))
        e = u * rng.standard_normal(m)
        res = uqviz.validate_average(uqviz.from_arrays(e, u), statistics=("ZMS",),
                                     n_boot=1000, rng=i)
        hits += bool(res.valid.item())
    p = hits / n_sets
    sd = np.sqrt(0.95 * 0.05 / n_sets)
    assert abs(p - 0.95) < 3.5 * sd, p


def test_numpy_engine_gives_the_same_estimates_and_close_intervals():
    ds = uqviz.from_arrays(*_calibrated(2000, 9))
    a = uqviz.validate_average(ds, n_boot=4000, rng=1, engine="numba")
    b = uqviz.validate_average(ds, n_boot=4000, rng=1, engine="numpy")
    np.testing.assert_array_equal(a.estimate, b.estimate)
    # endpoints agree within Monte Carlo error (a fraction of the bootstrap se)
    assert np.all(np.abs(a.ci_lower - b.ci_lower) < 0.15 * a.se)
    assert np.all(np.abs(a.ci_upper - b.ci_upper) < 0.15 * a.se)


def test_generic_statistic_is_bootstrapped_paired_with_moments():
    e, u = _calibrated(300, 4)
    res = uqviz.validate_average(uqviz.from_arrays(e, u), statistics=("CC", "ZMS"),
                                 n_boot=500, rng=2)
    assert np.isnan(res.reference.sel(statistic="CC"))
    assert np.isnan(res.zeta.sel(statistic="CC"))
    assert float(res.ci_lower.sel(statistic="CC")) < float(res.estimate.sel(statistic="CC"))


@pytest.mark.parametrize("method", ["percentile", "basic"])
def test_other_interval_methods(method):
    ds = uqviz.from_arrays(*_calibrated(400, 1))
    res = uqviz.validate_average(ds, n_boot=2000, rng=3, method=method, return_replicates=True)
    reps = res.replicates.sel(statistic="ZMS").values
    q = np.quantile(reps, [0.025, 0.975])
    est = float(res.estimate.sel(statistic="ZMS"))
    expected = q if method == "percentile" else 2 * est - q[::-1]
    np.testing.assert_allclose([float(res.ci_lower[0]), float(res.ci_upper[0])], expected)


def test_bad_arguments():
    ds = uqviz.from_arrays(*_calibrated(100, 0))
    with pytest.raises(ValueError, match="unknown statistic"):
        uqviz.validate_average(ds, statistics=("ZMSS",))
    with pytest.raises(ValueError, match="n_boot"):
        uqviz.validate_average(ds, n_boot=1)
    with pytest.raises(TypeError, match="Dataset or xarray.DataTree"):
        uqviz.validate_average(np.ones(3))
    bad = ds.copy()
    bad["uE"] = bad["uE"].where(bad.point != bad.point[0], -1.0)
    with pytest.raises(ValueError, match="uE.*1 row"):
        uqviz.validate_average(bad)


def test_tailedness_layout_and_thresholds():
    light = uqviz.from_arrays(*_calibrated(20000, 1, nu=40.0))
    t = uqviz.tailedness(light)
    assert list(t["variable"].values) == ["uE2", "E2", "Z2"]
    np.testing.assert_allclose(t.threshold, [0.6, 0.8, 0.8])
    # squared normal z-scores: beta_GM about 0.64, below the 0.8 limit
    assert float(t.beta_gm.sel(variable="Z2")) == pytest.approx(0.64, abs=0.02)
    assert not bool(t.exceeds.any())
    heavy = uqviz.from_arrays(*_calibrated(20000, 1, nu=2.0))
    assert bool(uqviz.tailedness(heavy).exceeds.sel(variable="uE2"))
