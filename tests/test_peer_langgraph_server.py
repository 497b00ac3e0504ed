"""The LangGraph Agent Server column (``pausepoint_conformance.peers.langgraph_server_peer``): the
suite really drives the server (``langgraph-api``, in-memory runtime) through ``langgraph-sdk``,
and the server's per-thread queue -- not the graph -- is what turns the library's racing resumes
into one: the same race through the library adapter runs the continuation once per racer."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from pausepoint_conformance.peers.langgraph_peer import LangGraphAdapter
from pausepoint_conformance.peers.langgraph_server_peer import LangGraphServerAdapter
from pausepoint_conformance.protocol.wire import Ok, RaceResumeArgs, Refused, Skipped
from pausepoint_conformance.suite.framework import ask, effect
from pausepoint_conformance.suite.runner import SuiteResult, Verdict
from peer_checks import answer, count, having, measured, phase, started, why
from scratch import fast_tmpdir

LIBRARY_ONLY = {"resume.consume.single-winner", "effect.at-most-once", "pause.checkpoint.bound"}
"""What the library fails and the server does not: the races (the server queues the runs of a
thread), and a graph without a checkpointer (the server gives every thread one)."""

SERVER_ONLY = {"race.decided-once"}
"""What only the server fails: every queued loser is answered as if it had won."""

served = measured("LangGraph Agent Server")
library = measured("LangGraph")


@pytest.fixture
def server_adapter() -> Iterator[LangGraphServerAdapter]:
    made = LangGraphServerAdapter(scratch=fast_tmpdir())
    try:
        yield made
    finally:
        made.close()


def test_claims_what_langgraph_claims_without_durability(served: SuiteResult) -> None:
    assert served.header["claimed"] == ["concurrency", "core", "multi-pause"]


def test_the_server_fails_what_the_library_fails_but_the_races(served: SuiteResult,
                                                                library: SuiteResult) -> None:
    assert having(served, Verdict.FAILED) == (
        having(library, Verdict.FAILED) - LIBRARY_ONLY) | SERVER_ONLY
    assert having(served, Verdict.PASSED) >= {"resume.consume.single-winner",
                                               "effect.at-most-once", "multi.independent",
                                               "resume.continuation.recorded-turn"}
    assert "told it won" in why(served, "race.decided-once")


@pytest.mark.parametrize("served_by", ["library", "server"])
def test_racing_resumes_run_the_continuation_once_only_through_the_server(
        served_by: str, server_adapter: LangGraphServerAdapter) -> None:
    adapter = server_adapter if served_by == "server" else LangGraphAdapter(
        "memory", scratch=fast_tmpdir())
    try:
        (p,) = started(adapter, "r1", effect("a"), ask("approve"), effect("b")).pauses
        race = adapter.race_resume(RaceResumeArgs(requests=[answer(p, {"n": i})
                                                             for i in range(4)]))
        assert isinstance(race, Ok)
        assert all(isinstance(r, Ok) for r in race.data.results)
        assert count(adapter, "r1", "b") == (1 if served_by == "server" else 4)
        assert phase(adapter, p.interrupt_id) == "consumed"
    finally:
        if adapter is not server_adapter:
            adapter.close()


def test_a_refused_answer_leaves_the_thread_paused(
        server_adapter: LangGraphServerAdapter) -> None:
    (p,) = started(server_adapter, "r1", ask("approve"), effect("b")).pauses
    refused = server_adapter.resume(answer(p, [1, 2]))
    assert isinstance(refused, Refused) and refused.code == "response_invalid"
    assert phase(server_adapter, p.interrupt_id) == "resumable"
    assert isinstance(server_adapter.crash_restart(None), Skipped)  # type: ignore[arg-type]
