"""Build uqviz datasets from arrays, DataFrames and other datasets.

:func:`from_arrays` and :func:`from_dataframe` share one core, :func:`build_dataset`
(also used by :func:`uqviz.from_predictions`), which applies the bad-input rules of
:mod:`uqviz.data.model`, the ``drop_invalid`` and ``min_uncertainty`` options, and
assembles the Dataset; :func:`from_datasets` gathers several into a DataTree.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd
import xarray as xr

from uqviz.engine import checks
from uqviz.data.model import (
    DROP_HINT,
    as_1d,
    check_dataset,
    common_length,
    float_columns,
    invalid_masks,
    invalid_values_error,
    is_number,
    n_rows_text,
    rows_text,
    scale_masks,
    source_note,
    user_stacklevel,
    variable_attrs,
)
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
from uqviz.engine.warning_classes import DataWarning

__all__ = ["from_arrays", "from_dataframe", "from_datasets"]

#: Relative threshold of ``min_uncertainty="papers"``: rows with
#: ``uE <= PAPERS_MIN_UNCERTAINTY * sd(E)`` are dropped.
PAPERS_MIN_UNCERTAINTY = 1e-6

_RESERVED = ("E", "uE", "point")


# --------------------------------------------------------------------------
# the options
# --------------------------------------------------------------------------
def named_columns(name: str, value) -> dict:
    """``{column name: values}`` from None, a mapping or a DataFrame; a TypeError otherwise.

    Examples
    --------
    >>> list(named_columns("features", {"X": [1.0]})), named_columns("metadata", None)
    (['X'], {})
    """
    if value is None:
        return {}
    if not isinstance(value, (Mapping, pd.DataFrame)):
        raise TypeError(
            f"{name} must be a mapping {{name: values}} or a pandas DataFrame, got "
            f"{type(value).__name__} ({value!r:.60})"
        )
    return dict(value.items())


def _check_names(features: Mapping, metadata: Mapping) -> None:
    for kind, mapping in (("feature", features), ("metadata", metadata)):
        for key in mapping:
            if not isinstance(key, str):
                raise ValueError(f"{kind} names must be str, got {key!r} ({type(key).__name__})")
            if key in _RESERVED:
                raise ValueError(
                    f"{kind} name {key!r} is reserved (reserved names: {', '.join(_RESERVED)})"
                )
    both = sorted(set(features) & set(metadata))
    if both:
        raise ValueError(f"names used both as feature and metadata: {', '.join(map(repr, both))}")


def _checked_name(name, units) -> str:
    if name is None:
        name = "dataset"
    if not isinstance(name, str):
        raise TypeError(f"name must be a str, got {type(name).__name__}")
    if not isinstance(units, str):
        raise TypeError(f"units must be a str, got {type(units).__name__}")
    return name


def _check_filters(drop_invalid, min_uncertainty) -> None:
    checks.boolean("drop_invalid", drop_invalid)
    if min_uncertainty is not None and not (
        (isinstance(min_uncertainty, str) and min_uncertainty == "papers")
        or (is_number(min_uncertainty) and np.isfinite(min_uncertainty) and min_uncertainty >= 0)
    ):
        raise ValueError(
            "min_uncertainty must be None, a finite number >= 0 or 'papers', "
            f"got {min_uncertainty!r}"
        )


def _meta_array(values) -> np.ndarray:
    """A new numpy array holding the metadata values as given."""
    if isinstance(values, (pd.Series, pd.Index, pd.api.extensions.ExtensionArray)):
        if isinstance(values.dtype, np.dtype):
            return np.array(values.to_numpy(), copy=True)
        return np.array(values.to_numpy(dtype=object), dtype=object)
    return np.array(values, copy=True)


# --------------------------------------------------------------------------
# the rows dropped
# --------------------------------------------------------------------------
def _reasons(problems) -> str:
    return "; ".join(f"{k} {p}: {int(m.sum())}" for k, p, m in problems)


def _drop_invalid(
    e, u, feats, row_ids, attrs: dict, *, drop_invalid, min_uncertainty, sources
) -> np.ndarray:
    """The rows kept by the NaN / inf / uE <= 0 rules: an error, or (drop_invalid) a warning."""
    # with a min_uncertainty filter, uE <= 0 rows are left to that filter
    # (they lie below any threshold >= 0), as in the papers
    problems = invalid_masks(e, u, feats, nonpositive=min_uncertainty is None)
    n = len(e)
    keep = np.ones(n, dtype=bool)
    if problems and not drop_invalid:
        raise invalid_values_error(problems, row_ids, hint=DROP_HINT, sources=sources)
    if not drop_invalid:
        return keep
    for _, _, m in problems:
        keep &= ~m
    n_dropped = int(n - keep.sum())
    reasons = _reasons(problems) or "none"
    attrs.update(n_dropped=n_dropped, dropped_reasons=reasons)
    if n_dropped == n:
        raise ValueError(
            f"drop_invalid: all {n_rows_text(n)} are invalid ({reasons}); nothing left"
        )
    if n_dropped:
        warnings.warn(
            f"drop_invalid: dropped {n_dropped} of {n_rows_text(n)} ({reasons}); "
            f"kept {n_rows_text(n - n_dropped)}",
            DataWarning,
            stacklevel=user_stacklevel(),
        )
    return keep


def _threshold(e_kept: np.ndarray, min_uncertainty) -> tuple[float, str]:
    """The uE threshold of ``min_uncertainty`` and how it was set."""
    if min_uncertainty != "papers":
        return float(min_uncertainty), "absolute threshold"
    if e_kept.size < 2:
        raise ValueError("min_uncertainty='papers' needs at least 2 rows to compute sd(E)")
    threshold = PAPERS_MIN_UNCERTAINTY * float(np.std(e_kept, ddof=1))
    return threshold, f"threshold = {PAPERS_MIN_UNCERTAINTY:g} * sd(E)"


def _filter_min_uncertainty(e, u, keep, row_ids, min_uncertainty, attrs: dict) -> np.ndarray:
    """The rows kept by the ``uE <= threshold`` filter (a warning counts the others)."""
    threshold, how = _threshold(e[keep], min_uncertainty)
    low = keep & (u <= threshold)
    n_low = int(low.sum())
    n_nonpos = int((low & (u <= 0)).sum())
    if n_nonpos:
        how += f"; {n_nonpos} of them with uE <= 0"
    attrs.update(n_filtered=n_low, min_uncertainty=threshold)
    if n_low == int(keep.sum()):
        raise ValueError(
            f"min_uncertainty: all {n_rows_text(n_low)} have uE <= {threshold:.6g} ({how})"
        )
    if n_low:
        keep = keep & ~low
        warnings.warn(
            f"min_uncertainty: dropped {n_rows_text(n_low)} with uE <= {threshold:.6g} "
            f"({how}; {rows_text(row_ids[low])}); kept {n_rows_text(int(keep.sum()))}",
            DataWarning,
            stacklevel=user_stacklevel(),
        )
    return keep


def _drop_scale(e, u, keep, row_ids, attrs: dict, drop_invalid) -> np.ndarray:
    """After a min_uncertainty filter: subnormal uE and overflowing Z of the rows kept."""
    scale = [(k, p, m & keep) for k, p, m in scale_masks(e, u) if (m & keep).any()]
    if not scale:
        return keep
    if not drop_invalid:
        raise invalid_values_error(scale, row_ids, hint=DROP_HINT)
    n_more = int(np.logical_or.reduce([m for _, _, m in scale]).sum())
    for _, _, m in scale:
        keep = keep & ~m
    reasons = _reasons(scale)
    attrs["n_dropped"] = attrs.get("n_dropped", 0) + n_more
    attrs["dropped_reasons"] = "; ".join(
        r for r in (attrs.get("dropped_reasons"), reasons) if r and r != "none"
    )
    if not keep.any():
        raise ValueError(f"drop_invalid: no row left ({reasons})")
    warnings.warn(
        f"drop_invalid: dropped {n_rows_text(n_more)} ({reasons}); "
        f"kept {n_rows_text(int(keep.sum()))}",
        DataWarning,
        stacklevel=user_stacklevel(),
    )
    return keep


def _assemble(e, u, feats: dict, meta: dict, row_ids, keep, attrs: dict, units: str) -> xr.Dataset:
    if not keep.all():
        e, u, row_ids = e[keep], u[keep], row_ids[keep]
        feats = {k: v[keep] for k, v in feats.items()}
        meta = {k: v[keep] for k, v in meta.items()}
    data_vars = {
        "E": ("point", e, variable_attrs("E", units)),
        "uE": ("point", u, variable_attrs("uE", units)),
    }
    data_vars.update({k: ("point", v, variable_attrs("feature")) for k, v in feats.items()})
    data_vars.update({k: ("point", v, variable_attrs("metadata")) for k, v in meta.items()})
    return xr.Dataset(data_vars, coords={"point": ("point", row_ids)}, attrs=attrs)


# --------------------------------------------------------------------------
# the common core
# --------------------------------------------------------------------------
def build_dataset(
    e_raw,
    u_raw,
    *,
    features=None,
    metadata=None,
    name=None,
    units="",
    drop_invalid=False,
    min_uncertainty=None,
    u_from_variance=False,
    sources=None,
    row_ids=None,
) -> xr.Dataset:
    """Common core of from_arrays / from_dataframe / from_predictions (inputs never mutated).

    ``u_from_variance``: ``u_raw`` holds variances; ``sources``: ``{"E": "column 'err'"}``,
    where E, uE or a feature come from, named in the messages; ``row_ids``: the row numbers
    (coordinate ``point`` and the messages; default ``0 .. n - 1``), the original rows of
    one target of several.

    Examples
    --------
    >>> build_dataset([0.2], [0.04], u_from_variance=True)["uE"].values.tolist()
    [0.2]
    """
    features = named_columns("features", features)
    metadata = named_columns("metadata", metadata)
    name = _checked_name(name, units)
    _check_names(features, metadata)
    _check_filters(drop_invalid, min_uncertainty)
    sources = sources or {}
    raw = {"E": as_1d("E", e_raw), "uE": as_1d("uE", u_raw)}
    raw.update({k: as_1d(k, v) for k, v in features.items()})
    meta = {k: as_1d(k, v) for k, v in metadata.items()}
    n = common_length({**raw, **meta}, label=lambda k: k + source_note(k, sources))
    row_ids = np.arange(n, dtype=np.int64) if row_ids is None else np.asarray(row_ids, np.int64)
    feats = float_columns(raw, row_ids, allow_bool=features.keys(), sources=sources)
    e, u = feats.pop("E"), feats.pop("uE")
    if u_from_variance:
        # signed square root: a negative variance gives a negative uE, which
        # the uE <= 0 rule reports instead of a silent NaN
        u = np.sign(u) * np.sqrt(np.abs(u))
    attrs = {"name": name, "units": units}
    keep = _drop_invalid(
        e,
        u,
        feats,
        row_ids,
        attrs,
        drop_invalid=drop_invalid,
        min_uncertainty=min_uncertainty,
        sources=sources,
    )
    if min_uncertainty is not None:
        keep = _filter_min_uncertainty(e, u, keep, row_ids, min_uncertainty, attrs)
        keep = _drop_scale(e, u, keep, row_ids, attrs, drop_invalid)
    meta = {k: _meta_array(v) for k, v in meta.items()}
    return _assemble(e, u, feats, meta, row_ids, keep, attrs, units)


# --------------------------------------------------------------------------
# public constructors
# --------------------------------------------------------------------------
def from_arrays(
    errors,
    uncertainties,
    *,
    features=None,
    metadata=None,
    name=None,
    units="",
    drop_invalid=False,
    min_uncertainty=None,
    targets=None,
    groups=None,
) -> xr.Dataset:
    """Build a uqviz dataset from arrays of errors and uncertainties.

    Several targets, shape (row, target) (a DataFrame: its columns are the targets), give the
    targets tree of ``uqviz.data.targets``: one child per target holding its observed rows
    (a NaN in E or uE marks that target missing for that row, counted in ``n_missing``).

    Parameters
    ----------
    errors : array_like, 1-D, or (row, target)
        Errors ``E = reference - prediction``.
    uncertainties : array_like, 1-D, or (row, target)
        Standard uncertainties ``uE`` (> 0).
    features : mapping of str to array_like, optional
        Numeric input features, e.g. ``{"mass": m}``.
    metadata : mapping of str to array_like, optional
        Other per-point information, kept as given.
    name : str, optional
        Default ``"dataset"``.
    units : str, default ""
    drop_invalid : bool, default False
        Drop invalid rows with a warning instead of raising.
    min_uncertainty : None, float or "papers", optional
        Drop rows with ``uE <= threshold``; ``"papers"``: ``1e-6 * sd(E)``.
    targets : list of str, optional
        Names of the targets (the columns of (row, target) inputs; default the DataFrame's
        columns, else ``"target0"``, ``"target1"``, ...). Given with 1-D inputs: a tree of
        one target.
    groups : array_like, optional
        A label per row (a structure, a molecule, a batch; ints or strings): the coordinate
        ``group`` on ``point`` (in every child of a targets tree), ``attrs["groups"]`` the
        Series' name or ``"group"``. Bootstraps then resample whole groups.

    Returns
    -------
    xarray.Dataset or xarray.DataTree
        Dim ``point``, variables ``E``, ``uE`` and the features (the dataset model of
        ``uqviz.data.model``, checked by :func:`uqviz.check_dataset`); attributes
        ``n_dropped``, ``dropped_reasons``,
        ``n_filtered``, ``min_uncertainty`` record the dropped rows. Several targets: the
        targets tree (``attrs["layout"] == "targets"``, ``targets``, ``n_missing``,
        ``missing``), coordinate ``point`` of each child the original rows.

    Raises
    ------
    ValueError
        Bad input (the rules of ``uqviz.data.model``: NaN, inf, uE <= 0, length mismatch,
        non-numeric columns), naming the variable and the count.

    Examples
    --------
    >>> import uqviz.data as ud
    >>> ds = ud.from_arrays([0.1, -0.3, 0.2], [0.2, 0.25, 0.1],
    ...                     features={"X": [1.0, 2.0, 3.0]}, name="demo")
    >>> ds.sizes["point"], ds.attrs["name"]
    (3, 'demo')
    >>> ud.from_arrays([0.1, 0.2], [0.1, 0.0])
    Traceback (most recent call last):
    ...
    ValueError: invalid values (pass drop_invalid=True to drop these rows):
      uE: 1 row with uE <= 0 (row 1)

    Two targets, the second missing in row 1 (NaN), points of two structures:

    >>> tree = ud.from_arrays([[0.1, 0.2], [0.3, float("nan")], [-0.2, 0.1]],
    ...                       [[0.2, 0.2], [0.3, 0.3], [0.1, 0.1]],
    ...                       targets=["fx", "fy"], groups=["s1", "s1", "s2"])
    >>> list(tree.children), tree.attrs["n_missing"], tree["fy"]["point"].values.tolist()
    (['fx', 'fy'], [0, 1], [0, 2])
    >>> tree["fy"]["group"].values.tolist()
    ['s1', 's2']
    """
    options = dict(
        features=features,
        metadata=metadata,
        units=units,
        drop_invalid=drop_invalid,
        min_uncertainty=min_uncertainty,
    )
    if targets is not None or is_several(errors, uncertainties):
        arrays = {
            "errors": target_columns("errors", errors),
            "uncertainties": target_columns("uncertainties", uncertainties),
        }
        names = target_names(
            targets, np.shape(arrays["errors"])[1], default_names(errors, uncertainties)
        )
        arrays = float_targets(arrays, names)
        e2, u2 = arrays["errors"], arrays["uncertainties"]
        return _targets_tree(
            e2, u2, names, np.isnan(e2) | np.isnan(u2), name=name, groups=groups, **options
        )
    ds = build_dataset(errors, uncertainties, name=name, **options)
    return _grouped(ds, groups, len(as_1d("E", errors)))


def _grouped(ds: xr.Dataset, groups, n: int, what: str | None = None) -> xr.Dataset:
    """A dataset of ``n`` rows given with its ``groups=`` (None: unchanged)."""
    if groups is None:
        return ds
    return with_groups(ds, group_labels(groups, n), what or groups_name(groups))


def _targets_tree(
    e2,
    u2,
    names,
    missing,
    *,
    name,
    groups,
    groups_what=None,
    features,
    metadata,
    units,
    drop_invalid,
    min_uncertainty,
    u_from_variance=False,
    sources=None,
) -> xr.DataTree:
    """The targets tree of float (row, target) errors and uncertainties (variances)."""
    features = named_columns("features", features)
    metadata = named_columns("metadata", metadata)
    common_length(
        {
            "E": e2[:, 0],
            **{k: as_1d(k, v) for k, v in features.items()},
            **{k: as_1d(k, v) for k, v in metadata.items()},
        }
    )

    def dataset_child(j, rows):
        return build_dataset(
            e2[rows, j],
            u2[rows, j],
            features=take_mapping(features, rows),
            metadata=take_mapping(metadata, rows),
            name=names[j],
            units=units,
            drop_invalid=drop_invalid,
            min_uncertainty=min_uncertainty,
            u_from_variance=u_from_variance,
            sources=None if sources is None else sources[j],
            row_ids=rows,
        )

    return build_targets_tree(
        names,
        missing,
        dataset_child,
        name=name,
        groups=groups,
        groups_what=groups_what or groups_name(groups),
    )


def _as_list(arg, what: str) -> list:
    if arg is None:
        return []
    if isinstance(arg, str):
        return [arg]
    if isinstance(arg, Sequence) or isinstance(arg, (pd.Index, np.ndarray)):
        return list(arg)
    raise ValueError(f"{what} must be a list of column names, got {type(arg).__name__}")


def _default_column(columns: list, name: str, what: str, options: str) -> str:
    """``name`` (``"E"``, ``"uE"``) when the DataFrame has that column, else a ValueError."""
    if name not in columns:
        raise ValueError(
            f"no {what} column: pass {options} (no column named {name!r}; "
            f"columns: {', '.join(map(str, columns))})"
        )
    return name


def _errors_column(columns: list, errors, reference, prediction):
    """The column of E (``"E"`` by default), or None when E = reference - prediction."""
    if errors is not None and (reference is not None or prediction is not None):
        raise ValueError("give either errors= or reference= and prediction=, not both")
    if (reference is None) != (prediction is None):
        given, missing = (
            ("reference", "prediction") if reference is not None else ("prediction", "reference")
        )
        raise ValueError(f"{given}= needs {missing}= too (E = reference - prediction)")
    if errors is None and reference is None:
        return _default_column(columns, "E", "errors", "errors= or reference= and prediction=")
    return errors


def _uncertainties_column(columns: list, uncertainties, variances):
    """The column of uE (``"uE"`` by default), or None when uE = sqrt(variances)."""
    if uncertainties is not None and variances is not None:
        raise ValueError("give either uncertainties= or variances=, not both")
    if uncertainties is None and variances is None:
        return _default_column(columns, "uE", "uncertainties", "uncertainties= or variances=")
    return uncertainties


def _check_columns(df: pd.DataFrame, wanted: list) -> None:
    columns = list(df.columns)
    missing = [c for c in dict.fromkeys(wanted) if c not in columns]
    if missing:
        raise ValueError(
            f"column(s) not found: {', '.join(map(repr, missing))} "
            f"(columns: {', '.join(map(str, columns))})"
        )
    for c in wanted:
        if isinstance(df[c], pd.DataFrame):
            raise ValueError(f"column {c!r} appears more than once in the DataFrame")


def _errors_of(df: pd.DataFrame, errors, reference, prediction, sources: dict):
    """The E column, or reference - prediction (non-numeric columns named)."""
    if errors is not None:
        if errors != "E":
            sources["E"] = f"column {errors!r}"
        return df[errors]
    labels = {
        f"reference [column {reference!r}]": df[reference],
        f"prediction [column {prediction!r}]": df[prediction],
    }
    ref, pred = float_columns(labels, np.arange(len(df), dtype=np.int64)).values()
    sources["E"] = f"{reference!r} - {prediction!r}"
    with np.errstate(invalid="ignore"):
        return ref - pred  # inf - inf gives NaN, reported by the NaN rule


def _uncertainties_of(df: pd.DataFrame, uncertainties, variances, sources: dict):
    if variances is not None:
        sources["uE"] = f"sqrt of column {variances!r}"
        return df[variances]
    if uncertainties != "uE":
        sources["uE"] = f"column {uncertainties!r}"
    return df[uncertainties]


def from_dataframe(
    df,
    *,
    errors=None,
    reference=None,
    prediction=None,
    uncertainties=None,
    variances=None,
    features=None,
    metadata=None,
    name=None,
    units="",
    drop_invalid=False,
    min_uncertainty=None,
    targets=None,
    groups=None,
) -> xr.Dataset:
    """Build a uqviz dataset from columns of a pandas DataFrame (not modified).

    Lists of columns (``reference=["logS", "logP"]``, ``prediction=[...]``,
    ``uncertainties=[...]``, one per target) give the targets tree of
    :func:`uqviz.from_arrays`: an empty (NaN) cell of a target's columns marks that target
    missing for that row, counted per target.

    Parameters
    ----------
    df : pandas.DataFrame
    errors : str, optional
        Column of errors, or give `reference` and `prediction`; default ``"E"``.
    reference, prediction : str, optional
        ``E = reference - prediction``.
    uncertainties : str, optional
        Column of uncertainties, or give `variances`; default ``"uE"``.
    variances : str, optional
        ``uE = sqrt(variances)``.
    features, metadata : list of str, optional
    name, units, drop_invalid, min_uncertainty
        As in :func:`from_arrays`.
    targets : list of str, optional
        Names of the targets; default the reference (else errors) columns.
    groups : str or array_like, optional
        The column of group labels (``attrs["groups"]`` its name), or a label per row.

    Returns
    -------
    xarray.Dataset or xarray.DataTree
        Coordinate ``point`` = row position in `df`; several targets: the targets tree.

    Raises
    ------
    ValueError
        Missing or contradictory columns, and the errors of :func:`from_arrays`.

    Examples
    --------
    >>> import pandas as pd
    >>> import uqviz.data as ud
    >>> df = pd.DataFrame({"ref": [1.0, 2.0], "pred": [0.5, 2.5], "var": [0.25, 0.04]})
    >>> ds = ud.from_dataframe(df, reference="ref", prediction="pred", variances="var")
    >>> ds["E"].values.tolist(), ds["uE"].values.tolist()
    ([0.5, -0.5], [0.5, 0.2])
    """
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"df must be a pandas.DataFrame, got {type(df).__name__}")
    roles = dict(
        errors=errors,
        reference=reference,
        prediction=prediction,
        uncertainties=uncertainties,
        variances=variances,
    )
    options = dict(units=units, drop_invalid=drop_invalid, min_uncertainty=min_uncertainty)
    if targets is not None or any(
        isinstance(v, (list, tuple, pd.Index, np.ndarray)) for v in roles.values()
    ):
        return _dataframe_targets(df, roles, targets, groups, features, metadata, name, options)
    groups_col = _groups_column(df, groups)
    errors = _errors_column(list(df.columns), errors, reference, prediction)
    uncertainties = _uncertainties_column(list(df.columns), uncertainties, variances)
    feat_cols = _as_list(features, "features")
    meta_cols = _as_list(metadata, "metadata")
    given = [c for c in (errors, reference, prediction, uncertainties, variances) if c is not None]
    _check_columns(df, given + feat_cols + meta_cols)
    sources = {}
    e_raw = _errors_of(df, errors, reference, prediction, sources)
    u_raw = _uncertainties_of(df, uncertainties, variances, sources)
    ds = build_dataset(
        e_raw,
        u_raw,
        features={c: df[c] for c in feat_cols},
        metadata={c: df[c] for c in meta_cols},
        name=name,
        units=units,
        drop_invalid=drop_invalid,
        min_uncertainty=min_uncertainty,
        u_from_variance=variances is not None,
        sources=sources,
    )
    return _grouped(ds, groups_col[0], len(df), groups_col[1]) if groups_col else ds


def _groups_column(df: pd.DataFrame, groups):
    """``(labels, what)`` of ``groups=`` (a column name or a label per row), or ``()``."""
    if groups is None:
        return ()
    if isinstance(groups, str):
        _check_columns(df, [groups])
        return df[groups], groups
    return groups, groups_name(groups)


def _role_columns(roles: dict) -> dict:
    """``{role: [columns]}`` of the roles given (a str is one column)."""
    return {k: _as_list(v, k) for k, v in roles.items() if v is not None}


def _check_target_roles(cols: dict) -> int:
    """The number of targets of lists of columns by role; a ValueError for a wrong set."""
    if "errors" in cols and ("reference" in cols or "prediction" in cols):
        raise ValueError("give either errors= or reference= and prediction=, not both")
    if ("reference" in cols) != ("prediction" in cols):
        raise ValueError("several targets: reference= needs prediction= too, one column per target")
    if "errors" not in cols and "reference" not in cols:
        raise ValueError("several targets: pass errors= or reference= and prediction= (lists)")
    if ("uncertainties" in cols) == ("variances" in cols):
        raise ValueError("several targets: pass either uncertainties= or variances= (lists)")
    counts = {k: len(v) for k, v in cols.items()}
    if len(set(counts.values())) != 1:
        raise ValueError(
            "several targets: one column per target in each role; got "
            + ", ".join(f"{k} {n} column(s)" for k, n in counts.items())
        )
    return next(iter(counts.values()))


def _target_floats(df, cols: dict, t: int) -> dict:
    """``{role: float (row, target)}`` of the columns by role (non-numeric cells named)."""
    if not len(df):
        raise ValueError("empty input: the DataFrame has 0 rows")
    rows = np.arange(len(df), dtype=np.int64)
    return {
        role: np.stack(
            list(float_columns({f"{role} [column {c!r}]": df[c] for c in cs}, rows).values()),
            axis=1,
        ).reshape(len(df), t)
        for role, cs in cols.items()
    }


def _dataframe_targets(df, roles, targets, groups, features, metadata, name, options):
    """The targets tree of lists of columns, one per target (from_dataframe)."""
    cols = _role_columns(roles)
    t = _check_target_roles(cols)
    first = cols.get("reference", cols.get("errors"))
    names = target_names(targets, t, [str(c) for c in first])
    feat_cols = _as_list(features, "features")
    meta_cols = _as_list(metadata, "metadata")
    _check_columns(df, [c for v in cols.values() for c in v] + feat_cols + meta_cols)
    groups_col = _groups_column(df, groups)
    floats = _target_floats(df, cols, t)
    missing = np.logical_or.reduce([np.isnan(a) for a in floats.values()])
    u_role = "uncertainties" if "uncertainties" in cols else "variances"
    if "errors" in cols:
        e2 = floats["errors"]
        sources = [{"E": f"column {c!r}"} for c in cols["errors"]]
    else:
        with np.errstate(invalid="ignore"):
            e2 = floats["reference"] - floats["prediction"]  # inf - inf: NaN, reported
        sources = [{"E": f"{r!r} - {p!r}"} for r, p in zip(cols["reference"], cols["prediction"])]
    for s, c in zip(sources, cols[u_role]):
        s["uE"] = f"sqrt of column {c!r}" if u_role == "variances" else f"column {c!r}"
    return _targets_tree(
        e2,
        floats[u_role],
        names,
        missing,
        name=name,
        groups=groups_col[0] if groups_col else None,
        groups_what=groups_col[1] if groups_col else None,
        features={c: df[c] for c in feat_cols},
        metadata={c: df[c] for c in meta_cols},
        u_from_variance=u_role == "variances",
        sources=sources,
        **options,
    )


def _named_datasets(datasets) -> list[tuple[str, xr.Dataset]]:
    """``[(name, Dataset), ...]`` from a mapping, a sequence of named datasets or one dataset."""
    if isinstance(datasets, xr.Dataset):
        datasets = [datasets]
    if isinstance(datasets, Mapping):
        return list(datasets.items())
    if isinstance(datasets, (str, bytes)) or not isinstance(datasets, Iterable):
        raise TypeError(
            f"datasets: expected a mapping name -> xarray.Dataset or a sequence of "
            f"named datasets, got {type(datasets).__name__}"
        )
    pairs = []
    for i, ds in enumerate(datasets):
        if not isinstance(ds, xr.Dataset):
            raise TypeError(f"item {i}: expected an xarray.Dataset, got {type(ds).__name__}")
        nm = ds.attrs.get("name")
        if not isinstance(nm, str) or not nm:
            raise ValueError(
                f"item {i}: dataset has no 'name' attribute; pass a mapping name -> dataset"
            )
        pairs.append((nm, ds))
    return pairs


def from_datasets(datasets) -> xr.DataTree:
    """Gather datasets into a DataTree, one child per dataset, in the given order.

    Parameters
    ----------
    datasets : mapping of str to xarray.Dataset, or sequence of xarray.Dataset
        Children are named by the keys, else by each dataset's ``name``.

    Returns
    -------
    xarray.DataTree

    Raises
    ------
    ValueError
        Duplicate or missing names, names with ``"/"``, or no dataset.

    Examples
    --------
    >>> import uqviz.data as ud
    >>> a = ud.from_arrays([0.1, 0.2], [0.1, 0.3], name="a")
    >>> b = ud.from_arrays([0.3, -0.1], [0.2, 0.2], name="b")
    >>> list(ud.from_datasets([b, a]).children)
    ['b', 'a']
    """
    pairs = _named_datasets(datasets)
    if not pairs:
        raise ValueError("from_datasets: no dataset given")
    names = [nm for nm, _ in pairs]
    dups = sorted({nm for nm in names if names.count(nm) > 1})
    if dups:
        raise ValueError(f"duplicate dataset names: {', '.join(map(repr, dups))}")
    children = {}
    for nm, ds in pairs:
        if not isinstance(nm, str) or not nm or "/" in nm or nm in (".", ".."):
            raise ValueError(f"invalid dataset name {nm!r}: use a non-empty str without '/'")
        check_dataset(ds)
        children[nm] = ds.copy()
        children[nm].attrs = {**ds.attrs, "name": nm}
    return xr.DataTree.from_dict(children)
