"""Shared helpers for the benchmark scripts: timing, peak memory, real data."""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import resource
import subprocess
import tempfile
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


def run_peer_script(script_text, arrays, repeat, needs):
    """Run ``script_text`` in the side environment of ``UQVIZ_PEER_PYTHON`` on ``arrays``.

    The script is called as ``script in.npz repeat prefix``; it saves each timed output as
    ``prefix_<name>.npy`` and prints ``{name: seconds}`` as JSON on its last line. Returns
    ``{name: (seconds, values)}``, or {} with a printed note when the variable is unset
    (``needs``: what the side environment must hold) or the script fails.
    """
    python = os.environ.get("UQVIZ_PEER_PYTHON", "").strip()
    if not python or not os.path.exists(python):
        print(
            f"peer not timed: set UQVIZ_PEER_PYTHON (the Python of a side environment with {needs})"
        )
        return {}
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "in.npz")
        np.savez(path, **arrays)
        script = os.path.join(tmp, "peer.py")
        with open(script, "w") as f:
            f.write(script_text)
        prefix = os.path.join(tmp, "out")
        proc = subprocess.run(
            [python, script, path, str(repeat), prefix], capture_output=True, text=True, check=False
        )
        if proc.returncode:
            print(f"peer failed; not timed:\n{proc.stderr[-2000:]}")
            return {}
        times = json.loads(proc.stdout.strip().splitlines()[-1])
        return {k: (t, np.load(f"{prefix}_{k}.npy")) for k, t in times.items()}
