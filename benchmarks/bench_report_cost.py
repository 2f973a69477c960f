"""Cost of the report with defaults, before and after the calibrated verdicts (issue 20).

Runs ``uqviz.report(QM9_U0)`` with its defaults (n_boot 10 000, n_mc 2000, features mass and
hetero_fraction, figures, remedy) side by side in one run: the baseline revision of uqviz
(a ``git worktree`` of ``--baseline``, default the last commit before issue 20) and the working
tree, each in a fresh process with one warm-up call (numba kernels compiled and cached), and
prints both times and their ratio. Target: ratio <= 1.5.

    python benchmarks/bench_report_cost.py [--baseline REV] [--dataset QM9_U0] [--repeat 1]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
BASELINE = "cd80ffa"  # main before issue 20 (verdicts)

CHILD = r"""
import sys, time, warnings
sys.path.insert(0, sys.argv[1])
warnings.simplefilter("ignore")
import uqviz
assert uqviz.__file__.startswith(sys.argv[1]), uqviz.__file__
ds = uqviz.datasets.load_dataset(sys.argv[2])
uqviz.report(ds, progress=False, n_boot=200, n_mc=50)  # warm-up: compile/load the kernels
times = []
for _ in range(int(sys.argv[3])):
    t0 = time.perf_counter()
    rep = uqviz.report(ds, progress=False)
    times.append(time.perf_counter() - t0)
print(min(times))
"""


def _time(src, dataset, repeat):
    env = {**os.environ, "PYTHONPATH": src, "MPLBACKEND": "Agg"}
    out = subprocess.run(
        [sys.executable, "-c", CHILD, src, dataset, str(repeat)],
        env=env,
        capture_output=True,
        text=True,
        cwd=tempfile.gettempdir(),
    )
    if out.returncode:
        raise RuntimeError(out.stderr[-2000:])
    return float(out.stdout.strip().splitlines()[-1])


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--baseline", default=BASELINE)
    p.add_argument("--dataset", default="QM9_U0")
    p.add_argument("--repeat", type=int, default=1)
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        wt = os.path.join(tmp, "baseline")
        subprocess.run(
            ["git", "-C", ROOT, "worktree", "add", "--detach", wt, args.baseline],
            check=True,
            capture_output=True,
        )
        try:
            before = _time(wt, args.dataset, args.repeat)
        finally:
            subprocess.run(
                ["git", "-C", ROOT, "worktree", "remove", "--force", wt], capture_output=True
            )
    after = _time(ROOT, args.dataset, args.repeat)
    ratio = after / before
    print(
        f"report({args.dataset}) with defaults: baseline {args.baseline} {before:.1f} s, "
        f"now {after:.1f} s, ratio {ratio:.2f} (target <= 1.5): "
        f"{'PASS' if ratio <= 1.5 else 'FAIL'}"
    )


if __name__ == "__main__":
    main()
