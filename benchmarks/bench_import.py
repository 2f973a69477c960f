"""How long ``import uqviz`` takes, above the floor of ``import numpy, xarray`` (issue 25, item 2).

Times each import in fresh child processes (``--runs`` of each, default 5, interleaved so that
both see the same load), wall clock and CPU time of the child (the CPU time varies less with the
load of a shared machine), prints the medians, the difference (the target: at most 0.5 s above
the floor) and the load average, then the modules that take longest under
``python -X importtime -c "import uqviz"`` (cumulative time, one extra run) and whether the
heavy modules (scipy.stats, matplotlib, seaborn, dask, sklearn, numba) were imported.
The machine may be shared: compare the two medians of one run, not numbers of two runs.

Usage: ``python benchmarks/bench_import.py [--runs 5] [--top 15]``
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: the statements timed, each in its own fresh interpreter
STATEMENTS = {"numpy, xarray (floor)": "import numpy, xarray", "uqviz": "import uqviz"}
#: modules a plain ``import uqviz`` should leave alone
HEAVY = (
    "scipy.stats",
    "scipy.optimize",
    "matplotlib",
    "seaborn",
    "dask",
    "sklearn",
    "numba",
    "pooch",
)
CHILD = (
    "import sys, time\nt0, c0 = time.perf_counter(), time.process_time()\n{statement}\n"
    "print(time.perf_counter() - t0, time.process_time() - c0)\n"
    "print(' '.join(m for m in {heavy!r} if m in sys.modules))\n"
)


def child_env() -> dict:
    """This environment, with the worktree first on the path (the uqviz measured is this one)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(ROOT)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    )
    return env


def time_import(statement: str) -> tuple[float, float, list[str]]:
    """Seconds (wall clock, then CPU of the process) to run ``statement`` in a fresh
    interpreter, and the heavy modules it loaded."""
    out = subprocess.run(
        [sys.executable, "-c", CHILD.format(statement=statement, heavy=HEAVY)],
        cwd=ROOT,
        env=child_env(),
        check=True,
        capture_output=True,
        text=True,
    ).stdout.splitlines()
    wall, cpu = (float(x) for x in out[0].split())
    return wall, cpu, out[1].split() if len(out) > 1 else []


def importtime_top(top: int) -> list[tuple[float, float, str]]:
    """The ``top`` modules by cumulative time under ``-X importtime`` (s cumulative, s self)."""
    err = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import uqviz"],
        cwd=ROOT,
        env=child_env(),
        check=True,
        capture_output=True,
        text=True,
    ).stderr
    rows = []
    for line in err.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        own, cumulative, name = line[len("import time:") :].split("|")
        rows.append((int(cumulative) / 1e6, int(own) / 1e6, name.rstrip()))
    return sorted(rows, reverse=True)[:top]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="fresh processes per statement")
    parser.add_argument("--top", type=int, default=15, help="modules listed from -X importtime")
    args = parser.parse_args(argv)

    times = {label: [] for label in STATEMENTS}
    cpu = {label: [] for label in STATEMENTS}
    loaded = []
    for _ in range(args.runs):
        for label, statement in STATEMENTS.items():
            seconds, cpu_seconds, heavy = time_import(statement)
            times[label].append(seconds)
            cpu[label].append(cpu_seconds)
            if label == "uqviz":
                loaded = heavy
    medians = {label: statistics.median(values) for label, values in times.items()}
    cpu_medians = {label: statistics.median(values) for label, values in cpu.items()}
    floor, uq = medians["numpy, xarray (floor)"], medians["uqviz"]
    cpu_floor, cpu_uq = cpu_medians["numpy, xarray (floor)"], cpu_medians["uqviz"]

    print(
        f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}  "
        f"({os.cpu_count()} cores), {args.runs} fresh processes each"
    )
    print("wall clock (what a user waits for; inflated by the load) and CPU time of the process")
    print("(less sensitive to the load of a shared machine)")
    print(f"{'import':24s} {'median':>8s} {'min':>8s} {'max':>8s} {'CPU med':>8s}")
    for label, values in times.items():
        print(
            f"{label:24s} {medians[label]:7.3f}s {min(values):7.3f}s {max(values):7.3f}s "
            f"{cpu_medians[label]:7.3f}s"
        )
    print(
        f"{'uqviz above the floor':24s} {uq - floor:7.3f}s {'':17s} {cpu_uq - cpu_floor:7.3f}s"
        f"  (target <= 0.500 s; ratio uqviz / floor {uq / floor:.2f} wall, "
        f"{cpu_uq / cpu_floor:.2f} CPU)"
    )
    print(f"heavy modules loaded by import uqviz: {', '.join(loaded) or 'none'}")
    print(f"\ntop {args.top} modules by cumulative time (python -X importtime -c 'import uqviz'):")
    print(f"{'cumulative':>10s} {'self':>8s}  module")
    for cumulative, own, name in importtime_top(args.top):
        print(f"{cumulative:9.3f}s {own:7.3f}s  {name}")


if __name__ == "__main__":
    main()
