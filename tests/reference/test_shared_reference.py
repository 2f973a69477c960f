"""uqviz report at scale (issue 15, item 2): the synthetic sets of the simulated references
drawn once for ENCE, ZMSE and CC, and the cache-friendly CC kernels.

- ``validate_shared`` gives each statistic exactly the result of
  ``validate_with_references`` with the same stream (shared draws, shared binned bootstrap);
- CC's bootstrap at large M draws its count vectors with the cache-blocked sampler: the
  counts are multinomial, and each replicate equals the sort-based CC of its resample;
- CC's simulated-reference kernel (uE positions in the keys) equals the sort-based CC.
"""

from __future__ import annotations

import copy
import warnings

import numba
import numpy as np
import pytest
import scipy.stats as sps

import uqviz
from uqviz._array import rank as kr
from uqviz._array import resample as R
from uqviz._array import stats as ks
from uqviz.reference.simulated import simulated_reference, validate_shared


@pytest.fixture
def tiny_blocks(monkeypatch):
    """Blocks of 8 points, blocked above 10 points: the blocked path on small data."""
    monkeypatch.setattr(R, "POINT_BITS", 3)
    monkeypatch.setattr(R, "BLOCKED_ABOVE", 10)


def _tied(m, seed=0):
    rng = np.random.default_rng(seed)
    u = rng.choice([0.5, 1.0, 1.5, 2.0, 3.0], m) * rng.integers(1, 4, m)
    e = np.round(u * rng.standard_normal(m), 1)  # many ties in |E|, and E = 0
    return e, u


# --------------------------------------------------------------------------------------
# shared synthetic sets
# --------------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", [5, np.random.default_rng(2).spawn(1)[0]])
def test_validate_shared_equals_one_call_per_statistic(seed):
    ds = uqviz.synthetic.nig(3000, nu=6, rng=0)
    kw = dict(n_mc=70, n_boot=300)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = validate_shared(ds, statistics=("ENCE", "ZMSE", "CC"), rng=copy.deepcopy(seed), **kw)
        for stat in ("ENCE", "ZMSE", "CC"):
            one = uqviz.validate_with_references(ds, statistic=stat, rng=copy.deepcopy(seed), **kw)
            assert res[stat].identical(one), stat
            assert res[stat].attrs == one.attrs


def test_shared_samples_equal_the_samples_of_one_statistic():
    from uqviz.data.generative import as_generatives
    from uqviz.reference.simulated import _references_of, _Simulation

    ds = uqviz.synthetic.nig(500, nu=6, rng=1)
    stats = [uqviz.get_statistic(s) for s in ("ENCE", "ZMSE", "CC")]
    gen = as_generatives("t6")[0]
    kw = dict(
        generative=gen,
        sim=_Simulation(
            n_mc=80,
            n_bins=20,
            conditioning="uE",
            ci=0.95,
            return_samples=True,
            client=None,
            progress=False,
        ),
    )
    both = _references_of(ds, rng=np.random.default_rng(4), stats=stats, **kw)
    for s, b in zip(stats, both):
        one = _references_of(ds, rng=np.random.default_rng(4), stats=[s], **kw)[0]
        np.testing.assert_array_equal(b["samples"].values, one["samples"].values)
    # and a single statistic is still the public simulated_reference
    ref = simulated_reference(
        ds, statistic="CC", generative="t6", n_mc=80, rng=4, return_samples=True
    )
    assert ref["samples"].size == 80


def test_validate_shared_needs_a_dataset():
    with pytest.raises(TypeError, match="Dataset"):
        validate_shared(np.ones(3), statistics=("CC",))


# --------------------------------------------------------------------------------------
# CC: cache-blocked counts
# --------------------------------------------------------------------------------------
@pytest.mark.parametrize("m", [37, 40])  # a short last block, and full blocks only
def test_cc_blocked_counts_are_multinomial(tiny_blocks, m):
    e, u = _tied(m, seed=2)
    prep = kr.cc_prepare(e, u)
    counts = kr.cc_bootstrap_counts(prep, 20_000, seed=3)
    np.testing.assert_array_equal(counts.sum(axis=1), m)  # M draws per replicate
    assert sps.chisquare(counts.sum(axis=0)).pvalue > 1e-3  # uniform over points
    c = np.cov(counts[:, [0, 5, 20, m - 1]], rowvar=False)
    se_var = np.sqrt(2.0 / counts.shape[0]) * 1.2
    np.testing.assert_allclose(np.diag(c), 1 - 1 / m, atol=5 * se_var)
    off = c[np.triu_indices(4, 1)]
    np.testing.assert_allclose(off, -1 / m, atol=5 / np.sqrt(counts.shape[0]))


def test_cc_blocked_bootstrap_equals_sorting_each_resample(tiny_blocks):
    e, u = _tied(301)
    prep = kr.cc_prepare(e, u)
    counts = kr.cc_bootstrap_counts(prep, 70, seed=11)
    reps = kr.cc_bootstrap(prep, 70, seed=11)
    sorted_based = [
        ks.spearman_cc(np.repeat(e, c.astype(int)), np.repeat(u, c.astype(int))) for c in counts
    ]
    np.testing.assert_allclose(reps, sorted_based, rtol=0, atol=1e-12)
    # the blocked kernel is cc_from_counts on the same counts, bitwise
    np.testing.assert_array_equal(kr.cc_from_counts(counts, prep), reps)
    np.testing.assert_array_equal(
        np.concatenate(
            [
                kr.cc_bootstrap(prep, 70, 11, blocks=(0, 1)),
                kr.cc_bootstrap(prep, 70, 11, blocks=(1, 3)),
            ]
        ),
        reps,
    )


def test_cc_blocked_bootstrap_law_matches_the_unblocked_path(monkeypatch):
    # the same law of replicates: blocked (blocks of 8) against unblocked counts
    e, u = _tied(200, seed=4)
    prep = kr.cc_prepare(e, u)
    plain = kr.cc_bootstrap(prep, 4000, seed=1)
    monkeypatch.setattr(R, "POINT_BITS", 3)
    monkeypatch.setattr(R, "BLOCKED_ABOVE", 10)
    blocked = kr.cc_bootstrap(prep, 4000, seed=2)
    assert sps.ks_2samp(plain, blocked).pvalue > 1e-3
    assert blocked.std() == pytest.approx(plain.std(), rel=0.1)


def test_cc_blocked_bootstrap_does_not_depend_on_threads():
    m = R.BLOCKED_ABOVE + 5000
    rng = np.random.default_rng(0)
    u = rng.uniform(1, 2, m)
    prep = kr.cc_prepare(u * rng.standard_normal(m), u)
    before = numba.get_num_threads()
    runs = []
    try:
        for threads in (1, min(2, numba.config.NUMBA_NUM_THREADS)):
            numba.set_num_threads(threads)
            runs.append(kr.cc_bootstrap(prep, 3 * R.BLOCK + 5, seed=9))
    finally:
        numba.set_num_threads(before)
    np.testing.assert_array_equal(*runs)


# --------------------------------------------------------------------------------------
# CC with fixed uE (simulated references)
# --------------------------------------------------------------------------------------
@pytest.mark.parametrize("tied", [True, False])
def test_cc_given_u_equals_sorting(tied):
    rng = np.random.default_rng(7)
    if tied:
        e, u = _tied(700, seed=7)
        e = np.vstack([e, np.round(u * rng.standard_normal(700), 1)])
    else:
        u = rng.uniform(0.5, 2, 700)
        e = u * rng.standard_normal((2, 700))
    got = kr.cc_given_u(u)(e)
    want = [ks.spearman_cc(r, u) for r in e]
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-13)
