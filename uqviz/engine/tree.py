"""Apply a per-dataset computation to a Dataset or to every child of a DataTree.

Every public compute function of uqviz accepts either one dataset (an
``xarray.Dataset`` with dim ``point``) or several (an ``xarray.DataTree`` with
one child per dataset). This module holds the one place where the two cases
are told apart: results for a tree gain a ``dataset`` dimension labelled by the
child names, in the tree's order.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import xarray as xr

__all__ = ["datasets_of", "map_datasets", "spawn_rngs"]


def datasets_of(data) -> list[tuple[str | None, xr.Dataset]]:
    """Return ``[(name, Dataset), ...]`` for a Dataset or a DataTree.

    A Dataset gives one pair whose name is ``None``; a DataTree gives one pair
    per child that holds data, in the tree's order.
    """
    if isinstance(data, xr.Dataset):
        return [(None, data)]
    if isinstance(data, xr.DataTree):
        pairs = [(name, child.to_dataset()) for name, child in data.children.items()]
        pairs = [(n, d) for n, d in pairs if "point" in d.dims]
        if not pairs:
            raise ValueError("DataTree: no child holds a dataset with dimension 'point'")
        return pairs
    raise TypeError(
        f"expected an xarray.Dataset or xarray.DataTree, got {type(data).__name__}; "
        "build one with uqviz.from_arrays, uqviz.from_dataframe or uqviz.read_csv"
    )


def spawn_rngs(rng, n: int) -> list[np.random.Generator]:
    """Derive ``n`` independent generators from ``rng`` (SPEC 7).

    The children depend only on ``rng``'s state, not on how the work is later
    split, so results are reproducible for a given seed.
    """
    rng = np.random.default_rng(rng)
    return list(rng.spawn(n))


def map_datasets(func: Callable[..., xr.Dataset], data, *, rng=None, **kwargs) -> xr.Dataset:
    """Apply ``func(ds, rng=..., **kwargs)`` to each dataset of ``data``.

    Parameters
    ----------
    func : callable
        Computes a result ``xarray.Dataset`` for one dataset.
    data : xarray.Dataset or xarray.DataTree
        One dataset, or several as children of a tree.
    rng : None, int or numpy.random.Generator
        Seed; each dataset receives its own child stream.

    Returns
    -------
    xarray.Dataset
        ``func``'s result, with a leading ``dataset`` dim for a DataTree.
    """
    pairs = datasets_of(data)
    rngs = spawn_rngs(rng, len(pairs))
    if isinstance(data, xr.Dataset):
        return func(pairs[0][1], rng=rngs[0], **kwargs)
    results = [func(ds, rng=r, **kwargs) for (_, ds), r in zip(pairs, rngs)]
    names = [name for name, _ in pairs]
    out = xr.concat(results, dim=xr.DataArray(names, dims="dataset", name="dataset"),
                    coords="different", compat="equals", combine_attrs="drop_conflicts")
    return out
