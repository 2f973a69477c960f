"""The numbers behind the calibrated null of f_v (issue 20), printed by one script.

1. Coverage of the per-bin 95 % BCa interval of the ZMS against the bootstrap replicates B
   (paired: the same simulated bins for every B), for bins of 118 points (QM9: 13 885 points in
   118 bins) and normal or t4.4 z-scores: why the null uses ``min(n_boot, 1000)`` replicates
   (``uqviz.conditional.null.NULL_MAX_BOOT``).
2. The chi-square NEES test (``uqviz.nees_test``) on calibrated sets of 2000 points, normal
   and Student-t z-scores: its false alarms with and without the tail screen (``reliable``).
3. The probability that a calibrated bin's interval holds 1 (LZMS, BCa, B = 1000, counted as
   f_v counts: heavy-tailed or not) against the bin size, for normal, t6 and QM9_U0's own
   z-scores: why bins above ``uqviz.conditional.null.NULL_MAX_SIZE`` points are simulated at
   that size (issue 36, item 5). With ``--sizes-only`` only this part.
4. With ``--nees-verdicts`` only: the verdict words of ``nees_test`` under the heavy-tail rule
   (the largest p-value over the 99.9 % set of degrees of freedom, Berger & Boos (1994)) on
   calibrated and 1.5-times-too-small sets of 20 and 2000 points, d = 1 and 3.

    python benchmarks/bench_null.py [--bins 6000] [--sets 200] [--size-bins 4000]
    python benchmarks/bench_null.py --sizes-only --sizes 1000 2000 4000 8000
    python benchmarks/bench_null.py --nees-verdicts --sets 200
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

from uqviz._array import bootstrap as kboot
from uqviz.engine.statistics import get_statistic


def coverage_against_b(n_bins, size=118, rng=5):
    stat = get_statistic("ZMS")
    gen = np.random.default_rng(rng)
    draws = {
        "normal": lambda s: gen.standard_normal(s),
        "t4.4": lambda s: gen.standard_t(4.4, s) / np.sqrt(4.4 / 2.4),
    }
    print(
        f"coverage of the 95 % BCa ZMS interval, {n_bins} bins of {size} points "
        "(paired: same bins for every B)"
    )
    for name, draw in draws.items():
        z = draw(n_bins * size)
        starts, sizes = np.arange(n_bins) * size, np.full(n_bins, size)
        cov = {}
        for b in (1000, 2000, 10_000):
            t0 = time.perf_counter()
            r = kboot.bootstrap_moments(
                z,
                np.ones_like(z),
                {"ZMS": (stat.func, stat.columns)},
                n_boot=b,
                seed=11,
                ci=0.95,
                method="bca",
                starts=starts,
                sizes=sizes,
                engine="numba",
            )["ZMS"]
            cov[b] = float(np.mean((r.lower <= 1) & (1 <= r.upper)))
            print(
                f"  {name:6s} B = {b:6d}: {cov[b]:.4f} "
                f"(se {np.sqrt(cov[b] * (1 - cov[b]) / n_bins):.4f}),"
                f" {time.perf_counter() - t0:.1f} s"
            )
        print(f"  {name:6s} B = 1000 minus B = 10 000: {cov[1000] - cov[10_000]:+.4f}")


def nees_rates(n_sets, size=2000):
    import uqviz.quantile as uq

    print(f"nees_test on {n_sets} calibrated sets of {size} points (d = 1), in %")
    for name, nu in (("normal", None), ("t6", 6.0), ("t4.4", 4.4)):
        old = fails = unreliable = 0
        for s in range(n_sets):
            g = np.random.default_rng(s)
            u = g.uniform(0.5, 2.0, size)
            z = (
                g.standard_normal(size)
                if nu is None
                else g.standard_t(nu, size) / np.sqrt(nu / (nu - 2))
            )
            r = uq.nees_test(u * z, 0.0, u)
            old += not bool(r["valid"])
            unreliable += not bool(r["reliable"])
            fails += (not bool(r["valid"])) and bool(r["reliable"])
        print(
            f"  {name:6s}: chi-square test alone fails {100 * old / n_sets:5.1f}; with the "
            f"screen: fails {100 * fails / n_sets:5.1f}, "
            f"unreliable {100 * unreliable / n_sets:5.1f}"
        )


def _mvt(g, n, d, nu):
    """Calibrated unit-covariance multivariate Student-t z-vectors (None: normal)."""
    x = g.standard_normal((n, d))
    if nu is not None:
        x *= np.sqrt((nu - 2.0) / g.chisquare(nu, (n, 1)))
    return x


def nees_verdict_rates(n_sets, sizes=(20, 2000), dims=(1, 3)):
    """The verdict words of ``nees_test`` under the heavy-tail rule (issue 36): "fails" and
    "unreliable" rates of calibrated sets (uE log-normal, sigma 0.5) and the "fails" rate of
    uE 1.5 times too small, normal and Student-t z-vectors, in % with the Monte Carlo se."""
    import uqviz.quantile as uq

    print(
        f"nees_test verdicts, {n_sets} sets per cell, in % (se): calibrated 'fails' / "
        "'unreliable'; uE 1.5 times too small: 'fails'"
    )
    for d in dims:
        for m in sizes:
            for name, nu in (("normal", None), ("t6", 6.0), ("t4.4", 4.4), ("t3", 3.0)):
                t0 = time.perf_counter()
                words = {"cal": [], "bad": []}
                for s in range(n_sets):
                    g = np.random.default_rng([s, d, m, int(10 * (nu or 0))])
                    u = np.exp(0.5 * g.standard_normal((m, d)))
                    y = u * _mvt(g, m, d, nu)
                    for key, k in (("cal", 1.0), ("bad", 1.5)):
                        arg = (k * y, 0.0, u) if d > 1 else (k * y[:, 0], 0.0, u[:, 0])
                        words[key].append(str(uq.nees_test(*arg)["verdict"].values))
                rate = {
                    key: {w: 100 * np.mean([x == w for x in v]) for w in ("fails", "unreliable")}
                    for key, v in words.items()
                }
                se = lambda p: 100 * np.sqrt(p / 100 * (1 - p / 100) / n_sets)  # noqa: E731
                f, un, pw = rate["cal"]["fails"], rate["cal"]["unreliable"], rate["bad"]["fails"]
                print(
                    f"  d = {d} M = {m:5d} {name:6s}: calibrated fails {f:5.1f} ({se(f):.1f}), "
                    f"unreliable {un:5.1f}; 1.5 x too small fails {pw:5.1f} ({se(pw):.1f}); "
                    f"{time.perf_counter() - t0:.0f} s",
                    flush=True,
                )


def coverage_against_size(n_sim, sizes, rng=7):
    """Null probability of a valid LZMS bin against its size (simulated bins of n points)."""
    from uqviz._array.bca import verdict
    from uqviz.conditional import local
    from uqviz.data.generative import get_generative
    from uqviz.datasets import load_dataset

    f = local._intervals_of(
        "ZMS",
        method="bca",
        n_boot=1000,
        ci=0.95,
        engine=None,
        client=None,
        level=None,
        generative=None,
    )
    gens = {
        "normal": get_generative("normal"),
        "t6": get_generative("t6"),
        "QM9_U0": get_generative("empirical", load_dataset("QM9_U0")),
    }
    print(
        f"probability that a calibrated bin's 95 % BCa LZMS interval holds 1, {n_sim} "
        "simulated bins per size, B = 1000"
    )
    for name, g in gens.items():
        for n in sizes:
            t0 = time.perf_counter()
            per = max(1, min(n_sim, 2_000_000 // n))
            ok = []
            for c in range(0, n_sim, per):
                k = min(per, n_sim - c)
                gen = np.random.default_rng([rng, n, c])
                z = g.sample(gen, k * n)
                est, lo, hi = f(
                    z, np.ones(k * n), np.arange(k) * n, np.full(k, n), int(gen.integers(2**62))
                )
                ok.append(local.counts_valid(verdict(est, 1.0, lo, hi)[1], lo, hi))
            p = float(np.concatenate(ok).mean())
            print(
                f"  {name:7s} n = {n:6d}: {p:.4f} (se {np.sqrt(p * (1 - p) / n_sim):.4f}), "
                f"{time.perf_counter() - t0:.1f} s",
                flush=True,
            )


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--bins", type=int, default=6000)
    p.add_argument("--sets", type=int, default=200)
    p.add_argument("--size-bins", type=int, default=4000)
    p.add_argument("--sizes", type=int, nargs="+", default=[125, 250, 500, 1000, 2000, 4000, 8000])
    p.add_argument("--sizes-only", action="store_true")
    p.add_argument(
        "--nees-verdicts",
        action="store_true",
        help="only the verdict rates of nees_test under the heavy-tail rule",
    )
    args = p.parse_args(argv)
    warnings.simplefilter("ignore")
    if args.nees_verdicts:
        nees_verdict_rates(args.sets)
        return
    if not args.sizes_only:
        coverage_against_b(args.bins)
        nees_rates(args.sets)
    coverage_against_size(args.size_bins, args.sizes)


if __name__ == "__main__":
    main()
