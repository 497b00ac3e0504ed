"""Broken: a token without its thread claim.  The minter leaves ``thread_id`` out of a pp1
token ("it is the run id anyway") and the verifier fills it in from ``run_id`` -- the token
still redeems its pause, but it does not carry the contract's claims.  Must fail
``token.claims``."""

from __future__ import annotations

import json

from _base import main

from pausepoint.core.canonical import canonical_json
from pausepoint.core.clauses import ErrorCode
from pausepoint.core.errors import PausepointError
from pausepoint.core.ports import Claims
from pausepoint.core.tokens import (
    PREFIX,
    Ed25519Key,
    KeyRing,
    b64url_decode,
    b64url_encode,
    claims_json,
    header_json,
)
from pausepoint_conformance.adapters.reference import ReferenceAdapter

MUST = ("token.claims",)
MAY: tuple[str, ...] = ()


class ThinRing(KeyRing):
    def mint(self, claims: Claims) -> tuple[str, str]:
        _full, kid = super().mint(claims)  # every check of the claims, as the reference
        body = json.loads(claims_json(claims))
        del body["thread_id"]  # BROKEN: left out of the token
        key = self._keys[kid]
        assert isinstance(key, Ed25519Key)
        signing_input = ".".join((PREFIX, b64url_encode(header_json(kid).encode()),
                                  b64url_encode(canonical_json(body).encode())))
        return signing_input + "." + b64url_encode(key.sign(signing_input.encode())), kid

    def _verify(self, token: object) -> Claims:
        try:
            return super()._verify(token)
        except PausepointError as exc:  # the signature verified; the claims are thin
            if exc.code != ErrorCode.TOKEN_MALFORMED or "expected keys" not in str(exc):
                raise
            assert isinstance(token, str)
            body = json.loads(b64url_decode(token.split(".")[2]))
            if "thread_id" in body or not isinstance(body.get("run_id"), str):
                raise
            return Claims(**{**body, "thread_id": body["run_id"]})


class Broken(ReferenceAdapter):
    implementation_name = "broken: thread claim left out of the token"

    def make_ring(self) -> KeyRing:
        return ThinRing(Ed25519Key.generate("k1"))


def make() -> Broken:
    return Broken("memory")


if __name__ == "__main__":
    main(make)
