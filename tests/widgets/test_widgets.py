"""ConditionalExplorer driven by setting the controls' values (no browser)."""

import numpy as np
import xarray as xr
import pytest

import uqviz
from uqviz.widgets.conditional import ConditionalExplorer


def _stratified(m, seed):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 25, m).astype(float)
    u = rng.uniform(0.5, 2.0, m)
    y = rng.random(m)
    y[0] = 100.0
    return uqviz.from_arrays(
        u * rng.standard_normal(m),
        u,
        features={"x": x, "y": y},
        metadata={"tag": np.array(["a"] * m)},
        name=f"set{seed}",
    )


@pytest.fixture
def explorer():
    return ConditionalExplorer(uqviz.synthetic.default_example(), n_boot=200)


def test_initial_state_single_dataset(explorer):
    ex = explorer
    assert ex.dataset.disabled and ex.dataset.layout.display == "none"
    assert list(ex.conditioning.options) == ["uE", "X"]
    assert ex.result.attrs["conditioning"] == "uE" and ex.result.attrs["statistic"] == "ZMS"
    assert ex.result.sizes["bin"] == 50  # min(round(sqrt(5000)), 5000 // 100)
    assert ex.result.attrs["n_boot"] == 200
    assert f"{float(ex.fv.estimate):.2f}" in ex.fv_label.value
    assert ex.ax is not None and "f_v" in ex.ax.get_title()
    assert ex.log_x.value is True and ex.ax.get_xscale() == "log"


def test_controls_drive_the_result(explorer):
    ex = explorer
    ex.n_bins.value = 25
    assert ex.result.sizes["bin"] == 25 and int(ex.result["count"].sum()) == 5000
    assert int(ex.fv.n_bins) == 25
    ex.conditioning.value = "X"
    assert ex.result.attrs["conditioning"] == "X" and ex.log_x.value is False
    assert ex.ax.get_xscale() == "linear"
    ex.statistic.value = "ZM"
    assert ex.result.attrs["statistic"] == "ZM" and float(ex.result.reference) == 0.0
    ex.statistic.value = "RCE"
    assert ex.result.attrs["statistic"] == "RCE"
    before = ex.result
    ex.log_x.value = True  # redraw only
    assert ex.result is before and ex.ax.get_xscale() == "log"
    # the same settings give the same numbers (fixed seed)
    ex.statistic.value = "ZMS"
    first = ex.result.ci_lower.values.copy()
    ex.n_bins.value = 30
    ex.n_bins.value = 25
    np.testing.assert_array_equal(ex.result.ci_lower, first)


def test_numbers_are_the_librarys_with_the_explorers_null_size_and_revisits_reuse_them(
    explorer, monkeypatch
):
    ex = explorer
    assert ex.n_mc == 2000 and ex.result.attrs["n_mc"] == 2000  # local_calibration's default
    # the explorer's numbers are local_calibration's with its n_boot, n_mc and seed
    lib = uqviz.local_calibration(uqviz.synthetic.default_example(), n_boot=200, rng=0)
    for name in ("estimate", "ci_lower", "ci_upper", "null_coverage"):
        np.testing.assert_array_equal(ex.result[name], lib[name])
    fv = uqviz.fraction_valid(lib)
    assert float(ex.fv["reference_lower"]) == float(fv["reference_lower"])
    first = ex.result
    # a setting visited again is taken from the cache, not recomputed
    import uqviz.widgets.conditional as module

    calls = []
    real = module.local_calibration
    monkeypatch.setattr(
        module,
        "local_calibration",
        lambda *a, **k: calls.append((k["statistic"], k["n_mc"])) or real(*a, **k),
    )
    ex.statistic.value = "ZM"  # the bins without the null (the figure), then the null
    ex.statistic.value = "ZMS"
    assert calls == [("ZM", 0), ("ZM", 2000)] and ex.result is first
    assert "f<sub>v</sub> = " in ex.fv_label.value
    ex.CACHE_SIZE = 1  # an evicted setting is computed again
    ex.statistic.value = "RCE"
    ex.statistic.value = "ZMS"
    assert calls[2:] == [("RCE", 0), ("RCE", 2000), ("ZMS", 0), ("ZMS", 2000)]
    assert ex.result is not first
    np.testing.assert_array_equal(ex.result["ci_lower"], first["ci_lower"])
    with pytest.raises(ValueError, match="n_mc"):
        ConditionalExplorer(uqviz.synthetic.default_example(), n_mc=0)


def test_the_figure_comes_before_the_null_and_the_verdict_after_it(explorer, monkeypatch):
    """The figure is drawn from the bins without the calibrated null (the same estimates and
    intervals as with it); the f_v verdict is stated only once the null is computed."""
    ex = explorer
    seen = []
    real = type(ex).redraw
    monkeypatch.setattr(
        type(ex),
        "redraw",
        lambda self: seen.append((self.fv_label.value, self.result, self.fv)) or real(self),
    )
    ex.n_bins.value = 17  # a setting not visited before
    ((label, drawn, fv),) = seen
    assert "calibrated reference: computing" in label and "accepted" not in label
    assert "null_coverage" not in drawn and "null_coverage" in ex.result
    for name in ("estimate", "ci_lower", "ci_upper", "valid"):
        np.testing.assert_array_equal(drawn[name], ex.result[name])
    for name in ("estimate", "ci_lower", "ci_upper", "n_valid", "n_bins"):  # the figure's f_v
        assert float(fv[name]) == float(ex.fv[name])
    assert "reference" not in fv and "reference" in ex.fv
    assert "accepted: " in ex.fv_label.value and "computing" not in ex.fv_label.value
    assert ex.timings["after"] > 0.0
    # the numbers without the null are not kept beside the final ones
    assert ex.is_cached(ex._settings()) and not ex.is_cached(("no null",) + ex._settings())
    ex.n_bins.value = 18
    ex.n_bins.value = 17  # visited again: the final numbers at once, nothing after the figure
    assert "accepted: " in seen[-1][0] and ex.timings["after"] == 0.0


def test_stratified_binning_uses_min_count():
    ds = _stratified(3000, 1)
    ex = ConditionalExplorer(ds, conditioning="x", binning="stratified", min_count=200, n_boot=200)
    assert ex.n_bins.disabled and not ex.min_count.disabled
    assert ex.result.attrs["binning"] == "stratified"
    assert int(ex.result["count"].min()) >= 200
    n_before = ex.result.sizes["bin"]
    ex.min_count.value = 400
    assert int(ex.result["count"].min()) >= 400 and ex.result.sizes["bin"] < n_before
    ex.binning.value = "equal_count"
    assert not ex.n_bins.disabled and ex.result.sizes["bin"] == ex.n_bins.value
    assert list(ex.conditioning.options) == ["uE", "x", "y"]  # metadata is not offered


def test_dataset_switch_and_errors_are_shown_not_raised():
    tree = uqviz.from_datasets(
        {"small": _stratified(1500, 2), "large": uqviz.synthetic.default_example()}
    )
    ex = ConditionalExplorer(tree, n_boot=200)
    assert not ex.dataset.disabled and list(ex.dataset.options) == ["small", "large"]
    ex.conditioning.value = "x"
    assert int(ex.result["count"].sum()) == 1500
    ex.dataset.value = "large"
    assert int(ex.result["count"].sum()) == 5000
    assert list(ex.conditioning.options) == ["uE", "X"] and ex.conditioning.value == "uE"
    ex.dataset.value = "small"
    ex.conditioning.value = "y"  # one isolated value: a one-point equal-width bin
    assert ex.result is not None
    ex.binning.value = "equal_width"
    # the error is shown, and .result holds no stale numbers of the previous setting
    assert "fewer than 2 points" in ex.message.value and ex.result is None and ex.fv is None
    # nor does the screen: the f_v read-out and the figure of that setting are cleared
    assert ex.fv_label.value == "" and ex.figure is None
    assert "fewer than 2 points" in ex.static_html() and "<img" not in ex.static_html()
    ex.binning.value = "equal_count"
    assert ex.result is not None and ex.result.attrs["binning"] == "equal_count"
    assert ex.message.value == "" or "&#9888;" in ex.message.value
    with pytest.raises(ValueError, match="not a numeric variable"):
        ConditionalExplorer(tree, conditioning="tag")


def test_widget_backend_without_a_widget_canvas_falls_back_to_inline(monkeypatch):
    import uqviz.widgets._display as wd

    monkeypatch.setattr(wd, "is_widget_backend", lambda: True)  # claims ipympl, canvas is Agg
    ex = ConditionalExplorer(uqviz.synthetic.default_example(), n_boot=200)
    assert ex._canvas_box.children == () and ex.ax is not None
    first = ex.figure
    ex.statistic.value = "ZM"
    # the inline figure (Agg, outside pyplot), redrawn in place
    assert ex.figure is first and "LZM" in ex.ax.get_ylabel()
    assert type(ex.figure.canvas).__name__ == "FigureCanvasAgg"


def test_default_explorer_emits_no_warning():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # 71 bins of 70 points warned before
        ex = ConditionalExplorer(uqviz.synthetic.default_example(), n_boot=200)
    assert ex.message.value == "" and ex.result.sizes["bin"] == 50
    with pytest.raises(TypeError, match="n_boot"):
        ConditionalExplorer(uqviz.synthetic.default_example(), n_boot="200")


def test_recalibration_control_shows_before_and_after(explorer):
    ex = explorer
    assert ex.recalibration.value == "none" and ex.result_before is None
    ex.conditioning.value = "X"
    plain = ex.result
    ex.recalibration.value = "bvs"  # BVS on the variable conditioned on, cross-fitted
    assert ex.result.attrs["conditioning"] == "X" and ex.result_before is not None
    np.testing.assert_array_equal(ex.result_before.estimate, plain.estimate)
    assert not bool(ex.fv_before.valid) and bool(ex.fv.valid)
    # the same as the public functions called directly
    rec = uqviz.recalibrate(ex.data, method="bvs", conditioning="X", rng=0)
    direct = uqviz.local_calibration(
        rec, conditioning="X", n_bins=ex.n_bins.value, n_boot=200, rng=0
    )
    np.testing.assert_array_equal(ex.result.ci_lower, direct.ci_lower)
    assert "before: f<sub>v</sub>" in ex.fv_label.value and "BVS on X" in ex.fv_label.value
    labels = [t.get_text() for t in ex.ax.get_legend().get_texts()]
    assert labels == [
        "reference (1)",
        f"before ({int(ex.fv_before.n_valid)}/50 bins valid)",
        f"after ({int(ex.fv.n_valid)}/50 bins valid)",
    ]
    assert ex.ax.get_title() == (
        f"$f_v$ = {float(ex.fv.estimate):.2f} after BVS on X, "
        f"{float(ex.fv_before.estimate):.2f} before"
    )
    ex.conditioning.value = "uE"
    ex.recalibration.value = "isotonic"
    assert "stratified" in ex.message.value and ex.result.attrs["conditioning"] == "uE"
    ex.recalibration.value = "none"
    assert ex.result_before is None and ex.fv_before is None
    assert "before:" not in ex.fv_label.value
    with pytest.raises(ValueError, match="recalibration"):
        ConditionalExplorer(uqviz.synthetic.default_example(), recalibration="quantile")


def test_recalibration_reuses_the_numbers_of_the_view_without_it(monkeypatch):
    """Choosing a method from the plain view computes the recalibrated data's numbers only:
    the "before" numbers are the plain view's, kept, and equal those computed afresh."""
    data = uqviz.synthetic.default_example()
    ex = ConditionalExplorer(data, n_boot=100, n_mc=50)
    calls = []
    local = ex._local
    monkeypatch.setattr(ex, "_local", lambda ds, n_mc: (calls.append(n_mc), local(ds, n_mc))[1])
    ex.recalibration.value = "scaling"
    assert calls == [0, 50]  # the recalibrated data, without then with the null
    fresh = ConditionalExplorer(data, n_boot=100, n_mc=50, recalibration="scaling")
    for a, b in (
        (ex.result_before, fresh.result_before),
        (ex.fv_before, fresh.fv_before),
        (ex.result, fresh.result),
        (ex.fv, fresh.fv),
    ):
        xr.testing.assert_identical(a, b)
    assert ex.fv_label.value == fresh.fv_label.value


def test_output_is_the_widget_with_a_static_copy_for_pages_without_kernel(explorer):
    """Jupyter shows the widget view; a static page (the site) the read-outs and the figure."""
    import base64

    bundle = explorer._repr_mimebundle_()
    view = bundle["application/vnd.jupyter.widget-view+json"]
    assert view["model_id"] == explorer.widget.model_id
    html = bundle["text/html"]
    assert explorer.fv_label.value in html  # the f_v read-out, verdict included
    svg = html.split("data:image/svg+xml;base64,")[1].split('"')[0]
    assert base64.b64decode(svg).startswith(b"<svg")
    explorer.conditioning.value = "X"  # the copy follows the current view
    assert explorer.fv_label.value in explorer._repr_mimebundle_()["text/html"]
