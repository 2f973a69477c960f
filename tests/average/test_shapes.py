"""Distribution shapes: exact KS kernel, minimum-KS fits, Student t fit, Pernot (2024b) Table I,
Pernot (2024c) Table II."""

import numpy as np
import pytest
import xarray as xr
from scipy import stats

import uqviz
from uqviz._array import fits as kf
from uqviz.average.shapes import distribution_shapes, fit_f, fit_inverse_gamma, fit_student_t

SETS = [
    "Diffusion_RF",
    "Perovskite_RF",
    "Diffusion_LR",
    "Perovskite_LR",
    "Diffusion_GPR_Bayesian",
    "Perovskite_GPR_Bayesian",
    "QM9_E",
    "logP_10k_a_LS-GCN",
    "logP_150k_LS-GCN",
]

# Pernot (2024b) Table I: shape parameter nu of uE^2 (IG(nu, nu)), E^2 and Z^2 (F(1, nu))
TABLE_I = {
    "uE2": [1.72, 0.79, 5.34, 1.53, 30.8, 1.19, 1.91, 24.7, 17.3],
    "E2": [2.17, 1.18, 6.32, 2.72, 2.75, 0.78, 2.43, 4.24, 10.0],
    "Z2": [7.91, 4.91, 15.10, 8.15, 2.72, 0.85, 3.95, 3.66, 20.2],
}

# Pernot (2024c) Table II (OCR text, rows read column-wise): sample mean mu_Z, sample sd sigma_Z,
# nu_Z of the scaled-and-shifted Student t fit.
TABLE_II_MEAN = [-0.027, -0.018, 0.002, -0.021, 0.006, -0.005, 0.0174, 0.050, -0.260]
TABLE_II_SD = [0.980, 0.940, 1.058, 1.107, 0.920, 0.992, 0.9858, 0.961, 0.951]
TABLE_II_NU = [6.0, 3.3, 20.1, 9.1, 3.9, 1.4, 4.4, 3.9, 3.1]


@pytest.fixture(scope="module")
def tree():
    from uqviz.datasets import load_collection

    return load_collection("pernot2024")


@pytest.fixture(scope="module")
def shapes(tree):
    return distribution_shapes(tree)


# --------------------------------------------------------------------------
# kernels
# --------------------------------------------------------------------------
def test_model_cdfs_are_the_scipy_distributions():
    x = np.array([0.0, 1e-3, 0.3, 1.0, 2.5, 40.0])
    for nu, scale in [(0.7, 0.2), (4.0, 1.0), (35.0, 0.09)]:
        np.testing.assert_allclose(
            kf.model_cdf("invgamma", x, nu, scale),
            stats.invgamma.cdf(x, nu, scale=nu * scale),
            rtol=1e-12,
            atol=1e-300,
        )
        np.testing.assert_allclose(
            kf.model_cdf("f1", x, nu, scale),
            stats.f.cdf(x, 1, nu, scale=scale),
            rtol=1e-10,
            atol=1e-300,
        )
    with pytest.raises(ValueError, match="unknown model"):
        kf.model_cdf("gamma", x, 1.0, 1.0)


def _brute_force_ks(x, cdf):
    """sup |ECDF - F| from the ECDF just below and at every distinct value."""
    xs = np.sort(x)
    v = np.unique(xs)
    f = cdf(v)
    at = np.searchsorted(xs, v, side="right") / xs.size
    below = np.searchsorted(xs, v, side="left") / xs.size
    return max(np.max(np.abs(at - f)), np.max(np.abs(below - f)))


def test_ks_distance_is_exact_with_and_without_ties():
    rng = np.random.default_rng(0)
    x = stats.f.rvs(1, 3.0, scale=2.0, size=700, random_state=rng)
    tied = np.round(x, 1)  # many ties, as the isotonic-calibrated uE of QM9_E
    for sample in (x, tied):
        d = kf.ks_distance("f1", sample, 3.0, 2.0)
        cdf = stats.f(1, 3.0, scale=2.0).cdf
        assert d == pytest.approx(stats.kstest(sample, cdf).statistic, abs=1e-14)
        assert d == pytest.approx(_brute_force_ks(sample, cdf), abs=1e-14)
    # vectorised over parameter sets: (k, 1) parameters against one sample
    nus = np.array([1.0, 3.0, 9.0])
    d = kf.ks_distance("invgamma", x, nus, 0.5)
    assert d.shape == (3,)
    for i, nu in enumerate(nus):
        assert d[i] == pytest.approx(
            stats.kstest(x, stats.invgamma(nu, scale=nu * 0.5).cdf).statistic, abs=1e-14
        )


def test_fit_reports_the_scipy_kstest_statistic_at_its_optimum():
    rng = np.random.default_rng(1)
    u2 = stats.invgamma.rvs(2.5, scale=2.5 * 0.3, size=1500, random_state=rng)
    e2 = stats.f.rvs(1, 4.0, scale=0.5, size=1500, random_state=rng)
    for x, model, dist in [
        (u2, "invgamma", lambda r: stats.invgamma(r["nu"], scale=r["nu"] * r["scale"])),
        (e2, "f1", lambda r: stats.f(1, r["nu"], scale=r["scale"])),
    ]:
        r = kf.fit_min_ks(x, model)
        assert r["ks_distance"] == pytest.approx(stats.kstest(x, dist(r).cdf).statistic, abs=1e-14)
        # a local minimum: moving either parameter by 1 % does not lower the distance
        for dn, ds in [(1.01, 1), (0.99, 1), (1, 1.01), (1, 0.99), (1.01, 1.01), (0.99, 0.99)]:
            assert (
                kf.ks_distance(model, x, r["nu"] * dn, r["scale"] * ds) >= r["ks_distance"] - 1e-12
            )
        # and no better than the profile at the same nu
        assert kf.profile_ks(x, model, r["nu"])["ks_distance"] >= r["ks_distance"] - 1e-6


def test_fit_rejects_bad_samples():
    with pytest.raises(ValueError, match="at least 2"):
        kf.fit_min_ks([1.0], "f1")
    with pytest.raises(ValueError, match="1 values are not"):
        kf.fit_min_ks([1.0, -2.0, 3.0], "f1")
    with pytest.raises(ValueError, match="all zeros"):
        kf.fit_min_ks([0.0, 0.0], "f1")


# --------------------------------------------------------------------------
# synthetic recovery (tolerances: 4 standard errors of the mean of 6 fits; the
# per-fit sampling sd of the minimum-KS estimates at M = 3000 was measured on
# 40 Monte Carlo replicates: IG(4, 4) x 0.04: sd(nu) = 0.12, sd(scale) = 4e-4;
# F(1, 2) x 1: sd(nu) = 0.17, sd(scale) = 0.063)
# --------------------------------------------------------------------------
def test_minimum_ks_recovers_inverse_gamma_parameters():
    rng = np.random.default_rng(11)
    est = []
    for _ in range(6):
        u = np.sqrt(stats.invgamma.rvs(4.0, scale=4.0 * 0.04, size=3000, random_state=rng))
        r = fit_inverse_gamma(uqviz.from_arrays(rng.normal(0.0, u), u))
        est.append([float(r.nu), float(r.scale)])
    nu, scale = np.mean(est, axis=0)
    assert abs(nu - 4.0) < 4 * 0.12 / np.sqrt(6)
    assert abs(scale - 0.04) < 4 * 4e-4 / np.sqrt(6)


def test_minimum_ks_recovers_f_parameters_for_e2_and_z2():
    rng = np.random.default_rng(12)
    est_e, est_z = [], []
    for _ in range(6):
        e = rng.standard_t(2.0, 3000)  # E^2 ~ F(1, 2), scale 1
        u = np.exp(rng.normal(0.0, 0.3, 3000))  # any uE: the E^2 fit ignores it
        ds = uqviz.from_arrays(e, u)
        r = fit_f(ds, variable="E2")
        est_e.append([float(r.nu), float(r.scale)])
        z = rng.standard_t(2.0, 3000)  # Z^2 ~ F(1, 2) with uE = 2, E = 2 Z
        r = fit_f(uqviz.from_arrays(2.0 * z, np.full(3000, 2.0)), variable="Z2")
        est_z.append([float(r.nu), float(r.scale)])
    for est in (est_e, est_z):
        nu, scale = np.mean(est, axis=0)
        assert abs(nu - 2.0) < 4 * 0.17 / np.sqrt(6)
        assert abs(scale - 1.0) < 4 * 0.063 / np.sqrt(6)


def test_student_t_maximum_likelihood_recovery():
    # measured at M = 3000 (30 replicates): sd(df) = 0.31, sd(loc) = 0.024, sd(scale) = 0.017
    rng = np.random.default_rng(13)
    z = stats.t.rvs(4.0, loc=0.1, scale=0.8, size=3000, random_state=rng)
    r = fit_student_t(uqviz.from_arrays(z, np.ones(z.size)))
    assert abs(float(r.nu) - 4.0) < 4 * 0.31
    assert abs(float(r["loc"]) - 0.1) < 4 * 0.024
    assert abs(float(r.scale) - 0.8) < 4 * 0.017
    # it is the maximum of the likelihood: the scipy fit cannot beat it
    p = stats.t.fit(z)
    assert float(r.loglik) >= np.sum(stats.t.logpdf(z, *p)) - 1e-6
    assert float(r.loglik) == pytest.approx(
        np.sum(stats.t.logpdf(z, float(r.nu), float(r["loc"]), float(r.scale)))
    )
    assert float(r["mean"]) == pytest.approx(z.mean()) and float(r.sd) == pytest.approx(
        z.std(ddof=1)
    )


# --------------------------------------------------------------------------
# layout
# --------------------------------------------------------------------------
def test_result_layout_dataset_and_tree():
    sets = {
        name: uqviz.synthetic.nig(300 + 100 * i, nu=6, rng=i).assign_attrs(name=name)
        for i, name in enumerate(["b", "a"])
    }
    one = distribution_shapes(sets["b"])
    assert one["nu"].dims == ("variable",)
    assert one["variable"].values.tolist() == ["uE2", "E2", "Z2"]
    assert one["model"].values.tolist() == ["invgamma", "f1", "f1"]
    assert one.attrs["model_uE2"] == "uE^2/scale ~ InvGamma(nu, nu)"
    assert "Kolmogorov" in one.attrs["method"]
    # the combined fit is the single fits
    assert float(one.nu.sel(variable="uE2")) == float(fit_inverse_gamma(sets["b"]).nu)
    assert float(one.nu.sel(variable="Z2")) == float(fit_f(sets["b"], variable="Z2").nu)
    assert float(one.ks_distance.sel(variable="E2")) == float(fit_f(sets["b"]).ks_distance)
    res = distribution_shapes(uqviz.from_datasets(sets))
    assert res["nu"].dims == ("dataset", "variable")
    assert res["dataset"].values.tolist() == ["b", "a"]
    xr.testing.assert_equal(
        res.sel(dataset="b", drop=True).drop_vars("model"), one.drop_vars("model")
    )
    t = fit_student_t(uqviz.from_datasets(sets))
    assert t["nu"].dims == ("dataset",)
    with pytest.raises(ValueError, match="'E2' or 'Z2'"):
        fit_f(sets["a"], variable="uE2")


# --------------------------------------------------------------------------
# real data: Pernot (2024b) Table I and Pernot (2024c) Table II
# --------------------------------------------------------------------------
# Table I is printed with 3 significant digits (2 decimals below 1). Our exact
# minimum-KS optimum rounds to the printed digits for 24 of the 27 entries. The
# other two besides Set 5 uE^2 (checked separately below) differ by < 1 %: Set 3
# Z^2 (15.12, printed "15.10", i.e. 15.1 padded) and Set 6 Z^2 (0.857 vs 0.85),
# where the KS minimum is flat (the profile distance is constant for nu in
# [0.857, 0.87]: one ECDF step sets the maximum). Largest relative difference
# 0.8 %, hence the 1 % tolerance.
TABLE_I_RTOL = 0.01


@pytest.mark.parametrize("variable", ["uE2", "E2", "Z2"])
def test_table_I_shape_parameters(shapes, variable):
    assert shapes["dataset"].values.tolist() == SETS
    ours = shapes["nu"].sel(variable=variable).values
    paper = np.array(TABLE_I[variable])
    check = np.ones(9, dtype=bool)
    if variable == "uE2":
        check[4] = False  # Set 5: see test_table_I_set5_inverse_gamma_discrepancy
    np.testing.assert_allclose(ours[check], paper[check], rtol=TABLE_I_RTOL)


def test_table_I_ours_are_at_least_as_good_fits_as_the_published_nu(tree, shapes):
    """At the published nu, no scale gives a smaller KS distance than our optimum."""
    for var in ("uE2", "E2", "Z2"):
        model = "invgamma" if var == "uE2" else "f1"
        for i, name in enumerate(SETS):
            ds = tree[name].to_dataset()
            e, u = ds["E"].values, ds["uE"].values
            x = {"uE2": u**2, "E2": e**2, "Z2": (e / u) ** 2}[var]
            d_ours = float(shapes.ks_distance.sel(dataset=name, variable=var))
            d_paper = kf.profile_ks(x, model, TABLE_I[var][i])["ks_distance"]
            assert d_ours <= d_paper + 1e-6, (name, var)


def test_table_I_set5_inverse_gamma_discrepancy(tree, shapes):
    """Set 5 uE^2: the paper prints nu = 30.8, the minimum-KS optimum is nu = 33.3.

    Not a parametrisation issue (IG(nu/2, nu/2) would double nu; the other
    eight sets agree with IG(nu, nu) to < 0.5 %): the KS profile has a single
    minimum at 33.27 (D = 0.0291), and at nu = 30.8 the best scale gives
    D = 0.0348. The published value is not the KS minimum of this data file.
    """
    ds = tree["Diffusion_GPR_Bayesian"].to_dataset()
    nu = float(shapes.nu.sel(dataset="Diffusion_GPR_Bayesian", variable="uE2"))
    d = float(shapes.ks_distance.sel(dataset="Diffusion_GPR_Bayesian", variable="uE2"))
    assert nu == pytest.approx(33.27, rel=0.005)
    assert d == pytest.approx(0.0291, abs=2e-4)
    d_paper = kf.profile_ks(ds["uE"].values ** 2, "invgamma", 30.8)["ks_distance"]
    assert d_paper == pytest.approx(0.0348, abs=2e-4) and d_paper > d + 0.005


def test_table_II_student_t_fit_of_z_scores(tree, shapes):
    res = fit_student_t(tree)
    # mean and sd of Z: the paper's digits (half a unit of the last printed digit)
    for ours, paper in [(res["mean"].values, TABLE_II_MEAN), (res["sd"].values, TABLE_II_SD)]:
        digits = np.array([4 if name == "QM9_E" else 3 for name in SETS])
        assert np.all(np.abs(ours - np.array(paper)) <= 0.5 * 10.0**-digits + 1e-12)
    # nu_Z, printed with one decimal: our ML estimate rounds to it for 7 sets;
    # for Sets 3 and 4 (df = 20.04 and 9.15, printed 20.1 and 9.1) the profile
    # log-likelihood at the printed df is within 0.001 of the maximum (flat in df).
    df = res["nu"].values
    same = np.round(df, 1) == np.array(TABLE_II_NU)
    assert same.tolist() == [True, True, False, False, True, True, True, True, True]
    np.testing.assert_allclose(df[~same], np.array(TABLE_II_NU)[~same], atol=0.065)
    # Pernot (2024c): nu_Z is consistent with the F(1, nu) fit of Z^2 (Pernot (2024b) Table I)
    # except for Set 9, whose bias (mean -0.26) the F fit of Z^2 cannot absorb
    nu_z2 = shapes["nu"].sel(variable="Z2").values
    assert df[8] < 0.25 * nu_z2[8]
    assert np.all(np.abs(np.log(df[:8] / nu_z2[:8])) < np.log(2.0))


def test_fits_name_the_data_and_count_the_points():
    one = uqviz.from_arrays([0.3], [0.2])
    for func in (fit_inverse_gamma, fit_f, distribution_shapes):
        with pytest.raises(ValueError, match=r"data: fitting \w+ needs at least 2 points, got 1"):
            func(one)
    with pytest.raises(ValueError, match="data: fitting Z needs at least 3 points, got 2"):
        fit_student_t(uqviz.from_arrays([0.3, -0.1], [0.2, 0.4]))
    # fit_f of E = 0 at every point (E2 and Z2) and of an overflowing E2: the contract
    # sweep's folded cases "fit_f: ..." (tests/contract/test_sweep.py, BAD_INPUT_CASES)


def test_fits_of_float32_and_object_columns_are_those_of_float64():
    rng = np.random.default_rng(5)
    u = np.exp(0.3 * rng.standard_normal(300))
    e = u * rng.standard_normal(300)
    ref = distribution_shapes(uqviz.from_arrays(e, u))
    raw = xr.Dataset({"E": ("point", e.astype(object)), "uE": ("point", u.astype(object))})
    xr.testing.assert_allclose(distribution_shapes(raw), ref)
