"""The numba normal and Student-t variates of the simulated references (uqviz._array.variates).

Compared with scipy's distributions: Kolmogorov-Smirnov on 10^6 draws, moments, the
tail beyond the ziggurat's last layer (drawn by a separate, exact method), and the
ziggurat's construction (every layer of equal area).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.stats as sps

from uqviz._array import variates as kv


def test_every_layer_of_the_ziggurat_has_the_same_area():
    x, f = kv._X, kv._F
    areas = x[1:-1] * (f[2:] - f[1:-1])  # layer i: width x[i], heights f(x[i])..f(x[i+1])
    np.testing.assert_allclose(areas, kv._V, rtol=1e-9)
    base = kv._R * f[1] + math.sqrt(math.pi / 2) * math.erfc(kv._R / math.sqrt(2))
    assert base == pytest.approx(kv._V, rel=1e-9)  # rectangle under R plus the tail
    assert x[-1] == 0.0 and np.all(np.diff(x) < 0)


def _draw(fill, n=1_000_000, seed=11, *args):
    out = np.empty(n)
    fill(kv.stream(seed), *args, out)
    return out


def test_normal_variates_follow_the_normal_law():
    x = _draw(kv.fill_normal)
    assert sps.kstest(x, "norm").pvalue > 1e-3
    assert abs(x.mean()) < 5 / math.sqrt(x.size)
    assert x.var() == pytest.approx(1.0, abs=5 * math.sqrt(2 / x.size))
    # the tail beyond R = 3.654 (0.026 % of the draws) comes from the exact tail method
    expected = 2 * sps.norm.sf(kv._R) * x.size
    assert abs(np.sum(np.abs(x) > kv._R) - expected) < 5 * math.sqrt(expected)
    assert np.sum(x > kv._R) == pytest.approx(np.sum(x < -kv._R), abs=5 * math.sqrt(expected))


@pytest.mark.parametrize("nu", [3.5, 6.0, 20.0])
def test_student_t_variates_have_unit_variance_and_the_t_law(nu):
    x = _draw(kv.fill_student_t, 1_000_000, 5, nu)
    scale = math.sqrt((nu - 2) / nu)
    assert sps.kstest(x / scale, "t", args=(nu,)).pvalue > 1e-3
    if nu > 4:
        assert x.var() == pytest.approx(1.0, rel=0.02)


def test_streams_are_reproducible_and_distinct():
    a, b, c = (
        _draw(kv.fill_normal, 1000, 3),
        _draw(kv.fill_normal, 1000, 3),
        _draw(kv.fill_normal, 1000, 4),
    )
    np.testing.assert_array_equal(a, b)
    assert not np.any(a == c)
    # a stream continues: two fills of 500 are one fill of 1000
    s, halves = kv.stream(3), np.empty((2, 500))
    for row in halves:
        kv.fill_normal(s, row)
    np.testing.assert_array_equal(halves.ravel(), a)


def test_student_t_needs_more_than_two_degrees_of_freedom():
    with pytest.raises(ValueError, match="nu > 2"):
        kv.fill_student_t(kv.stream(1), 2.0, np.empty(3))
