"""Size and bin-number dependence of ENCE/ZMSE, and validation by extrapolation to zero bins.

For calibrated data, ref ~ intercept + slope * sqrt(N/M) for N equal-count bins of
M points (Pernot (2024c), Appendices B and C).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping

import numpy as np
import xarray as xr

from uqviz._array import curves as curve_kernels
from uqviz._array.bca import verdict
from uqviz._array.lazy import lazy_module
from uqviz.data.generative import Generative, as_generatives
from uqviz.data.model import check_dataset
from uqviz.engine.options import warn_points_independent
from uqviz.engine import checks, seeds
from uqviz.engine.descriptions import describe
from uqviz.engine.options import BootstrapOptions
from uqviz.engine.parallel import block_rng, progress_bar, run_blocks, show_progress
from uqviz.engine.statistics import get_statistic
from uqviz.engine.tree import map_datasets
from uqviz.engine.warning_classes import UnreliableWarning

binned_kernels = lazy_module("uqviz._array.binned")
sps = lazy_module("scipy.stats")

__all__ = ["size_dependence", "extrapolate", "ols_fit", "APPENDIX_B", "EXTRAPOLATION_METHODS"]

#: Pernot (2024c), Appendix B: (intercept, slope) of ref = intercept + slope * sqrt(N/M),
#: for D = N(0, 1) (NIG model) and D = t_s(6) (T6IG model).
APPENDIX_B = {
    "normal": {"ENCE": (0.0, 0.56), "ZMSE": (0.0, 1.14)},
    "t6": {"ENCE": (0.004, 0.779), "ZMSE": (0.006, 1.577)},
}
#: interval methods of the intercept in :func:`extrapolate`
EXTRAPOLATION_METHODS = ("bootstrap", "ols")

#: elements (samples x points) per Monte Carlo block
_BLOCK_ELEMENTS = 2**19


# --------------------------------------------------------------------------
# least squares
# --------------------------------------------------------------------------
def ols_fit(x, y, *, intercept=True, ci=0.95):
    """Ordinary least squares line ``y = a + b x`` (or ``y = b x``) with standard errors.

    Parameters
    ----------
    x, y : array_like, shape (n,)
        NaN pairs are dropped.
    intercept : bool, default True
    ci : float, default 0.95
        Level of the Student-t interval of the intercept.

    Returns
    -------
    dict
        ``slope``, ``slope_se``, ``intercept``, ``intercept_se``, ``intercept_lower``,
        ``intercept_upper``, ``dof``, ``sigma`` (residual sd).

    Examples
    --------
    >>> fit = ols_fit([1.0, 2.0, 3.0], [1.1, 2.0, 2.9])
    >>> round(fit["slope"], 6), round(fit["intercept"], 6)
    (0.9, 0.2)
    """
    ci = checks.probability("ci", ci)
    intercept = checks.boolean("intercept", intercept)
    x = np.asarray(x, dtype=float).ravel()
    y = np.asarray(y, dtype=float).ravel()
    keep = np.isfinite(x) & np.isfinite(y)
    x, y = x[keep], y[keep]
    k = 2 if intercept else 1
    if x.size <= k:
        raise ValueError(f"ols_fit: need more than {k} finite points, got {x.size}")
    design = np.column_stack([np.ones_like(x), x]) if intercept else x[:, None]
    coef, *_ = np.linalg.lstsq(design, y, rcond=None)
    resid = y - design @ coef
    dof = x.size - k
    s2 = float(resid @ resid) / dof
    cov = s2 * np.linalg.inv(design.T @ design)
    out = {"dof": dof, "sigma": float(np.sqrt(s2))}
    if intercept:
        a, b = float(coef[0]), float(coef[1])
        a_se, b_se = float(np.sqrt(cov[0, 0])), float(np.sqrt(cov[1, 1]))
        half = sps.t.ppf((1 + ci) / 2, dof) * a_se
        out.update(
            intercept=a,
            intercept_se=a_se,
            slope=b,
            slope_se=b_se,
            intercept_lower=a - half,
            intercept_upper=a + half,
        )
    else:
        out.update(
            intercept=0.0,
            intercept_se=np.nan,
            slope=float(coef[0]),
            slope_se=float(np.sqrt(cov[0, 0])),
            intercept_lower=np.nan,
            intercept_upper=np.nan,
        )
    return out


# --------------------------------------------------------------------------
# Appendix B: simulated references on a (nu, M, N) grid
# --------------------------------------------------------------------------
def _grid_block(rng, *, a, m, n_rep, gen, bounds, stats):
    """Statistics (n_stats, n_rep, n_binnings) of ``n_rep`` calibrated sets of ``m`` points."""
    v = np.sort(a / rng.standard_gamma(a, size=(n_rep, m)), axis=-1)
    z2 = gen.sample(rng, (n_rep, m)) ** 2
    needed = {c for s in stats for c in s.columns}
    cols = {"Z2": lambda: z2, "E2": lambda: v * z2, "V": lambda: v}
    pre = {c: curve_kernels.prefix_sums(cols[c]()) for c in ("Z2", "E2", "V") if c in needed}
    out = np.empty((len(stats), n_rep, len(bounds)))
    for j, b in enumerate(bounds):
        means = {c: curve_kernels.prefix_bin_means(p, b) for c, p in pre.items()}
        for i, s in enumerate(stats):
            out[i, :, j] = s.func({c: means[c] for c in s.columns})
    return out


def _as_passed(checked, passed):
    """A checked grid recorded in attrs as it was passed: one value or a list."""
    return checked[0].item() if np.ndim(passed) == 0 else checked.tolist()


#: the line fits of :func:`size_dependence`
FITS = ("proportional", "linear")


def size_dependence(
    *,
    statistics=("ENCE", "ZMSE"),
    sizes=(2000, 4000, 8000, 12000, 16000),
    n_bins=(10, 20, 30, 40, 50),
    nu=(3, 4, 5, 6, 12, 24),
    generative="normal",
    n_mc=5000,
    fits=FITS,
    ci=0.95,
    rng=None,
    client=None,
    progress=None,
):
    r"""Simulated ENCE/ZMSE references against size M, bin number N and uncertainty shape nu.

    Calibrated sets uE^2 ~ IG(nu/2, scale=nu/2), E = uE * eps, eps ~ D, and line
    fits of the references against sqrt(N/M) (Pernot (2024c), Appendix B).

    Parameters
    ----------
    statistics : str or sequence of str, default ("ENCE", "ZMSE")
        Binned statistics studied, among "ENCE", "ZMSE" and "UCE".
    sizes : int or sequence of int, default (2000, 4000, 8000, 12000, 16000)
        Numbers of points M of the sets.
    n_bins : int or sequence of int, default (10, 20, 30, 40, 50)
        Numbers of equal-count bins N.
    nu : float or sequence of float, default (3, 4, 5, 6, 12, 24)
        Shapes of the inverse-gamma distribution of uE^2 (> 0).
    generative : str, Generative or sequence of them, default "normal"
        Generative distributions D of the errors (``uqviz.generative``).
    n_mc : int, default 5000
        Synthetic datasets per (D, nu, M) cell, an int >= 2.
    fits : str or sequence of {"proportional", "linear"}, default both
        Line fits of the references against sqrt(N/M): through the origin, or with an intercept.
    ci : float, default 0.95
        Level of the interval of the fitted intercept, in (0, 1).
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
        On (``statistic``, ``generative``, ``nu``, ``size``, ``n_bins``):
        ``reference``, ``sample_sd``, ``reference_se``, coord ``x`` = sqrt(N/M). On
        (``statistic``, ``generative``, ``fit``): ``slope``, ``slope_se``,
        ``intercept``, ``intercept_se``, ``intercept_lower``, ``intercept_upper``,
        ``sigma``, ``paper_slope``, ``paper_intercept``.

    See Also
    --------
    uqviz.extrapolate : validation by extrapolation to zero bins.
    uqviz.simulated_reference : the reference of one dataset.
    uqviz.plots.reference.size_dependence : draws the references against sqrt(N/M).

    Notes
    -----
    For calibrated sets :math:`u_E^2 \sim \Gamma^{-1}(\nu/2, \nu/2)`, :math:`E = u_E \varepsilon`,
    :math:`\varepsilon \sim D`, the references of ENCE and ZMSE are fitted by

    .. math::

       \vartheta_{ref}(M, N) \approx a + b \sqrt{N/M}

    (``fits="linear"``; ``"proportional"``: :math:`a = 0`), :math:`M` points and :math:`N` bins
    (Pernot (2024c), Appendix B).

    The pseudo-errors of a calibrated set are :math:`E^*_i = u_{E_i} \varepsilon_i`,
    :math:`\varepsilon_i \sim D(0, 1)` (Pernot (2024c), eq. 1); over :math:`n_{mc}` such sets,

    .. math::

       \vartheta_{D,ref} = \frac{1}{n_{mc}}\sum_{k=1}^{n_{mc}} \vartheta(E^{*(k)}, u_E), \qquad
       u(\vartheta_{D,ref}) = \frac{\mathrm{sd}(\vartheta(E^{*(k)}, u_E))}{\sqrt{n_{mc}}}

    (Pernot (2024c), section II.D.2, steps 1-4).

    References
    ----------
    - Pernot (2024c), Appendix B: the sqrt(N/M) scaling of ENCE and ZMSE.

    Full entries: :doc:`/docs/references`.

    Examples
    --------
    >>> res = size_dependence(sizes=(1000, 4000), n_bins=(10, 20), nu=(6,), n_mc=50, rng=0)
    >>> round(float(res.slope.sel(statistic="ENCE", generative="normal", fit="proportional")), 1)
    0.6
    """
    progress = show_progress(progress)
    stats = [get_statistic(s) for s in checks.names("statistics", statistics)]
    for s in stats:
        if s.kind != "binned":
            raise ValueError(
                f"size_dependence: {s.name} is not a binned statistic (use ENCE, ZMSE or UCE)"
            )
    gens = as_generatives(generative)
    passed = {"sizes": sizes, "n_bins": n_bins}
    sizes = checks.grid("sizes", sizes, integer=True)
    n_bins = checks.grid("n_bins", n_bins, integer=True)
    nus = checks.grid("nu", nu, lower=0.0)
    fits = (
        (checks.choice("fits", fits, FITS),)
        if isinstance(fits, str)
        else checks.names("fits", fits, allowed=FITS)
    )
    ci = checks.probability("ci", ci)
    stream = checks.rng(rng)
    n_mc = checks.count("n_mc", n_mc, minimum=2)
    if np.any(sizes < n_bins.max()):
        raise ValueError(
            f"need 1 <= n_bins <= size; got sizes {sizes.tolist()} and n_bins {n_bins.tolist()}"
        )
    bounds = {m: [binned_kernels.equal_count_bounds(int(m), int(n)) for n in n_bins] for m in sizes}
    cells = [
        (g, k, j) for g in range(len(gens)) for k in range(nus.size) for j in range(sizes.size)
    ]
    cell_seeds = stream.integers(0, 2**63, size=len(cells))
    tasks = []
    for c, (g, k, j) in enumerate(cells):
        per_block = max(1, _BLOCK_ELEMENTS // int(sizes[j]))
        for b, start in enumerate(range(0, n_mc, per_block)):
            tasks.append((c, b, min(per_block, n_mc - start)))

    def run(t):
        c, b, n = tasks[t]
        g, k, j = cells[c]
        return _grid_block(
            block_rng(cell_seeds[c], b),
            a=nus[k] / 2.0,
            m=int(sizes[j]),
            n_rep=n,
            gen=gens[g],
            bounds=bounds[sizes[j]],
            stats=stats,
        )

    with progress_bar(len(tasks), desc="size dependence", progress=progress) as bar:
        results = run_blocks(run, len(tasks), client=client, progress=bar)
    shape = (len(stats), len(gens), nus.size, sizes.size, n_bins.size)
    mean, sd = np.empty(shape), np.empty(shape)
    for c, (g, k, j) in enumerate(cells):
        vals = np.concatenate([r for r, t in zip(results, tasks) if t[0] == c], axis=1)
        mean[:, g, k, j] = vals.mean(axis=1)
        sd[:, g, k, j] = vals.std(axis=1, ddof=1)
    x = np.sqrt(n_bins[None, :] / sizes[:, None])
    gen_names = [g.name for g in gens]
    keys = (
        "slope",
        "slope_se",
        "intercept",
        "intercept_se",
        "intercept_lower",
        "intercept_upper",
        "sigma",
    )
    table = {key: np.full((len(stats), len(gens), len(fits)), np.nan) for key in keys}
    xs = np.broadcast_to(x, shape[2:])
    for i in range(len(stats)):
        for g in range(len(gens)):
            for f, fit in enumerate(fits):
                if xs.size <= 1 + (fit == "linear"):
                    continue  # too few grid points: NaN
                res = ols_fit(xs, mean[i, g], intercept=fit == "linear", ci=ci)
                for key in keys:
                    table[key][i, g, f] = res[key]
    paper = np.full((2, len(stats), len(gens)), np.nan)
    for i, s in enumerate(stats):
        for g, name in enumerate(gen_names):
            if s.name in APPENDIX_B.get(name, {}):
                paper[:, i, g] = APPENDIX_B[name][s.name]
    dims = ("statistic", "generative", "nu", "size", "n_bins")
    fdims = ("statistic", "generative", "fit")
    out = xr.Dataset(
        {
            "reference": (dims, mean, {"long_name": "simulated reference value"}),
            "sample_sd": (dims, sd, {"long_name": "standard deviation of the simulated values"}),
            "reference_se": (
                dims,
                sd / np.sqrt(n_mc),
                {"long_name": "Monte Carlo standard error of the reference"},
            ),
            **{key: (fdims, val) for key, val in table.items()},
            "paper_intercept": (("statistic", "generative"), paper[0]),
            "paper_slope": (("statistic", "generative"), paper[1]),
        },
        coords={
            "statistic": [s.name for s in stats],
            "generative": gen_names,
            "nu": nus,
            "size": sizes,
            "n_bins": n_bins,
            "fit": list(fits),
            "x": (("size", "n_bins"), x, {"long_name": "sqrt(N/M)"}),
        },
        attrs={
            "statistics": [s.name for s in stats],
            "generative": gen_names[0] if isinstance(generative, (str, Generative)) else gen_names,
            "sizes": _as_passed(sizes, passed["sizes"]),
            "n_bins": _as_passed(n_bins, passed["n_bins"]),
            "nu": _as_passed(nus, nu),
            "n_mc": n_mc,
            "fits": list(fits),
            "ci": ci,
            "binning": "equal_count",
            "conditioning": "uE",
            "rng": seeds.seed_attr(rng),
            "model": "uE^2 ~ InverseGamma(nu/2, scale=nu/2); E = uE * eps, eps ~ D",
        },
    )
    out["size"].attrs["long_name"] = "dataset size M"
    out["n_bins"].attrs["long_name"] = "number of bins N"
    out["nu"].attrs["long_name"] = "shape of the uncertainty distribution"
    return describe(out)


# --------------------------------------------------------------------------
# Appendix C: extrapolation to zero bins
# --------------------------------------------------------------------------
def _reference_lines(references, statistic):
    """(names, intercepts, slopes) of the reference lines to draw."""
    if references is None:
        return [], [], []
    if isinstance(references, str):
        if references != "paper":
            raise ValueError(
                f"references must be 'paper', None or a size_dependence result, got {references!r}"
            )
        names, a, b = [], [], []
        for gen, table in APPENDIX_B.items():
            if statistic in table:
                names.append(gen)
                a.append(table[statistic][0])
                b.append(table[statistic][1])
        return names, a, b
    if isinstance(references, xr.Dataset):
        if statistic not in references["statistic"].values:
            raise ValueError(f"references: no {statistic} in the size_dependence result")
        if "fit" not in references.coords or "linear" not in references["fit"].values:
            raise ValueError("references: the size_dependence result has no 'linear' fit")
        sel = references.sel(statistic=statistic, fit="linear")
        names = [str(g) for g in sel["generative"].values]
        return names, sel["intercept"].values.tolist(), sel["slope"].values.tolist()
    if isinstance(references, Mapping):  # {name: (intercept, slope)}
        names = list(references)
        return (
            names,
            [float(references[n][0]) for n in names],
            [float(references[n][1]) for n in names],
        )
    raise TypeError(
        f"references must be 'paper', None, a Dataset or a mapping, got {type(references).__name__}"
    )


def _binned_curve(e, u, n_bins, stat):
    """Binned statistic for every number of bins (points sorted by uE on the last axis)."""
    cols = {"E2": lambda: e * e, "V": lambda: u * u, "Z2": lambda: (e / u) ** 2}
    pre = {c: curve_kernels.prefix_sums(cols[c]()) for c in stat.columns}
    m = e.shape[-1]
    out = np.empty(e.shape[:-1] + (len(n_bins),))
    for j, n in enumerate(n_bins):
        b = binned_kernels.equal_count_bounds(m, int(n))
        out[..., j] = stat.func({c: curve_kernels.prefix_bin_means(p, b) for c, p in pre.items()})
    return out


def _extrapolate_one(
    ds, *, rng, statistic, n_bins, min_count, fit_min_bins, method, boot, references
):
    """One dataset's extrapolation; ``boot``: the
    :class:`~uqviz.engine.options.BootstrapOptions` (``n_boot``, ``ci``, ``client``,
    ``progress``; the stream is ``rng``), ``references``: (names, intercepts, slopes)."""
    check_dataset(ds)
    warn_points_independent(ds, "size_dependence")
    stat = statistic
    ci, n_boot = boot.ci, boot.n_boot
    ref_names, ref_a, ref_b = references
    e, u = ds["E"].values.astype(float), ds["uE"].values.astype(float)
    m = e.size
    order = np.argsort(u, kind="stable")
    e, u = e[order], u[order]
    values = np.full(n_bins.size, np.nan)
    smallest = np.zeros(n_bins.size, dtype=np.int64)
    for i, n in enumerate(n_bins):
        if n > m:
            continue
        b = binned_kernels.equal_count_bounds(m, int(n))
        sizes = np.diff(b)
        smallest[i] = sizes.min()
        if smallest[i] < min_count:
            continue
        values[i] = stat.func(binned_kernels.binned_column_means(e, u, b[:-1], sizes, stat.columns))
    x = np.sqrt(n_bins / m)
    in_fit = np.isfinite(values) & (n_bins > fit_min_bins)
    if in_fit.sum() < 3:
        label = f" of {ds.attrs['name']!r}" if ds.attrs.get("name") else ""
        raise ValueError(
            f"n_bins: only {int(in_fit.sum())} of the bin numbers N > fit_min_bins "
            f"= {fit_min_bins} give a finite {stat.name} with at least min_count = "
            f"{min_count} points per bin in the data{label} (M = {m} points); "
            "need 3 for the fit"
        )
    fit = ols_fit(x[in_fit], values[in_fit], intercept=True, ci=ci)
    a = fit["intercept"]
    lo, hi = fit["intercept_lower"], fit["intercept_upper"]
    extra = {}
    if method == "bootstrap":
        # intercept = fixed linear combination of the curve values (OLS weights)
        design = np.column_stack([np.ones(int(in_fit.sum())), x[in_fit]])
        weights = np.linalg.pinv(design)[0]
        fit_bins = n_bins[in_fit]
        seed = seeds.kernel_seed(rng)
        per_block = max(1, _BLOCK_ELEMENTS // m)
        n_blocks = -(-n_boot // per_block)

        def block(bk):
            n = min(per_block, n_boot - bk * per_block)
            idx = np.sort(block_rng(seed, bk).integers(0, m, (n, m)), axis=-1)
            return _binned_curve(e[idx], u[idx], fit_bins, stat) @ weights

        with progress_bar(
            n_blocks, desc=f"{stat.name} extrapolation", progress=boot.progress
        ) as bar:
            reps = np.concatenate(run_blocks(block, n_blocks, client=boot.client, progress=bar))
        with np.errstate(invalid="ignore"):
            boot_se = float(reps.std(ddof=1))
        half = sps.norm.ppf((1 + ci) / 2) * boot_se
        lo, hi = a - half, a + half
        extra = {
            "intercept_boot_se": (
                (),
                boot_se,
                {"long_name": "bootstrap standard error of the intercept"},
            ),
            "intercept_boot_bias": ((), float(reps.mean()) - a),
        }
    if not (np.isfinite(lo) and np.isfinite(hi)):
        warnings.warn(
            f"{stat.name} extrapolation of {ds.attrs.get('name', 'the dataset')!r}: "
            "the interval of the intercept could not be computed (non-finite "
            "bootstrap values); valid = False",
            UnreliableWarning,
            stacklevel=4,
        )
    zeta, valid = verdict(a, 0.0, lo, hi)  # the intercept against 0
    return xr.Dataset(
        {
            "estimate": ("n_bins", values, {"long_name": stat.name}),
            "x": ("n_bins", x, {"long_name": "sqrt(N/M)"}),
            "smallest_bin": ("n_bins", smallest, {"long_name": "points in the smallest bin"}),
            "in_fit": ("n_bins", in_fit),
            "slope": ((), fit["slope"]),
            "slope_se": ((), fit["slope_se"]),
            "intercept": ((), a),
            "intercept_se": ((), fit["intercept_se"]),
            "intercept_lower": ((), lo),
            "intercept_upper": ((), hi),
            **extra,
            "zeta": ((), float(zeta)),
            "valid": ((), bool(valid)),
            "n_fit": ((), int(in_fit.sum())),
            "n_points": ((), m),
            "reference_intercept": ("generative", np.asarray(ref_a, dtype=float)),
            "reference_slope": ("generative", np.asarray(ref_b, dtype=float)),
        },
        coords={"n_bins": n_bins, "generative": list(ref_names)},
    )


def extrapolate(
    data,
    *,
    statistic="ZMSE",
    n_bins=range(10, 151),
    min_count=20,
    fit_min_bins=20,
    ci=0.95,
    method="bootstrap",
    n_boot=500,
    references="paper",
    rng=None,
    client=None,
    progress=None,
    engine=None,
):
    r"""Validate conditional calibration by extrapolating ENCE/ZMSE to zero bins
    (Pernot (2024c), App. C).

    The statistic for N bins is fitted by ``intercept + slope * sqrt(N/M)``; valid when
    0 lies in the interval of the intercept. No generative distribution is involved.

    Parameters
    ----------
    data : xarray.Dataset or xarray.DataTree
        Errors ``E`` and standard uncertainties ``uE`` on dim ``point`` (with any features), as
        made by :func:`uqviz.from_arrays` and the other constructors; a DataTree gives one
        result per dataset, on dim ``dataset``.
    statistic : {"ZMSE", "ENCE", "UCE"}, default "ZMSE"
        The binned statistic extrapolated.
    n_bins : int or sequence of int, default range(10, 151)
        Bin numbers N at which the statistic is computed.
    min_count : int, default 20
        Fewest points per bin; larger N give NaN.
    fit_min_bins : int, default 20
        Only N > fit_min_bins enter the fit.
    method : {"bootstrap", "ols"}, default "bootstrap"
        Interval of the intercept: paired bootstrap of the curve, or the OLS
        Student-t interval (too narrow: the curve values are not independent).
    n_boot : int, default 500
        Bootstrap replicates of the curve (``method="bootstrap"``), an int >= 2.
    references : "paper", None, mapping or Dataset, default "paper"
        Reference lines of calibrated data, kept on dim ``generative`` (the D they were
        simulated with): Pernot (2024c), Appendix B, the "linear" fits of
        :func:`size_dependence`, or ``{D name: (intercept, slope)}``.
    ci : float, default 0.95
        Confidence level of the interval of the intercept, in (0, 1).
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
        Resampling kernel of the bootstrap (docs/conventions.md). The bootstrap of the
        curve (``method="bootstrap"``) draws its resamples from numpy streams whatever the
        engine: checked and recorded, the numbers are the same for every engine.

    Returns
    -------
    xarray.Dataset
        On ``n_bins``: ``estimate``, ``x``, ``smallest_bin``, ``in_fit``; ``slope``,
        ``slope_se``, ``intercept``, ``intercept_se``, ``intercept_lower``,
        ``intercept_upper``, ``intercept_boot_se``, ``intercept_boot_bias``, ``zeta``,
        ``valid``, ``n_fit``, ``n_points``; ``reference_intercept``, ``reference_slope``.

    See Also
    --------
    uqviz.size_dependence : the reference lines of calibrated sets.
    uqviz.binned_errors : the statistic for one bin number.
    uqviz.plots.reference.extrapolation : draws the curve, fit and references.

    Notes
    -----
    The statistic for :math:`N` bins of :math:`M` points is fitted by least squares,

    .. math::

       \vartheta(N) = a + b \sqrt{N/M},

    over the :math:`N >` ``fit_min_bins``; calibrated data have :math:`a = 0`, so the data are
    valid when 0 lies in the interval of the intercept :math:`a`, and ``zeta`` is the
    zeta-score of :math:`a` against 0 (Pernot (2024c), eq. 20, and Appendix C).

    References
    ----------
    - Pernot (2024c), Appendix C: validation by extrapolation; Appendix B: the reference lines.

    Full entries: :doc:`/docs/references`.

    Examples
    --------
    >>> import uqviz
    >>> res = extrapolate(uqviz.synthetic.nig(3000, nu=6, rng=1), statistic="ENCE", method="ols")
    >>> int(res["n_fit"]), res["generative"].values.tolist()
    (130, ['normal', 't6'])
    """
    stat = get_statistic(statistic)
    if stat.kind != "binned":
        raise ValueError(
            f"extrapolate: {stat.name} is not a binned statistic (use ZMSE, ENCE or UCE)"
        )
    method = checks.choice("method", method, EXTRAPOLATION_METHODS)
    n_bins = checks.grid("n_bins", n_bins, integer=True)
    min_count = checks.count("min_count", min_count)
    fit_min_bins = checks.count("fit_min_bins", fit_min_bins, minimum=0)
    boot = BootstrapOptions.check(
        n_boot=n_boot,
        ci=ci,
        rng=rng,
        engine=engine,
        client=client,
        progress=show_progress(progress),
    )
    stream = checks.rng(rng)
    out = map_datasets(
        _extrapolate_one,
        data,
        rng=stream,
        statistic=stat,
        n_bins=n_bins,
        min_count=min_count,
        fit_min_bins=fit_min_bins,
        method=method,
        boot=boot,
        references=_reference_lines(references, stat.name),
    )
    out.attrs.update(
        {
            "statistic": stat.name,
            "n_bins": n_bins.tolist(),
            "min_count": min_count,
            "fit_min_bins": fit_min_bins,
            "ci": boot.ci,
            "method": method,
            "binning": "equal_count",
            "conditioning": "uE",
            "rng": boot.attrs["rng"],
        }
    )
    if method == "bootstrap":
        out.attrs["n_boot"] = boot.n_boot
        out.attrs["engine"] = boot.engine
    return out
