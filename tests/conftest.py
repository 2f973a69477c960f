"""Shared fixtures: the real data directory (``$UQVIZ_DATA_DIR``, never a download)."""

import os
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # figures are drawn off-screen in every test

import pytest  # noqa: E402

#: fixture generators run in side venvs with the peer toolkits (netcal, uncertainty-toolbox);
#: they are scripts, not test modules
collect_ignore_glob = ["fixtures/make_*.py"]


def _data_root() -> Path:
    env = os.environ.get("UQVIZ_DATA_DIR", "").strip()
    if not env:
        pytest.fail(
            "UQVIZ_DATA_DIR is not set: these tests read the real data files locally "
            "(never download). Run e.g. `UQVIZ_DATA_DIR=../shared/data pytest` from the "
            "repository root (.ci/run does this).",
            pytrace=False,
        )
    root = Path(env).expanduser().resolve()
    if not (root / "SHA256SUMS").is_file():
        pytest.fail(
            f"UQVIZ_DATA_DIR={env!r} -> {root} holds no SHA256SUMS: not the uqviz "
            "data directory (expected the folder with pernot-2024_RCE-v4.0/ ...)",
            pytrace=False,
        )
    return root


@pytest.fixture(scope="session")
def data_root():
    return _data_root()


# --- helpers of the contract test and the bad-input sweep (tests/contract/test_contract.py,
# tests/contract/test_sweep.py, tests/cli/test_cli_files.py) ----------------------------------


def make_small_dataset(size=400, seed=0, name="a"):
    """A small calibrated dataset: uE log-normal, E = uE * N(0, 1), features ``x`` (4 tied
    values) and ``y`` (continuous); built with :func:`uqviz.from_arrays`."""
    import numpy as np

    import uqviz

    rng = np.random.default_rng(seed)
    u = 0.5 * np.exp(0.3 * rng.standard_normal(size))
    e = u * rng.standard_normal(size)
    feats = {"x": rng.integers(0, 4, size).astype(float), "y": rng.uniform(0.0, 1.0, size)}
    return uqviz.from_arrays(e, u, features=feats, name=name)


def make_small_tree():
    """A DataTree of two small datasets, children ``a`` (400 points) and ``b`` (300)."""
    import uqviz

    return uqviz.from_datasets(
        {"a": make_small_dataset(400, 0, "a"), "b": make_small_dataset(300, 1, "b")}
    )


@pytest.fixture(scope="session")
def small_dataset():
    return make_small_dataset()


@pytest.fixture(scope="session")
def small_tree():
    return make_small_tree()


# --- the tables of docs/conventions.md (tests/contract/test_vocabulary.py,
# tests/contract/test_contract.py) ------------------------------------------------------------


def markdown_tables(text):
    """``{header of the first column: [names]}`` of the Markdown tables of ``text``: every
    name in backquotes in the first cell of a row (several per cell allowed), tables with
    the same header merged."""
    import re

    out = {}
    lines = text.splitlines()
    i = 0
    while i < len(lines) - 1:
        if lines[i].startswith("|") and re.fullmatch(r"\|[-:| ]+\|", lines[i + 1].strip()):
            header = lines[i].strip().strip("|").split("|")[0].strip()
            j = i + 2
            while j < len(lines) and lines[j].startswith("|"):
                cell = lines[j].strip().strip("|").split("|")[0]
                out.setdefault(header, []).extend(re.findall(r"`([^`]+)`", cell))
                j += 1
            i = j
        else:
            i += 1
    return out


def conventions_tables():
    """:func:`markdown_tables` of docs/conventions.md, the one source of the vocabulary."""
    path = Path(__file__).resolve().parents[1] / "docs" / "conventions.md"
    return markdown_tables(path.read_text(encoding="utf-8"))


class PeerFixtures:
    """The committed outputs of a peer library (``tests/fixtures/<name>.npz`` and ``.json``,
    written by ``tests/fixtures/make_<name>_fixtures.py`` in a side venv).

    ``meta`` is the json (cases, settings, versions); ``inputs(family, case)`` the arrays stored
    under ``in/<family>/<case>/``; ``output(family, case, name)`` one array of ``out/``.
    """

    def __init__(self, name):
        import json

        import numpy as np

        self.folder = Path(__file__).resolve().parent / "fixtures"
        self.meta = json.loads((self.folder / f"{name}.json").read_text())
        self.arrays = np.load(self.folder / f"{name}.npz")
        self.settings = self.meta["settings"]

    def inputs(self, family, case):
        pre = f"in/{family}/{case}/"
        return {k[len(pre) :]: self.arrays[k] for k in self.arrays.files if k.startswith(pre)}

    def output(self, family, case, name):
        return self.arrays[f"out/{family}/{case}/{name}"]

    def off_grid_inputs(self):
        """The float inputs not on the fixture's ``input_grid`` (exact in binary, so the
        peer and uqviz read the same numbers): an empty list when all are on it."""
        import numpy as np

        g = self.settings["input_grid"]
        return [
            k
            for k in self.arrays.files
            if k.startswith("in/")
            and self.arrays[k].dtype.kind == "f"
            and not np.array_equal(np.round(self.arrays[k] / g) * g, self.arrays[k])
        ]


# --------------------------------------------------------------------------
# test tiers (issue 38, item 6): markers registered in pyproject.toml
# --------------------------------------------------------------------------
#: the tests that take 2 s or more, one node id (or a node-id prefix) a line
SLOW_TESTS = Path(__file__).with_name("slow_tests.txt")
#: a test reading the real datasets (or one of its fixtures does)
_FIDELITY_CALLS = ("load_dataset(", "load_collection(", "data_root")
_BROWSER_MODULES = ("tests/widgets/test_browser.py", "tests/widgets/test_serving.py")


def slow_entries():
    """The node ids of ``tests/slow_tests.txt``."""
    lines = SLOW_TESTS.read_text().splitlines()
    return [ln.strip() for ln in lines if ln.strip() and not ln.startswith("#")]


def _reads_real_data(item):
    import inspect

    doc = getattr(getattr(item, "dtest", None), "docstring", None)  # a doctest
    if doc is not None:
        return any(call in doc for call in _FIDELITY_CALLS + ("fetch(", "load_qm9"))
    funcs = [getattr(item, "function", None)]
    info = getattr(item, "_fixtureinfo", None)
    if info is not None:
        funcs += [d.func for defs in info.name2fixturedefs.values() for d in defs]
    for func in funcs:
        try:
            src = inspect.getsource(func)
        except (TypeError, OSError):
            continue
        if any(call in src for call in _FIDELITY_CALLS):
            return True
    return False


def pytest_collection_modifyitems(config, items):
    """Mark ``slow``, ``fidelity``, ``browser`` and ``notebook`` tests (``make check`` runs the
    others)."""
    slow = slow_entries()
    exact = set(slow)
    for item in items:
        nid = item.nodeid
        if nid in exact or any(nid.startswith(p) for p in slow if p.endswith("::")):
            item.add_marker(pytest.mark.slow)
        if nid.startswith(_BROWSER_MODULES):
            item.add_marker(pytest.mark.browser)
        if (
            nid.split("::")[0].endswith(".ipynb")
            or nid.startswith("tests/project/course/")
            or "notebook" in getattr(item, "fixturenames", ())
        ):
            item.add_marker(pytest.mark.notebook)
        if _reads_real_data(item):
            item.add_marker(pytest.mark.fidelity)
