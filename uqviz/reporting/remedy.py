"""The report's "Remedy" section: cross-fitted recalibrations, re-validated side by side.

When average calibration, consistency or adaptivity fails, :func:`uqviz.report` recalibrates
the data with each method of :func:`uqviz.recalibrate` (cross-fitted, so that validating the
result on the same data is honest) and re-validates each result with the tests that failed
and those that passed: ZMS with its verdict (and the tailedness screen of the recalibrated
data), f_v of LZMS vs uE and vs each feature, the coverage of the 95 % intervals, and NLL and
CRPS before and after (:func:`uqviz.proper_scores`, paired: the same resamples before and
after). :func:`uqviz.reporting.wording.remedy_sentence` then says in words which method
repairs what.

The methods: ``"scaling"``, ``"linear"``, ``"isotonic"``, ``"bvs"`` on uE, and ``"bvs"`` on
each feature with more than :data:`uqviz.reporting.build.DISCRETE_MAX_VALUES` distinct values.
The isotonic output is a step function of uE (one value per block): it is re-validated vs uE
with ``binning="stratified"``. Every method uses the same folds and every re-validation the
same bootstrap seeds, so that the methods are compared on the same draws.

A second block, :func:`run_distribution_remedy` (``remedy["distribution"]``), repairs the
forecast rather than its uE: cross-fitted conformal intervals (:func:`uqviz.recalibrate`,
``method="conformal"``) with their marginal coverage, which the finite-sample guarantee
covers, and their coverage per bin of uE and of each feature, which it does not; and, for a
forecast given as an interval, quantiles or samples, the quantile recalibration
(``method="quantile"``) re-validated by :func:`uqviz.validate_pit`.

Functions here call the public compute functions only.
"""

from __future__ import annotations

import warnings

import numpy as np

from uqviz.average.validation import TAILEDNESS_THRESHOLDS, validate_average
from uqviz.conditional.local import fraction_valid, local_calibration
from uqviz.conditional.null import share_null
from uqviz.engine import seeds
from uqviz.engine.binning import compute_bins, conditioning_values
from uqviz.predictive.pit import validate_pit
from uqviz.recalibration.fitting import fit_recalibration, recalibrate
from uqviz.engine.verdicts import decide
from uqviz.reporting import wording
from uqviz.reporting.verdicts import pit_entry
from uqviz.scores.coverage import interval_coverage
from uqviz.scores.proper import proper_scores

__all__ = [
    "REMEDY_N_BOOT",
    "REMEDY_N_MC",
    "REMEDY_FOLDS",
    "DISTRIBUTION_LEVEL",
    "remedy_methods",
    "run_remedy",
    "run_distribution_remedy",
    "coverage_of",
    "property_status",
    "lzms_sharing_null",
]

#: bootstrap replicates of each re-validation (at most; fewer when the report's ``n_boot``
#: is smaller): enough for the verdicts of f_v and ZMS (Monte Carlo error of a 95 % BCa limit
#: about 0.1 se), and 4 + n_features re-validations stay within a few seconds on QM9
REMEDY_N_BOOT = 1000
#: simulated bins of the calibrated null of f_v in each re-validation (the local analyses
#: use 2000): the Monte Carlo se of a bin's null probability, about 0.01, is small against
#: the binomial spread of the count of valid bins; halves the cost of the remedy's nulls
REMEDY_N_MC = 1000
#: folds of the cross-fitted recalibrations (the default of :func:`uqviz.recalibrate`)
REMEDY_FOLDS = 5
#: the level of the coverage shown for each method
REMEDY_LEVEL = 0.95
#: the level of the conformal (and quantile-recalibrated) intervals of the distribution
#: remedy: the default of :func:`uqviz.recalibrate`, which leaves 10 % of the points outside,
#: enough to see the local coverage depart from the level in bins of 100 points
DISTRIBUTION_LEVEL = 0.9


def remedy_methods(features):
    """``[(label, method, conditioning)]``: the recalibrations tried, simplest first.

    Examples
    --------
    >>> [m[0] for m in remedy_methods(["mass"])]
    ['scaling', 'linear', 'isotonic', 'bvs_uE', 'bvs_mass']
    """
    out = [
        ("scaling", "scaling", "uE"),
        ("linear", "linear", "uE"),
        ("isotonic", "isotonic", "uE"),
        ("bvs_uE", "bvs", "uE"),
    ]
    return out + [(f"bvs_{f}", "bvs", f) for f in features]


def property_status(valid, reliable=True, computed=True, heavy_tail=False) -> str:
    """One test's outcome as a verdict word: ``"OK"``, ``"fails"``, ``"unreliable"`` or
    ``"not tested"`` (could not be computed).

    ``heavy_tail``: a tail screen questions the plain test and ``valid`` is the outcome of
    the test that allows for the tails (issue 36): "fails" when it rejects, else
    "unreliable", never "OK". ``reliable`` False (no interval, an unstable bootstrap):
    "unreliable" whatever ``valid``. The re-validation of average calibration reads the
    ``verdict`` of :func:`uqviz.validate_average` directly.

    Examples
    --------
    >>> property_status(True), property_status(False), property_status(True, reliable=False)
    ('OK', 'fails', 'unreliable')
    >>> property_status(False, heavy_tail=True), property_status(True, heavy_tail=True)
    ('fails', 'unreliable')
    """
    return decide(not bool(valid), reliable=reliable, tested=computed, heavy_tail=heavy_tail)


def _f(x):
    x = float(x)
    return x if np.isfinite(x) else None


def _zms(ds, n_boot, seed, engine=None):
    avg = validate_average(ds, statistics=("ZMS",), n_boot=n_boot, rng=seed, engine=engine)
    z = avg.sel(statistic="ZMS")  # its verdict carries the tail rule (issue 36)
    heavy = [
        v
        for v in wording.HEAVY_FOR_ZMS
        if float(avg["beta_gm"].sel(variable=v)) > TAILEDNESS_THRESHOLDS[v]
    ]
    lo, hi = _f(z["ci_lower"]), _f(z["ci_upper"])
    computed = lo is not None and hi is not None
    valid = bool(z["valid"]) and computed
    return {
        "estimate": _f(z["estimate"]),
        "ci_lower": lo,
        "ci_upper": hi,
        "reference": 1.0,
        "valid": valid,
        "heavy_tails": heavy,
        "verdict_p_value": _f(z["verdict_p_value"]),
        "status": str(z["verdict"].values) if computed else "not tested",
    }


def lzms_sharing_null(data, *, donor=None, n_mc=None, **kwargs):
    """:func:`uqviz.local_calibration` of the ZMS with the calibrated null of ``donor`` (an
    LZMS of the same data in bins of the same sizes,
    ``uqviz.conditional.null.share_null``) when it can, else with its own null of
    ``n_mc`` bins (default: that of ``local_calibration``).

    Examples
    --------
    >>> import uqviz
    >>> ds = uqviz.synthetic.default_example()
    >>> a = lzms_sharing_null(ds, n_bins=10, n_boot=200, rng=0)
    >>> b = lzms_sharing_null(ds, donor=a, conditioning="X", n_bins=10, n_boot=200, rng=1)
    >>> b.attrs["null_from"]
    'uE'
    """
    kw = dict(kwargs, statistic="ZMS")
    if donor is not None:
        shared = share_null(local_calibration(data, **kw, n_mc=0), donor)
        if shared is not None:
            return shared
    return local_calibration(data, **kw, **({} if n_mc is None else {"n_mc": n_mc}))


def _fv(ds, cond, binning, n_bins, n_boot, seed, donor=None, engine=None):
    lzms = lzms_sharing_null(
        ds,
        donor=donor,
        n_mc=REMEDY_N_MC,
        conditioning=cond,
        binning=binning,
        n_bins=None if binning == "stratified" else n_bins,
        n_boot=n_boot,
        rng=seed,
        engine=engine,
    )
    fv = fraction_valid(lzms)
    ok = bool(fv["valid"])
    return {
        "estimate": _f(fv["estimate"]),
        "ci_lower": _f(fv["ci_lower"]),
        "ci_upper": _f(fv["ci_upper"]),
        "reference": _f(fv["reference"]),
        "reference_lower": _f(fv["reference_lower"]),
        "p_value": _f(fv["p_value"]),
        "n_unreliable": int(fv["n_unreliable"]),
        "n_valid": int(fv["n_valid"]),
        "n_bins": int(fv["n_bins"]),
        "binning": binning,
        "valid": ok,
        # the f_v verdict word when fraction_valid gives one (its own tail rule), else
        # the word of valid
        "status": str(fv["verdict"].values) if "verdict" in fv else property_status(ok),
    }, lzms


def _coverage(ds):
    cov = interval_coverage(ds, levels=(REMEDY_LEVEL,)).isel(level=0)
    return {
        "level": REMEDY_LEVEL,
        "picp": _f(cov["picp"]),
        "picp_lower": _f(cov["picp_lower"]),
        "picp_upper": _f(cov["picp_upper"]),
        "valid": bool(cov["valid"]),
    }


def _scores(ds, n_boot, seed, engine=None):
    res = proper_scores(
        ds, scores=("nll", "crps"), generative="normal", n_boot=n_boot, rng=seed, engine=engine
    )
    return {
        str(s): {
            "estimate": _f(res["estimate"].sel(score=s)),
            "ci_lower": _f(res["ci_lower"].sel(score=s)),
            "ci_upper": _f(res["ci_upper"].sel(score=s)),
        }
        for s in res["score"].values
    }


def describe_method(data, method, conditioning, n_bins=None) -> str:
    """The method in words, with the parameters of a fit on all the data (for the reader;
    the re-validated values are cross-fitted).

    Examples
    --------
    >>> import uqviz
    >>> ds = uqviz.synthetic.nig(2000, nu=20, rng=0)
    >>> describe_method(ds.assign(uE=ds["uE"] / 2), "scaling", "uE")
    'scaling by 1.99'
    """
    try:
        p = fit_recalibration(
            data,
            method=method,
            conditioning=conditioning,
            n_bins=n_bins if method == "bvs" else None,
        ).parameters
    except (TypeError, ValueError):
        p = None
    if method == "scaling":
        return "scaling" + ("" if p is None else f" by {float(p['factor']):.3g}")
    if method == "linear":
        return "linear recalibration" + (
            "" if p is None else f" ({float(p['a']):.3g} uE {float(p['b']):+.3g})"
        )
    if method == "isotonic":
        return "isotonic regression"
    return f"BVS on {conditioning}"


def _properties(conds):
    return ["average calibration"] + [wording.property_name(c) for c in conds]


def run_remedy(data, before, *, conds, binning_of, n_bins, n_boot, rng, engine=None):
    """Recalibrate ``data`` by each method and re-validate; the JSON-ready "remedy" block.

    Parameters
    ----------
    data : xarray.Dataset
    before : dict
        Property name -> status before recalibration (``"average calibration"``,
        ``"consistency"``, ``"adaptivity in <feature>"``).
    conds : list of str
        The conditioning variables re-validated (``"uE"`` and the non-constant features).
    binning_of : callable
        ``binning_of(ds, variable) -> (binning, n_bins)``: the binning rule of the report's
        local analyses (by value for a few-valued variable), applied to the recalibrated data.
    n_bins : int or None
        The report's ``n_bins`` as given (passed to BVS; None: BVS's default).
    n_boot : int
        Bootstrap replicates of each re-validation.
    rng : numpy.random.Generator
        Its children (``uqviz.engine.seeds``) draw the folds (one seed for every method), the
        bootstrap of ZMS and LZMS and that of the scores (the same for every method and for
        the data before).
    engine : {"numba", "numpy"}, optional
        Resampling kernel of every re-validation's bootstrap.

    Returns
    -------
    (dict, dict, list of str)
        The block, the LZMS results per method label (for figures), the warnings.
    """
    fold_seed, boot_seed, score_seed = (seeds.kernel_seed(r) for r in seeds.spawn(rng, 3))
    feats = [c for c in conds if c != "uE"]
    methods = [
        m
        for m in remedy_methods(feats)  # BVS cuts equal-count bins: not few-valued
        if m[2] == "uE" or binning_of(data, m[2])[0] != "stratified"
    ]
    warns = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            scores_before = _scores(data, n_boot, score_seed, engine)
        except (TypeError, ValueError) as exc:
            scores_before = {"error": str(exc)}
        rows, locals_ = [], {}
        for label, method, cond in methods:
            row = {
                "label": label,
                "method": method,
                "conditioning": cond,
                "description": describe_method(data, method, cond, n_bins),
            }
            try:
                rec = recalibrate(
                    data,
                    method=method,
                    conditioning=cond,
                    folds=REMEDY_FOLDS,
                    rng=fold_seed,
                    n_bins=n_bins if method == "bvs" else None,
                )
                row["zms"] = _zms(rec, n_boot, boot_seed, engine)
                row["fv"], locals_[label] = {}, {}
                donor = None  # one calibrated null per recalibrated dataset
                for c in conds:
                    binning, nb = binning_of(rec, c)
                    if method == "isotonic" and c == "uE":
                        binning = "stratified"  # a step function of uE: bins by value
                    row["fv"][c], locals_[label][c] = _fv(
                        rec, c, binning, nb, n_boot, boot_seed, donor, engine
                    )
                    if donor is None and binning != "stratified":
                        donor = locals_[label][c]
                row["coverage"] = _coverage(rec)
                row["scores"] = _scores(rec, n_boot, score_seed, engine)
            except (TypeError, ValueError) as exc:
                row = {**row, "error": str(exc)}
                locals_.pop(label, None)
            if "error" not in row:
                status = {
                    "average calibration": row["zms"]["status"],
                    **{wording.property_name(c): row["fv"][c]["status"] for c in conds},
                }
            else:
                status = dict.fromkeys(_properties(conds), "not tested")
            row["status"] = status
            row["repairs"] = [p for p, s in before.items() if s != "OK" and status.get(p) == "OK"]
            row["validated"] = bool(status) and all(s == "OK" for s in status.values())
            rows.append(row)
    for w in caught:
        text = f"remedy: {w.message}"
        if text not in warns:
            warns.append(text)
    validated = [r["label"] for r in rows if r["validated"]]
    block = {
        "before": {"status": before, "scores": scores_before},
        "methods": rows,
        "validated": validated,
        "recommended": validated[0] if validated else None,
        "n_boot": n_boot,
        "folds": REMEDY_FOLDS,
        "level": REMEDY_LEVEL,
        "triggered_by": [p for p, s in before.items() if s != "OK"],
        "summary": wording.remedy_sentence(before, rows),
    }
    return block, locals_, warns


# ---------------------------------------------------------------------------------------
# the distribution remedy: conformal intervals and quantile recalibration
# ---------------------------------------------------------------------------------------


def _given_coverage(rec):
    """PICP of the interval ``lower``/``upper`` of ``rec`` with its Wilson interval
    (:func:`uqviz.interval_coverage` with ``intervals="given"``), JSON-ready."""
    cov = interval_coverage(rec, intervals="given").isel(level=0)
    return {
        "n_points": int(cov["n_points"]),
        "n_inside": int(cov["n_inside"]),
        "picp": float(cov["picp"]),
        "picp_lower": float(cov["picp_lower"]),
        "picp_upper": float(cov["picp_upper"]),
        "valid": bool(cov["valid"]),
    }


def coverage_of(data, rec, level, conds, binning_of):
    """Coverage of the interval ``lower``/``upper`` of ``rec`` over the observed values of
    ``data``: marginal and per bin of each variable of ``conds`` (binned by ``binning_of``,
    the report's rule); JSON-ready.

    Examples
    --------
    >>> import uqviz
    >>> ds = uqviz.synthetic.nig(1000, nu=20, rng=0)
    >>> rec = uqviz.recalibrate(ds, method="conformal", rng=0)
    >>> cov = coverage_of(ds, rec, 0.9, ["uE"], lambda d, c: ("equal_count", 5))
    >>> cov["marginal"]["n_inside"] == int(((rec.lower <= ds.E) & (ds.E <= rec.upper)).sum())
    True
    >>> len(cov["local"]["uE"]["bins"])
    5
    """
    out = {"level": level, "marginal": _given_coverage(rec), "local": {}}
    for c in conds:
        binning, nb = binning_of(data, c)
        x = conditioning_values(data, c)[1]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # ties split: said by the report's local analyses
            bins = compute_bins(x, n_bins=nb, binning=binning)
        rows = []
        for b in range(bins.n_bins):
            sel = bins.order[bins.starts[b] : bins.starts[b] + bins.sizes[b]]
            rows.append(
                {
                    "bin_lower": float(bins.lower[b]),
                    "bin_upper": float(bins.upper[b]),
                    **_given_coverage(rec.isel(point=np.sort(sel))),
                }
            )
        excl = [i for i, r in enumerate(rows) if not r["valid"]]
        out["local"][c] = {
            "binning": binning,
            "bins": rows,
            "n_bins": len(rows),
            "n_excluding": len(excl),
            "under": sum(1 for i in excl if rows[i]["picp_upper"] < level),
            "over": sum(1 for i in excl if rows[i]["picp_lower"] > level),
        }
    return out


def run_distribution_remedy(
    data, *, form, conds, binning_of, pit_before=None, rng, level=DISTRIBUTION_LEVEL
):
    """Recalibrate the distribution, cross-fitted, and re-validate: the JSON-ready
    ``remedy["distribution"]`` block.

    Parameters
    ----------
    data : xarray.Dataset
    form : str
        The forecast's form (:func:`uqviz.predictive.forecast_form`).
    conds : list of str
        The variables of the local coverage (``"uE"`` and the non-constant features).
    binning_of : callable
        ``binning_of(ds, variable) -> (binning, n_bins)``: the report's binning rule.
    pit_before : dict, optional
        The report's PIT entry (:func:`uqviz.reporting.verdicts.pit_entry`), for a forecast
        given as an interval, quantiles or samples.
    rng : numpy.random.Generator
        Its children draw the folds (one seed for both methods) and the PIT of the quantile
        recalibration.
    level : float, default 0.9
        Level of the conformal intervals.

    Returns
    -------
    (dict, list of str)
        The block and the warnings.
    """
    fold_seed, pit_seed = (seeds.kernel_seed(r) for r in seeds.spawn(rng, 2))
    block = {"level": level, "folds": REMEDY_FOLDS, "form": form}
    warns = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            rec = recalibrate(
                data, method="conformal", level=level, folds=REMEDY_FOLDS, rng=fold_seed
            )
            block["conformal"] = coverage_of(data, rec, level, conds, binning_of)
            m = data.sizes["point"]
            block["conformal"]["n_calibration"] = m - -(-m // REMEDY_FOLDS)  # smallest fit
        except (TypeError, ValueError) as exc:
            block["conformal"] = {"error": str(exc)}
        if form in ("interval", "quantiles", "samples"):
            try:
                rec = recalibrate(
                    data, method="quantile", level=level, folds=REMEDY_FOLDS, rng=fold_seed
                )
                res = validate_pit(rec, rng=pit_seed)
                after = pit_entry(res)
                block["quantile"] = {
                    "pit": after,
                    "forecast": str(rec.attrs.get("forecast")),
                    "status": after["verdict"],
                    "before": None if pit_before is None else pit_before["verdict"],
                }
            except (TypeError, ValueError) as exc:
                block["quantile"] = {"error": str(exc)}
    for w in caught:
        text = f"distribution remedy: {w.message}"
        if text not in warns:
            warns.append(text)
    block["summary"] = wording.distribution_sentence(block)
    return block, warns
