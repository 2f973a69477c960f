"""compare_forecasts and compare_models of joint forecasts of several targets (issue 39):
the joint scores (energy, variogram: Gneiting & Raftery 2007, Scheuerer & Hamill 2015;
Dawid & Sebastiani 1999) bootstrapped point by point, paired, whole groups when given."""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr

import uqviz

N, T, S = 300, 3, 25


@pytest.fixture(scope="module")
def forecasts():
    rng = np.random.default_rng(39)
    common = rng.normal(size=(N, 1, 1))
    y = (common + 0.5 * rng.normal(size=(N, T, 1)))[:, :, 0]

    def make(x):
        return xr.Dataset(
            {"y": (("point", "target"), y), "samples": (("point", "target", "sample"), x)}
        )

    joint = make(common + 0.5 * rng.normal(size=(N, T, S)))
    indep = make(rng.normal(size=(N, T, S)) * np.sqrt(1.25))
    return y, joint, indep


def test_compare_forecasts_differences_are_the_joint_scores(forecasts):
    y, a, b = forecasts
    res = uqviz.compare_forecasts(a, b, n_boot=2000, rng=1)
    assert res["score"].values.tolist() == [
        "energy",
        "energy_fair",
        "variogram",
        "variogram_fair",
        "dss",
    ]
    for score, fn, kw in (
        ("energy", uqviz.energy_score, {}),
        ("energy_fair", uqviz.energy_score, {"fair": True}),
        ("variogram", uqviz.variogram_score, {}),
        ("variogram_fair", uqviz.variogram_score, {"fair": True}),
    ):
        sa, sb = fn(a, **kw), fn(b, **kw)
        row = res.sel(score=score)
        assert float(row["score_a"]) == pytest.approx(float(sa["estimate"]), rel=1e-12)
        assert float(row["score_b"]) == pytest.approx(float(sb["estimate"]), rel=1e-12)
        d = sa["point_score"].values - sb["point_score"].values
        assert float(row["estimate"]) == pytest.approx(d.mean(), rel=1e-12)
        # the paired bootstrap se of a mean: sd / sqrt(M), to its Monte Carlo error
        assert float(row["se"]) == pytest.approx(d.std(ddof=1) / np.sqrt(N), rel=0.1)
    assert set(res["comparison"].values) == {"a better"}  # the right correlation wins
    assert res["forecast_a"].item() == "joint_samples"
    assert "Scheuerer & Hamill (2015)" in res.attrs["citation"]


def test_compare_forecasts_of_a_forecast_with_itself(forecasts):
    _, a, _ = forecasts
    with pytest.warns(uqviz.UnreliableWarning, match="degenerate"):  # d = 0 everywhere
        res = uqviz.compare_forecasts(a, a, scores=("energy", "dss"), n_boot=200, rng=2)
    np.testing.assert_array_equal(res["estimate"].values, [0.0, 0.0])
    assert res["comparison"].values.tolist() == ["no difference", "no difference"]


def test_gaussian_and_ensemble_forecasts_share_the_dawid_sebastiani_score(forecasts):
    y, a, _ = forecasts
    x = a["samples"].values
    mean = x.mean(axis=2)
    d = x - mean[:, :, None]
    cov = np.einsum("nas,nbs->nab", d, d) / (S - 1)
    g = xr.Dataset(
        {
            "y": (("point", "target"), y),
            "mean": (("point", "target"), mean),
            "cov": (("point", "target", "target2"), cov),
        }
    )
    with pytest.warns(uqviz.UnreliableWarning, match="degenerate"):  # d = 0 to rounding
        res = uqviz.compare_forecasts(a, g, n_boot=200, rng=3)
    assert res["score"].values.tolist() == ["dss"]  # the one score both forms have
    assert float(res["estimate"][0]) == pytest.approx(0.0, abs=1e-12)


def test_joint_comparisons_refuse_what_they_cannot_compare(forecasts):
    y, a, b = forecasts
    plain = uqviz.from_arrays(np.zeros(N), np.ones(N))
    with pytest.raises(ValueError, match="joint forecast"):
        uqviz.compare_forecasts(a, plain, n_boot=10)
    moved = a.assign(y=a["y"].where(a["point"] >= 3, 9.0))
    with pytest.raises(ValueError, match="differs at 3 of 300"):
        uqviz.compare_forecasts(a, moved, n_boot=10)
    with pytest.raises(ValueError, match="do not apply"):
        uqviz.compare_forecasts(
            a,
            a.drop_vars("samples").assign(
                mean=(("point", "target"), y),
                cov=(("point", "target", "t2"), np.broadcast_to(np.eye(T), (N, T, T))),
            ),
            scores=("energy",),
            n_boot=10,
        )
    with pytest.raises(ValueError, match="not joint scores"):
        uqviz.compare_forecasts(a, b, scores=("crps",), n_boot=10)
    tree = xr.DataTree.from_dict({"a": a, "b": b})
    with pytest.raises(ValueError, match="statistics=None"):
        uqviz.compare_models(tree, n_boot=10)
    with pytest.raises(ValueError, match="differs from y of 'a' at 3 of 300"):
        uqviz.compare_models(
            xr.DataTree.from_dict({"a": a, "m": moved}), statistics=None, scores=("energy",)
        )


def test_compare_forecasts_of_grouped_joint_forecasts_resamples_groups(forecasts):
    _, a, b = forecasts
    g = np.repeat(np.arange(30), N // 30)
    ga, gb = a.assign_coords(group=("point", g)), b.assign_coords(group=("point", g))
    res = uqviz.compare_forecasts(ga, gb, scores=("energy",), n_boot=2000, rng=4)
    assert res.attrs["resample"] == "groups" and res.attrs["n_groups"] == 30
    d = uqviz.energy_score(a)["point_score"].values - uqviz.energy_score(b)["point_score"].values
    sums = np.bincount(g, weights=d)
    m = np.bincount(g)
    # the cluster-robust se of a mean of equal groups: sd of the group means / sqrt(G)
    se = (sums / m).std(ddof=1) / np.sqrt(30)
    assert float(res["se"][0]) == pytest.approx(se, rel=0.12)


def test_compare_models_of_joint_forecasts(forecasts):
    y, a, b = forecasts
    wide = a.assign(samples=2.0 * a["samples"])
    tree = xr.DataTree.from_dict({"joint": a, "indep": b, "wide": wide})
    res = uqviz.compare_models(
        tree, statistics=None, scores=("energy", "variogram"), n_boot=500, rng=5
    )
    for k, ds in (("joint", a), ("indep", b), ("wide", wide)):
        want = float(uqviz.energy_score(ds)["estimate"])
        assert float(res["estimate"].sel(measure="energy", model=k)) == pytest.approx(want)
    pa = uqviz.energy_score(a)["point_score"].values
    pb = uqviz.energy_score(b)["point_score"].values
    sip = float(res["sip"].sel(measure="energy", model="joint", versus="indep"))
    assert sip == pytest.approx(np.mean(pa < pb))  # Pernot & Savin (2020a): P(better point)
    words = res["comparison"].sel(model="joint").values
    assert (words[:, 1:] == "better").all()
