"""BCa interval of ZMS: uqviz against scipy.stats.bootstrap, measured in the same run.

For each size M (calibrated NIG data, nu = 4) and B = 10^4 replicates, prints
the median wall time of each implementation, the speed ratio, the peak extra
memory of one call (forked process), and the endpoint differences over several
seeds in units of the bootstrap standard error.

Usage::

    python benchmarks/bench_bootstrap.py                # M = 2040 5000 13885 36150
    python benchmarks/bench_bootstrap.py --sizes 2040 13885 --seeds 3

scipy materialises the n x (n-1) jackknife unless ``batch`` is set: at M =
36150 that is ~10 GB, so scipy runs there with ``batch=2000`` (same numbers,
less memory, a little slower), as printed in the table.
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np
from scipy import stats

sys.path.insert(0, os.path.dirname(__file__))
from _common import median_time, run_isolated  # noqa: E402

from uqviz.engine.bootstrap import bootstrap_statistics  # noqa: E402

B = 10_000


def make_data(m, seed=0):
    rng = np.random.default_rng(seed)
    u = np.sqrt(2.0 / rng.gamma(2.0, 1.0, m))
    return u * rng.standard_normal(m), u


def zms(e, u, axis=-1):
    return np.mean((e / u) ** 2, axis=axis)


def uqviz_ci(e, u, seed, engine=None):
    r = bootstrap_statistics(e, u, ["ZMS"], n_boot=B, rng=seed, engine=engine)["ZMS"]
    return float(r.lower[0]), float(r.upper[0]), float(r.se[0])


def scipy_ci(e, u, seed, batch=None):
    res = stats.bootstrap(
        (e, u),
        zms,
        n_resamples=B,
        paired=True,
        vectorized=True,
        method="BCa",
        batch=batch,
        rng=np.random.default_rng(seed),
    )
    return float(res.confidence_interval.low), float(res.confidence_interval.high)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", type=int, nargs="+", default=[2040, 5000, 13885, 36150])
    p.add_argument("--seeds", type=int, default=5)
    p.add_argument(
        "--numpy-engine", action="store_true", help="also time the pure-numpy fallback engine"
    )
    args = p.parse_args(argv)

    uqviz_ci(*make_data(100), 0)  # compile numba kernels before timing
    head = (
        f"{'M':>6} {'uqviz s':>9} {'scipy s':>9} {'ratio':>7} {'uqviz MB':>9} "
        f"{'scipy MB':>9} {'d_low/se':>9} {'d_up/se':>8} {'MC sd/se':>9}  note"
    )
    print(f"BCa 95% interval of ZMS, B = {B}, {os.cpu_count()} cores")
    print(head)
    print("-" * len(head))
    for m in args.sizes:
        e, u = make_data(m)
        batch = 2000 if m > 20_000 else None
        t_uq = median_time(uqviz_ci, e, u, 1, repeat=5)
        _, mem_uq, _ = run_isolated(uqviz_ci, e, u, 1)
        t_sp, mem_sp, _ = run_isolated(scipy_ci, e, u, 1, batch)
        lows, ups, sps_low, sps_up, ses = [], [], [], [], []
        for s in range(args.seeds):
            lo, up, se = uqviz_ci(e, u, 100 + s)
            slo, sup = scipy_ci(e, u, 100 + s, batch)
            lows.append(lo)
            ups.append(up)
            ses.append(se)
            sps_low.append(slo)
            sps_up.append(sup)
        se = float(np.mean(ses))
        d_low = (np.mean(lows) - np.mean(sps_low)) / se
        d_up = (np.mean(ups) - np.mean(sps_up)) / se
        mc_sd = np.std(np.r_[lows, sps_low], ddof=1) / se
        note = f"scipy batch={batch}" if batch else ""
        print(
            f"{m:>6} {t_uq:>9.3f} {t_sp:>9.2f} {t_sp / t_uq:>7.0f} {mem_uq:>9.1f} "
            f"{mem_sp:>9.0f} {d_low:>9.3f} {d_up:>8.3f} {mc_sd:>9.3f}  {note}"
        )
        if args.numpy_engine:
            t_np = median_time(uqviz_ci, e, u, 1, "numpy", repeat=2)
            print(f"{'':>6} numpy fallback engine: {t_np:.3f} s ({t_sp / t_np:.0f}x scipy)")
    print(
        "d_low, d_up: mean endpoint difference uqviz - scipy over "
        f"{args.seeds} seeds, in units of the bootstrap se; MC sd: spread of the lower "
        "endpoint across seeds and implementations (same units)."
    )


if __name__ == "__main__":
    main()
