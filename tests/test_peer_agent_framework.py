"""The Microsoft Agent Framework peer adapter
(``pausepoint_conformance.peers.agent_framework_peer``): the suite really drives plain
agent-framework-core -- the clauses it keeps pass, the failures shown on its page are FAILED
verdicts on their clauses, the steps it cannot realise are skipped, and nothing reaches the
network.

Measured by hand: two resumes of one saved session both approve and both run the tool; of
parallel calls none runs until all are answered; an approval must be ``{"approved": bool}``."""

from __future__ import annotations

import pytest

from pausepoint_conformance.peers.agent_framework_peer import AgentFrameworkAdapter
from pausepoint_conformance.protocol.wire import InterruptStep, Ok, RaceResumeArgs, Refused
from pausepoint_conformance.suite.framework import ask, effect
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
    "pause.interaction.registered", "pause.payload.schema", "pause.refusal.order",
    "pause.refusal.before-mint", "resume.refusal.order", "resume.authority",
    "resume.consume.single-winner", "resume.consume.at-most-once", "effect.at-most-once",
    "run.lifecycle.table", "input.bounded",
}
"""Every clause the framework fails, as measured (a change in either direction is news)."""

PASSED = {"resume.continuation.recorded-turn", "multi.independent", "durability.restart",
          "durability.token.reissue", "durability.commit-per-change", "gate.separate",
          "resume.response.schema", "resume.response.strict", "pause.published"}

SKIPPED = {"pause.checkpoint.bound", "turn.write-failed.stays-paused", "pause.tool-call.bound",
           "pause.signal.base-exception", "pause.signal.single-catch"}
"""What the rule skips: application-level saves, made-up call ids, no user code at the
pause."""

on_sqlite = measured("Microsoft Agent Framework")
adapter = adapters(AgentFrameworkAdapter, "memory")


def test_claims_what_the_framework_documents(on_sqlite: SuiteResult) -> None:
    assert on_sqlite.header["claimed"] == ["concurrency", "core", "durability", "multi-pause"]


def test_the_measured_failures_are_failed_verdicts(on_sqlite: SuiteResult) -> None:
    assert having(on_sqlite, Verdict.FAILED) == FAILED
    assert not having(on_sqlite, Verdict.ERRORED)
    assert "4 of 4 racing resumes consumed the pause" in why(on_sqlite,
                                                             "resume.consume.single-winner")


def test_what_it_keeps_passes_and_the_rule_skips(on_sqlite: SuiteResult) -> None:
    assert having(on_sqlite, Verdict.PASSED) >= PASSED
    assert having(on_sqlite, Verdict.SKIPPED) >= SKIPPED


def test_racing_resumes_of_one_saved_session_all_run_the_tool(
        adapter: AgentFrameworkAdapter) -> None:
    (p,) = started(adapter, "r1", effect("a"), ask("pay", {"amount": 120},
                                                   tool_call_id="call-7"), effect("b")).pauses
    assert p.tool_call_id == "call-7" and p.payload == {"amount": 120}
    race = adapter.race_resume(RaceResumeArgs(requests=[answer(p, {"approved": True})] * 3))
    assert isinstance(race, Ok)
    assert [isinstance(r, Ok) for r in race.data.results] == [True] * 3
    assert (count(adapter, "r1", "a"), count(adapter, "r1", "b")) == (1, 3)


def test_parallel_calls_wait_for_every_answer(adapter: AgentFrameworkAdapter) -> None:
    p0, p1 = started(adapter, "r1", InterruptStep(names=["approve", "confirm"]),
                     effect("b")).pauses
    first = adapter.resume(answer(p1))
    assert isinstance(first, Ok) and [q.name for q in first.data.run.pauses] == ["approve"]
    assert phase(adapter, p1.interrupt_id) == "consumed" and count(adapter, "r1", "b") == 0
    again = adapter.resume(answer(p1))
    assert isinstance(again, Refused) and again.code == "pause_unknown"
    done = adapter.resume(answer(p0))
    assert isinstance(done, Ok) and done.data.run.status == "done"
    assert count(adapter, "r1", "b") == 1


def test_an_approval_is_approved_bool(adapter: AgentFrameworkAdapter) -> None:
    (p,) = started(adapter, "r1", ask("approve"), effect("b")).pauses
    for bad in ([1, 2], "yes", None, {"approved": "yes"}, {}):
        refused = adapter.resume(answer(p, bad))
        assert isinstance(refused, Refused) and refused.code == "response_invalid", bad
    assert phase(adapter, p.interrupt_id) == "resumable" and count(adapter, "r1", "b") == 0


def test_nothing_reaches_the_network(adapter: AgentFrameworkAdapter,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    tried = no_network(monkeypatch)
    (p,) = started(adapter, "r1", ask("approve"), effect("b")).pauses
    done = adapter.resume(answer(p))
    assert isinstance(done, Ok) and done.data.run.status == "done"
    assert tried == []
