"""Decimation (Pernot (2024b) sect. V C, Fig. 7 right and Fig. 8): hand checks, conventions,
paper facts."""

import numpy as np
import pytest
import xarray as xr

import uqviz
from uqviz.average.decimation import (
    DEFAULT_FRACTIONS,
    decimated,
    decimation_curve,
    decimation_order,
    n_removed,
)

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

# a tiny dataset: row 6 has the largest uE, row 2 the second largest
E10 = np.array([0.3, -0.5, 1.2, 0.1, -0.2, 0.4, -2.0, 0.05, 0.6, -0.3])
U10 = np.array([0.4, 0.5, 0.9, 0.2, 0.3, 0.35, 1.5, 0.25, 0.45, 0.3])


def _zms(e, u):
    return np.mean((e / u) ** 2)


def _rce(e, u):
    rmv = np.sqrt(np.mean(u**2))
    return (rmv - np.sqrt(np.mean(e**2))) / rmv


def test_delta_is_exactly_zero_at_fraction_zero():
    ds = uqviz.synthetic.nig(1500, nu=4, rng=3)
    res = decimation_curve(ds, statistics=("ZMS", "RCE", "NLL"), n_boot=500, rng=0)
    np.testing.assert_array_equal(res["delta"].sel(fraction=0.0).values, 0.0)
    assert res["n_removed"].sel(fraction=0.0).item() == 0
    np.testing.assert_array_equal(res["estimate"].sel(fraction=0.0), res["full_estimate"])


def test_hand_check_on_ten_points():
    ds = uqviz.from_arrays(E10, U10)
    res = decimation_curve(ds, fractions=[0.0, 0.1, 0.2], n_boot=200, rng=0)
    assert res["n_removed"].values.tolist() == [0, 1, 2]
    keep9 = np.arange(10) != 6  # 10 %: the largest uE (row 6) is gone
    keep8 = keep9 & (np.arange(10) != 2)  # 20 %: and the second largest (row 2)
    for frac, keep in [(0.1, keep9), (0.2, keep8)]:
        for stat, f in [("ZMS", _zms), ("RCE", _rce)]:
            expected = f(E10[keep], U10[keep])
            assert res["estimate"].sel(statistic=stat, fraction=frac).item() == pytest.approx(
                expected, rel=1e-13
            )
            assert res["delta"].sel(statistic=stat, fraction=frac).item() == pytest.approx(
                expected - f(E10, U10), rel=1e-12
            )
    pruned = decimated(ds, fraction=0.1)
    assert pruned["point"].values.tolist() == [0, 1, 2, 3, 4, 5, 7, 8, 9]  # original order kept
    np.testing.assert_array_equal(pruned["E"], E10[keep9])
    assert pruned.attrs["n_decimated"] == 1 and pruned.attrs["decimation_fraction"] == 0.1


def test_ci_halfwidths_are_those_of_validate_average():
    ds = uqviz.synthetic.nig(2000, nu=5, rng=4)
    res = decimation_curve(ds, n_boot=2000, rng=7)
    va = uqviz.validate_average(ds, n_boot=2000, rng=7)
    np.testing.assert_array_equal(res["ci_lower_halfwidth"], va["ci_lower"] - va["estimate"])
    np.testing.assert_array_equal(res["ci_upper_halfwidth"], va["ci_upper"] - va["estimate"])
    assert np.all(res["ci_lower_halfwidth"] < 0) and np.all(res["ci_upper_halfwidth"] > 0)
    outside = (res.delta < res.ci_lower_halfwidth) | (res.delta > res.ci_upper_halfwidth)
    np.testing.assert_array_equal(res["outside_ci"], outside)
    assert res.attrs["n_boot"] == 2000 and res.attrs["rounding"] == "floor"
    assert np.allclose(res["fraction"], np.arange(11) / 100)
    np.testing.assert_array_equal(res["fraction"], DEFAULT_FRACTIONS)
    assert res["n_removed"].sel(fraction=0.03).item() == 60


def test_rounding_of_the_number_removed():
    # floor by default (never more than the stated fraction); round is half-to-even as R's round
    # 0.29*100 = 28.999...
    assert n_removed([0.0, 0.07, 0.29, 0.15], 100).tolist() == [0, 7, 29, 15]
    assert n_removed(0.15, 10).item() == 1 and n_removed(0.15, 10, rounding="round").item() == 2
    assert n_removed(0.25, 10, rounding="round").item() == 2  # 2.5 -> 2
    assert (
        n_removed(0.05, 3834).item() == 191
        and n_removed(0.05, 3834, rounding="round").item() == 192
    )
    ds = uqviz.from_arrays(E10, U10)
    assert decimated(ds, fraction=0.15).sizes["point"] == 9
    assert decimated(ds, fraction=0.15, rounding="round").sizes["point"] == 8
    with pytest.raises(ValueError, match="rounding"):
        n_removed(0.1, 10, rounding="ceil")


def test_ties_stable_or_by_error():
    e = np.array([0.1, 0.9, -0.4, 0.2, 0.3])
    u = np.array([0.5, 0.5, 0.5, 0.2, 0.1])
    # stable: equal uE removed in row order; "E": by decreasing E (order(uE, E, decreasing=TRUE))
    assert decimation_order(e, u).tolist() == [0, 1, 2, 3, 4]
    assert decimation_order(e, u, ties="E").tolist() == [1, 0, 2, 3, 4]
    ds = uqviz.from_arrays(e, u)
    assert decimated(ds, fraction=0.2)["point"].values.tolist() == [1, 2, 3, 4]
    assert decimated(ds, fraction=0.2, ties="E")["point"].values.tolist() == [0, 2, 3, 4]
    res_s = decimation_curve(ds, fractions=[0.2], n_boot=50, rng=0)
    res_e = decimation_curve(ds, fractions=[0.2], n_boot=50, rng=0, ties="E")
    assert res_s.estimate.sel(statistic="ZMS").item() == pytest.approx(_zms(e[1:], u[1:]))
    assert res_e.estimate.sel(statistic="ZMS").item() == pytest.approx(
        _zms(e[[0, 2, 3, 4]], u[[0, 2, 3, 4]])
    )
    with pytest.raises(ValueError, match="ties"):
        decimation_order(e, u, ties="random")


def test_bad_fractions_and_statistics():
    ds = uqviz.from_arrays(E10, U10)
    with pytest.raises(ValueError, match=r"in \[0, 1\)"):
        decimation_curve(ds, fractions=[0.0, -0.1], n_boot=10)
    with pytest.raises(ValueError, match=r"in \[0, 1\)"):
        decimated(ds, fraction=1.0)
    assert decimated(ds, fraction=0.99).sizes["point"] == 1  # floor(9.9) = 9 removed
    with pytest.raises(ValueError, match="removes all 10 points"):
        decimation_curve(ds, fractions=[0.0, 0.95], rounding="round", n_boot=10)  # round(9.5) = 10
    with pytest.raises(ValueError, match="removes all 10 points"):
        decimated(ds, fraction=0.95, rounding="round")
    with pytest.raises(ValueError, match="single number"):
        decimated(ds, fraction=[0.1, 0.2])
    with pytest.raises(ValueError, match="unknown statistic"):
        decimation_curve(ds, statistics=("ZMX",), n_boot=10)


def test_datatree_gains_dataset_dim():
    sets = {
        name: uqviz.synthetic.nig(m, nu=6, rng=i).assign_attrs(name=name)
        for i, (name, m) in enumerate([("b", 700), ("a", 1000)])
    }
    tree = uqviz.from_datasets(sets)
    res = decimation_curve(tree, n_boot=300, rng=1)
    assert res["delta"].dims == ("dataset", "statistic", "fraction")
    assert res["dataset"].values.tolist() == ["b", "a"]
    assert res["n_removed"].sel(fraction=0.1).values.tolist() == [70, 100]
    one = decimation_curve(sets["a"], n_boot=300, rng=1)
    xr.testing.assert_equal(res["estimate"].sel(dataset="a", drop=True), one["estimate"])
    pruned = decimated(tree, fraction=0.1)
    assert isinstance(pruned, xr.DataTree)
    assert [pruned[n].to_dataset().sizes["point"] for n in ("b", "a")] == [630, 900]


# --------------------------------------------------------------------------
# real data: Pernot (2024b) sect. V C (Fig. 8) and Fig. 7 (right)
# --------------------------------------------------------------------------
@pytest.fixture(scope="module")
def tree():
    from uqviz.datasets import load_collection

    return load_collection("pernot2024")


@pytest.fixture(scope="module")
def fig8(tree):
    return decimation_curve(tree, n_boot=10_000, rng=0)


def _excursion(res):
    """Largest |delta| relative to the CI half-width on its side (> 1: outside the CI)."""
    ratio = np.maximum(res.delta / res.ci_upper_halfwidth, res.delta / res.ci_lower_halfwidth)
    return ratio.max("fraction")


def test_fig8_zms_curve_stays_within_its_ci_for_all_nine_sets(fig8):
    # Pernot (2024b): "its decimation curve always strays within the limits of the
    # corresponding CI".
    # Largest excursion (QM9_E): 0.87 of the half-width with rng=0 (0.86-0.89 over seeds).
    assert fig8["dataset"].values.tolist() == SETS
    assert not fig8["outside_ci"].sel(statistic="ZMS").any()


def test_fig8_rce_curve_leaves_its_ci_for_sets_3_4_7_only_among_2_3_4_6_7(fig8):
    # Pernot (2024b): RCE strays beyond the CI for Sets 3, 4 and 7, stays within for Sets 2 and 6.
    # Our excursions (rng=0, 1 % steps): Set 3 1.98, Set 4 3.46, Set 7 (QM9_E) 1.19;
    # Set 2 0.94, Set 6 0.30. (The paper says nothing of Sets 1, 5, 8, 9: 0.38, 0.55,
    # 0.68, 0.98 here.)
    rce_out = fig8["outside_ci"].sel(statistic="RCE").any("fraction").to_series()
    assert rce_out[["Diffusion_LR", "Perovskite_LR", "QM9_E"]].all()
    assert not rce_out[["Perovskite_RF", "Perovskite_GPR_Bayesian"]].any()


def test_fig8_zms_is_never_more_sensitive_than_rce(fig8):
    # Pernot (2024b): "in all the cases ZMS is less or as sensitive as RCE to the large extremal
    # uncertainty values" -- measured by the excursion relative to each CI
    exc = _excursion(fig8)
    assert np.all(exc.sel(statistic="ZMS") <= exc.sel(statistic="RCE"))


def test_fig7_right_removing_5_percent_makes_rce_and_zms_agree_for_sets_3_4_7(tree):
    # Pernot (2024b) Fig. 7 (right), with the authors' round(0.05 M): the validation diagnostics
    # (|zeta| <= 1) of ZMS and RCE agree for Sets 3, 4 and 7, while Set 2 still disagrees.
    res = uqviz.validate_average(
        decimated(tree, fraction=0.05, rounding="round"), n_boot=10_000, rng=0
    )
    valid = res["valid"].to_pandas()
    agree = valid["ZMS"] == valid["RCE"]
    assert agree[["Diffusion_LR", "Perovskite_LR", "QM9_E"]].all()
    assert not agree["Perovskite_RF"]
    assert res["n_points"].sel(dataset="QM9_E").item() == 13885 - round(0.05 * 13885)


def test_renamed_decimation_curve_and_checked_options():
    # the function is uqviz.decimation_curve; uqviz.decimation no longer exists
    assert uqviz.decimation_curve is decimation_curve
    assert not hasattr(uqviz, "decimation")
    ds = uqviz.synthetic.nig(200, nu=20, rng=0)
    with pytest.raises(ValueError, match="n_boot"):
        decimation_curve(ds, n_boot=2.5)
    with pytest.raises(ValueError, match="ci"):
        decimation_curve(ds, n_boot=50, ci=1.5)
    with pytest.raises(ValueError, match="statistics"):
        decimation_curve(ds, n_boot=50, statistics=())
    with pytest.raises(TypeError, match="rng"):
        decimation_curve(ds, n_boot=50, rng=np.random.RandomState(0))
    with pytest.raises(ValueError, match="validate_simulated"):
        decimation_curve(ds, n_boot=50, statistics=("ENCE",))
    res = decimation_curve(ds, n_boot=50, rng=3)
    assert res.attrs["rng"] == 3 and res.attrs["statistics"] == ["ZMS", "RCE"]


def test_decimated_fraction_is_keyword_only_and_checked_by_name():
    ds = uqviz.from_arrays(E10, U10)
    with pytest.raises(TypeError):
        decimated(ds, 0.1)  # fraction is keyword-only
    with pytest.raises(TypeError, match=r"\bfraction\b"):
        decimated(ds, fraction="0.5")  # never parsed from a string
    with pytest.raises(TypeError, match=r"\bfraction\b"):
        decimated(ds, fraction=True)
    for bad in (np.nan, -0.1, 1.5):
        with pytest.raises(ValueError, match=r"\bfraction\b"):
            decimated(ds, fraction=bad)
    with pytest.raises(TypeError, match="fractions"):
        decimation_curve(ds, fractions=["0.1"], n_boot=10)
    with pytest.raises(ValueError, match="statistics: unknown statistic"):
        decimation_curve(ds, statistics=("ZMX",), n_boot=10)
    # the wrong option is named even when another is refused later
    with pytest.raises(ValueError, match="n_boot"):
        decimation_curve(ds, statistics=("ENCE",), n_boot=2.5)


def test_decimation_curve_result_names():
    ds = uqviz.from_arrays(E10, U10)
    res = decimation_curve(ds, fractions=[0.0, 0.1], n_boot=50, rng=0)
    assert "value" not in res
    assert res["estimate"].dims == ("statistic", "fraction")
    assert res["full_estimate"].sel(statistic="ZMS").item() == pytest.approx(
        _zms(E10, U10), rel=1e-13
    )
    keep = np.arange(10) != 6
    assert res["estimate"].sel(statistic="ZMS", fraction=0.1).item() == pytest.approx(
        _zms(E10[keep], U10[keep]), rel=1e-13
    )
