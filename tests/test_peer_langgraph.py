"""The LangGraph peer adapter (``pausepoint_conformance.peers.langgraph_peer``): the suite really
drives plain LangGraph -- core clauses LangGraph keeps pass --, and the failures measured by hand
show up as FAILED verdicts on their clauses (``tests/test_peers.py`` keeps the published pages
current).

The failures measured by hand: (1) with the bare ``Command(resume=answer)`` a repeated answer
answers the next question (the id-keyed form the adapter uses, as LangGraph's docs recommend,
ignores it); (2) two resumes of one saved state both run the continuation.
"""

from __future__ import annotations

from pausepoint_conformance.peers.langgraph_peer import LangGraphAdapter
from pausepoint_conformance.protocol.wire import Ok, RaceResumeArgs
from pausepoint_conformance.suite.framework import ask, effect
from pausepoint_conformance.suite.runner import SuiteResult, Verdict
from peer_checks import adapters, answer, count, having, measured, started, why

FAILED = {
    "resume.consume.single-winner", "resume.consume.at-most-once",
    "run.lifecycle.table", "pause.interaction.registered",
    "pause.payload.schema", "pause.checkpoint.bound", "pause.tool-call.bound",
    "pause.refusal.order", "pause.signal.base-exception", "pause.published",
    "turn.write-failed.stays-paused", "run.paused.never-error", "resume.refusal.order",
    "resume.authority", "input.bounded",
    "effect.at-most-once",
    "resume.response.strict",  # "false" for approve's bool is taken (issue 9)
    "pause.refusal.before-mint",  # two questions at once, one unregistered: the other asks
}
"""Every clause LangGraph fails, as measured (a change in either direction is news)."""

PASSED = {"resume.continuation.recorded-turn", "lifecycle.transition.table",
          "run.events.single-terminal", "gate.separate", "multi.independent",
          "durability.restart", "durability.token.reissue", "durability.commit-per-change"}
"""Clauses LangGraph keeps: the adapter really runs graphs, pauses and continues them."""

on_sqlite = measured("LangGraph")
"""The published measurement (``make_sqlite``)."""

in_memory = measured("LangGraph", "make")

bare = measured("LangGraph", "make_sqlite_bare")
"""The other documented resume form, ``Command(resume=answer)``."""

adapter = adapters(LangGraphAdapter, "memory")
on_either = adapters(LangGraphAdapter, "memory", "sqlite")


def test_claims_only_what_langgraph_has_a_mechanism_for(on_sqlite: SuiteResult,
                                                         in_memory: SuiteResult) -> None:
    assert on_sqlite.header["claimed"] == ["concurrency", "core", "durability", "multi-pause"]
    assert in_memory.header["claimed"] == ["concurrency", "core", "multi-pause"]


def test_the_measured_failures_are_failed_verdicts(on_sqlite: SuiteResult) -> None:
    assert having(on_sqlite, Verdict.FAILED) == FAILED
    # racing resumes of one saved state all run the continuation
    assert "4 of 4 racing resumes consumed the pause" in why(on_sqlite,
                                                             "resume.consume.single-winner")


def test_core_clauses_langgraph_keeps_pass(on_sqlite: SuiteResult) -> None:
    assert having(on_sqlite, Verdict.PASSED) >= PASSED


def test_a_bare_null_answer_crashes_langgraph(on_sqlite: SuiteResult,
                                              bare: SuiteResult) -> None:
    assert not having(on_sqlite, Verdict.ERRORED)  # the id-keyed form refuses a null answer
    (case,) = [c for c in bare.cases if c.id == "core/response-invalid"]
    assert case.outcome == "errored" and "UnboundLocalError" in case.message
    assert having(bare, Verdict.ERRORED) == {
        "lifecycle.refusal.no-change", "resume.response.schema", "resume.refusal.keeps-pause",
        "effect.refusal.no-effect"}
    assert having(bare, Verdict.FAILED) == FAILED


def test_the_in_memory_saver_fails_the_same_clauses(in_memory: SuiteResult) -> None:
    assert having(in_memory, Verdict.FAILED) == FAILED


# -- the two measured failures, through the adapter ------------------------------------------


def test_a_repeated_bare_answer_answers_the_next_question() -> None:
    for form in ("bare", "id"):
        adapter = LangGraphAdapter("memory", resume_form=form)  # type: ignore[arg-type]
        try:
            rep = started(adapter, "r1", ask("approve"), effect("b"), ask("confirm"),
                          effect("c"))
            (first,) = rep.pauses
            once = adapter.resume(answer(first))
            assert isinstance(once, Ok)
            (second,) = once.data.run.pauses
            twice = adapter.resume(answer(first))
            assert isinstance(twice, Ok)
            if form == "bare":  # the bare command names no question: it answers the next one
                assert not twice.data.replayed
                assert twice.data.interrupt_id == second.interrupt_id
                assert twice.data.run.status == "done" and count(adapter, "r1", "c") == 1
            else:  # the id-keyed command names the answered one: nothing runs
                assert twice.data.replayed and count(adapter, "r1", "c") == 0
        finally:
            adapter.close()


def test_racing_resumes_all_run_the_continuation(on_either: LangGraphAdapter) -> None:
    (p,) = started(on_either, "r1", effect("a"), ask("approve"), effect("b")).pauses
    race = on_either.race_resume(RaceResumeArgs(requests=[answer(p, {"n": i})
                                                          for i in range(3)]))
    assert isinstance(race, Ok)
    assert [isinstance(r, Ok) and not r.data.replayed for r in race.data.results] == [
        True] * 3
    assert count(on_either, "r1", "b") == 3
