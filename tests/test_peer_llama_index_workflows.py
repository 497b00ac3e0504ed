"""The llama-index-workflows peer adapter
(``pausepoint_conformance.peers.llama_index_workflows_peer``): the suite really drives plain
llama-index-workflows -- core clauses it keeps pass --, the failures measured by hand show up
as FAILED verdicts on their clauses (``tests/test_peers.py`` keeps
``docs/peers/llama_index_workflows.md`` publishing the matrix a fresh run makes).

The failures measured by hand: (1) two resumes of one saved context both run the continuation;
(2) a repeated answer is no replay: the library drops it (``UnhandledEvent``) and the adapter
can only refuse it; (3) the pause signal (``WaitingForEvent``) is an ``Exception``, so user
code's catch-all swallows it and the run goes on without asking.
"""

from __future__ import annotations

from pausepoint_conformance.peers.llama_index_workflows_peer import LlamaIndexWorkflowsAdapter
from pausepoint_conformance.protocol.wire import Handlers, Ok, RaceResumeArgs, Refused
from pausepoint_conformance.suite.framework import ask, effect
from pausepoint_conformance.suite.runner import SuiteResult, Verdict
from peer_checks import adapters, answer, count, having, measured, phase, started, why

FAILED = {
    "resume.consume.single-winner", "run.lifecycle.table", "pause.interaction.registered",
    "pause.payload.schema", "pause.tool-call.bound",
    "pause.refusal.order", "pause.signal.base-exception", "resume.refusal.order",
    "resume.authority", "input.bounded",
    "effect.at-most-once",
    "resume.consume.at-most-once",
    "resume.response.strict",  # "false" for approve's bool is taken (issue 9)
    "pause.refusal.before-mint",  # two questions at once, one unregistered: the other asks
}
"""Every clause llama-index-workflows fails, as measured (a change in either direction is
news)."""

PASSED = {"resume.continuation.recorded-turn", "lifecycle.transition.table",
          "run.events.single-terminal", "gate.separate", "multi.independent",
          "resume.response.schema", "effect.refusal.no-effect",
          "durability.restart", "durability.token.reissue", "durability.commit-per-change"}
"""Clauses llama-index-workflows keeps: the adapter really runs workflows, pauses them, saves
and restores their contexts and continues them."""

on_sqlite = measured("llama-index-workflows")
"""The published measurement (``make_sqlite``)."""

in_memory = measured("llama-index-workflows", "make")
"""The variant with the saved contexts in memory (not published)."""

adapter = adapters(LlamaIndexWorkflowsAdapter, "memory", "sqlite")


def test_claims_only_what_the_library_has_a_mechanism_for(on_sqlite: SuiteResult,
                                                           in_memory: SuiteResult) -> None:
    assert on_sqlite.header["claimed"] == ["concurrency", "core", "durability", "multi-pause"]
    assert in_memory.header["claimed"] == ["concurrency", "core", "multi-pause"]


def test_the_measured_failures_are_failed_verdicts(on_sqlite: SuiteResult) -> None:
    assert having(on_sqlite, Verdict.FAILED) == FAILED
    # (1) racing resumes of one saved context all run the continuation
    assert "4 of 4 racing resumes consumed the pause" in why(on_sqlite,
                                                             "resume.consume.single-winner")
    # (2) a repeated answer is refused, never a replay: replay is not claimed, as for every
    # peer (docs/peers.md, the scoring rule)
    assert having(on_sqlite, Verdict.NOT_CLAIMED) >= {"replay.same-response",
                                                      "replay.different-response.conflict"}
    # (3) user code's catch-all swallows the pause signal
    assert "caught the pause signal" in why(on_sqlite, "pause.signal.base-exception")


def test_core_clauses_the_library_keeps_pass(on_sqlite: SuiteResult) -> None:
    assert having(on_sqlite, Verdict.PASSED) >= PASSED
    assert not having(on_sqlite, Verdict.ERRORED)


def test_contexts_in_memory_fail_the_same_clauses(in_memory: SuiteResult) -> None:
    assert having(in_memory, Verdict.FAILED) == FAILED


# -- the measured failures, through the adapter ----------------------------------------------


def test_racing_resumes_of_one_saved_context_all_run_the_continuation(
        adapter: LlamaIndexWorkflowsAdapter) -> None:
    (p,) = started(adapter, "r1", effect("a"), ask("approve"), effect("b")).pauses
    race = adapter.race_resume(RaceResumeArgs(requests=[answer(p, {"n": i}) for i in range(3)]))
    assert isinstance(race, Ok)
    assert [isinstance(r, Ok) and r.data.run.status == "done" for r in race.data.results] == [
        True] * 3
    assert count(adapter, "r1", "a") == 1 and count(adapter, "r1", "b") == 3


def test_a_repeated_answer_is_dropped_not_replayed(adapter: LlamaIndexWorkflowsAdapter) -> None:
    (p,) = started(adapter, "r1", ask("approve"), effect("b"), ask("confirm"), effect("c")).pauses
    once = adapter.resume(answer(p))
    assert isinstance(once, Ok)
    (q,) = once.data.run.pauses
    again = adapter.resume(answer(p))
    assert isinstance(again, Refused) and again.code == "pause_unknown"
    assert "UnhandledEvent" in again.message
    assert phase(adapter, p.interrupt_id) == "consumed"
    assert phase(adapter, q.interrupt_id) == "resumable"
    assert (count(adapter, "r1", "b"), count(adapter, "r1", "c")) == (1, 0)
    done = adapter.resume(answer(q))
    assert isinstance(done, Ok) and done.data.run.status == "done"
    late = adapter.resume(answer(q))  # the run has ended: its context is not run again
    assert isinstance(late, Refused) and "has ended" in late.message
    assert (count(adapter, "r1", "b"), count(adapter, "r1", "c")) == (1, 1)


def test_a_catch_all_swallows_the_pause_signal(adapter: LlamaIndexWorkflowsAdapter) -> None:
    around = Handlers(catch_all="k1", cleanup="k2")
    report = started(adapter, "r1", effect("a"), ask("approve", handlers=around), effect("b"))
    assert report.pauses == []  # nobody was asked ...
    assert [count(adapter, "r1", k) for k in ("k1", "k2", "b")] == [1, 1, 1]


def test_a_response_that_is_not_an_object_is_refused_by_the_event_model(
        adapter: LlamaIndexWorkflowsAdapter) -> None:
    (p,) = started(adapter, "r1", ask("approve"), effect("b")).pauses
    for bad in ([1], "yes", None):
        res = adapter.resume(answer(p, bad))
        assert isinstance(res, Refused) and res.code == "response_invalid"
    assert phase(adapter, p.interrupt_id) == "resumable" and count(adapter, "r1", "b") == 0


def test_the_asking_step_is_replayed_at_every_restore(adapter: LlamaIndexWorkflowsAdapter) -> None:
    (p,) = started(adapter, "r1", ask("approve", handlers=Handlers(cleanup="k2")),
                   effect("b")).pauses
    assert count(adapter, "r1", "k2") == 1  # the wait suspended the step: its finally ran
    assert isinstance(adapter.resume(answer(p)), Ok)
    assert count(adapter, "r1", "k2") == 3  # ...again when restored, and when the answer came


def test_llama_agents_server_serialises_racing_answers_to_the_adapters_workflow() -> None:
    """The adapter's own workflow, served by ``llama-agents-server`` on loopback: four clients
    answer the run at once, each is told ``sent`` (or 409 once the run has completed), and the
    step after the pause runs once
    (the same race through the library above runs it once per racer)."""
    import json
    import time
    from concurrent.futures import ThreadPoolExecutor

    import httpx
    from llama_agents.server import WorkflowServer

    from pausepoint.engine.harness import MemoryWorld
    from pausepoint_conformance.peers.base import serve_on_loopback
    from pausepoint_conformance.peers.llama_index_workflows_peer import (
        Answer,
        ScriptedRun,
        _plan,
    )
    from pausepoint_conformance.suite.framework import end

    world = MemoryWorld()
    served = WorkflowServer()
    served.add_workflow("r1", ScriptedRun(_plan("r1", [ask("approve"), effect("b"), end()]),
                                          world), additional_events=[Answer])
    url, stop = serve_on_loopback(served.app, "llama-agents-server")
    try:
        with httpx.Client(base_url=url, timeout=30) as client:
            handler = client.post("/workflows/r1/run-nowait", json={}).json()["handler_id"]
            with client.stream("GET", f"/events/{handler}",  # from its first event on
                               params={"sse": "false", "after_sequence": -1}) as events:
                asked = next(e for e in map(json.loads, events.iter_lines())
                             if e["type"] == "Question")
            waiter = asked["value"]["question"]

            def click(n: int) -> int:
                event = {"type": "Answer", "value": {"question": waiter, "response": {"n": n}}}
                return client.post(f"/events/{handler}", json={"event": event}).status_code
            with ThreadPoolExecutor(4) as pool:  # "sent", or "already completed" once it ran
                told = list(pool.map(click, range(4)))
            assert 200 in told and set(told) <= {200, 409}
            status = "running"
            for _ in range(3000):  # until the run ends (a guard, not a timing)
                status = client.get(f"/handlers/{handler}").json()["status"]
                if status != "running":
                    break
                time.sleep(0.01)
            assert status == "completed"
        assert world.count("r1", "b") == 1
    finally:
        stop()
