"""In-process time of one explorer update, split compute / build the view / render a PNG.

Drives the two explorers of the dashboard (``notebooks/05_dashboard.ipynb``) by setting the
``.value`` of each control, N times per control, in plain Python (Agg, no browser, no kernel):

- the default example (``uqviz.synthetic.default_example()``) with the dashboard's settings
  (``ConditionalExplorer(n_boot=500)``, ``ReferenceExplorer(n_mc=300, n_boot=300)``);
- QM9_E (``uqviz.datasets.load_collection("pernot2024")["QM9_E"]``) with the explorers'
  defaults.

The split is the explorer's own measurement of its last update, ``ex.timings``
(``{"compute": s, "figure": s, "render": s, "show": s, "after": s}``): the time to the figure
is compute + figure + render + show; "after" is the work done once the figure is shown (the
conditional explorer's calibrated null behind the f_v verdict, whose read-out follows the
figure). A view drawn before (its image kept) is counted under "again": nothing is built or
rendered. Each case runs with both renderers of the explorers (``--renderer``): ``svg``, the
default, builds the view as SVG markup (``figure``; ``render`` 0: the browser rasterises it),
``matplotlib`` builds a matplotlib figure and renders it to PNG with Agg (the reference
implementation); the script prints the ratio of their new views. An explorer without
``timings`` (uqviz before issue 25)
is timed from outside the same way the notebook displayed it: ``ex.compute()``, a
constrained-layout figure drawn by ``ex._draw``, and the PNG that ``display(fig)`` rendered
(``bbox_inches="tight"``, as matplotlib-inline does).

Targets (issue 25): median in-process update <= 60 ms on the default example and
<= 150 ms on QM9_E, so that the browser sees <= 100 ms and <= 200 ms. The browser's
latency is measured by ``benchmarks/bench_dashboard.py``.

The machine may be shared: the load average is printed with the numbers.

Usage::

    UQVIZ_DATA_DIR=../shared/data MPLBACKEND=Agg python benchmarks/bench_explorer_update.py
    ... --changes 3 --no-qm9
"""

from __future__ import annotations

import argparse
import io
import os
import time
import warnings

import numpy as np

os.environ.setdefault("MPLBACKEND", "Agg")

#: control -> the values it cycles through (the first value different from the current one)
CONDITIONAL_CONTROLS = {
    "conditioning": None,  # the dataset's options
    "statistic": ["ZM", "RCE", "PICP", "ZMS"],
    "binning": ["equal_width", "stratified", "equal_count"],
    "n_bins": [20, 30, 40, 25, 50],
    "recalibration": ["scaling", "linear", "bvs", "none"],
    "log_x": [False, True],
}
REFERENCE_CONTROLS = {
    "statistic": ["CC", "ZMSE", "UCE", "ZMS", "ENCE"],
    "generative": ["t", "uniform", "laplace", "normal"],
    "nu": [4.0, 8.0, 12.0, 6.0],
    "n_bins": [10, 30, 15, 20],
}


def _legacy_split(ex, compute=True):
    """(compute, figure, render) the way uqviz drew before issue 25: a constrained-layout
    figure drawn by ``ex._draw`` and the PNG that ``display(fig)`` rendered
    (``bbox_inches="tight"``, as matplotlib-inline does). None when the setting is refused."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    t0 = time.perf_counter()
    if compute:
        try:
            ex.compute()
        except ValueError:
            return None
    t1 = time.perf_counter()
    fig = Figure(figsize=ex.figsize, layout="constrained")
    FigureCanvasAgg(fig)
    ex._draw(fig.add_subplot())
    t2 = time.perf_counter()
    fig.canvas.print_figure(
        io.BytesIO(),
        format="png",
        dpi=fig.dpi,
        bbox_inches="tight",
        facecolor=fig.get_facecolor(),
        edgecolor=fig.get_edgecolor(),
    )
    t3 = time.perf_counter()
    return t1 - t0, t2 - t1, t3 - t2


def drive(ex, controls, n_changes, legacy=None):
    """{control: [(to_figure, compute, figure, render, after, whole, again), ...]} over
    ``n_changes`` changes each.

    ``to_figure``: from the change to the figure handed to the page (compute + figure +
    render + show); ``after``: work done once the figure is shown (the f_v null);
    ``whole``: the change's whole time; ``again``: 1 for a view drawn before (its image
    kept: nothing built nor rendered), else 0.

    Changes to a refused setting (an error shown, no figure) are left out. With a list
    ``legacy``, each change also times the drawing before issue 25 on the same state
    (interleaved: the same load), appended as (figure, render) pairs.
    """
    out = {}
    for name, values in controls.items():
        ctrl = getattr(ex, name)
        if values is None:
            values = list(ctrl.options)
        if name == "nu":
            ex.generative.value = "t"
        initial = ctrl.value
        rows = []
        for k in range(n_changes):
            candidates = [v for v in values if v != ctrl.value]
            value = candidates[k % len(candidates)]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                if hasattr(ex, "timings"):
                    t0 = time.perf_counter()
                    ctrl.value = value
                    total = time.perf_counter() - t0
                    if ex.result is None:
                        continue
                    t = ex.timings
                    after = t.get("after", 0.0)
                    split = (
                        t["compute"],
                        t["figure"],
                        t["render"],
                        after,
                        total,
                        float(t["render"] == 0.0 and t["figure"] == 0.0),
                    )
                    if legacy is not None:
                        legacy.append(_legacy_split(ex, compute=False)[1:])
                    total = total - after
                else:
                    ctrl.value = value
                    split = _legacy_split(ex)
                    if split is None:
                        continue
                    if name == "log_x":  # a redraw only
                        split = (0.0,) + split[1:]
                    total = sum(split)
                    split = split + (0.0, total, 0.0)
            rows.append((total,) + tuple(split))
        out[name] = rows
        with warnings.catch_warnings():  # back to the first setting (a refused one blocks
            warnings.simplefilter("ignore")  # the next control's changes)
            ctrl.value = initial
        if name == "nu":
            ex.generative.value = "normal"
    return out


def _row(name, arr):
    med = np.median(arr, axis=0)
    again = int(arr[:, 6].sum() / 1e3)
    print(
        f"  {name:<15}{med[0]:>10.1f}{arr[:, 0].max():>9.1f}{med[1]:>9.1f}{med[2]:>8.1f}"
        f"{med[3]:>8.1f}{med[4]:>8.1f}{med[5]:>8.1f}{len(arr) - again:>6d}/{again:<3d}"
    )


def report(title, results):
    """Print per control the median and max time to the figure, its split, the work after
    the figure, the whole change, and how many changes showed a new view or one drawn
    before; returns (median to the figure, the same over new views only)."""
    print(f"\n{title}  (load average {os.getloadavg()[0]:.2f})")
    print(
        f"  {'control':<15}{'median ms':>10}{'max ms':>9}{'compute':>9}{'figure':>8}"
        f"{'render':>8}{'after':>8}{'whole':>8}  new/again"
    )
    alls = []
    for name, rows in results.items():
        if not rows:
            print(f"  {name:<15}{'(every change refused)':>30}")
            continue
        arr = np.array(rows) * 1e3
        alls.append(arr)
        _row(name, arr)
    arr = np.vstack(alls)
    _row("all changes", arr)
    new = arr[arr[:, 6] == 0]
    _row("new views", new)
    return float(np.median(arr[:, 0])), float(np.median(new[:, 0]))


def compare(title, ours, legacy):
    """Print figure + render of the same states, now and before issue 25 (interleaved)."""
    new = np.array([row[2:4] for rows in ours.values() for row in rows]) * 1e3
    old = np.array(legacy) * 1e3
    print(
        f"  figure + render of the same {len(old)} states (median ms), {title}: before issue "
        f"25 {np.median(old.sum(1)):.1f} (figure {np.median(old[:, 0]):.1f}, render "
        f"{np.median(old[:, 1]):.1f}); now {np.median(new.sum(1)):.1f} (figure "
        f"{np.median(new[:, 0]):.1f}, render {np.median(new[:, 1]):.1f}); ratio "
        f"{np.median(old.sum(1)) / np.median(new.sum(1)):.2f}"
    )


def _median_ms(func, repeat=15):
    func()  # warm-up
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        func()
        times.append(time.perf_counter() - t0)
    return 1e3 * float(np.median(times))


def parts(data):
    """What two choices of issue 25 save: the f_v null after the figure and redrawing the same
    figure."""
    import ipywidgets

    import uqviz
    from uqviz.widgets import ConditionalExplorer
    from uqviz.widgets._display import draw_inline

    print(f"\nparts of one update (median ms, load average {os.getloadavg()[0]:.2f})")
    for name, ds, n_boot in data:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            row = {
                n_mc: _median_ms(
                    lambda n=n_mc: (
                        uqviz.fraction_valid(
                            uqviz.local_calibration(ds, n_boot=n_boot, n_mc=n, rng=0)
                        )
                        if n
                        else uqviz.local_calibration(ds, n_boot=n_boot, n_mc=0, rng=0)
                    )
                )
                for n_mc in (2000, 500, 0)
            }
        print(
            f"  local_calibration + fraction_valid, {name}, n_boot={n_boot}: n_mc=2000 "
            f"(the explorer's, after its figure) {row[2000]:.0f}, n_mc=500 {row[500]:.0f}, "
            f"no null (before the figure) {row[0]:.0f}"
        )
    ex = ConditionalExplorer(data[0][1], n_boot=data[0][2])
    fresh = _median_ms(lambda: draw_inline(ipywidgets.Output(), ex.figsize, ex._draw))
    same = _median_ms(
        lambda: draw_inline(ipywidgets.Output(), ex.figsize, ex._draw, figure=ex.figure)
    )
    print(
        f"  figure + render, {data[0][0]}: a fresh figure {fresh:.0f}, the same figure "
        f"cleared and redrawn {same:.0f} (ratio {fresh / same:.2f})"
    )
    floor(ex.figsize)


def floor(figsize):
    """What matplotlib's Agg takes for an explorer-sized figure with nearly nothing in it:
    the part of a new view's render no change of the explorers' drawing can remove."""
    import ipywidgets

    from uqviz.widgets._display import draw_inline

    x = np.linspace(0.05, 1.0, 50)

    def empty(ax):
        ax.set_xlabel("x")
        ax.set_ylabel("y")

    def errorbars(ax):
        ax.errorbar(x, x, yerr=0.1 + 0 * x, fmt="o", ms=3, label="bins")
        ax.axhline(0.5, ls="--", label="reference")
        ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0))
        empty(ax)

    out = ipywidgets.Output()
    times = {
        name: _median_ms(lambda d=draw: draw_inline(out, figsize, d))
        for name, draw in (("empty Axes", empty), ("50 error bars + legend", errorbars))
    }
    print(
        "  matplotlib floor, a fresh fixed-margin figure built, drawn and encoded: "
        + ", ".join(f"{k} {v:.0f}" for k, v in times.items())
    )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--changes", type=int, default=5, help="changes per control")
    parser.add_argument("--no-qm9", action="store_true", help="skip QM9_E")
    parser.add_argument(
        "--ab", action="store_true", help="also time the drawing before issue 25 on the same states"
    )
    parser.add_argument(
        "--renderer",
        choices=("both", "svg", "matplotlib"),
        default="both",
        help="the explorers' renderer; both (default): each case with SVG "
        "and with matplotlib, and the ratio of their new views",
    )
    parser.add_argument(
        "--parts",
        action="store_true",
        help="also time the f_v null at n_mc 2000/500/0 and a fresh figure "
        "against the explorer's figure redrawn",
    )
    args = parser.parse_args(argv)

    import uqviz
    from uqviz.widgets import ConditionalExplorer, ReferenceExplorer

    example = uqviz.synthetic.default_example()
    cases = [
        (
            "conditional, default example",
            "ConditionalExplorer, default example, n_boot=500",
            lambda r: ConditionalExplorer(example, n_boot=500, renderer=r),
            CONDITIONAL_CONTROLS,
        ),
        (
            "reference, default example",
            "ReferenceExplorer, default example, n_mc=300, n_boot=300",
            lambda r: ReferenceExplorer(example, n_mc=300, n_boot=300, renderer=r),
            REFERENCE_CONTROLS,
        ),
    ]
    if not args.no_qm9:
        qm9 = uqviz.datasets.load_collection("pernot2024")["QM9_E"].to_dataset()
        cases += [
            (
                "conditional, QM9_E",
                "ConditionalExplorer, QM9_E, defaults",
                lambda r: ConditionalExplorer(qm9, renderer=r),
                dict(CONDITIONAL_CONTROLS, n_bins=[50, 80, 100, 118, 60]),
            ),
            (
                "reference, QM9_E",
                "ReferenceExplorer, QM9_E, defaults",
                lambda r: ReferenceExplorer(qm9, renderer=r),
                REFERENCE_CONTROLS,
            ),
        ]
    renderers = ("svg", "matplotlib") if args.renderer == "both" else (args.renderer,)
    if args.parts:
        parts([("default example", example, 500)] + ([] if args.no_qm9 else [("QM9_E", qm9, 1000)]))
    medians = {}
    for key, title, make, controls in cases:
        for renderer in renderers:
            ex = make(renderer)
            first = next(iter(controls))
            drive(ex, {first: controls[first] or None}, 2)  # warm-up: kernels, fonts
            legacy = [] if args.ab and hasattr(ex, "timings") else None
            results = drive(ex, controls, args.changes, legacy)
            medians[key, renderer] = report(f"{title}, renderer={renderer}", results)
            if legacy:
                compare(title, results, legacy)
    print(
        "\nmedian time to the figure (ms), all changes / new views only: "
        + "; ".join(f"{k} ({r}) {a:.0f} / {b:.0f}" for (k, r), (a, b) in medians.items())
        + f"  (targets: default example <= 60, QM9_E <= 150; load average "
        f"{os.getloadavg()[0]:.2f})"
    )
    if len(renderers) == 2:
        print(
            "new views, matplotlib / SVG (the same changes): "
            + "; ".join(
                f"{k} {medians[k, 'matplotlib'][1]:.0f} / {medians[k, 'svg'][1]:.0f} ms = "
                f"{medians[k, 'matplotlib'][1] / medians[k, 'svg'][1]:.1f}x"
                for k, _, _, _ in cases
            )
        )


if __name__ == "__main__":
    main()
