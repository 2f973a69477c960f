"""validate_pit of grouped points (issue 39): the simultaneous band, the histogram band, the
moments and the KS and Cramér-von Mises p-values of the effective number of points M / deff
(Kish), deff the largest cluster-robust design effect of the ECDF over the grid (Cameron &
Miller (2015)); the band of Säilynoja et al. (2022)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import uqviz
from uqviz._array import pit as pit_kernels
from uqviz._array.clusters import group_counts_below, proportion_design_effect
from uqviz.experiments.verdicts import draw_set
from uqviz.predictive.pit import PIT_GRID, pit_design_effect, pit_values


@pytest.fixture(scope="module")
def grouped():
    return draw_set("grouped0.5", size=3000, rng=3)


def test_group_counts_below_by_hand():
    rng = np.random.default_rng(0)
    v, codes = rng.uniform(size=200), rng.integers(0, 7, size=200)
    grid = np.array([0.1, 0.5, 0.9])
    want = np.array([[np.sum((codes == g) & (v <= z)) for g in range(7)] for z in grid])
    np.testing.assert_array_equal(group_counts_below(v, codes, grid), want)


def test_the_design_effect_is_the_largest_over_the_grid(grouped):
    u = pit_values(grouped, "normal", np.random.default_rng(0))
    codes = np.unique(grouped["group"].values, return_inverse=True)[1]
    inside = u[None, :] <= PIT_GRID[:, None]
    want = proportion_design_effect(inside, codes).max()
    assert pit_design_effect(u, codes) == pytest.approx(want, rel=1e-12)
    assert want > 5.0  # rho = 0.5, groups of 30


def test_grouped_validate_pit_is_that_of_the_effective_points(grouped):
    res = uqviz.validate_pit(grouped, rng=1)
    points = uqviz.validate_pit(grouped.drop_vars("group"), rng=1)
    assert "design_effect" not in points and res.attrs["n_groups"] == 100
    n = 3000
    deff = float(res["design_effect"])
    n_eff = int(np.rint(n / deff))
    np.testing.assert_array_equal(res["ecdf_difference"], points["ecdf_difference"])
    d = float(res["ks_statistic"])
    assert d == float(points["ks_statistic"])
    assert float(res["ks_p_value"]) == pytest.approx(stats.kstwo.sf(d, n_eff), rel=1e-12)
    w = float(res["cvm_statistic"])
    assert float(res["cvm_p_value"]) == pytest.approx(
        pit_kernels.cvm_sf_asymptotic(w * n_eff / n), rel=1e-12
    )
    # the band: the simultaneous band of n_eff points, as shares
    lo, hi = stats.binom.interval(res.attrs["band_level"], n_eff, PIT_GRID)
    width = (res["ecdf_difference_upper"] - res["ecdf_difference_lower"]).values
    np.testing.assert_allclose(width, (hi - lo) / n_eff, rtol=1e-12)
    wide = width > (points["ecdf_difference_upper"] - points["ecdf_difference_lower"]).values
    assert wide.all()
    se_ratio = (res["pit_mean_upper"] - res["pit_mean_lower"]) / (
        points["pit_mean_upper"] - points["pit_mean_lower"]
    )
    assert float(se_ratio) == pytest.approx(np.sqrt(n / n_eff), rel=1e-12)
    assert bool(res["valid"]) and not bool(points["valid"])  # calibrated: the points cry wolf


def test_cvm_limit_against_scipy():
    rng = np.random.default_rng(1)
    for a in (1.0, 1.05, 1.1):
        u = np.sort(rng.uniform(size=4000) ** a)
        r = pit_kernels.uniformity(u)
        assert pit_kernels.cvm_sf_asymptotic(r["cvm_statistic"]) == pytest.approx(
            r["cvm_p_value"], abs=2e-4
        )
    # the limit's critical values (Anderson & Darling 1952): 10 %, 5 %, 1 %
    for w, p in ((0.347, 0.10), (0.461, 0.05), (0.743, 0.01)):
        assert pit_kernels.cvm_sf_asymptotic(w) == pytest.approx(p, abs=5e-4)
