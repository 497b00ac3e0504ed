"""Tests of the scripted harness on the reference services, in memory and on SQLite: several
pauses per run, effects across pauses, crashes and restarts, unknown outcomes, cancellation
of run trees, status.

``check_reconciled_effect_not_rerun`` is also run by ``test_broken_variants.py`` on a harness
whose effect loop ignores the journal's finished status.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from doubles import refused
from pausepoint.core.clauses import ErrorCode, clause
from pausepoint.core.ports import EffectStatus
from pausepoint.core.registry import RECONCILE
from pausepoint.engine.clock import ManualClock
from pausepoint.engine.harness import Harness, Report
from pausepoint.engine.run import TERMINAL_EVENTS
from pausepoint.engine.service import RunView

E = ErrorCode
S = {"session_id": "session", "scope": "default"}

HarnessFactory = Callable[[], Harness]


def open_harness(kind: str, tmp_path: Path, cls: type[Harness] = Harness) -> Harness:
    url = "memory:" if kind == "memory" else f"sqlite:{tmp_path / 'harness.db'}"
    h = Harness.open(url, clock=ManualClock(0), ttl_ms=60_000)
    if cls is not Harness:
        h.__class__ = cls  # same state, one method swapped (the broken variants)
        h.deployment = h._compose(h.deployment.store)
    return h


@pytest.fixture(params=["memory", "sqlite"])
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def h(kind: str, tmp_path: Path) -> Iterator[Harness]:
    harness = open_harness(kind, tmp_path)
    yield harness
    if not harness.crashed:
        harness.deployment.store.close()


def one_terminal(report: Report) -> Report:
    """`run.events.single-terminal`: an invocation that ran reports one terminal event, last."""
    if report.events:
        assert [e in TERMINAL_EVENTS for e in report.events].count(True) == 1, report
        assert report.events[-1] in TERMINAL_EVENTS
        if "paused" in report.events:  # `run.paused.never-error`
            assert "error" not in report.events
    return report


def test_a_published_pause_carries_everything(h: Harness) -> None:
    """`pause.published`, `run.binding.live`: name, payload, interrupt id, tool call id,
    expiry, token and resumable flag; the run ids come from the live run."""
    r = one_terminal(h.start([{"op": "interrupt", "name": "pay", "payload": {"amount": 5},
                               "tool_call_id": "call-1"}, {"op": "end"}], run_id="r1"))
    assert r.status == "paused" and r.events == ("paused",)
    (p,) = r.pauses
    assert (p.name, p.payload, p.tool_call_id, p.run_id, p.session_id) == (
        "pay", {"amount": 5}, "call-1", "r1", "session")
    assert p.expires_at == 60_000 and p.resumable and p.token
    rec = h.pause_record(p.interrupt_id)
    assert rec is not None and rec.token == p.token
    assert (rec.claims.run_id, rec.claims.root_run_id) == ("r1", "r1")
    assert h.service.signer.verify(p.token) == rec.claims


@pytest.mark.parametrize("order", [(0, 1), (1, 0)])
def test_several_pauses_in_one_run_are_answered_independently(h: Harness,
                                                               order: tuple[int, int]) -> None:
    """`multi.independent`: one step asks two questions; answering one leaves the other as it
    was and the run paused; the run continues once both are answered."""
    r = h.start([{"op": "interrupt", "names": ["approve", "confirm"],
                  "payload": {"what": "a or b"}},
                 {"op": "effect", "key": "e"}, {"op": "end"}], run_id="r1")
    assert [p.name for p in r.pauses] == ["approve", "confirm"]
    assert all(p.resumable for p in r.pauses)
    first, second = (r.pauses[i] for i in order)
    untouched = h.pause_record(second.interrupt_id)
    out = one_terminal(h.resume(first.token, {"approved": True}, **S))
    assert out.status == "paused" and h.effect_count("r1", "e") == 0
    assert h.pause_record(second.interrupt_id) == untouched
    assert [p.interrupt_id for p in out.pauses] == [second.interrupt_id]
    assert h.service.status("r1") == RunView.SAFELY_SUSPENDED
    out = one_terminal(h.resume(second.token, {"approved": False}, **S))
    assert out.status == "done" and h.effect_count("r1", "e") == 1


def test_effects_run_once_across_resume_replay_and_refusals(h: Harness) -> None:
    """`effect.at-most-once`, `effect.refusal.no-effect`, `replay.same-response`,
    `resume.continuation.recorded-turn`: the effect before the pause is not run again by the
    resume; a refused resume runs nothing; a replay runs nothing and reports the first
    result; a different response is a conflict."""
    r = h.start([{"op": "effect", "key": "a"}, {"op": "interrupt", "name": "ask"},
                 {"op": "effect", "key": "b"}, {"op": "end"}], run_id="r1")
    (p,) = r.pauses
    assert (h.effect_count("r1", "a"), h.effect_count("r1", "b")) == (1, 0)
    err = refused(h.resume, p.token, {"x": 1}, session_id="session", scope="elsewhere")
    assert err.code == E.SCOPE_MISMATCH
    assert (h.effect_count("r1", "a"), h.effect_count("r1", "b")) == (1, 0)
    first = one_terminal(h.resume(p.token, {"x": 1}, **S))
    assert first.status == "done" and not first.replayed
    assert (h.effect_count("r1", "a"), h.effect_count("r1", "b")) == (1, 1)
    again = h.resume(p.token, {"x": 1}, **S)
    assert again.replayed and again.status == "done" and again.events == first.events
    err = refused(h.resume, p.token, {"x": 2}, **S)
    assert (err.code, err.clause) == (E.RESPONSE_CONFLICT,
                                      clause("replay.different-response.conflict"))
    assert (h.effect_count("r1", "a"), h.effect_count("r1", "b")) == (1, 1)


def test_cancel_propagates_through_the_run_tree(h: Harness) -> None:
    """`cancel.propagates`, `cancel.distinct`, `run.binding.live`: cancelling the parent
    cancels the live pauses of its child and grandchild; their tokens are refused with
    pause_cancelled; no new child can start under it; a sibling tree is untouched."""
    ask = [{"op": "interrupt", "name": "ask"}, {"op": "end"}]
    parent = h.start(ask, run_id="p")
    child = h.start(ask, run_id="c", parent_run_id="p")
    grand = h.start(ask, run_id="g", parent_run_id="c")
    other = h.start(ask, run_id="o")
    rec = h.pause_record(grand.pauses[0].interrupt_id)
    assert rec is not None and rec.claims.root_run_id == "p"
    h.cancel("p")
    for report in (parent, child, grand):
        (pause,) = report.pauses
        assert h.pause_state(pause.interrupt_id) == "cancelled"
        assert h.run_status(report.run_id) == "cancelled"
        err = refused(h.resume, pause.token, {}, **S)
        assert (err.code, err.clause) == (E.PAUSE_CANCELLED, clause("cancel.distinct"))
    assert refused(h.start, ask, run_id="c2", parent_run_id="p").code == E.PAUSE_CANCELLED
    assert h.pause_state(other.pauses[0].interrupt_id) == "resumable"
    assert h.resume(other.pauses[0].token, {}, **S).status == "done"


def test_a_pause_survives_crash_and_restart(h: Harness) -> None:
    """`durability.restart`, `durability.token.reissue`: after a crash the same token is
    published again; it is answered once; a replay after another crash runs nothing."""
    r = h.start([{"op": "effect", "key": "a"}, {"op": "interrupt", "name": "ask"},
                 {"op": "effect", "key": "b"}, {"op": "end"}], run_id="r1")
    (p,) = r.pauses
    before = h.pause_record(p.interrupt_id)
    store = h.deployment.store
    h.crash()
    err = refused(h.resume, p.token, {}, **S)
    assert err.code == E.STORE_UNAVAILABLE
    assert h.restart() == []  # a paused run is not re-executed
    assert h.durable_restart == (h.deployment.store is not store)
    assert h.published("r1") == (p,)
    assert h.pause_record(p.interrupt_id) == before
    assert h.resume(p.token, {"v": 1}, **S).status == "done"
    h.crash()
    h.restart()
    again = h.resume(p.token, {"v": 1}, **S)
    assert again.replayed and again.status == "done"
    assert (h.effect_count("r1", "a"), h.effect_count("r1", "b")) == (1, 1)


def check_reconciled_effect_not_rerun(h: Harness) -> None:
    """`effect.unknown-outcome`, `effect.reconcile`, `resume.unknown-outcome.blocks`,
    `effect.at-most-once`: an effect applied just before a crash is in doubt after restart; a
    recovery pause in unknown_outcome is opened instead of a retry; resuming it is refused
    until it is reconciled; reconciled as applied and resumed, the effect is not run again."""
    r = h.start([{"op": "effect", "key": "e", "fault": "crash_after_apply"},
                 {"op": "interrupt", "name": "ask"}, {"op": "end"}], run_id="r1")
    assert r.status == "stopped" and h.crashed and h.effect_count("r1", "e") == 1
    (recovered,) = h.restart()
    one_terminal(recovered)
    (rp,) = recovered.pauses
    assert rp.name == RECONCILE.name and not rp.resumable
    assert h.pause_state(rp.interrupt_id) == "unknown_outcome"
    assert h.service.status("r1") == RunView.WAITING_UNKNOWN_OUTCOME
    assert h.effect_count("r1", "e") == 1, "an effect in doubt was retried"
    err = refused(h.resume, rp.token, {}, **S)
    assert (err.code, err.clause) == (E.OUTCOME_UNKNOWN, clause("resume.unknown-outcome.blocks"))
    h.reconcile(rp.interrupt_id, "applied")
    out = one_terminal(h.resume(rp.token, {}, **S))
    assert h.effect_count("r1", "e") == 1, "a reconciled effect ran again after the resume"
    assert out.status == "paused" and [p.name for p in out.pauses] == ["ask"]
    done = one_terminal(h.resume(out.pauses[0].token, {}, **S))
    assert done.status == "done" and h.effect_count("r1", "e") == 1


def test_an_applied_effect_in_doubt_is_not_run_again(h: Harness) -> None:
    check_reconciled_effect_not_rerun(h)


@pytest.mark.parametrize(("resolution", "count"), [("not_applied", 1), ("compensated", 0)])
def test_an_effect_in_doubt_that_did_not_apply(h: Harness, resolution: str, count: int) -> None:
    """`effect.reconcile`, `effect.at-most-once`: crashed before applying, reconciled as not
    applied it runs exactly once; compensated, it is skipped."""
    h.start([{"op": "effect", "key": "e", "fault": "crash_before_apply"}, {"op": "end"}],
            run_id="r1")
    assert h.effect_count("r1", "e") == 0
    (recovered,) = h.restart()
    (rp,) = recovered.pauses
    h.reconcile(rp.interrupt_id, resolution)
    assert one_terminal(h.resume(rp.token, {}, **S)).status == "done"
    assert h.effect_count("r1", "e") == count
    assert refused(h.reconcile, rp.interrupt_id, "applied").code == E.PAUSE_CONSUMED
    assert refused(h.reconcile, rp.interrupt_id, "maybe").code == E.INVALID_TRANSITION


def test_a_crash_while_continuing_after_a_resume(h: Harness) -> None:
    """`durability.restart`, `effect.unknown-outcome`: the resume consumed the pause, then the
    process died inside the next effect; the resume reports the stop (on both stores alike),
    restart opens a recovery pause, and the consumed pause is not answered twice."""
    r = h.start([{"op": "interrupt", "name": "ask"},
                 {"op": "effect", "key": "e", "fault": "crash_before_apply"}, {"op": "end"}],
                run_id="r1")
    (p,) = r.pauses
    out = h.resume(p.token, {"go": 1}, **S)
    assert out.status == "stopped" and h.crashed
    (recovered,) = h.restart()
    assert [q.name for q in recovered.pauses] == [RECONCILE.name]
    assert h.pause_state(p.interrupt_id) == "consumed"
    assert h.resume(p.token, {"go": 1}, **S).replayed
    assert refused(h.resume, p.token, {"go": 2}, **S).code == E.RESPONSE_CONFLICT
    assert h.effect_count("r1", "e") == 0


def test_a_failed_turn_write_leaves_the_run_partially_complete(h: Harness) -> None:
    """`turn.write-failed.stays-paused`, `status.distinguishes`: a pause whose turn was not
    recorded is published with resumable false, the run is partially complete, and resuming
    is refused with not_resumable."""
    r = h.start([{"op": "interrupt", "name": "ask", "checkpoint_write": "fail"}], run_id="r1")
    (p,) = r.pauses
    assert not p.resumable and h.pause_state(p.interrupt_id) == "paused"
    assert h.service.status("r1") == RunView.PARTIALLY_COMPLETE
    assert refused(h.resume, p.token, {}, **S).code == E.NOT_RESUMABLE


def test_status_through_a_run(h: Harness) -> None:
    """`status.distinguishes`: safely suspended while waiting, done at the end, cancelled."""
    r = h.start([{"op": "interrupt", "name": "ask"}, {"op": "end"}], run_id="r1")
    assert h.service.status("r1") == RunView.SAFELY_SUSPENDED
    h.resume(r.pauses[0].token, {}, **S)
    assert h.service.status("r1") == RunView.DONE
    h.start([{"op": "interrupt", "name": "ask"}], run_id="r2")
    h.cancel("r2")
    assert h.service.status("r2") == RunView.CANCELLED


def test_expiry_through_the_harness(h: Harness) -> None:
    """`expiry.transition`, `resume.expiry`: expire_due takes the due pauses; their tokens are
    refused with pause_expired and the run never continues."""
    r = h.start([{"op": "interrupt", "name": "ask"}, {"op": "effect", "key": "e"}],
                run_id="r1")
    (p,) = r.pauses
    assert isinstance(h.clock, ManualClock)
    h.clock.advance(p.expires_at - 1)
    assert h.expire_due() == []
    h.clock.advance(1)
    assert h.expire_due() == [p.interrupt_id]
    assert refused(h.resume, p.token, {}, **S).code == E.PAUSE_EXPIRED
    assert h.effect_count("r1", "e") == 0 and h.published("r1") == ()


class JournalWatchingWorld:
    """The outside world, noting the journal's status of each effect at the moment it is
    applied."""

    def __init__(self) -> None:
        self.harness: Harness | None = None
        self.seen: list[tuple[str, str, object]] = []
        self.counts: dict[tuple[str, str], int] = {}

    def apply(self, run_id: str, key: str) -> None:
        assert self.harness is not None
        journal = self.harness.service.effects
        (entry,) = [k for k in journal.open_entries(run_id) if k.endswith(f":{key}")]
        self.seen.append((run_id, key, journal.status(run_id, entry)))
        self.counts[(run_id, key)] = self.counts.get((run_id, key), 0) + 1

    def count(self, run_id: str, key: str) -> int:
        return self.counts.get((run_id, key), 0)


@pytest.mark.parametrize("url_kind", ["memory", "sqlite"])
def test_every_effect_is_bracketed_by_the_journal(url_kind: str, tmp_path: Path) -> None:
    """`effect.journal.bracket`: each effect is journalled started before it runs (the world
    sees a started entry when it is applied) and finished after it returns (no entry is left
    open once the run has moved on)."""
    world = JournalWatchingWorld()
    url = "memory:" if url_kind == "memory" else f"sqlite:{tmp_path / 'b.db'}"
    h = Harness.open(url, clock=ManualClock(0), world=world)
    world.harness = h
    r = h.start([{"op": "effect", "key": "a"}, {"op": "interrupt", "name": "ask"},
                 {"op": "effect", "key": "b"}, {"op": "end"}], run_id="r1")
    h.resume(r.pauses[0].token, {}, **S)
    assert world.seen == [("r1", "a", EffectStatus.STARTED), ("r1", "b", EffectStatus.STARTED)]
    journal = h.service.effects
    assert journal.open_entries("r1") == []
    assert [journal.status("r1", k) for k in ("0:a", "2:b")] == [EffectStatus.FINISHED] * 2
    h.deployment.store.close()


def test_a_run_that_fails_ends_in_error_and_is_not_run_again(h: Harness) -> None:
    """`run.events.single-terminal`, `status.distinguishes`: a run whose script fails ends in
    one error event and is recorded as ended in error -- not reported as still running, and
    not executed again by a restart."""
    r = one_terminal(h.start([{"op": "effect", "key": "a"}, {"op": "bogus"}], run_id="r1"))
    assert r.events[-1] == "error" and r.status == "error"
    assert h.service.status("r1") == RunView.ENDED
    h.crash()
    assert h.restart() == []
    assert h.effect_count("r1", "a") == 1 and h.run_status("r1") == "error"


def test_a_gate_pauses_only_when_it_asks(h: Harness) -> None:
    """`gate.separate`: allow and deny decide at once (no pause, no ledger row); ask takes an
    ordinary approve pause, and the run goes on past the gate once it is answered."""
    def gate(amount: float) -> dict[str, Any]:
        return {"op": "gate", "amount": amount, "allow_up_to": 10, "deny_over": 100}

    rep = h.start([gate(10), {"op": "effect", "key": "b"}, {"op": "end"}], run_id="allow", **S)
    assert (rep.status, rep.pauses, rep.events[-1:]) == ("done", (), ("done",))
    assert h.effect_count("allow", "b") == 1
    rep = h.start([gate(101), {"op": "effect", "key": "b"}, {"op": "end"}], run_id="deny", **S)
    assert (rep.status, rep.pauses, rep.events[-1:]) == ("done", (), ("done",))
    assert h.effect_count("deny", "b") == 0
    assert not h.service.ledger.by_run("allow") and not h.service.ledger.by_run("deny")
    rep = h.start([gate(100), {"op": "effect", "key": "b"}, {"op": "end"}], run_id="ask", **S)
    (p,) = rep.pauses
    assert (rep.status, p.name, p.payload["amount"], p.resumable) == ("paused", "approve", 100,
                                                                      True)
    assert h.service.status("ask") == RunView.SAFELY_SUSPENDED
    assert h.effect_count("ask", "b") == 0
    rep = h.resume(p.token, {"approved": True}, **S)
    assert rep.status == "done" and h.effect_count("ask", "b") == 1


def test_handlers_around_a_pause_point_run_once_across_replays(kind: str, tmp_path: Path) -> None:
    """The protocol's ``handlers`` row: the handlers run on the way out of the pause point only.
    The harness runs scripts on the Engine, which replays the agent from the top on every
    continuation; a replay must not apply a handler's key again -- after a pause and its answer
    the cleanup's count is 1 and the catch-all's 0, and a catch-all that swallowed a refused
    ask before a later pause counts 1 after that pause is answered."""
    h = open_harness(kind, tmp_path)
    around = {"handlers": {"catch_all": "k1", "cleanup": "k2"}}
    paused = h.start([{"op": "interrupt", "name": "approve", "payload": {"amount": 5}, **around},
                      {"op": "effect", "key": "pay"}], run_id="r1")
    done = h.resume(paused.pauses[0].token, {"approved": True}, session_id="session",
                    scope="default")
    assert done.status == "done"
    assert (h.effect_count("r1", "k2"), h.effect_count("r1", "k1"),
            h.effect_count("r1", "pay")) == (1, 0, 1)

    refused = {"op": "interrupt", "name": "unregistered-name", "payload": {}, **around}
    paused = h.start([refused, {"op": "interrupt", "name": "approve", "payload": {"amount": 5}},
                      {"op": "effect", "key": "pay"}], run_id="r2")
    assert (h.effect_count("r2", "k1"), h.effect_count("r2", "k2")) == (1, 1)
    done = h.resume(paused.pauses[0].token, {"approved": True}, session_id="session",
                    scope="default")
    assert done.status == "done"
    assert (h.effect_count("r2", "k1"), h.effect_count("r2", "k2"),
            h.effect_count("r2", "pay")) == (1, 1, 1)
