"""Broken: a grandchild bound to the wrong root.  The run store records a run's *parent* as its
root run, which is right for a child and wrong for a grandchild, so a grandchild's token names
its parent as the root of the lineage.  Must fail ``run.binding.live``."""

from __future__ import annotations

from typing import Any

import attrs
from _base import Bundle, Delegate, main

from pausepoint_conformance.adapters.reference import ReferenceAdapter

MUST = ("run.binding.live",)
MAY: tuple[str, ...] = ()


class ParentIsRootRuns(Delegate):
    def put(self, run: Any) -> Any:
        if run.parent_run_id:
            run = attrs.evolve(run, root_run_id=run.parent_run_id)
        return self.inner.put(run)


class Broken(ReferenceAdapter):
    implementation_name = "broken: grandchild bound to its parent as root"

    def wrap_bundle(self, bundle: Any) -> Any:
        return Bundle(bundle, runs=ParentIsRootRuns(bundle.runs))


def make() -> Broken:
    return Broken("memory")


if __name__ == "__main__":
    main(make)
