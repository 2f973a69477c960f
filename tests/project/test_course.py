"""The course reads in order: every technical term is defined or linked to the glossary where a
notebook first uses it, and every notebook ends by pointing to the next one (issue 21)."""

import json
import re
from pathlib import Path

import pytest

from tests.project.test_docs import anchors

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
GLOSSARY = ROOT / "docs" / "glossary.md"

# term -> (glossary anchor, pattern of a use in a notebook's text). A notebook's first use of a
# term must sit in a cell that links that glossary entry or defines the term in bold.
TERMS = {
    "ZMS": ("zms", r"\bZMS\b"),
    "RCE": ("rce", r"\bRCE\b"),
    "NLL": ("nll", r"\bNLL\b"),
    "BCa interval": ("bca-interval", r"\bBCa\b"),
    "second-order accurate": ("bca-interval", r"second[- ]order accura"),
    "z0": ("z0", r"\$z_0\$|\bz0\b"),
    "zeta-score": ("zeta-score", r"ζ-score|\\zeta\$-score|zeta-score"),
    "Wilson interval": ("binomial-interval", r"\bWilson\b"),
    "beta_GM": ("beta_gm", r"beta_\{?GM|β_GM"),
    "safety limits": ("safety-limits", r"safety limit"),
    "decimation": ("decimation", r"\bdecimation\b"),
    "validation probability": ("validation-probability", r"validation probability"),
    "Jensen's inequality": ("jensens-inequality", r"Jensen"),
    "LZMS": ("lzms", r"\bLZMS\b"),
    "LZM": ("lzm", r"\bLZM\b"),
    "LRCE": ("lrce", r"\bLRCE\b"),
    "f_v": ("f_v", r"\$f_v\$|\bf_v\b"),
    "Bartlett's approximation": ("bartletts-approximation", r"Bartlett"),
    "homoscedasticity": ("homoscedasticity", r"[Hh]omoscedastic"),
    "stratified binning": ("stratified-binning", r"stratified binning"),
    "ordering study": ("ordering-study", r"ordering study"),
    "ENCE": ("ence", r"\bENCE\b"),
    "ZMSE": ("zmse", r"\bZMSE\b"),
    "simulated reference": ("simulated-reference", r"simulated reference"),
    "Sim2": ("sim-and-sim2", r"\bSim2\b"),
    "MAE": ("mae", r"\bMAE\b"),
    "AUCO": ("auco", r"\bAUCO\b|`auco`"),
    "PICP": ("picp", r"\bPICP\b"),
    "CRPS": ("crps", r"\bCRPS\b"),
    "BVS": ("bvs", r"\bBVS\b"),
    "isotonic recalibration": ("isotonic-recalibration", r"[Ii]sotonic"),
    "cross-fitting": ("cross-fitting", r"cross-fit"),
    "reliable flag": ("reliable-flag", r"`reliable`"),
    "NEES": ("nees", r"\bNEES\b"),
    "zone of doubt": ("zone-of-doubt", r"zone of doubt"),
    "tail-allowing test": ("tail-allowing-test", r"tail-allowing test"),
    "tail_df": ("tail_df", r"\btail_df"),
}


def _markdown_cells(path):
    cells = json.loads(path.read_text())["cells"]
    return ["".join(c["source"]) for c in cells if c["cell_type"] == "markdown"]


def _uses(text):
    """The text where a term counts as used: prose without code blocks and link targets, and
    without the previews of what is to come (the learning objectives, the course map)."""
    if text.lstrip().startswith("## Map of the course"):
        return ""
    text = re.sub(r"\A\s*# [^\n]*", "", text)       # the notebook's title
    text = re.sub(r"\*\*Learning objectives.*?(?=\n\n(?![-*] )|\Z)", "", text, flags=re.S)
    return _prose(text)


def _prose(text):
    """Markdown without code blocks and link targets (a term inside a URL is no use)."""
    text = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
    return re.sub(r"\]\([^)]*\)", "]", text)


def test_term_anchors_exist_in_the_glossary():
    have = anchors(GLOSSARY)
    assert not [a for a, _ in TERMS.values() if a not in have]


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.stem)
def test_terms_are_defined_or_linked_where_first_used(notebook):
    cells = _markdown_cells(notebook)
    bad = []
    for term, (anchor, pattern) in TERMS.items():
        first = next((c for c in cells if re.search(pattern, _uses(c))), None)
        if first is None:
            continue
        linked = f"glossary.md#{anchor})" in first
        defined = re.search(r"\*\*[^*]*(" + pattern + r")[^*]*\*\*", first) is not None
        if not (linked or defined):
            bad.append(term)
    assert not bad, (f"{notebook.name}: first use without a glossary link or a bold "
                     f"definition in the same cell: {', '.join(bad)}")


# the order of the course, and the notebook each one must point to last
ORDER = [p.name for p in NOTEBOOKS]


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_notebook_ends_with_a_link_to_the_next(notebook):
    cells = _markdown_cells(notebook)
    last = cells[-1]
    assert re.match(r"\s*##+ (\d+\. )?(What|Where) next", last), (
        f"{notebook.name}: the last markdown cell is not a 'What next' section")
    i = ORDER.index(notebook.name)
    nxt = ORDER[i + 1] if i + 1 < len(ORDER) else ORDER[0]
    assert f"({nxt})" in last or f"({nxt}#" in last, f"{notebook.name}: no link to {nxt}"


def test_the_course_has_a_capstone():
    assert any(p.name.startswith("08_") for p in NOTEBOOKS)


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.name)
def test_every_cell_has_a_unique_id(notebook):
    """nbformat 4.5 requires cell ids (nbformat warns, and will refuse, when one is missing)."""
    nb = json.loads(notebook.read_text())
    assert (nb["nbformat"], nb["nbformat_minor"]) >= (4, 5)
    ids = [cell.get("id") for cell in nb["cells"]]
    assert None not in ids, f"{notebook.name}: cell {ids.index(None)} has no id"
    assert len(set(ids)) == len(ids), f"{notebook.name}: repeated cell ids"
