"""Fidelity to the published numbers of Pernot (2024a) and Pernot (2024b) on the nine sets.

Pernot (2024b) Table III (beta_GM); Pernot (2024a) Table 2 and Pernot (2024b) Table IV (ZMS
and RCE: estimate, BCa 95% CI with 10^4 replicates, zeta-score). Point values must equal the
printed ones to the printed precision (Pernot (2024a) prints more digits; Pernot (2024b) rounds
those again, e.g. ZMS of set 2: 0.885 -> 0.89). Interval limits and
zeta-scores are Monte Carlo quantities: they must agree within the printed
rounding, plus 4 Monte Carlo standard deviations of ours (from independent
seeds), plus the paper's own Monte Carlo scatter, measured as the difference
between the values printed in the two versions of the paper.
"""

from decimal import Decimal

import pytest
import xarray as xr

import uqviz
from uqviz.datasets import load_collection

SETS = [
    "Diffusion_RF",
    "Perovskite_RF",
    "Diffusion_LR",
    "Perovskite_LR",
    "Diffusion_GPR_Bayesian",
    "Perovskite_GPR_Bayesian",
    "QM9_E",
    "logP_10k_a_LS-GCN",
    "logP_150k_LS-GCN",
]

# Pernot (2024b) Table III: beta_GM of uE^2, E^2, Z^2
TABLE_III = [
    "0.40 0.82 0.73",
    "0.72 0.94 0.83",
    "0.66 0.74 0.69",
    "0.74 0.82 0.69",
    "0.19 0.78 0.79",
    "0.50 0.96 0.95",
    "0.93 0.98 0.78",
    "0.30 0.79 0.78",
    "0.30 0.77 0.75",
]

# Pernot (2024b) Table IV: estimate, CI lower, CI upper, zeta (as printed)
TABLE_IV = {
    "RCE": [
        "0.019 -0.021 0.055 0.47",
        "-0.039 -0.106 0.020 -0.66",
        "-0.0075 -0.054 0.040 -0.16",
        "0.055 -0.0025 0.12 0.96",
        "0.099 0.057 0.14 2.33",
        "0.092 0.00079 0.16 1.01",
        "-0.26 -0.68 -0.0012 -1.00",
        "0.046 0.0082 0.077 1.22",
        "-0.013 -0.072 0.027 -0.33",
    ],
    "ZMS": [
        "0.96 0.87 1.11 -0.27",
        "0.89 0.80 0.999 -1.01",
        "1.12 1.05 1.2 1.73",
        "1.23 1.16 1.3 3.50",
        "0.85 0.78 0.93 -1.84",
        "0.98 0.85 1.15 -0.10",
        "0.97 0.94 1.01 -0.69",
        "0.93 0.87 0.99 -1.12",
        "0.97 0.90 1.08 -0.26",
    ],
}


def _half_unit(text):
    """Half a unit of the last printed digit."""
    return 0.5 * 10.0 ** Decimal(text).as_tuple().exponent


# Pernot (2024a) Table 2: estimate, CI lower, CI upper, zeta. The paper prints estimates
# rounded to 3 significant digits and padded with zeros ("0.01860", "1.120"):
# they are written here with their 3 significant digits.
TABLE_2 = {
    "RCE": [
        "0.0186 -0.0209 0.0542 0.47",
        "-0.0387 -0.107 0.0193 -0.67",
        "-0.00748 -0.0524 0.04 -0.16",
        "0.0545 0.000718 0.126 1.01",
        "0.0986 0.0574 0.135 2.39",
        "0.0924 0.00335 0.16 1.04",
        "-0.264 -0.685 -0.0028 -1.01",
        "0.0459 0.00676 0.0777 1.17",
        "-0.0131 -0.0715 0.0263 -0.33",
    ],
    "ZMS": [
        "0.96 0.867 1.1 -0.28",
        "0.885 0.803 0.995 -1.05",
        "1.12 1.05 1.2 1.67",
        "1.23 1.16 1.3 3.48",
        "0.846 0.777 0.929 -1.85",
        "0.984 0.857 1.15 -0.10",
        "0.972 0.936 1.01 -0.71",
        "0.926 0.869 0.993 -1.10",
        "0.971 0.901 1.08 -0.27",
    ],
}


@pytest.fixture(scope="module")
def tree():
    return load_collection("pernot2024")


@pytest.fixture(scope="module")
def table_iv_runs(tree):
    runs = [
        uqviz.validate_average(tree, statistics=("RCE", "ZMS"), n_boot=10_000, rng=s)
        for s in range(4)
    ]
    return runs[0], xr.concat(runs, "seed").std("seed", ddof=1)


def test_collection_is_the_nine_sets_in_paper_order(tree):
    assert list(tree.children) == SETS
    assert [tree[s].sizes["point"] for s in SETS] == [
        2040,
        3834,
        2040,
        3836,
        2040,
        3818,
        13885,
        5000,
        5000,
    ]


@pytest.mark.parametrize("i", range(9))
def test_beta_gm_equals_table_iii(tree, i):
    t = uqviz.tailedness(tree[SETS[i]].to_dataset())
    for value, text in zip(t.beta_gm.values, TABLE_III[i].split()):
        assert abs(value - float(text)) <= _half_unit(text) + 1e-12, (SETS[i], value, text)


@pytest.mark.parametrize("stat", ["RCE", "ZMS"])
def test_point_values_equal_the_published_ones(table_iv_runs, stat):
    res, _ = table_iv_runs
    for i, (row2, row4) in enumerate(zip(TABLE_2[stat], TABLE_IV[stat])):
        value = float(res.estimate.sel(dataset=SETS[i], statistic=stat))
        t2, t4 = row2.split()[0], row4.split()[0]
        assert abs(value - float(t2)) <= _half_unit(t2) + 1e-12, (SETS[i], value, t2)
        # Pernot (2024b) rounds the Pernot (2024a) value again: allow both roundings
        assert abs(value - float(t4)) <= _half_unit(t4) + _half_unit(t2) + 1e-12, (SETS[i], t4)


@pytest.mark.parametrize("stat", ["RCE", "ZMS"])
def test_intervals_and_zeta_within_monte_carlo_tolerance(table_iv_runs, stat):
    res, sd = table_iv_runs
    for i, (row2, row4) in enumerate(zip(TABLE_2[stat], TABLE_IV[stat])):
        r = res.sel(dataset=SETS[i], statistic=stat)
        s = sd.sel(dataset=SETS[i], statistic=stat)
        for j, var in [(1, "ci_lower"), (2, "ci_upper"), (3, "zeta")]:
            t2, t4 = row2.split()[j], row4.split()[j]
            paper_scatter = abs(float(t2) - float(t4))
            for text in (t2, t4):
                tol = _half_unit(text) + 4 * float(s[var]) + paper_scatter
                assert abs(float(r[var]) - float(text)) <= tol, (
                    SETS[i],
                    var,
                    float(r[var]),
                    text,
                    tol,
                )
        # the verdict (|zeta| <= 1) agrees wherever the papers' zeta is not at the boundary
        zeta = float(row4.split()[3])
        if abs(abs(zeta) - 1) > 0.05:
            assert bool(r.valid) == (abs(zeta) <= 1), SETS[i]


def test_bootstrap_bias_is_negligible_as_in_table_iv(table_iv_runs):
    res, _ = table_iv_runs
    # Table IV: |b_BS| <= 5.5e-3 (RCE, set 7) and <= 7.3e-4 for ZMS
    assert float(abs(res.bias.sel(statistic="RCE")).max()) < 0.01
    assert float(abs(res.bias.sel(statistic="ZMS")).max()) < 2e-3
