"""The verdicts of a report or a CI gate, decided once, with their family-wise control.

Each test of a report becomes an *entry*: a dict with ``verdict`` (a word of
:mod:`uqviz.engine.verdicts`), ``p_value``, ``reliable``, ``reason`` and the numbers it rests
on. The entries are of two kinds:

- the **calibration questions** (``QUESTIONS``): average calibration, consistency,
  adaptivity per feature, and the PIT uniformity of a forecast given as an interval,
  quantiles or samples. Their words make the **headline** (:func:`headline`): the report's
  ``numbers["verdict"]`` and the exit status of the CI gate;
- the **further diagnostics** (``FURTHER_DIAGNOSTICS``): ENCE, ZMSE and CC against simulated
  references (whose references depend on the unknown shape D of the errors, Pernot (2024c)),
  and the interval coverage at the quantiles of D (a finding on the shape of the errors, or
  on a conditional miscalibration). They keep their own words, in their own block.

The tests with a p-value, the questions and ENCE, ZMSE and CC, form one family:
:func:`decide_family` applies Holm's adjustment (Holm 1979) so that a calibrated model gets one
"fails" or more in at most ``1 - ci`` of reports, whatever the number of features. ENCE, ZMSE
and CC enter it with the p-value of their intersection-union test over the generative D's (the
largest of the per-D p-values: a "fails" is decided under every D), so that a "fails" of theirs
that survives the adjustment is a failure at the family's level and makes the headline "fails";
their "unreliable" (the verdict depends on D) never reaches the headline. Keeping them in the
family (rather than deciding the questions alone) leaves the headline's "fails" exactly what
it was before issue 36: the same rejections at the same family-wise level, the same power
against consistency failures, which ENCE and ZMSE detect. The interval coverage is decided apart
(Holm over its levels) and never enters the headline: its "fails" requires a failing question.

Functions here read results computed elsewhere; they never compute a statistic.
"""

from __future__ import annotations

import numbers

import numpy as np
import xarray as xr

from uqviz.average.validation import TAILEDNESS_SCREENS, TAILEDNESS_THRESHOLDS, beta_text
from uqviz.engine.verdicts import FAILS, NOT_TESTED, OK, UNRELIABLE, decide, holm, overall

__all__ = [
    "average_entry",
    "local_entry",
    "coverage_entry",
    "reference_entry",
    "pit_entry",
    "not_tested",
    "decide_family",
    "decide_targets_family",
    "entry_word",
    "overall",
    "ALPHA",
    "QUESTIONS",
    "FURTHER_DIAGNOSTICS",
    "is_question",
    "question_label",
    "headline",
    "verdict_table",
    "decide_tests",
    "TABLE_FIELDS",
]

#: the family-wise false-alarm rate of a report and of the CLI gate (1 - ci)
ALPHA = 0.05
_LABEL = {"uE2": "uE^2", "E2": "E^2", "Z2": "Z^2"}
#: the calibration questions: the kinds of entry (the key before ":") whose words make the
#: headline of a report and the exit status of the CI gate
QUESTIONS = ("average", "consistency", "adaptivity", "pit")
#: the further diagnostics of a report: their own words, never an "unreliable" headline
FURTHER_DIAGNOSTICS = ("ENCE", "ZMSE", "CC", "coverage")


def _f(x):
    try:
        x = float(x)
    except (TypeError, ValueError):
        return None
    return x if np.isfinite(x) else None


def not_tested(reason: str) -> dict:
    """An entry for a test that could not be run.

    Examples
    --------
    >>> not_tested("uE is constant")["verdict"]
    'not tested'
    """
    return {
        "verdict": NOT_TESTED,
        "p_value": None,
        "reliable": True,
        "reason": reason,
        "gated": False,
    }


def heavy_reasons(beta, variables) -> list[str]:
    """``"beta_GM(Z^2) = 0.8123 > 0.8"`` for each screen of ``variables`` that fails.

    Examples
    --------
    >>> import xarray as xr
    >>> beta = xr.DataArray([0.5, 0.85, 0.80004], coords={"variable": ["uE2", "E2", "Z2"]})
    >>> heavy_reasons(beta, ("E2", "Z2"))
    ['beta_GM(E^2) = 0.85 > 0.8', 'beta_GM(Z^2) = 0.80004 > 0.8']
    """
    out = []
    for v in variables:
        b, t = float(beta.sel(variable=v)), TAILEDNESS_THRESHOLDS[v]
        if b > t:
            out.append(f"beta_GM({_LABEL[v]}) = {beta_text(b, t)} > {t:g}")
    return out


def average_entry(avg, statistic="ZMS") -> dict:
    """The entry of one statistic of :func:`uqviz.validate_average` (its tail screen inside).

    Examples
    --------
    >>> import uqviz
    >>> avg = uqviz.validate_average(uqviz.synthetic.nig(2000, nu=20, rng=0),
    ...                              statistics=("ZMS",), n_boot=500, rng=0)
    >>> e = average_entry(avg)
    >>> e["verdict"], e["gated"]
    ('OK', True)
    """
    r = avg.sel(statistic=statistic)
    lo, hi = _f(r["ci_lower"]), _f(r["ci_upper"])
    entry = {
        "statistic": statistic,
        "estimate": _f(r["estimate"]),
        "ci_lower": lo,
        "ci_upper": hi,
        "reference": _f(r["reference"]),
        "valid": bool(r["valid"]),
        "p_value": _f(r["p_value"]) if "p_value" in r else None,
        "gated": True,
    }
    if entry["reference"] is None:
        return {**entry, **not_tested(f"{statistic} has no predefined reference")}
    if "verdict" in r:  # the verdict of validate_average: its p-value, its tail rule
        return _average_verdict_entry(entry, r)
    if entry["p_value"] is None:  # no p-value: the interval decides alone
        entry["p_value"] = 1.0 if entry["valid"] else 0.0
    heavy = heavy_reasons(avg["beta_gm"], TAILEDNESS_SCREENS.get(statistic, ()))
    if lo is None or hi is None:
        entry.update(
            reliable=False,
            reason=f"the {statistic} interval could not be computed "
            "(degenerate bootstrap distribution)",
        )
    elif heavy:
        entry.update(
            reliable=False,
            reason=", ".join(heavy) + ": heavy tails or outliers make "
            f"the {statistic} and its interval unreliable (Pernot (2024b), Table II)",
        )
    else:
        entry.update(reliable=True, reason="")
    entry["verdict"] = decide(not entry["valid"], reliable=entry["reliable"])
    return entry


def _average_verdict_entry(entry, r) -> dict:
    """``entry`` completed from the ``verdict``, ``verdict_p_value`` and ``reason`` of one
    statistic of :func:`uqviz.validate_average`: under a failed tail screen its p-value is the
    Student-t null's and ``heavy_tail`` is True (entry_word: "fails" or "unreliable")."""
    word, reason = str(r["verdict"].values), str(r["reason"].values)
    if word == NOT_TESTED:
        return {**entry, **not_tested(reason)}
    interval = entry["ci_lower"] is not None and entry["ci_upper"] is not None
    screened = bool(r["reliable"])
    entry.update(
        p_value=_f(r["verdict_p_value"]),
        reliable=screened and interval,
        heavy_tail=interval and not screened and _f(r["null_p_value"]) is not None,
        reason=reason,
        verdict=word,
    )
    if entry["p_value"] is None:
        entry["p_value"] = 1.0 if word != FAILS else 0.0
    if "tail_df_lower" in r:
        entry["tail_df"] = _f(r["tail_df_lower"])
    return entry


def local_entry(fv, local_result, tail, *, conditioning, adjusted=False) -> dict:
    """The entry of a consistency or adaptivity test: the calibrated f_v test.

    ``fv`` is :func:`uqviz.fraction_valid` of ``local_result`` (the LZMS bins);
    ``tail`` the tailedness screen of the (tested) data. A failed Z^2 screen of the whole
    set widens the zone of doubt but does not erase the answer: the entry gets
    ``reliable`` False and ``heavy_tail`` True, and its ``p_value`` is the calibrated
    null's, a test that allows for the tails (the null's simulated bins have the data's
    own z-scores, ``generative="empirical"`` of :func:`uqviz.local_calibration`); the word
    is then "fails" when that test rejects (after Holm, :func:`decide_family`), else
    "unreliable", never "OK" (:func:`entry_word`; one aberrant error gives its bin an
    enormous interval that holds the reference). A p-value that does not allow for the
    tails (the Wilson rule, or a null of another D) leaves the entry "unreliable".

    Examples
    --------
    >>> import xarray as xr
    >>> fv = xr.Dataset({"estimate": 0.9, "ci_lower": 0.8, "ci_upper": 0.95,
    ...                  "reference": 0.93, "reference_lower": 0.88, "n_valid": 90,
    ...                  "n_bins": 100, "n_unreliable": 1, "valid": True, "p_value": 0.2},
    ...                 attrs={"method": "calibrated", "generative": "empirical"})
    >>> heavy = xr.Dataset({"beta_gm": ("variable", [0.95])}, coords={"variable": ["Z2"]})
    >>> e = local_entry(fv, None, heavy, conditioning="uE")
    >>> e["verdict"], e["reliable"], e["heavy_tail"]
    ('unreliable', False, True)
    >>> local_entry(fv.assign(valid=False, p_value=0.001), None, heavy,
    ...             conditioning="uE")["verdict"]
    'fails'
    """
    n_bins = int(fv["n_bins"])
    entry = {
        "conditioning": conditioning,
        "adjusted": adjusted,
        "estimate": _f(fv["estimate"]),
        "ci_lower": _f(fv["ci_lower"]),
        "ci_upper": _f(fv["ci_upper"]),
        "reference": _f(fv.get("reference")),
        "reference_lower": _f(fv.get("reference_lower")),
        "n_valid": int(fv["n_valid"]),
        "n_bins": n_bins,
        "n_unreliable": int(fv["n_unreliable"]),
        "valid": bool(fv["valid"]),
        "method": fv.attrs.get("method"),
        "gated": True,
    }
    p = _f(fv["p_value"]) if "p_value" in fv else None
    entry["p_value"] = p if p is not None else (1.0 if entry["valid"] else 0.0)
    heavy = heavy_reasons(tail["beta_gm"], ("Z2",))
    tail_allowing = (
        fv.attrs.get("method") == "calibrated"
        and p is not None
        and fv.attrs.get("generative") == "empirical"
    )
    if heavy and tail_allowing:
        entry.update(
            reliable=False,
            heavy_tail=True,
            reason=", ".join(heavy) + " for the "
            "whole set: heavy tails or outliers make the bin intervals unreliable "
            "(Pernot (2024b), Table II); the calibrated null, simulated with the "
            "data's own z-scores, allows for them: 'fails' when it rejects, else "
            "'unreliable'",
        )
    elif heavy:
        entry.update(
            reliable=False,
            heavy_tail=False,
            reason=", ".join(heavy) + " for the "
            "whole set: heavy tails or outliers make the bin intervals unreliable "
            "(Pernot (2024b), Table II), and this test does not allow for them",
        )
    else:
        entry.update(reliable=True, heavy_tail=False, reason="")
    entry["verdict"] = entry_word(entry, not entry["valid"])
    return entry


def _coverage_p(cov):
    """Two-sided exact binomial p-value of each level's PICP; of grouped points (a
    ``design_effect`` in ``cov``), of the effective number of points ``n / deff`` (Kish)
    with the same share inside, rounded to counts."""
    from scipy import stats as sps  # imported here: `import uqviz` stays light

    n = int(cov["n_points"])
    k = np.asarray(cov["n_inside"].values, dtype=float)
    deff = (
        np.asarray(cov["design_effect"].values, dtype=float)
        if "design_effect" in cov
        else np.ones(k.shape)
    )
    n_eff = np.maximum(1, np.rint(n / deff)).astype(int)
    k_eff = np.clip(np.rint(k / n * n_eff), 0, n_eff).astype(int)
    return np.array(
        [
            sps.binomtest(int(kk), int(nn), float(lv)).pvalue
            for kk, nn, lv in zip(k_eff, n_eff, cov["level"].values)
        ]
    )


def coverage_entry(cov, average_verdict: str, alpha: float = ALPHA, *, conditional=None) -> dict:
    """The entry of the interval coverage at the quantiles of D (a further diagnostic).

    The PICP of each level is tested by the exact binomial test, Holm over the levels.
    Coverage depends on the shape D of the errors and on how the variance is spread over the
    points, as well as on the average variance. When the average calibration fails, so do the
    intervals: "fails". When it holds (or is unreliable) and the coverage is off, two causes
    remain, which the coverage alone cannot tell apart: the errors are not D-shaped, or uE is
    miscalibrated conditionally (too small for some points, too large for others: the ZMS
    averages it out, the intervals do not), which consistency and adaptivity test. The entry
    names the failing ones among ``conditional`` as the likely cause ("fails": a failure of
    uE); else it is "unreliable" (intervals at these quantiles cannot be trusted) and its
    reason says which tests to read.

    Parameters
    ----------
    cov : xarray.Dataset
        A result of :func:`uqviz.interval_coverage` (one dataset).
    average_verdict : str
        The verdict of the average calibration.
    alpha : float, default 0.05
        Family-wise level of the Holm adjustment over the levels.
    conditional : dict, optional
        ``{key: verdict}`` of the consistency and adaptivity tests (``"consistency"``,
        ``"adaptivity:<feature>"``), after the family's adjustment.

    Examples
    --------
    >>> import uqviz
    >>> cov = uqviz.interval_coverage(uqviz.synthetic.nig(5000, nu=20, rng=0))
    >>> coverage_entry(cov, "OK")["verdict"]
    'OK'
    >>> cov = uqviz.interval_coverage(uqviz.synthetic.default_example())  # off at 50, 68, 99 %
    >>> e = coverage_entry(cov, "OK", conditional={"consistency": "OK",
    ...                                            "adaptivity:x": "fails"})
    >>> e["verdict"], e["causes"]
    ('fails', ['adaptivity:x'])
    """
    p = _coverage_p(cov)
    rejected, adjusted = holm(p, alpha)
    levels = [float(v) for v in cov["level"].values]
    conditional = dict(conditional or {})
    entry = {
        "levels": levels,
        "picp": [float(v) for v in cov["picp"].values],
        "p_values": p.tolist(),
        "p_adjusted": adjusted.tolist(),
        "rejected_levels": [lv for lv, r in zip(levels, rejected) if r],
        "generative": cov.attrs.get("generative", "normal"),
        "gated": False,
        "p_value": float(np.nanmin(adjusted)) if adjusted.size else None,
        "causes": [],
    }
    gen = entry["generative"]
    failing = [k for k, w in conditional.items() if w == FAILS]
    undecided = [k for k, w in conditional.items() if w in (UNRELIABLE, NOT_TESTED)]
    if not rejected.any():
        entry.update(verdict=OK, reliable=True, reason="")
    elif average_verdict == FAILS:
        entry.update(
            verdict=FAILS,
            reliable=True,
            reason="the uncertainties fail on average, so do their intervals",
        )
    elif failing:
        names = _and([question_label(k) for k in failing])
        entry.update(
            verdict=FAILS,
            reliable=True,
            causes=failing,
            reason=f"the average calibration holds, but {names} "
            f"fail{'s' if len(failing) == 1 else ''}: uE is miscalibrated "
            "conditionally (too small for some points, too large for others), "
            "the likely cause; the shape of the errors (not "
            f"{gen}-shaped) can add to it",
        )
    else:
        if undecided:
            read = (
                f"{_and([question_label(k) for k in undecided])} cannot decide it "
                "(see their verdicts)"
            )
        elif conditional:
            read = (
                f"{_and([question_label(k) for k in conditional])}, its tests, do not "
                "fail here, which points at the shape"
            )
        else:
            read = "consistency and adaptivity are its tests"
        entry.update(
            verdict=UNRELIABLE,
            reliable=False,
            reason=f"intervals at {gen} quantiles do not cover their levels while "
            "the average calibration holds: the shape of the errors (not "
            f"{gen}-shaped) or a conditional miscalibration of uE (too small "
            f"for some points, too large for others) can cause it; {read}",
        )
    return entry


def reference_entry(res, statistic: str) -> dict:
    """The entry of ENCE, ZMSE or CC from :func:`uqviz.validate_shared` / ``validate``."""
    word = str(res["verdict"].values)
    reason = (
        str(res["reason"].values)
        if "reason" in res
        else ("its simulated reference depends on D" if word == UNRELIABLE else "")
    )
    p = _f(res["p_value"]) if "p_value" in res else None
    refs = {}
    if "reference" in res and "generative" in res["reference"].dims:
        refs = {str(g): _f(r) for g, r in zip(res["generative"].values, res["reference"].values)}
    return {
        "statistic": statistic,
        "estimate": _f(res["estimate"]),
        "references": refs,
        "verdict": word,
        "reliable": word != UNRELIABLE,
        "reason": reason,
        "p_value": p,
        "valid": bool(np.all(res["valid"].values)),
        "gated": p is not None,
    }


def pit_entry(res) -> dict:
    """The entry of the PIT uniformity test of :func:`uqviz.validate_pit` (one dataset).

    The verdict is the simultaneous band's (``valid``: the ECDF of the PIT inside its band,
    Säilynoja et al. (2022)); its p-value, for the family's Holm adjustment, is
    ``band_p_value`` (consistent with ``valid`` up to the discreteness of the simulated
    levels). KS, Cramér-von Mises and the moments are reported beside it, not gated.

    Examples
    --------
    >>> import uqviz
    >>> res = uqviz.validate_pit(uqviz.synthetic.nig(2000, nu=20, rng=0), rng=0, n_band=500)
    >>> e = pit_entry(res)
    >>> e["verdict"], e["gated"], e["p_value"] == float(res["band_p_value"])
    ('OK', True, True)
    """
    valid = bool(res["valid"])
    entry = {
        "forecast": str(res.attrs.get("forecast", "std")),
        "valid": valid,
        "p_value": _f(res["band_p_value"]),
        "band_level": _f(res.attrs.get("band_level")),
        "n_band": int(res.attrs.get("n_band", 0)),
        "n_points": int(res["n_points"]),
        **{
            k: _f(res[k])
            for k in (
                "ks_statistic",
                "ks_p_value",
                "cvm_statistic",
                "cvm_p_value",
                "pit_mean",
                "pit_mean_lower",
                "pit_mean_upper",
                "pit_var",
                "pit_var_lower",
                "pit_var_upper",
            )
        },
        "reliable": True,
        "reason": "",
        "gated": True,
    }
    if entry["p_value"] is None:
        entry["p_value"] = 1.0 if valid else 0.0
    entry["verdict"] = decide(not valid)
    return entry


def decide_family(entries: dict, alpha: float = ALPHA) -> dict:
    """Holm over the gated entries: a reliable entry "fails" only when its adjusted p-value is
    at most ``alpha``; each gated entry gains ``p_adjusted``. Returns ``entries``.

    Examples
    --------
    >>> e = {"a": {"p_value": 0.03, "reliable": True, "gated": True, "verdict": "fails"},
    ...      "b": {"p_value": 0.5, "reliable": True, "gated": True, "verdict": "OK"}}
    >>> decide_family(e)["a"]["verdict"], e["a"]["p_adjusted"]
    ('OK', 0.06)
    """
    keys = [
        k
        for k, e in entries.items()
        if e.get("gated") and e.get("verdict") != NOT_TESTED and e.get("p_value") is not None
    ]
    rejected, adjusted = holm([entries[k]["p_value"] for k in keys], alpha)
    for k, r, a in zip(keys, rejected, adjusted):
        e = entries[k]
        e["p_adjusted"] = float(a)
        e["family_size"] = len(keys)
        e["verdict"] = entry_word(e, r)
    return entries


def decide_targets_family(entries_of: dict, alpha: float = ALPHA) -> dict:
    """Holm over the gated entries of every target of a targets tree, one family: a report of
    t targets (and the pooled one) keeps its chance of a false "fails" at ``alpha``, not
    about ``t`` times it. Each gated entry gains ``p_adjusted``, ``family_size`` (the size of
    the whole family) and its word (:func:`entry_word`); the entries are changed in place.

    Parameters
    ----------
    entries_of : dict
        ``{target: {key: entry}}``, the undecided entries of each target's report (or gate).
    alpha : float, default 0.05
        Family-wise level.

    Returns
    -------
    dict
        ``alpha``, ``method``, ``size`` (the number of tests in the family) and ``tests``
        (``"<target>/<key>"`` of each, in order).

    Examples
    --------
    >>> e = {"a": {"average": {"p_value": 0.01, "reliable": True, "gated": True,
    ...                        "verdict": "fails"}},
    ...      "b": {"average": {"p_value": 0.04, "reliable": True, "gated": True,
    ...                        "verdict": "fails"},
    ...            "ENCE": {"p_value": None, "gated": False, "verdict": "OK"}}}
    >>> fam = decide_targets_family(e)
    >>> fam["size"], fam["tests"]
    (2, ['a/average', 'b/average'])
    >>> e["a"]["average"]["p_adjusted"], e["a"]["average"]["verdict"]
    (0.02, 'fails')
    >>> e["b"]["average"]["p_adjusted"], e["b"]["average"]["verdict"]
    (0.04, 'fails')
    """
    keys = [
        (t, k)
        for t, entries in entries_of.items()
        for k, e in entries.items()
        if e.get("gated") and e.get("verdict") != NOT_TESTED and e.get("p_value") is not None
    ]
    rejected, adjusted = holm([entries_of[t][k]["p_value"] for t, k in keys], alpha)
    for (t, k), r, a in zip(keys, rejected, adjusted):
        e = entries_of[t][k]
        e["p_adjusted"] = float(a)
        e["family_size"] = len(keys)
        e["verdict"] = entry_word(e, r)
    return {
        "alpha": alpha,
        "method": "Holm (1979)",
        "size": len(keys),
        "tests": [f"{t}/{k}" for t, k in keys],
    }


def entry_word(entry: dict, rejected) -> str:
    """The verdict word of an entry given whether its test rejects.

    An entry's ``reliable`` is False when a screen questions its plain test; when that screen
    is a failed tail screen (``heavy_tail`` True) the entry's ``p_value`` is the tail-allowing
    one, and the word is "fails" when it rejects, else "unreliable" (never "OK"); any other
    screen (no interval, an unstable bootstrap) makes it "unreliable" whatever ``rejected``.

    Examples
    --------
    >>> entry_word({"reliable": False, "heavy_tail": True}, True)
    'fails'
    >>> entry_word({"reliable": False, "heavy_tail": True}, False)
    'unreliable'
    >>> entry_word({"reliable": False}, True), entry_word({"reliable": True}, False)
    ('unreliable', 'OK')
    """
    heavy = bool(entry.get("heavy_tail", False))
    return decide(rejected, reliable=bool(entry.get("reliable", True)) or heavy, heavy_tail=heavy)


def is_question(key: str) -> bool:
    """Whether the entry ``key`` is a calibration question (``QUESTIONS``), whose word makes
    the headline, rather than a further diagnostic.

    Examples
    --------
    >>> [is_question(k) for k in ("average", "adaptivity:mass", "average:RCE", "pit", "ENCE",
    ...                           "coverage")]
    [True, True, True, True, False, False]
    """
    return str(key).split(":")[0] in QUESTIONS


def question_label(key: str) -> str:
    """The test of an entry in words.

    Examples
    --------
    >>> [question_label(k) for k in ("average", "average:RCE", "consistency", "adaptivity:x",
    ...                              "pit", "ENCE", "coverage")]  # doctest: +NORMALIZE_WHITESPACE
    ['average calibration', 'average calibration (RCE)', 'consistency', 'adaptivity in x',
     'PIT uniformity', 'ENCE', 'interval coverage']
    """
    head, _, rest = str(key).partition(":")
    if head == "average":
        return "average calibration" + (f" ({rest})" if rest else "")
    if head == "adaptivity":
        return f"adaptivity in {rest}"
    return {"pit": "PIT uniformity", "coverage": "interval coverage"}.get(head, str(key))


def _and(words) -> str:
    words = list(words)
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def headline(entries: dict, alpha: float = ALPHA) -> dict:
    """The headline of a report: the answer to the calibration questions.

    Its word is :func:`overall` of the words of the calibration questions (``is_question``:
    average calibration, consistency, adaptivity per feature, the PIT when present), with
    one addition: a further diagnostic in the Holm family (ENCE, ZMSE, CC, after
    :func:`decide_family`: ``family_size`` set) that "fails" makes the headline "fails". An
    "unreliable" further diagnostic never makes it "unreliable"; the interval coverage, outside
    the family, never enters it.

    Parameters
    ----------
    entries : dict
        ``{key: entry}`` of the report, after :func:`decide_family`.
    alpha : float, default 0.05
        The family's level (said in the sentence).

    Returns
    -------
    dict
        ``verdict``; ``tests`` (the questions), ``further_diagnostics`` (the other keys);
        ``fails``, ``unreliable``, ``not_tested`` (the questions so decided);
        ``diagnostics_failing`` (further diagnostics whose "fails" entered); ``sentence``.

    Examples
    --------
    >>> e = {"average": {"verdict": "OK"}, "consistency": {"verdict": "OK"},
    ...      "adaptivity:x": {"verdict": "OK"},
    ...      "ENCE": {"verdict": "unreliable", "p_adjusted": 0.4, "family_size": 4},
    ...      "coverage": {"verdict": "fails"}}
    >>> h = headline(e)
    >>> h["verdict"], h["tests"], h["further_diagnostics"]
    ('OK', ['average', 'consistency', 'adaptivity:x'], ['ENCE', 'coverage'])
    >>> e["CC"] = {"verdict": "fails", "p_adjusted": 0.01, "family_size": 5}
    >>> headline(e)["verdict"], headline(e)["diagnostics_failing"]
    ('fails', ['CC'])
    """
    tests = [k for k in entries if is_question(k)]
    further = [k for k in entries if not is_question(k)]
    word_of = {k: entries[k].get("verdict", NOT_TESTED) for k in entries}
    failing = [k for k in further if word_of[k] == FAILS and "family_size" in entries[k]]
    word = overall([word_of[k] for k in tests] + [FAILS] * len(failing))
    by = {w: [k for k in tests if word_of[k] == w] for w in (FAILS, UNRELIABLE, NOT_TESTED)}
    answers = "; ".join(f"{question_label(k)} {word_of[k]}" for k in tests) or "none tested"
    sentence = f"Headline: {word} (the calibration questions: {answers}"
    if failing:
        sentence += (
            f"; {_and(failing)} fail{'s' if len(failing) == 1 else ''} under every "
            "generative D, in the family"
        )
    # the family's size: its tests here, or more when they were decided in a larger family
    # (the family of the targets of a targets tree, decide_targets_family)
    sizes = [int(e["family_size"]) for e in entries.values() if "family_size" in e]
    n = max([len(sizes), *sizes]) if sizes else 0
    if n:
        sentence += f"; Holm over the {n} tests of the family at {alpha:g}"
    sentence += ")."
    if further:
        sentence += (
            f" Further diagnostics ({_and(question_label(k) for k in further)}) "
            'keep their own words below; their "unreliable" does not enter the '
            "headline."
        )
    return {
        "verdict": word,
        "tests": tests,
        "further_diagnostics": further,
        "fails": by[FAILS],
        "unreliable": by[UNRELIABLE],
        "not_tested": by[NOT_TESTED],
        "diagnostics_failing": failing,
        "sentence": sentence,
    }


#: the variables every verdict table has, in this order (then the numbers the entries quote)
TABLE_FIELDS = ("verdict", "p_value", "p_adjusted", "reliable", "reason")
#: boolean variables of a verdict table, with their value where an entry lacks them
_TABLE_FLAGS = {"reliable": True, "gated": False, "headline": False, "heavy_tail": False}
#: string variables of a verdict table ("" where an entry lacks them)
_TABLE_WORDS = (
    "verdict",
    "reason",
    "statistic",
    "conditioning",
    "forecast",
    "method",
    "generative",
)


def _scalar_number(v) -> bool:
    return v is None or (isinstance(v, numbers.Real) and not isinstance(v, (bool, np.bool_)))


def _number_column(name, values) -> bool:
    """Whether a key of the entries is a number column of the table: ``p_value`` and
    ``p_adjusted`` always, any other key when its values are numbers, None, lists or dicts
    and one at least is a number."""
    if name in ("p_value", "p_adjusted"):
        return True
    kinds = [_scalar_number(v) or isinstance(v, (list, tuple, dict)) for v in values]
    return all(kinds) and any(_scalar_number(v) and v is not None for v in values)


def verdict_table(entries: dict) -> xr.Dataset:
    """The entries of a report or a gate as a Dataset with one row per test (dim ``test``).

    Parameters
    ----------
    entries : dict
        Test key (``"average"``, ``"average:ZMS"``, ``"consistency"``, ``"adaptivity:<f>"``,
        ``"pit"``, ``"ENCE"``, ...) -> entry (a dict with ``verdict`` and the numbers it
        rests on).

    Returns
    -------
    xarray.Dataset
        Coordinate ``test`` (the keys, in order); ``verdict`` and ``reason`` (str),
        ``p_value``, ``p_adjusted`` (float, NaN where a test has none), ``reliable`` (bool),
        ``gated``, ``headline`` and ``heavy_tail`` (bool, False where absent), the words
        ``statistic``, ``conditioning``, ``forecast``, ``method``, ``generative`` where an
        entry has them ("" elsewhere), and every other number an entry quotes (``estimate``,
        ``ci_lower``, ``ci_upper``, ``reference``, ``n_bins``, ``family_size``...: float,
        NaN where a test has none). Lists and dicts (the coverage's levels, ENCE's references
        per D) stay in the JSON.

    Examples
    --------
    >>> t = verdict_table({"a": {"verdict": "OK", "p_value": 0.5, "estimate": 1.02},
    ...                    "b": not_tested("uE is constant")})
    >>> t["verdict"].sel(test="b").item(), t["reason"].sel(test="b").item()
    ('not tested', 'uE is constant')
    >>> float(t["estimate"].sel(test="a")), bool(np.isnan(t["estimate"].sel(test="b")))
    (1.02, True)
    >>> list(t.data_vars)[:5]
    ['verdict', 'p_value', 'p_adjusted', 'reliable', 'reason']
    """
    tests = [str(k) for k in entries]
    rows = list(entries.values())
    keys = list(dict.fromkeys(k for e in rows for k in e))
    out = {}
    for name in (*TABLE_FIELDS, *[k for k in keys if k not in TABLE_FIELDS]):
        values = [e.get(name) for e in rows]
        if name in _TABLE_FLAGS:
            out[name] = (
                "test",
                np.array(
                    [_TABLE_FLAGS[name] if v is None else bool(v) for v in values], dtype=bool
                ),
            )
        elif name in _TABLE_WORDS:
            out[name] = (
                "test",
                np.array(["" if v is None else str(v) for v in values], dtype=object),
            )
        elif _number_column(name, values):  # a list or a dict (the coverage's levels) stays
            out[name] = (
                "test",
                np.array(
                    [float(v) if _scalar_number(v) and v is not None else np.nan for v in values],
                    dtype=float,
                ),
            )
    table = xr.Dataset(out, coords={"test": np.array(tests, dtype=object)})
    table.attrs = {"alpha": ALPHA, "method": "Holm (1979)"}
    return table


def decide_tests(table: xr.Dataset, tests=None, alpha: float = ALPHA) -> xr.Dataset:
    """:func:`decide_family` on the rows ``tests`` of a verdict table: a new table of them
    with ``verdict``, ``p_adjusted`` and ``family_size`` decided among themselves.

    Parameters
    ----------
    table : xarray.Dataset
        A :func:`verdict_table`.
    tests : sequence of str, optional
        The rows (default: every row).
    alpha : float, default 0.05
        Family-wise level.

    Returns
    -------
    xarray.Dataset
        The rows ``tests``; a gated row with a p-value and a verdict other than "not tested"
        gets its Holm-adjusted p-value and its word (:func:`entry_word`).

    Examples
    --------
    >>> t = verdict_table({"a": {"p_value": 0.03, "reliable": True, "gated": True,
    ...                          "verdict": "fails"},
    ...                    "b": {"p_value": 0.5, "reliable": True, "gated": True,
    ...                          "verdict": "OK"}})
    >>> d = decide_tests(t)
    >>> d["verdict"].values.tolist(), float(d["p_adjusted"].sel(test="a"))
    (['OK', 'OK'], 0.06)
    >>> decide_tests(t, ["a"])["verdict"].values.tolist()
    ['fails']
    """
    sub = table if tests is None else table.sel(test=list(tests))
    sub = sub.copy(deep=True)
    n = sub.sizes["test"]
    if "gated" not in sub:
        sub["gated"] = ("test", np.zeros(n, dtype=bool))
    if "family_size" not in sub:
        sub["family_size"] = ("test", np.full(n, np.nan))
    verdict = sub["verdict"].values.astype(object)
    p = sub["p_value"].values
    pick = [
        i
        for i in range(n)
        if bool(sub["gated"].values[i]) and verdict[i] != NOT_TESTED and np.isfinite(p[i])
    ]
    rejected, adjusted = holm([float(p[i]) for i in pick], alpha)
    heavy = sub["heavy_tail"].values if "heavy_tail" in sub else np.zeros(n, dtype=bool)
    for i, r, a in zip(pick, rejected, adjusted):
        sub["p_adjusted"].values[i] = float(a)
        sub["family_size"].values[i] = len(pick)
        verdict[i] = entry_word(
            {"reliable": bool(sub["reliable"].values[i]), "heavy_tail": bool(heavy[i])}, r
        )
    sub["verdict"] = ("test", verdict)
    return sub
