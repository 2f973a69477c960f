"""Pernot (2024b) Table IV in one call: 9 literature sets x {ZMS, RCE}, 10^4 BCa replicates.

Times ``uqviz.validate_average`` on the DataTree of the nine sets (target
<= 1 s on 2 cores; the authors' R code takes about 40 s) and, in the same run,
the same intervals with ``scipy.stats.bootstrap(method="BCa", paired=True)``
set by set, then prints the ratio. Needs the data (``UQVIZ_DATA_DIR``).

Usage::

    UQVIZ_DATA_DIR=../shared/data python benchmarks/bench_table_iv.py [--no-scipy]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np
from scipy import stats

sys.path.insert(0, os.path.dirname(__file__))
from _common import median_time  # noqa: E402

import uqviz  # noqa: E402

B = 10_000


def zms(e, u, axis=-1):
    return np.mean((e / u) ** 2, axis=axis)


def rce(e, u, axis=-1):
    return 1.0 - np.sqrt(np.mean(e**2, axis=axis) / np.mean(u**2, axis=axis))


def scipy_table(tree):
    rows = {}
    for name, child in tree.children.items():
        e, u = child["E"].values, child["uE"].values
        for label, f in [("ZMS", zms), ("RCE", rce)]:
            res = stats.bootstrap(
                (e, u),
                f,
                n_resamples=B,
                paired=True,
                vectorized=True,
                method="BCa",
                batch=2000,
                rng=np.random.default_rng(0),
            )
            rows[name, label] = (res.confidence_interval.low, res.confidence_interval.high)
    return rows


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--no-scipy", action="store_true", help="skip the slow scipy reference")
    args = p.parse_args(argv)
    tree = uqviz.datasets.load_collection("pernot2024")
    m_total = sum(c.sizes["point"] for c in tree.children.values())
    uqviz.validate_average(tree, n_boot=100, rng=0)  # load compiled kernels

    def run():
        return uqviz.validate_average(tree, statistics=("ZMS", "RCE"), n_boot=B, rng=1)

    t_uq = median_time(run, repeat=5)
    res = run()
    print(f"Table IV: 9 sets ({m_total} points) x {{ZMS, RCE}}, B = {B}, {os.cpu_count()} cores")
    print(f"uqviz.validate_average: {t_uq:.3f} s (median of 5)")
    if args.no_scipy:
        return
    t0 = time.perf_counter()
    ref = scipy_table(tree)
    t_sp = time.perf_counter() - t0
    print(f"scipy.stats.bootstrap BCa, set by set: {t_sp:.1f} s  -> ratio {t_sp / t_uq:.0f}x")
    print(f"{'set':<26}{'stat':>5}{'uqviz CI':>24}{'scipy CI':>24}")
    for (name, label), (lo, hi) in ref.items():
        r = res.sel(dataset=name, statistic=label)
        print(
            f"{name:<26}{label:>5}   [{float(r.ci_lower):8.4f}, {float(r.ci_upper):8.4f}]"
            f"   [{lo:8.4f}, {hi:8.4f}]"
        )


if __name__ == "__main__":
    main()
