"""Argument validators shared by every public function (one place for every option check).

Each validator takes the argument's *name* (as the user wrote it) and its value,
and returns the value in canonical form or raises a ``ValueError``/``TypeError``
that names the argument, the problem and the value. Nothing is silently
truncated: ``n_boot=2.5`` and ``n_bins=True`` are errors, ``n_boot=1000.0`` is 1000.

Examples
--------
>>> from uqviz.engine import checks
>>> checks.count("n_boot", 1000.0, minimum=2)
1000
>>> checks.probability("ci", 0.95)
0.95
>>> checks.choice("method", "bca", ("bca", "percentile", "basic"))
'bca'
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable, Sequence

import numpy as np

__all__ = ["count", "optional_count", "probability", "positive", "choice", "rng",
           "names", "finite_array", "boolean"]


def _is_bool(value) -> bool:
    return isinstance(value, (bool, np.bool_))


def count(name: str, value, *, minimum: int = 1, maximum: int | None = None) -> int:
    """A whole number in ``[minimum, maximum]``; integral floats accepted, bools and 2.5 not.

    Examples
    --------
    >>> count("n_bins", 10)
    10
    """
    if _is_bool(value) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be an integer, got {value!r} ({type(value).__name__})")
    if not np.isfinite(value) or float(value) != int(value):
        raise ValueError(f"{name} must be a whole number, got {value!r}")
    value = int(value)
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise ValueError(f"{name} must be <= {maximum}, got {value}")
    return value


def optional_count(name: str, value, *, minimum: int = 1, maximum: int | None = None):
    """``None`` or :func:`count`.

    Examples
    --------
    >>> optional_count("n_bins", None) is None
    True
    """
    return None if value is None else count(name, value, minimum=minimum, maximum=maximum)


def probability(name: str, value, *, closed: bool = False) -> float:
    """A level in the open interval (0, 1) (``closed=True``: [0, 1]).

    Examples
    --------
    >>> probability("ci", 0.9)
    0.9
    """
    if _is_bool(value) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a number in (0, 1), got {value!r} ({type(value).__name__})")
    value = float(value)
    inside = (0.0 <= value <= 1.0) if closed else (0.0 < value < 1.0)
    if not inside:
        raise ValueError(f"{name} must be in {'[0, 1]' if closed else '(0, 1)'}, got {value!r}")
    return value


def positive(name: str, value, *, allow_inf: bool = False) -> float:
    """A finite number > 0 (``allow_inf=True`` also accepts +inf).

    Examples
    --------
    >>> positive("nu", 6)
    6.0
    """
    if _is_bool(value) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a positive number, got {value!r} ({type(value).__name__})")
    value = float(value)
    if np.isnan(value) or value <= 0 or (np.isinf(value) and not allow_inf):
        raise ValueError(f"{name} must be a {'' if allow_inf else 'finite '}number > 0, "
                         f"got {value!r}")
    return value


def boolean(name: str, value) -> bool:
    """A bool (numpy bools accepted); 0/1 or strings are not.

    Examples
    --------
    >>> boolean("log", False)
    False
    """
    if not _is_bool(value):
        raise TypeError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def choice(name: str, value, choices: Sequence):
    """One of ``choices``; the error lists them.

    Examples
    --------
    >>> choice("binning", "stratified", ("equal_count", "stratified"))
    'stratified'
    """
    try:
        ok = value in choices
    except TypeError:
        ok = False
    if not ok:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, choices))}; got {value!r}")
    return value


def rng(value, *, name: str = "rng") -> np.random.Generator:
    """A ``numpy.random.Generator`` from None, an int >= 0, a SeedSequence or a Generator.

    ``numpy.random.RandomState`` and floats are refused: their streams differ from
    ``default_rng``'s and would make seeding ambiguous.

    Examples
    --------
    >>> int(rng(0).integers(10)) == int(rng(0).integers(10))
    True
    """
    if value is None or isinstance(value, (np.random.Generator, np.random.SeedSequence)):
        return np.random.default_rng(value)
    if isinstance(value, numbers.Integral) and not _is_bool(value):
        if value < 0:
            raise ValueError(f"{name} must be a non-negative integer seed, got {value}")
        return np.random.default_rng(int(value))
    raise TypeError(f"{name} must be None, a non-negative int, a numpy SeedSequence or a "
                    f"numpy.random.Generator, got {type(value).__name__} ({value!r:.60})")


def names(name: str, value, *, allowed: Iterable | None = None) -> tuple:
    """A non-empty tuple of distinct names (a single string is one name).

    Examples
    --------
    >>> names("statistics", "ZMS")
    ('ZMS',)
    """
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
    """A float array with no NaN/inf; the error counts the offending entries.

    Examples
    --------
    >>> finite_array("edges", [0.0, 1.0, 2.0]).tolist()
    [0.0, 1.0, 2.0]
    """
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
