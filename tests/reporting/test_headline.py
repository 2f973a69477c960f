"""The headline of a report answers the calibration questions (issue 36, item 3).

Average calibration, consistency, adaptivity per feature and the PIT (when the forecast is
given as more than a standard uncertainty) make the headline; ENCE, ZMSE, CC and the interval
coverage are further diagnostics with their own words: a "fails" of ENCE, ZMSE or CC kept by
the family's Holm adjustment makes the headline "fails", their "unreliable" never makes it
"unreliable", the coverage never enters it. The coverage's reason names a conditional
miscalibration when it can be the cause, and the HTML page opens with the table of the tests.
"""

import copy
import warnings
from html.parser import HTMLParser

import numpy as np
import pytest

import uqviz
from uqviz.reporting import verdicts as vd


def _e(verdict, p=None, *, reliable=True, gated=True, **kw):
    return {
        "verdict": verdict,
        "p_value": p,
        "reliable": reliable,
        "gated": gated,
        "reason": "",
        **kw,
    }


def _entries(**changes):
    """Hand-built entries of a report with two features; every test passes unless changed."""
    out = {
        "average": _e("OK", 0.6),
        "consistency": _e("OK", 0.5),
        "adaptivity:X1": _e("OK", 0.7),
        "adaptivity:X2": _e("OK", 0.4),
        "ENCE": _e("OK", 0.3),
        "ZMSE": _e("OK", 0.35),
        "CC": _e("OK", 0.8),
        "coverage": _e("OK", 0.9, gated=False),
    }
    for k, v in changes.items():
        out[k.replace("__", ":")] = v
    return out


@pytest.mark.parametrize(
    "changes, word, why",
    [
        ({}, "OK", "every question OK"),
        # the binned statistics' references depend on D: unreliable, a further diagnostic only
        (
            dict(
                ENCE=_e("unreliable", 0.03, reliable=False),
                ZMSE=_e("unreliable", 0.2, reliable=False),
                CC=_e("unreliable", 0.5, reliable=False),
            ),
            "OK",
            "D-dependent",
        ),
        # the coverage's shape finding never reaches the headline, nor its "fails"
        (dict(coverage=_e("unreliable", 0.001, reliable=False, gated=False)), "OK", "shape"),
        (dict(coverage=_e("fails", 0.001, gated=False)), "OK", "coverage not in the family"),
        # a question decides
        (dict(average=_e("unreliable", 0.2, reliable=False)), "unreliable", "heavy tails"),
        (dict(consistency=_e("fails", 1e-6)), "fails", "consistency fails"),
        (
            dict(adaptivity__X2=_e("fails", 1e-6), ENCE=_e("unreliable", 0.5, reliable=False)),
            "fails",
            "fails beats unreliable",
        ),
        # a "fails" of a binned statistic decided under every D, kept by Holm, enters
        (dict(CC=_e("fails", 1e-5)), "fails", "CC fails in the family"),
        # ... but not once the adjustment over the 7 tests removes it
        (dict(CC=_e("fails", 0.02)), "OK", "CC not significant after Holm"),
        # a not-tested question is left out; all not tested: not tested
        (dict(consistency=_e("not tested", None, gated=False)), "OK", "constant uE"),
    ],
)
def test_headline_of_hand_built_entries(changes, word, why):
    entries = vd.decide_family(_entries(**changes))
    h = vd.headline(entries)
    assert h["verdict"] == word, why
    assert h["tests"] == ["average", "consistency", "adaptivity:X1", "adaptivity:X2"]
    assert h["further_diagnostics"] == ["ENCE", "ZMSE", "CC", "coverage"]
    assert h["sentence"].startswith(f"Headline: {word} (the calibration questions: ")
    if word == "fails":
        assert h["fails"] or h["diagnostics_failing"]
    assert h["diagnostics_failing"] == (["CC"] if why == "CC fails in the family" else [])
    # the headline's "unreliable" names questions only
    assert all(vd.is_question(k) for k in h["unreliable"])


def test_headline_with_the_pit_and_without_tests():
    e = vd.decide_family(_entries(pit=_e("fails", 1e-4, forecast="quantiles")))
    h = vd.headline(e)
    assert h["verdict"] == "fails" and h["fails"] == ["pit"] and "pit" in h["tests"]
    assert "PIT uniformity fails" in h["sentence"]
    nothing = {k: _e("not tested", None, gated=False) for k in ("average", "consistency")}
    assert (
        vd.headline({**nothing, "ENCE": _e("unreliable", 0.4, reliable=False)})["verdict"]
        == "not tested"
    )


def test_diagnostics_unreliable_never_make_the_headline_unreliable_whatever_their_p():
    # every combination of words of ENCE, ZMSE, CC and coverage, questions all OK: the
    # headline is "OK" unless one of ENCE, ZMSE, CC fails after Holm
    words = ("OK", "unreliable", "not tested")
    for combo in np.array(np.meshgrid(*[range(3)] * 4)).T.reshape(-1, 4):
        ch = {}
        for key, w in zip(("ENCE", "ZMSE", "CC", "coverage"), combo):
            word = words[w]
            ch[key] = _e(
                word,
                None if word == "not tested" else 0.02,
                reliable=word != "unreliable",
                gated=key != "coverage" and word != "not tested",
            )
        e = vd.decide_family(_entries(**ch))
        h = vd.headline(e)
        assert h["verdict"] in ("OK", "fails")
        # a reliable p = 0.02 among 5 to 7 tests does not survive Holm: nothing fails
        assert h["verdict"] == "OK", ch


def test_headline_false_fails_rate_is_holms_on_null_p_values():
    """Uniform p-values for every test of the family (the null of each): the headline fails in
    at most 5 % of reports (Holm's guarantee); with the diagnostics' "unreliable" set at random
    the headline is never "unreliable" while the questions are reliable."""
    rng = np.random.default_rng(36)
    n, fails, unreliable = 4000, 0, 0
    for _ in range(n):
        p = rng.uniform(size=7)
        flaky = rng.uniform(size=3) < 0.8  # the binned statistics depend on D
        e = _entries(
            average=_e("OK", p[0]),
            consistency=_e("OK", p[1]),
            adaptivity__X1=_e("OK", p[2]),
            adaptivity__X2=_e("OK", p[3]),
            **{
                s: _e("OK", q, reliable=not f)
                for s, q, f in zip(("ENCE", "ZMSE", "CC"), p[4:], flaky)
            },
            coverage=_e("unreliable", 0.001, reliable=False, gated=False),
        )
        word = vd.headline(vd.decide_family(e))["verdict"]
        fails += word == "fails"
        unreliable += word == "unreliable"
    assert unreliable == 0
    assert fails / n <= 0.05 + 2 * np.sqrt(0.05 * 0.95 / n), fails / n


def _cov(nu=3, n=20000, seed=0):
    rng = np.random.default_rng(seed)
    u = rng.uniform(0.5, 2, n)
    z = rng.standard_normal(n) if nu is None else rng.standard_t(nu, n) / np.sqrt(nu / (nu - 2))
    return uqviz.interval_coverage(uqviz.from_arrays(u * z, u))


def test_coverage_off_while_the_zms_holds_names_conditional_miscalibration():
    cov = _cov()
    # no conditional test fails: the shape or a conditional miscalibration, not "not a failure"
    e = vd.coverage_entry(cov, "OK", conditional={"consistency": "OK", "adaptivity:x": "OK"})
    assert e["verdict"] == "unreliable" and e["causes"] == []
    assert "not a failure of uE" not in e["reason"]
    assert "shape of the errors" in e["reason"] and "conditional miscalibration" in e["reason"]
    assert "consistency and adaptivity in x, its tests, do not fail here" in e["reason"]
    # a failing adaptivity is named as the likely cause
    e = vd.coverage_entry(cov, "OK", conditional={"consistency": "OK", "adaptivity:x": "fails"})
    assert e["verdict"] == "fails" and e["causes"] == ["adaptivity:x"]
    assert "adaptivity in x fails" in e["reason"] and "likely cause" in e["reason"]
    e = vd.coverage_entry(
        cov, "unreliable", conditional={"consistency": "fails", "adaptivity:x": "fails"}
    )
    assert e["causes"] == ["consistency", "adaptivity:x"]
    assert "consistency and adaptivity in x fail:" in e["reason"]
    # an undecided conditional test is said to be undecided
    e = vd.coverage_entry(cov, "OK", conditional={"consistency": "unreliable"})
    assert e["verdict"] == "unreliable" and "consistency cannot decide it" in e["reason"]
    # the variance fails on average: so do the intervals; covered: OK
    assert vd.coverage_entry(cov, "fails")["verdict"] == "fails"
    assert (
        vd.coverage_entry(_cov(None), "OK", conditional={"consistency": "fails"})["verdict"] == "OK"
    )
    assert uqviz.reporting.wording.coverage_line(e).startswith(
        "Interval coverage (normal D): unreliable at "
    )


class _Tables(HTMLParser):
    """The tests' table of a page: its rows (cells as text) and where it starts."""

    def __init__(self):
        super().__init__()
        self.rows, self.headers, self._row, self._cell = [], [], None, None
        self.in_tests, self.table_at, self.conclusion_at, self.h2 = False, None, None, None
        self.group_rows = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "table" and a.get("class") == "tests":
            self.in_tests, self.table_at = True, self.getpos()
        if tag == "h2":
            self.h2 = ""
        if self.in_tests and tag == "tr":
            self._row = {"key": a.get("data-test"), "cells": []}
        if self.in_tests and tag in ("td", "th"):
            self._cell = ""

    def handle_endtag(self, tag):
        if tag == "h2" and self.h2 is not None:
            if self.h2 == "Conclusion" and self.conclusion_at is None:
                self.conclusion_at = self.getpos()
            self.h2 = None
        if not self.in_tests:
            return
        if tag in ("td", "th") and self._cell is not None:
            self._row["cells"].append(self._cell.strip())
            self._cell = None
        elif tag == "tr" and self._row is not None:
            if self._row["key"]:
                self.rows.append(self._row)
            elif len(self._row["cells"]) == 5:
                self.headers = self._row["cells"]
            else:
                self.group_rows.append(self._row["cells"][0])
            self._row = None
        elif tag == "table":
            self.in_tests = False

    def handle_data(self, data):
        if self._cell is not None:
            self._cell += data
        if self.h2 is not None:
            self.h2 += data


@pytest.fixture(scope="module")
def small_report():
    rng = np.random.default_rng(7)
    u = np.sqrt(1 / rng.gamma(3.0, 1.0, 2000))
    x = rng.uniform(0, 1, 2000)
    ds = uqviz.from_arrays(
        u * rng.standard_normal(2000) * (0.7 + 0.6 * x), u, features={"x": x}, name="small"
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return uqviz.report(
            ds, n_boot=300, n_mc=50, rng=0, progress=False, figures=False, remedy=False
        )


def test_report_json_separates_the_headline_from_the_further_diagnostics(small_report):
    n = small_report.numbers
    v = n["verdicts"]
    assert n["headline"]["tests"] == ["average", "consistency", "adaptivity:x"]
    assert n["further_diagnostics"]["tests"] == ["ENCE", "ZMSE", "CC", "coverage"]
    assert n["further_diagnostics"]["verdicts"] == {
        k: v[k]["verdict"] for k in ("ENCE", "ZMSE", "CC", "coverage")
    }
    assert {k for k, e in v.items() if e["headline"]} == set(n["headline"]["tests"])
    assert n["verdict"] == small_report.verdict == vd.headline(copy.deepcopy(v))["verdict"]
    assert small_report.headline == n["headline"]["sentence"]
    # the family is unchanged: the questions and ENCE, ZMSE, CC, Holm-adjusted together
    assert n["family"]["tests"] == ["average", "consistency", "adaptivity:x", "ENCE", "ZMSE", "CC"]
    # the conclusion: the questions first, the further diagnostics last
    further = n["further_diagnostics"]["conclusion"]
    assert small_report.conclusion[-len(further) :] == further
    assert further[0].startswith("Interval coverage") and further[-1].startswith("CC: ")
    assert small_report.conclusion[0].startswith("Average calibration: ")
    # the JSON holds both blocks
    import json

    doc = json.loads(small_report.to_json())
    assert doc["headline"]["verdict"] == n["verdict"] and "further_diagnostics" in doc


def test_html_opens_with_the_table_of_the_tests(small_report):
    n = small_report.numbers
    page = _Tables()
    page.feed(small_report.to_html())
    assert page.table_at is not None and page.conclusion_at is not None
    assert page.table_at < page.conclusion_at  # the answer is seen before it is read
    assert page.headers == ["test", "verdict", "rests on", "adjusted p", "reason"]
    assert page.group_rows == [
        "Calibration questions (the headline)",
        "Further diagnostics (their own words)",
    ]
    keys = [r["key"] for r in page.rows]
    assert keys == ["average", "consistency", "adaptivity:x", "ENCE", "ZMSE", "CC", "coverage"]
    cells = {r["key"]: r["cells"] for r in page.rows}
    v = n["verdicts"]
    for k, c in cells.items():
        assert len(c) == 5 and c[1] == v[k]["verdict"], (k, c)
    fmt = uqviz.reporting.wording.fmt
    a = v["average"]
    assert cells["average"][2] == (
        f"ZMS = {fmt(a['estimate'])} [{fmt(a['ci_lower'])}, {fmt(a['ci_upper'])}], reference 1"
    )
    c = v["consistency"]
    assert cells["consistency"][2].startswith(
        f"fv = {c['estimate']:.3f} in {c['n_bins']} bins; calibrated data "
        f"{c['reference']:.3f}, at least {c['reference_lower']:.3f}"
    )
    for k in ("average", "consistency", "adaptivity:x", "ENCE"):
        assert cells[k][3].startswith(
            f"{fmt(v[k]['p_adjusted'], '.2g')} (p = {fmt(v[k]['p_value'], '.2g')}; 6 tests)"
        ), cells[k]
    assert "not in the family" in cells["coverage"][3]
    assert cells["coverage"][2].startswith("PICP ")
    refs = v["ENCE"]["references"]
    assert set(refs) == {"normal", "t6"} and "simulated references" in cells["ENCE"][2]
    assert "adaptivity in x (beyond the uE effect)" == cells["adaptivity:x"][0]
    # the headline word is shown above the table
    word = n["verdict"]
    assert (
        f"Headline: <b><span class='v-{word.replace(' ', '-')}'>{word}</span></b>"
        in small_report.to_html()
    )
    # and the further diagnostics have their own section
    assert "<h2>Further diagnostics</h2>" in small_report.to_html()


def test_rests_on_says_when_the_tail_allowing_test_decided():
    from uqviz.reporting.render import _rests_on

    e = {
        "verdict": "unreliable",
        "statistic": "ZMS",
        "estimate": 1.12,
        "ci_lower": 1.01,
        "ci_upper": 1.3,
        "reference": 1.0,
        "heavy_tail": True,
        "tail_df": 4.4,
    }
    assert _rests_on("average", e) == (
        "ZMS = 1.12 [1.01, 1.3], reference 1; heavy tails: "
        "against calibrated Student-t z-scores with 4.4 "
        "degrees of freedom"
    )
    assert _rests_on("average", {**e, "heavy_tail": False}) == "ZMS = 1.12 [1.01, 1.3], reference 1"
    assert _rests_on("consistency", {"verdict": "not tested"}) == "&mdash;"
