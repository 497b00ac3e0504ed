"""Broken: a volatile store claimed durable.  The implementation claims the durability group,
but a restart opens an empty in-memory store.  Must fail ``durability.restart``."""

from __future__ import annotations

from collections.abc import Callable

from _base import main

from pausepoint.core.clauses import Group
from pausepoint.stores import MemoryStore
from pausepoint.stores.base import StoreBundle
from pausepoint_conformance.adapters.reference import ReferenceAdapter

MUST = (
    "durability.restart",
    "effect.unknown-outcome",
    "lifecycle.states",
    "race.decided-once",
    "resume.consume.single-winner",
)


class Broken(ReferenceAdapter):
    implementation_name = "broken: volatile store claimed durable"

    def groups(self) -> list[Group]:
        return list(Group)

    def _opener(self) -> Callable[[], StoreBundle]:
        return MemoryStore  # a new, empty store every time the harness (re)opens


def make() -> Broken:
    return Broken("memory")


if __name__ == "__main__":
    main(make)
