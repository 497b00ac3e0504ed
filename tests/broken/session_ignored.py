"""Broken: the session binding is not checked.  The resume takes the session from the token's
own claims instead of from the request.  Must fail ``resume.binding.run``."""

from __future__ import annotations

from typing import Any

from _base import main, token_claims

from pausepoint.engine.harness import Harness, Report
from pausepoint_conformance.adapters.reference import ReferenceAdapter

MUST = ("resume.binding.run", "resume.refusal.order", "resume.token.binds-one-pause")
MAY: tuple[str, ...] = ()


class SessionFromTokenHarness(Harness):
    def resume(self, token: object, response: object, **kw: Any) -> Report:
        claims = token_claims(token)
        if claims is not None:
            kw["session_id"] = claims.get("session_id", kw.get("session_id"))
            kw["run_id"] = None
        return super().resume(token, response, **kw)


class Broken(ReferenceAdapter):
    implementation_name = "broken: session binding not checked"

    harness_class = SessionFromTokenHarness


def make() -> Broken:
    return Broken("memory")


if __name__ == "__main__":
    main(make)
