"""``import uqviz`` is light (issue 25, item 2): the heavy modules load when first used.

- a fresh ``import uqviz`` imports none of scipy.stats / scipy.special / scipy.optimize,
  matplotlib(.pyplot), seaborn, dask, sklearn, numba (a ``sys.modules`` check, no timing);
- in that same fresh process, the first analyses load them and give the numbers computed by
  hand (numpy, scipy): ZMS = <Z^2>, CC = Spearman's rho of |E| and uE (scipy.stats.spearmanr),
  ENCE over 10 equal-count bins of uE (Levi et al. (2022)), the normal quantiles of
  ``from_predictions``;
- ``uqviz.plots`` and ``uqviz.widgets`` still load on attribute access;
- the stand-ins give scipy's own objects, and the constants written out to avoid importing scipy
  at import time are scipy's values to the last bit.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
from scipy import special, stats

from uqviz._array import binned as binned_kernels
from uqviz._array.lazy import LazyModule, lazy_module
from uqviz.data import predictions
from uqviz.engine import checks
from uqviz.engine import statistics as engine_statistics

ROOT = Path(__file__).resolve().parents[2]

#: modules a bare ``import uqviz`` must not import
HEAVY = (
    "scipy.stats",
    "scipy.special",
    "scipy.optimize",
    "matplotlib",
    "matplotlib.pyplot",
    "seaborn",
    "dask",
    "dask.distributed",
    "sklearn",
    "numba",
)

CHILD = r"""
import json, sys, warnings
import numpy as np
import uqviz
heavy = json.loads(sys.argv[1])
out = {"loaded_by_import": [m for m in heavy if m in sys.modules]}
warnings.simplefilter("ignore")
ds = uqviz.synthetic.default_example()
e, u = ds["E"].values, ds["uE"].values
res = uqviz.validate_average(ds, statistics=("ZMS", "CC"), n_boot=100, rng=0)
out["ZMS"] = float(res["estimate"].sel(statistic="ZMS"))
out["ZMS_hand"] = float(np.mean((e / u) ** 2))
out["CC"] = float(res["estimate"].sel(statistic="CC"))
from scipy import stats
out["CC_scipy"] = float(stats.spearmanr(np.abs(e), u).statistic)
out["ENCE"] = float(uqviz.binned_errors(ds, n_bins=10)["estimate"].sel(statistic="ENCE"))
order = np.argsort(u, kind="stable")
bins = np.array_split(order, 10)
rmv = np.array([np.sqrt(np.mean(u[b] ** 2)) for b in bins])
rmse = np.array([np.sqrt(np.mean(e[b] ** 2)) for b in bins])
out["ENCE_hand"] = float(np.mean(np.abs(rmv - rmse) / rmv))
out["numba_after_use"] = "numba" in sys.modules
out["plots"] = hasattr(uqviz.plots.conditional, "local")
out["widgets"] = hasattr(uqviz.widgets, "ConditionalExplorer")
print(json.dumps(out))
"""


def _fresh():
    env = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
        MPLBACKEND="Agg",
        UQVIZ_PROGRESS="0",
    )
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, json.dumps(HEAVY)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_fresh_import_is_light_and_first_use_gives_the_hand_numbers():
    out = _fresh()
    assert out["loaded_by_import"] == [], f"import uqviz imported {out['loaded_by_import']}"
    np.testing.assert_allclose(out["ZMS"], out["ZMS_hand"], rtol=1e-12)
    np.testing.assert_allclose(out["CC"], out["CC_scipy"], rtol=1e-12)
    np.testing.assert_allclose(out["ENCE"], out["ENCE_hand"], rtol=1e-12)
    assert out["numba_after_use"] is True  # the kernels' module loaded at first use
    assert out["plots"] is True and out["widgets"] is True


def test_lazy_module_is_scipys_module():
    lazy = lazy_module("scipy.stats")
    assert isinstance(lazy, LazyModule)
    assert lazy.norm is stats.norm
    assert lazy_module("scipy.special").ndtri is special.ndtri
    assert float(lazy.norm.ppf(0.975)) == float(stats.norm.ppf(0.975))


def test_written_out_constants_are_scipys_values():
    assert engine_statistics.RR_QUANTILE == float(np.sqrt(2.0) * special.erfinv(0.95))
    assert engine_statistics.RR_LEVEL == 0.95
    assert predictions.P_LOW == float(stats.norm.cdf(-1.0))
    assert predictions.P_HIGH == float(stats.norm.cdf(1.0))


def test_binned_forwarders_are_the_kernels():
    assert engine_statistics.BINNED_STATISTICS == tuple(binned_kernels.BINNED)
    assert engine_statistics.BINNED_STATISTICS == tuple(binned_kernels.FROM_MEANS)
    # bins with MV = (1, 4), MSE = (4, 1): RMV = (1, 2), RMSE = (2, 1)
    m = {"V": np.array([1.0, 4.0]), "E2": np.array([4.0, 1.0]), "Z2": np.array([4.0, 0.25])}
    get = engine_statistics.get_statistic
    assert float(get("ENCE").func(m)) == 0.75  # (|1 - 2|/1 + |2 - 1|/2) / 2
    assert float(get("UCE").func(m)) == 3.0  # (|1 - 4| + |4 - 1|) / 2
    assert float(get("ZMSE").func(m)) == float(np.log(4.0))  # (|ln 4| + |ln 1/4|) / 2
    assert checks.ENGINES == ("numba", "numpy")


def test_the_holders_name_becomes_the_module_at_first_use(monkeypatch):
    import colorsys

    namespace = {}
    exec("from uqviz._array.lazy import lazy_module\ncs = lazy_module('colorsys')", namespace)
    stand_in = namespace["cs"]
    assert isinstance(stand_in, LazyModule)
    assert namespace["cs"].rgb_to_hsv(1.0, 0.0, 0.0) == (0.0, 1.0, 1.0)
    assert namespace["cs"] is colorsys  # rebound: no stand-in left between the holder and it
    # through a stand-in held elsewhere, a patched attribute of the module is seen
    monkeypatch.setattr(colorsys, "rgb_to_hsv", lambda r, g, b: "patched")
    assert stand_in.rgb_to_hsv(1.0, 0.0, 0.0) == "patched"


def test_first_use_from_several_threads_waits_for_the_import(tmp_path, monkeypatch):
    """The explorers' Monte Carlo blocks run on threads: when they all touch a lazy kernel
    module first, every thread must get the whole module, never one still being executed
    (a thread that found it in ``sys.modules`` half-initialised raised AttributeError)."""
    import threading
    import time

    (tmp_path / "uqviz_slow_module.py").write_text(
        "import time\ntime.sleep(0.3)  # a slow import: the others arrive meanwhile\nANSWER = 42\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "uqviz_slow_module", raising=False)
    slow = LazyModule("uqviz_slow_module")
    got = []

    def read(delay):
        time.sleep(delay)  # the first thread is importing when the others arrive
        try:
            got.append(slow.ANSWER)
        except AttributeError as err:  # the old behaviour
            got.append(err)

    threads = [threading.Thread(target=read, args=(0.0 if i == 0 else 0.1,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert got == [42, 42, 42, 42]
    monkeypatch.delitem(sys.modules, "uqviz_slow_module")
