"""CC's delete-group jackknife by rank updates (issue 25: the reference explorer's CC).

The jackknife values feed BCa's acceleration for CC (Pernot (2024c); the delete-group
jackknife of Efron & Tibshirani (1993), sect. 11.5). The rank update
(:mod:`uqviz._array.cc_jackknife`) must give the correlation of the kept points:
checked against scipy.stats.spearmanr recomputed on them (an independent implementation),
against the count pass it replaces (:func:`uqviz._array.rank.cc_jackknife` with the rank
update switched off), on data without ties, with ties in uE, in both, and with a few
values only; groups of one point, equal groups, uneven ones and groups covering part of
the points.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats as sps

from uqviz._array import cc_jackknife as cj
from uqviz._array import rank as kr
from uqviz._array.jit import HAVE_NUMBA

pytestmark = pytest.mark.skipif(
    not HAVE_NUMBA,
    reason="the rank update is a numba kernel; "
    "without numba cc_jackknife takes its numpy form "
    "(tests/_array/test_without_numba.py)",
)


def _data(m, ties, seed=0):
    rng = np.random.default_rng(seed)
    u = rng.lognormal(0.0, 0.4, m)
    e = u * rng.standard_normal(m)
    if ties in ("uE", "both"):
        u = np.round(u, 1)
    if ties == "both":
        e = np.round(e, 1)  # ties in |E|, and E = 0 and -0.0
    if ties == "few values":
        u = rng.integers(1, 4, m).astype(float)
        e = rng.integers(-2, 3, m).astype(float)
    return e, u


def _spearman_kept(e, u, edges):
    out = []
    for g in range(edges.size - 1):
        keep = np.ones(e.size, bool)
        keep[edges[g] : edges[g + 1]] = False
        out.append(sps.spearmanr(np.abs(e[keep]), u[keep]).statistic)
    return np.array(out)


def _count_pass(prep, edges, monkeypatch):
    with monkeypatch.context() as mp:
        mp.setattr(cj, "RANK_UPDATE_MAX_GROUP", 0)
        assert not cj.rank_update_pays(prep[0].size, edges)
        return kr.cc_jackknife(prep, edges)


EDGES = {
    "one point": lambda m: np.arange(m + 1),
    "equal groups": lambda m: np.linspace(0, m, m // 7 + 1).round().astype(np.int64),
    "uneven groups": lambda m: np.r_[
        0, np.sort(np.random.default_rng(3).choice(np.arange(1, m), 40, replace=False)), m
    ],
    "part of the points": lambda m: np.array([5, 9, 30, 31, 60]),
}


@pytest.mark.parametrize("ties", ["none", "uE", "both", "few values"])
@pytest.mark.parametrize("groups", list(EDGES))
def test_rank_update_equals_spearman_on_the_kept_points(ties, groups, monkeypatch):
    e, u = _data(400, ties)
    edges = EDGES[groups](e.size)
    prep = kr.cc_prepare(e, u)
    assert cj.rank_update_pays(e.size, edges)
    jack = kr.cc_jackknife(prep, edges)
    np.testing.assert_allclose(jack, _spearman_kept(e, u, edges), rtol=0, atol=1e-13)
    # the count pass it replaces: the same values to rounding
    np.testing.assert_allclose(jack, _count_pass(prep, edges, monkeypatch), rtol=0, atol=1e-14)


@pytest.mark.parametrize("ties", ["none", "both"])
def test_rank_update_at_the_engine_size_equals_the_count_pass(ties, monkeypatch):
    # 1000 groups of 5 points: the jackknife of bootstrap_statistics(..., ["CC"]) at
    # M = 5000 (the default example); above BLOCKED_ABOVE the count pass is packed
    for m in (5000, 20_000):
        e, u = _data(m, ties, seed=m)
        edges = np.linspace(0, m, 1001).round().astype(np.int64)
        prep = kr.cc_prepare(e, u)
        np.testing.assert_allclose(
            cj.cc_jackknife_ranks(prep, edges),
            _count_pass(prep, edges, monkeypatch),
            rtol=0,
            atol=1e-14,
        )


@pytest.mark.filterwarnings("ignore::scipy.stats.ConstantInputWarning")
def test_a_deletion_that_leaves_constant_ranks_gives_nan_as_the_count_pass(monkeypatch):
    e = np.array([1.0, 2.0, 3.0, 4.0, 4.0, 4.0])
    u = np.array([1.0, 2.0, 3.0, 5.0, 5.0, 5.0])
    edges = np.array([0, 3, 4, 6])
    prep = kr.cc_prepare(e, u)
    jack = cj.cc_jackknife_ranks(prep, edges)
    assert np.isnan(jack[0])  # kept |E| = (4, 4, 4): Spearman undefined
    np.testing.assert_allclose(jack[1:], _spearman_kept(e, u, edges)[1:], atol=1e-14)
    np.testing.assert_array_equal(np.isnan(_count_pass(prep, edges, monkeypatch)), np.isnan(jack))


def test_the_rank_update_is_taken_for_small_groups_only():
    m = 32_000
    assert cj.rank_update_pays(m, np.linspace(0, m, 1001).round())  # 32 points a group
    assert not cj.rank_update_pays(m, np.linspace(0, m, 999).round())  # a little more
    assert cj.rank_update_pays(10**6, np.arange(10**6 + 1))  # leave-one-out
    assert not cj.rank_update_pays(2**20 + 1, np.arange(2**20 + 2))  # int64 sums
    assert not cj.rank_update_pays(10, np.array([3, 3]))  # no point deleted
