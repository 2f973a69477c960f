"""Tail screen of the ZMS: how often each beta_GM screen fires, and what it says about coverage.

On calibrated data (Z = E/uE independent of uE, unit variance), for each generative
distribution D of Z, each law of uE and each size M, draws ``--sets`` datasets and prints:

- the rate at which each tailedness screen fires (Pernot (2024b), Table II: beta_GM(uE^2) > 0.6,
  beta_GM(E^2) > 0.8, beta_GM(Z^2) > 0.8);
- the actual coverage of the 95 % BCa interval of the ZMS (n_boot 1000), overall, when the Z^2
  screen passes and when it fires, and when the E^2 screen fires;

each with its Monte Carlo standard error (binomial, sqrt(p (1 - p) / n)). A screen questions
the ZMS usefully when the coverage is poor where it fires and fine where it passes; a screen
that fires while the coverage stays at 95 % only makes false "unreliable" verdicts.

Then the consistency-failure scenario of issue 20 (normal Z, uE^2 inverse-gamma nu = 3,
M = 5000, E = Z u_true, reported uE = u_true / 1.5 on the top 30 % of u_true): the share of
sets whose average verdict reads "fails" (ZMS interval excludes 1 and no screen of the ZMS
fires) with the screens (E2, Z2) of Table II and with Z2 alone.

Usage::

    python benchmarks/bench_tail_screen.py               # 200 sets per cell (~10 min, 1 core)
    python benchmarks/bench_tail_screen.py --sets 50     # quicker, coarser

QM9's own uE (``load_dataset("QM9_E")``, M = 13 885) needs the data directory
(``UQVIZ_DATA_DIR``); without it those rows are skipped.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from uqviz._array import stats as ks
from uqviz._array.bootstrap import bootstrap_moments
from uqviz._array.stats import zms

N_BOOT = 1000
CI = 0.95
THR = {"uE2": 0.6, "E2": 0.8, "Z2": 0.8}


# unit-variance generative distributions of Z
def _t(nu):
    return lambda r, m: r.standard_t(nu, m) * np.sqrt((nu - 2.0) / nu)


DRAWS = {
    "normal": lambda r, m: r.standard_normal(m),
    "t6": _t(6.0),
    "t4.4": _t(4.4),
    "laplace": lambda r, m: r.laplace(0.0, np.sqrt(0.5), m),
    "uniform": lambda r, m: r.uniform(-np.sqrt(3.0), np.sqrt(3.0), m),
    "t3": _t(3.0),
}


def _qm9_u():
    try:
        from uqviz.datasets import load_dataset

        return np.asarray(load_dataset("QM9_E")["uE"].values, dtype=float)
    except Exception as exc:  # no data directory: skip those rows
        print(f"# QM9_E not loaded ({type(exc).__name__}): its rows are skipped")
        return None


def _uncertainties(name, r, m, qm9):
    if name == "constant":
        return np.ones(m)
    if name == "IG3":  # uE^2 ~ InverseGamma(nu/2, nu/2), nu = 3 (NIG of Pernot (2024b))
        return np.sqrt(1.5 / r.standard_gamma(1.5, m))
    if name == "LN0.5":
        return np.exp(0.5 * r.standard_normal(m))
    if name == "QM9":
        return qm9
    raise ValueError(name)


def one_set(e, u, seed):
    """ZMS interval (BCa) and the three beta_GM of one set."""
    res = bootstrap_moments(
        e, u, {"ZMS": (zms, ("Z2",))}, n_boot=N_BOOT, seed=seed, ci=CI, method="bca"
    )["ZMS"]
    covered = bool(res.lower[0] <= 1.0 <= res.upper[0])
    with np.errstate(invalid="ignore", divide="ignore"):  # constant uE: beta_GM(uE2) NaN
        beta = [ks.beta_gm(x) for x in (u * u, e * e, (e / u) ** 2)]
    return covered, beta


def run_cell(draw_z, uname, m, n_sets, rng, qm9):
    cov = np.empty(n_sets, dtype=bool)
    beta = np.empty((n_sets, 3))
    for k in range(n_sets):
        u = _uncertainties(uname, rng, m, qm9)
        e = u * draw_z(rng, m)
        cov[k], beta[k] = one_set(e, u, int(rng.integers(0, 2**63)))
    fires = beta > np.array([THR["uE2"], THR["E2"], THR["Z2"]])
    return cov, fires


def _rate(x):
    x = np.asarray(x, dtype=bool)
    n = x.size
    if n == 0:
        return "      -       "
    p = x.mean()
    return f"{p:5.3f}±{np.sqrt(max(p * (1 - p), 0.25 / n) / n):.3f}({n:3d})"


def _pct(x):
    p = np.mean(x)
    return f"{p:5.3f}±{np.sqrt(max(p * (1 - p), 0.25 / x.size) / x.size):.3f}"


def calibrated_table(n_sets, seed):
    qm9 = _qm9_u()
    cells = []
    for d in ("normal", "t6", "t4.4", "laplace", "uniform"):
        for uname in ("constant", "IG3", "LN0.5"):
            for m in (500, 5000):
                cells.append((d, uname, m))
        if qm9 is not None:
            cells.append((d, "QM9", qm9.size))
    cells += [("t3", "constant", 5000), ("t3", "LN0.5", 5000), ("t3", "IG3", 5000)]
    print(
        f"calibrated data: {n_sets} sets per cell, n_boot {N_BOOT}, {CI:.0%} BCa interval of "
        "ZMS; rates ± Monte Carlo se (n sets)"
    )
    head = (
        f"{'D':<8}{'uE':<9}{'M':>6} {'P(uE2)':>7} {'P(E2 screen)':>13} {'P(Z2 screen)':>13}"
        f" {'cov all':>12} {'cov | Z2 pass':>18} {'cov | Z2 fires':>18}"
        f" {'cov | E2 fires':>18}"
    )
    print(head)
    print("-" * len(head))
    ss = np.random.SeedSequence(seed)
    for (d, uname, m), child in zip(cells, ss.spawn(len(cells))):
        rng = np.random.default_rng(child)
        cov, fires = run_cell(DRAWS[d], uname, m, n_sets, rng, qm9)
        print(
            f"{d:<8}{uname:<9}{m:>6} {fires[:, 0].mean():7.3f} {_pct(fires[:, 1]):>13}"
            f" {_pct(fires[:, 2]):>13} {_pct(cov):>12} {_rate(cov[~fires[:, 2]]):>18}"
            f" {_rate(cov[fires[:, 2]]):>18} {_rate(cov[fires[:, 1]]):>18}",
            flush=True,
        )


def consistency_failure(n_sets, seed, k=1.5, m=5000):
    """Average verdict on uE underestimated by ``k`` on the top 30 % of uE."""
    rng = np.random.default_rng(np.random.SeedSequence([seed, 1]))
    rejected = np.empty(n_sets, dtype=bool)
    fires = np.empty((n_sets, 3), dtype=bool)
    est = np.empty(n_sets)
    for j in range(n_sets):
        u_true = np.sqrt(1.5 / rng.standard_gamma(1.5, m))
        e = u_true * rng.standard_normal(m)
        u = u_true.copy()
        top = u_true >= np.quantile(u_true, 0.7)
        u[top] /= k
        res = bootstrap_moments(
            e,
            u,
            {"ZMS": (zms, ("Z2",))},
            n_boot=N_BOOT,
            seed=int(rng.integers(0, 2**63)),
            ci=CI,
            method="bca",
        )["ZMS"]
        rejected[j] = not (res.lower[0] <= 1.0 <= res.upper[0])
        est[j] = res.estimate[0]
        fires[j] = [ks.beta_gm(x) > t for x, t in zip((u * u, e * e, (e / u) ** 2), THR.values())]
    old = rejected & ~fires[:, 1] & ~fires[:, 2]
    new = rejected & ~fires[:, 2]
    print(
        f"\nconsistency failure: normal Z, uE^2 IG(nu=3), M = {m}, uE / {k} on the top 30 %; "
        f"{n_sets} sets, mean ZMS {est.mean():.3f}"
    )
    print(f"  ZMS interval excludes 1      {_pct(rejected)}")
    print(f"  P(E2 screen), P(Z2 screen)   {_pct(fires[:, 1])}, {_pct(fires[:, 2])}")
    print(f"  'fails' with screens E2, Z2  {_pct(old)}   (else 'unreliable')")
    print(f"  'fails' with screen Z2 only  {_pct(new)}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", type=int, default=200, help="datasets per cell (default 200)")
    parser.add_argument("--seed", type=int, default=20, help="root seed (default 20)")
    args = parser.parse_args(argv)
    t0 = time.perf_counter()
    calibrated_table(args.sets, args.seed)
    consistency_failure(args.sets, args.seed)
    print(f"\n# {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
