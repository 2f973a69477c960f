"""Real ML-UQ validation sets (pooch registry with sha256) and a molecular-formula parser.

Data directory: ``$UQVIZ_DATA_DIR`` when set (files checked against their sha256,
never downloaded; a relative path is taken from the current working directory),
else pooch's cache ``pooch.os_cache("uqviz")`` with download from GitHub.

Examples
--------
>>> from uqviz.datasets import list_datasets, load_dataset, load_collection
>>> list_datasets().shape
(17, 6)
>>> ds = load_dataset("QM9_E")                  # doctest: +SKIP
>>> tree = load_collection("pernot2024")        # doctest: +SKIP
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
