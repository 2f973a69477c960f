"""Joint forecasts of several targets in the comparisons: which joint scores apply to a
dataset, and its per-point scores (the columns :func:`uqviz.compare_forecasts` and
:func:`uqviz.compare_models` bootstrap).

A *joint forecast* is a Dataset whose ``y`` has a target dim (``target`` or ``variable``)
and that holds either an ensemble ``samples`` (point, target, sample) or a Gaussian forecast
``mean`` (point, target) and ``cov`` (point, target, target2), the layouts
:func:`uqviz.energy_score` and :func:`uqviz.dawid_sebastiani_score` read.
"""

from __future__ import annotations

import numpy as np
import xarray as xr

from uqviz.scores.multivariate import (
    TARGET_DIMS,
    dawid_sebastiani_score,
    energy_score,
    joint_samples,
    variogram_score,
)

__all__ = [
    "JOINT_SCORES",
    "JOINT_FORM_SCORES",
    "joint_form",
    "applicable_scores",
    "joint_point_scores",
    "joint_observed",
    "joint_same_points",
]

#: the joint scores (negatively oriented): energy (Gneiting & Raftery 2007), variogram of
#: order 0.5 (Scheuerer & Hamill 2015), their fair forms, Dawid-Sebastiani (Dawid &
#: Sebastiani 1999; of an ensemble: its mean and covariance, ddof 1)
JOINT_SCORES = ("energy", "energy_fair", "variogram", "variogram_fair", "dss")
CITATION = (
    "Gneiting & Raftery (2007) (energy score); Scheuerer & Hamill (2015) (variogram score); "
    "Dawid & Sebastiani (1999) (Dawid-Sebastiani score)"
)
#: the joint scores of each joint form
JOINT_FORM_SCORES = {
    "joint_samples": ("energy", "energy_fair", "variogram", "variogram_fair", "dss"),
    "joint_gaussian": ("dss",),
}


def joint_form(ds) -> str | None:
    """``"joint_samples"``, ``"joint_gaussian"`` or None (not a joint forecast).

    Examples
    --------
    >>> import numpy as np, xarray as xr
    >>> ds = xr.Dataset({"y": (("point", "target"), np.zeros((3, 2))),
    ...                  "samples": (("point", "target", "sample"), np.zeros((3, 2, 4)))})
    >>> joint_form(ds), joint_form(ds.drop_vars("samples"))
    ('joint_samples', None)
    """
    if not isinstance(ds, xr.Dataset) or "y" not in ds.variables:
        return None
    if not any(d in ds["y"].dims for d in TARGET_DIMS):
        return None
    if "samples" in ds.variables:
        return "joint_samples"
    has_cov = "cov" in ds.variables or ("scale" in ds.variables and ds["scale"].ndim == 3)
    if "mean" in ds.variables and has_cov:
        return "joint_gaussian"
    return None


def joint_observed(ds) -> np.ndarray:
    """The observations ``y`` of a joint forecast as an array (point, target)."""
    y = ds["y"]
    t = next(d for d in TARGET_DIMS if d in y.dims)
    return np.asarray(y.transpose("point", t).values, dtype=float)


def _ensemble_dss(ds):
    y, x, _ = joint_samples(ds)
    n, t, s = x.shape
    if s <= t:
        raise ValueError(
            f"scores: 'dss' of an ensemble needs more members than targets (a non-singular "
            f"covariance), got {s} members for {t} targets"
        )
    mean = x.mean(axis=2)
    d = x - mean[:, :, None]
    cov = np.einsum("nas,nbs->nab", d, d) / (s - 1)
    return dawid_sebastiani_score(y, mean, cov)["point_score"].values


def applicable_scores(ds) -> tuple:
    """The joint scores that apply to a joint forecast: those of its form, ``dss`` of an
    ensemble only with more members than targets (a non-singular covariance).

    Examples
    --------
    >>> import numpy as np, xarray as xr
    >>> ds = xr.Dataset({"y": (("point", "target"), np.zeros((3, 2))),
    ...                  "samples": (("point", "target", "sample"), np.zeros((3, 2, 2)))})
    >>> applicable_scores(ds)
    ('energy', 'energy_fair', 'variogram', 'variogram_fair')
    """
    form = joint_form(ds)
    names = JOINT_FORM_SCORES[form]
    if form == "joint_samples" and ds["samples"].sizes["sample"] <= joint_observed(ds).shape[1]:
        names = tuple(s for s in names if s != "dss")
    return names


def joint_point_scores(ds, scores=None):
    """Per-point joint scores of one joint forecast.

    Parameters
    ----------
    ds : xarray.Dataset
        A joint forecast (:func:`joint_form` not None).
    scores : sequence of str, optional
        Scores of :data:`JOINT_FORM_SCORES` of its form; None: all that apply (``dss`` of
        an ensemble only with more members than targets).

    Returns
    -------
    form : str
    names : tuple of str
    cols : ndarray, shape (M, len(names))

    Examples
    --------
    >>> import numpy as np, xarray as xr
    >>> ds = xr.Dataset({"y": (("point", "target"), [[0.0, 0.0]]),
    ...                  "samples": (("point", "target", "sample"), [[[3.0, 0.0], [4.0, 0.0]]])})
    >>> form, names, cols = joint_point_scores(ds, ("energy", "energy_fair"))
    >>> form, names, cols.tolist()
    ('joint_samples', ('energy', 'energy_fair'), [[1.25, 0.0]])
    """
    form = joint_form(ds)
    if form is None:
        raise ValueError(
            "not a joint forecast: expected y (point, target) and samples (point, target, "
            "sample), or y, mean (point, target) and cov (point, target, target2)"
        )
    names = applicable_scores(ds) if scores is None else tuple(scores)
    bad = [s for s in names if s not in JOINT_FORM_SCORES[form]]
    if bad:
        raise ValueError(
            f"scores: {bad} do not apply to a {form.replace('_', ' ')} forecast; its joint "
            f"scores are {list(JOINT_FORM_SCORES[form])}"
        )
    cols = []
    for s in names:
        if s in ("energy", "energy_fair"):
            cols.append(energy_score(ds, fair=s == "energy_fair")["point_score"].values)
        elif s in ("variogram", "variogram_fair"):
            cols.append(variogram_score(ds, fair=s == "variogram_fair")["point_score"].values)
        elif form == "joint_samples":
            cols.append(_ensemble_dss(ds))
        else:
            cols.append(dawid_sebastiani_score(ds)["point_score"].values)
    return form, names, np.column_stack(cols)


def joint_same_points(pairs) -> str:
    """What keeps the joint forecasts ``[(name, Dataset), ...]`` from being models of the same
    points (a dataset that is not a joint forecast, the targets, then the count of points
    whose ``y`` differ from the first's); empty when they are.

    Examples
    --------
    >>> import numpy as np, xarray as xr
    >>> a = xr.Dataset({"y": (("point", "target"), np.zeros((3, 2))),
    ...                 "samples": (("point", "target", "sample"), np.zeros((3, 2, 4)))})
    >>> b = a.assign(y=a["y"].where(a["point"] != 1, 1.0))
    >>> joint_same_points([("a", a), ("a2", a)]), joint_same_points([("a", a), ("b", b)])
    ('', "y of 'b' differs from y of 'a' at 1 of 3 points")
    """
    plain = [name for name, ds in pairs if joint_form(ds) is None]
    if plain:
        return (
            f"{plain} are not joint forecasts (y with a target dim and samples, or mean and "
            "cov): joint forecasts are compared with joint forecasts only"
        )
    (first, y0), *rest = [(name, joint_observed(ds)) for name, ds in pairs]
    for name, y in rest:
        if y.shape != y0.shape:
            return f"y of {name!r} has shape {y.shape}, y of {first!r} {y0.shape}"
        k = int(np.count_nonzero(~(y == y0).all(axis=1)))
        if k:
            return f"y of {name!r} differs from y of {first!r} at {k} of {len(y0)} points"
    return ""
