"""The figure of docs/guide/verdicts.md: false alarms against M, power against the miscalibration.

Runs :func:`uqviz.operating_characteristics` (or loads its saved results with ``--load``) and
draws two panels:

- left: the "fails" rate on calibrated data against the size M, for D normal and t6, of the
  report as a whole, the CI gate (``--fail-on any``), the calibrated f_v and the rule of Pernot
  (2023) it replaced (0.95 inside the Wilson interval of f_v);
- right: the power at M = 5000 (normal D) of the report's average-calibration and consistency
  verdicts against the size of the miscalibration (scale s of the errors; k of uE on the top
  30 % of uE).

    python benchmarks/plot_verdicts.py --sets 30 --out docs/_static/verdicts.png
    python benchmarks/plot_verdicts.py --load benchmarks/results --out docs/_static/verdicts.png
"""

from __future__ import annotations

import argparse
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import xarray as xr  # noqa: E402

VERDICTS = (
    "report",
    "report:average",
    "report:consistency",
    "report:adaptivity:X1",
    "gate:any",
    "average:ZMS",
    "fv:consistency",
    "fv:consistency:wilson",
)
SIZES = (500, 2000, 5000, 13885)
POWER = (("scale1.05", "scale1.1", "scale1.2"), ("consistency1.2", "consistency1.5"))


def compute(sets, rng):
    import uqviz

    cal = uqviz.operating_characteristics(
        scenarios=("calibrated",),
        generative=["normal", "t6"],
        size=list(SIZES),
        n_datasets=sets,
        verdicts=VERDICTS,
        rng=rng,
        progress=True,
    )
    mis = uqviz.operating_characteristics(
        scenarios=POWER[0] + POWER[1],
        generative="normal",
        size=5000,
        n_datasets=sets,
        verdicts=VERDICTS,
        rng=rng + 1,
        progress=True,
    )
    return cal, mis


def load(folder):
    """Calibrated results (``*cal*.nc``, merged over sizes) and miscalibrated (``*mis*.nc`` or
    ``*power*.nc``): as saved by ``--save``, or ``benchmarks/results``."""
    files = sorted(f for f in os.listdir(folder) if f.endswith(".nc"))
    cal = [xr.load_dataset(os.path.join(folder, f)) for f in files if "cal" in f]
    mis = [xr.load_dataset(os.path.join(folder, f)) for f in files if "mis" in f or "power" in f]
    return (
        xr.concat(cal, "size") if len(cal) > 1 else cal[0],
        xr.concat(mis, "scenario") if len(mis) > 1 else mis[0],
    )


def draw(cal, mis, out):
    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 4.6), layout="constrained")
    styles = {
        "report": ("C0", "report (overall)"),
        "gate:any": ("C1", "gate --fail-on any"),
        "fv:consistency": ("C2", "calibrated f_v"),
        "fv:consistency:wilson": ("C3", "f_v, rule of Pernot (2023)"),
    }
    for gen, ls in (("normal", "-"), ("t6", "--")):
        for v, (color, label) in styles.items():
            r = cal.sel(verdict=v, scenario="calibrated", generative=gen).sortby("size")
            a.errorbar(
                r["size"],
                100 * r["fails"],
                yerr=100 * r["fails_se"],
                color=color,
                ls=ls,
                marker="o",
                ms=3,
                capsize=2,
                label=f"{label}, {gen}",
            )
    a.axhline(5, color="k", lw=0.8, ls=":")
    a.set_xscale("log")
    a.set_xlabel("size M")
    a.set_ylabel('false alarms ("fails" on calibrated data), %')
    a.set_title("(a) calibrated data")
    a.legend(fontsize=6.5, ncol=2, loc="upper center", bbox_to_anchor=(0.5, -0.16))
    for scen, verdict, color, xlab in (
        (POWER[0], "report:average", "C0", "s"),
        (POWER[1], "report:consistency", "C4", "k"),
    ):
        present = [s for s in scen if s in mis["scenario"].values]
        x = [float(s.removeprefix("scale").removeprefix("consistency")) for s in present]
        r = mis.sel(verdict=verdict, scenario=present)
        if "size" in r.dims:
            r = r.isel(size=0)
        if "generative" in r.dims:
            r = r.isel(generative=0)
        b.errorbar(
            x,
            100 * r["fails"],
            yerr=100 * r["fails_se"],
            color=color,
            marker="o",
            capsize=2,
            label=f"{verdict} ({'errors x s' if xlab == 's' else 'uE / k on the top 30 %'})",
        )
    b.axhline(90, color="k", lw=0.8, ls=":")
    b.set_xlabel("size of the miscalibration (s or k)")
    b.set_ylabel("power, %")
    b.set_ylim(0, 105)
    b.set_title("(b) miscalibrated data, M = 5000, normal D")
    b.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.16))
    fig.savefig(out, dpi=130)
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sets", type=int, default=30)
    p.add_argument("--rng", type=int, default=7)
    p.add_argument("--load", default=None, help="folder of saved cal*.nc and mis*.nc")
    p.add_argument("--save", default=None, help="folder to save the results as netCDF")
    p.add_argument("--out", default="verdicts.png")
    args = p.parse_args(argv)
    cal, mis = load(args.load) if args.load else compute(args.sets, args.rng)
    if args.save:
        os.makedirs(args.save, exist_ok=True)
        cal.to_netcdf(os.path.join(args.save, "cal.nc"))
        mis.to_netcdf(os.path.join(args.save, "mis.nc"))
    print(draw(cal, mis, args.out))


if __name__ == "__main__":
    main()
