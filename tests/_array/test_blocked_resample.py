"""The cache-blocked exact bootstrap sampler (issue 15): exact law, threads, memory."""

import tracemalloc

import numba
import numpy as np
import pytest
from scipy import stats as sps

from uqviz._array import resample as R
from uqviz._array.resample import BLOCK, binned_resample_sums, resample_sums
from uqviz.engine.bootstrap import bootstrap_statistics


@pytest.fixture
def tiny_blocks(monkeypatch):
    """Blocks of 8 points, blocked above 10 points: the blocked path on small data."""
    monkeypatch.setattr(R, "POINT_BITS", 3)
    monkeypatch.setattr(R, "BLOCKED_ABOVE", 10)


@numba.njit
def _binomials(seed, n, p, size):
    s = R.task_stream(numba.uint64(seed), 0)
    out = np.empty(size, dtype=np.int64)
    for i in range(size):
        out[i] = R._binomial(s, n, p)
    return out


@pytest.mark.parametrize(
    "n, p", [(7, 0.3), (40, 0.2), (4096, 0.5), (10**6, 0.004), (50, 0.93), (10**7, 0.7)]
)
def test_binomial_sampler_is_exact(n, p):
    # inversion (n p < 10), BTRS (n p >= 10) and the p > 1/2 reflection
    x = _binomials(11, n, p, 100_000)
    assert x.min() >= 0 and x.max() <= n
    ks = np.arange(x.min(), x.max() + 1)
    obs = np.bincount(x - x.min())
    exp = sps.binom.pmf(ks, n, p) * x.size
    keep = exp >= 5  # pool the sparse tails in one cell
    obs = np.append(obs[keep], obs[~keep].sum())
    exp = np.append(exp[keep], x.size - exp[keep].sum())
    assert sps.chisquare(obs, exp).pvalue > 1e-3


@pytest.mark.parametrize("m", [37, 40])  # a short last block, and full blocks only
@pytest.mark.parametrize("width", [1, 3])  # the one-column and three-column kernels
def test_blocked_counts_are_multinomial(tiny_blocks, m, width):
    # one-hot columns: the sums are the counts of each point in each resample
    eye = np.eye(m)
    if width == 1:  # one column per call: every call draws the same points
        counts = np.stack(
            [resample_sums(eye[:, [i]], 20_000, seed=3)[0, :, 0] for i in range(m)], axis=1
        )
    else:
        counts = resample_sums(eye, 20_000, seed=3)[0]
    np.testing.assert_array_equal(counts.sum(axis=1), m)  # M draws per replicate
    assert sps.chisquare(counts.sum(axis=0)).pvalue > 1e-3  # uniform over points
    # multinomial moments: var M p (1 - p), cov -M p^2 (inside a block and across blocks)
    c = np.cov(counts[:, [0, 5, 20, m - 1]], rowvar=False)
    se_var = np.sqrt(2.0 / counts.shape[0]) * 1.2  # sd of a sample variance, ~Poisson(1)
    np.testing.assert_allclose(np.diag(c), 1 - 1 / m, atol=5 * se_var)
    off = c[np.triu_indices(4, 1)]
    np.testing.assert_allclose(off, -1 / m, atol=5 / np.sqrt(counts.shape[0]))


def test_block_totals_match_numpy_multinomial():
    # default blocks (2**12 points), M above the threshold: 5 blocks, the last one short
    m = 4 * (1 << R.POINT_BITS) + 3616
    assert m > R.BLOCKED_ABOVE
    block = np.arange(m) >> R.POINT_BITS
    cols = np.stack([block == 0, block == 4, np.ones(m)], axis=1).astype(float)
    got = resample_sums(cols, 4000, seed=8)[0]
    np.testing.assert_array_equal(got[:, 2], m)  # block totals sum to M
    p = np.bincount(block) / m
    ref = np.random.default_rng(0).multinomial(m, p, size=4000)[:, [0, 4]]
    for j, col in enumerate((0, 1)):
        assert sps.ks_2samp(got[:, col], ref[:, j]).pvalue > 1e-3
    mean = m * p[[0, 4]]
    cov = m * (np.diag(p[[0, 4]]) - np.outer(p[[0, 4]], p[[0, 4]]))
    np.testing.assert_allclose(
        got[:, :2].mean(axis=0), mean, atol=5 * np.sqrt(np.diag(cov) / 4000).max()
    )
    np.testing.assert_allclose(
        np.cov(got[:, :2], rowvar=False), cov, rtol=0.15, atol=0.15 * abs(cov[0, 1])
    )


def test_blocked_groups_resample_within_themselves(tiny_blocks):
    m = 60
    out = resample_sums(np.eye(m), 300, seed=5, starts=[0, 9, 30], sizes=[9, 21, 30])
    assert np.all(out[0][:, 9:] == 0) and np.all(out[0].sum(axis=1) == 9)  # unblocked group
    assert np.all(out[1][:, :9] == 0) and np.all(out[1][:, 30:] == 0)
    np.testing.assert_array_equal(out[1].sum(axis=1), 21)
    np.testing.assert_array_equal(out[2].sum(axis=1), 30)
    assert np.all(out[1][:, 9:30].sum(axis=0) > 0)


def test_one_block_is_the_unblocked_path(monkeypatch):
    # data below the threshold keep the numbers of the unblocked sampler
    cols = np.random.default_rng(0).random((1000, 3))
    plain = resample_sums(cols, 70, seed=4)
    monkeypatch.setattr(R, "BLOCKED_ABOVE", 0)
    np.testing.assert_array_equal(resample_sums(cols, 70, seed=4), plain)


def test_blocked_binned_resamples(tiny_blocks):
    m = 37
    out = binned_resample_sums(np.eye(m), [0, 10, 20, m], 5000, seed=4)
    np.testing.assert_array_equal(out.sum(axis=2), np.broadcast_to([10, 10, 17], (5000, 3)))
    counts = out.sum(axis=1)
    assert sps.chisquare(counts.sum(axis=0)).pvalue > 1e-3
    assert counts[:, 5].var() == pytest.approx(1 - 1 / m, rel=0.1)
    # a resample is sorted: the points of bin 1 are drawn after those of bin 0
    last0 = np.array([np.flatnonzero(r[0]).max() for r in out])
    first1 = np.array([np.flatnonzero(r[1]).min() for r in out])
    assert np.all(last0 <= first1)


def test_blocked_bootstrap_se_of_zms():
    # bootstrap se of a mean of M points: sd(Z^2) / sqrt(M), within Monte Carlo error
    m, n_boot = 100_000, 2000
    rng = np.random.default_rng(1)
    u = rng.uniform(0.5, 2.0, m)
    e = u * rng.standard_normal(m)
    r = bootstrap_statistics(e, u, ["ZMS"], n_boot=n_boot, rng=2)["ZMS"]
    z2 = (e / u) ** 2
    assert float(r.se[0]) == pytest.approx(z2.std() / np.sqrt(m), rel=5 / np.sqrt(2 * n_boot))
    assert abs(float(r.bias[0])) < 4 * z2.std() / np.sqrt(m * n_boot)


def test_blocked_numbers_do_not_depend_on_threads():
    m = R.BLOCKED_ABOVE + 5000
    x = np.random.default_rng(0).random((m, 3))
    bounds = np.linspace(0, m, 6).astype(np.int64)
    before = numba.get_num_threads()
    runs = []
    try:
        for threads in (1, min(2, numba.config.NUMBA_NUM_THREADS)):
            numba.set_num_threads(threads)
            runs.append(
                (
                    resample_sums(x, 3 * BLOCK + 5, seed=9),
                    resample_sums(x[:, :1], 3 * BLOCK + 5, seed=9),
                    resample_sums(x, 40, seed=[1, 2], starts=[0, 7000], sizes=[7000, m - 7000]),
                    binned_resample_sums(x, bounds, 2 * BLOCK + 1, seed=9),
                )
            )
    finally:
        numba.set_num_threads(before)
    for a, b in zip(*runs):
        np.testing.assert_array_equal(a, b)
    # a one-column call draws the same points as the first column of a three-column call
    np.testing.assert_allclose(runs[0][1][..., 0], runs[0][0][..., 0], rtol=1e-12)


def test_memory_does_not_grow_with_n_boot():
    # M = 1e6: no allocation proportional to M x B (which would be 1.6 GB here)
    m = 10**6
    rng = np.random.default_rng(3)
    u = rng.uniform(0.5, 2.0, m)
    e = u * rng.standard_normal(m)
    bootstrap_statistics(e[:20_000], u[:20_000], ["ZMS", "RCE"], n_boot=64, rng=0)  # compile
    tracemalloc.start()
    try:
        bootstrap_statistics(e, u, ["ZMS", "RCE"], n_boot=200, rng=0)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 3 * (e.nbytes + u.nbytes)
