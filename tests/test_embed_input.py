"""A run's input as the embedding API keeps it: a short one in the run's continuation data, a
long one once, beside the run, in the unit that creates it (the continuation data, written
again at every write of the run, then names it) -- and the agent receives the same value
either way, on its first drive, on every replay and after a restart."""

from __future__ import annotations

from typing import Any

import pytest

from pausepoint import Engine, Interaction, PausepointError, RunContext, RunStatus
from pausepoint.core.clauses import ErrorCode
from pausepoint.core.jsontext import loads, state_json
from pausepoint.core.tokens import KeyRing
from pausepoint.engine.clock import ManualClock
from pausepoint.engine.harness import Harness
from pausepoint.engine.owned import Ownership, input_key
from pausepoint.engine.service import ResumeRequest
from pausepoint_conformance.faults.testbed import StoreSpec

LONG: dict[str, Any] = {"z": 1, "a": ["é" * 3000, {"k": "v", "b": None}], "big": "x" * 5000}
"""An input whose JSON text is longer than ``Engine.input_inline_max``: keys out of order,
text beyond ASCII (the state's encoder escapes it)."""


def engine_on(spec: StoreSpec, seen: list[Any], inline_max: int | None = None) -> Engine:
    def agent(ctx: RunContext, data: Any) -> Any:
        seen.append(data)
        ctx.ask("approve", {"n": 1})
        return data

    where = "memory:" if spec.kind == "memory" else spec.open()
    engine = Engine.open(where, agents={"echo": agent}, interactions=[Interaction("approve")],
                         clock=ManualClock(0), signer=RING)
    if inline_max is not None:
        engine.input_inline_max = inline_max
    return engine


RING = KeyRing.generate()


def stored_state(engine: Engine, run_id: str) -> dict[str, Any]:
    run = engine.deployment.service.runs.get(run_id)
    assert run is not None
    state: dict[str, Any] = loads(run.state)
    return state


def test_a_long_input_is_kept_once_and_the_agent_gets_it_as_before(
        any_store_spec: StoreSpec) -> None:
    seen: list[Any] = []
    engine = engine_on(any_store_spec, seen)
    assert len(state_json(LONG)) > engine.input_inline_max
    run = engine.start("echo", LONG, run_id="r1")
    state = stored_state(engine, "r1")
    key = input_key("r1", state_json(LONG))
    assert "input" not in state and state["input_key"] == key
    assert "x" * 100 not in engine.deployment.service.runs.get("r1").state  # type: ignore[union-attr]
    assert engine.deployment.service.payloads.get(key) == state_json(LONG)
    done = engine.resume(run.pauses[0].token, {"approved": True})
    assert done.status == RunStatus.DONE
    # what the agent received -- first drive and replay -- is what an input kept in the
    # continuation data gives: the value read back from the same text
    inline_seen: list[Any] = []
    inline = engine_on(any_store_spec, inline_seen, inline_max=2**62)
    other = inline.start("echo", LONG, run_id="r2")
    assert stored_state(inline, "r2")["input"] == loads(state_json(LONG))
    inline_done = inline.resume(other.pauses[0].token, {"approved": True})
    assert seen == inline_seen == [loads(state_json(LONG))] * 2
    assert done.output == inline_done.output == LONG
    assert [list(s) for s in seen] == [list(s) for s in inline_seen]  # key order too
    engine.close()
    inline.close()


def test_a_short_input_stays_in_the_runs_data(any_store_spec: StoreSpec) -> None:
    seen: list[Any] = []
    engine = engine_on(any_store_spec, seen)
    engine.start("echo", {"amount": 12}, run_id="r1")
    state = stored_state(engine, "r1")
    assert state["input"] == {"amount": 12} and "input_key" not in state
    engine.close()


def test_a_refused_start_keeps_no_input(any_store_spec: StoreSpec) -> None:
    """A start under a run id that exists is refused before its input is kept; the run goes
    on with its own input."""
    seen: list[Any] = []
    engine = engine_on(any_store_spec, seen)
    first = engine.start("echo", LONG, run_id="r1")
    other = {**LONG, "z": 2}
    with pytest.raises(PausepointError) as refused:
        engine.start("echo", other, run_id="r1")
    assert refused.value.code is ErrorCode.INVALID_TRANSITION
    assert engine.deployment.service.payloads.get(input_key("r1", state_json(other))) is None
    done = engine.resume(first.pauses[0].token, {"approved": True})
    assert done.output == LONG
    engine.close()


def test_a_restart_drives_with_the_kept_input(any_store_spec: StoreSpec) -> None:
    """A run whose resumer died after its consume and kept answer: another engine's restart
    reads the input from the store and drives the run to its end with it."""
    if any_store_spec.kind == "memory":
        pytest.skip("a process death loses an in-memory store")
    seen: list[Any] = []
    engine = engine_on(any_store_spec, seen)
    run = engine.start("echo", LONG, run_id="r1")
    rec = engine.deployment.service.resume(
        run.pauses[0].token, {"approved": True},
        ResumeRequest(session_id="session", scope="default")).record
    engine.owned.keep_answer(rec, '{"approved":true}')  # as the dead resumer did
    engine.close()
    later_seen: list[Any] = []
    later = engine_on(any_store_spec, later_seen)
    (done,) = later.restart()
    assert done.status == RunStatus.DONE and done.output == LONG
    assert later_seen == [loads(state_json(LONG))]
    later.close()


def test_a_missing_kept_input_is_store_corrupt(any_store_spec: StoreSpec,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """A run that names a kept input the store does not hold is refused ``store_corrupt``;
    the agent never runs on something else."""
    seen: list[Any] = []
    engine = engine_on(any_store_spec, seen)
    monkeypatch.setattr(Ownership, "keep_input", lambda self, key, text: None)
    with pytest.raises(PausepointError) as lost:
        engine.start("echo", LONG, run_id="r1")
    assert lost.value.code is ErrorCode.STORE_CORRUPT and seen == []
    ended = engine.deployment.service.runs.get("r1")
    assert ended is not None and ended.status == RunStatus.ERROR  # not left running
    engine.close()


def test_a_harness_keeps_its_script_in_the_runs_data(tmp_path: Any) -> None:
    """The harness reads its script by step from the continuation data: a long one stays."""
    harness = Harness.open(f"sqlite:{tmp_path / 'h.db'}")
    script = [{"op": "interrupt", "name": "approve", "payload": {"note": "x" * 6000}},
              {"op": "end"}]
    started = harness.start(script, run_id="h1", session_id="s", scope="t")
    run = harness.deployment.service.runs.get("h1")
    assert run is not None
    state = loads(run.state)
    assert "input_key" not in state and state["input"][0]["payload"] == script[0]["payload"]
    done = harness.resume(started.pauses[0].token, {"approved": True}, session_id="s",
                          scope="t")
    assert done.status == "done"
    harness.deployment.store.close()
