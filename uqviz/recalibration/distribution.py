r"""Recalibration of the predictive distribution: conformal intervals, CQR, quantile recalibration.

Three methods of :func:`uqviz.fit_recalibration` and :func:`uqviz.recalibrate` (which
dispatch here) repair the forecast itself rather than its ``uE``:

- ``"conformal"``: split conformal prediction normalised by uE (Vovk et al. (2005);
  Papadopoulos et al. (2008)). Scores ``|E| / uE`` of the calibration data; the scale ``s``
  is their k-th smallest, ``k = ceil((n + 1) level)``; the interval of a new point is
  ``y_pred +- s uE``. Mondrian (Vovk et al. (2005); Boström & Johansson (2020)): one scale
  per bin of ``conditioning`` (``n_bins`` equal-count bins cut on the calibration data as BVS
  cuts them, or ``binning="stratified"``: one bin per distinct value, a category); a new point
  takes the bin whose range holds it, else the nearest.
- ``"cqr"``: conformalized quantile regression (Romano et al. (2019)) of a forecast with the
  quantiles ``(1 - level)/2`` and ``(1 + level)/2`` (variable ``quantiles``) or an interval
  ``lower``, ``upper`` at ``level``: scores ``max(q_lo - y, y - q_hi)``, ``Q`` their k-th
  smallest (same k, same bins), interval ``[q_lo - Q, q_hi + Q]``.
- ``"quantile"``: isotonic recalibration of the PIT (Kuleshov et al. (2018)), as
  uncertainty-toolbox 0.1.1's ``get_quantile_recalibrator``: on 100 nominal probabilities
  ``p`` in [0, 1] the observed frequency of ``F(y) <= p`` on the calibration data, and the
  isotonic regression ``R^{-1}`` of the nominal on the observed frequencies; a recalibrated
  quantile at level ``tau`` is the forecast's quantile at ``R^{-1}(tau)``.
  ``proportions="interval"`` fits the map of central-interval coverages instead
  (``get_interval_recalibrator``): the interval at ``level`` is the forecast's central
  interval at ``R^{-1}(level)``. Every form of the forecast, through
  ``uqviz.predictive.forecast``: ``F`` and its inverse are ``predictive_cdf`` and
  ``predictive_quantiles`` (std and variance: ``uE * D``, counted as ``E/uE <= F_D^{-1}(p)``,
  uncertainty-toolbox's comparisons; quantiles and intervals: piecewise linear with the
  tails of D; an ensemble: the empirical CDF of its members ``#{s_j <= y}/S``, not the
  randomised PIT of :func:`uqviz.pit`, so that the quantiles, members at the levels
  ``R^{-1}(tau)``, invert the CDF the map was fitted on and no random stream is needed).
  D is the option ``generative``, else the data's ``attrs["generative"]``, else normal;
  the fit records D and the form, and applies to new data of that form only.
- ``"conformal"`` reads ``E`` and ``uE``, which every form holds: it takes every form, and
  centres the interval on the prediction ``y - E`` (the members' mean for an ensemble given
  without ``y_pred``). ``"cqr"`` takes quantiles holding the levels ``(1 -+ level)/2`` or an
  interval at ``level``; its errors list the levels given, and refuse an ensemble.

Outputs (``Recalibration.apply``, ``recalibrate``): the data with ``lower``, ``upper`` (dim
``point``, absolute values of y: the prediction is ``y - E`` when the data hold ``y``, else 0,
the error-space reading), variable and dataset attrs ``level``; the ``"quantile"`` method adds
``quantiles`` (dims ``point``, ``level``) at ``levels``; ``attrs["forecast"]`` says the new
primary form (``"interval"`` or ``"quantiles"``). ``uE`` is kept unchanged: the new forecast
is the interval (or the quantiles), not a new standard uncertainty. Given ``lower``/``upper``
replaced are kept as ``lower_original``/``upper_original``, given quantiles as
``quantiles_original`` (dims ``point``, ``level_original``); ``quantiles`` are at ``levels``,
by default the given levels of a quantile forecast, else 0.01, ..., 0.99.

Finite-sample guarantee (``"conformal"``, ``"cqr"``): when the calibration points and a new
point are exchangeable, ``P(y in interval) >= level``, and ``<= level + 1/(n + 1)`` when the
scores have no ties (Vovk et al. (2005); Romano et al. (2019)). It is marginal: it holds on
average over the points, not for every uE or feature value; Mondrian bins make it hold in each
bin of fixed edges (the edges here are cut on the calibration data, so it holds up to the
randomness of the edges). ``k > n`` (a bin of fewer than ``level / (1 - level) - 1``
calibration points) gives the whole line ``(-inf, inf)``, with an UnreliableWarning.

The forecast's quantile function is one call, :func:`forecast_quantiles` (and the proportions
one, :func:`observed_proportions`), for every form of the data model.

Limits of ``"quantile"``: the 100 nominal probabilities resolve the map down to about 0.01
(a forecast too narrow keeps short tails beyond the levels 0.01 and 0.99); an ensemble's
recalibrated quantiles are members, so levels finer than ``1/S``, or beyond the share of
observations outside the members' range, are out of reach (``-inf`` at the mapped level 0).

Examples
--------
>>> import uqviz
>>> cal = uqviz.synthetic.nig(2000, nu=6, rng=0)
>>> rec = uqviz.fit_recalibration(cal, method="conformal", level=0.9)
>>> out = rec.apply(uqviz.synthetic.nig(500, nu=6, rng=1))
>>> out.attrs["forecast"], out["lower"].attrs["level"]
('interval', 0.9)

An ensemble of 40 members twice too wide, recalibrated (cross-fitted) to quantiles that are
members:

>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> mu = rng.normal(size=2000)
>>> ens = uqviz.from_predictions(mu + rng.standard_normal(2000), None,
...                              samples=mu[:, None] + 2 * rng.standard_normal((2000, 40)))
>>> out = uqviz.recalibrate(ens, method="quantile", levels=[0.1, 0.5, 0.9], rng=0)
>>> out.attrs["forecast"], out["quantiles"].dims
('quantiles', ('point', 'level'))
>>> cover = (out["y"] <= out["quantiles"]).mean("point")
>>> [round(float(c), 1) for c in cover]
[0.1, 0.5, 0.9]
"""

from __future__ import annotations

import warnings

import numpy as np
import xarray as xr

from uqviz._array import conformal as conformal_kernels
from uqviz._array import recalibration as recalibration_kernels
from uqviz._array.lazy import lazy_module
from uqviz.engine import checks
from uqviz.engine.binning import compute_bins, conditioning_values
from uqviz.engine.warning_classes import UnreliableWarning
from uqviz.predictive.forecast import (
    forecast_form,
    observed,
    predictive_cdf,
    predictive_quantiles,
    standard_distribution,
)

special = lazy_module("scipy.special")

__all__ = [
    "METHODS",
    "REQUIRED",
    "FORMULAS",
    "DEFAULT_LEVEL",
    "N_LEVELS",
    "check_options",
    "fit_parameters",
    "apply_fit",
    "fold_outputs",
    "assign_outputs",
    "summary",
    "forecast_quantiles",
    "observed_proportions",
    "resolve_settings",
]

METHODS = ("conformal", "cqr", "quantile")
REQUIRED = {
    "conformal": ("score_quantile",),
    "cqr": ("score_quantile",),
    "quantile": ("observed", "nominal"),
}
FORMULAS = {
    "conformal": "y_pred +- s_b uE, s_b the ceil((n+1) level)-th smallest |E|/uE "
    "in bin b of {conditioning}",
    "cqr": "[q_lo - Q_b, q_hi + Q_b], Q_b the ceil((n+1) level)-th smallest "
    "max(q_lo - y, y - q_hi) in bin b of {conditioning}",
    "quantile": "quantile at tau = forecast quantile at R^-1(tau), R^-1 the isotonic "
    "map of observed to nominal {proportions} proportions",
}
DEFAULT_LEVEL = 0.9  # the level of a conformal interval when none is given
N_LEVELS = 100  # nominal probabilities of the quantile map (uncertainty-toolbox's num_bins)
BINNINGS = ("equal_count", "stratified")
PROPORTIONS = ("quantile", "interval")
_DEFAULT_LEVELS = np.round(np.arange(1, 100) / 100.0, 2)


# ---------------------------------------------------------------------------
# options
# ---------------------------------------------------------------------------
def check_options(
    method, *, conditioning, n_bins, level, levels, binning, proportions, generative=None
):
    """The settings of a distribution method as a dict (each option checked, then combined).

    ``levels`` (when not given) and ``generative`` (when None) of ``"quantile"`` depend on the
    data: :func:`resolve_settings` fills them in for one dataset."""
    level = DEFAULT_LEVEL if level is None else checks.probability("level", level)
    if generative is not None:
        generative = standard_distribution(generative).name
    binning = checks.choice("binning", binning, BINNINGS)
    proportions = checks.choice("proportions", proportions, PROPORTIONS)
    if levels is not None:
        levels = np.sort(checks.levels("levels", levels))
    if method == "quantile":
        if conditioning != "uE" or n_bins is not None or binning != "equal_count":
            raise ValueError(
                "method='quantile' fits one map of the whole calibration set: "
                "conditioning, n_bins and binning are for 'conformal' and 'cqr'"
            )
        if proportions == "interval" and levels is not None:
            raise ValueError(
                "levels: proportions='interval' recalibrates central intervals "
                "only (the interval at level); quantiles need proportions='quantile'"
            )
    else:
        if generative is not None:
            raise ValueError(
                f"generative={generative!r}: only method='quantile' reads the "
                f"distribution D (method={method!r})"
            )
        if levels is not None or proportions != "quantile":
            raise ValueError(
                f"levels, proportions: only method='quantile' takes them (method={method!r})"
            )
        if binning == "stratified" and n_bins is not None:
            raise ValueError(
                f"n_bins={n_bins}: binning='stratified' makes one bin per "
                "distinct value of the conditioning variable"
            )
        if n_bins is None and binning == "equal_count" and conditioning != "uE":
            raise ValueError(
                f"conditioning={conditioning!r}: Mondrian bins of a feature need "
                "n_bins >= 2 or binning='stratified'"
            )
    settings = {"method": method, "conditioning": conditioning, "level": level}
    if method == "quantile":
        settings["proportions"] = proportions
        if levels is not None:
            settings["levels"] = [float(v) for v in levels]
        if generative is not None:
            settings["generative"] = generative
    else:
        settings["binning"] = binning
        if binning == "equal_count":
            settings["n_bins"] = 1 if n_bins is None else int(n_bins)
    return settings


# ---------------------------------------------------------------------------
# the forecast as given (every form, through uqviz.predictive.forecast)
# ---------------------------------------------------------------------------
def _prediction(ds):
    """The point prediction ``y - E`` (0 without ``y``: error space)."""
    return np.asarray(observed(ds)[1].values, dtype=float)


def _observations(ds):
    return np.asarray(observed(ds)[0].values, dtype=float)


def _family(form):
    """std and variance are one forecast, ``uE * D``."""
    return "std" if form in ("std", "variance") else form


def resolve_settings(ds, settings):
    """The settings of ``"quantile"`` for one dataset: ``forecast`` (its form),
    ``generative`` (the option, else ``attrs["generative"]``, else normal) and ``levels``
    (given, else the given quantile levels of a quantile forecast, else 0.01, ..., 0.99).
    Other methods: unchanged."""
    if settings["method"] != "quantile":
        return settings
    out = dict(settings)
    form = forecast_form(ds)
    out.setdefault("forecast", form)
    if "generative" not in out:
        out["generative"] = standard_distribution(ds.attrs.get("generative", "normal")).name
    if out["proportions"] == "quantile" and out.get("levels") is None:
        levels = ds["level"].values if form == "quantiles" else _DEFAULT_LEVELS
        out["levels"] = [float(v) for v in levels]
    return out


def _check_form(ds, settings):
    """The data's form is the form fitted (std and variance are one), and the D they declare
    (``attrs["generative"]``) the D fitted."""
    form = forecast_form(ds)
    fitted = settings.get("forecast")
    if fitted is not None and _family(form) != _family(fitted):
        raise ValueError(
            f"method='quantile': fitted on a forecast given as {fitted!r}, applied "
            f"to data whose forecast is {form!r}; the isotonic map of one "
            "forecast's PIT applies to new forecasts of the same form"
        )
    declared = ds.attrs.get("generative")
    fitted_d = settings.get("generative")
    if (
        declared is not None
        and fitted_d is not None
        and form != "samples"
        and standard_distribution(declared).name != fitted_d
    ):
        raise ValueError(
            f"generative: the data declare D = {declared!r} "
            f"(attrs['generative']), the recalibration was fitted with "
            f"{fitted_d!r}"
        )
    return form


def forecast_quantiles(ds, probs, generative="normal"):
    r"""Quantiles of y (dims point, level) of the forecast as given at ``probs`` in [0, 1].

    The generalised inverse :math:`Q(p) = \inf\{x : F(x) \ge p\}` of the predictive CDF
    (:func:`uqviz.predictive.predictive_quantiles` for ``p`` in (0, 1), repeated ``p``
    computed once): ``p = 0`` gives ``-inf``, ``p = 1`` gives ``+inf`` except for an ensemble
    (its largest member). The standard form is ``y_pred + uE F_D^{-1}(p)``.
    """
    probs = np.asarray(probs, dtype=float)
    m = ds.sizes["point"]
    inner = (probs > 0.0) & (probs < 1.0)
    wanted = probs[inner]
    unique, inverse = np.unique(wanted, return_inverse=True)
    distinct = unique.size == wanted.size
    q = None
    if wanted.size:
        with np.errstate(divide="ignore", invalid="ignore"):
            q = predictive_quantiles(ds, wanted if distinct else unique, generative=generative)
        if distinct and inner.all():
            return q
    out = np.empty((probs.size, m))  # filled by rows (contiguous), returned transposed
    for j, c in enumerate(np.flatnonzero(inner)):
        out[c] = q[:, j if distinct else inverse[j]]
    out[probs <= 0.0] = -np.inf  # Q(0) = -inf
    top = probs >= 1.0  # Q(1) = +inf, or an ensemble's largest member
    if top.any():
        out[top] = (
            np.asarray(ds["samples"].max("sample").values, dtype=float)[None, :]
            if forecast_form(ds) == "samples"
            else np.inf
        )
    return out.T


def observed_proportions(ds, expected, kind, generative="normal"):
    r"""Observed shares of PIT <= p (``kind="quantile"``) or of PIT inside
    ``[1/2 - p/2, 1/2 + p/2]`` (``"interval"``, y inside the central interval at p) at the
    nominal ``expected``.

    The standard form counts ``Z = E / uE`` against ``F_D^{-1}(p)`` (uncertainty-toolbox's
    comparisons); the other forms count the predictive CDF at the observed value,
    :math:`F(y)` (:func:`uqviz.predictive.predictive_cdf`, right-continuous, not
    randomised). For an ensemble, :math:`F(y) = \#\{s_j \le y\}/S` is a step function and
    its quantile :math:`Q(p)` (what :func:`forecast_quantiles` returns) holds
    :math:`y \le Q(p)` exactly when :math:`F(y) < p`: the share of :math:`F(y) < p` is
    counted, so that the recalibrated quantile covers the level it is mapped to (the share of
    :math:`F(y) \le p` would be one step too many in the lower tail).
    """
    gen = standard_distribution(generative)
    form = forecast_form(ds)
    if form in ("std", "variance"):
        z = np.asarray(ds["E"].values, dtype=float) / np.asarray(ds["uE"].values, dtype=float)
        return conformal_kernels.observed_proportions(z, expected, kind, ppf=gen.ppf)
    y = _observations(ds)
    values = predictive_cdf(ds, y, generative=gen)
    return conformal_kernels.observed_proportions(
        values, expected, kind, ppf=_identity, strict=form == "samples"
    )


def _identity(p):
    return np.asarray(p, dtype=float)


def _quantile_pair(ds, level, where=""):
    """Given bounds ``(q_lo, q_hi)`` of the central interval at ``level`` (CQR input)."""
    lo_p, hi_p = (1.0 - level) / 2.0, (1.0 + level) / 2.0
    has_quantiles = "quantiles" in ds.variables and "level" in ds["quantiles"].dims
    if has_quantiles:
        lv = np.asarray(ds["level"].values, dtype=float)
        i, j = (
            np.flatnonzero(np.isclose(lv, lo_p, atol=1e-9)),
            np.flatnonzero(np.isclose(lv, hi_p, atol=1e-9)),
        )
        if i.size and j.size:
            q = ds["quantiles"].transpose("point", "level").values
            return np.asarray(q[:, i[0]], dtype=float), np.asarray(q[:, j[0]], dtype=float)
    given = None
    if "lower" in ds.variables and "upper" in ds.variables:
        given = ds["lower"].attrs.get("level", ds.attrs.get("level"))
        if given is not None and np.isclose(float(given), level, atol=1e-9):
            return (
                np.asarray(ds["lower"].values, dtype=float),
                np.asarray(ds["upper"].values, dtype=float),
            )
    form = ds.attrs.get("forecast", "std")
    head = f"method='cqr' at level={level}: "
    takes = (
        f"CQR takes a forecast given as quantiles at the levels {lo_p:.6g} and "
        f"{hi_p:.6g} (variable 'quantiles', coordinate 'level') or as an interval "
        f"lower/upper of level {level}"
    )
    if has_quantiles:
        raise ValueError(
            f"{head}the data{where} give quantiles at the {lv.size} levels "
            f"{[round(float(v), 6) for v in lv]}, without {lo_p:.6g} and "
            f"{hi_p:.6g}; {takes}, or refit at a level whose bounds are given"
        )
    if given is not None:
        raise ValueError(
            f"{head}the data{where} give an interval of level {float(given):g}; {takes}"
        )
    raise ValueError(
        f"{head}the data{where} hold neither quantiles at the levels {lo_p:.6g} "
        f"and {hi_p:.6g} (variable 'quantiles', coordinate 'level') nor an "
        f"interval lower/upper of level {level} (their forecast is {form!r}); "
        + (
            "an ensemble gets 'conformal' or 'quantile'"
            if form == "samples"
            else "a forecast uE * D gets 'conformal' or 'quantile'"
        )
    )


def _cqr_inputs(ds, level, where):
    q_lo, q_hi = _quantile_pair(ds, level, where)
    y = _observations(ds)
    bad = ~(np.isfinite(q_lo) & np.isfinite(q_hi) & np.isfinite(y))
    if bad.any():
        raise ValueError(
            f"quantiles: {int(bad.sum())} points{where} have a NaN or infinite bound or y"
        )
    crossed = q_lo > q_hi
    if crossed.any():
        raise ValueError(
            f"quantiles: the lower bound exceeds the upper one for "
            f"{int(crossed.sum())} points{where}"
        )
    return y, q_lo, q_hi


# ---------------------------------------------------------------------------
# fit
# ---------------------------------------------------------------------------
def _bins(x, settings, where):
    """Bin limits ``(lower, upper)`` cut on the calibration values ``x``."""
    if settings["binning"] == "stratified":
        bins = compute_bins(x, binning="stratified", min_count=1)
    else:
        n = settings["n_bins"]
        if n == 1:
            return np.array([x.min()]), np.array([x.max()])
        if n > x.size:
            raise ValueError(f"n_bins = {n}: the calibration set{where} holds {x.size} points")
        # the ranges of compute_bins' equal-count bins, without its sort; tied values then
        # share one bin (the lower) through the lookup
        return conformal_kernels.equal_count_ranges(x, n)
    return bins.lower, bins.upper


def _score_quantiles(scores, x, settings, where):
    """Per-bin k-th smallest score, the rank and the coordinates of the bins."""
    lower, upper = _bins(x, settings, where)
    n_bins = lower.size
    label = (
        np.zeros(x.size, dtype=np.int64)
        if n_bins == 1
        else recalibration_kernels.bin_lookup(lower, upper, x)
    )
    count = np.bincount(label, minlength=n_bins)
    if np.any(count == 0):  # ties split: a bin no value maps to keeps no calibration point
        keep = count > 0
        lower, upper = lower[keep], upper[keep]
        n_bins = lower.size
        label = recalibration_kernels.bin_lookup(lower, upper, x)
        count = np.bincount(label, minlength=n_bins)
    ranks = conformal_kernels.conformal_rank(count, settings["level"])
    q = conformal_kernels.bin_score_quantiles(scores, label, n_bins, ranks)
    short = ranks > count
    if short.any():
        warnings.warn(
            f"method={settings['method']!r}: {int(short.sum())} of {n_bins} bins"
            f"{where} hold too few calibration points for level={settings['level']} "
            f"(k = ceil((n + 1) level) > n; {int(count[short].sum())} points): their "
            "intervals are the whole line (-inf, inf)",
            UnreliableWarning,
            stacklevel=5,
        )
    center = np.bincount(label, weights=x, minlength=n_bins) / count
    coords = {
        "bin": np.arange(n_bins),
        "bin_lower": ("bin", lower),
        "bin_upper": ("bin", upper),
        "bin_center": ("bin", center),
        "count": ("bin", count),
    }
    return {"score_quantile": ("bin", q), "score_rank": ("bin", ranks)}, coords


def _fit_arrays(ds, settings, where):
    """``({name: (dims, values)}, coords)`` of one fit."""
    method = settings["method"]
    m = ds.sizes["point"]
    if m < 2:
        raise ValueError(
            f"data: the calibration set{where} holds {m} point(s): at least 2 are needed"
        )
    if method == "quantile":
        expected = np.linspace(0.0, 1.0, N_LEVELS)
        obs = observed_proportions(ds, expected, settings["proportions"], settings["generative"])
        x_k, y_k = conformal_kernels.isotonic_map(obs, expected)
        return {"observed": ("knot", x_k), "nominal": ("knot", y_k)}, {"knot": np.arange(x_k.size)}
    if method == "conformal":
        e = np.asarray(ds["E"].values, dtype=float)
        scores = np.abs(e) / np.asarray(ds["uE"].values, dtype=float)
    else:
        scores = conformal_kernels.cqr_scores(*_cqr_inputs(ds, settings["level"], where))
    x = conditioning_values(ds, settings["conditioning"], allow_constant=True)[1]
    return _score_quantiles(scores, x, settings, where)


def fit_parameters(ds, settings, where=""):
    """The parameters Dataset of one fit (attrs: the settings, resolved for ``ds``)."""
    settings = resolve_settings(ds, settings)
    data_vars, coords = _fit_arrays(ds, settings, where)
    params = xr.Dataset(data_vars, coords=coords)
    params["n_points"] = ((), ds.sizes["point"])
    if "observed" in params:
        kind = (
            "below the quantile"
            if settings["proportions"] == "quantile"
            else "inside the central interval"
        )
        params["observed"].attrs["long_name"] = f"observed proportion {kind} at the knots"
    params.attrs = {
        **settings,
        "recalibration": FORMULAS[settings["method"]].format(
            **{
                "conditioning": settings["conditioning"],
                "proportions": settings.get("proportions", ""),
            }
        ),
    }
    if "n_bins" in settings or "score_quantile" in params:
        params.attrs["n_bins"] = int(params.sizes.get("bin", 1))
    return params


# ---------------------------------------------------------------------------
# apply
# ---------------------------------------------------------------------------
def apply_fit(ds, fit, settings, where=""):
    """``{name: array}`` of the new forecast of ``ds``: ``lower``, ``upper`` (and
    ``quantiles``) from the parameters ``fit`` (dict of arrays)."""
    method, level = settings["method"], float(settings["level"])
    if method == "quantile":
        settings = resolve_settings(ds, settings)
        _check_form(ds, settings)
        x_k, y_k = fit["observed"], fit["nominal"]
        out = {}
        if settings["proportions"] == "quantile":
            probs = conformal_kernels.isotonic_eval(
                x_k, y_k, np.array([(1 - level) / 2, (1 + level) / 2])
            )
            mapped = conformal_kernels.isotonic_eval(
                x_k, y_k, np.asarray(settings["levels"], dtype=float)
            )
            out["quantiles"] = forecast_quantiles(ds, mapped, settings["generative"])
        else:
            cover = conformal_kernels.isotonic_eval(x_k, y_k, np.array([level]))
            probs = np.concatenate([0.5 - cover / 2.0, 0.5 + cover / 2.0])
        q = forecast_quantiles(ds, probs, settings["generative"])
        out["lower"], out["upper"] = q[:, 0], q[:, 1]
        return out
    x = conditioning_values(ds, settings["conditioning"], allow_constant=True)[1]
    q = fit["score_quantile"]
    label = (
        np.zeros(x.size, dtype=np.int64)
        if q.size == 1
        else recalibration_kernels.bin_lookup(fit["bin_lower"], fit["bin_upper"], x)
    )
    s = q[label]
    if method == "conformal":
        u = np.asarray(ds["uE"].values, dtype=float)
        pred = _prediction(ds)
        with np.errstate(invalid="ignore"):
            half = np.where(np.isinf(s), np.inf, s * u)
        return {"lower": pred - half, "upper": pred + half}
    q_lo, q_hi = _quantile_pair(ds, level, where)
    return {"lower": q_lo - s, "upper": q_hi + s}


def fold_outputs(ds, labels, folds, fit_one):
    """Cross-fitted outputs: fold k's from ``fit_one(train_ds) -> (fit, settings)`` on the
    other folds, applied to fold k."""
    parts = {}
    for k in range(folds):
        test = labels == k
        fit, settings = fit_one(ds.isel(point=np.flatnonzero(~test)), k)
        new = apply_fit(ds.isel(point=np.flatnonzero(test)), fit, settings)
        for name, values in new.items():
            if name not in parts:
                parts[name] = np.empty((labels.size,) + values.shape[1:])
            parts[name][test] = values
    return parts


def _long_name(kind, level):
    return f"{kind} bound of the recalibrated central interval at level {level:g}"


def assign_outputs(ds, new, settings, attrs):
    """``ds`` with the new forecast (``lower``, ``upper``, ``quantiles``), the given
    interval kept as ``lower_original``/``upper_original`` and given quantiles as
    ``quantiles_original`` (dims ``point``, ``level_original``); ``uE`` unchanged."""
    level = float(settings["level"])
    out = ds.copy()
    replaced = [
        n
        for n in ("lower", "upper") + (("quantiles",) if "quantiles" in new else ())
        if n in ds.variables and f"{n}_original" in ds.variables
    ]
    if replaced:
        raise ValueError(
            f"data: already hold {', '.join(n + '_original' for n in replaced)} "
            "(recalibrated data); recalibrate the original data"
        )
    units = {"units": ds["E"].attrs["units"]} if "units" in ds["E"].attrs else {}
    for name in ("lower", "upper"):
        if name in ds.variables:
            out = out.rename_vars({name: f"{name}_original"})
            out[f"{name}_original"].attrs["long_name"] = f"{name} bound of the given interval"
        out[name] = (
            "point",
            new[name],
            {"role": "forecast", "level": level, "long_name": _long_name(name, level), **units},
        )
    form = "interval"
    if "quantiles" in new:
        if "quantiles" in ds.variables:
            out = out.rename_vars(quantiles="quantiles_original")
            if "level" in out.dims or "level" in out.variables:
                out = out.rename({"level": "level_original"})
            out["quantiles_original"].attrs["long_name"] = "given quantiles of y"
        levels = np.asarray(settings["levels"])
        out = out.assign_coords(level=("level", levels))
        out["quantiles"] = (
            ("point", "level"),
            new["quantiles"],
            {"long_name": "recalibrated quantiles of y", **units},
        )
        form = "quantiles"
    out.attrs = {**ds.attrs, **attrs, "level": level, "forecast": form}
    return out


def summary(method, p):
    """One line on a fit, for ``Recalibration.__repr__``."""
    if method == "quantile":
        return (
            f"isotonic map of {p['observed'].size} knots, nominal from "
            f"{p['nominal'].min():.3g} to {p['nominal'].max():.3g}"
        )
    q = p["score_quantile"]
    return f"{q.size} bin(s), score quantile from {q.min():.4g} to {q.max():.4g}" + (
        f" ({int(np.isinf(q).sum())} infinite)" if np.isinf(q).any() else ""
    )
