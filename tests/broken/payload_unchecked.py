"""Broken: payloads not validated.  Every interaction accepts any payload (its schema was
registered as "anything").  Must fail ``pause.payload.schema``."""

from __future__ import annotations

from typing import Any

import attrs
from _base import main

from pausepoint.harness import Harness
from pausepoint_conformance.reference_adapter import INTERACTIONS, ReferenceAdapter

EXPECTED = ("pause.payload.schema",)

LAX = tuple(attrs.evolve(i, payload=object) for i in INTERACTIONS)


class Broken(ReferenceAdapter):
    implementation_name = "broken: payloads not validated"

    def make_harness(self, **kw: Any) -> Harness:
        return Harness(interactions=LAX, **kw)


def make() -> Broken:
    return Broken("memory")


if __name__ == "__main__":
    main(make)
