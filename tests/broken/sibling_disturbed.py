"""Broken: sibling pause disturbed by answering another.  When one of several questions asked
at once is answered, the run moves on and cancels the others.  Must fail
``multi.independent``."""

from __future__ import annotations

import json
from typing import Any

from _base import main

from pausepoint.core import lifecycle as lc
from pausepoint.core.ports import RunStatus
from pausepoint.core.registry import RECONCILE
from pausepoint.engine.harness import Harness, Report
from pausepoint_conformance.adapters.reference import ReferenceAdapter

MUST = ("multi.independent", "status.distinguishes")


class FirstAnswerWinsHarness(Harness):
    def _continue(self, rec: Any, response: object) -> Report:
        run = self.service.runs.get(rec.run_id)
        if run is None or run.status != RunStatus.PAUSED or rec.claims.name == RECONCILE.name:
            return super()._continue(rec, response)
        siblings = [r for r in self.service.ledger.by_run(rec.run_id)
                    if r.claims.checkpoint_id == rec.claims.checkpoint_id
                    and r.interrupt_id != rec.interrupt_id and r.state.phase in lc.LIVE]
        if not siblings:
            return super()._continue(rec, response)
        for r in siblings:
            self.service.cancel_pause(r.interrupt_id)
        state = json.loads(run.state)
        state["responses"][rec.interrupt_id] = response
        state["pc"] = int(state["pc"]) + 1
        return self._claim(run, state)


class Broken(ReferenceAdapter):
    implementation_name = "broken: sibling pause disturbed"

    harness_class = FirstAnswerWinsHarness


def make() -> Broken:
    return Broken("memory")


if __name__ == "__main__":
    main(make)
