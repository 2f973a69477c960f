"""Model references of the tailedness figures: NIG skewness curve, NIG-implied E^2 law."""

import numpy as np
import pytest
import xarray as xr
from scipy import integrate, stats

import uqviz
from uqviz._array import stats as ks
from uqviz.average.nig import nig_implied_shape, nig_skewness_curve
from uqviz.engine.seeds import value_index as _bits


def _population_beta_gm(dist):
    """(mean - median) / E|X - median| of a scipy distribution, by quadrature."""
    m, mu = dist.median(), dist.mean()
    f = lambda x: abs(x - m) * dist.pdf(x)  # noqa: E731
    mad = integrate.quad(f, 0.0, m)[0] + integrate.quad(f, m, np.inf)[0]
    return (mu - m) / mad


@pytest.fixture(scope="module")
def curve():
    return nig_skewness_curve(nu=[3.0, 10.0, 1.0e4], size=200_000, rng=3)


def test_layout_and_attrs(curve):
    assert curve["beta_gm"].dims == ("nu", "variable")
    assert curve["variable"].values.tolist() == ["uE2", "E2", "Z2"]
    assert curve["nu"].values.tolist() == [3.0, 10.0, 1.0e4]
    assert curve.attrs["size"] == 200_000 and curve.attrs["rng"] == 3
    assert "IG(nu/2, nu/2)" in curve.attrs["model"]
    assert curve["kappa_cs"].shape == (3, 3)


def test_large_nu_approaches_a_squared_normal(curve):
    # E^2 ~ F(1, nu) -> chi2_1 when nu -> inf; Z^2 ~ chi2_1 for every nu
    ref = _population_beta_gm(stats.chi2(1))
    assert ref == pytest.approx(0.6358, abs=1e-4)  # "0.64" of Pernot (2024b) sect. V D
    b = curve["beta_gm"]
    assert float(b.sel(nu=1.0e4, variable="E2")) == pytest.approx(ref, abs=0.01)
    np.testing.assert_allclose(b.sel(variable="Z2").values, ref, atol=0.01)
    # the uncertainties become constant: no skewness left
    assert abs(float(b.sel(nu=1.0e4, variable="uE2"))) < 0.05
    # kappa_CS of a squared normal, independently from the chi2_1 quantiles
    q = stats.chi2(1).ppf([0.025, 0.25, 0.75, 0.975])
    k_ref = (q[3] - q[0]) / (q[2] - q[1]) - ks.KAPPA_CS_NORMAL
    np.testing.assert_allclose(curve["kappa_cs"].sel(variable="Z2").values, k_ref, atol=0.05)


def test_matches_population_values_of_the_model(curve):
    b = curve["beta_gm"].sel(nu=10.0)
    assert float(b.sel(variable="E2")) == pytest.approx(
        _population_beta_gm(stats.f(1, 10)), abs=0.01
    )
    assert float(b.sel(variable="uE2")) == pytest.approx(
        _population_beta_gm(stats.invgamma(5.0, scale=5.0)), abs=0.01
    )


def test_heavier_tails_more_skewness(curve):
    for v in ("uE2", "E2"):
        b = curve["beta_gm"].sel(variable=v).values
        assert np.all(np.diff(b) < 0), v
    # the NIG curve lies above the diagonal: E^2 is always more skewed than uE^2
    b = curve["beta_gm"]
    assert np.all(b.sel(variable="E2").values > b.sel(variable="uE2").values)


def test_curve_equals_the_kernels():
    # the curve uses the one implementation of beta_GM and kappa_CS (uqviz._array.stats)
    from uqviz.synthetic import draw_calibrated

    res = nig_skewness_curve(nu=[3.0], size=501, rng=4)
    ss = np.random.SeedSequence(res.attrs["entropy"], spawn_key=(_bits(3.0),))
    e, u = draw_calibrated(501, a=1.5, b=1.5, rng=np.random.Generator(np.random.PCG64(ss)))
    x = np.stack([u * u, e * e, (e / u) ** 2])
    np.testing.assert_allclose(res["beta_gm"].sel(nu=3.0).values, ks.beta_gm(x), rtol=1e-12)
    np.testing.assert_allclose(res["kappa_cs"].sel(nu=3.0).values, ks.kappa_cs(x), rtol=1e-12)


def test_reproducible_and_independent_of_the_grid():
    a = nig_skewness_curve(nu=[4.0, 8.0], size=2000, rng=7)
    b = nig_skewness_curve(nu=[8.0], size=2000, rng=7)
    c = nig_skewness_curve(nu=[4.0, 8.0], size=2000, rng=8)
    xr.testing.assert_identical(a["beta_gm"].sel(nu=[8.0]), b["beta_gm"])
    assert not np.allclose(a["beta_gm"].values, c["beta_gm"].values)


def test_same_estimator_as_tailedness():
    # one point of the curve equals uqviz.tailedness on the same NIG sample
    from uqviz.synthetic import draw_calibrated

    res = nig_skewness_curve(nu=[5.0], size=3000, rng=11)
    entropy = res.attrs["entropy"]
    ss = np.random.SeedSequence(entropy, spawn_key=(_bits(5.0),))
    e, u = draw_calibrated(3000, a=2.5, b=2.5, rng=np.random.Generator(np.random.PCG64(ss)))
    t = uqviz.tailedness(uqviz.from_arrays(e, u))
    np.testing.assert_allclose(res["beta_gm"].sel(nu=5.0).values, t["beta_gm"].values, rtol=1e-10)
    np.testing.assert_allclose(res["kappa_cs"].sel(nu=5.0).values, t["kappa_cs"].values, rtol=1e-10)


@pytest.mark.parametrize(
    "nu, match",
    [([0.0, 2.0], "> 0"), ([2.0, 2.0], "distinct"), ([], "non-empty"), ([np.nan], "finite")],
)
def test_bad_nu(nu, match):
    with pytest.raises(ValueError, match=match):
        nig_skewness_curve(nu=nu, size=100)


@pytest.mark.parametrize("size, error", [(5, ValueError), (100.5, ValueError), (True, TypeError)])
def test_bad_size(size, error):
    # the one check of a drawn size (uqviz.engine.checks.count), as uqviz.synthetic.nig
    with pytest.raises(error, match="size"):
        nig_skewness_curve(nu=[3.0], size=size)


# --------------------------------------------------------------------------
# nig_implied_shape
# --------------------------------------------------------------------------
def test_implied_shape_is_twice_the_ig_shape():
    shapes = xr.Dataset(
        {
            "nu": (("dataset", "variable"), [[1.5, 3.0, 7.0], [10.0, 4.0, 9.0]]),
            "scale": (("dataset", "variable"), [[0.2, 0.3, 1.0], [2.0, 1.0, 1.0]]),
        },
        coords={"dataset": ["a", "b"], "variable": ["uE2", "E2", "Z2"]},
    )
    out = nig_implied_shape(shapes)
    assert out["nu"].values.tolist() == [3.0, 20.0]
    assert out["scale"].values.tolist() == [0.2, 2.0]
    assert out["nu"].dims == ("dataset",) and "variable" not in out.coords
    assert out.attrs["variable"] == "E2"


def test_implied_shape_recovers_the_nig_law_of_simulated_data():
    # NIG with nu = 8: uE^2 ~ IG(4, 4) (fitted nu ~ 4), E^2 ~ F(1, 8)
    ds = uqviz.synthetic.nig(20_000, nu=8.0, rng=5)
    implied = nig_implied_shape(uqviz.fit_inverse_gamma(ds))
    direct = uqviz.fit_f(ds, variable="E2")
    assert float(implied["nu"]) == pytest.approx(8.0, rel=0.15)
    assert float(implied["nu"]) == pytest.approx(float(direct["nu"]), rel=0.3)
    assert float(implied["scale"]) == pytest.approx(float(direct["scale"]), rel=0.1)


def test_implied_shape_rejects_other_fits():
    with pytest.raises(ValueError, match="not of uE2"):
        nig_implied_shape(xr.Dataset({"nu": 3.0, "scale": 1.0}, attrs={"variable": "E2"}))
    with pytest.raises(ValueError, match="no 'uE2'"):
        nig_implied_shape(
            xr.Dataset(
                {"nu": ("variable", [3.0]), "scale": ("variable", [1.0])},
                coords={"variable": ["E2"]},
            )
        )
    with pytest.raises(ValueError, match="'scale' is missing"):
        nig_implied_shape(xr.Dataset({"nu": 3.0}))


def test_nu_is_keyword_only():
    with pytest.raises(TypeError):
        nig_skewness_curve([3.0], size=100)


def test_tailedness_warning_prints_beta_visibly_above_the_limit():
    # issue 20: "beta_GM(E2) = 0.80 > 0.8" for beta_GM(E^2) = 0.8017
    from uqviz.reporting.text import tailedness_warnings

    rng = np.random.default_rng(0)
    u = np.exp(0.5 * rng.standard_normal(5000))
    t = uqviz.tailedness(uqviz.from_arrays(u * rng.standard_normal(5000), u))
    assert float(t.beta_gm.sel(variable="E2")) == pytest.approx(0.8017, abs=1e-4)
    (line,) = tailedness_warnings(t)
    assert line.startswith("beta_GM(E^2) = 0.802 > 0.8: ")
    assert "RCE" in line and "screened by Z^2" in line
    # a hand-made result: the digits grow until the value is visibly above
    fake = t.copy()
    fake["beta_gm"] = ("variable", [0.1, 0.8004, 0.80000001])
    fake["heavy_tail"] = fake.beta_gm > fake.threshold
    lines = tailedness_warnings(fake)
    assert lines[0].startswith("beta_GM(E^2) = 0.8004 > 0.8")
    assert lines[1].startswith("beta_GM(Z^2) = 0.80000001 > 0.8")


def test_nig_implied_shape_refuses_what_is_not_a_fit():
    """issue 38, item 9: ``nig_implied_shape([0.5])`` said "'list' object has no attribute"."""
    with pytest.raises(TypeError, match="shapes must be the result of uqviz.distribution_shapes"):
        uqviz.nig_implied_shape([0.5])
