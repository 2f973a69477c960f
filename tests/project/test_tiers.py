"""The test tiers stay true (issue 38, item 6): every entry of tests/slow_tests.txt names an
existing test, and the markers are registered."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

from tests.conftest import slow_entries

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("entry", slow_entries())
def test_every_slow_entry_names_an_existing_test(entry):
    path, _, rest = entry.partition("::")
    file = ROOT / path
    assert file.is_file(), f"{entry}: no file {path}"
    parts = re.sub(r"\[.*\]$", "", rest).split("::")
    if not parts[0]:
        return  # a whole module
    if path.startswith("uqviz/"):  # a doctest: uqviz/x.py::uqviz.x.func
        dotted = parts[0].split(".")
        module, names = importlib.import_module(".".join(dotted[:-1])), dotted[-1:]
        if not hasattr(module, names[0]):  # a method: uqviz.x.Class.method
            module = importlib.import_module(".".join(dotted[:-2]))
            names = dotted[-2:]
    else:  # tests are a package: their tests may be generated (test_sweep)
        module = importlib.import_module(path[:-3].replace("/", "."))
        names = parts
    obj = module
    for name in names:
        assert hasattr(obj, name), f"{entry}: {path} defines no {name}"
        obj = getattr(obj, name)


def test_the_markers_are_registered(pytestconfig):
    registered = " ".join(pytestconfig.getini("markers"))
    for marker in ("slow", "fidelity", "browser", "notebook"):
        assert f"{marker}:" in registered


def test_the_tiers_mark_what_they_say(request):
    """This module reads no real data and is fast: none of the four marks."""
    marks = {m.name for m in request.node.iter_markers()}
    assert not marks & {"slow", "fidelity", "browser", "notebook"}
