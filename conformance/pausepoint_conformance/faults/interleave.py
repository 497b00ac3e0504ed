"""Run-level interleavings of several servers on one store, forced deterministically.

The run level (``run.*`` clauses) is about what happens when several servers and restarters
act on one run at once.  Each :class:`~pausepoint_conformance.protocol.wire.Interleaving` is
one such situation -- the six failures of issue 8 among them -- played by :func:`play` with
several harnesses (each its own store handle and owner name, sharing the signer, the clock and
the outside world) on a fresh store, and observed as an
:class:`~pausepoint_conformance.protocol.wire.InterleaveData`.  :func:`problems` says what the
contract requires of each observation; the ``runlevel`` checks and ``tests/test_run_engine.py``
both use it.

The reference adapter's optional ``interleave`` operation calls :func:`play` with its own
harness class and store wrapper, so a broken variant of the reference is played, and caught,
the same way.

A hook is a function called with the call's arguments, ``before`` or ``after`` one facet method
(``"runs.get"``, ``"effects.start"``, ...), in one named thread only, the first time its
``match`` accepts the arguments.  Hooks wait on :class:`threading.Event` s that the test sets --
barriers, never sleeps; every wait is bounded only so that a broken interleaving fails instead
of hanging.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, cast

import attrs

from pausepoint.core import lifecycle as lc
from pausepoint.core.clause_ids import ClauseId
from pausepoint.core.clauses import ErrorCode
from pausepoint.core.errors import PausepointError
from pausepoint.core.ports import CheckpointStore, EffectJournal, Ledger, PayloadStore, RunStore
from pausepoint.core.registry import RECONCILE, Interaction
from pausepoint.core.tokens import KeyRing
from pausepoint.engine.clock import ManualClock
from pausepoint.engine.harness import DEFAULT_INTERACTIONS, Harness, MemoryWorld
from pausepoint.stores.base import StoreBundle
from pausepoint_conformance.faults.testbed import StoreSpec
from pausepoint_conformance.protocol.wire import InterleaveData, Interleaving

WAIT_S = 30.0
"""A bound on every wait: reached only when an interleaving broke (then the test fails)."""


def wait(event: threading.Event, what: str) -> None:
    assert event.wait(WAIT_S), f"timed out waiting for {what}"


@attrs.define
class Hook:
    op: str
    when: str  # "before" | "after"
    action: Callable[[tuple[Any, ...]], None]
    thread: str | None = None
    match: Callable[[tuple[Any, ...]], bool] = lambda _args: True
    fired: bool = False


class Hooks:
    """The hooks of one test; each fires at most once."""

    def __init__(self) -> None:
        self._hooks: list[Hook] = []
        self._lock = threading.Lock()

    def on(self, op: str, when: str, action: Callable[[tuple[Any, ...]], None], *,
           thread: str | None = None,
           match: Callable[[tuple[Any, ...]], bool] = lambda _args: True) -> Hook:
        hook = Hook(op, when, action, thread, match)
        with self._lock:
            self._hooks.append(hook)
        return hook

    def fire(self, op: str, when: str, args: tuple[Any, ...]) -> None:
        name = threading.current_thread().name
        with self._lock:
            due = [h for h in self._hooks if not h.fired and h.op == op and h.when == when
                   and h.thread in (None, name) and h.match(args)]
            for h in due:
                h.fired = True
        for h in due:
            h.action(args)


class _HookedFacet:
    def __init__(self, name: str, inner: Any, hooks: Hooks) -> None:
        self._name = name
        self._inner = inner
        self._hooks = hooks
        self.durable: bool = bool(inner.durable)

    def __getattr__(self, attr: str) -> Any:
        target = getattr(self._inner, attr)
        if attr.startswith("_") or not callable(target):
            return target
        op = f"{self._name}.{attr}"

        def call(*args: Any, **kwargs: Any) -> Any:
            every = (*args, *kwargs.values())
            self._hooks.fire(op, "before", every)
            out = target(*args, **kwargs)
            self._hooks.fire(op, "after", every)
            return out
        return call


class HookedBundle:
    """A store bundle whose every facet call passes through ``hooks``."""

    def __init__(self, inner: StoreBundle, hooks: Hooks) -> None:
        self.inner = inner
        self.durable = inner.durable
        self.ledger = cast(Ledger, _HookedFacet("ledger", inner.ledger, hooks))
        self.checkpoints = cast(CheckpointStore,
                                _HookedFacet("checkpoints", inner.checkpoints, hooks))
        self.payloads = cast(PayloadStore, _HookedFacet("payloads", inner.payloads, hooks))
        self.effects = cast(EffectJournal, _HookedFacet("effects", inner.effects, hooks))
        self.runs = cast(RunStore, _HookedFacet("runs", inner.runs, hooks))

    def close(self) -> None:
        self.inner.close()


class HeldWorld(MemoryWorld):
    """The outside world, where an effect named in :meth:`hold` stays in flight -- entered,
    not yet applied -- until the test lets it go."""

    def __init__(self) -> None:
        super().__init__()
        self._held: dict[str, tuple[threading.Event, threading.Event]] = {}
        self._seen: list[tuple[str, str]] = []

    def applied(self) -> list[tuple[str, str]]:
        """(run id, key) of every application, in order."""
        return list(self._seen)

    def hold(self, key: str) -> tuple[threading.Event, threading.Event]:
        """(entered, release) for the next application of ``key``."""
        pair = (threading.Event(), threading.Event())
        self._held[key] = pair
        return pair

    def apply(self, run_id: str, key: str) -> None:
        pair = self._held.pop(key, None)
        if pair is not None:
            entered, release = pair
            entered.set()
            wait(release, f"the release of effect {key!r}")
        self._seen.append((run_id, key))
        super().apply(run_id, key)


def in_thread(fn: Callable[[], Any], name: str) -> tuple[threading.Thread, list[Any]]:
    """Run ``fn`` in a thread named ``name``; the list receives its result or exception."""
    out: list[Any] = []

    def body() -> None:
        try:
            out.append(fn())
        except BaseException as exc:  # handed to the test to inspect
            out.append(exc)
    t = threading.Thread(target=body, name=name, daemon=True)
    t.start()
    return t, out


def reached_or_done(event: threading.Event, t: threading.Thread, what: str) -> None:
    """Wait until ``event`` is set or the thread ``t`` ended without reaching it."""
    for _ in range(int(WAIT_S / 0.01)):
        if event.wait(0.01) or not t.is_alive():
            return
    raise AssertionError(f"timed out waiting for {what}")


def joined(t: threading.Thread, out: Sequence[Any]) -> Any:
    t.join(WAIT_S)
    assert not t.is_alive(), f"thread {t.name} did not finish"
    assert len(out) == 1
    return out[0]


# -- the interleavings -------------------------------------------------------------------------

LEASE_MS = 30_000
"""The servers' lease: more than any interleaving moves the clock, except to let one run out."""
TTL_MS = 600_000
S: dict[str, str] = {"session_id": "session", "scope": "default"}


class Killed(BaseException):
    """The process is SIGKILLed here: nothing after this point of it runs."""


def _die(_args: tuple[Any, ...]) -> None:
    raise Killed()


def _key_is(suffix: str) -> Callable[[tuple[Any, ...]], bool]:
    return lambda args: str(args[1]).endswith(f":{suffix}")


def _hold(started: threading.Event, go: threading.Event,
          what: str) -> Callable[[tuple[Any, ...]], None]:
    def hold(_args: tuple[Any, ...]) -> None:
        started.set()
        wait(go, what)
    return hold


@attrs.define
class Servers:
    """The servers of one interleaving: ``server(name, hooks)`` opens one more on the store."""

    spec: StoreSpec
    harness_class: type[Harness] = Harness
    wrap: Callable[[StoreBundle], StoreBundle] = lambda b: b
    interactions: Sequence[Interaction] = DEFAULT_INTERACTIONS
    world: HeldWorld = attrs.Factory(HeldWorld)
    clock: ManualClock = attrs.Factory(lambda: ManualClock(0))
    ring: KeyRing = attrs.Factory(KeyRing.generate)
    opened: list[Harness] = attrs.Factory(list)
    _shared: StoreBundle | None = None

    def _bundle(self) -> StoreBundle:
        if self.spec.kind != "memory":
            return self.spec.open()
        if self._shared is None:  # servers in one process share the in-memory store
            self._shared = self.spec.open()
        return self._shared

    def __call__(self, name: str, hooks: Hooks | None = None) -> Harness:
        def open_bundle() -> StoreBundle:
            inner = self.wrap(self._bundle())
            return inner if hooks is None else cast(StoreBundle, HookedBundle(inner, hooks))
        h = self.harness_class(open_bundle=open_bundle, signer=self.ring, clock=self.clock,
                               world=self.world, ttl_ms=TTL_MS, interactions=self.interactions,
                               durable_restart=self.spec.kind != "memory", owner=name,
                               lease_ms=LEASE_MS)
        self.opened.append(h)
        return h

    def close(self) -> None:
        for h in self.opened:
            if not h.crashed and self.spec.kind != "memory":
                h.deployment.store.close()

    def observe(self, run_id: str = "r1", refusal: str | None = None,
                taken_over: bool = False) -> InterleaveData:
        h = self("observer")
        rows = h.service.ledger.by_run(run_id)
        keys = {str(k) for (r, k) in self.world.applied() if r == run_id}
        return InterleaveData(
            effects={k: self.world.count(run_id, k) for k in sorted(keys)},
            status=h.run_status(run_id),
            live_pauses=[r.claims.name for r in rows if r.state.phase in lc.LIVE],
            recoveries=sum(1 for r in rows if r.claims.name == RECONCILE.name),
            refusal=refusal, taken_over=taken_over)


def _refusal_of(out: object) -> str | None:
    if isinstance(out, PausepointError):
        return out.code.value
    if isinstance(out, BaseException):
        raise out
    return None


def _stale_continuation(server: Servers) -> InterleaveData:
    hooks = Hooks()
    a, b = server("a", hooks), server("b", hooks)
    r = a.start([{"op": "interrupt", "name": "ask"}, {"op": "interrupt", "name": "approve"},
                 {"op": "effect", "key": "pay"}, {"op": "end"}], run_id="r1", **S)
    consumed, stalled_seen, a_paused = (threading.Event() for _ in range(3))
    hooks.on("runs.replace", "before", _hold(consumed, stalled_seen, "the restart"),
             thread="A")
    hooks.on("payloads.get", "after", _hold(stalled_seen, a_paused, "A's next question"),
             thread="B", match=lambda args: str(args[0]).endswith("#answer"))
    ta, out_a = in_thread(lambda: a.resume(r.pauses[0].token, {"q": 1}, **S), "A")
    wait(consumed, "A to consume the answer")
    tb, out_b = in_thread(b.restart, "B")
    wait(stalled_seen, "the restart to find the run stalled")
    _refusal_of(joined(ta, out_a))
    a_paused.set()
    _refusal_of(joined(tb, out_b))
    return server.observe()


def _restart_beside_live(server: Servers) -> InterleaveData:
    hooks = Hooks()
    a, b = server("a", hooks), server("b")
    at_b, go = threading.Event(), threading.Event()
    hooks.on("effects.start", "before", _hold(at_b, go, "the restart"), thread="A",
             match=_key_is("b"))
    ta, out = in_thread(lambda: a.start([{"op": "effect", "key": "a"},
                                         {"op": "effect", "key": "b"}, {"op": "end"}],
                                        run_id="r1", **S), "A")
    wait(at_b, "A to reach effect b")
    taken = b.restart()
    go.set()
    _refusal_of(joined(ta, out))
    return server.observe(taken_over=bool(taken))


def _lease_taken_over(server: Servers) -> InterleaveData:
    hooks = Hooks()
    a, b = server("a", hooks), server("b")
    at_b, go = threading.Event(), threading.Event()
    hooks.on("effects.start", "before", _hold(at_b, go, "the take-over"), thread="A",
             match=_key_is("b"))
    ta, out = in_thread(lambda: a.start([{"op": "effect", "key": k} for k in "abc"]
                                        + [{"op": "end"}], run_id="r1", **S), "A")
    wait(at_b, "A to reach effect b")
    server.clock.advance(LEASE_MS + 1)
    taken = b.restart()
    go.set()
    _refusal_of(joined(ta, out))
    return server.observe(taken_over=bool(taken))


def _concurrent_restarts(server: Servers) -> InterleaveData:
    dying = Hooks()
    dying.on("effects.start", "before", _die, match=_key_is("b"))
    zero = server("zero", dying)
    try:
        zero.start([{"op": "effect", "key": "a"}, {"op": "effect", "key": "b"}, {"op": "end"}],
                   run_id="r1", **S)
    except Killed:
        zero.crash()
    server.clock.advance(LEASE_MS + 1)
    hooks = Hooks()
    one, two = server("one", hooks), server("two")
    at_b, go = threading.Event(), threading.Event()
    hooks.on("effects.start", "before", _hold(at_b, go, "the second restart"), thread="ONE",
             match=_key_is("b"))
    t1, out = in_thread(one.restart, "ONE")
    wait(at_b, "the first restarter to reach effect b")
    two.restart()
    go.set()
    _refusal_of(joined(t1, out))
    return server.observe()


def _cancel_in_flight(server: Servers) -> InterleaveData:
    a, b = server("a"), server("b")
    entered, release = server.world.hold("a")
    ta, out = in_thread(lambda: a.start([{"op": "effect", "key": "a"},
                                         {"op": "effect", "key": "pay"}, {"op": "end"}],
                                        run_id="r1", **S), "A")
    wait(entered, "effect a to be in flight")
    b.cancel("r1")
    release.set()
    _refusal_of(joined(ta, out))
    return server.observe()


def _cancel_finished(server: Servers) -> InterleaveData:
    hooks = Hooks()
    a, b = server("a"), server("b", hooks)
    entered, release = server.world.hold("a")
    read, go = threading.Event(), threading.Event()
    hooks.on("runs.get", "after", _hold(read, go, "A to finish the run"), thread="B",
             match=lambda args: args[0] == "r1")
    ta, out_a = in_thread(lambda: a.start([{"op": "effect", "key": "a"}, {"op": "end"}],
                                          run_id="r1", **S), "A")
    wait(entered, "effect a to be in flight")
    tb, out_b = in_thread(lambda: b.cancel("r1"), "B")
    wait(read, "the cancel to read the run")
    release.set()
    _refusal_of(joined(ta, out_a))
    go.set()
    return server.observe(refusal=_refusal_of(joined(tb, out_b)))


def _child_under_cancel(server: Servers) -> InterleaveData:
    hooks = Hooks()
    a, b = server("a"), server("b", hooks)
    a.start([{"op": "interrupt", "name": "ask"}], run_id="p", **S)
    read, go = threading.Event(), threading.Event()
    hooks.on("runs.get", "after", _hold(read, go, "the parent's cancel"), thread="B",
             match=lambda args: args[0] == "p")
    tb, out = in_thread(lambda: b.start([{"op": "effect", "key": "pay"}, {"op": "end"}],
                                        run_id="c", parent_run_id="p", **S), "B")
    wait(read, "the child's start to read its parent")
    a.cancel("p")
    go.set()
    return server.observe("c", refusal=_refusal_of(joined(tb, out)))


def _kill_opening_recovery(server: Servers) -> InterleaveData:
    first = server("a")
    first.start([{"op": "effect", "key": "e", "fault": "crash_after_apply"}, {"op": "end"}],
                run_id="r1", **S)
    hooks = Hooks()
    hooks.on("ledger.issue", "after", _die,
             match=lambda args: args[0].claims.name == RECONCILE.name)
    again = server("a", hooks)
    try:
        again.restart()
    except Killed:
        again.crash()
    server("a").restart()
    return server.observe()


def _store_blink(server: Servers) -> InterleaveData:
    hooks = Hooks()

    def fail(_args: tuple[Any, ...]) -> None:
        raise PausepointError(ErrorCode.STORE_UNAVAILABLE, "durability.commit-per-change",
                              "the store blinked")
    hooks.on("ledger.issue", "before", fail,
             match=lambda args: args[0].claims.checkpoint_id == "r1@1")
    h = server("a", hooks)
    r = h.start([{"op": "interrupt", "name": "ask"}, {"op": "interrupt", "name": "confirm"},
                 {"op": "effect", "key": "pay"}, {"op": "end"}], run_id="r1", **S)
    try:
        h.resume(r.pauses[0].token, {"q": 1}, **S)
    except PausepointError as err:
        if err.code != ErrorCode.STORE_UNAVAILABLE:
            raise
    h.restart()
    return server.observe()


def _stale_recovery(server: Servers) -> InterleaveData:
    hooks = Hooks()
    a, b = server("a", hooks), server("b")
    at_a, go = threading.Event(), threading.Event()
    hooks.on("effects.status", "before", _hold(at_a, go, "B's take-over"), thread="A",
             match=_key_is("a"))
    entered, release = server.world.hold("a")
    ta, out_a = in_thread(lambda: a.start([{"op": "effect", "key": "a"}, {"op": "end"}],
                                          run_id="r1", **S), "A")
    wait(at_a, "A to reach effect a")
    server.clock.advance(LEASE_MS + 1)
    tb, out_b = in_thread(b.restart, "B")
    wait(entered, "B's effect a to be in flight")
    go.set()
    _refusal_of(joined(ta, out_a))
    release.set()
    taken = joined(tb, out_b)
    _refusal_of(taken)
    return server.observe(taken_over=bool(taken))


def _cancel_opening_recovery(server: Servers) -> InterleaveData:
    zero = server("zero")
    zero.start([{"op": "effect", "key": "e", "fault": "crash_before_apply"}, {"op": "end"}],
               run_id="r1", **S)
    server.clock.advance(LEASE_MS + 1)
    hooks = Hooks()
    a, b = server("a", hooks), server("b")
    at_issue, go = threading.Event(), threading.Event()
    hooks.on("ledger.issue", "before", _hold(at_issue, go, "the cancel"), thread="A",
             match=lambda args: args[0].claims.name == RECONCILE.name)
    ta, out = in_thread(a.restart, "A")
    # an implementation that never opens the recovery pause goes on without stopping there
    reached_or_done(at_issue, ta, "A to issue the recovery pause")
    refusal = None
    try:
        b.cancel("r1")
    except PausepointError as err:  # the run ended first (no recovery pause stopped it)
        refusal = err.code.value
    go.set()
    _refusal_of(joined(ta, out))
    return server.observe(refusal=refusal)


SCENARIOS: dict[Interleaving, Callable[[Servers], InterleaveData]] = {
    Interleaving.STALE_CONTINUATION: _stale_continuation,
    Interleaving.RESTART_BESIDE_LIVE: _restart_beside_live,
    Interleaving.LEASE_TAKEN_OVER: _lease_taken_over,
    Interleaving.CONCURRENT_RESTARTS: _concurrent_restarts,
    Interleaving.CANCEL_IN_FLIGHT: _cancel_in_flight,
    Interleaving.CANCEL_FINISHED: _cancel_finished,
    Interleaving.CHILD_UNDER_CANCEL: _child_under_cancel,
    Interleaving.KILL_OPENING_RECOVERY: _kill_opening_recovery,
    Interleaving.STORE_BLINK: _store_blink,
    Interleaving.STALE_RECOVERY: _stale_recovery,
    Interleaving.CANCEL_OPENING_RECOVERY: _cancel_opening_recovery,
}


@contextmanager
def servers(spec: StoreSpec, **kw: Any) -> Iterator[Servers]:
    s = Servers(spec, **kw)
    try:
        yield s
    finally:
        s.close()


def play(scenario: Interleaving, spec: StoreSpec, **kw: Any) -> InterleaveData:
    """Play ``scenario`` on the (fresh) store ``spec`` with servers built from ``kw``
    (:class:`Servers`' fields: the harness class, a store wrapper, the interactions)."""
    with servers(spec, **kw) as s:
        return SCENARIOS[scenario](s)


# -- what the contract requires of each ----------------------------------------------------------

Expectation = tuple[ClauseId, str, Callable[[InterleaveData], bool]]
"""(clause id, what must hold, the predicate)."""

_ONCE_EACH = "every effect applied exactly once"

EXPECTED: dict[Interleaving, tuple[Expectation, ...]] = {
    Interleaving.STALE_CONTINUATION: (
        ("run.continuation.belongs-to-step", "nothing paid past the unanswered approval",
         lambda d: d.effects.get("pay", 0) == 0),
        ("run.continuation.belongs-to-step", "the approval still waits, the run paused",
         lambda d: d.live_pauses == ["approve"] and d.status == "paused"),
    ),
    Interleaving.RESTART_BESIDE_LIVE: (
        ("run.ownership.lease", "the restart left the run its live owner drives",
         lambda d: not d.taken_over),
        ("run.restart.concurrent", _ONCE_EACH + ", no recovery pause, the run done",
         lambda d: d.effects == {"a": 1, "b": 1} and d.recoveries == 0 and d.status == "done"),
    ),
    Interleaving.LEASE_TAKEN_OVER: (
        ("run.ownership.fencing", _ONCE_EACH + " although the old owner went on",
         lambda d: d.effects == {"a": 1, "b": 1, "c": 1}),
        ("run.ownership.fencing", "no recovery pause, the run done",
         lambda d: d.recoveries == 0 and d.status == "done"),
    ),
    Interleaving.CONCURRENT_RESTARTS: (
        ("run.restart.concurrent", _ONCE_EACH + ", no recovery pause, the run done",
         lambda d: d.effects == {"a": 1, "b": 1} and d.recoveries == 0 and d.status == "done"),
    ),
    Interleaving.CANCEL_IN_FLIGHT: (
        ("run.cancel.in-flight", "the effect in flight applied once, the next one never",
         lambda d: d.effects.get("a") == 1 and d.effects.get("pay", 0) == 0),
        ("run.cancel.in-flight", "the run stays cancelled", lambda d: d.status == "cancelled"),
    ),
    Interleaving.CANCEL_FINISHED: (
        ("run.cancel.finished", "the late cancel refused with invalid_transition",
         lambda d: d.refusal == ErrorCode.INVALID_TRANSITION.value),
        ("run.cancel.finished", "the run stays done", lambda d: d.status == "done"),
    ),
    Interleaving.CHILD_UNDER_CANCEL: (
        ("run.child.cancelling-parent", "the child never paid",
         lambda d: d.effects.get("pay", 0) == 0),
        ("run.child.cancelling-parent",
         "the start refused with pause_cancelled, or the child cancelled",
         lambda d: (d.refusal == ErrorCode.PAUSE_CANCELLED.value and d.status == "unknown")
         or (d.refusal is None and d.status == "cancelled")),
    ),
    Interleaving.KILL_OPENING_RECOVERY: (
        ("run.restart.concurrent", "one recovery pause, live, for the effect in doubt",
         lambda d: d.recoveries == 1 and d.live_pauses == [RECONCILE.name]),
        ("effect.unknown-outcome", "the effect in doubt not retried",
         lambda d: d.effects == {"e": 1}),
    ),
    Interleaving.STORE_BLINK: (
        ("run.store-failure.recoverable", "the run not ended in error; the restart asked on",
         lambda d: d.status == "paused" and d.live_pauses == ["confirm"]),
        ("run.store-failure.recoverable", "nothing paid yet",
         lambda d: d.effects.get("pay", 0) == 0),
    ),
    Interleaving.STALE_RECOVERY: (
        ("run.ownership.fencing",
         "the driver that lost the run opened no recovery pause for the new owner's effect",
         lambda d: d.recoveries == 0 and d.live_pauses == []),
        ("run.ownership.fencing", "the effect applied once by the new owner, the run done",
         lambda d: d.effects == {"a": 1} and d.status == "done" and d.taken_over),
    ),
    Interleaving.CANCEL_OPENING_RECOVERY: (
        ("run.cancel.in-flight",
         "no recovery pause after the cancel; the run cancelled, or ended first",
         lambda d: d.recoveries == 0 and d.live_pauses == [] and (
             d.status == "cancelled"
             or (d.status == "done" and d.refusal == ErrorCode.INVALID_TRANSITION.value))),
        ("effect.unknown-outcome", "the effect in doubt not retried",
         lambda d: d.effects == {}),
    ),
}


def problems(scenario: Interleaving, data: InterleaveData) -> list[tuple[ClauseId, str]]:
    """(clause id, what did not hold) for every expectation ``data`` breaks."""
    return [(cid, what) for cid, what, holds in EXPECTED[scenario] if not holds(data)]
