"""uqviz.from_estimator on a 500-tree random forest and 10^5 points: where the time goes.

Target: ``from_estimator(forest, X, y)`` in <= 5 s. The per-tree predictions (scikit-learn's
``tree.predict``, which uqviz must call once per tree) dominate; uqviz adds the running mean
and variance over trees and the dataset's checks. The script times, on the same forest and
inputs (median of ``--repeat`` runs after a warm-up, wall and CPU time):

1. ``forest.predict(X)``: scikit-learn's own prediction (the mean of the trees), for scale;
2. the bare loop ``tree.predict(X32, check_input=False)`` over the trees: the part of
   ``from_estimator`` that is scikit-learn's;
3. ``uqviz.from_estimator(forest, X, y)``;

and prints the split: 2 (per-tree predictions) and 3 - 2 (uqviz). CPU time is printed beside
wall time because the machine may be shared: CPU seconds of a one-thread run are what an idle
machine would take. The forest is trained on ``--n-train`` points (its fit is not timed).

Usage::

    python benchmarks/bench_from_estimator.py                   # 500 trees, 10^5 points
    python benchmarks/bench_from_estimator.py --trees 100 --n 20000 --n-jobs 2
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np
from sklearn.ensemble import RandomForestRegressor

import uqviz


def timed(func, repeat):
    """(median wall s, median CPU s) of ``repeat`` calls after one warm-up call."""
    func()
    walls, cpus = [], []
    for _ in range(repeat):
        c0, t0 = time.process_time(), time.perf_counter()
        func()
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
    return statistics.median(walls), statistics.median(cpus)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=100_000, help="points predicted (default 10^5)")
    p.add_argument("--trees", type=int, default=500)
    p.add_argument("--n-train", type=int, default=2000)
    p.add_argument("--n-features", type=int, default=8)
    p.add_argument("--n-jobs", type=int, default=1, help="threads of the forest (n_jobs)")
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args(argv)

    rng = np.random.default_rng(0)

    def draw(n):
        X = rng.normal(size=(n, args.n_features))
        y = X[:, 0] + np.sin(2 * X[:, 1]) + 0.5 * X[:, 2] * X[:, 3] + rng.normal(0, 0.3, n)
        return X, y

    X_train, y_train = draw(args.n_train)
    X, y = draw(args.n)
    t0 = time.perf_counter()
    forest = RandomForestRegressor(
        args.trees, max_features=0.5, random_state=0, n_jobs=args.n_jobs
    ).fit(X_train, y_train)
    fit_s = time.perf_counter() - t0
    depth = np.mean([t.get_depth() for t in forest.estimators_])
    X32 = np.ascontiguousarray(X, dtype=np.float32)

    def trees_only():
        for tree in forest.estimators_:
            tree.predict(X32, check_input=False)

    sk_w, sk_c = timed(lambda: forest.predict(X), args.repeat)
    tr_w, tr_c = timed(trees_only, args.repeat)
    uq_w, uq_c = timed(lambda: uqviz.from_estimator(forest, X, y), args.repeat)
    ds = uqviz.from_estimator(forest, X, y)
    assert np.allclose(y - ds["E"].values, forest.predict(X))

    print(
        f"forest: {args.trees} trees (mean depth {depth:.1f}), trained on {args.n_train} "
        f"points in {fit_s:.1f} s; {args.n} points predicted; n_jobs={args.n_jobs}; "
        f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs"
    )
    print(f"{'':44}{'wall s':>8}{'CPU s':>8}")
    print(f"{'scikit-learn forest.predict(X)':44}{sk_w:8.2f}{sk_c:8.2f}")
    print(f"{'per-tree predictions (the loop alone)':44}{tr_w:8.2f}{tr_c:8.2f}")
    print(f"{'uqviz.from_estimator(forest, X, y)':44}{uq_w:8.2f}{uq_c:8.2f}")
    print(f"{'  of which uqviz (from_estimator - loop)':44}{uq_w - tr_w:8.2f}{uq_c - tr_c:8.2f}")
    print(
        "(on a shared machine wall times are noisy, and their differences may even be "
        "negative: read the CPU column)"
    )
    print(
        f"target <= 5 s: {'met' if uq_w <= 5 else 'NOT met'} (wall), "
        f"{'met' if uq_c / max(args.n_jobs, 1) <= 5 else 'NOT met'} (CPU / threads)"
    )


if __name__ == "__main__":
    main()
