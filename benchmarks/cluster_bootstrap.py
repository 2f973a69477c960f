"""The cost of the cluster bootstrap against the point bootstrap, measured in the same run.

Target (issue 39, item 3): the cluster bootstrap (whole groups resampled) costs at most 2 times
the point bootstrap at M = 10^6 points in 10^4 groups (``n_boot`` = 1000). Times (median of
``--repeat`` calls after a warm-up) of

* ``uqviz.engine.bootstrap.bootstrap_statistics(e, u, ["ZMS"])``, the bootstrap of
  validate_average's ZMS, with and without ``clusters=codes``;
* ``uqviz.proper_scores`` (the four scores, sharpness and dispersion) of the dataset with and
  without its ``group`` coordinate.

Prints one row per task: point and cluster times and their ratio (target <= 2).

Usage::

    python benchmarks/cluster_bootstrap.py                       # M = 10^6, 10^4 groups
    python benchmarks/cluster_bootstrap.py --n 100000 --groups 1000 --repeat 1
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from _common import median_time  # noqa: E402

import uqviz  # noqa: E402
from uqviz.engine.bootstrap import bootstrap_statistics  # noqa: E402

TARGET = 2.0


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000, help="points M")
    parser.add_argument("--groups", type=int, default=10_000, help="groups G")
    parser.add_argument("--n-boot", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    codes = np.sort(rng.integers(0, args.groups, args.n))  # groups of unequal sizes
    codes = np.unique(codes, return_inverse=True)[1].astype(np.int64)
    shared = rng.standard_normal(int(codes.max()) + 1)[codes]
    u = rng.lognormal(0.0, 0.3, args.n)
    e = u * (np.sqrt(0.3) * shared + np.sqrt(0.7) * rng.standard_normal(args.n))
    ds = uqviz.from_arrays(e, u)
    grouped = ds.assign_coords(group=("point", codes))
    kw = dict(n_boot=args.n_boot, rng=1)
    tasks = {
        "ZMS (bootstrap_statistics)": (
            lambda: bootstrap_statistics(e, u, ["ZMS"], **kw),
            lambda: bootstrap_statistics(e, u, ["ZMS"], clusters=codes, **kw),
        ),
        "proper_scores (4 scores)": (
            lambda: uqviz.proper_scores(ds, **kw),
            lambda: uqviz.proper_scores(grouped, **kw),
        ),
    }
    print(
        f"M = {args.n}, G = {int(codes.max()) + 1} groups, n_boot = {args.n_boot}, "
        f"median of {args.repeat}"
    )
    print(f"{'task':30s} {'points s':>10s} {'groups s':>10s} {'ratio':>7s}  target <= {TARGET}")
    for name, (point, cluster) in tasks.items():
        tp = median_time(point, repeat=args.repeat)
        tc = median_time(cluster, repeat=args.repeat)
        ok = "ok" if tc / tp <= TARGET else "OVER"
        print(f"{name:30s} {tp:10.3f} {tc:10.3f} {tc / tp:7.2f}  {ok}")


if __name__ == "__main__":
    main()
