"""Apply a per-dataset computation to a Dataset or to every child of a DataTree.

Every public compute function of uqviz accepts either one dataset (an
``xarray.Dataset`` with dim ``point``) or several (an ``xarray.DataTree`` with
one child per dataset). This module holds the one place where the two cases
are told apart: results for a tree gain a ``dataset`` dimension labelled by the
child names, in the tree's order; each dataset gets its own child stream of
``rng`` (:func:`uqviz.engine.seeds.spawn`), in the tree's order.

Examples
--------
>>> import uqviz, xarray as xr
>>> a = uqviz.from_arrays([0.1, -0.3, 0.2], [0.2, 0.3, 0.1])
>>> tree = xr.DataTree.from_dict({"a": a, "b": a})
>>> [name for name, _ in datasets_of(tree)]
['a', 'b']
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import xarray as xr

from uqviz.engine import seeds

__all__ = ["datasets_of", "map_datasets", "spawn_rngs"]


def datasets_of(data, *, variables=("E", "uE")) -> list[tuple[str | None, xr.Dataset]]:
    """Return ``[(name, Dataset), ...]`` for a Dataset or a DataTree.

    A Dataset gives one pair whose name is ``None``; a DataTree gives one pair
    per child that holds data (dimension ``point``), in the tree's order.

    Parameters
    ----------
    data : xarray.Dataset or xarray.DataTree
    variables : tuple of str or None
        Variables every child of a tree must hold (None: no check).

    Raises
    ------
    TypeError
        ``data`` is neither, or a child of the tree lacks ``variables``.
    ValueError
        No child of the tree holds a dataset.

    Examples
    --------
    >>> import uqviz
    >>> datasets_of(uqviz.from_arrays([0.1, 0.2], [1.0, 1.0]))[0][0] is None
    True
    """
    if isinstance(data, xr.Dataset):
        return [(None, data)]
    if isinstance(data, xr.DataTree):
        pairs = [(name, child.to_dataset()) for name, child in data.children.items()]
        pairs = [(n, d) for n, d in pairs if "point" in d.dims]
        if not pairs:
            raise ValueError("DataTree: no child holds a dataset with dimension 'point'")
        if variables:
            lacking = {n: [v for v in variables if v not in d.variables] for n, d in pairs}
            lacking = {n: v for n, v in lacking.items() if v}
            if lacking:
                which = "; ".join(f"{n!r} lacks {', '.join(v)}" for n, v in lacking.items())
                raise TypeError(f"DataTree: every child must be a dataset with variables "
                                f"{', '.join(variables)}: {which}")
        return pairs
    raise TypeError(
        f"expected an xarray.Dataset or xarray.DataTree, got {type(data).__name__}; "
        "build one with uqviz.from_arrays, uqviz.from_dataframe or uqviz.read_csv"
    )


def spawn_rngs(rng, n: int) -> list[np.random.Generator]:
    """Alias of :func:`uqviz.engine.seeds.spawn` (kept for the callers that use this name).

    Examples
    --------
    >>> len(spawn_rngs(0, 2))
    2
    """
    return seeds.spawn(rng, n)


def map_datasets(func: Callable[..., xr.Dataset], data, *, rng=None, variables=("E", "uE"),
                 **kwargs) -> xr.Dataset:
    """Apply ``func(ds, rng=..., **kwargs)`` to each dataset of ``data``.

    Parameters
    ----------
    func : callable
        Computes a result ``xarray.Dataset`` for one dataset.
    data : xarray.Dataset or xarray.DataTree
        One dataset, or several as children of a tree.
    rng : None, int, SeedSequence or numpy.random.Generator
        Each dataset receives its own child stream (:func:`uqviz.engine.seeds.spawn`).
    variables : tuple of str or None
        Variables every child of a tree must hold (see :func:`datasets_of`).

    Returns
    -------
    xarray.Dataset
        ``func``'s result, with a leading ``dataset`` dim for a DataTree.

    Examples
    --------
    >>> import uqviz, xarray as xr
    >>> a = uqviz.from_arrays([0.1, -0.3], [0.2, 0.3])
    >>> def n_points(ds, *, rng):
    ...     return xr.Dataset({"n": ds.sizes["point"]})
    >>> map_datasets(n_points, xr.DataTree.from_dict({"a": a, "b": a}))["n"].values.tolist()
    [2, 2]
    """
    pairs = datasets_of(data, variables=variables)
    rngs = seeds.spawn(rng, len(pairs))
    if isinstance(data, xr.Dataset):
        return func(pairs[0][1], rng=rngs[0], **kwargs)
    results = [func(ds, rng=r, **kwargs) for (_, ds), r in zip(pairs, rngs)]
    names = [name for name, _ in pairs]
    out = xr.concat(results, dim=xr.DataArray(names, dims="dataset", name="dataset"),
                    coords="different", compat="equals", join="outer",
                    combine_attrs="drop_conflicts")
    return out
