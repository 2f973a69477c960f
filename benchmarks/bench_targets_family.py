"""False alarm of the gate (and the report) of several targets (issue 39, item 2).

Calibrated sets of 3 targets (uE log-normal, z-scores N(0, 1), ``--missing`` rows of the second
target unobserved) plus their pooled points, as a targets tree; on each set the gate
(``uqviz.reporting.gate.gate``, ``--fail-on any``: ZMS, RCE and consistency of every target and
of the pooled points) is decided three ways from the same p-values:

- ``family``: one Holm family over every target's tests and the pooled ones (what the gate of a
  targets tree does);
- ``per target``: Holm inside each target's own tests (a gate run on each target alone);
- ``unadjusted``: every test at 0.05.

Prints the family-wise false alarm (the fraction of sets with one "fails" or more) of each, with
its Monte Carlo standard error. With ``--report`` the report's headline too (its family: ZMS,
consistency, ENCE, ZMSE, CC of every target and pooled), which costs about 10 times more.

Measured (2 shared cores; 200 sets, n_boot 200; "+-" one Monte Carlo se):

=========================  ==============  ===============  ==============
family-wise false alarm    one family      Holm per target  unadjusted
=========================  ==============  ===============  ==============
gate, M = 1500 (12 tests)  0.055 +- 0.016  0.125 +- 0.023   0.325 +- 0.033
gate, M = 400 (12 tests)   0.045 +- 0.015  0.055 +- 0.016   0.180 +- 0.027
report, M = 400 (20)       0.030 +- 0.012  0.040 +- 0.014   0.190 +- 0.028
=========================  ==============  ===============  ==============

Below 1000 points the ZMS is decided by the Student-t null, whose p-value is floored at
0.0037 (conservative, and no average-calibration "fails" in a family of more than 13 tests).

Usage::

    python benchmarks/bench_targets_family.py --sets 200 --points 400 --n-boot 200
    python benchmarks/bench_targets_family.py --sets 40 --report
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import xarray as xr

from uqviz.reporting import verdicts as vd
from uqviz.reporting.gate import gate

TARGETS = ("fx", "fy", "fz")


def targets_tree(n, rng, missing=40):
    """Three calibrated targets and their pooled points, a hand-built targets tree."""
    gen = np.random.default_rng(rng)
    children, parts = {}, []
    for k, name in enumerate(TARGETS):
        uE = np.exp(gen.normal(0.0, 0.3, n))
        E = uE * gen.normal(size=n)
        rows = np.arange(missing if k == 1 else 0, n)
        ds = xr.Dataset(
            {"E": ("point", E[rows]), "uE": ("point", uE[rows])},
            coords={"point": rows},
            attrs={"name": name, "units": "", "target": name, "n_missing": n - rows.size},
        )
        children[f"/{name}"] = ds
        parts.append(ds.assign_coords(target=("point", [name] * rows.size)))
    pooled = xr.concat(parts, dim="point")
    pooled = pooled.assign_coords(row=("point", pooled["point"].values))
    pooled = pooled.assign_coords(point=np.arange(pooled.sizes["point"]))
    pooled.attrs = {"name": "pooled", "units": ""}
    children["/pooled"] = pooled
    tree = xr.DataTree.from_dict(children)
    tree.attrs.update(layout="targets", targets=list(TARGETS))
    return tree


def three_ways(table, alpha=0.05):
    """``(family, per target, unadjusted)``: whether a gated test fails, each way."""
    tests = [str(t) for t in table["test"].values]
    family = bool((table["verdict"].values[table["gated"].values] == "fails").any())
    per = False
    for t in dict.fromkeys(k.split("/")[0] for k in tests):
        rows = [k for k in tests if k.startswith(t + "/")]
        d = vd.decide_tests(table, rows, alpha)
        per |= bool((d["verdict"].values[d["gated"].values] == "fails").any())
    gated = table["gated"].values
    raw = bool((table["p_value"].values[gated] <= alpha).any())
    return family, per, raw


def headline_ways(col, alpha=0.05):
    """The report's ``fails`` headline: in the family, per target, unadjusted (a question
    or ENCE/ZMSE/CC at its raw p-value)."""
    v = col.verdicts
    family = any(r.verdict == "fails" for r in col.reports.values())
    per, raw = False, False
    for t in v["target"].values:
        tab = v.sel(target=t)
        keep = [
            str(k)
            for k, g, p in zip(tab["test"].values, tab["gated"].values, tab["p_value"].values)
            if g and np.isfinite(p)
        ]
        d = vd.decide_tests(tab, keep, alpha)
        per |= bool((d["verdict"].values == "fails").any())
        raw |= bool((d["p_value"].values <= alpha).any())
    return family, per, raw


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", type=int, default=200)
    ap.add_argument("--points", type=int, default=400)
    ap.add_argument("--n-boot", type=int, default=200)
    ap.add_argument("--report", action="store_true")
    args = ap.parse_args(argv)
    rates = {"gate": np.zeros(3)}
    if args.report:
        import uqviz

        rates["report"] = np.zeros(3)
    t0 = time.perf_counter()
    size = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for s in range(args.sets):
            tree = targets_tree(args.points, 10_000 + s)
            out = gate(tree, fail_on=("any",), n_boot=args.n_boot, rng=s)
            size["gate"] = out["family"]["size"]
            rates["gate"] += three_ways(out["table"])
            if args.report:
                col = uqviz.report(
                    tree, n_boot=args.n_boot, n_mc=50, rng=s, figures=False, remedy=False
                )
                size["report"] = col.family["size"]
                rates["report"] += headline_ways(col)
    n = args.sets
    print(
        f"{n} calibrated sets of 3 targets + pooled, M = {args.points} per target, "
        f"n_boot = {args.n_boot}; {time.perf_counter() - t0:.0f} s"
    )
    for what, r in rates.items():
        print(f"{what} ({size[what]} tests in the family): family-wise false alarm")
        for label, k in zip(("Holm, one family", "Holm per target", "unadjusted"), r):
            p = k / n
            print(f"  {label:<18} {p:6.3f} +- {np.sqrt(p * (1 - p) / n):.3f}")


if __name__ == "__main__":
    main()
