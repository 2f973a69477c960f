"""Operating characteristics of every verdict (issue 20, items 1 and 2): the whole table.

Runs :func:`uqviz.experiments.operating_characteristics` on the grid of issue 20, item 1:

- calibrated sets: D in {normal, t6, t4.4, laplace, uniform} x uE design {inverse-gamma
  (nu = 3), constant, log-normal} x M in {500, 5000, 13885, 100000};
- miscalibrated sets at M = 5000, D normal, inverse-gamma uE: scale 1.05/1.1/1.2,
  consistency 1.2/1.5, adaptivity, shape t3/t4;

prints the table (verdict x scenario: "fails" rate +- Monte Carlo se, "unreliable" rate, cost
per call), checks the targets of issue 20, item 2 and of issue 36, item 3 (the headline,
``report``, reads "OK" in at least 90 % of calibrated normal and t6 sets) (PASS/FAIL each) and
writes the table to
``--out`` (``.csv`` or ``.json``). With ``--quick``: D in {normal, t6, t4.4}, inverse-gamma
uE, M = 2000, few sets, n_boot 500, n_mc 200 (about 10 minutes on 2 cores).

Usage::

    python benchmarks/bench_verdicts.py --quick --out /tmp/verdicts.csv
    python benchmarks/bench_verdicts.py --quick --verdicts pit      # one verdict, a smoke
    python benchmarks/bench_verdicts.py --quick --verdicts gate:pit --sets 40
    python benchmarks/bench_verdicts.py --sets 220 --out verdicts.json   # se <= 1.5 points
    python benchmarks/bench_verdicts.py --grouped --sets 100 --out grouped.csv  # issue 39
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
import pandas as pd

from uqviz.experiments.verdicts import operating_characteristics

MISCALIBRATED = (
    "scale1.05",
    "scale1.1",
    "scale1.2",
    "consistency1.2",
    "consistency1.5",
    "adaptivity",
    "shape_t3",
    "shape_t4",
)
GATED = (
    "report",
    "report:average",
    "report:consistency",
    "report:adaptivity:X1",
    "report:adaptivity:X2",
    "gate:any",
    "gate:average",
    "gate:consistency",
    "gate:adaptivity",
    "average:ZMS",
    "average:RCE",
    "fv:consistency",
    "gate:pit",
    "report:pit",
)


#: issue 36: the average verdicts under heavy tails
TAIL_D = ("normal", "t6", "t4.4", "t3", "laplace")
TAIL_DESIGNS = ("constant", "lognormal", "inverse_gamma")
TAIL_VERDICTS = ("average:ZMS", "average:RCE", "average:NLL")
TAIL_POWER = ("scale1.5", "scale0.6667", "scale2", "scale0.5")
SMALL_SIZES = (5, 10, 20, 50, 100, 200)


def tails_grid(args):
    """Issue 36, item 2: calibrated sets D x uE x M, power at M = 5000, small sets."""
    sizes = (500, 1000, 5000, 50_000) if args.size is None else (args.size,)
    cal = [
        (
            "calibrated",
            dict(scenarios=("calibrated",), generative=g, size=m, design=d, n_datasets=args.sets),
        )
        for m in sizes
        for d in TAIL_DESIGNS
        for g in TAIL_D
    ]
    mis = [
        (
            "miscalibrated",
            dict(
                scenarios=TAIL_POWER,
                generative=g,
                size=5000,
                design="lognormal",
                n_datasets=args.sets,
            ),
        )
        for g in TAIL_D
    ]
    small = [
        (
            "small",
            dict(
                scenarios=("calibrated", "scale2"),
                generative=g,
                size=m,
                design="lognormal",
                n_datasets=args.sets,
            ),
        )
        for m in SMALL_SIZES
        for g in ("normal", "t6", "t3")
    ]
    return cal + mis + small


def check_tail_targets(df):
    """``[(target, passed, detail)]``: the targets of issue 36, item 2 (average verdicts)."""
    out = []
    cal = df[df.scenario == "calibrated"]
    big = cal[cal["size"] >= 500]
    for v in TAIL_VERDICTS:
        sub = big[big.verdict == v]
        if sub.empty:
            continue
        r = sub.loc[sub.fails.idxmax()]
        ok = bool((sub.fails - 2 * sub.fails_se).max() <= 0.05)
        out.append(
            (
                f"{v}: false 'fails' <= 5 % (2 se), every D x uE x M",
                ok,
                f"highest {r.fails:.3f} +- {r.fails_se:.3f} ({r.generative}, {r.design}, "
                f"M={r['size']})",
            )
        )
        light = sub[sub.generative.isin(["normal", "t6"])]
        if not light.empty:
            r = light.loc[light.unreliable.idxmax()]
            out.append(
                (
                    f"{v}: 'unreliable' <= 10 % on calibrated normal and t6",
                    bool(light.unreliable.max() <= 0.10),
                    f"highest {r.unreliable:.3f} ({r.generative}, {r.design}, M={r['size']})",
                )
            )
    mis = df[(df.scenario.isin(TAIL_POWER)) & (df["size"] == 5000)]
    for v in ("average:ZMS", "average:NLL"):
        for sc, target in (
            ("scale1.5", 0.9),
            ("scale0.6667", 0.9),
            ("scale2", 0.99),
            ("scale0.5", 0.99),
        ):
            sub = mis[(mis.verdict == v) & (mis.scenario == sc)]
            if sub.empty:
                continue
            r = sub.loc[sub.fails.idxmin()]
            out.append(
                (
                    f"{v} on {sc}: 'fails' >= {target:.0%} under every D (2 se)",
                    bool((sub.fails + 2 * sub.fails_se).min() >= target),
                    f"lowest {r.fails:.3f} +- {r.fails_se:.3f} ({r.generative})",
                )
            )
    small = cal[cal["size"] < 500]  # the small-set rows (normal, t6, t3; log-normal uE)
    for v in TAIL_VERDICTS:
        sub = small[small.verdict == v]
        if sub.empty:
            continue
        r = sub.loc[sub.fails.idxmax()]
        out.append(
            (
                f"{v}: small sets (M {sorted(set(sub['size']))}): false 'fails' <= 5 % "
                "(2 se) or 'not tested'",
                bool((sub.fails - 2 * sub.fails_se).max() <= 0.05),
                f"highest {r.fails:.3f} +- {r.fails_se:.3f} ({r.generative}, M={r['size']})",
            )
        )
    return out


#: issue 39: correlated points in groups of 30 (the verdicts the cluster bootstrap decides)
GROUPED_SCENARIOS = (
    "grouped0.2",
    "grouped0.5",
    "grouped0.5_points",
    "grouped_scale1.2",
    "grouped_type1.5",
)
GROUPED_VERDICTS = ("average:ZMS", "average:RCE", "fv:consistency", "gate:average")
GROUPED_D = ("normal", "t4.4")


def grouped_grid(args):
    """Issue 39, item 3: calibrated and miscalibrated grouped sets, M = 3000, log-normal uE."""
    return [
        (
            "grouped",
            dict(
                scenarios=GROUPED_SCENARIOS,
                generative=g,
                size=args.size or 3000,
                design="lognormal",
                n_datasets=args.sets,
            ),
        )
        for g in GROUPED_D
    ]


def check_grouped_targets(df):
    """``[(target, passed, detail)]``: issue 39, item 3 (the cluster bootstrap's verdicts)."""
    out = []
    for v in sorted(set(df.verdict)):
        for g in sorted(set(df.generative)):
            sub = df[(df.verdict == v) & (df.generative == g)].set_index("scenario")
            for sc in ("grouped0.2", "grouped0.5"):
                if sc in sub.index:
                    r = sub.loc[sc]
                    out.append(
                        (
                            f"{v} ({g}) on {sc}: false 'fails' <= 5 % (2 se)",
                            bool(r.fails - 2 * r.fails_se <= 0.05),
                            f"{r.fails:.3f} +- {r.fails_se:.3f} (unreliable {r.unreliable:.3f}; "
                            f"point bootstrap on the same draws: "
                            f"{sub.loc['grouped0.5_points'].fails:.3f})",
                        )
                    )
    return out


def grid(args):
    """``[(label, kwargs)]`` of the calls to run."""
    if getattr(args, "grouped", False):
        return grouped_grid(args)
    if args.tails:
        return tails_grid(args)
    if args.quick:
        cal = [
            (
                "calibrated",
                dict(
                    scenarios=("calibrated",),
                    generative=g,
                    size=args.size,
                    design="inverse_gamma",
                    n_datasets=args.sets,
                ),
            )
            for g in ("normal", "t6", "t4.4")
        ]
        mis = [
            (
                "miscalibrated",
                dict(
                    scenarios=("scale1.1", "scale1.2", "consistency1.5", "adaptivity", "shape_t4"),
                    generative="normal",
                    size=args.size,
                    design="inverse_gamma",
                    n_datasets=max(4, args.sets * 2 // 3),
                ),
            )
        ]
        return cal + mis
    cal = [
        (
            "calibrated",
            dict(scenarios=("calibrated",), generative=g, size=m, design=d, n_datasets=args.sets),
        )
        for d in ("inverse_gamma", "constant", "lognormal")
        for g in ("normal", "t6", "t4.4", "laplace", "uniform")
        for m in ((500, 5000, 13885, 100_000) if args.size is None else (args.size,))
    ]
    mis = [
        (
            "miscalibrated",
            dict(
                scenarios=MISCALIBRATED,
                generative="normal",
                size=args.size or 5000,
                design="inverse_gamma",
                n_datasets=args.sets,
            ),
        )
    ]
    return cal + mis


def rows(oc, kw):
    """Long table: one row per (verdict, scenario) of one call."""
    df = (
        oc[
            [
                "fails",
                "fails_se",
                "fails_lower",
                "fails_upper",
                "unreliable",
                "unreliable_se",
                "not_tested",
                "miscalibrated",
                "cost",
            ]
        ]
        .to_dataframe()
        .reset_index()
    )
    df["generative"] = kw["generative"]
    df["design"] = kw["design"]
    df["size"] = kw["size"]
    df["n_datasets"] = kw["n_datasets"]
    df["reads"] = np.where(df["miscalibrated"], "power", "false alarm")
    return df


def check_targets(df):
    """``[(target, passed, detail)]``: the targets of issue 20, item 2."""
    out = []
    cal = df[(df.scenario == "calibrated") & (df["size"] >= 1000)]

    def worst(sub):
        if sub.empty:
            return None, "no rows"
        excess = sub.fails - 2 * sub.fails_se
        r = sub.loc[sub.fails.idxmax()]  # shown: the highest rate; judged: every rate - 2 se
        return bool(excess.max() <= 0.05), (
            f"highest {r.verdict} ({r.generative}, "
            f"{r.design}, M={r['size']}): "
            f"{r.fails:.3f} +- {r.fails_se:.3f}"
        )

    sub = cal[cal.generative.isin(["normal", "t6"]) & cal.verdict.isin(GATED)]
    out.append(
        ("false alarm <= 5 % (2 se), each gated verdict, D normal/t6, M >= 1000", *worst(sub))
    )
    sub = cal[~cal.generative.isin(["normal", "t6"]) & cal.verdict.isin(GATED)]
    out.append(("heavier or other D: never 'fails' > 5 % (2 se) (unreliable allowed)", *worst(sub)))
    sub = cal[cal.generative.isin(["normal", "t6"]) & cal.verdict.isin(["report", "gate:any"])]
    out.append(("family-wise false alarm <= 5 % (2 se): report, --fail-on any", *worst(sub)))
    sub = cal[cal.generative.isin(["normal", "t6"]) & (cal.verdict == "report")]
    if not sub.empty:  # issue 36, item 3: the headline answers the calibration questions
        ok = 1 - sub.fails - sub.unreliable - sub.not_tested
        se = np.sqrt(ok * (1 - ok) / sub.n_datasets)
        r = sub.loc[ok.idxmin()]
        out.append(
            (
                "headline (report) reads OK in >= 90 % (2 se) of calibrated normal/t6 sets",
                bool((ok + 2 * se >= 0.9).all()),
                f"lowest {float(ok.min()):.3f} +- {float(se[ok.idxmin()]):.3f} "
                f"({r.generative}, {r.design}, M={r['size']}; unreliable "
                f"{r.unreliable:.3f})",
            )
        )
    mis = df[(df.scenario != "calibrated") & (df.generative == "normal")]

    def power(verdict, scenario, target=0.9, below=False):
        r = mis[(mis.verdict == verdict) & (mis.scenario == scenario)]
        if r.empty:
            return (f"{verdict} on {scenario}", None, "not run")
        r = r.iloc[0]
        ok = (r.fails - 2 * r.fails_se <= target) if below else (r.fails + 2 * r.fails_se >= target)
        word = "<=" if below else ">="
        return (
            f"{verdict} on {scenario}: fails {word} {target:.0%} (2 se)",
            bool(ok),
            f"{r.fails:.3f} +- {r.fails_se:.3f} (unreliable {r.unreliable:.3f})",
        )

    sub = cal[cal.verdict == "pit"]
    if not sub.empty:  # the forecast uE * D with D the data's: uniform PIT for every D
        out.append(
            (
                "PIT (validate_pit): false alarm <= 5 % (2 se), every D, forecast D = data's",
                *worst(sub),
            )
        )
        for scenario in ("scale1.1", "scale1.2", "consistency1.5", "adaptivity", "shape_t4"):
            out.append(power("pit", scenario, 0.8))
    for v in ("gate:pit", "report:pit"):  # the set given as quantiles of its D (as_quantiles)
        sub = cal[cal.verdict == v]
        if sub.empty:
            continue
        out.append(
            (f"{v}: false alarm <= 5 % (2 se), every D, quantiles of the data's D", *worst(sub))
        )
        for scenario in ("scale1.2", "consistency1.5", "shape_t4"):
            out.append(power(v, scenario, 0.8))
    out.append(power("report:average", "scale1.1"))
    out.append(power("gate:average", "scale1.1"))
    out.append(power("report:consistency", "consistency1.5"))
    out.append(power("report:average", "consistency1.5"))
    out.append(power("report:adaptivity:X1", "adaptivity"))
    out.append(power("report:adaptivity:X1", "consistency1.5", 0.10, below=True))
    out.append(power("report:adaptivity:X2", "consistency1.5", 0.10, below=True))
    for s in ("shape_t3", "shape_t4"):
        for v in (
            "report:average",
            "report:consistency",
            "report:adaptivity:X1",
            "report:adaptivity:X2",
            "report:coverage",
            "report",
        ):
            out.append(power(v, s, 0.05, below=True))
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument(
        "--sets",
        type=int,
        default=None,
        help="sets per cell (default 220: se <= 1.5 points at 5 %%; quick: 8)",
    )
    p.add_argument(
        "--size", type=int, default=None, help="M of every cell (default: the grid; quick: 2000)"
    )
    p.add_argument("--n-boot", type=int, default=None, help="default 1000 (quick: 500)")
    p.add_argument("--n-mc", type=int, default=None, help="default 1000 (quick: 200)")
    p.add_argument("--quick", action="store_true", help="a small grid, about 10 minutes")
    p.add_argument(
        "--tails",
        action="store_true",
        help="issue 36: the average verdicts under heavy tails (D x uE x M, power "
        "at M = 5000, small sets); verdicts " + " ".join(TAIL_VERDICTS),
    )
    p.add_argument(
        "--grouped",
        action="store_true",
        help="issue 39: correlated points in groups (cluster bootstrap), M = 3000, D normal and "
        "t4.4; verdicts " + " ".join(GROUPED_VERDICTS),
    )
    p.add_argument("--rng", type=int, default=2024)
    p.add_argument("--client", default=None, help="None or 'local' (dask LocalCluster)")
    p.add_argument("--out", default=None, help="write the table (.csv or .json)")
    p.add_argument(
        "--verdicts",
        nargs="+",
        default=None,
        help="measure only these verdicts (default: every default verdict), e.g. --verdicts pit",
    )
    args = p.parse_args(argv)
    if args.sets is None:
        args.sets = 8 if args.quick else 220
    if args.quick and args.size is None and not args.tails:
        args.size = 2000
    if args.tails and args.verdicts is None:
        args.verdicts = list(TAIL_VERDICTS)
    if args.grouped and args.verdicts is None:
        args.verdicts = list(GROUPED_VERDICTS)
    n_boot = args.n_boot or (500 if args.quick else 1000)
    n_mc = args.n_mc or (200 if args.quick else 1000)

    frames = []
    t0 = time.perf_counter()
    seeds = np.random.SeedSequence(args.rng).spawn(len(grid(args)))
    for (label, kw), seed in zip(grid(args), seeds):
        t = time.perf_counter()
        oc = operating_characteristics(
            **kw,
            n_boot=n_boot,
            n_mc=n_mc,
            verdicts=args.verdicts,
            rng=np.random.default_rng(seed),
            client=args.client,
            progress=None,
        )
        frames.append(rows(oc, kw))
        print(
            f"# {label} {kw['generative']} {kw['design']} M={kw['size']} "
            f"sets={kw['n_datasets']}: {time.perf_counter() - t:.0f} s",
            flush=True,
        )
    df = pd.concat(frames, ignore_index=True)
    total = time.perf_counter() - t0

    pd.set_option("display.width", 200)
    pd.set_option("display.max_rows", 1000)
    show = df.assign(
        cell=lambda d: (
            d.scenario + "/" + d.generative + "/" + d.design.str[:3] + "/" + d["size"].astype(str)
        ),
        fails_txt=lambda d: [f"{f:.2f}+-{s:.2f}" for f, s in zip(d.fails, d.fails_se)],
        unrel=lambda d: d.unreliable.round(2),
    )
    tab = show.pivot_table(
        index="verdict", columns="cell", values="fails_txt", aggfunc="first", sort=False
    )
    print(
        "\n'fails' rate +- Monte Carlo se (false alarm on calibrated cells and on properties "
        "not broken; power elsewhere)"
    )
    print(tab.to_string())
    print("\n'unreliable' rate")
    print(
        show.pivot_table(
            index="verdict", columns="cell", values="unrel", aggfunc="first", sort=False
        ).to_string()
    )
    print("\nreads (power / false alarm) per miscalibrated scenario")
    mis = show[show.scenario != "calibrated"]
    print(
        mis.pivot_table(
            index="verdict", columns="scenario", values="reads", aggfunc="first", sort=False
        ).to_string()
    )
    cost = df.groupby("verdict", sort=False)["cost"].mean()
    print("\ncost: mean seconds per call of the verdict's family")
    print(cost.round(3).to_string())
    print(f"\ntotal {total:.0f} s; n_boot {n_boot}, n_mc {n_mc}")

    if args.grouped:
        print("\ntargets of issue 39, item 3 (correlated points, the cluster bootstrap)")
        results = check_grouped_targets(df)
    elif args.tails:
        print("\ntargets of issue 36, item 2 (average verdicts under heavy tails)")
        results = check_tail_targets(df)
    else:
        print("\ntargets of issue 20, item 2")
        results = check_targets(df)
    for name, ok, detail in results:
        print(f"{'SKIP' if ok is None else 'PASS' if ok else 'FAIL'}  {name}: {detail}")
    if args.out:
        if args.out.endswith(".json"):
            with open(args.out, "w") as f:
                json.dump(
                    {
                        "table": df.to_dict(orient="records"),
                        "targets": [{"target": n, "pass": ok, "detail": d} for n, ok, d in results],
                        "settings": {
                            "n_boot": n_boot,
                            "n_mc": n_mc,
                            "sets": args.sets,
                            "quick": args.quick,
                            "rng": args.rng,
                        },
                    },
                    f,
                    indent=1,
                )
        else:
            df.to_csv(args.out, index=False)
        print(f"table written to {args.out}")


if __name__ == "__main__":
    main()
