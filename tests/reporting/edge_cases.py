"""The reports whose words, HTML and JSON are pinned by ``tests/reporting/test_report_edge.py``
(``data/edge_golden.json``, written by ``python -m tests.reporting.edge_cases`` from the
code before the edge read the verdict table, issue 38)."""

import hashlib
import json
import re

import numpy as np
from scipy import stats

import uqviz

GOLDEN = "tests/reporting/data/edge_golden.json"
SMALL = dict(n_boot=300, n_mc=50, progress=False, figures=False)
#: keys the JSON gained after the pin (left out of the pinned JSON)
NEW_KEYS = ("verdict_table",)


def _quantiles(m=1200, spread=1.3, seed=0):
    """A forecast given as quantiles, too narrow (the PIT fails), with a feature x."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(0, 1, m)
    pred = rng.uniform(-3, 3, m)
    s = np.exp(0.3 * rng.standard_normal(m))
    y = pred + spread * s * rng.standard_normal(m)
    q = {lv: pred + s * stats.norm.ppf(lv) for lv in (0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95)}
    return uqviz.from_predictions(y, pred, quantiles=q, features={"x": x}, name="quantiles")


def _heavy():
    """Heavy-tailed z-scores (Student-t, nu = 3) with a feature: the Z^2 screen fails."""
    u = uqviz.synthetic.nig(1500, nu=20, rng=1)["uE"].values
    z = uqviz.synthetic.student_t_scaled(u.size, nu=3, rng=4)
    x = np.random.default_rng(2).uniform(0, 1, u.size)
    return uqviz.from_arrays(u * z, u, features={"x": x}, name="heavy")


def cases():
    """``{name: Report}``: the default example (its headline fails, with the feature X and the
    remedy), a calibrated set without features, a heavy-tailed set with a feature, and a
    quantile forecast whose PIT fails."""
    return {
        "default": uqviz.report(uqviz.synthetic.default_example(), rng=3, **SMALL),
        "calibrated": uqviz.report(
            uqviz.synthetic.nig(1500, nu=20, rng=1), rng=5, remedy=False, **SMALL
        ),
        "heavy": uqviz.report(_heavy(), rng=2, **SMALL),
        "pit_fails": uqviz.report(_quantiles(), rng=1, **SMALL),
    }


def verdict_section(html: str) -> str:
    """The HTML from the verdicts' heading to the warnings (or the data) heading."""
    start = html.index("<h1 ") if "<h2>Verdicts" not in html else html.index("<h2>Verdicts")
    stop = re.search(r"<h2>(Warnings|Data)</h2>", html).start()
    return html[start:stop]


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def pinned(rep) -> dict:
    """What the pin holds of one report."""
    html = rep.to_html()
    doc = json.loads(rep.to_json())
    for k in NEW_KEYS:
        doc.pop(k, None)
    return {
        "conclusion": rep.conclusion,
        "headline": rep.headline,
        "verdict": rep.verdict,
        "verdict_section": verdict_section(html),
        "html_sha256": _digest(html),
        "json_sha256": _digest(json.dumps(doc, sort_keys=True)),
    }


if __name__ == "__main__":
    out = {k: pinned(r) for k, r in cases().items()}
    with open(GOLDEN, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")
