"""The run level with several servers on one store: the six failures of issue 8 and the orphan
recovery the run-level race found (eleven interleavings), each forced deterministically (hooks
on store calls, effects held in flight -- no sleeps) by
:mod:`pausepoint_conformance.faults.interleave`, on SQLite, PostgreSQL and in memory.

Each interleaving is played twice: on the reference, where the contract's expectations hold,
and on the deliberately broken variant in ``tests/broken/`` that removes the guard it needs
(``run.continuation.belongs-to-step``, ``run.ownership.lease``, ``run.ownership.fencing``,
``run.restart.concurrent``, ``run.cancel.in-flight``, ``run.cancel.finished``,
``run.child.cancelling-parent``, ``run.store-failure.recoverable``), where they must not: the
test fails with the guard removed and passes with it, on every store.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, cast

import pytest
from _registry import HERE, load

from pausepoint.core.clauses import ErrorCode
from pausepoint.core.errors import PausepointError
from pausepoint.core.ports import EffectJournal
from pausepoint.engine.harness import Harness
from pausepoint.engine.owned import Lost
from pausepoint.engine.service import PauseService
from pausepoint.stores.base import PortBundle, StoreBundle
from pausepoint_conformance.faults.interleave import (
    EXPECTED,
    LEASE_MS,
    Hooks,
    Killed,
    S,
    _die,
    _hold,
    in_thread,
    joined,
    play,
    problems,
    reached_or_done,
    servers,
    wait,
)
from pausepoint_conformance.faults.testbed import StoreSpec
from pausepoint_conformance.protocol.wire import InterleaveData, Interleaving

GUARD_REMOVED: dict[Interleaving, tuple[str, ...]] = {
    Interleaving.STALE_CONTINUATION: ("stale_continuation",),
    Interleaving.RESTART_BESIDE_LIVE: ("lease_ignored",),
    Interleaving.LEASE_TAKEN_OVER: ("unfenced",),
    # two restarters are kept apart by the lease and, should the lease fail, by the fencing:
    # only with both removed does the effect run twice
    Interleaving.CONCURRENT_RESTARTS: ("lease_ignored", "unfenced"),
    Interleaving.CANCEL_IN_FLIGHT: ("blind_run_writes",),
    Interleaving.CANCEL_FINISHED: ("blind_run_writes",),
    Interleaving.CHILD_UNDER_CANCEL: ("child_escapes",),
    Interleaving.KILL_OPENING_RECOVERY: ("orphan_recovery",),
    Interleaving.STORE_BLINK: ("store_failure_is_error",),
    Interleaving.STALE_RECOVERY: ("unfenced_recovery",),
    Interleaving.CANCEL_OPENING_RECOVERY: ("unfenced_recovery",),
}
"""The broken implementations (``tests/broken/<name>.py``) that remove each one's guard,
combined: the harness class of the one that swaps it, the store wrappers of all."""


@pytest.mark.parametrize("scenario", list(Interleaving))
def test_the_run_level_holds_in_every_interleaving(scenario: Interleaving,
                                                   any_store_spec: StoreSpec) -> None:
    data = play(scenario, any_store_spec)
    assert problems(scenario, data) == [], data


@pytest.mark.parametrize("scenario", list(Interleaving))
def test_each_interleaving_fails_with_its_guard_removed(scenario: Interleaving,
                                                        any_store_spec: StoreSpec) -> None:
    broken = [load(HERE / f"{name}.py").make() for name in GUARD_REMOVED[scenario]]
    harness_class = next((b.harness_class for b in broken if b.harness_class is not Harness),
                         Harness)

    def wrap(bundle: StoreBundle) -> StoreBundle:
        for b in broken:
            bundle = b.wrap_bundle(bundle)
        return bundle
    data = play(scenario, any_store_spec, harness_class=harness_class, wrap=wrap)
    assert problems(scenario, data), (f"{GUARD_REMOVED[scenario]} went unnoticed", data)


def test_every_interleaving_has_expectations_and_a_broken_variant() -> None:
    assert set(EXPECTED) == set(Interleaving) == set(GUARD_REMOVED)
    assert all(EXPECTED.values())


# == two bugs the TLA+ model found at the run level ===========================================


def test_a_grandchild_under_a_done_child_of_a_cancelled_run_is_refused(
        any_store_spec: StoreSpec) -> None:
    """run.child.cancelling-parent: the parent p is cancelled; its child c had ended done by
    itself (and stays so); a grandchild started under c is under a cancelled ancestor, so it is
    refused like a child of p, and runs nothing."""
    with servers(any_store_spec) as server:
        h = server("a")
        h.start([{"op": "interrupt", "name": "ask"}], run_id="p", **S)
        assert h.start([{"op": "end"}], run_id="c", parent_run_id="p", **S).status == "done"
        h.cancel("p")
        assert h.run_status("c") == "done"
        with pytest.raises(PausepointError) as refused:
            h.start([{"op": "effect", "key": "pay"}, {"op": "end"}], run_id="g",
                    parent_run_id="c", **S)
        assert refused.value.code == ErrorCode.PAUSE_CANCELLED
        assert h.run_status("g") == "unknown" and server.world.count("g", "pay") == 0


def test_a_pause_during_a_cancel_under_way_writes_nothing(any_store_spec: StoreSpec) -> None:
    """run.cancel.in-flight: a cancel took the run over (cancelling) and stopped there; the
    driver it fenced goes on to ask its question -- the pause is refused in the ledger's insert
    itself, so no pause of the run exists, live or cancelled, and the run asks nothing."""
    with servers(any_store_spec) as server:
        hooks = Hooks()
        a, b = server("a", hooks), server("b", hooks)
        at_ask, go = threading.Event(), threading.Event()
        hooks.on("ledger.issue", "before", _hold(at_ask, go, "the cancel"), thread="A")
        hooks.on("runs.replace", "after", _die, thread="B")  # the canceller dies, cancelling
        ta, out = in_thread(lambda: a.start([{"op": "interrupt", "name": "ask"}],
                                            run_id="r1", **S), "A")
        wait(at_ask, "A to issue its question")
        tb, out_b = in_thread(lambda: b.cancel("r1"), "B")
        assert isinstance(joined(tb, out_b), Killed)
        go.set()
        joined(ta, out)
        assert server("observer").run_status("r1") == "cancelling"
        assert list(server("observer").service.ledger.by_run("r1")) == []


# == an effect that outlasts its lease ===========================================================


class LeaseBlindJournal:
    """BROKEN (the guard removed): the journal's start checks the driver's epoch only, not that
    its lease is still live."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.durable = inner.durable

    def start(self, run_id: str, key: str, epoch: int, now: int | None) -> bool:
        return bool(self.inner.start(run_id, key, epoch, None))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def lease_blind(bundle: StoreBundle) -> StoreBundle:
    return PortBundle(ledger=bundle.ledger, checkpoints=bundle.checkpoints,
                      payloads=bundle.payloads, runs=bundle.runs, durable=bundle.durable,
                      effects=cast(EffectJournal, LeaseBlindJournal(bundle.effects)))


def _driver_stalled_past_its_lease(
        spec: StoreSpec, wrap: Callable[[StoreBundle], StoreBundle] = lambda b: b,
) -> tuple[InterleaveData, object]:
    """Server A stalls right before its effect until its lease ran out -- nobody took the run
    over yet -- then starts it.  Restarter B takes the run over meanwhile (with A's effect in
    flight, if A started it) and drives it; an operator settles any recovery pause B opened by
    looking at the world (where A's effect has not landed yet), as the contract tells them to.
    Returns the observation and what A's start ended with."""
    with servers(spec, wrap=wrap) as server:
        hooks = Hooks()
        a, b = server("a", hooks), server("b")
        at_pay, go = threading.Event(), threading.Event()
        # A stalls after it read the journal, before it reads its clock for the start
        hooks.on("effects.status", "after", _hold(at_pay, go, "A's stall"), thread="A")
        entered, release = server.world.hold("pay")
        ta, out = in_thread(lambda: a.start([{"op": "effect", "key": "pay"}, {"op": "end"}],
                                            run_id="r1", **S), "A")
        wait(at_pay, "A to reach its effect")
        server.clock.advance(LEASE_MS)  # A's lease runs out (lease_until <= now)
        go.set()
        reached_or_done(entered, ta, "A to enter its effect or stop")
        if not entered.is_set():
            release.set()  # A stopped before its effect: hold nobody else's
        taken = b.restart()
        for p in b.published("r1"):  # the operator: reconcile by the world, then go on
            b.reconcile(p.interrupt_id,
                        "applied" if server.world.count("r1", "pay") else "not_applied")
            b.resume(p.token, {}, **S)
        release.set()
        a_out = joined(ta, out)
        return server.observe(taken_over=bool(taken)), a_out


def test_a_driver_whose_lease_ran_out_starts_no_effect(any_store_spec: StoreSpec) -> None:
    """run.ownership.fencing: A's lease ran out before anyone took the run over; its journal
    start is refused (the lease is checked in the conditional insert, by the driver's clock),
    so A stops -- nothing applied, nothing written -- and restarter B takes the run over and
    applies the effect exactly once, with no recovery pause (no effect was in doubt)."""
    data, a_out = _driver_stalled_past_its_lease(any_store_spec)
    assert not isinstance(a_out, BaseException), a_out
    assert data.taken_over and data.effects == {"pay": 1}, data
    assert data.recoveries == 0 and data.status == "done", data


def test_a_driver_whose_lease_ran_out_is_refused_with_a_typed_code(
        any_store_spec: StoreSpec) -> None:
    """run.ownership.fencing: the refusal itself -- the journal's start under an epoch whose
    lease ran out writes nothing; the driver stops as Lost, with ``invalid_transition``."""
    with servers(any_store_spec) as server:
        a = server("a")
        a.start([{"op": "interrupt", "name": "ask"}], run_id="r1", **S)
        paused = a.service.runs.get("r1")
        assert paused is not None
        owned = a.owned.take(paused, a.owned.continuation(True))
        assert owned is not None and owned.lease_until == server.clock.now() + LEASE_MS
        server.clock.advance(LEASE_MS - 1)
        assert a.owned.begin_effect(owned, "0:live")  # the lease is live: started
        server.clock.advance(1)
        assert not a.owned.begin_effect(owned, "0:late")
        assert a.service.effects.status("r1", "0:late") is None
        with pytest.raises(Lost) as lost:
            a.owned.lost("r1", owned.epoch)
        assert lost.value.refusal.code is ErrorCode.INVALID_TRANSITION
        assert lost.value.refusal.clause == "run.ownership.fencing"
        assert "lease" in str(lost.value)


def test_a_lease_blind_journal_lets_an_effect_outlast_its_lease(
        any_store_spec: StoreSpec) -> None:
    """The guard removed (the journal's start checks the epoch only): A starts its effect after
    its lease ran out, B takes over and opens a recovery pause beside the effect in flight, the
    operator finds nothing in the world yet and reconciles it not applied -- the effect runs
    twice."""
    data, _a_out = _driver_stalled_past_its_lease(any_store_spec, lease_blind)
    assert data.recoveries == 1 and data.effects == {"pay": 2}, data


# == a dead canceller ============================================================================


def _dead_canceller(spec: StoreSpec) -> dict[str, Any]:
    """Run p (asks, then pays) has a child c (asks, then pays), both paused.  Canceller B
    cancels p's question, takes p over for its cancel (p is ``cancelling``) and dies there,
    before its child or its end.  While B's lease is live a restart leaves the cancel to B;
    once it ran out, restarter C finishes it.  The person then answers p's question anyway."""
    with servers(spec) as server:
        hooks = Hooks()
        a, b, c = server("a"), server("b", hooks), server("c")
        p = a.start([{"op": "interrupt", "name": "ask"}, {"op": "effect", "key": "pay"},
                     {"op": "end"}], run_id="p", **S)
        a.start([{"op": "interrupt", "name": "ask"}, {"op": "effect", "key": "pay"},
                 {"op": "end"}], run_id="c", parent_run_id="p", **S)
        hooks.on("runs.replace", "after", _die, thread="B")  # the canceller dies, cancelling
        tb, out = in_thread(lambda: b.cancel("p"), "B")
        assert isinstance(joined(tb, out), Killed)
        seen: dict[str, Any] = {"after_death": (a.run_status("p"), a.run_status("c"))}
        c.restart()
        seen["beside_live_canceller"] = a.run_status("p")
        server.clock.advance(LEASE_MS)  # B's lease as canceller runs out
        finished = c.restart()
        seen["finished"] = sorted(r.run_id for r in finished)
        seen["status"] = {r: a.run_status(r) for r in ("p", "c")}
        seen["live_pauses"] = [r.interrupt_id for r in a.service.ledger.outstanding()]
        try:
            a.resume(p.pauses[0].token, {}, **S)
            seen["late_answer"] = "accepted"
        except PausepointError as exc:
            seen["late_answer"] = exc.code.value
        seen["effects"] = {r: server.world.count(r, "pay") for r in ("p", "c")}
        return seen


def test_a_restart_finishes_the_cancel_of_a_dead_canceller(any_store_spec: StoreSpec) -> None:
    """`run.ownership.lease`, `cancel.propagates`: the canceller died with the run cancelling;
    a restart leaves it alone while the canceller's lease is live, then takes it over and
    finishes the cancel: the run and its child end cancelled, no pause is left to answer, the
    late answer is refused ``pause_cancelled``, nothing is paid."""
    seen = _dead_canceller(any_store_spec)
    assert seen["after_death"] == ("cancelling", "paused")
    assert seen["beside_live_canceller"] == "cancelling"
    assert seen["finished"] == ["c", "p"]
    assert seen["status"] == {"p": "cancelled", "c": "cancelled"}
    assert seen["live_pauses"] == [] and seen["late_answer"] == "pause_cancelled"
    assert seen["effects"] == {"p": 0, "c": 0}


def test_a_restart_that_skips_cancelling_runs_leaves_the_cancel_undone(
        any_store_spec: StoreSpec, monkeypatch: pytest.MonkeyPatch) -> None:
    """The guard removed (a restart that skips cancelling runs): the run stays cancelling
    forever, its child paused with its question live."""
    monkeypatch.setattr(PauseService, "finish_cancels", lambda *_args: [])
    seen = _dead_canceller(any_store_spec)
    assert seen["status"] == {"p": "cancelling", "c": "paused"}
    assert seen["live_pauses"] == ["c/0/0"]  # the child's question is still answerable
