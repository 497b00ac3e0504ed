"""Broken: an answer taken for a pause never made resumable.  The lifecycle row for a resume
of a ``paused`` pause (its turn write failed) consumes it like a resumable one -- a machine
built from the table with that one row changed.  Must fail ``turn.write-failed.stays-paused``."""

from __future__ import annotations

import attrs
from _base import machine_harness, main

from pausepoint.core import lifecycle as lc
from pausepoint_conformance.adapters.reference import ReferenceAdapter

MUST = ("turn.write-failed.stays-paused",)
MAY: tuple[str, ...] = ()

_consume = lc.MACHINE.index[(lc.Resume, lc.Phase.RESUMABLE)]
MACHINE = lc.MACHINE.with_row(attrs.evolve(_consume, source=lc.Phase.PAUSED))


class Broken(ReferenceAdapter):
    implementation_name = "broken: unresumable pauses answered"

    harness_class = machine_harness(MACHINE)


def make() -> Broken:
    return Broken("memory")


if __name__ == "__main__":
    main(make)
