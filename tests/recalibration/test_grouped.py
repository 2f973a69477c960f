"""Cross-fitted recalibration of grouped points (issue 39): folds of whole groups."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import uqviz
from uqviz.experiments.verdicts import draw_set
from uqviz.recalibration.fitting import _fold_labels


def test_folds_are_made_of_whole_groups():
    codes = np.repeat(np.arange(10), 7)
    labels = _fold_labels(codes.size, 3, np.random.default_rng(0), codes)
    for g in range(10):
        assert np.unique(labels[codes == g]).size == 1
    assert np.unique(labels).size == 3
    with pytest.raises(ValueError, match="more than the 10 groups"):
        _fold_labels(codes.size, 11, np.random.default_rng(0), codes)


def test_a_group_gets_one_scale_factor_and_is_recalibrated():
    ds = draw_set("grouped_scale1.2", size=3000, design="lognormal", rng=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        new = uqviz.recalibrate(ds, method="scaling", rng=1)
        res = uqviz.validate_average(new, statistics=("ZMS",), n_boot=300, rng=2)
    ratio = new["uE"].values / ds["uE"].values
    for g in np.unique(ds["group"].values):
        r = ratio[ds["group"].values == g]
        np.testing.assert_allclose(r, r[0], rtol=1e-12)
    # five folds, five scale factors near 1.2
    assert np.unique(np.round(ratio, 12)).size == 5
    np.testing.assert_allclose(np.unique(np.round(ratio, 12)), 1.2, rtol=0.1)
    assert new.attrs["folds_by"] == "groups" and res.attrs["resample"] == "groups"
    assert str(res["verdict"].sel(statistic="ZMS").values) == "OK"
