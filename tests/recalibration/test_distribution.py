"""Distribution recalibration: conformal, CQR and quantile recalibration (issue 23, item 4).

References: crepes 0.9.1 ``ConformalRegressor`` and uncertainty-toolbox 0.1.1's isotonic
recalibrators, through the committed fixtures ``tests/fixtures/predictive.npz`` (families
``conformal`` and ``recal``; ``tests/fixtures/make_predictive_fixtures.py`` made them, and
``tests/scores/test_predictive_fixtures.py`` checks them against the definitions); CQR by hand;
the finite-sample guarantee by a seeded simulation.
"""

from __future__ import annotations

import math
import warnings
from fractions import Fraction

import numpy as np
import pytest
import xarray as xr

import uqviz
from uqviz.engine.binning import compute_bins

from tests.conftest import PeerFixtures

PEER = PeerFixtures("predictive")
FIXTURES, META, ARRAYS, SET = PEER.folder, PEER.meta, PEER.arrays, PEER.settings
TOL = dict(rtol=1e-9, atol=1e-9)


_in, _out = PEER.inputs, PEER.output


def _quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", uqviz.UqvizWarning)
        return fn(*args, **kwargs)


# ------------------------------------------------------------------------------------
# crepes ConformalRegressor (normalised, Mondrian, both; confidence 0.9 and 0.95)
# ------------------------------------------------------------------------------------

CONFORMAL_RUNS = [
    (case, run)
    for case in sorted(META["cases"]["conformal"])
    for run in sorted(META["cases"]["conformal"][case])
]

# the groups where crepes' rank, int((1 - conf)(n + 1)) - 1 in decreasing order computed in
# floating point, is one above ceil((n + 1) conf): conf = 0.9 and (n + 1) a multiple of 10
# (1 - 0.9 = 0.09999999999999998 rounds the floor down); "all" is the whole calibration set
CREPES_ONE_HIGHER = {
    ("large", "mondrian/c0.9"): {"0", "1", "3"},
    ("large", "normalized/c0.9"): {"all"},
    ("large", "normalized_mondrian/c0.9"): {"0", "1", "3"},
    ("odd", "mondrian/c0.9"): {"0", "1", "2"},
    ("odd", "normalized_mondrian/c0.9"): {"0", "1", "2"},
    ("small", "normalized/c0.9"): {"all"},
    ("ties", "normalized/c0.9"): {"all"},
}


def _crepes_data(case, mode):
    """Calibration and test datasets of a fixture case: crepes' ``sigmas`` are uE (1 when the
    mode is not normalised), its ``bins`` the feature ``bin``; the test points' E is 0, so the
    prediction ``y - E`` is crepes' ``y_hat``."""
    inp = _in("conformal", case)
    normalized = mode.startswith("normalized")
    u_cal = inp["uE_cal"] if normalized else np.ones(inp["E_cal"].size)
    u_test = inp["uE_test"] if normalized else np.ones(inp["uE_test"].size)
    cal = uqviz.from_arrays(inp["E_cal"], u_cal).assign(
        bin=("point", inp["bins_cal"].astype(float))
    )
    test = uqviz.from_arrays(np.zeros(u_test.size), u_test).assign(
        bin=("point", inp["bins_test"].astype(float)), y=("point", inp["yhat_test"])
    )
    options = dict(conditioning="bin", binning="stratified") if mode.endswith("mondrian") else {}
    return cal, test, options, inp


def _intervals(case, run, level):
    mode, _ = run.split("/c")
    cal, test, options, inp = _crepes_data(case, mode)
    rec = _quiet(uqviz.fit_recalibration, cal, method="conformal", level=level, **options)
    out = _quiet(rec.apply, test)
    return np.stack([out["lower"].values, out["upper"].values], axis=1), rec, inp


def _scores(inp, run, group):
    """Sorted calibration scores of a fixture run (of one Mondrian bin)."""
    s = np.abs(inp["E_cal"]) / (inp["uE_cal"] if run.startswith("normalized") else 1.0)
    return np.sort(s if group is None else s[inp["bins_cal"] == group])


def _ceil_rank(n, conf):
    return math.ceil((n + 1) * Fraction(str(conf)))


@pytest.mark.parametrize(("case", "run"), CONFORMAL_RUNS)
def test_conformal_equals_crepes_where_the_ranks_agree(case, run):
    """uqviz's rank ceil((n + 1) level) equals crepes' except in the listed groups, where
    crepes takes the next score; elsewhere the intervals agree to 1e-9."""
    conf = float(run.split("/c")[1])
    mine, rec, inp = _intervals(case, run, conf)
    want = _out("conformal", case, run)
    groups = META["cases"]["conformal"][case][run]["groups"]
    mondrian = "mondrian" in run
    bins_test = inp["bins_test"] if mondrian else np.zeros(want.shape[0], int)
    params = rec.parameters
    differing = set()
    for g, info in groups.items():
        b = 0 if g == "all" else int(params["bin"].values[params["bin_lower"].values == int(g)][0])
        assert int(params["count"][b]) == info["n"]
        assert int(params["score_rank"][b]) == _ceil_rank(info["n"], conf) == info["ceil_rank"]
        sel = bins_test == (0 if g == "all" else int(g))
        if info["crepes_rank"] == info["ceil_rank"]:
            np.testing.assert_allclose(mine[sel], want[sel], **TOL)
        elif info["crepes_rank"] == 0:  # too few points: both give the whole line
            assert np.isposinf(float(params["score_quantile"][b]))
            np.testing.assert_array_equal(mine[sel], want[sel])
        else:
            # crepes takes the next order statistic of the bin's scores (equal to uqviz's
            # when tied: the ties case)
            assert info["crepes_rank"] == info["ceil_rank"] + 1
            scores = _scores(inp, run, None if g == "all" else int(g))
            k = info["ceil_rank"]
            assert float(params["score_quantile"][b]) == scores[k - 1]
            assert info["score"] == scores[k]
            scale = inp["uE_test"][sel] if run.startswith("normalized") else 1.0
            np.testing.assert_allclose(
                mine[sel, 1] - mine[sel, 0], 2 * scores[k - 1] * scale, **TOL
            )
            np.testing.assert_allclose(want[sel, 1] - want[sel, 0], 2 * scores[k] * scale, **TOL)
            assert (scores[k] > scores[k - 1]) == (case != "ties")
            differing.add(g)
    assert differing == CREPES_ONE_HIGHER.get((case, run), set())


def test_crepes_rank_differs_exactly_where_n_plus_one_is_a_multiple_of_ten():
    for (case, run), groups in CREPES_ONE_HIGHER.items():
        assert run.endswith("c0.9")
        for g in groups:
            n = META["cases"]["conformal"][case][run]["groups"][g]["n"]
            assert (n + 1) % 10 == 0
    n_groups = sum(len(c[r]["groups"]) for c in META["cases"]["conformal"].values() for r in c)
    assert sum(len(g) for g in CREPES_ONE_HIGHER.values()) == 15 and n_groups == 60


@pytest.mark.parametrize(("case", "run"), CONFORMAL_RUNS)
def test_conformal_reproduces_crepes_everywhere_with_its_rounding(case, run):
    """crepes' rank is n + 1 - floor((n + 1) fl(1 - c)), fl(1 - c) the float 1 - c. Where
    fl(1 - c) is below the decimal 1 - c (c = 0.9: 0.09999999999999998) crepes' confidence c
    is uqviz's level c + 1e-12 (the next rank where (n + 1) c is an integer, the same rank
    elsewhere); where it is above (c = 0.95: 0.05000000000000004) it is uqviz's level c. With
    that level every fixture interval agrees to 1e-9."""
    conf = float(run.split("/c")[1])
    below = Fraction(1.0 - conf) < 1 - Fraction(str(conf))
    assert below == (conf == 0.9)
    mine, _, _ = _intervals(case, run, conf + 1e-12 if below else conf)
    want = _out("conformal", case, run)
    np.testing.assert_allclose(mine, want, **TOL)
    assert np.array_equal(np.isinf(mine), np.isinf(want))


def test_conformal_bin_too_small_for_the_level_gives_the_whole_line():
    """ties case, Mondrian bin of 18 points at 0.95: k = 19 > 18, as crepes (which warns)."""
    cal, test, options, inp = _crepes_data("ties", "mondrian")
    with pytest.warns(uqviz.UnreliableWarning, match=r"1 of 3 bins .*level=0.95"):
        rec = uqviz.fit_recalibration(cal, method="conformal", level=0.95, **options)
    out = _quiet(rec.apply, test)
    small = inp["bins_test"] == 3
    assert np.all(np.isneginf(out["lower"].values[small]))
    assert np.all(np.isposinf(out["upper"].values[small]))
    assert np.all(np.isfinite(out["lower"].values[~small]))
    assert META["cases"]["conformal"]["ties"]["mondrian/c0.95"]["warned"]


# ------------------------------------------------------------------------------------
# uncertainty-toolbox's isotonic recalibrators
# ------------------------------------------------------------------------------------

RECAL_CASES = sorted(META["cases"]["recal"])


def _uct_data(case, part, reflect=True):
    """uncertainty-toolbox's residuals are y_pred - y_true: to count its proportions,
    E = y_pred - y_true (reflected); y is set so that the prediction y - E is y_pred."""
    inp = _in("recal", case)
    yp, ys, yt = inp[f"y_pred_{part}"], inp[f"y_std_{part}"], inp[f"y_true_{part}"]
    e = yp - yt if reflect else yt - yp
    return uqviz.from_arrays(e, ys).assign(y=("point", yp + e))


@pytest.mark.parametrize("case", RECAL_CASES)
def test_quantile_recalibration_equals_uncertainty_toolbox(case):
    cal, test = _uct_data(case, "cal"), _uct_data(case, "test")
    levels = SET["recal_quantiles"]
    rec = uqviz.fit_recalibration(cal, method="quantile", levels=levels)
    p = rec.parameters
    np.testing.assert_allclose(
        p["observed"], _out("recal", case, "quantile/iso_X_thresholds"), **TOL
    )
    np.testing.assert_allclose(
        p["nominal"], _out("recal", case, "quantile/iso_y_thresholds"), **TOL
    )
    out = rec.apply(test)
    np.testing.assert_allclose(out["level"], levels)
    np.testing.assert_allclose(
        out["quantiles"].transpose("point", "level"),
        _out("recal", case, "quantile/recal_quantiles"),
        **TOL,
    )
    assert out.attrs["forecast"] == "quantiles"
    np.testing.assert_array_equal(out["uE"], test["uE"])  # uE unchanged


@pytest.mark.parametrize("case", RECAL_CASES)
def test_interval_recalibration_equals_uncertainty_toolbox(case):
    cal, test = _uct_data(case, "cal"), _uct_data(case, "test")
    lower, upper = [], []
    for level in SET["recal_intervals"]:
        rec = uqviz.fit_recalibration(cal, method="quantile", proportions="interval", level=level)
        np.testing.assert_allclose(
            rec.parameters["observed"], _out("recal", case, "interval/iso_X_thresholds"), **TOL
        )
        out = rec.apply(test)
        assert "quantiles" not in out and out.attrs["forecast"] == "interval"
        lower.append(out["lower"].values)
        upper.append(out["upper"].values)
    np.testing.assert_allclose(
        np.stack(lower, 1), _out("recal", case, "interval/recal_lower"), **TOL
    )
    np.testing.assert_allclose(
        np.stack(upper, 1), _out("recal", case, "interval/recal_upper"), **TOL
    )


def test_quantile_recalibration_on_uqviz_errors_moves_the_median_the_right_way():
    """With uqviz's E = y_true - y_pred the PIT is Phi(E/uE): on data biased upward the
    recalibrated median rises (uncertainty-toolbox, fitted on y_pred - y_true, lowers it)."""
    cal, test = _uct_data("biased", "cal", reflect=False), _uct_data("biased", "test", False)
    out = uqviz.fit_recalibration(cal, method="quantile", levels=[0.5]).apply(test)
    pred = test["y"] - test["E"]
    shift = ((out["quantiles"].sel(level=0.5) - pred) / test["uE"]).mean()
    assert float(shift) > 0.5
    uct = _out("recal", "biased", "quantile/recal_quantiles")[:, SET["recal_quantiles"].index(0.5)]
    assert np.mean((uct - pred.values) / test["uE"].values) < -0.5


def test_quantile_recalibration_of_calibrated_data_is_near_identity():
    rng = np.random.default_rng(3)
    u = rng.uniform(0.5, 2.0, 20000)
    ds = uqviz.from_arrays(u * rng.standard_normal(u.size), u)
    out = uqviz.fit_recalibration(ds, method="quantile", levels=[0.1, 0.5, 0.9]).apply(ds)
    z = (out["quantiles"] / ds["uE"]).values  # error space: prediction 0
    np.testing.assert_allclose(z.mean(axis=0), [-1.2816, 0.0, 1.2816], atol=0.05)


# ------------------------------------------------------------------------------------
# CQR by hand
# ------------------------------------------------------------------------------------


def _quantile_data(y, lo, hi, levels=(0.1, 0.9), pred=None):
    pred = np.zeros(len(y)) if pred is None else pred
    ds = uqviz.from_arrays(np.asarray(y) - pred, np.ones(len(y)))
    return ds.assign(
        y=("point", np.asarray(y, float)),
        quantiles=(("point", "level"), np.stack([lo, hi], axis=1)),
    ).assign_coords(level=list(levels))


def test_cqr_by_hand():
    # 9 calibration points, level 0.8: k = ceil(10 * 0.8) = 8
    y = np.array([0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0])
    lo = np.array([-1.0, 0.5, 2.5, 2.0, 4.5, 3.0, 5.0, 7.5, 6.0])
    hi = np.array([1.0, 2.0, 3.0, 2.5, 6.0, 4.0, 7.0, 9.0, 7.5])
    # scores max(lo - y, y - hi): -1, -0.5, 0.5, 0.5, 0.5, 1, -1, 0.5, 0.5
    # sorted: -1, -1, -0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 1 -> 8th smallest 0.5
    cal = _quantile_data(y, lo, hi)
    rec = uqviz.fit_recalibration(cal, method="cqr", level=0.8)
    assert rec.parameters["score_quantile"].item() == 0.5
    assert rec.parameters["score_rank"].item() == 8
    new = _quantile_data([10.0, -3.0], np.array([9.0, -2.0]), np.array([11.0, 0.0]))
    out = rec.apply(new)
    np.testing.assert_array_equal(out["lower"], [8.5, -2.5])
    np.testing.assert_array_equal(out["upper"], [11.5, 0.5])
    assert out["lower"].attrs["level"] == 0.8 and out.attrs["forecast"] == "interval"
    # at level 0.9: k = 9, Q = 1; an interval lower/upper at 0.9 gives the same
    rec9 = uqviz.fit_recalibration(
        cal.drop_vars(["quantiles", "level"]).assign(
            lower=("point", lo, {"level": 0.9}), upper=("point", hi, {"level": 0.9})
        ),
        method="cqr",
        level=0.9,
    )
    assert rec9.parameters["score_quantile"].item() == 1.0
    out9 = rec9.apply(
        new.drop_vars(["quantiles", "level"]).assign(
            lower=("point", [9.0, -2.0], {"level": 0.9}), upper=("point", [11.0, 0.0])
        )
    )
    np.testing.assert_array_equal(out9["lower"], [8.0, -3.0])
    np.testing.assert_array_equal(out9["lower_original"], [9.0, -2.0])  # the given interval


def test_cqr_without_quantiles_is_an_error():
    ds = uqviz.from_arrays([0.1, -0.2, 0.3], [1.0, 1.0, 1.0])
    with pytest.raises(ValueError, match="cqr.*neither quantiles at the levels 0.05 and 0.95"):
        uqviz.fit_recalibration(ds, method="cqr")
    q = _quantile_data([0.0, 1.0, 2.0], np.zeros(3), np.ones(3), levels=(0.25, 0.75))
    with pytest.raises(
        ValueError,
        match=r"quantiles at the 2 levels \[0.25, 0.75\], without "
        "0.05 and 0.95",
    ):
        uqviz.fit_recalibration(q, method="cqr", level=0.9)


def test_cqr_nan_and_crossed_quantiles_are_counted():
    # the dataset's forecast check (check_dataset) counts NaN and crossing quantiles ...
    q = _quantile_data(
        [0.0, 1.0, 2.0, 3.0], np.array([0.0, np.nan, 1.0, 4.0]), np.array([1.0, 2.0, np.inf, 3.5])
    )
    with pytest.raises(
        ValueError,
        match=r"quantiles: 1 row with a NaN quantile \(row 1\)\n"
        r"  quantiles: 1 row with crossing quantiles",
    ):
        uqviz.fit_recalibration(q, method="cqr", level=0.8)
    q = _quantile_data([0.0, 1.0, 2.0], np.array([0.0, 2.0, 3.0]), np.array([1.0, 1.0, 2.0]))
    with pytest.raises(ValueError, match=r"quantiles: 2 rows with crossing quantiles .*rows 1, 2"):
        uqviz.fit_recalibration(q, method="cqr", level=0.8)
    # ... and CQR refuses an infinite bound, a tail the dataset may hold
    q = _quantile_data([0.0, 1.0, 2.0], np.array([0.0, 0.5, 1.0]), np.array([1.0, 2.0, np.inf]))
    with pytest.raises(ValueError, match="1 points have a NaN or infinite"):
        uqviz.fit_recalibration(q, method="cqr", level=0.8)


# ------------------------------------------------------------------------------------
# conformal by hand, apply, cross-fit, rng
# ------------------------------------------------------------------------------------


def test_conformal_by_hand_and_apply_on_new_data():
    e = np.array([0.5, -1.0, 2.0, -0.2, 3.0, 1.0, -4.0, 0.1, 0.9])
    u = np.array([1.0, 1.0, 2.0, 1.0, 1.0, 2.0, 2.0, 1.0, 3.0])
    # |E|/uE: 0.5 1 1 0.2 3 0.5 2 0.1 0.3 -> sorted 0.1 0.2 0.3 0.5 0.5 1 1 2 3; level 0.8: k = 8
    rec = uqviz.fit_recalibration(uqviz.from_arrays(e, u), method="conformal", level=0.8)
    assert rec.parameters["score_quantile"].item() == 2.0
    new = uqviz.from_arrays([0.3, -0.1], [0.5, 2.0]).assign(y=("point", [10.3, 4.9]))
    out = rec.apply(new)
    np.testing.assert_allclose(out["lower"], [9.0, 1.0])  # prediction y - E: 10, 5
    np.testing.assert_allclose(out["upper"], [11.0, 9.0])
    np.testing.assert_array_equal(out["uE"], new["uE"])
    assert "uE_original" not in out
    # without y: error space, prediction 0
    out0 = rec.apply(uqviz.from_arrays([0.3, -0.1], [0.5, 2.0]))
    np.testing.assert_allclose(out0["upper"], [1.0, 4.0])
    # level 0.9: k = 9 -> 3; 0.95: k = ceil(9.5) = 10 > 9 -> the whole line
    assert (
        uqviz.fit_recalibration(uqviz.from_arrays(e, u), method="conformal", level=0.9)
        .parameters["score_quantile"]
        .item()
        == 3.0
    )
    with pytest.warns(uqviz.UnreliableWarning, match="too few calibration points"):
        inf = uqviz.fit_recalibration(uqviz.from_arrays(e, u), method="conformal", level=0.95)
    assert np.isposinf(inf.parameters["score_quantile"].item())


def test_mondrian_bins_cut_as_bvs_and_looked_up():
    rng = np.random.default_rng(1)
    u = np.exp(rng.normal(0, 0.5, 4000))
    e = u * rng.standard_normal(u.size) * np.where(u > np.median(u), 2.0, 0.5)
    ds = uqviz.from_arrays(e, u)
    rec = uqviz.fit_recalibration(ds, method="conformal", n_bins=4, level=0.9)
    p = rec.parameters
    assert p.sizes["bin"] == 4 and p["count"].values.tolist() == [1000] * 4
    bins = compute_bins(u, n_bins=4)  # the bins of BVS and local_calibration
    np.testing.assert_array_equal(p["bin_lower"], bins.lower)
    np.testing.assert_array_equal(p["bin_upper"], bins.upper)
    z = np.abs(e / u)
    order = np.argsort(u)
    for b in range(4):
        s = np.sort(z[order[1000 * b : 1000 * (b + 1)]])
        assert float(p["score_quantile"][b]) == s[math.ceil(1001 * 0.9) - 1]
    new = uqviz.from_arrays([0.0, 0.0], [u.min() / 2, u.max() * 2])  # outside: nearest bin
    out = rec.apply(new)
    np.testing.assert_allclose(
        out["upper"].values, p["score_quantile"].values[[0, 3]] * new["uE"].values
    )


def test_mondrian_tied_values_share_the_lower_bin():
    """Equal-count bins of a few-valued variable: a value split by a bin boundary goes to
    the lower bin (as BVS looks it up); a bin left without points is dropped."""
    x = np.repeat([0.0, 1.0, 2.0], [5, 10, 5])  # 2 bins of 10: the boundary splits x = 1
    e = np.arange(1.0, 21.0)
    ds = uqviz.from_arrays(e, np.ones(20)).assign(x=("point", x))
    rec = uqviz.fit_recalibration(ds, method="conformal", conditioning="x", n_bins=2, level=0.5)
    p = rec.parameters
    assert p["count"].values.tolist() == [15, 5]  # 0s and 1s, then the 2s
    # k = ceil(16 * 0.5) = 8 of |E| = 1..15 -> 8; k = ceil(6 * 0.5) = 3 of 16..20 -> 18
    assert p["score_quantile"].values.tolist() == [8.0, 18.0]


def test_recalibrate_cross_fits_each_fold_on_the_others():
    ds = uqviz.synthetic.nig(500, nu=6, rng=2)
    folds = 4
    out = uqviz.recalibrate(ds, method="conformal", folds=folds, rng=7, n_bins=2)
    # the folds: recalibrate's rule (a permutation from the first child stream, cut in parts)
    perm = np.random.default_rng(7).spawn(1)[0].permutation(500)
    for part in np.array_split(perm, folds):
        train = np.setdiff1d(np.arange(500), part)
        rec = uqviz.fit_recalibration(ds.isel(point=train), method="conformal", n_bins=2)
        want = rec.apply(ds.isel(point=part))
        np.testing.assert_array_equal(out["lower"].values[part], want["lower"].values)
        np.testing.assert_array_equal(out["upper"].values[part], want["upper"].values)
    assert out.attrs["folds"] == folds and out.attrs["method"] == "conformal"
    assert out.attrs["rng"] == 7 and out.attrs["level"] == 0.9


def test_same_rng_same_numbers():
    ds = uqviz.synthetic.nig(600, nu=6, rng=3)
    for method in ("conformal", "quantile"):
        a = uqviz.recalibrate(ds, method=method, rng=11)
        b = uqviz.recalibrate(ds, method=method, rng=11)
        c = uqviz.recalibrate(ds, method=method, rng=12)
        xr.testing.assert_identical(a, b)
        assert not np.array_equal(a["upper"].values, c["upper"].values)


def test_datatree_fit_and_apply():
    tree = uqviz.from_datasets(
        {"a": uqviz.synthetic.nig(300, nu=6, rng=0), "b": uqviz.synthetic.nig(400, nu=6, rng=1)}
    )
    rec = uqviz.fit_recalibration(tree, method="conformal", n_bins=3)
    out = rec.apply(tree)
    for name in ("a", "b"):
        one = uqviz.fit_recalibration(tree[name].to_dataset(), method="conformal", n_bins=3)
        np.testing.assert_array_equal(
            out[name]["upper"].values, one.apply(tree[name].to_dataset())["upper"].values
        )
    cross = uqviz.recalibrate(tree, method="quantile", rng=0, levels=[0.5])
    assert set(cross.children) == {"a", "b"}


# ------------------------------------------------------------------------------------
# bad input
# ------------------------------------------------------------------------------------


def _ds(m=50):
    return uqviz.synthetic.nig(m, nu=6, rng=0)


@pytest.mark.parametrize("level", [0.0, 1.0, 1.5, -0.1])
def test_level_out_of_range(level):
    with pytest.raises(ValueError, match=r"level must be in \(0, 1\)"):
        uqviz.fit_recalibration(_ds(), method="conformal", level=level)


def test_bad_option_combinations():
    with pytest.raises(TypeError, match="level must be a number"):
        uqviz.fit_recalibration(_ds(), method="conformal", level="0.9")
    with pytest.raises(ValueError, match="level: only the distribution methods"):
        uqviz.fit_recalibration(_ds(), method="scaling", level=0.9)
    with pytest.raises(ValueError, match="binning: only the distribution methods"):
        uqviz.recalibrate(_ds(), method="bvs", binning="stratified")
    with pytest.raises(ValueError, match="only method='quantile' takes them"):
        uqviz.fit_recalibration(_ds(), method="conformal", levels=[0.5])
    with pytest.raises(ValueError, match="one bin per distinct value"):
        uqviz.fit_recalibration(_ds(), method="conformal", binning="stratified", n_bins=3)
    with pytest.raises(ValueError, match="need n_bins >= 2 or binning='stratified'"):
        uqviz.fit_recalibration(
            _ds().assign(x=("point", np.arange(50.0))), method="conformal", conditioning="x"
        )
    with pytest.raises(ValueError, match="quantile' fits one map"):
        uqviz.fit_recalibration(_ds(), method="quantile", n_bins=3)
    with pytest.raises(ValueError, match="n_bins = 60: the calibration set holds 50 points"):
        uqviz.fit_recalibration(_ds(), method="conformal", n_bins=60)


def test_nan_is_refused():
    ds = _ds()
    e = ds["E"].values.copy()
    e[[3, 7]] = np.nan
    with pytest.raises(ValueError, match="2"):
        uqviz.fit_recalibration(ds.assign(E=("point", e)), method="conformal")


def test_bins_too_small_for_the_level_in_cross_fit():
    ds = _ds(60)
    with pytest.warns(uqviz.UnreliableWarning, match=r"in the fits of \d of 5 folds"):
        out = uqviz.recalibrate(ds, method="conformal", n_bins=6, level=0.95, rng=0)
    assert np.isinf(out["upper"].values).all()


# ------------------------------------------------------------------------------------
# the finite-sample guarantee: marginal, not local
# ------------------------------------------------------------------------------------


def _coverage(out):
    y = out["y"] if "y" in out else out["E"]
    return ((y >= out["lower"]) & (y <= out["upper"])).values


def test_marginal_coverage_of_cross_fitted_conformal_intervals():
    """level <= P(cover) <= level + 1/(n + 1) under exchangeability, whatever the shape of
    the errors or the quality of uE: 200 NIG sets (heavy tails, uE 2x too small) of 1000
    points, cross-fitted on 5 folds (n = 800 calibration points per fit)."""
    level, reps, m = 0.9, 200, 1000
    ss = np.random.SeedSequence(20261126)
    covered = []
    for child in ss.spawn(reps):
        ds = uqviz.synthetic.nig(m, nu=4, rng=child)
        ds = ds.assign(uE=ds["uE"] / 2)
        covered.append(
            _coverage(uqviz.recalibrate(ds, method="conformal", level=level, rng=child)).mean()
        )
    covered = np.asarray(covered)
    picp, se = covered.mean(), covered.std(ddof=1) / np.sqrt(reps)
    n = 800
    assert level - 4 * se <= picp <= level + 1 / (n + 1) + 4 * se
    assert se < 0.002


def test_local_coverage_is_not_guaranteed():
    """uE unrelated to the error scale (mis-ordered): the marginal coverage holds, the
    coverage in bins of uE does not; Mondrian bins on uE restore it per bin."""
    rng = np.random.default_rng(5)
    m = 20000
    sigma = np.exp(rng.normal(0, 0.6, m))
    u = rng.permutation(sigma)  # the right values, in the wrong order
    ds = uqviz.from_arrays(sigma * rng.standard_normal(m), u)
    edges = np.quantile(u, [0.2, 0.4, 0.6, 0.8])
    bins = np.searchsorted(edges, u)

    def per_bin(out):
        cov = _coverage(out)
        return cov.mean(), np.array([cov[bins == b].mean() for b in range(5)])

    marginal, local = per_bin(uqviz.recalibrate(ds, method="conformal", rng=0))
    assert abs(marginal - 0.9) < 0.01
    assert local.min() < 0.8 and local.max() > 0.97  # small uE under-covered, large over
    marginal, local = per_bin(uqviz.recalibrate(ds, method="conformal", n_bins=5, rng=0))
    assert abs(marginal - 0.9) < 0.01
    np.testing.assert_allclose(local, 0.9, atol=0.02)


@pytest.mark.parametrize(
    ("method", "options"),
    [
        ("conformal", dict(n_bins=2)),
        ("cqr", dict(level=0.8)),
        ("quantile", dict(levels=[0.1, 0.9])),
    ],
)
def test_parameters_saved_and_reloaded_give_the_same_forecast(tmp_path, method, options):
    ds = uqviz.synthetic.nig(300, nu=6, rng=4)
    if method == "cqr":
        half = 1.2 * ds["uE"].values
        ds = (
            ds.assign(y=("point", ds["E"].values + 2.0))
            .assign(quantiles=(("point", "level"), np.stack([2.0 - half, 2.0 + half], axis=1)))
            .assign_coords(level=[0.1, 0.9])
        )
    rec = uqviz.fit_recalibration(ds, method=method, **options)
    path = tmp_path / "rec.nc"
    rec.parameters.to_netcdf(path)
    with xr.open_dataset(path) as saved:
        again = uqviz.Recalibration(parameters=saved.load())
    a, b = rec.apply(ds), again.apply(ds)
    np.testing.assert_array_equal(a["lower"], b["lower"])
    np.testing.assert_array_equal(a["upper"], b["upper"])
    assert repr(again).startswith(f"Recalibration(method={method!r}")


def test_whole_line_intervals_are_valid_data_downstream():
    # a Mondrian bin too small for the level gives (-inf, inf): the result is a valid dataset
    # (the whole line is a value), whose coverage and checks work
    ds = uqviz.synthetic.nig(60, nu=6, rng=3)
    with pytest.warns(uqviz.UnreliableWarning):
        rec = uqviz.fit_recalibration(ds, method="conformal", level=0.99, n_bins=3)
    out = rec.apply(ds)
    assert np.isneginf(out["lower"].values).any() and np.isposinf(out["upper"].values).any()
    assert uqviz.check_dataset(out) is out
    cov = uqviz.interval_coverage(out, intervals="given")
    e = out["E"].values
    assert float(cov["picp"][0]) == np.mean((out["lower"].values <= e) & (e <= out["upper"].values))
    bad = out.assign(lower=out["lower"].copy(data=np.full(60, np.inf)))
    with pytest.raises(ValueError, match="lower: 60 rows with inf"):
        uqviz.check_dataset(bad)


@pytest.mark.parametrize("method", ["conformal", "cqr", "bvs"])
def test_an_unknown_conditioning_variable_is_named_first(method):
    """issue 38, item 9: ``conditioning="nosuch"`` said "Mondrian bins need n_bins >= 2"."""
    r = np.random.default_rng(0)
    u = r.uniform(0.5, 2.0, 80)
    ds = uqviz.from_arrays(r.standard_normal(80) * u, u)
    with pytest.raises(ValueError, match="conditioning variable 'nosuch' is not in the dataset"):
        uqviz.fit_recalibration(ds, method=method, conditioning="nosuch")
    with pytest.raises(ValueError, match="conditioning variable 'nosuch' is not in the dataset"):
        uqviz.recalibrate(ds, method=method, conditioning="nosuch")
