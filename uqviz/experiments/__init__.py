"""Monte Carlo studies of the validation methods, chunked, seeded, resumable, on dask."""

from uqviz.experiments.storage import load_study, save_study, stored_study
from uqviz.experiments.studies import TAILEDNESS_VARIABLES, statistic_bias, validation_probability
from uqviz.experiments.verdicts import operating_characteristics

__all__ = [
    "TAILEDNESS_VARIABLES",
    "load_study",
    "operating_characteristics",
    "save_study",
    "statistic_bias",
    "stored_study",
    "validation_probability",
]
