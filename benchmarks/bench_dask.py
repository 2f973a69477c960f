"""Data of any size (issue 15, items 2-4): CC by counts, the report at 2e6 rows, dask efficiency.

Three parts, each line printed with the load average of the machine (its cores are shared):

1. CC: time per bootstrap replicate and per jackknife group from ranks computed once
   (O(M) each), against the sort-based generic path; time per simulated CC draw (uE
   ranked once, |E*| sorted as 64-bit keys) against ranking both per draw. At 2e6: the
   normal / t6 variates against numpy's samplers, the ENCE/ZMSE resample per replicate,
   the leave-one-out values, and one simulated set shared by ENCE, ZMSE and CC.
2. ``--report``: ``uqviz report`` on a synthetic CSV of ``--rows`` rows (default 2e6), run
   under ``/usr/bin/time -v`` (wall time and maximum resident set); the stages are timed
   apart with ``--stages``.
3. The same call with ``client=None`` (one process, ``UQVIZ_THREADS`` / numba threads) and on
   a ``LocalCluster`` of 2 worker processes of 1 thread: efficiency = t_local(1 thread) /
   (2 t_cluster), and the numbers are checked identical.

Usage::

    python benchmarks/bench_dask.py                 # parts 1 and 3 (a few minutes)
    python benchmarks/bench_dask.py --report        # also part 2 (the 2e6-row report)
    python benchmarks/bench_dask.py --stages --rows 2000000
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

import numpy as np


def load():
    return "load %.2f" % os.getloadavg()[0]


def line(*parts):
    print(" | ".join(str(p) for p in parts) + f" | {load()}", flush=True)


def timed(func, *args, **kwargs):
    t0 = time.perf_counter()
    out = func(*args, **kwargs)
    return time.perf_counter() - t0, out


def bench_cc(m_values, n_boot):
    from uqviz._array import rank as kr
    from uqviz._array import stats as ks
    from uqviz._array.bootstrap import _generic_jackknife, bootstrap_generic

    rng = np.random.default_rng(0)
    for m in (100, 20_000):  # compile the unblocked and the blocked (packed) kernels
        prep = kr.cc_prepare(rng.standard_normal(m), rng.uniform(1, 2, m))
        kr.cc_bootstrap(prep, 40, 1)
        kr.cc_jackknife(prep, np.array([0, 10, m]))
    print("\n## CC (Spearman of |E| and uE): per replicate, per jackknife group, per MC draw")
    for m in m_values:
        u = rng.uniform(0.5, 2.0, m)
        e = u * rng.standard_normal(m)
        t_prep, prep = timed(kr.cc_prepare, e, u)
        t_boot, _ = timed(kr.cc_bootstrap, prep, n_boot, 7)
        edges = np.linspace(0, m, 1001).round().astype(np.int64)
        t_jack, _ = timed(kr.cc_jackknife, prep, edges[:101])
        line(
            f"M={m:.0e}",
            f"prepare {t_prep:.2f} s",
            f"bootstrap {1e3 * t_boot / n_boot:.2f} ms/replicate",
            f"jackknife {1e3 * t_jack / 100:.2f} ms/group ({10 * t_jack:.1f} s for 1000)",
        )
        if m <= 200_000:
            nb = max(8, n_boot // 8)
            t_old, _ = timed(
                bootstrap_generic,
                e,
                u,
                {"CC": (ks.spearman_cc, None)},
                n_boot=nb,
                rng=1,
                method="percentile",
            )
            t_oldj, _ = timed(_generic_jackknife, ks.spearman_cc, e[: m // 10], u[: m // 10], 100)
            line(
                f"M={m:.0e}",
                f"sort-based bootstrap {1e3 * t_old / nb:.2f} ms/replicate",
                f"sort-based jackknife {1e3 * t_oldj / 100:.2f} ms/group at M/10",
            )
        new, old = kr.cc_given_u(u), ks.spearman_cc_given_u(u)
        rows = u * rng.standard_normal((4, m))
        t_new, a = timed(new, rows)
        t_o, b = timed(old, rows)
        assert np.allclose(a, b, rtol=0, atol=1e-12)
        line(
            f"M={m:.0e}",
            f"simulated CC {1e3 * t_new / 4:.1f} ms/draw (keys sort)",
            f"{1e3 * t_o / 4:.1f} ms/draw (argsort both)",
        )
        if m >= 2_000_000:
            bench_mc_draw(u, e)
            bench_pieces(u, e)


def bench_mc_draw(u, e):
    import uqviz

    ds = uqviz.from_arrays(e, u)
    for gen in ("normal", "t6"):
        for stat in ("ENCE", "CC"):
            uqviz.simulated_reference(
                ds.isel(point=slice(0, 1000)),
                statistic=stat,
                generative=gen,
                n_mc=2,
                rng=0,
                progress=False,
            )
            dt, _ = timed(
                uqviz.simulated_reference,
                ds,
                statistic=stat,
                generative=gen,
                n_mc=16,
                rng=0,
                progress=False,
            )
            line(
                f"M={u.size:.0e}",
                f"simulated_reference {stat} D={gen}",
                f"{1e3 * dt / 16:.0f} ms per simulated set (draw + statistic)",
            )


def bench_pieces(u, e, n_boot=320, n_mc=128):
    """The other pieces of the report at large M, each against its reference in this run."""
    import numpy.random as npr

    import uqviz
    from uqviz._array import binned as kb
    from uqviz._array import resample as rs
    from uqviz._array import variates as kv
    from uqviz.engine.statistics import get_statistic
    from uqviz.generative import get_generative
    from uqviz.reference.simulated import _references_of, _Simulation

    m = u.size
    gen, out = npr.default_rng(1), np.empty(m)
    for name, numpy_draw, kernel in [
        ("normal", lambda: gen.standard_normal(m), lambda s: kv.fill_normal(s, out)),
        ("t6", lambda: gen.standard_t(6.0, m), lambda s: kv.fill_student_t(s, 6.0, out)),
    ]:
        state = kv.stream(1)
        kernel(state)
        t_np, _ = timed(lambda: [numpy_draw() for _ in range(4)])
        t_k, _ = timed(lambda: [kernel(state) for _ in range(4)])
        line(
            f"M={m:.0e}",
            f"{name} variates: numpy {1e3 * t_np / 4:.1f} ms",
            f"uqviz._array.variates {1e3 * t_k / 4:.1f} ms",
            f"{t_np / t_k:.1f}x",
        )
    order = np.argsort(u, kind="stable")
    cols = np.column_stack([(e * e)[order], (u * u)[order], (e / u)[order] ** 2])
    bounds = np.linspace(0, m, 21).round().astype(np.int64)
    rs.binned_resample_sums(cols, bounds, 32, 1)
    t_b, _ = timed(rs.binned_resample_sums, cols, bounds, n_boot, 1)
    line(
        f"M={m:.0e}",
        f"ENCE/ZMSE resample (20 bins, 3 columns) {1e3 * t_b / n_boot:.2f} ms/replicate",
    )
    enc = lambda b: kb.ence_from_means({"E2": b[..., 0], "V": b[..., 1]})  # noqa: E731
    t_l, _ = timed(kb.loo_binned_values, cols, 20, enc)
    line(f"M={m:.0e}", f"ENCE leave-one-out values, all {m} points {t_l:.2f} s")
    ds = uqviz.from_arrays(e, u)
    stats = [get_statistic(s) for s in ("ENCE", "ZMSE", "CC")]
    for d in ("normal", "t6"):
        kw = dict(stats=stats, generative=get_generative(d))
        sim = _Simulation(n_mc=4, n_bins=20, conditioning="uE", ci=0.95, progress=False)
        _references_of(ds.isel(point=slice(0, 5000)), rng=npr.default_rng(0), sim=sim, **kw)
        t1, _ = timed(_references_of, ds, rng=npr.default_rng(0), sim=sim.replace(n_mc=n_mc), **kw)
        t2, _ = timed(
            _references_of, ds, rng=npr.default_rng(0), sim=sim.replace(n_mc=2 * n_mc), **kw
        )
        line(
            f"M={m:.0e}",
            f"one simulated set for ENCE, ZMSE and CC together, D={d}",
            f"{1e3 * (t2 - t1) / n_mc:.0f} ms (wall, 2 threads)",
            f"set-up {t1 - (t2 - t1):.1f} s per call",
        )


def write_csv(path, rows):
    import pandas as pd

    import uqviz

    ds = uqviz.synthetic.nig(rows, nu=8, rng=0)
    pd.DataFrame({"E": ds.E.values, "uE": ds.uE.values}).to_csv(path, index=False)


def bench_report(rows, stages, n_boot, n_mc):
    print(f"\n## uqviz report on {rows:.0e} rows (n_boot {n_boot}, n_mc {n_mc})")
    with tempfile.TemporaryDirectory() as tmp:
        csv = os.path.join(tmp, "big.csv")
        write_csv(csv, rows)
        if stages:
            bench_stages(csv)
            return
        cmd = [
            "/usr/bin/time",
            "-v",
            sys.executable,
            "-m",
            "uqviz.cli",
            "report",
            csv,
            "--errors",
            "E",
            "--uncertainties",
            "uE",
            "--out",
            os.path.join(tmp, "out"),
            "--n-boot",
            str(n_boot),
            "--n-mc",
            str(n_mc),
        ]
        line("start")
        proc = subprocess.run(cmd, capture_output=True, text=True)
        info = dict(
            x.strip().split(": ", 1)
            for x in proc.stderr.splitlines()
            if ": " in x and x.startswith("\t")
        )
        line(
            f"exit {proc.returncode}",
            f"wall {info.get('Elapsed (wall clock) time (h:mm:ss or m:ss)')}",
            f"max RSS {int(info.get('Maximum resident set size (kbytes)', 0)) / 2**20:.2f} GB",
        )


def bench_stages(csv):
    import warnings

    import uqviz

    ds = uqviz.read_csv(csv, errors="E", uncertainties="uE")
    warnings.simplefilter("ignore")
    for label, call in [
        (
            "validate_average ZMS RCE NLL",
            lambda: uqviz.validate_average(
                ds, statistics=("ZMS", "RCE", "NLL"), n_boot=10_000, rng=0
            ),
        ),
        ("local_calibration LZMS", lambda: uqviz.local_calibration(ds, n_boot=10_000, rng=0)),
        (
            "CC bootstrap (validate_average CC)",
            lambda: uqviz.validate_average(ds, statistics=("CC",), n_boot=10_000, rng=0),
        ),
        (
            "ENCE bootstrap",
            lambda: uqviz.validate_simulated(
                ds, statistic="ENCE", n_boot=10_000, n_mc=2, rng=0, progress=False
            ),
        ),
        (
            "CC reference, 200 draws (normal)",
            lambda: uqviz.simulated_reference(ds, statistic="CC", n_mc=200, rng=0, progress=False),
        ),
        (
            "ENCE reference, 200 draws (t6)",
            lambda: uqviz.simulated_reference(
                ds, statistic="ENCE", generative="t6", n_mc=200, rng=0, progress=False
            ),
        ),
    ]:
        dt, _ = timed(call)
        line(label, f"{dt:.1f} s")


CLUSTER_CALLS = {
    "CC bootstrap (2000 replicates)": lambda ds, c: __import__("uqviz").validate_average(
        ds, statistics=("CC",), n_boot=2000, rng=2, client=c
    ),
    "LZMS, 40 bins (5000 replicates)": lambda ds, c: __import__("uqviz").local_calibration(
        ds, n_bins=40, n_boot=5000, rng=3, client=c
    ),
    "CC reference (512 draws)": lambda ds, c: __import__("uqviz").simulated_reference(
        ds, statistic="CC", n_mc=512, rng=4, client=c, progress=False
    ),
}


def bench_cluster(m):
    """Run in a child process whose numba pool has 1 thread from the start (part 3).

    ``NUMBA_NUM_THREADS`` must be set before numba starts its threads, in this process
    and in the workers (they inherit it): set later, numba refuses to compile.
    """
    env = dict(os.environ, NUMBA_NUM_THREADS="1", UQVIZ_THREADS="1", PYTHONWARNINGS="ignore")
    subprocess.run(
        [sys.executable, __file__, "--cluster-child", "--cluster-m", str(m)], env=env, check=True
    )


def cluster_child(m):
    import warnings

    import xarray as xr
    from dask.distributed import Client, LocalCluster

    import uqviz

    warnings.simplefilter("ignore")
    print(f"\n## dask LocalCluster, 2 worker processes x 1 thread, M = {m:.0e}")
    ds, small = uqviz.synthetic.nig(m, nu=6, rng=1), uqviz.synthetic.nig(2000, nu=6, rng=1)
    local = {}
    for name, call in CLUSTER_CALLS.items():
        call(small, None)  # compile
        local[name] = timed(call, ds, None)
    with (
        LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        Client(cluster) as client,
    ):
        for _ in range(2):  # compile on both workers
            for call in CLUSTER_CALLS.values():
                call(small, client)
        total_local = total_cluster = 0.0
        for name, call in CLUSTER_CALLS.items():
            t1, a = local[name]
            t2, b = timed(call, ds, client)
            xr.testing.assert_identical(a, b)
            total_local, total_cluster = total_local + t1, total_cluster + t2
            line(
                name,
                f"1 thread {t1:.1f} s",
                f"LocalCluster 2 x 1 {t2:.1f} s",
                f"efficiency {t1 / (2 * t2):.2f}",
                "numbers identical",
            )
    line(
        "all three",
        f"1 thread {total_local:.1f} s",
        f"LocalCluster {total_cluster:.1f} s",
        f"speed-up {total_local / total_cluster:.2f}",
        f"efficiency {total_local / (2 * total_cluster):.2f}",
    )


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--report", action="store_true", help="run the report on --rows rows")
    p.add_argument("--stages", action="store_true", help="time the report's stages apart")
    p.add_argument("--rows", type=int, default=2_000_000)
    p.add_argument("--report-n-boot", type=int, default=10_000)
    p.add_argument("--report-n-mc", type=int, default=2000)
    p.add_argument("--n-boot", type=int, default=64, help="CC replicates timed")
    p.add_argument("--cluster-m", type=int, default=400_000)
    p.add_argument("--skip-cc", action="store_true")
    p.add_argument("--skip-cluster", action="store_true")
    p.add_argument("--cluster-child", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.cluster_child:
        return cluster_child(args.cluster_m)
    print(f"cores {os.cpu_count()} | {load()}")
    if not args.skip_cc:
        bench_cc([20_000, 200_000, 2_000_000], args.n_boot)
    if args.report or args.stages:
        bench_report(args.rows, args.stages, args.report_n_boot, args.report_n_mc)
    if not args.skip_cluster:
        bench_cluster(args.cluster_m)


if __name__ == "__main__":
    main()
