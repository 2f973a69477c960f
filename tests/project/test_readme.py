"""Every Python block of the README and of the getting-started page runs (issue 38, item 8).

The blocks are executed in order, in one namespace per page (as a reader pastes them), in a
temporary working directory; the getting-started page's ``literalinclude`` of the README is
resolved to the README block it includes.
"""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FENCE = re.compile(r"^```python\n(.*?)^```", re.S | re.M)
INCLUDE = re.compile(r"^````\{literalinclude\} \.\./README\.md\n(.*?)^````", re.S | re.M)


def python_blocks(path):
    """The ``python`` fenced blocks of a Markdown page, with the README blocks it includes."""
    text = path.read_text()
    blocks = [(m.start(), m.group(1)) for m in FENCE.finditer(text)]
    readme = FENCE.findall((ROOT / "README.md").read_text())
    for m in INCLUDE.finditer(text):
        opts = m.group(1)
        assert ':start-after: "```python"' in opts, f"{path.name}: unexpected include {opts!r}"
        blocks.append((m.start(), readme[0]))
    return [code for _, code in sorted(blocks)]


def test_the_pages_have_python_blocks():
    assert len(python_blocks(ROOT / "README.md")) >= 2
    assert python_blocks(ROOT / "docs" / "getting_started.md")


@pytest.mark.parametrize("page", ["README.md", "docs/getting_started.md"])
def test_every_python_block_runs(page, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    namespace = {"__name__": "__readme__"}
    for i, code in enumerate(python_blocks(ROOT / page)):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(code, f"{page}[block {i}]", "exec"), namespace)  # noqa: S102
        if "print(" in code:
            assert out.getvalue().strip(), f"{page} block {i} printed nothing"
