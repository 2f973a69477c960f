"""Conformal and quantile recalibration on 10^6 points: uqviz vs crepes and uncertainty-toolbox.

Targets (issue 23): conformal fit + apply on 10^6 points <= 1 s; Mondrian with 100 bins
<= 1.5 s. Times (median of ``--repeat`` calls after a warm-up) of

* uqviz: ``fit_recalibration(method="conformal")`` on n calibration points and ``apply`` to n
  new points (normalised by uE; Mondrian with 100 equal-count bins of uE); the cross-fitted
  ``recalibrate`` (5 folds); ``"quantile"`` fit and apply (7 quantile levels); the
  ``"quantile"`` fit and apply of the other forms of the forecast (issue 23, phase 2): a
  23-level quantile forecast on n points (the 23 levels of the weighted interval score) and
  a 100-member ensemble on ``--n-ensemble`` points (default 10^5), recalibrated quantiles at
  the 23 levels (no peer recalibrates these forms: uncertainty-toolbox takes a mean and a
  standard deviation);
* crepes 0.9.1 ``ConformalRegressor`` ``fit`` + ``predict_int`` (``sigmas``; ``sigmas`` and
  ``bins``, the bins uqviz cut) and uncertainty-toolbox 0.1.1 ``get_quantile_recalibrator`` +
  its quantiles, on the same data, in the Python named by the environment variable
  ``UQVIZ_PEER_PYTHON`` (a side environment with the peers, see
  tests/fixtures/make_predictive_fixtures.py), as a subprocess that times the calls only;
  skipped with a note when it is not set.

Prints one row per task: uqviz time, peer time, their ratio and the largest difference of the
intervals (crepes' rank equals ceil((n + 1) level) here: (n + 1)(1 - level) is no integer).

Usage::

    UQVIZ_PEER_PYTHON=/path/to/venv/bin/python python benchmarks/bench_conformal.py
    python benchmarks/bench_conformal.py --n 100000 --repeat 3
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from _common import median_time  # noqa: E402

import uqviz  # noqa: E402

LEVEL = 0.9
QUANTILES = (0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95)
#: the 23 levels of the weighted interval score (Bracher et al. 2021)
WIS_LEVELS = tuple(np.round(np.r_[0.01, 0.025, np.arange(0.05, 0.951, 0.05), 0.975, 0.99], 3))
N_MEMBERS = 100

PEER_SCRIPT = r"""
import contextlib, io, json, sys, time
import numpy as np
z = np.load(sys.argv[1])
repeat, level, out_path = int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
quantiles = [float(q) for q in sys.argv[5].split(",")]
res, arrays = {}, {}

def timed(name, f):
    value = f()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        value = f()
        times.append(time.perf_counter() - t0)
    res[name] = float(np.median(times))
    arrays[name] = np.asarray(value, dtype=float)

try:
    from crepes import ConformalRegressor

    def normalised():
        cr = ConformalRegressor().fit(z["E_cal"], sigmas=z["uE_cal"])
        return cr.predict_int(z["yhat_new"], sigmas=z["uE_new"], confidence=level)

    def mondrian():
        cr = ConformalRegressor().fit(z["E_cal"], sigmas=z["uE_cal"], bins=z["bins_cal"])
        return cr.predict_int(z["yhat_new"], sigmas=z["uE_new"], bins=z["bins_new"],
                              confidence=level)

    timed("conformal", normalised)
    timed("mondrian", mondrian)
except ImportError as exc:
    res["crepes_error"] = str(exc)
try:
    from uncertainty_toolbox import recalibration as rc

    def quantile():
        with contextlib.redirect_stdout(io.StringIO()):
            # uncertainty-toolbox's residuals are y_pred - y_true: E reflected
            rec = rc.get_quantile_recalibrator(z["yhat_cal"], z["uE_cal"],
                                               z["yhat_cal"] - z["E_cal"])
        return np.stack([rec(z["yhat_new"], z["uE_new"], q) for q in quantiles], axis=1)

    timed("quantile", quantile)
except ImportError as exc:
    res["uct_error"] = str(exc)
np.savez(out_path, **arrays)
print(json.dumps(res))
"""


def make_data(n, seed=0):
    """Heteroscedastic t5 errors, uE 30 % too small, predictions spread around 0."""
    rng = np.random.default_rng(seed)
    out = {}
    for part in ("cal", "new"):
        u = np.exp(rng.normal(-0.5, 0.5, n))
        out[f"uE_{part}"] = u
        out[f"E_{part}"] = 1.3 * u * rng.standard_t(5.0, n) * np.sqrt(3.0 / 5.0)
        out[f"yhat_{part}"] = rng.normal(0.0, 3.0, n)
    return out


def forecast_forms(d, n_ensemble, seed=1):
    """The data of ``make_data`` as a 23-level normal quantile forecast (all points) and a
    100-member normal ensemble (the first ``n_ensemble`` points), calibration and new."""
    from scipy import special

    rng = np.random.default_rng(seed)
    z = special.ndtri(np.asarray(WIS_LEVELS))
    out = {}
    for part in ("cal", "new"):
        yhat, u, e = d[f"yhat_{part}"], d[f"uE_{part}"], d[f"E_{part}"]
        q = yhat[:, None] + u[:, None] * z[None, :]
        out[f"quantiles_{part}"] = uqviz.from_predictions(
            yhat + e, yhat, quantiles={float(t): q[:, j] for j, t in enumerate(WIS_LEVELS)}
        )
        m = min(n_ensemble, yhat.size)
        members = yhat[:m, None] + u[:m, None] * rng.standard_normal((m, N_MEMBERS))
        out[f"samples_{part}"] = uqviz.from_predictions(yhat[:m] + e[:m], None, samples=members)
    return out


def bin_labels(params, x):
    """The bin uqviz's apply gives each value (the range holding it, else the nearest)."""
    lower, upper = params["bin_lower"].values, params["bin_upper"].values
    return np.searchsorted(0.5 * (upper[:-1] + lower[1:]), x, side="left")


def run_peer(data, repeat):
    python = os.environ.get("UQVIZ_PEER_PYTHON")
    if not python or not os.path.exists(python):
        print(
            "peer not timed: set UQVIZ_PEER_PYTHON (a Python with crepes 0.9.1 and "
            "uncertainty-toolbox 0.1.1)"
        )
        return {}, {}
    with tempfile.TemporaryDirectory() as tmp:
        path, out, script = (os.path.join(tmp, n) for n in ("in.npz", "out.npz", "peer.py"))
        np.savez(path, **data)
        with open(script, "w") as f:
            f.write(PEER_SCRIPT)
        proc = subprocess.run(
            [python, script, path, str(repeat), str(LEVEL), out, ",".join(map(str, QUANTILES))],
            capture_output=True,
            text=True,
            check=False,
        )
        if proc.returncode:
            print(f"peer failed; not timed:\n{proc.stderr[-2000:]}")
            return {}, {}
        with np.load(out) as z:
            arrays = {k: z[k] for k in z.files}
    return json.loads(proc.stdout.strip().splitlines()[-1]), arrays


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument(
        "--n-ensemble",
        type=int,
        default=100_000,
        help="points of the 100-member ensemble (default 10^5)",
    )
    args = ap.parse_args(argv)
    d = make_data(args.n)
    cal = uqviz.from_arrays(d["E_cal"], d["uE_cal"]).assign(y=("point", d["yhat_cal"] + d["E_cal"]))
    new = uqviz.from_arrays(np.zeros(args.n), d["uE_new"]).assign(y=("point", d["yhat_new"]))
    print(
        f"n = {args.n} calibration and {args.n} new points; {os.cpu_count()} cores; "
        f"median of {args.repeat} calls; level {LEVEL}"
    )

    def conformal(**kw):
        rec = uqviz.fit_recalibration(cal, method="conformal", level=LEVEL, **kw)
        return rec, rec.apply(new)

    def quantile():
        rec = uqviz.fit_recalibration(cal, method="quantile", levels=QUANTILES)
        return rec.apply(new)

    def cross():
        return uqviz.recalibrate(cal, method="conformal", level=LEVEL, rng=0)

    forms = forecast_forms(d, args.n_ensemble)

    def quantile_form(form):
        rec = uqviz.fit_recalibration(forms[f"{form}_cal"], method="quantile", levels=WIS_LEVELS)
        return rec.apply(forms[f"{form}_new"])

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", uqviz.UqvizWarning)
        ours = {
            "conformal": median_time(conformal, repeat=args.repeat),
            "mondrian": median_time(lambda: conformal(n_bins=100), repeat=args.repeat),
            "quantile": median_time(quantile, repeat=args.repeat),
            "recalibrate (5 folds)": median_time(cross, repeat=args.repeat),
            "quantile, 23 levels": median_time(
                lambda: quantile_form("quantiles"), repeat=args.repeat
            ),
            "quantile, 100 members": median_time(
                lambda: quantile_form("samples"), repeat=args.repeat
            ),
        }
        values = {
            "conformal": conformal()[1],
            "mondrian": conformal(n_bins=100),
            "quantile": quantile(),
        }
    rec, _ = values["mondrian"]
    values["mondrian"] = values["mondrian"][1]
    d["bins_cal"] = bin_labels(rec.parameters, d["uE_cal"])
    d["bins_new"] = bin_labels(rec.parameters, d["uE_new"])
    theirs, arrays = run_peer(d, args.repeat)
    m_ens = forms["samples_cal"].sizes["point"]
    names = {
        "conformal": "conformal fit + apply",
        "mondrian": "Mondrian, 100 bins",
        "quantile": "quantile recalibration",
        "recalibrate (5 folds)": "recalibrate, 5 folds",
        "quantile, 23 levels": f"quantile, 23-level q ({args.n:.0e})",
        "quantile, 100 members": f"quantile, ensemble ({m_ens:.0e})",
    }
    peer = {"conformal": "crepes", "mondrian": "crepes", "quantile": "uct"}
    print(
        f"\n{'task':<30} {'uqviz [s]':>10} {'peer':>7} {'peer [s]':>10} {'peer/uqviz':>11} "
        f"{'max|diff|':>10}"
    )
    for key, t in ours.items():
        if key in theirs:
            mine = values[key]
            got = (
                mine["quantiles"].transpose("point", "level").values
                if key == "quantile"
                else np.stack([mine["lower"].values, mine["upper"].values], axis=1)
            )
            diff = float(np.max(np.abs(got - arrays[key])))
            print(
                f"{names[key]:<30} {t:10.3f} {peer[key]:>7} {theirs[key]:10.3f} "
                f"{theirs[key] / t:11.1f} {diff:10.1e}"
            )
        else:
            print(f"{names[key]:<30} {t:10.3f} {'-':>7} {'-':>10} {'-':>11} {'-':>10}")
    print(
        "(the quantile recalibration of a 23-level quantile forecast and of a 100-member "
        "ensemble has no peer: uncertainty-toolbox recalibrates a mean and a standard "
        "deviation only)"
    )
    met = ours["conformal"] <= 1.0 and ours["mondrian"] <= 1.5
    print(
        "\ntargets (conformal <= 1 s, Mondrian 100 bins <= 1.5 s): " + ("met" if met else "NOT met")
    )


if __name__ == "__main__":
    main()
