"""Broken: a different answer replayed as the same.  A second answer to an answered pause is
swapped for the first one before it is judged, so every later answer "replays".  Must fail
``replay.different-response.conflict``."""

from __future__ import annotations

import json
from typing import Any

from _base import main, token_claims

from pausepoint.core.lifecycle import Phase
from pausepoint.engine.harness import Harness, Report
from pausepoint_conformance.adapters.reference import ReferenceAdapter

MUST = ("replay.different-response.conflict", "resume.consume.at-most-once", "race.decided-once")
MAY: tuple[str, ...] = ()


class AnyReplayHarness(Harness):
    def resume(self, token: object, response: object, **kw: Any) -> Report:
        claims = token_claims(token)
        if claims is not None:
            iid = str(claims.get("interrupt_id"))
            rec = self.service.ledger.get(iid)
            run = self.service.runs.get(str(claims.get("run_id")))
            if rec is not None and run is not None and rec.state.phase == Phase.CONSUMED:
                first = json.loads(run.state).get("answers", {})
                if iid in first:
                    response = first[iid]
        return super().resume(token, response, **kw)


class Broken(ReferenceAdapter):
    implementation_name = "broken: different answer replayed as the same"

    harness_class = AnyReplayHarness


def make() -> Broken:
    return Broken("memory")


if __name__ == "__main__":
    main(make)
