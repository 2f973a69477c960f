"""CC's delete-group jackknife (BCa's acceleration): rank update against the count pass.

The BCa interval of CC (Pernot (2024c); the delete-group jackknife of Efron & Tibshirani
(1993), sect. 11.5) needs the jackknife values of Spearman's correlation
of |E| and uE: leave-one-out up to 1000 points, 1000 groups of M/1000 points above.
uqviz computed each value by one pass over the M points (draw counts 1 and 0 on ranks
taken once: O(M) per group); the rank update (``uqviz._array.cc_jackknife``) corrects the
full sample's sums for the deleted points, O(g^2 log M) per group of g points.
``uqviz._array.rank.cc_jackknife`` takes the rank update up to ``RANK_UPDATE_MAX_GROUP``
points a group. This script times, in the same run and on the same data:

- ``rank update``: :func:`uqviz._array.cc_jackknife.cc_jackknife_ranks`;
- ``count pass``: the previous kernel (the reference implementation), forced by setting
  ``RANK_UPDATE_MAX_GROUP = 0``;
- ``scipy``: ``scipy.stats.spearmanr`` recomputed on the kept points, timed on 20 groups
  and scaled to 1000;

and prints the largest difference between the values (they are equal to rounding).
Data: calibrated (uE log-normal, E normal), without ties, and rounded to 0.1 (ties in
both |E| and uE). M = 5000 is the default example's size, the dashboard's reference
explorer's CC.

Usage::

    PYTHONPATH=. python benchmarks/bench_cc_jackknife.py
    ... --sizes 5000 20000
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np
import scipy.stats as sps

sys.path.insert(0, os.path.dirname(__file__))
from _common import median_time  # noqa: E402

from uqviz._array import cc_jackknife as cj  # noqa: E402
from uqviz._array import rank as kr  # noqa: E402


def data(m, ties, seed=0):
    rng = np.random.default_rng(seed)
    u = rng.lognormal(0.0, 0.4, m)
    e = u * rng.standard_normal(m)
    if ties:
        u, e = np.round(u, 1), np.round(e, 1)
    return e, u


def count_pass(prep, edges):
    keep = cj.RANK_UPDATE_MAX_GROUP
    cj.RANK_UPDATE_MAX_GROUP = 0
    try:
        return kr.cc_jackknife(prep, edges)
    finally:
        cj.RANK_UPDATE_MAX_GROUP = keep


def scipy_groups(e, u, edges, n):
    out = []
    for g in range(n):
        keep = np.ones(e.size, bool)
        keep[edges[g] : edges[g + 1]] = False
        out.append(sps.spearmanr(np.abs(e[keep]), u[keep]).statistic)
    return np.array(out)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 5000, 13885, 32000, 80000])
    args = parser.parse_args()
    print(f"numba threads: {kr.get_num_threads()}; load average {os.getloadavg()[0]:.1f}")
    print(
        "| M | ties | points a group | rank update | count pass | ratio | scipy (x1000 "
        "groups) | ratio | max difference |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for m in args.sizes:
        for ties in (False, True):
            e, u = data(m, ties, seed=m)
            prep = kr.cc_prepare(e, u)
            n_groups = min(m, 1000)
            edges = np.linspace(0, m, n_groups + 1).round().astype(np.int64)
            t_new = median_time(cj.cc_jackknife_ranks, prep, edges)
            t_old = median_time(count_pass, prep, edges)
            t0 = time.perf_counter()
            ref = scipy_groups(e, u, edges, 20)
            t_sp = (time.perf_counter() - t0) / 20 * n_groups
            new = cj.cc_jackknife_ranks(prep, edges)
            diff = max(
                np.max(np.abs(new - count_pass(prep, edges))), np.max(np.abs(new[:20] - ref))
            )
            taken = "" if cj.rank_update_pays(m, edges) else " (count pass taken)"
            print(
                f"| {m} | {'|E| and uE' if ties else 'none'} | {m / n_groups:g}{taken} | "
                f"{1e3 * t_new:.1f} ms | {1e3 * t_old:.1f} ms | {t_old / t_new:.1f}x | "
                f"{1e3 * t_sp:.0f} ms | {t_sp / t_new:.0f}x | {diff:.1e} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
