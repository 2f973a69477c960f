"""Conditional calibration: local statistics per bin (LZM, LZMS, LRCE, LZVar; Pernot (2023))."""

from __future__ import annotations

import contextlib
import warnings

import numpy as np
import xarray as xr
from scipy import stats as sps

from uqviz._array import binned as kbin
from uqviz._array import stats as ks
from uqviz._array.bca import verdict
from uqviz._array.binomial import wilson_interval
from uqviz.data.generative import get_generative
from uqviz.data.model import check_dataset
from uqviz.engine import checks, seeds
from uqviz.engine.binning import (SCHEMES, SMALL_BIN, bin_coords, compute_bins,
                                  conditioning_values, default_n_bins)
from uqviz.engine.statistics import get_statistic
from uqviz.engine.bootstrap import split_moments
from uqviz.engine.parallel import resolve_client
from uqviz.engine.tree import map_datasets
from uqviz.scores.coverage import generative_for

__all__ = ["local_calibration", "fraction_valid", "acf", "binned_errors",
           "local_streams", "LOCAL_STATISTICS", "BINNED_ERRORS", "SMALL_BIN", "HEAVY_TAIL_Z2"]

LOCAL_STATISTICS = ("ZMS", "ZM", "RCE", "ZVar")
COVERAGE_STATISTIC = "PICP"  # local interval coverage, with a binomial (Wilson) interval
BOOTSTRAP_METHODS = ("bca", "percentile", "basic")
ENGINES = ("numba", "numpy")
HEAVY_TAIL_Z2 = 0.8  # beta_GM(Z^2) limit of Pernot (2024b), Table II


def local_streams(rng):
    """The random streams of :func:`local_calibration` for one dataset: (ties Generator, bootstrap seed).

    Parameters
    ----------
    rng : see docs/conventions.md

    Returns
    -------
    tuple of (numpy.random.Generator, int)

    Examples
    --------
    >>> local_streams(0)[1] == local_streams(0)[1]
    True
    """
    ties_rng, boot_rng = checks.rng(rng).spawn(2)
    return ties_rng, seeds.kernel_seed(boot_rng)


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
        if name and name not in text:
            text = f"{text} (dataset {name!r})"
        if "tie" in text.lower() and "stratified" not in text:
            text += "; binning='stratified' puts each distinct value in one bin"
        warnings.warn(text, w.category, stacklevel=4)


def compute_local_bins(ds, conditioning, *, n_bins, binning, min_count=None, edges=None,
                       log=False, rng=None, min_size=2):
    """Conditioning name and bins of one dataset, warnings tagged with its name."""
    name, x = conditioning_values(ds, conditioning)
    n = _n_bins_for(x.size, n_bins) if binning in ("equal_count", "equal_width") else n_bins
    with _named_warnings(ds.attrs.get("name", "")):
        bins = compute_bins(x, n_bins=n, binning=binning, min_count=min_count, edges=edges,
                            log=log, rng=rng)
    if np.any(bins.sizes < min_size):
        raise ValueError(f"n_bins = {bins.n_bins} ({binning}): {int(np.sum(bins.sizes < min_size))} "
                         f"bins have fewer than {min_size} points; use fewer bins, or "
                         "binning='equal_count' or a min_count that merges small bins")
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


def _beta_gm_per_bin(z2, starts, sizes):
    return np.array([ks.beta_gm(z2[s:s + n]) for s, n in zip(starts, sizes)])


def local_coverage(e, u, starts, sizes, *, level, generative, ci):
    """PICP per contiguous group: share of ``|E| <= uE q_D((1 + level) / 2)`` and its interval.

    The interval is the Wilson score interval with continuity correction of
    :func:`uqviz._array.binomial.wilson_interval`, the method of :func:`fraction_valid`.

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
    >>> est, lo, hi = local_coverage(np.array([0.5, 3.0]), np.ones(2), np.array([0]),
    ...                              np.array([2]), level=0.95, generative=normal(), ci=0.95)
    >>> float(est[0])
    0.5
    """
    q = float(generative.ppf(0.5 + level / 2.0))
    with np.errstate(over="ignore"):
        inside = (np.abs(e / u) <= q).astype(np.int64)
    k = np.add.reduceat(inside, starts)
    lower, upper = wilson_interval(k, sizes, ci=ci, continuity=True)
    return k / sizes, lower, upper


def _local_one(ds, *, rng, statistic, conditioning, n_bins, binning, min_count, edges, log,
               n_boot, ci, method, engine, random_ties, level=None, generative="normal",
               client=None):
    check_dataset(ds)
    ties_rng, boot_seed = local_streams(rng)
    name, bins = compute_local_bins(ds, conditioning, n_bins=n_bins, binning=binning,
                                    min_count=min_count, edges=edges, log=log,
                                    rng=ties_rng if random_ties else None,
                                    min_size=1 if statistic == COVERAGE_STATISTIC else 2)
    e = np.asarray(ds["E"].values, dtype=float)[bins.order]
    u = np.asarray(ds["uE"].values, dtype=float)[bins.order]
    if statistic == COVERAGE_STATISTIC:
        est, lower, upper = local_coverage(e, u, bins.starts, bins.sizes, level=level,
                                           generative=generative_for(generative, ds), ci=ci)
        ref = level
    else:
        stat = get_statistic(statistic)
        ref = float(stat.reference)
        if method == "student-t":
            est, lower, upper = student_t_interval(e / u, bins.starts, bins.sizes, ci)
        else:
            r = split_moments(e, u, {statistic: (stat.func, stat.columns)}, n_boot=n_boot,
                              seed=boot_seed, ci=ci, method=method, starts=bins.starts,
                              sizes=bins.sizes, engine=engine, client=client)[statistic]
            est, lower, upper = r.estimate, r.lower, r.upper
    zeta, valid = verdict(est, ref, lower, upper)
    beta = _beta_gm_per_bin((e / u) ** 2, bins.starts, bins.sizes)
    # a binomial interval of a coverage is not narrowed by heavy tails
    heavy = (np.zeros(beta.shape, bool) if statistic == COVERAGE_STATISTIC
             else beta > HEAVY_TAIL_Z2)
    out = xr.Dataset(
        {
            "estimate": ("bin", est),
            "ci_lower": ("bin", lower),
            "ci_upper": ("bin", upper),
            "reference": ((), ref),
            "zeta": ("bin", zeta),
            "valid": ("bin", valid),
            "beta_gm_z2": ("bin", beta),
            "heavy_tail": ("bin", heavy),
        },
        coords=bin_coords(bins),
        attrs={"conditioning": name, **bins.attrs, "n_bins": bins.n_bins},
    )
    _warn_bins(out, ds.attrs.get("name", ""))
    return out


def _warn_bins(out, name):
    where = f" in {name!r}" if name else ""
    n = out.sizes["bin"]
    small = int((out["count"] < SMALL_BIN).sum())
    heavy = int(out["heavy_tail"].sum())
    no_interval = int((~np.isfinite(out["ci_lower"]) | ~np.isfinite(out["ci_upper"])).sum())
    if small:
        warnings.warn(f"{small} of {n} bins{where} have fewer than {SMALL_BIN} "
                      "points: their intervals are unreliable", UserWarning, stacklevel=4)
    if heavy:
        warnings.warn(f"{heavy} of {n} bins{where} have beta_GM(Z^2) > "
                      f"{HEAVY_TAIL_Z2} (heavy-tailed z-scores): their intervals may be too "
                      "narrow (flagged in 'heavy_tail')", UserWarning, stacklevel=4)
    if no_interval:
        warnings.warn(f"{no_interval} of {n} bins{where} have no interval (degenerate "
                      "bootstrap distribution or constant values): counted not valid",
                      UserWarning, stacklevel=4)


def _check_common(*, n_bins, binning, min_count, n_boot, ci, rng, engine):
    """Validate the options shared by the local analyses."""
    n_bins = checks.optional_count("n_bins", n_bins)
    checks.choice("binning", binning, SCHEMES)
    min_count = checks.optional_count("min_count", min_count)
    n_boot = checks.count("n_boot", n_boot, minimum=2)
    ci = checks.probability("ci", ci)
    checks.rng(rng)
    if engine is not None:
        checks.choice("engine", engine, ENGINES)
    return n_bins, min_count, n_boot, ci


def local_calibration(data, *, statistic="ZMS", conditioning="uE", n_bins=None,
                      binning="equal_count", min_count=None, edges=None, log=False,
                      n_boot=5000, ci=0.95, method=None, rng=None, engine=None,
                      random_ties=False, level=None, generative="normal", client=None):
    """Local calibration statistic per bin of a conditioning variable, with intervals.

    ``statistic="PICP"`` gives the local interval coverage: in each bin, the share of
    points with ``|E| <= uE q_D((1 + level) / 2)`` (the prediction interval
    coverage probability of :func:`uqviz.interval_coverage`), with the Wilson score
    interval with continuity correction (Newcombe (1998)) of :func:`fraction_valid`
    and the reference ``level``. A binomial interval needs no assumption on the tails
    of the z-scores: PICP is the heavy-tail-robust counterpart of LZMS (Pernot (2024b)).

    Parameters
    ----------
    data : xarray.Dataset or xarray.DataTree
    statistic : {"ZMS", "ZM", "RCE", "ZVar", "PICP"}
    conditioning : str or array_like
        ``"uE"`` (consistency), a feature (adaptivity), or one value per point.
    n_bins : int, optional
    binning, min_count, edges, log
        See :func:`uqviz.engine.binning.compute_bins` (``"stratified"`` for few-valued features).
    n_boot, ci, rng
        See docs/conventions.md.
    engine : {"numba", "numpy"}, optional
        Resampling kernel of the bootstrap (default numba).
    method : {"bca", "percentile", "basic", "student-t", "wilson"}, optional
        Default ``"student-t"`` for ZM (its only use), ``"wilson"`` for PICP (its only
        method; ``n_boot`` is then unused), ``"bca"`` otherwise.
    random_ties : bool, default False
        Randomise the order of tied conditioning values.
    client : None, "local" or dask.distributed.Client, default None
        Where the bootstrap runs, bins split over the workers (docs/conventions.md); the numbers do not depend on it.
    level : float, optional
        PICP only: nominal coverage of the central prediction interval, in (0, 1);
        default 0.95.
    generative : str or Generative, default "normal"
        PICP only: the distribution D of the intervals ``E in +-uE q_D((1+level)/2)``
        (``"t6"``: unit-variance Student-t with 6 degrees of freedom).

    Returns
    -------
    xarray.Dataset
        On ``bin``: ``estimate``, ``ci_lower``, ``ci_upper``, ``zeta``, ``valid``,
        ``beta_gm_z2``, ``heavy_tail`` (always False for PICP); ``reference``; coords
        ``bin_lower``, ``bin_upper``, ``bin_center``, ``count``. For PICP, ``attrs``
        also hold ``level``; ``method`` is ``"wilson"`` and ``n_boot`` is not used.

    Warns
    -----
    UserWarning
        Bins below 100 points, with beta_GM(Z^2) > 0.8, or without an interval.

    Examples
    --------
    >>> import uqviz
    >>> ds = uqviz.synthetic.default_example()
    >>> res = uqviz.local_calibration(ds, conditioning="X", n_bins=10, n_boot=1000, rng=0)
    >>> int(res.sizes["bin"])
    10
    >>> cov = uqviz.local_calibration(ds, statistic="PICP", level=0.9, n_bins=10)
    >>> float(cov["reference"]), cov.attrs["method"]
    (0.9, 'wilson')
    """
    checks.choice("statistic", statistic, LOCAL_STATISTICS + (COVERAGE_STATISTIC,))
    n_bins, min_count, n_boot, ci = _check_common(n_bins=n_bins, binning=binning,
                                                  min_count=min_count, n_boot=n_boot, ci=ci,
                                                  rng=rng, engine=engine)
    gen_name = get_generative(generative).name
    if statistic == COVERAGE_STATISTIC:
        level = 0.95 if level is None else checks.probability("level", level)
        method = "wilson" if method is None else checks.choice("method", method, ("wilson",))
    else:
        if level is not None:
            raise ValueError(f"level applies to statistic='PICP' only, got level={level!r} "
                             f"with statistic={statistic!r}")
        if gen_name != "normal":
            raise ValueError(f"generative applies to statistic='PICP' only, got "
                             f"generative={gen_name!r} with statistic={statistic!r}")
        if method is None:
            method = "student-t" if statistic == "ZM" else "bca"
        checks.choice("method", method, ("student-t",) + BOOTSTRAP_METHODS
                      if statistic == "ZM" else BOOTSTRAP_METHODS)
    if edges is not None:
        edges = checks.finite_array("edges", edges, ndim=1)
    log = checks.boolean("log", log)
    random_ties = checks.boolean("random_ties", random_ties)
    out = map_datasets(_local_one, data, rng=checks.rng(rng), statistic=statistic,
                       conditioning=conditioning, n_bins=n_bins, binning=binning,
                       min_count=min_count, edges=edges, log=log, n_boot=n_boot, ci=ci,
                       method=method, engine=engine, random_ties=random_ties, level=level,
                       generative=generative, client=resolve_client(client))
    out.attrs.update({"statistic": statistic, "n_boot": n_boot, "ci": ci, "method": method,
                      "binning": binning, "rng": seeds.seed_attr(rng),
                      "random_ties": int(random_ties), "generative": gen_name})
    if level is not None:
        out.attrs["level"] = level
    if n_bins is not None:
        out.attrs["n_bins"] = n_bins
    return out


# ---------------------------------------------------------------------------
# validation metric, serial structure, binned calibration errors
# ---------------------------------------------------------------------------
def fraction_valid(local_result, *, ci=0.95, nominal=None, method="wilson"):
    """Fraction f_v of bins whose interval contains the reference (Pernot (2023)).

    Parameters
    ----------
    local_result : xarray.Dataset
        Output of :func:`local_calibration`.
    ci : float, default 0.95
        Level of the Wilson interval with continuity correction (Newcombe (1998)).
    nominal : float, optional
        Target coverage; default the ``ci`` of the local intervals.
    method : {"wilson"}

    Returns
    -------
    xarray.Dataset
        ``estimate``, ``ci_lower``, ``ci_upper``, ``n_valid``, ``n_bins``, ``nominal_inside``.

    Examples
    --------
    >>> import uqviz
    >>> loc = uqviz.local_calibration(uqviz.synthetic.nig(4000, nu=10, rng=0), n_bins=20,
    ...                               n_boot=1000, rng=1)
    >>> 0.0 <= float(uqviz.fraction_valid(loc).estimate) <= 1.0
    True
    """
    ci = checks.probability("ci", ci)
    checks.choice("method", method, ("wilson",))
    if "valid" not in getattr(local_result, "data_vars", ()):
        raise TypeError("local_result must be a result of local_calibration (a Dataset with "
                        "'valid' on dim 'bin')")
    nominal = local_result.attrs.get("ci", 0.95) if nominal is None else nominal
    nominal = checks.probability("nominal", nominal)
    valid = local_result["valid"]
    present = local_result["count"].notnull() if "count" in local_result.coords else True
    n_valid = (valid.where(present, False)).sum("bin")
    n_bins = xr.ones_like(valid, dtype=int).where(present, 0).sum("bin")
    lower, upper = wilson_interval(n_valid.values, n_bins.values, ci=ci, continuity=True)
    dims = n_valid.dims
    return xr.Dataset(
        {
            "estimate": (dims, n_valid.values / n_bins.values),
            "ci_lower": (dims, lower),
            "ci_upper": (dims, upper),
            "n_valid": n_valid,
            "n_bins": n_bins,
            "nominal_inside": (dims, (lower <= nominal) & (nominal <= upper)),
        },
        attrs={"nominal": nominal, "ci": ci, "method": method,
               **{k: v for k, v in local_result.attrs.items()
                  if k in ("statistic", "conditioning", "binning")}},
    )


def _acf_one(values, max_lag, where):
    """ACF of one per-bin series (NaN bins dropped): ``(acf, band, n)``."""
    x = values[np.isfinite(values)]
    n = x.size
    if n < 2:
        raise ValueError(f"local_result{where}: the autocorrelation needs at least 2 bins with "
                         f"a finite estimate, got {n}")
    if max_lag is None:
        max_lag = int(min(n - 1, np.floor(10 * np.log10(n))))
    elif max_lag >= n:
        raise ValueError(f"max_lag must be between 1 and n_bins - 1 ({n - 1}{where}), "
                         f"got {max_lag}")
    return kbin.acf(x, max_lag), 1.96 / np.sqrt(n), n


def acf(local_result, *, max_lag=None, variable="estimate"):
    """Autocorrelation of the per-bin series, with the +-1.96/sqrt(n) white-noise band.

    Parameters
    ----------
    local_result : xarray.Dataset
        Output of :func:`local_calibration` (one ACF per ``dataset`` if any).
    max_lag : int, optional
        Default min(n_bins - 1, 10 log10(n_bins)), as R's ``acf``.
    variable : str, default "estimate"

    Returns
    -------
    xarray.Dataset
        ``acf`` on dim ``lag``, ``band``; with ``dataset``, also ``n_bins``.

    Examples
    --------
    >>> import numpy as np, xarray as xr
    >>> float(acf(xr.Dataset({"estimate": ("bin", np.arange(10.0))}), max_lag=1).acf[0])
    1.0
    """
    if not isinstance(local_result, xr.Dataset):
        raise TypeError(f"local_result: expected the Dataset of local_calibration, got "
                        f"{type(local_result).__name__}")
    if not isinstance(variable, str):
        raise TypeError(f"variable: expected a variable name (str), got {variable!r}")
    if variable not in local_result.data_vars:
        raise ValueError(f"variable {variable!r} is not in local_result")
    series = local_result[variable]
    max_lag = checks.optional_count("max_lag", max_lag, minimum=1)
    if "dataset" not in series.dims:
        if series.dims != ("bin",):
            raise ValueError(f"local_result: {variable} must have dims ('bin',), got "
                             f"{series.dims}")
        r, band, n = _acf_one(np.asarray(series.values, dtype=float), max_lag, "")
        return xr.Dataset({"acf": ("lag", r), "band": ((), band)},
                          coords={"lag": np.arange(r.size)},
                          attrs={"variable": variable, "n_bins": n})
    series = series.transpose("dataset", ...)
    if series.dims != ("dataset", "bin"):
        raise ValueError(f"local_result: {variable} must have dims ('dataset', 'bin'), got "
                         f"{series.dims}")
    names = series["dataset"].values
    parts = [_acf_one(np.asarray(series.sel(dataset=nm).values, dtype=float), max_lag,
                      f" (dataset {str(nm)!r})") for nm in names]
    n_lag = max(r.size for r, _, _ in parts)
    table = np.full((len(parts), n_lag), np.nan)
    for i, (r, _, _) in enumerate(parts):
        table[i, :r.size] = r
    return xr.Dataset({"acf": (("dataset", "lag"), table),
                       "band": ("dataset", [b for _, b, _ in parts]),
                       "n_bins": ("dataset", [n for _, _, n in parts])},
                      coords={"dataset": names, "lag": np.arange(n_lag)},
                      attrs={"variable": variable})


BINNED_ERRORS = tuple(kbin.BINNED)


def binned_bins(ds, *, conditioning="uE", n_bins=20, binning="equal_count", **kw):
    """Bins used by the binned calibration errors (shared with simulated references)."""
    _, x = conditioning_values(ds, conditioning)
    return compute_bins(x, n_bins=n_bins, binning=binning, **kw)


def _binned_one(ds, *, rng=None, statistics, conditioning, n_bins, binning):
    check_dataset(ds)
    _, bins = compute_local_bins(ds, conditioning, n_bins=n_bins, binning=binning, min_size=1)
    e = ds["E"].values[bins.order]
    u = ds["uE"].values[bins.order]
    values = [kbin.BINNED[s](e, u, bins.starts, bins.sizes) for s in statistics]
    return xr.Dataset({"estimate": ("statistic", np.array(values, dtype=float)),
                       "n_bins": ((), bins.n_bins)},
                      coords={"statistic": list(statistics)})


def binned_errors(data, *, statistics=BINNED_ERRORS, conditioning="uE", n_bins=20,
                  binning="equal_count"):
    """Binned calibration errors ENCE, UCE and ZMSE on the same bins (Pernot (2024c), eq. 17).

    Parameters
    ----------
    data : xarray.Dataset or xarray.DataTree
    statistics : sequence of {"ENCE", "UCE", "ZMSE"}
    conditioning : str, default "uE"
    n_bins : int, default 20
    binning : str, default "equal_count"

    Returns
    -------
    xarray.Dataset
        ``estimate`` on ``statistic``, ``n_bins``.

    Examples
    --------
    >>> import uqviz
    >>> uqviz.binned_errors(uqviz.synthetic.nig(2000, nu=8, rng=0)).statistic.values.tolist()
    ['ENCE', 'UCE', 'ZMSE']
    """
    statistics = checks.names("statistics", statistics)
    unknown = [s for s in statistics if s not in kbin.BINNED]
    if unknown:
        raise ValueError(f"statistics: unknown binned statistic(s) {unknown}; "
                         f"known: {', '.join(kbin.BINNED)}")
    n_bins = checks.count("n_bins", n_bins)
    checks.choice("binning", binning, SCHEMES)
    out = map_datasets(_binned_one, data, statistics=statistics, conditioning=conditioning,
                       n_bins=n_bins, binning=binning)
    out.attrs.update({"conditioning": conditioning if isinstance(conditioning, str)
                      else "array", "binning": binning, "n_bins": n_bins,
                      "statistics": list(statistics)})
    return out
