"""uqviz without numba (issue 22, item 6): a subprocess hides numba, runs a few analyses and
compares them with this process (numba installed) where docs/conventions.md promises equality.

The promise: without numba the resampler's engine is "numpy" (one NumbaMissingWarning), and
the numbers are those of ``engine="numpy"``; CC's bootstrap and the normal and Student-t
simulated sets, which have no engine option, draw from numpy's streams instead of
xoshiro256** (same distribution, other numbers); the numpy forms of the per-bin and rank
kernels equal the numba ones exactly or to rounding.
"""

import pickle
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import uqviz
from uqviz._array import binned as kbin
from uqviz._array import rank as krank
from uqviz._array import variates as kvar

ROOT = Path(__file__).resolve().parents[2]

#: the analyses, run in both processes; ``ENGINE`` is None in the subprocess (numpy chosen
#: automatically) and "numpy" here
ANALYSES = textwrap.dedent("""
    import warnings
    import numpy as np

    def analyses(engine):
        import uqviz

        ds = uqviz.synthetic.default_example(size=600)
        out = {}
        kw = {} if engine is None else {"engine": engine}
        va = uqviz.validate_average(ds, statistics=("ZMS", "RCE"), n_boot=200, rng=1, **kw)
        out["va"] = {k: va[k].values for k in ("estimate", "ci_lower", "ci_upper")}
        with warnings.catch_warnings():  # CC has no predefined reference
            warnings.simplefilter("ignore", UserWarning)
            cc = uqviz.validate_average(ds, statistics=("CC",), n_boot=200, rng=1, **kw)
        out["cc"] = {k: cc[k].values for k in ("estimate", "ci_lower", "ci_upper")}
        lc = uqviz.local_calibration(ds, n_bins=6, n_boot=200, n_mc=20, rng=2, **kw)
        out["lc"] = {k: lc[k].values for k in ("estimate", "ci_lower", "ci_upper")}
        fv = uqviz.fraction_valid(lc)
        out["fv"] = {k: np.asarray(fv[k].values) for k in fv.data_vars}
        for stat in ("ENCE", "CC", "ZMS"):
            for gen in ("uniform", "normal"):
                ref = uqviz.simulated_reference(ds, statistic=stat, generative=gen, n_mc=40,
                                                rng=3, return_samples=True)
                out[f"ref_{stat}_{gen}"] = ref["samples"].values
        rep = uqviz.report(ds, n_boot=100, n_mc=20, figures=False, remedy=False)
        out["report"] = sorted(rep.data_vars) if hasattr(rep, "data_vars") else type(rep).__name__
        return out
""")

SUBPROCESS = ANALYSES + textwrap.dedent("""
    import pickle, sys, time
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        import uqviz
        import uqviz._array.jit as jit
        t0 = time.perf_counter()
        res = analyses(None)
        res["seconds"] = time.perf_counter() - t0
    res["have_numba"] = jit.HAVE_NUMBA
    res["default_engine"] = uqviz._array.resample.default_engine()
    res["numba_warnings"] = sum(issubclass(w.category, jit.NumbaMissingWarning) for w in caught)
    res["numba_modules"] = sorted(k for k, v in sys.modules.items()
                                  if v is not None and k.split(".")[0] == "numba")
    with open(sys.argv[1], "wb") as f:
        pickle.dump(res, f)
""")

# numba hidden: ``import numba`` raises ImportError, as where it is not installed (this
# checkout's uqviz first on the path, not an installed one)
HIDE = "import sys; sys.modules['numba'] = None\n"


@pytest.fixture(scope="module")
def without(tmp_path_factory):
    path = tmp_path_factory.mktemp("nonumba") / "res.pkl"
    script = tmp_path_factory.mktemp("nonumba") / "run.py"
    # the warning of `import uqviz` is caught too: the script imports uqviz inside the block
    script.write_text(f"import sys; sys.path.insert(0, {str(ROOT)!r})\n" + HIDE + SUBPROCESS)
    proc = subprocess.run(
        [sys.executable, str(script), str(path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    with open(path, "rb") as f:
        return pickle.load(f)


@pytest.fixture(scope="module")
def numpy_engine():
    namespace = {}
    exec(ANALYSES, namespace)
    return namespace["analyses"]("numpy")


def test_numba_is_really_hidden(without):
    assert without["have_numba"] is False
    assert without["numba_modules"] == []
    assert without["default_engine"] == "numpy"


def test_one_warning(without):
    assert without["numba_warnings"] == 1


def test_moments_equal_engine_numpy(without, numpy_engine):
    """The contract: without numba, the numbers of engine="numpy" (same rng)."""
    for key in ("va", "lc"):
        for name, value in numpy_engine[key].items():
            np.testing.assert_array_equal(without[key][name], value, err_msg=f"{key} {name}")
    for name, value in numpy_engine["fv"].items():
        np.testing.assert_array_equal(without["fv"][name], value, err_msg=f"fv {name}")


def test_references_equal_where_numpy_draws(without, numpy_engine):
    """Uniform D is drawn by numpy in both processes: CC and ZMS equal exactly, ENCE (the
    numpy form of the per-bin sums, in another order) to rounding."""
    for stat in ("CC", "ZMS"):
        np.testing.assert_array_equal(
            without[f"ref_{stat}_uniform"], numpy_engine[f"ref_{stat}_uniform"]
        )
    np.testing.assert_allclose(
        without["ref_ENCE_uniform"], numpy_engine["ref_ENCE_uniform"], rtol=1e-12
    )


def test_documented_differences_agree_in_law(without, numpy_engine):
    """CC's bootstrap and normal simulated sets: other streams, the same distribution."""
    np.testing.assert_array_equal(without["cc"]["estimate"], numpy_engine["cc"]["estimate"])
    for end in ("ci_lower", "ci_upper"):
        assert np.all(np.abs(without["cc"][end] - numpy_engine["cc"][end]) < 0.05)
    for stat in ("ENCE", "CC", "ZMS"):
        a, b = without[f"ref_{stat}_normal"], numpy_engine[f"ref_{stat}_normal"]
        assert not np.array_equal(a, b)
        assert abs(a.mean() - b.mean()) < 4 * np.hypot(a.std(), b.std()) / np.sqrt(a.size)


def test_report_runs(without, numpy_engine):
    assert without["report"] == numpy_engine["report"]


# ---- the numpy forms against the numba kernels, in this process ----------------------
def _data(m=700, seed=0):
    rng = np.random.default_rng(seed)
    u = rng.uniform(1, 2, m).round(2)  # ties in uE
    e = u * rng.standard_normal(m)
    e[:6] = e[6]  # ties in |E|
    return rng, e, u


def test_cc_counts_numpy_form():
    rng, e, u = _data()
    prep = krank.cc_prepare(e, u)
    counts = rng.integers(0, 3, (9, e.size))
    oe, e_bounds, u_bounds, epos_u = prep
    np.testing.assert_allclose(
        krank._cc_counts_numpy(counts[:, oe], e_bounds, u_bounds, epos_u),
        krank.cc_from_counts(counts, prep),
        rtol=1e-13,
    )
    inv = np.empty(e.size, np.int64)
    inv[oe] = np.arange(e.size)
    edges = np.linspace(0, e.size, 41).round().astype(np.int64)
    np.testing.assert_allclose(
        krank._cc_jackknife_numpy(inv, edges, e_bounds, u_bounds, epos_u),
        krank.cc_jackknife(prep, edges),
        rtol=1e-13,
    )


def test_cc_given_u_numpy_form_is_exact(monkeypatch):
    rng, e, u = _data()
    eps = rng.standard_normal((5, e.size))
    eps[:, :4] = 0.25  # ties among the simulated |E*|
    f = krank.cc_given_u(u)
    with_numba = f(eps, scale=u)
    monkeypatch.setattr(krank, "HAVE_NUMBA", False)
    np.testing.assert_array_equal(f(eps, scale=u), with_numba)


def test_cc_bootstrap_numpy_form(monkeypatch):
    rng, e, u = _data()
    prep = krank.cc_prepare(e, u)
    monkeypatch.setattr(krank, "HAVE_NUMBA", False)
    reps = krank.cc_bootstrap(prep, 100, seed=4)
    counts = krank.cc_bootstrap_counts(prep, 100, seed=4)
    assert np.all(counts.sum(axis=1) == e.size)
    np.testing.assert_allclose(krank.cc_from_counts(counts, prep), reps, rtol=1e-13)
    split = np.concatenate(
        [
            krank.cc_bootstrap(prep, 100, seed=4, blocks=(0, 2)),
            krank.cc_bootstrap(prep, 100, seed=4, blocks=(2, 4)),
        ]
    )
    np.testing.assert_array_equal(split, reps)


def test_binned_numpy_forms():
    rng, e, u = _data()
    rows = rng.standard_normal((4, e.size))
    starts, sizes = np.arange(0, 700, 100), np.full(7, 100)
    a = kbin._bin_sums_rows(rows, u, starts, sizes, True, True, 1.0, True)
    b = kbin._bin_sums_rows_numpy(rows, u, starts, sizes, True, True, 1.0, True)
    np.testing.assert_allclose(a[0], b[0], rtol=1e-13)
    np.testing.assert_allclose(a[1], b[1], rtol=1e-13)
    assert a[2] == b[2]
    cols = np.ascontiguousarray(rng.standard_normal((e.size, 3)))
    prefix = kbin._prefix(cols)
    q = kbin.equal_count_bounds(e.size - 1, 7).astype(np.int64)
    np.testing.assert_array_equal(
        kbin._loo_means_numpy(prefix, cols, q, 3, 500),
        kbin._loo_means_kernel(prefix, cols, q, 3, 500),
    )


def test_variates_fall_back_to_numpy(monkeypatch):
    monkeypatch.setattr(kvar, "HAVE_NUMBA", False)
    assert kvar.filler("normal", {}) is None
    assert kvar.filler("student_t", {"nu": 6.0}) is None


def test_engine_numba_refused_without_numba(monkeypatch):
    from uqviz._array import resample

    monkeypatch.setattr(resample, "numba", None)
    with pytest.raises(ValueError, match="needs numba"):
        resample.resample_sums(np.ones((3, 1)), 4, seed=1, engine="numba")


def test_uqviz_imported_with_numba_here():
    assert uqviz._array.jit.HAVE_NUMBA


def test_contract_suite_without_numba():
    """A part of the suite with numba hidden: the contract test calls every public function."""
    code = (
        f"import sys; sys.path.insert(0, {str(ROOT)!r}); " + HIDE.strip() + "; import pytest; "
        "sys.exit(pytest.main(['-q', '-x', '-p', 'no:cacheprovider', "
        "'-W', 'ignore::uqviz._array.jit.NumbaMissingWarning', "
        "'tests/contract/test_contract.py']))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=900
    )
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert " passed" in proc.stdout
