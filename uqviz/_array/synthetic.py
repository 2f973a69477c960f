"""Kernels of calibrated generative models: ``uE^2 = sigma^2 b / Gamma(a, 1)``, ``E = uE eps``.

``eps`` is N(0, 1) or the unit-variance Student ``t(nu) sqrt((nu - 2)/nu)``
(Pernot (2024b), sect. IV). Validated wrappers: :mod:`uqviz.synthetic`.
"""

from __future__ import annotations

import numpy as np

__all__ = ["draw_calibrated", "student_t_scaled"]


def student_t_scaled(nu, shape, rng: np.random.Generator) -> np.ndarray:
    """Draws of ``t_s(nu)`` (``nu`` None: standard normal) of the given shape.

    Examples
    --------
    >>> student_t_scaled(None, 3, np.random.default_rng(7)).shape
    (3,)
    """
    if nu is None:
        return rng.standard_normal(shape)
    return rng.standard_t(nu, shape) * np.sqrt((nu - 2.0) / nu)


def draw_calibrated(shape, a, b, nu_d, rng: np.random.Generator, sigma=1.0):
    """Errors and uncertainties of calibrated data of the given shape.

    Examples
    --------
    >>> e, u = draw_calibrated(4, 2.0, 2.0, 5.0, np.random.default_rng(1), sigma=2.0)
    >>> e.shape == u.shape == (4,)
    True
    """
    u = sigma * np.sqrt(b / rng.standard_gamma(a, size=shape))
    eps = student_t_scaled(nu_d, shape, rng)
    return u * eps, u
