"""Figures of the group analyses (:mod:`uqviz.groups`): the calibration of random groups of
decreasing size (:func:`adversarial_curves`) and the coverage per group (:func:`group_coverage`)."""

from __future__ import annotations

import numpy as np

from uqviz.engine import checks
from uqviz.plots._checks import drawable
from uqviz.plots._style import accepts_targets
from uqviz.plots._style import COLORS, apply_style, get_ax, one_dataset, set_log_x, style

__all__ = ["adversarial_curves", "group_coverage"]

#: what adversarial_curves reads of an adversarial_validation result
ADVERSARIAL_VARIABLES = (
    "share_valid",
    "share_valid_lower",
    "share_valid_upper",
    "reference_share",
    "reference_share_lower",
    "reference_share_upper",
    "p_adjusted",
)
_NAMES = {"PICP": "PICP", "MACE": "MACE"}


@accepts_targets
def adversarial_curves(result, *, ax=None):
    """Share of valid groups against the group size, data and calibrated reference
    (Pernot (2023), section III.2.3; ErrViewLib's ``plotAGVZMS``).

    The data's share with its Wilson interval (error bars; too narrow for overlapping groups,
    see :func:`uqviz.adversarial_validation`), the share on simulated calibrated sets with
    its band (shaded); the sizes that fail after Holm's adjustment over the sizes
    (``p_adjusted <= 1 - ci``) are circled in red.

    Parameters
    ----------
    result : xarray.Dataset
        Output of :func:`uqviz.adversarial_validation` for one dataset (select one of a
        DataTree's with ``.sel(dataset=...)``).
    ax : matplotlib.axes.Axes, optional

    Returns
    -------
    matplotlib.axes.Axes

    See Also
    --------
    uqviz.adversarial_validation : computes the result.

    Examples
    --------
    >>> import xarray as xr
    >>> from uqviz.plots.groups import adversarial_curves
    >>> res = xr.Dataset({"share_valid": ("size", [0.9, 0.8]),
    ...     "share_valid_lower": ("size", [0.85, 0.75]),
    ...     "share_valid_upper": ("size", [0.95, 0.85]),
    ...     "reference_share": ("size", [0.93, 0.9]),
    ...     "reference_share_lower": ("size", [0.8, 0.83]),
    ...     "reference_share_upper": ("size", [1.0, 0.97]), "p_adjusted": ("size", [0.4, 0.01])},
    ...     coords={"size": [100, 50]}, attrs={"statistic": "ZMS", "ci": 0.95})
    >>> len(adversarial_curves(res).lines) >= 2
    True
    """
    checks.result(
        "result",
        result,
        "uqviz.adversarial_validation",
        variables=ADVERSARIAL_VARIABLES,
        dims=("size",),
    )
    if "dataset" in result.dims:
        raise ValueError(
            "result: the result holds several datasets; select one with .sel(dataset=...)"
        )
    drawable("adversarial_curves", result, ("share_valid",))
    size = np.asarray(result["size"].values, dtype=float)
    order = np.argsort(size)
    x = size[order]

    def col(name):
        return np.asarray(result[name].values, dtype=float)[order]

    share, lo, hi = col("share_valid"), col("share_valid_lower"), col("share_valid_upper")
    ref, rlo, rhi = (
        col("reference_share"),
        col("reference_share_lower"),
        col("reference_share_upper"),
    )
    alpha = 1.0 - float(result.attrs.get("ci", 0.95))
    failed = np.asarray(result["p_adjusted"].values, dtype=float)[order] <= alpha
    stat = result.attrs.get("statistic", "ZMS")
    ax = get_ax(ax)
    with style():
        apply_style(ax)
        ax.fill_between(
            x,
            rlo,
            rhi,
            color=COLORS["band"],
            alpha=0.5,
            lw=0,
            label=f"calibrated reference ({result.attrs.get('ci', 0.95):g} band)",
        )
        ax.plot(
            x,
            ref,
            "-",
            color=COLORS["reference"],
            lw=1.0,
            marker="s",
            ms=3,
            label="calibrated reference (uE D)",
        )
        ax.errorbar(
            x, share, yerr=[share - lo, hi - share], fmt="none", ecolor=COLORS["valid"], lw=1.0
        )
        ax.plot(x, share, "-o", color=COLORS["valid"], ms=4, label="data")
        if failed.any():
            ax.plot(
                x[failed],
                share[failed],
                "o",
                mfc="none",
                mec=COLORS["invalid"],
                ms=9,
                mew=1.5,
                label="fails (Holm over the sizes)",
            )
        set_log_x(ax, x)
        ax.set_xlabel("Group size (points)")
        what = _NAMES.get(stat, f"{stat} intervals")
        ax.set_ylabel(f"Share of valid groups ({what})")
        lows = np.concatenate([lo, rlo, share])
        ax.set_ylim(max(0.0, float(np.nanmin(lows)) - 0.05), 1.0)
        ax.legend(loc="lower right", fontsize=7)
    return ax


@accepts_targets
def group_coverage(result, *, ax=None, dataset=None, legend=True):
    """Coverage of each group with its Wilson interval, the level and the calibrated band.

    The groups of each grouping side by side (separated by a gap, the grouping named at the top),
    a point per group: blue when its interval holds the level, red when not; the grey band is
    the binomial ``ci`` band of a calibrated group of that size
    (``coverage_reference_lower``, ``coverage_reference_upper``); the dashed line the level.
    The title gives the verdict of each measure.

    Parameters
    ----------
    result : xarray.Dataset
        Output of :func:`uqviz.group_coverage`.
    ax : matplotlib.axes.Axes, optional
    dataset : str or int, optional
        The dataset to draw of a result with a ``dataset`` dim (required when it holds
        several).
    legend : bool, default True

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> import uqviz
    >>> from uqviz.plots.groups import group_coverage
    >>> res = uqviz.group_coverage(uqviz.synthetic.default_example(), n_mc=20, n_perm=20,
    ...                            n_directions=10, rng=0)
    >>> group_coverage(res).get_ylabel()
    'coverage'
    """
    checks.result(
        "result",
        result,
        "uqviz.group_coverage",
        variables=(
            "coverage",
            "coverage_lower",
            "coverage_upper",
            "coverage_reference_lower",
            "coverage_reference_upper",
            "verdict",
        ),
        dims=("group", "measure"),
    )
    res, name = one_dataset(result, dataset, "group_coverage")
    drawable("group_coverage", res, ("coverage",))
    level = float(result.attrs.get("level", np.nan))
    ci = float(result.attrs.get("ci", 0.95))
    keep = np.isfinite(res["coverage"].values)  # groups of other datasets of a tree
    by = np.asarray(res["grouped_by"].values, dtype=object)[keep]
    labels = np.asarray(res["label"].values, dtype=object)[keep]
    y = res["coverage"].values[keep]
    lo, hi = res["coverage_lower"].values[keep], res["coverage_upper"].values[keep]
    b_lo = res["coverage_reference_lower"].values[keep]
    b_hi = res["coverage_reference_upper"].values[keep]
    names = list(dict.fromkeys(by.tolist()))
    x = np.empty(y.size)
    pos = 0.0
    centers = []
    for g in names:
        idx = np.flatnonzero(by == g)
        x[idx] = pos + np.arange(idx.size)
        centers.append(pos + (idx.size - 1) / 2.0)
        pos += idx.size + 1.0
    ax = get_ax(ax, figsize=(max(4.5, 0.3 * pos + 1.5), 3.5))
    with style():
        apply_style(ax)
        for k in range(y.size):
            ax.fill_between(
                [x[k] - 0.4, x[k] + 0.4],
                b_lo[k],
                b_hi[k],
                color=COLORS["band"],
                alpha=0.6,
                lw=0,
                label="calibrated band" if k == 0 else None,
            )
        inside = (lo <= level) & (level <= hi)
        for mask, key in ((inside, "valid"), (~inside, "invalid")):
            if mask.any():
                ax.errorbar(
                    x[mask],
                    y[mask],
                    yerr=np.vstack([y[mask] - lo[mask], hi[mask] - y[mask]]),
                    fmt="o",
                    ms=3.5,
                    lw=1.0,
                    color=COLORS[key],
                    label="level inside" if key == "valid" else "level outside",
                )
        ax.axhline(level, color=COLORS["reference"], ls="--", lw=1.0, label="level")
        ax.set_xticks(x)
        ax.set_xticklabels([str(s) for s in labels], rotation=90, fontsize=6)
        for c, g in zip(centers, names):
            ax.annotate(
                str(g),
                (c, 1),
                xycoords=("data", "axes fraction"),
                xytext=(0, -3),
                textcoords="offset points",
                ha="center",
                va="top",
                fontsize=8,
                fontweight="bold",
            )
        ax.set_xlim(-1, pos - 1)
        ax.set_ylabel("coverage")
        verdict = res["verdict"].to_series()
        est = res["estimate"].to_series()
        parts = [
            f"{m} {est[m]:.3g} {verdict[m]}"
            for m in verdict.index
            if not str(m).startswith("covgap_weighted")
        ]
        title = "; ".join(parts)
        ax.set_title(title if name is None else f"{name}: {title}", fontsize=7)
        if legend:
            ax.legend(loc="best", title=f"{100 * ci:g}% intervals (Wilson)")
    return ax
