"""Contract tests of the store implementations: one set of tests, run against the in-memory
store, SQLite (a file under tmp_path) and PostgreSQL (``$PAUSEPOINT_PG_DSN``, each test in a
schema of its own).

PostgreSQL tests skip when ``PAUSEPOINT_PG_DSN`` is not set -- except under CI (``$CI`` set),
where a missing DSN fails them: CI must never pass by silently running nothing.

The race tests are shown to bite: the same harness that finds exactly one winner on every real
store finds several on :class:`RacyLedger`, a deliberately broken check-then-act ledger.
"""

from __future__ import annotations

import multiprocessing
import os
import queue
import re
import sqlite3
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs
import pytest

from pausepoint.core.clauses import CLAUSE_BY_ID, ErrorCode
from pausepoint.core.errors import PausepointError
from pausepoint.core.lifecycle import OUTSTANDING, PauseState, Phase
from pausepoint.core.ports import (
    CheckpointStore,
    Claims,
    EffectJournal,
    EffectStatus,
    Ledger,
    PauseRecord,
    PayloadStore,
    RunRecord,
    RunStatus,
    RunStore,
)
from pausepoint.core.tokens import Ed25519Key, HmacKey, KeyRing, token_text
from pausepoint.stores import MemoryStore, SqliteStore, StoreBundle, open_store
from pausepoint.stores.sql import _OUTSTANDING_SQL as OUTSTANDING_SQL
from pausepoint.stores.sql import SqlStore
from pg import pg_dsn

DSN_ENV = "PAUSEPOINT_PG_DSN"

# -- backends --------------------------------------------------------------------------------


def open_location(kind: str, location: tuple[str, ...]) -> StoreBundle:
    """Open a new handle (new connections) on a backend's data; picklable arguments so a
    spawned process can do the same."""
    if kind == "sqlite":
        return SqliteStore(location[0])
    if kind == "postgres":
        from pausepoint.stores import PostgresStore

        return PostgresStore(location[0], namespace=location[1])
    raise AssertionError(kind)


@attrs.define
class Backend:
    kind: str
    store: StoreBundle
    location: tuple[str, ...] = ()
    opened: list[StoreBundle] = attrs.Factory(list)

    def reopen(self) -> StoreBundle:
        """Another handle on the same data: the same object for memory, new connections for
        the durable stores."""
        if self.kind == "memory":
            return self.store
        other = open_location(self.kind, self.location)
        self.opened.append(other)
        return other


def make_backend(kind: str, tmp_path: Path) -> Backend:
    if kind == "memory":
        return Backend(kind, MemoryStore())
    if kind == "sqlite":
        path = str(tmp_path / "pausepoint.db")
        return Backend(kind, SqliteStore(path), (path,))
    if kind == "postgres":
        location = (pg_dsn(), f"pp_test_{uuid.uuid4().hex[:16]}")
        return Backend(kind, open_location(kind, location), location)
    raise AssertionError(kind)


def close_backend(b: Backend) -> None:
    for s in b.opened:
        s.close()
    b.store.close()
    if b.kind == "postgres":
        from pausepoint.stores import PostgresStore

        PostgresStore(b.location[0], namespace=b.location[1]).drop_namespace()


@pytest.fixture(params=["memory", "sqlite", "postgres"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    b = make_backend(request.param, tmp_path)
    yield b
    close_backend(b)


@pytest.fixture(params=["sqlite", "postgres"])
def durable_backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    b = make_backend(request.param, tmp_path)
    yield b
    close_backend(b)


# -- records ---------------------------------------------------------------------------------

BIG = 1_767_225_600_000  # 2026-01-01 in ms: does not fit 32 bits


def claims(iid: str = "int-1", run: str = "run-1", **kw: Any) -> Claims:
    base: dict[str, Any] = dict(
        interrupt_id=iid, run_id=run, root_run_id="root-1", session_id="sess-1",
        thread_id="thread-1", checkpoint_id="ckpt-1", scope="tenant-a", name="approve_refund",
        tool_call_id="call-1", payload_digest="sha256:ab12", issued_at=BIG,
        expires_at=BIG + 3_600_000, v=1)
    base.update(kw)
    return Claims(**base)


def record(iid: str = "int-1", run: str = "run-1", kid: str = "k1",
           phase: Phase = Phase.PAUSED, sig: str = "c2lnbmF0dXJl", c: Claims | None = None,
           **kw: Any) -> PauseRecord:
    """A record of claims ``c`` (default: :func:`claims` of ``iid`` and ``run``) whose token is
    laid out as mint lays it out, ``sig`` its signature part (a ledger keeps only that)."""
    c = claims(iid, run) if c is None else c
    base: dict[str, Any] = dict(
        claims=c, kid=kid, token=token_text(kid, c, sig), payload='{"amount":12}',
        state=PauseState(phase=phase, expires_at=c.expires_at))
    base.update(kw)
    return PauseRecord(**base)


def every_field_record() -> PauseRecord:
    """Every field set, none to its default (but the claims' format version: a token exists
    only for version 1), text with quotes and non-ASCII."""
    c = claims("int-ü'1", "run-\"x\"", root_run_id="root-9", session_id="sess-9",
               thread_id="thread-9", checkpoint_id="ckpt-9", scope="scope-ß", name="ask",
               tool_call_id="call-9", payload_digest="sha256:ffee", issued_at=BIG + 1,
               expires_at=BIG + 2, v=1)
    return PauseRecord(
        claims=c, kid="kid-9", token=token_text("kid-9", c, "c2ln_-9"),
        payload='{"q":"Ça va? 100%"}',
        state=PauseState(phase=Phase.CONSUMED, expires_at=BIG + 5, turn_recorded=True,
                         response_digest="sha256:0011", consumed_at=BIG + 4),
        parent_run_id="parent-9", result='{"ok":true}', version=3)


CONSUMED = PauseState(phase=Phase.CONSUMED, expires_at=BIG + 3_600_000, turn_recorded=True,
                      response_digest="sha256:resp", consumed_at=BIG + 10)


# -- the ports ---------------------------------------------------------------------------------


def test_facets_implement_the_ports(backend: Backend) -> None:
    """Each store is a bundle whose facets implement the five store ports, with ``durable``
    telling the truth (``wiring.consistent``: the composition relies on it)."""
    s = backend.store
    assert isinstance(s, StoreBundle)
    for facet, port in ((s.ledger, Ledger), (s.checkpoints, CheckpointStore),
                        (s.payloads, PayloadStore), (s.effects, EffectJournal),
                        (s.runs, RunStore)):
        assert isinstance(facet, port), (facet, port)
        assert facet.durable is s.durable
    assert s.durable is (backend.kind != "memory")


# -- ledger ----------------------------------------------------------------------------------


def test_issue_get_round_trips_every_field(backend: Backend) -> None:
    """A ledger row keeps every claim, the token, its key id, the payload and the whole state
    (``token.claims``, ``durability.token.reissue``: the same token comes back)."""
    ledger = backend.store.ledger
    full = every_field_record()
    sparse = record("int-2")  # None / default fields
    assert ledger.get(full.interrupt_id) is None
    assert ledger.issue(full) is True
    assert ledger.issue(sparse) is True
    assert ledger.get(full.interrupt_id) == full
    assert ledger.get("int-2") == sparse
    assert backend.reopen().ledger.get(full.interrupt_id) == full
    assert ledger.get("int-3") is None


def test_duplicate_issue_returns_false_and_changes_nothing(backend: Backend) -> None:
    """Issuing an interrupt id twice is refused and changes no stored state
    (``lifecycle.refusal.no-change``, ``resume.token.binds-one-pause``)."""
    ledger = backend.store.ledger
    first = record("int-1", kid="k1")
    assert ledger.issue(first)
    other = record("int-1", run="run-2", kid="k2", phase=Phase.RESUMABLE, sig="b3RoZXI",
                   payload="{}", result="r", version=9)
    assert ledger.issue(other) is False
    assert ledger.get("int-1") == first
    assert ledger.by_run("run-2") == []
    assert ledger.outstanding_for_key("k2") == 0


def test_transition_is_compare_and_set_on_version(backend: Backend) -> None:
    """``transition`` writes only over the expected version and bumps it; a stale version
    loses, returns False and leaves the row as it was (``resume.consume.single-winner``,
    ``race.decided-once``)."""
    ledger = backend.store.ledger
    r = record()
    ledger.issue(r)
    resumable = attrs.evolve(r.state, phase=Phase.RESUMABLE, turn_recorded=True)
    assert ledger.transition("int-1", 0, resumable) is True
    after = ledger.get("int-1")
    assert after == attrs.evolve(r, state=resumable, version=1)

    assert ledger.transition("int-1", 0, CONSUMED, result="stale") is False  # stale version
    assert ledger.get("int-1") == after
    assert ledger.transition("nope", 0, CONSUMED) is False  # unknown row
    assert ledger.get("nope") is None

    assert ledger.transition("int-1", 1, CONSUMED, result='{"r":1}') is True
    assert ledger.get("int-1") == attrs.evolve(r, state=CONSUMED, version=2, result='{"r":1}')
    # a transition without a result keeps the recorded one
    cancelled = attrs.evolve(CONSUMED, phase=Phase.CANCELLED)
    assert ledger.transition("int-1", 2, cancelled) is True
    assert ledger.get("int-1") == attrs.evolve(r, state=cancelled, version=3, result='{"r":1}')
    assert backend.reopen().ledger.get("int-1") == ledger.get("int-1")


def test_consume_writes_once_and_returns_the_row_as_written(durable_backend: Backend) -> None:
    """A ledger's one-write consume (``ConsumingLedger``) lands only on the row of these claims
    and this token in exactly the expected state, bumps its version, and returns the record as
    written -- every field as a fresh read gives it -- with its checkpoint's turn; anything
    else returns None and changes nothing (``resume.consume.single-winner``)."""
    s = durable_backend.store
    ledger: Any = s.ledger
    r = record(parent_run_id="parent-1", result=None, version=4)
    resumable = attrs.evolve(r.state, phase=Phase.RESUMABLE, turn_recorded=True)
    ledger.issue(attrs.evolve(r, state=resumable))
    s.checkpoints.write("ckpt-1", "thread-1", '{"turn":1}')
    before = ledger.get("int-1")
    for other_claims, token, expected in (
            (claims(scope="tenant-b"), r.token, resumable),  # another pause's claims
            (r.claims, token_text(r.kid, r.claims, "b3RoZXI"), resumable),  # another token
            (r.claims, token_text("k2", r.claims, "c2lnbmF0dXJl"), resumable),  # another kid
            (r.claims, "tok.other", resumable),  # no token of these claims
            (r.claims, r.token, r.state)):  # another state
        assert ledger.consume(other_claims, token, expected, CONSUMED, s.checkpoints) is None
        assert ledger.get("int-1") == before
    won = ledger.consume(r.claims, r.token, resumable, CONSUMED, s.checkpoints)
    assert won == (attrs.evolve(r, state=CONSUMED, version=5), '{"turn":1}')
    assert won[0] == ledger.get("int-1") == durable_backend.reopen().ledger.get("int-1")
    # decided once: the row is no longer in the expected state
    assert ledger.consume(r.claims, r.token, resumable, CONSUMED, s.checkpoints) is None
    assert ledger.get("int-1") == won[0]
    # no checkpoint: no turn
    r2 = record("int-2", parent_run_id="", version=0,
                c=claims("int-2", checkpoint_id="ckpt-none"), state=attrs.evolve(resumable))
    ledger.issue(r2)
    won2 = ledger.consume(r2.claims, r2.token, resumable, CONSUMED, s.checkpoints)
    assert won2 == (attrs.evolve(r2, state=CONSUMED, version=1), None)


def test_a_minted_token_comes_back_byte_for_byte(backend: Backend) -> None:
    """A ledger keeps a token's signature and gives the token back, byte for byte, as mint
    wrote it: from ``get``, ``by_run``, ``outstanding``, a reopened store and the consume's
    record (``durability.token.reissue``, ``token.claims``)."""
    rings = {"k.1": KeyRing(Ed25519Key.generate("k.1")),
             "k:2": KeyRing(HmacKey.generate("k:2"))}
    ledger: Any = backend.store.ledger
    minted = []
    for n, kid in enumerate(("k.1", "k:2", "k.1")):
        ring = rings[kid]
        c = claims(f"ïnt-{n}\u2028\"q\"", scope="tenant-ß", expires_at=BIG * 2 + n)
        token, got_kid = ring.mint(c)
        r = record(c=c, kid=got_kid, token=token,
                   state=PauseState(phase=Phase.RESUMABLE, expires_at=c.expires_at,
                                    turn_recorded=True))
        assert ledger.issue(r)
        minted.append(r)
    for store in (backend.store, backend.reopen()):
        assert [store.ledger.get(r.interrupt_id) for r in minted] == minted
        assert list(store.ledger.by_run("run-1")) == minted
        assert list(store.ledger.outstanding()) == minted
        assert [store.ledger.get(r.interrupt_id).token for r in minted] == [
            r.token for r in minted]
    if callable(getattr(ledger, "consume", None)):
        r = minted[1]
        won = ledger.consume(r.claims, r.token, r.state, CONSUMED, backend.store.checkpoints)
        assert won is not None and won[0].token == r.token and won[0].kid == "k:2"
        assert won[0] == ledger.get(r.interrupt_id)


def test_consume_refuses_the_same_claims_signed_by_another_key(
        durable_backend: Backend) -> None:
    """The consume lands only on the row of the token presented: a token of the same claims
    signed by another key of the ring (another key id and signature) consumes nothing, and
    leaves the row as it was (``resume.token.binds-one-pause``,
    ``resume.consume.single-winner``)."""
    s = durable_backend.store
    ledger: Any = s.ledger
    ring = KeyRing(Ed25519Key.generate("k1"))
    c = claims()
    token, kid = ring.mint(c)
    resumable = PauseState(phase=Phase.RESUMABLE, expires_at=c.expires_at, turn_recorded=True)
    r = record(c=c, kid=kid, token=token, state=resumable)
    assert ledger.issue(r)
    ring.rotate(Ed25519Key.generate("k2"))
    other, other_kid = ring.mint(c)
    assert other_kid == "k2" and ring.verify(other) == c and other != token
    assert ledger.consume(c, other, resumable, CONSUMED, s.checkpoints) is None
    assert ledger.get(c.interrupt_id) == r
    won = ledger.consume(c, token, resumable, CONSUMED, s.checkpoints)
    assert won is not None and won[0] == attrs.evolve(r, state=CONSUMED, version=1)


def test_issue_refuses_a_token_that_is_not_its_claims(durable_backend: Backend) -> None:
    """A durable ledger keeps a token as its signature and rebuilds it from the row's key id
    and claims: a record whose token is not the token of its key id and claims is refused
    with ``input_invalid`` and nothing is written (``input.bounded``,
    ``lifecycle.refusal.no-change``)."""
    ledger = durable_backend.store.ledger
    good = record()
    for bad in (attrs.evolve(good, token="tok.int-1"),  # no token
                attrs.evolve(good, kid="k2"),  # the token of another key id
                attrs.evolve(good, token=token_text("k1", claims(scope="x"), "c2ln")),
                attrs.evolve(good, token=good.token.replace("pp1.", "pp2.", 1))):
        with pytest.raises(PausepointError) as err:
            ledger.issue(bad)
        assert err.value.code is ErrorCode.INPUT_INVALID
        assert ledger.get("int-1") is None and ledger.outstanding() == []
    assert ledger.issue(good) and ledger.get("int-1") == good


def _old_pauses_ddl(dialect: Any) -> str:
    """The pauses table as the previous version made it: the whole token in a column."""
    from pausepoint.stores.sql import schema

    ddl = schema(dialect)[0]
    assert "signature TEXT NOT NULL" in ddl
    return ddl.replace("signature TEXT NOT NULL", "token TEXT NOT NULL")


def test_a_database_of_the_previous_schema_is_refused_unchanged(tmp_path: Path) -> None:
    """A SQLite file whose ledger keeps whole tokens (the previous schema) is refused at open
    with ``wiring_invalid``, saying what to do, and nothing of it is changed: no table, index
    or row added (``wiring.consistent``)."""
    from pausepoint.stores.sqlite import SQLITE

    path = str(tmp_path / "old.db")
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute(_old_pauses_ddl(SQLITE))
    conn.commit()
    before = conn.execute("SELECT type, name, sql FROM sqlite_master ORDER BY name").fetchall()
    with pytest.raises(PausepointError) as err:
        SqliteStore(path)
    assert err.value.code is ErrorCode.WIRING_INVALID
    assert "signature" in str(err.value) and "new database" in str(err.value)
    assert conn.execute("SELECT type, name, sql FROM sqlite_master ORDER BY name").fetchall() \
        == before
    conn.close()
    SqliteStore(str(tmp_path / "new.db")).close()  # a new file opens


def test_a_postgres_schema_of_the_previous_version_is_refused_unchanged() -> None:
    """The same on PostgreSQL: a namespace whose ledger keeps whole tokens is refused at open
    with ``wiring_invalid`` and nothing in it is created (``wiring.consistent``)."""
    import psycopg

    from pausepoint.stores import PostgresStore
    from pausepoint.stores.postgres import POSTGRES

    namespace = f"pp_old_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(pg_dsn(), autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {namespace}")
        try:
            conn.execute(f"SET search_path = {namespace}")
            conn.execute(_old_pauses_ddl(POSTGRES))
            listed = ("SELECT relname FROM pg_class c JOIN pg_namespace n ON n.oid = "
                      "c.relnamespace WHERE n.nspname = %s ORDER BY relname")
            before = conn.execute(listed, (namespace,)).fetchall()
            with pytest.raises(PausepointError) as err:
                PostgresStore(pg_dsn(), namespace=namespace)
            assert err.value.code is ErrorCode.WIRING_INVALID
            assert "signature" in str(err.value)
            assert conn.execute(listed, (namespace,)).fetchall() == before
        finally:
            conn.execute(f"DROP SCHEMA {namespace} CASCADE")


def test_a_read_sees_every_commit_made_before_it(durable_backend: Backend) -> None:
    """A store's connection holds no read snapshot from one statement to the next (its one
    reused cursor leaves no statement open): each read sees what another connection committed
    before it (``durability.commit-per-change``)."""
    reader = durable_backend.store
    writer = durable_backend.reopen()
    for i in range(3):
        assert reader.ledger.get(f"int-{i}") is None
        writer.ledger.issue(record(f"int-{i}"))
        assert reader.ledger.get(f"int-{i}") == record(f"int-{i}")
        assert [r.interrupt_id for r in reader.ledger.by_run("run-1")] == [
            f"int-{j}" for j in range(i + 1)]


def test_set_result_only_once(backend: Backend) -> None:
    """The first resume's result is recorded once; a second ``set_result`` changes nothing,
    so a replay returns the first result (``replay.same-response``)."""
    ledger = backend.store.ledger
    ledger.issue(record())
    ledger.set_result("int-1", '{"first":1}')
    ledger.set_result("int-1", '{"second":2}')
    got = ledger.get("int-1")
    assert got is not None and got.result == '{"first":1}'
    assert got.version == 0  # a result is not a state change
    ledger.set_result("nope", "x")  # no row: nothing to do, nothing created
    assert ledger.get("nope") is None
    # a result given with a transition is not overwritten by set_result either
    ledger.issue(record("int-2"))
    assert ledger.transition("int-2", 0, CONSUMED, result="A")
    ledger.set_result("int-2", "B")
    got2 = ledger.get("int-2")
    assert got2 is not None and got2.result == "A"


def test_by_run_in_issue_order(backend: Backend) -> None:
    """A run's pauses come back in issue order, and only that run's
    (``multi.independent``)."""
    ledger = backend.store.ledger
    for iid, run in (("c", "r1"), ("a", "r2"), ("b", "r1"), ("d", "r1")):
        ledger.issue(record(iid, run))
    assert [p.interrupt_id for p in ledger.by_run("r1")] == ["c", "b", "d"]
    assert [p.interrupt_id for p in ledger.by_run("r2")] == ["a"]
    assert ledger.by_run("r3") == []


def test_outstanding_follows_phase_changes(backend: Backend) -> None:
    """Outstanding rows are exactly those paused, resumable or unknown_outcome, and the drain
    proof counts them per key id (``token.rotation.drain``)."""
    ledger = backend.store.ledger
    assert {Phase.PAUSED, Phase.RESUMABLE, Phase.UNKNOWN_OUTCOME} == OUTSTANDING
    ledger.issue(record("a", kid="k1"))
    ledger.issue(record("b", kid="k1"))
    ledger.issue(record("c", kid="k2"))
    ledger.issue(record("d", kid="k2", phase=Phase.RUNNING))

    def seen() -> tuple[list[str], int, int]:
        return ([p.interrupt_id for p in ledger.outstanding()],
                ledger.outstanding_for_key("k1"), ledger.outstanding_for_key("k2"))

    assert seen() == (["a", "b", "c"], 2, 1)
    versions = {"a": 0, "b": 0, "c": 0, "d": 0}

    def move(iid: str, phase: Phase) -> None:
        r = ledger.get(iid)
        assert r is not None
        assert ledger.transition(iid, versions[iid], attrs.evolve(r.state, phase=phase))
        versions[iid] += 1

    move("a", Phase.RESUMABLE)
    assert seen() == (["a", "b", "c"], 2, 1)
    move("a", Phase.UNKNOWN_OUTCOME)
    assert seen() == (["a", "b", "c"], 2, 1)
    move("a", Phase.CONSUMED)
    assert seen() == (["b", "c"], 1, 1)
    move("b", Phase.EXPIRED)
    assert seen() == (["c"], 0, 1)
    move("c", Phase.CANCELLED)
    assert seen() == ([], 0, 0)
    move("d", Phase.PAUSED)
    assert seen() == (["d"], 0, 1)
    assert ledger.outstanding_for_key("k-unknown") == 0


# -- the race --------------------------------------------------------------------------------


class RacyLedger:
    """DELIBERATELY BROKEN: checks the version, waits, then writes over whatever version is
    current -- the check-then-act bug the single-winner update exists to prevent."""

    def __init__(self, inner: Ledger, delay: float) -> None:
        self.inner = inner
        self.delay = delay

    def transition(self, interrupt_id: str, expected_version: int, new: PauseState,
                   result: str | None = None) -> bool:
        row = self.inner.get(interrupt_id)
        if row is None or row.version != expected_version:
            return False
        time.sleep(self.delay)
        while True:
            now = self.inner.get(interrupt_id)
            assert now is not None
            if self.inner.transition(interrupt_id, now.version, new, result):
                return True


def contend(ledger: Ledger | RacyLedger, reader: Ledger, iid: str, who: str,
            barrier: Any) -> bool:
    """One resumer: learn the version, wait for everyone, then try to consume."""
    row = reader.get(iid)
    assert row is not None
    barrier.wait(timeout=60)
    return ledger.transition(iid, row.version, CONSUMED, result=who)


def race_threads(store: StoreBundle, n: int, racy: bool = False) -> list[str]:
    """``n`` threads race to consume one pause; return the winners."""
    iid = f"race-{uuid.uuid4().hex[:8]}"
    assert store.ledger.issue(record(iid, phase=Phase.RESUMABLE))
    ledger: Ledger | RacyLedger = RacyLedger(store.ledger, 0.05) if racy else store.ledger
    barrier = threading.Barrier(n)
    winners: list[str] = []
    errors: list[BaseException] = []

    def run(who: str) -> None:
        try:
            if contend(ledger, store.ledger, iid, who, barrier):
                winners.append(who)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(f"t{i}",)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not errors, errors
    final = store.ledger.get(iid)
    assert final is not None
    if len(winners) == 1:
        assert final.state == CONSUMED and final.result == winners[0]
        assert final.version == 1
    return winners


def _process_contender(kind: str, location: tuple[str, ...], iid: str, who: str, racy: bool,
                       barrier: Any, results: Any) -> None:
    """Runs in a spawned process: its own store handle, its own connections."""
    store = open_location(kind, location)
    try:
        ledger: Ledger | RacyLedger = RacyLedger(store.ledger, 0.3) if racy else store.ledger
        results.put((who, contend(ledger, store.ledger, iid, who, barrier)))
    except BaseException as exc:
        results.put((who, repr(exc)))
        raise
    finally:
        store.close()


def race_processes(b: Backend, n: int, racy: bool = False) -> list[str]:
    """``n`` spawned processes race to consume one pause; return the winners."""
    iid = f"race-{uuid.uuid4().hex[:8]}"
    assert b.store.ledger.issue(record(iid, phase=Phase.RESUMABLE))
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(n)
    results = ctx.Queue()
    procs = [ctx.Process(target=_process_contender,
                         args=(b.kind, b.location, iid, f"p{i}", racy, barrier, results))
             for i in range(n)]
    for p in procs:
        p.start()
    outcomes: dict[str, bool | str] = {}
    try:
        for _ in range(n):
            who, won = results.get(timeout=120)
            outcomes[who] = won
    except queue.Empty:  # pragma: no cover - reported by the assertion below
        pass
    for p in procs:
        p.join(timeout=60)
        if p.is_alive():  # pragma: no cover
            p.kill()
    assert all(isinstance(v, bool) for v in outcomes.values()), outcomes
    assert len(outcomes) == n, outcomes
    final = b.store.ledger.get(iid)
    assert final is not None
    winners = [w for w, won in outcomes.items() if won]
    if len(winners) == 1:
        assert final.state == CONSUMED and final.result == winners[0]
        assert final.version == 1
    return winners


def _cold_opener(kind: str, location: tuple[str, ...], who: str, barrier: Any,
                 results: Any) -> None:
    """Runs in a spawned process: open the store (creating its schema) at the same moment as
    the others, then issue a pause of its own."""
    try:
        barrier.wait(timeout=60)
        store = open_location(kind, location)
        try:
            results.put((who, store.ledger.issue(record(who, run="cold"))))
        finally:
            store.close()
    except BaseException as exc:
        results.put((who, repr(exc)))
        raise


def test_processes_create_a_fresh_store_together(tmp_path: Path) -> None:
    """Four processes open the same not-yet-created SQLite file / PostgreSQL schema at once:
    schema creation is serialised, every process works (``durability.restart``: the tables are
    the library's own)."""
    kinds: list[tuple[str, tuple[str, ...]]] = [("sqlite", (str(tmp_path / "cold.db"),))]
    if os.environ.get(DSN_ENV) or os.environ.get("CI"):  # under CI a missing DSN fails
        kinds.append(("postgres", (pg_dsn(), f"pp_test_{uuid.uuid4().hex[:16]}")))
    ctx = multiprocessing.get_context("spawn")
    for kind, location in kinds:
        n = 4
        barrier, results = ctx.Barrier(n), ctx.Queue()
        procs = [ctx.Process(target=_cold_opener,
                             args=(kind, location, f"p{i}", barrier, results))
                 for i in range(n)]
        for p in procs:
            p.start()
        try:
            outcomes = dict(results.get(timeout=120) for _ in range(n))
            for p in procs:
                p.join(timeout=60)
            assert outcomes == {f"p{i}": True for i in range(n)}, (kind, outcomes)
            store = open_location(kind, location)
            try:
                assert sorted(p.interrupt_id for p in store.ledger.by_run("cold")) == [
                    f"p{i}" for i in range(n)]
            finally:
                store.close()
        finally:
            if kind == "postgres":
                from pausepoint.stores import PostgresStore

                PostgresStore(location[0], namespace=location[1]).drop_namespace()


def test_single_winner_among_threads(backend: Backend) -> None:
    """Eight threads consume one pause at once: exactly one wins, its result is the one
    recorded (``resume.consume.single-winner``, ``resume.consume.at-most-once``)."""
    for _ in range(3):
        assert len(race_threads(backend.store, 8)) == 1


def test_single_winner_among_processes(durable_backend: Backend) -> None:
    """Four processes, each with its own connections, consume one pause at once: exactly one
    wins (``resume.consume.single-winner``, ``resume.consume.at-most-once``)."""
    assert len(race_processes(durable_backend, 4)) == 1


def test_race_harness_catches_a_racy_ledger(backend: Backend) -> None:
    """The thread race finds several winners on a check-then-act ledger, so the single-winner
    test above can fail (``resume.consume.single-winner``)."""
    assert len(race_threads(backend.store, 8, racy=True)) > 1


def test_process_race_harness_catches_a_racy_ledger(durable_backend: Backend) -> None:
    """The process race finds several winners on a check-then-act ledger
    (``resume.consume.single-winner``)."""
    assert len(race_processes(durable_backend, 4, racy=True)) > 1


# -- checkpoints, payloads, effects, runs ----------------------------------------------------


def test_checkpoints_write_read_latest(backend: Backend) -> None:
    """A checkpoint write reports success, is readable by id, and the thread's newest id is
    known (``turn.resumable.earned``, ``resume.continuation.recorded-turn``)."""
    cp = backend.store.checkpoints
    assert cp.read("c1") is None and cp.latest("t1") is None
    assert cp.write("c1", "t1", '{"turn":1}') is True
    assert cp.write("c2", "t2", '{"other":true}') is True
    assert cp.write("c3", "t1", '{"turn":2}') is True
    assert cp.read("c1") == '{"turn":1}'
    assert cp.read("c3") == '{"turn":2}'
    assert cp.latest("t1") == "c3"
    assert cp.latest("t2") == "c2"
    assert cp.latest("t9") is None
    # rewriting an id replaces its turn; the thread's newest checkpoint stays the newest created
    assert cp.write("c1", "t1", '{"turn":"1b"}') is True
    assert cp.read("c1") == '{"turn":"1b"}'
    assert cp.latest("t1") == "c3"
    assert backend.reopen().checkpoints.read("c1") == '{"turn":"1b"}'


def test_payloads_record_get(backend: Backend) -> None:
    """A pause's payload is recorded and read back; the first recording stays, so a payload
    can never drift from the digest its token carries (``pause.published``)."""
    p = backend.store.payloads
    assert p.get("int-1") is None
    p.record("int-1", '{"amount":12,"note":"ü"}')
    p.record("int-2", "{}")
    assert p.get("int-1") == '{"amount":12,"note":"ü"}'
    p.record("int-1", '{"amount":13}')
    assert p.get("int-1") == '{"amount":12,"note":"ü"}'
    assert backend.reopen().payloads.get("int-2") == "{}"


def test_effect_journal_bracket_settle_open_entries(backend: Backend) -> None:
    """Effects are journalled started then finished; a started entry is open (an unknown
    outcome) until finished or settled (``effect.journal.bracket``,
    ``effect.unknown-outcome``, ``effect.reconcile``)."""
    e = backend.store.effects
    for rid in ("r1", "r2"):
        backend.store.runs.create(run_record(rid, epoch=2))
    assert e.status("r1", "charge") is None and e.open_entries("r1") == []
    assert not e.start("r1", "charge", 1, None), (
        "started under a stale epoch (run.ownership.fencing)")
    assert not e.start("r3", "charge", 0, None), "started for no run"
    assert e.status("r1", "charge") is None
    assert e.start("r1", "charge", 2, None)
    assert not e.start("r1", "charge", 2, None), "started twice"
    assert e.start("r1", "email", 2, None)
    assert e.start("r1", "ship", 2, None)
    assert e.start("r2", "charge", 2, None)
    assert e.status("r1", "charge") is EffectStatus.STARTED
    assert list(e.open_entries("r1")) == ["charge", "email", "ship"]
    assert not e.finish("r1", "charge", 3), "finished by another epoch than its starter's"
    assert e.finish("r1", "charge", 2)
    assert e.status("r1", "charge") is EffectStatus.FINISHED
    assert list(e.open_entries("r1")) == ["email", "ship"]
    e.settle("r1", "email", EffectStatus.NOT_APPLIED)
    e.settle("r1", "ship", EffectStatus.COMPENSATED)
    assert e.status("r1", "email") is EffectStatus.NOT_APPLIED
    assert e.status("r1", "ship") is EffectStatus.COMPENSATED
    assert list(e.open_entries("r1")) == []
    assert list(e.open_entries("r2")) == ["charge"]  # runs are independent
    assert e.status("r2", "charge") is EffectStatus.STARTED
    # a retry after not_applied starts the effect again; a compensated one never
    assert e.start("r1", "email", 2, None)
    assert not e.start("r1", "ship", 2, None)
    assert list(e.open_entries("r1")) == ["email"]
    assert backend.reopen().effects.open_entries("r1") == ["email"]


def test_effect_journal_start_needs_a_live_lease(backend: Backend) -> None:
    """``run.ownership.fencing``: with the driver's ``now``, the journal's start also needs the
    run's lease live (``lease_until > now``), in the same conditional insert; a start refused
    so writes nothing."""
    e = backend.store.effects
    backend.store.runs.create(run_record("r1", epoch=2, owner="a", lease_until=100))
    assert e.start("r1", "charge", 2, 99)
    assert not e.start("r1", "email", 2, 100), "started after the lease ran out"
    assert not e.start("r1", "ship", 1, 99), "started under a stale epoch"
    assert e.status("r1", "email") is None and e.open_entries("r1") == ["charge"]
    assert e.start("r1", "email", 2, None), "a run no driver leases: the epoch alone fences"


def run_record(run_id: str, parent: str = "", **kw: Any) -> RunRecord:
    base: dict[str, Any] = dict(run_id=run_id, root_run_id=parent or run_id,
                                parent_run_id=parent, session_id="sess-1", thread_id="th-1",
                                scope="tenant-a", status=RunStatus.RUNNING)
    base.update(kw)
    return RunRecord(**base)


def test_issue_verdicts_fenced_and_on_a_retired_key(backend: Backend) -> None:
    """Every verdict of an issue, fenced or not: it lands (True) only when its key is not
    retired, (fenced) the run's row carries the epoch and its interrupt id is not issued; a
    retired key is refused ``key_unknown`` whatever else holds -- checked first -- and
    otherwise an issue that does not land is False; neither writes anything
    (``run.ownership.fencing``, ``token.rotation.drain``, ``lifecycle.refusal.no-change``)."""
    s = backend.store
    ledger = s.ledger
    assert s.runs.create(run_record("run-1", epoch=3))
    assert ledger.issue(record("a"), fence=3) is True
    assert ledger.issue(record("b"), fence=2) is False  # the run carries another epoch
    assert ledger.issue(record("c", run="run-none"), fence=3) is False  # no such run
    assert ledger.issue(record("a", sig="b3RoZXI"), fence=3) is False  # issued already
    assert ledger.issue(record("a", sig="b3RoZXI")) is False
    assert ledger.issue(record("d")) is True  # unfenced: the run's epoch is not read
    assert ledger.retire_key("k2") == 0
    for rec, fence in ((record("e", kid="k2"), 3), (record("e", kid="k2"), 2),
                       (record("e", kid="k2"), None), (record("a", kid="k2"), 3),
                       (record("e", run="run-none", kid="k2"), 3)):
        with pytest.raises(PausepointError) as err:
            ledger.issue(rec, fence=fence)
        assert err.value.code is ErrorCode.KEY_UNKNOWN
    assert [r.interrupt_id for r in ledger.outstanding()] == ["a", "d"]
    assert ledger.get("a") == record("a") and ledger.outstanding_for_key("k2") == 0
    assert backend.reopen().ledger.outstanding() == ledger.outstanding()


@pytest.mark.parametrize("bad", ["x\x00", "x\ud800"], ids=["nul", "lone-surrogate"])
def test_a_text_parameter_no_store_keeps_is_refused_wherever_it_sits(
        durable_backend: Backend, bad: str) -> None:
    """Every text parameter of a statement is checked, not only the first ones: a NUL or a lone
    surrogate in a late one (a payload, a run's state, a turn) is refused with
    ``input_invalid`` before it reaches the driver, and nothing is written
    (``input.bounded``)."""
    s = durable_backend.store
    run = run_record("r-bad")
    assert s.runs.create(run)
    attempts = (
        lambda: s.ledger.issue(record("int-bad", payload=bad)),
        lambda: s.payloads.record("int-bad", bad),
        lambda: s.checkpoints.write("ckpt-bad", "thread-bad", bad),
        lambda: s.runs.replace(run, attrs.evolve(run, state=bad)),
        lambda: s.runs.create(run_record("r-bad-2", state=bad)),
    )
    for attempt in attempts:
        with pytest.raises(PausepointError) as err:
            attempt()
        assert err.value.code is ErrorCode.INPUT_INVALID
    assert s.ledger.get("int-bad") is None
    assert s.payloads.get("int-bad") is None
    assert s.checkpoints.read("ckpt-bad") is None
    assert s.runs.get("r-bad") == run
    assert s.runs.get("r-bad-2") is None


def test_runs_create_get_children(backend: Backend) -> None:
    """Runs round-trip every field, ``create`` inserts only a new run, ``replace`` writes over
    the record it expects, and children are found by parent in creation order
    (``cancel.propagates``, ``run.binding.live``, ``run.ownership.fencing``)."""
    runs = backend.store.runs
    assert runs.get("root") is None
    root = run_record("root", state='{"step":1}', session_id="s-ü", thread_id="th-9",
                      scope="sc-9")
    assert runs.create(root)
    assert not runs.create(attrs.evolve(root, state="{}"))
    c2 = run_record("child-b", "root", status=RunStatus.PAUSED, epoch=3, owner="o",
                    lease_until=9)
    c1 = run_record("child-a", "root", status=RunStatus.CANCELLING)
    assert runs.create(c2)
    assert runs.create(c1)
    assert not runs.create(run_record("grandchild", "child-a")), "under a cancelling parent"
    assert not runs.create(run_record("orphan", "nobody")), "under no parent"
    assert runs.create(run_record("grandchild", "child-b"))
    assert runs.get("root") == root
    assert [r.run_id for r in runs.children("root")] == ["child-b", "child-a"]
    assert [r.run_id for r in runs.children("child-b")] == ["grandchild"]
    assert runs.children("grandchild") == []
    done = attrs.evolve(c2, status=RunStatus.DONE, state='{"out":2}')
    assert not runs.replace(attrs.evolve(c2, epoch=2), done), "a stale epoch wrote"
    assert runs.replace(c2, done)
    assert runs.get("child-b") == done
    assert list(runs.children("root")) == [done, c1]
    assert backend.reopen().runs.get("child-b") == done


# -- durability --------------------------------------------------------------------------------


def test_every_change_is_committed_before_it_returns(durable_backend: Backend) -> None:
    """After each call returns, a second, independent handle (its own connections) already sees
    the change (``durability.commit-per-change``)."""
    s, other = durable_backend.store, durable_backend.reopen()
    s.ledger.issue(record())
    assert other.ledger.get("int-1") == record()
    s.ledger.transition("int-1", 0, CONSUMED)
    got = other.ledger.get("int-1")
    assert got is not None and got.state == CONSUMED
    s.ledger.set_result("int-1", "R")
    got = other.ledger.get("int-1")
    assert got is not None and got.result == "R"
    s.checkpoints.write("c1", "t1", "turn")
    assert other.checkpoints.read("c1") == "turn"
    s.payloads.record("int-1", "{}")
    assert other.payloads.get("int-1") == "{}"
    s.runs.create(run_record("r1"))
    assert other.runs.get("r1") == run_record("r1")
    assert s.effects.start("r1", "k", 0, None)
    assert other.effects.open_entries("r1") == ["k"]
    assert s.effects.finish("r1", "k", 0)
    assert other.effects.status("r1", "k") is EffectStatus.FINISHED


def test_a_unit_of_work_commits_all_its_writes_at_once(durable_backend: Backend) -> None:
    """durability.commit-per-change: inside ``unit_of_work`` the writes of every facet are one
    transaction -- another handle sees none of them until the block ends, then all."""
    s, other = durable_backend.store, durable_backend.reopen()
    assert isinstance(s, SqlStore)
    with s.unit_of_work():
        assert s.ledger.issue(record())
        s.payloads.record("int-1", "{}")
        s.checkpoints.write("c1", "t1", "turn")
        with s.unit_of_work():  # a nested unit joins the outer one
            assert s.ledger.transition("int-1", 0, CONSUMED)
        assert s.ledger.get("int-1") is not None  # the unit reads its own writes
        if durable_backend.kind == "postgres":  # SQLite's write lock keeps a reader waiting
            assert other.ledger.get("int-1") is None and other.payloads.get("int-1") is None
    got = other.ledger.get("int-1")
    assert got is not None and got.state == CONSUMED and got.version == 1
    assert other.payloads.get("int-1") == "{}" and other.checkpoints.read("c1") == "turn"


def test_a_unit_of_work_that_raises_commits_nothing(backend: Backend) -> None:
    """lifecycle.refusal.no-change: a unit that raises leaves every row as it was (a durable
    store rolls it back; the memory store is never asked to)."""
    s = backend.store
    assert isinstance(s, (SqlStore, MemoryStore))
    if backend.kind == "memory":
        return
    with pytest.raises(RuntimeError), s.unit_of_work():
        s.ledger.issue(record())
        s.payloads.record("int-1", "{}")
        raise RuntimeError("stop")
    assert s.ledger.get("int-1") is None and s.payloads.get("int-1") is None
    with s.unit_of_work():  # the next unit works as usual
        s.ledger.issue(record())
    assert s.ledger.get("int-1") == record()


def test_a_failed_write_spoils_its_unit(durable_backend: Backend) -> None:
    """durability.commit-per-change: a statement that fails inside a unit raises
    ``store_unavailable``; caught or not, the unit then commits nothing."""
    s = durable_backend.store
    assert isinstance(s, SqlStore)
    with pytest.raises(PausepointError) as err, s.unit_of_work():
        s.ledger.issue(record())
        with pytest.raises(PausepointError):
            s.read("SELECT no_such_column FROM pausepoint_pauses")
    assert err.value.code is ErrorCode.STORE_UNAVAILABLE
    assert s.ledger.get("int-1") is None


def fill(store: StoreBundle) -> None:
    store.ledger.issue(every_field_record())
    store.ledger.issue(record("int-2", kid="k2"))
    store.checkpoints.write("c1", "t1", "turn-1")
    store.payloads.record("int-2", '{"p":1}')
    store.runs.create(run_record("r1"))
    store.effects.start("r1", "charge", 0, None)


def check_filled(store: StoreBundle) -> None:
    assert store.ledger.get(every_field_record().interrupt_id) == every_field_record()
    assert [p.interrupt_id for p in store.ledger.outstanding()] == ["int-2"]
    assert store.ledger.outstanding_for_key("k2") == 1
    assert store.checkpoints.read("c1") == "turn-1" and store.checkpoints.latest("t1") == "c1"
    assert store.payloads.get("int-2") == '{"p":1}'
    assert store.effects.open_entries("r1") == ["charge"]
    assert store.runs.get("r1") == run_record("r1")


def test_sqlite_survives_close_and_reopen(tmp_path: Path) -> None:
    """Everything written to a SQLite file is there after the store is closed and the file
    opened again (``durability.restart``)."""
    path = tmp_path / "ledger.db"
    first = SqliteStore(path)
    fill(first)
    first.close()
    second = SqliteStore(path)
    try:
        check_filled(second)
    finally:
        second.close()


def test_sqlite_runs_in_wal_with_full_sync(tmp_path: Path) -> None:
    """The SQLite file is in WAL mode and every connection commits with synchronous=FULL
    (``durability.commit-per-change``)."""
    path = tmp_path / "wal.db"
    store = SqliteStore(path)
    try:
        store.ledger.issue(record())
        raw = sqlite3.connect(path)
        assert raw.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        raw.close()
        seen: list[Any] = []

        def look() -> None:
            with store.transaction(write=False) as conn:  # this thread's own connection
                seen.append(conn.execute("PRAGMA synchronous").fetchone())
                seen.append(conn.execute("PRAGMA busy_timeout").fetchone())

        look()
        t = threading.Thread(target=look)
        t.start()
        t.join()
        assert seen == [(2,), (30000,)] * 2  # 2 = FULL
    finally:
        store.close()


def test_sqlite_makes_new_files_with_small_pages_and_keeps_an_old_files(tmp_path: Path) -> None:
    """A new file gets ``PAGE_SIZE`` pages (smaller than SQLite's default); a file made with
    another page size keeps it and its rows; a page size SQLite cannot use is a wiring error."""
    from pausepoint.stores.sqlite import PAGE_SIZE

    def page_size(path: Path) -> int:
        raw = sqlite3.connect(path)
        try:
            got = raw.execute("PRAGMA page_size").fetchone()[0]
            assert isinstance(got, int)
            return got
        finally:
            raw.close()

    fresh = SqliteStore(tmp_path / "new.db")
    fresh.ledger.issue(record())
    fresh.close()
    assert page_size(tmp_path / "new.db") == PAGE_SIZE == 2048
    old = SqliteStore(tmp_path / "old.db", page_size=4096)
    fill(old)
    old.close()
    reopened = SqliteStore(tmp_path / "old.db")  # the default asks for 2 KB: not applied
    try:
        check_filled(reopened)
        assert page_size(tmp_path / "old.db") == 4096
    finally:
        reopened.close()
    for bad in (1000, 256, 131072, 1024.0, True):
        with pytest.raises(PausepointError) as info:
            SqliteStore(tmp_path / "bad.db", page_size=bad)  # type: ignore[arg-type]
        assert info.value.code is ErrorCode.WIRING_INVALID
    assert not (tmp_path / "bad.db").exists()


def test_a_finished_threads_connection_is_closed(durable_backend: Backend) -> None:
    """Each thread gets its own connection, closed once the thread is gone, so a server with a
    thread per request does not pile up connections; the data stays
    (``durability.commit-per-change``)."""
    import gc

    store = durable_backend.store
    assert isinstance(store, SqlStore)
    held: list[Any] = []

    def work(i: int) -> None:
        store.runs.create(run_record(f"r{i}"))
        with store.transaction(write=False) as conn:
            held.append(conn)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len({id(c) for c in held}) == 3  # one connection per thread
    del threads, t
    gc.collect()
    for conn in held:
        with pytest.raises(Exception):  # noqa: B017 - sqlite3 and psycopg differ in the type
            conn.execute("SELECT 1")
    assert [store.runs.get(f"r{i}") for i in range(3)] == [run_record(f"r{i}") for i in range(3)]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_forked_child_never_uses_its_parents_connection(durable_backend: Backend) -> None:
    """A child forked from a process that used the store opens a connection of its own (a
    libpq connection shared by two processes would mix their messages on one socket), writes
    through it, and leaves the parent's connection working (``durability.commit-per-change``)."""
    store = durable_backend.store
    assert isinstance(store, SqlStore)
    store.ledger.issue(record("int-1"))
    parent_conn = store._conn()
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report, then leave without running the parent's teardown
        verdict = b"0"
        try:
            os.close(read_end)
            own = store._conn() is not parent_conn
            wrote = store.ledger.issue(record("int-2"))
            verdict = b"1" if own and wrote else b"0"
        finally:
            os.write(write_end, verdict)
            os._exit(0)
    os.close(write_end)
    verdict = os.read(read_end, 1)
    os.close(read_end)
    os.waitpid(pid, 0)
    assert verdict == b"1"
    assert store._conn() is parent_conn
    assert store.ledger.get("int-1") == record("int-1")
    assert store.ledger.get("int-2") == record("int-2")


def test_outstanding_pauses_are_read_through_their_partial_index(tmp_path: Path) -> None:
    """Only an outstanding pause has an entry in the index of outstanding pauses -- a pause
    that leaves them (consumed, expired, cancelled) inserts into one index fewer -- and both
    reads of outstanding pauses use it; a file made with the former full phase index loses
    that one when opened (``token.rotation.drain``)."""
    path = tmp_path / "index.db"
    store = SqliteStore(path)
    store.ledger.issue(record("int-1"))
    with store.transaction(write=True) as conn:
        conn.execute("CREATE INDEX pausepoint_pauses_phase ON pausepoint_pauses (phase, kid)")
    store.close()
    store = SqliteStore(path)
    try:
        seen: list[tuple[str, Any]] = []
        execute = store.execute

        def traced(conn: Any, query: str, params: Any = ()) -> Any:
            seen.append((query, params))
            return execute(conn, query, params)

        with store.transaction(write=False) as conn:
            assert isinstance(conn, sqlite3.Connection)
            names = {r[0] for r in conn.execute(
                "SELECT name FROM sqlite_master WHERE tbl_name = 'pausepoint_pauses' "
                "AND type = 'index' AND sql IS NOT NULL")}
        assert names == {"pausepoint_pauses_run", "pausepoint_pauses_outstanding"}
        store.execute = traced  # type: ignore[method-assign]
        assert [p.interrupt_id for p in store.ledger.outstanding()] == ["int-1"]
        assert store.ledger.outstanding_for_key("k1") == 1
        assert store.ledger.transition("int-1", 0, CONSUMED)
        assert store.ledger.outstanding_for_key("k1") == 0
        del store.execute
        with store.transaction(write=False) as conn:
            entries = conn.execute("SELECT count(*) FROM pausepoint_pauses INDEXED BY "
                                   "pausepoint_pauses_outstanding WHERE " + OUTSTANDING_SQL
                                   ).fetchone()
            plans = [" ".join(str(r[3]) for r in conn.execute("EXPLAIN QUERY PLAN " + q, p))
                     for q, p in seen if q.startswith("SELECT")]
        assert entries == (0,)
        assert len(plans) == 3 and all("pausepoint_pauses_outstanding" in p for p in plans), plans
    finally:
        store.close()


def test_sqlite_refuses_an_in_memory_database() -> None:
    """An in-memory SQLite database is neither durable nor shared between the per-thread
    connections, so it is refused (``wiring.consistent``)."""
    with pytest.raises(PausepointError) as info:
        SqliteStore(":memory:")
    assert info.value.code is ErrorCode.WIRING_INVALID


def test_a_store_that_does_not_answer_changes_nothing(tmp_path: Path) -> None:
    """While another process holds SQLite's write lock past the busy timeout, writes fail with
    store_unavailable and change nothing, and a checkpoint write reports False instead of
    success (``turn.write-failed.stays-paused``, ``lifecycle.refusal.no-change``)."""
    path = tmp_path / "locked.db"
    store = SqliteStore(path, busy_timeout=0.2)
    try:
        store.ledger.issue(record("int-1"))
        blocker = sqlite3.connect(path, isolation_level=None)
        blocker.execute("BEGIN IMMEDIATE")
        try:
            assert store.checkpoints.write("c1", "t1", "turn") is False
            with pytest.raises(PausepointError) as info:
                store.ledger.transition("int-1", 0, CONSUMED)
            assert info.value.code is ErrorCode.STORE_UNAVAILABLE
            with pytest.raises(PausepointError):
                store.ledger.issue(record("int-2"))
            assert store.ledger.get("int-1") == record("int-1")  # reads still work (WAL)
        finally:
            blocker.execute("ROLLBACK")
            blocker.close()
        assert store.checkpoints.read("c1") is None
        assert store.ledger.get("int-2") is None
        assert store.ledger.transition("int-1", 0, CONSUMED) is True  # and it recovers
    finally:
        store.close()


def test_postgres_reconnects_after_losing_its_connection(tmp_path: Path) -> None:
    """A dropped PostgreSQL connection surfaces once as store_unavailable; the next call opens
    a fresh connection and finds every committed change (``durability.restart``)."""
    b = make_backend("postgres", tmp_path)
    try:
        fill(b.store)
        import psycopg

        from pausepoint.stores import PostgresStore

        assert isinstance(b.store, PostgresStore)
        with b.store.transaction(write=False) as conn:
            assert isinstance(conn, psycopg.Connection)
            pid = conn.info.backend_pid
        with psycopg.connect(b.location[0], autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
        with pytest.raises(PausepointError) as info:
            b.store.ledger.get("int-2")
        assert info.value.code is ErrorCode.STORE_UNAVAILABLE
        check_filled(b.store)
    finally:
        close_backend(b)


def test_postgres_reset_empties_the_tables(tmp_path: Path) -> None:
    """The test helper ``reset`` leaves empty tables behind, ready for use
    (``lifecycle.states``: a fresh ledger has no pauses)."""
    b = make_backend("postgres", tmp_path)
    try:
        from pausepoint.stores import PostgresStore

        assert isinstance(b.store, PostgresStore)
        fill(b.store)
        b.store.reset()
        assert b.store.ledger.outstanding() == []
        assert b.store.runs.get("r1") is None
        fill(b.store)
        check_filled(b.store)
    finally:
        close_backend(b)


# -- open_store --------------------------------------------------------------------------------


def test_open_store_urls(tmp_path: Path) -> None:
    """``open_store`` opens each scheme and refuses an unknown one with wiring_invalid
    (``wiring.consistent``)."""
    assert isinstance(open_store("memory:"), MemoryStore)
    path = tmp_path / "o.db"
    s = open_store(f"sqlite:{path}")
    assert isinstance(s, SqliteStore) and s.durable
    fill(s)
    s.close()
    s = open_store(f"sqlite:{path}")
    check_filled(s)
    s.close()
    for bad in ("mysql://x", "sqlite3:x", "", "memory", "sqlite:", "redis:"):
        with pytest.raises(PausepointError) as info:
            open_store(bad)
        assert info.value.code is ErrorCode.WIRING_INVALID
        assert info.value.clause == "wiring.consistent"


def test_open_store_postgres_urls() -> None:
    """``postgresql://...`` and ``postgres:DSN`` open a PostgresStore (``wiring.consistent``)."""
    dsn = pg_dsn()
    from pausepoint.stores import PostgresStore

    for url in (dsn, f"postgres:{dsn}"):
        s = open_store(url)
        assert isinstance(s, PostgresStore) and s.durable and s.dsn == dsn
        s.close()


def test_package_imports_without_psycopg(tmp_path: Path) -> None:
    """``pausepoint.stores`` imports with psycopg absent; only PostgresStore needs it
    (``wiring.consistent``)."""
    import subprocess
    import sys

    code = ("import sys; sys.modules['psycopg'] = None\n"
            "import pausepoint.stores as s\n"
            "s.MemoryStore(); s.SqliteStore(sys.argv[1]).close()\n"
            "try:\n    s.PostgresStore\nexcept ImportError:\n    print('lazy')\n")
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path / "p.db")],
                         capture_output=True, text=True, timeout=60, check=False)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "lazy"


def test_cited_clauses_exist() -> None:
    """Every clause id cited in this file's docstrings is in the catalogue."""
    cited = set(re.findall(r"``([a-z]+(?:\.[a-z-]+)+)``", Path(__file__).read_text()))
    cited = {c for c in cited if c.split(".")[0] in {k.split(".")[0] for k in CLAUSE_BY_ID}}
    assert cited, "no clause cited"
    assert cited <= set(CLAUSE_BY_ID), sorted(cited - set(CLAUSE_BY_ID))
