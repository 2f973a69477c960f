"""Figures of uqviz.plots.reference: they draw what the result Datasets hold."""

import warnings

import matplotlib.pyplot as plt
import numpy as np
import pytest
import xarray as xr

import uqviz
from uqviz.reference.confidence import confidence_curve
from uqviz.reference.extrapolation import extrapolate, size_dependence
from uqviz.plots import reference as pr


@pytest.fixture(scope="module")
def tree():
    return uqviz.from_datasets(
        {
            "a": uqviz.synthetic.nig(1500, nu=6, rng=0),
            "b": uqviz.synthetic.tig(2500, nu_ig=5, nu_d=6, rng=1),
        }
    )


def test_zeta_scores_from_a_mapping_of_results(tree, tmp_path):
    results = {"BS": uqviz.validate_average(tree, statistics=("ZMS",), n_boot=300, rng=0)}
    for scheme, gen in [("SimN", "normal"), ("SimT", "t6"), ("Sim2N", "normal"), ("Sim2T", "t6")]:
        results[scheme] = uqviz.validate_simulated(
            tree, statistic="ZMS", generative=gen, scheme=scheme[:-1], n_mc=200, n_boot=300, rng=0
        )
    fig, ax = plt.subplots()
    out = pr.zeta_scores(results, labels=["Set1", "Set2"], ax=ax, title="ZMS")
    assert out is ax
    assert [t.get_text() for t in ax.get_xticklabels()] == ["Set1", "Set2"]
    lines = {ln.get_label(): ln for ln in ax.get_lines() if not ln.get_label().startswith("_")}
    assert list(lines) == ["BS", "SimN", "SimT", "Sim2N", "Sim2T"]
    # each scheme's points are its zeta-scores, in dataset order
    np.testing.assert_allclose(lines["SimT"].get_ydata(), results["SimT"].zeta.values)
    np.testing.assert_allclose(lines["BS"].get_ydata(), results["BS"].zeta.sel(statistic="ZMS"))
    assert lines["Sim2N"].get_markerfacecolor() == "white"  # open markers: Sim2
    # the |zeta| <= 1 band
    band = [p for p in ax.patches if p.get_label() == r"$|\zeta| \leq 1$"]
    assert len(band) == 1
    ys = band[0].get_path().transformed(band[0].get_patch_transform()).vertices[:, 1]
    assert ys.min() == -1 and ys.max() == 1
    assert ax.get_title() == "ZMS"
    fig.savefig(tmp_path / "zeta.png")


def test_zeta_scores_from_a_result_dataset(tree):
    # a Dataset is a Mapping: it was iterated as {variable: DataArray} -> KeyError 'zeta'
    sim = uqviz.validate_simulated(
        tree, statistic="ENCE", scheme=("Sim", "Sim2"), n_mc=100, n_boot=200, rng=0, progress=False
    )
    ax = pr.zeta_scores(sim)
    lines = {ln.get_label(): ln for ln in ax.get_lines() if not ln.get_label().startswith("_")}
    assert list(lines) == ["Sim", "Sim2"]
    np.testing.assert_allclose(lines["Sim2"].get_ydata(), sim.zeta.sel(scheme="Sim2").values)
    plt.close(ax.figure)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        val = uqviz.validate_with_references(
            tree, statistic="ENCE", n_mc=100, n_boot=200, rng=0, progress=False
        )
    ax = pr.zeta_scores(val)
    lines = {ln.get_label(): ln for ln in ax.get_lines() if not ln.get_label().startswith("_")}
    assert list(lines) == ["SimN", "SimT"]
    np.testing.assert_allclose(lines["SimT"].get_ydata(), val.zeta.sel(generative="t6").values)
    plt.close(ax.figure)


def test_reference_distribution_of_a_tree_result_asks_for_one_dataset(tree):
    res = uqviz.simulated_reference(
        tree, statistic="ENCE", n_mc=50, rng=0, progress=False, return_samples=True
    )
    with pytest.raises(ValueError, match="select one"):
        pr.reference_distribution(res)
    plt.close("all")


def test_zeta_scores_from_a_stacked_dataarray_and_bad_labels():
    z = xr.DataArray(
        np.array([[0.2, 3.0, -1.5]]),
        dims=("scheme", "dataset"),
        coords={"scheme": ["mine"], "dataset": ["x", "y", "z"]},
    )
    ax = pr.zeta_scores(z)
    (line,) = [ln for ln in ax.get_lines() if ln.get_label() == "mine"]
    np.testing.assert_allclose(line.get_ydata(), [0.2, 3.0, -1.5])
    with pytest.raises(ValueError, match="labels"):
        pr.zeta_scores(z, labels=["only one"])
    with pytest.raises(ValueError, match="scheme"):
        pr.zeta_scores(z.isel(scheme=0))


def test_reference_sensitivity_with_two_sets_and_observed(tree):
    nus = [4.0, 6.0, 10.0]
    refs = xr.concat(
        [
            uqviz.simulated_reference(
                tree, statistic="ENCE", generative=f"t{nu:g}", n_mc=100, n_bins=10, rng=0
            )
            for nu in nus
        ],
        dim=xr.DataArray(nus, dims="nu", name="nu"),
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # |z0| > 1 of the binned bootstrap
        obs = uqviz.validate_simulated(
            tree, statistic="ENCE", n_mc=50, n_boot=200, n_bins=10, rng=0
        )
    ax = pr.reference_sensitivity(refs, observed=obs, labels=["Set A", "Set B"])
    conts = ax.containers  # errorbar containers, one per dataset
    assert len(conts) == 2
    np.testing.assert_allclose(conts[1].lines[0].get_ydata(), refs["reference"].sel(dataset="b"))
    np.testing.assert_allclose(conts[0].lines[0].get_xdata(), nus)
    hlines = [ln for ln in ax.get_lines() if ln.get_label().startswith("observed")]
    assert [ln.get_ydata()[0] for ln in hlines] == pytest.approx(obs.estimate.values.tolist())
    assert ax.get_title() == "ENCE"
    with pytest.raises(ValueError, match="'nu'"):
        pr.reference_sensitivity(refs.isel(nu=0))


def test_reference_distribution_from_both_result_layouts():
    ds = uqviz.synthetic.nig(1000, nu=6, rng=2)
    ref = uqviz.simulated_reference(ds, statistic="CC", n_mc=200, rng=0, return_samples=True)
    ax = pr.reference_distribution(ref, observed=0.4)
    # one step patch holding the density histogram of the samples (200 // 15 = 13 bins)
    from matplotlib.patches import StepPatch

    steps = [p for p in ax.patches if isinstance(p, StepPatch)]
    density, edges = np.histogram(ref["samples"].values, bins=13, density=True)
    assert len(steps) == 1 and steps[0].get_label() == "simulated (calibrated)"
    np.testing.assert_allclose(steps[0].get_data().values, density)
    np.testing.assert_allclose(steps[0].get_data().edges, edges)
    assert float(np.sum(density * np.diff(edges))) == pytest.approx(1.0)
    vlines = {ln.get_label(): ln.get_xdata()[0] for ln in ax.get_lines()}
    assert vlines["reference (mean)"] == pytest.approx(float(ref["reference"]))
    assert vlines["observed"] == 0.4
    assert ax.get_xlabel() == "CC"
    with pytest.raises(ValueError, match="samples"):
        pr.reference_distribution(ref.drop_vars("samples"))


def test_size_dependence_plots():
    res = size_dependence(
        sizes=(1000, 2000, 4000),
        n_bins=(10, 20),
        nu=(4, 12),
        generative=("normal", "t6"),
        n_mc=20,
        rng=0,
    )
    ax = pr.size_dependence(res, statistic="ZMSE", generative="t6")
    pts = [ln for ln in ax.get_lines() if ln.get_label().startswith(r"$\nu$")]
    assert len(pts) == 2 and pts[0].get_xdata().size == 6
    fit = [ln for ln in ax.get_lines() if ln.get_label().startswith("fit")][0]
    f = res.sel(statistic="ZMSE", generative="t6", fit="linear")
    x = fit.get_xdata()
    np.testing.assert_allclose(fit.get_ydata(), float(f.intercept) + float(f.slope) * x)
    ax = pr.size_dependence(res, statistic="ENCE", generative="normal", kind="loglog")
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    assert ax.get_title() == "ENCE, NIG model"
    # default generative="normal" (the default of uqviz.size_dependence)
    assert pr.size_dependence(res, statistic="ENCE").get_title() == "ENCE, NIG model"
    with pytest.raises(ValueError, match="generative"):
        pr.size_dependence(res.sel(generative=["t6"]))
    with pytest.raises(ValueError, match="kind"):
        pr.size_dependence(res, generative="t6", kind="semilog")


def test_extrapolation_plot(tree, tmp_path):
    res = extrapolate(tree, statistic="ZMSE", method="ols")
    with pytest.raises(ValueError, match="choose one"):
        pr.extrapolation(res)
    ax = pr.extrapolation(res, dataset="b")
    assert ax.get_title() == "b"
    sel = res.sel(dataset="b")
    fitted = [ln for ln in ax.get_lines() if ln.get_label().endswith("(fitted)")][0]
    np.testing.assert_allclose(fitted.get_ydata(), sel.estimate.values[sel.in_fit.values])
    labels = [ln.get_label() for ln in ax.get_lines()]
    assert "NIG" in labels and "T6IG" in labels and "linear fit" in labels
    line = [ln for ln in ax.get_lines() if ln.get_label() == "linear fit"][0]
    assert line.get_ydata()[0] == pytest.approx(float(sel.intercept))  # starts at x = 0
    nig = [ln for ln in ax.get_lines() if ln.get_label() == "NIG"][0]
    assert nig.get_linestyle() == "--"
    ax.figure.savefig(tmp_path / "extrapolation.png")
    one = extrapolate(uqviz.synthetic.nig(3000, rng=0), method="ols", references=None)
    ax = pr.extrapolation(one)
    assert "NIG" not in [ln.get_label() for ln in ax.get_lines()]


def test_confidence_curve_plot(tree):
    res = confidence_curve(tree, n_mc=50, n_boot=50, rng=0)
    ax = pr.confidence_curve(res, dataset=0)
    assert ax.get_title() == "a"
    data = [ln for ln in ax.get_lines() if ln.get_label() == "data"][0]
    np.testing.assert_allclose(data.get_ydata(), res.estimate.sel(dataset="a"))
    np.testing.assert_allclose(data.get_xdata(), np.arange(100))
    assert {"oracle", "prob. reference (normal)"} <= {ln.get_label() for ln in ax.get_lines()}
    assert len(ax.collections) == 2  # reference band, bootstrap band
    ax = pr.confidence_curve(res, dataset="b", oracle=False, reference=False, percent=False)
    assert [ln.get_label() for ln in ax.get_lines()] == ["data"]
    assert ax.get_xlabel() == "fraction discarded"
    with pytest.raises(ValueError, match="unknown dataset"):
        pr.confidence_curve(res, dataset="c")
