"""Random streams: ``rng`` -> Generator, children by ``spawn``, kernel seeds by one draw.

Children depend only on the parent's state, so results do not depend on scheduling. The
streams of a call are nodes of one tree, the spawn tree of ``rng`` (docs/conventions.md,
"Randomness"): :func:`spawn` gives the next children in order, :func:`child` reaches the node
at a path of child indices directly (a study's grid point labelled by the bits of its value,
then a dataset index), without spawning the siblings. The root of a long study is one
:func:`kernel_seed` of ``rng``, saved, so that a rerun with ``rng=None`` resumes its streams.

Examples
--------
>>> kernel_seed(spawn(0, 2)[0]) == kernel_seed(spawn(0, 2)[0])
True
>>> int(child(7, 2).integers(1000)) == int(spawn(7, 3)[2].integers(1000))
True
>>> seed_attr(7), seed_attr(None), seed_attr(np.random.default_rng(0))
(7, 'None', 'Generator')
"""

from __future__ import annotations

import numbers

import numpy as np

from uqviz.engine import checks

__all__ = ["spawn", "child", "value_index", "kernel_seed", "seed_attr"]


def spawn(rng, n: int) -> list[np.random.Generator]:
    """``n`` independent child generators of ``rng``."""
    return list(checks.rng(rng).spawn(int(n)))


def child(seed, *path) -> np.random.Generator:
    """The stream at ``path`` (child indices, each an int >= 0) of the spawn tree of ``seed``.

    ``child(seed, i)`` is ``spawn(seed, i + 1)[i]`` and ``child(seed, i, j)`` is
    ``spawn(child(seed, i), j + 1)[j]``: the same node of the same tree, reached without
    spawning its siblings, so a unit labelled by a value (a grid point, keyed by
    :func:`value_index`) keeps its stream when the grid is reordered or extended.

    Parameters
    ----------
    seed : int >= 0 or numpy.random.SeedSequence
        The root: an int seed (a study's saved :func:`kernel_seed`), or a SeedSequence.
    *path : int >= 0
        The child index at each level of the tree, from the root down.

    Returns
    -------
    numpy.random.Generator

    Examples
    --------
    >>> a = child(3, 1, 4).integers(1000, size=2)
    >>> b = spawn(spawn(3, 2)[1], 5)[4].integers(1000, size=2)
    >>> a.tolist() == b.tolist()
    True
    """
    if isinstance(seed, np.random.SeedSequence):
        entropy, key, pool = seed.entropy, tuple(seed.spawn_key), seed.pool_size
    elif isinstance(seed, numbers.Integral) and not isinstance(seed, (bool, np.bool_)):
        checks.rng(seed, name="seed")  # a non-negative int
        entropy, key, pool = int(seed), (), 4
    else:
        raise TypeError(
            f"seed must be a non-negative int or a numpy SeedSequence, got {type(seed).__name__}"
        )
    path = tuple(checks.count("path", i, minimum=0) for i in path)
    ss = np.random.SeedSequence(entropy, spawn_key=key + path, pool_size=pool)
    return np.random.Generator(np.random.PCG64(ss))


def value_index(x) -> int:
    """The child index of a unit labelled by the float ``x``: its 64 bits as an integer.

    Examples
    --------
    >>> value_index(1.0)
    4607182418800017408
    """
    return int(np.array(float(x), dtype=np.float64).view(np.uint64))


def kernel_seed(rng) -> int:
    """One 63-bit integer seed drawn from ``rng``, for a numba kernel."""
    return int(checks.rng(rng).integers(0, 2**63))


def seed_attr(rng):
    """How ``rng`` is recorded in ``attrs["rng"]``: the int seed, else its type name."""
    if isinstance(rng, numbers.Integral) and not isinstance(rng, (bool, np.bool_)):
        return int(rng)
    return "None" if rng is None else type(rng).__name__
