"""Broken: a continuation that does not check its step.  A restart that found the run stalled
continues it with the answer it read, although the run has moved on to its next question
meanwhile -- past an approval nobody gave.  Must fail ``run.continuation.belongs-to-step``."""

from __future__ import annotations

from typing import Any

from _base import main

from pausepoint.engine.harness import Harness, ScriptEngine
from pausepoint_conformance.adapters.reference import ReferenceAdapter

MUST = ("run.continuation.belongs-to-step",)
MAY: tuple[str, ...] = ()


class StepBlindEngine(ScriptEngine):
    def _belongs(self, rec: Any, run: Any, state: Any) -> bool:
        return True


class StepBlindHarness(Harness):
    engine_class = StepBlindEngine


class Broken(ReferenceAdapter):
    implementation_name = "broken: a continuation for any step"

    harness_class = StepBlindHarness


def make() -> Broken:
    return Broken("memory")


if __name__ == "__main__":
    main(make)
