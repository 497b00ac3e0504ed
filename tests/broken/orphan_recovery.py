"""Broken: a recovery pause always opened anew.  A restart killed between issuing a recovery
pause and marking it unknown leaves it live; the next restart opens a second one beside it.
Must fail ``run.restart.concurrent``."""

from __future__ import annotations

from _base import main

from pausepoint.core.registry import RECONCILE
from pausepoint.engine.harness import Harness, ScriptEngine
from pausepoint_conformance.adapters.reference import ReferenceAdapter

MUST = ("run.restart.concurrent",)
MAY: tuple[str, ...] = ()


class ForgetfulRecoveryEngine(ScriptEngine):
    def _recovery_index(self, run_id: str, step: int) -> int:
        return sum(1 for r in self.deployment.service.ledger.by_run(run_id)
                   if r.claims.name == RECONCILE.name)


class ForgetfulRecoveryHarness(Harness):
    engine_class = ForgetfulRecoveryEngine


class Broken(ReferenceAdapter):
    implementation_name = "broken: recovery pauses opened anew"

    harness_class = ForgetfulRecoveryHarness


def make() -> Broken:
    return Broken("memory")


if __name__ == "__main__":
    main(make)
