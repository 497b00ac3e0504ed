"""One representation per concept: the script's forms convert through
:mod:`pausepoint.core.script` and agree; the protocol's vocabularies are the reference's (or,
where the wire deliberately differs, differ exactly so)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pausepoint.core import lifecycle as lc
from pausepoint.core import script
from pausepoint.engine.run import TERMINAL_EVENTS, EventKind
from pausepoint.engine.service import RunView
from pausepoint.system import model as m
from pausepoint.system import trace
from pausepoint_conformance.modelcheck import lockstep
from pausepoint_conformance.protocol import wire
from pausepoint_conformance.suite import framework

_names = st.text(alphabet="abcdefgh", min_size=1, max_size=4)
_json = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=4),
                     lambda inner: st.lists(inner, max_size=3)
                     | st.dictionaries(st.text(max_size=3), inner, max_size=3), max_leaves=6)
_steps: st.SearchStrategy[script.Step] = st.one_of(
    st.builds(script.Effect, _names, st.none() | st.sampled_from(script.Fault)),
    st.builds(script.Ask, st.lists(_names, min_size=1, max_size=3).map(tuple), _json,
              st.sampled_from(["ok", "fail"]), st.sampled_from(["turn", "none"]),
              st.none() | _names,
              st.none() | st.builds(script.Handlers, st.none() | _names, st.none() | _names)),
    st.builds(script.Gate, st.floats(-1e6, 1e6), st.floats(-1e6, 1e6), st.floats(-1e6, 1e6)),
    st.just(script.End()))


@given(_steps)
def test_the_wire_models_describe_the_script_json(step: script.Step) -> None:
    """The protocol's pydantic step models and the script's JSON form are one JSON: a step goes
    to the wire and back unchanged, and the wire dumps exactly the script's JSON (what vectors
    hold) -- but a null payload, which that dump leaves out."""
    on_wire = wire.from_script(step)
    assert wire.to_script(on_wire) == step
    if not (isinstance(step, script.Ask) and step.payload is None):
        assert on_wire.model_dump(mode="json", exclude_none=True) == script.to_json(step)
    assert script.from_json(script.to_json(step)) == step


def test_an_unknown_step_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown script step"):
        script.from_json({"op": "bogus"})
    with pytest.raises(ValueError, match="unknown script step"):
        script.from_tla_record({"kind": "bogus"})


@pytest.mark.parametrize("step", [script.Gate(1, 2, 3), script.Ask(("a",), checkpoint="none"),
                                  script.Ask(("a",), handlers=script.Handlers(cleanup="c"))])
def test_the_model_refuses_what_it_does_not_model(step: script.Step) -> None:
    with pytest.raises(ValueError):
        script.modelled(step)


def test_the_model_runs_the_script_steps_and_tla_renders_them() -> None:
    """The model's steps are the script's; the trace/manifest records and the TLA+ text are
    made from them, and read back."""
    assert (m.Effect, m.Ask, m.End, m.Fault) == (script.Effect, script.Ask, script.End,
                                                 script.Fault)
    cfg = m.Config(scripts=((m.Effect("a", m.Fault.CRASH_AFTER_APPLY), m.Ask(("x", "y")),
                             m.End()),))
    records: list[list[dict[str, Any]]] = trace.scripts_to_json(cfg)
    assert records == [[{"kind": "effect", "key": "a"}, {"kind": "ask", "names": ["x", "y"]},
                        {"kind": "end"}]]
    assert trace.scripts_from_json(records) == ((m.Effect("a"), m.Ask(("x", "y")), m.End()),)
    assert lockstep.tla_constant_definitions(cfg)["Scripts"] == (
        '<< << [kind |-> "effect", key |-> "a"], [kind |-> "ask", names |-> <<"x", "y">>], '
        '[kind |-> "end"] >> >>')


def test_the_protocol_vocabularies_are_the_references() -> None:
    assert wire.Fault is script.Fault
    assert tuple(v.value for v in RunView) == wire.RUN_VIEWS
    assert {k.value for k in EventKind} == framework.EVENT_VOCABULARY
    assert {k.value for k in TERMINAL_EVENTS} == framework.TERMINAL_EVENTS


def test_the_wire_resolutions_are_the_references_but_compensated() -> None:
    """Over the protocol an unknown outcome is settled applied or not applied; ``compensated``
    is the reference's own (its recovery decision).  Any other drift fails here."""
    ours = {r.name: r.value for r in lc.Resolution}
    theirs = {r.name: r.value for r in wire.Resolution}
    assert theirs == {k: v for k, v in ours.items() if k != lc.Resolution.COMPENSATED.name}
