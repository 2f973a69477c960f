"""Recalibration: each method against an independent computation, cross-fitting, trees,
bad input."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import xarray as xr
from scipy import optimize, stats

import uqviz
from uqviz.engine import seeds


def _miscalibrated(size=4000, factor=3.0, seed=0):
    """NIG data (calibrated, errors ~ t-free normal Z) whose uE are ``factor`` times too small."""
    ds = uqviz.synthetic.nig(size, nu=6, rng=seed)
    return ds.assign(uE=ds["uE"] / factor)


def _with_feature(size=3000, seed=1):
    rng = np.random.default_rng(seed)
    u = 0.5 * np.exp(0.4 * rng.standard_normal(size))
    x = rng.uniform(0.0, 10.0, size)
    sigma = u * (0.5 + 0.3 * x)  # miscalibrated as a function of the feature
    e = sigma * rng.standard_normal(size)
    return uqviz.from_arrays(e, u, features={"x": x}, name="feat")


# ----------------------------------------------------------------------------------------
# each method against an independent computation
# ----------------------------------------------------------------------------------------


def test_scaling_is_sqrt_zms_and_multiplies_ue():
    ds = _miscalibrated()
    e, u = ds["E"].values, ds["uE"].values
    rec = uqviz.fit_recalibration(ds, method="scaling")
    s = np.sqrt(np.mean((e / u) ** 2))
    assert float(rec.parameters["factor"]) == pytest.approx(s, rel=1e-14)
    out = rec.apply(ds)
    np.testing.assert_allclose(out["uE"].values, s * u, rtol=1e-14)
    np.testing.assert_array_equal(out["uE_original"].values, u)
    np.testing.assert_array_equal(out["E"].values, e)
    # s is the NLL-optimal single factor
    nll = lambda k: -stats.norm.logpdf(e, scale=k * u).mean()  # noqa: E731
    best = optimize.minimize_scalar(
        nll, bounds=(0.1 * s, 10 * s), method="bounded", options={"xatol": 1e-10}
    )
    assert best.x == pytest.approx(s, rel=1e-6)


def _independent_linear(e, u, x0):
    """(a, b) by SLSQP on the NLL written with scipy.stats, same constraints: a >= 0,
    a min(u) + b >= 0."""

    def nll(p):
        s = p[0] * u + p[1]
        return -stats.norm.logpdf(e, scale=np.maximum(s, 1e-300)).mean()

    res = optimize.minimize(
        nll,
        x0,
        method="SLSQP",
        bounds=[(0, None), (None, None)],
        constraints=[{"type": "ineq", "fun": lambda p: p[0] * u.min() + p[1]}],
        options={"ftol": 1e-15, "maxiter": 2000},
    )
    return res.x, res.fun


@pytest.mark.parametrize("true_b", [0.0, 0.4, -0.3])
def test_linear_matches_an_independent_nll_minimisation(true_b):
    rng = np.random.default_rng(2)
    u = rng.uniform(0.5, 2.0, 20000)
    e = (1.5 * u + true_b) * rng.standard_normal(u.size)
    ds = uqviz.from_arrays(e, u)
    rec = uqviz.fit_recalibration(ds, method="linear")
    a, b = float(rec.parameters["a"]), float(rec.parameters["b"])
    s0 = np.sqrt(np.mean((e / u) ** 2))
    (a_ref, b_ref), nll_ref = _independent_linear(e, u, [s0, 0.0])
    nll_ours = -stats.norm.logpdf(e, scale=a * u + b).mean()
    assert nll_ours <= nll_ref + 1e-10  # at least as good a minimum
    assert a == pytest.approx(a_ref, rel=1e-4, abs=1e-5)
    assert b == pytest.approx(b_ref, rel=1e-3, abs=1e-4)
    assert a >= 0 and a * u.min() + b > 0
    # recorded minimum NLL = the mean NLL without the constant ln sqrt(2 pi)
    assert float(rec.parameters["nll"]) == pytest.approx(
        nll_ours - 0.5 * np.log(2 * np.pi), rel=1e-10
    )
    assert (a, b) == pytest.approx((1.5, true_b), abs=0.06)
    out = rec.apply(ds)
    np.testing.assert_allclose(out["uE"].values, a * u + b, rtol=1e-14)


def test_linear_keeps_new_uncertainties_positive_outside_the_range():
    rng = np.random.default_rng(3)
    u = rng.uniform(0.5, 2.0, 5000)
    ds = uqviz.from_arrays((1.5 * u - 0.6) * rng.standard_normal(u.size), u)
    rec = uqviz.fit_recalibration(ds, method="linear")
    a, b, u_min = (float(rec.parameters[k]) for k in ("a", "b", "u_min"))
    assert b < 0 and u_min == u.min()
    new = rec.apply(uqviz.from_arrays([0.1, -0.1, 0.2], [1e-9, 0.3, 1e3]))["uE"].values
    np.testing.assert_allclose(new, [a * u_min + b, a * u_min + b, a * 1e3 + b], rtol=1e-14)
    assert (new > 0).all()


def test_linear_with_a_zero_error_at_the_smallest_uncertainty_stays_positive():
    # the NLL is unbounded below as uE'(u_min) -> 0 when that point's error is exactly 0
    # (a degenerate minimum the descent from the scaling solution does not reach; the bound
    # a u_min + b >= 1e-8 <uE> would keep it finite): the fit stays finite and positive
    rng = np.random.default_rng(4)
    u = rng.uniform(0.5, 2.0, 500)
    e = 1.5 * u * rng.standard_normal(u.size)
    e[np.argmin(u)] = 0.0
    rec = uqviz.fit_recalibration(uqviz.from_arrays(e, u), method="linear")
    a, b = float(rec.parameters["a"]), float(rec.parameters["b"])
    assert np.isfinite([a, b]).all() and a >= 0
    assert a * u.min() + b >= 1e-8 * u.mean() * (1 - 1e-9)
    assert np.isfinite(float(rec.parameters["nll"]))
    assert (rec.apply(uqviz.from_arrays(e, u))["uE"].values > 0).all()


@pytest.mark.parametrize("conditioning, n_bins", [("uE", 20), ("x", 15), ("uE", None)])
def test_bvs_factors_are_the_local_zms_of_the_local_calibration_bins(conditioning, n_bins):
    ds = _with_feature()
    rec = uqviz.fit_recalibration(ds, method="bvs", conditioning=conditioning, n_bins=n_bins)
    p = rec.parameters
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        loc = uqviz.local_calibration(
            ds, statistic="ZMS", conditioning=conditioning, n_bins=n_bins, n_boot=50, rng=0
        )
    # the same bins as local_calibration
    for c in ("bin_lower", "bin_upper", "bin_center", "count"):
        np.testing.assert_array_equal(p[c].values, loc[c].values)
    np.testing.assert_allclose(p["factor"].values ** 2, loc["estimate"].values, rtol=1e-12)
    # direct per-bin factors with numpy: sort, cut into the counts, sqrt(mean Z^2)
    x = ds[conditioning].values
    z2 = (ds["E"].values / ds["uE"].values)[np.argsort(x, kind="stable")] ** 2
    ends = np.cumsum(p["count"].values)
    direct = [np.sqrt(np.mean(z2[a:b])) for a, b in zip(np.r_[0, ends[:-1]], ends)]
    np.testing.assert_allclose(p["factor"].values, direct, rtol=1e-12)
    # on the calibration data each bin is exactly recalibrated: <Z'^2> = 1 per bin
    out = rec.apply(ds)
    z2_new = (out["E"].values / out["uE"].values)[np.argsort(x, kind="stable")] ** 2
    per_bin = [np.mean(z2_new[a:b]) for a, b in zip(np.r_[0, ends[:-1]], ends)]
    np.testing.assert_allclose(per_bin, 1.0, rtol=1e-12)


def test_bvs_new_points_take_the_factor_of_their_bin_or_the_nearest():
    ds = _with_feature()
    rec = uqviz.fit_recalibration(ds, method="bvs", conditioning="x", n_bins=10)
    p = rec.parameters
    lo, hi, f = p["bin_lower"].values, p["bin_upper"].values, p["factor"].values
    xs = np.array(
        [
            -5.0,
            lo[0],
            hi[0],
            0.5 * (lo[3] + hi[3]),
            hi[3] + 0.1 * (lo[4] - hi[3]),
            lo[4] - 0.1 * (lo[4] - hi[3]),
            hi[-1],
            50.0,
        ]
    )
    new = uqviz.from_arrays(np.zeros(xs.size) + 0.1, np.ones(xs.size), features={"x": xs})
    expected = f[[0, 0, 0, 3, 3, 4, 9, 9]]
    np.testing.assert_allclose(rec.apply(new)["uE"].values, expected, rtol=1e-14)


def _sklearn_isotonic(u_cal, e_cal, u_new):
    from sklearn.isotonic import IsotonicRegression

    iso = IsotonicRegression(increasing=True, out_of_bounds="clip").fit(u_cal**2, e_cal**2)
    return np.sqrt(iso.predict(u_new**2))


@pytest.mark.parametrize("rounded", [False, True])
def test_isotonic_matches_sklearn(rounded):
    pytest.importorskip("sklearn")
    cal, new = _miscalibrated(3000, seed=3), _miscalibrated(1000, seed=4)
    if rounded:  # ties in uE (pooled), as in stratified data
        cal = cal.assign(uE=np.round(cal["uE"], 2).clip(0.01))
    new_u = np.r_[new["uE"].values, 1e-6, 1e3]  # and outside the calibration range (clipped)
    new = uqviz.from_arrays(np.r_[new["E"].values, 0.0, 0.0], new_u)
    rec = uqviz.fit_recalibration(cal, method="isotonic")
    assert int(rec.parameters["n_floored"]) == 0
    for data in (cal, new):
        expected = _sklearn_isotonic(cal["uE"].values, cal["E"].values, data["uE"].values)
        np.testing.assert_allclose(rec.apply(data)["uE"].values, expected, rtol=1e-12)
    # knots: increasing x, non-decreasing fitted variances
    p = rec.parameters
    assert (np.diff(p["uE2"].values) > 0).all()
    assert (np.diff(p["uE2_recalibrated"].values) >= 0).all()


def test_isotonic_floor_against_zero_variances():
    pytest.importorskip("sklearn")
    rng = np.random.default_rng(5)
    u = np.sort(rng.uniform(0.1, 1.0, 500))
    e = u * rng.standard_normal(u.size)
    e[:30] = 0.0  # the 30 smallest uncertainties have errors exactly 0 (e.g. rounded)
    ds = uqviz.from_arrays(e, u)
    rec = uqviz.fit_recalibration(ds, method="isotonic")
    p = rec.parameters
    raw = _sklearn_isotonic(u, e, u) ** 2
    assert raw[0] == 0.0  # sklearn's fit: zero variances
    floor = float(p["floor"])
    assert floor == pytest.approx(raw[raw > 0].min(), rel=1e-12)
    assert int(p["n_floored"]) == int(np.sum(raw == 0))
    out = rec.apply(ds)["uE"].values ** 2
    np.testing.assert_allclose(out, np.maximum(raw, floor), rtol=1e-12)
    assert (out > 0).all()


# ----------------------------------------------------------------------------------------
# cross-fitting
# ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["scaling", "linear", "bvs", "isotonic"])
def test_recalibrate_repairs_a_miscalibrated_nig_set(method):
    ds = _miscalibrated(6000, factor=3.0, seed=6)
    before = uqviz.validate_average(ds, statistics=("ZMS",), n_boot=1000, rng=0)
    assert not bool(before.sel(statistic="ZMS").valid)
    out = uqviz.recalibrate(ds, method=method, folds=5, rng=1)
    after = uqviz.validate_average(out, statistics=("ZMS",), n_boot=1000, rng=0)
    assert bool(after.sel(statistic="ZMS").valid), float(after.sel(statistic="ZMS").estimate)
    # coverage of the 95 % normal interval (Z is normal in the NIG model)
    z = out["E"].values / out["uE"].values
    cover = np.mean(np.abs(z) <= stats.norm.ppf(0.975))
    se = np.sqrt(0.95 * 0.05 / z.size)
    assert abs(cover - 0.95) < 3.5 * se, cover
    assert out.attrs["method"] == method and out.attrs["folds"] == 5
    np.testing.assert_array_equal(out["uE_original"].values, ds["uE"].values)


def test_cross_fitting_recalibrates_each_fold_by_a_fit_on_the_others():
    ds = _miscalibrated(1000, seed=7)
    e, u = ds["E"].values, ds["uE"].values
    out = uqviz.recalibrate(ds, method="scaling", folds=4, rng=3)
    factor = out["uE"].values / u
    values = np.unique(np.round(factor, 12))
    assert values.size == 4  # one factor per fold
    for v in values:
        fold = np.isclose(factor, v, rtol=1e-12)
        assert 249 <= fold.sum() <= 251
        others = ~fold
        assert v == pytest.approx(np.sqrt(np.mean((e[others] / u[others]) ** 2)), rel=1e-12)


def test_recalibrate_is_reproducible_and_seeded_like_the_engine():
    ds = _miscalibrated(800, seed=8)
    a = uqviz.recalibrate(ds, method="isotonic", rng=5)
    b = uqviz.recalibrate(ds, method="isotonic", rng=5)
    c = uqviz.recalibrate(ds, method="isotonic", rng=6)
    np.testing.assert_array_equal(a["uE"].values, b["uE"].values)
    assert not np.array_equal(a["uE"].values, c["uE"].values)
    assert a.attrs["rng"] == 5
    # a DataTree of one dataset gives the numbers of that dataset alone
    tree = uqviz.recalibrate(xr.DataTree.from_dict({"only": ds}), method="isotonic", rng=5)
    np.testing.assert_array_equal(tree["only"]["uE"].values, a["uE"].values)
    # a Generator is accepted; the folds come from its first child stream
    g = uqviz.recalibrate(ds, method="isotonic", rng=np.random.default_rng(5))
    np.testing.assert_array_equal(g["uE"].values, a["uE"].values)
    assert seeds.seed_attr(np.random.default_rng(5)) == g.attrs["rng"]


# ----------------------------------------------------------------------------------------
# apply on new data, DataTree, the object
# ----------------------------------------------------------------------------------------


def test_apply_on_new_data_keeps_every_variable():
    cal = _with_feature(2000, seed=9)
    new = _with_feature(500, seed=10)
    rec = uqviz.fit_recalibration(cal, method="bvs", conditioning="x", n_bins=10)
    out = rec.apply(new)
    assert set(out.data_vars) == {"E", "uE", "x", "uE_original"}
    assert out.attrs["method"] == "bvs" and out.attrs["conditioning"] == "x"
    assert out.attrs["n_bins"] == 10 and out.attrs["name"] == "feat"
    assert new["uE"].identical(_with_feature(500, seed=10)["uE"])  # input untouched
    # the recalibrated feature-dependent set passes adaptivity better than before
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fv = [
            float(
                uqviz.fraction_valid(
                    uqviz.local_calibration(d, conditioning="x", n_bins=5, n_boot=500, rng=0)
                ).estimate
            )
            for d in (new, out)
        ]
    assert fv[1] > fv[0]


@pytest.mark.parametrize("conditioning", ["uE", "x"])
def test_a_fitted_bvs_applies_to_one_point_or_equal_values(conditioning):
    # issue 22 item 7: apply() refused new data whose conditioning values are all equal
    # ("the conditioning variable is constant"), so one new point could not be recalibrated
    cal = _with_feature(2000, seed=9)
    rec = uqviz.fit_recalibration(cal, method="bvs", conditioning=conditioning, n_bins=10)
    many = cal.isel(point=slice(0, 50))
    one = many.isel(point=[7])
    np.testing.assert_array_equal(rec.apply(one)["uE"].values, rec.apply(many)["uE"].values[[7]])
    same = many.isel(point=[7, 7, 7]).assign_coords(point=[0, 1, 2])
    np.testing.assert_array_equal(
        rec.apply(same)["uE"].values, np.repeat(rec.apply(one)["uE"].values, 3)
    )
    with pytest.raises(ValueError, match="constant"):  # fitting on equal values still fails
        uqviz.fit_recalibration(same, method="bvs", conditioning=conditioning, n_bins=1)


def test_datatree_fit_apply_and_recalibrate():
    a, b = _miscalibrated(1500, factor=2.0, seed=11), _miscalibrated(1200, factor=4.0, seed=12)
    tree = uqviz.from_datasets({"a": a, "b": b})
    rec = uqviz.fit_recalibration(tree, method="scaling")
    assert rec.datasets == ["a", "b"]
    assert rec.parameters["factor"].dims == ("dataset",)
    for name, ds in (("a", a), ("b", b)):
        alone = uqviz.fit_recalibration(ds, method="scaling")
        assert float(rec[name].parameters["factor"]) == float(alone.parameters["factor"])
    out = rec.apply(tree)
    assert isinstance(out, xr.DataTree) and list(out.children) == ["a", "b"]
    np.testing.assert_allclose(
        out["b"]["uE"].values, float(rec.parameters["factor"].sel(dataset="b")) * b["uE"].values
    )
    with pytest.raises(ValueError, match="fitted on a DataTree"):
        rec.apply(a)
    # bins or knots of different counts per child: padded parameters, each child's own fit
    for method in ("bvs", "isotonic"):
        rec_m = uqviz.fit_recalibration(tree, method=method)
        for name, ds in (("a", a), ("b", b)):
            alone = uqviz.fit_recalibration(ds, method=method).apply(ds)
            np.testing.assert_allclose(
                rec_m.apply(tree)[name]["uE"].values, alone["uE"].values, rtol=1e-14
            )
            np.testing.assert_allclose(
                rec_m[name].apply(ds)["uE"].values, alone["uE"].values, rtol=1e-14
            )
    cross = uqviz.recalibrate(tree, method="bvs", rng=0)
    assert list(cross.children) == ["a", "b"]
    assert cross["a"].attrs["rng"] == 0
    # a one-dataset fit applies to every child of a tree
    both = uqviz.fit_recalibration(a, method="scaling").apply(tree)
    assert list(both.children) == ["a", "b"]


def test_parameters_rebuild_the_recalibration(tmp_path):
    ds = _miscalibrated(1000, seed=13)
    for method in ("scaling", "linear", "bvs", "isotonic"):
        rec = uqviz.fit_recalibration(ds, method=method)
        path = tmp_path / f"{method}.nc"
        rec.parameters.to_netcdf(path)
        with xr.open_dataset(path) as saved:
            again = uqviz.Recalibration(parameters=saved.load())
        np.testing.assert_array_equal(again.apply(ds)["uE"].values, rec.apply(ds)["uE"].values)


def test_repr_names_the_method_and_its_numbers():
    ds = _miscalibrated(1000, seed=14)
    text = repr(uqviz.fit_recalibration(ds, method="scaling"))
    assert "method='scaling'" in text and "s = " in text and "1000 points" in text
    text = repr(uqviz.fit_recalibration(ds, method="bvs", n_bins=5))
    assert "n_bins=5" in text and "5 bins of uE" in text
    assert "<pre>" in uqviz.fit_recalibration(ds, method="isotonic")._repr_html_()


# ----------------------------------------------------------------------------------------
# bad input
# ----------------------------------------------------------------------------------------


def test_bad_input_gives_clear_errors():
    ds = _with_feature(500, seed=15)
    with pytest.raises(ValueError, match="method must be one of"):
        uqviz.fit_recalibration(ds, method="platt")
    with pytest.raises(ValueError, match="'mass' is not in the dataset"):
        uqviz.fit_recalibration(ds, method="bvs", conditioning="mass")
    with pytest.raises(ValueError, match=r"500 points is too small for n_bins = 60.*at most 50"):
        uqviz.fit_recalibration(ds, method="bvs", n_bins=60)
    with pytest.raises(ValueError, match="n_bins=5: only method='bvs'"):
        uqviz.fit_recalibration(ds, method="scaling", n_bins=5)
    with pytest.raises(ValueError, match="conditioning='x'.*only method='bvs'"):
        uqviz.fit_recalibration(ds, method="isotonic", conditioning="x")
    with pytest.raises(TypeError, match="conditioning must name a variable"):
        uqviz.fit_recalibration(ds, method="bvs", conditioning=ds["x"].values)
    zero = ds.assign(E=ds["E"] * 0)
    for method in ("scaling", "linear", "isotonic", "bvs"):
        with pytest.raises(ValueError, match="zero-variance fit"):
            uqviz.fit_recalibration(zero, method=method)
    with pytest.raises(ValueError, match=r"zero-variance fit: in 1 of 5 bins.*100 points"):
        e = ds["E"].values.copy()
        e[np.argsort(ds["uE"].values)[:100]] = 0.0
        uqviz.fit_recalibration(ds.assign(E=("point", e)), method="bvs", n_bins=5)
    with pytest.raises(ValueError, match="folds = 501 is more than the 500 points"):
        uqviz.recalibrate(ds, method="scaling", folds=501)
    with pytest.raises(ValueError, match="folds must be >= 2"):
        uqviz.recalibrate(ds, method="scaling", folds=1)
    with pytest.raises(ValueError, match=r"too small for n_bins = 45"):  # 400 points per fit
        uqviz.recalibrate(ds, method="bvs", n_bins=45, folds=5)
    with pytest.raises(ValueError, match="already holds uE_original"):
        uqviz.recalibrate(uqviz.recalibrate(ds, method="scaling", rng=0), method="scaling")
    rec = uqviz.fit_recalibration(ds, method="bvs", conditioning="x", n_bins=5)
    with pytest.raises(ValueError, match="'x' is not in the dataset"):
        rec.apply(uqviz.from_arrays([0.1], [0.2]))
    with pytest.raises(TypeError, match="parameters must be an xarray.Dataset"):
        uqviz.Recalibration(parameters={"factor": 2.0})
    with pytest.raises(ValueError, match="lack"):
        uqviz.Recalibration(parameters=xr.Dataset(attrs={"method": "linear"}))


def test_small_bins_warn():
    ds = _with_feature(500, seed=16)
    with pytest.warns(UserWarning, match="10 of 10 bins hold fewer than 100 points"):
        uqviz.fit_recalibration(ds, method="bvs", n_bins=10)
    with pytest.warns(UserWarning, match="fewer than 100 points") as record:
        uqviz.recalibrate(ds, method="bvs", n_bins=10, folds=5)
    assert len([w for w in record if "fewer than 100" in str(w.message)]) == 1  # not per fold


# ----------------------------------------------------------------------------------------
# the before/after plot
# ----------------------------------------------------------------------------------------


def test_before_after_plot_of_local_and_average_results():
    from uqviz.plots.recalibration import before_after

    ds = _with_feature(2000, seed=17)
    out = uqviz.recalibrate(ds, method="bvs", conditioning="x", n_bins=10, rng=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        loc = [
            uqviz.local_calibration(d, conditioning="x", n_bins=10, n_boot=200, rng=0)
            for d in (ds, out)
        ]
        avg = [uqviz.validate_average(d, n_boot=200, rng=0) for d in (ds, out)]
    ax = before_after(*loc, labels=("raw", "BVS on x"), log_x=True)
    texts = [t.get_text() for t in ax.get_legend().get_texts()]
    n_valid = [int(r["valid"].sum()) for r in loc]
    assert texts[1] == f"raw ({n_valid[0]}/10 bins valid)"
    assert texts[2] == f"BVS on x ({n_valid[1]}/10 bins valid)"
    assert ax.get_xscale() == "log"
    ax = before_after(*avg)
    assert [t.get_text() for t in ax.get_yticklabels()] == ["ZMS", "RCE"]
    with pytest.raises(ValueError, match="cannot be compared"):
        before_after(loc[0], avg[1])
    with pytest.raises(ValueError, match="before_result: not a result of"):
        before_after(ds, out)  # the data, not a result
    with pytest.raises(TypeError, match="before_result must be"):
        before_after(3, out)
    other = loc[1].assign_attrs(conditioning="uE")
    with pytest.raises(ValueError, match="conditioning"):
        before_after(loc[0], other)


def test_bvs_on_a_tied_feature_restores_in_sample_zms_of_the_bins_apply_uses():
    # equal-count bins split groups of tied feature values, apply() assigns a value to one bin:
    # the factors are fitted on the bins as apply() assigns them, so the in-sample local ZMS
    # of every used bin is exactly 1 (it was not on QM9's molecular mass)
    rng = np.random.default_rng(5)
    m = 3000
    x = rng.integers(0, 12, m).astype(float)  # 12 distinct values, 20 bins
    u = rng.uniform(0.5, 2.0, m)
    e = u * (0.5 + x / 6) * rng.standard_normal(m)
    ds = uqviz.from_arrays(e, u, features={"x": x})
    with pytest.warns(UserWarning):
        rec = uqviz.fit_recalibration(ds, method="bvs", conditioning="x", n_bins=20)
    new = rec.apply(ds)
    z2 = (new.E.values / new.uE.values) ** 2
    lab = np.searchsorted(
        0.5 * (rec.parameters.bin_upper.values[:-1] + rec.parameters.bin_lower.values[1:]),
        x,
        side="left",
    )
    for k in np.unique(lab):
        np.testing.assert_allclose(z2[lab == k].mean(), 1.0, rtol=1e-12)
