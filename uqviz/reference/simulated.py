"""Simulated reference values and the validation schemes of Pernot (2024, paper 002).

For statistics without a predefined reference (CC, ENCE, UCE, ZMSE) a
reference is simulated from the actual uncertainties: pseudo-errors
E* = uE * eps, eps ~ D, for a chosen unit-variance generative distribution D.
Three schemes validate a statistic:

- **BS**: predefined reference, bootstrap BCa interval (``validate_average``);
- **Sim**: simulated reference with its standard error, bootstrap interval of
  the statistic; zeta = (est - ref) / sqrt((est - limit)^2 + (2 se)^2)
  where ``limit`` is the interval bound on the reference's side;
- **Sim2** (Rasmussen et al.): the statistic is taken as fixed and compared
  with the Monte Carlo interval I_D of the simulated values; zeta is scaled
  by the distance from the reference to the bound of I_D on the estimate's
  side, so that |zeta| <= 1 <=> est in I_D.

:func:`validate` runs the recommended workflow (002 Fig. 1).
"""

from __future__ import annotations

import warnings

import numpy as np
import xarray as xr
from tqdm.auto import tqdm

from uqviz._array import binned as kbin
from uqviz._array import stats as ks
from uqviz.engine.parallel import block_rng, run_blocks
from uqviz.engine.tree import map_datasets
from uqviz.engine.binning import compute_bins, conditioning_values
from uqviz.engine.bootstrap import bootstrap_statistics
from uqviz.data.model import check_dataset
from uqviz.data.generative import get_generative
from uqviz.engine.statistics import DEFAULT_N_BINS, get_statistic
from uqviz.average.validation import validate_average

__all__ = ["simulated_reference", "validate_simulated", "validate", "SCHEMES"]

SCHEMES = ("Sim", "Sim2")
MC_BLOCK = 64  # replicates per independently seeded block
UNSTABLE_Z0 = 1.0


def _evaluator(ds, stat, *, n_bins, conditioning):
    """Point order and a function f(e (R, M), u (M,)) -> (R,) on that order."""
    m = ds.sizes["point"]
    if stat.kind == "binned":
        _, x = conditioning_values(ds, conditioning)
        bins = compute_bins(x, n_bins=n_bins, scheme="equal_count")
        starts, sizes = bins.starts, bins.sizes
        cols = tuple(c for c in stat.columns if c != "V")
        mv = kbin.bin_means(ds["uE"].values[bins.order] ** 2, starts, sizes)

        def f(e, u):  # u is the same for every row: its bin means are computed once
            means = kbin.binned_column_means(e, u, starts, sizes, cols)
            if "V" in stat.columns:
                means["V"] = mv
            return stat.func(means)

        return bins.order, f, x
    if stat.kind == "moments":
        def f(e, u):
            return stat.func(ks.column_means(e, u, stat.columns), m)
    elif stat.given_u is not None:  # work on the fixed uncertainties done once
        g = stat.given_u(ds["uE"].values)

        def f(e, u):
            return g(e)
    else:
        def f(e, u):
            return stat.func(e, np.broadcast_to(u, e.shape))
    return np.arange(m), f, None


def _simulate(u, f, generative, n_mc, seed, *, client, progress, label):
    n_blocks = -(-n_mc // MC_BLOCK)

    def block(b):
        n = min(MC_BLOCK, n_mc - b * MC_BLOCK)
        eps = generative.sample(block_rng(seed, b), (n, u.size))
        return np.asarray(f(u * eps, u), dtype=float)

    with tqdm(total=n_blocks, desc=label, disable=not progress, leave=False) as bar:
        return np.concatenate(run_blocks(block, n_blocks, client=client, progress=bar))


def _reference_one(ds, *, rng, statistic, generative, n_mc, n_bins, conditioning, ci,
                   return_samples, client, progress):
    check_dataset(ds)
    stat = get_statistic(statistic)
    gen = get_generative(generative, ds)
    order, f, _ = _evaluator(ds, stat, n_bins=n_bins, conditioning=conditioning)
    u = ds["uE"].values[order]
    seed = int(np.random.default_rng(rng).integers(0, 2**63))
    label = f"{stat.name} reference ({gen.name})"
    samples = _simulate(u, f, gen, n_mc, seed, client=client, progress=progress, label=label)
    q = np.quantile(samples, [(1 - ci) / 2, (1 + ci) / 2])
    out = xr.Dataset({
        "mean": ((), samples.mean()),
        "sd": ((), samples.std(ddof=1)),
        "se": ((), samples.std(ddof=1) / np.sqrt(n_mc)),
        "ci_lower": ((), q[0]),
        "ci_upper": ((), q[1]),
    })
    if return_samples:
        out["samples"] = ("replicate", samples)
    return out


def simulated_reference(data, *, statistic, generative="normal", n_mc=10_000, n_bins=None,
                        conditioning="uE", ci=0.95, rng=None, return_samples=False,
                        client=None, progress=False):
    """Reference value of a statistic for calibrated data with the actual uncertainties.

    Draws ``n_mc`` sets of pseudo-errors E* = uE * eps (eps ~ D, the
    generative distribution) and evaluates the statistic on each (002 sect.
    II D 2). Binned statistics keep the bins of the data.

    Parameters
    ----------
    data : xarray.Dataset or xarray.DataTree
    statistic : str
        Any registered statistic (ZMS, CC, ENCE, UCE, ZMSE, NLL, ...).
    generative : str or Generative, default "normal"
        "normal", "t<nu>" (e.g. "t6"), "uniform", "laplace", "empirical", or
        a :class:`uqviz.generative.Generative`.
    n_mc : int, default 10_000
        Monte Carlo sample size.
    n_bins : int, optional
        Bins of binned statistics (default 20, equal-count on ``conditioning``).
    conditioning : str, default "uE"
        Binning variable of binned statistics.
    ci : float, default 0.95
        Level of the Monte Carlo quantile interval.
    rng : None, int or Generator
    return_samples : bool
        Also return the simulated values on dim ``replicate``.
    client : dask.distributed.Client, optional
        Run the Monte Carlo blocks on dask (same numbers as locally).
    progress : bool
        Show a progress bar.

    Returns
    -------
    xarray.Dataset
        ``mean`` (the reference), ``sd``, ``se`` = sd/sqrt(n_mc),
        ``ci_lower``, ``ci_upper`` (Monte Carlo quantiles), optionally
        ``samples``; attrs with the settings.

    Examples
    --------
    >>> import uqviz
    >>> ds = uqviz.synthetic.nig(1000, nu=6, rng=0)
    >>> ref = uqviz.simulated_reference(ds, statistic="ZMS", n_mc=500, rng=1)
    >>> bool(abs(float(ref["mean"]) - 1) < 0.01)
    True
    """
    n_bins = DEFAULT_N_BINS if n_bins is None else int(n_bins)
    gen = get_generative(generative) if generative != "empirical" else "empirical"
    out = map_datasets(_reference_one, data, rng=rng, statistic=statistic, generative=gen,
                       n_mc=int(n_mc), n_bins=n_bins, conditioning=conditioning, ci=ci,
                       return_samples=return_samples, client=client, progress=progress)
    out.attrs.update({"statistic": get_statistic(statistic).name,
                      "generative": gen if isinstance(gen, str) else gen.name,
                      "n_mc": int(n_mc), "n_bins": n_bins, "conditioning": str(conditioning),
                      "ci": ci})
    return out


def _sim_zeta(est, ref, se, lower, upper):
    limit = np.where(est <= ref, upper, lower)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (est - ref) / np.sqrt((est - limit) ** 2 + (2.0 * se) ** 2)


def _sim2_zeta(est, ref, ref_lower, ref_upper):
    bound = np.where(est <= ref, ref_lower, ref_upper)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (est - ref) / np.abs(bound - ref)


def _bootstrap_one(ds, stat, *, rng, n_boot, n_bins, conditioning, ci):
    key = None
    if stat.kind == "binned" and conditioning != "uE":
        key = conditioning_values(ds, conditioning)[1]
    res = bootstrap_statistics(ds["E"].values, ds["uE"].values, [stat], n_boot=n_boot, ci=ci,
                               rng=rng, n_bins=n_bins, key=key)[stat.name]
    z0 = float(res.z0[0]) if res.z0 is not None else np.nan
    if abs(z0) > UNSTABLE_Z0:
        side = "upper" if z0 < 0 else "lower"
        label = f" of {ds.attrs['name']!r}" if ds.attrs.get("name") else ""
        warnings.warn(f"{stat.name}{label}: bootstrap bias correction z0 = {z0:.2f} (|z0| > 1): "
                      f"the BCa {side} limit sits in the extreme order statistics of the "
                      "replicates and is unstable", UserWarning, stacklevel=5)
    return float(res.estimate[0]), float(res.lower[0]), float(res.upper[0]), z0


def _scheme_result(boot, ref, scheme):
    est, lo, hi, z0 = boot
    r, se = float(ref["mean"]), float(ref["se"])
    if scheme == "Sim":
        zeta = float(_sim_zeta(est, r, se, lo, hi))
    else:
        zeta = float(_sim2_zeta(est, r, float(ref["ci_lower"]), float(ref["ci_upper"])))
    return xr.Dataset({
        "estimate": ((), est), "ci_lower": ((), lo), "ci_upper": ((), hi), "z0": ((), z0),
        "reference": ((), r), "reference_se": ((), se),
        "reference_ci_lower": ref["ci_lower"], "reference_ci_upper": ref["ci_upper"],
        "zeta": ((), zeta), "valid": ((), abs(zeta) <= 1.0),
        "se_negligible": ((), 2.0 * se < (hi - lo) / 2.0),
    })


def _validate_sim_one(ds, *, rng, statistic, generative, scheme, n_mc, n_boot, n_bins,
                      conditioning, ci, client, progress):
    check_dataset(ds)
    stat = get_statistic(statistic)
    boot_rng, mc_rng = np.random.default_rng(rng).spawn(2)
    ref = _reference_one(ds, rng=mc_rng, statistic=stat, generative=generative, n_mc=n_mc,
                         n_bins=n_bins, conditioning=conditioning, ci=ci,
                         return_samples=False, client=client, progress=progress)
    boot = _bootstrap_one(ds, stat, rng=boot_rng, n_boot=n_boot, n_bins=n_bins,
                          conditioning=conditioning, ci=ci)
    return _scheme_result(boot, ref, scheme)


def validate_simulated(data, *, statistic, generative="normal", scheme="Sim", n_mc=10_000,
                       n_boot=5000, n_bins=None, conditioning="uE", ci=0.95, rng=None,
                       client=None, progress=False):
    """Validate a statistic against a simulated reference (002 sect. II D and App. A).

    Parameters
    ----------
    data : xarray.Dataset or xarray.DataTree
    statistic : str
        Registered statistic (CC, ENCE, UCE, ZMSE, or one with a reference).
    generative : str or Generative, default "normal"
    scheme : {"Sim", "Sim2"}
        Sim: bootstrap BCa interval of the statistic, reference uncertainty
        2*se added in quadrature to the distance to the interval limit.
        Sim2: the Monte Carlo interval of the reference instead.
    n_mc, n_boot : int
        Monte Carlo and bootstrap sample sizes.
    n_bins : int, optional
        Bins of binned statistics (default 20).
    conditioning : str, default "uE"
    ci : float, default 0.95
    rng, client, progress
        As in :func:`simulated_reference`.

    Returns
    -------
    xarray.Dataset
        ``estimate``, ``ci_lower``, ``ci_upper``, ``z0`` (bootstrap bias
        correction), ``reference``, ``reference_se``, ``reference_ci_lower``,
        ``reference_ci_upper``, ``zeta``, ``valid`` and ``se_negligible``
        (2 se below the half-width of the bootstrap interval). Warns when
        |z0| > 1 (binned statistics are strongly biased under the bootstrap,
        which makes one BCa limit unstable).

    Examples
    --------
    >>> import uqviz
    >>> ds = uqviz.synthetic.nig(2000, nu=10, rng=0)
    >>> res = uqviz.validate_simulated(ds, statistic="CC", n_mc=500, n_boot=500, rng=1)
    >>> sorted(["zeta", "valid"]) == sorted(v for v in ["zeta", "valid"] if v in res)
    True
    """
    if scheme not in SCHEMES:
        raise ValueError(f"scheme must be one of {SCHEMES}, got {scheme!r}")
    n_bins = DEFAULT_N_BINS if n_bins is None else int(n_bins)
    gen = get_generative(generative) if generative != "empirical" else "empirical"
    out = map_datasets(_validate_sim_one, data, rng=rng, statistic=statistic, generative=gen,
                       scheme=scheme, n_mc=int(n_mc), n_boot=int(n_boot), n_bins=n_bins,
                       conditioning=conditioning, ci=ci, client=client, progress=progress)
    out.attrs.update({"statistic": get_statistic(statistic).name, "scheme": scheme,
                      "generative": gen if isinstance(gen, str) else gen.name,
                      "n_mc": int(n_mc), "n_boot": int(n_boot), "n_bins": n_bins,
                      "conditioning": str(conditioning), "ci": ci})
    return out


def _validate_one(ds, *, rng, statistic, generatives, n_mc, n_boot, n_bins, conditioning, ci,
                  k, client, progress):
    stat = get_statistic(statistic)
    if stat.has_reference:
        res = validate_average(ds, statistics=(stat.name,), n_boot=n_boot, ci=ci, rng=rng)
        r = res.sel(statistic=stat.name).drop_vars("statistic")
        verdict = "validated" if bool(r["valid"]) else "rejected"
        return r[["estimate", "ci_lower", "ci_upper", "reference", "zeta", "valid"]].assign(
            verdict=((), verdict), scheme=((), "BS"))
    boot_rng, *mc_rngs = np.random.default_rng(rng).spawn(1 + len(generatives))
    boot = _bootstrap_one(ds, stat, rng=boot_rng, n_boot=n_boot, n_bins=n_bins,
                          conditioning=conditioning, ci=ci)
    sims = [_scheme_result(boot, _reference_one(
                ds, rng=r, statistic=stat, generative=get_generative(g, ds), n_mc=n_mc,
                n_bins=n_bins, conditioning=conditioning, ci=ci, return_samples=False,
                client=client, progress=progress), "Sim")
            for g, r in zip(generatives, mc_rngs)]
    names = [get_generative(g, ds).name for g in generatives]
    refs = np.array([float(s["reference"]) for s in sims])
    ses = np.array([float(s["reference_se"]) for s in sims])
    spread = refs.max() - refs.min()
    i, j = int(np.argmax(refs)), int(np.argmin(refs))
    threshold = k * np.hypot(ses[i], ses[j])
    sensitive = spread > threshold
    first = sims[0]
    if sensitive:
        verdict = "statistic too sensitive to D"
    else:
        verdict = "validated" if bool(first["valid"]) else "rejected"
    stacked = xr.concat(sims, dim=xr.DataArray(names, dims="generative", name="generative"))
    return xr.Dataset({
        "estimate": first["estimate"], "ci_lower": first["ci_lower"],
        "ci_upper": first["ci_upper"],
        "reference": stacked["reference"], "reference_se": stacked["reference_se"],
        "zeta": stacked["zeta"], "valid": stacked["valid"],
        "reference_spread": ((), spread), "sensitivity_threshold": ((), threshold),
        "sensitive_to_D": ((), sensitive), "verdict": ((), verdict), "scheme": ((), "Sim"),
    })


def validate(data, statistic, *, generative=("normal", "t6"), n_mc=10_000, n_boot=5000,
             n_bins=None, conditioning="uE", ci=0.95, k=2.0, rng=None, client=None,
             progress=False):
    """The recommended validation workflow for one statistic (002 Fig. 1).

    A statistic with a predefined reference (ZMS, RCE, ZM, ZVar, NLL) is
    validated by the bootstrap (BS scheme). Otherwise its reference is
    simulated under at least two generative distributions D (normal and
    t_s(6) by default); if the references differ by more than ``k`` times
    their combined standard error (k = 2: the papers' expanded uncertainty),
    the statistic is declared too sensitive to D to be validated; if not, the
    Sim scheme with the first D decides.

    Parameters
    ----------
    data : xarray.Dataset or xarray.DataTree
    statistic : str
    generative : sequence of str or Generative, default ("normal", "t6")
    n_mc, n_boot, n_bins, conditioning, ci, rng, client, progress
        As in :func:`validate_simulated`.
    k : float, default 2.0
        Coverage factor of the sensitivity test.

    Returns
    -------
    xarray.Dataset
        ``verdict`` ("validated", "rejected" or "statistic too sensitive to D"),
        ``scheme`` ("BS" or "Sim") and the numbers behind it: estimate and
        interval, references (dim ``generative``), their spread and the
        threshold, zeta-scores.

    Examples
    --------
    >>> import uqviz
    >>> ds = uqviz.synthetic.nig(2000, nu=10, rng=0)
    >>> str(uqviz.validate(ds, "ZMS", n_boot=1000, rng=0)["verdict"].values)
    'validated'
    """
    if len(generative) < 2 and not get_statistic(statistic).has_reference:
        raise ValueError("the sensitivity test needs at least two generative distributions")
    n_bins = DEFAULT_N_BINS if n_bins is None else int(n_bins)
    out = map_datasets(_validate_one, data, rng=rng, statistic=statistic,
                       generatives=tuple(generative), n_mc=int(n_mc), n_boot=int(n_boot),
                       n_bins=n_bins, conditioning=conditioning, ci=ci, k=float(k),
                       client=client, progress=progress)
    out.attrs.update({"statistic": get_statistic(statistic).name, "n_mc": int(n_mc),
                      "n_boot": int(n_boot), "n_bins": n_bins, "k": float(k)})
    return out
