"""uqviz without numba: how much slower each analysis runs (issue 22, item 6).

Runs the same calls in two child processes, one with numba importable and one with it hidden
(``sys.modules["numba"] = None`` before ``import uqviz``, as where numba is not installed), each
call once to warm up and once timed, and prints the ratio measured in this run.

Usage: ``python benchmarks/bench_without_numba.py``
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import sys, time, warnings
if sys.argv[1] == "hide":
    sys.modules["numba"] = None
warnings.simplefilter("ignore")
import uqviz
ds = uqviz.synthetic.default_example()
CALLS = {
    "validate_average (ZMS, RCE, CC; M = 5000, n_boot = 10000)":
        lambda: uqviz.validate_average(ds, statistics=("ZMS", "RCE", "CC"), n_boot=10_000, rng=1),
    "simulated_reference (ENCE, normal D, n_mc = 10000)":
        lambda: uqviz.simulated_reference(ds, statistic="ENCE", n_mc=10_000, rng=1,
                                          progress=False),
    "report (M = 5000, n_boot = 2000, n_mc = 500, no figures)":
        lambda: uqviz.report(ds, n_boot=2000, n_mc=500, figures=False, remedy=False,
                             progress=False),
}
for label, call in CALLS.items():
    call()                                    # warm-up: compiled kernels, imports
    t0 = time.perf_counter()
    call()
    print(f"{label}\t{time.perf_counter() - t0:.4f}", flush=True)
"""


def run(mode):
    out = subprocess.run(
        [sys.executable, "-c", CHILD, mode], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout
    return dict(line.rsplit("\t", 1) for line in out.strip().splitlines())


def main():
    with_numba, without = run("keep"), run("hide")
    print(f"{'call':60s} {'numba':>8s} {'numpy':>8s} {'ratio':>6s}")
    for label, t_numba in with_numba.items():
        a, b = float(t_numba), float(without[label])
        print(f"{label:60s} {a:7.2f}s {b:7.2f}s {b / a:5.1f}x")


if __name__ == "__main__":
    main()
