"""Interval-based validation and proper scores: interval coverage (PICP, MPIW), calibration
curves (miscalibration area, MACE, RMSCE), proper scoring rules (NLL, CRPS, check,
interval), sharpness and dispersion. Local coverage per bin is
``uqviz.local_calibration(..., statistic="PICP")``."""

from uqviz.scores.coverage import calibration_curve, interval_coverage
from uqviz.scores.proper import proper_scores

__all__ = ["calibration_curve", "interval_coverage", "proper_scores"]
