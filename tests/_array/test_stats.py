"""Kernels of uqviz._array.stats against hand computations and scipy."""

import numpy as np
import pytest
from scipy import stats as sps
from scipy.stats import mstats

from uqviz._array import stats as ks
from uqviz.statistics import get_statistic, list_statistics, point_estimate, reference_value

E = np.array([1.0, -2.0, 3.0])
U = np.array([1.0, 2.0, 1.5])  # Z = [1, -1, 2]


@pytest.mark.parametrize(
    "name, expected",
    [
        ("ZM", 2.0 / 3.0),
        ("ZMS", 2.0),
        ("ZVar", 7.0 / 3.0),
        ("MSE", 14.0 / 3.0),
        ("MV", 7.25 / 3.0),
        ("RMSE", np.sqrt(14.0 / 3.0)),
        ("RMV", np.sqrt(7.25 / 3.0)),
        ("RCE", (np.sqrt(7.25 / 3) - np.sqrt(14.0 / 3)) / np.sqrt(7.25 / 3)),
        ("RCE2", (7.25 / 3 - 14.0 / 3) / (7.25 / 3)),
        ("NLL", 0.5 * (2.0 + (np.log(4.0) + np.log(2.25)) / 3 + np.log(2 * np.pi))),
        ("NLL_ref", 0.5 * (1.0 + (np.log(4.0) + np.log(2.25)) / 3 + np.log(2 * np.pi))),
    ],
)
def test_hand_computed_values(name, expected):
    assert point_estimate(name, E, U) == pytest.approx(expected, rel=1e-14)


def test_zvar_matches_numpy_var():
    z = E / U
    assert point_estimate("ZVar", E, U) == pytest.approx(np.var(z, ddof=1), rel=1e-14)


def test_references():
    assert reference_value("ZMS", E, U) == 1.0
    assert reference_value("RCE", E, U) == 0.0
    assert reference_value("ZM", E, U) == 0.0
    assert reference_value("ZVar", E, U) == 1.0
    assert reference_value("RCE2", E, U) == 0.0
    assert reference_value("NLL", E, U) == pytest.approx(point_estimate("NLL_ref", E, U))
    assert np.isnan(reference_value("CC", E, U))
    assert get_statistic("CC").has_reference is False


def test_cc_is_spearman_of_abs_error_and_uncertainty():
    rng = np.random.default_rng(3)
    u = rng.uniform(0.1, 2.0, 300)
    e = u * rng.standard_normal(300)
    e[:10] = e[10:20]  # ties in |E|
    expected = sps.spearmanr(np.abs(e), u).statistic
    assert point_estimate("CC", e, u) == pytest.approx(expected, rel=1e-12)


def test_statistics_vectorised_over_leading_axes():
    rng = np.random.default_rng(1)
    u = rng.uniform(0.5, 2.0, (4, 3, 50))
    e = u * rng.standard_normal((4, 3, 50))
    for name in list_statistics():
        batched = point_estimate(name, e, u)
        assert batched.shape == (4, 3)
        assert batched[2, 1] == pytest.approx(
            float(point_estimate(name, e[2, 1], u[2, 1])), rel=1e-12
        )


def test_harrell_davis_matches_scipy():
    rng = np.random.default_rng(7)
    x = rng.gamma(2.0, size=(3, 257))
    probs = [0.025, 0.25, 0.5, 0.75, 0.975]
    ours = ks.hd_quantiles(x, probs)
    for row in range(3):
        ref = mstats.hdquantiles(x[row], prob=probs)
        np.testing.assert_allclose(ours[row], np.asarray(ref), rtol=1e-10)


def test_harrell_davis_weights_sum_to_one():
    w = ks.harrell_davis_weights(101, [0.1, 0.5, 0.9])
    np.testing.assert_allclose(w.sum(axis=-1), 1.0, rtol=1e-12)


def test_beta_gm_hand_computed():
    x = np.array([0.0, 1.0, 2.0, 10.0])
    med = float(mstats.hdquantiles(x, prob=[0.5])[0])
    expected = (x.mean() - med) / np.abs(x - med).mean()
    assert ks.beta_gm(x) == pytest.approx(expected, rel=1e-12)


def test_beta_gm_symmetric_is_zero_and_bounded():
    x = np.array([-3.0, -1.0, 0.0, 1.0, 3.0])
    assert ks.beta_gm(x) == pytest.approx(0.0, abs=1e-12)
    rng = np.random.default_rng(0)
    y = rng.pareto(0.5, 5000)
    assert 0.9 < ks.beta_gm(y) <= 1.0


def test_beta_gm_of_squared_normal_is_the_table_limit():
    # Pernot (2024b) Fig 3: beta_GM of a squared normal variate (F(1, inf)) is about 0.64
    z = np.random.default_rng(2).standard_normal(200_000)
    assert ks.beta_gm(z**2) == pytest.approx(0.64, abs=0.01)


def test_kappa_cs_zero_for_normal_positive_for_t():
    rng = np.random.default_rng(5)
    z = rng.standard_normal(200_000)
    q = sps.norm.ppf([0.975, 0.025, 0.75, 0.25])
    exact = (q[0] - q[1]) / (q[2] - q[3]) - ks.KAPPA_CS_NORMAL
    assert ks.kappa_cs(z) == pytest.approx(exact, abs=0.02)
    assert abs(exact) < 0.01
    assert ks.kappa_cs(rng.standard_t(3, 200_000)) > 0.5


def test_unknown_statistic_lists_names():
    with pytest.raises(ValueError, match="unknown statistic 'ZMX'.*ZMS"):
        get_statistic("ZMX")


def test_point_estimate_refuses_a_moment_statistic_float64_cannot_hold():
    from uqviz.statistics import point_estimate

    e, u = np.array([1e155, 2e155]), np.array([1e155, 1e155])
    assert float(point_estimate("ZMS", e, u)) == 2.5
    with pytest.raises(ValueError, match="MSE overflows float64"):
        point_estimate("MSE", e, u)


def test_harrell_davis_weights_are_cached_and_read_only():
    from uqviz._array.stats import harrell_davis_weights

    a, b = harrell_davis_weights(101, [0.25, 0.5]), harrell_davis_weights(101, [0.25, 0.5])
    assert a is b and not a.flags.writeable
    np.testing.assert_allclose(a.sum(axis=-1), 1.0, rtol=1e-12)
