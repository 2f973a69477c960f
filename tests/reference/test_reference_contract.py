"""Issue 11 for the reference analyses: options, names, verdicts, kernels in _array."""

import inspect
import warnings

import numpy as np
import pytest
import xarray as xr

import uqviz
from uqviz import generative as gen
from uqviz._array import curves as kc
from uqviz._array.bca import verdict
from uqviz.reference import confidence, extrapolation, simulated
from uqviz.reference.simulated import (
    sim2_zeta,
    sim_zeta,
    simulated_reference,
    validate_simulated,
    validate_with_references,
)


@pytest.fixture(scope="module")
def ds():
    return uqviz.synthetic.nig(400, nu=6, rng=0)


@pytest.fixture(scope="module")
def tree():
    return uqviz.from_datasets(
        {"a": uqviz.synthetic.nig(300, nu=6, rng=1), "b": uqviz.synthetic.nig(500, nu=8, rng=2)}
    )


# ---------------------------------------------------------------- n_mc, statistics, options
@pytest.mark.parametrize(
    "func",
    [
        lambda d, n: simulated_reference(d, statistic="CC", n_mc=n),
        lambda d, n: validate_simulated(d, statistic="CC", n_mc=n, n_boot=50),
        lambda d, n: validate_with_references(d, statistic="CC", n_mc=n, n_boot=50),
        lambda d, n: uqviz.confidence_curve(d, n_mc=n, n_boot=0),
        lambda d, n: uqviz.size_dependence(sizes=(100,), n_bins=(5,), nu=(6,), n_mc=n),
    ],
)
@pytest.mark.parametrize("n_mc", [0, 1])
def test_n_mc_below_two_is_a_clear_error(ds, func, n_mc):
    # was numpy's "need at least one array to stack" (0) or a silent NaN se (1)
    with pytest.raises(ValueError, match="n_mc must be >= 2"):
        func(ds, n_mc)


def test_options_are_validated_and_never_truncated(ds):
    with pytest.raises(ValueError, match="n_mc must be a whole number"):
        simulated_reference(ds, statistic="CC", n_mc=100.5)
    with pytest.raises(ValueError, match="n_boot must be a whole number"):
        validate_simulated(ds, statistic="CC", n_mc=10, n_boot=2.5)
    with pytest.raises(TypeError, match="n_bins must be an integer"):
        simulated_reference(ds, statistic="ENCE", n_mc=10, n_bins=True)
    with pytest.raises(ValueError, match=r"ci must be in \(0, 1\)"):
        simulated_reference(ds, statistic="CC", n_mc=10, ci=1.5)
    with pytest.raises(TypeError, match="rng must be"):
        simulated_reference(ds, statistic="CC", n_mc=10, rng=np.random.RandomState(0))
    with pytest.raises(TypeError, match="progress"):
        simulated_reference(ds, statistic="CC", n_mc=10, progress="yes")
    with pytest.raises(TypeError, match="return_samples"):
        simulated_reference(ds, statistic="CC", n_mc=10, return_samples=1)
    with pytest.raises(ValueError, match="coverage_factor must be"):
        validate_with_references(ds, statistic="CC", n_mc=10, n_boot=10, coverage_factor=0)
    with pytest.raises(ValueError, match="scheme must be one of"):
        validate_simulated(ds, statistic="CC", scheme="Sim3")
    with pytest.raises(ValueError, match="scheme: .*'Sim3'"):
        validate_simulated(ds, statistic="CC", scheme=["Sim", "Sim3"])
    with pytest.raises(ValueError, match="scheme 'BS' needs a statistic with a predefined"):
        validate_simulated(ds, statistic="CC", scheme=["Sim", "BS"])
    with pytest.raises(ValueError, match="statistics must name at least one"):
        uqviz.size_dependence(statistics=(), n_mc=10)
    with pytest.raises(ValueError, match="sizes must be a non-empty 1-d sequence"):
        uqviz.size_dependence(sizes=(), n_mc=10)
    with pytest.raises(
        ValueError, match=r"nu: values must be finite and > 0; 1 value\(s\) are not: \[0.0\]"
    ):
        uqviz.size_dependence(nu=(0,), n_mc=10)
    with pytest.raises(ValueError, match="n_boot must be 0"):
        uqviz.confidence_curve(ds, n_boot=1)
    with pytest.raises(TypeError, match="normalize"):
        uqviz.confidence_curve(ds, normalize="yes")
    with pytest.raises(ValueError, match="error_statistic must be one of"):
        uqviz.confidence_curve(ds, error_statistic="Q95")
    with pytest.raises(
        ValueError, match=r"fractions must be in \[0, 1\): 1 value\(s\) are not \(first: nan\)"
    ):
        uqviz.confidence_curve(ds, fractions=[0.0, np.nan])


def test_statistic_is_keyword_only_and_renamed_options_are_gone(ds):
    for func in (validate_with_references, validate_simulated, simulated_reference):
        p = inspect.signature(func).parameters
        assert p["statistic"].kind is inspect.Parameter.KEYWORD_ONLY, func.__name__
    with pytest.raises(TypeError):
        validate_with_references(ds, "ZMS")  # was positional
    params = inspect.signature(uqviz.extrapolate).parameters
    assert "method" in params and "min_count" in params
    assert "ci_method" not in params and "min_per_bin" not in params
    with pytest.raises(TypeError, match="ci_method"):
        uqviz.extrapolate(ds, ci_method="ols")
    with pytest.raises(TypeError, match="min_per_bin"):
        uqviz.extrapolate(ds, min_per_bin=30)


# ---------------------------------------------------------------- generative: one or several
def test_generative_one_or_a_sequence(ds):
    one = simulated_reference(ds, statistic="CC", generative="t6", n_mc=64, rng=3)
    assert one["reference"].dims == () and one.attrs["generative"] == "t6"
    two = simulated_reference(ds, statistic="CC", generative=["normal", "t6"], n_mc=64, rng=3)
    assert two["reference"].dims == ("generative",)
    assert two["generative"].values.tolist() == ["normal", "t6"]
    assert two.attrs["generative"] == ["normal", "t6"]
    seq1 = simulated_reference(ds, statistic="CC", generative=["t6"], n_mc=64, rng=3)
    assert seq1["reference"].dims == ("generative",)
    # the same child stream for the first D, whether given alone or in a sequence
    assert float(seq1["reference"][0]) == float(one["reference"])
    res = validate_simulated(
        ds, statistic="CC", generative=("normal", "laplace"), n_mc=64, n_boot=100, rng=0
    )
    assert res["zeta"].dims == ("generative",) and res["estimate"].dims == ()
    with pytest.raises(ValueError, match="generative must name at least one"):
        simulated_reference(ds, statistic="CC", generative=[], n_mc=10)
    with pytest.raises(ValueError, match="generative must be distinct"):
        simulated_reference(ds, statistic="CC", generative=["t6", "t6"], n_mc=10)
    with pytest.raises(TypeError, match="generative must be"):
        simulated_reference(ds, statistic="CC", generative=6, n_mc=10)


def test_validate_with_one_generative_string_is_an_error(ds):
    # a string was iterated character by character ("normal" -> 6 "distributions")
    with pytest.raises(ValueError, match="at least two generative"):
        validate_with_references(ds, statistic="CC", generative="normal", n_mc=10, n_boot=10)
    # a statistic with a predefined reference ignores D (BS scheme)
    res = validate_with_references(ds, statistic="ZMS", generative="normal", n_boot=200, rng=0)
    assert str(res["scheme"].values) == "BS"


def test_as_generatives_and_empirical_for_data(ds):
    gens = gen.as_generatives(["normal", gen.student_t(5), "empirical"])
    assert [g.name for g in gens] == ["normal", "t5", "empirical"]
    with pytest.raises(ValueError, match="needs the dataset"):
        gens[2].sample(np.random.default_rng(0), 3)
    bound = gens[2].for_data(ds)
    z = ds.E.values / ds.uE.values
    np.testing.assert_allclose(np.sort(bound._values), np.sort((z - z.mean()) / z.std()))
    assert gens[0].for_data(ds) is gens[0]
    with pytest.raises(TypeError, match="nu must be a positive number"):
        gen.student_t("6")


# ---------------------------------------------------------------- results and dims
def test_result_names_dims_and_attrs(ds):
    ref = simulated_reference(ds, statistic="ENCE", n_mc=70, n_bins=10, rng=4, return_samples=True)
    assert set(ref.data_vars) == {
        "reference",
        "sample_sd",
        "reference_se",
        "reference_lower",
        "reference_upper",
        "samples",
    }
    assert ref["samples"].dims == ("sample",) and "replicate" not in ref.dims
    s = ref["samples"].values
    assert float(ref["reference"]) == pytest.approx(s.mean(), rel=1e-14)
    assert float(ref["reference_lower"]) == pytest.approx(np.quantile(s, 0.025), rel=1e-14)
    assert ref.attrs == {
        "statistic": "ENCE",
        "generative": "normal",
        "n_mc": 70,
        "n_bins": 10,
        "conditioning": "uE",
        "ci": 0.95,
        "rng": 4,
    }
    with pytest.warns(UserWarning, match=r"ENCE of 'NIG\(nu=6\)': bootstrap bias correction z0"):
        res = validate_simulated(ds, statistic="ENCE", n_mc=70, n_boot=100, n_bins=10, rng=4)
    assert {
        "estimate",
        "ci_lower",
        "ci_upper",
        "z0",
        "reference",
        "reference_se",
        "reference_lower",
        "reference_upper",
        "zeta",
        "valid",
        "reliable",
        "p_value",
        "se_negligible",
        "verdict",
    } == set(res.data_vars)
    # the z0 warning comes with reliable = False (issue 20)
    assert abs(float(res.z0)) > 1 and not bool(res.reliable)
    assert res.attrs["n_boot"] == 100 and res.attrs["scheme"] == "Sim"
    assert res.attrs["rng"] == 4 and res.attrs["method"] == "bca"


def test_datatree_everywhere(tree):
    ref = simulated_reference(tree, statistic="CC", n_mc=64, rng=0)
    assert ref["reference"].dims == ("dataset",)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        res = validate_simulated(
            tree,
            statistic="ZMSE",
            generative=["normal", "t6"],
            scheme=["Sim", "Sim2"],
            n_mc=64,
            n_boot=100,
            rng=0,
        )
        wf = validate_with_references(tree, statistic="CC", n_mc=64, n_boot=100, rng=0)
    assert res["zeta"].dims == ("dataset", "generative", "scheme")
    assert res["estimate"].dims == ("dataset",)
    assert wf["verdict"].dims == ("dataset",)
    # each dataset gets its own child stream: the first equals the Dataset call
    child = validate_simulated(tree["a"].to_dataset(), statistic="CC", n_mc=64, n_boot=100, rng=0)
    full = validate_simulated(tree, statistic="CC", n_mc=64, n_boot=100, rng=0)
    assert float(full["zeta"].sel(dataset="a")) == float(child["zeta"])


def test_threads_serial_and_client_none_agree(ds, monkeypatch):
    kw = dict(
        statistic="ENCE",
        generative=["normal", "t6"],
        scheme=["Sim", "Sim2"],
        n_mc=200,
        n_boot=200,
        n_bins=10,
        rng=6,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        a = validate_simulated(ds, **kw)
        monkeypatch.setenv("UQVIZ_THREADS", "1")
        b = validate_simulated(ds, **kw, client=None)
    xr.testing.assert_identical(a, b)


# ---------------------------------------------------------------- verdicts
def test_sim_verdict_is_decided_by_the_widened_interval():
    # the old ratio rounded to 1.0 and was declared valid; the reference 1 is far below 9
    est, ref, se, lo, hi = 5e21, 1.0, 1e-3, 9.0, 2.5e22
    old = (est - ref) / np.hypot(est - lo, 2 * se)
    assert abs(old) <= 1.0  # the defect
    zeta, valid = sim_zeta(est, ref, se, lo, hi)
    assert not bool(valid) and abs(float(zeta)) > 1
    # ordinary case: the paper's formula, validity = |zeta| <= 1
    zeta, valid = sim_zeta(0.05, 0.046, 0.002, 0.045, 0.055)
    assert float(zeta) == pytest.approx(0.004 / np.hypot(0.005, 0.004), rel=1e-14)
    assert bool(valid)
    # widened interval: 2 se in quadrature to each half-width
    assert bool(sim_zeta(0.05, 0.0449, 0.002, 0.045, 0.055)[1])  # outside [lo, hi], inside widened
    assert not bool(verdict(0.05, 0.0449, 0.045, 0.055)[1])


def test_sim2_zeta_keeps_its_definition():
    for est, ref, lo, hi in [
        (0.05, 0.03, 0.02, 0.045),
        (0.01, 0.03, 0.02, 0.045),
        (0.03, 0.03, 0.02, 0.045),
        (0.044, 0.03, 0.02, 0.045),
    ]:
        bound = lo if est <= ref else hi
        zeta, valid = sim2_zeta(est, ref, lo, hi)
        assert float(zeta) == pytest.approx((est - ref) / abs(bound - ref), rel=1e-14)
        assert bool(valid) == (lo <= est <= hi)


def test_bs_scheme_in_validate_simulated(ds):
    res = validate_simulated(
        ds, statistic="ZMS", scheme=["Sim", "Sim2", "BS"], n_mc=200, n_boot=500, rng=2
    )
    est, lo, hi = float(res.estimate), float(res.ci_lower), float(res.ci_upper)
    zeta, valid = verdict(est, 1.0, lo, hi)
    assert float(res.zeta.sel(scheme="BS")) == float(zeta)
    assert bool(res.valid.sel(scheme="BS")) == bool(valid)


def test_one_z0_warning_implementation():
    # the widget's copy is gone: only simulated.py words the z0 warning
    import uqviz.widgets.reference as wr

    src = inspect.getsource(wr)
    assert "z0" not in src.replace("``z0``", "")
    assert "_sim_zeta" not in src and "bootstrap_statistics" not in src
    assert '"ci": 0.95' not in src and "ci=self.ci" in src  # no hard-coded level


# ---------------------------------------------------------------- kernels in _array
def test_no_kernel_left_in_the_reference_modules():
    for mod in (extrapolation, confidence, simulated):
        src = inspect.getsource(mod)
        # no numba here (the `engine` option names it in the docstrings)
        assert "import numba" not in src and "from numba" not in src and "njit" not in src
        assert "np.cumsum" not in src, mod.__name__  # prefix sums live in _array.curves
    assert not hasattr(extrapolation, "_prefix") and not hasattr(confidence, "_curves")


def test_curve_kernels_by_hand():
    x = np.array([[1.0, 2.0, 3.0, 4.0], [0.0, 2.0, 0.0, 2.0]])
    p = kc.prefix_sums(x)
    np.testing.assert_array_equal(p, [[0, 1, 3, 6, 10], [0, 0, 2, 2, 4]])
    np.testing.assert_allclose(
        kc.prefix_bin_means(p, np.array([0, 1, 4])), [[1.0, 3.0], [0.0, 4 / 3]]
    )
    e = np.array([3.0, -1.0, 2.0, 0.5])
    removed = kc.n_removed([0.0, 0.25, 0.5, 0.75], 4)
    np.testing.assert_array_equal(removed, [0, 1, 2, 3])
    np.testing.assert_allclose(
        kc.trimmed_curves(e, removed),
        [np.sqrt(14.25 / 4), np.sqrt(5.25 / 3), np.sqrt(4.25 / 2), 0.5],
    )
    np.testing.assert_allclose(
        kc.trimmed_curves(e, removed, error="MAE", normalize=True),
        np.array([6.5 / 4, 3.5 / 3, 2.5 / 2, 0.5]) / (6.5 / 4),
    )


# ---------------------------------------------------------------- extrapolate
def test_extrapolate_min_count_method_and_verdict():
    ds = uqviz.synthetic.nig(3000, nu=6, rng=1)
    a = uqviz.extrapolate(ds, statistic="ENCE", method="ols", min_count=20)
    b = uqviz.extrapolate(ds, statistic="ENCE", method="ols", min_count=50)
    assert int(b.n_fit) < int(a.n_fit)
    assert np.all(b.smallest_bin.values[np.isfinite(b.estimate.values)] >= 50)
    zeta, valid = verdict(
        float(a.intercept), 0.0, float(a.intercept_lower), float(a.intercept_upper)
    )
    assert float(a.zeta) == float(zeta) and bool(a.valid) == bool(valid)
    assert a.attrs["method"] == "ols" and a.attrs["min_count"] == 20
    assert "n_boot" not in a.attrs and a.attrs["binning"] == "equal_count"
    with pytest.raises(ValueError, match="method must be one of"):
        uqviz.extrapolate(ds, method="jackknife")
    with pytest.raises(ValueError, match="min_count must be >= 1"):
        uqviz.extrapolate(ds, min_count=0)
    with pytest.raises(
        ValueError,
        match=r"n_bins: values must be whole numbers >= 1; "
        r"1 value\(s\) are not: \[0.0\]",
    ):
        uqviz.extrapolate(ds, n_bins=[0, 10])
    with pytest.raises(ValueError, match="n_boot must be a whole number"):
        uqviz.extrapolate(ds, n_boot=2.5)


def test_size_dependence_names():
    res = uqviz.size_dependence(
        statistics="ZMSE", sizes=400, n_bins=(5, 10), nu=6.0, n_mc=20, rng=3
    )
    assert {"reference", "sample_sd", "reference_se", "intercept_lower", "intercept_upper"} <= set(
        res.data_vars
    )
    assert "mean" not in res and res.attrs["rng"] == 3 and res.attrs["statistics"] == ["ZMSE"]


# ---------------------------------------------------------------- round 2 (contract, sweep)
@pytest.mark.parametrize(
    "call",
    [
        lambda d, **kw: simulated_reference(d, statistic="ENCE", n_mc=1, **kw),
        lambda d, **kw: validate_simulated(d, statistic="ENCE", n_mc=1, **kw),
        lambda d, **kw: validate_with_references(d, statistic="ENCE", n_mc=1, **kw),
        lambda d, **kw: uqviz.confidence_curve(d, n_mc=1, **kw),
    ],
)
@pytest.mark.parametrize(
    "bad, value",
    [
        ("rng", np.random.RandomState(0)),
        ("rng", "0"),
        ("progress", 2),
        ("n_boot", "100"),
        ("ci", 0.0),
    ],
)
def test_a_wrong_option_is_named_before_n_mc(ds, call, bad, value):
    # n_mc=1 is wrong too; it was named first and the wrong option went unnoticed
    try:
        call(ds, **{bad: value})
    except TypeError as exc:
        assert bad in str(exc)
    except ValueError as exc:
        assert bad in str(exc)
    else:  # (simulated_reference has no n_boot: Python's TypeError names it)
        pytest.fail("no error")


def test_statistic_must_be_one_name(ds):
    with pytest.raises(TypeError, match="statistic must be the name"):
        simulated_reference(ds, statistic=("ENCE",), n_mc=10)
    with pytest.raises(ValueError, match="unknown statistic"):
        validate_simulated(ds, statistic="nope", n_mc=10)


def test_extrapolate_takes_n_bins_and_its_errors_name_it(ds):
    assert "n_bins_range" not in inspect.signature(uqviz.extrapolate).parameters
    res = uqviz.extrapolate(ds, n_bins=(4, 6, 8, 10), min_count=10, fit_min_bins=3, method="ols")
    assert res["n_bins"].values.tolist() == [4, 6, 8, 10]
    assert res.attrs["n_bins"] == [4, 6, 8, 10]
    np.testing.assert_allclose(res["x"], np.sqrt(np.array([4, 6, 8, 10]) / 400))
    # the error starts with the option, not the dataset name
    with pytest.raises(ValueError, match=r"^n_bins: only 1 of the bin numbers"):
        uqviz.extrapolate(ds, n_bins=(2, 3, 4), min_count=1, fit_min_bins=3, method="ols")
    with pytest.raises(ValueError, match=r"n_bins: values must be distinct, got \[10, 10, 20\]"):
        uqviz.extrapolate(ds, n_bins=(10, 10, 20), method="ols")
    for bad in ("10", True, 2.5):
        with pytest.raises((TypeError, ValueError), match="n_bins"):
            uqviz.extrapolate(ds, n_bins=bad, method="ols")


def test_size_dependence_records_what_was_passed():
    res = uqviz.size_dependence(
        statistics=("ENCE",), sizes=(200, 400), n_bins=(4, 8), nu=(6.0,), n_mc=20, ci=0.9, rng=1
    )
    assert res.attrs["n_bins"] == [4, 8] and res.attrs["sizes"] == [200, 400]
    assert res.attrs["generative"] == "normal" and res.attrs["statistics"] == ["ENCE"]
    assert res.attrs["fits"] == ["proportional", "linear"] and res.attrs["rng"] == 1
    assert "reference_sd" not in res and res["sample_sd"].dims == res["reference"].dims
    np.testing.assert_allclose(res["reference_se"], res["sample_sd"] / np.sqrt(20))
    assert set(res.dims) == {"statistic", "generative", "nu", "size", "n_bins", "fit"}
    two = uqviz.size_dependence(
        statistics=("ENCE",),
        sizes=400,
        n_bins=(4, 8),
        nu=6.0,
        generative=["normal", "t6"],
        n_mc=20,
        fits="linear",
        rng=1,
    )
    assert two.attrs["n_bins"] == [4, 8] and two.attrs["sizes"] == 400
    assert two.attrs["generative"] == ["normal", "t6"]
    assert two["fit"].values.tolist() == ["linear"]
    # the linear fit does not depend on which fits are asked for
    np.testing.assert_allclose(
        two["slope"].sel(generative="normal", fit="linear"),
        uqviz.size_dependence(
            statistics=("ENCE",), sizes=400, n_bins=(4, 8), nu=6.0, n_mc=20, rng=1
        )["slope"]
        .sel(fit="linear")
        .squeeze("generative"),
    )
    with pytest.raises(ValueError, match="fits"):
        uqviz.size_dependence(sizes=400, n_bins=(4, 8), nu=6.0, n_mc=20, fits="cubic")
    with pytest.raises(ValueError, match="references: the size_dependence result has no"):
        uqviz.extrapolate(
            uqviz.synthetic.nig(3000, rng=0),
            statistic="ENCE",
            method="ols",
            references=two.sel(fit=[]),
        )


def test_reference_distribution_takes_n_bins(ds):
    import matplotlib.pyplot as plt

    from uqviz.plots.reference import reference_distribution

    ref = simulated_reference(ds, statistic="ZMS", n_mc=100, rng=0, return_samples=True)

    def edges(n_bins):  # the histogram is one step patch (stairs): its edges are the bins'
        ax = reference_distribution(ref, observed=1.0, n_bins=n_bins)
        (step,) = [p for p in ax.patches if type(p).__name__ == "StepPatch"]
        return step.get_data().edges

    assert len(edges(7)) == 8
    plt.close("all")
    assert len(edges(13)) == 14
    with pytest.raises(TypeError, match="n_bins"):
        reference_distribution(ref, n_bins=True)
    plt.close("all")


def test_defaults_of_the_explorer_and_as_generatives():
    from uqviz.widgets.reference import ReferenceExplorer

    assert inspect.signature(ReferenceExplorer).parameters["n_boot"].default == 1000
    p = inspect.signature(gen.as_generatives).parameters["data"]
    assert p.kind == inspect.Parameter.KEYWORD_ONLY


def test_the_old_name_validate_warns_and_gives_the_same_result():
    """``uqviz.validate`` is ``validate_with_references`` under a FutureWarning naming the new
    name and the release that removes it (issue 38, item 4); not exported in ``__all__``."""
    import uqviz
    from uqviz.engine.deprecation import REMOVED_IN

    ds = uqviz.synthetic.nig(400, nu=10, rng=2)
    with pytest.warns(FutureWarning) as caught:
        old = uqviz.validate(ds, statistic="CC", n_mc=30, n_boot=40, rng=5, progress=False)
    messages = [str(w.message) for w in caught if w.category is FutureWarning]
    assert messages == [
        f"uqviz.validate is deprecated and will be removed in uqviz {REMOVED_IN}: "
        "use uqviz.validate_with_references instead"
    ]
    new = validate_with_references(ds, statistic="CC", n_mc=30, n_boot=40, rng=5, progress=False)
    assert old.identical(new) and old.attrs == new.attrs
    assert str(new["verdict"].values) in ("OK", "fails", "unreliable")
    assert uqviz.validate is uqviz.reference.validate is simulated.validate
    assert "validate" not in uqviz.__all__ and "validate_with_references" in uqviz.__all__
    assert uqviz.validate_with_references is uqviz.reference.validate_with_references
