"""The cluster bootstrap kernel (uqviz._array.clusters; Davison & Hinkley (1997), section 3.8):
group codes, per-(bin, group) sums, hand-enumerated resamples, the delete-one-group jackknife,
the design effect 1 + (m - 1) rho^2 of ZMS (Cameron & Miller (2015)), thread invariance."""

from __future__ import annotations

import itertools
from collections import Counter

import numpy as np
import pytest

from uqviz._array import bca, clusters
from uqviz._array.bootstrap import bootstrap_generic, bootstrap_moments
from uqviz._array.jit import numba
from uqviz._array.stats import spearman_cc, zms
from uqviz.engine.bootstrap import bootstrap_statistics
from uqviz.engine.options import BootstrapOptions, data_group_codes

ZMS = {"ZMS": (zms, ("Z2",))}


def _grouped(n_groups, m, rho, seed):
    r = np.random.default_rng(seed)
    a = np.repeat(r.standard_normal(n_groups), m)
    z = np.sqrt(rho) * a + np.sqrt(1.0 - rho) * r.standard_normal(n_groups * m)
    u = np.exp(r.normal(0.0, 0.5, n_groups * m))
    return z * u, u, np.repeat(np.arange(n_groups), m)


# ------------------------------------------------------------------------------- codes --
def test_group_codes_follow_first_appearance_for_strings_and_ints():
    assert clusters.group_codes(np.array(["s2", "s1", "s2", "s9"]))[0].tolist() == [0, 1, 0, 2]
    codes, n = clusters.group_codes(np.array([40, 3, 3, 40, 7]))
    assert codes.tolist() == [0, 1, 1, 0, 2] and n == 3


@pytest.mark.parametrize(
    "labels, count", [(np.array([1.0, np.nan, np.nan]), 2), (np.array(["a", None], object), 1)]
)
def test_group_codes_refuse_missing_labels_with_their_count(labels, count):
    with pytest.raises(ValueError, match=rf"groups: {count} point\(s\) without a group label"):
        clusters.group_codes(labels)


def test_options_read_the_group_coordinate():
    import xarray as xr

    ds = xr.Dataset({"E": ("point", [1.0, 2, 3])}, coords={"group": ("point", ["b", "a", "b"])})
    opts = BootstrapOptions.check(n_boot=10).for_data(ds)
    assert opts.resample == "groups" and opts.clusters.tolist() == [0, 1, 0]
    assert opts.attrs["n_groups"] == 2 and opts.attrs["resample"] == "groups"
    plain = BootstrapOptions.check(n_boot=10).for_data(ds.drop_vars("group"))
    assert plain.resample == "points" and "n_groups" not in plain.attrs
    assert data_group_codes(ds.drop_vars("group")) is None


# ---------------------------------------------------------------------------- aggregate --
def test_aggregate_sums_each_group_inside_each_bin():
    cols = np.arange(12.0).reshape(6, 2)
    codes = np.array([0, 1, 0, 1, 1, 2])
    agg = clusters.aggregate(cols, codes, starts=[0, 3], sizes=[3, 3])
    # bin 0: points 0, 1, 2 -> group 0 {0, 2}, group 1 {1}; bin 1: points 3, 4, 5 -> 1 {3, 4}, 2 {5}
    assert agg.sums.tolist() == [[4.0, 6.0], [2.0, 3.0], [14.0, 16.0], [10.0, 11.0]]
    assert agg.counts.tolist() == [2.0, 1.0, 2.0, 1.0]
    assert agg.starts.tolist() == [0, 2] and agg.sizes.tolist() == [2, 2]


def test_replicate_points_takes_every_point_of_each_drawn_group():
    members = clusters.group_members(np.array([1, 0, 1, 2, 1]), 3)
    assert clusters.replicate_points(members, np.array([1, 1, 2])).tolist() == [0, 2, 4, 0, 2, 4, 3]


# ------------------------------------------------------------------ hand-enumerated law --
def test_cluster_replicates_of_zms_follow_the_enumerated_law_of_two_groups():
    # group A: z = 1, 1, 1 (sum 3, 3 points); group B: z = 2 (sum 4, 1 point). A replicate draws
    # two groups: AA -> 1, AB/BA -> 7/4, BB -> 4, with probabilities 1/4, 1/2, 1/4
    e, u = np.array([1.0, -1.0, 1.0, 2.0]), np.ones(4)
    codes = np.array([0, 0, 0, 1])
    n_boot = 20_000
    for engine in ("numpy",) + (("numba",) if numba is not None else ()):
        r = bootstrap_moments(
            e, u, ZMS, n_boot=n_boot, seed=3, clusters=codes, engine=engine, method="percentile"
        )["ZMS"]
        assert r.estimate[0] == pytest.approx(7.0 / 4.0)
        freq = Counter(np.round(r.replicates[0], 12).tolist())
        assert set(freq) == {1.0, 1.75, 4.0}
        se = np.sqrt(0.25 * 0.75 / n_boot)
        assert abs(freq[1.0] / n_boot - 0.25) < 4 * se
        assert abs(freq[4.0] / n_boot - 0.25) < 4 * se


def test_generic_cluster_replicates_are_statistics_of_whole_groups():
    # three groups; every replicate's CC must be that of a multiset of 3 groups drawn
    e = np.array([0.1, -0.5, 1.0, 2.0, -3.0, 0.7, 1.4])
    u = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0])
    codes = np.array([0, 0, 1, 1, 2, 2, 2])
    possible = set()
    for drawn in itertools.product(range(3), repeat=3):
        pts = clusters.replicate_points(clusters.group_members(codes, 3), np.array(drawn))
        possible.add(round(float(spearman_cc(e[pts], u[pts])), 12))
    r = bootstrap_generic(e, u, {"CC": (spearman_cc, None)}, n_boot=300, rng=1, clusters=codes)
    assert set(np.round(r["CC"].replicates[0], 12).tolist()) <= possible


def test_the_acceleration_is_the_delete_one_group_jackknifes():
    e, u, codes = _grouped(12, 5, 0.3, seed=4)
    r = bootstrap_moments(e, u, ZMS, n_boot=50, seed=1, clusters=codes)["ZMS"]
    jack = [np.mean((e[codes != g] / u[codes != g]) ** 2) for g in range(12)]
    assert r.accel[0] == pytest.approx(float(bca.acceleration(np.array(jack))), rel=1e-12)


def test_a_bin_of_one_group_has_no_acceleration():
    e = np.array([1.0, -2.0, 0.5, 1.5])
    agg = clusters.aggregate((e * e)[:, None], np.array([0, 0, 1, 1]), [0, 2], [2, 2])
    assert np.isnan(clusters.jackknife_accel(agg, lambda m, n: m[:, 0])).all()


# ------------------------------------------------------------------------ design effect --
def test_the_cluster_se_of_zms_is_the_design_effect_times_the_point_se():
    # corr(z_i, z_j) = rho inside a group, so corr(z_i^2, z_j^2) = rho^2 and the variance of ZMS
    # grows by 1 + (m - 1) rho^2 (Cameron & Miller (2015)); the cluster bootstrap sees it, the
    # point bootstrap does not
    m, rho = 20, 0.5
    e, u, codes = _grouped(1000, m, rho, seed=7)
    point = bootstrap_moments(e, u, ZMS, n_boot=2000, seed=1, method="percentile")["ZMS"]
    group = bootstrap_moments(e, u, ZMS, n_boot=2000, seed=1, method="percentile", clusters=codes)
    ratio = float(group["ZMS"].se[0] / point.se[0])
    assert ratio == pytest.approx(np.sqrt(1 + (m - 1) * rho**2), rel=0.08)
    # and the cluster se is the linearised (cluster-robust) se of the ratio sum z^2 / M
    s = np.bincount(codes, (e / u) ** 2)
    n = np.bincount(codes).astype(float)
    est = s.sum() / n.sum()
    robust = np.sqrt(np.sum((s - est * n) ** 2)) / n.sum()
    assert float(group["ZMS"].se[0]) == pytest.approx(robust, rel=0.06)


def test_engine_bootstrap_takes_clusters_for_every_kind_of_statistic():
    e, u, codes = _grouped(40, 10, 0.5, seed=2)
    res = bootstrap_statistics(e, u, ["ZMS", "CC", "ENCE"], n_boot=200, rng=0, clusters=codes)
    assert set(res) == {"ZMS", "CC", "ENCE"}
    for r in res.values():
        assert np.isfinite(r.lower[0]) and r.lower[0] < r.upper[0]
    with pytest.raises(ValueError, match="one integer group code per point"):
        bootstrap_statistics(e, u, ["ZMS"], n_boot=20, rng=0, clusters=codes[:-1])


def test_cluster_numbers_do_not_depend_on_threads_or_dask():
    e, u, codes = _grouped(300, 10, 0.3, seed=5)
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = bootstrap_statistics(e, u, ["ZMS", "RCE"], n_boot=500, rng=9, clusters=codes)
        numba.set_num_threads(max(2, before))
        two = bootstrap_statistics(e, u, ["ZMS", "RCE"], n_boot=500, rng=9, clusters=codes)
    finally:
        numba.set_num_threads(before)
    for name in ("ZMS", "RCE"):
        np.testing.assert_array_equal(one[name].replicates, two[name].replicates)
    # bins split over dask workers: each bin has its own seed, so the same numbers
    starts, sizes = np.array([0, 1000, 2000]), np.array([1000, 1000, 1000])
    kw = dict(n_boot=200, rng=9, clusters=codes, starts=starts, sizes=sizes)
    here = bootstrap_statistics(e, u, ["ZMS"], **kw)["ZMS"]
    there = bootstrap_statistics(e, u, ["ZMS"], client="local", **kw)["ZMS"]
    np.testing.assert_array_equal(here.replicates, there.replicates)
    np.testing.assert_array_equal(here.lower, there.lower)
