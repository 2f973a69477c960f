"""Whether numba can be found, known without importing it, and the one NumbaMissingWarning.

numba takes about 0.2 s to import and ``import uqviz`` leaves it to the first analysis that
needs it (issue 25, item 2; ``jit.py`` is still the only module that imports it); yet where it
is not installed, ``import uqviz`` says so at once (docs/conventions.md, "Without numba"):
``engine/checks.py`` calls :func:`warn_numba_missing` when :func:`numba_findable` is False, and
``jit.py`` calls it when ``import numba`` fails; the warning is issued once either way.
Nothing here imports anything of uqviz outside ``_array/``.

Examples
--------
>>> isinstance(numba_findable(), bool)
True
"""

from __future__ import annotations

import importlib.util
import warnings

from uqviz._array.warning_classes import NumbaMissingWarning

__all__ = ["MESSAGE", "numba_findable", "warn_numba_missing"]

#: the text of the warning
MESSAGE = (
    "numba is not installed: uqviz uses its numpy kernels (engine='numpy'; the same "
    "results where docs/conventions.md promises them, slower)"
)

_ISSUED: list[bool] = []  # one element once the warning was issued


def numba_findable() -> bool:
    """Whether an ``import numba`` would find a module (without importing it).

    Returns
    -------
    bool
        False where numba is not installed or hidden (``sys.modules["numba"] = None``).

    See Also
    --------
    warn_numba_missing : the warning issued when it is False.

    Notes
    -----
    :func:`importlib.util.find_spec` looks for the module and does not execute it; a numba
    that is found but fails to import (one built for another numpy) is reported by ``jit.py``
    at the first use of a kernel.

    Examples
    --------
    >>> numba_findable() in (True, False)
    True
    """
    try:
        return importlib.util.find_spec("numba") is not None
    except (ImportError, ValueError):
        return False


def warn_numba_missing(stacklevel: int = 2) -> None:
    """Issue the :class:`NumbaMissingWarning`, the first time only.

    Parameters
    ----------
    stacklevel : int, optional
        As for :func:`warnings.warn`, counted from the caller of this function.

    See Also
    --------
    numba_findable : whether numba can be found.

    Examples
    --------
    >>> callable(warn_numba_missing)
    True
    """
    if _ISSUED:
        return
    _ISSUED.append(True)
    warnings.warn(MESSAGE, NumbaMissingWarning, stacklevel=stacklevel + 1)
