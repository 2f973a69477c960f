"""A uqviz dataset from a model's predictions and uncertainties in any common form.

:func:`from_predictions` turns observed values, predictions and one uncertainty form
(standard deviations, variances, a central interval, predictive quantiles, or ensemble /
posterior samples) into the dataset of :func:`uqviz.from_arrays`: ``E = y_true - y_pred``
and the standard uncertainty ``uE``. Every conversion is stated in the docstring and
recorded in the dataset's attributes; bad input follows the rules of
:mod:`uqviz.data.model` (the same checks, the same messages) and the dataset is built by
:func:`uqviz.data.constructors.build_dataset`, the core of :func:`uqviz.from_arrays`.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping

import numpy as np
import pandas as pd
import xarray as xr

from uqviz._array.lazy import lazy_module
from uqviz.data.constructors import build_dataset, named_columns
from uqviz.data.model import (
    as_1d,
    common_length,
    float_columns,
    n_rows_text,
    rows_problem,
    rows_text,
    user_stacklevel,
)
from uqviz.data.generative import Generative, get_generative
from uqviz.data.targets import (
    build_targets_tree,
    default_names,
    float_targets,
    group_labels,
    groups_name,
    is_several,
    take_mapping,
    target_columns,
    target_names,
    with_groups,
)
from uqviz.engine import checks
from uqviz.engine.warning_classes import DataWarning

stats = lazy_module("scipy.stats")

__all__ = ["from_predictions"]

#: Probabilities of -1 and +1 standard deviation of a normal distribution (15.87 %, 84.13 %):
#: the targets of ``quantile_rule="nearest"``.
#: The values of ``float(scipy.stats.norm.cdf(-1.0))`` and ``float(scipy.stats.norm.cdf(1.0))``,
#: written out so that importing this module does not import scipy.stats (tests/project check them).
P_LOW, P_HIGH = 0.15865525393145707, 0.8413447460685429
#: An interval whose centre lies farther than this fraction of its half-width from
#: ``y_pred`` is counted as asymmetric.
ASYMMETRY_TOLERANCE = 0.01
#: Delta degrees of freedom of the standard deviation of samples (and of ensemble members).
SAMPLES_DDOF = 1
#: How predictive quantiles give uE.
QUANTILE_RULES = ("nearest", "fit")
#: What is done with crossing quantiles (a row whose quantiles decrease with the level).
CROSSING_RULES = ("sort", "raise")
#: The forms of a forecast (``attrs["forecast"]``).
FORECAST_FORMS = ("std", "variance", "interval", "quantiles", "samples")
#: Data variables that keep the forecast as given (a feature may not take these names).
FORECAST_VARIABLES = ("y", "quantiles", "lower", "upper", "samples")


def _quantile_function(generative, p):
    """Quantile ``q_D(p)`` of a unit-variance generative distribution D (private helper).

    Examples
    --------
    >>> (round(float(_quantile_function("normal", 0.975)), 4),
    ...  round(float(_quantile_function("t6", 0.975)), 4))
    (1.96, 1.9979)
    """
    gen = generative if isinstance(generative, Generative) else get_generative(generative)
    p = np.asarray(p, dtype=float)
    if gen.kind == "normal":
        return stats.norm.ppf(p)
    if gen.kind == "student_t":
        nu = gen.params["nu"]
        return stats.t.ppf(p, nu) * np.sqrt((nu - 2.0) / nu)
    if gen.kind == "uniform":
        return np.sqrt(3.0) * (2.0 * p - 1.0)
    if gen.kind == "laplace":
        return stats.laplace.ppf(p, scale=1.0 / np.sqrt(2.0))
    raise ValueError(
        f"generative: {gen.name!r} has no quantile function before the data exist; "
        "use 'normal', 't<nu>', 'uniform' or 'laplace'"
    )


def _quantile_columns(quantiles) -> dict:
    """``{level: 1-D values}`` from a mapping or a DataFrame whose columns are the levels."""
    if isinstance(quantiles, pd.DataFrame):
        labels = list(quantiles.columns)
        if len(set(labels)) != len(labels):
            raise ValueError("quantiles: duplicate level columns in the DataFrame")
        pairs = [(c, quantiles[c]) for c in labels]
    elif isinstance(quantiles, Mapping):
        pairs = list(quantiles.items())
    else:
        raise TypeError(
            "quantiles must be a mapping {level: array} or a pandas DataFrame whose "
            f"columns are the levels, got {type(quantiles).__name__}"
        )
    out = {}
    for level, values in pairs:
        if isinstance(level, (bool, np.bool_)) or not isinstance(level, (int, float, np.number)):
            raise ValueError(
                "quantiles: the levels (keys or column labels) must be probabilities "
                f"in (0, 1), got {level!r}"
            )
        p = checks.probability("quantiles level", level)
        if p in out:
            raise ValueError(f"quantiles: level {p} given twice")
        out[p] = values
    if len(out) < 2:
        raise ValueError(
            f"quantiles: need at least 2 levels to give a spread, got {len(out)} "
            f"({', '.join(map(str, out)) or 'none'})"
        )
    return dict(sorted(out.items()))


def _form(std, variance, lower, upper, quantiles, samples) -> str:
    given = [
        k
        for k, v in (
            ("std", std),
            ("variance", variance),
            ("lower", lower),
            ("upper", upper),
            ("quantiles", quantiles),
            ("samples", samples),
        )
        if v is not None
    ]
    forms = list(dict.fromkeys("interval" if k in ("lower", "upper") else k for k in given))
    if len(forms) != 1:
        what = ", ".join(f"{k}=" for k in given) if given else "none"
        raise ValueError(
            "give exactly one uncertainty form: std=, variance=, lower= and upper= "
            f"(with level=), quantiles= or samples=; got {what}"
        )
    return forms[0]


def from_predictions(
    y_true,
    y_pred,
    *,
    std=None,
    variance=None,
    lower=None,
    upper=None,
    level=None,
    quantiles=None,
    samples=None,
    generative="normal",
    quantile_rule="nearest",
    crossing="sort",
    features=None,
    name=None,
    units="",
    drop_invalid=False,
    targets=None,
    groups=None,
) -> xr.Dataset:
    r"""Build a uqviz dataset from observed values, predictions and one form of uncertainty.

    Several targets: (row, target) arrays (or DataFrames, whose columns name the targets) of
    ``y_true``, ``y_pred`` and ``std``, ``variance`` or ``lower``/``upper`` give the targets
    tree of ``uqviz.data.targets``, one child per target on its observed rows: a NaN in the
    observed value, the prediction or the uncertainty marks that target missing for that row
    (counted, ``n_missing``), never an error.

    ``E = y_true - y_pred`` and the standard uncertainty ``uE`` comes from exactly one of:

    - ``std``: ``uE = std``;
    - ``variance``: ``uE = sqrt(variance)``;
    - ``lower``, ``upper`` and ``level``: a central interval of nominal coverage ``level``,
      ``uE = (upper - lower) / 2 / q_D((1 + level) / 2)`` with ``q_D`` the quantile
      function of the generative distribution D (``generative``; ``"normal"``:
      ``q = 1.645`` for a 90 % interval; ``"t6"``: 1.587). The interval must contain
      ``y_pred``; one whose centre lies farther than 1 % of its half-width from
      ``y_pred`` is *asymmetric*: its width is used all the same, a warning counts
      those rows and ``attrs["n_asymmetric"]`` records the count;
    - ``quantiles``: predictive quantiles ``{level: values}`` (or a DataFrame whose
      columns are the levels). ``quantile_rule="nearest"`` (default) takes the two
      given levels nearest ``P_LOW = Phi(-1) = 0.1587`` and ``P_HIGH = Phi(1) = 0.8413``
      and scales their distance by the distance of the quantiles of D,
      ``uE = (q[p_hi] - q[p_lo]) / (q_D(p_hi) - q_D(p_lo))`` (the 16 % and 84 %
      quantiles of a normal distribution lie one sd either side of its centre);
      ``quantile_rule="fit"`` fits ``q[p] = a + uE * q_D(p)`` by least squares over
      all given levels, per point. The levels may be given in any order (the keys of a
      mapping, the columns of a DataFrame): they are sorted, with their columns. Rows whose
      quantiles decrease with the level (crossing quantiles) are counted in
      ``attrs["n_crossing"]``; ``crossing="sort"`` (default) repairs each such row by
      sorting its quantiles (a DataWarning counts the rows; uE and the kept quantiles are
      those of the sorted rows), ``crossing="raise"`` refuses them (a ValueError counting the
      rows). A NaN or inf quantile at any level makes its row invalid (the rule of NaN uE,
      counted; ``drop_invalid=True`` drops it);
    - ``samples``: ensemble members or posterior draws of the prediction, shape
      ``(point, sample)``: ``uE`` is their standard deviation with ``ddof=1`` (the
      unbiased variance of a sample of the predictive distribution; for M members,
      ``ddof=0`` would shrink uE by ``sqrt((M - 1) / M)``, 5 % for M = 10). With
      ``y_pred=None`` the prediction is the mean of the samples. The draws are kept
      as the variable ``samples`` (dims ``point``, ``sample``) beside the observed
      values ``y``, so that :func:`uqviz.qce` takes the dataset directly (it forms
      its intervals from the draws, with netcal's ``ddof=0``).

    The forecast is kept as given, beside ``E`` and ``uE`` (the rows kept by
    `drop_invalid`): ``attrs["forecast"]`` names the form (``"std"``, ``"variance"``,
    ``"interval"``, ``"quantiles"``, ``"samples"``); for the last three the observed
    values are the variable ``y`` (dim ``point``; the prediction is ``y - E``), and

    - ``quantiles`` (dims ``point``, ``level``; coordinate ``level``, increasing): the given
      quantiles of y (sorted rows where they crossed);
    - ``lower``, ``upper`` (dim ``point``; variable attribute ``level``, and
      ``attrs["level"]``): the given interval of y;
    - ``samples`` (dims ``point``, ``sample``): the draws, unchanged.

    ``uqviz.predictive`` reads these (the predictive CDF of each form, the PIT).

    Parameters
    ----------
    y_true : array_like, 1-D
        Observed (reference) values.
    y_pred : array_like, 1-D, or None
        Predictions; ``None`` only with `samples` (their mean).
    std, variance : array_like, 1-D, optional
        Standard deviations or variances of the predictions.
    lower, upper : array_like, 1-D, optional
        Limits of a central prediction interval (give both, and `level`).
    level : float in (0, 1), optional
        Nominal coverage of the interval (0.9 for a 90 % interval).
    quantiles : mapping of float to array_like, or pandas.DataFrame, optional
        Predictive quantiles by probability level (at least two levels).
    samples : array_like, shape (point, sample), optional
        Predictive draws or ensemble members (at least two per point).
    generative : str or Generative, default "normal"
        Distribution D that turns interval widths and quantiles into uE
        (``"normal"``, ``"t<nu>"``, ``"uniform"``, ``"laplace"``; see
        :func:`uqviz.generative.get_generative`). Only with `lower`/`upper` and
        `quantiles`.
    quantile_rule : {"nearest", "fit"}, default "nearest"
        How `quantiles` give uE (see above). Only with `quantiles`.
    crossing : {"sort", "raise"}, default "sort"
        Crossing quantiles: repaired by sorting each row (counted in a warning), or refused
        (a ValueError counting the rows). Only with `quantiles`.
    features : mapping of str to array_like, or pandas.DataFrame, optional
        Input features (a DataFrame: its columns).
    name : str, optional
        Default ``"dataset"``.
    units, drop_invalid
        As in :func:`uqviz.from_arrays`.
    targets : list of str, optional
        Names of several targets (default the DataFrame's columns, else ``"target0"``, ...).
    groups : array_like, optional
        A label per row, the coordinate ``group`` (as in :func:`uqviz.from_arrays`).

    Returns
    -------
    xarray.Dataset or xarray.DataTree
        The dataset of :func:`uqviz.from_arrays` (several targets: the targets tree);
        ``attrs["uE_source"]`` says how uE was obtained (``"std"``, ``"variance"``,
        ``"interval"``, ``"quantiles"``, ``"samples"``), with the settings used
        (``level``, ``generative``,
        ``quantile_levels``, ``quantile_rule``, ``quantile_levels_used``, ``crossing``,
        ``ddof``, ``n_samples``) and the counts ``n_asymmetric``, ``n_crossing``;
        ``attrs["forecast"]`` and the variables ``y``, ``quantiles`` (coordinate
        ``level``), ``lower``, ``upper``, ``samples`` keep the forecast as given (above).

    Raises
    ------
    ValueError
        Not exactly one uncertainty form; an option given with a form that does not
        use it; ``y_pred`` outside its interval or ``lower > upper``; crossing quantiles
        with ``crossing="raise"``; a feature named like a kept variable; and the bad-input
        rules of :func:`uqviz.from_arrays` (NaN/inf, ``uE <= 0``, length mismatch,
        non-numeric values), naming the input and the count of rows.
    TypeError
        `quantiles` neither a mapping nor a DataFrame.

    Examples
    --------
    >>> import numpy as np, uqviz
    >>> y, yhat = np.array([1.0, 2.0, 3.0]), np.array([1.1, 1.8, 3.3])
    >>> uqviz.from_predictions(y, yhat, std=[0.1, 0.2, 0.3])["E"].values.round(2).tolist()
    [-0.1, 0.2, -0.3]

    A 90 % interval of half-width 1.645 is one standard deviation (normal D):

    >>> ds = uqviz.from_predictions(y, yhat, lower=yhat - 1.645, upper=yhat + 1.645, level=0.9)
    >>> ds["uE"].values.round(3).tolist(), ds.attrs["uE_source"]
    ([1.0, 1.0, 1.0], 'interval')

    Quantiles at 10 %, 50 % and 90 % (the nearest to 15.87 % and 84.13 % are 10 % and 90 %):

    >>> q = {0.1: yhat - 1.2816, 0.5: yhat, 0.9: yhat + 1.2816}
    >>> ds = uqviz.from_predictions(y, yhat, quantiles=q)
    >>> ds["uE"].values.round(4).tolist(), ds.attrs["forecast"], ds["quantiles"].dims
    ([1.0, 1.0, 1.0], 'quantiles', ('point', 'level'))
    >>> ds["level"].values.tolist(), ds["y"].values.tolist()
    ([0.1, 0.5, 0.9], [1.0, 2.0, 3.0])

    Ensemble members (rows: points, columns: members), sd with ddof=1:

    >>> s = np.array([[1.0, 1.2], [1.8, 2.0], [3.2, 3.4]])
    >>> ds = uqviz.from_predictions(y, None, samples=s)
    >>> ds["uE"].values.round(4).tolist(), ds["samples"].dims
    ([0.1414, 0.1414, 0.1414], ('point', 'sample'))

    Two targets, the second not measured in row 0:

    >>> tree = uqviz.from_predictions([[1.0, np.nan], [2.0, 0.5]], [[1.1, 0.0], [1.8, 0.4]],
    ...                               std=[[0.1, 0.1], [0.2, 0.2]], targets=["logS", "logP"])
    >>> tree.attrs["n_missing"], tree["logP"]["point"].values.tolist()
    ([0, 1], [1])
    """
    options = dict(
        std=std,
        variance=variance,
        lower=lower,
        upper=upper,
        level=level,
        quantiles=quantiles,
        samples=samples,
        generative=generative,
        quantile_rule=quantile_rule,
        crossing=crossing,
        features=features,
        units=units,
        drop_invalid=drop_invalid,
    )
    if targets is not None or is_several(y_true, y_pred, std, variance, lower, upper):
        return _several_targets(
            y_true, y_pred, name=name, targets=targets, groups=groups, **options
        )
    ds = _one_target(y_true, y_pred, name=name, **options)
    if groups is None:
        return ds
    n = len(as_1d("y_true", y_true))
    return with_groups(ds, group_labels(groups, n), groups_name(groups))


def _several_targets(y_true, y_pred, *, name, targets, groups, **options):
    """The targets tree of (row, target) y_true, y_pred and std, variance or lower/upper."""
    form = _form(
        *(options[k] for k in ("std", "variance", "lower", "upper", "quantiles", "samples"))
    )
    if form in ("quantiles", "samples"):
        raise ValueError(
            f"several targets: give std=, variance= or lower=/upper= as (row, target) arrays; "
            f"{form}= takes one target (call from_predictions per target and gather them "
            "with uqviz.from_datasets)"
        )
    _options(
        form,
        y_pred,
        options["lower"],
        options["upper"],
        options["level"],
        options["generative"],
        options["quantile_rule"],
        options["crossing"],
    )
    keys = {"std": ("std",), "variance": ("variance",), "interval": ("lower", "upper")}[form]
    raw = {"y_true": y_true, "y_pred": y_pred, **{k: options[k] for k in keys}}
    arrays = {k: target_columns(k, v) for k, v in raw.items()}
    names = target_names(targets, arrays["y_true"].shape[1], default_names(*raw.values()))
    floats = float_targets(arrays, names)
    missing = np.logical_or.reduce([np.isnan(a) for a in floats.values()])
    features = _features(options["features"])
    common_length(
        {"y_true": floats["y_true"][:, 0], **{k: as_1d(k, v) for k, v in features.items()}},
        empty="y_true has",
    )

    def predictions_child(j, rows):
        kw = dict(options, features=take_mapping(features, rows))
        kw.update({k: floats[k][rows, j] for k in keys})
        return _one_target(
            floats["y_true"][rows, j], floats["y_pred"][rows, j], name=names[j], row_ids=rows, **kw
        )

    return build_targets_tree(
        names, missing, predictions_child, name=name, groups=groups, groups_what=groups_name(groups)
    )


def _one_target(
    y_true,
    y_pred,
    *,
    std,
    variance,
    lower,
    upper,
    level,
    quantiles,
    samples,
    generative,
    quantile_rule,
    crossing,
    features,
    name,
    units,
    drop_invalid,
    row_ids=None,
) -> xr.Dataset:
    """The dataset of one target (``row_ids``: its original rows, default ``0 .. n - 1``)."""
    form = _form(std, variance, lower, upper, quantiles, samples)
    level, gen, quantile_rule, crossing = _options(
        form, y_pred, lower, upper, level, generative, quantile_rule, crossing
    )
    features = _features(features)
    _check_feature_names(form, features)
    qcols = _quantile_columns(quantiles) if form == "quantiles" else {}
    raw = _inputs(form, y_true, y_pred, std, variance, lower, upper, qcols)
    draws = _samples_array(samples) if form == "samples" else None
    features = {k: as_1d(k, v) for k, v in features.items()}
    n_rows = _row_count(raw, samples, draws, features)
    rows = np.arange(n_rows, dtype=np.int64) if row_ids is None else row_ids
    arrays = float_columns(raw, rows)
    metadata = {"y": arrays["y_true"]} if form in ("interval", "quantiles", "samples") else {}
    kept = {}
    e, u, sources, attrs = _errors_and_uE(
        form,
        arrays,
        draws,
        rows,
        level=level,
        gen=gen,
        rule=quantile_rule,
        levels=list(qcols),
        crossing=crossing,
        kept=kept,
    )
    ds = build_dataset(
        e,
        u,
        features=features,
        metadata=metadata,
        name=name,
        units=units,
        drop_invalid=drop_invalid,
        sources=sources,
        row_ids=rows,
    )
    if draws is not None:
        _keep_samples(ds, draws, units)
    elif form in ("interval", "quantiles"):
        _keep_forecast(ds, form, arrays, kept, level, np.array(list(qcols)), units, rows)
    ds.attrs.update(attrs)
    ds.attrs["forecast"] = form
    return ds


def _check_feature_names(form, features):
    """A feature may not take the name of a variable that keeps the forecast as given."""
    if form == "samples" and "y" in features:
        raise ValueError(
            "features: the name 'y' holds the observed values kept with "
            "samples= (for uqviz.qce); rename that feature"
        )
    kept = {
        "interval": ("y", "lower", "upper"),
        "quantiles": ("y", "quantiles"),
        "samples": ("y", "samples"),
    }.get(form, ())
    clash = [k for k in kept if k in features]
    if clash:
        raise ValueError(
            f"features: {', '.join(map(repr, clash))} hold the forecast kept with "
            f"{form}= ({', '.join(kept)}); rename "
            f"{'that feature' if len(clash) == 1 else 'those features'}"
        )


def _options(form, y_pred, lower, upper, level, generative, quantile_rule, crossing):
    """``(level, generative D, quantile_rule, crossing)`` checked against the uncertainty form."""
    if form == "interval" and (lower is None or upper is None or level is None):
        missing = [
            k for k, v in (("lower", lower), ("upper", upper), ("level", level)) if v is None
        ]
        raise ValueError(
            f"an interval needs lower=, upper= and level=; missing {', '.join(missing)}"
        )
    if level is not None and form != "interval":
        raise ValueError(
            "level: the coverage of an interval, used only with lower= and upper= "
            "(quantiles carry their levels as keys)"
        )
    if level is not None:
        level = checks.probability("level", level)
    gen = get_generative(generative)
    if form in ("interval", "quantiles"):
        _quantile_function(gen, 0.5)  # a D without a quantile function is refused here
    elif gen.name != "normal":
        raise ValueError(
            f"generative: used only by lower=/upper= and quantiles= (it turns "
            f"widths into uE); got {gen.name!r} with {form}="
        )
    quantile_rule = checks.choice("quantile_rule", quantile_rule, QUANTILE_RULES)
    if quantile_rule != "nearest" and form != "quantiles":
        raise ValueError(
            f"quantile_rule: used only with quantiles=; got {quantile_rule!r} with {form}="
        )
    crossing = checks.choice("crossing", crossing, CROSSING_RULES)
    if crossing != "sort" and form != "quantiles":
        raise ValueError(f"crossing: used only with quantiles=; got {crossing!r} with {form}=")
    if y_pred is None and form != "samples":
        raise ValueError(
            "y_pred: required (it may be None only with samples=, whose mean it then is)"
        )
    return level, gen, quantile_rule, crossing


def _features(features) -> dict:
    """``{name: values}`` of a mapping, or of a DataFrame's columns (names made str)."""
    columns = named_columns("features", features)
    if isinstance(features, pd.DataFrame):
        return {str(c): v for c, v in columns.items()}
    return columns


def _inputs(form, y_true, y_pred, std, variance, lower, upper, qcols) -> dict:
    """The 1-D inputs by name: y_true, y_pred and those of the uncertainty form."""
    raw = {"y_true": y_true}
    if y_pred is not None:
        raw["y_pred"] = y_pred
    if form in ("std", "variance"):
        raw[form] = std if form == "std" else variance
    elif form == "interval":
        raw["lower"], raw["upper"] = lower, upper
    elif form == "quantiles":
        raw.update({f"quantiles[{p:g}]": v for p, v in qcols.items()})
    return {k: as_1d(k, v) for k, v in raw.items()}


def _row_count(raw: dict, samples, draws, features: dict) -> int:
    """The number of points shared by every input (the rules of from_arrays)."""
    columns = dict(raw)
    if draws is not None:  # the rows of the draws; a DataFrame's index is checked too
        columns["samples"] = samples if isinstance(samples, pd.DataFrame) else draws
    return common_length({**columns, **features}, empty="y_true has")


def _errors_and_uE(form, arrays, draws, rows, *, level, gen, rule, levels, crossing, kept):
    """``(E, uE, sources, attrs)``: E = y_true - y_pred and uE from the uncertainty form."""
    attrs, sources = {"uE_source": form}, {}
    with np.errstate(all="ignore"):
        pred = arrays["y_pred"] if "y_pred" in arrays else draws.mean(axis=1)
        e = arrays["y_true"] - pred
        sources["E"] = "y_true - y_pred" if "y_pred" in arrays else "y_true - mean of samples"
        if form == "samples":
            u = draws.std(axis=1, ddof=SAMPLES_DDOF)
            sources["uE"] = f"sd of samples, ddof={SAMPLES_DDOF}"
            attrs.update(ddof=SAMPLES_DDOF, n_samples=int(draws.shape[1]))
        elif form == "std":
            u = arrays["std"]
        elif form == "variance":
            # signed square root: a negative variance is reported by the uE <= 0 rule
            u = np.sign(arrays["variance"]) * np.sqrt(np.abs(arrays["variance"]))
            sources["uE"] = "sqrt of variance"
        elif form == "interval":
            u = _interval_form(arrays, pred, level, gen, rows, sources, attrs)
        else:
            u = _quantiles_form(
                arrays, np.array(levels), gen, rule, rows, sources, attrs, crossing, kept
            )
    return e, u, sources, attrs


def _interval_form(arrays, pred, level, gen, rows, sources: dict, attrs: dict):
    u, n_asym = _interval_uE(arrays["lower"], arrays["upper"], pred, level, gen, rows)
    q = float(_quantile_function(gen, (1.0 + level) / 2.0))
    sources["uE"] = f"half-width of the {level:g} interval / {q:.4g}"
    attrs.update(level=level, generative=gen.name, n_asymmetric=n_asym)
    return u


def _quantiles_form(
    arrays, levels, gen, rule, rows, sources: dict, attrs: dict, crossing, kept: dict
):
    qv = np.stack([arrays[f"quantiles[{p:g}]"] for p in levels], axis=1)
    attrs["n_crossing"] = _count_crossing(qv, rows, crossing)
    if attrs["n_crossing"]:
        qv = np.sort(qv, axis=1)  # crossing="sort": each row repaired (NaN rows stay invalid)
    u, used = _quantile_uE(qv, levels, gen, rule)
    attrs.update(
        generative=gen.name,
        quantile_levels=levels.tolist(),
        quantile_rule=rule,
        quantile_levels_used=used,
        crossing=crossing,
    )
    sources["uE"] = (
        f"quantiles {used[0]:g} and {used[1]:g}"
        if rule == "nearest"
        else "least-squares fit of the quantiles"
    )
    bad = ~np.isfinite(qv).all(axis=1)
    if bad.any():  # a NaN or inf at any level makes the row invalid, counted by the uE rule
        u = np.where(bad, np.nan, u)
        sources["uE"] += "; NaN where a quantile is NaN or inf"
    kept["quantiles"] = qv
    return u


def _keep_samples(ds: xr.Dataset, draws: np.ndarray, units: str) -> None:
    """Add the draws of the rows kept (``samples``, dims point, sample) beside ``y``."""
    ds["y"].attrs = {
        "role": "metadata",
        "long_name": "observed value (y_true), with the samples for uqviz.qce",
    }
    kept = draws[ds["point"].values]
    ds["samples"] = (
        ("point", "sample"),
        kept,
        {"role": "samples", "long_name": "predictive draws (ensemble members)", "units": units},
    )


def _keep_forecast(ds, form, arrays, kept, level, levels, units, row_ids):
    """Add the given quantiles (dims point, level) or interval bounds of the rows kept."""
    rows = np.searchsorted(row_ids, ds["point"].values)  # positions of the rows kept
    ds["y"].attrs = {"role": "metadata", "long_name": "observed value (y_true)", "units": units}
    if form == "quantiles":
        ds["quantiles"] = (
            ("point", "level"),
            kept["quantiles"][rows],
            {"role": "forecast", "units": units, "long_name": "given predictive quantiles of y"},
        )
        ds.coords["level"] = ("level", levels, {"long_name": "probability level"})
        return
    for side in ("lower", "upper"):
        ds[side] = (
            "point",
            arrays[side][rows],
            {
                "role": "forecast",
                "units": units,
                "level": level,
                "long_name": f"{side} limit of the given {level:g} interval of y",
            },
        )


def _samples_array(samples) -> np.ndarray:
    if isinstance(samples, xr.DataArray):
        samples = (
            samples.transpose("point", ...).values if "point" in samples.dims else samples.values
        )
    try:
        draws = np.array(samples, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(
            f"samples: expected numbers, shape (point, sample), got {type(samples).__name__}"
        ) from None
    if draws.ndim != 2:
        raise ValueError(f"samples: expected shape (point, sample), got {draws.shape}")
    if draws.shape[1] < 2:
        raise ValueError(
            f"samples: need at least 2 draws per point for a spread, got "
            f"{draws.shape[1]} (shape {draws.shape}; rows are points)"
        )
    return draws


def _interval_uE(lo, hi, pred, level, gen, rows):
    """uE of a central interval; errors for ``lower > upper`` and ``y_pred`` outside."""
    problems = []
    inverted = lo > hi
    if inverted.any():
        problems.append(rows_problem("lower", inverted, "lower > upper", rows))
    outside = ~inverted & ((pred < lo) | (pred > hi))
    if outside.any():
        problems.append(rows_problem("y_pred", outside, "y_pred outside [lower, upper]", rows))
    if problems:
        raise ValueError("inconsistent interval:\n  " + "\n  ".join(problems))
    half = (hi - lo) / 2.0
    u = half / _quantile_function(gen, (1.0 + level) / 2.0)
    offset = np.abs((hi + lo) / 2.0 - pred)
    asym = np.isfinite(offset) & (offset > ASYMMETRY_TOLERANCE * half)
    n_asym = int(asym.sum())
    if n_asym:
        warnings.warn(
            f"from_predictions: {n_rows_text(n_asym)} of {len(rows)} with an asymmetric interval "
            f"(centre more than {ASYMMETRY_TOLERANCE:.0%} of the half-width away from y_pred; "
            f"{rows_text(rows[asym])}): uE comes from the width; the asymmetry is not "
            "represented (attrs['n_asymmetric'])",
            DataWarning,
            stacklevel=user_stacklevel(),
        )
    return u, n_asym


def _quantile_uE(qv, levels, gen, rule):
    z = _quantile_function(gen, levels)
    if rule == "nearest":
        i_lo = int(np.argmin(np.abs(levels - P_LOW)))
        i_hi = int(np.argmin(np.abs(levels - P_HIGH)))
        if i_lo == i_hi:
            raise ValueError(
                f"quantiles: the levels nearest {P_LOW:.4f} and {P_HIGH:.4f} are both "
                f"{levels[i_lo]:g}; give levels on both sides, e.g. 0.16 and 0.84"
            )
        u = (qv[:, i_hi] - qv[:, i_lo]) / (z[i_hi] - z[i_lo])
        return u, [float(levels[i_lo]), float(levels[i_hi])]
    zc = z - z.mean()
    u = (qv - qv.mean(axis=1, keepdims=True)) @ zc / float(zc @ zc)
    return u, levels.tolist()


def _count_crossing(qv, rows, rule) -> int:
    """Rows whose quantiles decrease with the level: an error (``"raise"``) or a warning."""
    crossing = (np.diff(qv, axis=1) < 0).any(axis=1)
    n = int(crossing.sum())
    if n and rule == "raise":
        raise ValueError(
            f"quantiles: {n_rows_text(n)} of {len(rows)} with crossing quantiles "
            f"(a quantile below that of a lower level; {rows_text(rows[crossing])}); "
            "crossing='sort' repairs them by sorting each row"
        )
    if n:
        warnings.warn(
            f"from_predictions: {n_rows_text(n)} of {len(rows)} with crossing quantiles "
            f"(a quantile below that of a lower level; {rows_text(rows[crossing])}): "
            "repaired by sorting each row (crossing='sort'); attrs['n_crossing']",
            DataWarning,
            stacklevel=user_stacklevel(),
        )
    return n
