"""Every public plot refuses what it cannot draw with a clear ValueError (issue 38, item 9).

An empty result (the dim the plot draws along of length 0), a result whose drawn values are all
NaN, and an option naming what the result does not hold (a statistic, variable, measure, fit,
colour map, ...) each raise an error that names the plot or the argument and the problem,
before xarray ("not all values found in index"), numpy ("zero-size array to reduction") or
matplotlib ("Axis limits cannot be NaN or Inf") answer, or an empty figure is drawn. The
results are the contract test's small real results (``tests/contract/test_contract.py``).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from tests.contract.test_contract import PLOTS, _plot_call, _plot_input, _short

#: the dim each plot draws along, emptied (fit_histogram: its data's points)
EMPTY = {
    "acf": "lag",
    "adversarial_curves": "size",
    "before_after": "bin",
    "bias_vs_skewness": "nu_ig",
    "calibration_curve": "level",
    "confidence_curve": "fraction",
    "coverage": "level",
    "coverage_map": "bin",
    "decimation_curves": "fraction",
    "differences": "model",
    "extrapolation": "n_bins",
    "fit_histogram": "point",
    "group_coverage": "group",
    "intervals": "statistic",
    "local": "bin",
    "ordering": None,
    "pit_ecdf_difference": "pit_grid",
    "pit_histogram": "bin",
    "quantile_reliability": "level",
    "ranking_matrix": "rank",
    "reference_distribution": "sample",
    "reference_sensitivity": "nu",
    "reliability_diagram": "bin",
    "sip_matrix": "versus",
    "size_dependence": "size",
    "skewness_map": "variable",
    "validation_probability": "nu",
    "zeta_comparison": "statistic",
    "zeta_scores": "generative",
    "zscores_vs": "rank",
}

#: an option naming what the result does not hold, and the words the error must contain
UNKNOWN = {
    "acf": None,
    "adversarial_curves": None,
    "reliability_diagram": None,
    "zscores_vs": None,
    "before_after": ({"statistics": ["ZMS"]}, "statistics"),
    "bias_vs_skewness": ({"skewness": "nosuch"}, "unknown skewness 'nosuch'"),
    "calibration_curve": ({"dataset": "nosuch"}, "dataset"),
    "confidence_curve": ({"dataset": "nosuch"}, "dataset"),
    "coverage": ({"dataset": "nosuch"}, "dataset"),
    "coverage_map": ({"cmap": "nosuch"}, "unknown cmap 'nosuch'"),
    "decimation_curves": ({"statistics": "nosuch"}, "unknown statistics entry 'nosuch'"),
    "differences": ({"measure": "nosuch"}, "measure 'nosuch' is not in the result"),
    "extrapolation": ({"dataset": "nosuch"}, "dataset"),
    "fit_histogram": ({"variable": "nosuch"}, "variable must be one of"),
    "group_coverage": ({"dataset": "nosuch"}, "dataset"),
    "intervals": ({"statistics": ["ZMS", "nosuch"]}, "unknown statistics entry 'nosuch'"),
    "local": ({"ylim": "nosuch"}, "ylim must be two numbers"),
    "ordering": ({"stratified": "nosuch"}, "stratified must be"),
    "pit_ecdf_difference": ({"dataset": "nosuch"}, "dataset"),
    "pit_histogram": ({"dataset": "nosuch"}, "dataset"),
    "quantile_reliability": ({"color": "nosuch"}, "color must be a matplotlib colour"),
    "ranking_matrix": ({"measure": "nosuch"}, "measure 'nosuch' is not in the result"),
    "reference_distribution": ({"observed": "nosuch"}, "observed must be a number"),
    "reference_sensitivity": ({"observed": "nosuch"}, "observed must be a number"),
    "sip_matrix": ({"measure": "nosuch"}, "measure 'nosuch' is not in the result"),
    "size_dependence": ({"fit": "nosuch"}, "unknown fit 'nosuch'"),
    "skewness_map": ({"nig_curve": "nosuch"}, "nig_curve must be the result"),
    "validation_probability": ({"statistics": ["nosuch"]}, "unknown statistics entry 'nosuch'"),
    "zeta_comparison": ({"statistics": "ZMS"}, "statistics must be two statistic names"),
    "zeta_scores": ({"labels": ["a", "b", "c"]}, "labels: expected 1 labels, got 3"),
}


def _nan(result):
    """``result`` with every numeric data variable NaN (booleans and strings kept)."""
    out = result.copy(deep=True)
    for v in list(out.data_vars):
        if out[v].dtype.kind in "fiu":
            out[v] = out[v].astype(float).where(False)
    return out


def _call(qual, first, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _plot_call(qual, first, **kwargs)


def test_every_public_plot_has_its_cases():
    names = {_short(q) for q in PLOTS}
    assert names == set(EMPTY) == set(UNKNOWN)


@pytest.mark.parametrize("qual", PLOTS)
def test_empty_result_is_a_clear_error(qual):
    name = _short(qual)
    first = _plot_input(name)
    dim = EMPTY[name]
    if dim is None:  # ordering: scalars per ordering study; no dim along which it draws
        assert not any(first[v].ndim for v in ("fv_data", "fv"))
        return
    assert dim in first.dims, f"{name}: {dim} not a dim of {tuple(first.dims)}"
    _call(qual, first)  # the full result draws
    empty = first.isel({dim: slice(0, 0)})
    with pytest.raises(ValueError) as info:
        _call(qual, empty)
    message = str(info.value)
    assert message.startswith((f"{name}:", "result:", "statistic:", "generative:"))
    assert (
        "0 entries" in message
        or "0 positive finite" in message
        or "lacks" in message
        or "0 measures" in message
        or "not in the result ([])" in message
    ), message


@pytest.mark.parametrize("qual", PLOTS)
def test_all_nan_result_is_a_clear_error(qual):
    name = _short(qual)
    first = _plot_input(name)
    with pytest.raises(ValueError) as info:
        _call(qual, _nan(first))
    message = str(info.value)
    assert message.startswith(f"{name}:"), message
    assert "is NaN" in message or "0 positive finite values" in message, message
    assert "nothing to draw" in message or "need >= 2" in message, message


@pytest.mark.parametrize("qual", PLOTS)
def test_unknown_option_is_a_clear_error(qual):
    name = _short(qual)
    case = UNKNOWN[name]
    if case is None:  # no option naming a part of the result
        return
    kwargs, words = case
    with pytest.raises((ValueError, TypeError)) as info:
        _call(qual, _plot_input(name), **kwargs)
    message = str(info.value)
    assert words in message, message
    option = next(iter(kwargs))
    assert option in message, f"{message!r} does not name {option}"


def test_the_drawn_checks_name_the_problem_and_keep_the_result():
    from uqviz.plots._checks import choice, drawable, names

    import xarray as xr

    res = xr.Dataset({"estimate": ("bin", [np.nan, 1.0])})
    assert drawable("local", res, ["estimate"]) is res  # one finite value is enough
    with pytest.raises(ValueError, match=r"^local: local_result is empty: dim 'bin' has 0"):
        drawable("local", res.isel(bin=slice(0, 0)), ["estimate"], name="local_result")
    with pytest.raises(ValueError, match=r"every value of 'estimate' in result is NaN \(1 "):
        drawable("local", res.isel(bin=[0]), ["estimate"])
    assert names("f", "statistics", None, ["ZMS", "RCE"]) == ["ZMS", "RCE"]
    assert names("f", "statistics", "RCE", ["ZMS", "RCE"]) == ["RCE"]
    with pytest.raises(TypeError, match="statistics must be a name or a sequence"):
        names("f", "statistics", 3, ["ZMS"])
    assert choice("f", "fit", np.str_("linear"), np.array(["linear"])) == "linear"
    with pytest.raises(ValueError, match=r"^f: unknown fit \[1\]"):
        choice("f", "fit", [1], ["linear"])
