"""NIG-model references of the tailedness figures (Pernot (2024b), Figs. 2, 3 and 6)."""

from __future__ import annotations

import numbers

import numpy as np
import xarray as xr

from uqviz._array import stats as stats_kernels
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
    """beta_GM and kappa_CS of uE^2, E^2, Z^2 of NIG samples over ``nu`` (Pernot (2024b), Fig. 6).

    Parameters
    ----------
    nu : sequence of float, optional
        Degrees of freedom (> 0, distinct); default 2, 2.5, 3, 4, 5, 6, 8, 10, 12, 15, 20
        (``uqviz.average.nig.DEFAULT_NU``).
    size : int, default 1_000_000
    rng : see docs/conventions.md

    Returns
    -------
    xarray.Dataset
        ``beta_gm``, ``kappa_cs`` on (``nu``, ``variable``).

    Examples
    --------
    >>> curve = nig_skewness_curve(nu=[3.0, 20.0], size=20_000, rng=0)
    >>> b = curve["beta_gm"].sel(variable="E2").values
    >>> bool(b[0] > b[1] > 0.6)
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
        beta[i], kappa[i] = stats_kernels.beta_gm(x), stats_kernels.kappa_cs(x)
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
        "citation": "Pernot (2024b), Figs. 3 and 6",
    })
    return out


def nig_implied_shape(shapes):
    """The F(1, 2 nu) law of E^2 implied by an IG(nu, nu) fit of uE^2 (Pernot (2024b), eqs. 17-19).

    Parameters
    ----------
    shapes : xarray.Dataset
        Output of :func:`uqviz.distribution_shapes` or :func:`uqviz.fit_inverse_gamma`.

    Returns
    -------
    xarray.Dataset
        ``nu`` and ``scale`` of ``E^2/scale ~ F(1, nu)``.

    Examples
    --------
    >>> import xarray as xr
    >>> implied = nig_implied_shape(xr.Dataset({"nu": 1.5, "scale": 0.04}))
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
