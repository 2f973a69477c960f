"""The figures of a comparison of models draw the numbers of the result, and nothing else."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.colors as mcolors  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import xarray as xr  # noqa: E402

from uqviz.plots import comparison as cp  # noqa: E402


def hand_result():
    """A result laid out as uqviz.compare_models', with hand-chosen numbers: three models,
    ZMS (reference 1), RCE (reference 0, no per-point values: no SIP) and NLL (a score)."""
    models = ["A", "B", "C"]
    value = np.array([[1.02, 1.30, 0.90], [0.01, 0.10, -0.05], [1.10, 1.40, 1.20]])
    ref = np.array([1.0, 0.0, np.nan])
    dist = np.array([[0.02, 0.30, 0.10], [0.01, 0.10, 0.05], [1.10, 1.40, 1.20]])
    diff = dist[:, :, None] - dist[:, None, :]
    lo, hi = diff - 0.09, diff + 0.09
    comp = np.where(hi < 0, "better", np.where(lo > 0, "worse", "no difference")).astype(object)
    for k in range(3):
        np.fill_diagonal(comp[k], "not tested")
    p = np.array(
        [
            [[0.70, 0.25, 0.05], [0.0, 0.1, 0.9], [0.3, 0.65, 0.05]],
            [[0.5, 0.3, 0.2], [0.2, 0.3, 0.5], [0.3, 0.4, 0.3]],
            [[0.996, 0.004, 0.0], [0.0, 0.0, 1.0], [0.004, 0.996, 0.0]],
        ]
    )
    sip = np.array(
        [
            [[np.nan, 0.8, 0.6], [0.2, np.nan, 0.3], [0.4, 0.7, np.nan]],
            np.full((3, 3), np.nan),
            [[np.nan, 0.9, 0.55], [0.1, np.nan, 0.15], [0.45, 0.85, np.nan]],
        ]
    )
    gain = np.array(
        [
            [[np.nan, 0.21, 0.13], [0.05, np.nan, 0.07], [0.11, 0.3, np.nan]],
            np.full((3, 3), np.nan),
            [[np.nan, 0.4, 0.2], [0.02, np.nan, 0.03], [0.22, 0.35, np.nan]],
        ]
    )
    loss = -np.swapaxes(gain, 1, 2)
    three = ("measure", "model", "versus")
    return xr.Dataset(
        {
            "estimate": (("measure", "model"), value),
            "ci_lower": (("measure", "model"), value - 0.05),
            "ci_upper": (("measure", "model"), value + 0.05),
            "reference": ("measure", ref),
            "distance": (("measure", "model"), dist),
            "difference": (three, diff),
            "difference_lower": (three, lo),
            "difference_upper": (three, hi),
            "comparison": (three, comp.astype(str)),
            "rank_probability": (("measure", "model", "rank"), p),
            "sip": (three, sip),
            "mean_gain": (three, gain),
            "mean_loss": (three, loss),
        },
        coords={
            "measure": ["ZMS", "RCE", "NLL"],
            "model": models,
            "versus": models,
            "rank": [1, 2, 3],
        },
        attrs={"n_points": 500, "ci": 0.95},
    )


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def test_ranking_matrix_cells_are_the_rank_probabilities_ordered_by_distance():
    res = hand_result()
    ax = cp.ranking_matrix(res, measure="ZMS")
    # distances 0.02 (A), 0.30 (B), 0.10 (C): rows A, C, B
    assert [t.get_text() for t in ax.get_yticklabels()] == ["A", "C", "B"]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["1", "2", "3"]
    want = res["rank_probability"].sel(measure="ZMS", model=["A", "C", "B"]).values
    np.testing.assert_array_equal(ax.images[0].get_array(), want)
    assert ax.images[0].norm.vmin == 0.0 and ax.images[0].norm.vmax == 1.0
    cells = {
        (round(t.get_position()[1]), round(t.get_position()[0])): t.get_text()
        for t in ax.texts
        if t.get_gid() == "rank_probability"
    }
    # every cell that rounds above 0.00 is printed with two decimals; B's rank 1 (0.0) is not
    expected = {
        (i, j): f"{want[i, j]:.2f}" for i in range(3) for j in range(3) if want[i, j] >= 0.005
    }
    assert cells == expected and (2, 0) not in cells and cells[(0, 0)] == "0.70"
    assert ax.get_title() == "ZMS ranks (M = 500)"
    # a dark cell gets white text
    assert [t.get_color() for t in ax.texts if t.get_text() == "0.90"] == ["white"]


def test_ranking_matrix_default_measure_is_the_first_and_rounding_hides_zero_cells():
    res = hand_result()
    assert cp.ranking_matrix(res).get_title().startswith("ZMS ranks")
    ax = cp.ranking_matrix(res, measure="NLL")
    texts = sorted(t.get_text() for t in ax.texts)
    # 0.004 reads 0.00 (not printed), 0.996 reads 1.00
    assert texts == ["1.00", "1.00", "1.00"]


def test_sip_matrix_cells_are_sip_gain_and_loss_ordered_by_row_mean():
    res = hand_result()
    ax = cp.sip_matrix(res, measure="NLL")
    # row means of SIP: A (0.9+0.55)/2 = 0.725, B 0.125, C 0.65 -> A, C, B
    order = ["A", "C", "B"]
    assert [t.get_text() for t in ax.get_yticklabels()] == order
    assert [t.get_text() for t in ax.get_xticklabels()] == order
    want = res["sip"].sel(measure="NLL", model=order, versus=order).values
    got = ax.images[0].get_array()
    np.testing.assert_array_equal(got.filled(np.nan), want)
    assert got.mask.tolist() == np.eye(3, dtype=bool).tolist()
    sip_text = {
        (round(t.get_position()[1]), round(t.get_position()[0])): t.get_text()
        for t in ax.texts
        if t.get_gid() == "sip"
    }
    assert sip_text == {(i, j): f"{want[i, j]:.2f}" for i in range(3) for j in range(3) if i != j}
    gain = res["mean_gain"].sel(measure="NLL", model=order, versus=order).values
    loss = res["mean_loss"].sel(measure="NLL", model=order, versus=order).values
    gl = {
        (round(t.get_position()[1] - 0.22), round(t.get_position()[0])): t.get_text()
        for t in ax.texts
        if t.get_gid() == "gain_loss"
    }
    assert gl[(0, 2)] == f"{gain[0, 2]:.2g} / {loss[0, 2]:.2g}" == "0.4 / -0.02"
    assert len(gl) == 6
    # colours: the diverging map from 0 (red) to 1 (blue), 1/2 white
    im = ax.images[0]
    assert im.cmap.name.startswith("RdBu") and (im.norm.vmin, im.norm.vmax) == (0.0, 1.0)
    r, g, b, _ = im.cmap(im.norm(0.9))
    assert b > r  # SIP 0.9 (A over B) is blue
    r, g, b, _ = im.cmap(im.norm(0.1))
    assert r > b
    assert min(im.cmap(im.norm(0.5))[:3]) > 0.95  # no systematic improvement: near white
    assert mcolors.to_hex(im.cmap.get_bad()) == "#eeeeee"  # the empty diagonal


def test_sip_matrix_default_is_the_first_measure_with_sip_values():
    res = hand_result()
    assert cp.sip_measures(res) == ["ZMS", "NLL"]
    assert cp.sip_matrix(res).get_title().startswith("SIP of ZMS")
    only_rce = res.sel(measure=["RCE"])
    with pytest.raises(
        ValueError,
        match=r"none of the result's 1 measures \(\['RCE'\]\) has "
        r"SIP values",
    ):
        cp.sip_matrix(only_rce)


def test_differences_draw_each_pair_once_with_its_interval():
    res = hand_result()
    ax = cp.differences(res, measure="ZMS")
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels == ["A \u2212 B", "A \u2212 C", "B \u2212 C"]
    y_of = dict(zip(labels, ax.get_yticks()))
    assert y_of["A \u2212 B"] > y_of["A \u2212 C"] > y_of["B \u2212 C"]  # top to bottom
    by_label = {c.get_label(): c for c in ax.containers}
    diff = res["difference"].sel(measure="ZMS")
    # A - B: 0.02 - 0.30 = -0.28 [-0.37, -0.19]: A better; B - C: 0.20 [0.11, 0.29]: C better
    sig = by_label["interval excludes 0"]
    np.testing.assert_allclose(
        sig.lines[0].get_xdata(),
        [float(diff.sel(model="A", versus="B")), float(diff.sel(model="B", versus="C"))],
    )
    segs = sig.lines[2][0].get_segments()
    np.testing.assert_allclose([s[:, 0] for s in segs], [[-0.37, -0.19], [0.11, 0.29]])
    assert mcolors.to_hex(sig.lines[0].get_color()) == cp.DIFFERENT
    none = by_label["no difference detected"]
    np.testing.assert_allclose(none.lines[0].get_xdata(), [-0.08])  # A - C: 0.02 - 0.10
    assert mcolors.to_hex(none.lines[0].get_color()) == cp.NO_DIFFERENCE
    names = sorted(t.get_text() for t in ax.texts)
    assert names == ["A better", "C better"]
    zero = [ln for ln in ax.lines if list(ln.get_xdata()) == [0, 0]]
    assert len(zero) == 1 and zero[0].get_linestyle() == "--"
    assert ax.get_xlabel().startswith("difference of |ZMS \u2212 1|")
    assert cp.differences(res, measure="NLL").get_xlabel().startswith("difference of NLL ")


def test_differences_leave_untested_pairs_without_a_bar():
    res = hand_result()
    res["comparison"].loc[dict(measure="NLL", model="A", versus="C")] = "not tested"
    res["difference"].loc[dict(measure="NLL", model="A", versus="C")] = np.nan
    ax = cp.differences(res, measure="NLL")
    drawn = np.concatenate([c.lines[0].get_xdata() for c in ax.containers])
    assert drawn.size == 2 and np.isfinite(drawn).all()
    assert len(ax.get_yticklabels()) == 3  # the pair is still listed


@pytest.mark.parametrize("plot", [cp.ranking_matrix, cp.sip_matrix, cp.differences])
def test_unknown_measure_is_a_clear_error(plot):
    with pytest.raises(
        ValueError,
        match=r"measure 'CRPS' is not in the result \(its measures: "
        r"\['ZMS', 'RCE', 'NLL'\]\)",
    ):
        plot(hand_result(), measure="CRPS")
    with pytest.raises(TypeError, match="measure must be a str"):
        plot(hand_result(), measure=1)
    assert not plt.get_fignums()  # no figure left behind by an error


def test_sip_matrix_of_a_measure_without_sip_values():
    with pytest.raises(
        ValueError,
        match=r"measure 'RCE' has no SIP values .*measures with SIP "
        r"values: \['ZMS', 'NLL'\]",
    ):
        cp.sip_matrix(hand_result(), measure="RCE")
    with pytest.raises(
        ValueError,
        match=r"not a result of uqviz.compare_models: it lacks "
        r"variable 'sip'",
    ):
        cp.sip_matrix(hand_result().drop_vars("sip"))


def test_a_result_of_another_function_is_refused():
    with pytest.raises(
        ValueError,
        match=r"^result: not a result of uqviz.compare_models: it "
        r"lacks variable 'rank_probability'",
    ):
        cp.ranking_matrix(hand_result().drop_vars("rank_probability"))
    with pytest.raises(
        TypeError,
        match=r"^result must be the result of "
        r"uqviz.compare_models",
    ):
        cp.differences(hand_result().to_array())


def test_the_measures_are_computed_in_comparison_and_kept_under_their_old_names():
    """sip_measures, measure_label and measure_reference live in uqviz.comparison.measures
    (issue 38, item 4); the figures and the report import the same objects, same numbers."""
    from uqviz.comparison import measures

    for name in ("sip_measures", "measure_label", "measure_reference"):
        assert getattr(cp, name) is getattr(measures, name)
    res = hand_result()
    assert measures.sip_measures(res) == ["ZMS", "NLL"]
    assert measures.sip_measures(res.assign_attrs(sip_measures=["NLL"])) == ["NLL"]
    assert measures.sip_measures(res.drop_vars("sip")) == []
    assert [measures.measure_reference(res, m) for m in ("ZMS", "RCE", "NLL")] == [1.0, 0.0, None]
    plain = xr.Dataset(attrs={"statistics": ["ZMS", "NLL", "MSE"], "scores": ["nll"]})
    assert [measures.measure_reference(plain, m) for m in ("ZMS", "NLL", "MSE", "nll")] == [
        1.0,
        "data",
        None,
        None,
    ]
    assert [measures.measure_label(plain, m) for m in ("nll", "ZMS")] == ["NLL", "ZMS"]
    import ast
    import inspect

    imported = {
        n.module
        for n in ast.walk(ast.parse(inspect.getsource(measures)))
        if isinstance(n, ast.ImportFrom)
    }
    assert not any(m.startswith(("uqviz.plots", "matplotlib")) for m in imported if m)
