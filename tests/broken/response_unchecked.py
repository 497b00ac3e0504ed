"""Broken: responses not validated.  Every interaction's response schema was registered as
"anything" (the size and depth bounds still hold), so a response that is not an object is
taken.  Must fail ``resume.response.schema``."""

from __future__ import annotations

import attrs
from _base import main

from pausepoint_conformance.adapters.reference import INTERACTIONS, ReferenceAdapter

MUST = ("resume.refusal.order", "resume.response.schema", "resume.response.strict")


class Broken(ReferenceAdapter):
    implementation_name = "broken: responses not validated"

    interactions = tuple(attrs.evolve(i, response=object) for i in INTERACTIONS)


def make() -> Broken:
    return Broken("memory")


if __name__ == "__main__":
    main(make)
