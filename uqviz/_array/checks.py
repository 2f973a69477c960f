"""The option checks of the kernels: a name and a value in, the value canonical out.

A leaf: it imports numpy and nothing of uqviz, so the kernels of :mod:`uqviz._array` that are
entry points check their options without reaching up to the engine. The one implementation
of each of these checks; :mod:`uqviz.engine.checks` re-exports them beside the others.

Examples
--------
>>> count("n_boot", 1000.0, minimum=2), probability("ci", 0.9), boolean("log", False)
(1000, 0.9, False)
>>> choice("binning", "stratified", ("equal_count", "stratified"))
'stratified'
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence

import numpy as np

__all__ = ["is_bool", "count", "probability", "boolean", "choice"]


def is_bool(value) -> bool:
    """True for a Python or numpy bool (which ``numbers.Real`` would accept as 0/1)."""
    return isinstance(value, (bool, np.bool_))


def count(name: str, value, *, minimum: int = 1, maximum: int | None = None) -> int:
    """A whole number in ``[minimum, maximum]``; integral floats accepted, bools and 2.5 not."""
    if is_bool(value) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be an integer, got {value!r} ({type(value).__name__})")
    as_float = float(value)  # a Real: float() is defined
    if not np.isfinite(as_float) or as_float != int(as_float):
        raise ValueError(f"{name} must be a whole number, got {value!r}")
    value = int(as_float)
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise ValueError(f"{name} must be <= {maximum}, got {value}")
    return value


def probability(name: str, value, *, closed: bool = False) -> float:
    """A level in (0, 1) (``closed=True``: [0, 1])."""
    if is_bool(value) or not isinstance(value, numbers.Real):
        raise TypeError(
            f"{name} must be a number in (0, 1), got {value!r} ({type(value).__name__})"
        )
    value = float(value)
    inside = (0.0 <= value <= 1.0) if closed else (0.0 < value < 1.0)
    if not inside:
        raise ValueError(f"{name} must be in {'[0, 1]' if closed else '(0, 1)'}, got {value!r}")
    return value


def boolean(name: str, value) -> bool:
    """A bool (numpy bools accepted); 0/1 or strings are not."""
    if not is_bool(value):
        raise TypeError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def choice(name: str, value, choices: Sequence):
    """One of ``choices``; the error lists them."""
    try:
        ok = value in choices
    except TypeError:
        ok = False
    if not ok:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, choices))}; got {value!r}")
    return value
