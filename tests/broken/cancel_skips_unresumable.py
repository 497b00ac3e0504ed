"""Broken: a cancel that skips pauses not yet resumable.  Cancelling a run cancels its
resumable pauses, but a pause whose turn write failed (still ``paused``) is left as it was.
Must fail ``cancel.distinct``."""

from __future__ import annotations

from typing import Any

from _base import main

from pausepoint.core.lifecycle import Phase
from pausepoint.engine.harness import Harness
from pausepoint.engine.service import PauseService
from pausepoint_conformance.adapters.reference import ReferenceAdapter

MUST = ("cancel.distinct",)
MAY: tuple[str, ...] = ()


class SkippingHarness(Harness):
    def _compose(self, bundle: Any) -> Any:
        deployment = super()._compose(bundle)
        service = deployment.service
        cancel = service.cancel_pause

        def cancel_pause(interrupt_id: str) -> Any:
            rec = service.ledger.get(interrupt_id)
            if rec is not None and rec.state.phase == Phase.PAUSED:
                return rec  # "nothing to cancel: it was never resumable"
            return cancel(interrupt_id)
        service.cancel_pause = cancel_pause  # type: ignore[method-assign]
        assert isinstance(service, PauseService)
        return deployment


class Broken(ReferenceAdapter):
    implementation_name = "broken: cancel skips pauses not yet resumable"

    harness_class = SkippingHarness


def make() -> Broken:
    return Broken("memory")


if __name__ == "__main__":
    main(make)
