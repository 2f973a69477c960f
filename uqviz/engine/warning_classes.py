"""The warning classes of uqviz (docs/conventions.md, "Warnings").

Defined in the leaf module :mod:`uqviz._array.warning_classes` (the kernels use them too) and
re-exported here, so that every analysis takes its warning classes from the engine, as it
takes its option checks from :mod:`uqviz.engine.checks`. Users import them from ``uqviz``
(``uqviz.UnreliableWarning``).

Examples
--------
>>> import uqviz
>>> UnreliableWarning is uqviz.UnreliableWarning
True
"""

from __future__ import annotations

from uqviz._array.warning_classes import (
    BinningWarning,
    DataWarning,
    NumbaMissingWarning,
    NumericalWarning,
    UnreliableWarning,
    UqvizWarning,
)

__all__ = [
    "UqvizWarning",
    "UnreliableWarning",
    "BinningWarning",
    "DataWarning",
    "NumericalWarning",
    "NumbaMissingWarning",
]
