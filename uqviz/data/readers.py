"""Read uqviz datasets from files: :func:`read_csv`.

The only module of :mod:`uqviz.data` that opens a user's file: it reads the text, checks
every line (ragged lines, a separator that looks wrong, duplicate columns, the encoding)
and hands the table to :func:`uqviz.from_dataframe`.
"""

from __future__ import annotations

import csv
import io
import os

import numpy as np
import pandas as pd
import xarray as xr

from uqviz.data.constructors import from_dataframe
from uqviz.data.model import float_columns, n_rows_text, rows_text
from uqviz.data.predictions import from_predictions

__all__ = ["read_csv"]

#: the other separators a header may reveal, most telling first
_OTHER_SEPARATORS = (";", "\t", "|", ",")


def _csv_label(path) -> str:
    if isinstance(path, (str, os.PathLike)):
        return os.fspath(path)
    return getattr(path, "name", None) or "CSV input"


def _raw_content(path):
    """The bytes of a file path, or what a file-like object's ``read()`` returns."""
    if isinstance(path, (str, os.PathLike)):
        p = os.fspath(path)
        if os.path.isdir(p):
            raise IsADirectoryError(f"{p!r} is a directory, not a CSV file")
        if not os.path.exists(p):
            raise FileNotFoundError(f"no such file: {p!r}")
        with open(p, "rb") as f:
            return f.read()
    if hasattr(path, "read"):
        return path.read()
    raise TypeError(f"path must be a file path or a file-like object, got {type(path).__name__}")


def _csv_text(path, encoding: str) -> str:
    """The file's text (a UTF-8 byte-order mark removed); clear errors for paths."""
    label = _csv_label(path)
    raw = _raw_content(path)
    if isinstance(raw, bytes):
        try:
            raw = raw.decode(encoding)
        except UnicodeDecodeError as exc:
            raise ValueError(
                f"{label}: not {encoding} text (byte {raw[exc.start]:#04x} at offset "
                f"{exc.start}); pass encoding= (e.g. 'latin-1')"
            ) from None
        except LookupError:
            raise ValueError(f"encoding: unknown encoding {encoding!r}") from None
    if not isinstance(raw, str):
        raise TypeError(f"{label}: read() returned {type(raw).__name__}, not text")
    return raw[1:] if raw.startswith("\ufeff") else raw


def _csv_records(text: str, sep: str, label: str):
    """``(header, lines with more fields, lines with fewer fields)``; blank lines skipped."""
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=sep, strict=True)
    header, more, fewer, line = None, [], [], 1
    try:
        for record in reader:
            start, line = line, reader.line_num + 1
            if not record:  # blank line: skipped, as pandas does
                continue
            if header is None:
                header = record
            elif len(record) != len(header):
                (more if len(record) > len(header) else fewer).append(start)
    except csv.Error as exc:
        raise ValueError(f"{label}: malformed CSV at line {reader.line_num}: {exc}") from None
    if header is None:
        raise ValueError(f"{label}: the file is empty (no header line)")
    return header, more, fewer


def _check_separator(header: list, text: str, sep: str, decimal: str, label: str) -> None:
    """A one-column header holding another separator: the file is separated by that one."""
    if len(header) != 1:
        return
    for other in _OTHER_SEPARATORS:
        if other != sep and other in header[0]:
            hint = f"sep={other!r}"
            if other != "," and decimal == "." and "," in text.partition("\n")[2]:
                hint += " and decimal=','"
            raise ValueError(
                f"{label}: the header has no {sep!r} but has {other!r}: the file looks "
                f"{other!r}-separated; pass {hint} (command line: "
                f"{hint.replace('sep=', '--sep ').replace(' and decimal=', ' --decimal ')})"
            )


def _check_ragged(header: list, more: list, fewer: list, sep: str, label: str) -> None:
    problems = [
        f"{n_rows_text(len(lines), noun='line')} with {what} fields than the header's "
        f"{len(header)} ({rows_text(lines, noun='line')})"
        for what, lines in (("more", more), ("fewer", fewer))
        if lines
    ]
    if problems:
        raise ValueError(
            f"{label}: ragged CSV (separator {sep!r}): "
            + "; ".join(problems)
            + "; every line needs one value per column (an extra field would shift "
            "the columns); fix the file or the separator"
        )


def _check_csv_shape(text: str, sep: str, decimal: str, label: str) -> None:
    """Every record has as many fields as the header; else a ValueError naming the lines."""
    header, more, fewer = _csv_records(text, sep, label)
    _check_separator(header, text, sep, decimal, label)
    _check_ragged(header, more, fewer, sep, label)
    names = [h.strip() for h in header]
    dups = sorted({h for h in names if names.count(h) > 1})
    if dups:
        raise ValueError(
            f"{label}: duplicate column names in the header: {', '.join(map(repr, dups))}"
        )


def _check_csv_options(sep, decimal, encoding) -> None:
    for opt, val in (("sep", sep), ("decimal", decimal)):
        if not isinstance(val, str) or len(val) != 1 or val in '\r\n"':
            raise ValueError(f"{opt} must be one character (not a quote or newline), got {val!r}")
    if sep == decimal:
        raise ValueError(f"sep and decimal must differ, both are {sep!r}")
    if not isinstance(encoding, str):
        raise TypeError(f"encoding must be a str, got {type(encoding).__name__}")


def _forecast_columns(quantiles, samples, lower, upper, level) -> bool:
    """Whether a forecast form is named; its options checked against each other."""
    given = [
        k
        for k, v in (
            ("quantiles", quantiles),
            ("samples", samples),
            ("lower", lower),
            ("upper", upper),
        )
        if v is not None
    ]
    if level is not None and lower is None and upper is None:
        raise ValueError(
            "level: the coverage of the interval of lower= and upper=; give those columns too"
        )
    return bool(given)


def _unused_with_forecast(**options) -> None:
    bad = [k for k, v in options.items() if v is not None]
    if bad:
        raise ValueError(
            f"{', '.join(bad)}: not used with a forecast given as quantiles, "
            "samples or an interval (uE comes from the forecast)"
        )


def _columns(df, label, role, names) -> list:
    names = [names] if isinstance(names, str) else list(names)
    missing = [c for c in names if c not in df.columns]
    if missing:
        raise ValueError(
            f"{label}: {role} column(s) {', '.join(map(repr, missing))} not in the "
            f"header ({', '.join(map(str, df.columns))})"
        )
    return names


def _check_cells(df, used: dict) -> None:
    """Every cell of the forecast's columns a float64 number (empty: NaN, left to the
    rules of :func:`uqviz.from_predictions`): one ValueError naming each column by its
    role and its name in the header, the rows and the first offending cell (a ``1e400``,
    a word), as :func:`uqviz.from_dataframe` names its columns."""
    float_columns(
        {f"{role} [column {col!r}]": df[col] for role, col in used.items()},
        np.arange(len(df), dtype=np.int64),
    )


def _forecast_arguments(df, label, forecast) -> tuple[dict, dict]:
    """``(kwargs, used)``: the forecast's arguments of :func:`uqviz.from_predictions`, and
    the columns they read by role (``{"quantiles[0.1]": "q10", ...}``)."""
    quantiles, samples = forecast["quantiles"], forecast["samples"]
    lower, upper = forecast["lower"], forecast["upper"]
    kwargs, used = {}, {}
    if quantiles is not None:
        if not hasattr(quantiles, "items"):
            raise TypeError(
                "quantiles must map each level to a column, e.g. {0.05: 'q05', 0.95: 'q95'}"
            )
        cols = _columns(df, label, "quantile", list(quantiles.values()))
        kwargs["quantiles"] = {lv: df[c] for lv, c in zip(quantiles, cols)}
        used.update({f"quantiles[{lv}]": c for lv, c in zip(quantiles, cols)})
    if samples is not None:
        cols = _columns(df, label, "sample", samples)
        kwargs["samples"] = df[cols].to_numpy()
        used.update({f"samples[{j}]": c for j, c in enumerate(cols)})
    if lower is not None or upper is not None:
        lo = _columns(df, label, "lower", lower)[0] if lower else None
        hi = _columns(df, label, "upper", upper)[0] if upper else None
        kwargs.update(
            lower=None if lo is None else df[lo],
            upper=None if hi is None else df[hi],
            level=forecast["level"],
        )
        used.update({k: c for k, c in (("lower", lo), ("upper", hi)) if c is not None})
    return kwargs, used


def _from_forecast(df, label, forecast, *, reference, prediction, features, dataset):
    """A dataset through :func:`uqviz.from_predictions` (the forecast kept as given).

    ``forecast``: the forecast's columns, ``{"quantiles", "samples", "lower", "upper",
    "level"}``; ``dataset``: the options of the dataset made, ``{"name", "units",
    "drop_invalid"}``. The cells of the columns read are checked first (:func:`_check_cells`).
    """
    if reference is None:
        raise ValueError(
            "a forecast given as quantiles=, samples= or lower=/upper= needs "
            "reference= (the observed values)"
        )
    kwargs, used = _forecast_arguments(df, label, forecast)
    pred = None if prediction is None else _columns(df, label, "prediction", prediction)[0]
    feats = None if features is None else df[_columns(df, label, "feature", features)]
    ref = _columns(df, label, "reference", reference)[0]
    _check_cells(df, {"reference": ref, **({} if pred is None else {"prediction": pred}), **used})
    return from_predictions(
        df[ref], None if pred is None else df[pred], features=feats, **dataset, **kwargs
    )


def read_csv(
    path,
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
    sep=",",
    decimal=".",
    encoding="utf-8",
    quantiles=None,
    samples=None,
    lower=None,
    upper=None,
    level=None,
    targets=None,
    groups=None,
) -> xr.Dataset:
    r"""Read a CSV file into a uqviz dataset, checking every line first.

    Several targets (a chemprop-style multi-task file): lists of columns, one per target
    (``reference=["logS", "logP"]``, ``prediction=[...]``, ``uncertainties=[...]``) give the
    targets tree of :func:`uqviz.from_dataframe`; an empty cell marks that target missing
    for that row (counted per target).

    A forecast given as quantiles, ensemble members or an interval (`quantiles`,
    `samples`, `lower`/`upper` with `level`) is read through :func:`uqviz.from_predictions`,
    which keeps it as given (``reference`` and ``prediction`` name the observed and
    predicted columns; ``prediction`` may be omitted with `samples`, whose mean it is).

    Parameters
    ----------
    path : str, os.PathLike or file-like
    errors, reference, prediction, uncertainties, variances, features, metadata
        Column names, as in :func:`uqviz.from_dataframe`.
    quantiles : mapping of float to str, optional
        ``{level: column}``: predictive quantiles (with `reference`, `prediction`).
    samples : list of str, optional
        Columns of ensemble members or predictive draws, one per member.
    lower, upper : str, optional
        Columns of the limits of a central prediction interval of coverage `level`.
    level : float in (0, 1), optional
        Nominal coverage of the interval of `lower` and `upper`.
    targets : list of str, optional
        Names of several targets (default the reference, else errors, columns).
    groups : str, optional
        Column of group labels (a structure, a molecule): the coordinate ``group``.
    name : str, optional
        Default: the file stem.
    units, drop_invalid, min_uncertainty
        As in :func:`uqviz.from_arrays`.
    sep : str, default ","
    decimal : str, default "."
    encoding : str, default "utf-8"

    Returns
    -------
    xarray.Dataset or xarray.DataTree
        Coordinate ``point`` = 0-based data-row number; several targets: the targets tree.

    Raises
    ------
    FileNotFoundError, IsADirectoryError
    ValueError
        Ragged or malformed lines (their numbers), an empty file, a header that
        suggests another ``sep``, duplicate columns, a wrong encoding, and the
        errors of :func:`uqviz.from_dataframe`.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> import uqviz.data as ud
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "toy.csv").write_text("E,uE\n0.1,0.2\n-0.2,0.3\n")
    >>> ud.read_csv(d / "toy.csv").attrs["name"]
    'toy'

    A quantile forecast (levels 0.1 and 0.9 give uE, the quantiles are kept):

    >>> _ = (d / "q.csv").write_text("y,yhat,q10,q90\n1.0,1.1,0.0,2.2\n2.0,1.9,0.8,3.0\n")
    >>> ds = ud.read_csv(d / "q.csv", reference="y", prediction="yhat",
    ...                  quantiles={0.1: "q10", 0.9: "q90"})
    >>> ds.attrs["uE_source"], ds["uE"].values.round(3).tolist()
    ('quantiles', [0.858, 0.858])

    Two targets, an empty cell (logP not measured in the first row):

    >>> _ = (d / "mt.csv").write_text("logS,logP,pS,pP,uS,uP\n1.0,,1.1,0.2,0.1,0.2\n"
    ...                               "2.0,0.5,1.9,0.4,0.1,0.2\n")
    >>> tree = ud.read_csv(d / "mt.csv", reference=["logS", "logP"], prediction=["pS", "pP"],
    ...                    uncertainties=["uS", "uP"])
    >>> tree.attrs["missing"]
    'missing targets (of 2 rows): logS 0, logP 1'
    """
    _check_csv_options(sep, decimal, encoding)
    if name is None and isinstance(path, (str, os.PathLike)):
        name = os.path.splitext(os.path.basename(os.fspath(path)))[0]
    label = _csv_label(path)
    text = _csv_text(path, encoding)
    _check_csv_shape(text, sep, decimal, label)
    try:
        df = pd.read_csv(
            io.StringIO(text),
            sep=sep,
            decimal=decimal,
            index_col=False,
            float_precision="round_trip",
        )  # exact decimal -> double
    except (pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise ValueError(f"{label}: malformed CSV: {str(exc).strip()}") from None
    if _forecast_columns(quantiles, samples, lower, upper, level):
        if targets is not None or isinstance(reference, (list, tuple)):
            raise ValueError(
                "several targets from a CSV: give uncertainties= or variances= (one column "
                "per target); a forecast of quantiles, samples or an interval takes one target"
            )
        _unused_with_forecast(
            errors=errors,
            uncertainties=uncertainties,
            variances=variances,
            metadata=metadata,
            min_uncertainty=min_uncertainty,
        )
        forecast = {
            "quantiles": quantiles,
            "samples": samples,
            "lower": lower,
            "upper": upper,
            "level": level,
        }
        return _from_forecast(
            df,
            label,
            forecast,
            reference=reference,
            prediction=prediction,
            features=features,
            dataset={
                "name": name,
                "units": units,
                "drop_invalid": drop_invalid,
                "groups": groups
                if groups is None
                else df[_columns(df, label, "groups", groups)[0]],
            },
        )
    return from_dataframe(
        df,
        errors=errors,
        reference=reference,
        prediction=prediction,
        uncertainties=uncertainties,
        variances=variances,
        features=features,
        metadata=metadata,
        name=name,
        units=units,
        drop_invalid=drop_invalid,
        min_uncertainty=min_uncertainty,
        targets=targets,
        groups=groups,
    )
