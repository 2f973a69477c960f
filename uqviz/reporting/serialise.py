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

__all__ = ["jsonable", "dataset_to_json"]


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
    out["data"] = {k: {"dims": list(v.dims), "values": jsonable(v.values)}
                   for k, v in ds.data_vars.items()}
    return out
