"""Scores of the forecast as given: uqviz vs properscoring 0.1 and scoringrules 0.10.0, same run.

Targets (issue 23): the CRPS of 10^5 points x 100 members <= 0.5 s and faster than
properscoring and scoringrules; the weighted interval score of 10^6 points x 23 levels
<= 0.5 s. Times (median of ``--repeat`` calls after a warm-up) of

* uqviz: the ensemble CRPS kernel (plain and fair from one sort,
  ``uqviz._array.predictive_scores.crps_ensemble_pair``), and ``predictive_scores`` of the
  ensemble (``n_boot=0``: the Dataset in, the result out); the WIS kernel and
  ``predictive_scores(scores=("wis",), n_boot=0)`` of the quantile forecast;
* the peers on the same arrays (written to a temporary file), in a subprocess run by the
  Python of the environment variable ``UQVIZ_PEER_PYTHON`` (a side environment with
  properscoring 0.1, scoringrules 0.10.0 and numba; the calls only are timed, after one
  warm-up call that compiles their numba kernels): properscoring ``crps_ensemble``;
  scoringrules ``crps_ensemble`` with the estimators ``"qd"`` (its default), ``"nrg"``,
  ``"fair"``, ``"pwm"`` (numba backend); scoringrules ``weighted_interval_score`` (numba
  backend: its numpy backend is wrong in 0.10.0, see tests/fixtures/make_predictive_fixtures.py).
  Without ``UQVIZ_PEER_PYTHON`` the peers are not timed (a printed note).

Prints one row per task: uqviz time, the peer's time, their ratio (peer / uqviz) and the
largest difference of the per-point values.

Usage::

    UQVIZ_PEER_PYTHON=/path/to/side-venv/bin/python python benchmarks/bench_predictive_scores.py
    python benchmarks/bench_predictive_scores.py --n-crps 20000 --n-wis 100000 --repeat 3
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np
from scipy import stats

sys.path.insert(0, os.path.dirname(__file__))
from _common import median_time, run_peer_script  # noqa: E402

import uqviz  # noqa: E402
from uqviz._array import predictive_scores as predictive_scores_kernels  # noqa: E402

#: the 23 levels of the COVID-19 Forecast Hub (Bracher et al. 2021): the median and 11
#: central intervals
WIS_LEVELS = np.array([0.01, 0.025, *np.round(np.arange(0.05, 0.951, 0.05), 3), 0.975, 0.99])

PEER_SCRIPT = r"""
import json, sys, time
import numpy as np
import properscoring as ps
import scoringrules as sr
z = np.load(sys.argv[1])
repeat = int(sys.argv[2])
out = {}

def timed(name, f):
    value = f()  # warm-up (numba compilation)
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        value = f()
        times.append(time.perf_counter() - t0)
    np.save(sys.argv[3] + "_" + name + ".npy", np.asarray(value, dtype=float))
    out[name] = float(np.median(times))

if "y" in z.files:
    y, x = z["y"], z["x"]
    timed("properscoring", lambda: ps.crps_ensemble(y, x))
    for est in ("qd", "nrg", "fair", "pwm"):
        timed("sr_" + est, lambda: sr.crps_ensemble(y, x, estimator=est, backend="numba"))
if "wy" in z.files:
    wy, med, lo, hi, alpha = z["wy"], z["median"], z["lower"], z["upper"], z["alpha"]
    timed("sr_wis", lambda: sr.weighted_interval_score(wy, med, lo, hi, alpha,
                                                       backend="numba"))
print(json.dumps(out))
"""


def crps_data(n, m, seed=0):
    """Ensembles of m members around a heteroscedastic prediction, with skewed members."""
    rng = np.random.default_rng(seed)
    mu = rng.normal(0.0, 2.0, n)
    s = np.exp(rng.normal(0.0, 0.5, n))
    y = mu + s * rng.standard_normal(n)
    x = mu[:, None] + s[:, None] * (np.exp(0.5 * rng.standard_normal((n, m))) - 1.1)
    return y, x


def wis_data(n, seed=1):
    """Normal quantiles at the 23 levels of a heteroscedastic forecast of y."""
    rng = np.random.default_rng(seed)
    mu = rng.normal(0.0, 3.0, n)
    s = np.exp(rng.normal(-0.5, 0.5, n))
    y = mu + 1.2 * s * rng.standard_normal(n)
    q = mu[:, None] + s[:, None] * stats.norm.ppf(WIS_LEVELS)[None, :]
    return y, q


def run_peers(arrays, repeat):
    """``{name: (seconds, per-point values)}`` from the side environment, or {} (a note)."""
    return run_peer_script(
        PEER_SCRIPT, arrays, repeat, "properscoring 0.1, scoringrules 0.10.0 and numba"
    )


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n-crps", type=int, default=100_000)
    ap.add_argument("--members", type=int, default=100)
    ap.add_argument("--n-wis", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)
    print(
        f"CRPS: {args.n_crps} points x {args.members} members; WIS: {args.n_wis} points x "
        f"{WIS_LEVELS.size} levels; {os.cpu_count()} cores; median of {args.repeat} calls"
    )

    y, x = crps_data(args.n_crps, args.members)
    ens = uqviz.from_arrays(y - x.mean(axis=1), x.std(axis=1, ddof=1)).assign(
        y=("point", y), samples=(("point", "sample"), x)
    )
    ens.attrs["forecast"] = "samples"
    wy, q = wis_data(args.n_wis)
    quant = (
        uqviz.from_arrays(wy - q[:, WIS_LEVELS.size // 2], np.ones(wy.size))
        .assign(y=("point", wy), quantiles=(("point", "level"), q))
        .assign_coords(level=WIS_LEVELS)
    )
    quant.attrs["forecast"] = "quantiles"

    plain, fair = predictive_scores_kernels.crps_ensemble_pair(y, x)
    wis = predictive_scores_kernels.weighted_interval_score(wy, q, WIS_LEVELS)
    ours = {
        "CRPS kernel (plain + fair)": (
            median_time(
                lambda: predictive_scores_kernels.crps_ensemble_pair(y, x), repeat=args.repeat
            ),
            ("properscoring", "sr_qd", "sr_nrg"),
            plain,
        ),
        "CRPS predictive_scores": (
            median_time(lambda: uqviz.predictive_scores(ens, n_boot=0), repeat=args.repeat),
            ("properscoring", "sr_qd", "sr_nrg"),
            plain,
        ),
        "fair CRPS kernel (plain + fair)": (
            median_time(
                lambda: predictive_scores_kernels.crps_ensemble_pair(y, x), repeat=args.repeat
            ),
            ("sr_fair", "sr_pwm"),
            fair,
        ),
        "WIS kernel": (
            median_time(
                lambda: predictive_scores_kernels.weighted_interval_score(wy, q, WIS_LEVELS),
                repeat=args.repeat,
            ),
            ("sr_wis",),
            wis,
        ),
        "WIS predictive_scores": (
            median_time(
                lambda: uqviz.predictive_scores(quant, scores=("wis",), n_boot=0),
                repeat=args.repeat,
            ),
            ("sr_wis",),
            wis,
        ),
    }
    k = WIS_LEVELS.size // 2
    peers = run_peers(
        {
            "y": y,
            "x": x,
            "wy": wy,
            "median": q[:, k],
            "lower": q[:, :k],
            "upper": q[:, k + 1 :][:, ::-1],
            "alpha": 2.0 * WIS_LEVELS[:k],
        },
        args.repeat,
    )

    print(
        f"\n{'task':<34} {'uqviz [s]':>10} {'peer':>14} {'peer [s]':>10} "
        f"{'peer/uqviz':>11} {'|diff|':>9}"
    )
    for name, (t, names, values) in ours.items():
        if not peers:
            print(f"{name:<34} {t:10.3f}")
            continue
        for peer in names:
            tp, vp = peers[peer]
            print(
                f"{name:<34} {t:10.3f} {peer:>14} {tp:10.3f} {tp / t:11.1f} "
                f"{np.max(np.abs(vp - values)):9.1e}"
            )
    t_crps, t_wis = ours["CRPS predictive_scores"][0], ours["WIS predictive_scores"][0]
    verdicts = [
        f"CRPS {t_crps:.3f} s (<= 0.5 s: {'met' if t_crps <= 0.5 else 'NOT met'})",
        f"WIS {t_wis:.3f} s (<= 0.5 s: {'met' if t_wis <= 0.5 else 'NOT met'})",
    ]
    if peers:
        fastest = min(
            peers[p][0] for p in ("properscoring", "sr_qd", "sr_nrg", "sr_fair", "sr_pwm")
        )
        verdicts.append(
            "CRPS faster than every peer estimator: "
            + ("yes" if t_crps < fastest else f"NO (fastest peer {fastest:.3f} s)")
        )
    print("\ntargets: " + "; ".join(verdicts))


if __name__ == "__main__":
    main()
