"""The API contract of docs/conventions.md, enforced on every public callable.

The callables are found by introspection (``uqviz.__all__``, the public names of
``uqviz.datasets``, ``uqviz.synthetic``, ``uqviz.generative``, ``uqviz.statistics``,
``uqviz.experiments``, ``uqviz.quantile`` and of every public module of ``uqviz.plots``
and ``uqviz.widgets``), so a new function is checked as soon as it is exported.
Each rule is one parametrized test, so a failure names the rule and the function:

- signatures: data positional, then ``*``, then options; no-data functions keyword-only;
- option names: the forbidden names, the contract's vocabulary (the defaults table:
  tests/engine/test_defaults.py);
- calls on small synthetic data with cheap options: a Dataset and a DataTree are
  accepted (the tree adds a leading ``dataset`` dim); result variable names, dims,
  ``replicate`` only from a bootstrap, settings recorded in ``attrs`` under the
  parameter names with the values passed, ``valid`` decided by the interval.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import pkgutil
import re
import warnings

import numpy as np
import pytest
import xarray as xr

import uqviz
from tests.conftest import conventions_tables, make_small_dataset, make_small_tree

# ----------------------------------------------------------------------------------------
# discovery
# ----------------------------------------------------------------------------------------

NAMESPACES = [
    "uqviz",
    "uqviz.datasets",
    "uqviz.synthetic",
    "uqviz.generative",
    "uqviz.statistics",
    "uqviz.experiments",
    "uqviz.quantile",
]


def _ui_modules():
    import uqviz.plots
    import uqviz.widgets

    out = []
    for pkg in (uqviz.plots, uqviz.widgets):
        for info in pkgutil.iter_modules(pkg.__path__):
            if not info.name.startswith("_"):
                out.append(f"{pkg.__name__}.{info.name}")
    return out


def _public_names(mod):
    names = getattr(mod, "__all__", None)
    if names is None:  # no __all__: the public names defined in the module itself
        names = [
            n
            for n, o in vars(mod).items()
            if not n.startswith("_") and getattr(o, "__module__", None) == mod.__name__
        ]
    return list(names)


def _collect():
    """``{qualified name: callable}``, each object once (its first public path)."""
    found, seen = {}, set()
    for modname in NAMESPACES + _ui_modules():
        mod = importlib.import_module(modname)
        for name in _public_names(mod):
            obj = getattr(mod, name)
            if inspect.ismodule(obj) or not callable(obj):
                continue
            if inspect.isclass(obj) and issubclass(obj, BaseException):
                continue  # exception types are raised, not called
            if not getattr(obj, "__module__", "").startswith("uqviz"):
                continue
            if id(obj) in seen:
                continue
            seen.add(id(obj))
            found[f"{modname}.{name}"] = obj
    return found


PUBLIC = _collect()
IS_UI = {q: q.startswith(("uqviz.plots.", "uqviz.widgets.")) for q in PUBLIC}


def _short(qual):
    return qual.rsplit(".", 1)[1]


def _params(obj):
    return list(inspect.signature(obj).parameters.values())


# ----------------------------------------------------------------------------------------
# 1. signatures: data positional, then *, then options
# ----------------------------------------------------------------------------------------

# Parameter names that hold data (E/uE datasets, result Datasets to plot or summarise,
# arrays of multivariate predictions, files, formulas); they may be positional.
DATA_NAMES = {
    "data",
    "ds",
    "df",
    "path",
    "y",
    "mean",
    "scale",
    "errors",
    "uncertainties",
    "datasets",
    "e",
    "u",
    "result",
    "results",
    "shapes",
    "fv",
    "nig_curve",
    "formula",
    "formulas",
    "y_true",
    "y_pred",
    "X",
    "samples",
    "cov",
}

# Necessary exceptions to "no data -> keyword-only", each with its reason.
POSITIONAL_ALLOWED = {
    ("uqviz.get_statistic", "name"): "a registry lookup: the name is the subject, not an option",
    (
        "uqviz.statistics.register_statistic",
        "statistic",
    ): "the Statistic object registered is the subject of the call",
    (
        "uqviz.statistics.unregister_statistic",
        "name",
    ): "a registry lookup: the name is the subject, as in get_statistic",
    ("uqviz.generative.get_generative", "spec"): "a lookup: the specification is the subject",
    (
        "uqviz.from_estimator",
        "estimator",
    ): "the fitted model is the subject: it makes the predictions from X, as in scikit-learn's "
    "scorers (estimator, X, y)",
    ("uqviz.generative.as_generatives", "spec"): "a lookup: the specification is the subject",
    (
        "uqviz.generative.student_t",
        "nu",
    ): "a distribution factory's one defining parameter, as scipy.stats.t(df)",
    ("uqviz.datasets.fetch", "key"): "a file lookup: the registry key is the subject",
    (
        "uqviz.stored_study",
        "compute",
    ): "the computation stored is the subject of the call, beside its file (a cache, "
    "as functools.cache(func))",
    ("uqviz.datasets.load_dataset", "name"): "a dataset lookup: the name is the subject",
    ("uqviz.compare_models", "tree"): "the models compared: a DataTree of forecasts of the "
    "same points is the data",
    ("uqviz.pool_targets", "tree"): "the targets tree pooled is the data (a DataTree, as "
    "compare_models' tree)",
    ("uqviz.compare_forecasts", "a"): "the two forecasts compared are both the data (a, b)",
    ("uqviz.compare_forecasts", "b"): "the two forecasts compared are both the data (a, b)",
    ("uqviz.datasets.load_collection", "name"): "a collection lookup: the name is the subject",
    ("uqviz.generative.Generative", "name"): "a record (dataclass) built by the factories",
    ("uqviz.generative.Generative", "kind"): "a record (dataclass) built by the factories",
    ("uqviz.generative.Generative", "params"): "a record (dataclass) built by the factories",
    ("uqviz.statistics.Statistic", "name"): "a record (dataclass) of the statistics registry",
    ("uqviz.statistics.Statistic", "func"): "a record (dataclass) of the statistics registry",
    ("uqviz.statistics.Statistic", "kind"): "a record (dataclass) of the statistics registry",
    **{
        ("uqviz.statistics.Statistic", f): "a record (dataclass) of the statistics registry"
        for f in ("columns", "reference", "description", "counts", "given_u")
    },
    **{
        (
            f"uqviz.statistics.{f}",
            "statistic",
        ): "an array-level registry helper: the statistic is the subject, as in get_statistic"
        for f in ("point_estimate", "reference_value", "excess_over_reference")
    },
    **{
        (
            f"uqviz.synthetic.{f}",
            "size",
        ): "a drawing function: the size of the set drawn is its subject (numpy's size)"
        for f in (
            "nig",
            "tig",
            "calibrated",
            "draw_calibrated",
            "student_t_scaled",
            "potential_committee",
        )
    },
}


def _is_data_name(name):
    return name in DATA_NAMES or name.endswith(("_result", "_results"))


@pytest.mark.parametrize("qual", sorted(PUBLIC))
def test_signature_data_positional_options_keyword_only(qual):
    obj = PUBLIC[qual]
    bad = []
    positional_kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    seen_option = False
    for p in _params(obj):
        if p.name.startswith("_"):
            continue  # private dataclass fields
        if p.kind == inspect.Parameter.VAR_POSITIONAL:
            bad.append(f"*{p.name} (options must be keyword-only)")
        elif p.kind in positional_kinds:
            allowed = _is_data_name(p.name) or (qual, p.name) in POSITIONAL_ALLOWED
            if not allowed:
                bad.append(f"{p.name} is an option but positional")
                seen_option = True
            elif seen_option:
                bad.append(f"data argument {p.name} after a positional option")
    assert not bad, f"{qual}{inspect.signature(obj)}: " + "; ".join(bad)


def test_positional_allow_list_is_current():
    stale = [
        k
        for k in POSITIONAL_ALLOWED
        if k[0] not in PUBLIC or k[1] not in inspect.signature(PUBLIC[k[0]]).parameters
    ]
    assert not stale, f"allow-list entries that match no public parameter: {stale}"


# ----------------------------------------------------------------------------------------
# 2. option names: forbidden names and the contract's vocabulary
# ----------------------------------------------------------------------------------------

FORBIDDEN = {
    "seed": "rng",
    "bins": "n_bins",
    "ci_method": "method",
    "mqce_ci": "method",
    "min_per_bin": "min_count",
    "range": "(a named option, not the builtin)",
}

# (pattern of a parameter name meaning a contract concept, the contract's name)
SYNONYMS = [
    # "level"/"levels" are the nominal probabilities of prediction intervals (their own
    # contract name); "conf_level", "ci_level" still mean ci
    (r"^(ci|conf|confidence|alpha|cl)(_\w+)?$|^\w+_(ci|conf|confidence|level|alpha)$", "ci"),
    (
        r"^(n_?boots?|nboot|num_boot\w*|n_bootstraps?|n_resamples?|bootstrap_(samples|reps|"
        r"replicates|n)|boot_(samples|reps|n))$",
        "n_boot",
    ),
    (r"^(n_?mc\w*|n_?sims?|n_simulations?|mc_(samples|size|n)|n_?draws?|n_samples?)$", "n_mc"),
    (r"^(n_?bins?(_\w+)?|num_bins|nbins|n_bins_\w+)$", "n_bins"),
    (r"^(\w*_?seed|random_state|random_seed|\w+_rng|rng_\w+|random|generator)$", "rng"),
    (r"^(progress_?bar|show_progress|progress_\w+|\w+_progress|verbose|pbar|tqdm)$", "progress"),
    (r"^(dask_client|client_\w+|\w+_client|scheduler|cluster)$", "client"),
    (r"^(\w+_method|method_\w+|interval|interval_type|ci_type|kind_ci)$", "method"),
    (r"^(min_per_bin|min_(points|size|per_bin|n|bin_count|count_\w+)|min_bin_\w+)$", "min_count"),
    # "scores" names proper scoring rules (proper_scores), not registered statistics
    (r"^(stat|stats|metric|metrics|statistic_names?)$", "statistic(s)"),
    (r"^(condition|cond|condition_on|conditioned_on|x_variable|xvar|by)$", "conditioning"),
    (r"^(binning_\w+|bin_(scheme|method|strategy)|strategy)$", "binning"),
    (r"^(generatives|distribution|dist|d_dist|generator_d)$", "generative"),
]


def _engine_doc(obj):
    doc = inspect.getdoc(obj) or ""
    m = re.search(r"^engine\s*:(.*?)(?=^\S|\Z)", doc, flags=re.S | re.M)
    return m.group(1) if m else ""


@pytest.mark.parametrize("qual", sorted(PUBLIC))
def test_no_forbidden_option_names(qual):
    obj = PUBLIC[qual]
    bad = [f"{p.name} (use {FORBIDDEN[p.name]})" for p in _params(obj) if p.name in FORBIDDEN]
    if "engine" in inspect.signature(obj).parameters:
        doc = _engine_doc(obj).lower()
        if not ("numba" in doc and "numpy" in doc) or re.search(r"netcdf|h5|scipy|zarr", doc):
            bad.append(
                "engine must mean the resampler ('numba'/'numpy'); documented as "
                f"{doc.strip()[:80]!r}"
            )
        if PUBLIC[qual].__name__ in ("save_study", "load_study"):
            bad.append("engine is the netCDF backend here (use backend)")
    assert not bad, f"{qual}: " + "; ".join(dict.fromkeys(bad))


# A name that matches a synonym pattern but means something else, each with its reason.
VOCABULARY_EXCEPTIONS = {
    (
        "uqviz.from_predictions",
        "level",
    ): "the nominal coverage of an interval the user gives (a probability level, as the dim "
    "`level`), not the `ci` of an interval uqviz computes",
}


@pytest.mark.parametrize("qual", sorted(PUBLIC))
def test_option_names_use_the_contract_vocabulary(qual):
    bad = []
    for p in _params(PUBLIC[qual]):
        if p.name in FORBIDDEN or p.name.startswith("_") or _is_data_name(p.name):
            continue
        if (qual, p.name) in VOCABULARY_EXCEPTIONS:
            continue
        for pattern, name in SYNONYMS:
            if (
                re.match(pattern, p.name)
                and p.name not in name.replace("(s)", "|s").split("|")
                and p.name not in ("statistic", "statistics", name)
            ):
                bad.append(f"{p.name} means {name}")
                break
    assert not bad, f"{qual}: " + "; ".join(bad)


def test_vocabulary_exceptions_are_current():
    stale = [
        k
        for k in VOCABULARY_EXCEPTIONS
        if k[0] not in PUBLIC or k[1] not in inspect.signature(PUBLIC[k[0]]).parameters
    ]
    assert not stale, f"vocabulary exceptions that match no public parameter: {stale}"


# ----------------------------------------------------------------------------------------
# 3. defaults (docs/conventions.md, "Defaults")
# ----------------------------------------------------------------------------------------

# The defaults are one mapping, uqviz.engine.defaults.DEFAULTS, from which the table of
# docs/conventions.md is written: tests/engine/test_defaults.py compares every public signature
# with it.


# random computations that take a client (docs/conventions.md, `client`); the synthetic draws
# and the interactive explorers run where they are called
_NO_CLIENT = {
    "calibrated",
    "draw_calibrated",
    "nig",
    "tig",
    "ConditionalExplorer",
    "ReferenceExplorer",
}


@pytest.mark.parametrize("qual", sorted(PUBLIC))
def test_bootstrap_and_monte_carlo_functions_take_a_client(qual):
    try:
        sig = inspect.signature(PUBLIC[qual]).parameters
    except (TypeError, ValueError):
        return
    if _short(qual) in _NO_CLIENT or not ({"n_boot", "n_mc", "n_datasets"} & set(sig)):
        return
    assert "client" in sig and sig["client"].kind is inspect.Parameter.KEYWORD_ONLY, (
        f"{qual}: bootstrap or Monte Carlo without a keyword-only client option"
    )


# the functions the contract's tables name exist under these names at uqviz.<name>
CONTRACT_FUNCTIONS = [
    "validate_average",
    "decimation_curve",
    "validate_simulated",
    "validate_with_references",
    "report",
    "local_calibration",
    "reliability",
    "ordering_study",
    "validation_probability",
    "extrapolate",
    "binned_errors",
    "simulated_reference",
    "qce",
    "nees",
    "nees_test",
    "confidence_curve",
    "fraction_valid",
    "interval_coverage",
    "calibration_curve",
    "proper_scores",
]


@pytest.mark.parametrize("name", CONTRACT_FUNCTIONS)
def test_contract_functions_are_exported(name):
    assert name in uqviz.__all__ and callable(getattr(uqviz, name, None)), (
        f"uqviz.{name} (named by docs/conventions.md) is not exported"
    )


# ----------------------------------------------------------------------------------------
# 4. calls on small synthetic data
# ----------------------------------------------------------------------------------------

# Cheap options per function taking E/uE data, under the contract's names.
EUE_CALLS = {
    "validate_average": dict(
        statistics=("ZMS", "RCE"), n_boot=50, ci=0.9, method="percentile", rng=1
    ),
    "tailedness": {},
    "distribution_shapes": {},
    "fit_f": {},
    "fit_inverse_gamma": {},
    "fit_student_t": {},
    "decimation_curve": dict(
        statistics=("ZMS",), fractions=(0.0, 0.5), n_boot=50, ci=0.9, method="percentile", rng=1
    ),
    "decimated": dict(fraction=0.5),
    "local_calibration": dict(
        statistic="ZMS",
        conditioning="uE",
        n_bins=4,
        binning="equal_count",
        n_boot=50,
        ci=0.9,
        method="percentile",
        rng=1,
    ),
    "local_interval_coverage": dict(
        level=0.9, conditioning="uE", n_bins=4, binning="equal_count", ci=0.9, rng=1
    ),
    "binned_errors": dict(
        statistics=("ENCE", "ZMSE"), conditioning="uE", n_bins=4, binning="equal_count"
    ),
    "reliability": dict(
        conditioning="uE", n_bins=4, binning="equal_count", n_boot=50, ci=0.9, rng=1
    ),
    "running_statistics": dict(conditioning="uE", window=50),
    "ordering_study": dict(
        statistic="ZMS",
        conditioning="x",
        n_bins=4,
        n_orderings=3,
        n_boot=50,
        ci=0.9,
        rng=1,
        progress=False,
    ),
    "adversarial_validation": dict(
        statistic="ZMS",
        sizes=(100, 20),
        n_groups=20,
        n_boot=50,
        n_mc=4,
        ci=0.9,
        method="percentile",
        rng=1,
        progress=False,
    ),
    "adversarial_group_calibration": dict(
        statistic="RMSCE",
        num_group_bins=3,
        num_group_draws=2,
        num_trials=2,
        proportions="quantile",
        n_levels=20,
        rng=1,
    ),
    "simulated_reference": dict(
        statistic="ENCE",
        generative="normal",
        n_mc=20,
        n_bins=4,
        conditioning="uE",
        ci=0.9,
        rng=1,
        progress=False,
    ),
    "validate_simulated": dict(
        statistic="ENCE",
        generative="normal",
        n_mc=20,
        n_boot=50,
        n_bins=4,
        conditioning="uE",
        ci=0.9,
        rng=1,
        progress=False,
    ),
    "validate_with_references": dict(
        statistic="ENCE",
        generative=("normal", "t6"),
        n_mc=20,
        n_boot=50,
        n_bins=4,
        ci=0.9,
        rng=1,
        progress=False,
    ),
    "confidence_curve": dict(fractions=(0.0, 0.5), n_mc=20, n_boot=50, ci=0.9, rng=1),
    "extrapolate": {
        "statistic": "ZMSE",
        "n_bins": (4, 6, 8, 10, 12),
        "min_count": 10,
        "fit_min_bins": 3,
        "n_boot": 20,
        "ci": 0.9,
        "rng": 1,
    },
    "report": dict(n_boot=50, n_mc=20, n_bins=4, rng=1, progress=False, figures=False),
    "check_dataset": {},
    "z_scores": {},
    "interval_coverage": dict(levels=(0.5, 0.9), generative="t6", ci=0.9),
    "calibration_curve": dict(n_levels=20, kind="quantile", generative="normal", ci=0.9),
    "group_coverage": dict(
        features=("y",),
        n_bins=4,
        n_mc=20,
        n_perm=20,
        n_directions=10,
        ci=0.9,
        rng=1,
        progress=False,
    ),
    "proper_scores": dict(
        scores=("nll", "crps", "check", "interval"),
        generative="t6",
        levels=(0.5, 0.9),
        n_boot=50,
        ci=0.9,
        method="percentile",
        rng=1,
    ),
    "predictive_scores": dict(
        scores=("nll", "crps", "check", "interval"),
        levels=(0.5, 0.9),
        n_boot=50,
        ci=0.9,
        method="percentile",
        rng=1,
    ),
    "ConditionalExplorer": dict(n_bins=4, n_boot=50, rng=1),
    "ReferenceExplorer": dict(n_bins=4, n_mc=20, n_boot=50, rng=1),
    "fit_histogram": {},  # a plot: takes the data and a distribution_shapes result
    "fit_recalibration": dict(method="bvs", conditioning="uE", n_bins=4),
    "recalibrate": dict(method="bvs", folds=3, rng=1, conditioning="uE", n_bins=4),
    "pit": dict(generative="t6", rng=1),
    "validate_pit": dict(n_bins=5, ci=0.9, generative="normal", rng=1, n_band=50),
    "local_pit": dict(conditioning="uE", n_bins=2, binning="equal_count", ci=0.9, rng=1, n_band=50),
}

# functions whose first parameter is data but not a dataset of E/uE results
NOT_EUE = {
    "uqviz.generative.empirical": "returns one Generative (a distribution), not a result "
    "Dataset; a DataTree has no single distribution",
    "uqviz.generative.get_generative": "a lookup; data only feeds 'empirical'",
    "uqviz.save_study": "ds is a study result written to a file, not E/uE data",
}

# functions that return data (a tree may stay a tree); the others return results
DATA_RETURNING = {"check_dataset", "decimated", "z_scores", "recalibrate"}
# functions returning an object whose results are a Dataset attribute (checked as results)
OBJECT_RESULTS = {"fit_recalibration": "parameters"}


def _eue_functions():
    """Public callables whose first parameter is the E/uE data (``data`` or ``ds``)."""
    out = {}
    for qual, obj in PUBLIC.items():
        ps = [p for p in _params(obj) if not p.name.startswith("_")]
        if ps and ps[0].name in ("data", "ds") and qual not in NOT_EUE:
            out[qual] = obj
    return out


EUE = _eue_functions()


def test_every_data_function_has_cheap_call_arguments():
    missing = [q for q in EUE if _short(q) not in EUE_CALLS]
    assert not missing, f"add these to EUE_CALLS: {missing}"


@functools.lru_cache(maxsize=None)
def _data(kind):
    return make_small_dataset() if kind == "dataset" else make_small_tree()


@functools.lru_cache(maxsize=None)
def _call(qual, kind):
    """``(result, kwargs)`` of ``qual`` on the small Dataset or DataTree; an exception is
    returned (not raised) so that every dependent test reports it."""
    obj = PUBLIC[qual]
    kwargs = dict(EUE_CALLS.get(_short(qual), {}))
    data = _data(kind)
    args = (data,)
    if _short(qual) == "fit_histogram":
        import matplotlib.pyplot as plt

        plt.close("all")
        args = (data, uqviz.distribution_shapes(data))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return obj(*args, **kwargs), kwargs
    except Exception as exc:  # noqa: BLE001 - reported by the tests below
        return exc, kwargs


def _ok(qual, kind):
    res, kwargs = _call(qual, kind)
    if isinstance(res, Exception):
        pytest.fail(f"{qual}({kind}, {kwargs}) raised {type(res).__name__}: {res}", pytrace=False)
    return res, kwargs


@pytest.mark.parametrize("kind", ["dataset", "datatree"])
@pytest.mark.parametrize("qual", sorted(EUE))
def test_accepts_dataset_and_datatree(qual, kind):
    res, _ = _ok(qual, kind)
    short = _short(qual)
    if short in OBJECT_RESULTS:
        res = getattr(res, OBJECT_RESULTS[short])
    if short in ("ConditionalExplorer", "ReferenceExplorer", "report"):
        return  # an explorer or a Report: accepting the tree is the contract
    if short == "fit_histogram":
        import matplotlib.axes

        assert isinstance(res, matplotlib.axes.Axes), f"{qual} must return the Axes"
        return
    if kind == "dataset":
        assert isinstance(res, (xr.Dataset, xr.DataArray)), (
            f"{qual} returned {type(res).__name__}, not an xarray.Dataset"
        )
        assert "dataset" not in res.dims
        return
    if short in DATA_RETURNING and isinstance(res, xr.DataTree):
        assert list(res.children) == ["a", "b"]
        return
    assert isinstance(res, (xr.Dataset, xr.DataArray)), (
        f"{qual}(DataTree) returned {type(res).__name__}"
    )
    assert "dataset" in res.dims, f"{qual}(DataTree): no 'dataset' dim; dims {dict(res.sizes)}"
    assert res["dataset"].values.tolist() == ["a", "b"]
    arrays = res.data_vars.values() if isinstance(res, xr.Dataset) else [res]
    not_leading = [a.name for a in arrays if "dataset" in a.dims and a.dims[0] != "dataset"]
    assert not not_leading, f"{qual}(DataTree): 'dataset' is not the leading dim of {not_leading}"


def test_multivariate_functions_accept_arrays_and_a_dataset():
    y, mean, scale = _mv_arrays()
    ds = xr.Dataset(
        {
            "y": (("point", "variable"), y),
            "mean": (("point", "variable"), mean),
            "scale": (("point", "variable"), scale),
        }
    )
    bad = []
    for name, kw in [("qce", dict(n_bins=4, n_boot=50, rng=1)), ("nees", {}), ("nees_test", {})]:
        for what, args in [("arrays", (y, mean, scale)), ("Dataset", (ds,))]:
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    r = getattr(uqviz, name)(*args, **kw)
                assert isinstance(r, xr.Dataset), type(r).__name__
            except Exception as exc:  # noqa: BLE001
                bad.append(f"{name}({what}): {type(exc).__name__}: {exc}"[:200])
    assert not bad, "; ".join(bad)


def _mv_arrays():
    rng = np.random.default_rng(3)
    scale = np.exp(0.2 * rng.standard_normal((300, 2)))
    mean = rng.standard_normal((300, 2))
    y = mean + scale * rng.standard_normal((300, 2))
    return y, mean, scale


def _joint_samples():
    """Observations (point, variable) and an ensemble (point, variable, sample) of 2 targets."""
    y, mean, scale = _mv_arrays()
    x = mean[:, :, None] + scale[:, :, None] * np.random.default_rng(4).standard_normal(
        (300, 2, 10)
    )
    return (
        xr.DataArray(y, dims=("point", "variable")),
        xr.DataArray(x, dims=("point", "variable", "sample")),
    )


def _joint_gaussian():
    """Observations, means (point, variable) and covariances (point, variable, variable2)."""
    y, mean, scale = _mv_arrays()
    cov = scale[:, :, None] * scale[:, None, :] * np.array([[1.0, 0.5], [0.5, 1.0]])
    dims = ("point", "variable")
    return (
        xr.DataArray(y, dims=dims),
        xr.DataArray(mean, dims=dims),
        xr.DataArray(cov, dims=(*dims, "variable2")),
    )


def _quantile_forecast():
    """The small dataset with normal quantiles of y at five levels (issue 23's data model:
    ``y``, ``quantiles`` on ``level``, ``attrs["forecast"]``)."""
    from scipy import stats

    ds = _data("dataset")
    levels = np.array([0.05, 0.25, 0.5, 0.75, 0.95])
    q = 1.0 + ds["uE"].values[:, None] * stats.norm.ppf(levels)[None, :]
    out = ds.drop_vars("y").assign(
        y=("point", ds["E"].values + 1.0),  # prediction 1
        quantiles=(("point", "level"), q),
    )
    out = out.assign_coords(level=levels)
    out.attrs["forecast"] = "quantiles"
    return out


# results of functions not taking E/uE data: (id, qualified name, builder -> (args, kwargs))
def _local():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return uqviz.local_calibration(_data("dataset"), n_bins=4, n_boot=50, rng=1)


OTHER_CALLS = {
    "local_calibration[PICP]": (
        "uqviz.local_calibration",
        lambda: (
            (_data("dataset"),),
            dict(statistic="PICP", level=0.9, generative="t6", conditioning="y", n_bins=4, ci=0.9),
        ),
    ),
    "acf": ("uqviz.acf", lambda: ((_local(),), {})),
    "fraction_valid": ("uqviz.fraction_valid", lambda: ((_local(),), dict(ci=0.9))),
    "qce": ("uqviz.qce", lambda: (_mv_arrays(), dict(n_bins=4, n_boot=50, ci=0.9, rng=1))),
    "nees": ("uqviz.nees", lambda: (_mv_arrays(), {})),
    "nees_test": ("uqviz.nees_test", lambda: (_mv_arrays(), dict(ci=0.9))),
    "predictive_scores[quantiles]": (
        "uqviz.predictive_scores",
        lambda: ((_quantile_forecast(),), dict(n_boot=50, ci=0.9, rng=1)),
    ),
    "compare_forecasts": (
        "uqviz.compare_forecasts",
        lambda: (
            (_data("dataset"), _data("dataset").assign(uE=1.3 * _data("dataset")["uE"])),
            dict(
                scores=("crps", "interval"),
                levels=(0.5, 0.9),
                n_boot=50,
                ci=0.9,
                method="percentile",
                rng=1,
            ),
        ),
    ),
    "compare_models": (
        "uqviz.compare_models",
        lambda: (
            (
                xr.DataTree.from_dict(
                    {
                        "a": _data("dataset"),
                        "b": _data("dataset").assign(uE=1.3 * _data("dataset")["uE"]),
                    }
                ),
            ),
            dict(
                statistics=("ZMS", "MSE"),
                scores=("crps",),
                n_boot=50,
                ci=0.9,
                method="percentile",
                rng=1,
            ),
        ),
    ),
    "energy_score": ("uqviz.energy_score", lambda: (_joint_samples(), dict(fair=True))),
    "variogram_score": (
        "uqviz.variogram_score",
        lambda: (_joint_samples(), dict(p=1.0, weights=np.ones((2, 2)), fair=False)),
    ),
    "dawid_sebastiani_score": ("uqviz.dawid_sebastiani_score", lambda: (_joint_gaussian(), {})),
    "energy_score_normal": (
        "uqviz.energy_score_normal",
        lambda: (_joint_gaussian(), dict(n_mc=50, rng=1)),
    ),
    "nig_skewness_curve": (
        "uqviz.nig_skewness_curve",
        lambda: ((), dict(nu=(4.0, 6.0), size=2000, rng=1)),
    ),
    "statistic_bias": (
        "uqviz.statistic_bias",
        lambda: (
            (),
            dict(nu_ig=(6.0,), nu_d=(6.0,), n_datasets=4, size=200, rng=1, progress=False),
        ),
    ),
    "validation_probability": (
        "uqviz.validation_probability",
        lambda: (
            (),
            dict(nu=(6.0,), n_datasets=4, size=200, n_boot=50, ci=0.9, rng=1, progress=False),
        ),
    ),
    "operating_characteristics": (
        "uqviz.operating_characteristics",
        lambda: (
            (),
            dict(
                scenarios=("calibrated",),
                size=200,
                n_datasets=2,
                verdicts=("average:ZMS",),
                n_boot=50,
                ci=0.9,
                rng=1,
                progress=False,
            ),
        ),
    ),
    "size_dependence": (
        "uqviz.size_dependence",
        lambda: (
            (),
            dict(
                statistics=("ENCE",),
                sizes=(200, 400),
                n_bins=(4, 8),
                nu=(6.0,),
                n_mc=20,
                ci=0.9,
                rng=1,
            ),
        ),
    ),
    "synthetic.nig": ("uqviz.synthetic.nig", lambda: ((), dict(size=100, n_datasets=3, rng=1))),
    "synthetic.tig": ("uqviz.synthetic.tig", lambda: ((), dict(size=100, n_datasets=3, rng=1))),
    "synthetic.calibrated": (
        "uqviz.synthetic.calibrated",
        lambda: ((), dict(size=100, a=3.0, b=3.0, n_datasets=3, rng=1)),
    ),
    "synthetic.default_example": (
        "uqviz.synthetic.default_example",
        lambda: ((), dict(size=300, rng=1)),
    ),
}

# data constructors: their variables are data (E, uE, features), not results
DATA_RESULTS = {
    "synthetic.nig",
    "synthetic.tig",
    "synthetic.calibrated",
    "synthetic.default_example",
    "check_dataset",
    "decimated",
    "z_scores",
    "recalibrate",
}


@functools.lru_cache(maxsize=None)
def _other(cid):
    qual, build = OTHER_CALLS[cid]
    obj = PUBLIC.get(qual) or eval(qual, {"uqviz": uqviz})  # noqa: S307 - fixed table
    try:
        args, kwargs = build()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return obj(*args, **kwargs), kwargs, obj
    except Exception as exc:  # noqa: BLE001
        return exc, {}, obj


# every result to check: id -> (callable, result, kwargs)
RESULT_IDS = [
    f"{_short(q)}[{k}]"
    for q in sorted(EUE)
    for k in ("dataset", "datatree")
    if _short(q) not in ("ConditionalExplorer", "ReferenceExplorer", "report", "fit_histogram")
] + sorted(OTHER_CALLS)
_EUE_BY_NAME = {_short(q): q for q in EUE}


def _result(rid):
    if rid in OTHER_CALLS:
        res, kwargs, obj = _other(rid)
        if isinstance(res, Exception):
            pytest.fail(f"{rid}: {type(res).__name__}: {res}", pytrace=False)
        return obj, res, kwargs, rid
    name, kind = rid[:-1].split("[")
    qual = _EUE_BY_NAME[name]
    res, kwargs = _ok(qual, kind)
    if name in OBJECT_RESULTS:
        res = getattr(res, OBJECT_RESULTS[name])
    return PUBLIC[qual], res, kwargs, name


def _as_datasets(res):
    if isinstance(res, xr.DataTree):
        return [c.to_dataset() for c in res.children.values()]
    if isinstance(res, xr.DataArray):
        return [res.to_dataset(name=res.name or "value")]
    return [res]


RESULT_VARIABLES = {
    "estimate",
    "ci_lower",
    "ci_upper",
    "se",
    "bias",
    "reference",
    "reference_se",
    "zeta",
    "valid",
}
# names that mean a contract variable under another name
# "mean"/"value" only in results about a statistic (a parameter statistic/statistics): a
# fitted distribution's mean is not a statistic's estimate
STATISTIC_VALUE_SYNONYMS = {"mean": "estimate or reference", "value": "estimate"}
RESULT_SYNONYMS = {
    "lower": "ci_lower",
    "upper": "ci_upper",
    "low": "ci_lower",
    "high": "ci_upper",
    "lo": "ci_lower",
    "hi": "ci_upper",
    "ci_low": "ci_lower",
    "ci_high": "ci_upper",
    "ci_lo": "ci_lower",
    "ci_hi": "ci_upper",
    "lower_bound": "ci_lower",
    "upper_bound": "ci_upper",
    "is_valid": "valid",
    "validity": "valid",
    "ok": "valid",
    "zeta_score": "zeta",
    "stderr": "se",
    "std_error": "se",
    "standard_error": "se",
    "ref": "reference",
    "ref_se": "reference_se",
    "reference_sd": "reference_se",
    "mc_se": "reference_se or se",
}


@pytest.mark.parametrize("rid", RESULT_IDS)
def test_results_are_datasets(rid):
    _, res, _, name = _result(rid)
    if name in DATA_RESULTS:
        return
    assert isinstance(res, xr.Dataset), f"{rid} returned {type(res).__name__}, not a Dataset"


@pytest.mark.parametrize("rid", RESULT_IDS)
def test_result_variable_names(rid):
    obj, res, _, name = _result(rid)
    if name in DATA_RESULTS:
        return
    bad = []
    about_statistic = bool({"statistic", "statistics"} & set(inspect.signature(obj).parameters))
    for ds in _as_datasets(res):
        names = set(ds.data_vars) | set(ds.coords)
        for v in sorted(names):
            if v in RESULT_SYNONYMS:
                bad.append(f"{v} (contract: {RESULT_SYNONYMS[v]})")
            if about_statistic and v in STATISTIC_VALUE_SYNONYMS:
                bad.append(f"{v} (contract: {STATISTIC_VALUE_SYNONYMS[v]})")
            m = re.fullmatch(r"(.+)_(lower|upper)", v)
            if m:
                stem = "estimate" if m.group(1) == "ci" else m.group(1)
                other = f"{m.group(1)}_{'upper' if m.group(2) == 'lower' else 'lower'}"
                if stem not in names:
                    bad.append(f"{v} without {stem}")
                if other not in names:
                    bad.append(f"{v} without {other}")
        if "valid" in ds and ds["valid"].dtype != bool:
            bad.append(f"valid has dtype {ds['valid'].dtype}, not bool")
    assert not bad, f"{rid}: " + "; ".join(dict.fromkeys(bad))


# the table "Dimensions" of docs/conventions.md (tests/contract/test_vocabulary.py checks every
# name)
CONTRACT_DIMS = set(conventions_tables()["dim"])
GRID_DIMS = {"fraction", "lag", "nu", "size", "n_bins", "generative", "scheme"}
DIM_SYNONYMS = {
    "quantile": "level",
    "quantiles": "level",
    "levels": "level",
    "draw": "sample",
    "mc": "sample",
    "simulation": "sample",
    "sim": "sample",
    "boot": "replicate",
    "bootstrap": "replicate",
    "resample": "replicate",
    "stat": "statistic",
    "bins": "bin",
    "points": "point",
    "index": "point",
    "obs": "point",
    "datasets": "dataset",
    "orderings": "ordering",
    "permutation": "ordering",
    "target": "variable",
    "output": "variable",
    "statistics": "statistic",
    "fractions": "fraction",
    "sizes": "size",
    "lags": "lag",
}


@pytest.mark.parametrize("rid", RESULT_IDS)
def test_result_dims(rid):
    obj, res, _, _ = _result(rid)
    params = set(inspect.signature(obj).parameters)
    grid = GRID_DIMS | {p for p in params} | {p[:-1] for p in params if p.endswith("s")}
    bad = []
    for ds in _as_datasets(res):
        for d in ds.dims:
            if d in DIM_SYNONYMS:
                bad.append(f"{d} (contract: {DIM_SYNONYMS[d]})")
            elif d not in CONTRACT_DIMS and d not in grid:
                bad.append(f"{d} (not a contract dim nor a scanned parameter)")
    assert not bad, f"{rid}: dims " + "; ".join(dict.fromkeys(bad))


@pytest.mark.parametrize("rid", RESULT_IDS)
def test_replicate_dim_only_from_bootstrap(rid):
    obj, res, _, _ = _result(rid)
    has_replicate = any("replicate" in ds.dims for ds in _as_datasets(res))
    if has_replicate:
        assert "n_boot" in inspect.signature(obj).parameters, (
            f"{rid}: a 'replicate' dim from a function without a bootstrap (n_boot): "
            "Monte Carlo draws are 'sample', synthetic datasets 'dataset'"
        )


CONTRACT_SETTINGS = (
    "n_boot",
    "ci",
    "method",
    "rng",
    "n_bins",
    "binning",
    "conditioning",
    "generative",
    "n_mc",
    "statistic",
    "statistics",
)


def _norm(v):
    if isinstance(v, range):
        v = list(v)
    if isinstance(v, (tuple, list, np.ndarray)):
        return [_norm(x) for x in list(v)]
    if isinstance(v, np.generic):
        return v.item()
    return v


@pytest.mark.parametrize("rid", RESULT_IDS)
def test_attrs_record_the_settings_passed(rid):
    obj, res, kwargs, name = _result(rid)
    sig = inspect.signature(obj).parameters
    bad = []
    for ds in _as_datasets(res):
        attrs = ds.attrs
        bad += [f"attrs[{k!r}] (use {FORBIDDEN[k]})" for k in attrs if k in FORBIDDEN]
        if name not in DATA_RESULTS:
            missing = [p for p in CONTRACT_SETTINGS if p in sig and p not in attrs]
            if missing:
                bad.append(f"settings not in attrs: {missing}")
        for key, value in attrs.items():
            if key not in sig:
                continue
            if key in kwargs:
                passed = kwargs[key]
            elif sig[key].default not in (None, inspect.Parameter.empty):
                passed = sig[key].default
            else:
                continue
            if isinstance(passed, (np.random.Generator, np.random.SeedSequence)):
                continue
            if _norm(value) != _norm(passed):
                bad.append(f"attrs[{key!r}] = {value!r}, passed {passed!r}")
    assert not bad, f"{rid}: " + "; ".join(dict.fromkeys(bad))


@pytest.mark.parametrize("rid", RESULT_IDS)
def test_valid_is_the_reference_inside_the_interval(rid):
    _, res, _, _ = _result(rid)
    for ds in _as_datasets(res):
        if not {"valid", "ci_lower", "ci_upper", "reference"} <= set(ds.variables):
            continue
        inside = (ds["ci_lower"] <= ds["reference"]) & (ds["reference"] <= ds["ci_upper"])
        valid, inside = xr.broadcast(ds["valid"], inside)
        diff = (valid.astype(bool) != inside).values
        assert not diff.any(), (
            f"{rid}: valid disagrees with ci_lower <= reference <= ci_upper at "
            f"{int(diff.sum())} of {diff.size} entries"
        )
        if "zeta" in ds:
            z, v = xr.broadcast(ds["zeta"], ds["valid"])
            wrong = v.values.astype(bool) & ~(np.abs(z.values) <= 1)
            assert not wrong.any(), f"{rid}: valid with |zeta| > 1 (or NaN) at {int(wrong.sum())}"
            wrong = ~v.values.astype(bool) & np.isfinite(z.values) & (np.abs(z.values) < 1)
            assert not wrong.any(), f"{rid}: not valid with |zeta| < 1 at {int(wrong.sum())}"


def test_plots_and_widgets_are_reachable_as_attributes():
    assert callable(uqviz.plots.average.decimation_curves)
    assert callable(uqviz.plots.conditional.local)
    assert uqviz.widgets.ConditionalExplorer.__name__ == "ConditionalExplorer"
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        uqviz.nope


# ----------------------------------------------------------------------------------------
# plots: the result they draw and an ax that is a matplotlib Axes or None (issue 22, item 7)
# ----------------------------------------------------------------------------------------


def _plot_inputs():
    """``{plot name: (first argument, other positional arguments)}`` of small real results."""
    ds = make_small_dataset()
    loc = uqviz.local_calibration(ds, n_bins=4, n_boot=50, n_mc=0, rng=1)
    y = np.random.default_rng(0).standard_normal(200)
    refs = [
        uqviz.simulated_reference(
            ds, statistic="ENCE", n_bins=4, n_mc=20, rng=1, generative=f"t{nu}"
        )
        for nu in (4, 8)
    ]
    compared = uqviz.compare_models(
        uqviz.from_datasets({"a": ds, "b": ds.assign(uE=1.5 * ds["uE"])}), n_boot=50, rng=1
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {
            "intervals": uqviz.validate_average(ds, n_boot=50, rng=1),
            "fit_histogram": ds,  # the data, then a distribution_shapes result
            "skewness_map": uqviz.tailedness(ds),
            "zeta_comparison": uqviz.validate_average(ds, n_boot=50, rng=1),
            "decimation_curves": uqviz.decimation_curve(ds, n_boot=50, rng=1),
            "zscores_vs": uqviz.running_statistics(ds, window=20),
            "local": loc,
            "acf": uqviz.acf(loc),
            "ordering": uqviz.ordering_study(
                ds, conditioning="x", n_bins=2, n_orderings=3, n_boot=50, rng=1, progress=False
            ),
            "reliability_diagram": uqviz.reliability(ds, n_bins=4, n_boot=50, rng=1),
            "validation_probability": uqviz.experiments.validation_probability(
                nu=[4.0], n_datasets=2, size=100, n_boot=20, rng=0, progress=False
            ),
            "bias_vs_skewness": uqviz.experiments.statistic_bias(
                nu_ig=[4.0], nu_d=[6.0], n_datasets=2, size=100, rng=0, progress=False
            ),
            "quantile_reliability": uqviz.qce(y, 0.0, np.ones(200), n_boot=0),
            "coverage_map": uqviz.qce(y, 0.0, np.ones(200), n_boot=0, marginal=False),
            "before_after": loc,
            "zeta_scores": uqviz.validate_with_references(
                ds, statistic="ENCE", n_bins=4, n_mc=20, n_boot=50, rng=1
            ),
            "reference_sensitivity": xr.concat(
                refs, dim=xr.DataArray([4.0, 8.0], dims="nu", name="nu")
            ),
            "reference_distribution": uqviz.simulated_reference(
                ds, statistic="ENCE", n_bins=4, n_mc=20, rng=1, return_samples=True
            ),
            "size_dependence": uqviz.size_dependence(
                sizes=(200, 400), n_bins=(4, 8), nu=(6,), n_mc=10, rng=0, progress=False
            ),
            "extrapolation": uqviz.extrapolate(ds, **EUE_CALLS["extrapolate"]),
            "confidence_curve": uqviz.confidence_curve(ds, **EUE_CALLS["confidence_curve"]),
            "calibration_curve": uqviz.calibration_curve(ds),
            "coverage": uqviz.interval_coverage(ds),
            "group_coverage": uqviz.group_coverage(ds, **EUE_CALLS["group_coverage"]),
            "pit_histogram": uqviz.validate_pit(ds, rng=1, n_band=50),
            "pit_ecdf_difference": uqviz.validate_pit(ds, rng=1, n_band=50),
            "adversarial_curves": uqviz.adversarial_validation(
                ds, **EUE_CALLS["adversarial_validation"]
            ),
            **dict.fromkeys(("ranking_matrix", "sip_matrix", "differences"), compared),
        }


PLOTS = sorted(q for q in PUBLIC if q.startswith("uqviz.plots."))


@functools.lru_cache(maxsize=None)
def _plot_input(name):
    if not hasattr(_plot_input, "table"):
        _plot_input.table = _plot_inputs()
    return _plot_input.table.get(name)


def _plot_call(qual, first, **kwargs):
    """Call the plot ``qual`` with ``first`` in place of its result (fit_histogram: data)."""
    import matplotlib.pyplot as plt

    plt.close("all")
    obj, name = PUBLIC[qual], _short(qual)
    args = (first,)
    if name == "fit_histogram":
        args = (first, uqviz.distribution_shapes(make_small_dataset()))
    elif name == "before_after":
        args = (first, first)
    return obj(*args, **kwargs)


@pytest.mark.parametrize("qual", PLOTS)
def test_plots_check_their_result_and_ax(qual):
    name = _short(qual)
    right = _plot_input(name)
    assert right is not None, f"add {name} to _plot_inputs"
    param = _params(PUBLIC[qual])[0].name
    assert "ax" in inspect.signature(PUBLIC[qual]).parameters, f"{qual} takes no ax"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _plot_call(qual, right)  # the right result draws
        for ax in ("x", 1, np.zeros(2)):
            with pytest.raises(TypeError, match=r"ax must be a matplotlib Axes or None"):
                _plot_call(qual, right, ax=ax)
        with pytest.raises(TypeError, match=rf"^{param}"):
            _plot_call(qual, 3)
        wrong = _plot_input(
            "acf" if name in ("quantile_reliability", "coverage_map") else "quantile_reliability"
        )
        with pytest.raises(ValueError, match=rf"^{param}: not a result of uqviz\."):
            _plot_call(qual, wrong)
