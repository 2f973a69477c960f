"""End-to-end in a real browser: the Voila dashboard, JupyterLab and the HTML report.

Headless Chromium (Debian's ``chromium`` package, no browser download) is
driven by Playwright. The dashboard notebook is served by Voila on loopback;
the test changes a control, as a student would, and checks that the figure is
redrawn and that the numbers shown equal the library's for the new settings.
The course index ``notebooks/00_index.ipynb`` is opened in JupyterLab (a copy
of it: the repository is never written) and run cell by cell from the Run
menu: no cell may fail, the conditional explorer must render and follow its
controls, and the inline report must show.
Screenshots are saved in ``test-artifacts/`` (``UQVIZ_ARTIFACTS`` overrides).

``make test`` makes sure Chromium is there (``scripts/ensure-chromium``); a
missing browser is a failure that says how to get one, never a skip.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

import uqviz
from tests.widgets.browser import (
    CHROMIUM_FLAGS,
    DASHBOARD,
    FIGURE_JS,
    LAB_STATE_JS,
    NO_CHROMIUM,
    ROOT,
    VIEWPORT,
    PageWatch,
    chromium_path,
    TABS,
    dropdown,
    labelled,
    lab_run_all,
    lab_server,
    show_tab,
    tab_panels,
    voila_server,
)
from uqviz.widgets import ConditionalExplorer, ReferenceExplorer

#: the course index, opened in JupyterLab (relative to the repository root)
LAB_NOTEBOOK = "notebooks/00_index.ipynb"
#: generous: the first kernel imports numba-compiled kernels and runs both explorers
LOAD_MS = 600_000
UPDATE_MS = 120_000
#: running every cell of the course index (numba compilation, the full-size report)
RUN_ALL_MS = 1_200_000


def _chromium():
    path = chromium_path()
    if path:
        return path
    pytest.fail(NO_CHROMIUM, pytrace=False)


@pytest.fixture(scope="module")
def artifacts():
    out = Path(os.environ.get("UQVIZ_ARTIFACTS", ROOT / "test-artifacts"))
    out.mkdir(parents=True, exist_ok=True)
    return out


@pytest.fixture(scope="module")
def browser():
    executable = _chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=executable, args=CHROMIUM_FLAGS)
        yield b
        b.close()


@pytest.fixture
def page(browser):
    """A fresh 1280 px page; ``page.watch`` collects its console errors and warnings, uncaught
    JavaScript errors (also in ``page.errors``) and requests beyond 127.0.0.1."""
    context = browser.new_context(viewport=VIEWPORT)
    pg = context.new_page()
    pg.watch = PageWatch(pg)
    pg.errors = pg.watch.errors
    yield pg
    context.close()


@pytest.fixture(scope="module")
def voila_url(tmp_path_factory):
    """Serve the dashboard notebook with Voila on loopback; stop it (and its kernels) after."""
    _chromium()  # no server without a browser to drive it
    log = tmp_path_factory.mktemp("voila") / "voila.log"
    with voila_server(log, DASHBOARD) as url:
        yield url


def _image_sources(locator):
    return [img.get_attribute("src") for img in locator.all()]


def _wait_for_new_plot(page, panel, old_src):
    """Wait until the panel's figure is an image other than ``old_src``; return its source."""
    page.wait_for_function(
        """([panel, old]) => {
             const img = panel.querySelector('.widget-output img');
             return img && img.complete && img.naturalWidth > 0 && img.src !== old;
           }""",
        arg=[panel.element_handle(), old_src],
        timeout=UPDATE_MS,
    )
    return panel.locator(".widget-output img").first.get_attribute("src")


def _fv_text(fv):
    """The f_v label exactly as the explorer writes it (numbers to 2 decimals)."""
    est, lo, hi = (float(fv[k]) for k in ("estimate", "ci_lower", "ci_upper"))
    return (
        f"95% CI [{lo:.2f}, {hi:.2f}]",
        f"= {est:.2f}",
        f"{int(fv['n_valid'])} of {int(fv['n_bins'])} bins valid",
    )


def test_dashboard_control_redraws_plot_and_updates_fv(page, voila_url, artifacts):
    # the numbers the dashboard must show, computed here with the notebook's settings
    expected = ConditionalExplorer(uqviz.synthetic.default_example(), n_boot=500)
    before = _fv_text(expected.fv)
    expected.conditioning.value = "X"
    after = _fv_text(expected.fv)
    assert before != after  # X is where the default example fails: the label must change

    page.goto(voila_url, timeout=LOAD_MS, wait_until="commit")  # Voila streams: wait for widgets
    panel = page.locator(".widget-tab .widget-vbox").first
    img = panel.locator(".widget-output img").first
    img.wait_for(timeout=LOAD_MS)
    fv_label = panel.locator(".widget-html", has_text="bins valid").first
    text = fv_label.inner_text()
    assert all(part in text for part in before), text
    src0 = img.get_attribute("src")
    assert src0.startswith("data:image/svg+xml,")  # the explorers' SVG (issue 25)
    page.screenshot(path=artifacts / "dashboard_before.png", full_page=True)

    dropdown(panel, "condition on").select_option("X")
    page.wait_for_function(
        "([el, s]) => el.innerText.includes(s)",
        arg=[fv_label.element_handle(), after[2]],
        timeout=UPDATE_MS,
    )
    src1 = _wait_for_new_plot(page, panel, src0)
    text = fv_label.inner_text()
    assert all(part in text for part in after), text
    assert src1 != src0 and len(_image_sources(panel.locator(".widget-output img"))) == 1
    page.screenshot(path=artifacts / "dashboard_after.png", full_page=True)
    assert page.errors == []


def test_dashboard_reference_tab_follows_generative_distribution(page, voila_url, artifacts):
    expected = ReferenceExplorer(uqviz.synthetic.default_example(), n_mc=300, n_boot=300)
    ref_normal = f"D = {expected.result.attrs['generative']}"
    expected.generative.value = "t"
    res = expected.result
    ref_t = (
        f"D = {res.attrs['generative']}, {res.attrs['n_bins']} bins) = "
        f"{float(res['reference']):.4g}"
    )

    page.goto(voila_url, timeout=LOAD_MS, wait_until="commit")  # Voila streams: wait for widgets
    page.locator(".widget-tab .widget-output img").first.wait_for(timeout=LOAD_MS)
    page.get_by_role("tab", name="Simulated references").click()
    panel = page.locator(".widget-tab .widget-vbox", has_text="MC interval").first
    summary = panel.locator(".widget-html", has_text="MC interval").first
    assert ref_normal in summary.inner_text()
    src0 = panel.locator(".widget-output img").first.get_attribute("src")

    dropdown(panel, "D").select_option(label="Student t")
    page.wait_for_function(
        "([el, s]) => el.innerText.includes(s)",
        arg=[summary.element_handle(), ref_t],
        timeout=UPDATE_MS,
    )
    _wait_for_new_plot(page, panel, src0)
    page.screenshot(path=artifacts / "dashboard_reference.png", full_page=True)
    assert page.errors == []


# ------------------------------- issue 25, item 3: every control, nothing clipped, a quiet page
#: one change of every control of both explorers, in an order that enables each one first
#: (min count needs the stratified binning, nu the Student t); the dataset first, so that
#: QM9_E's long warning is shown when the layout is checked; (tab, kind, description, value)
EVERY_CONTROL = (
    (0, "dropdown", "dataset", "QM9_E"),
    (0, "checkbox", "log x", False),
    (0, "dropdown", "condition on", "mass"),
    (0, "dropdown", "statistic", "ZM"),
    (0, "slider", "bins", "10"),
    (0, "dropdown", "binning", "stratified"),
    (0, "slider", "min count", "200"),
    (0, "dropdown", "recalibrate", "scaling"),
    (1, "dropdown", "dataset", "QM9_E"),
    (1, "dropdown", "statistic", "ZMSE"),
    (1, "dropdown", "D", "Student t"),
    (1, "slider", "nu", "10"),
    (1, "slider", "bins", "10"),
)

#: what is clipped in an explorer: every control, its parts (label, select, slider, read-out),
#: every HTML read-out and the figure must lie inside its parent and the explorer, within the
#: window's width, no label or read-out text may be cut and the figure is shown at its size
CLIP_JS = """(panel) => {
  const tol = 1;
  const problems = [];
  const visible = el => el.offsetParent !== null && el.getBoundingClientRect().width > 0;
  const inside = (a, b) => a.left >= b.left - tol && a.right <= b.right + tol
                           && a.top >= b.top - tol && a.bottom <= b.bottom + tol;
  const box = r => `x [${Math.round(r.left)}, ${Math.round(r.right)}], `
                   + `y [${Math.round(r.top)}, ${Math.round(r.bottom)}]`;
  const name = el => {
    const ctrl = el.closest('.widget-inline-hbox');
    const what = el.tagName.toLowerCase() + (el.classList[0] ? '.' + el.classList[0] : '');
    const text = ctrl ? Array.from(ctrl.querySelectorAll('label'))
      .map(l => l.innerText.replace(/\\u200b/g, '').trim()).find(t => t) : '';
    return (ctrl ? `control '${text}': ` : '') + what;
  };
  const outer = panel.getBoundingClientRect();
  const width = document.documentElement.clientWidth;
  const parts = panel.querySelectorAll(
    '.widget-inline-hbox, .widget-inline-hbox label, .widget-inline-hbox select, '
    + '.widget-inline-hbox input, .widget-readout, .slider-container, .widget-html, '
    + '.widget-output img, .widget-image');
  for (const el of parts) {
    if (!visible(el)) continue;
    const r = el.getBoundingClientRect();
    const parent = el.parentElement.getBoundingClientRect();
    if (!inside(r, parent))
      problems.push(`${name(el)} at ${box(r)} overflows its parent at ${box(parent)}`);
    if (!inside(r, outer))
      problems.push(`${name(el)} at ${box(r)} overflows the explorer at ${box(outer)}`);
    if (r.right > width + tol)
      problems.push(`${name(el)} ends at ${Math.round(r.right)} px, `
                    + `beyond the ${width} px window`);
    if (el.matches('.widget-output img') && el.naturalWidth
        && Math.abs(r.width - el.naturalWidth) > tol)  // the figure at its pixel size
      problems.push(`${name(el)} shown ${Math.round(r.width)} px wide, `
                    + `drawn ${el.naturalWidth} px`);
    if (el.matches('label, .widget-readout, .widget-html')
        && el.scrollWidth > el.clientWidth + tol)
      problems.push(`${name(el)}: its text is cut `
                    + `(${el.scrollWidth} px shown in ${el.clientWidth} px)`);
  }
  return problems;
}"""


#: the height of the view the figure must fit in (issue 25: 1280 x 800)
FOLD_PX = 800
#: bottom of the explorer's figure in page coordinates (px from the top of the page)
FIGURE_BOTTOM_JS = """(panel) => {
  const img = panel.querySelector('.widget-output img, .widget-image');
  return img ? img.getBoundingClientRect().bottom + window.scrollY : -1;
}"""


def _open_dashboard(page, url):
    """Load the dashboard; return its two tab panels once the first figure is shown."""
    page.goto(url, timeout=LOAD_MS, wait_until="commit")  # Voila streams: wait for widgets
    page.locator(".widget-tab .widget-output img, .widget-tab .widget-image").first.wait_for(
        timeout=LOAD_MS
    )
    return tab_panels(page)


def _show_tab(page, panels, i):
    return show_tab(page, panels, i, UPDATE_MS)


def _change(page, panel, kind, description, value):
    """Change a control as a user would: pick an option, type into a slider's read-out and
    press Enter, click a checkbox."""
    if kind == "dropdown":
        select = dropdown(panel, description)
        labels = select.locator("option").all_inner_texts()
        if value in labels:
            select.select_option(label=value)
        else:
            select.select_option(value)
    elif kind == "slider":
        readout = labelled(page, panel, "widget-slider", description).locator(".widget-readout")
        readout.click()
        page.keyboard.press("Control+A")
        page.keyboard.type(str(value))
        page.keyboard.press("Enter")
    else:
        box = panel.locator(".widget-checkbox", has_text=description).locator("input")
        if box.is_checked() != value:
            box.click()


def test_dashboard_every_control_redraws_the_figure_and_nothing_is_clipped(
    page, voila_url, artifacts
):
    """One change of every control of both explorers shows a new figure (no timing); at
    1280 px each control lies inside its row and the explorer, on the default example and
    with QM9_E's long warning shown (issue 25: the control column was squeezed, dropdown
    arrows and read-outs cut)."""
    panels = _open_dashboard(page, voila_url)
    missed, clipped = [], []
    for tab, kind, description, value in EVERY_CONTROL:
        panel = _show_tab(page, panels, tab)
        if description == "dataset":
            clipped += [f"{TABS[tab]}, default_example: {p}" for p in panel.evaluate(CLIP_JS)]
            # the whole figure above the fold of a 1280 x 800 view (page not scrolled)
            bottom = panel.evaluate(FIGURE_BOTTOM_JS)
            if not 0 < bottom <= FOLD_PX:
                clipped.append(
                    f"{TABS[tab]}: the figure ends at y = {bottom:.0f} px, below "
                    f"the fold of a 1280 x {FOLD_PX} view"
                )
        before = panel.evaluate(FIGURE_JS)
        _change(page, panel, kind, description, value)
        try:
            _wait_for_change(page, panel, FIGURE_JS, before, timeout=UPDATE_MS // 4)
        except Exception:  # noqa: BLE001 - a Playwright timeout: collect, report them all
            readouts = " | ".join(panel.locator(".widget-html").all_inner_texts())
            missed.append(
                f"{TABS[tab]}: {description} -> {value}: no new figure "
                f"(read-outs: {readouts.strip()!r})"
            )
        if description == "dataset":
            page.wait_for_function(
                "(el) => el.innerText.includes('\u26a0')",
                arg=panel.element_handle(),
                timeout=UPDATE_MS,
            )
            clipped += [
                f"{TABS[tab]}, {value} with its warning: {p}" for p in panel.evaluate(CLIP_JS)
            ]
            page.screenshot(path=artifacts / f"dashboard_{value}_tab{tab}.png", full_page=True)
    report = [f"no new figure: {m}" for m in missed] + [f"clipped: {c}" for c in clipped]
    assert report == [], "\n".join(report)
    assert page.errors == []


def test_dashboard_console_is_quiet_and_requests_stay_local(page, voila_url):
    """No console error or warning (version mismatches, widgets that fail to display) and no
    request beyond 127.0.0.1 (a CDN), while the page loads and a control of each tab changes."""
    panels = _open_dashboard(page, voila_url)
    for i, (kind, description, value) in enumerate(
        (("dropdown", "condition on", "X"), ("dropdown", "D", "Student t"))
    ):
        panel = _show_tab(page, panels, i)
        before = panel.evaluate(FIGURE_JS)
        _change(page, panel, kind, description, value)
        _wait_for_change(page, panel, FIGURE_JS, before)
    watch = page.watch
    found = (
        [f"console {m}" for m in watch.console]
        + [f"uncaught {e}" for e in watch.errors]
        + [f"request beyond 127.0.0.1: {r}" for r in watch.remote]
    )
    assert found == [], (
        f"{len(watch.console)} console errors/warnings, {len(watch.remote)} "
        "remote requests:\n" + "\n".join(found)
    )


def test_report_html_opens_with_every_figure(page, tmp_path, artifacts):
    _chromium()
    rep = uqviz.report(
        uqviz.synthetic.default_example(), n_boot=500, n_mc=100, rng=3, progress=False
    )
    paths = rep.save(tmp_path)
    page.goto(Path(paths["html"]).as_uri())
    n_images = page.evaluate("document.images.length")
    assert n_images == len(rep.figures) >= 3  # average, LZMS vs uE, LZMS vs X
    loaded = page.evaluate(
        "Array.from(document.images).every(i => i.complete && i.naturalWidth > 100)"
    )
    assert loaded, "a figure of the report did not decode"
    body = page.inner_text("body")
    for line in rep.conclusion:  # the verdict the library wrote is what a reader sees
        assert line.split(" (")[0] in body, line
    page.screenshot(path=artifacts / "report.png", full_page=True)
    assert page.errors == []


# ----------------------------------------------------------------- JupyterLab
def _sha256(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _tree_state(folder):
    """``{relative path: sha256}`` of every file under ``folder``."""
    folder = Path(folder)
    return {
        str(p.relative_to(folder)): _sha256(p) for p in sorted(folder.rglob("*")) if p.is_file()
    }


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """JupyterLab on a temporary copy of the repository's notebooks; stopped (kernels too) after
    (``tests.widgets.browser.lab_server``: nothing is written outside the temporary folder)."""
    _chromium()  # no server without a browser to drive it
    with lab_server(tmp_path_factory.mktemp("jupyterlab")) as server:
        yield server


def _grow_to_fit(page, element):
    """Make the window tall enough for ``element`` (JupyterLab scrolls inside the page, so a
    full-page screenshot would show only the window); return the previous size."""
    size = page.viewport_size
    height = element.evaluate("el => el.scrollHeight")
    page.set_viewport_size(
        {"width": size["width"], "height": int(min(size["height"] + height, 12_000))}
    )
    return size


def _screenshot_notebook(page, notebook, path):
    """The whole notebook, from its first cell."""
    scroller = notebook.locator(".jp-WindowedPanel-outer").first
    size = _grow_to_fit(page, scroller)
    try:
        scroller.evaluate("el => { el.scrollTop = 0; }")
        page.screenshot(path=path)
    finally:
        page.set_viewport_size(size)


def _screenshot_element(page, element, path):
    size = _grow_to_fit(page, element)
    try:
        element.scroll_into_view_if_needed()
        element.screenshot(path=path)
    finally:
        page.set_viewport_size(size)


def _wait_for_change(page, element, js, old, timeout=UPDATE_MS):
    """Wait until ``js(element)`` is truthy and differs from ``old``; return it."""
    page.wait_for_function(
        f"([el, old]) => {{ const v = ({js})(el); return v && v !== old; }}",
        arg=[element.element_handle(), old],
        timeout=timeout,
    )
    return element.evaluate(js)


def test_jupyterlab_runs_course_index(page, lab, artifacts):
    """Run All Cells of the course index in JupyterLab: no error, a live explorer, the report."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

    repo_nb = ROOT / LAB_NOTEBOOK
    repo_before = _tree_state(repo_nb.parent)
    copy_nb = lab["root"] / LAB_NOTEBOOK
    copy_before = _sha256(copy_nb)

    state, seconds = lab_run_all(page, lab["url"], LAB_NOTEBOOK, LOAD_MS, RUN_ALL_MS)
    print(
        f"JupyterLab: Run All Cells of {LAB_NOTEBOOK} ({len(state['counts'])} code cells) "
        f"took {seconds:.0f} s"
    )
    notebook = page.locator(".jp-NotebookPanel .jp-Notebook").first
    _screenshot_notebook(page, notebook, artifacts / "lab_index.png")
    assert state["errors"] == [], f"cells raised: {state['errors']}"
    assert all(n is not None for n in state["counts"]), state

    # no traceback anywhere (also inside widget outputs), no widget that failed to render
    stderr = notebook.locator(
        '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]'
    )
    tracebacks = [t for t in stderr.all_inner_texts() if "Traceback" in t]
    assert tracebacks == [], "\n\n".join(tracebacks)

    # the conditional explorer: located by its controls, not by its cell
    explorer = (
        notebook.locator(".jp-Cell .jp-OutputArea-output")
        .filter(has=labelled(page, page, "widget-dropdown", "condition on"))
        .filter(has=labelled(page, page, "widget-slider", "bins"))
        .first
    )
    try:
        explorer.wait_for(timeout=UPDATE_MS)
    except PlaywrightTimeoutError:
        n_failed = notebook.get_by_text("Error displaying widget").count()
        pytest.fail(
            f"no ConditionalExplorer shown by {LAB_NOTEBOOK}: no output has its "
            f"controls 'condition on' and 'bins' ({n_failed} 'Error displaying "
            "widget')",
            pytrace=False,
        )
    assert notebook.get_by_text("Error displaying widget").count() == 0
    explorer.scroll_into_view_if_needed()
    fv_label = explorer.locator(".widget-html", has_text="bins valid").first
    fv_label.wait_for(timeout=UPDATE_MS)
    page.wait_for_function(
        f"(el) => !!({FIGURE_JS})(el)", arg=explorer.element_handle(), timeout=UPDATE_MS
    )
    fig0, text0 = explorer.evaluate(FIGURE_JS), fv_label.inner_text()
    explorer.screenshot(path=artifacts / "lab_explorer_before.png")

    # another conditioning variable: new numbers, new figure
    conditioning = labelled(page, explorer, "widget-dropdown", "condition on").locator("select")
    options = conditioning.locator("option").all_inner_texts()
    new_var = next(o for o in options if o != conditioning.input_value())
    conditioning.select_option(new_var)
    page.wait_for_function(
        "([el, old]) => el.innerText !== old && el.innerText.includes('valid')",
        arg=[fv_label.element_handle(), text0],
        timeout=UPDATE_MS,
    )
    fig1 = _wait_for_change(page, explorer, FIGURE_JS, fig0)
    text1 = fv_label.inner_text()

    # another number of bins, typed into the slider's readout
    readout = labelled(page, explorer, "widget-slider", "bins").locator(".widget-readout")
    n_bins = 10 if readout.inner_text().strip() != "10" else 12
    readout.click()
    page.keyboard.press("Control+A")
    page.keyboard.type(str(n_bins))
    page.keyboard.press("Enter")
    page.wait_for_function(
        "([el, s]) => el.innerText.includes(s)",
        arg=[fv_label.element_handle(), f"of {n_bins} bins valid"],
        timeout=UPDATE_MS,
    )
    fig2 = _wait_for_change(page, explorer, FIGURE_JS, fig1)
    assert len({fig0, fig1, fig2}) == 3 and len({text0, text1, fv_label.inner_text()}) == 3
    explorer.screenshot(path=artifacts / "lab_explorer_after.png")

    # the inline report: its HTML, with every figure decoded
    report = notebook.locator(".jp-OutputArea-output .uqviz-report").first
    report.wait_for(timeout=UPDATE_MS)
    report.scroll_into_view_if_needed()
    assert "Conclusion" in report.inner_text()
    assert report.evaluate("el => el.querySelectorAll('img').length") >= 3
    assert report.evaluate(
        "el => Array.from(el.querySelectorAll('img'))"
        ".every(i => i.complete && i.naturalWidth > 100)"
    )
    _screenshot_element(page, report, artifacts / "lab_report.png")

    assert notebook.get_by_text("Error displaying widget").count() == 0
    final = page.evaluate(LAB_STATE_JS, LAB_NOTEBOOK)
    assert final["errors"] == [], f"a control change raised: {final['errors']}"
    assert page.errors == []
    # nothing was saved: neither the copy JupyterLab served nor the repository changed
    assert _sha256(copy_nb) == copy_before, "JupyterLab saved the notebook (autosave?)"
    assert _tree_state(repo_nb.parent) == repo_before
