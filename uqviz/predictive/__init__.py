"""The forecast as given (quantiles, intervals, ensembles) and its probability integral transform.

:mod:`~uqviz.predictive.forecast` reads the form of a forecast kept by
:func:`uqviz.from_predictions` and evaluates its predictive CDF and quantiles;
:mod:`~uqviz.predictive.pit` computes the PIT and tests its uniformity (:func:`pit`,
:func:`validate_pit`, :func:`local_pit`).
"""

from uqviz.predictive.forecast import forecast_form, observed, predictive_cdf, predictive_quantiles
from uqviz.predictive.pit import local_pit, pit, validate_pit

__all__ = [
    "forecast_form",
    "observed",
    "predictive_cdf",
    "predictive_quantiles",
    "pit",
    "validate_pit",
    "local_pit",
]
