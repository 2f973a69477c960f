"""Execute a course notebook once, as CI does, and keep what the checks of the course read.

Not a test module: ``tests/project/course/test_NN_*.py`` (one small module per notebook, so that
``pytest-xdist --dist loadfile`` spreads the notebooks over the workers) import the tests below,
which share one execution per notebook through the module-scoped fixture :func:`executed`.

The notebook runs with nbclient in a fresh kernel, in fast mode (``UQVIZ_FAST=1``, as CI), with
``notebooks/`` as working directory and a per-cell timeout. ``UQVIZ_PROGRESS`` is removed from the
kernel's environment: uqviz itself must keep progress bars out of an unattended execution.
Before the first cell, a setup cell that is not stored in the notebook registers a wrapper of
IPython's ``print_figure`` (through which every figure shown inline is rendered): each figure is
drawn and inspected while it is still open, and the facts the figure checks need (axis labels,
legend labels, the legend's box against the data in display coordinates) are written to JSON.

The executed notebook (``<stem>.ipynb``), its figures (``<stem>.figures.json``) and its run time
(``<stem>.time.json``, recorded, never asserted) are written to ``test-artifacts/notebooks/``
(``$UQVIZ_TEST_ARTIFACTS`` overrides the folder).
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "notebooks"
#: per-cell timeout of the execution (s): a cell that hangs fails its notebook, not the suite
CELL_TIMEOUT = 900
SETUP_ID = "uqviz-test-setup"

__all__ = [
    "executed",
    "test_notebook_executes",
    "test_quoted_numbers_are_printed",
    "test_figures_are_readable",
    "test_outputs_are_clean",
]


def artifact_dir() -> Path:
    path = Path(os.environ.get("UQVIZ_TEST_ARTIFACTS") or ROOT / "test-artifacts") / "notebooks"
    path.mkdir(parents=True, exist_ok=True)
    return path


# The code of the setup cell. It must not leave names in the notebook's namespace besides
# _uqviz_course_check, and it must never make a cell fail: an error while inspecting a figure
# is recorded in the JSON (and fails the figure check), not raised.
SETUP = r"""
def _uqviz_course_check(path):
    import json
    import numpy as np
    from IPython import get_ipython
    from IPython.core import pylabtools

    records, state = [], {"cell": -1, "source": ""}

    def pre_run_cell(info):
        state["cell"] += 1
        state["source"] = info.raw_cell

    def label(a, which):
        return (a.get_xlabel() if which == "x" else a.get_ylabel()).strip()

    def limits(a, which):
        return tuple(np.round(a.get_xlim() if which == "x" else a.get_ylim(), 12))

    def shared_label(ax, which):
        # a label on an axes that shares this axis, or on an axes of the same row (y) or column
        # (x) of the figure with the same limits and scale (an axis shared in all but name)
        group = (ax.get_shared_x_axes() if which == "x" else ax.get_shared_y_axes())
        if any(label(a, which) for a in group.get_siblings(ax) if a.figure is ax.figure):
            return True
        box = ax.get_position()
        for a in ax.figure.axes:
            other = a.get_position()
            aligned = (abs(other.y0 - box.y0) < 1e-3 if which == "y"
                       else abs(other.x0 - box.x0) < 1e-3)
            scale = a.get_yscale() == ax.get_yscale() if which == "y" else (
                a.get_xscale() == ax.get_xscale())
            if (a is not ax and aligned and scale and label(a, which)
                    and limits(a, which) == limits(ax, which)):
                return True
        return False

    def categorical(ax, which):
        # an axis whose ticks are named (set names, methods): the tick labels are its label
        import re
        ticks = ax.get_xticklabels() if which == "x" else ax.get_yticklabels()
        texts = [re.sub(r"\\mathdefault|\\times|[${}^]", "", t.get_text()) for t in ticks]
        return any(re.search(r"[A-DF-Za-df-z]", t) for t in texts)

    def in_data(artist, ax):
        # an artist placed in data coordinates (not an axhline, a span or a text)
        try:
            return artist.get_transform().contains_branch(ax.transData)
        except Exception:
            return False

    def paths_of(artist):
        # (display-coordinate path, filled) of a data artist
        from matplotlib.collections import Collection, PathCollection
        from matplotlib.lines import Line2D
        from matplotlib.patches import Patch
        out = []
        if isinstance(artist, Line2D):
            xy = artist.get_transform().transform(np.column_stack(artist.get_data(orig=False))
                                                  .astype(float))
            xy = xy[np.isfinite(xy).all(axis=1)]
            if len(xy):
                from matplotlib.path import Path as MPath
                if artist.get_linestyle() not in ("None", "none", " ", "") and len(xy) > 1:
                    out.append(("line", MPath(xy), False))
                if artist.get_marker() not in (None, "None", "none", " ", ""):
                    out.append(("points", xy, None))
        elif isinstance(artist, PathCollection):          # scatter
            offsets = artist.get_offsets()
            if len(offsets):
                xy = artist.get_offset_transform().transform(np.asarray(offsets, float))
                out.append(("points", xy[np.isfinite(xy).all(axis=1)], None))
        elif isinstance(artist, Collection):              # fill_between, errorbar, vlines
            tr = artist.get_transform()
            filled = len(artist.get_facecolor()) > 0 and np.any(
                np.asarray(artist.get_facecolor())[:, 3] > 0)
            for p in artist.get_paths():
                out.append(("area" if filled else "line", tr.transform_path(p), bool(filled)))
        elif isinstance(artist, Patch):                    # bars, stairs
            out.append(("area" if artist.get_fill() else "line",
                        artist.get_transform().transform_path(artist.get_path()),
                        bool(artist.get_fill())))
        return out

    def data_artists(ax):
        from matplotlib.collections import Collection
        from matplotlib.lines import Line2D
        from matplotlib.patches import Patch
        for a in ax.get_children():
            if (isinstance(a, (Line2D, Collection, Patch)) and a.get_visible()
                    and a is not ax.patch and in_data(a, ax)):
                yield a

    def has_data(ax):
        return bool(ax.images) or any(paths_of(a) for a in data_artists(ax))

    def overlaps(box, ax):
        # what data of `ax` lies under `box` (display coordinates), inside the axes
        from matplotlib.transforms import Bbox
        inter = Bbox.intersection(box, ax.bbox)
        if inter is None or inter.width <= 2 or inter.height <= 2:
            return []
        inner = Bbox.from_extents(inter.x0 + 1, inter.y0 + 1, inter.x1 - 1, inter.y1 - 1)
        hits = []
        for a in data_artists(ax):
            for kind, geom, filled in paths_of(a):
                if kind == "points":
                    n = int(np.sum((geom[:, 0] > inner.x0) & (geom[:, 0] < inner.x1)
                                   & (geom[:, 1] > inner.y0) & (geom[:, 1] < inner.y1)))
                    hit = n > 0
                else:
                    hit = geom.intersects_bbox(inner, filled=filled)
                if hit:
                    hits.append(f"{type(a).__name__} {a.get_label()!r} ({kind})")
                    break
        return hits

    def inspect(fig):
        fig.draw_without_rendering()
        axes = []
        sup = {"x": bool(getattr(fig, "_supxlabel", None) and fig._supxlabel.get_text()),
               "y": bool(getattr(fig, "_supylabel", None) and fig._supylabel.get_text())}
        for i, ax in enumerate(fig.axes):
            kind = ("colorbar" if hasattr(ax, "_colorbar") or ax.get_label() == "<colorbar>"
                    else "inset" if ax.get_axes_locator() is not None
                    or any(ax in getattr(o, "child_axes", []) for o in fig.axes)
                    else "off" if not ax.axison else "axes")
            entry = {"index": i, "kind": kind, "title": ax.get_title(), "has_data": has_data(ax),
                     "xlabel": ax.get_xlabel(), "ylabel": ax.get_ylabel(),
                     "xlabel_shared": shared_label(ax, "x") or sup["x"],
                     "ylabel_shared": shared_label(ax, "y") or sup["y"],
                     "x_categorical": categorical(ax, "x"),
                     "y_categorical": categorical(ax, "y")}
            leg = ax.get_legend()
            if leg is not None and leg.get_visible():
                entry["legend"] = [t.get_text() for t in leg.get_texts()]
                box = leg.get_window_extent()
                entry["legend_over"] = overlaps(box, ax)
            axes.append(entry)
        figure_legends = []
        for leg in fig.legends:
            box = leg.get_window_extent()
            figure_legends.append({"labels": [t.get_text() for t in leg.get_texts()],
                                   "over": [h for ax in fig.axes for h in overlaps(box, ax)]})
        return {"suptitle": fig._suptitle.get_text() if fig._suptitle else "",
                "axes": axes, "figure_legends": figure_legends}

    original = pylabtools.print_figure

    def print_figure(fig, *args, **kwargs):
        record = {"cell": state["cell"], "source": state["source"]}
        try:
            record.update(inspect(fig))
        except Exception as exc:          # a failure of the check, reported by the test
            record["error"] = f"{type(exc).__name__}: {exc}"
        records.append(record)
        with open(path, "w") as f:
            json.dump(records, f, indent=1)
        return original(fig, *args, **kwargs)

    pylabtools.print_figure = print_figure
    get_ipython().events.register("pre_run_cell", pre_run_cell)
    with open(path, "w") as f:
        json.dump(records, f)
"""


def execute(stem: str) -> dict:
    """Execute ``notebooks/<stem>.ipynb``; its executed cells, figures and run time.

    Returns ``{"nb": executed notebook (setup cell removed), "figures": [record per figure
    shown], "seconds": wall time, "error": the CellExecutionError text or None}``.
    """
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    out = artifact_dir()
    figures = out / f"{stem}.figures.json"
    figures.unlink(missing_ok=True)
    nb = nbformat.read(NOTEBOOKS / f"{stem}.ipynb", as_version=4)
    setup = nbformat.v4.new_code_cell(
        SETUP + f"\n_uqviz_course_check({str(figures)!r})\ndel _uqviz_course_check\n"
    )
    setup.id = SETUP_ID
    nb.cells.insert(0, setup)
    env = {k: v for k, v in os.environ.items() if k not in ("UQVIZ_PROGRESS", "MPLBACKEND")}
    env.update(
        UQVIZ_FAST="1",
        PYTHONPATH=os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]),
    )
    if env.get("UQVIZ_DATA_DIR"):
        env["UQVIZ_DATA_DIR"] = str(Path(env["UQVIZ_DATA_DIR"]).resolve())
    client = NotebookClient(
        nb,
        timeout=CELL_TIMEOUT,
        kernel_name="python3",
        resources={"metadata": {"path": str(NOTEBOOKS)}},
    )
    error = None
    t0 = time.perf_counter()
    try:
        client.execute(env=env)
    except CellExecutionError as exc:
        error = str(exc)
    seconds = time.perf_counter() - t0
    assert nb.cells[0].id == SETUP_ID
    setup_outputs = nb.cells.pop(0).outputs
    nbformat.write(nb, out / f"{stem}.ipynb")
    (out / f"{stem}.time.json").write_text(
        json.dumps(
            {"notebook": stem, "seconds": round(seconds, 1), "mode": "fast", "cpus": os.cpu_count()}
        )
        + "\n"
    )
    print(f"{stem}: executed in {seconds:.1f} s (fast mode; recorded, not asserted)")
    records = json.loads(figures.read_text()) if figures.exists() else []
    if setup_outputs:
        error = (error or "") + f"\nthe setup cell printed: {setup_outputs}"
    return {"nb": nb, "figures": records, "seconds": seconds, "error": error}


@pytest.fixture(scope="module")
def executed(request):
    """The notebook of the calling module (its ``NOTEBOOK`` stem), executed once."""
    return execute(request.module.NOTEBOOK)


def test_notebook_executes(executed):
    """Every cell runs without an error in fast mode (what ``--nbmake`` checked before)."""
    assert executed["error"] is None, executed["error"]


def test_quoted_numbers_are_printed(executed, request):
    from tests.project.test_course import quoted_number_failures

    bad = quoted_number_failures(request.module.NOTEBOOK, executed["nb"])
    assert bad is not None, "collected only for notebooks with a quotes file (conftest.py)"
    assert not bad, "\n".join(bad)


def test_figures_are_readable(executed):
    from tests.project.test_course import figure_failures

    bad = figure_failures(executed["figures"], executed["nb"])
    assert not bad, "\n".join(bad)


def test_outputs_are_clean(executed):
    from tests.project.test_course import output_failures

    bad = output_failures(executed["nb"])
    assert not bad, "\n".join(bad)
