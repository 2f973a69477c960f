"""One-call validation report: every analysis of uqviz on one dataset, as HTML and JSON.

The report runs, in order: data summary, tailedness screen, average
calibration (ZMS, RCE, NLL), consistency (LZM/LZMS vs uE, f_v), adaptivity
for each feature (LZMS vs the feature, f_v, the worst region in words), and
the binned statistics ENCE/ZMSE and CC through the simulated-reference
workflow; it ends with a plain-language conclusion. Numbers come from the
public compute functions; figures from :mod:`uqviz.plots`.
"""

from __future__ import annotations

import base64
import html
import io
import json
import os
import warnings
from dataclasses import dataclass, field

import numpy as np
import xarray as xr
from tqdm.auto import tqdm

from uqviz.reporting import text
from uqviz.conditional.local import fraction_valid, local_calibration
from uqviz.data.model import check_dataset
from uqviz.reference.simulated import validate
from uqviz.average.validation import tailedness, validate_average

__all__ = ["Report", "report", "describe_failures"]


def _jsonable(x):
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if isinstance(x, np.ndarray):
        return _jsonable(x.tolist())
    if isinstance(x, (np.bool_, bool)):
        return bool(x)
    if isinstance(x, (np.integer,)):
        return int(x)
    if isinstance(x, (float, np.floating)):
        return None if not np.isfinite(x) else float(x)
    if isinstance(x, np.str_):
        return str(x)
    return x


def dataset_to_json(ds: xr.Dataset) -> dict:
    """A result Dataset as plain JSON-ready dicts (variables, coords, attrs)."""
    out = {"dims": dict(ds.sizes), "attrs": _jsonable(dict(ds.attrs))}
    out["coords"] = {k: _jsonable(v.values) for k, v in ds.coords.items()}
    out["data"] = {k: {"dims": list(v.dims), "values": _jsonable(v.values)}
                   for k, v in ds.data_vars.items()}
    return out


def describe_failures(local_result, name: str, *, fmt="{:.4g}") -> str | None:
    """The worst region of a local analysis in words, or None when all bins are valid.

    The worst region is the longest run of invalid bins, allowing single
    valid bins inside a run (a 95 % interval misses 1 bin in 20 by chance);
    its direction comes from the local statistic relative to the reference
    (LZMS < 1: uncertainties overestimated there).

    Examples
    --------
    >>> import numpy as np, xarray as xr
    >>> res = xr.Dataset({"valid": ("bin", [False, False, True, True]),
    ...                   "estimate": ("bin", [0.5, 0.6, 1.0, 1.1]), "reference": 1.0},
    ...                  coords={"bin_lower": ("bin", [100, 110, 120, 130]),
    ...                          "bin_upper": ("bin", [110, 120, 130, 140])})
    >>> describe_failures(res, "mass")
    'mass < 120 (2 of 2 bins invalid there; uncertainties overestimated)'
    """
    valid = np.asarray(local_result["valid"].values, dtype=bool)
    if valid.all():
        return None
    bridged = valid.copy()
    gap = valid[1:-1] & ~valid[:-2] & ~valid[2:]  # one valid bin between invalid ones
    bridged[1:-1][gap] = False
    best, start, run = (0, 0), None, 0
    for i, ok in enumerate(np.r_[bridged, True]):
        if not ok:
            start = i if run == 0 else start
            run += 1
            if run > best[1] - best[0]:
                best = (start, i + 1)
        else:
            run = 0
    a, b = best
    n = valid.size
    lo = fmt.format(float(local_result["bin_lower"][a]))
    hi = fmt.format(float(local_result["bin_upper"][b - 1]))
    if a == 0 and b == n:
        where = f"the whole range of {name}"
    elif a == 0:
        where = f"{name} < {hi}"
    elif b == n:
        where = f"{name} > {lo}"
    else:
        where = f"{lo} < {name} < {hi}"
    est = float(np.mean(local_result["estimate"].values[a:b]))
    ref = float(local_result["reference"])
    sense = "overestimated" if est < ref else "underestimated"
    if local_result.attrs.get("statistic") in ("ZM",):
        sense = "errors biased " + ("negative" if est < ref else "positive")
    else:
        sense = f"uncertainties {sense}"
    n_bad = int((~valid[a:b]).sum())
    return f"{where} ({n_bad} of {b - a} bins invalid there; {sense})"


@dataclass
class Report:
    """Results of :func:`report`: ``numbers`` (JSON-ready), ``figures`` (PNG bytes), HTML."""

    name: str
    numbers: dict
    conclusion: list
    warnings: list
    figures: dict = field(default_factory=dict)

    def to_json(self) -> str:
        """The numbers, conclusion and warnings as a JSON string."""
        return json.dumps({"name": self.name, "conclusion": self.conclusion,
                           "warnings": self.warnings, **self.numbers}, indent=1)

    def to_html(self) -> str:
        """A self-contained HTML page (figures embedded as base64 PNG)."""
        return _render_html(self)

    def _repr_html_(self):
        return _render_fragment(self)

    def save(self, out_dir) -> dict:
        """Write ``<name>_report.html`` and ``<name>_report.json``; return their paths."""
        os.makedirs(out_dir, exist_ok=True)
        stem = os.path.join(out_dir, f"{self.name}_report")
        with open(stem + ".html", "w", encoding="utf-8") as f:
            f.write(self.to_html())
        with open(stem + ".json", "w", encoding="utf-8") as f:
            f.write(self.to_json())
        return {"html": stem + ".html", "json": stem + ".json"}


def _png(fig) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    import matplotlib.pyplot as plt

    plt.close(fig)
    return buf.getvalue()


def _local_figure(result, fv, title):
    from uqviz.plots.conditional import local

    ax = local(result, fv=fv)
    ax.set_title(title)
    return _png(ax.figure)


def _features(ds, features):
    if features is None:
        return [v for v, da in ds.data_vars.items()
                if da.attrs.get("role") == "feature" and np.issubdtype(da.dtype, np.number)]
    missing = [f for f in features if f not in ds.data_vars]
    if missing:
        raise ValueError(f"features not in the dataset: {', '.join(missing)}")
    return list(features)


def report(data, *, features=None, n_boot=5000, n_mc=2000, n_bins=None, rng=0,
           progress=True, figures=True) -> Report:
    """Validate one dataset with every analysis of uqviz and summarise the verdict.

    Parameters
    ----------
    data : xarray.Dataset
        One dataset (``E``, ``uE``, optional features).
    features : sequence of str, optional
        Features for the adaptivity analysis (default: every numeric feature).
    n_boot : int, default 5000
        Bootstrap replicates (average calibration and per bin).
    n_mc : int, default 2000
        Monte Carlo size of the simulated references (ENCE, ZMSE, CC).
    n_bins : int, optional
        Bins of the local analyses (default M // 100 between 10 and 100: bins
        of about 100 points, the size below which local intervals are
        unreliable).
    rng : int or Generator, default 0
        Seed: the same seed gives the same report. Each random analysis has its
        own child of ``np.random.default_rng(rng).spawn(8 + 2 * len(features))``,
        in this order: average calibration, LZMS for uE then for each feature,
        ENCE, ZMSE, CC. Calling the library function with that child gives the
        report's number exactly.
    progress : bool
        Show the steps on the console.
    figures : bool
        Draw the figures (HTML); off for numbers only.

    Returns
    -------
    Report
        ``.numbers`` (every number, JSON-ready), ``.conclusion`` (sentences),
        ``.save(dir)`` writes HTML + JSON; renders inline in Jupyter.

    Examples
    --------
    >>> import uqviz
    >>> rep = uqviz.report(uqviz.synthetic.default_example(), n_boot=500, n_mc=200,
    ...                    progress=False, figures=False)
    >>> rep.conclusion[0]
    'Average calibration: OK (ZMS validated).'
    """
    check_dataset(data)
    name = data.attrs.get("name") or "data"
    feats = _features(data, features)
    m = data.sizes["point"]
    n_bins = int(np.clip(m // 100, 10, 100)) if n_bins is None else int(n_bins)
    rngs = iter(np.random.default_rng(rng).spawn(8 + 2 * len(feats)))
    steps = ["average", "consistency", *[f"adaptivity: {f}" for f in feats], "binned"]
    bar = tqdm(steps, desc=f"uqviz report {name}", disable=not progress)
    numbers, figs, warns = {}, {}, []

    def step(label):
        bar.set_postfix_str(label)

    step("data summary")
    numbers["data"] = _summary(data, feats)
    tail = tailedness(data)
    numbers["tailedness"] = dataset_to_json(tail)
    warns += text.tailedness_warnings(tail)

    avg = validate_average(data, statistics=("ZMS", "RCE", "NLL"), n_boot=n_boot,
                           rng=next(rngs))
    numbers["average"] = dataset_to_json(avg)
    bar.update()
    if figures:
        from uqviz.plots.average import intervals

        figs["average"] = _png(intervals(avg).figure)

    local = {}
    for cond in ["uE", *feats]:
        step(cond)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            lzm = local_calibration(data, statistic="ZM", conditioning=cond, n_bins=n_bins)
            lzms = local_calibration(data, statistic="ZMS", conditioning=cond, n_bins=n_bins,
                                     n_boot=n_boot, rng=next(rngs))
        warns += sorted({f"{cond}: {w.message}" for w in caught})
        fv_zm, fv_zms = fraction_valid(lzm), fraction_valid(lzms)
        local[cond] = {"LZM": lzm, "LZMS": lzms, "fv_LZM": fv_zm, "fv_LZMS": fv_zms}
        numbers[f"local_{cond}"] = {k: dataset_to_json(v) for k, v in local[cond].items()}
        numbers[f"local_{cond}"]["worst_region"] = describe_failures(lzms, cond)
        if figures:
            figs[f"LZMS_{cond}"] = _local_figure(lzms, fv_zms, f"LZMS vs {cond}")
        bar.update()

    step("ENCE, ZMSE, CC")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        wf = {s: validate(data, statistic=s, n_mc=n_mc, n_boot=n_boot, rng=next(rngs))
              for s in ("ENCE", "ZMSE", "CC")}
    warns += sorted({str(w.message) for w in caught})
    numbers["simulated_references"] = {s: dataset_to_json(v) for s, v in wf.items()}
    bar.update()
    bar.close()
    conclusion = _conclusion(avg, local, wf, feats, tail)
    return Report(name, _jsonable(numbers), conclusion, warns, figs)


def _summary(ds, feats):
    e, u = ds["E"].values, ds["uE"].values
    out = {"n_points": int(ds.sizes["point"]), "units": ds.attrs.get("units", ""),
           "features": feats,
           "E": {"mean": float(e.mean()), "sd": float(e.std(ddof=1)),
                 "min": float(e.min()), "max": float(e.max())},
           "uE": {"mean": float(u.mean()), "min": float(u.min()), "max": float(u.max()),
                  "n_distinct": int(np.unique(u).size)}}
    for key in ("n_dropped", "dropped_reasons", "n_filtered", "min_uncertainty"):
        if key in ds.attrs:
            out[key] = _jsonable(ds.attrs[key])
    return out


def _conclusion(avg, local, wf, feats, tail):
    zms_ok = bool(avg.valid.sel(statistic="ZMS"))
    lines = [f"Average calibration: {'OK' if zms_ok else 'NOT OK'} "
             f"(ZMS {'validated' if zms_ok else 'rejected'})."]
    cons = local["uE"]["fv_LZMS"]
    cons_ok = bool(cons.nominal_inside)
    worst = describe_failures(local["uE"]["LZMS"], "uE")
    lines.append(f"Consistency: {'OK' if cons_ok else 'NOT OK'} (f_v = "
                 f"{float(cons.estimate):.2f} for LZMS vs uE)"
                 + ("" if cons_ok or worst is None else f"; worst region: {worst}") + ".")
    for f in feats:
        fv = local[f]["fv_LZMS"]
        ok = bool(fv.nominal_inside)
        worst = describe_failures(local[f]["LZMS"], f)
        lines.append(f"Adaptivity in {f}: {'OK' if ok else 'fails'} (f_v = "
                     f"{float(fv.estimate):.2f})"
                     + ("" if ok or worst is None else f" for {worst}") + ".")
    for s, res in wf.items():
        lines.append(f"{s}: {str(res.verdict.values)}.")
    if bool(tail.exceeds.any()):
        heavy = ", ".join(str(v) for v in tail.variable.values[tail.exceeds.values])
        lines.append(f"Caution: heavy tails ({heavy}) make some of these verdicts unreliable.")
    return lines


#: every rule is scoped to the report's <div>, so that inline in Jupyter it styles
#: nothing of the notebook around it
_CSS = """.uqviz-report{font-family:system-ui,sans-serif;max-width:960px;margin:2em auto;color:#222}
.uqviz-report h1{font-size:1.5em}
.uqviz-report h2{font-size:1.15em;border-bottom:1px solid #ccc;padding-bottom:.2em}
.uqviz-report table{border-collapse:collapse;font-size:.9em}
.uqviz-report td,.uqviz-report th{border:1px solid #ddd;padding:.25em .6em}
.uqviz-report .warn{color:#a33}.uqviz-report .concl li{margin:.3em 0}
.uqviz-report img{max-width:100%}"""


def _img(png: bytes) -> str:
    return f'<img src="data:image/png;base64,{base64.b64encode(png).decode()}"/>'


def _render_html(rep: Report) -> str:
    """The whole page: a document around :func:`_render_fragment`."""
    return (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>uqviz report: "
            f"{html.escape(rep.name)}</title></head><body>\n{_render_fragment(rep)}\n"
            "</body></html>")


def _render_fragment(rep: Report) -> str:
    """The report as one scoped <div> (with its <style>): what Jupyter shows inline."""
    e = html.escape
    n = rep.numbers
    parts = [f"<style>{_CSS}</style><div class='uqviz-report'>",
             f"<h1>Uncertainty validation report: {e(rep.name)}</h1>",
             "<h2>Conclusion</h2><ul class='concl'>",
             *[f"<li>{e(c)}</li>" for c in rep.conclusion], "</ul>"]
    if rep.warnings:
        parts += ["<h2>Warnings</h2><ul>", *[f"<li class='warn'>{e(w)}</li>"
                                            for w in rep.warnings], "</ul>"]
    parts += ["<h2>Data</h2>", _data_html(n["data"])]
    parts += ["<h2>Average calibration</h2>", _table(n["average"], "statistic",
              ["estimate", "ci_lower", "ci_upper", "reference", "zeta", "valid"])]
    if "average" in rep.figures:
        parts.append(_img(rep.figures["average"]))
    parts += ["<h2>Tailedness screen</h2>", _table(n["tailedness"], "variable",
              ["beta_gm", "kappa_cs", "threshold", "exceeds"])]
    for key, value in n.items():
        if key.startswith("local_"):
            cond = key[len("local_"):]
            kind = "Consistency" if cond == "uE" else "Adaptivity"
            parts.append(f"<h2>{kind}: LZM and LZMS vs {e(cond)}</h2><p>"
                         f"{_fv_html(value, 'LZMS')}; {_fv_html(value, 'LZM')}"
                         + (f"<br>worst region (LZMS): {e(value['worst_region'])}"
                            if value["worst_region"] else "") + "</p>")
            if f"LZMS_{cond}" in rep.figures:
                parts.append(_img(rep.figures[f"LZMS_{cond}"]))
    parts.append("<h2>Statistics without predefined reference (simulated references)</h2>")
    parts += [_reference_html(s, value) for s, value in n["simulated_references"].items()]
    parts.append("<p><small>uqviz: methods of P. Pernot (2023, 2024).</small></p></div>")
    return "\n".join(parts)


def _data_html(d) -> str:
    """Size, features, E and uE ranges, and what the input filters dropped."""
    e = html.escape
    lines = [f"{d['n_points']} points; features: {e(', '.join(d['features']) or 'none')}; "
             f"units: {e(str(d['units']) or '-')}.",
             f"E: mean {d['E']['mean']:.4g}, sd {d['E']['sd']:.4g}, range "
             f"[{d['E']['min']:.4g}, {d['E']['max']:.4g}]; uE: mean {d['uE']['mean']:.4g}, "
             f"range [{d['uE']['min']:.4g}, {d['uE']['max']:.4g}], "
             f"{d['uE']['n_distinct']} distinct values."]
    if d.get("n_dropped"):
        lines.append(f"<span class='warn'>Bad input: {d['n_dropped']} rows dropped "
                     f"({e(str(d.get('dropped_reasons', '')))}).</span>")
    else:
        lines.append("Bad input: none (no NaN, inf or uE &le; 0).")
    if d.get("n_filtered"):
        lines.append(f"{d['n_filtered']} rows with uE &le; {d['min_uncertainty']:.4g} "
                     "filtered out (min_uncertainty).")
    return "<p>" + "<br>".join(lines) + "</p>"


def _fv_html(local_block, statistic) -> str:
    fv = local_block[f"fv_{statistic}"]["data"]
    return (f"f<sub>v</sub>({statistic}) = {fv['estimate']['values']:.3f} "
            f"[{fv['ci_lower']['values']:.3f}, {fv['ci_upper']['values']:.3f}], "
            f"{fv['n_valid']['values']} of {fv['n_bins']['values']} bins valid")


def _reference_html(statistic, block) -> str:
    """Estimate and CI, then the reference and zeta-score for each generative D."""
    e = html.escape
    v = block["data"]
    head = (f"<p><b>{e(statistic)}</b> = {v['estimate']['values']:.4g} "
            f"[{v['ci_lower']['values']:.4g}, {v['ci_upper']['values']:.4g}]: verdict "
            f"<i>{e(str(v['verdict']['values']))}</i></p>")
    return head + _table(block, "generative", ["reference", "reference_se", "zeta", "valid"])


def _table(block, dim, variables) -> str:
    labels = block["coords"][dim]
    head = "".join(f"<th>{html.escape(v)}</th>" for v in [dim, *variables])
    rows = []
    for i, label in enumerate(labels):
        cells = []
        for v in variables:
            val = block["data"][v]["values"][i]
            cells.append(f"{val:.4g}" if isinstance(val, float) else str(val))
        rows.append("<tr><td>" + html.escape(str(label)) + "</td>"
                    + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    return f"<table><tr>{head}</tr>{''.join(rows)}</table>"
