"""Machinery of the browser runs: Chromium, the Voila and JupyterLab servers, page watchers.

Shared by the browser tests (``tests/widgets/test_browser.py``), the dashboard benchmark
(``benchmarks/bench_dashboard.py``) and the documentation screenshots
(``scripts/docs-screenshots``). It imports neither pytest nor uqviz: a missing browser or a
server that does not start raises an error that says what to do; the tests turn it into a
failure.

Servers listen on 127.0.0.1 and a free port, in a process group of their own, and are stopped
with their kernels when the context manager exits.
"""

from __future__ import annotations

import contextlib
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
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parents[2]
DASHBOARD = ROOT / "notebooks" / "05_dashboard.ipynb"
#: flags for a root, offline, screenless machine (no sandbox, no background connections)
CHROMIUM_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]
#: the window of the dashboard checks: a laptop screen
VIEWPORT = {"width": 1280, "height": 1000}
#: hosts a page may reach: the local servers only
LOCAL_HOSTS = ("127.0.0.1", "localhost", "[::1]", "::1")


def chromium_path():
    """``$UQVIZ_CHROMIUM``, ``chromium`` or ``chromium-browser`` on PATH; None when none."""
    return (
        os.environ.get("UQVIZ_CHROMIUM")
        or shutil.which("chromium")
        or shutil.which("chromium-browser")
    )


#: what to do without a browser (the tests fail with it, the scripts exit with it)
NO_CHROMIUM = (
    "no Chromium executable: `make test` installs Debian's 'chromium' "
    "(scripts/ensure-chromium); or set UQVIZ_CHROMIUM to a Chromium binary"
)


def free_port():
    """A free TCP port on 127.0.0.1."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port, proc, log, timeout=120.0, name="voila"):
    """Wait until ``proc`` listens on ``port``; raise with its log if it exits or times out."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{name} exited with code {proc.returncode}:\n{log.read_text()}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    raise TimeoutError(
        f"{name} did not listen on port {port} in {timeout:.0f} s:\n{log.read_text()}"
    )


def processes_mentioning(text):
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


def stop_server(proc, timeout=60):
    """SIGTERM: the Jupyter server shuts its kernels down, then exits; SIGKILL if it hangs."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def _kernel_env(extra=None):
    """This environment with the checkout first on PYTHONPATH (the kernels import its uqviz)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env.update(extra or {})
    return env


@contextlib.contextmanager
def voila_server(log, notebook=DASHBOARD, args=(), env=None):
    """Serve ``notebook`` with Voila on 127.0.0.1; yield its URL; stop it and its kernels after.

    Parameters
    ----------
    log : pathlib.Path
        The server's output.
    args : sequence of str
        More Voila options (e.g. ``--preheat_kernel=True``, ``--pool_size=1``).
    env : dict, optional
        Variables added to the environment of the server and its kernels
        (e.g. ``NUMBA_CACHE_DIR``).
    """
    port = free_port()
    cmd = [
        sys.executable,
        "-m",
        "voila",
        str(notebook),
        "--no-browser",
        f"--port={port}",
        "--Voila.ip=127.0.0.1",
        "--Voila.port_retries=0",
        "--show_tracebacks=True",
        *args,
    ]
    with open(log, "w") as fh:
        proc = subprocess.Popen(
            cmd,
            stdout=fh,
            stderr=subprocess.STDOUT,
            cwd=ROOT,
            env=_kernel_env(env),
            start_new_session=True,
        )
    try:
        wait_for_port(port, proc, Path(log))
        yield f"http://127.0.0.1:{port}/"
    finally:
        stop_group(proc)


def stop_group(proc, timeout=20):
    """SIGTERM to the process group of ``proc`` (a server and its kernels); SIGKILL if it
    hangs."""
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


# ----------------------------------------------------------------- JupyterLab
#: user settings of the JupyterLab runs: never save the notebook (autosave would write
#: outputs into it), attach every cell to the page (so that every output can be inspected),
#: no network (news, update checks)
LAB_SETTINGS = {
    "@jupyterlab/docmanager-extension/plugin": {"autosave": False},
    "@jupyterlab/notebook-extension/tracker": {"windowingMode": "none"},
    "@jupyterlab/apputils-extension/notification": {"fetchNews": "false", "checkForUpdates": False},
}


@contextlib.contextmanager
def lab_server(base, env=None):
    """JupyterLab on a copy of the repository's notebooks (and docs) under ``base``.

    Token-less and password-less on 127.0.0.1 and a free port; every Jupyter/IPython
    directory (config, data, runtime, settings, workspaces) is under ``base``, so nothing
    is written elsewhere. The kernel imports this checkout's uqviz. Yields
    ``{"url", "root"}``; the server and its kernels are stopped after. Raises
    RuntimeError when a kernel outlived the server.
    """
    base = Path(base)
    root = base / "root"  # laid out as the repository, so relative links resolve
    ignore = shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__", "_build")
    shutil.copytree(ROOT / "notebooks", root / "notebooks", ignore=ignore)
    if (ROOT / "docs").is_dir():
        shutil.copytree(ROOT / "docs", root / "docs", ignore=ignore)
    dirs = {
        name: base / name
        for name in ("config", "data", "runtime", "ipython", "settings", "workspaces")
    }
    for d in dirs.values():
        d.mkdir()
    for plugin, values in LAB_SETTINGS.items():
        path = dirs["settings"] / f"{plugin}.jupyterlab-settings"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values))

    env = {
        k: v
        for k, v in _kernel_env(env).items()
        if not k.startswith(("JUPYTER", "IPYTHON")) and k != "MPLBACKEND"
    }
    env.update(
        JUPYTER_CONFIG_DIR=str(dirs["config"]),
        JUPYTER_DATA_DIR=str(dirs["data"]),
        JUPYTER_RUNTIME_DIR=str(dirs["runtime"]),
        IPYTHONDIR=str(dirs["ipython"]),
        JUPYTERLAB_SETTINGS_DIR=str(dirs["settings"]),
        JUPYTERLAB_WORKSPACES_DIR=str(dirs["workspaces"]),
    )
    port = free_port()
    log = base / "jupyterlab.log"
    cmd = [
        sys.executable,
        "-m",
        "jupyterlab",
        "--no-browser",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        f"--ServerApp.root_dir={root}",
        "--IdentityProvider.token=",
        "--PasswordIdentityProvider.hashed_password=",
        "--ServerApp.allow_root=True",
        "--ServerApp.terminals_enabled=False",
        "--LabApp.expose_app_in_browser=True",
        f"--LabApp.user_settings_dir={dirs['settings']}",
        f"--LabApp.workspaces_dir={dirs['workspaces']}",
    ]
    with open(log, "w") as fh:
        proc = subprocess.Popen(
            cmd, stdout=fh, stderr=subprocess.STDOUT, cwd=root, env=env, start_new_session=True
        )
    try:
        wait_for_port(port, proc, log, name="jupyter lab")
        yield {"url": f"http://127.0.0.1:{port}/", "root": root}
    finally:
        stop_server(proc)
        # kernels run in sessions of their own: any left would hold our connection file
        leftovers = processes_mentioning(str(dirs["runtime"]))
        for pid in leftovers:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if leftovers:
            raise RuntimeError(f"kernels outlived the Jupyter server: {leftovers}")


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


def lab_run_all(page, url, notebook, load_ms, run_ms):
    """Open ``notebook`` (a path relative to the Lab root) and run Run > Run All Cells, as a
    student would; wait until every cell ran or one failed. Returns the final state
    (:data:`LAB_STATE_JS`) and the run time in seconds."""
    page.goto(f"{url}lab/tree/{notebook}", timeout=load_ms)
    page.wait_for_function(
        f"(p) => {{ const s = ({LAB_STATE_JS})(p); return s && s.ready && s.kernel === 'idle'; }}",
        arg=notebook,
        timeout=load_ms,
    )
    page.locator(".lm-MenuBar-itemLabel", has_text=re.compile("^Run$")).click()
    page.locator(".lm-Menu-itemLabel", has_text=re.compile("^Run All Cells$")).click()
    t0 = time.monotonic()
    page.wait_for_function(
        f"""(p) => {{
          const s = ({LAB_STATE_JS})(p);
          if (!s || s.kernel !== 'idle') return false;
          return s.errors.length > 0 || (s.counts.every(n => n !== null) && s.running === 0);
        }}""",
        arg=notebook,
        timeout=run_ms,
        polling=1000,
    )
    return page.evaluate(LAB_STATE_JS, notebook), time.monotonic() - t0


# ----------------------------------------------------------------- pages
def labelled(page, container, kind, description):
    """The ipywidgets control of class ``kind`` (e.g. ``widget-dropdown``) in ``container``
    whose description is exactly ``description``."""
    label = page.locator("label", has_text=re.compile(f"^{re.escape(description)}$"))
    return container.locator(f".{kind}", has=label)


def dropdown(panel, description):
    """The <select> of the dropdown whose description is exactly ``description``."""
    return labelled(panel.page, panel, "widget-dropdown", description).locator("select")


#: a fingerprint of an explorer's figure: the inline PNG, or the ipympl canvas
FIGURE_JS = """(el) => {
  const img = el.querySelector('.widget-output img, .widget-image');
  if (img) return img.complete && img.naturalWidth > 0 ? img.src : null;
  const canvas = el.querySelector('.jupyter-matplotlib canvas');
  return canvas && canvas.width > 0 ? canvas.toDataURL() : null;
}"""


def is_local(url):
    """True for a URL that stays on this machine (loopback, data:, blob:, about:, file:)."""
    parts = urlsplit(url)
    if parts.scheme in ("data", "blob", "about", "file", "chrome-extension", "devtools"):
        return True
    return parts.hostname in {h.strip("[]") for h in LOCAL_HOSTS}


class PageWatch:
    """What a page reports while it lives: console errors and warnings, uncaught exceptions,
    requests that leave 127.0.0.1.

    Attributes
    ----------
    console : list of str
        ``"<type>: <text> (<url>:<line>)"`` of every console message of type error or warning.
    errors : list of str
        Uncaught JavaScript exceptions (``pageerror``).
    remote : list of str
        ``"<method> <url>"`` of every request to a host other than the loopback.
    """

    def __init__(self, page):
        self.console, self.errors, self.remote = [], [], []
        page.on("console", self._on_console)
        page.on("pageerror", lambda exc: self.errors.append(str(exc)))
        page.on("request", self._on_request)

    def _on_console(self, msg):
        if msg.type in ("error", "warning"):
            loc = msg.location or {}
            where = f" ({loc.get('url', '')}:{loc.get('lineNumber', '')})" if loc else ""
            self.console.append(f"{msg.type}: {msg.text}{where}")

    def _on_request(self, request):
        if not is_local(request.url):
            self.remote.append(f"{request.method} {request.url}")


#: the dashboard's two tabs (notebooks/05_dashboard.ipynb)
TABS = ("Local calibration", "Simulated references")


def tab_panels(page):
    """The dashboard's tab panels, in the order of :data:`TABS`."""
    return [
        page.locator(".widget-tab .widget-tab-contents > .lm-Widget").nth(i)
        for i in range(len(TABS))
    ]


def show_tab(page, panels, i, timeout):
    """Click tab ``i``; return its panel once it shows a figure."""
    page.get_by_role("tab", name=TABS[i]).click()
    panels[i].wait_for(state="visible", timeout=timeout)
    page.wait_for_function(
        f"(el) => !!({FIGURE_JS})(el)", arg=panels[i].element_handle(), timeout=timeout
    )
    return panels[i]
