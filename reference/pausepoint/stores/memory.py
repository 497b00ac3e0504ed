"""The in-memory store: every store port over dicts behind one lock (tests, demos).

Not durable (``durable = False``): the composition refuses it next to durable checkpoints
(``wiring.consistent``).  Its semantics are exactly the SQL stores' -- the same contract tests
run against all three -- including the order of the sequences it returns (insertion order;
replacing a row keeps its place).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import attrs

from pausepoint.core.clauses import ErrorCode
from pausepoint.core.errors import PausepointError
from pausepoint.core.lifecycle import OUTSTANDING, PauseState
from pausepoint.core.ports import EffectStatus, PauseRecord, RunRecord, RunStatus
from pausepoint.core.runs import CANCELLED_OR_CANCELLING


class _StoreLock:
    """The memory store's one lock (re-entrant), which a unit of work holds from its start to
    its end -- or to ``commit_so_far``, after which the unit's next store call takes it again
    and holds it to the unit's end, as a SQL unit opens its next transaction."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._local = threading.local()

    def __enter__(self) -> None:
        self._lock.acquire()
        if getattr(self._local, "pending", False):  # the unit's next "transaction"
            self._lock.acquire()
            self._local.pending, self._local.held = False, True

    def __exit__(self, *exc: object) -> None:
        self._lock.release()

    @contextmanager
    def unit(self) -> Iterator[None]:
        local = self._local
        if getattr(local, "in_unit", False):
            yield  # a nested unit joins the outer one
            return
        self._lock.acquire()
        local.in_unit, local.held, local.pending = True, True, False
        try:
            yield
        finally:
            if local.held:
                self._lock.release()
            local.in_unit, local.held, local.pending = False, False, False

    def commit_so_far(self) -> None:
        local = self._local
        if getattr(local, "held", False):
            self._lock.release()
            local.held, local.pending = False, True


class MemoryStore:
    """One lock, five facets: ``ledger``, ``checkpoints``, ``payloads``, ``effects``, ``runs``.

    Every method takes the lock for its whole read-check-write, so ``ledger.transition`` is an
    atomic compare-and-set on the row's version (``resume.consume.single-winner``)."""

    durable: bool = False
    serial_units: bool = True
    """A unit of work holds the store's one lock to each commit (:class:`~pausepoint.stores
    .base.Units`)."""

    def __init__(self) -> None:
        self._lock = _StoreLock()
        self._pauses: dict[str, PauseRecord] = {}
        self._checkpoints: dict[str, tuple[str, str]] = {}  # id -> (thread id, turn)
        self._payloads: dict[str, str] = {}
        self._effects: dict[tuple[str, str], tuple[EffectStatus, int]] = {}  # (status, epoch)
        self._runs: dict[str, RunRecord] = {}
        self._retired: set[str] = set()
        self.ledger = MemoryLedger(self)
        self.checkpoints = MemoryCheckpoints(self)
        self.payloads = MemoryPayloads(self)
        self.effects = MemoryEffects(self)
        self.runs = MemoryRuns(self)

    def close(self) -> None:
        """Nothing to release; present so every store bundle closes the same way."""

    def unit_of_work(self) -> contextlib.AbstractContextManager[None]:
        """Every store call inside runs under the store's one lock, taken once: no other
        thread sees any of the block's writes before all of them are made (there is no
        rollback: a memory store forgets everything anyway)."""
        return self._lock.unit()

    def commit_so_far(self) -> None:
        """Inside a unit: let the lock go (other threads now see the unit's writes so far);
        the unit's next store call takes it again, to the unit's end."""
        self._lock.commit_so_far()


class _Facet:
    durable: bool = False

    def __init__(self, store: MemoryStore) -> None:
        self._s = store


class MemoryLedger(_Facet):
    """:class:`pausepoint.core.ports.Ledger` in memory."""

    def issue(self, record: PauseRecord, *, fence: int | None = None) -> bool:
        with self._s._lock:
            if record.kid in self._s._retired:  # token.rotation.drain
                raise PausepointError(ErrorCode.KEY_UNKNOWN, "token.rotation.drain",
                                      f"key {record.kid!r} was retired; mint with another")
            run = self._s._runs.get(record.run_id)
            if record.interrupt_id in self._s._pauses or (fence is not None and (
                    run is None or run.epoch != fence)):
                return False
            self._s._pauses[record.interrupt_id] = record
            return True

    def get(self, interrupt_id: str) -> PauseRecord | None:
        with self._s._lock:
            return self._s._pauses.get(interrupt_id)

    def transition(self, interrupt_id: str, expected_version: int, new: PauseState,
                   result: str | None = None) -> bool:
        with self._s._lock:
            row = self._s._pauses.get(interrupt_id)
            if row is None or row.version != expected_version:
                return False
            self._s._pauses[interrupt_id] = attrs.evolve(
                row, state=new, version=row.version + 1,
                result=row.result if result is None else result)
            return True

    def set_result(self, interrupt_id: str, result: str) -> None:
        with self._s._lock:
            row = self._s._pauses.get(interrupt_id)
            if row is not None and row.result is None:
                self._s._pauses[interrupt_id] = attrs.evolve(row, result=result)

    def by_run(self, run_id: str) -> Sequence[PauseRecord]:
        with self._s._lock:
            return [r for r in self._s._pauses.values() if r.run_id == run_id]

    def outstanding(self) -> Sequence[PauseRecord]:
        with self._s._lock:
            return [r for r in self._s._pauses.values() if r.state.phase in OUTSTANDING]

    def outstanding_for_key(self, kid: str) -> int:
        with self._s._lock:
            return sum(1 for r in self._s._pauses.values()
                       if r.kid == kid and r.state.phase in OUTSTANDING)

    def retire_key(self, kid: str) -> int:
        with self._s._lock:
            outstanding = self.outstanding_for_key(kid)
            if outstanding == 0:
                self._s._retired.add(kid)
            return outstanding


class MemoryCheckpoints(_Facet):
    """:class:`pausepoint.core.ports.CheckpointStore` in memory."""

    def write(self, checkpoint_id: str, thread_id: str, turn: str) -> bool:
        with self._s._lock:
            self._s._checkpoints[checkpoint_id] = (thread_id, turn)
            return True

    def read(self, checkpoint_id: str) -> str | None:
        with self._s._lock:
            found = self._s._checkpoints.get(checkpoint_id)
            return None if found is None else found[1]

    def latest(self, thread_id: str) -> str | None:
        with self._s._lock:
            for checkpoint_id, (thread, _turn) in reversed(self._s._checkpoints.items()):
                if thread == thread_id:
                    return checkpoint_id
            return None


class MemoryPayloads(_Facet):
    """:class:`pausepoint.core.ports.PayloadStore` in memory; the first recorded payload stays."""

    def record(self, interrupt_id: str, payload: str) -> None:
        with self._s._lock:
            self._s._payloads.setdefault(interrupt_id, payload)

    def get(self, interrupt_id: str) -> str | None:
        with self._s._lock:
            return self._s._payloads.get(interrupt_id)


class MemoryEffects(_Facet):
    """:class:`pausepoint.core.ports.EffectJournal` in memory."""

    def start(self, run_id: str, key: str, epoch: int, now: int | None) -> bool:
        with self._s._lock:
            run = self._s._runs.get(run_id)
            entry = self._s._effects.get((run_id, key))
            if run is None or run.epoch != epoch or (
                    now is not None and run.lease_until <= now) or (
                    entry is not None and entry[0] != EffectStatus.NOT_APPLIED):
                return False
            self._s._effects[(run_id, key)] = (EffectStatus.STARTED, epoch)
            return True

    def finish(self, run_id: str, key: str, epoch: int) -> bool:
        with self._s._lock:
            if self._s._effects.get((run_id, key)) != (EffectStatus.STARTED, epoch):
                return False
            self._s._effects[(run_id, key)] = (EffectStatus.FINISHED, epoch)
            return True

    def settle(self, run_id: str, key: str, status: EffectStatus) -> None:
        with self._s._lock:
            entry = self._s._effects.get((run_id, key))
            if entry is not None:
                self._s._effects[(run_id, key)] = (EffectStatus(status), entry[1])

    def status(self, run_id: str, key: str) -> EffectStatus | None:
        with self._s._lock:
            entry = self._s._effects.get((run_id, key))
            return None if entry is None else entry[0]

    def started_by(self, run_id: str, key: str) -> int | None:
        with self._s._lock:
            entry = self._s._effects.get((run_id, key))
            return entry[1] if entry is not None and entry[0] == EffectStatus.STARTED else None

    def open_entries(self, run_id: str) -> Sequence[str]:
        with self._s._lock:
            return [k for (r, k), (st, _e) in self._s._effects.items()
                    if r == run_id and st == EffectStatus.STARTED]


class MemoryRuns(_Facet):
    """:class:`pausepoint.core.ports.RunStore` in memory."""

    def create(self, run: RunRecord) -> bool:
        with self._s._lock:
            above = [self._s._runs.get(r) for r in (run.parent_run_id, run.root_run_id)]
            if run.run_id in self._s._runs or (run.parent_run_id and any(
                    r is None or r.status in CANCELLED_OR_CANCELLING for r in above)):
                return False
            self._s._runs[run.run_id] = run
            return True

    def get(self, run_id: str) -> RunRecord | None:
        with self._s._lock:
            return self._s._runs.get(run_id)

    def children(self, run_id: str) -> Sequence[RunRecord]:
        with self._s._lock:
            return [r for r in self._s._runs.values() if r.parent_run_id == run_id]

    def replace(self, expected: RunRecord, new: RunRecord) -> bool:
        with self._s._lock:
            stored = self._s._runs.get(expected.run_id)
            if stored is None or (stored.epoch, stored.status, stored.state) != (
                    expected.epoch, expected.status, expected.state):
                return False
            self._s._runs[expected.run_id] = new
            return True

    def with_status(self, status: RunStatus) -> Sequence[RunRecord]:
        with self._s._lock:
            return [r for r in self._s._runs.values() if r.status == status]
