"""Broken: a restart that ignores leases.  Every restart takes over every running run, also
one a live server is driving.  Must fail ``run.ownership.lease``."""

from __future__ import annotations

from _base import main

from pausepoint.core import runs
from pausepoint.core.ports import RunRecord
from pausepoint.engine.harness import Harness, ScriptEngine
from pausepoint_conformance.adapters.reference import ReferenceAdapter

MUST = ("run.ownership.lease",)
MAY: tuple[str, ...] = ()


class GreedyEngine(ScriptEngine):
    def _recover(self, run: RunRecord) -> runs.Recover:
        return runs.Recover(run.owner, self.clock.now(), self.lease_ms)  # poses as the owner


class GreedyHarness(Harness):
    engine_class = GreedyEngine


class Broken(ReferenceAdapter):
    implementation_name = "broken: restart ignores leases"

    harness_class = GreedyHarness


def make() -> Broken:
    return Broken("memory")


if __name__ == "__main__":
    main(make)
