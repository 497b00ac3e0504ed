"""Broken: a refusal that ran a side effect.  To answer fast, the resume runs the next side
effect of the run (journalled, so a continuation will skip it) *before* it validates the
request -- and a refused request leaves it done.  Must fail ``effect.refusal.no-effect``."""

from __future__ import annotations

import json
from typing import Any

from _base import main, token_claims

from pausepoint.core.ports import EffectStatus, RunStatus
from pausepoint.engine.harness import Harness, Report, _effect_key
from pausepoint_conformance.adapters.reference import ReferenceAdapter

MUST = (
    "effect.refusal.no-effect",
    "expiry.no-consume-after",
    "multi.independent",
    "replay.same-response",
    "resume.token.binds-one-pause",
)
VECTORS_MUST = ("effect.at-most-once",)


class OptimisticHarness(Harness):
    def resume(self, token: object, response: object, **kw: Any) -> Report:
        claims = token_claims(token)
        run = self.service.runs.get(str(claims.get("run_id"))) if claims else None
        if run is not None and run.status == RunStatus.PAUSED:
            state = json.loads(run.state)
            script, pc = state["input"], int(state["step"])
            nxt = pc + 1
            if nxt < len(script) and script[nxt].get("op") == "effect":
                key = str(script[nxt]["key"])
                jkey = _effect_key(nxt, key)
                if self.service.effects.status(run.run_id, jkey) is None:
                    self.service.effects.start(run.run_id, jkey, run.epoch, None)
                    self.world.apply(run.run_id, key)
                    self.service.effects.finish(run.run_id, jkey, run.epoch)
                    assert self.service.effects.status(run.run_id, jkey) == EffectStatus.FINISHED
        return super().resume(token, response, **kw)


class Broken(ReferenceAdapter):
    implementation_name = "broken: refusal ran a side effect"

    harness_class = OptimisticHarness


def make() -> Broken:
    return Broken("memory")


if __name__ == "__main__":
    main(make)
