"""C-QCE of 10^5 points in 3-D (covariance input, 19 quantile levels): uqviz vs a reference.

Target: uqviz.quantile.qce(..., marginal=False) in <= 1 s. The reference, timed
in the same run on the same input, is netcal 1.4.0 (``QCE.measure``) when a
Python with netcal is found (``--netcal-python``, default
.venv-netcal/bin/python; run as a subprocess, timing the call only, not
the import), else a naive per-point numpy/scipy implementation (explicit
inverse and determinant per point, ``scipy.stats.binned_statistic``). Prints
the median wall times, their ratio and the largest difference of the C-QCE
values.

Usage::

    python benchmarks/bench_quantile.py                 # n = 100000, d = 3
    python benchmarks/bench_quantile.py --n 20000 --reference naive
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
from scipy import stats

sys.path.insert(0, os.path.dirname(__file__))
from _common import median_time  # noqa: E402

from uqviz.quantile import qce  # noqa: E402

QUANTILES = np.linspace(0.05, 0.95, 19)
BINS = 10

NETCAL_SCRIPT = r"""
import json, sys, time
import numpy as np
from netcal.metrics import QCE
z = np.load(sys.argv[1])
q = z["q"]
metric = QCE(bins=int(sys.argv[2]), marginal=False)
args = ((z["mean"], z["cov"]), z["y"])
metric.measure(*args, q=q, kind="meanstd", reduction="none")   # warm-up
times = []
for _ in range(int(sys.argv[3])):
    t0 = time.perf_counter()
    out = metric.measure(*args, q=q, kind="meanstd", reduction="none")
    times.append(time.perf_counter() - t0)
print(json.dumps({"time": float(np.median(times)), "qce": np.asarray(out).tolist()}))
"""


def make_data(n, d=3, seed=0):
    """Correlated covariances over a decade of scales; observations 20 % wider."""
    rng = np.random.default_rng(seed)
    a = rng.normal(size=(n, d, d))
    cov = np.exp(rng.uniform(-1, 1, (n, 1, 1))) * (a @ np.swapaxes(a, -1, -2) + 0.3 * np.eye(d))
    mean = rng.normal(size=(n, d))
    y = mean + 1.2 * np.einsum("nij,nj->ni", np.linalg.cholesky(cov), rng.normal(size=(n, d)))
    return y, mean, cov


def uqviz_cqce(y, mean, cov):
    return qce(y, mean, cov, levels=QUANTILES, n_bins=BINS, marginal=False, n_boot=0)["qce"].values


def naive_cqce(y, mean, cov):
    """Per-point loop: explicit inverse, determinant, then scipy binning."""
    n, d = y.shape
    eps = np.empty(n)
    sg = np.empty(n)
    for i in range(n):
        r = y[i] - mean[i]
        eps[i] = r @ np.linalg.inv(cov[i]) @ r
        sg[i] = np.sqrt(np.linalg.det(cov[i]) ** (1.0 / d))
    edges = np.linspace(sg.min(), sg.max(), BINS + 1)
    counts = np.histogram(sg, bins=edges)[0]
    out = np.empty(QUANTILES.size)
    for j, t in enumerate(QUANTILES):
        inside = (eps <= stats.chi2.ppf(t, d)).astype(float)
        freq = np.nan_to_num(stats.binned_statistic(sg, inside, "mean", bins=edges)[0])
        out[j] = np.sum(counts * np.abs(freq - t)) / counts.sum()
    return out


def run_netcal(python, y, mean, cov, repeat):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "input.npz")
        np.savez(path, y=y, mean=mean, cov=cov, q=QUANTILES)
        script = os.path.join(tmp, "run_netcal.py")
        with open(script, "w") as f:
            f.write(NETCAL_SCRIPT)
        proc = subprocess.run(
            [python, script, path, str(BINS), str(repeat)],
            capture_output=True,
            text=True,
            check=True,
        )
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    return res["time"], np.asarray(res["qce"])


def netcal_available(python):
    if not (python and os.path.exists(python)):
        return False
    proc = subprocess.run(
        [python, "-c", "import netcal; print(netcal.__version__)"], capture_output=True, text=True
    )
    return proc.returncode == 0 and proc.stdout.strip() == "1.4.0"


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=100_000)
    p.add_argument("--d", type=int, default=3)
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--reference", choices=["auto", "netcal", "naive"], default="auto")
    p.add_argument("--netcal-python", default=".venv-netcal/bin/python")
    args = p.parse_args(argv)

    y, mean, cov = make_data(args.n, args.d)
    print(
        f"C-QCE, n = {args.n}, d = {args.d}, {QUANTILES.size} quantile levels, {BINS} bins "
        f"(median of {args.repeat} runs after a warm-up)"
    )
    t_uq = median_time(uqviz_cqce, y, mean, cov, repeat=args.repeat)
    ours = uqviz_cqce(y, mean, cov)
    print(f"  uqviz   {t_uq:8.3f} s   {'OK' if t_uq <= 1.0 else 'SLOWER THAN'} (target <= 1 s)")

    ref = args.reference
    if ref == "auto":
        ref = "netcal" if netcal_available(args.netcal_python) else "naive"
    if ref == "netcal":
        t_ref, theirs = run_netcal(args.netcal_python, y, mean, cov, args.repeat)
        name = "netcal 1.4.0 (subprocess, call only)"
    else:
        t0 = time.perf_counter()
        theirs = naive_cqce(y, mean, cov)
        t_ref = time.perf_counter() - t0
        name = "naive per-point numpy/scipy (1 run)"
    print(f"  {name}: {t_ref:8.3f} s")
    print(f"  ratio reference / uqviz: {t_ref / t_uq:6.1f}x")
    print(f"  max |C-QCE difference| over the levels: {np.max(np.abs(ours - theirs)):.2e}")


if __name__ == "__main__":
    main()
