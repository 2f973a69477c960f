"""Load a script of ``scripts/`` (a Python file without the ``.py`` suffix) as a module."""

from __future__ import annotations

import importlib.machinery
import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def load_script(name):
    """``scripts/<name>`` executed as a module named after it (dashes as underscores)."""
    module_name = name.replace("-", "_")
    loader = importlib.machinery.SourceFileLoader(module_name, str(ROOT / "scripts" / name))
    spec = importlib.util.spec_from_loader(module_name, loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module
