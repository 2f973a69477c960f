"""False alarms and power of the simulated-reference verdicts (issue 20).

Three tables, each rate with its Monte Carlo standard error sqrt(p (1 - p) / sets):

1. ``confidence_curve``: how often ``valid`` is False on calibrated normal data
   (``uqviz.synthetic.nig(1000, nu=1000)``) for ``ci`` = 0.5 and 0.95 (target 1 - ci).
2. ``validate_simulated`` on calibrated data (NIG, nu = 1000, M = 2000, D normal):
   rejections by the Sim scheme (reference outside the widened BCa interval), by Sim2
   (estimate outside the Monte Carlo interval), by the one-sided Monte Carlo test
   (``p_value <= 0.05``), and how often the Sim verdict is flagged unreliable
   (``reliable`` False: |z0| > 1 or no interval), for ENCE, ZMSE, UCE and CC.
3. The workflow (``validate_shared`` of ENCE, ZMSE, CC with D in {normal, t6}, M = 5000,
   uE^2 inverse-gamma with nu = 6): rates of "fails" and "unreliable" under calibrated
   normal, t6 and t(4.4) errors (false alarm; t(4.4) is heavier than every D), and under
   uE underestimated by 1.5 on the top 30 % of uE with normal errors (power); beside it
   the old rule (Sim scheme with the first D, "statistic too sensitive to D" when the
   references differ by more than k se).

Usage::

    python benchmarks/bench_reference_verdicts.py --sets 100
    python benchmarks/bench_reference_verdicts.py --sets 20 --only workflow

Target: false alarm <= 5 % within 2 Monte Carlo se (Sim2 and the Monte Carlo tests are
exact: P(p <= alpha) <= alpha whatever n_mc).
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

import uqviz
from uqviz.reference.simulated import validate_shared

ALPHA = 0.05


def rate(hits, n):
    """'p (se)' in percent."""
    p = hits / n
    return f"{100 * p:5.1f} ({100 * np.sqrt(p * (1 - p) / n):4.1f})"


def confidence_table(sets, n_mc):
    print(
        f"\n1. confidence_curve: valid False on calibrated NIG(1000, nu=1000), n_mc = {n_mc}, "
        f"{sets} sets [% (se)]"
    )
    print(f"{'ci':>6} {'target':>7} {'valid False':>13} {'p <= 1-ci':>13} {'disagree':>9}")
    for ci in (0.5, 0.95):
        false = small = disagree = 0
        for s in range(sets):
            ds = uqviz.synthetic.nig(1000, nu=1000, rng=10_000 + s)
            cc = uqviz.confidence_curve(ds, n_mc=n_mc, n_boot=0, ci=ci, rng=s)
            v, p = bool(cc["valid"]), float(cc["p_value"])
            false += not v
            small += p <= 1 - ci
            disagree += (not v) != (p <= 1 - ci)
        print(
            f"{ci:6.2f} {100 * (1 - ci):7.1f} {rate(false, sets):>13} {rate(small, sets):>13} "
            f"{disagree:9d}"
        )


SIM_STATS = ("ENCE", "ZMSE", "UCE", "CC")


def simulated_table(sets, n_mc, n_boot, m=2000):
    print(
        f"\n2. validate_simulated on calibrated NIG({m}, nu=1000), D normal, n_mc = {n_mc}, "
        f"n_boot = {n_boot}, {sets} sets [% (se)]"
    )
    print(
        f"{'statistic':>9} {'Sim rejects':>13} {'Sim unrel.':>13} {'Sim rej.&rel.':>13} "
        f"{'Sim2 rejects':>13} {'MC p<=0.05':>13} {'median z0':>10}"
    )
    counts = {s: np.zeros(5) for s in SIM_STATS}
    z0s = {s: [] for s in SIM_STATS}
    for k in range(sets):
        ds = uqviz.synthetic.nig(m, nu=1000, rng=20_000 + k)
        for s in SIM_STATS:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                r = uqviz.validate_simulated(
                    ds, statistic=s, scheme=["Sim", "Sim2"], n_mc=n_mc, n_boot=n_boot, rng=k
                )
            v, rel = r["valid"].values, r["reliable"].values
            counts[s] += [
                not v[0],
                not rel[0],
                (not v[0]) and rel[0],
                not v[1],
                float(r["p_value"]) <= ALPHA,
            ]
            z0s[s].append(float(r["z0"]))
    for s in SIM_STATS:
        c = counts[s]
        print(
            f"{s:>9} " + " ".join(f"{rate(x, sets):>13}" for x in c) + f" {np.median(z0s[s]):10.2f}"
        )


def _workflow_data(m, scenario, seed):
    rng = np.random.default_rng(seed)
    u = np.sqrt(3.0 / rng.gamma(3.0, 1.0, m))  # uE^2 ~ InverseGamma(3, 3) (nu = 6)
    if scenario in ("t6", "t4.4"):
        nu = float(scenario[1:])
        eps = rng.standard_t(nu, m) / np.sqrt(nu / (nu - 2))  # unit variance
    else:
        eps = rng.standard_normal(m)
    e = u * eps
    if scenario == "uE x 1.5 (top 30 %)":  # uE underestimated on the largest uE
        e = np.where(u >= np.quantile(u, 0.7), 1.5 * e, e)
    return uqviz.from_arrays(e, u)


WF_STATS = ("ENCE", "ZMSE", "CC")
SCENARIOS = ("normal", "t6", "t4.4", "uE x 1.5 (top 30 %)")
COLUMNS = (
    "fails",
    "unreliable",
    "OK",
    "p_N<=.05",
    "p_t6<=.05",
    "both reject",
    "tail screen",
    "old rejected",
    "old too sens.",
)


def workflow_table(sets, n_mc, n_boot, m=5000):
    print(
        f"\n3. workflow (validate_shared, D in (normal, t6), k = 2), M = {m}, uE^2 ~ IG(nu=6), "
        f"n_mc = {n_mc}, n_boot = {n_boot}, {sets} sets [% (se)]"
    )
    print(
        "   new: fails = every D rejects (intersection-union Monte Carlo test) and the tail "
        "screen passes;\n   unreliable = the D's disagree (references > k se apart) or every "
        "D rejects but the z-scores are heavier-tailed than every D;\n   both reject = the "
        "IUT alone; tail screen = tail ratio rejected under every D; old = Sim with normal D, "
        "'too sensitive' when the references differ by > k se"
    )
    print(f"{'data':>20} {'statistic':>9} " + " ".join(f"{c:>12}" for c in COLUMNS))
    for scenario in SCENARIOS:
        tally = {s: np.zeros(len(COLUMNS)) for s in (*WF_STATS, "any")}
        for k in range(sets):
            ds = _workflow_data(m, scenario, 30_000 + k)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                res = validate_shared(ds, statistics=WF_STATS, n_mc=n_mc, n_boot=n_boot, rng=k)
            for s in WF_STATS:
                r = res[s]
                verdict = str(r["verdict"].values)
                p = r["mc_p_value"].values
                sens = bool(r["sensitive_to_D"])
                tally[s] += [
                    verdict == "fails",
                    verdict == "unreliable",
                    verdict == "OK",
                    p[0] <= ALPHA,
                    p[1] <= ALPHA,
                    np.all(p <= ALPHA),
                    np.max(r["tail_p_value"].values) <= ALPHA,
                    (not sens) and not bool(r["valid"][0]),
                    sens,
                ]
            verdicts = [str(res[s]["verdict"].values) for s in WF_STATS]
            tally["any"] += [
                any(v == "fails" for v in verdicts),
                any(v == "unreliable" for v in verdicts),
                all(v == "OK" for v in verdicts),
            ] + [0] * (len(COLUMNS) - 3)
        for s, c in tally.items():
            cells = [rate(x, sets) for x in c]
            if s == "any":
                cells[3:] = [""] * (len(COLUMNS) - 3)
            print(f"{scenario:>20} {s:>9} " + " ".join(f"{x:>12}" for x in cells))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", type=int, default=100, help="data sets per scenario")
    ap.add_argument("--n-mc", type=int, default=200)
    ap.add_argument("--n-boot", type=int, default=300)
    ap.add_argument("--only", choices=("confidence", "simulated", "workflow"), default=None)
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    if args.only in (None, "confidence"):
        confidence_table(args.sets, n_mc=min(args.n_mc, 100))
    if args.only in (None, "simulated"):
        simulated_table(args.sets, args.n_mc, args.n_boot)
    if args.only in (None, "workflow"):
        workflow_table(args.sets, args.n_mc, args.n_boot)
    print(f"\n{time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
