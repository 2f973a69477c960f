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
    res = uqviz.validate_average(
        uqviz.from_arrays(e, u), statistics=("ZMS", "RCE", "NLL"), n_boot=2000, rng=1
    )
    assert list(res["statistic"].values) == ["ZMS", "RCE", "NLL"]
    for var in ["estimate", "reference", "bias", "se", "ci_lower", "ci_upper", "zeta", "valid"]:
        assert res[var].dims == ("statistic",)
    assert res.attrs["n_boot"] == 2000 and res.attrs["method"] == "bca"
    np.testing.assert_allclose(
        res["estimate"], [point_estimate(s, e, u) for s in ["ZMS", "RCE", "NLL"]], rtol=1e-12
    )
    np.testing.assert_allclose(res["reference"][:2], [1.0, 0.0])
    # NLL's reference is the NLL of a calibrated set with the same uE (Pernot (2024c) eq. 16)
    assert float(res["reference"][2]) == pytest.approx(point_estimate("NLL_ref", e, u))
    expected = zeta_score(res.estimate, res.reference, res.ci_lower, res.ci_upper)
    np.testing.assert_allclose(res["zeta"], expected)
    np.testing.assert_array_equal(
        res["valid"], (res.ci_lower <= res.reference) & (res.reference <= res.ci_upper)
    )
    # NLL - NLL_ref = (ZMS - 1)/2: testing NLL is testing ZMS
    assert float(res.zeta[2]) == pytest.approx(float(res.zeta[0]), rel=1e-6)


def test_se_and_bias_are_those_of_the_replicates():
    e, u = _calibrated(800, 2)
    res = uqviz.validate_average(
        uqviz.from_arrays(e, u), n_boot=3000, rng=5, return_replicates=True
    )
    reps = res["replicates"]
    assert reps.dims == ("statistic", "replicate")
    np.testing.assert_allclose(res.se, reps.std("replicate", ddof=1), rtol=1e-12)
    np.testing.assert_allclose(
        res.bias, reps.mean("replicate") - res.estimate, rtol=1e-9, atol=1e-15
    )
    # the bootstrap se of ZMS is close to the analytic sd(Z^2)/sqrt(M)
    z2 = (e / u) ** 2
    assert float(res.se.sel(statistic="ZMS")) == pytest.approx(
        z2.std() / np.sqrt(z2.size), rel=0.08
    )


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
    sets = {
        name: uqviz.from_arrays(*_calibrated(300 + 50 * i, i), name=name)
        for i, name in enumerate(["zeta", "alpha", "mid"])
    }
    tree = uqviz.from_datasets(sets)
    res = uqviz.validate_average(tree, n_boot=500, rng=0)
    assert res["estimate"].dims == ("dataset", "statistic")
    assert list(res["dataset"].values) == ["zeta", "alpha", "mid"]
    np.testing.assert_allclose(
        res.estimate.sel(dataset="alpha", statistic="ZMS"),
        point_estimate("ZMS", sets["alpha"].E.values, sets["alpha"].uE.values),
    )
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
            point_estimate(name, e, u), rel=1e-10, abs=1e-12
        )


def test_bca_coverage_of_zms_on_calibrated_normal_data():
    # 600 calibrated sets (M = 500, uE^2 ~ IG(5, 5), D = N(0, 1)): the 95% BCa
    # interval must contain ZMS = 1 in 95% of them, within binomial error.
    n_sets, m = 600, 500
    rng = np.random.default_rng(2024)
    hits = 0
    for i in range(n_sets):
        u = np.sqrt(5.0 / rng.gamma(5.0, 1.0, m))
        e = u * rng.standard_normal(m)
        res = uqviz.validate_average(
            uqviz.from_arrays(e, u), statistics=("ZMS",), n_boot=1000, rng=i
        )
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
    res = uqviz.validate_average(
        uqviz.from_arrays(e, u), statistics=("CC", "ZMS"), n_boot=500, rng=2
    )
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
    assert not bool(t.heavy_tail.any())
    heavy = uqviz.from_arrays(*_calibrated(20000, 1, nu=2.0))
    assert bool(uqviz.tailedness(heavy).heavy_tail.sel(variable="uE2"))


# --------------------------------------------------------------------------
# issue 11: verdicts, tailedness screen, bad input
# --------------------------------------------------------------------------
def _quiet(data, **kw):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return uqviz.validate_average(data, **kw)


def test_reference_outside_the_interval_is_never_valid():
    # ZMS = 5e21 with CI [9, 2.5e22]: (est - ref)/(est - lower) rounds to 1.0
    ds = uqviz.from_arrays(np.r_[[3.0] * 199, 1e12], np.ones(200))
    res = _quiet(ds, n_boot=1000, rng=0)
    zms = res.sel(statistic="ZMS")
    assert float(zms.ci_lower) > 1.0  # reference below the interval
    assert not bool(zms.valid) and abs(float(zms.zeta)) > 1.0
    np.testing.assert_array_equal(
        res.valid, (res.ci_lower <= res.reference) & (res.reference <= res.ci_upper)
    )
    assert np.all((np.abs(res.zeta) <= 1) == res.valid)


def test_an_aberrant_outlier_is_flagged_unreliable_with_a_warning():
    e, u = _calibrated(1000, 3, nu=20.0)
    e = e.copy()
    e[17] = 1e13 * u[17]  # ZMS ~ 1e23
    ds = uqviz.from_arrays(e, u)
    with pytest.warns(UserWarning, match=r"ZMS: beta_GM\(Z2\) = 1.00 > 0.8") as rec:
        res = uqviz.validate_average(ds, statistics=("ZMS", "RCE", "ZM"), n_boot=500, rng=0)
    assert float(res.estimate.sel(statistic="ZMS")) > 1e20
    assert res.reliable.values.tolist() == [False, False, True]  # ZM is not screened
    msg = str(rec[0].message)
    assert "Pernot (2024b), Table II" in msg and "RCE" in msg
    # the screen is the one of tailedness()
    t = uqviz.tailedness(ds)
    np.testing.assert_allclose(res.beta_gm, t.beta_gm)


def test_reliable_follows_table_ii():
    # light tails: every statistic reliable, no warning
    ds = uqviz.from_arrays(*_calibrated(20000, 1, nu=40.0))
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        res = uqviz.validate_average(ds, statistics=("ZMS", "RCE", "NLL"), n_boot=200, rng=0)
    assert bool(res.reliable.all())
    # heavy-tailed uncertainties (beta_GM(uE2) > 0.6) question RCE only
    heavy = uqviz.from_arrays(*_calibrated(20000, 1, nu=2.0))
    t = uqviz.tailedness(heavy)
    assert bool(t.heavy_tail.sel(variable="uE2"))
    res = _quiet(heavy, statistics=("ZMS", "RCE", "RCE2"), n_boot=200, rng=0)
    expected_zms = not bool(t.heavy_tail.sel(variable="Z2"))  # ZMS: Z^2 screen only
    assert res.reliable.values.tolist() == [expected_zms, False, False]


def test_tree_warning_names_the_dataset():
    e, u = _calibrated(500, 2, nu=20.0)
    bad = e.copy()
    bad[0] = 1e12
    tree = uqviz.from_datasets({"good": uqviz.from_arrays(e, u), "bad": uqviz.from_arrays(bad, u)})
    with pytest.warns(UserWarning, match="bad/ZMS"):
        res = uqviz.validate_average(tree, n_boot=200, rng=0)
    assert res.reliable.dims == ("dataset", "statistic")
    assert res.reliable.sel(dataset="good").all() and not res.reliable.sel(dataset="bad").any()


@pytest.mark.parametrize("m", [1, 2])
def test_too_few_points_is_a_clear_error(m):
    # M = 1 or 2 gave zeta = +-inf; 3 is the fewest points with a defined jackknife of ZVar
    ds = uqviz.from_arrays(np.arange(1.0, m + 1), np.ones(m))
    with pytest.raises(ValueError, match="at least 3 points"):
        uqviz.validate_average(ds, n_boot=100, rng=0)


def test_three_points_give_a_result_without_inf():
    ds = uqviz.from_arrays([0.5, -1.0, 2.0], [1.0, 1.0, 2.0])
    res = _quiet(ds, n_boot=200, rng=0)
    assert np.all(np.isfinite(res.estimate))
    assert not np.any(np.isinf(res.zeta))


@pytest.mark.parametrize("stat", ["ENCE", "UCE", "ZMSE"])
def test_binned_statistics_point_to_the_right_functions(stat):
    ds = uqviz.from_arrays(*_calibrated(400, 0))
    with pytest.raises(ValueError, match="validate_simulated") as err:
        uqviz.validate_average(ds, statistics=("ZMS", stat), n_boot=100)
    assert stat in str(err.value) and "binned_errors" in str(err.value)


def test_statistics_without_reference_warn_and_have_finite_intervals():
    ds = uqviz.from_arrays(*_calibrated(400, 0, nu=40.0))
    with pytest.warns(UserWarning, match=r"\['CC'\] have no predefined reference"):
        res = uqviz.validate_average(ds, statistics=("CC", "ZMS"), n_boot=300, rng=0)
    cc = res.sel(statistic="CC")
    assert np.isfinite(float(cc.ci_lower)) and np.isfinite(float(cc.ci_upper))
    assert not bool(cc.valid)


def test_nan_intervals_are_not_valid_and_counted():
    ds = uqviz.from_arrays([0.5, -1.0, 2.0, 0.1], [1.0, 1.0, 2.0, 1.0])
    # n_boot = 2, rng = 4: both replicates on one side of the estimate (z0 infinite)
    with pytest.warns(UserWarning, match=r"2 of 2 intervals could not be computed"):
        res = uqviz.validate_average(ds, n_boot=2, rng=4)
    assert res.ci_lower.isnull().all()
    assert not res.valid.any()
    with pytest.warns(UserWarning, match=r"1 of 2 intervals could not be computed .*\['RCE'\]"):
        res = uqviz.validate_average(ds, n_boot=2, rng=5)
    assert res.valid.values.tolist() == [bool(res.valid[0]), False]


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        (dict(n_boot=2.5), ValueError, "n_boot"),
        (dict(n_boot=True), TypeError, "n_boot"),
        (dict(ci=1.5), ValueError, "ci"),
        (dict(ci=0), ValueError, "ci"),
        (dict(method="student-t"), ValueError, "method"),
        (dict(statistics=()), ValueError, "statistics"),
        (dict(statistics=("ZMS", "ZMS")), ValueError, "statistics"),
        (dict(rng=np.random.RandomState(0)), TypeError, "rng"),
        (dict(engine="cuda"), ValueError, "engine"),
        (dict(return_replicates=1), TypeError, "return_replicates"),
    ],
)
def test_options_are_checked(kwargs, error, match):
    ds = uqviz.from_arrays(*_calibrated(100, 0))
    with pytest.raises(error, match=match):
        uqviz.validate_average(ds, **kwargs)


def test_settings_in_attrs():
    ds = uqviz.from_arrays(*_calibrated(300, 0, nu=40.0))
    res = _quiet(ds, statistics=("ZMS",), n_boot=100, ci=0.9, rng=4)
    assert res.attrs["statistics"] == ["ZMS"] and res.attrs["ci"] == 0.9
    assert res.attrs["rng"] == 4 and res.attrs["n_boot"] == 100
    assert _quiet(ds, n_boot=100, rng=np.random.default_rng(0)).attrs["rng"] == "Generator"
    assert all(f"{k:03d}" not in str(res.attrs) for k in range(5))  # author-year only


def test_nll_zeta_equals_zms_zeta_for_every_method():
    ds = uqviz.from_arrays(*_calibrated(800, 5, nu=40.0))
    for method in ("bca", "percentile", "basic"):
        res = _quiet(ds, statistics=("ZMS", "NLL"), n_boot=1000, rng=2, method=method)
        assert float(res.zeta.sel(statistic="NLL")) == pytest.approx(
            float(res.zeta.sel(statistic="ZMS")), rel=1e-6, abs=1e-9
        ), method
        assert bool(res.valid.sel(statistic="NLL")) == bool(res.valid.sel(statistic="ZMS"))


def test_statistics_errors_name_the_option_and_options_are_checked_first():
    ds = uqviz.from_arrays(*_calibrated(100, 0))
    with pytest.raises(ValueError, match="statistics: unknown statistic 'nope'"):
        uqviz.validate_average(ds, statistics=("nope",))
    with pytest.raises(TypeError, match="statistics"):
        uqviz.validate_average(ds, statistics=5)
    with pytest.raises(TypeError, match="statistics"):
        uqviz.validate_average(ds, statistics=("ZMS", 5))
    # a bad n_boot is reported as such, not hidden behind the refusal of a binned statistic
    with pytest.raises(ValueError, match="n_boot"):
        uqviz.validate_average(ds, statistics=("ENCE",), n_boot=2.5)


# --------------------------------------------------------------------------
# issue 20: p-values, the ZMS tail screen, the warning digits
# --------------------------------------------------------------------------
@pytest.mark.parametrize("method", ["bca", "percentile", "basic"])
def test_p_value_is_consistent_with_valid(method):
    ci = 0.9
    for seed in range(6):
        e, u = _calibrated(300, seed, nu=8.0)
        e = e * (1.0 + 0.08 * seed)  # from calibrated to clearly not
        res = _quiet(
            uqviz.from_arrays(e, u),
            statistics=("ZMS", "RCE", "NLL", "ZVar"),
            n_boot=500,
            ci=ci,
            rng=seed,
            method=method,
        )
        p = res.p_value.values
        assert np.all((p >= 0) & (p <= 1))
        np.testing.assert_array_equal(p <= 1 - ci, ~res.valid.values)
        # NLL is bootstrapped as its excess over the reference: its verdict is the ZMS's
        assert float(res.p_value.sel(statistic="NLL")) == pytest.approx(
            float(res.p_value.sel(statistic="ZMS")), rel=1e-9, abs=1e-12
        )


def test_p_value_from_the_replicates_by_hand():
    ds = uqviz.from_arrays(*_calibrated(400, 3, nu=8.0))
    res = _quiet(
        ds, statistics=("ZMS",), n_boot=800, rng=1, return_replicates=True, method="percentile"
    )
    r = res.sel(statistic="ZMS")
    reps = np.sort(r.replicates.values)
    k = np.searchsorted(reps, 1.0) - 1  # reps[k] < 1 <= reps[k + 1]
    g = (k + (1.0 - reps[k]) / (reps[k + 1] - reps[k])) / (reps.size - 1)
    assert float(r.p_value) == pytest.approx(2 * min(g, 1 - g), rel=1e-12)
    # and the same numbers without return_replicates
    res2 = _quiet(ds, statistics=("ZMS",), n_boot=800, rng=1, method="percentile")
    assert float(res2.p_value.sel(statistic="ZMS")) == float(r.p_value)


def test_p_value_nan_without_reference_or_interval():
    ds = uqviz.from_arrays(*_calibrated(400, 0, nu=40.0))
    res = _quiet(ds, statistics=("CC", "ZMS"), n_boot=300, rng=0)
    assert np.isnan(float(res.p_value.sel(statistic="CC")))
    assert np.isfinite(float(res.p_value.sel(statistic="ZMS")))
    bad = _quiet(uqviz.from_arrays([0.5, -1.0, 2.0, 0.1], [1.0, 1.0, 2.0, 1.0]), n_boot=2, rng=4)
    assert bad.p_value.isnull().all() and not bad.valid.any()
    assert "p_value" in uqviz.validate_average.__doc__


def _lognormal_u(m, seed, nu_t=None):
    rng = np.random.default_rng(seed)
    u = np.exp(0.5 * rng.standard_normal(m))
    z = (
        rng.standard_normal(m)
        if nu_t is None
        else rng.standard_t(nu_t, m) * np.sqrt((nu_t - 2) / nu_t)
    )
    return u * z, u


def test_zms_is_screened_by_z2_only():
    from uqviz.average.validation import TAILEDNESS_SCREENS

    assert TAILEDNESS_SCREENS["ZMS"] == TAILEDNESS_SCREENS["NLL"] == ("Z2",)
    assert TAILEDNESS_SCREENS["ZVar"] == ("Z2",)
    assert TAILEDNESS_SCREENS["RCE"] == ("uE2", "E2", "Z2")
    # calibrated normal z-scores, log-normal uE (sigma 0.5): beta_GM(E2) = 0.8017 fires,
    # beta_GM(Z2) = 0.639 does not; the ZMS stays reliable, RCE does not
    ds = uqviz.from_arrays(*_lognormal_u(5000, 0))
    res = _quiet(ds, statistics=("ZMS", "NLL", "RCE"), n_boot=300, rng=0)
    b = res.beta_gm
    assert float(b.sel(variable="E2")) == pytest.approx(0.8017, abs=1e-4)
    assert float(b.sel(variable="Z2")) == pytest.approx(0.6391, abs=1e-4)
    assert res.reliable.values.tolist() == [True, True, False]
    # unit-variance t3 z-scores: beta_GM(Z2) = 0.851 > 0.8, the ZMS is unreliable
    ds = uqviz.from_arrays(*_lognormal_u(5000, 0, nu_t=3.0))
    with pytest.warns(UserWarning, match=r"ZMS: beta_GM\(Z2\) = 0.85 > 0.8"):
        res = uqviz.validate_average(ds, statistics=("ZMS", "NLL", "RCE"), n_boot=300, rng=0)
    assert not res.reliable.any()


def test_warning_prints_beta_above_its_limit():
    # issue 20: 0.8017 was printed "0.8 > 0.8"
    ds = uqviz.from_arrays(*_lognormal_u(5000, 0))
    with pytest.warns(UserWarning, match=r"RCE: beta_GM\(E2\) = 0\.802 > 0\.8") as rec:
        uqviz.validate_average(ds, statistics=("ZMS", "RCE"), n_boot=200, rng=0)
    assert "ZMS:" not in str(rec[0].message)
    from uqviz.average.validation import beta_text

    assert beta_text(0.8004, 0.8) == "0.8004" and beta_text(0.7996, 0.8) == "0.7996"
    assert beta_text(0.8 + 1e-13, 0.8) == "0.8000000000001"
    assert beta_text(0.97953, 0.8) == "0.98"
