"""The method papers are cited author-year, never by the number of their file.

The papers are Pernot (2024a), Pernot (2023), Pernot (2024c), Küppers et al. (2022) and
Pernot (2024b) (keys in docs/references.md). A citation by the number of a paper's file (two
zeros and a digit from 0 to 4, before "eq.", "Table", "Fig." or alone; a file name; a path to
the papers' folder) means nothing to a reader of uqviz, and neither does a 2024 paper of Pernot
cited without its letter: three appeared that year. Scanned: every text file of uqviz/,
tests/, docs/ and benchmarks/, and the cell sources of notebooks/.
"""

from __future__ import annotations

import json
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCANNED = ("uqviz", "tests", "docs", "notebooks", "benchmarks")
SUFFIXES = (".py", ".md", ".rst", ".txt", ".ipynb", ".html", ".css")

#: a paper's file number standing alone (not a digit group of "10 000", "0.002", "20_000"), a
#: paper's file name, or the papers' folder
FILE_NUMBER = re.compile(
    r"(?<![\w.,])(?<!\d[ \u00a0\u202f])00[0-4](?![\w]|\.\d)"
    r"|\b00[0-4]_[0-9a-f]{6}|papers?/00\d"
)
#: Pernot's 2024 papers without their letter
UNLETTERED = re.compile(r"Pernot,? \(?2024\)?(?![abc\d])")


def _texts():
    for top in SCANNED:
        for path in sorted((ROOT / top).rglob("*")):
            if (
                path.suffix in SUFFIXES
                and path.is_file()
                and ".ipynb_checkpoints" not in path.parts
            ):
                yield path


def _lines(path: pathlib.Path):
    text = path.read_text(errors="replace")
    if path.suffix == ".ipynb":
        text = "\n".join("".join(cell["source"]) for cell in json.loads(text)["cells"])
    return text.splitlines()


def _cited(lines, pattern) -> list[str]:
    return [
        f"line {i}: {line.strip()[:120]}" for i, line in enumerate(lines, 1) if pattern.search(line)
    ]


def _number(k: int, rest: str = "") -> str:
    """A file-number citation built at run time, so that this file holds none."""
    return f"{k:03d}{rest}"


@pytest.mark.parametrize(
    "text",
    [
        _number(2, " eq. 16"),
        f"({_number(4, ' Fig. 5')}, {_number(0, ' Fig. 3')})",
        f"paper {_number(4)}",
        f"papers {_number(0)}/{_number(4)}",
        _number(1, ": f_v = 0.61"),
        f"see {_number(3)}.",
        f"{_number(2)}_ec9840e4c0a3d752.txt",
        "ls shared/papers/0" + "02*",
    ],
)
def test_the_pattern_finds_file_numbers(text):
    assert FILE_NUMBER.search(text), text


@pytest.mark.parametrize(
    "text",
    [
        "tolerance 0.002",
        "20_000 points",
        "10 000 replicates",
        "20\u202f000",
        "color #004488",
        "2004",
        "x004",
        "Pernot (2024c) eq. 16",
    ],
)
def test_the_pattern_leaves_numbers_alone(text):
    assert not FILE_NUMBER.search(text), text


def test_unlettered_2024_is_found():
    year = "2024"  # the cited forms are built at run time, so that this file holds none
    assert UNLETTERED.search(f"Pernot ({year}), Table 1")
    assert UNLETTERED.search(f"(Pernot {year}, eq. 18)")
    assert not UNLETTERED.search("Pernot (2024a), Table 1")
    assert not UNLETTERED.search("Pernot 2024b, eq. 14")


def test_the_scan_sees_every_folder():
    tops = {path.relative_to(ROOT).parts[0] for path in _texts()}
    assert tops == set(SCANNED)


@pytest.mark.parametrize("path", list(_texts()), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_file_number_citation(path):
    lines = _lines(path)
    found = _cited(lines, FILE_NUMBER)
    assert not found, (
        f"{path.relative_to(ROOT)} cites a paper by file number (cite it "
        f"author-year, keys in docs/references.md): {found}"
    )
    found = _cited(lines, UNLETTERED)
    assert not found, (
        f"{path.relative_to(ROOT)}: a 2024 paper of Pernot without its letter "
        f"is ambiguous, say which: 2024a, 2024b or 2024c: {found}"
    )
