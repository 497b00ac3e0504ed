"""What a resume hands the drive of its continuation in the same unit -- the continuation data
it just encoded and the answer it just validated -- is what reading the data back and
validating the answer again would give: the same values, in the same order."""

from __future__ import annotations

from typing import Any

import pydantic
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic_core import to_jsonable_python

from pausepoint import Engine, Interaction, RunContext
from pausepoint.core.canonical import canonical_json
from pausepoint.core.jsontext import loads
from pausepoint.core.runs import RunStatus
from pausepoint.engine.clock import ManualClock
from pausepoint.engine.embed import RunResult, _result_text
from pausepoint.engine.run import EventKind, PendingInterrupt
from pausepoint.engine.tracing import MemoryTrace

_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-2**70, 2**70)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner,
                                                                  max_size=3),
    max_leaves=10)


@settings(max_examples=500, deadline=None)
@given(st.dictionaries(st.text(max_size=4), _JSON, max_size=4))
def test_a_validated_dict_answer_validates_again_to_itself(response: dict[str, Any]) -> None:
    """The ground for handing a ``dict`` answer on as the resume validated it: validating its
    kept text again (what a replay's ask does) gives the same values, types and order."""
    ask = Interaction("ask")
    validated = ask.validate_response(response)
    if validated is None:
        return  # refused at the resume: never handed on
    try:
        kept = canonical_json(to_jsonable_python(validated.value))
    except ValueError:
        return  # no kept text (beyond I-JSON): the resume stops before any hand-over

    again = ask.validated_response(loads(kept))
    assert repr(again) == repr(validated.value)
    assert canonical_json(validated.value) == kept  # no conversion needed to keep it


class Shouted(pydantic.BaseModel):
    """A response model whose validation is not idempotent: each check adds a ``!``."""

    text: str

    @pydantic.field_validator("text")
    @classmethod
    def shout(cls, value: str) -> str:
        return value + "!"


def _engine(agents: dict[str, Any], *interactions: Interaction) -> Engine:
    return Engine.open("memory:", agents=agents, interactions=list(interactions),
                       clock=ManualClock(0))


def _cycle(engine: Engine, agent: str, answer: object) -> Any:
    started = engine.start(agent, None, run_id="r")
    done = engine.resume(started.pauses[0].token, answer)
    assert done.status == "done", done
    return done.output


def test_a_model_answer_is_validated_again_at_the_replay() -> None:
    """Only a plain ``dict`` answer is handed on: a model's answer is validated again from its
    kept text, as it always was (here that check adds a second ``!``)."""
    def agent(ctx: RunContext, data: Any) -> Any:
        answer = ctx.ask("shout", {})
        assert isinstance(answer, Shouted)
        return answer.text
    engine = _engine({"a": agent}, Interaction("shout", response=Shouted))
    try:
        assert _cycle(engine, "a", {"text": "hi"}) == "hi!!"
    finally:
        engine.close()


def test_an_answer_handed_on_is_a_fresh_value_each_ask() -> None:
    """The answer handed on goes to the first ask of it only; asking it again validates again:
    each ask returns its own instance, as before."""
    def agent(ctx: RunContext, data: Any) -> Any:
        first = ctx.ask("ask", {}, step=0)
        first["mine"] = True
        second = ctx.ask("ask", {}, step=0)
        return [first, second]
    engine = _engine({"a": agent}, Interaction("ask"))
    try:
        assert _cycle(engine, "a", {"n": 1}) == [{"n": 1, "mine": True}, {"n": 1}]
    finally:
        engine.close()


@pytest.mark.parametrize("keys", [["\U00010000", "\ue000"], ["b", "a"], ["é", "e"]])
def test_a_raw_answer_keeps_the_order_of_the_runs_data(keys: list[str]) -> None:
    """An answer the agent receives raw (its replay asks a name no longer registered) has its
    keys in the order of the run's continuation data read back -- code point order -- not in
    canonical JSON's (UTF-16 code units), which differ beyond the BMP."""
    asked: list[str] = []

    def agent(ctx: RunContext, data: Any) -> Any:
        asked.append("gone" if asked else "ask")
        return list(ctx.ask(asked[-1], {}))
    engine = _engine({"a": agent}, Interaction("ask"))
    try:
        assert _cycle(engine, "a", dict.fromkeys(keys, 1)) == sorted(keys)
    finally:
        engine.close()


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(list(RunStatus)), st.lists(st.sampled_from(list(EventKind)), max_size=4),
       st.lists(st.text(max_size=6), max_size=2))
def test_a_resumes_kept_result_is_its_canonical_text(
        status: RunStatus, kinds: list[EventKind], waiting: list[str]) -> None:
    """The text a resume keeps as its result for a replay (``_result_text``, written without
    the canonical encoder when the run waits on nothing) is the canonical text of the result
    (fails on: the run's own ASCII-escaping encoder used for interrupt ids, keys unsorted)."""
    pauses = tuple(PendingInterrupt(name="n", payload=None, token="t", interrupt_id=i,
                                    run_id="r", session_id="s") for i in waiting)
    result = RunResult("r", status, pauses=pauses, events=tuple(k._value_ for k in kinds))
    value = {"status": status._value_, "events": [k._value_ for k in kinds],
             "pauses": list(waiting)}
    try:
        expected = canonical_json(value)
    except ValueError:
        return  # an interrupt id that is no Unicode text: the pause was never taken
    assert _result_text(result) == expected


@pytest.mark.parametrize("malformed", [[("ask", {}, "extra")], [("ask", {}), "abc"]])
def test_a_malformed_question_fails_before_anything_is_asked(malformed: list[Any]) -> None:
    """``ask_all`` unpacks every question before it asks any: a malformed one ends the run in
    error with no pause taken and no ask traced (fails on: taking the questions apart only
    while asking them)."""
    clock = ManualClock(0)

    def agent(ctx: RunContext, _data: Any) -> Any:
        return ctx.ask_all(malformed)

    engine = Engine.open("memory:", agents={"a": agent}, interactions=[Interaction("ask")],
                         clock=clock, ttl_ms=60_000)
    engine.trace = trace = MemoryTrace(clock)
    try:
        with pytest.raises(ValueError):
            engine.start("a", 0, run_id="r")
        assert engine.status("r") == "ended"
        assert engine.deployment.service.ledger.by_run("r") == []
        assert not [e for e in trace.events if e["op"] == "execute" and "pauses" in e]
    finally:
        engine.close()
