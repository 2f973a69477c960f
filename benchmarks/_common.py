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


def _child(conn, func, args):
    base = rss_mb()
    t0 = time.perf_counter()
    out = func(*args)
    dt = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # kB -> MB
    conn.send((dt, max(0.0, peak - base), out))
    conn.close()


def run_isolated(func, *args):
    """Run ``func(*args)`` in a forked process; return (seconds, peak extra MB, result).

    The peak is the growth of the child's maximum resident set over its size
    at the start, i.e. the memory the computation itself needed.
    """
    ctx = mp.get_context("fork")
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
