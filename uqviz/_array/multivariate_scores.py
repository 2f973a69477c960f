r"""Joint (multivariate) scores of several targets: numpy kernels, numba where installed.

The forecast of each point is an ensemble of S members of t targets, ``samples`` of shape
(n, t, S), the observations ``y`` of shape (n, t); or a Gaussian forecast, ``mean`` (n, t)
and ``cov`` (n, t, t). Every score is negatively oriented (smaller is better).

- :func:`energy_score_points`: the energy score (Gneiting & Raftery 2007, eq. 22 with
  beta = 1), plain (the empirical distribution of the members, scoringrules'
  ``estimator="nrg"``) or fair (the m(m - 1) distinct pairs, ``"fair"``);
- :func:`variogram_score_points`: the variogram score of order p (Scheuerer & Hamill
  2015), plain or fair, with a (t, t) weight matrix;
- :func:`dawid_sebastiani_points`: the Dawid-Sebastiani score of a mean and a covariance
  (Dawid & Sebastiani 1999), ``log det Sigma + (y - mu)' Sigma^-1 (y - mu)``;
- :func:`energy_score_normal_points`: the energy score of a multivariate normal forecast,
  a seeded Monte Carlo estimate (no closed form for t > 1).

The numba kernels loop over the points in parallel, each point computed alone and in a
fixed order (the numbers do not depend on the number of threads); the numpy kernels take
the same sums over blocks of points and agree to rounding. ``use_numba=None`` takes numba
where it is installed and not disabled (``UQVIZ_DISABLE_NUMBA=1``).

Examples
--------
>>> y = np.array([[0.0, 0.0]])
>>> x = np.array([[[1.0, -1.0], [0.0, 0.0]]])  # members (1, 0) and (-1, 0)
>>> energy_score_points(y, x).tolist(), energy_score_points(y, x, fair=True).tolist()
([0.5], [0.0])
"""

from __future__ import annotations

import numpy as np

from uqviz._array.jit import USE_NUMBA, njit, prange

__all__ = [
    "check_joint_ensemble",
    "check_weights",
    "check_gaussian",
    "energy_score_points",
    "variogram_score_points",
    "dawid_sebastiani_points",
    "energy_score_normal_points",
]

#: the numpy kernels hold at most about this many floats of pairwise differences at once
_BLOCK_FLOATS = 2**22


def _use_numba(use_numba):
    return USE_NUMBA if use_numba is None else bool(use_numba) and USE_NUMBA


# ------------------------------------------------------------------------------------
# checks
# ------------------------------------------------------------------------------------


def _count_bad_points(a):
    """Points (first axis) with a non-finite value anywhere."""
    return int(np.count_nonzero(~np.isfinite(a).reshape(a.shape[0], -1).all(axis=1)))


def check_joint_ensemble(y, samples):
    """``(y, samples)`` as float64 arrays of shapes (n, t) and (n, t, S), S >= 2, finite.

    Examples
    --------
    >>> y, x = check_joint_ensemble([[0.0, 1.0]], [[[0.0, 1.0], [1.0, 2.0]]])
    >>> y.shape, x.shape
    ((1, 2), (1, 2, 2))
    >>> try:
    ...     check_joint_ensemble([[0.0, np.nan]], [[[0.0, 1.0], [1.0, 2.0]]])
    ... except ValueError as exc:
    ...     print(exc)
    samples: 0 point(s) with a non-finite (NaN or inf) member, 1 with a non-finite y
    """
    y = np.ascontiguousarray(y, dtype=float)
    x = np.ascontiguousarray(samples, dtype=float)
    if x.ndim != 3 or y.ndim != 2 or x.shape[:2] != y.shape:
        raise ValueError(
            "samples must have shape (point, target, sample) and y shape (point, target), "
            f"got {x.shape} and {y.shape}"
        )
    if y.shape[1] < 1:
        raise ValueError("y: no target (t = 0)")
    if x.shape[2] < 2:
        raise ValueError(
            "samples: an ensemble of one member is a point forecast (the fair scores are "
            f"undefined): give at least 2 members per point, got {x.shape[2]}"
        )
    bad_x, bad_y = _count_bad_points(x), _count_bad_points(y)
    if bad_x or bad_y:
        raise ValueError(
            f"samples: {bad_x} point(s) with a non-finite (NaN or inf) member, "
            f"{bad_y} with a non-finite y"
        )
    return y, x


def check_weights(weights, t):
    """The (t, t) weight matrix of the variogram score: ones (None), or finite and >= 0.

    Examples
    --------
    >>> check_weights(None, 2).tolist()
    [[1.0, 1.0], [1.0, 1.0]]
    >>> try:
    ...     check_weights([[1.0, -1.0], [1.0, 1.0]], 2)
    ... except ValueError as exc:
    ...     print(str(exc)[:41])
    weights: 1 negative or non-finite entries
    """
    if weights is None:
        return np.ones((t, t))
    w = np.ascontiguousarray(weights, dtype=float)
    if w.shape != (t, t):
        raise ValueError(f"weights must be a (target, target) = ({t}, {t}) matrix, got {w.shape}")
    bad = int(np.count_nonzero(~(np.isfinite(w) & (w >= 0))))
    if bad:
        raise ValueError(
            f"weights: {bad} negative or non-finite entries (the variogram score needs "
            "weights >= 0)"
        )
    return w


def check_gaussian(y, mean, cov):
    """``(y, mean, cov)`` as float64 arrays (n, t), (n, t), (n, t, t): finite, symmetric
    and positive definite covariances (the offending points counted).

    Examples
    --------
    >>> try:
    ...     check_gaussian([[0.0, 0.0]], [[0.0, 0.0]], [[[1.0, 2.0], [2.0, 1.0]]])
    ... except ValueError as exc:
    ...     print(str(exc)[:52])
    cov: 1 point(s) whose covariance is not positive def
    """
    y = np.ascontiguousarray(y, dtype=float)
    mu = np.ascontiguousarray(mean, dtype=float)
    c = np.ascontiguousarray(cov, dtype=float)
    if y.ndim != 2 or mu.shape != y.shape or c.shape != y.shape + (y.shape[1],):
        raise ValueError(
            "y and mean must have shape (point, target) and cov (point, target, target), "
            f"got {y.shape}, {mu.shape} and {c.shape}"
        )
    bad = {"y": _count_bad_points(y), "mean": _count_bad_points(mu), "cov": _count_bad_points(c)}
    if any(bad.values()):
        raise ValueError(
            "non-finite (NaN or inf) values: "
            + ", ".join(f"{v} point(s) in {k}" for k, v in bad.items())
        )
    asym = int(
        np.count_nonzero(
            ~np.isclose(c, np.swapaxes(c, 1, 2), rtol=1e-10, atol=0.0).reshape(len(c), -1).all(1)
        )
    )
    if asym:
        raise ValueError(f"cov: {asym} point(s) whose covariance is not symmetric")
    not_pd = int(np.count_nonzero(np.linalg.eigvalsh(c)[:, 0] <= 0)) if c.size else 0
    if not_pd:
        raise ValueError(
            f"cov: {not_pd} point(s) whose covariance is not positive definite (an eigenvalue <= 0)"
        )
    return y, mu, c


# ------------------------------------------------------------------------------------
# energy score
# ------------------------------------------------------------------------------------


@njit(nogil=True, cache=True, error_model="numpy")
def _energy_sums_one(yi, xi):  # pragma: no cover - compiled
    """``(sum_k ||x_k - y||, sum_{k<l} ||x_k - x_l||)`` of one point, x of shape (t, S)."""
    t, s = xi.shape
    e1 = 0.0
    for k in range(s):
        d2 = 0.0
        for a in range(t):
            d = xi[a, k] - yi[a]
            d2 += d * d
        e1 += np.sqrt(d2)
    e2 = 0.0
    buf = np.empty(s)
    for k in range(s - 1):
        # the distances from member k to all members (full rows of fixed length vectorise
        # better than the S - k - 1 needed), then the sum of those beyond k
        xk = xi[0, k]
        for m in range(s):
            d = xk - xi[0, m]
            buf[m] = d * d
        for a in range(1, t):
            xk = xi[a, k]
            for m in range(s):
                d = xk - xi[a, m]
                buf[m] += d * d
        for m in range(s):
            buf[m] = np.sqrt(buf[m])
        # four running sums: the same order on every machine and thread count
        p0 = 0.0
        p1 = 0.0
        p2 = 0.0
        p3 = 0.0
        m = k + 1
        while m + 3 < s:
            p0 += buf[m]
            p1 += buf[m + 1]
            p2 += buf[m + 2]
            p3 += buf[m + 3]
            m += 4
        while m < s:
            p0 += buf[m]
            m += 1
        e2 += (p0 + p1) + (p2 + p3)
    return e1, e2


@njit(nogil=True, parallel=True, cache=True, error_model="numpy")
def _energy_sums_numba(y, x):  # pragma: no cover - compiled
    n = x.shape[0]
    e1 = np.empty(n)
    e2 = np.empty(n)
    for i in prange(n):
        e1[i], e2[i] = _energy_sums_one(y[i], x[i])
    return e1, e2


def _energy_sums_numpy(y, x):
    n, t, s = x.shape
    e1 = np.sqrt(np.square(x - y[:, :, None]).sum(axis=1)).sum(axis=1)
    e2 = np.empty(n)
    iu = np.triu_indices(s, 1)
    block = max(1, _BLOCK_FLOATS // (s * s * t))
    for lo in range(0, n, block):
        xb = x[lo : lo + block]
        d = xb[:, :, :, None] - xb[:, :, None, :]  # (b, t, S, S)
        dist = np.sqrt(np.einsum("btkl,btkl->bkl", d, d))
        e2[lo : lo + block] = dist[:, iu[0], iu[1]].sum(axis=1)
    return e1, e2


def energy_score_points(y, samples, *, fair=False, use_numba=None):
    r"""Energy score of each point's ensemble of t-vectors.

    Parameters
    ----------
    y : array_like, shape (n, t)
        Observations.
    samples : array_like, shape (n, t, S)
        Ensemble members (S >= 2, finite).
    fair : bool, default False
        The fair estimator (the S(S - 1) distinct pairs of members) instead of the
        empirical distribution's (S^2 pairs).
    use_numba : bool, optional
        The numba kernel (default where installed) or the numpy one.

    Returns
    -------
    ndarray, shape (n,)

    Notes
    -----
    .. math::

       \mathrm{ES} = \frac1S \sum_k \lVert x_k - y \rVert
           - \frac{1}{2 S^2} \sum_{k, l} \lVert x_k - x_l \rVert, \qquad
       \mathrm{ES}_\mathrm{fair} = \frac1S \sum_k \lVert x_k - y \rVert
           - \frac{1}{2 S (S - 1)} \sum_{k, l} \lVert x_k - x_l \rVert

    (Gneiting & Raftery 2007, eq. 22; scoringrules' ``es_ensemble`` with
    ``estimator="nrg"`` and ``"fair"``). O(S^2 t) per point. With t = 1 it is the CRPS of
    the ensemble.

    Examples
    --------
    >>> y = np.array([[0.5]]); x = np.array([[[0.0, 1.0, 2.0]]])
    >>> round(float(energy_score_points(y, x)[0]), 12)  # the ensemble CRPS
    0.388888888889
    """
    y, x = check_joint_ensemble(y, samples)
    s = x.shape[2]
    if _use_numba(use_numba):
        e1, e2 = _energy_sums_numba(y, x)
    else:
        e1, e2 = _energy_sums_numpy(y, x)
    pairs = s * (s - 1.0) if fair else float(s * s)
    return e1 / s - e2 / pairs


# ------------------------------------------------------------------------------------
# variogram score
# ------------------------------------------------------------------------------------


@njit(nogil=True, cache=True, error_model="numpy")
def _rho(d, p):  # pragma: no cover - compiled
    d = abs(d)
    if p == 1.0:
        return d
    if p == 0.5:
        return np.sqrt(d)
    if p == 2.0:
        return d * d
    return d**p


@njit(nogil=True, cache=True, error_model="numpy")
def _variogram_one(yi, xi, w, p, fair):  # pragma: no cover - compiled
    t, s = xi.shape
    out = 0.0
    for a in range(t):
        for b in range(a + 1, t):
            wab = w[a, b] + w[b, a]
            if wab == 0.0:
                continue
            ro = _rho(yi[a] - yi[b], p)
            mean = 0.0
            for k in range(s):
                mean += _rho(xi[a, k] - xi[b, k], p)
            mean /= s
            term = (ro - mean) ** 2
            if fair:
                ss = 0.0
                for k in range(s):
                    d = _rho(xi[a, k] - xi[b, k], p) - mean
                    ss += d * d
                term -= ss / (s * (s - 1.0))
            out += wab * term
    return out


@njit(nogil=True, parallel=True, cache=True, error_model="numpy")
def _variogram_numba(y, x, w, p, fair):  # pragma: no cover - compiled
    n = x.shape[0]
    out = np.empty(n)
    for i in prange(n):
        out[i] = _variogram_one(y[i], x[i], w, p, fair)
    return out


def _rho_numpy(d, p):
    d = np.abs(d)
    if p == 1.0:
        return d
    if p == 0.5:
        return np.sqrt(d)
    if p == 2.0:
        return d * d
    return d**p


def _variogram_numpy(y, x, w, p, fair):
    n, t, s = x.shape
    out = np.zeros(n)
    for a in range(t):
        for b in range(a + 1, t):
            wab = w[a, b] + w[b, a]
            if wab == 0.0:
                continue
            ro = _rho_numpy(y[:, a] - y[:, b], p)
            r = _rho_numpy(x[:, a, :] - x[:, b, :], p)
            mean = r.sum(axis=1) / s
            term = (ro - mean) ** 2
            if fair:
                term = term - np.square(r - mean[:, None]).sum(axis=1) / (s * (s - 1.0))
            out += wab * term
    return out


def variogram_score_points(y, samples, *, p=0.5, weights=None, fair=False, use_numba=None):
    r"""Variogram score of order ``p`` of each point's ensemble of t-vectors.

    Parameters
    ----------
    y : array_like, shape (n, t)
        Observations.
    samples : array_like, shape (n, t, S)
        Ensemble members (S >= 2, finite).
    p : float, default 0.5
        Order of the variogram (> 0).
    weights : array_like, shape (t, t), optional
        Weights ``w_ab >= 0`` of the pairs of targets (default all 1).
    fair : bool, default False
        The fair estimator (the distinct pairs of members) instead of the plain one.
    use_numba : bool, optional
        The numba kernel (default where installed) or the numpy one.

    Returns
    -------
    ndarray, shape (n,)

    Notes
    -----
    With :math:`r_{k,ab} = |x_{k,a} - x_{k,b}|^p`, :math:`\bar r_{ab}` their mean over the
    members and :math:`r_{ab} = |y_a - y_b|^p`,

    .. math::

       \mathrm{VS}_p = \sum_{a, b} w_{ab} (r_{ab} - \bar r_{ab})^2, \qquad
       \mathrm{VS}_{p,\mathrm{fair}} = \frac1S \sum_k \sum_{a,b} w_{ab}
           (r_{k,ab} - r_{ab})^2 - \frac{1}{2 S (S-1)} \sum_{k \ne l} \sum_{a, b} w_{ab}
           (r_{k,ab} - r_{l,ab})^2

    (Scheuerer & Hamill 2015; scoringrules' ``vs_ensemble`` with ``estimator="nrg"`` and
    ``"fair"``; the sum over a, b runs over all ordered pairs). The fair form is computed
    as :math:`\mathrm{VS}_p - \sum_{a,b} w_{ab} s^2_{ab} / S`, :math:`s^2_{ab}` the
    variance (ddof 1) of :math:`r_{k,ab}` over the members: O(S t^2) per point, not
    O(S^2 t^2).

    Examples
    --------
    >>> y = np.array([[0.0, 1.0]]); x = np.array([[[0.0, 0.0], [0.0, 4.0]]])
    >>> variogram_score_points(y, x, p=1.0).tolist()  # 2 * (1 - 2)^2
    [2.0]
    """
    y, x = check_joint_ensemble(y, samples)
    p = float(p)
    if not (np.isfinite(p) and p > 0):
        raise ValueError(f"p: the order of the variogram must be > 0, got {p}")
    w = check_weights(weights, y.shape[1])
    if _use_numba(use_numba):
        return _variogram_numba(y, x, w, p, bool(fair))
    return _variogram_numpy(y, x, w, p, bool(fair))


# ------------------------------------------------------------------------------------
# Gaussian forecasts
# ------------------------------------------------------------------------------------


def dawid_sebastiani_points(y, mean, cov):
    r"""Dawid-Sebastiani score of each point's mean and covariance.

    Parameters
    ----------
    y, mean : array_like, shape (n, t)
    cov : array_like, shape (n, t, t)
        Symmetric positive definite covariances.

    Returns
    -------
    ndarray, shape (n,)

    Notes
    -----
    :math:`\mathrm{DSS} = \log\det\Sigma + (y - \mu)^\top \Sigma^{-1} (y - \mu)`
    (Dawid & Sebastiani 1999), the convention of scoringrules' ``dssmv_ensemble`` and
    ``dssuv_ensemble`` (which take mu and Sigma from an ensemble): twice the Gaussian
    negative log-likelihood less :math:`t \log 2\pi`. From the Cholesky factor, O(t^3).

    Examples
    --------
    >>> dawid_sebastiani_points([[1.0]], [[0.0]], [[[4.0]]]).round(6).tolist()
    [1.636294]
    """
    y, mu, c = check_gaussian(y, mean, cov)
    low = np.linalg.cholesky(c)
    d = (y - mu)[:, :, None]
    # the forward substitution, batched: L v = d
    t = y.shape[1]
    v = np.empty_like(d)
    for a in range(t):
        v[:, a, 0] = (d[:, a, 0] - np.einsum("ij,ij->i", low[:, a, :a], v[:, :a, 0])) / low[:, a, a]
    logdet = 2.0 * np.log(np.diagonal(low, axis1=1, axis2=2)).sum(axis=1)
    return logdet + np.square(v[:, :, 0]).sum(axis=1)


def energy_score_normal_points(y, mean, cov, *, n_mc, rng):
    r"""Monte Carlo energy score of each point's normal forecast N(mean, cov).

    Parameters
    ----------
    y, mean : array_like, shape (n, t)
    cov : array_like, shape (n, t, t)
        Symmetric positive definite covariances.
    n_mc : int
        Draws per point (>= 1).
    rng : numpy.random.Generator
        The stream: ``rng.standard_normal((n, n_mc, t))``, drawn by blocks of points in
        order (the same numbers as one draw).

    Returns
    -------
    score, mc_se : ndarray, shape (n,)
        The estimate of each point and its Monte Carlo standard error.

    Notes
    -----
    With :math:`X = \mu + L Z` (L the Cholesky factor of Sigma),
    :math:`X - X' \sim N(0, 2\Sigma)`, so :math:`E\lVert X - X'\rVert = \sqrt2\,
    E\lVert L Z\rVert` and

    .. math::

       \widehat{\mathrm{ES}} = \frac1K \sum_k \Big(\lVert \mu + L z_k - y \rVert
           - \tfrac{1}{\sqrt 2} \lVert L z_k \rVert\Big),

    unbiased for the energy score of N(mu, Sigma) (Gneiting & Raftery 2007, eq. 22), its
    standard error the sd of the K terms over sqrt(K); the two terms share the draws, which
    cancels much of their noise. O(K t^2) per point. No closed form exists for t > 1; for
    t = 1 it estimates the CRPS of the normal.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> es, se = energy_score_normal_points([[0.0]], [[0.0]], [[[1.0]]], n_mc=100_000, rng=rng)
    >>> round(float(es[0]), 2), bool(se[0] < 0.002)  # the CRPS of N(0, 1) at 0: 0.2337
    (0.23, True)
    """
    y, mu, c = check_gaussian(y, mean, cov)
    low = np.linalg.cholesky(c)
    n, t = y.shape
    k = int(n_mc)
    out = np.empty(n)
    se = np.empty(n)
    block = max(1, _BLOCK_FLOATS // (k * t))
    for lo in range(0, n, block):
        hi = min(n, lo + block)
        z = rng.standard_normal((hi - lo, k, t))
        lz = np.einsum("bij,bkj->bki", low[lo:hi], z)  # (b, K, t)
        spread = np.sqrt(np.square(lz).sum(axis=2))
        miss = np.sqrt(np.square(lz + (mu - y)[lo:hi, None, :]).sum(axis=2))
        terms = miss - spread / np.sqrt(2.0)
        out[lo:hi] = terms.mean(axis=1)
        se[lo:hi] = terms.std(axis=1, ddof=1) / np.sqrt(k) if k > 1 else np.nan
    return out, se
