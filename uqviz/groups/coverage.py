"""Coverage across groups: coverage gap, worst-slab coverage and HSIC, against calibrated data.

One function, :func:`group_coverage`; the kernels are in ``uqviz/_array/group_coverage.py``.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
import warnings

import numpy as np
import pandas as pd
import xarray as xr

from uqviz._array.binomial import wilson_interval
from uqviz._array.lazy import lazy_module
from uqviz._array.stats import hd_quantiles
from uqviz.data.generative import get_generative
from uqviz.data.model import check_dataset
from uqviz.engine.options import warn_points_independent
from uqviz.engine import checks, seeds, verdicts
from uqviz.engine.binning import compute_bins
from uqviz.engine.options import BinningSpec, streams
from uqviz.engine.parallel import block_rng, progress_bar, resolve_client, run_blocks, show_progress
from uqviz.engine.tree import map_datasets
from uqviz.engine.warning_classes import DataWarning
from uqviz.reference.simulated import simulated_rows
from uqviz.scores.coverage import INTERVAL_SOURCES, checked_points, generative_for, given_intervals

group_coverage_kernels = lazy_module("uqviz._array.group_coverage")
stats = lazy_module("scipy.stats")

__all__ = ["group_coverage", "GROUP_MIN_COUNT", "HSIC_MAX_POINTS", "MEASURE_KINDS"]

#: fewest points of a group (``min_count=None``): at level 0.9, 20 points expect 2 outside
GROUP_MIN_COUNT = 20
#: HSIC and its permutations on at most this many points (a seeded subsample above)
HSIC_MAX_POINTS = 2000
#: the measures, and the side that is worse than calibrated
MEASURE_KINDS = {
    "covgap": "larger",
    "covgap_weighted": "larger",
    "slab": "smaller",
    "hsic": "larger",
}
_BLOCK = 32


def _labels_of(ds, spec, name):
    """``(name, labels)`` of one user grouping: a variable name or one label per point."""
    n = ds.sizes["point"]
    if isinstance(spec, str):
        if spec not in ds.variables:
            raise ValueError(
                f"groups: {spec!r} is not a variable of the dataset; available: "
                f"{', '.join(map(str, ds.data_vars))}"
            )
        values, name = np.asarray(ds[spec].values), spec
    else:
        values = np.asarray(spec.values if isinstance(spec, xr.DataArray) else spec)
    if values.ndim != 1 or values.size != n:
        raise ValueError(
            f"groups {name!r}: expected one label per point ({n}), got shape {values.shape}"
        )
    if values.dtype.kind == "f" and np.isnan(values).any():
        raise ValueError(f"groups {name!r}: {int(np.isnan(values).sum())} NaN labels")
    if values.dtype.kind == "O":
        missing = np.asarray(pd.isna(values), dtype=bool)
        if missing.any():
            raise ValueError(
                f"groups {name!r}: {int(missing.sum())} missing labels (None or "
                "NaN); give every point a label"
            )
        try:
            np.unique(values)
        except TypeError:
            kinds = sorted({type(v).__name__ for v in values})
            raise ValueError(
                f"groups {name!r}: labels of mixed types ({', '.join(kinds)}) "
                "cannot be ordered; give labels of one type"
            ) from None
    return name, values


def _user_groupings(ds, groups):
    if groups is None:
        return []
    if isinstance(groups, dict):
        items = list(groups.items())
        return [_labels_of(ds, v, str(k)) for k, v in items]
    if isinstance(groups, str):
        return [_labels_of(ds, groups, groups)]
    if isinstance(groups, (list, tuple)) and groups and all(isinstance(g, str) for g in groups):
        if all(g in ds.variables for g in groups) or len(groups) != ds.sizes["point"]:
            return [_labels_of(ds, g, g) for g in groups]
    if (
        isinstance(groups, (list, tuple))
        and groups
        and all(np.ndim(g) == 1 and not isinstance(g, str) for g in groups)
    ):
        return [_labels_of(ds, g, f"groups{k}") for k, g in enumerate(groups)]
    return [_labels_of(ds, groups, "groups")]


def _numeric_feature_names(ds):
    """The numeric features (``role="feature"``) on ``point``."""
    return [
        str(k)
        for k, v in ds.data_vars.items()
        if v.attrs.get("role") == "feature" and v.dims == ("point",) and v.dtype.kind in "iuf"
    ]


def _feature_matrix(ds, features):
    cols = []
    for f in features:
        if f not in ds.variables:
            raise ValueError(
                f"features: {f!r} is not a variable of the dataset; available: "
                f"{', '.join(map(str, ds.data_vars))}"
            )
        v = ds[f].values
        if v.ndim != 1 or v.dtype.kind not in "iufb":
            raise ValueError(
                f"features: {f!r} is not numeric (dtype {v.dtype}); slabs and "
                "bins need numeric features (pass labels as groups=)"
            )
        v = v.astype(float)
        bad = ~np.isfinite(v)
        if bad.any():
            raise ValueError(f"features: {f!r} has {int(bad.sum())} NaN or inf values")
        cols.append(v)
    return np.column_stack(cols)


def _coverage_and_widths(ds, *, level, intervals, generative):
    """``(cover (n,) bool, widths (n,), u or None, q or None)`` of one dataset."""
    if intervals == "given":
        check_dataset(ds)
        warn_points_independent(ds, "group_coverage")
        given, lo, hi, y = given_intervals(ds)
        hit = np.flatnonzero(np.isclose(given, level, rtol=0, atol=1e-9))
        if hit.size == 0:
            raise ValueError(
                f"level {level}: not among the levels of the given intervals {given.tolist()}"
            )
        lo, hi = lo[hit[0]], hi[hit[0]]
        return (lo <= y) & (y <= hi), hi - lo, None, None
    e, u = checked_points(ds)
    gen = generative_for(generative, ds)
    q = float(gen.ppf(0.5 + level / 2.0))
    return np.abs(e / u) <= q, 2.0 * q * u, u, gen


def _n_bins_used(data, n_bins, min_count):
    """``attrs["n_bins"]``: the bins of each feature (``None`` resolved for a Dataset)."""
    if n_bins is not None:
        return n_bins
    if isinstance(data, xr.Dataset) and "point" in data.dims:
        return max(1, min(10, data.sizes["point"] // min_count))
    return "None"


def _sim_block(b, shared):
    """Measures of the calibrated sets of block ``b``: (sets, measures)."""
    (n_mc, seed, level, u, gen, q, n, groupings, orders, m, gram_idx, gram, s_c) = shared
    k = min(_BLOCK, n_mc - b * _BLOCK)
    g = block_rng(seed, b)
    if gen is None:  # given intervals: each point inside with probability level
        cover = g.random((k, n)) < level
    else:
        cover = np.vstack([np.abs(row) <= q for row in simulated_rows(gen, g, k, u, scaled=False)])
    cols = []
    for labels, n_groups in groupings:
        sums, counts = group_coverage_kernels.group_sums(cover, labels, n_groups)
        cols.extend(group_coverage_kernels.coverage_gap(sums / counts, counts, level))
    if orders is not None:
        cols.append(group_coverage_kernels.worst_slab(cover, orders[0], m, bounds=orders[1]))
    if gram is not None:
        cols.append(np.sqrt(group_coverage_kernels.hsic_traces(gram, cover[:, gram_idx], s_c)))
    return np.column_stack(cols) if cols else np.empty((k, 0))


@dataclasses.dataclass(frozen=True)
class _Measures:
    """The checked options of the worst-slab and HSIC measures of :func:`group_coverage`."""

    delta: float
    n_directions: int
    directions: object
    kernel_sizes: tuple
    n_perm: int


@dataclasses.dataclass(frozen=True)
class _Reference:
    """How :func:`group_coverage` draws its calibrated sets: how many, the level of the
    band, where and with which progress bar."""

    n_mc: int
    ci: float
    client: object = None
    progress: bool = False


def _group_coverage_one(
    ds, *, rng, groups, features, spec, level, intervals, generative, measures, reference
):
    """One dataset of :func:`group_coverage`: ``spec`` the BinningSpec of the features,
    ``measures`` a _Measures, ``reference`` a _Reference."""
    n_bins, binning, min_count = spec.n_bins, spec.binning, spec.min_count
    delta, n_directions, directions = (measures.delta, measures.n_directions, measures.directions)
    kernel_sizes, n_perm = measures.kernel_sizes, measures.n_perm
    n_mc, ci = reference.n_mc, reference.ci
    cover, widths, u, gen = _coverage_and_widths(
        ds, level=level, intervals=intervals, generative=generative
    )
    n = cover.size
    rs = streams(rng, "slab", "hsic", "perm", "mc")
    if features is None:
        feats = _numeric_feature_names(ds)
    else:
        feats = [features] if isinstance(features, str) else list(features)
    groupings = []  # (name, labels int, label strings)
    for name, values in _user_groupings(ds, groups):
        uniq, lab = np.unique(values, return_inverse=True)
        groupings.append((name, lab.astype(np.int64), [str(v) for v in uniq]))
    x = _feature_matrix(ds, feats) if feats else None
    for j, f in enumerate(feats):
        nb = n_bins if n_bins is not None else max(1, min(10, n // min_count))
        bins = compute_bins(x[:, j], n_bins=nb, binning=binning, min_count=min_count)
        labels = [f"[{lo:.4g}, {hi:.4g}]" for lo, hi in zip(bins.lower, bins.upper)]
        groupings.append((f, bins.labels(), labels))
    if not groupings:
        raise ValueError(
            "group_coverage: no grouping: the dataset has no numeric feature; "
            "pass groups= (labels) or features= (names of numeric features)"
        )
    names = [g[0] for g in groupings]
    if len(set(names)) < len(names):
        raise ValueError(f"groups and features name the same grouping twice: {names}")
    small = []
    for name, lab, strs in groupings:
        counts = np.bincount(lab, minlength=len(strs))
        small += [
            f"{name}={strs[i]} ({int(counts[i])} points)"
            for i in np.flatnonzero(counts < min_count)
        ]
    if small:
        raise ValueError(
            f"{len(small)} group(s) hold fewer than min_count = {min_count} "
            f"points: {', '.join(small[:10])}{' ...' if len(small) > 10 else ''}"
        )

    # the measures on the data
    labels_c, coverage, counts_c, grouped_by, measures, estimate = [], [], [], [], [], []
    for name, lab, strs in groupings:
        sums, counts = group_coverage_kernels.group_sums(cover[None], lab, len(strs))
        cov = sums[0] / counts
        gap, wgap = group_coverage_kernels.coverage_gap(cov, counts, level)
        labels_c += strs
        coverage.append(cov)
        counts_c.append(counts)
        grouped_by += [name] * len(strs)
        measures += [f"covgap:{name}", f"covgap_weighted:{name}"]
        estimate += [float(gap), float(wgap)]
    orders = m = None
    if x is not None:
        sd = x.std(axis=0)
        const = [f for f, s in zip(feats, sd) if s == 0]
        if const:
            raise ValueError(f"features: {const} constant: no direction to standardise")
        xs = (x - x.mean(axis=0)) / sd
        if directions is None:
            v = rs.slab.standard_normal((n_directions, xs.shape[1]))
        else:
            v = checks.finite_array("directions", directions, ndim=2)
            if v.shape[1] != xs.shape[1]:
                raise ValueError(f"directions: {v.shape[1]} columns for {xs.shape[1]} features")
        norms = np.linalg.norm(v, axis=1, keepdims=True)
        if np.any(norms == 0):
            raise ValueError("directions: a direction of length 0")
        orders = group_coverage_kernels.slab_orders(xs, v / norms)  # (orders, tie bounds)
        m = math.ceil(delta * n)
        measures.append("slab")
        estimate.append(
            float(group_coverage_kernels.worst_slab(cover, orders[0], m, bounds=orders[1])[0])
        )
    s_w, s_c = kernel_sizes
    if n > HSIC_MAX_POINTS:
        gram_idx = np.sort(rs.hsic.choice(n, HSIC_MAX_POINTS, replace=False))
        warnings.warn(
            f"group_coverage: HSIC on a random subsample of {HSIC_MAX_POINTS} of the "
            f"{n} points (its cost grows as n^2)",
            DataWarning,
            stacklevel=4,
        )
    else:
        gram_idx = np.arange(n)
    gram = group_coverage_kernels.gaussian_gram(widths[gram_idx], s_w)
    c_h = cover[gram_idx].astype(float)
    hsic = float(np.sqrt(group_coverage_kernels.hsic_traces(gram, c_h, s_c)[0]))
    measures.append("hsic")
    estimate.append(hsic)
    perms = np.vstack([rs.perm.permutation(c_h) for _ in range(n_perm)])
    perm_vals = np.concatenate(
        [
            np.sqrt(group_coverage_kernels.hsic_traces(gram, perms[a : a + 256], s_c))
            for a in range(0, n_perm, 256)
        ]
    )
    hsic_p = (1.0 + np.count_nonzero(perm_vals >= hsic * (1 - 1e-12))) / (1.0 + n_perm)

    # calibrated sets: the same groups, directions and widths
    n_blocks = -(-n_mc // _BLOCK)
    bar = progress_bar(n_blocks, desc="group coverage reference", progress=reference.progress)
    q = None if gen is None else float(gen.ppf(0.5 + level / 2.0))
    shared = (
        n_mc,
        seeds.kernel_seed(rs.mc),
        level,
        u,
        gen,
        q,
        n,
        [(lab, len(strs)) for _, lab, strs in groupings],
        orders,
        m,
        gram_idx,
        gram,
        s_c,
    )
    sims = np.vstack(
        run_blocks(_sim_block, n_blocks, client=reference.client, progress=bar, shared=shared)
    )
    bar.close()
    estimate = np.array(estimate)
    kinds = [mname.split(":")[0] for mname in measures]
    larger = np.array([MEASURE_KINDS[k] == "larger" for k in kinds])
    finite = np.isfinite(sims).all(axis=0)
    tol = 1e-12 * np.maximum(np.abs(estimate), 1e-300)
    worse = np.where(larger, sims >= estimate - tol, sims <= estimate + tol)
    p_value = (1.0 + worse.sum(axis=0)) / (1.0 + n_mc)
    # the HSIC tests independence of width and coverage: by permutations, given the overall
    # coverage (calibrated sets cover `level` overall, and HSIC grows as the coverage falls)
    p_value[measures.index("hsic")] = hsic_p
    band = hd_quantiles(sims.T, [(1 - ci) / 2, (1 + ci) / 2])
    rejected = p_value <= 1 - ci
    words = [verdicts.decide(r, reliable=f) for r, f in zip(rejected, finite)]

    coverage = np.concatenate(coverage)
    counts_c = np.concatenate(counts_c)
    k_in = np.rint(coverage * counts_c).astype(np.int64)
    c_lo, c_hi = wilson_interval(k_in, counts_c, ci=ci, continuity=True)
    b_lo = stats.binom.ppf((1 - ci) / 2, counts_c, level) / counts_c
    b_hi = stats.binom.ppf((1 + ci) / 2, counts_c, level) / counts_c
    return xr.Dataset(
        {
            "estimate": ("measure", estimate),
            "reference": ("measure", sims.mean(axis=0)),
            "reference_lower": ("measure", band[:, 0]),
            "reference_upper": ("measure", band[:, 1]),
            "p_value": ("measure", p_value),
            "valid": ("measure", ~rejected & finite),
            "verdict": ("measure", np.array(words, dtype=object)),
            "coverage": ("group", coverage),
            "coverage_lower": ("group", c_lo),
            "coverage_upper": ("group", c_hi),
            "coverage_reference": ("group", np.full(coverage.size, level)),
            "coverage_reference_lower": ("group", b_lo),
            "coverage_reference_upper": ("group", b_hi),
            "picp": ((), float(cover.mean())),
            "n_points": ((), n),
        },
        coords={
            "measure": measures,
            "group": np.arange(coverage.size),
            "grouped_by": ("group", np.array(grouped_by, dtype=object)),
            "label": ("group", np.array(labels_c, dtype=object)),
            "count": ("group", counts_c.astype(np.int64)),
        },
    )


def group_coverage(
    data,
    *,
    groups=None,
    features=None,
    n_bins=None,
    binning="equal_count",
    min_count=None,
    level=0.9,
    intervals="uE",
    generative="normal",
    delta=0.1,
    n_directions=100,
    directions=None,
    kernel_sizes=(1.0, 1.0),
    n_perm=1000,
    n_mc=200,
    ci=0.95,
    rng=None,
    client=None,
    progress=None,
):
    r"""Coverage of the prediction intervals across groups, against calibrated data.

    Conditional coverage (Angelopoulos & Bates 2021): calibrated intervals cover a fraction
    ``level`` of the points in every group, not only on average. Three measures, each
    compared with its distribution on calibrated data:

    * the coverage gap CovGap (Ding et al. 2023) of each grouping, the mean over its groups of
      ``|coverage_g - level|``, and its form weighted by ``n_g / n``; the groupings are the
      user's labels (``groups``) and the features binned (``features``, equal-count bins);
    * the worst-slab coverage (Cauchois et al. 2021): the smallest coverage of a slab
      ``{x : a < v'x <= b}`` holding at least a fraction ``delta`` of the points, over
      ``n_directions`` random unit directions ``v`` in the space of the features standardised
      (each z-scored: mean 0, sd 1 with ddof=0); points of equal projection are in a slab
      together or not at all (a feature of few distinct values: the same number on every
      numpy version; MAPIE and covmetrics cut runs of the sorted points, ties in sort order);
    * the HSIC between the width of the intervals and their coverage (Feldman et al. 2021),
      MAPIE's form (the square root of the biased statistic), with a permutation p-value.

    Parameters
    ----------
    data : xarray.Dataset or xarray.DataTree
        Errors ``E`` and standard uncertainties ``uE`` on dim ``point`` (with any features), as
        made by :func:`uqviz.from_arrays` and the other constructors; a DataTree gives one
        result per dataset, on dim ``dataset``.
    groups : str, array_like, sequence or dict, optional
        User groupings: a variable name of the dataset (any dtype: a metadata label), one label
        per point, a sequence of names or of label arrays, or a dict ``{name: labels}``.
    features : str or sequence of str, optional
        Numeric features binned into groups (``n_bins``, ``binning``) and spanning the slabs;
        default: every numeric feature of the dataset (variables with ``role="feature"``);
        ``()``: none (no slab).
    n_bins : int, optional
        Bins of each feature; default ``min(10, M // min_count)``, at least 1.
    binning : {"equal_count", "equal_width", "stratified", "edges"}, default "equal_count"
        How the features are binned (:func:`uqviz.engine.binning.compute_bins`).
    min_count : int, optional
        Fewest points of a group; default 20 (``uqviz.groups.coverage.GROUP_MIN_COUNT``). A
        smaller group is an error that names it.
    level : float, default 0.9
        Level of the intervals, in (0, 1).
    intervals : {"uE", "given"}, default "uE"
        ``"uE"``: ``E in +-uE q_D((1 + level)/2)``, as :func:`uqviz.interval_coverage` makes
        them; ``"given"``: the dataset's ``lower``/``upper`` (or central quantiles) at
        ``level``, ``y`` inside, as ``interval_coverage(intervals="given")``.
    generative : str or Generative, default "normal"
        D of the intervals and of the calibrated sets (``intervals="uE"``).
    delta : float, default 0.1
        Smallest fraction of the points in a slab, in (0, 1]: slabs of at least
        ``ceil(delta M)`` points.
    n_directions : int, default 100
        Random directions of the slabs (ignored with ``directions``).
    directions : array_like, optional
        Given directions (n_directions, n_features) in the standardised feature space
        (normalised to unit length), e.g. to replay MAPIE's.
    kernel_sizes : (float, float), default (1.0, 1.0)
        ``(s_w, s_c)``: the Gaussian kernels ``exp(-(a - b)^2 / s)`` of the widths (units of y
        squared) and of the coverage, MAPIE's ``kernel_sizes``.
    n_perm : int, default 1000
        Permutations of the HSIC p-value, an int >= 1.
    n_mc : int, default 200
        Calibrated sets of the references, an int >= 2.
    ci : float, default 0.95
        Level of the intervals of the coverages, of the bands, and of the tests (they fail
        at ``p_value <= 1 - ci``), in (0, 1).
    rng : None, int, numpy.random.SeedSequence or numpy.random.Generator, default None
        Random stream: None (fresh entropy), an int >= 0, a numpy.random.SeedSequence (copied,
        never consumed) or a numpy.random.Generator; the same ``rng`` gives the same numbers on
        any number of threads or workers (docs/conventions.md, "Randomness").
    client : None, "local" or dask.distributed.Client, default None
        Where the work runs: None (this process, local threads), "local" (a dask LocalCluster)
        or a dask.distributed.Client; the numbers do not depend on it.
    progress : bool or None, default None
        tqdm progress bar: None shows it in a terminal or Jupyter unless the environment
        variable ``UQVIZ_PROGRESS=0`` is set, True always shows it, False never.

    Returns
    -------
    xarray.Dataset
        On ``measure`` (``"covgap:<grouping>"``, ``"covgap_weighted:<grouping>"`` per
        grouping, ``"slab"`` with features, ``"hsic"``): ``estimate``, ``reference`` (mean over
        the calibrated sets), ``reference_lower``, ``reference_upper`` (their ``ci`` band,
        Harrell-Davis quantiles), ``p_value`` (one-sided Monte Carlo; for ``"hsic"`` the
        permutation p-value), ``valid``, ``verdict``.
        On ``group`` (coordinates ``grouped_by``, ``label``, ``count``): ``coverage`` with its
        Wilson interval ``coverage_lower``, ``coverage_upper``; ``coverage_reference`` (the
        coverage of a calibrated group, ``level``) with its binomial ``ci`` band
        ``coverage_reference_lower``, ``coverage_reference_upper``. Scalars: ``picp`` (the
        overall coverage), ``n_points``.

    Raises
    ------
    ValueError
        A group smaller than ``min_count`` (counted and named), labels not one per point, no
        grouping (no numeric feature and no ``groups``), a non-numeric or constant feature,
        ``level`` outside (0, 1), ``level`` not among the given intervals', bad options.

    Warns
    -----
    DataWarning
        HSIC on a random subsample of ``uqviz.groups.coverage.HSIC_MAX_POINTS`` points (more
        points given).

    See Also
    --------
    uqviz.interval_coverage : the coverage of the whole set.
    uqviz.local_interval_coverage : the coverage per bin of one variable.
    uqviz.plots.groups.group_coverage : draws the coverage per group.

    Notes
    -----
    With :math:`c_i = \mathbf{1}(y_i \in [l_i, u_i])`, groups :math:`g` of :math:`n_g` points
    and coverage :math:`\hat c_g`, and level :math:`p`,

    .. math::

       \mathrm{CovGap} = \frac{1}{G}\sum_g |\hat c_g - p|, \qquad
       \mathrm{CovGap}_w = \sum_g \frac{n_g}{n} |\hat c_g - p|

    (MAPIE 1.6.0's ``coverage_gap``, covmetrics' ``CovGap``). The worst-slab coverage is

    .. math::

       \mathrm{WSC} = \min_{v} \min_{a < b,\ \#\{a < v'x_i \le b\} \ge \lceil \delta n \rceil}
       \frac{\sum_{a < v'x_i \le b} c_i}{\#\{a < v'x_i \le b\}},

    over runs of consecutive points in the order of the projections; it is computed exactly
    in O(n log n + n) per direction (sort, then Dinkelbach's iteration on the prefix sums,
    ``uqviz/_array/group_coverage.py``, Dinkelbach (1967)), where MAPIE's enumeration costs
    O(n^2). With the
    Gaussian kernels :math:`K_{ij} = e^{-(w_i - w_j)^2/s_w}` of the widths and
    :math:`L_{ij} = e^{-(c_i - c_j)^2/s_c}` of the coverage, :math:`H = I - 11'/n`,

    .. math::

       \mathrm{HSIC} = \sqrt{\frac{\mathrm{tr}(L H K H)}{(n - 1)^2}}
       = \sqrt{\frac{2(1 - e^{-1/s_c})\, d' K d}{(n - 1)^2}}, \quad d = c - \bar c,

    (MAPIE's ``hsic``; covmetrics' ``HSIC`` is the square, its ``sigma_x`` the coverage's
    kernel). It costs O(n^2) time and memory: above
    ``uqviz.groups.coverage.HSIC_MAX_POINTS`` points it is computed on a seeded random
    subsample (with a warning). Its ``p_value`` is the
    permutation p-value (1 + #{permuted >= observed}) / (1 + ``n_perm``), the coverage
    permuted on fixed widths: a test of independence given the overall coverage (the HSIC
    of independent width and coverage grows as the overall coverage falls from ``level``, so
    that a scale error alone would make it fail against the calibrated sets).

    The references: ``n_mc`` calibrated sets on the same groups, directions and widths. With
    ``intervals="uE"`` the calibrated errors are :math:`E^* = u_E \varepsilon`,
    :math:`\varepsilon \sim D` (the data's own uE); with ``"given"`` each point is inside
    with probability ``level``, independently (the law of the coverage of calibrated
    intervals, whatever their form). ``p_value`` (CovGap, slab) = (1 + #{calibrated as bad
    or worse}) / (1 + ``n_mc``), one-sided (larger CovGap, smaller slab coverage are worse); the
    verdict "fails" when ``p_value <= 1 - ci`` (each measure on its own: no family
    adjustment), "unreliable" when calibrated values are not finite. CovGap also holds the
    marginal miscoverage: data whose overall coverage misses ``level`` fail it in every
    grouping. The slab reference costs ``n_mc`` times the slab itself (about 1.2 s for
    10^5 points, 100 directions and 100 sets on two cores; the whole call with the defaults
    about 5 s).

    References
    ----------
    - Ding et al. (2023): the coverage gap CovGap.
    - Cauchois et al. (2021): worst-slab coverage.
    - Feldman et al. (2021): HSIC between interval width and coverage.
    - Angelopoulos & Bates (2021): conditional coverage.
    - Hope (1968): the Monte Carlo p-value.
    - Dinkelbach (1967): the iteration that finds the worst slab exactly.

    Full entries: :doc:`/docs/references`.

    Examples
    --------
    The teaching example's errors grow with its feature X while its uE does not follow
    (adaptivity fails): the intervals cover too much at small X, too little at large X.

    >>> import uqviz
    >>> ds = uqviz.synthetic.default_example().isel(point=slice(0, 2000))
    >>> res = uqviz.group_coverage(ds, n_mc=50, n_perm=100, n_directions=20, rng=0)
    >>> res["measure"].values.tolist()
    ['covgap:X', 'covgap_weighted:X', 'slab', 'hsic']
    >>> res["verdict"].values.tolist()
    ['fails', 'fails', 'fails', 'OK']
    >>> res["coverage"].round(2).values.tolist()
    [0.96, 0.96, 0.97, 0.94, 0.91, 0.91, 0.88, 0.84, 0.83, 0.75]
    """
    intervals = checks.choice("intervals", intervals, INTERVAL_SOURCES)
    level = checks.probability("level", level)
    ci = checks.probability("ci", ci)
    spec = BinningSpec.check(
        n_bins=n_bins,
        binning=binning,
        min_count=GROUP_MIN_COUNT if min_count is None else min_count,
    )
    if checks.is_bool(delta) or not isinstance(delta, numbers.Real):
        raise TypeError(f"delta must be a number in (0, 1], got {delta!r}")
    delta = float(delta)
    if not 0.0 < delta <= 1.0:
        raise ValueError(f"delta must be in (0, 1], got {delta!r}")
    n_directions = checks.count("n_directions", n_directions, minimum=1)
    if (
        isinstance(kernel_sizes, (str, bytes))
        or np.ndim(kernel_sizes) != 1
        or len(kernel_sizes) != 2
    ):
        raise TypeError(f"kernel_sizes must be two positive numbers, got {kernel_sizes!r}")
    kernel_sizes = tuple(checks.positive("kernel_sizes", s) for s in kernel_sizes)
    n_perm = checks.count("n_perm", n_perm, minimum=1)
    if features is not None and not isinstance(features, str):
        if not isinstance(features, (list, tuple)):
            raise TypeError(
                f"features must be None, a variable name or a sequence of names, "
                f"got {features!r} ({type(features).__name__})"
            )
        features = tuple(features)
        if not all(isinstance(f, str) for f in features):
            raise TypeError(f"features must be names of dataset variables, got {features!r}")
    progress = show_progress(progress)
    gen_name = get_generative(generative).name
    stream = checks.rng(rng)
    n_mc = checks.count("n_mc", n_mc, minimum=2)
    measures = _Measures(
        delta=delta,
        n_directions=n_directions,
        directions=directions,
        kernel_sizes=kernel_sizes,
        n_perm=n_perm,
    )
    out = map_datasets(
        _group_coverage_one,
        data,
        rng=stream,
        groups=groups,
        features=features,
        spec=spec,
        level=level,
        intervals=intervals,
        generative=generative,
        measures=measures,
        reference=_Reference(n_mc=n_mc, ci=ci, client=resolve_client(client), progress=progress),
    )
    out.attrs.update(
        {
            "level": level,
            "intervals": intervals,
            "generative": gen_name,
            "delta": delta,
            "n_directions": n_directions,
            "n_perm": n_perm,
            "n_mc": n_mc,
            "ci": ci,
            "min_count": spec.min_count,
            "binning": spec.binning,
            "n_bins": _n_bins_used(data, spec.n_bins, spec.min_count),
            "kernel_sizes": list(kernel_sizes),
            "rng": seeds.seed_attr(rng),
            "citation": "Ding et al. (2023) (CovGap), Cauchois et al. (2021) "
            "(worst-slab coverage), Feldman et al. (2021) (HSIC)",
        }
    )
    return out
