"""The embedded durable default: SQLite in WAL mode, shareable by threads and processes.

Each thread gets its own connection (opened on first use) in autocommit mode, so the shared
code decides where transactions begin: writes open with ``BEGIN IMMEDIATE``, which takes the
database's single write lock before reading anything, so a conditional update in one process
cannot interleave with another's.  ``synchronous=FULL`` makes each commit durable before it is
reported (``durability.commit-per-change``); a 30 s busy timeout lets writers queue instead of
failing when several processes share the file.
"""

from __future__ import annotations

import os
import sqlite3
import time
from typing import Any

from pausepoint.core.clauses import ErrorCode
from pausepoint.core.errors import PausepointError
from pausepoint.stores.sql import Dialect, SqlStore

SQLITE: Dialect = Dialect(
    name="sqlite",
    placeholder="?",
    # the rowid: a new row gets the largest one plus one, so rows keep their insertion order
    # (no row is ever deleted but by ``clear``); AUTOINCREMENT would add a write of
    # sqlite_sequence -- one more page in every commit that inserts
    serial_key="INTEGER PRIMARY KEY",
    begin_write="BEGIN IMMEDIATE",
    schema_lock=None,  # BEGIN IMMEDIATE already serialises schema creation
    errors=(sqlite3.Error,),
    returning=sqlite3.sqlite_version_info >= (3, 39, 0),  # else a resume reads, then updates
    returning_is_cheap=False,  # its RETURNING rows go through a temporary b-tree
    commit="COMMIT",  # compiled once, kept in the connection's statement cache
    columns="SELECT name FROM pragma_table_info(?)",
)

BUSY_TIMEOUT_S: float = 30.0
PAGE_SIZE: int = 2048
"""The page size a new file is created with (SQLite's default is 4 KB).  Each commit writes
one frame of the write-ahead log per page it dirtied (a table's leaf and each index's), and
the commit's fsync must flush them all: smaller pages mean fewer bytes per frame, larger ones
fewer frames (and overflow pages) for a row that does not fit a page -- a bigger payload, a
run whose continuation data holds a bigger input.  With issue 15's 13-byte payload, 1 and 2 KB
pages time within 2 % of each other, either way, and 4 KB costs the service cycle 1-4 % more;
with an 8 KB payload 2 KB pages take 2-3 % less than 1 KB, with 32 KB 8-12 % less
(``bench/bench_page_size.py``).  ``bench/bench_cycle.py`` times a floor on a file
of each page size ("floor", "floor at the stores' page size") beside the stores' cycles.  A
file that already exists keeps the page size it was made with."""
MIN_SQLITE: tuple[int, int, int] = (3, 24, 0)  # INSERT ... ON CONFLICT ... DO UPDATE


class _Connection(sqlite3.Connection):
    """A sqlite3 connection whose ``execute`` runs every statement on one cursor, as the
    PostgreSQL store's does: sqlite3's own makes a cursor per statement and keeps a weak
    reference to each (swept every 200) -- new memory for each statement, each a cache miss
    in a cycle that runs with a cold cache.  Its ``execute`` *is* that cursor's (sqlite3's C
    method, bound once), so a statement enters no Python function of the store's.  What it
    returns is valid until the connection's next statement, which is how the store reads
    it."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.execute = self.cursor().execute  # type: ignore[method-assign]


class SqliteStore(SqlStore):
    """Every store port in one SQLite file (``durable = True``)."""

    def __init__(self, path: str | os.PathLike[str], *,
                 busy_timeout: float = BUSY_TIMEOUT_S, page_size: int = PAGE_SIZE) -> None:
        self.path = os.fspath(path)
        if self.path in ("", ":memory:") or self.path.startswith("file::memory:"):
            raise PausepointError(
                ErrorCode.WIRING_INVALID, "wiring.consistent",
                "SqliteStore needs a file (each thread opens its own connection, and an "
                "in-memory database would not be shared nor durable); use MemoryStore instead")
        if sqlite3.sqlite_version_info < MIN_SQLITE:
            raise PausepointError(  # pragma: no cover - every supported Python bundles newer
                ErrorCode.WIRING_INVALID, "wiring.consistent",
                f"SQLite {sqlite3.sqlite_version} is older than 3.24, which lacks upserts")
        if (type(page_size) is not int or not 512 <= page_size <= 65536
                or page_size & (page_size - 1)):
            raise PausepointError(
                ErrorCode.WIRING_INVALID, "wiring.consistent",
                f"SqliteStore page_size must be a power of two from 512 to 65536, "
                f"not {page_size!r}")
        self.busy_timeout = busy_timeout
        self.page_size = page_size
        super().__init__(SQLITE, self._open)

    def _open(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, timeout=self.busy_timeout, isolation_level=None,
                               check_same_thread=False, factory=_Connection)
        try:
            conn.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout * 1000)}")
            # before anything is written: a no-op on a file that already has its pages
            conn.execute(f"PRAGMA page_size = {int(self.page_size)}")
            mode = self._switch_to_wal(conn)
            if mode is None or str(mode[0]).lower() != "wal":
                raise sqlite3.OperationalError(f"could not switch {self.path} to WAL: {mode}")
            conn.execute("PRAGMA synchronous = FULL")
        except BaseException:
            conn.close()
            raise
        return conn

    def _switch_to_wal(self, conn: sqlite3.Connection) -> Any:
        """``PRAGMA journal_mode = WAL``, retried within the busy timeout: on a fresh file
        that other processes are opening at the same moment, SQLite answers "database is
        locked" at once instead of waiting in its busy handler."""
        deadline = time.monotonic() + self.busy_timeout
        while True:
            try:
                rows = conn.execute("PRAGMA journal_mode = WAL").fetchall()  # to its end
                return rows[0] if rows else None
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() >= deadline:
                    raise
                time.sleep(0.005)

    def __repr__(self) -> str:
        return f"SqliteStore({self.path!r})"
