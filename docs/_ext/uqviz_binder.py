"""Sphinx extension: a "launch on Binder" button at the top of every notebook page.

The button opens the same notebook in JupyterLab on mybinder.org as the README's badge
(``tests/project/test_docs.py`` compares the two URLs).
"""

from __future__ import annotations

from urllib.parse import quote

#: the repository on mybinder.org; the README badge uses the same base
BINDER_BASE = "https://mybinder.org/v2/gh/uqviz/uqviz/HEAD"
NOTEBOOK_DIR = "notebooks/"


def binder_url(docname: str) -> str:
    """The Binder URL that opens the notebook of Sphinx document ``docname`` in JupyterLab.

    >>> binder_url("notebooks/01_average_calibration")
    'https://mybinder.org/v2/gh/uqviz/uqviz/HEAD?labpath=notebooks%2F01_average_calibration.ipynb'
    """
    return f"{BINDER_BASE}?labpath={quote(docname + '.ipynb', safe='')}"


def _button(url: str) -> str:
    return ('<div class="uqviz-binder">'
            f'<a class="uqviz-binder-button" href="{url}" target="_blank" rel="noopener">'
            '<span class="uqviz-binder-logo" aria-hidden="true">&#9654;</span>'
            'Launch on Binder</a>'
            '<span class="uqviz-binder-note">opens this notebook in JupyterLab, '
            'ready to run</span></div>')


def _add_button(app, doctree):
    from docutils import nodes

    docname = app.env.docname
    if not docname.startswith(NOTEBOOK_DIR):
        return
    if app.env.doc2path(docname).suffix != ".ipynb":
        return
    raw = nodes.raw("", _button(binder_url(docname)), format="html")
    section = next(iter(doctree.findall(nodes.section)), None)
    if section is None:
        doctree.insert(0, raw)
        return
    title = next((i for i, child in enumerate(section.children)
                  if isinstance(child, nodes.title)), -1)
    section.insert(title + 1, raw)


def setup(app):
    app.connect("doctree-read", _add_button)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
