"""PostgreSQL: many resume servers sharing one ledger.

psycopg 3, one connection per thread, in autocommit mode: each method is one statement, which
is its own transaction, committed before the server answers -- one round trip, where an explicit
BEGIN and COMMIT would add two (multi-statement work opens a transaction with BEGIN).  Under
READ COMMITTED the ledger's conditional update waits for a concurrent writer's row lock and then
re-checks ``version`` against the committed row, so exactly one of any number of racing servers
wins (``resume.consume.single-winner``).

Importing this module needs psycopg; :mod:`pausepoint.stores` imports it only on first use.
"""

from __future__ import annotations

import os
import re
from typing import Any, Final

import psycopg
import psycopg.errors

from pausepoint.core.clauses import ErrorCode
from pausepoint.core.errors import PausepointError
from pausepoint.stores.sql import (
    TABLES,
    Dialect,
    SqlStore,
    schema,
)

DSN_ENV = "PAUSEPOINT_PG_DSN"

POSTGRES: Dialect = Dialect(
    name="postgresql",
    placeholder="%s",
    serial_key="BIGSERIAL PRIMARY KEY",
    begin_write="BEGIN",  # multi-statement transactions only: one statement commits itself
    # Concurrent CREATE TABLE IF NOT EXISTS can collide in the catalogue; queue the creators.
    schema_lock="SELECT pg_advisory_xact_lock(7061757365)",
    errors=(psycopg.Error,),
    # a deadlock victim (40P01), a serialization failure (40001): the server aborted the
    # transaction and nothing of it was committed -- the unit may run again
    conflicts=(psycopg.errors.DeadlockDetected, psycopg.errors.SerializationFailure),
    row_lock=" FOR SHARE",
    lock_share=" FOR SHARE",
    lock_update=" FOR UPDATE",
    statement_commits=True,
    columns=("SELECT column_name FROM information_schema.columns "
             "WHERE table_schema = current_schema() AND table_name = ?"),
)

_SCHEMA_NAME = re.compile(r"[a-z_][a-z0-9_]{0,62}")

_SCHEMA_OBJECTS: Final[tuple[str, ...]] = tuple(
    m.group(1) for ddl in schema(POSTGRES)
    for m in [re.search(r"IF NOT EXISTS (\w+)", ddl)] if m is not None)
"""Every table and index :func:`~pausepoint.stores.sql.schema` creates, by name."""


class _Connection(psycopg.Connection[tuple[Any, ...]]):
    """A psycopg connection whose ``execute`` runs every statement on one cursor instead of a
    new one each time (no cursor and adapter map to build per statement): what it returns is
    valid until the connection's next statement, which is how the store reads it."""

    _cursor: psycopg.Cursor[tuple[Any, ...]] | None = None

    def execute(self, query: Any, params: Any = None, *, prepare: bool | None = None,
                binary: bool = False) -> Any:
        cur = self._cursor
        if cur is None or binary:
            if binary:
                return super().execute(query, params, prepare=prepare, binary=binary)
            cur = self._cursor = psycopg.Cursor(self)
        return cur.execute(query, params, prepare=prepare)


class PostgresStore(SqlStore):
    """Every store port in one PostgreSQL database (``durable = True``).

    ``dsn`` defaults to ``$PAUSEPOINT_PG_DSN``.  ``namespace``, if given, is a PostgreSQL schema
    (created if missing) holding this store's tables, so independent stores -- e.g. concurrent
    test runs -- can share one database without seeing each other."""

    def __init__(self, dsn: str | None = None, *, namespace: str | None = None,
                 connect_timeout: int = 10) -> None:
        dsn = dsn or os.environ.get(DSN_ENV, "")
        if not dsn:
            raise PausepointError(
                ErrorCode.WIRING_INVALID, "wiring.consistent",
                f"PostgresStore needs a connection string (argument or ${DSN_ENV})")
        if namespace is not None and not _SCHEMA_NAME.fullmatch(namespace):
            raise PausepointError(
                ErrorCode.WIRING_INVALID, "wiring.consistent",
                f"namespace {namespace!r} is not a plain lower-case SQL identifier")
        self.dsn = dsn
        self.namespace = namespace
        self.connect_timeout = connect_timeout
        super().__init__(POSTGRES, self._open)

    def create_schema(self) -> None:
        """Create the tables and indexes -- unless all of them are there already.  ``CREATE
        INDEX IF NOT EXISTS`` takes a share lock on its table even when the index exists, so a
        store opened while others write would queue behind their transactions and could
        deadlock with a multi-statement one; one catalogue read first avoids taking any lock."""
        present = self.read("SELECT count(to_regclass(name)) FROM unnest(?::text[]) AS name",
                            (list(_SCHEMA_OBJECTS),))
        if int(present[0][0]) != len(_SCHEMA_OBJECTS):
            super().create_schema()

    def _open(self) -> psycopg.Connection[tuple[Any, ...]]:
        conn = _Connection.connect(self.dsn, autocommit=True,
                                   connect_timeout=self.connect_timeout)
        try:
            if self.namespace is not None:
                assert POSTGRES.schema_lock is not None and POSTGRES.begin_write is not None
                conn.execute(POSTGRES.begin_write)  # the advisory lock is held to the COMMIT
                conn.execute(POSTGRES.schema_lock)
                conn.execute(f"CREATE SCHEMA IF NOT EXISTS {self.namespace}")
                conn.execute("SELECT set_config('search_path', %s, false)", (self.namespace,))
            conn.commit()
        except BaseException:
            conn.close()
            raise
        return conn

    def reset(self) -> None:
        """TEST HELPER: drop this store's tables and create them empty.  Destroys every pause,
        checkpoint, payload, effect and run in the database (or in ``namespace``)."""
        with self.transaction(write=True) as conn:
            for table in TABLES:
                self.execute(conn, f"DROP TABLE IF EXISTS {table}")
        self.create_schema()

    def drop_namespace(self) -> None:
        """TEST HELPER: drop ``namespace`` with everything in it, then close the store."""
        if self.namespace is None:
            raise PausepointError(ErrorCode.WIRING_INVALID, "wiring.consistent",
                                  "drop_namespace needs a store opened with a namespace")
        with self.transaction(write=True) as conn:
            self.execute(conn, f"DROP SCHEMA IF EXISTS {self.namespace} CASCADE")
        self.close()

    def __repr__(self) -> str:
        return f"PostgresStore(namespace={self.namespace!r})"
