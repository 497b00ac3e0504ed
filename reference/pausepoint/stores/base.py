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

from contextlib import AbstractContextManager
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


@runtime_checkable
class Units(Protocol):
    """A store whose facets' writes can be grouped: the SQL stores, the memory store.

    ``unit_of_work()`` opens a unit: every store call this thread makes inside it, on any
    facet, is one transaction, committed once when the block ends -- or not at all, if the
    block raises or a statement in it failed.  Nested units join the outermost one.

    ``commit_so_far()``, inside a unit, commits what the unit has written so far (as its end
    would, durably) and goes on: the unit's next call opens its next transaction (SQLite:
    ``BEGIN IMMEDIATE`` again; PostgreSQL: ``BEGIN``; memory: the store's lock taken again).
    Nothing is held in between, so whatever the caller does next -- a side effect whose
    journalled start must be durable before it runs (``effect.journal.bracket``) -- runs with
    no lock of the store held.  Outside a unit it does nothing (every call committed already).

    A store whose unit, when it raises, commits nothing of what it wrote since its last commit
    says so with a true ``rolls_back`` attribute (the SQL stores; the memory store keeps what
    it wrote): a service may then write a row in its final state first and refuse after.  A
    store whose unit holds its write lock from the unit's first call to each commit (SQLite,
    memory; not PostgreSQL, which locks only the rows written) says so with a true
    ``serial_units`` attribute: no one else writes between what a unit reads and what it
    writes, so a write the unit would only overwrite before it commits may be left out."""

    def unit_of_work(self) -> AbstractContextManager[object]: ...

    def commit_so_far(self) -> None: ...


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
