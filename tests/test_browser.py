"""End-to-end in a real browser: the Voila dashboard and the HTML report.

Headless Chromium (Debian's ``chromium`` package, no browser download) is
driven by Playwright. The dashboard notebook is served by Voila on loopback;
the test changes a control, as a student would, and checks that the figure is
redrawn and that the numbers shown equal the library's for the new settings.
Screenshots are saved in ``test-artifacts/`` (``UQVIZ_ARTIFACTS`` overrides).

``make test`` makes sure Chromium is there (``scripts/ensure-chromium``); a
missing browser is a failure that says how to get one, never a skip.
"""

from __future__ import annotations

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

ROOT = Path(__file__).resolve().parents[1]
DASHBOARD = ROOT / "notebooks" / "05_dashboard.ipynb"
#: flags for a root, offline, screenless machine (no sandbox, no background connections)
CHROMIUM_FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update",
                  "--disable-sync", "--disable-dev-shm-usage"]
#: generous: the first kernel imports numba-compiled kernels and runs both explorers
LOAD_MS = 300_000
UPDATE_MS = 120_000


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


def _wait_for_port(port, proc, log, timeout=120.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"voila exited with code {proc.returncode}:\n{log.read_text()}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    raise TimeoutError(f"voila did not listen on port {port} in {timeout:.0f} s:\n"
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

    page.goto(voila_url, timeout=LOAD_MS)
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

    page.goto(voila_url, timeout=LOAD_MS)
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
