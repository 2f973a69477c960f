"""The cluster bootstrap of proper_scores and predictive_scores (issue 39, item 3)."""

import itertools

import numpy as np
import pytest
import xarray as xr

import uqviz
from uqviz._array.clusters import intraclass_correlation
from uqviz._array.scores import nll_points
from uqviz.scores.proper import cluster_column_means


def _grouped(e, u, groups):
    return uqviz.from_arrays(e, u).assign_coords(group=("point", np.asarray(groups)))


def _enumerated(values, codes):
    """Every ordered draw of G groups among G: replicate means and their probabilities."""
    g = int(codes.max()) + 1
    sums = np.bincount(codes, values, minlength=g)
    counts = np.bincount(codes, minlength=g).astype(float)
    out = {}
    for draw in itertools.product(range(g), repeat=g):
        d = list(draw)
        v = round(float(sums[d].sum() / counts[d].sum()), 12)
        out[v] = out.get(v, 0.0) + 1.0 / g**g
    return out


def test_cluster_means_hand_enumerated():
    # 3 groups of 1, 2 and 3 points: 27 ordered draws, 10 distinct multisets
    x = np.array([1.0, 2.0, 4.0, 0.5, 0.5, 3.0])
    codes = np.array([0, 1, 1, 2, 2, 2])
    exact = _enumerated(x, codes)
    means, counts, loo, loo_n = cluster_column_means(
        x[:, None], codes, n_boot=40_000, seed=5, engine="numpy", jackknife=True
    )
    got = np.round(means[:, 0], 12)
    assert set(np.unique(got)) <= set(exact)  # every replicate is one of the enumerated means
    for v, p in exact.items():
        freq = np.mean(got == v)
        assert abs(freq - p) < 4 * np.sqrt(p * (1 - p) / got.size) + 1e-12, (v, freq, p)
    # counts: the drawn groups' point counts (sizes 1, 2, 3: totals 3..9)
    assert set(np.unique(counts)) <= set(range(3, 10))
    # delete-one-group means by hand
    np.testing.assert_allclose(loo[:, 0], [(11 - 1) / 5, (11 - 6) / 4, (11 - 4) / 3])
    np.testing.assert_allclose(loo_n, [5, 4, 3])


def test_proper_scores_se_is_the_enumerated_sd():
    e = np.array([0.3, -1.2, 2.0, 0.1, -0.4, 1.5])
    u = np.array([1.0, 1.5, 0.8, 1.2, 1.0, 2.0])
    codes = np.array([0, 1, 1, 2, 2, 2])
    res = uqviz.proper_scores(
        _grouped(e, u, codes), scores=("nll",), n_boot=40_000, method="percentile", rng=3
    )
    exact = _enumerated(nll_points(e, u, "normal", None), codes)
    v, p = np.array(list(exact)), np.array(list(exact.values()))
    sd = np.sqrt(np.sum(p * (v - np.sum(p * v)) ** 2))
    assert res["se"].item() == pytest.approx(sd, rel=0.02)
    assert res["ci_lower"].item() >= v.min() - 1e-9 and res["ci_upper"].item() <= v.max() + 1e-9
    assert res["estimate"].item() == pytest.approx(nll_points(e, u, "normal", None).mean())
    assert res.attrs["resample"] == "groups" and res.attrs["n_groups"] == 3


def _correlated(n_groups, m, rho, seed):
    rng = np.random.default_rng(seed)
    shared = np.repeat(rng.standard_normal(n_groups), m)
    z = np.sqrt(rho) * shared + np.sqrt(1 - rho) * rng.standard_normal(n_groups * m)
    u = rng.lognormal(0.0, 0.3, z.size)
    return z * u, u, np.repeat(np.arange(n_groups), m)


def test_design_effect_of_the_score_se():
    m = 20
    e, u, codes = _correlated(400, m, 0.5, seed=11)
    ds = uqviz.from_arrays(e, u)
    kw = dict(scores=("nll", "crps"), n_boot=2000, method="percentile", rng=4)
    point = uqviz.proper_scores(ds, **kw)
    cluster = uqviz.proper_scores(_grouped(e, u, codes), **kw)
    for i, s in enumerate(("nll", "crps")):
        per_point = (nll_points if s == "nll" else uqviz._array.scores.crps_points)(
            e, u, "normal", None
        )
        rho_s = intraclass_correlation(per_point, codes)
        assert rho_s > 0.05  # the scores are correlated within groups
        ratio = cluster["se"].values[i] / point["se"].values[i]
        assert ratio == pytest.approx(np.sqrt(1 + (m - 1) * rho_s), rel=0.15), s
        assert ratio > 1.5
    np.testing.assert_array_equal(cluster["estimate"], point["estimate"])
    assert point.attrs["resample"] == "points" and "n_groups" not in point.attrs


def test_ungrouped_numbers_unchanged_by_dropping_groups():
    e, u, codes = _correlated(20, 5, 0.3, seed=2)
    g = _grouped(e, u, codes)
    a = uqviz.proper_scores(g.drop_vars("group"), n_boot=300, rng=1)
    b = uqviz.proper_scores(uqviz.from_arrays(e, u), n_boot=300, rng=1)
    xr.testing.assert_identical(a, b)


def test_grouped_scores_same_on_threads_and_client():
    numba = pytest.importorskip("numba")
    e, u, codes = _correlated(50, 6, 0.3, seed=3)
    g = _grouped(e, u, codes)
    ref = uqviz.proper_scores(g, n_boot=400, rng=9)
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = uqviz.proper_scores(g, n_boot=400, rng=9)
    finally:
        numba.set_num_threads(before)
    xr.testing.assert_identical(ref, one)
    xr.testing.assert_identical(ref, uqviz.proper_scores(g, n_boot=400, rng=9, client="local"))


def test_predictive_scores_grouped():
    e, u, codes = _correlated(60, 10, 0.5, seed=5)
    ds = _grouped(e, u, codes)
    grouped = uqviz.predictive_scores(ds, n_boot=800, rng=1)
    plain = uqviz.predictive_scores(ds.drop_vars("group"), n_boot=800, rng=1)
    assert grouped.attrs["resample"] == "groups" and grouped.attrs["n_groups"] == 60
    assert plain.attrs["resample"] == "points"
    np.testing.assert_array_equal(grouped["estimate"], plain["estimate"])
    assert np.all(grouped["se"].values > 1.3 * plain["se"].values)


def test_compare_forecasts_groups_paired_and_refused():
    e, u, codes = _correlated(40, 10, 0.5, seed=6)
    a = _grouped(e, u, codes)
    b = _grouped(e, 1.3 * u, codes)
    res = uqviz.compare_forecasts(a, b, n_boot=500, rng=2)
    assert res.attrs["resample"] == "groups" and res.attrs["n_groups"] == 40
    # one side without groups takes the other's
    res2 = uqviz.compare_forecasts(a, b.drop_vars("group"), n_boot=500, rng=2)
    xr.testing.assert_identical(res, res2)
    other = codes.copy()
    other[:3] = 39
    with pytest.raises(ValueError, match="group labels differ at 3 of 400 points"):
        uqviz.compare_forecasts(a, _grouped(e, 1.3 * u, other), n_boot=50, rng=2)
