"""Average-calibration figures: statistics with their intervals against references."""

from __future__ import annotations

import numpy as np

from uqviz.plots._style import COLORS, get_ax

__all__ = ["intervals"]


def intervals(result, *, ax=None, statistics=None):
    """Estimate and confidence interval of each statistic, relative to its reference.

    Parameters
    ----------
    result : xarray.Dataset
        Output of :func:`uqviz.validate_average` for one dataset (or with a
        ``dataset`` dim: one row per dataset and statistic).
    ax : matplotlib.axes.Axes, optional
    statistics : sequence of str, optional
        Subset of the statistics (default all with a finite reference).

    Returns
    -------
    matplotlib.axes.Axes
        One row per (dataset, statistic): the interval minus the reference,
        coloured by validity; the zero line is the reference.

    Examples
    --------
    >>> import uqviz
    >>> from uqviz.plots.average import intervals
    >>> res = uqviz.validate_average(uqviz.synthetic.default_example(), n_boot=500, rng=0)
    >>> ax = intervals(res)
    >>> len(ax.get_yticklabels())
    2
    """
    res = result if "dataset" in result.dims else result.expand_dims(dataset=[""])
    stats_ = list(res.statistic.values) if statistics is None else list(statistics)
    stats_ = [s for s in stats_ if np.isfinite(res.reference.sel(statistic=s)).all()]
    rows = [(d, s) for d in res.dataset.values for s in stats_]
    ax = get_ax(ax, figsize=(4.5, 0.45 * len(rows) + 1.2))
    for y, (d, s) in enumerate(rows):
        r = res.sel(dataset=d, statistic=s)
        ref = float(r.reference)
        est, lo, hi = float(r.estimate) - ref, float(r.ci_lower) - ref, float(r.ci_upper) - ref
        color = COLORS["valid"] if bool(r.valid) else COLORS["invalid"]
        ax.errorbar(est, y, xerr=[[est - lo], [hi - est]], fmt="o", color=color, ms=5)
    ax.axvline(0.0, color=COLORS["reference"], lw=1, ls="--")
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([f"{d} {s}".strip() for d, s in rows])
    ax.invert_yaxis()
    ax.set_xlabel("statistic - reference (95% CI)")
    return ax
