"""Conditional calibration: local statistics per bin (LZM, LZMS, LRCE, LZV, LZISD, LRR;
Pernot (2023))."""

from __future__ import annotations

import contextlib
import warnings

import numpy as np
import xarray as xr

from uqviz._array import stats as stats_kernels
from uqviz._array.bca import verdict
from uqviz._array.binomial import lower_critical, poisson_binomial_cdf, wilson_interval
from uqviz._array.lazy import lazy_module
from uqviz.conditional.null import NULL_MAX_BOOT, NULL_N_MC, null_coverage, picp_null_coverage
from uqviz.data.generative import get_generative
from uqviz.data.model import check_dataset
from uqviz.engine.options import warn_points_independent
from uqviz.engine import checks, seeds
from uqviz.engine.binning import (
    SCHEMES,
    SMALL_BIN,
    bin_coords,
    compute_bins,
    conditioning_values,
    default_n_bins,
)
from uqviz.engine.statistics import (
    BINNED_STATISTICS,
    DEFAULT_N_BINS,
    get_statistic,
    list_statistics,
)
from uqviz.engine.bootstrap import split_moments
from uqviz.engine.deprecation import REMOVED_IN
from uqviz.engine.descriptions import describe
from uqviz.engine.options import BinningSpec, BootstrapOptions, streams
from uqviz.engine.parallel import resolve_client
from uqviz.engine.tree import map_datasets
from uqviz.engine.warning_classes import BinningWarning, NumericalWarning, UnreliableWarning
from uqviz.scores.coverage import generative_for

binned_kernels = lazy_module("uqviz._array.binned")
bootstrap_kernels = lazy_module("uqviz._array.bootstrap")
clusters_kernels = lazy_module("uqviz._array.clusters")
sps = lazy_module("scipy.stats")

__all__ = [
    "local_calibration",
    "local_interval_coverage",
    "fraction_valid",
    "acf",
    "binned_errors",
    "local_streams",
    "LOCAL_STATISTICS",
    "BINNED_ERRORS",
    "SMALL_BIN",
    "HEAVY_TAIL_Z2",
]

#: the local statistics of Pernot (2023); local_calibration and ordering_study also take any
#: registered moment statistic with a predefined reference (local_statistics())
LOCAL_STATISTICS = ("ZMS", "ZM", "RCE", "ZVar")
COVERAGE_STATISTIC = "PICP"  # local interval coverage, with a binomial (Wilson) interval
BOOTSTRAP_METHODS = ("bca", "percentile", "basic")
HEAVY_TAIL_Z2 = 0.8  # beta_GM(Z^2) limit of Pernot (2024b), Table II


def local_streams(rng):
    """The random streams of :func:`local_calibration` for one dataset: (ties Generator,
    bootstrap seed).

    Parameters
    ----------
    rng : None, int, numpy.random.SeedSequence or numpy.random.Generator
        Random stream: None (fresh entropy), an int >= 0, a numpy.random.SeedSequence (copied,
        never consumed) or a numpy.random.Generator (docs/conventions.md, "Randomness").

    Returns
    -------
    tuple of (numpy.random.Generator, int)

    Examples
    --------
    >>> local_streams(0)[1] == local_streams(0)[1]
    True
    """
    s = streams(rng, "ties", "boot")
    return s.ties, seeds.kernel_seed(s.boot)


def _n_bins_for(m, n_bins):
    n = default_n_bins(m) if n_bins is None else n_bins
    if not 1 <= n <= m:
        raise ValueError(f"n_bins must be between 1 and the number of points ({m}), got {n}")
    return n


@contextlib.contextmanager
def _named_warnings(name):
    """Re-emit the block's warnings with the dataset's name."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield
    for w in caught:
        text = str(w.message)
        if name and repr(name) not in text:  # a name such as 'a' is in most texts
            text = f"{text} (dataset {name!r})"
        if "tie" in text.lower() and "stratified" not in text:
            text += "; binning='stratified' puts each distinct value in one bin"
        warnings.warn(text, w.category, stacklevel=4)


def compute_local_bins(
    ds,
    conditioning,
    *,
    n_bins,
    binning,
    min_count=None,
    edges=None,
    log=False,
    rng=None,
    min_size=2,
):
    """Conditioning name and bins of one dataset, warnings tagged with its name."""
    name, x = conditioning_values(ds, conditioning)
    n = _n_bins_for(x.size, n_bins) if binning in ("equal_count", "equal_width") else n_bins
    with _named_warnings(ds.attrs.get("name", "")):
        bins = compute_bins(
            x, n_bins=n, binning=binning, min_count=min_count, edges=edges, log=log, rng=rng
        )
    if np.any(bins.sizes < min_size):
        small = int(np.sum(bins.sizes < min_size))
        most = x.size // min_size
        remedy = (
            f"use at most {most} bins (n_bins=)"
            if most >= 1
            else f"the data hold {x.size} points, fewer than {min_size}: no bin can be cut"
        )
        if most >= 1 and binning != "equal_count":
            remedy += ", binning='equal_count' or a min_count that merges small bins"
        raise ValueError(
            f"n_bins = {bins.n_bins} ({binning}): {small} bins have fewer than "
            f"{min_size} points ({x.size} points in all); {remedy}"
        )
    return name, bins


def student_t_interval(z, starts, sizes, ci):
    """Mean of ``z`` per contiguous group with its Student-t interval.

    Parameters
    ----------
    z : ndarray
    starts, sizes : ndarray of int
    ci : float

    Returns
    -------
    tuple of ndarray
        Mean, lower and upper bound per group.

    Examples
    --------
    >>> import numpy as np
    >>> est, lo, hi = student_t_interval(np.array([0.0, 2.0]), np.array([0]), np.array([2]), 0.9)
    >>> float(est[0])
    1.0
    """
    means = np.add.reduceat(z, starts) / sizes
    dev2 = (z - np.repeat(means, sizes)) ** 2
    sd = np.sqrt(np.add.reduceat(dev2, starts) / (sizes - 1))
    half = sps.t.ppf((1.0 + ci) / 2.0, sizes - 1) * sd / np.sqrt(sizes)
    return means, means - half, means + half


def cluster_t_interval(z, starts, sizes, ci, codes):
    """Mean of ``z`` per bin with its cluster-robust Student-t interval (groups of points).

    The variance of a bin's mean from the deviations of its groups' sums, ``sum_g (S_g - n_g
    zbar)^2 / n^2``, with ``G_b - 1`` degrees of freedom for the ``G_b`` groups met in the bin
    (Cameron & Miller (2015), the CR1-free form); NaN bounds in a bin of fewer than 2 groups.

    Examples
    --------
    >>> import numpy as np
    >>> z = np.array([1.0, 1.0, -1.0, -1.0])
    >>> codes = np.array([0, 0, 1, 1])  # two groups: sums 2 and -2, var = 8 / 16, t with 1 df
    >>> est, lo, hi = cluster_t_interval(z, np.array([0]), np.array([4]), 0.9, codes)
    >>> float(est[0]), round(float(hi[0]), 4)
    (0.0, 4.4645)
    """
    agg = clusters_kernels.aggregate(z[:, None], codes, starts, sizes)
    means = np.add.reduceat(z, starts) / sizes
    bin_of = np.repeat(np.arange(sizes.size), agg.sizes)
    dev = agg.sums[:, 0] - agg.counts * means[bin_of]
    var = np.bincount(bin_of, dev**2, minlength=sizes.size) / sizes.astype(float) ** 2
    df = agg.sizes - 1
    with np.errstate(invalid="ignore", divide="ignore"):
        half = np.where(
            df > 0, sps.t.ppf((1.0 + ci) / 2.0, np.maximum(df, 1)) * np.sqrt(var), np.nan
        )
    return means, means - half, means + half


def _beta_gm_per_bin(z2, starts, sizes):
    """beta_GM of each contiguous group; groups of one size in one vectorised pass."""
    out = np.empty(len(sizes))
    sizes = np.asarray(sizes)
    starts = np.asarray(starts)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        for n in np.unique(sizes):
            idx = np.flatnonzero(sizes == n)
            rows = z2[starts[idx, None] + np.arange(n)[None, :]]
            out[idx] = stats_kernels.beta_gm(rows)
    return out


def bin_coverage(e, u, starts, sizes, *, level, generative, ci):
    """PICP per contiguous group: share of ``|E| <= uE q_D((1 + level) / 2)`` and its interval.

    The interval is the Wilson score interval with continuity correction of
    :func:`uqviz._array.binomial.wilson_interval`, the method of :func:`fraction_valid`; the
    per-bin kernel of :func:`local_interval_coverage`.

    Parameters
    ----------
    e, u : ndarray, shape (M,)
        Errors and uncertainties, grouped contiguously.
    starts, sizes : ndarray of int
    level : float
        Nominal coverage of the central interval.
    generative : Generative
        D of the intervals (its quantile function).
    ci : float

    Returns
    -------
    tuple of ndarray
        PICP, lower and upper bound per group.

    Examples
    --------
    >>> import numpy as np
    >>> from uqviz.generative import normal
    >>> est, lo, hi = bin_coverage(np.array([0.5, 3.0]), np.ones(2), np.array([0]),
    ...                            np.array([2]), level=0.95, generative=normal(), ci=0.95)
    >>> float(est[0])
    0.5
    """
    q = float(generative.ppf(0.5 + level / 2.0))
    with np.errstate(over="ignore"):
        inside = (np.abs(e / u) <= q).astype(np.int64)
    k = np.add.reduceat(inside, starts)
    lower, upper = wilson_interval(k, sizes, ci=ci, continuity=True)
    return k / sizes, lower, upper


def _intervals_of(statistic, boot):
    """``f(e, u, starts, sizes, seed) -> (estimate, lower, upper)`` per contiguous group of a
    bootstrapped statistic (or Student-t for ``boot.method == "student-t"``), with the
    bootstrap options ``boot``."""
    stat = get_statistic(statistic)
    if stat.kind == "generic":

        def f(e, u, starts, sizes, seed, clusters=None):
            if clusters is not None:
                return _cluster_generic_bins(stat, e, u, starts, sizes, seed, clusters, boot)
            return bootstrap_kernels.bootstrap_generic_groups(
                stat.func,
                e,
                u,
                starts,
                sizes,
                n_boot=boot.n_boot,
                seed=seed,
                ci=boot.ci,
                method=boot.method,
            )

        return f
    if boot.method == "student-t":

        def f(e, u, starts, sizes, seed, clusters=None):
            if clusters is not None:  # groups of points: the cluster-robust interval
                return cluster_t_interval(e / u, starts, sizes, boot.ci, clusters)
            return student_t_interval(e / u, starts, sizes, boot.ci)

        return f

    def f(e, u, starts, sizes, seed, clusters=None):
        r = split_moments(
            e,
            u,
            {statistic: (stat.func, stat.columns)},
            n_boot=boot.n_boot,
            seed=seed,
            ci=boot.ci,
            method=boot.method,
            starts=starts,
            sizes=sizes,
            engine=boot.engine,
            client=boot.client,
            clusters=clusters,
        )[statistic]
        return r.estimate, r.lower, r.upper

    return f


def _cluster_generic_bins(stat, e, u, starts, sizes, seed, codes, boot):
    """A generic statistic per bin, each bin's groups resampled whole (one stream per bin)."""
    out = np.full((3, len(sizes)), np.nan)
    for b, r in enumerate(seeds.spawn(seed, len(sizes))):
        sl = slice(starts[b], starts[b] + sizes[b])
        local = clusters_kernels.group_codes(codes[sl])[0]
        res = bootstrap_kernels.bootstrap_generic(
            e[sl],
            u[sl],
            {stat.name: (stat.func, None)},
            n_boot=boot.n_boot,
            rng=r,
            ci=boot.ci,
            method=boot.method,
            clusters=local,
        )[stat.name]
        out[:, b] = res.estimate[0], res.lower[0], res.upper[0]
    return out[0], out[1], out[2]


def heavy_flags(statistic, e, u, starts, sizes):
    """beta_GM(Z^2) per bin and the heavy-tail flag (never for PICP: a binomial interval is
    not narrowed by heavy tails)."""
    with np.errstate(over="ignore"):
        beta = _beta_gm_per_bin((e / u) ** 2, starts, sizes)
    heavy = np.zeros(beta.shape, bool) if statistic == COVERAGE_STATISTIC else beta > HEAVY_TAIL_Z2
    return beta, heavy


def counts_valid(valid, lower, upper):
    """A bin counts as valid in f_v (Pernot (2023)): its interval can be computed and holds
    the reference. A heavy-tailed bin counts as any other (the paper's f_v); it is counted
    beside f_v in ``n_unreliable`` by :func:`fraction_valid`.

    Examples
    --------
    >>> import numpy as np
    >>> counts_valid(np.array([True, True, False]), np.array([0.9, np.nan, 0.9]),
    ...              np.array([1.1, 1.1, 1.1])).tolist()
    [True, False, False]
    """
    finite = np.isfinite(lower) & np.isfinite(upper)
    return np.asarray(valid, bool) & finite


def _null(f, u, bins, *, ref, generative, n_mc, rng, n_boot, groups=None):
    """Null probability that each bin counts as valid (``uqviz.conditional.null``); ``groups``
    (codes in bin order, intraclass correlation): the null keeps the groups."""

    def ok(e, uu, starts, sizes, seed, clusters=None):
        est, lower, upper = f(e, uu, starts, sizes, seed, clusters=clusters)
        _, valid = verdict(est, ref, lower, upper)
        return counts_valid(valid, lower, upper)

    return null_coverage(
        u,
        bins.sizes,
        bins.starts,
        intervals=ok,
        generative=generative,
        n_mc=n_mc,
        rng=rng,
        n_boot=n_boot,
        groups=groups,
    )


def _binned_points(ds, spec, ties_rng, *, min_size):
    """``(name, bins, e, u)``: the bins of ``spec`` and the errors and uncertainties in bin
    order (ties broken with ``ties_rng`` when ``spec.random_ties``)."""
    name, bins = compute_local_bins(
        ds,
        spec.conditioning,
        **spec.kwargs,
        rng=ties_rng if spec.random_ties else None,
        min_size=min_size,
    )
    e = np.asarray(ds["E"].values, dtype=float)[bins.order]
    u = np.asarray(ds["uE"].values, dtype=float)[bins.order]
    return name, bins, e, u


def _bin_variables(statistic, e, u, bins, interval, ref):
    """The per-bin variables of a local result: estimate, interval, verdict, tail flags."""
    est, lower, upper = interval
    zeta, valid = verdict(est, ref, lower, upper)
    beta, heavy = heavy_flags(statistic, e, u, bins.starts, bins.sizes)
    return {
        "estimate": ("bin", est),
        "ci_lower": ("bin", lower),
        "ci_upper": ("bin", upper),
        "reference": ((), ref),
        "zeta": ("bin", zeta),
        "valid": ("bin", valid),
        "beta_gm_z2": ("bin", beta),
        "heavy_tail": ("bin", heavy),
    }


def _with_null(data_vars, p, se):
    data_vars["null_coverage"] = (
        "bin",
        p,
        {"long_name": "probability that the bin counts as valid for calibrated data"},
    )
    data_vars["null_coverage_se"] = ("bin", se)
    return data_vars


def _local_result(ds, name, bins, data_vars):
    out = xr.Dataset(
        data_vars,
        coords=bin_coords(bins),
        attrs={"conditioning": name, **bins.attrs, "n_bins": bins.n_bins},
    )
    _warn_bins(out, ds.attrs.get("name", ""))
    return out


def _local_one(ds, *, rng, statistic, spec, boot, generative="empirical", n_mc=NULL_N_MC):
    """One dataset of :func:`local_calibration`: ``spec`` a BinningSpec, ``boot`` the
    BootstrapOptions; ``generative`` the D of the calibrated null."""
    check_dataset(ds)
    s = streams(rng, "ties", "boot", "null")
    name, bins, e, u = _binned_points(ds, spec, s.ties, min_size=2)
    ref = float(get_statistic(statistic).reference)
    gboot = boot.for_data(ds)  # the cluster bootstrap when the points carry groups
    codes = None if gboot.clusters is None else gboot.clusters[bins.order]
    interval = _intervals_of(statistic, boot)(
        e, u, bins.starts, bins.sizes, seeds.kernel_seed(s.boot), clusters=codes
    )
    data_vars = _bin_variables(statistic, e, u, bins, interval, ref)
    groups = (
        None if codes is None else (codes, clusters_kernels.intraclass_correlation(e / u, codes))
    )
    if n_mc:
        null_boot = boot.replace(n_boot=min(boot.n_boot, NULL_MAX_BOOT))
        p, se = _null(
            _intervals_of(statistic, null_boot),
            u,
            bins,
            ref=ref,
            generative=get_generative(generative, ds),
            n_mc=n_mc,
            rng=s.null,
            n_boot=null_boot.n_boot,
            groups=groups,
        )
        _with_null(data_vars, p, se)
    out = _local_result(ds, name, bins, data_vars)
    if groups is not None:
        out.attrs.update(
            resample="groups", n_groups=gboot.attrs["n_groups"], z_intraclass=groups[1]
        )
    return out


def _coverage_one(ds, *, rng, spec, level, ci, generative, n_mc):
    """One dataset of :func:`local_interval_coverage` (the first stream of
    :func:`local_calibration`'s breaks the ties: the same bins for the same ``rng``)."""
    check_dataset(ds)
    warn_points_independent(ds, "local_interval_coverage")
    s = streams(rng, "ties")
    name, bins, e, u = _binned_points(ds, spec, s.ties, min_size=1)
    interval = bin_coverage(
        e, u, bins.starts, bins.sizes, level=level, generative=generative_for(generative, ds), ci=ci
    )
    data_vars = _bin_variables(COVERAGE_STATISTIC, e, u, bins, interval, level)
    if n_mc:
        _with_null(data_vars, *picp_null_coverage(bins.sizes, level=level, ci=ci))
    return _local_result(ds, name, bins, data_vars)


def _warn_bins(out, name):
    where = f" in {name!r}" if name else ""
    n = out.sizes["bin"]
    small = int((out["count"] < SMALL_BIN).sum())
    heavy = int(out["heavy_tail"].sum())
    no_interval = int((~np.isfinite(out["ci_lower"]) | ~np.isfinite(out["ci_upper"])).sum())
    if small:
        warnings.warn(
            f"{small} of {n} bins{where} have fewer than {SMALL_BIN} "
            "points: their intervals are unreliable",
            BinningWarning,
            stacklevel=4,
        )
    if heavy:
        warnings.warn(
            f"{heavy} of {n} bins{where} have beta_GM(Z^2) > "
            f"{HEAVY_TAIL_Z2} (heavy-tailed z-scores): their intervals may be too "
            "narrow (flagged in 'heavy_tail')",
            UnreliableWarning,
            stacklevel=4,
        )
    if no_interval:
        warnings.warn(
            f"{no_interval} of {n} bins{where} have no interval (degenerate "
            "bootstrap distribution or constant values): counted not valid",
            UnreliableWarning,
            stacklevel=4,
        )


def check_local_statistic(statistic, *, generic=False) -> str:
    """The ``statistic`` option of :func:`local_calibration` and :func:`ordering_study`.

    ``"PICP"`` (``local_calibration`` only: the caller decides), or the name of a registered
    statistic (:func:`uqviz.statistics.register_statistic`) of kind ``"moments"`` with a
    predefined numeric reference: the built-in ZMS, ZM, RCE, ZVar, RCE2, ZISD or one registered
    by the user; with ``generic=True`` (``local_calibration``) also a generic one with a numeric
    reference (the built-in RR), bootstrapped bin by bin. A bin's interval is compared with a
    number, so statistics without a reference (MSE, RMV, CC, ...) or with a reference computed
    from the same data (NLL) are refused, as are binned ones.

    Parameters
    ----------
    statistic : str
    generic : bool, default False
        Accept generic statistics (``local_calibration``; ``ordering_study`` takes moment
        statistics only).

    Returns
    -------
    str
        The name.

    Examples
    --------
    >>> check_local_statistic("RCE2")
    'RCE2'
    >>> check_local_statistic("ENCE")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: statistic must be a registered moment statistic with a predefined reference ...
    """
    if not isinstance(statistic, str):
        raise TypeError(
            f"statistic must be the name of a registered statistic, got "
            f"{statistic!r} ({type(statistic).__name__})"
        )
    if statistic == COVERAGE_STATISTIC:
        return statistic
    try:
        stat = get_statistic(statistic)
    except ValueError as exc:
        raise ValueError(f"statistic: {exc}") from None
    kinds = ("moments", "generic") if generic else ("moments",)
    if stat.kind not in kinds or stat.reference is None or stat.data_reference:
        why = (
            f"its kind is {stat.kind!r}"
            if stat.kind not in kinds
            else "it has no predefined reference"
            if stat.reference is None
            else f"its reference {stat.reference.name} is computed from the same data"
        )
        raise ValueError(
            f"statistic must be a registered moment {'or generic ' * generic}"
            f"statistic with a predefined "
            f"reference (built in: {', '.join(local_statistics(generic))}), or 'PICP' "
            f"for local_calibration; got {statistic!r}: {why}"
        )
    return stat.name


def local_statistics(generic=True) -> tuple:
    """Names of the registered statistics :func:`local_calibration` accepts besides "PICP".

    Parameters
    ----------
    generic : bool, default True
        Include the generic statistics with a numeric reference (RR); False: the moment
        statistics :func:`uqviz.ordering_study` takes.

    Returns
    -------
    tuple of str

    Examples
    --------
    >>> local_statistics()[:4]
    ('ZM', 'ZMS', 'ZVar', 'RCE')
    """
    return tuple(
        s
        for s in list_statistics()
        if (st := get_statistic(s)).kind in (("moments", "generic") if generic else ("moments",))
        and st.reference is not None
        and not st.data_reference
    )


def local_calibration(
    data,
    *,
    statistic="ZMS",
    conditioning="uE",
    n_bins=None,
    binning="equal_count",
    min_count=None,
    edges=None,
    log=False,
    n_boot=5000,
    ci=0.95,
    method=None,
    rng=None,
    engine=None,
    random_ties=False,
    level=None,
    generative=None,
    n_mc=NULL_N_MC,
    client=None,
):
    r"""Local calibration statistic per bin of a conditioning variable, with intervals.

    Each bin also gets ``null_coverage``: the probability that it would count as valid in
    f_v (interval computable and holding the reference, heavy-tailed or not, as Pernot
    (2023) counts) if the data were calibrated, measured on ``n_mc`` simulated calibrated
    bins with the data's own uE and bins, z-scores drawn from ``generative`` and the same
    interval method (``uqviz.conditional.null``). :func:`fraction_valid` tests the number of
    valid bins against it: Pernot (2023), section III.2.1, shows that bins of about 100
    points cover "at least 90 %", not 95 %, so the nominal level is not the reference of f_v.

    The local interval coverage (PICP per bin, with a Wilson interval) is
    :func:`local_interval_coverage`; ``statistic="PICP"`` still gives it for one release,
    with a FutureWarning.

    Parameters
    ----------
    data : xarray.Dataset or xarray.DataTree
        Errors ``E`` and standard uncertainties ``uE`` on dim ``point`` (with any features), as
        made by :func:`uqviz.from_arrays` and the other constructors; a DataTree gives one
        result per dataset, on dim ``dataset``.
    statistic : str, default "ZMS"
        ``"ZMS"``, ``"ZM"``, ``"RCE"``, ``"ZVar"`` (LZV), ``"ZISD"`` (LZISD), ``"RR"`` (LRR),
        ``"RCE2"``, or any registered statistic of kind ``"moments"`` or
        ``"generic"`` with a predefined numeric reference
        (:func:`uqviz.statistics.register_statistic`; the check is
        ``uqviz.conditional.local.check_local_statistic``). ``"PICP"`` is deprecated (removed
        in uqviz 0.3.0): it calls :func:`local_interval_coverage`.
    conditioning : str or array_like
        ``"uE"`` (consistency), a feature (adaptivity), or one value per point.
    n_bins : int, optional
        Number of bins; default ``min(round(sqrt(M)), M // 100)``, at least 1 (bins of at least
        100 points, Pernot (2023)).
    binning : {"equal_count", "equal_width", "stratified", "edges"}, default "equal_count"
        How the bins are cut: equal numbers of points, equal widths, one bin per distinct value
        (for few-valued features), or at the given ``edges``.
    min_count : int, optional
        Fewest points a bin may hold: smaller equal-width, stratified or edges bins are merged
        with their smaller neighbour (default 100 for "stratified", else no merging).
    edges : array_like, optional
        Strictly increasing, finite bin edges, for ``binning="edges"``.
    log : bool, default False
        Log-spaced widths for ``binning="equal_width"``.
    n_boot : int, default 5000
        Number of bootstrap replicates, an int >= 2.
    ci : float, default 0.95
        Confidence level of the intervals, in (0, 1).
    rng : None, int, numpy.random.SeedSequence or numpy.random.Generator, default None
        Random stream: None (fresh entropy), an int >= 0, a numpy.random.SeedSequence (copied,
        never consumed) or a numpy.random.Generator; the same ``rng`` gives the same numbers on
        any number of threads or workers (docs/conventions.md, "Randomness").
    engine : {"numba", "numpy"}, optional
        Resampling kernel of the bootstrap (default numba).
    method : {"bca", "percentile", "basic", "student-t"}, optional
        Default ``"student-t"`` for ZM (its only use), ``"bca"`` otherwise (deprecated
        ``statistic="PICP"``: ``"wilson"`` only, ``n_boot`` unused).
    random_ties : bool, default False
        Randomise the order of tied conditioning values.
    client : None, "local" or dask.distributed.Client, default None
        Where the bootstrap runs, bins split over the workers (docs/conventions.md); the
        numbers do not depend on it.
    level : float, optional
        Deprecated ``statistic="PICP"`` only: the ``level`` of
        :func:`local_interval_coverage` (default 0.95); refused with any other statistic.
    generative : str or Generative, optional
        D of the z-scores of the calibrated null (default ``"empirical"``: the data's own
        z-scores, centred and scaled to unit variance, so that the null has the shape of the
        data's errors; ``"normal"``, ``"t6"``, ...). Deprecated ``statistic="PICP"``: the D
        of the intervals, the ``generative`` of :func:`local_interval_coverage` (default
        ``"normal"``).
    n_mc : int, default 2000
        Simulated calibrated bins of the null (whole copies of the binned data, at least
        ``n_mc`` bins in all), each with ``min(n_boot, 1000)`` bootstrap replicates (the
        coverage of a bin's interval hardly changes beyond: 0.9360 with 1000 and 0.9402
        with 10 000 replicates, paired on 6000 bins of 118 points); 0: no null
        (``fraction_valid`` then needs ``method="wilson"``).

    Returns
    -------
    xarray.Dataset
        On ``bin``: ``estimate``, ``ci_lower``, ``ci_upper``, ``zeta``, ``valid``,
        ``beta_gm_z2``, ``heavy_tail``, ``null_coverage``,
        ``null_coverage_se`` (with ``n_mc``); ``reference``; coords ``bin_lower``,
        ``bin_upper``, ``bin_center``, ``count``.

    Warns
    -----
    BinningWarning
        Bins below 100 points.
    UnreliableWarning
        Bins with beta_GM(Z^2) > 0.8, or without an interval.
    FutureWarning
        ``statistic="PICP"`` (use :func:`local_interval_coverage`).

    See Also
    --------
    uqviz.local_interval_coverage : the PICP per bin, with its Wilson interval.
    uqviz.fraction_valid : the fraction of valid bins and its test.
    uqviz.acf : autocorrelation of the per-bin series.
    uqviz.ordering_study : the effect of the ordering of tied values.
    uqviz.reliability : RMV and RMSE per bin.
    uqviz.plots.conditional.local : draws the per-bin statistic and intervals.

    Notes
    -----
    In each bin :math:`b` of the conditioning variable (:math:`n_b` points),

    .. math::

       \mathrm{LZM}_b = \langle Z \rangle_b, \qquad \mathrm{LZMS}_b = \langle Z^2 \rangle_b, \qquad
       \mathrm{LRCE}_b = \frac{\mathrm{RMV}_b - \mathrm{RMSE}_b}{\mathrm{RMV}_b},

    with references 0, 1 and 0; conditioning on :math:`u_E` tests consistency, on a feature
    adaptivity (Pernot (2023), eqs. 6-7 and 10-11). A bin is valid when its reference lies in
    its interval (bootstrap, or Student-t for LZM).

    The local statistics of ErrViewLib's ``plotLZV``, ``plotLZISD`` and ``plotLRR``
    (Pernot (2022, JCP)) are ``statistic="ZVar"``, ``"ZISD"`` and ``"RR"``:

    .. math::

       \mathrm{LZV}_b = \mathrm{Var}(Z)_b, \qquad
       \mathrm{LZISD}_b = \frac{1}{\mathrm{SD}(Z)_b}, \qquad
       \mathrm{LRR}_b = \frac{2\, q_{0.975} \sqrt{\langle u_E^2 \rangle_b}}
       {Q^{HD}_b(0.975) - Q^{HD}_b(0.025)},

    with ddof = 1, :math:`q_{0.975} = \Phi^{-1}(0.975)` and :math:`Q^{HD}_b` the
    Harrell-Davis quantiles of :math:`E` in the bin (Harrell & Davis (1982)): the width of the
    95 % prediction interval a calibrated normal model announces over the width the errors
    show. All three have reference 1 and a per-bin BCa interval (ErrViewLib's default for LZV
    and LRR; for LZISD it offers a linear propagation of the variance too). The reference of
    LRR is exact for a normal D and a constant :math:`u_E` in the bin; with other D or spread
    :math:`u_E` it is biased, as its intervals of extreme quantiles cover less than the
    nominal level: ``null_coverage`` (calibrated copies with the data's :math:`u_E` and D)
    measures both, and :func:`fraction_valid` tests against it. A generic statistic (RR) is
    resampled in numpy in this process, the bins of one size together: ``engine`` and
    ``client`` do not apply to it.

    The BCa interval of level :math:`1 - \alpha` takes the quantiles :math:`\alpha_1`
    (:math:`\gamma = \alpha/2`) and :math:`\alpha_2` (:math:`\gamma = 1 - \alpha/2`) of the
    :math:`B` bootstrap replicates :math:`\hat\theta^*_b` (DiCiccio & Efron (1996)),

    .. math::

       \alpha_{1,2} = \Phi\left(z_0 + \frac{z_0 + \Phi^{-1}(\gamma)}
       {1 - a (z_0 + \Phi^{-1}(\gamma))}\right), \qquad
       z_0 = \Phi^{-1}\left(\frac{\#\{\hat\theta^*_b < \hat\theta\}}{B}\right),

    with the acceleration :math:`a` from the jackknife (Efron & Tibshirani (1993)).

    References
    ----------
    - Pernot (2023), eqs. 6-7 and 10-11: consistency, adaptivity, LZMS and LRCE; section
      III.2.1: the coverage of bins of about 100 points.
    - Pernot (2024b), Table II: the heavy-tail flag beta_GM(Z^2) > 0.8.
    - Pernot (2022, JCP): LZV; ErrViewLib's LZISD and LRR.
    - Harrell & Davis (1982): the quantiles of LRR.
    - DiCiccio & Efron (1996): the BCa interval.

    Full entries: :doc:`/docs/references`.

    Examples
    --------
    >>> import uqviz
    >>> ds = uqviz.synthetic.default_example()
    >>> res = uqviz.local_calibration(ds, conditioning="X", n_bins=10, n_boot=1000, rng=0)
    >>> int(res.sizes["bin"])
    10
    """
    statistic = check_local_statistic(statistic, generic=True)
    if statistic == COVERAGE_STATISTIC:
        return _deprecated_picp(
            data,
            conditioning=conditioning,
            n_bins=n_bins,
            binning=binning,
            min_count=min_count,
            edges=edges,
            log=log,
            n_boot=n_boot,
            ci=ci,
            method=method,
            rng=rng,
            engine=engine,
            random_ties=random_ties,
            level=level,
            generative=generative,
            n_mc=n_mc,
            client=client,
        )
    if level is not None:
        raise ValueError(
            f"level applies to statistic='PICP' only, got level={level!r} "
            f"with statistic={statistic!r}"
        )
    if method is None:
        method = "student-t" if statistic == "ZM" else "bca"
    spec = BinningSpec.check(
        conditioning=conditioning,
        n_bins=n_bins,
        binning=binning,
        min_count=min_count,
        edges=edges,
        log=log,
        random_ties=random_ties,
    )
    boot = BootstrapOptions.check(
        n_boot=n_boot,
        ci=ci,
        method=method,
        rng=rng,
        engine=engine,
        client=client,
        methods=("student-t",) + BOOTSTRAP_METHODS if statistic == "ZM" else BOOTSTRAP_METHODS,
    )
    n_mc = checks.count_or_zero("n_mc", n_mc, zero="no calibrated null")
    generative = "empirical" if generative is None else generative
    gen_name = get_generative(generative).name
    out = map_datasets(
        _local_one,
        data,
        rng=checks.rng(rng),
        statistic=statistic,
        spec=spec,
        boot=boot.replace(client=resolve_client(client)),
        generative=generative,
        n_mc=n_mc,
    )
    b, sp = boot.attrs, spec.attrs  # not b["resample"]: points only
    out.attrs.update(
        {
            "statistic": statistic,
            "n_boot": b["n_boot"],
            "ci": b["ci"],
            "method": b["method"],
            "binning": sp["binning"],
            "rng": b["rng"],
            "random_ties": sp["random_ties"],
            "generative": gen_name,
            "n_mc": n_mc,
            "engine": b["engine"],
        }
    )
    if "n_bins" in sp:
        out.attrs["n_bins"] = sp["n_bins"]
    return out


def _deprecated_picp(data, *, n_boot, method, engine, **options):
    """``local_calibration(statistic="PICP")``: :func:`local_interval_coverage`, with the
    options it used to check and the attrs it used to record (one release)."""
    warnings.warn(
        "local_calibration(statistic='PICP') is deprecated and will be removed in "
        f"uqviz {REMOVED_IN}: use local_interval_coverage(...) instead (level, ci, "
        "generative and the binning options as before; no n_boot, method or "
        "engine)",
        FutureWarning,
        stacklevel=3,
    )
    boot = BootstrapOptions.check(
        n_boot=n_boot,
        method="wilson" if method is None else method,
        engine=engine,
        methods=("wilson",),
    )  # checked as before
    level = 0.95 if options["level"] is None else options["level"]
    generative = "normal" if options["generative"] is None else options["generative"]
    out = local_interval_coverage(data, **{**options, "level": level, "generative": generative})
    out.attrs.update({"n_boot": boot.n_boot, "method": boot.method, "engine": boot.engine})
    return out


def local_interval_coverage(
    data,
    *,
    level=0.95,
    conditioning="uE",
    n_bins=None,
    binning="equal_count",
    min_count=None,
    edges=None,
    log=False,
    random_ties=False,
    ci=0.95,
    generative="normal",
    n_mc=NULL_N_MC,
    rng=None,
    client=None,
):
    r"""Local interval coverage: the PICP per bin of a conditioning variable, with its
    Wilson interval.

    In each bin, the share of points with ``|E| <= uE q_D((1 + level) / 2)`` (the prediction
    interval coverage probability of :func:`uqviz.interval_coverage`), with the Wilson score
    interval with continuity correction (Newcombe (1998)) of :func:`fraction_valid` and the
    reference ``level``. A binomial interval needs no assumption on the tails of the
    z-scores: the local PICP is the heavy-tail-robust counterpart of the LZMS of
    :func:`local_calibration` (Pernot (2024b)). Each bin also gets ``null_coverage``, the
    exact probability that a calibrated bin's interval holds ``level`` (``n PICP ~
    Binomial(n, level)`` whatever D), which :func:`fraction_valid` tests the number of
    valid bins against.

    Parameters
    ----------
    data : xarray.Dataset or xarray.DataTree
        Errors ``E`` and standard uncertainties ``uE`` on dim ``point`` (with any features), as
        made by :func:`uqviz.from_arrays` and the other constructors; a DataTree gives one
        result per dataset, on dim ``dataset``.
    level : float, default 0.95
        Nominal coverage of the central prediction interval, in (0, 1): the reference.
    conditioning : str or array_like, default "uE"
        ``"uE"`` (consistency), a feature (adaptivity), or one value per point.
    n_bins : int, optional
        Number of bins; default ``min(round(sqrt(M)), M // 100)``, at least 1 (bins of at least
        100 points, Pernot (2023)).
    binning : {"equal_count", "equal_width", "stratified", "edges"}, default "equal_count"
        How the bins are cut: equal numbers of points, equal widths, one bin per distinct value
        (for few-valued features), or at the given ``edges``.
    min_count : int, optional
        Fewest points a bin may hold: smaller equal-width, stratified or edges bins are merged
        with their smaller neighbour (default 100 for "stratified", else no merging).
    edges : array_like, optional
        Strictly increasing, finite bin edges, for ``binning="edges"``.
    log : bool, default False
        Log-spaced widths for ``binning="equal_width"``.
    random_ties : bool, default False
        Randomise the order of tied conditioning values (the same order as
        :func:`local_calibration` with the same ``rng``).
    ci : float, default 0.95
        Confidence level of the Wilson intervals, in (0, 1).
    generative : str or Generative, default "normal"
        The distribution D of the intervals ``E in +-uE q_D((1+level)/2)`` (``"t6"``:
        unit-variance Student-t with 6 degrees of freedom; ``"empirical"``: the data's own
        z-scores).
    n_mc : int, default 2000
        0: no calibrated null; any other count: the null, exact (binomial), so that its value
        does not change the numbers (kept beside :func:`local_calibration`'s option).
    rng : None, int, numpy.random.SeedSequence or numpy.random.Generator, default None
        Random stream of ``random_ties``: None (fresh entropy), an int >= 0, a
        numpy.random.SeedSequence (copied, never consumed) or a numpy.random.Generator
        (docs/conventions.md, "Randomness").
    client : None, "local" or dask.distributed.Client, default None
        Where the datasets of a DataTree run, as tasks (docs/conventions.md); the numbers do
        not depend on it.

    Returns
    -------
    xarray.Dataset
        On ``bin``: ``estimate`` (PICP), ``ci_lower``, ``ci_upper``, ``zeta``, ``valid``,
        ``beta_gm_z2``, ``heavy_tail`` (always False: a binomial interval is not narrowed by
        heavy tails), ``null_coverage``, ``null_coverage_se`` (0, with ``n_mc``);
        ``reference`` (``level``); coords ``bin_lower``, ``bin_upper``, ``bin_center``,
        ``count``. ``attrs``: ``statistic`` ``"PICP"``, ``method`` ``"wilson"``, ``level``,
        ``ci``, the binning, ``generative``, ``n_mc``, ``rng``.

    Warns
    -----
    BinningWarning
        Bins below 100 points.

    See Also
    --------
    uqviz.interval_coverage : the PICP of all points.
    uqviz.local_calibration : the local statistics (LZMS, LZM, LRCE, ...) per bin.
    uqviz.fraction_valid : the fraction of valid bins and its test.
    uqviz.plots.conditional.local : draws the per-bin coverage and intervals.

    Notes
    -----
    The statistic of a bin :math:`b` is
    :math:`\mathrm{PICP}_b = \langle \mathbf{1}(|E| \le u_E q_D((1 + p)/2)) \rangle_b`
    with reference :math:`p`, the ``level``; its interval is the Wilson interval with
    continuity correction of :math:`k_b` points inside out of :math:`n_b`, and
    ``null_coverage`` the exact probability that it holds :math:`p` when
    :math:`k_b \sim \mathrm{Binomial}(n_b, p)`
    (``uqviz._array.binomial.wilson_coverage``).

    References
    ----------
    - Pernot (2023): local calibration per bin, bins of about 100 points.
    - Pernot (2024b): PICP, robust to heavy tails.
    - Newcombe (1998): the Wilson interval with continuity correction.

    Full entries: :doc:`/docs/references`.

    Examples
    --------
    >>> import uqviz
    >>> ds = uqviz.synthetic.default_example()
    >>> cov = uqviz.local_interval_coverage(ds, level=0.9, n_bins=10)
    >>> float(cov["reference"]), cov.attrs["method"], int(cov.sizes["bin"])
    (0.9, 'wilson', 10)
    >>> bool(uqviz.fraction_valid(cov).valid)
    True
    """
    level = checks.probability("level", level)
    spec = BinningSpec.check(
        conditioning=conditioning,
        n_bins=n_bins,
        binning=binning,
        min_count=min_count,
        edges=edges,
        log=log,
        random_ties=random_ties,
    )
    ci = checks.probability("ci", ci)
    checks.rng(rng)
    n_mc = checks.count_or_zero("n_mc", n_mc, zero="no calibrated null")
    gen_name = get_generative(generative).name
    out = map_datasets(
        _coverage_one,
        data,
        rng=checks.rng(rng),
        spec=spec,
        level=level,
        ci=ci,
        generative=generative,
        n_mc=n_mc,
        on_client=resolve_client(client),
    )
    sp = spec.attrs
    out.attrs.update(
        {
            "statistic": COVERAGE_STATISTIC,
            "ci": ci,
            "method": "wilson",
            "binning": sp["binning"],
            "rng": seeds.seed_attr(rng),
            "random_ties": sp["random_ties"],
            "generative": gen_name,
            "n_mc": n_mc,
            "level": level,
        }
    )
    if "n_bins" in sp:
        out.attrs["n_bins"] = sp["n_bins"]
    return out


# ---------------------------------------------------------------------------
# validation metric, serial structure, binned calibration errors
# ---------------------------------------------------------------------------
FV_METHODS = ("calibrated", "wilson")


def _fv_counts(local_result):
    """``(counted, present)``: bins counting as valid, bins present (not NaN padding)."""
    valid = local_result["valid"]
    present = (
        local_result["count"].notnull().broadcast_like(valid)
        if "count" in local_result.coords
        else xr.ones_like(valid, dtype=bool)
    )
    counted = valid.astype(bool) & _finite(local_result) & present
    return counted, present


def _finite(local_result):
    """Bins whose interval could be computed (all when the result holds no interval)."""
    if "ci_lower" not in local_result or "ci_upper" not in local_result:
        return xr.ones_like(local_result["valid"], dtype=bool)
    return local_result["ci_lower"].notnull() & local_result["ci_upper"].notnull()


def _null_test(p, present, n_valid, alpha):
    """Expected f_v, its critical value and the p-value under the calibrated null, per set."""
    p = np.atleast_2d(p)
    present = np.atleast_2d(present)
    n_valid = np.atleast_1d(n_valid)
    out = np.empty((p.shape[0], 3))
    for i in range(p.shape[0]):
        pi = p[i][present[i]]
        cdf = poisson_binomial_cdf(pi)
        k = lower_critical(cdf, alpha)
        out[i] = (pi.mean(), k / pi.size, cdf[int(n_valid[i])])
    return out


def fraction_valid(local_result, *, ci=0.95, nominal=None, method=None):
    r"""Fraction f_v of bins whose interval contains the reference (Pernot (2023)), and its
    calibrated test.

    ``estimate`` is the f_v of Pernot (2023) as published: the share of bins whose interval
    holds the reference, every bin counted (a bin without an interval holds nothing). The
    bins that cannot be trusted are counted beside it, in ``n_unreliable``: flagged
    heavy-tailed (``heavy_tail``: beta_GM(Z^2) > 0.8, Pernot (2024b), Table II; one
    aberrant error gives a bin an enormous interval that holds the reference) or without an
    interval. They do not change f_v: the stricter reading belongs to the verdict built on
    it (the report and the CI gate make a consistency or adaptivity test whose whole set
    fails its Z^2 tail screen "fails" or "unreliable", never "OK").

    ``method="calibrated"`` (the default when ``local_result`` holds ``null_coverage``)
    tests the number of valid bins against its distribution for calibrated data: bin ``b``
    counts as valid with probability ``null_coverage[b]`` (measured by
    :func:`local_calibration` on simulated calibrated bins, counted as f_v counts the data's:
    an interval that holds the reference, heavy-tailed or not; Pernot (2023), section
    III.2.1: bins of about 100 points cover about 90 %, not 95 %), independently of the
    other bins, so the count follows a Poisson-binomial law and the test is exact for the
    published f_v. The simulated z-scores have the data's own shape by default
    (``generative="empirical"`` of :func:`local_calibration`), so its ``p_value`` allows for
    heavy tails. ``reference`` is the expected f_v of a
    calibrated model, ``reference_lower`` the smallest f_v the test accepts,
    ``p_value = P(count <= observed)`` and ``valid = estimate >= reference_lower``
    (equivalently ``p_value > 1 - ci``). ``method="wilson"`` is the rule of Pernot (2023):
    valid when ``nominal`` lies inside the Wilson interval of f_v (it assumes that every
    bin covers with probability ``nominal``, and cries wolf on calibrated data with bins of
    100 points; kept to reproduce the paper).

    Parameters
    ----------
    local_result : xarray.Dataset
        Output of :func:`local_calibration`.
    ci : float, default 0.95
        Level of the test (false-alarm rate ``1 - ci``) and of the Wilson interval with
        continuity correction of f_v (Newcombe (1998)).
    nominal : float, optional
        ``method="wilson"``: target coverage; default the ``ci`` of the local intervals.
    method : {"calibrated", "wilson"}, optional
        Default ``"calibrated"`` when ``null_coverage`` is present, else ``"wilson"``.

    Returns
    -------
    xarray.Dataset
        ``estimate`` (f_v), ``ci_lower``, ``ci_upper`` (its Wilson interval), ``n_valid``,
        ``n_bins``, ``n_unreliable`` (heavy-tailed or without interval), ``valid`` (the
        verdict); calibrated: ``reference``, ``reference_lower``, ``reference_upper`` (1: the
        test is one-sided), ``p_value``.

    See Also
    --------
    uqviz.local_calibration : the bins and their calibrated null.
    uqviz.ordering_study : f_v over orderings of tied values.
    uqviz.plots.conditional.local : draws the bins with f_v.

    Notes
    -----
    With :math:`N` bins of which :math:`n_v` are valid,

    .. math::

       f_v = \frac{n_v}{N}

    (Pernot (2023)). Calibrated test: :math:`n_v` is a sum of independent Bernoulli variables of
    probabilities :math:`\pi_b` (``null_coverage``), a Poisson-binomial law;
    :math:`p = P(n_v' \le n_v)` and valid when :math:`p > 1 - \mathrm{ci}`.

    The Wilson interval with continuity correction of a proportion :math:`\hat p = k / n`
    (Newcombe (1998), method 4), with :math:`z = \Phi^{-1}((1 + \mathrm{ci})/2)`, has the
    lower limit

    .. math::

       L = \frac{2n\hat p + z^2 - 1 - z\sqrt{z^2 - 2 - 1/n + 4\hat p(n(1 - \hat p) + 1)}}
       {2(n + z^2)}, \qquad
       U = \frac{2n\hat p + z^2 + 1 + z\sqrt{z^2 + 2 - 1/n + 4\hat p(n(1 - \hat p) - 1)}}
       {2(n + z^2)},

    with :math:`L = 0` when :math:`\hat p = 0` and :math:`U = 1` when :math:`\hat p = 1`.

    References
    ----------
    - Pernot (2023): the fraction of valid bins; section III.2.1: the coverage of bins of about
      100 points.
    - Pernot (2024b), Table II: the heavy-tail flag.
    - Newcombe (1998): the Wilson interval with continuity correction.

    Full entries: :doc:`/docs/references`.

    Examples
    --------
    >>> import uqviz
    >>> loc = uqviz.local_calibration(uqviz.synthetic.nig(4000, nu=10, rng=0), n_bins=20,
    ...                               n_boot=1000, rng=1)
    >>> fv = uqviz.fraction_valid(loc)
    >>> bool(fv.valid), 0.85 < float(fv.reference) < 0.96
    (True, True)

    A heavy-tailed bin whose enormous interval holds the reference counts in f_v, as in
    Pernot (2023), and in ``n_unreliable`` beside it:

    >>> import xarray as xr
    >>> bins = xr.Dataset({"valid": ("bin", [True, True, False]),
    ...                    "heavy_tail": ("bin", [False, True, False]),
    ...                    "ci_lower": ("bin", [0.9, 0.5, 1.1]),
    ...                    "ci_upper": ("bin", [1.1, 1e50, 1.3])})
    >>> fv = uqviz.fraction_valid(bins)
    >>> round(float(fv.estimate), 3), int(fv.n_valid), int(fv.n_unreliable)
    (0.667, 2, 1)
    """
    ci = checks.probability("ci", ci)
    checks.result(
        "local_result", local_result, "uqviz.local_calibration", variables=("valid",), dims=("bin",)
    )
    has_null = "null_coverage" in local_result.data_vars
    if method is None:
        method = "calibrated" if has_null else "wilson"
    checks.choice("method", method, FV_METHODS)
    if method == "calibrated" and not has_null:
        raise ValueError(
            "method='calibrated' needs the calibrated null of local_calibration "
            "(null_coverage: run it with n_mc >= 2), or use method='wilson'"
        )
    nominal = local_result.attrs.get("ci", 0.95) if nominal is None else nominal
    nominal = checks.probability("nominal", nominal)
    counted, present = _fv_counts(local_result)
    n_valid = counted.sum("bin")
    n_bins = present.sum("bin")
    n_unreliable = (
        present
        & (
            local_result.get("heavy_tail", xr.zeros_like(counted)).astype(bool)
            | ~_finite(local_result)
        )
    ).sum("bin")
    for counts in (n_valid, n_bins, n_unreliable):
        counts.attrs = {}  # counts of bins, not the attrs of the flags they count
    lower, upper = wilson_interval(n_valid.values, n_bins.values, ci=ci, continuity=True)
    dims = n_valid.dims
    est = n_valid.values / n_bins.values
    out = {
        "estimate": (dims, est),
        "ci_lower": (dims, lower),
        "ci_upper": (dims, upper),
        "n_valid": n_valid,
        "n_bins": n_bins,
        "n_unreliable": n_unreliable,
    }
    if method == "calibrated":
        p = local_result["null_coverage"].transpose(*dims, "bin")
        pres = present.transpose(*dims, "bin")
        res = _null_test(
            p.values.reshape(-1, p.sizes["bin"]),
            pres.values.reshape(-1, p.sizes["bin"]),
            n_valid.values.ravel(),
            1.0 - ci,
        )
        shape = n_valid.shape
        out["reference"] = (
            dims,
            res[:, 0].reshape(shape),
            {"long_name": "expected f_v of calibrated data (calibrated null)"},
        )
        out["reference_lower"] = (
            dims,
            res[:, 1].reshape(shape),
            {"long_name": "smallest f_v accepted at level ci"},
        )
        out["reference_upper"] = (
            dims,
            np.ones(shape),
            {"long_name": "largest f_v accepted (one-sided test: too few valid bins fail)"},
        )
        out["p_value"] = (dims, res[:, 2].reshape(shape))
        out["valid"] = (dims, res[:, 2].reshape(shape) > 1.0 - ci)
    else:
        out["valid"] = (dims, (lower <= nominal) & (nominal <= upper))
    attrs = {
        "nominal": nominal,
        "ci": ci,
        "method": method,
        **{
            k: v
            for k, v in local_result.attrs.items()
            if k in ("statistic", "conditioning", "binning", "generative", "n_mc")
        },
    }
    return describe(xr.Dataset(out, attrs=attrs))


def _acf_one(values, max_lag, where):
    """ACF of one per-bin series (NaN bins dropped): ``(acf, band, n)``."""
    x = values[np.isfinite(values)]
    n = x.size
    if n < 2:
        raise ValueError(
            f"local_result{where}: the autocorrelation needs at least 2 bins with "
            f"a finite estimate, got {n}"
        )
    if max_lag is None:
        max_lag = int(min(n - 1, np.floor(10 * np.log10(n))))
    elif max_lag >= n:
        raise ValueError(
            f"max_lag must be between 1 and n_bins - 1 ({n - 1}{where}), got {max_lag}"
        )
    return binned_kernels.acf(x, max_lag), 1.96 / np.sqrt(n), n


def acf(local_result, *, max_lag=None, variable="estimate"):
    r"""Autocorrelation of the per-bin series, with the +-1.96/sqrt(n) white-noise band.

    Parameters
    ----------
    local_result : xarray.Dataset
        Output of :func:`local_calibration` (one ACF per ``dataset`` if any).
    max_lag : int, optional
        Default min(n_bins - 1, 10 log10(n_bins)), as R's ``acf``.
    variable : str, default "estimate"
        The per-bin variable of ``local_result`` whose autocorrelation is computed.

    Returns
    -------
    xarray.Dataset
        ``acf`` on dim ``lag``, ``band``; with ``dataset``, also ``n_bins``.

    See Also
    --------
    uqviz.local_calibration : the per-bin series.
    uqviz.plots.conditional.acf : draws the ACF with its band.

    Notes
    -----
    For the per-bin series :math:`x_1, \dots, x_n` (in bin order) and lag :math:`k`,

    .. math::

       r_k = \frac{\sum_{b=1}^{n-k} (x_b - \bar x)(x_{b+k} - \bar x)}
       {\sum_{b=1}^n (x_b - \bar x)^2},
       \qquad \text{band} = \pm \frac{1.96}{\sqrt n}

    (white-noise band, Bartlett (1946)); values outside the band reveal structure in the local
    calibration (Pernot (2023), Fig. 3).

    References
    ----------
    - Pernot (2023), Fig. 3: the ACF of the local statistics.
    - Bartlett (1946): the white-noise band.

    Full entries: :doc:`/docs/references`.

    Examples
    --------
    >>> import numpy as np, xarray as xr
    >>> float(acf(xr.Dataset({"estimate": ("bin", np.arange(10.0))}), max_lag=1).acf[0])
    1.0
    """
    if not isinstance(local_result, xr.Dataset):
        raise TypeError(
            f"local_result: expected the Dataset of local_calibration, got "
            f"{type(local_result).__name__}"
        )
    if not isinstance(variable, str):
        raise TypeError(f"variable: expected a variable name (str), got {variable!r}")
    if variable not in local_result.data_vars:
        raise ValueError(f"variable {variable!r} is not in local_result")
    series = local_result[variable]
    max_lag = checks.optional_count("max_lag", max_lag, minimum=1)
    if "dataset" not in series.dims:
        if series.dims != ("bin",):
            raise ValueError(f"local_result: {variable} must have dims ('bin',), got {series.dims}")
        r, band, n = _acf_one(np.asarray(series.values, dtype=float), max_lag, "")
        return describe(
            xr.Dataset(
                {"acf": ("lag", r), "band": ((), band)},
                coords={"lag": np.arange(r.size)},
                attrs={"variable": variable, "n_bins": n},
            )
        )
    series = series.transpose("dataset", ...)
    if series.dims != ("dataset", "bin"):
        raise ValueError(
            f"local_result: {variable} must have dims ('dataset', 'bin'), got {series.dims}"
        )
    names = series["dataset"].values
    parts = [
        _acf_one(
            np.asarray(series.sel(dataset=nm).values, dtype=float),
            max_lag,
            f" (dataset {str(nm)!r})",
        )
        for nm in names
    ]
    n_lag = max(r.size for r, _, _ in parts)
    table = np.full((len(parts), n_lag), np.nan)
    for i, (r, _, _) in enumerate(parts):
        table[i, : r.size] = r
    return describe(
        xr.Dataset(
            {
                "acf": (("dataset", "lag"), table),
                "band": ("dataset", [b for _, b, _ in parts]),
                "n_bins": ("dataset", [n for _, _, n in parts]),
            },
            coords={"dataset": names, "lag": np.arange(n_lag)},
            attrs={"variable": variable},
        )
    )


BINNED_ERRORS = BINNED_STATISTICS  # the keys of uqviz._array.binned.BINNED


def binned_bins(ds, *, conditioning="uE", n_bins=DEFAULT_N_BINS, binning="equal_count", **kw):
    """Bins used by the binned calibration errors (shared with simulated references)."""
    _, x = conditioning_values(ds, conditioning)
    return compute_bins(x, n_bins=n_bins, binning=binning, **kw)


def _binned_one(ds, *, rng=None, statistics, conditioning, n_bins, binning):
    check_dataset(ds)
    _, bins = compute_local_bins(ds, conditioning, n_bins=n_bins, binning=binning, min_size=1)
    e = ds["E"].values[bins.order]
    u = ds["uE"].values[bins.order]
    means = binned_kernels.binned_column_means(e, u, bins.starts, bins.sizes)
    values = [_binned_value(get_statistic(s), means) for s in statistics]
    return xr.Dataset(
        {"estimate": ("statistic", np.array(values, dtype=float)), "n_bins": ((), bins.n_bins)},
        coords={"statistic": list(statistics)},
    )


def _binned_value(stat, means):
    """One binned error from the bin means; a warning when it is not representable."""
    with np.errstate(all="ignore"):
        value = stat.func(means)
    problem = stats_kernels.unrepresentable(stat.name, stat.func, means, value)
    if problem:
        warnings.warn(
            f"{problem}; its estimate is {float(value)!r}", NumericalWarning, stacklevel=5
        )
    return value


def binned_errors(
    data, *, statistics=BINNED_ERRORS, conditioning="uE", n_bins=None, binning="equal_count"
):
    r"""Binned calibration errors ENCE, UCE and ZMSE on the same bins (Pernot (2024c), eq. 17).

    Parameters
    ----------
    data : xarray.Dataset or xarray.DataTree
        Errors ``E`` and standard uncertainties ``uE`` on dim ``point`` (with any features), as
        made by :func:`uqviz.from_arrays` and the other constructors; a DataTree gives one
        result per dataset, on dim ``dataset``.
    statistics : sequence of str, default ("ENCE", "UCE", "ZMSE")
        Registered statistics of kind ``"binned"``: the three built-in ones or one registered
        by the user (a function of the per-bin means of ``E2``, ``V``, ``Z2``).
    conditioning : str, default "uE"
        Variable the bins are cut on: "uE" (consistency) or a feature name (adaptivity).
    n_bins : int or None, default None
        Number of bins; None: 20, the default of the binned statistics (Pernot (2024c));
        ``attrs["n_bins"]`` holds the number used.
    binning : {"equal_count", "equal_width", "stratified", "edges"}, default "equal_count"
        How the bins are cut: equal numbers of points, equal widths, one bin per distinct value
        (for few-valued features).

    Returns
    -------
    xarray.Dataset
        ``estimate`` on ``statistic``, ``n_bins``.

    See Also
    --------
    uqviz.validate_simulated : validates these statistics against simulated references.
    uqviz.extrapolate : validates ENCE or ZMSE by extrapolation to zero bins.
    uqviz.reliability : RMV and RMSE per bin.

    Notes
    -----
    Over :math:`N` bins :math:`b` of the conditioning variable, with the mean variance
    :math:`\mathrm{MV}_b = \langle u_E^2 \rangle_b`, the mean squared error
    :math:`\mathrm{MSE}_b = \langle E^2 \rangle_b`, :math:`\mathrm{RMV}_b = \sqrt{\mathrm{MV}_b}`,
    :math:`\mathrm{RMSE}_b = \sqrt{\mathrm{MSE}_b}` and
    :math:`\mathrm{ZMS}_b = \langle Z^2 \rangle_b`,

    .. math::

       \mathrm{ENCE} = \frac{1}{N}\sum_{b=1}^N
       \frac{|\mathrm{RMV}_b - \mathrm{RMSE}_b|}{\mathrm{RMV}_b},
       \qquad
       \mathrm{UCE} = \frac{1}{N}\sum_{b=1}^N |\mathrm{MV}_b - \mathrm{MSE}_b|, \qquad
       \mathrm{ZMSE} = \frac{1}{N}\sum_{b=1}^N |\ln \mathrm{ZMS}_b|

    (ENCE: Levi et al. (2022), Pernot (2023), eqs. 8-9; ZMSE: Pernot (2024c), eq. 17).

    None of them has a predefined reference: it depends on the data and the bins.

    References
    ----------
    - Pernot (2024c), eq. 17: ZMSE.
    - Pernot (2023), eqs. 8-9: ENCE for any binning variable.
    - Levi et al. (2022): ENCE.

    Full entries: :doc:`/docs/references`.

    Examples
    --------
    >>> import uqviz
    >>> uqviz.binned_errors(uqviz.synthetic.nig(2000, nu=8, rng=0)).statistic.values.tolist()
    ['ENCE', 'UCE', 'ZMSE']
    """
    statistics = checks.names("statistics", statistics)
    binned = [s for s in list_statistics() if get_statistic(s).kind == "binned"]
    unknown = [s for s in statistics if s not in binned]
    if unknown:
        raise ValueError(
            f"statistics: unknown binned statistic(s) {unknown}; "
            f"known (registered, kind 'binned'): {', '.join(binned)}"
        )
    n_bins = DEFAULT_N_BINS if n_bins is None else checks.count("n_bins", n_bins)
    checks.choice("binning", binning, SCHEMES)
    out = map_datasets(
        _binned_one,
        data,
        statistics=statistics,
        conditioning=conditioning,
        n_bins=n_bins,
        binning=binning,
    )
    out.attrs.update(
        {
            "conditioning": conditioning if isinstance(conditioning, str) else "array",
            "binning": binning,
            "n_bins": n_bins,
            "statistics": list(statistics),
        }
    )
    return out
