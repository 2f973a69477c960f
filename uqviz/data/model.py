"""The uqviz dataset model: what a dataset is, the bad-input rules, :func:`check_dataset`.

Data model: an :class:`xarray.Dataset` with dim ``point`` (coordinate: 0-based
row number in the original input), float64 ``E`` (reference - prediction) and
``uE`` (> 0), float64 features (``role="feature"``), metadata of any dtype
(``role="metadata"``), attributes ``name`` and ``units``. Several datasets:
an :class:`xarray.DataTree`, one child per dataset (:func:`uqviz.from_datasets`).

Bad input is never silently dropped or altered: NaN/inf in ``E``, ``uE`` or a
feature (an interval's ``lower = -inf`` and ``upper = +inf``, the whole line, are values),
``uE <= 0`` (or subnormal) and non-finite ``Z`` raise a ValueError
naming the variable, the problem, the count and the first rows, unless
``drop_invalid=True`` (rows dropped with a warning, recorded in ``n_dropped``,
``dropped_reasons``). The forecast a dataset holds as given (``y``, ``quantiles``,
``lower``/``upper``, ``samples``) is checked by ``forecast_problems`` wherever a dataset
enters a compute function: a NaN ``y``, crossing or NaN quantiles, levels that are not
distinct increasing probabilities in (0, 1), ``lower > upper``, an interval without a level
in (0, 1), a one-member ensemble. Length mismatches, empty or non-numeric input,
misaligned pandas indexes and ragged CSV lines always raise. Inputs are never
modified. ``min_uncertainty`` (the papers' ``uE <= 1e-6 sd(E)`` filter) runs
last and then takes the ``uE <= 0`` rows.

This module holds the model and the checks shared by every way of building a
dataset; :mod:`uqviz.data.constructors` builds datasets from arrays, DataFrames and
other datasets, :mod:`uqviz.data.readers` reads files, :mod:`uqviz.data.predictions`
and :mod:`uqviz.data.estimators` start from a model's output.
"""

from __future__ import annotations

import inspect
import numbers
import os
from collections.abc import Collection, Mapping

import numpy as np
import pandas as pd
import xarray as xr

from uqviz.engine.tree import naming_child

#: how the error on invalid rows says to drop them (functions without drop_invalid say
#: their own way)
DROP_HINT = "pass drop_invalid=True to drop these rows"

__all__ = ["check_dataset", "z_scores"]

_MAX_LISTED_ROWS = 10
_PKG_DIR = os.path.dirname(os.path.abspath(__file__))
#: smallest normal float64: below it 1/uE overflows
_TINY = float(np.finfo(np.float64).tiny)


# --------------------------------------------------------------------------
# messages
# --------------------------------------------------------------------------
def user_stacklevel() -> int:
    """Stack level pointing at the first frame outside ``uqviz/data``.

    Examples
    --------
    >>> user_stacklevel() >= 1
    True
    """
    frame = inspect.currentframe()
    level = 0
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_PKG_DIR):
        frame = frame.f_back
        level += 1
    return max(level, 1)


def rows_text(rows, noun: str = "row") -> str:
    """``"row 3"`` or ``"rows 4, 17, 90"`` (at most the first ten, then ``...``).

    Examples
    --------
    >>> rows_text([3]), rows_text(range(12), noun="line")
    ('row 3', 'lines 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, ...')
    """
    rows = [int(r) for r in rows]
    shown = ", ".join(str(r) for r in rows[:_MAX_LISTED_ROWS])
    if len(rows) > _MAX_LISTED_ROWS:
        shown += ", ..."
    return f"{noun} {shown}" if len(rows) == 1 else f"{noun}s {shown}"


def n_rows_text(n: int, noun: str = "row") -> str:
    """``"1 row"`` or ``"n rows"``, for messages.

    Examples
    --------
    >>> n_rows_text(1), n_rows_text(3, noun="line")
    ('1 row', '3 lines')
    """
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def rows_problem(label: str, mask: np.ndarray, what: str, row_ids: np.ndarray) -> str:
    """``"<label>: <n> rows with <what> (rows ...)"``.

    Examples
    --------
    >>> import numpy as np
    >>> rows_problem("uE", np.array([False, True]), "<= 0", np.arange(2))
    'uE: 1 row with uE <= 0 (row 1)'
    """
    rows = row_ids[np.flatnonzero(mask)]
    if what.startswith(("<", ">")):  # a comparison: "uE <= 0"
        what = f"{label} {what}"
    return f"{label}: {n_rows_text(len(rows))} with {what} ({rows_text(rows)})"


def source_note(key: str, sources: Mapping | None) -> str:
    """``" [<where key comes from>]"`` when ``sources`` says it, else ``""``.

    Examples
    --------
    >>> source_note("E", {"E": "column 'err'"}), source_note("uE", None)
    (" [column 'err']", '')
    """
    return f" [{sources[key]}]" if sources and key in sources else ""


def invalid_values_error(
    problems, row_ids: np.ndarray, *, hint: str = "", sources: Mapping | None = None
) -> ValueError:
    """The ValueError listing the ``(label, problem, mask)`` of :func:`invalid_masks`.

    Examples
    --------
    >>> import numpy as np
    >>> invalid_values_error([("E", "NaN", np.array([True, False]))], np.arange(2))
    ValueError('invalid values:\\n  E: 1 row with NaN (row 0)')
    """
    lines = [rows_problem(k, m, p, row_ids) + source_note(k, sources) for k, p, m in problems]
    head = f"invalid values ({hint})" if hint else "invalid values"
    return ValueError(f"{head}:\n  " + "\n  ".join(lines))


# --------------------------------------------------------------------------
# columns: shapes, lengths, numbers
# --------------------------------------------------------------------------
def is_number(v) -> bool:
    """True for a real number that is not a bool.

    Examples
    --------
    >>> is_number(2.5), is_number(True), is_number("1")
    (True, False, False)
    """
    return isinstance(v, numbers.Real) and not isinstance(v, (bool, np.bool_))


def _parses(v) -> bool:
    """True if ``v`` is text that ``float()`` reads."""
    if not isinstance(v, (str, bytes)):
        return False
    try:
        float(v)
    except ValueError:
        return False
    return True


def _overflows(v) -> bool:
    """True if ``v`` is text of a finite number too large for float64 (``"1e400"``)."""
    if not isinstance(v, (str, bytes)):
        return False
    text = v.decode() if isinstance(v, bytes) else v
    try:
        return np.isinf(float(text)) and "inf" not in text.lower()
    except ValueError:
        return False


def _is_pandas_1d(values) -> bool:
    return isinstance(values, (pd.Series, pd.Index, pd.api.extensions.ExtensionArray))


def as_1d(label: str, values):
    """Return ``values`` as a 1-D object (pandas objects kept) or raise.

    Examples
    --------
    >>> as_1d("E", [1.0, 2.0]).shape
    (2,)
    >>> as_1d("E", 1.0)
    Traceback (most recent call last):
    ...
    ValueError: E: expected a 1-D array, got a scalar
    """
    if _is_pandas_1d(values):
        return values
    if isinstance(values, pd.DataFrame):
        raise ValueError(f"{label}: expected a 1-D array, got a DataFrame")
    if isinstance(values, xr.DataArray):
        values = values.values
    if isinstance(values, np.ma.MaskedArray):
        masked = int(np.count_nonzero(np.ma.getmaskarray(values)))
        if masked:
            raise ValueError(
                f"{label}: a masked array with {n_rows_text(masked)} masked; uqviz "
                "never uses masked values: drop those rows, or fill them "
                "(values.filled(np.nan)) and pass drop_invalid=True"
            )
        values = np.ma.getdata(values)
    try:
        arr = np.asarray(values)
    except ValueError as exc:  # a ragged sequence: rows of different lengths
        raise ValueError(
            f"{label}: expected a 1-D array of numbers, got a ragged sequence "
            "(elements of different lengths, or sequences among numbers)"
        ) from exc
    if arr.ndim != 1:
        what = "a scalar" if arr.ndim == 0 else f"an array of shape {arr.shape}"
        raise ValueError(f"{label}: expected a 1-D array, got {what}")
    return arr


def _boolean_message(label: str, n: int) -> str:
    return (
        f"{label}: non-numeric column (boolean dtype): "
        f"{n_rows_text(n)} hold True/False, not numbers"
    )


def _typed_floats(label: str, values, allow_bool: bool):
    """``(floats, message, objects, is_string)`` from a pandas or numpy column's dtype:
    floats (or a message) when the dtype decides, else its values as objects."""
    if _is_pandas_1d(values):
        dtype = values.dtype
        if pd.api.types.is_bool_dtype(dtype) and not allow_bool:
            return None, _boolean_message(label, len(values)), None, False
        if pd.api.types.is_bool_dtype(dtype) or (
            pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_complex_dtype(dtype)
        ):
            floats = np.array(values.to_numpy(dtype=float, na_value=np.nan), dtype=np.float64)
            return floats, None, None, False
        is_string = pd.api.types.is_string_dtype(dtype) and not pd.api.types.is_object_dtype(dtype)
        return (
            None,
            None,
            np.asarray(values.to_numpy(dtype=object, na_value=None), dtype=object),
            is_string,
        )
    kind = values.dtype.kind
    if kind in "iuf" or (kind == "b" and allow_bool):
        return np.array(values, dtype=np.float64), None, None, False
    if kind == "b":
        return None, _boolean_message(label, len(values)), None, False
    if kind in "cmMV":
        return (
            None,
            (
                f"{label}: non-numeric column (dtype {values.dtype}): "
                f"{n_rows_text(len(values))} with values that are not real "
                "numbers"
            ),
            None,
            False,
        )
    return None, None, values.astype(object), kind in "US"


def _object_floats(label: str, values, obj: np.ndarray, is_string: bool, row_ids: np.ndarray):
    """``(floats, None)`` of an object column of numbers and missing entries, else
    ``(None, message)`` naming the rows that are not numbers."""
    missing = np.asarray(pd.isna(obj), dtype=bool)
    numeric = np.array([is_number(v) for v in obj], dtype=bool)
    bad = ~(missing | numeric)
    if not (is_string or bad.any()):
        out = np.full(len(obj), np.nan, dtype=np.float64)
        out[numeric] = [float(v) for v in obj[numeric]]
        return out, None
    # report first the values that cannot be read as numbers at all; if every string
    # would parse, the column is still text: report those rows
    unreadable = bad & ~np.array([_parses(v) for v in obj], dtype=bool)
    overflow = bad & ~unreadable & np.array([_overflows(v) for v in obj], dtype=bool)
    if overflow.any() and not unreadable.any():  # e.g. "1e400": the text of the whole column
        return None, rows_problem(
            label,
            overflow,
            "numbers beyond the range of float64 "
            f"(|x| > {np.finfo(np.float64).max:.4g}; first: "
            f"{obj[np.flatnonzero(overflow)[0]]!r})",
            row_ids,
        )
    if unreadable.any():
        offending = unreadable
    elif bad.any():
        offending = bad
    else:  # a text column holding only missing entries
        offending = np.ones(len(obj), dtype=bool)
    first = obj[np.flatnonzero(offending)[0]]
    dtype_txt = getattr(values, "dtype", "object")
    msg = rows_problem(label, offending, "values that are not numbers", row_ids)
    return None, msg + (
        f"; the column has dtype {dtype_txt} (first offending value: {first!r}); "
        "convert it to numbers first (e.g. pandas.to_numeric)"
    )


def to_float_column(label: str, values, row_ids: np.ndarray, *, allow_bool: bool = False):
    """Convert 1-D ``values`` to a new float64 array.

    Returns ``(array, None)`` on success, ``(None, message)`` when values are not
    numbers. Missing entries (None, pandas NA) become NaN, which the NaN rule
    then reports. String columns (numpy ``U``/``S``, pandas ``str``/``string``)
    are always rejected, even when their text looks numeric.

    Examples
    --------
    >>> import numpy as np
    >>> to_float_column("X", np.array([1, 2]), np.arange(2))[0].tolist()
    [1.0, 2.0]
    >>> to_float_column("X", np.array(["a", "2"]), np.arange(2))[1][:38]
    'X: 1 row with values that are not numb'
    """
    floats, msg, obj, is_string = _typed_floats(label, values, allow_bool)
    if obj is None:
        return floats, msg
    return _object_floats(label, values, obj, is_string, row_ids)


def float_columns(
    columns: Mapping,
    row_ids: np.ndarray,
    *,
    allow_bool: Collection = (),
    sources: Mapping | None = None,
) -> dict[str, np.ndarray]:
    """``{name: float64 array}`` of 1-D columns, or one ValueError naming every non-numeric one.

    Parameters
    ----------
    columns : mapping of str to 1-D values
        numpy arrays or pandas objects, as :func:`as_1d` returns them.
    row_ids : numpy.ndarray
        The row numbers the messages name.
    allow_bool : collection of str
        Columns where True/False count as 1/0 (features).
    sources : mapping of str to str, optional
        Where a column comes from, added to its message (``[column 'err']``).

    Examples
    --------
    >>> import numpy as np
    >>> float_columns({"E": np.array([1, 2])}, np.arange(2))["E"].tolist()
    [1.0, 2.0]
    """
    arrays, errors = {}, []
    for key, values in columns.items():
        arr, msg = to_float_column(key, values, row_ids, allow_bool=key in allow_bool)
        if msg is not None:
            errors.append(msg + source_note(key, sources))
        arrays[key] = arr
    if errors:
        raise ValueError("non-numeric input:\n  " + "\n  ".join(errors))
    return arrays


def check_same_index(items: Mapping) -> None:
    """pandas inputs (Series, DataFrame) must share one index: paired by position, never silently.

    Examples
    --------
    >>> import pandas as pd
    >>> check_same_index({"E": pd.Series([1.0], index=[5]),
    ...                   "uE": pd.Series([1.0], index=[6])})  # doctest: +NORMALIZE_WHITESPACE
    Traceback (most recent call last):
    ...
    ValueError: pandas inputs with different indexes: 'uE' vs 'E'; uqviz pairs values by
    position, which would mix rows: align them first (e.g. uE.reindex(E.index)) or pass
    .to_numpy() to pair by position
    """
    indexed = {k: v.index for k, v in items.items() if isinstance(v, (pd.Series, pd.DataFrame))}
    if len(indexed) < 2:
        return
    (first, ref), *others = indexed.items()
    bad = [k for k, idx in others if not idx.equals(ref)]
    if bad:
        raise ValueError(
            f"pandas inputs with different indexes: {', '.join(map(repr, bad))} vs {first!r}; "
            "uqviz pairs values by position, which would mix rows: align them first "
            f"(e.g. {bad[0]}.reindex({first}.index)) or pass .to_numpy() to pair by position"
        )


def check_same_lengths(lengths: Mapping[str, int], *, label=str) -> None:
    """Raise a ValueError naming every input and its row count unless all lengths agree.

    The first entry is the reference the others are compared with; ``label(key)`` is the
    name shown for an input.

    Examples
    --------
    >>> check_same_lengths({"E": 3, "uE": 2})
    Traceback (most recent call last):
    ...
    ValueError: length mismatch: E has 3 rows, uE has 2 rows; uE has 1 row fewer than E
    """
    if len(set(lengths.values())) <= 1:
        return
    (first, n_ref), *_ = lengths.items()
    detail = ", ".join(f"{label(k)} has {n_rows_text(n)}" for k, n in lengths.items())
    diffs = [
        f"{k} has {n_rows_text(abs(n - n_ref))} {'more' if n > n_ref else 'fewer'} than {first}"
        for k, n in lengths.items()
        if n != n_ref
    ]
    raise ValueError(f"length mismatch: {detail}; {'; '.join(diffs)}")


def common_length(columns: Mapping, *, label=str, empty: str = "E and uE have") -> int:
    """The row count shared by 1-D ``columns`` (pandas indexes equal), or a ValueError.

    The first column is the reference of the length message; ``empty`` starts the
    message for 0 rows (``"empty input: E and uE have 0 rows"``).

    Examples
    --------
    >>> common_length({"E": [0.1, 0.2], "uE": [0.3, 0.4]})
    2
    """
    check_same_index(columns)
    lengths = {k: len(v) for k, v in columns.items()}
    check_same_lengths(lengths, label=label)
    n = next(iter(lengths.values()))
    if n == 0:
        raise ValueError(f"empty input: {empty} 0 rows")
    return n


# --------------------------------------------------------------------------
# the rules on values
# --------------------------------------------------------------------------
def scale_masks(e, u) -> list[tuple[str, str, np.ndarray]]:
    """Rows whose uE is subnormal (1/uE not finite) or whose Z = E/uE overflows.

    Examples
    --------
    >>> import numpy as np
    >>> [(k, m.tolist()) for k, _, m in scale_masks(np.array([1e300, 1.0]), np.array([1e-10, 1.0]))]
    [('E/uE', [True, False])]
    """
    finite = np.isfinite(e) & np.isfinite(u) & (u > 0)
    tiny = finite & (u < _TINY)
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        big = finite & ~tiny & ~np.isfinite(e / u)
    out = [
        ("uE", f"0 < uE < {_TINY:.3g} (subnormal: 1/uE is not finite)", tiny),
        ("E/uE", "|Z| = |E/uE| too large to be a finite number", big),
    ]
    return [(lab, prob, m) for lab, prob, m in out if m.any()]


def invalid_masks(
    e, u, feats: Mapping[str, np.ndarray], *, nonpositive: bool = True
) -> list[tuple[str, str, np.ndarray]]:
    """``[(label, problem, mask), ...]`` for NaN, inf, and (if `nonpositive`) uE <= 0,
    subnormal uE and overflowing Z.

    Examples
    --------
    >>> import numpy as np
    >>> [(k, p) for k, p, _ in invalid_masks(np.array([np.nan, 1.0]), np.array([1.0, 0.0]), {})]
    [('E', 'NaN'), ('uE', '<= 0')]
    """
    out = []
    for label, x in (("E", e), ("uE", u), *feats.items()):
        out.append((label, "NaN", np.isnan(x)))
        # an interval may be the whole line (a conformal rank beyond the data): lower = -inf
        # and upper = +inf are values, the other infinities are not
        inf = (
            np.isposinf(x)
            if label == "lower"
            else np.isneginf(x)
            if label == "upper"
            else np.isinf(x)
        )
        out.append((label, "inf", inf))
        if label == "uE" and nonpositive:
            out.append((label, "<= 0", np.isfinite(x) & (x <= 0)))
    out = [(lab, prob, m) for lab, prob, m in out if m.any()]
    if nonpositive:
        out += scale_masks(e, u)
    return out


def variable_attrs(role: str, units: str = "") -> dict:
    """The attrs of a dataset variable: long_name and units of E and uE, the role of others.

    Examples
    --------
    >>> variable_attrs("uE", "eV"), variable_attrs("feature")
    ({'long_name': 'standard uncertainty', 'units': 'eV'}, {'role': 'feature'})
    """
    if role == "E":
        return {"long_name": "error (reference - prediction)", "units": units}
    if role == "uE":
        return {"long_name": "standard uncertainty", "units": units}
    return {"role": role}


# --------------------------------------------------------------------------
# validation on entry of compute functions
# --------------------------------------------------------------------------
def _tree_children(tree) -> list[tuple[str, xr.Dataset]]:
    """``[(name, Dataset), ...]`` of the children of a DataTree that hold data."""
    pairs = [
        (str(name), child.to_dataset()) for name, child in tree.children.items() if child.has_data
    ]
    if not pairs:
        raise ValueError(
            "ds: the DataTree has no child holding a dataset; build one with uqviz.from_datasets"
        )
    return pairs


def _checked_layout(ds: xr.Dataset) -> np.ndarray:
    """The row numbers of a Dataset with dim ``point`` and 1-D ``E``, ``uE``; else a ValueError."""
    if "point" not in ds.dims:
        raise ValueError(f"dataset has no dimension 'point' (dims: {tuple(ds.dims)})")
    missing = [v for v in ("E", "uE") if v not in ds.data_vars]
    if missing:
        raise ValueError(
            f"dataset lacks variable(s) {', '.join(map(repr, missing))} "
            f"(variables: {', '.join(map(str, ds.data_vars))})"
        )
    for v in ("E", "uE"):
        if ds[v].dims != ("point",):
            raise ValueError(
                f"{v}: must have dims ('point',), got {ds[v].dims}; select one "
                "dataset first (e.g. ds.isel(sample=0)) or pass a DataTree, "
                "one child per dataset"
            )
    n = ds.sizes["point"]
    if n == 0:
        raise ValueError("empty input: E and uE have 0 rows")
    row_ids = np.asarray(ds["point"].values) if "point" in ds.coords else np.arange(n)
    return row_ids if row_ids.dtype.kind in "iu" else np.arange(n)


def _numeric_features(ds: xr.Dataset) -> dict[str, np.ndarray]:
    """The numeric variables on ``point`` other than E, uE and metadata, as float64."""
    return {
        k: np.asarray(var.values, dtype=np.float64)
        for k, var in ds.data_vars.items()
        if k not in ("E", "uE")
        and var.dims == ("point",)
        and var.attrs.get("role") != "metadata"
        and var.dtype.kind in "iufb"
    }


def _probabilities_text(levels) -> str:
    return "[" + ", ".join(f"{float(v):.6g}" for v in levels) + "]"


def _quantile_levels_problem(levels: np.ndarray) -> str | None:
    """What is wrong with the levels of given quantiles (None when they are sound)."""
    if levels.ndim != 1 or levels.size < 2:
        return f"need at least 2 levels, got {levels.size}"
    inside = np.isfinite(levels) & (levels > 0) & (levels < 1)
    if not inside.all():
        return (
            f"{n_rows_text(int((~inside).sum()), 'level')} outside (0, 1): "
            f"{_probabilities_text(levels[~inside])} (a quantile at 0 or 1 is infinite)"
        )
    values, counts = np.unique(levels, return_counts=True)
    if (counts > 1).any():
        return f"levels given more than once: {_probabilities_text(values[counts > 1])}"
    if np.any(np.diff(levels) < 0):
        return "not in increasing order (sort the level coordinate with the quantiles)"
    return None


def _tails_only(inf: np.ndarray, *, upper: bool) -> np.ndarray:
    """Rows with an infinity that is not a tail: ``+inf`` below a level that is not
    ``+inf`` (``upper``), or ``-inf`` above one that is not ``-inf``."""
    other = ~inf
    if upper:  # some non-+inf value at a higher level
        later = np.logical_or.accumulate(other[:, ::-1], axis=1)[:, ::-1]
        beyond = np.zeros_like(other)
        beyond[:, :-1] = later[:, 1:]
    else:
        before = np.logical_or.accumulate(other, axis=1)
        beyond = np.zeros_like(other)
        beyond[:, 1:] = before[:, :-1]
    return (inf & beyond).any(axis=1)


def _interval_level(ds: xr.Dataset) -> None:
    """The nominal coverage of a given interval: ``attrs["level"]`` of lower (or of the
    dataset), a probability in (0, 1)."""
    level = ds["lower"].attrs.get("level", ds.attrs.get("level"))
    if level is None:
        raise ValueError(
            "lower, upper: a given interval needs its nominal coverage, "
            "attrs['level'] of lower (or of the dataset), a probability in (0, 1); "
            "it has none (uqviz.from_predictions(..., level=) records it)"
        )
    if not is_number(level) or not 0.0 < float(level) < 1.0:
        raise ValueError(
            f"lower, upper: the level of the given interval (attrs['level']) must "
            f"be a probability in (0, 1), got {level!r}"
        )


def _quantile_problems(ds: xr.Dataset) -> list[tuple[str, str, np.ndarray]]:
    """The levels of given quantiles (a ValueError), then their rows' problems."""
    q = ds["quantiles"]
    if set(q.dims) != {"point", "level"}:
        raise ValueError(f"quantiles: must have dims ('point', 'level'), got {q.dims}")
    levels = np.asarray(ds["level"].values, dtype=np.float64)
    problem = _quantile_levels_problem(levels)
    if problem is not None:
        raise ValueError(
            f"quantiles: the levels (coordinate 'level') must be distinct "
            f"probabilities in (0, 1), in increasing order; got "
            f"{_probabilities_text(levels)}: {problem}"
        )
    v = np.asarray(q.transpose("point", "level").values, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        crossing = (np.diff(v, axis=1) < 0).any(axis=1)
    misplaced = _tails_only(np.isposinf(v), upper=True) | _tails_only(np.isneginf(v), upper=False)
    return [
        ("quantiles", "a NaN quantile", np.isnan(v).any(axis=1)),
        (
            "quantiles",
            "an infinite quantile that is not a tail (+inf below a finite "
            "quantile or -inf above one)",
            misplaced,
        ),
        ("quantiles", "crossing quantiles (a quantile below that of a lower level)", crossing),
    ]


def _samples_problems(ds: xr.Dataset) -> list[tuple[str, str, np.ndarray]]:
    """An ensemble of one member (a ValueError), then the rows with a non-finite member."""
    members = ds.sizes["sample"]
    if members < 2:
        raise ValueError(
            "samples: an ensemble of one member is a point forecast (its CRPS "
            "is the absolute error, the fair CRPS is undefined, its PIT is 0 "
            f"or 1): give at least 2 members per point, got {members}"
        )
    x = np.asarray(ds["samples"].transpose("point", ...).values, dtype=np.float64)
    x = x.reshape(ds.sizes["point"], -1)
    return [
        ("samples", "a NaN member", np.isnan(x).any(axis=1)),
        ("samples", "an infinite member", np.isinf(x).any(axis=1)),
    ]


def forecast_problems(ds: xr.Dataset) -> list[tuple[str, str, np.ndarray]]:
    """The rows of a dataset's forecast as given that no reader may compute on.

    The one check of the forecast held by a dataset (:func:`uqviz.from_predictions`, a
    recalibration), whatever reads it: the PIT, the scores, the given intervals, the
    recalibrations. Sound datasets pass unchanged; the user's edits after construction are
    what it catches.

    - ``y`` (the observed values, not a feature): finite;
    - ``quantiles`` (dims ``point``, ``level``): the levels distinct probabilities in
      (0, 1), increasing; no NaN; infinite quantiles only as tails (``-inf`` at the lowest
      levels, ``+inf`` at the highest, as a recalibration may give); non-decreasing along
      the levels (no crossing);
    - ``lower``, ``upper`` (not features): ``lower <= upper`` (NaN and the infinities that
      are not the whole line are :func:`invalid_masks`' rule), and a level in (0, 1);
    - ``samples`` (dims ``point``, ``sample``): at least 2 members, all finite.

    Parameters
    ----------
    ds : xarray.Dataset
        One dataset, whose layout :func:`check_dataset` checked.

    Returns
    -------
    list of (str, str, numpy.ndarray)
        ``(label, problem, row mask)``, as :func:`invalid_masks` returns them.

    Raises
    ------
    ValueError
        A problem of the whole forecast, not of rows: bad quantile levels, an interval
        without a level in (0, 1), an ensemble of one member.

    Examples
    --------
    >>> import uqviz
    >>> ds = uqviz.from_predictions([1.0, 2.0], [0.5, 2.5], lower=[-0.5, 1.5],
    ...                             upper=[1.5, 3.5], level=0.9)
    >>> forecast_problems(ds)
    []
    >>> ds["lower"][1] = 4.0
    >>> [(k, p, m.tolist()) for k, p, m in forecast_problems(ds)]
    [('lower', '> upper', [False, True])]
    """
    out = []
    if (
        "y" in ds.data_vars
        and ds["y"].attrs.get("role") != "feature"
        and ds["y"].dims == ("point",)
        and ds["y"].dtype.kind in "iufb"
    ):
        y = np.asarray(ds["y"].values, dtype=np.float64)
        out += [("y", "NaN", np.isnan(y)), ("y", "inf", np.isinf(y))]
    if "quantiles" in ds.data_vars and "level" in ds["quantiles"].dims:
        out += _quantile_problems(ds)
    if (
        "lower" in ds.data_vars
        and "upper" in ds.data_vars
        and ds["lower"].attrs.get("role") != "feature"
        and ds["lower"].dims == ("point",)
        and ds["upper"].dims == ("point",)
    ):
        _interval_level(ds)
        lo = np.asarray(ds["lower"].values, dtype=np.float64)
        hi = np.asarray(ds["upper"].values, dtype=np.float64)
        out.append(("lower", "> upper", lo > hi))
    if "samples" in ds.data_vars and "sample" in ds["samples"].dims:
        out += _samples_problems(ds)
    return [(lab, prob, m) for lab, prob, m in out if m.any()]


def check_dataset(ds):
    """Check that `ds` is a valid uqviz dataset (or a tree of them) and return it unchanged.

    Parameters
    ----------
    ds : xarray.Dataset or xarray.DataTree

    Returns
    -------
    xarray.Dataset or xarray.DataTree

    Raises
    ------
    TypeError
        Neither a Dataset nor a DataTree.
    ValueError
        The rules of the module docstring (E, uE, features and the forecast as given,
        ``forecast_problems``), naming the child of a tree.

    Examples
    --------
    >>> import uqviz.data as ud
    >>> ds = ud.from_arrays([0.1, 0.2], [0.1, 0.3])
    >>> ud.check_dataset(ds) is ds
    True
    """
    if isinstance(ds, xr.DataTree):
        for name, child in _tree_children(ds):
            with naming_child(name):
                check_dataset(child)
        return ds
    if not isinstance(ds, xr.Dataset):
        raise TypeError(
            f"ds: expected an xarray.Dataset or DataTree, got {type(ds).__name__}; "
            "build one with "
            "uqviz.from_arrays, uqviz.from_dataframe or uqviz.read_csv"
        )
    row_ids = _checked_layout(ds)
    arrays = float_columns({v: as_1d(v, ds[v].values) for v in ("E", "uE")}, row_ids)
    problems = invalid_masks(arrays["E"], arrays["uE"], _numeric_features(ds))
    problems += forecast_problems(ds)
    if problems:
        raise invalid_values_error(problems, row_ids)
    return ds


def z_scores(ds):
    r"""Z-scores ``Z = E / uE`` of a dataset.

    Parameters
    ----------
    ds : xarray.Dataset or xarray.DataTree
        Variables ``E`` and ``uE`` on dim ``point``; a DataTree gives a tree of z-scores.

    Returns
    -------
    xarray.DataArray or xarray.DataTree
        Named ``"Z"`` on dim ``point``; for a tree, a tree of variables ``Z``.

    See Also
    --------
    uqviz.validate_average : ZMS, the mean squared z-score.
    uqviz.running_statistics : z-scores sorted by a conditioning variable.

    Notes
    -----
    .. math::

       Z_i = \frac{E_i}{u_{E_i}}

    (Pernot (2024b), eq. 9); calibrated data have :math:`\mathrm{Var}(Z) = 1` (eq. 10).

    References
    ----------
    - Pernot (2024b), eqs. 9-10: z-scores.

    Full entries: :doc:`/docs/references`.

    Examples
    --------
    >>> import uqviz.data as ud
    >>> ud.z_scores(ud.from_arrays([0.2, -0.3], [0.1, 0.3])).values.tolist()
    [2.0, -1.0]
    """
    if isinstance(ds, xr.DataTree):
        check_dataset(ds)
        children = {
            name: z_scores(child).to_dataset(name="Z") for name, child in _tree_children(ds)
        }
        return xr.DataTree.from_dict(children)
    check_dataset(ds)
    z = ds["E"] / ds["uE"]
    z.name = "Z"
    z.attrs = {"long_name": "z-score E/uE", "units": ""}
    return z
