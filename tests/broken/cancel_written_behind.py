"""Broken: cancellations written behind.  To spare a commit per pause when a run with many
pauses is cancelled, the ledger keeps cancelled rows in memory and writes them with the next
ledger write -- so a cancel is reported before it is durable, and a crash right after it
brings the pause back.  Must fail ``durability.commit-per-change``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs
from _base import Bundle, Delegate, main

from pausepoint.core import lifecycle as lc
from pausepoint.core.ports import PauseRecord, PauseState
from pausepoint_conformance.adapters.reference import ReferenceAdapter

MUST = ("durability.commit-per-change",)
MAY: tuple[str, ...] = ()


class WriteBehindLedger(Delegate):
    def __init__(self, inner: Any) -> None:
        super().__init__(inner)
        self.pending: dict[str, tuple[int, PauseRecord]] = {}  # id -> (stored version, row)

    def _flush(self) -> None:
        pending, self.pending = self.pending, {}
        for iid, (version, row) in pending.items():
            self.inner.transition(iid, version, row.state)

    def _seen(self, row: PauseRecord | None) -> PauseRecord | None:
        if row is None or row.interrupt_id not in self.pending:
            return row
        return self.pending[row.interrupt_id][1]

    def transition(self, interrupt_id: str, expected_version: int, new: PauseState,
                   result: str | None = None) -> bool:
        if new.phase == lc.Phase.CANCELLED and result is None:
            row = self._seen(self.inner.get(interrupt_id))
            if row is None or row.version != expected_version:
                return False
            # BROKEN: reported cancelled now, committed with the next write
            self.pending[interrupt_id] = (row.version, attrs.evolve(
                row, state=new, version=row.version + 1))
            return True
        self._flush()
        return bool(self.inner.transition(interrupt_id, expected_version, new, result))

    def issue(self, record: PauseRecord, *, fence: int | None = None) -> bool:
        self._flush()
        return bool(self.inner.issue(record, fence=fence))

    def set_result(self, interrupt_id: str, result: str) -> None:
        self._flush()
        self.inner.set_result(interrupt_id, result)

    def retire_key(self, kid: str) -> int:
        self._flush()
        return int(self.inner.retire_key(kid))

    def get(self, interrupt_id: str) -> PauseRecord | None:
        return self._seen(self.inner.get(interrupt_id))

    def by_run(self, run_id: str) -> Sequence[PauseRecord]:
        return [r for r in map(self._seen, self.inner.by_run(run_id)) if r is not None]

    def outstanding(self) -> Sequence[PauseRecord]:
        return [r for r in self.inner.outstanding() if r.interrupt_id not in self.pending]

    def outstanding_for_key(self, kid: str) -> int:
        return sum(1 for r in self.outstanding() if r.kid == kid)


class Broken(ReferenceAdapter):
    implementation_name = "broken: cancellations written behind"

    def wrap_bundle(self, bundle: Any) -> Any:
        return Bundle(bundle, ledger=WriteBehindLedger(bundle.ledger))


def make() -> Broken:
    return Broken("sqlite")


if __name__ == "__main__":
    main(make)
