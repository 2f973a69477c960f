"""Scores of the forecast as given (ensembles, quantiles, intervals), and the paired comparison
of two forecasts of the same points."""

from __future__ import annotations

import numpy as np
import xarray as xr

from uqviz._array import scores as score_kernels
from uqviz._array.lazy import lazy_module
from uqviz.engine import checks, seeds
from uqviz.engine.descriptions import describe
from uqviz.engine.options import BootstrapOptions
from uqviz.engine.parallel import resolve_client, run_task
from uqviz.engine.tree import datasets_of, map_datasets, naming_child
from uqviz.predictive.forecast import forecast_form, observed
from uqviz.scores.coverage import checked_points, generative_for
from uqviz.scores import joint
from uqviz.scores.proper import (
    DEFAULT_SCORE_LEVELS,
    METHODS,
    bootstrap_column_means,
    cluster_column_means,
    column_intervals,
    grouped_attrs,
    paired_groups,
    score_columns,
)

predictive_scores_kernels = lazy_module("uqviz._array.predictive_scores")

__all__ = [
    "predictive_scores",
    "compare_forecasts",
    "point_scores",
    "PREDICTIVE_SCORES",
    "FORM_SCORES",
]

#: every score of :func:`predictive_scores`, in the order of its results
PREDICTIVE_SCORES = ("nll", "crps", "crps_fair", "check", "interval", "wis")
#: the scores that apply to each form of the forecast (docs/conventions.md, ``scores``)
FORM_SCORES = {
    "std": ("nll", "crps", "check", "interval"),
    "variance": ("nll", "crps", "check", "interval"),
    "samples": ("crps", "crps_fair"),
    "quantiles": ("crps", "check", "interval", "wis"),
    "interval": ("interval",),
}
CITATION = (
    "Gneiting & Raftery (2007) (CRPS, quantile and interval scores); Ferro (2014) "
    "(fair CRPS); Bracher et al. (2021) (weighted interval score, CRPS from quantiles)"
)


def _observed(ds):
    """y (the observations), or E where the dataset holds no y (error space, prediction 0):
    :func:`uqviz.predictive.observed`, as an array."""
    return np.asarray(observed(ds)[0].values, dtype=float)


def _form_scores(form, scores, ds, levels):
    """The scores computed for one dataset of this form: those asked for (all applying to
    the form when None), or a ValueError naming the form and its scores."""
    applies = FORM_SCORES[form]
    if scores is None:
        if form == "quantiles":
            tau = _quantile_levels(ds, levels)
            pairs, med, lonely = predictive_scores_kernels.central_pairs(tau)
            return tuple(
                s
                for s in applies
                if (s != "interval" or pairs)
                and (s != "wis" or (pairs and med >= 0 and not lonely))
            )
        return applies
    bad = [s for s in scores if s not in applies]
    if bad:
        raise ValueError(
            f"scores {bad} do not apply to a forecast given as {form!r}, which "
            f"takes {list(applies)} (docs/api/scores.md, 'Scores of the forecast "
            "as given')"
        )
    return tuple(scores)


def _quantile_levels(ds, levels):
    """The levels scored of a quantile forecast: all given ones, or the subset ``levels``."""
    if "quantiles" not in ds.variables or "level" not in ds.coords:
        raise ValueError(
            "a forecast given as 'quantiles' needs the variable quantiles (dims "
            "point, level) and the coordinate level"
        )
    given = np.asarray(ds["level"].values, dtype=float)
    if levels is None:
        return given
    missing = [
        float(t)
        for t in levels
        if not np.any(np.abs(given - t) <= predictive_scores_kernels.LEVEL_TOL)
    ]
    if missing:
        raise ValueError(
            f"levels: {len(missing)} level(s) not among the given quantile levels "
            f"{given.tolist()}: {missing}"
        )
    return np.sort(np.asarray(levels, dtype=float))


def _point_scores(ds, scores, levels):
    """Per-point score columns of one dataset as given.

    Returns ``(form, names, cols (M, S), tau or None, level_cols (M, K) or None, extra)``:
    ``level_cols`` are the quantile scores per level (quantile form, ``"check"``).
    """
    form = forecast_form(ds)
    names = _form_scores(form, scores, ds, levels)
    extra = {}
    if form in ("std", "variance"):
        e, u = checked_points(ds)
        gen = generative_for(ds.attrs.get("generative", "normal"), ds)
        if {"nll", "crps"} & set(names) and gen.kind not in score_kernels.CLOSED_FORM_KINDS:
            raise ValueError(
                f"generative={gen.name!r}: NLL and CRPS of a forecast given as "
                f"{form!r} are available for the normal, Student-t and Laplace D "
                "only (closed forms)"
            )
        lv = DEFAULT_SCORE_LEVELS.copy() if levels is None else np.asarray(levels, dtype=float)
        with np.errstate(over="ignore", under="ignore"):
            cols = score_columns(e, u, names, gen, lv)
        extra = {"generative": gen.name, "levels": lv}
        return form, names, cols, None, None, extra
    if levels is not None and form != "quantiles":
        raise ValueError(
            f"levels apply to forecasts given as 'std' or 'quantiles', not "
            f"{form!r} (got levels={list(np.atleast_1d(levels))})"
        )
    y = _observed(ds)
    cols = {}
    tau = level_cols = None
    if form == "samples":
        if "samples" not in ds.variables:
            raise ValueError(
                "a forecast given as 'samples' needs the variable samples (dims point, sample)"
            )
        x = ds["samples"].transpose("point", ...).values
        plain, fair = predictive_scores_kernels.crps_ensemble_pair(y, x)
        cols = {"crps": plain, "crps_fair": fair}
    elif form == "interval":
        for v in ("lower", "upper"):
            if v not in ds.variables:
                raise ValueError(
                    f"a forecast given as 'interval' needs the variables lower "
                    f"and upper; {v} is missing"
                )
        level = ds["lower"].attrs.get("level", ds.attrs.get("level"))
        if level is None:
            raise ValueError(
                "a forecast given as 'interval' needs its nominal coverage: "
                "attrs['level'] of lower (or of the dataset)"
            )
        y, lo, hi, level = predictive_scores_kernels.check_interval(
            y, ds["lower"].values, ds["upper"].values, level
        )
        cols = {"interval": predictive_scores_kernels.interval_score(y, lo, hi, level)}
        extra = {"level": float(level)}
    else:  # quantiles
        tau = _quantile_levels(ds, levels)
        q_all = ds["quantiles"].transpose("point", "level")
        given = np.asarray(ds["level"].values, dtype=float)
        idx = [int(np.argmin(np.abs(given - t))) for t in tau]
        q = q_all.values if idx == list(range(given.size)) else q_all.values[:, idx]
        y, q, tau = predictive_scores_kernels.check_quantiles(y, q, tau)
        if "crps" in names:
            cols["crps"] = predictive_scores_kernels.crps_quantiles(y, q, tau)
        if "check" in names:
            level_cols = predictive_scores_kernels.quantile_scores(y, q, tau)
            cols["check"] = level_cols.mean(axis=1)
        if "interval" in names:
            pairs, _ = predictive_scores_kernels.check_levels_pairs(
                tau, median=False, score="interval score"
            )
            lo = q[:, [i for i, _ in pairs]]
            hi = q[:, [j for _, j in pairs]]
            p = np.array([tau[j] - tau[i] for i, j in pairs])
            inter = predictive_scores_kernels.interval_score(y, lo, hi, p)
            cols["interval"] = inter.mean(axis=1)
        if "wis" in names:
            cols["wis"] = predictive_scores_kernels.weighted_interval_score(y, q, tau)
        extra = {"levels": tau}
    return form, names, np.column_stack([cols[s] for s in names]), tau, level_cols, extra


def point_scores(ds, scores, levels=None):
    """Per-point scores of one dataset's forecast as given (the columns whose means
    :func:`predictive_scores` reports).

    Parameters
    ----------
    ds : xarray.Dataset
        One dataset (any form of :func:`uqviz.from_predictions`).
    scores : sequence of str or None
        Scores applying to the form (None: all of them).
    levels : sequence of float, optional
        As in :func:`predictive_scores`.

    Returns
    -------
    form : str
    names : tuple of str
    cols : ndarray, shape (M, len(names))

    Examples
    --------
    >>> import uqviz
    >>> ds = uqviz.from_arrays(np.array([0.0, 1.0]), np.array([1.0, 1.0]))
    >>> form, names, cols = point_scores(ds, ("nll",))
    >>> form, names, np.round(cols[:, 0], 4).tolist()
    ('std', ('nll',), [0.9189, 1.4189])
    """
    form, names, cols, _, _, _ = _point_scores(ds, scores, levels)
    return form, names, cols


def _intervals(cols, *, n_boot, rng, ci, method, engine, name, clusters=None):
    """Estimates (column means) and their paired-bootstrap intervals and se; ``clusters``
    (group code per point): whole groups resampled (:func:`cluster_column_means`)."""
    est = cols.mean(axis=0)
    if not n_boot:
        return est, None, None, None
    kw = dict(n_boot=n_boot, seed=seeds.kernel_seed(rng), engine=engine, jackknife=method == "bca")
    if clusters is None:
        means, loo = bootstrap_column_means(cols, **kw)
    else:
        means, _, loo, _ = cluster_column_means(cols, clusters, **kw)
    lower, upper, se = column_intervals(
        est, means.T, None if loo is None else loo.T, ci=ci, method=method, name=name, stacklevel=6
    )
    return est, lower, upper, se


def _predictive_one(ds, *, rng, scores, levels, boot):
    """One dataset's scores; ``boot``: the :class:`~uqviz.engine.options.BootstrapOptions`
    (``n_boot`` 0: the estimates alone; the stream is ``rng``)."""
    boot = boot.for_data(ds)  # the cluster bootstrap when the points carry groups
    n_boot, ci, method, engine = boot.n_boot, boot.ci, boot.method, boot.engine
    form, names, cols, tau, level_cols, extra = _point_scores(ds, scores, levels)
    m = cols.shape[0]
    if n_boot and m < 2:
        raise ValueError(
            f"data: the bootstrap needs at least 2 points, got M = {m}; use "
            "n_boot=0 for the estimates alone"
        )
    n_s = len(names)
    allc = cols if level_cols is None else np.column_stack([cols, level_cols])
    est, lower, upper, se = _intervals(
        allc,
        n_boot=n_boot,
        rng=rng,
        ci=ci,
        method=method,
        engine=engine,
        name=ds.attrs.get("name", ""),
        clusters=boot.clusters,
    )
    data = {"estimate": ("score", est[:n_s]), "forecast": ((), form)}
    coords = {"score": list(names)}
    if level_cols is not None:
        data["check"] = ("level", est[n_s:])
        coords["level"] = tau
    if n_boot:
        data.update(
            {
                "ci_lower": ("score", lower[:n_s]),
                "ci_upper": ("score", upper[:n_s]),
                "se": ("score", se[:n_s]),
            }
        )
        if level_cols is not None:
            data.update(
                {"check_lower": ("level", lower[n_s:]), "check_upper": ("level", upper[n_s:])}
            )
    data["n_points"] = ((), m)
    out = xr.Dataset(data, coords=coords, attrs=grouped_attrs(boot))
    if "generative" in extra:
        out.attrs["generative"] = extra["generative"]
    return out


def predictive_scores(
    data,
    *,
    scores=None,
    levels=None,
    n_boot=10_000,
    ci=0.95,
    method="bca",
    engine=None,
    client=None,
    rng=None,
):
    r"""Proper scores of the forecast in the form it was given, with paired-bootstrap intervals.

    The forecast of each dataset is read in its native form (``attrs["forecast"]``, see
    :func:`uqviz.from_predictions`), not reduced to a standard uncertainty:

    ============  =====================================================================
    form          scores (all negatively oriented, in the units of y; NLL in nats)
    ============  =====================================================================
    samples       ``"crps"``: CRPS of the ensemble's empirical distribution (=
                  properscoring's and scoringrules' ``crps_ensemble``); ``"crps_fair"``:
                  the fair CRPS (Ferro 2014)
    quantiles     ``"crps"``: CRPS from the quantiles, ``2/K sum_k QS_tau_k``;
                  ``"check"``: the quantile (pinball) score averaged over the levels, and
                  per level as the variable ``check``; ``"interval"``: the interval score
                  averaged over the central intervals formed by the pairs of levels
                  ``(tau, 1 - tau)``; ``"wis"``: the weighted interval score (Bracher et
                  al. 2021; levels symmetric about 0.5 with the median)
    interval      ``"interval"``: the interval score of the given interval at its level
    std,          the closed forms of :func:`uqviz.proper_scores` for ``E ~ uE * D``, D the
    variance      dataset's ``attrs["generative"]`` (normal by default): ``"nll"``,
                  ``"crps"``, ``"check"``, ``"interval"`` over ``levels``
    ============  =====================================================================

    A score asked for that does not apply to the form is a ValueError naming the scores
    that do. All intervals come from the same bootstrap resamples of the points (paired),
    through the code of :func:`uqviz.proper_scores`; of whole groups when the points carry a
    ``group`` coordinate (the cluster bootstrap; attrs ``resample`` and ``n_groups``).

    Parameters
    ----------
    data : xarray.Dataset or xarray.DataTree
        A dataset with the forecast as given (:func:`uqviz.from_predictions`; a dataset
        without ``attrs["forecast"]`` is a ``"std"`` forecast ``uE * D``); a DataTree gives
        one result per dataset, on dim ``dataset``.
    scores : sequence of str, optional
        Among ``"nll"``, ``"crps"``, ``"crps_fair"``, ``"check"``, ``"interval"``,
        ``"wis"``, distinct, each applying to the form; default all the scores of the
        form (quantiles: ``"interval"`` when two levels pair up, ``"wis"`` when all do and
        the median is given).
    levels : sequence of float, optional
        Quantile forecasts: the given levels scored (default all); std/variance: the levels
        of the check and interval scores (default the 99 levels 0.01, ..., 0.99, as
        :func:`uqviz.proper_scores`); not taken by the other forms.
    n_boot : int, default 10000
        Bootstrap replicates; 0: no interval (estimates only).
    ci : float, default 0.95
        Confidence level of the intervals, in (0, 1).
    method : {"bca", "percentile", "basic"}, default "bca"
        How the bootstrap interval is computed (BCa: DiCiccio & Efron (1996)).
    engine : {"numba", "numpy"}, optional
        Resampling kernel of the bootstrap (default numba).
    client : None, "local" or dask.distributed.Client, default None
        Where the bootstrap runs (datasets as tasks) (docs/conventions.md); the numbers do
        not depend on it.
    rng : None, int, numpy.random.SeedSequence or numpy.random.Generator, default None
        Random stream (docs/conventions.md, "Randomness"): the same ``rng`` gives the same
        numbers.

    Returns
    -------
    xarray.Dataset
        On ``score``: ``estimate`` (the mean of the per-point scores) and, when ``n_boot``
        > 0, ``ci_lower``, ``ci_upper``, ``se``; for quantile forecasts scored by
        ``"check"``, ``check`` on ``level`` (with ``check_lower``, ``check_upper``); the
        scalars ``n_points`` and ``forecast`` (the form scored).

    Raises
    ------
    ValueError
        A score that does not apply to the form; an ensemble of one member; non-finite
        members, quantiles or bounds (counted); crossing quantiles or ``lower > upper``
        (counted); levels not symmetric about 0.5 for ``"wis"`` (named); levels not given.

    See Also
    --------
    uqviz.proper_scores : the scores of ``E ~ uE * D``, with sharpness and dispersion.
    uqviz.compare_forecasts : the paired difference of the scores of two forecasts.

    Notes
    -----
    With the members sorted, :math:`x_{(1)} \le \dots \le x_{(m)}`,

    .. math::

       \mathrm{CRPS} = \frac1m \sum_i |x_i - y| - \frac{1}{m^2} \sum_i (2i - m - 1) x_{(i)},
       \qquad \mathrm{CRPS}_\mathrm{fair} = \frac1m \sum_i |x_i - y|
           - \frac{1}{m(m-1)} \sum_i (2i - m - 1) x_{(i)}

    (the energy form of Gneiting & Raftery (2007), eq. 21, over the m^2 pairs or the
    m(m - 1) distinct ones, Ferro (2014); O(m log m) per point). The quantile score is
    :math:`QS_\tau(q, y) = (\mathbb{1}\{y < q\} - \tau)(q - y)` (Koenker & Bassett (1978)), the
    interval score of a central interval of level :math:`1 - \alpha`,
    :math:`(u - l) + \frac{2}{\alpha}(l - y)_+ + \frac{2}{\alpha}(y - u)_+` (Gneiting &
    Raftery (2007)), and

    .. math::

       \mathrm{WIS} = \frac{1}{K + 1/2}\Big(\tfrac12 |y - m| + \sum_{k=1}^K
           \tfrac{\alpha_k}{2} \mathrm{IS}_{\alpha_k}\Big), \qquad
       \mathrm{CRPS}_Q = \frac{2}{K_q} \sum_{k=1}^{K_q} QS_{\tau_k}

    (Bracher et al. (2021)); :math:`\mathrm{CRPS}_Q` approximates
    :math:`2\int_0^1 QS_\tau d\tau` and equals the WIS when the levels are symmetric with
    the median. Its bias for a calibrated normal forecast: +1.0 % with the 99 levels
    0.01, ..., 0.99, +4.8 % with 0.05, ..., 0.95, -10.8 % with the 23 levels of the
    COVID-19 Forecast Hub (``uqviz._array.predictive_scores.crps_quantiles``): compare
    forecasts at the same levels with it. Intervals: paired bootstrap of the means, BCa by
    default.

    References
    ----------
    - Gneiting & Raftery (2007): the CRPS, its energy form, the quantile and interval scores.
    - Ferro (2014): the fair CRPS of an ensemble.
    - Bracher et al. (2021): the weighted interval score; CRPS from quantiles.
    - Koenker & Bassett (1978): the quantile (check) loss.
    - DiCiccio & Efron (1996): the BCa interval.

    Full entries: :doc:`/docs/references`.

    Examples
    --------
    >>> import numpy as np, uqviz
    >>> rng = np.random.default_rng(0)
    >>> y = rng.normal(size=300)
    >>> members = rng.normal(size=(300, 20))
    >>> ds = uqviz.from_arrays(y - members.mean(1), members.std(1, ddof=1)).assign(
    ...     y=("point", y), samples=(("point", "sample"), members))
    >>> ds.attrs["forecast"] = "samples"
    >>> res = uqviz.predictive_scores(ds, n_boot=200, rng=1)
    >>> res["score"].values.tolist(), str(res["forecast"].values)
    (['crps', 'crps_fair'], 'samples')
    >>> bool(res["estimate"].sel(score="crps_fair") < res["estimate"].sel(score="crps"))
    True
    """
    if scores is not None:
        scores = checks.names("scores", scores, allowed=PREDICTIVE_SCORES + joint.JOINT_SCORES)
    levels = None if levels is None else checks.levels("levels", levels)
    boot = BootstrapOptions.check(
        n_boot=n_boot,
        zero="no interval",
        ci=ci,
        method=method,
        rng=rng,
        engine=engine,
        methods=METHODS,
    )
    out = map_datasets(
        _predictive_one,
        data,
        rng=checks.rng(rng),
        variables=None,
        scores=scores,
        levels=levels,
        boot=boot,
        on_client=resolve_client(client),
    )
    out.attrs.update(
        {
            "scores": [str(v) for v in out["score"].values],
            "n_boot": boot.n_boot,
            "ci": boot.ci,
            "method": boot.method,
            "rng": boot.attrs["rng"],
            "engine": boot.engine,
            "orientation": "negative (smaller is better)",
            "citation": CITATION,
        }
    )
    if levels is not None:
        out.attrs["levels"] = levels.tolist()
    return out


# ------------------------------------------------------------------------------------
# comparison of two forecasts
# ------------------------------------------------------------------------------------

#: the words of :func:`compare_forecasts`
BETTER_A, BETTER_B, NO_DIFFERENCE = "a better", "b better", "no difference"


def _common_scores(form_a, form_b, scores, ds_a, ds_b, levels):
    na = _form_scores(form_a, None, ds_a, levels)
    nb = _form_scores(form_b, None, ds_b, levels)
    if scores is None:
        common = tuple(s for s in PREDICTIVE_SCORES if s in na and s in nb)
        if not common:
            raise ValueError(
                f"no score applies to both forecasts: a ({form_a!r}) takes "
                f"{list(na)}, b ({form_b!r}) takes {list(nb)}"
            )
        return common
    for label, form, applies in (
        ("a", form_a, FORM_SCORES[form_a]),
        ("b", form_b, FORM_SCORES[form_b]),
    ):
        bad = [s for s in scores if s not in applies]
        if bad:
            raise ValueError(
                f"scores {bad} do not apply to forecast {label}, given as "
                f"{form!r}, which takes {list(applies)}"
            )
    return tuple(scores)


def _word(lower, upper, diff_cols):
    """The comparison word of each score: the interval of a - b decides."""
    words = []
    for k, (lo, hi) in enumerate(zip(lower, upper)):
        if np.isfinite(lo) and np.isfinite(hi):
            words.append(BETTER_A if hi < 0 else BETTER_B if lo > 0 else NO_DIFFERENCE)
            continue
        d = diff_cols[:, k]
        if np.all(d == d[0]) and np.isfinite(d[0]):  # every point differs by the same amount
            words.append(BETTER_A if d[0] < 0 else BETTER_B if d[0] > 0 else NO_DIFFERENCE)
        else:
            words.append("not tested")
    return words


def _same_y(ya, yb):
    """A ValueError counting the points where two forecasts' observations differ."""
    differ = int(np.count_nonzero(~(ya == yb).reshape(len(ya), -1).all(axis=1)))
    if differ:
        raise ValueError(
            f"a and b must forecast the same observations: y differs at {differ} of "
            f"{len(ya)} points"
        )


def _joint_pair(ds_a, ds_b, scores):
    """Forms, common joint scores and per-point columns of two joint forecasts."""
    form_a, form_b = joint.joint_form(ds_a), joint.joint_form(ds_b)
    if not (form_a and form_b):
        raise ValueError(
            "a and b: a joint forecast of several targets (y with a target dim, samples or "
            "mean and cov) is compared with another joint forecast only"
        )
    ya, yb = joint.joint_observed(ds_a), joint.joint_observed(ds_b)
    if ya.shape != yb.shape:
        raise ValueError(f"a and b must forecast the same targets: y {ya.shape} and {yb.shape}")
    _same_y(ya, yb)
    if scores is None:
        in_b = joint.applicable_scores(ds_b)
        scores = tuple(s for s in joint.applicable_scores(ds_a) if s in in_b)
    else:
        non_joint = [s for s in scores if s not in joint.JOINT_SCORES]
        if non_joint:
            raise ValueError(
                f"scores: {non_joint} are not joint scores; joint forecasts are compared by "
                f"{list(joint.JOINT_SCORES)}"
            )
    if not scores:
        raise ValueError(f"a ({form_a}) and b ({form_b}) have no joint score in common")
    _, names, ca = joint.joint_point_scores(ds_a, scores)
    _, _, cb = joint.joint_point_scores(ds_b, scores)
    return form_a, form_b, names, ca, cb


def _compare_one(ds_a, ds_b, *, rng, scores, levels, boot):
    """One pair's comparison; ``boot``: the :class:`~uqviz.engine.options.BootstrapOptions`
    (the stream is ``rng``)."""
    n_boot, ci, method, engine = boot.n_boot, boot.ci, boot.method, boot.engine
    na, nb = ds_a.sizes.get("point", 0), ds_b.sizes.get("point", 0)
    if na != nb:
        raise ValueError(f"a and b must forecast the same points: a has {na}, b has {nb}")
    if joint.joint_form(ds_a) or joint.joint_form(ds_b):
        form_a, form_b, names, ca, cb = _joint_pair(ds_a, ds_b, scores)
    else:
        form_a, form_b = forecast_form(ds_a), forecast_form(ds_b)
        if "y" in ds_a.variables and "y" in ds_b.variables:
            _same_y(_observed(ds_a), _observed(ds_b))
        names = _common_scores(form_a, form_b, scores, ds_a, ds_b, levels)
        _, _, ca, _, _, _ = _point_scores(ds_a, names, levels)
        _, _, cb, _, _, _ = _point_scores(ds_b, names, levels)
    boot = paired_groups(boot, ds_a, ds_b)  # whole groups, shared by a and b
    if n_boot and na < 2:
        raise ValueError(f"data: the bootstrap needs at least 2 points, got M = {na}")
    d = ca - cb
    n_s = len(names)
    est, lower, upper, se = _intervals(
        np.column_stack([d, ca, cb]),
        n_boot=n_boot,
        rng=rng,
        ci=ci,
        method=method,
        engine=engine,
        name=ds_a.attrs.get("name", ""),
        clusters=boot.clusters,
    )
    data = {
        "estimate": ("score", est[:n_s]),
        "ci_lower": ("score", lower[:n_s]),
        "ci_upper": ("score", upper[:n_s]),
        "se": ("score", se[:n_s]),
        "score_a": ("score", est[n_s : 2 * n_s]),
        "score_b": ("score", est[2 * n_s :]),
        "comparison": ("score", np.array(_word(lower[:n_s], upper[:n_s], d), dtype=str)),
        "n_points": ((), na),
        "forecast_a": ((), form_a),
        "forecast_b": ((), form_b),
    }
    return xr.Dataset(data, coords={"score": list(names)}, attrs=grouped_attrs(boot))


def compare_forecasts(
    a,
    b,
    *,
    scores=None,
    levels=None,
    n_boot=10_000,
    ci=0.95,
    method="bca",
    engine=None,
    client=None,
    rng=None,
):
    r"""Which of two forecasts of the same points scores better: the paired-bootstrap interval
    of the difference of each score.

    Each forecast is scored in its own form (:func:`predictive_scores`), point by point; the
    difference ``a - b`` of the per-point scores is bootstrapped over the points, every score
    and both forecasts with the same resamples (paired; whole groups when the points carry a
    ``group`` coordinate, the same for both forecasts, whose group labels must agree: attrs
    ``resample`` and ``n_groups``). Scores are negatively oriented, so
    ``comparison`` says ``"a better"`` when the whole interval of ``a - b`` lies below 0,
    ``"b better"`` when it lies above 0, else ``"no difference"`` (the interval decides;
    where it cannot be computed because every point differs by the same amount, the sign
    of that amount decides, else ``"not tested"``).

    Parameters
    ----------
    a : xarray.Dataset or xarray.DataTree
        The first forecast (a dataset of :func:`uqviz.from_predictions`, any form, or a
        joint forecast of several targets: ``y`` (point, target) with ``samples`` (point,
        target, sample), or with ``mean`` and ``cov``, compared by the joint scores); a
        DataTree is compared with ``b`` child by child (same child names), on dim
        ``dataset``.
    b : xarray.Dataset or xarray.DataTree
        The second forecast of the same points (any form); where both hold ``y``, it must be
        the same (the count of points where it differs is the error), else only the number
        of points is checked.
    scores : sequence of str, optional
        Scores that apply to both forms (:func:`predictive_scores`); default all of them.
        Joint forecasts: ``"energy"``, ``"energy_fair"``, ``"variogram"``,
        ``"variogram_fair"`` (:func:`uqviz.energy_score`, :func:`uqviz.variogram_score` with
        p = 0.5), ``"dss"`` (:func:`uqviz.dawid_sebastiani_score`; of an ensemble, from its
        mean and covariance).
    levels : sequence of float, optional
        As in :func:`predictive_scores`, for both forecasts (a quantile forecast scored at
        other levels than the other forecast is scored by another rule: pass the levels
        when comparing a std forecast with a quantile one).
    n_boot : int, default 10000
        Bootstrap replicates (>= 2).
    ci : float, default 0.95
        Confidence level of the interval of the difference, in (0, 1).
    method : {"bca", "percentile", "basic"}, default "bca"
        How the bootstrap interval is computed (BCa: DiCiccio & Efron (1996)).
    engine : {"numba", "numpy"}, optional
        Resampling kernel of the bootstrap (default numba).
    client : None, "local" or dask.distributed.Client, default None
        Where the bootstrap runs (each pair of datasets as one task); the numbers do not
        depend on it.
    rng : None, int, numpy.random.SeedSequence or numpy.random.Generator, default None
        Random stream (docs/conventions.md, "Randomness").

    Returns
    -------
    xarray.Dataset
        On ``score``: ``estimate`` (mean score of a minus mean score of b), ``ci_lower``,
        ``ci_upper``, ``se`` (its paired-bootstrap interval and se), ``score_a``,
        ``score_b`` (the mean scores), ``comparison`` (``"a better"``, ``"b better"``,
        ``"no difference"``); ``n_points``; ``forecast_a``, ``forecast_b`` (the forms).

    Raises
    ------
    ValueError
        Different numbers of points or different y (counted); a score that does not apply
        to one of the forms; no score common to both; the errors of
        :func:`predictive_scores`.

    See Also
    --------
    uqviz.predictive_scores : the scores of one forecast.
    uqviz.proper_scores : the scores of ``E ~ uE * D``.

    Notes
    -----
    With :math:`d_i = S(F^a_i, y_i) - S(F^b_i, y_i)`, the estimate is :math:`\bar d =
    \bar S^a - \bar S^b` and its interval the bootstrap interval of the mean of the
    :math:`d_i`: resampling the points keeps each point's two scores together, which removes
    the variation of the points' difficulty shared by both forecasts (Gneiting & Raftery
    (2007) on comparing forecasts by proper scores).

    References
    ----------
    - Gneiting & Raftery (2007): proper scores and the comparison of forecasts.
    - Bracher et al. (2021): the weighted interval score.
    - Ferro (2014): the fair CRPS of an ensemble.
    - DiCiccio & Efron (1996): the BCa interval.

    Full entries: :doc:`/docs/references`.

    Examples
    --------
    >>> import numpy as np, uqviz
    >>> rng = np.random.default_rng(0)
    >>> y = rng.normal(size=400)
    >>> def ensemble(scale):
    ...     x = scale * rng.normal(size=(400, 30))
    ...     ds = uqviz.from_arrays(y - x.mean(1), x.std(1, ddof=1)).assign(
    ...         y=("point", y), samples=(("point", "sample"), x))
    ...     ds.attrs["forecast"] = "samples"
    ...     return ds
    >>> res = uqviz.compare_forecasts(ensemble(1.0), ensemble(3.0), n_boot=500, rng=1)
    >>> res["comparison"].values.tolist()
    ['a better', 'a better']
    >>> bool(res["ci_upper"].sel(score="crps") < 0)
    True
    """
    if scores is not None:
        scores = checks.names("scores", scores, allowed=PREDICTIVE_SCORES + joint.JOINT_SCORES)
    levels = None if levels is None else checks.levels("levels", levels)
    boot = BootstrapOptions.check(
        n_boot=n_boot, ci=ci, method=method, rng=rng, engine=engine, methods=METHODS
    )
    client = resolve_client(client)
    if isinstance(a, xr.Dataset) != isinstance(b, xr.Dataset):
        raise TypeError(
            f"a and b must both be Datasets or both DataTrees, got "
            f"{type(a).__name__} and {type(b).__name__}"
        )
    pa = datasets_of(a, variables=None)
    pb = datasets_of(b, variables=None)
    if [n for n, _ in pa] != [n for n, _ in pb]:
        raise ValueError(
            f"a and b must have the same datasets: a has {[n for n, _ in pa]}, "
            f"b has {[n for n, _ in pb]}"
        )
    rngs = seeds.spawn(checks.rng(rng), len(pa))  # one stream per pair, in order
    kwargs = dict(scores=scores, levels=levels, boot=boot)
    results = []
    for (name, da), (_, db), r in zip(pa, pb, rngs):
        with naming_child(name):
            res = run_task(_compare_one, da, db, rng=r, client=client, **kwargs)
        results.append(describe(res, da))
    if isinstance(a, xr.Dataset):
        out = results[0]
    else:
        out = xr.concat(
            results,
            dim=xr.DataArray([n for n, _ in pa], dims="dataset", name="dataset"),
            coords="different",
            compat="equals",
            join="outer",
            combine_attrs="drop_conflicts",
        )
    out.attrs.update(
        {
            "scores": [str(v) for v in out["score"].values],
            "n_boot": boot.n_boot,
            "ci": boot.ci,
            "method": boot.method,
            "rng": boot.attrs["rng"],
            "engine": boot.engine,
            "orientation": "negative (smaller is better)",
            "citation": CITATION,
        }
    )
    if any(str(v) in joint.JOINT_SCORES for v in out["score"].values):
        out.attrs["citation"] = joint.CITATION
    if levels is not None:
        out.attrs["levels"] = levels.tolist()
    return out
