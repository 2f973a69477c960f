"""ReferenceExplorer driven headless by setting the .value of its controls."""

import warnings

import numpy as np
import pytest

import uqviz
from uqviz.widgets.reference import ReferenceExplorer


@pytest.fixture(scope="module")
def tree():
    return uqviz.from_datasets(
        {
            "small": uqviz.synthetic.nig(800, nu=6, rng=0),
            "large": uqviz.synthetic.tig(3000, nu_ig=5, nu_d=6, rng=1),
        }
    )


def _check_consistent(res):
    est, lo, hi = (float(res[k]) for k in ("estimate", "ci_lower", "ci_upper"))
    ref, se = float(res.reference), float(res.reference_se)
    s = res.samples.values
    assert ref == pytest.approx(s.mean(), rel=1e-12)
    assert se == pytest.approx(s.std(ddof=1) / np.sqrt(s.size), rel=1e-12)
    assert float(res.reference_lower) == pytest.approx(np.quantile(s, 0.025))
    # Sim: bootstrap interval + 2 se; Sim2: Monte Carlo interval of the reference
    limit = hi if est <= ref else lo
    assert float(res.zeta.sel(scheme="Sim")) == pytest.approx(
        (est - ref) / np.hypot(est - limit, 2 * se)
    )
    inside = float(res.reference_lower) <= est <= float(res.reference_upper)
    assert bool(res.valid.sel(scheme="Sim2")) == inside
    assert bool(res.valid.sel(scheme="Sim")) == (abs(float(res.zeta.sel(scheme="Sim"))) <= 1)


def test_defaults_and_controls(tree):
    ex = ReferenceExplorer(tree, n_mc=150, n_boot=200)
    res = ex.result
    assert res.attrs["dataset"] == "small"
    assert res.attrs["statistic"] == "ENCE" and res.attrs["generative"] == "normal"
    assert res.attrs["n_bins"] == 20 and res.samples.sizes["sample"] == 150
    assert list(res.scheme.values) == ["Sim", "Sim2"]
    _check_consistent(res)
    assert ex.nu.disabled and not ex.n_bins.disabled
    assert "ENCE" in ex.summary.value and "&zeta;<sub>Sim2</sub>" in ex.summary.value
    assert ex.figure is not None and ex.ax.get_xlabel() == "ENCE"
    assert ex.ax.get_title() == "small: ENCE, D = normal"


def test_setting_values_recomputes(tree):
    ex = ReferenceExplorer(tree, n_mc=150, n_boot=200)
    normal_ref = float(ex.result.reference)
    ex.generative.value = "t"
    assert not ex.nu.disabled
    assert ex.result.attrs["generative"] == "t6"
    # Pernot (2024c) Fig. 5: heavier tails of D give a larger ENCE reference
    assert float(ex.result.reference) > normal_ref
    ex.nu.value = 4.0
    assert ex.result.attrs["generative"] == "t4"
    ex.n_bins.value = 10
    assert ex.result.attrs["n_bins"] == 10
    ex.dataset.value = "large"
    assert ex.result.attrs["dataset"] == "large"
    assert ex.ax.get_title() == "large: ENCE, D = t4"
    _check_consistent(ex.result)
    for key in ("uniform", "laplace", "empirical"):
        ex.generative.value = key
        assert ex.nu.disabled
        assert ex.result.attrs["generative"] == key
    ex.statistic.value = "CC"
    assert ex.n_bins.disabled
    assert ex.result.attrs["statistic"] == "CC"
    _check_consistent(ex.result)


def test_zms_gets_the_bs_scheme_and_a_reference_of_one(tree):
    ex = ReferenceExplorer(tree, statistic="ZMS", n_mc=400, n_boot=300)
    res = ex.result
    assert list(res.scheme.values) == ["Sim", "Sim2", "BS"]
    assert float(res.reference) == pytest.approx(1.0, abs=4 * float(res.reference_se))
    est, lo, hi = float(res.estimate), float(res.ci_lower), float(res.ci_upper)
    bs = float(res.zeta.sel(scheme="BS"))
    assert bs == pytest.approx((est - 1) / (hi - est) if est <= 1 else (est - 1) / (est - lo))


def test_nu_changes_are_ignored_for_other_d_and_settings_are_reproducible(tree):
    ex = ReferenceExplorer(tree["small"].to_dataset(), statistic="ZMSE", n_mc=100, n_boot=100)
    assert ex.dataset.disabled  # one dataset: no choice
    before = ex.result
    ex.nu.value = 10.0  # normal D: no recomputation
    assert ex.result is before
    again = ReferenceExplorer(tree["small"].to_dataset(), statistic="ZMSE", n_mc=100, n_boot=100)
    np.testing.assert_array_equal(again.result.samples, before.samples)
    assert float(again.result.estimate) == float(before.estimate)


def test_bad_arguments(tree):
    with pytest.raises(ValueError, match="statistic"):
        ReferenceExplorer(tree, statistic="RCE")
    with pytest.raises(ValueError, match="generative"):
        ReferenceExplorer(tree, generative="cauchy")


@pytest.mark.parametrize(
    "nu, error",
    [
        (1.0, ValueError),
        (2.0, ValueError),
        (31.0, ValueError),
        (float("nan"), ValueError),
        ("6", TypeError),
    ],
)
def test_nu_outside_the_slider_is_refused(tree, nu, error):
    # issue 22 item 7: nu=1.0 was clamped to the slider's 2.5 without a word
    with pytest.raises(error, match=r"nu must be"):
        ReferenceExplorer(tree, generative="t", nu=nu)
    if error is ValueError and nu == nu:
        with pytest.raises(ValueError, match=r"nu must be in \[2.5, 30\] .*got"):
            ReferenceExplorer(tree, generative="t", nu=nu)


def test_widget_numbers_are_validate_simulated_numbers(tree):
    # the explorer calls the public function: same settings and rng, same numbers
    ex = ReferenceExplorer(tree, statistic="ENCE", n_mc=150, n_boot=200, rng=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        expected = uqviz.validate_simulated(
            tree["small"].to_dataset(),
            statistic="ENCE",
            scheme=["Sim", "Sim2"],
            n_mc=150,
            n_boot=200,
            n_bins=20,
            rng=3,
            return_samples=True,
        )
    res = ex.result
    for name in expected.data_vars:
        np.testing.assert_array_equal(res[name].values, expected[name].values, err_msg=name)
    assert {k: v for k, v in res.attrs.items() if k != "dataset"} == expected.attrs
    # the z0 warning of validate_simulated is shown, not a copy of it
    assert "z0 = " in ex.message.value and "(|z0| &gt; 1)" in ex.message.value
    ex.statistic.value = "ZMS"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        zms = uqviz.validate_simulated(
            tree["small"].to_dataset(),
            statistic="ZMS",
            scheme=["Sim", "Sim2", "BS"],
            n_mc=150,
            n_boot=200,
            rng=3,
        )
    np.testing.assert_array_equal(ex.result.zeta.values, zms.zeta.values)


def test_widget_ci_option(tree):
    ex = ReferenceExplorer(tree, statistic="CC", n_mc=100, n_boot=200, ci=0.9)
    assert ex.result.attrs["ci"] == 0.9 and "90% CI" in ex.summary.value
    s = ex.result.samples.values
    assert float(ex.result.reference_lower) == pytest.approx(np.quantile(s, 0.05))
    with pytest.raises(ValueError, match="ci must be in"):
        ReferenceExplorer(tree, ci=95)
    with pytest.raises(ValueError, match="n_mc must be >= 2"):
        ReferenceExplorer(tree, n_mc=0)


def test_a_setting_visited_again_is_not_recomputed(tree, monkeypatch):
    import uqviz.widgets.reference as module

    ex = ReferenceExplorer(tree, n_mc=150, n_boot=200)
    first = ex.result
    calls = []
    real = module.validate_simulated
    monkeypatch.setattr(
        module, "validate_simulated", lambda *a, **k: calls.append(k["generative"]) or real(*a, **k)
    )
    ex.generative.value = "t"
    ex.nu.value = 10.0
    ex.generative.value = "normal"  # visited: the numbers of the first view, not recomputed
    assert calls == ["t6", "t10"] and ex.result is first
    assert f"{float(first['reference']):.4g}" in ex.summary.value
    ex.generative.value = "t"  # t10 again
    assert calls == ["t6", "t10"] and ex.result.attrs["generative"] == "t10"
