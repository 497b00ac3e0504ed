"""Broken: events outside the vocabulary.  Every run report also lists the implementation's
own ``log`` events.  Must fail ``run.events.vocabulary``."""

from __future__ import annotations

from typing import Any

from _base import main

from pausepoint_conformance.adapters.reference import ReferenceAdapter
from pausepoint_conformance.protocol.wire import RunReport

MUST = ("run.events.vocabulary",)
MAY: tuple[str, ...] = ()


class Broken(ReferenceAdapter):
    implementation_name = "broken: events outside the vocabulary"

    def _run_report(self, rep: Any, h: Any = None) -> RunReport:
        report = super()._run_report(rep, h)
        if report.events:
            report = report.model_copy(update={"events": ["log", *report.events]})
        return report


def make() -> Broken:
    return Broken("memory")


if __name__ == "__main__":
    main(make)
