"""Broken: responses are validated in pydantic's lax mode, so ``{"approved": "false"}`` fits
``approved: bool`` (coerced to False -- or, in a harness that hands on the raw answer, a truthy
string).  Must fail ``resume.response.strict``."""

from __future__ import annotations

from _base import main

import pausepoint.core.registry as registry
from pausepoint.core.canonical import canonical_json, check_bounds
from pausepoint_conformance.adapters.reference import ReferenceAdapter

MUST = ("resume.response.strict",)
MAY: tuple[str, ...] = ()


def lax(self: registry.Interaction, model: type[object],
        value: object) -> registry.Validated | None:
    if check_bounds(value) is not None:
        return None
    try:
        validated = registry._adapter(model).validate_python(value, strict=False)  # BROKEN
        return registry.Validated(canonical_json(value), validated)
    except (ValueError, TypeError):
        return None


class Broken(ReferenceAdapter):
    implementation_name = "broken: lax response validation"


def make() -> Broken:
    registry.Interaction._validate = lax  # type: ignore[method-assign]
    return Broken("memory")


if __name__ == "__main__":
    main(make)
