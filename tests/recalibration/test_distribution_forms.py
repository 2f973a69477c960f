"""Distribution recalibrations on every forecast form (issue 23, item 4, phase 2).

``"quantile"`` (Kuleshov et al. 2018) reads the forecast as given through
``uqviz.predictive.forecast``: the observed proportions of ``F(y) <= p`` (the standard form:
``Z <= F_D^{-1}(p)``, unchanged) and the recalibrated quantiles ``F^{-1}(R^{-1}(tau))``. The
references here are independent: scikit-learn's ``IsotonicRegression`` and numpy's
``quantile(method="inverted_cdf")`` for ensembles, the piecewise-linear inverse written with
``np.interp`` for quantile and interval forecasts, scipy's Student-t for a non-normal D, and
the conformal scale by sorting. Calibration after recalibration is checked by seeded
simulations (``validate_pit`` fails before, passes after).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import xarray as xr
from scipy import special, stats

import uqviz

GRID = np.linspace(0.0, 1.0, 100)  # the nominal probabilities of the quantile map


def _isotonic(observed, levels):
    """R^{-1} at ``levels``: scikit-learn's isotonic regression of GRID on ``observed``."""
    isotonic = pytest.importorskip("sklearn.isotonic")
    iso = isotonic.IsotonicRegression(increasing=True, out_of_bounds="clip")
    return iso.fit(observed, GRID).predict(np.asarray(levels, dtype=float))


def _ensemble(n, s, rng, *, shift=0.3, spread=1.5):
    """y ~ N(mu, 1); members N(mu + shift, spread^2): biased and overdispersed."""
    mu = rng.normal(0.0, 2.0, n)
    y = mu + rng.standard_normal(n)
    members = mu[:, None] + shift + spread * rng.standard_normal((n, s))
    return uqviz.from_predictions(y, None, samples=members)


def _quantile_model(n, rng, levels, *, shift=0.3, spread=0.7):
    """Normal quantiles of y at ``levels`` around yp with scale u; y = yp + u (shift +
    spread N): biased, and too wide for spread < 1."""
    u = rng.uniform(0.5, 2.0, n)
    yp = rng.normal(0.0, 3.0, n)
    y = yp + u * (shift + spread * rng.standard_normal(n))
    q = yp[:, None] + u[:, None] * special.ndtri(levels)[None, :]
    return uqviz.from_predictions(
        y, yp, quantiles={float(t): q[:, j] for j, t in enumerate(levels)}
    )


# ------------------------------------------------------------------------------------
# ensembles: the empirical CDF of the members and its inverse
# ------------------------------------------------------------------------------------


def test_ensemble_equals_isotonic_map_of_the_member_cdf_and_numpy_quantiles():
    rng = np.random.default_rng(0)
    cal, new = _ensemble(3000, 30, rng), _ensemble(400, 30, rng)
    levels = [0.05, 0.2, 0.5, 0.8, 0.95]
    rec = uqviz.fit_recalibration(cal, method="quantile", levels=levels, level=0.8)
    # observed: the share of F(y) = #{members <= y} / S below each nominal p (strictly: y is
    # at most the quantile Q(p) of the members exactly when F(y) < p)
    members = cal["samples"].values
    f = (members <= cal["y"].values[:, None]).mean(axis=1)
    observed = (f[:, None] < GRID[None, :]).mean(axis=0)
    p = rec.parameters
    assert p.attrs["forecast"] == "samples" and p.attrs["levels"] == levels
    xs = np.unique(observed)  # the knots: the distinct observed values (ties pooled)
    np.testing.assert_array_equal(np.unique(np.r_[p["observed"].values, xs]), xs)
    mapped = _isotonic(observed, levels + [0.1, 0.9])
    np.testing.assert_allclose(
        uqviz.fit_recalibration(cal, method="quantile", levels=levels)
        .parameters["observed"]
        .values,
        p["observed"].values,
    )
    assert np.all((mapped > 0) & (mapped < 1))
    out = rec.apply(new)
    want = np.quantile(new["samples"].values, mapped, axis=1, method="inverted_cdf").T
    np.testing.assert_array_equal(out["quantiles"].transpose("point", "level").values, want[:, :5])
    np.testing.assert_array_equal(out["lower"].values, want[:, 5])
    np.testing.assert_array_equal(out["upper"].values, want[:, 6])
    assert out.attrs["forecast"] == "quantiles" and "samples" in out  # members kept
    np.testing.assert_array_equal(out["uE"], new["uE"])


def test_ensemble_by_hand():
    """Four points of four members 0, 1, 2, 3 (+ offset): F(y) = 0, 1/4, 1/2, 1."""
    off = np.array([0.0, 10.0, 20.0, 30.0])
    members = off[:, None] + np.arange(4.0)[None, :]
    y = off + np.array([-0.5, 0.5, 1.5, 3.5])
    cal = uqviz.from_predictions(y, None, samples=members)
    rec = uqviz.fit_recalibration(cal, method="quantile", levels=[0.5])
    f = np.array([0.0, 0.25, 0.5, 1.0])
    observed = np.array([(f < g).mean() for g in GRID])
    assert observed[0] == 0.0 and observed[25] == 0.5 and observed[-1] == 0.75
    np.testing.assert_allclose(rec.parameters["observed"], np.unique(observed))
    # R^{-1}(0.5): the mean of the nominal p with observed 1/2 (p in (1/4, 1/2]: 25..49 / 99)
    a = np.mean(GRID[(GRID > 0.25) & (GRID <= 0.5)])
    assert math.isclose(float(rec.parameters["nominal"][2]), a, rel_tol=1e-12)
    out = rec.apply(cal)
    # members[ceil(a S) - 1] = the 2nd member (a S = 1.49...); it covers y on 2 of 4 points
    q = out["quantiles"].sel(level=0.5).values
    np.testing.assert_array_equal(q, off + 1.0)
    assert np.mean(y <= q) == 0.5


# ------------------------------------------------------------------------------------
# quantile and interval forecasts: piecewise linear, tails of D
# ------------------------------------------------------------------------------------


def test_quantile_forecast_equal_to_the_normal_one_matches_the_std_form():
    """999 normal quantiles: the piecewise-linear CDF departs from Phi by less than 1e-4,
    no PIT of these data moves across a nominal p (the maps are equal), and the recalibrated
    quantiles differ from the std form's by the interpolation error of Phi^{-1} between knots,
    at most delta_Q u, computed here."""
    rng = np.random.default_rng(1)
    taus = np.round(np.arange(1, 1000) / 1000.0, 3)
    n = 2000
    u = rng.uniform(0.5, 2.0, n)
    yp = rng.normal(0.0, 3.0, n)
    e = u * (0.3 + 1.3 * rng.standard_normal(n))
    q = yp[:, None] + u[:, None] * special.ndtri(taus)[None, :]
    qf = uqviz.from_predictions(
        yp + e, yp, quantiles={float(t): q[:, j] for j, t in enumerate(taus)}
    )
    std = uqviz.from_arrays(e, u)  # error space: prediction 0
    levels = [0.005, 0.05, 0.25, 0.5, 0.75, 0.95, 0.995]
    rq = uqviz.fit_recalibration(qf, method="quantile", levels=levels)
    rs = uqviz.fit_recalibration(std, method="quantile", levels=levels)
    # the CDF error of the interpolation: at most delta_f, and no PIT of these data lies
    # on the other side of a nominal p after the interpolation (so the maps are equal)
    zk = special.ndtri(taus)
    z = np.linspace(zk[0], zk[-1], 200001)
    delta_f = np.max(np.abs(np.interp(z, zk, taus) - special.ndtr(z)))
    assert delta_f < 1e-4
    zi = e / u
    f_lin = np.where((zi >= zk[0]) & (zi <= zk[-1]), np.interp(zi, zk, taus), special.ndtr(zi))
    assert np.max(np.abs(f_lin - special.ndtr(zi))) <= delta_f
    np.testing.assert_array_equal(
        f_lin[:, None] <= GRID[None, :], special.ndtr(zi)[:, None] <= GRID[None, :]
    )
    np.testing.assert_array_equal(rq.parameters["observed"], rs.parameters["observed"])
    np.testing.assert_array_equal(rq.parameters["nominal"], rs.parameters["nominal"])
    a = np.interp(levels, rs.parameters["observed"], rs.parameters["nominal"])
    inner = (a >= taus[0]) & (a <= taus[-1])
    zq = np.where(inner, np.interp(a, taus, special.ndtri(taus)), special.ndtri(a))
    oq, os_ = rq.apply(qf), rs.apply(std)
    np.testing.assert_allclose(
        oq["quantiles"].values, yp[:, None] + u[:, None] * zq, rtol=0, atol=1e-9
    )
    np.testing.assert_allclose(
        os_["quantiles"].values, u[:, None] * special.ndtri(a), rtol=0, atol=1e-12
    )
    grid = np.linspace(taus[0], taus[-1], 100001)
    delta_q = np.max(np.abs(np.interp(grid, taus, special.ndtri(taus)) - special.ndtri(grid)))
    diff = (oq["quantiles"].values - yp[:, None]) - os_["quantiles"].values
    assert delta_q < 0.02  # worst in the cell (0.001, 0.002); 1e-7 near the median
    assert np.max(np.abs(diff) / u[:, None]) <= delta_q + 1e-12


def test_interval_forecast_by_hand():
    """An interval is the quantiles {(1-L)/2: lower, 1/2: y_pred, (1+L)/2: upper} with
    normal tails scaled by uE (the data model)."""
    rng = np.random.default_rng(2)
    n = 1500
    yp = rng.normal(0.0, 1.0, n)
    half = rng.uniform(0.5, 2.0, n)
    y = yp + 0.8 * half * rng.standard_normal(n)
    lo, hi = yp - half, yp + 1.3 * half  # asymmetric
    with pytest.warns(uqviz.DataWarning, match="asymmetric interval"):
        cal = uqviz.from_predictions(y, yp, lower=lo, upper=hi, level=0.8)
    u = cal["uE"].values
    p3 = np.array([0.1, 0.5, 0.9])
    q3 = np.stack([lo, yp, hi], axis=1)

    def cdf(v):
        z = special.ndtri(p3)
        out = np.array([np.interp(v[i], q3[i], p3) for i in range(n)])
        below, above = v < lo, v > hi
        out[below] = special.ndtr(z[0] + (v[below] - lo[below]) / u[below])
        out[above] = special.ndtr(z[-1] + (v[above] - hi[above]) / u[above])
        return out

    observed = (cdf(y)[:, None] <= GRID[None, :]).mean(axis=0)
    levels = [0.05, 0.3, 0.5, 0.7, 0.95]
    rec = uqviz.fit_recalibration(cal, method="quantile", levels=levels, level=0.9)
    a = _isotonic(observed, levels)
    np.testing.assert_allclose(
        np.interp(levels, rec.parameters["observed"], rec.parameters["nominal"]),
        a,
        rtol=0,
        atol=1e-12,
    )
    want = np.empty((n, len(levels)))
    for c, t in enumerate(a):
        if t < p3[0]:
            want[:, c] = lo + u * (special.ndtri(t) - special.ndtri(p3[0]))
        elif t > p3[-1]:
            want[:, c] = hi + u * (special.ndtri(t) - special.ndtri(p3[-1]))
        else:
            want[:, c] = [np.interp(t, p3, q3[i]) for i in range(n)]
    out = rec.apply(cal)
    np.testing.assert_allclose(out["quantiles"].values, want, rtol=0, atol=1e-9)
    np.testing.assert_array_equal(out["lower_original"], lo)  # the given interval kept
    assert out["lower"].attrs["level"] == 0.9 and out.attrs["forecast"] == "quantiles"


def test_quantile_forecast_keeps_its_levels_and_the_given_quantiles():
    rng = np.random.default_rng(3)
    taus = np.array([0.1, 0.25, 0.5, 0.75, 0.9])
    ds = _quantile_model(800, rng, taus)
    out = uqviz.recalibrate(ds, method="quantile", rng=0)
    np.testing.assert_array_equal(out["level"], taus)  # default: the given levels
    assert out["quantiles_original"].dims == ("point", "level_original")
    np.testing.assert_array_equal(out["quantiles_original"].values, ds["quantiles"].values)
    np.testing.assert_array_equal(out["level_original"], taus)
    other = uqviz.recalibrate(ds, method="quantile", rng=0, levels=[0.5])
    assert other.sizes["level"] == 1 and other.sizes["level_original"] == 5
    with pytest.raises(ValueError, match="already hold quantiles_original"):
        uqviz.recalibrate(out.assign_attrs(forecast="quantiles"), method="quantile", rng=0)


# ------------------------------------------------------------------------------------
# the standard form with a non-normal D
# ------------------------------------------------------------------------------------


def test_std_form_with_student_t_d_option_or_attribute():
    rng = np.random.default_rng(4)
    n = 3000
    u = rng.uniform(0.5, 2.0, n)
    e = 1.4 * u * rng.standard_t(6, n) * math.sqrt(4.0 / 6.0)
    ds = uqviz.from_arrays(e, u)
    levels = [0.05, 0.5, 0.95]
    rec = uqviz.fit_recalibration(ds, method="quantile", levels=levels, generative="t6")
    ppf = stats.t.ppf(GRID, 6) * math.sqrt(4.0 / 6.0)  # the unit-variance t6
    observed = ((e / u)[:, None] <= ppf[None, :]).mean(axis=0)
    a = _isotonic(observed, levels)
    assert rec.parameters.attrs["generative"] == "t6"
    out = rec.apply(ds)
    want = u[:, None] * stats.t.ppf(a, 6)[None, :] * math.sqrt(4.0 / 6.0)
    np.testing.assert_allclose(out["quantiles"].values, want, rtol=1e-9, atol=1e-12)
    by_attr = uqviz.fit_recalibration(
        ds.assign_attrs(generative="t6"), method="quantile", levels=levels
    )
    xr.testing.assert_identical(by_attr.apply(ds)["quantiles"], out["quantiles"])
    normal = uqviz.fit_recalibration(ds, method="quantile", levels=levels).apply(ds)
    assert not np.allclose(normal["quantiles"].values, want)
    assert normal.attrs["generative"] == "normal"
    # the unit-variance t's quantile function ends at -inf (scipy's stdtrit(nu, 0) is +inf)
    assert np.isneginf(uqviz.generative.get_generative("t6").ppf(0.0))


# ------------------------------------------------------------------------------------
# cross-fitting, seeds, calibration after recalibration
# ------------------------------------------------------------------------------------


def test_recalibrate_equals_fits_on_the_folds_by_hand():
    rng = np.random.default_rng(5)
    ds = _ensemble(600, 20, rng)
    folds = 3
    out = uqviz.recalibrate(ds, method="quantile", folds=folds, rng=7, levels=[0.1, 0.9])
    perm = np.random.default_rng(7).spawn(1)[0].permutation(600)
    for part in np.array_split(perm, folds):
        train = np.setdiff1d(np.arange(600), part)
        rec = uqviz.fit_recalibration(ds.isel(point=train), method="quantile", levels=[0.1, 0.9])
        want = rec.apply(ds.isel(point=part))
        for name in ("quantiles", "lower", "upper"):
            np.testing.assert_array_equal(out[name].values[part], want[name].values)
    a = uqviz.recalibrate(ds, method="quantile", rng=11)
    b = uqviz.recalibrate(ds, method="quantile", rng=11)
    c = uqviz.recalibrate(ds, method="quantile", rng=12)
    xr.testing.assert_identical(a, b)
    assert not np.array_equal(a["quantiles"].values, c["quantiles"].values)


@pytest.mark.parametrize("kind", ["ensemble", "quantiles"])
def test_cross_fitted_pit_is_uniform_after_quantile_recalibration(kind):
    """A biased, overdispersed ensemble of 100 members and a biased, too wide 23-level
    quantile model: the PIT fails the simultaneous band before and passes after."""
    rng = np.random.default_rng(0)
    if kind == "ensemble":
        ds = _ensemble(4000, 100, rng)
    else:
        taus = np.round(np.r_[0.01, 0.025, np.arange(0.05, 0.96, 0.05), 0.975, 0.99], 3)
        ds = _quantile_model(4000, rng, taus)
    before = uqviz.validate_pit(ds, rng=0)
    assert not bool(before["valid"]) and float(before["ks_p_value"]) < 1e-6
    out = uqviz.recalibrate(ds, method="quantile", rng=1, levels=np.arange(1, 100) / 100)
    after = uqviz.validate_pit(out, rng=0)
    assert bool(after["valid"]) and float(after["ks_p_value"]) > 0.1
    cover = (out["y"] <= out["quantiles"]).mean("point").values
    np.testing.assert_allclose(cover, out["level"].values, atol=0.025)


# ------------------------------------------------------------------------------------
# conformal on every form: normalised by uE, centred on y - E
# ------------------------------------------------------------------------------------


@pytest.mark.parametrize("form", ["samples", "quantiles", "interval"])
def test_conformal_on_every_form_is_centred_on_the_prediction(form):
    rng = np.random.default_rng(6)
    if form == "samples":
        ds = _ensemble(999, 10, rng)
    elif form == "quantiles":
        ds = _quantile_model(999, rng, np.array([0.1, 0.5, 0.9]))
    else:
        yp = rng.normal(0.0, 1.0, 999)
        h = rng.uniform(0.5, 1.5, 999)
        with pytest.warns(uqviz.DataWarning, match="asymmetric interval"):
            ds = uqviz.from_predictions(
                yp + h * rng.standard_normal(999), yp, lower=yp - h, upper=yp + 2 * h, level=0.8
            )
    rec = uqviz.fit_recalibration(ds, method="conformal", level=0.9)
    scores = np.sort(np.abs(ds["E"].values) / ds["uE"].values)
    s = scores[math.ceil(1000 * 0.9) - 1]  # k = ceil((n + 1) level) = 900
    assert float(rec.parameters["score_quantile"].item()) == s
    out = rec.apply(ds)
    pred = ds["y"].values - ds["E"].values
    np.testing.assert_allclose(out["lower"].values, pred - s * ds["uE"].values, rtol=1e-12)
    np.testing.assert_allclose(out["upper"].values, pred + s * ds["uE"].values, rtol=1e-12)
    if form == "samples":  # the prediction of an ensemble given without y_pred: the mean
        np.testing.assert_allclose(pred, ds["samples"].mean("sample").values, rtol=1e-12)


# ------------------------------------------------------------------------------------
# bad input
# ------------------------------------------------------------------------------------


def test_cqr_names_the_forms_it_takes():
    rng = np.random.default_rng(7)
    with pytest.raises(ValueError, match="forecast is 'samples'.*'conformal' or 'quantile'"):
        uqviz.fit_recalibration(_ensemble(50, 5, rng), method="cqr")
    yp = np.zeros(20)
    iv = uqviz.from_predictions(rng.standard_normal(20), yp, lower=yp - 1, upper=yp + 1, level=0.5)
    with pytest.raises(ValueError, match="give an interval of level 0.5"):
        uqviz.fit_recalibration(iv, method="cqr", level=0.9)
    q = _quantile_model(20, rng, np.array([0.1, 0.5, 0.9]))
    with pytest.raises(ValueError, match=r"3 levels \[0.1, 0.5, 0.9\], without 0.05 and 0.95"):
        uqviz.fit_recalibration(q, method="cqr", level=0.9)
    assert uqviz.fit_recalibration(q, method="cqr", level=0.8).parameters["score_rank"] == 17


def test_quantile_recalibration_bad_input():
    rng = np.random.default_rng(8)
    ens = _ensemble(100, 5, rng)
    q = _quantile_model(100, rng, np.array([0.1, 0.5, 0.9]))
    rec = uqviz.fit_recalibration(ens, method="quantile")
    with pytest.raises(
        ValueError,
        match="fitted on a forecast given as 'samples', applied to "
        "data whose forecast is 'quantiles'",
    ):
        rec.apply(q)
    with pytest.raises(ValueError, match="only method='quantile' reads the distribution D"):
        uqviz.fit_recalibration(ens, method="conformal", generative="t6")
    with pytest.raises(ValueError, match="only the distribution methods"):
        uqviz.fit_recalibration(ens, method="scaling", generative="t6")
    with pytest.raises(ValueError, match="'empirical' has no predictive CDF"):
        uqviz.fit_recalibration(q, method="quantile", generative="empirical")
    fit_t = uqviz.fit_recalibration(q, method="quantile", generative="t6")
    with pytest.raises(ValueError, match="the data declare D = 'normal'"):
        fit_t.apply(q)  # from_predictions recorded generative='normal'
    std = uqviz.from_arrays(rng.standard_normal(100), np.ones(100))
    fit_t.parameters.attrs["forecast"] = "std"
    assert uqviz.Recalibration(parameters=fit_t.parameters).apply(std).attrs["generative"] == "t6"


def test_recalibrated_ensemble_quantiles_cover_their_levels():
    """A too-narrow ensemble: each recalibrated quantile covers its level in sample (the
    share of y at most the new quantile is the level, to the resolution of the map: the
    100 knots and the steps of the members; many members here, so that a step is small)."""
    rng = np.random.default_rng(8)
    n, s = 6000, 500
    mu = rng.normal(size=n)
    y = mu + 1.5 * rng.standard_normal(n)
    cal = uqviz.from_predictions(y, None, samples=mu[:, None] + rng.standard_normal((n, s)))
    levels = [0.05, 0.1, 0.5, 0.9, 0.95]
    out = uqviz.fit_recalibration(cal, method="quantile", levels=levels).apply(cal)
    q = out["quantiles"].transpose("point", "level").values
    shares = (y[:, None] <= q).mean(axis=0)
    np.testing.assert_allclose(shares, levels, atol=0.008)
