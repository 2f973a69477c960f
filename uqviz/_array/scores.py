"""Interval coverage, calibration curves and proper scores (numpy kernels, no xarray).

All functions take z-scores ``z = E / uE`` (and ``u = uE`` where a score has units) as
1-D float arrays. Scores are negatively oriented (smaller is better) and in the units of
E; the check and interval scores are averaged over their probability levels, as in
uncertainty-toolbox 0.1.1 (Chung et al. 2021).
"""

from __future__ import annotations

import numpy as np

from uqviz._array.lazy import lazy_module

special = lazy_module("scipy.special")

__all__ = [
    "count_within",
    "count_below",
    "trapezoid_area",
    "miscalibration_area",
    "nll_points",
    "crps_points",
    "check_interval_points",
    "CLOSED_FORM_KINDS",
]

#: generative kinds with closed-form NLL and CRPS
CLOSED_FORM_KINDS = ("normal", "student_t", "laplace")
_LN_2PI = float(np.log(2.0 * np.pi))


def count_within(abs_z_sorted, q):
    """Number of points with ``|z| <= q`` for each threshold ``q``.

    Parameters
    ----------
    abs_z_sorted : ndarray, shape (M,)
        ``|z|`` sorted ascending.
    q : array_like
        Thresholds (``inf`` counts every point).

    Returns
    -------
    ndarray of int

    Examples
    --------
    >>> count_within(np.array([0.5, 1.0, 2.0]), [0.0, 1.0, np.inf]).tolist()
    [0, 2, 3]
    """
    return np.searchsorted(abs_z_sorted, np.asarray(q, dtype=float), side="right")


def count_below(z_sorted, q):
    """Number of points with ``z <= q`` for each threshold ``q`` (``z`` sorted ascending).

    Examples
    --------
    >>> count_below(np.array([-1.0, 0.0, 2.0]), [-np.inf, 0.0]).tolist()
    [0, 2]
    """
    return np.searchsorted(z_sorted, np.asarray(q, dtype=float), side="right")


def trapezoid_area(xl, al, bl, xr, ar, br):
    """Absolute area between two piecewise-linear curves a and b on [xl, xr].

    Where the curves cross inside a segment, the two triangles are added (an
    hourglass), as uncertainty-toolbox 0.1.1's ``trapezoid_area(absolute=True)``.

    Examples
    --------
    >>> float(trapezoid_area(0.0, 0.0, 1.0, 1.0, 1.0, 0.0))  # crossing at 0.5
    0.5
    """
    xl, al, bl, xr, ar, br = (np.asarray(v, dtype=float) for v in (xl, al, bl, xr, ar, br))
    dl, dr = bl - al, br - ar
    cross = (dl * dr < 0) & ~((dl == 0) & (dr == 0))
    trapezoid = np.abs((xr - xl) * 0.5 * (dl + dr))
    with np.errstate(divide="ignore", invalid="ignore"):
        # intersection of the lines (xl, bl)-(xr, br) and (xl, al)-(xr, ar)
        x1, y1, x2, y2, x3, y3, x4, y4 = xl, bl, xr, br, xl, al, xr, ar
        den = (x1 - x2) * (y3 - y4) - (y1 - y2) * (x3 - x4)
        x_int = ((x1 * y2 - y1 * x2) * (x3 - x4) - (x1 - x2) * (x3 * y4 - y3 * x4)) / den
        hourglass = np.abs(0.5 * dl * (x_int - xl)) + np.abs(0.5 * dr * (xr - x_int))
    return np.where(cross, np.nan_to_num(hourglass), trapezoid)


def miscalibration_area(expected, observed):
    """Area between the calibration curve and the diagonal (trapezoids, crossings split).

    Examples
    --------
    >>> p = np.linspace(0.0, 1.0, 11)
    >>> float(miscalibration_area(p, p))
    0.0
    >>> round(float(miscalibration_area(p, np.minimum(1.0, 2 * p))), 12)
    0.25
    """
    x = np.asarray(expected, dtype=float)
    y = np.asarray(observed, dtype=float)
    return float(np.sum(trapezoid_area(x[:-1], x[:-1], y[:-1], x[1:], x[1:], y[1:])))


def _t_scale(nu):
    return np.sqrt((nu - 2.0) / nu)


def nll_points(e, u, kind="normal", nu=None):
    """Negative log-likelihood of each error under ``E ~ uE * D`` (closed forms).

    Parameters
    ----------
    e, u : ndarray, shape (M,)
    kind : {"normal", "student_t", "laplace"}
    nu : float, optional
        Degrees of freedom of the unit-variance Student-t D.

    Returns
    -------
    ndarray, shape (M,)

    Examples
    --------
    >>> round(float(nll_points(np.array([0.0]), np.array([1.0]))[0]), 6)
    0.918939
    """
    if kind == "normal":
        z = e / u
        return 0.5 * _LN_2PI + np.log(u) + 0.5 * z * z
    if kind == "student_t":
        s = u * _t_scale(nu)
        w = e / s
        const = (
            special.gammaln(nu / 2.0) - special.gammaln((nu + 1.0) / 2.0) + 0.5 * np.log(nu * np.pi)
        )
        return const + np.log(s) + 0.5 * (nu + 1.0) * np.log1p(w * w / nu)
    if kind == "laplace":
        b = u / np.sqrt(2.0)
        return np.log(2.0 * b) + np.abs(e) / b
    raise ValueError(f"no closed-form NLL for generative kind {kind!r}")


def crps_points(e, u, kind="normal", nu=None):
    """Continuous ranked probability score of each error under ``E ~ uE * D`` (closed forms).

    Normal: Gneiting et al. (2005); Student-t and Laplace: Jordan et al. (2019).

    Examples
    --------
    >>> round(float(crps_points(np.array([0.0]), np.array([1.0]))[0]), 6)
    0.233695
    """
    if kind == "normal":
        z = e / u
        return u * (
            z * (2.0 * special.ndtr(z) - 1.0)
            + 2.0 * np.exp(-0.5 * z * z) / np.sqrt(2.0 * np.pi)
            - 1.0 / np.sqrt(np.pi)
        )
    if kind == "student_t":
        s = u * _t_scale(nu)
        w = e / s
        cdf = special.stdtr(nu, w)
        log_norm = (
            special.gammaln((nu + 1.0) / 2.0) - special.gammaln(nu / 2.0) - 0.5 * np.log(nu * np.pi)
        )
        pdf = np.exp(log_norm - 0.5 * (nu + 1.0) * np.log1p(w * w / nu))
        const = (
            2.0
            * np.sqrt(nu)
            / (nu - 1.0)
            * special.beta(0.5, nu - 0.5)
            / special.beta(0.5, nu / 2.0) ** 2
        )
        return s * (w * (2.0 * cdf - 1.0) + 2.0 * pdf * (nu + w * w) / (nu - 1.0) - const)
    if kind == "laplace":
        b = u / np.sqrt(2.0)
        w = np.abs(e) / b
        return b * (w + np.exp(-w) - 0.75)
    raise ValueError(f"no closed-form CRPS for generative kind {kind!r}")


def _check_interval_direct(z, u, q_check, tau, q_lower, q_upper, p, do_check, do_interval):
    """The definitions, level by level (O(M K)): the reference of the tests."""
    m = z.size
    check = np.zeros(m) if do_check else None
    inter = np.zeros(m) if do_interval else None
    if do_check:
        for qk, tk in zip(q_check, tau):
            d = qk - z
            check += ((d >= 0).astype(float) - tk) * d
        check *= u / len(tau)
    if do_interval:
        for lo, hi, pk in zip(q_lower, q_upper, p):
            w = 2.0 / (1.0 - pk)
            inter += (hi - lo) + w * np.maximum(lo - z, 0.0) + w * np.maximum(z - hi, 0.0)
        inter *= u / len(p)
    return check, inter


def _suffix_sums(x):
    """``s[j] = sum(x[j:])`` for j = 0..K (``s[K] = 0``)."""
    return np.concatenate([np.cumsum(x[::-1])[::-1], [0.0]])


def check_interval_points(z, u, *, q_check, tau, q_lower, q_upper, p, check=True, interval=True):
    """Check (pinball) and interval scores of each point, averaged over their levels.

    Parameters
    ----------
    z, u : ndarray, shape (M,)
        z-scores and uncertainties.
    q_check, tau : ndarray, shape (K,)
        Standardised quantiles ``q_D(tau)`` and their levels ``tau``.
    q_lower, q_upper, p : ndarray, shape (L,)
        Standardised bounds ``q_D((1 -+ p) / 2)`` of the central intervals of level ``p``.
    check, interval : bool
        Which scores to compute (the other is returned as None).

    Returns
    -------
    check, interval : ndarray, shape (M,), or None
        ``uE * mean_k rho_tau_k(q_k - z)`` and
        ``uE * mean_l [(u_l - l_l) + 2/(1-p_l) ((l_l - z)_+ + (z - u_l)_+)]``.

    Notes
    -----
    The sums over the levels are taken from cumulative sums of the sorted standardised
    quantiles, at the position of each z (``searchsorted``): O(M log K), not O(M K).

    Examples
    --------
    >>> tau = np.array([0.5]); q = np.array([0.0])
    >>> c, i = check_interval_points(np.array([1.0]), np.array([2.0]), q_check=q, tau=tau,
    ...                              q_lower=np.array([-1.0]), q_upper=np.array([1.0]),
    ...                              p=np.array([0.5]))
    >>> float(c[0]), float(i[0])
    (1.0, 4.0)
    """
    z = np.asarray(z, dtype=float)
    u = np.asarray(u, dtype=float)
    out_check = out_interval = None
    if check:
        # sum_k rho_k = sum_{q_k > z} (q_k - z) - sum_k tau_k q_k + z sum_k tau_k
        q = np.asarray(q_check, dtype=float)
        t = np.asarray(tau, dtype=float)
        order = np.argsort(q, kind="stable")
        qs = q[order]
        j = np.searchsorted(qs, z, side="right")
        above = _suffix_sums(qs)[j] - z * (qs.size - j)
        out_check = u * (above - np.sum(t * q) + z * np.sum(t)) / qs.size
    if interval:
        # sum_l [(u_l - l_l) + w_l (l_l - z)_+ + w_l (z - u_l)_+], w_l = 2 / (1 - p_l)
        lo = np.asarray(q_lower, dtype=float)
        hi = np.asarray(q_upper, dtype=float)
        w = 2.0 / (1.0 - np.asarray(p, dtype=float))
        o = np.argsort(lo, kind="stable")
        ls, wl = lo[o], w[o]
        j = np.searchsorted(ls, z, side="right")  # l_k > z for k >= j
        below = _suffix_sums(wl * ls)[j] - z * _suffix_sums(wl)[j]
        o = np.argsort(hi, kind="stable")
        us, wu = hi[o], w[o]
        j = np.searchsorted(us, z, side="left")  # u_k < z for k < j
        cw = np.concatenate([[0.0], np.cumsum(wu)])
        cwu = np.concatenate([[0.0], np.cumsum(wu * us)])
        over = z * cw[j] - cwu[j]
        out_interval = u * (np.sum(hi - lo) + below + over) / lo.size
    return out_check, out_interval
