"""Shared helpers for the benchmark scripts: timing, peak memory, real data."""

from __future__ import annotations

import multiprocessing as mp
import os
import resource
import time

import numpy as np


def rss_mb() -> float:
    """Current resident set size of this process, MB."""
    with open("/proc/self/statm") as f:
        pages = int(f.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def _peak_mb() -> float:
    """Peak resident set (VmHWM) of this process since the last reset, MB."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _child(conn, func, args):
    func(*args)  # warm-up: imports, compiled-kernel loading, allocator pools
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # reset the peak resident set to the current one
    base = rss_mb()
    t0 = time.perf_counter()
    out = func(*args)
    dt = time.perf_counter() - t0
    conn.send((dt, max(0.0, _peak_mb() - base), out))
    conn.close()


def run_isolated(func, *args):
    """Run ``func(*args)`` in a fresh process; return (seconds, peak extra MB, result).

    The child runs ``func`` once to warm up, resets its peak resident set
    (Linux ``clear_refs``), then runs it again: the peak is the growth of the
    resident set during that second call, the memory the computation needs.
    """
    ctx = mp.get_context("spawn")  # fork is unsafe after numba started OpenMP threads
    parent, child = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(child, func, args))
    proc.start()
    result = parent.recv()
    proc.join()
    return result


def median_time(func, *args, repeat=5):
    """Median wall time of ``repeat`` calls (after one warm-up call)."""
    func(*args)
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        func(*args)
        times.append(time.perf_counter() - t0)
    return float(np.median(times))
