"""docs/architecture.md tells the truth about the package (issue 22, item 1).

- the layers it draws are those of the ``import`` statements: the block between its markers is
  what ``scripts/draw-layers`` computes from the code (read with ``ast``), every drawn arrow
  ``A ──► B`` (A imports B) exists, every real dependency between units is drawn, and the
  units form no cycle;
- every folder and top-level module of ``uqviz/`` has its paragraph in "The folders";
- ``_array/jit.py`` is the only module with an ``import numba`` statement;
- every built-in registered statistic is in the statistics table of the README.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import uqviz
from uqviz.engine.statistics import BUILTIN_STATISTICS

from tests.project.script_loader import load_script

ROOT = Path(__file__).resolve().parents[2]
PKG = Path(uqviz.__file__).parent
DOC = ROOT / "docs" / "architecture.md"


layers = load_script("draw-layers")


@pytest.fixture(scope="module")
def graph():
    return layers.import_graph(PKG)


@pytest.fixture(scope="module")
def drawn():
    return layers.parse_arrows(layers.generated_block(DOC.read_text()))


def test_the_scan_sees_every_unit_and_known_imports(graph):
    units = {layers.unit_of_path(p, PKG) for p in PKG.rglob("*.py")}
    assert set(graph) == units
    assert {"_array/", "engine/", "data/", "scores/", "datasets/", "cli.py", "__init__.py"} <= units
    # module-level and lazy (inside a function) imports both count
    assert "engine/" in graph["data/"] and "data/" not in graph["engine/"]
    assert "plots/" in graph["reporting/"]  # only inside functions of reporting/build.py
    assert graph["_array/"] == set()


def test_the_scan_resolves_imports(tmp_path):
    pkg = tmp_path / "uqviz"
    for rel, text in {
        "__init__.py": "from uqviz import a\n__version__ = '1'\n",
        "a/__init__.py": "from .m import f\n",
        "a/m.py": "def f():\n    from ..b import g\n    import uqviz.c\n",
        "b.py": "from uqviz import __version__\ng = 1\n",
        "c.py": '"""\n>>> import uqviz.a\n"""\n',
    }.items():
        (pkg / rel).parent.mkdir(parents=True, exist_ok=True)
        (pkg / rel).write_text(text)
    g = layers.import_graph(pkg)
    assert g == {
        "__init__.py": {"a/"},
        "a/": {"b.py", "c.py"},
        "b.py": {"__init__.py"},
        "c.py": set(),
    }  # the doctest of c.py is not an import
    with pytest.raises(ValueError, match="import cycle"):
        layers.levels(g)  # a/ -> b.py -> __init__.py -> a/


def test_the_drawing_is_generated_from_the_imports(graph):
    assert layers.generated_block(DOC.read_text()) == layers.draw(graph), (
        "docs/architecture.md: the layers differ from the imports; run "
        "python scripts/draw-layers --write (and say in 'The folders' why, if a new arrow "
        "goes against the layers)"
    )


def test_every_drawn_arrow_exists_and_every_import_is_drawn(graph, drawn):
    extra = {(a, b) for a, bs in drawn.items() for b in bs if b not in graph.get(a, ())}
    missing = {
        (a, b): layers.where_imported(a, b, PKG)
        for a, bs in graph.items()
        for b in bs
        if b not in drawn.get(a, ())
    }
    assert not extra, f"arrows drawn in docs/architecture.md that the code does not have: {extra}"
    assert not missing, f"imports not drawn in docs/architecture.md: {missing}"


def test_the_layers_have_no_cycle_and_arrows_point_down(graph):
    level = layers.levels(graph)
    up = [(a, b) for a, bs in graph.items() for b in bs if level[b] >= level[a]]
    assert not up
    assert level["_array/"] == 0 and level["engine/"] == 1


def _folder_paragraphs():
    text = DOC.read_text()
    section = text[text.index("## The folders") : text.index("## Where to add")]
    return [p for p in section.split("\n\n") if p.startswith("**")]


def test_every_unit_has_its_paragraph(graph):
    described = set()
    for para in _folder_paragraphs():
        lead = para[2 : para.index("**", 2)]
        described |= set(re.findall(r"`uqviz/([^`]+)`", lead))
    missing = sorted(set(graph) - described)
    assert not missing, f"units of uqviz/ without a paragraph in 'The folders': {missing}"
    stale = sorted(described - set(graph))
    assert not stale, f"paragraphs of 'The folders' about units that do not exist: {stale}"


def test_only_jit_imports_numba():
    found = []
    for path in PKG.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom) and not node.level
                else []
            )
            if any(n.split(".")[0] == "numba" for n in names):
                found.append(str(path.relative_to(PKG)))
    assert sorted(set(found)) == ["_array/jit.py"]


def test_the_readme_table_lists_every_builtin_statistic():
    readme = (ROOT / "README.md").read_text()
    table = readme[readme.index("## Statistics and their reference values") :]
    table = table[: table.index("\n\n", table.index("|---"))]
    names = set(re.findall(r"[A-Za-z_0-9]+", table))
    missing = [s for s in BUILTIN_STATISTICS if s not in names]
    assert not missing, f"statistics of the registry missing from the README table: {missing}"
