"""Simulated ENCE reference of QM9_E: uqviz against a straightforward loop, same run.

The reference implementation follows ErrViewLib's ``calibScoresProbRef`` /
``eceFun``: for every Monte Carlo replicate draw E* = uE * N(0, 1), order the
points by uE, loop over the equal-count bins for MV and MSE, and compute the
ENCE. uqviz (:func:`uqviz.simulated_reference`) draws blocks of replicates,
bins once and computes the per-bin means of all replicates at once, on
threads. Both give the same reference within Monte Carlo error (printed as a
z-score).

Usage::

    UQVIZ_DATA_DIR=../shared/data python benchmarks/bench_reference.py
    python benchmarks/bench_reference.py --n-mc 2000 --repeat 1

Target (M = 13885, 20 bins, n_mc = 10^4): <= 3 s on 2 cores.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from _common import median_time  # noqa: E402

import uqviz  # noqa: E402
from uqviz.engine.parallel import n_threads  # noqa: E402
from uqviz.datasets import load_dataset  # noqa: E402


def gen_intervals(m, n_bins):
    """Equal-count bins as index ranges (ErrViewLib genIntervals; same bounds as uqviz)."""
    bounds = np.floor(np.arange(n_bins + 1) * m / n_bins + 0.5).astype(int)
    return [(bounds[i], bounds[i + 1]) for i in range(n_bins)]


def ence_loop(e, u, intervals):
    """eceFun: ENCE with an explicit loop over bins (points sorted by uE)."""
    mv, mse = [], []
    for lo, hi in intervals:
        mv.append(np.mean(u[lo:hi] ** 2))
        mse.append(np.mean(e[lo:hi] ** 2))
    mv, mse = np.array(mv), np.array(mse)
    return np.mean(np.abs(np.sqrt(mv) - np.sqrt(mse)) / np.sqrt(mv))


def reference_loop(u, n_mc, n_bins, seed):
    """calibScoresProbRef: one replicate at a time."""
    rng = np.random.default_rng(seed)
    intervals = gen_intervals(u.size, n_bins)
    out = np.empty(n_mc)
    for i in range(n_mc):
        e = u * rng.standard_normal(u.size)
        io = np.argsort(u, kind="stable")
        out[i] = ence_loop(e[io], u[io], intervals)
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--dataset", default="QM9_E")
    p.add_argument("--n-mc", type=int, default=10_000)
    p.add_argument("--n-bins", type=int, default=20)
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args(argv)

    ds = load_dataset(args.dataset)
    u = ds["uE"].values
    m = u.size

    def run_uqviz():
        return uqviz.simulated_reference(
            ds, statistic="ENCE", n_mc=args.n_mc, n_bins=args.n_bins, rng=1, return_samples=True
        )

    t_uq = median_time(run_uqviz, repeat=args.repeat)
    ref = run_uqviz()
    t0 = time.perf_counter()
    loop = reference_loop(u, args.n_mc, args.n_bins, seed=2)
    t_loop = time.perf_counter() - t0

    a, sa = float(ref["reference"]), float(ref["reference_se"])
    b, sb = loop.mean(), loop.std(ddof=1) / np.sqrt(loop.size)
    print(
        f"ENCE reference of {args.dataset}: M = {m}, {args.n_bins} bins, "
        f"n_mc = {args.n_mc}, threads = {n_threads()}, cores = {os.cpu_count()}"
    )
    print(f"{'implementation':<32}{'time [s]':>10}{'reference':>12}{'sd':>10}")
    print(
        f"{'uqviz.simulated_reference':<32}{t_uq:>10.2f}{a:>12.6f}{float(ref['sample_sd']):>10.6f}"
    )
    print(
        f"{'loop (calibScoresProbRef-like)':<32}{t_loop:>10.2f}{b:>12.6f}{loop.std(ddof=1):>10.6f}"
    )
    print(
        f"speed-up: {t_loop / t_uq:.1f}x; target <= 3 s: "
        f"{'met' if t_uq <= 3.0 else 'NOT met'} ({t_uq:.2f} s)"
    )
    print(f"agreement: (uqviz - loop) / combined se = {(a - b) / np.hypot(sa, sb):+.2f}")


if __name__ == "__main__":
    main()
