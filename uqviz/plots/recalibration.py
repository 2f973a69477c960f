"""Recalibration figures: a validation result before and after recalibration, side by side."""

from __future__ import annotations

import numpy as np

from uqviz.engine import checks
from uqviz.plots._checks import drawable
from uqviz.plots._checks import names as _names
from uqviz.plots._svg import new_axes
from uqviz.plots._svg import set_log_x as svg_log_x
from uqviz.plots._style import (
    COLORS,
    STAT_LABELS,
    apply_style,
    axis_label,
    bin_arrays,
    get_ax,
    legend_options,
    one_dataset,
    set_log_x,
    set_title,
    style,
)

__all__ = ["before_after"]


def _kind(result, name):
    checks.result(
        name,
        result,
        "uqviz.local_calibration or uqviz.validate_average",
        variables=("estimate", "ci_lower", "ci_upper", "valid", "reference"),
    )
    if "bin" in result.dims:
        checks.result(name, result, "uqviz.local_calibration", variables=("bin_center",))
        return "local"
    if "statistic" in result.dims:
        return "average"
    raise ValueError(
        f"{name}: a result with dim 'bin' (local_calibration) or 'statistic' "
        f"(validate_average) is needed; dims {tuple(result.dims)}"
    )


def before_after(
    before_result,
    after_result,
    *,
    labels=("before", "after"),
    dataset=None,
    ax=None,
    log_x=False,
    statistics=None,
    legend=True,
    title=None,
):
    """A validation result before and after recalibration, on one Axes.

    Two :func:`uqviz.local_calibration` results (same statistic and conditioning): the
    statistic per bin with its interval against the bin centre, one colour per result,
    filled markers for valid bins, open for invalid ones; the legend counts the valid bins.
    Two :func:`uqviz.validate_average` results: each statistic minus its reference with its
    interval, one row per statistic and result.

    Parameters
    ----------
    before_result, after_result : xarray.Dataset
        Results of the same function on the data before and after recalibration (e.g. of
        :func:`uqviz.recalibrate`).
    labels : (str, str), default ("before", "after")
    dataset : str or int, optional
        The dataset to draw when the results hold several (a DataTree's).
    ax : matplotlib.axes.Axes, optional
    log_x : bool, default False
        Log scale for the bin centres (local results).
    statistics : sequence of str, optional
        The statistics drawn (validate_average results); default all with a finite reference.
    legend : bool or str, default True
        Draw the legend: True at the best place inside the axes, a location string, or
        ``"outside"``: right of the axes, over no bin (the explorers' figures).
    title : str, optional
        In the figures' one title style (``uqviz.plots._style.TITLE_STYLE``).

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> import uqviz
    >>> from uqviz.plots.recalibration import before_after
    >>> ds = uqviz.synthetic.nig(3000, nu=6, rng=0)
    >>> ds = ds.assign(uE=ds["uE"] * (0.5 + ds["uE"]))  # wrong in a uE-dependent way
    >>> after = uqviz.recalibrate(ds, method="bvs", n_bins=10, rng=0)
    >>> loc = [uqviz.local_calibration(d, n_bins=10, n_boot=500, rng=0) for d in (ds, after)]
    >>> ax = before_after(*loc)
    >>> [t.get_text().split(" (")[0] for t in ax.get_legend().get_texts()]
    ['reference', 'before', 'after']
    """
    kinds = (_kind(before_result, "before_result"), _kind(after_result, "after_result"))
    if kinds[0] != kinds[1]:
        raise ValueError(
            f"after_result: a {kinds[1]} result cannot be compared with "
            f"before_result, a {kinds[0]} result"
        )
    if (
        not isinstance(labels, (tuple, list))
        or len(labels) != 2
        or not all(isinstance(s, str) for s in labels)
    ):
        raise ValueError(f"labels must be two strings, got {labels!r}")
    before, _ = one_dataset(before_result, dataset, "before_result")
    after, _ = one_dataset(after_result, dataset, "after_result")
    if kinds[0] == "local" and statistics is not None:
        raise ValueError(
            "before_after: statistics selects rows of validate_average results; "
            "these are local_calibration results (one statistic each)"
        )
    for name, res in (("before_result", before), ("after_result", after)):
        drawable("before_after", res, ("estimate",), name=name)
    if kinds[0] == "local":
        ax = _local(before, after, labels, ax, log_x, legend)
    else:
        ax = _average(before, after, labels, ax, statistics, legend)
    if title is not None:
        set_title(ax, title)
    return ax


def before_after_svg(
    before_result,
    after_result,
    *,
    layout,
    labels=("before", "after"),
    log_x=False,
    xlabel=None,
    title=None,
):
    """:func:`before_after` of two local results drawn as SVG (the explorers' view).

    The same data, colours, open markers for invalid bins, legend (right of the axes) and
    title as :func:`before_after` with ``legend="outside"``, on an SVG Axes of ``layout``
    (as :func:`uqviz.plots.conditional.local_svg`).

    Returns
    -------
    uqviz.plots._svg.SvgAxes
    """
    for name, res in (("before_result", before_result), ("after_result", after_result)):
        if _kind(res, name) != "local":
            raise ValueError(f"{name}: a uqviz.local_calibration result is needed")
    _same_analysis(before_result, after_result)
    for name, res in (("before_result", before_result), ("after_result", after_result)):
        drawable("before_after_svg", res, ("bin_center", "estimate"), name=name)
    ax = new_axes(layout)
    ref = float(before_result["reference"])
    ax.hline(ref, color=COLORS["reference"], dash=True, label=f"reference ({ref:g})")
    xs = []
    for res, label, color in zip(
        (before_result, after_result), labels, (COLORS["series"][1], COLORS["series"][0])
    ):
        x, est, lo, hi, valid = bin_arrays(res)
        xs.append(x)
        ax.errorbar(x, est, lo, hi, color=color, alpha=0.8, marker=False, zorder=2)
        ax.markers(x[valid], est[valid], color=color, ms=4.0, zorder=3)
        ax.markers(x[~valid], est[~valid], color=color, ms=4.0, fill=False, zorder=3)
        ax.legend_entry(
            f"{label} ({int(valid.sum())}/{valid.size} bins valid)",
            "marker",
            color=color,
            ms=4.0,
            fill=True,
        )
    if log_x:
        svg_log_x(ax, np.concatenate(xs))
    stat = before_result.attrs.get("statistic", "")
    ax.xlabel = xlabel or axis_label(before_result.attrs.get("conditioning", "x"))
    ax.ylabel = STAT_LABELS.get(stat, stat)
    if title is not None:
        ax.title = title
    ax.legend(title=f"{100 * before_result.attrs.get('ci', 0.95):g}% CI; open: invalid")
    return ax


def _same_analysis(before, after):
    """A ValueError unless the two local results have the same statistic and conditioning."""
    for key in ("statistic", "conditioning"):
        a, b = before.attrs.get(key), after.attrs.get(key)
        if a != b:
            raise ValueError(f"after_result: {key} {b!r} differs from before_result's {a!r}")


def _local(before, after, labels, ax, log_x, legend):
    _same_analysis(before, after)
    stat = before.attrs.get("statistic", "")
    ax = get_ax(ax)
    colors = (COLORS["series"][1], COLORS["series"][0])
    xs = []
    with style():
        apply_style(ax)
        ref = float(before["reference"])
        ax.axhline(
            ref, color=COLORS["reference"], ls="--", lw=1.0, zorder=1, label=f"reference ({ref:g})"
        )
        for res, label, color in zip((before, after), labels, colors):
            x, est, lo, hi, valid = bin_arrays(res)
            xs.append(x)
            ax.errorbar(
                x,
                est,
                yerr=np.vstack([est - lo, hi - est]),
                fmt="none",
                ecolor=color,
                lw=1.0,
                alpha=0.8,
                zorder=2,
            )
            ax.plot(x[valid], est[valid], "o", ms=4, color=color, zorder=3)
            ax.plot(x[~valid], est[~valid], "o", ms=4, mfc="white", mec=color, zorder=3)
            ax.plot(
                [],
                [],
                "o",
                ms=4,
                color=color,
                label=f"{label} ({int(valid.sum())}/{valid.size} bins valid)",
            )
        if log_x:
            set_log_x(ax, np.concatenate(xs))
        ax.set_xlabel(axis_label(before.attrs.get("conditioning", "x")))
        ax.set_ylabel(STAT_LABELS.get(stat, stat))
        where = legend_options(legend, "best")
        if where:
            level = before.attrs.get("ci", 0.95)
            ax.legend(
                **where,
                title=f"{100 * level:g}% CI; open: invalid",
                framealpha=0.8,
                frameon=True,
                edgecolor="none",
            )
    return ax


def _average(before, after, labels, ax, statistics, legend):
    names = [str(s) for s in before["statistic"].values]
    if statistics is None:
        statistics = [s for s in names if np.isfinite(float(before["reference"].sel(statistic=s)))]
    else:
        statistics = _names("before_after", "statistics", statistics, names)
    missing = [
        s
        for s in statistics
        if s not in names or s not in [str(t) for t in after["statistic"].values]
    ]
    if missing:
        raise ValueError(f"statistics: {missing} not in both results")
    ax = get_ax(ax, figsize=(4.5, 0.6 * len(statistics) + 1.2))
    colors = (COLORS["series"][1], COLORS["series"][0])
    with style():
        apply_style(ax)
        for i, s in enumerate(statistics):
            for j, (res, label, color) in enumerate(zip((before, after), labels, colors)):
                r = res.sel(statistic=s)
                ref = float(r["reference"])
                est, lo, hi = (float(r[v]) - ref for v in ("estimate", "ci_lower", "ci_upper"))
                y = i + 0.2 * (j - 0.5)
                ok = bool(r["valid"])
                ax.errorbar(
                    est,
                    y,
                    xerr=[[est - lo], [hi - est]],
                    fmt="o",
                    ms=5,
                    color=color,
                    mfc=color if ok else "white",
                    mec=color,
                    label=label if i == 0 else None,
                )
        ax.axvline(0.0, color=COLORS["reference"], lw=1, ls="--")
        ax.set_yticks(range(len(statistics)))
        ax.set_yticklabels(statistics)
        ax.invert_yaxis()
        level = before.attrs.get("ci", 0.95)
        ax.set_xlabel(f"statistic - reference ({100 * level:g}% CI; open: invalid)")
        where = legend_options(legend, "best")
        if where:
            ax.legend(**where, framealpha=0.8, frameon=True, edgecolor="none")
    return ax
