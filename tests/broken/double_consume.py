"""Broken: double consume.  The ledger's conditional update is not conditional: it re-reads the
row and writes whatever version it finds (check-then-act), so resumes racing through separate
resume servers all win.  Must fail ``resume.consume.single-winner``."""

from __future__ import annotations

import time
from typing import Any

from _base import Delegate, main

from pausepoint.core.lifecycle import Phase
from pausepoint_conformance.adapters.reference import ReferenceAdapter
from pausepoint_conformance.faults.runrace import EachWriteCommits

MUST = ("resume.consume.single-winner", "resume.consume.at-most-once")
MAY: tuple[str, ...] = ()


class RacyLedger(Delegate):
    def transition(self, interrupt_id: str, expected_version: int, new: Any,
                   result: Any = None) -> bool:
        if new.phase == Phase.CONSUMED:
            time.sleep(0.05)  # the window every check-then-act ledger has, made wide
        current = self.inner.get(interrupt_id)
        return bool(self.inner.transition(interrupt_id, current.version, new, result))


class Broken(ReferenceAdapter):
    implementation_name = "broken: double consume"

    def wrap_bundle(self, bundle: Any) -> Any:
        # every write its own commit: a unit of work would serialise the racing resumes
        return EachWriteCommits.of(bundle, ledger=RacyLedger(bundle.ledger))


def make() -> Broken:
    return Broken("memory")


if __name__ == "__main__":
    main(make)
