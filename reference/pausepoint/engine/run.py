"""The run, its events, the pause signal, and the live run binding.

A run emits events from a closed vocabulary and ends with exactly one terminal event
(``run.events.vocabulary``, ``run.events.single-terminal``).  Reaching a pause point raises
:class:`InvocationPaused`, which derives from ``BaseException`` for the reason
``asyncio.CancelledError`` does: a pause is not a failure, and every ``except Exception`` between
the pause point and the runner would otherwise turn it into one (``pause.signal.base-exception``).
:meth:`Runner.invoke` is the one place that catches it (``pause.signal.single-catch``).
"""

from __future__ import annotations

import contextvars
import enum
from collections.abc import Callable
from typing import Any

from pausepoint.core.clauses import ErrorCode
from pausepoint.core.errors import PausepointError
from pausepoint.core.values import record


class EventKind(enum.StrEnum):
    THINKING = "thinking"
    TEXT_DELTA = "text_delta"
    TOOL_CALL = "tool_call"
    TOOL_RESULT = "tool_result"
    DONE = "done"
    ERROR = "error"
    CANCELLED = "cancelled"
    PAUSED = "paused"


_KINDS = frozenset(EventKind)
TERMINAL_EVENTS = frozenset({EventKind.DONE, EventKind.ERROR, EventKind.CANCELLED,
                             EventKind.PAUSED})


@record
class RunEvent:
    kind: EventKind
    data: Any = None


@record
class PendingInterrupt:
    """One pause as published: what was asked, and the token to answer it with."""

    name: str
    payload: Any
    token: str
    interrupt_id: str
    run_id: str
    session_id: str
    tool_call_id: str = ""
    expires_at: int = 0
    resumable: bool = False


class InvocationPaused(BaseException):
    """The run stopped at registered pause points.  Not an error (pause.signal.base-exception)."""

    def __init__(self, interrupts: tuple[PendingInterrupt, ...]) -> None:
        super().__init__(interrupts)
        self.interrupts = interrupts

    def __str__(self) -> str:  # built when asked for: a pause is raised on every ask
        names = ", ".join(i.name for i in self.interrupts)
        return f"the run paused at {names}"


class InvocationCancelled(BaseException):
    """The run was cancelled while it executed."""


@record
class RunIdentity:
    run_id: str
    root_run_id: str


_CURRENT: contextvars.ContextVar[RunIdentity | None] = contextvars.ContextVar(
    "pausepoint_run", default=None)


def current_run() -> RunIdentity | None:
    return _CURRENT.get()


@record
class PauseBinding:
    """Who a pause belongs to.  ``run_id`` and ``root_run_id`` come from the live run."""

    run_id: str
    root_run_id: str
    session_id: str
    thread_id: str
    scope: str
    parent_run_id: str = ""


def current_run_binding(*, session_id: str, thread_id: str, scope: str,
                        parent_run_id: str = "") -> PauseBinding:
    """Bind a pause to the active run (run.binding.live).  The run ids are copied from the
    run and cannot be passed in; outside a run this refuses with ``outside_run``."""
    identity = _CURRENT.get()
    if identity is None:
        raise PausepointError(
            ErrorCode.OUTSIDE_RUN, "run.binding.live",
            "current_run_binding() was called with no run active; call it from inside the run, "
            "where the runner has set the run's identity")
    return PauseBinding(run_id=identity.run_id, root_run_id=identity.root_run_id,
                        session_id=session_id, thread_id=thread_id, scope=scope,
                        parent_run_id=parent_run_id)


class _running:  # noqa: N801 -- named as the function it replaces (tests/broken use it)
    """The run's identity while a body runs.  A class, not a generator context manager: it is
    entered on every drive, and a generator's costs several calls more."""

    __slots__ = ("_identity", "_token")

    def __init__(self, identity: RunIdentity) -> None:
        self._identity = identity

    def __enter__(self) -> None:
        self._token = _CURRENT.set(self._identity)

    def __exit__(self, *exc: object) -> None:
        _CURRENT.reset(self._token)


Emit = Callable[[RunEvent], None]


class Runner:
    """Runs one invocation of a run and turns how it stopped into exactly one terminal event."""

    def invoke(self, identity: RunIdentity, body: Callable[[Emit], Any]) -> list[RunEvent]:
        events: list[RunEvent] = []

        def emit(event: RunEvent) -> None:
            if not isinstance(event, RunEvent) or event.kind not in _KINDS:
                raise ValueError(f"not an event of the run vocabulary: {event!r}")
            if event.kind in TERMINAL_EVENTS:
                raise ValueError("terminal events are the runner's to emit")
            events.append(event)

        with _running(identity):
            try:
                result = body(emit)
            except InvocationPaused as paused:  # the one catch (pause.signal.single-catch)
                events.append(RunEvent(EventKind.PAUSED, paused.interrupts))
            except InvocationCancelled:
                events.append(RunEvent(EventKind.CANCELLED))
            except Exception as exc:
                events.append(RunEvent(EventKind.ERROR, f"{type(exc).__name__}: {exc}"))
            else:
                events.append(RunEvent(EventKind.DONE, result))
        return events
