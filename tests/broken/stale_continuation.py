"""Broken: a continuation that does not check its step.  A restart that found the run stalled
continues it with the answer it read, although the run has moved on to its next question
meanwhile -- past an approval nobody gave.  Must fail ``run.continuation.belongs-to-step``."""

from __future__ import annotations

from typing import Any

from _base import main

from pausepoint.engine.harness import Harness
from pausepoint_conformance.adapters.reference import ReferenceAdapter

MUST = ("run.continuation.belongs-to-step",)
MAY: tuple[str, ...] = ()


class StepBlindHarness(Harness):
    def _belongs(self, rec: Any, run_id: str, pc: int) -> bool:
        return True


class Broken(ReferenceAdapter):
    implementation_name = "broken: a continuation for any step"

    harness_class = StepBlindHarness


def make() -> Broken:
    return Broken("memory")


if __name__ == "__main__":
    main(make)
