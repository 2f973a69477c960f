"""Console entry point: ``uqviz average [CSV] ...`` and ``uqviz report [CSV] ...``.

``uqviz average`` is the average calibration (ZMS, RCE), the tailedness screen and the CI
gate (``--fail-on``); ``uqviz validate``, its old name, is kept until uqviz 0.3.0 as an alias
that prints a deprecation line to stderr and behaves the same (same output, same exit
status).

User errors print one ``uqviz: error: ...`` line and exit with status 2.

Examples
--------
::

    uqviz average                                  # the embedded default example
    uqviz average data.csv --reference y --prediction yhat --variances var
    uqviz average data.csv --features mass --fail-on any --json verdicts.json    # a CI gate
    uqviz average q.csv --reference y --prediction q50 --quantiles 0.05:q05 0.5:q50 0.95:q95 \
        --fail-on pit                              # the PIT of the quantiles as given
    uqviz report data.csv --errors E --uncertainties uE --features mass --out reports/
    uqviz report data.csv --errors E --uncertainties uE --no-remedy   # no recalibration
    uqviz report tasks.csv --reference logS,logP --prediction pS,pP --uncertainties uS,uP \
        --groups scaffold                          # several targets (empty cell: missing)

Exit status of ``average``: 0; 1 when a verdict named by ``--fail-on`` fails; 3 when none
fails but one is unreliable (heavy tails: the test cannot decide) or not tested; 2 for bad
input (any command). The gated verdicts are calibration questions (average calibration,
consistency, adaptivity, the PIT), those of a report's headline; ``report`` exits with 0 (or
2) and prints its headline first, then the sentences of the questions, then the further
diagnostics (ENCE, ZMSE, CC, the interval coverage, in their own words).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
import warnings

from uqviz.average.validation import tailedness, validate_average
from uqviz.data.readers import read_csv
from uqviz.data.synthetic import default_example
from uqviz.engine.checks import rng as check_rng
from uqviz.engine.deprecation import REMOVED_IN
from uqviz.engine.tree import datasets_of
from uqviz.engine.warning_classes import UnreliableWarning
from uqviz.reporting import text
from uqviz.reporting.build import ReportCollection, is_targets, prepare_folder, report, write_atomic
from uqviz.reporting.gate import GATES, gate
from uqviz.reporting.serialise import dataset_to_json, jsonable
from uqviz.reporting.wording import fmt

__all__ = ["main", "VALIDATE_DEPRECATED"]

#: the line ``uqviz validate`` (the old name of ``uqviz average``) prints to stderr
VALIDATE_DEPRECATED = (
    f"`uqviz validate` is deprecated and will be removed in uqviz {REMOVED_IN}: use `uqviz average`"
)


def _add_data_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("csv", nargs="?", help="CSV file; omitted: the embedded default example")
    p.add_argument(
        "--errors", help="column of errors E (reference - prediction); several targets: A,B,..."
    )
    p.add_argument(
        "--reference",
        help="column of reference values (with --prediction); several targets: a "
        "comma-separated list, one column per target (an empty cell: that target missing)",
    )
    p.add_argument(
        "--prediction", help="column of predicted values (with --reference); several: A,B,..."
    )
    p.add_argument(
        "--uncertainties", help="column of standard uncertainties uE; several targets: A,B,..."
    )
    p.add_argument("--variances", help="column of variances uE^2; several targets: A,B,...")
    p.add_argument(
        "--groups",
        metavar="COLUMN",
        help="column of group labels (a structure, a molecule): bootstraps resample whole groups",
    )
    p.add_argument(
        "--quantiles",
        nargs="+",
        metavar="LEVEL:COLUMN",
        default=None,
        help="a forecast given as predictive quantiles, e.g. 0.05:q05 0.5:q50 "
        "0.95:q95 (with --reference and --prediction); kept as given",
    )
    p.add_argument(
        "--samples",
        nargs="+",
        metavar="COLUMN",
        default=None,
        help="a forecast given as ensemble members or draws, one column each "
        "(with --reference; --prediction defaults to their mean)",
    )
    p.add_argument(
        "--lower",
        help="column of the lower limit of a central interval (with "
        "--upper, --level, --reference and --prediction)",
    )
    p.add_argument("--upper", help="column of the upper limit of a central interval")
    p.add_argument(
        "--level", type=float, help="nominal coverage of the --lower/--upper interval, e.g. 0.9"
    )
    p.add_argument(
        "--features",
        nargs="+",
        default=None,
        help="numeric columns of input features: the adaptivity analysis of `report` "
        "(`average` only checks them)",
    )
    p.add_argument("--sep", default=",", help="field separator of the CSV (default ',')")
    p.add_argument("--decimal", default=".", help="decimal mark of the CSV (default '.')")
    p.add_argument(
        "--drop-invalid",
        action="store_true",
        help="drop rows with NaN/inf or uE <= 0 (counted in a warning) "
        "instead of stopping with an error",
    )
    p.add_argument(
        "--rng",
        "--seed",
        dest="seed",
        type=int,
        default=0,
        help="random seed (reproducible output; default 0)",
    )


def _add_gate_arguments(v: argparse.ArgumentParser) -> None:
    """The arguments of ``uqviz average`` (and of its deprecated alias ``uqviz validate``)."""
    _add_data_arguments(v)
    v.add_argument(
        "--statistics",
        nargs="+",
        default=["ZMS", "RCE"],
        help="statistics to validate (default: ZMS RCE)",
    )
    v.add_argument("--n-boot", type=int, default=10_000, help="bootstrap replicates")
    v.add_argument(
        "--fail-on",
        action="append",
        choices=GATES,
        default=None,
        help="exit with status 1 when this verdict fails (repeat for several): "
        "average (a statistic of --statistics rejected), consistency (f_v of "
        "LZMS in bins of uE below what calibrated data give), adaptivity (the "
        "same in bins of each --features column, beyond the uE effect), pit "
        "(the PIT of the forecast as given, e.g. --quantiles or --samples, not "
        "uniform: its ECDF outside the simultaneous band; Phi(E/uE) for a std "
        "forecast), any (average, consistency and adaptivity when --features "
        "are given; not pit, which tests the shape of the forecast too: add "
        "--fail-on pit). The gated tests "
        "are decided together (Holm): a calibrated model fails the gate in at "
        "most 5 %% of runs. Exit status 3 when none fails but one is "
        "unreliable (heavy tails, or an interval that cannot be computed).",
    )
    v.add_argument(
        "--json",
        dest="json_path",
        metavar="FILE",
        help="write the numbers and verdicts to FILE (JSON)",
    )


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="uqviz", description="Validate ML prediction uncertainties.")
    sub = p.add_subparsers(dest="command", required=True)
    for command, what in (
        (
            "average",
            "average calibration (ZMS, RCE), the tailedness screen and the CI gate (--fail-on)",
        ),
        ("validate", f"deprecated alias of `average` (removed in uqviz {REMOVED_IN})"),
    ):
        v = sub.add_parser(command, help=what)
        _add_gate_arguments(v)
    r = sub.add_parser("report", help="full validation report (HTML + JSON)")
    _add_data_arguments(r)
    r.add_argument("--out", default="uqviz-report", help="output folder (default uqviz-report)")
    r.add_argument("--n-boot", type=int, default=10_000, help="bootstrap replicates")
    r.add_argument("--n-mc", type=int, default=2000, help="Monte Carlo size of references")
    r.add_argument(
        "--no-remedy",
        dest="remedy",
        action="store_false",
        help="do not recalibrate and re-validate when a test fails (no Remedy section)",
    )
    return p


def quantile_columns(pairs):
    """``{level: column}`` from ``--quantiles LEVEL:COLUMN ...``; a clear error otherwise."""
    if pairs is None:
        return None
    out = {}
    for item in pairs:
        level, sep, column = item.partition(":")
        try:
            p = float(level)
        except ValueError:
            p = None
        if not sep or not column or p is None:
            raise ValueError(f"--quantiles {item!r}: expected LEVEL:COLUMN, e.g. 0.05:q05")
        out[p] = column
    return out


def column_list(value):
    """``"a,b"`` -> ``["a", "b"]`` (several targets); one name stays a str; None stays None.

    Examples
    --------
    >>> column_list("logS,logP"), column_list("y"), column_list(None)
    (['logS', 'logP'], 'y', None)
    """
    if value is None or "," not in value:
        return value
    names = [c.strip() for c in value.split(",")]
    if not all(names):
        raise ValueError(f"{value!r}: an empty column name in the comma-separated list")
    return names


def load_data(args):
    """Build the dataset named by the command-line arguments (a targets tree for
    comma-separated lists of columns)."""
    forecast = {
        "quantiles": quantile_columns(getattr(args, "quantiles", None)),
        "samples": getattr(args, "samples", None),
        "lower": getattr(args, "lower", None),
        "upper": getattr(args, "upper", None),
        "level": getattr(args, "level", None),
    }
    if args.csv is None:
        if any(
            [
                args.errors,
                args.reference,
                args.prediction,
                args.uncertainties,
                args.variances,
                getattr(args, "groups", None),
                *[v is not None for v in forecast.values()],
            ]
        ):
            raise ValueError("column options need a CSV file")
        return default_example()
    return read_csv(
        args.csv,
        errors=column_list(args.errors),
        reference=column_list(args.reference),
        prediction=column_list(args.prediction),
        uncertainties=column_list(args.uncertainties),
        variances=column_list(args.variances),
        groups=getattr(args, "groups", None),
        features=args.features,
        drop_invalid=args.drop_invalid,
        sep=args.sep,
        decimal=args.decimal,
        **forecast,
    )


def _json_target(path):
    """Check before any computation that the JSON file can be written; return its path."""
    path = os.fspath(path)
    if os.path.isdir(path):
        raise IsADirectoryError(f"--json {path!r} is a directory, not a file")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise FileNotFoundError(f"--json {path!r}: no such folder {folder!r}")
    if not os.access(folder, os.W_OK):
        raise PermissionError(f"--json {path!r}: folder {folder!r} is not writable")
    return path


def _line(key, v) -> str:
    """One gated verdict in words."""
    if key.startswith("average:"):
        head = f"Average calibration ({key.split(':')[1]})"
        what = (
            f"{fmt(v.get('estimate'))}, 95 % CI [{fmt(v.get('ci_lower'))}, "
            f"{fmt(v.get('ci_upper'))}]"
        )
    elif key == "pit":
        head = f"PIT uniformity (forecast: {v.get('forecast', 'std')})"
        what = (
            f"ECDF {'inside' if v.get('valid') else 'outside'} its simultaneous 95 % band "
            f"(pointwise level {fmt(v.get('band_level'), '.4g')}); KS p = "
            f"{fmt(v.get('ks_p_value'), '.2g')}, CvM p = {fmt(v.get('cvm_p_value'), '.2g')}; "
            f"PIT mean {fmt(v.get('pit_mean'), '.3f')} (1/2), variance "
            f"{fmt(v.get('pit_var'), '.4f')} (1/12 = 0.0833)"
        )
    else:
        head = (
            "Consistency"
            if key == "consistency"
            else f"Adaptivity in {key.split(':')[1]} (beyond the uE effect)"
        )
        if v["verdict"] == "not tested":
            return f"{head}: not tested ({v['reason']})."
        what = (
            f"f_v = {fmt(v['estimate'], '.2f')} in {v['n_bins']} bins; calibrated data give "
            f"{fmt(v.get('reference'), '.2f')}, at least {fmt(v.get('reference_lower'), '.2f')}"
            " accepted"
        )
        if v.get("n_unreliable"):
            what += f"; {v['n_unreliable']} bins unreliable (heavy tails or no interval)"
    if v.get("p_adjusted") is not None:
        what += f"; p = {fmt(v['p_value'], '.2g')}, Holm-adjusted {fmt(v['p_adjusted'], '.2g')}"
    if v.get("reason"):
        what += f"; {v['reason']}"
    return f"{head}: {v['verdict']} ({what})."


def _print_average(res, tail, out) -> None:
    """The average-calibration table and the tailedness screen of one dataset."""
    print(text.average_table(res), file=out)
    print(
        "\nTailedness screen (robust skewness beta_GM, limits of Pernot (2024b), Table II)",
        file=out,
    )
    print(text.tailedness_table(tail), file=out)
    warns = text.tailedness_warnings(tail)
    for w in warns:
        print(f"WARNING: {w}", file=out)
    unmeasured = [
        str(v)
        for v, b in zip(tail["variable"].values, tail["beta_gm"].values)
        if not math.isfinite(float(b))
    ]
    if unmeasured:
        print(
            f"Tailedness not measured for {', '.join(unmeasured)}: constant values (no "
            "spread, no tails; the bootstrap of a constant is degenerate).",
            file=out,
        )
    elif not warns:
        print(
            "No heavy tails detected: the bootstrap intervals above should be reliable.", file=out
        )


def run_average(args, out=None) -> int:
    """``uqviz average``: print the average-calibration table and the tailedness screen; gate
    on verdicts (``--fail-on``).

    Returns 1 when a verdict named by ``--fail-on`` fails, 3 when none fails but one is
    unreliable, else 0.
    """
    out = sys.stdout if out is None else out
    gates = list(dict.fromkeys(args.fail_on or []))
    if "adaptivity" in gates and not args.features:
        raise ValueError("--fail-on adaptivity needs --features (the columns to bin on)")
    json_path = None if args.json_path is None else _json_target(args.json_path)
    ds = load_data(args)
    if is_targets(ds):  # several targets: one gate, one Holm family over all of them
        return run_average_targets(args, ds, gates, json_path, out)
    name = ds.attrs.get("name", "data")
    n_points = _n_points(ds)
    with warnings.catch_warnings():  # the table ("unreliable", "not tested") and the WARNING
        warnings.simplefilter("ignore", UnreliableWarning)  # lines below say it
        # --seed N is rng=N: the numbers of validate_average(ds, rng=N) in Python, which the
        # gate's average calibration also gives (docs/conventions.md, "Randomness")
        result = (
            gate(
                ds,
                fail_on=gates,
                statistics=args.statistics,
                features=args.features,
                n_boot=args.n_boot,
                rng=args.seed,
            )
            if gates
            else None
        )
        res = (
            result["average"]
            if gates
            else validate_average(ds, statistics=args.statistics, n_boot=args.n_boot, rng=args.seed)
        )
    tail = tailedness(ds)
    print(
        f"Average calibration of '{name}': M = {n_points} points, "
        f"{args.n_boot} BCa bootstrap replicates, seed {args.seed}",
        file=out,
    )
    sets = next((d for d in ("target", "dataset") if d in res.dims), None)
    for child in [None] if sets is None else [str(v) for v in res[sets].values]:
        if child is not None:
            print(f"\n== {child} ==", file=out)
        _print_average(
            res if child is None else res.sel({sets: child}),
            tail if child is None else tail.sel({sets: child}),
            out,
        )
    numbers = {"average": dataset_to_json(res), "tailedness": dataset_to_json(tail)}
    status, failed, unreliable, verdicts = 0, [], [], {}
    if result is None:
        print(
            "\nAverage calibration is necessary, not sufficient: check consistency (bins on "
            "uE) and adaptivity (bins on input features) with uqviz.local_calibration "
            "(or --fail-on any --features ...).",
            file=out,
        )
    else:
        table = result["table"]  # the verdict table: which tests are gated, their reasons
        gated = [str(t) for t in table["test"].values[table["gated"].values]]
        verdicts = {k: result["verdicts"][k] for k in gated}  # the entries: the JSON
        numbers.update(
            {k: v for k, v in result["numbers"].items() if k not in ("average", "tailedness")}
        )
        print(
            f"\nGated verdicts ({len(verdicts)} tests, family-wise false-alarm rate 0.05, Holm):",
            file=out,
        )
        for key, v in verdicts.items():
            print("  " + _line(key, v), file=out)
        failed, unreliable = result["failed"], result["unreliable"]
        status = result["exit_status"]
        why = "; ".join(
            f"{k}: {table['reason'].sel(test=k).item() or 'no conclusion'}" for k in unreliable
        )
        print(f"\nGate (--fail-on {' '.join(gates)}): {_gate_words(failed, why)}", file=out)
    if json_path is not None:
        doc = {
            "name": name,
            "n_points": n_points,
            "settings": {
                "statistics": list(args.statistics),
                "n_boot": args.n_boot,
                "seed": args.seed,
                "features": args.features or [],
                "fail_on": gates,
            },
            "verdicts": verdicts,
            "failed": failed,
            "unreliable": unreliable,
            "exit_status": status,
            **numbers,
        }
        write_atomic(json_path, json.dumps(jsonable(doc), indent=1))
        print(f"JSON numbers: {os.path.abspath(json_path)}", file=out)
    return status


def _n_points(ds) -> int:
    """The points of a dataset, or of every child of a tree (a targets tree: per target)."""
    if hasattr(ds, "children") and "point" not in ds.dims:
        return sum(int(c.sizes.get("point", 0)) for c in ds.children.values())
    return int(ds.sizes["point"])


def _print_report(rep, out) -> None:
    """The headline, the conclusion and the further diagnostics of one Report."""
    further = rep.numbers.get("further_diagnostics", {}).get("conclusion", [])
    print(rep.headline + "\n", file=out)
    print("\n".join(c for c in rep.conclusion if c not in further), file=out)
    if further:
        print(
            '\nFurther diagnostics (their own words; their "unreliable" is not in the headline):',
            file=out,
        )
        print("\n".join(further), file=out)


def run_average_targets(args, tree, gates, json_path, out) -> int:
    """``uqviz average`` on a targets tree: each target's (and the pooled points') average
    calibration table, then the gate of :func:`uqviz.reporting.gate.gate` on the tree: one
    Holm family over every target's gated tests; its exit status."""
    pairs = datasets_of(tree)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnreliableWarning)
        if gates:
            result = gate(
                tree,
                fail_on=gates,
                statistics=args.statistics,
                features=args.features,
                n_boot=args.n_boot,
                rng=args.seed,
            )
            averages = result["average"]
        else:  # the streams of the gate: its averages, with or without --fail-on
            result = None
            streams = check_rng(args.seed).spawn(len(pairs))
            averages = {
                k: validate_average(d, statistics=args.statistics, n_boot=args.n_boot, rng=s)
                for (k, d), s in zip(pairs, streams)
            }
    numbers = {}
    for k, d in pairs:
        print(
            f"Average calibration of target '{k}': M = {d.sizes['point']} points "
            f"({int(d.attrs.get('n_missing', 0))} missing), {args.n_boot} BCa bootstrap "
            f"replicates, seed {args.seed}",
            file=out,
        )
        print(text.average_table(averages[k]) + "\n", file=out)
        numbers[k] = {"average": dataset_to_json(averages[k])}
    status, failed, unreliable, verdicts = 0, [], [], {}
    if result is not None:
        table = result["table"]
        gated = [str(t) for t in table["test"].values[table["gated"].values]]
        verdicts = {k: result["verdicts"][k] for k in gated}
        print(
            f"Gated verdicts ({len(verdicts)} tests of {len(pairs)} targets, one family, "
            "family-wise false-alarm rate 0.05, Holm):",
            file=out,
        )
        for key, v in verdicts.items():
            target, _, test = key.partition("/")
            print(f"  {target}: " + _line(test, v), file=out)
        failed, unreliable, status = result["failed"], result["unreliable"], result["exit_status"]
        words = _gate_words(failed, ", ".join(unreliable))
        print(f"\nGate (--fail-on {' '.join(gates)}): {words}", file=out)
    if json_path is not None:
        doc = {
            "name": str(tree.attrs.get("name") or "targets"),
            "layout": "targets",
            "targets": [k for k, _ in pairs],
            "settings": {
                "statistics": list(args.statistics),
                "n_boot": args.n_boot,
                "seed": args.seed,
                "features": args.features or [],
                "fail_on": gates,
            },
            "verdicts": verdicts,
            "family": result["family"] if result is not None else None,
            "failed": failed,
            "unreliable": unreliable,
            "exit_status": status,
            "datasets": numbers,
        }
        write_atomic(json_path, json.dumps(jsonable(doc), indent=1))
        print(f"JSON numbers: {os.path.abspath(json_path)}", file=out)
    return status


def _gate_words(failed, unreliable: str) -> str:
    """The gate's line: the failed tests, else the unreliable ones (``unreliable``: their
    names or reasons, empty when none), with the exit status.

    Examples
    --------
    >>> _gate_words([], ""), _gate_words(["average"], ""), _gate_words([], "average")
    ('passed', 'FAILED (average); exit status 1', 'UNRELIABLE (average); exit status 3')
    """
    if failed:
        return f"FAILED ({', '.join(failed)}); exit status 1"
    return f"UNRELIABLE ({unreliable}); exit status 3" if unreliable else "passed"


def run_report(args, out=None) -> int:
    """Write the HTML and JSON report; print the headline, the conclusion (the calibration
    questions, then the further diagnostics) and the paths. Returns 0 (the exit status of a
    gate is `average --fail-on`'s)."""
    out = sys.stdout if out is None else out
    prepare_folder(args.out)  # fail before the computation, not after
    ds = load_data(args)
    rep = report(
        ds,
        features=args.features,
        n_boot=args.n_boot,
        n_mc=args.n_mc,
        rng=args.seed,
        progress=None,
        remedy=args.remedy,
    )
    paths = rep.save(args.out)
    # a tree (several targets, or datasets): one section per child, named
    reports = getattr(rep, "reports", None) or {None: rep}
    if getattr(rep, "reports", None) and "missing" in ds.attrs:
        print(ds.attrs["missing"] + "\n", file=out)
    if isinstance(rep, ReportCollection) and rep.layout == "targets":
        print(rep.summary() + "\n", file=out)
    for child, one in reports.items():
        if child is not None:
            print(f"== {child} ==", file=out)
        _print_report(one, out)
    print(f"\nHTML report: {os.path.abspath(paths['html'])}", file=out)
    print(f"JSON numbers: {os.path.abspath(paths['json'])}", file=out)
    return 0


#: Python argument names in uqviz's messages -> the command-line flags that set them
_FLAGS = {
    "drop_invalid": "--drop-invalid",
    "n_boot": "--n-boot",
    "n_mc": "--n-mc",
    **{
        c: f"--{c}"
        for c in (
            "errors",
            "reference",
            "prediction",
            "uncertainties",
            "variances",
            "features",
            "groups",
        )
    },
}


def cli_message(msg: str) -> str:
    """A message of the Python API in the words of the command line.

    Examples
    --------
    >>> cli_message("invalid values (pass drop_invalid=True to drop these rows)")
    'invalid values (pass --drop-invalid to drop these rows)'
    >>> cli_message("pass errors= or reference= and prediction=; n_boot must be >= 2")
    'pass --errors or --reference and --prediction; --n-boot must be >= 2'
    """
    msg = re.sub(r"\bdrop_invalid=True\b", _FLAGS["drop_invalid"], msg)
    msg = re.sub(
        r"\b(errors|reference|prediction|uncertainties|variances|features|groups)=(?=[\s,;)]|$)",
        lambda m: _FLAGS[m.group(1)],
        msg,
    )
    return re.sub(r"\b(n_boot|n_mc)\b", lambda m: _FLAGS[m.group(1)], msg)


def main(argv=None) -> int:
    """Run the ``uqviz`` command; returns the exit status (2 for a user error).

    Examples
    --------
    >>> main(["average", "no_such_file.csv"])
    2
    """
    args = _parser().parse_args(argv)
    if args.command == "validate":
        print(VALIDATE_DEPRECATED, file=sys.stderr)
    command = {"average": run_average, "validate": run_average, "report": run_report}[args.command]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("always")
            return command(args)
    except (ValueError, TypeError, OSError) as exc:
        msg = (
            str(exc)
            if not isinstance(exc, OSError) or not exc.filename
            else f"{exc.strerror}: {exc.filename!r}"
        )
        print(f"uqviz: error: {cli_message(msg)}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
