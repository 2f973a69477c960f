"""False alarm and power of f_v with the local statistics LZV (ZVar), LZISD (ZISD) and LRR (RR).

A smoke of the verdict ``fraction_valid(local_calibration(data, statistic=s))["valid"]`` on the
sets of the verdict table (:func:`uqviz.experiments.verdicts.draw_set`: M = 2000, uE²
inverse-gamma):
calibrated sets with D normal and t6, and ``consistency1.5`` (uE 1.5 times too small on the top
30 % of uE). Prints the "fails" rate with its Monte Carlo se per statistic and scenario, and the
mean time of one call. Issue 24, item 4; the verdict-table registry does not list them yet.

Usage::

    python benchmarks/bench_local_variance_stats.py --sets 40
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

import uqviz
from uqviz.experiments.verdicts import draw_set

CELLS = (("calibrated", "normal"), ("calibrated", "t6"), ("consistency1.5", "normal"))
STATISTICS = ("ZMS", "ZVar", "ZISD", "RR")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sets", type=int, default=40)
    p.add_argument("--size", type=int, default=2000)
    p.add_argument("--n-boot", type=int, default=500)
    p.add_argument("--n-mc", type=int, default=200)
    p.add_argument("--rng", type=int, default=2024)
    args = p.parse_args(argv)
    seeds = np.random.SeedSequence(args.rng).spawn(len(CELLS))
    print(
        f"f_v 'fails' rate in % +- se; {args.sets} sets of M = {args.size}, "
        f"n_boot {args.n_boot}, n_mc {args.n_mc}"
    )
    print(f"{'statistic':10s}" + "".join(f"{s + '/' + g:>24s}" for s, g in CELLS) + "   s/call")
    rates = {s: [] for s in STATISTICS}
    cost = {s: [] for s in STATISTICS}
    for (scenario, gen), ss in zip(CELLS, seeds):
        fails = {s: 0 for s in STATISTICS}
        for k, child in enumerate(ss.spawn(args.sets)):
            ds = draw_set(scenario, generative=gen, size=args.size, rng=child)
            for s in STATISTICS:
                t = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    loc = uqviz.local_calibration(
                        ds, statistic=s, n_boot=args.n_boot, n_mc=args.n_mc, rng=k
                    )
                    fails[s] += not bool(uqviz.fraction_valid(loc)["valid"])
                cost[s].append(time.perf_counter() - t)
        for s in STATISTICS:
            r = fails[s] / args.sets
            rates[s].append(f"{100 * r:.0f} +- {100 * np.sqrt(r * (1 - r) / args.sets):.0f}")
    for s in STATISTICS:
        print(f"{s:10s}" + "".join(f"{v:>24s}" for v in rates[s]) + f"   {np.mean(cost[s]):.2f}")


if __name__ == "__main__":
    main()
