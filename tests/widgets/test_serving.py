"""The dashboard's Voila server: a page that loads nothing from elsewhere and whose widget
extensions agree with the JupyterLab that Voila bundles (issue 25, item 3, server side).

Voila is started on a one-cell notebook with the repository's ``voila.json`` (template
``uqviz``, extension allowlist) and the page it sends is read over HTTP, as the browser
would fetch it, without a browser: the HTML, its page configuration, and the JavaScript
modules it names. The browser-side checks (console, requests, rendering) are in
``test_browser.py``. The explorers and the dashboard create no progress-bar widget (a tqdm
bar closed before the page renders is Voila's "Error displaying widget: model not found").
"""

from __future__ import annotations

import ast
import inspect
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

import uqviz
from tests.widgets.browser import free_port, stop_group

ROOT = Path(__file__).resolve().parents[2]
#: notebooks served as apps (Voila): no progress bar may appear in them
DASHBOARDS = [ROOT / "notebooks" / "05_dashboard.ipynb"]
#: the shared modules that Voila's bundled JupyterLab provides to every extension
CORE_SCOPES = ("@jupyterlab/", "@lumino/")


def _get(url, timeout=120):
    with urllib.request.urlopen(url, timeout=timeout) as response:
        assert response.status == 200, (url, response.status)
        return response.read().decode("utf-8")


@pytest.fixture(scope="module")
def voila_page(tmp_path_factory):
    """``(base url, html)`` of a one-cell notebook served by Voila (serving its folder, so
    that the tree and error pages exist too) with the repository's ``voila.json``; the server
    and its kernel are stopped after the module."""
    import nbformat

    folder = tmp_path_factory.mktemp("voila-serving")
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("1 + 1")]
    nbformat.write(nb, folder / "page.ipynb")
    shutil.copy(ROOT / "voila.json", folder / "voila.json")  # Voila reads it from its cwd
    port = free_port()
    # the repository's template, also when this checkout's is not installed in the prefix
    env = {
        **os.environ,
        "JUPYTER_PATH": os.pathsep.join(
            filter(None, [str(ROOT / "share" / "jupyter"), os.environ.get("JUPYTER_PATH")])
        ),
    }
    log = folder / "voila.log"
    with open(log, "w") as fh:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "voila",
                "--no-browser",
                f"--port={port}",
                "--Voila.ip=127.0.0.1",
                "--Voila.port_retries=0",
            ],
            cwd=folder,
            env=env,
            stdout=fh,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    base = f"http://127.0.0.1:{port}/"
    try:
        deadline = time.monotonic() + 120
        while True:
            if proc.poll() is not None:
                pytest.fail(f"voila exited with code {proc.returncode}:\n{log.read_text()}")
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            if time.monotonic() > deadline:
                pytest.fail(f"voila did not listen in 120 s:\n{log.read_text()}")
            time.sleep(0.2)
        yield base, _get(base + "voila/render/page.ipynb")
    finally:
        stop_group(proc)


def _page_config(html):
    found = re.search(
        r'<script id="jupyter-config-data" type="application/json">(.*?)</script>', html, re.S
    )
    assert found, "no page configuration in Voila's page"
    return json.loads(found.group(1))


def _version(text):
    return tuple(int(x) for x in text.split("-")[0].split(".")[:3])


def provided_versions(js):
    """``{module: [version, ...]}`` that a webpack bundle registers in the shared scope."""
    out = {}
    for name, version in re.findall(r'\w\("(@?[\w.-]+(?:/[\w.-]+)?)","(\d+\.\d+\.\d+)"', js):
        out.setdefault(name, []).append(version)
    return out


def required_versions(js):
    """``{module: (major, minor, patch)}`` of the caret ranges (``^x.y.z``) that a federated
    extension's ``remoteEntry`` asks of shared modules. Two encodings: rspack's
    ``shareKey:"m",...,requiredVersion:"^x.y.z"`` and webpack 5's ``"default","m",[1,x,y,z]``
    (the leading 1 is webpack's code for a caret range); any other range (``*``, ...) is
    kept as its text."""
    out = {}
    for name, spec in re.findall(r'shareKey:"([^"]+)"[^}]*?requiredVersion:"([^"]+)"', js):
        out[name] = _version(spec[1:]) if re.fullmatch(r"\^\d+\.\d+\.\d+(-[\w.]+)?", spec) else spec
    for name, spec in re.findall(r'"default","([^"]+)",(?:!\d,)?\[([\d,]+)\]', js):
        code, *parts = (int(x) for x in spec.split(","))
        out[name] = tuple(parts) if code == 1 and len(parts) == 3 else f"[{spec}]"
    return out


def caret_satisfied(version, required):
    """``version`` satisfies ``^required`` (same major, not older; majors >= 1)."""
    return version[0] == required[0] and version >= required


def test_caret_range_reading_on_known_snippets():
    """The two encodings, read on the lines that produced Voila's console warnings."""
    rspack = (
        '8381:{shareScope:"default",shareKey:"@jupyterlab/outputarea",import:null,'
        'requiredVersion:"^4.6.2",strictVersion:!1,singleton:!1,eager:!1}'
    )
    webpack = 'j={185:()=>y("default","@jupyterlab/settingregistry",!1,[1,4,5,10]),'
    old = '765:()=>y("default","@jupyterlab/settingregistry",[1,4,2,4]),'
    assert required_versions(rspack) == {"@jupyterlab/outputarea": (4, 6, 2)}
    assert required_versions('shareKey:"@lumino/widgets",requiredVersion:"^2.3.1-alpha.1",') == {
        "@lumino/widgets": (2, 3, 1)
    }
    assert required_versions(webpack) == {"@jupyterlab/settingregistry": (4, 5, 10)}
    assert required_versions(old) == {"@jupyterlab/settingregistry": (4, 2, 4)}
    core = 'i("@jupyterlab/rendermime","4.2.5",(()=>Promise.all([O.e(5312)'
    assert provided_versions(core) == {"@jupyterlab/rendermime": ["4.2.5"]}
    assert required_versions('shareKey:"jquery",import:null,requiredVersion:"*",') == {
        "jquery": "*"
    }
    assert caret_satisfied((4, 2, 5), (4, 2, 4)) and caret_satisfied((4, 6, 6), (4, 2, 4))
    assert not caret_satisfied((4, 2, 5), (4, 6, 2)) and not caret_satisfied((5, 0, 0), (4, 2, 4))


def test_voila_page_requests_nothing_beyond_its_server(voila_page):
    """The template ``uqviz`` drops the lab template's Font Awesome stylesheets from
    cdn.jsdelivr.net: every stylesheet, script and image of the page is the server's own."""
    base, html = voila_page
    assert "cdn.jsdelivr.net" not in html and "fontawesome" not in html.lower()
    links = re.findall(r'<(?:link|script|img)\b[^>]*\b(?:href|src)="([^"]*)"', html)
    assert any("voila.js" in u for u in links), links  # the page was read, not an error page
    outside = [u for u in links if re.match(r"(?:https?:)?//", u) and not u.startswith(base)]
    assert outside == []
    assert "/voila/templates/uqviz/static/" in html  # the repository's template is the one used


def test_voila_tree_and_error_pages_request_nothing_beyond_their_server(voila_page):
    """Voila's other pages (the folder's tree, errors) are built on ``page.html``, which the
    template ``uqviz`` also replaces (Voila's loads Font Awesome 4 from cdn.jsdelivr.net)."""
    base, _ = voila_page
    with pytest.raises(urllib.error.HTTPError) as caught:
        urllib.request.urlopen(base + "voila/render/no-such-notebook.ipynb", timeout=60)
    assert caught.value.code == 404
    pages = {"tree": _get(base), "404": caught.value.read().decode("utf-8")}
    for name, html in pages.items():
        assert "Voil" in html and "<noscript>" in html, name  # Voila's page, not a bare message
        assert "/voila/templates/uqviz/static/" in html, name
        assert re.findall(r'(?:href|src)="((?:https?:)?//[^"]*)"', html) == [], name


def test_voila_loads_only_allowlisted_extensions_built_for_its_jupyterlab(voila_page):
    """Every shared JupyterLab/Lumino module that an extension loaded by the page asks for
    (caret range) is satisfied by the version Voila's bundled JupyterLab provides: no
    "Unsatisfied version 4.2.5 ... required ^4.6.2" in the browser's console. Fails with
    voila 0.5.13 (its widgets-manager8 asks ^4.5.10) or jupyterlab-widgets 3.0.17 (^4.6.2)."""
    base, html = voila_page
    config = _page_config(html)
    allow = json.loads((ROOT / "voila.json").read_text())["VoilaConfiguration"][
        "extension_allowlist"
    ]
    names = [e["name"] for e in config["federated_extensions"]]
    assert set(names) <= set(allow), names
    assert {"@jupyter-widgets/jupyterlab-manager", "@voila-dashboards/widgets-manager8"} <= set(
        names
    )

    core = provided_versions(_get(base + "voila/static/voila.js"))
    core = {m: max(map(_version, v)) for m, v in core.items() if m.startswith(CORE_SCOPES)}
    assert core["@jupyterlab/rendermime"][:1] == (4,), core  # Voila 0.5 bundles JupyterLab 4
    unsatisfied, checked = [], 0
    for ext in config["federated_extensions"]:
        js = _get(f"{base}voila/labextensions/{ext['name']}/{ext['load']}")
        for module, need in required_versions(js).items():
            if module in core:
                checked += 1
                if isinstance(need, str):  # not a caret range: read it before trusting it
                    unsatisfied.append(f"{ext['name']}: {module} range {need!r} not read")
                elif not caret_satisfied(core[module], need):
                    have = ".".join(map(str, core[module]))
                    unsatisfied.append(
                        f"{ext['name']}: {module} {have} (required ^{'.'.join(map(str, need))})"
                    )
    assert checked >= 10, checked  # the widget managers ask for a dozen core modules
    assert unsatisfied == [], "\n".join(unsatisfied)


# ------------------------------------------------------------- progress bars
def _uqviz_callable(node, namespace):
    """The uqviz function a call's ``func`` names (``uqviz.x``, ``uqviz.a.x`` or a name
    imported from uqviz), or None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.insert(0, node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    obj = namespace.get(node.id)
    if obj is None:
        return None
    for part in parts:
        obj = getattr(obj, part, None)
    module = getattr(obj, "__module__", "") or ""
    return obj if callable(obj) and module.startswith("uqviz") else None


def _calls_without_progress_false(source, namespace, where):
    """Calls of uqviz functions having a ``progress`` parameter without ``progress=False``."""
    bad = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        func = _uqviz_callable(node.func, namespace)
        if func is None or inspect.isclass(func):
            continue
        try:
            params = inspect.signature(func).parameters
        except (TypeError, ValueError):
            continue
        if "progress" not in params:
            continue
        given = {k.arg: k.value for k in node.keywords}
        value = given.get("progress")
        if not (isinstance(value, ast.Constant) and value.value is False):
            bad.append(f"{where}, line {node.lineno}: {ast.unparse(node.func)}(...)")
    return bad


def test_dashboards_pass_progress_false_to_every_call_that_shows_a_bar():
    """A tqdm bar is a widget: in Voila one closed before the page renders shows as
    "Error displaying widget: model not found". The dashboard's code cells (the solution
    cell too: Voila runs every cell) pass progress=False wherever uqviz would show one."""
    import nbformat

    namespace = {"uqviz": uqviz}
    bad, checked = [], 0
    for path in DASHBOARDS:
        nb = nbformat.read(path, as_version=4)
        for i, cell in enumerate(nb.cells):
            if cell.cell_type != "code":
                continue
            source = "\n".join(
                ln for ln in cell.source.splitlines() if not ln.lstrip().startswith(("%", "!"))
            )
            checked += 1
            bad += _calls_without_progress_false(source, namespace, f"{path.name} cell {i}")
    assert checked >= 3
    assert bad == []


def test_explorers_pass_progress_false_to_every_call_that_shows_a_bar():
    """The same rule in the explorers' code (uqviz/widgets): every call of a uqviz function
    with a ``progress`` parameter passes ``progress=False``."""
    import uqviz.widgets as pkg

    bad, calls = [], 0
    for path in sorted(Path(pkg.__file__).parent.glob("*.py")):
        module = __import__(
            f"uqviz.widgets.{path.stem}" if path.stem != "__init__" else "uqviz.widgets",
            fromlist=["_"],
        )
        namespace = {**vars(module), "uqviz": uqviz}
        source = path.read_text()
        # functions imported inside functions (lazy imports) are resolved from their module
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("uqviz"):
                mod = __import__(node.module, fromlist=["_"])
                namespace.update(
                    {a.asname or a.name: getattr(mod, a.name, None) for a in node.names}
                )
        bad += _calls_without_progress_false(source, namespace, path.name)
        calls += source.count("progress=False")
    assert calls >= 1  # the reference explorer's validate_simulated
    assert bad == []


def test_explorers_create_no_progress_bar_when_bars_are_on(monkeypatch):
    """With ``UQVIZ_PROGRESS=1`` (bars forced on, as in a Jupyter kernel), building both
    explorers and changing a control of each creates no visible tqdm bar."""
    import tqdm.auto

    from uqviz.widgets import ConditionalExplorer, ReferenceExplorer

    monkeypatch.setenv("UQVIZ_PROGRESS", "1")
    shown = []
    base = tqdm.auto.tqdm

    class Spy(base):
        def __init__(self, *args, **kwargs):
            if not kwargs.get("disable"):
                shown.append(kwargs.get("desc"))
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(tqdm.auto, "tqdm", Spy)
    # the spy sees a bar: the check can fail
    from uqviz.engine.parallel import progress_bar

    with progress_bar(1, desc="probe") as bar:
        bar.update(1)
    assert shown == ["probe"]
    shown.clear()

    data = uqviz.synthetic.default_example()
    cond = ConditionalExplorer(data, n_boot=50)
    cond.conditioning.value = "X"
    ref = ReferenceExplorer(data, n_mc=20, n_boot=20)
    ref.generative.value = "t"
    assert shown == []
