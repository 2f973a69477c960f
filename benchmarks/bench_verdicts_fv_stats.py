"""False alarm and power of the verdict-table entries ``fv:consistency:<ZVar|ZISD|RR>``.

The cells of the quick grid of ``benchmarks/bench_verdicts.py`` (M = 2000, uE^2 inverse-gamma,
n_boot 500) that the time allowed on a shared machine: calibrated sets with D normal and t6,
``consistency1.5``, ``adaptivity`` and ``scale1.1``; each set costs about 9-10 s (three
``local_calibration`` calls with their calibrated null of 2 000 simulated bins).
``bench_verdicts.py --quick --verdicts fv:consistency:ZVar ...`` runs the whole grid.

Usage::

    python benchmarks/bench_verdicts_fv_stats.py
"""

from __future__ import annotations

import time
import warnings

from uqviz.experiments.verdicts import operating_characteristics

VERDICTS = ["fv:consistency:ZVar", "fv:consistency:ZISD", "fv:consistency:RR"]
CELLS = [(("calibrated",), "normal", 40), (("consistency1.5",), "normal", 20),
         (("calibrated",), "t6", 20), (("adaptivity", "scale1.1"), "normal", 12)]


def main():
    for k, (scenarios, gen, n) in enumerate(CELLS):
        t = time.time()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            oc = operating_characteristics(scenarios=scenarios, generative=gen, size=2000,
                                           n_datasets=n, design="inverse_gamma",
                                           verdicts=VERDICTS, n_boot=500, n_mc=200,
                                           rng=2024 + k, progress=False)
        df = oc[["fails", "fails_se", "unreliable", "miscalibrated", "cost"]].to_dataframe()
        print(f"== {scenarios} D={gen} sets={n} ({time.time() - t:.0f} s)")
        print(df.to_string(), flush=True)


if __name__ == "__main__":
    main()
