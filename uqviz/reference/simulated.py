"""Simulated reference values and the Sim, Sim2 and BS validation schemes (Pernot (2024c)).

Pseudo-errors E* = uE * eps, eps ~ D (a unit-variance generative distribution,
:mod:`uqviz.generative`) give a reference to statistics without a predefined one
(CC, ENCE, UCE, ZMSE). :func:`validate_with_references` runs the workflow of Pernot (2024c),
Fig. 1.
"""

from __future__ import annotations

import copy
import dataclasses
import warnings

import numpy as np
import xarray as xr

from uqviz._array import stats as stats_kernels
from uqviz._array.bca import verdict
from uqviz._array.lazy import lazy_module
from uqviz.average.tails import null_p_values, tail_fit
from uqviz.average.validation import (
    BCA_MIN_POINTS,
    average_verdicts,
    beta_gm_screened,
    screens_pass,
    squares,
    validate_average,
)
from uqviz.engine.options import warn_points_independent
from uqviz.engine.verdicts import decide
from uqviz.data.generative import Generative, as_generatives
from uqviz.data.model import check_dataset
from uqviz.engine import checks, seeds
from uqviz.engine.binning import compute_bins, conditioning_values
from uqviz.engine.bootstrap import bootstrap_against_reference
from uqviz.engine.deprecation import REMOVED_IN, renamed_options
from uqviz.engine.parallel import (
    block_rng,
    progress_bar,
    resolve_client,
    run_blocks,
    show_progress,
    stream_rows,
)
from uqviz.engine.statistics import DEFAULT_N_BINS, Statistic, get_statistic, reference_value
from uqviz.engine.descriptions import describe
from uqviz.engine.options import BootstrapOptions, streams
from uqviz.engine.tree import map_datasets
from uqviz.engine.warning_classes import UnreliableWarning

binned_kernels = lazy_module("uqviz._array.binned")
variate_kernels = lazy_module("uqviz._array.variates")

__all__ = [
    "simulated_reference",
    "validate_simulated",
    "validate_with_references",
    "SCHEMES",
    "sim_zeta",
    "sim2_zeta",
    "mc_p_value",
    "MISCALIBRATION_SIDE",
]

#: validation schemes of :func:`validate_simulated`
SCHEMES = ("Sim", "Sim2", "BS")
MC_BLOCK = 64  # Monte Carlo samples per independently seeded block
UNSTABLE_Z0 = 1.0
#: direction of miscalibration of the statistics without a predefined reference:
#: "greater" (a larger value is worse) or "less"; any other statistic is tested two-sided
MISCALIBRATION_SIDE = {"ENCE": "greater", "UCE": "greater", "ZMSE": "greater", "CC": "less"}
#: tail screen of the workflow: quantile levels of the ratio, draws, largest size
TAIL_LEVELS = (0.01, 0.25, 0.75, 0.99)
TAIL_N_MC = 200
TAIL_MAX_POINTS = 20_000


# --------------------------------------------------------------------------
# options
# --------------------------------------------------------------------------
def _one_or_many(value):
    """True when an option was given as one value (a str or a Generative), not a sequence."""
    return isinstance(value, (str, Generative))


def _conditioning_attr(conditioning):
    return conditioning if isinstance(conditioning, str) else "values"


#: the per-point columns of a moments statistic that depend on the errors
_ERROR_COLUMNS = {"Z", "Z2", "E2"}


def _statistic(statistic):
    """The registered statistic named by the ``statistic`` option (errors name it)."""
    if not isinstance(statistic, (str, Statistic)):
        raise TypeError(
            f"statistic must be the name of a registered statistic, got "
            f"{statistic!r} ({type(statistic).__name__})"
        )
    stat = get_statistic(statistic)
    if stat.kind == "moments" and not set(stat.columns) & _ERROR_COLUMNS:
        raise ValueError(
            f"statistic={stat.name!r}: a function of uE alone (columns "
            f"{', '.join(stat.columns)}), the same on every simulated set: it has "
            "no simulated reference to validate it against; take a statistic of "
            "the errors (ZMS, RCE, ENCE, ...)"
        )
    return stat


@dataclasses.dataclass(frozen=True)
class _Simulation:
    """The checked options of a Monte Carlo reference (one value instead of seven).

    ``n_mc`` simulated sets; ``n_bins`` and ``conditioning`` the bins of a binned
    statistic; ``ci`` the level of the quantile interval; ``client`` and ``progress``
    where the sets are drawn; ``return_samples`` keeps the simulated values.
    """

    n_mc: int
    n_bins: int
    conditioning: object = "uE"
    ci: float = 0.95
    return_samples: bool = False
    client: object = None
    progress: bool = False

    def replace(self, **changes):
        """A copy with ``changes`` (not checked again)."""
        return dataclasses.replace(self, **changes)


def _common_options(statistic, generative, n_bins, ci, progress, rng):
    """The options shared by the three functions (``n_mc`` is checked last, by :func:`_n_mc`)."""
    stat = _statistic(statistic)
    gens = as_generatives(generative)
    n_bins = DEFAULT_N_BINS if n_bins is None else checks.count("n_bins", n_bins)
    ci = checks.probability("ci", ci)
    progress = show_progress(progress)
    rng = checks.rng(rng)
    return stat, gens, n_bins, ci, progress, rng


def _n_mc(n_mc):
    return checks.count("n_mc", n_mc, minimum=2)


def _bootstrap_options(n_boot, ci, rng, engine, client, progress):
    """The bootstrap's options, ``ci``, ``rng``, ``client`` and ``progress`` already checked
    by :func:`_common_options` (``n_boot`` and ``engine`` checked here, once)."""
    return BootstrapOptions.check(
        n_boot=n_boot, ci=ci, rng=rng, engine=engine, client=client, progress=progress
    )


def _stack(parts, labels, dim, single):
    """One Dataset, or the parts concatenated on a new ``dim`` labelled ``labels``."""
    if single:
        return parts[0]
    return xr.concat(parts, dim=xr.DataArray(list(labels), dims=dim, name=dim))


# --------------------------------------------------------------------------
# Monte Carlo reference
# --------------------------------------------------------------------------
def _evaluator(ds, stat, *, n_bins, conditioning):
    """Point order and a function f(eps (R, M), u (M,)) -> (R,): the statistic of the
    sets E* = eps u on that order (the products formed inside the kernels where they can)."""
    m = ds.sizes["point"]
    if stat.kind == "binned":
        _, x = conditioning_values(ds, conditioning)
        bins = compute_bins(x, n_bins=n_bins, binning="equal_count")
        starts, sizes = bins.starts, bins.sizes
        cols = tuple(c for c in stat.columns if c != "V")
        u_sorted = ds["uE"].values[bins.order]
        top_u = float(np.max(np.abs(u_sorted)))
        ku = int(np.frexp(np.max(u_sorted))[1])  # V's bin means at the scale 2**ku, once
        mv_scaled = binned_kernels.bin_means(np.ldexp(u_sorted, -ku) ** 2, starts, sizes)

        def f(eps, u):  # u is the same for every row: its bin means are computed once
            means = binned_kernels.binned_means_fixed_u(
                eps, u, starts, sizes, cols, top_u, scaled=True
            )
            if "V" in stat.columns:  # at the scale 2**log2_scale of the E2 column
                means["V"] = np.ldexp(mv_scaled, 2 * (ku - int(means["log2_scale"])))
            return stat.func(means)

        return bins.order, f
    if stat.kind == "moments":

        def f(eps, u):
            return stat.func(stats_kernels.column_means(eps * u, u, stat.columns), m)
    elif stat.given_u is not None:  # work on the fixed uncertainties done once
        g = stat.given_u(ds["uE"].values)  # CC: uE ranked once, |E*| sorted per draw

        def f(eps, u):
            return g(eps, scale=u)
    else:

        def f(eps, u):
            e = eps * u
            return stat.func(e, np.broadcast_to(u, e.shape))

    return np.arange(m), f


def simulated_rows(generative, rng, n, u, rows=None, *, scaled=True):
    """The ``n`` simulated sets ``E* = u eps`` of one block, ``rows`` at a time (a generator).

    Each set is drawn as one row of ``u.size`` values, in order, so the sets do not depend
    on ``rows``; at most ``rows`` sets (default :func:`stream_rows`, about 8 MB) are held
    at once: memory O(M + chunk) whatever the number of sets. The normal and Student-t
    D are drawn by the kernels of :mod:`uqviz._array.variates` from a xoshiro256**
    stream seeded by ``rng.integers(0, 2**63)`` (3-4x faster than numpy's samplers),
    the other D by ``generative.sample(rng, M)``. With ``scaled=False`` the rows are eps
    itself (``u`` gives only M).

    Examples
    --------
    >>> from uqviz.generative import normal
    >>> u = np.ones(3)
    >>> a = np.vstack(list(simulated_rows(normal(), np.random.default_rng(0), 4, u, rows=3)))
    >>> b = np.vstack(list(simulated_rows(normal(), np.random.default_rng(0), 4, u, rows=1,
    ...                                   scaled=False)))
    >>> a.shape, bool(np.array_equal(a, b))
    ((4, 3), True)
    """
    m = u.size
    rows = stream_rows(n, m) if rows is None else rows
    fill = variate_kernels.filler(generative.kind, generative.params)
    state = variate_kernels.stream(int(rng.integers(0, 2**63))) if fill is not None else None
    for r0 in range(0, n, rows):
        k = min(rows, n - r0)
        x = np.empty((k, m))
        for r in range(k):
            if fill is not None:
                fill(state, x[r])
            else:
                x[r] = generative.sample(rng, m)
        if scaled:
            x *= u
        yield x


def _mc_block(b, shared):
    u, f, generative, n_mc, seed = shared
    n = min(MC_BLOCK, n_mc - b * MC_BLOCK)
    parts = [
        np.asarray(f(eps, u), dtype=float)
        for eps in simulated_rows(generative, block_rng(seed, b), n, u, scaled=False)
    ]
    return np.concatenate(parts)


def _simulate(u, f, generative, n_mc, seed, *, client, progress, label):
    n_blocks = -(-n_mc // MC_BLOCK)
    with progress_bar(n_blocks, desc=label, progress=progress) as bar:
        return np.concatenate(
            run_blocks(
                _mc_block,
                n_blocks,
                client=client,
                progress=bar,
                shared=(u, f, generative, n_mc, seed),
            )
        )


def _mc_block_shared(b, shared):
    """One block of draws eps ~ D shared by several statistics: row k of the result is
    statistic k on E* = eps * u_k, bitwise the values of :func:`_mc_block` for (u_k, f_k)
    (the same eps row by row, the same products)."""
    items, generative, n_mc, seed = shared
    n = min(MC_BLOCK, n_mc - b * MC_BLOCK)
    parts = [[] for _ in items]
    for eps in simulated_rows(generative, block_rng(seed, b), n, items[0][0], scaled=False):
        for k, (u, f) in enumerate(items):
            parts[k].append(np.asarray(f(eps, u), dtype=float))
    return np.stack([np.concatenate(p) for p in parts])


def _simulate_shared(items, generative, n_mc, seed, *, client, progress, label):
    """Samples (K, n_mc) of K statistics on the same synthetic sets: one draw, K values."""
    n_blocks = -(-n_mc // MC_BLOCK)
    with progress_bar(n_blocks, desc=label, progress=progress) as bar:
        return np.concatenate(
            run_blocks(
                _mc_block_shared,
                n_blocks,
                client=client,
                progress=bar,
                shared=(items, generative, n_mc, seed),
            ),
            axis=1,
        )


def _reference_of(ds, *, rng, stat, generative, sim):
    """Simulated reference of one statistic under one D for one dataset (``sim``: a
    :class:`_Simulation`)."""
    return _references_of(ds, rng=rng, stats=(stat,), generative=generative, sim=sim)[0]


def _references_of(ds, *, rng, stats, generative, sim):
    """Simulated references of several statistics under one D, from the same draws.

    Each synthetic set eps ~ D is drawn once and gives every statistic its value; the
    samples of each statistic are exactly those of a call for that statistic alone with
    the same ``rng`` (one seed is drawn from ``rng`` in both cases).
    """
    gen = generative.for_data(ds)
    items = []
    for stat in stats:
        order, f = _evaluator(ds, stat, n_bins=sim.n_bins, conditioning=sim.conditioning)
        items.append((ds["uE"].values[order], f))
    seed = seeds.kernel_seed(rng)
    names = ", ".join(s.name for s in stats)
    if len(items) == 1:
        all_samples = _simulate(
            items[0][0],
            items[0][1],
            gen,
            sim.n_mc,
            seed,
            client=sim.client,
            progress=sim.progress,
            label=f"{names} reference ({gen.name})",
        )[None]
    else:
        all_samples = _simulate_shared(
            items,
            gen,
            sim.n_mc,
            seed,
            client=sim.client,
            progress=sim.progress,
            label=f"{names} references ({gen.name})",
        )
    return [
        _summary(
            ds, stat, gen, samples, n_mc=sim.n_mc, ci=sim.ci, return_samples=sim.return_samples
        )
        for stat, samples in zip(stats, all_samples)
    ]


def _summary(ds, stat, gen, samples, *, n_mc, ci, return_samples):
    bad = int(np.count_nonzero(~np.isfinite(samples)))
    if bad:
        label = f" of {ds.attrs['name']!r}" if ds.attrs.get("name") else ""
        warnings.warn(
            f"{stat.name} reference{label} under D = {gen.name}: {bad} of {n_mc} "
            "simulated values are not finite; the reference is NaN and the "
            "statistic is not validated",
            UnreliableWarning,
            stacklevel=8,
        )
    q = np.quantile(samples, [(1 - ci) / 2, (1 + ci) / 2])
    sd = samples.std(ddof=1)
    out = xr.Dataset(
        {
            "reference": ((), samples.mean()),
            "sample_sd": ((), sd, {"long_name": "standard deviation of the simulated values"}),
            "reference_se": ((), sd / np.sqrt(n_mc)),
            "reference_lower": ((), q[0]),
            "reference_upper": ((), q[1]),
        }
    )
    if return_samples:
        out["samples"] = ("sample", samples)
    return out


def _reference_one(ds, *, rng, stat, gens, single, sim):
    check_dataset(ds)
    warn_points_independent(ds, "simulated_reference")
    rngs = seeds.spawn(rng, len(gens))  # one stream per D, in the order of gens
    parts = [_reference_of(ds, rng=r, stat=stat, generative=g, sim=sim) for g, r in zip(gens, rngs)]
    return _stack(parts, [g.name for g in gens], "generative", single)


def simulated_reference(
    data,
    *,
    statistic,
    generative="normal",
    n_mc=10_000,
    n_bins=None,
    conditioning="uE",
    ci=0.95,
    rng=None,
    return_samples=False,
    client=None,
    progress=None,
):
    r"""Reference value of a statistic for calibrated data with the actual uncertainties.

    Evaluates the statistic on ``n_mc`` sets of pseudo-errors E* = uE * eps, eps ~ D
    (binned statistics keep the bins of the data).

    Parameters
    ----------
    data : xarray.Dataset or xarray.DataTree
        Errors ``E`` and standard uncertainties ``uE`` on dim ``point`` (with any features), as
        made by :func:`uqviz.from_arrays` and the other constructors; a DataTree gives one
        result per dataset, on dim ``dataset``.
    statistic : str
        Any registered statistic (ZMS, CC, ENCE, UCE, ZMSE, NLL, ...).
    generative : str, Generative or sequence of them, default "normal"
        D: "normal", "t<nu>", "uniform", "laplace", "empirical" or a
        :class:`uqviz.generative.Generative`; a sequence adds dim ``generative``.
    n_mc : int, default 10000
        Number of Monte Carlo samples (simulated calibrated datasets), an int >= 2.
    n_bins : int, optional
        Number of equal-count bins of the binned statistics (ENCE, UCE, ZMSE); default 20
        (Pernot (2024c)); ignored by the other statistics.
    conditioning : str or array_like, default "uE"
        Variable the bins of binned statistics are cut on: "uE", a feature name, or one value
        per point.
    ci : float, default 0.95
        Level of the Monte Carlo quantile interval of the simulated values, in (0, 1).
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
    return_samples : bool, default False
        Also return ``samples`` on dim ``sample``.

    Returns
    -------
    xarray.Dataset
        ``reference`` (Monte Carlo mean), ``sample_sd``, ``reference_se``,
        ``reference_lower``, ``reference_upper`` (and ``samples``).

    See Also
    --------
    uqviz.validate_simulated : validation against this reference.
    uqviz.validate_with_references : the whole workflow for one statistic.
    uqviz.size_dependence : the references against size and bin number.
    uqviz.plots.reference.reference_sensitivity : draws the references for several D.
    uqviz.plots.reference.reference_distribution : draws the simulated values.

    Notes
    -----
    The pseudo-errors of a calibrated set are :math:`E^*_i = u_{E_i} \varepsilon_i`,
    :math:`\varepsilon_i \sim D(0, 1)` (Pernot (2024c), eq. 1); over :math:`n_{mc}` such sets,

    .. math::

       \vartheta_{D,ref} = \frac{1}{n_{mc}}\sum_{k=1}^{n_{mc}} \vartheta(E^{*(k)}, u_E), \qquad
       u(\vartheta_{D,ref}) = \frac{\mathrm{sd}(\vartheta(E^{*(k)}, u_E))}{\sqrt{n_{mc}}}

    (Pernot (2024c), section II.D.2, steps 1-4).

    ``reference_lower`` and ``reference_upper`` are the :math:`(1 \mp \mathrm{ci})/2` quantiles of
    the simulated values.

    References
    ----------
    - Pernot (2024c), section II.D.2: simulated references.
    - Rasmussen et al. (2023): the simulated-reference scheme.

    Full entries: :doc:`/docs/references`.

    Examples
    --------
    >>> import uqviz
    >>> ds = uqviz.synthetic.nig(1000, nu=6, rng=0)
    >>> ref = uqviz.simulated_reference(ds, statistic="ZMS", n_mc=500, rng=1)
    >>> bool(abs(float(ref["reference"]) - 1) < 0.01)
    True
    """
    stat, gens, n_bins, ci, progress, stream = _common_options(
        statistic, generative, n_bins, ci, progress, rng
    )
    client = resolve_client(client)
    return_samples = checks.boolean("return_samples", return_samples)
    n_mc = _n_mc(n_mc)
    sim = _Simulation(
        n_mc=n_mc,
        n_bins=n_bins,
        conditioning=conditioning,
        ci=ci,
        return_samples=return_samples,
        client=client,
        progress=progress,
    )
    out = map_datasets(
        _reference_one,
        data,
        rng=stream,
        stat=stat,
        gens=gens,
        single=_one_or_many(generative),
        sim=sim,
    )
    names = [g.name for g in gens]
    out.attrs.update(
        {
            "statistic": stat.name,
            "generative": names[0] if _one_or_many(generative) else names,
            "n_mc": n_mc,
            "n_bins": n_bins,
            "conditioning": _conditioning_attr(conditioning),
            "ci": ci,
            "rng": seeds.seed_attr(rng),
        }
    )
    return out


# --------------------------------------------------------------------------
# schemes
# --------------------------------------------------------------------------
def sim_zeta(estimate, reference, reference_se, lower, upper):
    """Zeta-score and verdict of the Sim scheme.

    The bootstrap interval is widened by ``2 reference_se`` in quadrature on each side;
    valid = the reference inside the widened interval.

    Parameters
    ----------
    estimate, reference, reference_se, lower, upper : array_like

    Returns
    -------
    zeta, valid : ndarray

    Examples
    --------
    >>> z, ok = sim_zeta(0.05, 0.03, 0.001, 0.04, 0.06)
    >>> round(float(z), 6), bool(ok)
    (1.961161, False)
    """
    est = np.asarray(estimate, dtype=float)
    lower = np.asarray(lower, dtype=float)
    upper = np.asarray(upper, dtype=float)
    two_se = 2.0 * np.asarray(reference_se, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        lo = lower - _widening(est - lower, two_se)
        hi = upper + _widening(upper - est, two_se)
    return verdict(est, reference, lo, hi)


def _widening(half, extra):
    """hypot(half, extra) - half without cancellation."""
    h = np.hypot(half, extra)
    return np.where(half > 0, extra**2 / np.where(half > 0, h + half, 1.0), h - half)


def sim2_zeta(estimate, reference, reference_lower, reference_upper):
    """Zeta-score and verdict of the Sim2 scheme: the estimate inside the Monte Carlo interval.

    Parameters
    ----------
    estimate, reference, reference_lower, reference_upper : array_like

    Returns
    -------
    zeta, valid : ndarray
        ``|zeta| <= 1`` exactly when valid.

    Examples
    --------
    >>> z, ok = sim2_zeta(0.05, 0.03, 0.02, 0.045)
    >>> round(float(z), 6), bool(ok)
    (1.333333, False)
    """
    # the roles of estimate and reference are swapped: the interval is the reference's
    zeta, valid = verdict(reference, estimate, reference_lower, reference_upper)
    return -zeta, valid


def mc_p_value(estimate, samples, side="greater"):
    """Monte Carlo p-value of an estimate among the statistics of calibrated sets.

    ``(1 + #{sample >= estimate}) / (1 + n_mc)`` for ``side="greater"`` (a larger value
    is worse: ENCE, UCE, ZMSE), with ``<=`` for ``"less"`` (CC) and twice the smaller of
    the two, capped at 1, for ``"two-sided"``. Under the null (the data a calibrated set
    drawn like the samples) ``P(p_value <= alpha) <= alpha`` exactly, whatever ``n_mc``
    (the Monte Carlo test of Hope (1968)). NaN when a sample or the estimate is not
    finite.

    Parameters
    ----------
    estimate : float
    samples : array_like
        The ``n_mc`` simulated statistics.
    side : {"greater", "less", "two-sided"}, default "greater"

    Returns
    -------
    float

    Examples
    --------
    >>> mc_p_value(3.5, [1.0, 2.0, 3.0, 4.0])
    0.4
    >>> mc_p_value(3.5, [1.0, 2.0, 3.0, 4.0], side="less"), mc_p_value(5.0, [1.0, 2.0])
    (0.8, 0.3333333333333333)
    """
    x = np.asarray(samples, dtype=float)
    if not (np.isfinite(estimate) and np.all(np.isfinite(x))):
        return np.nan
    upper = (1.0 + np.count_nonzero(x >= estimate)) / (1.0 + x.size)
    lower = (1.0 + np.count_nonzero(x <= estimate)) / (1.0 + x.size)
    if side == "greater":
        return float(upper)
    if side == "less":
        return float(lower)
    if side == "two-sided":
        return float(min(1.0, 2.0 * min(upper, lower)))
    raise ValueError(f"side must be 'greater', 'less' or 'two-sided', got {side!r}")


def _side(stat):
    return MISCALIBRATION_SIDE.get(stat.name, "two-sided")


def _bootstrap_one(ds, stat, *, rng, boot, n_bins, conditioning, res=None):
    """Estimate, BCa interval and z0 of one statistic; the one z0 warning of uqviz.

    ``boot``: the :class:`~uqviz.engine.options.BootstrapOptions` (its ``rng`` unused: the
    stream is ``rng``); ``res``: its bootstrap result when already computed
    (:func:`validate_shared`).
    """
    if res is None:
        key = None
        if stat.kind == "binned" and not (isinstance(conditioning, str) and conditioning == "uE"):
            key = conditioning_values(ds, conditioning)[1]
        # NLL: paired with its data reference, exactly as validate_average
        res = bootstrap_against_reference(
            ds["E"].values,
            ds["uE"].values,
            [stat],
            n_boot=boot.n_boot,
            ci=boot.ci,
            rng=rng,
            n_bins=n_bins,
            key=key,
            client=boot.client,
            engine=boot.engine,
        )[stat.name]
    z0 = float(res.z0[0]) if res.z0 is not None else np.nan
    label = f" of {ds.attrs['name']!r}" if ds.attrs.get("name") else ""
    if abs(z0) > UNSTABLE_Z0:
        side = "upper" if z0 < 0 else "lower"
        warnings.warn(
            f"{stat.name}{label}: bootstrap bias correction z0 = {z0:.2f} (|z0| > 1): "
            f"the BCa {side} limit sits in the extreme order statistics of the "
            "replicates and is unstable",
            UnreliableWarning,
            stacklevel=5,
        )
    est, lo, hi = float(res.estimate[0]), float(res.lower[0]), float(res.upper[0])
    if not (np.isfinite(lo) and np.isfinite(hi)):
        warnings.warn(
            f"{stat.name}{label}: the bootstrap interval could not be computed "
            "(degenerate bootstrap distribution); valid = False",
            UnreliableWarning,
            stacklevel=5,
        )
    return est, lo, hi, z0


def _scheme_zeta(scheme, est, lo, hi, ref, bs_reference):
    if scheme == "Sim":
        return sim_zeta(est, float(ref["reference"]), float(ref["reference_se"]), lo, hi)
    if scheme == "Sim2":
        return sim2_zeta(
            est,
            float(ref["reference"]),
            float(ref["reference_lower"]),
            float(ref["reference_upper"]),
        )
    return verdict(est, bs_reference, lo, hi)  # BS


def _validation_streams(rng, gens):
    """The streams of one dataset's validation: ``boot``, then ``mc`` (one per D, in order)."""
    s = streams(rng, "boot", *(f"mc{i}" for i in range(len(gens))))
    return s.boot, [getattr(s, f"mc{i}") for i in range(len(gens))]


def _validate_sim_one(ds, *, rng, stat, gens, schemes, single, sim, boot, refs=None, boot_res=None):
    """``single``: (one D, one scheme) given as one value; ``sim``, ``boot``: the
    :class:`_Simulation` and the :class:`~uqviz.engine.options.BootstrapOptions`;
    ``refs``, ``boot_res``: the references per D and the bootstrap result when already
    computed (:func:`validate_shared`)."""
    check_dataset(ds)
    warn_points_independent(ds, "validate_with_references")
    single_gen, single_scheme = single
    boot_rng, mc_rngs = _validation_streams(rng, gens)
    est, lo, hi, z0 = _bootstrap_one(
        ds,
        stat,
        rng=boot_rng,
        boot=boot,
        n_bins=sim.n_bins,
        conditioning=sim.conditioning,
        res=boot_res,
    )
    bs_reference = (
        reference_value(stat, ds["E"].values, ds["uE"].values) if "BS" in schemes else np.nan
    )
    side = _side(stat)
    stable = bool(np.isfinite(lo) and np.isfinite(hi) and abs(z0) <= UNSTABLE_Z0)
    scheme_dims = () if single_scheme else ("scheme",)
    bs_word = (
        _bs_scheme_word(ds, stat, est, lo, hi, z0, bs_reference, sim.ci)
        if "BS" in schemes
        else None
    )
    parts = []
    for i, (g, r) in enumerate(zip(gens, mc_rngs)):
        if refs is not None:
            ref = refs[i]
        else:
            ref = _reference_of(
                ds, rng=r, stat=stat, generative=g, sim=sim.replace(return_samples=True)
            )
        # the one-sided Monte Carlo test of the estimate among the simulated values
        p_value = mc_p_value(est, ref["samples"].values, side)
        if not sim.return_samples:
            ref = ref.drop_vars("samples")
        verdicts = [_scheme_zeta(s, est, lo, hi, ref, bs_reference) for s in schemes]
        zeta = np.array([float(z) for z, _ in verdicts])
        valid = np.array([bool(v) for _, v in verdicts])
        mc_ok = bool(
            np.isfinite(est)
            and np.isfinite(float(ref["reference_lower"]))
            and np.isfinite(float(ref["reference_upper"]))
        )
        reliable = np.array(
            [
                mc_ok
                if s == "Sim2"
                else stable and (s == "BS" or np.isfinite(float(ref["reference"])))
                for s in schemes
            ]
        )
        words = np.array(
            [
                bs_word if sc == "BS" else decide(not v, reliable=rl)
                for sc, v, rl in zip(schemes, valid, reliable)
            ]
        )
        ref = ref.drop_vars("sample_sd").assign(
            verdict=(scheme_dims, words[0] if single_scheme else words),
            zeta=(scheme_dims, zeta[0] if single_scheme else zeta),
            valid=(scheme_dims, valid[0] if single_scheme else valid),
            reliable=(scheme_dims, reliable[0] if single_scheme else reliable),
            p_value=((), p_value, {"long_name": f"Monte Carlo p-value ({side})"}),
            se_negligible=((), 2.0 * float(ref["reference_se"]) < (hi - lo) / 2.0),
        )
        parts.append(ref)
    out = _stack(parts, [g.name for g in gens], "generative", single_gen)
    if not single_scheme:
        out = out.assign_coords(scheme=list(schemes))
    head = xr.Dataset(
        {"estimate": ((), est), "ci_lower": ((), lo), "ci_upper": ((), hi), "z0": ((), z0)}
    )
    return xr.merge([head, out])


def _bs_scheme_word(ds, stat, est, lo, hi, z0, reference, ci):
    """The BS scheme's verdict word, by the rule of :func:`uqviz.validate_average`
    (``average_verdicts``; under a failed tail screen its Student-t null decides, issue 36),
    "unreliable" when the BCa interval decides with ``|z0| > 1``."""
    e = np.asarray(ds["E"].values, dtype=float)
    u = np.asarray(ds["uE"].values, dtype=float)
    beta = np.array([beta_gm_screened(squares(e, u, v)) for v in range(3)])
    screened = bool(screens_pass([stat.name], beta)[0])
    _, region = tail_fit(e, u)  # validate_average's set of df: one null for both
    df_low = float(region[0]) if region.size else np.nan
    df_high = float(region[-1]) if region.size else np.nan
    null_p = null_p_values([stat.name], e, u, region)
    interval = bool(np.isfinite(lo) and np.isfinite(hi))
    valid = bool(verdict(est, reference, lo, hi)[1])
    word = average_verdicts(
        [stat.name],
        m=e.size,
        valid=[valid],
        p_value=[np.nan],
        null_p_value=null_p,
        reliable=[screened],
        reference=[reference],
        interval=[interval],
        beta=beta,
        df_lower=df_low,
        df_upper=df_high,
        ci=ci,
    )[0][0]
    if word in ("OK", "fails") and screened and e.size >= BCA_MIN_POINTS and abs(z0) > UNSTABLE_Z0:
        return "unreliable"
    return word


def _schemes(scheme):
    if isinstance(scheme, str):
        return (checks.choice("scheme", scheme, SCHEMES),)
    return checks.names("scheme", scheme, allowed=SCHEMES)


def validate_simulated(
    data,
    *,
    statistic,
    generative="normal",
    scheme="Sim",
    n_mc=10_000,
    n_boot=10_000,
    n_bins=None,
    conditioning="uE",
    ci=0.95,
    rng=None,
    return_samples=False,
    client=None,
    progress=None,
    engine=None,
):
    r"""Validate a statistic against a simulated reference (Pernot (2024c), Sim and Sim2).

    Parameters
    ----------
    data : xarray.Dataset or xarray.DataTree
        Errors ``E`` and standard uncertainties ``uE`` on dim ``point`` (with any features), as
        made by :func:`uqviz.from_arrays` and the other constructors; a DataTree gives one
        result per dataset, on dim ``dataset``.
    statistic : str
        Registered statistic validated (``uqviz.list_statistics()``): ENCE, UCE, ZMSE, CC, ZMS,
        ...
    generative : str, Generative or sequence of them, default "normal"
        Generative distribution D of the simulated errors: "normal", "t<nu>", "uniform",
        "laplace", "empirical" or a :class:`uqviz.generative.Generative`; a sequence adds
        dim ``generative``.
    scheme : {"Sim", "Sim2", "BS"} or sequence of them, default "Sim"
        Sim: the reference inside the BCa interval widened by 2 se; Sim2: the
        estimate inside the Monte Carlo interval; BS: the predefined reference inside
        the bootstrap interval. A sequence adds dim ``scheme``.
    n_mc : int, default 10000
        Number of Monte Carlo samples (simulated calibrated datasets), an int >= 2.
    n_boot : int, default 10000
        Number of bootstrap replicates, an int >= 2.
    ci : float, default 0.95
        Confidence level of the intervals, in (0, 1).
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
    n_bins : int, optional
        Number of equal-count bins of the binned statistics (ENCE, UCE, ZMSE); default 20
        (Pernot (2024c)); ignored by the other statistics.
    conditioning : str or array_like, default "uE"
        Variable the bins of binned statistics are cut on: "uE", a feature name, or one value
        per point.
    return_samples : bool, default False
        Also return the simulated values of the statistic as ``samples`` on dim ``sample``.
    engine : {"numba", "numpy"}, optional
        Resampling kernel of the bootstrap (docs/conventions.md); the simulated reference
        does not resample.

    Returns
    -------
    xarray.Dataset
        ``estimate``, ``ci_lower``, ``ci_upper``, ``z0``; ``reference``,
        ``reference_se``, ``reference_lower``, ``reference_upper``,
        ``se_negligible``; ``p_value`` (per D): the one-sided Monte Carlo p-value of
        the estimate among the simulated values in the direction of miscalibration
        (``mc_p_value``; side ``MISCALIBRATION_SIDE``, two-sided for other
        statistics); ``zeta``, ``valid``, ``reliable`` and ``verdict`` per scheme
        (``reliable`` False for Sim and BS when ``|z0| > 1`` or the interval cannot be
        computed, for Sim2 when a simulated value is not finite; ``verdict``: "OK",
        "fails" or "unreliable" from ``valid`` and ``reliable``, and for BS the verdict of
        :func:`uqviz.validate_average`: under a failed tail screen "fails" when its
        Student-t null rejects, else "unreliable", never "OK", issue 36).

    Warns
    -----
    UnreliableWarning
        ``|z0| > 1`` (an unstable BCa limit), or an interval that cannot be computed.

    See Also
    --------
    uqviz.simulated_reference : the reference alone.
    uqviz.validate_with_references : the workflow that picks the scheme and gives a verdict.
    uqviz.validate_average : statistics with a predefined reference.
    uqviz.plots.reference.zeta_scores : draws the zeta-scores of the schemes.

    Notes
    -----
    The pseudo-errors of a calibrated set are :math:`E^*_i = u_{E_i} \varepsilon_i`,
    :math:`\varepsilon_i \sim D(0, 1)` (Pernot (2024c), eq. 1); over :math:`n_{mc}` such sets,

    .. math::

       \vartheta_{D,ref} = \frac{1}{n_{mc}}\sum_{k=1}^{n_{mc}} \vartheta(E^{*(k)}, u_E), \qquad
       u(\vartheta_{D,ref}) = \frac{\mathrm{sd}(\vartheta(E^{*(k)}, u_E))}{\sqrt{n_{mc}}}

    (Pernot (2024c), section II.D.2, steps 1-4).

    Sim: :math:`\zeta` of Pernot (2024c), eq. 20, with :math:`\vartheta_{D,ref}` as reference
    (eq. 23) and the BCa interval widened in quadrature, each half-width :math:`h` becoming
    :math:`\sqrt{h^2 + (2 u(\vartheta_{D,ref}))^2}`; Sim2: the estimate inside the Monte Carlo
    interval of the simulated values (eq. 24); BS: the predefined reference inside the
    bootstrap interval (eq. 22).

    The Monte Carlo p-value of the estimate among the :math:`n_{mc}` simulated values
    :math:`\vartheta^{*(k)}` is one-sided, in the direction of miscalibration (Hope (1968)):

    .. math::

       p_> = \frac{1 + \#\{\vartheta^{*(k)} \ge \vartheta_{est}\}}{1 + n_{mc}}

    for ENCE, UCE and ZMSE (larger is worse), :math:`p_<` with :math:`\le` for CC (smaller is
    worse), and :math:`\min(1, 2\min(p_>, p_<))` for the other statistics
    (``MISCALIBRATION_SIDE``).

    Sim2's ``valid`` is the two-sided rule ``reference_lower <= estimate <=
    reference_upper``; ``p_value`` is the one-sided test, exact at any ``n_mc``. On
    calibrated data the bootstrap of a binned statistic (ENCE, ZMSE, UCE) is biased
    (``z0`` about -2 with 20 bins of 100 points), so the Sim verdict is often flagged
    unreliable; the Monte Carlo test is not affected (see
    ``benchmarks/bench_reference_verdicts.py``).

    References
    ----------
    - Pernot (2024c), eqs. 19-24: the interval test, the zeta-score and the schemes BS, Sim and
      Sim2.
    - Rasmussen et al. (2023): the scheme behind Sim2.
    - Hope (1968): the Monte Carlo p-value.
    - DiCiccio & Efron (1996): the BCa interval.

    Full entries: :doc:`/docs/references`.

    Examples
    --------
    >>> import uqviz
    >>> ds = uqviz.synthetic.nig(2000, nu=10, rng=0)
    >>> res = uqviz.validate_simulated(ds, statistic="CC", scheme=["Sim", "Sim2"],
    ...                                n_mc=500, n_boot=500, rng=1)
    >>> res["scheme"].values.tolist()
    ['Sim', 'Sim2']
    >>> lo, hi, est = (float(res[v]) for v in ("reference_lower", "reference_upper", "estimate"))
    >>> bool(res["valid"].sel(scheme="Sim2")) == (lo <= est <= hi)
    True
    >>> round(float(res["p_value"]), 3)
    0.299
    """
    stat, gens, n_bins, ci, progress, stream = _common_options(
        statistic, generative, n_bins, ci, progress, rng
    )
    client = resolve_client(client)
    schemes = _schemes(scheme)
    if "BS" in schemes and not stat.has_reference:
        raise ValueError(
            f"scheme 'BS' needs a statistic with a predefined reference; {stat.name} has none"
        )
    boot = _bootstrap_options(n_boot, ci, rng, engine, client, progress)
    return_samples = checks.boolean("return_samples", return_samples)
    sim = _Simulation(
        n_mc=_n_mc(n_mc),
        n_bins=n_bins,
        conditioning=conditioning,
        ci=ci,
        return_samples=return_samples,
        client=client,
        progress=progress,
    )
    single_gen, single_scheme = _one_or_many(generative), isinstance(scheme, str)
    out = map_datasets(
        _validate_sim_one,
        data,
        rng=stream,
        stat=stat,
        gens=gens,
        schemes=schemes,
        single=(single_gen, single_scheme),
        sim=sim,
        boot=boot,
    )
    names = [g.name for g in gens]
    out.attrs.update(
        {
            "statistic": stat.name,
            "scheme": schemes[0] if single_scheme else list(schemes),
            "generative": names[0] if single_gen else names,
            "n_mc": sim.n_mc,
            "n_boot": boot.n_boot,
            "n_bins": n_bins,
            "conditioning": _conditioning_attr(conditioning),
            "ci": ci,
            "method": boot.method,
            "rng": boot.attrs["rng"],
            "engine": boot.engine,
        }
    )
    return out


# --------------------------------------------------------------------------
# workflow
# --------------------------------------------------------------------------
def _bs_verdict(r, ci):
    """Verdict words of the BS scheme (a statistic with a predefined reference): those of
    :func:`uqviz.validate_average` (under a failed tail screen its Student-t null decides,
    "fails" or "unreliable", never "OK"; issue 36), and "unreliable" when the BCa interval
    decides with ``|z0| > 1``."""
    z0 = float(r["z0"]) if "z0" in r else np.nan
    word, reason = str(r["verdict"].values), str(r["reason"].values)
    bca_decides = bool(r["reliable"]) and int(r["n_points"]) >= BCA_MIN_POINTS
    if word in ("OK", "fails") and bca_decides and abs(z0) > UNSTABLE_Z0:
        return "unreliable", f"|z0| = {abs(z0):.2f} > {UNSTABLE_Z0:g}: the BCa limit is unstable"
    if word in ("OK", "fails") and not reason:
        side = "inside" if word == "OK" else "outside"
        reason = f"the reference lies {side} the {ci:g} bootstrap interval"
    return word, reason


def _tail_ratio(z):
    """(q.99 - q.01) / (q.75 - q.25) of the z-scores along the last axis."""
    q = np.quantile(z, TAIL_LEVELS, axis=-1)
    return (q[3] - q[0]) / (q[2] - q[1])


def _tail_screen(ds, gens, n_mc, rng):
    """Are the z-scores heavier-tailed than every D? Per D, the Monte Carlo p-value of the
    data's tail ratio among ``min(n_mc, TAIL_N_MC)`` sets of as many eps ~ D (at most
    ``TAIL_MAX_POINTS`` z-scores, a random subset beyond); returns (ratio, p per D)."""
    z = ds["E"].values / ds["uE"].values
    g = streams(rng, "tail").tail  # the one child of rng: subset and simulated sets
    if z.size > TAIL_MAX_POINTS:
        z = g.choice(z, TAIL_MAX_POINTS, replace=False)
    ratio = float(_tail_ratio(z))
    n = min(n_mc, TAIL_N_MC)
    ones = np.ones(z.size)
    p = []
    for gen in gens:
        sims = np.concatenate(
            [_tail_ratio(x) for x in simulated_rows(gen.for_data(ds), g, n, ones, scaled=False)]
        )
        p.append(mc_p_value(ratio, sims, "greater"))
    return ratio, np.array(p)


def _iut_verdict(p, names, alpha, sensitive, spread_se, k, tail):
    """Verdict words of the intersection-union Monte Carlo test over the D's.

    ``p``: one-sided Monte Carlo p-value under each D. "fails" when every D rejects at
    ``alpha`` and the z-scores are not heavier-tailed than every D (``tail``: ratio and
    p-values of :func:`_tail_screen`); "unreliable" when a simulated value is not
    finite, when every D rejects but the tail screen says none fits, or when the D's
    disagree and their references differ by more than ``k`` se (the coverage factor);
    otherwise "OK".
    """

    def said(i):
        return f"{names[i]} (p = {p[i]:.3g})"

    if not np.all(np.isfinite(p)):
        bad = ", ".join(names[i] for i in np.flatnonzero(~np.isfinite(p)))
        return "unreliable", f"the simulated values under D = {bad} are not finite"
    rejects = p <= alpha
    if rejects.all():
        every = "rejected under every D: " + ", ".join(said(i) for i in range(len(p)))
        ratio, p_tail = tail
        if np.max(p_tail) <= alpha:
            return "unreliable", (
                f"the z-scores are heavier-tailed than every D (tail ratio "
                f"(q99 - q01)/(q75 - q25) = {ratio:.2f}, p = "
                f"{np.max(p_tail):.3g}): {every}, but the test assumes "
                "that the errors follow one of them"
            )
        return "fails", every
    if rejects.any() and sensitive:
        yes = ", ".join(said(i) for i in np.flatnonzero(rejects))
        no = ", ".join(said(i) for i in np.flatnonzero(~rejects))
        return "unreliable", (
            f"its simulated reference depends on D (the references differ "
            f"by {spread_se:.1f} se > {k:g}, the coverage factor): "
            f"rejected under {yes}, "
            f"not under {no}"
        )
    no = ", ".join(said(i) for i in np.flatnonzero(~rejects))
    return "OK", f"not rejected under {no}"


def _validate_one(ds, *, rng, stat, gens, sim, boot, k, refs=None, boot_res=None, tail=None):
    """``sim``, ``boot``: the :class:`_Simulation` and the
    :class:`~uqviz.engine.options.BootstrapOptions`; ``k`` the coverage factor; ``refs``,
    ``boot_res``, ``tail``: the references, bootstrap result and tail screen when already
    computed (:func:`validate_shared`)."""
    ci = sim.ci
    if stat.has_reference:
        res = validate_average(
            ds,
            statistics=(stat.name,),
            n_boot=boot.n_boot,
            ci=ci,
            rng=rng,
            client=boot.client,
            engine=boot.engine,
        )
        r = res.sel(statistic=stat.name).drop_vars("statistic")
        verdict_, reason = _bs_verdict(r, ci)
        p_value = float(r["verdict_p_value"])
        keep = [
            "estimate",
            "ci_lower",
            "ci_upper",
            "reference",
            "zeta",
            "valid",
            "z0",
            "null_p_value",
            "tail_df",
            "tail_df_lower",
        ]
        return r[keep].assign(
            p_value=(
                (),
                p_value,
                {
                    "long_name": "the p-value the verdict rests on: two-sided "
                    "bootstrap p-value, or null_p_value under a "
                    "failed tail screen (validate_average)"
                },
            ),
            reliable=((), verdict_ != "unreliable"),
            verdict=((), verdict_),
            reason=((), reason),
            scheme=((), "BS"),
        )
    sims = _validate_sim_one(
        ds,
        rng=rng,
        stat=stat,
        gens=gens,
        schemes=("Sim",),
        single=(False, True),
        sim=sim.replace(return_samples=False),
        boot=boot,
        refs=refs,
        boot_res=boot_res,
    )
    refs, ses = sims["reference"].values, sims["reference_se"].values
    spread = refs.max() - refs.min()
    i, j = int(np.argmax(refs)), int(np.argmin(refs))
    combined = np.hypot(ses[i], ses[j])
    threshold = k * combined
    sensitive = bool(spread > threshold)
    p_d = sims["p_value"].values
    if tail is None:  # its stream: the next child of rng, after _validate_sim_one's
        tail = _tail_screen(ds, gens, sim.n_mc, rng)
    verdict_, reason = _iut_verdict(
        p_d,
        [g.name for g in gens],
        1.0 - ci,
        sensitive,
        spread / combined if combined > 0 else np.inf,
        k,
        tail,
    )
    p_value = float(np.max(p_d))  # NaN when one is NaN
    keep = [
        "estimate",
        "ci_lower",
        "ci_upper",
        "z0",
        "reference",
        "reference_se",
        "reference_lower",
        "reference_upper",
        "zeta",
        "valid",
    ]
    side = _side(stat)
    return sims[keep].assign(
        mc_p_value=(
            ("generative",),
            p_d,
            {"long_name": f"one-sided ({side}) Monte Carlo p-value under each D"},
        ),
        p_value=(
            (),
            p_value,
            {
                "long_name": "intersection-union p-value: the largest Monte Carlo "
                "p-value over the D's"
            },
        ),
        reliable=((), verdict_ != "unreliable"),
        tail_ratio=((), tail[0], {"long_name": "(q99 - q01)/(q75 - q25) of the z-scores"}),
        tail_p_value=(
            ("generative",),
            tail[1],
            {
                "long_name": "Monte Carlo p-value of tail_ratio under each D "
                "(one-sided: small when Z is heavier-tailed than D)"
            },
        ),
        reference_spread=((), spread),
        sensitivity_threshold=((), threshold),
        sensitive_to_D=((), sensitive),
        verdict=((), verdict_),
        reason=((), reason),
        scheme=((), "Sim"),
    )


def _workflow_options(names, generative, *, n_mc, n_bins, conditioning, k, boot):
    """Checked options of :func:`validate_with_references` and :func:`validate_shared` (one
    place); ``boot``: the bootstrap's keyword options, checked here into a
    :class:`~uqviz.engine.options.BootstrapOptions`."""
    opts = [
        _common_options(s, generative, n_bins, boot["ci"], boot["progress"], boot["rng"])
        for s in names
    ]
    stats = [o[0] for o in opts]
    _, gens, n_bins, ci, progress, stream = opts[0]
    client = resolve_client(boot["client"])
    simulated = [s for s in stats if not s.has_reference]
    if len(gens) < 2 and simulated:
        raise ValueError(
            f"generative: the sensitivity test of {simulated[0].name} needs at "
            f"least two generative distributions, got {[g.name for g in gens]}"
        )
    boot = _bootstrap_options(boot["n_boot"], ci, boot["rng"], boot["engine"], client, progress)
    k = checks.positive("coverage_factor", k)
    sim = _Simulation(
        n_mc=_n_mc(n_mc),
        n_bins=n_bins,
        conditioning=conditioning,
        ci=ci,
        client=client,
        progress=progress,
    )
    return dict(stats=stats, gens=gens, sim=sim, boot=boot, k=k, stream=stream)


def _workflow_attrs(stat, o, conditioning):
    """Settings of a :func:`validate_with_references` result."""
    sim, boot = o["sim"], o["boot"]
    return {
        "statistic": stat.name,
        "generative": [g.name for g in o["gens"]],
        "n_mc": sim.n_mc,
        "n_boot": boot.n_boot,
        "n_bins": sim.n_bins,
        "conditioning": _conditioning_attr(conditioning),
        "ci": sim.ci,
        "coverage_factor": o["k"],
        "rng": boot.attrs["rng"],
        "engine": boot.engine,
    }


@renamed_options(k="coverage_factor")
def validate_with_references(
    data,
    *,
    statistic,
    generative=("normal", "t6"),
    n_mc=10_000,
    n_boot=10_000,
    n_bins=None,
    conditioning="uE",
    ci=0.95,
    coverage_factor=2.0,
    rng=None,
    client=None,
    progress=None,
    engine=None,
):
    r"""The validation workflow for one statistic (Pernot (2024c), Fig. 1).

    BS for a statistic with a predefined reference: the ``verdict`` of
    :func:`uqviz.validate_average` ("OK" or "fails" from ``valid``; under a failed tailedness
    screen its tail-allowing test decides, against calibrated Student-t z-scores as
    heavy-tailed as the data's: "fails" when it rejects, "unreliable" otherwise, never "OK";
    issue 36), "unreliable" when the BCa interval decides with ``|z0| > 1`` or cannot be
    computed. Otherwise the
    intersection-union test over the given D: the one-sided Monte Carlo p-value of the
    estimate among the simulated values under each D (``mc_p_value``), ``p_value`` =
    their maximum; "fails" when every D rejects (``p_value <= 1 - ci``: a test of level
    ``1 - ci`` whenever the true D is one of them; Berger (1982)), "unreliable" when
    some D reject and the others do not while the references differ by more than
    ``coverage_factor`` combined standard errors (the verdict depends on D), else "OK".
    A rejection by every D is "unreliable", not "fails", when the z-scores are heavier-tailed than
    every D (the tail screen: the ratio ``(q99 - q01)/(q75 - q25)`` of Z rejected by the
    one-sided Monte Carlo test under each D, with ``min(n_mc, 200)`` sets of at most
    20 000 points): the test then assumes a D that the data contradict. The Sim-scheme
    numbers (``zeta``, ``valid`` per D) are kept for the zeta-scores of Pernot (2024c).

    Parameters
    ----------
    data : xarray.Dataset or xarray.DataTree
        Errors ``E`` and standard uncertainties ``uE`` on dim ``point`` (with any features), as
        made by :func:`uqviz.from_arrays` and the other constructors; a DataTree gives one
        result per dataset, on dim ``dataset``.
    statistic : str
        Registered statistic validated (``uqviz.list_statistics()``).
    generative : sequence of str or Generative, default ("normal", "t6")
        At least two D when the statistic has no predefined reference.
    n_mc : int, default 10000
        Number of Monte Carlo samples (simulated calibrated datasets), an int >= 2.
    n_boot : int, default 10000
        Number of bootstrap replicates, an int >= 2.
    n_bins : int, optional
        Number of equal-count bins of the binned statistics (ENCE, UCE, ZMSE); default 20
        (Pernot (2024c)); ignored by the other statistics.
    conditioning : str or array_like, default "uE"
        Variable the bins of binned statistics are cut on: "uE", a feature name, or one value
        per point.
    ci : float, default 0.95
        Confidence level of the intervals, in (0, 1).
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
    engine : {"numba", "numpy"}, optional
        Resampling kernel of the bootstrap (docs/conventions.md).
    coverage_factor : float, default 2.0
        Coverage factor of the sensitivity test: the references under two D differ when
        their spread exceeds ``coverage_factor`` combined standard errors (``k`` until
        uqviz 0.2, still accepted with a FutureWarning until 0.3.0).

    Returns
    -------
    xarray.Dataset
        ``verdict`` ("OK", "fails" or "unreliable"), ``reason`` (the words behind it),
        ``p_value``, ``reliable`` (``verdict != "unreliable"``), ``scheme``,
        ``estimate``, ``ci_lower``, ``ci_upper``, ``z0``, ``reference``, ``zeta``,
        ``valid``; for Sim also (per D) ``reference_se``, ``reference_lower``,
        ``reference_upper``, ``mc_p_value``, ``tail_p_value``, and ``tail_ratio``,
        ``reference_spread``, ``sensitivity_threshold``, ``sensitive_to_D``.

    See Also
    --------
    uqviz.validate_simulated : the numbers of each scheme.
    uqviz.validate_average : statistics with a predefined reference.
    uqviz.report : every validation of a dataset at once.
    uqviz.plots.reference.zeta_scores : draws the zeta-scores.

    Notes
    -----
    The Monte Carlo p-value of the estimate among the :math:`n_{mc}` simulated values
    :math:`\vartheta^{*(k)}` is one-sided, in the direction of miscalibration (Hope (1968)):

    .. math::

       p_> = \frac{1 + \#\{\vartheta^{*(k)} \ge \vartheta_{est}\}}{1 + n_{mc}}

    for ENCE, UCE and ZMSE (larger is worse), :math:`p_<` with :math:`\le` for CC (smaller is
    worse), and :math:`\min(1, 2\min(p_>, p_<))` for the other statistics
    (``MISCALIBRATION_SIDE``).

    Without a predefined reference, the intersection-union test over the generative
    distributions :math:`D_1, \dots, D_K` rejects when every :math:`D_j` does,

    .. math::

       p = \max_j p_{D_j} \le 1 - \mathrm{ci}

    (Berger (1982)). The verdict depends on D ("unreliable") when some :math:`D_j` reject and the
    others do not while the spread of the references exceeds ``k`` combined standard errors,
    :math:`\vartheta_{D_+,ref} - \vartheta_{D_-,ref} > k \sqrt{u_+^2 + u_-^2}`, with
    :math:`D_+` and :math:`D_-` the distributions of the largest and smallest references and
    :math:`u_\pm` their standard errors (Pernot (2024c), Fig. 1).

    References
    ----------
    - Pernot (2024c), Fig. 1: the validation workflow; eqs. 19-24: the schemes.
    - Berger (1982): the intersection-union test.
    - Hope (1968): the Monte Carlo p-value.

    Full entries: :doc:`/docs/references`.

    Examples
    --------
    >>> import uqviz
    >>> ds = uqviz.synthetic.nig(2000, nu=10, rng=0)
    >>> res = uqviz.validate_with_references(ds, statistic="ZMS", n_boot=1000, rng=0)
    >>> str(res["verdict"].values)
    'OK'
    >>> import numpy as np, warnings
    >>> rng = np.random.default_rng(0)
    >>> z = rng.standard_t(3, 3000) / np.sqrt(3.0)   # calibrated, heavy-tailed
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     [str(uqviz.validate_with_references(uqviz.from_arrays(k * z, np.ones(3000)),
    ...                                         statistic="ZMS", n_boot=500,
    ...                                         rng=0)["verdict"].values) for k in (1, 2)]
    ['unreliable', 'fails']
    >>> res = uqviz.validate_with_references(ds, statistic="CC", n_mc=200, n_boot=200, rng=0)
    >>> bool(res["p_value"] == res["mc_p_value"].max()), str(res["verdict"].values)
    (True, 'OK')
    """
    o = _workflow_options(
        [statistic],
        generative,
        n_mc=n_mc,
        n_bins=n_bins,
        conditioning=conditioning,
        k=coverage_factor,
        boot=dict(n_boot=n_boot, ci=ci, rng=rng, engine=engine, client=client, progress=progress),
    )
    stat = o["stats"][0]
    out = map_datasets(
        _validate_one,
        data,
        rng=o["stream"],
        stat=stat,
        gens=o["gens"],
        sim=o["sim"],
        boot=o["boot"],
        k=o["k"],
    )
    out.attrs.update(_workflow_attrs(stat, o, conditioning))
    return out


@renamed_options(k="coverage_factor")
def validate_shared(
    ds,
    *,
    statistics,
    generative=("normal", "t6"),
    n_mc=10_000,
    n_boot=10_000,
    n_bins=None,
    conditioning="uE",
    ci=0.95,
    coverage_factor=2.0,
    rng=None,
    client=None,
    progress=None,
    engine=None,
):
    """:func:`validate_with_references` of several statistics on one Dataset, the synthetic
    sets shared.

    Each synthetic set E* = uE eps, eps ~ D, is drawn once and evaluated by every
    statistic without a predefined reference (ENCE, ZMSE, CC, ...), instead of once per
    statistic; the tail screen of the z-scores is computed once. The result for each
    statistic is exactly ``validate_with_references(ds, statistic=s, rng=rng, ...)`` for the
    same int
    seed ``rng`` (or a fresh generator in the same state): each statistic is given the
    same streams as a call of its own, so their bootstraps share their draws too.

    Parameters
    ----------
    ds : xarray.Dataset
    statistics : sequence of str
    generative, n_mc, n_boot, n_bins, conditioning, ci, coverage_factor, rng, client, progress,
    engine
        As :func:`validate_with_references`.

    Returns
    -------
    dict
        ``{statistic: xarray.Dataset}``, each as returned by :func:`validate_with_references`.

    Examples
    --------
    >>> import uqviz
    >>> ds = uqviz.synthetic.nig(2000, nu=10, rng=0)
    >>> res = validate_shared(ds, statistics=("ENCE", "CC"), n_mc=100, n_boot=200, rng=3)
    >>> one = uqviz.validate_with_references(ds, statistic="CC", n_mc=100, n_boot=200, rng=3)
    >>> res["CC"].identical(one)
    True
    """
    if not isinstance(ds, xr.Dataset):
        raise TypeError(f"validate_shared: data must be an xarray.Dataset, got {type(ds).__name__}")
    check_dataset(ds)
    o = _workflow_options(
        checks.names("statistics", statistics),
        generative,
        n_mc=n_mc,
        n_bins=n_bins,
        conditioning=conditioning,
        k=coverage_factor,
        boot=dict(n_boot=n_boot, ci=ci, rng=rng, engine=engine, client=client, progress=progress),
    )
    stats, gens, sim, boot = o["stats"], o["gens"], o["sim"], o["boot"]
    # the streams of validate_with_references(): one child per dataset, then (bootstrap,
    # one per D)
    child = streams(o["stream"], "dataset").dataset
    shared = [s for s in stats if not s.has_reference]
    refs = {}
    if shared:
        _, mc_rngs = _validation_streams(copy.deepcopy(child), gens)
        per_gen = [
            _references_of(
                ds, rng=r, stats=shared, generative=g, sim=sim.replace(return_samples=True)
            )
            for g, r in zip(gens, mc_rngs)
        ]
        refs = {s.name: [p[i] for p in per_gen] for i, s in enumerate(shared)}
    # binned statistics on uE: one resample gives all of them their replicates (the
    # binned kernel's draws do not depend on the columns), the same as one call each
    boots = {}
    binned = [s for s in shared if s.kind == "binned"]
    if len(binned) > 1 and isinstance(conditioning, str) and conditioning == "uE":
        boot_rng, _ = _validation_streams(copy.deepcopy(child), gens)
        boots = bootstrap_against_reference(
            ds["E"].values,
            ds["uE"].values,
            binned,
            n_boot=boot.n_boot,
            ci=boot.ci,
            rng=boot_rng,
            n_bins=sim.n_bins,
            client=boot.client,
            engine=boot.engine,
        )
    tail = None
    if shared:  # the tail screen of the z-scores, once: the stream of
        stream = copy.deepcopy(child)  # validate_with_references()'s, after its spawn
        _validation_streams(stream, gens)
        tail = _tail_screen(ds, gens, sim.n_mc, stream)
    out = {}
    for stat in stats:
        res = _validate_one(
            ds,
            rng=copy.deepcopy(child),
            stat=stat,
            gens=gens,
            sim=sim,
            boot=boot,
            k=o["k"],
            refs=refs.get(stat.name),
            boot_res=boots.get(stat.name),
            tail=tail,
        )
        res = describe(res, ds, statistics=(stat.name,))  # as map_datasets does
        res.attrs.update(_workflow_attrs(stat, o, conditioning))
        out[stat.name] = res
    return out


def validate(data, **options):
    """Deprecated name of :func:`validate_with_references` (removed in uqviz 0.3.0).

    Parameters
    ----------
    data : xarray.Dataset or xarray.DataTree
        As :func:`validate_with_references`.
    **options
        The options of :func:`validate_with_references`.

    Returns
    -------
    xarray.Dataset
        What :func:`validate_with_references` returns.

    Warns
    -----
    FutureWarning
        Always: the name says nothing of what it does (``uqviz validate`` on the command
        line is another analysis).

    Examples
    --------
    >>> import warnings, uqviz
    >>> ds = uqviz.synthetic.nig(500, nu=10, rng=0)
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     old = validate(ds, statistic="ZMS", n_boot=200, rng=0)
    >>> caught[0].category.__name__
    'FutureWarning'
    >>> old.identical(validate_with_references(ds, statistic="ZMS", n_boot=200, rng=0))
    True
    """
    warnings.warn(
        f"uqviz.validate is deprecated and will be removed in uqviz {REMOVED_IN}: "
        "use uqviz.validate_with_references instead",
        FutureWarning,
        stacklevel=2,
    )
    return validate_with_references(data, **options)
