"""Curve kernels: per-bin means from prefix sums (Pernot (2024c), App. B-C), confidence curves."""

from __future__ import annotations

import numpy as np

__all__ = ["prefix_sums", "prefix_bin_means", "n_removed", "trimmed_curves"]

CURVE_ERRORS = ("RMSE", "MAE")


def prefix_sums(x):
    """Cumulative sums along the last axis with a leading zero: shape (..., M + 1).

    Examples
    --------
    >>> prefix_sums(np.array([1.0, 2.0, 3.0])).tolist()
    [0.0, 1.0, 3.0, 6.0]
    """
    x = np.asarray(x, dtype=float)
    out = np.zeros(x.shape[:-1] + (x.shape[-1] + 1,))
    np.cumsum(x, axis=-1, out=out[..., 1:])
    return out


def prefix_bin_means(prefix, bounds):
    """Means of contiguous bins ``bounds`` from prefix sums ``(..., M + 1)`` -> ``(..., N)``.

    Examples
    --------
    >>> p = prefix_sums(np.array([1.0, 3.0, 5.0, 7.0]))
    >>> prefix_bin_means(p, np.array([0, 2, 4])).tolist()
    [2.0, 6.0]
    """
    bounds = np.asarray(bounds)
    return (prefix[..., bounds[1:]] - prefix[..., bounds[:-1]]) / np.diff(bounds)


def n_removed(fractions, m):
    """``floor(k M)`` points removed for fractions ``k`` (rounded first).

    Examples
    --------
    >>> n_removed([0.0, 0.29, 0.5], 100).tolist()
    [0, 29, 50]
    """
    return np.floor(np.round(np.asarray(fractions, dtype=float) * m, 9)).astype(np.int64)


def trimmed_curves(x, removed, *, error="RMSE", normalize=False):
    """RMSE or MAE of ``x[..., r:]`` for every ``r`` in ``removed`` -> ``(..., K)``.

    Parameters
    ----------
    x : ndarray, shape (..., M)
        Errors sorted by decreasing uncertainty.
    removed : ndarray of int, shape (K,)
    error : {"RMSE", "MAE"}
    normalize : bool
        Divide each curve by its first value.

    Returns
    -------
    ndarray, shape (..., K)

    Examples
    --------
    >>> trimmed_curves(np.array([3.0, -1.0, 1.0]), np.array([0, 1, 2]), error="MAE").tolist()
    [1.6666666666666667, 1.0, 1.0]
    """
    x = np.asarray(x, dtype=float)
    v = x * x if error == "RMSE" else np.abs(x)
    suffix = np.cumsum(v[..., ::-1], axis=-1)[..., ::-1]  # suffix[i] = sum v[i:]
    m = x.shape[-1]
    out = suffix[..., removed] / (m - removed)
    if error == "RMSE":
        out = np.sqrt(out)
    if normalize:
        out = out / out[..., :1]
    return out
