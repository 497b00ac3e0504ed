"""Broken: a cancel overrides an answer.  Cancelling a run also marks its already consumed
pauses cancelled (the row is written without asking the lifecycle).  Must fail
``lifecycle.terminal.absorbing``."""

from __future__ import annotations

from typing import Any

import attrs
from _base import main

from pausepoint.core.lifecycle import Phase
from pausepoint.engine.harness import Harness
from pausepoint_conformance.adapters.reference import ReferenceAdapter

MUST = ("lifecycle.terminal.absorbing",)
MAY: tuple[str, ...] = ()


class OverridingHarness(Harness):
    def _compose(self, bundle: Any) -> Any:
        deployment = super()._compose(bundle)
        service = deployment.service
        cancel_run = service.cancel_run

        def cancel_everything(run_id: str, **kw: Any) -> Any:
            cancelled = cancel_run(run_id, **kw)
            for rid in cancelled:
                for rec in service.ledger.by_run(rid):
                    if rec.state.phase == Phase.CONSUMED:
                        service.ledger.transition(rec.interrupt_id, rec.version, attrs.evolve(
                            rec.state, phase=Phase.CANCELLED))
            return cancelled
        service.cancel_run = cancel_everything
        return deployment


class Broken(ReferenceAdapter):
    implementation_name = "broken: a cancel overrides an answer"

    harness_class = OverridingHarness


def make() -> Broken:
    return Broken("memory")


if __name__ == "__main__":
    main(make)
