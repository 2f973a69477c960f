"""Sphinx configuration of the uqviz documentation site.

Built from the REPOSITORY ROOT with this folder as confdir, so that relative links
(``../docs/glossary.md#zms`` from a notebook) work the same in JupyterLab, on GitHub and on
the site::

    sphinx-build -W --keep-going -n -c docs . docs/_build/html      (or: make docs)

Environment:
- ``UQVIZ_DOCS_EXECUTE=off``: do not execute the notebooks (quick local iterations);
  default: every notebook is executed at build time, an error in a cell is a build error.
- ``UQVIZ_FAST=1`` (set by CI): the notebooks use small Monte Carlo sizes, same science.
- the notebooks `make test` executed (``test-artifacts/notebooks/``, or
  ``$UQVIZ_TEST_ARTIFACTS``) are rendered from that run when their cells and mode match: CI
  executes each notebook once.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(ROOT))  # the uqviz of this checkout
sys.path.insert(0, str(DOCS / "_ext"))  # local extensions

import uqviz  # noqa: E402

# Executed notebooks must show their figures: ipykernel selects the inline backend only
# when MPLBACKEND is unset, and CI exports MPLBACKEND=Agg (for the tests), which would make
# every plt.show() in a notebook a no-op. The kernels inherit this process's environment.
os.environ.pop("MPLBACKEND", None)
# Warnings printed by the executed notebooks name their category and message only, not the
# file and line that raised them (a machine path such as /home/.../uqviz/engine/tree.py:96
# says nothing to a reader of the site): an IPython startup file of a temporary profile
# folder, which the kernels find through IPYTHONDIR, sets the format.
_IPYTHON = Path(tempfile.mkdtemp(prefix="uqviz-docs-ipython-"))
(_IPYTHON / "profile_default" / "startup").mkdir(parents=True)
(_IPYTHON / "profile_default" / "startup" / "00-uqviz-warnings.py").write_text(
    "import warnings\n"
    "warnings.formatwarning = (lambda message, category, filename, lineno, line=None:\n"
    "                          f'{category.__name__}: {message}\\n')\n"
)
os.environ["IPYTHONDIR"] = str(_IPYTHON)
# no tqdm bars in executed notebooks: a closed bar leaves "model not found" on the page
os.environ["UQVIZ_PROGRESS"] = "0"
# notebooks are executed with their own folder as working directory: data paths absolute
if os.environ.get("UQVIZ_DATA_DIR"):
    os.environ["UQVIZ_DATA_DIR"] = str(Path(os.environ["UQVIZ_DATA_DIR"]).resolve())

# -- project -------------------------------------------------------------------------------
project = "uqviz"
author = "uqviz developers"
copyright = "uqviz developers, BSD-3-Clause"
release = version = uqviz.__version__

# -- sources: the repository root, restricted to the docs, the course and the changelog -----
root_doc = "docs/index"
include_patterns = ["docs/**", "notebooks/*.ipynb", "CHANGELOG.md"]
exclude_patterns = [
    "docs/_build",
    "docs/_build/**",
    "docs/_static/**",
    "docs/_ext/**",
    "docs/_root/**",
    "**/.ipynb_checkpoints",
]
html_static_path = ["_static"]
# docs/_build/html/index.html: a redirect to docs/index.html, so that the site root works
html_extra_path = ["_root"]

extensions = [
    "myst_nb",
    "sphinx.ext.autodoc",
    "numpydoc",
    "sphinx.ext.mathjax",
    "sphinx_design",
    "sphinx_copybutton",
    "uqviz_binder",
]

# -- MyST ----------------------------------------------------------------------------------
myst_heading_anchors = 3  # [ZMS](../docs/glossary.md#zms): GitHub-style slugs of h1-h3
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "deflist"]
suppress_warnings = []  # nothing blanket-suppressed: a broken link is a build error

# -- notebooks (myst-nb) -------------------------------------------------------------------
nb_execution_mode = (
    "off"
    if os.environ.get("UQVIZ_DOCS_EXECUTE", "").lower() in ("off", "0", "no", "false")
    else "force"
)
nb_execution_timeout = 3600  # per cell; full-size Monte Carlo cells take minutes
nb_execution_raise_on_error = True  # a failing cell fails the build
nb_execution_show_tb = True  # ... with its traceback in the log
nb_execution_in_temp = False  # cwd = notebooks/, as in JupyterLab and the tests
nb_merge_streams = True

# -- API reference -------------------------------------------------------------------------
autodoc_typehints = "none"  # numpydoc "Parameters" carry the types
autodoc_member_order = "bysource"
numpydoc_show_class_members = False  # classes list their public methods on their own
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False

# -- nitpicky cross-references -------------------------------------------------------------
# The build is offline (CI has no network), so there is no intersphinx inventory of the
# scientific stack: references to their types cannot resolve and are ignored by name here.
# Every uqviz reference must resolve.
nitpick_ignore_regex = [
    (
        "py:.*",
        r"(numpy|np|xarray|xr|pandas|pd|matplotlib|mpl|dask|distributed|scipy|"
        r"ipywidgets|numba|pooch|h5netcdf|netCDF4)(\..*)?",
    ),
]

# -- HTML ----------------------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"uqviz {release}"
html_theme_options = {
    "github_url": "https://github.com/uqviz/uqviz",
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "navbar_align": "left",
    "header_links_before_dropdown": 8,
    "secondary_sidebar_items": ["page-toc", "sourcelink"],
}
html_show_sourcelink = False
html_css_files = ["uqviz.css"]
html_last_updated_fmt = None

# An explorer's output carries its live widget and a static HTML copy (read-outs and figure):
# the site has no kernel, so it shows the static copy; JupyterLab and Voila show the widget.
nb_mime_priority_overrides = [("html", "application/vnd.jupyter.widget-view+json", 35)]


# -- notebooks executed once (issue 38, item 6) ----------------------------------------------
#: `make test` executes every notebook once in fast mode (tests/project/course_run.py) and
#: writes it there; the site renders that run instead of executing the notebook again, when
#: its cells are the source's and its mode the build's (else the notebook is executed here)
EXECUTED = Path(os.environ.get("UQVIZ_TEST_ARTIFACTS") or ROOT / "test-artifacts") / "notebooks"
REUSED: list[str] = []


def _cells(nb):
    return [(c.get("cell_type"), "".join(c.get("source", ""))) for c in nb.get("cells", [])]


def executed_notebook(docname, text):
    """The executed notebook of ``make test`` for ``docname`` (JSON text, marked not to be
    executed again), or None when there is none of the same cells and mode."""
    import json

    if nb_execution_mode == "off" or not docname.startswith("notebooks/"):
        return None
    stem = docname.split("/", 1)[1]
    done, timing = EXECUTED / f"{stem}.ipynb", EXECUTED / f"{stem}.time.json"
    if not (done.is_file() and timing.is_file()):
        return None
    mode = "fast" if os.environ.get("UQVIZ_FAST", "") not in ("", "0") else "full"
    if json.loads(timing.read_text()).get("mode") != mode:
        return None
    source, executed = json.loads(text), json.loads(done.read_text())
    if _cells(source) != _cells(executed):
        return None
    executed.setdefault("metadata", {}).setdefault("mystnb", {})["execution_mode"] = "off"
    return json.dumps(executed)


def _reuse_executed(app, docname, source):
    text = executed_notebook(docname, source[0])
    if text is not None:
        source[0] = text
        REUSED.append(docname)


def _report_reused(app, exception):
    if exception is None and nb_execution_mode != "off":
        print(
            f"notebooks rendered from make test's run ({EXECUTED}): {len(REUSED)}"
            + (f" ({', '.join(sorted(REUSED))})" if REUSED else "")
        )


def setup(app):
    app.connect("source-read", _reuse_executed)
    app.connect("build-finished", _report_reused)
