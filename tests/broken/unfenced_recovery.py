"""Broken: recovery unfenced (the orphan recovery of the run-level race).  A driver that finds
an effect journalled started takes it for an unknown outcome whichever epoch started it -- also
the in-flight effect of the owner that took the run over -- and its recovery pause is issued
without the fencing epoch, so it lands after a take-over or a cancel.  Must fail
``run.ownership.fencing`` (a stale driver's recovery pause) and ``run.cancel.in-flight`` (a
recovery pause issued after the cancel)."""

from __future__ import annotations

from typing import Any

from _base import Bundle, Delegate, main

from pausepoint.core.ports import PauseRecord, RunRecord
from pausepoint.engine.harness import Harness, ScriptEngine
from pausepoint.engine.owned import Doubt
from pausepoint_conformance.adapters.reference import ReferenceAdapter

MUST = ("run.ownership.fencing", "run.cancel.in-flight")
MAY: tuple[str, ...] = ()


class EpochBlindRecoveryEngine(ScriptEngine):
    def _doubt(self, run: RunRecord, key: str) -> Doubt:
        started = self.deployment.service.effects.started_by(run.run_id, key)
        return Doubt.SETTLED if started is None else Doubt.IN_DOUBT


class EpochBlindRecoveryHarness(Harness):
    engine_class = EpochBlindRecoveryEngine


class UnfencedLedger(Delegate):
    def issue(self, record: PauseRecord, **_fence: Any) -> bool:
        return bool(self.inner.issue(record))


class Broken(ReferenceAdapter):
    implementation_name = "broken: recovery unfenced"

    harness_class = EpochBlindRecoveryHarness

    def wrap_bundle(self, bundle: Any) -> Any:
        return Bundle(bundle, ledger=UnfencedLedger(bundle.ledger))


def make() -> Broken:
    return Broken("memory")


if __name__ == "__main__":
    main(make)
