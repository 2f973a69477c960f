"""Shared figure conventions: publication style, axes creation, colours."""

from __future__ import annotations

import functools
from contextlib import contextmanager

import matplotlib as mpl
import matplotlib.ticker as mticker
from matplotlib.axes import Axes
import numpy as np
import matplotlib.pyplot as plt
import xarray as xr

#: Colours: valid / invalid intervals, reference lines, bands, series.
COLORS = {
    "valid": "#1f77b4",
    "invalid": "#d62728",
    "reference": "#333333",
    "band": "#9ecae1",
    "unsafe": "#fdd0a2",
    "accent": "#ff7f0e",
    "series": [
        "#1f77b4",
        "#ff7f0e",
        "#2ca02c",
        "#d62728",
        "#9467bd",
        "#8c564b",
        "#e377c2",
        "#7f7f7f",
        "#bcbd22",
        "#17becf",
    ],
}

STYLE = {
    "figure.dpi": 110,
    "savefig.dpi": 300,
    "font.size": 10,
    "axes.titlesize": 10,
    "axes.labelsize": 10,
    "legend.fontsize": 8,
    "legend.frameon": False,
    "xtick.direction": "in",
    "ytick.direction": "in",
    "xtick.top": True,
    "ytick.right": True,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "lines.linewidth": 1.2,
    "errorbar.capsize": 0,
}


@contextmanager
def style():
    """Context manager applying uqviz's publication style."""
    with mpl.rc_context(STYLE):
        yield


def get_ax(ax=None, figsize=(4.5, 3.5)):
    """Return ``ax`` or a new Axes in a new figure of ``figsize`` inches.

    Examples
    --------
    >>> get_ax("x")
    Traceback (most recent call last):
    ...
    TypeError: ax must be a matplotlib Axes or None, got str ('x')
    """
    if ax is not None:
        return check_ax(ax)
    # settle pyplot's backend before the rc context: creating the session's
    # first figure inside rc_context would otherwise disable inline display
    plt.switch_backend(plt.get_backend())
    with style():
        _, ax = plt.subplots(figsize=figsize, layout="constrained")
    return ax


def check_ax(ax):
    """``ax`` if it is a matplotlib Axes, else a TypeError naming ``ax``."""
    if not isinstance(ax, Axes):
        raise TypeError(
            f"ax must be a matplotlib Axes or None, got {type(ax).__name__} ({ax!r:.40})"
        )
    return ax


def apply_style(ax):
    """Apply the style's tick/grid settings to an existing Axes."""
    ax.tick_params(direction="in", top=True, right=True)
    ax.grid(True, alpha=0.3)
    return ax


def as_dataset_dim(obj):
    """A result of a targets tree (dim ``target``) with that dim named ``dataset``; else ``obj``.

    The plots draw one set per child of a tree, whether the children are datasets or the
    targets of one dataset (docs/conventions.md, "Several targets and groups"); `dataset=`
    then selects a target.

    Examples
    --------
    >>> import xarray as xr
    >>> r = xr.Dataset({"v": ("target", [1.0, 2.0])}, coords={"target": ["fx", "fy"]})
    >>> as_dataset_dim(r)["dataset"].values.tolist()
    ['fx', 'fy']
    """
    if (
        isinstance(obj, (xr.Dataset, xr.DataArray))
        and "target" in obj.dims
        and "dataset" not in obj.dims
    ):
        return obj.rename({"target": "dataset"})
    return obj


def set_dim(result) -> str | None:
    """The dim of the sets of a result: ``"dataset"``, ``"target"`` (a targets tree) or None.

    Examples
    --------
    >>> import xarray as xr
    >>> set_dim(xr.Dataset({"v": ("target", [1.0])})), set_dim(xr.Dataset({"v": 1.0}))
    ('target', None)
    """
    return next((d for d in ("dataset", "target") if d in result.dims), None)


def accepts_targets(func):
    """Decorate a plot: its xarray arguments with a ``target`` dim are read as ``dataset``."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        args = tuple(as_dataset_dim(a) for a in args)
        kwargs = {k: as_dataset_dim(v) for k, v in kwargs.items()}
        return func(*args, **kwargs)

    return wrapper


def one_dataset(result, dataset, what):
    """Select one dataset of a result with a ``dataset`` dim (or check there is none)."""
    if "dataset" not in result.dims:
        if dataset is not None:
            raise ValueError(f"{what}: this result has no 'dataset' dimension")
        return result, result.attrs.get("name")
    names = [str(n) for n in result["dataset"].values]
    if dataset is None:
        if len(names) > 1:
            raise ValueError(
                f"{what}: the result holds {len(names)} datasets; choose one "
                f"with dataset= (one of {names})"
            )
        dataset = names[0]
    if isinstance(dataset, (int, np.integer)):
        dataset = names[dataset]
    if dataset not in names:
        raise ValueError(f"{what}: unknown dataset {dataset!r}; one of {names}")
    return result.sel(dataset=dataset), dataset


class PlainLogFormatter(mticker.LogFormatter):
    """Log-axis labels as plain numbers (0.3, 0.4, 0.6, 1).

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> ax = Figure().add_subplot()
    >>> set_log_x(ax, [0.3, 0.99])
    >>> ax.figure.canvas.draw()
    >>> ax.xaxis.get_minor_formatter()(0.4), ax.xaxis.get_major_formatter()(1.0)
    ('0.4', '1')
    """

    def __call__(self, x, pos=None):
        return f"{x:g}" if super().__call__(x, pos) else ""


def plain_log_labels(x):
    """True when a log axis of ``x`` gets plain-number labels (x in [1e-3, 1e4]); a
    ValueError if any x <= 0 (the rule of every log x axis, matplotlib's and SVG's)."""
    x = np.asarray(x, dtype=float)
    if np.nanmin(x) <= 0:
        raise ValueError(f"log_x: the x values must be positive ({int(np.sum(x <= 0))} are not)")
    return bool(np.nanmin(x) >= 1e-3 and np.nanmax(x) <= 1e4)


def set_log_x(ax, x):
    """Log x scale; plain-number labels when x lies in [1e-3, 1e4]; ValueError if any x <= 0."""
    plain = plain_log_labels(x)
    ax.set_xscale("log")
    if plain:
        ax.xaxis.set_major_formatter(PlainLogFormatter(labelOnlyBase=False))
        ax.xaxis.set_minor_formatter(PlainLogFormatter(labelOnlyBase=False))


#: colour of each average-calibration statistic in every figure
STATISTIC_COLORS = {
    "ZMS": "#1f77b4",
    "RCE": "#d62728",
    "RCE2": "#9467bd",
    "ZM": "#2ca02c",
    "ZVar": "#17becf",
    "NLL": "#8c564b",
}
#: TeX of the variables of the tailedness screen
VAR_TEX = {"uE2": r"u_E^2", "E2": r"E^2", "Z2": r"Z^2"}
#: shading of the zones beyond the safety limits of Pernot (2024b), Table II
UNSAFE_ALPHA = 0.45
ZONE_U = "#fee6ce"  # unsafe for RCE only (uE^2)
ZONE_E = "#fdae6b"  # unsafe for RCE and ZMS (E^2, Z^2)
#: y-axis labels of the local statistics
STAT_LABELS = {
    "ZMS": r"LZMS, $\langle Z^2 \rangle$ per bin",
    "ZM": r"LZM, $\langle Z \rangle$ per bin",
    "RCE": "LRCE, RCE per bin",
    "ZVar": r"LZVar, Var$(Z)$ per bin",
    "PICP": "PICP per bin",
}


def bin_arrays(res):
    """``(x, estimate, lower, upper, valid)`` per bin of a :func:`uqviz.local_calibration`
    result for one dataset (``valid`` as booleans)."""
    return (
        res["bin_center"].values,
        res["estimate"].values,
        res["ci_lower"].values,
        res["ci_upper"].values,
        res["valid"].values.astype(bool),
    )


def statistic_color(name, i=0):
    """The colour of a statistic (the ``i``-th series colour for one without its own).

    Examples
    --------
    >>> statistic_color("ZMS"), statistic_color("other", 1)
    ('#1f77b4', '#ff7f0e')
    """
    return STATISTIC_COLORS.get(str(name), COLORS["series"][i % len(COLORS["series"])])


def axis_label(name, units=""):
    """Axis label of a conditioning variable.

    Examples
    --------
    >>> axis_label("uE", "eV"), axis_label("hetero_fraction")
    ('Uncertainty $u_E$ [eV]', 'hetero fraction')
    """
    if name == "uE":
        text = r"Uncertainty $u_E$"
    elif name == "Z":
        text = r"$Z$"
    else:
        text = str(name).replace("_", " ")
    return f"{text} [{units}]" if units else text


#: the one style of the figures' titles (the explorers' views share it); ``y`` fixed, so that
#: matplotlib does not measure the axes at each draw to place the title
TITLE_STYLE = {"fontsize": 9, "fontweight": "normal", "loc": "center", "y": 1.0, "pad": 4.0}


def set_title(ax, text):
    """Set the title of ``ax`` in the figures' one title style (:data:`TITLE_STYLE`).

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> t = set_title(Figure().add_subplot(), "$f_v$ = 0.80")
    >>> t.get_fontsize(), t.get_text()
    (9.0, '$f_v$ = 0.80')
    """
    return ax.set_title(text, **TITLE_STYLE)


def legend_options(legend, default):
    """``ax.legend`` keywords for a ``legend`` option, or None (no legend).

    ``True`` gives ``default``; a location string gives it; ``"outside"`` puts the legend
    to the right of the axes, its top at the top of the axes (outside the data: it hides no
    point; the figure needs a right margin for it, as the explorers' figures have).

    Examples
    --------
    >>> legend_options("outside", "best")["bbox_to_anchor"]
    (1.02, 1.0)
    >>> legend_options(True, "lower left"), legend_options(False, "best")
    ({'loc': 'lower left'}, None)
    """
    if legend is False or legend is None:
        return None
    loc = default if legend is True else legend
    if loc == "outside":
        return {"loc": "upper left", "bbox_to_anchor": (1.02, 1.0), "borderaxespad": 0.0}
    return {"loc": loc}
