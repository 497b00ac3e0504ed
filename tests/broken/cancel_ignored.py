"""Broken: cancel ignored.  Cancelling marks the run cancelled but leaves its pauses live, so
their tokens still redeem.  Must fail ``cancel.distinct``."""

from __future__ import annotations

from typing import Any

from _base import main

from pausepoint.engine.harness import Harness
from pausepoint_conformance.adapters.reference import ReferenceAdapter

MUST = ("cancel.distinct", "cancel.propagates", "race.decided-once")
MAY: tuple[str, ...] = ()


class LeakyCancelHarness(Harness):
    def _compose(self, bundle: Any) -> Any:
        deployment = super()._compose(bundle)
        service = deployment.service
        service.cancel_pause = service.ledger.get
        return deployment


class Broken(ReferenceAdapter):
    implementation_name = "broken: cancel ignored"

    harness_class = LeakyCancelHarness


def make() -> Broken:
    return Broken("memory")


if __name__ == "__main__":
    main(make)
