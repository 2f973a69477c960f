"""Argument validators: take a name and a value, return it canonical or raise naming both.

Examples
--------
>>> count("n_boot", 1000.0, minimum=2), optional_count("n_bins", None)
(1000, None)
>>> probability("ci", 0.9), positive("nu", 6), boolean("log", False)
(0.9, 6.0, False)
>>> choice("binning", "stratified", ("equal_count", "stratified")), names("statistics", "ZMS")
('stratified', ('ZMS',))
>>> int(rng(0).integers(10)) == int(rng(0).integers(10)), finite_array("x", [0, 1]).tolist()
(True, [0.0, 1.0])
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable

import numpy as np

# the checks the kernels need live in the leaf module uqviz._array.checks (it imports nothing of
# uqviz); they are re-exported here, so every option is still checked through this module
from uqviz._array.checks import boolean, choice, count, is_bool, probability
from uqviz._array.lazy import lazy_module
from uqviz._array.numba_status import numba_findable, warn_numba_missing

# the resampler imports numba: loaded at the first engine check, not with `import uqviz`
resample_kernels = lazy_module("uqviz._array.resample")
if not numba_findable():  # said at once, at `import uqviz` (docs/conventions.md, "Without numba")
    warn_numba_missing()

__all__ = [
    "count",
    "optional_count",
    "probability",
    "positive",
    "choice",
    "rng",
    "names",
    "finite_array",
    "boolean",
    "levels",
    "result",
    "engine",
    "grid",
    "count_or_zero",
    "fractions",
    "ENGINES",  # noqa: F822 (ENGINES: module __getattr__, PEP 562)
]


def optional_count(name: str, value, *, minimum: int = 1, maximum: int | None = None):
    """``None`` or :func:`count`."""
    return None if value is None else count(name, value, minimum=minimum, maximum=maximum)


def engine(value, *, name: str = "engine") -> str:
    """The resampling engine: None (numba where installed, else numpy), "numba" or "numpy".

    Returns the engine that runs (None resolved), so that results record it. "numba" where
    numba is not installed is a ValueError (docs/conventions.md, "Without numba").

    Examples
    --------
    >>> engine("numpy"), engine(None) in ("numba", "numpy")
    ('numpy', True)
    """
    return resample_kernels.resolve_engine(value, name=name)


def __getattr__(name):
    """``ENGINES``, :data:`uqviz._array.resample.ENGINES`, read when first asked for (PEP 562).

    The resampler module imports numba, which ``import uqviz`` leaves alone (issue 25).
    """
    if name == "ENGINES":
        return resample_kernels.ENGINES
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def positive(name: str, value, *, allow_inf: bool = False) -> float:
    """A finite number > 0 (``allow_inf=True`` also accepts +inf)."""
    if is_bool(value) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a positive number, got {value!r} ({type(value).__name__})")
    value = float(value)
    if np.isnan(value) or value <= 0 or (np.isinf(value) and not allow_inf):
        raise ValueError(
            f"{name} must be a {'' if allow_inf else 'finite '}number > 0, got {value!r}"
        )
    return value


def rng(value, *, name: str = "rng") -> np.random.Generator:
    """A ``numpy.random.Generator`` from None, an int >= 0, a SeedSequence or a Generator.

    A SeedSequence is copied: spawning children from the Generator never consumes the
    caller's object, so the same SeedSequence gives the same numbers on every call (as an
    int seed does); a Generator is used as is (its state advances, as numpy's do).
    """
    if isinstance(value, np.random.SeedSequence):
        value = np.random.SeedSequence(
            value.entropy,
            spawn_key=value.spawn_key,
            pool_size=value.pool_size,
            n_children_spawned=value.n_children_spawned,
        )
    if value is None or isinstance(value, (np.random.Generator, np.random.SeedSequence)):
        return np.random.default_rng(value)
    if isinstance(value, numbers.Integral) and not is_bool(value):
        if value < 0:
            raise ValueError(f"{name} must be a non-negative integer seed, got {value}")
        return np.random.default_rng(int(value))
    raise TypeError(
        f"{name} must be None, a non-negative int, a numpy SeedSequence or a "
        f"numpy.random.Generator, got {type(value).__name__} ({value!r:.60})"
    )


def names(name: str, value, *, allowed: Iterable | None = None) -> tuple:
    """A non-empty tuple of distinct names (a single string is one name)."""
    if isinstance(value, str):
        value = (value,)
    try:
        value = tuple(value)
    except TypeError:
        raise TypeError(f"{name} must be a name or a sequence of names, got {value!r}") from None
    if not value:
        raise ValueError(f"{name} must name at least one item, got an empty sequence")
    if len(set(value)) != len(value):
        raise ValueError(f"{name} must be distinct, got {list(value)}")
    if allowed is not None:
        allowed = tuple(allowed)
        bad = [v for v in value if v not in allowed]
        if bad:
            raise ValueError(f"{name}: {bad} not allowed here; choose from {list(allowed)}")
    return value


def finite_array(name: str, value, *, ndim: int | None = None) -> np.ndarray:
    """A float array with no NaN/inf; the error counts the offending entries."""
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be numeric, got {type(value).__name__}") from None
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"{name} must have {ndim} dimension(s), got shape {arr.shape}")
    bad = int(np.count_nonzero(~np.isfinite(arr)))
    if bad:
        raise ValueError(f"{name} has {bad} non-finite value(s) (NaN or inf)")
    return arr


def fractions(name: str, value) -> np.ndarray:
    """Fractions of a set: a non-empty 1-D float array of numbers in [0, 1) (one number is a
    sequence of one); a TypeError for non-numbers (bools included), a ValueError counting the
    values out of range.

    Examples
    --------
    >>> fractions("fractions", [0, 0.5]).tolist(), fractions("fractions", 0.1).tolist()
    ([0.0, 0.5], [0.1])
    >>> fractions("fractions", [0.2, 1.0])
    Traceback (most recent call last):
    ...
    ValueError: fractions must be in [0, 1): 1 value(s) are not (first: 1.0)
    """
    raw = np.atleast_1d(np.asarray(value, dtype=object))
    if raw.ndim != 1 or raw.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D sequence, got shape {np.shape(value)}")
    if not all(isinstance(x, numbers.Real) and not is_bool(x) for x in raw):
        raise TypeError(f"{name} must be numbers in [0, 1), got {value!r}")
    f = raw.astype(float)
    bad = ~np.isfinite(f) | (f < 0) | (f >= 1)
    if bad.any():
        raise ValueError(
            f"{name} must be in [0, 1): {int(bad.sum())} value(s) are not "
            f"(first: {float(f[bad][0])!r})"
        )
    return f


def count_or_zero(name: str, value, *, zero: str, minimum: int = 2) -> int:
    """0 where a function documents it (``zero``: what 0 means) or a :func:`count` >= ``minimum``.

    Examples
    --------
    >>> count_or_zero("n_boot", 0, zero="no interval"), count_or_zero("n_boot", 500.0, zero="")
    (0, 500)
    >>> count_or_zero("n_boot", 1, zero="no interval")
    Traceback (most recent call last):
    ...
    ValueError: n_boot must be 0 (no interval) or >= 2, got 1
    """
    value = count(name, value, minimum=0)
    if 0 < value < minimum:
        raise ValueError(f"{name} must be 0 ({zero}) or >= {minimum}, got {value}")
    return value


def grid(
    name: str, value, *, lower: float | None = None, allow_inf: bool = False, integer: bool = False
) -> np.ndarray:
    """A grid of a scanned parameter: a non-empty 1-D float array of distinct values, each
    finite (``allow_inf``: or +inf) and > ``lower``; a single number is a grid of one.
    ``integer=True``: a grid of counts, whole numbers >= 1, returned as int64.

    Examples
    --------
    >>> grid("nu", [3, 6.0], lower=0.0).tolist(), grid("nu_d", 6, allow_inf=True).tolist()
    ([3.0, 6.0], [6.0])
    >>> grid("n_bins", (10, 20.0), integer=True).tolist()
    [10, 20]
    """
    items = np.ravel(np.asarray(value, dtype=object))
    if isinstance(value, (str, bytes)) or any(
        is_bool(x) or isinstance(x, (str, bytes)) for x in (value, *items)
    ):
        raise TypeError(f"{name} must be a number or a sequence of numbers, got {value!r}")
    try:
        arr = np.atleast_1d(np.asarray(value, dtype=float))
    except (TypeError, ValueError):
        raise TypeError(
            f"{name} must be a number or a sequence of numbers, got {type(value).__name__}"
        ) from None
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(
            f"{name} must be a non-empty 1-d sequence of numbers, got shape {arr.shape}"
        )
    ok = np.isfinite(arr) | (allow_inf & np.isposinf(arr))
    if integer:
        ok &= (arr >= 1) & (arr == np.round(arr))
    if lower is not None:
        ok &= arr > lower
    if not ok.all():
        what = (
            "whole numbers >= 1"
            if integer
            else "finite"
            + (" (or inf)" if allow_inf else "")
            + ("" if lower is None else f" and > {lower:g}")
        )
        raise ValueError(
            f"{name}: values must be {what}; {int((~ok).sum())} value(s) are "
            f"not: {arr[~ok][:10].tolist()}"
        )
    if integer:
        arr = arr.astype(np.int64)
    if np.unique(arr).size != arr.size:
        raise ValueError(f"{name}: values must be distinct, got {arr.tolist()}")
    return arr


def levels(name: str, value) -> np.ndarray:
    """A non-empty 1-D float array of distinct probability levels, each in (0, 1).

    Examples
    --------
    >>> levels("levels", [0.5, 0.9]).tolist()
    [0.5, 0.9]
    """
    if isinstance(value, (str, bytes)) or is_bool(value):
        raise TypeError(f"{name} must be a sequence of numbers in (0, 1), got {value!r}")
    arr = np.atleast_1d(finite_array(name, value))
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D sequence, got shape {arr.shape}")
    bad = ~((arr > 0.0) & (arr < 1.0))
    if bad.any():
        raise ValueError(
            f"{name} must be in (0, 1); {int(bad.sum())} value(s) are not: {arr[bad][:10].tolist()}"
        )
    if np.unique(arr).size != arr.size:
        raise ValueError(f"{name} must be distinct, got {arr.tolist()}")
    return arr


def result(
    name: str,
    value,
    made_by: str,
    *,
    variables: Iterable = (),
    dims: Iterable = (),
    attrs: Iterable = (),
):
    """The Dataset ``value`` if it holds ``variables`` (or coordinates), ``dims`` and ``attrs``.

    For functions that take the result of another (plots, ``fraction_valid``, ...): a
    TypeError when ``value`` is not a Dataset, a ValueError naming what it lacks.

    Examples
    --------
    >>> import xarray as xr
    >>> result("fv", xr.Dataset({"a": 1}), "uqviz.f", variables=["b"])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: fv: not a result of uqviz.f: it lacks variable 'b' (it holds variables ['a']...
    """
    import xarray as xr  # lazily: the kernels import this module without xarray

    if not isinstance(value, xr.Dataset):
        raise TypeError(
            f"{name} must be the result of {made_by} (an xarray.Dataset), got "
            f"{type(value).__name__}"
        )
    missing = [f"variable {v!r}" for v in variables if v not in value.variables]
    missing += [f"dim {d!r}" for d in dims if d not in value.dims]
    missing += [f"attr {a!r}" for a in attrs if a not in value.attrs]
    if missing:
        have = sorted(map(str, value.data_vars))
        listed = f"{have[:12]}{' ...' if len(have) > 12 else ''}"
        raise ValueError(
            f"{name}: not a result of {made_by}: it lacks {', '.join(missing)} "
            f"(it holds variables {listed}, dims {tuple(map(str, value.dims))})"
        )
    return value
