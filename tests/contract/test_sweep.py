"""Bad-input sweep (hypothesis) of every public entry point taking E/uE data.

Inputs: arbitrary finite and non-finite values, tiny sizes (M = 0..5, sometimes up to
24), ties, constant columns, huge (1e150) and tiny (1e-300) magnitudes, float32 / int /
object arrays, non-default indexes; wrong option values (``n_bins`` 0/negative/"10"/True,
``ci`` outside (0, 1), ``n_boot`` < 2 or 2.5, ``n_mc=0``, ``statistics=()``,
``rng=RandomState(0)``, ...) and ``n_bins`` > M.

Acceptable outcomes only (docs/conventions.md, "Errors" and "Verdicts"):
- a result whose numbers are finite where presented as valid (``estimate``, ``ci_lower``,
  ``ci_upper``, ``zeta``, ``reference`` where ``valid`` is True); a data constructor's
  result holds finite E, uE > 0 and every row (nothing dropped silently);
- a ``ValueError``/``TypeError`` whose message names the argument (the wrong option, or
  the data: ``E``, ``uE`` or the data argument);
never another exception type, a hang, a wrong option silently accepted, a mutated input.
Warnings are fine. The outcomes per entry point are printed at the end of the module
(``pytest -s``): results, errors, failures.

Tables of bad inputs with the exact message (issue 38, item 6), at the end of the module:
forecasts bad once in a Dataset on every reader of the forecast; bad E/uE data (NaN, inf,
uE <= 0, a tree's bad child) on every public function taking E/uE data; bad multivariate
arrays on qce, nees and nees_test; and the bad-input cases folded in from the module tests,
each with the test it came from.
"""

from __future__ import annotations

import collections
import copy
import inspect
import json
import os
import re
import signal
import warnings

import numpy as np
import pandas as pd
import pytest
import xarray as xr
from hypothesis import HealthCheck, Phase, assume, given, settings
from hypothesis import strategies as st

import uqviz
from tests.conftest import make_small_dataset

# ----------------------------------------------------------------------------------------
# outcome counts, printed at the end of the module
# ----------------------------------------------------------------------------------------

COUNTS: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
FAILURES: dict[str, dict[str, str]] = collections.defaultdict(dict)
# SWEEP_COLLECT=1: record every kind of failure and keep sweeping (a survey of all the
# defects, printed at the end) instead of failing at the first one; the tests then pass
COLLECT = os.environ.get("SWEEP_COLLECT", "") not in ("", "0")


def _fail(name, message):
    """Count one failing call; fail the test (or, when collecting, record the message)."""
    COUNTS[name]["failure"] += 1
    kind = re.sub(r"[-+]?\d[\d.e+-]*|'[^']*'|\"[^\"]*\"", "#", message.split("\n")[0])[:160]
    FAILURES[name].setdefault(kind, message)
    if not COLLECT:
        pytest.fail(message, pytrace=False)


@pytest.fixture(scope="module", autouse=True)
def outcome_summary():
    yield
    rows = sorted(COUNTS.items())
    width = max([len(n) for n, _ in rows] + [11])
    lines = [
        f"{'entry point':<{width}}  results  errors  failing calls  kinds  calls",
        "-" * (width + 47),
    ]
    for name, c in rows:
        total = c["result"] + c["error"] + c["failure"]
        lines.append(
            f"{name:<{width}}  {c['result']:7d}  {c['error']:6d}  {c['failure']:13d}"
            f"  {len(FAILURES.get(name, ())):5d}  {total:5d}"
        )
    tot = sum((c for _, c in rows), collections.Counter())
    kinds = sum(len(k) for k in FAILURES.values())
    lines.append(
        f"{'total':<{width}}  {tot['result']:7d}  {tot['error']:6d}  "
        f"{tot['failure']:13d}  {kinds:5d}  {sum(tot.values()):5d}"
    )
    print("\n\nBad-input sweep: outcomes per entry point\n" + "\n".join(lines))
    if FAILURES:
        print("\nFailures (one example per kind):")
        for name, kinds in sorted(FAILURES.items()):
            for message in kinds.values():
                print(f"- {message}".replace("\n", "\n    "))


# ----------------------------------------------------------------------------------------
# inputs
# ----------------------------------------------------------------------------------------

SPECIAL = [
    0.0,
    -0.0,
    1.0,
    -1.0,
    2.0,
    1e150,
    -1e150,
    1e-300,
    -1e-300,
    5e-324,
    1e308,
    np.nan,
    np.inf,
    -np.inf,
]


@st.composite
def columns(draw, *, min_size=0, max_size=5, positive=False):
    """One data column (E, or uE when ``positive``) in one of several regimes."""
    size = draw(
        st.one_of(st.integers(min_size, max_size), st.integers(max(min_size, 6), max(max_size, 24)))
    )
    regime = draw(
        st.sampled_from(
            ["normal", "normal", "ties", "constant", "huge", "tiny", "special", "arbitrary"]
        )
    )
    if regime == "arbitrary":
        vals = draw(
            st.lists(st.floats(allow_nan=True, allow_infinity=True), min_size=size, max_size=size)
        )
    elif regime == "special":
        vals = draw(
            st.lists(st.sampled_from(SPECIAL) | st.floats(-3, 3), min_size=size, max_size=size)
        )
    else:
        seed = draw(st.integers(0, 2**16))
        r = np.random.default_rng(seed)
        x = np.abs(r.standard_normal(size)) + 0.1 if positive else r.standard_normal(size)
        if regime == "ties":
            x = np.round(x, 0) + (1.0 if positive else 0.0)
        elif regime == "constant":
            x = np.full(size, x[0] if size else 1.0)
        elif regime == "huge":
            x = x * 1e150
        elif regime == "tiny":
            x = x * 1e-300
        vals = x.tolist()
    return np.asarray(vals, dtype=float)


DTYPES = ["float64", "float64", "float32", "int64", "object"]


def _cast(draw, x):
    dtype = draw(st.sampled_from(DTYPES))
    if dtype == "int64":
        if not np.all(np.isfinite(x)) or np.any(np.abs(x) > 1e15):
            return x  # not representable: keep floats
        return np.round(x).astype("int64")
    if dtype == "float32":
        with np.errstate(over="ignore"):
            return x.astype("float32")
    return x.astype(dtype)


@st.composite
def eue_arrays(draw, *, min_size=0, max_size=5):
    """``(E, uE)`` arrays of equal length (sometimes E drawn independently of uE)."""
    u = draw(columns(min_size=min_size, max_size=max_size, positive=True))
    if draw(st.booleans()):
        seed = draw(st.integers(0, 2**16))
        with np.errstate(all="ignore"):
            e = u * np.random.default_rng(seed).standard_normal(u.size)
    else:
        e = draw(columns(min_size=u.size, max_size=u.size))
        e = np.resize(e, u.size) if e.size else np.zeros(u.size)
    return _cast(draw, e), _cast(draw, u)


def _raw_dataset(e, u, *, index=None, feature=True):
    coords = {"point": index} if index is not None else {}
    ds = xr.Dataset({"E": ("point", e), "uE": ("point", u)}, coords=coords)
    if feature:
        ds["x"] = ("point", (np.arange(e.size) % 2).astype(float))
    ds.attrs.update(name="sweep", units="")
    return ds


@st.composite
def eue_data(draw, *, min_size=0, max_size=5):
    """A Dataset (``point`` dim, E, uE, feature ``x``) or a DataTree of two, built raw
    (the function must check it) or through ``uqviz.from_arrays`` when that accepts it."""
    e, u = draw(eue_arrays(min_size=min_size, max_size=max_size))
    index = None
    if draw(st.booleans()):
        index = np.arange(e.size)[::-1] * 10 + 3  # a non-default index
    ds = _raw_dataset(e, u, index=index)
    if draw(st.booleans()):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                ds = uqviz.from_arrays(e, u, features={"x": ds["x"].values}, name="sweep")
        except (ValueError, TypeError):
            pass
    if draw(st.integers(0, 4)) == 0:
        e2, u2 = draw(eue_arrays(min_size=min_size, max_size=max_size))
        return xr.DataTree.from_dict({"a": ds, "b": _raw_dataset(e2, u2)})
    return ds


# ----------------------------------------------------------------------------------------
# option values
# ----------------------------------------------------------------------------------------

# values no function may accept: each must raise a ValueError/TypeError naming the option
BAD = {
    "n_bins": [0, -1, "10", True, 2.5, np.nan],
    "ci": [0.0, 1.0, 1.5, -0.1, "0.9", True, np.nan],
    "n_boot": [1, 0, -5, 2.5, "100", True],
    "n_mc": [0, -1, 2.5, "10", True],
    "statistics": [(), ("ZMS", "ZMS"), ("nope",), 5],
    "statistic": ["nope", 5, ("ZMS",)],
    "rng": [np.random.RandomState(0), -1, 1.5, "0"],
    "method": ["nope", 3],
    "conditioning": ["nope"],
    "binning": ["nope", 1],
    "min_count": [0, -1, 2.5, True],
    "generative": ["nope", 3],
    "progress": ["yes", 2],
    "fractions": [(1.5,), (-0.1,), (np.nan,)],
    "fraction": [1.5, -0.1, "0.5", np.nan],
    "n_orderings": [0, 2.5, True],
    "window": [0, -1, 2.5, True],
    "max_lag": [-1, 2.5, True],
    "nominal": [2, -0.1, np.nan],
    "folds": [1, 0, 2.5, "5", True],
    "level": [0.0, 1.0, 1.5, -0.1, np.nan, "0.9", True],
    "levels": [(), (0.0,), (1.0,), (1.5, 0.5), (np.nan,), (0.5, 0.5), "0.9", 5],
    "n_levels": [0, 1, 2.5, True, "100"],
    "kind": ["nope", 3],
    "scores": [(), ("nope",), ("nll", "nll"), 5],
}
MORE_THAN_M = "n_bins>M"  # sentinel: n_bins = M + 1 (a result or an error naming n_bins)

DATA_WORDS = ("E", "uE", "data")


def _names_the_argument(message, names):
    return any(
        re.search(rf"(?<![A-Za-z0-9_]){re.escape(n)}(?![A-Za-z0-9_])", message) for n in names
    )


class _Hang(Exception):
    pass


def _alarm(signum, frame):
    raise _Hang("call took more than 60 s")


# ----------------------------------------------------------------------------------------
# checking one call
# ----------------------------------------------------------------------------------------

VERDICT_NUMBERS = ("estimate", "ci_lower", "ci_upper", "zeta", "reference")


def _check_datasets(name, res):
    """Finite numbers wherever a verdict says valid."""
    if isinstance(res, xr.DataTree):
        dss = [c.to_dataset() for c in res.subtree if c.has_data]
    elif isinstance(res, xr.DataArray):
        dss = [res.to_dataset(name=res.name or "value")]
    elif isinstance(res, xr.Dataset):
        dss = [res]
    else:
        return
    for ds in dss:
        if "valid" not in ds:
            continue
        valid = ds["valid"]
        assert valid.dtype == bool, f"{name}: valid has dtype {valid.dtype}"
        for v in VERDICT_NUMBERS:
            if v in ds and np.issubdtype(ds[v].dtype, np.number):
                val, num = xr.broadcast(valid, ds[v])
                bad = val.values & ~np.isfinite(num.values.astype(float))
                assert not bad.any(), (
                    f"{name}: {int(bad.sum())} verdict(s) valid=True with non-finite {v}"
                )


def _check_report(rep):
    rep.to_html()
    doc = json.loads(rep.to_json())

    def walk(x):
        if isinstance(x, dict):
            data = x.get("data")
            if isinstance(data, dict) and "valid" in data:
                valid = np.asarray(data["valid"]["values"], dtype=object)
                for v in VERDICT_NUMBERS:
                    if v in data:
                        num = np.asarray(data[v]["values"], dtype=object)
                        if num.shape == valid.shape:
                            bad = (valid == True) & np.vectorize(  # noqa: E712
                                lambda a: a is None,
                                otypes=[bool],
                            )(num)
                            assert not bad.any(), f"report: valid with non-finite {v}"
            for y in x.values():
                walk(y)
        elif isinstance(x, list):
            for y in x:
                walk(y)

    walk(doc)


def _check_constructed(name, res, n_rows):
    """A data constructor presents finite E, uE > 0, all rows (nothing dropped silently)."""
    assert isinstance(res, xr.Dataset), f"{name} returned {type(res).__name__}"
    e = np.asarray(res["E"].values, dtype=float)
    u = np.asarray(res["uE"].values, dtype=float)
    assert np.isfinite(e).all() and np.isfinite(u).all() and (u > 0).all(), (
        f"{name}: a dataset with non-finite E/uE or uE <= 0"
    )
    assert res.sizes["point"] == n_rows, (
        f"{name}: {n_rows} rows in, {res.sizes['point']} points out (dropped silently)"
    )


def _snapshot(x):
    if isinstance(x, (xr.Dataset, xr.DataTree, xr.DataArray, pd.DataFrame, pd.Series)):
        return x.copy(deep=True)
    return copy.deepcopy(x)


def _same(a, b):
    if isinstance(a, (xr.Dataset, xr.DataArray)):
        return a.identical(b)
    if isinstance(a, xr.DataTree):
        return a.identical(b)
    if isinstance(a, (pd.DataFrame, pd.Series)):
        return a.equals(b) and a.index.equals(b.index)
    if isinstance(a, np.ndarray):
        return a.dtype == b.dtype and pd.Series(a.ravel()).equals(pd.Series(b.ravel()))
    return True


def call(name, func, args, kwargs, *, bad=None, data_names=DATA_WORDS, check=None, soft=()):
    """Call ``func`` and accept only the outcomes of the module docstring."""
    try:
        inspect.signature(func).bind(*args, **kwargs)
    except TypeError as exc:
        return _fail(name, f"{name}: the contract's call does not bind: {exc}")
    before = [_snapshot(a) for a in args] + [_snapshot(v) for v in kwargs.values()]
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(60)
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            res = func(*args, **kwargs)
    except (ValueError, TypeError) as exc:
        # a wrong option: the error names it, the data, or an option of a legitimately
        # refusable value (n_bins > M); no wrong option: any argument passed
        names = ((bad, *soft) if bad else tuple(kwargs)) + tuple(data_names)
        if not _names_the_argument(str(exc), names):
            wrong = f" (the wrong option: {bad}={kwargs[bad]!r})" if bad else ""
            return _fail(
                name,
                f"{name}: {type(exc).__name__} names none of {names}{wrong}: "
                f"{exc!s:.300}\n  options {kwargs}",
            )
        COUNTS[name]["error"] += 1
        res = None
    except _Hang:
        return _fail(name, f"{name}: hang (> 60 s) with options {kwargs}")
    except Exception as exc:  # noqa: BLE001 - the point of the sweep
        return _fail(
            name,
            f"{name}: {type(exc).__module__}.{type(exc).__name__}: "
            f"{exc!s:.300}\n  options {kwargs}",
        )
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    after = list(args) + list(kwargs.values())
    for i, (a, b) in enumerate(zip(after, before)):
        if not _same(a, b):
            return _fail(name, f"{name}: input {i} was mutated\n  options {kwargs}")
    if res is None:
        return None
    check = check or RESULT_CHECKS.get(name)
    try:
        if bad is not None:
            raise AssertionError(
                f"{name}: accepted {bad}={kwargs[bad]!r} (must raise a "
                "ValueError/TypeError naming it)"
            )
        _check_datasets(name, res)
        if check is not None:
            check(res)
    except AssertionError as exc:
        return _fail(name, f"{exc}\n  options {kwargs}")
    COUNTS[name]["result"] += 1
    return res


# values a function documents as valid although BAD lists them (docs/conventions.md)
ALLOWED = {
    "qce": {"n_boot": [0]},
    "confidence_curve": {"n_boot": [0]},
    "proper_scores": {"n_boot": [0]},
}


def draw_options(draw, options, size, *, allowed=None):
    """Valid cheap values of each option, then maybe one wrong value."""
    allowed = allowed or {}
    kwargs, soft = {}, []
    for key, values in options.items():
        v = draw(st.sampled_from(values))
        if isinstance(v, str) and v == MORE_THAN_M:
            v = size + 1
            soft.append(key)
        kwargs[key] = v
    bad = draw(st.sampled_from([None, None] + [k for k in options if k in BAD]))
    if bad is not None:
        kwargs[bad] = draw(
            st.sampled_from(
                [
                    v
                    for v in BAD[bad]
                    if not any(
                        v is a or (type(v) is type(a) and v == a) for a in allowed.get(bad, ())
                    )
                ]
            )
        )
        soft = [k for k in soft if k != bad]
    draw_options.soft = tuple(soft)
    return kwargs, bad


def _size(data):
    if isinstance(data, xr.DataTree):
        return min(c.to_dataset().sizes.get("point", 0) for c in data.children.values())
    return data.sizes.get("point", 0)


# no shrinking and one failure per entry point: the failing call is printed with its
# options (and hypothesis prints the draws); shrinking a dozen failing entry points
# would take minutes
EXAMPLES = 2  # max_examples multiplier: about 30 s for the whole module on 2 cores
SETTINGS = dict(
    deadline=None,
    database=None,
    derandomize=True,
    report_multiple_bugs=False,
    phases=[Phase.explicit, Phase.generate],
    suppress_health_check=list(HealthCheck),
)


def _fn(*names):
    for n in names:
        if hasattr(uqviz, n):
            return getattr(uqviz, n)
    return getattr(uqviz, names[-1])


# ----------------------------------------------------------------------------------------
# the entry points taking E/uE data: (name, callable, options, max_examples)
# ----------------------------------------------------------------------------------------

CHEAP = dict(n_boot=[2, 20], ci=[0.5, 0.95], rng=[None, 0, 7])
EUE_ENTRY_POINTS = [
    (
        "validate_average",
        "validate_average",
        dict(
            statistics=[("ZMS", "RCE"), ("ZM",), ("ENCE",), ("CC",), ("NLL",)],
            method=["bca", "percentile"],
            **CHEAP,
        ),
        60,
    ),
    ("tailedness", "tailedness", {}, 30),
    (
        "local_calibration",
        "local_calibration",
        dict(
            statistic=["ZMS", "ZM", "RCE"],
            conditioning=["uE", "x"],
            n_bins=[None, 1, 2, MORE_THAN_M],
            binning=["equal_count", "equal_width", "stratified"],
            **CHEAP,
        ),
        60,
    ),
    (
        "local_calibration_picp",
        "local_calibration",
        dict(
            statistic=["PICP"],
            level=[None, 0.5, 0.95],
            generative=["normal", "t6", "empirical"],
            conditioning=["uE", "x"],
            n_bins=[None, 1, 2, MORE_THAN_M],
            binning=["equal_count", "equal_width", "stratified"],
            ci=[0.5, 0.95],
        ),
        40,
    ),
    (
        "local_interval_coverage",
        "local_interval_coverage",
        dict(
            level=[0.5, 0.95],
            generative=["normal", "t6", "empirical"],
            conditioning=["uE", "x"],
            n_bins=[None, 1, 2, MORE_THAN_M],
            binning=["equal_count", "equal_width", "stratified"],
            ci=[0.5, 0.95],
            random_ties=[False, True],
            rng=[None, 0, 7],
        ),
        40,
    ),
    (
        "interval_coverage",
        "interval_coverage",
        dict(
            levels=[(0.5, 0.9), (0.95,)],
            generative=["normal", "t6", "uniform", "empirical"],
            ci=[0.5, 0.95],
        ),
        40,
    ),
    (
        "calibration_curve",
        "calibration_curve",
        dict(
            n_levels=[2, 10, 100],
            kind=["interval", "quantile"],
            generative=["normal", "t6", "empirical"],
            ci=[0.5, 0.95],
        ),
        40,
    ),
    (
        "proper_scores",
        "proper_scores",
        dict(
            scores=[("nll", "crps", "check", "interval"), ("check",), ("crps", "nll")],
            generative=["normal", "t6", "laplace"],
            levels=[None, (0.5, 0.9)],
            n_boot=[0, 2, 20],
            ci=[0.5, 0.95],
            method=["bca", "percentile"],
            rng=[None, 0, 7],
        ),
        50,
    ),
    (
        "binned_errors",
        "binned_errors",
        dict(
            statistics=[("ENCE", "UCE", "ZMSE"), ("ENCE",)],
            conditioning=["uE", "x"],
            n_bins=[None, 1, 2, MORE_THAN_M],
            binning=["equal_count", "equal_width"],
        ),
        40,
    ),
    (
        "running_statistics",
        "running_statistics",
        dict(conditioning=["uE", "x"], window=[1, 2, 3]),
        30,
    ),
    (
        "reliability",
        "reliability",
        dict(conditioning=["uE"], n_bins=[None, 1, 2, MORE_THAN_M], **CHEAP),
        40,
    ),
    (
        "simulated_reference",
        "simulated_reference",
        dict(
            statistic=["ENCE", "ZMSE", "ZMS"],
            generative=["normal", "t6", "empirical"],
            n_mc=[1, 5],
            n_bins=[1, 2, MORE_THAN_M],
            ci=[0.5, 0.95],
            rng=[None, 0],
            progress=[False],
        ),
        40,
    ),
    (
        "validate_simulated",
        "validate_simulated",
        dict(
            statistic=["ENCE", "ZMSE"],
            generative=["normal", "t6"],
            n_mc=[1, 5],
            n_bins=[1, 2],
            progress=[False],
            **CHEAP,
        ),
        40,
    ),
    (
        "validate_with_references",
        "validate_with_references",
        dict(
            statistic=["ENCE", "ZMS"],
            generative=[("normal", "t6"), ("normal", "uniform")],
            n_mc=[1, 5],
            n_bins=[1, 2],
            progress=[False],
            **CHEAP,
        ),
        30,
    ),
    (
        "decimation_curve",
        ("decimation_curve", "decimation"),
        dict(statistics=[("ZMS", "RCE"), ("ZMS",)], fractions=[(0.0, 0.5), (0.2,)], **CHEAP),
        40,
    ),
    ("decimated", "decimated", dict(fraction=[0.0, 0.5, 0.9]), 30),
    ("distribution_shapes", "distribution_shapes", {}, 30),
    ("fit_f", "fit_f", {}, 25),
    ("fit_inverse_gamma", "fit_inverse_gamma", {}, 25),
    ("fit_student_t", "fit_student_t", {}, 25),
    (
        "ordering_study",
        "ordering_study",
        dict(
            statistic=["ZMS"],
            conditioning=["x", "uE"],
            n_bins=[1, 2, MORE_THAN_M],
            n_orderings=[1, 2],
            progress=[False],
            **CHEAP,
        ),
        30,
    ),
    (
        "confidence_curve",
        "confidence_curve",
        dict(
            fractions=[(0.0, 0.5), (0.0,)],
            n_mc=[1, 5],
            n_boot=[2, 10],
            ci=[0.5, 0.95],
            rng=[None, 0],
        ),
        30,
    ),
    (
        "extrapolate",
        "extrapolate",
        {
            "statistic": ["ZMSE", "ENCE"],
            "n_bins": [(1, 2, 3), (2,)],
            "min_count": [1, 2],
            "fit_min_bins": [0, 1],
            "n_boot": [2, 10],
            "ci": [0.5, 0.95],
            "rng": [None, 0],
        },
        30,
    ),
    (
        "report",
        "report",
        dict(
            n_boot=[2, 20],
            n_mc=[1, 5],
            n_bins=[None, 1, MORE_THAN_M],
            rng=[0],
            progress=[False],
            figures=[False],
        ),
        20,
    ),
    (
        "fit_recalibration",
        "fit_recalibration",
        dict(
            method=["scaling", "linear", "bvs", "isotonic"],
            conditioning=["uE", "uE", "x"],
            n_bins=[None, None, None, 1, 2, MORE_THAN_M],
        ),
        40,
    ),
    (
        "recalibrate",
        "recalibrate",
        dict(
            method=["scaling", "linear", "bvs", "isotonic"],
            folds=[2, 3],
            conditioning=["uE", "uE", "x"],
            n_bins=[None, None, None, 1, MORE_THAN_M],
            rng=[None, 0, 7],
        ),
        40,
    ),
]


def _check_recalibrated(res):
    """Recalibrated data: every point kept, finite E, uE > 0, the old uE kept."""
    trees = (
        [c.to_dataset() for c in res.children.values()] if isinstance(res, xr.DataTree) else [res]
    )
    for ds in trees:
        _check_constructed("recalibrate", ds, ds["uE_original"].sizes["point"])


def _check_recalibration(rec):
    """A fitted recalibration: finite parameters (NaN only as a tree's padding)."""
    p = rec.parameters
    for name, var in p.data_vars.items():
        values = np.asarray(var.values, dtype=float)
        if "dataset" not in p.dims:
            assert np.isfinite(values).all(), f"fit_recalibration: non-finite {name}"
        else:
            assert not np.isinf(values).any(), f"fit_recalibration: infinite {name}"


# checks of the results of entry points that return objects or data, not verdicts
RESULT_CHECKS = {"recalibrate": _check_recalibrated, "fit_recalibration": _check_recalibration}


def _make_eue_test(name, fname, options, n):
    @settings(max_examples=n * EXAMPLES, **SETTINGS)
    @given(st.data())
    def test(data):
        func = _fn(*((fname,) if isinstance(fname, str) else fname))
        ds = data.draw(eue_data(), label="data")
        kwargs, bad = draw_options(data.draw, options, _size(ds), allowed=ALLOWED.get(name))
        check = (lambda rep: _check_report(rep)) if name == "report" else None
        call(name, func, (ds,), kwargs, bad=bad, check=check, soft=draw_options.soft)

    test.__name__ = f"test_sweep_{name}"
    return test


for _name, _fname, _options, _n in EUE_ENTRY_POINTS:
    globals()[f"test_sweep_{_name}"] = _make_eue_test(_name, _fname, _options, _n)


# ----------------------------------------------------------------------------------------
# functions of a local_calibration result: fraction_valid, acf
# ----------------------------------------------------------------------------------------


def _local_of(draw):
    ds = draw(eue_data(min_size=2, max_size=12))
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            return uqviz.local_calibration(
                ds, n_bins=draw(st.sampled_from([1, 2, 4])), n_boot=20, rng=0
            )
    except (ValueError, TypeError):
        return None  # refused data: local_calibration's own sweep judges that


@settings(max_examples=40 * EXAMPLES, **SETTINGS)
@given(st.data())
def test_sweep_fraction_valid(data):
    local = _local_of(data.draw)
    assume(local is not None)
    kwargs, bad = draw_options(data.draw, dict(ci=[0.5, 0.95], nominal=[None, 0.95]), 0)
    call(
        "fraction_valid",
        uqviz.fraction_valid,
        (local,),
        kwargs,
        bad=bad,
        data_names=("local_result", "estimate", "ci_lower", "ci_upper", "valid"),
    )


@settings(max_examples=30 * EXAMPLES, **SETTINGS)
@given(st.data())
def test_sweep_acf(data):
    local = _local_of(data.draw)
    assume(local is not None)
    kwargs, bad = draw_options(data.draw, dict(max_lag=[None, 1, 3]), 0)
    call(
        "acf", uqviz.acf, (local,), kwargs, bad=bad, data_names=("local_result", "estimate", "bin")
    )


# ----------------------------------------------------------------------------------------
# multivariate predictions: qce, nees, nees_test (arrays or a Dataset)
# ----------------------------------------------------------------------------------------


@st.composite
def mv_inputs(draw):
    n = draw(st.integers(0, 6))
    d = draw(st.integers(1, 3))
    y = draw(columns(min_size=n * d, max_size=n * d))
    m = draw(columns(min_size=n * d, max_size=n * d))
    s = draw(columns(min_size=n * d, max_size=n * d, positive=True))
    y, m, s = (np.resize(a, n * d).reshape(n, d) if a.size else np.zeros((n, d)) for a in (y, m, s))
    y, m, s = (_cast(draw, a) for a in (y, m, s))
    if draw(st.booleans()):
        ds = xr.Dataset(
            {
                "y": (("point", "variable"), y),
                "mean": (("point", "variable"), m),
                "scale": (("point", "variable"), s),
            }
        )
        return (ds,)
    return (y, m, s)


MV_DATA = ("y", "mean", "scale", "data")


@settings(max_examples=40 * EXAMPLES, **SETTINGS)
@given(st.data())
def test_sweep_qce(data):
    args = data.draw(mv_inputs())
    kwargs, bad = draw_options(
        data.draw,
        dict(n_bins=[1, 2, 10], n_boot=[2, 10], ci=[0.5, 0.95], rng=[None, 0]),
        0,
        allowed=ALLOWED["qce"],
    )
    call("qce", uqviz.qce, args, kwargs, bad=bad, data_names=MV_DATA)


@settings(max_examples=30 * EXAMPLES, **SETTINGS)
@given(st.data())
def test_sweep_nees(data):
    args = data.draw(mv_inputs())
    call("nees", uqviz.nees, args, {}, data_names=MV_DATA)


@settings(max_examples=30 * EXAMPLES, **SETTINGS)
@given(st.data())
def test_sweep_nees_test(data):
    args = data.draw(mv_inputs())
    kwargs, bad = draw_options(data.draw, dict(ci=[0.5, 0.95]), 0)
    call("nees_test", uqviz.nees_test, args, kwargs, bad=bad, data_names=MV_DATA)


# ----------------------------------------------------------------------------------------
# constructors: from_arrays, from_dataframe, read_csv
# ----------------------------------------------------------------------------------------

CONSTRUCTOR_DATA = (
    "E",
    "uE",
    "errors",
    "uncertainties",
    "df",
    "path",
    "data",
    "variances",
    "index",
)


@st.composite
def containers(draw):
    e, u = draw(eue_arrays())
    kind = draw(st.sampled_from(["array", "list", "series", "series_other_index"]))
    if kind == "list":
        return e.tolist(), u.tolist()
    if kind == "series":
        idx = np.arange(e.size)[::-1] + 5
        return pd.Series(e, index=idx), pd.Series(u, index=idx)
    if kind == "series_other_index":  # different indexes: must not be paired silently
        return (
            pd.Series(e, index=np.arange(e.size) + 100),
            pd.Series(u, index=np.arange(u.size)[::-1]),
        )
    return e, u


def _paired_by_label(e, u):
    return not (
        isinstance(e, pd.Series) and isinstance(u, pd.Series) and not e.index.equals(u.index)
    )


@settings(max_examples=60 * EXAMPLES, **SETTINGS)
@given(st.data())
def test_sweep_from_arrays(data):
    e, u = data.draw(containers())
    drop = data.draw(st.booleans())
    n = len(e)

    def check(res):
        if not drop:
            _check_constructed("from_arrays", res, n)
        if not _paired_by_label(e, u):
            raise AssertionError(
                "from_arrays: Series with different indexes were paired by position silently"
            )

    call(
        "from_arrays",
        uqviz.from_arrays,
        (e, u),
        dict(drop_invalid=drop),
        data_names=CONSTRUCTOR_DATA,
        check=check,
    )


@settings(max_examples=40 * EXAMPLES, **SETTINGS)
@given(st.data())
def test_sweep_from_dataframe(data):
    e, u = data.draw(eue_arrays())
    index = data.draw(st.sampled_from([None, "reversed", "strings"]))
    idx = (
        None
        if index is None
        else np.arange(e.size)[::-1] + 7
        if index == "reversed"
        else [f"r{i}" for i in range(e.size)]
    )
    df = pd.DataFrame({"err": e, "unc": u}, index=idx)
    cols = data.draw(st.sampled_from([("err", "unc"), ("err", "missing")]))
    kwargs = dict(errors=cols[0], uncertainties=cols[1])
    call(
        "from_dataframe",
        uqviz.from_dataframe,
        (df,),
        kwargs,
        bad=None,
        data_names=CONSTRUCTOR_DATA + ("missing",),
        check=lambda res: _check_constructed("from_dataframe", res, len(df)),
    )


@settings(max_examples=30 * EXAMPLES, **SETTINGS)
@given(data=st.data())
def test_sweep_read_csv(tmp_path_factory, data):
    e, u = data.draw(eue_arrays())
    path = tmp_path_factory.mktemp("csv") / "d.csv"
    layout = data.draw(st.sampled_from(["plain", "ragged", "bom", "semicolon", "empty"]))
    lines = ["E,uE"] + [f"{a!r},{b!r}" for a, b in zip(e.tolist(), u.tolist())]
    sep = ","
    if layout == "ragged" and len(lines) > 1:
        lines[1] += ",99"
    elif layout == "semicolon":
        lines = [ln.replace(",", ";") for ln in lines]
        sep = ";"
    elif layout == "empty":
        lines = []
    text = "\n".join(lines) + "\n"
    path.write_text(("\ufeff" if layout == "bom" else "") + text, encoding="utf-8")
    n = max(len(lines) - 1, 0)
    call(
        "read_csv",
        uqviz.read_csv,
        (str(path),),
        dict(sep=sep),
        data_names=CONSTRUCTOR_DATA + ("line", "header", "sep", str(path)),
        check=lambda res: (_check_constructed("read_csv", res, n), _no_ragged(layout)),
    )


def _no_ragged(layout):
    if layout == "ragged":
        raise AssertionError("read_csv: a row with more fields than the header was accepted")


PREDICTION_DATA = CONSTRUCTOR_DATA + (
    "y_true",
    "y_pred",
    "std",
    "variance",
    "lower",
    "upper",
    "quantiles",
    "samples",
)


@settings(max_examples=40 * EXAMPLES, **SETTINGS)
@given(st.data())
def test_sweep_from_predictions(data):
    """Each uncertainty form on arbitrary values: a clean dataset of every row, or an error
    naming the input; ``level`` and ``quantile_rule`` sometimes wrong."""
    y, s = data.draw(eue_arrays())
    n = len(y)
    yp = np.zeros(n)
    form = data.draw(st.sampled_from(["std", "variance", "interval", "quantiles", "samples"]))
    if form in ("std", "variance"):
        kwargs = {form: s}
    elif form == "interval":
        kwargs = dict(lower=yp - s, upper=yp + s, level=data.draw(st.sampled_from([0.5, 0.9])))
    elif form == "quantiles":
        kwargs = dict(
            quantiles={0.16: yp - s, 0.5: yp, 0.84: yp + s},
            quantile_rule=data.draw(st.sampled_from(["nearest", "fit"])),
        )
    else:
        kwargs = dict(samples=np.stack([yp - s, yp + s, yp], axis=1) if n else np.zeros((0, 3)))
    bad = None
    if form == "interval" and data.draw(st.booleans()):
        bad = "level"
        kwargs["level"] = data.draw(st.sampled_from(BAD["ci"]))
    elif form == "quantiles" and data.draw(st.booleans()):
        bad = "quantile_rule"
        kwargs["quantile_rule"] = data.draw(st.sampled_from(["median", None, 1]))
    call(
        "from_predictions",
        uqviz.from_predictions,
        (y, yp),
        kwargs,
        bad=bad,
        data_names=PREDICTION_DATA,
        check=lambda res: _check_constructed("from_predictions", res, n),
    )


# ----------------------------------------------------------------------------------------
# forecasts that are bad once they sit in a Dataset (issue 38, item 9): every reader of the
# forecast as given refuses them through one check (uqviz.data.model.forecast_problems)
# ----------------------------------------------------------------------------------------


def _forecast_cases():
    from scipy.stats import norm

    r = np.random.default_rng(0)
    m = 40
    y, yp = r.standard_normal(m), np.zeros(m)
    levels = [0.05, 0.16, 0.5, 0.84, 0.95]

    def quantiles():
        return uqviz.from_predictions(y, yp, quantiles={p: yp + norm.ppf(p) for p in levels})

    def interval():
        return uqviz.from_predictions(y, yp, lower=yp - 1.64, upper=yp + 1.64, level=0.9)

    def samples():
        return uqviz.from_predictions(y, None, samples=r.standard_normal((m, 5)))

    def edit(make, f):
        ds = make()
        f(ds)
        return ds

    def set_level(value):
        def f(ds):
            ds.attrs["level"] = value
            for v in ("lower", "upper"):
                if value is None:
                    del ds[v].attrs["level"]
                else:
                    ds[v].attrs["level"] = value

        return f

    def swap(ds):
        lo = ds["lower"].values.copy()
        ds["lower"].values[:] = ds["upper"].values
        ds["upper"].values[:] = lo

    def set_value(var, index, value):
        def f(ds):
            ds[var][index] = value

        return f

    return {
        "NaN quantile": (
            edit(quantiles, set_value("quantiles", (3, 1), np.nan)),
            r"quantiles: 1 row with a NaN quantile \(row 3\)",
        ),
        "inf quantile": (
            edit(quantiles, set_value("quantiles", (3, 1), np.inf)),
            r"quantiles: 1 row with an infinite quantile that is not a tail",
        ),
        "crossing": (
            edit(quantiles, set_value("quantiles", (3, 1), 5.0)),
            r"quantiles: 1 row with crossing quantiles",
        ),
        "unsorted levels": (
            quantiles().assign_coords(level=[0.16, 0.05, 0.5, 0.84, 0.95]),
            "not in increasing order",
        ),
        "duplicated level": (
            quantiles().assign_coords(level=[0.05, 0.16, 0.5, 0.5, 0.95]),
            r"levels given more than once: \[0.5\]",
        ),
        "levels 0 and 1": (
            quantiles().assign_coords(level=[0.0, 0.16, 0.5, 0.84, 1.0]),
            r"2 levels outside \(0, 1\): \[0, 1\]",
        ),
        "lower > upper": (edit(interval, swap), r"lower: 40 rows with lower > upper"),
        "no level": (edit(interval, set_level(None)), "needs its nominal coverage"),
        "level 1.5": (
            edit(interval, set_level(1.5)),
            r"must be a probability in \(0, 1\), "
            "got 1.5",
        ),
        "NaN y, interval": (
            edit(interval, set_value("y", 2, np.nan)),
            r"y: 1 row with NaN \(row 2\)",
        ),
        "NaN y, quantiles": (
            edit(quantiles, set_value("y", 2, np.nan)),
            r"y: 1 row with NaN \(row 2\)",
        ),
        "one member": (samples().isel(sample=[0]), "ensemble of one member.*got 1"),
        "NaN member": (
            edit(samples, set_value("samples", (1, 1), np.nan)),
            r"samples: 1 row with a NaN member \(row 1\)",
        ),
    }


FORECAST_CASES = _forecast_cases()
FORECAST_READERS = {
    "check_dataset": lambda d: uqviz.data.check_dataset(d),
    "pit": lambda d: uqviz.pit(d),
    "validate_pit": lambda d: uqviz.validate_pit(d, n_band=20, rng=0),
    "local_pit": lambda d: uqviz.local_pit(d, n_bins=1, n_band=20, rng=0),
    "interval_coverage": lambda d: uqviz.interval_coverage(d, intervals="given"),
    "group_coverage": lambda d: uqviz.group_coverage(
        d, intervals="given", groups=np.arange(40) % 2, n_mc=2, n_perm=2, rng=0
    ),
    "recalibrate": lambda d: uqviz.recalibrate(d, method="quantile"),
    "predictive_scores": lambda d: uqviz.predictive_scores(d, n_boot=0),
    "compare_forecasts": lambda d: uqviz.compare_forecasts(d, d, n_boot=2, rng=0),
    "fit_recalibration_cqr": lambda d: uqviz.fit_recalibration(d, method="cqr"),
}


@pytest.mark.parametrize("reader", FORECAST_READERS)
@pytest.mark.parametrize("case", FORECAST_CASES)
def test_every_reader_refuses_a_forecast_bad_once_in_a_dataset(case, reader):
    ds, message = FORECAST_CASES[case]
    before = copy.deepcopy(ds)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ValueError, match=message):
            FORECAST_READERS[reader](ds)
    xr.testing.assert_identical(ds, before)


def test_a_recalibrated_forecast_with_infinite_tails_passes_the_check():
    """-inf at the lowest levels and +inf at the highest are the tails a recalibration may
    give (a conformal interval of the whole line): values, not bad rows."""
    ds, _ = FORECAST_CASES["crossing"]
    ds = ds.copy(deep=True)
    ds["quantiles"][:] = np.sort(ds["quantiles"].values, axis=1)
    ds["quantiles"][0, :2] = -np.inf
    ds["quantiles"][1, -1] = np.inf
    assert uqviz.data.check_dataset(ds) is ds
    ds["quantiles"][1, -1] = -np.inf  # -inf above finite quantiles is not a tail
    with pytest.raises(ValueError, match="1 row with an infinite quantile that is not a tail"):
        uqviz.data.check_dataset(ds)


# ----------------------------------------------------------------------------------------
# bad E/uE data with the message of the rule (issue 38, item 6): the data rules of
# uqviz.data.model (NaN, inf, uE <= 0 naming the variable, the count and the rows; a tree
# names its child) asserted on every public function taking E/uE data, instead of once per
# function in each module's tests; the hypothesis sweep above only checks that an error
# names the data
# ----------------------------------------------------------------------------------------


def _bad_data_cases():
    def edit(var, rows, value):
        ds = make_small_dataset(400, 0, "a")
        ds[var] = ds[var].copy()
        ds[var].values[rows] = value
        return ds

    def tree_with_bad_child():
        good = make_small_dataset(400, 0, "a")
        bad = make_small_dataset(300, 1, "b")
        bad["uE"] = bad["uE"].copy()
        bad["uE"].values[4] = 0.0
        return xr.DataTree.from_dict({"a": good, "b": bad})

    return {
        "uE <= 0": (edit("uE", [3], -1.0), r"uE: 1 row with uE <= 0 \(row 3\)"),
        "uE = 0, 2 rows": (edit("uE", [1, 4], 0.0), r"uE: 2 rows with uE <= 0 \(rows 1, 4\)"),
        "NaN E": (edit("E", [5], np.nan), r"E: 1 row with NaN \(row 5\)"),
        "inf E": (edit("E", [0], -np.inf), r"E: 1 row with inf \(row 0\)"),
        "NaN uE": (edit("uE", [2], np.nan), r"uE: 1 row with NaN \(row 2\)"),
        "inf uE": (edit("uE", [7], np.inf), r"uE: 1 row with inf \(row 7\)"),
        "NaN feature": (edit("y", [6, 8], np.nan), r"y: 2 rows with NaN \(rows 6, 8\)"),
        "tree, uE = 0 in child b": (
            tree_with_bad_child(),
            r"dataset 'b': (?s:.*)uE: 1 row with uE <= 0 \(row 4\)",
        ),
    }


BAD_DATA_CASES = _bad_data_cases()


def _bad_data_readers():
    from tests.contract import test_contract as contract

    readers = {}
    for qual, func in sorted(contract.EUE.items()):
        short = contract._short(qual)
        if short == "fit_histogram":
            continue  # a plot of the data and a distribution_shapes result: no data check
        kwargs = contract.EUE_CALLS[short]
        if short.endswith("Explorer"):
            readers[short] = lambda d, f=func, kw=kwargs: _shown_error(f(d, **kw))
        else:
            readers[short] = lambda d, f=func, kw=kwargs: f(d, **kw)
    return readers


def _shown_error(widget):
    """An explorer shows a bad setting's error (no result) instead of raising: raise it."""
    import html

    if widget.result is None:
        raise ValueError(html.unescape(re.sub(r"<[^>]+>", "", widget.message.value)))
    return widget


BAD_DATA_READERS = _bad_data_readers()


@pytest.mark.parametrize(
    "case, reader",
    [
        (case, reader)
        for case in BAD_DATA_CASES
        for reader in BAD_DATA_READERS
        # an explorer shows one child of a tree at a time, the first ('a', good) at start
        if not (case.startswith("tree") and reader.endswith("Explorer"))
    ],
)
def test_every_reader_refuses_bad_data_with_the_rows(case, reader):
    ds, message = BAD_DATA_CASES[case]
    before = _snapshot(ds)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ValueError, match=message):
            BAD_DATA_READERS[reader](ds)
    assert _same(ds, before), f"{reader} mutated its input"


# ----------------------------------------------------------------------------------------
# bad-input cases folded in from the module tests (issue 38, item 6): one entry per
# (function, bad input, error type, message pattern), the inputs as the module test built
# them. "origin" is the test the case came from; the checks marked "removed" are asserted
# here only (they were bad-input checks and nothing more: their pytest.raises blocks were
# deleted from the origin), the others stay in their module tests too (those check more,
# or share a test with other checks).
#
#   origin                                                          case id(s)
#   tests/average/test_validation.py::test_bad_arguments (kept)      validate_average: *
#   tests/scores/test_scores.py::test_bad_data (2 checks removed)    interval_coverage: 2 points,
#                                                                    uE = -1 in row 1;
#                                                                    proper_scores: 1 point
#   tests/average/test_shapes.py::
#       test_fits_name_the_data_and_count_the_points (3 fit_f      fit_*: *, distribution_shapes: *
#       checks removed: E = 0 (E2, Z2), E2 overflows)
#   tests/conditional/test_conditional.py::test_bad_input (kept)     local_calibration: NaN ...
#   tests/data/test_from_predictions.py::
#       test_nan_and_inf_are_counted_with_their_source (removed)    from_predictions: NaN and
#                                                                    inf ..., inf std
#       test_length_mismatch_names_every_input (kept)               from_predictions: length ...
#       test_non_numeric_and_misaligned_input (kept)                from_predictions: y_pred ...,
#                                                                    different indexes, empty
#   tests/data/test_data.py::test_ragged_input_is_named (kept)      from_arrays: ragged *
#   tests/data/test_data.py::
#       test_a_masked_array_is_refused_with_its_masked_count (kept) from_arrays: masked *
#       test_read_csv_names_the_cell_beyond_float64 (kept)          read_csv: a cell beyond ...
#   tests/predictive/test_forecast.py::
#       test_drop_invalid_keeps_the_forecast_of_the_rows_kept       from_predictions: quantiles,
#       (kept: it checks drop_invalid too)                           NaN at the median ...
#   tests/groups/test_group_coverage.py::test_errors (kept)          group_coverage: a string ...
# ----------------------------------------------------------------------------------------


def _one_point():
    return uqviz.from_arrays([0.3], [0.2])


def _uE_minus_one_in_row_0():
    ds = make_small_dataset(100, 0, "a")
    ds["uE"] = ds["uE"].where(ds.point != ds.point[0], -1.0)
    return ds


def _nan_conditioning():
    ds = make_small_dataset(50, 0, "a")
    return ds.assign(f=("point", np.where(np.arange(50) < 3, np.nan, 1.0 * np.arange(50))))


def _quantiles_nan_at_the_median():
    from scipy.stats import norm

    rng = np.random.default_rng(3)  # the toy forecast of tests/predictive/test_forecast.py
    yp = rng.normal(size=6)
    s = rng.uniform(0.5, 2.0, size=6)
    y = yp + s * rng.normal(size=6)
    q = {p: yp + s * norm.ppf(p) for p in (0.1, 0.5, 0.9)}
    q[0.5][2] = np.nan  # a NaN at a level that uE does not use: the row is invalid all the same
    return y, yp, q


def _csv_beyond_float64(tmp_path):
    path = tmp_path / "big.csv"
    path.write_text("E,uE\n" + "0.1,1\n" * 50 + "1e400,1\n")
    return (path,)


def _string_feature():
    ds = make_small_dataset(200, 0, "a")
    ds["name"] = ("point", np.array(["a", "b"] * 100))
    return (ds,)


_ZEROS = (np.zeros(20), np.linspace(0.1, 1.0, 20))
_MASKED_E = np.ma.masked_array([0.1, 0.2, -0.3, 0.4], mask=[True, False, True, False])
_MASKED_UE = np.ma.masked_array(np.ones(4), mask=[False, False, False, True])

# id: (origin, call, inputs, error type, message pattern)
BAD_INPUT_CASES = {
    "validate_average: uE = -1 in row 0": (
        "tests/average/test_validation.py::test_bad_arguments",
        uqviz.validate_average,
        lambda: (_uE_minus_one_in_row_0(),),
        ValueError,
        r"uE: 1 row with uE <= 0 \(row 0\)",
    ),
    "validate_average: an array, not a Dataset": (
        "tests/average/test_validation.py::test_bad_arguments",
        uqviz.validate_average,
        lambda: (np.ones(3),),
        TypeError,
        "Dataset or xarray.DataTree",
    ),
    "interval_coverage: 2 points, uE = -1 in row 1": (
        "tests/scores/test_scores.py::test_bad_data",
        uqviz.interval_coverage,
        lambda: (uqviz.from_arrays([0.1, 0.2], [1.0, 1.0]).assign(uE=("point", [1.0, -1.0])),),
        ValueError,
        r"uE: 1 row with uE <= 0 \(row 1\)",
    ),
    "proper_scores: 1 point": (
        "tests/scores/test_scores.py::test_bad_data",
        lambda d: uqviz.proper_scores(d, n_boot=10),
        lambda: (uqviz.from_arrays([0.1], [1.0]),),
        ValueError,
        "at least 2 points",
    ),
    **{
        f"{name}: 1 point": (
            "tests/average/test_shapes.py::test_fits_name_the_data_and_count_the_points",
            getattr(uqviz, name),
            lambda: (_one_point(),),
            ValueError,
            r"data: fitting \w+ needs at least 2 points, got 1",
        )
        for name in ("fit_inverse_gamma", "fit_f", "distribution_shapes")
    },
    "fit_student_t: 2 points": (
        "tests/average/test_shapes.py::test_fits_name_the_data_and_count_the_points",
        uqviz.fit_student_t,
        lambda: (uqviz.from_arrays([0.3, -0.1], [0.2, 0.4]),),
        ValueError,
        "data: fitting Z needs at least 3 points, got 2",
    ),
    "fit_f: E = 0 at all points": (
        "tests/average/test_shapes.py::test_fits_name_the_data_and_count_the_points",
        uqviz.fit_f,
        lambda: (uqviz.from_arrays(*_ZEROS),),
        ValueError,
        r"data: E2 is zero at all 20 points",
    ),
    "fit_f(variable='Z2'): E = 0 at all points": (
        "tests/average/test_shapes.py::test_fits_name_the_data_and_count_the_points",
        lambda d: uqviz.fit_f(d, variable="Z2"),
        lambda: (uqviz.from_arrays(*_ZEROS),),
        ValueError,
        r"data: Z2 is zero at all 20 points",
    ),
    "fit_f: E2 overflows in 1 point": (
        "tests/average/test_shapes.py::test_fits_name_the_data_and_count_the_points",
        uqviz.fit_f,
        lambda: (uqviz.from_arrays(np.r_[1e200, np.ones(9)], np.ones(10)),),
        ValueError,
        r"data: E2 .* overflows \(inf\) at 1 of 10 points",
    ),
    "local_calibration: NaN in 3 rows of the conditioning feature": (
        "tests/conditional/test_conditional.py::test_bad_input",
        lambda d: uqviz.local_calibration(d, conditioning="f"),
        lambda: (_nan_conditioning(),),
        ValueError,
        r"f: 3 rows with NaN \(rows 0, 1, 2\)",
    ),
    "from_predictions: NaN and inf in y_true": (
        "tests/data/test_from_predictions.py::test_nan_and_inf_are_counted_with_their_source",
        lambda y, yp, s: uqviz.from_predictions(y, yp, std=s),
        lambda: (np.array([1.0, np.nan, 3.0, np.inf, 5.0]), np.zeros(5), np.ones(5)),
        ValueError,
        r"E: 1 row with NaN \(row 1\) \[y_true - y_pred\]\n"
        r"  E: 1 row with inf \(row 3\) \[y_true - y_pred\]",
    ),
    "from_predictions: inf in y_true and y_pred (inf - inf)": (
        "tests/data/test_from_predictions.py::test_nan_and_inf_are_counted_with_their_source",
        lambda y, yp, s: uqviz.from_predictions(y, yp, std=s),
        lambda: ([np.inf, 1.0], [np.inf, 1.0], [1.0, 1.0]),
        ValueError,
        r"E: 1 row with NaN \(row 0\) \[y_true - y_pred\]",
    ),
    "from_predictions: inf std": (
        "tests/data/test_from_predictions.py::test_nan_and_inf_are_counted_with_their_source",
        lambda y, yp, s: uqviz.from_predictions(y, yp, std=s),
        lambda: (np.zeros(5), np.zeros(5), [1, 1, np.inf, 1, 1]),
        ValueError,
        r"uE: 1 row with inf \(row 2\)",
    ),
    "from_predictions: length mismatch": (
        "tests/data/test_from_predictions.py::test_length_mismatch_names_every_input",
        lambda y, yp, s: uqviz.from_predictions(y, yp, std=s),
        lambda: ([1.0, 2.0, 3.0], [1.0, 2.0], [1.0, 1.0, 1.0]),
        ValueError,
        r"length mismatch: y_true has 3 rows, y_pred has 2 rows, "
        r"std has 3 rows; y_pred has 1 row fewer than y_true",
    ),
    "from_predictions: y_pred not numbers": (
        "tests/data/test_from_predictions.py::test_non_numeric_and_misaligned_input",
        lambda y, yp, s: uqviz.from_predictions(y, yp, std=s),
        lambda: ([1.0, 2.0], np.array([1.0, "x"], dtype=object), [1.0, 1.0]),
        ValueError,
        r"y_pred: 1 row with values that are not numbers",
    ),
    "from_predictions: Series with different indexes": (
        "tests/data/test_from_predictions.py::test_non_numeric_and_misaligned_input",
        lambda y, yp, s: uqviz.from_predictions(y, yp, std=s),
        lambda: (
            pd.Series([1.0, 2.0], index=[0, 1]),
            pd.Series([1.0, 2.0], index=[1, 0]),
            [1.0, 1.0],
        ),
        ValueError,
        "different indexes",
    ),
    "from_predictions: empty": (
        "tests/data/test_from_predictions.py::test_non_numeric_and_misaligned_input",
        lambda y, yp, s: uqviz.from_predictions(y, yp, std=s),
        lambda: ([], [], []),
        ValueError,
        "empty input",
    ),
    "from_predictions: quantiles, NaN at the median in row 2": (
        "tests/predictive/test_forecast.py::test_drop_invalid_keeps_the_forecast_of_the_rows_kept",
        lambda y, yp, q: uqviz.from_predictions(y, yp, quantiles=q),
        _quantiles_nan_at_the_median,
        ValueError,
        r"uE: 1 row with NaN \(row 2\)",
    ),
    "read_csv: a cell beyond float64": (
        "tests/data/test_data.py::test_read_csv_names_the_cell_beyond_float64",
        uqviz.read_csv,
        _csv_beyond_float64,
        ValueError,
        r"E: 1 row with numbers beyond the range of float64 .*'1e400'.*\(row 50\)",
    ),
    "group_coverage: a string feature": (
        "tests/groups/test_group_coverage.py::test_errors",
        lambda d: uqviz.group_coverage(
            d, features=("y", "name"), n_mc=20, n_perm=20, n_directions=10, progress=False
        ),
        _string_feature,
        ValueError,
        "not numeric",
    ),
    **{
        f"from_arrays: ragged E {errors}": (
            "tests/data/test_data.py::test_ragged_input_is_named",
            uqviz.from_arrays,
            lambda errors=errors: (errors, [1.0, 1.0]),
            ValueError,
            "E: expected a 1-D array of numbers, got a ragged",
        )
        for errors in ([[1.0, 2.0], [3.0]], [1.0, [2.0, 3.0]])
    },
    "from_arrays: masked E, 2 rows": (
        "tests/data/test_data.py::test_a_masked_array_is_refused_with_its_masked_count",
        uqviz.from_arrays,
        lambda: (_MASKED_E.copy(), np.ones(4)),
        ValueError,
        "E: a masked array with 2 rows masked",
    ),
    "from_arrays: masked uE, 1 row": (
        "tests/data/test_data.py::test_a_masked_array_is_refused_with_its_masked_count",
        uqviz.from_arrays,
        lambda: (_MASKED_E.data.copy(), _MASKED_UE.copy()),
        ValueError,
        "uE: a masked array with 1 row masked",
    ),
}


@pytest.mark.parametrize("case", BAD_INPUT_CASES)
def test_folded_bad_input_case(case, tmp_path):
    _origin, func, inputs, exc, message = BAD_INPUT_CASES[case]
    args = inputs(tmp_path) if "tmp_path" in inspect.signature(inputs).parameters else inputs()
    before = [_snapshot(a) for a in args]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(exc, match=message):
            func(*args)
    assert all(_same(a, b) for a, b in zip(args, before)), f"{case}: an input was mutated"


def test_folded_cases_name_an_existing_origin():
    """Each origin of the table is a test file of the suite (the mapping stays current)."""
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    files = {o.split("::")[0] for o, *_ in BAD_INPUT_CASES.values()}
    missing = sorted(f for f in files if not os.path.isfile(os.path.join(repo, f)))
    assert not missing, f"origins that are not test files: {missing}"


# ----------------------------------------------------------------------------------------
# bad multivariate arrays (issue 38, item 6): each case of
# tests/quantile/test_quantile_contract.py (test_non_finite_values_name_the_argument_and_
# count_points, test_boolean_inputs_are_refused: one function per case there, kept) on
# every function taking (y, mean, scale): qce, nees, nees_test
# ----------------------------------------------------------------------------------------


def _mv_bad_cases():
    rng = np.random.default_rng(0)
    n = 30
    mean = rng.normal(size=(n, 2))
    std = rng.uniform(0.5, 2.0, size=(n, 2))
    y = mean + 1.2 * std * rng.standard_normal((n, 2))

    def edit(a, index, value):
        a = a.copy()
        a[index] = value
        return a

    return {
        "NaN mean, 2 points": (
            (y, edit(mean, ([3, 7, 7], [0, 0, 1]), np.nan), std),
            ValueError,
            r"mean: NaN or infinite values in 2 point\(s\), first at \[3, 7\]",
        ),
        "inf scale, 1 point": (
            (y, mean, edit(std, (5, 1), np.inf)),
            ValueError,
            r"scale: NaN or infinite values in 1 point\(s\)",
        ),
        "-inf y, 12 points": (
            (edit(y, (slice(0, 12), 0), -np.inf), mean, std),
            ValueError,
            r"y: NaN or infinite values in 12 point\(s\), "
            r"first at \[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, \.\.\.\]",
        ),
        "std = 0, 2 points": (
            (y, mean, edit(std, ([1, 2], 0), 0.0)),
            ValueError,
            r"scale: standard deviations must be > 0; 2 point",
        ),
        "boolean y": (
            (np.array([True, False, True, True]), 0.0, np.ones(4)),
            TypeError,
            r"y: boolean values .* not numbers; 4 row\(s\)",
        ),
    }


MV_BAD_CASES = _mv_bad_cases()
MV_READERS = {
    "qce": lambda *a: uqviz.qce(*a, levels=(0.2, 0.5, 0.8, 0.9), n_boot=0),
    "nees": uqviz.nees,
    "nees_test": uqviz.nees_test,
}


@pytest.mark.parametrize("reader", MV_READERS)
@pytest.mark.parametrize("case", MV_BAD_CASES)
def test_every_multivariate_function_refuses_bad_arrays(case, reader):
    args, exc, message = MV_BAD_CASES[case]
    before = [_snapshot(a) for a in args]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(exc, match=message):
            MV_READERS[reader](*args)
    assert all(_same(a, b) for a, b in zip(args, before)), f"{reader}: an input was mutated"
