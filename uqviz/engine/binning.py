"""Bins on any conditioning variable: equal-count, equal-width, stratified, given edges.

A :class:`Bins` holds the ordering that makes each bin a contiguous block (what
the bootstrap resamples) and, through :func:`bin_coords`, the coordinates
``bin_lower``, ``bin_upper``, ``bin_center``, ``count`` on dim ``bin``.

Examples
--------
>>> import uqviz
>>> default_n_bins(5000), default_n_bins(50)
(50, 1)
>>> conditioning_values(uqviz.from_arrays([0.1, -0.2], [1.0, 2.0]), "uE")[1].tolist()
[1.0, 2.0]
>>> sorted(bin_coords(compute_bins(np.arange(4.0), n_bins=2)))
['bin', 'bin_center', 'bin_lower', 'bin_upper', 'count']
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np
import xarray as xr

from uqviz._array import binning as binning_kernels
from uqviz.engine import checks
from uqviz.engine.warning_classes import BinningWarning

SMALL_BIN = 100  # fewest points for a reliable local interval (Pernot 2023)

__all__ = [
    "SMALL_BIN",
    "Bins",
    "compute_bins",
    "conditioning_values",
    "default_n_bins",
    "bin_coords",
    "SCHEMES",
]

SCHEMES = ("equal_count", "equal_width", "stratified", "edges")


@dataclass
class Bins:
    """Contiguous bins over an ordering of the points."""

    order: np.ndarray  # permutation of points; bins are contiguous in it
    starts: np.ndarray
    sizes: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    center: np.ndarray
    attrs: dict = field(default_factory=dict)

    @property
    def n_bins(self) -> int:
        """Number of bins."""
        return len(self.sizes)

    def labels(self) -> np.ndarray:
        """Bin index of every point, in the data's order."""
        lab = np.empty(self.order.size, dtype=np.int64)
        lab[self.order] = np.repeat(np.arange(self.n_bins), self.sizes)
        return lab


def default_n_bins(m: int) -> int:
    """Default number of bins: min(round(sqrt(M)), M // 100), at least 1."""
    m = int(m)
    return max(1, min(int(round(np.sqrt(m))), m // SMALL_BIN))


def conditioning_values(
    ds: xr.Dataset, conditioning, *, allow_constant=False
) -> tuple[str, np.ndarray]:
    """Name and float values of the conditioning variable (a name or one value per point).

    A constant variable is an error (its bins would be arbitrary) unless ``allow_constant``:
    values looked up in bins fitted elsewhere (``Recalibration.apply``) may be all equal.
    """
    if isinstance(conditioning, str):
        if conditioning not in ds.variables:
            raise ValueError(
                f"conditioning variable {conditioning!r} is not in the dataset; "
                f"available: {', '.join(map(str, ds.data_vars))}"
            )
        name, values = conditioning, ds[conditioning].values
    else:
        name, values = "conditioning", np.asarray(conditioning)
    if values.shape != (ds.sizes["point"],):
        raise ValueError(
            f"{name}: expected one value per point ({ds.sizes['point']}), got shape {values.shape}"
        )
    if not np.issubdtype(values.dtype, np.number):
        raise ValueError(f"{name}: conditioning variable must be numeric, got dtype {values.dtype}")
    values = values.astype(float)
    bad = ~np.isfinite(values)
    if bad.any():
        raise ValueError(f"{name}: {bad.sum()} rows with NaN or inf conditioning values")
    if not allow_constant and values.min() == values.max():
        raise ValueError(f"{name}: the conditioning variable is constant: bins would be arbitrary")
    return name, values


def _ranges(x, order, starts, sizes):
    xs = x[order]
    ends = starts + sizes - 1
    centers = np.add.reduceat(xs, starts) / sizes
    return xs[starts], xs[ends], centers


def compute_bins(
    x, *, n_bins=None, binning="equal_count", min_count=None, edges=None, log=False, rng=None
) -> Bins:
    """Bins of the values ``x`` by one of the schemes.

    Parameters
    ----------
    x : array_like, shape (M,)
        Conditioning values (finite).
    n_bins : int, optional
        For equal_count and equal_width; default ``min(round(sqrt(M)), M // 100)``, at least 1
        (``default_n_bins``).
    binning : {"equal_count", "equal_width", "stratified", "edges"}
        Stratified: one bin per distinct value. Equal-width, stratified and
        edges bins below ``min_count`` are merged with their smaller neighbour.
    min_count : int, optional
        Default 100 for stratified, else no merging.
    edges : array_like, optional
        Strictly increasing finite edges for ``binning="edges"`` (with another binning, a
        ValueError: never ignored).
    log : bool
        Log-spaced widths for ``equal_width``.
    rng : None, int or Generator, optional
        Randomise the order of ties (equal_count).

    Returns
    -------
    Bins

    Warns
    -----
    BinningWarning
        Equal-count bins split groups of tied values (``rng=None``).

    Examples
    --------
    >>> compute_bins(np.arange(10.0), n_bins=4).sizes.tolist()
    [3, 2, 3, 2]
    """
    x = checks.finite_array("x", x, ndim=1)
    m = x.size
    if m == 0:
        raise ValueError("x: no points to bin (M = 0)")
    binning = checks.choice("binning", binning, SCHEMES)
    if edges is not None and binning != "edges":
        raise ValueError(
            f"edges: bin edges are used only with binning='edges', got "
            f"binning={binning!r}; pass binning='edges' or leave edges out"
        )
    log = checks.boolean("log", log)
    min_count = checks.optional_count("min_count", min_count, minimum=1)
    if binning in ("equal_count", "equal_width"):
        n = (
            default_n_bins(m)
            if n_bins is None
            else checks.count("n_bins", n_bins, minimum=-(2**62))
        )
        if not 1 <= n <= m:
            raise ValueError(
                f"n_bins must be between 1 and the number of points M = {m}, got n_bins = {n}"
            )
    if binning == "equal_count":
        order = binning_kernels.stable_order(x, None if rng is None else checks.rng(rng))
        starts, sizes = binning_kernels.equal_count_starts(m, n)
        if rng is None:
            _warn_split_ties(x[order], starts, n)
        lower, upper, center = _ranges(x, order, starts, sizes)
        return Bins(
            order,
            starts,
            sizes,
            lower,
            upper,
            center,
            {
                "binning": binning,
                "n_bins_requested": n,
                "ties": "random order" if rng is not None else "data order",
            },
        )
    if binning == "stratified":
        min_count = 100 if min_count is None else min_count
        labels = binning_kernels.stratified_labels(x, min_count)
        edges_used = None
    else:
        if binning == "equal_width":
            edges_used = binning_kernels.width_edges(x, n, log=log)
        else:
            if edges is None:
                raise ValueError("binning='edges' needs edges=")
            edges_used = checks.finite_array("edges", edges, ndim=1)
            if edges_used.size < 2:
                raise ValueError(f"edges must hold at least 2 values, got {edges_used.size}")
            steps = np.flatnonzero(np.diff(edges_used) <= 0)
            if steps.size:
                raise ValueError(
                    f"edges must increase strictly; {steps.size} step(s) do not "
                    f"(first at position {steps[0] + 1}: "
                    f"{edges_used[steps[0]]} -> {edges_used[steps[0] + 1]})"
                )
        labels = binning_kernels.edge_labels(x, edges_used)
        outside = labels < 0
        if outside.any():
            raise ValueError(
                f"{outside.sum()} points fall outside the bin edges "
                f"[{edges_used[0]}, {edges_used[-1]}]"
            )
        labels = binning_kernels.merge_labels(labels, 1 if min_count is None else min_count)
    order, starts, sizes = binning_kernels.labels_to_groups(labels, binning_kernels.stable_order(x))
    lower, upper, center = _ranges(x, order, starts, sizes)
    if edges_used is not None:  # report the edges enclosing each (merged) bin
        lower = edges_used[
            np.minimum(np.searchsorted(edges_used, lower, side="right") - 1, edges_used.size - 2)
        ]
        upper = edges_used[
            np.minimum(np.searchsorted(edges_used, upper, side="right"), edges_used.size - 1)
        ]
    return Bins(
        order,
        starts,
        sizes,
        lower,
        upper,
        center,
        {
            "binning": binning,
            "min_count": 0 if min_count is None else int(min_count),
            "log": bool(log),
        },
    )


def _warn_split_ties(sorted_x, starts, n_bins):
    n_groups, n_points = binning_kernels.split_ties(sorted_x, starts)
    if n_groups:
        n_distinct = np.unique(sorted_x).size
        warnings.warn(
            f"equal-count binning into {n_bins} bins splits {n_groups} group(s) of tied "
            f"values ({n_points} points; the variable has {n_distinct} distinct values): "
            "equal values fall in different bins, in data order. Use binning='stratified' "
            "to bin by value.",
            BinningWarning,
            stacklevel=3,
        )


def bin_coords(bins: Bins) -> dict:
    """Coordinates on dim ``bin``: bin_lower, bin_upper, bin_center, count."""
    return {
        "bin": np.arange(bins.n_bins),
        "bin_lower": ("bin", bins.lower),
        "bin_upper": ("bin", bins.upper),
        "bin_center": ("bin", bins.center),
        "count": ("bin", bins.sizes),
    }
