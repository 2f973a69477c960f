"""numba when it is installed, plain Python otherwise: the one module that imports numba.

uqviz works without numba (a new Python that numba does not support yet, in-browser
Python such as JupyterLite): ``njit`` then returns the function unchanged, ``prange`` is
``range``, and the callers take their numpy paths (``engine="numpy"`` for the resampler,
numpy forms of the CC, binned and leave-one-out kernels, numpy's samplers for the
simulated sets). One :class:`NumbaMissingWarning` is issued (``numba_status.py``), at
``import uqviz`` (numba not found) or when this module is first imported (found but broken):
the kernel modules that import this one load at first use, not with uqviz. Nothing here
imports anything of uqviz.

Examples
--------
>>> @njit(nogil=True)
... def twice(x):
...     return 2 * x
>>> twice(3)
6
>>> isinstance(HAVE_NUMBA, bool)
True
"""

from __future__ import annotations

import os

import numpy as np

from uqviz._array.numba_status import warn_numba_missing
from uqviz._array.warning_classes import NumbaMissingWarning

__all__ = [
    "HAVE_NUMBA",
    "USE_NUMBA",
    "NumbaMissingWarning",
    "njit",
    "prange",
    "uint64",
    "get_num_threads",
    "numba",
]


try:
    import numba
except ImportError:
    numba = None  # type: ignore[assignment]

#: numba is installed (its kernels are used by CC, the binned statistics and the
#: simulated sets, and ``engine="numba"`` is available)
HAVE_NUMBA = numba is not None
#: the resampler's default engine is numba (installed, and not disabled by
#: ``UQVIZ_DISABLE_NUMBA=1``)
USE_NUMBA = HAVE_NUMBA and os.environ.get("UQVIZ_DISABLE_NUMBA", "0") != "1"

if numba is not None:
    njit = numba.njit
    prange = numba.prange
    uint64 = numba.uint64

    def get_num_threads() -> int:
        """numba's thread count."""
        return int(numba.get_num_threads())
else:

    def njit(*args, **kwargs):
        """``numba.njit`` stand-in: the function itself (``@njit`` or ``@njit(...)``)."""
        if len(args) == 1 and callable(args[0]) and not kwargs:
            return args[0]
        return lambda func: func

    prange = range  # type: ignore[misc]
    uint64 = np.uint64

    def get_num_threads() -> int:
        """One thread: the numpy paths are not threaded by uqviz."""
        return 1

    warn_numba_missing()  # once: engine/checks.py issues it at `import uqviz` where not found
