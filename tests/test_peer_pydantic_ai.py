"""The Pydantic AI peer adapter (``pausepoint_conformance.peers.pydantic_ai_peer``): the suite
really drives plain Pydantic AI -- deferred tools, ``DeferredToolResults``, a conversation
store -- offline (core clauses Pydantic AI keeps pass), and the failures measured by hand show up
as FAILED verdicts on their clauses.

The failures measured by hand: (1) racing resumes of one saved conversation all run the
continuation; the store's revision check refuses all but one save afterwards; (2) the pause
signal, ``CallDeferred``, is an ``Exception``, so user code's catch-all swallows it.  A failed
save, a pause with no saved state and a tool pause without an id are skipped by the scoring rule
(``docs/peers.md``).
"""

from __future__ import annotations

import socket

import pytest

from pausepoint.core.clauses import ErrorCode
from pausepoint_conformance.peers.pydantic_ai_peer import PydanticAIAdapter, make
from pausepoint_conformance.protocol.wire import Handlers, Ok, RaceResumeArgs, Refused, StartArgs
from pausepoint_conformance.suite.framework import ask, effect, end
from pausepoint_conformance.suite.runner import SuiteResult, Verdict
from peer_checks import answer, count, having, measured, started, why

FAILED = {
    "resume.consume.at-most-once", "pause.signal.base-exception", "run.lifecycle.table",
    "resume.refusal.order",
    "resume.authority", "resume.response.schema", "input.bounded",
    "effect.at-most-once",
    "resume.response.strict",  # "false" for approve's bool is taken (issue 9)
    "pause.refusal.before-mint",  # two questions at once, one unregistered: the other asks
}
"""Every clause Pydantic AI fails, as measured (a change in either direction is news)."""

PASSED = {"resume.continuation.recorded-turn", "lifecycle.transition.table",
          "lifecycle.terminal.absorbing", "run.events.single-terminal", "gate.separate",
          "multi.independent", "pause.interaction.registered", "pause.payload.schema",
          "turn.resumable.earned", "pause.published"}
"""Clauses Pydantic AI keeps: the adapter really runs agents, pauses and continues them."""

published = measured("Pydantic AI")
"""The published measurement (``make``, ``docs/peers/pydantic_ai.md``)."""


def test_claims_only_what_pydantic_ai_has_a_mechanism_for(published: SuiteResult) -> None:
    assert published.header["claimed"] == ["concurrency", "core", "multi-pause"]


def test_the_measured_failures_are_failed_verdicts(published: SuiteResult) -> None:
    assert having(published, Verdict.FAILED) == FAILED
    assert not having(published, Verdict.ERRORED)
    race = {c.id: c for c in published.cases}["concurrency/single-winner"]
    assert (race.failed_clause, race.got) == ("resume.consume.at-most-once", 4)


def test_core_clauses_pydantic_ai_keeps_pass(published: SuiteResult) -> None:
    assert having(published, Verdict.PASSED) >= PASSED


# -- the measured failures, through the adapter ----------------------------------------------


@pytest.fixture
def adapter() -> PydanticAIAdapter:
    return make()


def test_racing_resumes_all_run_the_continuation(adapter: PydanticAIAdapter) -> None:
    (p,) = started(adapter, "r1", effect("a"), ask("approve"), effect("b")).pauses
    race = adapter.race_resume(RaceResumeArgs(requests=[answer(p, {"n": i}) for i in range(3)]))
    assert isinstance(race, Ok)
    won = [r for r in race.data.results if isinstance(r, Ok)]
    lost = [r for r in race.data.results if isinstance(r, Refused)]
    assert len(won) == 1 and len(lost) == 2  # the store's revision check: one save wins...
    assert {r.code for r in lost} == {ErrorCode.PAUSE_CONSUMED.value}
    assert "saved or deleted since it was loaded" in lost[0].message
    assert count(adapter, "r1", "b") == 3  # ...after every racer ran the continuation
    assert count(adapter, "r1", "a") == 1


def test_a_repeated_answer_is_refused_not_replayed(adapter: PydanticAIAdapter) -> None:
    (p,) = started(adapter, "r1", effect("a"), ask("approve"), effect("b")).pauses
    assert isinstance(adapter.resume(answer(p)), Ok)
    again = adapter.resume(answer(p))
    assert isinstance(again, Refused) and again.code == ErrorCode.PAUSE_UNKNOWN.value
    assert "No pending deferred tool call" in again.message
    assert count(adapter, "r1", "b") == 1


def test_user_code_swallows_the_pause_signal(adapter: PydanticAIAdapter) -> None:
    around = Handlers(catch_all="caught", cleanup="cleanup")
    report = started(adapter, "r1", effect("a"), ask("approve", {"amount": 5}, handlers=around),
                     effect("b"))
    assert report.status == "done" and not report.pauses  # nobody was asked
    assert [count(adapter, "r1", k) for k in ("caught", "cleanup", "b")] == [1, 1, 1]


def test_the_scoring_rule_skips_what_is_the_applications_or_impossible(
        published: SuiteResult) -> None:
    assert having(published, Verdict.SKIPPED) >= {
        "pause.checkpoint.bound", "turn.write-failed.stays-paused", "pause.tool-call.bound"}
    assert "always makes up the id of a tool call" in why(published, "pause.tool-call.bound")


def test_pydantic_ai_refuses_an_unregistered_question(adapter: PydanticAIAdapter) -> None:
    res = adapter.start(StartArgs(run_id="r1", session_id="s", scope="x",
                                  script=[ask("not-registered"), effect("b"), end()]))
    assert isinstance(res, Ok) and res.data.status == "error" and not res.data.pauses
    assert res.data.refusal is not None
    assert res.data.refusal.code == ErrorCode.INTERACTION_UNREGISTERED.value
    assert count(adapter, "r1", "b") == 0


def test_nothing_reaches_the_network(monkeypatch: pytest.MonkeyPatch,
                                     adapter: PydanticAIAdapter) -> None:
    def no_network(*args: object) -> None:
        raise AssertionError(f"a connection was attempted: {args!r}")

    for name in ("connect", "connect_ex"):
        monkeypatch.setattr(socket.socket, name, no_network)
    (p,) = started(adapter, "r1", ask("approve"), effect("b")).pauses
    done = adapter.resume(answer(p))
    assert isinstance(done, Ok) and done.data.run.status == "done", done
