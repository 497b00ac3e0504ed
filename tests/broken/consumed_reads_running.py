"""Broken: an answered pause reads as running again.  Once consumed, a pause is reported in
phase ``running`` (the run it belongs to is running again, so why not).  Must fail
``lifecycle.transition.table``."""

from __future__ import annotations

from typing import Any

from _base import main

from pausepoint.engine.harness import Harness
from pausepoint_conformance.adapters.reference import ReferenceAdapter

MUST = ("lifecycle.transition.table",)
VECTORS_MUST = ("multi.independent", "resume.continuation.recorded-turn")


class RunningHarness(Harness):
    def pause_state(self, interrupt_id: str) -> Any:
        phase = super().pause_state(interrupt_id)
        return "running" if phase == "consumed" else phase


class Broken(ReferenceAdapter):
    implementation_name = "broken: an answered pause reads as running"

    harness_class = RunningHarness


def make() -> Broken:
    return Broken("memory")


if __name__ == "__main__":
    main(make)
