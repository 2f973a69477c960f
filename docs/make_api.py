"""Write docs/api.md, the API reference, from the numpydoc docstrings of uqviz.

Usage: ``python docs/make_api.py`` (``--check`` exits 1 when docs/api.md is stale).
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import sys
from pathlib import Path

# (section title, module, public names) - the public surface, grouped by topic
SECTIONS = [
    ("Data", "uqviz.data", ["from_arrays", "from_dataframe", "read_csv", "from_datasets",
                            "check_dataset", "z_scores"]),
    ("Literature datasets", "uqviz.datasets", ["list_datasets", "load_dataset",
                                               "load_collection"]),
    ("Synthetic data", "uqviz.synthetic", ["nig", "tig", "calibrated", "default_example",
                                           "student_t_scaled"]),
    ("Average calibration", "uqviz", ["validate_average", "tailedness"]),
    ("Statistics registry", "uqviz.statistics", ["get_statistic", "list_statistics",
                                                 "register_statistic", "point_estimate"]),
    ("Distribution shapes", "uqviz", ["distribution_shapes", "fit_inverse_gamma",
                                             "fit_f", "fit_student_t"]),
    ("Decimation", "uqviz", ["decimation_curve", "decimated"]),
    ("Monte Carlo studies", "uqviz.experiments", ["validation_probability", "statistic_bias",
                                                  "save_study", "load_study"]),
    ("Binning", "uqviz.engine.binning", ["compute_bins"]),
    ("Conditional calibration", "uqviz", ["local_calibration", "fraction_valid",
                                                      "acf", "binned_errors"]),
    ("Generative distributions", "uqviz.generative", ["normal", "student_t", "uniform",
                                                      "laplace", "empirical",
                                                      "get_generative"]),
    ("Simulated references", "uqviz", ["simulated_reference", "validate_simulated",
                                                 "validate"]),
    ("Tails", "uqviz", ["nig_skewness_curve", "nig_implied_shape"]),
    ("Running statistics and reliability", "uqviz", ["running_statistics",
                                                              "reliability"]),
    ("Ordering study", "uqviz", ["ordering_study"]),
    ("Size dependence and extrapolation", "uqviz", ["size_dependence",
                                                                   "extrapolate"]),
    ("Confidence curves", "uqviz", ["confidence_curve"]),
    ("Quantile calibration", "uqviz.quantile", ["qce", "qce_to_numpy", "nees", "nees_test"]),
    ("Interval coverage and proper scores", "uqviz", ["interval_coverage", "calibration_curve",
                                                     "proper_scores"]),
    ("Report", "uqviz", ["report"]),
    ("Plots: average calibration and tails", "uqviz.plots.average",
     ["intervals", "skewness_map", "zeta_comparison", "decimation_curves", "fit_histogram"]),
    ("Plots: Monte Carlo studies", "uqviz.plots.experiments",
     ["validation_probability", "bias_vs_skewness"]),
    ("Plots: conditional calibration", "uqviz.plots.conditional",
     ["zscores_vs", "local", "acf", "ordering", "reliability_diagram"]),
    ("Plots: simulated references", "uqviz.plots.reference",
     ["zeta_scores", "reference_sensitivity", "reference_distribution", "size_dependence",
      "extrapolation", "confidence_curve"]),
    ("Plots: quantile calibration", "uqviz.plots.quantile",
     ["quantile_reliability", "coverage_map"]),
    ("Plots: interval coverage", "uqviz.plots.scores", ["calibration_curve", "coverage"]),
    ("Explorers", "uqviz.widgets", ["ConditionalExplorer", "ReferenceExplorer"]),
]

OUT = Path(__file__).with_name("api.md")


def _entry(module, name):
    obj = getattr(importlib.import_module(module), name)
    try:
        sig = str(inspect.signature(obj))
    except (TypeError, ValueError):
        sig = "(...)"
    doc = inspect.cleandoc(obj.__doc__ or "(undocumented)")
    return f"### `{module}.{name}{sig}`\n\n```text\n{doc}\n```\n"


def render(sections=SECTIONS) -> str:
    """The whole API reference as Markdown."""
    parts = ["# uqviz API reference\n",
             "Generated from the numpydoc docstrings by `docs/make_api.py`; do not edit.\n"]
    for title, module, names in sections:
        parts.append(f"## {title}\n")
        parts += [_entry(module, n) for n in names if hasattr(importlib.import_module(module), n)]
    return "\n".join(parts)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--check", action="store_true")
    args = p.parse_args(argv)
    text = render()
    if args.check:
        ok = OUT.exists() and OUT.read_text() == text
        print("docs/api.md is up to date" if ok else "docs/api.md is stale: run make docs")
        return 0 if ok else 1
    OUT.write_text(text)
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
