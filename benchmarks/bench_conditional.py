"""Conditional calibration on QM9_U0: LZMS per bin and the ordering study, timed.

1. LZMS with 100 equal-count bins of a conditioning variable and 5000 BCa
   replicates per bin (Pernot (2023), Fig. 3): ``uqviz.local_calibration`` against a
   reference implementation measured in the same run, ``scipy.stats.bootstrap``
   (method="BCa") called bin by bin. Prints both times (median of several
   calls after a warm-up), the ratio, and how well the two agree (same
   valid/invalid verdict per bin, endpoint differences in units of the
   bootstrap standard error). Target: <= 0.5 s.
2. The ordering study of Pernot (2023), Fig. 4: ``uqviz.conditional.ordering.ordering_study`` with
   N random orderings of ties (default 1000; 7e10 resampled draws), wall and
   CPU time, draws per second. Target: <= 60 s on 2 cores.
3. Stratified binning of a variable with every value distinct (uncalibrated QM9_E's uE,
   13 885 strata merged to >= 100 points): ``stratified_labels`` against the literal merging rule of
   ``tests/engine/test_binning.py`` (quadratic), same labels, both times and the ratio.

The machine may be shared: the load average before each measurement is printed.

Usage::

    UQVIZ_DATA_DIR=../shared/data python benchmarks/bench_conditional.py
    UQVIZ_DATA_DIR=../shared/data python benchmarks/bench_conditional.py --orderings 100
    ... --skip-scipy            # only uqviz timings
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings

import numpy as np
from scipy import stats

sys.path.insert(0, os.path.dirname(__file__))
from _common import median_time  # noqa: E402

import uqviz  # noqa: E402
from uqviz._array.binning import equal_count_starts  # noqa: E402
from uqviz.datasets import load_dataset  # noqa: E402
from uqviz.conditional.ordering import ordering_study  # noqa: E402

N_BINS = 100
B = 5000


def load():
    return "load average %.2f %.2f %.2f" % os.getloadavg()


def uqviz_lzms(ds, conditioning, seed=0):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return uqviz.local_calibration(
            ds, conditioning=conditioning, n_bins=N_BINS, n_boot=B, rng=seed
        )


def scipy_lzms(ds, conditioning, seed=0):
    """Reference: scipy's BCa interval of mean(Z^2), one call per bin (same bins)."""
    x = ds[conditioning].values
    z2 = (ds.E.values / ds.uE.values) ** 2
    order = np.argsort(x, kind="stable")
    starts, sizes = equal_count_starts(x.size, N_BINS)
    rng = np.random.default_rng(seed)
    lower, upper = np.empty(N_BINS), np.empty(N_BINS)
    for b, (s, n) in enumerate(zip(starts, sizes)):
        res = stats.bootstrap(
            (z2[order[s : s + n]],), np.mean, n_resamples=B, method="BCa", vectorized=True, rng=rng
        )
        lower[b], upper[b] = res.confidence_interval.low, res.confidence_interval.high
    return lower, upper


def bench_lzms(ds, conditioning, skip_scipy):
    uqviz_lzms(ds, conditioning)  # compile / load the numba kernels
    t_uq = median_time(uqviz_lzms, ds, conditioning, repeat=5)
    print(f"\nLZMS vs {conditioning}: {N_BINS} equal-count bins, B = {B} BCa per bin ({load()})")
    print(f"  uqviz.local_calibration        {t_uq:8.3f} s   (target <= 0.5 s)")
    if skip_scipy:
        return
    t0 = time.perf_counter()
    lo_sp, up_sp = scipy_lzms(ds, conditioning)
    t_sp = time.perf_counter() - t0
    print(f"  scipy.stats.bootstrap per bin  {t_sp:8.3f} s   ratio {t_sp / t_uq:6.0f}x")
    res = uqviz_lzms(ds, conditioning, seed=1)
    se = np.array([np.std(z2) / np.sqrt(len(z2)) for z2 in _bins_z2(ds, conditioning)])
    d_lo = (res.ci_lower.values - lo_sp) / se
    d_up = (res.ci_upper.values - up_sp) / se
    same = np.mean(res.valid.values == ((lo_sp <= 1.0) & (1.0 <= up_sp)))
    print(
        f"  agreement: same verdict in {100 * same:.0f}% of bins; endpoint differences "
        f"(uqviz - scipy) / se: lower {np.mean(d_lo):+.3f} +- {np.std(d_lo):.3f}, "
        f"upper {np.mean(d_up):+.3f} +- {np.std(d_up):.3f} (Monte Carlo noise of two "
        "independent bootstraps)"
    )


def _bins_z2(ds, conditioning):
    x = ds[conditioning].values
    z2 = (ds.E.values / ds.uE.values) ** 2
    order = np.argsort(x, kind="stable")
    starts, sizes = equal_count_starts(x.size, N_BINS)
    return [z2[order[s : s + n]] for s, n in zip(starts, sizes)]


def bench_ordering(ds, conditioning, n_orderings):
    ordering_study(
        ds, conditioning=conditioning, n_bins=N_BINS, n_orderings=2, n_boot=B, rng=0, progress=False
    )  # compile / load the numba kernels
    print(
        f"\nOrdering study vs {conditioning}: {n_orderings} orderings x {N_BINS} bins x "
        f"B = {B} ({load()})"
    )
    t0, c0 = time.perf_counter(), time.process_time()
    res = ordering_study(
        ds,
        conditioning=conditioning,
        n_bins=N_BINS,
        n_orderings=n_orderings,
        n_boot=B,
        rng=2023,
        progress=False,
    )
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    draws = (n_orderings + 1) * B * ds.sizes["point"]
    print(
        f"  wall {wall:7.1f} s  cpu {cpu:7.1f} s  ({cpu / max(wall, 1e-9):.2f} cores busy)  "
        f"{draws:.2e} draws, {draws / wall / 1e9:.2f} G draws/s  (target <= 60 s for 1000)"
    )
    print(
        f"  per ordering: {1e3 * wall / n_orderings:.1f} ms wall, "
        f"{1e3 * cpu / n_orderings:.1f} ms cpu; extrapolated to 1000 orderings: "
        f"{1000 * wall / n_orderings:.0f} s wall, {1000 * cpu / n_orderings / 2:.0f} s on "
        "2 idle cores"
    )
    print(
        f"  f_v: data order {float(res.fv_data):.2f}, mean {float(res.fv):.3f} "
        f"[{float(res.fv_lower):.2f}, {float(res.fv_upper):.2f}], with binomial noise "
        f"[{float(res.fv_binomial_lower):.2f}, {float(res.fv_binomial_upper):.2f}]  ({load()})"
    )


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--orderings", type=int, default=1000, help="orderings (default 1000)")
    p.add_argument("--conditioning", default="mass", help="QM9_U0 variable (default mass)")
    p.add_argument("--skip-scipy", action="store_true", help="do not time the reference")
    p.add_argument("--skip-ordering", action="store_true", help="only the LZMS timing")
    args = p.parse_args(argv)
    ds = load_dataset("QM9_U0")
    print(f"QM9_U0: M = {ds.sizes['point']}, {os.cpu_count()} cores, numba threads {_threads()}")
    bench_lzms(ds, args.conditioning, args.skip_scipy)
    bench_stratified()
    if not args.skip_ordering:
        bench_ordering(ds, args.conditioning, args.orderings)


def bench_stratified():
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir))
    from tests.engine.test_binning import _merge_small_by_list  # the tests' quadratic reference

    from uqviz._array.binning import stratified_labels

    x = load_dataset("QM9_E", calibrated=False)["uE"].values
    _, inverse, counts = np.unique(x, return_inverse=True, return_counts=True)
    t_new = median_time(stratified_labels, x, 100)
    t0 = time.perf_counter()
    ref = _merge_small_by_list(counts, 100)[inverse]
    t_ref = time.perf_counter() - t0
    same = bool(np.array_equal(stratified_labels(x, 100), ref))
    print(
        f"stratified binning of {counts.size} distinct values: uqviz {t_new:.3f} s, literal "
        f"rule {t_ref:.2f} s, ratio {t_ref / t_new:.0f}x, same labels: {same}"
    )


def _threads():
    try:
        import numba

        return numba.get_num_threads()
    except ImportError:  # pragma: no cover
        return 0


if __name__ == "__main__":
    main()
