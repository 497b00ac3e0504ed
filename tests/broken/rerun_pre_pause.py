"""Broken: pre-pause effect re-run.  On resume the run re-enters its step from the top (as a
graph node is re-executed on resume), running again the side effects between the previous pause
and this one.  Must fail ``effect.at-most-once``."""

from __future__ import annotations

import json
from typing import Any

from _base import main

from pausepoint.engine.embed import RunResult
from pausepoint.engine.harness import Harness, ScriptEngine
from pausepoint_conformance.adapters.reference import ReferenceAdapter

MUST = ("effect.at-most-once",)
MAY: tuple[str, ...] = ()


class ReentrantEngine(ScriptEngine):
    def _continue(self, rec: Any, seen: Any = None) -> RunResult:
        run = self.deployment.service.runs.get(rec.run_id)
        if run is not None and run.status.value == "paused":
            state = json.loads(run.state)
            script, pc = state["input"], int(state["step"])
            start = max((i + 1 for i in range(pc) if script[i].get("op") == "interrupt"),
                        default=0)
            for step in script[start:pc]:
                if step.get("op") == "effect":
                    self.harness.world.apply(rec.run_id, str(step["key"]))
        return super()._continue(rec, seen)


class ReentrantHarness(Harness):
    engine_class = ReentrantEngine


class Broken(ReferenceAdapter):
    implementation_name = "broken: pre-pause effect re-run"

    harness_class = ReentrantHarness


def make() -> Broken:
    return Broken("memory")


if __name__ == "__main__":
    main(make)
