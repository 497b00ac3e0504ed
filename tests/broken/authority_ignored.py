"""Broken: responder authority not checked.  The restricted interaction was registered
without its authority rule, so anyone may answer it.  Must fail ``resume.authority``."""

from __future__ import annotations

import attrs
from _base import main

from pausepoint.core.registry import anyone
from pausepoint_conformance.adapters.reference import INTERACTIONS, ReferenceAdapter

MUST = ("resume.authority", "resume.refusal.order")
MAY: tuple[str, ...] = ()

OPEN = tuple(attrs.evolve(i, authority=anyone) for i in INTERACTIONS)


class Broken(ReferenceAdapter):
    implementation_name = "broken: responder authority not checked"

    interactions = OPEN


def make() -> Broken:
    return Broken("memory")


if __name__ == "__main__":
    main(make)
