"""Shared by the off-by-one bound implementations: interactions whose payload and response
bounds are the given ones instead of the contract's."""

from __future__ import annotations

import attrs
import pydantic

from pausepoint.core.canonical import check_bounds
from pausepoint.core.registry import Interaction
from pausepoint_conformance.adapters.reference import INTERACTIONS


def bounded_interactions(max_bytes: int, max_depth: int) -> tuple[Interaction, ...]:
    @attrs.frozen
    class Bounded(Interaction):
        def _fits(self, model: type[object], value: object) -> bool:
            if check_bounds(value, max_bytes=max_bytes, max_depth=max_depth) is not None:
                return False
            try:
                pydantic.TypeAdapter(model).validate_python(value, strict=False)
            except (pydantic.ValidationError, TypeError, ValueError, RecursionError):
                return False
            return True

    return tuple(Bounded(**attrs.asdict(i, recurse=False)) for i in INTERACTIONS)
