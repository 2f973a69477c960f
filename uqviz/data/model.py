"""Build and validate uqviz datasets: the data model and the bad-input rules.

Data model: an :class:`xarray.Dataset` with dim ``point`` (coordinate: 0-based
row number in the original input), float64 ``E`` (reference - prediction) and
``uE`` (> 0), float64 features (``role="feature"``), metadata of any dtype
(``role="metadata"``), attributes ``name`` and ``units``. Several datasets:
an :class:`xarray.DataTree`, one child per dataset (:func:`from_datasets`).

Bad input is never silently dropped or altered: NaN/inf in ``E``, ``uE`` or a
feature, ``uE <= 0`` (or subnormal) and non-finite ``Z`` raise a ValueError
naming the variable, the problem, the count and the first rows, unless
``drop_invalid=True`` (rows dropped with a warning, recorded in ``n_dropped``,
``dropped_reasons``). Length mismatches, empty or non-numeric input,
misaligned pandas indexes and ragged CSV lines always raise. Inputs are never
modified. ``min_uncertainty`` (the papers' ``uE <= 1e-6 sd(E)`` filter) runs
last and then takes the ``uE <= 0`` rows.
"""

from __future__ import annotations

import csv
import inspect
import io
import numbers
import os
import warnings
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
import xarray as xr

from uqviz.engine.warning_classes import DataWarning

#: how the error on invalid rows says to drop them (functions without drop_invalid say
#: their own way)
DROP_HINT = "pass drop_invalid=True to drop these rows"

__all__ = [
    "check_dataset",
    "from_arrays",
    "from_dataframe",
    "from_datasets",
    "read_csv",
    "z_scores",
]

#: Relative threshold of ``min_uncertainty="papers"``: rows with
#: ``uE <= PAPERS_MIN_UNCERTAINTY * sd(E)`` are dropped.
PAPERS_MIN_UNCERTAINTY = 1e-6

_MAX_LISTED_ROWS = 10
_RESERVED = ("E", "uE", "point")
_PKG_DIR = os.path.dirname(os.path.abspath(__file__))


# --------------------------------------------------------------------------
# small helpers
# --------------------------------------------------------------------------
def user_stacklevel() -> int:
    """Stack level pointing at the first frame outside the uqviz package."""
    frame = inspect.currentframe()
    level = 0
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_PKG_DIR):
        frame = frame.f_back
        level += 1
    return max(level, 1)


def rows_text(rows) -> str:
    """``"row 3"`` or ``"rows 4, 17, 90"`` (at most the first ten, then ``...``)."""
    rows = [int(r) for r in rows]
    shown = ", ".join(str(r) for r in rows[:_MAX_LISTED_ROWS])
    if len(rows) > _MAX_LISTED_ROWS:
        shown += ", ..."
    return f"row {shown}" if len(rows) == 1 else f"rows {shown}"


def n_rows_text(n: int) -> str:
    """``"1 row"`` or ``"n rows"``, for messages."""
    return f"{n} row" if n == 1 else f"{n} rows"


def rows_problem(label: str, mask: np.ndarray, what: str, row_ids: np.ndarray) -> str:
    """``"<label>: <n> rows with <what> (rows ...)"``."""
    rows = row_ids[np.flatnonzero(mask)]
    if what.startswith(("<", ">")):  # a comparison: "uE <= 0"
        what = f"{label} {what}"
    return f"{label}: {n_rows_text(len(rows))} with {what} ({rows_text(rows)})"


def _is_number(v) -> bool:
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


def _meta_array(values) -> np.ndarray:
    """A new numpy array holding the metadata values as given."""
    if isinstance(values, (pd.Series, pd.Index, pd.api.extensions.ExtensionArray)):
        if isinstance(values.dtype, np.dtype):
            return np.array(values.to_numpy(), copy=True)
        return np.array(values.to_numpy(dtype=object), dtype=object)
    return np.array(values, copy=True)


def as_1d(label: str, values):
    """Return ``values`` as a 1-D object (pandas objects kept) or raise."""
    if isinstance(values, (pd.Series, pd.Index, pd.api.extensions.ExtensionArray)):
        return values
    if isinstance(values, pd.DataFrame):
        raise ValueError(f"{label}: expected a 1-D array, got a DataFrame")
    if isinstance(values, xr.DataArray):
        values = values.values
    arr = np.asarray(values)
    if arr.ndim != 1:
        what = "a scalar" if arr.ndim == 0 else f"an array of shape {arr.shape}"
        raise ValueError(f"{label}: expected a 1-D array, got {what}")
    return arr


def to_float_column(label: str, values, row_ids: np.ndarray, *, allow_bool: bool = False):
    """Convert 1-D ``values`` to a new float64 array.

    Returns ``(array, None)`` on success, ``(None, message)`` when values are not
    numbers. Missing entries (None, pandas NA) become NaN, which the NaN rule
    then reports. String columns (numpy ``U``/``S``, pandas ``str``/``string``)
    are always rejected, even when their text looks numeric.
    """
    if isinstance(values, (pd.Series, pd.Index, pd.api.extensions.ExtensionArray)):
        dtype = values.dtype
        if pd.api.types.is_bool_dtype(dtype):
            if allow_bool:
                return np.array(values.to_numpy(dtype=float, na_value=np.nan), dtype=np.float64), None
            return None, (f"{label}: non-numeric column (boolean dtype): "
                          f"{n_rows_text(len(values))} hold True/False, not numbers")
        if pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_complex_dtype(dtype):
            return np.array(values.to_numpy(dtype=float, na_value=np.nan), dtype=np.float64), None
        is_string = pd.api.types.is_string_dtype(dtype) and not pd.api.types.is_object_dtype(dtype)
        obj = np.asarray(values.to_numpy(dtype=object, na_value=None), dtype=object)
    else:
        arr = values
        kind = arr.dtype.kind
        if kind in "iuf":
            return np.array(arr, dtype=np.float64), None
        if kind == "b":
            if allow_bool:
                return np.array(arr, dtype=np.float64), None
            return None, (f"{label}: non-numeric column (boolean dtype): "
                          f"{n_rows_text(len(arr))} hold True/False, not numbers")
        if kind in "cmMV":
            return None, (f"{label}: non-numeric column (dtype {arr.dtype}): "
                          f"{n_rows_text(len(arr))} with values that are not real numbers")
        is_string = kind in "US"
        obj = arr.astype(object)

    missing = np.asarray(pd.isna(obj), dtype=bool)
    numeric = np.array([_is_number(v) for v in obj], dtype=bool)
    bad = ~(missing | numeric)
    if is_string or bad.any():
        # report first the values that cannot be read as numbers at all; if
        # every string would parse, the column is still text: report those rows
        unreadable = bad & ~np.array([_parses(v) for v in obj], dtype=bool)
        if unreadable.any():
            offending = unreadable
        elif bad.any():
            offending = bad
        else:  # a text column holding only missing entries
            offending = np.ones(len(obj), dtype=bool)
        first = obj[np.flatnonzero(offending)[0]]
        dtype_txt = getattr(values, "dtype", "object")
        msg = rows_problem(label, offending, "values that are not numbers", row_ids)
        msg += (f"; the column has dtype {dtype_txt} (first offending value: {first!r}); "
                "convert it to numbers first (e.g. pandas.to_numeric)")
        return None, msg
    out = np.full(len(obj), np.nan, dtype=np.float64)
    out[numeric] = [float(v) for v in obj[numeric]]
    return out, None


def _check_names(features: Mapping, metadata: Mapping) -> None:
    for kind, mapping in (("feature", features), ("metadata", metadata)):
        for key in mapping:
            if not isinstance(key, str):
                raise ValueError(f"{kind} names must be str, got {key!r} ({type(key).__name__})")
            if key in _RESERVED:
                raise ValueError(f"{kind} name {key!r} is reserved (reserved names: {', '.join(_RESERVED)})")
    both = sorted(set(features) & set(metadata))
    if both:
        raise ValueError(f"names used both as feature and metadata: {', '.join(map(repr, both))}")


def variable_attrs(role: str, units: str = "") -> dict:
    """The attrs of a dataset variable: long_name and units of E and uE, the role of others."""
    if role == "E":
        return {"long_name": "error (reference - prediction)", "units": units}
    if role == "uE":
        return {"long_name": "standard uncertainty", "units": units}
    return {"role": role}


#: smallest normal float64: below it 1/uE overflows
_TINY = float(np.finfo(np.float64).tiny)


def _scale_masks(e, u) -> list[tuple[str, str, np.ndarray]]:
    """Rows whose uE is subnormal (1/uE not finite) or whose Z = E/uE overflows."""
    finite = np.isfinite(e) & np.isfinite(u) & (u > 0)
    tiny = finite & (u < _TINY)
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        big = finite & ~tiny & ~np.isfinite(e / u)
    out = [("uE", f"0 < uE < {_TINY:.3g} (subnormal: 1/uE is not finite)", tiny),
           ("E/uE", "|Z| = |E/uE| too large to be a finite number", big)]
    return [(lab, prob, m) for lab, prob, m in out if m.any()]


def _invalid_masks(e, u, feats: Mapping[str, np.ndarray], *,
                   nonpositive: bool = True) -> list[tuple[str, str, np.ndarray]]:
    """``[(label, problem, mask), ...]`` for NaN, inf, and (if `nonpositive`) uE <= 0,
    subnormal uE and overflowing Z."""
    out = []
    for label, x in (("E", e), ("uE", u), *feats.items()):
        out.append((label, "NaN", np.isnan(x)))
        out.append((label, "inf", np.isinf(x)))
        if label == "uE" and nonpositive:
            out.append((label, "<= 0", np.isfinite(x) & (x <= 0)))
    out = [(lab, prob, m) for lab, prob, m in out if m.any()]
    if nonpositive:
        out += _scale_masks(e, u)
    return out


def check_same_index(items: Mapping) -> None:
    """pandas inputs (Series, DataFrame) must share one index: paired by position, never silently."""
    indexed = {k: v.index for k, v in items.items() if isinstance(v, (pd.Series, pd.DataFrame))}
    if len(indexed) < 2:
        return
    (first, ref), *others = indexed.items()
    bad = [k for k, idx in others if not idx.equals(ref)]
    if bad:
        raise ValueError(
            f"pandas inputs with different indexes: {', '.join(map(repr, bad))} vs {first!r}; "
            "uqviz pairs values by position, which would mix rows: align them first "
            f"(e.g. {bad[0]}.reindex({first}.index)) or pass .to_numpy() to pair by position")


def check_same_lengths(lengths: Mapping[str, int], *, label=str) -> None:
    """Raise a ValueError naming every input and its row count unless all lengths agree.

    The first entry is the reference the others are compared with; ``label(key)`` is the
    name shown for an input.
    """
    if len(set(lengths.values())) <= 1:
        return
    (first, n_ref), *_ = lengths.items()
    detail = ", ".join(f"{label(k)} has {n_rows_text(n)}" for k, n in lengths.items())
    diffs = [f"{k} has {n_rows_text(abs(n - n_ref))} {'more' if n > n_ref else 'fewer'} than {first}"
             for k, n in lengths.items() if n != n_ref]
    raise ValueError(f"length mismatch: {detail}; {'; '.join(diffs)}")


def _named_columns(name: str, value) -> dict:
    """``{column name: values}`` from None, a mapping or a DataFrame; a TypeError otherwise."""
    if value is None:
        return {}
    if not isinstance(value, (Mapping, pd.DataFrame)):
        raise TypeError(f"{name} must be a mapping {{name: values}} or a pandas DataFrame, got "
                        f"{type(value).__name__} ({value!r:.60})")
    return dict(value.items())


def build_dataset(e_raw, u_raw, *, features=None, metadata=None, name=None, units="",
           drop_invalid=False, min_uncertainty=None, u_from_variance=False,
           sources=None) -> xr.Dataset:
    """Common core of from_arrays / from_dataframe (inputs never mutated)."""
    features = _named_columns("features", features)
    metadata = _named_columns("metadata", metadata)
    if name is None:
        name = "dataset"
    if not isinstance(name, str):
        raise ValueError(f"name must be a str, got {type(name).__name__}")
    if not isinstance(units, str):
        raise ValueError(f"units must be a str, got {type(units).__name__}")
    _check_names(features, metadata)
    if not isinstance(drop_invalid, (bool, np.bool_)):
        raise ValueError(f"drop_invalid must be True or False, got {drop_invalid!r}")
    if min_uncertainty is not None and not (
            (isinstance(min_uncertainty, str) and min_uncertainty == "papers")
            or (_is_number(min_uncertainty) and np.isfinite(min_uncertainty) and min_uncertainty >= 0)):
        raise ValueError("min_uncertainty must be None, a finite number >= 0 or 'papers', "
                         f"got {min_uncertainty!r}")
    sources = sources or {}

    def lab(key):
        return f"{key} [{sources[key]}]" if key in sources else key

    # 1. shapes and lengths --------------------------------------------------
    raw = {"E": as_1d("E", e_raw), "uE": as_1d("uE", u_raw)}
    raw.update({k: as_1d(k, v) for k, v in features.items()})
    meta = {k: as_1d(k, v) for k, v in metadata.items()}
    check_same_index({**raw, **meta})
    lengths = {k: len(v) for k, v in {**raw, **meta}.items()}
    check_same_lengths(lengths, label=lab)
    n = lengths["E"]
    if n == 0:
        raise ValueError("empty input: E and uE have 0 rows")
    row_ids = np.arange(n, dtype=np.int64)

    # 2. numeric values ----------------------------------------------------
    arrays, errors = {}, []
    for key, values in raw.items():
        arr, msg = to_float_column(key, values, row_ids, allow_bool=key not in ("E", "uE"))
        if msg is not None:
            errors.append(msg + (f" [{sources[key]}]" if key in sources else ""))
        arrays[key] = arr
    if errors:
        raise ValueError("non-numeric input:\n  " + "\n  ".join(errors))
    e, u = arrays.pop("E"), arrays.pop("uE")
    if u_from_variance:
        # signed square root: a negative variance gives a negative uE, which
        # the uE <= 0 rule reports instead of a silent NaN
        u = np.sign(u) * np.sqrt(np.abs(u))
    feats = arrays
    meta = {k: _meta_array(v) for k, v in meta.items()}

    # 3. NaN / inf / uE <= 0 -------------------------------------------------
    attrs = {"name": name, "units": units}
    # with a min_uncertainty filter, uE <= 0 rows are left to that filter
    # (they lie below any threshold >= 0), as in the papers
    problems = _invalid_masks(e, u, feats, nonpositive=min_uncertainty is None)
    keep = np.ones(n, dtype=bool)
    if problems and not drop_invalid:
        lines = [rows_problem(k, m, p, row_ids) + (f" [{sources[k]}]" if k in sources else "")
                 for k, p, m in problems]
        raise ValueError(f"invalid values ({DROP_HINT}):\n  "
                         + "\n  ".join(lines))
    if drop_invalid:
        for _, _, m in problems:
            keep &= ~m
        n_dropped = int(n - keep.sum())
        reasons = "; ".join(f"{k} {p}: {int(m.sum())}" for k, p, m in problems) or "none"
        attrs["n_dropped"] = n_dropped
        attrs["dropped_reasons"] = reasons
        if n_dropped == n:
            raise ValueError(f"drop_invalid: all {n_rows_text(n)} are invalid ({reasons}); nothing left")
        if n_dropped:
            warnings.warn(f"drop_invalid: dropped {n_dropped} of {n_rows_text(n)} ({reasons}); "
                          f"kept {n_rows_text(n - n_dropped)}", DataWarning, stacklevel=user_stacklevel())

    # 4. min_uncertainty filter ------------------------------------------
    if min_uncertainty is not None:
        if min_uncertainty == "papers":
            e_kept = e[keep]
            if e_kept.size < 2:
                raise ValueError("min_uncertainty='papers' needs at least 2 rows to compute sd(E)")
            threshold = PAPERS_MIN_UNCERTAINTY * float(np.std(e_kept, ddof=1))
            how = f"threshold = {PAPERS_MIN_UNCERTAINTY:g} * sd(E)"
        else:
            threshold = float(min_uncertainty)
            how = "absolute threshold"
        low = keep & (u <= threshold)
        n_low = int(low.sum())
        n_nonpos = int((low & (u <= 0)).sum())
        if n_nonpos:
            how += f"; {n_nonpos} of them with uE <= 0"
        attrs["n_filtered"] = n_low
        attrs["min_uncertainty"] = threshold
        if n_low == int(keep.sum()):
            raise ValueError(f"min_uncertainty: all {n_rows_text(n_low)} have uE <= {threshold:.6g} ({how})")
        if n_low:
            keep &= ~low
            warnings.warn(f"min_uncertainty: dropped {n_rows_text(n_low)} with uE <= {threshold:.6g} "
                          f"({how}; {rows_text(row_ids[low])}); kept {n_rows_text(int(keep.sum()))}",
                          DataWarning, stacklevel=user_stacklevel())

    # 5. with a filter, subnormal uE and overflowing Z are checked on the rows kept
    if min_uncertainty is not None:
        scale = [(k, p, m & keep) for k, p, m in _scale_masks(e, u) if (m & keep).any()]
        if scale and not drop_invalid:
            lines = [rows_problem(k, m, p, row_ids) for k, p, m in scale]
            raise ValueError(f"invalid values ({DROP_HINT}):\n  "
                             + "\n  ".join(lines))
        if scale:
            n_more = int(np.logical_or.reduce([m for _, _, m in scale]).sum())
            for _, _, m in scale:
                keep &= ~m
            reasons = "; ".join(f"{k} {p}: {int(m.sum())}" for k, p, m in scale)
            attrs["n_dropped"] = attrs.get("n_dropped", 0) + n_more
            attrs["dropped_reasons"] = "; ".join(
                r for r in (attrs.get("dropped_reasons"), reasons) if r and r != "none")
            if not keep.any():
                raise ValueError(f"drop_invalid: no row left ({reasons})")
            warnings.warn(f"drop_invalid: dropped {n_rows_text(n_more)} ({reasons}); "
                          f"kept {n_rows_text(int(keep.sum()))}", DataWarning, stacklevel=user_stacklevel())

    # 6. assemble ---------------------------------------------------------
    if not keep.all():
        e, u, row_ids = e[keep], u[keep], row_ids[keep]
        feats = {k: v[keep] for k, v in feats.items()}
        meta = {k: v[keep] for k, v in meta.items()}
    data_vars = {"E": ("point", e, variable_attrs("E", units)), "uE": ("point", u, variable_attrs("uE", units))}
    data_vars.update({k: ("point", v, variable_attrs("feature")) for k, v in feats.items()})
    data_vars.update({k: ("point", v, variable_attrs("metadata")) for k, v in meta.items()})
    return xr.Dataset(data_vars, coords={"point": ("point", row_ids)}, attrs=attrs)


# --------------------------------------------------------------------------
# public constructors
# --------------------------------------------------------------------------
def from_arrays(errors, uncertainties, *, features=None, metadata=None, name=None, units="",
                drop_invalid=False, min_uncertainty=None) -> xr.Dataset:
    """Build a uqviz dataset from arrays of errors and uncertainties.

    Parameters
    ----------
    errors : array_like, 1-D
        Errors ``E = reference - prediction``.
    uncertainties : array_like, 1-D
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

    Returns
    -------
    xarray.Dataset
        See the module docstring; attributes ``n_dropped``, ``dropped_reasons``,
        ``n_filtered``, ``min_uncertainty`` record the dropped rows.

    Raises
    ------
    ValueError
        Bad input (see the module docstring), naming the variable and the count.

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
    """
    return build_dataset(errors, uncertainties, features=features, metadata=metadata, name=name,
                  units=units, drop_invalid=drop_invalid, min_uncertainty=min_uncertainty)


def _as_list(arg, what: str) -> list:
    if arg is None:
        return []
    if isinstance(arg, str):
        return [arg]
    if isinstance(arg, Sequence) or isinstance(arg, (pd.Index, np.ndarray)):
        return list(arg)
    raise ValueError(f"{what} must be a list of column names, got {type(arg).__name__}")


def from_dataframe(df, *, errors=None, reference=None, prediction=None, uncertainties=None,
                   variances=None, features=None, metadata=None, name=None, units="",
                   drop_invalid=False, min_uncertainty=None) -> xr.Dataset:
    """Build a uqviz dataset from columns of a pandas DataFrame (not modified).

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

    Returns
    -------
    xarray.Dataset
        Coordinate ``point`` = row position in `df`.

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
    columns = list(df.columns)

    # which columns give E ----------------------------------------------------
    if errors is not None and (reference is not None or prediction is not None):
        raise ValueError("give either errors= or reference= and prediction=, not both")
    if (reference is None) != (prediction is None):
        given, missing = ("reference", "prediction") if reference is not None else ("prediction", "reference")
        raise ValueError(f"{given}= needs {missing}= too (E = reference - prediction)")
    if errors is None and reference is None:
        if "E" not in columns:
            raise ValueError("no errors column: pass errors= or reference= and prediction= "
                             f"(no column named 'E'; columns: {', '.join(map(str, columns))})")
        errors = "E"
    # which columns give uE -------------------------------------------------
    if uncertainties is not None and variances is not None:
        raise ValueError("give either uncertainties= or variances=, not both")
    if uncertainties is None and variances is None:
        if "uE" not in columns:
            raise ValueError("no uncertainties column: pass uncertainties= or variances= "
                             f"(no column named 'uE'; columns: {', '.join(map(str, columns))})")
        uncertainties = "uE"

    feat_cols = _as_list(features, "features")
    meta_cols = _as_list(metadata, "metadata")
    wanted = [c for c in (errors, reference, prediction, uncertainties, variances) if c is not None]
    wanted += feat_cols + meta_cols
    missing = [c for c in dict.fromkeys(wanted) if c not in columns]
    if missing:
        raise ValueError(f"column(s) not found: {', '.join(map(repr, missing))} "
                         f"(columns: {', '.join(map(str, columns))})")
    for c in wanted:
        if isinstance(df[c], pd.DataFrame):
            raise ValueError(f"column {c!r} appears more than once in the DataFrame")

    sources = {}
    n = len(df)
    row_ids = np.arange(n, dtype=np.int64)
    if errors is not None:
        e_raw = df[errors]
        if errors != "E":
            sources["E"] = f"column {errors!r}"
    else:
        ref, msg_r = to_float_column(f"reference [column {reference!r}]", df[reference], row_ids)
        pred, msg_p = to_float_column(f"prediction [column {prediction!r}]", df[prediction], row_ids)
        msgs = [m for m in (msg_r, msg_p) if m]
        if msgs:
            raise ValueError("non-numeric input:\n  " + "\n  ".join(msgs))
        with np.errstate(invalid="ignore"):
            e_raw = ref - pred  # inf - inf gives NaN, reported by the NaN rule
        sources["E"] = f"{reference!r} - {prediction!r}"
    if variances is not None:
        u_raw = df[variances]
        sources["uE"] = f"sqrt of column {variances!r}"
    else:
        u_raw = df[uncertainties]
        if uncertainties != "uE":
            sources["uE"] = f"column {uncertainties!r}"
    return build_dataset(e_raw, u_raw,
                  features={c: df[c] for c in feat_cols}, metadata={c: df[c] for c in meta_cols},
                  name=name, units=units, drop_invalid=drop_invalid,
                  min_uncertainty=min_uncertainty, u_from_variance=variances is not None,
                  sources=sources)


def _csv_label(path) -> str:
    if isinstance(path, (str, os.PathLike)):
        return os.fspath(path)
    return getattr(path, "name", None) or "CSV input"


def _csv_text(path, encoding: str) -> str:
    """The file's text (a UTF-8 byte-order mark removed); clear errors for paths."""
    label = _csv_label(path)
    if isinstance(path, (str, os.PathLike)):
        p = os.fspath(path)
        if os.path.isdir(p):
            raise IsADirectoryError(f"{p!r} is a directory, not a CSV file")
        if not os.path.exists(p):
            raise FileNotFoundError(f"no such file: {p!r}")
        with open(p, "rb") as f:
            raw = f.read()
    elif hasattr(path, "read"):
        raw = path.read()
    else:
        raise TypeError(f"path must be a file path or a file-like object, got {type(path).__name__}")
    if isinstance(raw, bytes):
        try:
            raw = raw.decode(encoding)
        except UnicodeDecodeError as exc:
            raise ValueError(f"{label}: not {encoding} text (byte {raw[exc.start]:#04x} at offset "
                             f"{exc.start}); pass encoding= (e.g. 'latin-1')") from None
        except LookupError:
            raise ValueError(f"encoding: unknown encoding {encoding!r}") from None
    if not isinstance(raw, str):
        raise TypeError(f"{label}: read() returned {type(raw).__name__}, not text")
    return raw[1:] if raw.startswith("\ufeff") else raw


def _n_lines(n: int) -> str:
    return f"{n} line" if n == 1 else f"{n} lines"


def _lines_text(lines) -> str:
    shown = ", ".join(str(n) for n in lines[:_MAX_LISTED_ROWS])
    if len(lines) > _MAX_LISTED_ROWS:
        shown += ", ..."
    return f"line {shown}" if len(lines) == 1 else f"lines {shown}"


def _check_csv_shape(text: str, sep: str, decimal: str, label: str) -> None:
    """Every record has as many fields as the header; else a ValueError naming the lines."""
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=sep, strict=True)
    header, more, fewer, line = None, [], [], 1
    try:
        for record in reader:
            start, line = line, reader.line_num + 1
            if not record:  # blank line: skipped, as pandas does
                continue
            if header is None:
                header = record
                continue
            if len(record) > len(header):
                more.append(start)
            elif len(record) < len(header):
                fewer.append(start)
    except csv.Error as exc:
        raise ValueError(f"{label}: malformed CSV at line {reader.line_num}: {exc}") from None
    if header is None:
        raise ValueError(f"{label}: the file is empty (no header line)")
    if len(header) == 1:
        for other in (";", "\t", "|", ","):
            if other != sep and other in header[0]:
                hint = f"sep={other!r}"
                if other != "," and decimal == "." and "," in text.partition("\n")[2]:
                    hint += " and decimal=','"
                raise ValueError(
                    f"{label}: the header has no {sep!r} but has {other!r}: the file looks "
                    f"{other!r}-separated; pass {hint} (command line: "
                    f"{hint.replace('sep=', '--sep ').replace(' and decimal=', ' --decimal ')})")
    problems = []
    if more:
        problems.append(f"{_n_lines(len(more))} with more fields than the header's {len(header)} "
                        f"({_lines_text(more)})")
    if fewer:
        problems.append(f"{_n_lines(len(fewer))} with fewer fields than the header's {len(header)} "
                        f"({_lines_text(fewer)})")
    if problems:
        raise ValueError(f"{label}: ragged CSV (separator {sep!r}): " + "; ".join(problems)
                         + "; every line needs one value per column (an extra field would shift "
                           "the columns); fix the file or the separator")
    names = [h.strip() for h in header]
    dups = sorted({h for h in names if names.count(h) > 1})
    if dups:
        raise ValueError(f"{label}: duplicate column names in the header: {', '.join(map(repr, dups))}")


def read_csv(path, *, errors=None, reference=None, prediction=None, uncertainties=None,
             variances=None, features=None, metadata=None, name=None, units="",
             drop_invalid=False, min_uncertainty=None, sep=",", decimal=".",
             encoding="utf-8") -> xr.Dataset:
    r"""Read a CSV file into a uqviz dataset, checking every line first.

    Parameters
    ----------
    path : str, os.PathLike or file-like
    errors, reference, prediction, uncertainties, variances, features, metadata
        Column names, as in :func:`from_dataframe`.
    name : str, optional
        Default: the file stem.
    units, drop_invalid, min_uncertainty
        As in :func:`from_arrays`.
    sep : str, default ","
    decimal : str, default "."
    encoding : str, default "utf-8"

    Returns
    -------
    xarray.Dataset
        Coordinate ``point`` = 0-based data-row number.

    Raises
    ------
    FileNotFoundError, IsADirectoryError
    ValueError
        Ragged or malformed lines (their numbers), an empty file, a header that
        suggests another ``sep``, duplicate columns, a wrong encoding, and the
        errors of :func:`from_dataframe`.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> import uqviz.data as ud
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "toy.csv").write_text("E,uE\n0.1,0.2\n-0.2,0.3\n")
    >>> ud.read_csv(d / "toy.csv").attrs["name"]
    'toy'
    """
    for opt, val in (("sep", sep), ("decimal", decimal)):
        if not isinstance(val, str) or len(val) != 1 or val in "\r\n\"":
            raise ValueError(f"{opt} must be one character (not a quote or newline), got {val!r}")
    if sep == decimal:
        raise ValueError(f"sep and decimal must differ, both are {sep!r}")
    if not isinstance(encoding, str):
        raise TypeError(f"encoding must be a str, got {type(encoding).__name__}")
    if name is None and isinstance(path, (str, os.PathLike)):
        name = os.path.splitext(os.path.basename(os.fspath(path)))[0]
    label = _csv_label(path)
    text = _csv_text(path, encoding)
    _check_csv_shape(text, sep, decimal, label)
    try:
        df = pd.read_csv(io.StringIO(text), sep=sep, decimal=decimal, index_col=False,
                         float_precision="round_trip")  # exact decimal -> double
    except (pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise ValueError(f"{label}: malformed CSV: {str(exc).strip()}") from None
    return from_dataframe(df, errors=errors, reference=reference, prediction=prediction,
                          uncertainties=uncertainties, variances=variances, features=features,
                          metadata=metadata, name=name, units=units, drop_invalid=drop_invalid,
                          min_uncertainty=min_uncertainty)


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
    if isinstance(datasets, xr.Dataset):
        datasets = [datasets]
    if isinstance(datasets, Mapping):
        pairs = list(datasets.items())
    else:
        pairs = []
        for i, ds in enumerate(datasets):
            if not isinstance(ds, xr.Dataset):
                raise TypeError(f"item {i}: expected an xarray.Dataset, got {type(ds).__name__}")
            nm = ds.attrs.get("name")
            if not isinstance(nm, str) or not nm:
                raise ValueError(f"item {i}: dataset has no 'name' attribute; pass a mapping name -> dataset")
            pairs.append((nm, ds))
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
        child = ds.copy()
        child.attrs = {**ds.attrs, "name": nm}
        children[nm] = child
    return xr.DataTree.from_dict(children)


# --------------------------------------------------------------------------
# validation on entry of compute functions
# --------------------------------------------------------------------------
def _tree_children(tree) -> list[tuple[str, xr.Dataset]]:
    """``[(name, Dataset), ...]`` of the children of a DataTree that hold data."""
    pairs = [(str(name), child.to_dataset()) for name, child in tree.children.items()
             if child.has_data]
    if not pairs:
        raise ValueError("ds: the DataTree has no child holding a dataset; build one with "
                         "uqviz.from_datasets")
    return pairs


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
        The rules of the module docstring, naming the child of a tree.

    Examples
    --------
    >>> import uqviz.data as ud
    >>> ds = ud.from_arrays([0.1, 0.2], [0.1, 0.3])
    >>> ud.check_dataset(ds) is ds
    True
    """
    if isinstance(ds, xr.DataTree):
        from uqviz.engine.tree import naming_child

        for name, child in _tree_children(ds):
            with naming_child(name):
                check_dataset(child)
        return ds
    if not isinstance(ds, xr.Dataset):
        raise TypeError(f"ds: expected an xarray.Dataset or DataTree, got {type(ds).__name__}; "
                        "build one with "
                        "uqviz.from_arrays, uqviz.from_dataframe or uqviz.read_csv")
    if "point" not in ds.dims:
        raise ValueError(f"dataset has no dimension 'point' (dims: {tuple(ds.dims)})")
    missing = [v for v in ("E", "uE") if v not in ds.data_vars]
    if missing:
        raise ValueError(f"dataset lacks variable(s) {', '.join(map(repr, missing))} "
                         f"(variables: {', '.join(map(str, ds.data_vars))})")
    for v in ("E", "uE"):
        if ds[v].dims != ("point",):
            raise ValueError(f"{v}: must have dims ('point',), got {ds[v].dims}; select one "
                             "dataset first (e.g. ds.isel(sample=0)) or pass a DataTree, one child per dataset")
    n = ds.sizes["point"]
    if n == 0:
        raise ValueError("empty input: E and uE have 0 rows")
    row_ids = np.asarray(ds["point"].values) if "point" in ds.coords else np.arange(n)
    if row_ids.dtype.kind not in "iu":
        row_ids = np.arange(n)

    arrays, errors = {}, []
    for v in ("E", "uE"):
        arr, msg = to_float_column(v, as_1d(v, ds[v].values), row_ids)
        if msg:
            errors.append(msg)
        arrays[v] = arr
    for k, var in ds.data_vars.items():
        if k in ("E", "uE") or var.dims != ("point",) or var.attrs.get("role") == "metadata":
            continue
        if var.dtype.kind in "iufb":
            arrays[k] = np.asarray(var.values, dtype=np.float64)
    if errors:
        raise ValueError("non-numeric input:\n  " + "\n  ".join(errors))
    e, u = arrays.pop("E"), arrays.pop("uE")
    problems = _invalid_masks(e, u, arrays)
    if problems:
        lines = [rows_problem(k, m, p, row_ids) for k, p, m in problems]
        raise ValueError("invalid values:\n  " + "\n  ".join(lines))
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
        children = {name: z_scores(child).to_dataset(name="Z")
                    for name, child in _tree_children(ds)}
        return xr.DataTree.from_dict(children)
    check_dataset(ds)
    z = ds["E"] / ds["uE"]
    z.name = "Z"
    z.attrs = {"long_name": "z-score E/uE", "units": ""}
    return z
