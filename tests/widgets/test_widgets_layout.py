"""The explorers' figures and layout (issue 25, items 1 and 3): fixed margins, a PNG rendered
once, legends outside the data, one title style, a figure inside a 1280 x 800 view, controls
whose width no message changes, read-outs before the figure."""

import base64
import struct
import xml.etree.ElementTree as ET

import matplotlib
import numpy as np
import pytest

import uqviz
from uqviz.plots._style import TITLE_STYLE
from uqviz.widgets import _display as wd
from uqviz.widgets.conditional import ConditionalExplorer
from uqviz.widgets.reference import ReferenceExplorer


def _data(m=2000, seed=0, ties=False):
    """NIG-like errors with a long-named feature (the widest legend and label)."""
    rng = np.random.default_rng(seed)
    u = rng.uniform(0.2, 1.0, m)
    if ties:
        u = np.round(u, 1)  # 9 distinct values: equal-count bins split ties (a long warning)
    x = rng.random(m)
    return uqviz.from_arrays(
        u * rng.standard_normal(m) * (0.5 + x), u, features={"hetero_fraction": x}, name="set"
    )


@pytest.fixture(scope="module")
def conditional():
    return ConditionalExplorer(_data(), n_boot=100)


@pytest.fixture(scope="module")
def reference():
    return ReferenceExplorer(_data(), n_mc=60, n_boot=60)


def _png_size(png):
    """(width, height) read from the PNG's IHDR chunk."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and png[12:16] == b"IHDR"
    return struct.unpack(">II", png[16:24])


def _check_figure(ex):
    """Fixed margins, no layout engine, the PNG shown is the figure's, within the budget."""
    fig, ax = ex.figure, ex.ax
    assert fig.get_layout_engine() is None
    w, h = fig.get_size_inches()
    pos = ax.get_position()
    m = wd.MARGINS_INCHES
    np.testing.assert_allclose(
        [pos.x0 * w, (1 - pos.x1) * w, pos.y0 * h, (1 - pos.y1) * h],
        [m["left"], m["right"], m["bottom"], m["top"]],
        atol=1e-9,
    )
    # the Output widget shows one SVG of the figure's pixel size (the PNG, rendered when
    # asked for, has it too)
    assert _png_size(ex.png) == (840, 440) == tuple(int(v) for v in fig.bbox.size)
    assert 840 <= wd.FIGURE_BUDGET_PX[0] and 440 <= wd.FIGURE_BUDGET_PX[1]
    (shown,) = ex.output.outputs
    assert shown["data"]["image/svg+xml"] == ex.svg and "image/png" not in shown["data"]
    root = ET.fromstring(ex.svg)
    assert (root.get("width"), root.get("height")) == ("840", "440")
    # every text inside the image; the legend's right of the axes (over no bin)
    ns = "{http://www.w3.org/2000/svg}"
    texts = [
        (float(t.get("x")), float(t.get("y")), "".join(t.itertext()))
        for t in root.iter(f"{ns}text")
    ]
    assert all(0 <= x <= 840 and 0 <= y <= 440 for x, y, _ in texts)
    labels = [label for _, _, label in ex._draw_svg(wd.svg_layout(ex.figsize)).legend_items]
    legend = [x for x, _, s in texts if s in labels]
    assert legend and min(legend) >= 840 - wd.MARGINS_INCHES["right"] * 100 + 5


def _check_not_clipped(ex, markers=True):
    """Legend right of the axes (over no bin), every artist inside the PNG, labels beside
    (not over) the tick labels."""
    fig, ax = ex.figure, ex.ax
    renderer = fig.canvas.get_renderer()
    fig.canvas.draw()
    box = ax.get_window_extent(renderer)
    leg = ax.get_legend().get_window_extent(renderer)
    assert leg.x0 >= box.x1 + 5, (leg, box)  # outside the data area
    assert leg.x1 <= fig.bbox.x1 and leg.y1 <= fig.bbox.y1  # and inside the PNG
    if markers:  # no bin's marker under the legend
        xy = np.vstack(
            [
                ax.transData.transform(line.get_xydata())
                for line in ax.get_lines()
                if line.get_marker() == "o" and len(line.get_xdata())
            ]
        )
        assert xy.shape[0] >= 10
        inside = (
            (xy[:, 0] >= leg.x0)
            & (xy[:, 0] <= leg.x1)
            & (xy[:, 1] >= leg.y0)
            & (xy[:, 1] <= leg.y1)
        )
        assert not inside.any()
    tight = fig.get_tightbbox(renderer)  # inches
    assert tight.x0 >= -0.01 and tight.y0 >= -0.01, tight  # inches, nothing cut off
    assert tight.x1 <= fig.get_figwidth() + 0.01 and tight.y1 <= fig.get_figheight() + 0.01
    ticks_x = [t.get_window_extent(renderer) for t in ax.get_xticklabels() if t.get_text()]
    ticks_y = [t.get_window_extent(renderer) for t in ax.get_yticklabels() if t.get_text()]
    xl, yl = (a.label.get_window_extent(renderer) for a in (ax.xaxis, ax.yaxis))
    assert ticks_x and ticks_y and xl.width > 0 and yl.height > 0
    assert xl.y1 <= min(b.y0 for b in ticks_x)  # x label under the tick labels
    assert yl.x1 <= min(b.x0 for b in ticks_y)  # y label left of them


def test_conditional_figure_fixed_margins_png_once_nothing_clipped(conditional):
    ex = conditional
    # PICP: its legend covered the invalid bin of the upper right before
    views = [
        dict(),
        dict(statistic="PICP"),
        dict(statistic="ZMS", conditioning="hetero_fraction"),
        dict(recalibration="bvs"),
        dict(recalibration="none", conditioning="uE"),
    ]
    for view in views:
        for name, value in view.items():
            getattr(ex, name).value = value
        assert all(ex.result.attrs.get(k, v) == v for k, v in view.items())
        _check_figure(ex)
        _check_not_clipped(ex)


def test_reference_figure_fixed_margins_png_once_nothing_clipped(reference):
    ex = reference
    for stat in ("ENCE", "CC", "ZMS"):
        ex.statistic.value = stat
        _check_figure(ex)
        _check_not_clipped(ex, markers=False)
        assert ex.ax.get_legend().get_texts()[0].get_text() == "simulated (calibrated)"
    ex.statistic.value = "ENCE"


def test_one_title_style_in_every_view(conditional, reference):
    ex = conditional
    ex.recalibration.value = "none"
    plain = ex.ax.title
    assert plain.get_text().startswith("$f_v$ = ")
    styles = [plain]
    ex.recalibration.value = "scaling"
    after = ex.ax.title
    assert after.get_text() == (
        f"$f_v$ = {float(ex.fv.estimate):.2f} after scaling, "
        f"{float(ex.fv_before.estimate):.2f} before"
    )
    styles += [after, reference.ax.title]
    for title in styles:
        assert title.get_fontsize() == TITLE_STYLE["fontsize"] == 9
        assert (
            title.get_fontweight(),
            title.get_fontstyle(),
            title.get_fontfamily(),
            title.get_color(),
            title.get_horizontalalignment(),
        ) == (
            plain.get_fontweight(),
            plain.get_fontstyle(),
            plain.get_fontfamily(),
            plain.get_color(),
            "center",
        )
    for ax in (ex.ax, reference.ax):  # no left/right title in another style
        assert ax.get_title(loc="left") == ax.get_title(loc="right") == ""
    ex.recalibration.value = "none"


def _layout_values(layout):
    return {k: getattr(layout, k) for k in ("width", "min_width", "max_width", "flex")}


def test_a_long_message_does_not_change_the_control_column():
    ex = ConditionalExplorer(_data(2000, 1, ties=True), n_boot=60, n_bins=5)
    before = _layout_values(ex.controls.layout)
    controls = [_layout_values(c.layout) for c in ex.controls.children]
    ex.n_bins.value = 20  # 20 equal-count bins of 9 tied uE values: a long warning
    assert "splits" in ex.message.value and len(ex.message.value) > 200
    ex.show_error(ValueError("n_bins = 19 of equal width: " + "a long error message " * 40))
    assert "color:#d62728" in ex.message.value and ex.figure is None
    ex.n_bins.value = 5
    width = wd.CONTROL_COLUMN_WIDTH
    assert (
        before
        == _layout_values(ex.controls.layout)
        == {"width": width, "min_width": width, "max_width": width, "flex": "0 0 auto"}
    )
    assert [_layout_values(c.layout) for c in ex.controls.children] == controls
    for ctrl in ex.controls.children[:-1]:  # each control: ipywidgets' inline width, fixed
        assert (ctrl.layout.width, ctrl.layout.flex) == ("300px", "0 0 auto")
    # the message is the last child of the column, stretched to its width (less its margins:
    # "auto", not the column's width, which overflowed it by 2 px in the browser), wrapping
    assert ex.controls.children[-1] is ex.message and ex.message.layout.width == "auto"
    assert ex.message.value.startswith("<div style='white-space:normal;overflow-wrap:anywhere;")
    # the read-out above the figure: stretched to the figure's column, never wider
    assert ex.fv_label.layout.width == "auto"
    (row,) = ex.widget.children
    column, view = row.children
    assert column is ex.controls and view.children[0] is ex.fv_label
    # the figure's 840 px and the Output widget's margins: the image is not scaled down
    assert view.layout.width == "844px" and row.layout.flex_flow == "row wrap"
    # 316 px of controls + 844 px of figure + 16 px between them: 1176 px <= 1280 px
    assert int(width[:-2]) + 844 + 16 <= 1280 - 2 * 50


def test_readouts_are_set_before_the_image(monkeypatch, conditional, reference):
    events = []
    show = wd.show_svg
    monkeypatch.setattr(wd, "show_svg", lambda *a: (events.append("image"), show(*a)))
    for ex, readout in ((conditional, "fv_label"), (reference, "summary")):
        getattr(ex, readout).observe(lambda ch, r=readout: events.append(r), names="value")
        events.clear()
        ex.n_bins.value = ex.n_bins.value + 1
        # the conditional explorer's f_v verdict follows the figure (the calibrated null)
        assert events == [readout, "image"] + ([readout] if ex is conditional else []), events
        t = ex.timings
        assert set(t) == {"compute", "figure", "render", "show", "after"}
        # SVG: built ("figure"), no Agg rendering (the browser rasterises it)
        assert t["compute"] > 0 and t["figure"] > 0 and t["render"] == 0 and t["show"] >= 0
        assert (t["after"] > 0) == (ex is conditional)
    events.clear()
    conditional.log_x.value = not conditional.log_x.value  # a redraw only: no computation
    assert events == ["image"] and conditional.timings["compute"] == 0.0
    assert conditional.timings["figure"] > 0.0  # a view not drawn before
    conditional.log_x.value = not conditional.log_x.value  # drawn before: its SVG shown
    assert conditional.timings["render"] == conditional.timings["figure"] == 0.0
    # the figure and Axes are built when asked for: those of the view shown
    assert conditional.ax.get_xscale() == ("log" if conditional.log_x.value else "linear")


def test_a_view_drawn_before_shows_the_png_a_fresh_figure_gives():
    """The image kept for a view visited again is the fresh view's (SVG markup; PNG pixel for
    pixel), for every view of both explorers (statistic, variable, log x, recalibration;
    statistic, D) and both renderers."""
    import itertools

    import ipywidgets

    states = list(
        itertools.product(
            ("ZMS", "PICP"), ("uE", "hetero_fraction"), (False, True), ("none", "scaling")
        )
    )
    for renderer in wd.RENDERERS:
        ex = ConditionalExplorer(_data(), n_boot=60, n_mc=20, renderer=renderer)
        for _ in range(2):  # the second pass shows the kept images
            for stat, cond, log_x, recal in states:
                ex.statistic.value, ex.conditioning.value = stat, cond
                ex.log_x.value, ex.recalibration.value = log_x, recal
                assert _shown(ex) == _fresh(ex), (renderer, stat, cond, log_x, recal)
        assert ex.timings["render"] == ex.timings["figure"] == 0.0
        # the figure built on demand is the view shown
        assert (
            wd.render_png(ex.figure)
            == ex.png
            == wd.draw_inline(ipywidgets.Output(), ex.figsize, ex._draw)[2]
        )
        ref = ReferenceExplorer(_data(), n_mc=20, n_boot=20, renderer=renderer)
        for _ in range(2):
            for stat, gen in (("ZMS", "normal"), ("ENCE", "t"), ("ZMS", "t")):
                ref.statistic.value, ref.generative.value = stat, gen
                assert _shown(ref) == _fresh(ref), (renderer, stat, gen)
        assert ref.timings["render"] == ref.timings["figure"] == 0.0


def _shown(ex):
    """The image the explorer's Output widget shows (SVG markup or PNG bytes)."""
    (shown,) = ex.output.outputs
    data = shown["data"]
    return data["image/svg+xml"] if "image/svg+xml" in data else base64.b64decode(data["image/png"])


def _fresh(ex):
    """The current view drawn afresh by the explorer's renderer."""
    import ipywidgets

    if ex.renderer == "svg":
        return ex._draw_svg(wd.svg_layout(ex.figsize)).svg()
    return wd.draw_inline(ipywidgets.Output(), ex.figsize, ex._draw)[2]


def test_static_copy_is_the_image_shown(conditional):
    html = conditional.static_html()
    svg = base64.b64decode(html.split("data:image/svg+xml;base64,")[1].split('"')[0])
    assert svg.decode() == conditional.svg and "image/png" not in html
    ex = ConditionalExplorer(_data(), n_boot=60, n_mc=20, renderer="matplotlib")
    png = base64.b64decode(ex.static_html().split("data:image/png;base64,")[1].split('"')[0])
    assert png == ex.png and ex.svg is None


def test_renderer_is_checked():
    with pytest.raises(ValueError, match="renderer"):
        ConditionalExplorer(_data(), n_boot=60, renderer="png")


@pytest.mark.filterwarnings("ignore:Passing unrecognized arguments:DeprecationWarning")
def test_widget_backend_draws_in_place_with_fixed_margins():
    import matplotlib.pyplot as plt

    previous = matplotlib.get_backend()  # before importing ipympl, which switches to itself
    try:
        pytest.importorskip("ipympl")
    finally:
        plt.switch_backend(previous)
    plt.switch_backend("module://ipympl.backend_nbagg")
    try:
        ex = ConditionalExplorer(_data(1500, 2), n_boot=60)
        fig = ex.figure
        assert ex._canvas_box.children == (fig.canvas,) and ex.png is None
        assert fig.get_layout_engine() is None
        assert ex.ax.get_position().x0 * fig.get_figwidth() == pytest.approx(
            wd.MARGINS_INCHES["left"]
        )
        ex.statistic.value = "ZM"  # the same canvas, redrawn
        assert ex.figure is fig and "LZM" in ex.ax.get_ylabel()
        assert ex.timings["render"] == 0.0 and ex.output.outputs == ()
        assert "<img" in ex.static_html()  # rendered on demand for the static copy
        plt.close(fig)
    finally:
        plt.switch_backend(previous)


def test_figsize_must_leave_room_inside_the_margins():
    with pytest.raises(ValueError, match=r"figsize 3 x 2 in .* at least 4 x 1.87 in"):
        ConditionalExplorer(_data(), n_boot=60, figsize=(3, 2))
    with pytest.raises(TypeError, match="figsize must be two numbers"):
        ReferenceExplorer(_data(), n_mc=20, n_boot=20, figsize="large")


def test_the_same_figure_is_redrawn_and_gives_a_fresh_figures_pixels():
    import ipywidgets

    ex = ConditionalExplorer(uqviz.synthetic.default_example(), n_boot=200)
    fig = ex.figure
    for stat, cond in (("ZM", "uE"), ("RCE", "X"), ("ZMS", "X")):
        ex.statistic.value, ex.conditioning.value = stat, cond
        assert ex.figure is fig and fig.get_axes() == [ex.ax]  # cleared: one Axes
        # the PNG shown is pixel for pixel what a fresh figure gives
        fresh = wd.draw_inline(ipywidgets.Output(), ex.figsize, ex._draw)[2]
        assert ex.png == fresh
    ex.show_error(ValueError("a refused setting"))  # drops the figure ...
    assert ex.figure is None
    ex.update()  # ... and the next update starts a new one
    assert ex.figure is not None and ex.figure is not fig
