"""Renamed options: the old keyword is accepted for one release, with a warning naming the new one.

One implementation for every public function: decorate it with :func:`renamed_options`, giving
each old keyword and its new name. The signature shown by ``help`` and ``inspect`` is the new one;
the renames are listed in CHANGELOG.md.

Examples
--------
>>> import warnings
>>> @renamed_options(k="coverage_factor")
... def width(*, coverage_factor=2.0):
...     return coverage_factor
>>> with warnings.catch_warnings(record=True) as caught:
...     warnings.simplefilter("always")
...     width(k=3.0)
3.0
>>> print(caught[0].message)  # doctest: +NORMALIZE_WHITESPACE
width(k=...) is deprecated and will be removed in uqviz 0.3.0:
use coverage_factor= instead
>>> caught[0].category.__name__
'FutureWarning'
"""

from __future__ import annotations

import functools
import warnings

__all__ = ["renamed_options", "REMOVED_IN"]

#: the release that removes the old names (they are kept for one release)
REMOVED_IN = "0.3.0"


def renamed_options(**renames: str):
    """Decorator accepting each old keyword (``old="new"``) as its new name, with a FutureWarning.

    Parameters
    ----------
    **renames : str
        ``old_name="new_name"`` for each renamed keyword option.

    Returns
    -------
    callable
        A decorator. The wrapped function keeps the new signature (``functools.wraps``) and
        records the renames in its attribute ``renamed_options``. Passing both the old and
        the new name is a TypeError.

    Examples
    --------
    >>> @renamed_options(log="log_x")
    ... def draw(*, log_x=False):
    ...     return log_x
    >>> draw(log_x=True), draw.renamed_options
    (True, {'log': 'log_x'})
    """
    for old, new in renames.items():
        if not isinstance(new, str) or not new.isidentifier() or new == old:
            raise ValueError(
                f"renamed_options: {old}= must map to another keyword name, got {new!r}"
            )

    def decorate(func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            for old, new in renames.items():
                if old not in kwargs:
                    continue
                if new in kwargs:
                    raise TypeError(
                        f"{func.__name__}() got both {old}= (deprecated) and "
                        f"{new}=: pass {new}= only"
                    )
                warnings.warn(
                    f"{func.__name__}({old}=...) is deprecated and will be removed in "
                    f"uqviz {REMOVED_IN}: use {new}= instead",
                    FutureWarning,
                    stacklevel=2,
                )
                kwargs[new] = kwargs.pop(old)
            return func(*args, **kwargs)

        wrapper.renamed_options = {**getattr(func, "renamed_options", {}), **renames}
        return wrapper

    return decorate
