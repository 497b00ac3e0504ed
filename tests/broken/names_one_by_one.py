"""Broken: several questions taken one by one.  A step asking several questions at once pauses
each in turn, so when a later one is refused the earlier ones are already minted and
published.  Must fail ``pause.refusal.before-mint``."""

from __future__ import annotations

from typing import Any

from _base import main

from pausepoint.engine.harness import Harness
from pausepoint_conformance.adapters.reference import ReferenceAdapter

MUST = ("pause.refusal.before-mint",)
MAY: tuple[str, ...] = ()


class OneByOneHarness(Harness):
    def _compose(self, bundle: Any) -> Any:
        deployment = super()._compose(bundle)
        deployment.service.check_pause = lambda **_kw: None  # nothing checked up front
        return deployment


class Broken(ReferenceAdapter):
    implementation_name = "broken: several questions taken one by one"

    harness_class = OneByOneHarness


def make() -> Broken:
    return Broken("memory")


if __name__ == "__main__":
    main(make)
