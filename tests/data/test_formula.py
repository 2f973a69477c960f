"""uqviz.datasets.formula: parser, molecular mass and heteroatom fraction, checked by hand."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from uqviz.datasets.formula import (
    ATOMIC_WEIGHTS,
    ELEMENTS,
    hetero_fraction,
    hetero_fractions,
    molecular_mass,
    molecular_masses,
    parse_formula,
)


@pytest.mark.parametrize(
    "formula, counts",
    [
        ("C7H10N2O", {"C": 7, "H": 10, "N": 2, "O": 1}),
        ("H2O", {"H": 2, "O": 1}),
        ("CH4", {"C": 1, "H": 4}),
        ("O", {"O": 1}),
        ("C6H5Cl", {"C": 6, "H": 5, "Cl": 1}),
        ("CH2BrCl", {"C": 1, "H": 2, "Br": 1, "Cl": 1}),
        ("Co", {"Co": 1}),  # cobalt, not C + O
        ("CO", {"C": 1, "O": 1}),
        ("C12H22O11", {"C": 12, "H": 22, "O": 11}),
        ("CH3CH2OH", {"C": 2, "H": 6, "O": 1}),  # repeated symbols are summed
        ("Ca(OH)2", {"Ca": 1, "O": 2, "H": 2}),
        ("Al2(SO4)3", {"Al": 2, "S": 3, "O": 12}),
        ("[Cu(NH3)4]SO4", {"Cu": 1, "N": 4, "H": 12, "S": 1, "O": 4}),
        ("(CH3)3C(CH2)2", {"C": 6, "H": 13}),
        ("  C2H6 ", {"C": 2, "H": 6}),  # surrounding whitespace ignored
    ],
)
def test_parse_formula(formula, counts):
    assert parse_formula(formula) == counts


@pytest.mark.parametrize(
    "bad",
    [
        "",
        "   ",
        "h2o",
        "c",
        "C0",
        "H02",
        "2H2O",
        "H2O)",
        "(H2O",
        "()",
        "C()2",
        "Xx",
        "Qa",
        "C-H",
        "H2 O",
        "C1.5H3",
        "CH4+",
        "C)(H",
        "((C)",
        "[C)",
        "C2H6·H2O",
    ],
)
def test_malformed_formulas_raise(bad):
    with pytest.raises(ValueError, match="malformed molecular formula"):
        parse_formula(bad)


@pytest.mark.parametrize("not_str", [None, 12, 1.5, b"H2O", ["H2O"]])
def test_non_string_raises_type_error(not_str):
    with pytest.raises(TypeError, match="must be a str"):
        parse_formula(not_str)


def test_weights_are_the_iupac_conventional_values():
    assert {el: ATOMIC_WEIGHTS[el] for el in "HCNOF"} == {
        "H": 1.008,
        "C": 12.011,
        "N": 14.007,
        "O": 15.999,
        "F": 18.998,
    }
    assert set(ATOMIC_WEIGHTS) <= ELEMENTS and len(ELEMENTS) == 118


@pytest.mark.parametrize(
    "formula, mass",
    [
        ("H2O", 18.015),  # 2 * 1.008 + 15.999
        ("CH4", 16.043),  # 12.011 + 4 * 1.008
        ("C7H10N2O", 138.170),  # 84.077 + 10.080 + 28.014 + 15.999
        ("C5H10N2O", 114.148),  # first row of the QM9 files
        ("CF4", 88.003),  # 12.011 + 75.992
        ("HCN", 27.026),
        ("C6H5Cl", 112.556),  # 72.066 + 5.040 + 35.45
        ("Ca(OH)2", 74.092),  # 40.078 + 2 * 17.007
    ],
)
def test_molecular_mass_by_hand(formula, mass):
    assert molecular_mass(formula) == pytest.approx(mass, abs=5e-10)


def test_mass_does_not_depend_on_element_order():
    assert molecular_mass("C7H10N2O") == molecular_mass("ON2H10C7") == molecular_mass("C7N2OH10")


def test_mass_needs_a_tabulated_weight():
    with pytest.raises(ValueError, match="no standard atomic weight.*'U'"):
        molecular_mass("UO2")


@pytest.mark.parametrize(
    "formula, fraction",
    [
        ("CH4", 0.0),
        ("C6H6", 0.0),
        ("H2O", 1 / 3),
        ("N2", 1.0),
        ("C7H10N2O", 3 / 20),
        ("C5H10N2O", 3 / 18),
        ("CF4", 4 / 5),
        ("CH3OH", 1 / 6),  # hydrogens count in the denominator
        ("C2H5NO2", 3 / 10),
    ],
)
def test_hetero_fraction_by_hand(formula, fraction):
    assert hetero_fraction(formula) == pytest.approx(fraction, abs=1e-15)


def test_vectorised_helpers_keep_shape_and_match_scalars():
    formulas = np.array([["H2O", "CH4", "H2O"], ["C7H10N2O", "N2", "CH4"]])
    masses = molecular_masses(formulas)
    fractions = hetero_fractions(formulas)
    assert masses.shape == fractions.shape == (2, 3)
    assert masses.dtype == fractions.dtype == np.float64
    for f, m, h in zip(formulas.ravel(), masses.ravel(), fractions.ravel()):
        assert m == molecular_mass(f) and h == hetero_fraction(f)
    # lists and pandas string columns work too
    s = pd.Series(["H2O", "CH4"], dtype="string")
    np.testing.assert_array_equal(
        molecular_masses(s), [molecular_mass("H2O"), molecular_mass("CH4")]
    )
    np.testing.assert_array_equal(hetero_fractions(["H2O"]), [1 / 3])
    assert molecular_masses([]).shape == (0,)


def test_vectorised_helpers_name_the_bad_element():
    with pytest.raises(ValueError, match=r"element 2 .*'C-H'"):
        molecular_masses(["H2O", "CH4", "C-H"])
    with pytest.raises(TypeError, match="element 1"):
        hetero_fractions(["H2O", None])
    with pytest.raises(TypeError, match="element 1"):
        molecular_masses(["H2O", float("nan")])


_SYMBOLS = sorted(ATOMIC_WEIGHTS)


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(_SYMBOLS), st.integers(1, 30)), min_size=1, max_size=8),
    st.booleans(),
)
def test_parse_roundtrip_and_mass_additivity(pairs, explicit_ones):
    """A formula written from counts parses back to the summed counts; mass is additive."""
    text = "".join(el if (n == 1 and not explicit_ones) else f"{el}{n}" for el, n in pairs)
    expected = {}
    for el, n in pairs:
        expected[el] = expected.get(el, 0) + n
    assert parse_formula(text) == expected
    assert molecular_mass(text) == pytest.approx(
        sum(ATOMIC_WEIGHTS[el] * n for el, n in expected.items()), rel=1e-14
    )
    # a multiplied group is the same as the expanded counts
    assert parse_formula(f"({text})3") == {el: 3 * n for el, n in expected.items()}
    total = sum(expected.values())
    assert hetero_fraction(text) == pytest.approx(
        1 - (expected.get("C", 0) + expected.get("H", 0)) / total, abs=1e-15
    )
