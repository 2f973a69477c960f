"""Numpy/scipy kernels for fitting distribution shapes (no xarray).

Two-parameter families ``X / scale ~ G(nu)`` are fitted to a positive sample
by *minimum Kolmogorov-Smirnov distance* (maximum goodness-of-fit estimation,
as ``fitdistrplus::mgedist(gof="KS")`` used by 004 sect. III), and the
z-scores by a scaled-and-shifted Student t by maximum likelihood (002 sect.
III A). Conventions as in :mod:`uqviz._array.stats`: the sample axis is the
**last** axis and the cdf/KS kernels are vectorised over leading axes
(parameter sets, datasets).

Models (``scale`` multiplies the standardised variable in every model)
---------------------------------------------------------------------
``"invgamma"``
    ``X / scale ~ InvGamma(nu, nu)`` (shape ``nu``, scale ``nu``; 004 eq. 17
    with ``scale = sigma^2``), i.e. ``X ~ InvGamma(a=nu, scale=nu*scale)``:
    ``P(X <= x) = Q(nu, nu*scale/x)`` with ``Q`` the regularised upper
    incomplete gamma function.
``"f1"``
    ``X / scale ~ F(1, nu)`` (004 eq. 19): ``P(X <= x) = I_{y/(y+nu)}(1/2, nu/2)``
    with ``y = x/scale`` and ``I`` the regularised incomplete beta function.

The KS distance is computed exactly: for a sorted sample ``x_(1) <= ... <=
x_(n)`` and a continuous cdf ``F``, ``D = max_i max(F(x_(i)) - (i-1)/n,
i/n - F(x_(i)))``, which is the supremum over both sides of every step of the
empirical cdf. With tied values it stays exact: inside a run of ties the
candidate step heights lie between the two extreme ones, and ``|F - c|`` is
largest at an end of that range.
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy import optimize, special, stats

__all__ = [
    "MODELS",
    "model_cdf",
    "ks_distance_sorted",
    "ks_distance",
    "fit_min_ks",
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
    >>> import numpy as np
    >>> from scipy import stats
    >>> x = np.array([0.5, 1.0, 3.0])
    >>> np.allclose(model_cdf("invgamma", x, 4.0, 2.0), stats.invgamma.cdf(x, 4.0, scale=8.0))
    True
    >>> np.allclose(model_cdf("f1", x, 5.0, 2.0), stats.f.cdf(x / 2.0, 1, 5.0))
    True
    """
    return _model(model)[0](x, nu, scale)


def ks_distance_sorted(cdf_sorted):
    """Exact KS distance from the model cdf evaluated at a sorted sample.

    Parameters
    ----------
    cdf_sorted : array_like, shape (..., n)
        ``F(x_(i))`` for the sample sorted ascending along the last axis.

    Returns
    -------
    numpy.ndarray, shape (...)
        ``max_i max(F(x_(i)) - (i-1)/n, i/n - F(x_(i)))``.

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
    """Exact KS distance between the sample ``x`` (last axis) and ``model(nu, scale)``.

    ``nu`` and ``scale`` broadcast against ``x.shape[:-1]``; pass arrays of
    shape ``(k, 1)`` to evaluate ``k`` parameter sets on one sample at once.

    Examples
    --------
    >>> import numpy as np
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


def fit_min_ks(x, model, *, n_grid=25, n_starts=3, xatol=1e-7, fatol=1e-12, maxiter=4000):
    """Fit ``X/scale ~ model(nu)`` to a 1-D positive sample by minimum KS distance.

    The KS distance is minimised over ``(ln nu, ln scale)``: a vectorised grid
    (``n_grid`` values of ``nu`` log-spaced in [0.1, 1000], each with 15
    scales around the median-matching scale) locates the basin, then
    Nelder-Mead is run from the ``n_starts`` best grid points (and polished
    once more from its best result); the lowest distance wins. The KS
    surface is piecewise smooth and flat near its minimum, so ``nu`` is only
    determined to the extent that the distance discriminates it.

    Parameters
    ----------
    x : array_like, shape (n,)
        Positive sample (zeros are allowed; the cdfs handle them).
    model : {"invgamma", "f1"}
    n_grid, n_starts : int
        Grid size in ``nu`` and number of Nelder-Mead starts.
    xatol, fatol, maxiter
        Nelder-Mead tolerances (on the log-parameters and the distance).

    Returns
    -------
    dict
        ``nu``, ``scale``, ``ks_distance`` (at the optimum, exact),
        ``n_evaluations``.

    Examples
    --------
    >>> import numpy as np
    >>> from scipy import stats
    >>> x = stats.invgamma.rvs(3.0, scale=3.0 * 0.5, size=4000, random_state=1)
    >>> fit = fit_min_ks(x, "invgamma")
    >>> round(fit["nu"], 1), round(fit["scale"], 2)  # truth: nu=3, scale=0.5
    (3.0, 0.5)
    """
    x = np.sort(np.asarray(x, dtype=float).ravel())
    if x.size < 2:
        raise ValueError(f"need at least 2 values to fit a distribution, got {x.size}")
    if not np.all(np.isfinite(x)) or x[0] < 0:
        raise ValueError("the sample must be finite and >= 0")
    if x[-1] <= 0:
        raise ValueError("the sample is all zeros")
    cdf = _model(model)[0]
    n_eval = 0

    # 1. vectorised grid ------------------------------------------------------
    nus = np.exp(np.linspace(np.log(0.1), np.log(1000.0), n_grid))
    s0 = _median_scale(model, x, nus)
    mult = np.exp(np.linspace(-1.5, 1.5, 15))
    grid_nu = np.repeat(nus, mult.size)
    grid_scale = (s0[:, None] * mult[None, :]).ravel()
    with np.errstate(over="ignore", invalid="ignore"):
        d_grid = ks_distance_sorted(cdf(x, grid_nu[:, None], grid_scale[:, None]))
    d_grid = np.where(np.isfinite(d_grid), d_grid, np.inf)
    n_eval += d_grid.size

    # 2. Nelder-Mead on (ln nu, ln scale) -------------------------------------
    lo, hi = LOG_NU_BOUNDS

    def objective(p):
        nonlocal n_eval
        n_eval += 1
        ln_nu = p[0]
        if not (lo <= ln_nu <= hi) or not np.isfinite(p[1]):
            return 2.0  # outside the explored range: worse than any distance
        with np.errstate(over="ignore", invalid="ignore"):
            d = ks_distance_sorted(cdf(x, np.exp(ln_nu), np.exp(p[1])))
        return float(d) if np.isfinite(d) else 2.0

    opts = {"xatol": xatol, "fatol": fatol, "maxiter": maxiter, "maxfev": 2 * maxiter}
    best = None
    for j in np.argsort(d_grid)[:n_starts]:
        p0 = np.array([np.log(grid_nu[j]), np.log(grid_scale[j])])
        res = optimize.minimize(objective, p0, method="Nelder-Mead", options=opts)
        if best is None or res.fun < best.fun:
            best = res
    # restart from the optimum (Nelder-Mead can stall on a kinked surface)
    res = optimize.minimize(objective, best.x, method="Nelder-Mead", options=opts)
    if res.fun <= best.fun:
        best = res
    nu, scale = float(np.exp(best.x[0])), float(np.exp(best.x[1]))
    d = float(ks_distance_sorted(cdf(x, nu, scale)))
    return {"nu": nu, "scale": scale, "ks_distance": d, "n_evaluations": n_eval}


# --------------------------------------------------------------------------
# Student t by maximum likelihood
# --------------------------------------------------------------------------
def fit_student_t(z):
    """Fit ``z`` by a scaled-and-shifted Student t, ``(z - loc)/scale ~ t(df)``, by ML.

    Uses :meth:`scipy.stats.t.fit` (Nelder-Mead on the log-likelihood),
    started from ``df=5``, the median and a robust scale, then polishes with
    a second run from the first optimum.

    Returns
    -------
    dict
        ``df``, ``loc``, ``scale``, ``loglik`` (total log-likelihood) and
        ``ks_distance`` (exact KS distance of the fitted t).

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
    med = float(np.median(z))
    mad = float(np.median(np.abs(z - med))) * 1.4826 or float(np.std(z)) or 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        p = stats.t.fit(z, 5.0, loc=med, scale=mad)
        p2 = stats.t.fit(z, *p[:1], loc=p[1], scale=p[2])
    ll = lambda q: float(np.sum(stats.t.logpdf(z, q[0], loc=q[1], scale=q[2])))  # noqa: E731
    if ll(p2) >= ll(p):
        p = p2
    df, loc, scale = (float(v) for v in p)
    d = float(ks_distance_sorted(stats.t.cdf(np.sort(z), df, loc=loc, scale=scale)))
    return {"df": df, "loc": loc, "scale": scale, "loglik": ll(p), "ks_distance": d}
