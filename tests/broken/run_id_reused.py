"""Broken: a finished run's id is free again.  Start looks the id up among the live runs only
and creates the run with an upsert, so starting a run that already ended ``done`` runs it
afresh instead of refusing ``invalid_transition``.  Must fail ``run.lifecycle.table``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from _base import Bundle, Delegate, main

from pausepoint.core.ports import RunRecord
from pausepoint.core.runs import ENDED
from pausepoint.engine.harness import Harness, Report
from pausepoint_conformance.adapters.reference import ReferenceAdapter

MUST = ("run.lifecycle.table",)
MAY: tuple[str, ...] = ()


class LiveRuns(Delegate):
    starting: str | None = None
    looked_up = False

    def get(self, run_id: str) -> RunRecord | None:
        run: RunRecord | None = self.inner.get(run_id)
        if run is not None and run_id == self.starting and not self.looked_up:
            self.looked_up = True  # start's own lookup, before it creates the run
            if run.status in ENDED:
                return None  # BROKEN: only live runs are looked up
        return run

    def create(self, run: RunRecord) -> bool:
        old = self.inner.get(run.run_id)
        if old is not None and run.run_id == self.starting and old.status in ENDED:
            return bool(self.inner.replace(old, run))  # BROKEN: an upsert
        return bool(self.inner.create(run))


class ReusingHarness(Harness):
    def start(self, script: Sequence[Any], *, run_id: str, **kw: Any) -> Report:
        runs = self.service.runs
        if not isinstance(runs, LiveRuns):  # a server of an interleaving, on its own store
            return super().start(script, run_id=run_id, **kw)
        runs.starting, runs.looked_up = run_id, False
        try:
            return super().start(script, run_id=run_id, **kw)
        finally:
            runs.starting = None


class Broken(ReferenceAdapter):
    implementation_name = "broken: a finished run's id is reused"

    harness_class = ReusingHarness

    def wrap_bundle(self, bundle: Any) -> Any:
        return Bundle(bundle, runs=LiveRuns(bundle.runs))


def make() -> Broken:
    return Broken("memory")


if __name__ == "__main__":
    main(make)
