"""Average calibration: bootstrap validation, tailedness screen, distribution fits, decimation."""

from uqviz.average.decimation import decimated, decimation_curve
from uqviz.average.nig import nig_implied_shape, nig_skewness_curve
from uqviz.average.shapes import distribution_shapes, fit_f, fit_inverse_gamma, fit_student_t
from uqviz.average.validation import tailedness, validate_average

__all__ = [
    "decimated",
    "decimation_curve",
    "distribution_shapes",
    "fit_f",
    "fit_inverse_gamma",
    "fit_student_t",
    "nig_implied_shape",
    "nig_skewness_curve",
    "tailedness",
    "validate_average",
]
