"""Broken: a phase outside the contract.  An answered pause is reported ``answered`` instead
of ``consumed``.  Must fail ``lifecycle.states``."""

from __future__ import annotations

from typing import Any

from _base import main

from pausepoint.engine.harness import Harness
from pausepoint_conformance.adapters.reference import ReferenceAdapter

MUST = ("lifecycle.states",)
VECTORS_MUST = ("multi.independent", "resume.continuation.recorded-turn")


class RenamingHarness(Harness):
    def pause_state(self, interrupt_id: str) -> Any:
        phase = super().pause_state(interrupt_id)
        return "answered" if phase == "consumed" else phase


class Broken(ReferenceAdapter):
    implementation_name = "broken: a phase outside the contract"

    harness_class = RenamingHarness


def make() -> Broken:
    return Broken("memory")


if __name__ == "__main__":
    main(make)
