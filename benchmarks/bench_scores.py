"""Scores and curves on 10^6 points: uqviz vs uncertainty-toolbox 0.1.1, in the same run.

Target (issue 13): every score and curve on 10^6 points in <= 1 s. Times (median of
``--repeat`` calls after a warm-up) of

* uqviz: ``interval_coverage`` (5 levels), ``calibration_curve`` (100 levels, the three
  scalars), ``proper_scores`` of each score alone (``n_boot=0``) and of all four, for the
  normal and the unit-variance Student-t (nu = 6) D; ``local_calibration(statistic="PICP")``
  (100 bins of uE); and the paired bootstrap of the four scores (``--n-boot`` replicates,
  timed once);
* uncertainty-toolbox 0.1.1 on the same (y_pred, y_std, y_true): ``miscalibration_area``,
  ``mean_absolute_calibration_error``, ``root_mean_squared_calibration_error`` (interval
  proportions, 100 levels, ``vectorized=False`` and ``True``), ``nll_gaussian``,
  ``crps_gaussian``, ``check_score``, ``interval_score`` and ``sharpness`` - run in a
  Python where it is installed (``--uct-python``, default .venv-uct/bin/python) as a
  subprocess that times the calls only (not the import); skipped with a message when that
  Python is absent.

Prints one row per task: uqviz time, uncertainty-toolbox time, their ratio and the
largest difference of the values.

Usage::

    python benchmarks/bench_scores.py                  # n = 10^6
    python benchmarks/bench_scores.py --n 100000 --repeat 3 --n-boot 0
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from _common import median_time  # noqa: E402

import uqviz  # noqa: E402

UCT_SCRIPT = r"""
import json, sys, time
import numpy as np
import uncertainty_toolbox as uct
from uncertainty_toolbox import metrics_calibration as mc
z = np.load(sys.argv[1])
args = (z["y_pred"], z["y_std"], z["y_true"])
repeat = int(sys.argv[2])
skip_slow = sys.argv[3] == "1"
tasks = {
    "miscalibration_area": lambda: mc.miscalibration_area(*args),
    "mace": lambda: mc.mean_absolute_calibration_error(*args, vectorized=True),
    "rmsce": lambda: mc.root_mean_squared_calibration_error(*args, vectorized=True),
    "nll": lambda: uct.nll_gaussian(*args),
    "crps": lambda: uct.crps_gaussian(*args),
    "check": lambda: uct.check_score(*args),
    "interval": lambda: uct.interval_score(*args),
    "sharpness": lambda: uct.sharpness(args[1]),
}
if not skip_slow:  # the default path of MACE/RMSCE: a Python loop over the points
    tasks["mace_loop"] = lambda: mc.mean_absolute_calibration_error(*args)
out = {}
for name, f in tasks.items():
    value = f()  # warm-up
    times = []
    for _ in range(1 if name == "mace_loop" else repeat):
        t0 = time.perf_counter()
        value = f()
        times.append(time.perf_counter() - t0)
    out[name] = {"time": float(np.median(times)), "value": float(value)}
print(json.dumps(out))
"""


def make_data(n, seed=0):
    """Heteroscedastic predictions, errors 20 % wider than the uncertainties, t6 tails."""
    rng = np.random.default_rng(seed)
    y_pred = rng.normal(0.0, 3.0, n)
    y_std = np.exp(rng.normal(-0.5, 0.5, n))
    y_true = y_pred + 1.2 * y_std * rng.standard_t(6.0, n) * np.sqrt(4.0 / 6.0)
    return y_pred, y_std, y_true


def run_uct(python, y_pred, y_std, y_true, repeat, skip_slow):
    if not os.path.exists(python):
        print(
            f"uncertainty-toolbox: {python} not found; skipped (create it with "
            "python3 -m venv .venv-uct && .venv-uct/bin/pip install "
            "uncertainty-toolbox==0.1.1)"
        )
        return {}
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "in.npz")
        np.savez(path, y_pred=y_pred, y_std=y_std, y_true=y_true)
        script = os.path.join(tmp, "uct.py")
        with open(script, "w") as f:
            f.write(UCT_SCRIPT)
        proc = subprocess.run(
            [python, script, path, str(repeat), "1" if skip_slow else "0"],
            capture_output=True,
            text=True,
            check=False,
        )
    if proc.returncode:
        print(f"uncertainty-toolbox failed; skipped:\n{proc.stderr[-2000:]}")
        return {}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument(
        "--n-boot",
        type=int,
        default=1000,
        help="replicates of the timed bootstrap of the four scores (0: skip)",
    )
    ap.add_argument("--uct-python", default=".venv-uct/bin/python")
    ap.add_argument(
        "--uct-loop",
        action="store_true",
        help="also time uncertainty-toolbox's default (non-vectorized) MACE",
    )
    args = ap.parse_args(argv)

    y_pred, y_std, y_true = make_data(args.n)
    ds = uqviz.from_arrays(y_true - y_pred, y_std)
    print(f"n = {args.n} points; {os.cpu_count()} cores; median of {args.repeat} calls")

    def curve():
        return uqviz.calibration_curve(ds)

    def scores(which, generative="normal"):
        return lambda: uqviz.proper_scores(ds, scores=which, generative=generative, n_boot=0)

    def local_picp():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return uqviz.local_calibration(ds, statistic="PICP", n_bins=100)

    ours = {}
    c = curve()
    t_curve = median_time(curve, repeat=args.repeat)
    for name in ("miscalibration_area", "mace", "rmsce"):
        ours[name] = (t_curve, float(c[name]))
    ours["interval_coverage"] = (
        median_time(lambda: uqviz.interval_coverage(ds), repeat=args.repeat),
        float("nan"),
    )
    for name in ("nll", "crps", "check", "interval"):
        f = scores((name,))
        ours[name] = (median_time(f, repeat=args.repeat), float(f()["estimate"][0]))
        f = scores((name,), "t6")
        ours[f"{name} (t6)"] = (median_time(f, repeat=args.repeat), float(f()["estimate"][0]))
    f = scores(("nll",))
    ours["sharpness"] = (
        median_time(lambda: float(f()["sharpness"]), repeat=args.repeat),
        float(f()["sharpness"]),
    )  # computed by every call (with NLL here)
    f = scores(("nll", "crps", "check", "interval"))
    ours["all four scores"] = (median_time(f, repeat=args.repeat), float("nan"))
    f = scores(("nll", "crps", "check", "interval"), "t6")
    ours["all four scores (t6)"] = (median_time(f, repeat=args.repeat), float("nan"))
    ours["local PICP, 100 bins"] = (median_time(local_picp, repeat=args.repeat), float("nan"))
    if args.n_boot:
        t0 = time.perf_counter()
        uqviz.proper_scores(ds, n_boot=args.n_boot, rng=0)
        ours[f"four scores + BCa, n_boot={args.n_boot}"] = (time.perf_counter() - t0, float("nan"))

    theirs = run_uct(args.uct_python, y_pred, y_std, y_true, args.repeat, not args.uct_loop)
    print(f"\n{'task':<34} {'uqviz [s]':>10} {'uct [s]':>10} {'uct/uqviz':>10} {'|diff|':>9}")
    for name, (t, v) in ours.items():
        ref = theirs.get(name)
        if ref is None:
            print(f"{name:<34} {t:10.3f} {'-':>10} {'-':>10} {'-':>9}")
        else:
            print(
                f"{name:<34} {t:10.3f} {ref['time']:10.3f} {ref['time'] / t:10.1f} "
                f"{abs(ref['value'] - v):9.1e}"
            )
    if "mace_loop" in theirs:
        print(
            f"{'mace (uct default, loop)':<34} {ours['mace'][0]:10.3f} "
            f"{theirs['mace_loop']['time']:10.3f} "
            f"{theirs['mace_loop']['time'] / ours['mace'][0]:10.1f} "
            f"{abs(theirs['mace_loop']['value'] - ours['mace'][1]):9.1e}"
        )
    slow = [n for n, (t, _) in ours.items() if t > 1.0 and "n_boot" not in n]
    print("\ntarget (<= 1 s per score or curve): " + ("met" if not slow else f"NOT met for {slow}"))


if __name__ == "__main__":
    main()
