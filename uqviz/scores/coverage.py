"""Interval coverage (PICP, MPIW) and calibration curves (miscalibration area, MACE, RMSCE)."""

from __future__ import annotations

import numpy as np
import xarray as xr

from uqviz._array import scores as score_kernels
from uqviz._array.binomial import wilson_interval
from uqviz._array.lazy import lazy_module
from uqviz.data.generative import get_generative
from uqviz.data.model import check_dataset
from uqviz.engine import checks
from uqviz.engine.options import data_group_codes, warn_points_independent
from uqviz.engine.bootstrap import check_points
from uqviz.engine.tree import map_datasets
from uqviz.predictive.forecast import observed

predictive_scores_kernels = lazy_module("uqviz._array.predictive_scores")
clusters_kernels = lazy_module("uqviz._array.clusters")

__all__ = [
    "interval_coverage",
    "calibration_curve",
    "DEFAULT_LEVELS",
    "CURVE_KINDS",
    "INTERVAL_SOURCES",
    "given_intervals",
]

DEFAULT_LEVELS = (0.5, 0.68, 0.9, 0.95, 0.99)
CURVE_KINDS = ("interval", "quantile")
#: which intervals ``interval_coverage`` checks: made from uE and D, or those of the dataset
INTERVAL_SOURCES = ("uE", "given")


def generative_for(generative, ds):
    """The D of one dataset ("empirical" bound to its z-scores); errors name ``generative``."""
    try:
        return get_generative(generative, ds)
    except ValueError as exc:
        raise ValueError(f"generative={getattr(generative, 'name', generative)!r}: {exc}") from None


def checked_points(ds):
    """Checked float64 ``(E, uE)`` of one dataset (finite, uE > 0, Z representable).

    Examples
    --------
    >>> import uqviz
    >>> e, u = checked_points(uqviz.synthetic.nig(10, rng=0))
    >>> e.dtype, u.shape
    (dtype('float64'), (10,))
    """
    check_dataset(ds)
    return check_points(ds["E"].values, ds["uE"].values, minimum=1)


def _grouped_wilson(k, m, inside_rows, ds, ci):
    """The Wilson intervals of the shares ``k / m``: of ``m`` independent points, or, when
    ``ds`` carries groups, of the effective number of points ``m / deff`` (Kish), ``deff``
    the design effect of each row of indicators (:func:`uqviz._array.clusters.
    proportion_design_effect`). Returns ``(lower, upper, extra variables, attrs)``."""
    codes = data_group_codes(ds)
    if codes is None:
        lower, upper = wilson_interval(k, m, ci=ci, continuity=True)
        return lower, upper, {}, {}
    deff = clusters_kernels.proportion_design_effect(inside_rows(), codes)
    n_eff = m / deff
    lower, upper = wilson_interval(k / m * n_eff, n_eff, ci=ci, continuity=True)
    extra = {
        "design_effect": (
            "level",
            deff,
            {"long_name": "design effect of the coverage of grouped points (>= 1)"},
        )
    }
    return lower, upper, extra, {"n_groups": int(np.unique(codes).size)}


def _coverage_one(ds, *, rng, levels, generative, ci):
    e, u = checked_points(ds)
    gen = generative_for(generative, ds)
    q = np.asarray(gen.ppf(0.5 + levels / 2.0), dtype=float)
    m = e.size
    z = np.abs(e / u)
    k = score_kernels.count_within(np.sort(z), q)
    lower, upper, extra, attrs = _grouped_wilson(k, m, lambda: z[None, :] <= q[:, None], ds, ci)
    picp = k / m
    return xr.Dataset(
        {
            "picp": ("level", picp),
            "picp_lower": ("level", lower),
            "picp_upper": ("level", upper),
            "valid": ("level", (lower <= levels) & (levels <= upper)),
            "mpiw": ("level", 2.0 * q * np.mean(u)),
            "multiplier": ("level", q),
            "n_inside": ("level", k.astype(np.int64)),
            "n_points": ((), m),
            **extra,
        },
        coords={"level": levels},
        attrs=attrs,
    )


def given_intervals(ds):
    """``(levels, lower, upper, y)`` of the intervals a dataset holds, ``lower``/``upper`` of
    shape (level, point): its ``lower``/``upper`` at their ``level``, or the central intervals
    of its ``quantiles`` (levels ``tau`` and ``1 - tau``: level ``1 - 2 tau``, narrowest first);
    ``y`` the observed values (``E`` without ``y``: the error-space rule of
    docs/conventions.md). A ValueError when it holds none.

    Examples
    --------
    >>> import uqviz
    >>> ds = uqviz.from_predictions([1.0, 2.0], [1.0, 1.6], lower=[0.0, 1.0], upper=[2.0, 2.2],
    ...                             level=0.9)
    >>> lv, lo, hi, y = given_intervals(ds)
    >>> lv.tolist(), lo.tolist(), hi.tolist(), y.tolist()
    ([0.9], [[0.0, 1.0]], [[2.0, 2.2]], [1.0, 2.0])
    """
    y = np.asarray(observed(ds)[0].values, dtype=float)
    if "lower" in ds and "upper" in ds:
        level = ds["lower"].attrs.get("level", ds.attrs.get("level"))
        if level is None:
            raise ValueError(
                "intervals='given': the variables lower and upper carry no level (attrs['level'])"
            )
        return (
            np.array([float(level)]),
            ds["lower"].values[None].astype(float),
            ds["upper"].values[None].astype(float),
            y,
        )
    if "quantiles" in ds:
        taus = ds["level"].values.astype(float)
        pairs, _, _ = predictive_scores_kernels.central_pairs(taus)
        if not pairs:
            raise ValueError(
                f"intervals='given': the quantile levels {taus.tolist()} hold no "
                "central interval (levels tau and 1 - tau)"
            )
        q = ds["quantiles"].transpose("level", "point").values.astype(float)
        return (
            np.array([1.0 - 2.0 * taus[i] for i, _ in pairs]),
            np.stack([q[i] for i, _ in pairs]),
            np.stack([q[j] for _, j in pairs]),
            y,
        )
    raise ValueError(
        "intervals='given': the dataset holds no interval (variables lower and "
        "upper) and no quantiles; use intervals='uE' (the intervals of uE and D)"
    )


def _given_one(ds, *, rng, levels, generative, ci):
    check_dataset(ds)
    given, lo, hi, y = given_intervals(ds)
    if levels is not None:
        missing = [float(p) for p in levels if not np.any(np.isclose(given, p, rtol=0, atol=1e-9))]
        if missing:
            raise ValueError(
                f"levels {missing}: not among the levels of the given intervals {given.tolist()}"
            )
        keep = [int(np.flatnonzero(np.isclose(given, p, rtol=0, atol=1e-9))[0]) for p in levels]
        given, lo, hi = given[keep], lo[keep], hi[keep]
    inside = (lo <= y) & (y <= hi)
    m = y.size
    k = inside.sum(axis=1)
    lower, upper, extra, attrs = _grouped_wilson(k, m, lambda: inside, ds, ci)
    with np.errstate(invalid="ignore"):
        width = np.mean(hi - lo, axis=1)
    return xr.Dataset(
        {
            "picp": ("level", k / m),
            "picp_lower": ("level", lower),
            "picp_upper": ("level", upper),
            "valid": ("level", (lower <= given) & (given <= upper)),
            "mpiw": ("level", width),
            "n_inside": ("level", k.astype(np.int64)),
            "n_points": ((), m),
            **extra,
        },
        coords={"level": given},
        attrs=attrs,
    )


def interval_coverage(data, *, levels=DEFAULT_LEVELS, generative="normal", ci=0.95, intervals="uE"):
    r"""Coverage of the central prediction intervals ``E in +-uE q_D((1 + p) / 2)``.

    For each level p, the prediction interval coverage probability (PICP) is the share of
    points inside their interval, with the Wilson score interval with continuity
    correction (Newcombe (1998)), the method of :func:`uqviz.fraction_valid`; the mean
    prediction interval width (MPIW) is ``2 q_D((1 + p) / 2) <uE>``. A calibrated model
    has PICP = p at every level. Coverage depends on D only through its quantiles, so it
    does not need finite moments of the z-scores (robust to heavy tails, Pernot (2024b)).

    Parameters
    ----------
    data : xarray.Dataset or xarray.DataTree
        Errors ``E`` and standard uncertainties ``uE`` on dim ``point`` (with any features), as
        made by :func:`uqviz.from_arrays` and the other constructors; a DataTree gives one
        result per dataset, on dim ``dataset``.
    levels : sequence of float, default (0.5, 0.68, 0.9, 0.95, 0.99)
        Nominal coverages p, distinct, in (0, 1).
    generative : str or Generative, default "normal"
        D of the intervals: ``"normal"``, ``"t<nu>"`` (unit-variance Student-t), ...
        (``uqviz.generative``).
    ci : float, default 0.95
        Level of the binomial interval of each PICP, in (0, 1).
    intervals : {"uE", "given"}, default "uE"
        ``"uE"``: the intervals ``+-uE q_D((1 + p)/2)``; ``"given"``: the intervals the
        dataset holds, as :func:`uqviz.from_predictions` keeps them or a distribution
        recalibration (``"conformal"``, ``"cqr"``, ``"quantile"``) makes them: ``lower`` and
        ``upper`` at their ``level``, or the central intervals of its ``quantiles`` (levels
        ``tau`` and ``1 - tau``); ``y`` inside ``[lower, upper]`` (``E`` without ``y``).
        ``levels`` then selects among their levels (the default: all of them), and
        ``generative`` plays no part.

    Returns
    -------
    xarray.Dataset
        On ``level``: ``picp``, ``picp_lower``, ``picp_upper``, ``valid`` (p inside the
        interval), ``mpiw`` (units of E), ``multiplier`` (q_D((1 + p) / 2); not with
        ``intervals="given"``), ``n_inside``, and for grouped points ``design_effect``;
        ``n_points``; attrs ``intervals`` (grouped points: ``n_groups``).

    Raises
    ------
    ValueError
        A level outside (0, 1), repeated levels, bad data; ``intervals="given"`` on a dataset
        without intervals or quantiles, or ``levels`` that are not among theirs.

    See Also
    --------
    uqviz.calibration_curve : the coverage at every level.
    uqviz.local_interval_coverage : PICP per bin.
    uqviz.plots.scores.coverage : draws PICP against the level.

    Notes
    -----
    For the level :math:`p`,

    .. math::

       \mathrm{PICP}_p = \frac{1}{M}\sum_{i=1}^M \mathbf{1}\left(|E_i| \le u_{E_i}
       q_D\left(\frac{1+p}{2}\right)\right), \qquad
       \mathrm{MPIW}_p = 2 q_D\left(\frac{1+p}{2}\right) \langle u_E \rangle;

    ``valid`` when :math:`p` lies in the Wilson interval of :math:`\mathrm{PICP}_p`.

    The Wilson interval with continuity correction of a proportion :math:`\hat p = k / n`
    (Newcombe (1998), method 4), with :math:`z = \Phi^{-1}((1 + \mathrm{ci})/2)`, has the
    lower limit

    .. math::

       L = \frac{2n\hat p + z^2 - 1 - z\sqrt{z^2 - 2 - 1/n + 4\hat p(n(1 - \hat p) + 1)}}
       {2(n + z^2)}, \qquad
       U = \frac{2n\hat p + z^2 + 1 + z\sqrt{z^2 + 2 - 1/n + 4\hat p(n(1 - \hat p) - 1)}}
       {2(n + z^2)},

    with :math:`L = 0` when :math:`\hat p = 0` and :math:`U = 1` when :math:`\hat p = 1`.

    Points in groups (a ``group`` coordinate, docs/conventions.md "Several targets and
    groups") are not independent: the interval is then that of the effective number of
    points :math:`n = M / d` (Kish) with the same share inside, :math:`d \ge 1` the design
    effect of the level's indicators, their cluster-robust variance over the binomial one
    (``uqviz._array.clusters.proportion_design_effect``; Cameron & Miller (2015)).

    References
    ----------
    - Newcombe (1998): the Wilson interval with continuity correction.
    - Pernot (2024b): heavy tails, which make moment statistics unreliable but not coverage.
    - Cameron & Miller (2015): the cluster-robust variance of grouped points.

    Full entries: :doc:`/docs/references`.

    Examples
    --------
    >>> import uqviz
    >>> ds = uqviz.synthetic.default_example()
    >>> cov = uqviz.interval_coverage(ds, levels=(0.9, 0.95))
    >>> cov["picp"].round(3).values.tolist(), cov["valid"].values.tolist()
    ([0.901, 0.947], [True, True])
    >>> t6 = uqviz.interval_coverage(ds, levels=(0.95,), generative="t6")
    >>> round(float(t6["multiplier"][0]), 4)  # q of the unit-variance t6 at 0.975
    1.9979

    The intervals of a conformal recalibration, as given:

    >>> rec = uqviz.fit_recalibration(ds, method="conformal", level=0.9)
    >>> cov = uqviz.interval_coverage(rec.apply(ds), intervals="given")
    >>> cov["level"].values.tolist(), round(float(cov["picp"][0]), 2)
    ([0.9], 0.9)
    """
    intervals = checks.choice("intervals", intervals, INTERVAL_SOURCES)
    ci = checks.probability("ci", ci)
    gen_name = get_generative(generative).name
    if intervals == "given":
        levels = (
            None if levels is None or levels is DEFAULT_LEVELS else checks.levels("levels", levels)
        )
        out = map_datasets(_given_one, data, levels=levels, generative=generative, ci=ci)
        out.attrs.update(
            {
                "ci": ci,
                "method": "wilson",
                "intervals": intervals,
                "interval": "y in [lower, upper], the intervals given",
            }
        )
        return out
    levels = checks.levels("levels", levels)
    out = map_datasets(_coverage_one, data, levels=levels, generative=generative, ci=ci)
    out.attrs.update(
        {
            "generative": gen_name,
            "ci": ci,
            "method": "wilson",
            "intervals": intervals,
            "interval": "E in +-uE q_D((1 + level) / 2)",
        }
    )
    return out


def _curve_one(ds, *, rng, n_levels, kind, generative, ci):
    warn_points_independent(ds, "calibration_curve")
    e, u = checked_points(ds)
    gen = generative_for(generative, ds)
    expected = np.linspace(0.0, 1.0, n_levels)
    z = e / u
    with np.errstate(divide="ignore"):
        if kind == "interval":
            k = score_kernels.count_within(np.sort(np.abs(z)), gen.ppf(0.5 + expected / 2.0))
        else:
            k = score_kernels.count_below(np.sort(z), gen.ppf(expected))
    m = e.size
    observed = k / m
    lower, upper = wilson_interval(k, m, ci=ci, continuity=True)
    diff = observed - expected
    return xr.Dataset(
        {
            "observed": ("level", observed),
            "observed_lower": ("level", lower),
            "observed_upper": ("level", upper),
            "n_inside": ("level", k.astype(np.int64)),
            "miscalibration_area": ((), score_kernels.miscalibration_area(expected, observed)),
            "mace": ((), float(np.mean(np.abs(diff)))),
            "rmsce": ((), float(np.sqrt(np.mean(diff * diff)))),
            "n_points": ((), m),
        },
        coords={"level": expected},
    )


def calibration_curve(data, *, n_levels=100, kind="interval", generative="normal", ci=0.95):
    r"""Observed vs expected proportions, with miscalibration area, MACE and RMSCE.

    The expected proportions are ``p = linspace(0, 1, n_levels)``. ``kind="interval"``:
    observed = share of points with ``|E| <= uE q_D(0.5 + p / 2)`` (inside the central
    interval of level p); ``kind="quantile"``: share with ``E <= uE q_D(p)`` (below the
    predicted p-quantile). Scalars: the miscalibration area between the curve and the
    diagonal (trapezoids, with crossings of the diagonal split), the mean absolute
    calibration error MACE = mean ``|observed - p|`` and the root mean squared calibration
    error RMSCE = sqrt(mean (observed - p)^2).

    With the defaults (normal D, 100 interval levels), the three scalars equal
    uncertainty-toolbox 0.1.1's ``miscalibration_area``,
    ``mean_absolute_calibration_error`` and ``root_mean_squared_calibration_error``
    (Chung et al. 2021). uncertainty-toolbox's ``prop_type="quantile"`` counts the
    normalised residuals ``(prediction - reference) / uE = -Z`` below the quantile: it
    equals ``kind="quantile"`` on the data with E negated.

    Parameters
    ----------
    data : xarray.Dataset or xarray.DataTree
        Errors ``E`` and standard uncertainties ``uE`` on dim ``point`` (with any features), as
        made by :func:`uqviz.from_arrays` and the other constructors; a DataTree gives one
        result per dataset, on dim ``dataset``.
    n_levels : int, default 100
        Number of expected proportions, >= 2 (0 and 1 included).
    kind : {"interval", "quantile"}, default "interval"
        Central intervals of level p, or predicted p-quantiles (one-sided).
    generative : str or Generative, default "normal"
        Distribution D of the intervals or quantiles (``uqviz.generative``).
    ci : float, default 0.95
        Level of the Wilson interval (continuity-corrected) of each observed proportion, in (0,
        1).

    Returns
    -------
    xarray.Dataset
        On ``level`` (the expected proportions): ``observed``, ``observed_lower``,
        ``observed_upper``, ``n_inside``; scalars ``miscalibration_area``, ``mace``,
        ``rmsce``, ``n_points``.

    See Also
    --------
    uqviz.interval_coverage : the coverage at a few levels, with verdicts.
    uqviz.qce : quantile calibration error.
    uqviz.plots.scores.calibration_curve : draws the curve.

    Notes
    -----
    For :math:`L` expected proportions :math:`p_j` (``kind="interval"``),

    .. math::

       o_j = \frac{1}{M}\sum_{i=1}^M
       \mathbf{1}\left(|E_i| \le u_{E_i} q_D(\tfrac12 + \tfrac{p_j}2)\right),
       \qquad
       \mathrm{MACE} = \frac{1}{L}\sum_j |o_j - p_j|, \qquad
       \mathrm{RMSCE} = \sqrt{\frac{1}{L}\sum_j (o_j - p_j)^2},

    and the miscalibration area :math:`\int_0^1 |o(p) - p| \, dp` by trapezoids
    (Chung et al. (2021)).

    The Wilson interval with continuity correction of a proportion :math:`\hat p = k / n`
    (Newcombe (1998), method 4), with :math:`z = \Phi^{-1}((1 + \mathrm{ci})/2)`, has the
    lower limit

    .. math::

       L = \frac{2n\hat p + z^2 - 1 - z\sqrt{z^2 - 2 - 1/n + 4\hat p(n(1 - \hat p) + 1)}}
       {2(n + z^2)}, \qquad
       U = \frac{2n\hat p + z^2 + 1 + z\sqrt{z^2 + 2 - 1/n + 4\hat p(n(1 - \hat p) - 1)}}
       {2(n + z^2)},

    with :math:`L = 0` when :math:`\hat p = 0` and :math:`U = 1` when :math:`\hat p = 1`.

    Points in groups (a ``group`` coordinate, docs/conventions.md "Several targets and
    groups") are not independent: the interval is then that of the effective number of
    points :math:`n = M / d` (Kish) with the same share inside, :math:`d \ge 1` the design
    effect of the level's indicators, their cluster-robust variance over the binomial one
    (``uqviz._array.clusters.proportion_design_effect``; Cameron & Miller (2015)).

    References
    ----------
    - Chung et al. (2021): calibration curve, miscalibration area, MACE, RMSCE.
    - Newcombe (1998): the Wilson interval with continuity correction.
    - Wilson (1927): the score interval.

    Full entries: :doc:`/docs/references`.

    Examples
    --------
    >>> import uqviz
    >>> curve = uqviz.calibration_curve(uqviz.synthetic.default_example())
    >>> int(curve.sizes["level"]), bool(curve["mace"] < 0.02)
    (100, True)
    """
    n_levels = checks.count("n_levels", n_levels, minimum=2)
    checks.choice("kind", kind, CURVE_KINDS)
    ci = checks.probability("ci", ci)
    gen_name = get_generative(generative).name
    out = map_datasets(_curve_one, data, n_levels=n_levels, kind=kind, generative=generative, ci=ci)
    out.attrs.update(
        {"n_levels": n_levels, "kind": kind, "generative": gen_name, "ci": ci, "method": "wilson"}
    )
    return out
