"""Adversarial groups (issue 24, item 1): the speed targets, side by side in one run.

1. ``uqviz.adversarial_validation`` of QM9_E (13 885 points, the 10 default sizes
   M/2^k = 6942 ... 14, 1000 groups each, BCa intervals with 1000 replicates, plus the
   reference curve on simulated calibrated sets): target <= 20 s on 2 cores.
2. ``uqviz.adversarial_group_calibration`` (uncertainty-toolbox's form, its defaults: 10
   fractions x 10 trials x 10 draws) on 10^5 points: target <= 1 s, and faster than
   uncertainty-toolbox 0.1.1 on the same groups. uncertainty-toolbox runs in its own venv
   (``--peer-python``, default /work/venv-peer24/bin/python) as a subprocess that draws the
   groups with numpy's legacy global stream (seed 0), saves them and times its own call on
   them; uqviz then replays those groups (``groups=``) and the scores are compared.

Usage::

    PYTHONPATH=$PWD python benchmarks/bench_groups.py
    PYTHONPATH=$PWD python benchmarks/bench_groups.py --skip-agv
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

import uqviz

PEER_SCRIPT = r"""
import json, sys, time
import numpy as np
import uncertainty_toolbox.metrics_calibration as mc
d = np.load(sys.argv[1])
y_pred, y_std, y_true = d["y_pred"], d["y_std"], d["y_true"]
out = {}
for cali in ("mean_abs", "root_mean_sq"):
    np.random.seed(0)
    t = time.perf_counter()
    r = mc.adversarial_group_calibration(y_pred, y_std, y_true, cali_type=cali)
    out[cali] = dict(seconds=time.perf_counter() - t, score_mean=r.score_mean.tolist(),
                     score_stderr=r.score_stderr.tolist())
# the groups of that call, redrawn from the same legacy stream in the same order
np.random.seed(0)
n = len(y_true)
groups = {}
for k, r in enumerate(np.linspace(0, 1, 10)):
    s = max(int(round(n * r)), 2)
    groups[f"r{k}"] = np.array([[np.random.choice(n, s, replace=False) for _ in range(10)]
                                for _ in range(10)], dtype=np.int32)
np.savez(sys.argv[2], **groups)
print(json.dumps(out))
"""


def engine_rate(n_boot=1000, n=1736, n_groups=500):
    """Draws per second of the resampling engine alone in this run (the machine's speed now):
    ``n_groups`` groups of ``n`` points, ``n_boot`` replicates, one column."""
    from uqviz._array.resample import resample_sums

    cols = np.random.default_rng(0).standard_normal((n * n_groups, 1))
    starts, sizes = np.arange(n_groups) * n, np.full(n_groups, n)
    resample_sums(cols[: 2 * n], 10, 1, starts=starts[:2], sizes=sizes[:2])
    t = time.perf_counter()
    resample_sums(cols, n_boot, 1, starts=starts, sizes=sizes)
    return n * n_groups * n_boot / (time.perf_counter() - t)


def bench_agv(n_groups, n_boot, client):
    ds = uqviz.datasets.load_dataset("QM9_E")
    m = ds.sizes["point"]
    kw = dict(n_groups=n_groups, n_boot=n_boot, rng=0, progress=False, client=client)
    uqviz.adversarial_validation(
        ds.isel(point=slice(0, 2000)), n_groups=40, n_boot=50, n_mc=20, rng=1, progress=False
    )  # compile the kernels
    t = time.perf_counter()
    res = uqviz.adversarial_validation(ds, **kw)
    dt = time.perf_counter() - t
    draws = 2 * n_groups * n_boot * sum(res["size"].values)
    rate = engine_rate(n_boot)
    print(
        f"AGV of QM9_E: M = {m}, sizes {res['size'].values.tolist()}, {n_groups} groups x "
        f"{n_boot} BCa replicates, data + reference: {dt:.2f} s ({draws / dt / 1e9:.2f} "
        f"x 1e9 draws/s); target <= 20 s: {'PASS' if dt <= 20 else 'FAIL'}"
    )
    print(
        f"  the resampling engine alone in this run: {rate / 1e9:.2f} x 1e9 draws/s; the "
        f"{draws:.2e} draws at that rate take {draws / rate:.1f} s: AGV = "
        f"{dt / (draws / rate):.2f} x the engine's time (load {os.getloadavg()[0]:.1f})"
    )
    print("  share_valid     ", np.round(res["share_valid"].values, 3).tolist())
    print("  reference_share ", np.round(res["reference_share"].values, 3).tolist())
    print("  band lower      ", np.round(res["reference_share_lower"].values, 3).tolist())
    print("  p_adjusted      ", np.round(res["p_adjusted"].values, 4).tolist())
    print(f"  verdict: {res['verdict'].values} ({res['reason'].values})")
    return dt


def bench_agc(n, peer_python):
    rng = np.random.default_rng(0)
    u = np.exp(rng.normal(0.0, 0.5, n))
    e = 1.2 * u * rng.standard_normal(n)
    y_pred = rng.normal(0.0, 3.0, n)
    y_true = y_pred + e
    ds = uqviz.from_arrays(y_true - y_pred, u)
    uqviz.adversarial_group_calibration(ds.isel(point=slice(0, 500)), rng=0)  # compile
    t = time.perf_counter()
    uqviz.adversarial_group_calibration(ds, rng=0)
    own = time.perf_counter() - t
    print(
        f"\nadversarial_group_calibration, {n} points, 10 x 10 x 10 groups drawn by uqviz: "
        f"{own:.3f} s; target <= 1 s: {'PASS' if own <= 1 else 'FAIL'}"
    )
    if not os.path.exists(peer_python):
        print(f"  uncertainty-toolbox: {peer_python} not found, skipped")
        return
    with tempfile.TemporaryDirectory() as tmp:
        inp, grp = os.path.join(tmp, "in.npz"), os.path.join(tmp, "groups.npz")
        np.savez(inp, y_pred=y_pred, y_std=u, y_true=y_true)
        run = subprocess.run(
            [peer_python, "-c", PEER_SCRIPT, inp, grp], capture_output=True, text=True, check=True
        )
        peer = json.loads(run.stdout.strip().splitlines()[-1])
        g = np.load(grp)
        groups = [g[f"r{k}"] for k in range(10)]
    uqviz.adversarial_group_calibration(ds, groups=[g[:1, :1] for g in groups])  # int32 kernel
    for stat, cali in (("MACE", "mean_abs"), ("RMSCE", "root_mean_sq")):
        t = time.perf_counter()
        res = uqviz.adversarial_group_calibration(ds, statistic=stat, groups=groups)
        ours = time.perf_counter() - t
        theirs = peer[cali]["seconds"]
        diff = np.max(np.abs(res["worst_mean"].values - peer[cali]["score_mean"]))
        dsd = np.max(np.abs(res["worst_sd"].values - peer[cali]["score_stderr"]))
        print(
            f"  {stat} on uncertainty-toolbox's groups: uqviz {ours:.3f} s, "
            f"uncertainty-toolbox {theirs:.2f} s (its own draws included), ratio "
            f"{theirs / ours:.0f}x; max |difference| of score_mean {diff:.2e}, of "
            f"score_stderr {dsd:.2e}"
        )


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n-groups", type=int, default=1000)
    ap.add_argument("--n-boot", type=int, default=1000)
    ap.add_argument("--n", type=int, default=100_000, help="points of the uct-form benchmark")
    ap.add_argument("--peer-python", default="/work/venv-peer24/bin/python")
    ap.add_argument("--client", default=None, help="None or 'local'")
    ap.add_argument("--skip-agv", action="store_true")
    ap.add_argument("--skip-agc", action="store_true")
    args = ap.parse_args(argv)
    print(f"load average {os.getloadavg()}, {os.cpu_count()} cpus, python {sys.version.split()[0]}")
    if not args.skip_agv:
        bench_agv(args.n_groups, args.n_boot, args.client)
    if not args.skip_agc:
        bench_agc(args.n, args.peer_python)


if __name__ == "__main__":
    main()
