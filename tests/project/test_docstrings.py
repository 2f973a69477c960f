"""The numpydoc docstrings of the public analyses (issue 22, item 5).

Every function of ``uqviz.__all__`` that computes documents each parameter of its signature
with its own description (not only a pointer to docs/conventions.md), and has the sections
Returns, See Also, Notes (the formula, in ``.. math::``), References and Examples; every
author-year work it cites is a key of docs/references.md, and every See Also name is a real
uqviz object.
"""

from __future__ import annotations

import importlib
import inspect
import re
from pathlib import Path

import pytest
from numpydoc.docscrape import FunctionDoc

import uqviz

ROOT = Path(__file__).resolve().parents[2]
REFERENCES = ROOT / "docs" / "references.md"

#: the public analyses: uqviz.__all__ minus the data constructors, storage, the statistics
#: registry and converters (which compute nothing to validate)
NOT_ANALYSES = {
    "check_dataset",
    "from_arrays",
    "from_dataframe",
    "from_datasets",
    "from_estimator",
    "from_predictions",
    "read_csv",
    "get_statistic",
    "list_statistics",
    "load_study",
    "save_study",
    "stored_study",
    "qce_to_numpy",
}
#: and the functions of the statistics registry that compute a statistic or its reference
EXTRA = [
    "statistics.point_estimate",
    "statistics.reference_value",
    "statistics.excess_over_reference",
]
ANALYSES = (
    sorted(
        n for n in uqviz.__all__ if inspect.isfunction(getattr(uqviz, n)) and n not in NOT_ANALYSES
    )
    + EXTRA
)

#: an author-year citation: "Pernot (2024b)", "Levi et al. (2022)", "DiCiccio & Efron (1996)",
#: "Pernot (2023, BVS)"
CITATION = re.compile(
    r"((?:[A-Z][\w'\-]+|[A-Z][a-zö]+)(?: et al\.| & [A-Z][\w'\-]+)?)"
    r" \((\d{4}[a-z]?(?:, [A-Za-z]+)?)\)"
)
#: a description that only points elsewhere
POINTER = re.compile(
    r"^\s*(see|as in|as)\s+(docs/conventions\.md|:func:`[\w.]+`)[\s.;,]*$", re.IGNORECASE
)


def _reference_keys():
    keys = set()
    for line in REFERENCES.read_text().splitlines():
        m = re.match(r"\|\s*([^|]+?\(\d{4}[a-z]?(?:, [^)]+)?\))\s*\|", line)
        if m:
            keys.add(m.group(1))
    return keys


KEYS = _reference_keys()


def _function(name):
    obj = uqviz
    for part in name.split("."):
        obj = getattr(obj, part)
    return obj


def _doc(name):
    return FunctionDoc(_function(name))


def test_the_analyses_are_found():
    # a guard against an empty parametrisation: the list of the issue, at least
    expected = {
        "validate_average",
        "local_calibration",
        "fraction_valid",
        "binned_errors",
        "simulated_reference",
        "validate_simulated",
        "validate_with_references",
        "qce",
        "nees",
        "nees_test",
        "proper_scores",
        "interval_coverage",
        "calibration_curve",
        "fit_recalibration",
        "recalibrate",
        "decimation_curve",
        "extrapolate",
        "confidence_curve",
        "ordering_study",
        "running_statistics",
        "reliability",
        "validation_probability",
        "statistic_bias",
        "report",
    }
    assert expected <= set(ANALYSES)
    assert {
        "Pernot (2024b)",
        "Pernot (2023, BVS)",
        "DiCiccio & Efron (1996)",
        "Efron (1987)",
    } <= KEYS


def test_citation_pattern():
    text = (
        "Pernot (2024b), eq. 14; Levi et al. (2022); DiCiccio & Efron (1996) and "
        "Pernot (2023, BVS); Küppers et al. (2022)"
    )
    assert [" ".join(m.groups()) for m in CITATION.finditer(text)] == [
        "Pernot 2024b",
        "Levi et al. 2022",
        "DiCiccio & Efron 1996",
        "Pernot 2023, BVS",
        "Küppers et al. 2022",
    ]


@pytest.mark.parametrize("name", ANALYSES)
def test_parameters_match_the_signature(name):
    doc = _doc(name)
    documented = []
    for p in doc["Parameters"]:
        names = [n.strip().lstrip("*") for n in p.name.split(",")]
        assert len(names) == 1, f"{name}: parameters documented together: {p.name}"
        documented.append(names[0])
        text = " ".join(p.desc).strip()
        assert text, f"{name}: parameter {p.name} has no description"
        assert not POINTER.match(text), f"{name}: {p.name} is only a pointer: {text!r}"
        assert len(text.split()) >= 3, f"{name}: {p.name}: {text!r} is not a sentence"
    signature = [p for p in inspect.signature(_function(name)).parameters]
    assert len(documented) == len(set(documented)), f"{name}: a parameter documented twice"
    assert set(documented) == set(signature), (
        f"{name}: undocumented {sorted(set(signature) - set(documented))}, "
        f"not in the signature {sorted(set(documented) - set(signature))}"
    )


@pytest.mark.parametrize("name", ANALYSES)
def test_sections_present(name):
    doc = _doc(name)
    for section in ("Returns", "See Also", "Notes", "References", "Examples"):
        assert doc[section], f"{name}: no {section} section"
    notes = "\n".join(doc["Notes"])
    assert ":math:" in notes or ".. math::" in notes, f"{name}: Notes hold no formula"


@pytest.mark.parametrize("name", ANALYSES)
def test_references_are_keys_of_the_references_page(name):
    doc = _doc(name)
    refs = " ".join(" ".join(doc["References"]).split())
    cited = {f"{a} ({y})" for a, y in CITATION.findall(refs)}
    assert cited, f"{name}: the References section cites no author-year work"
    assert cited <= KEYS, f"{name}: not in docs/references.md: {sorted(cited - KEYS)}"
    assert ":doc:`/docs/references`" in refs
    # every work cited anywhere in the docstring is a key too, and is listed in References
    everywhere = {
        f"{a} ({y})" for a, y in CITATION.findall(" ".join(_function(name).__doc__.split()))
    }
    assert everywhere <= KEYS, f"{name}: not in docs/references.md: {sorted(everywhere - KEYS)}"


def _resolve(dotted):
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for attr in parts[i:]:
            obj = getattr(obj, attr)
        return obj
    raise ImportError(dotted)


@pytest.mark.parametrize("name", ANALYSES)
def test_see_also_names_resolve(name):
    doc = _doc(name)
    for funcs, _desc in doc["See Also"]:
        for target, _role in funcs:
            assert target.startswith("uqviz."), f"{name}: See Also {target} is not qualified"
            obj = _resolve(target)
            assert callable(obj), f"{name}: See Also {target} is not callable"
            assert obj is not _function(name), f"{name}: See Also names itself"
