"""Quantile calibration figures: reliability curve and per-bin coverage map of :func:`uqviz.qce`."""

from __future__ import annotations

import matplotlib as mpl
import numpy as np
from matplotlib.colors import is_color_like

from uqviz.engine import checks
from uqviz.plots._checks import choice, drawable
from uqviz.plots._style import accepts_targets
from uqviz.plots._style import COLORS, apply_style, get_ax

__all__ = ["quantile_reliability", "coverage_map"]


def _check_one_dataset(result):
    if "dataset" in result.dims:
        raise ValueError("result: holds several datasets; select one, e.g. result.isel(dataset=0)")


def _variable_labels(result, variable):
    if "variable" not in result.dims:
        if variable is not None:
            raise ValueError(
                "variable: this result has no dimension 'variable' (1-D or covariance input)"
            )
        return [None]
    if variable is None:
        return list(result["variable"].values)
    labels = list(np.atleast_1d(variable))
    for v in labels:
        choice("quantile_reliability", "variable", v, result["variable"].values)
    return labels


@accepts_targets
def quantile_reliability(
    result, *, variable=None, ax=None, kind="coverage", band=True, label=None, color=None
):
    """Observed coverage against the quantile level (quantile reliability curve).

    Parameters
    ----------
    result : xarray.Dataset
        Output of :func:`uqviz.qce`.
    variable : label or list of labels, optional
        Default all, one line each.
    ax : matplotlib.axes.Axes, optional
    kind : {"coverage", "deviation"}, default "coverage"
        Coverage against ``tau`` with the diagonal, or ``coverage - tau`` with zero.
    band : bool, default True
        Shade the Wilson interval of the coverage.
    label : str, optional
    color : color, optional

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> import numpy as np
    >>> import uqviz.quantile as uq
    >>> from uqviz.plots.quantile import quantile_reliability
    >>> res = uq.qce(np.random.default_rng(0).standard_normal(500), 0.0, np.ones(500), n_boot=0)
    >>> quantile_reliability(res).get_xlabel()
    'quantile level $\\\\tau$'
    """
    if kind not in ("coverage", "deviation"):
        raise ValueError(f"kind must be 'coverage' or 'deviation', got {kind!r}")
    checks.result("result", result, "uqviz.qce", variables=("coverage",), dims=("level",))
    _check_one_dataset(result)
    drawable("quantile_reliability", result, ("coverage",))
    if color is not None and not is_color_like(color):
        raise ValueError(f"quantile_reliability: color must be a matplotlib colour, got {color!r}")
    labels = _variable_labels(result, variable)
    ax = get_ax(ax)
    apply_style(ax)
    tau = result["level"].values
    order = np.argsort(tau)
    tau = tau[order]
    shift = tau if kind == "deviation" else 0.0
    ci = result.attrs.get("ci", 0.95)
    for i, lab in enumerate(labels):
        sel = result if lab is None else result.sel(variable=lab)
        cov = sel["coverage"].values[order]
        c = (
            color
            if (color is not None and len(labels) == 1)
            else COLORS["series"][i % len(COLORS["series"])]
        )
        if lab is None:
            text = label or result.attrs.get("input", "observed")
        else:
            text = f"{label} {lab}" if label else f"variable {lab}"
        if band:
            ax.fill_between(
                tau,
                sel["coverage_lower"].values[order] - shift,
                sel["coverage_upper"].values[order] - shift,
                color=c,
                alpha=0.2,
                lw=0,
                label=f"Wilson {ci:.0%}" if i == 0 else None,
            )
        ax.plot(tau, cov - shift, "o-", color=c, ms=3, label=text)
    if kind == "coverage":
        ax.plot(
            [0, 1],
            [0, 1],
            color=COLORS["reference"],
            lw=0.8,
            ls="--",
            label=r"ideal (coverage $= \tau$)",
        )
        ax.set_ylabel("observed coverage")
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
    else:
        ax.axhline(
            0.0, color=COLORS["reference"], lw=0.8, ls="--", label=r"ideal (coverage $= \tau$)"
        )
        ax.set_ylabel(r"coverage $-\ \tau$")
        ax.set_xlim(0, 1)
    ax.set_xlabel(r"quantile level $\tau$")
    _legend_unique(ax)
    return ax


def _legend_unique(ax):
    """Legend without repeated labels (several results drawn on one Axes)."""
    seen = {}
    for h, lab in zip(*ax.get_legend_handles_labels()):
        seen.setdefault(lab, h)
    ax.legend(list(seen.values()), list(seen.keys()), loc="best")


@accepts_targets
def coverage_map(
    result, *, variable=None, ax=None, cmap="RdBu", vmax=None, annotate=False, colorbar=True
):
    """Per-bin coverage deviation ``coverage_b - tau`` as a bins x levels heat map.

    Blue: more coverage than ``tau`` (too wide), red: less; excluded bins blank.

    Parameters
    ----------
    result : xarray.Dataset
        Output of :func:`uqviz.qce` with ``marginal=False``.
    variable : label, optional
        Required when the result has several.
    ax : matplotlib.axes.Axes, optional
    cmap : str, default "RdBu"
    vmax : float, optional
        Symmetric colour limit; default the largest ``|deviation|``.
    annotate : bool, default False
        Write the count of each bin.
    colorbar : bool, default True

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> import numpy as np
    >>> import uqviz.quantile as uq
    >>> from uqviz.plots.quantile import coverage_map
    >>> rng = np.random.default_rng(0)
    >>> u = rng.uniform(0.5, 2, 500)
    >>> res = uq.qce(u * rng.standard_normal(500), 0.0, u, levels=[0.25, 0.5, 0.75],
    ...              marginal=False, n_bins=5, n_boot=0)
    >>> coverage_map(res).get_ylabel()
    'predicted std'
    """
    checks.result(
        "result",
        result,
        "uqviz.qce with marginal=False",
        variables=("bin_coverage", "bin_count", "bin_lower", "bin_upper"),
        dims=("level", "bin"),
    )
    _check_one_dataset(result)
    if "variable" in result.dims:
        if variable is None:
            if result.sizes["variable"] > 1:
                raise ValueError(f"variable: choose one of {list(result['variable'].values)}")
            variable = result["variable"].values[0]
        choice("coverage_map", "variable", variable, result["variable"].values)
        result = result.sel(variable=variable)
    elif variable is not None:
        raise ValueError(
            "variable: this result has no dimension 'variable' (1-D or covariance input)"
        )
    drawable("coverage_map", result, ("bin_coverage", "bin_lower"))
    if isinstance(cmap, str) and cmap not in mpl.colormaps:
        raise ValueError(
            f"coverage_map: unknown cmap {cmap!r}; a name of matplotlib's colour "
            "maps (matplotlib.colormaps), e.g. 'RdBu' or 'viridis'"
        )
    if vmax is not None:
        vmax = checks.positive("vmax", vmax)
    ax = get_ax(ax, figsize=(5.5, 3.5))
    tau = result["level"].values
    order = np.argsort(tau)
    tau = tau[order]
    dev = (result["bin_coverage"].transpose("level", "bin").values[order] - tau[:, None]).T
    if tau.size > 1:
        mid = 0.5 * (tau[1:] + tau[:-1])
        x_edges = np.r_[tau[0] - (mid[0] - tau[0]), mid, tau[-1] + (tau[-1] - mid[-1])]
    else:
        x_edges = np.array([tau[0] - 0.05, tau[0] + 0.05])
    y_edges = np.r_[result["bin_lower"].values, result["bin_upper"].values[-1]]
    if vmax is None:
        vmax = float(np.nanmax(np.abs(dev))) if np.any(np.isfinite(dev)) else 1.0
        vmax = vmax if vmax > 0 else 1.0
    mesh = ax.pcolormesh(
        x_edges,
        y_edges,
        np.ma.masked_invalid(dev),
        cmap=cmap,
        vmin=-vmax,
        vmax=vmax,
        shading="flat",
    )
    ax.set_xlim(x_edges[0], x_edges[-1])
    ax.set_ylim(y_edges[0], y_edges[-1])
    ax.set_xlabel(r"quantile level $\tau$")
    cov_input = result.attrs.get("scale_kind") == "cov"
    ax.set_ylabel(r"predicted $\sigma_G$" if cov_input else "predicted std")
    title = r"coverage $-\ \tau$ per bin"
    if variable is not None:
        title += f" ({variable})"
    ax.set_title(title)
    if annotate:
        counts = result["bin_count"].values
        centers = 0.5 * (y_edges[1:] + y_edges[:-1])
        for c, yc in zip(counts, centers):
            ax.annotate(
                f"{int(c)}",
                (1.0, yc),
                xycoords=("axes fraction", "data"),
                xytext=(3, 0),
                textcoords="offset points",
                va="center",
                fontsize=7,
            )
    if colorbar:
        ax.figure.colorbar(
            mesh, ax=ax, label=r"coverage$_b - \tau$", pad=0.08 if annotate else 0.02
        )
    return ax
