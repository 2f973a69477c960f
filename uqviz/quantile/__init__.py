"""Multivariate predictions: NEES and the quantile calibration error (M-QCE, C-QCE)."""

from uqviz.quantile.nees import nees, nees_test
from uqviz.quantile.qce import METHODS, REDUCTIONS, SAMPLE_MODELS, qce, qce_to_numpy

__all__ = ["METHODS", "REDUCTIONS", "SAMPLE_MODELS", "nees", "nees_test", "qce", "qce_to_numpy"]
