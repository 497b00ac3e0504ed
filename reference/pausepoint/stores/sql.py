"""Every store port over a DB-API connection, once, for SQLite and PostgreSQL alike.

The two backends share every query, the schema and all row <-> record mapping; what differs
between them is a small :class:`Dialect` (placeholder style, the auto-numbered key's DDL, how a
write transaction begins, how concurrent schema creation is serialised, which exceptions the
driver raises) plus the function that opens a connection.  ``INSERT ... ON CONFLICT`` with
``excluded`` is common to both (SQLite >= 3.24, PostgreSQL >= 9.5), so the upsert text lives
here, not in the dialect.

Guarantees, for every facet:

* every method commits before it returns (``durability.commit-per-change``); a driver error
  rolls the transaction back and surfaces as ``store_unavailable`` (nothing was changed --
  except when the connection broke during ``COMMIT`` itself, which no client can tell) --
  unless it runs inside :meth:`SqlStore.unit_of_work`, whose writes all commit together, once,
  when the unit ends (or none does) -- or, at :meth:`SqlStore.commit_so_far`, those made so
  far;
* ``ledger.transition`` is one conditional ``UPDATE ... WHERE interrupt_id = ? AND version = ?``
  that bumps the version: the database's row lock picks exactly one winner among any number of
  threads, processes or servers (``resume.consume.single-winner``);
* ``ledger.issue`` is ``INSERT ... ON CONFLICT DO NOTHING``: a duplicate changes nothing; it
  runs under a shared lock on its key's row and refuses a key marked retired, and
  ``ledger.retire_key`` counts and marks under the exclusive lock, so a retirement and a mint
  are ordered (``token.rotation.drain``);
* a parameter that is not Unicode text without NUL is refused with ``input_invalid`` before
  it reaches the driver, and a row that does not map back to a record is ``store_corrupt``
  (``input.bounded``);
* sequences come back in insertion order (an auto-numbered ``seq``; an upsert keeps it).
"""

from __future__ import annotations

import itertools
import operator
import os
import re
import threading
import typing
import weakref
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from types import TracebackType
from typing import Any, Final, Protocol

import attrs

from pausepoint.core.canonical import is_storable
from pausepoint.core.clauses import ErrorCode
from pausepoint.core.errors import PausepointError, StoreConflict
from pausepoint.core.lifecycle import OUTSTANDING, PauseState, Phase
from pausepoint.core.ports import (
    CheckpointStore,
    Claims,
    EffectStatus,
    PauseRecord,
    RunRecord,
    RunStatus,
)
from pausepoint.core.runs import CANCELLED_OR_CANCELLING
from pausepoint.core.tokens import token_parts, token_signature, token_text

# -- the DB-API surface we use ---------------------------------------------------------------


class DBConnection(Protocol):
    """The part of a DB-API connection used here (sqlite3's and psycopg's both have
    ``execute`` returning a cursor with ``fetchall`` and ``rowcount``).  Each store's
    connection runs every statement on one cursor of its own, valid until its next statement
    and closed with the connection, so the store never closes a cursor it was handed."""

    def execute(self, query: str, params: Sequence[Any] = ..., /) -> Any: ...

    def commit(self) -> None: ...

    def rollback(self) -> None: ...

    def close(self) -> None: ...


@attrs.frozen
class Dialect:
    """What SQLite and PostgreSQL disagree on -- and nothing else."""

    name: str
    placeholder: str
    """Parameter marker: ``?`` (qmark) or ``%s`` (format).  Queries here are written with ``?``."""
    serial_key: str
    """DDL of an auto-numbered primary key column named ``seq``."""
    begin_write: str | None
    """Statement opening a write transaction (``BEGIN IMMEDIATE`` takes SQLite's write lock up
    front); None where the driver opens transactions implicitly."""
    schema_lock: str | None
    """Statement run first in the schema transaction so concurrent creators queue up."""
    errors: tuple[type[Exception], ...]
    """The driver's exception base classes, mapped to ``store_unavailable``."""
    conflicts: tuple[type[Exception], ...] = ()
    """Among ``errors``, those by which the database aborted a transaction to break a
    conflict (a deadlock victim, a serialization failure): nothing of it was committed, so the
    unit may run again (:class:`~pausepoint.core.errors.StoreConflict`).  None on SQLite,
    whose one writer at a time cannot deadlock."""
    row_lock: str = ""
    """Appended to a sub-``SELECT`` that a conditional insert depends on, so the row it reads
    cannot change before the insert commits (``FOR SHARE``: under READ COMMITTED the read waits
    for a concurrent writer and re-checks the new row).  SQLite needs none: ``BEGIN
    IMMEDIATE`` already serialises every write."""
    lock_share: str = ""
    """Suffix of a ``SELECT`` that takes a shared lock on the rows it reads (``FOR SHARE``);
    empty where ``begin_write`` already serialises writers (SQLite)."""
    lock_update: str = ""
    """Suffix of a ``SELECT`` that takes an exclusive lock on the rows it reads."""
    statement_commits: bool = False
    """The connection is in autocommit mode and one statement is its own transaction, durably
    committed before the server answers: a one-statement read or write then needs no
    BEGIN/COMMIT round trips (``begin_write`` opens the multi-statement transactions)."""
    returning: bool = True
    """``UPDATE ... RETURNING`` and ``IS NOT DISTINCT FROM`` are there (SQLite >= 3.39): the
    ledger then consumes a resume in one conditional write (:class:`ConsumingSqlLedger`)."""
    returning_is_cheap: bool = True
    """The consume's ``UPDATE`` returns the row it wrote (one round trip to a server).  False
    where ``RETURNING`` costs more than a second statement in the same transaction: SQLite
    gathers a statement's returned rows in a temporary b-tree, opened for each statement
    (some 250 cold cache lines of its pager and b-tree code per resume)."""
    commit: str | None = None
    """The statement that commits a transaction ``begin_write`` opened, run like any other
    (from the driver's statement cache); None: the connection's ``commit()``.  sqlite3's
    ``commit()`` compiles its ``COMMIT`` anew on every call (CPython 3.11): some 200 cold
    cache lines of SQLite's parser per pause -> resume cycle."""

    columns: str = ""
    """A query of the names of the columns of the table named by its one parameter (no rows
    when there is no such table)."""

    def sql(self, query: str) -> str:
        return query if self.placeholder == "?" else query.replace("?", self.placeholder)


# -- schema ----------------------------------------------------------------------------------

TEXT: Final = "TEXT NOT NULL"
INT: Final = "BIGINT NOT NULL"

PAUSES: Final = "pausepoint_pauses"
CHECKPOINTS: Final = "pausepoint_checkpoints"
PAYLOADS: Final = "pausepoint_payloads"
EFFECTS: Final = "pausepoint_effects"
RUNS: Final = "pausepoint_runs"
KEYS: Final = "pausepoint_keys"
TABLES: Final[tuple[str, ...]] = (PAUSES, CHECKPOINTS, PAYLOADS, EFFECTS, RUNS, KEYS)

_CLAIM_RENAMES: Final[dict[str, str]] = {"expires_at": "claim_expires_at"}
"""Claims columns whose field name collides with a state column."""


def _claim_columns() -> tuple[tuple[str, str, str], ...]:
    """(field, column, DDL type) for every :class:`Claims` field, derived from the class so a new
    claim gets a column without a second list to keep in step."""
    hints = typing.get_type_hints(Claims)
    cols = []
    for f in attrs.fields(Claims):
        ddl = {str: TEXT, int: INT}[hints[f.name]]
        cols.append((f.name, _CLAIM_RENAMES.get(f.name, f.name), ddl))
    return tuple(cols)


CLAIM_COLUMNS: Final = _claim_columns()

PAUSE_COLUMNS: Final[tuple[tuple[str, str], ...]] = (
    *((col, ddl) for _f, col, ddl in CLAIM_COLUMNS),
    ("kid", TEXT),
    ("signature", TEXT),
    ("payload", TEXT),
    ("phase", TEXT),
    ("expires_at", INT),
    ("turn_recorded", INT),
    ("response_digest", "TEXT"),
    ("consumed_at", "BIGINT"),
    ("parent_run_id", TEXT),
    ("result", "TEXT"),
    ("version", INT),
)
RUN_COLUMNS: Final[tuple[tuple[str, str], ...]] = (
    ("run_id", TEXT), ("root_run_id", TEXT), ("parent_run_id", TEXT), ("session_id", TEXT),
    ("thread_id", TEXT), ("scope", TEXT), ("status", TEXT), ("state", TEXT), ("epoch", INT),
    ("owner", TEXT), ("lease_until", INT),
)


def _outstanding_sql() -> str:
    """The condition of an outstanding pause, its phases written out (the lifecycle's names,
    never input): the partial index of outstanding pauses is used only by a query whose
    condition is the index's own, word for word -- parameters would hide it from the planner."""
    phases = sorted(p.value for p in OUTSTANDING)
    assert all(re.fullmatch("[a-z_]+", p) for p in phases)
    # OR, not IN: SQLite evaluates an IN list by building a temporary table -- on every
    # write to the pauses, for the index
    return "(" + " OR ".join(f"phase = '{p}'" for p in phases) + ")"


_OUTSTANDING_SQL: Final = _outstanding_sql()


def _table(name: str, dialect: Dialect, columns: Sequence[tuple[str, str]],
           unique: str) -> str:
    body = ", ".join([f"seq {dialect.serial_key}", *(f"{c} {t}" for c, t in columns),
                      f"UNIQUE ({unique})"])
    return f"CREATE TABLE IF NOT EXISTS {name} ({body})"


def schema(dialect: Dialect) -> tuple[str, ...]:
    """The library's own DDL: one table per port, created if missing."""
    return (
        _table(PAUSES, dialect, PAUSE_COLUMNS, "interrupt_id"),
        _table(CHECKPOINTS, dialect,
               (("checkpoint_id", TEXT), ("thread_id", TEXT), ("turn", TEXT)), "checkpoint_id"),
        _table(PAYLOADS, dialect, (("interrupt_id", TEXT), ("payload", TEXT)), "interrupt_id"),
        _table(EFFECTS, dialect, (("run_id", TEXT), ("effect_key", TEXT), ("status", TEXT),
                                  ("epoch", INT)), "run_id, effect_key"),
        _table(RUNS, dialect, RUN_COLUMNS, "run_id"),
        _table(KEYS, dialect, (("kid", TEXT), ("retired", INT)), "kid"),
        f"CREATE INDEX IF NOT EXISTS {PAUSES}_run ON {PAUSES} (run_id)",
        # outstanding pauses only: a pause that leaves them (consumed, expired, cancelled)
        # adds no entry, so its last write inserts into one index fewer
        f"DROP INDEX IF EXISTS {PAUSES}_phase",
        (f"CREATE INDEX IF NOT EXISTS {PAUSES}_outstanding ON {PAUSES} (seq) "
         f"WHERE {_OUTSTANDING_SQL}"),
        f"CREATE INDEX IF NOT EXISTS {CHECKPOINTS}_thread ON {CHECKPOINTS} (thread_id, seq)",
        f"CREATE INDEX IF NOT EXISTS {EFFECTS}_run ON {EFFECTS} (run_id, status)",
        # child runs only: a root run (no parent, most runs) adds no entry, so its start
        # dirties no page of this index (one page fewer in the start's commit)
        f"DROP INDEX IF EXISTS {RUNS}_parent",
        (f"CREATE INDEX IF NOT EXISTS {RUNS}_child ON {RUNS} (parent_run_id) "
         "WHERE parent_run_id <> ''"),
    )


def _marks(n: int) -> str:
    return ", ".join("?" * n)


def _insert(table: str, columns: Sequence[str], conflict: str, update: Sequence[str]) -> str:
    """``INSERT``; on a duplicate ``conflict`` key update ``update`` (or, if empty, do nothing)."""
    action = ("DO UPDATE SET " + ", ".join(f"{c} = excluded.{c}" for c in update)
              if update else "DO NOTHING")
    return (f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({_marks(len(columns))}) "
            f"ON CONFLICT ({conflict}) {action}")


# -- row <-> record --------------------------------------------------------------------------

PAUSE_NAMES: Final = tuple(c for c, _t in PAUSE_COLUMNS)
_PAUSE_SELECT: Final = f"SELECT {', '.join(PAUSE_NAMES)} FROM {PAUSES}"
_RUN_NAMES: Final = tuple(c for c, _t in RUN_COLUMNS)
_RUN_SELECT: Final = f"SELECT {', '.join(_RUN_NAMES)} FROM {RUNS}"


_CLAIM_NAMES: Final = tuple(f for f, _c, _t in CLAIM_COLUMNS)
_claim_values: Final[Callable[[Claims], tuple[Any, ...]]] = operator.attrgetter(*_CLAIM_NAMES)
"""A claims' values in column order."""


_TEXT: Final[dict[Phase | RunStatus, str]] = {
    **{p: p.value for p in Phase}, **{st: st.value for st in RunStatus}}
"""A phase's or run status's stored text, by member: ``member.value`` without its Python-level
descriptor (a phase and a status of the same text share an entry, with that text)."""
_PHASE_OF: Final = {p.value: p for p in Phase}
_STATUS_OF: Final = {st.value: st for st in RunStatus}
"""A stored text's member: ``Phase(text)``, ``RunStatus(text)`` without the enum's Python-level
call (an unknown text: ``KeyError``)."""


def pause_to_row(r: PauseRecord) -> tuple[Any, ...]:
    """The ledger row of ``r``: its token kept as its signature alone (:func:`row_to_pause`
    rebuilds the rest from the key id and the claims); ``input_invalid`` when ``r``'s token is
    not the one :meth:`~pausepoint.core.tokens.KeyRing.mint` writes for its key id and claims
    (a row could not give it back)."""
    signature = token_signature(r.token, r.kid, r.claims)
    if signature is None:
        raise PausepointError(
            ErrorCode.INPUT_INVALID, "input.bounded",
            "the pause's token is not the token of its key id and claims (format 1); the "
            "ledger keeps a token as its signature and rebuilds the rest, so nothing was "
            "written")
    s = r.state
    return (
        *_claim_values(r.claims),
        r.kid, signature, r.payload, _TEXT[s.phase], s.expires_at, int(s.turn_recorded),
        s.response_digest, s.consumed_at, r.parent_run_id, r.result, r.version,
    )


def _corrupt(what: str, exc: Exception) -> PausepointError:
    return PausepointError(ErrorCode.STORE_CORRUPT, "input.bounded",
                           f"a stored {what} row is not a valid record ({type(exc).__name__})")


_NULLABLE: Final = object()


def _row_types(*columns: type | tuple[type, object]) -> frozenset[tuple[type, ...]]:
    """Every tuple of exact Python types a row of these columns may come back with (a column
    ``(t, _NULLABLE)`` is ``t`` or NULL): one set lookup checks a whole row."""
    kinds = [(c[0], type(None)) if isinstance(c, tuple) else (c,) for c in columns]
    return frozenset(itertools.product(*kinds))


_CLAIM_TYPES: Final = {f.name: typing.get_type_hints(Claims)[f.name] for f in attrs.fields(Claims)}
_PAUSE_ROW: Final = _row_types(
    *(_CLAIM_TYPES[f] for f in _CLAIM_NAMES),
    str, str, str, str, int, int, (str, _NULLABLE), (int, _NULLABLE), str, (str, _NULLABLE), int)
"""kid, signature, payload, phase, expires_at, turn_recorded, response_digest, consumed_at,
parent_run_id, result, version after the claims: what :func:`pause_to_row` writes."""
_N_CLAIMS: Final = len(_CLAIM_NAMES)


def row_to_pause(row: Sequence[Any]) -> PauseRecord:
    """The record of a ledger row; ``store_corrupt`` if the row is not one this store wrote
    (every column of exactly the type written, the phase one of the lifecycle's)."""
    if tuple(map(type, row)) not in _PAUSE_ROW:
        raise _corrupt("ledger", TypeError("a column of another type"))
    (kid, signature, payload, phase, expires_at, turn_recorded, response_digest, consumed_at,
     parent_run_id, result, version) = row[_N_CLAIMS:]
    claims = Claims(*row[:_N_CLAIMS])
    try:
        state = PauseState(_PHASE_OF[phase], expires_at, bool(turn_recorded), response_digest,
                           consumed_at)
        token = token_text(kid, claims, signature)
    except (ValueError, KeyError, TypeError) as exc:
        raise _corrupt("ledger", exc) from None
    return PauseRecord(claims, kid, token, payload, state, parent_run_id, result, version)


def run_to_row(r: RunRecord) -> tuple[Any, ...]:
    return (r.run_id, r.root_run_id, r.parent_run_id, r.session_id, r.thread_id, r.scope,
            _TEXT[r.status], r.state, r.epoch, r.owner, r.lease_until)


def row_to_run(row: Sequence[Any]) -> RunRecord:
    try:
        (run_id, root_run_id, parent_run_id, session_id, thread_id, scope, status, state, epoch,
         owner, lease_until) = row
        return RunRecord(run_id=run_id, root_run_id=root_run_id, parent_run_id=parent_run_id,
                         session_id=session_id, thread_id=thread_id, scope=scope,
                         status=_STATUS_OF[status], state=state, epoch=int(epoch), owner=owner,
                         lease_until=int(lease_until))
    except (ValueError, TypeError, KeyError) as exc:
        raise _corrupt("run", exc) from None


# -- the store -------------------------------------------------------------------------------


class SqlStore:
    """A store bundle over one database: a connection per thread (opened by ``connect``), one
    transaction per method, committed before the method returns.

    Subclasses (:class:`~pausepoint.stores.SqliteStore`,
    :class:`~pausepoint.stores.PostgresStore`) pick the dialect and say how to connect."""

    durable: bool = True
    rolls_back: bool = True
    """A unit of work that raises commits nothing of what it wrote since its last commit
    (:meth:`unit_of_work`): a service may write a row in its final state and refuse after."""

    @property
    def serial_units(self) -> bool:
        """A unit of work holds the store's write lock from its first statement to each
        commit (SQLite's ``BEGIN IMMEDIATE``): no one else writes between what it reads and
        what it writes (:class:`~pausepoint.stores.base.Units`)."""
        return not self.dialect.lock_share

    def __init__(self, dialect: Dialect, connect: Callable[[], DBConnection]) -> None:
        self.dialect = dialect
        self._connect = connect
        self._local = _Local()
        self._all: list[weakref.finalize[[DBConnection], threading.Thread]] = []
        self._all_lock = threading.Lock()
        self._closed = False
        self._closable = False
        """This store's connections say when they broke (psycopg's ``closed``): checked before
        each use.  sqlite3's have no such flag."""
        self._pid = _PID[0]
        self._inherited: list[object] = []
        self._texts: dict[str, str] = {}
        """Each query in the driver's placeholder style, by its ``?`` text."""
        self.ledger = ConsumingSqlLedger(self) if dialect.returning else SqlLedger(self)
        self.checkpoints = SqlCheckpoints(self)
        self.payloads = SqlPayloads(self)
        self.effects = SqlEffects(self)
        self.runs = SqlRuns(self)
        self._refuse_old_schema()
        self.create_schema()

    def _refuse_old_schema(self) -> None:
        """Refuse, before creating or changing anything, a database whose ledger an earlier
        version made: it keeps each pause's whole token (a ``token`` column), where this one
        keeps its signature (a ``signature`` column) and rebuilds the token."""
        try:
            columns = {str(row[0]) for row in self.read(self.dialect.columns, (PAUSES,))}
        except PausepointError:
            self.close()
            raise
        if columns and "signature" not in columns:
            self.close()
            raise PausepointError(
                ErrorCode.WIRING_INVALID, "wiring.consistent",
                f"the {self.dialect.name} database's {PAUSES} table was made by an earlier "
                "pausepoint (a token column, no signature column) and is left as it is: "
                "resume or cancel its outstanding pauses with that version, then open this "
                f"version on a new database (or after dropping the {', '.join(TABLES)} "
                "tables)")

    # connections: one per thread, closed when the thread is gone or the store is closed

    def _thread(self) -> _Local:
        """This thread's state (its connection, its unit of work) -- in a forked child, fresh:
        a child must not use, close or even free the parent's connections (freeing a libpq
        connection says goodbye on the shared socket), so they are kept, unused.  The fork
        check compares a number the fork handler renews in the child: no system call."""
        if self._pid != _PID[0]:
            for fin in self._all:
                fin.detach()
            self._inherited.append((self._local, self._all))
            self._pid, self._local, self._all = _PID[0], _Local(), []
        return self._local

    def _conn(self) -> DBConnection:
        return self._conn_of(self._thread())

    def _conn_of(self, local: _Local) -> DBConnection:
        """``local``'s connection, opened on first use (and again after it broke)."""
        conn = local.conn
        if conn is not None and not (self._closable and getattr(conn, "closed", False)):
            return conn
        if conn is not None:
            self._discard()
        if self._closed:
            raise PausepointError(ErrorCode.STORE_UNAVAILABLE, "durability.commit-per-change",
                                  f"this {self.dialect.name} store was closed")
        conn = self._guard(self._connect)
        self._closable = self._closable or hasattr(conn, "closed")
        fin = weakref.finalize(threading.current_thread(), _close_quietly, conn)
        fin.atexit = False
        local.conn, local.fin = conn, fin
        with self._all_lock:
            self._all = [f for f in self._all if f.alive]
            self._all.append(fin)
        return conn

    def _discard(self) -> None:
        """Close and forget this thread's connection (it failed); the next call opens anew."""
        local = self._local
        fin, local.conn, local.fin = local.fin, None, None
        if fin is not None:
            fin()

    def close(self) -> None:
        """Close every connection this store opened, in any thread."""
        self._closed = True
        with self._all_lock:
            fins, self._all = self._all, []
        for fin in fins:
            fin()
        self._local = _Local()

    def _guard(self, fn: Callable[[], DBConnection]) -> DBConnection:
        try:
            return fn()
        except self.dialect.errors as exc:
            raise self._unavailable(exc) from exc

    def _unavailable(self, exc: Exception, committing: bool = False,
                     conflict: bool | None = None) -> PausepointError:
        """``store_unavailable`` for the driver error ``exc``; a :class:`StoreConflict` when
        the database aborted the transaction to break a conflict (``conflict``: the unit's own
        verdict, inside a unit) -- nothing of it was committed, even at a commit."""
        if conflict is None:
            conflict = isinstance(exc, self.dialect.conflicts)
        if conflict:
            return StoreConflict(
                "durability.commit-per-change",
                f"the {self.dialect.name} store aborted the transaction to break a conflict "
                f"with a concurrent one ({type(exc).__name__}: {exc}); nothing was changed")
        outcome = ("the failure hit the commit itself, so the change may or may not have "
                   "been applied" if committing else "nothing was changed")
        return PausepointError(
            ErrorCode.STORE_UNAVAILABLE, "durability.commit-per-change",
            f"the {self.dialect.name} store did not answer ({type(exc).__name__}: {exc}); "
            f"{outcome}")

    # transactions

    def unit_of_work(self) -> AbstractContextManager[None]:
        """One write transaction for every store call this thread makes inside it, on any
        facet: their rows commit together, once, when the block ends -- one durable commit (one
        fsync on SQLite) instead of one per call -- or, if the block raises or any statement in
        it failed, none of them does.  Each write stays as conditional as it is alone (the
        version and epoch checks are in its statement); on SQLite ``BEGIN IMMEDIATE`` holds the
        write lock for the whole unit.  A write that fails inside the unit raises
        ``store_unavailable`` as usual, and the unit then commits nothing even if the caller
        went on (a failed statement may have aborted the transaction).  Nested units join the
        outermost one.  :meth:`commit_so_far` commits the unit's writes so far and goes on."""
        return _Unit(self)

    def commit_so_far(self) -> None:
        """Inside a unit of work: commit its writes so far -- durably, exactly as the unit's
        end would -- and go on; the unit's next store call opens its next transaction
        (``BEGIN IMMEDIATE`` on SQLite, so nothing holds the write lock in between).  Outside a
        unit: nothing to do.  A unit whose statement failed commits nothing here either
        (``store_unavailable``); a failure of the commit itself spoils the rest of the unit."""
        local = self._thread()
        conn = local.unit
        if conn is None or not local.unit_open:
            return
        self._check_unit()
        try:
            if self.dialect.commit is None:
                conn.commit()
            else:  # the unit's transaction is open: begin_write opened it
                conn.execute(self.dialect.commit)
        except self.dialect.errors as exc:
            raise self._unit_failure(exc, committing=True) from exc
        local.unit_open = False
        local.unit_committed = True

    def _unit_failure(self, exc: Exception, committing: bool = False) -> PausepointError:
        """Mark the unit failed by the driver error ``exc``: a conflict (the first failure
        of the unit decides) while nothing of the unit committed yet is a
        :class:`StoreConflict` -- the whole unit may run again -- and so is every later
        failure of that unit; after a :meth:`commit_so_far` it is plain
        ``store_unavailable``."""
        local = self._local
        if not local.unit_failed:
            local.unit_conflict = isinstance(exc, self.dialect.conflicts)
        local.unit_failed = True
        return self._unavailable(exc, committing,
                                 conflict=local.unit_conflict and not local.unit_committed)

    def _check_unit(self) -> None:
        local = self._local
        if local.unit_failed and local.unit_conflict and not local.unit_committed:
            raise StoreConflict(
                "durability.commit-per-change",
                f"a write of this unit of work was aborted by the {self.dialect.name} store "
                "to break a conflict with a concurrent transaction; nothing of the unit was "
                "committed")
        if local.unit_failed:
            raise PausepointError(
                ErrorCode.STORE_UNAVAILABLE, "durability.commit-per-change",
                f"a write of this unit of work failed on the {self.dialect.name} store; "
                "nothing of the unit since its last commit was committed")

    def transaction(self, write: bool, single: bool = False) -> AbstractContextManager[
            DBConnection]:
        """One transaction on this thread's connection, committed on success and rolled back
        on any error; driver errors become ``store_unavailable``.  ``single``: the caller runs
        exactly one statement, which commits by itself where the dialect allows it.  Inside
        :meth:`unit_of_work` it is the unit's transaction, which commits when the unit ends."""
        return _Transaction(self, write, single)

    def _rollback(self, conn: DBConnection) -> None:
        try:
            conn.rollback()
        except self.dialect.errors:
            self._discard()

    def execute(self, conn: DBConnection, query: str, params: Sequence[Any] = ()) -> Any:
        """Run ``query`` (written with ``?``) on ``conn``; its cursor, valid until the next
        statement on ``conn`` (the PostgreSQL store reuses one cursor per connection).  Every
        text parameter is checked first: no NUL, no lone surrogate (``input.bounded``)."""
        # the text parameters joined (filter with a C predicate: no Python loop per parameter)
        if not is_storable("".join(filter(_IS_TEXT, params))):
            raise PausepointError(
                ErrorCode.INPUT_INVALID, "input.bounded",
                "a value holds a NUL or a lone surrogate; no store keeps it as the same "
                "text, so nothing was written")
        dialect = self.dialect
        if dialect.placeholder != "?":
            sql = self._texts.get(query)
            if sql is None:
                sql = self._texts[query] = dialect.sql(query)
            query = sql
        return conn.execute(query, params if type(params) is tuple else tuple(params))

    def read(self, query: str, params: Sequence[Any] = ()) -> list[Any]:
        """Run one query (in its own transaction, or the unit's); return its rows."""
        rows: list[Any] = self.statement(query, params, write=False, rows=True)
        return rows

    def write(self, query: str, params: Sequence[Any] = ()) -> int:
        """Run one statement in its own committed transaction; return its row count."""
        count: int = self.statement(query, params, write=True, rows=False)
        return count

    def statement(self, query: str, params: Sequence[Any], write: bool, rows: bool) -> Any:
        """Run one statement in its own transaction (committed, when ``write``), or the
        unit's; its rows (``rows``) or its row count."""
        # self._thread(), its common case inlined: not in a forked child
        local = self._local if self._pid == _PID[0] else self._thread()
        conn = local.unit
        if conn is not None and local.unit_open:
            # the unit's open transaction, without a _Transaction object: exactly what its
            # __enter__ and __exit__ do there (the connection as it is; a driver error marks
            # the unit failed, anything else passes through)
            try:
                cur = self.execute(conn, query, params)
                out = cur.fetchall() if rows else cur.rowcount
            except self.dialect.errors as exc:
                raise self._unit_failure(exc) from exc
            return out
        with _Transaction(self, write, True) as conn:
            cur = self.execute(conn, query, params)
            return cur.fetchall() if rows else cur.rowcount

    def clear(self) -> None:
        """Delete every row of every table, in one committed transaction: a fresh, empty store
        on the same file or schema (for test and conformance resets; never called by the
        services)."""
        with self.transaction(write=True) as conn:
            for table in TABLES:
                self.execute(conn, f"DELETE FROM {table}")

    def create_schema(self) -> None:
        with self.transaction(write=True) as conn:
            if self.dialect.schema_lock is not None:
                self.execute(conn, self.dialect.schema_lock)
            for ddl in schema(self.dialect):
                self.execute(conn, ddl)



_IS_TEXT: Final[Callable[[object], bool]] = str.__instancecheck__
"""``isinstance(value, str)``, as a C callable."""

_PID: Final = [os.getpid()]
"""This process's id, renewed in a forked child (by the fork handler below): the stores' fork
check reads it instead of asking the system each time."""


def _forked() -> None:
    _PID[0] = os.getpid()


os.register_at_fork(after_in_child=_forked)


class _Local(threading.local):
    """A thread's state in one store: its connection, and its unit of work, if one is open."""

    conn: DBConnection | None = None
    fin: weakref.finalize[[DBConnection], threading.Thread] | None = None
    unit: DBConnection | None = None
    """The unit of work's connection while one is open (:meth:`SqlStore.unit_of_work`)."""
    unit_open = False
    """The unit's transaction is open (not yet committed by ``commit_so_far``)."""
    unit_failed = False
    unit_conflict = False
    unit_committed = False


class _Transaction:
    """:meth:`SqlStore.transaction`: a plain class, not a generator -- the store enters one for
    every statement."""

    __slots__ = ("_alone", "_began", "_conn", "_in_unit", "_s", "_write")

    def __init__(self, store: SqlStore, write: bool, single: bool) -> None:
        self._s, self._write = store, write
        self._alone = single and store.dialect.statement_commits
        """A lone statement commits as it runs (a failure there is of unknown outcome)."""

    def __enter__(self) -> DBConnection:
        s = self._s
        local = s._local if s._pid == _PID[0] else s._thread()  # _thread(), inlined
        conn = local.unit
        if conn is not None:  # the unit's transaction, which commits when the unit ends
            self._in_unit = True
            if not local.unit_open:  # the unit's next transaction, after commit_so_far
                s._check_unit()
                begin = s.dialect.begin_write
                try:
                    if begin is not None:
                        conn.execute(begin)
                except s.dialect.errors as exc:
                    raise s._unit_failure(exc) from exc
                local.unit_open = True
            self._conn = conn
            return conn
        self._in_unit = False
        conn = self._conn = s._conn_of(local)
        begin = s.dialect.begin_write if self._write and not self._alone else None
        self._began = begin is not None
        if begin is not None:
            try:
                conn.execute(begin)
            except s.dialect.errors as exc:
                s._rollback(conn)
                raise s._unavailable(exc) from exc
        return conn

    def __exit__(self, typ: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        s = self._s
        errors = s.dialect.errors
        if self._in_unit:
            if exc is not None and isinstance(exc, errors):
                raise s._unit_failure(exc) from exc
            return
        conn = self._conn
        if exc is None:
            if self._alone:  # committed by the server as it ran: nothing left to commit
                return
            commit = s.dialect.commit
            try:
                if commit is None or not self._began:
                    conn.commit()
                else:
                    conn.execute(commit)
            except errors as err:
                s._rollback(conn)
                raise s._unavailable(err, self._write) from err
            return
        s._rollback(conn)
        if isinstance(exc, errors):
            raise s._unavailable(exc, self._alone and self._write) from exc


class _Unit:
    """:meth:`SqlStore.unit_of_work`."""

    __slots__ = ("_local", "_s", "_tx")

    def __init__(self, store: SqlStore) -> None:
        self._s = store
        self._tx: _Transaction | None = None

    def __enter__(self) -> None:
        s = self._s
        local = s._local if s._pid == _PID[0] else s._thread()  # _thread(), inlined
        if local.unit is not None:  # nested: joins the outermost unit
            return
        tx = _Transaction(s, True, False)
        conn = tx.__enter__()
        self._tx, self._local = tx, local
        local.unit, local.unit_failed, local.unit_open = conn, False, True
        local.unit_conflict = local.unit_committed = False

    def __exit__(self, typ: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        tx = self._tx
        if tx is None:
            return
        local = self._local
        committed = local.unit_committed
        try:
            verdict: BaseException | None = None
            try:
                # a failed statement decides the unit: at its end, and when the conflict it
                # met is the cause of what the block raised (say so)
                # (_check_unit raises only for a failed unit: not called for a sound one)
                if local.unit_failed and (exc is None or (isinstance(exc, Exception)
                                                          and local.unit_conflict)):
                    self._s._check_unit()
            except PausepointError as err:
                verdict = err
            finally:
                committed, local.unit = local.unit_committed, None
            if verdict is None:
                # after commit_so_far with no statement since, no transaction is open: nothing
                # for a COMMIT statement to end (the connection's commit() is a no-op there)
                tx._began = tx._began and local.unit_open
                tx.__exit__(typ, exc, tb)
                if exc is not None and isinstance(exc, StoreConflict) and committed:
                    raise self._partly(exc) from exc
                return
            tx.__exit__(type(verdict), verdict, verdict.__traceback__)
            raise verdict
        except StoreConflict as err:
            if not committed:
                raise
            raise self._partly(err) from err

    def _partly(self, exc: StoreConflict) -> PausepointError:
        """Never run again: part of the unit is committed."""
        return PausepointError(
            ErrorCode.STORE_UNAVAILABLE, "durability.commit-per-change",
            f"the {self._s.dialect.name} store aborted the rest of this unit of work to break "
            "a conflict; what it committed before stays committed")


def _close_quietly(conn: DBConnection) -> None:
    try:
        conn.close()
    except Exception:  # pragma: no cover - best effort on an already broken connection
        pass


class _Facet:
    durable: bool = True

    def __init__(self, store: SqlStore) -> None:
        self._s = store


class SqlLedger(_Facet):
    """:class:`pausepoint.core.ports.Ledger` over SQL."""

    def __init__(self, store: SqlStore) -> None:
        super().__init__(store)
        dialect = store.dialect
        self._reads_first = not dialect.lock_share
        """Writes are serialised (SQLite's ``BEGIN IMMEDIATE`` holds the write lock from a
        transaction's first statement to its commit), so what an issue reads in its
        transaction still holds when it inserts: it reads whether the key is retired and --
        fenced -- whether the run carries the epoch (one statement, :attr:`_KEY_AND_EPOCH`),
        then inserts its row with a plain ``INSERT`` (an ``INSERT ... SELECT ... WHERE`` of
        those conditions runs its ``SELECT`` as a coroutine: some 250-400 cold cache lines more per
        pause, counted with cachegrind).  Elsewhere the key's row is
        created and share-locked first, and the fence is the insert's own condition (the run's
        row read with the dialect's row lock)."""
        fence = f"EXISTS ({self._EPOCH_HELD}{dialect.row_lock})"
        self._issue_sql = {
            fenced: self._conditional_issue(
                [fence] if fenced and not self._reads_first else [])
            for fenced in (False, True)}
        """The issue's statement, unfenced and fenced: one ``INSERT ... ON CONFLICT DO
        NOTHING`` that lands only if its conditions (if any) hold."""

    @staticmethod
    def _conditional_issue(conditions: Sequence[str]) -> str:
        if not conditions:
            return _insert(PAUSES, PAUSE_NAMES, "interrupt_id", ())
        return (f"INSERT INTO {PAUSES} ({', '.join(PAUSE_NAMES)}) "
                f"SELECT {_marks(len(PAUSE_NAMES))} WHERE {' AND '.join(conditions)} "
                "ON CONFLICT (interrupt_id) DO NOTHING")

    _TRANSITION: Final = (
        f"UPDATE {PAUSES} SET phase = ?, expires_at = ?, turn_recorded = ?, "
        "response_digest = ?, consumed_at = ?, result = COALESCE(?, result), "
        "version = version + 1 WHERE interrupt_id = ? AND version = ?")

    _KEY_ROW: Final = _insert(KEYS, ("kid", "retired"), "kid", ())

    _EPOCH_HELD: Final = f"SELECT 1 FROM {RUNS} WHERE run_id = ? AND epoch = ?"
    _RETIRED: Final = f"EXISTS (SELECT 1 FROM {KEYS} WHERE kid = ? AND retired <> 0)"
    _KEY_AND_EPOCH: Final = {False: f"SELECT {_RETIRED}, 1",
                             True: f"SELECT {_RETIRED}, EXISTS ({_EPOCH_HELD})"}
    """Whether the key is retired, and (fenced) whether the run's row carries the epoch:
    where writes are serialised, an issue's reads before its insert, one statement."""

    def _key_retired(self, conn: DBConnection, kid: str, lock: str) -> bool:
        """Whether ``kid`` is retired, read with ``lock`` on its row (created first, so that
        the lock has a row)."""
        self._s.execute(conn, self._KEY_ROW, (kid, 0))
        cur = self._s.execute(conn, f"SELECT retired FROM {KEYS} WHERE kid = ?{lock}", (kid,))
        rows = cur.fetchall()
        return bool(rows[0][0])

    def issue(self, record: PauseRecord, *, fence: int | None = None) -> bool:
        """Insert the row, unless its interrupt id is issued (False) or its key is retired
        (``key_unknown``): under a shared lock on the key's row (token.rotation.drain) -- or,
        where writes are serialised, read first in the insert's transaction.  With ``fence``,
        only while the run's row carries that epoch (run.ownership.fencing; else False)."""
        params: tuple[Any, ...] = pause_to_row(record)
        conditional = fence is not None and not self._reads_first
        if conditional:
            params += (record.run_id, fence)
        store = self._s
        with store.transaction(write=True) as conn:
            if self._reads_first:
                cur = store.execute(conn, self._KEY_AND_EPOCH[fence is not None],
                                    (record.kid,) if fence is None
                                    else (record.kid, record.run_id, fence))
                retired, held = cur.fetchall()[0]
                if retired:
                    raise self._retired(record.kid)
                if not held:
                    return False
            elif self._key_retired(conn, record.kid, store.dialect.lock_share):
                raise self._retired(record.kid)
            cur = store.execute(conn, self._issue_sql[conditional], params)
            count: int = cur.rowcount
            return count == 1

    @staticmethod
    def _retired(kid: str) -> PausepointError:
        return PausepointError(ErrorCode.KEY_UNKNOWN, "token.rotation.drain",
                               f"key {kid!r} was retired; mint with another")

    def retire_key(self, kid: str) -> int:
        """The drain proof of ``kid``, and -- when it is 0 -- the key marked retired, in one
        transaction under an exclusive lock on the key's row (token.rotation.drain)."""
        with self._s.transaction(write=True) as conn:
            self._key_retired(conn, kid, self._s.dialect.lock_update)
            cur = self._s.execute(
                conn, f"SELECT COUNT(*) FROM {PAUSES} WHERE {_OUTSTANDING_SQL} AND kid = ?",
                (kid,))
            outstanding = int(cur.fetchall()[0][0])
            if outstanding == 0:
                self._s.execute(conn, f"UPDATE {KEYS} SET retired = 1 WHERE kid = ?",
                                (kid,))
            return outstanding

    _GET: Final = f"{_PAUSE_SELECT} WHERE interrupt_id = ?"
    _SET_RESULT: Final = (f"UPDATE {PAUSES} SET result = ? WHERE interrupt_id = ? "
                          "AND result IS NULL")

    def get(self, interrupt_id: str) -> PauseRecord | None:
        rows = self._s.read(self._GET, (interrupt_id,))
        return row_to_pause(rows[0]) if rows else None

    def transition(self, interrupt_id: str, expected_version: int, new: PauseState,
                   result: str | None = None) -> bool:
        """The single-winner conditional update; ``result``, when given, is written with it."""
        return self._s.write(self._TRANSITION, (
            _TEXT[new.phase], new.expires_at, int(new.turn_recorded), new.response_digest,
            new.consumed_at, result, interrupt_id, expected_version)) == 1

    def set_result(self, interrupt_id: str, result: str) -> None:
        self._s.write(self._SET_RESULT, (result, interrupt_id))

    def by_run(self, run_id: str) -> Sequence[PauseRecord]:
        rows = self._s.read(f"{_PAUSE_SELECT} WHERE run_id = ? ORDER BY seq", (run_id,))
        return [row_to_pause(r) for r in rows]

    def outstanding(self) -> Sequence[PauseRecord]:
        rows = self._s.read(f"{_PAUSE_SELECT} WHERE {_OUTSTANDING_SQL} ORDER BY seq")
        return [row_to_pause(r) for r in rows]

    def outstanding_for_key(self, kid: str) -> int:
        rows = self._s.read(f"SELECT COUNT(*) FROM {PAUSES} WHERE {_OUTSTANDING_SQL} AND kid = ?",
                            (kid,))
        return int(rows[0][0])


class ConsumingSqlLedger(SqlLedger):
    """The SQL ledger, plus the resume's consume as one statement
    (:class:`~pausepoint.core.ports.ConsumingLedger`): one round trip -- on SQLite one
    statement in its write transaction -- where a read of the row and then its conditional
    update take two (and a read of the turn checkpoint a third).  Needs ``UPDATE ...
    RETURNING`` (:attr:`Dialect.returning`)."""

    CONSUME_STATE: Final = (
        "phase = ? AND expires_at = ? AND turn_recorded = ? "
        "AND response_digest IS NOT DISTINCT FROM ? AND consumed_at IS NOT DISTINCT FROM ?")
    """The consume's condition on the row's state: all of it, as the lifecycle read it."""
    CONSUME_UPDATE: Final = (
        f"UPDATE {PAUSES} SET phase = ?, expires_at = ?, turn_recorded = ?, "
        "response_digest = ?, consumed_at = ?, version = version + 1 "
        f"WHERE {' AND '.join(f'{col} = ?' for _f, col, _t in CLAIM_COLUMNS)} "
        "AND kid = ? AND signature = ? "
        f"AND ({CONSUME_STATE})")
    CONSUME_RETURNS: Final = (
        "payload, parent_run_id, result, version, "
        f"(SELECT turn FROM {CHECKPOINTS} WHERE checkpoint_id = ?)")
    CONSUME: Final = f"{CONSUME_UPDATE} RETURNING {CONSUME_RETURNS}"
    """One conditional ``UPDATE ... RETURNING``: it lands only on the row of exactly these
    claims and this token (the token's key id and signature: the row's token is the one of its
    key id, claims and signature, :func:`~pausepoint.core.tokens.token_text`) whose state is
    exactly the expected one -- the row lock (SQLite's write lock) makes one of any number of
    racing consumes the winner (under READ COMMITTED a waiting ``UPDATE`` re-checks the
    condition on the row the winner committed, which is no longer in the expected state) --
    and it returns what of the row as written the caller
    does not hold already (its claims, token and state are the condition's and the update's),
    with the turn checkpoint it binds, read in the same statement (by the claims' checkpoint
    id, which the condition makes the row's: a parameter, not the row's column -- SQLite's
    planner scans the checkpoints for a ``RETURNING`` sub-select correlated with the updated
    row)."""

    CONSUMED_ROW: Final = f"SELECT {CONSUME_RETURNS} FROM {PAUSES} WHERE interrupt_id = ?"
    """Where ``RETURNING`` is not cheap (:attr:`Dialect.returning_is_cheap`): what
    :attr:`CONSUME` returns, read right after :attr:`CONSUME_UPDATE` in its transaction -- on
    a store that serialises its write transactions (SQLite's ``BEGIN IMMEDIATE`` holds the
    write lock from the update to the commit), the row exactly as the update left it."""

    _RETURNED: Final = _row_types(str, str, (str, _NULLABLE), int)
    """The types of what :attr:`CONSUME` returns, but the turn's."""

    def __init__(self, store: SqlStore) -> None:
        super().__init__(store)
        self._read_back = not store.dialect.returning_is_cheap and store.serial_units
        """The consume reads back the row it wrote (:attr:`CONSUMED_ROW`)."""

    def consume(self, claims: Claims, token: str, expected: PauseState, new: PauseState,
                checkpoints: CheckpointStore) -> tuple[PauseRecord, str | None] | None:
        """Write ``new`` over the pause of ``claims`` and ``token`` only if its state is
        ``expected`` (``resume.consume.single-winner``); the record as written and the turn of
        its checkpoint (read by ``checkpoints`` when it is not this store's own), or None when
        the write did not land (nothing changed) -- at once when ``token`` is not the token of
        ``claims`` under any key id (no row's token can be it)."""
        parts = token_parts(token, claims)
        if parts is None:
            return None
        params = (_TEXT[new.phase], new.expires_at, int(new.turn_recorded), new.response_digest,
                  new.consumed_at, *_claim_values(claims), *parts,
                  _TEXT[expected.phase], expected.expires_at, int(expected.turn_recorded),
                  expected.response_digest, expected.consumed_at, claims.checkpoint_id)
        store = self._s
        if not self._read_back:
            rows = store.statement(self.CONSUME, params, write=True, rows=True)
        else:
            with store.transaction(write=True) as conn:
                cur = store.execute(conn, self.CONSUME_UPDATE, params[:-1])
                won = cur.rowcount == 1
                if not won:
                    return None
                cur = store.execute(conn, self.CONSUMED_ROW,
                                    (claims.checkpoint_id, claims.interrupt_id))
                rows = cur.fetchall()
        if not rows:
            return None
        row = rows[0]
        if tuple(map(type, row[:4])) not in self._RETURNED:
            raise _corrupt("ledger", TypeError("a column of another type"))
        payload, parent_run_id, result, version, turn = row
        record = PauseRecord(claims, parts[0], token, payload, new, parent_run_id, result,
                             version)
        if checkpoints is not self._s.checkpoints:
            return record, checkpoints.read(claims.checkpoint_id)
        return record, None if turn is None else str(turn)


class SqlCheckpoints(_Facet):
    """:class:`pausepoint.core.ports.CheckpointStore` over SQL."""

    _WRITE: Final = _insert(CHECKPOINTS, ("checkpoint_id", "thread_id", "turn"), "checkpoint_id",
                            ("thread_id", "turn"))

    def write(self, checkpoint_id: str, thread_id: str, turn: str) -> bool:
        """True only once the write is committed; a store error reports False, never raises
        (``turn.resumable.earned``)."""
        try:
            self._s.write(self._WRITE, (checkpoint_id, thread_id, turn))
        except PausepointError as exc:
            if exc.code is ErrorCode.STORE_UNAVAILABLE:
                return False
            raise  # pragma: no cover - write raises nothing else
        return True

    _READ: Final = f"SELECT turn FROM {CHECKPOINTS} WHERE checkpoint_id = ?"
    _LATEST: Final = (f"SELECT checkpoint_id FROM {CHECKPOINTS} WHERE thread_id = ? "
                      "ORDER BY seq DESC LIMIT 1")

    def read(self, checkpoint_id: str) -> str | None:
        rows = self._s.read(self._READ, (checkpoint_id,))
        return str(rows[0][0]) if rows else None

    def latest(self, thread_id: str) -> str | None:
        rows = self._s.read(self._LATEST, (thread_id,))
        return str(rows[0][0]) if rows else None


class SqlPayloads(_Facet):
    """:class:`pausepoint.core.ports.PayloadStore` over SQL; the first recorded payload stays."""

    _RECORD: Final = _insert(PAYLOADS, ("interrupt_id", "payload"), "interrupt_id", ())

    def record(self, interrupt_id: str, payload: str) -> None:
        self._s.write(self._RECORD, (interrupt_id, payload))

    def get(self, interrupt_id: str) -> str | None:
        rows = self._s.read(f"SELECT payload FROM {PAYLOADS} WHERE interrupt_id = ?",
                            (interrupt_id,))
        return str(rows[0][0]) if rows else None


_CANCELLED_OR_CANCELLING: Final = tuple(sorted(s.value for s in CANCELLED_OR_CANCELLING))


class SqlEffects(_Facet):
    """:class:`pausepoint.core.ports.EffectJournal` over SQL."""

    def __init__(self, store: SqlStore) -> None:
        super().__init__(store)
        self._start = {leased: self._start_sql(leased) for leased in (False, True)}
        """The start's statement, unleased and leased (each text built once)."""

    def _start_sql(self, leased: bool) -> str:
        """One statement: insert the entry if the run's row still carries the epoch -- and,
        ``leased``, a lease live at the driver's ``now`` -- (read with the dialect's row lock);
        over an entry reconciled not applied, start it again."""
        live = " AND lease_until > ?" if leased else ""
        return (f"INSERT INTO {EFFECTS} (run_id, effect_key, status, epoch) "
                f"SELECT ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM {RUNS} "
                f"WHERE run_id = ? AND epoch = ?{live}{self._s.dialect.row_lock}) "
                "ON CONFLICT (run_id, effect_key) DO UPDATE SET status = excluded.status, "
                f"epoch = excluded.epoch WHERE {EFFECTS}.status = ?")

    def start(self, run_id: str, key: str, epoch: int, now: int | None) -> bool:
        return self._s.write(self._start[now is not None], (
            run_id, key, EffectStatus.STARTED.value, epoch, run_id, epoch,
            *(() if now is None else (now,)), EffectStatus.NOT_APPLIED.value)) == 1

    def finish(self, run_id: str, key: str, epoch: int) -> bool:
        return self._s.write(
            f"UPDATE {EFFECTS} SET status = ? WHERE run_id = ? AND effect_key = ? "
            "AND status = ? AND epoch = ?", (EffectStatus.FINISHED.value, run_id, key,
                                             EffectStatus.STARTED.value, epoch)) == 1

    def settle(self, run_id: str, key: str, status: EffectStatus) -> None:
        self._s.write(f"UPDATE {EFFECTS} SET status = ? WHERE run_id = ? AND effect_key = ?",
                      (EffectStatus(status).value, run_id, key))

    def status(self, run_id: str, key: str) -> EffectStatus | None:
        rows = self._s.read(f"SELECT status FROM {EFFECTS} WHERE run_id = ? AND effect_key = ?",
                            (run_id, key))
        return EffectStatus(rows[0][0]) if rows else None

    def started_by(self, run_id: str, key: str) -> int | None:
        rows = self._s.read(f"SELECT epoch FROM {EFFECTS} WHERE run_id = ? AND effect_key = ? "
                            "AND status = ?", (run_id, key, EffectStatus.STARTED.value))
        return int(rows[0][0]) if rows else None

    def open_entries(self, run_id: str) -> Sequence[str]:
        rows = self._s.read(f"SELECT effect_key FROM {EFFECTS} WHERE run_id = ? AND status = ? "
                            "ORDER BY seq", (run_id, EffectStatus.STARTED.value))
        return [str(r[0]) for r in rows]


class SqlRuns(_Facet):
    """:class:`pausepoint.core.ports.RunStore` over SQL."""

    def __init__(self, store: SqlStore) -> None:
        super().__init__(store)
        # one statement: insert a child run if its parent and its root are live, reading
        # them with the dialect's row lock so that a concurrent cancel of either sees the child
        # or is seen by it (its text built once: the same object every call)
        live = (f"EXISTS (SELECT 1 FROM {RUNS} WHERE run_id = ? AND status NOT IN "
                f"({_marks(len(_CANCELLED_OR_CANCELLING))}){store.dialect.row_lock})")
        self._create_child = (f"INSERT INTO {RUNS} ({', '.join(_RUN_NAMES)}) "
                              f"SELECT {_marks(len(_RUN_NAMES))} WHERE {live} AND {live} "
                              "ON CONFLICT (run_id) DO NOTHING")

    _CREATE_ROOT: Final = _insert(RUNS, _RUN_NAMES, "run_id", ())
    """A root run's create: with no parent there is nothing to be live, so a plain ``INSERT``
    (an ``INSERT ... SELECT ... WHERE`` runs its ``SELECT`` as a coroutine: on SQLite some
    hundreds of cold cache lines per start)."""

    _GET: Final = f"{_RUN_SELECT} WHERE run_id = ?"
    _REPLACE: Final = (
        f"UPDATE {RUNS} SET status = ?, state = ?, epoch = ?, owner = ?, lease_until = ? "
        "WHERE run_id = ? AND epoch = ? AND status = ? AND state = ?")

    def create(self, run: RunRecord) -> bool:
        if run.parent_run_id == "":
            return self._s.write(self._CREATE_ROOT, run_to_row(run)) == 1
        return self._s.write(self._create_child, (
            *run_to_row(run), run.parent_run_id, *_CANCELLED_OR_CANCELLING,
            run.root_run_id, *_CANCELLED_OR_CANCELLING)) == 1

    def get(self, run_id: str) -> RunRecord | None:
        rows = self._s.read(self._GET, (run_id,))
        return row_to_run(rows[0]) if rows else None

    def children(self, run_id: str) -> Sequence[RunRecord]:
        # the second term lets the planner use the partial index of child runs (for '' no
        # index serves: every root run would match)
        child = "" if run_id == "" else " AND parent_run_id <> ''"
        rows = self._s.read(f"{_RUN_SELECT} WHERE parent_run_id = ?{child} ORDER BY seq",
                            (run_id,))
        return [row_to_run(r) for r in rows]

    def replace(self, expected: RunRecord, new: RunRecord) -> bool:
        """The run's conditional update: write ``new`` only if the stored row still has
        ``expected``'s epoch, status and state (the writer's fencing token)."""
        return self._s.write(self._REPLACE, (
            _TEXT[new.status], new.state, new.epoch, new.owner, new.lease_until,
            expected.run_id, expected.epoch, _TEXT[expected.status], expected.state)) == 1

    def with_status(self, status: RunStatus) -> Sequence[RunRecord]:
        rows = self._s.read(f"{_RUN_SELECT} WHERE status = ? ORDER BY seq", (status.value,))
        return [row_to_run(r) for r in rows]
