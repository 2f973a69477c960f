r"""The forecast as given: its form, the observed values, its predictive CDF and quantiles.

A dataset of :func:`uqviz.from_predictions` keeps the forecast as given (``attrs["forecast"]``
and the variables ``y``, ``quantiles``, ``lower``/``upper``, ``samples``); a dataset without the
attribute (:func:`uqviz.from_arrays`) is the forecast ``uE * D``, D the generative distribution
of unit variance. These functions read every form in the same way, for the PIT
(``uqviz.predictive.pit``), the scores on the forecast as given and the recalibrations.

Examples
--------
>>> import numpy as np, uqviz
>>> from uqviz.predictive import forecast_form, predictive_cdf
>>> ds = uqviz.from_arrays([0.0, 1.0], [1.0, 2.0])
>>> forecast_form(ds), predictive_cdf(ds, [0.0, 0.0]).round(4).tolist()  # y = E, y_pred = 0
('std', [0.5, 0.5])
>>> predictive_cdf(ds, [0.0, 1.0]).round(4).tolist()
[0.5, 0.6915]
"""

from __future__ import annotations

import numpy as np
import xarray as xr

from uqviz._array import pit as pit_kernels
from uqviz._array.lazy import lazy_module
from uqviz.data.generative import Generative, get_generative
from uqviz.data.model import check_dataset
from uqviz.engine import checks

special = lazy_module("scipy.special")

__all__ = [
    "FORMS",
    "forecast_form",
    "gives_observed",
    "observed",
    "predictive_cdf",
    "predictive_quantiles",
    "standard_distribution",
    "standard_cdf",
    "quantile_table",
]

#: The forms of a forecast (``attrs["forecast"]``) and the variables each needs (``y`` is
#: optional: without it the forecast is read in error space, docs/conventions.md).
FORMS = {
    "std": (),
    "variance": (),
    "interval": ("lower", "upper"),
    "quantiles": ("quantiles",),
    "samples": ("samples",),
}
#: Generative kinds with a closed-form CDF (the forecast ``uE * D`` and the quantile tails).
CDF_KINDS = ("normal", "student_t", "laplace", "uniform")


def forecast_form(ds) -> str:
    """The form of the forecast held by a dataset: ``attrs["forecast"]``, else ``"std"``.

    Parameters
    ----------
    ds : xarray.Dataset
        A dataset of :func:`uqviz.from_predictions` or :func:`uqviz.from_arrays`.

    Returns
    -------
    str
        ``"std"``, ``"variance"``, ``"interval"``, ``"quantiles"`` or ``"samples"``.

    Raises
    ------
    ValueError
        An unknown form, or a form whose variables the dataset lacks.

    Examples
    --------
    >>> import uqviz
    >>> from uqviz.predictive import forecast_form
    >>> forecast_form(uqviz.from_predictions([1.0, 2.0], [1.1, 1.9], lower=[0.2, 0.9],
    ...                                      upper=[2.0, 2.9], level=0.9))
    'interval'
    """
    if not isinstance(ds, xr.Dataset):
        raise TypeError(f"ds: expected an xarray.Dataset, got {type(ds).__name__}")
    form = ds.attrs.get("forecast", "std")
    if form not in FORMS:
        raise ValueError(f"attrs['forecast']: unknown form {form!r}; one of {', '.join(FORMS)}")
    lacking = [v for v in FORMS[form] if v not in ds.variables]
    if lacking:
        raise ValueError(
            f"a forecast given as {form} needs the variables "
            f"{', '.join(FORMS[form])}; the dataset lacks {', '.join(lacking)}"
        )
    return form


def gives_observed(ds) -> bool:
    """Whether a dataset gives its observed values: a variable ``y`` that is not a feature.

    A feature named ``y`` of :func:`uqviz.from_arrays` (``role="feature"``) is an input of the
    model, not its target; a dataset in error space (E and uE only) gives no ``y``, nor one of
    :func:`uqviz.from_predictions` given ``std`` or ``variance`` (the forms that keep ``y`` are
    intervals, quantiles and samples).

    Parameters
    ----------
    ds : xarray.Dataset

    Returns
    -------
    bool

    See Also
    --------
    observed : ``(y, y_pred)``, with ``y = E`` where the dataset gives no ``y``.

    Examples
    --------
    >>> import uqviz
    >>> from uqviz.predictive.forecast import gives_observed
    >>> gives_observed(uqviz.from_arrays([0.5], [1.0]))
    False
    >>> ds = uqviz.from_predictions([1.0, 2.0], [0.5, 2.5], lower=[-0.5, 1.5], upper=[1.5, 3.5],
    ...                             level=0.9)
    >>> gives_observed(ds), gives_observed(uqviz.from_predictions([1.0], [0.5], std=[1.0]))
    (True, False)
    """
    return "y" in ds.data_vars and ds["y"].attrs.get("role") != "feature"


def observed(ds) -> tuple[xr.DataArray, xr.DataArray]:
    """``(y, y_pred)``: the observed values and the predictions of a dataset.

    With a variable ``y`` (not a feature: a feature named ``y`` of :func:`uqviz.from_arrays`,
    ``role="feature"``, is an input of the model), ``y_pred = y - E``; without (a dataset in
    error space), ``y = E`` and ``y_pred = 0``: every PIT and score is translation
    invariant, so the numbers are the same.

    Parameters
    ----------
    ds : xarray.Dataset

    Returns
    -------
    tuple of xarray.DataArray
        On dim ``point``.

    Examples
    --------
    >>> import uqviz
    >>> from uqviz.predictive import observed
    >>> y, yp = observed(uqviz.from_arrays([0.5, -1.0], [1.0, 1.0]))
    >>> y.values.tolist(), yp.values.tolist()
    ([0.5, -1.0], [0.0, 0.0])
    """
    check_dataset(ds)
    if gives_observed(ds):
        y = ds["y"].astype(float)
        return y, y - ds["E"]
    return ds["E"].astype(float), xr.zeros_like(ds["E"], dtype=float)


def standard_distribution(generative) -> Generative:
    """The unit-variance D of the forecast ``uE * D`` (one with a closed-form CDF).

    Examples
    --------
    >>> from uqviz.predictive.forecast import standard_distribution
    >>> standard_distribution("t6").name
    't6'
    """
    gen = get_generative(generative)
    if gen.kind not in CDF_KINDS:
        raise ValueError(
            f"generative: {gen.name!r} has no predictive CDF (its values come from "
            "the data's own z-scores, whose PIT would be uniform by construction); "
            "use 'normal', 't<nu>', 'laplace' or 'uniform'"
        )
    return gen


def standard_cdf(gen: Generative):
    """The CDF of the unit-variance D (elementwise).

    Examples
    --------
    >>> from uqviz.predictive.forecast import standard_cdf, standard_distribution
    >>> float(standard_cdf(standard_distribution("laplace"))(0.0))
    0.5
    """
    if gen.kind == "normal":
        return special.ndtr
    if gen.kind == "student_t":
        nu = gen.params["nu"]
        factor = np.sqrt(nu / (nu - 2.0))
        return lambda z: special.stdtr(nu, np.asarray(z) * factor)
    if gen.kind == "laplace":
        b = 1.0 / np.sqrt(2.0)
        return lambda z: np.where(
            np.asarray(z) < 0,
            0.5 * np.exp(np.asarray(z) / b),
            1.0 - 0.5 * np.exp(-np.asarray(z) / b),
        )
    half = np.sqrt(3.0)  # uniform on [-sqrt 3, sqrt 3]
    return lambda z: np.clip((np.asarray(z) + half) / (2.0 * half), 0.0, 1.0)


def _values(ds, values):
    """``values`` as float (point,) or (point, k): a scalar or one value per point."""
    m = ds.sizes["point"]
    v = np.asarray(values.values if isinstance(values, xr.DataArray) else values, dtype=float)
    if v.ndim == 0:
        v = np.full(m, float(v))
    if v.ndim not in (1, 2) or v.shape[0] != m:
        raise ValueError(
            f"values: expected a number, one value per point ({m}) or shape "
            f"(point, k); got shape {v.shape}"
        )
    return v


def quantile_table(ds, form):
    """``(q, p)``: the quantiles (n, L) and levels of a quantile or interval forecast.

    An interval of level L is the quantiles ``{(1 - L)/2: lower, 1/2: y_pred, (1 + L)/2: upper}``.
    """
    if form == "quantiles":
        return ds["quantiles"].transpose("point", "level").values.astype(float), ds[
            "level"
        ].values.astype(float)
    level = float(ds["lower"].attrs.get("level", ds.attrs.get("level")))
    y, yp = observed(ds)
    q = np.stack([ds["lower"].values, yp.values, ds["upper"].values], axis=1).astype(float)
    return q, np.array([(1.0 - level) / 2.0, 0.5, (1.0 + level) / 2.0])


def predictive_cdf(ds, values, *, generative="normal", side="right") -> np.ndarray:
    r"""Each point's predictive CDF at given values, for the forecast as given.

    Parameters
    ----------
    ds : xarray.Dataset
        One dataset (:func:`uqviz.from_predictions`, :func:`uqviz.from_arrays`).
    values : float or array_like, shape (point,) or (point, k)
        Values of y (absolute; in error space for a dataset without ``y``).
    generative : str or Generative, default "normal"
        D of the forecast ``uE * D`` (forms std and variance) and of the tails of a
        quantile or interval forecast: ``"normal"``, ``"t<nu>"``, ``"laplace"``,
        ``"uniform"``.
    side : {"right", "left"}, default "right"
        ``F(v)`` or its left limit ``F(v-)`` (they differ at an atom: tied members of an
        ensemble, tied quantiles).

    Returns
    -------
    numpy.ndarray
        Shaped like ``values`` (a scalar is broadcast to one value per point).

    Raises
    ------
    ValueError
        ``values`` of the wrong shape; a D without a closed-form CDF (``"empirical"``).

    See Also
    --------
    predictive_quantiles : the inverse.
    uqviz.pit : the CDF at the observed values.

    Notes
    -----
    With ``y_pred`` the prediction (:func:`observed`), by form:

    - std, variance: :math:`F(v) = F_D((v - y_\mathrm{pred}) / u_E)`;
    - quantiles :math:`q_1 < \dots < q_L` at levels :math:`p_1 < \dots < p_L`: linear
      between consecutive quantiles, and beyond the extreme ones the distribution D scaled
      by :math:`u_E` and shifted to pass through them,
      :math:`F(v) = F_D(z_1 + (v - q_1)/u_E)` for :math:`v < q_1` and
      :math:`F(v) = F_D(z_L + (v - q_L)/u_E)` for :math:`v > q_L`, with
      :math:`z_j = F_D^{-1}(p_j)`: continuous, and equal to :math:`p_j` at :math:`q_j`;
    - interval ``[lower, upper]`` of level L: the quantiles
      :math:`\{(1-L)/2: \mathrm{lower},\ 1/2: y_\mathrm{pred},\ (1+L)/2: \mathrm{upper}\}`;
    - samples :math:`s_1, \dots, s_S`: the empirical CDF
      :math:`F(v) = \#\{s_j \le v\}/S` (left limit: :math:`\#\{s_j < v\}/S`).

    Examples
    --------
    >>> import numpy as np, uqviz
    >>> from uqviz.predictive import predictive_cdf
    >>> ds = uqviz.from_predictions([1.0], [0.0], quantiles={0.1: [-1.0], 0.5: [0.0],
    ...                                                   0.9: [2.0]})
    >>> predictive_cdf(ds, [1.0]).tolist()  # half-way from 0.5 to 0.9
    [0.7]
    >>> ens = uqviz.from_predictions([1.0], None, samples=[[0.0, 1.0, 1.0, 2.0]])
    >>> predictive_cdf(ens, 1.0).tolist(), predictive_cdf(ens, 1.0, side="left").tolist()
    ([0.75], [0.25])
    """
    form = forecast_form(ds)
    v = _values(ds, values)
    side = _side(side)
    vv = v if v.ndim == 2 else v[:, None]
    if form == "samples":
        lo, hi = pit_kernels.ecdf_bounds(vv, ds["samples"].transpose("point", "sample").values)
        out = hi if side == "right" else lo
    else:
        gen = standard_distribution(generative)
        u = ds["uE"].values.astype(float)
        if form in ("std", "variance"):
            _, yp = observed(ds)
            out = standard_cdf(gen)((vv - yp.values[:, None]) / u[:, None])
        else:
            q, p = quantile_table(ds, form)
            out = pit_kernels.cdf_quantiles(vv, q, p, u, standard_cdf(gen), gen.ppf, side=side)
    return out if v.ndim == 2 else out[:, 0]


def _side(side):
    return checks.choice("side", side, ("right", "left"))


def predictive_quantiles(ds, levels, *, generative="normal") -> np.ndarray:
    r"""Each point's predictive quantiles at given levels (the inverse of :func:`predictive_cdf`).

    Parameters
    ----------
    ds : xarray.Dataset
    levels : sequence of float
        Probabilities in (0, 1), distinct.
    generative : str or Generative, default "normal"
        D of the forecast ``uE * D`` and of the tails of quantiles and intervals
        (:func:`predictive_cdf`).

    Returns
    -------
    numpy.ndarray, shape (point, level)
        Quantiles of y (absolute values; error space for a dataset without ``y``).

    See Also
    --------
    predictive_cdf : the CDF.

    Notes
    -----
    std, variance: :math:`y_\mathrm{pred} + u_E F_D^{-1}(p)`; quantiles and intervals: the
    inverse of the piecewise-linear CDF with the tails of D (:func:`predictive_cdf`), so a
    given level returns its given quantile; samples: the inverse empirical CDF, the smallest
    member :math:`s_{(\lceil pS \rceil)}` with :math:`F \ge p`.

    Examples
    --------
    >>> import uqviz
    >>> from uqviz.predictive import predictive_quantiles
    >>> ds = uqviz.from_predictions([1.0], [0.0], quantiles={0.1: [-1.0], 0.5: [0.0],
    ...                                                   0.9: [2.0]})
    >>> predictive_quantiles(ds, [0.5, 0.7]).round(12).tolist()
    [[0.0, 1.0]]
    """
    form = forecast_form(ds)
    p = checks.levels("levels", levels)
    if form == "samples":
        return pit_kernels.ecdf_quantiles(p, ds["samples"].transpose("point", "sample").values)
    gen = standard_distribution(generative)
    u = ds["uE"].values.astype(float)
    if form in ("std", "variance"):
        _, yp = observed(ds)
        return yp.values[:, None] + u[:, None] * gen.ppf(p)[None, :]
    q, lv = quantile_table(ds, form)
    return pit_kernels.quantiles_inverse(p, q, lv, u, gen.ppf)
