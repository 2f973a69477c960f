"""Plain-language sentences of the report: numbers, failing regions, verdicts.

Functions here only word results computed elsewhere; they never compute a statistic.
"""

from __future__ import annotations

import numpy as np

from uqviz.average.validation import TAILEDNESS_SCREENS

__all__ = [
    "fmt",
    "NA_NOTE",
    "entry_of",
    "INTEGER_FIELDS",
    "conclusion_lines",
    "failing_regions",
    "describe_failures",
    "average_line",
    "local_line",
    "reference_line",
    "binning_note",
    "HEAVY_FOR_ZMS",
    "property_name",
    "remedy_sentence",
    "coverage_line",
    "curve_line",
    "pit_line",
    "distribution_sentence",
    "STD_PIT_NOTE",
    "pair_line",
    "comparison_line",
    "resampling_line",
    "family_sentence",
]

#: the tailedness-screen variables whose failure makes the ZMS unreliable: Z^2 (Pernot
#: (2024b), section V.C: E^2 and Z^2 question RCE and ZMS "respectively"; uE^2 questions RCE)
HEAVY_FOR_ZMS = TAILEDNESS_SCREENS["ZMS"]
_LABEL = {"uE2": "uE^2", "E2": "E^2", "Z2": "Z^2"}

#: what "n/a" means wherever the report prints it
NA_NOTE = (
    "n/a: the value could not be computed. For an interval limit, the bootstrap "
    "distribution is degenerate (e.g. all replicates equal) or n_boot is too small for "
    "the BCa limit at this level; increase n_boot. Such an interval gives no verdict."
)


#: the numbers of a verdict table that count (stored as float, NaN where a test has none):
#: :func:`entry_of` gives them back as int, as the sentences print them
INTEGER_FIELDS = ("n_bins", "n_valid", "n_unreliable", "family_size", "n_band", "n_points")


def entry_of(table, test: str, details=None) -> dict:
    """One row of a verdict table as the dict the sentences and the HTML read.

    The row's variables come first: a number that is NaN (the test has none) is left out, so
    that ``entry.get(name)`` is None; the counts of ``INTEGER_FIELDS`` are ints; the words are
    str and the flags bool. The details the table cannot hold (lists, dicts and the booleans
    other than its flags: the coverage's ``levels``, ``picp`` and ``rejected_levels``, the
    references per D of ENCE, ZMSE and CC, ``valid``, ``adjusted``, ``causes``) are taken from
    ``details``, the test's entry of ``Report.numbers["verdicts"]``, for the names the table
    lacks only: a variable of the table always wins.

    Parameters
    ----------
    table : xarray.Dataset
        A verdict table (:func:`uqviz.reporting.verdicts.verdict_table`, dim ``test``).
    test : str
        The row (``"average"``, ``"consistency"``, ``"adaptivity:<feature>"``...).
    details : dict, optional
        The test's entry in the JSON (``Report.numbers["verdicts"][test]``).

    Returns
    -------
    dict

    Examples
    --------
    >>> from uqviz.reporting.verdicts import verdict_table
    >>> t = verdict_table({"consistency": {"verdict": "OK", "p_value": 0.3, "n_bins": 20,
    ...                                    "valid": True},
    ...                    "ENCE": {"verdict": "OK", "estimate": 0.05}})
    >>> e = entry_of(t, "consistency", {"valid": True, "n_bins": 99})
    >>> e["n_bins"], e["valid"], "estimate" in e
    (20, True, False)
    """
    row = table.sel(test=test)
    out = {}
    for name, var in row.data_vars.items():
        v = var.values.item() if hasattr(var.values, "item") else var.values
        if var.dtype == bool:
            out[name] = bool(v)
        elif var.dtype == object or var.dtype.kind in "US":
            out[name] = str(v)
        else:
            v = float(v)
            if not np.isfinite(v):
                continue
            out[name] = int(v) if name in INTEGER_FIELDS and v.is_integer() else v
    for name, v in (details or {}).items():
        if name not in table.data_vars:
            out[name] = v
    return out


def fmt(x, spec: str = ".4g") -> str:
    """A number for the reader; NaN, inf and missing values (JSON null) read ``"n/a"``.

    Examples
    --------
    >>> fmt(0.0081481234), fmt(float("nan")), fmt(None)
    ('0.008148', 'n/a', 'n/a')
    """
    if x is None or isinstance(x, (bool, np.bool_)):
        return "n/a" if x is None else str(bool(x))
    try:
        x = float(x)
    except (TypeError, ValueError):
        return str(x)
    return format(x, spec) if np.isfinite(x) else "n/a"


def _pair(lo: float, hi: float) -> tuple[str, str]:
    """``lo`` and ``hi`` with enough digits (4 to 12) to tell them apart (4 when equal)."""
    if lo == hi:
        return (format(lo, ".4g"),) * 2
    for digits in range(4, 13):
        a, b = format(lo, f".{digits}g"), format(hi, f".{digits}g")
        if a != b:
            return a, b
    return a, b


def _runs(valid: np.ndarray, sign: np.ndarray) -> list[tuple[int, int]]:
    """Runs ``(start, stop)`` of invalid bins of one direction; a single valid bin between
    two invalid bins of the same direction is bridged (a 95 % interval misses 1 bin in 20
    by chance)."""
    s = np.where(valid, 0, sign)
    bridged = s.copy()
    for i in range(1, s.size - 1):
        if s[i] == 0 and s[i - 1] != 0 and s[i - 1] == s[i + 1]:
            bridged[i] = s[i - 1]
    runs, start = [], None
    for i in range(bridged.size + 1):
        cur = bridged[i] if i < bridged.size else 0
        if start is not None and (cur == 0 or cur != bridged[start]):
            runs.append((start, i))
            start = None
        if start is None and cur != 0:
            start = i
    return runs


def failing_regions(local_result, name: str) -> list[dict]:
    """Every region of invalid bins of a local analysis, in the order of the variable.

    A region is a run of invalid bins whose statistic lies on the same side of the
    reference; its direction says whether uncertainties are over- or underestimated
    there (for LZM: the sign of the bias). A region of tied values (one value of the
    conditioning variable) reads ``"uE = 0.008148"``.

    Returns
    -------
    list of dict
        ``text`` (the region in words), ``lower``, ``upper``, ``direction``,
        ``n_invalid``, ``n_bins``, ``where``, ``n_points`` (None without ``count``).
        Runs at the same tied value are merged into one region.

    Examples
    --------
    >>> import xarray as xr
    >>> res = xr.Dataset({"valid": ("bin", [False, True, True, False]),
    ...                   "estimate": ("bin", [0.5, 1.0, 1.0, 1.6]), "reference": 1.0},
    ...                  coords={"bin_lower": ("bin", [0.0, 1, 2, 3]),
    ...                          "bin_upper": ("bin", [1.0, 2, 3, 4])})
    >>> [r["text"] for r in failing_regions(res, "x")]  # doctest: +NORMALIZE_WHITESPACE
    ['x < 1 (1 bin invalid there; uncertainties overestimated)',
     'x > 3 (1 bin invalid there; uncertainties underestimated)']
    """
    valid = np.asarray(local_result["valid"].values, dtype=bool)
    est = np.asarray(local_result["estimate"].values, dtype=float)
    ref = float(local_result["reference"])
    sign = np.sign(np.nan_to_num(est - ref))
    sign[(~valid) & (sign == 0)] = 1  # an invalid bin exactly at the reference (NaN interval)
    lower = np.asarray(local_result["bin_lower"].values, dtype=float)
    upper = np.asarray(local_result["bin_upper"].values, dtype=float)
    is_zm = local_result.attrs.get("statistic") == "ZM"
    counts = (
        np.asarray(local_result["count"].values, dtype=float)
        if "count" in local_result.coords
        else None
    )
    n = valid.size
    out = []
    for a, b in _runs(valid, sign):
        lo, hi = float(lower[a]), float(upper[b - 1])
        lo_s, hi_s = _pair(lo, hi)
        if lo == hi:
            where = f"{name} = {lo_s}"
        elif a == 0 and b == n:
            where = f"the whole range of {name}"
        elif a == 0:
            where = f"{name} < {hi_s}"
        elif b == n:
            where = f"{name} > {lo_s}"
        else:
            where = f"{lo_s} < {name} < {hi_s}"
        low = sign[a] < 0
        if is_zm:
            sense = "errors biased " + ("negative" if low else "positive")
        else:
            sense = "uncertainties " + ("overestimated" if low else "underestimated")
        n_bad = int((~valid[a:b]).sum())
        count = "1 bin" if b - a == 1 else f"{n_bad} of {b - a} bins"
        out.append(
            {
                "text": f"{where} ({count} invalid there; {sense})",
                "lower": lo,
                "upper": hi,
                "direction": sense,
                "n_invalid": n_bad,
                "n_bins": b - a,
                "where": where,
                "n_points": int(np.nansum(counts[a:b])) if counts is not None else None,
            }
        )
    return _merge_same_place(out)


def _merge_same_place(regions):
    """One region per place: runs at the same tied value (split by a direction change) merged."""
    out = []
    for r in regions:
        same = next((o for o in out if o["where"] == r["where"]), None)
        if same is None:
            out.append(dict(r))
            continue
        same["n_invalid"] += r["n_invalid"]
        same["n_bins"] += r["n_bins"]
        if same["n_points"] is not None and r["n_points"] is not None:
            same["n_points"] += r["n_points"]
        if r["direction"] != same["direction"]:
            same["direction"] = "mixed directions"
        same["text"] = (
            f"{same['where']} ({same['n_invalid']} of {same['n_bins']} bins invalid "
            f"there; {same['direction']})"
        )
    return out


def describe_failures(local_result, name: str, top: int | None = None) -> str | None:
    """The failing regions of a local analysis in words, or None when every bin is valid.

    With ``top``, only the ``top`` largest regions (most invalid bins, then most points) are
    named, in the order of the variable, and the others are summed up: how many regions,
    bins and points, in which direction.

    Examples
    --------
    >>> import xarray as xr
    >>> res = xr.Dataset({"valid": ("bin", [False, False, True, True]),
    ...                   "estimate": ("bin", [0.5, 0.6, 1.0, 1.1]), "reference": 1.0},
    ...                  coords={"bin_lower": ("bin", [100, 110, 120, 130]),
    ...                          "bin_upper": ("bin", [110, 120, 130, 140])})
    >>> describe_failures(res, "mass")
    'mass < 120 (2 of 2 bins invalid there; uncertainties overestimated)'
    """
    regions = failing_regions(local_result, name)
    if not regions:
        return None
    if top is not None and len(regions) > top:
        rank = sorted(
            range(len(regions)),
            key=lambda i: (-regions[i]["n_invalid"], -(regions[i]["n_points"] or 0), i),
        )
        keep = sorted(rank[:top])
        rest = [regions[i] for i in rank[top:]]
        texts = [regions[i]["text"] for i in keep]
        bins = sum(r["n_invalid"] for r in rest)
        pts = [r["n_points"] for r in rest]
        dirs = {}
        for r in rest:
            dirs[r["direction"]] = dirs.get(r["direction"], 0) + 1
        how = ", ".join(f"{n} with {d}" for d, n in sorted(dirs.items(), key=lambda x: -x[1]))
        where = f"{len(rest)} more region{'s' if len(rest) > 1 else ''}"
        size = f"{bins} invalid bin{'s' if bins > 1 else ''}"
        if all(p is not None for p in pts):
            size += f", {sum(pts)} points"
        return ", ".join(texts) + f" and {where} ({size}: {how})"
    texts = [r["text"] for r in regions]
    return texts[0] if len(texts) == 1 else ", ".join(texts[:-1]) + " and " + texts[-1]


def _p(x) -> str:
    """``"= 0.03"`` or ``"< 1e-4"``."""
    return "= n/a" if x is None else (f"= {x:.2g}" if x >= 1e-4 else "< 1e-4")


def _family(entry) -> str:
    """``"; p = 0.01, Holm-adjusted over 4 tests p = 0.04"`` (the family's adjustment)."""
    if entry.get("p_value") is None:
        return ""
    if entry.get("p_adjusted") is None or entry.get("family_size", 1) < 2:
        return f"; p {_p(entry['p_value'])}"
    return (
        f"; p {_p(entry['p_value'])}, adjusted over the {entry['family_size']} tests of "
        f"the report p {_p(entry['p_adjusted'])}"
    )


def average_line(entry) -> str:
    """The average-calibration verdict in words, from its entry
    (:func:`uqviz.reporting.verdicts.average_entry`).

    Examples
    --------
    >>> import uqviz
    >>> from uqviz.reporting.verdicts import average_entry
    >>> ds = uqviz.synthetic.nig(2000, nu=20, rng=0)
    >>> avg = uqviz.validate_average(ds, statistics=("ZMS",), n_boot=500, rng=0)
    >>> average_line(average_entry(avg))  # doctest: +ELLIPSIS
    'Average calibration: OK (ZMS = 0.9..., 95 % CI [0.9..., 1.0...] holds 1; p = ...).'
    """
    s = entry.get("statistic", "ZMS")
    if entry["verdict"] == "not tested":
        return f"Average calibration: not tested ({entry['reason']})."
    lo, hi = entry.get("ci_lower"), entry.get("ci_upper")
    ivl = f"95 % CI [{fmt(lo)}, {fmt(hi)}]"
    holds = "holds" if entry["valid"] else "excludes"
    ref = fmt(entry.get("reference"), "g")
    what = f"{s} = {fmt(entry.get('estimate'))}, {ivl} {holds} {ref}"
    if entry["verdict"] == "unreliable":
        return f"Average calibration: unreliable ({what}, but {entry['reason']})."
    if entry.get("heavy_tail") and entry["verdict"] == "fails":
        # the Student-t null decided: its reason quotes its p-value
        adj = ""
        if entry.get("p_adjusted") is not None and entry.get("family_size", 1) >= 2:
            adj = (
                f"; adjusted over the {entry['family_size']} tests of the report p "
                f"{_p(entry['p_adjusted'])}"
            )
        return f"Average calibration: fails ({what}; {entry['reason']}{adj})."
    tail = _family(entry)
    if entry["verdict"] == "OK" and not entry["valid"]:
        tail += ": not significant once the family of tests is accounted for"
    return f"Average calibration: {entry['verdict']} ({what}{tail})."


def local_line(entry, local_result, name: str) -> str:
    """The consistency or adaptivity verdict in words, from its entry
    (:func:`uqviz.reporting.verdicts.local_entry`) and the local analysis it tested; at most
    the three largest failing regions are named (the rest summed up).
    """
    head = "Consistency" if name == "uE" else f"Adaptivity in {name}"
    if entry.get("adjusted"):
        head += " (beyond the uE effect)"
    if entry["verdict"] == "not tested":
        return f"{head}: not tested ({entry['reason']})."
    n = entry["n_bins"]
    what = f"f_v = {fmt(entry.get('estimate'), '.2f')} in {n} bin{'s' if n > 1 else ''}"
    if entry.get("reference") is not None:
        what += (
            f"; calibrated data give {fmt(entry['reference'], '.2f')}, at least "
            f"{fmt(entry.get('reference_lower'), '.2f')} accepted"
        )
    if entry.get("n_unreliable"):
        k = entry["n_unreliable"]
        what += f"; {k} bin{'s' if k > 1 else ''} unreliable (heavy tails or no interval)"
    if entry["verdict"] == "unreliable":
        return f"{head}: unreliable ({what}; {entry['reason']})."
    what += _family(entry)
    where = describe_failures(local_result, name, top=3)
    if entry["verdict"] == "fails" and where:
        return f"{head}: fails ({what}) for {where}."
    if entry["verdict"] == "OK" and where and n < 10:
        return f"{head}: OK ({what}; from {n} bins only: weak evidence, and {where})."
    return f"{head}: {entry['verdict']} ({what})."


def binning_note(variable: str, n_distinct: int, binning: str, n_bins: int, n_points: int) -> str:
    """How the bins on one conditioning variable were chosen, in words.

    Examples
    --------
    >>> binning_note("charge", 3, "stratified", 3, 900)  # doctest: +NORMALIZE_WHITESPACE
    'charge has 3 distinct values: binned by value (binning="stratified"; values with fewer
    than 100 points merged with a neighbour), 3 bins.'
    """
    if binning == "stratified":
        return (
            f"{variable} has {n_distinct} distinct values: binned by value "
            f'(binning="stratified"; values with fewer than 100 points merged with a '
            f"neighbour), {n_bins} bin{'' if n_bins == 1 else 's'}."
        )
    return (
        f"{variable}: {n_distinct} distinct values, {n_bins} equal-count bins of about "
        f'{n_points // n_bins} points (binning="equal_count").'
    )


def constant_note(cond: str) -> str:
    """Why a constant conditioning variable is not binned."""
    return f"{cond} is constant: one value, nothing to condition on"


def property_name(cond: str) -> str:
    """The property a local analysis on ``cond`` tests: consistency (uE) or adaptivity.

    Examples
    --------
    >>> property_name("uE"), property_name("mass")
    ('consistency', 'adaptivity in mass')
    """
    return "consistency" if cond == "uE" else f"adaptivity in {cond}"


def _join(words) -> str:
    words = list(words)
    if len(words) <= 1:
        return "".join(words)
    return ", ".join(words[:-1]) + " and " + words[-1]


def _or(words) -> str:
    words = list(words)
    return ", ".join(words[:-1]) + " or " + words[-1] if len(words) > 1 else "".join(words)


def _state(status: str) -> str:
    return {
        "fails": "still fails",
        "unreliable": "is unreliable (heavy tails)",
        "not tested": "could not be re-validated",
    }.get(status, "is OK")


def remedy_sentence(before: dict, methods: list) -> str:
    """Which recalibration repairs what, in words, decided by the re-validation's statuses.

    A property (``"average calibration"``, ``"consistency"``, ``"adaptivity in <x>"``) is
    repaired by a method when it was not OK before and is ``"OK"`` after: validated (the
    reference inside the interval) and, for the ZMS, not questioned by the tailedness
    screen ("unreliable" is never "OK"). The first method (the simplest, scaling) is said
    first; each property it leaves failing is followed by the methods that repair it; a
    second sentence names the validated remedy: the first method after which every test
    passes.

    Parameters
    ----------
    before : dict
        Property -> status before recalibration: ``"OK"``, ``"fails"``, ``"unreliable"``.
    methods : list of dict
        One per method, simplest first: ``description`` (words, e.g. ``"scaling by 5.05"``),
        ``status`` (property -> ``"OK"``, ``"fails"``, ``"unreliable"`` or ``"not tested"``) and
        optionally ``error`` (the method could not be computed) and ``zms`` (with ``valid``).

    Returns
    -------
    str

    Examples
    --------
    >>> before = {"average calibration": "fails", "consistency": "OK",
    ...           "adaptivity in mass": "fails"}
    >>> scaling = {"description": "scaling by 5.05", "status": {
    ...     "average calibration": "OK", "consistency": "OK", "adaptivity in mass": "fails"}}
    >>> bvs = {"description": "BVS on mass", "status": dict.fromkeys(before, "OK")}
    >>> remedy_sentence(before, [scaling, bvs])  # doctest: +NORMALIZE_WHITESPACE
    'Scaling by 5.05 restores average calibration; adaptivity in mass still fails; BVS on
    mass repairs it. Validated remedy: BVS on mass (every test passes after it).'
    """
    failing = [p for p, s in before.items() if s != "OK"]
    ok = [m for m in methods if not m.get("error")]
    if not ok:
        return "No recalibration could be computed (see the table)."

    def repairs(m):
        return [p for p in failing if m["status"].get(p) == "OK"]

    def restore(props):
        verbs = [("restores " if p == "average calibration" else "repairs ") + p for p in props]
        return _join(verbs)

    first, rest = ok[0], ok[1:]
    fixed = repairs(first)
    clauses = [
        f"{first['description']} {restore(fixed)}"
        if fixed
        else f"{first['description']} repairs none of the failures"
    ]
    avg = first["status"].get("average calibration")
    if avg == "unreliable" and first.get("zms", {}).get("valid"):
        clauses[0] += (
            " (its ZMS interval holds 1, but with heavy tails no conclusion: "
            "the Student-t null neither rejects nor confirms)"
        )
    for p in failing:
        if p in fixed:
            continue
        fixers = []
        for m in rest:
            if p in repairs(m):
                left = [q for q, s in m["status"].items() if s != "OK" and q != p]
                fixers.append(m["description"] + (f" (but not {_or(left)})" if left else ""))
        state = first["status"].get(p, "n/a")
        clause = f"{p} {_state(state)}"
        if fixers:
            clause += f"; {_join(fixers)} repair{'s' if len(fixers) == 1 else ''} it"
        elif state == "unreliable" and all(m["status"].get(p) == "unreliable" for m in ok):
            clause = f"{p} stays unreliable after every method (heavy tails)"
        else:
            clause += "; no method repairs it"
        clauses.append(clause)
    text = "; ".join(clauses)
    text = text[0].upper() + text[1:] + "."
    validated = [m for m in ok if m["status"] and all(s == "OK" for s in m["status"].values())]
    if validated:
        text += f" Validated remedy: {validated[0]['description']} (every test passes after it)."
    else:
        almost = [
            m
            for m in ok
            if m["status"] and all(s in ("OK", "unreliable") for s in m["status"].values())
        ]
        text += " No method passes every test"
        if almost:
            text += (
                f"; after {_join(m['description'] for m in almost)} every test passes but "
                "the ZMS verdict is unreliable (heavy tails)"
            )
        text += "."
    return text


#: why a forecast given as a standard uncertainty has no PIT section in the report
STD_PIT_NOTE = (
    "The forecast is a standard uncertainty (uE * D): its PIT is Phi(E/uE), whose "
    "uniformity the calibration curve already shows; the PIT section is for "
    "forecasts given as an interval, quantiles or samples."
)


def pit_line(entry) -> str:
    """The PIT uniformity verdict in words, from its entry
    (:func:`uqviz.reporting.verdicts.pit_entry`).

    Examples
    --------
    >>> e = {"verdict": "fails", "forecast": "quantiles", "valid": False, "p_value": 0.0003,
    ...      "ks_p_value": 0.001, "cvm_p_value": 0.002, "pit_mean": 0.5,
    ...      "pit_mean_lower": 0.49, "pit_mean_upper": 0.51, "pit_var": 0.1,
    ...      "pit_var_lower": 0.095, "pit_var_upper": 0.105}
    >>> pit_line(e)  # doctest: +NORMALIZE_WHITESPACE
    'PIT of the forecast as given (quantiles): fails (ECDF outside its simultaneous 95 % band;
    p = 0.0003; KS p = 0.001, CvM p = 0.002; mean 0.500 (1/2), variance 0.1000 (1/12 =
    0.0833): too many PIT values near 0 and 1, the forecast is too narrow).'
    """
    if entry["verdict"] == "not tested":
        return f"PIT of the forecast as given: not tested ({entry['reason']})."
    where = "inside" if entry["valid"] else "outside"
    what = (
        f"ECDF {where} its simultaneous 95 % band{_family(entry)}; KS p "
        f"{_p(entry.get('ks_p_value'))}, CvM p {_p(entry.get('cvm_p_value'))}; "
        f"mean {fmt(entry.get('pit_mean'), '.3f')} (1/2), variance "
        f"{fmt(entry.get('pit_var'), '.4f')} (1/12 = 0.0833)"
    )
    if entry["verdict"] == "fails":
        v_lo, v_hi = entry.get("pit_var_lower"), entry.get("pit_var_upper")
        m_lo, m_hi = entry.get("pit_mean_lower"), entry.get("pit_mean_upper")
        if v_lo is not None and v_lo > 1 / 12:
            what += ": too many PIT values near 0 and 1, the forecast is too narrow"
        elif v_hi is not None and v_hi < 1 / 12:
            what += ": too few PIT values near 0 and 1, the forecast is too wide"
        elif m_lo is not None and m_hi is not None and not m_lo <= 0.5 <= m_hi:
            what += (
                ": the observed values lie too often "
                + ("above" if m_lo > 0.5 else "below")
                + " the forecast's median"
            )
    tail = ""
    if entry["verdict"] == "OK" and not entry["valid"]:
        tail = ": not significant once the family of tests is accounted for"
    return (
        f"PIT of the forecast as given ({entry.get('forecast', 'std')}): "
        f"{entry['verdict']} ({what}{tail})."
    )


def distribution_sentence(block) -> str:
    """The distribution remedy in words: conformal coverage, marginal and local, and the PIT
    after quantile recalibration (:func:`uqviz.reporting.remedy.run_distribution_remedy`).

    Examples
    --------
    >>> block = {"level": 0.9, "conformal": {"marginal": {"picp": 0.903, "picp_lower": 0.89,
    ...          "picp_upper": 0.915, "valid": True}, "n_calibration": 800, "local": {
    ...          "uE": {"n_excluding": 3, "n_bins": 10, "under": 2, "over": 1}}}}
    >>> distribution_sentence(block)  # doctest: +NORMALIZE_WHITESPACE
    'Conformal intervals at 90 %: marginal coverage 0.903 [0.890, 0.915] (guaranteed at least
    90 % on average under exchangeability); locally, 3 of 10 bins of uE exclude 90 % (2 under-,
    1 over-covered), which the guarantee does not cover.'
    >>> block["conformal"]["local"]["uE"]["n_excluding"] = 0
    >>> distribution_sentence(block).split("; ")[1]
    'locally, all 10 bins of uE hold 90 %.'
    """
    lv = f"{100 * block['level']:g} %"
    parts = []
    conf = block.get("conformal", {})
    if "error" in conf:
        parts.append(f"Conformal intervals could not be computed ({conf['error']})")
    elif conf:
        mg = conf["marginal"]
        text = (
            f"Conformal intervals at {lv}: marginal coverage {fmt(mg['picp'], '.3f')} "
            f"[{fmt(mg['picp_lower'], '.3f')}, {fmt(mg['picp_upper'], '.3f')}] "
            f"(guaranteed at least {lv} on average under exchangeability)"
        )
        local = []
        for c, loc in conf["local"].items():
            k, n = loc["n_excluding"], loc["n_bins"]
            if k:
                word = (
                    f"{k} of {n} bins of {c} exclude {lv} ({loc['under']} under-, "
                    f"{loc['over']} over-covered)"
                )
            else:
                word = f"the bin of {c} holds {lv}" if n == 1 else f"all {n} bins of {c} hold {lv}"
            local.append(word)
        if local:
            text += f"; locally, {_join(local)}"
            if any(loc["n_excluding"] for loc in conf["local"].values()):
                text += ", which the guarantee does not cover"
        parts.append(text)
    q = block.get("quantile")
    if q is not None:
        if "error" in q:
            parts.append(f"quantile recalibration could not be computed ({q['error']})")
        else:
            before = f" (before: {q['before']})" if q.get("before") else ""
            parts.append(
                f"quantile recalibration (isotonic, Kuleshov et al. (2018)): PIT "
                f"{q['status']} after{before}"
            )
    if not parts:
        return "No distribution recalibration was computed."
    text = "; ".join(parts)
    return text[0].upper() + text[1:] + "."


def coverage_line(entry) -> str:
    """The interval coverage in words, from its entry
    (:func:`uqviz.reporting.verdicts.coverage_entry`): its word and the reason of a miss, which
    names a failing consistency or adaptivity test as the likely cause (a conditional
    miscalibration of uE), and otherwise points at the shape of the errors.

    Examples
    --------
    >>> import uqviz
    >>> from uqviz.reporting.verdicts import coverage_entry
    >>> cov = uqviz.interval_coverage(uqviz.synthetic.nig(5000, nu=20, rng=0))
    >>> coverage_line(coverage_entry(cov, "OK"))
    'Interval coverage (normal D): OK, PICP consistent with every level (50, 68, 90, 95, 99 %).'
    """
    gen = entry["generative"]
    pct = [f"{100 * lv:g}" for lv in entry["levels"]]
    if entry["verdict"] == "OK":
        return (
            f"Interval coverage ({gen} D): OK, PICP consistent with every level "
            f"({', '.join(pct)} %)."
        )
    bad = [
        f"{p} % (PICP = {fmt(v, '.3f')})"
        for p, v, lv in zip(pct, entry["picp"], entry["levels"])
        if lv in entry["rejected_levels"]
    ]
    return f"Interval coverage ({gen} D): {entry['verdict']} at {_join(bad)}: {entry['reason']}."


def reference_line(entry) -> str:
    """A binned statistic's (ENCE, ZMSE) or CC's verdict against its simulated references.

    Examples
    --------
    >>> reference_line({"statistic": "ENCE", "verdict": "OK", "reason": "", "p_value": 0.4,
    ...                 "estimate": 0.05})
    'ENCE: OK (0.05; p = 0.4).'
    """
    if entry["verdict"] == "not tested":
        return f"{entry['statistic']}: not tested ({entry['reason']})."
    what = fmt(entry.get("estimate"), ".3g")
    if entry.get("reason"):
        what += f"; {entry['reason']}"
    what += _family(entry)
    return f"{entry['statistic']}: {entry['verdict']} ({what})."


def curve_line(curve) -> str:
    """The calibration curve's scalars in one line.

    Examples
    --------
    >>> import xarray as xr
    >>> curve_line(xr.Dataset({"miscalibration_area": 0.0123, "mace": 0.0121, "rmsce": 0.0142}))
    'Calibration curve: miscalibration area 0.0123, MACE 0.0121, RMSCE 0.0142.'
    """
    return (
        f"Calibration curve: miscalibration area {fmt(curve['miscalibration_area'], '.3g')}, "
        f"MACE {fmt(curve['mace'], '.3g')}, RMSCE {fmt(curve['rmsce'], '.3g')}."
    )


def _what(measure, reference) -> str:
    """``"|ZMS - 1|"`` (``"|RCE|"``, ``"|NLL - NLL_ref|"``) for a statistic with a reference
    (``"data"``: computed from the data), else the measure."""
    if reference is None:
        return measure
    if reference == "data":
        return f"|{measure} - {measure}_ref|"
    return f"|{measure}|" if reference == 0 else f"|{measure} - {fmt(reference, 'g')}|"


def pair_line(pair) -> str:
    """The verdict of one pair of models on one measure, in words (a comparison of models).

    ``pair`` holds ``measure`` (its name for a reader), ``model``, ``versus``, ``comparison``
    (the word of :func:`uqviz.compare_models`), ``difference``, ``lower``, ``upper`` (of the
    distances, ``model - versus``) and ``reference`` (a number, ``"data"`` for a reference
    computed from the data, None for a score or a statistic without one). "Better" only when
    the whole interval of the difference lies below 0; a pair whose interval holds 0 reads "no
    difference detected".

    Examples
    --------
    >>> pair_line({"measure": "NLL", "model": "A", "versus": "B", "comparison": "better",
    ...            "difference": -0.1234, "lower": -0.181, "upper": -0.0523, "reference": None})
    'model A has a better NLL than model B: difference -0.123 [-0.181, -0.0523]'
    >>> pair_line({"measure": "ZMS", "model": "A", "versus": "B",  # doctest: +NORMALIZE_WHITESPACE
    ...            "comparison": "no difference", "difference": 0.01, "lower": -0.03,
    ...            "upper": 0.05, "reference": 1.0})
    'models A and B: no difference detected in ZMS (difference of |ZMS - 1| 0.01 [-0.03, 0.05]
    holds 0)'
    """
    m, a, b = pair["measure"], pair["model"], pair["versus"]
    ref = pair.get("reference")
    ivl = (
        f"{fmt(pair['difference'], '.3g')} [{fmt(pair['lower'], '.3g')}, "
        f"{fmt(pair['upper'], '.3g')}]"
    )
    if pair["comparison"] == "better":
        closer = (
            ""
            if ref is None
            else " (closer to its reference)"
            if ref == "data"
            else f" (closer to {fmt(ref, 'g')})"
        )
        diff = "difference" if ref is None else f"difference of {_what(m, ref)}"
        return f"model {a} has a better {m}{closer} than model {b}: {diff} {ivl}"
    if pair["comparison"] == "not tested":
        return (
            f"models {a} and {b}: {m} not compared (the interval of the difference could "
            "not be computed)"
        )
    if pair["comparison"] == "unreliable":
        return (
            f"models {a} and {b}: {m} not compared reliably (the tailedness screen of "
            f"Pernot (2024b) fails for one of them; difference {ivl})"
        )
    diff = "difference" if ref is None else f"difference of {_what(m, ref)}"
    return f"models {a} and {b}: no difference detected in {m} ({diff} {ivl} holds 0)"


def comparison_line(measure, ranking, pairs) -> str:
    """One measure of a comparison of models in words: the most probable rank of each model
    (with its probability, best first) and the pairs with a difference; "no difference
    detected" when no interval excludes 0.

    Parameters
    ----------
    measure : str
    ranking : dict
        Model -> ``{"most_probable_rank": int, "probability": float}``.
    pairs : list of dict
        The pairs of :func:`pair_line`, each pair once (the better model first where one is).

    Examples
    --------
    >>> ranking = {"A": {"most_probable_rank": 1, "probability": 0.93},
    ...            "B": {"most_probable_rank": 2, "probability": 0.61}}
    >>> pairs = [{"measure": "NLL", "model": "A", "versus": "B", "comparison": "better",
    ...           "difference": -0.12, "lower": -0.18, "upper": -0.05, "reference": None}]
    >>> comparison_line("NLL", ranking, pairs)  # doctest: +NORMALIZE_WHITESPACE
    'Comparison of the models by NLL: most probable ranks A 1 (probability 0.93), B 2 (0.61);
    model A has a better NLL than model B: difference -0.12 [-0.18, -0.05].'
    >>> pairs[0]["comparison"] = "no difference"
    >>> comparison_line("NLL", ranking, pairs).split("; ")[-1]
    'no difference detected between any two models.'

    When no pair can be compared (every pair unreliable or not tested), the ranks are not
    given: bootstrap ranks of differences that cannot be trusted mean nothing.

    >>> pairs[0]["comparison"] = "unreliable"
    >>> comparison_line("RCE", ranking, pairs)  # doctest: +NORMALIZE_WHITESPACE
    'Comparison of the models by RCE: no ranking (no pair can be compared); 1 pair unreliable
    (heavy tails: the tailedness screen fails).'
    """
    untested = [p for p in pairs if p["comparison"] == "not tested"]
    unreliable = [p for p in pairs if p["comparison"] == "unreliable"]
    if pairs and len(untested) + len(unreliable) == len(pairs):
        text = f"Comparison of the models by {measure}: no ranking (no pair can be compared)"
        return text + _not_compared(untested, unreliable) + "."
    order = sorted(
        ranking, key=lambda k: (ranking[k]["most_probable_rank"], -(ranking[k]["probability"] or 0))
    )
    ranks = []
    for i, k in enumerate(order):
        r = ranking[k]
        p = fmt(r["probability"], ".2f")
        ranks.append(f"{k} {r['most_probable_rank']} ({'probability ' if i == 0 else ''}{p})")
    text = f"Comparison of the models by {measure}: most probable ranks {', '.join(ranks)}"
    better = [pair_line(p) for p in pairs if p["comparison"] == "better"]
    if better:
        text += "; " + "; ".join(better)
        if len(better) < len(pairs) - len(untested) - len(unreliable):
            text += "; no other difference detected"
    elif pairs:
        text += "; no difference detected between any two models"
    return text + _not_compared(untested, unreliable) + "."


def _not_compared(untested, unreliable) -> str:
    """The clauses of :func:`comparison_line` for the pairs not compared."""
    text = ""
    if untested:
        k = len(untested)
        text += f"; {k} pair{'s' if k > 1 else ''} not compared (no interval)"
    if unreliable:
        k = len(unreliable)
        text += (
            f"; {k} pair{'s' if k > 1 else ''} unreliable (heavy tails: the tailedness "
            "screen fails)"
        )
    return text


def conclusion_lines(table, details, tested, local, feats, curve):
    """The conclusion of a report, written from its verdict table: ``(lines, further)``.

    Every sentence: the calibration questions first (average calibration, consistency,
    adaptivity per feature, the PIT when present), then the binning notes, then the further
    diagnostics (interval coverage, calibration curve, ENCE, ZMSE, CC), which ``further``
    lists. Each test's sentence reads its row of ``table`` (:func:`entry_of`: its verdict,
    p-values, reliability, reason and the numbers it quotes); only what a row cannot hold
    comes from ``details`` (the coverage's levels and PICP, ``valid``, ``adjusted``).

    Parameters
    ----------
    table : xarray.Dataset
        The verdict table (``Report.verdicts``).
    details : dict
        ``{test: entry}`` (``Report.numbers["verdicts"]``).
    tested : dict
        ``{variable: local analyses}`` of the variables tested (for a feature, those beyond
        the uE effect): their ``"LZMS"`` gives the failing regions.
    local : dict
        ``{variable: local analyses or None}`` (their ``"note"`` for a stratified binning).
    feats : list of str
    curve : xarray.Dataset
        :func:`uqviz.calibration_curve`.

    Returns
    -------
    tuple of (list of str, list of str)

    Examples
    --------
    >>> import xarray as xr
    >>> from uqviz.reporting.verdicts import not_tested, verdict_table
    >>> details = {"average": {**not_tested("uE is constant"), "valid": False},
    ...            "consistency": not_tested("uE is constant"),
    ...            "coverage": {"verdict": "OK", "generative": "normal", "levels": [0.9]},
    ...            **{s: {**not_tested("too few points"), "statistic": s}
    ...               for s in ("ENCE", "ZMSE", "CC")}}
    >>> curve = xr.Dataset({"miscalibration_area": 0.01, "mace": 0.01, "rmsce": 0.02})
    >>> lines, further = conclusion_lines(verdict_table(details), details, {}, {"uE": None},
    ...                                   [], curve)
    >>> lines[1]
    'Consistency: not tested (uE is constant).'
    >>> further[-1]
    'CC: not tested (too few points).'
    """

    def row(key):
        return entry_of(table, key, details.get(key))

    tests = set(str(t) for t in table["test"].values)
    lines = [average_line(row("average"))]
    for cond in ["uE", *feats]:
        key = "consistency" if cond == "uE" else f"adaptivity:{cond}"
        e = row(key)
        if cond not in tested:
            head = "Consistency" if cond == "uE" else f"Adaptivity in {cond}"
            lines.append(f"{head}: not tested ({e['reason']}).")
            continue
        lines.append(local_line(e, tested[cond]["LZMS"], cond))
    if "pit" in tests:
        lines.append(pit_line(row("pit")))
    for cond in ["uE", *feats]:
        if local[cond] is not None and local[cond]["LZMS"].attrs.get("binning") == "stratified":
            lines.append(local[cond]["note"])
    further = [coverage_line(row("coverage")), curve_line(curve)]
    further += [reference_line(row(s)) for s in ("ENCE", "ZMSE", "CC")]
    return lines + further, further


def resampling_line(how: dict) -> str:
    """The line of a report that says its bootstraps resampled whole groups
    (:func:`uqviz.reporting.build.resampling`); a report of ungrouped data has none.

    Examples
    --------
    >>> print(resampling_line({"resample": "groups", "n_groups": 120, "groups": "structure"}))
    ... # doctest: +NORMALIZE_WHITESPACE
    Bootstrap: whole groups resampled (120 groups of the `structure` coordinate): the
    intervals allow for the correlation of the points of a group.
    >>> resampling_line({"resample": "points"})
    'Bootstrap: points resampled.'
    """
    if how.get("resample") != "groups":
        return "Bootstrap: points resampled."
    n = how.get("n_groups")
    count = f"{n} groups" if n is not None else "groups"
    return (
        f"Bootstrap: whole groups resampled ({count} of the `{how.get('groups') or 'group'}` "
        "coordinate): the intervals allow for the correlation of the points of a group."
    )


def family_sentence(family: dict) -> str:
    """The sentence under the per-target table: the one Holm family of the targets.

    Examples
    --------
    >>> family_sentence({"alpha": 0.05, "size": 18, "targets": ["fx", "fy", "fz"],
    ...                  "pooled": ["pooled"]})  # doctest: +NORMALIZE_WHITESPACE
    'One Holm (1979) family of 18 tests over the targets fx, fy, fz and their pooled points
    (pooled), family-wise false-alarm rate 0.05: p_adj are adjusted over all of them.'
    """
    targets = ", ".join(family.get("targets", [])) or "the targets"
    pooled = family.get("pooled", [])
    where = f"the targets {targets}"
    if pooled:
        where += f" and their pooled points ({', '.join(pooled)})"
    return (
        f"One Holm (1979) family of {family.get('size', 0)} tests over {where}, family-wise "
        f"false-alarm rate {family.get('alpha', 0.05):g}: p_adj are adjusted over all of them."
    )
