"""Confidence curves with oracle and probabilistic reference (ErrViewLib ``plotConfidence``).

A confidence curve is an error statistic (RMSE or MAE) of the data left after
removing the ``k`` % points with the largest uncertainties, for k = 0..99.
It tests whether the largest errors go with the largest uncertainties: it
should decrease. Two curves help to read it (Pernot, "Confidence curves for
UQ validation: probabilistic reference vs. oracle", arXiv:2206.15272):

- the **oracle**: the same statistic when the ``k`` % largest *absolute
  errors* are removed, the best curve any ranking could give; it is out of
  reach for a probabilistic link between errors and uncertainties;
- the **probabilistic reference**: the mean curve of calibrated synthetic
  errors ``E* = uE * eps``, ``eps ~ D``, drawn from the actual uncertainties,
  with a Monte Carlo band. The RMSE-based reference hardly depends on D; the
  MAE-based one does (002 sect. I and IV).

The curve of the data gets a bootstrap confidence band. Two scores from the
paper summarise the comparisons: AUCO, the area between the data and oracle
curves, and DFPR, the distance from the probabilistic reference, with
``dfpr_up95``, the 95th percentile of the same distance for the simulated
curves: a DFPR above it rejects the data as a draw from the reference.

Examples
--------
>>> import uqviz
>>> from uqviz import confidence_curve
>>> ds = uqviz.synthetic.nig(2000, nu=6, rng=0)
>>> cc = confidence_curve(ds, n_mc=100, n_boot=100, rng=1)
>>> cc.sizes["fraction"], bool(cc["valid"])
(100, True)
"""

from __future__ import annotations

import numpy as np
import xarray as xr

from uqviz._array.stats import hd_quantiles
from uqviz.engine.parallel import block_rng, run_blocks
from uqviz.engine.tree import map_datasets
from uqviz.data.model import check_dataset
from uqviz.data.generative import get_generative

__all__ = ["confidence_curve", "ERRORS"]

#: error statistics of a confidence curve
ERRORS = ("RMSE", "MAE")
_BLOCK = 64


def _n_removed(fractions, m):
    """floor(k M) points removed for fractions k (rounded first: 0.29 * 100 is 28.999...)."""
    return np.floor(np.round(np.asarray(fractions, dtype=float) * m, 9)).astype(np.int64)


def _curves(x, removed, error, normalize):
    """Statistic of x[..., r:] for every r in ``removed`` (x sorted by decreasing uE).

    ``x`` holds the errors (..., M); the curve is on the last axis.
    """
    v = x * x if error == "RMSE" else np.abs(x)
    suffix = np.cumsum(v[..., ::-1], axis=-1)[..., ::-1]  # suffix[i] = sum v[i:]
    m = x.shape[-1]
    out = suffix[..., removed] / (m - removed)
    if error == "RMSE":
        out = np.sqrt(out)
    if normalize:
        out = out / out[..., :1]
    return out


def _confidence_one(ds, *, rng, error, fractions, n_mc, generative, n_boot, ci, normalize,
                    client):
    check_dataset(ds)
    e, u = ds["E"].values.astype(float), ds["uE"].values.astype(float)
    m = e.size
    removed = _n_removed(fractions, m)
    order = np.argsort(-u, kind="stable")  # decreasing uE, ties in data order
    e, u = e[order], u[order]
    gen = get_generative(generative, ds)
    mc_seed, boot_seed = (int(r.integers(0, 2**63)) for r in np.random.default_rng(rng).spawn(2))
    probs = [(1 - ci) / 2, (1 + ci) / 2]

    estimate = _curves(e, removed, error, normalize)
    oracle = _curves(e[np.argsort(-np.abs(e), kind="stable")], removed, error, normalize)

    def mc_block(b):
        n = min(_BLOCK, n_mc - b * _BLOCK)
        return _curves(u * gen.sample(block_rng(mc_seed, b), (n, m)), removed, error,
                       normalize)

    ref = np.concatenate(run_blocks(mc_block, -(-n_mc // _BLOCK), client=client))
    ref_mean = ref.mean(axis=0)
    ref_q = hd_quantiles(ref.T, probs)

    out = {
        "estimate": ("fraction", estimate, {"long_name": f"{error} of the kept data"}),
        "oracle": ("fraction", oracle, {"long_name": "oracle (largest |E| removed first)"}),
        "reference": ("fraction", ref_mean, {"long_name": "probabilistic reference (mean)"}),
        "reference_ci_lower": ("fraction", ref_q[:, 0]),
        "reference_ci_upper": ("fraction", ref_q[:, 1]),
    }
    if n_boot:
        def boot_block(b):
            n = min(_BLOCK, n_boot - b * _BLOCK)
            idx = np.sort(block_rng(boot_seed, b).integers(0, m, (n, m)), axis=-1)
            return _curves(e[idx], removed, error, normalize)  # sorted idx keep the uE order

        boot = np.concatenate(run_blocks(boot_block, -(-n_boot // _BLOCK), client=client))
        q = hd_quantiles(boot.T, probs)
        out["ci_lower"] = ("fraction", q[:, 0])
        out["ci_upper"] = ("fraction", q[:, 1])
    dist = np.abs(ref - ref_mean).sum(axis=-1)
    dfpr = float(np.abs(estimate - ref_mean).sum())
    up95 = float(hd_quantiles(dist, [0.95])[0])
    out.update({
        "n_kept": ("fraction", m - removed),
        "uE_threshold": ("fraction", u[removed], {"long_name": "largest uE kept"}),
        "auco": ((), float(np.abs(estimate - oracle).sum()),
                 {"long_name": "area between the data and oracle curves"}),
        "dfpr": ((), dfpr, {"long_name": "distance from the probabilistic reference"}),
        "dfpr_up95": ((), up95, {"long_name": "95th percentile of the DFPR of calibrated sets"}),
        "valid": ((), dfpr <= up95),
    })
    return xr.Dataset(out, coords={"fraction": np.asarray(fractions, dtype=float)})


def confidence_curve(data, *, error="RMSE", fractions=None, n_mc=1000, generative="normal",
                     n_boot=1000, ci=0.95, normalize=False, rng=None, client=None):
    """Confidence curve of the data with its oracle and probabilistic reference.

    For every fraction k, the ``floor(k M)`` points with the largest uE are
    removed (ties in uE keep the data order) and ``error`` is computed on the
    rest. The oracle removes the largest |E| instead. The probabilistic
    reference is the mean curve of ``n_mc`` synthetic error sets
    ``E* = uE * eps`` (eps ~ D, same uE and same removal order), with a
    ``ci`` band of Harrell-Davis quantiles (as ErrViewLib). The data curve
    gets a ``ci`` band from ``n_boot`` paired bootstrap resamples (percentile
    interval, Harrell-Davis quantiles).

    Parameters
    ----------
    data : xarray.Dataset or xarray.DataTree
    error : {"RMSE", "MAE"}, default "RMSE"
        Error statistic. The RMSE reference hardly depends on D; the MAE one
        does.
    fractions : array_like, optional
        Fractions removed, in [0, 1); default ``np.arange(0, 1, 0.01)``.
    n_mc : int, default 1000
        Synthetic error sets for the reference curve.
    generative : str or Generative, default "normal"
        D of the reference ("normal", "t6", "uniform", "laplace", "empirical").
    n_boot : int, default 1000
        Bootstrap resamples of the data curve (0: no band).
    ci : float, default 0.95
        Level of both bands.
    normalize : bool, default False
        Divide every curve by its value at k = 0 (ErrViewLib's ``normalize``).
    rng : None, int or numpy.random.Generator
        Seed (SPEC 7); results do not depend on threads or dask workers.
    client : dask.distributed.Client, optional
        Run the Monte Carlo and bootstrap blocks on dask.

    Returns
    -------
    xarray.Dataset
        On dim ``fraction``: ``estimate`` (the data curve), ``ci_lower``,
        ``ci_upper``, ``oracle``, ``reference``, ``reference_ci_lower``,
        ``reference_ci_upper``, ``n_kept`` and ``uE_threshold`` (largest uE
        kept). Scalars: ``auco`` and ``dfpr`` (sums over the fractions of
        |data - oracle| and |data - reference|, ErrViewLib's AUCO and DFPR
        for the default grid), ``dfpr_up95`` and ``valid`` (dfpr <=
        dfpr_up95). A DataTree adds a ``dataset`` dim.

    Examples
    --------
    >>> import uqviz
    >>> from uqviz import confidence_curve
    >>> ds = uqviz.synthetic.nig(1000, nu=6, rng=0)
    >>> cc = confidence_curve(ds, error="MAE", n_mc=50, n_boot=0, rng=0)
    >>> bool(cc["oracle"].isel(fraction=50) < cc["estimate"].isel(fraction=50))
    True
    """
    if error not in ERRORS:
        raise ValueError(f"error must be one of {ERRORS}, got {error!r}")
    fractions = np.arange(0, 1, 0.01) if fractions is None else np.asarray(fractions, float)
    if fractions.ndim != 1 or fractions.size == 0 or np.any((fractions < 0) | (fractions >= 1)):
        raise ValueError("fractions must be a non-empty 1-D array of values in [0, 1)")
    n_mc, n_boot = int(n_mc), int(n_boot)
    if n_mc < 2:
        raise ValueError(f"n_mc must be >= 2, got {n_mc}")
    if n_boot < 0:
        raise ValueError(f"n_boot must be >= 0, got {n_boot}")
    gen = generative if generative == "empirical" else get_generative(generative)
    out = map_datasets(_confidence_one, data, rng=rng, error=error, fractions=fractions,
                       n_mc=n_mc, generative=gen, n_boot=n_boot, ci=ci, normalize=normalize,
                       client=client)
    out["fraction"].attrs["long_name"] = "fraction of the largest uE removed"
    out.attrs.update({"error": error, "n_mc": n_mc, "n_boot": n_boot, "ci": ci,
                      "generative": gen if isinstance(gen, str) else gen.name,
                      "normalize": int(normalize),
                      "method": "confidence curve (Pernot, arXiv:2206.15272)"})
    return out
