"""Broken: a restart republishes answered pauses.  After a crash every pause the ledger holds
is published again as outstanding, the consumed ones too.  Must fail
``lifecycle.outstanding.live``."""

from __future__ import annotations

from typing import Any

from _base import main

from pausepoint.core.lifecycle import Phase
from pausepoint.engine.harness import Harness
from pausepoint_conformance.adapters.reference import ReferenceAdapter

MUST = ("effect.reconcile", "lifecycle.outstanding.live")
VECTORS_MUST = ("durability.restart",)


class EverythingHarness(Harness):
    restarted = False

    def restart(self) -> Any:
        self.restarted = True
        return super().restart()

    def published(self, run_id: str) -> Any:
        live = super().published(run_id)
        if not self.restarted:
            return live
        answered = tuple(self._publish(r) for r in self.service.ledger.by_run(run_id)
                         if r.state.phase == Phase.CONSUMED)
        return live + answered


class Broken(ReferenceAdapter):
    implementation_name = "broken: a restart republishes answered pauses"

    harness_class = EverythingHarness


def make() -> Broken:
    return Broken("sqlite")


if __name__ == "__main__":
    main(make)
