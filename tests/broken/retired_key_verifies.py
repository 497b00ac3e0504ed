"""Broken: a retired key keeps verifying.  Retiring a key takes it out of the ring's listing
and drain bookkeeping, but the verifier keeps it "for a grace period", so a token signed by a
key no longer in the key ring is still accepted.  Must fail ``resume.token.authentic``."""

from __future__ import annotations

from _base import main

from pausepoint.core.clauses import ErrorCode
from pausepoint.core.errors import PausepointError
from pausepoint.core.ports import Claims
from pausepoint.core.tokens import Ed25519Key, KeyEntry, KeyRing
from pausepoint_conformance.adapters.reference import ReferenceAdapter

MUST = ("resume.token.authentic",)
MAY: tuple[str, ...] = ()


class LingeringRing(KeyRing):
    def __init__(self, active: Ed25519Key) -> None:
        super().__init__(active)
        self.retired: list[KeyEntry] = []

    def retire(self, kid: str, outstanding: int) -> None:
        entry = self._keys.get(kid)
        super().retire(kid, outstanding)
        if entry is not None:
            self.retired.append(entry)  # BROKEN: kept for verification after retirement

    def _verify(self, token: object) -> Claims:
        try:
            return super()._verify(token)
        except PausepointError as exc:
            if exc.code != ErrorCode.TOKEN_INVALID:
                raise
            for entry in self.retired:
                assert isinstance(entry, Ed25519Key)
                try:
                    return KeyRing(entry)._verify(token)
                except PausepointError:
                    continue
            raise


class Broken(ReferenceAdapter):
    implementation_name = "broken: retired keys still verify"

    def make_ring(self) -> KeyRing:
        return LingeringRing(Ed25519Key.generate("k1"))


def make() -> Broken:
    return Broken("memory")


if __name__ == "__main__":
    main(make)
