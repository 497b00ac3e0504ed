"""Broken: payloads and responses are bounded in size and depth but not checked to be Unicode
text, so a string holding a lone surrogate is accepted -- a value UTF-8 cannot carry, which
another language reads differently, so its digest (and every replay) disagrees.  Must fail
``input.bounded``."""

from __future__ import annotations

import json

from _base import main

import pausepoint.core.registry as registry
from pausepoint.core.canonical import MAX_BYTES, MAX_DEPTH, _walk, canonical_json
from pausepoint_conformance.adapters.reference import ReferenceAdapter

MUST = ("input.bounded",)
MAY: tuple[str, ...] = ()


def size_and_depth_only(value: object, max_bytes: int = MAX_BYTES,
                        max_depth: int = MAX_DEPTH) -> str | None:
    return _walk(value, max_bytes, max_depth, unicode_only=False)


def validate_unchecked(self: registry.Interaction, model: type[object],
                       value: object) -> registry.Validated | None:
    """Size and depth only; the value validated as Python, not as the JSON text it would be."""
    if size_and_depth_only(value) is not None:
        return None
    try:
        return registry.Validated(escaped_json(value),
                                  registry._adapter(model).validate_python(value, strict=True))
    except (ValueError, TypeError):
        return None


class Broken(ReferenceAdapter):
    implementation_name = "broken: lone surrogates accepted"


def escaped_json(value: object) -> str:
    """RFC 8785, except that what it refuses -- a lone surrogate -- goes out as ``\\udXXX``."""
    try:
        return canonical_json(value)
    except ValueError:
        return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def make() -> Broken:
    registry.Interaction._validate = validate_unchecked  # type: ignore[method-assign]
    return Broken("memory")


if __name__ == "__main__":
    main(make)
