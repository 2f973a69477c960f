"""The dataset model: constructors, checks, literature datasets, synthetic sets, generative D.

- :mod:`uqviz.data.model`: what a dataset is (``xarray.Dataset`` with dim ``point``), the
  bad-input rules, ``check_dataset``, ``z_scores``; :mod:`uqviz.data.constructors`:
  ``from_arrays``, ``from_dataframe``, ``from_datasets``; :mod:`uqviz.data.readers`: ``read_csv``;
  ``uqviz.data.targets``: several targets (the targets tree), ``groups=``, ``pool_targets``.
- :mod:`uqviz.data.predictions`: ``from_predictions`` (std, variance, interval, quantiles or
  samples of a model's predictions); :mod:`uqviz.data.estimators`: ``from_estimator``
  (a fitted scikit-learn, NGBoost or MAPIE regressor).
- :mod:`uqviz.datasets`: the literature sets (pooch registry, loaders, formula parser).
- :mod:`uqviz.synthetic`: calibrated synthetic sets (NIG/TIG models, the teaching example).
- :mod:`uqviz.generative`: generative distributions D of standardised errors.
"""

from uqviz.data import datasets, generative, synthetic
from uqviz.data.constructors import from_arrays, from_dataframe, from_datasets
from uqviz.data.model import check_dataset, z_scores
from uqviz.data.readers import read_csv
from uqviz.data.predictions import from_predictions
from uqviz.data.estimators import from_estimator
from uqviz.data.targets import pool_targets

__all__ = [
    "check_dataset",
    "datasets",
    "from_arrays",
    "from_dataframe",
    "from_datasets",
    "from_estimator",
    "from_predictions",
    "generative",
    "pool_targets",
    "read_csv",
    "synthetic",
    "z_scores",
]
