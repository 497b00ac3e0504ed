"""Broken: a store failure ends the run.  A store that fails once while a continuation takes
its next pause is treated as the run's own error: the run ends in ``error`` and no restart
picks it up.  Must fail ``run.store-failure.recoverable``."""

from __future__ import annotations

from _base import main

from pausepoint.engine.harness import Harness, ScriptEngine
from pausepoint_conformance.adapters.reference import ReferenceAdapter

MUST = ("run.store-failure.recoverable",)
MAY: tuple[str, ...] = ()


class BrittleEngine(ScriptEngine):
    def _recoverable(self, exc: BaseException) -> bool:
        return False


class BrittleHarness(Harness):
    engine_class = BrittleEngine


class Broken(ReferenceAdapter):
    implementation_name = "broken: a store failure ends the run in error"

    harness_class = BrittleHarness


def make() -> Broken:
    return Broken("sqlite")  # the durability group is claimed on SQLite only


if __name__ == "__main__":
    main(make)
