"""The LangGraph peer adapter (``pausepoint_conformance.peers.langgraph_peer``): the suite
really drives plain LangGraph -- core clauses LangGraph keeps pass --, the failures measured
by hand show up as FAILED verdicts on their clauses, and ``docs/peers.md`` publishes the
matrix a fresh run makes (``tests/test_peers.py`` keeps the published pages current).

The two failures measured by hand: (1) a repeated ``Command(resume=...)`` answers the next
question; (2) two resumes of one saved state both run the continuation.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from typing import Any

import pytest

from pausepoint_conformance.framework import YES, ask, effect, end
from pausepoint_conformance.peers import PEERS, matrix
from pausepoint_conformance.peers.langgraph_peer import LangGraphAdapter, make
from pausepoint_conformance.protocol import (
    EffectCountArgs,
    Ok,
    PublishedPause,
    RaceResumeArgs,
    ResetArgs,
    ResumeArgs,
    RunReport,
    StartArgs,
)
from pausepoint_conformance.runner import Plan, SuiteResult, Verdict, run_suite
from scratch import fast_tmpdir

(LANGGRAPH,) = [p for p in PEERS if p.name == "LangGraph"]

FAILED = {
    "replay.same-response", "resume.consume.single-winner", "resume.consume.at-most-once",
    "replay.different-response.conflict", "pause.interaction.registered",
    "pause.payload.schema", "pause.checkpoint.bound", "pause.tool-call.bound",
    "pause.refusal.order", "pause.signal.base-exception", "pause.published",
    "turn.write-failed.stays-paused", "run.paused.never-error", "resume.refusal.order",
    "resume.authority", "input.bounded",
}
"""Every clause LangGraph fails, as measured (a change in either direction is news)."""

PASSED = {"resume.continuation.recorded-turn", "effect.at-most-once", "lifecycle.transition.table",
          "run.events.single-terminal", "gate.separate", "multi.independent",
          "durability.restart", "durability.token.reissue", "durability.commit-per-change"}
"""Clauses LangGraph keeps: the adapter really runs graphs, pauses and continues them."""


def sqlite() -> LangGraphAdapter:
    return LangGraphAdapter("sqlite", scratch=fast_tmpdir())


@pytest.fixture(scope="module")
def on_sqlite() -> Iterator[SuiteResult]:
    """The published measurement (``make_sqlite``), its SQLite files on a RAM disk if any."""
    saved, tempfile.tempdir = tempfile.tempdir, fast_tmpdir()
    try:
        yield matrix.measure(LANGGRAPH)
    finally:
        tempfile.tempdir = saved


@pytest.fixture(scope="module")
def in_memory() -> SuiteResult:
    adapter = make()
    try:
        return run_suite(adapter, adapter_name="langgraph:memory",
                         plan=Plan(vectors=matrix.default_vectors()))
    finally:
        adapter.close()


def verdicts(result: SuiteResult) -> dict[str, str]:
    return {v.id: v.verdict for v in result.clauses}


def why(result: SuiteResult, clause_id: str) -> str:
    return next(v.why for v in result.clauses if v.id == clause_id)


def test_claims_only_what_langgraph_has_a_mechanism_for(on_sqlite: SuiteResult,
                                                         in_memory: SuiteResult) -> None:
    assert on_sqlite.header["claimed"] == ["concurrency", "core", "durability", "multi-pause",
                                           "replay"]
    assert in_memory.header["claimed"] == ["concurrency", "core", "multi-pause", "replay"]


def test_the_measured_failures_are_failed_verdicts(on_sqlite: SuiteResult) -> None:
    v = verdicts(on_sqlite)
    assert {c for c, verdict in v.items() if verdict == Verdict.FAILED} == FAILED
    # (1) a repeated answer is no replay: it answers the next question
    failing = {c.description for c in on_sqlite.cases
               if c.failed_clause == "replay.same-response"}
    assert "two-questions: answer r1#0 yes; answer r1#0 yes" in failing, failing
    # (2) racing resumes of one saved state all run the continuation
    assert "4 of 4 racing resumes consumed the pause" in why(on_sqlite,
                                                             "resume.consume.single-winner")


def test_core_clauses_langgraph_keeps_pass(on_sqlite: SuiteResult) -> None:
    v = verdicts(on_sqlite)
    assert {c: v[c] for c in PASSED} == {c: Verdict.PASSED for c in PASSED}


def test_a_null_answer_crashes_langgraph(on_sqlite: SuiteResult) -> None:
    (case,) = [c for c in on_sqlite.cases if c.id == "core/response-invalid"]
    assert case.outcome == "errored" and "UnboundLocalError" in case.message
    assert {c for c, verdict in verdicts(on_sqlite).items() if verdict == Verdict.ERRORED} == {
        "lifecycle.refusal.no-change", "resume.response.schema", "resume.refusal.keeps-pause",
        "effect.refusal.no-effect"}


def test_the_in_memory_saver_fails_the_same_clauses(in_memory: SuiteResult) -> None:
    assert {c for c, v in verdicts(in_memory).items() if v == Verdict.FAILED} == FAILED


# -- the two measured failures, through the adapter ------------------------------------------


def started(adapter: LangGraphAdapter, run_id: str, *steps: Any) -> RunReport:
    adapter.reset(ResetArgs(ttl_ms=60_000))
    res = adapter.start(StartArgs(run_id=run_id, session_id="s", scope="x",
                                  script=[*steps, end()]))
    assert isinstance(res, Ok)
    report: RunReport = res.data
    return report


def answer(p: PublishedPause, response: Any = YES) -> ResumeArgs:
    return ResumeArgs(token=p.token, response=response, run_id=p.run_id, session_id="s",
                      scope="x")


def count(adapter: LangGraphAdapter, run_id: str, key: str) -> int:
    res = adapter.effect_count(EffectCountArgs(run_id=run_id, key=key))
    assert isinstance(res, Ok)
    n: int = res.data.count
    return n


def test_a_repeated_answer_answers_the_next_question() -> None:
    adapter = make()
    try:
        rep = started(adapter, "r1", ask("approve"), effect("b"), ask("confirm"), effect("c"))
        (first,) = rep.pauses
        once = adapter.resume(answer(first))
        assert isinstance(once, Ok)
        (second,) = once.data.run.pauses
        twice = adapter.resume(answer(first))
        assert isinstance(twice, Ok) and not twice.data.replayed
        assert twice.data.interrupt_id == second.interrupt_id
        assert twice.data.run.status == "done"
        assert count(adapter, "r1", "c") == 1
    finally:
        adapter.close()


@pytest.mark.parametrize("factory", [make, sqlite])
def test_racing_resumes_all_run_the_continuation(factory: Any) -> None:
    adapter = factory()
    try:
        (p,) = started(adapter, "r1", effect("a"), ask("approve"), effect("b")).pauses
        race = adapter.race_resume(RaceResumeArgs(requests=[answer(p, {"n": i})
                                                            for i in range(3)]))
        assert isinstance(race, Ok)
        assert [isinstance(r, Ok) and not r.data.replayed for r in race.data.results] == [
            True] * 3
        assert count(adapter, "r1", "b") == 3
    finally:
        adapter.close()
