"""Broken: every reconcile taken as "applied".  Whatever the operator answers, the effect in
doubt is journalled finished, so an effect that never happened is never run.  Must fail
``effect.reconcile``."""

from __future__ import annotations

from typing import Any

from _base import main

from pausepoint.engine.harness import Harness
from pausepoint_conformance.adapters.reference import ReferenceAdapter

MUST = ("effect.reconcile",)
MAY: tuple[str, ...] = ()


class CredulousHarness(Harness):
    def reconcile(self, interrupt_id: str, resolution: str) -> Any:
        return super().reconcile(interrupt_id, "applied")


class Broken(ReferenceAdapter):
    implementation_name = "broken: every reconcile taken as applied"

    harness_class = CredulousHarness


def make() -> Broken:
    return Broken("memory")


if __name__ == "__main__":
    main(make)
