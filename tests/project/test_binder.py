"""Binder set-up: the environment installs what uqviz needs, postBuild warms the data."""

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import yaml

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
    needed = {_name(r) for r in [*project["dependencies"], *extras["test"],
                                 *extras["notebooks"]]}
    assert needed - listed == set()


def test_postbuild_fails_fast_installs_uqviz_and_fetches_every_registered_file(tmp_path,
                                                                               data_root):
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
    warm = [i for i, ln in enumerate(lines)
            if "nbconvert" in ln and "--execute" in ln and "notebooks/05_dashboard.ipynb" in ln]
    assert warm and warm[0] > install
    assert (ROOT / "notebooks" / "05_dashboard.ipynb").exists()
    assert "UQVIZ_PROGRESS=0" in lines[warm[0]]  # no progress-bar widgets in a build log


def test_readme_badge_opens_the_course_index():
    readme = (ROOT / "README.md").read_text()
    badge = re.search(r"mybinder\.org/v2/gh/[^)\s]+labpath=([^)\s&]+)", readme)
    assert badge is not None
    path = badge.group(1).replace("%2F", "/")
    assert path == "notebooks/00_index.ipynb" and (ROOT / path).exists()
