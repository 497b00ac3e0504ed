"""Broken: a status that reads the run record only.  Every paused run is reported safely
suspended, whatever its pauses' phases -- a pause whose turn write failed, or one waiting on an
unknown outcome, looks as safe as any other.  Must fail ``status.distinguishes``."""

from __future__ import annotations

from typing import Any

from _base import main

from pausepoint.core.ports import RunStatus
from pausepoint.engine.harness import Harness
from pausepoint.engine.service import RunView
from pausepoint_conformance.adapters.reference import ReferenceAdapter

MUST = ("status.distinguishes",)
MAY: tuple[str, ...] = ()


class RunRecordStatusHarness(Harness):
    def _compose(self, bundle: Any) -> Any:
        deployment = super()._compose(bundle)
        service = deployment.service
        honest = service.status

        def status(run_id: str) -> RunView:
            run = service.runs.get(run_id)
            if run is not None and run.status == RunStatus.PAUSED:
                return RunView.SAFELY_SUSPENDED
            return honest(run_id)  # type: ignore[no-any-return]

        service.status = status
        return deployment


class Broken(ReferenceAdapter):
    implementation_name = "broken: status from the run record only"

    harness_class = RunRecordStatusHarness


def make() -> Broken:
    return Broken("memory")


if __name__ == "__main__":
    main(make)
