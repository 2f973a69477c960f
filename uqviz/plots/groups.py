"""Plots of the calibration across groups (:mod:`uqviz.groups`)."""

from __future__ import annotations

import numpy as np

from uqviz.engine import checks
from uqviz.plots._style import COLORS, apply_style, get_ax, set_log_x, style

__all__ = ["adversarial_curves"]

#: what adversarial_curves reads of an adversarial_validation result
ADVERSARIAL_VARIABLES = ("share_valid", "share_valid_lower", "share_valid_upper",
                         "reference_share", "reference_share_lower", "reference_share_upper",
                         "valid")
_NAMES = {"PICP": "PICP", "MACE": "MACE"}


def adversarial_curves(result, ax=None):
    """Share of valid groups against the group size, data and calibrated reference
    (Pernot (2023), section III.2.3; ErrViewLib's ``plotAGVZMS``).

    The data's share with its Wilson interval (error bars; too narrow for overlapping groups,
    see :func:`uqviz.adversarial_validation`), the share on simulated calibrated sets with
    its band (shaded): a size where the data fall below the band fails (open red markers).

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
    ...     "share_valid_lower": ("size", [0.85, 0.75]), "share_valid_upper": ("size", [0.95, 0.85]),
    ...     "reference_share": ("size", [0.93, 0.9]), "reference_share_lower": ("size", [0.8, 0.83]),
    ...     "reference_share_upper": ("size", [1.0, 0.97]), "valid": ("size", [True, False])},
    ...     coords={"size": [100, 50]}, attrs={"statistic": "ZMS", "ci": 0.95})
    >>> len(adversarial_curves(res).lines) >= 2
    True
    """
    checks.result("result", result, "uqviz.adversarial_validation",
                  variables=ADVERSARIAL_VARIABLES, dims=("size",))
    if "dataset" in result.dims:
        raise ValueError("result: the result holds several datasets; select one with "
                         ".sel(dataset=...)")
    size = np.asarray(result["size"].values, dtype=float)
    order = np.argsort(size)
    x = size[order]

    def col(name):
        return np.asarray(result[name].values, dtype=float)[order]

    share, lo, hi = col("share_valid"), col("share_valid_lower"), col("share_valid_upper")
    ref, rlo, rhi = (col("reference_share"), col("reference_share_lower"),
                     col("reference_share_upper"))
    failed = ~np.asarray(result["valid"].values, dtype=bool)[order]
    stat = result.attrs.get("statistic", "ZMS")
    ax = get_ax(ax)
    with style():
        apply_style(ax)
        ax.fill_between(x, rlo, rhi, color=COLORS["band"], alpha=0.5, lw=0,
                        label=f"calibrated reference ({result.attrs.get('ci', 0.95):g} band)")
        ax.plot(x, ref, "-", color=COLORS["reference"], lw=1.0, marker="s", ms=3,
                label="calibrated reference (uE D)")
        ax.errorbar(x, share, yerr=[share - lo, hi - share], fmt="none",
                    ecolor=COLORS["valid"], lw=1.0)
        ax.plot(x, share, "-o", color=COLORS["valid"], ms=4, label="data")
        if failed.any():
            ax.plot(x[failed], share[failed], "o", mfc="none", mec=COLORS["invalid"], ms=9,
                    mew=1.5, label="below the band")
        set_log_x(ax, x)
        ax.set_xlabel("Group size (points)")
        what = _NAMES.get(stat, f"{stat} intervals")
        ax.set_ylabel(f"Share of valid groups ({what})")
        lows = np.concatenate([lo, rlo, share])
        ax.set_ylim(max(0.0, float(np.nanmin(lows)) - 0.05), 1.0)
        ax.legend(loc="lower right", fontsize=7)
    return ax
