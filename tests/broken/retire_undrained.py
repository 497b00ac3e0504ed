"""Broken: a retire that ignores the drain proof.  The service's drain proof always says 0, so
a key is retired while pauses it signed are outstanding -- their tokens stop verifying and the
people holding them can no longer answer.  Must fail ``token.rotation.drain``."""

from __future__ import annotations

from typing import Any

from _base import main

from pausepoint.engine.harness import Harness
from pausepoint_conformance.adapters.reference import ReferenceAdapter

MUST = ("token.rotation.drain",)
MAY: tuple[str, ...] = ()


class NoDrainHarness(Harness):
    def _compose(self, bundle: Any) -> Any:
        deployment = super()._compose(bundle)
        service = deployment.service
        service.drain_proof = lambda kid: 0
        # BROKEN: the retirement takes the proof at its word, whatever the ledger holds
        service.retire_key = lambda kid, ring: ring.retire(kid, service.drain_proof(kid))
        return deployment


class Broken(ReferenceAdapter):
    implementation_name = "broken: retire ignores the drain proof"

    harness_class = NoDrainHarness


def make() -> Broken:
    return Broken("memory")


if __name__ == "__main__":
    main(make)
