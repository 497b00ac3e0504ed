"""PostgreSQL: a resume is one conditional ``UPDATE ... RETURNING`` -- one round trip -- with the
single winner intact; opening a store on an existing schema runs no DDL.

Round trips and statements are counted from libpq's protocol trace (``bench/bench_postgres.py``
reads it the same way); nothing here is timed.  Each property is shown to fail on a
deliberately broken variant first."""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pausepoint.core.clauses import ErrorCode
from pausepoint.core.errors import PausepointError
from pausepoint.core.lifecycle import Phase
from pausepoint.engine.service import ResumeOutcome
from pausepoint.stores import PostgresStore
from pausepoint_conformance.faults.race import consume_blind
from pausepoint_conformance.faults.testbed import drop
from pg import pg_spec
from test_service import REQUEST, Env, make_env, take

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))

from bench_postgres import protocol_trace, round_trips, statements


class Forwarding:
    """A wrapper forwarding every attribute to the ledger it wraps."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.durable = inner.durable

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


@pytest.fixture
def pg() -> Iterator[PostgresStore]:
    spec = pg_spec("pp_consume")
    store = spec.open()
    assert isinstance(store, PostgresStore)
    yield store
    store.close()
    drop(spec)


def conn_of(store: PostgresStore) -> Any:
    with store.transaction(write=False) as conn:
        return conn


def blind(env: Env) -> Env:
    env.svc.ledger = consume_blind(env.svc.ledger)
    return env


def traced_resume(env: Env, token: str, response: object) -> tuple[ResumeOutcome, int, int]:
    assert isinstance(env.store, PostgresStore)
    for i in range(6):  # psycopg prepares a statement on its fifth use: count the steady state
        warm = take(env, f"warm-{i}")
        env.svc.resume(warm.token, {"ok": 1}, REQUEST)
    with protocol_trace(conn_of(env.store)) as seen:
        out = env.svc.resume(token, response, REQUEST)
    return out, round_trips(seen), statements(seen)


def test_a_resume_is_one_round_trip_and_returns_the_row_as_stored(pg: PostgresStore) -> None:
    env = make_env(pg)
    rec = take(env, "i-1")
    out, trips, stmts = traced_resume(env, rec.token, {"a": 1})
    assert (trips, stmts) == (1, 1)
    assert not out.replayed and out.answer == {"a": 1}
    assert out.record == env.svc.ledger.get("i-1")  # what the statement returned is the row
    assert out.record.state.phase is Phase.CONSUMED and out.record.version == rec.version + 1
    assert out.turn == env.svc.checkpoints.read(rec.claims.checkpoint_id) is not None
    # a replay and a different answer take the read path, and are told as before
    again = env.svc.resume(rec.token, {"a": 1}, REQUEST)
    assert again.replayed
    with pytest.raises(PausepointError) as err:
        env.svc.resume(rec.token, {"a": 2}, REQUEST)
    assert err.value.code is ErrorCode.RESPONSE_CONFLICT
    assert env.svc.ledger.get("i-1") == out.record


def test_a_wrapped_ledger_is_never_bypassed(pg: PostgresStore) -> None:
    """The service uses the one write only when the ledger's own class has it: a wrapper that
    forwards attributes keeps the read, the conditional update and the turn read."""
    env = make_env(pg, wrap_ledger=Forwarding)
    rec = take(env, "i-1")
    out, trips, stmts = traced_resume(env, rec.token, {"a": 1})
    assert (trips, stmts) == (3, 3)
    assert out.record == env.svc.ledger.get("i-1")
    assert out.turn == env.svc.checkpoints.read(rec.claims.checkpoint_id)


def check_consumed_once(env: Env) -> None:
    """`resume.consume.single-winner`: after a consume, another answer is a conflict and the
    row is as the first left it."""
    rec = take(env, "i-1")
    first = env.svc.resume(rec.token, {"who": 1}, REQUEST)
    try:
        env.svc.resume(rec.token, {"who": 2}, REQUEST)
    except PausepointError as exc:
        assert exc.code is ErrorCode.RESPONSE_CONFLICT
    else:
        raise AssertionError("a consumed pause was consumed again")
    assert env.svc.ledger.get("i-1") == first.record


def check_racing_consumes(env: Env, n: int = 6) -> None:
    """`resume.consume.single-winner`: ``n`` threads (a connection each) answer one pause at
    once, each with its own answer; exactly one consumes it, every other one is told it
    conflicts, and the row changed once."""
    rec = take(env, "race")
    gate = threading.Barrier(n)
    results: list[object] = [None] * n

    def answer(i: int) -> None:
        gate.wait()
        try:
            results[i] = env.svc.resume(rec.token, {"who": i}, REQUEST)
        except PausepointError as exc:
            results[i] = exc

    threads = [threading.Thread(target=answer, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    winners = [r for r in results if isinstance(r, ResumeOutcome) and not r.replayed]
    assert len(winners) == 1, f"{len(winners)} resumes consumed one pause: {results}"
    assert all(isinstance(r, PausepointError) and r.code is ErrorCode.RESPONSE_CONFLICT
               for r in results if r is not winners[0]), results
    final = env.svc.ledger.get("race")
    assert final is not None and final.version == rec.version + 1


@pytest.mark.parametrize("check", [check_consumed_once, check_racing_consumes])
def test_the_one_write_keeps_a_single_winner(pg: PostgresStore, check: Any) -> None:
    check(make_env(pg))
    pg.clear()
    with pytest.raises(AssertionError, match="consumed"):
        check(blind(make_env(pg)))


def test_opening_an_existing_schema_runs_one_catalogue_read(pg: PostgresStore) -> None:
    """``CREATE INDEX IF NOT EXISTS`` share-locks its table even when the index is there, so
    a store opened while others write must not run the DDL again; the broken variant (the
    DDL every time) is counted too."""
    with protocol_trace(conn_of(pg)) as seen:
        pg.create_schema()
    assert statements(seen) == 1
    with protocol_trace(conn_of(pg)) as seen:
        super(PostgresStore, pg).create_schema()  # BROKEN: the DDL without the probe
    assert statements(seen) > 1
