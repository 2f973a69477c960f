"""The paired cluster bootstrap of compare_models (issue 39, item 3)."""

import numpy as np
import pytest
import xarray as xr

import uqviz
from uqviz.comparison.models import _bootstrap


def _hand_case():
    """6 groups of 50 points; model b's uE is model a's times a factor constant in each group,
    and E = 0 at every point, so the NLL difference a - b is ln(u_a / u_b) = -ln(factor): one
    value per group. Its mean is 0.2 with sd(d_g) = 0.60 over the groups: the point bootstrap
    se 0.60 / sqrt(300) = 0.035 puts 0 far outside, the cluster se 0.60 / sqrt(6) = 0.25 inside."""
    d_g = np.array([1.0, -0.5, 0.8, -0.6, 0.4, 0.1])
    codes = np.repeat(np.arange(6), 50)
    u_a = np.full(codes.size, 1.0)
    u_b = u_a * np.exp(-d_g[codes])
    e = np.zeros(codes.size)
    a = uqviz.from_arrays(e, u_a).assign_coords(group=("point", codes))
    b = uqviz.from_arrays(e, u_b).assign_coords(group=("point", codes))
    return a, b, d_g


def test_point_interval_excludes_zero_cluster_interval_does_not():
    a, b, d_g = _hand_case()
    kw = dict(statistics=None, scores=("nll",), n_boot=2000, method="percentile", rng=3)
    grouped = uqviz.compare_models(xr.DataTree.from_dict({"a": a, "b": b}), **kw)
    plain = uqviz.compare_models(
        xr.DataTree.from_dict({"a": a.drop_vars("group"), "b": b.drop_vars("group")}), **kw
    )
    sel = dict(measure="nll", model="a", versus="b")
    for res in (grouped, plain):
        assert res["difference"].sel(sel).item() == pytest.approx(d_g.mean())
    assert plain["difference_lower"].sel(sel).item() > 0  # "significant" on points
    assert grouped["difference_lower"].sel(sel).item() < 0 < grouped["difference_upper"].sel(sel)
    assert plain["comparison"].sel(sel).item() != grouped["comparison"].sel(sel).item()
    assert grouped.attrs["resample"] == "groups" and grouped.attrs["n_groups"] == 6
    assert plain.attrs["resample"] == "points" and "n_groups" not in plain.attrs
    # the cluster interval is the percentile interval of the means of 6 drawn group values
    rng = np.random.default_rng(0)
    hand = d_g[rng.integers(0, 6, size=(200_000, 6))].mean(axis=1)
    lo, hi = np.quantile(hand, [0.025, 0.975])
    assert grouped["difference_lower"].sel(sel).item() == pytest.approx(lo, abs=0.03)
    assert grouped["difference_upper"].sel(sel).item() == pytest.approx(hi, abs=0.03)


def test_bootstrap_kernel_enumerated():
    # 2 groups: 4 ordered draws (0,0), (0,1), (1,0), (1,1): means 1, 7/3, 7/3, 3
    cols = np.array([[1.0], [3.0], [3.0]])
    codes = np.array([0, 1, 1])
    means, n, loo, n_loo = _bootstrap(
        cols, n_boot=20_000, seed=1, engine="numpy", jackknife=True, clusters=codes
    )
    vals, freq = np.unique(np.round(means[:, 0], 12), return_counts=True)
    np.testing.assert_allclose(vals, [1.0, 7 / 3, 3.0])
    np.testing.assert_allclose(freq / means.shape[0], [0.25, 0.5, 0.25], atol=0.02)
    np.testing.assert_allclose(np.sort(np.unique(n)), [2.0, 3.0, 4.0])
    np.testing.assert_allclose(loo[:, 0], [3.0, 1.0])
    np.testing.assert_allclose(n_loo, [2.0, 1.0])


def test_models_with_other_groups_refused():
    a, b, _ = _hand_case()
    other = b.assign_coords(group=("point", np.r_[np.full(5, 9), b["group"].values[5:]]))
    with pytest.raises(ValueError, match="group labels differ at 5 of 300 points"):
        uqviz.compare_models(
            xr.DataTree.from_dict({"a": a, "b": other}), statistics=None, scores=("nll",), n_boot=50
        )


def test_grouped_models_same_on_threads_and_client():
    numba = pytest.importorskip("numba")
    a, b, _ = _hand_case()
    kw = dict(statistics=("ZMS",), scores=("nll",), n_boot=300, rng=4)
    rng = np.random.default_rng(1)
    tree = xr.DataTree.from_dict(
        {k: v.assign(E=("point", rng.standard_normal(300))) for k, v in (("a", a), ("b", b))}
    )
    ref = uqviz.compare_models(tree, **kw)
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = uqviz.compare_models(tree, **kw)
    finally:
        numba.set_num_threads(before)
    xr.testing.assert_identical(ref, one)
    xr.testing.assert_identical(ref, uqviz.compare_models(tree, client="local", **kw))
