"""The llama-index-workflows peer adapter
(``pausepoint_conformance.peers.llama_index_workflows_peer``): the suite really drives plain
llama-index-workflows -- core clauses it keeps pass --, the failures measured by hand show up
as FAILED verdicts on their clauses, and ``docs/peers/llama_index_workflows.md`` publishes the
matrix a fresh run makes.

The failures measured by hand: (1) two resumes of one saved context both run the continuation;
(2) a repeated answer is no replay: the library drops it (``UnhandledEvent``) and the adapter
can only refuse it; (3) the pause signal (``WaitingForEvent``) is an ``Exception``, so user
code's catch-all swallows it and the run goes on without asking.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from pausepoint_conformance.framework import YES, ask, effect, end
from pausepoint_conformance.peers import Peer, matrix
from pausepoint_conformance.peers.llama_index_workflows_peer import LlamaIndexWorkflowsAdapter
from pausepoint_conformance.protocol import (
    EffectCountArgs,
    Handlers,
    Ok,
    PauseStateArgs,
    RaceResumeArgs,
    Refused,
    ResetArgs,
    ResumeArgs,
    StartArgs,
    Step,
)
from pausepoint_conformance.runner import SuiteResult, Verdict
from scratch import fast_tmpdir

LLAMA_INDEX_WORKFLOWS = Peer(
    "llama-index-workflows",
    "pausepoint_conformance.peers.llama_index_workflows_peer:make_sqlite",
    "docs/peers/llama_index_workflows.md")
"""The published variant (the line ``peers.PEERS`` gets)."""

FAILED = {
    "resume.consume.single-winner", "replay.same-response",
    "replay.different-response.conflict", "pause.interaction.registered",
    "pause.payload.schema", "pause.checkpoint.bound", "pause.tool-call.bound",
    "pause.refusal.order", "pause.signal.base-exception", "pause.published",
    "turn.write-failed.stays-paused", "run.paused.never-error", "resume.refusal.order",
    "resume.authority", "input.bounded",
}
"""Every clause llama-index-workflows fails, as measured (a change in either direction is
news)."""

PASSED = {"resume.continuation.recorded-turn", "effect.at-most-once", "lifecycle.transition.table",
          "run.events.single-terminal", "gate.separate", "multi.independent",
          "resume.response.schema", "resume.consume.at-most-once", "effect.refusal.no-effect",
          "durability.restart", "durability.token.reissue", "durability.commit-per-change"}
"""Clauses llama-index-workflows keeps: the adapter really runs workflows, pauses them, saves
and restores their contexts and continues them."""


IN_MEMORY = Peer(LLAMA_INDEX_WORKFLOWS.name,
                 "pausepoint_conformance.peers.llama_index_workflows_peer:make",
                 LLAMA_INDEX_WORKFLOWS.doc)
"""The variant with the saved contexts in memory (not published)."""


@pytest.fixture(scope="module")
def on_sqlite() -> SuiteResult:
    """The published measurement (``make_sqlite``)."""
    return matrix.measure(LLAMA_INDEX_WORKFLOWS)


@pytest.fixture(scope="module")
def in_memory() -> SuiteResult:
    return matrix.measure(IN_MEMORY)


def failed(result: SuiteResult) -> set[str]:
    return {v.id for v in result.clauses if v.verdict == Verdict.FAILED}


def test_claims_only_what_the_library_has_a_mechanism_for(on_sqlite: SuiteResult,
                                                           in_memory: SuiteResult) -> None:
    assert on_sqlite.header["claimed"] == ["concurrency", "core", "durability", "multi-pause",
                                           "replay"]
    assert in_memory.header["claimed"] == ["concurrency", "core", "multi-pause", "replay"]


def test_the_measured_failures_are_failed_verdicts(on_sqlite: SuiteResult) -> None:
    assert failed(on_sqlite) == FAILED
    why = {v.id: v.why for v in on_sqlite.clauses}
    # (1) racing resumes of one saved context all run the continuation
    assert "4 of 4 racing resumes consumed the pause" in why["resume.consume.single-winner"]
    # (2) a repeated answer is refused, never a replay
    assert "replay/same-response: resume of r1:step1-0 was refused" in why[
        "replay.same-response"]
    # (3) user code's catch-all swallows the pause signal
    assert "caught the pause signal" in why["pause.signal.base-exception"]


def test_core_clauses_the_library_keeps_pass(on_sqlite: SuiteResult) -> None:
    verdicts = {v.id: v.verdict for v in on_sqlite.clauses}
    assert {c: verdicts[c] for c in PASSED} == {c: Verdict.PASSED for c in PASSED}
    assert not [v.id for v in on_sqlite.clauses if v.verdict == Verdict.ERRORED]


def test_contexts_in_memory_fail_the_same_clauses(in_memory: SuiteResult) -> None:
    assert failed(in_memory) == FAILED


# -- the measured failures, through the adapter ----------------------------------------------


class Session:
    """One adapter, reset, driven the way the suite drives it."""

    def __init__(self, adapter: LlamaIndexWorkflowsAdapter) -> None:
        self.adapter = adapter
        assert isinstance(adapter.reset(ResetArgs(ttl_ms=60_000)), Ok)

    def start(self, *steps: Step) -> list[Any]:
        res = self.adapter.start(StartArgs(run_id="r1", session_id="s", scope="x",
                                           script=[*steps, end()]))
        assert isinstance(res, Ok), res
        return list(res.data.pauses)

    @staticmethod
    def answer(token: str, response: Any = YES) -> ResumeArgs:
        return ResumeArgs(token=token, response=response, run_id="r1", session_id="s",
                          scope="x")

    def resume(self, token: str, response: Any = YES) -> Any:
        return self.adapter.resume(self.answer(token, response))

    def count(self, key: str) -> int:
        res = self.adapter.effect_count(EffectCountArgs(run_id="r1", key=key))
        assert isinstance(res, Ok)
        return int(res.data.count)

    def phase(self, interrupt_id: str) -> str:
        res = self.adapter.pause_state(PauseStateArgs(interrupt_id=interrupt_id))
        assert isinstance(res, Ok), res
        return str(res.data.phase)


@pytest.fixture(params=["memory", "sqlite"])
def session(request: pytest.FixtureRequest) -> Iterator[Session]:
    adapter = LlamaIndexWorkflowsAdapter(request.param, scratch=fast_tmpdir())
    try:
        yield Session(adapter)
    finally:
        adapter.close()


def test_racing_resumes_of_one_saved_context_all_run_the_continuation(session: Session) -> None:
    (p,) = session.start(effect("a"), ask("approve"), effect("b"))
    race = session.adapter.race_resume(RaceResumeArgs(
        requests=[session.answer(p.token, {"n": i}) for i in range(3)]))
    assert isinstance(race, Ok)
    assert [isinstance(r, Ok) and r.data.run.status == "done" for r in race.data.results] == [
        True] * 3
    assert session.count("a") == 1 and session.count("b") == 3


def test_a_repeated_answer_is_dropped_not_replayed(session: Session) -> None:
    (p,) = session.start(ask("approve"), effect("b"), ask("confirm"), effect("c"))
    once = session.resume(p.token)
    assert isinstance(once, Ok)
    (q,) = once.data.run.pauses
    again = session.resume(p.token)
    assert isinstance(again, Refused) and again.code == "pause_unknown"
    assert "UnhandledEvent" in again.message
    assert session.phase(p.interrupt_id) == "consumed"
    assert session.phase(q.interrupt_id) == "resumable"
    assert (session.count("b"), session.count("c")) == (1, 0)
    done = session.resume(q.token)
    assert isinstance(done, Ok) and done.data.run.status == "done"
    late = session.resume(q.token)  # the run has ended: its context is not run again
    assert isinstance(late, Refused) and "has ended" in late.message
    assert (session.count("b"), session.count("c")) == (1, 1)


def test_a_catch_all_swallows_the_pause_signal(session: Session) -> None:
    pauses = session.start(effect("a"), ask("approve", handlers=Handlers(catch_all="k1",
                                                                          cleanup="k2")),
                           effect("b"))
    assert pauses == []  # nobody was asked ...
    assert (session.count("k1"), session.count("k2"), session.count("b")) == (1, 1, 1)


def test_a_response_that_is_not_an_object_is_refused_by_the_event_model(
        session: Session) -> None:
    (p,) = session.start(ask("approve"), effect("b"))
    for bad in ([1], "yes", None):
        res = session.resume(p.token, bad)
        assert isinstance(res, Refused) and res.code == "response_invalid"
    assert session.phase(p.interrupt_id) == "resumable" and session.count("b") == 0


def test_the_asking_step_is_replayed_at_every_restore(session: Session) -> None:
    (p,) = session.start(ask("approve", handlers=Handlers(cleanup="k2")), effect("b"))
    assert session.count("k2") == 1  # the wait suspended the step: its finally ran
    assert isinstance(session.resume(p.token), Ok)
    assert session.count("k2") == 3  # ...again when restored, and when the answer came
