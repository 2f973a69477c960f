"""The resampling kernels: exact uniformity, groups, determinism, engines agree in law."""

import numba
import numpy as np
import pytest
from scipy import stats as sps

from uqviz._array.resample import BLOCK, resample_sums


@pytest.mark.parametrize("engine", ["numba", "numpy"])
@pytest.mark.parametrize("m", [7, 8])  # odd and even sizes take different code paths
def test_draws_are_uniform_over_points(engine, m):
    # one-hot columns: the sums are the counts of each point in each resample
    counts = resample_sums(np.eye(m), 4000, seed=123, engine=engine)[0]
    assert counts.shape == (4000, m)
    np.testing.assert_array_equal(counts.sum(axis=1), m)  # M draws per replicate
    total = counts.sum(axis=0)
    assert sps.chisquare(total).pvalue > 1e-3
    # multinomial: each count ~ Binomial(M, 1/M)
    assert counts[:, 0].var() == pytest.approx((1 - 1 / m), rel=0.1)


@pytest.mark.parametrize("engine", ["numba", "numpy"])
def test_groups_resample_within_themselves(engine):
    m = 9
    out = resample_sums(np.eye(m), 500, seed=5, starts=[0, 3], sizes=[3, 6], engine=engine)
    assert out.shape == (2, 500, m)
    assert np.all(out[0][:, 3:] == 0) and np.all(out[0].sum(axis=1) == 3)
    assert np.all(out[1][:, :3] == 0) and np.all(out[1].sum(axis=1) == 6)


@pytest.mark.parametrize("engine", ["numba", "numpy"])
def test_same_seed_same_numbers(engine):
    cols = np.random.default_rng(0).random((50, 2))
    a = resample_sums(cols, 100, seed=42, engine=engine)
    b = resample_sums(cols, 100, seed=42, engine=engine)
    c = resample_sums(cols, 100, seed=43, engine=engine)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


def test_numba_result_does_not_depend_on_threads():
    cols = np.random.default_rng(0).random((300, 3))
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = resample_sums(cols, 5 * BLOCK + 3, seed=9, engine="numba")
        numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
        many = resample_sums(cols, 5 * BLOCK + 3, seed=9, engine="numba")
    finally:
        numba.set_num_threads(before)
    np.testing.assert_array_equal(one, many)


def test_replicates_are_a_prefix_independent_of_n_boot():
    # blocks of replicates have their own streams: asking for more replicates
    # extends the sample without changing the first ones
    cols = np.random.default_rng(1).random((40, 1))
    short = resample_sums(cols, 2 * BLOCK, seed=3)
    long = resample_sums(cols, 4 * BLOCK, seed=3)
    np.testing.assert_array_equal(short, long[:, : 2 * BLOCK])


def test_engines_agree_in_distribution():
    x = np.random.default_rng(2).gamma(0.8, size=(400, 1))
    a = resample_sums(x, 4000, seed=1, engine="numba")[0, :, 0]
    b = resample_sums(x, 4000, seed=1, engine="numpy")[0, :, 0]
    assert sps.ks_2samp(a, b).pvalue > 1e-3
    # bootstrap variance of a sum of M iid draws: M * population variance
    expected_sd = np.sqrt(400 * x.var())
    assert a.std() == pytest.approx(expected_sd, rel=0.05)
    assert b.std() == pytest.approx(expected_sd, rel=0.05)


def test_bad_arguments():
    with pytest.raises(ValueError, match="shape"):
        resample_sums(np.ones(5), 10, seed=1)
    with pytest.raises(ValueError, match="at least one point"):
        resample_sums(np.ones((5, 1)), 10, seed=1, starts=[0], sizes=[0])
    with pytest.raises(ValueError, match="outside"):
        resample_sums(np.ones((5, 1)), 10, seed=1, starts=[3], sizes=[4])
    with pytest.raises(ValueError, match="n_boot"):
        resample_sums(np.ones((5, 1)), 0, seed=1)
    with pytest.raises(ValueError, match="engine"):
        resample_sums(np.ones((5, 1)), 10, seed=1, engine="cuda")


@pytest.mark.parametrize("engine", ["numba", "numpy"])
def test_per_group_seeds_make_groups_independent_of_each_other(engine):
    rng = np.random.default_rng(0)
    a, b, c = rng.random((30, 2)), rng.random((50, 2)), rng.random((20, 2))
    seeds = np.array([11, 22, 33], dtype=np.uint64)
    together = resample_sums(
        np.vstack([a, b, c]), 70, seeds, starts=[0, 30, 80], sizes=[30, 50, 20], engine=engine
    )
    alone = resample_sums(b, 70, seeds[1:2], engine=engine)
    np.testing.assert_array_equal(together[1], alone[0])
    with pytest.raises(ValueError, match="one seed per group"):
        resample_sums(b, 10, seeds, engine=engine)
