"""The peer-library fixtures of issue 23 agree with independent numpy/scipy computations.

tests/fixtures/make_predictive_fixtures.py (run in a side environment) wrote
predictive.npz/.json from properscoring, scoringrules, crepes and uncertainty-toolbox.
These tests do not call uqviz: they check that the stored outputs are what the
definitions give on the stored inputs, so that later tests can compare uqviz to them.
Definitions: CRPS of an ensemble (Gneiting & Raftery 2007) and its fair version
(Ferro 2014); quantile, interval and weighted interval scores (Bracher et al. 2021);
split conformal intervals (Romano et al. 2019, crepes' rank convention documented in the
script); isotonic quantile recalibration (Kuleshov et al. 2018).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from tests.conftest import PeerFixtures

PEER = PeerFixtures("predictive")
FIXTURES, META, ARRAYS, SET = PEER.folder, PEER.meta, PEER.arrays, PEER.settings
TOL = dict(rtol=1e-12, atol=1e-12)


_in, _out = PEER.inputs, PEER.output


def test_versions_and_size():
    v = META["versions"]
    assert v["properscoring"] == "0.1"
    assert v["crepes"] == "0.9.1"
    assert v["uncertainty-toolbox"] == "0.1.1"
    assert v["scoringrules"].startswith("0.1")  # 0.10.0: 0.11 needs Python >= 3.12
    size = sum(p.stat().st_size for p in FIXTURES.glob("predictive.*"))
    assert size < 1_000_000


def test_inputs_on_the_grid():
    assert PEER.off_grid_inputs() == []


# ------------------------------------------------------------------------------------
# CRPS of an ensemble
# ------------------------------------------------------------------------------------

CRPS_RUNS = [
    (case, key[len("ens_") :])
    for case in sorted(META["cases"]["crps"])
    for key in sorted(_in("crps", case))
    if key.startswith("ens_")
]


def _crps_parts(y, ens):
    m = ens.shape[1]
    e1 = np.abs(ens - y[:, None]).mean(axis=1)
    pair = np.abs(ens[:, :, None] - ens[:, None, :]).sum(axis=(1, 2))
    return e1, pair, m


@pytest.mark.parametrize(("case", "m"), CRPS_RUNS)
def test_plain_crps_equals_energy_form(case, m):
    inp = _in("crps", case)
    e1, pair, size = _crps_parts(inp["y"], inp[f"ens_{m}"])
    plain = e1 - 0.5 * pair / size**2
    for name in SET["crps_plain"]:
        np.testing.assert_allclose(_out("crps", case, f"{m}/{name}"), plain, **TOL, err_msg=name)


@pytest.mark.parametrize(("case", "m"), CRPS_RUNS)
def test_fair_crps_uses_distinct_pairs(case, m):
    inp = _in("crps", case)
    e1, pair, size = _crps_parts(inp["y"], inp[f"ens_{m}"])
    fair = e1 - 0.5 * pair / (size * (size - 1))
    for name in SET["crps_fair"]:
        np.testing.assert_allclose(_out("crps", case, f"{m}/{name}"), fair, **TOL, err_msg=name)


@pytest.mark.parametrize(("case", "m"), CRPS_RUNS)
def test_plain_crps_equals_integral_of_empirical_cdf(case, m):
    """The integral of (F_ens(x) - 1{y <= x})^2, exactly over the breakpoints."""
    inp = _in("crps", case)
    y, ens = inp["y"], inp[f"ens_{m}"]
    pts = np.sort(np.concatenate([ens, y[:, None]], axis=1), axis=1)
    mid = 0.5 * (pts[:, 1:] + pts[:, :-1])
    cdf = (np.sort(ens, axis=1)[:, None, :] <= mid[:, :, None]).mean(axis=2)
    step = (y[:, None] <= mid).astype(float)
    integral = ((cdf - step) ** 2 * np.diff(pts, axis=1)).sum(axis=1)
    np.testing.assert_allclose(
        _out("crps", case, f"{m}/properscoring"), integral, rtol=1e-11, atol=1e-12
    )


def test_ties_case_has_ties():
    inp = _in("crps", "ties")
    assert np.any(inp["ens_m10"] == inp["y"][:, None])
    assert np.all(inp["ens_m2"][:5] == inp["y"][:5, None])
    # a point-mass ensemble equal to y scores 0 under both estimators
    out = _out("crps", "ties", "m2/sr_fair")[:5]
    np.testing.assert_allclose(out, 0.0, atol=1e-15)


# ------------------------------------------------------------------------------------
# quantile, interval and weighted interval scores
# ------------------------------------------------------------------------------------


@pytest.mark.parametrize("case", sorted(META["cases"]["intervals"]))
def test_quantile_interval_and_weighted_interval_scores(case):
    inp = _in("intervals", case)
    y, med, lo, hi = inp["y"], inp["median"], inp["lower"], inp["upper"]
    alpha = np.asarray(SET["interval_alpha"])
    levels = np.asarray(SET["quantile_levels"])
    k = alpha.size
    # the intervals are asymmetric about the median
    assert np.all((med[:, None] - lo) > (hi - med[:, None]))
    fct = np.concatenate([lo, med[:, None], hi[:, ::-1]], axis=1)
    pinball = np.where(
        y[:, None] < fct, (1.0 - levels) * (fct - y[:, None]), levels * (y[:, None] - fct)
    )
    qs = _out("intervals", case, "quantile_score")
    np.testing.assert_allclose(qs, pinball, **TOL)
    is_ = (
        (hi - lo)
        + (2.0 / alpha) * np.maximum(lo - y[:, None], 0.0)
        + (2.0 / alpha) * np.maximum(y[:, None] - hi, 0.0)
    )
    np.testing.assert_allclose(_out("intervals", case, "interval_score"), is_, **TOL)
    wis = ((alpha / 2.0) * is_).sum(axis=1) + 0.5 * np.abs(y - med)
    wis /= k + 0.5
    np.testing.assert_allclose(_out("intervals", case, "wis"), wis, **TOL)
    # WIS is the sum of the quantile scores over the 2K + 1 levels, over K + 1/2
    np.testing.assert_allclose(_out("intervals", case, "wis"), qs.sum(axis=1) / (k + 0.5), **TOL)


@pytest.mark.parametrize("case", sorted(META["cases"]["intervals"]))
def test_wis_numpy_backend_bug_is_documented(case):
    """scoringrules 0.10.0, numpy backend: w_median * median in place of |y - median|."""
    inp = _in("intervals", case)
    y, med = inp["y"], inp["median"]
    alpha = np.asarray(SET["interval_alpha"])
    wrong = _out("intervals", case, "wis") + 0.5 * (med - np.abs(y - med)) / (alpha.size + 0.5)
    np.testing.assert_allclose(_out("intervals", case, "wis_numpy_backend"), wrong, **TOL)
    assert not np.allclose(
        _out("intervals", case, "wis_numpy_backend"), _out("intervals", case, "wis")
    )


# ------------------------------------------------------------------------------------
# crepes ConformalRegressor
# ------------------------------------------------------------------------------------


def _ceil_rank(n, conf):
    return math.ceil((n + 1) * Fraction(str(conf)))


CONFORMAL_RUNS = [
    (case, run)
    for case in sorted(META["cases"]["conformal"])
    for run in sorted(META["cases"]["conformal"][case])
]


@pytest.mark.parametrize(("case", "run"), CONFORMAL_RUNS)
def test_conformal_intervals(case, run):
    inp = _in("conformal", case)
    mode, conf = run.split("/c")
    conf = float(conf)
    normalized = mode.startswith("normalized")
    mondrian = mode.endswith("mondrian")
    scores = np.abs(inp["E_cal"]) / (inp["uE_cal"] if normalized else 1.0)
    bins_cal = inp["bins_cal"] if mondrian else np.zeros(scores.size, int)
    bins_test = inp["bins_test"] if mondrian else np.zeros(inp["yhat_test"].size, int)
    scale = inp["uE_test"] if normalized else np.ones(inp["yhat_test"].size)
    groups = META["cases"]["conformal"][case][run]["groups"]
    iv = _out("conformal", case, run)
    assert iv.shape == (inp["yhat_test"].size, 2)
    for b in np.unique(bins_cal):
        s = np.sort(scores[bins_cal == b])
        n = s.size
        ceil_k = _ceil_rank(n, conf)
        # crepes: k = n + 1 - floor((1 - conf)(n + 1)), the floor taken in floating point;
        # with exact arithmetic it is ceil((n + 1) conf); 1 - 0.9 rounds down, so one rank
        # higher when (n + 1)/10 is an integer
        off = int(conf == 0.9 and (n + 1) % 10 == 0)
        g = groups["all" if not mondrian else str(b)]
        assert g["n"] == n and g["ceil_rank"] == ceil_k
        sel = bins_test == b
        if ceil_k > n:  # too few calibration points: the whole line
            assert g["crepes_rank"] == 0
            assert np.all(np.isneginf(iv[sel, 0])) and np.all(np.isposinf(iv[sel, 1]))
            continue
        k = ceil_k + off
        assert g["crepes_rank"] == k
        q = s[k - 1]
        assert g["score"] == q
        np.testing.assert_allclose(iv[sel, 0], inp["yhat_test"][sel] - q * scale[sel], **TOL)
        np.testing.assert_allclose(iv[sel, 1], inp["yhat_test"][sel] + q * scale[sel], **TOL)
        # the half-width is uE times the chosen score
        np.testing.assert_allclose((iv[sel, 1] - iv[sel, 0]) / 2.0, q * scale[sel], **TOL)


def test_conformal_fixture_shows_crepes_rank_offset():
    """At least one run where crepes' rank differs from ceil((n + 1) level), and one too small."""
    runs = [
        g
        for case in META["cases"]["conformal"].values()
        for r in case.values()
        for g in r["groups"].values()
    ]
    assert any(g["crepes_rank"] == g["ceil_rank"] + 1 for g in runs)
    assert any(g["crepes_rank"] == 0 for g in runs)
    assert any(g["crepes_rank"] == g["ceil_rank"] for g in runs)


# ------------------------------------------------------------------------------------
# uncertainty-toolbox isotonic recalibration
# ------------------------------------------------------------------------------------


def _pava(x, y):
    """Increasing isotonic regression of y on x (ties in x averaged with their counts)."""
    ux, inv, cnt = np.unique(x, return_inverse=True, return_counts=True)
    val = np.bincount(inv, weights=y) / cnt
    blocks = []  # [mean, weight, n_values]
    for v, w in zip(val, cnt):
        blocks.append([v, float(w), 1])
        while len(blocks) > 1 and blocks[-2][0] > blocks[-1][0]:
            v2, w2, n2 = blocks.pop()
            v1, w1, n1 = blocks.pop()
            blocks.append([(v1 * w1 + v2 * w2) / (w1 + w2), w1 + w2, n1 + n2])
    fit = np.concatenate([[v] * n for v, _, n in blocks])
    return ux, fit


RECAL_CASES = sorted(META["cases"]["recal"])


@pytest.mark.parametrize("case", RECAL_CASES)
@pytest.mark.parametrize("prop", ["quantile", "interval"])
def test_recal_proportions_and_isotonic_map(case, prop):
    inp = _in("recal", case)
    yp, ys, yt = inp["y_pred_cal"], inp["y_std_cal"], inp["y_true_cal"]
    exp = _out("recal", case, f"{prop}/expected")
    obs = _out("recal", case, f"{prop}/observed")
    np.testing.assert_array_equal(exp, np.linspace(0.0, 1.0, SET["recal_num_bins"]))
    r = ((yp - yt) / ys)[:, None]  # uncertainty-toolbox's residual sign
    if prop == "quantile":
        mine = (r <= stats.norm.ppf(exp)).mean(axis=0)
    else:
        mine = ((r >= stats.norm.ppf(0.5 - exp / 2)) & (r <= stats.norm.ppf(0.5 + exp / 2))).mean(
            axis=0
        )
    np.testing.assert_allclose(obs, mine, **TOL)
    xt = _out("recal", case, f"{prop}/iso_X_thresholds")
    yt_ = _out("recal", case, f"{prop}/iso_y_thresholds")
    assert np.all(np.diff(xt) > 0) and np.all(np.diff(yt_) >= 0)
    new = _out("recal", case, f"{prop}/iso_new_props")
    pred = _out("recal", case, f"{prop}/iso_predict")
    np.testing.assert_allclose(pred, np.interp(new, xt, yt_), **TOL)
    # independent isotonic fit of expected on observed proportions (the whole curve:
    # iso_recal keeps it all on these cases)
    ux, fit = _pava(obs, exp)
    np.testing.assert_allclose(pred, np.interp(new, ux, fit), **TOL)


@pytest.mark.parametrize("case", RECAL_CASES)
def test_recalibrated_quantiles_and_intervals(case):
    inp = _in("recal", case)
    yp, ys = inp["y_pred_test"], inp["y_std_test"]

    def iso(prop, p):
        return np.interp(
            p,
            _out("recal", case, f"{prop}/iso_X_thresholds"),
            _out("recal", case, f"{prop}/iso_y_thresholds"),
        )

    qs = np.asarray(SET["recal_quantiles"])
    want = yp[:, None] + ys[:, None] * stats.norm.ppf(iso("quantile", qs))[None, :]
    np.testing.assert_allclose(
        _out("recal", case, "quantile/recal_quantiles"), want, rtol=1e-12, atol=1e-11
    )
    lv = iso("interval", np.asarray(SET["recal_intervals"]))
    lo = yp[:, None] + ys[:, None] * stats.norm.ppf(0.5 - lv / 2)[None, :]
    hi = yp[:, None] + ys[:, None] * stats.norm.ppf(0.5 + lv / 2)[None, :]
    np.testing.assert_allclose(
        _out("recal", case, "interval/recal_lower"), lo, rtol=1e-12, atol=1e-11
    )
    np.testing.assert_allclose(
        _out("recal", case, "interval/recal_upper"), hi, rtol=1e-12, atol=1e-11
    )


def test_quantile_recalibrator_moves_biased_quantiles_the_wrong_way():
    """uncertainty-toolbox fits on y_pred - y_true: on data biased upward, it lowers the median."""
    inp = _in("recal", "biased")
    assert np.mean((inp["y_true_cal"] - inp["y_pred_cal"]) / inp["y_std_cal"]) > 0.5
    med = _out("recal", "biased", "quantile/recal_quantiles")[:, SET["recal_quantiles"].index(0.5)]
    assert np.mean((med - inp["y_pred_test"]) / inp["y_std_test"]) < -0.5


@pytest.mark.parametrize("case", RECAL_CASES)
def test_std_ratio_near_optimum(case):
    """The stored ratio minimises the interval MACE (num_bins 100) to optimiser accuracy."""
    inp = _in("recal", case)
    yp, ys, yt = inp["y_pred_cal"], inp["y_std_cal"], inp["y_true_cal"]
    exp = np.linspace(0.0, 1.0, 100)
    r = np.abs((yp - yt) / ys)[:, None]

    def mace(ratio):
        return np.mean(np.abs((r <= ratio * stats.norm.ppf(0.5 + exp / 2)).mean(0) - exp))

    ratio = META["cases"]["recal"][case]["std_ratio_ma_cal"]
    grid = np.linspace(0.2, 5.0, 481)
    assert mace(ratio) <= min(mace(g) for g in grid) + 0.02
