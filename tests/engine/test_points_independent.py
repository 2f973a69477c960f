"""Analyses without a cluster version warn, on grouped points, that they treat the points as
independent (issue 39); the cluster-aware ones do not."""

from __future__ import annotations

import warnings

import pytest

import uqviz
from uqviz.experiments.verdicts import draw_set


@pytest.fixture(scope="module")
def grouped():
    return draw_set("grouped0.5", size=600, design="lognormal", rng=0)


def _messages(func, *args, **kwargs):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        func(*args, **kwargs)
    return [str(w.message) for w in caught if issubclass(w.category, uqviz.UnreliableWarning)]


@pytest.mark.parametrize(
    "name, call",
    [
        ("calibration_curve", lambda d: uqviz.calibration_curve(d)),
        ("local_interval_coverage", lambda d: uqviz.local_interval_coverage(d, n_bins=3)),
        ("decimation_curve", lambda d: uqviz.decimation_curve(d)),
        ("reliability", lambda d: uqviz.reliability(d, n_bins=3, n_boot=50, rng=0)),
    ],
)
def test_a_non_cluster_analysis_warns_on_grouped_points(grouped, name, call):
    said = [m for m in _messages(call, grouped) if "treats the 600 points as independent" in m]
    assert len(said) == 1 and said[0].startswith(f"{name}: the data carry groups (20 groups")
    assert not [m for m in _messages(call, grouped.drop_vars("group")) if "independent" in m]


def test_cluster_aware_analyses_do_not_warn(grouped):
    for call in (
        lambda d: uqviz.validate_average(d, n_boot=100, rng=0),
        lambda d: uqviz.local_calibration(d, n_bins=3, n_boot=50, n_mc=0, rng=0),
        lambda d: uqviz.interval_coverage(d),
        lambda d: uqviz.validate_pit(d, rng=0, n_band=50),
    ):
        assert not [m for m in _messages(call, grouped) if "as independent" in m]
