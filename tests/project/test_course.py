"""The course reads in order: every technical term is defined or linked to the glossary where a
notebook first uses it, and every notebook ends by pointing to the next one (issue 21)."""

import csv
import json
import math
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
    text = re.sub(r"\A\s*# [^\n]*", "", text)  # the notebook's title
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
    assert not bad, (
        f"{notebook.name}: first use without a glossary link or a bold "
        f"definition in the same cell: {', '.join(bad)}"
    )


# the order of the course, and the notebook each one must point to last
ORDER = [p.name for p in NOTEBOOKS]


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_notebook_ends_with_a_link_to_the_next(notebook):
    cells = _markdown_cells(notebook)
    last = cells[-1]
    assert re.match(r"\s*##+ (\d+\. )?(What|Where) next", last), (
        f"{notebook.name}: the last markdown cell is not a 'What next' section"
    )
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


# -------------------------------------------------------------------------------------------
# the executed notebooks (issue 37): tests/project/course/test_NN_*.py execute each notebook
# once (tests/project/course_run.py) and call the three checks below on what it printed and
# drew; the tests here check the checks, and that every notebook has its execution module
# -------------------------------------------------------------------------------------------
QUOTES = ROOT / "tests" / "project" / "course_quotes"
EXECUTION_MODULES = ROOT / "tests" / "project" / "course"


def _output_texts(cell):
    """The text a reader sees in a code cell's outputs: streams, text/plain, text/html,
    text/markdown and error messages."""
    texts = []
    for out in cell.get("outputs", []):
        if out.get("output_type") == "stream":
            texts.append(_joined(out.get("text", "")))
        elif out.get("output_type") == "error":
            texts.append(f"{out.get('ename')}: {out.get('evalue')}")
            texts.extend(_joined(t) for t in out.get("traceback", []))
        for mime in ("text/plain", "text/html", "text/markdown"):
            if mime in out.get("data", {}):
                texts.append(_joined(out["data"][mime]))
    return texts


def _joined(text):
    return "".join(text) if isinstance(text, list) else str(text)


def quoted_number_failures(stem, nb):
    """What is wrong with the numbers the text of notebook ``stem`` quotes, as listed in
    ``tests/project/course_quotes/<stem>.json`` (``{"<markdown cell id>": ["0.031", ...]}``):
    each string must appear verbatim in that markdown cell and in the text outputs of a code cell
    of the executed notebook ``nb``. None when the notebook has no such file."""
    path = QUOTES / f"{stem}.json"
    if not path.exists():
        return None
    quotes = json.loads(path.read_text())
    cells = {c.get("id"): c for c in nb["cells"]}
    printed = "\n".join(
        t for c in nb["cells"] if c["cell_type"] == "code" for t in _output_texts(c)
    )
    bad = []
    for cell_id, numbers in quotes.items():
        cell = cells.get(cell_id)
        if cell is None or cell["cell_type"] != "markdown":
            bad.append(f"{stem}: no markdown cell with id {cell_id!r}")
            continue
        text = _joined(cell["source"])
        for number in numbers:
            if number not in text:
                bad.append(f"{stem}, cell {cell_id}: the text does not quote {number!r}")
            if number not in printed:
                bad.append(f"{stem}, cell {cell_id}: {number!r} is quoted but no cell prints it")
    return bad


def _cell_of(record, nb):
    """(index, id) of the code cell whose source drew the figure of ``record``."""
    for i, cell in enumerate(nb["cells"]):
        if cell["cell_type"] == "code" and _joined(cell["source"]) == record.get("source"):
            return i, cell.get("id")
    return None, None


def figure_failures(records, nb):
    """What is wrong with the figures of an executed notebook (records written by the setup cell
    of tests/project/course_run.py): an axes with data and no x or y label (a label on an axes it
    shares that axis with, or on an axes of the same row or column with the same limits, and the
    figure's supxlabel/supylabel count; an axis with named ticks, such as set or method names, is
    labelled by them; colorbars, insets and axes drawn without axis are not checked), a legend
    label repeated within one legend, a legend over the data (its box against the plotted
    points, lines, areas and bars in display coordinates, inside the axes), an error while
    inspecting a figure."""
    bad = []
    for k, rec in enumerate(records):
        i, cell_id = _cell_of(rec, nb)
        where = f"cell {i} (id {cell_id}), figure {k}"
        if "error" in rec:
            bad.append(f"{where}: could not be inspected: {rec['error']}")
            continue
        for ax in rec["axes"]:
            name = f"{where}, axes {ax['index']} {ax['title']!r}"
            if ax["kind"] == "axes" and ax["has_data"]:
                for axis in ("x", "y"):
                    if not (
                        ax[f"{axis}label"].strip()
                        or ax[f"{axis}label_shared"]
                        or ax.get(f"{axis}_categorical")
                    ):
                        bad.append(f"{name}: no {axis} label")
            labels = [t for t in ax.get("legend", []) if t.strip()]
            dup = sorted({t for t in labels if labels.count(t) > 1})
            if dup:
                bad.append(f"{name}: legend labels repeated: {dup}")
            if ax.get("legend_over"):
                bad.append(f"{name}: the legend lies over the data: {ax['legend_over']}")
        for leg in rec.get("figure_legends", []):
            labels = [t for t in leg["labels"] if t.strip()]
            dup = sorted({t for t in labels if labels.count(t) > 1})
            if dup:
                bad.append(f"{where}, figure legend: labels repeated: {dup}")
            if leg["over"]:
                bad.append(f"{where}, figure legend: lies over the data: {leg['over']}")
    return bad


#: what an executed output must not hold: a path of the machine that ran it, a progress bar
#: frozen in its first state (tqdm's text), the location and source line of a warning
OUTPUT_PATTERNS = {
    "a machine path": re.compile(r"/home/|/work/|site-packages|/tmp/|/Users/"),
    "a frozen progress bar": re.compile(
        r"\d+%\|[^|\n]{0,80}\| *\d+/\d+|\d+/\d+ \[\d\d:\d\d|[\d.?]+ ?(?:it/s|s/it)\]"
    ),
    "a warning's source line": re.compile(r"^\s*warnings\.warn\(|\.py:\d+: \w*Warning", re.M),
}


def output_failures(nb):
    """Which code cells of an executed notebook hold a machine path, a frozen progress bar or a
    warning's source line in their outputs."""
    bad = []
    for i, cell in enumerate(nb["cells"]):
        if cell["cell_type"] != "code":
            continue
        for text in _output_texts(cell):
            for what, pattern in OUTPUT_PATTERNS.items():
                m = pattern.search(text)
                if m:
                    line = text[max(0, m.start() - 60) : m.end() + 60].replace("\n", "\\n")
                    bad.append(f"cell {i} (id {cell.get('id')}): {what}: ...{line}...")
    return sorted(set(bad))


def test_every_notebook_is_executed_by_its_own_module():
    """One execution module per notebook (tests/project/course/test_<stem>.py), so that xdist's
    --dist loadfile gives each notebook to a worker of its own."""
    have = {p.stem.removeprefix("test_") for p in EXECUTION_MODULES.glob("test_*.py")}
    assert have == {p.stem for p in NOTEBOOKS}
    for path in EXECUTION_MODULES.glob("test_*.py"):
        assert f'NOTEBOOK = "{path.stem.removeprefix("test_")}"' in path.read_text(), path.name


def test_every_quote_file_names_a_notebook():
    assert {p.stem for p in QUOTES.glob("*.json")} <= {p.stem for p in NOTEBOOKS}


def test_the_output_check_sees_what_it_must():
    frozen = "  0%|          | 0/5 [00:00<?, ?it/s]"
    warning = "/home/u/uqviz/engine/tree.py:96: UnreliableWarning: z0 is large\n  warnings.warn(\n"
    cell = {
        "cell_type": "code",
        "id": "c",
        "outputs": [
            {"output_type": "stream", "name": "stderr", "text": warning},
            {"output_type": "display_data", "data": {"text/plain": frozen}},
        ],
    }
    bad = output_failures({"cells": [cell]})
    assert [b.split(": ")[1] for b in bad] == sorted(
        ["a frozen progress bar", "a machine path", "a warning's source line"]
    )
    clean = {
        "cell_type": "code",
        "id": "c",
        "outputs": [
            {"output_type": "stream", "name": "stderr", "text": "UnreliableWarning: z0 is large\n"},
            {"output_type": "execute_result", "data": {"text/plain": "f_v = 0.95 | 19/20 bins"}},
        ],
    }
    assert output_failures({"cells": [clean]}) == []


def test_the_figure_check_sees_what_it_must():
    rec = {
        "source": "x",
        "axes": [
            {
                "index": 0,
                "kind": "axes",
                "title": "t",
                "has_data": True,
                "xlabel": "x",
                "ylabel": "",
                "xlabel_shared": True,
                "ylabel_shared": False,
                "legend": ["a", "a", "b"],
                "legend_over": ["Line2D 'a' (line)"],
            },
            {
                "index": 1,
                "kind": "colorbar",
                "title": "",
                "has_data": True,
                "xlabel": "",
                "ylabel": "",
                "xlabel_shared": False,
                "ylabel_shared": False,
            },
        ],
    }
    bad = figure_failures([rec], {"cells": [{"cell_type": "code", "id": "f", "source": "x"}]})
    assert len(bad) == 3 and all(b.startswith("cell 0 (id f), figure 0, axes 0") for b in bad)


# -------------------------------------------------------------------------------------------
# run times (issue 37): one measured table, quoted the same everywhere
# -------------------------------------------------------------------------------------------
#: written by scripts/run-notebooks (full mode) and scripts/run-notebooks --fast
TIMES = ROOT / "benchmarks" / "results" / "notebook_times.csv"
COURSE_PAGE = ROOT / "docs" / "course.md"
#: a duration in prose: "35 s", "45 to 60 s", "1.5 min", "2 minutes"
DURATION = re.compile(r"\b\d+(?:\.\d+)?(?:\s*(?:to|–|-)\s*\d+(?:\.\d+)?)?\s*(?:s|min|minutes?)\b")


def quoted_seconds(seconds):
    """The convention of every run time the course states: "about N s", N the measured time of
    the table rounded to the nearest 5 s, at least 5 (22.6 s -> "about 25 s")."""
    return max(5, int(math.floor(float(seconds) / 5 + 0.5)) * 5)


def _times():
    with TIMES.open() as f:
        return {(r["notebook"], r["mode"]): quoted_seconds(r["seconds"]) for r in csv.DictReader(f)}


def test_the_quoting_convention():
    assert [quoted_seconds(s) for s in (1.2, 6.4, 7.4, 7.5, 22.6, 38.3, 53.2, 118)] == [
        5,
        5,
        5,
        10,
        25,
        40,
        55,
        120,
    ]


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_notebook_has_measured_run_times(notebook):
    times = _times()
    missing = [mode for mode in ("full", "fast") if (notebook.stem, mode) not in times]
    assert not missing, (
        f"{notebook.stem} ({', '.join(missing)} mode) is not in {TIMES.name}: "
        "run scripts/run-notebooks (--fast)"
    )


def _claim(stem, times):
    full, fast = times.get((stem, "full")), times.get((stem, "fast"))
    return full, fast


def test_the_course_map_quotes_the_table():
    """Notebook 00's map: the last column of each notebook's row is "about F s / about f s"."""
    times = _times()
    cells = {
        c.get("id"): "".join(c["source"])
        for c in json.loads((ROOT / "notebooks" / "00_index.ipynb").read_text())["cells"]
    }
    table = cells["map-1"]
    bad = []
    for path in NOTEBOOKS:
        row = next(
            (
                line
                for line in table.splitlines()
                if line.startswith(f"| [{path.stem[:2]}]({path.name})")
            ),
            None,
        )
        full, fast = _claim(path.stem, times)
        if full is None or fast is None:
            continue  # not measured: test_every_notebook_has_measured_run_times
        want = f"about {full} s / about {fast} s"
        if row is None or row.rstrip(" |").rsplit("|", 1)[-1].strip() != want:
            bad.append(f"{path.stem}: {want!r} expected")
    assert not bad, "the map of notebook 00 does not quote notebook_times.csv: " + "; ".join(bad)


def test_the_course_page_quotes_the_table():
    """docs/course.md, "Run times": | NN | about F s | about f s | ... |."""
    times = _times()
    section = COURSE_PAGE.read_text().split("## Run times", 1)[1].split("\n#", 1)[0]
    rows = {
        line.split("|")[1].strip(): [c.strip() for c in line.split("|")[2:4]]
        for line in section.splitlines()
        if re.match(r"\| \d\d \|", line)
    }
    bad = []
    for path in NOTEBOOKS:
        full, fast = _claim(path.stem, times)
        if full is None or fast is None:
            continue  # not measured: test_every_notebook_has_measured_run_times
        if rows.get(path.stem[:2]) != [f"about {full} s", f"about {fast} s"]:
            bad.append(
                f"{path.stem}: {rows.get(path.stem[:2])} instead of about {full} s, about {fast} s"
            )
    assert not bad, "; ".join(bad)


def _sentences(text):
    return [s for s in re.split(r"(?<=[.;])\s+(?=[A-Z(*])", re.sub(r"\s+", " ", text)) if s]


def _is_claim(sentence):
    """A sentence that states how long the notebook runs: it speaks of a mode or of the whole
    notebook, and not of one cell or of recomputing the stored studies."""
    return (
        re.search(r"\bmodes?\b|whole notebook", sentence) is not None
        and re.search(r"\bcells?\b|stud(y|ies)|recompute", sentence) is None
    )


@pytest.mark.parametrize(
    "notebook", [p for p in NOTEBOOKS if not p.name.startswith("00_")], ids=lambda p: p.stem
)
def test_each_notebook_quotes_the_table(notebook):
    """Notebooks 01-10 state their run time in a paragraph "**Run time:** about F s in full mode
    ... about f s in fast mode" (in the header; notebook 05, an app, in its *About* section), with
    the table's numbers; no other sentence of that cell that speaks of a mode, and no sentence of
    the notebook about the whole notebook, states another run time (a sentence about a cell or
    about recomputing the stored studies is not about the notebook's run time; the "Run time:"
    lines before the heavy cells are about those cells)."""
    full, fast = _claim(notebook.stem, _times())
    assert full is not None and fast is not None, (
        f"{notebook.name}: no measured run time in the table (scripts/run-notebooks)"
    )
    cells = _markdown_cells(notebook)
    home, para = next(
        ((c, p) for c in cells for p in c.split("\n\n") if p.lstrip().startswith("**Run time")),
        ("", ""),
    )
    assert para, f"{notebook.name}: no '**Run time' paragraph"
    flat = re.sub(r"\s+", " ", para)
    assert f"about {full} s in full mode" in flat, f"{notebook.name}: 'about {full} s in full mode'"
    assert f"about {fast} s in fast mode" in flat, f"{notebook.name}: 'about {fast} s in fast mode'"
    allowed = {f"{full} s", f"{fast} s"}
    claims = [s for s in _sentences(home) if _is_claim(s)]
    claims += [s for c in cells for s in _sentences(c) if "whole notebook" in s]
    bad = [s for s in claims if any(d not in allowed for d in DURATION.findall(s))]
    assert not bad, f"{notebook.name}: run times other than the table's: {bad}"
