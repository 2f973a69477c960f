"""NEES and quantile-coverage kernels (numpy in, numpy out, no xarray).

Core axes are last: a residual is ``(..., d)``, a covariance ``(..., d, d)``
(numpy's linear-algebra layout, the points on the leading axes); every
reduction over points, draws or replicates has that axis last (``(..., n)``,
``(..., r)``, ``(..., B)``), and the quantile-level axis ``q`` comes just
before it (``(..., q, n)``).

Definitions (Küppers et al. (2022)):

* NEES ``eps = r^T Sigma^-1 r`` with ``r = y - mean``, computed as
  ``|L^-1 r|^2`` from the Cholesky factor ``Sigma = L L^T``; ``Z^2`` for a
  standard deviation.
* A point is inside quantile level ``tau`` when ``eps <= chi2_d.ppf(tau)``.
* Coverage per equal-width bin of the dispersion (std, or
  ``sigma_G = det(Sigma)^(1/(2d))``), with netcal 1.4.0's treatment of bins
  below ``sample_threshold``.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

__all__ = [
    "CovarianceError",
    "cholesky",
    "covariance_problems",
    "solve_lower",
    "nees_from_cholesky",
    "nees_std",
    "generalized_std",
    "sample_moments",
    "hpdi",
    "chi2_thresholds",
    "inside_from_nees",
    "equal_width_edges",
    "bin_indices",
    "binned_counts",
    "binned_qce",
    "pattern_bootstrap",
    "mqce_jackknife",
    "fold_interval",
    "anees_test",
]

EPS = np.finfo(np.float64).eps

#: A matrix is called singular when a Cholesky pivot (conditional variance of
#: a component given the previous ones) falls below ``SINGULAR_RTOL * d * eps``
#: times its variance, or its smallest eigenvalue below that times the largest.
SINGULAR_RTOL = 100.0

#: Relative tolerance of the symmetry check: ``max|S - S^T| <= SYM_RTOL max|S|``.
SYM_RTOL = 1e-8


class CovarianceError(ValueError):
    """Invalid covariance matrices; ``problems`` maps a problem to point indices."""

    def __init__(self, message, problems):
        super().__init__(message)
        self.problems = problems


def _indices_text(idx, limit=10):
    idx = np.asarray(idx)
    head = ", ".join(str(int(i)) for i in idx[:limit])
    return f"[{head}{', ...' if idx.size > limit else ''}]"


def _matrix_scale(cov):
    return np.max(np.abs(cov), axis=(-2, -1))


def covariance_problems(cov):
    """Classify covariance matrices that are not symmetric positive definite.

    Parameters
    ----------
    cov : ndarray, shape (n, d, d)

    Returns
    -------
    dict
        ``{"non-finite": idx, "not symmetric": idx, "not positive definite": idx,
        "singular": idx}`` with sorted integer index arrays (each point is in
        at most one class, checked in that order). Positive definiteness is
        judged on the symmetric part from the eigenvalues: smallest eigenvalue
        below ``-tol * largest`` is "not positive definite", within
        ``+-tol * largest`` "singular", with ``tol = SINGULAR_RTOL * d * eps``.

    Examples
    --------
    >>> import numpy as np
    >>> c = np.stack([np.eye(2), [[1.0, 1.0], [1.0, 1.0]], [[1.0, 2.0], [2.0, 1.0]],
    ...               [[1.0, 0.5], [0.0, 1.0]]])
    >>> {k: v.tolist() for k, v in covariance_problems(c).items() if v.size}
    {'not symmetric': [3], 'not positive definite': [2], 'singular': [1]}
    """
    cov = np.asarray(cov, dtype=np.float64)
    d = cov.shape[-1]
    nonfinite = ~np.all(np.isfinite(cov), axis=(-2, -1))
    work = np.where(nonfinite[..., None, None], np.eye(d), cov)
    asym = np.max(np.abs(work - np.swapaxes(work, -1, -2)), axis=(-2, -1)) > \
        SYM_RTOL * _matrix_scale(work)
    asym &= ~nonfinite
    sym = 0.5 * (work + np.swapaxes(work, -1, -2))
    sym = np.where(asym[..., None, None], np.eye(d), sym)
    lam = np.linalg.eigvalsh(sym)
    tol = SINGULAR_RTOL * d * EPS * np.maximum(np.abs(lam[..., -1]), np.finfo(float).tiny)
    notpd = (lam[..., 0] < -tol) & ~nonfinite & ~asym
    singular = (np.abs(lam[..., 0]) <= tol) & ~nonfinite & ~asym
    return {"non-finite": np.flatnonzero(nonfinite),
            "not symmetric": np.flatnonzero(asym),
            "not positive definite": np.flatnonzero(notpd),
            "singular": np.flatnonzero(singular)}


def _raise_problems(problems, n, name):
    total = sum(v.size for v in problems.values())
    parts = [f"{k}: {v.size} point(s) at {_indices_text(v)}" for k, v in problems.items() if v.size]
    raise CovarianceError(
        f"{name}: {total} of {n} covariance matrices are not symmetric positive definite "
        f"(point indices, first 10): " + "; ".join(parts), problems)


def cholesky(cov, *, name="scale"):
    """Lower Cholesky factors of a stack of covariance matrices, with checks.

    Parameters
    ----------
    cov : array_like, shape (n, d, d)
        Covariance matrices; symmetric to ``SYM_RTOL`` relative (the symmetric
        part is factored).
    name : str
        Variable name used in error messages.

    Returns
    -------
    ndarray, shape (n, d, d)
        ``L`` with ``L @ L.T == cov``.

    Raises
    ------
    CovarianceError
        A ``ValueError`` naming how many matrices are non-finite, not
        symmetric, not positive definite or (numerically) singular, with the
        first 10 point indices of each kind.

    Examples
    --------
    >>> import numpy as np
    >>> L = cholesky(np.array([[[4.0, 2.0], [2.0, 5.0]]]))
    >>> L[0].tolist()
    [[2.0, 0.0], [1.0, 2.0]]
    >>> try:
    ...     cholesky(np.array([np.eye(2), [[1.0, 2.0], [2.0, 1.0]]]))
    ... except ValueError as err:
    ...     print(err)
    scale: 1 of 2 covariance matrices are not symmetric positive definite (point indices, first 10): not positive definite: 1 point(s) at [1]
    """
    cov = np.asarray(cov, dtype=np.float64)
    if cov.ndim != 3 or cov.shape[-1] != cov.shape[-2]:
        raise ValueError(f"{name}: covariance matrices must have shape (n, d, d), got {cov.shape}")
    n, d = cov.shape[0], cov.shape[-1]
    finite = np.all(np.isfinite(cov), axis=(-2, -1))
    tol = SYM_RTOL * _matrix_scale(cov)[:, None, None]
    sym = np.all(np.abs(cov - np.swapaxes(cov, -1, -2)) <= tol, axis=(-2, -1))
    if not (np.all(finite) and np.all(sym)):
        _raise_problems(covariance_problems(cov), n, name)
    s = 0.5 * (cov + np.swapaxes(cov, -1, -2))
    try:
        chol = np.linalg.cholesky(s)
    except np.linalg.LinAlgError:
        _raise_problems(covariance_problems(cov), n, name)
    with np.errstate(invalid="ignore", divide="ignore"):
        frac = np.diagonal(chol, axis1=-2, axis2=-1) ** 2 / np.diagonal(s, axis1=-2, axis2=-1)
    bad = ~(np.min(frac, axis=-1) > SINGULAR_RTOL * d * EPS)
    if np.any(bad):
        problems = covariance_problems(cov)
        # pivots can flag nearly singular matrices that the eigenvalue test accepts
        extra = np.setdiff1d(np.flatnonzero(bad), np.concatenate(list(problems.values())))
        problems["singular"] = np.union1d(problems["singular"], extra).astype(np.intp)
        _raise_problems(problems, n, name)
    return chol


def solve_lower(chol, r):
    """Solve ``L z = r`` for lower-triangular ``L`` (batched, no inverse).

    Forward substitution with vector operations over the points for small
    ``d`` (<= 8), ``numpy.linalg.solve`` otherwise.

    Parameters
    ----------
    chol : ndarray, shape (..., d, d)
    r : ndarray, shape (..., d)

    Returns
    -------
    ndarray, shape (..., d)

    Examples
    --------
    >>> import numpy as np
    >>> solve_lower(np.array([[2.0, 0.0], [1.0, 2.0]]), np.array([2.0, 3.0])).tolist()
    [1.0, 1.0]
    """
    d = chol.shape[-1]
    if d > 8:
        return np.linalg.solve(chol, r[..., None])[..., 0]
    z = np.empty(np.broadcast_shapes(chol.shape[:-1], r.shape), dtype=np.float64)
    for i in range(d):
        acc = r[..., i].astype(np.float64, copy=True)
        for j in range(i):
            acc -= chol[..., i, j] * z[..., j]
        z[..., i] = acc / chol[..., i, i]
    return z


def nees_from_cholesky(chol, residual):
    """NEES ``r^T Sigma^-1 r = |L^-1 r|^2`` per point.

    Parameters
    ----------
    chol : ndarray, shape (..., n, d, d)
        Cholesky factors of the covariances (:func:`cholesky`).
    residual : ndarray, shape (..., n, d)
        ``y - mean``.

    Returns
    -------
    ndarray, shape (..., n)

    Examples
    --------
    >>> import numpy as np
    >>> L = cholesky(np.array([[[4.0, 0.0], [0.0, 1.0]]]))
    >>> nees_from_cholesky(L, np.array([[2.0, 1.0]])).tolist()
    [2.0]
    """
    z = solve_lower(chol, residual)
    return np.einsum("...i,...i->...", z, z)


def nees_std(residual, std):
    """Squared z-scores ``(r / s)^2`` (the NEES of one dimension), elementwise.

    Computed as ``(r / s)^2``, not ``r^2 / s^2``, so that tiny or huge scales
    (``s = 1e-300``, ``r = 1e155``) do not under/overflow.

    Examples
    --------
    >>> float(nees_std(3.0, 2.0))
    2.25
    >>> float(nees_std(1e-300, 2e-300))
    0.25
    """
    residual = np.asarray(residual, dtype=np.float64)
    std = np.asarray(std, dtype=np.float64)
    with np.errstate(over="ignore"):  # inf where (r / s)^2 > 1e308; callers report it
        return np.square(residual / std)


def generalized_std(chol):
    """Generalised standard deviation ``sigma_G = det(Sigma)^(1/(2d))`` from ``L``.

    Computed as the geometric mean of the Cholesky diagonal,
    ``exp(mean(log L_ii))``, which avoids under/overflow of the determinant.

    Examples
    --------
    >>> import numpy as np
    >>> L = cholesky(np.array([[[4.0, 0.0], [0.0, 9.0]]]))
    >>> round(float(generalized_std(L)[0]), 12)   # (4 * 9) ** (1 / 4)
    2.449489742783
    """
    diag = np.diagonal(chol, axis1=-2, axis2=-1)
    return np.exp(np.mean(np.log(diag), axis=-1))


def sample_moments(samples, *, covariance=False):
    """Mean and variance (or covariance) of predictive draws, ``ddof=0``.

    Parameters
    ----------
    samples : ndarray, shape (..., r) or, with ``covariance=True``, (..., d, r)
        ``r`` draws of each predictive distribution (draws last).
    covariance : bool
        Return covariance matrices ``(..., d, d)`` instead of variances.

    Returns
    -------
    mean, var : ndarray
        ``(...)`` and ``(...)``; or ``(..., d)`` and ``(..., d, d)``.

    Examples
    --------
    >>> import numpy as np
    >>> m, v = sample_moments(np.array([[0.0, 2.0]]))
    >>> m.tolist(), v.tolist()
    ([1.0], [1.0])
    """
    samples = np.asarray(samples, dtype=np.float64)
    mean = np.mean(samples, axis=-1)
    if not covariance:
        return mean, np.var(samples, axis=-1)
    c = samples - mean[..., None]
    return mean, np.einsum("...ir,...jr->...ij", c, c) / samples.shape[-1]


def hpdi(sorted_samples, prob):
    """Highest-density interval of sorted draws (netcal 1.4.0 / NumPyro rule).

    The narrowest window of ``m = int(prob * r)`` consecutive gaps among the
    ``r`` sorted draws: bounds ``x[j]`` and ``x[j + m]``, ``j`` the first index
    minimising ``x[j + m] - x[j]``.

    Parameters
    ----------
    sorted_samples : ndarray, shape (..., r)
        Draws sorted along the last axis.
    prob : float
        Probability mass in (0, 1).

    Returns
    -------
    lower, upper : ndarray, shape (...)

    Examples
    --------
    >>> import numpy as np
    >>> x = np.array([0.0, 1.0, 1.1, 1.2, 5.0])
    >>> [float(b) for b in hpdi(x, 0.5)]
    [1.0, 1.2]
    """
    x = np.asarray(sorted_samples)
    r = x.shape[-1]
    m = int(prob * r)
    if m >= r:
        raise ValueError(f"HPDI at mass {prob} needs more than {r} draws")
    width = x[..., m:] - x[..., : r - m]
    start = np.argmin(width, axis=-1)[..., None]
    lower = np.take_along_axis(x, start, axis=-1)[..., 0]
    upper = np.take_along_axis(x, start + m, axis=-1)[..., 0]
    return lower, upper


def chi2_thresholds(quantiles, df):
    """``chi2_df.ppf(tau)``: the NEES bound of the central ``tau`` region.

    Examples
    --------
    >>> round(float(chi2_thresholds([0.5], 1)[0]), 6)   # 0.6744897...^2
    0.454936
    """
    return stats.chi2.ppf(np.asarray(quantiles, dtype=np.float64), df)


def inside_from_nees(nees, thresholds):
    """``nees <= threshold`` for every quantile level: shape ``(..., q, n)``.

    Parameters
    ----------
    nees : ndarray, shape (..., n)
    thresholds : ndarray, shape (q,)

    Examples
    --------
    >>> import numpy as np
    >>> inside_from_nees(np.array([0.1, 1.0]), np.array([0.5, 2.0])).tolist()
    [[True, False], [True, True]]
    """
    nees = np.asarray(nees)
    thr = np.asarray(thresholds, dtype=np.float64)[:, None]
    return nees[..., None, :] <= thr


def equal_width_edges(values, bins, value_range=None):
    """Equal-width edges between min and max (or ``value_range``), per row.

    Parameters
    ----------
    values : ndarray, shape (..., n)
    bins : int
    value_range : array_like, shape (2,) or (..., 2), optional
        ``(lower, upper)`` per row; default the row's min and max. When
        ``lower == upper`` the range is widened to ``lower -+ 0.5`` (as
        ``numpy.histogram`` does; netcal raises there).

    Returns
    -------
    ndarray, shape (..., bins + 1)
        ``numpy.linspace(lower, upper, bins + 1)`` per row.

    Examples
    --------
    >>> import numpy as np
    >>> equal_width_edges(np.array([1.0, 2.0, 3.0]), 2).tolist()
    [1.0, 2.0, 3.0]
    """
    values = np.asarray(values, dtype=np.float64)
    if value_range is None:
        lo, hi = np.min(values, axis=-1), np.max(values, axis=-1)
    else:
        rng_ = np.broadcast_to(np.asarray(value_range, dtype=np.float64), values.shape[:-1] + (2,))
        lo, hi = rng_[..., 0], rng_[..., 1]
    same = lo == hi
    lo, hi = np.where(same, lo - 0.5, lo), np.where(same, hi + 0.5, hi)
    return np.linspace(lo, hi, bins + 1, axis=-1)


def bin_indices(values, edges):
    """Bin index of every value, -1 outside the edges (scipy's edge rule).

    Bins are ``[e_k, e_{k+1})`` except the last, ``[e_{B-1}, e_B]``; as
    ``scipy.stats.binned_statistic_dd`` (used by netcal), values above the
    last edge that round to it at ``int(-log10(min width)) + 6`` decimals are
    put in the last bin.

    Parameters
    ----------
    values : ndarray, shape (..., n)
    edges : ndarray, shape (..., B + 1)

    Returns
    -------
    ndarray of intp, shape (..., n)

    Examples
    --------
    >>> import numpy as np
    >>> bin_indices(np.array([0.0, 0.5, 1.0, 2.0, -1.0]), np.array([0.0, 0.5, 1.0])).tolist()
    [0, 1, 1, -1, -1]
    """
    values = np.asarray(values, dtype=np.float64)
    edges = np.asarray(edges, dtype=np.float64)
    lead = values.shape[:-1]
    v2 = values.reshape(-1, values.shape[-1])
    e2 = np.broadcast_to(edges, lead + edges.shape[-1:]).reshape(-1, edges.shape[-1])
    n_bins = e2.shape[-1] - 1
    out = np.empty(v2.shape, dtype=np.intp)
    for row, (v, e) in enumerate(zip(v2, e2)):
        idx = np.searchsorted(e, v, side="right") - 1
        width = np.min(np.diff(e))
        decimal = int(-np.log10(width)) + 6
        on_edge = (v >= e[-1]) & (np.around(v, decimal) == np.around(e[-1], decimal))
        idx[on_edge] = n_bins - 1
        idx[(idx < 0) | (idx >= n_bins)] = -1
        out[row] = idx
    return out.reshape(values.shape)


def binned_counts(inside, idx, n_bins):
    """Points and points inside per bin.

    Parameters
    ----------
    inside : ndarray of bool, shape (..., q, n)
    idx : ndarray of int, shape (..., n)
        Bin indices (-1: not binned).
    n_bins : int

    Returns
    -------
    count : ndarray of int, shape (..., n_bins)
    k : ndarray of int, shape (..., q, n_bins)

    Examples
    --------
    >>> import numpy as np
    >>> c, k = binned_counts(np.array([[True, False, True]]), np.array([0, 0, 1]), 2)
    >>> c.tolist(), k.tolist()
    ([2, 1], [[1, 1]])
    """
    idx = np.asarray(idx)
    inside = np.asarray(inside, dtype=bool)
    lead = idx.shape[:-1]
    q, n = inside.shape[-2], inside.shape[-1]
    rows = int(np.prod(lead, dtype=np.intp))
    idx2 = idx.reshape(rows, n)
    ins = np.broadcast_to(inside, lead + (q, n)).reshape(rows, q, n)
    count = np.zeros((rows, n_bins), dtype=np.int64)
    k = np.zeros((rows, q, n_bins), dtype=np.int64)
    for row in range(rows):
        ok = idx2[row] >= 0
        b = idx2[row][ok]
        count[row] = np.bincount(b, minlength=n_bins)
        for j in range(q):
            k[row, j] = np.bincount(b[ins[row, j][ok]], minlength=n_bins)
    return count.reshape(lead + (n_bins,)), k.reshape(lead + (q, n_bins))


def binned_qce(k, count, quantiles, sample_threshold=1):
    """Per-bin coverage, netcal's per-bin map and the C-QCE.

    Parameters
    ----------
    k : ndarray, shape (..., q, B)
        Points inside per quantile level and bin.
    count : ndarray, shape (..., B)
        Points per bin.
    quantiles : ndarray, shape (q,)
    sample_threshold : int
        Bins with fewer points are "excluded" as netcal 1.4.0 does: their
        coverage counts as 0 (NaN in ``coverage``), so they enter the map as
        ``tau`` and the C-QCE with weight ``N_b / N``.

    Returns
    -------
    coverage : ndarray, shape (..., q, B)
        ``k / N_b``, NaN for empty or excluded bins.
    qce_map : ndarray, shape (..., q, B)
        ``|coverage - tau|`` with 0 in place of NaN coverage (netcal's map).
    c_qce : ndarray, shape (..., q)
        ``sum_b N_b qce_map_b / sum_b N_b``.

    Examples
    --------
    >>> import numpy as np
    >>> cov, m, c = binned_qce(np.array([[2, 1]]), np.array([3, 3]), np.array([0.5]))
    >>> np.round(c, 6).tolist()
    [0.166667]
    """
    k = np.asarray(k, dtype=np.float64)
    count = np.asarray(count, dtype=np.float64)[..., None, :]
    tau = np.asarray(quantiles, dtype=np.float64)[:, None]
    kept = (count >= sample_threshold) & (count > 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        coverage = np.where(kept, k / np.where(count > 0, count, 1.0), np.nan)
    qce_map = np.abs(np.where(kept, coverage, 0.0) - tau)
    total = np.sum(count, axis=-1)
    c_qce = np.sum(qce_map * count, axis=-1) / total
    return coverage, qce_map, c_qce


def pattern_bootstrap(inside, n_boot, rng):
    """Bootstrap replicates of the points-inside counts, by inside pattern.

    Resampling the ``n`` points with replacement matters only through how many
    resampled points share each inside pattern (the inside flags over the
    quantile levels); these counts are multinomial with the observed pattern
    frequencies, which is how they are drawn: the same distribution as
    resampling indices, at a cost independent of ``n``.

    Parameters
    ----------
    inside : ndarray of bool, shape (..., q, n)
    n_boot : int
    rng : numpy.random.Generator

    Returns
    -------
    ndarray of int, shape (..., q, n_boot)
        Points inside per replicate; leading rows (e.g. variables) are
        resampled independently.

    Examples
    --------
    >>> import numpy as np
    >>> ins = np.array([[True, False, True, True]])
    >>> k = pattern_bootstrap(ins, 1000, np.random.default_rng(0))
    >>> k.shape, bool(abs(k.mean() - 3.0) < 0.1)
    ((1, 1000), True)
    """
    inside = np.asarray(inside, dtype=bool)
    q, n = inside.shape[-2], inside.shape[-1]
    lead = inside.shape[:-2]
    rows = inside.reshape(-1, q, n)
    out = np.empty((rows.shape[0], q, n_boot), dtype=np.int64)
    for row in range(rows.shape[0]):
        pat = rows[row].T  # (n, q)
        packed = np.packbits(pat, axis=1)
        key = np.ascontiguousarray(packed).view(np.dtype((np.void, packed.shape[1]))).ravel()
        _, first, counts = np.unique(key, return_index=True, return_counts=True)
        draws = rng.multinomial(n, counts / n, size=n_boot)  # (B, P)
        out[row] = (draws @ pat[first].astype(np.int64)).T
    return out.reshape(lead + (q, n_boot))


def mqce_jackknife(inside, quantiles, *, signed=False):
    """Exact leave-one-out values of ``M-QCE = |k/n - tau|``.

    Leaving out a point inside gives ``|(k - 1)/(n - 1) - tau|``, a point
    outside ``|k/(n - 1) - tau|``; with ``signed=True`` the signed deviation
    ``k/n - tau``. The BCa acceleration follows from these values
    (:func:`uqviz._array.bca.acceleration`).

    Parameters
    ----------
    inside : ndarray of bool, shape (..., q, n)
        ``n >= 2`` points.
    quantiles : ndarray, shape (q,)
    signed : bool

    Returns
    -------
    ndarray, shape (..., q, n)

    Examples
    --------
    >>> import numpy as np
    >>> mqce_jackknife(np.array([[True, False, False]]), [0.5]).tolist()
    [[0.5, 0.0, 0.0]]
    """
    inside = np.asarray(inside, dtype=bool)
    n = inside.shape[-1]
    if n < 2:
        raise ValueError(f"the jackknife needs at least 2 points, got {n}")
    k = np.count_nonzero(inside, axis=-1).astype(np.float64)[..., None]
    tau = np.asarray(quantiles, dtype=np.float64)[:, None]
    fold = (lambda x: x) if signed else np.abs
    v_in = fold((k - 1.0) / (n - 1.0) - tau)
    v_out = fold(k / (n - 1.0) - tau)
    return np.where(inside, v_in, v_out)


def fold_interval(lower, upper):
    """Interval of ``|theta|`` from an interval ``[lower, upper]`` of ``theta``.

    ``[0, max|bound|]`` when the interval contains 0, else ``[min|bound|, max|bound|]``;
    it holds ``|theta|`` whenever the signed interval holds ``theta``.

    Examples
    --------
    >>> [float(b) for b in fold_interval(-0.01, 0.03)]
    [0.0, 0.03]
    >>> [float(b) for b in fold_interval(-0.05, -0.02)]
    [0.02, 0.05]
    """
    lower, upper = np.asarray(lower, dtype=np.float64), np.asarray(upper, dtype=np.float64)
    a, b = np.abs(lower), np.abs(upper)
    straddle = (lower <= 0) & (upper >= 0)
    return np.where(straddle, 0.0, np.minimum(a, b)), np.maximum(a, b)


def anees_test(nees, dof_per_point, ci=0.95):
    """Chi-square test of the average NEES.

    For calibrated Gaussian predictions each NEES is ``chi2(d)``, so
    ``S = sum eps ~ chi2(n d)`` and the mean NEES is ``d`` on average.

    Parameters
    ----------
    nees : ndarray, shape (..., n)
    dof_per_point : int
        ``d``.
    ci : float
        Level of the two-sided regions.

    Returns
    -------
    dict
        ``mean_nees`` (``S / n``), ``nees_sum`` (``S``), ``dof`` (``n d``),
        ``p_value`` (``2 min(F, 1 - F)``, at most 1); ``acceptance_lower``,
        ``acceptance_upper``: the ``ci`` region of the mean NEES of a calibrated
        model, ``chi2_{nd}.ppf((1 -+ ci)/2) / n``; ``ci_lower``, ``ci_upper``: the
        ``ci`` interval of the expected mean NEES when ``eps / c ~ chi2(d)``,
        ``d S / chi2_{nd}.ppf((1 +- ci)/2)``. ``d`` is inside the interval exactly
        when the mean NEES is inside the acceptance region.

    Examples
    --------
    >>> import numpy as np
    >>> out = anees_test(np.ones(100), 1)
    >>> out["dof"], round(float(out["p_value"]), 3)
    (100, 0.962)
    """
    nees = np.asarray(nees, dtype=np.float64)
    n = nees.shape[-1]
    d = int(dof_per_point)
    dof = int(n * d)
    stat = np.sum(nees, axis=-1)
    lower_tail = stats.chi2.cdf(stat, dof)
    upper_tail = stats.chi2.sf(stat, dof)
    p = np.minimum(1.0, 2.0 * np.minimum(lower_tail, upper_tail))
    q_lo, q_hi = stats.chi2.ppf([(1.0 - ci) / 2.0, (1.0 + ci) / 2.0], dof)
    return {"mean_nees": stat / n, "nees_sum": stat, "dof": dof, "p_value": p,
            "acceptance_lower": float(q_lo / n), "acceptance_upper": float(q_hi / n),
            "ci_lower": d * stat / q_hi, "ci_upper": d * stat / q_lo}
