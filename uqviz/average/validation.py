"""Average calibration: bootstrap validation with zeta-scores, and the tailedness screen."""

from __future__ import annotations

import warnings

import numpy as np
import xarray as xr

from uqviz._array import stats as stats_kernels
from uqviz._array.bca import METHODS, p_value, verdict
from uqviz.data.model import check_dataset
from uqviz.engine import checks
from uqviz.engine.bootstrap import bootstrap_against_reference
from uqviz.engine.options import BootstrapOptions
from uqviz.engine.statistics import get_statistic, reference_value, statistics_option
from uqviz.engine.parallel import resolve_client
from uqviz.engine.tree import map_datasets
from uqviz.engine.verdicts import NOT_TESTED, decide
from uqviz.engine.warning_classes import UnreliableWarning
from uqviz._array.tails import P_FLOOR
from uqviz.average.tails import TAIL_TESTED, null_p_values, tail_fit

__all__ = [
    "validate_average",
    "tailedness",
    "TAILEDNESS_THRESHOLDS",
    "TAILEDNESS_SCREENS",
    "MIN_POINTS",
    "MIN_TESTED",
    "BCA_MIN_POINTS",
    "beta_text",
    "average_verdicts",
    "beta_gm_screened",
    "screens_pass",
    "squares",
]

#: beta_GM above which a screen fails (Pernot (2024b), Table II).
TAILEDNESS_THRESHOLDS = {"uE2": 0.6, "E2": 0.8, "Z2": 0.8}

#: statistic -> the screens that question it. Pernot (2024b): uE^2 questions RCE (Table II),
#: E^2 and Z^2 question RCE and ZMS "respectively" (sect. V.C): the ZMS and the statistics of
#: Z alone (ZVar; NLL, whose verdict is the ZMS's) by Z^2 only. beta_GM(E^2) > 0.8 fires on
#: calibrated data with heavy-tailed uE (E^2 = uE^2 Z^2) while the ZMS interval covers at its
#: level (docs/notes.md, "Tail screen of the ZMS"; benchmarks/bench_tail_screen.py).
#: Statistics not listed are not screened.
TAILEDNESS_SCREENS = {
    "RCE": ("uE2", "E2", "Z2"),
    "RCE2": ("uE2", "E2", "Z2"),
    "ZMS": ("Z2",),
    "NLL": ("Z2",),
    "ZVar": ("Z2",),
    "MSE": ("E2",),
    "RMSE": ("E2",),
    "MV": ("uE2",),
    "RMV": ("uE2",),
}

#: fewest points validate_average accepts: with M >= 3 every leave-one-out sample of the
#: jackknife (BCa acceleration) holds 2 points, the fewest ZVar (ddof=1) is defined on.
MIN_POINTS = 3

#: fewest points from which a verdict is given (below: "not tested"), per statistic: the
#: Student-t null needs a shape to fit (measured: benchmarks/bench_verdicts.py, small sets).
MIN_TESTED = {"ZMS": 10, "NLL": 10, "ZVar": 10, "RCE": 10, "RCE2": 10}

#: fewest points from which the BCa interval decides a verdict whose tail screen passes; below,
#: the Student-t null decides. Measured (benchmarks/bench_verdicts.py --tails; 100-200
#: calibrated sets): the BCa interval of the ZMS failed calibrated normal sets 13 % of the time
#: at M = 20, 7 % at 50-100, 8.5 % at 200, 6 % at 300, and t3 sets whose screen passes (one in
#: five at M = 500) often enough that the verdict failed 13-14 % of calibrated t3 sets of 500
#: points; statistics without a Student-t null are "not tested" below this size.
BCA_MIN_POINTS = 1000


def beta_text(beta, threshold, digits=2):
    """``beta`` printed with the fewest decimals (at least ``digits``) that keep it visibly
    on its side of ``threshold``: never "0.80 > 0.8" for 0.8004.

    Examples
    --------
    >>> beta_text(0.8004, 0.8), beta_text(0.93, 0.8), beta_text(0.79996, 0.8)
    ('0.8004', '0.93', '0.79996')
    >>> beta_text(float("nan"), 0.8)
    'nan'
    """
    beta, threshold = float(beta), float(threshold)
    if not np.isfinite(beta) or beta == threshold:
        return f"{beta:.{digits}f}"
    for d in range(digits, 17):
        text = f"{beta:.{d}f}"
        if (float(text) > threshold) == (beta > threshold) and float(text) != threshold:
            return text
    return repr(beta)


def squares(e, u, which=None):
    """(3, M) stack of uE^2, E^2, Z^2 (TAILEDNESS_THRESHOLDS order), or row ``which`` alone."""
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        rows = (lambda: u * u, lambda: e * e, lambda: (e / u) ** 2)
        if which is not None:
            return rows[which]()
        return np.stack([r() for r in rows])


def beta_gm_screened(x):
    """beta_GM along the last axis; NaN for a constant row (no tail to screen: rounding
    alone used to give 1.00, a failed screen, for a constant uE)."""
    with np.errstate(over="ignore", under="ignore", invalid="ignore", divide="ignore"):
        beta = np.asarray(stats_kernels.beta_gm(x), dtype=float)
        x = np.asarray(x)
        hi, lo = np.max(x, axis=-1), np.min(x, axis=-1)
        flat = np.isfinite(hi) & (hi - lo <= 1e-12 * np.maximum(np.abs(hi), np.abs(lo)))
    return np.where(flat, np.nan, beta) if beta.ndim else (np.nan if flat else float(beta))


def screens_pass(names, beta):
    """Per statistic: no screen that questions it is exceeded."""
    exceeded = {v: bool(b > TAILEDNESS_THRESHOLDS[v]) for v, b in zip(TAILEDNESS_THRESHOLDS, beta)}
    return np.array([not any(exceeded[v] for v in TAILEDNESS_SCREENS.get(s, ())) for s in names])


def _screen_text(name, beta):
    """``"beta_GM(Z^2) = 0.85 > 0.8"`` for each failed screen of ``name``."""
    b = dict(zip(TAILEDNESS_THRESHOLDS, beta))
    label = {"uE2": "uE^2", "E2": "E^2", "Z2": "Z^2"}
    return ", ".join(
        f"beta_GM({label[v]}) = {beta_text(b[v], TAILEDNESS_THRESHOLDS[v])} > "
        f"{TAILEDNESS_THRESHOLDS[v]:g}"
        for v in TAILEDNESS_SCREENS.get(name, ())
        if b[v] > TAILEDNESS_THRESHOLDS[v]
    )


def _df_text(lo, hi):
    """``"2.9-4.1"``, ``"12 to the normal"``: the degrees of freedom of the null."""
    if not np.isfinite(hi):
        return f"{lo:.3g} to inf (normal)"
    return f"{lo:.3g}-{hi:.3g}"


def _one_verdict(name, *, m, valid, p, null_p, reliable, reference, interval, tails, alpha):
    """(word, p-value, reason) of one statistic (see :func:`average_verdicts`); ``tails``:
    (beta, df_lower, df_upper), the screen's beta_GM and the Student-t df of the null."""
    beta, df_lower, df_upper = tails
    if not np.isfinite(reference):
        return NOT_TESTED, np.nan, f"{name} has no predefined reference"
    least = MIN_TESTED.get(name, BCA_MIN_POINTS)
    if m < least:
        return (
            NOT_TESTED,
            np.nan,
            (
                f"{m} points are fewer than the {least} a verdict on "
                f"{name} needs (a bootstrap of a handful of points is no "
                "test)"
            ),
        )
    if not interval:
        return (
            decide(False, reliable=False),
            p,
            (f"the {name} interval could not be computed (degenerate bootstrap distribution)"),
        )
    tail_tested = name in TAIL_TESTED and np.isfinite(null_p)
    if not reliable:
        why = _screen_text(name, beta)
        if not tail_tested:
            return (
                decide(False, reliable=False),
                p,
                (
                    f"{why}: heavy tails make the {name} interval unreliable (Pernot (2024b), "
                    "Table II) and it has no tail-allowing test"
                ),
            )
        word = decide(null_p <= alpha, heavy_tail=True)
        how = (
            "the departure is larger than such tails explain"
            if word != "unreliable"
            else "within what such tails can produce on calibrated data: no conclusion"
        )
        p_text = f"p <= {P_FLOOR:.2g}" if null_p <= P_FLOOR + 1e-12 else f"p = {null_p:.2g}"
        return (
            word,
            null_p,
            (
                f"{why}: heavy tails (Pernot (2024b), Table II); against "
                f"calibrated z-scores as heavy-tailed "
                f"as the data's (Student-t, {_df_text(df_lower, df_upper)} degrees "
                f"of freedom), {p_text}: {how}"
            ),
        )
    if m < BCA_MIN_POINTS and tail_tested:
        return (
            decide(null_p <= alpha),
            null_p,
            (
                f"{m} points: decided against calibrated Student-t z-scores of "
                f"{_df_text(df_lower, df_upper)} degrees of freedom (below {BCA_MIN_POINTS} "
                "points the BCa interval is no test)"
            ),
        )
    return decide(not valid), p, ""


def average_verdicts(
    names,
    *,
    m,
    valid,
    p_value,
    null_p_value,
    reliable,
    reference,
    interval,
    beta,
    df_lower,
    df_upper=np.inf,
    ci=0.95,
):
    """The verdict word, its p-value and its reason for each statistic of a validation.

    - no reference, or fewer than ``MIN_TESTED`` points: "not tested";
    - no interval: "unreliable";
    - a tail screen of the statistic fails (``reliable`` False): the Student-t null of
      ``df_lower`` to ``df_upper`` degrees of freedom (``null_p_value``, the largest p-value
      over them) decides: "fails" when it rejects, "unreliable" otherwise
      (the zone of doubt the tails open), never "OK"; without such a null, "unreliable";
    - fewer than ``BCA_MIN_POINTS`` points: the Student-t null decides, "OK" or "fails";
    - otherwise the BCa interval decides (Pernot (2024b), eq. 13): "OK" or "fails".

    Returns
    -------
    words : list of str
    p_values : ndarray
        The p-value each verdict rests on (NaN when not tested).
    reasons : list of str

    Examples
    --------
    >>> w, p, r = average_verdicts(
    ...     ["ZMS"], m=5000, valid=[False], p_value=[1e-4], null_p_value=[0.2],
    ...     reliable=[False], reference=[1.0], interval=[True], beta=[0.5, 0.9, 0.85],
    ...     df_lower=2.9)
    >>> w, float(p[0])
    (['unreliable'], 0.2)
    >>> average_verdicts(["ZMS"], m=5, valid=[True], p_value=[0.5], null_p_value=[0.5],
    ...                  reliable=[True], reference=[1.0], interval=[True],
    ...                  beta=[0.5, 0.5, 0.5], df_lower=5.0)[0]
    ['not tested']
    """
    alpha = 1.0 - ci
    words, ps, reasons = [], [], []
    for k, name in enumerate(names):
        w, p, r = _one_verdict(
            name,
            m=int(m),
            valid=bool(valid[k]),
            p=float(p_value[k]),
            null_p=float(null_p_value[k]),
            reliable=bool(reliable[k]),
            reference=float(reference[k]),
            interval=bool(interval[k]),
            tails=(beta, float(df_lower), float(df_upper)),
            alpha=alpha,
        )
        words.append(w)
        ps.append(p)
        reasons.append(r)
    return words, np.array(ps, dtype=float), reasons


def _validate_one(ds, *, rng, statistics, boot, return_replicates):
    """One dataset's validation; ``boot``: the :class:`~uqviz.engine.options.BootstrapOptions`
    (the stream is ``rng``)."""
    check_dataset(ds)
    ci, method = boot.ci, boot.method
    e, u = np.asarray(ds["E"].values, dtype=float), np.asarray(ds["uE"].values, dtype=float)
    if e.size < MIN_POINTS:
        raise ValueError(
            f"data: validate_average needs at least {MIN_POINTS} points, got "
            f"{e.size} (too few for a bootstrap interval)"
        )
    stats = [get_statistic(s) for s in statistics]
    boot = boot.for_data(ds)  # the cluster bootstrap when the points carry groups
    res = bootstrap_against_reference(
        e,
        u,
        stats,
        n_boot=boot.n_boot,
        ci=ci,
        method=method,
        rng=rng,
        engine=boot.engine,
        client=boot.client,
        clusters=boot.clusters,
    )
    names = [s.name for s in stats]
    est = np.array([res[s].estimate[0] for s in names])
    lower = np.array([res[s].lower[0] for s in names])
    upper = np.array([res[s].upper[0] for s in names])
    ref = np.array([reference_value(s, e, u) for s in names])
    zeta, valid = verdict(est, ref, lower, upper)
    # the interval's own inverse, from the same replicates: p <= 1 - ci iff not valid
    pval = np.array(
        [
            float(
                p_value(
                    res[s].estimate[0],
                    res[s].replicates[0],
                    r,
                    method=method,
                    z0=None if res[s].z0 is None else res[s].z0[0],
                    accel=None if res[s].accel is None else res[s].accel[0],
                )
            )
            for s, r in zip(names, ref)
        ]
    )
    # one variable at a time: a few arrays of M, not of 3 M, for large data
    beta = np.array([beta_gm_screened(squares(e, u, v)) for v in range(3)])
    reliable = screens_pass(names, beta)
    df_est, region = tail_fit(e, u)
    df_low = float(region[0]) if region.size else np.nan
    df_high = float(region[-1]) if region.size else np.nan
    # the Student-t null draws independent points: not a null of correlated groups
    null_p = (
        null_p_values(names, e, u, region) if boot.clusters is None else np.full(len(names), np.nan)
    )
    words, verdict_p, reasons = average_verdicts(
        names,
        m=e.size,
        valid=valid,
        p_value=pval,
        null_p_value=null_p,
        reliable=reliable,
        reference=ref,
        interval=np.isfinite(lower) & np.isfinite(upper),
        beta=beta,
        df_lower=df_low,
        df_upper=df_high,
        ci=ci,
    )
    out = xr.Dataset(
        {
            "estimate": ("statistic", est),
            "reference": ("statistic", ref),
            "bias": ("statistic", np.array([res[s].bias[0] for s in names])),
            "se": ("statistic", np.array([res[s].se[0] for s in names])),
            "ci_lower": ("statistic", lower),
            "ci_upper": ("statistic", upper),
            "zeta": ("statistic", zeta),
            "valid": ("statistic", valid),
            "p_value": (
                "statistic",
                pval,
                {
                    "long_name": "two-sided p-value of the reference (inverse of the "
                    "interval: p_value <= 1 - ci exactly when valid is False)"
                },
            ),
            "reliable": (
                "statistic",
                reliable,
                {
                    "long_name": "no tailedness screen questioning the statistic is "
                    "exceeded (Pernot (2024b), Table II)"
                },
            ),
            "null_p_value": (
                "statistic",
                null_p,
                {
                    "long_name": "two-sided p-value of the estimate under calibrated "
                    "Student-t z-scores, the largest over the degrees of "
                    "freedom tail_df_lower-tail_df_upper, plus 0.001 "
                    "(the tail-allowing test)"
                },
            ),
            "verdict": (
                "statistic",
                np.array(words, dtype=object).astype(str),
                {"long_name": "verdict word: OK, fails, unreliable, not tested"},
            ),
            "verdict_p_value": (
                "statistic",
                verdict_p,
                {
                    "long_name": "the p-value the verdict rests on: p_value, or "
                    "null_p_value under a failed tail screen or "
                    "below BCA_MIN_POINTS points"
                },
            ),
            "reason": ("statistic", np.array(reasons, dtype=object).astype(str)),
            "tail_df": (
                (),
                df_est,
                {
                    "long_name": "degrees of freedom of the Student-t "
                    "fitted to the z-scores (inf: normal)"
                },
            ),
            "tail_df_lower": (
                (),
                df_low,
                {
                    "long_name": "heaviest Student-t consistent with "
                    "the z-scores (99.9 % likelihood-ratio "
                    "set)"
                },
            ),
            "tail_df_upper": (
                (),
                df_high,
                {"long_name": "lightest Student-t consistent with the z-scores (inf: the normal)"},
            ),
            "beta_gm": ("variable", beta, {"long_name": "robust skewness beta_GM"}),
            "n_points": ((), e.size),
        },
        coords={"statistic": names, "variable": list(TAILEDNESS_THRESHOLDS)},
    )
    if method == "bca":
        out["z0"] = ("statistic", np.array([res[s].z0[0] for s in names]))
        out["acceleration"] = ("statistic", np.array([res[s].accel[0] for s in names]))
    if return_replicates:
        out["replicates"] = (
            ("statistic", "replicate"),
            np.stack([res[s].replicates[0] for s in names]),
        )
    if boot.clusters is not None:  # ungrouped results keep their attrs (resample: points)
        out.attrs.update(resample=boot.resample, n_groups=boot.attrs["n_groups"])
    return out


def average_statistic_names(statistics):
    """The ``statistics`` option of the average analyses (validate_average, decimation_curve).

    The names of registered statistics that are not binned: binned ones are refused with a
    pointer to the analyses that handle them.
    """
    stats = statistics_option("statistics", statistics)
    binned = [s.name for s in stats if s.kind == "binned"]
    if binned:
        raise ValueError(
            f"statistics: {binned} are binned statistics, whose bootstrap intervals are biased "
            "and which have no predefined reference; validate them against a simulated "
            "reference with uqviz.validate_simulated, or get their bin-wise values with "
            "uqviz.binned_errors"
        )
    return tuple(s.name for s in stats)


def _where(out, mask):
    """Labels "statistic" or "dataset/statistic" of the cells where ``mask`` holds."""
    sets = [d for d in ("dataset", "target") if d in mask.dims]  # a targets tree: "target"
    mask = mask.transpose(*sets, *[d for d in ("statistic",) if d in mask.dims])
    labels = []
    for idx in zip(*np.nonzero(np.atleast_1d(mask.values))):
        cell = mask[idx] if mask.ndim else mask
        s = str(cell["statistic"].values)
        labels.append(f"{cell[sets[0]].values}/{s}" if sets else s)
    return labels


def _warn(out):
    """The warnings of a validation: no reference, NaN intervals, failed tailedness screens."""
    no_ref = _where(out, out["reference"].isnull())
    if no_ref:
        names = sorted({c.split("/")[-1] for c in no_ref})
        warnings.warn(
            f"validate_average: {names} have no predefined reference: their intervals "
            "are returned with reference and zeta NaN and valid False; validate them "
            "against a simulated reference with uqviz.validate_simulated",
            UnreliableWarning,
            stacklevel=3,
        )
    bad = out["ci_lower"].isnull() | out["ci_upper"].isnull()
    if bool(bad.any()):
        cells = _where(out, bad)
        warnings.warn(
            f"validate_average: {len(cells)} of {bad.size} intervals could not be "
            f"computed (degenerate bootstrap distribution, or n_boot too small): "
            f"{cells}; they are reported valid=False",
            UnreliableWarning,
            stacklevel=3,
        )
    unreliable = ~out["reliable"]
    if bool(unreliable.any()):
        beta = out["beta_gm"]
        parts = []
        for cell in _where(out, unreliable):
            *dset, s = cell.split("/")
            b = beta.sel(dataset=dset[0]) if dset else beta
            why = [
                f"beta_GM({v}) = "
                f"{beta_text(float(b.sel(variable=v)), TAILEDNESS_THRESHOLDS[v])} > "
                f"{TAILEDNESS_THRESHOLDS[v]:g}"
                for v in TAILEDNESS_SCREENS.get(s, ())
                if float(b.sel(variable=v)) > TAILEDNESS_THRESHOLDS[v]
            ]
            parts.append(f"{cell}: {', '.join(why)}")
        warnings.warn(
            "validate_average: tailedness screen of Pernot (2024b), Table II, "
            "exceeded (the BCa interval may be too narrow; the verdict is decided "
            "against calibrated z-scores as heavy-tailed as the data's: 'fails' or "
            "'unreliable', never 'OK'): " + "; ".join(parts),
            UnreliableWarning,
            stacklevel=3,
        )


def validate_average(
    data,
    *,
    statistics=("ZMS", "RCE"),
    n_boot=10_000,
    ci=0.95,
    method="bca",
    rng=None,
    engine=None,
    return_replicates=False,
    client=None,
):
    r"""Validate average calibration by bootstrap intervals and zeta-scores
    (Pernot (2024b), eq. 14).

    Parameters
    ----------
    data : xarray.Dataset or xarray.DataTree
        Variables ``E``, ``uE`` on dim ``point`` (at least 3 points); a DataTree gives one
        result per dataset, on dim ``dataset``.
    statistics : sequence of str, default ("ZMS", "RCE")
        Moment or generic statistics; binned ones are refused (see
        :func:`uqviz.validate_simulated`). Those without a reference get NaN
        ``reference``/``zeta``, ``valid`` False and a warning.
    n_boot : int, default 10000
        Number of bootstrap replicates, an int >= 2; the resamples are paired, shared by all
        statistics.
    ci : float, default 0.95
        Confidence level of the intervals, in (0, 1).
    method : {"bca", "percentile", "basic"}, default "bca"
        How the bootstrap interval is computed: "bca" (bias-corrected and accelerated, DiCiccio
        & Efron (1996)), "percentile" or "basic".
    rng : None, int, numpy.random.SeedSequence or numpy.random.Generator, default None
        Random stream: None (fresh entropy), an int >= 0, a numpy.random.SeedSequence (copied,
        never consumed) or a numpy.random.Generator; the same ``rng`` gives the same numbers on
        any number of threads or workers (docs/conventions.md, "Randomness").
    engine : {"numba", "numpy"}, optional
        Resampling kernel of the bootstrap (default numba).
    return_replicates : bool, default False
        Also return the replicates on dim ``replicate``.
    client : None, "local" or dask.distributed.Client, default None
        Where the bootstrap runs (docs/conventions.md); the numbers do not depend on it.

    Returns
    -------
    xarray.Dataset
        On (``dataset``,) ``statistic``: ``estimate``, ``reference``, ``bias``,
        ``se``, ``ci_lower``, ``ci_upper``, ``zeta``, ``valid`` (reference inside the
        interval), ``p_value`` (two-sided p-value of the reference, from the same
        replicates: the smallest ``1 - ci`` whose interval excludes it,
        ``uqviz._array.bca.p_value``; ``p_value <= 1 - ci`` exactly when ``valid`` is
        False, up to rounding; NaN without a reference or an interval; below about
        ``1/n_boot`` it reads "below 1/n_boot"), ``reliable`` (no tailedness screen that
        questions the statistic is exceeded, ``TAILEDNESS_SCREENS``), ``null_p_value``
        (two-sided p-value of the estimate against calibrated Student-t z-scores, the
        largest over the degrees of freedom ``tail_df_lower`` to ``tail_df_upper`` plus their
        set's level 0.001, Berger & Boos (1994): the tail-allowing test,
        :func:`uqviz.average.tails.null_p_values`; NaN for statistics without one),
        ``verdict`` (the word, :func:`uqviz.average.validation.average_verdicts`),
        ``verdict_p_value`` (the p-value it rests on) and ``reason`` (and ``z0``,
        ``acceleration`` for BCa); ``beta_gm`` on ``variable``; ``n_points``, ``tail_df``
        (the Student-t fitted to the z-scores), ``tail_df_lower`` and ``tail_df_upper`` (the
        heaviest and lightest consistent with them, 99.9 % likelihood-ratio set).

    Warns
    -----
    UnreliableWarning
        No reference, an interval that cannot be computed, or an unreliable statistic.

    See Also
    --------
    uqviz.tailedness : the tailedness screen behind ``reliable``.
    uqviz.statistics.point_estimate : the formulas of every registered statistic.
    uqviz.validate_simulated : statistics without a predefined reference (binned ones).
    uqviz.decimation_curve : the statistics after removing the largest uncertainties.
    uqviz.validation_probability : how often this test validates calibrated data.
    uqviz.plots.average.intervals : draws the intervals and references.
    uqviz.plots.average.zeta_comparison : draws the zeta-scores of two statistics.

    Notes
    -----
    With the z-scores :math:`Z_i = E_i / u_{E_i}` of the :math:`M` points,

    .. math::

       \mathrm{ZMS} = \langle Z^2 \rangle = \frac{1}{M}\sum_{i=1}^M Z_i^2, \qquad
       \mathrm{RCE} = \frac{\mathrm{RMV} - \mathrm{RMSE}}{\mathrm{RMV}}, \quad
       \mathrm{RMV} = \sqrt{\langle u_E^2 \rangle}, \ \mathrm{RMSE} = \sqrt{\langle E^2 \rangle}

    with references 1 and 0 (Pernot (2024b), eqs. 11 and 7).

    The BCa interval of level :math:`1 - \alpha` takes the quantiles :math:`\alpha_1`
    (:math:`\gamma = \alpha/2`) and :math:`\alpha_2` (:math:`\gamma = 1 - \alpha/2`) of the
    :math:`B` bootstrap replicates :math:`\hat\theta^*_b` (DiCiccio & Efron (1996)),

    .. math::

       \alpha_{1,2} = \Phi\left(z_0 + \frac{z_0 + \Phi^{-1}(\gamma)}
       {1 - a (z_0 + \Phi^{-1}(\gamma))}\right), \qquad
       z_0 = \Phi^{-1}\left(\frac{\#\{\hat\theta^*_b < \hat\theta\}}{B}\right),

    with the acceleration :math:`a` from the jackknife (Efron & Tibshirani (1993)).

    The statistic is validated when its reference lies in the interval
    :math:`I = [I^-, I^+]`, :math:`\vartheta_{ref} \in I` (Pernot (2024b), eq. 13), or
    equivalently :math:`|\zeta| \le 1` (eq. 15) with the zeta-score (eq. 14)

    .. math::

       \zeta = \begin{cases}
       \dfrac{\vartheta_{est} - \vartheta_{ref}}{I^+ - \vartheta_{est}} &
       \vartheta_{est} \le \vartheta_{ref} \\[1ex]
       \dfrac{\vartheta_{est} - \vartheta_{ref}}{\vartheta_{est} - I^-} &
       \vartheta_{est} > \vartheta_{ref}
       \end{cases}

    ``p_value`` inverts the BCa mapping at the reference (Efron (1987)). A statistic is
    ``reliable`` when no tailedness screen that questions it is exceeded: the robust skewness
    :math:`\beta_{GM}` of :math:`u_E^2`, :math:`E^2` or :math:`Z^2` below its safety limit
    (Pernot (2024b), Table II).

    The ``verdict``: with the screen passed and at least ``BCA_MIN_POINTS`` points, the BCa
    interval decides ("OK" when it holds the reference, else "fails"; Pernot (2024b), eq.
    13). Heavy tails make that interval too narrow, but they do not make a large departure
    meaningless: under a failed screen the estimate is compared with its law on calibrated
    data whose z-scores are Student-t (Pernot (2024b)'s TIG model of D, rescaled to unit
    variance) with any of the degrees of freedom the data's z-scores are consistent with
    (``tail_df_lower`` to ``tail_df_upper``; the largest p-value over them plus the set's
    level, Berger & Boos (1994): valid whatever the true df), and the verdict is "fails" when
    that test rejects at ``1 - ci``, "unreliable" otherwise, never "OK". Below
    ``BCA_MIN_POINTS`` points the same null decides "OK" or "fails"; below ``MIN_TESTED``
    points a verdict is "not tested".

    References
    ----------
    - Pernot (2024b), eqs. 7, 11 and 13-15: RCE, ZMS, the interval test, the zeta-score; Table
      II: the tailedness screen.
    - Pernot (2024a): ZMS vs RCE on the nine literature sets.
    - DiCiccio & Efron (1996): the BCa interval.
    - Efron (1987): the p-value of a BCa interval.
    - Efron & Tibshirani (1993): the jackknife acceleration.
    - Berger & Boos (1994): a p-value maximised over a confidence set of a nuisance parameter
      (the degrees of freedom of the Student-t null).

    Full entries: :doc:`/docs/references`.

    Examples
    --------
    >>> import uqviz
    >>> ds = uqviz.synthetic.nig(2000, nu=20, rng=0)
    >>> res = uqviz.validate_average(ds, n_boot=2000, rng=1)
    >>> bool(res["valid"].sel(statistic="ZMS")), bool(res["reliable"].sel(statistic="ZMS"))
    (True, True)
    >>> bool(res["p_value"].sel(statistic="ZMS") > 1 - res.attrs["ci"])
    True
    """
    boot = BootstrapOptions.check(
        n_boot=n_boot, ci=ci, method=method, rng=rng, engine=engine, methods=METHODS
    )
    return_replicates = checks.boolean("return_replicates", return_replicates)
    statistics = average_statistic_names(statistics)
    boot = boot.replace(client=resolve_client(client))
    out = map_datasets(
        _validate_one,
        data,
        rng=rng,
        statistics=statistics,
        boot=boot,
        return_replicates=return_replicates,
    )
    out.attrs.update(
        {
            "statistics": list(statistics),
            "n_boot": boot.n_boot,
            "ci": boot.ci,
            "method": boot.method,
            "rng": boot.attrs["rng"],
            "engine": boot.engine,
            "citation": "Pernot (2024b), eq. 14 (zeta), Table II (tail thresholds)",
        }
    )
    _warn(out)
    return out


def _tailedness_one(ds, *, rng=None):
    check_dataset(ds)
    names = list(TAILEDNESS_THRESHOLDS)
    x = squares(np.asarray(ds["E"].values, dtype=float), np.asarray(ds["uE"].values, dtype=float))
    beta = beta_gm_screened(x)
    with np.errstate(over="ignore", under="ignore", invalid="ignore", divide="ignore"):
        kappa = stats_kernels.kappa_cs(x)
    thr = np.array([TAILEDNESS_THRESHOLDS[n] for n in names])
    return xr.Dataset(
        {
            "beta_gm": ("variable", beta),
            "kappa_cs": ("variable", kappa),
            "threshold": ("variable", thr),
            "heavy_tail": ("variable", beta > thr),
        },
        coords={"variable": names},
    )


def tailedness(data):
    r"""Tailedness screen of uE^2, E^2 and Z^2 (Pernot (2024b), Table II).

    Parameters
    ----------
    data : xarray.Dataset or xarray.DataTree
        Errors ``E`` and standard uncertainties ``uE`` on dim ``point`` (with any features), as
        made by :func:`uqviz.from_arrays` and the other constructors; a DataTree gives one
        result per dataset, on dim ``dataset``.

    Returns
    -------
    xarray.Dataset
        On (``dataset``,) ``variable``: ``beta_gm``, ``kappa_cs``, ``threshold``, ``heavy_tail``
        (``beta_gm > threshold``: the tail screen fails).

    See Also
    --------
    uqviz.validate_average : uses this screen for its ``reliable`` flag.
    uqviz.nig_skewness_curve : the same measures on calibrated NIG samples.
    uqviz.distribution_shapes : parametric fits of the same three variables.
    uqviz.plots.average.skewness_map : draws beta_GM against kappa_CS.

    Notes
    -----
    For each :math:`X \in \{u_E^2, E^2, Z^2\}`, with the Harrell-Davis median
    :math:`\tilde X` and quantiles :math:`q_p` (Harrell & Davis (1982)),

    .. math::

       \beta_{GM} = \frac{\langle X \rangle - \tilde X}{\langle |X - \tilde X| \rangle}, \qquad
       \kappa_{CS} = \frac{q_{0.975} - q_{0.025}}{q_{0.75} - q_{0.25}} - 2.91

    (Groeneveld & Meeden (1984); Crow & Siddiqui (1967)). ``heavy_tail`` is
    :math:`\beta_{GM}` above ``threshold``, the safety limit of Pernot (2024b), Table II.

    References
    ----------
    - Pernot (2024b), Table II: the safety limits of beta_GM.
    - Groeneveld & Meeden (1984): the robust skewness beta_GM.
    - Crow & Siddiqui (1967): the robust kurtosis kappa_CS.
    - Harrell & Davis (1982): the quantile estimator.

    Full entries: :doc:`/docs/references`.

    Examples
    --------
    >>> import uqviz
    >>> t = uqviz.tailedness(uqviz.synthetic.nig(5000, nu=20, rng=0))
    >>> bool(t["heavy_tail"].sel(variable="uE2"))
    False
    """
    out = map_datasets(_tailedness_one, data)
    out.attrs.update({"citation": "Pernot (2024b), Table II", "quantiles": "Harrell-Davis"})
    return out
