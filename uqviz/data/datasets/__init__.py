"""Real ML-UQ validation sets (sha256-checked registry) and a molecular-formula parser.

Examples
--------
>>> from uqviz.datasets import list_datasets
>>> list_datasets().shape
(17, 6)
"""

from uqviz.data.datasets.formula import (
    ATOMIC_WEIGHTS,
    hetero_fraction,
    hetero_fractions,
    molecular_mass,
    molecular_masses,
    parse_formula,
)
from uqviz.data.datasets.loaders import COLLECTIONS, list_datasets, load_collection, load_dataset
from uqviz.data.datasets.registry import (
    ENV_VAR,
    REGISTRY,
    URLS,
    DataFileHashError,
    DataFileNotFoundError,
    data_dir,
    fetch,
)

__all__ = [
    "ATOMIC_WEIGHTS",
    "COLLECTIONS",
    "DataFileHashError",
    "DataFileNotFoundError",
    "ENV_VAR",
    "REGISTRY",
    "URLS",
    "data_dir",
    "fetch",
    "hetero_fraction",
    "hetero_fractions",
    "list_datasets",
    "load_collection",
    "load_dataset",
    "molecular_mass",
    "molecular_masses",
    "parse_formula",
]
