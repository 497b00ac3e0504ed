"""Broken: payloads and responses are bounded in size and depth but not checked to be Unicode
text, so a string holding a lone surrogate is accepted -- a value UTF-8 cannot carry, which
another language reads differently, so its digest (and every replay) disagrees.  Must fail
``input.bounded``."""

from __future__ import annotations

from _base import main

import pausepoint.core.registry
import pausepoint.engine.service
from pausepoint.core.canonical import MAX_BYTES, MAX_DEPTH, _walk
from pausepoint_conformance.adapters.reference import ReferenceAdapter

MUST = ("input.bounded",)
MAY: tuple[str, ...] = ()


def size_and_depth_only(value: object, max_bytes: int = MAX_BYTES,
                        max_depth: int = MAX_DEPTH) -> str | None:
    return _walk(value, max_bytes, max_depth, unicode_only=False)


class Broken(ReferenceAdapter):
    implementation_name = "broken: lone surrogates accepted"


def make() -> Broken:
    pausepoint.engine.service.check_bounds = size_and_depth_only  # type: ignore[assignment]
    pausepoint.core.registry.check_bounds = size_and_depth_only  # type: ignore[assignment]
    return Broken("memory")


if __name__ == "__main__":
    main(make)
