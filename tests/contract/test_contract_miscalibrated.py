"""Verdicts on clearly miscalibrated data (docs/conventions.md, issue 22, item 4).

``tests/contract/test_contract.py`` checks on calibrated data that ``valid`` is decided by the
interval. Here every public function whose result holds ``valid`` or ``verdict`` is called on
data miscalibrated beyond doubt, and must reject; where the contract makes ``p_value`` the
p-value of the same test, ``p_value <= 1 - ci`` exactly when ``valid`` is False (or the
verdict is "fails"), on calibrated and miscalibrated data alike.

The data (3000 points, uE log-normal, E = sigma * N(0, 1)):

- ``average``: the reported uE is half the errors' sd (ZMS = 4, RCE = -1): average calibration
  fails, and so does every interval of E.
- ``consistency``: sigma = uE f(uE) with f = sqrt(uE / median(uE)), scaled so that
  <f^2> = 1: the average holds (ZMS = 1) while the small uE are too large and the large ones
  too small (f from about 0.6 to 1.7 over the central 95 % of uE).
- ``flat``: f = (uE / median(uE))^(-1/2), scaled the same way: the errors grow as sqrt(uE),
  so the uE are too spread out for their errors and their rank correlation with |E| (CC)
  falls below that of calibrated sets.
"""

from __future__ import annotations

import functools
import warnings

import numpy as np
import pytest

from tests.contract import test_contract as contract
import uqviz

CI = 0.95
M = 3000


@functools.lru_cache(maxsize=None)
def miscalibrated(kind, seed=0):
    rng = np.random.default_rng(seed)
    u = 0.5 * np.exp(0.5 * rng.standard_normal(M))
    eps = rng.standard_normal(M)
    x = rng.uniform(0.0, 1.0, M)
    if kind == "average":
        e, u = u * eps, 0.5 * u
    elif kind in ("consistency", "flat"):
        f = (u / np.median(u)) ** (0.5 if kind == "consistency" else -0.5)
        e = u * f / np.sqrt(np.mean(f * f)) * eps
    elif kind == "calibrated":
        e = u * eps
    else:
        raise ValueError(kind)
    return uqviz.from_arrays(e, u, features={"x": x}, name=kind)


def test_the_miscalibrated_sets_are_what_they_claim():
    def zms(ds):
        return float(np.mean((ds["E"] / ds["uE"]) ** 2))

    assert zms(miscalibrated("average")) == pytest.approx(4.0, rel=0.08)
    assert zms(miscalibrated("consistency")) == pytest.approx(1.0, rel=0.08)
    assert zms(miscalibrated("flat")) == pytest.approx(1.0, rel=0.08)
    cons = miscalibrated("consistency")
    small = cons["uE"] < np.quantile(cons["uE"], 0.2)
    large = cons["uE"] > np.quantile(cons["uE"], 0.8)
    z2 = (cons["E"] / cons["uE"]) ** 2
    assert float(z2[small].mean()) < 0.75 and float(z2[large].mean()) > 1.3


def _quiet(f, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return f(*args, **kwargs)


def _mv(scale_factor):
    rng = np.random.default_rng(5)
    scale = np.exp(0.2 * rng.standard_normal((1000, 2)))
    mean = rng.standard_normal((1000, 2))
    y = mean + scale * rng.standard_normal((1000, 2))
    return y, mean, scale_factor * scale


# name -> (call on a kind of data, the kinds it must reject, is p_value the p-value of valid?)
# "exact": p_value <= 1 - ci exactly when valid is False; "verdict": exactly when the verdict
# is "fails" (unless "unreliable"); "rejects": both reject here (a one-sided p-value, or one
# test on f_v per local result)
CALLS = {
    "validate_average": (
        lambda ds: uqviz.validate_average(
            ds, statistics=("ZMS", "RCE", "NLL", "ZM"), n_boot=500, rng=1
        ),
        ("average",),
        "exact",
    ),
    "local_calibration": (
        lambda ds: uqviz.local_calibration(ds, n_bins=10, n_boot=500, n_mc=200, rng=1),
        ("consistency",),
        None,
    ),
    "fraction_valid": (
        lambda ds: uqviz.fraction_valid(
            uqviz.local_calibration(ds, n_bins=10, n_boot=500, n_mc=200, rng=1)
        ),
        ("consistency",),
        "rejects",
    ),
    "local_interval_coverage": (
        lambda ds: uqviz.local_interval_coverage(ds, n_bins=10),
        ("consistency",),
        None,
    ),
    "reliability": (
        lambda ds: uqviz.reliability(ds, n_bins=10, n_boot=500, rng=1),
        ("consistency",),
        None,
    ),
    "ordering_study": (
        lambda ds: uqviz.ordering_study(
            ds, conditioning="uE", n_bins=10, n_orderings=3, n_boot=200, rng=1, progress=False
        ),
        ("consistency",),
        None,
    ),
    "validate_simulated": (
        lambda ds: uqviz.validate_simulated(
            ds,
            statistic="ZMSE",
            scheme=("Sim", "Sim2"),
            n_mc=200,
            n_boot=500,
            rng=1,
            progress=False,
        ),
        ("consistency",),
        "rejects",
    ),
    "validate_simulated[CC]": (
        lambda ds: uqviz.validate_simulated(
            ds, statistic="CC", scheme=("Sim", "Sim2"), n_mc=200, n_boot=500, rng=1, progress=False
        ),
        ("flat",),
        "rejects",
    ),
    "validate_with_references": (
        lambda ds: uqviz.validate_with_references(
            ds, statistic="ENCE", n_mc=200, n_boot=500, rng=1, progress=False
        ),
        ("consistency",),
        "verdict",
    ),
    "validate[ZMS]": (
        lambda ds: uqviz.validate_with_references(ds, statistic="ZMS", n_boot=500, rng=1),
        ("average",),
        "verdict",
    ),
    "validate[CC]": (
        lambda ds: uqviz.validate_with_references(
            ds, statistic="CC", n_mc=200, n_boot=500, rng=1, progress=False
        ),
        ("flat",),
        "verdict",
    ),
    "confidence_curve": (
        lambda ds: uqviz.confidence_curve(ds, n_mc=200, n_boot=0, rng=1),
        ("average", "consistency"),
        "rejects",
    ),
    "interval_coverage": (lambda ds: uqviz.interval_coverage(ds), ("average",), None),
    "adversarial_validation": (
        lambda ds: uqviz.adversarial_validation(
            ds, sizes=(1000, 100), n_groups=50, n_boot=200, n_mc=10, rng=1, progress=False
        ),
        ("average",),
        None,
    ),
    # uE as a feature: its bins, its slab and the widths all see the coverage change with uE
    "group_coverage": (
        lambda ds: uqviz.group_coverage(
            ds.assign(u=ds["uE"].assign_attrs(role="feature")),
            features=("u",),
            n_mc=100,
            n_perm=200,
            n_directions=4,
            rng=1,
            progress=False,
        ),
        ("consistency",),
        "verdict",
    ),
    "validate_pit": (lambda ds: uqviz.validate_pit(ds, rng=1), ("average",), None),
    "local_pit": (
        lambda ds: uqviz.local_pit(ds, n_bins=10, n_band=500, rng=1),
        ("consistency",),
        None,
    ),
    "extrapolate": (lambda ds: uqviz.extrapolate(ds, n_boot=100, rng=1), ("consistency",), None),
    "nees_test": (
        lambda ds: uqviz.nees_test(*_mv(0.5 if ds.attrs["name"] == "average" else 1.0)),
        ("average",),
        "exact",
    ),
}


@functools.lru_cache(maxsize=None)
def _run(name, kind):
    return _quiet(CALLS[name][0], miscalibrated(kind))


def test_every_function_with_a_verdict_is_tried_on_miscalibrated_data():
    """Every public result holding ``valid`` or ``verdict`` (the calls of test_contract)."""
    with_verdict = set()
    for rid in contract.RESULT_IDS:
        _, res, _, name = contract._result(rid)
        if any({"valid", "verdict"} & set(ds.data_vars) for ds in contract._as_datasets(res)):
            with_verdict.add(name.split("[")[0])
    missing = with_verdict - {n.split("[")[0] for n in CALLS}
    assert not missing, f"add these to CALLS with a miscalibrated set they must reject: {missing}"


def _rejected(name, res):
    """The share of the result's verdicts that reject (1.0: all)."""
    if "verdict" in res and (name.startswith("validate") or name == "adversarial_validation"):
        words = res["verdict"]
        if name.startswith("validate_average"):
            words = words.drop_sel(statistic="ZM")  # ZM is the mean: unchanged
        return float(np.mean(np.asarray(words.values) == "fails"))
    valid = res["valid"].values.astype(bool)
    if name.startswith("validate_average"):
        valid = res["valid"].drop_sel(statistic="ZM").values  # ZM is the mean: unchanged
    return 1.0 - float(np.mean(valid))


@pytest.mark.parametrize("name", sorted(CALLS))
def test_verdicts_reject_miscalibrated_data(name):
    _, kinds, _ = CALLS[name]
    for kind in kinds:
        res = _run(name, kind)
        share = _rejected(name, res)
        per_bin = "bin" in res["valid"].dims if "valid" in res else False
        if per_bin:  # one verdict per bin: most bins, at least the extreme ones, fail
            assert share >= 0.6, f"{name} on {kind} data: only {share:.0%} of bins rejected"
            valid = res["valid"].values.astype(bool)
            assert not valid[..., 0].any() and not valid[..., -1].any(), (
                f"{name} on {kind} data: an extreme bin is valid"
            )
        else:
            assert share == 1.0, f"{name} on {kind} data: {share:.0%} of the verdicts reject"
        if "reliable" in res and name != "validate_average":  # RCE's screen includes uE^2,
            # heavy-tailed for log-normal uE: its verdict is "unreliable", rightly
            assert bool(np.all(res["reliable"])), (
                f"{name} on {kind} data: unreliable, where the data are clearly miscalibrated"
            )


@pytest.mark.parametrize(
    "name,kind",
    [
        (n, k)
        for n in sorted(CALLS)
        if CALLS[n][2]
        for k in ("calibrated", "miscalibrated")
        if CALLS[n][2] != "rejects" or k == "miscalibrated"
    ],
)
def test_p_value_says_what_the_verdict_says(name, kind):
    _, kinds, rule = CALLS[name]
    res = _run(name, "calibrated" if kind == "calibrated" else kinds[0])
    p = np.asarray(res["p_value"].values, dtype=float)
    rejects_p = p <= 1 - CI
    if rule == "verdict":
        verdict = np.asarray(res["verdict"].values)
        sure = verdict != "unreliable"
        np.testing.assert_array_equal(
            (verdict == "fails")[sure],
            rejects_p[sure],
            err_msg=f"{name}: fails exactly when p_value <= 1 - ci",
        )
    elif rule == "exact":
        valid = np.asarray(res["valid"].values, dtype=bool)
        np.testing.assert_array_equal(
            ~valid, rejects_p, err_msg=f"{name}: p_value <= 1 - ci exactly when valid is False"
        )
    else:  # "rejects": both reject the miscalibrated data
        assert rejects_p.all(), f"{name}: p_value {p} does not reject"
        assert not np.asarray(res["valid"].values, dtype=bool).any()
