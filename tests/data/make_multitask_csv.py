"""Write tests/data/multitask.csv: a chemprop-style multi-task file with masked cells (issue 39).

300 molecules in 40 scaffolds, 3 targets (logS, logP, logD) with their predictions
(``<target>_pred``) and ensemble standard deviations (``<target>_unc``); 10 %, 20 % and 30 %
of the measured values left empty (a molecule without that measurement), as in chemprop's
multi-task training files. Calibrated errors with a shared component per scaffold
(correlated points). Fixed seed: ``python tests/data/make_multitask_csv.py`` rewrites the
same file.
"""

from __future__ import annotations

import pathlib

import numpy as np
import pandas as pd

SEED = 39
N, N_SCAFFOLDS = 300, 40
TARGETS = {"logS": (-3.0, 0.10), "logP": (2.0, 0.20), "logD": (1.5, 0.30)}  # mean, masked
OUT = pathlib.Path(__file__).with_name("multitask.csv")


def make() -> pd.DataFrame:
    rng = np.random.default_rng(SEED)
    scaffold = rng.integers(0, N_SCAFFOLDS, size=N)
    cols = {"smiles": [f"C{'C' * (i % 12)}O{i}" for i in range(N)], "scaffold": scaffold}
    shared = rng.normal(size=N_SCAFFOLDS)
    for name, (mean, masked) in TARGETS.items():
        unc = np.exp(rng.normal(np.log(0.4), 0.35, size=N))
        z = np.sqrt(0.7) * rng.normal(size=N) + np.sqrt(0.3) * shared[scaffold]
        pred = mean + rng.normal(size=N)
        ref = pred + unc * z
        ref[rng.random(N) < masked] = np.nan  # an empty cell: not measured
        cols[name] = np.round(ref, 4)
        cols[f"{name}_pred"] = np.round(pred, 4)
        cols[f"{name}_unc"] = np.round(unc, 4)
    return pd.DataFrame(cols)


if __name__ == "__main__":
    make().to_csv(OUT, index=False)
    print(f"wrote {OUT}")
