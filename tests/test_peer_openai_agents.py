"""The OpenAI Agents SDK peer adapter (``pausepoint_conformance.peers.openai_agents_peer``): the
suite really drives the plain SDK -- core clauses the SDK keeps pass --, the failures measured by
hand show up as FAILED verdicts on their clauses, the steps the SDK cannot realise are skipped,
and nothing reaches the network.

The failures measured by hand: (1) two resumes of one saved ``RunState`` both approve the tool
call and both run the continuation; (2) an answer is taken from anyone -- nothing in the SDK
knows who approves; its shape must be ``{"approved": bool}``, the SDK's approve or reject.
"""

from __future__ import annotations

import pytest

from pausepoint_conformance.peers.openai_agents_peer import OpenAIAgentsAdapter
from pausepoint_conformance.protocol.wire import (
    Ok,
    RaceResumeArgs,
    Refused,
    ResetArgs,
    StartArgs,
    Step,
)
from pausepoint_conformance.suite.framework import ask, effect, end
from pausepoint_conformance.suite.runner import SuiteResult, Verdict
from peer_checks import (
    adapters,
    answer,
    count,
    having,
    measured,
    no_network,
    phase,
    started,
    why,
)

FAILED = {
    "resume.consume.single-winner", "resume.authority", "run.lifecycle.table",
    "resume.refusal.order", "input.bounded", "pause.payload.schema", "pause.refusal.order",
    "effect.at-most-once",
    "resume.consume.at-most-once",
}
"""Every clause the SDK fails, as measured (a change in either direction is news)."""

PASSED = {"resume.continuation.recorded-turn", "lifecycle.transition.table",
          "run.events.single-terminal",
          "pause.interaction.registered", "pause.tool-call.bound", "pause.refusal.before-mint",
          "resume.response.schema", "resume.response.strict", "pause.published",
          "gate.separate", "multi.independent", "durability.restart",
          "durability.token.reissue", "durability.commit-per-change"}
"""Clauses the SDK keeps: the adapter really runs agents, pauses and continues them."""

SKIPPED = {"pause.checkpoint.bound", "turn.write-failed.stays-paused",
           "pause.signal.base-exception", "pause.signal.single-catch"}
"""Script steps the SDK has no realisation of (no checkpoint of its own to write or miss, no
user code around its pause point), besides the optional operations the adapter lacks."""

on_sqlite = measured("OpenAI Agents SDK")
"""The published measurement (``make_sqlite``, ``docs/peers/openai_agents.md``)."""

in_memory = measured("OpenAI Agents SDK", "make")

adapter = adapters(OpenAIAgentsAdapter, "memory")
on_either = adapters(OpenAIAgentsAdapter, "memory", "sqlite")


def test_claims_only_what_the_sdk_has_a_mechanism_for(on_sqlite: SuiteResult,
                                                      in_memory: SuiteResult) -> None:
    assert on_sqlite.header["claimed"] == ["concurrency", "core", "durability", "multi-pause"]
    assert in_memory.header["claimed"] == ["concurrency", "core", "multi-pause"]


def test_the_measured_failures_are_failed_verdicts(on_sqlite: SuiteResult) -> None:
    assert having(on_sqlite, Verdict.FAILED) == FAILED
    # (1) racing resumes of one saved state all run the continuation
    assert "4 of 4 racing resumes consumed the pause" in why(on_sqlite,
                                                             "resume.consume.single-winner")
    # (2) an answer from anyone is taken
    assert "an answer from 'person' must be refused" in why(on_sqlite, "resume.authority")


def test_core_clauses_the_sdk_keeps_pass(on_sqlite: SuiteResult) -> None:
    assert having(on_sqlite, Verdict.PASSED) >= PASSED


def test_what_the_sdk_cannot_realise_is_skipped_never_passed(on_sqlite: SuiteResult) -> None:
    assert having(on_sqlite, Verdict.SKIPPED) >= SKIPPED
    assert not having(on_sqlite, Verdict.ERRORED)


def test_the_in_memory_store_fails_the_same_clauses(in_memory: SuiteResult) -> None:
    assert having(in_memory, Verdict.FAILED) == FAILED


# -- the measured failures and refusals, through the adapter ----------------------------------


def test_racing_resumes_of_one_saved_state_all_run_the_continuation(
        on_either: OpenAIAgentsAdapter) -> None:
    (p,) = started(on_either, "r1", effect("a"), ask("pay", {"amount": 120},
                                                      tool_call_id="call-7"),
                   effect("b")).pauses
    assert p.tool_call_id == "call-7" and p.payload == {"amount": 120}
    race = on_either.race_resume(RaceResumeArgs(requests=[answer(p, {"approved": True,
                                                                      "n": i})
                                                          for i in range(3)]))
    assert isinstance(race, Ok)
    assert [isinstance(r, Ok) and r.data.run.status == "done" for r in race.data.results] \
        == [True] * 3
    assert count(on_either, "r1", "a") == 1
    assert count(on_either, "r1", "b") == 3


def test_an_approval_from_anyone_is_taken_if_it_is_approved_bool(
        adapter: OpenAIAgentsAdapter) -> None:
    (p,) = started(adapter, "r1", ask("restricted"), effect("b")).pauses
    for bad in ([1, 2], "yes", None, {"approved": "yes"}, {}):
        refused = adapter.resume(answer(p, bad, responder="mallory"))
        assert isinstance(refused, Refused) and refused.code == "response_invalid", bad
    assert phase(adapter, p.interrupt_id) == "resumable" and count(adapter, "r1", "b") == 0
    taken = adapter.resume(answer(p, {"approved": False}, responder="mallory"))
    assert isinstance(taken, Ok) and taken.data.run.status == "done"  # a rejection: it goes on
    assert count(adapter, "r1", "b") == 1


def test_a_repeated_answer_finds_nothing_pending(adapter: OpenAIAgentsAdapter) -> None:
    (p,) = started(adapter, "r1", ask("approve"), effect("b"), ask("confirm")).pauses
    once = adapter.resume(answer(p))
    assert isinstance(once, Ok) and [q.name for q in once.data.run.pauses] == ["confirm"]
    twice = adapter.resume(answer(p))
    assert isinstance(twice, Refused) and twice.code == "pause_unknown"
    assert phase(adapter, p.interrupt_id) == "consumed"
    assert count(adapter, "r1", "b") == 1


@pytest.mark.parametrize("step, code", [
    (ask("not-registered"), "interaction_unregistered"),  # Tool ... not found in agent
    (ask("pay", {"amount": 1}), "tool_call_id_missing"),   # a call with no call id
])
def test_the_sdk_refuses_a_call_it_cannot_run(adapter: OpenAIAgentsAdapter, step: Step,
                                              code: str) -> None:
    adapter.reset(ResetArgs(ttl_ms=60_000))
    res = adapter.start(StartArgs(run_id="r1", session_id="s", scope="x",
                                  script=[effect("a"), step, effect("b"), end()]))
    assert isinstance(res, Refused) and res.code == code, res
    assert "the SDK refused the call" in res.message
    assert (count(adapter, "r1", "a"), count(adapter, "r1", "b")) == (1, 0)


def test_nothing_reaches_the_network(adapter: OpenAIAgentsAdapter,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    tried = no_network(monkeypatch)
    (p,) = started(adapter, "r1", ask("approve"), effect("b")).pauses
    done = adapter.resume(answer(p))
    assert isinstance(done, Ok) and done.data.run.status == "done"
    assert tried == []
