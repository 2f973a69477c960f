"""same_points: the one check that compare_models and the report's comparison section share
(issue 25): counts of differing observations, the numbers of points, the datasets that give no
y, a feature named y that is not an observation; both callers report its reason verbatim."""

import numpy as np
import pytest
import xarray as xr

import uqviz
from uqviz.comparison import same_points
from uqviz.reporting.comparison import decide

Y = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
U = np.ones(5)


def _model(y=Y, pred=None):
    """A 90 % interval forecast (the form keeps y) of the observations y."""
    pred = Y * 0.9 if pred is None else pred
    return uqviz.from_predictions(
        y, pred, lower=pred - 1.645 * U, upper=pred + 1.645 * U, level=0.9
    )


def test_counts_of_differing_observations():
    moved = Y + np.array([0.0, 1.0, 0.0, -2.0, 0.0])  # 2 of 5 points differ
    moved3 = Y + np.array([1.0, 1.0, 1.0, 0.0, 0.0])  # 3 of 5
    assert same_points([("a", _model()), ("b", _model(moved)), ("c", _model(moved3))]) == (
        False,
        False,
        "y of 'b' differs from y of 'a' at 2 of 5 points; "
        "y of 'c' differs from y of 'a' at 3 of 5 points",
    )
    # other predictions of the same y: the same points, identified
    assert same_points([("a", _model()), ("b", _model(pred=Y + 0.3))]) == (True, True, "")


def test_sizes_and_number_of_models():
    short = uqviz.from_arrays(np.zeros(3), np.ones(3))
    assert same_points([("a", _model()), ("b", short)]) == (
        False,
        False,
        "numbers of points differ ('a': 5, 'b': 3)",
    )
    assert same_points([("a", _model())]) == (
        False,
        False,
        "a comparison needs at least two models, got 1",
    )


def test_datasets_without_y_and_a_feature_named_y():
    err = uqviz.from_arrays(Y - Y * 0.9, U)
    feat = uqviz.from_arrays(Y - Y * 0.9, U, features={"y": Y + 10.0})  # an input, not y
    assert same_points([("a", _model()), ("e", err)]) == (True, False, "e gives no y")
    assert same_points([("a", _model()), ("e", err), ("f", feat)]) == (
        True,
        False,
        "e, f give no y",
    )
    assert same_points([("e", err), ("f", feat)]) == (
        True,
        False,
        "no dataset gives the observed values y",
    )


def test_both_callers_give_its_reason():
    moved = Y + np.array([0.0, 0.0, 0.0, 0.0, 1.0])
    pairs = [("a", _model()), ("b", _model(moved))]
    why = same_points(pairs)[2]
    assert why == "y of 'b' differs from y of 'a' at 1 of 5 points"
    tree = xr.DataTree.from_dict(dict(pairs))
    with pytest.raises(ValueError) as exc:
        uqviz.compare_models(tree, scores=("nll",), n_boot=20, rng=0)
    assert str(exc.value) == f"the models must forecast the same points: {why}"
    with pytest.raises(ValueError) as exc:
        decide(tree, True)
    assert str(exc.value) == f"compare=True: the datasets are not models of the same points: {why}"
    assert decide(tree, None) is False
    assert decide(xr.DataTree.from_dict({"a": _model(), "b": _model(pred=Y)}), None) is True
