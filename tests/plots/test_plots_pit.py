"""The PIT figures draw the numbers of validate_pit, and nothing else."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import xarray as xr  # noqa: E402

import uqviz  # noqa: E402
from uqviz.plots.pit import pit_ecdf_difference, pit_histogram  # noqa: E402


@pytest.fixture(scope="module")
def result():
    rng = np.random.default_rng(0)
    u = np.exp(0.3 * rng.normal(size=1500))
    return uqviz.validate_pit(
        uqviz.from_arrays(1.3 * u * rng.normal(size=1500), u), n_bins=10, rng=1, n_band=200
    )


def test_histogram_bars_are_the_counts(result):
    ax = pit_histogram(result)
    bars = ax.containers[0]  # the BarContainer of the counts
    assert [p.get_height() for p in bars] == result["pit_count"].values.tolist()
    assert [p.get_x() for p in bars] == pytest.approx(result["bin_lower"].values.tolist())
    assert ax.get_title().startswith("fails: KS p = ")  # overdispersed errors: a U shape
    plt.close("all")


def test_ecdf_difference_curve_and_band(result):
    ax = pit_ecdf_difference(result)
    line = [ln for ln in ax.lines if ln.get_label().startswith("ECDF")][0]
    np.testing.assert_array_equal(line.get_ydata()[1:-1], result["ecdf_difference"].values)
    np.testing.assert_array_equal(line.get_xdata()[1:-1], result["pit_grid"].values)
    assert ax.get_ylabel() == "ECDF - PIT"
    plt.close("all")


def test_a_datatree_result_needs_a_dataset_choice(result):
    two = xr.concat([result, result], dim=xr.DataArray(["a", "b"], dims="dataset", name="dataset"))
    with pytest.raises(ValueError, match="choose one with dataset="):
        pit_histogram(two)
    assert pit_ecdf_difference(two, dataset="b").get_title().startswith("b: fails")
    plt.close("all")
