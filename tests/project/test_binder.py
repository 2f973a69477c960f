"""Binder set-up: the environment installs what uqviz needs, postBuild warms the data."""

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import ipywidgets
import yaml

from tests.project.script_loader import load_script

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: the TOML reader pip itself uses
    from pip._vendor import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]


def _name(requirement):
    """Distribution name of a requirement string, normalised (PEP 503)."""
    name = re.match(r"[A-Za-z0-9_.\-]+", requirement.strip()).group(0)
    return re.sub(r"[-_.]+", "-", name).lower()


def test_binder_environment_has_every_runtime_dependency_and_the_apps():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    env = yaml.safe_load((ROOT / "binder" / "environment.yml").read_text())
    conda = {_name(d) for d in env["dependencies"] if isinstance(d, str)}
    needed = {_name(r) for r in project["dependencies"]}
    needed |= {"jupyterlab", "ipywidgets", "voila", "ipympl"}  # the course and the dashboard
    assert needed - conda == set()


def test_conda_environment_has_every_dependency_of_make_test():
    """environment.yml (conda users) installs what ``pip install -e '.[all]'`` does."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    listed = {_name(d) for d in env["dependencies"] if isinstance(d, str)}
    for block in (d for d in env["dependencies"] if isinstance(d, dict)):
        listed |= {_name(d) for d in block.get("pip", []) if not d.startswith("-")}
    extras = project["optional-dependencies"]
    needed = {_name(r) for r in [*project["dependencies"], *extras["test"], *extras["notebooks"]]}
    assert needed - listed == set()


def test_postbuild_fails_fast_installs_uqviz_and_fetches_every_registered_file(tmp_path, data_root):
    text = (ROOT / "binder" / "postBuild").read_text()
    lines = [ln for ln in text.splitlines() if ln.strip() and not ln.startswith("#")]
    assert lines[0] == "set -e"
    assert any("pip install" in ln and " ." in ln for ln in lines)
    assert os.access(ROOT / "binder" / "postBuild", os.X_OK)
    # run its fetch step as Binder would, offline from the shared data directory:
    # every registered file must be found and pass its hash check
    fetch = next(ln for ln in lines if ln.startswith("python -c"))
    cmd = shlex.split(fetch)
    cmd[0] = sys.executable
    env = {**os.environ, "UQVIZ_DATA_DIR": str(data_root)}
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stderr


def test_postbuild_fills_the_numba_cache_with_the_dashboard():
    """postBuild runs the dashboard once after installing uqviz (issue 25, item 2): numba's
    on-disk cache is then filled in the image, not by the first visitor."""
    text = (ROOT / "binder" / "postBuild").read_text()
    lines = [ln for ln in text.splitlines() if ln.strip() and not ln.startswith("#")]
    install = next(i for i, ln in enumerate(lines) if "pip install" in ln)
    warm = [
        i
        for i, ln in enumerate(lines)
        if "nbconvert" in ln and "--execute" in ln and "notebooks/05_dashboard.ipynb" in ln
    ]
    assert warm and warm[0] > install
    assert (ROOT / "notebooks" / "05_dashboard.ipynb").exists()
    assert "UQVIZ_PROGRESS=0" in lines[warm[0]]  # no progress-bar widgets in a build log


def test_postbuild_then_shows_every_view_of_the_explorers():
    """After the notebook, postBuild runs scripts/warm-up-dashboard (the notebook's first views
    leave kernels such as CC's uncompiled: 17 s for the first CC view), whose changes visit
    every option of every control of both explorers, and every statistic under every
    recalibration method and every generative distribution."""
    text = (ROOT / "binder" / "postBuild").read_text()
    lines = [ln for ln in text.splitlines() if ln.strip() and not ln.startswith("#")]
    notebook = next(i for i, ln in enumerate(lines) if "nbconvert" in ln)
    script = [i for i, ln in enumerate(lines) if ln == "python scripts/warm-up-dashboard"]
    assert script and script[0] > notebook
    module = load_script("warm-up-dashboard")
    for name, explorer in module.explorers().items():
        changes = module.changes(name, explorer)
        controls = [
            c
            for c in vars(explorer).values()
            if isinstance(c, ipywidgets.ValueWidget)
            and hasattr(c, "description")
            and c is not explorer.dataset
            and c.description
        ]
        for control in controls:
            attr = next(a for a, v in vars(explorer).items() if v is control)
            visited = {v for a, v in changes if a == attr}
            if isinstance(control, ipywidgets.Dropdown):
                assert visited == set(module._values(control)), attr
            else:
                assert len(visited) >= 2, attr  # a slider or checkbox: changed and back
        first, second = module.PAIRS[name]
        pairs = {
            (changes[i][1], changes[i + 1][1])
            for i in range(len(changes) - 1)
            if changes[i][0] == first and changes[i + 1][0] == second
        }
        assert pairs == {
            (a, b)
            for a in module._values(getattr(explorer, first))
            for b in module._values(getattr(explorer, second))
        }


def test_readme_badge_opens_the_course_index():
    readme = (ROOT / "README.md").read_text()
    badge = re.search(r"mybinder\.org/v2/gh/[^)\s]+labpath=([^)\s&]+)", readme)
    assert badge is not None
    path = badge.group(1).replace("%2F", "/")
    assert path == "notebooks/00_index.ipynb" and (ROOT / path).exists()


# ------------------------------------------------- the dashboard, preheated (issue 25, item 2)
def _start_voila_command():
    """The ``voila`` command of binder/start, as an argument list."""
    text = (ROOT / "binder" / "start").read_text()
    joined = re.sub(r"\\\n\s*", " ", text)  # continuation lines
    line = next(ln for ln in joined.splitlines() if ln.strip().startswith("voila "))
    return shlex.split(line.split(">")[0])


def test_binder_start_serves_the_dashboard_with_a_preheated_kernel_behind_the_proxy():
    """binder/start launches Voila on the dashboard with a preheated kernel before Jupyter
    (and then hands over to it); binder/jupyter_server_config.json makes jupyter-server-proxy
    serve that port under the server's name, which is the base URL Voila writes into its page."""
    start = ROOT / "binder" / "start"
    assert os.access(start, os.X_OK)
    lines = [
        ln.strip() for ln in start.read_text().splitlines() if ln.strip() and not ln.startswith("#")
    ]
    assert lines[-1] == 'exec "$@"'  # repo2docker's start hook must run the server it is given
    cmd = _start_voila_command()
    notebook = next(a for a in cmd[1:] if a.endswith(".ipynb"))
    assert notebook == "notebooks/05_dashboard.ipynb" and (ROOT / notebook).exists()
    opts = dict(a.split("=", 1) for a in cmd if a.startswith("--") and "=" in a)
    assert opts["--preheat_kernel"] == "True" and int(opts["--pool_size"]) == 1
    assert opts["--Voila.ip"] == "127.0.0.1" and opts["--Voila.server_url"] == "/"

    proxy = json.loads((ROOT / "binder" / "jupyter_server_config.json").read_text())
    servers = proxy["ServerProxy"]["servers"]
    assert len(servers) == 1
    ((name, server),) = servers.items()
    assert server["port"] == int(opts["--port"]) and server["absolute_url"] is False
    assert "command" not in server  # started by binder/start, not on the first request
    assert opts["--Voila.base_url"] == "${JUPYTERHUB_SERVICE_PREFIX:-/}" + f"{name}/"

    env = yaml.safe_load((ROOT / "binder" / "environment.yml").read_text())
    conda = {_name(d) for d in env["dependencies"] if isinstance(d, str)}
    assert {"jupyter-server-proxy", "voila"} <= conda


def test_postbuild_merges_the_proxy_configuration_into_the_users_jupyter_config(tmp_path):
    """postBuild's merge step, run against a temporary Jupyter config directory that already
    holds a setting: the proxy's server is added, the setting is kept."""
    text = (ROOT / "binder" / "postBuild").read_text()
    merge = next(
        ln
        for ln in text.splitlines()
        if ln.startswith("python -c") and "jupyter_server_config.json" in ln
    )
    config = tmp_path / "config"
    config.mkdir()
    (config / "jupyter_server_config.json").write_text(
        json.dumps({"ServerApp": {"iopub_data_rate_limit": 1e9}})
    )
    cmd = shlex.split(merge)
    cmd[0] = sys.executable
    env = {**os.environ, "JUPYTER_CONFIG_DIR": str(config)}
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    merged = json.loads((config / "jupyter_server_config.json").read_text())
    shipped = json.loads((ROOT / "binder" / "jupyter_server_config.json").read_text())
    assert merged["ServerApp"] == {"iopub_data_rate_limit": 1e9}
    assert merged["ServerProxy"]["servers"] == shipped["ServerProxy"]["servers"]


def test_voila_json_selects_the_repository_template_and_the_widget_extensions():
    """voila.json (read by Voila from the directory it starts in, also by its server extension
    on Binder) names a template of share/jupyter/voila/templates built on Voila's ``lab``, which
    pyproject installs (data-files) and the Makefile copies (editable installs)."""
    conf = json.loads((ROOT / "voila.json").read_text())["VoilaConfiguration"]
    folder = ROOT / "share" / "jupyter" / "voila" / "templates" / conf["template"]
    assert json.loads((folder / "conf.json").read_text())["base_template"] == "lab"
    assert "{%- extends 'lab/index.html.j2' -%}" in (folder / "index.html.j2").read_text()
    files = sorted(str(p.relative_to(ROOT)) for p in folder.iterdir())
    data_files = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"][
        "data-files"
    ]
    assert sorted(data_files[str(folder.relative_to(ROOT))]) == files
    assert "scripts/install-voila-template" in (ROOT / "Makefile").read_text()
    assert set(conf["extension_allowlist"]) == {
        "@jupyter-widgets/jupyterlab-manager",
        "@voila-dashboards/widgets-manager8",
        "jupyter-matplotlib",
        "jupyterlab_pygments",
    }


def test_voila_json_delays_the_pool_refill_past_the_page_load():
    """The preheated pool is refilled (a kernel started and the dashboard run in it) after the
    visitor's page is built, not during it (Voila's default 1 s; the page takes 2-2.5 s on
    2 cores, benchmarks/bench_dashboard.py), and not so late that a second visitor waits long
    for it (a visitor during the delay waits for it, then for the refill)."""
    conf = json.loads((ROOT / "voila.json").read_text())
    assert 2.0 <= conf["VoilaKernelManager"]["fill_delay"] <= 5.0
    guide = (ROOT / "docs" / "guide" / "dashboard.md").read_text()
    assert (
        f'"VoilaKernelManager": {{"fill_delay": {conf["VoilaKernelManager"]["fill_delay"]}}}'
        in guide
    )


def test_widget_front_end_pins_agree_in_every_environment_file():
    """The set whose front-end extensions were built for Voila's JupyterLab 4.2.5 (see
    tests/widgets/test_serving.py) is pinned alike for pip and both conda environments."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    pins = {"voila": "0.5.8", "ipywidgets": "8.1.5", "jupyterlab-widgets": "3.0.13"}
    for extra in ("test", "notebooks"):
        reqs = {_name(r): r for r in project["optional-dependencies"][extra]}
        for pkg, version in pins.items():
            assert re.sub(r"\s", "", reqs[pkg]).endswith(f"=={version}"), (extra, reqs[pkg])
    for path in (ROOT / "environment.yml", ROOT / "binder" / "environment.yml"):
        deps = [d for d in yaml.safe_load(path.read_text())["dependencies"] if isinstance(d, str)]
        listed = {_name(d): d for d in deps}
        for pkg, version in pins.items():
            assert listed[pkg].split("=", 1)[1].lstrip("=") == version, (path.name, listed[pkg])
