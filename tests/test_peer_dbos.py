"""The DBOS peer adapter (``pausepoint_conformance.peers.dbos_peer``): the suite really drives
plain DBOS workflows on a SQLite system database -- the clauses DBOS keeps pass, the failures
shown on its page are FAILED verdicts on their clauses, the steps it cannot realise are
skipped, and nothing reaches the network.

What DBOS keeps that the agent frameworks do not, measured by hand: racing answers to one
pause are all accepted, yet the step after it runs once; a restart resumes a paused run
without running a recorded step again; a pause outside a durable workflow is refused by DBOS
itself."""

from __future__ import annotations

import pytest

from pausepoint_conformance.peers.dbos_peer import DBOSAdapter
from pausepoint_conformance.protocol.wire import (
    CrashRestartArgs,
    Ok,
    RaceResumeArgs,
    Refused,
    ResetArgs,
    StartArgs,
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
    "pause.interaction.registered", "pause.payload.schema", "pause.tool-call.bound",
    "pause.refusal.order", "pause.refusal.before-mint", "pause.signal.base-exception",
    "pause.signal.single-catch", "pause.published", "turn.write-failed.stays-paused",
    "run.paused.never-error", "resume.refusal.order", "resume.authority",
    "resume.response.schema", "resume.response.strict", "resume.consume.single-winner",
    "resume.consume.at-most-once", "cancel.distinct", "run.lifecycle.table",
    "run.cancel.finished", "input.bounded",
}
"""Every clause DBOS fails, as measured (a change in either direction is news)."""

PASSED = {"effect.at-most-once", "pause.checkpoint.bound", "lifecycle.states",
          "turn.resumable.earned", "durability.restart", "durability.token.reissue",
          "durability.commit-per-change", "multi.independent",
          "resume.continuation.recorded-turn", "gate.separate"}
"""Clauses DBOS keeps, some of which every agent framework fails (``effect.at-most-once``)."""

published = measured("DBOS")
adapter = adapters(DBOSAdapter, "sqlite")


def test_claims_what_dbos_documents(published: SuiteResult) -> None:
    assert published.header["claimed"] == ["cancel", "concurrency", "core", "durability",
                                           "multi-pause"]


def test_the_measured_failures_are_failed_verdicts(published: SuiteResult) -> None:
    assert having(published, Verdict.FAILED) == FAILED
    assert not having(published, Verdict.ERRORED)
    assert "4 of 4 racing resumes consumed the pause" in why(
        published, "resume.consume.single-winner")


def test_what_dbos_keeps_passes(published: SuiteResult) -> None:
    assert having(published, Verdict.PASSED) >= PASSED
    assert "a DBOS child workflow is started by its parent" in why(published,
                                                                    "cancel.propagates")


def test_racing_answers_are_all_accepted_and_the_step_runs_once(adapter: DBOSAdapter) -> None:
    (p,) = started(adapter, "r1", effect("a"), ask("approve"), effect("b")).pauses
    race = adapter.race_resume(RaceResumeArgs(requests=[answer(p, {"n": i})
                                                        for i in range(3)]))
    assert isinstance(race, Ok)
    assert [isinstance(r, Ok) and r.data.run.status == "done" for r in race.data.results] \
        == [True] * 3
    assert (count(adapter, "r1", "a"), count(adapter, "r1", "b")) == (1, 1)
    assert phase(adapter, p.interrupt_id) == "consumed"
    again = adapter.resume(answer(p))
    assert isinstance(again, Refused) and again.code == "pause_unknown"


def test_a_restart_resumes_without_running_a_recorded_step_again(
        adapter: DBOSAdapter) -> None:
    (p,) = started(adapter, "r1", effect("a"), ask("approve"), effect("b")).pauses
    restarted = adapter.crash_restart(CrashRestartArgs())
    assert isinstance(restarted, Ok) and [q.token for q in restarted.data.pauses] == [p.token]
    done = adapter.resume(answer(p))
    assert isinstance(done, Ok) and done.data.run.status == "done"
    assert (count(adapter, "r1", "a"), count(adapter, "r1", "b")) == (1, 1)


def test_dbos_refuses_a_pause_outside_a_workflow(adapter: DBOSAdapter) -> None:
    adapter.reset(ResetArgs(ttl_ms=60_000))
    res = adapter.start(StartArgs(run_id="r1", session_id="s", scope="x", script=[
        effect("a"), ask("approve", checkpoint="none"), effect("b"), end()]))
    assert isinstance(res, Refused) and res.code == "checkpoint_missing", res
    assert "must be called from within a workflow" in res.message
    assert (count(adapter, "r1", "a"), count(adapter, "r1", "b")) == (1, 0)


def test_nothing_reaches_the_network(adapter: DBOSAdapter,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    tried = no_network(monkeypatch)
    (p,) = started(adapter, "r1", ask("approve"), effect("b")).pauses
    done = adapter.resume(answer(p))
    assert isinstance(done, Ok) and done.data.run.status == "done"
    assert tried == []
