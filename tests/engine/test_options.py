"""One implementation of each idea (issue 22, item 3): the client resolver, the seeding rule,
the option checks, ``engine=`` on every bootstrap, the count of valid bins."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
import xarray as xr

import uqviz
from uqviz._array import jit
from uqviz.engine import checks, parallel, seeds
from uqviz.experiments import studies


def _quiet(func, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return func(*args, **kwargs)


@pytest.fixture(scope="module")
def ds():
    return uqviz.synthetic.nig(600, nu=10, rng=0)


# ---------------------------------------------------------------------------- 1. client --
def test_the_studies_resolve_client_with_the_engines_resolver():
    # one meaning of "local": the studies call the engine's resolver, and start no cluster of
    # their own (the two-process cluster per call is gone)
    assert studies.resolve_client is parallel.resolve_client
    assert not hasattr(studies, "_local_client") and not hasattr(studies, "local_cluster")


@pytest.mark.parametrize("client, error", [("cluster", ValueError), (3, TypeError)])
def test_a_bad_client_gives_the_engines_error_everywhere(ds, client, error):
    with pytest.raises(error) as expected:
        parallel.check_client(client)
    calls = [
        lambda: studies.validation_probability(
            nu=[4.0], n_datasets=2, size=50, n_boot=20, rng=0, progress=False, client=client
        ),
        lambda: studies.statistic_bias(
            nu_ig=[4.0], nu_d=[6.0], n_datasets=2, size=50, rng=0, progress=False, client=client
        ),
        lambda: uqviz.validate_average(ds, n_boot=20, rng=0, client=client),
        lambda: uqviz.simulated_reference(
            ds, statistic="ENCE", n_mc=10, rng=0, client=client, progress=False
        ),
    ]
    for call in calls:
        with pytest.raises(error) as got:
            call()
        assert str(got.value) == str(expected.value)


# ------------------------------------------------------------------------- 2. seeding --
def test_child_is_the_node_of_the_spawn_tree():
    a = seeds.child(11, 2, 5).integers(0, 2**32, size=4)
    b = seeds.spawn(seeds.spawn(11, 3)[2], 6)[5].integers(0, 2**32, size=4)
    np.testing.assert_array_equal(a, b)
    # the same node from a SeedSequence root, and the numbers of numpy's own spawn_key
    np.testing.assert_array_equal(
        seeds.child(np.random.SeedSequence(11), 2, 5).integers(0, 2**32, size=4), a
    )
    ss = np.random.SeedSequence(11, spawn_key=(2, 5))
    np.testing.assert_array_equal(
        np.random.Generator(np.random.PCG64(ss)).integers(0, 2**32, size=4), a
    )
    with pytest.raises(ValueError, match="path"):
        seeds.child(1, -1)
    with pytest.raises(TypeError, match="seed"):
        seeds.child(np.random.default_rng(0), 1)


def test_study_datasets_are_spawn_tree_nodes():
    # dataset i of model (a, b, nu_D): seeds.child(entropy, bits(a), bits(b), bits(nu_D), i, s)
    res = studies.statistic_bias(
        nu_ig=[6.0], nu_d=[np.inf], n_datasets=3, size=300, rng=5, progress=False
    )
    entropy = res.attrs["entropy"]
    assert entropy == seeds.kernel_seed(5)
    key = [seeds.value_index(x) for x in (3.0, 3.0, np.inf)]
    for i in range(3):
        e, u = uqviz.synthetic.draw_calibrated(
            300, a=3.0, b=3.0, rng=seeds.child(entropy, *key, i, 0)
        )
        zms = float(np.mean((e / u) ** 2))
        assert float(res["estimate_per_dataset"].sel(statistic="ZMS")[0, 0, i]) == pytest.approx(
            zms, rel=1e-12
        )
    assert "seeds.child" in res.attrs["seeding"]


def test_nig_skewness_curve_uses_the_spawn_tree():
    res = uqviz.nig_skewness_curve(nu=[4.0], size=400, rng=3)
    e, u = uqviz.synthetic.draw_calibrated(
        400, a=2.0, b=2.0, rng=seeds.child(res.attrs["entropy"], seeds.value_index(4.0))
    )
    t = uqviz.tailedness(uqviz.from_arrays(e, u))
    np.testing.assert_allclose(res["beta_gm"].sel(nu=4.0).values, t["beta_gm"].values, rtol=1e-10)


def _cli_json(tmp_path, *args):
    from uqviz.cli import main

    path = tmp_path / "out.json"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        main(["validate", *args, "--json", str(path)])
    return json.loads(path.read_text())


@pytest.mark.parametrize("gate", [[], ["--fail-on", "average"]])
def test_cli_seed_gives_the_numbers_of_the_same_rng_in_python(tmp_path, capsys, gate):
    doc = _cli_json(tmp_path, "--n-boot", "500", "--seed", "7", *gate)
    capsys.readouterr()
    res = _quiet(uqviz.validate_average, uqviz.synthetic.default_example(), n_boot=500, rng=7)
    for var in ("estimate", "ci_lower", "ci_upper", "zeta"):
        np.testing.assert_array_equal(
            doc["average"]["data"][var]["values"], res[var].values, err_msg=var
        )


# -------------------------------------------------------------------------- 3. checks --
def _size_calls(size):
    return {
        "synthetic.nig": lambda: uqviz.synthetic.nig(size, nu=6, rng=0),
        "synthetic.tig": lambda: uqviz.synthetic.tig(size, rng=0),
        "synthetic.calibrated": lambda: uqviz.synthetic.calibrated(size, a=3, b=3, rng=0),
        "synthetic.student_t_scaled": lambda: uqviz.synthetic.student_t_scaled(size, nu=6),
        "synthetic.default_example": lambda: uqviz.synthetic.default_example(size=size),
        "nig_skewness_curve": lambda: uqviz.nig_skewness_curve(nu=[4.0], size=size, rng=0),
        "statistic_bias": lambda: uqviz.statistic_bias(
            nu_ig=[4.0], nu_d=[6.0], n_datasets=2, size=size, rng=0, progress=False
        ),
    }


def test_a_whole_float_size_is_the_number_everywhere():
    for name, call in _size_calls(2000.0).items():
        out = call()
        n = out.sizes.get("point", 2000) if isinstance(out, xr.Dataset) else len(out)
        if name in ("nig_skewness_curve", "statistic_bias"):
            n = out.attrs["size"]
        assert n == 2000, name


BAD_OPTIONS = [
    ("size", True, TypeError),
    ("size", 2.5, ValueError),
    ("size", "10", TypeError),
    ("n_boot", True, TypeError),
    ("n_boot", 2.5, ValueError),
    ("n_boot", 1, ValueError),
    ("ci", 1.5, ValueError),
    ("ci", "x", TypeError),
    ("ci", True, TypeError),
    ("engine", "cuda", ValueError),
    ("rng", -1, ValueError),
    ("rng", np.random.RandomState(0), TypeError),
    ("progress", "yes", TypeError),
    ("n_bins", True, TypeError),
    ("n_bins", 0, ValueError),
]


def _option_calls(ds, option, value):
    kw = {option: value}
    if option == "size":
        return list(_size_calls(value).values()) + [
            lambda: uqviz.operating_characteristics(
                scenarios=("calibrated",),
                n_datasets=1,
                verdicts=("tailedness:Z2",),
                rng=0,
                progress=False,
                **kw,
            )
        ]
    calls = {
        "n_boot": [
            "validate_average",
            "local_calibration",
            "decimation_curve",
            "proper_scores",
            "validate_with_references",
            "confidence_curve",
            "qce",
            "report",
            "operating_characteristics",
            "validation_probability",
        ],
        "ci": [
            "validate_average",
            "local_calibration",
            "proper_scores",
            "validate_with_references",
            "confidence_curve",
            "qce",
            "operating_characteristics",
            "validation_probability",
        ],
        "engine": [
            "validate_average",
            "local_calibration",
            "decimation_curve",
            "proper_scores",
            "validate_with_references",
            "validate_simulated",
            "confidence_curve",
            "qce",
            "extrapolate",
            "report",
            "operating_characteristics",
            "validation_probability",
            "reliability",
            "ordering_study",
        ],
        "rng": [
            "validate_average",
            "local_calibration",
            "validate_with_references",
            "confidence_curve",
            "qce",
            "nig_skewness_curve",
            "statistic_bias",
            "operating_characteristics",
        ],
        "progress": [
            "validate_with_references",
            "confidence_curve",
            "statistic_bias",
            "simulated_reference",
        ],
        "n_bins": [
            "binned_errors",
            "local_calibration",
            "simulated_reference",
            "qce",
            "reliability",
        ],
    }[option]
    e, u = ds["E"].values, ds["uE"].values
    base = {  # name: (function, positional arguments, cheap options)
        "validate_average": (uqviz.validate_average, (ds,), dict(n_boot=20, rng=0)),
        "local_calibration": (uqviz.local_calibration, (ds,), dict(n_boot=20, n_mc=0, rng=0)),
        "reliability": (uqviz.reliability, (ds,), dict(n_boot=20, rng=0)),
        "ordering_study": (
            uqviz.ordering_study,
            (ds,),
            dict(conditioning="uE", n_orderings=2, n_boot=20, rng=0),
        ),
        "decimation_curve": (uqviz.decimation_curve, (ds,), dict(n_boot=20, rng=0)),
        "proper_scores": (uqviz.proper_scores, (ds,), dict(n_boot=20, rng=0)),
        "validate_with_references": (
            uqviz.validate_with_references,
            (ds,),
            dict(statistic="ZMS", n_boot=20, rng=0),
        ),
        "validate_simulated": (
            uqviz.validate_simulated,
            (ds,),
            dict(statistic="ZMS", n_mc=10, n_boot=20, rng=0),
        ),
        "simulated_reference": (
            uqviz.simulated_reference,
            (ds,),
            dict(statistic="ENCE", n_mc=10, rng=0),
        ),
        "binned_errors": (uqviz.binned_errors, (ds,), {}),
        "confidence_curve": (uqviz.confidence_curve, (ds,), dict(n_mc=10, n_boot=20, rng=0)),
        "extrapolate": (uqviz.extrapolate, (ds,), dict(statistic="ENCE", n_boot=20, rng=0)),
        "qce": (uqviz.qce, (e, 0.0, u), dict(n_boot=20, rng=0)),
        "report": (uqviz.report, (ds,), dict(n_boot=20, n_mc=10, figures=False)),
        "operating_characteristics": (
            uqviz.operating_characteristics,
            (),
            dict(
                scenarios=("calibrated",),
                size=100,
                n_datasets=1,
                verdicts=("average:ZMS",),
                n_boot=20,
                rng=0,
                progress=False,
            ),
        ),
        "validation_probability": (
            uqviz.validation_probability,
            (),
            dict(nu=[4.0], n_datasets=2, size=50, n_boot=20, rng=0, progress=False),
        ),
        "statistic_bias": (
            uqviz.statistic_bias,
            (),
            dict(nu_ig=[4.0], nu_d=[6.0], n_datasets=2, size=50, rng=0, progress=False),
        ),
        "nig_skewness_curve": (uqviz.nig_skewness_curve, (), dict(nu=[4.0], size=100, rng=0)),
    }

    def call(name):
        func, args, opts = base[name]
        return lambda: func(*args, **{**opts, **kw})

    return [call(name) for name in calls]


def _value_id(value):
    """A test id that is the same in every process (pytest-xdist's workers collect the same
    ids): the repr of a plain value, the type of an object (whose repr holds its address)."""
    plain = (type(None), bool, int, float, str)
    return repr(value) if isinstance(value, plain) else type(value).__name__


@pytest.mark.parametrize(
    "option, value, error", BAD_OPTIONS, ids=[f"{o}={_value_id(v)}" for o, v, _ in BAD_OPTIONS]
)
def test_the_same_mistake_gives_the_same_error_everywhere(ds, option, value, error):
    """One check per option (uqviz.engine.checks): the same error type and message."""
    messages = set()
    for call in _option_calls(ds, option, value):
        with pytest.raises(error) as got:
            _quiet(call)
        msg = str(got.value).split(": ", 1)[-1] if "dataset '" in str(got.value) else str(got.value)
        assert option in msg, msg
        messages.add(msg)
    # n_boot=1: "0 (no interval) or >= 2" where a function documents n_boot=0
    assert len(messages) == 1 or (option, value) == ("n_boot", 1), messages


def test_drop_invalid_and_the_progress_option_are_booleans():
    with pytest.raises(TypeError, match="drop_invalid must be True or False"):
        uqviz.from_arrays([1.0, 2.0], [1.0, 1.0], drop_invalid="yes")
    with pytest.raises(TypeError, match="progress must be True or False"):
        parallel.show_progress("yes")
    with pytest.raises(TypeError, match="name must be a str"):
        uqviz.from_arrays([1.0, 2.0], [1.0, 1.0], name=3)


def test_grid_check():
    np.testing.assert_array_equal(checks.grid("nu", 3), [3.0])
    for bad, error, match in [
        ([], ValueError, "non-empty"),
        ([1.0, 1.0], ValueError, "distinct"),
        ([np.nan], ValueError, "finite"),
        ("3", TypeError, "number"),
        ([0.0], ValueError, "> 0"),
    ]:
        with pytest.raises(error, match=match):
            checks.grid("nu", bad, lower=0.0)
    np.testing.assert_array_equal(
        checks.grid("nu_d", [np.inf], lower=2.0, allow_inf=True), [np.inf]
    )


# -------------------------------------------------------------------------- 5. engine --
#: (lower, upper) of the bootstrap interval in each result
_INTERVAL = {
    "reliability": ("rmse_lower", "rmse_upper"),
    "decimation_curve": ("ci_lower_halfwidth", "ci_upper_halfwidth"),
    "validation_probability": ("zeta", "zeta"),
}


def _interval(name, res):
    lo, hi = _INTERVAL.get(name, ("ci_lower", "ci_upper"))
    return np.ravel(res[lo].values).astype(float), np.ravel(res[hi].values).astype(float)


def _run(name, ds, engine):
    kw = dict(engine=engine)
    return _quiet(
        {
            "validate_average": lambda: uqviz.validate_average(ds, n_boot=2000, rng=1, **kw),
            "local_calibration": lambda: uqviz.local_calibration(
                ds, n_bins=4, n_boot=2000, n_mc=0, rng=1, **kw
            ),
            "reliability": lambda: uqviz.reliability(ds, n_bins=4, n_boot=2000, rng=1, **kw),
            "ordering_study": lambda: uqviz.ordering_study(
                ds.assign(Xr=("point", np.round(ds["uE"].values, 1))),
                conditioning="Xr",
                n_bins=4,
                n_orderings=3,
                n_boot=2000,
                rng=1,
                progress=False,
                **kw,
            ),
            "decimation_curve": lambda: uqviz.decimation_curve(ds, n_boot=2000, rng=1, **kw),
            "proper_scores": lambda: uqviz.proper_scores(
                ds, scores=("nll",), n_boot=2000, rng=1, **kw
            ),
            "validate_with_references": lambda: uqviz.validate_with_references(
                ds, statistic="ZMS", n_boot=2000, rng=1, **kw
            ),
            "validate_simulated": lambda: uqviz.validate_simulated(
                ds, statistic="ZMS", n_mc=20, n_boot=2000, rng=1, **kw
            ),
            "validation_probability": lambda: uqviz.validation_probability(
                nu=[6.0], n_datasets=4, size=300, n_boot=2000, rng=1, progress=False, **kw
            ),
            "confidence_curve": lambda: uqviz.confidence_curve(
                ds, n_mc=20, n_boot=200, rng=1, progress=False, **kw
            ),
            "extrapolate": lambda: uqviz.extrapolate(
                ds,
                statistic="ENCE",
                n_bins=range(10, 20),
                min_count=10,
                fit_min_bins=0,
                n_boot=50,
                rng=1,
                progress=False,
                **kw,
            ),
            "qce": lambda: uqviz.qce(
                ds["E"].values, 0.0, ds["uE"].values, levels=[0.5, 0.9], n_boot=500, rng=1, **kw
            ),
        }[name]
    )


SAME_DISTRIBUTION = [
    "validate_average",
    "local_calibration",
    "reliability",
    "ordering_study",
    "decimation_curve",
    "proper_scores",
    "validate_with_references",
    "validate_simulated",
    "validation_probability",
]
NUMPY_ONLY = ["confidence_curve", "extrapolate", "qce"]


@pytest.mark.skipif(not jit.HAVE_NUMBA, reason="numba not installed")
@pytest.mark.parametrize("name", SAME_DISTRIBUTION)
def test_the_engines_give_the_same_distribution_other_numbers(ds, name):
    """docs/conventions.md, `engine`: "numba" and "numpy" resample from other streams."""
    a, b = _run(name, ds, "numpy"), _run(name, ds, "numba")
    assert a.attrs["engine"] == "numpy" and b.attrs["engine"] == "numba"
    if name == "ordering_study":  # its data order is local_calibration's, engine included
        data = ds.assign(Xr=("point", np.round(ds["uE"].values, 1)))
        for res, e in ((a, "numpy"), (b, "numba")):
            loc = _quiet(
                uqviz.local_calibration,
                data,
                conditioning="Xr",
                n_bins=4,
                n_boot=2000,
                n_mc=0,
                rng=1,
                engine=e,
            )
            np.testing.assert_array_equal(res["valid_data"].values, loc["valid"].values)
        return
    (lo_a, hi_a), (lo_b, hi_b) = _interval(name, a), _interval(name, b)
    ok = np.isfinite(lo_a) & np.isfinite(lo_b)
    assert ok.any() and not np.array_equal(lo_a[ok], lo_b[ok])  # passed down: other streams
    if name == "validation_probability":  # the zeta-scores of the same sets, other resamples
        assert np.allclose(lo_a[ok], lo_b[ok], atol=0.3)
        return
    # same distribution: with 2000 replicates an endpoint moves by a few % of the interval
    width = np.abs(hi_a - lo_a)
    fine = ok & np.isfinite(width)
    assert np.all(np.abs(lo_a - lo_b)[fine] <= 0.25 * width[fine] + 1e-12)
    assert np.all(np.abs(hi_a - hi_b)[fine] <= 0.25 * width[fine] + 1e-12)


@pytest.mark.parametrize("name", NUMPY_ONLY)
def test_a_numpy_only_bootstrap_gives_the_same_numbers_whatever_the_engine(ds, name):
    a, b = _run(name, ds, "numpy"), _run(name, ds, "numba")
    assert a.attrs["engine"] == "numpy" and b.attrs["engine"] == "numba"
    xr.testing.assert_identical(a.drop_attrs(), b.drop_attrs())


def test_report_passes_engine_down(ds):
    reps = [
        _quiet(uqviz.report, ds, n_boot=300, n_mc=20, figures=False, remedy=False, engine=e)
        for e in ("numpy", "numba")
    ]
    lo = [np.asarray(r.numbers["average"]["data"]["ci_lower"]["values"]) for r in reps]
    assert not np.array_equal(*lo)
    direct = _quiet(
        uqviz.validate_average,
        ds,
        statistics=("ZMS", "RCE", "NLL"),
        n_boot=300,
        rng=np.random.default_rng(0).spawn(1)[0],
        engine="numpy",
    )
    np.testing.assert_array_equal(lo[0], direct["ci_lower"].values)


def test_every_bootstrap_function_takes_engine():
    import inspect

    import uqviz.widgets

    funcs = {n: getattr(uqviz, n) for n in uqviz.__all__ if callable(getattr(uqviz, n))}
    funcs.update(
        ConditionalExplorer=uqviz.widgets.ConditionalExplorer,
        ReferenceExplorer=uqviz.widgets.ReferenceExplorer,
    )
    missing = []
    for name, f in funcs.items():
        try:
            params = inspect.signature(f).parameters
        except (TypeError, ValueError):
            continue
        if "n_boot" in params and "engine" not in params:
            missing.append(name)
    assert not missing


# ------------------------------------------------------------------- 6. valid bins --
def test_ordering_study_counts_valid_bins_as_fraction_valid():
    """f_v is Pernot (2023)'s: every bin whose interval holds the reference counts, a
    heavy-tailed one too (docs/conventions.md, "Fraction of valid bins"), in the ordering
    study as in fraction_valid (issue 36, item 4)."""
    rng = np.random.default_rng(4)
    m = 3000
    x = np.round(rng.uniform(0, 1, m), 1)
    u = rng.uniform(0.5, 1.5, m)
    eps = np.where(x > 0.6, rng.standard_t(2.5, m) * np.sqrt(0.5 / 2.5), rng.standard_normal(m))
    data = uqviz.from_arrays(u * eps, u, features={"x": x})
    res = _quiet(
        uqviz.ordering_study,
        data,
        conditioning="x",
        n_bins=10,
        n_orderings=5,
        n_boot=500,
        rng=2,
        progress=False,
    )
    heavy = res["heavy_tail"].values
    assert heavy.any() and (res["valid"].values & heavy).any()  # a heavy bin holding the ref
    np.testing.assert_allclose(res["fv_ordering"].values, res["valid"].values.mean(axis=1))
    assert float(res["fv"]) == pytest.approx(float(res["valid"].mean("bin").mean()))
    # the data order: the count of fraction_valid on local_calibration with the same rng
    loc = _quiet(
        uqviz.local_calibration, data, conditioning="x", n_bins=10, n_boot=500, n_mc=0, rng=2
    )
    np.testing.assert_array_equal(res["heavy_tail_data"].values, loc["heavy_tail"].values)
    fv = uqviz.fraction_valid(loc, method="wilson")
    assert float(res["fv_data"]) == pytest.approx(float(fv["estimate"]))


@pytest.mark.parametrize(
    "value, error, match",
    [
        (
            [0.1, 1.0],
            ValueError,
            r"fractions must be in \[0, 1\): 1 value\(s\) are not \(first: 1.0\)",
        ),
        ([-0.1, np.nan, 0.2], ValueError, r"2 value\(s\) are not \(first: -0.1\)"),
        ([True, 0.2], TypeError, "fractions must be numbers in"),
        (["0.1"], TypeError, "fractions must be numbers in"),
        ([], ValueError, "non-empty 1-D"),
    ],
)
def test_fractions_are_checked_once_for_decimation_and_confidence_curves(ds, value, error, match):
    """decimation_curve and confidence_curve share checks.fractions: same error, same text."""
    messages = set()
    for call in (
        lambda: uqviz.decimation_curve(ds, fractions=value, n_boot=10, rng=0),
        lambda: uqviz.confidence_curve(
            ds, fractions=value, n_mc=2, n_boot=0, rng=0, progress=False
        ),
    ):
        with pytest.raises(error, match=match) as got:
            call()
        messages.add(str(got.value))
    assert len(messages) == 1, messages
    assert checks.fractions("fractions", 0.25).tolist() == [0.25]


def test_integer_grids_share_checks_grid():
    """size_dependence(sizes=, n_bins=) and extrapolate(n_bins=) check their grids with
    checks.grid(integer=True): whole numbers >= 1, distinct, no bools."""
    np.testing.assert_array_equal(checks.grid("n_bins", (10, 20.0), integer=True), [10, 20])
    assert checks.grid("n_bins", (10, 20), integer=True).dtype == np.int64
    for bad, error, match in [
        ((10, 2.5), ValueError, r"whole numbers >= 1; 1 value\(s\) are not: \[2.5\]"),
        ((0, 4), ValueError, r"not: \[0.0\]"),
        ((True, 4), TypeError, "a number or a sequence of numbers"),
        ((4, 4), ValueError, r"distinct, got \[4, 4\]"),
    ]:
        with pytest.raises(error, match=match):
            checks.grid("n_bins", bad, integer=True)
        with pytest.raises(error, match="n_bins"):
            uqviz.size_dependence(
                statistics=("ENCE",),
                sizes=(200,),
                n_bins=bad,
                nu=(6.0,),
                n_mc=2,
                rng=0,
                progress=False,
            )
