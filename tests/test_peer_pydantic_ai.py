"""The Pydantic AI peer adapter (``pausepoint_conformance.peers.pydantic_ai_peer``): the suite
really drives plain Pydantic AI -- deferred tools, ``DeferredToolResults``, a conversation
store -- offline (core clauses Pydantic AI keeps pass), and the failures measured by hand show up
as FAILED verdicts on their clauses.

The failures measured by hand: (1) racing resumes of one saved conversation all run the
continuation; the store's revision check refuses all but one save afterwards; (2) the pause
signal, ``CallDeferred``, is an ``Exception``, so user code's catch-all swallows it; (3) a
failed save leaves the answered question pending in the store, so answering it again runs its
continuation again.
"""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import pytest

from pausepoint.clauses import ErrorCode
from pausepoint_conformance.framework import YES, ask, effect, end
from pausepoint_conformance.peers import Peer, matrix
from pausepoint_conformance.peers.pydantic_ai_peer import PydanticAIAdapter, make
from pausepoint_conformance.protocol import (
    EffectCountArgs,
    Handlers,
    Ok,
    PauseStateArgs,
    PublishedPause,
    RaceResumeArgs,
    Refused,
    ResetArgs,
    ResumeArgs,
    RunReport,
    StartArgs,
    Step,
)
from pausepoint_conformance.runner import SuiteResult, Verdict

PYDANTIC_AI = Peer("Pydantic AI", "pausepoint_conformance.peers.pydantic_ai_peer:make",
                   "docs/peers/pydantic_ai.md")
"""The published measurement (``docs/peers/pydantic_ai.md``)."""

FAILED = {
    "resume.consume.at-most-once", "pause.signal.base-exception", "pause.checkpoint.bound",
    "pause.tool-call.bound", "pause.refusal.order", "pause.published",
    "turn.write-failed.stays-paused", "run.paused.never-error", "resume.refusal.order",
    "resume.authority", "resume.response.schema", "input.bounded",
}
"""Every clause Pydantic AI fails, as measured (a change in either direction is news)."""

PASSED = {"resume.continuation.recorded-turn", "effect.at-most-once", "lifecycle.transition.table",
          "lifecycle.terminal.absorbing", "run.events.single-terminal", "gate.separate",
          "multi.independent", "pause.interaction.registered", "pause.payload.schema",
          "pause.refusal.before-mint", "turn.resumable.earned"}
"""Clauses Pydantic AI keeps: the adapter really runs agents, pauses and continues them."""


@pytest.fixture(scope="module")
def measured() -> SuiteResult:
    return matrix.measure(PYDANTIC_AI)


def verdicts(result: SuiteResult) -> dict[str, str]:
    return {v.id: v.verdict for v in result.clauses}


def test_claims_only_what_pydantic_ai_has_a_mechanism_for(measured: SuiteResult) -> None:
    assert measured.header["claimed"] == ["concurrency", "core", "multi-pause"]


def test_the_measured_failures_are_failed_verdicts(measured: SuiteResult) -> None:
    v = verdicts(measured)
    assert {c for c, verdict in v.items() if verdict == Verdict.FAILED} == FAILED
    assert not [c for c, verdict in v.items() if verdict == Verdict.ERRORED]
    race = {c.id: c for c in measured.cases}["concurrency/single-winner"]
    assert (race.failed_clause, race.got) == ("resume.consume.at-most-once", 4)


def test_core_clauses_pydantic_ai_keeps_pass(measured: SuiteResult) -> None:
    v = verdicts(measured)
    assert {c: v[c] for c in PASSED} == {c: Verdict.PASSED for c in PASSED}


def test_the_page_publishes_the_current_matrix(measured: SuiteResult) -> None:
    """Until the peer is in ``PEERS`` (whose pages ``tests/test_peers.py`` keeps current)."""
    page = (Path(__file__).resolve().parent.parent / PYDANTIC_AI.doc).read_text(encoding="utf-8")
    assert matrix.splice(page, matrix.table(measured)) == page, "regenerate the page's matrix"


# -- the measured failures, through the adapter ----------------------------------------------


class Driver:
    """One adapter, reset, driven the way the checks drive it (session ``s``, scope ``x``)."""

    def __init__(self, adapter: PydanticAIAdapter) -> None:
        self.adapter = adapter
        adapter.reset(ResetArgs(ttl_ms=60_000))

    def start(self, *steps: Step, run_id: str = "r1") -> RunReport:
        res = self.adapter.start(StartArgs(run_id=run_id, session_id="s", scope="x",
                                           script=[*steps, end()]))
        assert isinstance(res, Ok), res
        report: RunReport = res.data
        return report

    @staticmethod
    def args(p: PublishedPause, response: Any = YES) -> ResumeArgs:
        return ResumeArgs(token=p.token, response=response, run_id=p.run_id, session_id="s",
                          scope="x")

    def count(self, key: str, run_id: str = "r1") -> int:
        res = self.adapter.effect_count(EffectCountArgs(run_id=run_id, key=key))
        assert isinstance(res, Ok)
        n: int = res.data.count
        return n


@pytest.fixture
def driver() -> Driver:
    return Driver(make())


def test_racing_resumes_all_run_the_continuation(driver: Driver) -> None:
    (p,) = driver.start(effect("a"), ask("approve"), effect("b")).pauses
    race = driver.adapter.race_resume(RaceResumeArgs(
        requests=[driver.args(p, {"n": i}) for i in range(3)]))
    assert isinstance(race, Ok)
    won = [r for r in race.data.results if isinstance(r, Ok)]
    lost = [r for r in race.data.results if isinstance(r, Refused)]
    assert len(won) == 1 and len(lost) == 2  # the store's revision check: one save wins...
    assert {r.code for r in lost} == {ErrorCode.PAUSE_CONSUMED.value}
    assert "saved or deleted since it was loaded" in lost[0].message
    assert driver.count("b") == 3  # ...after every racer ran the continuation
    assert driver.count("a") == 1


def test_a_repeated_answer_is_refused_not_replayed(driver: Driver) -> None:
    (p,) = driver.start(effect("a"), ask("approve"), effect("b")).pauses
    assert isinstance(driver.adapter.resume(driver.args(p)), Ok)
    again = driver.adapter.resume(driver.args(p))
    assert isinstance(again, Refused) and again.code == ErrorCode.PAUSE_UNKNOWN.value
    assert "No pending deferred tool call" in again.message
    assert driver.count("b") == 1


def test_user_code_swallows_the_pause_signal(driver: Driver) -> None:
    around = Handlers(catch_all="caught", cleanup="cleanup")
    report = driver.start(effect("a"), ask("approve", {"amount": 5}, handlers=around),
                          effect("b"))
    assert report.status == "done" and not report.pauses  # nobody was asked
    assert (driver.count("caught"), driver.count("cleanup"), driver.count("b")) == (1, 1, 1)


def test_a_failed_save_leaves_the_answered_question_pending(driver: Driver) -> None:
    (p,) = driver.start(ask("approve"), effect("b"), ask("confirm", checkpoint_write="fail"),
                        effect("c")).pauses
    for n in (1, 2):
        res = driver.adapter.resume(driver.args(p))
        assert isinstance(res, Ok) and res.data.run.status == "error" and not res.data.run.pauses
        state = driver.adapter.pause_state(PauseStateArgs(interrupt_id=p.interrupt_id))
        assert isinstance(state, Ok) and state.data.phase == "resumable"
        assert driver.count("b") == n  # the continuation runs again for every answer


def test_pydantic_ai_refuses_an_unregistered_question(driver: Driver) -> None:
    res = driver.adapter.start(StartArgs(run_id="r1", session_id="s", scope="x",
                                         script=[ask("not-registered"), effect("b"), end()]))
    assert isinstance(res, Ok) and res.data.status == "error" and not res.data.pauses
    assert res.data.refusal is not None
    assert res.data.refusal.code == ErrorCode.INTERACTION_UNREGISTERED.value
    assert driver.count("b") == 0


def test_nothing_reaches_the_network(monkeypatch: pytest.MonkeyPatch, driver: Driver) -> None:
    def no_network(*args: object) -> None:
        raise AssertionError(f"a connection was attempted: {args!r}")

    for name in ("connect", "connect_ex"):
        monkeypatch.setattr(socket.socket, name, no_network)
    (p,) = driver.start(ask("approve"), effect("b")).pauses
    done = driver.adapter.resume(driver.args(p))
    assert isinstance(done, Ok) and done.data.run.status == "done", done
