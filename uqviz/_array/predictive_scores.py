r"""Scores of a predictive distribution as given: ensembles, quantiles, intervals.

Per-point kernels (numpy; numba where installed, through :mod:`uqviz._array.jit`), for
the forecasts that give no standard uncertainty (issue 23). Every score is negatively
oriented (smaller is better) and in the units of y. Inputs are float arrays: the
observations ``y`` (shape (n,)) and the forecast of each point (members, quantiles or
bounds along the last axis). The numpy and numba paths give the same numbers to
rounding (sums taken in another order); ``use_numba=None`` takes numba when it is
installed and not disabled (``UQVIZ_DISABLE_NUMBA=1``). With numba, large ensembles are
sorted and reduced by blocks of rows on numba's threads (each row alone: the numbers do not
depend on the number of threads).

- :func:`crps_ensemble`: the CRPS of the empirical distribution of m members (plain)
  and the fair CRPS (Ferro 2014), by the sorted-members formula, O(m log m) per point;
- :func:`quantile_scores`: the quantile (pinball) score of each given quantile
  (Koenker & Bassett 1978; Gneiting & Raftery 2007);
- :func:`crps_quantiles`: the CRPS approximated from K quantiles,
  ``2/K sum_k QS_tau_k`` (Bracher et al. 2021);
- :func:`interval_score`: the interval score of central intervals (Gneiting & Raftery 2007);
- :func:`weighted_interval_score`: the weighted interval score of Bracher et al. (2021).

The checks (:func:`check_ensemble`, :func:`check_quantiles`, :func:`check_interval`)
raise ValueErrors that count the offending points.

Examples
--------
>>> y = np.array([0.0, 1.0])
>>> x = np.array([[-1.0, 1.0], [1.0, 1.0]])
>>> crps_ensemble(y, x).tolist(), crps_ensemble(y, x, fair=True).tolist()
([0.5, 0.0], [0.0, 0.0])
"""

from __future__ import annotations

import numpy as np

from uqviz._array.jit import USE_NUMBA, get_num_threads, njit, prange

__all__ = [
    "crps_ensemble",
    "crps_ensemble_pair",
    "quantile_scores",
    "crps_quantiles",
    "interval_score",
    "weighted_interval_score",
    "central_pairs",
    "check_ensemble",
    "check_quantiles",
    "check_interval",
    "check_levels_pairs",
    "LEVEL_TOL",
]

#: two levels are mirror images when ``tau_i + tau_j`` is 1 within this tolerance
LEVEL_TOL = 1e-9


def _use_numba(use_numba):
    return USE_NUMBA if use_numba is None else bool(use_numba) and USE_NUMBA


# ------------------------------------------------------------------------------------
# checks
# ------------------------------------------------------------------------------------


def _count_rows(bad):
    return int(np.count_nonzero(bad.any(axis=-1) if bad.ndim > 1 else bad))


def check_ensemble(y, members, *, finite=True):
    """``(y, members)`` as float64 arrays of shapes (n,) and (n, m), m >= 2, all finite
    (``finite=False``: the caller checks, as :func:`crps_ensemble_pair` on the sorted members).

    Examples
    --------
    >>> check_ensemble([0.0], [[1.0, 2.0]])[1].shape
    (1, 2)
    >>> try:
    ...     check_ensemble([0.0], [[1.0]])
    ... except ValueError as exc:
    ...     print(str(exc)[:59])
    samples: an ensemble of one member is a point forecast (its
    """
    y = np.ascontiguousarray(y, dtype=float)
    x = np.ascontiguousarray(members, dtype=float)
    if x.ndim != 2 or y.ndim != 1 or x.shape[0] != y.shape[0]:
        raise ValueError(
            f"samples must have shape (point, sample) and y shape (point,), got "
            f"{x.shape} and {y.shape}"
        )
    if x.shape[1] < 2:
        raise ValueError(
            "samples: an ensemble of one member is a point forecast (its CRPS is "
            "the absolute error, the fair CRPS is undefined): give at least 2 "
            f"members per point, got {x.shape[1]}"
        )
    if finite:
        _check_finite(y, x, "samples", "member")
    return y, x


def _raise_nonfinite_members(y, sorted_x):
    """The finite check of sorted rows: a NaN sorts last, -inf first, +inf last."""
    bad_x = int(np.count_nonzero(~(np.isfinite(sorted_x[:, 0]) & np.isfinite(sorted_x[:, -1]))))
    bad_y = int(np.count_nonzero(~np.isfinite(y)))
    if bad_x or bad_y:
        raise ValueError(
            f"samples: {bad_x} point(s) with a non-finite (NaN or inf) member, "
            f"{bad_y} with a non-finite y"
        )


def _check_finite(y, x, what, unit):
    bad_y = int(np.count_nonzero(~np.isfinite(y)))
    bad_x = _count_rows(~np.isfinite(x))
    if bad_y or bad_x:
        raise ValueError(
            f"{what}: {bad_x} point(s) with a non-finite (NaN or inf) {unit}, "
            f"{bad_y} with a non-finite y"
        )


@njit(nogil=True, cache=True)
def _row_flags(row):  # pragma: no cover - compiled
    """(a non-finite value, a decrease) in one row."""
    bad = False
    cross = False
    for j in range(row.size):
        if not np.isfinite(row[j]):
            bad = True
        elif j > 0 and row[j] < row[j - 1]:
            cross = True
    return bad, cross


@njit(nogil=True, parallel=True, cache=True)
def _quantile_rows_numba(q):  # pragma: no cover - compiled
    """Counts of the rows with a non-finite value and of those that decrease somewhere."""
    n = q.shape[0]
    bad = np.zeros(n, dtype=np.int64)
    cross = np.zeros(n, dtype=np.int64)
    for i in prange(n):
        b, c = _row_flags(q[i])
        bad[i] = b
        cross[i] = c
    return bad.sum(), cross.sum()


def check_quantiles(y, quantiles, levels):
    """``(y, quantiles, levels)`` checked: levels increasing in (0, 1), quantiles finite and
    non-decreasing along the levels (crossing quantiles are counted and refused).

    Examples
    --------
    >>> try:
    ...     check_quantiles([0.0], [[1.0, 0.5]], [0.1, 0.9])
    ... except ValueError as exc:
    ...     print(str(exc)[:45])
    quantiles: 1 point(s) with crossing quantiles
    """
    y = np.ascontiguousarray(y, dtype=float)
    q = np.ascontiguousarray(quantiles, dtype=float)
    t = np.ascontiguousarray(levels, dtype=float)
    if q.ndim != 2 or y.ndim != 1 or q.shape != (y.shape[0], t.size) or t.ndim != 1:
        raise ValueError(
            f"quantiles must have shape (point, level) = ({y.size}, {t.size}), got {q.shape}"
        )
    if t.size == 0 or not (np.all(np.isfinite(t)) and np.all((t > 0) & (t < 1))):
        raise ValueError(f"levels must be probabilities in (0, 1), got {t.tolist()}")
    if np.any(np.diff(t) <= 0):
        raise ValueError(f"levels must be strictly increasing, got {t.tolist()}")
    if USE_NUMBA:
        bad_q, crossing = (int(v) for v in _quantile_rows_numba(q))
    else:
        bad_q = _count_rows(~np.isfinite(q))
        with np.errstate(invalid="ignore"):
            crossing = _count_rows(np.diff(q, axis=1) < 0)
    bad_y = int(np.count_nonzero(~np.isfinite(y)))
    if bad_q or bad_y:
        raise ValueError(
            f"quantiles: {bad_q} point(s) with a non-finite (NaN or inf) quantile, "
            f"{bad_y} with a non-finite y"
        )
    if crossing:
        raise ValueError(
            f"quantiles: {crossing} point(s) with crossing quantiles (a quantile "
            "below that of a lower level); repair them (uqviz.from_predictions "
            "counts and sorts them) or drop those points"
        )
    return y, q, t


def check_interval(y, lower, upper, level):
    """``(y, lower, upper, level)`` checked: finite bounds, ``lower <= upper`` (counted),
    level in (0, 1).

    Examples
    --------
    >>> check_interval([0.0, 1.0], [1.0, 0.0], [0.0, 2.0], 0.9)
    Traceback (most recent call last):
    ...
    ValueError: interval: 1 point(s) with lower > upper
    """
    y = np.ascontiguousarray(y, dtype=float)
    lo = np.ascontiguousarray(lower, dtype=float)
    hi = np.ascontiguousarray(upper, dtype=float)
    if lo.shape != hi.shape or lo.shape[:1] != y.shape or y.ndim != 1:
        raise ValueError(
            f"lower and upper must have one row per point ({y.size}), got shapes "
            f"{lo.shape} and {hi.shape}"
        )
    level = np.asarray(level, dtype=float)
    if not (np.all(np.isfinite(level)) and np.all((level > 0) & (level < 1))):
        raise ValueError(f"level of the interval must be in (0, 1), got {level.tolist()}")
    _check_finite(y, np.stack([lo, hi], axis=-1).reshape(y.size, -1), "interval", "bound")
    bad = _count_rows(lo > hi)
    if bad:
        raise ValueError(f"interval: {bad} point(s) with lower > upper")
    return y, lo, hi, level


def central_pairs(levels):
    """Pairs ``(i, j)`` of levels with ``tau_i + tau_j = 1``, ``tau_i < 1/2``, the index of
    the median (or -1), and the levels without their mirror.

    Examples
    --------
    >>> central_pairs(np.array([0.1, 0.25, 0.5, 0.75, 0.9]))
    ([(1, 3), (0, 4)], 2, [])
    >>> central_pairs(np.array([0.1, 0.5, 0.8]))
    ([], 1, [0.1, 0.8])
    """
    t = np.asarray(levels, dtype=float)
    pairs, lonely, median = [], [], -1
    for i, ti in enumerate(t):
        if abs(ti - 0.5) <= LEVEL_TOL:
            median = i
            continue
        j = np.flatnonzero(np.abs(t + ti - 1.0) <= LEVEL_TOL)
        if j.size == 0:
            lonely.append(float(ti))
        elif ti < 0.5:
            pairs.append((i, int(j[0])))
    pairs.sort(key=lambda p: -t[p[0]])  # narrowest interval first
    return pairs, median, lonely


def check_levels_pairs(levels, *, median=True, score="weighted interval score"):
    """The central pairs of ``levels`` (:func:`central_pairs`), or a ValueError naming the
    levels without a mirror (and the missing median when ``median``).

    Examples
    --------
    >>> try:
    ...     check_levels_pairs(np.array([0.1, 0.5, 0.8]))
    ... except ValueError as exc:
    ...     print(str(exc).split(": ")[-1])
    2 level(s) without their mirror [0.1, 0.8]
    """
    pairs, med, lonely = central_pairs(levels)
    if lonely or (median and med < 0) or not pairs:
        need = " and the median 0.5" if median else ""
        what = []
        if lonely:
            what.append(f"{len(lonely)} level(s) without their mirror {lonely}")
        if median and med < 0:
            what.append("no level 0.5")
        if not pairs and not lonely:
            what.append("no pair of levels")
        raise ValueError(
            f"levels: the {score} needs levels symmetric about 0.5 (tau and "
            f"1 - tau){need}: {'; '.join(what)}"
        )
    return pairs, med


# ------------------------------------------------------------------------------------
# CRPS of an ensemble
# ------------------------------------------------------------------------------------


@njit(nogil=True, cache=True, error_model="numpy")
def _row_sums(x, yi):  # pragma: no cover - compiled
    """``(sum_j |x_j - y|, sum_j (2j - m + 1)(x_j - y))`` of one sorted row."""
    m = x.size
    sa = 0.0
    sb = 0.0
    for j in range(m):
        d = x[j] - yi
        sa += abs(d)
        sb += (2.0 * j - m + 1.0) * d
    return sa, sb


@njit(nogil=True, parallel=True, cache=True, error_model="numpy")
def _ensemble_sums_numba(sorted_x, y):  # pragma: no cover - compiled
    n = sorted_x.shape[0]
    a = np.empty(n)
    b = np.empty(n)
    for i in prange(n):
        a[i], b[i] = _row_sums(sorted_x[i], y[i])
    return a, b


@njit(nogil=True, cache=True, error_model="numpy")
def _ensemble_sums_serial(sorted_x, y, a, b):  # pragma: no cover - compiled
    """:func:`_ensemble_sums_numba` on one thread, into ``a`` and ``b`` (a block of rows)."""
    for i in range(sorted_x.shape[0]):
        a[i], b[i] = _row_sums(sorted_x[i], y[i])


#: ensembles of at least this many values are sorted and reduced by blocks of rows on
#: numba's threads (numpy's sort and the kernel release the GIL)
THREADED_ABOVE = 2**20


def _ensemble_sums_threaded(y, x, n_threads):
    """Sort and reduce blocks of rows on ``n_threads`` threads (same numbers as one block:
    each row is sorted and summed alone)."""
    from concurrent.futures import ThreadPoolExecutor

    n = x.shape[0]
    a = np.empty(n)
    b = np.empty(n)
    edges = np.linspace(0, n, 4 * n_threads + 1).astype(np.int64)
    bad = np.zeros(len(edges) - 1, dtype=np.int64)

    def block(k):
        lo, hi = edges[k], edges[k + 1]
        s = np.sort(x[lo:hi], axis=1)
        bad[k] = np.count_nonzero(~(np.isfinite(s[:, 0]) & np.isfinite(s[:, -1])))
        _ensemble_sums_serial(s, y[lo:hi], a[lo:hi], b[lo:hi])

    with ThreadPoolExecutor(n_threads) as pool:
        list(pool.map(block, range(len(edges) - 1)))
    return a, b, int(bad.sum())


def _ensemble_sums(y, x, use_numba):
    """``sum_j |x_j - y|`` and ``sum_j (2j - m + 1) (x_(j) - y)`` (j from 0, sorted x)."""
    if _use_numba(use_numba) and x.size >= THREADED_ABOVE and get_num_threads() > 1:
        a, b, bad_x = _ensemble_sums_threaded(y, x, get_num_threads())
        bad_y = int(np.count_nonzero(~np.isfinite(y)))
        if bad_x or bad_y:
            raise ValueError(
                f"samples: {bad_x} point(s) with a non-finite (NaN or inf) "
                f"member, {bad_y} with a non-finite y"
            )
        return a, b
    s = np.sort(x, axis=1)
    _raise_nonfinite_members(y, s)
    if _use_numba(use_numba):
        return _ensemble_sums_numba(s, y)
    m = x.shape[1]
    s -= y[:, None]
    a = np.abs(s).sum(axis=1)
    b = s @ (2.0 * np.arange(m) - m + 1.0)
    return a, b


def crps_ensemble_pair(y, members, *, use_numba=None):
    r"""Plain and fair CRPS of each point's ensemble, from one sort of the members.

    Parameters
    ----------
    y : array_like, shape (n,)
        Observations.
    members : array_like, shape (n, m)
        Ensemble members (m >= 2, finite).
    use_numba : bool, optional
        The numba reduction (default where installed) or the numpy one.

    Returns
    -------
    plain, fair : ndarray, shape (n,)

    Notes
    -----
    With :math:`x_{(1)} \le \dots \le x_{(m)}` the sorted members,
    :math:`\sum_{i,j} |x_i - x_j| = 2 \sum_i (2i - m - 1) x_{(i)}` (the Gini mean
    difference; ties change nothing), so

    .. math::

       \mathrm{CRPS} = \frac1m \sum_i |x_i - y|
           - \frac{1}{m^2} \sum_i (2i - m - 1) x_{(i)}, \qquad
       \mathrm{CRPS}_\mathrm{fair} = \frac1m \sum_i |x_i - y|
           - \frac{1}{m(m-1)} \sum_i (2i - m - 1) x_{(i)}

    (Gneiting & Raftery 2007, eq. 21 for the energy form; Ferro 2014 for the fair one,
    which is unbiased for the CRPS of the distribution the members are drawn from). The
    members are centred on y before the sums (the weights sum to 0), which keeps the
    digits of data far from 0. O(m log m) per point; no m^2 pairs.

    Examples
    --------
    >>> p, f = crps_ensemble_pair([0.5], [[0.0, 1.0, 2.0]])
    >>> round(float(p[0]), 12), round(float(f[0]), 12)
    (0.388888888889, 0.166666666667)
    """
    y, x = check_ensemble(y, members, finite=False)
    m = x.shape[1]
    a, b = _ensemble_sums(y, x, use_numba)
    mean_abs = a / m
    return mean_abs - b / (m * m), mean_abs - b / (m * (m - 1.0))


def crps_ensemble(y, members, *, fair=False, use_numba=None):
    """CRPS of each point's ensemble: plain (the empirical distribution of the members,
    = properscoring's ``crps_ensemble`` and scoringrules' ``"nrg"``, ``"int"``, ``"qd"``)
    or ``fair`` (Ferro 2014, = scoringrules' ``"fair"`` and ``"pwm"``).

    See :func:`crps_ensemble_pair` for the formula.

    Examples
    --------
    >>> round(float(crps_ensemble([0.5], [[0.0, 1.0, 2.0]], fair=True)[0]), 12)
    0.166666666667
    """
    plain, fair_ = crps_ensemble_pair(y, members, use_numba=use_numba)
    return fair_ if fair else plain


# ------------------------------------------------------------------------------------
# quantiles and intervals
# ------------------------------------------------------------------------------------


def quantile_scores(y, quantiles, levels):
    r"""Quantile (pinball) score of each quantile: ``(1{y < q} - tau) (q - y)``.

    Parameters
    ----------
    y : array_like, shape (n,)
    quantiles : array_like, shape (n, K)
        The forecast quantile of level ``levels[k]`` in column k (any order of levels).
    levels : array_like, shape (K,)

    Returns
    -------
    ndarray, shape (n, K)
        :math:`QS_\tau(q, y) = (1 - \tau)(q - y)` when :math:`y < q`, else
        :math:`\tau (y - q)` (Koenker & Bassett 1978); = scoringrules'
        ``quantile_score``.

    Examples
    --------
    >>> quantile_scores([1.0, 1.0], [[0.0], [3.0]], [0.25]).ravel().tolist()
    [0.25, 1.5]
    """
    y = np.asarray(y, dtype=float)[:, None]
    q = np.asarray(quantiles, dtype=float)
    t = np.asarray(levels, dtype=float)
    return np.where(y < q, (1.0 - t) * (q - y), t * (y - q))


@njit(nogil=True, parallel=True, cache=True, error_model="numpy")
def _pinball_sums_numba(y, q, t):  # pragma: no cover - compiled
    n, k = q.shape
    out = np.empty(n)
    for i in prange(n):
        yi = y[i]
        s = 0.0
        for j in range(k):
            d = q[i, j] - yi  # (1 - tau) d if y < q, else tau (y - q) = -tau d: the same digits
            s += d * ((1.0 if d > 0.0 else 0.0) - t[j])
        out[i] = s
    return out


def _pinball_sums(y, q, t, use_numba):
    if _use_numba(use_numba):
        return _pinball_sums_numba(
            np.ascontiguousarray(y, dtype=float),
            np.ascontiguousarray(q, dtype=float),
            np.ascontiguousarray(t, dtype=float),
        )
    return quantile_scores(y, q, t).sum(axis=1)


def crps_quantiles(y, quantiles, levels, *, use_numba=None):
    r"""CRPS approximated from K quantiles: ``2/K sum_k QS_tau_k(q_k, y)``.

    Parameters
    ----------
    y : array_like, shape (n,)
    quantiles : array_like, shape (n, K)
    levels : array_like, shape (K,)
    use_numba : bool, optional

    Returns
    -------
    ndarray, shape (n,)

    Notes
    -----
    The CRPS is the integral of the quantile score over the levels,
    :math:`\mathrm{CRPS}(F, y) = 2 \int_0^1 QS_\tau(F^{-1}(\tau), y)\, d\tau`
    (Gneiting & Raftery 2007; Laio & Tamea 2007); with K given quantiles it is
    approximated by the equally weighted sum :math:`\frac{2}{K} \sum_k QS_{\tau_k}`
    (Bracher et al. 2021, Sect. 2.3; scoringrules' ``crps_quantile``). For levels
    symmetric about 1/2 that include the median, this is the weighted interval score
    exactly (:func:`weighted_interval_score`, K = 2K' + 1). Bias: the rule weighs every
    level by 1/K, whatever the spacing of the levels, and omits the tails beyond the
    extreme levels. Since :math:`E[QS_\tau(F^{-1}(\tau), Y)] = \varphi(\Phi^{-1}(\tau))`
    for Y ~ N(0, 1), its expectation for a calibrated normal forecast of sd sigma is
    :math:`\frac{2\sigma}{K} \sum_k \varphi(\Phi^{-1}(\tau_k))` against the CRPS
    :math:`\sigma/\sqrt\pi`: +1.0 % with the 99 levels 0.01, ..., 0.99, +4.8 % with
    the 19 levels 0.05, ..., 0.95, +9.4 % with the 9 levels 0.1, ..., 0.9, and -10.8 %
    with the 23 levels of the COVID-19 Forecast Hub (0.01, 0.025, 0.05, 0.1, ..., 0.9,
    0.95, 0.975, 0.99: denser in the tails, where the quantile scores are small). Use it
    to compare forecasts given at the same levels, not as the CRPS of the distribution.

    Examples
    --------
    >>> round(float(crps_quantiles([0.0], [[-1.0, 0.0, 1.0]], [0.25, 0.5, 0.75])[0]), 6)
    0.333333
    """
    y = np.asarray(y, dtype=float)
    q = np.asarray(quantiles, dtype=float)
    return 2.0 * _pinball_sums(y, q, levels, use_numba) / q.shape[1]


def interval_score(y, lower, upper, level):
    r"""Interval score of central intervals of nominal coverage ``level``.

    Parameters
    ----------
    y : array_like, shape (n,)
    lower, upper : array_like, shape (n,) or (n, K)
        Bounds; column k of level ``level[k]``.
    level : float or array_like, shape (K,)
        Nominal central coverage ``1 - alpha``.

    Returns
    -------
    ndarray, shape of ``lower``
        :math:`(u - l) + \frac{2}{\alpha} (l - y)_+ + \frac{2}{\alpha} (y - u)_+`
        (Gneiting & Raftery 2007, eq. 43); = scoringrules' ``interval_score``.

    Examples
    --------
    >>> interval_score([0.0, 3.0], [-1.0, -1.0], [1.0, 1.0], 0.5).tolist()
    [2.0, 10.0]
    """
    y = np.asarray(y, dtype=float)
    lo = np.asarray(lower, dtype=float)
    hi = np.asarray(upper, dtype=float)
    if lo.ndim == 2:
        y = y[:, None]
    w = 2.0 / (1.0 - np.asarray(level, dtype=float))
    return (hi - lo) + w * np.maximum(lo - y, 0.0) + w * np.maximum(y - hi, 0.0)


def weighted_interval_score(y, quantiles, levels, *, use_numba=None):
    r"""Weighted interval score of K' central intervals and the median (Bracher et al. 2021).

    Parameters
    ----------
    y : array_like, shape (n,)
    quantiles : array_like, shape (n, 2K' + 1)
        Quantiles at levels symmetric about 1/2, the median included.
    levels : array_like, shape (2K' + 1,)
    use_numba : bool, optional

    Returns
    -------
    ndarray, shape (n,)

    Raises
    ------
    ValueError
        Levels not symmetric about 1/2 or without the median (names them).

    Notes
    -----
    .. math::

       \mathrm{WIS} = \frac{1}{K' + 1/2} \left( \tfrac12 |y - m|
           + \sum_{k=1}^{K'} \frac{\alpha_k}{2} \mathrm{IS}_{\alpha_k}(l_k, u_k, y) \right)
           = \frac{1}{K' + 1/2} \sum_{\tau} QS_\tau(q_\tau, y),

    since :math:`\frac{\alpha}{2} \mathrm{IS}_\alpha = QS_{\alpha/2}(l) + QS_{1-\alpha/2}(u)`
    and :math:`\frac12 |y - m| = QS_{1/2}(m)`. It equals scoringrules 0.10.0's
    ``weighted_interval_score`` with its numba backend (its numpy backend adds
    ``w_median * median`` instead of ``w_median * |y - median|``).

    Examples
    --------
    >>> q = [[-1.0, 0.0, 1.0]]
    >>> round(float(weighted_interval_score([0.0], q, [0.25, 0.5, 0.75])[0]), 6)
    0.333333
    """
    pairs, _ = check_levels_pairs(np.asarray(levels, dtype=float), median=True)
    y = np.asarray(y, dtype=float)
    q = np.asarray(quantiles, dtype=float)
    return _pinball_sums(y, q, levels, use_numba) / (len(pairs) + 0.5)
