"""Synthetic calibrated datasets: NIG/TIG models and the teaching example.

Calibrated: ``E = uE eps``, ``eps ~ D(0, 1)`` of unit variance, with
``uE^2 / sigma^2 ~ InverseGamma(a, scale=b)``. NIG: ``a = b = nu/2``, D normal;
TIG: ``a = b = nu_IG/2``, ``D = t_s(nu_D)`` (Pernot (2024b), eq. 20).
``n_datasets=n`` gives a DataTree with children ``"set_0"`` ... ``"set_{n-1}"``.
"""

from __future__ import annotations

import numbers

import numpy as np
import xarray as xr

from uqviz._array import synthetic as synthetic_kernels
from uqviz.data.constructors import from_arrays, from_datasets
from uqviz.data.model import variable_attrs
from uqviz.data.potentials import potential_committee
from uqviz.engine import checks
from uqviz.engine.seeds import seed_attr

__all__ = [
    "calibrated",
    "default_example",
    "draw_calibrated",
    "nig",
    "potential_committee",
    "student_t_scaled",
    "tig",
]


def _check_nu_d(nu_d, name="nu"):
    """None or +inf -> None (normal D); otherwise a number > 2."""
    if nu_d is None:
        return None
    if isinstance(nu_d, (bool, np.bool_)) or not isinstance(nu_d, numbers.Real):
        raise TypeError(f"{name} must be a number > 2 (or inf / None for a normal), got {nu_d!r}")
    if np.isinf(nu_d) and nu_d > 0:
        return None
    if not nu_d > 2:  # also NaN
        raise ValueError(
            f"{name} must be > 2 for a unit-variance t_s({name}) (finite variance), got {nu_d!r}"
        )
    return float(nu_d)


def student_t_scaled(size, *, nu, rng=None) -> np.ndarray:
    """Draw from the unit-variance Student ``t_s(nu) = t(nu) sqrt((nu - 2)/nu)``.

    Parameters
    ----------
    size : int or tuple of int
        Number of draws (>= 1), or the shape of the array of draws.
    nu : float
        Degrees of freedom, > 2; inf gives the standard normal.
    rng : None, int, SeedSequence or numpy.random.Generator

    Returns
    -------
    numpy.ndarray

    Examples
    --------
    >>> from uqviz.synthetic import student_t_scaled
    >>> x = student_t_scaled(100_000, nu=5.0, rng=1)
    >>> bool(abs(x.var() - 1) < 0.05)
    True
    """
    return synthetic_kernels.student_t_scaled(_check_nu_d(nu), _shape(size), checks.rng(rng))


def _shape(size) -> tuple[int, ...]:
    """``size`` (an int, or a tuple or list of ints, each >= 1) as a shape tuple."""
    if isinstance(size, (tuple, list)):
        if not size:
            raise ValueError("size must be an int >= 1 or a non-empty tuple of them, got ()")
        return tuple(checks.count(f"size[{i}]", n) for i, n in enumerate(size))
    return (checks.count("size", size),)


def draw_calibrated(size, *, a, b, nu_d=None, n_datasets=None, sigma=1.0, rng=None):
    """Errors and uncertainties of calibrated datasets as numpy arrays.

    Parameters
    ----------
    size : int
    a, b : float
        Shape and scale of the inverse-gamma distribution of ``uE^2``.
    nu_d : float, optional
        Degrees of freedom of ``t_s``; None or inf for a normal D.
    n_datasets : int, optional
    sigma : float, default 1.0
    rng : None, int, SeedSequence or numpy.random.Generator

    Returns
    -------
    E, uE : numpy.ndarray
        Shape ``(n_datasets, size)``, or ``(size,)``.

    Examples
    --------
    >>> from uqviz.synthetic import draw_calibrated
    >>> E, uE = draw_calibrated(1000, a=3.0, b=3.0, n_datasets=3, rng=0)
    >>> E.shape
    (3, 1000)
    """
    size = checks.count("size", size)
    n_datasets = checks.optional_count("n_datasets", n_datasets)
    a, b = checks.positive("a", a), checks.positive("b", b)
    sigma = checks.positive("sigma", sigma)
    nu_d = _check_nu_d(nu_d, "nu_d")
    shape = (size,) if n_datasets is None else (n_datasets, size)
    return synthetic_kernels.draw_calibrated(shape, a, b, nu_d, checks.rng(rng), sigma=sigma)


def _to_data(e, u, attrs: dict):
    """A Dataset for 1-D arrays; a DataTree (children "set_0", ...) for 2-D arrays."""
    if e.ndim == 1:
        coords = {"point": ("point", np.arange(e.shape[-1], dtype=np.int64))}
        data_vars = {
            "E": ("point", e, variable_attrs("E", "")),
            "uE": ("point", u, variable_attrs("uE", "")),
        }
        return xr.Dataset(data_vars, coords=coords, attrs={"units": "", **attrs})
    children = {f"set_{i}": _to_data(e[i], u[i], attrs) for i in range(e.shape[0])}
    tree = from_datasets(children)
    tree.attrs = {"units": "", **attrs, "n_datasets": e.shape[0]}
    return tree


def _nu_d_text(nu_d) -> tuple[float, str]:
    nu_d = _check_nu_d(nu_d, "nu_d")
    return (np.inf, "N(0,1)") if nu_d is None else (nu_d, f"t_s({nu_d:g})")


def _relabel(data, attrs: dict):
    """Update the model attributes of a Dataset, or of a tree and its children."""
    data.attrs.update(attrs)
    if isinstance(data, xr.DataTree):
        for key, child in data.children.items():
            child.attrs.update({**attrs, "name": key})
    return data


def calibrated(size, *, a, b, nu_d=None, n_datasets=None, sigma=1.0, rng=None):
    """Calibrated synthetic data with inverse-gamma distributed variances.

    Parameters
    ----------
    size : int
    a, b : float
        Shape and scale of the inverse-gamma distribution of ``uE^2``.
    nu_d : float, optional
        Degrees of freedom of ``t_s``; None or inf for a normal D.
    n_datasets : int, optional
        A DataTree of that many datasets.
    sigma : float, default 1.0
    rng : None, int, SeedSequence or numpy.random.Generator

    Returns
    -------
    xarray.Dataset or xarray.DataTree
        ``E``, ``uE``; attributes give the model, its parameters and ``rng``.

    Examples
    --------
    >>> from uqviz.synthetic import calibrated
    >>> tree = calibrated(500, a=3.0, b=3.0, nu_d=6.0, n_datasets=2, rng=0)
    >>> list(tree.children)
    ['set_0', 'set_1']
    """
    nu_val, d_txt = _nu_d_text(nu_d)
    e, u = draw_calibrated(size, a=a, b=b, nu_d=nu_d, n_datasets=n_datasets, sigma=sigma, rng=rng)
    attrs = {
        "name": f"IG({a:g},{b:g})-{d_txt}",
        "model": "calibrated",
        "description": "uE^2/sigma^2 ~ InverseGamma(a, scale=b); E = uE * eps, eps ~ D",
        "a": float(a),
        "b": float(b),
        "nu_d": nu_val,
        "D": d_txt,
        "sigma": float(sigma),
        "rng": seed_attr(rng),
    }
    return _to_data(e, u, attrs)


def nig(size, *, nu=6.0, n_datasets=None, rng=None):
    """Calibrated data from the Normal-Inverse-Gamma model, errors ``~ t(nu)`` (Pernot (2024b)).

    Parameters
    ----------
    size : int
    nu : float, default 6.0
        Shape ``nu_IG`` (> 0).
    n_datasets : int, optional
    rng : None, int, SeedSequence or numpy.random.Generator

    Returns
    -------
    xarray.Dataset or xarray.DataTree

    Examples
    --------
    >>> from uqviz.synthetic import nig
    >>> nig(5000, nu=4.0, rng=1).attrs["a"]
    2.0
    """
    nu = checks.positive("nu", nu)
    data = calibrated(size, a=nu / 2, b=nu / 2, nu_d=None, n_datasets=n_datasets, rng=rng)
    return _relabel(
        data,
        {
            "name": f"NIG(nu={nu:g})",
            "model": "NIG",
            "nu": nu,
            "description": "NIG: uE^2 ~ InverseGamma(nu/2, scale=nu/2); E = uE * eps, eps ~ N(0,1)",
        },
    )


def tig(size, *, nu_ig=6.0, nu_d=6.0, n_datasets=None, rng=None):
    """Calibrated data from the t-Inverse-Gamma model (Pernot (2024b), sect. IV).

    Parameters
    ----------
    size : int
    nu_ig : float, default 6.0
        Shape of the uncertainty distribution (> 0).
    nu_d : float, default 6.0
        Degrees of freedom of ``t_s`` (> 2; inf gives NIG).
    n_datasets : int, optional
    rng : None, int, SeedSequence or numpy.random.Generator

    Returns
    -------
    xarray.Dataset or xarray.DataTree

    Examples
    --------
    >>> from uqviz.synthetic import tig
    >>> tig(1000, nu_ig=6.0, nu_d=3.0, rng=2).attrs["D"]
    't_s(3)'
    """
    nu_ig = checks.positive("nu_ig", nu_ig)
    data = calibrated(size, a=nu_ig / 2, b=nu_ig / 2, nu_d=nu_d, n_datasets=n_datasets, rng=rng)
    return _relabel(
        data,
        {
            "name": f"TIG(nu_ig={nu_ig:g},nu_d={data.attrs['nu_d']:g})",
            "model": "TIG",
            "nu_ig": nu_ig,
            "description": "TIG: uE^2 ~ InverseGamma(nu_ig/2, scale=nu_ig/2); "
            "E = uE * eps, eps ~ t_s(nu_d)",
        },
    )


# --------------------------------------------------------------------------
# the teaching example
# --------------------------------------------------------------------------
#: slope of log sd(E) against X in the default example
_EXAMPLE_SLOPE = 0.7


def default_example(*, size=5000, rng=20231122) -> xr.Dataset:
    """The teaching example: on average calibrated and consistent, not adaptive (Pernot (2023)).

    ``uE = s`` log-uniform, feature ``X ~ U(0, 1)``, ``E = s exp(a + 0.7 X) eps``:
    ``<Z^2 | X>`` runs from 0.46 to 1.86.

    Parameters
    ----------
    size : int, default 5000
    rng : None, int, SeedSequence or numpy.random.Generator, default 20231122

    Returns
    -------
    xarray.Dataset
        ``E``, ``uE`` and feature ``X``.

    Examples
    --------
    >>> from uqviz.synthetic import default_example
    >>> ds = default_example()
    >>> z2 = (ds["E"] / ds["uE"]) ** 2
    >>> low, high = float(z2.where(ds["X"] < 0.2).mean()), float(z2.where(ds["X"] > 0.8).mean())
    >>> bool(low < 0.7 and high > 1.4)
    True
    """
    size = checks.count("size", size)
    seed = seed_attr(rng)
    rng = checks.rng(rng)
    b = _EXAMPLE_SLOPE
    a = -0.5 * float(np.log(np.expm1(2 * b) / (2 * b)))
    x = rng.uniform(0.0, 1.0, size)
    s = 10.0 ** rng.uniform(-0.5, 0.0, size)
    eps = rng.standard_normal(size)
    e = s * np.exp(a + b * x) * eps
    ds = from_arrays(e, s, features={"X": x}, name="default_example", units="")
    ds["X"].attrs.update(
        {
            "long_name": "input feature X (uniform on [0, 1]); the error sd grows "
            "as exp(a + b X) but uE ignores it"
        }
    )
    ds.attrs.update(
        {
            "description": (
                "teaching example: calibrated on average and consistent (binning on uE), "
                "not adaptive (binning on X): uE overestimated at low X, "
                "underestimated at high X"
            ),
            "model": (
                "E = s exp(a + b X) eps, uE = s; X ~ U(0,1), log10 s ~ U(-0.5,0), eps ~ N(0,1)"
            ),
            "a": a,
            "b": b,
            "rng": seed,
        }
    )
    return ds
