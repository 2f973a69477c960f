"""Calibrated null of the fraction of valid bins: how often a bin's interval holds its reference
when the data are calibrated.

Pernot (2023), section III.2.1, warns that the per-bin bootstrap intervals of the LZMS cover "at
least 90 %" with about 100 points per bin and that 95 % needs about 1000 points with Student-t
z-scores: the nominal 0.95 is not what a calibrated bin achieves. The null coverage ``p_b`` of each
bin is therefore measured, not assumed, by simulating calibrated copies of the data: the data's own
uE and bins, z-scores drawn from D (by default the data's own z-scores, centred and scaled to unit
variance: calibrated data with the shape of yours), the same interval method, ``n_boot`` and
``ci``. A simulated bin counts as valid exactly as a real one does in the f_v of Pernot (2023)
(interval computable and holding the reference; a heavy-tailed bin counts as any other). Bins of
similar size share their estimate (pooled over the simulated copies); a bin of more than
``NULL_MAX_SIZE`` (2000) points is simulated at that size, above which its probability no longer
changes within the Monte Carlo error, so that the null costs at most about
``max(n_mc, n_bins)`` x 2000 simulated points at any M, drawn in runs whose memory is about
twice the inputs'. The number of valid bins of a calibrated set is then a sum of
independent Bernoulli(``p_b``) (bins hold disjoint points), whose exact distribution
(:func:`uqviz._array.binomial.poisson_binomial_cdf`) gives :func:`uqviz.fraction_valid` its
p-value and critical count.

For the local PICP the null is exact: a calibrated bin of ``n`` points has ``n PICP ~ Binomial(n,
level)`` whatever D, so ``p_b`` is the exact coverage of its Wilson interval
(:func:`uqviz._array.binomial.wilson_coverage`).
"""

from __future__ import annotations

import numpy as np

from uqviz._array.binomial import wilson_coverage
from uqviz._array.lazy import lazy_module
from uqviz.engine import seeds

clusters_kernels = lazy_module("uqviz._array.clusters")

__all__ = [
    "size_classes",
    "simulated_sizes",
    "null_coverage",
    "picp_null_coverage",
    "share_null",
    "NULL_N_MC",
    "NULL_MAX_BOOT",
    "NULL_MAX_SIZE",
    "SIZE_RATIO",
]

#: default number of simulated bins of the calibrated null (Monte Carlo se of p_b about 0.005)
NULL_N_MC = 2000
#: bootstrap replicates of a simulated bin, at most: the coverage of a bin's BCa interval
#: with 1000 replicates is that with 10 000 less 0.004 (paired, 6000 bins of 118 points,
#: normal and t4.4 z-scores: 0.9360 vs 0.9402, 0.8875 vs 0.8915; with 2000: 0.9395,
#: 0.8912): about half a bin of 118, against a binomial spread of 3 bins, for a tenth of
#: the cost at the report's 10 000 replicates
NULL_MAX_BOOT = 1000
#: bins whose sizes are within this ratio share one estimate of their null coverage
SIZE_RATIO = 1.25
#: largest simulated bin: the probability that a calibrated bin's BCa interval of the LZMS
#: holds 1 no longer changes above it within the Monte Carlo error (4000 simulated bins,
#: se 0.004, B = 1000; n = 1000, 2000, 4000, 8000 points: normal z 0.944, 0.950, 0.950,
#: 0.943; t6 0.929, 0.938, 0.941, 0.935); with QM9_U0's own z-scores (t-like, nu about
#: 4.4) it still grows slowly, 0.933, 0.935, 0.940, 0.947: the cap then underestimates a
#: large bin's probability by about 0.01, which lowers the reference of f_v (fewer false
#: alarms, not more). Larger bins are simulated at this size and share one estimate
#:
NULL_MAX_SIZE = 2000
#: a run of simulated bins holds at most max(CHUNK_BYTES_PER_POINT M, CHUNK_BYTES_MIN)
#: bytes (M points): twice the inputs (E and uE, 16 bytes a point), at least 1 MiB
CHUNK_BYTES_PER_POINT = 32
CHUNK_BYTES_MIN = 2**20
#: bytes a simulated point (z, uE, E, the columns and jackknife of the bootstrap) and a
#: replicate (its value and its sorted copy) take in a run
PER_POINT_BYTES = 64
PER_REPLICATE_BYTES = 16


def size_classes(sizes) -> np.ndarray:
    """Class index of each bin size: sizes within a ratio of 1.25 of the class's smallest.

    Examples
    --------
    >>> size_classes([100, 101, 100, 130, 400]).tolist()
    [0, 0, 0, 1, 2]
    """
    sizes = np.asarray(sizes, dtype=float)
    order = np.argsort(sizes, kind="stable")
    out = np.empty(sizes.size, dtype=np.int64)
    cls, first = -1, None
    for i in order:
        if first is None or sizes[i] > SIZE_RATIO * first:
            cls, first = cls + 1, sizes[i]
        out[i] = cls
    return out


def _pooled(ok, classes, n_copies):
    """Mean of ``ok`` (n_copies x n_bins) per size class, mapped back to the bins; its se."""
    ok = np.asarray(ok, dtype=float).reshape(n_copies, -1)
    p = np.empty(classes.size)
    se = np.empty(classes.size)
    for c in np.unique(classes):
        mask = classes == c
        vals = ok[:, mask]
        p[mask] = vals.mean()
        se[mask] = np.sqrt(max(p[mask][0] * (1 - p[mask][0]), 0.0) / vals.size)
    return p, se


def simulated_sizes(sizes, max_size=None) -> np.ndarray:
    """The size of each bin's simulated calibrated copies: its own, at most ``max_size``.

    Examples
    --------
    >>> simulated_sizes([100, 5000, 30000]).tolist()
    [100, 2000, 2000]
    """
    max_size = NULL_MAX_SIZE if max_size is None else int(max_size)
    return np.minimum(np.asarray(sizes, dtype=np.int64), max_size)


def _rows(sizes, starts, sim):
    """Rows of ``u`` that each bin's simulated copy takes: all of them, or ``sim`` rows evenly
    spread over the bin (in bin order) when the copy is smaller than the bin."""
    parts = []
    for n, s0, k in zip(sizes.tolist(), starts.tolist(), sim.tolist()):
        if k == n:
            parts.append(np.arange(s0, s0 + n, dtype=np.int64))
        else:
            parts.append(s0 + np.round(np.linspace(0.0, n - 1.0, k)).astype(np.int64))
    return np.concatenate(parts)


def _chunks(sim_units, n_boot, budget):
    """Cut the simulated bins (in order) into runs of at most ``budget`` bytes of points and
    replicates (at least one bin a run): ``[(first, last), ...]``."""
    cost = PER_POINT_BYTES * sim_units + PER_REPLICATE_BYTES * int(n_boot)
    out, first, total = [], 0, 0
    for i, c in enumerate(cost.tolist()):
        if i > first and total + c > budget:
            out.append((first, i))
            first, total = i, 0
        total += c
    out.append((first, len(cost)))
    return out


def null_coverage(
    u,
    sizes,
    starts,
    *,
    intervals,
    generative,
    n_mc,
    rng,
    n_boot=NULL_MAX_BOOT,
    max_size=None,
    groups=None,
):
    """Per-bin probability that a calibrated bin counts as valid, by Monte Carlo.

    Each bin is simulated ``ceil(n_mc / n_bins)`` times (at least ``n_mc`` simulated bins in
    all) with z-scores drawn from ``generative`` times the bin's own uE; a bin of more than
    ``max_size`` points is simulated at ``max_size`` points, with uE taken at evenly spread
    ranks of the bin (:func:`simulated_sizes`): above about 2000 points the probability that
    a calibrated bin's interval holds its reference no longer changes within the Monte
    Carlo error (``NULL_MAX_SIZE``), so the null costs at most about ``max(n_mc, n_bins) max_size``
    simulated points whatever the size of the bins. Bins of similar simulated size share their
    estimate (:func:`size_classes`). The simulated bins are drawn and bootstrapped in runs
    of at most ``max(32 M, 1 MiB)`` bytes (M points; ``CHUNK_BYTES_PER_POINT``), so the
    null adds about twice the inputs to the peak memory; each run has its own stream, child
    of ``rng`` by its position, and the runs are cut by the data alone: the same ``rng``
    gives the same numbers on any number of threads or workers.

    Parameters
    ----------
    u : ndarray, shape (M,)
        Uncertainties in bin order.
    sizes, starts : ndarray of int
        The bins (contiguous groups of ``u``).
    intervals : callable
        ``intervals(e, u, starts, sizes, seed) -> ok`` (bool per group): the interval of the
        analysis computed on simulated errors with the bootstrap seed ``seed`` (an int), and
        whether that group counts as valid.
    generative : Generative
        D of the simulated z-scores (zero mean, unit variance).
    n_mc : int
        At least this many simulated bins in total.
    rng : None, int, numpy.random.SeedSequence or numpy.random.Generator
        Random stream: None (fresh entropy), an int >= 0, a numpy.random.SeedSequence (copied,
        never consumed) or a numpy.random.Generator (docs/conventions.md, "Randomness").
    n_boot : int, default 1000
        Bootstrap replicates of a simulated bin (for the memory of a run only).
    max_size : int, optional
        Largest simulated bin; default ``NULL_MAX_SIZE`` (2000).
    groups : tuple (codes, rho), optional
        Correlated points (Cameron & Miller (2015)): the group code of each point of ``u`` (in
        bin order) and the intraclass correlation ``rho`` of the data's z-scores. The null then
        keeps the groups: every simulated bin has the data's points with their groups (whole
        bins, never subsampled, each bin its own estimate), z-scores ``sqrt(rho) a_g +
        sqrt(1 - rho) eps`` (``a_g`` normal, one per group and simulated bin, ``eps`` from
        ``generative``), and ``intervals`` is called with ``clusters=`` the simulated codes,
        so that it resamples whole groups as it does on the data.

    Returns
    -------
    p, se : ndarray, shape (n_bins,)
        Null probability of a valid bin and its Monte Carlo standard error.

    Examples
    --------
    >>> import numpy as np
    >>> from uqviz.generative import normal
    >>> sizes = np.array([50, 50]); starts = np.array([0, 50])
    >>> def ok(e, u, st, sz, seed):
    ...     z = e / u
    ...     return np.array([abs(z[s:s + n].mean()) < 1.96 / np.sqrt(n) for s, n in zip(st, sz)])
    >>> p, se = null_coverage(np.ones(100), sizes, starts, intervals=ok, generative=normal(),
    ...                       n_mc=4000, rng=0)
    >>> bool(abs(p[0] - 0.95) < 4 * se[0])
    True
    """
    u = np.asarray(u, dtype=float)
    sizes = np.asarray(sizes, dtype=np.int64)
    starts = np.asarray(starts, dtype=np.int64)
    n_bins, m = sizes.size, int(u.size)
    n_copies = max(1, -(-int(n_mc) // n_bins))
    if groups is not None:
        max_size = max(int(sizes.max()), 1)  # whole bins: the groups as in the data
    sim = simulated_sizes(sizes, max_size)
    rows = _rows(sizes, starts, sim)  # one copy of the simulated bins, in bin order
    sim_starts = np.concatenate([[0], np.cumsum(sim)[:-1]])
    unit_bin = np.tile(np.arange(n_bins), n_copies)  # simulated bin i: copy i // n_bins
    budget = max(CHUNK_BYTES_PER_POINT * m, CHUNK_BYTES_MIN)
    root = seeds.kernel_seed(seeds.spawn(rng, 1)[0])
    ok = np.empty(unit_bin.size, dtype=bool)
    for c, (i0, i1) in enumerate(_chunks(sim[unit_bin], n_boot, budget)):
        draw_rng, seed_rng = seeds.child(root, c).spawn(2)
        bins = unit_bin[i0:i1]
        sz = sim[bins]
        idx = np.concatenate([rows[sim_starts[b] : sim_starts[b] + sim[b]] for b in bins])
        uu = u[idx]
        z = np.asarray(generative.sample(draw_rng, idx.size), dtype=float)
        st = np.concatenate([[0], np.cumsum(sz)[:-1]])
        seed = seeds.kernel_seed(seed_rng)
        if groups is None:
            ok[i0:i1] = intervals(z * uu, uu, st, sz, seed)
            continue
        codes, z = _grouped_null_z(draw_rng, z, groups, idx, sz)
        ok[i0:i1] = intervals(z * uu, uu, st, sz, seed, clusters=codes)
    classes = size_classes(sim) if groups is None else np.arange(n_bins)
    return _pooled(ok, classes, n_copies)


def _grouped_null_z(rng, eps, groups, idx, sz):
    """Codes of the simulated points (groups of each simulated bin told apart) and their
    z-scores with the data's intraclass correlation (:func:`null_coverage`)."""
    codes, rho = groups
    unit = np.repeat(np.arange(sz.size), sz)
    local, n_local = clusters_kernels.group_codes(unit * (int(codes.max()) + 1) + codes[idx])
    shared = rng.standard_normal(n_local)[local]
    return local, np.sqrt(rho) * shared + np.sqrt(1.0 - rho) * eps


def picp_null_coverage(sizes, *, level, ci):
    """Exact null probability that a calibrated bin's PICP interval holds ``level``.

    Examples
    --------
    >>> p, se = picp_null_coverage([100, 100], level=0.9, ci=0.95)
    >>> bool(p[0] >= 0.95), float(se[0])
    (True, 0.0)
    """
    sizes = np.asarray(sizes, dtype=np.int64)
    cache = {int(n): wilson_coverage(int(n), level, ci=ci) for n in np.unique(sizes)}
    return np.array([cache[int(n)] for n in sizes]), np.zeros(sizes.size)


def share_null(result, donor):
    """``result`` (computed with ``n_mc=0``) with the calibrated null of ``donor``, or None.

    The null of a statistic of the z-scores alone (ZMS, ZM, ZVar) depends only on D, the bin
    sizes and the interval settings, not on the conditioning variable: the local analyses of
    one dataset along uE and along a feature, cut in bins of the same sizes, share it. None
    when the donor has no null, another statistic or settings, or a bin size it lacks.

    Examples
    --------
    >>> import uqviz
    >>> ds = uqviz.synthetic.default_example()
    >>> a = uqviz.local_calibration(ds, n_bins=10, n_boot=200, rng=0)
    >>> b = uqviz.local_calibration(ds, conditioning="X", n_bins=10, n_boot=200, rng=1, n_mc=0)
    >>> bool((share_null(b, a)["null_coverage"] == a["null_coverage"]).all())
    True
    """
    keys = ("statistic", "n_boot", "ci", "method", "generative")
    if (
        "null_coverage" not in donor
        or "count" not in donor.coords
        or "count" not in result.coords
        or donor.attrs.get("statistic") not in ("ZMS", "ZM", "ZVar")
        or any(donor.attrs.get(k) != result.attrs.get(k) for k in keys if k != "generative")
    ):
        return None
    table = {}  # bins above NULL_MAX_SIZE share one simulated size, hence one null
    for n, p, se in zip(
        simulated_sizes(donor["count"].values),
        donor["null_coverage"].values,
        donor["null_coverage_se"].values,
    ):
        table[int(n)] = (float(p), float(se))
    sizes = [int(n) for n in simulated_sizes(result["count"].values)]
    if any(n not in table for n in sizes):
        return None
    out = result.assign(
        null_coverage=("bin", [table[n][0] for n in sizes], donor["null_coverage"].attrs),
        null_coverage_se=("bin", [table[n][1] for n in sizes]),
    )
    out.attrs.update(
        {
            "n_mc": donor.attrs.get("n_mc"),
            "generative": donor.attrs.get("generative"),
            "null_from": donor.attrs.get("conditioning"),
        }
    )
    return out
