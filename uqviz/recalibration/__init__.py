"""Recalibration of uncertainties (sigma scaling, linear, bin-wise variance scaling, isotonic),
fitted once or cross-fitted."""

from uqviz.recalibration.fitting import Recalibration, fit_recalibration, recalibrate

__all__ = ["Recalibration", "fit_recalibration", "recalibrate"]
