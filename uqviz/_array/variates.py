"""Normal and Student-t variates in numba, for the simulated references at large M.

numpy's ``Generator.standard_normal`` draws about 1e8 values a second and
``standard_t`` a third of that; a simulated reference at M = 2e6 spends most of its
time there. These kernels draw from the xoshiro256** streams of
:mod:`uqviz._array.resample`:

- normal: the ziggurat of Marsaglia & Tsang (2000a) with 256 layers, in the form of
  Doornik (2005) (the layer index and the value come from different bits of one 64-bit
  output, so they are independent), and Marsaglia's exact method for the tail;
- Student-t with nu > 2 degrees of freedom, scaled to unit variance:
  ``Z sqrt(nu - 2) / sqrt(X)`` with ``X ~ chi2(nu) = 2 Gamma(nu / 2)``, Gamma by the
  method of Marsaglia & Tsang (2000b) (exact, rejection).

Both are exact in distribution (up to the 53-bit resolution of the uniforms); the
tests compare them with scipy's distributions (Kolmogorov-Smirnov, moments, tails).

Examples
--------
>>> s = stream(7)
>>> x = np.empty(5)
>>> fill_normal(s, x)
>>> x.shape, bool(np.all(np.isfinite(x)))
((5,), True)
"""

from __future__ import annotations

import math

import numpy as np

from uqviz._array.jit import HAVE_NUMBA, njit, uint64

if HAVE_NUMBA:
    from uqviz._array.resample import task_stream, xoshiro_next

__all__ = ["stream", "fill_normal", "fill_student_t", "filler"]

_U64 = uint64
_N = 256
_R = 3.6541528853610088  # start of the tail of the 256-layer ziggurat
_V = 0.00492867323399  # area of every layer (the base one with the tail)


def _tables():
    """Layer edges x[0..256] (x[0] = V / f(R) > R, x[1] = R, x[256] = 0) and f(x)."""
    f = lambda t: math.exp(-0.5 * t * t)  # noqa: E731 - the unnormalised density
    x = np.empty(_N + 1)
    x[0] = _V / f(_R)
    x[1] = _R
    for i in range(1, _N - 1):
        x[i + 1] = math.sqrt(-2.0 * math.log(_V / x[i] + f(x[i])))
    x[_N] = 0.0
    return x, np.exp(-0.5 * x * x)


_X, _F = _tables()


def stream(seed: int) -> np.ndarray:
    """The xoshiro256** state (4 x uint64) of a 63-bit ``seed``."""
    return _seed_state_py(np.uint64(seed))


@njit(nogil=True, cache=True)
def _seed_state_py(seed):
    return task_stream(seed, 0)


@njit(nogil=True, inline="always")
def _unit(s):
    """A double in (0, 1]: never 0, so that its logarithm is finite."""
    return (np.float64(xoshiro_next(s) >> _U64(11)) + 1.0) * 1.1102230246251565e-16


@njit(nogil=True, inline="always")
def _layer_point(s, xt):
    r = xoshiro_next(s)
    i = np.int64(r & _U64(0xFF))  # layer: the low 8 bits
    u = np.float64(r >> _U64(11)) * 2.220446049250313e-16 - 1.0  # top 53 bits: [-1, 1)
    return i, u, u * xt[i]


@njit(nogil=True, cache=True)
def _normal_slow(s, xt, ft, i, u, x):
    """The rare draws outside the rectangles: the tail, a wedge, or a new draw."""
    while True:
        if i == 0:  # the tail beyond R (Marsaglia 1964)
            while True:
                a = -math.log(_unit(s)) / _R
                b = -math.log(_unit(s))
                if b + b > a * a:
                    return (_R + a) if u > 0.0 else -(_R + a)
        if ft[i + 1] + _unit(s) * (ft[i] - ft[i + 1]) < math.exp(-0.5 * x * x):
            return x
        i, u, x = _layer_point(s, xt)
        if abs(x) < xt[i + 1]:
            return x


@njit(nogil=True, cache=True)
def _fill_normal(s, out, xt, ft):
    for k in range(out.shape[0]):
        # written out (not a helper with two returns): numba then keeps the common path
        # tight, 3 ns a value here against 30 ns
        i, u, x = _layer_point(s, xt)
        if abs(x) >= xt[i + 1]:  # outside the rectangle under the next layer: rare
            x = _normal_slow(s, xt, ft, i, u, x)
        out[k] = x


def fill_normal(s, out):
    """Fill the 1-d float64 array ``out`` with N(0, 1) variates from the stream ``s``."""
    _fill_normal(s, out, _X, _F)


@njit(nogil=True, cache=True)
def _fill_student_t(s, nu, out, xt, ft):
    """Z sqrt(nu - 2) / sqrt(2 G), G ~ Gamma(nu / 2) by Marsaglia & Tsang (2000b)."""
    scale = math.sqrt(nu - 2.0)
    d = 0.5 * nu - 1.0 / 3.0
    c = 1.0 / math.sqrt(9.0 * d)
    for k in range(out.shape[0]):
        i, u, z = _layer_point(s, xt)
        if abs(z) >= xt[i + 1]:
            z = _normal_slow(s, xt, ft, i, u, z)
        g = -1.0
        while g < 0.0:  # one Gamma(nu / 2) variate: a normal y, a uniform w, rarely again
            i, u, y = _layer_point(s, xt)
            if abs(y) >= xt[i + 1]:
                y = _normal_slow(s, xt, ft, i, u, y)
            v = 1.0 + c * y
            if v > 0.0:
                v = v * v * v
                w = _unit(s)
                if w < 1.0 - 0.0331 * (y * y) * (y * y) or math.log(w) < 0.5 * y * y + d * (
                    1.0 - v + math.log(v)
                ):
                    g = d * v
        out[k] = z * scale / math.sqrt(2.0 * g)


def fill_student_t(s, nu, out):
    """Fill ``out`` with unit-variance Student-t variates (``nu > 2``) from the stream ``s``."""
    if not nu > 2.0:
        raise ValueError(f"student_t needs nu > 2 for a finite unit variance, got {nu}")
    _fill_student_t(s, float(nu), out, _X, _F)


def filler(kind, params):
    """``f(stream, out)`` drawing the unit-variance D ``kind`` here, or None (not drawn here).

    Without numba, None for every D: the simulated sets are then drawn by
    ``Generative.sample`` (numpy's samplers: the same distribution, other numbers).

    Examples
    --------
    >>> filler("normal", {}) is (fill_normal if HAVE_NUMBA else None), filler("uniform", {})
    (True, None)
    """
    if not HAVE_NUMBA:
        return None
    if kind == "normal":
        return fill_normal
    if kind == "student_t":
        nu = float(params["nu"])
        return lambda state, out: fill_student_t(state, nu, out)
    return None
