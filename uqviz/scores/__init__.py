"""Interval-based validation and proper scores: interval coverage (PICP, MPIW), calibration
curves (miscalibration area, MACE, RMSCE), proper scoring rules (NLL, CRPS, check,
interval), sharpness and dispersion; the scores of a forecast as given (ensembles, quantiles,
intervals: ``predictive_scores``) and the paired comparison of two forecasts
(``compare_forecasts``); the joint scores of several targets (``energy_score``,
``variogram_score``, ``dawid_sebastiani_score``, ``energy_score_normal``). Local coverage
per bin is ``uqviz.local_interval_coverage(...)``."""

from uqviz.scores.coverage import calibration_curve, interval_coverage
from uqviz.scores.multivariate import (
    dawid_sebastiani_score,
    energy_score,
    energy_score_normal,
    variogram_score,
)
from uqviz.scores.predictive import compare_forecasts, predictive_scores
from uqviz.scores.proper import proper_scores

__all__ = [
    "calibration_curve",
    "compare_forecasts",
    "dawid_sebastiani_score",
    "energy_score",
    "energy_score_normal",
    "interval_coverage",
    "predictive_scores",
    "proper_scores",
    "variogram_score",
]
