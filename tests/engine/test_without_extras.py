"""uqviz without its optional dependencies numba, dask (with distributed) and h5py (with
h5netcdf) (issue 38, item 5): they are extras (``pip install 'uqviz[numba,dask,hdf5]'``, all
of them in ``uqviz[all]``), and the numpy path is the same analysis.

A subprocess makes them unimportable before ``import uqviz`` (``sys.meta_path``'s finders
wrapped to find none of them: ``find_spec`` gives None and ``import`` raises
``ModuleNotFoundError``, as where they are not installed), runs
``validate_average``, ``local_calibration``, ``fraction_valid`` and ``report`` on the default
dataset and compares them with this process's ``engine="numpy"`` (numba installed here):
the same numbers. Asking for what needs a missing extra (``client="local"``,
``engine="numba"``) is a ValueError naming the option and the extra. The analyses of
``tests/_array/test_without_numba.py`` (numba hidden alone) are reused, not repeated.
"""

from __future__ import annotations

import json
import pickle
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from tests._array.test_without_numba import ANALYSES

ROOT = Path(__file__).resolve().parents[2]

#: the optional dependencies made unimportable (each with its sub-packages)
HIDDEN = ("numba", "dask", "distributed", "h5py", "h5netcdf")

HIDE = textwrap.dedent(f"""
    import sys
    sys.path.insert(0, {str(ROOT)!r})

    class Missing:
        \"\"\"A meta-path finder that finds none of the optional dependencies: each finder of
        ``sys.meta_path`` wrapped, so that ``importlib.util.find_spec`` gives None and
        ``import`` raises ModuleNotFoundError, as where they are not installed.\"\"\"
        hidden = {HIDDEN!r}

        def __init__(self, finder):
            self.finder = finder

        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in self.hidden:
                return None
            find = getattr(self.finder, "find_spec", None)
            return None if find is None else find(name, path, target)

        def __getattr__(self, attr):
            return getattr(self.finder, attr)

    sys.meta_path[:] = [Missing(f) for f in sys.meta_path]
""")

REPORT = textwrap.dedent("""
    def report_numbers(engine):
        \"\"\"The report's numbers as JSON, split in two: ``same``, the part engine="numpy"
        gives whether numba is installed or not; ``simulated``, the verdict words of the
        simulated-reference tests, whose normal and Student-t sets numpy draws from other
        streams than numba's xoshiro256** (docs/conventions.md, "Without numba": same
        distribution, other numbers).\"\"\"
        import json
        import uqviz

        kw = {} if engine is None else {"engine": engine}
        rep = uqviz.report(uqviz.synthetic.default_example(), n_boot=200, n_mc=20,
                           figures=False, remedy=False, rng=5, **kw)
        out = json.loads(rep.to_json())
        out.pop("warnings")
        simulated = sorted(out.pop("simulated_references"))
        words = {k: out["verdicts"].pop(k)["verdict"] for k in simulated}
        # the verdict table holds the same tests: their rows go with them
        from uqviz.reporting.serialise import dataset_from_json, dataset_to_json
        table = dataset_from_json(out.pop("verdict_table"))
        out["verdict_table"] = dataset_to_json(table.drop_sel(test=simulated))
        for part in (out, out["further_diagnostics"]):
            part["conclusion"] = [c for c in part["conclusion"]
                                  if not c.startswith(tuple(f"{k}:" for k in simulated))]
        return {"verdict": rep.verdict, "same": json.dumps(out, sort_keys=True),
                "simulated": words, "tests": sorted(out["verdicts"])}
""")

CHILD = (
    HIDE
    + ANALYSES
    + REPORT
    + textwrap.dedent("""
    import importlib, pickle
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import uqviz
        res = analyses(None)
        res["report_numbers"] = report_numbers(None)
    res["loaded"] = sorted(k for k, v in sys.modules.items()
                           if v is not None and k.split(".")[0] in Missing.hidden)
    res["default_engine"] = uqviz._array.resample.default_engine()
    errors = {}
    ds = uqviz.synthetic.default_example(size=300)
    calls = {
        "client": lambda: uqviz.validate_average(ds, n_boot=50, rng=0, client="local"),
        "engine": lambda: uqviz.validate_average(ds, n_boot=50, rng=0, engine="numba"),
        "local_client": lambda: uqviz.local_calibration(ds, n_bins=4, n_boot=50, rng=0,
                                                        client="local"),
    }
    for key, call in calls.items():
        try:
            call()
            errors[key] = None
        except Exception as exc:
            errors[key] = (type(exc).__name__, str(exc))
    res["errors"] = errors
    for name in ("numba", "dask.distributed", "h5py"):
        try:
            importlib.import_module(name)
            res[f"import_{name}"] = "imported"
        except ImportError as exc:
            res[f"import_{name}"] = type(exc).__name__
    with open(sys.argv[1], "wb") as f:
        pickle.dump(res, f)
""")
)


@pytest.fixture(scope="module")
def without(tmp_path_factory):
    folder = tmp_path_factory.mktemp("noextras")
    script, path = folder / "run.py", folder / "res.pkl"
    script.write_text(CHILD)
    proc = subprocess.run(
        [sys.executable, str(script), str(path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    with open(path, "rb") as f:
        return pickle.load(f)


@pytest.fixture(scope="module")
def numpy_engine():
    namespace = {}
    exec(ANALYSES + REPORT, namespace)
    out = namespace["analyses"]("numpy")
    out["report_numbers"] = namespace["report_numbers"]("numpy")
    return out


def test_the_extras_are_really_missing(without):
    assert without["loaded"] == []
    assert [without[f"import_{n}"] for n in ("numba", "dask.distributed", "h5py")] == [
        "ModuleNotFoundError"
    ] * 3
    assert without["default_engine"] == "numpy"


def test_the_numpy_path_gives_the_numbers_of_engine_numpy(without, numpy_engine):
    for key in ("va", "lc", "fv"):
        for name, value in numpy_engine[key].items():
            np.testing.assert_array_equal(without[key][name], value, err_msg=f"{key} {name}")
    assert np.isfinite(without["va"]["ci_lower"]).all()  # intervals, not NaN placeholders


def test_the_report_is_the_same(without, numpy_engine):
    a, b = without["report_numbers"], numpy_engine["report_numbers"]
    assert a["verdict"] == b["verdict"]
    assert a["same"] == b["same"]  # every number but the simulated references', to the bit
    assert {"average", "consistency", "coverage"} <= set(a["tests"]), a["tests"]
    assert "average" in json.loads(a["same"])
    # the simulated references: other random numbers, the same words on this dataset
    assert sorted(a["simulated"]) == ["CC", "ENCE", "ZMSE"]
    assert a["simulated"] == b["simulated"]


def test_what_needs_a_missing_extra_is_a_clear_error(without):
    for key in ("client", "local_client"):
        kind, message = without["errors"][key]
        assert kind == "ValueError", (key, kind, message)
        assert message.startswith("client='local' needs dask.distributed"), message
        assert "uqviz[dask]" in message
    kind, message = without["errors"]["engine"]
    assert kind == "ValueError" and "engine" in message and "numba" in message, message


def test_the_client_check_with_dask_installed_here():
    from uqviz.engine.parallel import check_client

    assert check_client("local") == "local"
    assert check_client(None) is None
    with pytest.raises(ValueError, match="client must be None, 'local'"):
        check_client("remote")


def test_the_extras_are_declared(pyproject=ROOT / "pyproject.toml"):
    import tomllib

    project = tomllib.loads(pyproject.read_text())["project"]
    required = " ".join(project["dependencies"])
    for name in ("numba", "dask", "distributed", "h5py", "h5netcdf", "seaborn"):
        assert name not in required, f"{name} is still a required dependency"
    extras = project["optional-dependencies"]
    assert any(s.startswith("numba") for s in extras["numba"])
    assert {s.split(">")[0] for s in extras["dask"]} == {"dask[array]", "distributed"}
    assert {s.split(">")[0] for s in extras["hdf5"]} == {"h5netcdf", "h5py"}
    everything = extras["all"][0]
    for extra in ("numba", "dask", "hdf5", "seaborn", "test", "docs", "notebooks"):
        assert extra in everything, f"uqviz[all] lacks {extra}"


def test_the_environments_still_install_the_extras():
    """Optional for pip, not for the course: make, conda and Binder install every extra."""
    import yaml

    assert "-e '.[all]'" in (ROOT / "Makefile").read_text()
    for path in (ROOT / "environment.yml", ROOT / "binder" / "environment.yml"):
        listed = {
            d.split("=")[0].split(">")[0].strip()
            for d in yaml.safe_load(path.read_text())["dependencies"]
            if isinstance(d, str)
        }
        missing = {"numba", "dask", "distributed", "h5py", "h5netcdf"} - listed
        assert not missing, f"{path.name} lacks {missing}"
