"""The trace sink port: what the service and the harness really did, one event per operation.

The service and the harness call ``trace.emit(op, **fields)`` once per operation they perform
(a run started, a step executed, an effect applied, a turn recorded, a ledger row read for a
resume and the resume's commit, an expiry, a cancel, a crash, a restart, a reconcile).  The
default sink, :data:`NO_TRACE`, does nothing.  :class:`MemoryTrace` keeps the events (and
renders them as NDJSON); :class:`FileTrace` appends each event to a file as it happens, so a
process killed mid-way leaves every event up to its death.

``atomic()`` brackets a store operation and the event that reports it, so that concurrent
resume servers sharing one sink report their reads and commits in the order the store saw
them (a no-op for :data:`NO_TRACE`).

The events are the implementation's own vocabulary (run and interrupt ids, response digests,
the clock's reading); :mod:`pausepoint_conformance.modelcheck.impltrace` translates them into a
``pausepoint-trace/1`` trace of the model's actions and validates it against the model.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final, Protocol

from pausepoint.core.ports import Clock

EVENTS_FORMAT: Final[str] = "pausepoint-events/1"


class TraceSink(Protocol):
    def emit(self, op: str, **fields: Any) -> None: ...

    def atomic(self) -> contextlib.AbstractContextManager[object]: ...


class NoTrace:
    """Tracing off."""

    def emit(self, op: str, **fields: Any) -> None:
        return None

    def atomic(self) -> contextlib.AbstractContextManager[object]:
        return contextlib.nullcontext()


NO_TRACE: Final[NoTrace] = NoTrace()


class MemoryTrace:
    """Keeps every event as a dict: ``op``, the fields, ``now`` (the clock's reading) and
    ``thread`` (which thread did it -- the kernel's thread id, unique among the live threads
    of every process: concurrent resume servers, threads or processes, are told apart by
    it)."""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self.events: list[dict[str, Any]] = []
        self._lock = threading.RLock()

    def emit(self, op: str, **fields: Any) -> None:
        with self._lock:
            self._keep({"op": op, **fields, "now": self.clock.now(),
                        "thread": threading.get_native_id()})

    def _keep(self, event: dict[str, Any]) -> None:
        self.events.append(event)

    @contextlib.contextmanager
    def atomic(self) -> Iterator[object]:
        with self._lock:
            yield self

    def dumps(self) -> str:
        head = json.dumps({"format": EVENTS_FORMAT}) + "\n"
        return head + "".join(json.dumps(e, separators=(",", ":"), default=str) + "\n"
                              for e in self.events)


class FileTrace(MemoryTrace):
    """Like :class:`MemoryTrace`, and each event is appended to ``path`` (NDJSON, flushed)
    as it happens -- by several processes, in turn or at once, if they share the path:
    ``atomic()`` then also holds an exclusive lock on ``<path>.lock``, so processes racing on
    one store report their reads and commits in the order the store saw them."""

    def __init__(self, clock: Clock, path: str | Path) -> None:
        super().__init__(clock)
        self.path = Path(path)
        self._lockfile = self.path.with_name(self.path.name + ".lock")
        with self._file_lock():
            if not self.path.exists():
                self.path.write_text(json.dumps({"format": EVENTS_FORMAT}) + "\n",
                                     encoding="utf-8")

    @contextlib.contextmanager
    def _file_lock(self) -> Iterator[None]:
        with self._lockfile.open("a") as f:
            fcntl.flock(f, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(f, fcntl.LOCK_UN)

    @contextlib.contextmanager
    def atomic(self) -> Iterator[object]:
        with self._lock, self._file_lock():
            yield self

    def _keep(self, event: dict[str, Any]) -> None:
        super()._keep(event)
        with self.path.open("a", encoding="utf-8") as f:
            f.write(json.dumps(event, separators=(",", ":"), default=str) + "\n")
            f.flush()


class Elapsed:
    """A clock's readings counted from ``origin``: a trace of a run on the wall clock starts
    near 0 (the model's clock is counted in ticks of a millisecond from 0)."""

    def __init__(self, clock: Clock, origin: int) -> None:
        self.clock = clock
        self.origin = origin

    def now(self) -> int:
        return self.clock.now() - self.origin


def load_events(text: str) -> list[dict[str, Any]]:
    """The events of an NDJSON event log (its header line checked and dropped)."""
    lines = [json.loads(x) for x in text.splitlines() if x.strip()]
    if not lines or lines[0].get("format") != EVENTS_FORMAT:
        raise ValueError(f"not a {EVENTS_FORMAT} event log")
    return lines[1:]
