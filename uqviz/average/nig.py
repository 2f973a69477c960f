"""Heavy tails of uE^2, E^2 and Z^2: model references for the tailedness figures (004).

The robust skewness ``beta_GM`` and kurtosis ``kappa_CS`` of a dataset come
from :func:`uqviz.tailedness`; the shape parameters of the fitted models
from :func:`uqviz.distribution_shapes`. This module computes what the
figures of Pernot 2024 (004) compare them with:

- :func:`nig_skewness_curve`: ``beta_GM`` (and ``kappa_CS``) of large samples
  of the NIG model, ``uE^2 ~ IG(nu/2, nu/2)``, ``E = uE * N(0, 1)``, over a
  grid of ``nu``. ``beta_GM(E^2)`` against ``beta_GM(uE^2)`` is the black
  NIG curve of 004 Fig. 6; ``beta_GM`` against ``nu`` for ``E^2 ~ F(1, nu)``
  and ``uE^2 ~ IG(nu/2, nu/2)`` is 004 Fig. 3. ``Z^2`` is a squared normal
  variate whatever ``nu`` (``beta_GM`` about 0.64).
- :func:`nig_implied_shape`: the ``F(1, 2 nu)`` distribution of ``E^2``
  that the NIG model predicts from the Inverse-Gamma fit ``uE^2/s ~ IG(nu,
  nu)`` of the uncertainties (red curves of 004 Fig. 2).

Both return plain ``xarray.Dataset`` objects; :mod:`uqviz.tails` draws them.
"""

from __future__ import annotations

import numbers

import numpy as np
import xarray as xr

from uqviz._array import stats as ks
from uqviz.data.synthetic import draw_calibrated

__all__ = ["nig_skewness_curve", "nig_implied_shape", "DEFAULT_NU"]

#: default grid of the NIG curve, 2 <= nu <= 20 (004 Fig. 6)
DEFAULT_NU = (2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0, 12.0, 15.0, 20.0)

_VARIABLES = ("uE2", "E2", "Z2")
# Harrell-Davis probabilities: the median (beta_GM) and the four of kappa_CS
_PROBS = (0.5, 0.025, 0.25, 0.75, 0.975)


def _bits(x) -> int:
    return int(np.array(float(x), dtype=np.float64).view(np.uint64))


def _robust_shape(x, weights):
    """beta_GM and kappa_CS of each row of ``x`` with precomputed Harrell-Davis weights.

    Same estimators as :func:`uqviz._array.stats.beta_gm` and
    :func:`~uqviz._array.stats.kappa_cs` (the weights, costly for large
    samples, are computed once per call instead of once per statistic).
    """
    xs = np.sort(x, axis=-1)
    q = xs @ weights.T                      # (rows, 5)
    med = q[:, 0]
    beta = (x.mean(axis=-1) - med) / np.abs(x - med[:, None]).mean(axis=-1)
    kappa = (q[:, 4] - q[:, 1]) / (q[:, 3] - q[:, 2]) - ks.KAPPA_CS_NORMAL
    return beta, kappa


def nig_skewness_curve(nu=None, *, size=1_000_000, rng=None):
    """Robust skewness and kurtosis of uE^2, E^2 and Z^2 under the NIG model (004 Figs. 3, 6).

    For each ``nu``, one calibrated sample of ``size`` points is drawn from
    the NIG model, ``uE^2 ~ IG(nu/2, nu/2)`` and ``E = uE * eps`` with
    ``eps ~ N(0, 1)`` (so that ``E^2 ~ F(1, nu)`` and ``Z^2 = eps^2 ~
    chi^2_1``), and ``beta_GM`` and ``kappa_CS`` (Harrell-Davis quantiles,
    as :func:`uqviz.tailedness`) of ``uE^2``, ``E^2`` and ``Z^2`` are
    computed. ``beta_GM(E^2)`` against ``beta_GM(uE^2)`` traces the NIG
    curve of 004 Fig. 6: datasets far above it have heavier error tails than
    a normal generative distribution ``D`` can explain.

    These are *sample* statistics, as in the authors' figures (10^6 points):
    for ``nu <= 2`` the mean of ``uE^2`` is infinite and ``beta_GM(uE^2)``
    keeps growing with ``size``; for larger ``nu`` they are close to the
    population values (``beta_GM(Z^2)`` about 0.64 for a squared normal).

    Parameters
    ----------
    nu : sequence of float, optional
        Degrees of freedom (> 0); default :data:`DEFAULT_NU`, 2 to 20.
    size : int, default 1_000_000
        Points per sample.
    rng : None, int or numpy.random.Generator
        Seed. The sample of a given ``nu`` depends only on the seed and
        ``nu`` (not on the rest of the grid): its stream is
        ``SeedSequence(entropy, spawn_key=(bits(nu),))`` with ``entropy``
        drawn once from ``numpy.random.default_rng(rng)``.

    Returns
    -------
    xarray.Dataset
        On (``nu``, ``variable``) with variable = ["uE2", "E2", "Z2"]:
        ``beta_gm`` and ``kappa_cs``. Settings (model, size, rng) in attrs.

    Examples
    --------
    >>> from uqviz import nig_skewness_curve
    >>> curve = nig_skewness_curve([3.0, 20.0], size=20_000, rng=0)
    >>> curve["beta_gm"].dims
    ('nu', 'variable')
    >>> b = curve["beta_gm"].sel(variable="E2").values
    >>> bool(b[0] > b[1] > 0.6)          # heavier tails (smaller nu), larger skewness
    True
    """
    nu = np.atleast_1d(np.asarray(DEFAULT_NU if nu is None else nu, dtype=float))
    if nu.ndim != 1 or nu.size == 0:
        raise ValueError(f"nu must be a non-empty 1-d sequence, got shape {np.shape(nu)}")
    bad = ~np.isfinite(nu) | ~(nu > 0)
    if bad.any():
        raise ValueError(f"nu: values must be finite and > 0; {int(bad.sum())} value(s) are "
                         f"not: {nu[bad].tolist()}")
    if len(np.unique(nu)) != nu.size:
        raise ValueError(f"nu: values must be distinct, got {nu.tolist()}")
    if isinstance(size, (bool, np.bool_)) or not isinstance(size, numbers.Integral) or size < 10:
        raise ValueError(f"size must be an integer >= 10, got {size!r}")
    size = int(size)
    entropy = int(np.random.default_rng(rng).integers(2**63))
    weights = ks.harrell_davis_weights(size, _PROBS)
    beta = np.empty((nu.size, len(_VARIABLES)))
    kappa = np.empty_like(beta)
    for i, v in enumerate(nu):
        ss = np.random.SeedSequence(entropy, spawn_key=(_bits(v),))
        e, u = draw_calibrated(size, None, v / 2.0, v / 2.0, None,
                               np.random.Generator(np.random.PCG64(ss)))
        v2 = u * u
        e2 = e * e
        beta[i], kappa[i] = _robust_shape(np.stack([v2, e2, e2 / v2]), weights)
    out = xr.Dataset(
        {
            "beta_gm": (("nu", "variable"), beta,
                        {"long_name": "robust skewness beta_GM (Harrell-Davis median)"}),
            "kappa_cs": (("nu", "variable"), kappa,
                         {"long_name": "robust excess kurtosis kappa_CS (Harrell-Davis)"}),
        },
        coords={"nu": ("nu", nu, {"long_name": "NIG degrees of freedom nu"}),
                "variable": list(_VARIABLES)},
    )
    out.attrs.update({
        "model": "NIG: uE^2 ~ IG(nu/2, nu/2), E = uE * N(0, 1); E^2 ~ F(1, nu), Z^2 ~ chi2_1",
        "size": size,
        "rng": int(rng) if isinstance(rng, numbers.Integral) and not isinstance(rng, bool)
        else str(type(rng).__name__),
        "entropy": entropy,
        "seeding": "sample of nu: SeedSequence(entropy, spawn_key=(bits(nu),))",
        "reference": "Pernot 2024 (004) Figs. 3 and 6",
    })
    return out


def nig_implied_shape(shapes):
    """The F(1, 2 nu) law of E^2 implied by the Inverse-Gamma fit of uE^2 under the NIG model.

    If ``uE^2 / s ~ IG(nu, nu)`` (the fit of :func:`uqviz.fit_inverse_gamma`,
    004 eq. 17) and ``E = uE * N(0, 1)`` (calibrated, normal ``D``), then
    ``E^2 / s ~ F(1, 2 nu)`` (004 eqs. 18-19 with ``IG(nu'/2, nu'/2)``,
    ``nu' = 2 nu``). Comparing this with the direct F fit of ``E^2``
    (:func:`uqviz.fit_f`) tests the NIG model: 004 finds the fitted shape
    of ``E^2`` never close to twice that of ``uE^2`` (red curves of Fig. 2).

    Parameters
    ----------
    shapes : xarray.Dataset
        Output of :func:`uqviz.distribution_shapes` (dim ``variable``
        including ``"uE2"``) or of :func:`uqviz.fit_inverse_gamma`; with or
        without a ``dataset`` dim.

    Returns
    -------
    xarray.Dataset
        ``nu`` (= 2 nu of the IG fit) and ``scale`` (= its scale) of the
        implied ``E^2 / scale ~ F(1, nu)``, on the ``dataset`` dim if any;
        attrs ``variable = "E2"``, ``model``.

    Examples
    --------
    >>> import xarray as xr
    >>> from uqviz import nig_implied_shape
    >>> fit = xr.Dataset({"nu": 1.5, "scale": 0.04}, attrs={"variable": "uE2"})
    >>> implied = nig_implied_shape(fit)
    >>> float(implied["nu"]), float(implied["scale"])
    (3.0, 0.04)
    """
    if "variable" in shapes.dims:
        if "uE2" not in shapes["variable"].values:
            raise ValueError("shapes: no 'uE2' on dim 'variable'; use the output of "
                             "distribution_shapes or fit_inverse_gamma")
        fit = shapes.sel(variable="uE2")
    elif shapes.attrs.get("variable", "uE2") == "uE2":
        fit = shapes
    else:
        raise ValueError(f"shapes: a fit of {shapes.attrs.get('variable')!r}, not of uE2; use "
                         "the output of distribution_shapes or fit_inverse_gamma")
    for name in ("nu", "scale"):
        if name not in fit:
            raise ValueError(f"shapes: variable {name!r} is missing")
    fit = fit[["nu", "scale"]].reset_coords(drop=True)
    out = xr.Dataset({
        "nu": (2.0 * fit["nu"]).assign_attrs(
            long_name="NIG-implied shape of E^2 (2 x nu of uE^2)"),
        "scale": fit["scale"].copy().assign_attrs(
            long_name="scale of E^2 (= scale of uE^2)"),
    })
    out.attrs.update({"variable": "E2", "model": "E^2/scale ~ F(1, nu)",
                      "derivation": "NIG: uE^2/s ~ IG(n, n), E = uE N(0,1) => E^2/s ~ F(1, 2n)"})
    return out
