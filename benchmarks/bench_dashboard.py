"""How fast the dashboard feels in a browser: latency per control and page loads (issue 25).

Serves ``notebooks/05_dashboard.ipynb`` with Voila (and opens it in JupyterLab, Run All
Cells), with the browser tests' machinery (``tests/widgets/browser.py``), and drives it in
headless Chromium as a user would: for every control of both tabs, ``--repeats`` changes
(pick an option, type into a slider's read-out and press Enter, click a checkbox), each
``--think`` seconds (default 1) after the previous figure, as a user who looks at it (the
conditional explorer computes the calibrated null behind its f_v verdict after the figure: a
change made at once would wait for it). The
latency of a change runs from the browser's input event (``change``/``input`` or the Enter
key, ``event.timeStamp``) to the animation frame in which the new figure is decoded in the
page (``requestAnimationFrame`` polling; ``performance.now()``): what a user waits for.

The split of an update is measured in this process on the same explorers (the notebook's
own cells, executed here) with the same changes: ``compute`` (the statistics), ``figure``
(building the view: the explorers' SVG, or the matplotlib figure with
``renderer="matplotlib"``) and ``render`` (Agg and the PNG; 0 for SVG, which the browser
rasterises: its cost is in ``transport``), read from the explorer's
``timings`` attribute when it has one, otherwise timed here (``compute()``, ``redraw()`` and
the PNG of the inline backend: ``bbox_inches="tight"``). ``transport`` = browser median -
(compute + figure + render medians): the widget messages, the kernel's own work outside the
update, and the browser's decoding and painting.

Page loads (navigation start to the first figure decoded, Voila): ``cold`` with numba's
cache empty (``NUMBA_CACHE_DIR`` pointed at an empty folder), ``warm`` with it filled (a
second page, a fresh kernel), ``preheated`` (``--preheat_kernel=True --pool_size=1``: the
notebook already ran in a pooled kernel when the page is asked for, and the pool is refilled
``fill_delay`` s after a page took its kernel, voila.json; the median of ``--preheated``
loads, 3 by default, each once the previous refill is over).

Then QM9_E (the dataset dropdown of both tabs) with the explorers' defaults: every control
again. A change that ends in an error (the figure cleared, e.g. ``equal_width`` bins on
QM9_E) is timed to the cleared figure and counted in ``errors``.

Prints a table (ms) with the load average, and writes
``benchmarks/results/dashboard_latency.csv``. Targets (issue 25): every control <= 100 ms
median on the default example and <= 200 ms on QM9_E; a page in about a second (preheated).
The machine may be shared: compare numbers of one run, and read the load average.

Usage::

    UQVIZ_DATA_DIR=../shared/data python benchmarks/bench_dashboard.py            # everything
    UQVIZ_DATA_DIR=../shared/data python benchmarks/bench_dashboard.py --quick    # 2 changes
        # per control, Voila only, warm page load only
    ... --repeats 10 --no-lab                                                     # options
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import io
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from tests.widgets.browser import (  # noqa: E402 (after the sys.path insert)
    CHROMIUM_FLAGS,
    DASHBOARD,
    NO_CHROMIUM,  # noqa: E402
    TABS,
    VIEWPORT,
    PageWatch,
    chromium_path,
    dropdown,
    labelled,
    lab_run_all,
    lab_server,
    tab_panels,
    voila_server,
)
from tests.widgets.browser import show_tab as browser_show_tab  # noqa: E402

OUT = ROOT / "benchmarks" / "results" / "dashboard_latency.csv"
PAGES_OUT = ROOT / "benchmarks" / "results" / "dashboard_pages.csv"
QM9 = "QM9_E"
LOAD_MS = 600_000
#: one change may take this long before it counts as lost
CHANGE_MS = 60_000
#: None: every option of the dropdown in turn (after the current one)
#: (tab, kind, description, values to cycle through, setup {description: value} or None)
CONTROLS = (
    (0, "dropdown", "condition on", None, None),
    (0, "dropdown", "statistic", None, None),
    (0, "dropdown", "binning", ("equal_width", "equal_count"), None),
    (0, "slider", "bins", ("20", "30", "10", "40", "25"), None),
    # values whose views all differ on both datasets (min counts 150, 200 and 250 give the
    # same strata of the default example: no new figure to wait for)
    (0, "slider", "min count", ("200", "300", "400", "100"), {"binning": "stratified"}),
    (0, "dropdown", "recalibrate", ("scaling", "linear", "isotonic", "bvs", "none"), None),
    (0, "checkbox", "log x", None, None),
    (1, "dropdown", "statistic", ("ZMSE", "CC", "UCE", "ZMS", "ENCE"), None),
    (
        1,
        "dropdown",
        "D",
        ("Student t", "uniform", "Laplace", "empirical (z-scores)", "normal"),
        None,
    ),
    (1, "slider", "nu", ("10", "4", "20", "8", "6"), {"D": "Student t"}),
    (1, "slider", "bins", ("10", "30", "15", "40", "20"), None),
)
#: the dataset dropdown of each tab, between the default example and QM9_E
DATASET_CONTROLS = (
    (0, "dropdown", "dataset", (QM9, "default_example"), None),
    (1, "dropdown", "dataset", (QM9, "default_example"), None),
)
#: explorer attribute of each (tab, description); the in-process replay sets its .value
ATTRIBUTES = {
    "dataset": "dataset",
    "condition on": "conditioning",
    "statistic": "statistic",
    "binning": "binning",
    "bins": "n_bins",
    "min count": "min_count",
    "recalibrate": "recalibration",
    "log x": "log_x",
    "D": "generative",
    "nu": "nu",
}

#: the explorer's figure, or "cleared" (an error removed it), or null (not decoded yet)
FIGURE_STATE_JS = """(el) => {
  const img = el.querySelector('.widget-output img, .widget-image');
  if (!img || !img.getAttribute('src')) return 'cleared';
  return img.complete && img.naturalWidth > 0 ? img : null;
}"""
#: the time of the first input event since the last reset: window.__uqT0
LISTEN_JS = """() => {
  if (window.__uqListening) return;
  window.__uqListening = true;
  window.__uqT0 = null;
  const mark = (e) => { if (window.__uqT0 === null) window.__uqT0 = e.timeStamp; };
  document.addEventListener('input', mark, true);
  document.addEventListener('change', mark, true);
  document.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && e.target.closest && e.target.closest('.widget-readout')) mark(e);
  }, true);
}"""
#: mark the figure shown now as old
MARK_JS = """(el) => {
  const img = el.querySelector('.widget-output img, .widget-image');
  window.__uqOldSrc = img ? img.getAttribute('src') : null;
  if (img) img.__uqOld = true;
  window.__uqT0 = null;
}"""
#: polled at every animation frame: the frame time once a new figure is decoded (or cleared)
NEW_FIGURE_JS = f"""(el) => {{
  const state = ({FIGURE_STATE_JS})(el);
  if (state === null) return false;
  if (state === 'cleared') return {{t1: performance.now(), t0: window.__uqT0, error: true}};
  if (state.__uqOld && state.getAttribute('src') === window.__uqOldSrc) return false;
  return {{t1: performance.now(), t0: window.__uqT0, error: false}};
}}"""
#: navigation start (performance.timeOrigin) to the first figure decoded
FIRST_FIGURE_JS = """() => {
  const img = document.querySelector('.widget-tab .widget-output img, .widget-tab .widget-image');
  return img && img.complete && img.naturalWidth > 0 ? performance.now() : false;
}"""


def load_average():
    return "%.2f %.2f %.2f" % os.getloadavg()


# ------------------------------------------------------------------ the browser side
def show_tab(page, panels, i):
    return browser_show_tab(page, panels, i, CHANGE_MS)


def current_value(page, panel, kind, description):
    if kind == "dropdown":
        select = dropdown(panel, description)
        return select.evaluate("s => s.options[s.selectedIndex].text")
    if kind == "slider":
        readout = labelled(page, panel, "widget-slider", description).locator(".widget-readout")
        return readout.inner_text().strip()
    return panel.locator(".widget-checkbox", has_text=description).locator("input").is_checked()


def next_values(page, panel, kind, description, values, n):
    """``n`` values to set in turn, each different from the one before."""
    if kind == "checkbox":
        now = current_value(page, panel, kind, description)
        return [(not now) if i % 2 == 0 else now for i in range(n)]
    if values is None:  # every option in turn, from the one after the current
        options = dropdown(panel, description).locator("option").all_inner_texts()
        now = options.index(current_value(page, panel, kind, description))
        values = options[now + 1 :] + options[: now + 1]
    out, last = [], current_value(page, panel, kind, description)
    i = 0
    while len(out) < n:
        v = values[i % len(values)]
        i += 1
        if str(v) != str(last) and not (kind == "slider" and _same_number(v, last)):
            out.append(v)
            last = v
    return out


def _same_number(a, b):
    try:
        return float(a) == float(b)
    except ValueError:
        return False


def act(page, panel, kind, description, value):
    """Change a control as a user would; the input event starts the clock."""
    if kind == "dropdown":
        select = dropdown(panel, description)
        page.evaluate("() => { window.__uqT0 = null; }")
        select.select_option(label=str(value))
    elif kind == "slider":
        readout = labelled(page, panel, "widget-slider", description).locator(".widget-readout")
        readout.click()
        page.keyboard.press("Control+A")
        page.keyboard.type(str(value))
        page.evaluate("() => { window.__uqT0 = null; }")  # the clock starts at Enter
        page.keyboard.press("Enter")
    else:
        page.evaluate("() => { window.__uqT0 = null; }")
        panel.locator(".widget-checkbox", has_text=description).locator("input").click()


def timed_change(page, panel, kind, description, value):
    """Change a control; return (latency in ms, ended in an error) or (nan, False) if lost."""
    panel.evaluate(MARK_JS)
    act(page, panel, kind, description, value)
    try:
        res = page.wait_for_function(
            NEW_FIGURE_JS, arg=panel.element_handle(), polling="raf", timeout=CHANGE_MS
        ).json_value()
    except Exception as exc:  # noqa: BLE001 - a Playwright timeout: the change is lost
        print(f"  {description} -> {value}: no new figure in {CHANGE_MS / 1000:.0f} s ({exc})")
        return float("nan"), False
    if res["t0"] is None:
        return float("nan"), res["error"]
    return res["t1"] - res["t0"], res["error"]


def set_untimed(page, panel, kind, description, value):
    """A setup step (e.g. the stratified binning before 'min count'): change, wait, no clock."""
    if str(current_value(page, panel, kind, description)) == str(value):
        return
    timed_change(page, panel, kind, description, value)


def drive(page, controls, repeats, log, think=0.0):
    """Every control ``repeats`` times, ``think`` seconds after the previous figure before
    each timed change; returns {(tab, description): [(value, ms, error)]} and the list of
    changes done ("events", replayed in-process, setups included)."""
    panels = tab_panels(page)
    out, events = {}, []
    for tab, kind, description, values, setup in controls:
        panel = show_tab(page, panels, tab)
        if labelled(page, panel, f"widget-{kind}", description).count() == 0 and kind != "checkbox":
            log(f"  {TABS[tab]}: no control '{description}'")
            continue
        restore = {}
        for desc, value in (setup or {}).items():
            restore[desc] = current_value(page, panel, "dropdown", desc)
            set_untimed(page, panel, "dropdown", desc, value)
            events.append((tab, desc, value, False))
        initial = current_value(page, panel, kind, description)
        rows = []
        for value in next_values(page, panel, kind, description, values, repeats):
            page.wait_for_timeout(1000 * think)  # the user looks at the figure
            ms, error = timed_change(page, panel, kind, description, value)
            rows.append((value, ms, error, os.getloadavg()[0]))
            events.append((tab, description, value, True))
        if str(current_value(page, panel, kind, description)) != str(initial):
            set_untimed(page, panel, kind, description, initial)
            events.append((tab, description, initial, False))
        for desc, value in restore.items():
            set_untimed(page, panel, "dropdown", desc, value)
            events.append((tab, desc, value, False))
        ms = [r[1] for r in rows]
        log(
            f"  {TABS[tab]:22s} {description:13s} "
            + " ".join(f"{m:6.0f}" for m in ms)
            + (f"  ({sum(r[2] for r in rows)} errors)" if any(r[2] for r in rows) else "")
        )
        out[(tab, description)] = rows
    return out, events


def select_dataset(page, name, events):
    panels = tab_panels(page)
    for tab in range(len(TABS)):
        panel = show_tab(page, panels, tab)
        set_untimed(page, panel, "dropdown", "dataset", name)
        events.append((tab, "dataset", name, False))


def has_dataset(page, name):
    panel = show_tab(page, tab_panels(page), 0)
    return name in dropdown(panel, "dataset").locator("option").all_inner_texts()


def page_load(browser, url):
    """(seconds from navigation start to the first figure decoded, 1-min load average after);
    a new page, a new kernel."""
    context = browser.new_context(viewport=VIEWPORT)
    page = context.new_page()
    try:
        page.goto(url, timeout=LOAD_MS, wait_until="commit")
        ms = page.wait_for_function(FIRST_FIGURE_JS, polling="raf", timeout=LOAD_MS).json_value()
        return ms / 1000, os.getloadavg()[0]
    finally:
        context.close()


def _cpu_busy(interval=1.0):
    """Fraction of the machine's CPU time spent busy over ``interval`` s (/proc/stat)."""

    def sample():
        with open("/proc/stat") as f:
            values = [float(v) for v in f.readline().split()[1:]]
        return sum(values), values[3] + values[4]  # total, idle + iowait

    total0, idle0 = sample()
    time.sleep(interval)
    total1, idle1 = sample()
    return 1.0 - (idle1 - idle0) / max(total1 - total0, 1.0)


def wait_for_pool(log_path, n_filled, idle=0.15, timeout=600.0):
    """Wait until Voila's log reports its kernel pool filled ``n_filled`` times (the first
    kernel, then one refill after each page), then until the machine is idle (less than
    ``idle`` of its CPU busy over two consecutive seconds): Voila logs the pool filled once
    the kernel is started, while the notebook is still running in it (after voila.json's
    ``fill_delay``), and that run must be over when the next page is asked for."""
    t_end = time.monotonic() + timeout
    while Path(log_path).read_text(errors="replace").count("is filled with") < n_filled:
        if time.monotonic() > t_end:
            raise TimeoutError(f"Voila's kernel pool was not refilled within {timeout:.0f} s")
        time.sleep(0.5)
    quiet = 0
    while quiet < 2 and time.monotonic() < t_end:
        quiet = quiet + 1 if _cpu_busy() < idle else 0


def latency_run(browser, url, args, log, frontend, lab_notebook=None):
    """Open the dashboard (Voila URL, or JupyterLab: Run All Cells) and drive every control,
    on the default example then on QM9_E. Returns (results, events, watch).

    Run twice on Voila: the first run (not counted) compiles and caches every numba kernel
    the changes use, so that the measured run (another page, another kernel, the same
    changes) sees a filled cache as a returning user would."""
    context = browser.new_context(viewport=VIEWPORT)
    page = context.new_page()
    watch = PageWatch(page)
    try:
        if lab_notebook is None:
            page.goto(url, timeout=LOAD_MS, wait_until="commit")
        else:
            state, seconds = lab_run_all(page, url, lab_notebook, LOAD_MS, LOAD_MS)
            if state["errors"]:
                raise RuntimeError(f"the dashboard failed in JupyterLab: {state['errors']}")
            log(f"  JupyterLab: Run All Cells took {seconds:.1f} s")
        page.wait_for_function(FIRST_FIGURE_JS, polling="raf", timeout=LOAD_MS)
        page.evaluate(LISTEN_JS)
        results, events = {}, []
        log(f"{frontend}, default_example (ms per change):")
        res, ev = drive(page, CONTROLS, args.repeats, log, args.think)
        results.update({("default_example", *k): v for k, v in res.items()})
        events += ev
        if not has_dataset(page, QM9):
            log(f"  no {QM9} in the dashboard (UQVIZ_DATA_DIR unset?): QM9 case skipped")
            return results, events, watch
        res, ev = drive(page, DATASET_CONTROLS, args.repeats, log, args.think)
        results.update({("default_example", *k): v for k, v in res.items()})
        events += ev
        select_dataset(page, QM9, events)
        log(f"{frontend}, {QM9} (ms per change):")
        res, ev = drive(page, CONTROLS, args.repeats, log, args.think)
        results.update({(QM9, *k): v for k, v in res.items()})
        events += ev
        return results, events, watch
    finally:
        context.close()


# ------------------------------------------------------------------ the in-process split
def notebook_explorers():
    """The dashboard's explorers, built by the notebook's own cells (magics dropped, the
    display silenced; stopped before the cell that shows static copies)."""
    import matplotlib

    matplotlib.use("Agg")
    ns = {}
    cells = json.loads(DASHBOARD.read_text())["cells"]
    with contextlib.redirect_stdout(io.StringIO()):
        for cell in cells:
            if cell["cell_type"] != "code":
                continue
            src = "".join(cell["source"])
            if "VOILA_KERNEL_ID" in src:
                break
            exec(
                compile(
                    "\n".join(
                        line for line in src.splitlines() if not line.lstrip().startswith("%")
                    ),
                    "dashboard",
                    "exec",
                ),
                ns,
            )
    return ns["conditional"], ns["reference"]


def _value(explorer, attribute, value):
    """The widget value of a browser label (dropdown labels, slider text, checkbox)."""
    ctrl = getattr(explorer, attribute)
    if isinstance(value, bool):
        return value
    if hasattr(ctrl, "options"):
        for option in ctrl.options:
            label, val = option if isinstance(option, tuple) else (str(option), option)
            if label == str(value):
                return val
        return value
    return type(ctrl.value)(float(value))


def split_in_process(events, warm_up=True):
    """Replay ``events`` on the notebook's explorers; {(dataset, tab, control): [{part: s}]}.

    ``warm_up``: replay them first on other explorers (kernels compiled or loaded from the
    cache, nothing cached in the explorers that are timed)."""
    from IPython.core.pylabtools import print_figure

    if warm_up:
        split_in_process(events, warm_up=False)
    explorers = notebook_explorers()
    parts = {}
    spent = [{}, {}]  # per explorer: seconds in compute() and redraw() of the last change
    for ex, own in zip(explorers, spent):  # timed here when the explorer has no `timings`
        for name in ("compute", "redraw"):
            method = getattr(ex, name)

            def timed(*a, _m=method, _n=name, _own=own, **k):
                t0 = time.perf_counter()
                try:
                    return _m(*a, **k)
                finally:  # a refused setting raises: its time counts too
                    _own[_n] = _own.get(_n, 0.0) + time.perf_counter() - t0

            setattr(ex, name, timed)
    for tab, description, value, timed_event in events:
        ex = explorers[tab]
        spent[tab].clear()
        getattr(ex, ATTRIBUTES[description]).value = _value(ex, ATTRIBUTES[description], value)
        if not timed_event:
            continue
        dataset = ex.dataset.value if description != "dataset" else "default_example"
        timings = getattr(ex, "timings", None)
        if timings:
            split = {k: float(timings.get(k, np.nan)) for k in ("compute", "figure", "render")}
            # a kept image shown: nothing built nor rendered (SVG: "render" is always 0)
            split["again"] = float(timings["render"] == 0.0 and timings["figure"] == 0.0)
        else:
            split = {
                "compute": spent[tab].get("compute", 0.0),
                "figure": spent[tab].get("redraw", 0.0),
                "render": 0.0,
            }
            if ex.figure is not None:  # what the inline backend does with the figure
                t0 = time.perf_counter()
                print_figure(ex.figure, "png", bbox_inches="tight")
                split["render"] = time.perf_counter() - t0
        parts.setdefault((dataset, tab, description), []).append(split)
    return parts, any(getattr(ex, "timings", None) for ex in explorers)


# ------------------------------------------------------------------ report
def table_rows(frontend, results, parts):
    rows = []
    for (dataset, tab, description), changes in results.items():
        ms = np.array([c[1] for c in changes], float)
        split = parts.get((dataset, tab, description), [])
        med = {
            k: 1000 * float(np.median([s[k] for s in split])) if split else np.nan
            for k in ("compute", "figure", "render")
        }
        median = float(np.nanmedian(ms)) if np.isfinite(ms).any() else np.nan
        rows.append(
            {
                "frontend": frontend,
                "dataset": dataset,
                "explorer": TABS[tab],
                "control": description,
                "n": int(np.isfinite(ms).sum()),
                "median_ms": median,
                "max_ms": float(np.nanmax(ms)) if np.isfinite(ms).any() else np.nan,
                "compute_ms": med["compute"],
                "figure_ms": med["figure"],
                "render_ms": med["render"],
                "transport_ms": median - med["compute"] - med["figure"] - med["render"],
                "again": int(sum(s.get("again", 0.0) for s in split)),
                "errors": sum(c[2] for c in changes),
                "load_1min": float(np.mean([c[3] for c in changes])),
            }
        )
    return rows


def print_table(rows, loads, args, split_source):
    fmt = (
        "{:8s} {:15s} {:21s} {:13s} {:>2s} {:>5s} {:>7s} {:>7s} {:>8s} {:>7s} {:>7s} {:>9s} "
        "{:>4s} {:>5s}"
    )
    print()
    print(
        f"Dashboard latency, ms from the input event to the new figure decoded "
        f"({args.repeats} changes per control, {args.think:g} s after the previous figure; "
        f"split: {split_source}; again: changes to a view drawn before, its image kept)"
    )
    print(
        fmt.format(
            "frontend",
            "dataset",
            "explorer",
            "control",
            "n",
            "again",
            "median",
            "max",
            "compute",
            "figure",
            "render",
            "transport",
            "err",
            "load",
        )
    )
    for r in rows:
        print(
            fmt.format(
                r["frontend"],
                r["dataset"],
                r["explorer"],
                r["control"],
                str(r["n"]),
                str(r["again"]),
                *(
                    f"{r[k]:.0f}" if np.isfinite(r[k]) else "-"
                    for k in (
                        "median_ms",
                        "max_ms",
                        "compute_ms",
                        "figure_ms",
                        "render_ms",
                        "transport_ms",
                    )
                ),
                str(r["errors"]),
                f"{r['load_1min']:.1f}",
            )
        )
    for frontend in sorted({r["frontend"] for r in rows}):
        for dataset, target in (("default_example", 100), (QM9, 200)):
            med = [
                r["median_ms"]
                for r in rows
                if r["frontend"] == frontend
                and r["dataset"] == dataset
                and np.isfinite(r["median_ms"])
            ]
            if med:
                worst = max(med)
                print(
                    f"{frontend}, {dataset}: worst control median {worst:.0f} ms "
                    f"(target <= {target} ms: {'met' if worst <= target else 'NOT met'})"
                )
    if loads:
        print(
            "Page loads (Voila, navigation start to the first figure decoded): "
            + ", ".join(f"{case} {sec:.2f} s (load {load:.1f})" for case, sec, load in loads)
        )
    print(
        f"load average at the end {load_average()} (column load: the 1-min load average "
        "during each control's changes; 2 cores)"
    )


def write_csv(rows, loads, path):
    path.parent.mkdir(parents=True, exist_ok=True)
    fields = [
        "kind",
        "frontend",
        "dataset",
        "explorer",
        "control",
        "n",
        "again",
        "median_ms",
        "max_ms",
        "compute_ms",
        "figure_ms",
        "render_ms",
        "transport_ms",
        "errors",
        "load_1min",
    ]
    with open(path, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=fields)
        w.writeheader()
        for case, sec, load in loads:
            w.writerow(
                {
                    "kind": "page_load",
                    "frontend": "voila",
                    "dataset": "default_example",
                    "control": case,
                    "n": 1,
                    "median_ms": f"{1000 * sec:.0f}",
                    "max_ms": f"{1000 * sec:.0f}",
                    "load_1min": f"{load:.2f}",
                }
            )
        for r in rows:
            w.writerow(
                {
                    "kind": "latency",
                    **{k: (f"{v:.1f}" if isinstance(v, float) else v) for k, v in r.items()},
                }
            )
    print(f"wrote {path}")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument(
        "--repeats", type=int, default=None, help="changes per control (default 5; 2 with --quick)"
    )
    p.add_argument(
        "--quick",
        action="store_true",
        help="2 changes per control, Voila only, warm page load only",
    )
    p.add_argument(
        "--lab",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="also in JupyterLab (default: yes, no with --quick)",
    )
    p.add_argument(
        "--think",
        type=float,
        default=1.0,
        help="seconds between a figure and the next change (default 1: a user "
        "looks at the figure; the f_v null is computed after the figure)",
    )
    p.add_argument(
        "--preheated",
        type=int,
        default=3,
        help="preheated page loads (their median is reported; default 3)",
    )
    p.add_argument(
        "--pages-only",
        action="store_true",
        help="the page loads only (cold, warm, preheated), no control changed",
    )
    p.add_argument(
        "--out",
        type=Path,
        default=None,
        help=f"CSV written (default {OUT.relative_to(ROOT)}; with --pages-only "
        f"{PAGES_OUT.relative_to(ROOT)})",
    )
    args = p.parse_args(argv)
    args.repeats = args.repeats or (2 if args.quick else 5)
    args.lab = (not args.quick and not args.pages_only) if args.lab is None else args.lab
    args.out = args.out or (PAGES_OUT if args.pages_only else OUT)
    executable = chromium_path()
    if not executable:
        sys.exit(f"bench_dashboard: {NO_CHROMIUM}")
    from playwright.sync_api import sync_playwright

    def log(msg):
        print(msg, flush=True)

    log(f"load average {load_average()}")
    rows, loads, events_by_frontend = [], [], {}
    with (
        tempfile.TemporaryDirectory(prefix="uqviz-bench-dashboard-") as tmp,
        sync_playwright() as pw,
    ):
        tmp = Path(tmp)
        numba_env = {"NUMBA_CACHE_DIR": str(tmp / "numba-cache")}  # empty: cold
        # the in-process split shares the cache (numba not imported yet)
        os.environ.update(numba_env)
        browser = pw.chromium.launch(executable_path=executable, args=CHROMIUM_FLAGS)
        with voila_server(tmp / "voila.log", DASHBOARD, env=numba_env) as url:
            if not args.quick:
                loads.append(("cold", *page_load(browser, url)))
                log(f"page load, numba cache empty: {loads[-1][1]:.2f} s")
            else:
                page_load(browser, url)  # fills the cache
            loads.append(("warm", *page_load(browser, url)))
            log(f"page load, numba cache filled: {loads[-1][1]:.2f} s")
            watch = None
            if not args.pages_only:
                latency_run(browser, url, args, log, "warm-up (not counted)")
                results, events, watch = latency_run(browser, url, args, log, "voila")
                events_by_frontend["voila"] = (results, events)
        if not args.quick:
            with voila_server(
                tmp / "voila-preheat.log",
                DASHBOARD,
                env=numba_env,
                args=("--preheat_kernel=True", "--pool_size=1"),
            ) as url:
                page_load(browser, url)  # waits for the first pooled kernel; refills the pool
                pre = []
                for i in range(args.preheated):  # a load each, once the pool has refilled
                    wait_for_pool(tmp / "voila-preheat.log", i + 2)
                    pre.append(page_load(browser, url))
                    log(f"page load, preheated kernel: {pre[-1][0]:.2f} s")
                loads.append(
                    (
                        "preheated",
                        float(np.median([p[0] for p in pre])),
                        float(np.mean([p[1] for p in pre])),
                    )
                )
        if args.lab:
            with lab_server(tmp / "lab", env=numba_env) as lab:
                results, events, _ = latency_run(
                    browser,
                    lab["url"],
                    args,
                    log,
                    "lab",
                    lab_notebook="notebooks/05_dashboard.ipynb",
                )
                events_by_frontend["lab"] = (results, events)
        browser.close()
        if watch is not None and (watch.console or watch.remote):
            log(
                f"Voila page: {len(watch.console)} console errors/warnings, "
                f"{len(watch.remote)} requests beyond 127.0.0.1 (tests/widgets/test_browser.py)"
            )

    log("in-process split (the same changes on the notebook's explorers) ...")
    split_source = "in-process, timed by the benchmark"
    done = {}  # the same changes in both frontends: one replay
    for frontend, (results, events) in events_by_frontend.items():
        key = tuple(events)
        if key not in done:
            done[key] = split_in_process(events)
        parts, own = done[key]
        if own:
            split_source = "in-process, the explorers' timings"
        rows += table_rows(frontend, results, parts)
    print_table(rows, loads, args, split_source)
    write_csv(rows, loads, args.out)


if __name__ == "__main__":
    main()
