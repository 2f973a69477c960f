"""Bootstrap engine: check E and uE, pick the path of :mod:`uqviz._array.bootstrap`.

Bad data (non-finite E or uE, uE <= 0, Z overflowing, M < 2) and statistics
undefined or not representable for the data are ValueErrors; degenerate
bootstrap distributions give NaN bounds (``result.degenerate``).

Examples
--------
>>> check_points([1.0, -1.0], [1.0, 2.0])[1].tolist()
[1.0, 2.0]
"""

from __future__ import annotations

import numpy as np

from uqviz._array import bca
from uqviz._array import stats as stats_kernels
from uqviz._array.bca import METHODS
from uqviz._array.lazy import lazy_module
from uqviz.engine import checks, seeds
from uqviz.engine.options import BootstrapOptions
from uqviz.engine.parallel import resolve_client, run_split, run_task
from uqviz.engine.statistics import (
    DEFAULT_N_BINS,
    binned_estimate,
    excess_over_reference,
    get_statistic,
    reference_value,
)

bootstrap_kernels = lazy_module("uqviz._array.bootstrap")
rank_kernels = lazy_module("uqviz._array.rank")
resample_kernels = lazy_module("uqviz._array.resample")

__all__ = ["bootstrap_statistics", "check_points", "split_moments"]


def _as_generic(stat, n_bins):
    if stat.kind == "generic":
        return stat.func, stat.counts
    if stat.kind == "binned":

        def binned(e, u):
            return binned_estimate(stat, e, u, n_bins)

        return binned, None

    def func(e, u):
        return stat.func(stats_kernels.column_means(e, u, stat.columns), np.shape(e)[-1])

    return func, None


def check_points(e, u, *, minimum=2):
    """Errors and uncertainties as float64 1-D arrays, or a ValueError counting bad points."""
    e = np.ascontiguousarray(e, dtype=float)
    u = np.ascontiguousarray(u, dtype=float)
    if e.ndim != 1 or e.shape != u.shape:
        raise ValueError(
            f"E and uE must be 1-D arrays of the same length, got shapes {e.shape} and {u.shape}"
        )
    if e.size < minimum:
        raise ValueError(
            f"data: the bootstrap needs at least {minimum} points (E, uE), got M = {e.size}"
        )
    bad_e = int(np.count_nonzero(~np.isfinite(e)))
    bad_u = int(np.count_nonzero(~np.isfinite(u) | ~(u > 0)))
    if bad_e or bad_u:
        raise ValueError(
            f"E must be finite and uE finite and > 0: {bad_e} point(s) with "
            f"non-finite E, {bad_u} with non-finite or non-positive uE"
        )
    with np.errstate(over="ignore"):
        bad_z = ~np.isfinite(e / u)
    if bad_z.any():
        raise ValueError(
            f"Z = E/uE overflows float64 for {int(bad_z.sum())} point(s) "
            f"(uE down to {u[bad_z].min():.3g}): rescale or drop them"
        )
    return e, u


def _check_cc(names, e, u):
    if "CC" not in names:
        return
    for label, x in (("uE", u), ("|E|", np.abs(e))):
        if np.all(x == x[0]):
            raise ValueError(
                f"CC (rank correlation of |E| and uE) is undefined: {label} is "
                f"constant ({x[0]:.6g} for all {x.size} points)"
            )


def _cc_blocks(first, last, shared):
    prepared, n_boot, seed = shared
    return rank_kernels.cc_bootstrap(prepared, n_boot, seed, blocks=(first, last))


def _bootstrap_cc(e, u, *, n_boot, seed, ci, method, client):
    """CC alone: replicates from draw counts on ranks computed once (O(M) per replicate).

    Blocks of replicates have their own streams, so they are split over the dask workers
    with the same numbers; the jackknife (delete-group above 1000 points, as
    :func:`uqviz._array.bootstrap.bootstrap_generic`) is O(M) per group.
    """
    prepared = rank_kernels.cc_prepare(e, u)
    parts = run_split(
        _cc_blocks, rank_kernels.n_blocks(n_boot), shared=(prepared, n_boot, seed), client=client
    )
    reps = np.concatenate(parts)
    with np.errstate(all="ignore"):
        est = np.asarray(stats_kernels.spearman_cc(e, u), dtype=float)
    jack = None
    if method == "bca":
        m = e.size
        n_groups = min(m, bootstrap_kernels.JACKKNIFE_GROUPS)
        edges = np.linspace(0, m, n_groups + 1).round().astype(np.int64)
        jack = rank_kernels.cc_jackknife(prepared, edges)
    ivl = bca.interval(est, reps, ci=ci, method=method, jackknife=jack)

    def bca_only(x):
        return None if method != "bca" else np.atleast_1d(x)

    return {
        "CC": bootstrap_kernels.BootstrapResult(
            est[None],
            reps[None],
            np.atleast_1d(ivl["lower"]),
            np.atleast_1d(ivl["upper"]),
            bca_only(ivl.get("z0")),
            bca_only(ivl.get("a")),
        )
    }


def _moments_groups(first, last, shared):
    e, u, stats, n_boot, gseeds, ci, method, starts, sizes, engine, *more = shared
    blocked_above = more[0] if more else None
    codes = more[1] if len(more) > 1 else None
    lo, hi = starts[first], starts[last - 1] + sizes[last - 1]
    return bootstrap_kernels.bootstrap_moments(
        e[lo:hi],
        u[lo:hi],
        stats,
        clusters=None if codes is None else codes[lo:hi],
        n_boot=n_boot,
        seed=gseeds[first:last],
        ci=ci,
        method=method,
        starts=starts[first:last] - lo,
        sizes=sizes[first:last],
        engine=engine,
        blocked_above=blocked_above,
    )


def split_moments(
    e,
    u,
    stats,
    *,
    n_boot,
    seed,
    ci,
    method,
    starts,
    sizes,
    engine,
    client,
    blocked_above=None,
    clusters=None,
):
    """Moment statistics; on a client, groups (bins) split over the workers.

    Every group has its own seed (:func:`uqviz._array.resample.group_seeds`), so the
    split does not change the numbers. One group runs as one task (the resampling kernel
    computes all its replicates). ``blocked_above``: as
    :func:`uqviz._array.resample.resample_sums`; ``clusters``: group code per point, whole
    groups resampled inside each bin (:mod:`uqviz._array.clusters`).
    """
    kwargs = dict(n_boot=n_boot, ci=ci, method=method, engine=engine, blocked_above=blocked_above)
    if clusters is not None:
        kwargs["clusters"] = clusters
    if client is None or starts is None or len(sizes) < 2:
        return run_task(
            bootstrap_kernels.bootstrap_moments,
            e,
            u,
            stats,
            seed=seed,
            starts=starts,
            sizes=sizes,
            client=client,
            **kwargs,
        )
    kwargs.pop("clusters", None)
    starts = np.asarray(starts, dtype=np.int64)
    sizes = np.asarray(sizes, dtype=np.int64)
    gseeds = resample_kernels.group_seeds(seed, len(sizes))
    parts = run_split(
        _moments_groups,
        len(sizes),
        client=client,
        shared=(
            e,
            u,
            stats,
            n_boot,
            gseeds,
            ci,
            method,
            starts,
            sizes,
            engine,
            blocked_above,
            clusters,
        ),
    )
    out = {}
    for name in stats:
        rs = [p[name] for p in parts]

        def cat(field, rs=rs):
            if getattr(rs[0], field) is None:
                return None
            return np.concatenate([getattr(r, field) for r in rs])

        out[name] = bootstrap_kernels.BootstrapResult(
            *(cat(f) for f in ("estimate", "replicates", "lower", "upper", "z0", "accel"))
        )
    return out


def bootstrap_statistics(
    e,
    u,
    statistics,
    *,
    n_boot=10_000,
    ci=0.95,
    method="bca",
    rng=None,
    engine=None,
    starts=None,
    sizes=None,
    n_bins=DEFAULT_N_BINS,
    key=None,
    client=None,
    clusters=None,
):
    """Paired bootstrap of several statistics on one set of points.

    Parameters
    ----------
    e, u : ndarray, shape (M,)
    statistics : sequence of str or Statistic
    n_boot, ci, method, rng, engine
        As in :func:`uqviz._array.bootstrap.bootstrap_moments`.
    starts, sizes : array_like of int, optional
        Contiguous groups of rows, each resampled on its own (moment statistics only).
    n_bins : int, default 20
        Equal-count bins of uE of the binned statistics.
    key : ndarray, shape (M,), optional
        Binning variable of the binned statistics (default uE).
    client : None, "local" or dask.distributed.Client
        Where the replicates are computed (docs/conventions.md); the numbers do not
        depend on it. CC's blocks of replicates and the groups of a grouped bootstrap are
        split over the workers; other paths run as one task.
    clusters : ndarray of int, shape (M,), optional
        Group code of each point (:func:`uqviz._array.clusters.group_codes`): the cluster
        bootstrap resamples whole groups (Davison & Hinkley (1997), section 3.8) and takes
        BCa's acceleration from the delete-one-group jackknife. Moment statistics go through
        the resampling engine (its numbers on any threads or workers); CC, binned and
        generic statistics through index resamples of the groups.

    Returns
    -------
    dict
        name -> :class:`uqviz._array.bootstrap.BootstrapResult` (leading group axis).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> u = rng.uniform(0.5, 2.0, 500); e = u * rng.standard_normal(500)
    >>> res = bootstrap_statistics(e, u, ["ZMS", "RCE"], n_boot=2000, rng=1)
    >>> bool(res["ZMS"].lower[0] < 1.0 < res["ZMS"].upper[0])
    True
    """
    boot = BootstrapOptions.check(
        n_boot=n_boot, ci=ci, method=method, rng=rng, engine=engine, methods=METHODS
    )
    rng = checks.rng(rng)
    n_boot, ci, method = boot.n_boot, boot.ci, boot.method  # engine: passed on as given
    stats = [get_statistic(s) for s in checks.names("statistics", statistics)]
    if len({s.name for s in stats}) != len(stats):
        raise ValueError(f"statistics must be distinct, got {[s.name for s in stats]}")
    e, u = check_points(e, u)
    _check_cc({s.name for s in stats}, e, u)
    client = resolve_client(client)
    kinds = {s.kind for s in stats}
    if clusters is not None:
        clusters = _check_clusters(clusters, e.size)
    if clusters is not None and kinds != {"moments"}:
        if starts is not None or key is not None:
            raise ValueError(
                "the cluster bootstrap of CC, binned and generic statistics takes no bins"
            )
        return run_task(
            bootstrap_kernels.bootstrap_generic,
            e,
            u,
            {s.name: _as_generic(s, n_bins) for s in stats},
            n_boot=n_boot,
            rng=rng,
            ci=ci,
            method=method,
            clusters=clusters,
            client=client,
        )
    if kinds == {"moments"}:
        return split_moments(
            e,
            u,
            {s.name: (s.func, s.columns) for s in stats},
            n_boot=n_boot,
            seed=seeds.kernel_seed(rng),
            ci=ci,
            method=method,
            starts=starts,
            sizes=sizes,
            engine=engine,
            client=client,
            clusters=clusters,
        )
    if [s.name for s in stats] == ["CC"] and starts is None:
        return _bootstrap_cc(
            e, u, n_boot=n_boot, seed=seeds.kernel_seed(rng), ci=ci, method=method, client=client
        )
    if starts is not None:
        raise ValueError("grouped bootstrap is available for moment statistics only")
    if "binned" in kinds:
        n_bins = checks.count("n_bins", n_bins, minimum=1)
        if n_bins > e.size // 2:
            raise ValueError(
                f"n_bins = {n_bins} leaves fewer than 2 points per bin for "
                f"M = {e.size} points: use n_bins <= {max(e.size // 2, 1)}"
            )
    if key is not None:
        key = checks.finite_array("key", key, ndim=1)
        if key.shape != e.shape:
            raise ValueError(f"key must have one value per point ({e.size}), got {key.size}")
    if "generic" not in kinds:
        return run_task(
            bootstrap_kernels.bootstrap_binned,
            e,
            u,
            {s.name: (s.kind, s.func, s.columns) for s in stats},
            n_bins=n_bins,
            n_boot=n_boot,
            seed=seeds.kernel_seed(rng),
            ci=ci,
            method=method,
            engine=engine,
            key=key,
            client=client,
        )
    if key is not None:
        raise ValueError(
            "a binning variable other than uE is available for binned and moment statistics only"
        )
    return run_task(
        bootstrap_kernels.bootstrap_generic,
        e,
        u,
        {s.name: _as_generic(s, n_bins) for s in stats},
        n_boot=n_boot,
        rng=rng,
        ci=ci,
        method=method,
        client=client,
    )


def _check_clusters(clusters, m):
    codes = np.asarray(clusters)
    if codes.shape != (m,) or codes.dtype.kind not in "iu":
        raise ValueError(
            f"clusters: need one integer group code per point ({m}), got shape {codes.shape} "
            f"of dtype {codes.dtype}; see uqviz._array.clusters.group_codes"
        )
    return codes.astype(np.int64)


def bootstrap_against_reference(e, u, statistics, **kwargs):
    """:func:`bootstrap_statistics` of the statistics, paired with their data-dependent references.

    A statistic whose reference is itself a statistic of the data (NLL) is bootstrapped as its
    excess over the reference (:func:`~uqviz.engine.statistics.excess_over_reference`), then
    shifted back by the full-data reference: the interval holds the uncertainty of the
    comparison, not the spread of the reference (for NLL, that of ZMS). Every validation of
    such a statistic goes through here, so that all of them give the same verdict.

    Parameters
    ----------
    e, u : ndarray
        Errors and uncertainties (last axis = points).
    statistics : sequence of Statistic
    **kwargs
        Passed to :func:`bootstrap_statistics`.

    Returns
    -------
    dict
        Statistic name -> :class:`uqviz._array.bootstrap.BootstrapResult`.

    Examples
    --------
    >>> import numpy as np
    >>> from uqviz.engine.statistics import get_statistic
    >>> rng = np.random.default_rng(0)
    >>> u = rng.uniform(0.5, 2, 500); e = u * rng.standard_normal(500)
    >>> r = bootstrap_against_reference(e, u, [get_statistic("NLL")], n_boot=200, rng=1)["NLL"]
    >>> bool(r.lower[0] < r.estimate[0] < r.upper[0])
    True
    """
    todo = [excess_over_reference(s) for s in statistics]
    res = bootstrap_statistics(e, u, todo, **kwargs)
    out = {}
    for s, t in zip(statistics, todo):
        r = res[t.name]
        if t is not s:  # shift the excess by the full-data reference
            shift = reference_value(s, e, u)
            r = bootstrap_kernels.BootstrapResult(
                r.estimate + shift,
                r.replicates + shift,
                r.lower + shift,
                r.upper + shift,
                r.z0,
                r.accel,
            )
        out[s.name] = r
    return out
