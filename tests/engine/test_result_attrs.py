"""Result variables say what they are: ``long_name`` on every data variable of every public
result, ``units`` where the data have units (issue 22, item 5; ``uqviz.engine.descriptions``).

The public results are those of ``tests/contract/test_contract.py`` (its calls on small data,
reused), plus the variants that give other variables (other recalibration methods, C-QCE, ...).
"""

from __future__ import annotations

import functools
import warnings

import numpy as np
import pytest
import xarray as xr

from tests.contract import test_contract as contract
import uqviz
from tests.conftest import make_small_dataset
from uqviz.engine.descriptions import LONG_NAMES, STATISTIC_VALUED, UNITS, describe

RESULT_IDS = [
    rid
    for rid in contract.RESULT_IDS
    if rid.split("[")[0] not in contract.DATA_RESULTS and rid not in contract.DATA_RESULTS
]


def _quiet(func, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return func(*args, **kwargs)


@functools.lru_cache(maxsize=None)
def _variants():
    """Results with variables the contract's calls do not produce: ``{id: Dataset}``."""
    ds = make_small_dataset()
    y, mean, scale = contract._mv_arrays()
    out = {
        f"fit_recalibration[{m}]": _quiet(uqviz.fit_recalibration, ds, method=m).parameters
        for m in ("scaling", "linear", "isotonic")
    }
    out["fit_recalibration[conformal]"] = _quiet(
        uqviz.fit_recalibration, ds, method="conformal", n_bins=2
    ).parameters
    out["fit_recalibration[quantile]"] = _quiet(
        uqviz.fit_recalibration, ds, method="quantile"
    ).parameters
    out["validate_simulated[ZMS, 3 schemes]"] = _quiet(
        uqviz.validate_simulated,
        ds,
        statistic="ZMS",
        n_mc=20,
        n_boot=50,
        n_bins=4,
        rng=1,
        scheme=("Sim", "Sim2", "BS"),
        progress=False,
    )
    out["extrapolate[ols]"] = _quiet(
        uqviz.extrapolate,
        ds,
        statistic="ZMSE",
        n_bins=(4, 6, 8, 10, 12),
        min_count=10,
        fit_min_bins=3,
        method="ols",
    )
    out["qce[C-QCE]"] = _quiet(uqviz.qce, y, mean, scale, marginal=False, n_bins=4, n_boot=0)
    out["qce[bca-direct]"] = _quiet(
        uqviz.qce, y, mean, scale, n_bins=4, n_boot=50, rng=1, method="bca-direct"
    )
    out["nees"] = _quiet(uqviz.nees, y, mean, scale)
    return out


def _results():
    """Every (id, result Dataset) checked."""
    for rid in RESULT_IDS:
        _, res, _, _ = contract._result(rid)
        for ds in contract._as_datasets(res):
            yield rid, ds
    yield from _variants().items()


def _named_wrong(ds):
    """Variables whose long_name is the mapping's text of another variable (inherited)."""
    owner = {text: name for name, text in LONG_NAMES.items()}
    return [
        f"{v} has the long_name of {owner[a]}"
        for v, var in ds.data_vars.items()
        for a in [var.attrs.get("long_name")]
        if a in owner and owner[a] != v
    ]


@pytest.mark.parametrize("rid", RESULT_IDS + ["variants"])
def test_every_result_variable_has_a_long_name(rid):
    pairs = (
        _variants().items()
        if rid == "variants"
        else [(rid, ds) for ds in contract._as_datasets(contract._result(rid)[1])]
    )
    bad = []
    for where, ds in pairs:
        bad += [
            f"{where}: {v}"
            for v, var in ds.data_vars.items()
            if not (isinstance(var.attrs.get("long_name"), str) and var.attrs["long_name"].strip())
        ]
        bad += [f"{where}: {w}" for w in _named_wrong(ds)]
    assert not bad, (
        "result variables without a long_name (add them to "
        f"uqviz.engine.descriptions.LONG_NAMES): {bad}"
    )


#: names in the mapping that no public result above holds, with the reason
NOT_IN_THESE_RESULTS = {
    "p_adjusted": "the Holm-adjusted p-value of the report's and the gate's JSON entries",
}


def test_the_mapping_has_no_stale_names():
    produced = set()
    for _, ds in _results():
        produced |= set(ds.data_vars)
    stale = sorted(set(LONG_NAMES) - produced - set(NOT_IN_THESE_RESULTS))
    assert not stale, f"LONG_NAMES describes variables no result has (renamed?): {stale}"


# ----------------------------------------------------------------------------------------
# units
# ----------------------------------------------------------------------------------------
def _with_units(ds, units):
    out = ds.copy()
    out["E"].attrs["units"] = units
    out["uE"].attrs["units"] = units
    return out


def test_units_follow_the_data_and_the_statistic():
    ds = _with_units(make_small_dataset(), "eV")
    va = _quiet(uqviz.validate_average, ds, statistics=("RMSE", "RMV"), n_boot=100, rng=0)
    for v in ("estimate", "ci_lower", "ci_upper", "se", "bias"):
        assert va[v].attrs["units"] == "eV", v
    for v in ("zeta", "valid", "reliable", "p_value"):
        assert "units" not in va[v].attrs, v
    # a dimensionless statistic, or statistics of different units: no units
    for stats in (("ZMS", "RCE"), ("RMSE", "ZMS")):
        res = _quiet(uqviz.validate_average, ds, statistics=stats, n_boot=100, rng=0)
        assert not [v for v in res.data_vars if res[v].attrs.get("units")], stats
    # squared units, parenthesised when the unit is compound
    uce = _quiet(
        uqviz.binned_errors,
        _with_units(make_small_dataset(), "kcal/mol"),
        statistics=("UCE",),
        n_bins=4,
    )
    assert uce["estimate"].attrs["units"] == "(kcal/mol)^2"
    # the bins of uE and the per-bin RMSE and RMV are in the units of E
    rel = _quiet(uqviz.reliability, ds, n_bins=4, n_boot=50, rng=0)
    assert {
        rel[v].attrs["units"]
        for v in ("rmse", "rmse_lower", "rmse_upper", "rmv", "bin_lower", "bin_upper")
    } == {"eV"}
    # a DataTree whose children differ in units: none on the stacked result
    tree = uqviz.from_datasets({"a": ds, "b": _with_units(make_small_dataset(300, 1, "b"), "meV")})
    res = _quiet(uqviz.validate_average, tree, statistics=("RMSE",), n_boot=100, rng=0)
    assert "units" not in res["estimate"].attrs
    same = uqviz.from_datasets({"a": ds, "b": _with_units(make_small_dataset(300, 1, "b"), "eV")})
    res = _quiet(uqviz.validate_average, same, statistics=("RMSE",), n_boot=100, rng=0)
    assert res["estimate"].attrs["units"] == "eV"


def test_no_units_without_units_in_the_data():
    res = _quiet(
        uqviz.validate_average, make_small_dataset(), statistics=("RMSE",), n_boot=100, rng=0
    )
    assert not [v for v in res.data_vars if res[v].attrs.get("units")]


@functools.lru_cache(maxsize=None)
def _unit_results():
    ds = _with_units(make_small_dataset(), "eV")
    out = {}
    for qual in sorted(contract.EUE):
        name = contract._short(qual)
        if name in contract.DATA_RESULTS or name in (
            "report",
            "ConditionalExplorer",
            "ReferenceExplorer",
            "fit_histogram",
        ):
            continue
        res = _quiet(contract.PUBLIC[qual], ds, **contract.EUE_CALLS[name])
        if name in contract.OBJECT_RESULTS:
            res = getattr(res, contract.OBJECT_RESULTS[name])
        out[name] = res
    return out


def test_units_only_where_the_tables_give_them():
    """On data in eV, a variable has units only if it is in the units of E or of its
    statistic, and never a flag (no units inherited through arithmetic)."""
    bad = []
    for name, res in _unit_results().items():
        for v, var in res.data_vars.items():
            units = var.attrs.get("units")
            if not units:
                continue
            if var.dtype == bool:
                bad.append(f"{name}: {v} is a flag with units {units!r}")
            elif v not in UNITS and v not in STATISTIC_VALUED:
                bad.append(f"{name}: {v} has units {units!r}")
            elif units not in ("eV", "eV^2"):
                bad.append(f"{name}: {v} has units {units!r}")
    assert not bad, bad
    # some analyses of the contract's calls do carry units on these data
    assert "units" not in _unit_results()["fit_recalibration"]["factor"].attrs  # a ratio
    assert _unit_results()["confidence_curve"]["estimate"].attrs["units"] == "eV"  # RMSE
    assert _unit_results()["interval_coverage"]["mpiw"].attrs["units"] == "eV"


def test_describe_fills_only_what_is_missing():
    ds = _with_units(make_small_dataset(), "eV")
    res = xr.Dataset(
        {
            "estimate": ((), 1.0, {"long_name": "RMSE of the kept data"}),
            "valid": ((), True, {"units": "eV"}),
            "zeta": ((), 0.1),
        }
    )
    out = describe(res, ds, statistics=("RMSE",))
    assert out["estimate"].attrs == {"long_name": "RMSE of the kept data", "units": "eV"}
    assert out["valid"].attrs == {"long_name": LONG_NAMES["valid"]}  # a flag: units dropped
    assert out["zeta"].attrs == {"long_name": LONG_NAMES["zeta"]}
    assert res["zeta"].attrs == {} and res["valid"].attrs == {"units": "eV"}  # not mutated
    np.testing.assert_array_equal(out["estimate"].values, res["estimate"].values)
