"""Conditional calibration figures (Pernot (2023), Figs. 2-4, and the reliability diagram)."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import xarray as xr
from matplotlib.lines import Line2D

from uqviz.engine import checks
from uqviz.engine.deprecation import renamed_options
from uqviz.plots._checks import drawable
from uqviz.plots._svg import new_axes
from uqviz.plots._svg import set_log_x as svg_log_x
from uqviz.plots._style import accepts_targets
from uqviz.plots._style import (
    COLORS,
    STAT_LABELS,
    apply_style,
    axis_label,
    bin_arrays,
    get_ax,
    legend_options,
    set_log_x,
    set_title,
    style,
)

__all__ = ["zscores_vs", "local", "acf", "ordering", "reliability_diagram"]

#: what the plots read of a fraction_valid and an ordering_study result
FV_VARIABLES = ("estimate", "ci_lower", "ci_upper", "n_valid", "n_bins")
ORDERING_VARIABLES = tuple(
    f"{v}{s}" for v in ("fv_data", "fv", "fv_binomial") for s in ("", "_lower", "_upper")
)
_SHORT = {"ZMS": "LZMS", "ZM": "LZM", "RCE": "LRCE", "ZVar": "LZVar", "PICP": "PICP"}


def _single(result, name, made_by, variables=(), dims=(), *, draws=(), what=None):
    """`result` of ``made_by`` (:func:`uqviz.engine.checks.result`) for one dataset; a
    ValueError naming the argument `name` when it holds several datasets, or when one of the
    variables it ``draws`` is empty or all NaN (:func:`uqviz.plots._checks.drawable`)."""
    checks.result(name, result, made_by, variables=variables, dims=dims)
    if "dataset" in result.dims:
        raise ValueError(
            f"{name}: the result holds several datasets; select one with .sel(dataset=...) "
            "(.sel(target=...) for a targets tree)"
        )
    return drawable(what or name, result, draws, name=name)


def _limits(what, name, value):
    """``(low, high)``, two finite distinct numbers, else a ValueError naming ``name``."""
    try:
        low, high = (float(v) for v in value)
    except (TypeError, ValueError):
        raise ValueError(f"{what}: {name} must be two numbers (low, high), got {value!r}") from None
    if not (np.isfinite(low) and np.isfinite(high)) or low == high:
        raise ValueError(f"{what}: {name} must be two finite distinct numbers, got {value!r}")
    return low, high


def _legend_loc(legend, default):
    """None (no legend), or the location: ``legend`` True -> ``default``, str -> itself."""
    if legend is False or legend is None:
        return None
    return default if legend is True else legend


# ---------------------------------------------------------------------------
# Fig. 2: z-scores against a conditioning variable
# ---------------------------------------------------------------------------
@accepts_targets
def zscores_vs(
    running_result, *, ax=None, log_x=False, clip=5.0, xlabel=None, points=True, legend=True
):
    """Z-scores against a conditioning variable, with running mean and mean square
    (Pernot (2023), Fig. 2).

    Parameters
    ----------
    running_result : xarray.Dataset
        Output of :func:`uqviz.running_statistics` for one dataset.
    ax : matplotlib.axes.Axes, optional
    log_x : bool, default False
    clip : float or None, default 5.0
        y range [-clip, clip]; the legend counts the points beyond.
    xlabel : str, optional
    points : bool, default True
        Draw the (rasterised) cloud of z-scores.
    legend : bool or str, default True
        Draw the legend (a string gives its location).

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> import uqviz
    >>> from uqviz.plots.conditional import zscores_vs
    >>> res = uqviz.running_statistics(uqviz.synthetic.default_example(), conditioning="X")
    >>> zscores_vs(res).get_ylabel()
    'z-score $Z = E/u_E$'
    """
    res = _single(
        running_result,
        "running_result",
        "uqviz.running_statistics",
        ("x", "z", "x_window", "running_mean", "running_ms"),
        draws=("x", "z"),
        what="zscores_vs",
    )
    x, z = res["x"].values, res["z"].values
    xw = res["x_window"].values
    ax = get_ax(ax)
    with style():
        apply_style(ax)
        n_out = 0
        if clip is not None:
            n_out = int(np.sum(np.abs(z) > clip))
        if points:
            lab = "z-scores" + (f" ({n_out} beyond $\\pm${clip:g})" if n_out else "")
            ax.scatter(
                x,
                z,
                s=2,
                color=COLORS["band"],
                alpha=0.5,
                linewidths=0,
                rasterized=True,
                label=lab,
                zorder=1,
            )
        ax.axhline(0.0, color=COLORS["reference"], ls=":", lw=1.0, zorder=2)
        ax.axhline(1.0, color=COLORS["reference"], ls="--", lw=1.0, zorder=2)
        ax.plot(
            xw,
            res["running_mean"].values,
            color=COLORS["invalid"],
            lw=1.5,
            label=r"running mean of $Z$ (ref. 0)",
            zorder=3,
        )
        ax.plot(
            xw,
            res["running_ms"].values,
            color=COLORS["accent"],
            lw=1.5,
            label=r"running mean of $Z^2$ (ref. 1)",
            zorder=3,
        )
        if clip is not None:
            ax.set_ylim(-clip, clip)
        if log_x:
            set_log_x(ax, x)
        ax.set_xlim(np.min(x), np.max(x))
        ax.set_xlabel(
            xlabel or axis_label(res.attrs.get("conditioning", "x"), res.attrs.get("units", ""))
        )
        ax.set_ylabel(r"z-score $Z = E/u_E$")
        loc = _legend_loc(legend, "lower left")
        if loc:
            ax.legend(
                loc=loc,
                title=f"window: {res.attrs.get('window')} points",
                markerscale=4,
                framealpha=0.8,
                frameon=True,
                edgecolor="none",
            )
    return ax


# ---------------------------------------------------------------------------
# Fig. 3 a-f: local statistic per bin
# ---------------------------------------------------------------------------
def _fv_text(fv):
    """'$f_v$ = 0.60 [0.50, 0.70]' from a :func:`uqviz.fraction_valid` result."""
    est = float(fv["estimate"])
    lo, hi = float(fv["ci_lower"]), float(fv["ci_upper"])
    level = fv.attrs.get("ci", 0.95)
    return f"$f_v$ = {est:.2f}, {100 * level:g}% CI [{lo:.2f}, {hi:.2f}]"


@accepts_targets
def local(local_result, fv=None, *, ax=None, log_x=False, xlabel=None, ylim=None, legend=True):
    """Local statistic per bin with its interval, blue if valid, red if not (Pernot (2023), Fig. 3).

    Parameters
    ----------
    local_result : xarray.Dataset
        Output of :func:`uqviz.local_calibration` for one dataset.
    fv : xarray.Dataset, optional
        Output of :func:`uqviz.fraction_valid`, shown in the title.
    ax : matplotlib.axes.Axes, optional
    log_x : bool, default False
    xlabel : str, optional
    ylim : (float, float), optional
    legend : bool or str, default True
        Draw the legend: True at the best place inside the axes, a location string
        (``"upper right"``...), or ``"outside"``: right of the axes, over no bin (the
        explorers' figures, which keep a right margin for it).

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> import uqviz
    >>> from uqviz.plots.conditional import local
    >>> res = uqviz.local_calibration(uqviz.synthetic.default_example(), conditioning="X",
    ...                               n_bins=20, n_boot=500, rng=0)
    >>> "f_v" in local(res, fv=uqviz.fraction_valid(res)).get_title()
    True
    """
    res = _single(
        local_result,
        "local_result",
        "uqviz.local_calibration",
        ("bin_center", "estimate", "ci_lower", "ci_upper", "valid", "reference"),
        ("bin",),
        draws=("bin_center", "estimate"),
        what="local",
    )
    if fv is not None:
        fv = _single(fv, "fv", "uqviz.fraction_valid", FV_VARIABLES)
    if ylim is not None:
        ylim = _limits("local", "ylim", ylim)
    x, est, lo, hi, valid = bin_arrays(res)
    ref = float(res["reference"])
    stat = res.attrs.get("statistic", "")
    ax = get_ax(ax)
    with style():
        apply_style(ax)
        ax.axhline(
            ref, color=COLORS["reference"], ls="--", lw=1.0, zorder=1, label=f"reference ({ref:g})"
        )
        for mask, key, name in ((valid, "valid", "valid"), (~valid, "invalid", "invalid")):
            if not mask.any():
                continue
            yerr = np.vstack([est[mask] - lo[mask], hi[mask] - est[mask]])
            ax.errorbar(
                x[mask],
                est[mask],
                yerr=yerr,
                fmt="o",
                ms=3,
                lw=1.0,
                color=COLORS[key],
                ecolor=COLORS[key],
                zorder=3,
                label=f"{name} ({int(mask.sum())} bins)",
            )
        if log_x:
            set_log_x(ax, x)
        if ylim is not None:
            ax.set_ylim(*ylim)
        ax.set_xlabel(xlabel or axis_label(res.attrs.get("conditioning", "x")))
        level = res.attrs.get("ci", 0.95)
        ax.set_ylabel(STAT_LABELS.get(stat, stat))
        if fv is not None:
            set_title(ax, _fv_text(fv))
        where = legend_options(legend, "best")
        if where:
            ax.legend(
                **where,
                title=f"{100 * level:g}% CI ({res.attrs.get('method', '')})",
                framealpha=0.8,
                frameon=True,
                edgecolor="none",
            )
    return ax


@accepts_targets
def local_svg(local_result, fv=None, *, layout, log_x=False, xlabel=None):
    """:func:`local` drawn as SVG (the explorers' view; ``uqviz.plots._svg``).

    The same data, colours, labels, legend (right of the axes) and title as :func:`local`
    with ``legend="outside"``, on an SVG Axes of ``layout`` (``figsize``, ``margins``,
    ``label_offsets`` in inches, ``dpi``); its ``.svg()`` is the markup.

    Returns
    -------
    uqviz.plots._svg.SvgAxes

    Examples
    --------
    >>> import uqviz
    >>> res = uqviz.local_calibration(uqviz.synthetic.default_example(), n_bins=10,
    ...                               n_boot=200, rng=0)
    >>> layout = dict(figsize=(8.4, 4.4), margins=dict(left=0.8, bottom=0.55, right=2.2,
    ...               top=0.32), label_offsets=dict(x=0.27, y=0.06), dpi=100)
    >>> ax = local_svg(res, layout=layout)
    >>> [label.split(" (")[0] for _, _, label in ax.legend_items], ax.svg()[:4]
    (['reference', 'valid'], '<svg')
    """
    res = _single(
        local_result,
        "local_result",
        "uqviz.local_calibration",
        ("bin_center", "estimate", "ci_lower", "ci_upper", "valid", "reference"),
        ("bin",),
        draws=("bin_center", "estimate"),
        what="local_svg",
    )
    ax = new_axes(layout)
    x, est, lo, hi, valid = bin_arrays(res)
    ref = float(res["reference"])
    ax.hline(ref, color=COLORS["reference"], dash=True, label=f"reference ({ref:g})")
    for mask, key in ((valid, "valid"), (~valid, "invalid")):
        if mask.any():
            ax.errorbar(
                x[mask],
                est[mask],
                lo[mask],
                hi[mask],
                color=COLORS[key],
                label=f"{key} ({int(mask.sum())} bins)",
            )
    if log_x:
        svg_log_x(ax, x)
    ax.xlabel = xlabel or axis_label(res.attrs.get("conditioning", "x"))
    stat = res.attrs.get("statistic", "")
    ax.ylabel = STAT_LABELS.get(stat, stat)
    if fv is not None:
        ax.title = _fv_text(_single(fv, "fv", "uqviz.fraction_valid", FV_VARIABLES))
    level = res.attrs.get("ci", 0.95)
    ax.legend(title=f"{100 * level:g}% CI ({res.attrs.get('method', '')})")
    return ax


# ---------------------------------------------------------------------------
# Fig. 3 g-i: autocorrelation of the per-bin series
# ---------------------------------------------------------------------------
@accepts_targets
def acf(acf_result, *, ax=None, label=None):
    """Autocorrelation of the per-bin statistic, with the white-noise band (Pernot (2023), Fig. 3).

    Parameters
    ----------
    acf_result : xarray.Dataset
        Output of :func:`uqviz.acf`.
    ax : matplotlib.axes.Axes, optional
    label : str, optional
        Title.

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> import xarray as xr
    >>> from uqviz.plots.conditional import acf
    >>> res = xr.Dataset({"acf": ("lag", [1.0, 0.5, 0.2]), "band": 0.3}, coords={"lag": [0, 1, 2]})
    >>> len(acf(res).collections) >= 1
    True
    """
    res = _single(
        acf_result, "acf_result", "uqviz.acf", ("acf", "band"), ("lag",), draws=("acf",), what="acf"
    )
    lag = res["lag"].values
    r = res["acf"].values
    band = float(res["band"])
    ax = get_ax(ax)
    with style():
        apply_style(ax)
        ax.axhspan(
            -band, band, color=COLORS["band"], alpha=0.4, lw=0, label=r"$\pm 1.96/\sqrt{n_{bins}}$"
        )
        ax.axhline(0.0, color=COLORS["reference"], lw=0.8)
        ax.vlines(lag, 0.0, r, color=COLORS["valid"], lw=1.5)
        ax.plot(lag, r, "o", ms=3, color=COLORS["valid"], label="ACF")
        ax.set_xlabel("Lag (bins)")
        ax.set_ylabel("Autocorrelation")
        ax.set_xlim(-0.5, lag.max() + 0.5)
        ax.set_ylim(min(-1.0, float(np.min(r)) - 0.05) if np.min(r) < -band else -0.5, 1.05)
        if label:
            ax.set_title(label, fontsize=9)
        ax.legend(loc="upper right", framealpha=0.8, frameon=True, edgecolor="none")
    return ax


# ---------------------------------------------------------------------------
# Fig. 4: ordering study
# ---------------------------------------------------------------------------
@accepts_targets
def ordering(ordering_result, *, ax=None, stratified=None, labels=None, legend=True):
    """Fraction of valid bins: data order, over orderings, with binomial noise
    (Pernot (2023), Fig. 4).

    Parameters
    ----------
    ordering_result : xarray.Dataset or mapping of label -> Dataset
        Output(s) of :func:`uqviz.ordering_study`, one group of markers each.
    ax : matplotlib.axes.Axes, optional
    stratified : xarray.Dataset or mapping of label -> Dataset, optional
        :func:`uqviz.fraction_valid` results of the stratified binning.
    labels : sequence of str, optional
    legend : bool or str, default True

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> import xarray as xr
    >>> from uqviz.plots.conditional import ordering
    >>> res = xr.Dataset(dict(fv_data=0.6, fv_data_lower=0.5, fv_data_upper=0.7,
    ...     fv=0.61, fv_lower=0.56, fv_upper=0.66, fv_binomial=0.61,
    ...     fv_binomial_lower=0.51, fv_binomial_upper=0.7),
    ...     attrs={"statistic": "ZMS", "ci": 0.95})
    >>> len(ordering(res).lines) > 0
    True
    """
    if isinstance(labels, str):
        labels = [labels]
    if isinstance(ordering_result, xr.Dataset):
        groups = {
            labels[0]
            if labels
            else _SHORT.get(ordering_result.attrs.get("statistic"), "f_v"): ordering_result
        }
    elif isinstance(ordering_result, Mapping):
        groups = dict(ordering_result)
    elif isinstance(ordering_result, (list, tuple)):
        results = list(ordering_result)
        labels = labels or [
            _SHORT.get(r.attrs.get("statistic"), f"#{i}") for i, r in enumerate(results)
        ]
        groups = dict(zip(labels, results))
    else:
        raise TypeError(
            f"ordering_result must be the result of uqviz.ordering_study (an "
            f"xarray.Dataset), a mapping or a list of them, got "
            f"{type(ordering_result).__name__}"
        )
    if stratified is not None and isinstance(stratified, xr.Dataset):
        stratified = {next(iter(groups)): stratified}
    elif stratified is not None and not isinstance(stratified, Mapping):
        raise TypeError(
            f"stratified must be the result of uqviz.fraction_valid (an "
            f"xarray.Dataset) or a mapping of label -> result, got "
            f"{type(stratified).__name__}"
        )
    groups = {
        g: _single(
            r,
            "ordering_result",
            "uqviz.ordering_study",
            ORDERING_VARIABLES,
            draws=("fv_data", "fv"),
            what="ordering",
        )
        for g, r in groups.items()
    }
    for g, fv in (stratified or {}).items():
        _single(fv, "stratified", "uqviz.fraction_valid", FV_VARIABLES[:3])
    series = [
        (
            "data",
            "o",
            COLORS["valid"],
            "data order (Wilson CI)",
            ("fv_data", "fv_data_lower", "fv_data_upper"),
        ),
        (
            "orderings",
            "s",
            COLORS["invalid"],
            "random orderings (mean, 95% range)",
            ("fv", "fv_lower", "fv_upper"),
        ),
        (
            "binomial",
            "D",
            COLORS["accent"],
            "orderings + binomial noise",
            ("fv_binomial", "fv_binomial_lower", "fv_binomial_upper"),
        ),
    ]
    n_series = len(series) + (1 if stratified else 0)
    offsets = (np.arange(n_series) - (n_series - 1) / 2.0) * 0.15
    ax = get_ax(ax)
    target = None
    with style():
        apply_style(ax)
        handles = {}
        for gi, (glabel, res) in enumerate(groups.items()):
            target = res.attrs.get("ci", 0.95) if target is None else target
            for si, (key, marker, color, text, names) in enumerate(series):
                est, lo, hi = (float(res[n]) for n in names)
                h = ax.errorbar(
                    gi + offsets[si],
                    est,
                    yerr=[[est - lo], [hi - est]],
                    fmt=marker,
                    ms=5,
                    color=color,
                    lw=1.5,
                    capsize=0,
                )
                handles[text] = h
            if stratified and glabel in stratified:
                fv = stratified[glabel]
                est, lo, hi = (float(fv[n]) for n in ("estimate", "ci_lower", "ci_upper"))
                h = ax.errorbar(
                    gi + offsets[-1],
                    est,
                    yerr=[[est - lo], [hi - est]],
                    fmt="^",
                    ms=5,
                    color=COLORS["series"][2],
                    lw=1.5,
                    capsize=0,
                )
                handles["stratified binning (Wilson CI)"] = h
        ax.axhline(target, color=COLORS["reference"], ls="--", lw=1.0)
        handles[f"target ({target:g})"] = Line2D([], [], color=COLORS["reference"], ls="--")
        ax.set_xticks(np.arange(len(groups)))
        ax.set_xticklabels(list(groups))
        ax.set_xlim(-0.6, len(groups) - 0.4)
        ax.set_ylabel(r"Fraction of valid bins $f_v$")
        ax.grid(False, axis="x")
        lows = [
            float(r[n])
            for r in groups.values()
            for n in ("fv_data_lower", "fv_lower", "fv_binomial_lower")
        ]
        lows += [float(fv["ci_lower"]) for fv in (stratified or {}).values()]
        ax.set_ylim(max(0.0, min(lows) - 0.05), 1.0)
        loc = _legend_loc(legend, "best")
        if loc:
            ax.legend(
                list(handles.values()),
                list(handles),
                loc=loc,
                fontsize=7,
                framealpha=0.8,
                frameon=True,
                edgecolor="none",
            )
    return ax


# ---------------------------------------------------------------------------
# reliability diagram
# ---------------------------------------------------------------------------
@renamed_options(log="log_x")
def reliability_diagram(rel_result, *, ax=None, log_x=False, legend=True):
    """RMSE against RMV per bin, with the identity line (reliability diagram).

    Parameters
    ----------
    rel_result : xarray.Dataset
        Output of :func:`uqviz.reliability` for one dataset.
    ax : matplotlib.axes.Axes, optional
    log_x : bool, default False
        Log-scaled x axis, and y axis, which shares its scale (RMSE against RMV);
        ``log`` until uqviz 0.2, still accepted with a FutureWarning until 0.3.0.
    legend : bool or str, default True

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> import uqviz
    >>> from uqviz.plots.conditional import reliability_diagram
    >>> rel = uqviz.reliability(uqviz.synthetic.nig(2000, nu=10, rng=0), n_bins=8, n_boot=500,
    ...                         rng=0)
    >>> reliability_diagram(rel).get_xlabel()
    'RMV'
    """
    res = _single(
        rel_result,
        "rel_result",
        "uqviz.reliability",
        ("rmv", "rmse", "rmse_lower", "rmse_upper", "valid"),
        draws=("rmv", "rmse"),
        what="reliability_diagram",
    )
    rmv, rmse = res["rmv"].values, res["rmse"].values
    lo, hi = res["rmse_lower"].values, res["rmse_upper"].values
    valid = res["valid"].values.astype(bool)
    units = res.attrs.get("units", "")
    ax = get_ax(ax)
    with style():
        apply_style(ax)
        both = np.concatenate([rmv, lo[np.isfinite(lo)], hi[np.isfinite(hi)]])
        span = np.array([both.min(), both.max()])
        span = (
            span * np.array([0.9, 1.1]) if log_x else span + np.array([-1, 1]) * 0.05 * np.ptp(span)
        )
        ax.plot(span, span, color=COLORS["reference"], ls="--", lw=1.0, label="RMSE = RMV")
        for mask, key in ((valid, "valid"), (~valid, "invalid")):
            if not mask.any():
                continue
            yerr = np.vstack([rmse[mask] - lo[mask], hi[mask] - rmse[mask]])
            ax.errorbar(
                rmv[mask],
                rmse[mask],
                yerr=yerr,
                fmt="o",
                ms=3,
                lw=1.0,
                color=COLORS[key],
                label=f"RMV {'inside' if key == 'valid' else 'outside'}"
                f" the RMSE CI ({int(mask.sum())} bins)",
            )
        if log_x:
            ax.set_xscale("log")
            ax.set_yscale("log")
        ax.set_xlim(*span)
        ax.set_ylim(*span)
        ax.set_aspect("equal", adjustable="box")
        unit = f" [{units}]" if units else ""
        ax.set_xlabel(f"RMV{unit}")
        ax.set_ylabel(f"RMSE{unit}")
        loc = _legend_loc(legend, "upper left")
        if loc:
            ax.legend(loc=loc, framealpha=0.8, frameon=True, edgecolor="none")
    return ax
