"""Cross-fitted recalibration of QM9 plus its re-validation, timed; isotonic against sklearn.

1. For each method (scaling, linear, bvs on uE, bvs on mass, isotonic):
   ``uqviz.recalibrate`` (5 folds) of the uncalibrated QM9_E set (Busk et al. (2022),
   M = 13 885) and its re-validation: ``validate_average`` ZMS (10 000 BCa replicates) and
   100-bin LZMS (5 000 BCa replicates per bin) conditioned on uE and on mass. Target: the
   whole loop <= 2 s (median of several runs after a warm-up).
2. The isotonic fit + prediction on the same data: ``fit_recalibration(method="isotonic")``
   and ``apply`` against ``sklearn.isotonic.IsotonicRegression(increasing=True,
   out_of_bounds="clip")`` called directly in the same run, with the ratio and the largest
   relative difference of the recalibrated uncertainties.

The machine may be shared: the load average before each measurement is printed.

Usage::

    UQVIZ_DATA_DIR=../shared/data python benchmarks/bench_recalibration.py
    ... --repeat 3          # fewer repetitions
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from _common import median_time  # noqa: E402

import uqviz  # noqa: E402
from uqviz.datasets import load_dataset  # noqa: E402

TARGET = 2.0
METHODS = [("scaling", "uE"), ("linear", "uE"), ("bvs", "uE"), ("bvs", "mass"), ("isotonic", "uE")]


def _load():
    return os.getloadavg()[0]


def loop(ds, method, conditioning):
    """Cross-fitted recalibration and its re-validation; returns (times, summary)."""
    t0 = time.perf_counter()
    out = uqviz.recalibrate(ds, method=method, conditioning=conditioning, rng=0)
    t1 = time.perf_counter()
    zms = uqviz.validate_average(out, statistics=("ZMS",), rng=0).sel(statistic="ZMS")
    t2 = time.perf_counter()
    fv = []
    for c in ("uE", "mass"):
        loc = uqviz.local_calibration(out, statistic="ZMS", conditioning=c, n_bins=100, rng=0)
        fv.append(float(uqviz.fraction_valid(loc).estimate))
    t3 = time.perf_counter()
    return (t1 - t0, t2 - t1, t3 - t2, t3 - t0), (float(zms.estimate), bool(zms.valid), fv)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    warnings.simplefilter("ignore")  # tied values of isotonic uE, small-bin notes
    ds = load_dataset("QM9_E", calibrated=False)
    m = ds.sizes["point"]
    print(f"QM9_E uncalibrated: M = {m}; CPUs {os.cpu_count()}")
    before = uqviz.validate_average(ds, statistics=("ZMS",), rng=0).sel(statistic="ZMS")
    print(f"before: ZMS = {float(before.estimate):.3f} (valid {bool(before.valid)})\n")

    print(
        f"1. recalibrate (5 folds) + validate_average ZMS + 100-bin LZMS on uE and mass "
        f"(target <= {TARGET:g} s)"
    )
    print(
        f"{'method':<16}{'recal':>8}{'ZMS':>8}{'LZMS x2':>9}{'total':>8}  "
        f"{'ZMS after':>9}  f_v(uE) f_v(mass)  load"
    )
    worst = 0.0
    for method, cond in METHODS:
        loop(ds, method, cond)  # warm-up
        load = _load()
        runs = [loop(ds, method, cond) for _ in range(args.repeat)]
        times = np.median(np.array([r[0] for r in runs]), axis=0)
        zms, ok, fv = runs[0][1]
        worst = max(worst, times[3])
        label = method if cond == "uE" else f"{method} ({cond})"
        print(
            f"{label:<16}{times[0]:8.3f}{times[1]:8.3f}{times[2]:9.3f}{times[3]:8.3f}  "
            f"{zms:9.3f}{'*' if ok else ' '}  {fv[0]:7.2f} {fv[1]:9.2f}  {load:.1f}"
        )
    print(
        f"slowest loop {worst:.3f} s: {'OK' if worst <= TARGET else 'ABOVE'} the target "
        f"({TARGET:g} s); * = ZMS valid\n"
    )

    print("2. isotonic fit + prediction on all points, against sklearn called directly")
    try:
        from sklearn.isotonic import IsotonicRegression
    except ImportError:
        print("   scikit-learn is not installed (pip install scikit-learn): skipped")
        return
    u, e = ds["uE"].values, ds["E"].values

    def ours():
        return uqviz.fit_recalibration(ds, method="isotonic").apply(ds)["uE"].values

    def sklearn():
        iso = IsotonicRegression(increasing=True, out_of_bounds="clip").fit(u * u, e * e)
        return np.sqrt(iso.predict(u * u))

    load = _load()
    t_ours = median_time(ours, repeat=max(args.repeat, 5) * 4)
    t_sk = median_time(sklearn, repeat=max(args.repeat, 5) * 4)
    diff = float(np.max(np.abs(ours() / sklearn() - 1.0)))
    print(
        f"   uqviz {1e3 * t_ours:.2f} ms (Dataset in and out), sklearn {1e3 * t_sk:.2f} ms "
        f"(arrays): ratio uqviz/sklearn {t_ours / t_sk:.2f}; max relative difference "
        f"{diff:.1e}; load {load:.1f}"
    )


if __name__ == "__main__":
    main()
