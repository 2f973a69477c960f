"""Interval coverage of grouped points (issue 39): the Wilson interval of the effective number
of points M / deff (Kish), deff the cluster-robust design effect of the coverage indicators
(Cameron & Miller (2015)); the report's coverage test on the same effective counts."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import uqviz
from uqviz._array.binomial import wilson_interval
from uqviz._array.clusters import proportion_design_effect
from uqviz.experiments.verdicts import draw_set
from uqviz.reporting.verdicts import _coverage_p


def test_design_effect_of_whole_groups_inside_or_out_is_their_size():
    # every point of a group shares the indicator: k_g in {0, m}, p = f; then
    # CR1 variance f(1 - f) / (G - 1) over the binomial f(1 - f) / (G m): deff = G m / (G - 1)
    g, m = 12, 5
    inside_groups = np.array([1, 0, 0, 1, 1, 0, 1, 0, 0, 0, 1, 0], dtype=bool)
    codes = np.repeat(np.arange(g), m)
    deff = proportion_design_effect(inside_groups[codes][None, :], codes)
    assert deff[0] == pytest.approx(g * m / (g - 1), rel=1e-12)


def test_design_effect_by_hand_and_its_floor():
    codes = np.array([0, 0, 0, 1, 1, 1, 2, 2, 2])
    x = np.array([[1, 1, 0, 1, 0, 0, 0, 0, 0], [1, 0, 1, 0, 1, 0, 1, 0, 1]], dtype=bool)
    p = x.mean(axis=1)
    k_g = np.array([[2, 1, 0], [2, 1, 2]])
    robust = 3 / 2 * ((k_g - 3 * p[:, None]) ** 2).sum(axis=1) / 81
    want = np.maximum(1.0, robust / (p * (1 - p) / 9))
    np.testing.assert_allclose(proportion_design_effect(x, codes), want, rtol=1e-12)
    assert proportion_design_effect(np.ones((1, 9), bool), codes)[0] == 1.0  # p = 1
    assert proportion_design_effect(x, np.zeros(9, int)).tolist() == [1.0, 1.0]  # one group


def test_grouped_interval_coverage_widens_by_the_design_effect():
    ds = draw_set("grouped0.5", size=3000, rng=3)
    grouped = uqviz.interval_coverage(ds)
    points = uqviz.interval_coverage(ds.drop_vars("group"))
    assert "design_effect" not in points and grouped.attrs["n_groups"] == 100
    np.testing.assert_array_equal(grouped["picp"].values, points["picp"].values)
    deff = grouped["design_effect"].values
    assert np.all(deff >= 1.0) and deff.max() > 2.0  # rho = 0.5 in groups of 30
    n_eff = 3000 / deff
    lo, hi = wilson_interval(grouped["picp"].values * n_eff, n_eff, continuity=True)
    np.testing.assert_allclose(grouped["picp_lower"].values, lo, rtol=1e-12)
    np.testing.assert_allclose(grouped["picp_upper"].values, hi, rtol=1e-12)
    assert np.all(
        grouped["picp_upper"] - grouped["picp_lower"] > points["picp_upper"] - points["picp_lower"]
    )
    # the indicators of each level, by hand
    z = np.abs(ds["E"].values / ds["uE"].values)
    codes = np.unique(ds["group"].values, return_inverse=True)[1]
    inside = z[None, :] <= grouped["multiplier"].values[:, None]
    np.testing.assert_allclose(deff, proportion_design_effect(inside, codes), rtol=1e-12)


def test_given_intervals_of_grouped_points():
    rng = np.random.default_rng(5)
    g = np.repeat(np.arange(40), 10)
    y = np.repeat(rng.normal(size=40), 10) + rng.normal(size=400)  # errors shared by a group
    p = np.zeros(400)
    h = stats.norm.ppf(0.95) * np.sqrt(2.0)
    ds = uqviz.from_predictions(y, p, lower=p - h, upper=p + h, level=0.9, groups=g)
    res = uqviz.interval_coverage(ds, intervals="given")
    assert float(res["design_effect"][0]) > 1.5


def test_the_report_tests_the_effective_counts():
    ds = draw_set("grouped0.5", size=3000, rng=3)
    cov = uqviz.interval_coverage(ds)
    n_eff = np.rint(3000 / cov["design_effect"].values).astype(int)
    k_eff = np.rint(cov["picp"].values * n_eff).astype(int)
    want = [
        stats.binomtest(int(k), int(n), float(lv)).pvalue
        for k, n, lv in zip(k_eff, n_eff, cov["level"].values)
    ]
    np.testing.assert_allclose(_coverage_p(cov), want, rtol=1e-12)
    ungrouped = uqviz.interval_coverage(ds.drop_vars("group"))
    want = [
        stats.binomtest(int(k), 3000, float(lv)).pvalue
        for k, lv in zip(ungrouped["n_inside"].values, ungrouped["level"].values)
    ]
    np.testing.assert_allclose(_coverage_p(ungrouped), want, rtol=1e-12)
