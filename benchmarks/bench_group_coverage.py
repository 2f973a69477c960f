"""Speed of the coverage across groups (issue 24, item 2): worst slab, CovGap, HSIC.

1. uqviz's worst-slab coverage (exact: one sort per direction, then Dinkelbach's iteration on
   the prefix sums, :mod:`uqviz._array.group_coverage`) on 10^5 points x 10 features with
   ``--directions`` directions (target <= 2 s, issue 24);
2. side by side with MAPIE 1.6.0's ``worst_slab_coverage`` (covmetrics' O(n^2) enumeration)
   on a size MAPIE can do (n = 5000, the same directions: MAPIE draws them by
   ``np.random.seed(random_state); randn(M, d)`` normalised; uqviz is given them with
   ``directions=``), run in the side environment /work/venv-peer24 in a subprocess, timed
   there; the two values must be equal;
3. CovGap and HSIC (with its permutations) times, and the whole ``uqviz.group_coverage``
   call (with its calibrated references) at 10^5 points.

Prints the load average: the machine is shared, compare the ratios measured in the same run.

Usage::

    python benchmarks/bench_group_coverage.py
    python benchmarks/bench_group_coverage.py --directions 100 --peer /work/venv-peer24/bin/python
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
import warnings

import numpy as np

import uqviz
from uqviz._array import group_coverage as kern

PEER_SCRIPT = r"""
import json, sys, time
import numpy as np
from mapie.metrics.conditional import worst_slab_coverage
d = np.load(sys.argv[1])
x, y, lo, hi = d["x"], d["y"], d["lower"], d["upper"]
iv = np.stack([lo, hi], axis=1)[:, :, None]
worst_slab_coverage(x[:200], y[:200], y_intervals=iv[:200], delta=0.1, n_directions=2,
                    random_state=0)
t = time.perf_counter()
v = worst_slab_coverage(x, y, y_intervals=iv, delta=float(sys.argv[2]),
                        n_directions=int(sys.argv[3]), random_state=int(sys.argv[4]))
print(json.dumps({"seconds": time.perf_counter() - t, "wsc": float(np.ravel(v)[0])}))
"""


def best_of(f, repeat=3):
    out = None
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        out = f()
        times.append(time.perf_counter() - t)
    return min(times), out


def _wsc(cover, xs, directions, m):
    """Sort, then the worst slab (ties kept together)."""
    orders, bounds = kern.slab_orders(xs, directions)
    return kern.worst_slab(cover, orders, m, bounds=bounds)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=100_000)
    p.add_argument("--features", type=int, default=10)
    p.add_argument("--directions", type=int, default=100)
    p.add_argument("--delta", type=float, default=0.1)
    p.add_argument("--peer-n", type=int, default=5000)
    p.add_argument("--peer-directions", type=int, default=100)
    p.add_argument("--peer", default="/work/venv-peer24/bin/python")
    args = p.parse_args(argv)
    print(f"load average {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f}; {os.cpu_count()} cpus")
    rng = np.random.default_rng(0)
    n, d = args.n, args.features
    x = rng.standard_normal((n, d))
    cover = (rng.random(n) < 0.9 - 0.2 * (x[:, 0] > 1.0)).astype(np.uint8)
    v = rng.standard_normal((args.directions, d))
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    m = math.ceil(args.delta * n)
    o500, b500 = kern.slab_orders(x[:500], v)
    kern.worst_slab(cover[:500], o500, 50, bounds=b500)  # compile
    kern.worst_slab(np.vstack([cover[:500]] * 2), o500, 50, bounds=b500)
    t_sort, (orders, bounds) = best_of(lambda: kern.slab_orders(x, v))
    t_min, wsc = best_of(lambda: kern.worst_slab(cover, orders, m, bounds=bounds))
    t_np, wsc_np = best_of(
        lambda: kern.worst_slab(cover, orders, m, bounds=bounds, engine="numpy"), 1
    )
    assert wsc_np[0] == wsc[0]
    total = t_sort + t_min
    print(
        f"worst slab, n = {n}, {d} features, {args.directions} directions, delta "
        f"{args.delta}: sort {t_sort:.2f} s + minimum {t_min:.2f} s = {total:.2f} s "
        f"(target <= 2 s: {'PASS' if total <= 2 else 'FAIL'}); numpy minimum {t_np:.2f} s; "
        f"WSC = {wsc[0]:.4f}"
    )
    sets = (rng.random((32, n)) < 0.9).astype(np.uint8)
    t_sets, _ = best_of(lambda: kern.worst_slab(sets, orders, m, bounds=bounds), 1)
    print(
        f"  calibrated reference: {t_sets / 32 * 1000:.0f} ms per simulated set "
        f"({t_sets / 32 * 200:.1f} s for n_mc = 200)"
    )

    # CovGap and HSIC
    labels = np.minimum((np.argsort(np.argsort(x[:, 0])) * 10) // n, 9)
    t_gap, _ = best_of(lambda: kern.coverage_gap(*_cov(cover, labels), 0.9))
    w = np.exp(0.3 * rng.standard_normal(n))
    idx = np.sort(rng.choice(n, 2000, replace=False))
    t_gram, gram = best_of(lambda: kern.gaussian_gram(w[idx], 1.0))
    perms = np.vstack([rng.permutation(cover[idx]) for _ in range(1000)]).astype(float)
    t_hsic, _ = best_of(lambda: kern.hsic_traces(gram, perms, 1.0), 1)
    print(
        f"CovGap (10 groups, n = {n}): {t_gap * 1000:.1f} ms; HSIC on 2000 points: kernel "
        f"{t_gram * 1000:.0f} ms, 1000 permutations {t_hsic:.2f} s"
    )

    feats = {f"x{k}": x[:, k] for k in range(d)}
    ds = uqviz.from_arrays(rng.standard_normal(n) * w, w, features=feats)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t_all, res = best_of(lambda: uqviz.group_coverage(ds, n_mc=200, rng=0, progress=False), 1)
    print(
        f"uqviz.group_coverage, n = {n}, {d} features (10 CovGap groupings, slab with 100 "
        f"directions, HSIC with 1000 permutations, 200 calibrated sets): {t_all:.1f} s"
    )

    # side by side with MAPIE on n = peer_n, the same directions
    if not os.path.exists(args.peer):
        print(f"MAPIE: {args.peer} not found, skipped")
        return
    np_ = args.peer_n
    xs = x[:np_]
    xs = (xs - xs.mean(axis=0)) / xs.std(axis=0)  # MAPIE on the standardised features
    y = rng.standard_normal(np_)
    inside = cover[:np_] == 1
    width = 1.0 + rng.random(np_)
    lo = np.where(inside, y - width * rng.random(np_), y + 0.1)  # outside: above y
    hi = lo + width
    seed = 7
    vv = np.random.RandomState(seed).randn(args.peer_directions, d)
    vv /= np.linalg.norm(vv, axis=1, keepdims=True)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "in.npz")
        np.savez(path, x=xs, y=y, lower=lo, upper=hi)
        script = os.path.join(tmp, "peer.py")
        with open(script, "w") as f:
            f.write(PEER_SCRIPT)
        out = subprocess.run(
            [args.peer, script, path, str(args.delta), str(args.peer_directions), str(seed)],
            capture_output=True,
            text=True,
            check=True,
        )
    peer = json.loads(out.stdout.strip().splitlines()[-1])
    c = ((lo <= y) & (y <= hi)).astype(np.uint8)
    t_ours, ours = best_of(lambda: _wsc(c, xs, vv, math.ceil(args.delta * np_)))
    data = uqviz.from_predictions(
        y,
        (lo + hi) / 2,
        lower=lo,
        upper=hi,
        level=0.9,
        features={f"x{k}": x[:np_, k] for k in range(d)},
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        api = uqviz.group_coverage(
            data,
            intervals="given",
            directions=vv,
            delta=args.delta,
            n_mc=2,
            n_perm=1,
            rng=0,
            progress=False,
        )
    api_wsc = float(api["estimate"].sel(measure="slab"))
    print(
        f"MAPIE 1.6.0 worst_slab_coverage, n = {np_}, {args.peer_directions} directions: "
        f"{peer['seconds']:.2f} s; uqviz {t_ours * 1000:.1f} ms (ratio "
        f"{peer['seconds'] / t_ours:.0f}x); WSC MAPIE {peer['wsc']!r}, uqviz {float(ours[0])!r}, "
        f"uqviz.group_coverage {api_wsc!r}: "
        f"{'equal' if peer['wsc'] == ours[0] == api_wsc else 'DIFFER'}"
    )
    print(f"load average {os.getloadavg()[0]:.2f}")


def _cov(cover, labels):
    sums, counts = kern.group_sums(cover[None].astype(float), labels, 10)
    return sums / counts, counts


if __name__ == "__main__":
    sys.exit(main())
