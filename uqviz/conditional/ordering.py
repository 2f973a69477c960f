"""Sensitivity of the fraction of valid bins to the order of tied values (Pernot (2023), Fig. 4)."""

from __future__ import annotations

import warnings

import numpy as np
import xarray as xr

from uqviz._array import binning as binning_kernels
from uqviz._array.bca import verdict
from uqviz._array.lazy import lazy_module
from uqviz.conditional.local import (
    BOOTSTRAP_METHODS,
    COVERAGE_STATISTIC,
    LOCAL_STATISTICS,
    check_local_statistic,
    counts_valid,
    fraction_valid,
    heavy_flags,
    local_streams,
    student_t_interval,
)
from uqviz.data.model import check_dataset
from uqviz.engine.options import warn_points_independent
from uqviz.engine import checks, seeds
from uqviz.engine.binning import conditioning_values, default_n_bins
from uqviz.engine.options import BinningSpec, BootstrapOptions, streams
from uqviz.engine.parallel import progress_bar, resolve_client
from uqviz.engine.statistics import get_statistic
from uqviz.engine.tree import map_datasets
from uqviz.engine.warning_classes import UnreliableWarning

bootstrap_kernels = lazy_module("uqviz._array.bootstrap")
resample_kernels = lazy_module("uqviz._array.resample")

__all__ = ["ordering_study", "tie_order", "ORDERING_STATISTICS"]

#: the statistics of Pernot (2023); any registered moment statistic with a predefined
#: reference is accepted too (uqviz.conditional.local.check_local_statistic)
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
    return np.repeat(
        np.arange(len(sizes), dtype=np.int16 if len(sizes) < 2**15 else np.int64), sizes
    )


def tie_order(x, seed, starts, sizes):
    """Row order of the points for one random order of ties, canonical inside bins.

    Parameters
    ----------
    x : array_like, shape (M,)
        Conditioning values.
    seed : int or None
        Seed of the permutation of the ties; None keeps the data order.
    starts, sizes : ndarray of int
        The equal-count bins.

    Returns
    -------
    ndarray of int, shape (M,)
        Row numbers in binned order.

    Examples
    --------
    >>> import numpy as np
    >>> tie_order(np.array([1.0, 0.0, 1.0, 1.0]), None, np.array([0, 2]), np.array([2, 2])).tolist()
    [1, 0, 2, 3]
    """
    sid, base = _strata(np.asarray(x, dtype=float))
    if seed is None:
        return base
    return _tie_order(seed, sid, base, _labels(sizes))


def _chunk(e, u, stat, orders, starts0, sizes0, seeds_, *, boot, reference):
    """Estimates, verdicts (the interval holds the reference), heavy-tail flags and the bins
    counting as valid (C, n_bins) of the orderings ``orders`` (C, M), one grouped bootstrap
    (``boot``: the BootstrapOptions).

    A bin counts as valid as in :func:`uqviz.fraction_valid`, the f_v of Pernot (2023): its
    interval can be computed and holds the reference, heavy-tailed or not (``counts_valid``).
    """
    n_ord, m = orders.shape
    n_bins = len(sizes0)
    starts = (np.arange(n_ord)[:, None] * m + starts0[None, :]).ravel()
    sizes = np.tile(sizes0, n_ord)
    idx = orders.ravel()
    if boot.method == "student-t":
        est, lower, upper = student_t_interval(e[idx] / u[idx], starts, sizes, boot.ci)
    else:
        r = bootstrap_kernels.bootstrap_moments(
            e[idx],
            u[idx],
            {stat.name: (stat.func, stat.columns)},
            n_boot=boot.n_boot,
            seed=seeds_,
            ci=boot.ci,
            method=boot.method,
            starts=starts,
            sizes=sizes,
            engine=boot.engine,
        )[stat.name]
        est, lower, upper = r.estimate, r.lower, r.upper
    _, heavy = heavy_flags(stat.name, e[idx], u[idx], starts, sizes)
    valid = verdict(est, reference, lower, upper)[1]
    counted = counts_valid(valid, lower, upper)
    n_undefined = int(np.count_nonzero(~np.isfinite(lower) | ~np.isfinite(upper)))
    shape = (n_ord, n_bins)
    return (
        est.reshape(shape),
        valid.reshape(shape),
        heavy.reshape(shape),
        counted.reshape(shape),
        n_undefined,
    )


def _quantile_interval(values, ci):
    alpha = (1.0 - ci) / 2.0
    return np.quantile(values, [alpha, 1.0 - alpha])


def _ordering_one(ds, *, rng, statistic, spec, boot, n_orderings, chunk_size, common_bootstrap):
    """One dataset of :func:`ordering_study`: ``spec`` the (equal-count) BinningSpec,
    ``boot`` the BootstrapOptions."""
    check_dataset(ds)
    warn_points_independent(ds, "ordering_study")
    name, x = conditioning_values(ds, spec.conditioning)
    m = x.size
    n_bins = default_n_bins(m) if spec.n_bins is None else spec.n_bins
    n_boot, ci, method = boot.n_boot, boot.ci, boot.method
    starts0, sizes0 = binning_kernels.equal_count_starts(m, n_bins)
    if np.any(sizes0 < 2):
        raise ValueError(
            f"n_bins = {n_bins}: {int(np.sum(sizes0 < 2))} bins of the {m} points "
            "have fewer than 2 points; use fewer bins"
        )
    stat = get_statistic(statistic)
    reference = float(stat.reference)
    # first the streams of local_calibration for this rng: the data-order analysis
    # and the common bootstrap are local_calibration(data, rng=rng)
    ties_rng, boot_seed = local_streams(rng)
    s = streams(rng, "binom", "fresh")
    tie_seeds = ties_rng.integers(0, _SEED_MAX, size=n_orderings)
    seeds0 = resample_kernels.group_seeds(boot_seed, n_bins)
    boot_seeds = None if common_bootstrap else s.fresh.integers(0, _SEED_MAX, size=n_orderings)

    def chunk_seeds(i0, i1):
        if common_bootstrap:
            return np.tile(seeds0, i1 - i0)
        return np.concatenate(
            [
                resample_kernels.group_seeds(_dataset_boot_seed(int(b)), n_bins)
                for b in boot_seeds[i0:i1]
            ]
        )

    e = np.ascontiguousarray(ds["E"].values, dtype=float)
    u = np.ascontiguousarray(ds["uE"].values, dtype=float)
    if chunk_size is None:  # replicates (G x B) and a few row arrays (C x M) per ordering
        per_ordering = 8 * (n_bins * (1 if method == "student-t" else n_boot) + 6 * m)
        chunk_size = int(max(1, min(n_orderings, CHUNK_BYTES // per_ordering)))
    kw = dict(boot=boot, reference=reference)

    sid, base = _strata(x)
    bin_label = _labels(sizes0)
    est_data, valid_data, heavy_data, counted_data, n_undefined = _chunk(
        e, u, stat, base[None, :], starts0, sizes0, seeds0, **kw
    )
    estimates = np.empty((n_orderings, n_bins))
    valid = np.empty((n_orderings, n_bins), dtype=bool)
    heavy = np.empty((n_orderings, n_bins), dtype=bool)
    counted = np.empty((n_orderings, n_bins), dtype=bool)
    label = f"orderings of {name}" + (f" ({ds.attrs['name']})" if ds.attrs.get("name") else "")
    with progress_bar(n_orderings, desc=label, progress=boot.progress, unit="ordering") as bar:
        for i0 in range(0, n_orderings, chunk_size):
            i1 = min(n_orderings, i0 + chunk_size)
            orders = np.stack([_tie_order(int(s), sid, base, bin_label) for s in tie_seeds[i0:i1]])
            estimates[i0:i1], valid[i0:i1], heavy[i0:i1], counted[i0:i1], n_bad = _chunk(
                e, u, stat, orders, starts0, sizes0, chunk_seeds(i0, i1), **kw
            )
            n_undefined += n_bad
            bar.update(i1 - i0)
    if n_undefined:
        where = f" in {ds.attrs['name']!r}" if ds.attrs.get("name") else ""
        warnings.warn(
            f"{n_undefined} of {(n_orderings + 1) * n_bins} bin intervals{where} "
            "could not be computed (degenerate bootstrap distribution): counted not "
            "valid",
            UnreliableWarning,
            stacklevel=4,
        )

    fv = counted.mean(axis=1)  # the f_v of Pernot (2023), as fraction_valid counts it
    fv_binomial = s.binom.binomial(n_bins, fv) / n_bins
    data_fv = fraction_valid(xr.Dataset({"valid": ("bin", counted_data[0])}), ci=ci, nominal=ci)
    q = _quantile_interval(fv, ci)
    qb = _quantile_interval(fv_binomial, ci)
    _, counts = np.unique(x, return_counts=True)
    coords = {
        "ordering": np.arange(n_orderings),
        "tie_seed": ("ordering", tie_seeds),
        "bin": np.arange(n_bins),
        "count": ("bin", sizes0),
    }
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
            "valid": (
                ("ordering", "bin"),
                valid,
                {
                    "long_name": "the interval holds the reference (as local_calibration's "
                    "valid; f_v counts every such bin, heavy-tailed or not)"
                },
            ),
            "heavy_tail": (("ordering", "bin"), heavy),
            "estimate_data": ("bin", est_data[0]),
            "valid_data": ("bin", valid_data[0]),
            "heavy_tail_data": ("bin", heavy_data[0]),
        },
        coords=coords,
        attrs={
            "conditioning": name,
            "n_bins": n_bins,
            "n_distinct": int(counts.size),
            "largest_stratum": int(counts.max()),
        },
    )


def ordering_study(
    data,
    *,
    statistic="ZMS",
    conditioning,
    n_bins=None,
    n_orderings=1000,
    n_boot=5000,
    ci=0.95,
    method=None,
    rng=None,
    progress=None,
    chunk_size=None,
    engine=None,
    common_bootstrap=True,
    client=None,
):
    r"""Fraction of valid bins f_v over random orderings of tied values (Pernot (2023), Fig. 4).

    Parameters
    ----------
    data : xarray.Dataset or xarray.DataTree
        Errors ``E`` and standard uncertainties ``uE`` on dim ``point`` (with any features), as
        made by :func:`uqviz.from_arrays` and the other constructors; a DataTree gives one
        result per dataset, on dim ``dataset``.
    statistic : str, default "ZMS"
        The local statistic: ``"ZMS"``, ``"ZM"``, ``"RCE"``, ``"ZVar"``, ``"RCE2"`` or any
        registered moment statistic with a predefined reference (as in
        :func:`uqviz.local_calibration`, "PICP" excepted).
    conditioning : str or array_like
        Variable the bins are cut on: "uE", a feature name, or one value per point (required).
    n_bins : int, optional
        Default ``min(round(sqrt(M)), M // 100)``, at least 1
        (``uqviz.engine.binning.default_n_bins``).
    n_orderings : int, default 1000
        Number of random orderings of the tied values.
    n_boot : int, default 5000
        Number of bootstrap replicates, an int >= 2.
    ci : float, default 0.95
        Confidence level of the intervals, in (0, 1).
    method : {"bca", "percentile", "basic", "student-t"}, optional
        Interval method of each bin; default as :func:`uqviz.local_calibration`: "student-t" for
        ZM, else "bca".
    rng : None, int, numpy.random.SeedSequence or numpy.random.Generator, default None
        Random stream: None (fresh entropy), an int >= 0, a numpy.random.SeedSequence (copied,
        never consumed) or a numpy.random.Generator; the same ``rng`` gives the same numbers on
        any number of threads or workers (docs/conventions.md, "Randomness").
    progress : bool or None, default None
        tqdm progress bar: None shows it in a terminal or Jupyter unless the environment
        variable ``UQVIZ_PROGRESS=0`` is set, True always shows it, False never.
    engine : {"numba", "numpy"}, optional
        Resampling kernel of the bootstrap (default numba).
    chunk_size : int, optional
        Orderings per parallel call; default: as many as fit in 64 MB. No effect on the numbers.
    common_bootstrap : bool, default True
        Use the same bootstrap numbers for a bin in every ordering (the spread is then
        the ordering effect alone); False draws fresh ones per ordering.
    client : None, "local" or dask.distributed.Client, default None
        Where the bootstrap runs (datasets as tasks) (docs/conventions.md); the numbers do
        not depend on it.

    Returns
    -------
    xarray.Dataset
        Scalars ``fv``, ``fv_lower``, ``fv_upper``, ``fv_binomial*``, ``fv_data*``; on
        ``ordering``: ``fv_ordering``, ``fv_binomial_ordering``; on (``ordering``,
        ``bin``): ``estimate``, ``valid``, ``heavy_tail``; on ``bin``: ``estimate_data``,
        ``valid_data``, ``heavy_tail_data`` (coord ``count``). Coords on ``ordering``:
        ``tie_seed``, the seed of the ordering of tied values, and, with
        ``common_bootstrap=False``, ``boot_seed``, that of its bootstrap. ``valid`` says that
        the interval holds the reference, as in :func:`uqviz.local_calibration`; the
        fractions ``fv*`` are the f_v of Pernot (2023), counted as
        :func:`uqviz.fraction_valid` counts them
        (docs/conventions.md, "Fraction of valid bins"): every bin whose interval holds the
        reference, heavy-tailed or not; ``heavy_tail`` (beta_GM(Z^2) above the limit of
        Pernot (2024b), Table II) flags the bins that cannot be trusted.

    See Also
    --------
    uqviz.local_calibration : one ordering (``random_ties=True``).
    uqviz.fraction_valid : f_v of one binning.
    uqviz.plots.conditional.ordering : draws f_v over orderings.

    Notes
    -----
    In each bin :math:`b` of the conditioning variable (:math:`n_b` points),

    .. math::

       \mathrm{LZM}_b = \langle Z \rangle_b, \qquad \mathrm{LZMS}_b = \langle Z^2 \rangle_b, \qquad
       \mathrm{LRCE}_b = \frac{\mathrm{RMV}_b - \mathrm{RMSE}_b}{\mathrm{RMV}_b},

    with references 0, 1 and 0; conditioning on :math:`u_E` tests consistency, on a feature
    adaptivity (Pernot (2023), eqs. 6-7 and 10-11). A bin is valid when its reference lies in
    its interval (bootstrap, or Student-t for LZM; PICP: Wilson with continuity correction).

    For each of :math:`R` random orderings of the tied conditioning values, the equal-count bins
    are recut and :math:`f_v = n_v / N` recomputed; ``fv_lower``, ``fv_upper`` are quantiles of
    :math:`f_v` over the orderings (Pernot (2023), Fig. 4).

    References
    ----------
    - Pernot (2023), Fig. 4: the ordering study.
    - DiCiccio & Efron (1996): the BCa interval.

    Full entries: :doc:`/docs/references`.

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
    if statistic == COVERAGE_STATISTIC:
        raise ValueError(
            "statistic: 'PICP' is a binomial proportion with no bootstrap to share "
            "between orderings; ordering_study takes the moment statistics of "
            "local_calibration"
        )
    statistic = check_local_statistic(statistic)
    spec = BinningSpec.check(conditioning=conditioning, n_bins=n_bins)
    if method is None:
        method = "student-t" if statistic == "ZM" else "bca"
    boot = BootstrapOptions.check(
        n_boot=n_boot,
        ci=ci,
        method=method,
        rng=rng,
        engine=engine,
        progress=progress,
        methods=("student-t",) + BOOTSTRAP_METHODS if statistic == "ZM" else BOOTSTRAP_METHODS,
    )
    n_orderings = checks.count("n_orderings", n_orderings)
    chunk_size = checks.optional_count("chunk_size", chunk_size)
    common_bootstrap = checks.boolean("common_bootstrap", common_bootstrap)
    out = map_datasets(
        _ordering_one,
        data,
        rng=checks.rng(rng),
        statistic=statistic,
        spec=spec,
        boot=boot,
        n_orderings=n_orderings,
        chunk_size=chunk_size,
        common_bootstrap=common_bootstrap,
        on_client=resolve_client(client),
    )
    b = boot.attrs
    out.attrs.update(
        {
            "statistic": statistic,
            "n_orderings": n_orderings,
            "n_boot": b["n_boot"],
            "ci": b["ci"],
            "method": b["method"],
            "rng": b["rng"],
            "binning": spec.binning,
            "common_bootstrap": int(common_bootstrap),
            "engine": b["engine"],
        }
    )
    if spec.n_bins is not None:
        out.attrs["n_bins"] = spec.n_bins
    return out
