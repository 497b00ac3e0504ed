"""Broken: payloads not validated.  Every interaction accepts any payload (its schema was
registered as "anything").  Must fail ``pause.payload.schema``."""

from __future__ import annotations

import attrs
from _base import main

from pausepoint_conformance.adapters.reference import INTERACTIONS, ReferenceAdapter

MUST = ("pause.payload.schema", "pause.refusal.order")
MAY: tuple[str, ...] = ()

LAX = tuple(attrs.evolve(i, payload=object) for i in INTERACTIONS)


class Broken(ReferenceAdapter):
    implementation_name = "broken: payloads not validated"

    interactions = LAX


def make() -> Broken:
    return Broken("memory")


if __name__ == "__main__":
    main(make)
