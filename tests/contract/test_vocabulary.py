"""The whole vocabulary of the results, read from docs/conventions.md (issue 22, item 4).

docs/conventions.md is the one source: its tables headed ``variable``, ``data variable``,
``dim``, ``coordinate``, ``attribute`` and ``variable attribute`` list every name a result may
hold. The tests call every public function (the calls of ``tests/contract/test_contract.py``,
plus the options that add variables) and check every variable, dim, coordinate and attribute of each
result against those tables; a dim outside the ``dim`` table is a grid named after the
parameter it scans, whose coordinate values are that parameter's values. They also check that
each listed name is used, that the renamed options keep their old keyword for one release,
that the kernel modules have readable aliases, and that every verdict rejects clearly
miscalibrated data, with ``p_value <= 1 - ci`` exactly when ``valid`` is False.
"""

from __future__ import annotations

import ast
import functools
import inspect
import pathlib
import re
import warnings

import numpy as np
import pytest
import xarray as xr

from tests.contract import test_contract as contract
import uqviz
from tests.conftest import conventions_tables, markdown_tables

ROOT = pathlib.Path(__file__).resolve().parents[2]

# ----------------------------------------------------------------------------------------
# the vocabulary: the first column of the tables of docs/conventions.md
# ----------------------------------------------------------------------------------------

KINDS = ("variable", "data variable", "dim", "coordinate", "attribute", "variable attribute")


def test_markdown_tables_reads_the_first_column_of_each_table():
    text = (
        "| dim | meaning |\n|---|---|\n| `a`, `b` | x `not this` |\n\n"
        "| dim | meaning |\n|---|---|\n| `c` | y |\n| name | values |\n"
    )
    assert markdown_tables(text) == {"dim": ["a", "b", "c"]}


@functools.lru_cache(maxsize=None)
def vocabulary():
    tables = conventions_tables()
    missing = [k for k in KINDS + ("name",) if not tables.get(k)]
    assert not missing, f"docs/conventions.md has no table headed {missing}"
    out = {k: frozenset(tables[k]) for k in KINDS}
    out["option"] = frozenset(tables["name"])  # the table "Option names"
    return out


def test_vocabulary_names_are_identifiers_listed_once():
    tables = conventions_tables()
    for kind in KINDS:
        names = tables[kind]
        bad = [n for n in names if not n.isidentifier()]
        assert not bad, f"docs/conventions.md, table {kind!r}: not names: {bad}"
        twice = sorted({n for n in names if names.count(n) > 1})
        assert not twice, f"docs/conventions.md, table {kind!r}: listed twice: {twice}"


# ----------------------------------------------------------------------------------------
# the results: the calls of test_contract, plus options that add names
# ----------------------------------------------------------------------------------------


def _small():
    return contract._data("dataset")


def _targets_tree():
    """A targets tree of 2 targets (issue 39): results on dim ``target``."""
    ds = _small()
    e, u = ds["E"].values, ds["uE"].values
    return uqviz.from_arrays(np.c_[e, -e], np.c_[u, 1.5 * u], targets=["fx", "fy"])


def _grouped():
    """The small dataset in 8 groups (issue 39): the cluster versions' names."""
    ds = _small()
    return ds.assign_coords(group=("point", np.arange(ds.sizes["point"]) % 8))


EXTRA_CALLS = {
    "interval_coverage[grouped]": (
        "uqviz.interval_coverage",
        lambda: ((_grouped(),), dict(levels=(0.5, 0.9))),
    ),
    "validate_pit[grouped]": (
        "uqviz.validate_pit",
        lambda: ((_grouped(),), dict(rng=1, n_band=50)),
    ),
    "validate_average[grouped]": (
        "uqviz.validate_average",
        lambda: ((_grouped(),), dict(statistics=("ZMS",), n_boot=50, rng=1)),
    ),
    "local_calibration[grouped]": (
        "uqviz.local_calibration",
        lambda: ((_grouped(),), dict(n_bins=2, n_boot=50, n_mc=20, rng=1)),
    ),
    "validate_average[targets]": (
        "uqviz.validate_average",
        lambda: ((_targets_tree(),), dict(statistics=("ZMS",), n_boot=50, rng=1)),
    ),
    "validate_average[return_replicates]": (
        "uqviz.validate_average",
        lambda: ((_small(),), dict(statistics=("ZMS",), n_boot=50, rng=1, return_replicates=True)),
    ),
    "simulated_reference[return_samples]": (
        "uqviz.simulated_reference",
        lambda: (
            (_small(),),
            dict(statistic="ENCE", n_bins=4, n_mc=20, rng=1, return_samples=True, progress=False),
        ),
    ),
    "validate_simulated[schemes]": (
        "uqviz.validate_simulated",
        lambda: (
            (_small(),),
            dict(
                statistic="ZMS",
                generative=("normal", "t6"),
                scheme=("Sim", "Sim2", "BS"),
                n_bins=4,
                n_mc=20,
                n_boot=50,
                rng=1,
                progress=False,
            ),
        ),
    ),
    "validate[ZMS]": (
        "uqviz.validate_with_references",
        lambda: ((_small(),), dict(statistic="ZMS", n_boot=50, rng=1)),
    ),
    "qce[per_bin]": (
        "uqviz.qce",
        lambda: (contract._mv_arrays(), dict(n_bins=4, n_boot=0, marginal=False)),
    ),
    "local_calibration[ZM]": (
        "uqviz.local_calibration",
        lambda: (
            (_small(),),
            dict(statistic="ZM", conditioning="y", n_bins=4, n_boot=50, n_mc=0, rng=1),
        ),
    ),
    "ordering_study[fresh_bootstrap]": (
        "uqviz.ordering_study",
        lambda: (
            (_small(),),
            dict(
                conditioning="x",
                n_bins=2,
                n_orderings=3,
                n_boot=50,
                common_bootstrap=False,
                rng=1,
                progress=False,
            ),
        ),
    ),
    "fit_recalibration[isotonic]": (
        "uqviz.fit_recalibration",
        lambda: ((_small(),), dict(method="isotonic")),
    ),
    "fit_recalibration[conformal]": (
        "uqviz.fit_recalibration",
        lambda: ((_small(),), dict(method="conformal", n_bins=2)),
    ),
    "fit_recalibration[quantile]": (
        "uqviz.fit_recalibration",
        lambda: ((_small(),), dict(method="quantile")),
    ),
    "recalibrate[quantile]": (
        "uqviz.recalibrate",
        lambda: ((_small(),), dict(method="quantile", folds=3, rng=1, levels=(0.25, 0.75))),
    ),
    "recalibrate[cqr]": (
        "uqviz.recalibrate",
        lambda: ((_with_interval(),), dict(method="cqr", folds=3, rng=1)),
    ),
    "recalibrate[quantile,quantiles]": (
        "uqviz.recalibrate",
        lambda: ((_with_quantiles(),), dict(method="quantile", folds=3, rng=1, levels=(0.5,))),
    ),
}


def _with_interval():
    """The small dataset with y and a given central interval at 0.9 (the input of CQR)."""
    ds = _small()
    y = ds["E"].values + 1.0
    half = 1.5 * ds["uE"].values
    return ds.assign(
        y=("point", y),
        lower=("point", 1.0 - half, {"level": 0.9}),
        upper=("point", 1.0 + half, {"level": 0.9}),
    )


def _with_quantiles():
    """The small dataset with y and given quantiles at 0.1, 0.5, 0.9 (a quantile forecast)."""
    ds = _small()
    q = 1.0 + ds["uE"].values[:, None] * np.array([-1.2816, 0.0, 1.2816])[None, :]
    out = ds.assign(
        y=("point", ds["E"].values + 1.0), quantiles=(("point", "level"), q)
    ).assign_coords(level=[0.1, 0.5, 0.9])
    out.attrs["forecast"] = "quantiles"
    return out


@functools.lru_cache(maxsize=None)
def _extra(rid):
    qual, build = EXTRA_CALLS[rid]
    obj = eval(qual, {"uqviz": uqviz})  # noqa: S307 - fixed table
    args, kwargs = build()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = obj(*args, **kwargs)
    if isinstance(res, uqviz.Recalibration):
        res = res.parameters
    return obj, res, kwargs, rid.split("[")[0]


RESULT_IDS = list(contract.RESULT_IDS) + sorted(EXTRA_CALLS)


def _result(rid):
    return _extra(rid) if rid in EXTRA_CALLS else contract._result(rid)


def _input_names(rid):
    """Variables, coords and attrs of the input data of a data function (kept as given)."""
    ds = (
        _with_interval()
        if rid == "recalibrate[cqr]"
        else _with_quantiles()
        if rid == "recalibrate[quantile,quantiles]"
        else _small()
    )
    return set(ds.variables) | set(ds.attrs)


def _values(v):
    if isinstance(v, (str, bytes)) or not np.iterable(v):
        v = [v]
    return [x.item() if isinstance(x, np.generic) else getattr(x, "name", x) for x in list(v)]


def _same_values(coord, passed):
    a, b = _values(coord), _values(passed)
    if len(a) != len(b):
        return False
    try:
        return np.allclose(np.asarray(a, dtype=float), np.asarray(b, dtype=float))
    except (TypeError, ValueError):
        return [str(x) for x in a] == [str(x) for x in b]


def _scanned_parameter(dim, sig):
    for p in (dim, dim + "s"):
        if p in sig:
            return p
    return None


def _passed(param, kwargs, sig):
    if param in kwargs:
        return kwargs[param]
    default = sig[param].default
    return None if default is inspect.Parameter.empty else default


def names_not_in_vocabulary(rid):
    """The names of the result ``rid`` that docs/conventions.md does not list."""
    obj, res, kwargs, name = _result(rid)
    is_data = name in contract.DATA_RESULTS
    return unlisted_names(
        obj, res, kwargs, is_data=is_data, given=_input_names(rid) if is_data else set()
    )


def unlisted_names(obj, res, kwargs, *, is_data=False, given=()):
    """The names of ``res`` (returned by ``obj(**kwargs)``) that docs/conventions.md does not
    list; ``given``: the names of the input data, which data functions keep."""
    if not isinstance(res, (xr.Dataset, xr.DataArray, xr.DataTree)):
        return [f"returned {type(res).__name__}, not a Dataset"]
    voc = vocabulary()
    sig = inspect.signature(obj).parameters
    given = set(given)
    variables = (voc["data variable"] | given) if is_data else voc["variable"]
    bad = []
    for ds in contract._as_datasets(res):
        for v in ds.data_vars:
            m = re.fullmatch(r"(.+)_(lower|upper)", v)
            if v in variables or (m and m.group(1) in variables and not is_data):
                continue
            bad.append(f"variable {v!r}")
        for d in ds.dims:
            param = _scanned_parameter(d, sig)
            if d not in voc["dim"] and param is None:
                bad.append(f"dim {d!r} (neither a dim of the table nor a scanned parameter)")
            elif d not in voc["dim"] or (
                param is not None
                and param in kwargs
                and np.iterable(kwargs[param])
                and not isinstance(kwargs[param], str)
            ):
                passed = _passed(param, kwargs, sig)
                if passed is not None and d in ds.coords and not _same_values(ds[d].values, passed):
                    bad.append(
                        f"dim {d!r}: coordinate {_values(ds[d].values)} is not the "
                        f"{param}= scanned, {_values(passed)}"
                    )
        for c in set(ds.coords) - set(ds.dims):
            if c not in voc["coordinate"] and c not in given:
                bad.append(f"coordinate {c!r}")
        for key in ds.attrs:
            if key not in voc["attribute"] | voc["option"] and key not in sig and key not in given:
                bad.append(f"attribute {key!r}")
        for v in ds.variables:
            for key in ds[v].attrs:
                if key not in voc["variable attribute"]:
                    bad.append(f"attribute {key!r} of variable {v!r}")
    return list(dict.fromkeys(bad))


@pytest.mark.parametrize("rid", RESULT_IDS)
def test_every_name_of_every_result_is_in_the_vocabulary(rid):
    bad = names_not_in_vocabulary(rid)
    assert not bad, (
        f"{rid}: names docs/conventions.md does not list (add them to its tables, "
        f"or use a listed name): " + "; ".join(bad)
    )


def test_unlisted_names_catches_what_the_tables_do_not_list():
    def scan(data, *, fractions=(0.0, 0.5), p_val=None):
        """A result with a wrong grid, an unknown dim, variable and attrs."""

    res = xr.Dataset(
        {
            "estimate": ("fraction", [1.0, 2.0]),
            "p_val": ((), 0.9),
            "fv_lower": ((), 0.1),
            "estimate_upper": ((), 3.0),
            "w": ("window", [1.0]),
        },
        coords={"fraction": [0.0, 0.4], "seed": ("fraction", [1, 2])},
        attrs={"zeta": "Pernot (2024b)", "ci": 0.9, "fractions": [0.0, 0.5]},
    )
    res["estimate"].attrs = {"long_name": "x", "formula": "eq. 1"}
    bad = unlisted_names(scan, res, {"fractions": (0.0, 0.5)})
    assert bad == [
        "variable 'p_val'",
        "variable 'w'",
        "dim 'fraction': coordinate [0.0, 0.4] is not the fractions= scanned, [0.0, 0.5]",
        "dim 'window' (neither a dim of the table nor a scanned parameter)",
        "coordinate 'seed'",
        "attribute 'zeta'",
        "attribute 'formula' of variable 'estimate'",
    ]
    good = res.drop_vars(["p_val", "w", "seed"]).assign_coords(fraction=[0.0, 0.5])
    good.attrs = {"ci": 0.9, "fractions": [0.0, 0.5], "citation": "Pernot (2024b)"}
    good["estimate"].attrs = {"long_name": "x"}
    assert unlisted_names(scan, good, {"fractions": (0.0, 0.5)}) == []
    data = good[["estimate"]].rename(estimate="E")
    assert unlisted_names(scan, data, {}, is_data=True) == []
    assert unlisted_names(scan, data.rename(E="x2"), {}, is_data=True) == ["variable 'x2'"]
    assert unlisted_names(scan, data.rename(E="x2"), {}, is_data=True, given={"x2"}) == []
    # the names of a result are those of data only in data functions
    assert unlisted_names(scan, good.assign(x2=1.0), {}, given={"x2"}) == ["variable 'x2'"]


def _used_names():
    used = {k: set() for k in KINDS}
    for rid in RESULT_IDS:
        obj, res, _, name = _result(rid)
        is_data = name in contract.DATA_RESULTS
        for ds in contract._as_datasets(res):
            used["data variable" if is_data else "variable"].update(ds.data_vars)
            used["dim"].update(ds.dims)
            used["coordinate"].update(set(ds.coords) - set(ds.dims))
            used["attribute"].update(ds.attrs)
            for v in ds.variables:
                used["variable attribute"].update(ds[v].attrs)
    return used


def test_every_listed_name_is_used():
    used = _used_names()
    voc = vocabulary()
    stale = {k: sorted(voc[k] - used[k]) for k in KINDS if voc[k] - used[k]}
    assert not stale, f"names docs/conventions.md lists that no result holds: {stale}"


# ----------------------------------------------------------------------------------------
# one name each (issue 22, items 4 and 5)
# ----------------------------------------------------------------------------------------

OLD_NAMES = {
    "p_val": "validation_probability",
    "df": "nu",
    "exceeds": "heavy_tail",
    "dfpr_up95": "dfpr_limit",
    "window": "rank (dim)",
    "seed": "tie_seed",
}


def test_old_result_names_are_not_in_the_vocabulary():
    voc = vocabulary()
    back = {
        n: new
        for n, new in OLD_NAMES.items()
        if n in voc["variable"] | voc["coordinate"] | voc["dim"]
    }
    assert not back, f"renamed result names listed again: {back}"


def test_citations_are_in_one_attribute():
    """A citation is ``attrs["citation"]``, never under a setting's name."""
    for rid in RESULT_IDS:
        _, res, _, _ = _result(rid)
        for ds in contract._as_datasets(res):
            for key, value in ds.attrs.items():
                if isinstance(value, str) and re.search(r"\b(Pernot|Holm) \(\d{4}", value):
                    assert key == "citation", f"{rid}: attrs[{key!r}] = {value!r}"


# renamed options: (qualified name, old, new, call with {option: value} -> comparable output)
def _plot_lines(ax):
    out = [np.asarray(line.get_xydata()) for line in ax.lines]
    out += [np.asarray(c.get_offsets()) for c in ax.collections if hasattr(c, "get_offsets")]
    return out


def _reference_sensitivity(**kw):
    from uqviz.plots.reference import reference_sensitivity

    res = xr.Dataset(
        {"reference": ("nu", [0.05, 0.04]), "reference_se": ("nu", [0.002, 0.001])},
        coords={"nu": [3.0, 6.0]},
        attrs={"statistic": "ENCE"},
    )
    ax = reference_sensitivity(res, **kw)
    segs = [np.asarray(s) for c in ax.collections for s in c.get_segments()]
    return segs


def _bias_vs_skewness(**kw):
    from uqviz.plots.experiments import bias_vs_skewness

    res = contract._other("statistic_bias")[0]
    ax = bias_vs_skewness(res, statistic="ZMS", **kw)
    return [
        np.asarray(s)
        for c in ax.collections
        for s in c.get_segments()
        if hasattr(c, "get_segments")
    ]


def _reliability_diagram(**kw):
    from uqviz.plots.conditional import reliability_diagram

    ax = reliability_diagram(uqviz.reliability(_small(), n_bins=4, n_boot=50, rng=1), **kw)
    return [ax.get_xscale(), ax.get_yscale()] + _plot_lines(ax)


RENAMED = [
    (
        "validate_with_references",
        "k",
        "coverage_factor",
        1.0,
        lambda **kw: uqviz.validate_with_references(
            _small(), statistic="ENCE", n_bins=4, n_mc=20, n_boot=50, rng=1, **kw
        ),
    ),
    (
        "validate_shared",
        "k",
        "coverage_factor",
        1.0,
        lambda **kw: uqviz.reference.simulated.validate_shared(
            _small(), statistics=("ENCE",), n_bins=4, n_mc=20, n_boot=50, rng=1, **kw
        )["ENCE"],
    ),
    (
        "confidence_curve",
        "error",
        "error_statistic",
        "MAE",
        lambda **kw: uqviz.confidence_curve(
            _small(), fractions=(0.0, 0.5), n_mc=20, n_boot=0, rng=1, **kw
        ),
    ),
    ("reference_sensitivity", "coverage", "coverage_factor", 3.0, _reference_sensitivity),
    ("bias_vs_skewness", "n_sigma", "coverage_factor", 1.0, _bias_vs_skewness),
    ("reliability_diagram", "log", "log_x", True, _reliability_diagram),
]


def _equal(a, b):
    if isinstance(a, xr.Dataset):
        return a.identical(b)
    if isinstance(a, list):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, np.ndarray):
        return np.array_equal(a, b, equal_nan=True)
    return a == b


@pytest.mark.parametrize("name,old,new,value,call", RENAMED, ids=[r[0] for r in RENAMED])
def test_renamed_options_keep_the_old_keyword_for_one_release(name, old, new, value, call):
    import matplotlib.pyplot as plt

    plt.close("all")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        expected = call(**{new: value})
        with pytest.warns(
            FutureWarning,
            match=rf"{name}\({old}=\.\.\.\) is deprecated and will "
            rf"be removed in uqviz 0\.3\.0: use {new}= instead",
        ) as caught:
            got = call(**{old: value})
        assert all(w.filename == __file__ for w in caught if w.category is FutureWarning), (
            "the warning must point at the caller's line"
        )
        with pytest.raises(TypeError, match=rf"got both {old}= \(deprecated\) and {new}="):
            call(**{old: value, new: value})
    plt.close("all")
    assert _equal(got, expected), f"{name}({old}=) does not give the result of {new}="
    if isinstance(expected, xr.Dataset):
        assert old not in expected.attrs and expected.attrs.get(new, value) == value


def test_renamed_options_are_exactly_those_of_the_changelog():
    """Every public function's ``renamed_options`` is listed in CHANGELOG.md."""
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    found = {}
    from uqviz.reference.simulated import validate_shared  # public in its module only

    for qual, obj in [*contract.PUBLIC.items(), ("validate_shared", validate_shared)]:
        for old, new in getattr(obj, "renamed_options", {}).items():
            found[(contract._short(qual) if "." in qual else qual, old)] = new
    assert {(n, o) for n, o, *_ in RENAMED} <= set(found), found
    missing = [
        f"{n}({o}=) -> {new}="
        for (n, o), new in found.items()
        if not re.search(rf"`[\w.]*\b{n}\({o}=\)`", changelog) or f"`{new}=`" not in changelog
    ]
    assert not missing, f"renames not in CHANGELOG.md: {missing}"


# names the contract says are not used for options (docs/conventions.md, "Not used")
NOT_USED = {
    "k": "coverage_factor",
    "n_sigma": "coverage_factor",
    "coverage": "coverage_factor",
    "error": "error_statistic",
}


@pytest.mark.parametrize("qual", sorted(contract.PUBLIC))
def test_option_names_not_used(qual):
    params = inspect.signature(contract.PUBLIC[qual]).parameters
    bad = [f"{p} (use {NOT_USED[p]})" for p in params if p in NOT_USED]
    if qual.startswith("uqviz.plots.") and "log" in params:
        bad.append("log (a plot's axis is log_x; log means log-spaced bins)")
    assert not bad, f"{qual}: " + "; ".join(bad)


def test_deprecated_keyword_helper():
    from uqviz.engine.deprecation import REMOVED_IN, renamed_options

    @renamed_options(old="new", older="newer")
    def f(x, *, new=1, newer=2):
        return x, new, newer

    assert f(0) == (0, 1, 2) and f.__name__ == "f"
    assert list(inspect.signature(f).parameters) == ["x", "new", "newer"]
    with pytest.warns(FutureWarning, match=rf"f\(older=\.\.\.\).*uqviz {REMOVED_IN}"):
        assert f(0, older=5) == (0, 1, 5)
    with pytest.raises(ValueError, match="must map to another keyword name"):
        renamed_options(a="a")


def test_load_study_renames_old_variables(tmp_path):
    old = xr.Dataset(
        {
            "p_val": ("nu", [0.9, 0.95]),
            "p_val_lower": ("nu", [0.8, 0.9]),
            "p_val_upper": ("nu", [0.95, 0.99]),
        },
        coords={"nu": [2.0, 6.0]},
    )
    path = tmp_path / "old.nc"
    uqviz.save_study(old, path)
    with pytest.warns(
        FutureWarning,
        match=r"'old.nc' holds variables under names deprecated"
        r".*p_val -> validation_probability",
    ):
        loaded = uqviz.load_study(path)
    assert set(loaded.data_vars) == {
        "validation_probability",
        "validation_probability_lower",
        "validation_probability_upper",
    }
    np.testing.assert_array_equal(loaded["validation_probability"], [0.9, 0.95])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # new names: no warning
        uqviz.save_study(loaded, tmp_path / "new.nc")
        assert set(uqviz.load_study(tmp_path / "new.nc").data_vars) == set(loaded.data_vars)


def test_kernel_modules_have_readable_aliases():
    """``from uqviz._array import stats as stats_kernels`` (or ``curves as curve_kernels``),
    never a cryptic ``ks``; so too a kernel module imported at first use,
    ``rank_kernels = lazy_module("uqviz._array.rank")``."""
    bad = []
    for path in sorted((ROOT / "uqviz").rglob("*.py")):
        if "_array" in path.parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module == "uqviz._array":
                for alias in node.names:
                    readable = {f"{alias.name}_kernels", f"{alias.name.removesuffix('s')}_kernels"}
                    if alias.asname and alias.asname not in readable:
                        bad.append(f"{path.relative_to(ROOT)}: {alias.name} as {alias.asname}")
            elif (
                isinstance(node, ast.Assign)
                and isinstance(node.value, ast.Call)
                and getattr(node.value.func, "id", None) == "lazy_module"
                and str(node.value.args[0].value).startswith("uqviz._array.")
            ):
                name = node.value.args[0].value.rsplit(".", 1)[1]
                readable = {f"{name}_kernels", f"{name.removesuffix('s')}_kernels"}
                target = node.targets[0].id
                if target not in readable:
                    bad.append(f"{path.relative_to(ROOT)}: {target} = lazy_module({name!r})")
    assert not bad, "kernel modules are imported as <module>_kernels: " + "; ".join(bad)
