"""Broken: the token's payload digest is the plain SHA-256 of the payload's canonical JSON, so
anyone holding a token can confirm a guess of its payload offline (the issue-9 attack gave back
``{"amount":7342,"to":"acct-17"}`` in 6.3 s).  Must fail ``token.discloses``."""

from __future__ import annotations

from _base import main

import pausepoint.engine.service
from pausepoint.core.canonical import digest
from pausepoint_conformance.adapters.reference import ReferenceAdapter

MUST = ("token.discloses",)
MAY: tuple[str, ...] = ()


class Broken(ReferenceAdapter):
    implementation_name = "broken: unkeyed payload digest"


def make() -> Broken:
    pausepoint.engine.service.PauseService.payload_digest = (  # type: ignore[method-assign]
        lambda self, text: digest(text))  # BROKEN: no secret
    return Broken("memory")


if __name__ == "__main__":
    main(make)
