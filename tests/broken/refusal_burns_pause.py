"""Broken: a refused resume burns the pause.  An answer refused for its request (another
session, scope or responder, a response that does not fit) cancels the pause "to be safe", so
the person can never answer it properly.  Must fail ``lifecycle.refusal.no-change`` (the check
of ``resume.refusal.keeps-pause`` stops at that failure first, so that clause is not killed
here)."""

from __future__ import annotations

from typing import Any

from _base import main

from pausepoint.core.errors import PausepointError
from pausepoint.engine.harness import Harness, Report
from pausepoint_conformance.adapters.reference import ReferenceAdapter

MUST = (
    "input.bounded",
    "lifecycle.refusal.no-change",
    "multi.independent",
    "resume.unknown-outcome.blocks",
    "run.binding.live",
    "run.paused.never-error",
)
VECTORS_MUST = ("resume.binding.run", "resume.binding.scope", "resume.response.schema")

BURNING = {"binding_mismatch", "scope_mismatch", "responder_unauthorized", "response_invalid"}


class BurningHarness(Harness):
    def resume(self, token: object, response: object, **kw: Any) -> Report:
        try:
            return super().resume(token, response, **kw)
        except PausepointError as exc:
            if exc.code.value in BURNING:
                claims = self.signer.verify(token)  # type: ignore[arg-type]
                try:
                    self.service.cancel_pause(claims.interrupt_id)
                except PausepointError:
                    pass
            raise


class Broken(ReferenceAdapter):
    implementation_name = "broken: a refused resume burns the pause"

    harness_class = BurningHarness


def make() -> Broken:
    return Broken("memory")


if __name__ == "__main__":
    main(make)
