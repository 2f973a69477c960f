"""Plots: take result Datasets, draw, return the Axes. No statistics are computed here.

One module per analysis package: :mod:`~uqviz.plots.average`, :mod:`~uqviz.plots.experiments`,
:mod:`~uqviz.plots.conditional`, :mod:`~uqviz.plots.groups`, :mod:`~uqviz.plots.reference`,
:mod:`~uqviz.plots.pit`, :mod:`~uqviz.plots.quantile`, :mod:`~uqviz.plots.recalibration`,
:mod:`~uqviz.plots.scores`, :mod:`~uqviz.plots.comparison` (comparing models).
"""

from uqviz.plots import (
    average,
    comparison,
    conditional,
    experiments,
    groups,
    pit,
    quantile,
    recalibration,
    reference,
    scores,
)

__all__ = [
    "average",
    "comparison",
    "conditional",
    "experiments",
    "groups",
    "pit",
    "quantile",
    "recalibration",
    "reference",
    "scores",
]
