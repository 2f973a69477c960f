"""The measures of a comparison of models, as the report and the figures read them.

Which measures of a :func:`uqviz.compare_models` result have SIP values (``sip_measures``),
the name of a measure for a reader (``measure_label``) and the reference a statistic's
distance is taken from (``measure_reference``). They are computed here, from the result and
the statistics registry; the report (:mod:`uqviz.reporting.comparison`) prints them and the
figures (:mod:`uqviz.plots.comparison`, which re-exports them under their old names) draw
them.

Examples
--------
>>> import xarray as xr
>>> res = xr.Dataset(attrs={"statistics": ["ZMS"], "scores": ["nll"]})
>>> measure_label(res, "nll"), measure_reference(res, "ZMS")
('NLL', 1.0)
"""

from __future__ import annotations

import numpy as np

from uqviz.engine.statistics import get_statistic

__all__ = ["measure_label", "measure_reference", "sip_measures"]


def sip_measures(result) -> list:
    """The measures of a :func:`uqviz.compare_models` result that have SIP values.

    Those of ``attrs["sip_measures"]`` (the measures that are means of per-point values:
    the scores, MSE, MV) when the result lists them; otherwise each measure of the
    ``measure`` coordinate of ``sip`` with a finite value between two different models.

    Examples
    --------
    >>> import numpy as np, xarray as xr
    >>> sip = np.full((2, 2, 2), np.nan)
    >>> sip[0] = [[np.nan, 0.6], [0.4, np.nan]]
    >>> res = xr.Dataset({"sip": (("measure", "model", "versus"), sip)},
    ...                  coords={"measure": ["nll", "RCE"], "model": ["a", "b"],
    ...                          "versus": ["a", "b"]})
    >>> sip_measures(res), sip_measures(res.assign_attrs(sip_measures=["nll"]))
    (['nll'], ['nll'])
    """
    if "sip" not in result.data_vars or "measure" not in result["sip"].dims:
        return []
    names = [str(m) for m in result["measure"].values]
    if "sip_measures" in result.attrs:
        listed = np.atleast_1d(result.attrs["sip_measures"]).tolist()
        return [m for m in names if m in listed]
    sip = result["sip"].transpose("measure", "model", "versus").values
    off = ~np.eye(sip.shape[1], dtype=bool)
    return [m for m, vals in zip(names, sip) if np.isfinite(vals[off]).any()]


def measure_label(result, measure) -> str:
    """The name of a measure for a reader: a score of :func:`uqviz.compare_models` in
    capitals (``"nll"`` reads ``"NLL"``), a statistic as registered.

    Examples
    --------
    >>> import xarray as xr
    >>> res = xr.Dataset(attrs={"scores": ["nll", "crps"]})
    >>> measure_label(res, "nll"), measure_label(res, "ZMS")
    ('NLL', 'ZMS')
    """
    scores = np.atleast_1d(result.attrs.get("scores", [])).tolist()
    return str(measure).upper() if measure in scores else str(measure)


def measure_reference(result, measure):
    """The reference a statistic's distance is taken from: a number (ZMS: 1.0, RCE: 0.0),
    ``"data"`` for a reference computed from the data (NLL as a statistic: NLL_ref), or None
    (a score, or a statistic without reference: the distance is the value).

    Examples
    --------
    >>> import xarray as xr
    >>> res = xr.Dataset(attrs={"statistics": ["ZMS", "NLL", "MSE"], "scores": ["nll"]})
    >>> [measure_reference(res, m) for m in ("ZMS", "NLL", "MSE", "nll")]
    [1.0, 'data', None, None]
    """
    if "reference" in result.data_vars and "measure" in result["reference"].dims:
        ref = float(result["reference"].sel(measure=measure))
        return ref if np.isfinite(ref) else None
    if measure not in np.atleast_1d(result.attrs.get("statistics", [])).tolist():
        return None
    try:
        ref = get_statistic(str(measure)).reference
    except (KeyError, ValueError, TypeError):
        return None
    if ref is None:
        return None
    return float(ref) if isinstance(ref, (int, float)) else "data"
