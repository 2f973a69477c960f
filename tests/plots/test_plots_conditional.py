"""Conditional calibration figures: the expected artists, colours and annotations."""

import matplotlib.pyplot as plt
import numpy as np
import pytest
from matplotlib.colors import to_hex

import uqviz
from uqviz.conditional.ordering import ordering_study
from uqviz.plots import conditional as pc
from uqviz.plots._style import COLORS
from uqviz.conditional.reliability import reliability
from uqviz.conditional.running import running_statistics


@pytest.fixture(scope="module")
def ds():
    return uqviz.synthetic.default_example()


@pytest.fixture(scope="module")
def loc(ds):
    return uqviz.local_calibration(ds, conditioning="X", n_bins=20, n_boot=500, rng=0)


def _points(container):
    """x, y and colour of the markers of an errorbar container."""
    line = container.lines[0]
    return line.get_xdata(), line.get_ydata(), to_hex(line.get_color())


def test_local_draws_one_point_per_bin_coloured_by_validity(loc):
    fv = uqviz.fraction_valid(loc)
    ax = pc.local(loc, fv=fv)
    containers = ax.containers
    n = sum(len(_points(c)[0]) for c in containers)
    assert n == loc.sizes["bin"] == 20
    colours = {}
    for c in containers:
        x, y, col = _points(c)
        colours[col] = colours.get(col, 0) + len(x)
        # each point is at the bin centre, with its interval as the bar
        for xi, yi in zip(x, y):
            b = int(np.argmin(np.abs(loc.bin_center.values - xi)))
            assert yi == pytest.approx(float(loc.estimate[b]))
    n_invalid = int((~loc.valid).sum())
    assert 0 < n_invalid < 20  # the default example fails adaptivity in X
    assert colours[COLORS["invalid"]] == n_invalid
    assert colours[COLORS["valid"]] == 20 - n_invalid
    title = ax.get_title()
    assert f"{float(fv.estimate):.2f}" in title and f"{float(fv.ci_lower):.2f}" in title
    assert "f_v" in title
    # the reference line
    assert any(np.allclose(line.get_ydata(), 1.0) for line in ax.lines)
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert f"invalid ({n_invalid} bins)" in labels


def test_local_on_given_axes_log_x_and_errors(ds, loc):
    fig, ax = plt.subplots()
    assert pc.local(loc, ax=ax, log_x=True) is ax
    assert ax.get_xscale() == "log" and ax.get_title() == ""
    tree = uqviz.from_datasets({"a": ds, "b": ds})
    res = uqviz.local_calibration(tree, conditioning="X", n_bins=5, n_boot=200, rng=0)
    with pytest.raises(ValueError, match="select one"):
        pc.local(res)
    zm = uqviz.local_calibration(ds, statistic="ZM", conditioning="X", n_bins=5)
    ax = pc.local(zm)
    assert "LZM" in ax.get_ylabel()


def test_zscores_vs_draws_points_running_lines_and_clipping(ds):
    res = running_statistics(ds, conditioning="uE", window=100)
    ax = pc.zscores_vs(res, log_x=True, clip=2.0)
    scatter = ax.collections[0]
    assert len(scatter.get_offsets()) == ds.sizes["point"]
    ydata = [line.get_ydata() for line in ax.lines]
    assert any(
        len(y) == res.sizes["rank"] and np.allclose(y, res.running_mean, equal_nan=True)
        for y in ydata
    )
    assert any(
        len(y) == res.sizes["rank"] and np.allclose(y, res.running_ms, equal_nan=True)
        for y in ydata
    )
    assert ax.get_ylim() == (-2.0, 2.0) and ax.get_xscale() == "log"
    n_out = int((np.abs(res.z) > 2.0).sum())
    texts = [t.get_text() for t in ax.get_legend().get_texts()]
    assert any(f"{n_out} beyond" in t for t in texts)
    assert "100 points" in ax.get_legend().get_title().get_text()
    assert ax.get_xlabel().startswith("Uncertainty")


def test_acf_draws_one_stem_per_lag_and_the_band(loc):
    out = uqviz.acf(loc, max_lag=8)
    ax = pc.acf(out, label="ACF")
    stems = ax.collections[-1]
    assert len(stems.get_segments()) == 9
    tops = [seg[1][1] for seg in stems.get_segments()]
    np.testing.assert_allclose(tops, out.acf)
    band = float(out.band)
    # the white-noise band +-1.96/sqrt(n): a horizontal span from -band to +band
    spans = [p.get_path().transformed(p.get_patch_transform()).get_extents() for p in ax.patches]
    assert any(np.isclose(b.y0, -band) and np.isclose(b.y1, band) for b in spans)


def test_ordering_draws_three_intervals_per_group(ds):
    dsr = ds.assign(Xr=("point", np.round(ds.X.values, 1)))
    kw = dict(conditioning="Xr", n_bins=10, n_orderings=8, n_boot=300, rng=0, progress=False)
    zm = ordering_study(dsr, statistic="ZM", **kw)
    zms = ordering_study(dsr, statistic="ZMS", **kw)
    strat = uqviz.fraction_valid(
        uqviz.local_calibration(dsr, conditioning="Xr", binning="stratified", n_boot=300, rng=0)
    )
    ax = pc.ordering({"LZM": zm, "LZMS": zms}, stratified={"LZMS": strat})
    assert len(ax.containers) == 3 * 2 + 1
    ys = sorted(float(c.lines[0].get_ydata()[0]) for c in ax.containers)
    expected = sorted(
        [float(r[k]) for r in (zm, zms) for k in ("fv_data", "fv", "fv_binomial")]
        + [float(strat.estimate)]
    )
    np.testing.assert_allclose(ys, expected)
    assert [t.get_text() for t in ax.get_xticklabels()] == ["LZM", "LZMS"]
    assert any(np.allclose(line.get_ydata(), 0.95) for line in ax.lines)
    assert len(ax.get_legend().get_texts()) == 5
    assert len(pc.ordering(zms).containers) == 3


def test_reliability_diagram_points_identity_and_colours():
    data = uqviz.synthetic.nig(3000, nu=8, rng=1)
    rel = reliability(data, n_bins=10, n_boot=500, rng=0)
    ax = pc.reliability_diagram(rel, log_x=True)
    n = sum(len(_points(c)[0]) for c in ax.containers)
    assert n == 10
    invalid = [c for c in ax.containers if _points(c)[2] == COLORS["invalid"]]
    assert sum(len(_points(c)[0]) for c in invalid) == int((~rel.valid).sum())
    identity = ax.lines[0]
    np.testing.assert_allclose(identity.get_xdata(), identity.get_ydata())
    assert ax.get_xlabel().startswith("RMV") and ax.get_ylabel().startswith("RMSE")
    assert ax.get_xscale() == ax.get_yscale() == "log"


def _visible_labels(ax):
    lo, hi = ax.get_xlim()
    ticks = [*ax.xaxis.get_major_ticks(), *ax.xaxis.get_minor_ticks()]
    return sorted(
        (t.get_loc(), t.label1.get_text())
        for t in ticks
        if lo <= t.get_loc() <= hi and t.label1.get_text()
    )


def test_log_x_labels_are_plain_numbers_within_a_decade_and_powers_beyond():
    from uqviz.plots._style import set_log_x

    fig, (narrow, wide) = plt.subplots(2)
    narrow.plot([0.31, 0.99], [0, 1])
    set_log_x(narrow, [0.31, 0.99])
    wide.plot([1e-6, 1e2], [0, 1])
    set_log_x(wide, [1e-6, 1e2])
    fig.canvas.draw()
    labels = _visible_labels(narrow)
    assert len(labels) >= 3  # uE of the default example spans half a decade: still labelled
    for loc, text in labels:
        assert float(text) == pytest.approx(loc) and "10^" not in text
    assert all("10^" in text for _, text in _visible_labels(wide))  # mathtext 10^{k}
    with pytest.raises(ValueError, match="1 are not"):
        set_log_x(narrow, [0.0, 1.0])
