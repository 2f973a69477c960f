"""Multivariate predictions: NEES and the quantile calibration error (M-QCE, C-QCE)."""

from uqviz.quantile.qce import REDUCTIONS, SAMPLE_MODELS, nees, nees_test, qce, qce_to_numpy

__all__ = ["REDUCTIONS", "SAMPLE_MODELS", "nees", "nees_test", "qce", "qce_to_numpy"]
