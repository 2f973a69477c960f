"""Sensitivity of the fraction of valid bins to the order of tied values (Pernot (2023), Fig. 4).

Equal-count bins of a *stratified* conditioning variable (many points sharing
one value, e.g. the masses of QM9) split some strata between two bins, and
which points fall on each side depends on the order of the data. Pernot (2023)
repeats the local analysis for many random orderings of the ties and
summarises the fraction of valid bins f_v over orderings, also with the
binomial noise of a finite number of bins (k* ~ Binomial(n_bins, f_v)).

One ordering is a random permutation of the points before the stable sort of
the conditioning variable; inside each bin the points are then put back in a
canonical order (conditioning value, original row), so that a bin holding the
same points in two orderings is the same bin. By default all orderings share
the bootstrap random numbers of :func:`uqviz.local_calibration` for the same
``rng`` (*common random numbers*): the spread over orderings is then the
ordering effect alone, zero without ties.

Orderings are processed in chunks, the bins of all orderings of a chunk
resampled in one parallel call of the grouped bootstrap, one seed per bin. The
numbers do not depend on the chunk size or on the number of threads.
"""

from __future__ import annotations

import warnings

import numpy as np
import xarray as xr

from uqviz._array import binning as kb
from uqviz._array.bca import verdict
from uqviz._array.bootstrap import bootstrap_moments
from uqviz._array.resample import group_seeds
from uqviz.conditional.local import (BOOTSTRAP_METHODS, LOCAL_STATISTICS, _check_common,
                                     fraction_valid, local_streams,
                                     student_t_interval)
from uqviz.data.model import check_dataset
from uqviz.engine import checks, seeds
from uqviz.engine.binning import conditioning_values, default_n_bins
from uqviz.engine.parallel import progress_bar
from uqviz.engine.statistics import get_statistic
from uqviz.engine.tree import map_datasets

__all__ = ["ordering_study", "tie_order", "ORDERING_STATISTICS"]

ORDERING_STATISTICS = LOCAL_STATISTICS
CHUNK_BYTES = 64 * 2**20  # bootstrap replicates held at once per chunk of orderings
_SEED_MAX = 2**63


def _dataset_boot_seed(rng):
    """Bootstrap seed of ``local_calibration(ds, rng=rng)`` for one Dataset (first child)."""
    return local_streams(seeds.spawn(rng, 1)[0])[1]


def _strata(x):
    """Stratum index of each point (small ints: radix-sorted) and the (x, row) order."""
    _, sid = np.unique(x, return_inverse=True)
    dtype = np.int16 if sid.max() < 2**15 else np.int64
    return sid.astype(dtype), np.argsort(x, kind="stable")


def _tie_order(seed, sid, base, label):
    # random order of ties: stable sort of the stratum index after the permutation
    perm = np.random.default_rng(seed).permutation(sid.size)
    order = perm[np.argsort(sid[perm], kind="stable")]
    # bin of each point, then points back in (x, row) order inside each bin
    bin_of = np.empty(sid.size, dtype=label.dtype)
    bin_of[order] = label
    return base[np.argsort(bin_of[base], kind="stable")]


def _labels(sizes):
    return np.repeat(np.arange(len(sizes), dtype=np.int16 if len(sizes) < 2**15 else np.int64),
                     sizes)


def tie_order(x, seed, starts, sizes):
    """Ordering of the points for one random order of ties, canonical inside bins.

    The ties of ``x`` are put in the order of
    ``numpy.random.default_rng(seed).permutation(M)`` (``seed=None``: the
    data order), the points are stably sorted by ``x`` and cut into the bins
    ``starts``/``sizes``; inside each bin the points are then sorted by
    ``x`` and by original row, so that equal bins are equal row for row.

    Returns
    -------
    ndarray of int, shape (M,)
        Row numbers in binned order.

    Examples
    --------
    >>> import numpy as np
    >>> x = np.array([1.0, 0.0, 1.0, 1.0])
    >>> tie_order(x, None, np.array([0, 2]), np.array([2, 2])).tolist()
    [1, 0, 2, 3]
    """
    sid, base = _strata(np.asarray(x, dtype=float))
    if seed is None:
        return base
    return _tie_order(seed, sid, base, _labels(sizes))


def _chunk(e, u, stat, orders, starts0, sizes0, seeds_, *, method, n_boot, ci, engine,
           reference):
    """Estimates and validity (C, n_bins) for the orderings ``orders`` (C, M).

    The bins of all orderings are the groups of one grouped bootstrap
    (:func:`uqviz._array.bootstrap.bootstrap_moments`); ``seeds_`` holds the
    seed of every group, shape (C * n_bins,).
    """
    n_ord, m = orders.shape
    n_bins = len(sizes0)
    starts = (np.arange(n_ord)[:, None] * m + starts0[None, :]).ravel()
    sizes = np.tile(sizes0, n_ord)
    idx = orders.ravel()
    if method == "student-t":
        est, lower, upper = student_t_interval(e[idx] / u[idx], starts, sizes, ci)
    else:
        r = bootstrap_moments(e[idx], u[idx], {stat.name: (stat.func, stat.columns)},
                              n_boot=n_boot, seed=seeds_, ci=ci, method=method, starts=starts,
                              sizes=sizes, engine=engine)[stat.name]
        est, lower, upper = r.estimate, r.lower, r.upper
    valid = verdict(est, reference, lower, upper)[1]
    n_undefined = int(np.count_nonzero(~np.isfinite(lower) | ~np.isfinite(upper)))
    return est.reshape(n_ord, n_bins), valid.reshape(n_ord, n_bins), n_undefined


def _quantile_interval(values, ci):
    alpha = (1.0 - ci) / 2.0
    return np.quantile(values, [alpha, 1.0 - alpha])


def _ordering_one(ds, *, rng, statistic, conditioning, n_bins, n_orderings, n_boot, ci,
                  method, progress, chunk_size, engine, common_bootstrap):
    check_dataset(ds)
    name, x = conditioning_values(ds, conditioning)
    m = x.size
    n_bins = default_n_bins(m) if n_bins is None else n_bins
    starts0, sizes0 = kb.equal_count_starts(m, n_bins)
    if np.any(sizes0 < 2):
        raise ValueError(f"n_bins = {n_bins}: {int(np.sum(sizes0 < 2))} bins of the {m} points "
                         "have fewer than 2 points; use fewer bins")
    stat = get_statistic(statistic)
    reference = float(stat.reference)
    # first the streams of local_calibration for this rng: the data-order analysis
    # and the common bootstrap are local_calibration(data, rng=rng)
    ties_rng, boot_seed = local_streams(rng)
    binom_rng, fresh_rng = checks.rng(rng).spawn(2)
    tie_seeds = ties_rng.integers(0, _SEED_MAX, size=n_orderings)
    seeds0 = group_seeds(boot_seed, n_bins)
    boot_seeds = None if common_bootstrap else fresh_rng.integers(0, _SEED_MAX, size=n_orderings)

    def chunk_seeds(i0, i1):
        if common_bootstrap:
            return np.tile(seeds0, i1 - i0)
        return np.concatenate([group_seeds(_dataset_boot_seed(int(b)), n_bins)
                               for b in boot_seeds[i0:i1]])

    e = np.ascontiguousarray(ds["E"].values, dtype=float)
    u = np.ascontiguousarray(ds["uE"].values, dtype=float)
    if chunk_size is None:  # replicates (G x B) and a few row arrays (C x M) per ordering
        per_ordering = 8 * (n_bins * (1 if method == "student-t" else n_boot) + 6 * m)
        chunk_size = int(max(1, min(n_orderings, CHUNK_BYTES // per_ordering)))
    kw = dict(method=method, n_boot=n_boot, ci=ci, engine=engine, reference=reference)

    sid, base = _strata(x)
    bin_label = _labels(sizes0)
    est_data, valid_data, n_undefined = _chunk(e, u, stat, base[None, :], starts0, sizes0,
                                               seeds0, **kw)
    estimates = np.empty((n_orderings, n_bins))
    valid = np.empty((n_orderings, n_bins), dtype=bool)
    label = f"orderings of {name}" + (f" ({ds.attrs['name']})" if ds.attrs.get("name") else "")
    with progress_bar(n_orderings, desc=label, progress=progress, unit="ordering") as bar:
        for i0 in range(0, n_orderings, chunk_size):
            i1 = min(n_orderings, i0 + chunk_size)
            orders = np.stack([_tie_order(int(s), sid, base, bin_label) for s in tie_seeds[i0:i1]])
            estimates[i0:i1], valid[i0:i1], n_bad = _chunk(e, u, stat, orders, starts0, sizes0,
                                                           chunk_seeds(i0, i1), **kw)
            n_undefined += n_bad
            bar.update(i1 - i0)
    if n_undefined:
        where = f" in {ds.attrs['name']!r}" if ds.attrs.get("name") else ""
        warnings.warn(f"{n_undefined} of {(n_orderings + 1) * n_bins} bin intervals{where} "
                      "could not be computed (degenerate bootstrap distribution): counted not "
                      "valid", UserWarning, stacklevel=4)

    fv = valid.mean(axis=1)
    fv_binomial = binom_rng.binomial(n_bins, fv) / n_bins
    data_fv = fraction_valid(xr.Dataset({"valid": ("bin", valid_data[0])}), ci=ci, nominal=ci)
    q = _quantile_interval(fv, ci)
    qb = _quantile_interval(fv_binomial, ci)
    _, counts = np.unique(x, return_counts=True)
    coords = {"ordering": np.arange(n_orderings), "seed": ("ordering", tie_seeds),
              "bin": np.arange(n_bins), "count": ("bin", sizes0)}
    if boot_seeds is not None:
        coords["boot_seed"] = ("ordering", boot_seeds)
    return xr.Dataset(
        {
            "fv": ((), float(fv.mean())),
            "fv_lower": ((), float(q[0])),
            "fv_upper": ((), float(q[1])),
            "fv_binomial": ((), float(fv_binomial.mean())),
            "fv_binomial_lower": ((), float(qb[0])),
            "fv_binomial_upper": ((), float(qb[1])),
            "fv_data": ((), float(data_fv["estimate"])),
            "fv_data_lower": ((), float(data_fv["ci_lower"])),
            "fv_data_upper": ((), float(data_fv["ci_upper"])),
            "fv_ordering": ("ordering", fv),
            "fv_binomial_ordering": ("ordering", fv_binomial),
            "estimate": (("ordering", "bin"), estimates),
            "valid": (("ordering", "bin"), valid),
            "estimate_data": ("bin", est_data[0]),
            "valid_data": ("bin", valid_data[0]),
        },
        coords=coords,
        attrs={"conditioning": name, "n_bins": n_bins, "n_distinct": int(counts.size),
               "largest_stratum": int(counts.max())},
    )


def ordering_study(data, *, statistic="ZMS", conditioning, n_bins=None, n_orderings=1000,
                   n_boot=5000, ci=0.95, method=None, rng=None, progress=None, chunk_size=None,
                   engine=None, common_bootstrap=True):
    """Fraction of valid bins over random orderings of ties (Pernot (2023), Fig. 4).

    Repeats the equal-count analysis of :func:`uqviz.local_calibration` for
    ``n_orderings`` random orders of the tied values of the conditioning
    variable and summarises f_v over orderings, with and without the binomial
    noise of a finite number of bins.

    Parameters
    ----------
    data : xarray.Dataset or xarray.DataTree
    statistic : {"ZMS", "ZM", "RCE", "ZVar"}
        Per-bin statistic, as in :func:`uqviz.local_calibration`.
    conditioning : str or array_like
        ``"uE"`` (consistency), a feature (adaptivity), or one value per point.
    n_bins : int, optional
        Equal-count bins; default :func:`uqviz.engine.binning.default_n_bins`
        (Pernot (2023) uses 100 for QM9).
    n_orderings : int, default 1000
    n_boot : int, default 5000
        Bootstrap replicates per bin.
    ci : float, default 0.95
        Level of the per-bin intervals, of the quantile interval of f_v over
        orderings and of the Wilson interval of the data-order f_v.
    method : {"bca", "percentile", "basic", "student-t"}, optional
        Per-bin interval, as in :func:`uqviz.local_calibration`: default
        ``"student-t"`` for ZM, ``"bca"`` otherwise.
    rng : None, int, SeedSequence or Generator
        With ``common_bootstrap``, the data order and every ordering use the
        bootstrap random numbers of ``local_calibration(data, rng=rng)``.
    progress : bool, optional
        Progress bar; default shown in a terminal or Jupyter.
    chunk_size : int, optional
        Orderings per parallel call (memory ~ 8 (n_bins n_boot + 6 M) bytes
        per ordering); default: as many as fit in 64 MB. No effect on the numbers.
    engine : {"numba", "numpy"}, optional
        Resampling kernel.
    common_bootstrap : bool, default True
        Resample bin b with the same random numbers in every ordering, so the
        spread over orderings is the ordering effect alone. False: fresh
        bootstrap numbers per ordering (Pernot's procedure); the spread then
        also holds the bootstrap's Monte Carlo noise.

    Returns
    -------
    xarray.Dataset
        Scalars ``fv``, ``fv_lower``, ``fv_upper`` (mean and quantile interval
        of f_v over orderings); ``fv_binomial``, ``fv_binomial_lower``,
        ``fv_binomial_upper`` (the same for k*/n_bins); ``fv_data``,
        ``fv_data_lower``, ``fv_data_upper`` (data order, Wilson interval). On dim
        ``ordering`` (coordinate ``seed``; ``boot_seed`` without common
        bootstrap): ``fv_ordering``, ``fv_binomial_ordering``; on (``ordering``,
        ``bin``): ``estimate``, ``valid``; on ``bin``: ``estimate_data``,
        ``valid_data``.

    Notes
    -----
    Ordering ``i`` equals ``local_calibration(data.isel(point=tie_order(x,
    seed[i], starts, sizes)), rng=rng)`` (``rng=boot_seed[i]`` without common
    bootstrap), and the data order equals ``local_calibration(data, rng=rng)``.

    Examples
    --------
    >>> import numpy as np, uqviz
    >>> ds = uqviz.synthetic.default_example()
    >>> ds = ds.assign(Xr=("point", np.round(ds.X.values, 1)))  # a stratified feature
    >>> res = ordering_study(ds, conditioning="Xr", n_bins=10, n_orderings=20,
    ...                      n_boot=500, rng=0, progress=False)
    >>> res.sizes["ordering"], 0.0 <= float(res.fv) <= 1.0
    (20, True)
    """
    checks.choice("statistic", statistic, ORDERING_STATISTICS)
    n_bins, _, n_boot, ci = _check_common(n_bins=n_bins, binning="equal_count", min_count=None,
                                          n_boot=n_boot, ci=ci, rng=rng, engine=engine)
    n_orderings = checks.count("n_orderings", n_orderings)
    chunk_size = checks.optional_count("chunk_size", chunk_size)
    if method is None:
        method = "student-t" if statistic == "ZM" else "bca"
    checks.choice("method", method,
                  ("student-t",) + BOOTSTRAP_METHODS if statistic == "ZM" else BOOTSTRAP_METHODS)
    common_bootstrap = checks.boolean("common_bootstrap", common_bootstrap)
    if progress is not None:
        checks.boolean("progress", progress)
    out = map_datasets(_ordering_one, data, rng=checks.rng(rng), statistic=statistic,
                       conditioning=conditioning, n_bins=n_bins, n_orderings=n_orderings,
                       n_boot=n_boot, ci=ci, method=method, progress=progress,
                       chunk_size=chunk_size, engine=engine, common_bootstrap=common_bootstrap)
    out.attrs.update({"statistic": statistic, "n_orderings": n_orderings, "n_boot": n_boot,
                      "ci": ci, "method": method, "rng": seeds.seed_attr(rng),
                      "binning": "equal_count", "common_bootstrap": int(common_bootstrap)})
    if n_bins is not None:
        out.attrs["n_bins"] = n_bins
    return out
