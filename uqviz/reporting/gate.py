"""The CI gate of ``uqviz average --fail-on``: the verdicts it gates on, decided as a family.

The gated tests are those named by ``fail_on``: the average calibration of each statistic,
consistency (f_v of LZMS in bins of uE, calibrated null) and adaptivity in each feature
(f_v of LZMS in bins of the feature, on data whose uE was recalibrated by a cross-fitted BVS on
uE: the feature's effect beyond the uE effect), and the uniformity of the PIT of the forecast
as given (``"pit"``: :func:`uqviz.validate_pit`, the ECDF inside its simultaneous band; for a
std forecast the PIT is Phi(E/uE)). Holm's adjustment over them (Holm 1979; the PIT enters with
its ``band_p_value``) keeps the chance that a calibrated model fails the gate at ``1 - ci``
whatever their number. ``"any"`` gates on average calibration, consistency and adaptivity only,
not on the PIT: it keeps its meaning (the uncertainties' calibration, which a PIT failure
alone does not question: errors of the right variance but not of the forecast's shape fail
the PIT) and the false-alarm and power rates measured for it (``benchmarks/bench_verdicts.py``);
``--fail-on pit`` adds the PIT to the family.

The gated tests are calibration questions only (:data:`uqviz.reporting.verdicts.QUESTIONS`),
the questions whose words make a report's headline: ENCE, ZMSE, CC and the interval coverage,
further diagnostics of the report, are never gated. Exit status (``EXIT_FAILS``,
``EXIT_UNRELIABLE``): **1** when a gated verdict fails (after the family's Holm adjustment),
else **3** when one is unreliable (heavy tails: the test cannot decide) or could not be tested
(a constant uE: a gate never passes on missing evidence), else **0**; the command line exits
with **2** on bad input.
"""

from __future__ import annotations

import copy

from uqviz.average.validation import tailedness, validate_average
from uqviz.engine import checks
from uqviz.engine.verdicts import FAILS, NOT_TESTED, UNRELIABLE
from uqviz.predictive.pit import validate_pit
from uqviz.reporting import verdicts as vd
from uqviz.engine.tree import datasets_of, naming_child
from uqviz.reporting.build import is_targets, local_analyses, uE_adjusted
from uqviz.reporting.serialise import dataset_to_json

__all__ = ["GATES", "EXIT_FAILS", "EXIT_UNRELIABLE", "gate"]

#: the verdicts ``uqviz average --fail-on`` can gate on
GATES = ("average", "consistency", "adaptivity", "pit", "any")
EXIT_FAILS = 1
EXIT_UNRELIABLE = 3


def _kinds(fail_on, features):
    kinds = set()
    for g in fail_on:
        kinds |= {"average", "consistency", "adaptivity"} if g == "any" else {g}
    if "adaptivity" in kinds and not features:
        if "adaptivity" in fail_on:
            raise ValueError("--fail-on adaptivity needs --features (the columns to bin on)")
        kinds.discard("adaptivity")
    return kinds


def gate(
    data,
    *,
    fail_on=("any",),
    statistics=("ZMS", "RCE"),
    features=None,
    n_boot=10_000,
    rng=0,
    client=None,
    engine=None,
):
    """Decide the gated verdicts of one dataset: ``{"verdicts", "numbers", "failed",
    "unreliable", "exit_status"}``.

    Parameters
    ----------
    data : xarray.Dataset or xarray.DataTree
        One dataset, or a targets tree (attrs ``layout = "targets"``: one child per target,
        an optional pooled child): each child's gated tests (the child streams
        ``rng.spawn(n_children)``, each those of ``gate(child, rng=<its stream>)``) are then
        decided in one Holm family over all of them (keys ``"<target>/<test>"``), so that
        3 calibrated targets and their pooled points fail the gate in at most ``1 - ci`` of
        sets.
    fail_on : sequence of {"average", "consistency", "adaptivity", "pit", "any"}
        The gated tests; ``"any"``: average, consistency and adaptivity (not the PIT, module
        docstring), ``"pit"``: the PIT uniformity of the forecast as given.
    statistics : sequence of str, default ("ZMS", "RCE")
        Statistics of the average calibration.
    features : sequence of str, optional
        Features of the adaptivity tests.
    n_boot : int, default 10000
        Bootstrap replicates of every interval, an int >= 2.
    rng : None, int, numpy.random.SeedSequence or numpy.random.Generator, default 0
        Random stream, spawned into the average calibration, consistency, the uE adjustment,
        one stream per feature, then the PIT (docs/conventions.md, "Randomness"; the PIT's
        stream comes after the others, so that gating on it changes no other number); the
        average calibration
        is that of ``validate_average(data, rng=rng)`` (its first child stream), so that
        ``uqviz average --seed N`` gives the numbers of ``rng=N`` with or without a gate.
    client : None, "local" or dask.distributed.Client, default None
        Where the bootstraps run: None (this process, local threads), "local" (a dask
        LocalCluster) or a dask.distributed.Client; the verdicts do not depend on it.
    engine : {"numba", "numpy"} or None, default None
        Resampling kernel of the bootstraps (None: numba where installed, else numpy).

    Returns
    -------
    dict
        ``table``: the verdict table (:func:`uqviz.reporting.verdicts.verdict_table`, dim
        ``test``), from which ``failed``, ``unreliable`` and ``exit_status`` are read;
        ``verdicts``: key -> entry (``"average:<statistic>"``, ``"consistency"``,
        ``"adaptivity:<feature>"``, ``"pit"``), each with ``verdict``, ``p_value``,
        ``p_adjusted`` (gated ones), ``gated``; ``numbers``: the results as JSON (``"pit"``:
        the :func:`uqviz.validate_pit` result); ``failed``, ``unreliable``: the gated keys so
        decided; ``exit_status``. For a targets tree also ``family`` (``size``, ``tests``:
        :func:`uqviz.reporting.verdicts.decide_targets_family`) and ``targets`` (each child's
        entries and table); ``numbers``, ``locals`` and ``average`` are then dicts by child.

    Examples
    --------
    >>> import uqviz
    >>> out = gate(uqviz.synthetic.nig(2000, nu=20, rng=0), fail_on=("any",), n_boot=500)
    >>> out["exit_status"], sorted(out["verdicts"])
    (0, ['average:RCE', 'average:ZMS', 'consistency'])
    >>> out = gate(uqviz.synthetic.nig(2000, nu=20, rng=0), fail_on=("pit",), n_boot=500)
    >>> out["exit_status"], out["verdicts"]["pit"]["verdict"], out["verdicts"]["pit"]["gated"]
    (0, 'OK', True)
    >>> out["table"]["verdict"].sel(test="pit").item()
    'OK'
    >>> tree = uqviz.synthetic.nig(1000, nu=20, n_datasets=2, rng=0)
    >>> tree.attrs.update(layout="targets", targets=["set_0", "set_1"])
    >>> out = gate(tree, n_boot=300)
    >>> out["exit_status"], out["family"]["size"], list(out["verdicts"])[:2]
    (0, 6, ['set_0/average:ZMS', 'set_0/average:RCE'])
    """
    fail_on = checks.names("fail_on", fail_on, allowed=GATES)
    features = list(features or [])
    kinds = _kinds(fail_on, features)
    gen = checks.rng(rng)
    opts = dict(
        kinds=kinds,
        statistics=statistics,
        features=features,
        n_boot=n_boot,
        client=client,
        engine=engine,
    )
    if is_targets(data):
        return _gate_targets(data, opts, gen)
    entries, numbers, locals_, avg = _gate_entries(data, gen, **opts)
    vd.decide_family(entries)
    table = vd.verdict_table(entries)
    failed, unreliable, status = _decision(table)
    return {
        "verdicts": entries,
        "table": table,
        "numbers": numbers,
        "failed": failed,
        "unreliable": unreliable,
        "exit_status": status,
        "locals": locals_,
        "average": avg,
    }


def _gate_targets(data, opts, gen):
    """The gate of a targets tree: each child's gated tests (one child stream each, those of
    ``gate(child, rng=<its stream>)``), decided in one Holm family over every target and the
    pooled child (:func:`uqviz.reporting.verdicts.decide_targets_family`)."""
    pairs = datasets_of(data)
    per = {}
    for (name, ds), child in zip(pairs, gen.spawn(len(pairs))):
        with naming_child(name):
            per[name] = _gate_entries(ds, child, **opts)
    family = vd.decide_targets_family({k: v[0] for k, v in per.items()})
    entries = {f"{k}/{key}": e for k, v in per.items() for key, e in v[0].items()}
    table = vd.verdict_table(entries)
    failed, unreliable, status = _decision(table)
    return {
        "verdicts": entries,
        "table": table,
        "numbers": {k: v[1] for k, v in per.items()},
        "failed": failed,
        "unreliable": unreliable,
        "exit_status": status,
        "locals": {k: v[2] for k, v in per.items()},
        "average": {k: v[3] for k, v in per.items()},
        "family": family,
        "targets": {k: {"verdicts": v[0], "table": vd.verdict_table(v[0])} for k, v in per.items()},
    }


def _gate_entries(data, gen, *, kinds, statistics, features, n_boot, client, engine):
    """The gated entries of one dataset, not yet decided as a family: ``(entries, numbers,
    locals, average)``."""
    # a copy: validate_average(data, rng=rng) takes the first child of rng, children[0]
    avg = validate_average(
        data,
        statistics=statistics,
        n_boot=n_boot,
        rng=copy.deepcopy(gen),
        client=client,
        engine=engine,
    )
    children = gen.spawn(3 + len(features))
    tail = tailedness(data)
    entries = {f"average:{s}": vd.average_entry(avg, s) for s in avg["statistic"].values}
    numbers = {"average": dataset_to_json(avg), "tailedness": dataset_to_json(tail)}
    locals_ = {}
    if "consistency" in kinds:
        loc, _ = local_analyses(
            data, "uE", n_bins=None, n_boot=n_boot, rng=children[1], client=client, engine=engine
        )
        entries["consistency"] = (
            vd.not_tested("uE is constant")
            if loc is None
            else vd.local_entry(loc["fv_LZMS"], loc["LZMS"], tail, conditioning="uE")
        )
        locals_["uE"] = loc
    if "adaptivity" in kinds:
        adj = uE_adjusted(data, rng=children[2])
        tail_adj = tailedness(adj)
        donor = None  # the features of the adjusted data share one calibrated null
        for i, f in enumerate(features):
            loc, _ = local_analyses(
                adj,
                f,
                n_bins=None,
                n_boot=n_boot,
                rng=children[3 + i],
                client=client,
                donor=donor,
                engine=engine,
            )
            if donor is None and loc is not None:
                donor = loc["LZMS"]
            entries[f"adaptivity:{f}"] = (
                vd.not_tested(f"{f} is constant")
                if loc is None
                else vd.local_entry(
                    loc["fv_LZMS"], loc["LZMS"], tail_adj, conditioning=f, adjusted=True
                )
            )
            locals_[f] = loc
    pit_rng = gen.spawn(1)[0]  # after the others: their streams are unchanged
    if "pit" in kinds:
        pit_res = validate_pit(data, rng=pit_rng)
        entries["pit"] = vd.pit_entry(pit_res)
        numbers["pit"] = dataset_to_json(pit_res)
    for key, e in entries.items():  # the gated kinds; a statistic without reference is not
        e["gated"] = key.split(":")[0] in kinds and not (
            key.startswith("average:") and e["verdict"] == NOT_TESTED
        )
    for cond, loc in locals_.items():
        if loc is not None:
            key = "consistency" if cond == "uE" else f"adaptivity:{cond}"
            numbers[key] = {
                "LZMS": dataset_to_json(loc["LZMS"]),
                "fv_LZMS": dataset_to_json(loc["fv_LZMS"]),
                "binning": loc["binning"],
            }
    return entries, numbers, locals_, avg


def _decision(table):
    """``(failed, unreliable, exit status)`` read from the verdict table of the gated tests:
    1 when one fails, else 3 when one is unreliable or not tested, else 0.

    Examples
    --------
    >>> t = vd.verdict_table({"a": {"verdict": "OK", "gated": True},
    ...                       "b": {"verdict": "unreliable", "gated": True},
    ...                       "c": {"verdict": "fails", "gated": False}})
    >>> _decision(t)
    ([], ['b'], 3)
    """
    gated = table.sel(test=table["gated"].values)
    words = gated["verdict"]
    failed = [str(t) for t in gated["test"].values[(words == FAILS).values]]
    unreliable = [str(t) for t in gated["test"].values[words.isin([UNRELIABLE, NOT_TESTED]).values]]
    status = EXIT_FAILS if failed else EXIT_UNRELIABLE if unreliable else 0
    return failed, unreliable, status
