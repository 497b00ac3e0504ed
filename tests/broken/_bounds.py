"""Shared by the off-by-one bound implementations: interactions whose payload and response
bounds are the given ones instead of the contract's."""

from __future__ import annotations

import attrs

from pausepoint.core.canonical import bounded_json
from pausepoint.core.registry import Interaction
from pausepoint_conformance.adapters.reference import INTERACTIONS


def bounded_interactions(max_bytes: int, max_depth: int) -> tuple[Interaction, ...]:
    @attrs.frozen
    class Bounded(Interaction):
        def bounded_text(self, value: object) -> str | None:
            return bounded_json(value, max_bytes=max_bytes, max_depth=max_depth)

    return tuple(Bounded(**attrs.asdict(i, recurse=False)) for i in INTERACTIONS)
