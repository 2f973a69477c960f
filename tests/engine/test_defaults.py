"""The defaults table is one mapping (issue 22, item 4): uqviz.engine.defaults.DEFAULTS.

Every public signature default of a documented parameter equals the mapping's value (with its
type: 20 is not 20.0, True is not 1), every row names existing functions, and the "Defaults"
table of docs/conventions.md is exactly the table written from the mapping.
"""

from __future__ import annotations

import inspect
import pathlib
import re

import pytest

from tests.contract.test_contract import PUBLIC
from uqviz.engine import defaults
from uqviz.engine.defaults import DEFAULTS, EVERY, UNDOCUMENTED, signature_default

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _short(qual):
    return qual.rsplit(".", 1)[1]


def _same(a, b):
    if isinstance(a, range) or isinstance(b, range):
        return a == b
    return a == b and type(a) is type(b)


def _signature(obj):
    try:
        return inspect.signature(obj).parameters
    except (TypeError, ValueError):
        return {}


@pytest.mark.parametrize("qual", sorted(PUBLIC))
def test_signature_defaults_follow_the_mapping(qual):
    name = _short(qual)
    bad = []
    for param, p in _signature(PUBLIC[qual]).items():
        if param not in defaults.documented() or p.default is inspect.Parameter.empty:
            continue
        expected = signature_default(name, param)
        if expected is UNDOCUMENTED:
            bad.append(
                f"{param}={p.default!r} is not in the defaults table "
                "(uqviz.engine.defaults.DEFAULTS)"
            )
        elif not _same(p.default, expected):
            bad.append(f"{param}={p.default!r} (the table: {expected!r})")
    assert not bad, f"{qual}: " + "; ".join(bad)


def test_every_row_names_public_functions_with_that_parameter():
    by_name = {}
    for qual, obj in PUBLIC.items():
        by_name.setdefault(_short(qual), []).append(_signature(obj))
    stale = []
    for row in DEFAULTS:
        for func in row.values:
            if func == EVERY:
                continue
            if not any(row.parameter in sig for sig in by_name.get(func, [])):
                stale.append(f"{func}({row.parameter}=...)")
    assert not stale, f"rows of DEFAULTS that match no public parameter: {stale}"


def test_the_defaults_the_issue_found_missing_are_documented():
    # issue 22, item 4: these were in neither the table nor the contract test
    assert signature_default("report", "n_mc") == 2000
    assert signature_default("size_dependence", "n_mc") == 5000
    assert signature_default("confidence_curve", "n_boot") == 1000
    text = defaults.markdown_table()
    for words in ("2 000 (`report`)", "5 000 (`size_dependence`)", "1 000 for `confidence_curve`"):
        assert words in text


def test_n_bins_none_has_one_meaning_per_family():
    import uqviz

    rows = [r for r in DEFAULTS if r.parameter == "n_bins"]
    local = next(r for r in rows if "local_calibration" in r.values)
    binned = next(r for r in rows if "binned_errors" in r.values)
    assert "sqrt(M)" in local.default and binned.default.endswith(": 20")
    # the binned family: None everywhere, 20 recorded
    ds = uqviz.synthetic.nig(2000, nu=8, rng=0)
    assert uqviz.binned_errors(ds).attrs["n_bins"] == 20
    assert uqviz.binned_errors(ds, n_bins=None).attrs["n_bins"] == 20
    ref = uqviz.simulated_reference(ds, statistic="ENCE", n_mc=20, rng=0, progress=False)
    assert ref.attrs["n_bins"] == 20
    assert float(uqviz.binned_errors(ds, statistics=("ENCE",))["estimate"].item()) == pytest.approx(
        float(uqviz.statistics.point_estimate("ENCE", ds["E"].values, ds["uE"].values)), rel=1e-12
    )
    # the local family: the resolved number min(round(sqrt(M)), M // 100) = 20 is recorded
    loc = uqviz.local_calibration(ds, n_boot=200, n_mc=0, rng=0)
    assert loc.attrs["n_bins"] == loc.sizes["bin"] == min(round(2000**0.5), 2000 // 100)


def _conventions_table():
    text = (ROOT / "docs" / "conventions.md").read_text()
    section = text.split("\n## Defaults\n", 1)[1]
    lines = [ln for ln in section.strip().splitlines()]
    table = []
    for ln in lines:
        if not ln.startswith("|"):
            if table:
                break
            continue
        table.append(ln)
    return "\n".join(table)


def test_the_conventions_table_is_the_mapping():
    assert _conventions_table() == defaults.markdown_table(), (
        "docs/conventions.md's Defaults table differs from uqviz.engine.defaults.DEFAULTS: "
        "write it with `python -m uqviz.engine.defaults`"
    )


def test_the_table_names_every_documented_parameter():
    table = _conventions_table()
    for param in defaults.documented():
        assert re.search(rf"`{param}`", table), param
