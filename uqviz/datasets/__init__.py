"""The literature datasets: a sha256-checked file registry, loaders and a formula parser.

The public namespace ``uqviz.datasets``; the implementation is :mod:`uqviz.data.datasets`
(``registry.py`` fetches the files, ``loaders.py`` turns them into datasets, ``formula.py``
parses molecular formulas, also importable as :mod:`uqviz.datasets.formula`).

Examples
--------
>>> from uqviz.datasets import list_datasets
>>> list_datasets().shape
(17, 6)
"""

import uqviz.data.datasets as _impl
from uqviz.data.datasets import (
    ATOMIC_WEIGHTS,
    COLLECTIONS,
    ENV_VAR,
    REGISTRY,
    URLS,
    DataFileHashError,
    DataFileNotFoundError,
    data_dir,
    fetch,
    hetero_fraction,
    hetero_fractions,
    list_datasets,
    load_collection,
    load_dataset,
    molecular_mass,
    molecular_masses,
    parse_formula,
)
from uqviz.datasets import formula

__all__ = list(_impl.__all__)  # exactly the implementation's public names
