"""The documentation: every public callable in the API reference, numpydoc sections, links that
resolve (in JupyterLab, on GitHub and on the site alike), the glossary's terms, no references
to local paths or internal documents, the Binder URLs.

The site itself is built in CI by ``make docs`` (warnings as errors), not inside pytest.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import json
import re
from pathlib import Path
from urllib.parse import unquote

import pytest

import uqviz

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
API = DOCS / "api"
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
DOC_PAGES = sorted(p for p in DOCS.rglob("*.md") if "_build" not in p.parts)
MARKDOWN_FILES = [ROOT / "README.md", ROOT / "CHANGELOG.md", *DOC_PAGES]

# -------------------------------------------------------------------------------------------
# the public surface, derived from the package
# -------------------------------------------------------------------------------------------
#: public namespaces: their __all__ (or their public names) is the API
PUBLIC_MODULES = [
    "uqviz",
    "uqviz.datasets",
    "uqviz.synthetic",
    "uqviz.generative",
    "uqviz.statistics",
    "uqviz.experiments",
    "uqviz.quantile",
    "uqviz.reporting",
    "uqviz.widgets",
    *(f"uqviz.plots.{m}" for m in uqviz.plots.__all__),
]
#: public callables that live in an inner module (the conventions and the README name them)
EXTRA_PUBLIC = ["uqviz.engine.binning.compute_bins"]


def _public_names(module):
    names = getattr(module, "__all__", None)
    if names is None:
        names = [n for n in vars(module) if not n.startswith("_")]
    return names


def public_callables():
    """{object id: (public path, object)}; the first public path of an object wins."""
    found = {}
    for modname in PUBLIC_MODULES:
        module = importlib.import_module(modname)
        for name in _public_names(module):
            obj = getattr(module, name)
            if inspect.ismodule(obj) or not callable(obj):
                continue
            found.setdefault(id(obj), (f"{modname}.{name}", obj))
    for path in EXTRA_PUBLIC:
        modname, name = path.rsplit(".", 1)
        obj = getattr(importlib.import_module(modname), name)
        found.setdefault(id(obj), (path, obj))
    return found


SURFACE = sorted(public_callables().values(), key=lambda item: item[0])

_DIRECTIVE = re.compile(r"^\.\. (autofunction|autoclass|autoexception):: ([\w.]+)\s*$", re.M)


def api_entries():
    """(page, heading before the directive, directive, target path) of every API directive."""
    entries = []
    for page in sorted(API.glob("*.md")):
        text = page.read_text()
        for match in _DIRECTIVE.finditer(text):
            headings = re.findall(r"^## (.+)$", text[: match.start()], re.M)
            entries.append(
                (
                    page.name,
                    headings[-1].strip() if headings else None,
                    match.group(1),
                    match.group(2),
                )
            )
    return entries


def toctree_entries(page):
    """The entries of the first toctree of a docs page (options and blank lines dropped)."""
    body = re.search(r"```\{toctree\}\n(.*?)```", page.read_text(), re.S).group(1)
    return [ln.strip() for ln in body.splitlines() if ln.strip() and not ln.startswith(":")]


def _resolve(path):
    modname, name = path.rsplit(".", 1)
    return getattr(importlib.import_module(modname), name)


def test_the_surface_is_not_trivially_small():
    paths = {p for p, _ in SURFACE}
    assert len(paths) > 80
    assert {
        "uqviz.validate_average",
        "uqviz.synthetic.nig",
        "uqviz.generative.normal",
        "uqviz.plots.conditional.local",
        "uqviz.widgets.ConditionalExplorer",
        "uqviz.engine.binning.compute_bins",
        "uqviz.reporting.ReportCollection",
    } <= paths


@pytest.mark.parametrize("path, obj", SURFACE, ids=[p for p, _ in SURFACE])
def test_every_public_callable_is_in_the_api_reference(path, obj):
    documented = [
        (page, heading, kind, target)
        for page, heading, kind, target in api_entries()
        if _resolve(target) is obj
    ]
    assert documented, f"{path} is not documented in docs/api/*.md"
    page, heading, kind, target = documented[0]
    assert heading == path.rsplit(".", 1)[1], (
        f"docs/api/{page}: the heading before {target} must be '## {path.rsplit('.', 1)[1]}'"
    )
    expected = (
        "autoexception"
        if inspect.isclass(obj) and issubclass(obj, BaseException)
        else "autoclass"
        if inspect.isclass(obj)
        else "autofunction"
    )
    assert kind in (expected, "autoclass" if expected == "autoexception" else expected)
    # documented under the path users import: a public namespace, never the defining module
    assert target == path or target.rsplit(".", 1)[0] in PUBLIC_MODULES, target


def test_api_directives_name_importable_objects_under_their_own_heading():
    entries = api_entries()
    assert entries
    for page, heading, _, target in entries:
        _resolve(target)  # raises when the path does not import
        assert heading == target.rsplit(".", 1)[1], f"docs/api/{page}: {target} under {heading}"


def test_every_api_page_is_in_the_api_toctree():
    assert sorted(p.stem for p in API.glob("*.md") if p.stem != "index") == sorted(
        toctree_entries(API / "index.md")
    )


# -------------------------------------------------------------------------------------------
# numpydoc sections
# -------------------------------------------------------------------------------------------
#: none left: every public callable, support objects included, has its sections
NUMPYDOC_EXEMPT: set = set()  # every public callable has Parameters/Returns/Examples


@pytest.mark.parametrize(
    "path, obj",
    [(p, o) for p, o in SURFACE if p not in NUMPYDOC_EXEMPT],
    ids=[p for p, _ in SURFACE if p not in NUMPYDOC_EXEMPT],
)
def test_public_callable_has_numpydoc_sections(path, obj):
    doc = inspect.getdoc(obj) or ""
    if inspect.isclass(obj) and issubclass(obj, Exception):
        signature = None  # raised by uqviz, never built by users: no parameters to document
    else:
        signature = inspect.signature(obj)
    params = (
        [
            p
            for p in signature.parameters.values()
            if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
        ]
        if signature
        else []
    )
    if params:
        assert "Parameters\n----------" in doc, f"{path}: no Parameters section"
    if not inspect.isclass(obj):
        assert "Returns\n-------" in doc, f"{path}: no Returns section"
    assert "Examples\n--------" in doc, f"{path}: no Examples section"


def test_numpydoc_exemptions_are_public_and_current():
    assert NUMPYDOC_EXEMPT <= {p for p, _ in SURFACE}


# -------------------------------------------------------------------------------------------
# links
# -------------------------------------------------------------------------------------------
_FENCE = re.compile(r"^(`{3,}|~{3,}|:{3,}).*?^\1\s*$", re.S | re.M)
_CODE_SPAN = re.compile(r"(`+)[^`]*?\1")
_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$", re.M)
_MATH = re.compile(r"\$\$.*?\$\$|\$[^$\n]+\$", re.S)


def _strip_code(text):
    """Markdown without fenced blocks and code spans (their brackets are not links)."""
    keep = []
    for block in re.split(r"(^```+.*?^```+\s*$)", text, flags=re.S | re.M):
        if block.startswith("```") and not re.match(r"```+\{(toctree|list-table|eval-rst)", block):
            continue
        keep.append(block)
    return _CODE_SPAN.sub("", "".join(keep))


def github_slug(title):
    """myst's slug of a heading (myst_heading_anchors): GitHub style, on the heading's text.

    Like myst, the text is that of the text and code spans of the heading: inline math is
    dropped, emphasis and link markup removed.
    """
    title = _MATH.sub("", title)
    title = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", title)
    title = title.replace("`", "").replace("**", "").replace("*", "")
    return re.sub(r"[^\w\u4e00-\u9fff\- ]", "", title.lower().replace(" ", "-"))


def _unique(slugs):
    out, seen = [], set()
    for slug in slugs:
        base, i = slug, 1
        while slug in seen:
            slug, i = f"{base}-{i}", i + 1
        seen.add(slug)
        out.append(slug)
    return out


def _markdown_headings(text, max_level=3):
    """(level, title) of the headings of a Markdown text, outside code blocks."""
    text = re.sub(r"^```+.*?^```+\s*$", "", text, flags=re.S | re.M)
    return [
        (len(m.group(1)), m.group(2))
        for m in _HEADING.finditer(text)
        if len(m.group(1)) <= max_level
    ]


def _notebook_markdown(path):
    cells = json.loads(path.read_text())["cells"]
    return ["".join(c["source"]) for c in cells if c["cell_type"] == "markdown"]


def anchors(path, max_level=3):
    """The heading anchors of a .md file or of a notebook's markdown cells (h1-h3, as myst)."""
    if path.suffix == ".ipynb":
        headings = [
            h for cell in _notebook_markdown(path) for h in _markdown_headings(cell, max_level)
        ]
    else:
        headings = _markdown_headings(path.read_text(), max_level)
    return set(_unique([github_slug(t) for _, t in headings]))


def _links(source):
    """(file, link text source, target) of the relative links of a Markdown file or notebook."""
    texts = _notebook_markdown(source) if source.suffix == ".ipynb" else [source.read_text()]
    out = []
    for text in texts:
        for match in _LINK.finditer(_strip_code(text)):
            target = match.group(1)
            if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):  # http:, https:, mailto:, ...
                continue
            out.append((source, target))
    return out


ALL_LINKS = [link for src in [*NOTEBOOKS, *MARKDOWN_FILES] for link in _links(src)]


def _check(source, target):
    path_part, _, anchor = target.partition("#")
    dest = (source.parent / unquote(path_part)).resolve() if path_part else source
    rel = source.relative_to(ROOT)
    assert dest.exists(), f"{rel}: link target {target} does not exist"
    assert ROOT in dest.parents or dest == ROOT, f"{rel}: {target} leaves the repository"
    if anchor:
        assert dest.suffix in (".md", ".ipynb"), f"{rel}: anchor into {dest.name}"
        assert anchor in anchors(dest), (
            f"{rel}: #{anchor} is not a heading anchor of {dest.relative_to(ROOT)}"
        )


def test_there_are_links_to_check():
    assert len(ALL_LINKS) > 50


@pytest.mark.parametrize(
    "source", [*NOTEBOOKS, *MARKDOWN_FILES], ids=lambda p: str(p.relative_to(ROOT))
)
def test_relative_links_resolve(source):
    for src, target in _links(source):
        _check(src, target)


def test_slug_rule_is_myst_github_style():
    assert github_slug("Generative distribution D") == "generative-distribution-d"
    assert github_slug("nu (degrees of freedom)") == "nu-degrees-of-freedom"
    assert github_slug("sqrt(M) scaling") == "sqrtm-scaling"
    assert github_slug("beta_GM") == "beta_gm"
    assert (
        github_slug("6. Does the order of the data matter? The ordering study")
        == "6-does-the-order-of-the-data-matter-the-ordering-study"
    )
    assert (
        github_slug(r"3.1 The robust skewness $\beta_{GM}$ (Fig. 3)")
        == "31-the-robust-skewness--fig-3"
    )


# -------------------------------------------------------------------------------------------
# the glossary
# -------------------------------------------------------------------------------------------
GLOSSARY = DOCS / "glossary.md"
#: the terms every reader of the course meets (issue: "every term and symbol"), as anchors
REQUIRED_TERMS = [
    "e",
    "ue",
    "z-score",
    "zms",
    "rce",
    "nll",
    "cc",
    "ence",
    "uce",
    "zmse",
    "lzm",
    "lzms",
    "lrce",
    "f_v",
    "bca-interval",
    "zeta-score",
    "generative-distribution-d",
    "sim-and-sim2",
    "beta_gm",
    "kappa_cs",
]


def glossary_terms():
    if not GLOSSARY.exists():
        pytest.fail("docs/glossary.md is missing", pytrace=False)
    return set(
        _unique(
            [github_slug(t) for level, t in _markdown_headings(GLOSSARY.read_text()) if level == 3]
        )
    )


def test_glossary_defines_the_required_terms():
    missing = [t for t in REQUIRED_TERMS if t not in glossary_terms()]
    assert not missing, f"docs/glossary.md has no term heading (level 3) for: {missing}"


def test_glossary_is_in_the_site():
    assert "glossary" in toctree_entries(DOCS / "index.md")


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_links_into_the_glossary_name_a_term(notebook):
    terms = None
    for _, target in _links(notebook):
        path_part, _, anchor = target.partition("#")
        if Path(unquote(path_part)).name != "glossary.md":
            continue
        if not anchor:  # a link to the whole glossary page
            continue
        terms = glossary_terms() if terms is None else terms
        assert anchor in terms, f"{notebook.name}: {target}: no glossary term '{anchor}'"


# -------------------------------------------------------------------------------------------
# no internal documents, no local paths
# -------------------------------------------------------------------------------------------
FORBIDDEN = re.compile(
    r"(?<!theoretical )specification|paper 00\d|papers/00|"
    r"/work/|\.\./shared|/home/|/tmp/",
    re.I,
)


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.name)
def test_notebooks_cite_papers_and_no_local_paths(notebook):
    for cell in json.loads(notebook.read_text())["cells"]:
        found = FORBIDDEN.search("".join(cell["source"]))
        assert found is None, f"{notebook.name}: '{found.group(0)}' in cell {cell.get('id')}"


@pytest.mark.parametrize("page", DOC_PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_docs_pages_cite_papers_and_no_local_paths(page):
    found = FORBIDDEN.search(page.read_text())
    assert found is None, f"{page.relative_to(ROOT)}: '{found.group(0)}'"


def _docstrings():
    import pkgutil

    for info in pkgutil.walk_packages(uqviz.__path__, "uqviz."):
        module = importlib.import_module(info.name)
        objs = [module]
        for _, obj in inspect.getmembers(module):
            if (inspect.isfunction(obj) or inspect.isclass(obj)) and getattr(
                obj, "__module__", ""
            ) == info.name:
                objs.append(obj)
                if inspect.isclass(obj):
                    objs += [v for v in vars(obj).values() if inspect.isfunction(v)]
        for obj in objs:
            yield f"{info.name}.{getattr(obj, '__qualname__', '')}", obj.__doc__ or ""


def test_docstrings_cite_papers_and_no_local_paths():
    bad = [(name, m.group(0)) for name, doc in _docstrings() for m in [FORBIDDEN.search(doc)] if m]
    assert not bad, bad


# -------------------------------------------------------------------------------------------
# Binder: the README badge and the site's launch buttons open the same notebooks
# -------------------------------------------------------------------------------------------
def _binder_extension():
    spec = importlib.util.spec_from_file_location("uqviz_binder", DOCS / "_ext" / "uqviz_binder.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_site_binder_buttons_use_the_readme_badge_url():
    readme = (ROOT / "README.md").read_text()
    badge = re.search(r"\((https://mybinder\.org/v2/gh/[^)\s]+)\)", readme).group(1)
    ext = _binder_extension()
    assert badge == ext.binder_url("notebooks/00_index")
    assert badge.split("?")[0] == ext.BINDER_BASE
    for nb in NOTEBOOKS:
        url = ext.binder_url(f"notebooks/{nb.stem}")
        assert url == f"{ext.BINDER_BASE}?labpath=notebooks%2F{nb.name}"


def test_every_notebook_is_in_the_course():
    assert toctree_entries(DOCS / "course.md") == [f"../notebooks/{nb.stem}" for nb in NOTEBOOKS]
