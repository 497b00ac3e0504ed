"""Broken: a tool pause without its tool call.  The ``pay`` interaction is registered as an
ordinary one, so a tool pause with no tool call id is taken.  Must fail
``pause.tool-call.bound``."""

from __future__ import annotations

import attrs
from _base import main

from pausepoint_conformance.adapters.reference import INTERACTIONS, ReferenceAdapter

MUST = ("pause.refusal.before-mint", "pause.tool-call.bound")


class Broken(ReferenceAdapter):
    implementation_name = "broken: tool pauses not bound to their tool call"

    interactions = tuple(attrs.evolve(i, tool=False) for i in INTERACTIONS)


def make() -> Broken:
    return Broken("memory")


if __name__ == "__main__":
    main(make)
