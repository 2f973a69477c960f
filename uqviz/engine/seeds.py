"""Random streams: one rule for every function that draws random numbers.

``rng`` (None, int, SeedSequence or Generator) becomes a ``numpy.random.Generator``
(:func:`uqviz.engine.checks.rng`); independent child streams come from
``Generator.spawn``, and integer seeds for the numba kernels from one draw of
the stream that owns them. Because children depend only on the parent's state,
not on threads, chunks or dask workers, the same ``rng`` gives the same numbers
however the work is scheduled.

Examples
--------
>>> from uqviz.engine import seeds
>>> a, b = seeds.spawn(0, 2)
>>> seeds.kernel_seed(a) == seeds.kernel_seed(seeds.spawn(0, 2)[0])
True
>>> seeds.seed_attr(7), seeds.seed_attr(None)
(7, 'None')
"""

from __future__ import annotations

import numbers

import numpy as np

from uqviz.engine import checks

__all__ = ["spawn", "kernel_seed", "seed_attr"]


def spawn(rng, n: int) -> list[np.random.Generator]:
    """``n`` independent child generators of ``rng`` (validated by :func:`checks.rng`).

    Examples
    --------
    >>> len(spawn(1, 3))
    3
    """
    return list(checks.rng(rng).spawn(int(n)))


def kernel_seed(rng) -> int:
    """One 63-bit integer seed drawn from ``rng``, for a numba kernel's own streams.

    Examples
    --------
    >>> kernel_seed(0) == kernel_seed(0)
    True
    """
    return int(checks.rng(rng).integers(0, 2**63))


def seed_attr(rng):
    """How ``rng`` is recorded in a result's ``attrs["rng"]``: the int seed, else its type.

    Examples
    --------
    >>> seed_attr(np.random.default_rng(0))
    'Generator'
    """
    if isinstance(rng, numbers.Integral) and not isinstance(rng, (bool, np.bool_)):
        return int(rng)
    return "None" if rng is None else type(rng).__name__
