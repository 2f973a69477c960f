import inspect, warnings, sys, traceback
import numpy as np, xarray as xr
import matplotlib; matplotlib.use("Agg")
import matplotlib.pyplot as plt
sys.path.insert(0, "/work/wt-i38-misc")
from tests.contract import test_contract as tc
import uqviz

inputs = tc._plot_inputs()
PLOTS = tc.PLOTS

def call(qual, first, **kw):
    return tc._plot_call(qual, first, **kw)

def outcome(fn):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fn()
        return "SILENT"
    except ValueError as e:
        return "VE: " + str(e).split("\n")[0][:150]
    except Exception as e:
        return f"{type(e).__name__}: " + str(e).split("\n")[0][:150]

def emptied(res, dim):
    return res.isel({dim: slice(0, 0)})

def nanned(res):
    out = res.copy(deep=True)
    for v in out.data_vars:
        if np.issubdtype(out[v].dtype, np.floating):
            out[v][...] = np.nan
    return out

which = sys.argv[1:] 
for qual in PLOTS:
    name = tc._short(qual)
    if which and name not in which: continue
    first = inputs[name]
    if isinstance(first, dict):
        print(name, "dict input"); continue
    print("==", name)
    print("  ok:", outcome(lambda: call(qual, first)))
    dims = [d for d in first.dims]
    for d in dims:
        print(f"  empty {d}:", outcome(lambda: call(qual, emptied(first, d))))
    print("  allnan:", outcome(lambda: call(qual, nanned(first))))
    sig = inspect.signature(tc.PUBLIC[qual])
    for p in list(sig.parameters.values())[1:]:
        if p.name in ("ax", "layout"): continue
        if isinstance(p.default, (str, tuple, type(None))) or p.name in ("statistic", "statistics", "variable", "measure", "kind", "labels", "dataset"):
            print(f"  {p.name}='nosuch':", outcome(lambda: call(qual, first, **{p.name: "nosuch"})))
            if p.name == "statistics":
                print(f"  {p.name}=['nosuch']:", outcome(lambda: call(qual, first, **{p.name: ["nosuch"]})))
    plt.close("all")
