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
from pausepoint.engine.embed import RunResult
from pausepoint.engine.harness import Harness, ScriptEngine
from pausepoint_conformance.adapters.reference import ReferenceAdapter

MUST = ("multi.independent", "status.distinguishes")


class FirstAnswerWinsEngine(ScriptEngine):
    def _continue(self, rec: Any, seen: Any = None) -> RunResult:
        svc = self.deployment.service
        run = svc.runs.get(rec.run_id)
        if run is None or run.status != RunStatus.PAUSED or rec.claims.name == RECONCILE.name:
            return super()._continue(rec, seen)
        siblings = [r for r in svc.ledger.by_run(rec.run_id)
                    if r.claims.checkpoint_id == rec.claims.checkpoint_id
                    and r.interrupt_id != rec.interrupt_id and r.state.phase in lc.LIVE]
        if not siblings:
            return super()._continue(rec, seen)
        answer = self.owned.kept_answer(rec.interrupt_id)
        state = json.loads(run.state)
        for r in siblings:  # the others are dropped, as if answered alike
            svc.cancel_pause(r.interrupt_id)
            state["answers"][r.interrupt_id] = answer
        state["answers"][rec.interrupt_id] = answer
        claimed = self.owned.take(run, self.owned.continuation(True), json.dumps(state))
        return self._result(rec.run_id) if claimed is None else self._drive(claimed)


class FirstAnswerWinsHarness(Harness):
    engine_class = FirstAnswerWinsEngine


class Broken(ReferenceAdapter):
    implementation_name = "broken: sibling pause disturbed"

    harness_class = FirstAnswerWinsHarness


def make() -> Broken:
    return Broken("memory")


if __name__ == "__main__":
    main(make)
