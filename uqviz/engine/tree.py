"""Apply a per-dataset computation to a Dataset or to every child of a DataTree.

For a tree, results gain a ``dataset`` dim (child names, tree order; ``target`` for a
targets tree, ``attrs["layout"] == "targets"``, docs/conventions.md) and each
child gets its own child stream of ``rng`` (:func:`uqviz.engine.seeds.spawn`); a
ValueError or TypeError raised for one child names it (:func:`naming_child`).

Examples
--------
>>> import uqviz, xarray as xr
>>> a = uqviz.from_arrays([0.1, -0.3], [0.2, 0.3])
>>> tree = xr.DataTree.from_dict({"a": a, "b": a})
>>> [name for name, _ in datasets_of(tree)], len(spawn_rngs(0, 2))
(['a', 'b'], 2)
>>> def n_points(ds, *, rng):
...     return xr.Dataset({"n": ds.sizes["point"]})
>>> map_datasets(n_points, tree)["n"].values.tolist()
[2, 2]
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable

import numpy as np
import xarray as xr

from uqviz.engine import seeds
from uqviz.engine.descriptions import describe, statistics_in
from uqviz.engine.parallel import call_recording_warnings, resolve_client, scatter

__all__ = ["datasets_of", "map_datasets", "set_dim_of", "spawn_rngs", "naming_child"]


def datasets_of(data, *, variables=("E", "uE")) -> list[tuple[str | None, xr.Dataset]]:
    """``[(name, Dataset), ...]``: ``(None, data)``, or one pair per data child of a DataTree.

    Children must hold ``variables`` (None: no check), else TypeError.
    """
    if isinstance(data, xr.Dataset):
        return [(None, data)]
    if isinstance(data, xr.DataTree):
        pairs: list[tuple[str | None, xr.Dataset]] = [
            (name, child.to_dataset()) for name, child in data.children.items()
        ]
        pairs = [(n, d) for n, d in pairs if "point" in d.dims]
        if not pairs:
            raise ValueError("DataTree: no child holds a dataset with dimension 'point'")
        if variables:
            lacking = {n: [v for v in variables if v not in d.variables] for n, d in pairs}
            lacking = {n: v for n, v in lacking.items() if v}
            if lacking:
                which = "; ".join(f"{n!r} lacks {', '.join(v)}" for n, v in lacking.items())
                raise TypeError(
                    f"DataTree: every child must be a dataset with variables "
                    f"{', '.join(variables)}: {which}"
                )
        return pairs
    raise TypeError(
        f"data: expected an xarray.Dataset or xarray.DataTree, got {type(data).__name__}; "
        "build one with uqviz.from_arrays, uqviz.from_dataframe or uqviz.read_csv"
    )


@contextlib.contextmanager
def naming_child(name):
    """A ValueError or TypeError raised inside names the DataTree child ``name`` (once).

    Examples
    --------
    >>> with naming_child("b"):
    ...     raise ValueError("uE: 2 rows with uE <= 0")
    Traceback (most recent call last):
    ...
    ValueError: dataset 'b': uE: 2 rows with uE <= 0
    """
    try:
        yield
    except (ValueError, TypeError) as err:
        label = f"dataset {name!r}"
        if (
            name is not None
            and len(err.args) == 1
            and isinstance(err.args[0], str)
            and label not in err.args[0]
        ):
            err.args = (f"{label}: {err.args[0]}",)
        raise


def _call_child(func, name, ds, **kwargs):
    """``func(ds, **kwargs)`` for the child ``name`` (named in its errors)."""
    with naming_child(name):
        return func(ds, **kwargs)


def spawn_rngs(rng, n: int) -> list[np.random.Generator]:
    """Alias of :func:`uqviz.engine.seeds.spawn`."""
    return seeds.spawn(rng, n)


def map_datasets(
    func: Callable[..., xr.Dataset],
    data,
    *,
    rng=None,
    variables=("E", "uE"),
    on_client=None,
    **kwargs,
) -> xr.Dataset:
    """Apply ``func(ds, rng=..., **kwargs)`` to each dataset of ``data``.

    Parameters
    ----------
    func : callable
    data : xarray.Dataset or xarray.DataTree
    rng : None, int, SeedSequence or numpy.random.Generator
        One child stream per dataset.
    variables : tuple of str or None
        See :func:`datasets_of`.
    on_client : None, "local" or dask.distributed.Client
        Run each dataset's ``func`` as one task on this client (the dataset sent once,
        warnings raised again here); the numbers are those of the local run, since each
        dataset keeps its own child stream.

    Returns
    -------
    xarray.Dataset
        With a leading ``dataset`` dim for a DataTree (``target`` when the tree's
        ``attrs["layout"]`` is ``"targets"``: one child per target); each variable has a
        ``long_name``, and ``units`` where the data have units
        (:func:`uqviz.engine.descriptions.describe`; units that differ between the datasets
        are dropped).
    """
    pairs = datasets_of(data, variables=variables)
    rngs = seeds.spawn(rng, len(pairs))
    if on_client is not None:
        client = resolve_client(on_client)
        results = _on_client(func, pairs, rngs, client, kwargs)
    elif isinstance(data, xr.Dataset):
        results = [func(pairs[0][1], rng=rngs[0], **kwargs)]
    else:
        results = [
            _call_child(func, name, ds, rng=r, **kwargs) for (name, ds), r in zip(pairs, rngs)
        ]
    statistics = statistics_in(kwargs)
    results = [
        describe(r, ds, statistics=statistics) if isinstance(r, xr.Dataset) else r
        for r, (_, ds) in zip(results, pairs)
    ]
    if isinstance(data, xr.Dataset):
        return results[0]
    names = [name for name, _ in pairs]
    dim = set_dim_of(data)
    out = xr.concat(
        results,
        dim=xr.DataArray(names, dims=dim, name=dim),
        coords="different",
        compat="equals",
        join="outer",
        combine_attrs="drop_conflicts",
    )
    return out


def set_dim_of(tree) -> str:
    """The dim of a tree's results: ``"target"`` for a targets tree, else ``"dataset"``.

    Examples
    --------
    >>> t = xr.DataTree.from_dict({"a": xr.Dataset()})
    >>> before = set_dim_of(t)
    >>> t.attrs["layout"] = "targets"
    >>> before, set_dim_of(t)
    ('dataset', 'target')
    """
    return "target" if tree.attrs.get("layout") == "targets" else "dataset"


def _on_client(func, pairs, rngs, client, kwargs):
    """``func(ds, rng=r, **kwargs)`` for every (name, dataset) as tasks of ``client``, in
    order."""
    futures = [
        client.submit(
            call_recording_warnings,
            _call_child,
            [func, name, scatter(client, ds)],
            dict(kwargs, rng=r),
            pure=False,
        )
        for (name, ds), r in zip(pairs, rngs)
    ]
    results = []
    for result, caught in client.gather(futures):
        for message, category in caught:
            warnings.warn(message, category, stacklevel=4)
        results.append(result)
    return results
