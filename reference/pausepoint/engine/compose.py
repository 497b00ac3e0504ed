"""One composition function wires a deployment from its ports (wiring.consistent).

It refuses wiring that would fail later, when somebody answers a question: durable checkpoints
with a volatile consumption ledger (a restart would forget which pauses were consumed and let
them be answered twice), or a token encoder without its decoder (a published token nobody can
read back).  With no interaction registered it offers the model no "ask the user" tool
(wiring.no-interaction-no-tool).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import attrs

from pausepoint.core.clauses import ErrorCode
from pausepoint.core.errors import PausepointError
from pausepoint.core.ports import AuditSink, Clock, Signer
from pausepoint.core.registry import Interaction, Registry
from pausepoint.engine.clock import SystemClock
from pausepoint.engine.service import PauseService
from pausepoint.engine.sinks import MemoryAudit
from pausepoint.stores.base import StoreBundle, Units

DEFAULT_TTL_MS = 24 * 3600 * 1000


@attrs.frozen
class AskUserTool:
    """The tool a model is offered to stop and ask a person."""

    name: str
    interactions: tuple[str, ...]


@attrs.frozen
class Deployment:
    """What :func:`compose` wires: the pause service over the store, and the optional token
    encoder/decoder pair around the signed token."""

    service: PauseService
    store: StoreBundle
    encode_token: Callable[[str], str] | None = None
    decode_token: Callable[[str], str] | None = None

    def ask_user_tool(self) -> AskUserTool | None:
        """The ask-the-user tool, or None when nothing is registered to ask."""
        names = self.service.registry.names()
        return AskUserTool("ask_user", names) if names else None


def compose(*, store: StoreBundle, signer: Signer, interactions: Iterable[Interaction] = (),
            clock: Clock | None = None, audit: AuditSink | None = None,
            ttl_ms: int = DEFAULT_TTL_MS, encode_token: Callable[[str], str] | None = None,
            decode_token: Callable[[str], str] | None = None,
            require_durable: bool = False, payload_key: bytes | None = None) -> Deployment:
    """Wire a deployment.  ``require_durable`` refuses a store whose ledger is volatile.
    ``payload_key`` is the deployment's secret for the payload digest a token carries
    (token.discloses), at least 32 bytes; by default a fresh one per service."""
    def refuse(message: str) -> PausepointError:
        return PausepointError(ErrorCode.WIRING_INVALID, "wiring.consistent", message)

    ports: list[Any] = [store.ledger, store.checkpoints, store.payloads, store.effects,
                        store.runs]
    if store.checkpoints.durable and not store.ledger.durable:
        raise refuse("durable checkpoints with a volatile ledger: after a restart a pause "
                     "could be consumed twice")
    if require_durable and not all(p.durable for p in ports):
        raise refuse("require_durable was asked for, but a store port is volatile")
    if (encode_token is None) != (decode_token is None):
        raise refuse("a token encoder needs its decoder (and the other way round), or "
                     "published tokens could never be read back")
    if ttl_ms <= 0:
        raise refuse(f"ttl_ms must be positive, not {ttl_ms}")
    service = PauseService(
        registry=Registry(interactions), signer=signer, ledger=store.ledger,
        checkpoints=store.checkpoints, payloads=store.payloads, effects=store.effects,
        runs=store.runs, clock=clock or SystemClock(), audit=audit or MemoryAudit(),
        ttl_ms=ttl_ms, payload_key=payload_key,
        units=store if isinstance(store, Units) else None)
    return Deployment(service=service, store=store, encode_token=encode_token,
                      decode_token=decode_token)
