"""A simulated committee of machine-learned interatomic potentials (the data of notebook 11).

Structures of 5 to 60 atoms; for each, a reference energy and per-atom reference forces, and the
predictions of a committee of ``n_members`` potentials (the ensemble behind the uncertainties of
MACE, NequIP or ANI committees). What makes it realistic for validation:

- **errors correlated within a structure.** Each structure has a difficulty ``d_s`` (log-normal:
  some geometries are far from the training data) that scales the errors of all its atoms, and
  the force error of each component shares a structure-level part of correlation ``rho``
  (the same geometry, the same model failure);
- **per-atom uncertainties that vary.** Each atom's force scale ``s_a`` is log-normal (its
  local environment), and the committee sees ``s_a d_s``: the committee spread tracks the
  error's scale;
- **committees too confident.** The members scatter around their mean by ``spread`` times the
  error's scale (0.6 by default: uE about 1.7 times too small, as committees often are: a
  recalibration per target is needed, Musil et al. (2019)).

Energies are in eV, forces in eV/Å; the numbers are of the order of those potentials' errors.

Examples
--------
>>> tree = potential_committee(20, rng=0)
>>> sorted(tree.children), tree["atoms"].sizes["component"]
(['atoms', 'structures'], 3)
>>> bool((tree["structures"]["n_atoms"] >= 5).all())
True
"""

from __future__ import annotations

import numpy as np
import xarray as xr

from uqviz.engine import checks
from uqviz.engine.seeds import seed_attr
from uqviz.engine.options import streams

__all__ = ["potential_committee"]

FORCE_SCALE = 0.05  # eV/Å: the median force error
ENERGY_SCALE = 0.002  # eV per sqrt(atom): the median energy error of one atom's share
ATOMS = (5, 60)


def _sizes(rng, n_structures):
    return rng.integers(ATOMS[0], ATOMS[1] + 1, n_structures)


def _committee(rng, truth, error, scale, n_members, spread):
    """Members scattered around the model's mean prediction ``truth - error``."""
    mean = truth - error
    noise = rng.standard_normal(truth.shape + (n_members,))
    noise -= noise.mean(axis=-1, keepdims=True)
    noise /= noise.std(axis=-1, ddof=1, keepdims=True)  # exactly spread * scale, member sd
    return mean[..., None] + spread * scale[..., None] * noise


def _forces(r, structure, difficulty, rho, n_members, spread):
    n_atoms = structure.size
    scale = FORCE_SCALE * np.exp(0.4 * r.env.standard_normal(n_atoms)) * difficulty[structure]
    shared = r.shared.standard_normal((difficulty.size, 3))[structure]
    own = r.own.standard_normal((n_atoms, 3))
    error = scale[:, None] * (np.sqrt(rho) * shared + np.sqrt(1.0 - rho) * own)
    truth = r.truth.normal(0.0, 1.0, (n_atoms, 3))
    members = _committee(r.members, truth, error, scale[:, None] * np.ones(3), n_members, spread)
    return truth, members


def _energies(r, n_atoms, difficulty, n_members, spread):
    scale = ENERGY_SCALE * np.sqrt(n_atoms) * difficulty
    error = scale * r.energy_error.standard_normal(n_atoms.size)
    truth = -4.0 * n_atoms + r.energy_truth.normal(0.0, 0.5, n_atoms.size)
    return truth, _committee(r.energy_members, truth, error, scale, n_members, spread)


def potential_committee(
    size=300, *, n_members=8, rho=0.5, spread=0.6, difficulty_sd=0.5, rng=None
) -> xr.DataTree:
    """Reference and committee-predicted energies and forces of simulated structures.

    Parameters
    ----------
    size : int, default 300
        Number of structures, of 5 to 60 atoms (uniform).
    n_members : int, default 8
        Committee members (at least 2).
    rho : float in [0, 1), default 0.5
        Correlation of the force errors of the atoms of one structure, per component.
    spread : float > 0, default 0.6
        Committee spread over the error's scale (1: a calibrated committee).
    difficulty_sd : float >= 0, default 0.5
        Standard deviation of the log of each structure's difficulty.
    rng : None, int, SeedSequence or numpy.random.Generator, default None

    Returns
    -------
    xarray.DataTree
        ``"structures"``: dims ``structure``, ``member``: ``energy`` (reference),
        ``energy_members``, ``n_atoms``, ``difficulty``. ``"atoms"``: dims ``atom``,
        ``component`` (x, y, z), ``member``: ``force`` (reference), ``force_members`` and the
        coordinate ``structure`` of each atom.

    Examples
    --------
    >>> tree = potential_committee(50, rng=1)
    >>> atoms = tree["atoms"].to_dataset()
    >>> atoms["force_members"].dims
    ('atom', 'component', 'member')
    >>> int(atoms.sizes["atom"]) == int(tree["structures"]["n_atoms"].sum())
    True
    """
    n_structures = checks.count("size", size, minimum=2)
    n_members = checks.count("n_members", n_members, minimum=2)
    rho = float(rho)
    if not 0.0 <= rho < 1.0 or not spread > 0 or not difficulty_sd >= 0:
        raise ValueError(
            f"need 0 <= rho < 1, spread > 0 and difficulty_sd >= 0, got rho={rho}, "
            f"spread={spread}, difficulty_sd={difficulty_sd}"
        )
    seed = seed_attr(rng)
    names = ("sizes", "difficulty", "env", "shared", "own", "truth", "members")
    r = streams(rng, *names, "energy_error", "energy_truth", "energy_members")
    n_atoms = _sizes(r.sizes, n_structures)
    difficulty = np.exp(difficulty_sd * r.difficulty.standard_normal(n_structures))
    structure = np.repeat(np.arange(n_structures), n_atoms)
    f_true, f_members = _forces(r, structure, difficulty, rho, n_members, spread)
    e_true, e_members = _energies(r, n_atoms, difficulty, n_members, spread)
    return _as_tree(
        e_true,
        e_members,
        n_atoms,
        difficulty,
        f_true,
        f_members,
        structure,
        dict(
            rho=rho,
            spread=float(spread),
            difficulty_sd=float(difficulty_sd),
            n_members=n_members,
            rng=seed,
        ),
    )


def _as_tree(e_true, e_members, n_atoms, difficulty, f_true, f_members, structure, attrs):
    structures = xr.Dataset(
        {
            "energy": ("structure", e_true, {"units": "eV", "long_name": "reference energy"}),
            "energy_members": (("structure", "member"), e_members, {"units": "eV"}),
            "n_atoms": ("structure", n_atoms),
            "difficulty": ("structure", difficulty),
        },
        coords={"structure": np.arange(n_atoms.size)},
    )
    atoms = xr.Dataset(
        {
            "force": (("atom", "component"), f_true, {"units": "eV/Å"}),
            "force_members": (("atom", "component", "member"), f_members, {"units": "eV/Å"}),
        },
        coords={
            "atom": np.arange(structure.size),
            "component": ["x", "y", "z"],
            "structure": ("atom", structure),
        },
    )
    tree = xr.DataTree.from_dict({"structures": structures, "atoms": atoms})
    tree.attrs.update(attrs, description="simulated committee of interatomic potentials")
    return tree
