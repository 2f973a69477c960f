"""The table of verdict families of ``operating_characteristics`` (issue 38, item 2): one
function per family, one timing wrapper, the named streams of a set, and the gate's words read
from its verdict table."""

from __future__ import annotations

import numpy as np

import uqviz
from uqviz.engine.options import streams
from uqviz.experiments import verdicts as ev
from uqviz.reporting import verdicts as vd


def test_every_verdict_has_its_family_in_the_table():
    names = ev.default_verdicts(("X1", "X2")) + ev.OPTIONAL_VERDICTS
    assert {ev._family(v) for v in names} == set(ev.FAMILIES)
    assert list(ev.FAMILIES)[:3] == ["report", "report:pit", "gate"]  # the order of streams


def _study(wanted):
    return ev._Design(
        design="inverse_gamma",
        nu=3.0,
        data=None,
        features=("X1", "X2"),
        wanted=tuple(wanted),
        n_boot=200,
        n_mc=20,
        engine="numpy",
    )


def test_one_set_runs_the_families_wanted_on_their_named_streams():
    wanted = ("average:ZMS", "average:RCE", "tailedness:Z2", "pit")
    words, cost = ev._one_set(("scale1.5", "normal", 800), _study(wanted), 5)
    assert set(cost) == {"average", "tailedness", "pit"} and min(cost.values()) > 0
    s = streams(5, *ev.SET_STREAMS)
    ds = ev.draw_set("scale1.5", size=800, rng=s.draw)
    avg = uqviz.validate_average(
        ds, statistics=("ZMS", "RCE"), n_boot=200, rng=s.average, engine="numpy"
    )
    pit = uqviz.validate_pit(ds, generative="normal", rng=s.pit)
    assert words == {
        "average:ZMS": str(avg["verdict"].sel(statistic="ZMS").values),
        "average:RCE": str(avg["verdict"].sel(statistic="RCE").values),
        "tailedness:Z2": "unreliable"
        if bool(uqviz.tailedness(ds)["heavy_tail"].sel(variable="Z2"))
        else "OK",
        "pit": "OK" if bool(pit["valid"]) else "fails",
    }
    assert words["average:ZMS"] == "fails"  # uE 1.5 times too small


def test_a_family_calls_timed_once_per_call():
    s = ev._Set(
        ev.draw_set("calibrated", size=300, rng=0),
        "calibrated",
        "normal",
        300,
        _study(("simulated:ZMSE:Sim", "simulated:ENCE:Sim")),
        streams(0, *ev.SET_STREAMS),
    )
    words = ev._simulated_words(s)
    assert set(words) == {"simulated:ZMSE:Sim", "simulated:ENCE:Sim"}
    assert len(s.cost["simulated"]) == 2
    assert s.timed("x", lambda a, b=0: a + b, 1, b=2) == 3 and len(s.cost["x"]) == 1


def test_gate_words_decide_each_choice_as_its_own_family():
    table = vd.verdict_table(
        {
            "average:ZMS": {"verdict": "fails", "p_value": 0.03, "gated": True},
            "average:RCE": {"verdict": "OK", "p_value": 0.5, "gated": True},
            "consistency": {"verdict": "fails", "p_value": 0.001, "gated": True},
            "adaptivity:X1": {"verdict": "not tested", "p_value": None, "gated": True},
            "pit": {"verdict": "fails", "p_value": 0.01, "gated": True},
        }
    )
    words = ev._gate_words(table, ("X1",))
    # average alone: Holm over 0.03 and 0.5 keeps nothing (0.06); consistency alone fails;
    # any: consistency fails (0.003), adaptivity not tested; pit alone fails
    assert words == {
        "gate:any": "fails",
        "gate:average": "OK",
        "gate:consistency": "fails",
        "gate:adaptivity": "not tested",
        "gate:pit": "fails",
    }
    assert ev._gate_words(table, ())["gate:adaptivity"] == "not tested"
    no_pit = table.sel(test=[t for t in table["test"].values if t != "pit"])
    assert "gate:pit" not in ev._gate_words(no_pit, ("X1",))
    assert np.isnan(float(table["p_adjusted"].sel(test="pit")))  # the table is not changed
