"""The run level with several servers on one store: the six failures of issue 8, each forced
by a deterministic interleaving (hooks on store calls, effects held in flight -- no sleeps),
on SQLite and on PostgreSQL.

Every server is a :class:`Harness` with its own store handle (its own connections), its own
name (``owner``), and the shared signer, clock and outside world.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from hooks import HeldWorld, HookedBundle, Hooks, in_thread, joined, wait
from pausepoint.core.clauses import ErrorCode
from pausepoint.core.errors import PausepointError
from pausepoint.core.registry import RECONCILE
from pausepoint.core.tokens import KeyRing
from pausepoint.engine.clock import ManualClock
from pausepoint.engine.harness import DEFAULT_INTERACTIONS, Harness
from pausepoint_conformance.faults.testbed import StoreSpec, drop, fresh_sqlite
from pg import pg_spec

S = {"session_id": "session", "scope": "default"}
LEASE_MS = 30_000
"""More than any test moves the clock, except where a lease is meant to run out."""

Server = Callable[..., Harness]


class Killed(BaseException):
    """The process is SIGKILLed here: nothing after this point of it runs."""


@pytest.fixture(params=["sqlite", "postgres"])
def spec(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[StoreSpec]:
    s = fresh_sqlite(tmp_path) if request.param == "sqlite" else pg_spec("pp_run")
    yield s
    drop(s)


@pytest.fixture
def world() -> HeldWorld:
    return HeldWorld()


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(0)


@pytest.fixture
def server(spec: StoreSpec, world: HeldWorld, clock: ManualClock) -> Iterator[Server]:
    """``server(name, hooks=None)``: one more server on the test's store."""
    ring = KeyRing.generate()
    opened: list[Harness] = []

    def make(name: str, hooks: Hooks | None = None) -> Harness:
        def open_bundle() -> Any:
            inner = spec.open()
            return inner if hooks is None else HookedBundle(inner, hooks)
        h = Harness(open_bundle=open_bundle, signer=ring, clock=clock, world=world,
                    ttl_ms=600_000, interactions=DEFAULT_INTERACTIONS, durable_restart=True,
                    owner=name, lease_ms=LEASE_MS)
        opened.append(h)
        return h
    yield make
    for h in opened:
        if not h.crashed:
            h.deployment.store.close()


def live_reconciles(h: Harness, run_id: str) -> list[str]:
    return [p.interrupt_id for p in h.published(run_id) if p.name == RECONCILE.name]


def every_reconcile(h: Harness, run_id: str) -> list[str]:
    return [r.interrupt_id for r in h.service.ledger.by_run(run_id)
            if r.claims.name == RECONCILE.name]


# -- 1. approval bypass by a stale restart continuation ------------------------------------


def test_a_stale_restart_continuation_never_passes_an_unanswered_question(
        server: Server) -> None:
    """`run.continuation.belongs-to-step`: server A consumed the first answer; a restart on B
    found the run stalled on that step and read its answer; then A continued the run to the
    approval question.  B's continuation belongs to a step the run has left: it must be
    dropped, not applied to the new step (which would pay without approval)."""
    hooks = Hooks()
    a, b = server("a", hooks), server("b", hooks)
    r = a.start([{"op": "interrupt", "name": "ask"}, {"op": "interrupt", "name": "approve"},
                 {"op": "effect", "key": "pay"}, {"op": "end"}], run_id="r1", **S)
    (ask,) = r.pauses
    consumed, stalled_seen, a_paused = (threading.Event() for _ in range(3))

    def a_holds(_args: tuple[Any, ...]) -> None:
        consumed.set()
        wait(stalled_seen, "the restart to find the run stalled")
    hooks.on("runs.replace", "before", a_holds, thread="A")

    def b_holds(_args: tuple[Any, ...]) -> None:
        stalled_seen.set()
        wait(a_paused, "server A to reach the approval")
    hooks.on("payloads.get", "after", b_holds, thread="B",
             match=lambda args: str(args[0]).endswith("#answer"))

    ta, out_a = in_thread(lambda: a.resume(ask.token, {"q": 1}, **S), "A")
    wait(consumed, "server A to consume the first answer")
    tb, out_b = in_thread(b.restart, "B")
    wait(stalled_seen, "the restart to find the run stalled")
    rep = joined(ta, out_a)
    assert not isinstance(rep, BaseException), rep
    assert rep.status == "paused" and [p.name for p in rep.pauses] == ["approve"]
    a_paused.set()
    got = joined(tb, out_b)
    assert not isinstance(got, BaseException), got
    assert a.effect_count("r1", "pay") == 0, "paid past an unanswered approval"
    (approve,) = a.published("r1")
    assert approve.name == "approve" and a.pause_state(approve.interrupt_id) == "resumable"
    assert a.run_status("r1") == "paused"
    assert a.resume(approve.token, {"ok": True}, **S).status == "done"
    assert a.effect_count("r1", "pay") == 1


# -- 2. doubled effects: restart beside a live server, two restarts at once -----------------


def test_a_restart_leaves_a_run_a_live_server_drives(server: Server) -> None:
    """`run.ownership.lease`: a restart on B does not take over a run whose lease A holds."""
    hooks = Hooks()
    a, b = server("a", hooks), server("b")
    at_b, go = threading.Event(), threading.Event()

    def a_holds(_args: tuple[Any, ...]) -> None:
        at_b.set()
        wait(go, "the restart beside it")
    hooks.on("effects.start", "before", a_holds, thread="A",
             match=lambda args: str(args[1]).endswith(":b"))
    ta, out = in_thread(lambda: a.start([{"op": "effect", "key": "a"},
                                         {"op": "effect", "key": "b"}, {"op": "end"}],
                                        run_id="r1", **S), "A")
    wait(at_b, "server A to reach effect b")
    b.restart()
    go.set()
    rep = joined(ta, out)
    assert not isinstance(rep, BaseException), rep
    assert (a.effect_count("r1", "a"), a.effect_count("r1", "b")) == (1, 1)
    assert a.run_status("r1") == "done" and every_reconcile(a, "r1") == []


def test_a_server_whose_lease_was_taken_over_is_fenced(server: Server,
                                                       clock: ManualClock) -> None:
    """`run.ownership.fencing`: A's lease ran out while A was still alive (a long pause of the
    process); B's restart took the run over.  A's next write carries a stale epoch and is
    refused: the effect runs once and the run is not written back by A."""
    hooks = Hooks()
    a, b = server("a", hooks), server("b")
    at_b, go = threading.Event(), threading.Event()

    def a_holds(_args: tuple[Any, ...]) -> None:
        at_b.set()
        wait(go, "the take-over")
    hooks.on("effects.start", "before", a_holds, thread="A",
             match=lambda args: str(args[1]).endswith(":b"))
    ta, out = in_thread(lambda: a.start([{"op": "effect", "key": "a"},
                                         {"op": "effect", "key": "b"},
                                         {"op": "effect", "key": "c"}, {"op": "end"}],
                                        run_id="r1", **S), "A")
    wait(at_b, "server A to reach effect b")
    clock.advance(LEASE_MS + 1)
    (taken,) = b.restart()
    assert taken.status == "done"
    go.set()
    joined(ta, out)
    assert [a.effect_count("r1", k) for k in "abc"] == [1, 1, 1]
    assert a.run_status("r1") == "done" and every_reconcile(a, "r1") == []


def test_two_restarts_at_once_drive_a_run_once(server: Server, clock: ManualClock) -> None:
    """`run.restart.concurrent`: the process driving a run died; two restarters find it at the
    same time; one owns it, the other leaves it: every effect runs once."""
    dying = Hooks()

    def die(_args: tuple[Any, ...]) -> None:
        raise Killed()
    dying.on("effects.start", "before", die, match=lambda args: str(args[1]).endswith(":b"))
    h0 = server("zero", dying)
    with pytest.raises(Killed):
        h0.start([{"op": "effect", "key": "a"}, {"op": "effect", "key": "b"}, {"op": "end"}],
                 run_id="r1", **S)
    h0.crash()
    clock.advance(LEASE_MS + 1)
    hooks = Hooks()
    one, two = server("one", hooks), server("two")
    at_b, go = threading.Event(), threading.Event()

    def one_holds(_args: tuple[Any, ...]) -> None:
        at_b.set()
        wait(go, "the second restart")
    hooks.on("effects.start", "before", one_holds, thread="ONE",
             match=lambda args: str(args[1]).endswith(":b"))
    t1, out = in_thread(one.restart, "ONE")
    wait(at_b, "the first restarter to reach effect b")
    two.restart()
    go.set()
    joined(t1, out)
    assert (one.effect_count("r1", "a"), one.effect_count("r1", "b")) == (1, 1)
    assert one.run_status("r1") == "done" and every_reconcile(one, "r1") == []


# -- 3. cancel against an effect in flight, cancel of a finished run ------------------------


def test_a_cancel_during_an_effect_in_flight_is_not_undone(server: Server,
                                                           world: HeldWorld) -> None:
    """`run.cancel.in-flight`: B cancels while A's effect is in flight.  The in-flight effect
    ends and is journalled, but A sees the cancel before its next effect: it never pays and
    never writes the run back to running or done."""
    a, b = server("a"), server("b")
    entered, release = world.hold("a")
    ta, out = in_thread(lambda: a.start([{"op": "effect", "key": "a"},
                                         {"op": "effect", "key": "pay"}, {"op": "end"}],
                                        run_id="r1", **S), "A")
    wait(entered, "effect a to be in flight")
    b.cancel("r1")
    release.set()
    joined(ta, out)
    assert a.effect_count("r1", "a") == 1 and a.effect_count("r1", "pay") == 0
    assert a.run_status("r1") == "cancelled"
    assert b.run_status("r1") == "cancelled"


def test_a_cancel_never_relabels_a_finished_run(server: Server, world: HeldWorld) -> None:
    """`run.cancel.finished`: B read the run running, then A finished it; B's cancel is
    refused with invalid_transition and leaves the run done."""
    hooks = Hooks()
    a, b = server("a"), server("b", hooks)
    entered, release = world.hold("a")
    read, go = threading.Event(), threading.Event()

    def b_holds(_args: tuple[Any, ...]) -> None:
        read.set()
        wait(go, "server A to finish the run")
    hooks.on("runs.get", "after", b_holds, thread="B", match=lambda args: args[0] == "r1")
    ta, out_a = in_thread(lambda: a.start([{"op": "effect", "key": "a"}, {"op": "end"}],
                                          run_id="r1", **S), "A")
    wait(entered, "effect a to be in flight")
    tb, out_b = in_thread(lambda: b.cancel("r1"), "B")
    wait(read, "the cancel to read the run")
    release.set()
    assert joined(ta, out_a).status == "done"
    go.set()
    err = joined(tb, out_b)
    assert isinstance(err, PausepointError), err
    assert err.code == ErrorCode.INVALID_TRANSITION
    assert a.run_status("r1") == "done"


# -- 4. a child started while its parent is cancelled ----------------------------------------


def test_a_child_started_while_its_parent_is_cancelled_does_not_escape(server: Server) -> None:
    """`run.child.cancelling-parent`: B starts a child while A cancels its parent; either the
    start is refused with pause_cancelled or the child is cancelled -- it never pays."""
    hooks = Hooks()
    a, b = server("a"), server("b", hooks)
    a.start([{"op": "interrupt", "name": "ask"}], run_id="p", **S)
    read, go = threading.Event(), threading.Event()

    def b_holds(_args: tuple[Any, ...]) -> None:
        read.set()
        wait(go, "the parent's cancel")
    hooks.on("runs.get", "after", b_holds, thread="B", match=lambda args: args[0] == "p")
    tb, out = in_thread(lambda: b.start([{"op": "effect", "key": "pay"}, {"op": "end"}],
                                        run_id="c", parent_run_id="p", **S), "B")
    wait(read, "the child's start to read its parent")
    a.cancel("p")
    go.set()
    got = joined(tb, out)
    if isinstance(got, PausepointError):
        assert got.code == ErrorCode.PAUSE_CANCELLED
    else:
        assert not isinstance(got, BaseException), got
    assert a.effect_count("c", "pay") == 0, "a child of a cancelled parent paid"
    assert a.run_status("c") in ("unknown", "cancelled")


# -- 5. a kill between opening a recovery pause and marking it unknown ----------------------


def test_a_kill_while_opening_a_recovery_pause_leaves_no_orphan(server: Server) -> None:
    """`effect.unknown-outcome`, `run.restart.concurrent`: the restart died after issuing the
    recovery pause and before marking it unknown; the next restart finishes that same pause
    instead of opening a second one beside a live orphan."""
    h = server("a")
    r = h.start([{"op": "effect", "key": "e", "fault": "crash_after_apply"}, {"op": "end"}],
                 run_id="r1", **S)
    assert r.status == "stopped" and h.crashed
    hooks = Hooks()

    def die(_args: tuple[Any, ...]) -> None:
        raise Killed()
    hooks.on("ledger.issue", "after", die, match=lambda args: args[0].claims.name == RECONCILE.name)
    again = server("a", hooks)
    with pytest.raises(Killed):
        again.restart()
    again.crash()
    third = server("a")
    (rep,) = third.restart()
    assert [p.name for p in rep.pauses] == [RECONCILE.name]
    assert every_reconcile(third, "r1") == live_reconciles(third, "r1")
    (rid,) = live_reconciles(third, "r1")
    assert third.pause_state(rid) == "unknown_outcome"
    assert third.restart() == [] or live_reconciles(third, "r1") == [rid]
    assert every_reconcile(third, "r1") == [rid]


# -- 6. a brief store failure while a continuation asks its next question --------------------


def test_a_brief_store_failure_while_asking_leaves_the_run_to_restart(server: Server) -> None:
    """`run.store-failure.recoverable`: the store failed once while the continuation took its
    next pause.  That is no error of the agent: the run is not ended in ``error``, and a
    restart asks the question."""
    hooks = Hooks()

    def fail(_args: tuple[Any, ...]) -> None:
        raise PausepointError(ErrorCode.STORE_UNAVAILABLE, "durability.commit-per-change",
                              "the store blinked")
    hooks.on("ledger.issue", "before", fail,
             match=lambda args: args[0].claims.checkpoint_id == "r1@1")
    h = server("a", hooks)
    r = h.start([{"op": "interrupt", "name": "ask"}, {"op": "interrupt", "name": "confirm"},
                 {"op": "effect", "key": "pay"}, {"op": "end"}], run_id="r1", **S)
    (ask,) = r.pauses
    try:
        h.resume(ask.token, {"q": 1}, **S)
    except PausepointError as err:
        assert err.code == ErrorCode.STORE_UNAVAILABLE
    assert h.run_status("r1") != "error"
    (rep,) = h.restart()
    assert [p.name for p in rep.pauses] == ["confirm"]
    assert h.resume(rep.pauses[0].token, {"ok": 1}, **S).status == "done"
    assert h.effect_count("r1", "pay") == 1
    state = json.loads(h.service.runs.get("r1").state)  # type: ignore[union-attr]
    assert state["pc"] == 3  # ended at its "end" step
