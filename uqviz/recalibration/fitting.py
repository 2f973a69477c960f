"""Recalibration of uncertainties: fit on calibration data, apply to new data, cross-fit.

Four methods map the uncertainties ``uE`` of a dataset to new ones ``uE'``:

- ``"scaling"`` (sigma scaling, Levi et al. (2022)): ``uE' = s uE`` with
  ``s = sqrt(<Z^2>) = sqrt(ZMS)`` of the calibration data, the factor minimising the Gaussian
  NLL of the scaled uncertainties;
- ``"linear"`` (Palmer et al. (2022)): ``uE' = a uE + b``, ``(a, b)`` minimising the mean
  Gaussian NLL ``<ln uE' + E^2 / (2 uE'^2)>`` under ``a >= 0`` and ``a u_min + b > 0``
  (``uE' > 0`` on the calibration range ``uE >= u_min``; ``b`` may be negative). New
  uncertainties below ``u_min`` are raised to it, ``uE' = a max(uE, u_min) + b``, so that
  ``uE'`` stays positive (as the isotonic fit clips);
- ``"bvs"`` (bin-wise variance scaling): ``uE' = f_k uE`` with ``f_k = sqrt(<Z^2>_k)`` in
  bin k of the conditioning variable (``uE`` or a feature); the bins are the equal-count bins
  of :func:`uqviz.local_calibration` cut on the calibration data (same default number); a
  new point takes the factor of the bin whose range holds it, else of the nearest bin;
- ``"isotonic"`` (Busk et al. (2022)): ``uE'^2 = g(uE^2)`` with g the increasing isotonic
  regression of ``E^2`` on ``uE^2``, with the semantics of
  ``sklearn.isotonic.IsotonicRegression(increasing=True, out_of_bounds="clip")``: ties of
  ``uE^2`` pooled, linear interpolation between the fitted points, clipped outside the
  calibration range. Floor: a fitted variance of 0 (a block of lowest uncertainties whose
  errors are all exactly 0) is raised to the smallest positive fitted variance, so that
  ``uE' > 0``; ``parameters["n_floored"]`` counts the calibration points concerned. The fit
  is a step function: the recalibrated uncertainties of the calibration points take one
  value per block, a stratification that equal-count bins split (Pernot (2023); Pernot
  (2023, stratification)): validate them with ``binning="stratified"``.

Three more methods repair the predictive distribution rather than ``uE`` (implemented in
``uqviz/recalibration/distribution.py``, dispatched from here): ``"conformal"`` (split conformal
intervals normalised by uE, Mondrian bins optional), ``"cqr"`` (conformalized quantile
regression) and ``"quantile"`` (isotonic recalibration of the PIT); they add ``lower``,
``upper`` (and ``quantiles``) and keep ``uE``.

:func:`fit_recalibration` returns a :class:`Recalibration`; :func:`recalibrate` cross-fits
(each of ``folds`` random folds recalibrated by a fit on the other folds), so that the result
can be validated on the same data honestly.

Examples
--------
>>> import uqviz
>>> ds = uqviz.synthetic.nig(2000, nu=6, rng=0)
>>> ds = ds.assign(uE=ds["uE"] / 3)  # uncertainties three times too small
>>> rec = uqviz.fit_recalibration(ds, method="scaling")
>>> round(float(rec.parameters["factor"]), 1)
3.0
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import xarray as xr

from uqviz._array import recalibration as recalibration_kernels
from uqviz.recalibration import distribution
from uqviz.data.model import check_dataset
from uqviz.engine import checks, seeds
from uqviz.engine.descriptions import describe
from uqviz.engine.options import data_group_codes
from uqviz.engine.binning import (
    SMALL_BIN,
    bin_coords,
    compute_bins,
    conditioning_values,
    default_n_bins,
)
from uqviz.engine.tree import datasets_of, naming_child
from uqviz.engine.warning_classes import BinningWarning

__all__ = ["Recalibration", "fit_recalibration", "recalibrate", "METHODS", "MIN_BIN_COUNT"]

METHODS = ("scaling", "linear", "bvs", "isotonic")  # the methods that map uE to a new uE
#: every method: those of uE and those of the distribution (recalibration/distribution.py)
ALL_METHODS = METHODS + distribution.METHODS
MIN_BIN_COUNT = 10  # fewest calibration points of a BVS bin: a variance factor needs some
_REQUIRED = {
    "scaling": ("factor",),
    "linear": ("a", "b", "u_min"),
    "bvs": ("factor",),
    "isotonic": ("uE2", "uE2_recalibrated"),
    **distribution.REQUIRED,
}
_FORMULAS = {
    "scaling": "uE' = s uE, s = sqrt(<Z^2>)",
    "linear": "uE' = a max(uE, u_min) + b, minimum Gaussian NLL, a >= 0",
    "bvs": "uE' = sqrt(<Z^2>_k) uE in bin k of {conditioning}",
    "isotonic": "uE'^2 = isotonic regression of E^2 on uE^2",
    **distribution.FORMULAS,
}
_DISTRIBUTION_DEFAULTS = {
    "level": None,
    "levels": None,
    "binning": "equal_count",
    "proportions": "quantile",
    "generative": None,
}


def _formula(method, attrs):
    return _FORMULAS[method].format(
        conditioning=attrs.get("conditioning", "uE"), proportions=attrs.get("proportions", "")
    )


# ---------------------------------------------------------------------------
# option checks
# ---------------------------------------------------------------------------
def _check_options(
    method,
    conditioning,
    n_bins,
    *,
    folds=None,
    rng=None,
    cross=False,
    data=None,
    **distribution_options,
):
    """Each option's own value first (``conditioning`` a variable of every dataset of
    ``data``), then their combination; the settings of a distribution method (None for the
    methods of uE)."""
    method = checks.choice("method", method, ALL_METHODS)
    n_bins = checks.optional_count("n_bins", n_bins)
    if cross:
        folds = checks.count("folds", folds, minimum=2)
        checks.rng(rng)
    if not isinstance(conditioning, str):
        raise TypeError(
            'conditioning must name a variable of the data ("uE" or a feature), '
            "so that the recalibration can find it in new data; got "
            f"{type(conditioning).__name__}"
        )
    for name, ds in [] if data is None else datasets_of(data):
        if conditioning not in ds.variables:
            where = "" if name is None else f" of dataset {name!r}"
            raise ValueError(
                f"conditioning variable {conditioning!r} is not in the dataset"
                f"{where}; variables: {', '.join(map(str, ds.data_vars))}"
            )
    if method in distribution.METHODS:
        settings = distribution.check_options(
            method, conditioning=conditioning, n_bins=n_bins, **distribution_options
        )
        return method, conditioning, n_bins, folds, settings
    given = [
        k
        for k, v in distribution_options.items()
        if v is not None and not (isinstance(v, str) and v == _DISTRIBUTION_DEFAULTS[k])
    ]
    if given:
        raise ValueError(
            f"{', '.join(given)}: only the distribution methods "
            f"{distribution.METHODS} take them (method={method!r})"
        )
    if method != "bvs" and conditioning != "uE":
        raise ValueError(
            f"conditioning={conditioning!r}: method={method!r} recalibrates as a "
            "function of uE; only method='bvs' bins on another variable"
        )
    if method != "bvs" and n_bins is not None:
        raise ValueError(f"n_bins={n_bins}: only method='bvs' has bins (method={method!r})")
    return method, conditioning, n_bins, folds, None


def _arrays(ds, conditioning, method):
    """E, uE and the conditioning values of a checked dataset."""
    check_dataset(ds)
    e = np.asarray(ds["E"].values, dtype=float)
    u = np.asarray(ds["uE"].values, dtype=float)
    x = conditioning_values(ds, conditioning)[1] if method == "bvs" else None
    return e, u, x


def _zero_variance(e, what="calibration set"):
    if not np.any(e != 0):
        raise ValueError(
            f"zero-variance fit: the {e.size} errors E of the {what} are all 0, "
            "so every recalibrated uncertainty would be 0"
        )


def _bvs_n_bins(m, n_bins):
    n = default_n_bins(m) if n_bins is None else n_bins
    if n * MIN_BIN_COUNT > m:
        raise ValueError(
            f"method='bvs': a calibration set of {m} points is too small for "
            f"n_bins = {n} (a bin needs at least {MIN_BIN_COUNT} points, so at "
            f"most {m // MIN_BIN_COUNT} bins); use fewer bins or more data"
        )
    return n


# ---------------------------------------------------------------------------
# fit and apply on arrays (one dataset)
# ---------------------------------------------------------------------------
def _fit_arrays(method, e, u, x, n_bins, *, where=""):
    """Parameters of one fit as ``{name: (dims, values)}``, coords and extra attrs."""
    m = e.size
    if m < 2:
        raise ValueError(
            f"data: the calibration set{where} holds {m} point(s): at least 2 are needed"
        )
    with np.errstate(over="ignore", invalid="ignore"):
        z2 = (e / u) ** 2
        squares = e * e + u * u if method == "isotonic" else z2
    bad = ~(np.isfinite(z2) & np.isfinite(squares))
    if bad.any():
        raise ValueError(
            f"E, uE: the Z-scores or squares overflow for {int(bad.sum())} "
            f"points of the calibration set{where}"
        )
    if method == "bvs":
        n = _bvs_n_bins(m, n_bins)
        bins = compute_bins(x, n_bins=n, binning="equal_count")
        factors = recalibration_kernels.bin_factors(
            e[bins.order], u[bins.order], bins.starts, bins.sizes
        )
        # ties split by equal-count bins: a point's factor is the one apply() gives its value
        # (the lower bin), so the fit is the per-bin ZMS of the bins as apply() assigns them
        label = recalibration_kernels.bin_lookup(bins.lower, bins.upper, x)
        count = np.bincount(label, minlength=n)
        by_value = np.sqrt(np.bincount(label, weights=z2, minlength=n) / np.maximum(count, 1))
        factors = np.where(count > 0, by_value, factors)
        zero = factors == 0
        if zero.any():
            raise ValueError(
                f"zero-variance fit: in {int(zero.sum())} of {n} bins the errors E "
                f"are all 0 (bins {np.flatnonzero(zero)[:5].tolist()}, "
                f"{int(bins.sizes[zero].sum())} points); use fewer bins"
            )
        small = int(np.sum(bins.sizes < SMALL_BIN))
        if small:
            warnings.warn(
                f"method='bvs': {small} of {n} bins{where} hold fewer than "
                f"{SMALL_BIN} points: their factors are noisy",
                BinningWarning,
                stacklevel=4,
            )
        return (
            {"factor": ("bin", factors)},
            bin_coords(bins),
            {"n_bins": int(n), "binning": "equal_count"},
        )
    _zero_variance(e, "calibration set" + where)
    if method == "scaling":
        return {"factor": ((), recalibration_kernels.scaling_factor(e, u))}, {}, {}
    if method == "linear":
        with np.errstate(all="ignore"):
            a, b, nll = recalibration_kernels.fit_linear(e, u)
        if not np.isfinite(nll):
            raise ValueError(
                f"uE: the linear fit failed on the calibration set{where} (the NLL "
                "is not finite: uncertainties too spread to scale)"
            )
        return (
            {"a": ((), a), "b": ((), b), "u_min": ((), float(u.min())), "nll": ((), nll)},
            {},
            {},
        )
    x_k, y_k, n_floored = recalibration_kernels.isotonic_knots(u * u, e * e)
    return (
        {
            "uE2": ("knot", x_k),
            "uE2_recalibrated": ("knot", y_k),
            "floor": ((), float(y_k.min())),
            "n_floored": ((), n_floored),
        },
        {"knot": np.arange(x_k.size)},
        {},
    )


def _apply_arrays(method, p, u, x):
    """New uncertainties from the parameters ``p`` (dict of arrays) of one fit."""
    if method == "scaling":
        return p["factor"] * u
    if method == "linear":
        return p["a"] * np.maximum(u, p["u_min"]) + p["b"]
    if method == "bvs":
        return p["factor"][recalibration_kernels.bin_lookup(p["bin_lower"], p["bin_upper"], x)] * u
    return np.sqrt(recalibration_kernels.isotonic_predict(p["uE2"], p["uE2_recalibrated"], u * u))


def _check_new(new, where=""):
    bad = ~(np.isfinite(new) & (new > 0))
    if bad.any():
        raise ValueError(
            f"uE: the recalibrated uncertainties of {int(bad.sum())} points{where} "
            "are not finite and positive (Z-scores or uE overflow)"
        )
    return new


def _assign(ds, new, attrs):
    """``ds`` with the new ``uE`` and the old one as ``uE_original``."""
    if "uE_original" in ds.variables:
        raise ValueError(
            "data: already holds uE_original (recalibrated data); recalibrate the "
            "original data, or drop uE_original first to recalibrate again"
        )
    old = ds["uE"]
    out = ds.assign(uE=("point", new, dict(old.attrs)), uE_original=old)
    out["uE_original"].attrs = {**old.attrs, "long_name": "uncertainty before recalibration"}
    out.attrs = {**ds.attrs, **attrs}
    return out


# ---------------------------------------------------------------------------
# the Recalibration object
# ---------------------------------------------------------------------------
def _one_fit(params):
    """``{name: float ndarray}`` of a one-dataset parameters Dataset (tree padding dropped)."""
    method = params.attrs["method"]
    if method in ("bvs", "isotonic") + distribution.METHODS:
        key = _REQUIRED[method][0]
        if params[key].isnull().any():
            params = params.where(params[key].notnull(), drop=True)
    return {
        k: np.asarray(v.values, dtype=float)
        for k, v in params.variables.items()
        if np.issubdtype(v.dtype, np.number)
    }


class Recalibration:
    """A fitted recalibration of uncertainties; :meth:`apply` maps data to new ``uE``.

    Built by :func:`fit_recalibration`; everything it needs is its ``parameters`` Dataset
    (so a recalibration saved with ``parameters.to_netcdf`` is rebuilt by
    ``Recalibration(parameters=xr.open_dataset(...))``).

    Parameters
    ----------
    parameters : xarray.Dataset
        attrs ``method``, ``conditioning`` (and ``n_bins`` for ``"bvs"``); variables:
        ``factor`` (``"scaling"``; ``"bvs"``, on ``bin`` with coords ``bin_lower``,
        ``bin_upper``, ``bin_center``, ``count``), ``a``, ``b``, ``u_min``, ``nll`` (the
        minimum mean NLL without the constant ``ln sqrt(2 pi)``; ``"linear"``),
        ``uE2``, ``uE2_recalibrated`` on ``knot``, ``floor``, ``n_floored``
        (``"isotonic"``); ``score_quantile``, ``score_rank`` on ``bin`` (``"conformal"``,
        ``"cqr"``; attrs ``level``, ``binning``, ``n_bins``); ``observed``, ``nominal`` on
        ``knot`` (``"quantile"``; attrs ``level``, ``levels``, ``proportions``,
        ``generative``, ``forecast``: the form fitted); every fit records ``generative``, the D of
        the forecast ``uE * D`` (the option of ``"quantile"``, else the data's
        ``attrs["generative"]``, else ``"normal"``); ``n_points``,
        the size of the calibration set. A leading
        ``dataset`` dim when fitted on a DataTree (one fit per child).

    Attributes
    ----------
    method, conditioning : str
    parameters : xarray.Dataset
    datasets : list of str or None
        The children fitted (a DataTree fit), else None.

    Examples
    --------
    >>> import uqviz
    >>> ds = uqviz.synthetic.nig(2000, nu=6, rng=0)
    >>> rec = uqviz.fit_recalibration(ds, method="linear")
    >>> sorted(rec.apply(ds).data_vars)
    ['E', 'uE', 'uE_original']
    """

    def __init__(self, *, parameters):
        if not isinstance(parameters, xr.Dataset):
            raise TypeError(
                f"parameters must be an xarray.Dataset, got {type(parameters).__name__}"
            )
        method = parameters.attrs.get("method")
        checks.choice("method", method, ALL_METHODS)
        missing = [v for v in _REQUIRED[method] if v not in parameters.variables]
        if missing:
            raise ValueError(f"parameters of method={method!r} lack {missing}")
        self.parameters = parameters
        self.method = method
        self.conditioning = parameters.attrs.get("conditioning", "uE")
        if "dataset" in parameters.dims:
            self.datasets = [str(n) for n in parameters["dataset"].values]
            self._fits = {n: _one_fit(parameters.sel(dataset=n)) for n in self.datasets}
        else:
            self.datasets = None
            self._fits = {None: _one_fit(parameters)}

    def __getitem__(self, name):
        """The fit of one child of a DataTree fit, as a one-dataset Recalibration."""
        if self.datasets is None or name not in self.datasets:
            raise KeyError(f"{name!r}: the datasets fitted are {self.datasets}")
        params = self.parameters.sel(dataset=name).drop_vars("dataset")
        if self.method in ("bvs", "isotonic") + distribution.METHODS:  # drop the padding
            params = params.where(params[_REQUIRED[self.method][0]].notnull(), drop=True)
        return Recalibration(parameters=params)

    def _attrs(self):
        attrs = {
            "method": self.method,
            "conditioning": self.conditioning,
            "recalibration": _formula(self.method, self.parameters.attrs),
        }
        if self.method in distribution.METHODS:
            attrs.update(self._settings())
        if "n_bins" in self.parameters.attrs:
            attrs["n_bins"] = int(self.parameters.attrs["n_bins"])
        return attrs

    def _settings(self):
        """The settings of a distribution method, from the parameters' attrs."""
        keep = (
            "method",
            "conditioning",
            "level",
            "levels",
            "binning",
            "proportions",
            "n_bins",
            "generative",
            "forecast",
        )
        return {k: v for k, v in self.parameters.attrs.items() if k in keep}

    def _apply_one(self, ds, fit, where=""):
        check_dataset(ds)
        if self.method in distribution.METHODS:
            settings = self._settings()
            return distribution.assign_outputs(
                ds, distribution.apply_fit(ds, fit, settings, where), settings, self._attrs()
            )
        u = np.asarray(ds["uE"].values, dtype=float)
        x = (
            conditioning_values(ds, self.conditioning, allow_constant=True)[1]
            if self.method == "bvs"
            else None
        )
        with np.errstate(over="ignore", invalid="ignore"):
            new = _check_new(_apply_arrays(self.method, fit, u, x), where)
        return _assign(ds, new, self._attrs())

    def apply(self, data):
        """Recalibrate ``data``: a Dataset with the new ``uE`` and the old one as ``uE_original``.

        Parameters
        ----------
        data : xarray.Dataset or xarray.DataTree
            With ``uE`` (and the conditioning feature for ``"bvs"``). A fit on a DataTree
            applies to a DataTree with the same children (each child by its own fit); a
            one-dataset fit applies to a Dataset or to every child of a DataTree.

        Returns
        -------
        xarray.Dataset or xarray.DataTree
            ``data`` with ``uE`` replaced and ``uE_original`` added; attrs ``method``,
            ``conditioning``, ``n_bins`` (``"bvs"``) and ``recalibration`` (the formula). The
            distribution methods keep ``uE`` and add ``lower``, ``upper`` (and
            ``quantiles``), as :func:`recalibrate`.

        Raises
        ------
        ValueError
            The conditioning feature is missing, ``data`` already holds ``uE_original``, or
            the children of a DataTree do not match the fit.

        Examples
        --------
        >>> import uqviz
        >>> cal = uqviz.synthetic.nig(2000, nu=6, rng=0)
        >>> new = uqviz.synthetic.nig(500, nu=6, rng=1)
        >>> rec = uqviz.fit_recalibration(cal, method="isotonic")
        >>> out = rec.apply(new)
        >>> bool((out["uE_original"] == new["uE"]).all()), out.attrs["method"]
        (True, 'isotonic')
        """
        pairs = datasets_of(data, variables=("uE",))
        if self.datasets is not None:
            if not isinstance(data, xr.DataTree):
                raise ValueError(
                    f"data: this recalibration was fitted on a DataTree of "
                    f"{len(self.datasets)} datasets {self.datasets}; apply it to "
                    "a DataTree with these children, or select one fit with "
                    "rec[name]"
                )
            unknown = [n for n, _ in pairs if n not in self._fits]
            if unknown:
                raise ValueError(
                    f"data: children {unknown} were not fitted (fitted: {self.datasets})"
                )
            fits = [self._fits[n] for n, _ in pairs]
        else:
            fits = [self._fits[None]] * len(pairs)
        if isinstance(data, xr.Dataset):
            return self._apply_one(data, fits[0])
        tree = xr.DataTree.from_dict(
            {n: self._apply_one(ds, f, f" of dataset {n!r}") for (n, ds), f in zip(pairs, fits)}
        )
        tree.attrs = dict(data.attrs)
        return tree

    # -- display -----------------------------------------------------------------------
    def _summary(self, p):
        if self.method in distribution.METHODS:
            return distribution.summary(self.method, p)
        if self.method == "scaling":
            return f"s = {float(p['factor']):.4g}"
        if self.method == "linear":
            return f"a = {float(p['a']):.4g}, b = {float(p['b']):.4g}"
        if self.method == "bvs":
            f = p["factor"]
            return (
                f"{f.size} bins of {self.conditioning}, factors {f.min():.3g} to "
                f"{f.max():.3g} (median {np.median(f):.3g})"
            )
        return (
            f"{p['uE2'].size} knots, uE'^2 from {p['uE2_recalibrated'].min():.3g} to "
            f"{p['uE2_recalibrated'].max():.3g}, {int(p['n_floored'])} points floored"
        )

    def _lines(self):
        head = (
            f"Recalibration(method={self.method!r}, conditioning={self.conditioning!r}"
            + (
                f", n_bins={int(self.parameters.attrs['n_bins'])}"
                if "n_bins" in self.parameters.attrs
                else ""
            )
            + ")"
        )
        lines = [head, "  " + _formula(self.method, self.parameters.attrs)]
        for name, p in self._fits.items():
            label = "fitted" if name is None else f"{name}: fitted"
            lines.append(f"  {label} on {int(p['n_points'])} points: {self._summary(p)}")
        return lines

    def __repr__(self):
        return "\n".join(self._lines())

    def _repr_html_(self):
        import html

        head = "<br>".join(html.escape(line) for line in self._lines())
        return f"<div><pre>{head}</pre>{self.parameters._repr_html_()}</div>"


# ---------------------------------------------------------------------------
# public functions
# ---------------------------------------------------------------------------
def _parameters(method, conditioning, e, u, x, n_bins, where=""):
    data_vars, coords, extra = _fit_arrays(method, e, u, x, n_bins, where=where)
    params = xr.Dataset(data_vars, coords=coords)
    params["n_points"] = ((), e.size)
    params.attrs = {
        "method": method,
        "conditioning": conditioning,
        **extra,
        "recalibration": _FORMULAS[method].format(conditioning=conditioning),
    }
    return params


def fit_recalibration(
    data,
    *,
    method,
    conditioning="uE",
    n_bins=None,
    level=None,
    levels=None,
    binning="equal_count",
    proportions="quantile",
    generative=None,
):
    r"""Fit a recalibration of the uncertainties on calibration data.

    Parameters
    ----------
    data : xarray.Dataset or xarray.DataTree
        Calibration data (``E``, ``uE``, features). A DataTree gives one fit per child.
    method : {"scaling", "linear", "bvs", "isotonic", "conformal", "cqr", "quantile"}
        ``"scaling"``: ``uE' = s uE``, ``s = sqrt(<Z^2>)`` (sigma scaling, NLL-optimal);
        ``"linear"``: ``uE' = a uE + b`` by minimum Gaussian NLL with ``a >= 0`` and
        ``uE' > 0`` on the calibration range (Palmer et al. (2022)), new ``uE`` below the
        range raised to its minimum; ``"bvs"``: bin-wise variance scaling, factor
        ``sqrt(<Z^2>)`` per equal-count bin of ``conditioning``; ``"isotonic"``:
        ``uE'^2`` = isotonic regression of ``E^2`` on ``uE^2`` (Busk et al. (2022)), with
        a floor against zero variances. The distribution methods (``uE`` kept, the new
        forecast added): ``"conformal"``: the interval ``y_pred +- s uE``, ``s`` the
        ``ceil((n + 1) level)``-th smallest ``|E|/uE`` (per Mondrian bin); ``"cqr"``: the
        given quantiles ``(1 -+ level)/2`` (or interval at ``level``) widened by the
        ``ceil((n + 1) level)``-th smallest ``max(q_lo - y, y - q_hi)``; ``"quantile"``: the
        isotonic recalibration of the PIT (Kuleshov et al. (2018)). Formulas in the glossary,
        under Recalibration. Forms of the forecast (``attrs["forecast"]``) each takes:
        ``"conformal"`` every form (it reads ``E`` and ``uE``); ``"cqr"`` quantiles holding the
        levels ``(1 -+ level)/2``, or an interval at ``level``; ``"quantile"`` every form,
        through its predictive CDF and quantiles (``uqviz.predictive``), and applies to new
        data of the form fitted.
    conditioning : str, default "uE"
        The variable the ``"bvs"`` bins (and the Mondrian bins of ``"conformal"``, ``"cqr"``)
        are cut on: ``"uE"`` or a feature (the other methods are functions of ``uE``).
    n_bins : int, optional
        ``"bvs"``: number of equal-count bins; default as :func:`uqviz.local_calibration`,
        ``min(round(sqrt(M)), M // 100)``, at least 1. A bin needs at least 10 points.
        ``"conformal"``, ``"cqr"``: Mondrian equal-count bins; default one bin (no Mondrian).
    level : float, optional
        ``"conformal"``, ``"cqr"``, ``"quantile"``: the nominal coverage in (0, 1) of the
        central interval made; default None, 0.9.
    levels : sequence of float, optional
        ``"quantile"``: the levels of the recalibrated quantiles; default None, the given
        levels of a quantile forecast, else the 99 levels 0.01, ..., 0.99.
    binning : {"equal_count", "stratified"}, default "equal_count"
        ``"conformal"``, ``"cqr"``: ``"stratified"`` makes one Mondrian bin per distinct value
        of ``conditioning`` (categories, crepes' ``bins``).
    proportions : {"quantile", "interval"}, default "quantile"
        ``"quantile"``: the observed proportions the isotonic map is fitted on: below each
        quantile (the PIT; quantiles and the interval from them), or inside each central
        interval (the interval at ``level`` only; uncertainty-toolbox's interval recalibrator).
    generative : str or Generative, optional
        ``"quantile"``: D of the forecast ``uE * D`` (forms std, variance) and of the tails of
        quantiles and intervals (:func:`uqviz.predictive.predictive_cdf`): ``"normal"``,
        ``"t<nu>"``, ``"laplace"``, ``"uniform"``; default None, the data's
        ``attrs["generative"]`` (recorded by :func:`uqviz.from_predictions`), else normal.
        Recorded in ``parameters.attrs["generative"]``; ``apply`` uses it.

    Returns
    -------
    Recalibration
        ``.parameters`` (an xarray.Dataset), ``.apply(data)``.

    Raises
    ------
    ValueError
        Unknown method; ``conditioning`` or ``n_bins`` given to a method without bins; a
        conditioning feature missing; a calibration set too small for the bins (or under 2
        points); a zero-variance fit (all errors 0, in the set or in a bin); ``level``,
        ``levels``, ``binning``, ``proportions``, ``generative`` given to a method that does
        not take them; ``"cqr"`` on data without quantiles (or an interval) at ``level`` (the
        message lists the given levels; an ensemble is refused), or with NaN or crossed
        bounds; ``"quantile"`` with a D without a closed-form CDF (``"empirical"``).

    Warns
    -----
    BinningWarning
        ``"bvs"`` bins below 100 points; equal-count bins that split tied values.
    UnreliableWarning
        ``"conformal"``, ``"cqr"``: a bin too small for ``level`` (``ceil((n + 1) level) >
        n``): its intervals are the whole line.

    See Also
    --------
    uqviz.recalibrate : cross-fitted recalibration, to validate on the same data.
    uqviz.plots.recalibration.before_after : draws a validation before and after.

    Notes
    -----
    With :math:`Z = E / u_E` on the calibration data,

    .. math::

       \text{scaling: } u_E' = s u_E, \ s = \sqrt{\langle Z^2 \rangle}; \qquad
       \text{linear: } u_E' = a u_E + b; \qquad
       \text{BVS: } u_E' = s_b u_E, \ s_b = \sqrt{\langle Z^2 \rangle_b};

    isotonic: :math:`u_E'^2 = g(u_E^2)`, :math:`g` the isotonic regression of :math:`E^2` on
    :math:`u_E^2`. Scaling is sigma scaling (Laves et al. (2020)); linear minimises the Gaussian
    NLL (Palmer et al. (2022)); BVS scales each bin :math:`b` (Frenkel & Goldberger (2023);
    Pernot (2023, BVS)); isotonic follows Busk et al. (2022), and stratifies the uncertainties
    (Pernot (2023, stratification)).

    Conformal (Vovk et al. (2005); Papadopoulos et al. (2008); Mondrian, Boström et al.
    (2017)): with the scores :math:`s_i = |E_i| / u_{E,i}` of the :math:`n` calibration points
    of a bin and :math:`k = \lceil (n + 1) \ell \rceil`, the interval of a new point is
    :math:`\hat y \pm s_{(k)} u_E` (:math:`\hat y = y - E`, 0 without ``y``). CQR (Romano
    et al. (2019)): :math:`[q_{lo} - Q, q_{hi} + Q]`, :math:`Q` the :math:`k`-th smallest
    :math:`\max(q_{lo} - y, y - q_{hi})`. Under exchangeability of the calibration points and
    the new one, :math:`\ell \le P(y \in \text{interval}) \le \ell + 1/(n + 1)` (the
    upper bound without tied scores): a marginal guarantee, which says nothing of the coverage
    at a given uE or feature value (Mondrian bins give it per bin). :math:`k > n` gives
    :math:`(-\infty, \infty)`. The level is read as the decimal it prints (0.9 is 9/10):
    crepes' ``ConformalRegressor`` computes its rank in floating point and takes one rank more
    when :math:`(n + 1)(1 - \ell)` is an integer and ``1 - level`` rounds down (0.9).
    Quantile (Kuleshov et al. (2018)): on the 100 nominal :math:`p_j` of ``linspace(0, 1,
    100)``, the observed :math:`\hat P_j = \#\{F_i(y_i) \le p_j\} / n`, :math:`F_i` the
    predictive CDF of point :math:`i` (:func:`uqviz.predictive.predictive_cdf`);
    :math:`R^{-1}` is the isotonic regression of :math:`p_j` on :math:`\hat P_j` (clipped),
    and the recalibrated quantile at :math:`\tau` is
    :math:`Q_i(R^{-1}(\tau))`, :math:`Q_i = \inf\{x : F_i(x) \ge p\}`
    (:func:`uqviz.predictive.predictive_quantiles`; :math:`-\infty` at 0, :math:`+\infty`
    at 1 except for an ensemble, its largest member). The standard form counts
    :math:`Z = E/u_E \le F_D^{-1}(p_j)` and gives :math:`\hat y + u_E F_D^{-1}(R^{-1}(\tau))`,
    as uncertainty-toolbox 0.1.1's quantile recalibrator for the normal D (which counts on
    :math:`-E`, ``y_pred - y_true``). Quantiles and intervals: the piecewise-linear CDF with
    the tails of D. An ensemble of S members: :math:`F_i(y) = \#\{s_j \le y\}/S`, the
    empirical CDF whose inverse gives the quantiles (not the randomised PIT of
    :func:`uqviz.pit`, whose (S + 1)-point scale the quantiles would not invert, and which
    needs a random stream): then :math:`P(y \le Q(a)) = P(F(y) \le a)` holds exactly, so
    the map is Kuleshov's. Its recalibrated quantiles are members: levels finer than
    :math:`1/S`, or beyond the share of y outside the members' range, are out of reach. The
    100 nominal probabilities limit the map in the tails (below 0.01 and above 0.99) for any
    form.

    References
    ----------
    - Laves et al. (2020): sigma scaling.
    - Palmer et al. (2022): linear recalibration by minimum NLL.
    - Frenkel & Goldberger (2023): bin-wise variance scaling.
    - Pernot (2023, BVS): BVS and its validation by LZMS.
    - Busk et al. (2022): isotonic recalibration.
    - Pernot (2023, stratification): the stratification isotonic recalibration creates.
    - Vovk et al. (2005), Papadopoulos et al. (2008), Boström et al. (2017): normalised and
      Mondrian split conformal prediction.
    - Romano et al. (2019): conformalized quantile regression.
    - Kuleshov et al. (2018): quantile recalibration of the PIT.

    Full entries: :doc:`/docs/references`.

    Examples
    --------
    >>> import uqviz
    >>> cal = uqviz.synthetic.nig(2000, nu=6, rng=0)
    >>> conf = uqviz.fit_recalibration(cal, method="conformal", level=0.9)
    >>> int(conf.parameters["score_rank"].item())  # ceil(2001 * 0.9)
    1801
    >>> ds = uqviz.synthetic.nig(5000, nu=6, rng=0)
    >>> ds = ds.assign(uE=ds["uE"] / 2)
    >>> rec = uqviz.fit_recalibration(ds, method="bvs", n_bins=10)
    >>> rec.parameters["factor"].sizes["bin"], bool((rec.parameters["factor"] > 1.5).all())
    (10, True)
    >>> round(float(uqviz.validate_average(rec.apply(ds), n_boot=500, rng=0)
    ...             .sel(statistic="ZMS").estimate), 6)
    1.0
    """
    method, conditioning, n_bins, _, settings = _check_options(
        method,
        conditioning,
        n_bins,
        data=data,
        level=level,
        levels=levels,
        binning=binning,
        proportions=proportions,
        generative=generative,
    )
    pairs = datasets_of(data)
    fits = []
    for name, ds in pairs:
        where = "" if name is None else f" (dataset {name!r})"
        with naming_child(name):
            if settings is not None:
                check_dataset(ds)
                fits.append(describe(distribution.fit_parameters(ds, settings, where), ds))
            else:
                e, u, x = _arrays(ds, conditioning, method)
                fits.append(describe(_parameters(method, conditioning, e, u, x, n_bins, where), ds))
        # the D of the forecast uE * D (read by "quantile"; the data's, else normal)
        fits[-1].attrs.setdefault("generative", str(ds.attrs.get("generative", "normal")))
    if isinstance(data, xr.Dataset):
        return Recalibration(parameters=fits[0])
    names = [n for n, _ in pairs]
    params = xr.concat(
        fits,
        dim=xr.DataArray(names, dims="dataset", name="dataset"),
        coords="different",
        compat="equals",
        join="outer",
        combine_attrs="drop_conflicts",
    )
    params.attrs.update({"method": method, "conditioning": conditioning, **(settings or {})})
    return Recalibration(parameters=params)


def _fold_labels(m, folds, rng, codes=None):
    """Fold of each point: a random permutation cut into ``folds`` near-equal parts; with group
    codes, of the groups (a group never split between a fit and its test fold)."""
    n = m if codes is None else int(codes.max()) + 1
    if codes is not None and folds > n:
        raise ValueError(f"folds = {folds} is more than the {n} groups of the data")
    labels = np.empty(n, dtype=np.int64)
    for k, part in enumerate(np.array_split(rng.permutation(n), folds)):
        labels[part] = k
    return labels if codes is None else labels[codes]


def _reissue_once(caught, folds):
    """Each kind of warning caught in the folds' fits once, with the count of folds."""
    kinds = {}
    for w in caught:
        key = re.sub(r" without fold \d+", "", str(w.message))
        kinds.setdefault(key, [w.category, 0])[1] += 1
    for text, (category, n) in kinds.items():
        warnings.warn(f"{text} (in the fits of {n} of {folds} folds)", category, stacklevel=5)


def _cross_fit_distribution(ds, labels, folds, settings, where):
    """The distribution methods cross-fitted: fold k's forecast from a fit on the others."""
    check_dataset(ds)
    settings = distribution.resolve_settings(ds, settings)

    def fit_one(train, k):
        params = distribution.fit_parameters(train, settings, f"{where} without fold {k}")
        return _one_fit(params), settings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        new = distribution.fold_outputs(ds, labels, folds, fit_one)
    _reissue_once(caught, folds)
    attrs = {
        **settings,
        **({"folds_by": "groups"} if data_group_codes(ds) is not None else {}),
        "folds": folds,
        "recalibration": _formula(settings["method"], settings)
        + f"; cross-fitted on {folds} folds",
    }
    return distribution.assign_outputs(ds, new, settings, attrs)


def _recalibrate_one(ds, rng, *, method, folds, conditioning, n_bins, name, settings=None):
    where = "" if name is None else f" (dataset {name!r})"
    if settings is not None:
        check_dataset(ds)
        e, u, x = np.asarray(ds["E"].values), None, None
    else:
        e, u, x = _arrays(ds, conditioning, method)
    m = e.size
    if folds > m:
        raise ValueError(f"folds = {folds} is more than the {m} points of the data{where}")
    codes = data_group_codes(ds)
    labels = _fold_labels(m, folds, rng, codes)
    smallest = m - int(np.bincount(labels).max())
    if smallest < 2:
        raise ValueError(
            f"folds = {folds}: a fit on the other folds would use {smallest} of "
            f"the {m} points of the data{where}; at least 2 are needed"
        )
    if settings is not None:
        return _cross_fit_distribution(ds, labels, folds, settings, where)
    n_used = None
    if method == "bvs":  # one bin count for every fold, from the smallest calibration set
        n_used = _bvs_n_bins(smallest, n_bins)
    new = np.empty(m)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for k in range(folds):
            test = labels == k
            train = ~test
            data_vars, coords, _ = _fit_arrays(
                method,
                e[train],
                u[train],
                None if x is None else x[train],
                n_used,
                where=f"{where} without fold {k}",
            )
            p = {key: np.asarray(v[1], dtype=float) for key, v in data_vars.items()}
            p.update(
                {
                    key: np.asarray(v[1], dtype=float)
                    for key, v in coords.items()
                    if isinstance(v, tuple)
                }
            )
            with np.errstate(over="ignore", invalid="ignore"):
                new[test] = _apply_arrays(method, p, u[test], None if x is None else x[test])
    _reissue_once(caught, folds)  # each kind of warning once, not once per fold
    _check_new(new, where)
    attrs = {
        "method": method,
        "folds": folds,
        "conditioning": conditioning,
        "recalibration": (
            _FORMULAS[method].format(conditioning=conditioning) + f"; cross-fitted on {folds} folds"
        ),
    }
    if n_used is not None:
        attrs.update({"n_bins": int(n_used), "binning": "equal_count"})
    if codes is not None:
        attrs["folds_by"] = "groups"
    return _assign(ds, new, attrs)


def recalibrate(
    data,
    *,
    method,
    folds=5,
    rng=None,
    conditioning="uE",
    n_bins=None,
    level=None,
    levels=None,
    binning="equal_count",
    proportions="quantile",
    generative=None,
):
    r"""Cross-fitted recalibration: each fold's uncertainties from a fit on the other folds.

    The points are split into ``folds`` random folds of near-equal size; the points of fold k
    are recalibrated by :func:`fit_recalibration` fitted on the points of the other folds.
    When the points carry a ``group`` coordinate (the atoms of one structure), the folds are
    folds of whole groups: no group is split between a fit and its test fold, so correlated
    points do not leak a group's errors into its own recalibration (attrs ``folds_by``).
    No point is recalibrated by a fit that saw its error, so validating the result on the
    same data (average calibration, consistency, adaptivity, coverage) is honest, as
    validating a fit on held-out data is.

    Parameters
    ----------
    data : xarray.Dataset or xarray.DataTree
        Data to recalibrate (``E``, ``uE``, features); a DataTree is recalibrated dataset by
        dataset.
    method : {"scaling", "linear", "bvs", "isotonic", "conformal", "cqr", "quantile"}
        The recalibration fitted on each fold's complement (required): sigma scaling, linear
        ``a uE + b``, bin-wise variance scaling or isotonic regression of uE; conformal
        intervals, CQR or quantile recalibration of the distribution, as in
        :func:`fit_recalibration`.
    folds : int, default 5
        Number of folds (>= 2, at most the number of points).
    rng : None, int, numpy.random.SeedSequence or numpy.random.Generator, default None
        Random stream that draws the folds (each dataset of a DataTree gets its own child
        stream); None (fresh entropy), an int >= 0, a numpy.random.SeedSequence (copied, never
        consumed) or a numpy.random.Generator; the same ``rng`` gives the same numbers on any
        number of threads or workers (docs/conventions.md, "Randomness").
    conditioning : str, default "uE"
        ``"bvs"``: the variable the bins are cut on.
    n_bins : int, optional
        ``"bvs"``: bins per fit (one count for every fold; default from the smallest
        calibration set, as :func:`fit_recalibration`); ``"conformal"``, ``"cqr"``: Mondrian
        equal-count bins per fit (default one bin).
    level : float, optional
        ``"conformal"``, ``"cqr"``, ``"quantile"``: nominal coverage of the interval made;
        default None, 0.9.
    levels : sequence of float, optional
        ``"quantile"``: levels of the recalibrated quantiles; default None, the given levels
        of a quantile forecast, else 0.01, ..., 0.99.
    binning : {"equal_count", "stratified"}, default "equal_count"
        ``"conformal"``, ``"cqr"``: ``"stratified"``, one Mondrian bin per distinct value.
    proportions : {"quantile", "interval"}, default "quantile"
        ``"quantile"``: the proportions the isotonic map is fitted on, as
        :func:`fit_recalibration`.
    generative : str or Generative, optional
        ``"quantile"``: D of the forecast ``uE * D`` and of the tails of quantiles and
        intervals; default None, the data's ``attrs["generative"]``, else normal (as
        :func:`fit_recalibration`).

    Returns
    -------
    xarray.Dataset or xarray.DataTree
        ``data`` with the new ``uE`` and the old one as ``uE_original``; attrs ``method``,
        ``folds``, ``rng``, ``conditioning``, ``n_bins`` (``"bvs"``), ``recalibration``. The
        distribution methods keep ``uE`` and add ``lower``, ``upper`` (attrs ``level``;
        absolute values of y, the prediction ``y - E``, 0 without ``y``) and, for
        ``"quantile"``, ``quantiles`` (dims ``point``, ``level``; given quantiles kept as
        ``quantiles_original`` on ``level_original``); attrs ``level``, ``forecast``
        (``"interval"`` or ``"quantiles"``) and their options. ``"quantile"`` takes every
        form of the forecast (std, variance, interval, quantiles, samples), ``"conformal"``
        too, ``"cqr"`` quantiles or an interval.

    Raises
    ------
    ValueError
        As :func:`fit_recalibration` (each fold's calibration set is checked); ``folds``
        larger than the data.

    See Also
    --------
    uqviz.fit_recalibration : fit once, apply to new data.
    uqviz.report : its Remedy section recalibrates by every method.
    uqviz.plots.recalibration.before_after : draws a validation before and after.

    Notes
    -----
    With :math:`Z = E / u_E` on the calibration data,

    .. math::

       \text{scaling: } u_E' = s u_E, \ s = \sqrt{\langle Z^2 \rangle}; \qquad
       \text{linear: } u_E' = a u_E + b; \qquad
       \text{BVS: } u_E' = s_b u_E, \ s_b = \sqrt{\langle Z^2 \rangle_b};

    isotonic: :math:`u_E'^2 = g(u_E^2)`, :math:`g` the isotonic regression of :math:`E^2` on
    :math:`u_E^2`. Scaling is sigma scaling (Laves et al. (2020)); linear minimises the Gaussian
    NLL (Palmer et al. (2022)); BVS scales each bin :math:`b` (Frenkel & Goldberger (2023);
    Pernot (2023, BVS)); isotonic follows Busk et al. (2022), and stratifies the uncertainties
    (Pernot (2023, stratification)).

    Cross-fitting: with folds :math:`F_1, \dots, F_K`, the points of :math:`F_k` get
    :math:`u_E' = g_{-k}(u_E)`, :math:`g_{-k}` fitted on the other folds. The conformal
    intervals of fold :math:`k` come from the :math:`n_{-k}` points of the other folds: the
    marginal coverage of the cross-fitted intervals lies between ``level`` and
    ``level + 1/(n_{-k} + 1)`` under exchangeability (Vovk et al. (2005); Romano et al.
    (2019)); the coverage in bins of uE or of a feature is not guaranteed (check it with
    Mondrian bins or :func:`uqviz.local_calibration`).

    References
    ----------
    - Laves et al. (2020): sigma scaling.
    - Palmer et al. (2022): linear recalibration by minimum NLL.
    - Frenkel & Goldberger (2023): bin-wise variance scaling.
    - Pernot (2023, BVS): BVS and its validation by LZMS.
    - Busk et al. (2022): isotonic recalibration.
    - Pernot (2023, stratification): the stratification isotonic recalibration creates.
    - Vovk et al. (2005), Papadopoulos et al. (2008), Boström et al. (2017): normalised and
      Mondrian split conformal prediction.
    - Romano et al. (2019): conformalized quantile regression.
    - Kuleshov et al. (2018): quantile recalibration of the PIT.

    Full entries: :doc:`/docs/references`.

    Examples
    --------
    >>> import uqviz
    >>> data = uqviz.synthetic.nig(4000, nu=4, rng=1)
    >>> out = uqviz.recalibrate(data, method="conformal", level=0.9, rng=0)
    >>> inside = (out["E"] >= out["lower"]) & (out["E"] <= out["upper"])
    >>> round(float(inside.mean()), 2), out.attrs["forecast"]
    (0.9, 'interval')
    >>> ds = uqviz.synthetic.nig(4000, nu=6, rng=0)
    >>> ds = ds.assign(uE=ds["uE"] / 2)
    >>> out = uqviz.recalibrate(ds, method="isotonic", rng=0)
    >>> out.attrs["folds"], bool(uqviz.validate_average(out, n_boot=1000, rng=0)
    ...                          .sel(statistic="ZMS").valid)
    (5, True)
    """
    method, conditioning, n_bins, folds, settings = _check_options(
        method,
        conditioning,
        n_bins,
        folds=folds,
        rng=rng,
        cross=True,
        data=data,
        level=level,
        levels=levels,
        binning=binning,
        proportions=proportions,
        generative=generative,
    )
    pairs = datasets_of(data)
    rngs = seeds.spawn(rng, len(pairs))
    outs = []
    for (name, ds), r in zip(pairs, rngs):
        with naming_child(name):
            out = _recalibrate_one(
                ds,
                r,
                method=method,
                folds=folds,
                conditioning=conditioning,
                n_bins=n_bins,
                name=name,
                settings=settings,
            )
        out.attrs["rng"] = seeds.seed_attr(rng)
        outs.append((name, out))
    if isinstance(data, xr.Dataset):
        return outs[0][1]
    tree = xr.DataTree.from_dict(dict(outs))
    tree.attrs = dict(data.attrs)
    return tree
