"""The simulated committee of potentials (uqviz.synthetic.potential_committee): what its
docstring promises, checked on large draws."""

from __future__ import annotations

import numpy as np
import pytest

import uqviz


@pytest.fixture(scope="module")
def tree():
    return uqviz.synthetic.potential_committee(600, rho=0.5, spread=0.6, rng=3)


def test_layout_sizes_and_structure_coordinate(tree):
    s, a = tree["structures"].to_dataset(), tree["atoms"].to_dataset()
    n_atoms = s["n_atoms"].values
    assert n_atoms.min() >= 5 and n_atoms.max() <= 60
    assert a.sizes["atom"] == n_atoms.sum() and a.sizes["member"] == 8
    np.testing.assert_array_equal(np.bincount(a["structure"].values), n_atoms)
    assert a["force"].attrs["units"] == "eV/Å" and s["energy"].attrs["units"] == "eV"


def test_the_committee_is_too_confident_by_one_over_spread(tree):
    # member sd = spread x the error's scale exactly, so E[z^2] = 1 / spread^2 = 2.78
    a = tree["atoms"].to_dataset()
    mean = a["force_members"].mean("member")
    sd = a["force_members"].std("member", ddof=1)
    z = ((a["force"] - mean) / sd).values
    assert np.mean(z**2) == pytest.approx(1 / 0.36, rel=0.05)
    s = tree["structures"].to_dataset()
    ze = (
        (s["energy"] - s["energy_members"].mean("member"))
        / s["energy_members"].std("member", ddof=1)
    ).values
    assert np.mean(ze**2) == pytest.approx(1 / 0.36, rel=0.2)


def test_force_errors_are_correlated_by_rho_inside_a_structure(tree):
    a = tree["atoms"].to_dataset()
    z = (
        (a["force"] - a["force_members"].mean("member")) / a["force_members"].std("member", ddof=1)
    ).values[:, 0]
    g = a["structure"].values
    # one-way ANOVA intraclass correlation of the x component
    means = np.bincount(g, z) / np.bincount(g)
    n = np.bincount(g).astype(float)
    between = np.sum(n * (means - z.mean()) ** 2) / (n.size - 1)
    within = np.sum((z - means[g]) ** 2) / (z.size - n.size)
    n0 = (n.sum() - np.sum(n**2) / n.sum()) / (n.size - 1)
    icc = (between - within) / (between + (n0 - 1) * within)
    assert icc == pytest.approx(0.5, abs=0.08)


def test_bad_options_are_refused():
    with pytest.raises(ValueError, match="rho"):
        uqviz.synthetic.potential_committee(10, rho=1.0)
    with pytest.raises(ValueError, match="n_members"):
        uqviz.synthetic.potential_committee(10, n_members=1)
