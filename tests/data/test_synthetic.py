"""uqviz.synthetic: distributions checked against scipy and moments; the teaching example.

Only numpy/scipy are used for the checks (no other uqviz module).
"""

import numpy as np
import pytest
import xarray as xr
from scipy import stats as sps

from uqviz.synthetic import (
    calibrated,
    default_example,
    draw_calibrated,
    nig,
    student_t_scaled,
    tig,
)


# --------------------------------------------------------------------------
# t_s
# --------------------------------------------------------------------------
def test_student_t_scaled_unit_variance():
    nu, n = 10.0, 400_000
    x = student_t_scaled(n, nu=nu, rng=np.random.default_rng(0))
    # Var of the sample variance = (mu4 - 1) / n with mu4 = 3 + 6 / (nu - 4) = 4
    se = np.sqrt((4.0 - 1.0) / n)
    assert abs(x.var() - 1.0) < 4 * se
    assert abs(x.mean()) < 4 / np.sqrt(n)


@pytest.mark.parametrize("nu", [2.5, 3.0, 6.0])
def test_student_t_scaled_is_scaled_student(nu):
    x = student_t_scaled(20_000, nu=nu, rng=1)
    ref = sps.t(df=nu, scale=np.sqrt((nu - 2) / nu))
    assert sps.kstest(x, ref.cdf).pvalue > 1e-3
    # a wrong scale (the plain t) is detected by the same test
    assert sps.kstest(x, sps.t(df=nu).cdf).pvalue < 1e-3


def test_student_t_scaled_arguments():
    for bad in (2.0, 1.5, 0.0, -3.0, np.nan):
        with pytest.raises(ValueError, match="nu"):
            student_t_scaled(10, nu=bad, rng=0)
    x = student_t_scaled(5, nu=np.inf, rng=7)
    np.testing.assert_array_equal(x, np.random.default_rng(7).standard_normal(5))
    assert student_t_scaled((3, 4), nu=4.0, rng=0).shape == (3, 4)


@pytest.mark.parametrize(
    "size, error, match",
    [
        (-1, ValueError, r"size must be >= 1, got -1"),
        (0, ValueError, r"size must be >= 1, got 0"),
        (2.5, ValueError, r"size must be a whole number, got 2.5"),
        (True, TypeError, r"size must be an integer, got True"),
        ("10", TypeError, r"size must be an integer, got '10'"),
        ((3, -4), ValueError, r"size\[1\] must be >= 1, got -4"),
        ((), ValueError, r"size must be an int >= 1 or a non-empty tuple"),
    ],
)
def test_student_t_scaled_checks_size(size, error, match):
    # issue 22 item 7: raw numpy errors (or a silent truncation of 2.5)
    with pytest.raises(error, match=match):
        student_t_scaled(size, nu=5.0, rng=0)
    np.testing.assert_array_equal(
        student_t_scaled(4.0, nu=5.0, rng=3), student_t_scaled(4, nu=5.0, rng=3)
    )


# --------------------------------------------------------------------------
# draw_calibrated kernel
# --------------------------------------------------------------------------
def test_inverse_gamma_moments_of_uE2():
    a = b = 5.0
    n = 200_000
    _, u = draw_calibrated(n, a=a, b=b, rng=np.random.default_rng(11))
    v = u**2
    mean, var = b / (a - 1), b**2 / ((a - 1) ** 2 * (a - 2))  # 1.25, 0.5208
    assert mean == 1.25
    assert abs(v.mean() - mean) < 4 * np.sqrt(var / n)
    # median of InverseGamma(5, scale=5) from scipy
    med = sps.invgamma(a, scale=b).median()
    assert abs(np.median(v) - med) < 0.01
    assert sps.kstest(v[:20_000], sps.invgamma(a, scale=b).cdf).pvalue > 1e-3


def test_errors_are_uE_times_D():
    e, u = draw_calibrated(20_000, a=3.0, b=3.0, nu_d=4.0, rng=5)
    z = e / u
    assert sps.kstest(z, sps.t(df=4.0, scale=np.sqrt(2.0 / 4.0)).cdf).pvalue > 1e-3
    e, u = draw_calibrated(20_000, a=3.0, b=3.0, rng=5)
    assert sps.kstest(e / u, sps.norm.cdf).pvalue > 1e-3


def test_nig_errors_follow_student_t():
    # NIG with a = b = nu/2 and D = N(0,1): E ~ t(nu) (Pernot (2024b), eq. 18)
    nu = 4.0
    ds = nig(20_000, nu=nu, rng=3)
    e = ds["E"].values
    assert sps.kstest(e, sps.t(df=nu).cdf).pvalue > 1e-3
    assert sps.kstest(e, sps.norm.cdf).pvalue < 1e-3


def test_shapes_and_vectorisation_is_one_long_draw():
    e1, u1 = draw_calibrated(50, a=2.0, b=3.0, nu_d=5.0, rng=9)
    assert e1.shape == u1.shape == (50,)
    e, u = draw_calibrated(50, n_datasets=4, a=2.0, b=3.0, nu_d=5.0, rng=9)
    assert e.shape == u.shape == (4, 50)
    ef, uf = draw_calibrated(200, a=2.0, b=3.0, nu_d=5.0, rng=9)
    np.testing.assert_array_equal(e, ef.reshape(4, 50))
    np.testing.assert_array_equal(u, uf.reshape(4, 50))
    assert np.all(u > 0)


def test_replicates_are_independent_calibrated_sets():
    n_sets, size = 400, 1000
    e, u = draw_calibrated(size, n_datasets=n_sets, a=3.0, b=3.0, rng=21)
    zms = np.mean((e / u) ** 2, axis=1)
    # Z ~ N(0,1): ZMS has mean 1 and sd sqrt(2/size) = 0.0447 for each replicate
    sd_expected = np.sqrt(2.0 / size)
    assert abs(zms.mean() - 1.0) < 4 * sd_expected / np.sqrt(n_sets)
    assert abs(zms.std(ddof=1) / sd_expected - 1.0) < 0.15
    # no correlation between consecutive replicates
    r = np.corrcoef(zms[:-1], zms[1:])[0, 1]
    assert abs(r) < 4 / np.sqrt(n_sets)


def test_sigma_scales_uncertainties():
    e1, u1 = draw_calibrated(100, a=3.0, b=3.0, rng=4)
    e2, u2 = draw_calibrated(100, a=3.0, b=3.0, sigma=2.5, rng=4)
    np.testing.assert_allclose(u2, 2.5 * u1, rtol=1e-15)
    np.testing.assert_allclose(e2, 2.5 * e1, rtol=1e-15)


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(size=0),
        dict(size=2.5),
        dict(n_datasets=0),
        dict(a=0.0),
        dict(b=-1.0),
        dict(nu_d=2.0),
        dict(sigma=0.0),
    ],
)
def test_draw_calibrated_bad_arguments(kwargs):
    args = dict(size=10, n_datasets=None, a=3.0, b=3.0, nu_d=None, rng=0) | kwargs
    with pytest.raises(ValueError):
        draw_calibrated(**args)


# --------------------------------------------------------------------------
# xarray wrappers
# --------------------------------------------------------------------------
def test_wrappers_dims_coords_attrs():
    ds = nig(100, nu=4.0, rng=1)
    assert ds["E"].dims == ("point",) and ds.sizes["point"] == 100
    np.testing.assert_array_equal(ds["point"].values, np.arange(100))
    assert ds.attrs["model"] == "NIG" and ds.attrs["nu"] == 4.0
    assert ds.attrs["a"] == 2.0 and ds.attrs["b"] == 2.0 and ds.attrs["nu_d"] == np.inf
    assert ds.attrs["units"] == "" and ds.attrs["rng"] == 1 and isinstance(ds.attrs["name"], str)

    tree = tig(30, nu_ig=6.0, nu_d=3.0, n_datasets=5, rng=2)
    assert isinstance(tree, xr.DataTree)
    assert list(tree.children) == [f"set_{i}" for i in range(5)]
    for key, child in tree.children.items():
        ds = child.to_dataset()
        assert ds["E"].dims == ("point",) and ds["uE"].shape == (30,)
        assert ds.attrs["name"] == key
        assert ds.attrs["model"] == "TIG" and ds.attrs["a"] == 3.0 and ds.attrs["nu_d"] == 3.0
        assert ds.attrs["D"] == "t_s(3)"
    assert tree.attrs["model"] == "TIG" and tree.attrs["n_datasets"] == 5

    ds = calibrated(20, a=2.0, b=4.0, sigma=3.0, rng=np.random.default_rng(0))
    assert ds.attrs["a"] == 2.0 and ds.attrs["b"] == 4.0 and ds.attrs["sigma"] == 3.0
    assert ds.attrs["rng"] == "Generator"


def test_wrappers_equal_kernel():
    tree = tig(40, nu_ig=8.0, nu_d=5.0, n_datasets=3, rng=12)
    e, u = draw_calibrated(40, n_datasets=3, a=4.0, b=4.0, nu_d=5.0, rng=12)
    for i in range(3):
        np.testing.assert_array_equal(tree[f"set_{i}"]["E"].values, e[i])
        np.testing.assert_array_equal(tree[f"set_{i}"]["uE"].values, u[i])
    ds = nig(40, nu=8.0, rng=12)
    e, u = draw_calibrated(40, a=4.0, b=4.0, rng=12)
    np.testing.assert_array_equal(ds["E"].values, e)


def test_reproducibility():
    a, b = nig(500, rng=123), nig(500, rng=123)
    np.testing.assert_array_equal(a["E"].values, b["E"].values)
    np.testing.assert_array_equal(a["uE"].values, b["uE"].values)
    c = nig(500, rng=124)
    assert not np.array_equal(a["E"].values, c["E"].values)
    # a Generator is used as given: two calls advance it
    g = np.random.default_rng(5)
    d1, d2 = tig(50, rng=g), tig(50, rng=g)
    assert not np.array_equal(d1["E"].values, d2["E"].values)
    g = np.random.default_rng(5)
    np.testing.assert_array_equal(tig(50, rng=g)["E"].values, d1["E"].values)


@pytest.mark.parametrize(
    "make",
    [
        lambda: nig(300, nu=6.0, n_datasets=3, rng=0),
        lambda: tig(300, nu_ig=6.0, nu_d=5.0, n_datasets=3, rng=0),
        lambda: calibrated(300, a=3.0, b=3.0, n_datasets=3, rng=0),
    ],
)
def test_several_datasets_are_a_tree_every_function_accepts(make):
    import uqviz

    tree = make()
    for _, child in tree.children.items():
        uqviz.check_dataset(child.to_dataset())
    res = uqviz.validate_average(tree, statistics=("ZMS",), n_boot=200, rng=0)
    assert list(res["dataset"].values) == ["set_0", "set_1", "set_2"]
    z2 = [np.mean((tree[k]["E"].values / tree[k]["uE"].values) ** 2) for k in tree.children]
    np.testing.assert_allclose(res["estimate"].sel(statistic="ZMS").values, z2, rtol=1e-12)
    assert uqviz.tailedness(tree).sizes["dataset"] == 3


@pytest.mark.parametrize(
    "kwargs, exc",
    [
        (dict(size="10"), TypeError),
        (dict(size=True), TypeError),
        (dict(n_datasets=2.5), ValueError),
        (dict(nu=0.0), ValueError),
        (dict(nu="6"), TypeError),
        (dict(rng=np.random.RandomState(0)), TypeError),
        (dict(rng=-1), ValueError),
    ],
)
def test_wrapper_options_are_checked(kwargs, exc):
    args = dict(size=10) | kwargs
    with pytest.raises(exc, match=next(iter(kwargs))):
        nig(**args)


def test_kernels_live_in_array_and_match_the_wrappers():
    from uqviz._array import synthetic as ks

    e, u = ks.draw_calibrated((2, 30), 3.0, 3.0, 5.0, np.random.default_rng(4))
    e2, u2 = draw_calibrated(30, n_datasets=2, a=3.0, b=3.0, nu_d=5.0, rng=4)
    np.testing.assert_array_equal(e, e2)
    np.testing.assert_array_equal(u, u2)


# --------------------------------------------------------------------------
# the teaching example
# --------------------------------------------------------------------------
def _zms(z2, groups):
    return np.array([z2[g].mean() for g in groups])


def test_default_example_structure_and_determinism():
    ds = default_example()
    assert ds.sizes["point"] == 5000
    assert ds.attrs["name"] == "default_example" and ds.attrs["units"] == ""
    assert set(ds.data_vars) == {"E", "uE", "X"}
    assert "long_name" in ds["X"].attrs and ds.attrs["description"]
    x = ds["X"].values
    assert x.min() >= 0.0 and x.max() <= 1.0
    assert np.all(ds["uE"].values > 0)
    u = ds["uE"].values
    assert 3.0 < u.max() / u.min() <= 10**0.5  # uE spans a factor sqrt(10)
    again = default_example()
    np.testing.assert_array_equal(ds["E"].values, again["E"].values)
    np.testing.assert_array_equal(ds["X"].values, again["X"].values)
    other = default_example(rng=1, size=300)
    assert other.sizes["point"] == 300
    assert not np.array_equal(other["E"].values, ds["E"].values[:300])


def test_default_example_passes_the_tailedness_screen():
    # the teaching example must not trip the heavy-tail warnings of Pernot (2024b) Table II
    from uqviz._array.stats import beta_gm

    ds = default_example()
    e, u = ds["E"].values, ds["uE"].values
    beta = beta_gm(np.stack([u**2, e**2, (e / u) ** 2]))
    assert np.all(beta < [0.6, 0.8, 0.8]), beta


def test_default_example_calibrated_consistent_not_adaptive():
    ds = default_example()
    e, u, x = ds["E"].values, ds["uE"].values, ds["X"].values
    z2 = (e / u) ** 2
    # average calibration
    assert 0.95 <= z2.mean() <= 1.05
    # consistency: 20 equal-count bins on uE
    bins_u = np.array_split(np.argsort(u, kind="stable"), 20)
    zms_u = _zms(z2, bins_u)
    assert np.sum((zms_u < 0.8) | (zms_u > 1.25)) <= 3
    # adaptivity fails: lowest / highest X quintiles
    quint = np.array_split(np.argsort(x, kind="stable"), 5)
    zms_x = _zms(z2, quint)
    assert zms_x[0] < 0.7 and zms_x[-1] > 1.4
    # and the X bins are monotonic: uE too large at low X, too small at high X
    assert np.all(np.diff(zms_x) > 0)
    # theory: <Z^2 | X> = exp(2(a + bX)); quintile means 0.53 and 1.62
    a, b = ds.attrs["a"], ds.attrs["b"]
    lo = np.exp(2 * a) * np.expm1(2 * b * 0.2) / (2 * b * 0.2)
    hi = np.exp(2 * a) * (np.exp(2 * b) - np.exp(2 * b * 0.8)) / (2 * b * 0.2)
    assert lo == pytest.approx(0.529, abs=1e-3) and hi == pytest.approx(1.621, abs=1e-3)
    assert abs(zms_x[0] - lo) < 0.1 and abs(zms_x[-1] - hi) < 0.25
