"""Quantile calibration under the API contract (issue 11): names, options, Dataset/DataTree
input, bad input, the NEES test's verdict, and the kernels' core-axis-last layout."""

import inspect
import re

import numpy as np
import pytest
import xarray as xr
from scipy import stats

import uqviz
import uqviz.quantile as uq
from uqviz._array import bca
from uqviz._array import nees as kn
from uqviz.data import from_arrays, from_datasets
from uqviz.engine import seeds

TAU = np.array([0.2, 0.5, 0.8, 0.9])


def _spd(rng, n, d):
    a = rng.normal(size=(n, d, d))
    return a @ np.swapaxes(a, -1, -2) + 0.3 * np.eye(d)


def _data(seed=0, n=300, d=2):
    rng = np.random.default_rng(seed)
    mean = rng.normal(size=(n, d))
    std = rng.uniform(0.5, 2.0, size=(n, d))
    y = mean + 1.2 * std * rng.standard_normal((n, d))
    return y, mean, std


def _assert_same(a, b):
    assert set(a.data_vars) == set(b.data_vars)
    for v in a.data_vars:
        np.testing.assert_array_equal(a[v].values, b[v].values, err_msg=v)


# --------------------------------------------------------------------------
# renamed options and results
# --------------------------------------------------------------------------
@pytest.mark.parametrize("old", ["bins", "range", "mqce_ci", "quantiles", "dim_names"])
def test_old_qce_option_names_are_gone(old):
    y, mean, std = _data()
    with pytest.raises(TypeError, match=old):
        uq.qce(y, mean, std, levels=TAU, n_boot=0, **{old: None})


def test_signatures_data_positional_options_keyword_only():
    for func in (uq.qce, uq.nees, uq.nees_test):
        params = inspect.signature(func).parameters.values()
        positional = [p.name for p in params if p.kind is p.POSITIONAL_OR_KEYWORD]
        assert positional == ["y", "mean", "scale"]
    qce_params = inspect.signature(uq.qce).parameters
    for name in (
        "n_bins",
        "value_range",
        "method",
        "levels",
        "variable_names",
        "n_boot",
        "ci",
        "rng",
    ):
        assert qce_params[name].kind is inspect.Parameter.KEYWORD_ONLY
    assert qce_params["method"].default == "bca"
    assert uqviz.qce is uq.qce and uqviz.nees_test is uq.nees_test


def test_qce_results_use_level_and_variable_dims_and_attrs_under_parameter_names():
    y, mean, std = _data()
    res = uq.qce(
        y,
        mean,
        std,
        levels=TAU,
        marginal=False,
        n_bins=4,
        value_range=(0.5, 2.0),
        n_boot=200,
        method="percentile",
        rng=5,
        variable_names=["a", "b"],
    )
    assert res["coverage"].dims == ("level", "variable")
    assert res["bin_coverage"].dims == ("level", "variable", "bin")
    assert res["level"].values.tolist() == TAU.tolist()
    assert res["variable"].values.tolist() == ["a", "b"]
    assert {"quantile", "dim", "replicate"}.isdisjoint(res.dims)
    assert {"m_qce_lower", "m_qce_upper", "coverage_lower", "coverage_upper"} <= set(res)
    a = res.attrs
    assert (a["n_bins"], a["method"], a["rng"], a["n_boot"], a["ci"]) == (
        4,
        "percentile",
        5,
        200,
        0.95,
    )
    assert a["value_range"] == "[[0.5, 2.0], [0.5, 2.0]]"
    assert {"bins", "range", "mqce_ci"}.isdisjoint(a)
    # the seed of a Generator is recorded as its type (engine.seeds.seed_attr)
    gen = uq.qce(y, mean, std, levels=TAU, n_boot=50, rng=np.random.default_rng(1))
    assert gen.attrs["rng"] == "Generator"
    assert uq.qce(y, mean, std, levels=TAU, n_boot=0).attrs["rng"] == "None"


def test_method_percentile_and_basic_are_folded_intervals_of_the_signed_deviation():
    rng = np.random.default_rng(2)
    u = rng.uniform(0.5, 2.0, 800)
    y = 1.3 * u * rng.standard_normal(800)
    for method in ("percentile", "basic"):
        res = uq.qce(y, 0.0, u, levels=TAU, n_boot=400, method=method, rng=3)
        # the same replicates by hand: pattern bootstrap of the signed deviation, then folded
        inside = np.abs(y / u)[None, :] <= stats.norm.ppf((1 + TAU) / 2)[:, None]
        reps = kn.pattern_bootstrap(inside, 400, seeds.spawn(3, 1)[0]) / 800 - TAU[:, None]
        est = inside.mean(axis=1) - TAU
        iv = bca.interval(est, reps, ci=0.95, method=method)
        lo, hi = kn.fold_interval(iv["lower"], iv["upper"])
        np.testing.assert_allclose(res["m_qce_lower"].values, lo, rtol=0, atol=1e-15)
        np.testing.assert_allclose(res["m_qce_upper"].values, hi, rtol=0, atol=1e-15)


def test_bca_interval_uses_the_shared_acceleration():
    rng = np.random.default_rng(4)
    u = rng.uniform(0.5, 2.0, 500)
    y = u * rng.standard_normal(500)
    res = uq.qce(y, 0.0, u, levels=TAU, n_boot=300, rng=9)
    inside = np.abs(y / u)[None, :] <= stats.norm.ppf((1 + TAU) / 2)[:, None]
    reps = kn.pattern_bootstrap(inside, 300, seeds.spawn(9, 1)[0]) / 500 - TAU[:, None]
    jack = np.array(
        [[np.delete(row, i).mean() - t for i in range(500)] for row, t in zip(inside, TAU)]
    )
    iv = bca.interval(inside.mean(axis=1) - TAU, reps, jackknife=jack, ci=0.95, method="bca")
    lo, hi = kn.fold_interval(iv["lower"], iv["upper"])
    np.testing.assert_allclose(res["m_qce_lower"].values, lo, rtol=0, atol=1e-14)
    np.testing.assert_allclose(res["m_qce_upper"].values, hi, rtol=0, atol=1e-14)


# --------------------------------------------------------------------------
# option validation (uqviz.engine.checks)
# --------------------------------------------------------------------------
@pytest.mark.parametrize(
    "kwargs,exc,pattern",
    [
        ({"n_bins": True}, TypeError, "n_bins"),
        ({"n_bins": "10"}, TypeError, "n_bins"),
        ({"n_bins": 0}, ValueError, "n_bins"),
        ({"n_bins": 2.5}, ValueError, "n_bins"),
        ({"ci": 0.0}, ValueError, "ci"),
        ({"ci": 1.5}, ValueError, "ci"),
        ({"method": "folded"}, ValueError, "method"),
        ({"method": "direct"}, ValueError, "method"),
        ({"reduction": "sum"}, ValueError, "reduction"),
        ({"sample_model": "gauss"}, ValueError, "sample_model"),
        ({"n_boot": 1}, ValueError, "n_boot"),
        ({"n_boot": -5}, ValueError, "n_boot"),
        ({"n_boot": 2.5}, ValueError, "n_boot"),
        ({"rng": np.random.RandomState(0)}, TypeError, "rng"),
        ({"rng": -1}, ValueError, "rng"),
        ({"marginal": "no"}, TypeError, "marginal"),
        ({"sample_threshold": -1}, ValueError, "sample_threshold"),
        ({"value_range": (0.0, np.nan)}, ValueError, "value_range"),
        ({"value_range": (2.0, 1.0)}, ValueError, "value_range"),
        ({"levels": [0.5, np.nan]}, ValueError, "levels"),
        ({"levels": [0.0, 0.5]}, ValueError, "levels"),
        ({"variable_names": ["a"]}, ValueError, "variable_names"),
    ],
)
def test_qce_options_are_validated(kwargs, exc, pattern):
    y, mean, std = _data(n=50)
    kw = {"levels": TAU, "n_boot": 0, "marginal": False, **kwargs}
    with pytest.raises(exc, match=pattern):
        uq.qce(y, mean, std, **kw)


def test_qce_n_boot_integral_float_is_accepted():
    y, mean, std = _data(n=50)
    a = uq.qce(y, mean, std, levels=TAU, n_boot=100.0, rng=0)
    b = uq.qce(y, mean, std, levels=TAU, n_boot=100, rng=0)
    _assert_same(a, b)
    assert a.attrs["n_boot"] == 100


@pytest.mark.parametrize(
    "kwargs,exc,pattern",
    [
        ({"ci": 1.0}, ValueError, "ci"),
        ({"ci": "0.9"}, TypeError, "ci"),
        ({"sample_model": "hpdi"}, ValueError, "sample_model"),
        ({"sample_model": "other"}, ValueError, "sample_model"),
    ],
)
def test_nees_test_options_are_validated(kwargs, exc, pattern):
    y, mean, std = _data(n=20)
    with pytest.raises(exc, match=pattern):
        uq.nees_test(y, mean, std, **kwargs)


# --------------------------------------------------------------------------
# the NEES test: contract result names and a verdict from bca.verdict
# --------------------------------------------------------------------------
@pytest.mark.parametrize("factor", [1.0, 1.08, 0.9])
def test_nees_test_estimate_interval_reference_zeta_valid(factor):
    rng = np.random.default_rng(21)
    n, d = 1500, 2
    cov = _spd(rng, n, d)
    y = factor * np.einsum("nij,nj->ni", np.linalg.cholesky(cov), rng.normal(size=(n, d)))
    res = uq.nees_test(y, 0.0, cov, ci=0.9)
    eps = np.einsum("ni,nij,nj->n", y, np.linalg.inv(cov), y)
    s, nd = eps.sum(), n * d
    q_lo, q_hi = stats.chi2.ppf([0.05, 0.95], nd)
    assert res["estimate"].item() == pytest.approx(s / n, rel=1e-12)
    assert res["ci_lower"].item() == pytest.approx(d * s / q_hi, rel=1e-12)
    assert res["ci_upper"].item() == pytest.approx(d * s / q_lo, rel=1e-12)
    assert res["reference"].item() == d
    assert res["reference_lower"].item() == pytest.approx(q_lo / n, rel=1e-12)
    assert res["reference_upper"].item() == pytest.approx(q_hi / n, rel=1e-12)
    zeta, valid = bca.verdict(s / n, d, d * s / q_hi, d * s / q_lo)
    assert res["zeta"].item() == pytest.approx(float(zeta), rel=1e-10)
    assert bool(res["valid"]) == bool(valid)
    # the interval holds d exactly when the mean NEES is in the reference region
    in_region = res["reference_lower"] <= res["estimate"] <= res["reference_upper"]
    assert bool(res["valid"]) == bool(in_region) == (res["p_value"].item() >= 0.1)
    assert (abs(res["zeta"].item()) <= 1) == bool(res["valid"])
    assert {"mean_nees", "mean_nees_lower", "mean_nees_upper", "statistic"}.isdisjoint(res)
    assert res.attrs["ci"] == 0.9


def test_nees_test_detects_too_small_uncertainties_with_zeta_above_one():
    rng = np.random.default_rng(3)
    u = rng.uniform(0.5, 2.0, 3000)
    res = uq.nees_test(1.5 * u * rng.standard_normal(3000), 0.0, u)
    assert not bool(res["valid"]) and res["zeta"].item() > 1
    assert res["ci_lower"].item() > res["reference"].item()


# --------------------------------------------------------------------------
# Dataset and DataTree input
# --------------------------------------------------------------------------
def _multivariate_dataset(y, mean, scale, labels=("u", "v")):
    return xr.Dataset(
        {
            "y": (("point", "variable"), y),
            "mean": (("point", "variable"), mean),
            "scale": (("point", "variable"), scale),
        },
        coords={"variable": list(labels)},
    )


def test_dataset_with_y_mean_scale_equals_the_array_call():
    y, mean, std = _data(seed=1)
    ds = _multivariate_dataset(y, mean, std)
    kw = dict(levels=TAU, marginal=False, n_bins=5, n_boot=200, rng=4)
    res = uq.qce(ds, **kw)
    ref = uq.qce(y, mean, std, variable_names=["u", "v"], **kw)
    _assert_same(res, ref)
    assert res["variable"].values.tolist() == ["u", "v"]
    np.testing.assert_array_equal(uq.nees(ds)["nees"].values, uq.nees(y, mean, std)["nees"].values)
    _assert_same(uq.nees_test(ds), uq.nees_test(y, mean, std))
    # dims in another order and a mean on `point` only are aligned by name
    ds2 = ds.transpose("variable", "point").assign(mean=ds["mean"].isel(variable=0) * 0 + 0.25)
    np.testing.assert_allclose(
        uq.nees(ds2)["nees"].values, uq.nees(y, 0.25, std)["nees"].values, rtol=1e-15
    )


def test_dataset_with_covariances_samples_and_one_dimension():
    rng = np.random.default_rng(2)
    n, d = 200, 3
    cov = _spd(rng, n, d)
    mean = rng.normal(size=(n, d))
    y = mean + np.einsum("nij,nj->ni", np.linalg.cholesky(cov), rng.normal(size=(n, d)))
    ds = xr.Dataset(
        {
            "y": (("point", "variable"), y),
            "mean": (("point", "variable"), mean),
            "scale": (("point", "variable", "variable2"), cov),
        }
    )
    kw = dict(levels=TAU, marginal=False, n_bins=4, n_boot=0)
    _assert_same(uq.qce(ds, **kw), uq.qce(y, mean, cov, **kw))
    np.testing.assert_array_equal(uq.nees(ds)["nees"].values, uq.nees(y, mean, cov)["nees"].values)
    # samples with dims (sample, point, variable)
    draws = mean + rng.normal(size=(30, n, d))
    dss = xr.Dataset(
        {
            "y": (("point", "variable"), y),
            "samples": (("point", "sample", "variable"), np.moveaxis(draws, 0, 1)),
        }
    )
    for model in ("normal", "mvnormal", "hpdi"):
        _assert_same(
            uq.qce(dss, sample_model=model, **kw),
            uq.qce(y, samples=draws, sample_model=model, **kw),
        )
    # 1-D
    ds1 = xr.Dataset(
        {
            "y": ("point", y[:, 0]),
            "mean": ("point", mean[:, 0]),
            "scale": ("point", np.sqrt(cov[:, 0, 0])),
        }
    )
    _assert_same(uq.qce(ds1, **kw), uq.qce(y[:, 0], mean[:, 0], np.sqrt(cov[:, 0, 0]), **kw))


def test_datatree_results_gain_a_dataset_dim_and_equal_the_array_calls():
    parts = {name: _data(seed=s, n=n) for name, s, n in (("a", 1, 200), ("b", 2, 150))}
    tree = xr.DataTree.from_dict({k: _multivariate_dataset(*v) for k, v in parts.items()})
    kw = dict(levels=TAU, marginal=False, n_bins=4, n_boot=300)
    res = uq.qce(tree, rng=7, **kw)
    assert res["dataset"].values.tolist() == ["a", "b"]
    assert res["m_qce_lower"].dims[0] == "dataset"
    assert res.attrs["rng"] == 7
    # each dataset gets its own child stream of rng; a single dataset gets the first one,
    # so the first child of a tree gives the numbers of that dataset alone
    one = uq.qce(*parts["a"], variable_names=["u", "v"], rng=7, **kw)
    for v in ("qce", "coverage", "m_qce_lower", "m_qce_upper", "bin_count"):
        np.testing.assert_array_equal(res[v].sel(dataset="a").values, one[v].values)
    alone_b = uq.qce(*parts["b"], variable_names=["u", "v"], rng=7, **kw)
    assert not np.array_equal(
        res["m_qce_lower"].sel(dataset="b").values, alone_b["m_qce_lower"].values
    )  # b has the second stream
    one_child = uq.qce(
        xr.DataTree.from_dict({"b": _multivariate_dataset(*parts["b"])}), rng=7, **kw
    )
    np.testing.assert_array_equal(
        one_child["m_qce_lower"].sel(dataset="b").values, alone_b["m_qce_lower"].values
    )
    test = uq.nees_test(tree)
    assert test["estimate"].dims == ("dataset",)
    for name, (y, mean, std) in parts.items():
        _assert_same(test.sel(dataset=name).drop_vars("dataset"), uq.nees_test(y, mean, std))
    eps = uq.nees(tree)["nees"]
    assert eps.dims == ("dataset", "point")
    np.testing.assert_array_equal(
        eps.sel(dataset="b").values[:150], uq.nees(*parts["b"])["nees"].values
    )
    assert np.isnan(eps.sel(dataset="b").values[150:]).all()  # padding of the shorter set


def test_qce_to_numpy_names_a_result_that_is_not_qce():
    # issue 22 item 7: a Dataset that is not a qce result raised KeyError: 'scale_kind'
    a = from_arrays([0.1, -0.5, 0.3, 1.2, 0.2], [0.2, 0.4, 0.3, 0.5, 0.1])
    with pytest.raises(
        ValueError,
        match=r"result: not a result of uqviz.qce: it lacks "
        r"variable 'qce', attr 'scale_kind'",
    ):
        uq.qce_to_numpy(a)
    res = uq.qce(a, levels=[0.5, 0.9], n_boot=0)
    with pytest.raises(
        ValueError,
        match=r"result: not a result of uqviz.qce: it lacks "
        r"attr 'scale_kind', attr 'reduction'",
    ):
        uq.qce_to_numpy(res.drop_attrs())
    with pytest.raises(TypeError, match=r"result must be the result of uqviz.qce"):
        uq.qce_to_numpy(res["qce"])


def test_datatree_of_uqviz_datasets():
    a = from_arrays([0.1, -0.5, 0.3, 1.2, 0.2], [0.2, 0.4, 0.3, 0.5, 0.1], name="a")
    b = from_arrays([0.3, -0.1, 0.8, 0.05], [0.2, 0.2, 0.4, 0.3], name="b")
    res = uq.qce(from_datasets([a, b]), levels=[0.5, 0.9], n_boot=0)
    for name, ds in (("a", a), ("b", b)):
        ref = uq.qce(ds["E"].values, 0.0, ds["uE"].values, levels=[0.5, 0.9], n_boot=0)
        np.testing.assert_array_equal(res["qce"].sel(dataset=name).values, ref["qce"].values)
    with pytest.raises(ValueError, match="result: holds several datasets"):
        uq.qce_to_numpy(res)
    with pytest.raises(ValueError, match="mean, scale, samples: leave them unset"):
        uq.nees(from_datasets([a, b]), 0.0)


# --------------------------------------------------------------------------
# bad input: the argument, the problem and the count
# --------------------------------------------------------------------------
def test_non_finite_values_name_the_argument_and_count_points():
    y, mean, std = _data(n=30)
    bad_mean = mean.copy()
    bad_mean[[3, 7, 7], [0, 0, 1]] = np.nan
    with pytest.raises(
        ValueError,
        match=r"mean: NaN or infinite values in 2 point\(s\), "
        r"first at \[3, 7\]",
    ):
        uq.qce(y, bad_mean, std, levels=TAU, n_boot=0)
    bad_std = std.copy()
    bad_std[5, 1] = np.inf
    with pytest.raises(ValueError, match=r"scale: NaN or infinite values in 1 point\(s\)"):
        uq.nees(y, mean, bad_std)
    bad_y = y.copy()
    bad_y[:12, 0] = -np.inf
    with pytest.raises(
        ValueError,
        match=r"y: NaN or infinite values in 12 point\(s\), "
        r"first at \[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, \.\.\.\]",
    ):
        uq.nees_test(bad_y, mean, std)
    draws = np.ones((5, 30, 2)) + np.arange(5)[:, None, None]
    draws[2, 4, 1] = np.nan
    with pytest.raises(
        ValueError,
        match=r"samples: NaN or infinite values in 1 point\(s\), "
        r"first at \[4\]",
    ):
        uq.qce(y, samples=draws, levels=TAU, n_boot=0)
    # Dataset input: the points are named by their labels
    ds = _multivariate_dataset(y, bad_mean, std).assign_coords(point=np.arange(100, 130))
    with pytest.raises(ValueError, match=r"mean: .* 2 point\(s\), first at \[103, 107\]"):
        uq.nees(ds)


def test_non_positive_definite_scale_and_non_positive_std_are_counted():
    rng = np.random.default_rng(5)
    cov = _spd(rng, 20, 2)
    cov[[4, 9]] = [[1.0, 3.0], [3.0, 1.0]]
    with pytest.raises(
        ValueError,
        match=r"scale: 2 of 20 covariance matrices .* not positive "
        r"definite: 2 point\(s\) at \[4, 9\]",
    ):
        uq.nees_test(rng.normal(size=(20, 2)), 0.0, cov)
    y, mean, std = _data(n=10)
    std[[1, 2], 0] = 0.0
    with pytest.raises(ValueError, match=r"scale: standard deviations must be > 0; 2 point"):
        uq.qce(y, mean, std, levels=TAU, n_boot=0)


@pytest.mark.parametrize(
    "args,pattern",
    [
        (lambda y, m, s: (y, m[:-1], s), r"mean: expected shape \(30, 2\)"),
        (lambda y, m, s: (y, m, s[:, :1]), r"scale: expected shape \(30, 2\) \(std\) or"),
        (lambda y, m, s: (y[:, :, None], m, s), r"y: expected shape \(n,\) or \(n, d\)"),
        (lambda y, m, s: (y[:0], m[:0], s[:0]), r"y: expected shape .* n, d >= 1"),
        (lambda y, m, s: (y, None, s), r"mean: required unless samples"),
        (lambda y, m, s: (y, m, None), r"scale: required unless samples"),
    ],
)
def test_shape_mismatches_name_the_argument(args, pattern):
    y, mean, std = _data(n=30)
    with pytest.raises(ValueError, match=pattern):
        uq.nees(*args(y, mean, std))


def test_non_numeric_and_misaligned_inputs():
    import pandas as pd

    with pytest.raises(TypeError, match="y: expected numbers"):
        uq.nees(["a", "b"], 0.0, [1.0, 1.0])
    with pytest.raises(TypeError, match="scale: expected numbers"):
        uq.nees([1.0, 2.0], 0.0, [object(), 1.0])
    y = pd.Series([0.1, 0.2, 0.3], index=[10, 11, 12])
    s = pd.Series([1.0, 1.0, 2.0], index=[12, 11, 10])
    with pytest.raises(ValueError, match="y and scale: pandas objects with different indexes"):
        uq.nees(y, 0.0, s)
    ok = uq.nees(y, 0.0, s.sort_index())["nees"]  # aligned: fine
    np.testing.assert_allclose(ok.values, [0.0025, 0.04, 0.09])  # paired by label


@pytest.mark.parametrize("func", [lambda *a: uq.qce(*a, n_boot=0), uq.nees, uq.nees_test])
def test_boolean_inputs_are_refused(func):
    # issue 22 item 7: True/False were read as 0/1 (from_arrays refuses them)
    flags = np.array([True, False, True, True])
    with pytest.raises(TypeError, match=r"y: boolean values .* not numbers; 4 row\(s\)"):
        func(flags, 0.0, np.ones(4))
    with pytest.raises(TypeError, match=r"mean: boolean values"):
        func(np.ones(4), np.array([1.0, True, 0.0, 2.0], dtype=object), np.ones(4))
    with pytest.raises(TypeError, match=r"y: boolean values .* 4 row\(s\)"):
        func(
            xr.Dataset(
                {
                    "y": ("point", flags),
                    "mean": ("point", np.zeros(4)),
                    "scale": ("point", np.ones(4)),
                }
            )
        )
    func(flags.astype(float), 0.0, np.ones(4))  # cast: accepted


def test_bad_datasets_name_what_is_missing():
    y, mean, std = _data(n=10)
    with pytest.raises(ValueError, match=r"y: the Dataset needs variables 'y', 'mean', 'scale'"):
        uq.nees(xr.Dataset({"x": ("point", y[:, 0])}))
    with pytest.raises(ValueError, match="scale: required"):
        uq.nees(xr.Dataset({"y": ("point", y[:, 0]), "mean": ("point", mean[:, 0])}))
    with pytest.raises(ValueError, match=r"samples: expected dims \('sample',\)"):
        uq.nees(
            xr.Dataset({"y": ("point", y[:, 0]), "samples": (("draw", "point"), np.ones((3, 10)))})
        )
    with pytest.raises(ValueError, match="y: expected dims"):
        uq.nees(xr.Dataset({"y": (("point", "target"), y), "mean": 0.0, "scale": 1.0}))


def test_one_point_with_a_bootstrap_is_an_error_not_nan():
    with pytest.raises(ValueError, match="y: the bootstrap interval of the M-QCE needs at least 2"):
        uq.qce([0.3], 0.0, [1.0], levels=TAU, n_boot=100)
    res = uq.qce([0.3], 0.0, [1.0], levels=TAU, n_boot=0)
    np.testing.assert_array_equal(res["n_inside"].values, [0, 1, 1, 1])  # |Z| = 0.3


def test_inputs_are_not_mutated():
    y, mean, std = _data(n=40)
    copies = [a.copy() for a in (y, mean, std)]
    uq.qce(y, mean, std, levels=TAU, marginal=False, n_boot=50, rng=0)
    uq.nees_test(y, mean, std)
    for a, b in zip((y, mean, std), copies):
        np.testing.assert_array_equal(a, b)


# --------------------------------------------------------------------------
# kernel layout: core axes last, one BCa acceleration, no xarray, no local paths
# --------------------------------------------------------------------------
def test_kernels_put_the_core_axis_last():
    rng = np.random.default_rng(6)
    nees = rng.chisquare(1, size=(3, 50))  # (L, n)
    thr = stats.chi2.ppf(TAU, 1)
    inside = kn.inside_from_nees(nees, thr)
    assert inside.shape == (3, 4, 50)  # (L, q, n)
    np.testing.assert_array_equal(inside[1, 2], nees[1] <= thr[2])
    idx = rng.integers(-1, 5, size=(3, 50))
    count, k = kn.binned_counts(inside, idx, 5)
    assert count.shape == (3, 5) and k.shape == (3, 4, 5)
    assert k[2, 1, 3] == np.count_nonzero(inside[2, 1] & (idx[2] == 3))
    cov_b, qmap, c_qce = kn.binned_qce(k, count, TAU)
    assert cov_b.shape == qmap.shape == (3, 4, 5) and c_qce.shape == (3, 4)
    assert kn.pattern_bootstrap(inside, 20, rng).shape == (3, 4, 20)
    assert kn.mqce_jackknife(inside, TAU).shape == (3, 4, 50)
    draws = rng.normal(size=(7, 2, 9))  # (n, d, r): draws last
    m, v = kn.sample_moments(draws)
    np.testing.assert_allclose(v, draws.var(axis=-1))
    m, c = kn.sample_moments(draws, covariance=True)
    assert c.shape == (7, 2, 2)
    np.testing.assert_allclose(c[3], np.cov(draws[3], ddof=0))
    lo, hi = kn.hpdi(np.sort(draws, axis=-1), 0.5)
    assert lo.shape == (7, 2) and np.all(lo <= hi)


def test_no_copy_of_the_bca_acceleration_no_xarray_no_local_paths():
    src = inspect.getsource(kn)
    assert "import xarray" not in src and "** 1.5" not in src
    assert not hasattr(kn, "mqce_acceleration")
    import uqviz.plots.quantile as pq
    from uqviz.quantile import inputs

    for mod in (
        kn,
        pq,
        inputs,
        __import__("uqviz.quantile.qce", fromlist=["x"]),
        __import__("uqviz.quantile.nees", fromlist=["x"]),
        uq,
    ):
        text = inspect.getsource(mod)
        assert not re.search(r"/work/|/home/|/tmp/|papers/00\d", text), mod.__name__
        assert not re.search(r"\b00[0-4] (eq|sect)|SPEC \d|paper 00\d", text), mod.__name__
    assert "Küppers et al. (2022)" in inspect.getsource(
        __import__("uqviz.quantile.qce", fromlist=["x"])
    )


def test_extreme_scales_neither_underflow_nor_overflow():
    rng = np.random.default_rng(8)
    z = rng.standard_normal(400)
    u = rng.uniform(0.5, 2.0, 400)
    ref = uq.qce(z * u, 0.0, u, levels=TAU, n_boot=0)
    for scale in (1e-300, 1e155):
        eps = uq.nees(z * u * scale, 0.0, u * scale)["nees"]
        np.testing.assert_allclose(eps.values, z**2, rtol=1e-13)
        res = uq.qce(z * u * scale, 0.0, u * scale, levels=TAU, n_boot=0)
        np.testing.assert_array_equal(res["n_inside"].values, ref["n_inside"].values)
        test = uq.nees_test(z * u * scale, 0.0, u * scale)
        assert np.isfinite(test["estimate"].item()) and np.isfinite(test["zeta"].item())
    with pytest.raises(ValueError, match=r"y: the NEES overflows .* 1 point\(s\), first at \[2\]"):
        uq.nees_test([0.0, 1.0, 1e200], 0.0, [1.0, 1.0, 1e-200])
