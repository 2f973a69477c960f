"""Average calibration: bootstrap validation with zeta-scores, and the tailedness screen.

xarray layer over :mod:`uqviz.engine.bootstrap` and :mod:`uqviz._array.stats`.
Both functions accept a Dataset or a DataTree (result gains a ``dataset`` dim).
"""

from __future__ import annotations

import numpy as np
import xarray as xr

from uqviz._array.resample import default_engine
from uqviz._array import stats as ks
from uqviz._array.bca import zeta_score
from uqviz._array.bootstrap import BootstrapResult
from uqviz.engine.tree import map_datasets
from uqviz.engine.bootstrap import bootstrap_statistics
from uqviz.data.model import check_dataset
from uqviz.engine.statistics import Statistic, get_statistic, reference_value

__all__ = ["validate_average", "tailedness", "TAILEDNESS_THRESHOLDS"]

#: 004 Table II: beta_GM above which RCE (uE^2) or RCE and ZMS (E^2, Z^2) are unreliable.
TAILEDNESS_THRESHOLDS = {"uE2": 0.6, "E2": 0.8, "Z2": 0.8}


def _seed_attr(rng):
    return rng if isinstance(rng, (int, np.integer)) else str(type(rng).__name__)


def _excess_over_reference(stat):
    """The statistic minus its data-dependent reference, as a moment statistic.

    NLL's reference depends on the uncertainties; validating "for a given set
    of uncertainties" (004 sect. II B) means bootstrapping NLL - NLL_ref =
    (ZMS - 1)/2 and shifting the interval by the full-data reference.
    """
    ref = stat.reference

    def func(m, n):
        return stat.func(m, n) - ref.func(m, n)

    cols = tuple(sorted(set(stat.columns) | set(ref.columns)))
    return Statistic(f"{stat.name}-reference", func, "moments", cols, 0.0)


def _bootstrap(e, u, stats, **kw):
    """Paired bootstrap; statistics with a data-dependent reference are conditioned on uE."""
    todo = [_excess_over_reference(s) if isinstance(s.reference, Statistic) else s
            for s in stats]
    res = bootstrap_statistics(e, u, todo, **kw)
    out = {}
    for s, t in zip(stats, todo):
        r = res[t.name]
        if t is not s:
            shift = reference_value(s, e, u)
            r = BootstrapResult(r.estimate + shift, r.replicates + shift, r.lower + shift,
                                r.upper + shift, r.z0, r.accel)
        out[s.name] = r
    return out


def _validate_one(ds, *, rng, statistics, n_boot, ci, method, engine, return_replicates):
    check_dataset(ds)
    e, u = ds["E"].values, ds["uE"].values
    stats = [get_statistic(s) for s in statistics]
    res = _bootstrap(e, u, stats, n_boot=n_boot, ci=ci, method=method, rng=rng, engine=engine)
    names = [s.name for s in stats]
    est = np.array([res[s].estimate[0] for s in names])
    lower = np.array([res[s].lower[0] for s in names])
    upper = np.array([res[s].upper[0] for s in names])
    ref = np.array([reference_value(s, e, u) for s in names])
    zeta = zeta_score(est, ref, lower, upper)
    out = xr.Dataset(
        {
            "estimate": ("statistic", est),
            "reference": ("statistic", ref),
            "bias": ("statistic", np.array([res[s].bias[0] for s in names])),
            "se": ("statistic", np.array([res[s].se[0] for s in names])),
            "ci_lower": ("statistic", lower),
            "ci_upper": ("statistic", upper),
            "zeta": ("statistic", zeta),
            "valid": ("statistic", np.abs(zeta) <= 1.0),
            "n_points": ((), e.size),
        },
        coords={"statistic": names},
    )
    if method == "bca":
        out["z0"] = ("statistic", np.array([res[s].z0[0] for s in names]))
        out["acceleration"] = ("statistic", np.array([res[s].accel[0] for s in names]))
    if return_replicates:
        out["replicates"] = (("statistic", "replicate"),
                             np.stack([res[s].replicates[0] for s in names]))
    return out


def validate_average(data, *, statistics=("ZMS", "RCE"), n_boot=10_000, ci=0.95,
                     method="bca", rng=None, engine=None, return_replicates=False):
    """Validate average calibration by bootstrap confidence intervals and zeta-scores.

    For each statistic, the estimate on the full data, the bootstrap bias and
    standard error, the ``ci`` confidence interval (BCa by default) and the
    zeta-score against the reference value (004 eq. 14) are returned;
    ``valid`` is ``|zeta| <= 1``, equivalent to the reference lying inside the
    interval. Statistics without a predefined reference (e.g. CC) get NaN
    reference and zeta (see the simulated-reference workflow). A reference
    that depends on the data (NLL's, 002 eq. 16) is handled conditionally on
    the uncertainties: the excess over the reference is bootstrapped (paired)
    and shifted by its full-data value, so that validating NLL is validating
    ZMS, as the theory says.

    Parameters
    ----------
    data : xarray.Dataset or xarray.DataTree
        One dataset (dim ``point``, variables ``E``, ``uE``) or several.
    statistics : sequence of str, default ("ZMS", "RCE")
        Registered statistics (:func:`uqviz.list_statistics`).
    n_boot : int, default 10_000
        Bootstrap replicates, shared by all statistics (paired bootstrap).
    ci : float, default 0.95
        Confidence level.
    method : {"bca", "percentile", "basic"}, default "bca"
    rng : None, int or numpy.random.Generator
        Seed; the same seed gives the same numbers.
    engine : {"numba", "numpy"}, optional
        Resampling engine (default numba).
    return_replicates : bool, default False
        Also return the replicates on dim ``replicate``.

    Returns
    -------
    xarray.Dataset
        Dims (``dataset``,) ``statistic``; variables ``estimate``, ``reference``,
        ``bias``, ``se``, ``ci_lower``, ``ci_upper``, ``zeta``, ``valid``,
        ``n_points`` (and ``z0``, ``acceleration`` for BCa). Settings in attrs.

    Examples
    --------
    >>> import uqviz
    >>> ds = uqviz.synthetic.nig(2000, nu=6, rng=0)
    >>> res = uqviz.validate_average(ds, n_boot=2000, rng=1)
    >>> res["estimate"].sel(statistic="ZMS").item() > 0
    True
    """
    for s in statistics:
        get_statistic(s)
    if int(n_boot) < 2:
        raise ValueError(f"n_boot must be >= 2, got {n_boot}")
    out = map_datasets(_validate_one, data, rng=rng, statistics=tuple(statistics),
                       n_boot=int(n_boot), ci=ci, method=method, engine=engine,
                       return_replicates=return_replicates)
    out.attrs.update({"n_boot": int(n_boot), "ci": ci, "method": method,
                      "rng": _seed_attr(rng),
                      "engine": engine or default_engine(),
                      "zeta": "004 eq. 14: (est-ref)/(ci_upper-est) if est<=ref "
                              "else (est-ref)/(est-ci_lower)"})
    return out


def _tailedness_one(ds, *, rng=None):
    check_dataset(ds)
    e, u = ds["E"].values, ds["uE"].values
    x = np.stack([u**2, e**2, (e / u) ** 2])
    names = list(TAILEDNESS_THRESHOLDS)
    beta = ks.beta_gm(x)
    thr = np.array([TAILEDNESS_THRESHOLDS[n] for n in names])
    return xr.Dataset(
        {
            "beta_gm": ("variable", beta),
            "kappa_cs": ("variable", ks.kappa_cs(x)),
            "threshold": ("variable", thr),
            "exceeds": ("variable", beta > thr),
        },
        coords={"variable": names},
    )


def tailedness(data):
    """Tailedness screen of uE^2, E^2 and Z^2 (004 sect. IV A and Table II).

    Robust skewness beta_GM and kurtosis kappa_CS (Harrell-Davis quantiles) of
    the squared uncertainties, errors and z-scores, compared with the safety
    thresholds of 004 Table II (uE^2: 0.6, questions RCE; E^2 and Z^2: 0.8,
    question RCE and ZMS).

    Parameters
    ----------
    data : xarray.Dataset or xarray.DataTree

    Returns
    -------
    xarray.Dataset
        Dims (``dataset``,) ``variable`` = ["uE2", "E2", "Z2"]; variables
        ``beta_gm``, ``kappa_cs``, ``threshold``, ``exceeds``.

    Examples
    --------
    >>> import uqviz
    >>> t = uqviz.tailedness(uqviz.synthetic.nig(5000, nu=20, rng=0))
    >>> bool(t["exceeds"].sel(variable="uE2"))
    False
    """
    out = map_datasets(_tailedness_one, data)
    out.attrs.update({"thresholds": "004 Table II", "quantiles": "Harrell-Davis"})
    return out
