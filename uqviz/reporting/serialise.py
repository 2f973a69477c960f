"""The JSON of a report: result Datasets and numbers as plain, JSON-ready values.

One module, imported by :mod:`uqviz.reporting.build`, :mod:`uqviz.reporting.comparison`,
:mod:`uqviz.reporting.gate` and the command line: the encoding is written once and the
modules of the report import none of each other for it (no import circle).

Examples
--------
>>> import numpy as np, xarray as xr
>>> jsonable({"a": np.float64(0.5), "b": np.nan, "c": (np.int64(2), np.bool_(True))})
{'a': 0.5, 'b': None, 'c': [2, True]}
>>> dataset_to_json(xr.Dataset({"x": ("bin", [1.0, np.inf])}, attrs={"ci": 0.95}))["data"]
{'x': {'dims': ['bin'], 'values': [1.0, None]}}
"""

from __future__ import annotations

import numpy as np
import xarray as xr

__all__ = ["jsonable", "dataset_to_json", "dataset_from_json"]


def jsonable(x):
    """``x`` with numpy values made plain Python (NaN and inf become None), recursively.

    Parameters
    ----------
    x : object
        A dict, list, tuple, numpy array or scalar, or a plain value.

    Returns
    -------
    object
        Dicts (string keys), lists, bools, ints, floats (finite) or None, strings.

    Examples
    --------
    >>> jsonable(np.array([1.0, np.nan]))
    [1.0, None]
    """
    if isinstance(x, dict):
        return {str(k): jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [jsonable(v) for v in x]
    if isinstance(x, np.ndarray):
        return jsonable(x.tolist())
    if isinstance(x, (np.bool_, bool)):
        return bool(x)
    if isinstance(x, (np.integer,)):
        return int(x)
    if isinstance(x, (float, np.floating)):
        return None if not np.isfinite(x) else float(x)
    if isinstance(x, np.str_):
        return str(x)
    return x


def dataset_to_json(ds: xr.Dataset) -> dict:
    """A result Dataset as plain JSON-ready dicts (variables, coords, attrs).

    Parameters
    ----------
    ds : xarray.Dataset

    Returns
    -------
    dict
        ``dims`` (name -> size), ``attrs``, ``coords`` (name -> values) and ``data``
        (name -> ``{"dims", "values"}``).

    Examples
    --------
    >>> dataset_to_json(xr.Dataset(coords={"bin": [0, 1]}))["coords"]
    {'bin': [0, 1]}
    """
    out = {"dims": dict(ds.sizes), "attrs": jsonable(dict(ds.attrs))}
    out["coords"] = {k: jsonable(v.values) for k, v in ds.coords.items()}
    out["data"] = {
        k: {"dims": list(v.dims), "values": jsonable(v.values)} for k, v in ds.data_vars.items()
    }
    return out


def _array(values):
    """A JSON list back as an array: numbers with None as float (NaN), strings as object."""
    flat = np.asarray(values, dtype=object).ravel()
    if flat.size and all(isinstance(v, str) for v in flat):
        return np.asarray(values, dtype=object)
    if flat.size and all(isinstance(v, bool) for v in flat):
        return np.asarray(values, dtype=bool)
    if all(v is None or (isinstance(v, (int, float)) and not isinstance(v, bool)) for v in flat):
        return np.asarray([np.nan if v is None else v for v in flat], dtype=float).reshape(
            np.shape(values)
        )
    return np.asarray(values, dtype=object)


def dataset_from_json(doc: dict) -> xr.Dataset:
    """The Dataset of a :func:`dataset_to_json` document (JSON null reads NaN).

    A round trip gives back the Dataset's values, dimension and scalar coordinates and
    attributes (a verdict table, ``Report.verdicts``, comes back identical); a number that was
    NaN or inf reads NaN, integers of a variable with a null read float. A coordinate along a
    dimension not its own (``bin_lower``) cannot be read back: the document does not keep its
    dims (a ValueError names it).

    Parameters
    ----------
    doc : dict
        ``dims``, ``attrs``, ``coords`` and ``data``, as :func:`dataset_to_json` writes them.

    Returns
    -------
    xarray.Dataset

    Examples
    --------
    >>> ds = xr.Dataset({"verdict": ("test", np.array(["OK", "fails"], dtype=object)),
    ...                  "p_value": ("test", [0.2, np.nan])},
    ...                 coords={"test": np.array(["a", "b"], dtype=object)}, attrs={"alpha": 0.05})
    >>> back = dataset_from_json(dataset_to_json(ds))
    >>> back.identical(ds), back["verdict"].dtype
    (True, dtype('O'))
    """
    missing = [k for k in ("dims", "coords", "data") if k not in doc]
    if missing:
        raise ValueError(f"not a dataset_to_json document: it lacks {', '.join(missing)}")
    data = {k: (tuple(v["dims"]), _array(v["values"])) for k, v in doc["data"].items()}
    coords = {}
    for k, v in doc["coords"].items():
        if k in doc["dims"]:
            coords[k] = (k, _array(v))
        elif isinstance(v, list):  # the document does not say along which dim
            raise ValueError(
                f"coordinate {k!r} is not a dimension of the document and not a "
                "scalar: its dims are not in the JSON"
            )
        else:
            coords[k] = ((), _array(v))
    return xr.Dataset(data, coords=coords, attrs=dict(doc.get("attrs", {})))
