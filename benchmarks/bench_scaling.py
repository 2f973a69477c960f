"""Scaling of the bootstrap with the data size M: the cache-blocked sampler (issue 15).

For M = 1e3 ... 1e6 (1e7 with ``--large``), on calibrated synthetic data:

- ``validate_average`` of ZMS and RCE with B = 10^4 replicates (M x B draws),
- ``local_calibration`` of ZMS (LZMS) on 100 equal-count bins with B = 10^3 replicates,

each with its wall time, draws per second, the ratio of that rate to the *floor* and the
peak memory; and the cost of the calibrated null of f_v (issue 36, item 5): LZMS on 100 bins,
B = 10^3, with its default null (``n_mc`` = 2000 simulated bins, each of the bin's size capped
at ``NULL_MAX_SIZE`` points) against the bins' bootstrap alone (``n_mc=0``): the two times,
their ratio (target <= 1.5), the peak memory each call adds over its inputs and the null's
own addition (target <= 4 times the inputs), with PASS/FAIL; then the exact power of the
f_v test with fewer simulated bins (``budget_power``): why the time target is not met where
bins are below ``NULL_MAX_SIZE`` points. The floor is a minimal fused kernel measured in the
same run: xoshiro256** outputs cut into five 12-bit indices, a gather-and-add of the same
number of columns from 4096 cache-resident points, on all numba threads; it does nothing else
(no block counts, no jackknife, no interval). Peak memory is the growth of the resident set
of a fresh process during one call (after a warm-up call that also builds the data; B reduced
to 640: the memory does not depend on B; malloc's mmap threshold lowered so that freed blocks
leave the resident set), in MB and in units of the input arrays (E and uE, 16 bytes a
point); beside it the peak of numpy's allocations traced by ``tracemalloc`` in this process
(numba's own allocations, the (B, k) replicate sums and per-task block counts, are not
traced).
The load average of the machine is printed on every row: other work on the cores slows
every column alike.

Usage::

    python benchmarks/bench_scaling.py            # M = 1e3 1e4 1e5 1e6
    python benchmarks/bench_scaling.py --large    # and 1e7 (about 3 minutes more)
    python benchmarks/bench_scaling.py --sizes 1000000 --unblocked   # + the unblocked sampler
    python benchmarks/bench_scaling.py --tables null --sizes 10000 100000 1000000 10000000
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import tracemalloc
import warnings

# Large blocks by mmap, returned to the system when freed: the growth of the resident set
# of the measured call is then not hidden by memory the warm-up call left in malloc's heap.
os.environ.setdefault("MALLOC_MMAP_THRESHOLD_", "65536")

import numba
import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from _common import run_isolated  # noqa: E402

import uqviz  # noqa: E402
from uqviz._array import resample as R  # noqa: E402

B_AVERAGE = 10_000
B_LOCAL = 1_000
N_BINS = 100


def load():
    return os.getloadavg()[0]


_DATA = {}


def dataset(m):
    """Calibrated data of M points (u^2 inverse-gamma, Z normal), built once per process."""
    if m not in _DATA:
        rng = np.random.default_rng(0)
        u = np.sqrt(2.0 / rng.gamma(3.0, 1.0, m))
        _DATA.clear()
        _DATA[m] = uqviz.from_arrays(u * rng.standard_normal(m), u)
    return _DATA[m]


def average(m, n_boot=B_AVERAGE):
    ds = dataset(m)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        uqviz.validate_average(ds, statistics=("ZMS", "RCE"), n_boot=n_boot, rng=1)


def local(m, n_boot=B_LOCAL, n_mc=None):
    ds = dataset(m)
    kw = {} if n_mc is None else {"n_mc": n_mc}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        uqviz.local_calibration(ds, statistic="ZMS", n_bins=N_BINS, n_boot=n_boot, rng=1, **kw)


def local_alone(m, n_boot=B_LOCAL):
    """The bins' bootstrap alone: LZMS without its calibrated null."""
    local(m, n_boot, n_mc=0)


def local_null(m, n_boot=B_LOCAL):
    """LZMS with its default calibrated null of f_v (n_mc = NULL_N_MC)."""
    local(m, n_boot)


@numba.njit(parallel=True)
def _floor_kernel(part, n_tasks, per_task):
    # per task: its own xoshiro256** stream, per_task draws of five 12-bit indices per
    # output, gather-and-add of the columns of part (4096 cache-resident points)
    width = part.shape[1]
    out = np.zeros((n_tasks, width))
    mask = np.uint64(4095)
    for t in numba.prange(n_tasks):
        s = R.task_stream(np.uint64(12345), t)
        a0 = 0.0
        a1 = 0.0
        a2 = 0.0
        for _ in range(per_task // 5):
            x = R.xoshiro_next(s)
            i1 = np.int64(x & mask)
            i2 = np.int64((x >> np.uint64(12)) & mask)
            i3 = np.int64((x >> np.uint64(24)) & mask)
            i4 = np.int64((x >> np.uint64(36)) & mask)
            i5 = np.int64((x >> np.uint64(48)) & mask)
            a0 += part[i1, 0] + part[i2, 0] + part[i3, 0] + part[i4, 0] + part[i5, 0]
            if width == 3:
                a1 += part[i1, 1] + part[i2, 1] + part[i3, 1] + part[i4, 1] + part[i5, 1]
                a2 += part[i1, 2] + part[i2, 2] + part[i3, 2] + part[i4, 2] + part[i5, 2]
        out[t, 0] = a0
        if width == 3:
            out[t, 1] = a1
            out[t, 2] = a2
    return out


def floor_rate(width, draws=2e9):
    """Draws per second of the fused RNG + gather kernel on cache-resident data."""
    part = np.random.default_rng(0).random((4096, width))
    n_tasks = 64
    _floor_kernel(part, 2, 1000)
    per_task = int(draws / n_tasks)
    best = 0.0
    for _ in range(3):
        t0 = time.perf_counter()
        _floor_kernel(part, n_tasks, per_task)
        best = max(best, n_tasks * per_task / (time.perf_counter() - t0))
    return best


def timed(func, m, repeat):
    func(min(m, 20_000), 64)  # compile / load the kernels
    best = np.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        func(m)
        best = min(best, time.perf_counter() - t0)
    return best


def unblocked_rate(m, draws=2e9):
    """Draws per second of resample_sums on three columns with blocking switched off."""
    cols = np.random.default_rng(0).random((m, 3))
    n_boot = max(BLOCKS := R.BLOCK, int(draws / m) // BLOCKS * BLOCKS)
    saved = R.BLOCKED_ABOVE
    try:
        R.BLOCKED_ABOVE = np.iinfo(np.int64).max
        R.resample_sums(cols[:1000], 64, seed=1)
        t0 = time.perf_counter()
        R.resample_sums(cols, n_boot, seed=1)
        return m * n_boot / (time.perf_counter() - t0)
    finally:
        R.BLOCKED_ABOVE = saved


def cache_sizes():
    """(level, size) of the data caches of cpu0 (sysfs), for the record."""
    out = []
    base = "/sys/devices/system/cpu/cpu0/cache"
    for entry in sorted(os.listdir(base)) if os.path.isdir(base) else []:
        try:
            with open(f"{base}/{entry}/type") as f:
                kind = f.read().strip()
            with open(f"{base}/{entry}/level") as f:
                level = f.read().strip()
            with open(f"{base}/{entry}/size") as f:
                size = f.read().strip()
        except OSError:
            continue
        if kind in ("Data", "Unified"):
            out.append(f"L{level} {size}")
    return ", ".join(out) or "unknown"


def null_table(sizes, repeat, memory=True):
    """Time and peak memory of the calibrated null of f_v against the bins' bootstrap."""
    from uqviz.conditional import null

    cap = getattr(null, "NULL_MAX_SIZE", None)  # None: before issue 36 (uncapped, whole copies)
    print(
        f"\ncalibrated null of f_v: LZMS, {N_BINS} equal-count bins, B = {B_LOCAL}, "
        f"n_mc = {null.NULL_N_MC} simulated bins of "
        f"{'the bin size' if cap is None else f'at most {cap} points'}\n"
    )
    head = (
        "| M | bin size | bootstrap alone (s) | with null (s) | ratio | <= 1.5 "
        "| peak added alone (MB, x inputs) | with null (MB, x inputs) "
        "| null's addition (x inputs) | <= 4 | load |"
    )
    print(head)
    print("|" + "---|" * (head.count("|") - 1))
    for m in sizes:
        if m < 2 * N_BINS:
            continue
        ld = load()
        t_alone = timed(local_alone, m, repeat)
        t_null = timed(local_null, m, repeat)
        ratio = t_null / t_alone
        inputs = 16.0 * m / 2**20
        if memory:
            mem_alone = run_isolated(local_alone, m, B_LOCAL)[1]
            mem_null = run_isolated(local_null, m, B_LOCAL)[1]
        else:
            mem_alone = mem_null = float("nan")
        added = (mem_null - mem_alone) / inputs
        print(
            f"| {m:.0e} | {m // N_BINS} | {t_alone:.2f} | {t_null:.2f} | {ratio:.2f} | "
            f"{'PASS' if ratio <= 1.5 else 'FAIL'} | {mem_alone:.1f} ({mem_alone / inputs:.2f}) "
            f"| {mem_null:.1f} ({mem_null / inputs:.2f}) | {added:.2f} | "
            f"{'PASS' if added <= 4 else ('FAIL' if added == added else 'n/a')} | "
            f"{ld:.1f}-{load():.1f} |",
            flush=True,
        )


def budget_power(n_bins=N_BINS, p0=0.93, alpha=0.05):
    """Why the null keeps its 2000 simulated bins where they cost more than 1.5 times the
    bins' bootstrap: the power of the f_v test with fewer of them.

    Exact (no simulation): ``n_bins`` bins, each valid with probability ``p0`` under the null
    (bins of about 100 points, Pernot (2023), section III.2.1) and ``p1`` under a
    miscalibration. With the null probability known (the limit of many simulated bins) the
    test is binomial; with ``K`` simulated bins, the test that accounts exactly for their
    Monte Carlo error is conditional on the total number of valid bins (real and simulated:
    hypergeometric, exact whatever ``p0``). A null within 1.5 times the bins' bootstrap at
    bins below ``NULL_MAX_SIZE`` allows ``K = n_bins / 2`` simulated bins at the same B.
    """
    from scipy import stats

    def power(p1, k_sim):
        x = np.arange(n_bins + 1)
        px = stats.binom.pmf(x, n_bins, p1)
        if k_sim is None:
            crit = stats.binom.cdf(x, n_bins, p0) <= alpha
            return float(px[crit].sum())
        y = np.arange(k_sim + 1)
        py = stats.binom.pmf(y, k_sim, p0)
        pv = stats.hypergeom.cdf(x[:, None], n_bins + k_sim, x[:, None] + y[None, :], n_bins)
        return float(np.sum(px[:, None] * py[None, :] * (pv <= alpha)))

    print(
        f"\npower of the f_v test ({n_bins} bins, null probability {p0} a bin, level "
        f"{alpha}), exact: with the null known (many simulated bins) or estimated from K "
        "simulated bins (conditional test)\n"
    )
    cols = [None, 2000, 200, n_bins, n_bins // 2]
    print(
        "| p1 (miscalibrated) | "
        + " | ".join("known" if k is None else f"K = {k}" for k in cols)
        + " |"
    )
    print("|---|" + "---|" * len(cols))
    for p1 in (p0, 0.88, 0.85, 0.80):
        print(f"| {p1} | " + " | ".join(f"{power(p1, k):.3f}" for k in cols) + " |", flush=True)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", type=int, nargs="+", default=None)
    p.add_argument("--large", action="store_true", help="add M = 1e7")
    p.add_argument("--repeat", type=int, default=1, help="timed calls per cell (best kept)")
    p.add_argument(
        "--unblocked", action="store_true", help="also time the unblocked sampler (slow at large M)"
    )
    p.add_argument("--no-memory", action="store_true")
    p.add_argument(
        "--tables",
        nargs="+",
        choices=("scaling", "null"),
        default=("scaling", "null"),
        help="the bootstrap scaling table, the calibrated-null table, or both",
    )
    args = p.parse_args(argv)
    sizes = args.sizes or [10**3, 10**4, 10**5, 10**6] + ([10**7] if args.large else [])
    if "scaling" not in args.tables:
        null_table(sizes, args.repeat, memory=not args.no_memory)
        budget_power()
        return
    print(
        f"numba threads {numba.get_num_threads()}, caches {cache_sizes()}, blocks of "
        f"2**{R.POINT_BITS} points above {R.BLOCKED_ABOVE} points"
    )
    floor3, floor1 = floor_rate(3), floor_rate(1)
    print(
        f"floor (fused RNG + gather, cache resident): 3 columns {floor3 / 1e9:.2f} G draws/s, "
        f"1 column {floor1 / 1e9:.2f} G draws/s (load {load():.2f})\n"
    )
    head = (
        "| case | M | B | time (s) | draws/s | / floor | peak MB (RSS) | / inputs "
        "| traced MB | / inputs | load |" + (" unblocked draws/s |" if args.unblocked else "")
    )
    print(head)
    print("|" + "---|" * (head.count("|") - 1))
    for m in sizes:
        for name, func, n_boot, floor in (
            ("ZMS+RCE", average, B_AVERAGE, floor3),
            ("LZMS 100 bins", local, B_LOCAL, floor1),
        ):
            if name.startswith("LZMS") and m < 2 * N_BINS:
                continue
            ld = load()
            dt = timed(func, m, args.repeat)
            rate = m * n_boot / dt
            if args.no_memory:
                mem = traced = float("nan")
            else:
                mem = run_isolated(func, m, 640)[1]
                tracemalloc.start()
                func(m, 640)
                traced = tracemalloc.get_traced_memory()[1] / 2**20
                tracemalloc.stop()
            inputs = 16.0 * m / 2**20
            row = (
                f"| {name} | {m:.0e} | {n_boot} | {dt:.2f} | {rate / 1e9:.2f} G | "
                f"{rate / floor:.2f} | {mem:.1f} | {mem / inputs:.2f} | {traced:.1f} | "
                f"{traced / inputs:.2f} | {ld:.1f}-{load():.1f} |"
            )
            if args.unblocked and name == "ZMS+RCE":
                row += f" {unblocked_rate(m) / 1e9:.2f} G |"
            print(row, flush=True)
    if "null" in args.tables:
        null_table(sizes, args.repeat, memory=not args.no_memory)
        budget_power()


if __name__ == "__main__":
    main()
