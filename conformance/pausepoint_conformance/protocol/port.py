"""The adapter port: how the suite drives an implementation.

An implementation under test is reached through an :class:`Adapter`.  In process, any object
with these methods will do (see :mod:`pausepoint_conformance.adapters.reference`); across a
language boundary, :class:`pausepoint_conformance.protocol.stdio.StdioAdapter` speaks the same
operations as newline-delimited JSON to a subprocess.

The operations of :data:`~pausepoint_conformance.protocol.wire.OPTIONAL_OPS` (``status``,
``rotate_key``, ``retire_key``, ``wiring``) are not part of :class:`Adapter`: an adapter offers
them by having the methods (:class:`StatusQuery`, :class:`KeyAdministration`,
:class:`WiringTrial`),
and :func:`optional_op` finds it.  An adapter without one -- or answering ``skipped`` -- gets
the checks that need it reported skipped, never passed.

Every method returns a :data:`~pausepoint_conformance.protocol.wire.Result`:
``Ok(data) | Refused(code) | Skipped(reason) | Errored(traceback)`` -- an adapter never
raises for something the implementation did; it reports it.
"""

from __future__ import annotations

import threading
import time
import traceback
from collections.abc import Callable, Sequence
from typing import Any, Protocol, TypeVar, runtime_checkable

from pausepoint_conformance.protocol.wire import (
    AdvanceClockArgs,
    CancelArgs,
    CancelData,
    ClockData,
    CountData,
    CrashRestartArgs,
    EffectCountArgs,
    Empty,
    Errored,
    HelloArgs,
    HelloData,
    InterleaveArgs,
    InterleaveData,
    KeyData,
    PauseStateArgs,
    PhaseData,
    RaceData,
    RaceResumeArgs,
    ReconcileArgs,
    ResetArgs,
    RestartData,
    Result,
    ResumeArgs,
    ResumeData,
    RetireKeyArgs,
    RotateKeyArgs,
    RunReport,
    StartArgs,
    StatusArgs,
    StatusData,
    WiringArgs,
    WiringData,
)

T = TypeVar("T")


@runtime_checkable
class Adapter(Protocol):
    """The operations the suite drives.  ``hello`` declares the implementation and the clause
    groups it claims; ``reset`` gives a fresh, empty instance (clock at 0) before every check
    and vector; ``close`` releases whatever the adapter holds."""

    def hello(self, args: HelloArgs) -> Result[HelloData]: ...

    def reset(self, args: ResetArgs) -> Result[Empty]: ...

    def start(self, args: StartArgs) -> Result[RunReport]: ...

    def resume(self, args: ResumeArgs) -> Result[ResumeData]: ...

    def cancel(self, args: CancelArgs) -> Result[CancelData]: ...

    def advance_clock(self, args: AdvanceClockArgs) -> Result[ClockData]: ...

    def crash_restart(self, args: CrashRestartArgs) -> Result[RestartData]: ...

    def reconcile(self, args: ReconcileArgs) -> Result[PhaseData]: ...

    def pause_state(self, args: PauseStateArgs) -> Result[PhaseData]: ...

    def effect_count(self, args: EffectCountArgs) -> Result[CountData]: ...

    def race_resume(self, args: RaceResumeArgs) -> Result[RaceData]: ...

    def close(self) -> None: ...


@runtime_checkable
class StatusQuery(Protocol):
    """Optional: the run's status as a person would be told it (``status.distinguishes``)."""

    def status(self, args: StatusArgs) -> Result[StatusData]: ...


@runtime_checkable
class KeyAdministration(Protocol):
    """Optional: rotate the signing key and retire drained keys (``token.rotation.drain``)."""

    def rotate_key(self, args: RotateKeyArgs) -> Result[KeyData]: ...

    def retire_key(self, args: RetireKeyArgs) -> Result[Empty]: ...


@runtime_checkable
class WiringTrial(Protocol):
    """Optional: wire a trial deployment and say which tools it offers the model
    (``wiring.consistent``, ``wiring.no-interaction-no-tool``)."""

    def wiring(self, args: WiringArgs) -> Result[WiringData]: ...


@runtime_checkable
class InterleaveTrial(Protocol):
    """Optional: play a run-level interleaving of several servers on a fresh store and report
    what it left (``run.*``)."""

    def interleave(self, args: InterleaveArgs) -> Result[InterleaveData]: ...


AdapterFactory = Callable[[], Adapter]


def optional_op(adapter: object, name: str) -> Callable[[Any], Any] | None:
    """The adapter's method for the optional operation ``name``, or None when it has none."""
    method = getattr(adapter, name, None)
    return method if callable(method) else None


def errored_from(exc: BaseException) -> Errored:
    """An ``errored`` result carrying ``exc``'s traceback."""
    return Errored(traceback="".join(traceback.format_exception(exc)))


def run_together(calls: Sequence[Callable[[Callable[[], None]], T]],
                 timeout: float = 60.0) -> list[T | Errored]:
    """Run each call in a thread of its own, as separate servers would (``race_resume``).
    Each call gets ``together``: calling it waits until every call has called it (at most 10 s,
    then it goes on alone), so that all of them do what follows at the same moment.  A call
    that raises, or has not returned within ``timeout`` seconds in all, is answered errored."""
    barrier = threading.Barrier(len(calls))

    def together() -> None:
        try:
            barrier.wait(timeout=10)
        except threading.BrokenBarrierError:
            pass

    results: list[T | Errored | None] = [None] * len(calls)

    def one(i: int) -> None:
        try:
            results[i] = calls[i](together)
        except Exception as exc:
            results[i] = errored_from(exc)

    threads = [threading.Thread(target=one, args=(i,), daemon=True) for i in range(len(calls))]
    for t in threads:
        t.start()
    deadline = time.monotonic() + timeout
    for t in threads:
        t.join(max(0.0, deadline - time.monotonic()))
    return [r if r is not None else Errored(traceback=f"the call did not return within "
                                                       f"{timeout:g} s")
            for r in results]
