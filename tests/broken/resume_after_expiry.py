"""Broken: resume after expiry.  The pause service reads a clock that never moves (a stale
clock injected into the resume path), so expiry never happens.  Must fail ``resume.expiry``."""

from __future__ import annotations

from typing import Any

from _base import main

from pausepoint.engine.clock import ManualClock
from pausepoint.engine.harness import Harness
from pausepoint_conformance.adapters.reference import ReferenceAdapter

MUST = ("resume.expiry", "expiry.transition", "race.decided-once", "resume.refusal.order")
MAY: tuple[str, ...] = ()


class StaleClockHarness(Harness):
    def _compose(self, bundle: Any) -> Any:
        deployment = super()._compose(bundle)
        deployment.service.clock = ManualClock(0)
        return deployment


class Broken(ReferenceAdapter):
    implementation_name = "broken: resume after expiry"

    harness_class = StaleClockHarness


def make() -> Broken:
    return Broken("memory")


if __name__ == "__main__":
    main(make)
