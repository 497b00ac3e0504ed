"""Broken: unconditional run writes.  Every write to a run replaces it whatever it holds now
(the ``runs.put`` of old): a driver writes a cancelled run back to running and pays, and a
cancel that read the run running relabels it cancelled after it finished.  Must fail
``run.cancel.in-flight`` and ``run.cancel.finished``."""

from __future__ import annotations

from typing import Any

from _base import Bundle, Delegate, main
from unfenced import UpsertJournal

from pausepoint.core.ports import RunRecord
from pausepoint_conformance.adapters.reference import ReferenceAdapter

MUST = ("run.cancel.finished", "run.cancel.in-flight", "run.ownership.fencing")


class BlindRuns(Delegate):
    def replace(self, expected: RunRecord, new: RunRecord) -> bool:
        stored = self.inner.get(expected.run_id)
        return stored is not None and bool(self.inner.replace(stored, new))


class Broken(ReferenceAdapter):
    implementation_name = "broken: unconditional run writes"

    def wrap_bundle(self, bundle: Any) -> Any:
        journal = UpsertJournal(bundle.effects)
        journal.outer = bundle
        return Bundle(bundle, runs=BlindRuns(bundle.runs), effects=journal)


def make() -> Broken:
    return Broken("memory")


if __name__ == "__main__":
    main(make)
