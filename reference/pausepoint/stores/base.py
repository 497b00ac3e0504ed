"""What every store bundle offers: one facet per port, sharing one backing store.

The five protocols of :mod:`pausepoint.core.ports` cannot all be implemented by a single object:
``Ledger.get``, ``PayloadStore.get`` and ``RunStore.get`` share a name and differ in what they
return.  So a store is a *bundle*: one object owning the data (and, for SQL stores, the
connections), exposing each port as an attribute.  Wiring takes the facets::

    store = open_store("sqlite:pausepoint.db")
    ledger: Ledger = store.ledger
    checkpoints: CheckpointStore = store.checkpoints
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import attrs

from pausepoint.core.ports import CheckpointStore, EffectJournal, Ledger, PayloadStore, RunStore


@runtime_checkable
class StoreBundle(Protocol):
    """One backing store exposing every store port.  ``durable`` is the same on every facet:
    a durable bundle commits each change before the method that made it returns
    (``durability.commit-per-change``)."""

    durable: bool

    @property
    def ledger(self) -> Ledger: ...

    @property
    def checkpoints(self) -> CheckpointStore: ...

    @property
    def payloads(self) -> PayloadStore: ...

    @property
    def effects(self) -> EffectJournal: ...

    @property
    def runs(self) -> RunStore: ...

    def close(self) -> None: ...


@attrs.frozen
class PortBundle:
    """A store bundle assembled from facets of other bundles -- say a durable ledger beside
    volatile checkpoints -- so that wiring can be tried with any mix (``wiring.consistent``:
    :func:`pausepoint.engine.compose.compose` refuses the inconsistent ones).  It owns nothing:
    closing it closes none of the stores its facets come from."""

    ledger: Ledger
    checkpoints: CheckpointStore
    payloads: PayloadStore
    effects: EffectJournal
    runs: RunStore
    durable: bool = False

    def close(self) -> None:
        pass
