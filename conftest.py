"""Root pytest configuration: shared by the tests and the docstring examples of uqviz/."""

import sys

import pytest


@pytest.fixture(autouse=True)
def _close_figures():
    """Every test and docstring example leaves no figure open (plots' examples draw)."""
    yield
    if "matplotlib.pyplot" in sys.modules:
        sys.modules["matplotlib.pyplot"].close("all")
