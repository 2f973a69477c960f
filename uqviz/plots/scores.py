"""Interval-based validation figures: calibration curve, PICP vs level.

Local coverage per bin is :func:`uqviz.plots.conditional.local` of
``uqviz.local_interval_coverage(...)``.
"""

from __future__ import annotations

import numpy as np

from uqviz.engine import checks
from uqviz.plots._checks import drawable
from uqviz.plots._style import accepts_targets
from uqviz.plots._style import COLORS, apply_style, get_ax, style

__all__ = ["calibration_curve", "coverage"]


def _curves(result, name, dataset, made_by, variables):
    """``[(label, Dataset)]``: one per dataset of ``result`` (or the one selected)."""
    checks.result(name, result, made_by, variables=variables, dims=("level",))
    what = {"curve_result": "calibration_curve", "coverage_result": "coverage"}.get(name, name)
    if "dataset" not in result.dims:
        if dataset is not None:
            raise ValueError(f"{name}: this result has no 'dataset' dimension")
        return [(None, drawable(what, result, variables[:1], name=name))]
    names = [str(n) for n in result["dataset"].values]
    if dataset is not None:
        if dataset not in names:
            raise ValueError(f"{name}: unknown dataset {dataset!r}; one of {names}")
        names = [dataset]
    out = [(n, result.sel(dataset=n)) for n in names]
    drawable(what, result.sel(dataset=names), variables[:1], name=name)
    return out


@accepts_targets
def calibration_curve(curve_result, *, ax=None, dataset=None, band=True, area=True, legend=True):
    """Observed vs expected proportions, the miscalibration area shaded (Chung et al. 2021).

    Parameters
    ----------
    curve_result : xarray.Dataset
        Output of :func:`uqviz.calibration_curve` (several datasets are overlaid).
    ax : matplotlib.axes.Axes, optional
    dataset : str, optional
        Draw only this dataset of a result with a ``dataset`` dim.
    band : bool, default True
        Shade the binomial (Wilson) interval of the observed proportions.
    area : bool, default True
        Shade the area between the curve and the diagonal (one dataset only).
    legend : bool, default True
        Legend with the miscalibration area, MACE and RMSCE.

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> import uqviz
    >>> from uqviz.plots.scores import calibration_curve
    >>> curve = uqviz.calibration_curve(uqviz.synthetic.default_example())
    >>> calibration_curve(curve).get_xlabel()
    'Expected proportion in interval'
    """
    curves = _curves(
        curve_result,
        "curve_result",
        dataset,
        "uqviz.calibration_curve",
        ("observed", "observed_lower", "observed_upper"),
    )
    kind = curve_result.attrs.get("kind", "interval")
    ax = get_ax(ax, figsize=(4.0, 4.0))
    with style():
        apply_style(ax)
        ax.plot([0, 1], [0, 1], color=COLORS["reference"], ls="--", lw=1.0, label="ideal")
        for i, (name, res) in enumerate(curves):
            x = res["level"].values
            y = res["observed"].values
            color = COLORS["series"][i % len(COLORS["series"])]
            text = (
                f"area {float(res['miscalibration_area']):.3f}, "
                f"MACE {float(res['mace']):.3f}, RMSCE {float(res['rmsce']):.3f}"
            )
            ax.plot(x, y, color=color, lw=1.5, label=f"{name}: {text}" if name else text)
            if band and "observed_lower" in res:
                ax.fill_between(
                    x,
                    res["observed_lower"].values,
                    res["observed_upper"].values,
                    color=color,
                    alpha=0.2,
                    lw=0,
                )
            if area and len(curves) == 1:
                ax.fill_between(
                    x, x, y, color=COLORS["accent"], alpha=0.3, lw=0, label="miscalibration area"
                )
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
        ax.set_aspect("equal")
        what = "in interval" if kind == "interval" else "below quantile"
        ax.set_xlabel(f"Expected proportion {what}")
        ax.set_ylabel(f"Observed proportion {what}")
        if legend:
            ax.legend(loc="upper left", fontsize=7, framealpha=0.8, frameon=True, edgecolor="none")
    return ax


@accepts_targets
def coverage(coverage_result, *, ax=None, dataset=None, legend=True):
    """PICP against the nominal level, with binomial intervals, blue if valid, red if not.

    Parameters
    ----------
    coverage_result : xarray.Dataset
        Output of :func:`uqviz.interval_coverage` (several datasets are drawn side by side).
    ax : matplotlib.axes.Axes, optional
    dataset : str, optional
        Draw only this dataset of a result with a ``dataset`` dim.
    legend : bool, default True

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> import uqviz
    >>> from uqviz.plots.scores import coverage
    >>> cov = uqviz.interval_coverage(uqviz.synthetic.default_example())
    >>> coverage(cov).get_ylabel()
    'PICP'
    """
    curves = _curves(
        coverage_result,
        "coverage_result",
        dataset,
        "uqviz.interval_coverage",
        ("picp", "picp_lower", "picp_upper", "valid"),
    )
    ax = get_ax(ax)
    with style():
        apply_style(ax)
        levels = np.asarray(coverage_result["level"].values, dtype=float)
        span = np.array([levels.min(), levels.max()])
        pad = 0.05 * max(span[1] - span[0], 0.1)
        line = np.array([span[0] - pad, span[1] + pad])
        ax.plot(line, line, color=COLORS["reference"], ls="--", lw=1.0, label="PICP = level")
        n = len(curves)
        shift = 0.25 * pad * (np.arange(n) - (n - 1) / 2.0) if n > 1 else np.zeros(1)
        seen = set()
        for i, (name, res) in enumerate(curves):
            x = res["level"].values + shift[i]
            y = res["picp"].values
            lo, hi = res["picp_lower"].values, res["picp_upper"].values
            valid = res["valid"].values.astype(bool)
            for mask, key in ((valid, "valid"), (~valid, "invalid")):
                if not mask.any():
                    continue
                label = None
                if key not in seen:
                    label = key
                    seen.add(key)
                ax.errorbar(
                    x[mask],
                    y[mask],
                    yerr=np.vstack([y[mask] - lo[mask], hi[mask] - y[mask]]),
                    fmt="o" if n == 1 else "os^vD"[i % 5],
                    ms=4,
                    lw=1.0,
                    color=COLORS[key],
                    label=label,
                )
            if name is not None:
                ax.plot([], [], "os^vD"[i % 5], color="grey", label=name)
        ax.set_xlabel("Nominal level $p$")
        ax.set_ylabel("PICP")
        gen = coverage_result.attrs.get("generative", "normal")
        ci = coverage_result.attrs.get("ci", 0.95)
        if legend:
            ax.legend(
                loc="upper left",
                title=f"D = {gen}; {100 * ci:g}% CI (Wilson)",
                fontsize=7,
                title_fontsize=7,
                framealpha=0.8,
                frameon=True,
                edgecolor="none",
            )
    return ax
