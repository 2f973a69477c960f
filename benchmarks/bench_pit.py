"""PIT with its uniformity tests on 10^6 points: uqviz vs scipy, in the same run.

Target (issue 23): PIT with both tests (Kolmogorov-Smirnov and Cramér-von Mises) on 10^6
points in <= 0.5 s. Times (median of ``--repeat`` calls after a warm-up) of

* uqviz: ``uqviz.pit`` alone; the PIT, one sort and the two tests (the kernel
  ``uqviz._array.pit.uniformity``: what scipy's pair computes); and ``uqviz.validate_pit``
  (PIT, one sort, KS and CvM, the histogram with its binomial band, the moments, and the
  simultaneous ECDF band simulated afresh at every call: ``rng=None``, so its cache never
  hits) of a normal forecast ``uE * N(0, 1)``;
* the reference, scipy in this process on the same data: ``scipy.stats.norm.cdf(E / uE)``
  then ``scipy.stats.kstest(pit, "uniform")`` and ``scipy.stats.cramervonmises(pit,
  "uniform")`` (each sorts the values again);
* for information (no target): ``validate_pit`` of a forecast given as 23 quantiles (the
  levels of the weighted interval score: 0.01, 0.025, 0.05, 0.1, ..., 0.9, 0.95, 0.975, 0.99)
  on 10^6 points, and of an ensemble of 100 members on 10^5 points. The piecewise-linear CDF
  between normal quantiles is not the normal CDF, so 10^6 PIT values of the quantile forecast
  are detectably non-uniform (KS D about 5e-3): scipy's exact KS p-value ``kstwo.sf(D, n)``,
  which uqviz keeps so that its p-value equals ``kstest``'s, then takes most of the time
  (printed beside).

Prints one row per task (uqviz time, scipy time, their ratio) and the largest difference of
the KS and CvM statistics and p-values from scipy's (equal to rounding: uqviz's KS p-value
is scipy's exact ``kstwo.sf(D, n)``, its CvM comes from ``scipy.stats.cramervonmises`` given
the sorted values and the identity CDF, so no value is re-derived). PASS/FAIL against the
target.

Usage::

    python benchmarks/bench_pit.py              # n = 10^6
    python benchmarks/bench_pit.py --n 100000 --repeat 3
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np
from scipy import stats

sys.path.insert(0, os.path.dirname(__file__))
from _common import median_time  # noqa: E402

import uqviz  # noqa: E402
from uqviz._array import pit as pit_kernels  # noqa: E402

TARGET = 0.5
WIS_LEVELS = (
    0.01,
    0.025,
    0.05,
    0.1,
    0.15,
    0.2,
    0.25,
    0.3,
    0.35,
    0.4,
    0.45,
    0.5,
    0.55,
    0.6,
    0.65,
    0.7,
    0.75,
    0.8,
    0.85,
    0.9,
    0.95,
    0.975,
    0.99,
)


def normal_set(n, rng):
    u = np.exp(0.3 * rng.standard_normal(n))
    return uqviz.from_arrays(u * rng.standard_normal(n), u)


def scipy_reference(e, u):
    pit = stats.norm.cdf(e / u)
    return stats.kstest(pit, "uniform"), stats.cramervonmises(pit, "uniform")


def quantile_set(n, rng):
    yp = rng.standard_normal(n)
    s = np.exp(0.3 * rng.standard_normal(n))
    y = yp + s * rng.standard_normal(n)
    q = {p: yp + s * stats.norm.ppf(p) for p in WIS_LEVELS}
    return uqviz.from_predictions(y, yp, quantiles=q)


def ensemble_set(n, m, rng):
    mu = rng.standard_normal((n, 1))
    return uqviz.from_predictions(
        mu[:, 0] + rng.standard_normal(n), None, samples=mu + rng.standard_normal((n, m))
    )


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)
    rng = np.random.default_rng(0)
    ds = normal_set(args.n, rng)
    e, u = ds["E"].values, ds["uE"].values

    t_pit = median_time(lambda: uqviz.pit(ds), repeat=args.repeat)
    t_tests = median_time(
        lambda: pit_kernels.uniformity(np.sort(uqviz.pit(ds)["PIT"].values)), repeat=args.repeat
    )
    t_val = median_time(lambda: uqviz.validate_pit(ds), repeat=args.repeat)
    t_ref = median_time(lambda: scipy_reference(e, u), repeat=args.repeat)

    res = uqviz.validate_pit(ds, rng=0)
    ks, cvm = scipy_reference(e, u)
    diffs = {
        "ks_statistic": abs(float(res["ks_statistic"]) - ks.statistic),
        "ks_p_value": abs(float(res["ks_p_value"]) - ks.pvalue),
        "cvm_statistic": abs(float(res["cvm_statistic"]) - cvm.statistic),
        "cvm_p_value": abs(float(res["cvm_p_value"]) - cvm.pvalue),
    }

    print(f"PIT and its uniformity on n = {args.n:,} points (median of {args.repeat})")
    print(f"{'task':58s} {'uqviz s':>9s} {'scipy s':>9s} {'ratio':>7s}")
    print(f"{'pit (normal forecast)':58s} {t_pit:9.3f} {'':>9s} {'':>7s}")
    print(
        f"{'pit + one sort + KS + CvM (the tests alone)':58s} {t_tests:9.3f} {t_ref:9.3f} "
        f"{t_ref / t_tests:6.1f}x"
    )
    print(
        f"{'validate_pit: PIT + KS + CvM + histogram + moments + band':58s} {t_val:9.3f} "
        f"{t_ref:9.3f} {t_ref / t_val:6.1f}x"
    )
    print(f"{'scipy: norm.cdf + kstest + cramervonmises':58s} {'':>9s} {t_ref:9.3f}")
    print("largest difference from scipy: " + ", ".join(f"{k} {v:.1e}" for k, v in diffs.items()))

    nq = args.n
    qs = quantile_set(nq, np.random.default_rng(1))
    t_q = median_time(lambda: uqviz.validate_pit(qs), repeat=max(1, args.repeat // 2))
    ne = max(args.n // 10, 10)
    ens = ensemble_set(ne, 100, np.random.default_rng(2))
    t_e = median_time(lambda: uqviz.validate_pit(ens), repeat=max(1, args.repeat // 2))
    d = float(uqviz.validate_pit(qs, rng=0, n_band=50)["ks_statistic"])
    t_kp = median_time(lambda: stats.kstwo.sf(d, nq), repeat=1)
    print(f"{f'validate_pit: {len(WIS_LEVELS)} quantiles, n = {nq:,}':58s} {t_q:9.3f}")
    print(f"{f'  of which scipy kstwo.sf(D = {d:.2g}, n) (exact KS p-value)':58s} {t_kp:9.3f}")
    print(f"{f'validate_pit: ensemble of 100 members, n = {ne:,}':58s} {t_e:9.3f}")

    ok = t_val <= TARGET
    print(
        f"target: PIT with KS and CvM on {args.n:,} points <= {TARGET} s: "
        f"{'PASS' if ok else 'FAIL'} ({t_val:.3f} s, validate_pit with everything)"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
