"""Broken: a repeated answer answers the next question.  The resume is routed to whatever the
run is waiting on now, not to the pause its token names (as a resume command naming only the
thread is), so a double-clicked "approve" also answers the question after it.  Must fail
``replay.same-response``."""

from __future__ import annotations

from typing import Any

from _base import main, token_claims

from pausepoint.core.lifecycle import Phase
from pausepoint.engine.harness import Harness, Report
from pausepoint_conformance.adapters.reference import ReferenceAdapter

MUST = ("replay.same-response",)
MAY: tuple[str, ...] = ()


class NextQuestionHarness(Harness):
    def resume(self, token: object, response: object, **kw: Any) -> Report:
        claims = token_claims(token)
        if claims is not None:
            rec = self.service.ledger.get(str(claims.get("interrupt_id")))
            if rec is not None and rec.state.phase == Phase.CONSUMED:
                waiting = [r for r in self.service.ledger.by_run(rec.run_id)
                           if r.state.phase in (Phase.PAUSED, Phase.RESUMABLE)]
                if waiting:
                    token = waiting[0].token
        return super().resume(token, response, **kw)


class Broken(ReferenceAdapter):
    implementation_name = "broken: a repeated answer answers the next question"

    harness_class = NextQuestionHarness


def make() -> Broken:
    return Broken("memory")


if __name__ == "__main__":
    main(make)
