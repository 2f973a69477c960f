"""Data of any size (issue 15, items 2-4): CC by ranks and counts, streaming Monte Carlo, dask.

- CC's bootstrap, jackknife and simulated references computed from ranks taken once
  equal the sort-based computation on data with ties;
- the simulated references and confidence curves hold O(M + chunk) values whatever n_mc;
- every bootstrap-based function gives identical numbers with client=None and on a
  dask LocalCluster.
"""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest
import scipy.stats as sps

import uqviz
from uqviz._array import rank as kr
from uqviz._array import stats as ks
from uqviz._array.bootstrap import _generic_jackknife, bootstrap_generic
from uqviz.engine.bootstrap import bootstrap_statistics


def _tied(m, seed=0):
    rng = np.random.default_rng(seed)
    u = rng.choice([0.5, 1.0, 1.5, 2.0, 3.0], m) * rng.integers(1, 4, m)
    e = np.round(u * rng.standard_normal(m), 1)  # many ties in |E|, and E = 0
    return e, u


# --------------------------------------------------------------------------------------
# CC by counts
# --------------------------------------------------------------------------------------
def test_cc_bootstrap_by_counts_equals_sorting_each_resample():
    e, u = _tied(1501)
    prep = kr.cc_prepare(e, u)
    counts = kr.cc_bootstrap_counts(prep, 70, seed=11)
    assert np.all(counts.sum(axis=1) == e.size)
    reps = kr.cc_bootstrap(prep, 70, seed=11)
    sorted_based = [
        ks.spearman_cc(np.repeat(e, c.astype(int)), np.repeat(u, c.astype(int))) for c in counts
    ]
    np.testing.assert_allclose(reps, sorted_based, rtol=0, atol=1e-12)
    np.testing.assert_allclose(kr.cc_from_counts(counts, prep), sorted_based, rtol=0, atol=1e-12)
    # blocks of replicates computed apart are the same replicates
    np.testing.assert_array_equal(
        np.concatenate(
            [
                kr.cc_bootstrap(prep, 70, 11, blocks=(0, 1)),
                kr.cc_bootstrap(prep, 70, 11, blocks=(1, 3)),
            ]
        ),
        reps,
    )


@pytest.mark.parametrize("m", [600, 2500])  # leave-one-out, then delete-group
def test_cc_jackknife_by_counts_equals_recomputing_on_the_kept_points(m):
    e, u = _tied(m, seed=1)
    edges = np.linspace(0, m, min(m, 1000) + 1).round().astype(np.int64)
    np.testing.assert_allclose(
        kr.cc_jackknife(kr.cc_prepare(e, u), edges),
        _generic_jackknife(ks.spearman_cc, e, u),
        rtol=0,
        atol=1e-12,
    )


def _exact_cc(e, u, counts):
    """Spearman CC of a count-weighted sample in exact integer arithmetic (ties averaged)."""
    import math

    c = np.asarray(counts, dtype=np.int64)
    n = int(c.sum())

    def twice_centred_midranks(x):
        out = np.empty(x.size, dtype=object)
        order = np.argsort(x, kind="stable")
        xs, cs = x[order], c[order]
        before, i = 0, 0
        while i < x.size:
            j = i
            while j < x.size and xs[j] == xs[i]:
                j += 1
            t = int(cs[i:j].sum())
            out[order[i:j]] = 2 * before + t - n
            before, i = before + t, j
        return out

    re, ru = twice_centred_midranks(np.abs(e)), twice_centred_midranks(u)
    ci = [int(x) for x in c]
    cross = sum(k * a * b for k, a, b in zip(ci, re, ru))
    sse = sum(k * a * a for k, a in zip(ci, re))
    ssu = sum(k * b * b for k, b in zip(ci, ru))
    return cross / math.sqrt(sse * ssu)


@pytest.mark.parametrize("ties", ["none", "uE", "both"])
def test_cc_at_large_m_is_exact_to_rounding(ties):
    # above BLOCKED_ABOVE the counts are packed with the |E| mid-ranks (4 bytes a point,
    # sums in exact integers): the replicates and jackknife values equal the exact CC
    m = 20_000
    assert kr._packed(m)
    rng = np.random.default_rng(7)
    u = rng.lognormal(0.0, 0.3, m)
    e = u * rng.standard_normal(m)
    if ties != "none":
        u = np.round(u, 1)
    if ties == "both":
        e = np.round(e, 1)
    prep = kr.cc_prepare(e, u)
    counts = kr.cc_bootstrap_counts(prep, 3, seed=5)
    reps = kr.cc_bootstrap(prep, 3, seed=5)
    for c, r in zip(counts, reps):
        assert r == pytest.approx(_exact_cc(e, u, c), rel=1e-14)
    edges = np.array([0, 7, 5000, m])
    jack = kr.cc_jackknife(prep, edges)
    for g in range(3):
        keep = np.ones(m, dtype=np.int64)
        keep[edges[g] : edges[g + 1]] = 0
        assert jack[g] == pytest.approx(_exact_cc(e, u, keep), rel=1e-14)


def test_cc_packed_path_takes_counts_above_15_unpacked():
    m = 20_000
    rng = np.random.default_rng(8)
    u = rng.lognormal(0.0, 0.3, m)
    e = u * rng.standard_normal(m)
    prep = kr.cc_prepare(e, u)
    oe, e_bounds, u_bounds, epos_u = prep
    cnt = rng.multinomial(m, np.full(m, 1.0 / m)).astype(np.int32)
    cnt[[3, 900]] += np.array([16, 40], dtype=np.int32)  # counts a 4-bit field cannot hold
    before = cnt.copy()
    value = kr._cc_packed(
        cnt, np.empty(m, np.int32), e_bounds, u_bounds, epos_u, *kr._packed_extras(prep)
    )
    np.testing.assert_array_equal(cnt, before)
    counts = np.empty(m)
    counts[oe] = before  # cnt is in |E| order
    assert value == pytest.approx(_exact_cc(e, u, counts), rel=1e-14)


def test_cc_bootstrap_path_matches_the_generic_path():
    e, u = _tied(1200, seed=2)
    fast = bootstrap_statistics(e, u, ["CC"], n_boot=2000, rng=3)["CC"]
    slow = bootstrap_generic(e, u, {"CC": (ks.spearman_cc, None)}, n_boot=2000, rng=4)["CC"]
    assert fast.estimate[0] == slow.estimate[0]
    np.testing.assert_allclose(fast.accel, slow.accel, rtol=1e-10)  # same jackknife
    assert fast.replicates.shape == (1, 2000)
    assert abs(fast.replicates.mean() - slow.replicates.mean()) < 0.2 * slow.se[0]
    assert fast.se[0] == pytest.approx(slow.se[0], rel=0.1)


def test_cc_with_fixed_uncertainties_ranks_only_the_errors():
    e, u = _tied(800, seed=3)
    rng = np.random.default_rng(4)
    rows = u * rng.standard_normal((6, u.size))
    rows[0, :40] = 0.0  # exact ties in |E*|, and -0.0
    rows[0, 40:50] = -0.0
    rows[1, :30] = rows[1, 30:60]  # equal values at different uE
    f = kr.cc_given_u(u)
    expected = [sps.spearmanr(np.abs(r), u).statistic for r in rows]
    np.testing.assert_allclose(f(rows), expected, rtol=0, atol=1e-12)
    np.testing.assert_allclose(f(rows[:, None, :])[:, 0], expected, rtol=0, atol=1e-12)


# --------------------------------------------------------------------------------------
# streaming Monte Carlo: O(M + chunk) whatever n_mc
# --------------------------------------------------------------------------------------
def _peak(func):
    tracemalloc.start()
    try:
        func()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_simulated_reference_memory_does_not_grow_with_n_mc(monkeypatch):
    monkeypatch.setenv("UQVIZ_THREADS", "1")
    m = 200_000  # one block of 64 sets would be 100 MB per array
    ds = uqviz.synthetic.nig(m, nu=8, rng=0)
    data_mb = 2 * m * 8 / 2**20

    def run(n_mc):
        return lambda: uqviz.simulated_reference(
            ds, statistic="ZMSE", n_mc=n_mc, rng=1, progress=False
        )

    small, large = _peak(run(8)) / 2**20, _peak(run(160)) / 2**20
    assert large < 8 * data_mb + 48, (small, large)
    assert large < small + 8, (small, large)  # 20 x the samples, the same memory


def test_confidence_curve_memory_does_not_grow_with_n_mc_or_n_boot(monkeypatch):
    monkeypatch.setenv("UQVIZ_THREADS", "1")
    ds = uqviz.synthetic.nig(100_000, nu=8, rng=0)

    def run(n):
        return lambda: uqviz.confidence_curve(ds, n_mc=n, n_boot=n, rng=1, progress=False)

    # from 30 draws on, a chunk is as large as it gets (10 rows of 10^5 values)
    small, large = _peak(run(30)) / 2**20, _peak(run(300)) / 2**20
    assert large < small + 4, (small, large)


def test_simulated_sets_do_not_depend_on_the_chunk():
    from uqviz.generative import get_generative
    from uqviz.reference.simulated import simulated_rows

    u = np.linspace(0.5, 2.0, 50)
    for name in ("normal", "t6", "uniform", "laplace"):
        g = get_generative(name)
        a = np.vstack(list(simulated_rows(g, np.random.default_rng(1), 9, u, rows=2)))
        b = np.vstack(list(simulated_rows(g, np.random.default_rng(1), 9, u, rows=9)))
        np.testing.assert_array_equal(a, b)
        if name in ("normal", "t6"):  # numba kernels on a stream seeded by the block's rng
            from uqviz._array import variates as kvar

            state = kvar.stream(int(np.random.default_rng(1).integers(0, 2**63)))
            eps = np.empty((9, 50))
            for row in eps:
                (
                    kvar.fill_normal(state, row)
                    if name == "normal"
                    else kvar.fill_student_t(state, 6.0, row)
                )
            np.testing.assert_array_equal(b, u * eps)
        else:
            np.testing.assert_array_equal(b, u * g.sample(np.random.default_rng(1), (9, 50)))


def test_experiment_memory_does_not_grow_with_n_datasets():
    def run(n):
        return lambda: uqviz.validation_probability(
            nu=[6], n_datasets=n, size=2000, n_boot=50, rng=0, progress=False
        )

    # chunks of 50 datasets (both runs fill them); the results are O(n_datasets) scalars
    small, large = _peak(run(100)) / 2**20, _peak(run(500)) / 2**20
    assert large < small + 2, (small, large)


# --------------------------------------------------------------------------------------
# dask: the same numbers as the local run
# --------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def client():
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None
    )
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


def _same(a, b):
    import xarray as xr

    xr.testing.assert_identical(a, b)


@pytest.fixture(scope="module")
def data():
    ds = uqviz.synthetic.nig(3000, nu=6, rng=3)
    return ds.assign(X=("point", np.random.default_rng(0).uniform(size=3000)))


CALLS = {
    "validate_average": lambda d, c: uqviz.validate_average(
        d, statistics=("ZMS", "RCE", "NLL"), n_boot=300, rng=1, client=c
    ),
    "validate_average_CC": lambda d, c: uqviz.validate_average(
        d, statistics=("CC",), n_boot=300, rng=1, client=c
    ),
    "local_calibration": lambda d, c: uqviz.local_calibration(
        d, n_bins=10, n_boot=300, rng=2, client=c
    ),
    "decimation_curve": lambda d, c: uqviz.decimation_curve(
        d, fractions=[0, 0.1], n_boot=200, rng=2, client=c
    ),
    "reliability": lambda d, c: uqviz.reliability(d, n_bins=8, n_boot=200, rng=2, client=c),
    "ordering_study": lambda d, c: uqviz.ordering_study(
        d.assign(X=np.round(d.X * 5)),
        conditioning="X",
        n_bins=4,
        n_orderings=5,
        n_boot=100,
        rng=2,
        progress=False,
        client=c,
    ),
    "proper_scores": lambda d, c: uqviz.proper_scores(d, n_boot=200, rng=2, client=c),
    "qce": lambda d, c: uqviz.qce(
        d.E.values, 0.0, d.uE.values, levels=[0.5, 0.9], n_boot=200, rng=2, client=c
    ),
    "simulated_reference": lambda d, c: uqviz.simulated_reference(
        d, statistic="CC", n_mc=150, rng=4, return_samples=True, client=c, progress=False
    ),
    "validate_simulated": lambda d, c: uqviz.validate_simulated(
        d, statistic="ENCE", n_mc=100, n_boot=200, rng=4, client=c, progress=False
    ),
    "validate_with_references": lambda d, c: uqviz.validate_with_references(
        d, statistic="CC", n_mc=100, n_boot=200, rng=4, client=c, progress=False
    ),
    "confidence_curve": lambda d, c: uqviz.confidence_curve(
        d, n_mc=70, n_boot=70, rng=5, client=c, progress=False
    ),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_identical_numbers_on_a_local_cluster(name, data, client):
    local = CALLS[name](data, None)
    remote = CALLS[name](data, client)
    _same(local, remote)


def test_identical_numbers_for_a_tree_on_a_local_cluster(data, client):
    import xarray as xr

    tree = xr.DataTree.from_dict({"a": data, "b": data.isel(point=slice(0, 1500))})
    _same(
        uqviz.proper_scores(tree, scores=("nll",), n_boot=100, rng=0),
        uqviz.proper_scores(tree, scores=("nll",), n_boot=100, rng=0, client=client),
    )


def test_warnings_of_the_workers_reach_the_caller(client):
    ds = uqviz.synthetic.nig(300, nu=3, rng=0)
    with pytest.warns(UserWarning) as local:
        uqviz.validate_average(ds, statistics=("ZMS", "MV"), n_boot=100, rng=0)
    with pytest.warns(UserWarning) as remote:
        uqviz.validate_average(ds, statistics=("ZMS", "MV"), n_boot=100, rng=0, client=client)
    assert sorted(str(w.message) for w in local) == sorted(str(w.message) for w in remote)


def test_identical_numbers_on_worker_processes(data):
    distributed = pytest.importorskip("distributed")
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as c,
    ):
        for name in ("validate_average_CC", "local_calibration", "simulated_reference"):
            _same(CALLS[name](data, None), CALLS[name](data, c))


def test_client_option_is_checked(data):
    with pytest.raises(ValueError, match="client"):
        uqviz.validate_average(data, n_boot=100, client="cluster")
    with pytest.raises(TypeError, match="client"):
        uqviz.local_calibration(data, n_boot=100, client=3)


def test_a_bin_gives_the_same_bits_alone_or_with_its_neighbours(monkeypatch):
    # the jackknife of a group was summed in chunks cut at global positions, so a bin on
    # a dask worker (its bins alone) differed from the local run in the last bit
    from uqviz._array import bootstrap as kboot
    from uqviz._array.resample import group_seeds
    from uqviz.engine.bootstrap import _moments_groups
    from uqviz.engine.parallel import split_ranges
    from uqviz.engine.statistics import get_statistic

    monkeypatch.setattr(kboot, "JACKKNIFE_CHUNK", 37)
    rng = np.random.default_rng(5)
    sizes = rng.integers(20, 120, size=12)
    starts = np.r_[0, np.cumsum(sizes)[:-1]]
    u = rng.uniform(0.5, 2.0, sizes.sum())
    e = u * rng.standard_t(4, u.size)
    stat = get_statistic("ZMS")
    stats = {"ZMS": (stat.func, stat.columns)}
    whole = kboot.bootstrap_moments(
        e, u, stats, n_boot=200, seed=9, ci=0.95, method="bca", starts=starts, sizes=sizes
    )["ZMS"]
    for n_parts in (2, 5, 12):
        parts = [
            _moments_groups(
                a,
                b,
                (e, u, stats, 200, group_seeds(9, sizes.size), 0.95, "bca", starts, sizes, None),
            )["ZMS"]
            for a, b in split_ranges(sizes.size, n_parts)
        ]
        for field in ("replicates", "accel", "lower", "upper"):
            joined = np.concatenate([getattr(p, field) for p in parts])
            np.testing.assert_array_equal(getattr(whole, field), joined, err_msg=field)


def test_identical_bins_on_a_local_cluster_when_bins_cross_chunks(data, client, monkeypatch):
    from uqviz._array import bootstrap as kboot

    monkeypatch.setattr(kboot, "JACKKNIFE_CHUNK", 257)
    _same(CALLS["local_calibration"](data, None), CALLS["local_calibration"](data, client))


@pytest.mark.parametrize("scale", [1.0, 1e250, 1e-250])
def test_binned_means_for_fixed_u_equal_the_general_ones(scale):
    # the simulated references read each synthetic set once for E2 and Z2 (one pass,
    # partial sums of 256 points) instead of building the columns
    from uqviz._array import binned as kb

    rng = np.random.default_rng(0)
    u = rng.lognormal(0, 0.3, 5003) * scale
    e = u * rng.standard_normal((3, 5003))
    starts, sizes = np.array([0, 1000, 2500]), np.array([1000, 1500, 2503])
    fast = kb.binned_means_fixed_u(e, u, starts, sizes, ("E2", "Z2"), float(np.max(u)))
    general = kb.binned_column_means(e, u, starts, sizes, ("E2", "Z2"))
    assert fast["log2_scale"] == general["log2_scale"]
    for name in ("E2", "Z2"):
        np.testing.assert_allclose(fast[name], general[name], rtol=1e-14, atol=0)


def test_products_formed_in_the_kernels_are_those_of_the_array():
    # the simulated references pass eps and u; E* = eps u is formed point by point
    from uqviz._array import binned as kb

    rng = np.random.default_rng(4)
    u = np.round(rng.lognormal(0, 0.3, 3001), 2)
    eps = rng.standard_normal((2, 3001))
    eps[:, :4] = 0.0  # ties in |E*| inside the runs of equal keys
    starts, sizes = np.array([0, 1000]), np.array([1000, 2001])
    fused = kb.binned_means_fixed_u(
        eps, u, starts, sizes, ("E2", "Z2"), float(u.max()), scaled=True
    )
    plain = kb.binned_means_fixed_u(eps * u, u, starts, sizes, ("E2", "Z2"), float(u.max()))
    for name in ("E2", "Z2"):
        np.testing.assert_array_equal(fused[name], plain[name])
    cc = kr.cc_given_u(u)
    np.testing.assert_array_equal(cc(eps, scale=u), cc(eps * u))
    np.testing.assert_allclose(
        cc(eps * u), [ks.spearman_cc(r, u) for r in eps * u], rtol=0, atol=1e-14
    )
