"""Molecular formulas: parse them and derive the QM9 conditioning features of Pernot (2023).

Examples
--------
>>> round(molecular_mass("H2O"), 3), hetero_fraction("CH3OH")
(18.015, 0.16666666666666666)
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable

import numpy as np

__all__ = [
    "ATOMIC_WEIGHTS",
    "ELEMENTS",
    "parse_formula",
    "molecular_mass",
    "hetero_fraction",
    "molecular_masses",
    "hetero_fractions",
]

#: Every element symbol of the periodic table (Z = 1..118), used to validate formulas.
ELEMENTS: frozenset[str] = frozenset(
    """
    H He Li Be B C N O F Ne Na Mg Al Si P S Cl Ar K Ca Sc Ti V Cr Mn Fe Co Ni Cu Zn
    Ga Ge As Se Br Kr Rb Sr Y Zr Nb Mo Tc Ru Rh Pd Ag Cd In Sn Sb Te I Xe Cs Ba La Ce
    Pr Nd Pm Sm Eu Gd Tb Dy Ho Er Tm Yb Lu Hf Ta W Re Os Ir Pt Au Hg Tl Pb Bi Po At Rn
    Fr Ra Ac Th Pa U Np Pu Am Cm Bk Cf Es Fm Md No Lr Rf Db Sg Bh Hs Mt Ds Rg Cn Nh Fl
    Mc Lv Ts Og
    """.split()
)

#: Standard atomic weights (Da), IUPAC conventional/abridged values to 5 significant
#: digits. QM9 only needs H, C, N, O, F: 1.008, 12.011, 14.007, 15.999, 18.998.
ATOMIC_WEIGHTS: dict[str, float] = {
    "H": 1.008,
    "He": 4.0026,
    "Li": 6.94,
    "Be": 9.0122,
    "B": 10.81,
    "C": 12.011,
    "N": 14.007,
    "O": 15.999,
    "F": 18.998,
    "Ne": 20.180,
    "Na": 22.990,
    "Mg": 24.305,
    "Al": 26.982,
    "Si": 28.085,
    "P": 30.974,
    "S": 32.06,
    "Cl": 35.45,
    "Ar": 39.95,
    "K": 39.098,
    "Ca": 40.078,
    "Ti": 47.867,
    "V": 50.942,
    "Cr": 51.996,
    "Mn": 54.938,
    "Fe": 55.845,
    "Co": 58.933,
    "Ni": 58.693,
    "Cu": 63.546,
    "Zn": 65.38,
    "Ga": 69.723,
    "Ge": 72.630,
    "As": 74.922,
    "Se": 78.971,
    "Br": 79.904,
    "Kr": 83.798,
    "Rb": 85.468,
    "Sr": 87.62,
    "Ag": 107.87,
    "Sn": 118.71,
    "Sb": 121.76,
    "Te": 127.60,
    "I": 126.90,
    "Xe": 131.29,
    "Cs": 132.91,
    "Ba": 137.33,
    "Pt": 195.08,
    "Au": 196.97,
    "Hg": 200.59,
    "Pb": 207.2,
}

# One token: an element symbol, an opening or closing bracket, or a count.
_TOKEN = re.compile(r"([A-Z][a-z]?)|([(\[])|([)\]])|(\d+)")
_CLOSING = {"(": ")", "[": "]"}


def _malformed(formula, why: str) -> ValueError:
    return ValueError(f"malformed molecular formula {formula!r}: {why}")


def parse_formula(formula: str) -> dict[str, int]:
    """Count the atoms of each element in a molecular formula.

    Parameters
    ----------
    formula : str
        Element symbols with optional counts, groups in ``()`` or ``[]`` with
        optional multipliers, e.g. ``"Ca(OH)2"``.

    Returns
    -------
    dict
        ``{symbol: count}`` in order of first appearance, repeats summed.

    Raises
    ------
    ValueError
        Empty or malformed formula, unknown element, zero or leading-zero count,
        unbalanced brackets.
    TypeError
        ``formula`` is not a string.

    Examples
    --------
    >>> parse_formula("C7H10N2O")
    {'C': 7, 'H': 10, 'N': 2, 'O': 1}
    """
    if not isinstance(formula, str):
        raise TypeError(
            f"molecular formula must be a str, got {type(formula).__name__}: {formula!r}"
        )
    text = formula.strip()
    if not text:
        raise _malformed(formula, "empty")

    # A stack of partial counts: one dict per open bracket level.
    stack: list[tuple[str | None, dict[str, int]]] = [(None, {})]
    last: dict[str, int] | None = None  # what a following count multiplies
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            raise _malformed(formula, f"unexpected character {text[pos]!r} at position {pos}")
        symbol, opening, closing, digits = m.groups()
        if symbol is not None:
            if symbol not in ELEMENTS:
                raise _malformed(formula, f"unknown element symbol {symbol!r} at position {pos}")
            last = {symbol: 1}
            _add(stack[-1][1], last)
        elif opening is not None:
            stack.append((opening, {}))
            last = None
        elif closing is not None:
            if len(stack) == 1 or _CLOSING[stack[-1][0]] != closing:
                raise _malformed(formula, f"unbalanced {closing!r} at position {pos}")
            _, group = stack.pop()
            if not group:
                raise _malformed(formula, f"empty group before position {pos}")
            last = dict(group)
            _add(stack[-1][1], last)
        else:  # a count
            if last is None:
                raise _malformed(
                    formula, f"count {digits!r} at position {pos} follows no atom or group"
                )
            if digits[0] == "0":
                raise _malformed(
                    formula, f"count {digits!r} at position {pos} is zero or has a leading zero"
                )
            extra = int(digits) - 1  # `last` was already added once
            _add(stack[-1][1], {k: v * extra for k, v in last.items()})
            last = None  # "H2 3" or "H23" never multiplies twice
        pos = m.end()
    if len(stack) != 1:
        raise _malformed(formula, f"unclosed {stack[-1][0]!r}")
    counts = stack[0][1]
    if not counts:
        raise _malformed(formula, "no atoms")
    return counts


def _add(target: dict[str, int], counts: dict[str, int]) -> None:
    for k, v in counts.items():
        target[k] = target.get(k, 0) + v


def molecular_mass(formula: str) -> float:
    """Molecular mass in Da from standard atomic weights (``uqviz.datasets.ATOMIC_WEIGHTS``).

    Parameters
    ----------
    formula : str
        A molecular formula such as ``"C6H6"`` or ``"CH3CH2OH"``.

    Returns
    -------
    float
        The mass in daltons (g/mol).

    Examples
    --------
    >>> from uqviz.datasets import molecular_mass
    >>> round(molecular_mass("H2O"), 3)
    18.015

    Raises
    ------
    ValueError
        If the formula is malformed or holds an element without a tabulated weight.
    """
    counts = parse_formula(formula)
    missing = sorted(set(counts) - set(ATOMIC_WEIGHTS))
    if missing:
        raise ValueError(
            f"molecular formula {formula!r}: no standard atomic weight tabulated for {missing}; "
            "add it to uqviz.datasets.formula.ATOMIC_WEIGHTS"
        )
    # fsum: the result does not depend on the order of the elements in the formula
    return math.fsum(ATOMIC_WEIGHTS[el] * n for el, n in counts.items())


def hetero_fraction(formula: str) -> float:
    """Fraction of heteroatoms: ``1 - (nC + nH) / n_atoms``, hydrogens included.

    Computed as ``n_hetero / n_atoms`` (integer numerator), so ``"H2O"`` gives
    exactly ``1/3`` and hydrocarbons exactly 0.

    Parameters
    ----------
    formula : str
        A molecular formula.

    Returns
    -------
    float
        In [0, 1].

    Examples
    --------
    >>> from uqviz.datasets import hetero_fraction
    >>> hetero_fraction("H2O") == 1 / 3, hetero_fraction("C6H6")
    (True, 0.0)
    """
    counts = parse_formula(formula)
    total = sum(counts.values())
    return (total - counts.get("C", 0) - counts.get("H", 0)) / total


def _vectorise(func, formulas: Iterable[str], name: str) -> np.ndarray:
    arr = np.asarray(formulas, dtype=object)
    shape = arr.shape
    flat = arr.ravel()
    # Formulas repeat a lot in real data (QM9: a few hundred distinct among ~14k):
    # evaluate each distinct one once.
    cache: dict[str, float] = {}
    out = np.empty(flat.shape, dtype=np.float64)
    for i, f in enumerate(flat):
        try:
            out[i] = cache[f]
        except KeyError:
            try:
                value = func(f)
            except (ValueError, TypeError) as err:
                raise type(err)(f"{name}: element {i} of the formulas: {err}") from err
            cache[f] = out[i] = value
        except TypeError as err:  # unhashable element
            raise TypeError(f"{name}: element {i} of the formulas is not a str: {f!r}") from err
    return out.reshape(shape)


def molecular_masses(formulas: Iterable[str]) -> np.ndarray:
    """:func:`molecular_mass` over an array (any shape) of formulas.

    Each distinct formula is evaluated once.

    Parameters
    ----------
    formulas : array_like of str

    Returns
    -------
    numpy.ndarray
        float64, the shape of `formulas`.

    Examples
    --------
    >>> from uqviz.datasets import molecular_masses
    >>> molecular_masses(["H2O", "CH4"]).round(2).tolist()
    [18.02, 16.04]
    """
    return _vectorise(molecular_mass, formulas, "molecular_masses")


def hetero_fractions(formulas: Iterable[str]) -> np.ndarray:
    """:func:`hetero_fraction` over an array (any shape) of formulas.

    Parameters
    ----------
    formulas : array_like of str

    Returns
    -------
    numpy.ndarray
        float64, the shape of `formulas`.

    Examples
    --------
    >>> from uqviz.datasets import hetero_fractions
    >>> hetero_fractions(["CH4", "NH3"]).tolist()
    [0.0, 0.25]
    """
    return _vectorise(hetero_fraction, formulas, "hetero_fractions")
