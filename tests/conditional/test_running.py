"""Running statistics of z-scores (Pernot (2023), Fig. 2) and reliability-diagram statistics."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

import uqviz
from uqviz._array.binning import equal_count_starts
from uqviz.conditional.reliability import reliability
from uqviz.conditional.running import default_window, running_statistics


def _stratified(m=2000, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 30, m).astype(float)
    u = rng.uniform(0.5, 2.0, m)
    return uqviz.from_arrays(u * rng.standard_normal(m) * (0.7 + 0.02 * x), u, features={"x": x})


@pytest.mark.parametrize("window", [None, 1, 37, 2000])
def test_running_mean_and_mean_square_equal_pandas_rolling(window):
    ds = _stratified()
    res = running_statistics(ds, conditioning="x", window=window)
    w = res.attrs["window"]
    assert w == (default_window(2000) if window is None else window)
    order = np.argsort(ds.x.values, kind="stable")  # ties in data order
    z = pd.Series((ds.E.values / ds.uE.values)[order])
    np.testing.assert_array_equal(res.z, z.values)
    np.testing.assert_array_equal(res.point, order)
    np.testing.assert_array_equal(res.x, ds.x.values[order])
    n = 2000 - w + 1  # windows: one starts at each rank from which w points remain
    assert res.running_mean.dims == ("rank",) and res.sizes["rank"] == 2000
    np.testing.assert_allclose(
        res.running_mean[:n], z.rolling(w).mean().values[w - 1 :], rtol=1e-10, atol=1e-13
    )
    np.testing.assert_allclose(
        res.running_ms[:n], (z**2).rolling(w).mean().values[w - 1 :], rtol=1e-10, atol=1e-13
    )
    xs = ds.x.values[order]
    np.testing.assert_array_equal(res.x_window[:n], 0.5 * (xs[:n] + xs[w - 1 :]))
    for name in ("running_mean", "running_ms", "x_window", "x_window_lower", "x_window_upper"):
        assert np.isnan(res[name].values[n:]).all() and not np.isnan(res[name].values[:n]).any()


def test_default_window_is_the_papers_and_attrs_carry_units():
    assert default_window(13885) == 138  # Pernot (2023), Fig. 2: sliding windows of M // 100 points
    assert default_window(300) == 10 and default_window(5) == 5
    ds = uqviz.synthetic.nig(1500, nu=6, rng=1)
    res = running_statistics(ds)
    assert res.attrs["conditioning"] == "uE" and res.attrs["window"] == 15
    assert res.attrs["units"] == ds.uE.attrs.get("units", "")
    with pytest.raises(ValueError, match="window must be between 1"):
        running_statistics(ds, window=0)
    with pytest.raises(ValueError, match="not in the dataset"):
        running_statistics(ds, conditioning="mass")


def test_reliability_rmse_and_rmv_per_bin_equal_a_groupby():
    ds = uqviz.synthetic.nig(3000, nu=8, rng=2)
    rel = reliability(ds, n_bins=9, n_boot=1000, rng=0)
    order = np.argsort(ds.uE.values, kind="stable")
    lab = np.empty(3000, int)
    lab[order] = np.repeat(np.arange(9), equal_count_starts(3000, 9)[1])
    g = pd.DataFrame({"e2": ds.E.values**2, "v": ds.uE.values**2, "b": lab}).groupby("b")
    np.testing.assert_allclose(rel.rmse, np.sqrt(g.e2.mean()), rtol=1e-12)
    np.testing.assert_allclose(rel.rmv, np.sqrt(g.v.mean()), rtol=1e-12)
    assert np.all(rel.rmse_lower < rel.rmse) and np.all(rel.rmse < rel.rmse_upper)
    np.testing.assert_array_equal(
        rel.valid, (rel.rmse_lower <= rel.rmv) & (rel.rmv <= rel.rmse_upper)
    )
    assert int(rel.valid.sum()) >= 6  # calibrated data: most bins consistent
    # default number of bins: the local statistics' rule min(round(sqrt(M)), M // 100)
    assert reliability(ds, n_boot=200, rng=0).sizes["bin"] == 30


def test_reliability_chi2_interval():
    ds = uqviz.synthetic.nig(1200, nu=8, rng=3)
    rel = reliability(ds, n_bins=4, method="chi2", ci=0.9)
    n = rel["count"].values
    mse = rel.rmse.values**2
    np.testing.assert_allclose(rel.rmse_lower, np.sqrt(n * mse / sps.chi2.ppf(0.95, n)))
    np.testing.assert_allclose(rel.rmse_upper, np.sqrt(n * mse / sps.chi2.ppf(0.05, n)))
    assert rel.attrs["method"] == "chi2"
    with pytest.raises(ValueError, match="method must be"):
        reliability(ds, method="cho")


def test_reliability_methods_are_interval_methods_and_verdicts_come_from_bca():
    from uqviz._array.bca import verdict

    ds = uqviz.synthetic.nig(2000, nu=8, rng=4)
    for method in ("bca", "percentile", "basic", "chi2"):
        rel = reliability(ds, n_bins=5, n_boot=300, method=method, rng=0)
        assert rel.attrs["method"] == method
        zeta, valid = verdict(
            rel.rmse.values, rel.rmv.values, rel.rmse_lower.values, rel.rmse_upper.values
        )
        np.testing.assert_array_equal(rel.valid, valid)
        np.testing.assert_array_equal(rel.zeta, zeta)
    with pytest.raises(ValueError, match="method"):
        reliability(ds, method="bootstrap")
    for option, value, error in [
        ("n_bins", "10", TypeError),
        ("n_bins", 0, ValueError),
        ("n_bins", 2001, ValueError),
        ("ci", 2.0, ValueError),
        ("n_boot", 1, ValueError),
        ("rng", np.random.RandomState(0), TypeError),
    ]:
        with pytest.raises(error, match=option):
            reliability(ds, **{option: value})
    tree = uqviz.from_datasets({"a": ds, "b": uqviz.synthetic.nig(1500, nu=8, rng=5)})
    res = reliability(tree, n_bins=5, n_boot=200, rng=0)
    assert res.rmse.dims == ("dataset", "bin") and res.attrs["rng"] == 0
    with pytest.raises(TypeError, match="window"):
        running_statistics(ds, window="10")
