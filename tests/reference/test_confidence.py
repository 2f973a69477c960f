"""Confidence curves: data, oracle, probabilistic reference (ErrViewLib plotConfidence)."""

import numpy as np
import pytest

import uqviz
from uqviz.reference.confidence import confidence_curve
from uqviz.datasets import load_dataset
from uqviz.synthetic import draw_calibrated

FRACTIONS = [0.0, 0.25, 0.5, 0.75]


@pytest.fixture(scope="module")
def tiny():
    #          E      uE   -> by decreasing uE: E = 0.5, 2, -1, 3; by |E|: 3, 2, -1, 0.5
    return uqviz.from_arrays([3.0, -1.0, 2.0, 0.5], [1.0, 2.0, 3.0, 4.0])


def test_tiny_example_by_hand(tiny):
    res = confidence_curve(tiny, fractions=FRACTIONS, n_mc=10, n_boot=0, rng=0)
    # data: remove the largest uE first (E = 0.5, then 2, then -1)
    np.testing.assert_allclose(
        res.estimate, [np.sqrt(14.25 / 4), np.sqrt(14 / 3), np.sqrt(10 / 2), 3.0], rtol=1e-14
    )
    # oracle: remove the largest |E| first (3, then 2, then -1)
    np.testing.assert_allclose(
        res.oracle, [np.sqrt(14.25 / 4), np.sqrt(5.25 / 3), np.sqrt(1.25 / 2), 0.5], rtol=1e-14
    )
    np.testing.assert_array_equal(res.n_kept, [4, 3, 2, 1])
    np.testing.assert_array_equal(res.uE_threshold, [4.0, 3.0, 2.0, 1.0])
    mae = confidence_curve(
        tiny, error_statistic="MAE", fractions=FRACTIONS, n_mc=10, n_boot=0, rng=0
    )
    np.testing.assert_allclose(mae.estimate, [6.5 / 4, 6 / 3, 4 / 2, 3.0], rtol=1e-14)
    np.testing.assert_allclose(mae.oracle, [6.5 / 4, 3.5 / 3, 1.5 / 2, 0.5], rtol=1e-14)
    assert float(mae.auco) == pytest.approx(abs(2 - 3.5 / 3) + abs(2 - 0.75) + 2.5)
    assert "ci_lower" not in mae


def test_removed_counts_follow_floor_k_m_over_100():
    # ErrViewLib removes floor(k M / 100) points; 0.29 * 100 = 28.999... in floating point
    ds = uqviz.synthetic.nig(100, nu=6, rng=0)
    res = confidence_curve(ds, n_mc=5, n_boot=0, rng=0)
    np.testing.assert_array_equal(res.n_kept, 100 - np.arange(100))
    assert res.fraction.values[29] == pytest.approx(0.29)


def test_data_curve_at_zero_is_the_rmse_and_ties_keep_the_data_order():
    ds = load_dataset("QM9_E")  # isotonic-regression uE: 135 distinct values
    e, u = ds.E.values, ds.uE.values
    res = confidence_curve(ds, n_mc=20, n_boot=0, rng=0)
    assert float(res.estimate[0]) == pytest.approx(np.sqrt(np.mean(e**2)), rel=1e-12)
    k = 37
    order = np.argsort(-u, kind="stable")
    m = e.size
    kept = order[int(np.floor(k * m / 100)) :]
    assert float(res.estimate[k]) == pytest.approx(np.sqrt(np.mean(e[kept] ** 2)), rel=1e-12)
    assert float(res.oracle[k]) == pytest.approx(
        np.sqrt(np.mean(np.sort(np.abs(e))[: m - int(np.floor(k * m / 100))] ** 2)), rel=1e-12
    )


def test_reference_for_calibrated_data_follows_the_data_curve():
    e, u = draw_calibrated(5000, a=3.0, b=3.0, rng=2)
    ds = uqviz.from_arrays(e, u)
    res = confidence_curve(ds, n_mc=300, n_boot=300, rng=1)
    rel = np.abs(res.estimate - res.reference) / res.reference
    assert float(rel.isel(fraction=slice(0, 90)).max()) < 0.1
    inside = (res.estimate >= res.reference_lower) & (res.estimate <= res.reference_upper)
    assert float(inside.mean()) > 0.9
    assert bool(res["valid"])
    # the bootstrap band of the data brackets the data curve, the oracle is below
    assert bool(((res.ci_lower <= res.estimate) & (res.estimate <= res.ci_upper)).all())
    assert bool((res.oracle <= res.estimate + 1e-12).all())
    # DFPR and AUCO are ErrViewLib's sums over the 100 fractions
    assert float(res.dfpr) == pytest.approx(float(np.abs(res.estimate - res.reference).sum()))


def test_miscalibrated_data_is_rejected_by_the_dfpr():
    e, u = draw_calibrated(3000, a=3.0, b=3.0, rng=3)
    res = confidence_curve(uqviz.from_arrays(e, 0.7 * u), n_mc=200, n_boot=0, rng=0)
    assert not bool(res["valid"])
    assert float(res.dfpr) > 3 * float(res.dfpr_limit)


def test_rmse_reference_hardly_depends_on_d_the_mae_one_does():
    # Pernot (2024c) sect. I / IV after arXiv:2206.15272
    ds = load_dataset("logP_10k_a_LS-GCN")
    out = {}
    for err in ("RMSE", "MAE"):
        n = confidence_curve(ds, error_statistic=err, n_mc=300, n_boot=0, rng=0)
        lap = confidence_curve(
            ds, error_statistic=err, n_mc=300, n_boot=0, generative="laplace", rng=0
        )
        out[err] = float(
            (np.abs(lap.reference / n.reference - 1)).isel(fraction=slice(0, 80)).max()
        )
    assert out["RMSE"] < 0.02
    assert out["MAE"] > 0.08  # E|eps| = sqrt(2/pi) = 0.80 (normal), 1/sqrt(2) = 0.71 (Laplace)


def test_normalize_reproducibility_and_threads(monkeypatch):
    ds = uqviz.synthetic.nig(800, nu=5, rng=4)
    a = confidence_curve(ds, normalize=True, n_mc=100, n_boot=100, rng=3)
    assert float(a.estimate[0]) == 1.0 == float(a.oracle[0]) == float(a.reference[0])
    monkeypatch.setenv("UQVIZ_THREADS", "1")
    b = confidence_curve(ds, normalize=True, n_mc=100, n_boot=100, rng=3)
    for v in ("reference", "reference_lower", "ci_lower", "ci_upper"):
        np.testing.assert_array_equal(a[v], b[v])


def test_datatree_and_bad_arguments():
    tree = uqviz.from_datasets(
        {"a": uqviz.synthetic.nig(300, rng=0), "b": uqviz.synthetic.nig(500, rng=1)}
    )
    res = confidence_curve(tree, n_mc=20, n_boot=20, rng=0)
    assert res.estimate.dims == ("dataset", "fraction")
    assert res.attrs["error_statistic"] == "RMSE"
    ds = uqviz.synthetic.nig(300, rng=0)
    with pytest.raises(ValueError, match="error_statistic must be"):
        confidence_curve(ds, error_statistic="Q95")
    with pytest.raises(ValueError, match="fractions"):
        confidence_curve(ds, fractions=[0.0, 1.0])
    with pytest.raises(ValueError, match="n_mc"):
        confidence_curve(ds, n_mc=1)


def test_valid_and_p_value_follow_ci():
    """Issue 20: the DFPR limit is the ``ci`` quantile (was a hard-coded 95th percentile)."""
    ds = uqviz.synthetic.nig(1000, nu=1000, rng=10_007)
    half = confidence_curve(ds, n_mc=100, n_boot=0, ci=0.5, rng=7)
    full = confidence_curve(ds, n_mc=100, n_boot=0, ci=0.95, rng=7)
    # same seed: the same curves, DFPR and p-value; only the limit moves with ci
    assert float(half.dfpr) == float(full.dfpr)
    assert float(half.p_value) == float(full.p_value)
    assert float(half.dfpr_limit) < float(full.dfpr_limit)
    assert "0.5 quantile" in half["dfpr_limit"].attrs["long_name"]
    for res, ci in ((half, 0.5), (full, 0.95)):
        assert bool(res.valid) == (float(res.dfpr) <= float(res.dfpr_limit))
        assert bool(res.valid) == (float(res.p_value) > 1 - ci)
    # this set lies between the two limits: valid at 0.95, not at 0.5
    assert not bool(half.valid) and bool(full.valid)
    assert float(half.p_value) == pytest.approx(34 / 101, rel=1e-14)


def test_false_alarm_of_valid_is_one_minus_ci():
    # calibrated normal data: P(valid False) = 1 - ci (60 sets, se 0.065 at ci = 0.5)
    n, wrong, disagree = 60, 0, 0
    for s in range(n):
        ds = uqviz.synthetic.nig(300, nu=1000, rng=500 + s)
        res = confidence_curve(
            ds, fractions=np.arange(0, 0.9, 0.05), n_mc=30, n_boot=0, ci=0.5, rng=s
        )
        wrong += not bool(res.valid)
        disagree += (not bool(res.valid)) != (float(res.p_value) <= 0.5)
    assert abs(wrong / n - 0.5) < 3 * np.sqrt(0.25 / n), wrong
    assert disagree <= 2  # only where the interpolated quantile and the count differ
