"""Broken: an answer taken while an outcome is unknown.  The lifecycle row for a resume of a
pause in ``unknown_outcome`` consumes it like a resumable one -- a machine built from the
table with that one row changed.  Must fail ``resume.unknown-outcome.blocks``."""

from __future__ import annotations

import attrs
from _base import machine_harness, main

from pausepoint.core import lifecycle as lc
from pausepoint_conformance.adapters.reference import ReferenceAdapter

MUST = ("resume.unknown-outcome.blocks",)
MAY: tuple[str, ...] = ()

_consume = lc.MACHINE.index[(lc.Resume, lc.Phase.RESUMABLE)]
MACHINE = lc.MACHINE.with_row(attrs.evolve(_consume, source=lc.Phase.UNKNOWN_OUTCOME))


class Broken(ReferenceAdapter):
    implementation_name = "broken: answers taken while an outcome is unknown"

    harness_class = machine_harness(MACHINE)


def make() -> Broken:
    return Broken("memory")


if __name__ == "__main__":
    main(make)
