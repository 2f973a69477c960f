"""Distribution shapes of uE^2, E^2, Z^2 (Pernot (2024b), Table I) and Z (Pernot (2024c)).

``uE^2`` is fitted by a scaled Inverse-Gamma and ``E^2``, ``Z^2`` by a scaled
``F(1, nu)``, by minimum Kolmogorov-Smirnov distance (as
``fitdistrplus::mgedist(gof="KS")``); ``Z`` by a shifted, scaled Student t
(maximum likelihood). The smaller ``nu``, the heavier the upper tail.

Models (``scale`` multiplies the standardised variable):

- ``uE^2 / scale ~ InvGamma(nu, nu)``, i.e. ``scipy.stats.invgamma(a=nu, scale=nu*scale)``;
- ``E^2 / scale ~ F(1, nu)``, ``Z^2 / scale ~ F(1, nu)``, i.e.
  ``scipy.stats.f(1, nu, scale=scale)``;
- ``(Z - loc) / scale ~ t(df)``, i.e. ``scipy.stats.t(df, loc, scale)``.

The ``nu`` of ``uE^2`` is the shape of the IG itself (the NIG model's
``IG(nu/2, nu/2)`` gives ``E^2 ~ F(1, nu)``), as in Pernot (2024b), Table I.
"""

from __future__ import annotations

import numpy as np
import xarray as xr

from uqviz._array import fits as kf
from uqviz.engine.tree import map_datasets
from uqviz.data.model import check_dataset

__all__ = ["distribution_shapes", "fit_f", "fit_inverse_gamma", "fit_student_t", "SHAPE_VARIABLES"]

#: variable -> (model, how it is computed from E and uE)
SHAPE_VARIABLES = {
    "uE2": ("invgamma", lambda e, u: u * u),
    "E2": ("f1", lambda e, u: e * e),
    "Z2": ("f1", lambda e, u: (e / u) ** 2),
}

_MODEL_TEXT = {
    "uE2": "uE^2/scale ~ InvGamma(nu, nu)",
    "E2": "E^2/scale ~ F(1, nu)",
    "Z2": "Z^2/scale ~ F(1, nu)",
}

_METHOD = ("minimum Kolmogorov-Smirnov distance (maximum goodness-of-fit estimation, "
           "as fitdistrplus::mgedist(gof='KS')); exact KS distance; Nelder-Mead on "
           "(ln nu, ln scale) from a grid")


_SOURCES = {"uE2": "uE", "E2": "E", "Z2": "E/uE", "Z": "E/uE"}


def _columns(ds):
    """E and uE as float64 (a checked dataset may hold float32, int or object columns)."""
    return (np.asarray(ds["E"].values, dtype=np.float64),
            np.asarray(ds["uE"].values, dtype=np.float64))


def _sample(e, u, variable, minimum):
    """The values of ``variable`` (uE2, E2, Z2, Z) to fit; the errors name the data."""
    if e.size < minimum:
        raise ValueError(f"data: fitting {variable} needs at least {minimum} points, got "
                         f"{e.size}")
    with np.errstate(over="ignore", under="ignore", invalid="ignore", divide="ignore"):
        x = e / u if variable == "Z" else SHAPE_VARIABLES[variable][1](e, u)
    n_bad = int(np.count_nonzero(~np.isfinite(x)))
    if n_bad:
        raise ValueError(f"data: {variable} = f({_SOURCES[variable]}) overflows (inf) at "
                         f"{n_bad} of {x.size} points; rescale E and uE")
    if variable != "Z" and not np.any(x > 0):
        raise ValueError(f"data: {variable} is zero at all {x.size} points "
                         f"({_SOURCES[variable]} = 0 or underflows); nothing to fit")
    return x


def _fit_vars(ds, variables):
    check_dataset(ds)
    e, u = _columns(ds)
    out = {"nu": [], "scale": [], "ks_distance": []}
    for v in variables:
        model = SHAPE_VARIABLES[v][0]
        res = kf.fit_min_ks(_sample(e, u, v, 2), model)
        for k in out:
            out[k].append(res[k])
    return {k: np.asarray(val, dtype=float) for k, val in out.items()}


def _attrs_var(name):
    return {
        "nu": {"long_name": "shape parameter (degrees of freedom) nu", "units": ""},
        "scale": {"long_name": "scale of the standardised variable", "units": ""},
        "ks_distance": {"long_name": "Kolmogorov-Smirnov distance at the optimum", "units": ""},
    }[name]


def _one_variable(ds, *, rng=None, variable):
    r = _fit_vars(ds, [variable])
    out = xr.Dataset({k: ((), v[0], _attrs_var(k)) for k, v in r.items()})
    out["n_points"] = ((), ds.sizes["point"])
    return out


def _finish(out, variable):
    out.attrs.update({"variable": variable, "model": _MODEL_TEXT[variable],
                      "scipy_model": SHAPE_VARIABLES[variable][0], "method": _METHOD})
    return out


def fit_inverse_gamma(data):
    """Fit the squared uncertainties by a scaled Inverse-Gamma, ``uE^2/scale ~ IG(nu, nu)``.

    Minimum Kolmogorov-Smirnov distance estimation (Pernot (2024b), eq. 17,
    Table I), with ``scale = sigma^2``: ``uE^2 ~
    scipy.stats.invgamma(a=nu, scale=nu*scale)``.

    Parameters
    ----------
    data : xarray.Dataset or xarray.DataTree
        One dataset (dim ``point``, variables ``E``, ``uE``) or several.

    Returns
    -------
    xarray.Dataset
        Scalars (or dim ``dataset``) ``nu``, ``scale``, ``ks_distance`` (the
        KS statistic at the optimum) and ``n_points``; the model in attrs.

    Examples
    --------
    >>> import numpy as np, uqviz
    >>> from uqviz import fit_inverse_gamma
    >>> rng = np.random.default_rng(0)
    >>> u = np.sqrt(0.04 * 4.0 / rng.gamma(4.0, 1.0, 5000))  # uE^2/0.04 ~ IG(4, 4)
    >>> fit = fit_inverse_gamma(uqviz.from_arrays(rng.normal(0, u), u))
    >>> round(float(fit.nu)), round(float(fit.scale), 2)
    (4, 0.04)
    """
    return _finish(map_datasets(_one_variable, data, variable="uE2"), "uE2")


def fit_f(data, *, variable="E2"):
    """Fit E^2 or Z^2 by a scaled Fisher-Snedecor distribution, ``X/scale ~ F(1, nu)``.

    Minimum Kolmogorov-Smirnov distance estimation (Pernot (2024b), eq. 19,
    Table I): ``X ~ scipy.stats.f(1, nu, scale=scale)``.

    Parameters
    ----------
    data : xarray.Dataset or xarray.DataTree
        One dataset (dim ``point``, variables ``E``, ``uE``) or several.
    variable : {"E2", "Z2"}, default "E2"
        Squared errors ``E^2`` or squared z-scores ``(E/uE)^2``.

    Returns
    -------
    xarray.Dataset
        Scalars (or dim ``dataset``) ``nu``, ``scale``, ``ks_distance`` and
        ``n_points``; the model in attrs.

    Examples
    --------
    >>> import numpy as np, uqviz
    >>> from uqviz import fit_f
    >>> rng = np.random.default_rng(1)
    >>> e = 0.2 * rng.standard_t(5.0, 5000)          # E^2/0.04 ~ F(1, 5)
    >>> fit = fit_f(uqviz.from_arrays(e, np.full(5000, 0.2)), variable="E2")
    >>> bool(abs(fit.nu - 5) < 1.5), round(float(fit.scale), 2)  # minimum-KS is noisier than ML
    (True, 0.04)
    """
    if variable not in ("E2", "Z2"):
        raise ValueError(f"variable must be 'E2' or 'Z2', got {variable!r}")
    return _finish(map_datasets(_one_variable, data, variable=variable), variable)


def _student_t_one(ds, *, rng=None):
    check_dataset(ds)
    z = _sample(*_columns(ds), "Z", 3)
    r = kf.fit_student_t(z)
    return xr.Dataset({
        "df": ((), r["df"], {"long_name": "degrees of freedom nu_Z"}),
        "loc": ((), r["loc"], {"long_name": "location of the fitted t"}),
        "scale": ((), r["scale"], {"long_name": "scale of the fitted t"}),
        "loglik": ((), r["loglik"], {"long_name": "maximised log-likelihood"}),
        "ks_distance": ((), r["ks_distance"], {"long_name": "KS distance of the fitted t"}),
        "mean": ((), float(np.mean(z)), {"long_name": "sample mean of Z"}),
        "sd": ((), float(np.std(z, ddof=1)),
               {"long_name": "sample standard deviation of Z, ddof=1"}),
        "n_points": ((), z.size),
    })


def fit_student_t(data):
    """Fit the z-scores by a scaled-and-shifted Student t, by maximum likelihood.

    ``(Z - loc)/scale ~ t(df)`` with ``Z = E/uE`` (Pernot (2024c), Table II);
    the shift accounts for a possible bias. The sample mean and standard
    deviation of Z are also returned.

    Parameters
    ----------
    data : xarray.Dataset or xarray.DataTree

    Returns
    -------
    xarray.Dataset
        Scalars (or dim ``dataset``) ``df``, ``loc``, ``scale``, ``loglik``,
        ``ks_distance``, ``mean``, ``sd``, ``n_points``.

    Examples
    --------
    >>> import numpy as np, uqviz
    >>> from uqviz import fit_student_t
    >>> rng = np.random.default_rng(2)
    >>> z = 0.1 + 0.8 * rng.standard_t(4.0, 5000)
    >>> fit = fit_student_t(uqviz.from_arrays(z, np.ones(5000)))
    >>> round(float(fit.df)), round(float(fit["loc"]), 1), round(float(fit.scale), 1)
    (4, 0.1, 0.8)
    """
    out = map_datasets(_student_t_one, data)
    out.attrs.update({"variable": "Z", "model": "(Z - loc)/scale ~ t(df)",
                      "scipy_model": "t", "method": "maximum likelihood (scipy.stats.t.fit)"})
    return out


def _shapes_one(ds, *, rng=None):
    names = list(SHAPE_VARIABLES)
    r = _fit_vars(ds, names)
    out = xr.Dataset({k: ("variable", v, _attrs_var(k)) for k, v in r.items()},
                     coords={"variable": names,
                             "model": ("variable", [SHAPE_VARIABLES[n][0] for n in names])})
    out["n_points"] = ((), ds.sizes["point"])
    return out


def distribution_shapes(data):
    """Shape parameters of uE^2 (Inverse-Gamma), E^2 and Z^2 (F(1, nu)) (Pernot (2024b), Table I).

    Each variable is fitted by minimum Kolmogorov-Smirnov distance (see
    :func:`fit_inverse_gamma` and :func:`fit_f`). Small ``nu`` flags a heavy
    upper tail, which makes RCE (uE^2, E^2) or ZMS (Z^2) unreliable
    (Pernot (2024b), sect. IV); :func:`uqviz.tailedness` gives the model-free screen.

    Parameters
    ----------
    data : xarray.Dataset or xarray.DataTree
        One dataset (dim ``point``, variables ``E``, ``uE``) or several.

    Returns
    -------
    xarray.Dataset
        Dims (``dataset``,) ``variable`` = ["uE2", "E2", "Z2"]; variables
        ``nu``, ``scale``, ``ks_distance`` (KS statistic at the optimum),
        ``n_points``; coordinate ``model`` (``"invgamma"`` or ``"f1"``) on
        ``variable``, and the model formulas in attrs (``model_uE2``,
        ``model_E2``, ``model_Z2``).

    Examples
    --------
    >>> import uqviz
    >>> from uqviz import distribution_shapes
    >>> shp = distribution_shapes(uqviz.synthetic.nig(3000, nu=6, rng=0))
    >>> shp["variable"].values.tolist(), shp["model"].values.tolist()
    (['uE2', 'E2', 'Z2'], ['invgamma', 'f1', 'f1'])
    """
    out = map_datasets(_shapes_one, data)
    out.attrs.update({f"model_{k}": v for k, v in _MODEL_TEXT.items()})
    out.attrs["method"] = _METHOD
    return out
