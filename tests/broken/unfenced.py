"""Broken: no fencing.  The run's conditional write compares status and state but not the
epoch, and the effect journal's start is an upsert (under the run's current epoch, its lease
unchecked): a server whose run was taken over goes on applying its effects.  Must fail
``run.ownership.fencing``."""

from __future__ import annotations

from typing import Any

from _base import Bundle, Delegate, main

from pausepoint.core.ports import EffectStatus, RunRecord
from pausepoint_conformance.adapters.reference import ReferenceAdapter

MUST = ("run.ownership.fencing",)
MAY: tuple[str, ...] = ()


class EpochBlindRuns(Delegate):
    def replace(self, expected: RunRecord, new: RunRecord) -> bool:
        stored = self.inner.get(expected.run_id)
        if stored is None or (stored.status, stored.state) != (expected.status, expected.state):
            return False
        return bool(self.inner.replace(stored, new))


class UpsertJournal(Delegate):
    def start(self, run_id: str, key: str, epoch: int, now: int | None) -> bool:
        if self.inner.status(run_id, key) is not None:
            self.inner.settle(run_id, key, EffectStatus.NOT_APPLIED)
        run = self.outer.runs.get(run_id)
        return bool(self.inner.start(run_id, key, epoch if run is None else run.epoch,
                                     None))  # nor the lease


class Broken(ReferenceAdapter):
    implementation_name = "broken: no fencing"

    def wrap_bundle(self, bundle: Any) -> Any:
        journal = UpsertJournal(bundle.effects)
        journal.outer = bundle
        return Bundle(bundle, runs=EpochBlindRuns(bundle.runs), effects=journal)


def make() -> Broken:
    return Broken("memory")


if __name__ == "__main__":
    main(make)
