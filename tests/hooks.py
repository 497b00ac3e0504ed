"""Deterministic interleavings for run-level tests: a store bundle whose facet calls pass
through hooks, and a world whose effects can be held in flight.

A hook is a function called with the call's arguments, ``before`` or ``after`` one facet method
(``"runs.get"``, ``"effects.start"``, ...), in one named thread only, the first time its
``match`` accepts the arguments.  Hooks wait on :class:`threading.Event` s that the test sets --
barriers, never sleeps; every wait is bounded only so that a broken interleaving fails instead
of hanging.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any, cast

import attrs

from pausepoint.core.ports import CheckpointStore, EffectJournal, Ledger, PayloadStore, RunStore
from pausepoint.engine.harness import MemoryWorld
from pausepoint.stores.base import StoreBundle

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


def joined(t: threading.Thread, out: Sequence[Any]) -> Any:
    t.join(WAIT_S)
    assert not t.is_alive(), f"thread {t.name} did not finish"
    assert len(out) == 1
    return out[0]
