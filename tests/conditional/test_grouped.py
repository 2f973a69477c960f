"""Per-bin statistics of correlated points (issue 39): local_calibration resamples whole groups
inside each bin, and its calibrated null keeps the groups (Davison & Hinkley (1997), section
3.8; Cameron & Miller (2015))."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import uqviz
from uqviz._array.bootstrap import bootstrap_moments
from uqviz._array.clusters import group_codes, intraclass_correlation
from uqviz._array.stats import zms


def _structures(n_groups, m, rho, seed):
    """Groups whose points share one uE (a structure's atoms fall in one bin of uE)."""
    r = np.random.default_rng(seed)
    u = np.repeat(np.exp(r.normal(0.0, 0.5, n_groups)), m) * (1 + 1e-9 * r.random(n_groups * m))
    a = np.repeat(r.standard_normal(n_groups), m)
    z = np.sqrt(rho) * a + np.sqrt(1 - rho) * r.standard_normal(n_groups * m)
    group = np.repeat(np.arange(n_groups), m)
    return uqviz.from_arrays(z * u, u).assign_coords(group=("point", group))


def _quiet(func, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return func(*args, **kwargs)


def test_the_bins_intervals_are_the_cluster_bootstrap_of_the_sorted_points():
    ds = _structures(60, 10, 0.5, seed=1)
    loc = _quiet(uqviz.local_calibration, ds, n_bins=4, n_boot=300, n_mc=0, rng=5)
    assert loc.attrs["resample"] == "groups" and loc.attrs["n_groups"] == 60
    # independent computation: sort by uE, cut in 4 equal bins, cluster bootstrap per bin
    order = np.argsort(ds["uE"].values, kind="stable")
    e, u = ds["E"].values[order], ds["uE"].values[order]
    codes = group_codes(ds["group"].values)[0][order]
    starts, sizes = loc["start"].values if "start" in loc else None, loc["count"].values
    starts = np.r_[0, np.cumsum(sizes)[:-1]]
    np.testing.assert_allclose(
        loc["estimate"].values,
        [np.mean((e[s : s + n] / u[s : s + n]) ** 2) for s, n in zip(starts, sizes)],
        rtol=1e-12,
    )
    point = _quiet(
        uqviz.local_calibration, ds.drop_vars("group"), n_bins=4, n_boot=300, n_mc=0, rng=5
    )
    # whole groups of 10 points with rho = 0.5: intervals wider by about sqrt(1 + 9 / 4) = 1.8
    ratio = (loc["ci_upper"] - loc["ci_lower"]) / (point["ci_upper"] - point["ci_lower"])
    assert 1.3 < float(ratio.mean()) < 2.4
    ref = bootstrap_moments(
        e,
        u,
        {"ZMS": (zms, ("Z2",))},
        n_boot=300,
        seed=1,
        clusters=codes,
        starts=starts,
        sizes=sizes,
    )["ZMS"]
    width = (ref.upper - ref.lower) / (loc["ci_upper"] - loc["ci_lower"]).values
    assert 0.7 < float(np.mean(width)) < 1.4  # the same law, other draws


def test_the_per_bin_design_effect_of_zms():
    # every bin holds whole groups of m = 20 points: se(cluster) / se(points) =
    # sqrt(1 + (m - 1) rho^2) for ZMS
    m, rho = 20, 0.5
    ds = _structures(800, m, rho, seed=2)
    order = np.argsort(ds["uE"].values, kind="stable")
    e, u = ds["E"].values[order], ds["uE"].values[order]
    codes = group_codes(ds["group"].values)[0][order]
    starts, sizes = np.array([0, 8000]), np.array([8000, 8000])
    kw = dict(n_boot=1500, seed=3, starts=starts, sizes=sizes, method="percentile")
    cl = bootstrap_moments(e, u, {"ZMS": (zms, ("Z2",))}, clusters=codes, **kw)["ZMS"]
    pt = bootstrap_moments(e, u, {"ZMS": (zms, ("Z2",))}, **kw)["ZMS"]
    np.testing.assert_allclose(cl.se / pt.se, np.sqrt(1 + (m - 1) * rho**2), rtol=0.12)


def test_the_null_keeps_the_groups_and_their_correlation():
    ds = _structures(100, 30, 0.5, seed=4)
    loc = _quiet(uqviz.local_calibration, ds, n_bins=5, n_boot=200, n_mc=100, rng=6)
    z = ds["E"].values / ds["uE"].values
    icc = intraclass_correlation(z, group_codes(ds["group"].values)[0])
    assert loc.attrs["z_intraclass"] == pytest.approx(icc) and 0.35 < icc < 0.65
    # the cluster bootstrap is about right on correlated calibrated bins: the null says so
    assert 0.75 < float(loc["null_coverage"].mean()) <= 1.0
    fv = _quiet(uqviz.fraction_valid, loc)
    assert np.isfinite(float(fv["estimate"])) and np.isfinite(float(fv["reference"]))


def test_student_t_intervals_of_grouped_points_are_cluster_robust():
    # LZM (the report's) with groups: mean +- t(G_b - 1) sqrt(sum_g (S_g - n_g zbar)^2) / n
    from scipy import stats

    ds = _structures(20, 10, 0.3, seed=5)
    loc = _quiet(
        uqviz.local_calibration, ds, statistic="ZM", method="student-t", n_mc=0, n_bins=2, rng=0
    )
    order = np.argsort(ds["uE"].values, kind="stable")
    z = (ds["E"].values / ds["uE"].values)[order]
    g = ds["group"].values[order]
    for b, (s, n) in enumerate(zip([0, 100], [100, 100])):
        zb, gb = z[s : s + n], g[s : s + n]
        mean = zb.mean()
        sums = np.array([zb[gb == k].sum() - (gb == k).sum() * mean for k in np.unique(gb)])
        half = stats.t.ppf(0.975, np.unique(gb).size - 1) * np.sqrt(np.sum(sums**2)) / n
        assert float(loc["ci_upper"][b]) == pytest.approx(mean + half, rel=1e-10)


def test_ungrouped_results_say_nothing_of_groups():
    # the numbers of ungrouped data are pinned by the module's own tests; no group attrs here
    ds = _structures(30, 10, 0.3, seed=6).drop_vars("group")
    a = _quiet(uqviz.local_calibration, ds, n_bins=3, n_boot=100, n_mc=20, rng=1)
    assert "n_groups" not in a.attrs and "z_intraclass" not in a.attrs
