"""Kernels of the recalibration methods: numpy arrays in and out, no xarray.

- :func:`scaling_factor`: the NLL-optimal single factor ``s = sqrt(<Z^2>)``;
- :func:`fit_linear`: ``uE' = a uE + b`` by minimum Gaussian NLL (scipy.optimize);
- :func:`bin_factors` / :func:`bin_lookup`: bin-wise variance scaling factors and the bin of
  new points (nearest bin outside the calibration range);
- :func:`isotonic_knots` / :func:`isotonic_predict`: isotonic regression of ``E^2`` on
  ``uE^2`` with the semantics of ``sklearn.isotonic.IsotonicRegression(increasing=True,
  out_of_bounds="clip")`` (ties pooled, linear interpolation, clipped), PAVA by
  :func:`scipy.optimize.isotonic_regression`, and a floor against zero variances.

Examples
--------
>>> import numpy as np
>>> float(scaling_factor(np.array([2.0, -2.0]), np.array([1.0, 1.0])))
2.0
>>> x, y, n_floored = isotonic_knots(np.array([1.0, 2.0, 3.0]), np.array([1.0, 4.0, 2.0]))
>>> x.tolist(), y.tolist(), n_floored
([1.0, 2.0, 3.0], [1.0, 3.0, 3.0], 0)
>>> isotonic_knots(np.array([1.0, 2.0, 3.0]), np.array([0.0, 4.0, 2.0]))  # floored
(array([1., 3.]), array([3., 3.]), 1)
>>> bin_lookup(np.array([0.0, 1.0]), np.array([0.5, 2.0]), np.array([-1.0, 0.8, 9.0])).tolist()
[0, 1, 1]
"""

from __future__ import annotations

import numpy as np

from uqviz._array.lazy import lazy_module

optimize = lazy_module("scipy.optimize")

__all__ = [
    "scaling_factor",
    "fit_linear",
    "linear_nll",
    "bin_factors",
    "bin_lookup",
    "isotonic_knots",
    "isotonic_predict",
]


def scaling_factor(e, u):
    """``sqrt(mean((e / u)^2))``: the factor s minimising the Gaussian NLL of ``s u``.

    Examples
    --------
    >>> float(scaling_factor(np.array([1.0, 3.0]), np.array([1.0, 1.0])))
    2.23606797749979
    """
    z = e / u
    return float(np.sqrt(np.mean(z * z)))


def linear_nll(params, e, u, u_min=0.0):
    """Mean Gaussian negative log-likelihood (without the constant) of
    ``s = a (u - u_min) + c`` and its gradient in ``(a, c)``; ``inf`` when some ``s <= 0``.

    Examples
    --------
    >>> f, g = linear_nll(np.array([1.0, 0.0]), np.array([1.0]), np.array([1.0]))
    >>> float(f), g.tolist()
    (0.5, [0.0, 0.0])
    """
    a, c = params
    d = u - u_min
    s = a * d + c
    if np.any(s <= 0) or not np.all(np.isfinite(s)):
        return np.inf, np.zeros(2)
    r2 = (e / s) ** 2
    f = np.mean(np.log(s) + 0.5 * r2)
    g = (1.0 - r2) / s  # d(term)/ds
    return f, np.array([np.mean(g * d), np.mean(g)])


#: lower bound of ``a u_min + b`` in units of the mean ``u`` (positivity, kept finite)
LINEAR_FLOOR = 1e-8


def _linear_derivatives(x, e2, d):
    """Mean NLL terms of ``s = a d + c``: gradient and Hessian in ``(a, c)``."""
    s = x[0] * d + x[1]
    r = e2 / (s * s)
    t1 = (1.0 - r) / s
    t2 = (3.0 * r - 1.0) / (s * s)
    g = np.array([np.mean(t1 * d), np.mean(t1)])
    h12 = np.mean(t2 * d)
    h = np.array([[np.mean(t2 * d * d), h12], [h12, np.mean(t2)]])
    return g, h


def fit_linear(e, u, *, max_iter=200):
    """``(a, b)`` of ``uE' = a uE + b`` minimising the mean Gaussian NLL under ``a >= 0`` and
    ``a min(u) + b > 0`` (``uE' > 0`` on the calibration range), and the minimum NLL.

    Solved in units of the mean ``u`` as ``s = a (u - min u) + c`` with box bounds
    ``a >= 0``, ``c >= 1e-8``: projected Newton steps (analytic gradient and Hessian; a
    gradient step where the Hessian is not positive definite) with a backtracking line search,
    started from the scaling solution ``(sqrt(<Z^2>), 0)``; ``b = c - a min(u)``. Two
    parameters: a few milliseconds, where a general-purpose optimiser's overhead dominates.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> u = rng.uniform(1.0, 2.0, 20000)
    >>> a, b, _ = fit_linear((2.0 * u - 0.5) * rng.standard_normal(u.size), u)
    >>> round(a, 1), round(b, 1)
    (2.0, -0.5)
    """
    scale = float(np.mean(u))
    es, us = e / scale, u / scale
    u_min = float(us.min())
    d, e2 = us - u_min, es * es
    lower = np.array([0.0, LINEAR_FLOOR])
    a0 = scaling_factor(es, us)
    x = np.maximum(np.array([a0, a0 * u_min]), lower)
    f = linear_nll(x, es, us, u_min)[0]
    for _ in range(max_iter):
        g, h = _linear_derivatives(x, e2, d)
        free = ~((x <= lower) & (g > 0))  # variables at a bound pushed outwards stay there
        step = np.zeros(2)
        if free.any():
            hf, gf = h[np.ix_(free, free)], g[free]
            try:
                np.linalg.cholesky(hf)
                step[free] = -np.linalg.solve(hf, gf)
            except np.linalg.LinAlgError:
                step[free] = -gf
        t, moved = 1.0, False
        while t > 1e-14:
            xn = np.maximum(x + t * step, lower)
            fn = linear_nll(xn, es, us, u_min)[0]
            if fn <= f + 1e-4 * float(g @ (xn - x)):
                moved = True
                break
            t *= 0.5
        if not moved:
            break
        done = np.all(np.abs(xn - x) <= 1e-12 * (1.0 + np.abs(x))) or f - fn <= 1e-15 * abs(f)
        x, f = xn, fn
        if done:
            break
    a, c = float(x[0]), float(x[1])
    return a, (c - a * u_min) * scale, float(f) + np.log(scale)


def bin_factors(e, u, starts, sizes):
    """``sqrt(<Z^2>)`` per contiguous block of the (bin-ordered) points.

    Examples
    --------
    >>> bin_factors(np.array([1.0, 1.0, 2.0]), np.ones(3), np.array([0, 2]),
    ...             np.array([2, 1])).tolist()
    [1.0, 2.0]
    """
    z = e / u
    return np.sqrt(np.add.reduceat(z * z, starts) / sizes)


def bin_lookup(lower, upper, x):
    """Bin index of each value ``x`` given the calibration bins' ranges ``[lower, upper]``
    (sorted bins): the bin holding x, else the nearest one (the boundary between two bins is
    the midpoint of the gap; a value shared by two bins, ties split by equal-count binning,
    goes to the lower bin; outside the calibration range, the first or last bin).

    Examples
    --------
    >>> bin_lookup(np.array([0.0, 2.0]), np.array([1.0, 3.0]), np.array([1.4, 1.6])).tolist()
    [0, 1]
    """
    thresholds = 0.5 * (np.asarray(upper[:-1]) + np.asarray(lower[1:]))
    return np.searchsorted(thresholds, x, side="left")


def isotonic_knots(x, y):
    """Knots ``(x_k, y_k)`` of the increasing isotonic regression of ``y`` on ``x``.

    Ties in ``x`` are pooled (mean of their ``y``, weight their count), the pooled values are
    fitted by the pool-adjacent-violators algorithm (:func:`scipy.optimize.isotonic_regression`),
    and knots whose value equals both neighbours' are dropped (they do not change the linear
    interpolation), as ``sklearn.isotonic.IsotonicRegression`` does. Fitted values of zero
    (a leading block of points whose ``y`` are all 0) are raised to the smallest positive
    fitted value, the floor; the number of points so raised is returned.

    Returns
    -------
    x_knots, y_knots : ndarray
    n_floored : int

    Raises
    ------
    ValueError
        Every fitted value is zero (all ``y`` are 0).

    Examples
    --------
    >>> isotonic_knots(np.array([1.0, 1.0, 2.0]), np.array([0.0, 2.0, 4.0]))[1].tolist()
    [1.0, 4.0]
    """
    order = np.argsort(x, kind="stable")
    xs, ys = x[order], y[order]
    ux, first, counts = np.unique(xs, return_index=True, return_counts=True)
    means = np.add.reduceat(ys, first) / counts
    fit = optimize.isotonic_regression(means, weights=counts.astype(float), increasing=True).x
    positive = fit > 0
    if not positive.any():
        raise ValueError(
            f"zero-variance fit: the {ys.size} squared errors of the calibration set are all 0"
        )
    n_floored = int(counts[~positive].sum())
    if n_floored:
        fit = np.where(positive, fit, fit[positive].min())
    keep = np.ones(fit.size, dtype=bool)
    keep[1:-1] = (fit[1:-1] != fit[:-2]) | (fit[1:-1] != fit[2:])
    return ux[keep], fit[keep], n_floored


def isotonic_predict(x_knots, y_knots, x):
    """The isotonic fit at ``x``: linear interpolation between knots, ``x`` clipped to the
    knots' range (``out_of_bounds="clip"``).

    Examples
    --------
    >>> isotonic_predict(np.array([1.0, 3.0]), np.array([1.0, 2.0]),
    ...                  np.array([0.0, 2.0, 5.0])).tolist()
    [1.0, 1.5, 2.0]
    """
    return np.interp(np.clip(x, x_knots[0], x_knots[-1]), x_knots, y_knots)
