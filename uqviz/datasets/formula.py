"""Molecular formulas: parse them and derive the QM9 conditioning features of Pernot (2023).

The public namespace ``uqviz.datasets.formula``; the implementation is
:mod:`uqviz.data.datasets.formula`. ``ATOMIC_WEIGHTS`` is the same dict: an element added to
it here is known to the parser.

Examples
--------
>>> round(molecular_mass("H2O"), 3), hetero_fraction("CH3OH")
(18.015, 0.16666666666666666)
"""

import uqviz.data.datasets.formula as _impl
from uqviz.data.datasets.formula import (
    ATOMIC_WEIGHTS,
    ELEMENTS,
    hetero_fraction,
    hetero_fractions,
    molecular_mass,
    molecular_masses,
    parse_formula,
)

__all__ = list(_impl.__all__)  # exactly the implementation's public names
