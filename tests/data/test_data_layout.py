"""The layout of ``uqviz/data``, read from the source with ``ast`` (docs/architecture.md).

- ``model.py`` is the dataset model: what a dataset is, the bad-input rules, ``check_dataset``;
  it imports no other module of ``uqviz.data`` (neither the constructors nor the readers);
- ``constructors.py`` builds datasets (``from_arrays``, ``from_dataframe``, ``from_datasets``)
  on the model; ``readers.py`` reads files (``read_csv``) through the constructors (and
  ``from_predictions`` for a forecast given as quantiles, samples or an interval);
- ``readers.py`` is the only module of ``uqviz/data`` that opens a file (the literature sets of
  ``datasets/`` read their own cached downloads);
- each function is defined once, and no function of these modules is long.
"""

from __future__ import annotations

import ast
import importlib
import pathlib

import pytest

import uqviz
import uqviz.data

DATA = pathlib.Path(uqviz.data.__file__).parent
SPLIT = ("model", "constructors", "readers")
#: what each module may import of uqviz.data (besides itself)
ALLOWED_DATA_IMPORTS = {
    "model": set(),
    "constructors": {"model", "targets"},
    "readers": {"constructors", "model", "predictions"},
}
#: where each public function of the split lives
HOME = {
    "check_dataset": "model",
    "z_scores": "model",
    "from_arrays": "constructors",
    "from_dataframe": "constructors",
    "from_datasets": "constructors",
    "read_csv": "readers",
}
#: calls that open a file (by the called attribute or name)
OPENERS = {
    "open",
    "read_csv",
    "read_table",
    "read_excel",
    "read_parquet",
    "read_text",
    "read_bytes",
    "open_dataset",
    "open_datatree",
    "load_dataset",
    "fromfile",
    "loadtxt",
    "genfromtxt",
    "load",
}
#: the most logical lines (lines where a statement starts, the def line included, the docstring
#: left out) a function of these modules may have: a measure the formatter does not change (ruff
#: format spreads one call over several physical lines); 25 held the 30 physical lines of the
#: dense style before it
MAX_LINES = 25


def _tree(name: str) -> ast.Module:
    return ast.parse((DATA / f"{name}.py").read_text(), f"{name}.py")


def _data_imports(name: str) -> set[str]:
    """The sibling modules of ``uqviz.data`` that ``data/<name>.py`` imports, lazy ones too."""
    found = set()
    for node in ast.walk(_tree(name)):
        modules = []
        if isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            modules = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        for module in modules:
            parts = module.split(".")
            if parts[:2] == ["uqviz", "data"] and len(parts) > 2 and parts[2] != name:
                found.add(parts[2])
    return found


def _opened(path: pathlib.Path) -> list[str]:
    """``"line: call"`` of every call in ``path`` whose name says it opens a file."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Call):
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if called in OPENERS:
                out.append(f"{node.lineno}: {ast.unparse(func)}")
    return out


def _functions(name: str) -> list[ast.FunctionDef]:
    return [n for n in ast.walk(_tree(name)) if isinstance(n, ast.FunctionDef)]


def _code_lines(fn: ast.FunctionDef) -> int:
    body = fn.body[1:] if ast.get_docstring(fn, clean=False) is not None else fn.body
    starts = {n.lineno for part in body for n in ast.walk(part) if isinstance(n, ast.stmt)}
    return len(starts) + 1  # the def line


@pytest.mark.parametrize("name", SPLIT)
def test_each_module_imports_only_the_layers_below(name):
    assert _data_imports(name) <= ALLOWED_DATA_IMPORTS[name], (
        f"data/{name}.py imports {sorted(_data_imports(name) - ALLOWED_DATA_IMPORTS[name])} "
        "of uqviz.data: the model knows no constructor, the constructors no reader"
    )


def test_the_model_imports_neither_constructors_nor_readers():
    assert not _data_imports("model") & {"constructors", "readers"}
    # the scan sees an import of a sibling module
    assert "model" in _data_imports("readers") and "constructors" in _data_imports("readers")


def test_only_the_readers_open_files():
    openers = {p.name: _opened(p) for p in sorted(DATA.glob("*.py"))}
    assert openers["readers.py"], "the scan must see read_csv open its file"
    others = {k: v for k, v in openers.items() if v and k != "readers.py"}
    assert not others, f"modules of uqviz/data other than readers.py open files: {others}"


@pytest.mark.parametrize("function", HOME)
def test_each_public_function_lives_in_its_module(function):
    module = importlib.import_module(f"uqviz.data.{HOME[function]}")
    obj = getattr(module, function)
    assert obj.__module__ == module.__name__
    assert getattr(uqviz, function) is obj and getattr(uqviz.data, function) is obj
    assert function in module.__all__


def test_each_function_is_defined_once():
    names = {}
    for name in SPLIT + ("predictions",):
        for fn in _functions(name):
            if not fn.name.startswith("__"):
                names.setdefault(fn.name, []).append(name)
    twice = {fn: where for fn, where in names.items() if len(where) > 1}
    assert not twice, f"functions defined in more than one module of uqviz.data: {twice}"


@pytest.mark.parametrize("name", SPLIT + ("predictions",))
def test_functions_are_short(name):
    long = {fn.name: _code_lines(fn) for fn in _functions(name) if _code_lines(fn) > MAX_LINES}
    assert not long, (
        f"data/{name}.py: functions longer than {MAX_LINES} lines of code "
        f"(docstring left out): {long}; cut them by step"
    )


def test_the_line_count_leaves_out_the_docstring():
    fn = ast.parse('def f():\n    """Doc.\n\n    More.\n    """\n    return 1\n').body[0]
    assert _code_lines(fn) == 2  # the def line and the return


def test_the_line_count_is_the_same_however_a_call_is_wrapped():
    dense = ast.parse("def f(a):\n    x = g(a, 1,\n          2)\n    return x\n").body[0]
    spread = ast.parse(
        "def f(a):\n    x = g(\n        a,\n        1,\n        2,\n    )\n    return x\n"
    )
    assert _code_lines(dense) == _code_lines(spread.body[0]) == 3
