"""LZV (local ZVar), LZISD (local ZISD) and LRR (local RR): ErrViewLib's plotLZV, plotLZISD and
plotLRR through local_calibration (Pernot (2023); Pernot (2022a) for LZV)."""

import warnings

import numpy as np
import pytest
from scipy import stats as sps
from scipy.stats import mstats

import uqviz
from uqviz.conditional.local import check_local_statistic, local_statistics
from uqviz.statistics import get_statistic, point_estimate, reference_value

Q95 = sps.norm.ppf(0.975)


def _small(seed=3, m=120):
    rng = np.random.default_rng(seed)
    u = rng.uniform(0.5, 2.0, m)
    e = u * rng.standard_normal(m)
    return e, u


def _bins(e, u, n_bins):
    order = np.argsort(u, kind="stable")
    return [(e[order][k], u[order][k]) for k in np.array_split(np.arange(e.size), n_bins)]


def _local(ds, statistic, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return uqviz.local_calibration(ds, statistic=statistic, **kw)


def test_registered_with_references():
    assert get_statistic("ZISD").kind == "moments"
    assert get_statistic("ZISD").reference == 1.0
    assert get_statistic("RR").kind == "generic"
    assert get_statistic("RR").reference == 1.0
    assert {"ZVar", "ZISD", "RR"} <= set(local_statistics())
    assert "RR" not in local_statistics(generic=False)
    assert reference_value("ZISD", np.ones(3), np.ones(3)) == 1.0


def test_point_values_equal_numpy():
    e, u = _small()
    z = e / u
    assert point_estimate("ZISD", e, u) == pytest.approx(1.0 / np.std(z, ddof=1), rel=1e-12)
    lo, hi = mstats.hdquantiles(e, prob=[0.025, 0.975])
    rr = 2.0 * Q95 * np.sqrt(np.mean(u**2)) / (hi - lo)
    assert point_estimate("RR", e, u) == pytest.approx(rr, rel=1e-10)


def test_constant_uE_range_ratio_hand():
    # E = uE * z with uE = 1: RR = 2 q95 / (HD range of E); HD weights from scipy
    e = np.array([-2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0])
    lo, hi = mstats.hdquantiles(e, prob=[0.025, 0.975])
    assert point_estimate("RR", e, np.ones(7)) == pytest.approx(2 * Q95 / (hi - lo), rel=1e-10)


@pytest.mark.parametrize("statistic", ["ZVar", "ZISD", "RR"])
def test_per_bin_values_equal_numpy(statistic):
    e, u = _small()
    res = _local(uqviz.from_arrays(e, u), statistic, n_bins=4, n_boot=200, n_mc=0, rng=0)
    want = []
    for eb, ub in _bins(e, u, 4):
        z = eb / ub
        if statistic == "ZVar":
            want.append(np.var(z, ddof=1))
        elif statistic == "ZISD":
            want.append(1.0 / np.std(z, ddof=1))
        else:
            lo, hi = mstats.hdquantiles(eb, prob=[0.025, 0.975])
            want.append(2.0 * Q95 * np.sqrt(np.mean(ub**2)) / (hi - lo))
    np.testing.assert_allclose(res["estimate"].values, want, rtol=1e-10)
    assert float(res["reference"]) == 1.0
    assert np.all(res["ci_lower"].values < res["estimate"].values)
    assert np.all(res["estimate"].values < res["ci_upper"].values)


@pytest.mark.parametrize("statistic", ["ZISD", "RR"])
def test_intervals_reproduce_with_the_same_rng(statistic):
    ds = uqviz.synthetic.nig(600, nu=8, rng=1)
    a = _local(ds, statistic, n_bins=4, n_boot=300, n_mc=0, rng=7)
    b = _local(ds, statistic, n_bins=4, n_boot=300, n_mc=0, rng=7)
    c = _local(ds, statistic, n_bins=4, n_boot=300, n_mc=0, rng=8)
    np.testing.assert_array_equal(a["ci_lower"].values, b["ci_lower"].values)
    np.testing.assert_array_equal(a["ci_upper"].values, b["ci_upper"].values)
    assert not np.array_equal(a["ci_lower"].values, c["ci_lower"].values)
    np.testing.assert_array_equal(a["estimate"].values, c["estimate"].values)


def test_range_ratio_bootstrap_matches_resampling_by_hand():
    # percentile interval of one bin = quantiles of RR on the same index resamples
    from uqviz._array.bootstrap import bootstrap_generic_groups

    e, u = _small(m=50)
    func = get_statistic("RR").func
    est, lo, hi = bootstrap_generic_groups(
        func, e, u, np.array([0]), np.array([50]), n_boot=400, seed=11, method="percentile"
    )
    idx = np.random.default_rng(11).integers(0, 50, size=(1, 400, 50))[0]
    reps = np.array([func(e[i], u[i]) for i in idx])
    assert est[0] == pytest.approx(func(e, u))
    assert lo[0] == pytest.approx(np.quantile(reps, 0.025), rel=1e-2)
    assert hi[0] == pytest.approx(np.quantile(reps, 0.975), rel=1e-2)


@pytest.mark.parametrize("statistic", ["ZVar", "ZISD", "RR"])
def test_calibrated_nig_passes_fraction_valid(statistic):
    ds = uqviz.synthetic.nig(2000, nu=8, rng=4)
    res = _local(ds, statistic, n_bins=10, n_boot=300, n_mc=200, rng=2)
    fv = uqviz.fraction_valid(res)
    assert bool(fv["valid"])
    assert int(fv["n_valid"]) >= 8


@pytest.mark.parametrize("statistic", ["ZVar", "ZISD", "RR"])
def test_uE_too_small_on_top_bins_fails_there(statistic):
    rng = np.random.default_rng(5)
    m = 2000
    u = np.sqrt(rng.chisquare(4, m) / 4)
    top = u >= np.quantile(u, 0.7)
    # errors drawn with SD 2 uE on the top 3 of 10 bins of uE: there the given uE is half the
    # true one (the order of uE, hence the bins, is unchanged)
    e = np.where(top, 2.0, 1.0) * u * rng.standard_normal(m)
    res = _local(uqviz.from_arrays(e, u), statistic, n_bins=10, n_boot=300, n_mc=200, rng=2)
    valid = res["valid"].values
    assert not valid[-3:].any()
    assert valid[:7].sum() >= 5  # RR: null coverage about 0.82 in 200-point bins
    est = res["estimate"].values[-3:]
    assert np.all(est > 1.0) if statistic == "ZVar" else np.all(est < 1.0)
    assert not bool(uqviz.fraction_valid(res)["valid"])


def test_ordering_study_refuses_generic():
    with pytest.raises(ValueError, match="its kind is 'generic'"):
        check_local_statistic("RR")
    assert check_local_statistic("RR", generic=True) == "RR"
    assert check_local_statistic("ZISD") == "ZISD"
