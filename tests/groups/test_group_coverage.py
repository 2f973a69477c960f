"""uqviz.group_coverage: equal to MAPIE 1.6.0 / covmetrics 0.1.2 on the committed fixtures,
to brute-force and hand computations, and its verdicts on calibrated and miscalibrated data."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy import stats

import uqviz
from uqviz._array import group_coverage as group_coverage_kernels
from tests.conftest import PeerFixtures

PEER = PeerFixtures("groups")
META, SET = PEER.meta, PEER.settings
APPROX = dict(rel=1e-9, abs=1e-12)
CASES = sorted(META["mapie"])
FAST = dict(n_mc=20, n_perm=20, n_directions=10, progress=False)
EXACT = dict(n_mc=2, n_perm=1, progress=False)  # the estimates only


def _fixture_dataset(case, j):
    """The MAPIE case as data with the given interval of confidence level j."""
    inp = PEER.inputs("mapie", case)
    conf = META["mapie"][case]["confidence_levels"][j]
    lo, hi = inp["lower"][:, j], inp["upper"][:, j]
    feats = {f"x{k}": inp["x"][:, k] for k in range(inp["x"].shape[1])}
    ds = uqviz.from_predictions(
        inp["y"], (lo + hi) / 2, lower=lo, upper=hi, level=conf, features=feats
    )
    return ds, inp, conf


@pytest.mark.parametrize("case", CASES)
def test_equal_to_mapie(case):
    """CovGap (both forms), worst-slab coverage (the fixtures' directions, standardised x) and
    HSIC (both kernel sizes) equal MAPIE's."""
    meta = META["mapie"][case]
    for j, conf in enumerate(meta["confidence_levels"]):
        ds, inp, conf = _fixture_dataset(case, j)
        feats = [f"x{k}" for k in range(inp["x"].shape[1])]
        for delta, m, seed in SET["wsc_settings"]:
            v = PEER.output("mapie", case, f"wsc_directions/m{m}/seed{seed}")
            res = uqviz.group_coverage(
                ds,
                groups=inp["groups"],
                features=feats,
                n_bins=2,
                min_count=1,
                level=conf,
                intervals="given",
                delta=delta,
                directions=v,
                rng=0,
                **EXACT,
            )
            est = res["estimate"]
            gap = meta["coverage_gap"]
            assert float(est.sel(measure="covgap:groups")) == pytest.approx(
                gap[f"c{conf}/unweighted"], **APPROX
            )
            assert float(est.sel(measure="covgap_weighted:groups")) == pytest.approx(
                gap[f"c{conf}/weighted"], **APPROX
            )
            wsc = meta["wsc"][f"standardised/c{conf}/delta{delta}/m{m}/seed{seed}"]
            assert float(est.sel(measure="slab")) == pytest.approx(wsc, **APPROX)
        for s_w, s_c in SET["hsic_kernels"]:
            res = uqviz.group_coverage(
                ds,
                groups=inp["groups"],
                features=(),
                min_count=1,
                level=conf,
                intervals="given",
                kernel_sizes=(s_w, s_c),
                rng=0,
                **EXACT,
            )
            hs = PEER.output("mapie", case, f"hsic/k{s_w}_{s_c}")[j]
            assert float(res["estimate"].sel(measure="hsic")) == pytest.approx(hs, **APPROX)


@pytest.mark.parametrize("case", CASES)
def test_hsic_equal_to_covmetrics(case):
    """covmetrics' sigma_x is the coverage's kernel, sigma_y the widths': its HSIC is ours
    squared with kernel_sizes = (sigma_y, sigma_x)."""
    for j, conf in enumerate(META["mapie"][case]["confidence_levels"]):
        ds, inp, conf = _fixture_dataset(case, j)
        for s_x, s_y in SET["hsic_kernels"]:
            cm = META["mapie"][case]["covmetrics_hsic"][f"c{conf}/sigma_x{s_x}/sigma_y{s_y}"]
            res = uqviz.group_coverage(
                ds,
                groups=inp["groups"],
                features=(),
                min_count=1,
                level=conf,
                intervals="given",
                kernel_sizes=(s_y, s_x),
                rng=0,
                **EXACT,
            )
            assert float(res["estimate"].sel(measure="hsic")) ** 2 == pytest.approx(cm, **APPROX)


@pytest.mark.parametrize("case", CASES)
def test_raw_worst_slab_equal_to_mapie(case):
    """The kernel on the raw features (MAPIE's own form, no standardisation)."""
    inp = PEER.inputs("mapie", case)
    for delta, m, seed in SET["wsc_settings"]:
        v = PEER.output("mapie", case, f"wsc_directions/m{m}/seed{seed}")
        orders, bounds = group_coverage_kernels.slab_orders(inp["x"], v)
        assert bounds.all()  # continuous features: no ties, MAPIE's windows
        for j, conf in enumerate(META["mapie"][case]["confidence_levels"]):
            c = (inp["lower"][:, j] <= inp["y"]) & (inp["y"] <= inp["upper"][:, j])
            k = math.ceil(delta * c.size)
            want = META["mapie"][case]["wsc"][f"c{conf}/delta{delta}/m{m}/seed{seed}"]
            for engine in ("numba", "numpy"):
                got = group_coverage_kernels.worst_slab(c, orders, k, bounds=bounds, engine=engine)[
                    0
                ]
                assert got == pytest.approx(want, **APPROX)


def _brute_slab(c, orders, m):
    """O(n^2) numpy enumeration of the runs of at least m points (MAPIE's definition)."""
    best = 1.0
    n = c.size
    for o in orders:
        cs = np.concatenate([[0.0], np.cumsum(c[o])])
        i, j = np.triu_indices(n + 1, k=m)
        best = min(best, float(np.min((cs[j] - cs[i]) / (j - i))))
    return best


def test_worst_slab_equals_brute_force():
    rng = np.random.default_rng(3)
    for _ in range(60):
        n = int(rng.integers(2, 70))
        m = int(rng.integers(1, n + 1))
        cover = rng.random((3, n)) < rng.random()
        orders = np.array([rng.permutation(n) for _ in range(4)])
        want = [_brute_slab(c.astype(float), orders, m) for c in cover]
        for engine in ("numba", "numpy"):
            got = group_coverage_kernels.worst_slab(cover, orders, m, engine=engine)
            assert got.tolist() == want  # exact: the ratio of the same two integers
            assert (
                group_coverage_kernels.worst_slab(cover[0], orders, m, engine=engine)[0] == want[0]
            )


def _brute_tied_slab(c, x, directions, m):
    """O(n^2) enumeration of the slabs {a <= v.x <= b} of at least m points: every pair of
    projected values (a, b), the points between them whatever their order (issue 38, item 7)."""
    best = 1.0
    for v in directions:
        proj = x @ v
        vals = np.unique(proj)
        for ia, a in enumerate(vals):
            for b in vals[ia:]:
                inside = (proj >= a) & (proj <= b)
                if inside.sum() >= m:
                    best = min(best, float(c[inside].mean()))
    return best


@pytest.mark.parametrize("engine", ["numba", "numpy"])
def test_worst_slab_keeps_tied_values_together(engine):
    """With tied projections (a feature of few distinct values), a slab holds all the points of
    a value or none: equal to the brute force of the docstring's definition, and the same
    whatever the order of the points (no unstable sort can change it)."""
    rng = np.random.default_rng(38)
    for _ in range(40):
        n = int(rng.integers(4, 60))
        x = rng.integers(0, int(rng.integers(2, 8)), (n, 2)).astype(float)
        cover = rng.random(n) < rng.uniform(0.3, 0.95)
        v = rng.standard_normal((3, 2))
        v[0] = [1.0, 0.0]  # one feature alone: many ties
        m = int(rng.integers(1, n + 1))
        orders, bounds = group_coverage_kernels.slab_orders(x, v)
        got = group_coverage_kernels.worst_slab(cover, orders, m, bounds=bounds, engine=engine)[0]
        assert got == pytest.approx(_brute_tied_slab(cover.astype(float), x, v, m), abs=1e-12)
        perm = rng.permutation(n)
        o2, b2 = group_coverage_kernels.slab_orders(x[perm], v)
        again = group_coverage_kernels.worst_slab(cover[perm], o2, m, bounds=b2, engine=engine)[0]
        assert again == got
        several = group_coverage_kernels.worst_slab(
            np.vstack([cover, cover]), orders, m, bounds=bounds, engine=engine
        )
        assert several.tolist() == [got, got]


def test_covgap_by_hand():
    """Two groups of 20 (a binary label): 17/20 and 20/20 inside at level 0.9."""
    rng = np.random.default_rng(1)
    u = np.ones(40)
    e = np.full(40, 0.1)
    e[[0, 1, 2]] = 5.0  # three points of group 0 outside
    lab = np.repeat(["a", "b"], 20)
    ds = uqviz.from_arrays(e * rng.choice([-1, 1], 40), u, features={"f": rng.random(40)})
    ds["lab"] = ("point", lab)
    res = uqviz.group_coverage(ds, groups="lab", features=(), rng=0, **FAST)
    assert res["coverage"].values.tolist() == [0.85, 1.0]
    assert float(res["estimate"].sel(measure="covgap:lab")) == pytest.approx(
        (0.05 + 0.1) / 2, abs=1e-15
    )
    assert float(res["estimate"].sel(measure="covgap_weighted:lab")) == pytest.approx(
        0.5 * 0.05 + 0.5 * 0.1, abs=1e-15
    )
    assert res["label"].values.tolist() == ["a", "b"]
    assert res["count"].values.tolist() == [20, 20]
    assert "slab" not in res["measure"].values.tolist()
    # the Wilson interval of interval_coverage, and the binomial band of a calibrated group
    lo, hi = (
        uqviz.interval_coverage(uqviz.from_arrays(e[:20], u[:20]), levels=(0.9,))[
            ["picp_lower", "picp_upper"]
        ]
        .to_array()
        .values.ravel()
    )
    assert float(res["coverage_lower"][0]) == pytest.approx(lo, abs=1e-15)
    assert float(res["coverage_upper"][0]) == pytest.approx(hi, abs=1e-15)
    assert float(res["coverage_reference_lower"][0]) == stats.binom.ppf(0.025, 20, 0.9) / 20


def test_hsic_independent_formula_and_permutations():
    """HSIC against the trace formula with explicit n x n matrices; the permutation p-value
    is seeded and about uniform for coverage independent of the widths."""
    rng = np.random.default_rng(5)
    n = 150
    u = np.exp(rng.normal(0, 0.5, n))
    e = u * rng.standard_normal(n)
    ds = uqviz.from_arrays(e, u, features={"f": rng.random(n)})
    res = uqviz.group_coverage(
        ds, features=(), groups=np.arange(n) % 3, rng=1, kernel_sizes=(0.7, 1.3), **FAST
    )
    q = stats.norm.ppf(0.95)
    w, c = 2 * q * u, (np.abs(e / u) <= q).astype(float)
    k = np.exp(-(np.subtract.outer(w, w) ** 2) / 0.7)
    l_ = np.exp(-(np.subtract.outer(c, c) ** 2) / 1.3)
    h = np.eye(n) - 1.0 / n
    want = math.sqrt(np.trace(l_ @ h @ k @ h) / (n - 1) ** 2)
    assert float(res["estimate"].sel(measure="hsic")) == pytest.approx(want, rel=1e-10)
    again = uqviz.group_coverage(
        ds, features=(), groups=np.arange(n) % 3, rng=1, kernel_sizes=(0.7, 1.3), **FAST
    )
    assert float(again["p_value"].sel(measure="hsic")) == float(res["p_value"].sel(measure="hsic"))
    # p-values of calibrated sets: about uniform (20 sets, 200 permutations each)
    ps = []
    for s in range(20):
        g = np.random.default_rng(100 + s)
        ds = uqviz.from_arrays(u * g.standard_normal(n), u)
        r = uqviz.group_coverage(
            ds, groups=np.arange(n) % 2, features=(), n_perm=200, n_mc=2, rng=s, progress=False
        )
        ps.append(float(r["p_value"].sel(measure="hsic")))
    assert stats.kstest(ps, "uniform").pvalue > 0.01
    assert 0.25 < np.mean(ps) < 0.75


def _region_data(n, wrong, seed):
    rng = np.random.default_rng(seed)
    x = rng.uniform(0, 1, (n, 3))
    u = 0.2 * np.exp(0.3 * rng.standard_normal(n))
    scale = np.where(x[:, 0] > 0.7, wrong, 1.0)  # uE too small by `wrong` in one region
    e = u * scale * rng.standard_normal(n)
    return uqviz.from_arrays(e, u, features={f"x{k}": x[:, k] for k in range(3)})


def test_calibrated_passes_and_wrong_region_fails():
    ok = uqviz.group_coverage(
        _region_data(1500, 1.0, 1), n_mc=100, n_perm=100, n_directions=30, rng=0, progress=False
    )
    assert set(ok["verdict"].values.tolist()) == {"OK"}
    assert np.all(ok["p_value"] > 0.05)
    bad = uqviz.group_coverage(
        _region_data(1500, 2.0, 0), n_mc=100, n_perm=100, n_directions=30, rng=0, progress=False
    )
    v = bad["verdict"].to_series()
    assert v["covgap:x0"] == "fails" and v["slab"] == "fails"
    assert float(bad["p_value"].sel(measure="slab")) == pytest.approx(1 / 101)
    assert v["covgap_weighted:x0"] == "fails"
    # the region x0 > 0.7 (30 % of the points) is covered at P(|N(0, 4)| <= 1.645) = 0.59
    inside = 2 * stats.norm.cdf(stats.norm.ppf(0.95) / 2) - 1
    top = bad["coverage"].where(bad["grouped_by"] == "x0", drop=True)[-3:]
    assert abs(float(top.mean()) - inside) < 0.06
    # the slab of calibrated data: near the level, below it (a minimum)
    ref = float(ok["reference"].sel(measure="slab"))
    assert 0.8 < ref < 0.9


def test_rng_client_tree_and_progress():
    ds = _region_data(300, 1.0, 1)
    a = uqviz.group_coverage(ds, rng=4, **FAST)
    b = uqviz.group_coverage(ds, rng=4, **FAST)
    assert a.equals(b)
    tree = uqviz.from_datasets({"p": ds, "q": _region_data(200, 1.0, 2)})
    t = uqviz.group_coverage(tree, rng=4, **FAST)
    assert t["dataset"].values.tolist() == ["p", "q"]
    # a single Dataset is the first child of a tree
    np.testing.assert_array_equal(t["estimate"].sel(dataset="p").values, a["estimate"].values)
    np.testing.assert_array_equal(t["reference"].sel(dataset="p").values, a["reference"].values)


def test_hsic_subsample_warns(monkeypatch):
    from uqviz.groups import coverage

    monkeypatch.setattr(coverage, "HSIC_MAX_POINTS", 100)
    with pytest.warns(uqviz.DataWarning, match="100 of the 300"):
        uqviz.group_coverage(_region_data(300, 1.0, 1), rng=0, **FAST)


def test_errors():
    ds = _region_data(200, 1.0, 3)
    with pytest.raises(ValueError, match=r"2 group\(s\) hold fewer than min_count = 20 points"):
        uqviz.group_coverage(ds, groups=np.r_[np.zeros(190), [1] * 5, [2] * 5], features=(), **FAST)
    with pytest.raises(ValueError, match="one label per point"):
        uqviz.group_coverage(ds, groups=np.zeros(10), **FAST)
    with pytest.raises(ValueError, match="no grouping"):
        uqviz.group_coverage(uqviz.from_arrays(ds["E"].values, ds["uE"].values), **FAST)
    ds2 = ds.copy()
    ds2["name"] = ("point", np.array(["a", "b"] * 100))
    with pytest.raises(ValueError, match="not numeric"):
        uqviz.group_coverage(ds2, features=("x0", "name"), **FAST)
    with pytest.raises(ValueError, match="level must be in"):
        uqviz.group_coverage(ds, level=1.0, **FAST)
    with pytest.raises(ValueError, match="not a variable"):
        uqviz.group_coverage(ds, groups="nope", **FAST)
    with pytest.raises(ValueError, match="delta"):
        uqviz.group_coverage(ds, delta=0.0, **FAST)
    with pytest.raises(ValueError, match="not among the levels"):
        uqviz.group_coverage(
            _fixture_dataset("small", 0)[0], intervals="given", level=0.5, min_count=1, **FAST
        )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        uqviz.group_coverage(ds2, groups="name", features=("x0",), **FAST)


def test_plot():
    import matplotlib.pyplot as plt

    from uqviz.plots.groups import group_coverage as plot

    res = uqviz.group_coverage(_region_data(400, 2.0, 0), rng=0, **FAST)
    ax = plot(res)
    lines = [ln for ln in ax.get_lines() if ln.get_label() == "level"]
    assert len(lines) == 1 and lines[0].get_ydata()[0] == 0.9
    assert ax.get_ylabel() == "coverage"
    assert len(ax.get_xticks()) == res.sizes["group"]
    plt.close("all")
    with pytest.raises(ValueError):
        plot(res.drop_vars("coverage"))


def test_missing_group_labels_and_a_feature_that_is_not_a_name_are_clear_errors():
    """issue 38, item 9: None labels gave "'<' not supported", ``features=3`` "'int' object
    is not iterable"."""
    r = np.random.default_rng(0)
    u = r.uniform(0.5, 2.0, 80)
    ds = uqviz.from_arrays(r.standard_normal(80) * u, u)
    labels = np.array([None] * 3 + ["a"] * 77, dtype=object)
    with pytest.raises(ValueError, match=r"groups 'groups': 3 missing labels \(None or NaN\)"):
        uqviz.group_coverage(ds, groups=labels, n_mc=2, n_perm=2, rng=0)
    with pytest.raises(
        TypeError,
        match=r"features must be None, a variable name or a sequence "
        r"of names, got 3 \(int\)",
    ):
        uqviz.group_coverage(ds, features=3, n_mc=2, n_perm=2, rng=0)
