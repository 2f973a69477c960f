"""PIT figures: the histogram with its binomial band, the ECDF difference with its
simultaneous band.

Both draw a result of :func:`uqviz.validate_pit` (one dataset; choose one of a DataTree's with
``dataset=``) and compute nothing.
"""

from __future__ import annotations

import numpy as np

from uqviz.engine import checks
from uqviz.plots._checks import drawable
from uqviz.engine.verdicts import FAILS, OK
from uqviz.plots._style import COLORS, apply_style, get_ax, one_dataset, style

__all__ = ["pit_histogram", "pit_ecdf_difference"]


def _verdict_text(res):
    word = OK if bool(res["valid"]) else FAILS
    return f"{word}: KS p = {float(res['ks_p_value']):.3g}, CvM p = {float(res['cvm_p_value']):.3g}"


def pit_histogram(pit_result, *, ax=None, dataset=None, legend=True):
    """PIT histogram: counts per bin, the expected count and its per-bin binomial band.

    A uniform PIT (a calibrated forecast) gives flat bars inside the band; a U shape means an
    overconfident forecast (too narrow), a hump an underconfident one, a slope a bias
    (Gneiting et al. 2007).

    Parameters
    ----------
    pit_result : xarray.Dataset
        Output of :func:`uqviz.validate_pit`.
    ax : matplotlib.axes.Axes, optional
    dataset : str or int, optional
        The dataset to draw of a result with a ``dataset`` dim.
    legend : bool, default True
        Legend with the verdict word of the ECDF band ("OK"/"fails") and the KS and CvM
        p-values.

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> import uqviz
    >>> from uqviz.plots.pit import pit_histogram
    >>> res = uqviz.validate_pit(uqviz.synthetic.default_example(), rng=0)
    >>> pit_histogram(res).get_xlabel()
    'PIT'
    """
    checks.result(
        "pit_result",
        pit_result,
        "uqviz.validate_pit",
        variables=(
            "pit_count",
            "pit_count_lower",
            "pit_count_upper",
            "bin_lower",
            "bin_upper",
            "valid",
            "ks_p_value",
            "cvm_p_value",
        ),
        dims=("bin",),
    )
    res, name = one_dataset(pit_result, dataset, "pit_result")
    drawable("pit_histogram", res, ("pit_count", "bin_lower"), name="pit_result")
    ax = get_ax(ax)
    with style():
        apply_style(ax)
        lo, hi = res["bin_lower"].values, res["bin_upper"].values
        counts = res["pit_count"].values.astype(float)
        ok = (res["pit_count_lower"].values <= counts) & (counts <= res["pit_count_upper"].values)
        colors = np.where(ok, COLORS["valid"], COLORS["invalid"])
        ax.bar(
            lo,
            counts,
            width=hi - lo,
            align="edge",
            color=colors,
            alpha=0.75,
            edgecolor="white",
            lw=0.5,
            label="PIT count",
        )
        edges = np.append(lo, hi[-1])
        ax.stairs(
            res["pit_count_upper"].values,
            edges,
            baseline=res["pit_count_lower"].values,
            fill=True,
            color=COLORS["band"],
            alpha=0.5,
            label=f"{float(res.attrs.get('ci', 0.95)):.0%} band of a uniform PIT (per bin)",
        )
        expected = float(res["n_points"]) * (hi - lo) if "n_points" in res else None
        if expected is not None:
            ax.stairs(expected, edges, color=COLORS["reference"], ls="--", lw=1.0, label="expected")
        ax.set_xlim(0, 1)
        top = max(float(counts.max()), float(res["pit_count_upper"].max()))
        ax.set_ylim(0, 1.35 * top)  # room for the legend above the bars
        ax.set_xlabel("PIT")
        ax.set_ylabel("count")
        title = _verdict_text(res)
        ax.set_title(f"{name}: {title}" if name else title, fontsize=8)
        if legend:
            ax.legend(loc="upper center", fontsize=7, ncol=2)
    return ax


def pit_ecdf_difference(pit_result, *, ax=None, dataset=None, legend=True):
    """ECDF of the PIT minus the identity, with its simultaneous band (Säilynoja et al. 2022).

    The curve stays inside the band at every PIT value with probability ``ci`` when the PIT
    is uniform; the verdict of :func:`uqviz.validate_pit` ("OK" when inside, else
    "fails") is shown in the title.

    Parameters
    ----------
    pit_result : xarray.Dataset
        Output of :func:`uqviz.validate_pit`.
    ax : matplotlib.axes.Axes, optional
    dataset : str or int, optional
        The dataset to draw of a result with a ``dataset`` dim.
    legend : bool, default True

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> import uqviz
    >>> from uqviz.plots.pit import pit_ecdf_difference
    >>> res = uqviz.validate_pit(uqviz.synthetic.default_example(), rng=0)
    >>> pit_ecdf_difference(res).get_ylabel()
    'ECDF - PIT'
    """
    checks.result(
        "pit_result",
        pit_result,
        "uqviz.validate_pit",
        variables=(
            "ecdf_difference",
            "ecdf_difference_lower",
            "ecdf_difference_upper",
            "valid",
            "ks_p_value",
            "cvm_p_value",
        ),
        dims=("pit_grid",),
    )
    res, name = one_dataset(pit_result, dataset, "pit_result")
    drawable("pit_ecdf_difference", res, ("ecdf_difference",), name="pit_result")
    ax = get_ax(ax)
    with style():
        apply_style(ax)
        x = np.concatenate(([0.0], res["pit_grid"].values, [1.0]))
        pad = lambda v: np.concatenate(([0.0], v, [0.0]))  # noqa: E731 - the ECDF ends at 0
        ax.fill_between(
            x,
            pad(res["ecdf_difference_lower"].values),
            pad(res["ecdf_difference_upper"].values),
            color=COLORS["band"],
            alpha=0.6,
            lw=0,
            label=f"{float(res.attrs.get('ci', 0.95)):.0%} simultaneous band",
        )
        ax.axhline(0.0, color=COLORS["reference"], ls="--", lw=1.0)
        color = COLORS["valid"] if bool(res["valid"]) else COLORS["invalid"]
        ax.plot(
            x,
            pad(res["ecdf_difference"].values),
            color=color,
            lw=1.5,
            label="ECDF of the PIT - identity",
        )
        ax.set_xlim(0, 1)
        ax.set_xlabel("PIT")
        ax.set_ylabel("ECDF - PIT")
        title = _verdict_text(res)
        ax.set_title(f"{name}: {title}" if name else title, fontsize=8)
        if legend:
            ax.legend(loc="best", fontsize=7)
    return ax
