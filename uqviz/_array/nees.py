"""NEES and quantile-coverage kernels (Küppers et al. (2022)); numpy only.

Layout: residual ``(..., d)``, covariance ``(..., d, d)``; points, draws and
replicates on the last axis, the quantile level just before it ``(..., q, n)``.
NEES = ``|L^-1 r|^2`` (``Sigma = L L^T``); a point is inside level ``tau`` when
NEES <= ``chi2_d.ppf(tau)``; bins follow netcal 1.4.0.

Examples
--------
>>> L = cholesky(np.array([[[4.0, 0.0], [0.0, 9.0]]]))
>>> nees_from_cholesky(L, np.array([[2.0, 3.0]])).tolist(), round(float(generalized_std(L)[0]), 6)
([2.0], 2.44949)
>>> solve_lower(np.array([[2.0, 0.0], [1.0, 2.0]]), np.array([2.0, 3.0])).tolist()
[1.0, 1.0]
>>> float(nees_std(1e-300, 2e-300)), [a.tolist() for a in sample_moments(np.array([[0.0, 2.0]]))]
(0.25, [[1.0], [1.0]])
>>> [float(b) for b in hpdi(np.array([0.0, 1.0, 1.1, 1.2, 5.0]), 0.5)]
[1.0, 1.2]
>>> round(float(chi2_thresholds([0.5], 1)[0]), 6)
0.454936
>>> inside_from_nees(np.array([0.1, 1.0]), np.array([0.5, 2.0])).tolist()
[[True, False], [True, True]]
>>> equal_width_edges(np.array([1.0, 2.0, 3.0]), 2).tolist()
[1.0, 2.0, 3.0]
>>> bin_indices(np.array([0.0, 0.5, 1.0, 2.0]), np.array([0.0, 0.5, 1.0])).tolist()
[0, 1, 1, -1]
>>> [a.tolist() for a in binned_counts(np.array([[True, False, True]]), np.array([0, 0, 1]), 2)]
[[2, 1], [[1, 1]]]
>>> mqce_jackknife(np.array([[True, False, False]]), [0.5]).tolist()
[[0.5, 0.0, 0.0]]
>>> [float(b) for b in fold_interval(-0.01, 0.03)]
[0.0, 0.03]
"""

from __future__ import annotations

import numpy as np

from uqviz._array import tails
from uqviz._array.lazy import lazy_module

stats = lazy_module("scipy.stats")

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
    "mvt_profile",
    "mvt_tail_df",
    "mvt_null_log_means",
    "mvt_null_p_value",
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

    Returns
    -------
    dict
        "non-finite", "not symmetric", "not positive definite", "singular" ->
        sorted point indices (each point in one class at most).

    Examples
    --------
    >>> c = np.stack([np.eye(2), [[1.0, 1.0], [1.0, 1.0]], [[1.0, 2.0], [2.0, 1.0]]])
    >>> {k: v.tolist() for k, v in covariance_problems(c).items() if v.size}
    {'not positive definite': [2], 'singular': [1]}
    """
    cov = np.asarray(cov, dtype=np.float64)
    d = cov.shape[-1]
    nonfinite = ~np.all(np.isfinite(cov), axis=(-2, -1))
    work = np.where(nonfinite[..., None, None], np.eye(d), cov)
    asym = np.max(
        np.abs(work - np.swapaxes(work, -1, -2)), axis=(-2, -1)
    ) > SYM_RTOL * _matrix_scale(work)
    asym &= ~nonfinite
    sym = 0.5 * (work + np.swapaxes(work, -1, -2))
    sym = np.where(asym[..., None, None], np.eye(d), sym)
    lam = np.linalg.eigvalsh(sym)
    tol = SINGULAR_RTOL * d * EPS * np.maximum(np.abs(lam[..., -1]), np.finfo(float).tiny)
    notpd = (lam[..., 0] < -tol) & ~nonfinite & ~asym
    singular = (np.abs(lam[..., 0]) <= tol) & ~nonfinite & ~asym
    return {
        "non-finite": np.flatnonzero(nonfinite),
        "not symmetric": np.flatnonzero(asym),
        "not positive definite": np.flatnonzero(notpd),
        "singular": np.flatnonzero(singular),
    }


def _raise_problems(problems, n, name):
    total = sum(v.size for v in problems.values())
    parts = [f"{k}: {v.size} point(s) at {_indices_text(v)}" for k, v in problems.items() if v.size]
    raise CovarianceError(
        f"{name}: {total} of {n} covariance matrices are not symmetric positive definite "
        f"(point indices, first 10): " + "; ".join(parts),
        problems,
    )


def cholesky(cov, *, name="scale"):
    """Lower Cholesky factors of covariance matrices ``(n, d, d)``, checked.

    Raises
    ------
    CovarianceError
        A ValueError counting the non-finite, asymmetric, non positive-definite
        or singular matrices, with their first 10 indices (``name`` in the message).

    Examples
    --------
    >>> cholesky(np.array([[[4.0, 2.0], [2.0, 5.0]]]))[0].tolist()
    [[2.0, 0.0], [1.0, 2.0]]
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
    """Solve ``L z = r`` for lower-triangular ``L`` (batched, no inverse)."""
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
    """NEES ``|L^-1 r|^2`` per point, ``chol`` (..., n, d, d), ``residual`` (..., n, d)."""
    z = solve_lower(chol, residual)
    return np.einsum("...i,...i->...", z, z)


def nees_std(residual, std):
    """Squared z-scores ``(r / s)^2``, elementwise (no under/overflow of r^2, s^2)."""
    residual = np.asarray(residual, dtype=np.float64)
    std = np.asarray(std, dtype=np.float64)
    with np.errstate(over="ignore"):  # inf where (r / s)^2 > 1e308; callers report it
        return np.square(residual / std)


def generalized_std(chol):
    """``sigma_G = det(Sigma)^(1/(2d))`` as the geometric mean of the Cholesky diagonal."""
    diag = np.diagonal(chol, axis1=-2, axis2=-1)
    return np.exp(np.mean(np.log(diag), axis=-1))


def sample_moments(samples, *, covariance=False):
    """Mean and variance (or covariance, draws ``(..., d, r)``) of predictive draws, ``ddof=0``."""
    samples = np.asarray(samples, dtype=np.float64)
    mean = np.mean(samples, axis=-1)
    if not covariance:
        return mean, np.var(samples, axis=-1)
    c = samples - mean[..., None]
    return mean, np.einsum("...ir,...jr->...ij", c, c) / samples.shape[-1]


def hpdi(sorted_samples, prob):
    """Highest-density interval of sorted draws (last axis), netcal 1.4.0 / NumPyro rule."""
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
    """``chi2_df.ppf(tau)``: the NEES bound of the central ``tau`` region."""
    return stats.chi2.ppf(np.asarray(quantiles, dtype=np.float64), df)


def inside_from_nees(nees, thresholds):
    """``nees <= threshold`` for every quantile level: shape ``(..., q, n)``."""
    nees = np.asarray(nees)
    thr = np.asarray(thresholds, dtype=np.float64)[:, None]
    return nees[..., None, :] <= thr


def equal_width_edges(values, bins, value_range=None):
    """Equal-width edges ``(..., bins + 1)`` per row between min and max (or ``value_range``)."""
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
    """Bin index of every value, -1 outside (last bin closed, scipy's edge rule)."""
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
    """Points per bin ``(..., n_bins)`` and points inside per bin ``(..., q, n_bins)``."""
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

    Bins below ``sample_threshold`` count as coverage 0 (NaN in ``coverage``), as netcal 1.4.0.

    Returns
    -------
    coverage, qce_map : ndarray, shape (..., q, B)
    c_qce : ndarray, shape (..., q)

    Examples
    --------
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
    """Bootstrap replicates ``(..., q, n_boot)`` of the points-inside counts (by inside pattern).

    Examples
    --------
    >>> k = pattern_bootstrap(np.array([[True, False, True, True]]), 1000, np.random.default_rng(0))
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
    """Exact leave-one-out values ``(..., q, n)`` of ``M-QCE = |k/n - tau|`` (or signed)."""
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
    """Interval of ``|theta|`` from an interval of ``theta``."""
    lower, upper = np.asarray(lower, dtype=np.float64), np.asarray(upper, dtype=np.float64)
    a, b = np.abs(lower), np.abs(upper)
    straddle = (lower <= 0) & (upper >= 0)
    return np.where(straddle, 0.0, np.minimum(a, b)), np.maximum(a, b)


def anees_test(nees, dof_per_point, ci=0.95):
    """Chi-square test of the average NEES: ``sum NEES ~ chi2(n d)`` when calibrated.

    Returns
    -------
    dict
        ``mean_nees``, ``nees_sum``, ``dof``, ``p_value`` (two-sided), the ``ci``
        acceptance region of the mean NEES (``acceptance_lower``/``_upper``) and the
        interval of its expectation (``ci_lower``/``_upper``).

    Examples
    --------
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
    return {
        "mean_nees": stat / n,
        "nees_sum": stat,
        "dof": dof,
        "p_value": p,
        "acceptance_lower": float(q_lo / n),
        "acceptance_upper": float(q_hi / n),
        "ci_lower": d * stat / q_hi,
        "ci_upper": d * stat / q_lo,
    }


# ---------------------------------------------------------------------------------------
# the tail-allowing test of the mean NEES (issue 36): multivariate Student-t z-vectors
# ---------------------------------------------------------------------------------------

#: above this many NEES values the profile likelihood is computed on as many evenly spaced
#: order statistics (as ``uqviz._array.tails.MAX_PROFILE_POINTS``)
MVT_MAX_PROFILE_POINTS = 200_000
#: simulated sets of the null of the mean NEES for d > 1, and the largest set simulated (the
#: spread of larger sets is rescaled by the rate of the law, as the table of d = 1)
MVT_NULL_SETS = 2000
MVT_NULL_MAX_POINTS = 10_000


def _thinned(q):
    q = np.asarray(q, dtype=np.float64).ravel()
    m = q.size
    if m > MVT_MAX_PROFILE_POINTS:
        q = np.quantile(q, (np.arange(MVT_MAX_PROFILE_POINTS) + 0.5) / MVT_MAX_PROFILE_POINTS)
        return q, m / MVT_MAX_PROFILE_POINTS
    return q, 1.0


def mvt_profile(nees, d, df, n_iter=200, tol=1e-10):
    """Profile log-likelihood of the degrees of freedom of a zero-centred multivariate
    Student-t of scatter ``s I_d`` fitted to whitened vectors, from their NEES ``q = |x|^2``.

    For each ``df`` the scale ``s`` is its maximum-likelihood value (EM fixed point
    ``s = <w q> / d``, ``w = (nu + d) / (nu + q / s)``); ``df = inf`` is the normal. For
    ``d = 1`` it is :func:`uqviz._array.tails.t_profile` of the z-scores ``sqrt(q)``.

    Examples
    --------
    >>> from uqviz._array import tails
    >>> z = np.random.default_rng(0).standard_t(3, 500)
    >>> bool(np.allclose(mvt_profile(z * z, 1, tails.PROFILE_DF), tails.t_profile(z)))
    True
    """
    q, weight = _thinned(nees)
    d = int(d)
    df = np.asarray(df, dtype=np.float64)
    out = np.full(df.size, np.nan)
    if q.size == 0 or not np.all(np.isfinite(q)) or not np.any(q > 0):
        return out
    from scipy.special import gammaln

    m = q.size
    s = float(np.mean(q)) / d
    for k, nu in enumerate(df):
        if not np.isfinite(nu):
            sn = float(np.mean(q)) / d
            out[k] = -0.5 * m * d * (np.log(2 * np.pi * sn) + 1.0)
            continue
        for _ in range(n_iter):
            new = float(np.mean(q * ((nu + d) / (nu + q / s)))) / d
            done = abs(new - s) <= tol * s
            s = new
            if done:
                break
        out[k] = m * (
            gammaln((nu + d) / 2) - gammaln(nu / 2) - 0.5 * d * np.log(nu * np.pi * s)
        ) - 0.5 * (nu + d) * np.sum(np.log1p(q / (nu * s)))
    return out * weight


def mvt_tail_df_upper(nees, d):
    """The lightest degrees of freedom consistent with the NEES (the same one-sided 95 %
    likelihood-ratio set as :func:`mvt_tail_df`; inf: the normal). NaN when degenerate.

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> x = rng.standard_normal((4000, 3)) / np.sqrt(rng.chisquare(4, (4000, 1)) / 4)
    >>> bool(4.0 < mvt_tail_df_upper(np.sum(x * x, axis=1), 3) < 8.0)
    True
    """
    df = tails.PROFILE_DF
    ll = mvt_profile(nees, d, df)
    if not np.all(np.isfinite(ll)):
        return np.nan
    return float(df[ll >= ll.max() - tails.LR_HALF_WIDTH][-1])


def mvt_tail_df(nees, d):
    """``(estimate, lower)``: the degrees of freedom of the multivariate t that fits the
    whitened vectors of NEES ``nees`` and the heaviest consistent with them (one-sided 95 %
    likelihood-ratio bound), as :func:`uqviz._array.tails.tail_df` (equal to it for d = 1).

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> x = rng.standard_normal((4000, 3)) / np.sqrt(rng.chisquare(4, (4000, 1)) / 4)
    >>> est, low = mvt_tail_df(np.sum(x * x, axis=1), 3)
    >>> bool(3.0 < low < est < 5.5)
    True
    """
    df = tails.PROFILE_DF
    ll = mvt_profile(nees, d, df)
    if not np.all(np.isfinite(ll)):
        return np.nan, np.nan
    best = int(np.argmax(ll))
    inside = ll >= ll[best] - tails.LR_HALF_WIDTH
    k = int(np.argmax(inside))
    lower = df[k]
    if k > 0:
        x0, x1 = 1.0 / df[k - 1], 1.0 / df[k]
        y0 = ll[k - 1] - ll[best] + tails.LR_HALF_WIDTH
        y1 = ll[k] - ll[best] + tails.LR_HALF_WIDTH
        x = x0 + (x1 - x0) * (0.0 - y0) / (y1 - y0)
        lower = 1.0 / x if x > 0 else np.inf
    return float(df[best]), float(lower)


def mvt_null_log_means(n, d, nu, n_sets=MVT_NULL_SETS, seed=None):
    """Simulated ``log(mean NEES / d)`` of ``n_sets`` calibrated sets of ``n`` unit-covariance
    multivariate Student-t vectors of dimension ``d`` (``nu`` > 2 degrees of freedom; inf:
    normal): ``NEES = (nu - 2) chi2(d) / chi2(nu)`` per point. Above
    ``MVT_NULL_MAX_POINTS`` points, sets of that size are simulated and their log means
    rescaled by ``(MVT_NULL_MAX_POINTS / n)^gamma``, the rate of the law (1/2 for nu >= 4,
    1 - 2/nu below: the stable law of index nu/2). The seed is fixed by ``(n, d, nu)``.

    Examples
    --------
    >>> x = mvt_null_log_means(500, 3, np.inf, n_sets=400)
    >>> x.shape, bool(abs(np.median(x)) < 0.01)
    ((400,), True)
    """
    n, d = int(n), int(d)
    nu = float(nu)
    if seed is None:
        seed = [n, d, 0 if not np.isfinite(nu) else int(round(1000 * nu)), 36]
    g = np.random.default_rng(seed)
    m = min(n, MVT_NULL_MAX_POINTS)
    out = np.empty(n_sets)
    chunk = max(1, 2_000_000 // m)
    for a in range(0, n_sets, chunk):
        b = min(n_sets, a + chunk)
        num = g.chisquare(d, (b - a, m))
        q = num if not np.isfinite(nu) else (nu - 2.0) * num / g.chisquare(nu, (b - a, m))
        out[a:b] = np.log(np.mean(q, axis=1) / d)
    if n > m:
        rate = 0.5 if (not np.isfinite(nu) or nu >= 4) else 1.0 - 2.0 / nu
        out *= (m / n) ** rate
    return out


def mvt_null_p_value(mean_nees, n, d, nu, n_sets=MVT_NULL_SETS):
    """Two-sided Monte Carlo p-value of an observed mean NEES under calibrated
    multivariate Student-t vectors of ``nu`` degrees of freedom (:func:`mvt_null_log_means`):
    ``min(1, 2 min(p_>, p_<))`` with ``p_> = (1 + #{x* >= x}) / (1 + n_sets)``.

    Examples
    --------
    >>> round(float(mvt_null_p_value(2.0, 1000, 2, 5.0)), 2) > 0.1
    True
    >>> float(mvt_null_p_value(4.0, 1000, 2, 5.0)) <= 1 / 1000
    True
    """
    x = float(np.log(float(mean_nees) / int(d)))
    if not np.isfinite(x) or np.isnan(nu) or n < 3:
        return np.nan
    sims = mvt_null_log_means(n, d, max(float(nu), 2.1), n_sets)
    greater = (1.0 + np.count_nonzero(sims >= x)) / (1.0 + sims.size)
    less = (1.0 + np.count_nonzero(sims <= x)) / (1.0 + sims.size)
    return float(min(1.0, 2.0 * min(greater, less)))
