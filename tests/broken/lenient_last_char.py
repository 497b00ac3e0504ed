"""Broken: a lenient base64url decoder.  The resume front end decodes the token's segments the
forgiving way (the unused low bits of a segment's last character ignored) and encodes them
again before anything else looks at the token, so a token whose last character was changed to
a non-canonical spelling redeems as the original.  Must fail ``token.integrity``."""

from __future__ import annotations

import base64
from typing import Any

from _base import main

from pausepoint.core.tokens import b64url_encode
from pausepoint.engine.harness import Harness, Report
from pausepoint_conformance.adapters.reference import ReferenceAdapter

MUST = ("token.integrity",)
MAY: tuple[str, ...] = ()


def lenient(segment: str) -> str:
    try:
        return b64url_encode(base64.urlsafe_b64decode(segment + "=" * (-len(segment) % 4)))
    except ValueError:
        return segment


class LenientHarness(Harness):
    def resume(self, token: object, response: object, **kw: Any) -> Report:
        if isinstance(token, str) and token.count(".") == 3:
            head, *segments = token.split(".")
            token = ".".join([head, *(lenient(s) for s in segments)])
        return super().resume(token, response, **kw)


class Broken(ReferenceAdapter):
    implementation_name = "broken: lenient base64url decoder"

    harness_class = LenientHarness


def make() -> Broken:
    return Broken("memory")


if __name__ == "__main__":
    main(make)
