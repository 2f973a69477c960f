"""A statistic registered by a user reaches the analyses docs/architecture.md lists for its kind.

``uqviz.statistics.register_statistic`` adds it, ``unregister_statistic`` removes it (every test
here leaves the registry as it found it). The numbers are checked against numpy by hand:

- RZMS = sqrt(<Z^2>) (kind "moments", reference 1): ``validate_average`` (estimate, the paired
  replicates equal sqrt of those of ZMS, the percentile interval from them),
  ``local_calibration`` and ``ordering_study`` (per-bin values on equal-count bins of uE),
  the report's average table;
- MAZ = <|Z|> (kind "generic", reference sqrt(2/pi), the value for normal z-scores):
  ``validate_average``; refused by ``local_calibration`` with the reason;
- ZMSD = mean over bins of |ZMS_b - 1| (kind "binned"): ``binned_errors``.
"""

from __future__ import annotations

import contextlib
import warnings

import numpy as np
import pytest

import uqviz
from uqviz.statistics import (
    Statistic,
    get_statistic,
    list_statistics,
    register_statistic,
    unregister_statistic,
)

RZMS = Statistic(
    "RZMS",
    lambda m, n: np.sqrt(m["Z2"]),
    "moments",
    ("Z2",),
    1.0,
    "root mean squared z-score sqrt(<Z^2>)",
)
MAZ = Statistic(
    "MAZ",
    lambda e, u: np.mean(np.abs(e / u), axis=-1),
    "generic",
    (),
    float(np.sqrt(2 / np.pi)),
    "mean absolute z-score <|Z|>",
)
ZMSD = Statistic(
    "ZMSD",
    lambda m: np.mean(np.abs(m["Z2"] - 1.0), axis=-1),
    "binned",
    ("Z2",),
    None,
    "mean over bins of |ZMS_b - 1|",
)


@contextlib.contextmanager
def registered(*stats):
    for s in stats:
        register_statistic(s)
    try:
        yield
    finally:
        for s in stats:
            unregister_statistic(s.name)


@pytest.fixture(scope="module")
def ds():
    return uqviz.synthetic.nig(1200, nu=8, rng=3)


def _z(ds):
    return ds["E"].values / ds["uE"].values


def _equal_count_bins_of_uE(ds, n_bins):
    order = np.argsort(ds["uE"].values, kind="stable")
    return np.array_split(_z(ds)[order], n_bins)


def test_register_and_unregister_leave_the_registry_as_it_was():
    before = list_statistics()
    with registered(RZMS, MAZ):
        assert list_statistics() == before + ["RZMS", "MAZ"]
        assert get_statistic("RZMS") is RZMS
    assert list_statistics() == before
    with pytest.raises(ValueError, match="unknown statistic 'RZMS'"):
        get_statistic("RZMS")
    with pytest.raises(ValueError, match="'RZMS' is not registered"):
        unregister_statistic("RZMS")
    with pytest.raises(ValueError, match="built into uqviz"):
        unregister_statistic("ZMS")
    with pytest.raises(TypeError, match="name must be the name"):
        unregister_statistic(RZMS)
    assert "ZMS" in list_statistics()


def test_validate_average_takes_a_registered_moment_statistic(ds):
    z = _z(ds)
    with registered(RZMS):
        res = uqviz.validate_average(
            ds,
            statistics=("ZMS", "RZMS"),
            n_boot=400,
            rng=1,
            method="percentile",
            return_replicates=True,
        )
    r = res.sel(statistic="RZMS")
    np.testing.assert_allclose(float(r["estimate"]), np.sqrt(np.mean(z**2)), rtol=1e-12)
    assert float(r["reference"]) == 1.0
    # the bootstrap is paired: the same resamples give RZMS = sqrt(ZMS) replicate by replicate
    reps = res["replicates"].sel(statistic="RZMS").values
    np.testing.assert_allclose(
        reps, np.sqrt(res["replicates"].sel(statistic="ZMS").values), rtol=1e-12
    )
    lo, hi = np.quantile(reps, [0.025, 0.975])  # the percentile interval, linear interpolation
    np.testing.assert_allclose([float(r["ci_lower"]), float(r["ci_upper"])], [lo, hi], rtol=1e-12)
    assert bool(r["valid"]) == bool(lo <= 1.0 <= hi)


def test_validate_average_takes_a_registered_generic_statistic(ds):
    z = _z(ds)
    with registered(MAZ):
        res = uqviz.validate_average(
            ds, statistics=("MAZ",), n_boot=300, rng=2, method="percentile", return_replicates=True
        )
    r = res.sel(statistic="MAZ")
    np.testing.assert_allclose(float(r["estimate"]), np.mean(np.abs(z)), rtol=1e-12)
    np.testing.assert_allclose(float(r["reference"]), np.sqrt(2 / np.pi), rtol=1e-15)
    lo, hi = np.quantile(res["replicates"].sel(statistic="MAZ").values, [0.025, 0.975])
    np.testing.assert_allclose([float(r["ci_lower"]), float(r["ci_upper"])], [lo, hi], rtol=1e-12)
    # a replicate is the statistic of a resample: within the range of the |z| means possible
    assert np.abs(z).min() <= lo <= hi <= np.abs(z).max()


def test_local_calibration_takes_a_registered_moment_statistic(ds):
    n_bins = 6
    with registered(RZMS), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # bins of 200 points: no warning expected, none matters
        res = uqviz.local_calibration(
            ds, statistic="RZMS", n_bins=n_bins, n_boot=400, rng=4, method="percentile", n_mc=0
        )
        zms = uqviz.local_calibration(
            ds, statistic="ZMS", n_bins=n_bins, n_boot=400, rng=4, method="percentile", n_mc=0
        )
    hand = [np.sqrt(np.mean(b**2)) for b in _equal_count_bins_of_uE(ds, n_bins)]
    np.testing.assert_allclose(res["estimate"].values, hand, rtol=1e-12)
    assert res.attrs["statistic"] == "RZMS" and float(res["reference"]) == 1.0
    # the same rng gives the same resamples of each bin; the percentile interval of a monotone
    # function is the function of the interval, up to the interpolation between two replicates
    np.testing.assert_allclose(res["ci_lower"].values, np.sqrt(zms["ci_lower"].values), rtol=1e-4)
    np.testing.assert_allclose(res["ci_upper"].values, np.sqrt(zms["ci_upper"].values), rtol=1e-4)
    inside = (res["ci_lower"] <= 1.0) & (1.0 <= res["ci_upper"])
    assert (res["valid"] == inside).all()


def test_ordering_study_takes_a_registered_moment_statistic(ds):
    ds = ds.assign(Xr=("point", np.arange(ds.sizes["point"]) % 7 * 1.0))  # 7 tied values
    with registered(RZMS), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = uqviz.ordering_study(
            ds,
            statistic="RZMS",
            conditioning="Xr",
            n_bins=4,
            n_orderings=3,
            n_boot=100,
            rng=0,
            progress=False,
        )
    order = np.argsort(ds["Xr"].values, kind="stable")  # data order within ties
    hand = [np.sqrt(np.mean(b**2)) for b in np.array_split(_z(ds)[order], 4)]
    np.testing.assert_allclose(res["estimate_data"].values, hand, rtol=1e-12)
    assert res.attrs["statistic"] == "RZMS"


def test_local_calibration_takes_a_generic_statistic_with_a_reference(ds):
    # generic statistics with a numeric reference are bootstrapped bin by bin (issue 24: RR)
    with registered(MAZ), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = uqviz.local_calibration(ds, statistic="MAZ", n_bins=4, n_boot=200, n_mc=0, rng=0)
    order = np.argsort(ds["uE"].values, kind="stable")
    hand = [np.mean(np.abs(b)) for b in np.array_split(_z(ds)[order], 4)]
    np.testing.assert_allclose(res["estimate"].values, hand, rtol=1e-12)
    assert float(res["reference"]) == pytest.approx(np.sqrt(2 / np.pi))


def test_local_analyses_refuse_other_kinds_with_the_reason(ds):
    with registered(MAZ, ZMSD):
        with pytest.raises(
            ValueError,
            match="statistic must be a registered moment statistic.*'MAZ': its kind is 'generic'",
        ):
            uqviz.ordering_study(ds, statistic="MAZ", conditioning="uE")
        with pytest.raises(ValueError, match="'ZMSD': its kind is 'binned'"):
            uqviz.local_calibration(ds, statistic="ZMSD")
    with pytest.raises(ValueError, match="'MSE': it has no predefined reference"):
        uqviz.local_calibration(ds, statistic="MSE")
    with pytest.raises(ValueError, match="'NLL': its reference NLL_ref is computed"):
        uqviz.ordering_study(ds, statistic="NLL", conditioning="uE")
    with pytest.raises(ValueError, match="'PICP' is a binomial proportion"):
        uqviz.ordering_study(ds, statistic="PICP", conditioning="uE")
    with pytest.raises(TypeError, match="statistic must be the name"):
        uqviz.local_calibration(ds, statistic=("ZMS",))


def test_binned_errors_takes_a_registered_binned_statistic(ds):
    n_bins = 8
    with registered(ZMSD):
        res = uqviz.binned_errors(ds, statistics=("ZMSD", "ZMSE"), n_bins=n_bins)
    bins = _equal_count_bins_of_uE(ds, n_bins)
    zms_b = np.array([np.mean(b**2) for b in bins])
    np.testing.assert_allclose(
        res["estimate"].values,
        [np.mean(np.abs(zms_b - 1)), np.mean(np.abs(np.log(zms_b)))],
        rtol=1e-12,
    )
    with pytest.raises(ValueError, match="unknown binned statistic"):
        uqviz.binned_errors(ds, statistics=("ZMSD",))  # unregistered again


def test_report_takes_registered_statistics():
    rng = np.random.default_rng(5)
    u = rng.uniform(0.5, 2.0, 400)
    data = uqviz.from_arrays(u * rng.standard_normal(400), u, name="plain")  # no feature
    z = data["E"].values / data["uE"].values
    with registered(RZMS), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rep = uqviz.report(
            data,
            statistics=("ZMS", "RZMS"),
            n_boot=200,
            n_mc=20,
            figures=False,
            remedy=False,
            progress=False,
        )
    avg = rep.numbers["average"]
    assert avg["coords"]["statistic"] == ["ZMS", "RZMS"]
    est = avg["data"]["estimate"]["values"]
    np.testing.assert_allclose(est, [np.mean(z**2), np.sqrt(np.mean(z**2))], rtol=1e-12)
    assert rep.numbers["verdicts"]["average"]["statistic"] == "ZMS"
    with pytest.raises(ValueError, match="statistics must include 'ZMS'"):
        uqviz.report(data, statistics=("RCE",))
    with pytest.raises(ValueError, match="binned statistics"):
        uqviz.report(data, statistics=("ZMS", "ENCE"))


def test_register_statistic_refuses_what_is_not_a_statistic():
    """issue 38, item 9: ``register_statistic(3)`` said "'int' object has no attribute 'kind'"."""
    from uqviz.statistics import register_statistic

    with pytest.raises(TypeError, match=r"must be a uqviz.statistics.Statistic .*got 3 \(int\)"):
        register_statistic(3)
