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

**An event and its write, all or nothing.**  An event appended after its write is lost when
the process dies between the two; one appended before it reports a write that may never have
happened.  So an event reporting a durable write is written *tentatively* just before the
write commits and *confirmed* just after: ``unit()`` brackets a unit of work (the service's
:meth:`~pausepoint.engine.service.PauseService.unit_of_work` opens one with the store's): the
events emitted inside are kept until its ``prepare()`` -- called right before the commit --
writes them, each marked ``"unit": ID``, and the unit's normal end appends ``{"op":
"confirmed", "unit": ID}`` (an exception after ``prepare()`` appends ``"aborted"``; one before
it writes nothing).  ``writing(op, **fields)`` does the same for one write outside a store's
unit (the world's change, a lone conditional update): the event is written before the write
and confirmed after it (``abort()`` when the write did not take place).  A unit whose
confirmation never came -- its process was killed between the commit and the confirmation,
or inside the commit -- is *in doubt*: the validator tries it both ways, all of it or none of
it, and what the log shows afterwards (the restart's reads) must fit one of them.

The events are the implementation's own vocabulary (run and interrupt ids, response digests,
the clock's reading); :mod:`pausepoint_conformance.modelcheck.impltrace` translates them into a
``pausepoint-trace/1`` trace of the model's actions and validates it against the model.
"""

from __future__ import annotations

import contextlib
import fcntl
import itertools
import json
import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Final, Protocol

from pausepoint.core.ports import Clock

EVENTS_FORMAT: Final[str] = "pausepoint-events/1"


class Unit(Protocol):
    """An open unit of the trace (:meth:`TraceSink.unit`, :meth:`TraceSink.writing`)."""

    def prepare(self) -> None:
        """Right before the commit: write the unit's events, tentatively."""

    def abort(self) -> None:
        """The write did not take place: its events never happened."""


class TraceSink(Protocol):
    def emit(self, op: str, **fields: Any) -> None: ...

    def atomic(self) -> contextlib.AbstractContextManager[object]: ...

    def unit(self) -> contextlib.AbstractContextManager[Unit]: ...

    def writing(self, op: str, **fields: Any) -> contextlib.AbstractContextManager[Unit]: ...

    def commit_so_far(self, commit: Callable[[], None]) -> None: ...


class _NoUnit:
    def prepare(self) -> None:
        return None

    def abort(self) -> None:
        return None


NO_UNIT: Final[_NoUnit] = _NoUnit()


_NOTHING: Final = contextlib.nullcontext()
_NO_UNIT_OPEN: Final[contextlib.nullcontext[Unit]] = contextlib.nullcontext(NO_UNIT)
"""Tracing off opens these, shared: a ``nullcontext`` holds no state, so it is reentrant."""


class NoTrace:
    """Tracing off."""

    def emit(self, op: str, **fields: Any) -> None:
        return None

    def atomic(self) -> contextlib.AbstractContextManager[object]:
        return _NOTHING

    def unit(self) -> contextlib.AbstractContextManager[Unit]:
        return _NO_UNIT_OPEN

    def writing(self, op: str, **fields: Any) -> contextlib.AbstractContextManager[Unit]:
        return _NO_UNIT_OPEN

    def commit_so_far(self, commit: Callable[[], None]) -> None:
        commit()


NO_TRACE: Final[NoTrace] = NoTrace()


_UNIT_IDS = itertools.count(1)


class _OpenUnit:
    """One thread's open unit of a :class:`MemoryTrace`: its events until ``prepare()``."""

    def __init__(self, sink: MemoryTrace) -> None:
        self.sink = sink
        self.id = f"{os.getpid()}.{threading.get_native_id()}.{next(_UNIT_IDS)}"
        self.events: list[dict[str, Any]] = []
        self.prepared = False
        self.aborted = False

    def prepare(self) -> None:
        if not self.prepared:
            self.prepared = True
            if self.events:
                self.sink._keep_all([{**e, "unit": self.id} for e in self.events])

    def abort(self) -> None:
        self.aborted = True

    def split(self, commit: Callable[[], None]) -> None:
        """The store commits what the unit wrote so far and the unit goes on: its events so
        far are prepared and confirmed around that commit, the rest are a new unit's."""
        self.prepare()
        commit()
        self.end(True)
        self.id = f"{os.getpid()}.{threading.get_native_id()}.{next(_UNIT_IDS)}"
        self.events, self.prepared, self.aborted = [], False, False

    def end(self, ok: bool) -> None:
        if not self.events or (not self.prepared and not ok):
            return  # nothing to report, or nothing of it was ever written
        if not self.prepared:  # a unit no store committed (no prepare): written as it ends
            self.prepare()
        self.sink._keep_all([{"op": "confirmed" if ok and not self.aborted else "aborted",
                              "unit": self.id, **self.sink._stamp()}])


class _Joined:
    """An event of :meth:`MemoryTrace.writing` inside an open unit: the unit's, unless
    aborted."""

    def __init__(self, unit: _OpenUnit, event: dict[str, Any]) -> None:
        self.unit, self.event = unit, event
        unit.events.append(event)

    def prepare(self) -> None:
        return None

    def abort(self) -> None:
        if any(e is self.event for e in self.unit.events):
            self.unit.events = [e for e in self.unit.events if e is not self.event]


class MemoryTrace:
    """Keeps every event as a dict: ``op``, the fields, ``now`` (the clock's reading) and
    ``thread`` (which thread did it -- the kernel's thread id, unique among the live threads
    of every process: concurrent resume servers, threads or processes, are told apart by
    it)."""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self.events: list[dict[str, Any]] = []
        self._lock = threading.RLock()
        self._open = threading.local()

    def _stamp(self) -> dict[str, Any]:
        return {"now": self.clock.now(), "thread": threading.get_native_id()}

    def emit(self, op: str, **fields: Any) -> None:
        event = {"op": op, **fields, **self._stamp()}
        unit: _OpenUnit | None = getattr(self._open, "unit", None)
        if unit is not None and unit.prepared:
            self._keep_all([{**event, "unit": unit.id}])  # written already: join it there
        elif unit is not None:
            unit.events.append(event)
        else:
            self._keep_all([event])

    @contextlib.contextmanager
    def unit(self) -> Iterator[Unit]:
        """A unit of work: the events emitted inside (on this thread) are written by its
        ``prepare()`` and confirmed when it ends; a unit inside another joins it."""
        if getattr(self._open, "unit", None) is not None:
            yield NO_UNIT  # the outer unit prepares and confirms
            return
        unit = self._open.unit = _OpenUnit(self)
        ok = False
        try:
            yield unit
            ok = True
        finally:
            self._open.unit = None
            unit.end(ok)

    @contextlib.contextmanager
    def writing(self, op: str, **fields: Any) -> Iterator[Unit]:
        """One write and its event: the event written before the write, confirmed after it
        (or aborted: ``abort()``, or an exception).  Inside a unit, the event is the unit's
        (unless aborted)."""
        outer: _OpenUnit | None = getattr(self._open, "unit", None)
        if outer is not None:
            mine = _Joined(outer, {"op": op, **fields, **self._stamp()})
            try:
                yield mine
            except BaseException:
                mine.abort()
                raise
            return
        with self.unit() as unit:
            self.emit(op, **fields)
            unit.prepare()
            yield unit

    def commit_so_far(self, commit: Callable[[], None]) -> None:
        """Inside a unit, ``commit`` commits the store's writes so far: so are its events."""
        unit: _OpenUnit | None = getattr(self._open, "unit", None)
        if unit is None:
            commit()
        else:
            unit.split(commit)

    def _keep_all(self, events: list[dict[str, Any]]) -> None:
        with self._lock:
            self.events.extend(events)

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

    def _keep_all(self, events: list[dict[str, Any]]) -> None:
        with self._lock:
            super()._keep_all(events)
            with self.path.open("a", encoding="utf-8") as f:  # one write: the lines together
                f.write("".join(json.dumps(e, separators=(",", ":"), default=str) + "\n"
                                for e in events))
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
