"""Broken: any name accepted.  A pause naming an interaction nobody registered is taken as if
it were registered as "anything".  Must fail ``pause.interaction.registered``."""

from __future__ import annotations

from typing import Any

from _base import main

from pausepoint.core.registry import Interaction
from pausepoint.engine.harness import Harness
from pausepoint_conformance.adapters.reference import ReferenceAdapter

MUST = (
    "pause.interaction.registered",
    "pause.refusal.before-mint",
    "pause.refusal.order",
    "pause.signal.base-exception",
)


class AnyNameHarness(Harness):
    def _compose(self, bundle: Any) -> Any:
        deployment = super()._compose(bundle)
        service = deployment.service
        known = service.interaction

        def interaction(name: object, *, reserved: bool = False) -> Any:
            return (known(name, reserved=reserved)
                    or (Interaction(name) if isinstance(name, str) else None))
        service.interaction = interaction
        return deployment


class Broken(ReferenceAdapter):
    implementation_name = "broken: any name accepted"

    harness_class = AnyNameHarness


def make() -> Broken:
    return Broken("memory")


if __name__ == "__main__":
    main(make)
