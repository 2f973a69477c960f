"""Interval-based validation and proper scores: interval coverage (PICP, MPIW), calibration
curves (miscalibration area, MACE, RMSCE), proper scoring rules (NLL, CRPS, check,
interval), sharpness and dispersion; the scores of a forecast as given (ensembles, quantiles,
intervals: ``predictive_scores``) and the paired comparison of two forecasts
(``compare_forecasts``). Local coverage per bin is
``uqviz.local_interval_coverage(...)``."""

from uqviz.scores.coverage import calibration_curve, interval_coverage
from uqviz.scores.predictive import compare_forecasts, predictive_scores
from uqviz.scores.proper import proper_scores

__all__ = [
    "calibration_curve",
    "compare_forecasts",
    "interval_coverage",
    "predictive_scores",
    "proper_scores",
]
