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
similar size share their estimate (pooled over the simulated copies). The number of valid bins of a calibrated set is then a sum of
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
from uqviz.engine import seeds

__all__ = ["size_classes", "null_coverage", "picp_null_coverage", "share_null", "NULL_N_MC",
           "NULL_MAX_BOOT", "SIZE_RATIO"]

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


def null_coverage(u, sizes, starts, *, intervals, generative, n_mc, rng):
    """Per-bin probability that a calibrated bin counts as valid, by Monte Carlo.

    Parameters
    ----------
    u : ndarray, shape (M,)
        Uncertainties in bin order.
    sizes, starts : ndarray of int
        The bins (contiguous groups of ``u``).
    intervals : callable
        ``intervals(e, u, starts, sizes) -> ok`` (bool per group): the interval of the
        analysis computed on simulated errors, and whether that group counts as valid.
    generative : Generative
        D of the simulated z-scores (zero mean, unit variance).
    n_mc : int
        At least this many simulated bins in total (whole copies of the binned data).
    rng : None, int, numpy.random.SeedSequence or numpy.random.Generator
        Random stream: None (fresh entropy), an int >= 0, a numpy.random.SeedSequence (copied,
        never consumed) or a numpy.random.Generator (docs/conventions.md, "Randomness").

    Returns
    -------
    p, se : ndarray, shape (n_bins,)
        Null probability of a valid bin and its Monte Carlo standard error.

    Examples
    --------
    >>> import numpy as np
    >>> from uqviz.generative import normal
    >>> sizes = np.array([50, 50]); starts = np.array([0, 50])
    >>> def ok(e, u, st, sz):
    ...     z = e / u
    ...     return np.array([abs(z[s:s + n].mean()) < 1.96 / np.sqrt(n) for s, n in zip(st, sz)])
    >>> p, se = null_coverage(np.ones(100), sizes, starts, intervals=ok, generative=normal(),
    ...                       n_mc=4000, rng=0)
    >>> bool(abs(p[0] - 0.95) < 4 * se[0])
    True
    """
    sizes = np.asarray(sizes, dtype=np.int64)
    starts = np.asarray(starts, dtype=np.int64)
    n_bins, m = sizes.size, int(u.size)
    n_copies = max(1, -(-int(n_mc) // n_bins))
    g = seeds.spawn(rng, 1)[0]
    z = np.asarray(generative.sample(g, n_copies * m), dtype=float)
    uu = np.tile(u, n_copies)
    all_starts = (starts[None, :] + m * np.arange(n_copies)[:, None]).ravel()
    all_sizes = np.tile(sizes, n_copies)
    ok = intervals(z * uu, uu, all_starts, all_sizes)
    return _pooled(ok, size_classes(sizes), n_copies)


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
    if ("null_coverage" not in donor or "count" not in donor.coords
            or "count" not in result.coords
            or donor.attrs.get("statistic") not in ("ZMS", "ZM", "ZVar")
            or any(donor.attrs.get(k) != result.attrs.get(k) for k in keys if k != "generative")):
        return None
    table = {}
    for n, p, se in zip(donor["count"].values, donor["null_coverage"].values,
                        donor["null_coverage_se"].values):
        table[int(n)] = (float(p), float(se))
    sizes = [int(n) for n in result["count"].values]
    if any(n not in table for n in sizes):
        return None
    out = result.assign(null_coverage=("bin", [table[n][0] for n in sizes],
                                       donor["null_coverage"].attrs),
                        null_coverage_se=("bin", [table[n][1] for n in sizes]))
    out.attrs.update({"n_mc": donor.attrs.get("n_mc"),
                      "generative": donor.attrs.get("generative"),
                      "null_from": donor.attrs.get("conditioning")})
    return out
