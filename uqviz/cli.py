"""Console entry point: ``uqviz validate [CSV] ...`` and ``uqviz report [CSV] ...``.

User errors print one ``uqviz: error: ...`` line and exit with status 2.

Examples
--------
::

    uqviz validate                                 # the embedded default example
    uqviz validate data.csv --reference y --prediction yhat --variances var
    uqviz report data.csv --errors E --uncertainties uE --features mass --out reports/
    uqviz report data.csv --errors E --uncertainties uE --no-remedy   # no recalibration
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings

from uqviz.reporting import text

__all__ = ["main"]


def _add_data_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("csv", nargs="?", help="CSV file; omitted: the embedded default example")
    p.add_argument("--errors", help="column of errors E (reference - prediction)")
    p.add_argument("--reference", help="column of reference values (with --prediction)")
    p.add_argument("--prediction", help="column of predicted values (with --reference)")
    p.add_argument("--uncertainties", help="column of standard uncertainties uE")
    p.add_argument("--variances", help="column of variances uE^2")
    p.add_argument("--features", nargs="+", default=None,
                   help="numeric columns of input features: the adaptivity analysis of `report` "
                        "(`validate` only checks them)")
    p.add_argument("--sep", default=",", help="field separator of the CSV (default ',')")
    p.add_argument("--decimal", default=".", help="decimal mark of the CSV (default '.')")
    p.add_argument("--drop-invalid", action="store_true",
                   help="drop rows with NaN/inf or uE <= 0 (counted in a warning) "
                        "instead of stopping with an error")
    p.add_argument("--rng", "--seed", dest="seed", type=int, default=0,
                   help="random seed (reproducible output; default 0)")


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="uqviz", description="Validate ML prediction uncertainties.")
    sub = p.add_subparsers(dest="command", required=True)
    v = sub.add_parser("validate", help="average calibration (ZMS, RCE) and tailedness screen")
    _add_data_arguments(v)
    v.add_argument("--statistics", nargs="+", default=["ZMS", "RCE"],
                   help="statistics to validate (default: ZMS RCE)")
    v.add_argument("--n-boot", type=int, default=10_000, help="bootstrap replicates")
    r = sub.add_parser("report", help="full validation report (HTML + JSON)")
    _add_data_arguments(r)
    r.add_argument("--out", default="uqviz-report", help="output folder (default uqviz-report)")
    r.add_argument("--n-boot", type=int, default=10_000, help="bootstrap replicates")
    r.add_argument("--n-mc", type=int, default=2000, help="Monte Carlo size of references")
    r.add_argument("--no-remedy", dest="remedy", action="store_false",
                   help="do not recalibrate and re-validate when a test fails (no Remedy "
                        "section)")
    return p


def load_data(args):
    """Build the dataset named by the command-line arguments."""
    from uqviz.data.model import read_csv
    from uqviz.data.synthetic import default_example

    if args.csv is None:
        if any([args.errors, args.reference, args.prediction, args.uncertainties,
                args.variances]):
            raise ValueError("column options need a CSV file")
        return default_example()
    return read_csv(args.csv, errors=args.errors, reference=args.reference,
                    prediction=args.prediction, uncertainties=args.uncertainties,
                    variances=args.variances, features=args.features,
                    drop_invalid=args.drop_invalid, sep=args.sep, decimal=args.decimal)


def run_validate(args, out=None) -> int:
    """Print the average-calibration table and the tailedness screen."""
    from uqviz.average.validation import tailedness, validate_average

    out = sys.stdout if out is None else out
    ds = load_data(args)
    name = ds.attrs.get("name", "data")
    with warnings.catch_warnings():  # the table and the WARNING lines below say it
        warnings.filterwarnings("ignore", message="validate_average: unreliable")
        res = validate_average(ds, statistics=args.statistics, n_boot=args.n_boot,
                               rng=args.seed)
    tail = tailedness(ds)
    print(f"Average calibration of '{name}': M = {ds.sizes['point']} points, "
          f"{args.n_boot} BCa bootstrap replicates, seed {args.seed}", file=out)
    print(text.average_table(res), file=out)
    print("\nTailedness screen (robust skewness beta_GM, limits of Pernot (2024b), Table II)",
          file=out)
    print(text.tailedness_table(tail), file=out)
    warns = text.tailedness_warnings(tail)
    for w in warns:
        print(f"WARNING: {w}", file=out)
    if not warns:
        print("No heavy tails detected: the bootstrap intervals above should be reliable.",
              file=out)
    print("\nAverage calibration is necessary, not sufficient: check consistency (bins on uE) "
          "and adaptivity (bins on input features) with uqviz.local_calibration.", file=out)
    return 0


def run_report(args, out=None) -> int:
    """Write the HTML and JSON report; print the conclusion and the paths."""
    from uqviz.reporting.build import prepare_folder, report

    out = sys.stdout if out is None else out
    prepare_folder(args.out)  # fail before the computation, not after
    ds = load_data(args)
    rep = report(ds, features=args.features, n_boot=args.n_boot, n_mc=args.n_mc,
                 rng=args.seed, progress=None, remedy=args.remedy)
    paths = rep.save(args.out)
    print("\n".join(rep.conclusion), file=out)
    print(f"\nHTML report: {os.path.abspath(paths['html'])}", file=out)
    print(f"JSON numbers: {os.path.abspath(paths['json'])}", file=out)
    return 0


def main(argv=None) -> int:
    """Run the ``uqviz`` command; returns the exit status (2 for a user error).

    Examples
    --------
    >>> main(["validate", "no_such_file.csv"])
    2
    """
    args = _parser().parse_args(argv)
    command = {"validate": run_validate, "report": run_report}[args.command]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("always")
            return command(args)
    except (ValueError, TypeError, OSError) as exc:
        msg = str(exc) if not isinstance(exc, OSError) or not exc.filename else \
            f"{exc.strerror}: {exc.filename!r}"
        print(f"uqviz: error: {msg}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
