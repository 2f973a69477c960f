"""Monte Carlo studies of the validation methods, chunked, seeded, resumable, on dask."""

from uqviz.experiments.storage import load_study, save_study
from uqviz.experiments.studies import (TAILEDNESS_VARIABLES, statistic_bias,
                                       validation_probability)

__all__ = ["TAILEDNESS_VARIABLES", "load_study", "save_study", "statistic_bias",
           "validation_probability"]
