"""Broken: every approval gate asks a person.  The adapter realises a gate step as an approve
interrupt -- the gate's decision is never taken, so a gate that could allow or deny at once
pauses the run anyway.  Must fail ``gate.separate``."""

from __future__ import annotations

from _base import main

from pausepoint_conformance.adapters.reference import ReferenceAdapter
from pausepoint_conformance.protocol.wire import (
    GateStep,
    InterruptStep,
    Result,
    RunReport,
    StartArgs,
)

MUST = ("gate.separate",)
MAY: tuple[str, ...] = ()


class Broken(ReferenceAdapter):
    implementation_name = "broken: every gate asks a person"

    def start(self, args: StartArgs) -> Result[RunReport]:
        script = [InterruptStep(name="approve", payload={"amount": s.amount})
                  if isinstance(s, GateStep) else s for s in args.script]
        return super().start(args.model_copy(update={"script": script}))


def make() -> Broken:
    return Broken("memory")


if __name__ == "__main__":
    main(make)
