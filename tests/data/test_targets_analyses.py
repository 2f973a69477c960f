"""The measurement of docs/conventions.md, "Several targets and groups" (issue 39, item 1).

Every public analysis of E/uE data (the functions of the contract test, with its cheap
options) is run on a targets tree (one child per target, missing targets dropped per child)
and on the alternative representation, one Dataset with dims (point, target) and NaN where a
target is missing. The tree runs them all; the (point, target) Dataset only the two explorers,
which show the data's error instead of raising.
"""

from __future__ import annotations

import warnings

import numpy as np
import xarray as xr

import uqviz
from tests.contract.test_contract import EUE, EUE_CALLS, _short

#: measured: analyses (of len(EUE)) that run on each representation
EXPECTED_ON_A_POINT_TARGET_DATASET = {
    "uqviz.widgets.conditional.ConditionalExplorer",
    "uqviz.widgets.reference.ReferenceExplorer",
}


def _data(n=300, seed=0):
    rng = np.random.default_rng(seed)
    u = np.exp(0.3 * rng.normal(size=(n, 3)))
    y = rng.normal(size=(n, 3))
    p = y + u * rng.normal(size=(n, 3))
    y[rng.random((n, 3)) < 0.2] = np.nan
    x = rng.normal(size=n)
    names = ["fx", "fy", "fz"]
    tree = uqviz.from_predictions(y, p, std=u, targets=names, features={"x": x, "y": x})
    flat = xr.Dataset(
        {"E": (("point", "target"), y - p), "uE": (("point", "target"), u)},
        coords={"target": names},
    ).assign(x=("point", x), y=("point", x))
    return tree, flat


def _runs(func, data, kwargs) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            args = (data,)
            if func.__name__ == "fit_histogram":
                args = (data, uqviz.distribution_shapes(data))
            func(*args, **kwargs)
        return True
    except Exception:  # noqa: BLE001 - counted
        return False


def test_every_analysis_runs_on_the_targets_tree_and_few_on_a_point_target_dataset():
    tree, flat = _data()
    on_tree, on_flat = [], []
    for qual, func in sorted(EUE.items()):
        kwargs = EUE_CALLS.get(_short(qual), {})
        if _runs(func, tree, kwargs):
            on_tree.append(qual)
        if _runs(func, flat, kwargs):
            on_flat.append(qual)
    assert len(EUE) >= 37
    assert sorted(set(EUE) - set(on_tree)) == []
    assert set(on_flat) == EXPECTED_ON_A_POINT_TARGET_DATASET
