"""Speed of ``compare_models``: 6 models x 4 measures on 10^5 points, 10^4 paired replicates.

Issue 24's target: <= 5 s on 2 cores. Side by side in the same run:

- ``compare_models`` (ZMS, RCE, NLL, CRPS: 30 per-point columns, one paired bootstrap of
  all of them, counts of each point's draws multiplied with the columns);
- the same bootstrap sums by ``uqviz._array.resample.resample_sums`` (the same resamples,
  drawn again for every three columns);
- a plain numpy reference: index arrays per replicate, the columns gathered and averaged,
  every measure recomputed (timed on ``--ref-boot`` replicates, scaled to 10^4).

Prints the load average (the machine is shared: ratios of the same run are what count) and
the CPU time of ``compare_models`` (half of it bounds the wall time on two idle cores).

Usage::

    python benchmarks/bench_compare_models.py [--size 100000] [--n-boot 10000]
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
import xarray as xr

import uqviz
from uqviz._array.comparison import paired_column_sums
from uqviz._array.resample import resample_sums
from uqviz.scores.predictive import point_scores


def _tree(m, n_models, rng):
    u = rng.uniform(0.5, 2.0, m)
    y = u * rng.normal(size=m)
    models = {}
    for k in range(n_models):
        pred = 0.1 * rng.normal(size=m)
        models[f"model{k}"] = uqviz.from_predictions(y, pred, std=u * (0.8 + 0.1 * k))
    return xr.DataTree.from_dict(models)


def _reference(tree, n_boot, seed):
    """Plain numpy: index arrays, every measure of every model per replicate."""
    rng = np.random.default_rng(seed)
    cols = []
    for name in tree.children:
        ds = tree[name].to_dataset()
        e, u = ds["E"].values, ds["uE"].values
        _, _, sc = point_scores(ds, ("nll", "crps"))
        cols.append(np.column_stack([(e / u) ** 2, e * e, u * u, sc]))
    cols = np.hstack(cols)
    m = cols.shape[0]
    out = np.empty((n_boot, len(tree.children), 4))
    for b in range(n_boot):
        mean = cols[rng.integers(0, m, m)].mean(axis=0).reshape(-1, 5)
        out[b] = np.column_stack(
            [
                np.abs(mean[:, 0] - 1.0),
                np.abs(1.0 - np.sqrt(mean[:, 1] / mean[:, 2])),
                mean[:, 3],
                mean[:, 4],
            ]
        )
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--size", type=int, default=100_000)
    p.add_argument("--models", type=int, default=6)
    p.add_argument("--n-boot", type=int, default=10_000)
    p.add_argument("--ref-boot", type=int, default=200)
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args(argv)
    tree = _tree(args.size, args.models, np.random.default_rng(0))
    print(f"load average before: {os.getloadavg()}")
    uqviz.compare_models(tree, n_boot=64, rng=0)  # compile the kernels
    t_cm, c_cm = [], []
    for r in range(args.repeat):
        t, c = time.perf_counter(), time.process_time()
        res = uqviz.compare_models(tree, n_boot=args.n_boot, rng=r)
        t_cm.append(time.perf_counter() - t)
        c_cm.append(time.process_time() - c)
    n_cols = 5 * args.models
    cols = np.random.default_rng(1).normal(size=(args.size, n_cols))
    paired_column_sums(cols[:1000], 64, 1)
    t = time.perf_counter()
    paired_column_sums(cols, args.n_boot, 1)
    t_counts = time.perf_counter() - t
    t = time.perf_counter()
    resample_sums(cols, args.n_boot, 1)
    t_triplets = time.perf_counter() - t
    t = time.perf_counter()
    _reference(tree, args.ref_boot, 0)
    t_ref = (time.perf_counter() - t) * args.n_boot / args.ref_boot
    print(
        f"{args.models} models x {res.sizes['measure']} measures, M = {args.size}, "
        f"{args.n_boot} paired replicates"
    )
    print(
        f"compare_models (best of {args.repeat}):        {min(t_cm):7.2f} s  "
        f"(all: {', '.join(f'{x:.2f}' for x in t_cm)}; target <= 5 s)"
    )
    print(
        f"  its CPU time (both cores):                  {min(c_cm):7.2f} s  "
        f"(wall on two idle cores >= {min(c_cm) / 2:.2f} s)"
    )
    print(f"  its bootstrap sums, {n_cols} columns (counts):  {t_counts:7.2f} s")
    print(
        f"  resample_sums, same resamples (triplets):   {t_triplets:7.2f} s  "
        f"(ratio {t_triplets / t_counts:.1f}x)"
    )
    print(
        f"numpy index-array reference (scaled from {args.ref_boot}): {t_ref:7.1f} s  "
        f"(ratio {t_ref / min(t_cm):.0f}x)"
    )
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
