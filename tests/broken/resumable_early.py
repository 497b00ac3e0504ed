"""Broken: resumable before the checkpoint write.  The ledger records every new pause as
resumable at issue time, before (and whether or not) the turn checkpoint is written.  Must fail
``turn.resumable.earned`` (or ``turn.write-failed.stays-paused``)."""

from __future__ import annotations

from typing import Any

import attrs
from _base import Bundle, Delegate, main

from pausepoint.core.lifecycle import Phase
from pausepoint_conformance.adapters.reference import ReferenceAdapter

MUST = (
    "lifecycle.outstanding.live",
    "status.distinguishes",
    "turn.resumable.earned",
    "turn.write-failed.stays-paused",
)


class EagerLedger(Delegate):
    def issue(self, record: Any, **kw: Any) -> bool:
        early = attrs.evolve(record, state=attrs.evolve(record.state, phase=Phase.RESUMABLE,
                                                        turn_recorded=True))
        return bool(self.inner.issue(early, **kw))


class Broken(ReferenceAdapter):
    implementation_name = "broken: resumable before the checkpoint write"

    def wrap_bundle(self, bundle: Any) -> Any:
        return Bundle(bundle, ledger=EagerLedger(bundle.ledger))


def make() -> Broken:
    return Broken("memory")


if __name__ == "__main__":
    main(make)
