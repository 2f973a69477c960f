"""Comparing the uncertainties of several models of the same points: paired-bootstrap
differences of statistics and scores, ranking probabilities, systematic improvement
probability (Pernot & Savin 2020a, 2020b)."""

from __future__ import annotations

import numpy as np
import xarray as xr

from uqviz._array import stats as stats_kernels
from uqviz._array.lazy import lazy_module
from uqviz.average.tails import TAIL_TESTED, null_p_values, tail_fit
from uqviz.average.validation import TAILEDNESS_SCREENS, tailedness
from uqviz.comparison.points import same_points
from uqviz.engine import checks, seeds
from uqviz.engine.descriptions import describe
from uqviz.engine.options import BootstrapOptions, streams
from uqviz.engine.parallel import resolve_client, run_task, show_progress
from uqviz.engine.statistics import statistics_option
from uqviz.engine.tree import datasets_of, naming_child
from uqviz.scores import joint
from uqviz.scores.coverage import checked_points
from uqviz.scores.predictive import PREDICTIVE_SCORES, point_scores
from uqviz.scores.proper import (
    METHODS,
    cluster_column_means,
    column_intervals,
    grouped_attrs,
    paired_groups,
)

comparison_kernels = lazy_module("uqviz._array.comparison")

__all__ = [
    "compare_models",
    "tail_words",
    "BETTER",
    "WORSE",
    "NO_DIFFERENCE",
    "NOT_TESTED",
    "UNRELIABLE",
]

#: the words of ``comparison`` (the interval of ``distance(model) - distance(versus)``)
BETTER, WORSE, NO_DIFFERENCE, NOT_TESTED = "better", "worse", "no difference", "not tested"
#: the word of a pair where the tailedness screen of the statistic fails for one of the models
#: and the tail-allowing verdicts of the two models do not tell them apart
UNRELIABLE = "unreliable"
#: the tailedness screens of the scores (the Gaussian NLL is the NLL statistic point by point:
#: its differences are those of Z^2; measured: 13 % false alarms on t4 errors unscreened)
SCORE_SCREENS = {"nll": ("Z2",)}
#: registered statistics without a reference whose value is the mean of one per-point value
#: (the SIP, mean gain and mean loss are computed on those values)
#: the statistic whose Student-t null (uqviz.average.tails) gives a score its tail-allowing
#: verdict: the Gaussian NLL score is the NLL statistic point by point
SCORE_TAIL_TESTS = {"nll": "NLL"}
POINT_VALUES = {"MSE": lambda e, u: e * e, "MV": lambda e, u: u * u}
CITATION = (
    "Pernot & Savin (2020a) (systematic improvement probability, mean gain and loss, "
    "ranking probability matrix); Pernot & Savin (2020b) (their applications); "
    "DiCiccio & Efron (1996) (BCa interval)"
)


class _Measure:
    """One measure: how to evaluate its value and distance from column means of a model."""

    def __init__(self, name, kind, stat=None):
        self.name, self.kind, self.stat = name, kind, stat

    def columns(self):
        if self.kind == "score":
            return (self.name,)
        cols = list(self.stat.columns)
        if self.stat.data_reference:
            cols += [c for c in self.stat.reference.columns if c not in cols]
        return tuple(cols)

    def evaluate(self, means, n):
        """(value, distance) from ``means`` (dict column -> array, with log2_scale)."""
        if self.kind == "score":
            v = means[self.name]
            return v, v
        with np.errstate(all="ignore"):
            v = np.asarray(self.stat.func(means, n), dtype=float)
            ref = self.stat.reference
            if ref is None:
                return v, v
            r = ref.func(means, n) if self.stat.data_reference else float(ref)
            return v, np.abs(v - r)


def _measures(statistics, scores):
    out = []
    if statistics is not None:
        for st in statistics_option("statistics", statistics):
            if st.kind != "moments":
                raise ValueError(
                    f"statistics: {st.name!r} is a {st.kind} statistic, not a function of "
                    "column means; compare_models takes the moment statistics (ZM, ZMS, ZVar, "
                    "ZISD, RCE, RCE2, NLL, MSE, MV, RMSE, RMV, ... : "
                    "docs/architecture.md, 'A statistic'); compare a binned or rank statistic "
                    "(ENCE, UCE, ZMSE, CC) with uqviz.validate_with_references on each "
                    "model"
                )
            out.append(_Measure(st.name, "statistic", st))
    if scores is not None:
        for s in checks.names("scores", scores, allowed=PREDICTIVE_SCORES + joint.JOINT_SCORES):
            out.append(_Measure(s, "score"))
    if not out:
        raise ValueError(
            "compare_models needs at least one measure: statistics and scores are both None"
        )
    names = [m.name for m in out]
    if len(set(names)) != len(names):
        raise ValueError(f"measures must be distinct, got {names}")
    return out


def _models(tree):
    if not isinstance(tree, xr.DataTree):
        raise TypeError(
            f"tree: expected an xarray.DataTree with one child per model, got "
            f"{type(tree).__name__}; build one with "
            "xarray.DataTree.from_dict({'model_a': ds_a, 'model_b': ds_b})"
        )
    pairs = datasets_of(tree, variables=None)
    if not all(joint.joint_form(d) for _, d in pairs):
        pairs = datasets_of(tree)  # E, uE in each child (a TypeError naming those without)
    names = [str(n) for n, _ in pairs]
    if len(pairs) < 2:
        raise ValueError(
            f"compare_models needs at least two models (children of the tree "
            f"holding E and uE on dim 'point'), got {len(pairs)}: {names}"
        )
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ValueError(f"model names must be distinct, got {dup} more than once")
    if any(joint.joint_form(d) for _, d in pairs):
        why = joint.joint_same_points(pairs)
        same = not why
    else:
        same, _, why = same_points(pairs)
    if not same:
        raise ValueError(f"the models must forecast the same points: {why}")
    return names, [d for _, d in pairs]


def _model_columns(ds, measures, levels):
    """Per-point columns (M, C) of one model, their names, its log2 scale and the per-point
    values of the measures that have them."""
    if joint.joint_form(ds):
        return _joint_model_columns(ds, measures)
    e, u = checked_points(ds)
    stat_cols = []
    for m in measures:
        if m.kind == "statistic":
            stat_cols += [c for c in m.columns() if c not in stat_cols]
    k = (
        stats_kernels.log2_scale(e, u)
        if any(c in stats_kernels.SCALED_COLUMNS for c in stat_cols)
        else 0
    )
    blocks, names = [], []
    if stat_cols:
        blocks.append(stats_kernels.columns(e, u, tuple(stat_cols), log2_scale=k))
        names += stat_cols
    score_names = tuple(m.name for m in measures if m.kind == "score")
    per_point = {}
    if score_names:
        _, got, sc = point_scores(ds, score_names, levels)
        blocks.append(sc)
        names += list(got)
        per_point.update({s: sc[:, i] for i, s in enumerate(got)})
    for m in measures:
        if m.kind == "statistic" and m.name in POINT_VALUES:
            with np.errstate(over="ignore", under="ignore"):
                per_point[m.name] = POINT_VALUES[m.name](e, u)
    cols = np.column_stack(blocks) if len(blocks) > 1 else blocks[0]
    return cols, names, k, per_point


def _joint_model_columns(ds, measures):
    """:func:`_model_columns` of a joint forecast of several targets: its joint scores only."""
    stats = [m.name for m in measures if m.kind == "statistic"]
    if stats:
        raise ValueError(
            f"statistics: {stats} need E and uE of one target; joint forecasts of several "
            "targets are compared by joint scores: pass statistics=None and scores from "
            f"{list(joint.JOINT_SCORES)}"
        )
    names = tuple(m.name for m in measures)
    _, got, cols = joint.joint_point_scores(ds, names)
    return cols, list(got), 0, {s: cols[:, i] for i, s in enumerate(got)}


def _evaluate(measures, means, names_list, scales, n):
    """values, distances: arrays (n_measures, n_models, ...) from column means (..., C_tot)."""
    n_models = len(names_list)
    vals, dists = [], []
    for m in measures:
        v_m, d_m = [], []
        start = 0
        for i in range(n_models):
            names = names_list[i]
            block = {c: means[..., start + j] for j, c in enumerate(names)}
            block["log2_scale"] = scales[i]
            start += len(names)
            v, d = m.evaluate(block, n)
            v_m.append(v)
            d_m.append(d)
        vals.append(v_m)
        dists.append(d_m)
    return np.asarray(vals, dtype=float), np.asarray(dists, dtype=float)


def _bootstrap(cols, *, n_boot, seed, engine, jackknife, clusters=None):
    """Paired bootstrap means (B, C) and leave-one-out means (M, C) of all columns, with the
    point counts of the replicates and of the jackknife values; ``clusters`` (group code per
    point): whole groups resampled, delete-one-group jackknife (:func:`cluster_column_means`)."""
    m = cols.shape[0]
    if clusters is not None:
        return cluster_column_means(
            cols, clusters, n_boot=n_boot, seed=seed, engine=engine, jackknife=jackknife
        )
    means = comparison_kernels.paired_column_sums(cols, n_boot, seed, engine=engine) / m
    loo = None
    if jackknife:
        with np.errstate(all="ignore"):
            loo = (cols.sum(axis=0)[None, :] - cols) / (m - 1.0)
    return means, m, loo, m - 1.0


def _words(lower, upper):
    words = np.full(lower.shape, NOT_TESTED, dtype=object)
    ok = np.isfinite(lower) & np.isfinite(upper)
    words[ok & (upper < 0)] = BETTER
    words[ok & (lower > 0)] = WORSE
    words[ok & (lower <= 0) & (upper >= 0)] = NO_DIFFERENCE
    return words


def _reliable(measures, dsets):
    """(measure, model): no tailedness screen that questions the measure fails for the
    model (``TAILEDNESS_SCREENS``, Pernot (2024b), Table II; ``SCORE_SCREENS``)."""
    out = np.ones((len(measures), len(dsets)), dtype=bool)
    screened = [
        TAILEDNESS_SCREENS.get(m.name, ())
        if m.kind == "statistic"
        else SCORE_SCREENS.get(m.name, ())
        for m in measures
    ]
    if not any(screened):
        return out
    heavy = [tailedness(ds)["heavy_tail"] for ds in dsets]
    for s, variables in enumerate(screened):
        for v in variables:
            out[s] &= ~np.array([bool(h.sel(variable=v)) for h in heavy])
    return out


def _tail_verdicts(measures, dsets):
    """``(null_p, dfs)``: per (measure, model) the two-sided p-value of the model's
    statistic under calibrated Student-t z-scores as heavy-tailed as its own (the
    tail-allowing test of :func:`uqviz.validate_average`, ``null_p_values``; NaN for a
    measure without one), and per model the degrees of freedom of that null (rows:
    estimate, lower, upper of the 99.9 % set, :func:`uqviz.average.tails.tail_fit`)."""
    names = [
        m.name if m.kind == "statistic" else SCORE_TAIL_TESTS.get(m.name, "") for m in measures
    ]
    null_p = np.full((len(measures), len(dsets)), np.nan)
    dfs = np.full((3, len(dsets)), np.nan)  # estimate, lower, upper
    if not any(n in TAIL_TESTED for n in names):
        return null_p, dfs
    for k, ds in enumerate(dsets):
        e = np.asarray(ds["E"].values, dtype=float)
        u = np.asarray(ds["uE"].values, dtype=float)
        est, region = tail_fit(e, u)
        if region.size:
            dfs[:, k] = est, region[0], region[-1]
        null_p[:, k] = null_p_values(names, e, u, region)
    return null_p, dfs


def tail_words(words, reliable, null_p, alpha):
    """The words of the pairs under a failed tail screen (issue 36).

    Where the screen of a measure fails for one model of a pair (``reliable`` False), the
    paired interval of the difference is too narrow to decide alone: the pair reads
    ``"worse"`` (``"better"``) only when the interval says so *and* the tail-allowing
    verdict of the measure (its Student-t null, ``null_p``) fails for the model (for
    ``versus``) and not for the other; otherwise ``"unreliable"``, never ``"no
    difference"``. ``words``: (measure, model, versus); ``reliable``, ``null_p``: (measure,
    model).

    Examples
    --------
    >>> w = np.array([[["no difference", "better"], ["worse", "no difference"]]], dtype=object)
    >>> tail_words(w.copy(), np.array([[True, False]]), np.array([[0.4, 0.001]]), 0.05)[0].tolist()
    [['no difference', 'better'], ['worse', 'no difference']]
    >>> tail_words(w.copy(), np.array([[True, False]]), np.array([[0.4, 0.3]]), 0.05)[0].tolist()
    [['no difference', 'unreliable'], ['unreliable', 'no difference']]
    """
    both = reliable[:, :, None] & reliable[:, None, :]
    decided = np.isfinite(null_p)
    fails = decided & (np.nan_to_num(null_p, nan=1.0) <= alpha)
    passes = decided & ~fails
    keep = ((words == WORSE) & fails[:, :, None] & passes[:, None, :]) | (
        (words == BETTER) & passes[:, :, None] & fails[:, None, :]
    )
    diagonal = np.eye(words.shape[1], dtype=bool)[None]
    words[~both & (words != NOT_TESTED) & ~keep & ~diagonal] = UNRELIABLE
    return words


def compare_models(
    tree,
    *,
    statistics=("ZMS", "RCE"),
    scores=("nll", "crps"),
    levels=None,
    n_boot=10_000,
    ci=0.95,
    method="bca",
    engine=None,
    client=None,
    rng=None,
    progress=None,
):
    r"""Which of several models of the same points has the better uncertainties, and how sure
    is it: paired-bootstrap differences, ranking probabilities and systematic improvement
    probabilities of statistics and scores.

    Each child of ``tree`` is one model's forecast of the same points. Every measure is
    turned into a *distance*, smaller is better: ``|value - reference|`` for a registered
    statistic with a reference (ZMS: ``|ZMS - 1|``, RCE: ``|RCE|``, NLL: ``|NLL -
    NLL_ref|``), the value itself for a statistic without one (MSE, RMSE, MV, ...) and for
    a proper score (NLL, CRPS, ... of :func:`uqviz.predictive_scores`, negatively oriented).
    One paired bootstrap of the points (the same resamples for every model and measure)
    gives the interval of each value and of each difference of distances, and the ranks
    of the models in each replicate. When the models' points carry a ``group`` coordinate,
    whole groups are resampled (the cluster bootstrap, Davison & Hinkley (1997), section 3.8),
    the same groups for every model; models whose group labels differ are refused. Attrs
    ``resample`` (``"points"`` or ``"groups"``) and ``n_groups`` say which.

    Parameters
    ----------
    tree : xarray.DataTree
        One child per model (at least two), each a dataset with ``E`` and ``uE`` on dim
        ``point`` (:func:`uqviz.from_arrays`, :func:`uqviz.from_predictions` with any form
        of forecast), all with the same number of points and, where given, the same ``y``;
        or joint forecasts of several targets (as :func:`uqviz.compare_forecasts` takes
        them), compared by joint scores with ``statistics=None``.
    statistics : sequence of str or None, default ("ZMS", "RCE")
        Registered moment statistics (functions of column means, ``uqviz.list_statistics()``);
        binned and rank statistics (ENCE, UCE, ZMSE, CC) are refused. None: no statistic.
    scores : sequence of str or None, default ("nll", "crps")
        Proper scores of :func:`uqviz.predictive_scores` that apply to every model's form of
        forecast (``"nll"``, ``"crps"``, ``"crps_fair"``, ``"check"``, ``"interval"``,
        ``"wis"``); of joint forecasts, ``"energy"``, ``"energy_fair"``, ``"variogram"``,
        ``"variogram_fair"``, ``"dss"``. None: no score.
    levels : sequence of float, optional
        Levels of the check and interval scores, as in :func:`uqviz.predictive_scores`.
    n_boot : int, default 10000
        Paired bootstrap replicates (>= 2).
    ci : float, default 0.95
        Confidence level of the intervals, in (0, 1).
    method : {"bca", "percentile", "basic"}, default "bca"
        How the bootstrap intervals are computed (BCa: DiCiccio & Efron (1996), with the
        leave-one-out values of every measure for the acceleration).
    engine : {"numba", "numpy"}, optional
        Resampling kernel (default numba): the resamples of
        ``uqviz._array.resample.resample_sums`` for that engine.
    client : None, "local" or dask.distributed.Client, default None
        Where the bootstrap runs (one task); the numbers do not depend on it.
    rng : None, int, numpy.random.SeedSequence or numpy.random.Generator, default None
        Random stream (docs/conventions.md, "Randomness"); the same ``rng`` gives the
        resamples of :func:`uqviz.compare_forecasts` with the same ``rng``.
    progress : bool or None, default None
        Accepted for the contract; the bootstrap is one kernel call (no bar).

    Returns
    -------
    xarray.Dataset
        Dims ``measure`` (the statistics, then the scores), ``model``, ``versus`` (the same
        labels as ``model``), ``rank`` (1, ..., number of models):

        - ``estimate``, ``ci_lower``, ``ci_upper`` (measure, model): each model's
          statistic or score and its interval;
        - ``distance`` (measure, model): what is compared, smaller is better;
        - ``difference``, ``difference_lower``, ``difference_upper`` (measure, model,
          versus): ``distance(model) - distance(versus)`` and its paired-bootstrap
          interval (antisymmetric; 0 on the diagonal);
        - ``comparison`` (measure, model, versus): ``"better"`` (the whole interval of the
          difference below 0), ``"worse"`` (above 0), ``"no difference"`` (it holds 0, and
          on the diagonal), ``"not tested"`` (the interval cannot be computed),
          ``"unreliable"`` (a measure whose tailedness screen, Pernot (2024b), fails for
          one of the two models, and whose tail-allowing verdicts do not tell the two
          apart: heavy tails make the bootstrap interval of the difference too narrow, 19 %
          false alarms of the ZMS on t4 errors; never "no difference" there, see Notes);
        - ``reliable`` (measure, model): no tailedness screen that questions the statistic
          fails for the model (Z^2 for ZMS, ZVar, NLL and the score nll; uE^2, E^2, Z^2
          for RCE; the other scores are not screened);
        - ``null_p_value`` (measure, model): the two-sided p-value of the model's statistic
          under calibrated Student-t z-scores as heavy-tailed as its own (the tail-allowing
          test of :func:`uqviz.validate_average`; the score nll reads the NLL statistic's;
          NaN for measures without one, and for all when every screen passes), and
          ``tail_df_lower`` (model): the degrees of freedom of that null;
        - ``rank_probability`` (measure, model, rank): the share of the bootstrap replicates
          in which the model has that rank by distance (rank 1 = smallest);
        - ``sip``, ``mean_gain``, ``mean_loss`` (measure, model, versus): the systematic
          improvement probability of ``model`` over ``versus`` and the mean gain and loss,
          on the per-point values of the measures that are means of per-point values (the
          scores, MSE, MV; listed in ``attrs["sip_measures"]``); NaN for the others.

        ``attrs``: the settings, ``n_points``, ``sip_measures``, ``orientation``,
        ``citation``. Plots: ``uqviz.plots.comparison`` (``ranking_matrix``,
        ``sip_matrix``, ``differences``).

    Raises
    ------
    TypeError
        ``tree`` is not a DataTree.
    ValueError
        Fewer than two models; numbers of points or ``y`` that differ (counted); repeated
        model names; a binned or rank statistic; an unknown statistic or score, or a score
        that does not apply to a model's form; no measure; bad E/uE (non-finite, uE <= 0,
        counted, naming the model).

    See Also
    --------
    uqviz.compare_forecasts : two forecasts, per score, any form.
    uqviz.validate_average : one model's statistics against their references.

    Notes
    -----
    With per-point columns :math:`c_{ki}` (for model k: :math:`Z^2`, :math:`E^2`,
    :math:`u_E^2`, :math:`\ln u_E^2`, the per-point scores) every measure is a smooth
    function of the column means, :math:`d_k = g(\bar c_k)`. A bootstrap replicate draws
    the points with replacement once, :math:`w_i` = number of draws of point i, and gives
    :math:`\bar c^*_k = \sum_i w_i c_{ki} / M` for every column of every model (the same
    :math:`w` for all: paired), hence every :math:`d^*_k` and difference
    :math:`d^*_a - d^*_b`. The BCa acceleration comes from the leave-one-out means.
    The ranking probability :math:`P_r(k, r)` is the share of replicates in which
    :math:`d^*_k` has rank r (Pernot & Savin (2020a); ErrViewLib's ``rankBS``); models
    tied in a replicate share the ranks they span equally, so that rows and columns sum
    to 1.

    Under a failed tail screen (``reliable`` False for one model of a pair) heavy tails
    widen the zone of doubt; they do not erase the answer (issue 36). A pair then reads
    "worse" (or "better") only when the interval of the difference excludes 0 that way
    *and* the tail-allowing verdict of the measure, ``null_p_value <= 1 - ci``, fails for
    the worse model and not for the other (``tail_words``): a miscalibration larger
    than its tails explain, beside a model whose tails explain its departure. Otherwise
    the pair is "unreliable". Measured in docs/guide/verdicts.md ("Comparing two models").

    For a measure that is the mean of per-point values :math:`v_{ki}` (smaller is better),
    with :math:`\delta_i = v_{bi} - v_{ai}` for ``model`` = a, ``versus`` = b
    (Pernot & Savin (2020a); ErrViewLib compares absolute errors, here the per-point
    scores):

    .. math::

       \mathrm{SIP}_{a,b} = \frac1M \sum_i \mathbb{1}\{\delta_i > 0\}, \quad
       \mathrm{MG}_{a,b} = \langle \delta_i \rangle_{\delta_i > 0}, \quad
       \mathrm{ML}_{a,b} = \langle \delta_i \rangle_{\delta_i < 0}

    (ties, :math:`\delta_i = 0`, count for neither: :math:`\mathrm{SIP}_{a,b} +
    \mathrm{SIP}_{b,a} \le 1`), so that :math:`\bar v_b - \bar v_a = \mathrm{SIP}_{a,b}
    \mathrm{MG}_{a,b} + \mathrm{SIP}_{b,a} \mathrm{ML}_{a,b}`; MG > 0, ML < 0 (0 where no
    point improves, or worsens).

    References
    ----------
    - Pernot & Savin (2020a): SIP, mean gain and mean loss.
    - Pernot & Savin (2020a): ranking probability matrix from the bootstrap.
    - Pernot & Savin (2020b): SIP and ranking matrices in practice.
    - DiCiccio & Efron (1996): the BCa interval.
    - Gneiting & Raftery (2007): proper scores.

    Full entries: :doc:`/docs/references`.

    Examples
    --------
    >>> import numpy as np, xarray as xr, uqviz
    >>> rng = np.random.default_rng(0)
    >>> u = rng.uniform(0.5, 2.0, 2000)
    >>> e = u * rng.normal(size=2000)
    >>> tree = xr.DataTree.from_dict({"calibrated": uqviz.from_arrays(e, u),
    ...                               "too_small": uqviz.from_arrays(e, u / 2)})
    >>> res = uqviz.compare_models(tree, n_boot=500, rng=1)
    >>> res["measure"].values.tolist()
    ['ZMS', 'RCE', 'nll', 'crps']
    >>> res["comparison"].sel(model="calibrated", versus="too_small").values.tolist()
    ['better', 'better', 'better', 'better']
    >>> float(res["rank_probability"].sel(measure="nll", model="calibrated", rank=1))
    1.0

    Heavy tails: a calibrated t3 model against the same t3 errors with uE twice too small
    (its ZMS about 4, far beyond what such tails explain), and against a calibrated t3
    model of other errors (no conclusion):

    >>> t3 = u * rng.standard_t(3, 2000) / np.sqrt(3.0)
    >>> t3b = u * rng.standard_t(3, 2000) / np.sqrt(3.0)
    >>> tree = xr.DataTree.from_dict({"t3": uqviz.from_arrays(t3, u),
    ...                               "t3_too_small": uqviz.from_arrays(t3, u / 2),
    ...                               "t3_other": uqviz.from_arrays(t3b, u)})
    >>> res = uqviz.compare_models(tree, statistics=("ZMS",), scores=None, n_boot=500, rng=1)
    >>> res["comparison"].sel(measure="ZMS", model="t3").values.tolist()
    ['no difference', 'better', 'unreliable']
    """
    measures = _measures(statistics, scores)
    levels = None if levels is None else checks.levels("levels", levels)
    boot = BootstrapOptions.check(
        n_boot=n_boot, ci=ci, method=method, rng=rng, engine=engine, methods=METHODS
    )
    n_boot, ci, method, engine = boot.n_boot, boot.ci, boot.method, boot.engine
    client = resolve_client(client)
    show_progress(progress)
    r = streams(rng, "pair").pair  # compare_forecasts's stream of one pair
    names, dsets = _models(tree)
    boot = paired_groups(boot, *dsets)  # the models of the same points share the groups
    n_models = len(names)
    blocks, col_names, scales, per_point = [], [], [], []
    for name, ds in zip(names, dsets):
        with naming_child(name):
            c, cn, k, pp = _model_columns(ds, measures, levels)
        blocks.append(c)
        col_names.append(cn)
        scales.append(k)
        per_point.append(pp)
    cols = np.ascontiguousarray(np.column_stack(blocks))
    m = cols.shape[0]
    if m < 2:
        raise ValueError(f"compare_models: the bootstrap needs at least 2 points, got M = {m}")
    means, n_rep, loo, n_loo = run_task(
        _bootstrap,
        cols,
        n_boot=n_boot,
        seed=seeds.kernel_seed(r),
        engine=engine,
        jackknife=method == "bca",
        clusters=boot.clusters,
        client=client,
    )
    full = cols.mean(axis=0)
    est_v, est_d = _evaluate(measures, full, col_names, scales, m)  # (S, K)
    rep_v, rep_d = _evaluate(measures, means, col_names, scales, n_rep)  # (S, K, B)
    jack_v = jack_d = None
    if loo is not None:
        jack_v, jack_d = _evaluate(measures, loo, col_names, scales, n_loo)  # (S, K, M)
    n_s = len(measures)
    # intervals of the values
    lo_v, hi_v, _ = column_intervals(
        est_v.ravel(),
        rep_v.reshape(n_s * n_models, -1),
        None if jack_v is None else jack_v.reshape(n_s * n_models, -1),
        ci=ci,
        method=method,
        name="values",
        stacklevel=3,
    )
    # differences of distances, pairs a < b, mirrored
    ia, ib = np.triu_indices(n_models, 1)
    est_p = est_d[:, ia] - est_d[:, ib]  # (S, P)
    rep_p = rep_d[:, ia] - rep_d[:, ib]  # (S, P, B)
    jack_p = None if jack_d is None else jack_d[:, ia] - jack_d[:, ib]
    flat_est = est_p.ravel()
    flat_rep = rep_p.reshape(flat_est.size, -1)
    flat_jack = None if jack_p is None else jack_p.reshape(flat_est.size, -1)
    constant = np.all(flat_rep == flat_rep[:, :1], axis=1) & np.isfinite(flat_rep[:, 0])
    lo_p = np.where(constant, flat_rep[:, 0], np.nan)
    hi_p = lo_p.copy()
    if np.any(~constant):
        sel = ~constant
        lo_s, hi_s, _ = column_intervals(
            flat_est[sel],
            flat_rep[sel],
            None if flat_jack is None else flat_jack[sel],
            ci=ci,
            method=method,
            name="differences",
            stacklevel=3,
        )
        lo_p[sel], hi_p[sel] = lo_s, hi_s
    shape3 = (n_s, n_models, n_models)
    diff = np.zeros(shape3)
    dlo = np.zeros(shape3)
    dhi = np.zeros(shape3)
    lo_p, hi_p = lo_p.reshape(est_p.shape), hi_p.reshape(est_p.shape)
    diff[:, ia, ib], diff[:, ib, ia] = est_p, -est_p
    dlo[:, ia, ib], dhi[:, ia, ib] = lo_p, hi_p
    dlo[:, ib, ia], dhi[:, ib, ia] = -hi_p, -lo_p
    words = _words(dlo, dhi)
    reliable = _reliable(measures, dsets)
    null_p, dfs = (
        _tail_verdicts(measures, dsets)
        if not reliable.all()
        else (np.full(reliable.shape, np.nan), np.full((3, n_models), np.nan))
    )
    words = tail_words(words, reliable, null_p, 1.0 - ci)
    di = np.arange(n_models)
    words[:, di, di] = NO_DIFFERENCE
    # ranking probabilities
    rank_p = np.stack([comparison_kernels.rank_probabilities(rep_d[s]) for s in range(n_s)])
    # SIP, mean gain, mean loss
    sip = np.full(shape3, np.nan)
    gain = np.full(shape3, np.nan)
    loss = np.full(shape3, np.nan)
    sip_measures = [mm.name for mm in measures if mm.name in per_point[0]]
    for s, mm in enumerate(measures):
        if mm.name in sip_measures:
            vals = np.vstack([pp[mm.name] for pp in per_point])
            sip[s], gain[s], loss[s] = comparison_kernels.improvement(vals)
    d2, d3 = ("measure", "model"), ("measure", "model", "versus")
    out = xr.Dataset(
        {
            "estimate": (d2, est_v),
            "ci_lower": (d2, lo_v.reshape(n_s, n_models)),
            "ci_upper": (d2, hi_v.reshape(n_s, n_models)),
            "distance": (d2, est_d),
            "difference": (d3, diff),
            "difference_lower": (d3, dlo),
            "difference_upper": (d3, dhi),
            "comparison": (d3, words.astype(str)),
            "rank_probability": (("measure", "model", "rank"), rank_p),
            "sip": (d3, sip),
            "mean_gain": (d3, gain),
            "mean_loss": (d3, loss),
            "reliable": (d2, reliable),
            "null_p_value": (
                d2,
                null_p,
                {
                    "long_name": "two-sided p-value of the model's "
                    "statistic under calibrated Student-t "
                    "z-scores, the largest over the degrees "
                    "of freedom tail_df_lower-tail_df_upper "
                    "plus 0.001 (the tail-allowing verdict; "
                    "computed when a screen fails)"
                },
            ),
            "tail_df": (("model",), dfs[0]),
            "tail_df_lower": (("model",), dfs[1]),
            "tail_df_upper": (("model",), dfs[2]),
        },
        coords={
            "measure": [mm.name for mm in measures],
            "model": names,
            "versus": names,
            "rank": np.arange(1, n_models + 1),
        },
    )
    out = describe(out)
    out["comparison"].attrs["long_name"] = (
        "how model compares with versus: the interval of distance(model) - distance(versus) decides"
    )
    out.attrs.update(
        {
            "statistics": [mm.name for mm in measures if mm.kind == "statistic"],
            "scores": [mm.name for mm in measures if mm.kind == "score"],
            "n_boot": n_boot,
            "ci": ci,
            "method": method,
            "rng": boot.attrs["rng"],
            "engine": engine,
            "n_points": m,
            "sip_measures": sip_measures,
            "orientation": "distance: negative (smaller is better)",
            "citation": CITATION,
            **grouped_attrs(boot),
        }
    )
    if levels is not None:
        out.attrs["levels"] = levels.tolist()
    return out
