"""Broken: tokens re-minted on restart.  After a crash the restart signs every live pause
again, with the clock's time *now* as the issue time, and keeps that token instead of the one
it published (Ed25519 is deterministic, so without a clock that moved the new token would be
the same).  Must fail ``durability.token.reissue``."""

from __future__ import annotations

from typing import Any

import attrs
from _base import Delegate, main

from pausepoint.engine.harness import Harness
from pausepoint_conformance.adapters.reference import ReferenceAdapter

MUST = ("durability.token.reissue",)
MAY: tuple[str, ...] = ()


class RemintedLedger(Delegate):
    """The ledger as the restarted process sees it: re-minted tokens in place of the old."""

    def __init__(self, inner: Any, reminted: dict[str, Any]) -> None:
        super().__init__(inner)
        self.reminted = reminted

    def _fix(self, rec: Any) -> Any:
        if rec is None or rec.interrupt_id not in self.reminted:
            return rec
        token, claims = self.reminted[rec.interrupt_id]
        return attrs.evolve(rec, token=token, claims=claims)

    def get(self, interrupt_id: str) -> Any:
        return self._fix(self.inner.get(interrupt_id))

    def by_run(self, run_id: str) -> Any:
        return [self._fix(r) for r in self.inner.by_run(run_id)]

    def outstanding(self) -> Any:
        return [self._fix(r) for r in self.inner.outstanding()]


class RemintingHarness(Harness):
    def _compose(self, bundle: Any) -> Any:
        if not hasattr(self, "reminted"):
            self.reminted: dict[str, Any] = {}
        deployment = super()._compose(bundle)
        deployment.service.ledger = RemintedLedger(deployment.service.ledger, self.reminted)
        return deployment

    def restart(self) -> Any:
        reports = super().restart()
        service = self.service
        for rec in service.ledger.outstanding():
            claims = attrs.evolve(rec.claims, issued_at=service.clock.now())
            token, _kid = service.signer.mint(claims)
            self.reminted[rec.interrupt_id] = (token, claims)
        return reports


class Broken(ReferenceAdapter):
    implementation_name = "broken: tokens re-minted on restart"

    harness_class = RemintingHarness


def make() -> Broken:
    return Broken("sqlite")


if __name__ == "__main__":
    main(make)
