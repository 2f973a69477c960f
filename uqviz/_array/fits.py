"""Kernels fitting distribution shapes (sample axis last; no xarray).

Positive samples: ``X / scale ~ G(nu)`` by minimum KS distance (as
``fitdistrplus::mgedist(gof="KS")``, Pernot (2024b), sect. III), with
``"invgamma"``: ``X / scale ~ InvGamma(nu, nu)`` (Pernot (2024b), eq. 17) and
``"f1"``: ``X / scale ~ F(1, nu)`` (eq. 19). z-scores: scaled-and-shifted
Student t by maximum likelihood (Pernot (2024c), sect. III A). KS distances
are exact, ties included.
"""

from __future__ import annotations

import warnings

import numpy as np

from uqviz._array.lazy import lazy_module

optimize = lazy_module("scipy.optimize")
special = lazy_module("scipy.special")
stats = lazy_module("scipy.stats")

__all__ = [
    "MODELS",
    "model_cdf",
    "ks_distance_sorted",
    "ks_distance",
    "fit_min_ks",
    "profile_ks",
    "fit_student_t",
]

#: Bounds on ln(nu) explored by the optimiser: nu in [1e-3, 1e6].
LOG_NU_BOUNDS = (np.log(1e-3), np.log(1e6))


def _invgamma_cdf(x, nu, scale):
    x = np.asarray(x, dtype=float)
    with np.errstate(divide="ignore"):
        arg = nu * scale / x  # x = 0 -> inf -> cdf 0
    return special.gammaincc(nu, arg)


def _f1_cdf(x, nu, scale):
    y = np.asarray(x, dtype=float) / scale
    return special.betainc(0.5, 0.5 * nu, y / (y + nu))


#: name -> (cdf(x, nu, scale), description)
MODELS = {
    "invgamma": (_invgamma_cdf, "X/scale ~ InvGamma(nu, nu)  [X ~ invgamma(a=nu, scale=nu*scale)]"),
    "f1": (_f1_cdf, "X/scale ~ F(1, nu)"),
}


def _model(name):
    try:
        return MODELS[name]
    except KeyError:
        raise ValueError(f"unknown model {name!r}; known: {', '.join(MODELS)}") from None


def model_cdf(model, x, nu, scale):
    """Cdf of ``model`` at ``x`` for parameters ``nu`` and ``scale`` (broadcast).

    Examples
    --------
    >>> from scipy import stats
    >>> x = np.array([0.5, 1.0, 3.0])
    >>> np.allclose(model_cdf("invgamma", x, 4.0, 2.0), stats.invgamma.cdf(x, 4.0, scale=8.0))
    True
    """
    return _model(model)[0](x, nu, scale)


def ks_distance_sorted(cdf_sorted):
    """Exact KS distance ``max_i max(F_i - (i-1)/n, i/n - F_i)``, F at a sorted sample.

    Examples
    --------
    >>> ks_distance_sorted([0.1, 0.5, 0.9]).round(4)
    np.float64(0.2333)
    """
    c = np.asarray(cdf_sorted, dtype=float)
    n = c.shape[-1]
    i = np.arange(1, n + 1)
    d_plus = np.max(i / n - c, axis=-1)
    d_minus = np.max(c - (i - 1) / n, axis=-1)
    return np.maximum(d_plus, d_minus)


def ks_distance(model, x, nu, scale, *, is_sorted=False):
    """Exact KS distance between the sample ``x`` (last axis) and ``model(nu, scale)`` (broadcast).

    Examples
    --------
    >>> from scipy import stats
    >>> x = stats.f.rvs(1, 6, size=500, random_state=0) * 3.0
    >>> d = ks_distance("f1", x, 6.0, 3.0)
    >>> bool(np.isclose(d, stats.kstest(x, stats.f(1, 6.0, scale=3.0).cdf).statistic))
    True
    """
    x = np.asarray(x, dtype=float)
    if not is_sorted:
        x = np.sort(x, axis=-1)
    nu = np.asarray(nu, dtype=float)
    scale = np.asarray(scale, dtype=float)
    nu = nu[..., None] if nu.ndim else nu
    scale = scale[..., None] if scale.ndim else scale
    return ks_distance_sorted(model_cdf(model, x, nu, scale))


# --------------------------------------------------------------------------
# minimum-KS fit
# --------------------------------------------------------------------------
def _median_scale(model, x_sorted, nu):
    """Scale that puts the model median at the sample median, for each nu."""
    med = np.median(x_sorted)
    if model == "invgamma":
        # X/scale ~ InvGamma(nu, nu) = nu / Gamma(nu, 1)
        m0 = nu / special.gammainccinv(nu, 0.5)
    else:
        m0 = stats.f.ppf(0.5, 1.0, nu)
    return med / m0


def _ecdf_steps(x_sorted):
    """Distinct values with the ECDF just below and at each (exact KS with ties)."""
    n = x_sorted.size
    keep = np.ones(n, dtype=bool)
    keep[:-1] = x_sorted[1:] != x_sorted[:-1]  # last of each run of ties
    hi = (np.flatnonzero(keep) + 1) / n
    lo = np.concatenate([[0.0], hi[:-1]])
    return x_sorted[keep], lo, hi


def _ks_steps(c, lo, hi):
    """``max(max(c - lo), max(hi - c))`` along the last axis."""
    return np.maximum(np.max(c - lo, axis=-1), np.max(hi - c, axis=-1))


def _subset(k, m):
    """Indices of at most ``m`` points spread over ``range(k)`` (ends included)."""
    if k <= m:
        return np.arange(k)
    return np.unique(np.linspace(0, k - 1, m).round().astype(int))


def fit_min_ks(
    x, model, *, n_grid=25, n_starts=3, n_coarse=512, xatol=1e-5, fatol=1e-9, maxiter=2000
):
    """Fit ``X/scale ~ model(nu)`` to a 1-D sample by minimum KS distance.

    Grid search, then Nelder-Mead, then an exact refinement on an active set of
    ECDF steps. ``nu`` stays in [1e-3, 1e6] (:data:`LOG_NU_BOUNDS`).

    Parameters
    ----------
    x : array_like, shape (n,)
        Finite sample, >= 0.
    model : {"invgamma", "f1"}
    n_grid, n_starts, n_coarse : int
        Grid size in ``nu``, Nelder-Mead starts, ECDF steps of the coarse stage.
    xatol, fatol, maxiter
        Nelder-Mead settings of the refinement.

    Returns
    -------
    dict
        ``nu``, ``scale``, ``ks_distance``, ``n_evaluations``.

    Examples
    --------
    >>> from scipy import stats
    >>> x = stats.invgamma.rvs(3.0, scale=3.0 * 0.5, size=4000, random_state=1)
    >>> fit = fit_min_ks(x, "invgamma")
    >>> round(fit["nu"], 1), round(fit["scale"], 2)
    (3.0, 0.5)
    """
    x = np.sort(np.asarray(x, dtype=float).ravel())
    if x.size < 2:
        raise ValueError(f"need at least 2 values to fit a distribution, got {x.size}")
    if not np.all(np.isfinite(x)) or x[0] < 0:
        n_bad = int(np.sum(~np.isfinite(x) | (x < 0)))
        raise ValueError(f"the sample must be finite and >= 0: {n_bad} values are not")
    if x[-1] <= 0:
        raise ValueError("the sample is all zeros")
    cdf = _model(model)[0]
    vals, lo, hi = _ecdf_steps(x)
    n_eval = 0
    lnu_lo, lnu_hi = LOG_NU_BOUNDS

    def make_objective(idx):
        v, a, b = vals[idx], lo[idx], hi[idx]

        def objective(p):
            nonlocal n_eval
            n_eval += 1
            if not (lnu_lo <= p[0] <= lnu_hi) or not np.isfinite(p[1]):
                return 2.0  # outside the explored range: worse than any distance
            with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
                d = _ks_steps(cdf(v, np.exp(p[0]), np.exp(p[1])), a, b)
            return float(d) if np.isfinite(d) else 2.0

        return objective

    def simplex(p, step):
        return np.array([p, p + [step, 0.0], p + [0.0, step]])

    # 1. vectorised grid on <= 512 ECDF steps ---------------------------------
    idx = _subset(vals.size, 512)
    nus = np.exp(np.linspace(np.log(0.1), np.log(1000.0), n_grid))
    s0 = _median_scale(model, x, nus)
    mult = np.exp(np.linspace(-1.5, 1.5, 15))
    grid = np.column_stack(
        [np.repeat(np.log(nus), mult.size), np.log((s0[:, None] * mult[None, :]).ravel())]
    )
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        c = cdf(vals[idx], np.exp(grid[:, :1]), np.exp(grid[:, 1:]))
    d_grid = _ks_steps(c, lo[idx], hi[idx])
    d_grid = np.where(np.isfinite(d_grid), d_grid, np.inf)
    n_eval += len(grid)

    # 2. Nelder-Mead on <= n_coarse ECDF steps from the best grid points ------
    objective = make_objective(_subset(vals.size, n_coarse))
    opts = {"xatol": 1e-3, "fatol": 1e-6, "maxiter": 1000}
    best = None
    for j in np.argsort(d_grid)[:n_starts]:
        res = optimize.minimize(
            objective,
            grid[j],
            method="Nelder-Mead",
            options={**opts, "initial_simplex": simplex(grid[j], 0.2)},
        )
        if best is None or res.fun < best.fun:
            best = res

    # 3. exact refinement on an active set of ECDF steps (cutting planes) -----
    def deviations(p):
        nonlocal n_eval
        n_eval += 1
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            c = cdf(vals, np.exp(p[0]), np.exp(p[1]))
        return np.maximum(c - lo, hi - c)

    k = vals.size
    opts = {"xatol": xatol, "fatol": fatol, "maxiter": maxiter}
    p = best.x
    dev = deviations(p)
    active = np.zeros(k, dtype=bool)
    active[_subset(k, 256)] = True
    active[np.argsort(dev)[-256:]] = True
    steps = (0.05, 0.01)
    for _ in range(k // 256 + 2):
        objective = make_objective(np.flatnonzero(active))
        d = objective(p)
        for step in steps:  # Nelder-Mead, restarted once (it can stall on kinks)
            res = optimize.minimize(
                objective,
                p,
                method="Nelder-Mead",
                options={**opts, "initial_simplex": simplex(p, step)},
            )
            if res.fun <= d:
                p, d = res.x, float(res.fun)
        dev = deviations(p)
        if not np.all(np.isfinite(dev)) or dev.max() <= d + 1e-12:
            break
        violators = np.flatnonzero((dev > d) & ~active)
        active[violators[np.argsort(dev[violators])[-256:]]] = True
        steps = (0.01,)
    nu, scale = float(np.exp(p[0])), float(np.exp(p[1]))
    d = float(_ks_steps(cdf(vals, nu, scale), lo, hi))
    return {"nu": nu, "scale": scale, "ks_distance": d, "n_evaluations": n_eval}


def profile_ks(x, model, nu):
    """Best KS distance over the scale for fixed ``nu``: dict ``nu``, ``scale``, ``ks_distance``.

    Examples
    --------
    >>> from scipy import stats
    >>> x = stats.f.rvs(1, 5, size=3000, random_state=3) * 2.0
    >>> best = fit_min_ks(x, "f1")
    >>> profile_ks(x, "f1", best["nu"])["ks_distance"] <= best["ks_distance"] + 1e-7
    True
    """
    x = np.sort(np.asarray(x, dtype=float).ravel())
    cdf = _model(model)[0]
    vals, lo, hi = _ecdf_steps(x)
    nu = float(nu)

    def objective(ls):
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            d = _ks_steps(cdf(vals, nu, np.exp(ls[0])), lo, hi)
        return float(d) if np.isfinite(d) else 2.0

    ls0 = float(np.log(_median_scale(model, x, nu)))
    grid = ls0 + np.linspace(-1.5, 1.5, 31)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        dg = _ks_steps(cdf(vals, nu, np.exp(grid)[:, None]), lo, hi)
    start = grid[np.nanargmin(dg)]
    res = optimize.minimize_scalar(
        lambda v: objective([v]),
        method="bounded",
        bounds=(start - 0.1, start + 0.1),
        options={"xatol": 1e-9, "maxiter": 200},
    )
    if not res.fun <= objective([start]):
        res.x = start
    scale = float(np.exp(res.x))
    return {"nu": nu, "scale": scale, "ks_distance": float(_ks_steps(cdf(vals, nu, scale), lo, hi))}


# --------------------------------------------------------------------------
# Student t by maximum likelihood
# --------------------------------------------------------------------------
def fit_student_t(z):
    """Fit ``(z - loc)/scale ~ t(df)`` by maximum likelihood.

    Returns
    -------
    dict
        ``df``, ``loc``, ``scale``, ``loglik``, ``ks_distance``.

    Examples
    --------
    >>> from scipy import stats
    >>> z = stats.t.rvs(4.0, loc=0.1, scale=0.8, size=5000, random_state=2)
    >>> fit = fit_student_t(z)
    >>> round(fit["df"]), round(fit["loc"], 1), round(fit["scale"], 1)
    (4, 0.1, 0.8)
    """
    z = np.asarray(z, dtype=float).ravel()
    if z.size < 3:
        raise ValueError(f"need at least 3 values to fit a Student t, got {z.size}")
    if not np.all(np.isfinite(z)):
        raise ValueError(f"z: {int(np.sum(~np.isfinite(z)))} values are NaN or inf")
    med = float(np.median(z))
    mad = float(np.median(np.abs(z - med))) * 1.4826 or float(np.std(z)) or 1.0

    def nll(q):
        if not (-10.0 < q[0] < 15.0):
            return np.inf
        return -float(np.sum(stats.t.logpdf(z, np.exp(q[0]), loc=q[1], scale=np.exp(q[2]))))

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        df0, loc0, scale0 = stats.t.fit(z, 5.0, loc=med, scale=mad)
        q0 = np.array([np.log(df0), loc0, np.log(scale0)])
        res = optimize.minimize(
            nll, q0, method="Nelder-Mead", options={"xatol": 1e-8, "fatol": 1e-10, "maxiter": 5000}
        )
    q = res.x if res.fun <= nll(q0) else q0
    df, loc, scale = float(np.exp(q[0])), float(q[1]), float(np.exp(q[2]))
    d = float(ks_distance_sorted(stats.t.cdf(np.sort(z), df, loc=loc, scale=scale)))
    return {"df": df, "loc": loc, "scale": scale, "loglik": -nll(q), "ks_distance": d}
