"""Adversarial groups: uncertainty-toolbox's form on its own groups, the share of valid groups
by hand and against independent per-group bootstraps, the verdict on calibrated and
miscalibrated data, seeding, errors."""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr
from scipy import stats

import uqviz
from tests.conftest import PeerFixtures
from uqviz.average.tails import tail_fit
from uqviz._array import groups as groups_kernels
from uqviz._array.binomial import wilson_interval
from uqviz.engine.warning_classes import UnreliableWarning
from uqviz._array.bootstrap import bootstrap_moments
from uqviz._array.resample import group_seeds
from uqviz.engine import seeds
from uqviz.engine.statistics import get_statistic

PEER = PeerFixtures("groups")
AGC = sorted(PEER.meta["agc"])
TOL = dict(rtol=1e-9, atol=1e-12)
FAST = dict(n_groups=60, n_boot=200, n_mc=10, progress=False)


def _calibrated(m=2000, seed=0, scale=1.0):
    rng = np.random.default_rng(seed)
    u = np.exp(rng.normal(0.0, 0.5, m))
    return uqviz.from_arrays(scale * u * rng.standard_normal(m), u)


# ------------------------------------------------------------------------------------------
# uncertainty-toolbox's form
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("case", AGC)
def test_agc_equals_uncertainty_toolbox_on_its_groups(case):
    c = PEER.meta["agc"][case]
    inp = PEER.inputs("agc", case)
    ds = uqviz.from_arrays(inp["y_true"] - inp["y_pred"], inp["y_std"])
    groups = [PEER.output("agc", case, f"groups/r{k}") for k in range(c["num_group_bins"])]
    for prop in ("interval", "quantile"):
        for stat, cali in (("MACE", "mean_abs"), ("RMSCE", "root_mean_sq")):
            res = uqviz.adversarial_group_calibration(
                ds, statistic=stat, proportions=prop, groups=groups
            )
            pre = f"{cali}/{prop}/"
            np.testing.assert_allclose(
                res["group_score"], PEER.output("agc", case, pre + "group_scores"), **TOL
            )
            np.testing.assert_allclose(
                res["worst_score"], PEER.output("agc", case, pre + "worst"), **TOL
            )
            want = c["results"][f"{cali}/{prop}"]
            np.testing.assert_allclose(res["worst_mean"], want["score_mean"], **TOL)
            np.testing.assert_allclose(res["worst_sd"], want["score_stderr"], **TOL)
            assert res["group_size"].values.tolist() == c["group_sizes"]
            np.testing.assert_allclose(res["fraction"], c["fractions"], **TOL)


def test_draw_groups_uniform_without_replacement():
    """Each point enters a group of s among m with probability s/m; no repeats."""
    for size in (5, 15):  # the chosen points, or the complement of those left out
        g = groups_kernels.draw_groups(3, 20, size, 20000)
        assert all(np.unique(r).size == size for r in g[:500])
        freq = np.bincount(g.ravel(), minlength=20) / 20000
        p = size / 20
        np.testing.assert_allclose(freq, p, atol=4 * np.sqrt(p * (1 - p) / 20000))
    g = groups_kernels.draw_groups(3, 20, 5, 20000)
    np.testing.assert_array_equal(g, groups_kernels.draw_groups(3, 20, 5, 20000))
    w = groups_kernels.draw_groups(4, 7, 30, 2000, replace=True)
    np.testing.assert_allclose(np.bincount(w.ravel(), minlength=7) / w.size, 1 / 7, atol=0.005)
    assert w.min() == 0 and w.max() == 6


def test_agc_numpy_kernel_equals_numba_and_draws_its_own_groups():
    ds = _calibrated(3000, seed=3, scale=1.3)
    z = -ds["E"].values / ds["uE"].values
    p = np.linspace(0, 1, 100)
    t = groups_kernels.level_thresholds(z, stats.norm.ppf(0.5 - p / 2), stats.norm.ppf(0.5 + p / 2))
    idx = np.random.default_rng(1).integers(0, 3000, (7, 250))
    a = groups_kernels.group_curve_errors(t, idx, 100, engine="numba")
    b = groups_kernels.group_curve_errors(t, idx, 100, engine="numpy")
    np.testing.assert_allclose(a, b, rtol=1e-12)
    for size in (40, 2900):  # a group drawn and scored at once is the group drawn
        drawn = groups_kernels.drawn_curve_errors(9, t, size, 5, 100)
        alone = groups_kernels.group_curve_errors(
            t, groups_kernels.draw_groups(9, 3000, size, 5), 100
        )
        np.testing.assert_allclose(drawn, alone, rtol=1e-12)
    r1 = uqviz.adversarial_group_calibration(
        ds, num_group_bins=4, num_trials=3, num_group_draws=2, rng=5
    )
    r2 = uqviz.adversarial_group_calibration(
        ds, num_group_bins=4, num_trials=3, num_group_draws=2, rng=5
    )
    xr.testing.assert_identical(r1, r2)
    assert r1["group_size"].values.tolist() == [2, 1000, 2000, 3000]
    # the whole set (without replacement) is one group: its MACE is calibration_curve's
    whole = uqviz.calibration_curve(uqviz.from_arrays(ds["E"].values, ds["uE"].values))
    assert float(r1["worst_mean"][-1]) == pytest.approx(float(whole["mace"]), rel=1e-9)
    assert float(r1["worst_sd"][-1]) == pytest.approx(0.0, abs=1e-15)


# ------------------------------------------------------------------------------------------
# adversarial validation
# ------------------------------------------------------------------------------------------


def _streams(rng, n_sizes):
    """The streams of one Dataset's call (docs: groups, simulated sets, bootstraps)."""
    child = seeds.spawn(rng, 1)[0]
    group_rng, sim_rng, boot_rng, ref_rng = seeds.spawn(child, 4)
    return (
        [seeds.kernel_seed(r) for r in seeds.spawn(group_rng, n_sizes)],
        sim_rng,
        [seeds.kernel_seed(r) for r in seeds.spawn(boot_rng, n_sizes)],
    )


def test_share_by_hand_and_per_group_bootstrap():
    """Per group: the ZMS of its points, the interval of an independent bootstrap of that
    group alone with its own seed; the share counts the intervals holding 1."""
    ds = _calibrated(400, seed=1, scale=1.2)
    e, u = ds["E"].values, ds["uE"].values
    sizes, g_n = (40, 12), 6
    res = uqviz.adversarial_validation(
        ds, sizes=sizes, n_groups=g_n, n_boot=300, n_mc=3, rng=7, progress=False
    )
    group_draws, _, boot_seeds = _streams(7, len(sizes))
    zms = get_statistic("ZMS")
    for i, s in enumerate(sizes):
        gseeds = group_seeds(boot_seeds[i], g_n)
        groups = groups_kernels.draw_groups(group_draws[i], 400, s, g_n)
        valid = []
        for g in range(g_n):
            idx = groups[g]
            assert np.unique(idx).size == s
            z2 = (e[idx] / u[idx]) ** 2
            assert float(res["estimate"][i, g]) == pytest.approx(z2.mean(), rel=1e-12)
            alone = bootstrap_moments(
                e[idx], u[idx], {"ZMS": (zms.func, zms.columns)}, n_boot=300, seed=gseeds[g : g + 1]
            )["ZMS"]
            assert float(res["ci_lower"][i, g]) == pytest.approx(alone.lower[0], rel=1e-12)
            assert float(res["ci_upper"][i, g]) == pytest.approx(alone.upper[0], rel=1e-12)
            valid.append(alone.lower[0] <= 1.0 <= alone.upper[0])
        assert res["valid"][i].values.tolist() == valid
        assert int(res["n_valid"][i]) == sum(valid)
        assert float(res["share_valid"][i]) == sum(valid) / g_n
        lo, hi = wilson_interval(sum(valid), g_n, ci=0.95, continuity=True)
        assert float(res["share_valid_lower"][i]) == pytest.approx(float(lo))
        assert float(res["share_valid_upper"][i]) == pytest.approx(float(hi))


def test_picp_share_and_band_by_hand():
    """PICP: the coverage of each group by counting, the band from the per-set shares."""
    ds = _calibrated(300, seed=2)
    e, u = ds["E"].values, ds["uE"].values
    res = uqviz.adversarial_validation(
        ds, statistic="PICP", sizes=(30,), n_groups=8, n_mc=4, rng=3, progress=False, level=0.9
    )
    group_draws, sim_rng, _ = _streams(3, 1)
    q = stats.norm.ppf(0.95)
    sim = u[None, :] * sim_rng.standard_normal((4, 300))
    groups = groups_kernels.draw_groups(group_draws[0], 300, 30, 8)
    ok, ref_ok = [], []
    for g in range(8):
        idx = groups[g]
        k = int(np.sum(np.abs(e[idx] / u[idx]) <= q))
        assert float(res["estimate"][0, g]) == k / 30
        lo, hi = wilson_interval(k, 30, ci=0.95, continuity=True)
        ok.append(lo <= 0.9 <= hi)
        ks = int(np.sum(np.abs(sim[g // 2, idx] / u[idx]) <= q))  # blocks of 2 groups
        assert float(res["reference_estimate"][0, g]) == ks / 30
        lo, hi = wilson_interval(ks, 30, ci=0.95, continuity=True)
        ref_ok.append(lo <= 0.9 <= hi)
    ref_ok = np.array(ref_ok, dtype=float)
    shares = ref_ok.reshape(4, 2).mean(axis=1)
    pooled = ref_ok.mean()
    p_adj = (ref_ok.sum() + 0.5) / 9
    sd = np.sqrt(max(np.var(shares, ddof=1), p_adj * (1 - p_adj) * 4 / 8) * (1 + 1 / 4))
    assert float(res["share_valid"][0]) == np.mean(ok)
    assert float(res["reference_share"][0]) == pytest.approx(pooled)
    lower = pooled - stats.t.ppf(0.95, 3) * sd
    assert float(res["reference_share_lower"][0]) == pytest.approx(max(lower, 0.0))
    assert float(res["p_value"][0]) == pytest.approx(stats.t.cdf((np.mean(ok) - pooled) / sd, 3))
    assert bool(res["below_band"][0]) == (np.mean(ok) < lower)


@pytest.mark.parametrize("statistic", ["ZMS", "PICP", "MACE"])
def test_calibrated_passes_and_scale_fails(statistic):
    kw = dict(FAST, n_groups=100, statistic=statistic, rng=11)
    good = uqviz.adversarial_validation(_calibrated(2000, seed=4), **kw)
    bad = uqviz.adversarial_validation(_calibrated(2000, seed=4, scale=1.3), **kw)
    assert good["size"].values.tolist() == [1000, 500, 250, 125, 62, 31, 16]
    assert str(good["verdict"].values) == "OK" and not bool(good["below_band"].any())
    assert str(bad["verdict"].values) == "fails"
    assert bool((bad["share_valid"] < good["share_valid"]).all())
    # Holm: the verdict fails exactly when an adjusted p-value is at most 1 - ci
    assert bool((bad["p_adjusted"] <= 0.05).any()) and bool((good["p_adjusted"] > 0.05).all())
    np.testing.assert_array_equal(bad["below_band"], bad["p_value"] < 0.05)


def _t3(m=2000, seed=12, scale=1.0):
    rng = np.random.default_rng(seed)
    u = np.sqrt(1.0 / rng.gamma(3.0, 1.0, m))
    return uqviz.from_arrays(scale * u * rng.standard_t(3, m) / np.sqrt(3.0), u)


def test_heavy_tails_widen_the_zone_of_doubt():
    # calibrated t3 errors (variance 1): beta_GM(Z^2) above its safety limit of Pernot (2024b),
    # Table II. The reference curve is then simulated with calibrated Student-t z-scores as
    # heavy-tailed as the data's (issue 36): the verdict reads "unreliable" (never "OK") when
    # the shares stay within its band, "fails" for uE twice too small
    ds = _t3()
    tail = uqviz.tailedness(ds)
    assert bool(tail["heavy_tail"].sel(variable="Z2"))
    df_lower = tail_fit(ds["E"].values, ds["uE"].values)[1][0]  # validate_average's
    for statistic in ("ZMS", "PICP"):
        kw = dict(FAST, n_groups=50, sizes=(500, 100), statistic=statistic, rng=3)
        res = uqviz.adversarial_validation(ds, **kw)
        assert str(res["verdict"].values) == "unreliable" and not bool(res["reliable"])
        assert "tailedness screen" in str(res["reason"].values)
        assert float(res["tail_df_lower"]) == pytest.approx(float(df_lower))
        assert f"D = t{float(df_lower):.3g}" in str(res["reason"].values)
        bad = uqviz.adversarial_validation(_t3(scale=2.0), **kw)
        assert str(bad["verdict"].values) == "fails" and not bool(bad["reliable"])
        assert "larger than such tails explain" in str(bad["reason"].values)
    good = uqviz.adversarial_validation(
        _calibrated(2000, seed=4), **dict(FAST, n_groups=50, sizes=(500, 100), rng=3)
    )
    assert bool(good["reliable"]) and "tailedness" not in str(good["reason"].values)
    assert np.isnan(float(good["tail_df_lower"]))


def test_tail_reference_curve_is_a_direct_student_t_simulation():
    """Under a failed screen, the reference sets are uE times unit-variance t draws of
    tail_df_lower (3 significant digits) degrees of freedom, from the simulation stream."""
    ds = _t3(300, seed=5)
    e, u = ds["E"].values, ds["uE"].values
    assert bool(uqviz.tailedness(ds)["heavy_tail"].sel(variable="Z2"))
    res = uqviz.adversarial_validation(
        ds, statistic="PICP", sizes=(30,), n_groups=8, n_mc=4, rng=3, progress=False, level=0.9
    )
    nu = float(f"{max(float(res['tail_df_lower']), 2.1):.3g}")
    group_draws, sim_rng, _ = _streams(3, 1)
    sim = u[None, :] * sim_rng.standard_t(nu, (4, 300)) * np.sqrt((nu - 2.0) / nu)
    q = stats.norm.ppf(0.95)  # the intervals stay those of the D given (normal)
    groups = groups_kernels.draw_groups(group_draws[0], 300, 30, 8)
    for g in range(8):
        idx = groups[g]
        assert float(res["estimate"][0, g]) == np.mean(np.abs(e[idx] / u[idx]) <= q)
        ks = int(np.sum(np.abs(sim[g // 2, idx] / u[idx]) <= q))  # blocks of 2 groups
        assert float(res["reference_estimate"][0, g]) == ks / 30


def test_tail_reference_keeps_a_heavier_D():
    from uqviz.data.generative import get_generative
    from uqviz.groups.adversarial import tail_reference

    assert tail_reference(get_generative("t3"), 4.0).name == "t3"
    assert tail_reference(get_generative("t6"), 4.0).name == "t4"
    assert tail_reference(get_generative("normal"), 2.05).name == "t2.1"
    assert tail_reference(get_generative("normal"), float("nan")) is None


def test_reference_curve_uses_uE_only():
    # with the tail screen passed (under a failed one it also reads the shape of the z-scores,
    # tail_df_lower: test_tail_reference_curve_is_a_direct_student_t_simulation); -2 E: the
    # z-scores have the same shape
    a = _calibrated(500, seed=5)
    b = a.assign(E=("point", -2.0 * a["E"].values))
    assert not uqviz.tailedness(b)["heavy_tail"].sel(variable="Z2")
    kw = dict(FAST, sizes=(100, 20), rng=2)
    ra, rb = uqviz.adversarial_validation(a, **kw), uqviz.adversarial_validation(b, **kw)
    for v in (
        "reference_estimate",
        "reference_share",
        "reference_share_lower",
        "reference_share_upper",
    ):
        xr.testing.assert_equal(ra[v], rb[v])
    assert not np.allclose(ra["estimate"], rb["estimate"])


def test_same_rng_same_numbers_and_a_tree():
    ds = _calibrated(400, seed=6)
    kw = dict(FAST, sizes=(50, 12), rng=np.random.SeedSequence(4))
    r1, r2 = uqviz.adversarial_validation(ds, **kw), uqviz.adversarial_validation(ds, **kw)
    xr.testing.assert_identical(r1, r2)
    r3 = uqviz.adversarial_validation(ds, **dict(kw, rng=5))
    assert not np.array_equal(r1["estimate"], r3["estimate"])
    tree = xr.DataTree.from_dict({"a": ds, "b": _calibrated(300, seed=7)})
    rt = uqviz.adversarial_validation(tree, **kw)
    assert rt["dataset"].values.tolist() == ["a", "b"]
    xr.testing.assert_equal(rt.sel(dataset="a").drop_vars("dataset")["estimate"], r1["estimate"])


def test_local_client_gives_the_numbers_of_threads():
    pytest.importorskip("dask.distributed")
    ds = _calibrated(300, seed=8)
    kw = dict(FAST, sizes=(40,), n_groups=20, rng=1)
    here = uqviz.adversarial_validation(ds, **kw)
    there = uqviz.adversarial_validation(ds, **kw, client="local")
    xr.testing.assert_identical(here, there)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(sizes=(5, 50)), r"between 10 and M = 400.*\[5\] below 10"),
        (dict(sizes=(50, 401)), r"\[401\] above M = 400"),
        (dict(sizes=(50, 50)), "distinct"),
        (dict(n_groups=0), "n_groups"),
        (dict(n_groups=5, n_mc=10), r"n_groups = 5 is below n_mc = 10"),
        (dict(statistic="ENCE"), "MACE"),
        (dict(level=0.9), "level"),
    ],
)
def test_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        uqviz.adversarial_validation(_calibrated(400), **dict(FAST, **kwargs))


def test_errors_of_data_and_groups():
    with pytest.raises(ValueError, match=r"too few points.*M = 15.*M >= 20"):
        uqviz.adversarial_validation(_calibrated(15), **FAST)
    ds = _calibrated(50)
    with pytest.raises(ValueError, match=r"groups\[0\]: 12 row number\(s\) outside 0..49"):
        uqviz.adversarial_group_calibration(ds, groups=[np.full((2, 2, 3), 50)])
    with pytest.raises(ValueError, match="num_trials = 3 disagrees"):
        uqviz.adversarial_group_calibration(ds, groups=[np.zeros((2, 2, 3), int)], num_trials=3)
    with pytest.raises(ValueError, match="statistic"):
        uqviz.adversarial_group_calibration(ds, statistic="ZMS")


def test_adversarial_curves_plot():
    import matplotlib.pyplot as plt

    from uqviz.plots.groups import adversarial_curves

    res = uqviz.adversarial_validation(_calibrated(400), **dict(FAST, sizes=(100, 25), rng=0))
    ax = adversarial_curves(res)
    assert ax.get_xscale() == "log"
    ys = [line.get_ydata() for line in ax.get_lines()]
    res = res.sortby("size")  # drawn from the smallest size
    assert any(np.allclose(y, res["share_valid"]) for y in ys)
    assert any(np.allclose(y, res["reference_share"]) for y in ys)
    plt.close("all")
    with pytest.raises(TypeError):
        adversarial_curves("not a result")
    with pytest.raises(ValueError, match="reference_share"):
        adversarial_curves(res.drop_vars("reference_share"))


def test_no_group_interval_computed_is_not_tested():
    """Issue 38, item 9: all-zero errors give no group interval (degenerate bootstraps): the
    verdict is "not tested" with its reason, never "OK" or "fails"."""
    ds = uqviz.from_arrays(np.zeros(200), np.ones(200))
    with pytest.warns(UnreliableWarning, match="could not be computed"):
        res = uqviz.adversarial_validation(ds, n_groups=40, n_boot=200, rng=0)
    assert str(res["verdict"].values) == "not tested"
    assert "none of the 160 group intervals" in str(res["reason"].values)
