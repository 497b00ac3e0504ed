"""Broken: the depth bound off by one.  Payloads and responses nested 33 levels deep are
accepted (the bound counted from 0, or compared with ``>`` one level too late).  Must fail
``input.bounded``."""

from __future__ import annotations

from _base import main
from _bounds import bounded_interactions

from pausepoint.core.canonical import MAX_BYTES, MAX_DEPTH
from pausepoint_conformance.adapters.reference import ReferenceAdapter

MUST = ("input.bounded",)
MAY: tuple[str, ...] = ()


class Broken(ReferenceAdapter):
    implementation_name = "broken: depth bound off by one"

    interactions = bounded_interactions(MAX_BYTES * 2, MAX_DEPTH + 1)


def make() -> Broken:
    return Broken("memory")


if __name__ == "__main__":
    main(make)
