"""Stores -- for deployers: the ports in memory, on SQLite (the embedded durable default) and
on PostgreSQL (many resume servers sharing one ledger).

Each store is a bundle (:class:`StoreBundle`) with one facet per port -- ``ledger``,
``checkpoints``, ``payloads``, ``effects``, ``runs`` -- over one backing store.
:class:`PostgresStore` is imported on first use, so this package imports without psycopg.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pausepoint.core.clauses import ErrorCode
from pausepoint.core.errors import PausepointError
from pausepoint.stores.base import StoreBundle
from pausepoint.stores.memory import MemoryStore
from pausepoint.stores.sqlite import SqliteStore

if TYPE_CHECKING:
    from pausepoint.stores.postgres import PostgresStore

__all__ = ["MemoryStore", "PostgresStore", "SqliteStore", "StoreBundle", "open_store"]


def __getattr__(name: str) -> Any:
    if name == "PostgresStore":
        from pausepoint.stores.postgres import PostgresStore

        return PostgresStore
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def open_store(url: str) -> StoreBundle:
    """Open a store from a URL:

    * ``memory:`` -- a fresh :class:`MemoryStore`;
    * ``sqlite:PATH`` -- a :class:`SqliteStore` on the file ``PATH``;
    * ``postgres:DSN``, ``postgresql://...`` or ``postgres://...`` -- a :class:`PostgresStore`
      (``postgres:`` alone uses ``$PAUSEPOINT_PG_DSN``).

    Anything else is refused with ``wiring_invalid``."""
    if url == "memory:":
        return MemoryStore()
    if url.startswith("sqlite:"):
        return SqliteStore(url[len("sqlite:"):])
    if url.startswith(("postgresql://", "postgres://")):
        from pausepoint.stores.postgres import PostgresStore

        return PostgresStore(url)
    if url.startswith("postgres:"):
        from pausepoint.stores.postgres import PostgresStore

        return PostgresStore(url[len("postgres:"):] or None)
    raise PausepointError(
        ErrorCode.WIRING_INVALID, "wiring.consistent",
        f"unknown store URL {url!r}: use memory:, sqlite:PATH, postgres:DSN or postgresql://...")


if TYPE_CHECKING:  # mypy proves every store is a bundle whose facets implement the ports
    def _conforms(m: MemoryStore, s: SqliteStore, p: PostgresStore) -> tuple[StoreBundle, ...]:
        return (m, s, p)
