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
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

import uqviz
from uqviz.widgets import ConditionalExplorer, ReferenceExplorer

ROOT = Path(__file__).resolve().parents[2]
DASHBOARD = ROOT / "notebooks" / "05_dashboard.ipynb"
#: the course index, opened in JupyterLab (relative to the repository root)
LAB_NOTEBOOK = "notebooks/00_index.ipynb"
#: flags for a root, offline, screenless machine (no sandbox, no background connections)
CHROMIUM_FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update",
                  "--disable-sync", "--disable-dev-shm-usage"]
#: generous: the first kernel imports numba-compiled kernels and runs both explorers
LOAD_MS = 600_000
UPDATE_MS = 120_000
#: running every cell of the course index (numba compilation, the full-size report)
RUN_ALL_MS = 1_200_000


def _chromium():
    path = (os.environ.get("UQVIZ_CHROMIUM") or shutil.which("chromium")
            or shutil.which("chromium-browser"))
    if path:
        return path
    pytest.fail("no Chromium executable: `make test` installs Debian's 'chromium' "
                "(scripts/ensure-chromium); or set UQVIZ_CHROMIUM to a Chromium binary",
                pytrace=False)


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
    """A fresh page; uncaught JavaScript errors are collected in ``page.errors``."""
    context = browser.new_context(viewport={"width": 1280, "height": 1000})
    pg = context.new_page()
    pg.errors = []
    pg.on("pageerror", lambda exc: pg.errors.append(str(exc)))
    yield pg
    context.close()


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_for_port(port, proc, log, timeout=120.0, name="voila"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{name} exited with code {proc.returncode}:\n{log.read_text()}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    raise TimeoutError(f"{name} did not listen on port {port} in {timeout:.0f} s:\n"
                       f"{log.read_text()}")


@pytest.fixture(scope="module")
def voila_url(tmp_path_factory):
    """Serve the dashboard notebook with Voila on loopback; stop it (and its kernels) after."""
    _chromium()  # no server without a browser to drive it
    port = _free_port()
    log = tmp_path_factory.mktemp("voila") / "voila.log"
    cmd = [sys.executable, "-m", "voila", str(DASHBOARD), "--no-browser", f"--port={port}",
           "--Voila.ip=127.0.0.1", "--Voila.port_retries=0", "--show_tracebacks=True"]
    with open(log, "w") as fh:
        proc = subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT, cwd=ROOT,
                                start_new_session=True)
    try:
        _wait_for_port(port, proc, log)
        yield f"http://127.0.0.1:{port}/"
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def _dropdown(panel, description):
    """The <select> of the dropdown whose description is exactly ``description``."""
    label = panel.page.locator("label", has_text=re.compile(f"^{re.escape(description)}$"))
    return panel.locator(".widget-dropdown", has=label).locator("select")


def _png_sources(locator):
    return [img.get_attribute("src") for img in locator.all()]


def _wait_for_new_plot(page, panel, old_src):
    """Wait until the panel's figure is a PNG other than ``old_src``; return its source."""
    page.wait_for_function(
        """([panel, old]) => {
             const img = panel.querySelector('.widget-output img');
             return img && img.complete && img.naturalWidth > 0 && img.src !== old;
           }""", arg=[panel.element_handle(), old_src], timeout=UPDATE_MS)
    return panel.locator(".widget-output img").first.get_attribute("src")


def _fv_text(fv):
    """The f_v label exactly as the explorer writes it (numbers to 2 decimals)."""
    est, lo, hi = (float(fv[k]) for k in ("estimate", "ci_lower", "ci_upper"))
    return (f"95% CI [{lo:.2f}, {hi:.2f}]", f"= {est:.2f}",
            f"{int(fv['n_valid'])} of {int(fv['n_bins'])} bins valid")


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
    assert src0.startswith("data:image/png;base64,")
    page.screenshot(path=artifacts / "dashboard_before.png", full_page=True)

    _dropdown(panel, "condition on").select_option("X")
    page.wait_for_function(
        "([el, s]) => el.innerText.includes(s)",
        arg=[fv_label.element_handle(), after[2]], timeout=UPDATE_MS)
    src1 = _wait_for_new_plot(page, panel, src0)
    text = fv_label.inner_text()
    assert all(part in text for part in after), text
    assert src1 != src0 and len(_png_sources(panel.locator(".widget-output img"))) == 1
    page.screenshot(path=artifacts / "dashboard_after.png", full_page=True)
    assert page.errors == []


def test_dashboard_reference_tab_follows_generative_distribution(page, voila_url, artifacts):
    expected = ReferenceExplorer(uqviz.synthetic.default_example(), n_mc=300, n_boot=300)
    ref_normal = f"D = {expected.result.attrs['generative']}"
    expected.generative.value = "t"
    res = expected.result
    ref_t = (f"D = {res.attrs['generative']}, {res.attrs['n_bins']} bins) = "
             f"{float(res['reference']):.4g}")

    page.goto(voila_url, timeout=LOAD_MS, wait_until="commit")  # Voila streams: wait for widgets
    page.locator(".widget-tab .widget-output img").first.wait_for(timeout=LOAD_MS)
    page.get_by_role("tab", name="Simulated references").click()
    panel = page.locator(".widget-tab .widget-vbox", has_text="MC interval").first
    summary = panel.locator(".widget-html", has_text="MC interval").first
    assert ref_normal in summary.inner_text()
    src0 = panel.locator(".widget-output img").first.get_attribute("src")

    _dropdown(panel, "D").select_option(
        label="Student t")
    page.wait_for_function("([el, s]) => el.innerText.includes(s)",
                           arg=[summary.element_handle(), ref_t], timeout=UPDATE_MS)
    _wait_for_new_plot(page, panel, src0)
    page.screenshot(path=artifacts / "dashboard_reference.png", full_page=True)
    assert page.errors == []


def test_report_html_opens_with_every_figure(page, tmp_path, artifacts):
    _chromium()
    rep = uqviz.report(uqviz.synthetic.default_example(), n_boot=500, n_mc=100, rng=3,
                       progress=False)
    paths = rep.save(tmp_path)
    page.goto(Path(paths["html"]).as_uri())
    n_images = page.evaluate("document.images.length")
    assert n_images == len(rep.figures) >= 3  # average, LZMS vs uE, LZMS vs X
    loaded = page.evaluate(
        "Array.from(document.images).every(i => i.complete && i.naturalWidth > 100)")
    assert loaded, "a figure of the report did not decode"
    body = page.inner_text("body")
    for line in rep.conclusion:  # the verdict the library wrote is what a reader sees
        assert line.split(" (")[0] in body, line
    page.screenshot(path=artifacts / "report.png", full_page=True)
    assert page.errors == []


# ----------------------------------------------------------------- JupyterLab
#: user settings of the test's JupyterLab: never save the notebook (autosave would write
#: outputs into it), attach every cell to the page (so that every output can be inspected),
#: no network (news, update checks)
LAB_SETTINGS = {
    "@jupyterlab/docmanager-extension/plugin": {"autosave": False},
    "@jupyterlab/notebook-extension/tracker": {"windowingMode": "none"},
    "@jupyterlab/apputils-extension/notification": {"fetchNews": "false",
                                                    "checkForUpdates": False},
}

#: the notebook's state, read from JupyterLab's models (``window.jupyterapp``)
LAB_STATE_JS = """(path) => {
  const app = window.jupyterapp;
  if (!app) return null;
  const panel = Array.from(app.shell.widgets('main'))
    .find(w => w.context && w.context.path === path);
  if (!panel || !panel.context.isReady) return null;
  const session = panel.sessionContext;
  const kernel = session.session && session.session.kernel;
  const cells = panel.content.widgets.filter(c => c.model.type === 'code');
  const errors = [];
  cells.forEach((c, i) => {
    const first = c.model.sharedModel.getSource().split('\\n')[0];
    for (const o of c.model.outputs.toJSON()) {
      if (o.output_type === 'error') {
        errors.push(`code cell ${i + 1} (${first}): ${o.ename}: ${o.evalue}`);
      }
    }
  });
  return {
    ready: session.isReady,
    kernel: kernel ? kernel.status : null,
    counts: cells.map(c => c.model.executionCount),
    running: cells.filter(c => {
      const prompt = c.node.querySelector('.jp-InputPrompt');
      return c.model.executionState === 'running' || (prompt && prompt.textContent.includes('*'));
    }).length,
    errors,
  };
}"""

#: a fingerprint of the explorer's figure: the inline PNG, or the ipympl canvas
FIGURE_JS = """(el) => {
  const img = el.querySelector('.widget-output img');
  if (img) return img.complete && img.naturalWidth > 0 ? img.src : null;
  const canvas = el.querySelector('.jupyter-matplotlib canvas');
  return canvas && canvas.width > 0 ? canvas.toDataURL() : null;
}"""


def _sha256(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _tree_state(folder):
    """``{relative path: sha256}`` of every file under ``folder``."""
    folder = Path(folder)
    return {str(p.relative_to(folder)): _sha256(p) for p in sorted(folder.rglob("*"))
            if p.is_file()}


def _processes_mentioning(text):
    """PIDs of the processes whose command line contains ``text`` (Linux /proc)."""
    pids = []
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            cmdline = (entry / "cmdline").read_bytes().decode("utf-8", "replace")
        except OSError:
            continue
        if text in cmdline.replace("\0", " ") and int(entry.name) != os.getpid():
            pids.append(int(entry.name))
    return pids


def _stop_server(proc, timeout=60):
    """SIGTERM: the Jupyter server shuts its kernels down, then exits; SIGKILL if it hangs."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """JupyterLab on a temporary copy of the repository's notebooks; stopped (kernels too) after.

    Token-less and password-less on 127.0.0.1 and a free port; every Jupyter/IPython
    directory (config, data, runtime, settings, workspaces) is temporary, so nothing is
    written outside the temporary folder. The kernel imports this checkout's uqviz.
    """
    _chromium()  # no server without a browser to drive it
    base = tmp_path_factory.mktemp("jupyterlab")
    root = base / "root"  # laid out as the repository, so relative links resolve
    ignore = shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__", "_build")
    shutil.copytree(ROOT / "notebooks", root / "notebooks", ignore=ignore)
    if (ROOT / "docs").is_dir():
        shutil.copytree(ROOT / "docs", root / "docs", ignore=ignore)
    dirs = {name: base / name for name in ("config", "data", "runtime", "ipython", "settings",
                                           "workspaces")}
    for d in dirs.values():
        d.mkdir()
    for plugin, values in LAB_SETTINGS.items():
        path = dirs["settings"] / f"{plugin}.jupyterlab-settings"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values))

    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("JUPYTER", "IPYTHON")) and k != "MPLBACKEND"}
    env.update(JUPYTER_CONFIG_DIR=str(dirs["config"]), JUPYTER_DATA_DIR=str(dirs["data"]),
               JUPYTER_RUNTIME_DIR=str(dirs["runtime"]), IPYTHONDIR=str(dirs["ipython"]),
               JUPYTERLAB_SETTINGS_DIR=str(dirs["settings"]),
               JUPYTERLAB_WORKSPACES_DIR=str(dirs["workspaces"]),
               PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")])))
    port = _free_port()
    log = base / "jupyterlab.log"
    cmd = [sys.executable, "-m", "jupyterlab", "--no-browser", "--ServerApp.ip=127.0.0.1",
           f"--ServerApp.port={port}", "--ServerApp.port_retries=0",
           f"--ServerApp.root_dir={root}", "--IdentityProvider.token=",
           "--PasswordIdentityProvider.hashed_password=", "--ServerApp.allow_root=True",
           "--ServerApp.terminals_enabled=False", "--LabApp.expose_app_in_browser=True",
           f"--LabApp.user_settings_dir={dirs['settings']}",
           f"--LabApp.workspaces_dir={dirs['workspaces']}"]
    with open(log, "w") as fh:
        proc = subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT, cwd=root, env=env,
                                start_new_session=True)
    try:
        _wait_for_port(port, proc, log, name="jupyter lab")
        yield {"url": f"http://127.0.0.1:{port}/", "root": root}
    finally:
        _stop_server(proc)
        # kernels run in sessions of their own: any left would hold our connection file
        leftovers = _processes_mentioning(str(dirs["runtime"]))
        for pid in leftovers:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        assert not leftovers, f"kernels outlived the Jupyter server: {leftovers}"


def _labelled(page, container, kind, description):
    """The ipywidgets control of class ``kind`` whose description is exactly ``description``."""
    label = page.locator("label", has_text=re.compile(f"^{re.escape(description)}$"))
    return container.locator(f".{kind}", has=label)


def _grow_to_fit(page, element):
    """Make the window tall enough for ``element`` (JupyterLab scrolls inside the page, so a
    full-page screenshot would show only the window); return the previous size."""
    size = page.viewport_size
    height = element.evaluate("el => el.scrollHeight")
    page.set_viewport_size({"width": size["width"],
                            "height": int(min(size["height"] + height, 12_000))})
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
    page.wait_for_function(f"([el, old]) => {{ const v = ({js})(el); return v && v !== old; }}",
                           arg=[element.element_handle(), old], timeout=timeout)
    return element.evaluate(js)


def test_jupyterlab_runs_course_index(page, lab, artifacts):
    """Run All Cells of the course index in JupyterLab: no error, a live explorer, the report."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

    repo_nb = ROOT / LAB_NOTEBOOK
    repo_before = _tree_state(repo_nb.parent)
    copy_nb = lab["root"] / LAB_NOTEBOOK
    copy_before = _sha256(copy_nb)

    page.goto(f"{lab['url']}lab/tree/{LAB_NOTEBOOK}", timeout=LOAD_MS)
    page.wait_for_function(f"(p) => {{ const s = ({LAB_STATE_JS})(p); "
                           "return s && s.ready && s.kernel === 'idle'; }",
                           arg=LAB_NOTEBOOK, timeout=LOAD_MS)
    # Run > Run All Cells, as a student would
    page.locator(".lm-MenuBar-itemLabel", has_text=re.compile("^Run$")).click()
    page.locator(".lm-Menu-itemLabel", has_text=re.compile("^Run All Cells$")).click()
    t0 = time.monotonic()
    page.wait_for_function(
        f"""(p) => {{
          const s = ({LAB_STATE_JS})(p);
          if (!s || s.kernel !== 'idle') return false;
          return s.errors.length > 0 || (s.counts.every(n => n !== null) && s.running === 0);
        }}""", arg=LAB_NOTEBOOK, timeout=RUN_ALL_MS, polling=1000)
    state = page.evaluate(LAB_STATE_JS, LAB_NOTEBOOK)
    print(f"JupyterLab: Run All Cells of {LAB_NOTEBOOK} ({len(state['counts'])} code cells) "
          f"took {time.monotonic() - t0:.0f} s")
    notebook = page.locator(".jp-NotebookPanel .jp-Notebook").first
    _screenshot_notebook(page, notebook, artifacts / "lab_index.png")
    assert state["errors"] == [], f"cells raised: {state['errors']}"
    assert all(n is not None for n in state["counts"]), state

    # no traceback anywhere (also inside widget outputs), no widget that failed to render
    stderr = notebook.locator(
        '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]')
    tracebacks = [t for t in stderr.all_inner_texts() if "Traceback" in t]
    assert tracebacks == [], "\n\n".join(tracebacks)

    # the conditional explorer: located by its controls, not by its cell
    explorer = (notebook.locator(".jp-Cell .jp-OutputArea-output")
                .filter(has=_labelled(page, page, "widget-dropdown", "condition on"))
                .filter(has=_labelled(page, page, "widget-slider", "bins")).first)
    try:
        explorer.wait_for(timeout=UPDATE_MS)
    except PlaywrightTimeoutError:
        n_failed = notebook.get_by_text("Error displaying widget").count()
        pytest.fail(f"no ConditionalExplorer shown by {LAB_NOTEBOOK}: no output has its "
                    f"controls 'condition on' and 'bins' ({n_failed} 'Error displaying "
                    "widget')", pytrace=False)
    assert notebook.get_by_text("Error displaying widget").count() == 0
    explorer.scroll_into_view_if_needed()
    fv_label = explorer.locator(".widget-html", has_text="bins valid").first
    fv_label.wait_for(timeout=UPDATE_MS)
    page.wait_for_function(f"(el) => !!({FIGURE_JS})(el)", arg=explorer.element_handle(),
                           timeout=UPDATE_MS)
    fig0, text0 = explorer.evaluate(FIGURE_JS), fv_label.inner_text()
    explorer.screenshot(path=artifacts / "lab_explorer_before.png")

    # another conditioning variable: new numbers, new figure
    conditioning = _labelled(page, explorer, "widget-dropdown", "condition on").locator("select")
    options = conditioning.locator("option").all_inner_texts()
    new_var = next(o for o in options if o != conditioning.input_value())
    conditioning.select_option(new_var)
    page.wait_for_function("([el, old]) => el.innerText !== old && el.innerText.includes('valid')",
                           arg=[fv_label.element_handle(), text0], timeout=UPDATE_MS)
    fig1 = _wait_for_change(page, explorer, FIGURE_JS, fig0)
    text1 = fv_label.inner_text()

    # another number of bins, typed into the slider's readout
    readout = _labelled(page, explorer, "widget-slider", "bins").locator(".widget-readout")
    n_bins = 10 if readout.inner_text().strip() != "10" else 12
    readout.click()
    page.keyboard.press("Control+A")
    page.keyboard.type(str(n_bins))
    page.keyboard.press("Enter")
    page.wait_for_function("([el, s]) => el.innerText.includes(s)",
                           arg=[fv_label.element_handle(), f"of {n_bins} bins valid"],
                           timeout=UPDATE_MS)
    fig2 = _wait_for_change(page, explorer, FIGURE_JS, fig1)
    assert len({fig0, fig1, fig2}) == 3 and len({text0, text1, fv_label.inner_text()}) == 3
    explorer.screenshot(path=artifacts / "lab_explorer_after.png")

    # the inline report: its HTML, with every figure decoded
    report = notebook.locator(".jp-OutputArea-output .uqviz-report").first
    report.wait_for(timeout=UPDATE_MS)
    report.scroll_into_view_if_needed()
    assert "Conclusion" in report.inner_text()
    assert report.evaluate("el => el.querySelectorAll('img').length") >= 3
    assert report.evaluate("el => Array.from(el.querySelectorAll('img'))"
                           ".every(i => i.complete && i.naturalWidth > 100)")
    _screenshot_element(page, report, artifacts / "lab_report.png")

    assert notebook.get_by_text("Error displaying widget").count() == 0
    final = page.evaluate(LAB_STATE_JS, LAB_NOTEBOOK)
    assert final["errors"] == [], f"a control change raised: {final['errors']}"
    assert page.errors == []
    # nothing was saved: neither the copy JupyterLab served nor the repository changed
    assert _sha256(copy_nb) == copy_before, "JupyterLab saved the notebook (autosave?)"
    assert _tree_state(repo_nb.parent) == repo_before
