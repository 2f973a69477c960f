"""The peer-library fixtures of issue 24 agree with independent numpy/scipy computations.

tests/fixtures/make_group_fixtures.py (run in a side environment) wrote groups.npz/.json
from uncertainty-toolbox 0.1.1 (adversarial group calibration, Chung et al. 2021), MAPIE
1.6.0 and covmetrics 0.1.2 (coverage gap, Ding et al. 2023; worst-slab coverage,
Cauchois et al. 2021; size-stratified coverage, Angelopoulos & Bates 2021; HSIC between
interval width and coverage, Feldman et al. 2021). These tests check that the stored
outputs are what the definitions give on the stored inputs and the stored groups (the
MACE/RMSCE of each group also through :func:`uqviz.calibration_curve`, which equals
uncertainty-toolbox's), so that the issue-24 functions can be compared to them.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from tests.conftest import PeerFixtures

PEER = PeerFixtures("groups")
FIXTURES, META, ARRAYS, SET = PEER.folder, PEER.meta, PEER.arrays, PEER.settings
TOL = dict(rtol=1e-9, atol=1e-12)
APPROX = dict(rel=1e-9, abs=1e-12)
AGC = sorted(META["agc"])
LEVELS = np.linspace(0.0, 1.0, 100)


_in, _out = PEER.inputs, PEER.output


def test_versions_and_size():
    v = META["versions"]
    assert v["uncertainty-toolbox"] == "0.1.1"
    assert v["mapie"] == "1.6.0"
    assert v["covmetrics"] == "0.1.2"
    size = sum(p.stat().st_size for p in FIXTURES.glob("groups.*"))
    assert size < 1_000_000


def test_inputs_on_the_grid():
    assert PEER.off_grid_inputs() == []


# ------------------------------------------------------------------------------------
# adversarial group calibration (uncertainty-toolbox)
# ------------------------------------------------------------------------------------


def _groups(case):
    c = META["agc"][case]
    return [_out("agc", case, f"groups/r{k}").astype(np.intp) for k in range(c["num_group_bins"])]


def _observed(z, prop):
    """Observed proportions of uct, from z = (y_pred - y_true) / y_std = -E/uE."""
    if prop == "interval":
        lo = stats.norm.ppf(0.5 - LEVELS / 2)
        hi = stats.norm.ppf(0.5 + LEVELS / 2)
        inside = (z[..., None] >= lo) & (z[..., None] <= hi)
    else:
        inside = z[..., None] <= stats.norm.ppf(LEVELS)
    return inside.mean(axis=-2)


def _scores(case, prop):
    """MACE and RMSCE of every stored group, shape (fractions, trials, draws)."""
    inp = _in("agc", case)
    z = (inp["y_pred"] - inp["y_true"]) / inp["y_std"]
    mace, rmsce = [], []
    for g in _groups(case):
        d = _observed(z[g], prop) - LEVELS
        mace.append(np.abs(d).mean(axis=-1))
        rmsce.append(np.sqrt((d**2).mean(axis=-1)))
    return np.array(mace), np.array(rmsce)


@pytest.mark.parametrize("case", AGC)
def test_agc_groups(case):
    c = META["agc"][case]
    n = c["n"]
    fr = np.linspace(0, 1, c["num_group_bins"])
    np.testing.assert_array_equal(c["fractions"], fr)
    sizes = [max(int(round(n * r)), 2) for r in fr]
    assert c["group_sizes"] == sizes
    assert sizes[0] == 2 and sizes[-1] == n
    groups = _groups(case)
    # the draws are numpy's legacy global stream, in the order fraction, trial, draw
    rs = np.random.RandomState(c["seed"])
    for k, s in enumerate(sizes):
        g = groups[k]
        assert g.shape == (c["num_trials"], c["num_group_draws"], s)
        assert g.min() >= 0 and g.max() < n
        for t in range(c["num_trials"]):
            for d in range(c["num_group_draws"]):
                want = rs.choice(n, s, replace=c["draw_with_replacement"])
                np.testing.assert_array_equal(g[t, d], want)
                if not c["draw_with_replacement"]:
                    assert len(np.unique(g[t, d])) == s
    if not c["draw_with_replacement"]:  # the whole set, permuted
        np.testing.assert_array_equal(np.sort(groups[-1], axis=-1)[0, 0], np.arange(n))


@pytest.mark.parametrize("prop", ["interval", "quantile"])
@pytest.mark.parametrize("case", AGC)
def test_agc_scores(case, prop):
    c = META["agc"][case]
    mace, rmsce = _scores(case, prop)
    for cali, sc in (("mean_abs", mace), ("root_mean_sq", rmsce)):
        pre = f"{cali}/{prop}/"
        np.testing.assert_allclose(_out("agc", case, pre + "group_scores"), sc, **TOL)
        worst = sc.max(axis=2)
        np.testing.assert_allclose(_out("agc", case, pre + "worst"), worst, **TOL)
        mean = worst.mean(axis=1)
        sd = worst.std(axis=1, ddof=1)  # uct's "stderr": not divided by sqrt(trials)
        np.testing.assert_allclose(_out("agc", case, pre + "score_mean"), mean, **TOL)
        np.testing.assert_allclose(_out("agc", case, pre + "score_stderr"), sd, **TOL)
        res = c["results"][f"{cali}/{prop}"]
        np.testing.assert_allclose(res["score_mean"], mean, **TOL)
        np.testing.assert_allclose(res["score_stderr"], sd, **TOL)
    # the whole set (without replacement) has one score: no spread across trials
    if not c["draw_with_replacement"]:
        assert np.ptp(mace[-1]) == 0.0
        assert abs(_out("agc", case, f"mean_abs/{prop}/score_stderr")[-1]) < 1e-15


def test_agc_hand_values():
    """A group of two points: MACE by counting the levels each |z| falls inside."""
    inp = _in("agc", "calibrated")
    g = _groups("calibrated")[0][0, 0]
    z = np.abs((inp["y_pred"] - inp["y_true"]) / inp["y_std"])[g]
    # level p holds |z| iff p >= 2 Phi(|z|) - 1 (interval form, p > 0)
    thr = 2 * stats.norm.cdf(z) - 1
    obs = np.array([np.mean(thr <= p) if p > 0 else 0.0 for p in LEVELS])
    want = np.mean(np.abs(obs - LEVELS))
    got = _out("agc", "calibrated", "mean_abs/interval/group_scores")[0, 0, 0]
    assert got == pytest.approx(want, rel=1e-12)


def test_agc_through_uqviz_calibration_curve():
    """uqviz.calibration_curve's MACE/RMSCE of each group equal uct's on the same groups.

    uct's residual is y_pred - y_true = -E: its "quantile" curve is uqviz's on -E.
    """
    import uqviz

    case = "calibrated"
    inp = _in("agc", case)
    e = inp["y_true"] - inp["y_pred"]
    u = inp["y_std"]
    for prop in ("interval", "quantile"):
        scores = _out("agc", case, f"mean_abs/{prop}/group_scores")
        rscores = _out("agc", case, f"root_mean_sq/{prop}/group_scores")
        sign = 1.0 if prop == "interval" else -1.0
        for k, g in enumerate(_groups(case)):
            for t in range(g.shape[0]):
                d = 0  # first draw of each trial (all draws are covered by test_agc_scores)
                idx = g[t, d]
                cur = uqviz.calibration_curve(uqviz.from_arrays(sign * e[idx], u[idx]), kind=prop)
                assert float(cur["mace"]) == pytest.approx(scores[k, t, d], rel=1e-9, abs=1e-12)
                assert float(cur["rmsce"]) == pytest.approx(rscores[k, t, d], rel=1e-9, abs=1e-12)


def test_agc_miscalibration_shows():
    """The miscalibrated case is worse than the calibrated one at every group size."""
    cal = META["agc"]["calibrated"]["results"]["mean_abs/interval"]["score_mean"]
    mis = META["agc"]["miscal"]["results"]["mean_abs/interval"]["score_mean"]
    assert mis[-1] > 2 * cal[-1]
    # the worst MACE decreases from small groups to the whole set
    assert cal[0] > cal[-1] and mis[0] > mis[-1]


# ------------------------------------------------------------------------------------
# MAPIE / covmetrics conditional coverage
# ------------------------------------------------------------------------------------

MAPIE = sorted(META["mapie"])


def _cover(inp, j):
    return (inp["lower"][:, j] <= inp["y"]) & (inp["y"] <= inp["upper"][:, j])


@pytest.mark.parametrize("case", MAPIE)
def test_coverage_gap(case):
    inp = _in("mapie", case)
    res = META["mapie"][case]["coverage_gap"]
    labels, counts = np.unique(inp["groups"], return_counts=True)
    assert 1 in counts  # a singleton group
    n = len(inp["y"])
    for j, conf in enumerate(META["mapie"][case]["confidence_levels"]):
        c = _cover(inp, j)
        cov = np.array([c[inp["groups"] == g].mean() for g in labels])
        gap = np.abs(cov - conf)
        assert res[f"c{conf}/unweighted"] == pytest.approx(gap.mean(), **APPROX)
        assert res[f"c{conf}/weighted"] == pytest.approx((counts / n * gap).sum(), **APPROX)


def test_coverage_inclusive_bounds():
    inp = _in("mapie", "small")
    assert np.all(inp["y"][:3] == inp["lower"][:3, 0])
    assert np.all(inp["y"][3:6] == inp["upper"][3:6, 1])


def _wsc(x, c, v, delta):
    """Worst slab coverage over the directions v: min over runs >= ceil(delta n)."""
    n = len(c)
    m = math.ceil(delta * n)
    best = 1.0
    for d in v:
        cs = np.concatenate([[0.0], np.cumsum(c[np.argsort(x @ d)])])
        i, j = np.triu_indices(n + 1, k=m)  # runs [i, j) of length >= m
        best = min(best, float(np.min((cs[j] - cs[i]) / (j - i))))
    return best


@pytest.mark.parametrize("case", MAPIE)
def test_worst_slab_coverage(case):
    inp = _in("mapie", case)
    res = META["mapie"][case]["wsc"]
    for delta, m, seed in SET["wsc_settings"]:
        v = _out("mapie", case, f"wsc_directions/m{m}/seed{seed}")
        rs = np.random.RandomState(seed)
        w = rs.randn(m, inp["x"].shape[1])
        np.testing.assert_allclose(v, w / np.linalg.norm(w, axis=1, keepdims=True), **TOL)
        for j, conf in enumerate(META["mapie"][case]["confidence_levels"]):
            want = _wsc(inp["x"], _cover(inp, j).astype(float), v, delta)
            assert res[f"c{conf}/delta{delta}/m{m}/seed{seed}"] == pytest.approx(want, **APPROX)
            x = inp["x"]
            xs = (x - x.mean(axis=0)) / x.std(axis=0)
            want = _wsc(xs, _cover(inp, j).astype(float), v, delta)
            got = res[f"standardised/c{conf}/delta{delta}/m{m}/seed{seed}"]
            assert got == pytest.approx(want, **APPROX)


@pytest.mark.parametrize("case", MAPIE)
def test_size_stratified_coverage(case):
    inp = _in("mapie", case)
    n = len(inp["y"])
    for b in SET["ssc_bins"]:
        ssc = _out("mapie", case, f"ssc/b{b}")
        assert ssc.shape == (2, b)
        for j in range(2):
            c = _cover(inp, j)
            order = np.argsort(inp["upper"][:, j] - inp["lower"][:, j], kind="stable")
            edges = np.concatenate([[0], np.cumsum([n // b + (k < n % b) for k in range(b)])])
            want = [c[order[edges[k] : edges[k + 1]]].mean() for k in range(b)]
            np.testing.assert_allclose(ssc[j], want, **TOL)
        np.testing.assert_allclose(_out("mapie", case, f"ssc_score/b{b}"), ssc.min(axis=1), **TOL)


def _hsic_trace(w, c, s_w, s_c):
    n = len(w)
    k = np.exp(-(np.subtract.outer(w, w) ** 2) / s_w)
    l_ = np.exp(-(np.subtract.outer(c, c) ** 2) / s_c)
    kc = k - k.mean(axis=0) - k.mean(axis=1)[:, None] + k.mean()  # H K H
    return float(np.sum(l_ * kc) / (n - 1) ** 2)  # trace(L H K H), L symmetric


@pytest.mark.parametrize("case", MAPIE)
def test_hsic(case):
    inp = _in("mapie", case)
    meta = META["mapie"][case]
    for s_w, s_c in SET["hsic_kernels"]:
        got = _out("mapie", case, f"hsic/k{s_w}_{s_c}")
        for j, conf in enumerate(meta["confidence_levels"]):
            w = inp["upper"][:, j] - inp["lower"][:, j]
            c = _cover(inp, j).astype(float)
            t = _hsic_trace(w, c, s_w, s_c)
            assert got[j] == pytest.approx(math.sqrt(t), **APPROX)  # MAPIE: the square root
            # covmetrics: sigma_x on the coverage, sigma_y on the widths, no square root
            cm = meta["covmetrics_hsic"][f"c{conf}/sigma_x{s_w}/sigma_y{s_c}"]
            assert cm == pytest.approx(_hsic_trace(w, c, s_c, s_w), **APPROX)
