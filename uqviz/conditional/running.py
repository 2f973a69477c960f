"""Running statistics of z-scores along a conditioning variable (Pernot (2023), Fig. 2)."""

from __future__ import annotations

import numpy as np
import xarray as xr

from uqviz.engine.tree import map_datasets
from uqviz.engine import checks
from uqviz.engine.binning import conditioning_values
from uqviz.data.model import check_dataset

__all__ = ["running_statistics", "default_window"]


def default_window(m: int) -> int:
    """Default running window: M // 100 points, at least 10, at most M.

    Parameters
    ----------
    m : int

    Returns
    -------
    int

    Examples
    --------
    >>> default_window(13885), default_window(500)
    (138, 10)
    """
    return int(min(m, max(m // 100, 10)))


def _running_means(v, w):
    cs = np.concatenate([[0.0], np.cumsum(v)])
    return (cs[w:] - cs[:-w]) / w


def _running_one(ds, *, rng=None, conditioning, window):
    check_dataset(ds)
    name, x = conditioning_values(ds, conditioning)
    m = x.size
    w = default_window(m) if window is None else window
    if not 1 <= w <= m:
        raise ValueError(f"window must be between 1 and the number of points ({m}), got {w}")
    order = np.argsort(x, kind="stable")
    xs = x[order]
    z = (ds["E"].values / ds["uE"].values)[order]
    n_windows = m - w + 1
    pad = np.full(w - 1, np.nan)  # a window starts at each rank from which w points remain
    lower, upper = np.concatenate([xs[:n_windows], pad]), np.concatenate([xs[w - 1 :], pad])
    attrs_x = dict(ds[conditioning].attrs) if isinstance(conditioning, str) else {}
    return xr.Dataset(
        {
            "z": ("rank", z, {"long_name": "z-score", "units": ""}),
            "running_mean": (
                "rank",
                np.concatenate([_running_means(z, w), pad]),
                {
                    "long_name": "running mean of z over the window starting at this rank",
                    "reference": 0.0,
                },
            ),
            "running_ms": (
                "rank",
                np.concatenate([_running_means(z * z, w), pad]),
                {
                    "long_name": "running mean of z^2 over the window starting at this rank",
                    "reference": 1.0,
                },
            ),
        },
        coords={
            "rank": np.arange(m),
            "point": ("rank", ds["point"].values[order]),
            "x": ("rank", xs, attrs_x),
            "x_window": ("rank", 0.5 * (lower + upper), attrs_x),
            "x_window_lower": ("rank", lower, attrs_x),
            "x_window_upper": ("rank", upper, attrs_x),
        },
        attrs={
            "conditioning": name,
            "window": w,
            "n_points": m,
            "units": attrs_x.get("units", ""),
            "long_name": attrs_x.get("long_name", name),
            "n_distinct": int(np.unique(x).size),
        },
    )


def running_statistics(data, *, conditioning="uE", window=None):
    r"""Z-scores sorted by a conditioning variable, with their running mean and mean square.

    Parameters
    ----------
    data : xarray.Dataset or xarray.DataTree
        Errors ``E`` and standard uncertainties ``uE`` on dim ``point`` (with any features), as
        made by :func:`uqviz.from_arrays` and the other constructors; a DataTree gives one
        result per dataset, on dim ``dataset``.
    conditioning : str or array_like, default "uE"
        Variable the z-scores are sorted by: "uE", a feature name, or one value per point.
    window : int, optional
        Points per window; default ``M // 100``, at least 10, at most M
        (``uqviz.conditional.running.default_window``).

    Returns
    -------
    xarray.Dataset
        On ``rank`` (the position in the sorted order of the conditioning variable):
        ``z`` (coords ``x``, ``point``); ``running_mean``, ``running_ms``, the means over
        the ``window`` points starting at that rank (coords ``x_window``, the mid-range
        of their x, ``x_window_lower``, ``x_window_upper``), NaN for the last
        ``window - 1`` ranks, where no full window starts.

    See Also
    --------
    uqviz.local_calibration : the same statistics in bins, with intervals.
    uqviz.plots.conditional.zscores_vs : draws the z-scores and running means.

    Notes
    -----
    With the z-scores sorted by the conditioning variable, :math:`Z_{(1)}, \dots, Z_{(M)}`, and a
    sliding window of :math:`w` points, window :math:`j = 1, \dots, M - w + 1` has

    .. math::

       \bar Z_j = \frac{1}{w}\sum_{i=j}^{j+w-1} Z_{(i)}, \qquad
       \overline{Z^2}_j = \frac{1}{w}\sum_{i=j}^{j+w-1} Z_{(i)}^2

    (Pernot (2023), Fig. 2).

    References
    ----------
    - Pernot (2023), Fig. 2: z-scores against uE and features, with running means.

    Full entries: :doc:`/docs/references`.

    Examples
    --------
    >>> import uqviz
    >>> ds = uqviz.synthetic.default_example()
    >>> res = uqviz.running_statistics(ds, conditioning="X", window=100)
    >>> int(res["running_mean"].notnull().sum()) == ds.sizes["point"] - 99
    True
    """
    window = checks.optional_count("window", window, minimum=0)  # range checked per dataset
    out = map_datasets(_running_one, data, conditioning=conditioning, window=window)
    if window is not None:
        out.attrs["window"] = window
    return out
