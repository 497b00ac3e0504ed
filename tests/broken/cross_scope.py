"""Broken: cross-scope token accepted.  The resume takes the scope from the token's own claims
instead of from the request.  Must fail ``resume.binding.scope``."""

from __future__ import annotations

from typing import Any

from _base import main, token_claims

from pausepoint.engine.harness import Harness, Report
from pausepoint_conformance.adapters.reference import ReferenceAdapter

MUST = ("resume.binding.scope", "resume.refusal.order")
MAY: tuple[str, ...] = ()


class ScopeFromTokenHarness(Harness):
    def resume(self, token: object, response: object, **kw: Any) -> Report:
        claims = token_claims(token)
        if claims is not None and isinstance(claims.get("scope"), str):
            kw["scope"] = claims["scope"]
        return super().resume(token, response, **kw)


class Broken(ReferenceAdapter):
    implementation_name = "broken: cross-scope token accepted"

    harness_class = ScopeFromTokenHarness


def make() -> Broken:
    return Broken("memory")


if __name__ == "__main__":
    main(make)
