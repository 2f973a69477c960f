"""The checks every plot makes before it draws: a result with something to draw, options
that name what the result holds.

A plot given an empty result (a dim of zero length), a result whose values are all NaN, or
an option that names a statistic, variable or choice the result does not hold raises a
ValueError naming the plot, the argument and the problem, before xarray or matplotlib
would answer with a message of their own (or draw an empty figure without a word).

Examples
--------
>>> import numpy as np, xarray as xr
>>> res = xr.Dataset({"estimate": ("bin", [np.nan, np.nan])})
>>> drawable("local", res, ("estimate",), name="local_result")
Traceback (most recent call last):
...
ValueError: local: every value of 'estimate' in local_result is NaN (2 values): nothing to draw
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np


def drawable(what: str, result, variables: Iterable[str], *, name: str = "result"):
    """``result`` if each of its ``variables`` has values and not all of them NaN.

    Parameters
    ----------
    what : str
        The plot's name, first word of the message.
    result : xarray.Dataset
        The (selected) result the plot draws.
    variables : iterable of str
        The variables the plot draws.
    name : str
        The argument that carried ``result``.

    Returns
    -------
    xarray.Dataset
        ``result``, unchanged.

    Raises
    ------
    ValueError
        When a variable has zero values (naming the dim of length 0) or only NaN.

    Examples
    --------
    >>> import xarray as xr
    >>> drawable("acf", xr.Dataset({"acf": ("lag", [])}), ["acf"], name="acf_result")
    Traceback (most recent call last):
    ...
    ValueError: acf: acf_result is empty: dim 'lag' has 0 entries, nothing to draw
    >>> drawable("acf", xr.Dataset({"acf": ("lag", [1.0])}), ["acf"])["acf"].size
    1
    """
    for v in variables:
        arr = result[v]
        if arr.size == 0:
            empty = [str(d) for d in arr.dims if arr.sizes[d] == 0]
            raise ValueError(
                f"{what}: {name} is empty: dim {empty[0]!r} has 0 entries, nothing to draw"
            )
        values = np.asarray(arr.values)
        if values.dtype.kind in "fc" and np.isnan(values).all():
            raise ValueError(
                f"{what}: every value of {v!r} in {name} is NaN "
                f"({values.size} values): nothing to draw"
            )
    return result


def choice(what: str, option: str, value, allowed: Iterable):
    """``value`` if it is one of ``allowed``, else a ValueError naming ``option``.

    Examples
    --------
    >>> choice("size_dependence", "fit", "linear", ["linear", "power"])
    'linear'
    >>> choice("size_dependence", "fit", "nosuch", ["linear", "power"])
    Traceback (most recent call last):
    ...
    ValueError: size_dependence: unknown fit 'nosuch'; one of ['linear', 'power']
    """
    allowed = [a.item() if isinstance(a, np.generic) else a for a in allowed]
    try:
        ok = value in allowed
    except TypeError:  # an unhashable or array value
        ok = False
    if not ok:
        raise ValueError(f"{what}: unknown {option} {value!r}; one of {allowed}")
    return value


def names(what: str, option: str, value, allowed: Iterable, *, default=None) -> list:
    """The list of names ``value`` (one string or a sequence of them; None gives
    ``default``, or all of ``allowed``), each one of ``allowed``.

    Examples
    --------
    >>> names("intervals", "statistics", "ZMS", ["ZMS", "RCE"])
    ['ZMS']
    >>> names("intervals", "statistics", ["ZMS", "x"], ["ZMS", "RCE"])
    Traceback (most recent call last):
    ...
    ValueError: intervals: unknown statistics entry 'x'; one of ['ZMS', 'RCE']
    >>> names("intervals", "statistics", [], ["ZMS"])
    Traceback (most recent call last):
    ...
    ValueError: intervals: statistics is empty; give at least one of ['ZMS']
    """
    allowed = [str(a) for a in allowed]
    if value is None:
        return list(allowed if default is None else default)
    if isinstance(value, str):
        value = [value]
    try:
        value = list(value)
    except TypeError:
        raise TypeError(
            f"{what}: {option} must be a name or a sequence of names, got {type(value).__name__}"
        ) from None
    if not value:
        raise ValueError(f"{what}: {option} is empty; give at least one of {allowed}")
    for v in value:
        if str(v) not in allowed:
            raise ValueError(f"{what}: unknown {option} entry {v!r}; one of {allowed}")
    return [str(v) for v in value]
