"""Figures of the Monte Carlo studies (Pernot (2024b), Figs. 4, 5 and 11)."""

from __future__ import annotations

import matplotlib as mpl
import numpy as np
from matplotlib import ticker

from uqviz.average.validation import TAILEDNESS_THRESHOLDS
from uqviz.engine import checks
from uqviz.engine.deprecation import renamed_options
from uqviz.plots._checks import choice, drawable
from uqviz.plots._checks import names as _names
from uqviz.plots._style import (
    COLORS,
    UNSAFE_ALPHA,
    VAR_TEX,
    ZONE_E,
    ZONE_U,
    apply_style,
    get_ax,
    statistic_color,
)

__all__ = ["validation_probability", "bias_vs_skewness"]


# --------------------------------------------------------------------------
# Pernot (2024b), Fig. 5: validation probability
# --------------------------------------------------------------------------
def validation_probability(
    vp_result, *, ax=None, skewness=None, statistics=None, legend=True, title=None
):
    """Share of calibrated datasets validated, against nu (Pernot (2024b), Fig. 5).

    The top axis gives the mean beta_GM of the variable the scenario makes heavy-tailed.

    Parameters
    ----------
    vp_result : xarray.Dataset
        Output of :func:`uqviz.validation_probability`.
    ax : matplotlib.axes.Axes, optional
    skewness : {"uE2", "E2", "Z2"}, optional
        Variable of the top axis (default uE2 for NIG, E2 for TIG).
    statistics : sequence of str, optional
    legend, title
        Legend switch; title (default the scenario and sizes).

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> from uqviz.experiments import validation_probability as vp
    >>> from uqviz.plots.experiments import validation_probability
    >>> res = vp(scenario="NIG", nu=[2.0, 6.0], n_datasets=10, size=200, n_boot=200, rng=1,
    ...          progress=False)
    >>> validation_probability(res).get_xlabel()
    '$\\\\nu_{IG}$'
    """
    checks.result(
        "vp_result",
        vp_result,
        "uqviz.experiments.validation_probability",
        variables=(
            "validation_probability",
            "validation_probability_lower",
            "validation_probability_upper",
            "beta_gm",
        ),
        dims=("nu", "statistic"),
    )
    scenario = str(vp_result.attrs.get("scenario", "NIG"))
    if skewness is None:
        skewness = "uE2" if scenario == "NIG" else "E2"
    stats_ = _names(
        "validation_probability", "statistics", statistics, vp_result["statistic"].values
    )
    choice("validation_probability", "skewness", skewness, vp_result["variable"].values)
    drawable(
        "validation_probability",
        vp_result.sel(statistic=stats_),
        ("validation_probability",),
        name="vp_result",
    )
    nu = vp_result["nu"].values
    level = vp_result.attrs.get("ci", 0.95)

    ax = get_ax(ax)
    apply_style(ax)
    dodge = np.linspace(-1, 1, len(stats_)) * 0.012 if len(stats_) > 1 else [0.0]
    markers = ["o", "^", "s", "D", "v"]
    for i, s in enumerate(stats_):
        r = vp_result.sel(statistic=s)
        p = r["validation_probability"].values
        lo = r["validation_probability_lower"].values
        hi = r["validation_probability_upper"].values
        xs = nu * 10 ** dodge[i]
        ax.errorbar(
            xs,
            p,
            yerr=np.clip([p - lo, hi - p], 0, None),
            fmt="-" + markers[i % len(markers)],
            ms=4,
            lw=1.0,
            color=statistic_color(s, i),
            label=s,
            zorder=3,
        )
    ax.axhline(0.95, color=COLORS["reference"], ls="--", lw=1.0, zorder=2, label="target 0.95")
    ax.set_xscale("log")
    lo_x, hi_x = nu.min() / 1.12, nu.max() * 1.12
    ax.set_xlim(lo_x, hi_x)
    ax.xaxis.set_major_locator(ticker.FixedLocator(nu))
    ax.xaxis.set_major_formatter(ticker.FixedFormatter([f"{v:g}" for v in nu]))
    ax.xaxis.set_minor_locator(ticker.NullLocator())
    ymin = float(np.nanmin(vp_result["validation_probability_lower"].sel(statistic=stats_).values))
    ax.set_ylim(min(0.6, np.floor((ymin - 0.02) * 20) / 20), 1.01)
    ax.tick_params(axis="x", which="both", top=False)
    sec = ax.secondary_xaxis("top")
    beta = vp_result["beta_gm"].sel(variable=skewness).values
    sec.xaxis.set_major_locator(ticker.FixedLocator(nu))
    sec.xaxis.set_major_formatter(ticker.FixedFormatter([f"{b:.2f}" for b in beta]))
    sec.xaxis.set_minor_locator(ticker.NullLocator())
    # vertical labels when the ticks are closer than about 4 characters
    gaps = np.diff(np.log(np.sort(nu))) / np.log(hi_x / lo_x) if nu.size > 1 else np.array([1.0])
    width_in = ax.get_position().width * ax.figure.get_figwidth()
    sec.tick_params(
        axis="x", direction="in", labelsize=7, rotation=90 if gaps.min() * width_in < 0.32 else 0
    )
    sec.set_xlabel(f"$\\langle\\beta_{{GM}}({VAR_TEX[skewness]})\\rangle$", fontsize=9)
    ax.set_xlabel(r"$\nu_{IG}$" if scenario == "NIG" else r"$\nu_D$")
    ax.set_ylabel(r"validation probability $p_{val}$")
    if title is None:
        a = vp_result.attrs
        title = (
            f"{scenario}: N = {int(vp_result['n_datasets'].max())}, M = {a.get('size', '?')}, "
            f"B = {a.get('n_boot', '?')}"
        )
    ax.set_title(title, fontsize=9)
    if legend:
        ax.legend(
            loc="best",
            fontsize=7,
            title=f"bars: Wilson {level:.0%}",
            title_fontsize=7,
            frameon=True,
            framealpha=0.9,
            edgecolor="none",
        )
    return ax


# --------------------------------------------------------------------------
# Pernot (2024b), Figs. 4 and 11: mean statistic against the skewness
# --------------------------------------------------------------------------
@renamed_options(n_sigma="coverage_factor")
def bias_vs_skewness(
    bias_result,
    *,
    statistic="RCE",
    ax=None,
    skewness=None,
    bars="se",
    coverage_factor=2.0,
    color_by="nu_ig",
    legend=True,
    title=None,
):
    """Mean deviation of a statistic on calibrated datasets against beta_GM
    (Pernot (2024b), Fig. 4).

    One point per generative model ``(nu_IG, nu_D)`` with ``coverage_factor`` x ``bars`` error
    bars; for ZMS, ``1 - ZMS`` is drawn.

    Parameters
    ----------
    bias_result : xarray.Dataset
        Output of :func:`uqviz.statistic_bias`.
    statistic : str, default "RCE"
    ax : matplotlib.axes.Axes, optional
    skewness : {"uE2", "E2", "Z2"}, optional
        x variable; default Z2 for ZMS, ZM, ZVar, else E2.
    bars : {"se", "sd"}, default "se"
        Standard error of the mean, or dispersion of one dataset.
    coverage_factor : float, default 2.0
        Error bars ``coverage_factor * bars`` (``n_sigma`` until uqviz 0.2, still accepted
        with a FutureWarning until 0.3.0).
    color_by : {"nu_ig", "nu_d"}, default "nu_ig"
    legend, title
        Legend switch; title.

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> from uqviz import statistic_bias
    >>> from uqviz.plots.experiments import bias_vs_skewness
    >>> res = statistic_bias(nu_ig=[3.0, 10.0], nu_d=[4.0, 20.0], n_datasets=20, size=300,
    ...                      rng=0, progress=False)
    >>> ax = bias_vs_skewness(res, statistic="ZMS")
    >>> ax.get_ylabel(), ax.get_xlabel()
    ('1 - ZMS', '$\\\\langle\\\\beta_{GM}(Z^2)\\\\rangle$')
    """
    checks.result(
        "bias_result",
        bias_result,
        "uqviz.experiments.statistic_bias",
        variables=("bias", "estimate", "reference", "beta_gm", "se", "sd"),
        dims=("nu_ig", "nu_d", "statistic"),
    )
    names = [str(s) for s in bias_result["statistic"].values]
    if statistic not in names:
        raise ValueError(f"bias_vs_skewness: unknown statistic {statistic!r}; one of {names}")
    if bars not in ("se", "sd"):
        raise ValueError(f"bias_vs_skewness: bars must be 'se' or 'sd', got {bars!r}")
    if color_by not in ("nu_ig", "nu_d"):
        raise ValueError(f"bias_vs_skewness: color_by must be 'nu_ig' or 'nu_d', got {color_by!r}")
    if skewness is None:
        skewness = "Z2" if statistic in ("ZMS", "ZM", "ZVar") else "E2"
    choice("bias_vs_skewness", "skewness", skewness, bias_result["variable"].values)
    r = bias_result.sel(statistic=statistic)
    drawable("bias_vs_skewness", r, ("estimate", "beta_gm"), name="bias_result")
    ref = float(r["reference"])
    flip = np.isfinite(ref) and ref == 1.0
    has_dev = bool(np.isfinite(r["bias"]).any())  # a reference, maybe data-dependent
    y = -r["bias"] if flip else (r["bias"] if has_dev else r["estimate"])
    ylabel = (
        f"1 - {statistic}"
        if flip
        else (
            statistic
            if not has_dev or ref == 0
            else f"{statistic} - {ref:g}"
            if np.isfinite(ref)
            else f"{statistic} - reference"
        )
    )
    err = coverage_factor * r[bars]
    xb = r["beta_gm"].sel(variable=skewness)
    other = "nu_d" if color_by == "nu_ig" else "nu_ig"

    ax = get_ax(ax)
    apply_style(ax)
    thr = TAILEDNESS_THRESHOLDS[skewness]
    groups = bias_result[color_by].values
    cmap = mpl.colormaps["viridis"]
    sym = {"nu_ig": r"\nu_{IG}", "nu_d": r"\nu_D"}
    for i, g in enumerate(groups):
        c = cmap(i / max(1, len(groups) - 1) * 0.9)
        sel = {color_by: g}
        xs = xb.sel(sel).transpose(other).values
        ys = y.sel(sel).transpose(other).values
        es = err.sel(sel).transpose(other).values
        order = np.argsort(xs)
        ax.errorbar(
            xs[order],
            ys[order],
            yerr=es[order],
            fmt="-o",
            ms=3.5,
            lw=0.9,
            elinewidth=1.0,
            color=c,
            label=f"{g:g}",
            zorder=3,
        )
    xmin, xmax = ax.get_xlim()
    ax.axvspan(
        thr,
        max(xmax, thr + 0.01),
        color=ZONE_U if skewness == "uE2" else ZONE_E,
        alpha=UNSAFE_ALPHA,
        lw=0,
        zorder=0,
        label=f"$\\beta_{{GM}} > {thr:g}$",
    )
    ax.set_xlim(xmin, xmax)
    ax.axhline(0.0, color=COLORS["reference"], ls="--", lw=1.0, zorder=2)
    ax.set_xlabel(f"$\\langle\\beta_{{GM}}({VAR_TEX[skewness]})\\rangle$")
    ax.set_ylabel(ylabel)
    if title is not None:
        ax.set_title(title)
    if legend:
        what = "MC s.e. of the mean" if bars == "se" else "s.d. of one dataset"
        ax.legend(
            title=f"${sym[color_by]}$; bars: $\\pm${coverage_factor:g} {what}",
            loc="best",
            fontsize=7,
            title_fontsize=7,
            ncols=2,
            frameon=True,
            framealpha=0.9,
            edgecolor="none",
        )
    return ax
