"""Comparing models: several forecasts of the same points, paired-bootstrap differences of
statistics and scores, ranking probabilities and the systematic improvement probability
(``compare_models``; plots in :mod:`uqviz.plots.comparison`)."""

from uqviz.comparison.models import compare_models

__all__ = ["compare_models"]
