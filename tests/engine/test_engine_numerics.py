"""Numerical robustness of the engine: any float64 scale, tiny sets, degenerate bootstraps,
option checks of the bootstrap, the tree dispatch and the block runner."""

import numpy as np
import pytest
import xarray as xr

import uqviz
from uqviz._array import bca
from uqviz._array import stats as ks
from uqviz._array.bootstrap import _moment_jackknife_accel
from uqviz._array.resample import binned_resample_sums, resample_sums
from uqviz.engine import seeds
from uqviz.engine.bootstrap import bootstrap_statistics, check_points
from uqviz.engine.parallel import run_blocks
from uqviz.engine.statistics import point_estimate
from uqviz.engine.tree import datasets_of, map_datasets

SCALE_FREE = ("ZMS", "ZM", "ZVar", "RCE", "RCE2", "NLL_ref", "ENCE", "ZMSE", "CC")
SCALES = (1e-300, 1e-200, 1e-150, 1e150, 1e155, 1e300)


def _data(m=300, seed=0):
    rng = np.random.default_rng(seed)
    u = rng.uniform(0.5, 2.0, m)
    return u * rng.standard_normal(m), u


@pytest.mark.parametrize("scale", SCALES)
@pytest.mark.parametrize("name", [s for s in SCALE_FREE if s != "NLL_ref"])
def test_scale_free_statistics_are_exact_at_any_scale(name, scale):
    e, u = _data()
    ref = float(point_estimate(name, e, u, n_bins=10))
    got = float(point_estimate(name, e * scale, u * scale, n_bins=10))
    assert np.isfinite(got)
    assert got == pytest.approx(ref, rel=1e-12, abs=1e-14)


@pytest.mark.parametrize("scale", SCALES)
def test_scale_dependent_statistics_undo_the_scale(scale):
    e, u = _data()
    for name, power in (("RMSE", 1), ("RMV", 1), ("MSE", 2), ("MV", 2), ("UCE", 2)):
        ref = float(point_estimate(name, e, u, n_bins=10))
        if -300 < power * np.log10(scale) < 300:
            got = float(point_estimate(name, e * scale, u * scale, n_bins=10))
            assert got == pytest.approx(ref * scale**power, rel=1e-12)
        elif not -307 < power * np.log10(scale) < 308:
            # a moment statistic float64 cannot hold is an error, not inf or 0
            with pytest.raises(ValueError, match=f"{name} (over|under)flows float64"):
                point_estimate(name, e * scale, u * scale, n_bins=10)
    assert float(point_estimate("RMSE", e * scale, u * scale)) == pytest.approx(
        float(np.sqrt(np.mean(e**2))) * scale, rel=1e-12
    )


def test_power_of_two_rescaling_is_exact():
    # scaled columns are the plain squares divided by 4**k: bit-identical ratios
    e, u = _data()
    k = 3
    cols0 = ks.columns(e, u, ("E2", "V"))
    cols3 = ks.columns(e, u, ("E2", "V"), log2_scale=k)
    np.testing.assert_array_equal(cols3 * 4.0**k, cols0)
    assert ks.log2_scale(e, u) == 0  # ordinary data are not rescaled
    assert ks.log2_scale(e * 1e155, u * 1e155) > 500
    assert ks.log2_scale(e * 1e-300, u * 1e-300) < -900


@pytest.mark.parametrize("scale", [1e-300, 1e155])
def test_bootstrap_intervals_at_extreme_scales(scale):
    e, u = _data(200, 3)
    names = ["ZMS", "RCE", "RMSE"]
    ref = bootstrap_statistics(e, u, names, n_boot=500, rng=4)
    got = bootstrap_statistics(e * scale, u * scale, names, n_boot=500, rng=4)
    for name, factor in (("ZMS", 1.0), ("RCE", 1.0), ("RMSE", scale)):
        r, g = ref[name], got[name]
        assert not g.degenerate[0]
        assert g.estimate[0] == pytest.approx(r.estimate[0] * factor, rel=1e-9)
        assert g.lower[0] == pytest.approx(r.lower[0] * factor, rel=1e-9)
        assert g.upper[0] == pytest.approx(r.upper[0] * factor, rel=1e-9)


def test_binned_bootstrap_at_extreme_scale():
    e, u = _data(200, 5)
    ref = bootstrap_statistics(e, u, ["ENCE", "RCE"], n_boot=300, rng=1, n_bins=5)
    got = bootstrap_statistics(e * 1e155, u * 1e155, ["ENCE", "RCE"], n_boot=300, rng=1, n_bins=5)
    for name in ("ENCE", "RCE"):
        assert got[name].lower[0] == pytest.approx(ref[name].lower[0], rel=1e-9)
        assert got[name].upper[0] == pytest.approx(ref[name].upper[0], rel=1e-9)


def test_unrepresentable_results_raise_naming_the_statistic():
    e, u = _data(50)
    with pytest.raises(ValueError, match="MSE overflows float64"):
        bootstrap_statistics(e * 1e155, u * 1e155, ["MSE"], n_boot=100, rng=0)
    with pytest.raises(ValueError, match="MV underflows float64"):
        bootstrap_statistics(e * 1e-300, u * 1e-300, ["MV"], n_boot=100, rng=0)
    with pytest.raises(ValueError, match="UCE overflows float64"):
        bootstrap_statistics(e * 1e155, u * 1e155, ["UCE"], n_boot=100, rng=0, n_bins=5)
    m = ks.column_means(e * 1e155, u * 1e155, ("E2",))
    with pytest.raises(ValueError, match="MSE overflows"):
        ks.evaluate("MSE", ks.mse, m, 50)


def test_acceleration_is_exact_for_huge_jackknife_values():
    jack = np.array([1.0, 2.0, 4.0, 2.5])
    a = bca.acceleration(jack)
    assert np.isfinite(a)
    for s in (1e300, 1e-300, 2.0**1000):
        assert bca.acceleration(jack * s) == pytest.approx(a, rel=1e-12)
    assert np.isnan(bca.acceleration(np.array([1.0, np.inf, 2.0])))
    d = np.mean(jack) - jack
    assert bca.acceleration_from_sums(np.sum(d**2), np.sum(d**3)) == pytest.approx(a, rel=1e-14)


def test_moment_jackknife_at_scale_equals_unscaled():
    e, u = _data(80, 2)
    names = ("E2", "V")
    base = _moment_jackknife_accel(
        ks.columns(e, u, names), names, ks.rmse, np.array([0, 30]), np.array([30, 50])
    )
    k = ks.log2_scale(e * 1e155, u * 1e155)
    big = _moment_jackknife_accel(
        ks.columns(e * 1e155, u * 1e155, names, k),
        names,
        ks.rmse,
        np.array([0, 30]),
        np.array([30, 50]),
        k,
    )
    np.testing.assert_allclose(big, base, rtol=1e-9)


def test_tiny_sets():
    with pytest.raises(
        ValueError, match=r"data: the bootstrap needs at least 2 points \(E, uE\), got M = 1"
    ):
        bootstrap_statistics([1.0], [1.0], ["ZMS"], n_boot=100, rng=0)
    with pytest.raises(ValueError, match="M = 0"):
        bootstrap_statistics([], [], ["ZMS"], n_boot=100, rng=0)
    for stats in (["ZMS", "RCE", "ZM"], ["CC"]):
        res = bootstrap_statistics([0.3, -1.2], [1.0, 2.0], stats, n_boot=200, rng=0)
        for r in res.values():
            # an interval or NaN flagged degenerate: never inf
            assert not np.any(np.isinf(r.lower)) and not np.any(np.isinf(r.upper))
            assert np.array_equal(r.degenerate, np.isnan(r.lower))
            zeta, valid = bca.verdict(r.estimate, 1.0, r.lower, r.upper)
            assert not np.any(np.isinf(zeta))
            assert not np.any(valid & r.degenerate)


def test_all_zero_errors_and_constant_statistics_are_degenerate():
    res = bootstrap_statistics(np.zeros(30), np.ones(30), ["ZMS", "RCE"], n_boot=200, rng=0)
    for name, est in (("ZMS", 0.0), ("RCE", 1.0)):
        r = res[name]
        assert r.estimate[0] == est
        assert r.degenerate[0] and np.isnan(r.lower[0]) and np.isnan(r.upper[0])
        assert not bca.verdict(r.estimate, 1.0, r.lower, r.upper)[1][0]
    for method in ("percentile", "basic"):
        r = bootstrap_statistics(
            np.zeros(30), np.ones(30), ["ZMS"], n_boot=200, rng=0, method=method
        )["ZMS"]
        assert r.degenerate[0]


def test_undefined_statistics_are_errors():
    e, u = _data(40)
    with pytest.raises(ValueError, match="CC .* undefined: uE is constant"):
        bootstrap_statistics(e, np.ones(40), ["CC"], n_boot=100, rng=0)
    with pytest.raises(ValueError, match=r"CC .* undefined: \|E\| is constant"):
        bootstrap_statistics(np.full(40, 0.5), u, ["CC"], n_boot=100, rng=0)
    e0 = e.copy()
    e0[np.argsort(u)[:8]] = 0.0  # the lowest-uE bin holds zero errors: ln ZMS_b = -inf
    with pytest.raises(ValueError, match="ZMSE is not finite"):
        bootstrap_statistics(e0, u, ["ZMSE"], n_boot=100, rng=0, n_bins=5)


def test_bad_points_are_counted():
    with pytest.raises(ValueError, match="1 point"):
        check_points([1.0, 1.0, 2.0], [1.0, 5e-324, 1.0])
    with pytest.raises(ValueError, match="2 point.* non-finite E, 1 with"):
        check_points([np.nan, np.inf, 1.0], [1.0, 1.0, -1.0])
    with pytest.raises(ValueError, match="same length"):
        check_points([1.0, 2.0], [1.0])


@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        ({"n_boot": 1}, ValueError, "n_boot must be >= 2"),
        ({"n_boot": 2.5}, ValueError, "n_boot must be a whole number"),
        ({"n_boot": True}, TypeError, "n_boot must be an integer"),
        ({"ci": 1.5}, ValueError, "ci must be in"),
        ({"method": "studentized"}, ValueError, "method must be one of"),
        ({"rng": np.random.RandomState(0)}, TypeError, "rng must be"),
        ({"engine": "cuda"}, ValueError, "engine must be one of"),
    ],
)
def test_bootstrap_option_checks(kwargs, exc, match):
    e, u = _data(20)
    with pytest.raises(exc, match=match):
        bootstrap_statistics(e, u, ["ZMS"], **{"n_boot": 100, **kwargs})


def test_bootstrap_statistics_and_bins_checks():
    e, u = _data(20)
    with pytest.raises(ValueError, match="at least one"):
        bootstrap_statistics(e, u, [], n_boot=100)
    with pytest.raises(ValueError, match="distinct"):
        bootstrap_statistics(e, u, ["ZMS", "ZMS"], n_boot=100)
    with pytest.raises(ValueError, match=r"n_bins = 11 .* M = 20"):
        bootstrap_statistics(e, u, ["ENCE"], n_boot=100, n_bins=11)
    with pytest.raises(TypeError, match="n_bins"):
        bootstrap_statistics(e, u, ["ENCE"], n_boot=100, n_bins="5")
    res = bootstrap_statistics(e, u, "ZMS", n_boot=2, rng=0)["ZMS"]  # smallest n_boot
    assert np.all(np.isfinite(res.lower) | res.degenerate)


def test_the_issue_outlier_case_is_not_valid():
    # E = [3]*199 + [1e12], uE = 1: ZMS = 5e21, CI [9, 2e22], reference 1 outside
    e = np.r_[np.full(199, 3.0), 1e12]
    r = bootstrap_statistics(e, np.ones(200), ["ZMS"], n_boot=2000, rng=0)["ZMS"]
    zeta, valid = bca.verdict(r.estimate, 1.0, r.lower, r.upper)
    assert r.estimate[0] == pytest.approx(5e21, rel=1e-3)
    assert not valid[0] and zeta[0] > 1.0


def test_one_rng_step_for_both_resampling_kernels():
    # the same seed draws the same points in the grouped and the re-binned kernels
    cols = np.arange(60.0).reshape(30, 2)
    for engine in ("numba", "numpy"):
        a = resample_sums(cols, 70, 9, engine=engine)[0]
        b = binned_resample_sums(cols, [0, 30], 70, 9, engine=engine)[:, 0, :]
        np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match="n_boot must be a whole number"):
        resample_sums(cols, 2.5, 1)
    with pytest.raises(TypeError, match="n_boot"):
        binned_resample_sums(cols, [0, 30], True, 1)


def test_tree_children_get_spawned_streams_and_need_e_and_ue():
    a = uqviz.from_arrays([0.1, -0.3, 0.2], [0.2, 0.3, 0.1])
    tree = xr.DataTree.from_dict({"a": a, "b": a})

    def draw(ds, *, rng):
        return xr.Dataset({"x": rng.integers(0, 2**62)})

    got = map_datasets(draw, tree, rng=5)["x"].values.tolist()
    assert got == [int(g.integers(0, 2**62)) for g in seeds.spawn(5, 2)]
    bad = xr.DataTree.from_dict({"a": a, "b": a.drop_vars("uE")})
    with pytest.raises(TypeError, match="'b' lacks uE"):
        datasets_of(bad)
    with pytest.raises(TypeError, match="'b' lacks uE"):
        map_datasets(draw, bad)
    assert len(datasets_of(bad, variables=None)) == 2
    with pytest.raises(TypeError, match="expected an xarray.Dataset"):
        datasets_of({"E": [1.0]})


def test_run_blocks_checks_client_and_count():
    assert run_blocks(lambda b: b, 0) == []
    with pytest.raises(ValueError, match="client must be"):
        run_blocks(lambda b: b, 2, client="cluster")
    with pytest.raises(TypeError, match="client must be"):
        run_blocks(lambda b: b, 2, client=object())
    with pytest.raises(ValueError, match="n_blocks"):
        run_blocks(lambda b: b, -1)


def test_array_kernels_do_not_import_xarray():
    import ast
    import pathlib

    root = pathlib.Path(uqviz.__file__).parent / "_array"
    for path in root.glob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            assert not any(n.split(".")[0] == "xarray" for n in names), path.name


def test_chunked_leave_one_out_binned_values_equal_the_whole_array():
    # the BCa acceleration of ENCE/ZMSE: jackknife values computed chunk by chunk (memory
    # O(chunk x bins)) equal those of the full (M, n_bins, k) array
    from uqviz._array import binned as kbin

    rng = np.random.default_rng(4)
    cols = rng.gamma(2.0, size=(20_001, 2))
    whole = kbin.loo_binned_means(cols, 37)
    func = lambda b: np.abs(np.log(b[..., 0] / b[..., 1])).mean(axis=-1)  # noqa: E731
    np.testing.assert_array_equal(kbin.loo_binned_values(cols, 37, func), func(whole))


def test_progress_none_follows_the_uqviz_progress_variable(monkeypatch):
    """progress=None: UQVIZ_PROGRESS=0 hides the bars (executed notebooks, docs), =1 shows them."""
    from uqviz.engine.parallel import show_progress

    monkeypatch.setenv("UQVIZ_PROGRESS", "0")
    assert show_progress(None) is False and show_progress(True) is True
    monkeypatch.setenv("UQVIZ_PROGRESS", "1")
    assert show_progress(None) is True and show_progress(False) is False


def test_a_seed_sequence_is_not_consumed():
    # issue 22 item 7: spawning from a SeedSequence passed as rng advanced the caller's
    # object (n_children_spawned 0 -> 1): the next call with it gave other numbers
    ss = np.random.SeedSequence(12345)
    assert [int(g.integers(2**62)) for g in seeds.spawn(ss, 3)] == [
        int(g.integers(2**62)) for g in seeds.spawn(ss, 3)
    ]
    assert ss.n_children_spawned == 0
    assert int(seeds.kernel_seed(ss)) == int(seeds.kernel_seed(ss))
    e, u = _data(200)
    ds = uqviz.from_arrays(e, u)
    calls = [
        lambda r: uqviz.validate_average(ds, statistics="ZMS", n_boot=50, rng=r),
        lambda r: uqviz.local_calibration(ds, n_bins=2, n_boot=50, n_mc=0, rng=r),
        lambda r: uqviz.simulated_reference(ds, statistic="ENCE", n_mc=20, n_bins=2, rng=r),
    ]
    for call in calls:
        first = call(ss)
        assert ss.n_children_spawned == 0
        xr.testing.assert_identical(first, call(ss))
        xr.testing.assert_identical(first, call(np.random.SeedSequence(12345)))


def test_an_error_of_one_datatree_child_names_the_child_once():
    # issue 22 item 7: with one bad child, 22 functions named the rows but not the child
    e, u = _data(200)
    good = uqviz.from_arrays(e, u)
    broken = good.copy(deep=True)
    broken["uE"].values[[3, 5]] = -1.0
    tree = xr.DataTree.from_dict({"good": good, "broken": broken})
    calls = [
        lambda t: uqviz.validate_average(t, n_boot=20, rng=0),
        lambda t: uqviz.local_calibration(t, n_bins=2, n_boot=20, n_mc=0, rng=0),
        uqviz.binned_errors,
        uqviz.tailedness,
        lambda t: uqviz.simulated_reference(t, statistic="ENCE", n_mc=5, rng=0),
        lambda t: uqviz.qce(t, n_boot=0),
        uqviz.nees,
        lambda t: uqviz.decimated(t, fraction=0.1),
        lambda t: uqviz.recalibrate(t, method="scaling", rng=0),
        uqviz.check_dataset,
        lambda t: uqviz.report(t, n_boot=20, n_mc=5, progress=False, figures=False),
    ]
    for call in calls:
        with pytest.raises(ValueError) as err:
            call(tree)
        message = str(err.value)
        assert message.startswith("dataset 'broken': ") and message.count("'broken'") == 1, message
        assert "uE: 2 rows with uE <= 0 (rows 3, 5)" in message
    with pytest.raises(ValueError, match=r"^invalid values"):  # a Dataset: no child to name
        uqviz.validate_average(broken, n_boot=20, rng=0)


def test_client_local_leaves_no_dask_scratch_space(tmp_path):
    # issue 22 item 7: client="local" left dask-scratch-space in the temporary folder
    import os
    import pathlib
    import subprocess
    import sys

    root = pathlib.Path(uqviz.__file__).parents[1]
    code = (
        "import uqviz\n"
        "ds = uqviz.synthetic.nig(300, nu=6, rng=0)\n"
        "uqviz.validate_average(ds, n_boot=50, rng=0, client='local')\n"
        "uqviz.local_calibration(ds, n_bins=2, n_boot=50, n_mc=0, rng=0, client='local')\n"
    )
    env = dict(os.environ, TMPDIR=str(tmp_path), PYTHONPATH=str(root), UQVIZ_PROGRESS="0")
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, cwd=root, timeout=300, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert sorted(p.name for p in tmp_path.iterdir()) == []
    assert "ERROR" not in done.stderr  # the cluster is closed before the interpreter


def test_progress_none_hides_bars_in_an_unattended_kernel(monkeypatch):
    """progress=None in a Jupyter kernel: shown when the front end allows stdin (JupyterLab),
    hidden when an executor (nbclient, nbmake, myst-nb, Voila) runs the cells without stdin,
    so that no closed bar is stored as frozen text in an executed notebook (issue 37)."""
    import ipykernel.kernelbase

    from uqviz.engine.parallel import show_progress

    class Kernel:
        _allow_stdin = True

        @classmethod
        def initialized(cls):
            return True

        @classmethod
        def instance(cls):
            return cls

    monkeypatch.delenv("UQVIZ_PROGRESS", raising=False)
    monkeypatch.setattr(ipykernel.kernelbase, "Kernel", Kernel)
    assert show_progress(None) is True
    monkeypatch.setattr(Kernel, "_allow_stdin", False)
    assert show_progress(None) is False and show_progress(True) is True
    monkeypatch.setenv("UQVIZ_PROGRESS", "1")
    assert show_progress(None) is True
