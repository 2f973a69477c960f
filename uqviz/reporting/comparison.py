"""The comparison section of a report on a DataTree of models of the same points.

:func:`decide` says whether the children of a tree get the section (through
:func:`uqviz.comparison.same_points`, the check of :func:`uqviz.compare_models` too),
:func:`comparison_section` runs :func:`uqviz.compare_models` and turns its result into the
section's numbers (JSON-ready), sentences and figures. The words come from
:mod:`uqviz.reporting.wording`, the figures from :mod:`uqviz.plots.comparison`.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import xarray as xr

from uqviz.comparison import models  # called as models.compare_models: patchable
from uqviz.comparison.measures import measure_label, measure_reference, sip_measures
from uqviz.comparison.points import same_points
from uqviz.engine.tree import datasets_of
from uqviz.predictive.forecast import forecast_form
from uqviz.reporting import wording
from uqviz.reporting.serialise import dataset_to_json, jsonable
from uqviz.scores.predictive import FORM_SCORES

__all__ = ["decide", "comparison_block", "comparison_section"]


def decide(data, compare) -> bool:
    """Whether the report of ``data`` gets a comparison section (the option ``compare``).

    ``None`` (auto): ``data`` is a DataTree of at least two datasets of the same number of
    points that all give the same observed values ``y``; ``True``: the same without needing
    ``y`` (a ValueError says why the datasets cannot be models of the same points);
    ``False``: never.

    Examples
    --------
    >>> import uqviz
    >>> decide(uqviz.synthetic.nig(100, n_datasets=2, rng=0), None)
    False
    >>> decide(uqviz.synthetic.nig(100, n_datasets=2, rng=0), True)
    True
    """
    if compare is False:
        return False
    if isinstance(data, xr.Dataset):
        if compare:
            raise ValueError(
                "compare=True: a comparison of models needs a DataTree with one "
                "child per model, got one Dataset"
            )
        return False
    same, identified, why = same_points(datasets_of(data))
    if compare:
        if not same:
            raise ValueError(f"compare=True: the datasets are not models of the same points: {why}")
        return True
    return identified


#: the scores the report compares, where they apply to every model's form of forecast
REPORT_SCORES = ("nll", "crps")


def common_scores(pairs):
    """The scores of :data:`REPORT_SCORES` that apply to the forecast of every dataset
    ``[(name, Dataset), ...]`` (``uqviz.scores.predictive.FORM_SCORES``), or None.

    Examples
    --------
    >>> import uqviz
    >>> ds = uqviz.from_arrays([0.1, 0.2], [1.0, 1.0])
    >>> common_scores([("a", ds), ("b", ds)])
    ('nll', 'crps')
    """
    forms = [forecast_form(ds) for _, ds in pairs]
    common = tuple(s for s in REPORT_SCORES if all(s in FORM_SCORES[f] for f in forms))
    return common or None


def _num(x):
    x = float(x)
    return x if math.isfinite(x) else None


def comparison_block(result) -> dict:
    """The numbers of a :func:`uqviz.compare_models` result as the report words them.

    Returns a JSON-ready dict: ``models``, ``measures``, ``labels`` (measure -> its name for
    a reader: a score in capitals), ``references`` (measure -> the reference of its distance: a
    number, ``"data"``, or None for a score); ``table`` (measure -> model ->
    ``value``, ``lower``, ``upper``, ``distance``, ``most_probable_rank`` and its
    ``probability``); ``pairs`` (measure -> one entry per pair of models, the better model
    first where the interval of the difference excludes 0, else in the result's order:
    ``model``, ``versus``, ``comparison``, ``difference``, ``lower``, ``upper``, ``reference``,
    ``text``); ``sip_measures`` (the measures with SIP values).
    """
    models = [str(m) for m in result["model"].values]
    measures = [str(m) for m in result["measure"].values]
    table, pairs = {}, {}
    for m in measures:
        res = result.sel(measure=m)
        ranks = res["rank"].values
        table[m] = {}
        for k in models:
            p = res["rank_probability"].sel(model=k).values.astype(float)
            best = int(np.nanargmax(p)) if np.isfinite(p).any() else None
            table[m][k] = {
                "value": _num(res["estimate"].sel(model=k)),
                "lower": _num(res["ci_lower"].sel(model=k)),
                "upper": _num(res["ci_upper"].sel(model=k)),
                "distance": _num(res["distance"].sel(model=k)) if "distance" in res else None,
                "most_probable_rank": None if best is None else int(ranks[best]),
                "probability": None if best is None else _num(p[best]),
            }
        ref = measure_reference(result, m)
        label = measure_label(result, m)
        pairs[m] = []
        for i, a in enumerate(models):
            for b in models[i + 1 :]:
                word = str(res["comparison"].sel(model=a, versus=b).values.item())
                if word == "worse":  # b is better: say it from b's side
                    a_, b_, word = b, a, "better"
                else:
                    a_, b_ = a, b
                sel = dict(model=a_, versus=b_)
                entry = {
                    "measure": label,
                    "model": a_,
                    "versus": b_,
                    "comparison": word,
                    "difference": _num(res["difference"].sel(**sel)),
                    "lower": _num(res["difference_lower"].sel(**sel)),
                    "upper": _num(res["difference_upper"].sel(**sel)),
                    "reference": ref,
                }
                entry["text"] = wording.pair_line(entry)
                pairs[m].append(entry)
    return {
        "models": models,
        "measures": measures,
        "labels": {m: measure_label(result, m) for m in measures},
        "references": {m: measure_reference(result, m) for m in measures},
        "table": table,
        "pairs": pairs,
        "sip_measures": sip_measures(result),
    }


def _grid(n):
    import matplotlib.pyplot as plt

    ncols = min(2, n)
    nrows = -(-n // ncols)
    fig, axes = plt.subplots(
        nrows, ncols, figsize=(4.8 * ncols, 3.8 * nrows), layout="constrained", squeeze=False
    )
    for ax in axes.ravel()[n:]:
        ax.set_visible(False)
    return fig, list(axes.ravel()[:n])


def comparison_figures(result, block) -> dict:
    """``{name: matplotlib Figure}``: the ranking matrices (one panel per measure), the SIP
    matrices (each measure with SIP values) and the differences."""
    from uqviz.plots import comparison as cp  # lazy: plotting

    figs = {}
    for name, plot, measures in (
        ("comparison_ranking", cp.ranking_matrix, block["measures"]),
        ("comparison_sip", cp.sip_matrix, block["sip_measures"]),
        ("comparison_differences", cp.differences, block["measures"]),
    ):
        if not measures:
            continue
        fig, axes = _grid(len(measures))
        for ax, m in zip(axes, measures):
            plot(result, measure=m, ax=ax)
        figs[name] = fig
    return figs


def comparison_section(
    tree, *, n_boot, rng, client=None, engine=None, progress=None, figures=True, forced=False
):
    """Compare the models of ``tree`` (:func:`uqviz.compare_models`, ``n_boot`` replicates,
    stream ``rng``; ZMS, RCE and the scores of :func:`common_scores`): ``(numbers,
    figures)``, ``numbers`` JSON-ready with ``conclusion`` (one sentence per measure) and
    ``warnings``, ``figures`` matplotlib Figures by name. A comparison that cannot be computed
    raises when ``forced`` (``compare=True``); otherwise (auto) the numbers say why it was
    skipped (``skipped``) and the conclusion says it."""
    how = "requested" if forced else "auto"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            res = models.compare_models(
                tree,
                scores=common_scores(datasets_of(tree)),
                n_boot=n_boot,
                rng=rng,
                client=client,
                engine=engine,
                progress=progress,
            )
        except (TypeError, ValueError) as exc:
            if forced:
                raise
            why = f"the models could not be compared: {exc}"
            return {
                "compare": how,
                "skipped": why,
                "warnings": [],
                "conclusion": [f"Comparison of the models: not done ({why})."],
            }, {}
    block = comparison_block(res)
    lines = [
        wording.comparison_line(block["labels"][m], block["table"][m], block["pairs"][m])
        for m in block["measures"]
    ]
    numbers = {
        "compare": how,
        "n_points": int(datasets_of(tree)[0][1].sizes["point"]),
        **block,
        "conclusion": lines,
        "warnings": sorted({f"comparison: {w.message}" for w in caught}),
        "result": dataset_to_json(res),
    }
    figs = comparison_figures(res, block) if figures else {}
    return jsonable(numbers), figs
