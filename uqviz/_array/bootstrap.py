"""Paired bootstrap of several statistics at once (numpy kernels, no xarray).

Paths: moment statistics from resampled column sums; binned statistics
(ENCE, UCE, ZMSE) re-binned on every resample; generic statistics (e.g. CC)
on index resamples. All statistics of a call share the resamples. Scale as in
:mod:`uqviz._array.stats`; degenerate intervals are NaN.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from uqviz._array import bca
from uqviz._array import binned as binned_kernels
from uqviz._array import clusters
from uqviz._array.resample import binned_resample_sums as resample_binned
from uqviz._array.resample import resample_sums
from uqviz._array.stats import columns as make_columns
from uqviz._array.stats import evaluate, log2_scale

GENERIC_CHUNK_ELEMENTS = 2_000_000  # resampled values held at once (generic path)
JACKKNIFE_GROUPS = 1000  # generic statistics: delete-group jackknife above this size
JACKKNIFE_CHUNK = 1 << 16  # points per chunk of the moment jackknife


@dataclass
class BootstrapResult:
    """Arrays for one statistic; leading axis = group (G)."""

    estimate: np.ndarray
    replicates: np.ndarray  # (G, B)
    lower: np.ndarray
    upper: np.ndarray
    z0: np.ndarray | None = field(default=None)
    accel: np.ndarray | None = field(default=None)

    @property
    def degenerate(self):
        """True where the interval is NaN (degenerate bootstrap distribution)."""
        return np.isnan(self.lower) | np.isnan(self.upper)

    @property
    def bias(self):
        """Bootstrap bias: mean of the replicates minus the estimate."""
        return self.replicates.mean(axis=-1) - self.estimate

    @property
    def se(self):
        """Bootstrap standard error (sd of the replicates, ddof=1)."""
        return self.replicates.std(axis=-1, ddof=1)


def _as_dict(arr, names, k=0):
    out = {c: arr[..., i] for i, c in enumerate(names)}
    out["log2_scale"] = k
    return out


def _segment_sum(x, starts):
    return np.add.reduceat(x, starts, axis=0)


def _chunks(starts, sizes, chunk):
    """Chunks of whole pieces of contiguous groups, each piece at most ``chunk`` points.

    A group is cut into pieces at multiples of ``chunk`` from its own start, so the
    order in which its points are summed does not depend on the other groups (a bin
    gives the same bits alone or with its neighbours: on a dask worker or not). A chunk
    holds the pieces starting in one window of ``chunk`` points: fewer than ``2 chunk``
    points, at most one piece per group.

    Yields (a, b, groups, seg): points a..b-1, the groups they meet (each once, in order) and
    the start of each group's run inside the chunk (relative to a).
    """
    starts = np.asarray(starts, dtype=np.int64)
    sizes = np.asarray(sizes, dtype=np.int64)
    n_pieces = -(-sizes // chunk)
    group = np.repeat(np.arange(sizes.size), n_pieces)
    first = np.repeat(np.cumsum(n_pieces) - n_pieces, n_pieces)
    lo = starts[group] + (np.arange(group.size) - first) * chunk
    hi = np.minimum(lo + chunk, (starts + sizes)[group])
    window = lo // chunk
    cuts = np.flatnonzero(np.r_[True, window[1:] != window[:-1], True])
    for i, j in zip(cuts[:-1], cuts[1:]):
        a, b = int(lo[i]), int(hi[j - 1])
        yield a, b, group[i:j], lo[i:j] - a


def _moment_jackknife_accel(cols, names, func, starts, sizes, k=0):
    """BCa acceleration per group from leave-one-out means, in O(M) time.

    Points are taken in chunks of ``JACKKNIFE_CHUNK``: besides the M jackknife values, memory
    is O(chunk), not a few arrays of M (M x k) values.
    """
    n_groups = len(sizes)
    totals = _segment_sum(cols, starts)
    jack = np.empty(len(cols))
    expo = np.full(n_groups, np.iinfo(np.int64).min)
    total = np.zeros(n_groups)
    big = np.zeros(n_groups)
    s2 = np.zeros(n_groups)
    s3 = np.zeros(n_groups)
    chunks = list(_chunks(starts, sizes, JACKKNIFE_CHUNK))

    def gid_of(a, b, groups, seg):
        return np.repeat(groups, np.diff(np.append(seg, b - a)))

    with np.errstate(all="ignore"):
        for a, b, groups, seg in chunks:  # leave-one-out values, largest exponent per group
            gid = gid_of(a, b, groups, seg)
            n = sizes[gid].astype(float)
            loo = (totals[gid] - cols[a:b]) / (n - 1.0)[:, None]
            jack[a:b] = np.asarray(func(_as_dict(loo, names, k), n - 1.0), dtype=float)
            e = bca.power_of_two_scale(jack[a:b, None])[:, 0]
            expo[groups] = np.maximum(expo[groups], np.maximum.reduceat(e, seg))
        for a, b, groups, seg in chunks:  # scaled values and their mean per group
            gid = gid_of(a, b, groups, seg)
            jack[a:b] = np.ldexp(jack[a:b], -expo[gid])
            total[groups] += np.add.reduceat(jack[a:b], seg)
        jack_mean = total / sizes
        for a, b, groups, seg in chunks:  # largest deviation per group
            d = jack_mean[gid_of(a, b, groups, seg)] - jack[a:b]
            big[groups] = np.maximum(big[groups], np.maximum.reduceat(np.abs(d), seg))
        shift = np.frexp(np.where(np.isfinite(big), big, 0.0))[1]
        for a, b, groups, seg in chunks:  # sums of powers of the deviations, rescaled
            gid = gid_of(a, b, groups, seg)
            d = np.ldexp(jack_mean[gid] - jack[a:b], -shift[gid])
            s2[groups] += np.add.reduceat(d * d, seg)
            s3[groups] += np.add.reduceat(d**3, seg)
        return bca.acceleration_from_sums(s2, s3)


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


def _result(est, reps, ci, method, **jack):
    ivl = bca.interval(est, reps, ci=ci, method=method, **jack)
    return BootstrapResult(est, reps, ivl["lower"], ivl["upper"], ivl.get("z0"), ivl.get("a"))


def bootstrap_moments(
    e,
    u,
    stats,
    *,
    n_boot,
    seed,
    ci=0.95,
    method="bca",
    starts=None,
    sizes=None,
    engine=None,
    blocked_above=None,
    clusters=None,
):
    """Bootstrap moment statistics through resampled column sums.

    Parameters
    ----------
    e, u : ndarray, shape (M,)
    stats : dict
        name -> (func(means, n), column names).
    n_boot, seed, ci, method, starts, sizes, engine, blocked_above
        See :func:`uqviz._array.resample.resample_sums` and :func:`uqviz._array.bca.interval`.
    clusters : ndarray of int, shape (M,), optional
        Group code of each point (:func:`uqviz._array.clusters.group_codes`): whole groups are
        resampled inside each bin and BCa's acceleration is the delete-one-group jackknife's
        (:mod:`uqviz._array.clusters`).

    Returns
    -------
    dict
        name -> :class:`BootstrapResult`.

    Examples
    --------
    >>> from uqviz._array.stats import zms
    >>> e, u = np.array([1.0, -2.0, 0.5, 1.5]), np.ones(4)
    >>> r = bootstrap_moments(e, u, {"ZMS": (zms, ("Z2",))}, n_boot=200, seed=1)["ZMS"]
    >>> float(r.estimate[0]), r.replicates.shape
    (1.875, (1, 200))
    """
    names = sorted({c for _, cols in stats.values() for c in cols})
    k = log2_scale(e, u)
    cols = make_columns(e, u, names, k)
    starts, sizes = _check_groups(len(cols), starts, sizes, method)
    if clusters is not None:
        return _cluster_moments(
            cols,
            names,
            k,
            stats,
            clusters,
            starts,
            sizes,
            n_boot,
            seed,
            ci,
            method,
            engine,
            blocked_above,
        )
    sums = resample_sums(
        cols, n_boot, seed, starts=starts, sizes=sizes, engine=engine, blocked_above=blocked_above
    )
    n = sizes.astype(float)
    rep_means = _as_dict(sums / n[:, None, None], names, k)
    means = _as_dict(_segment_sum(cols, starts) / n[:, None], names, k)
    out = {}
    for name, (func, _) in stats.items():
        est = evaluate(name, func, means, n)
        with np.errstate(all="ignore"):
            reps = np.asarray(func(rep_means, n[:, None]), dtype=float)
        accel = (
            _moment_jackknife_accel(cols, names, func, starts, sizes, k)
            if method == "bca"
            else None
        )
        out[name] = _result(est, reps, ci, method, accel=accel)
    return out


def _cluster_moments(
    cols, names, k, stats, codes, starts, sizes, n_boot, seed, ci, method, engine, blocked_above
):
    """:func:`bootstrap_moments` resampling whole groups (:mod:`uqviz._array.clusters`)."""
    agg = clusters.aggregate(cols, codes, starts, sizes)
    sums, counts = clusters.resample_cluster_sums(
        agg, n_boot, seed, engine=engine, blocked_above=blocked_above
    )
    n = sizes.astype(float)
    with np.errstate(all="ignore"):
        rep_means = _as_dict(sums / counts[..., None], names, k)
    means = _as_dict(_segment_sum(cols, starts) / n[:, None], names, k)
    out = {}
    for name, (func, _) in stats.items():
        est = evaluate(name, func, means, n)
        with np.errstate(all="ignore"):
            reps = np.asarray(func(rep_means, counts), dtype=float)
        accel = None
        if method == "bca":
            accel = clusters.jackknife_accel(agg, lambda m, w, f=func: f(_as_dict(m, names, k), w))
        out[name] = _result(est, reps, ci, method, accel=accel)
    return out


def _generic_jackknife(func, e, u, max_groups=JACKKNIFE_GROUPS):
    """Jackknife of ``func(e, u)``: leave-one-out, delete-group above ``max_groups`` points."""
    m = e.shape[-1]
    edges = np.linspace(0, m, min(m, max_groups) + 1).round().astype(np.int64)
    jack = np.empty(edges.size - 1)
    keep = np.ones(m, dtype=bool)
    with np.errstate(all="ignore"):
        for g in range(edges.size - 1):
            keep[edges[g] : edges[g + 1]] = False
            jack[g] = func(e[keep], u[keep])
            keep[edges[g] : edges[g + 1]] = True
    return jack


def _counts(idx, m):
    rows = idx.shape[0]
    flat = (idx + m * np.arange(rows)[:, None]).ravel()
    return np.bincount(flat, minlength=rows * m).reshape(rows, m).astype(float)


def bootstrap_generic(e, u, stats, *, n_boot, rng, ci=0.95, method="bca", clusters=None):
    """Paired bootstrap of statistics ``func(e, u)`` on index resamples.

    ``stats``: name -> (func, counts), ``counts`` None or ``(prepare(e, u),
    f(counts, prepared))`` for an O(M) evaluation from draw counts. Returns
    name -> :class:`BootstrapResult` (group axis of 1). ``clusters`` (group code per
    point): whole groups are resampled (:func:`_cluster_generic`).

    Examples
    --------
    >>> from uqviz._array.stats import spearman_cc
    >>> e, u = np.array([0.1, -0.5, 1.0, 2.0, -3.0]), np.arange(1.0, 6.0)
    >>> r = bootstrap_generic(e, u, {"CC": (spearman_cc, None)}, n_boot=100, rng=0)["CC"]
    >>> float(r.estimate[0])
    1.0
    """
    rng = np.random.default_rng(rng)
    if clusters is not None:
        return _cluster_generic(e, u, stats, clusters, n_boot, rng, ci, method)
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
        with np.errstate(all="ignore"):
            for name, (func, c) in stats.items():
                reps[name][b0:b1] = func(es, us) if c is None else c[1](counts, prepared[name])
    out = {}
    for name, (func, _) in stats.items():
        est = evaluate(name, lambda _m, f=func: f(e, u), {})
        jack = _generic_jackknife(func, e, u) if method == "bca" else None
        r = _result(est, reps[name], ci, method, jackknife=jack)
        out[name] = BootstrapResult(
            r.estimate[None],
            r.replicates[None],
            r.lower[None],
            r.upper[None],
            None if method != "bca" else r.z0[None],
            None if method != "bca" else np.atleast_1d(r.accel),
        )
    return out


def _cluster_generic(e, u, stats, codes, n_boot, rng, ci, method):
    """:func:`bootstrap_generic` resampling whole groups: each replicate draws G groups with
    replacement and takes all their points; the jackknife deletes one group at a time (blocks
    of groups above ``clusters.JACKKNIFE_BLOCKS`` groups)."""
    codes = np.asarray(codes, dtype=np.int64)
    n_groups = int(codes.max()) + 1
    members = clusters.group_members(codes, n_groups)
    reps = {name: np.empty(n_boot) for name in stats}
    prepared = {name: c[0](e, u) for name, (_, c) in stats.items() if c is not None}
    for b in range(n_boot):
        drawn = rng.integers(0, n_groups, size=n_groups)
        pts = clusters.replicate_points(members, drawn)
        weights = np.bincount(drawn, minlength=n_groups).astype(float)[codes]
        with np.errstate(all="ignore"):
            for name, (func, c) in stats.items():
                reps[name][b] = (
                    func(e[pts], u[pts]) if c is None else c[1](weights[None], prepared[name])[0]
                )
    block, n_blocks = clusters.jackknife_blocks(n_groups)
    out = {}
    for name, (func, _) in stats.items():
        est = evaluate(name, lambda _m, f=func: f(e, u), {})
        jack = None
        if method == "bca":
            with np.errstate(all="ignore"):
                jack = np.array(
                    [func(e[block[codes] != j], u[block[codes] != j]) for j in range(n_blocks)]
                )
        r = _result(est, reps[name], ci, method, jackknife=jack)
        out[name] = BootstrapResult(
            r.estimate[None],
            r.replicates[None],
            r.lower[None],
            r.upper[None],
            None if method != "bca" else r.z0[None],
            None if method != "bca" else np.atleast_1d(r.accel),
        )
    return out


def bootstrap_binned(
    e, u, stats, *, n_bins, n_boot, seed, ci=0.95, method="bca", engine=None, key=None
):
    """Paired bootstrap of binned and moment statistics, re-binning every resample by uE.

    Parameters
    ----------
    e, u : ndarray, shape (M,)
    stats : dict
        name -> (kind, func, columns), kind "binned" (``func(bin_means)``) or "moments".
    n_bins, n_boot, seed, ci, method, engine
        As in :func:`bootstrap_moments`.
    key : ndarray, shape (M,), optional
        Binning variable (default uE).

    Returns
    -------
    dict
        name -> :class:`BootstrapResult` (group axis of 1).

    Examples
    --------
    >>> from uqviz._array.binned import ence_from_means
    >>> rng = np.random.default_rng(0)
    >>> u = rng.uniform(1, 2, 100); e = u * rng.standard_normal(100)
    >>> r = bootstrap_binned(e, u, {"ENCE": ("binned", ence_from_means, ("E2", "V"))},
    ...                      n_bins=5, n_boot=100, seed=1)["ENCE"]
    >>> r.replicates.shape
    (1, 100)
    """
    order = np.argsort(u if key is None else key, kind="stable")
    e, u = e[order], u[order]
    names = sorted({c for _, _, cols in stats.values() for c in cols})
    m = len(e)
    if not 1 <= n_bins <= m // 2:
        raise ValueError(
            f"n_bins = {n_bins} bins leave fewer than 2 points per bin for "
            f"M = {m} points: use n_bins <= {max(m // 2, 1)}"
        )
    k = log2_scale(e, u)
    cols = make_columns(e, u, names, k)
    bounds = binned_kernels.equal_count_bounds(m, n_bins)
    sizes = np.diff(bounds).astype(float)
    sums = resample_binned(cols, bounds, n_boot, seed, engine=engine)  # (B, n_bins, k)
    data_bins = _as_dict(np.add.reduceat(cols, bounds[:-1], axis=0) / sizes[:, None], names, k)
    rep_bins = _as_dict(sums / sizes[None, :, None], names, k)
    rep_tot = _as_dict(sums.sum(axis=1) / m, names, k)
    out = {}
    for name, (kind, func, _) in stats.items():
        accel = None
        if kind == "binned":
            est = evaluate(name, func, data_bins)
            with np.errstate(all="ignore"):
                reps = np.asarray(func(rep_bins), dtype=float)
            if method == "bca":
                with np.errstate(all="ignore"):
                    loo = binned_kernels.loo_binned_values(
                        cols, n_bins, lambda b: func(_as_dict(b, names, k))
                    )
                    accel = bca.acceleration(loo[None, :])
        else:
            est = evaluate(name, func, _as_dict(cols.mean(axis=0), names, k), m)
            with np.errstate(all="ignore"):
                reps = np.asarray(func(rep_tot, m), dtype=float)
            if method == "bca":
                accel = _moment_jackknife_accel(cols, names, func, np.array([0]), np.array([m]), k)
        out[name] = _result(est[None], reps[None], ci, method, accel=accel)
    return out


def bootstrap_generic_groups(func, e, u, starts, sizes, *, n_boot, seed, ci=0.95, method="bca"):
    """Bootstrap of a generic statistic ``func(e, u)`` in each contiguous group.

    The groups of one size are resampled together (``func`` is vectorised over leading
    axes), so thousands of bins cost a few array passes; one stream ``seed`` serves all the
    groups in order (groups by increasing size, then by position), so the intervals
    reproduce with the same seed. The BCa acceleration uses the jackknife, leave-one-out up
    to ``JACKKNIFE_GROUPS`` points and delete-group above.

    Parameters
    ----------
    func : callable
        ``func(e, u)`` along the last axis.
    e, u : ndarray, shape (M,)
        Errors and uncertainties, grouped contiguously.
    starts, sizes : ndarray of int
    n_boot : int
    seed : int or numpy.random.SeedSequence
    ci : float
    method : {"bca", "percentile", "basic"}

    Returns
    -------
    tuple of ndarray
        Estimate, lower and upper bound per group.

    Examples
    --------
    >>> e = np.array([0.5, -1.0, 2.0, -0.3, 1.2, -2.2])
    >>> est, lo, hi = bootstrap_generic_groups(lambda x, y: x.mean(axis=-1), e, np.ones(6),
    ...                                        np.array([0, 3]), np.array([3, 3]), n_boot=200,
    ...                                        seed=0, method="percentile")
    >>> [round(float(v), 3) for v in est]
    [0.5, -0.433]
    """
    e = np.asarray(e, dtype=float)
    u = np.asarray(u, dtype=float)
    starts = np.asarray(starts, dtype=np.int64)
    sizes = np.asarray(sizes, dtype=np.int64)
    rng = np.random.default_rng(seed)
    est = np.empty(sizes.size)
    lower = np.empty(sizes.size)
    upper = np.empty(sizes.size)
    for n in np.unique(sizes):
        which = np.flatnonzero(sizes == n)
        rows = starts[which, None] + np.arange(n)[None, :]
        es, us = e[rows], u[rows]
        with np.errstate(all="ignore"):
            est_n = np.asarray(func(es, us), dtype=float)
        reps = np.empty((which.size, n_boot))
        chunk = max(1, GENERIC_CHUNK_ELEMENTS // (n_boot * n))
        for g0 in range(0, which.size, chunk):
            g1 = min(which.size, g0 + chunk)
            idx = rng.integers(0, n, size=(g1 - g0, n_boot, n))
            eb = np.take_along_axis(es[g0:g1, None, :], idx, axis=-1)
            ub = np.take_along_axis(us[g0:g1, None, :], idx, axis=-1)
            with np.errstate(all="ignore"):
                reps[g0:g1] = func(eb, ub)
        jack = None
        if method == "bca":
            edges = np.linspace(0, n, min(n, JACKKNIFE_GROUPS) + 1).round().astype(np.int64)
            jack = np.empty((which.size, edges.size - 1))
            keep = np.ones(n, dtype=bool)
            with np.errstate(all="ignore"):
                for g in range(edges.size - 1):
                    keep[edges[g] : edges[g + 1]] = False
                    jack[:, g] = func(es[:, keep], us[:, keep])
                    keep[edges[g] : edges[g + 1]] = True
        r = _result(est_n, reps, ci, method, jackknife=jack)
        est[which], lower[which], upper[which] = r.estimate, r.lower, r.upper
    return est, lower, upper
