"""Whether several datasets can be models of the same points: the one check that
:func:`uqviz.compare_models` and the report's comparison section share (issue 25)."""

from __future__ import annotations

import numpy as np

from uqviz.predictive.forecast import gives_observed, observed

__all__ = ["same_points"]


def same_points(pairs) -> tuple[bool, bool, str]:
    """Whether the datasets ``[(name, Dataset), ...]`` can be models of the same points.

    Parameters
    ----------
    pairs : sequence of (str, xarray.Dataset)
        The models and their names, as ``uqviz.engine.tree.datasets_of`` lists the
        children of a DataTree.

    Returns
    -------
    same : bool
        At least two datasets, of the same number of points, whose observed values ``y``
        (:func:`uqviz.predictive.observed`) agree at every point wherever two of them give ``y``.
    identified : bool
        ``same``, and every dataset gives ``y``: the points are then known to be the same.
    why : str
        What is wrong or missing; empty when ``identified``. The first difference found:
        fewer than two datasets, then the numbers of points, then the ``y`` that differ from
        the first dataset's ``y`` (each with its count of differing points).

    See Also
    --------
    uqviz.compare_models : raises a ValueError with ``why`` unless ``same``.
    uqviz.report : compares the children of a tree (``compare=None``) when ``identified``.
    uqviz.predictive.observed : the observed values of a dataset.

    Notes
    -----
    Two models of the same points share their observations ``y_i``, i = 1..M, point for point
    (the paired comparison of Pernot & Savin (2020a) resamples the points once for all
    models). A dataset in error space (E and uE, no ``y``) cannot be checked: such datasets
    make ``same`` true without ``identified``. ``y`` are compared exactly (a NaN differs).

    References
    ----------
    Pernot & Savin (2020a).

    Examples
    --------
    >>> import uqviz
    >>> from uqviz.comparison import same_points
    >>> a, b = uqviz.from_arrays([0.1, 0.2], [1.0, 1.0]), uqviz.from_arrays([0.3], [1.0])
    >>> same_points([("a", a), ("b", b)])
    (False, False, "numbers of points differ ('a': 2, 'b': 1)")
    >>> same_points([("a", a), ("a2", a)])
    (True, False, 'no dataset gives the observed values y')
    >>> p = np.array([1.5, 2.0, 2.0])
    >>> y1 = uqviz.from_predictions([1.0, 2.0, 3.0], p, lower=p - 1, upper=p + 1, level=0.9)
    >>> y2 = uqviz.from_predictions([1.0, 2.5, 3.0], p, lower=p - 1, upper=p + 1, level=0.9)
    >>> same_points([("m1", y1), ("m2", y2)])
    (False, False, "y of 'm2' differs from y of 'm1' at 1 of 3 points")
    >>> same_points([("m1", y1), ("m1b", y1)])
    (True, True, '')
    """
    pairs = list(pairs)
    if len(pairs) < 2:
        return False, False, f"a comparison needs at least two models, got {len(pairs)}"
    sizes = {name: int(ds.sizes["point"]) for name, ds in pairs}
    if len(set(sizes.values())) > 1:
        listed = ", ".join(f"{name!r}: {size}" for name, size in sizes.items())
        return False, False, f"numbers of points differ ({listed})"
    given = [
        (name, np.asarray(observed(ds)[0].values, dtype=float))
        for name, ds in pairs
        if gives_observed(ds)
    ]
    if given:
        first, y0 = given[0]
        differ = [(name, int(np.count_nonzero(~(y == y0)))) for name, y in given[1:]]
        differ = [(name, k) for name, k in differ if k]
        if differ:
            return (
                False,
                False,
                "; ".join(
                    f"y of {name!r} differs from y of {first!r} at {k} of {y0.size} points"
                    for name, k in differ
                ),
            )
    if len(given) == len(pairs):
        return True, True, ""
    if not given:
        return True, False, "no dataset gives the observed values y"
    missing = [name for name, ds in pairs if not gives_observed(ds)]
    return True, False, f"{', '.join(missing)} give{'s' if len(missing) == 1 else ''} no y"
