"""The public API is documented: numpydoc sections present, API reference up to date."""

import importlib
import inspect
import sys
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[1] / "docs"
sys.path.insert(0, str(DOCS))
import make_api  # noqa: E402

ENTRIES = [(m, n) for _, m, names in make_api.SECTIONS for n in names]


@pytest.mark.parametrize("module, name", ENTRIES)
def test_public_function_has_numpydoc_sections(module, name):
    obj = getattr(importlib.import_module(module), name)
    doc = inspect.getdoc(obj) or ""
    params = [p for p in inspect.signature(obj).parameters.values()
              if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    if params:
        assert "Parameters\n----------" in doc, f"{module}.{name}: no Parameters section"
    if not inspect.isclass(obj):
        assert "Returns\n-------" in doc, f"{module}.{name}: no Returns section"
    assert "Examples\n--------" in doc, f"{module}.{name}: no Examples section"


def test_api_reference_is_up_to_date():
    assert (DOCS / "api.md").read_text() == make_api.render(), "run: python docs/make_api.py"
