"""Binned calibration errors (numpy kernels): ENCE, UCE, ZMSE, per-bin means.

Points are pre-ordered so that bins are contiguous blocks (``starts`` into
the last axis). All functions are vectorised over leading axes, e.g. over
simulated replicates of the errors with the bins held fixed.
"""

from __future__ import annotations

import numpy as np


def bin_means(x, starts, sizes):
    """Mean of ``x`` over each contiguous bin along the last axis -> (..., n_bins)."""
    return np.add.reduceat(x, starts, axis=-1) / sizes


def ence(e, u, starts, sizes):
    """ENCE = mean_b |RMV_b - RMSE_b| / RMV_b (Levi et al. 2022; 004 eq. 8)."""
    rmv = np.sqrt(bin_means(u * u, starts, sizes))
    rmse = np.sqrt(bin_means(e * e, starts, sizes))
    return np.mean(np.abs(rmv - rmse) / rmv, axis=-1)


def uce(e, u, starts, sizes):
    """UCE = mean_b |MV_b - MSE_b| (equal-count bins: the bin-weighted mean)."""
    return np.mean(np.abs(bin_means(u * u, starts, sizes) - bin_means(e * e, starts, sizes)),
                   axis=-1)


def zmse(e, u, starts, sizes):
    """ZMSE = mean_b |ln ZMS_b| (002 eq. 17)."""
    return np.mean(np.abs(np.log(bin_means((e / u) ** 2, starts, sizes))), axis=-1)


BINNED = {"ENCE": ence, "UCE": uce, "ZMSE": zmse}


def acf(x, max_lag):
    """Sample autocorrelation r_0..r_max_lag of a series (last axis).

    r_k = sum_t (x_t - m)(x_{t+k} - m) / sum_t (x_t - m)^2, the estimator of
    R's ``acf`` and statsmodels' ``acf`` (no small-sample correction).
    """
    x = np.asarray(x, dtype=float)
    d = x - x.mean(axis=-1, keepdims=True)
    den = np.sum(d * d, axis=-1)
    n = x.shape[-1]
    return np.stack([np.sum(d[..., : n - k] * d[..., k:], axis=-1) / den
                     for k in range(max_lag + 1)], axis=-1)
