"""The explorers' SVG views against the matplotlib figures of the same results (issue 25).

The SVG drawing (:mod:`uqviz.plots._svg`) reuses matplotlib's choices instead of re-inventing
them; these tests hold it to that: the same view limits, the same ticks and tick labels, the
same markers at the same pixels, the same legend, labels and title as the matplotlib Axes the
plot functions draw (:func:`uqviz.plots.conditional.local`,
:func:`uqviz.plots.recalibration.before_after`,
:func:`uqviz.plots.reference.reference_distribution`) at the explorers' size and margins.
Views of Pernot (2023) Fig. 3 and Pernot (2024a) Fig. 2.
"""

import re
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import uqviz
from uqviz.plots import _svg
from uqviz.plots._svg import SvgAxes, autoscale, math_runs, ticks
from uqviz.plots.conditional import local, local_svg
from uqviz.plots.recalibration import before_after, before_after_svg
from uqviz.plots.reference import reference_distribution, reference_distribution_svg
from uqviz.widgets import _display as wd

SVG = "{http://www.w3.org/2000/svg}"
FIGSIZE = (8.4, 4.4)


LAYOUT = wd.svg_layout(FIGSIZE)


def _mpl_axes():
    """A matplotlib Axes of the explorers' figure (size and fixed margins)."""
    return wd.explorer_figure(FIGSIZE).add_subplot()


def _texts(svg):
    """Every <text>'s characters (tspans joined)."""
    root = ET.fromstring(svg)
    return ["".join(t.itertext()) for t in root.iter(f"{SVG}text")]


def _plain(mathtext):
    """What a mathtext string reads as, as :func:`math_runs` writes it."""
    return "".join(s for s, _, _ in math_runs(mathtext))


def _circle_centres(svg, fill=None, right=840 - 220):
    """Centres of the circles drawn as paths ("M x-r y a r r 0 1 0 2r 0 ...") in the axes
    (left of ``right``: not the legend's handles)."""
    root = ET.fromstring(svg)
    out = []
    for p in root.iter(f"{SVG}path"):
        if fill is not None and p.get("fill") != fill:
            continue
        for x, y, r in re.findall(r"M(-?[\d.]+) (-?[\d.]+)a([\d.]+) ", p.get("d", "")):
            out.append((float(x) + float(r), float(y)))
    out = np.array(out).reshape(-1, 2)
    return out[out[:, 0] <= right]


def _check_axis(mpl_ax, svg_ax, which):
    """Limits, major ticks and labels (minor too on a log axis) equal matplotlib's."""
    mpl_ax.figure.canvas.draw()
    lim = getattr(mpl_ax, f"get_{which}lim")()
    (x0, x1), (y0, y1) = svg_ax.limits()
    np.testing.assert_allclose((x0, x1) if which == "x" else (y0, y1), lim, rtol=1e-9)
    log = which == "x" and svg_ax.log_x
    nb = svg_ax._nbins(
        *(
            (svg_ax.box[2] - svg_ax.box[0], 3)
            if which == "x"
            else (svg_ax.box[3] - svg_ax.box[1], 2)
        )
    )
    major, minor, offset = ticks(*lim, log=log, nbins=nb, plain_log=svg_ax.plain_log)
    axis = getattr(mpl_ax, f"{which}axis")
    for got, minor_ in ((major, False), (minor, True)):
        locs = axis.get_minorticklocs() if minor_ else axis.get_majorticklocs()
        labels = [
            t.get_text()
            for t in (axis.get_minorticklabels() if minor_ else axis.get_majorticklabels())
        ]
        lo, hi = sorted(lim)
        want = [
            (float(v), s)
            for v, s in zip(locs, labels)
            if lo - 1e-9 * abs(hi - lo) <= v <= hi + 1e-9 * abs(hi - lo)
        ]
        if not minor_ or log:
            assert [s for _, s in got] == [s for _, s in want], which
            np.testing.assert_allclose([v for v, _ in got], [v for v, _ in want], rtol=1e-12)
    assert offset == axis.get_offset_text().get_text()


def _check_common(mpl_ax, svg_ax, svg):
    for which in ("x", "y"):
        _check_axis(mpl_ax, svg_ax, which)
    texts = _texts(svg)
    legend = mpl_ax.get_legend()
    want = [t.get_text() for t in legend.get_texts()]
    assert [label for _, _, label in svg_ax.legend_items] == want
    for label in want + [
        _plain(mpl_ax.get_xlabel()),
        _plain(mpl_ax.get_ylabel()),
        _plain(mpl_ax.get_title()),
    ]:
        assert _plain(label) in texts, label
    if legend.get_title().get_text():
        assert _plain(legend.get_title().get_text()) in texts
    root = ET.fromstring(svg)
    assert (root.get("width"), root.get("height")) == ("840", "440")


def _mpl_marker_pixels(ax, **match):
    """Pixel centres (SVG orientation: y down) of the circle markers of ``ax``'s lines."""
    h = ax.figure.bbox.height
    pts = [
        ax.transData.transform(line.get_xydata())
        for line in ax.get_lines()
        if line.get_marker() == "o"
        and len(line.get_xdata())
        and all(getattr(line, f"get_{k}")() == v for k, v in match.items())
    ]
    xy = np.vstack(pts)
    return np.column_stack([xy[:, 0], h - xy[:, 1]])


def _same_points(a, b):
    a = a[np.lexsort(a.T[::-1])]
    b = b[np.lexsort(b.T[::-1])]
    np.testing.assert_allclose(a, b, atol=0.011)  # 2 decimals, of x - r and r


@pytest.fixture(scope="module")
def data():
    return uqviz.synthetic.default_example()


@pytest.mark.parametrize(
    "stat,cond,log_x",
    [
        ("ZMS", "uE", True),
        ("ZMS", "uE", False),
        ("PICP", "X", False),
        ("ZM", "X", True),
        ("RCE", "uE", True),
    ],
)
def test_local_view_equals_the_matplotlib_figure(data, stat, cond, log_x):
    res = uqviz.local_calibration(
        data, statistic=stat, conditioning=cond, n_bins=30, n_boot=200, rng=1
    )
    fv = uqviz.fraction_valid(res)
    mpl_ax = _mpl_axes()
    local(res, fv=fv, ax=mpl_ax, log_x=log_x, xlabel="Uncertainty $u_E$", legend="outside")
    svg_ax = local_svg(res, fv, layout=LAYOUT, log_x=log_x, xlabel="Uncertainty $u_E$")
    svg = svg_ax.svg()
    _check_common(mpl_ax, svg_ax, svg)
    _same_points(_circle_centres(svg), _mpl_marker_pixels(mpl_ax))
    # the markers' colours: valid blue, invalid red, as many as matplotlib's
    for color in ("#1f77b4", "#d62728"):
        n = sum(
            len(line.get_xdata())
            for line in mpl_ax.get_lines()
            if line.get_marker() == "o" and line.get_color() == color
        )
        assert len(_circle_centres(svg, fill=color)) == n


def test_before_after_view_equals_the_matplotlib_figure(data):
    ds = data.assign(uE=data["uE"] * (0.6 + data["uE"]))
    after = uqviz.recalibrate(ds, method="scaling", rng=0)
    before_res, after_res = (
        uqviz.local_calibration(d, n_bins=25, n_boot=200, rng=0) for d in (ds, after)
    )
    mpl_ax = _mpl_axes()
    before_after(before_res, after_res, ax=mpl_ax, log_x=True, legend="outside", title="t")
    svg_ax = before_after_svg(before_res, after_res, layout=LAYOUT, log_x=True, title="t")
    svg = svg_ax.svg()
    _check_common(mpl_ax, svg_ax, svg)
    # filled (valid) and open (invalid) markers at matplotlib's pixels
    _same_points(
        _circle_centres(svg, fill="#ffffff"), _mpl_marker_pixels(mpl_ax, markerfacecolor="white")
    )
    n_valid = int(before_res.valid.sum() + after_res.valid.sum())
    assert len(_circle_centres(svg)) == 2 * 25
    assert len(_circle_centres(svg, right=840)) == 2 * 25 + 2  # and the two legend handles
    assert n_valid == 50 - len(_circle_centres(svg, fill="#ffffff"))


@pytest.mark.filterwarnings("ignore:ENCE of 'default_example'")
def test_reference_view_equals_the_matplotlib_figure(data):
    res = uqviz.validate_simulated(
        data, statistic="ENCE", n_mc=200, n_boot=200, rng=0, return_samples=True, progress=False
    )
    mpl_ax = _mpl_axes()
    reference_distribution(res, ax=mpl_ax, legend="outside", title="default: ENCE")
    svg_ax = reference_distribution_svg(res, layout=LAYOUT, title="default: ENCE")
    svg = svg_ax.svg()
    _check_common(mpl_ax, svg_ax, svg)
    _same_points(_circle_centres(svg, fill="#d62728"), _mpl_marker_pixels(mpl_ax))
    # the histogram's outline: matplotlib's StepPatch vertices at the same pixels
    (patch,) = [p for p in mpl_ax.patches if type(p).__name__ == "StepPatch"]
    h = mpl_ax.figure.bbox.height
    tops = mpl_ax.transData.transform(
        np.column_stack([patch.get_data().edges[:-1], patch.get_data().values])
    )
    d = [p.get("d") for p in ET.fromstring(svg).iter(f"{SVG}path") if p.get("fill") == "#9ecae1"]
    ys = [float(v) for v in re.findall(r"V(-?[\d.]+)H", d[0])]
    np.testing.assert_allclose(ys, h - tops[:, 1], atol=0.006)


def test_legend_is_right_of_the_axes_and_inside_the_figure(data):
    res = uqviz.local_calibration(data, n_bins=20, n_boot=100, rng=0)
    ax = local_svg(res, layout=LAYOUT)
    svg = ax.svg()
    root = ET.fromstring(svg)
    right = ax.box[2]
    xs = [float(t.get("x")) for t in root.iter(f"{SVG}text") if "bins)" in "".join(t.itertext())]
    assert xs and min(xs) >= right + 5  # over no bin
    assert max(xs) + 7 * 14 <= 840  # the longest entry's text fits the 220 px margin


def test_math_runs_cover_the_labels_of_the_views():
    from uqviz.plots._style import STAT_LABELS

    assert _plain(STAT_LABELS["ZMS"]) == "LZMS, \u27e8Z2\u27e9 per bin"
    assert _plain(STAT_LABELS["ZVar"]) == "LZVar, Var(Z) per bin"
    assert math_runs(r"$\mathdefault{10^{-3}}$") == [("10", False, 0), ("\u22123", False, 1)]
    assert math_runs("cost $5") == [("cost $5", False, 0)]  # one $: text as it is
    assert math_runs(r"a \$ b") == [("a $ b", False, 0)]


def test_limits_and_ticks_follow_matplotlib_rules():
    np.testing.assert_allclose(autoscale([2.0, 2.0]), MaxN_nonsingular(2.0))
    lo, hi = autoscale([0.1, 10.0], log=True)
    np.testing.assert_allclose(np.log10([lo, hi]), [-1.1, 1.1])
    major, minor, _ = ticks(0.25, 1.05, log=True)
    assert [s for _, s in major] == ["1"] and "0.4" in [s for _, s in minor]
    with pytest.raises(ValueError, match="must be positive"):
        _svg.set_log_x(SvgAxes(FIGSIZE, wd.MARGINS_INCHES, wd.LABEL_OFFSETS_INCHES), [0.0, 1.0])


def test_the_svg_views_check_their_results():
    res = uqviz.local_calibration(uqviz.synthetic.default_example(), n_bins=10, n_boot=50, rng=0)
    with pytest.raises(TypeError, match="^local_result"):
        local_svg(3, layout=LAYOUT)
    with pytest.raises(ValueError, match="^after_result: statistic"):
        before_after_svg(res, res.assign_attrs(statistic="ZM"), layout=LAYOUT)
    with pytest.raises(ValueError, match="^result: not a result of uqviz"):
        reference_distribution_svg(res, layout=LAYOUT)


def MaxN_nonsingular(v):
    """matplotlib's view of one value: nonsingular (+-5 %) then 5 % margins."""
    from matplotlib.figure import Figure

    ax = Figure().add_subplot()
    ax.plot([v, v], [0, 1])
    return ax.get_xlim()
