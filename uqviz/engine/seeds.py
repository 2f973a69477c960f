"""Random streams: ``rng`` -> Generator, children by ``spawn``, kernel seeds by one draw.

Children depend only on the parent's state, so results do not depend on scheduling.

Examples
--------
>>> kernel_seed(spawn(0, 2)[0]) == kernel_seed(spawn(0, 2)[0])
True
>>> seed_attr(7), seed_attr(None), seed_attr(np.random.default_rng(0))
(7, 'None', 'Generator')
"""

from __future__ import annotations

import numbers

import numpy as np

from uqviz.engine import checks

__all__ = ["spawn", "kernel_seed", "seed_attr"]


def spawn(rng, n: int) -> list[np.random.Generator]:
    """``n`` independent child generators of ``rng``."""
    return list(checks.rng(rng).spawn(int(n)))


def kernel_seed(rng) -> int:
    """One 63-bit integer seed drawn from ``rng``, for a numba kernel."""
    return int(checks.rng(rng).integers(0, 2**63))


def seed_attr(rng):
    """How ``rng`` is recorded in ``attrs["rng"]``: the int seed, else its type name."""
    if isinstance(rng, numbers.Integral) and not isinstance(rng, (bool, np.bool_)):
        return int(rng)
    return "None" if rng is None else type(rng).__name__
