"""uqviz: can the uncertainties of a regression model be trusted?

Validation of prediction uncertainties (average calibration, consistency,
adaptivity) on labelled xarray data, after P. Pernot's method papers.

Examples
--------
>>> import uqviz
>>> ds = uqviz.synthetic.default_example()
>>> res = uqviz.validate_average(ds, n_boot=2000, rng=0)
>>> res["statistic"].values.tolist()
['ZMS', 'RCE']
"""

from . import (confidence, extrapolation, tails, datasets, decimation, experiments, generative, quantile, shapes, statistics,
               synthetic)
from .conditional import acf, binned_errors, fraction_valid, local_calibration
from .data import check_dataset, from_arrays, from_dataframe, from_datasets, read_csv, z_scores
from .statistics import get_statistic, list_statistics
from .confidence import confidence_curve
from .decimation import decimated
from .extrapolation import extrapolate, size_dependence
from .ordering import ordering_study
from .running import reliability, running_statistics
from .tails import nig_implied_shape, nig_skewness_curve
from .experiments import load_study, save_study, statistic_bias, validation_probability
from .quantile import nees, nees_test, qce, qce_to_numpy
from .reference import simulated_reference, validate, validate_simulated
from .reporting import report
from .shapes import distribution_shapes, fit_f, fit_inverse_gamma, fit_student_t
from .validation import tailedness, validate_average

__version__ = "0.1.0"

__all__ = [
    "confidence",
    "confidence_curve",
    "extrapolate",
    "extrapolation",
    "nig_implied_shape",
    "nig_skewness_curve",
    "ordering_study",
    "reliability",
    "running_statistics",
    "size_dependence",
    "tails",
    "acf",
    "binned_errors",
    "check_dataset",
    "datasets",
    "decimated",
    "decimation",
    "distribution_shapes",
    "experiments",
    "fit_f",
    "fit_inverse_gamma",
    "fit_student_t",
    "fraction_valid",
    "load_study",
    "local_calibration",
    "nees",
    "nees_test",
    "qce",
    "qce_to_numpy",
    "quantile",
    "from_arrays",
    "generative",
    "from_dataframe",
    "from_datasets",
    "get_statistic",
    "list_statistics",
    "read_csv",
    "report",
    "save_study",
    "shapes",
    "simulated_reference",
    "statistic_bias",
    "statistics",
    "synthetic",
    "tailedness",
    "validate",
    "validate_average",
    "validate_simulated",
    "validation_probability",
    "z_scores",
]
