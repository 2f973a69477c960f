"""Sensitivity of the fraction of valid bins to the ordering of ties (001 Fig. 4).

Equal-count bins of a *stratified* conditioning variable (many points sharing
one value: the 138 distinct uE of QM9, its 398 masses, 76 heteroatom
fractions) have to split some strata between two bins, and which points fall
on each side depends on the order of the data. Pernot (2023, sect. III B 3)
checks the impact by repeating the LZMS (or LZM) analysis for many random
orderings of the data and summarising the fraction of valid bins f_v by its
mean and 95 % interval over orderings; to account for the finite number of
bins, each ordering's f_v is also perturbed by binomial noise,
k* ~ Binomial(n_bins, f_v), and the 95 % interval of k*/n_bins over orderings
is reported (the orange diamonds of Fig. 4).

Design
------
One ordering = one random permutation of the points applied before the stable
sort of the conditioning variable, i.e. a random order of the ties (what
``local_calibration(..., random_ties=True)`` does, and what the authors'
``aux = sample(M, M)`` does in ErrViewLib). Inside each bin the points are put
back in a canonical order (by conditioning value, then by original row), so
that a bin holding the same points in two orderings is the same bin.

All orderings share the bootstrap random numbers (*common random numbers*:
bin b is resampled with the same 64-bit seed in every ordering). The spread
over orderings is therefore due to the ordering alone: with no ties it is
exactly zero. (The paper re-ran the bootstrap with fresh random numbers for
every ordering, so its spread also holds the bootstrap's Monte Carlo noise;
``common_bootstrap=False`` does that.) The data-order analysis (``nominal``)
uses the same seeds, and equals ``local_calibration(data, rng=boot_seed)``
with ``boot_seed`` stored in the result's attributes; ordering ``i`` equals
``local_calibration`` of the data re-ordered as described in
:func:`ordering_study` (tested).

Speed
-----
Orderings are processed in chunks; the rows of all bins of all orderings of a
chunk are concatenated and resampled in one parallel numba call (groups =
ordering x bin, one seed per group). For single-column statistics (ZMS) a
specialised kernel draws exactly the random numbers of the generic engine
(:func:`uqviz._array.resample.resample_sums`: same seeds, xoshiro256** streams
and Lemire draws, same additions; tested bit for bit) with a scalar
accumulator and no wrap-around indexing, about 1.6x faster. The BCa verdict
of each bin (does the interval contain the reference?) comes from one O(B)
pass over its replicates (:func:`bca_valid`) instead of a sort, and the
jackknife acceleration from leave-one-out means, vectorised over all groups.
The results do not depend on the chunk size or on the number of threads.
"""

from __future__ import annotations

import numpy as np
import xarray as xr
from scipy import special
from tqdm.auto import tqdm

from uqviz._array import bca
from uqviz._array import binning as kb
from uqviz._array import stats as ks
from uqviz._array.bootstrap import _moment_jackknife_accel
from uqviz._array.resample import BLOCK, default_engine, group_seeds, resample_sums
from uqviz.engine.tree import map_datasets, spawn_rngs
from uqviz.engine.binning import conditioning_values, default_n_bins
from uqviz.conditional.local import _student_t_interval, fraction_valid
from uqviz.data.model import check_dataset
from uqviz.engine.statistics import get_statistic

try:
    import numba
except ImportError:  # pragma: no cover - numba is a dependency
    numba = None

__all__ = ["ordering_study", "tie_order", "bca_valid", "ORDERING_STATISTICS"]

ORDERING_STATISTICS = ("ZMS", "ZM", "RCE", "ZVar")
CHUNK_BYTES = 64 * 2**20  # bootstrap replicates held at once per chunk of orderings
_SEED_MAX = 2**63


# ---------------------------------------------------------------------------
# numba kernels
# ---------------------------------------------------------------------------
if numba is not None:
    _U64 = numba.uint64

    # the engine's generator primitives, so the streams are the engine's own
    from uqviz._array.resample import _rotl, _splitmix64

    @numba.njit(inline="always")
    def _below_state(s0, s1, s2, s3, n, threshold):
        # one unbiased integer in [0, n) (Lemire with rejection), state in registers
        mask = _U64(0xFFFFFFFF)
        while True:
            r = _rotl(s1 * _U64(5), 7) * _U64(9)
            t = s1 << _U64(17)
            s2 ^= s0
            s3 ^= s1
            s1 ^= s2
            s0 ^= s3
            s2 ^= t
            s3 = _rotl(s3, 45)
            m = (r >> _U64(32)) * n
            if (m & mask) >= threshold:
                return m >> _U64(32), s0, s1, s2, s3

    @numba.njit(parallel=True, cache=True)
    def _sums_one_column(col, starts, sizes, n_boot, seeds, block):
        """Resampled sums of one column per group: bit-identical to the generic engine.

        Same task layout, seeding and draws as ``resample._sums_numba_kernel``
        (pairs of 32-bit Lemire draws from one xoshiro256** output, rare
        rejection fallback), same additions in the same order.
        """
        n_groups = sizes.shape[0]
        n_blocks = (n_boot + block - 1) // block
        out = np.empty((n_groups, n_boot))
        mask = _U64(0xFFFFFFFF)
        sh = _U64(32)
        for task in numba.prange(n_groups * n_blocks):
            g = task // n_blocks
            blk = task - g * n_blocks
            x = seeds[g] ^ (_U64(blk) * _U64(0xD1B54A32D192ED03))
            x, s0 = _splitmix64(x)
            x, s1 = _splitmix64(x)
            x, s2 = _splitmix64(x)
            x, s3 = _splitmix64(x)
            size = sizes[g]
            n = _U64(size)
            threshold = (_U64(0x100000000) - n) % n
            grp = col[starts[g]:starts[g] + size]
            for b in range(blk * block, min(n_boot, (blk + 1) * block)):
                acc = 0.0
                for _ in range(size // 2):
                    r = _rotl(s1 * _U64(5), 7) * _U64(9)
                    t = s1 << _U64(17)
                    s2 ^= s0
                    s3 ^= s1
                    s1 ^= s2
                    s0 ^= s3
                    s2 ^= t
                    s3 = _rotl(s3, 45)
                    m1 = (r >> sh) * n
                    m2 = (r & mask) * n
                    if (m1 & mask) >= threshold and (m2 & mask) >= threshold:
                        acc += grp[m1 >> sh] + grp[m2 >> sh]
                    else:
                        j1, s0, s1, s2, s3 = _below_state(s0, s1, s2, s3, n, threshold)
                        j2, s0, s1, s2, s3 = _below_state(s0, s1, s2, s3, n, threshold)
                        acc += grp[j1] + grp[j2]
                if size % 2 == 1:
                    j1, s0, s1, s2, s3 = _below_state(s0, s1, s2, s3, n, threshold)
                    acc += grp[j1]
                out[g, b] = acc
        return out

    @numba.njit(parallel=True, cache=True)
    def _sweep(reps, est, ref):
        """One pass per row: counts and extremes around the estimate and the reference.

        Returns ``counts`` (G, 4): #(x < est), #(x <= est), #(x < ref), #(x <= ref)
        and ``ext`` (G, 5): min(x), max{x < ref}, max{x <= ref}, min{x > ref},
        min{x >= ref} (+-inf when empty).
        """
        n_groups, n_boot = reps.shape
        counts = np.zeros((n_groups, 4), dtype=np.int64)
        ext = np.empty((n_groups, 5))
        for g in numba.prange(n_groups):
            e = est[g]
            c0 = 0
            c1 = 0
            c2 = 0
            c3 = 0
            lo = np.inf
            max_lt = -np.inf
            max_le = -np.inf
            min_gt = np.inf
            min_ge = np.inf
            for b in range(n_boot):
                v = reps[g, b]
                c0 += v < e
                c1 += v <= e
                c2 += v < ref
                c3 += v <= ref
                lo = min(lo, v)
                max_lt = max(max_lt, v if v < ref else -np.inf)
                max_le = max(max_le, v if v <= ref else -np.inf)
                min_gt = min(min_gt, v if v > ref else np.inf)
                min_ge = min(min_ge, v if v >= ref else np.inf)
            counts[g, 0] = c0
            counts[g, 1] = c1
            counts[g, 2] = c2
            counts[g, 3] = c3
            ext[g, 0] = lo
            ext[g, 1] = max_lt
            ext[g, 2] = max_le
            ext[g, 3] = min_gt
            ext[g, 4] = min_ge
        return counts, ext

    @numba.njit(inline="always")
    def _select(a, lo, hi, k):
        # in-place quickselect on a[lo:hi+1]: a[k] becomes the k-th smallest,
        # with a[lo:k] <= a[k] <= a[k+1:hi+1]
        while hi > lo:
            mid = (lo + hi) >> 1
            if a[mid] < a[lo]:
                a[mid], a[lo] = a[lo], a[mid]
            if a[hi] < a[lo]:
                a[hi], a[lo] = a[lo], a[hi]
            if a[hi] < a[mid]:
                a[hi], a[mid] = a[mid], a[hi]
            pivot = a[mid]
            i = lo
            j = hi
            while i <= j:
                while a[i] < pivot:
                    i += 1
                while a[j] > pivot:
                    j -= 1
                if i <= j:
                    a[i], a[j] = a[j], a[i]
                    i += 1
                    j -= 1
            if k <= j:
                hi = j
            elif k >= i:
                lo = i
            else:
                return

    @numba.njit(inline="always")
    def _min_from(a, start):
        m = a[start]
        for i in range(start + 1, a.shape[0]):
            if a[i] < m:
                m = a[i]
        return m

    @numba.njit(parallel=True, cache=True)
    def _order_statistics(reps, lo):
        """Order statistics x_(lo) and x_(lo+1) of each row for two positions (in place).

        ``lo`` has shape (G, 2) (lower and upper BCa positions, lo[:, 0] <=
        lo[:, 1]; -1 marks an undefined bound). Returns (G, 2, 2): for each
        bound the values at sorted positions lo and min(lo + 1, B - 1). Rows
        of ``reps`` are partially reordered.
        """
        n_groups, n_boot = reps.shape
        out = np.full((n_groups, 2, 2), np.nan)
        for g in numba.prange(n_groups):
            a = reps[g]
            left = 0
            for q in range(2):
                k = lo[g, q]
                if k < 0:
                    continue
                if k < left:  # not expected (levels are ordered); restart on the row
                    left = 0
                _select(a, left, n_boot - 1, k)
                out[g, q, 0] = a[k]
                out[g, q, 1] = _min_from(a, k + 1) if k + 1 < n_boot else a[k]
                left = k
        return out


def _sums(col2d, starts, sizes, n_boot, seeds, engine):
    """Resampled sums (G, B, k): the specialised kernel for one column under numba."""
    use_fast = (numba is not None and col2d.shape[1] == 1
                and (engine or default_engine()) == "numba")
    if use_fast:
        out = _sums_one_column(np.ascontiguousarray(col2d[:, 0]), starts, sizes, int(n_boot),
                               seeds, BLOCK)
        return out[:, :, None]
    return resample_sums(col2d, n_boot, seeds, starts=starts, sizes=sizes, engine=engine)


def _lerp(a, b, frac):
    # the interpolation of uqviz._array.bca._quantiles, same operations
    return a + frac * (b - a)


def _side(lo, hi, frac, count, below_max, above_min, reference, slack, *, upper):
    """Decide a bound against the reference from counts; -1 where undecided.

    For the lower bound (``upper=False``) the question is ``bound <= ref`` with
    ``count = #(x <= ref)``, ``below_max = max{x <= ref}``, ``above_min =
    min{x > ref}``; for the upper bound it is ``bound >= ref`` with ``count =
    #(x < ref)``, ``below_max = max{x < ref}``, ``above_min = min{x >= ref}``.
    A bound is a + frac (b - a) >= a with a = x_(lo) <= b = x_(hi).
    """
    out = np.full(lo.shape, -1, dtype=np.int8)
    above = lo >= count  # x_(lo) on the far side: the bound is there too
    out[above] = 0 if not upper else 1
    straddle = (lo == count - 1) & (hi == count)  # both order statistics known
    with np.errstate(invalid="ignore"):
        value = _lerp(below_max, above_min, frac)
    ok = (value <= reference) if not upper else (value >= reference)
    out[straddle] = ok[straddle]
    below = hi <= count - 1  # both order statistics on the near side
    exact = below & (hi == lo)  # the bound is x_(lo) itself
    out[exact] = 1 if not upper else 0
    # otherwise a + frac (b - a) exceeds b by rounding at most: decided unless
    # some replicate lies within a few ulps of the reference
    sure = below & ~exact & (below_max <= reference - slack)
    out[sure] = 1 if not upper else 0
    return out


def bca_valid(estimate, replicates, accel, reference, *, ci=0.95):
    """Whether the BCa interval of each row contains ``reference``, in O(B) per row.

    Gives exactly the decision ``lower <= reference <= upper`` of the
    intervals of :func:`uqviz._array.bca.interval` (linear interpolation
    between order statistics) without sorting: one pass counts the
    replicates on each side of the estimate and of the reference; the
    order statistics are selected only for the rare rows with a replicate
    within a few ulps of the reference.

    Parameters
    ----------
    estimate, accel : ndarray, shape (G,)
    replicates : ndarray, shape (G, B)
    reference : float
    ci : float

    Returns
    -------
    ndarray of bool, shape (G,)

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> reps = rng.normal([[1.0], [1.5]], 0.1, size=(2, 999))
    >>> bca_valid(np.array([1.0, 1.5]), reps, np.zeros(2), 1.0).tolist()
    [True, False]
    """
    estimate = np.ascontiguousarray(estimate, dtype=float)
    replicates = np.ascontiguousarray(replicates, dtype=float)
    n_boot = replicates.shape[-1]
    counts, ext = _sweep(replicates, estimate, float(reference))
    z0 = special.ndtri((counts[:, 0] + counts[:, 1]) / (2.0 * n_boot))  # bca.bias_correction
    probs = bca.bca_levels(z0, accel, ci)  # (G, 2)
    bad = np.isnan(probs).any(axis=1)
    pos = np.clip(np.where(np.isnan(probs), 0.0, probs), 0.0, 1.0) * (n_boot - 1)
    lo = np.floor(pos).astype(np.int64)
    hi = np.minimum(lo + 1, n_boot - 1)
    frac = pos - lo
    spread = np.abs(ext[:, 0]) + np.abs(ext[:, 2:4]).max(axis=1, where=np.isfinite(ext[:, 2:4]),
                                                       initial=0.0)
    slack = 8.0 * np.finfo(float).eps * (spread + abs(reference))
    ok_lower = _side(lo[:, 0], hi[:, 0], frac[:, 0], counts[:, 3], ext[:, 2], ext[:, 3],
                     reference, slack, upper=False)
    ok_upper = _side(lo[:, 1], hi[:, 1], frac[:, 1], counts[:, 2], ext[:, 1], ext[:, 4],
                     reference, slack, upper=True)
    todo = np.flatnonzero(~bad & ((ok_lower < 0) | (ok_upper < 0)))
    if todo.size:  # exact order statistics for the undecided rows
        sub = np.array(replicates[todo], dtype=float, order="C")
        stats = _order_statistics(sub, np.ascontiguousarray(lo[todo]))
        bounds = _lerp(stats[..., 0], stats[..., 1], frac[todo])
        ok_lower[todo] = bounds[:, 0] <= reference
        ok_upper[todo] = bounds[:, 1] >= reference
    return ~bad & (ok_lower == 1) & (ok_upper == 1)


# ---------------------------------------------------------------------------
# one chunk of orderings
# ---------------------------------------------------------------------------
def _lc_boot_seed(boot_seed):
    """The 64-bit seed that ``local_calibration(rng=boot_seed)`` gives the bootstrap.

    Mirrors the stream derivation of ``local_calibration`` (one child per
    dataset, then ties/bootstrap children, then one integer draw); checked by
    the tests against ``local_calibration`` itself.
    """
    child = spawn_rngs(boot_seed, 1)[0]
    _, boot_rng = np.random.default_rng(child).spawn(2)
    return int(np.random.default_rng(boot_rng).integers(0, _SEED_MAX))


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
    x = np.asarray(x, dtype=float)
    sid, base = _strata(x)
    if seed is None:
        return base
    label = np.repeat(np.arange(len(sizes), dtype=np.int16 if len(sizes) < 2**15 else np.int64),
                      sizes)
    return _tie_order(seed, sid, base, label)


def _chunk(e, u, stat, orders, starts0, sizes0, seeds, *, n_boot, ci, engine, reference):
    """Estimates and validity (C, n_bins) for the orderings ``orders`` (C, M).

    ``seeds``: the bootstrap seed of every group, shape (C * n_bins,).
    """
    n_ord, m = orders.shape
    n_bins = len(sizes0)
    starts = (np.arange(n_ord)[:, None] * m + starts0[None, :]).ravel()
    sizes = np.tile(sizes0, n_ord)
    idx = orders.ravel()
    if stat.name == "ZM":
        est, lower, upper = _student_t_interval(e[idx] / u[idx], starts, sizes, ci)
    else:
        names = sorted(stat.columns)
        cols = ks.columns(e[idx], u[idx], names)  # (C*M, k), as bootstrap_moments
        n = sizes.astype(float)
        means = np.add.reduceat(cols, starts, axis=0) / n[:, None]
        est = np.asarray(stat.func({c: means[..., i] for i, c in enumerate(names)}, n),
                         dtype=float)
        sums = _sums(cols, starts, sizes, n_boot, seeds, engine)
        sums /= n[:, None, None]
        reps = np.asarray(stat.func({c: sums[..., i] for i, c in enumerate(names)},
                                    n[:, None]), dtype=float)
        del sums
        accel = _moment_jackknife_accel(cols, names, stat.func, starts, sizes)
        valid = bca_valid(est, reps, accel, reference, ci=ci)
        return est.reshape(n_ord, n_bins), valid.reshape(n_ord, n_bins)
    valid = (lower <= reference) & (reference <= upper)
    return est.reshape(n_ord, n_bins), valid.reshape(n_ord, n_bins)


def _quantile_interval(values, ci):
    alpha = (1.0 - ci) / 2.0
    return np.quantile(values, [alpha, 1.0 - alpha])


def _ordering_one(ds, *, rng, statistic, conditioning, n_bins, n_orderings, n_boot, ci,
                  progress, chunk_size, engine, common_bootstrap):
    check_dataset(ds)
    name, x = conditioning_values(ds, conditioning)
    m = x.size
    n_bins = default_n_bins(m) if n_bins is None else int(n_bins)
    starts0, sizes0 = kb.equal_count_starts(m, n_bins)
    if np.any(sizes0 < 2):
        raise ValueError(f"{int(np.sum(sizes0 < 2))} bins have fewer than 2 points: "
                         "use fewer bins")
    stat = get_statistic(statistic)
    reference = float(stat.reference)
    rng = np.random.default_rng(rng)
    boot_seed = int(rng.integers(0, _SEED_MAX))
    tie_seeds = rng.integers(0, _SEED_MAX, size=n_orderings)
    binom_rng = np.random.default_rng(int(rng.integers(0, _SEED_MAX)))
    if common_bootstrap:
        boot_seeds = np.full(n_orderings, boot_seed, dtype=np.int64)
    else:  # fresh bootstrap random numbers for every ordering (the paper's procedure)
        boot_seeds = rng.integers(0, _SEED_MAX, size=n_orderings)
    seeds0 = group_seeds(_lc_boot_seed(boot_seed), n_bins)

    def chunk_seeds(i0, i1):
        if common_bootstrap:
            return np.tile(seeds0, i1 - i0)
        return np.concatenate([group_seeds(_lc_boot_seed(int(b)), n_bins)
                               for b in boot_seeds[i0:i1]])

    e = np.ascontiguousarray(ds["E"].values, dtype=float)
    u = np.ascontiguousarray(ds["uE"].values, dtype=float)
    if chunk_size is None:  # replicates (G x B) and a few row arrays (C x M) per ordering
        per_ordering = 8 * (n_bins * (1 if statistic == "ZM" else n_boot) + 6 * m)
        chunk_size = int(max(1, min(n_orderings, CHUNK_BYTES // per_ordering)))
    chunk_size = max(1, int(chunk_size))
    kw = dict(n_boot=n_boot, ci=ci, engine=engine, reference=reference)

    sid, base = _strata(x)
    bin_label = np.repeat(np.arange(n_bins, dtype=np.int16 if n_bins < 2**15 else np.int64),
                          sizes0)
    est_nom, valid_nom = _chunk(e, u, stat, base[None, :], starts0, sizes0, seeds0, **kw)
    estimates = np.empty((n_orderings, n_bins))
    valid = np.empty((n_orderings, n_bins), dtype=bool)
    label = f"orderings of {name}" + (f" ({ds.attrs['name']})" if ds.attrs.get("name") else "")
    with tqdm(total=n_orderings, disable=not progress, desc=label, unit="ordering") as bar:
        for i0 in range(0, n_orderings, chunk_size):
            i1 = min(n_orderings, i0 + chunk_size)
            orders = np.stack([_tie_order(int(s), sid, base, bin_label) for s in tie_seeds[i0:i1]])
            estimates[i0:i1], valid[i0:i1] = _chunk(e, u, stat, orders, starts0, sizes0,
                                                    chunk_seeds(i0, i1), **kw)
            bar.update(i1 - i0)

    fv = valid.mean(axis=1)
    k_star = binom_rng.binomial(n_bins, fv)
    fv_binom = k_star / n_bins
    n_valid_nom = int(valid_nom.sum())
    nominal = fraction_valid(xr.Dataset({"valid": ("bin", valid_nom[0])}), ci=ci, nominal=ci)
    q = _quantile_interval(fv, ci)
    qb = _quantile_interval(fv_binom, ci)
    _, counts = np.unique(x, return_counts=True)
    bin_coords = {"bin": np.arange(n_bins), "count": ("bin", sizes0)}
    out = xr.Dataset(
        {
            "fv_mean": ((), float(fv.mean())),
            "fv_ci_lower": ((), float(q[0])),
            "fv_ci_upper": ((), float(q[1])),
            "fv_binom_mean": ((), float(fv_binom.mean())),
            "fv_binom_lower": ((), float(qb[0])),
            "fv_binom_upper": ((), float(qb[1])),
            "fv_nominal": ((), n_valid_nom / n_bins),
            "fv_nominal_lower": ((), float(nominal["ci_lower"])),
            "fv_nominal_upper": ((), float(nominal["ci_upper"])),
            "fv": ("replicate", fv),
            "fv_binom": ("replicate", fv_binom),
            "estimate": (("replicate", "bin"), estimates),
            "valid": (("replicate", "bin"), valid),
            "estimate_nominal": ("bin", est_nom[0]),
            "valid_nominal": ("bin", valid_nom[0]),
        },
        coords={"replicate": np.arange(n_orderings), "seed": ("replicate", tie_seeds),
                "boot_seed": ("replicate", boot_seeds), **bin_coords},
        attrs={"conditioning": name, "n_bins": n_bins, "boot_seed": boot_seed,
               "common_bootstrap": int(bool(common_bootstrap)),
               "n_distinct": int(counts.size), "largest_stratum": int(counts.max()),
               "binning": "equal_count"},
    )
    return out


def ordering_study(data, *, statistic="ZMS", conditioning, n_bins=None, n_orderings=1000,
                   n_boot=5000, ci=0.95, rng=None, progress=True, chunk_size=None,
                   engine=None, common_bootstrap=True):
    """Fraction of valid bins over random orderings of ties (001 sect. III B 3, Fig. 4).

    Repeats the equal-count LZMS (or LZM, LRCE, LZVar) analysis of
    :func:`uqviz.local_calibration` for ``n_orderings`` random orders of the
    tied values of the conditioning variable, and summarises f_v (the
    fraction of bins whose interval contains the reference) over orderings,
    with and without the binomial noise of a finite number of bins.

    Parameters
    ----------
    data : xarray.Dataset or xarray.DataTree
    statistic : {"ZMS", "ZM", "RCE", "ZVar"}
        Per-bin statistic, with the intervals of :func:`uqviz.local_calibration`
        (BCa bootstrap; Student-t for ZM).
    conditioning : str or array_like
        ``"uE"`` (consistency) or a feature (adaptivity), or one value per point.
    n_bins : int, optional
        Number of equal-count bins; default round(sqrt(M)) (the paper uses 100).
    n_orderings : int, default 1000
        Number of random orderings (1000 in the paper).
    n_boot : int, default 5000
        Bootstrap replicates per bin.
    ci : float, default 0.95
        Level of the per-bin intervals, of the interval of f_v over orderings
        (quantiles (1-ci)/2 and (1+ci)/2) and of the binomial interval.
    rng : None, int or numpy.random.Generator
        Seed. The numbers do not depend on ``chunk_size`` nor on threads.
    progress : bool, default True
        Show a tqdm progress bar.
    chunk_size : int, optional
        Orderings processed per parallel call (memory ~ 8 (n_bins n_boot +
        6 M) bytes per ordering); default: as many as fit in 64 MB.
    engine : {"numba", "numpy"}, optional
        Resampling engine (default numba), as in :func:`uqviz.local_calibration`.
    common_bootstrap : bool, default True
        Resample bin b with the same random numbers in every ordering (and in
        the data order), so that the spread over orderings is the ordering
        effect alone (zero without ties) and the data-order f_v compares
        with the orderings on an equal footing. False: fresh bootstrap
        random numbers for every ordering, the paper's procedure; the spread
        then also holds the bootstrap's Monte Carlo noise, which averages
        out of ``fv_mean``.

    Returns
    -------
    xarray.Dataset
        Scalars ``fv_mean``, ``fv_ci_lower``, ``fv_ci_upper`` (mean and
        quantile interval of f_v over orderings), ``fv_binom_mean``,
        ``fv_binom_lower``, ``fv_binom_upper`` (the same for the binomially
        perturbed f_v: k* ~ Binomial(n_bins, f_v) per ordering, k*/n_bins),
        ``fv_nominal`` with its Wilson interval ``fv_nominal_lower``/``upper``
        (data order); on dim ``replicate`` (one per ordering, coordinate
        ``seed``): ``fv``, ``fv_binom``; on (``replicate``, ``bin``):
        ``estimate``, ``valid``; on ``bin``: ``estimate_nominal``,
        ``valid_nominal``. Attributes: ``statistic``, ``conditioning``,
        ``n_bins``, ``n_orderings``, ``n_boot``, ``ci``, ``boot_seed``,
        ``n_distinct`` (distinct conditioning values), ``largest_stratum``,
        ``common_bootstrap``. Coordinates on ``replicate``: ``seed`` (order
        of ties) and ``boot_seed`` (bootstrap) of each ordering.

    Notes
    -----
    Ordering ``i`` sorts the points stably by the conditioning variable
    after the permutation ``numpy.random.default_rng(seed[i]).permutation(M)``
    (random order of ties), cuts equal-count bins, and orders the points of
    each bin by conditioning value and original row (:func:`tie_order`).
    Ordering ``i`` equals ``local_calibration(data.isel(point=tie_order(x,
    seed[i], ...)), rng=boot_seed[i])`` and the data order equals
    ``local_calibration(data, rng=attrs["boot_seed"])`` (tested); with
    ``common_bootstrap`` all ``boot_seed`` are ``attrs["boot_seed"]``.

    Examples
    --------
    >>> import numpy as np, uqviz
    >>> ds = uqviz.synthetic.default_example()
    >>> ds = ds.assign(Xr=("point", np.round(ds.X.values, 1)))  # a stratified feature
    >>> res = ordering_study(ds, conditioning="Xr", n_bins=10, n_orderings=20,
    ...                      n_boot=500, rng=0, progress=False)
    >>> res.sizes["replicate"], 0.0 <= float(res.fv_mean) <= 1.0
    (20, True)
    """
    if statistic not in ORDERING_STATISTICS:
        raise ValueError(f"statistic must be one of {ORDERING_STATISTICS}, got {statistic!r}")
    if int(n_orderings) < 1:
        raise ValueError(f"n_orderings must be >= 1, got {n_orderings}")
    if int(n_boot) < 2 and statistic != "ZM":
        raise ValueError(f"n_boot must be >= 2, got {n_boot}")
    if not 0.0 < ci < 1.0:
        raise ValueError(f"ci must be in (0, 1), got {ci}")
    out = map_datasets(_ordering_one, data, rng=rng, statistic=statistic,
                       conditioning=conditioning, n_bins=n_bins, n_orderings=int(n_orderings),
                       n_boot=int(n_boot), ci=ci, progress=progress, chunk_size=chunk_size,
                       engine=engine, common_bootstrap=bool(common_bootstrap))
    out.attrs.update({"statistic": statistic, "n_orderings": int(n_orderings),
                      "n_boot": int(n_boot), "ci": ci,
                      "method": "student-t" if statistic == "ZM" else "bca",
                      "ties": "random order, common bootstrap random numbers"})
    return out
