"""Heavy tails of uE^2, E^2 and Z^2: the NIG-model references of the tailedness figures.

- :func:`nig_skewness_curve`: ``beta_GM`` and ``kappa_CS`` of large NIG samples
  over a grid of ``nu`` (Pernot (2024b), Figs. 3 and 6);
- :func:`nig_implied_shape`: the ``F(1, 2 nu)`` law of ``E^2`` implied by the
  Inverse-Gamma fit of ``uE^2`` (Pernot (2024b), Fig. 2).

The estimators are those of :func:`uqviz.tailedness` (:mod:`uqviz._array.stats`).
"""

from __future__ import annotations

import numbers

import numpy as np
import xarray as xr

from uqviz._array import stats as ks
from uqviz.data.synthetic import draw_calibrated
from uqviz.engine import checks
from uqviz.engine.seeds import seed_attr

__all__ = ["nig_skewness_curve", "nig_implied_shape", "DEFAULT_NU"]

#: default grid of the NIG curve, 2 <= nu <= 20 (Pernot (2024b), Fig. 6)
DEFAULT_NU = (2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0, 12.0, 15.0, 20.0)

_VARIABLES = ("uE2", "E2", "Z2")


def _bits(x) -> int:
    return int(np.array(float(x), dtype=np.float64).view(np.uint64))


def nig_skewness_curve(*, nu=None, size=1_000_000, rng=None):
    """beta_GM and kappa_CS of uE^2, E^2, Z^2 under the NIG model (Pernot (2024b), Figs. 3, 6).

    For each ``nu``, one calibrated sample of ``size`` points is drawn from
    ``uE^2 ~ IG(nu/2, nu/2)``, ``E = uE * N(0, 1)`` (so ``E^2 ~ F(1, nu)``,
    ``Z^2 ~ chi^2_1``), and ``beta_GM``, ``kappa_CS`` of ``uE^2``, ``E^2``,
    ``Z^2`` are computed as by :func:`uqviz.tailedness`. These are sample
    statistics, as in the paper (10^6 points); for ``nu <= 2`` the mean of
    ``uE^2`` is infinite and ``beta_GM(uE^2)`` grows with ``size``.

    Parameters
    ----------
    nu : sequence of float, optional
        Degrees of freedom (> 0); default :data:`DEFAULT_NU`, 2 to 20.
    size : int, default 1_000_000
        Points per sample.
    rng : None, int, numpy.random.SeedSequence or numpy.random.Generator
        Random stream. The sample of a given ``nu`` depends only on ``rng``
        and ``nu``: ``SeedSequence(entropy, spawn_key=(bits(nu),))`` with
        ``entropy`` drawn once from ``rng``.

    Returns
    -------
    xarray.Dataset
        On (``nu``, ``variable``) with variable = ["uE2", "E2", "Z2"]:
        ``beta_gm`` and ``kappa_cs``. Settings (model, size, rng) in attrs.

    Examples
    --------
    >>> from uqviz import nig_skewness_curve
    >>> curve = nig_skewness_curve(nu=[3.0, 20.0], size=20_000, rng=0)
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
    entropy = int(checks.rng(rng).integers(2**63))
    beta = np.empty((nu.size, len(_VARIABLES)))
    kappa = np.empty_like(beta)
    for i, v in enumerate(nu):
        ss = np.random.SeedSequence(entropy, spawn_key=(_bits(v),))
        e, u = draw_calibrated(size, a=v / 2.0, b=v / 2.0,
                               rng=np.random.Generator(np.random.PCG64(ss)))
        v2 = u * u
        e2 = e * e
        x = np.stack([v2, e2, e2 / v2])
        beta[i], kappa[i] = ks.beta_gm(x), ks.kappa_cs(x)
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
        "rng": seed_attr(rng),
        "entropy": entropy,
        "seeding": "sample of nu: SeedSequence(entropy, spawn_key=(bits(nu),))",
        "reference": "Pernot (2024b), Figs. 3 and 6",
    })
    return out


def nig_implied_shape(shapes):
    """The F(1, 2 nu) law of E^2 implied by the Inverse-Gamma fit of uE^2 under the NIG model.

    If ``uE^2 / s ~ IG(nu, nu)`` (:func:`uqviz.fit_inverse_gamma`) and
    ``E = uE * N(0, 1)``, then ``E^2 / s ~ F(1, 2 nu)`` (Pernot (2024b),
    eqs. 17-19). Compare with the direct fit :func:`uqviz.fit_f` to test the
    NIG model (red curves of Pernot (2024b), Fig. 2); draw it with
    :func:`uqviz.plots.average.fit_histogram` (``implied=``).

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
