"""Broken: expiry timers re-armed by a restart.  A restart re-publishes the outstanding pauses
and, like an in-process timer wheel rebuilt at boot, gives each of them a fresh time to live
from the restart -- the token is the same, but the pause now outlives its ``expires_at``, and
an answer after it is taken.  Must fail ``expiry.no-consume-after`` (and ``resume.expiry``:
that answer is not refused)."""

from __future__ import annotations

import attrs
from _base import main

from pausepoint.engine.harness import Harness, Report
from pausepoint_conformance.adapters.reference import ReferenceAdapter

MUST = ("expiry.no-consume-after", "resume.expiry")
MAY: tuple[str, ...] = ()


class RearmingHarness(Harness):
    def restart(self) -> list[Report]:
        reports = super().restart()
        ledger = self.service.ledger
        deadline = self.clock.now() + self.ttl_ms
        for rec in ledger.outstanding():
            # BROKEN: the stored deadline is recomputed from the restart
            ledger.transition(rec.interrupt_id, rec.version,
                              attrs.evolve(rec.state, expires_at=deadline))
        return reports


class Broken(ReferenceAdapter):
    implementation_name = "broken: restart re-arms expiry"

    harness_class = RearmingHarness


def make() -> Broken:
    return Broken("sqlite")


if __name__ == "__main__":
    main(make)
