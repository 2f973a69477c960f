"""Unit-variance generative distributions D of E = uE * D(0, 1), for simulated references.

The public namespace ``uqviz.generative``; the implementation is :mod:`uqviz.data.generative`.

Examples
--------
>>> from uqviz.generative import get_generative
>>> get_generative("t6").params
{'nu': 6.0}
"""

from uqviz.data.generative import (
    Generative,
    as_generatives,
    empirical,
    get_generative,
    laplace,
    normal,
    student_t,
    uniform,
)

__all__ = [
    "Generative",
    "normal",
    "student_t",
    "uniform",
    "laplace",
    "empirical",
    "get_generative",
    "as_generatives",
]
