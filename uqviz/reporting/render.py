"""HTML rendering of a report (a scoped ``<div>`` for Jupyter, a page for files).

Every number goes through :func:`uqviz.reporting.wording.fmt`: a value that
could not be computed reads "n/a" and the page says why.
"""

from __future__ import annotations

import base64
import html

from uqviz.reporting.verdicts import FURTHER_DIAGNOSTICS, is_question, question_label, verdict_table
from uqviz.reporting.wording import NA_NOTE, STD_PIT_NOTE, entry_of, family_sentence, fmt

__all__ = ["page", "fragment"]

#: every rule is scoped to the report's <div>, so that inline in Jupyter it styles
#: nothing of the notebook around it
_CSS = """.uqviz-report{font-family:system-ui,sans-serif;max-width:960px;margin:2em auto;color:#222}
.uqviz-report h1{font-size:1.5em}
.uqviz-report h2{font-size:1.15em;border-bottom:1px solid #ccc;padding-bottom:.2em}
.uqviz-report table{border-collapse:collapse;font-size:.9em}
.uqviz-report td,.uqviz-report th{border:1px solid #ddd;padding:.25em .6em}
.uqviz-report .warn{color:#a33}.uqviz-report .concl li{margin:.3em 0}
.uqviz-report img{max-width:100%}
.uqviz-report .headline{font-size:1.1em}
.uqviz-report .tests th.group{text-align:left;background:#f4f4f4}
.uqviz-report .v-fails{color:#a33;font-weight:bold}.uqviz-report .v-unreliable{color:#a60}
.uqviz-report .v-OK{color:#262}"""

_e = html.escape


def page(title: str, body: str) -> str:
    """A whole HTML document around a fragment."""
    return (
        f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>uqviz report: "
        f"{_e(title)}</title></head><body>\n{body}\n</body></html>"
    )


def fragment(sections, title: str | None = None, comparison=None, targets=None) -> str:
    """One scoped ``<div>`` (with its ``<style>``) holding the sections of the datasets.

    ``sections`` is a list of ``(name, numbers, conclusion, warnings, figures)`` or of
    ``(name, numbers, conclusion, warnings, figures, verdicts)``, ``verdicts`` the verdict
    table (``Report.verdicts``) from which the table of the tests and the PIT's verdict are
    written (default: made from ``numbers["verdicts"]``); ``comparison``, ``(numbers,
    figures)`` of the comparison of the models, or None; ``targets``, ``(table, family)`` of
    a targets tree (``ReportCollection.table``, its Holm family): the per-target table,
    first, or None.
    """
    parts = [f"<style>{_CSS}</style><div class='uqviz-report'>"]
    if title is not None:
        parts.append(f"<h1>Uncertainty validation report: {_e(title)}</h1>")
        toc = [f"<li><a href='#{_anchor(s[0])}'>{_e(s[0])}</a></li>" for s in sections]
        if targets is not None:
            toc.insert(0, f"<li><a href='#{TARGETS_ANCHOR}'>Targets</a></li>")
        if comparison is not None:
            toc.append(f"<li><a href='#{COMPARISON_ANCHOR}'>Comparison of the models</a></li>")
        parts.append("<ul>" + "".join(toc) + "</ul>")
    level = 1 if title is None else 2
    if targets is not None:
        parts.append(targets_html(*targets, level=level))
    body = "\n".join(_section(*s, level=level) for s in sections)
    if comparison is not None:
        body += "\n" + _comparison_html(*comparison, level=level)
    parts.append(body)
    if "n/a" in body:
        parts.append(f"<p><small>{_e(NA_NOTE)}</small></p>")
    parts.append(
        "<p><small>uqviz: methods of Pernot (2023, 2024a, 2024b, 2024c).</small></p></div>"
    )
    return "\n".join(parts)


def _anchor(name: str) -> str:
    return "ds-" + "".join(c if c.isalnum() else "-" for c in name)


def _section(name, n, conclusion, warnings, figures, verdicts=None, *, level=1) -> str:
    h1, h2 = f"h{level}", f"h{level + 1}"
    if verdicts is None:
        verdicts = verdict_table(n.get("verdicts", {}))
    further = set(n.get("further_diagnostics", {}).get("conclusion", []))
    parts = [
        f"<{h1} id='{_anchor(name)}'>"
        + (f"Uncertainty validation report: {_e(name)}" if level == 1 else _e(name))
        + f"</{h1}>"
    ]
    if n.get("verdicts"):
        parts += [f"<{h2}>Verdicts</{h2}>", _tests_html(n, verdicts)]
    parts += [
        f"<{h2}>Conclusion</{h2}><ul class='concl'>",
        *[f"<li>{_e(c)}</li>" for c in conclusion if c not in further],
        "</ul>",
    ]
    if further:
        parts += [
            f"<{h2}>Further diagnostics</{h2}>",
            "<p>ENCE, ZMSE and CC against simulated references (which depend on the "
            "unknown shape D of the errors, Pernot (2024c)), the interval coverage and "
            "the calibration curve, with their own words. A &quot;fails&quot; of ENCE, "
            "ZMSE or CC, decided under every D and kept by the Holm adjustment, makes "
            "the headline &quot;fails&quot;; their &quot;unreliable&quot; never makes "
            "it &quot;unreliable&quot;.</p><ul class='concl'>",
            *[f"<li>{_e(c)}</li>" for c in conclusion if c in further],
            "</ul>",
        ]
    if warnings:
        parts += [
            f"<{h2}>Warnings</{h2}><ul>",
            *[f"<li class='warn'>{_e(w)}</li>" for w in warnings],
            "</ul>",
        ]
    parts += [f"<{h2}>Data</{h2}>", _data_html(n["data"])]
    parts += [
        f"<{h2}>Average calibration</{h2}>",
        _table(
            n["average"],
            "statistic",
            ["estimate", "ci_lower", "ci_upper", "reference", "zeta", "valid"],
        ),
    ]
    if "average" in figures:
        parts.append(_img(figures["average"]))
    parts += [
        f"<{h2}>Tailedness screen</{h2}>",
        _table(n["tailedness"], "variable", ["beta_gm", "kappa_cs", "threshold", "heavy_tail"]),
    ]
    for key, value in n.items():
        if key.startswith("local_"):
            cond = key[len("local_") :]
            kind = "Consistency" if cond == "uE" else "Adaptivity"
            if "skipped" in value:
                parts.append(
                    f"<{h2}>{kind} vs {_e(cond)}</{h2}><p>not tested: {_e(value['skipped'])}</p>"
                )
                continue
            regions = value.get("failing_regions") or []
            parts.append(
                f"<{h2}>{kind}: LZM and LZMS vs {_e(cond)}</{h2}><p>"
                f"{_e(value.get('binning_note', ''))}<br>"
                f"{_fv_html(value, 'LZMS')}; {_fv_html(value, 'LZM')}"
                + (f"<br>failing regions (LZMS): {_e('; '.join(regions))}" if regions else "")
                + "</p>"
            )
            if f"LZMS_{cond}" in figures:
                parts.append(_img(figures[f"LZMS_{cond}"]))
    if "coverage" in n:
        parts += [
            f"<{h2}>Interval coverage</{h2}>",
            f"<p>PICP: share of points with E inside &plusmn;uE q<sub>D</sub>((1+p)/2), "
            f"D = {_e(str(n['coverage']['attrs'].get('generative', 'normal')))}; "
            "Wilson interval (continuity-corrected); valid: the level p lies inside. "
            "MPIW: mean interval width.</p>",
            _table(n["coverage"], "level", ["picp", "picp_lower", "picp_upper", "mpiw", "valid"]),
        ]
        if "coverage" in figures:
            parts.append(_img(figures["coverage"]))
    if "calibration_curve" in n:
        c = n["calibration_curve"]["data"]
        parts += [
            f"<{h2}>Calibration curve</{h2}>",
            f"<p>Observed vs expected proportions of the central intervals "
            f"({n['calibration_curve']['dims'].get('level', '')} levels): miscalibration "
            f"area {fmt(c['miscalibration_area']['values'], '.4g')}, MACE "
            f"{fmt(c['mace']['values'], '.4g')}, RMSCE {fmt(c['rmsce']['values'], '.4g')}."
            "</p>",
        ]
        if "calibration_curve" in figures:
            parts.append(_img(figures["calibration_curve"]))
    parts.append(f"<{h2}>Statistics without predefined reference (simulated references)</{h2}>")
    parts += [_reference_html(s, value) for s, value in n["simulated_references"].items()]
    if "pit" in n and "skipped" in n["pit"]:
        parts += [
            f"<{h2}>PIT of the forecast as given ({_e(n['pit']['forecast'])})</{h2}>",
            f"<p>not tested: {_e(n['pit']['skipped'])}</p>",
        ]
    elif "pit" in n:
        parts += [
            f"<{h2}>PIT of the forecast as given ({_e(n['pit']['forecast'])})</{h2}>",
            _pit_html(n["pit"], _row(verdicts, n, "pit")),
        ]
        parts += [_img(figures[k]) for k in ("pit_histogram", "pit_ecdf") if k in figures]
    else:
        parts.append(f"<p><small>{_e(STD_PIT_NOTE)}</small></p>")
    if "remedy" in n:
        parts.append(f"<{h2}>Remedy: cross-fitted recalibrations, re-validated</{h2}>")
        if "methods" in n["remedy"]:
            parts.append(_remedy_html(n["remedy"]))
        if "remedy" in figures:
            parts.append(_img(figures["remedy"]))
        if "distribution" in n["remedy"]:
            parts += [
                f"<{h2}>Remedy of the distribution: conformal and quantile recalibration</{h2}>",
                _distribution_html(n["remedy"]["distribution"]),
            ]
    return "\n".join(parts)


def _word_html(word) -> str:
    word = str(word)
    return f"<span class='v-{_e(word.replace(' ', '-'))}'>{_e(word)}</span>"


def _rests_on(key, e) -> str:
    """The number a test rests on, in words (HTML)."""
    head = key.split(":")[0]
    if e.get("verdict") == "not tested":
        return "&mdash;"
    if head == "average":
        text = (
            f"{_e(str(e.get('statistic', 'ZMS')))} = {fmt(e.get('estimate'))} "
            f"[{fmt(e.get('ci_lower'))}, {fmt(e.get('ci_upper'))}], reference "
            f"{fmt(e.get('reference'), 'g')}"
        )
        if e.get("heavy_tail"):  # decided by the tail-allowing test (validate_average)
            text += "; heavy tails: against calibrated Student-t z-scores" + (
                f" with {fmt(e['tail_df'], '.3g')} degrees of freedom"
                if e.get("tail_df") is not None
                else ""
            )
        return text
    if head in ("consistency", "adaptivity"):
        text = (
            f"f<sub>v</sub> = {fmt(e.get('estimate'), '.3f')} in {e.get('n_bins')} bins; "
            f"calibrated data {fmt(e.get('reference'), '.3f')}, at least "
            f"{fmt(e.get('reference_lower'), '.3f')}"
        )
        if e.get("n_unreliable"):
            text += f"; {e['n_unreliable']} bins unreliable"
        return text
    if head == "pit":
        where = "inside" if e.get("valid") else "outside"
        return (
            f"PIT ECDF {where} its simultaneous band; PIT variance "
            f"{fmt(e.get('pit_var'), '.4f')} (1/12 = 0.0833)"
        )
    if head == "coverage":
        levels, picp = e.get("levels", []), e.get("picp", [])
        bad = set(e.get("rejected_levels", []))
        shown = [(lv, v) for lv, v in zip(levels, picp) if lv in bad] or list(zip(levels, picp))
        return "PICP " + ", ".join(f"{fmt(v, '.3f')} at {100 * lv:g} %" for lv, v in shown)
    if head in FURTHER_DIAGNOSTICS:
        refs = e.get("references") or {}
        text = f"{_e(head)} = {fmt(e.get('estimate'), '.3g')}"
        if refs:
            text += "; simulated references " + ", ".join(
                f"{fmt(r, '.3g')} ({_e(g)})" for g, r in refs.items()
            )
        return text
    return fmt(e.get("estimate"))


def _adjusted_html(key, e) -> str:
    """The Holm-adjusted p-value of a test, with its own p-value."""
    if e.get("family_size") is not None:
        return (
            f"{fmt(e.get('p_adjusted'), '.2g')} <small>(p = {fmt(e.get('p_value'), '.2g')}"
            f"; {e['family_size']} tests)</small>"
        )
    if key == "coverage" and e.get("p_value") is not None:
        return (
            f"{fmt(e['p_value'], '.2g')} <small>(smallest, Holm over its "
            f"{len(e.get('levels', []))} levels; not in the family)</small>"
        )
    return "&mdash;"


def _reason(e) -> str:
    if e.get("reason"):
        return e["reason"]
    word = e.get("verdict")
    if word == "OK":
        return "not rejected"
    if word == "fails":
        return "rejected at the family's level" if e.get("family_size") is not None else "rejected"
    return ""


def _row(table, n, key) -> dict:
    """The row ``key`` of the verdict table, with the details it cannot hold from the JSON
    (:func:`uqviz.reporting.wording.entry_of`); ``{}`` when the table has no such test."""
    if key not in set(str(t) for t in table["test"].values):
        return {}
    return entry_of(table, key, n.get("verdicts", {}).get(key))


def _tests_html(n, table) -> str:
    """The headline and the table of the tests: the calibration questions, then the further
    diagnostics (test, verdict, the number it rests on, adjusted p, reason), one row per test
    of the verdict table ``table`` (``Report.verdicts``), in its order; the lists and dicts a
    row cannot hold (the coverage's levels, the references per D) come from
    ``n["verdicts"]``, the headline's sentence from ``n["headline"]``.

    Examples
    --------
    >>> from uqviz.reporting.verdicts import verdict_table
    >>> entries = {"average": {"verdict": "OK", "statistic": "ZMS", "estimate": 1.01,
    ...                        "ci_lower": 0.95, "ci_upper": 1.07, "reference": 1.0}}
    >>> n = {"verdicts": entries, "verdict": "OK"}
    >>> "ZMS = 1.01" in _tests_html(n, verdict_table(entries))
    True
    >>> "ZMS = 1.5" in _tests_html(n, verdict_table(entries).assign(
    ...     estimate=("test", [1.5])))  # the table is what is written
    True
    """
    entries = {str(k): _row(table, n, str(k)) for k in table["test"].values}
    head = n.get("headline", {})
    word = n.get("verdict", head.get("verdict", "n/a"))
    questions = [k for k, e in entries.items() if e.get("headline", is_question(k))]
    further = [k for k in entries if k not in questions]
    cols = "".join(f"<th>{c}</th>" for c in ("test", "verdict", "rests on", "adjusted p", "reason"))

    def rows(keys):
        out = []
        for k in keys:
            e = entries[k]
            label = _e(question_label(k))
            if e.get("adjusted"):
                label += " <small>(beyond the uE effect)</small>"
            out.append(
                f"<tr data-test='{_e(k)}'><td>{label}</td>"
                f"<td>{_word_html(e.get('verdict', 'n/a'))}</td>"
                f"<td>{_rests_on(k, e)}</td><td>{_adjusted_html(k, e)}</td>"
                f"<td>{_e(_reason(e))}</td></tr>"
            )
        return "".join(out)

    body = (
        f"<tbody class='questions'><tr><th class='group' colspan='5'>Calibration questions "
        f"(the headline)</th></tr>{rows(questions)}</tbody>"
    )
    if further:
        body += (
            f"<tbody class='diagnostics'><tr><th class='group' colspan='5'>Further "
            f"diagnostics (their own words)</th></tr>{rows(further)}</tbody>"
        )
    sentence = head.get("sentence", "")
    prefix = f"Headline: {word} "
    rest = sentence[len(prefix) :] if sentence.startswith(prefix) else sentence
    return (
        f"<p class='headline'>Headline: <b>{_word_html(word)}</b> {_e(rest)}</p>"
        f"<table class='tests'><thead><tr>{cols}</tr></thead>{body}</table>"
    )


#: the anchor of the comparison section (no dataset's anchor: those start with "ds-")
COMPARISON_ANCHOR = "comparison-of-the-models"
#: the anchor of the per-target table of a targets tree
TARGETS_ANCHOR = "targets"


def _padj(p) -> str:
    p = float(p)
    return "-" if p != p else "< 1e-4" if p < 1e-4 else fmt(p, ".3g")


def targets_html(table, family, *, level=2) -> str:
    """The per-target table of a targets tree (``ReportCollection.table``): one row per
    target (and pooled), the words and Holm-adjusted p-values of the one family of the
    targets, and the family's sentence.

    Examples
    --------
    >>> import xarray as xr
    >>> t = xr.Dataset({"n_points": ("target", [90]), "n_missing": ("target", [10]),
    ...     "n_groups": ("target", [12]), "resampling": ("target", ["groups"]),
    ...     "ZMS": ("target", [1.01]), "ZMS_lower": ("target", [0.9]),
    ...     "ZMS_upper": ("target", [1.2]), "average": ("target", ["OK"]),
    ...     "average_p_adjusted": ("target", [1.0]), "consistency": ("target", ["fails"]),
    ...     "consistency_p_adjusted": ("target", [0.01]), "coverage": ("target", ["OK"]),
    ...     "verdict": ("target", ["fails"])}, coords={"target": ["fx"]})
    >>> h = targets_html(t, {"size": 6, "alpha": 0.05, "targets": ["fx"]})
    >>> "<td>fx</td><td>90</td><td>10</td><td>12</td><td>groups</td>" in h
    True
    """
    cols = (
        "target",
        "n points",
        "n missing",
        "n groups",
        "resampling",
        "ZMS [95 % CI]",
        "average",
        "adjusted p",
        "consistency",
        "adjusted p",
        "coverage",
        "verdict",
    )
    rows = []
    for i, name in enumerate(table["target"].values):
        r = {k: table[k].values[i] for k in table.data_vars}
        groups = "-" if int(r["n_groups"]) < 0 else str(int(r["n_groups"]))
        zms = f"{fmt(r['ZMS'])} [{fmt(r['ZMS_lower'])}, {fmt(r['ZMS_upper'])}]"
        cells = [
            _e(str(name)),
            str(int(r["n_points"])),
            str(int(r["n_missing"])),
            groups,
            _e(str(r["resampling"])),
            _e(zms),
            _word_html(str(r["average"])),
            _e(_padj(r["average_p_adjusted"])),
            _word_html(str(r["consistency"])),
            _e(_padj(r["consistency_p_adjusted"])),
            _word_html(str(r["coverage"])),
            _word_html(str(r["verdict"])),
        ]
        rows.append(
            f"<tr data-target='{_e(str(name))}'><td>" + "</td><td>".join(cells) + "</td></tr>"
        )
    head = "".join(f"<th>{c}</th>" for c in cols)
    return (
        f"<h{level} id='{TARGETS_ANCHOR}'>Targets</h{level}>"
        f"<table class='tests targets'><thead><tr>{head}</tr></thead><tbody>"
        + "".join(rows)
        + f"</tbody></table><p>{_e(family_sentence(family))}</p>"
    )


def _comparison_html(n, figures, *, level=2) -> str:
    """The comparison of the models: conclusion, the table of values and ranks, the verdict
    of each pair, the figures."""
    h1, h2 = f"h{level}", f"h{level + 1}"
    if "skipped" in n:
        return (
            f"<{h1} id='{COMPARISON_ANCHOR}'>Comparison of the models</{h1}>"
            f"<p>not done: {_e(n['skipped'])}</p>"
        )
    models, measures = n["models"], n["measures"]
    how = (
        "compared as requested, compare=True"
        if n["compare"] == "requested"
        else "they give the same observed values y"
    )
    parts = [
        f"<{h1} id='{COMPARISON_ANCHOR}'>Comparison of the models</{h1}>",
        f"<p>{len(models)} models of the same {n['n_points']} points ({how}); paired "
        f"bootstrap ({_e(str(n['result']['attrs'].get('n_boot', '')))} "
        "replicates, the same resamples for every model and measure). A statistic is "
        "judged by its distance to its reference, a score by its value (smaller is "
        "better); model A is better than B only when the whole interval of the difference "
        "of their distances lies below 0 (Pernot &amp; Savin (2020a, 2020b)).</p>",
        f"<{h2}>Conclusion</{h2}><ul class='concl'>",
        *[f"<li>{_e(c)}</li>" for c in n["conclusion"]],
        "</ul>",
    ]
    if n.get("warnings"):
        parts += [
            f"<{h2}>Warnings</{h2}><ul>",
            *[f"<li class='warn'>{_e(w)}</li>" for w in n["warnings"]],
            "</ul>",
        ]
    ci = 100 * float(n["result"]["attrs"].get("ci", 0.95))
    label = n.get("labels", {})
    head = "".join(f"<th>{_e(label.get(m, m))}</th>" for m in measures)
    rows = []
    for k in models:
        cells = []
        for m in measures:
            t = n["table"][m][k]
            rank = t["most_probable_rank"] or "n/a"
            cells.append(
                f"{fmt(t['value'])} [{fmt(t['lower'])}, {fmt(t['upper'])}]<br>"
                f"<small>rank {rank} (probability {fmt(t['probability'], '.2f')})"
                "</small>"
            )
        rows.append(f"<tr><td>{_e(k)}</td>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    parts += [
        f"<{h2}>Values and ranks</{h2}>",
        f"<p>Each measure with its {ci:g} % interval, and the model's most probable "
        "rank (1: the best) with the share of bootstrap replicates giving it.</p>",
        f"<table><tr><th>model</th>{head}</tr>{''.join(rows)}</table>",
    ]
    if "comparison_ranking" in figures:
        parts.append(_img(figures["comparison_ranking"]))
    parts.append(f"<{h2}>Pairs of models</{h2}>")
    for m in measures:
        items = [
            f"<li><b>{_e(p['text'])}</b></li>"
            if p["comparison"] == "better"
            else f"<li>{_e(p['text'])}</li>"
            for p in n["pairs"][m]
        ]
        parts.append(f"<p>{_e(label.get(m, m))}:</p><ul>{''.join(items)}</ul>")
    if "comparison_differences" in figures:
        parts.append(_img(figures["comparison_differences"]))
    if n.get("sip_measures"):
        parts += [
            f"<{h2}>Systematic improvement probability</{h2}>",
            f"<p>SIP of {_e(', '.join(label.get(m, m) for m in n['sip_measures']))}: "
            "the share of the points where "
            "a model's per-point value is better than the other's, with the mean gain "
            "and mean loss (Pernot &amp; Savin (2020a)).</p>",
        ]
        if "comparison_sip" in figures:
            parts.append(_img(figures["comparison_sip"]))
    return "\n".join(parts)


def _pit_html(block, entry) -> str:
    """validate_pit's numbers, the band verdict with its p-value, and the native scores."""
    d = block["validate_pit"]["data"]
    a = block["validate_pit"]["attrs"]

    def v(name):
        return d[name]["values"]

    rows = [
        ("Kolmogorov-Smirnov", f"D = {fmt(v('ks_statistic'))}", fmt(v("ks_p_value"))),
        ("Cram&eacute;r-von Mises", f"W = {fmt(v('cvm_statistic'))}", fmt(v("cvm_p_value"))),
        (
            "PIT mean (1/2)",
            f"{fmt(v('pit_mean'))} [{fmt(v('pit_mean_lower'))}, {fmt(v('pit_mean_upper'))}]",
            "",
        ),
        (
            "PIT variance (1/12 = 0.08333)",
            f"{fmt(v('pit_var'))} [{fmt(v('pit_var_lower'))}, {fmt(v('pit_var_upper'))}]",
            "",
        ),
        (
            "ECDF in its simultaneous band",
            f"{'inside' if v('valid') else 'outside'} "
            f"(pointwise level {fmt(a.get('band_level'))}, {a.get('n_band')} simulated "
            "ECDFs)",
            fmt(v("band_p_value")),
        ),
    ]
    table = (
        "<table><tr><th>test</th><th>value</th><th>p-value</th></tr>"
        + "".join(f"<tr><td>{t}</td><td>{x}</td><td>{p}</td></tr>" for t, x, p in rows)
        + "</table>"
    )
    verdict = (
        f"<p><b>Verdict: {_e(str(entry.get('verdict', 'n/a')))}</b> (decided by the "
        f"ECDF of the PIT against its simultaneous {100 * float(a.get('ci', 0.95)):g} % "
        "band, "
        "Säilynoja et al. (2022); its p-value "
        f"{fmt(entry.get('p_value'))}, Holm-adjusted over the report's tests "
        f"{fmt(entry.get('p_adjusted'))}). KS, CvM and the moments are shown, not "
        "gated.</p>"
    )
    sc = block["scores"]
    score_rows = "".join(
        f"<tr><td>{_e(str(name))}</td><td>{fmt(sc['data']['estimate']['values'][i])}</td>"
        f"<td>[{fmt(sc['data']['ci_lower']['values'][i])}, "
        f"{fmt(sc['data']['ci_upper']['values'][i])}]</td></tr>"
        for i, name in enumerate(sc["coords"]["score"])
    )
    scores = (
        "<p>Scores of the forecast as given (smaller is better; "
        f"{sc['attrs'].get('n_boot')} bootstrap replicates):</p><table><tr><th>score</th>"
        f"<th>mean</th><th>{100 * float(sc['attrs'].get('ci', 0.95)):g} % CI</th></tr>"
        f"{score_rows}</table>"
    )
    return verdict + table + scores


def _distribution_html(r) -> str:
    """Conformal coverage (marginal and per bin) and the PIT after quantile recalibration."""
    lv = f"{100 * r['level']:g} %"
    parts = [f"<p><b>{_e(r['summary'])}</b></p>"]
    conf = r.get("conformal", {})
    if "error" in conf:
        parts.append(f"<p class='warn'>Conformal: not computed: {_e(conf['error'])}</p>")
    elif conf:
        mg = conf["marginal"]
        parts.append(
            f"<p>Conformal intervals (split, normalised by uE, cross-fitted on {r['folds']} "
            f"folds) at {lv}: PICP {fmt(mg['picp'], '.4f')} [{fmt(mg['picp_lower'], '.4f')}, "
            f"{fmt(mg['picp_upper'], '.4f')}] ({mg['n_inside']} of {mg['n_points']} points "
            f"inside; Wilson interval). Guarantee: under exchangeability the expected coverage "
            f"is at least {lv} (and below {lv} + 1/(n + 1), n = {conf['n_calibration']} "
            "calibration points, for untied scores), marginally only: not in a bin of uE or "
            "of a feature.</p>"
        )
        head = (
            "<tr><th>variable</th><th>bins</th><th>bins whose interval excludes the level</th>"
            "<th>under-covered</th><th>over-covered</th><th>lowest PICP</th></tr>"
        )
        rows = []
        for c, loc in conf["local"].items():
            low = min(
                (b for b in loc["bins"] if b["picp"] is not None),
                key=lambda b: b["picp"],
                default=None,
            )
            low_s = (
                ""
                if low is None
                else f"{fmt(low['picp'], '.3f')} "
                f"[{fmt(low['picp_lower'], '.3f')}, {fmt(low['picp_upper'], '.3f')}] for "
                f"{fmt(low['bin_lower'])} &le; {_e(c)} &le; {fmt(low['bin_upper'])}"
            )
            warn = " class='warn'" if loc["n_excluding"] else ""
            rows.append(
                f"<tr><td>{_e(c)}</td><td>{loc['n_bins']}</td><td{warn}>"
                f"{loc['n_excluding']}</td><td>{loc['under']}</td><td>{loc['over']}"
                f"</td><td>{low_s}</td></tr>"
            )
        parts.append(
            f"<p>Local coverage (the report's bins):</p><table>{head}" + "".join(rows) + "</table>"
        )
    q = r.get("quantile")
    if q is not None:
        if "error" in q:
            parts.append(
                f"<p class='warn'>Quantile recalibration: not computed: {_e(q['error'])}</p>"
            )
        else:
            e = q["pit"]
            parts.append(
                f"<p>Quantile recalibration (isotonic map of the PIT, Kuleshov et al. "
                f"(2018), cross-fitted), re-validated by the PIT: "
                f"<b>{_e(q['status'])}</b> (before: {_e(str(q.get('before')))}); band "
                f"p-value {fmt(e['p_value'])}, KS p {fmt(e['ks_p_value'])}, PIT "
                f"variance {fmt(e['pit_var'])} (1/12 = 0.08333).</p>"
            )
    return "".join(parts)


def _ci(block) -> str:
    return (
        f"{fmt(block.get('estimate'), '.3g')} [{fmt(block.get('ci_lower'), '.3g')}, "
        f"{fmt(block.get('ci_upper'), '.3g')}]"
    )


def _remedy_html(r) -> str:
    """The re-validation of each recalibration, side by side with the data before."""
    rows = r["methods"]
    conds = next((list(m["fv"]) for m in rows if "fv" in m), [])
    head = (
        ["method", "ZMS [CI]: verdict"]
        + [f"f<sub>v</sub> vs {_e(c)}" for c in conds]
        + [f"PICP {100 * r['level']:g} %", "NLL", "CRPS", "validated"]
    )
    sb = r["before"]
    before_scores = sb.get("scores", {})
    cells = [
        ["<i>before</i>", _e(sb["status"].get("average calibration", ""))]
        + [
            _e(sb["status"].get("consistency" if c == "uE" else f"adaptivity in {c}", ""))
            for c in conds
        ]
        + [
            "",
            *(_ci(before_scores[s]) if s in before_scores else "n/a" for s in ("nll", "crps")),
            "",
        ]
    ]
    for m in rows:
        name = _e(m["description"])
        if m.get("error"):
            cells.append(
                [name, f"<span class='warn'>not computed: {_e(m['error'])}</span>"]
                + [""] * (len(head) - 2)
            )
            continue
        z = m["zms"]
        row = [name, f"{_ci(z)}: {_e(z['status'])}"]
        for c in conds:
            fv = m["fv"][c]
            row.append(
                f"{_ci(fv)}: {_e(fv['status'])}"
                + (" (stratified)" if fv.get("binning") == "stratified" else "")
            )
        cov = m["coverage"]
        row.append(
            f"{fmt(cov['picp'], '.3f')} [{fmt(cov['picp_lower'], '.3f')}, "
            f"{fmt(cov['picp_upper'], '.3f')}]: {'OK' if cov['valid'] else 'fails'}"
        )
        row += [_ci(m["scores"][s]) for s in ("nll", "crps")]
        row.append("<b>yes</b>" if m["validated"] else "no")
        cells.append(row)
    table = (
        "<table><tr>"
        + "".join(f"<th>{h}</th>" for h in head)
        + "</tr>"
        + "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in cells)
        + "</table>"
    )
    note = (
        f"<p><small>Each method recalibrates every point by a fit on the other "
        f"{r['folds'] - 1} of {r['folds']} folds (cross-fitting; the same folds for every "
        f"method), so that re-validating on the same data is honest. Re-validation with "
        f"{r['n_boot']} bootstrap replicates; a verdict is OK when the reference lies "
        "inside the interval, and never OK when the tailedness screen fails (unreliable). "
        "NLL and CRPS (smaller is better) use the same resamples before and after. "
        "Parameters in words are those of a fit on all the data.</small></p>"
    )
    return f"<p><b>{_e(r['summary'])}</b></p>{table}{note}"


def _img(png: bytes) -> str:
    return f'<img src="data:image/png;base64,{base64.b64encode(png).decode()}"/>'


def _data_html(d) -> str:
    """Size, features, E and uE ranges, and what the input filters dropped."""
    lines = [
        f"{d['n_points']} points; features: {_e(', '.join(d['features']) or 'none')}; "
        f"units: {_e(str(d['units']) or '-')}.",
        f"E: mean {fmt(d['E']['mean'])}, sd {fmt(d['E']['sd'])}, range "
        f"[{fmt(d['E']['min'])}, {fmt(d['E']['max'])}]; uE: mean {fmt(d['uE']['mean'])}, "
        f"range [{fmt(d['uE']['min'])}, {fmt(d['uE']['max'])}], "
        f"{d['uE']['n_distinct']} distinct values.",
    ]
    if d.get("n_dropped"):
        lines.append(
            f"<span class='warn'>Bad input: {d['n_dropped']} rows dropped "
            f"({_e(str(d.get('dropped_reasons', '')))}).</span>"
        )
    else:
        lines.append("Bad input: none (no NaN, inf or uE &le; 0).")
    if d.get("n_filtered"):
        lines.append(
            f"{d['n_filtered']} rows with uE &le; {fmt(d.get('min_uncertainty'))} "
            "filtered out (min_uncertainty)."
        )
    return "<p>" + "<br>".join(lines) + "</p>"


def _fv_html(local_block, statistic) -> str:
    fv = local_block[f"fv_{statistic}"]["data"]
    return (
        f"f<sub>v</sub>({statistic}) = {fmt(fv['estimate']['values'], '.3f')} "
        f"[{fmt(fv['ci_lower']['values'], '.3f')}, {fmt(fv['ci_upper']['values'], '.3f')}], "
        f"{fv['n_valid']['values']} of {fv['n_bins']['values']} bins valid"
    )


def _reference_html(statistic, block) -> str:
    """Estimate and CI, then the reference and zeta-score for each generative D."""
    v = block["data"]
    head = (
        f"<p><b>{_e(statistic)}</b> = {fmt(v['estimate']['values'])} "
        f"[{fmt(v['ci_lower']['values'])}, {fmt(v['ci_upper']['values'])}]: verdict "
        f"<i>{_e(str(v['verdict']['values']))}</i></p>"
    )
    return head + _table(block, "generative", ["reference", "reference_se", "zeta", "valid"])


def _table(block, dim, variables) -> str:
    labels = block["coords"][dim]
    head = "".join(f"<th>{_e(v)}</th>" for v in [dim, *variables])
    rows = []
    for i, label in enumerate(labels):
        cells = []
        for v in variables:
            val = block["data"][v]["values"][i]
            cells.append(str(val) if isinstance(val, bool) else fmt(val))
        rows.append(
            "<tr><td>"
            + _e(str(label))
            + "</td>"
            + "".join(f"<td>{c}</td>" for c in cells)
            + "</tr>"
        )
    return f"<table><tr>{head}</tr>{''.join(rows)}</table>"
