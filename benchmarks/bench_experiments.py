"""One Monte Carlo point of the validation-probability study, against a naive scipy loop.

The point is the paper's (Pernot (2024b) Fig. 5, Pernot (2024a) Fig. 3): NIG with nu = 2, N = 1000
calibrated datasets of M = 5000 points, each validated by BCa intervals of
ZMS and RCE from B = 5000 bootstrap replicates (ZMS and RCE paired, as in
uqviz). Prints the wall time of ``uqviz.experiments.validation_probability``
and, measured in the same run, the time of ``scipy.stats.bootstrap`` (BCa,
paired, vectorised, one call per statistic) on a few of the same datasets,
extrapolated to N, with the ratio.

Usage::

    python benchmarks/bench_experiments.py                      # the paper's point
    python benchmarks/bench_experiments.py --n-datasets 200 --scipy-datasets 2
    python benchmarks/bench_experiments.py --client local       # dask LocalCluster
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
from scipy import stats

from uqviz import experiments as ex


def zms(e, u, axis=-1):
    return np.mean((e / u) ** 2, axis=axis)


def rce(e, u, axis=-1):
    return 1.0 - np.sqrt(np.mean(e * e, axis=axis) / np.mean(u * u, axis=axis))


def scipy_point(datasets, n_boot, batch):
    """Naive validation of each dataset with scipy.stats.bootstrap; returns the valid flags."""
    valid = []
    for i, (e, u) in enumerate(datasets):
        row = []
        for func, ref in ((zms, 1.0), (rce, 0.0)):
            res = stats.bootstrap(
                (e, u),
                func,
                n_resamples=n_boot,
                paired=True,
                vectorized=True,
                method="BCa",
                batch=batch,
                rng=np.random.default_rng(i),
            )
            ci = res.confidence_interval
            row.append(bool(ci.low <= ref <= ci.high))
        valid.append(row)
    return np.array(valid)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--nu", type=float, default=2.0)
    p.add_argument("--n-datasets", type=int, default=1000)
    p.add_argument("--size", type=int, default=5000)
    p.add_argument("--n-boot", type=int, default=5000)
    p.add_argument(
        "--scipy-datasets",
        type=int,
        default=3,
        help="datasets done with scipy, extrapolated to --n-datasets",
    )
    p.add_argument(
        "--scipy-batch",
        type=int,
        default=500,
        help="scipy 'batch' (resamples held at once; bounds its memory)",
    )
    p.add_argument("--client", choices=["none", "local"], default="none")
    p.add_argument("--seed", type=int, default=20240215)
    args = p.parse_args(argv)

    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}")
    print(
        f"point: NIG nu={args.nu:g}, N={args.n_datasets}, M={args.size}, B={args.n_boot}, "
        "statistics ZMS+RCE (BCa)"
    )

    # warm-up: loads the numba kernel from its cache (or compiles it) outside the timing
    ex.validation_probability(
        scenario="NIG", nu=[args.nu], n_datasets=2, size=100, n_boot=64, rng=0, progress=False
    )
    t0, c0 = time.perf_counter(), time.process_time()
    res = ex.validation_probability(
        scenario="NIG",
        nu=[args.nu],
        n_datasets=args.n_datasets,
        size=args.size,
        n_boot=args.n_boot,
        rng=args.seed,
        progress=False,
        client=None if args.client == "none" else args.client,
    )
    t_uqviz, c_uqviz = time.perf_counter() - t0, time.process_time() - c0
    pv = res["validation_probability"].sel(nu=args.nu)
    print(
        f"uqviz.experiments.validation_probability: {t_uqviz:.1f} s wall "
        f"({t_uqviz / args.n_datasets * 1e3:.1f} ms per dataset), {c_uqviz:.1f} s CPU "
        f"(all threads of this process; on idle cores wall ~ CPU / cores); "
        f"p_val ZMS = {float(pv.sel(statistic='ZMS')):.3f}, "
        f"RCE = {float(pv.sel(statistic='RCE')):.3f}"
    )

    # the same generative model and seeds for the naive loop
    model = (args.nu / 2.0, args.nu / 2.0, None)
    idx = np.arange(args.scipy_datasets)
    e, u, _ = ex._draw(model, idx, int(res.attrs["entropy"]), args.size)
    t0, c0 = time.perf_counter(), time.process_time()
    flags = scipy_point(list(zip(e, u)), args.n_boot, args.scipy_batch)
    t_scipy, c_scipy = time.perf_counter() - t0, time.process_time() - c0
    per = t_scipy / args.scipy_datasets
    extrapolated = per * args.n_datasets
    extrapolated_cpu = c_scipy / args.scipy_datasets * args.n_datasets
    ours = np.abs(res["zeta"].isel(nu=0, dataset=idx).values) <= 1
    print(
        f"scipy.stats.bootstrap (BCa, paired, vectorized, batch={args.scipy_batch}), "
        f"{args.scipy_datasets} datasets: {t_scipy:.1f} s ({per:.2f} s per dataset) "
        f"-> {extrapolated:.0f} s wall, {extrapolated_cpu:.0f} s CPU extrapolated to "
        f"N={args.n_datasets}"
    )
    print(
        f"ratio scipy / uqviz: {extrapolated / t_uqviz:.1f}x wall, "
        f"{extrapolated_cpu / c_uqviz:.1f}x CPU"
    )
    print(f"load average at the end: {os.getloadavg()[0]:.2f}")
    print(
        f"validation decisions on those datasets agree: {int((flags == ours).sum())}"
        f"/{flags.size} (different resamples, so a borderline case may differ)"
    )


if __name__ == "__main__":
    main()
