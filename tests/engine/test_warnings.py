"""Typed warnings (issue 22, item 5; docs/conventions.md, "Warnings").

- each class is issued by a real call, for the reason its docstring gives, and the result
  records the same finding;
- warnings caught and raised again (per dataset, per fold, on a worker) keep their class;
- the CLI filters by class: no UnreliableWarning escapes ``uqviz validate`` (its table says
  it), a DataWarning does;
- the source: every ``warnings.warn`` of uqviz names a uqviz class (read with ``ast``), except
  the listed re-emissions of a caught warning under its own class.
"""

from __future__ import annotations

import ast
import os
import pathlib
import subprocess
import sys
import warnings

import numpy as np
import pandas as pd
import pytest

import uqviz
from tests.conftest import make_small_dataset
from uqviz.engine import warning_classes

PKG = pathlib.Path(uqviz.__file__).parent
CLASSES = [
    uqviz.UqvizWarning,
    uqviz.UnreliableWarning,
    uqviz.BinningWarning,
    uqviz.DataWarning,
    uqviz.NumericalWarning,
    uqviz.NumbaMissingWarning,
]


def _caught(func, *args, **kwargs):
    """``(result, [(class, message), ...])`` of a call, every warning recorded."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = func(*args, **kwargs)
    return out, [(w.category, str(w.message)) for w in caught]


# ----------------------------------------------------------------------------------------
# the hierarchy
# ----------------------------------------------------------------------------------------
def test_the_classes_are_user_warnings_under_one_base_exported_at_top_level():
    for cls in CLASSES:
        assert issubclass(cls, uqviz.UqvizWarning) and issubclass(cls, UserWarning)
        assert cls.__name__ in uqviz.__all__ and getattr(uqviz, cls.__name__) is cls
        assert getattr(warning_classes, cls.__name__) is cls
    assert sorted(warning_classes.__all__) == sorted(c.__name__ for c in CLASSES)
    # one meaning each: no class is a subclass of another but of the base
    for a in CLASSES[1:]:
        for b in CLASSES[1:]:
            assert a is b or not issubclass(a, b)
    from uqviz._array import jit

    assert jit.NumbaMissingWarning is uqviz.NumbaMissingWarning  # the documented old path


def test_every_class_is_in_the_conventions_table():
    text = (PKG.parent / "docs" / "conventions.md").read_text()
    section = text.split("## Warnings", 1)[1].split("\n## ", 1)[0]
    for cls in CLASSES[1:]:
        assert f"| `{cls.__name__}` |" in section, cls.__name__


# ----------------------------------------------------------------------------------------
# each class from a real call
# ----------------------------------------------------------------------------------------
def test_unreliable_warning_for_a_failed_tailedness_screen():
    heavy = uqviz.synthetic.nig(2000, nu=3, rng=0)
    with pytest.warns(uqviz.UnreliableWarning, match=r"RCE: beta_GM\(uE2\) = 0.74 > 0.6"):
        res = uqviz.validate_average(heavy, statistics=("RCE",), n_boot=200, rng=0)
    # the screen's number, independently: beta_GM = (mean - median) / mean|x - median| of
    # uE^2 (with the plain median; uqviz uses the Harrell-Davis median), above the limit 0.6
    # of Pernot (2024b), Table II
    x = heavy["uE"].values ** 2
    med = np.median(x)
    assert (x.mean() - med) / np.mean(np.abs(x - med)) == pytest.approx(0.74, abs=0.01)
    assert not bool(res["reliable"].item())


def test_unreliable_warning_for_a_statistic_without_reference():
    ds = make_small_dataset()
    res, caught = _caught(uqviz.validate_average, ds, statistics=("RMSE", "ZMS"), n_boot=100, rng=0)
    assert [c for c, m in caught if "no predefined reference" in m] == [uqviz.UnreliableWarning]
    assert np.isnan(float(res["reference"].sel(statistic="RMSE")))
    assert not bool(res["valid"].sel(statistic="RMSE"))


def test_binning_warning_for_small_bins_counts_them():
    ds = make_small_dataset()  # 400 points: 8 bins of 50
    res, caught = _caught(uqviz.local_calibration, ds, n_bins=8, n_boot=100, rng=0)
    assert res["count"].values.tolist() == [50] * 8
    small = [m for c, m in caught if c is uqviz.BinningWarning and "fewer than 100" in m]
    assert small == [
        "8 of 8 bins in 'a' have fewer than 100 points: their intervals are unreliable"
    ]


def test_binning_warning_for_split_ties():
    from uqviz.engine.binning import compute_bins

    # 30 points in 4 equal-count bins of 8, 7, 8, 7: the cuts after points 8, 15 and 23 each
    # fall inside one of the 3 groups of 10 equal values
    x = np.repeat([1.0, 2.0, 3.0], 10)
    with pytest.warns(uqviz.BinningWarning, match=r"splits 3 group\(s\) of tied values"):
        bins = compute_bins(x, n_bins=4)
    assert bins.sizes.tolist() == [8, 7, 8, 7]


def test_data_warning_for_dropped_rows():
    with pytest.warns(uqviz.DataWarning, match="drop_invalid: dropped 1 of 3 rows"):
        ds = uqviz.from_arrays([0.1, np.nan, 0.3], [1.0, 1.0, 2.0], drop_invalid=True)
    assert ds["E"].values.tolist() == [0.1, 0.3] and ds.attrs["n_dropped"] == 1


def test_data_warning_for_an_asymmetric_interval():
    y = np.array([0.0, 1.0, 2.0, 3.0])
    pred = np.array([0.1, 0.9, 2.2, 2.8])
    lower, upper = pred - 0.5, pred + 0.5
    lower[2] = pred[2] - 1.5  # centre 0.5 below the prediction: asymmetric
    with pytest.warns(uqviz.DataWarning, match="1 row of 4 with an asymmetric interval"):
        ds = uqviz.from_predictions(y, pred, lower=lower, upper=upper, level=0.95)
    assert ds.attrs["n_asymmetric"] == 1
    # uE from the width, whatever the asymmetry: (upper - lower) / (2 q_0.975)
    assert float(ds["uE"][2]) == pytest.approx(2.0 / (2 * 1.959963984540054))


def test_numerical_warning_for_an_overflowing_statistic():
    rng = np.random.default_rng(0)
    u = 1e300 * np.exp(rng.standard_normal(400))
    big = uqviz.from_arrays(u * rng.standard_normal(400), u)
    with pytest.warns(uqviz.NumericalWarning, match="UCE overflows float64"):
        res = uqviz.binned_errors(big, statistics=("UCE",), n_bins=4)
    assert np.isinf(float(res["estimate"].item()))
    # scale-free ENCE on the same data: no warning, the value of the data scaled back
    small = uqviz.from_arrays(big["E"].values / 1e300, big["uE"].values / 1e300)
    with warnings.catch_warnings():
        warnings.simplefilter("error", uqviz.UqvizWarning)
        ence = float(uqviz.binned_errors(big, statistics=("ENCE",), n_bins=4)["estimate"].item())
    ref = float(uqviz.binned_errors(small, statistics=("ENCE",), n_bins=4)["estimate"].item())
    assert ence == pytest.approx(ref, rel=1e-12)


def test_numba_missing_warning_when_numba_is_hidden():
    code = (
        "import sys, warnings; sys.modules['numba'] = None\n"
        "with warnings.catch_warnings(record=True) as c:\n"
        "    warnings.simplefilter('always')\n"
        "    import uqviz\n"
        "ours = [w.category for w in c if issubclass(w.category, uqviz.UqvizWarning)]\n"
        "print(len(ours), ours[0] is uqviz.NumbaMissingWarning)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=PKG.parent
    )
    assert out.stdout.split() == ["1", "True"]


def test_ignoring_the_base_class_silences_uqviz_only():
    ds = make_small_dataset()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warnings.simplefilter("ignore", uqviz.UqvizWarning)
        uqviz.local_calibration(ds, n_bins=8, n_boot=100, rng=0)  # a BinningWarning
        warnings.warn("not ours", UserWarning)
    assert [str(w.message) for w in caught] == ["not ours"]


# ----------------------------------------------------------------------------------------
# warnings raised again keep their class
# ----------------------------------------------------------------------------------------
def test_reemitted_warnings_keep_their_class():
    ds = make_small_dataset()
    # per dataset, with the name of the dataset and the advice (conditional/local.py)
    _, caught = _caught(uqviz.local_calibration, ds, conditioning="x", n_bins=4, n_boot=100, rng=0)
    ties = [(c, m) for c, m in caught if "tied values" in m]
    assert len(ties) == 1 and ties[0][0] is uqviz.BinningWarning
    assert "(dataset 'a')" in ties[0][1] and "binning='stratified'" in ties[0][1]
    # once for all folds of a cross-fitted recalibration (recalibration/fitting.py)
    _, caught = _caught(uqviz.recalibrate, ds, method="bvs", folds=3, rng=1, n_bins=4)
    assert caught == [
        (
            uqviz.BinningWarning,
            "method='bvs': 4 of 4 bins hold fewer than 100 "
            "points: their factors are noisy (in the fits of 3 of 3 folds)",
        )
    ]
    # recorded on a worker, raised again by the caller (engine/parallel.py, engine/tree.py)
    from uqviz.engine.parallel import call_recording_warnings

    def work():
        warnings.warn("a", uqviz.DataWarning)
        warnings.warn("b", uqviz.NumericalWarning)
        return 7

    result, caught = call_recording_warnings(work, [], {})
    assert result == 7
    assert [(str(m), c) for m, c in caught] == [
        ("a", uqviz.DataWarning),
        ("b", uqviz.NumericalWarning),
    ]


# ----------------------------------------------------------------------------------------
# the CLI filters by class
# ----------------------------------------------------------------------------------------
def test_cli_hides_unreliable_warnings_its_table_states_and_shows_data_warnings(tmp_path, capsys):
    from uqviz.cli import main

    rng = np.random.default_rng(1)
    u = np.sqrt(1.0 / rng.gamma(0.6, 1 / 0.6, 3000))
    e = u * rng.standard_t(2.5, 3000)
    e[:5] = np.nan  # dropped with --drop-invalid: a DataWarning
    pd.DataFrame({"E": e, "uE": u}).to_csv(tmp_path / "h.csv", index=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert main(["average", str(tmp_path / "h.csv"), "--n-boot", "300", "--drop-invalid"]) == 0
    classes = [w.category for w in caught]
    assert uqviz.UnreliableWarning not in classes  # said in the table, not twice
    assert classes.count(uqviz.DataWarning) == 1
    assert "drop_invalid: dropped 5 of 3000 rows" in next(
        str(w.message) for w in caught if w.category is uqviz.DataWarning
    )
    out = capsys.readouterr().out
    assert "unreliable (" in out and "M = 2995" in out
    # the same data in Python: the warning the CLI hid is an UnreliableWarning
    ds = uqviz.from_arrays(e[5:], u[5:])
    with pytest.warns(uqviz.UnreliableWarning, match="tailedness screen"):
        uqviz.validate_average(ds, n_boot=300, rng=0)


def test_cli_filters_by_class_not_by_message():
    tree = ast.parse((PKG / "cli.py").read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and ast.unparse(node.func) in (
            "warnings.filterwarnings",
            "warnings.simplefilter",
        ):
            assert not any(k.arg == "message" for k in node.keywords), ast.unparse(node)


# ----------------------------------------------------------------------------------------
# the source: every warnings.warn names a uqviz class
# ----------------------------------------------------------------------------------------
#: categories other than uqviz's that a warn may name, with the reason
OTHER_CATEGORIES = {
    "DeprecationWarning": "a deprecated alias (docs: kept one release, naming the new name)",
    "FutureWarning": "a deprecated alias or a default that will change",
}
#: (module, function) that raise a caught warning again under its own class
REEMISSIONS = {
    ("uqviz.engine.tree", "_on_client"): "warnings recorded on a dask worker, per dataset",
    ("uqviz.engine.parallel", "run_task"): "warnings recorded on a dask worker",
    ("uqviz.conditional.local", "_named_warnings"): "the binning's warnings, with the "
    "dataset's name and advice",
    ("uqviz.recalibration.fitting", "_reissue_once"): "the fits' warnings, once for all folds",
    ("uqviz.data.datasets.loaders", "_build"): "the reader's warnings but the DataWarning of "
    "the papers' min_uncertainty filter",
}


def _module_name(path):
    parts = list(path.relative_to(PKG.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def warn_calls(path, source=None):
    """``(function, category expression or None, line)`` of every warnings.warn/warn_explicit
    call in a module, with the names it imports from the warning-class modules."""
    tree = ast.parse(path.read_text() if source is None else source)
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module in (
            "uqviz.engine.warning_classes",
            "uqviz._array.warning_classes",
            "uqviz",
        ):
            imported |= {a.asname or a.name for a in node.names}
    calls = []

    def visit(node, func):
        for child in ast.iter_child_nodes(node):
            name = (
                child.name if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) else func
            )
            if isinstance(child, ast.Call):
                f = ast.unparse(child.func)
                if f in ("warnings.warn", "warn", "warnings.warn_explicit"):
                    index = 1
                    cat = next((k.value for k in child.keywords if k.arg == "category"), None)
                    if cat is None and len(child.args) > index:
                        cat = child.args[index]
                    calls.append((func, None if cat is None else ast.unparse(cat), child.lineno))
            visit(child, name)

    visit(tree, None)
    return calls, imported


def bad_warn_calls(path, source=None):
    module = _module_name(path)
    calls, imported = warn_calls(path, source)
    ours = set(warning_classes.__all__)
    bad = []
    for func, cat, line in calls:
        if (module, func) in REEMISSIONS:
            continue
        if cat in OTHER_CATEGORIES:
            continue
        if cat in ours and cat in imported:
            continue
        bad.append(f"{path.relative_to(PKG)}:{line} ({func}) category {cat}")
    return bad


def test_every_warn_names_a_uqviz_class():
    bad = [b for p in sorted(PKG.rglob("*.py")) for b in bad_warn_calls(p)]
    assert not bad, (
        "warnings.warn without a uqviz warning class (uqviz.engine.warning_classes; "
        f"docs/conventions.md, 'Warnings'): {bad}"
    )


def test_the_reemissions_listed_are_current():
    found = set()
    for p in PKG.rglob("*.py"):
        module = _module_name(p)
        found |= {(module, func) for func, _, _ in warn_calls(p)[0]}
    assert set(REEMISSIONS) <= found, set(REEMISSIONS) - found


def test_the_scan_catches_bare_warnings():
    probe = PKG / "average" / "probe.py"  # not a file: its source is given
    source = (
        "import warnings\nfrom uqviz.engine.warning_classes import BinningWarning\n"
        "def f():\n    warnings.warn('a')\n    warnings.warn('b', UserWarning)\n"
        "    warnings.warn('c', RuntimeWarning, stacklevel=2)\n"
        "    warnings.warn('d', BinningWarning)\n"
        "    warnings.warn('e', category=DataWarning)\n"
        "    warnings.warn('f', FutureWarning)\n"
    )
    bad = bad_warn_calls(probe, source)
    assert [b.split(" category ")[1] for b in bad] == [
        "None",
        "UserWarning",
        "RuntimeWarning",
        "DataWarning",
    ]  # DataWarning: not imported


def test_warns_sections_name_the_classes():
    """A numpydoc ``Warns`` section names the class a user filters on, not ``UserWarning``."""
    import re

    ours = set(warning_classes.__all__) | set(OTHER_CATEGORIES)
    bad, n_sections = [], 0
    for path in sorted(PKG.rglob("*.py")):
        for match in re.finditer(
            r"^( *)Warns\n\1-----\n((?:\1\S.*\n(?:\1 +.*\n)*)+)", path.read_text(), re.M
        ):
            n_sections += 1
            indent = match.group(1)
            names = re.findall(rf"^{indent}(\w+)", match.group(2), re.M)
            bad += [f"{path.relative_to(PKG)}: {n}" for n in names if n not in ours]
    assert n_sections >= 5  # the scan sees the sections (validate_average, compute_bins, ...)
    assert not bad, bad


def test_a_uqviz_warning_is_shown_without_its_location():
    """Shown as "<class>: <message>", without the path and source line of the warn call (a
    machine path inside uqviz, issue 37); other warnings keep Python's format."""
    code = (
        "import warnings, uqviz\n"
        "warnings.warn('z0 is large', uqviz.UnreliableWarning)\n"
        "warnings.warn('plain', UserWarning)\n"
    )
    err = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(PKG.parent)},
        check=True,
    ).stderr
    lines = err.splitlines()
    assert lines[0] == "UnreliableWarning: z0 is large"
    assert lines[1] == "<string>:3: UserWarning: plain"
