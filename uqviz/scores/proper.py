"""Proper scoring rules (NLL, CRPS, check, interval), sharpness and dispersion, bootstrapped."""

from __future__ import annotations

import warnings

import numpy as np
import xarray as xr

from uqviz._array import bca
from uqviz._array import scores as score_kernels
from uqviz._array.lazy import lazy_module
from uqviz.data.generative import get_generative
from uqviz.engine import checks, seeds
from uqviz.engine.options import GROUP_COORD, BootstrapOptions
from uqviz.engine.parallel import resolve_client
from uqviz.engine.tree import map_datasets
from uqviz.engine.warning_classes import UnreliableWarning
from uqviz.scores.coverage import checked_points, generative_for

resample_kernels = lazy_module("uqviz._array.resample")
clusters_kernels = lazy_module("uqviz._array.clusters")

__all__ = [
    "proper_scores",
    "SCORES",
    "DEFAULT_SCORE_LEVELS",
    "score_columns",
    "bootstrap_column_means",
    "column_intervals",
    "cluster_column_means",
    "paired_groups",
]

SCORES = ("nll", "crps", "check", "interval")
METHODS = ("bca", "percentile", "basic")
#: levels of the check and interval scores: uncertainty-toolbox 0.1.1's 99 levels
DEFAULT_SCORE_LEVELS = np.linspace(0.01, 0.99, 99)


def score_columns(e, u, scores, gen, levels):
    """Per-point scores of ``E ~ uE * D``, one column per name of ``scores`` (shape (M, S))."""
    nu = gen.params.get("nu")
    cols = {}
    if "nll" in scores:
        cols["nll"] = score_kernels.nll_points(e, u, gen.kind, nu)
    if "crps" in scores:
        cols["crps"] = score_kernels.crps_points(e, u, gen.kind, nu)
    if "check" in scores or "interval" in scores:
        check, inter = score_kernels.check_interval_points(
            e / u,
            u,
            q_check=gen.ppf(levels),
            tau=levels,
            q_lower=gen.ppf(0.5 - levels / 2.0),
            q_upper=gen.ppf(0.5 + levels / 2.0),
            p=levels,
            check="check" in scores,
            interval="interval" in scores,
        )
        if check is not None:
            cols["check"] = check
        if inter is not None:
            cols["interval"] = inter
    return np.column_stack([cols[s] for s in scores])


def _spread(us_mean, m1, m2, n):
    """Sharpness sqrt(<u^2>) and dispersion sd(u, ddof=1) / <u> from the means of the
    centred columns c = u - us_mean (m1 = <c>, m2 = <c^2>), in the scaled unit."""
    n = np.float64(n)
    with np.errstate(invalid="ignore", divide="ignore"):
        sharp = np.sqrt(np.maximum(us_mean * us_mean + 2.0 * us_mean * m1 + m2, 0.0))
        var = n / (n - 1.0) * np.maximum(m2 - m1 * m1, 0.0)
        disp = np.sqrt(var) / (us_mean + m1)
    return sharp, disp


def bootstrap_column_means(cols, *, n_boot, seed, engine, jackknife):
    """Means of the columns of ``cols`` over paired bootstrap resamples of its rows.

    Every column is resampled with the same rows (one paired bootstrap), so that the
    replicates of different scores, or of the scores of two forecasts of the same points,
    come from the same resamples.

    Parameters
    ----------
    cols : ndarray, shape (M, C)
        Per-point values (one column per quantity whose mean is bootstrapped).
    n_boot : int
        Replicates.
    seed : int
        Kernel seed (:func:`uqviz.engine.seeds.kernel_seed`).
    engine : {"numba", "numpy"}
        Resampling kernel (:func:`uqviz._array.resample.resample_sums`).
    jackknife : bool
        Also return the leave-one-out means (for the BCa acceleration).

    Returns
    -------
    means : ndarray, shape (B, C)
    loo : ndarray, shape (M, C), or None

    Examples
    --------
    >>> cols = np.arange(8.0).reshape(4, 2)
    >>> means, loo = bootstrap_column_means(cols, n_boot=3, seed=1, engine="numpy",
    ...                                     jackknife=True)
    >>> means.shape, loo[0].tolist()
    ((3, 2), [4.0, 5.0])
    """
    m = cols.shape[0]
    means = resample_kernels.resample_sums(cols, n_boot, seed, engine=engine)[0] / m
    loo = None
    if jackknife:
        with np.errstate(all="ignore"):
            totals = cols.sum(axis=0)
            loo = (totals[None, :] - cols) / (m - 1.0)  # leave-one-out means (M, C)
    return means, loo


def cluster_column_means(cols, codes, *, n_boot, seed, engine, jackknife):
    """Means of the columns of ``cols`` over paired resamples of whole groups of rows.

    The cluster bootstrap (Davison & Hinkley (1997), section 3.8): the rows of each group are
    summed once (:func:`uqviz._array.clusters.aggregate`), the resampling engine draws groups
    with replacement as it draws points, and a replicate's mean is the sum of the drawn groups'
    column sums over their point count. All columns share the draws (paired).

    Parameters
    ----------
    cols : ndarray, shape (M, C)
    codes : ndarray of int, shape (M,)
        Group code of each row (:func:`uqviz._array.clusters.group_codes`).
    n_boot, seed, engine, jackknife
        As :func:`bootstrap_column_means`.

    Returns
    -------
    means : ndarray, shape (B, C)
    counts : ndarray, shape (B,)
        Points of each replicate.
    loo : ndarray, shape (G, C), or None
        Delete-one-group means (for the BCa acceleration).
    loo_n : ndarray, shape (G,), or None
        Points left by each deletion.

    Examples
    --------
    >>> cols = np.arange(8.0).reshape(4, 2)
    >>> means, counts, loo, loo_n = cluster_column_means(
    ...     cols, np.array([0, 0, 1, 1]), n_boot=3, seed=1, engine="numpy", jackknife=True)
    >>> means.shape, counts.shape, loo.tolist(), loo_n.tolist()
    ((3, 2), (3,), [[5.0, 6.0], [1.0, 2.0]], [2.0, 2.0])
    """
    agg = clusters_kernels.aggregate(cols, codes)
    sums, counts = clusters_kernels.resample_cluster_sums(agg, n_boot, seed, engine=engine)
    with np.errstate(all="ignore"):
        means = sums[0] / counts[0][:, None]
    loo = loo_n = None
    if jackknife:
        loo_n = cols.shape[0] - agg.counts
        with np.errstate(all="ignore"):
            loo = (cols.sum(axis=0)[None, :] - agg.sums) / loo_n[:, None]
    return means, counts[0], loo, loo_n


def grouped_attrs(boot) -> dict:
    """``resample`` (and ``n_groups`` for the cluster bootstrap) of a result's attrs."""
    if boot.clusters is None:
        return {"resample": "points"}
    return {"resample": "groups", "n_groups": boot.attrs["n_groups"]}


def paired_groups(boot, *datasets):
    """Options of a paired bootstrap of several forecasts (models) of the same points.

    The forecasts share the groups: the cluster bootstrap when any of them carries a ``group``
    coordinate (the others, without one, take its groups); ValueError when two of them carry
    group labels that differ, counting the points where they differ.

    Examples
    --------
    >>> a = xr.Dataset(coords={"group": ("point", [1, 1, 2])})
    >>> b = xr.Dataset(coords={"group": ("point", [1, 2, 2])})
    >>> opts = BootstrapOptions.check(n_boot=10)
    >>> paired_groups(opts, a, a.drop_vars("group")).attrs["n_groups"]
    2
    >>> try:
    ...     paired_groups(opts, a, b)
    ... except ValueError as err:
    ...     print(str(err).split(": ")[-1])
    the group labels differ at 1 of 3 points
    """
    grouped = [ds for ds in datasets if ds is not None and GROUP_COORD in ds.variables]
    if not grouped:
        return boot
    first = np.asarray(grouped[0][GROUP_COORD].values)
    for ds in grouped[1:]:
        other = np.asarray(ds[GROUP_COORD].values)
        if other.shape != first.shape:
            raise ValueError(
                f"the forecasts of the same points must share their groups: {first.size} and "
                f"{other.size} group labels"
            )
        differ = int(np.count_nonzero(first != other))
        if differ:
            raise ValueError(
                "the forecasts of the same points must share their groups: the group labels "
                f"differ at {differ} of {first.size} points"
            )
    return boot.for_data(grouped[0])


def column_intervals(est, reps, jack, *, ci, method, name="", stacklevel=4):
    """Bootstrap intervals and standard errors of several estimates, with one warning
    counting those that cannot be computed.

    Parameters
    ----------
    est : ndarray, shape (C,)
    reps : ndarray, shape (C, B)
        Replicates of each estimate.
    jack : ndarray, shape (C, M), or None
        Leave-one-out values (needed for ``method="bca"``).
    ci : float
    method : {"bca", "percentile", "basic"}
    name : str
        Dataset name, for the warning.
    stacklevel : int
        Of the warning.

    Returns
    -------
    lower, upper, se : ndarray, shape (C,)
        NaN limits where the bootstrap distribution is degenerate (an
        :class:`~uqviz.engine.warning_classes.UnreliableWarning` counts them).

    Examples
    --------
    >>> reps = np.vstack([np.linspace(0.0, 2.0, 101)])
    >>> lo, hi, se = column_intervals(np.array([1.0]), reps, None, ci=0.9,
    ...                               method="percentile")
    >>> round(float(lo[0]), 2), round(float(hi[0]), 2)
    (0.1, 1.9)
    """
    accel = None
    if method == "bca":
        with np.errstate(all="ignore"):
            accel = bca.acceleration(jack)
    with np.errstate(all="ignore"):
        ivl = bca.interval(est, reps, accel=accel, ci=ci, method=method)
        se = reps.std(axis=-1, ddof=1)
    lower, upper = ivl["lower"], ivl["upper"]
    bad = int(np.count_nonzero(np.isnan(lower) | np.isnan(upper)))
    if bad:
        warnings.warn(
            f"{bad} of {est.size} intervals{f' in {name!r}' if name else ''} "
            "could not be computed (degenerate bootstrap distribution): NaN",
            UnreliableWarning,
            stacklevel=stacklevel,
        )
    return lower, upper, se


def _datasets(data):
    """The Datasets of ``data`` (a Dataset, or the leaves of a DataTree); others: none (the
    readers' own checks report them)."""
    if isinstance(data, xr.Dataset):
        return [data]
    if isinstance(data, xr.DataTree):
        return [node.to_dataset() for node in data.subtree if node.has_data]
    return []


def _proper_one(ds, *, rng, scores, generative, levels, boot):
    """One dataset's scores; ``boot``: the :class:`~uqviz.engine.options.BootstrapOptions`
    (``n_boot`` 0: the estimates alone; the stream is ``rng``)."""
    boot = boot.for_data(ds)  # the cluster bootstrap when the points carry groups
    n_boot, ci, method, engine = boot.n_boot, boot.ci, boot.method, boot.engine
    e, u = checked_points(ds)
    if n_boot and e.size < 2:
        raise ValueError(
            f"data: the bootstrap needs at least 2 points (E, uE), got M = "
            f"{e.size}; use n_boot=0 for the estimates alone"
        )
    gen = generative_for(generative, ds)
    if {"nll", "crps"} & set(scores) and gen.kind not in score_kernels.CLOSED_FORM_KINDS:
        raise ValueError(
            f"generative={gen.name!r}: NLL and CRPS are available for the normal, "
            "Student-t ('t<nu>') and Laplace D only (closed forms); the check and "
            "interval scores take any D"
        )
    m = e.size
    with np.errstate(over="ignore", under="ignore"):
        cols = score_columns(e, u, scores, gen, levels)
    # sharpness and dispersion in a power-of-two unit of uE (no overflow of uE^2)
    k = int(np.frexp(np.max(u))[1])
    us = np.ldexp(u, -k)
    us_mean = float(np.mean(us))
    c = us - us_mean
    spread_cols = np.column_stack([c, c * c])
    est_scores = cols.mean(axis=0)
    sharp, disp = _spread(us_mean, 0.0, float(np.mean(c * c)), m)
    sharp = float(np.ldexp(sharp, k))
    disp = float(np.std(us, ddof=1) / us_mean) if m > 1 else np.nan
    data = {"estimate": ("score", est_scores), "sharpness": ((), sharp), "dispersion": ((), disp)}
    if n_boot:
        allc = np.column_stack([cols, spread_cols])
        kw = dict(n_boot=n_boot, seed=seeds.kernel_seed(rng), engine=engine)
        if boot.clusters is None:
            means, loo = bootstrap_column_means(allc, jackknife=method == "bca", **kw)
            n_rep, n_loo = m, m - 1.0
        else:  # whole groups: replicates of varying size
            means, n_rep, loo, n_loo = cluster_column_means(
                allc, boot.clusters, jackknife=method == "bca", **kw
            )
        n_s = len(scores)
        sharp_b, disp_b = _spread(us_mean, means[:, n_s], means[:, n_s + 1], n_rep)
        reps = np.vstack([means[:, :n_s].T, np.ldexp(sharp_b, k)[None], disp_b[None]])
        est = np.concatenate([est_scores, [sharp, disp]])
        jack = None
        if loo is not None:
            with np.errstate(all="ignore"):
                sharp_j, _ = _spread(us_mean, loo[:, n_s], loo[:, n_s + 1], n_loo)
                _, disp_j = _spread(us_mean, loo[:, n_s], loo[:, n_s + 1], n_loo)
            jack = np.vstack([loo[:, :n_s].T, sharp_j[None], disp_j[None]])
        lower, upper, se = column_intervals(
            est, reps, jack, ci=ci, method=method, name=ds.attrs.get("name", ""), stacklevel=5
        )
        data.update(
            {
                "ci_lower": ("score", lower[:n_s]),
                "ci_upper": ("score", upper[:n_s]),
                "se": ("score", se[:n_s]),
                "sharpness_lower": ((), lower[n_s]),
                "sharpness_upper": ((), upper[n_s]),
                "dispersion_lower": ((), lower[n_s + 1]),
                "dispersion_upper": ((), upper[n_s + 1]),
            }
        )
    data["n_points"] = ((), m)
    return xr.Dataset(data, coords={"score": list(scores)}, attrs=grouped_attrs(boot))


#: forecasts given as more than a standard uncertainty (``attrs["forecast"]``): their own
#: scores are :func:`uqviz.predictive_scores`'s
GIVEN_FORMS = ("interval", "quantiles", "samples")


def _refuse_given(ds, explicit):
    """A forecast given as quantiles, an interval or samples is not scored as ``uE * D``
    unless D was chosen (issue 38, item 4: never a silent normal)."""
    form = ds.attrs.get("forecast")
    if form in GIVEN_FORMS and not explicit:
        name = ds.attrs.get("name", "")
        where = f" {name!r}" if name else ""
        raise ValueError(
            f"data{where} holds a forecast given as {form}: proper_scores scores E ~ uE * D "
            f"(a distribution of the summary uE, not the {form} as given); use "
            "uqviz.predictive_scores(data) to score the forecast as given, or pass "
            "generative= (e.g. 'normal') to score the summary uE on purpose"
        )


def proper_scores(
    data,
    *,
    scores=SCORES,
    generative=None,
    levels=None,
    n_boot=10_000,
    ci=0.95,
    method="bca",
    rng=None,
    engine=None,
    client=None,
):
    r"""Proper scores of ``E ~ uE * D``, sharpness and dispersion, with paired-bootstrap intervals.

    Scores are means over the points, negatively oriented (smaller is better), in the
    units of E except NLL (nats):

    - ``"nll"``: negative log-likelihood, ``<-ln f(E; uE)>`` (normal:
      ``<ln(2 pi)/2 + ln uE + Z^2/2>``, the NLL statistic of :func:`uqviz.validate_average`);
    - ``"crps"``: continuous ranked probability score ``<integral (F(y) - 1{E <= y})^2 dy>``
      (closed forms: Gneiting et al. 2005; Jordan et al. 2019);
    - ``"check"``: pinball loss averaged over the quantile levels ``tau``,
      ``<mean_tau rho_tau(uE q_D(tau) - E)>`` with ``rho_tau(d) = d (1{d >= 0} - tau)``;
    - ``"interval"``: interval (Winkler) score averaged over the central levels ``p``,
      ``<mean_p [(u - l) + 2/(1-p) ((l - E)_+ + (E - u)_+)]>``, ``[l, u] = uE
      [q_D((1-p)/2), q_D((1+p)/2)]`` (Gneiting & Raftery 2007).

    Beside them, ``sharpness`` = sqrt(<uE^2>) (= RMV) and ``dispersion`` = sd(uE) / <uE>
    (coefficient of variation of uE, ddof = 1, Levi et al. 2022), which ignore E.
    All intervals come from the same bootstrap resamples of the points (paired); two
    datasets of the same size scored with the same integer ``rng`` share the resamples
    too, so that the scores of a model before and after recalibration are paired. When the
    points carry a ``group`` coordinate (structures, molecules), the bootstrap resamples whole
    groups (the cluster bootstrap, Davison & Hinkley (1997), section 3.8: a replicate's mean
    score is the drawn groups' score sums over their point count); attrs ``resample``
    (``"points"`` or ``"groups"``) and ``n_groups`` say which. Drop the coordinate
    (``ds.drop_vars("group")``) for the point bootstrap.

    With the defaults (normal D; 99 levels 0.01, ..., 0.99), the scores equal
    uncertainty-toolbox 0.1.1's ``nll_gaussian``, ``crps_gaussian``, ``check_score`` and
    ``interval_score``, and ``sharpness`` its ``sharpness`` (Chung et al. 2021).

    Parameters
    ----------
    data : xarray.Dataset or xarray.DataTree
        Errors ``E`` and standard uncertainties ``uE`` on dim ``point`` (with any features), as
        made by :func:`uqviz.from_arrays` and the other constructors; a DataTree gives one
        result per dataset, on dim ``dataset``.
    scores : sequence of {"nll", "crps", "check", "interval"}, default all four
        The scores computed, distinct.
    generative : str or Generative, optional
        D of the predictive distribution ``E / uE ~ D`` (unit variance): ``"normal"`` (the
        default), ``"t<nu>"``, ``"laplace"`` for all scores; ``"uniform"`` and
        ``"empirical"`` for check and interval only. Data read from a forecast given as
        quantiles, an interval or samples (``attrs["forecast"]``) are refused unless
        ``generative`` is given: their scores as given are :func:`uqviz.predictive_scores`'s.
    levels : sequence of float, optional
        Levels ``tau`` of the check score and ``p`` of the interval score, in (0, 1);
        default ``linspace(0.01, 0.99, 99)``.
    n_boot : int, default 10000
        Bootstrap replicates; 0: no interval (estimates only).
    ci : float, default 0.95
        Confidence level of the intervals, in (0, 1).
    rng : None, int, numpy.random.SeedSequence or numpy.random.Generator, default None
        Random stream: None (fresh entropy), an int >= 0, a numpy.random.SeedSequence (copied,
        never consumed) or a numpy.random.Generator; the same ``rng`` gives the same numbers on
        any number of threads or workers (docs/conventions.md, "Randomness").
    method : {"bca", "percentile", "basic"}, default "bca"
        How the bootstrap interval is computed: "bca" (bias-corrected and accelerated, DiCiccio
        & Efron (1996)), "percentile" or "basic".
    engine : {"numba", "numpy"}, optional
        Resampling kernel of the bootstrap (default numba).
    client : None, "local" or dask.distributed.Client, default None
        Where the bootstrap runs (datasets as tasks) (docs/conventions.md); the numbers do
        not depend on it.

    Returns
    -------
    xarray.Dataset
        On ``score``: ``estimate`` and, when ``n_boot`` > 0, ``ci_lower``, ``ci_upper``,
        ``se``; scalars ``sharpness``, ``dispersion`` (with ``_lower``, ``_upper``) and
        ``n_points``.

    Raises
    ------
    ValueError
        Unknown or repeated scores, levels outside (0, 1), NLL/CRPS for a D without a
        closed form, bad data.

    See Also
    --------
    uqviz.validate_average : NLL as a validated statistic.
    uqviz.calibration_curve : calibration of the same predictive distribution.
    uqviz.recalibrate : scores before and after recalibration.

    Notes
    -----
    With :math:`Z = E / u_E` and a normal D,

    .. math::

       \mathrm{NLL} = \left\langle \tfrac12 \ln 2\pi + \ln u_E + \tfrac12 Z^2 \right\rangle, \qquad
       \mathrm{CRPS} = \left\langle u_E \left[ Z (2\Phi(Z) - 1) + 2\varphi(Z) - \tfrac{1}{\sqrt\pi}
       \right] \right\rangle

    (Pernot (2024b), eq. 12; Gneiting et al. (2005)); the check and interval scores as above
    (Gneiting & Raftery (2007)). Intervals: paired bootstrap, BCa by default.

    References
    ----------
    - Gneiting & Raftery (2007): proper scoring rules, the interval score.
    - Gneiting et al. (2005): the closed-form CRPS of a normal.
    - Jordan et al. (2019): closed-form CRPS of other distributions.
    - Chung et al. (2021): the scores of uncertainty-toolbox.
    - Levi et al. (2022): the dispersion of uE.
    - DiCiccio & Efron (1996): the BCa interval.

    Full entries: :doc:`/docs/references`.

    Examples
    --------
    >>> import uqviz
    >>> ds = uqviz.synthetic.default_example()
    >>> res = uqviz.proper_scores(ds, n_boot=1000, rng=0)
    >>> res["score"].values.tolist()
    ['nll', 'crps', 'check', 'interval']
    >>> bool((res["ci_lower"] < res["estimate"]).all())
    True
    >>> t = uqviz.proper_scores(ds, scores=("nll",), generative="t6", n_boot=0)
    >>> bool(t["estimate"][0] > res["estimate"][0])  # normal data fit the normal D better
    True
    """
    scores = checks.names("scores", scores, allowed=SCORES)
    explicit = generative is not None
    generative = "normal" if generative is None else generative
    for ds in _datasets(data):
        _refuse_given(ds, explicit)
    gen_name = get_generative(generative).name
    levels = DEFAULT_SCORE_LEVELS.copy() if levels is None else checks.levels("levels", levels)
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
        _proper_one,
        data,
        rng=checks.rng(rng),
        scores=scores,
        generative=generative,
        levels=levels,
        boot=boot,
        on_client=resolve_client(client),
    )
    out.attrs.update(
        {
            "scores": list(scores),
            "generative": gen_name,
            "n_boot": boot.n_boot,
            "ci": boot.ci,
            "method": boot.method,
            "rng": boot.attrs["rng"],
            "levels": levels.tolist(),
            "orientation": "negative (smaller is better)",
            "engine": boot.engine,
        }
    )
    return out
