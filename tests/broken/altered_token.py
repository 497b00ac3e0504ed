"""Broken: altered token accepted.  The resume front end reads the interrupt id out of the
token without verifying it, then redeems the pause with the token stored in the ledger.  Must
fail ``token.integrity``."""

from __future__ import annotations

from typing import Any

from _base import main, token_claims

from pausepoint.engine.harness import Harness, Report
from pausepoint_conformance.adapters.reference import ReferenceAdapter

MUST = (
    "resume.token.binds-one-pause",
    "token.integrity",
    "token.key-id",
    "token.parse.strict",
)
VECTORS_MUST = ("resume.token.authentic",)


class TrustingHarness(Harness):
    def resume(self, token: object, response: object, **kw: Any) -> Report:
        claims = token_claims(token)
        if claims is not None:
            rec = self.service.ledger.get(str(claims.get("interrupt_id")))
            if rec is not None:
                token = rec.token
        return super().resume(token, response, **kw)


class Broken(ReferenceAdapter):
    implementation_name = "broken: altered token accepted"

    harness_class = TrustingHarness


def make() -> Broken:
    return Broken("memory")


if __name__ == "__main__":
    main(make)
