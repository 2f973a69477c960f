"""Comparing models: several forecasts of the same points, paired-bootstrap differences of
statistics and scores, ranking probabilities and the systematic improvement probability
(``compare_models``; plots in :mod:`uqviz.plots.comparison`); ``same_points``: whether
datasets can be models of the same points (the check of ``compare_models`` and of the report)."""

from uqviz.comparison.models import compare_models
from uqviz.comparison.points import same_points

__all__ = ["compare_models", "same_points"]
