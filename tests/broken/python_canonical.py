"""Broken: answers are compared as Python's sorted ``json.dumps`` text rather than RFC 8785, so
``1.0`` and ``1`` (or ``-0.0`` and ``0``) are different answers -- a retry re-serialised by
JavaScript, which cannot tell them apart, is refused as a conflict.  Must fail
``input.canonical``."""

from __future__ import annotations

import json

from _base import main

import pausepoint.core.registry
from pausepoint.core.canonical import check_bounds
from pausepoint_conformance.adapters.reference import ReferenceAdapter

MUST = ("input.canonical",)
MAY: tuple[str, ...] = ()


def python_json(value: object) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True,
                      allow_nan=False)  # BROKEN: not JCS


def bounded_python_json(value: object) -> str | None:
    """What validation writes a value within the contract's bounds as: ``python_json``."""
    return python_json(value) if check_bounds(value) is None else None


class Broken(ReferenceAdapter):
    implementation_name = "broken: Python json.dumps as canonical JSON"


def make() -> Broken:
    pausepoint.core.registry.canonical_json = python_json  # type: ignore[assignment]
    pausepoint.core.registry.bounded_json = bounded_python_json  # type: ignore[assignment]
    return Broken("memory")


if __name__ == "__main__":
    main(make)
