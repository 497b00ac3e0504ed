"""Broken: a composition function that wires whatever it is given.  Durable checkpoints beside
a volatile ledger, or a token encoder without its decoder, are accepted -- and fail later, when
a restart forgets which pauses were consumed or a published token cannot be read back.
Must fail ``wiring.consistent``."""

from __future__ import annotations

from typing import Any

from _base import main

from pausepoint.core.registry import Registry
from pausepoint.engine.clock import ManualClock
from pausepoint.engine.compose import Deployment
from pausepoint.engine.service import PauseService
from pausepoint.engine.sinks import MemoryAudit
from pausepoint_conformance.adapters.reference import ReferenceAdapter

MUST = ("wiring.consistent",)
MAY: tuple[str, ...] = ()


class Broken(ReferenceAdapter):
    implementation_name = "broken: wiring never checked"

    def compose(self, **parts: Any) -> Deployment:
        store = parts["store"]
        service = PauseService(
            registry=Registry(parts.get("interactions", ())), signer=parts["signer"],
            ledger=store.ledger, checkpoints=store.checkpoints, payloads=store.payloads,
            effects=store.effects, runs=store.runs, clock=ManualClock(0),
            audit=MemoryAudit(), ttl_ms=60_000)
        return Deployment(service=service, store=store, encode_token=parts.get("encode_token"),
                          decode_token=parts.get("decode_token"))


def make() -> Broken:
    return Broken("memory")


if __name__ == "__main__":
    main(make)
