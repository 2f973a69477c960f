"""The package layout, read from the source with ``ast`` (docs/architecture.md).

- the kernel layer ``uqviz/_array`` imports nothing of uqviz outside itself;
- no module uses a private name (``_name``) of another module: neither
  ``from uqviz.x import _name`` nor ``module._name`` on an imported uqviz module or object.
  a module its siblings share is imported under a public name (``from uqviz.quantile import
  inputs``, never ``import _inputs``); names *from* a private module (``plots/_style.py``,
  ``_array/``) may be imported by its own package only;
- the public namespaces ``uqviz.datasets``, ``.synthetic``, ``.generative``, ``.statistics``
  are real modules that re-export their implementation (no ``sys.modules`` aliasing).
"""

from __future__ import annotations

import ast
import importlib
import pathlib

import pytest

import uqviz

PKG = pathlib.Path(uqviz.__file__).parent
MODULES = sorted(PKG.rglob("*.py"))

#: (module, "line text") of private uses that cannot be avoided, each with the reason.
#: Empty: add an entry only with a comment saying why a public helper will not do.
ALLOWED_PRIVATE: dict[tuple[str, str], str] = {}


def module_name(path: pathlib.Path) -> str:
    parts = list(path.relative_to(PKG.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _package_of(path: pathlib.Path) -> str:
    name = module_name(path)
    return name if path.name == "__init__.py" else name.rpartition(".")[0]


def _absolute(path: pathlib.Path, node: ast.ImportFrom) -> str:
    """The module a ``from ... import`` names, relative imports resolved."""
    if node.level == 0:
        return node.module or ""
    base = _package_of(path).split(".")
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _inside(package: str, parent: str) -> bool:
    return package == parent or package.startswith(parent + ".")


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def uqviz_imports(path: pathlib.Path):
    """(line, imported module or object path) of every uqviz import, lazy ones included."""
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "uqviz":
                    yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            source = _absolute(path, node)
            if source.split(".")[0] == "uqviz":
                for alias in node.names:
                    yield node.lineno, f"{source}.{alias.name}"


def _is_module(dotted: str) -> bool:
    return (PKG.parent / dotted.replace(".", "/")).with_suffix(".py").exists() or (
        PKG.parent / dotted.replace(".", "/") / "__init__.py"
    ).exists()


def private_uses(path: pathlib.Path, source: str | None = None):
    """(line, text) of every use of another module's private name in ``path`` (or ``source``)."""
    me, package = module_name(path), _package_of(path)
    tree = ast.parse(path.read_text() if source is None else source, str(path))
    bound = {}  # local name -> the uqviz module or object it is bound to
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "uqviz":
                    bound[alias.asname or "uqviz"] = alias.name if alias.asname else "uqviz"
        elif isinstance(node, ast.ImportFrom):
            source = _absolute(path, node)
            if source.split(".")[0] != "uqviz":
                continue
            for alias in node.names:
                target = f"{source}.{alias.name}"
                bound[alias.asname or alias.name] = target
                if _private(alias.name) and source != me:
                    # a private name, a private module of the own package included: a module
                    # shared by its siblings gets a public name (``quantile/inputs.py``)
                    found.append((node.lineno, f"from {source} import {alias.name}"))
            # a name imported from a private module outside its package
            for owner in _private_modules(source):
                if not _inside(package, owner.rpartition(".")[0]):
                    found.append((node.lineno, f"from {source} import ... (private {owner})"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _private(node.attr):
            chain, value = [node.attr], node.value
            while isinstance(value, ast.Attribute):
                chain.append(value.attr)
                value = value.value
            if isinstance(value, ast.Name) and value.id in bound:
                target = ".".join([bound[value.id], *reversed(chain)])
                if _is_module(target) and _inside(package, target.rpartition(".")[0]):
                    continue  # a private module of this module's own package
                found.append((node.lineno, f"{value.id}.{'.'.join(reversed(chain))}"))
    return [(line, text) for line, text in found if (me, text) not in ALLOWED_PRIVATE]


def _private_modules(dotted: str):
    """The private packages or modules along a dotted module path (``uqviz.plots._style``)."""
    parts = dotted.split(".")
    return [".".join(parts[: i + 1]) for i, p in enumerate(parts) if _private(p)]


def test_the_scan_sees_the_package():
    names = {module_name(p) for p in MODULES}
    assert {"uqviz", "uqviz._array.resample", "uqviz.data.model", "uqviz.datasets"} <= names
    assert len(MODULES) > 60


@pytest.mark.parametrize(
    "path",
    [p for p in MODULES if "_array" in p.relative_to(PKG).parts],
    ids=lambda p: str(p.relative_to(PKG)),
)
def test_kernels_import_nothing_above_them(path):
    above = [
        (line, name)
        for line, name in uqviz_imports(path)
        if not (name == "uqviz._array" or name.startswith("uqviz._array."))
    ]
    assert not above, f"{path.relative_to(PKG)} reaches up out of uqviz/_array: {above}"


def test_no_private_name_crosses_modules():
    bad = {str(p.relative_to(PKG)): uses for p in MODULES for uses in [private_uses(p)] if uses}
    assert not bad, (
        "private names of other modules (give them a public name in the module "
        f"that owns them): {bad}"
    )


def test_the_scan_catches_private_uses():
    probe = PKG / "data" / "probe.py"  # not a file: its source is given
    source = (
        "from uqviz.data.model import _hidden\nfrom uqviz.data import model\n"
        "from uqviz.plots._style import COLORS\nfrom uqviz.quantile import _inputs\n"
        "def f():\n    return model._other\n"
    )
    texts = [text for _, text in private_uses(probe, source)]
    assert texts == [
        "from uqviz.data.model import _hidden",
        "from uqviz.plots._style import ... (private uqviz.plots._style)",
        "from uqviz.quantile import _inputs",  # a private module, even of a sibling
        "model._other",
    ]


NAMESPACES = {
    "datasets": "uqviz.data.datasets",
    "synthetic": "uqviz.data.synthetic",
    "generative": "uqviz.data.generative",
    "statistics": "uqviz.engine.statistics",
    "datasets.formula": "uqviz.data.datasets.formula",
}


@pytest.mark.parametrize("name", NAMESPACES)
def test_public_namespaces_are_real_modules(name):
    module = importlib.import_module(f"uqviz.{name}")
    implementation = importlib.import_module(NAMESPACES[name])
    assert module is not implementation
    assert pathlib.Path(module.__file__).is_relative_to(PKG)
    assert module.__name__ == f"uqviz.{name}"
    assert sorted(module.__all__) == sorted(implementation.__all__)
    for attr in module.__all__:
        assert getattr(module, attr) is getattr(implementation, attr), attr


def test_public_namespaces_are_attributes_of_uqviz():
    for name in ("datasets", "synthetic", "generative", "statistics"):
        assert getattr(uqviz, name) is importlib.import_module(f"uqviz.{name}")
    assert uqviz.datasets.formula is importlib.import_module("uqviz.datasets.formula")


def test_no_sys_modules_aliasing():
    for path in MODULES:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    text = ast.unparse(target)
                    assert "sys.modules[" not in text, f"{path.relative_to(PKG)}: {text}"


def test_engine_checks_reexport_the_kernel_checks():
    from uqviz._array import checks as leaf
    from uqviz.engine import checks

    for name in leaf.__all__:
        assert getattr(checks, name) is getattr(leaf, name), name


def test_test_folders_mirror_the_package():
    """Tests live in folders named after the part of uqviz they test (issue 22, item 5):
    ``tests/<package or module>/test_*.py``, plus ``tests/contract/`` (the contract over every
    public function) and ``tests/project/`` (documents, layout, course); no test file is left
    at the top of ``tests/``."""
    tests = pathlib.Path(__file__).resolve().parents[1]
    parts = {p.name for p in PKG.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    parts |= {p.stem for p in PKG.glob("*.py") if p.stem != "__init__"}
    allowed = parts | {"contract", "project", "fixtures"}
    folders = {p.name for p in tests.iterdir() if p.is_dir() and p.name != "__pycache__"}
    assert folders <= allowed, f"test folders named after no part of uqviz: {folders - allowed}"
    assert not list(tests.glob("test_*.py")), "test files at the top of tests/"
    for folder in folders - {"fixtures"}:
        assert (tests / folder / "__init__.py").exists(), folder
        assert list((tests / folder).glob("test_*.py")), f"empty test folder {folder}"


def test_scripts_import_test_helpers_by_their_package_path():
    """scripts/ and benchmarks/ reach a test helper as ``tests.<part>.test_x`` (the tests are
    packages that mirror uqviz), never as a bare ``test_x`` found through a path insert."""
    root = PKG.parent
    bare = []
    for path in [*root.joinpath("scripts").iterdir(), *root.joinpath("benchmarks").glob("*.py")]:
        if not path.is_file():
            continue
        try:
            tree = ast.parse(path.read_text())
        except (SyntaxError, UnicodeDecodeError):
            continue  # a shell script
        for node in ast.walk(tree):
            names = (
                [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else []
            )
            bare += [f"{path.name}: {n}" for n in names if n.split(".")[0].startswith("test_")]
    assert not bare, bare
