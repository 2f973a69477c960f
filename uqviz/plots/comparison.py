"""Figures of a comparison of models: the ranking matrix, the SIP matrix, the differences.

Each draws one measure of a result of :func:`uqviz.compare_models` (models of the same points)
and computes nothing: the rank probabilities, the systematic improvement probabilities (SIP)
with the mean gain and loss, and the paired differences with their intervals are read from the
result as they are; the measures' names and references come from
:mod:`uqviz.comparison.measures`.
"""

from __future__ import annotations

import matplotlib as mpl
import numpy as np

from uqviz.comparison.measures import measure_label, measure_reference, sip_measures
from uqviz.engine import checks
from uqviz.plots._checks import drawable
from uqviz.plots._style import COLORS, apply_style, get_ax, style

# sip_measures, measure_label and measure_reference are computed in uqviz.comparison.measures
# and importable from here under their old names; they draw nothing: left out of __all__
# (every name there is a figure)
__all__ = ["ranking_matrix", "sip_matrix", "differences"]

#: colour of a pair whose interval excludes 0 (one model better than the other)
DIFFERENT = COLORS["series"][2]
#: colour of a pair whose interval holds 0 (no difference detected)
NO_DIFFERENCE = COLORS["series"][7]
#: colour of a pair whose comparison is unreliable (the tailedness screen fails)
UNRELIABLE_COLOR = COLORS["series"][1]
#: colour maps: rank probabilities (sequential, 0 to 1), SIP (diverging around 1/2, as the
#: blue-red palette of ErrViewLib's plotSIPMat)
RANK_CMAP, SIP_CMAP = "Blues", "RdBu"

_MADE_BY = "uqviz.compare_models"


def _measures(result):
    return [str(m) for m in result["measure"].values]


def _pick(result, measure, what, usable=None):
    """The measure to draw: ``measure`` (checked) or the first (usable) one of the result."""
    names = _measures(result)
    if not names:
        raise ValueError(
            f"{what}: result holds no measure (dim 'measure' has 0 entries), nothing to draw"
        )
    if measure is None:
        ok = [m for m in names if usable is None or usable(m)]
        if not ok:
            raise ValueError(
                f"{what}: none of the result's {len(names)} measures ({names}) has "
                "SIP values (SIP needs a measure that is a mean of per-point values)"
            )
        return ok[0]
    if not isinstance(measure, str):
        raise TypeError(f"measure must be a str (one of {names}), got {type(measure).__name__}")
    if measure not in names:
        raise ValueError(
            f"{what}: measure {measure!r} is not in the result (its measures: {names})"
        )
    return measure


def _distance_label(result, measure):
    """``"|ZMS - 1|"``, ``"|RCE|"``, ``"|NLL - NLL_ref|"`` for a statistic with a reference,
    else the measure's name."""
    label = measure_label(result, measure)
    ref = measure_reference(result, measure)
    if ref is None:
        return label
    if ref == "data":
        return f"|{label} \u2212 {label}_ref|"
    return f"|{label}|" if ref == 0 else f"|{label} \u2212 {ref:g}|"


def _order(res):
    """Models ordered by their distance on the data (best first; ties in the result's order)."""
    models = [str(m) for m in res["model"].values]
    if "distance" in res.data_vars:
        d = np.asarray(res["distance"].values, dtype=float)
        key = np.where(np.isfinite(d), d, np.inf)
        idx = np.argsort(key, kind="stable")
    else:  # the expected rank
        p = res["rank_probability"].transpose("model", "rank").values
        idx = np.argsort(p @ res["rank"].values.astype(float), kind="stable")
    return [models[i] for i in idx]


def ranking_matrix(result, *, measure=None, ax=None):
    r"""Ranking matrix of one measure: the probability of each model to take each rank.

    Rows are the models, ordered by their rank on the data (best first), columns the ranks
    1 to n; a cell is the share of the bootstrap replicates in which the model takes that rank
    (``rank_probability``), shaded from 0 (white) to 1 and printed when it rounds above 0.00.
    A model sure of its rank has one dark cell; a row spread over several ranks means the data
    cannot tell the models apart (Pernot & Savin (2020a, 2020b)). The layout is that of
    ErrViewLib's ``plotRankMat``.

    Parameters
    ----------
    result : xarray.Dataset
        Output of :func:`uqviz.compare_models`.
    measure : str, optional
        The measure drawn (a label of ``result["measure"]``); default the first.
    ax : matplotlib.axes.Axes, optional

    Returns
    -------
    matplotlib.axes.Axes
        Its image (``ax.images[0]``) holds the matrix drawn, rows in the order of the y labels.

    See Also
    --------
    uqviz.compare_models : the rank probabilities.
    sip_matrix, differences : the other figures of a comparison.

    Notes
    -----
    With :math:`r_b(k)` the rank of model :math:`k` in bootstrap replicate :math:`b` of
    :math:`B` (rank 1: the smallest distance), the cell :math:`(k, r)` is

    .. math:: P_k(r) = \frac{1}{B} \sum_{b=1}^{B} [r_b(k) = r], \qquad \sum_r P_k(r) = 1.

    References
    ----------
    - Pernot & Savin (2020a): the ranking probability matrix from the bootstrap; Pernot &
      Savin (2020b): its applications (ErrViewLib's ``plotRankMat``).

    Examples
    --------
    >>> import numpy as np, xarray as xr
    >>> from uqviz.plots.comparison import ranking_matrix
    >>> p = np.array([[[0.9, 0.1], [0.1, 0.9]]])
    >>> res = xr.Dataset({"rank_probability": (("measure", "model", "rank"), p),
    ...                   "distance": (("measure", "model"), [[0.1, 0.3]])},
    ...                  coords={"measure": ["NLL"], "model": ["a", "b"], "rank": [1, 2]})
    >>> [t.get_text() for t in ranking_matrix(res).get_yticklabels()]
    ['a', 'b']
    """
    checks.result(
        "result",
        result,
        _MADE_BY,
        variables=("rank_probability",),
        dims=("measure", "model", "rank"),
    )
    measure = _pick(result, measure, "ranking_matrix")
    res = drawable("ranking_matrix", result.sel(measure=measure), ("rank_probability",))
    ax = get_ax(ax, figsize=(4.0, 3.4))
    order = _order(res)
    p = res["rank_probability"].sel(model=order).transpose("model", "rank").values
    ranks = [int(r) for r in res["rank"].values]
    with style():
        apply_style(ax)
        ax.grid(False)
        im = ax.imshow(
            p, cmap=RANK_CMAP, vmin=0.0, vmax=1.0, aspect="auto", interpolation="nearest"
        )
        for i in range(p.shape[0]):
            for j in range(p.shape[1]):
                text = f"{p[i, j]:.2f}"
                if np.isfinite(p[i, j]) and text != "0.00":
                    ax.text(
                        j,
                        i,
                        text,
                        ha="center",
                        va="center",
                        fontsize=7,
                        color="white" if p[i, j] > 0.6 else "black",
                        gid="rank_probability",
                    )
        ax.set_xticks(range(len(ranks)), [str(r) for r in ranks])
        ax.set_yticks(range(len(order)), order)
        ax.tick_params(
            top=True, labeltop=True, bottom=False, labelbottom=False, right=False, length=0
        )
        ax.set_xlabel("rank")
        ax.xaxis.set_label_position("top")
        n = result.attrs.get("n_points")
        label = measure_label(result, measure)
        ax.set_title(f"{label} ranks" + (f" (M = {n})" if n is not None else ""), fontsize=9)
        ax.figure.colorbar(im, ax=ax, label="rank probability", shrink=0.9)
    return ax


def sip_matrix(result, *, measure=None, ax=None):
    r"""SIP matrix of one measure: how often each model improves on each other, point by point.

    A cell (row ``model``, column ``versus``) is the systematic improvement probability
    ``sip``: the share of the points where ``model``'s per-point value is better than
    ``versus``'s; under it, the mean gain and the mean loss (``mean_gain``, ``mean_loss``:
    the mean improvement over the points where ``model`` is better, and the mean change where
    it is worse). Blue cells (above 1/2) mark a model that improves on the other at most
    points, red cells the reverse; the diagonal is empty. Rows and columns are ordered by the
    mean SIP of the row (the model that most often improves on the others first), as in
    ErrViewLib's ``plotSIPMat`` (Pernot & Savin (2020a)).

    Parameters
    ----------
    result : xarray.Dataset
        Output of :func:`uqviz.compare_models`.
    measure : str, optional
        The measure drawn; default the first measure with SIP values
        (``sip_measures`` of this module): a measure that is a mean of per-point values.
    ax : matplotlib.axes.Axes, optional

    Returns
    -------
    matplotlib.axes.Axes
        Its image holds the SIP matrix drawn (NaN on the diagonal), in the order of the labels.

    Raises
    ------
    ValueError
        The measure is not in the result, or has no SIP values.

    See Also
    --------
    uqviz.compare_models : the SIP, mean gain and mean loss.
    ranking_matrix, differences

    Notes
    -----
    With :math:`s_{k,i}` the per-point value of model :math:`k` at point :math:`i` (smaller is
    better) and :math:`\delta_i = s_{l,i} - s_{k,i}`,

    .. math::

       \mathrm{SIP}_{k/l} = \frac{1}{M} \sum_{i=1}^{M} [\delta_i > 0], \qquad
       \mathrm{MG}_{k/l} = \langle \delta_i \rangle_{\delta_i > 0}, \qquad
       \mathrm{ML}_{k/l} = \langle \delta_i \rangle_{\delta_i < 0}

    (Pernot & Savin (2020a)); the values drawn are those of the result.

    References
    ----------
    - Pernot & Savin (2020a): the systematic improvement probability, mean gain and loss.

    Examples
    --------
    >>> import numpy as np, xarray as xr
    >>> from uqviz.plots.comparison import sip_matrix
    >>> s = np.array([[[np.nan, 0.7], [0.3, np.nan]]])
    >>> g = np.array([[[np.nan, 0.2], [0.1, np.nan]]])
    >>> res = xr.Dataset({"sip": (("measure", "model", "versus"), s),
    ...                   "mean_gain": (("measure", "model", "versus"), g),
    ...                   "mean_loss": (("measure", "model", "versus"), -g[:, ::-1, ::-1])},
    ...                  coords={"measure": ["NLL"], "model": ["a", "b"], "versus": ["a", "b"]})
    >>> [t.get_text() for t in sip_matrix(res).texts if t.get_gid() == "sip"]
    ['0.70', '0.30']
    """
    checks.result(
        "result",
        result,
        _MADE_BY,
        variables=("sip", "mean_gain", "mean_loss"),
        dims=("measure", "model", "versus"),
    )
    have = sip_measures(result)
    measure = _pick(result, measure, "sip_matrix", usable=lambda m: m in have)
    if measure not in have:
        raise ValueError(
            f"sip_matrix: measure {measure!r} has no SIP values (SIP needs a "
            f"measure that is a mean of per-point values; measures with SIP "
            f"values: {have or 'none'})"
        )
    dim = next(d for d in result["sip"].dims if d not in ("model", "versus"))
    drawable("sip_matrix", result.sel({dim: measure}), ("sip",))
    ax = get_ax(ax, figsize=(4.2, 3.6))

    def matrix(name):
        return result[name].sel({dim: measure}).transpose("model", "versus")

    sip = matrix("sip")
    models = [str(m) for m in sip["model"].values]
    s = np.array(sip.values, dtype=float)
    np.fill_diagonal(s, np.nan)
    row_mean = (
        np.nanmean(np.where(np.isfinite(s), s, np.nan), axis=1) if len(models) > 1 else np.zeros(1)
    )
    idx = np.argsort(-np.nan_to_num(row_mean, nan=-np.inf), kind="stable")
    order = [models[i] for i in idx]
    s = s[np.ix_(idx, idx)]
    gain = np.array(matrix("mean_gain").values, dtype=float)[np.ix_(idx, idx)]
    loss = np.array(matrix("mean_loss").values, dtype=float)[np.ix_(idx, idx)]
    with style():
        apply_style(ax)
        ax.grid(False)
        cmap = mpl.colormaps[SIP_CMAP].with_extremes(bad="#eeeeee")
        im = ax.imshow(
            np.ma.masked_invalid(s),
            cmap=cmap,
            vmin=0.0,
            vmax=1.0,
            aspect="auto",
            interpolation="nearest",
        )
        for i in range(s.shape[0]):
            for j in range(s.shape[1]):
                if i == j or not np.isfinite(s[i, j]):
                    continue
                dark = abs(s[i, j] - 0.5) > 0.35
                color = "white" if dark else "black"
                ax.text(
                    j,
                    i - 0.12,
                    f"{s[i, j]:.2f}",
                    ha="center",
                    va="center",
                    fontsize=7,
                    color=color,
                    gid="sip",
                )
                ax.text(
                    j,
                    i + 0.22,
                    f"{_g(gain[i, j])} / {_g(loss[i, j])}",
                    ha="center",
                    va="center",
                    fontsize=5.5,
                    color=color,
                    gid="gain_loss",
                )
        ax.set_xticks(
            range(len(order)),
            order,
            rotation=30 if len(order) > 3 else 0,
            ha="right" if len(order) > 3 else "center",
        )
        ax.set_yticks(range(len(order)), order)
        ax.tick_params(length=0, top=False, right=False)
        ax.set_xlabel("versus")
        ax.set_ylabel("model")
        ax.set_title(
            f"SIP of {measure_label(result, measure)} (cells: SIP, mean gain / mean loss)",
            fontsize=9,
        )
        ax.figure.colorbar(im, ax=ax, label="SIP: P(model better than versus)", shrink=0.9)
    return ax


def _g(x) -> str:
    return f"{x:.2g}" if np.isfinite(x) else "n/a"


def differences(result, *, measure=None, ax=None):
    r"""Pairwise differences of one measure between the models, with their intervals.

    One row per pair of models (``model`` before ``versus`` in the result's order): the
    difference of their distances ``difference`` = distance(model) - distance(versus) (for a
    statistic with a reference, the distance is :math:`|\vartheta - \vartheta_{ref}|`; for a
    score, the score), with its paired-bootstrap interval. Pairs whose interval excludes 0 (one
    model better than the other, ``comparison`` "better" or "worse") are drawn in green and
    named on the right; the others (no difference detected) in grey; pairs whose comparison
    is "unreliable" (the tailedness screen fails) in a third colour, drawn only when there are
    such pairs; a pair that could not be tested (``comparison`` "not tested") is listed
    without a bar. The dashed line marks 0.

    Parameters
    ----------
    result : xarray.Dataset
        Output of :func:`uqviz.compare_models`.
    measure : str, optional
        The measure drawn; default the first.
    ax : matplotlib.axes.Axes, optional

    Returns
    -------
    matplotlib.axes.Axes
        Two error-bar containers (``ax.containers``, labelled ``"interval excludes 0"`` and
        ``"no difference detected"``); pairs from top to bottom in the order of the y labels.

    See Also
    --------
    uqviz.compare_models : the differences and their intervals.
    ranking_matrix, sip_matrix

    Notes
    -----
    The verdict "better" needs the whole interval of
    :math:`d_{k,l} = D_k - D_l` below 0, :math:`D` the distance; the interval is that of the
    result (BCa by default, the same resamples for every model).

    References
    ----------
    - Pernot & Savin (2020a): comparing methods by the uncertainty of their differences.

    Examples
    --------
    >>> import numpy as np, xarray as xr
    >>> from uqviz.plots.comparison import differences
    >>> d = np.array([[[0.0, -0.2], [0.2, 0.0]]])
    >>> res = xr.Dataset({"difference": (("measure", "model", "versus"), d),
    ...                   "difference_lower": (("measure", "model", "versus"), d - 0.1),
    ...                   "difference_upper": (("measure", "model", "versus"), d + 0.1),
    ...                   "comparison": (("measure", "model", "versus"),
    ...                                  [[["not tested", "better"], ["worse", "not tested"]]])},
    ...                  coords={"measure": ["NLL"], "model": ["a", "b"], "versus": ["a", "b"]})
    >>> [t.get_text() for t in differences(res).get_yticklabels()]
    ['a \u2212 b']
    """
    checks.result(
        "result",
        result,
        _MADE_BY,
        variables=("difference", "difference_lower", "difference_upper", "comparison"),
        dims=("measure", "model", "versus"),
    )
    measure = _pick(result, measure, "differences")
    res = drawable("differences", result.sel(measure=measure), ("difference",))
    ax = get_ax(ax, figsize=(4.5, 3.2))
    models = [str(m) for m in res["model"].values]

    def pair(name, a, b):
        return res[name].sel(model=a, versus=b).values.item()

    rows = [(a, b) for i, a in enumerate(models) for b in models[i + 1 :]]
    y = np.arange(len(rows))[::-1].astype(float)
    d = np.array([pair("difference", a, b) for a, b in rows], dtype=float)
    lo = np.array([pair("difference_lower", a, b) for a, b in rows], dtype=float)
    hi = np.array([pair("difference_upper", a, b) for a, b in rows], dtype=float)
    word = [str(pair("comparison", a, b)) for a, b in rows]
    significant = np.array([w in ("better", "worse") for w in word], dtype=bool)
    unreliable = np.array([w == "unreliable" for w in word], dtype=bool)
    tested = np.array([w != "not tested" for w in word], dtype=bool) & np.isfinite(d) & ~unreliable
    with style():
        apply_style(ax)
        ax.axvline(0.0, color=COLORS["reference"], ls="--", lw=1.0)
        groups = [
            (significant & tested, DIFFERENT, "interval excludes 0"),
            (~significant & tested, NO_DIFFERENCE, "no difference detected"),
        ]
        if unreliable.any():  # the tailedness screen fails for one model of the pair
            groups.append(
                (unreliable & np.isfinite(d), UNRELIABLE_COLOR, "unreliable (heavy tails)")
            )
        for keep, color, label in groups:
            err = np.vstack([d[keep] - lo[keep], hi[keep] - d[keep]])
            ax.errorbar(
                d[keep],
                y[keep],
                xerr=np.where(np.isfinite(err), err, 0.0),
                fmt="o",
                color=color,
                ms=4,
                lw=1.5,
                label=label,
            )
        for k in np.flatnonzero(significant & tested):
            a, b = rows[k]
            winner = a if word[k] == "better" else b
            ax.annotate(
                f"{winner} better",
                (1.0, y[k]),
                xycoords=("axes fraction", "data"),
                xytext=(3, 0),
                textcoords="offset points",
                va="center",
                fontsize=7,
                color=DIFFERENT,
                annotation_clip=False,
            )
        ax.set_yticks(y, [f"{a} \u2212 {b}" for a, b in rows])
        ax.set_ylim(-0.7, len(rows) + 0.2)  # room for the legend above the top pair
        ax.grid(False, axis="y")
        ax.set_xlabel(
            f"difference of {_distance_label(result, measure)} (< 0: the first model is better)"
        )
        ci = result.attrs.get("ci", 0.95)
        ax.set_title(
            f"{measure_label(result, measure)}: paired differences, {float(ci):.0%} intervals",
            fontsize=9,
        )
        if len(rows):
            ax.legend(loc="upper center", ncol=2, fontsize=7)
    return ax
