"""The joint scores of several targets (issue 39): energy, variogram, Dawid-Sebastiani and
the Monte Carlo energy score of a normal forecast.

Checked against scoringrules 0.10.0 (tests/fixtures/joint.npz, written by
tests/fixtures/make_joint_fixtures.py in a side venv), hand-computed values, the
one-target reductions (the energy score is the CRPS; Gneiting & Raftery 2007, eq. 22) and
the closed-form CRPS of a normal. Scheuerer & Hamill (2015) for the variogram score,
Dawid & Sebastiani (1999) for theirs.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import xarray as xr
from scipy import stats

import uqviz
from tests.conftest import PeerFixtures
from uqviz._array.predictive_scores import crps_ensemble

PEER = PeerFixtures("joint")
CASES = sorted(PEER.meta["cases"])
TOL = dict(rtol=1e-12, atol=1e-12)
ENGINES = ("numba", "numpy")


def test_fixture_versions_and_grid():
    assert PEER.meta["versions"]["scoringrules"] == "0.10.0"
    assert PEER.off_grid_inputs() == []  # inputs exact in binary: both read the same numbers


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("case", CASES)
def test_energy_score_equals_scoringrules(case, engine):
    inp = PEER.inputs("energy", case)
    for est, fair in (("nrg", False), ("fair", True)):
        res = uqviz.energy_score(inp["y"], inp["samples"], fair=fair, engine=engine)
        for backend in ("numpy", "numba"):
            want = PEER.output("energy", case, f"{est}_{backend}")
            np.testing.assert_allclose(res["point_score"].values, want, **TOL)
        assert float(res["estimate"]) == pytest.approx(want.mean(), rel=1e-12)
        assert int(res["n_points"]) == len(want)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("case", CASES)
def test_variogram_score_equals_scoringrules(case, engine):
    inp = PEER.inputs("variogram", case)
    for est, fair in (("nrg", False), ("fair", True)):
        for p in PEER.settings["variogram_p"]:
            for wname in PEER.settings["variogram_weights"]:
                w = None if wname == "none" else inp[wname]
                res = uqviz.variogram_score(
                    inp["y"], inp["samples"], p=p, weights=w, fair=fair, engine=engine
                )
                for suffix in ("", "_numba"):
                    want = PEER.output("variogram", case, f"{est}_p{p}_{wname}{suffix}")
                    np.testing.assert_allclose(res["point_score"].values, want, **TOL)


@pytest.mark.parametrize("case", [c for c in CASES if f"out/dss/{c}/dssmv" in PEER.arrays.files])
def test_dawid_sebastiani_equals_scoringrules_on_ensemble_moments(case):
    inp = PEER.inputs("dss", case)
    x = inp["samples"]
    mean = x.mean(axis=2)
    d = x - mean[:, :, None]
    cov = np.einsum("nas,nbs->nab", d, d) / (x.shape[2] - 1)  # bias=False: ddof 1
    res = uqviz.dawid_sebastiani_score(inp["y"], mean, cov)
    np.testing.assert_allclose(res["point_score"].values, PEER.output("dss", case, "dssmv"), **TOL)


@pytest.mark.parametrize("case", ["one", "uni"])
def test_dawid_sebastiani_one_target_equals_dssuv(case):
    inp = PEER.inputs("dss", case)
    x = inp["samples"][:, 0, :]
    mean, var = x.mean(axis=1), x.var(axis=1, ddof=1)
    res = uqviz.dawid_sebastiani_score(inp["y"], mean[:, None], var[:, None, None])
    np.testing.assert_allclose(res["point_score"].values, PEER.output("dss", case, "dssuv"), **TOL)


def test_energy_score_by_hand():
    # y = (0, 0); members (3, 4) and (0, 0): |x1 - y| = 5, |x2 - y| = 0, |x1 - x2| = 5
    y = [[0.0, 0.0]]
    x = [[[3.0, 0.0], [4.0, 0.0]]]
    plain = uqviz.energy_score(y, x)
    fair = uqviz.energy_score(y, x, fair=True)
    assert float(plain["estimate"]) == pytest.approx(2.5 - 2 * 5 / (2 * 4))  # 1.25
    assert float(fair["estimate"]) == pytest.approx(2.5 - 2 * 5 / (2 * 2))  # 0.0


def test_variogram_score_by_hand():
    # two targets, members (0, 1) and (0, 3), y = (0, 2), p = 1: r_y = 2, r_k = 1 and 3
    y = [[0.0, 2.0]]
    x = [[[0.0, 0.0], [1.0, 3.0]]]
    plain = uqviz.variogram_score(y, x, p=1.0)
    # both ordered pairs (a, b) and (b, a): 2 * (2 - 2)^2 = 0
    assert float(plain["estimate"]) == pytest.approx(0.0, abs=1e-15)
    fair = uqviz.variogram_score(y, x, p=1.0, fair=True)
    # minus (1/S) sum_ab w s^2_ab: s^2 = var(1, 3; ddof 1) = 2, two ordered pairs
    assert float(fair["estimate"]) == pytest.approx(-(1 / 2) * 2 * 2)
    w = [[0.0, 3.0], [1.0, 0.0]]
    y2 = [[0.0, 4.0]]
    weighted = uqviz.variogram_score(y2, x, p=1.0, weights=w)
    assert float(weighted["estimate"]) == pytest.approx((3.0 + 1.0) * (4 - 2) ** 2)
    one = uqviz.variogram_score([[1.0]], [[[0.0, 5.0]]])
    assert float(one["estimate"]) == 0.0  # one target: no pair of targets


@pytest.mark.parametrize("fair", [False, True])
def test_energy_score_of_one_target_is_the_crps(fair):
    rng = np.random.default_rng(3)
    y = rng.normal(size=(50, 1))
    x = rng.normal(size=(50, 1, 9)) * 1.5
    res = uqviz.energy_score(y, x, fair=fair)
    want = crps_ensemble(y[:, 0], x[:, 0, :], fair=fair)
    np.testing.assert_allclose(res["point_score"].values, want, rtol=1e-12, atol=1e-14)


def _crps_normal(y, mu, sigma):
    z = (y - mu) / sigma
    return sigma * (
        z * (2 * stats.norm.cdf(z) - 1) + 2 * stats.norm.pdf(z) - 1 / math.sqrt(math.pi)
    )


def test_energy_score_normal_of_one_target_estimates_the_normal_crps():
    y = np.array([[0.0], [1.0], [-2.5]])
    mu = np.array([[0.0], [0.3], [0.0]])
    sd = np.array([1.0, 2.0, 0.5])
    res = uqviz.energy_score_normal(y, mu, (sd**2)[:, None, None], n_mc=200_000, rng=4)
    want = _crps_normal(y[:, 0], mu[:, 0], sd)
    got = res["point_score"].values
    assert np.all(np.abs(got - want) < 5e-3 * np.maximum(1, want))
    assert abs(float(res["estimate"]) - want.mean()) < 4 * float(res["se"])
    assert float(res["se"]) > 0


def test_energy_score_normal_agrees_with_a_large_fair_ensemble():
    rng = np.random.default_rng(5)
    n, t = 40, 3
    a = rng.normal(size=(n, t, t))
    cov = np.einsum("nab,ncb->nac", a, a) + 0.5 * np.eye(t)
    mean = rng.normal(size=(n, t))
    y = mean + np.einsum("nab,nb->na", np.linalg.cholesky(cov), rng.normal(size=(n, t)))
    mc = uqviz.energy_score_normal(y, mean, cov, n_mc=20_000, rng=6)
    members = mean[:, :, None] + np.einsum(
        "nab,nbs->nas", np.linalg.cholesky(cov), rng.normal(size=(n, t, 2000))
    )
    ens = uqviz.energy_score(y, members, fair=True)  # unbiased for the same normal
    assert abs(float(mc["estimate"]) - float(ens["estimate"])) < 0.01 * float(ens["estimate"])


def test_energy_score_normal_is_seeded():
    y, mu, cov = [[0.0, 1.0]], [[0.0, 0.0]], [[[1.0, 0.3], [0.3, 2.0]]]
    a = uqviz.energy_score_normal(y, mu, cov, n_mc=500, rng=7)
    b = uqviz.energy_score_normal(y, mu, cov, n_mc=500, rng=7)
    c = uqviz.energy_score_normal(y, mu, cov, n_mc=500, rng=8)
    assert float(a["estimate"]) == float(b["estimate"])
    assert float(a["estimate"]) != float(c["estimate"])
    assert a.attrs["n_mc"] == 500


def test_the_scores_see_what_they_should():
    """The energy score prefers the right spread; the variogram and Dawid-Sebastiani
    scores prefer the right correlation, which the energy score barely sees."""
    rng = np.random.default_rng(9)
    n, t, s = 600, 3, 40
    common = rng.normal(size=(n, 1, 1))
    y = (common + 0.4 * rng.normal(size=(n, t, 1)))[:, :, 0]
    joint = common + 0.4 * rng.normal(size=(n, t, s))
    indep = rng.normal(size=(n, t, s)) * math.sqrt(1.16)
    wide = 2.0 * joint
    es = {
        k: float(uqviz.energy_score(y, v)["estimate"])
        for k, v in (("joint", joint), ("indep", indep), ("wide", wide))
    }
    assert es["joint"] < es["wide"]
    vs = {
        k: float(uqviz.variogram_score(y, v)["estimate"])
        for k, v in (("joint", joint), ("indep", indep))
    }
    assert vs["joint"] < 0.8 * vs["indep"]
    rho = 1 / 1.16
    cov_joint = np.broadcast_to(1.16 * ((1 - rho) * np.eye(t) + rho), (n, t, t))
    cov_indep = np.broadcast_to(1.16 * np.eye(t), (n, t, t))
    zero = np.zeros((n, t))
    ds_joint = float(uqviz.dawid_sebastiani_score(y, zero, cov_joint)["estimate"])
    ds_indep = float(uqviz.dawid_sebastiani_score(y, zero, cov_indep)["estimate"])
    assert ds_joint < ds_indep - 1.0


def test_dataarray_and_dataset_inputs_give_the_same_numbers():
    rng = np.random.default_rng(10)
    y = rng.normal(size=(12, 2))
    x = rng.normal(size=(12, 2, 6))
    ref = uqviz.energy_score(y, x)
    labels = np.arange(100, 112)
    yy = xr.DataArray(y, dims=("point", "target"), coords={"point": labels})
    xx = xr.DataArray(x, dims=("point", "target", "sample")).transpose("sample", "target", "point")
    res = uqviz.energy_score(yy, xx)
    np.testing.assert_array_equal(res["point_score"].values, ref["point_score"].values)
    assert res["point"].values.tolist() == labels.tolist()
    ds = xr.Dataset({"y": yy, "samples": xx})
    assert float(uqviz.variogram_score(ds)["estimate"]) == float(
        uqviz.variogram_score(y, x)["estimate"]
    )
    cov = np.broadcast_to(np.eye(2), (12, 2, 2))
    g = xr.Dataset(
        {
            "y": (("point", "variable"), y),
            "mean": (("point", "variable"), np.zeros((12, 2))),
            "cov": (("point", "variable", "variable2"), cov),
        }
    )
    assert float(uqviz.dawid_sebastiani_score(g)["estimate"]) == pytest.approx(
        float(uqviz.dawid_sebastiani_score(y, np.zeros((12, 2)), cov)["estimate"]), rel=1e-15
    )


def test_numba_and_numpy_engines_agree():
    rng = np.random.default_rng(11)
    y, x = rng.normal(size=(30, 4)), rng.normal(size=(30, 4, 8))
    for fn in (uqviz.energy_score, uqviz.variogram_score):
        a = fn(y, x, engine="numba")["point_score"].values
        b = fn(y, x, engine="numpy")["point_score"].values
        np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-14)


def test_bad_inputs_are_refused_with_counts():
    y = np.zeros((3, 2))
    x = np.zeros((3, 2, 4))
    x[1, 0, 2] = np.nan
    x[2, 1, 0] = np.inf
    with pytest.raises(ValueError, match="2 point"):
        uqviz.energy_score(y, x)
    with pytest.raises(ValueError, match="at least 2 members"):
        uqviz.energy_score(y, np.zeros((3, 2, 1)))
    with pytest.raises(ValueError, match="shape"):
        uqviz.energy_score(y, np.zeros((4, 2, 3)))
    with pytest.raises(ValueError, match="p"):
        uqviz.variogram_score(y, np.zeros((3, 2, 4)), p=0.0)
    with pytest.raises(ValueError, match="1 negative"):
        uqviz.variogram_score(y, np.zeros((3, 2, 4)), weights=[[1, -1], [1, 1]])
    bad_cov = np.broadcast_to(np.array([[1.0, 2.0], [2.0, 1.0]]), (3, 2, 2))
    with pytest.raises(ValueError, match="3 point.*not positive definite"):
        uqviz.dawid_sebastiani_score(y, y, bad_cov)
    asym = np.broadcast_to(np.array([[1.0, 0.1], [0.0, 1.0]]), (3, 2, 2))
    with pytest.raises(ValueError, match="not symmetric"):
        uqviz.dawid_sebastiani_score(y, y, asym)
    with pytest.raises(ValueError, match="n_mc"):
        uqviz.energy_score_normal(y, y, np.broadcast_to(np.eye(2), (3, 2, 2)), n_mc=1)
    with pytest.raises(TypeError, match="DataArray"):
        uqviz.energy_score(xr.DataArray(y, dims=("point", "target")), x)
