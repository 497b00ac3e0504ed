"""Broken: a grandchild bound to the wrong root.  The run driver takes a run's *parent* as its
root run, which is right for a child and wrong for a grandchild, so a grandchild's token names
its parent as the root of the lineage.  Must fail ``run.binding.live``."""

from __future__ import annotations

from typing import Any

import attrs
from _base import main

from pausepoint.engine.harness import Harness, ScriptEngine
from pausepoint_conformance.adapters.reference import ReferenceAdapter

MUST = ("run.binding.live",)
MAY: tuple[str, ...] = ()


class ParentIsRootEngine(ScriptEngine):
    def _drive(self, owned: Any) -> Any:
        if owned.parent_run_id:
            owned = attrs.evolve(owned, root_run_id=owned.parent_run_id)
        return super()._drive(owned)


class ParentIsRootHarness(Harness):
    engine_class = ParentIsRootEngine


class Broken(ReferenceAdapter):
    implementation_name = "broken: grandchild bound to its parent as root"

    harness_class = ParentIsRootHarness


def make() -> Broken:
    return Broken("memory")


if __name__ == "__main__":
    main(make)
