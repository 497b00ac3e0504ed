"""Broken: the size bound off by one.  A payload or response of exactly 65 536 bytes of
canonical JSON is refused (``<`` where the contract says *at most*).  Must fail
``input.bounded``."""

from __future__ import annotations

from _base import main
from _bounds import bounded_interactions

from pausepoint.core.canonical import MAX_BYTES, MAX_DEPTH
from pausepoint_conformance.adapters.reference import ReferenceAdapter

MUST = ("input.bounded",)
MAY: tuple[str, ...] = ()


class Broken(ReferenceAdapter):
    implementation_name = "broken: size bound off by one"

    interactions = bounded_interactions(MAX_BYTES - 1, MAX_DEPTH)


def make() -> Broken:
    return Broken("memory")


if __name__ == "__main__":
    main(make)
