"""``interval_coverage(intervals="given")``: the coverage of the intervals a dataset holds.

Hand-counted on small sets; equal to a direct count on the output of a conformal
recalibration, and to the coverage of uE's intervals where both are the same intervals.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import uqviz
from uqviz._array.binomial import wilson_interval


def test_given_interval_hand_counted():
    y = np.array([0.0, 1.0, 2.5, -3.0, 0.4])
    ds = uqviz.from_predictions(
        y, np.zeros(5), lower=np.full(5, -1.0), upper=np.full(5, 1.0), level=0.8
    )
    cov = uqviz.interval_coverage(ds, intervals="given")
    assert cov["level"].values.tolist() == [0.8]
    assert int(cov["n_inside"][0]) == 3 and float(cov["picp"][0]) == 0.6  # 0, 1 (edge), 0.4
    lo, hi = wilson_interval(np.array([3]), 5, ci=0.95, continuity=True)
    assert float(cov["picp_lower"][0]) == pytest.approx(lo[0], rel=1e-12)
    assert float(cov["picp_upper"][0]) == pytest.approx(hi[0], rel=1e-12)
    assert float(cov["mpiw"][0]) == 2.0 and cov.attrs["intervals"] == "given"


def test_given_quantiles_give_their_central_intervals():
    rng = np.random.default_rng(0)
    n = 4000
    y = rng.standard_normal(n)
    q = {p: np.full(n, stats.norm.ppf(p)) for p in (0.05, 0.25, 0.5, 0.75, 0.95)}
    ds = uqviz.from_predictions(y, np.zeros(n), quantiles=q)
    cov = uqviz.interval_coverage(ds, intervals="given")
    np.testing.assert_allclose(cov["level"].values, [0.5, 0.9])
    for p in (0.5, 0.9):
        z = stats.norm.ppf(0.5 + p / 2)
        assert float(cov["picp"].sel(level=p)) == np.mean(np.abs(y) <= z)
    sel = uqviz.interval_coverage(ds, intervals="given", levels=(0.9,))
    assert sel["level"].values.tolist() == [0.9]


def test_given_intervals_of_a_conformal_recalibration_equal_a_direct_count():
    ds = uqviz.synthetic.nig(3000, nu=6, rng=1)
    out = uqviz.recalibrate(ds.assign(uE=ds["uE"] / 2), method="conformal", level=0.9, rng=0)
    cov = uqviz.interval_coverage(out, intervals="given")
    e = out["E"].values  # no y: error space, prediction 0
    direct = np.mean((out["lower"].values <= e) & (e <= out["upper"].values))
    assert float(cov["picp"][0]) == direct and bool(cov["valid"][0])
    # uE's own intervals (too narrow by 2) are far below 0.9
    assert float(uqviz.interval_coverage(out, levels=(0.9,))["picp"][0]) < 0.7


def test_given_coverage_errors():
    ds = uqviz.synthetic.nig(50, rng=0)
    with pytest.raises(ValueError, match="holds no interval"):
        uqviz.interval_coverage(ds, intervals="given")
    q = uqviz.from_predictions(
        np.zeros(3), np.zeros(3), quantiles={0.1: [-1.0] * 3, 0.6: [1.0] * 3}
    )
    with pytest.raises(ValueError, match="hold no central interval"):
        uqviz.interval_coverage(q, intervals="given")
    iv = uqviz.from_predictions(
        np.zeros(3), np.zeros(3), lower=[-1.0] * 3, upper=[1.0] * 3, level=0.9
    )
    with pytest.raises(ValueError, match=r"levels \[0.5\]: not among"):
        uqviz.interval_coverage(iv, intervals="given", levels=(0.5,))
    with pytest.raises(ValueError, match="intervals"):
        uqviz.interval_coverage(iv, intervals="model")
