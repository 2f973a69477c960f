"""Distribution shapes of uE^2 (IG), E^2, Z^2 (F(1, nu)) and Z (Student t);
small nu = heavy tail."""

from __future__ import annotations

import numpy as np
import xarray as xr

from uqviz._array import fits as fit_kernels
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

_METHOD = (
    "minimum Kolmogorov-Smirnov distance (maximum goodness-of-fit estimation, "
    "as fitdistrplus::mgedist(gof='KS')); exact KS distance; Nelder-Mead on "
    "(ln nu, ln scale) from a grid"
)


_SOURCES = {"uE2": "uE", "E2": "E", "Z2": "E/uE", "Z": "E/uE"}


def _columns(ds):
    """E and uE as float64 (a checked dataset may hold float32, int or object columns)."""
    return (
        np.asarray(ds["E"].values, dtype=np.float64),
        np.asarray(ds["uE"].values, dtype=np.float64),
    )


def _sample(e, u, variable, minimum):
    """The values of ``variable`` (uE2, E2, Z2, Z) to fit; the errors name the data."""
    if e.size < minimum:
        raise ValueError(f"data: fitting {variable} needs at least {minimum} points, got {e.size}")
    with np.errstate(over="ignore", under="ignore", invalid="ignore", divide="ignore"):
        x = e / u if variable == "Z" else SHAPE_VARIABLES[variable][1](e, u)
    n_bad = int(np.count_nonzero(~np.isfinite(x)))
    if n_bad:
        raise ValueError(
            f"data: {variable} = f({_SOURCES[variable]}) overflows (inf) at "
            f"{n_bad} of {x.size} points; rescale E and uE"
        )
    if variable != "Z" and not np.any(x > 0):
        raise ValueError(
            f"data: {variable} is zero at all {x.size} points "
            f"({_SOURCES[variable]} = 0 or underflows); nothing to fit"
        )
    return x


def _fit_vars(ds, variables):
    check_dataset(ds)
    e, u = _columns(ds)
    out = {"nu": [], "scale": [], "ks_distance": []}
    for v in variables:
        model = SHAPE_VARIABLES[v][0]
        res = fit_kernels.fit_min_ks(_sample(e, u, v, 2), model)
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
    out.attrs.update(
        {
            "variable": variable,
            "model": _MODEL_TEXT[variable],
            "scipy_model": SHAPE_VARIABLES[variable][0],
            "method": _METHOD,
        }
    )
    return out


def fit_inverse_gamma(data):
    r"""Fit uE^2 by a scaled Inverse-Gamma, ``uE^2/scale ~ IG(nu, nu)`` (Pernot (2024b), eq. 17).

    Parameters
    ----------
    data : xarray.Dataset or xarray.DataTree
        Errors ``E`` and standard uncertainties ``uE`` on dim ``point`` (with any features), as
        made by :func:`uqviz.from_arrays` and the other constructors; a DataTree gives one
        result per dataset, on dim ``dataset``.

    Returns
    -------
    xarray.Dataset
        (On ``dataset``) ``nu``, ``scale``, ``ks_distance``, ``n_points``.

    See Also
    --------
    uqviz.distribution_shapes : the three fits at once.
    uqviz.nig_implied_shape : the F law of E^2 implied by this fit.
    uqviz.plots.average.fit_histogram : draws the histogram with its fit.

    Notes
    -----
    .. math::

       u_E^2/\sigma^2 \sim \Gamma^{-1}(\nu, \nu)

    (Pernot (2024b), eq. 17), fitted by minimising the Kolmogorov-Smirnov distance
    :math:`D = \sup_x |F_M(x) - F(x; \nu, \sigma^2)|` (``ks_distance``); ``scale`` is
    :math:`\sigma^2`.

    References
    ----------
    - Pernot (2024b), eqs. 16-19: the IG and F models; Table I: the fits of the nine sets.

    Full entries: :doc:`/docs/references`.

    Examples
    --------
    >>> import numpy as np, uqviz
    >>> rng = np.random.default_rng(0)
    >>> u = np.sqrt(0.04 * 4.0 / rng.gamma(4.0, 1.0, 5000))  # uE^2/0.04 ~ IG(4, 4)
    >>> fit = uqviz.fit_inverse_gamma(uqviz.from_arrays(rng.normal(0, u), u))
    >>> round(float(fit.nu)), round(float(fit.scale), 2)
    (4, 0.04)
    """
    return _finish(map_datasets(_one_variable, data, variable="uE2"), "uE2")


def fit_f(data, *, variable="E2"):
    r"""Fit E^2 or Z^2 by a scaled F, ``X/scale ~ F(1, nu)`` (Pernot (2024b), eq. 19).

    Parameters
    ----------
    data : xarray.Dataset or xarray.DataTree
        Errors ``E`` and standard uncertainties ``uE`` on dim ``point`` (with any features), as
        made by :func:`uqviz.from_arrays` and the other constructors; a DataTree gives one
        result per dataset, on dim ``dataset``.
    variable : {"E2", "Z2"}, default "E2"
        The variable fitted: the squared errors or the squared z-scores.

    Returns
    -------
    xarray.Dataset
        (On ``dataset``) ``nu``, ``scale``, ``ks_distance``, ``n_points``.

    See Also
    --------
    uqviz.distribution_shapes : the three fits at once.
    uqviz.fit_inverse_gamma : the fit of uE^2.
    uqviz.plots.average.fit_histogram : draws the histogram with its fit.

    Notes
    -----
    .. math::

       X/\sigma^2 \sim F(1, \nu), \qquad X \in \{E^2, Z^2\}

    (Pernot (2024b), eq. 19: :math:`E/\sigma \sim t(\nu)`, eq. 18), fitted by minimising the
    Kolmogorov-Smirnov distance :math:`D = \sup_x |F_M(x) - F(x; \nu, \sigma^2)|`
    (``ks_distance``); ``scale`` is :math:`\sigma^2`.

    References
    ----------
    - Pernot (2024b), eqs. 16-19: the IG and F models; Table I: the fits of the nine sets.

    Full entries: :doc:`/docs/references`.

    Examples
    --------
    >>> import numpy as np, uqviz
    >>> e = 0.2 * np.random.default_rng(1).standard_t(5.0, 5000)   # E^2/0.04 ~ F(1, 5)
    >>> fit = uqviz.fit_f(uqviz.from_arrays(e, np.full(5000, 0.2)), variable="E2")
    >>> bool(abs(fit.nu - 5) < 1.5), round(float(fit.scale), 2)
    (True, 0.04)
    """
    if variable not in ("E2", "Z2"):
        raise ValueError(f"variable must be 'E2' or 'Z2', got {variable!r}")
    return _finish(map_datasets(_one_variable, data, variable=variable), variable)


def _student_t_one(ds, *, rng=None):
    check_dataset(ds)
    z = _sample(*_columns(ds), "Z", 3)
    r = fit_kernels.fit_student_t(z)
    return xr.Dataset(
        {
            "nu": ((), r["df"], {"long_name": "degrees of freedom nu_Z"}),
            "loc": ((), r["loc"], {"long_name": "location of the fitted t"}),
            "scale": ((), r["scale"], {"long_name": "scale of the fitted t"}),
            "loglik": ((), r["loglik"], {"long_name": "maximised log-likelihood"}),
            "ks_distance": ((), r["ks_distance"], {"long_name": "KS distance of the fitted t"}),
            "mean": ((), float(np.mean(z)), {"long_name": "sample mean of Z"}),
            "sd": (
                (),
                float(np.std(z, ddof=1)),
                {"long_name": "sample standard deviation of Z, ddof=1"},
            ),
            "n_points": ((), z.size),
        }
    )


def fit_student_t(data):
    r"""Fit Z = E/uE by a shifted, scaled Student t, by maximum likelihood (Pernot (2024c)).

    Parameters
    ----------
    data : xarray.Dataset or xarray.DataTree
        Errors ``E`` and standard uncertainties ``uE`` on dim ``point`` (with any features), as
        made by :func:`uqviz.from_arrays` and the other constructors; a DataTree gives one
        result per dataset, on dim ``dataset``.

    Returns
    -------
    xarray.Dataset
        (On ``dataset``) ``nu`` (degrees of freedom), ``loc``, ``scale``, ``loglik``,
        ``ks_distance``, ``mean``, ``sd``, ``n_points``.

    See Also
    --------
    uqviz.fit_f : the F(1, nu) fit of Z^2.
    uqviz.simulated_reference : simulated references under a Student-t D.
    uqviz.z_scores : the z-scores fitted.

    Notes
    -----
    .. math::

       \frac{Z - \mu}{s} \sim t(\nu), \qquad Z = E / u_E,

    with :math:`(\nu, \mu, s)` (``df``, ``loc``, ``scale``) maximising the log-likelihood
    (``loglik``); ``ks_distance`` is :math:`\sup_x |F_M(x) - F(x)|`. A calibrated set with a
    unit-variance Student-t D has :math:`s = \sqrt{(\nu - 2)/\nu}` (Pernot (2024c), eq. 25).

    References
    ----------
    - Pernot (2024c), Table II and Figs. 2-3: Student-t fits of the z-scores; eq. 25: the
      unit-variance Student-t.

    Full entries: :doc:`/docs/references`.

    Examples
    --------
    >>> import numpy as np, uqviz
    >>> z = 0.1 + 0.8 * np.random.default_rng(2).standard_t(4.0, 5000)
    >>> fit = uqviz.fit_student_t(uqviz.from_arrays(z, np.ones(5000)))
    >>> round(float(fit.nu)), round(float(fit["loc"]), 1), round(float(fit.scale), 1)
    (4, 0.1, 0.8)
    """
    out = map_datasets(_student_t_one, data)
    out.attrs.update(
        {
            "variable": "Z",
            "model": "(Z - loc)/scale ~ t(nu)",
            "scipy_model": "t",
            "method": "maximum likelihood (scipy.stats.t.fit)",
        }
    )
    return out


def _shapes_one(ds, *, rng=None):
    names = list(SHAPE_VARIABLES)
    r = _fit_vars(ds, names)
    out = xr.Dataset(
        {k: ("variable", v, _attrs_var(k)) for k, v in r.items()},
        coords={"variable": names, "model": ("variable", [SHAPE_VARIABLES[n][0] for n in names])},
    )
    out["n_points"] = ((), ds.sizes["point"])
    return out


def distribution_shapes(data):
    r"""Fit uE^2 (Inverse-Gamma), E^2 and Z^2 (F(1, nu)) at once (Pernot (2024b), Table I).

    Parameters
    ----------
    data : xarray.Dataset or xarray.DataTree
        Errors ``E`` and standard uncertainties ``uE`` on dim ``point`` (with any features), as
        made by :func:`uqviz.from_arrays` and the other constructors; a DataTree gives one
        result per dataset, on dim ``dataset``.

    Returns
    -------
    xarray.Dataset
        On (``dataset``,) ``variable``: ``nu``, ``scale``, ``ks_distance``;
        coordinate ``model``; ``n_points``.

    See Also
    --------
    uqviz.fit_inverse_gamma : the fit of uE^2 alone.
    uqviz.fit_f : the fit of E^2 or Z^2 alone.
    uqviz.nig_implied_shape : the F law of E^2 implied by the IG fit.
    uqviz.plots.average.fit_histogram : draws a histogram with its fit.

    Notes
    -----
    The models (Pernot (2024b), eqs. 17 and 19) are

    .. math::

       u_E^2/\sigma^2 \sim \Gamma^{-1}(\nu, \nu), \qquad X/\sigma^2 \sim F(1, \nu), \quad
       X \in \{E^2, Z^2\},

    each fitted by minimising the Kolmogorov-Smirnov distance
    :math:`D = \sup_x |F_M(x) - F(x; \nu, \sigma^2)|` to the empirical CDF :math:`F_M`
    (``ks_distance``); ``scale`` is :math:`\sigma^2`.

    References
    ----------
    - Pernot (2024b), eqs. 16-19: the IG and F models; Table I: the fits of the nine sets.

    Full entries: :doc:`/docs/references`.

    Examples
    --------
    >>> import uqviz
    >>> shp = uqviz.distribution_shapes(uqviz.synthetic.nig(3000, nu=6, rng=0))
    >>> shp["model"].values.tolist()
    ['invgamma', 'f1', 'f1']
    """
    out = map_datasets(_shapes_one, data)
    out.attrs.update({f"model_{k}": v for k, v in _MODEL_TEXT.items()})
    out.attrs["method"] = _METHOD
    return out
