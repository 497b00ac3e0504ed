"""Broken: a cancelled run reported as failed.  A run cancelled while paused is reported with
status ``error``.  Must fail ``run.paused.never-error``."""

from __future__ import annotations

from typing import Any

from _base import main

from pausepoint_conformance.adapters.reference import ReferenceAdapter
from pausepoint_conformance.protocol.wire import RunReport

MUST = ("run.paused.never-error",)
VECTORS_MUST = ("cancel.distinct",)


class Broken(ReferenceAdapter):
    implementation_name = "broken: a cancelled run reported as failed"

    def _run_report(self, rep: Any, h: Any = None) -> RunReport:
        report = super()._run_report(rep, h)
        if report.status == "cancelled" and not report.events:
            report = report.model_copy(update={"status": "error"})
        return report


def make() -> Broken:
    return Broken("memory")


if __name__ == "__main__":
    main(make)
