"""Broken: responder authority not checked.  The restricted interaction was registered
without its authority rule, so anyone may answer it.  Must fail ``resume.authority``."""

from __future__ import annotations

from typing import Any

import attrs
from _base import main

from pausepoint.harness import Harness
from pausepoint.registry import anyone
from pausepoint_conformance.reference_adapter import INTERACTIONS, ReferenceAdapter

EXPECTED = ("resume.authority",)

OPEN = tuple(attrs.evolve(i, authority=anyone) for i in INTERACTIONS)


class Broken(ReferenceAdapter):
    implementation_name = "broken: responder authority not checked"

    def make_harness(self, **kw: Any) -> Harness:
        return Harness(interactions=OPEN, **kw)


def make() -> Broken:
    return Broken("memory")


if __name__ == "__main__":
    main(make)
