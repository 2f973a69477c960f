"""Paired bootstrap of several statistics at once (numpy kernels, no xarray).

Two paths share one result layout:

- *moment statistics* (functions of column means: ZMS, RCE, NLL, ...): every
  replicate comes from resampled column sums (``resample.resample_sums``), the
  jackknife from leave-one-out sums, in O(M) memory and time per replicate.
- *binned statistics* (ENCE, UCE, ZMSE): every resample is re-binned by
  equal counts of uE from resampled per-point counts, in O(M) per replicate;
  moment statistics ride along on the same resamples.
- *generic statistics* (e.g. the rank correlation CC): resampled index arrays
  are drawn in chunks and the statistic is evaluated on them; the jackknife
  is evaluated in chunks of leave-one-out samples (O(M^2) work).

All statistics of one call share the same resamples of points (paired
bootstrap). Points may be split into contiguous groups (bins): each group is
then resampled on its own.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from uqviz._array import bca
from uqviz._array import binned as kbin
from uqviz._array.resample import binned_resample_sums as resample_binned
from uqviz._array.resample import resample_sums
from uqviz._array.stats import columns as make_columns

GENERIC_CHUNK_ELEMENTS = 2_000_000  # resampled values held at once (generic path)
JACKKNIFE_GROUPS = 1000  # generic statistics: delete-group jackknife above this size


@dataclass
class BootstrapResult:
    """Arrays for one statistic; leading axis = group (G)."""

    estimate: np.ndarray
    replicates: np.ndarray  # (G, B)
    lower: np.ndarray
    upper: np.ndarray
    z0: np.ndarray = field(default=None)
    accel: np.ndarray = field(default=None)

    @property
    def bias(self):
        """Bootstrap bias: mean of the replicates minus the estimate."""
        return self.replicates.mean(axis=-1) - self.estimate

    @property
    def se(self):
        """Bootstrap standard error (sd of the replicates, ddof=1)."""
        return self.replicates.std(axis=-1, ddof=1)


def _as_dict(arr, names):
    return {c: arr[..., i] for i, c in enumerate(names)}


def _segment_sum(x, starts):
    return np.add.reduceat(x, starts, axis=0)


def _moment_jackknife_accel(cols, names, func, starts, sizes):
    """Acceleration per group from leave-one-out means, in O(M)."""
    gid = np.repeat(np.arange(len(sizes)), sizes)
    totals = _segment_sum(cols, starts)
    n = sizes[gid].astype(float)
    loo = (totals[gid] - cols) / (n - 1.0)[:, None]
    jack = func(_as_dict(loo, names), n - 1.0)
    jack_mean = _segment_sum(jack, starts) / sizes
    d = jack_mean[gid] - jack
    num = _segment_sum(d**3, starts)
    den = 6.0 * _segment_sum(d**2, starts) ** 1.5
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), 0.0)


def _check_groups(m, starts, sizes, method):
    if starts is None:
        return np.array([0]), np.array([m])
    starts = np.asarray(starts, dtype=np.int64)
    sizes = np.asarray(sizes, dtype=np.int64)
    expected = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    if not np.array_equal(starts, expected) or sizes.sum() != m:
        raise ValueError("groups must be contiguous, in order, and cover all points")
    minimum = 2 if method == "bca" else 1
    if np.any(sizes < minimum):
        raise ValueError(f"every group needs at least {minimum} points for method={method!r}")
    return starts, sizes


def bootstrap_moments(e, u, stats, *, n_boot, seed, ci=0.95, method="bca",
                      starts=None, sizes=None, engine=None):
    """Bootstrap moment statistics through resampled column sums.

    Parameters
    ----------
    e, u : ndarray, shape (M,)
        Errors and uncertainties (rows already grouped when ``starts`` given).
    stats : dict
        name -> (func(means, n), column names).
    n_boot, seed, ci, method, engine
        See :func:`uqviz._array.resample.resample_sums` and :func:`bca.interval`.

    Returns
    -------
    dict
        name -> :class:`BootstrapResult` with arrays of leading size G.
    """
    names = sorted({c for _, cols in stats.values() for c in cols})
    cols = make_columns(e, u, names)
    starts, sizes = _check_groups(len(cols), starts, sizes, method)
    sums = resample_sums(cols, n_boot, seed, starts=starts, sizes=sizes, engine=engine)
    n = sizes.astype(float)
    rep_means = _as_dict(sums / n[:, None, None], names)
    means = _as_dict(_segment_sum(cols, starts) / n[:, None], names)
    out = {}
    for name, (func, _) in stats.items():
        est = np.asarray(func(means, n), dtype=float)
        reps = np.asarray(func(rep_means, n[:, None]), dtype=float)
        accel = (_moment_jackknife_accel(cols, names, func, starts, sizes)
                 if method == "bca" else None)
        ivl = bca.interval(est, reps, accel=accel, ci=ci, method=method)
        out[name] = BootstrapResult(est, reps, ivl["lower"], ivl["upper"],
                                    ivl.get("z0"), ivl.get("a"))
    return out


def _generic_jackknife(func, e, u, max_groups=JACKKNIFE_GROUPS):
    """Jackknife values of ``func(e, u)`` for the BCa acceleration.

    Up to ``max_groups`` points: exact leave-one-out. Above: the delete-group
    jackknife with ``max_groups`` contiguous groups (Efron & Tibshirani 1993,
    sect. 11.5), whose values enter the same acceleration formula; the
    acceleration is a small correction and this keeps the cost O(G M) instead
    of O(M^2) for statistics that are not functions of means (e.g. CC).
    """
    m = e.shape[-1]
    edges = np.linspace(0, m, min(m, max_groups) + 1).round().astype(np.int64)
    jack = np.empty(edges.size - 1)
    keep = np.ones(m, dtype=bool)
    for g in range(edges.size - 1):
        keep[edges[g]:edges[g + 1]] = False
        jack[g] = func(e[keep], u[keep])
        keep[edges[g]:edges[g + 1]] = True
    return jack


def _counts(idx, m):
    rows = idx.shape[0]
    flat = (idx + m * np.arange(rows)[:, None]).ravel()
    return np.bincount(flat, minlength=rows * m).reshape(rows, m).astype(float)


def bootstrap_generic(e, u, stats, *, n_boot, rng, ci=0.95, method="bca"):
    """Paired bootstrap of arbitrary statistics ``func(e, u)`` on index resamples.

    ``stats`` maps name -> (func(e, u) vectorised over leading axes, counts)
    where ``counts`` is None or ``(prepare(e, u), f(counts, prepared))``: an
    O(M)-per-replicate evaluation from the number of draws of each point
    (used for rank statistics, which would otherwise sort every resample).
    Returns name -> :class:`BootstrapResult` with a leading group axis of 1.
    """
    rng = np.random.default_rng(rng)
    m = e.shape[-1]
    chunk = max(1, GENERIC_CHUNK_ELEMENTS // m)
    prepared = {name: c[0](e, u) for name, (_, c) in stats.items() if c is not None}
    reps = {name: np.empty(n_boot) for name in stats}
    for b0 in range(0, n_boot, chunk):
        b1 = min(n_boot, b0 + chunk)
        idx = rng.integers(0, m, size=(b1 - b0, m))
        counts = _counts(idx, m) if prepared else None
        plain = [n for n, (_, c) in stats.items() if c is None]
        es, us = (e[idx], u[idx]) if plain else (None, None)
        for name, (func, c) in stats.items():
            reps[name][b0:b1] = func(es, us) if c is None else c[1](counts, prepared[name])
    out = {}
    for name, (func, _) in stats.items():
        est = np.asarray(func(e, u), dtype=float)
        jack = _generic_jackknife(func, e, u) if method == "bca" else None
        ivl = bca.interval(est, reps[name], jackknife=jack, ci=ci, method=method)
        out[name] = BootstrapResult(est[None], reps[name][None], ivl["lower"][None],
                                    ivl["upper"][None],
                                    None if method != "bca" else ivl["z0"][None],
                                    None if method != "bca" else np.atleast_1d(ivl["a"]))
    return out


def _accel_from_jackknife(jack):
    return bca.acceleration(jack[None, :])


def bootstrap_binned(e, u, stats, *, n_bins, n_boot, seed, ci=0.95, method="bca",
                     engine=None, key=None):
    """Paired bootstrap of binned (ENCE, UCE, ZMSE) and moment statistics.

    Every resample is re-binned into ``n_bins`` equal-count bins of uE
    (``resample.binned_resample_sums``); moment statistics come from the same
    resampled sums (totals over bins), so all statistics stay paired. The
    jackknife re-bins each leave-one-out sample (prefix sums, O(M n_bins)).

    Parameters
    ----------
    e, u : ndarray, shape (M,)
    stats : dict
        name -> (kind, func, columns) with kind "binned" (``func(bin_means)``)
        or "moments" (``func(means, n)``).
    n_bins, n_boot, seed, ci, method, engine
        As in :func:`bootstrap_moments`.
    key : ndarray, shape (M,), optional
        Binning variable (default uE): bins are equal-count bins of ``key``.

    Returns
    -------
    dict
        name -> :class:`BootstrapResult` with a leading group axis of 1.
    """
    order = np.argsort(u if key is None else key, kind="stable")
    e, u = e[order], u[order]
    names = sorted({c for _, _, cols in stats.values() for c in cols})
    cols = make_columns(e, u, names)
    m = len(e)
    bounds = kbin.equal_count_bounds(m, n_bins)
    if np.any(np.diff(bounds) < 2):
        raise ValueError(f"{n_bins} bins leave fewer than 2 points per bin for {m} points")
    sizes = np.diff(bounds).astype(float)
    sums = resample_binned(cols, bounds, n_boot, seed, engine=engine)  # (B, n_bins, k)
    data_bins = _as_dict(np.add.reduceat(cols, bounds[:-1], axis=0) / sizes[:, None], names)
    rep_bins = _as_dict(sums / sizes[None, :, None], names)
    rep_tot = _as_dict(sums.sum(axis=1) / m, names)
    loo = None
    out = {}
    for name, (kind, func, _) in stats.items():
        if kind == "binned":
            est = np.asarray(func(data_bins), dtype=float)
            reps = func(rep_bins)
            if method == "bca":
                loo = kbin.loo_binned_means(cols, n_bins) if loo is None else loo
                accel = _accel_from_jackknife(func(_as_dict(loo, names)))
        else:
            est = np.asarray(func(_as_dict(cols.mean(axis=0), names), m), dtype=float)
            reps = func(rep_tot, m)
            if method == "bca":
                accel = _moment_jackknife_accel(cols, names, func, np.array([0]), np.array([m]))
        ivl = bca.interval(est[None], reps[None], accel=accel if method == "bca" else None,
                           ci=ci, method=method)
        out[name] = BootstrapResult(est[None], reps[None], ivl["lower"], ivl["upper"],
                                    ivl.get("z0"), ivl.get("a"))
    return out
