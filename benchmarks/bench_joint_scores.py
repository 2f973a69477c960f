"""Joint scores of several targets: uqviz vs scoringrules 0.10.0 (numba backend), same run.

Target (issue 39): the energy score of 10^5 points x 3 targets x 100 members in <= 1 s and
faster than scoringrules' numba backend. Times (median of ``--repeat`` calls after a
warm-up that compiles the numba kernels) of

* uqviz: ``uqviz.energy_score`` and ``uqviz.variogram_score`` (p = 0.5), plain and fair
  (the arrays in, the result Dataset out), and their kernels;
* scoringrules on the same arrays (written to a temporary file), in a subprocess run by the
  Python of ``UQVIZ_PEER_PYTHON`` (a side environment with scoringrules 0.10.0 and numba,
  as ``scripts/make-joint-fixtures`` builds: ``VENV=/tmp/uqviz-joint-venv``):
  ``es_ensemble`` and ``vs_ensemble`` with ``estimator="nrg"`` and ``"fair"``, numba
  backend; the calls only are timed (after a warm-up call on 100 points that compiles them;
  ``--peer-repeat`` calls, default 1: scoringrules' energy score of the default size takes
  about 40 s on this machine). Without ``UQVIZ_PEER_PYTHON`` the peer is not timed
  (a printed note).

Prints one row per task: uqviz time, the peer's time, their ratio (peer / uqviz) and the
largest relative difference of the per-point values.

Usage::

    UQVIZ_PEER_PYTHON=/tmp/uqviz-joint-venv/bin/python python benchmarks/bench_joint_scores.py
    python benchmarks/bench_joint_scores.py --n 20000 --repeat 3
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from _common import median_time, run_peer_script  # noqa: E402

import uqviz  # noqa: E402
from uqviz._array import multivariate_scores as kernels  # noqa: E402

PEER_SCRIPT = r"""
import json, sys, time
import numpy as np
import scoringrules as sr
z = np.load(sys.argv[1])
repeat = int(sys.argv[2])
y, fct = z["y"], np.ascontiguousarray(np.swapaxes(z["x"], 1, 2))  # (n, S, t)
out = {}

def timed(name, f):
    f(100)  # warm-up on 100 points (numba compilation); the full calls are long
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        value = f(len(y))
        times.append(time.perf_counter() - t0)
    np.save(sys.argv[3] + "_" + name + ".npy", np.asarray(value, dtype=float))
    out[name] = float(np.median(times))

for est in ("nrg", "fair"):
    timed("es_" + est, lambda n: sr.es_ensemble(y[:n], fct[:n], estimator=est, backend="numba"))
    timed("vs_" + est,
          lambda n: sr.vs_ensemble(y[:n], fct[:n], p=0.5, estimator=est, backend="numba"))
print(json.dumps(out))
"""


def joint_data(n, t, s, seed=0):
    """Correlated targets and an ensemble with the same correlation, heteroscedastic."""
    rng = np.random.default_rng(seed)
    scale = np.exp(rng.normal(0.0, 0.4, (n, 1, 1)))
    common = rng.normal(size=(n, 1, 1))
    y = (scale * (common + 0.6 * rng.normal(size=(n, t, 1))))[:, :, 0]
    x = scale * (common + 0.6 * rng.normal(size=(n, t, s)))
    return y, x


def run_peer(y, x, repeat):
    """``{name: (seconds, per-point values)}`` from the side environment, or {} (a note)."""
    needs = "scoringrules 0.10.0 and numba; scripts/make-joint-fixtures builds one"
    return run_peer_script(PEER_SCRIPT, {"y": y, "x": x}, repeat, needs)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--targets", type=int, default=3)
    ap.add_argument("--members", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--peer-repeat", type=int, default=1)
    args = ap.parse_args(argv)
    print(
        f"{args.n} points x {args.targets} targets x {args.members} members; "
        f"{os.cpu_count()} cores; median of {args.repeat} calls (peer: {args.peer_repeat})",
        flush=True,
    )
    y, x = joint_data(args.n, args.targets, args.members)
    rows = []
    for est, fair in (("nrg", False), ("fair", True)):
        values = kernels.energy_score_points(y, x, fair=fair)
        rows.append(
            (
                f"energy_score ({est})",
                median_time(lambda: uqviz.energy_score(y, x, fair=fair), repeat=args.repeat),
                f"es_{est}",
                values,
            )
        )
        rows.append(
            (
                f"  kernel ({est})",
                median_time(
                    lambda: kernels.energy_score_points(y, x, fair=fair), repeat=args.repeat
                ),
                f"es_{est}",
                values,
            )
        )
        values = kernels.variogram_score_points(y, x, p=0.5, fair=fair)
        rows.append(
            (
                f"variogram_score p=0.5 ({est})",
                median_time(lambda: uqviz.variogram_score(y, x, fair=fair), repeat=args.repeat),
                f"vs_{est}",
                values,
            )
        )
    peer = run_peer(y, x, args.peer_repeat)
    print(f"{'task':32s} {'uqviz s':>9s} {'peer s':>9s} {'peer/uqviz':>11s} {'max rel diff':>13s}")
    for name, t_ours, key, values in rows:
        if key in peer:
            t_peer, v_peer = peer[key]
            rel = float(np.max(np.abs(values - v_peer) / np.maximum(np.abs(v_peer), 1e-300)))
            print(f"{name:32s} {t_ours:9.3f} {t_peer:9.3f} {t_peer / t_ours:11.2f} {rel:13.1e}")
        else:
            print(f"{name:32s} {t_ours:9.3f} {'-':>9s} {'-':>11s} {'-':>13s}")
    es = rows[0][1]
    verdict = "met" if es <= 1.0 else "NOT met"
    print(f"target: energy score of the default size <= 1 s: {es:.3f} s ({verdict})")


if __name__ == "__main__":
    main()
