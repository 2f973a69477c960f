"""Binned calibration errors: ENCE, UCE, ZMSE on equal-count bins.

numpy kernels; the per-row sums of the simulated references and the leave-one-out
means are numba kernels, with numpy forms used when numba is not installed.

A binned statistic is a function of per-bin means of ``E2``, ``V``, ``Z2`` (dict
of arrays, bin axis last; ``E2``, ``V`` scaled as in :mod:`uqviz._array.stats`).
Points are pre-sorted so that bins are contiguous blocks (``starts``).
"""

from __future__ import annotations

import numpy as np

from uqviz._array.binning import equal_count_bounds
from uqviz._array.jit import HAVE_NUMBA, njit
from uqviz._array.stats import SCALED_COLUMNS, log2_scale, unscale

__all__ = [
    "ence_from_means",
    "uce_from_means",
    "zmse_from_means",
    "bin_means",
    "binned_column_means",
    "ence",
    "uce",
    "zmse",
    "equal_count_bounds",
    "loo_binned_means",
    "loo_binned_values",
    "binned_means_fixed_u",
    "acf",
    "FROM_MEANS",
    "BINNED",
    "BINNED_COLUMNS",
]

BINNED_COLUMNS = ("E2", "V", "Z2")


def ence_from_means(m):
    """ENCE, Levi et al. (2022); Pernot (2024b), eq. 8."""
    rmv = np.sqrt(m["V"])
    return np.mean(np.abs(rmv - np.sqrt(m["E2"])) / rmv, axis=-1)


def uce_from_means(m):
    """UCE = mean_b |MV_b - MSE_b|."""
    return unscale(np.mean(np.abs(m["V"] - m["E2"]), axis=-1), m, 2)


def zmse_from_means(m):
    """ZMSE = mean_b |ln ZMS_b|, Pernot (2024c), eq. 17."""
    with np.errstate(divide="ignore"):
        return np.mean(np.abs(np.log(m["Z2"])), axis=-1)


FROM_MEANS = {"ENCE": ence_from_means, "UCE": uce_from_means, "ZMSE": zmse_from_means}


def bin_means(x, starts, sizes):
    """Mean of ``x`` over each contiguous bin along the last axis -> (..., n_bins).

    Examples
    --------
    >>> bin_means(np.arange(6.0), np.array([0, 2]), np.array([2, 4])).tolist()
    [0.5, 3.5]
    """
    return np.add.reduceat(x, starts, axis=-1) / sizes


def binned_column_means(e, u, starts, sizes, names=BINNED_COLUMNS):
    """Per-bin means of the columns ``names`` among E2, V, Z2, plus ``log2_scale``.

    Examples
    --------
    >>> e, u = np.array([1e155, -1e155, 2e155, 0.0]), np.full(4, 1e155)
    >>> m = binned_column_means(e, u, np.array([0, 2]), np.array([2, 2]))
    >>> round(float(ence_from_means(m)), 12)
    0.207106781187
    """
    e = np.asarray(e, dtype=float)
    u = np.asarray(u, dtype=float)
    k = log2_scale(e, u) if any(c in SCALED_COLUMNS for c in names) else 0
    es, us = (e, u) if not k else (np.ldexp(e, -k), np.ldexp(u, -k))
    out = {}
    with np.errstate(over="ignore", under="ignore"):
        if "E2" in names:
            out["E2"] = bin_means(es * es, starts, sizes)
        if "V" in names:
            out["V"] = bin_means(us * us, starts, sizes)
        if "Z2" in names:
            out["Z2"] = bin_means((e / u) ** 2, starts, sizes)
    out["log2_scale"] = k
    return out


@njit(nogil=True, cache=True, error_model="numpy")
def _sum_sq(x, u, lo, hi, scale, mult):
    """Sum of (scale e)^2 and max |e| over lo..hi, with e = x u (``mult``) or x."""
    s = 0.0
    top = 0.0
    for i in range(lo, hi):
        e = x[i] * u[i] if mult else x[i]
        top = max(top, abs(e))
        w = e * scale
        s += w * w
    return s, top


@njit(nogil=True, cache=True, error_model="numpy")
def _sum_sq_ratio(x, u, lo, hi, mult):
    s = 0.0
    for i in range(lo, hi):
        e = x[i] * u[i] if mult else x[i]
        z = e / u[i]
        s += z * z
    return s


@njit(nogil=True, cache=True, error_model="numpy")
def _bin_sums_rows(x, u, starts, sizes, want_e2, want_z2, scale, mult):
    """Per-bin sums of (scale e)^2 and (e/u)^2 of every row (e = x u when ``mult``), in
    partial sums of 256 points, and max |e| over all rows."""
    n_rows = x.shape[0]
    n_bins = starts.shape[0]
    e2 = np.zeros((n_rows, n_bins))
    z2 = np.zeros((n_rows, n_bins))
    top = 0.0
    for r in range(n_rows):
        row = x[r]
        for b in range(n_bins):
            lo, hi = starts[b], starts[b] + sizes[b]
            for a in range(lo, hi, 256):
                if want_e2:
                    s, t = _sum_sq(row, u, a, min(hi, a + 256), scale, mult)
                    e2[r, b] += s
                    top = max(top, t)
                if want_z2:
                    z2[r, b] += _sum_sq_ratio(row, u, a, min(hi, a + 256), mult)
    return e2, z2, top


def _bin_sums_rows_numpy(x, u, starts, sizes, want_e2, want_z2, scale, mult):
    """:func:`_bin_sums_rows` in numpy (without numba): the same sums, in numpy's order."""
    n_rows, n_bins = x.shape[0], starts.shape[0]
    e2 = np.zeros((n_rows, n_bins))
    z2 = np.zeros((n_rows, n_bins))
    top = 0.0
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        for b in range(n_bins):
            lo, hi = starts[b], starts[b] + sizes[b]
            e = x[:, lo:hi] * u[lo:hi] if mult else x[:, lo:hi]
            if want_e2:
                if e.size:
                    top = max(top, float(np.max(np.abs(e))))
                w = e * scale
                e2[:, b] = np.sum(w * w, axis=-1)
            if want_z2:
                z = e / u[lo:hi]
                z2[:, b] = np.sum(z * z, axis=-1)
    return e2, z2, top


def binned_means_fixed_u(e, u, starts, sizes, names, top_u, *, scaled=False):
    """:func:`binned_column_means` of the rows of ``e`` (E2, Z2) for fixed ``u``, in one pass.

    The simulated references evaluate many sets E* on the same ``u``: each row is read
    once, with no temporary array. With ``scaled=True`` the rows are eps and E* = eps u
    is formed point by point (the same products). The exponent ``log2_scale`` follows
    :func:`uqviz._array.stats.log2_scale` over all rows (``top_u`` = max |u|): the sums
    are computed unscaled with max |E*| and recomputed scaled in the rare case where the
    values are outside 2**-200 .. 2**200.

    Examples
    --------
    >>> e, u = np.array([[1.0, -1.0, 2.0, 0.0]]), np.ones(4)
    >>> m = binned_means_fixed_u(e, u, np.array([0, 2]), np.array([2, 2]), ("E2", "Z2"), 1.0)
    >>> m["E2"].tolist(), m["log2_scale"]
    ([[1.0, 2.0]], 0)
    """
    e = np.asarray(e, dtype=float)
    rows = np.ascontiguousarray(e.reshape(-1, e.shape[-1]))
    u = np.ascontiguousarray(u, dtype=float)
    starts = np.asarray(starts, dtype=np.int64)
    sizes = np.asarray(sizes, dtype=np.int64)
    want_e2 = "E2" in names
    sums = _bin_sums_rows if HAVE_NUMBA else _bin_sums_rows_numpy
    e2, z2, top = sums(rows, u, starts, sizes, want_e2, "Z2" in names, 1.0, scaled)
    k = log2_scale(np.array([top]), np.array([top_u])) if want_e2 else 0
    if k:
        if abs(k) > 1000:  # 2**-k would not be a normal number: the general path
            x = rows * u if scaled else rows
            return binned_column_means(x.reshape(e.shape), u, starts, sizes, names)
        e2 = sums(rows, u, starts, sizes, True, False, float(np.ldexp(1.0, -k)), scaled)[0]
    shape = e.shape[:-1] + (len(sizes),)
    out = {}
    if want_e2:
        out["E2"] = (e2 / sizes).reshape(shape)
    if "Z2" in names:
        out["Z2"] = (z2 / sizes).reshape(shape)
    out["log2_scale"] = k
    return out


def ence(e, u, starts, sizes):
    """ENCE of pre-binned points."""
    return ence_from_means(binned_column_means(e, u, starts, sizes))


def uce(e, u, starts, sizes):
    """UCE of pre-binned points."""
    return uce_from_means(binned_column_means(e, u, starts, sizes))


def zmse(e, u, starts, sizes):
    """ZMSE of pre-binned points."""
    return zmse_from_means(binned_column_means(e, u, starts, sizes))


BINNED = {"ENCE": ence, "UCE": uce, "ZMSE": zmse}


def _prefix(cols):
    return np.concatenate([np.zeros((1, cols.shape[1])), np.cumsum(cols, axis=0)])


@njit(nogil=True, cache=True)
def _loo_means_kernel(prefix, cols, q, i0, i1):
    """Bin means of the leave-one-out samples i0..i1-1 (the arithmetic of the numpy form)."""
    n_bins = q.size - 1
    k = cols.shape[1]
    out = np.empty((i1 - i0, n_bins, k))
    for i in range(i0, i1):
        for b in range(n_bins):
            first = q[b] + (1 if q[b] >= i else 0)  # original position of the bin's first point
            last = q[b + 1] - 1 + (1 if q[b + 1] - 1 >= i else 0)
            size = q[b + 1] - q[b]
            inside = first <= i <= last
            for c in range(k):
                v = prefix[last + 1, c] - prefix[first, c]
                if inside:
                    v = v - cols[i, c]
                out[i - i0, b, c] = v / size
    return out


def _loo_means_numpy(prefix, cols, q, i0, i1):
    """:func:`_loo_means_kernel` in numpy (without numba): the same arithmetic, vectorised."""
    i = np.arange(i0, i1)[:, None]
    qb, qe = q[None, :-1], q[None, 1:]
    first = qb + (qb >= i)
    last = qe - 1 + (qe - 1 >= i)
    inside = (first <= i) & (i <= last)
    v = prefix[last + 1] - prefix[first]  # (n, n_bins, k)
    v = np.where(inside[..., None], v - cols[i0:i1][:, None, :], v)
    return v / (qe - qb)[..., None]


def loo_binned_means(cols, n_bins, rows=None, prefix=None):
    """Per-bin column means of every leave-one-out sample, equal-count bins, by prefix sums.

    Parameters
    ----------
    cols : ndarray, shape (M, k)
        Columns sorted by the binning variable.
    n_bins : int
    rows : slice, optional
        The left-out points to return (all by default): callers go through the points in
        chunks so that memory stays O(chunk x n_bins x k), not O(M x n_bins x k).
    prefix : ndarray, shape (M + 1, k), optional
        Prefix sums of ``cols`` with a leading zero row, when the caller has them (they
        are the same for every chunk).

    Returns
    -------
    ndarray, shape (len(rows), n_bins, k)

    Examples
    --------
    >>> loo_binned_means(np.arange(4.0)[:, None], 1)[:, 0, 0].tolist()[:2]
    [2.0, 1.6666666666666667]
    """
    cols = np.ascontiguousarray(cols, dtype=float)
    m = cols.shape[0]
    prefix = _prefix(cols) if prefix is None else prefix
    q = equal_count_bounds(m - 1, n_bins).astype(np.int64)
    i0, i1, _ = (rows if rows is not None else slice(None)).indices(m)
    kernel = _loo_means_kernel if HAVE_NUMBA else _loo_means_numpy
    return kernel(prefix, cols, q, i0, max(i0, i1))


#: left-out points per chunk of :func:`loo_binned_values` (8 MB per column and 100 bins)
LOO_CHUNK = 8192


def loo_binned_values(cols, n_bins, func):
    """``func`` of the per-bin means of every leave-one-out sample, chunk by chunk.

    Parameters
    ----------
    cols : ndarray, shape (M, k)
        Columns sorted by the binning variable.
    n_bins : int
    func : callable
        Maps per-bin means of shape (chunk, n_bins, k) to one value per left-out point.

    Returns
    -------
    ndarray, shape (M,)

    Examples
    --------
    >>> x = np.arange(4.0)[:, None]
    >>> loo_binned_values(x, 1, lambda b: b[:, 0, 0]).tolist()[:2]
    [2.0, 1.6666666666666667]
    """
    cols = np.ascontiguousarray(cols, dtype=float)
    m = cols.shape[0]
    prefix = _prefix(cols)
    return np.concatenate(
        [
            np.asarray(
                func(loo_binned_means(cols, n_bins, slice(a, a + LOO_CHUNK), prefix=prefix)),
                dtype=float,
            )
            for a in range(0, m, LOO_CHUNK)
        ]
    )


def acf(x, max_lag):
    """Sample autocorrelation r_0..r_max_lag along the last axis (as R's ``acf``).

    Examples
    --------
    >>> np.round(acf(np.array([1.0, -1.0, 1.0, -1.0, 1.0, -1.0]), 1), 6).tolist()
    [1.0, -0.833333]
    """
    x = np.asarray(x, dtype=float)
    d = x - x.mean(axis=-1, keepdims=True)
    den = np.sum(d * d, axis=-1)
    n = x.shape[-1]
    return np.stack(
        [np.sum(d[..., : n - k] * d[..., k:], axis=-1) / den for k in range(max_lag + 1)], axis=-1
    )
