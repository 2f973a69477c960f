"""Average-calibration and Monte Carlo figures (Pernot (2024b), Figs. 1-8): artists and zones."""

import matplotlib.pyplot as plt
import numpy as np
import pytest
import xarray as xr
from matplotlib.collections import PolyCollection
from matplotlib.colors import same_color
from matplotlib.patches import Polygon, Rectangle, StepPatch

import uqviz
from uqviz import decimation_curve
from uqviz.experiments import statistic_bias
from uqviz.experiments import validation_probability as vp_study
from uqviz.plots import average as pt
from uqviz.plots import experiments as pe
from uqviz.average.nig import nig_skewness_curve


@pytest.fixture(scope="module")
def tree():
    return uqviz.from_datasets(
        {
            f"nu{nu:g}": uqviz.synthetic.nig(1500, nu=nu, rng=i)
            for i, nu in enumerate((3.0, 6.0, 20.0))
        }
    )


def _marker_lines(ax, marker):
    return [ln for ln in ax.lines if ln.get_marker() == marker and ln.get_linestyle() == "None"]


def _texts(ax):
    return [t.get_text() for t in ax.texts]


def _legend_texts(ax):
    return [t.get_text() for t in ax.get_legend().get_texts()]


# --------------------------------------------------------------------------
# skewness map (Fig. 6)
# --------------------------------------------------------------------------
def test_skewness_map_points_zones_curve_and_labels(tree):
    tail = uqviz.tailedness(tree)
    curve = nig_skewness_curve(nu=[2.0, 5.0, 20.0], size=5000, rng=0)
    ax = pt.skewness_map(tail, curve)
    (tri,) = _marker_lines(ax, "^")
    (sq,) = _marker_lines(ax, "s")
    np.testing.assert_allclose(tri.get_xdata(), tail.beta_gm.sel(variable="uE2").values)
    np.testing.assert_allclose(tri.get_ydata(), tail.beta_gm.sel(variable="E2").values)
    np.testing.assert_allclose(sq.get_ydata(), tail.beta_gm.sel(variable="Z2").values)
    # the NIG curve: one dot per nu
    nig = [ln for ln in ax.lines if ln.get_marker() == "o"]
    assert len(nig) == 1 and len(nig[0].get_xdata()) == 3
    np.testing.assert_allclose(nig[0].get_ydata(), curve.beta_gm.sel(variable="E2").values)
    # the two unsafe zones, at the thresholds of the result (0.6 for uE2, 0.8 for E2)
    zones = [p for p in ax.patches if isinstance(p, (Polygon, Rectangle))]
    assert len(zones) == 2
    extents = sorted(
        tuple(np.round(z.get_extents().transformed(ax.transData.inverted()).bounds, 6))
        for z in zones
    )
    assert any(np.isclose(e[0], 0.6) for e in extents)  # x from 0.6 (uE2)
    assert any(np.isclose(e[1], 0.8) for e in extents)  # y from 0.8 (E2, Z2)
    # each dataset labelled twice (E2 and Z2) by its set number; curve ends labelled
    texts = _texts(ax)
    assert sorted(t for t in texts if t.isdigit()) == ["1", "1", "2", "2", "3", "3"]
    assert "$\\nu$=2" in texts and "$\\nu$=20" in texts
    legend = _legend_texts(ax)
    assert any("0.6" in t and "RCE" in t for t in legend)
    assert any("0.8" in t and "ZMS" in t for t in legend)
    assert any(t.startswith("NIG model") for t in legend)
    assert ax.get_xlim() == (0.0, 1.0) and ax.get_ylim()[1] == 1.0


def test_skewness_map_names_without_curve_or_z2_on_given_axes(tree):
    tail = uqviz.tailedness(tree)
    fig, ax = plt.subplots()
    assert pt.skewness_map(tail, ax=ax, labels="name", z2=False) is ax
    assert _marker_lines(ax, "s") == []
    assert sorted(_texts(ax)) == ["nu20", "nu3", "nu6"]
    assert not any(ln.get_marker() == "o" for ln in ax.lines)
    with pytest.raises(ValueError, match="3 datasets"):
        pt.skewness_map(tail, labels=["a", "b"])
    single = uqviz.tailedness(tree["nu3"].to_dataset())
    ax = pt.skewness_map(single)
    assert len(_marker_lines(ax, "^")[0].get_xdata()) == 1


def test_skewness_map_labels_do_not_overlap():
    # four datasets at almost the same place: their labels must be moved apart
    beta = np.array(
        [[0.40, 0.80, 0.70], [0.401, 0.801, 0.701], [0.402, 0.799, 0.702], [0.399, 0.802, 0.699]]
    )
    tail = xr.Dataset(
        {"beta_gm": (("dataset", "variable"), beta)},
        coords={"dataset": list("abcd"), "variable": ["uE2", "E2", "Z2"]},
    )
    fig, ax = plt.subplots(figsize=(5, 5))
    pt.skewness_map(tail, ax=ax, legend=False)
    fig.canvas.draw()
    r = fig.canvas.get_renderer()
    boxes = [t.get_window_extent(r) for t in ax.texts if t.get_text().isdigit()]
    assert len(boxes) == 8
    for i in range(len(boxes)):
        for j in range(i):
            assert not boxes[i].shrunk(0.9, 0.8).overlaps(boxes[j].shrunk(0.9, 0.8)), (i, j)


# --------------------------------------------------------------------------
# zeta comparison (Fig. 7)
# --------------------------------------------------------------------------
def _zeta_result(zeta):
    zeta = np.asarray(zeta, dtype=float)
    return xr.Dataset(
        {"zeta": (("dataset", "statistic"), zeta)},
        coords={"dataset": [f"set{i}" for i in range(len(zeta))], "statistic": ["ZMS", "RCE"]},
    )


def test_zeta_comparison_points_zones_identity_and_labels():
    res = _zeta_result([[-0.3, 0.5], [1.7, -0.2], [-0.1, 1.01], [3.5, 0.96], [1.2, 1.2]])
    ax = pt.zeta_comparison(res)
    (pts,) = _marker_lines(ax, "o")
    np.testing.assert_allclose(pts.get_xdata(), [0.3, 1.7, 0.1, 3.5, 1.2])
    np.testing.assert_allclose(pts.get_ydata(), [0.5, 0.2, 1.01, 0.96, 1.2])
    zones = [c for c in ax.collections if isinstance(c, PolyCollection)]
    assert len(zones) == 2
    bounds = sorted(np.round(z.get_paths()[0].get_extents().bounds, 6).tolist() for z in zones)
    lim = ax.get_xlim()[1]
    assert lim == 4.0 and ax.get_ylim() == ax.get_xlim()
    # [x0, y0, w, h]: one zone is x <= 1 & y > 1, the other x > 1 & y <= 1
    assert any(np.isclose(b[0] + b[2], 1.0) and np.isclose(b[1], 1.0) for b in bounds)
    assert any(np.isclose(b[0], 1.0) and np.isclose(b[1] + b[3], 1.0) for b in bounds)
    diag = [ln for ln in ax.lines if ln.get_linestyle() == "--"]
    assert len(diag) == 1 and np.allclose(diag[0].get_xdata(), diag[0].get_ydata())
    texts = _texts(ax)
    assert sorted(t for t in texts if t.isdigit()) == ["1", "2", "3", "4", "5"]
    assert "ZMS validates, RCE rejects" in texts and "ZMS rejects, RCE validates" in texts
    assert ax.get_xlabel() == r"$|\zeta_{ZMS}|$" and ax.get_ylabel() == r"$|\zeta_{RCE}|$"


def test_zeta_comparison_large_values_nan_and_real_result(tree):
    res = _zeta_result([[10.0, 0.5], [np.nan, 1.0], [0.2, 0.1]])
    ax = pt.zeta_comparison(res, labels="name")
    assert ax.get_xlim()[1] == pytest.approx(10.8)
    assert len(_marker_lines(ax, "o")[0].get_xdata()) == 2
    assert "1 undefined zeta not shown" in _texts(ax)
    assert {"set0", "set2"} <= set(_texts(ax))
    va = uqviz.validate_average(tree, n_boot=300, rng=0)
    ax = pt.zeta_comparison(va, statistics=("RCE", "ZMS"), limit=5.0, legend=False)
    assert ax.get_xlim()[1] == 5.0 and ax.get_xlabel() == r"$|\zeta_{RCE}|$"
    assert len(_marker_lines(ax, "o")[0].get_xdata()) == 3
    with pytest.raises(ValueError, match="not in the result"):
        pt.zeta_comparison(va, statistics=("ZMS", "NLL"))


# --------------------------------------------------------------------------
# decimation curves (Fig. 8)
# --------------------------------------------------------------------------
def test_decimation_curves_lines_and_ci_bars(tree):
    res = decimation_curve(tree, n_boot=300, rng=0)
    with pytest.raises(ValueError, match="choose one"):
        pt.decimation_curves(res)
    ax = pt.decimation_curves(res, dataset="nu3")
    curves = [ln for ln in ax.lines if ln.get_marker() == "o"]
    assert len(curves) == 2
    r = res.sel(dataset="nu3")
    for ln, s in zip(curves, ["ZMS", "RCE"]):
        np.testing.assert_allclose(ln.get_xdata(), 100 * res.fraction.values)
        np.testing.assert_allclose(ln.get_ydata(), r.delta.sel(statistic=s).values)
    bars = [p for p in ax.patches if isinstance(p, Rectangle)]
    assert len(bars) == 2
    for b, s in zip(bars, ["ZMS", "RCE"]):
        lo = float(r.ci_lower_halfwidth.sel(statistic=s))
        hi = float(r.ci_upper_halfwidth.sel(statistic=s))
        assert b.get_y() == pytest.approx(lo) and b.get_height() == pytest.approx(hi - lo)
        assert b.get_x() + b.get_width() < 0.0  # left of k = 0
    assert ax.get_title() == "nu3"
    assert _legend_texts(ax)[:2] == [r"$\Delta$ ZMS", r"$\Delta$ RCE"]
    ax = pt.decimation_curves(res, dataset=2, statistics=["RCE"], title="Set 3", legend=False)
    assert ax.get_title() == "Set 3" and ax.get_legend() is None
    assert len([p for p in ax.patches if isinstance(p, Rectangle)]) == 1


# --------------------------------------------------------------------------
# validation probability (Fig. 5)
# --------------------------------------------------------------------------
@pytest.mark.parametrize("scenario, var", [("NIG", "uE2"), ("TIG", "E2")])
def test_validation_probability_bars_target_and_top_axis(scenario, var):
    nu = [2.5, 4.0, 10.0]
    res = vp_study(
        scenario=scenario, nu=nu, n_datasets=12, size=200, n_boot=200, rng=1, progress=False
    )
    ax = pe.validation_probability(res)
    assert len(ax.containers) == 2  # ZMS, RCE with Wilson bars
    for c, s in zip(ax.containers, ["ZMS", "RCE"]):
        np.testing.assert_allclose(
            c.lines[0].get_ydata(), res.validation_probability.sel(statistic=s).values
        )
        seg = c.lines[2][0].get_segments()
        np.testing.assert_allclose(
            [sg[0][1] for sg in seg], res.validation_probability_lower.sel(statistic=s).values
        )
        np.testing.assert_allclose(
            [sg[1][1] for sg in seg], res.validation_probability_upper.sel(statistic=s).values
        )
    assert any(np.allclose(ln.get_ydata(), 0.95) for ln in ax.lines)
    assert ax.get_xscale() == "log"
    assert [t.get_text() for t in ax.get_xticklabels()] == ["2.5", "4", "10"]
    (top,) = ax.child_axes
    labels = [t.get_text() for t in top.get_xticklabels()]
    assert labels == [f"{b:.2f}" for b in res.beta_gm.sel(variable=var).values]
    assert ("u_E^2" if var == "uE2" else "E^2") in top.get_xlabel()
    assert ax.get_xlabel() == (r"$\nu_{IG}$" if scenario == "NIG" else r"$\nu_D$")
    assert scenario in ax.get_title() and "N = 12" in ax.get_title()


# --------------------------------------------------------------------------
# bias against skewness (Figs. 4 and 11)
# --------------------------------------------------------------------------
@pytest.fixture(scope="module")
def bias():
    return statistic_bias(
        nu_ig=[3.0, 10.0], nu_d=[4.0, 20.0, np.inf], n_datasets=15, size=300, rng=0, progress=False
    )


def test_bias_vs_skewness_points_bars_and_sign(bias):
    ax = pe.bias_vs_skewness(bias, statistic="RCE")
    assert len(ax.containers) == 2  # one series per nu_ig
    c = ax.containers[0]
    r = bias.sel(statistic="RCE", nu_ig=3.0)
    x, y = c.lines[0].get_xdata(), c.lines[0].get_ydata()
    order = np.argsort(r.beta_gm.sel(variable="E2").values)
    np.testing.assert_allclose(x, r.beta_gm.sel(variable="E2").values[order])
    np.testing.assert_allclose(y, r["estimate"].values[order])
    seg = c.lines[2][0].get_segments()
    np.testing.assert_allclose([s[1][1] - s[0][1] for s in seg], 4 * r.se.values[order])
    assert any(np.allclose(ln.get_ydata(), 0.0) for ln in ax.lines)
    assert ax.get_ylabel() == "RCE" and "E^2" in ax.get_xlabel()
    assert any(isinstance(p, (Polygon, Rectangle)) for p in ax.patches)  # beta > 0.8 zone
    assert _legend_texts(ax)[-2:] == ["3", "10"]


def test_bias_vs_skewness_zms_is_one_minus_zms(bias):
    ax = pe.bias_vs_skewness(bias, statistic="ZMS", color_by="nu_d", bars="sd", coverage_factor=1)
    assert len(ax.containers) == 3
    r = bias.sel(statistic="ZMS", nu_d=4.0)
    y = ax.containers[0].lines[0].get_ydata()
    order = np.argsort(r.beta_gm.sel(variable="Z2").values)
    np.testing.assert_allclose(y, 1.0 - r["estimate"].values[order])
    assert ax.get_ylabel() == "1 - ZMS" and "Z^2" in ax.get_xlabel()
    assert "s.d." in ax.get_legend().get_title().get_text()
    with pytest.raises(ValueError, match="unknown statistic"):
        pe.bias_vs_skewness(bias, statistic="ENCE")
    with pytest.raises(ValueError, match="bars"):
        pe.bias_vs_skewness(bias, bars="var")


# --------------------------------------------------------------------------
# fit histograms (Figs. 1-2)
# --------------------------------------------------------------------------
@pytest.fixture(scope="module")
def shapes(tree):
    return uqviz.distribution_shapes(tree)


def test_fit_histogram_uE2_histogram_and_ig_density(tree, shapes):
    ax = pt.fit_histogram(tree, shapes, variable="uE2", dataset="nu6")
    steps = [p for p in ax.patches if isinstance(p, StepPatch)]
    assert len(steps) == 2  # filled bars + outline
    values, edges = steps[0].get_data()[:2]
    assert len(values) == 33 and np.all(np.diff(np.log(edges)) > 0)
    # a density of ln(uE^2): integrates to 1 over ln x
    assert np.sum(values * np.diff(np.log(edges))) == pytest.approx(1.0)
    assert ax.get_xscale() == "log"
    (fit,) = ax.lines
    nu = float(shapes.nu.sel(dataset="nu6", variable="uE2"))
    assert f"{nu:.3g}" in fit.get_label() and "Gamma^{-1}" in fit.get_label()
    assert ax.get_title() == "nu6" and "u_E^2" in ax.get_xlabel()


def test_fit_histogram_e2_adds_the_nig_density(tree, shapes):
    ax = pt.fit_histogram(
        tree,
        shapes,
        variable="E2",
        implied=uqviz.nig_implied_shape(shapes),
        dataset=0,
        n_bins=20,
        title="Set 1",
    )
    assert len(ax.lines) == 2
    labels = _legend_texts(ax)
    assert labels[0].startswith("data (1500 points")
    assert labels[1].startswith("$F(1,\\nu)$ fit") and labels[2].startswith("NIG model")
    nu_u = float(shapes.nu.sel(dataset="nu3", variable="uE2"))
    assert f"2$\\times${nu_u:.3g}" in labels[2]
    assert ax.get_title() == "Set 1"
    ax = pt.fit_histogram(tree, shapes, variable="Z2", dataset="nu3", legend=False)
    assert len(ax.lines) == 1 and ax.get_legend() is None


def test_fit_histogram_single_fits_zero_values_and_errors(tree, shapes):
    e = np.r_[np.zeros(5), uqviz.synthetic.nig(500, nu=5, rng=2)["E"].values]
    ds = uqviz.from_arrays(e, np.full(e.size, 0.3))
    ax = pt.fit_histogram(ds, uqviz.fit_f(ds, variable="E2"), variable="E2")
    assert len(ax.lines) == 1  # no uE2 fit: no NIG curve
    assert "5 zeros not shown" in _legend_texts(ax)[0]
    with pytest.raises(ValueError, match="unknown dataset"):
        pt.fit_histogram(tree, shapes, variable="E2", dataset="nu7")
    with pytest.raises(ValueError, match="n_bins"):
        pt.fit_histogram(ds, uqviz.fit_f(ds, variable="E2"), variable="E2", n_bins=0)
    with pytest.raises(TypeError, match="n_bins"):
        pt.fit_histogram(ds, uqviz.fit_f(ds, variable="E2"), variable="E2", n_bins="10")
    with pytest.raises(ValueError, match="not 'uE2'"):
        pt.fit_histogram(ds, uqviz.fit_f(ds, variable="E2"), variable="uE2")
    with pytest.raises(ValueError, match="variable must be"):
        pt.fit_histogram(ds, shapes, variable="Z")


def test_fit_histogram_of_a_tree_draws_every_dataset(tree, shapes):
    # a tree with several datasets and no dataset=: one outlined histogram and one fit each
    implied = uqviz.nig_implied_shape(shapes)
    ax = pt.fit_histogram(tree, shapes, variable="E2", implied=implied, n_bins=20)
    steps = [p for p in ax.patches if isinstance(p, StepPatch)]
    assert len(steps) == 3 and len(ax.lines) == 6  # 3 fits + 3 NIG curves
    names = ["nu3", "nu6", "nu20"]
    labels = _legend_texts(ax)
    assert [t.split(" (")[0] for t in labels[::3]] == names
    for step, name in zip(steps, names):
        values, edges = step.get_data()[:2]
        assert len(values) == 20
        e = tree[name].to_dataset()["E"].values
        assert np.sum(values * np.diff(np.log(edges))) == pytest.approx(
            np.mean(e != 0), rel=1e-12
        )  # a density of ln(E^2) of that set
    fits = [ln for ln in ax.lines if "fit" in ln.get_label()]
    for ln, name in zip(fits, names):
        nu = float(shapes.nu.sel(dataset=name, variable="E2"))
        assert f"{nu:.3g}" in ln.get_label()
    assert steps[1].get_edgecolor() == fits[1].get_color() or same_color(
        steps[1].get_edgecolor(), fits[1].get_color()
    )


def test_fit_histogram_draws_the_given_nig_law_and_computes_nothing(tree, shapes, monkeypatch):
    # the plot draws what it is given: no NIG curve unless the caller passes it
    import uqviz.average.nig as nig_module

    implied = uqviz.nig_implied_shape(shapes)
    monkeypatch.setattr(
        nig_module,
        "nig_implied_shape",
        lambda *a, **k: pytest.fail("the plot computed nig_implied_shape"),
    )
    ax = pt.fit_histogram(tree, shapes, variable="E2", dataset="nu6")
    assert len(ax.lines) == 1
    ax = pt.fit_histogram(tree, shapes, variable="E2", dataset="nu6", implied=implied)
    (nig,) = [ln for ln in ax.lines if ln.get_label().startswith("NIG model")]
    nu_n = float(implied.nu.sel(dataset="nu6"))
    assert f"2$\\times${nu_n / 2:.3g}" in nig.get_label()
    with pytest.raises(ValueError, match="defined for E2"):
        pt.fit_histogram(tree, shapes, variable="uE2", dataset="nu6", implied=implied)
    assert not hasattr(pt, "nig_implied_shape")


def test_bias_vs_skewness_of_nll_draws_its_deviation():
    res = statistic_bias(
        nu_ig=[4.0],
        nu_d=[6.0, 20.0],
        n_datasets=10,
        size=200,
        rng=1,
        progress=False,
        statistics=("ZMS", "NLL"),
    )
    ax = pe.bias_vs_skewness(res, statistic="NLL")
    y = ax.containers[0].lines[0].get_ydata()
    r = res.sel(statistic="NLL", nu_ig=4.0)
    order = np.argsort(r.beta_gm.sel(variable="E2").values)
    np.testing.assert_allclose(y, r["bias"].values[order])
    assert ax.get_ylabel() == "NLL - reference"


def test_validation_probability_of_one_draws_despite_rounding():
    """p_val = 1 with a Wilson upper bound rounded just below 1: no negative error bar."""
    res = vp_study(
        scenario="NIG", nu=[10.0], n_datasets=12, size=200, n_boot=200, rng=1, progress=False
    )
    res["validation_probability"][:] = 1.0
    res["validation_probability_upper"][:] = 1.0 - 1e-12
    ax = pe.validation_probability(res)
    seg = ax.containers[0].lines[2][0].get_segments()
    assert seg[0][1][1] == pytest.approx(1.0)
