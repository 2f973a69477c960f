"""Synthetic calibrated datasets (Pernot 2024, sect. IV; simulated references).

A *calibrated* dataset follows the generative model ``E_i = uE_i * eps_i``
with ``eps ~ D(0, 1)`` of unit variance, so that ``<Z^2> = 1``. Here the
squared uncertainties are drawn from an inverse-gamma distribution,

    uE^2 / sigma^2 ~ InverseGamma(a, scale=b)      (drawn as b / Gamma(a, 1))

and ``D`` is either the standard normal or the unit-variance Student
distribution ``t_s(nu_D) = t(nu_D) * sqrt((nu_D - 2) / nu_D)``:

- NIG model: ``a = b = nu / 2`` and ``D = N(0, 1)``; then ``E / sigma ~ t(nu)``
  and ``E^2 / sigma^2 ~ F(1, nu)``.
- TIG model: ``a = b = nu_IG / 2`` and ``D = t_s(nu_D)``.

:func:`draw_calibrated` is the numpy kernel (no xarray, no Python loop over
datasets); :func:`nig`, :func:`tig` and :func:`calibrated` wrap it into
``xarray.Dataset`` objects. :func:`default_example` builds the embedded
teaching example used in the tutorials.

Randomness follows SPEC 7: every function takes ``rng`` (None, a seed or a
``numpy.random.Generator``) and calls ``numpy.random.default_rng(rng)``; the
same seed gives the same numbers and no global state is touched.
"""

from __future__ import annotations

import numbers

import numpy as np
import xarray as xr

from uqviz.data.model import _var_attrs, from_arrays

__all__ = [
    "calibrated",
    "default_example",
    "draw_calibrated",
    "nig",
    "student_t_scaled",
    "tig",
]


# --------------------------------------------------------------------------
# argument checks
# --------------------------------------------------------------------------
def _check_count(value, what: str, *, allow_none: bool = False):
    if value is None and allow_none:
        return None
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(f"{what} must be a positive integer, got {value!r}")
    return int(value)


def _check_positive(value, what: str) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real) \
            or not np.isfinite(value) or value <= 0:
        raise ValueError(f"{what} must be a finite number > 0, got {value!r}")
    return float(value)


def _check_nu_d(nu_d):
    """None or inf -> None (normal D); otherwise a number > 2."""
    if nu_d is None:
        return None
    if isinstance(nu_d, (bool, np.bool_)) or not isinstance(nu_d, numbers.Real) or np.isnan(nu_d):
        raise ValueError(f"nu must be a number > 2 (or inf / None for a normal), got {nu_d!r}")
    if np.isinf(nu_d) and nu_d > 0:
        return None
    if not nu_d > 2:
        raise ValueError(f"nu must be > 2 for a unit-variance t_s(nu) (finite variance), got {nu_d!r}")
    return float(nu_d)


# --------------------------------------------------------------------------
# numpy kernels
# --------------------------------------------------------------------------
def student_t_scaled(nu, size, rng=None) -> np.ndarray:
    """Draw from the unit-variance Student distribution ``t_s(nu)``.

    ``t_s(nu) = t(nu) * sqrt((nu - 2) / nu)`` has mean 0 and variance 1 for
    ``nu > 2`` (Pernot 2024, Eq. 20); ``nu = inf`` gives the standard normal.

    Parameters
    ----------
    nu : float
        Degrees of freedom, > 2.
    size : int or tuple of int
        Output shape.
    rng : None, int or numpy.random.Generator
        Random source (``numpy.random.default_rng(rng)``).

    Returns
    -------
    numpy.ndarray
        Draws of shape `size`.

    Raises
    ------
    ValueError
        If ``nu <= 2`` (infinite variance).

    Examples
    --------
    >>> from uqviz.synthetic import student_t_scaled
    >>> x = student_t_scaled(5.0, 100_000, rng=1)
    >>> bool(abs(x.var() - 1) < 0.05)
    True
    """
    nu = _check_nu_d(nu)
    rng = np.random.default_rng(rng)
    if nu is None:
        return rng.standard_normal(size)
    return rng.standard_t(nu, size) * np.sqrt((nu - 2.0) / nu)


def draw_calibrated(size, n_datasets, a, b, nu_d, rng, sigma=1.0):
    """Draw errors and uncertainties of calibrated datasets (numpy kernel).

    ``uE^2 = sigma^2 * b / Gamma(a, 1)`` (i.e. ``uE^2 / sigma^2 ~
    InverseGamma(a, scale=b)``), ``eps ~ N(0, 1)`` (`nu_d` None or inf) or
    ``t_s(nu_d)``, and ``E = uE * eps``. All datasets are drawn in one call
    (no loop): the numbers for ``(n_datasets, size)`` are those of one draw
    of ``n_datasets * size`` points, reshaped.

    Parameters
    ----------
    size : int
        Points per dataset.
    n_datasets : int or None
        Number of datasets; None for a single one.
    a, b : float
        Shape and scale of the inverse-gamma distribution of ``uE^2``.
    nu_d : float or None
        Degrees of freedom of ``t_s``; None or inf for a normal ``D``.
    rng : None, int or numpy.random.Generator
        Random source.
    sigma : float, default 1.0
        Scale factor of the uncertainties.

    Returns
    -------
    E, uE : numpy.ndarray
        Shape ``(n_datasets, size)``, or ``(size,)`` if `n_datasets` is None.

    Examples
    --------
    >>> from uqviz.synthetic import draw_calibrated
    >>> E, uE = draw_calibrated(1000, 3, 3.0, 3.0, None, 0)
    >>> E.shape, uE.shape
    ((3, 1000), (3, 1000))
    """
    size = _check_count(size, "size")
    n_datasets = _check_count(n_datasets, "n_datasets", allow_none=True)
    a = _check_positive(a, "a")
    b = _check_positive(b, "b")
    sigma = _check_positive(sigma, "sigma")
    nu_d = _check_nu_d(nu_d)
    rng = np.random.default_rng(rng)
    shape = (size,) if n_datasets is None else (n_datasets, size)
    u = sigma * np.sqrt(b / rng.standard_gamma(a, size=shape))
    eps = student_t_scaled(np.inf if nu_d is None else nu_d, shape, rng)
    return u * eps, u


# --------------------------------------------------------------------------
# xarray wrappers
# --------------------------------------------------------------------------
def _to_dataset(e, u, attrs: dict) -> xr.Dataset:
    dims = ("point",) if e.ndim == 1 else ("replicate", "point")
    coords = {"point": ("point", np.arange(e.shape[-1], dtype=np.int64))}
    if e.ndim == 2:
        coords["replicate"] = ("replicate", np.arange(e.shape[0], dtype=np.int64))
    data_vars = {"E": (dims, e, _var_attrs("E", "")), "uE": (dims, u, _var_attrs("uE", ""))}
    return xr.Dataset(data_vars, coords=coords, attrs={"units": "", **attrs})


def _seed_attr(rng) -> dict:
    if isinstance(rng, numbers.Integral) and not isinstance(rng, (bool, np.bool_)):
        return {"seed": int(rng)}
    return {}


def _nu_d_text(nu_d) -> tuple[float, str]:
    nu_d = _check_nu_d(nu_d)
    return (np.inf, "N(0,1)") if nu_d is None else (nu_d, f"t_s({nu_d:g})")


def calibrated(size, *, a, b, nu_d=None, n_datasets=None, sigma=1.0, rng=None) -> xr.Dataset:
    """Calibrated synthetic data with inverse-gamma distributed variances.

    ``uE^2 / sigma^2 ~ InverseGamma(a, scale=b)``, ``E = uE * eps`` with
    ``eps ~ N(0, 1)`` or ``t_s(nu_d)``: the data satisfy ``<Z^2> = 1`` in
    expectation, with the tails set by `a` (uncertainties) and `nu_d` (errors).

    Parameters
    ----------
    size : int
        Points per dataset.
    a, b : float
        Shape and scale of the inverse-gamma distribution of ``uE^2``.
    nu_d : float, optional
        Degrees of freedom (> 2) of the generative distribution ``t_s``;
        None or inf for the standard normal.
    n_datasets : int, optional
        Number of independent datasets, on a leading dim ``replicate``.
    sigma : float, default 1.0
        Scale factor of the uncertainties.
    rng : None, int or numpy.random.Generator
        Random source.

    Returns
    -------
    xarray.Dataset
        ``E`` and ``uE`` on ``point`` (and ``replicate`` if `n_datasets`);
        attributes give the model and its parameters.

    Examples
    --------
    >>> from uqviz.synthetic import calibrated
    >>> ds = calibrated(500, a=3.0, b=3.0, nu_d=6.0, n_datasets=4, rng=0)
    >>> dict(ds.sizes)
    {'replicate': 4, 'point': 500}
    """
    nu_val, d_txt = _nu_d_text(nu_d)
    e, u = draw_calibrated(size, n_datasets, a, b, nu_d, rng, sigma=sigma)
    attrs = {"name": f"IG({a:g},{b:g})-{d_txt}", "model": "calibrated",
             "description": "uE^2/sigma^2 ~ InverseGamma(a, scale=b); E = uE * eps, eps ~ D",
             "a": float(a), "b": float(b), "nu_d": nu_val, "D": d_txt, "sigma": float(sigma),
             **_seed_attr(rng)}
    return _to_dataset(e, u, attrs)


def nig(size, *, nu=6.0, n_datasets=None, rng=None) -> xr.Dataset:
    """Calibrated data from the Normal-Inverse-Gamma (NIG) model.

    ``uE^2 ~ InverseGamma(nu/2, scale=nu/2)`` and ``D = N(0, 1)``, so that
    the errors follow a Student ``t(nu)`` and ``E^2 ~ F(1, nu)`` (Pernot 2024,
    Eqs. 18-19). Small `nu` gives heavy-tailed uncertainties.

    Parameters
    ----------
    size : int
        Points per dataset.
    nu : float, default 6.0
        Shape parameter ``nu_IG`` (> 0; the papers use 2 to 20).
    n_datasets : int, optional
        Number of independent datasets, on a leading dim ``replicate``.
    rng : None, int or numpy.random.Generator
        Random source.

    Returns
    -------
    xarray.Dataset
        ``E`` and ``uE``; attributes ``model="NIG"``, ``nu``, ``a``, ``b``.

    Examples
    --------
    >>> from uqviz.synthetic import nig
    >>> ds = nig(5000, nu=4.0, rng=1)
    >>> ds.attrs["model"], ds.attrs["a"]
    ('NIG', 2.0)
    """
    nu = _check_positive(nu, "nu")
    ds = calibrated(size, a=nu / 2, b=nu / 2, nu_d=None, n_datasets=n_datasets, rng=rng)
    ds.attrs.update({"name": f"NIG(nu={nu:g})", "model": "NIG", "nu": nu,
                     "description": "NIG: uE^2 ~ InverseGamma(nu/2, scale=nu/2); E = uE * eps, eps ~ N(0,1)"})
    return ds


def tig(size, *, nu_ig=6.0, nu_d=6.0, n_datasets=None, rng=None) -> xr.Dataset:
    """Calibrated data from the t-Inverse-Gamma (TIG) model.

    ``uE^2 ~ InverseGamma(nu_ig/2, scale=nu_ig/2)`` and ``D = t_s(nu_d)``
    (Pernot 2024, sect. IV.B; the validation study of sect. IV.C uses
    ``nu_ig = 6``, i.e. ``IG(3, 3)``, and ``nu_d`` from 2.1 to 20).

    Parameters
    ----------
    size : int
        Points per dataset.
    nu_ig : float, default 6.0
        Shape parameter of the uncertainty distribution (> 0).
    nu_d : float, default 6.0
        Degrees of freedom of ``t_s`` (> 2; inf gives the NIG model).
    n_datasets : int, optional
        Number of independent datasets, on a leading dim ``replicate``.
    rng : None, int or numpy.random.Generator
        Random source.

    Returns
    -------
    xarray.Dataset
        ``E`` and ``uE``; attributes ``model="TIG"``, ``nu_ig``, ``nu_d``, ``a``, ``b``.

    Examples
    --------
    >>> from uqviz.synthetic import tig
    >>> ds = tig(1000, nu_ig=6.0, nu_d=3.0, rng=2)
    >>> ds.attrs["D"]
    't_s(3)'
    """
    nu_ig = _check_positive(nu_ig, "nu_ig")
    ds = calibrated(size, a=nu_ig / 2, b=nu_ig / 2, nu_d=nu_d, n_datasets=n_datasets, rng=rng)
    ds.attrs.update({"name": f"TIG(nu_ig={nu_ig:g},nu_d={ds.attrs['nu_d']:g})", "model": "TIG",
                     "nu_ig": nu_ig,
                     "description": "TIG: uE^2 ~ InverseGamma(nu_ig/2, scale=nu_ig/2); "
                                    "E = uE * eps, eps ~ t_s(nu_d)"})
    return ds


# --------------------------------------------------------------------------
# the teaching example
# --------------------------------------------------------------------------
#: slope of log sd(E) against X in the default example
_EXAMPLE_SLOPE = 0.7


def default_example(*, size=5000, rng=20231122) -> xr.Dataset:
    """The embedded teaching example: consistent, on average calibrated, not adaptive.

    What it is for: the tutorials and docstrings need a dataset that passes
    the average-calibration test (ZMS close to 1) and the consistency test
    (local ZMS close to 1 when binning on ``uE``) but fails the adaptivity
    test (local ZMS far from 1 when binning on the input feature ``X``), to
    show that conditional calibration must be checked on both kinds of
    variables (Pernot 2023).

    Construction (deterministic for the default seed):

    - input feature ``X ~ U(0, 1)``;
    - latent scales ``s`` log-uniform on [10^-0.5, 1] (``uE`` spans a factor
      3.2), independent of ``X``; the range is chosen so that the tailedness
      screen is clean (beta_GM(uE^2) about 0.36, beta_GM(E^2) about 0.75, below
      the 0.6 and 0.8 limits), and the example teaches adaptivity alone;
    - errors ``E = s * exp(a + b X) * eps`` with ``eps ~ N(0, 1)`` and
      ``b = 0.7``: the true error sd grows with ``X`` (heteroscedastic);
      ``a = -0.5 * ln((exp(2b) - 1) / (2b))`` makes ``<exp(2(a + bX))> = 1``;
    - reported uncertainties ``uE = s``: they ignore the ``X`` dependence.

    Then ``Z = E / uE = exp(a + bX) eps``. Overall ``<Z^2> = 1`` (average
    calibration); ``X`` is independent of ``uE``, so every ``uE`` bin has
    ``<Z^2> = 1`` (consistency); but ``<Z^2 | X> = exp(2(a + bX))`` runs from
    0.46 at ``X = 0`` (uE overestimated) to 1.86 at ``X = 1`` (uE
    underestimated): about 0.53 in the lowest ``X`` quintile and 1.62 in the
    highest (adaptivity fails).

    Parameters
    ----------
    size : int, default 5000
        Number of points.
    rng : None, int or numpy.random.Generator, default 20231122
        Random source; the default makes the example reproducible.

    Returns
    -------
    xarray.Dataset
        Variables ``E``, ``uE`` and feature ``X`` on ``point``; attributes
        ``name="default_example"``, ``units=""`` and the construction
        parameters.

    Examples
    --------
    >>> import numpy as np
    >>> from uqviz.synthetic import default_example
    >>> ds = default_example()
    >>> z2 = (ds["E"] / ds["uE"]) ** 2
    >>> bool(abs(float(z2.mean()) - 1) < 0.05)
    True
    >>> low, high = float(z2.where(ds["X"] < 0.2).mean()), float(z2.where(ds["X"] > 0.8).mean())
    >>> bool(low < 0.7 and high > 1.4)
    True
    """
    size = _check_count(size, "size")
    seed = _seed_attr(rng)
    rng = np.random.default_rng(rng)
    b = _EXAMPLE_SLOPE
    a = -0.5 * float(np.log(np.expm1(2 * b) / (2 * b)))
    x = rng.uniform(0.0, 1.0, size)
    s = 10.0 ** rng.uniform(-0.5, 0.0, size)
    eps = rng.standard_normal(size)
    e = s * np.exp(a + b * x) * eps
    ds = from_arrays(e, s, features={"X": x}, name="default_example", units="")
    ds["X"].attrs.update({"long_name": "input feature X (uniform on [0, 1]); the error sd grows "
                                       "as exp(a + b X) but uE ignores it"})
    ds.attrs.update({
        "description": ("teaching example: calibrated on average and consistent (binning on uE), "
                        "not adaptive (binning on X): uE overestimated at low X, underestimated at high X"),
        "model": "E = s exp(a + b X) eps, uE = s; X ~ U(0,1), log10 s ~ U(-0.5,0), eps ~ N(0,1)",
        "a": a, "b": b, **seed,
    })
    return ds
