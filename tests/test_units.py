"""One durable commit per operation (issue 15): the embedding engine's start and resume, and a
pause taken with its turn, each write in one unit of work -- counted as the SQLite commits that
wrote something (each one fsync) -- and a death between a unit's statements loses all of it.
An effect commits early, once: its journalled start is durable before it runs.

A store that commits every statement by itself (the store before units, :class:`EarlyCommit`)
fails the counts and the crash checks: the checks bite."""

from __future__ import annotations

import contextlib
import functools
import sqlite3
import typing
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pydantic
import pytest

import pausepoint
from pausepoint import Engine, Interaction, RunContext, RunStatus
from pausepoint.core.lifecycle import Phase
from pausepoint.core.ports import EffectStatus, RunRecord
from pausepoint.core.tokens import KeyRing
from pausepoint.engine.clock import ManualClock
from pausepoint.engine.compose import compose
from pausepoint.engine.run import PauseBinding
from pausepoint.engine.service import ResumeRequest
from pausepoint.stores import MemoryStore, SqliteStore
from pausepoint.stores.base import Units


class Quote(pydantic.BaseModel):
    amount: int


class Decision(pydantic.BaseModel):
    approved: bool


INTERACTIONS = [Interaction("approve", payload=Quote, response=Decision)]


class Killed(BaseException):
    """The process dies here: nothing after it runs, nothing uncommitted survives."""


class CountingSqlite(SqliteStore):
    """A SQLite store that counts its durable commits: transactions that wrote a row and
    committed (one fsync each in WAL with ``synchronous=FULL``), read from the statements
    SQLite itself ran (``set_trace_callback``), a write outside a transaction counting as its
    own commit."""

    def __init__(self, path: Path) -> None:
        self.statements: list[str] = []
        super().__init__(path)

    def _open(self) -> sqlite3.Connection:
        conn = super()._open()
        conn.set_trace_callback(self.statements.append)
        return conn

    def commits(self) -> int:
        count, open_tx, wrote = 0, False, False
        for sql in self.statements:
            word = sql.lstrip().split(None, 1)[0].upper() if sql.strip() else ""
            if word == "BEGIN":
                open_tx, wrote = True, False
            elif word in ("INSERT", "UPDATE", "DELETE", "REPLACE"):
                if open_tx:
                    wrote = True
                else:
                    count += 1
            elif word == "COMMIT":
                count += int(open_tx and wrote)
                open_tx = False
            elif word == "ROLLBACK":
                open_tx = False
        return count

    def counted(self, work: Callable[[], Any]) -> tuple[Any, int]:
        """``work()`` and the durable commits it made."""
        before = self.commits()
        out = work()
        return out, self.commits() - before


class EarlyCommit(CountingSqlite):
    """BROKEN: a unit of work that commits every statement by itself (the store before units:
    an operation is many commits, and a death between them keeps half of it)."""

    @contextlib.contextmanager
    def unit_of_work(self) -> Iterator[None]:
        yield


STORES = {"units": CountingSqlite, "early": EarlyCommit}


# -- the engine ----------------------------------------------------------------------------------


class Bank:
    def __init__(self) -> None:
        self.paid = 0

    def pay(self) -> int:
        self.paid += 1
        return self.paid


def twice_then_pay(bank: Bank) -> Callable[[RunContext, Any], Any]:
    def agent(ctx: RunContext, data: Any) -> Any:
        first = ctx.ask("approve", {"amount": 1})
        second = ctx.ask("approve", {"amount": 2})
        receipt = ctx.effect("pay", bank.pay) if first.approved and second.approved else None
        return {"receipt": receipt}
    return agent


def engine_on(store: CountingSqlite, bank: Bank, ring: KeyRing | None = None) -> Engine:
    return Engine.open(store, agents={"agent": twice_then_pay(bank)},
                       interactions=INTERACTIONS, clock=ManualClock(0),
                       signer=ring or KeyRing.generate())


def check_one_commit_per_operation(tmp_path: Path, kind: type[CountingSqlite]) -> None:
    store = kind(tmp_path / "units.db")
    engine = engine_on(store, Bank())
    started, n_start = store.counted(lambda: engine.start("agent", None, run_id="r"))
    assert started.status == RunStatus.PAUSED
    (p1,) = started.pauses
    second, n_resume = store.counted(lambda: engine.resume(p1.token, {"approved": True}))
    (p2,) = second.pauses
    done, n_effect = store.counted(lambda: engine.resume(p2.token, {"approved": True}))
    assert done.status == RunStatus.DONE and done.output == {"receipt": 1}
    # start: the run, its pause, the turn, the suspend; resume: the consume, the claim, the
    # next pause, its turn, the suspend; the last resume commits once more, at its effect
    assert (n_start, n_resume, n_effect) == (1, 1, 2), (n_start, n_resume, n_effect)
    engine.close()


def test_each_engine_operation_is_one_commit(tmp_path: Path) -> None:
    """`durability.commit-per-change`: a start is one commit, a resume to the next pause one,
    a resume through an effect two (the effect's journalled start first)."""
    check_one_commit_per_operation(tmp_path, CountingSqlite)


def test_a_store_that_commits_every_statement_fails_the_count(tmp_path: Path) -> None:
    with pytest.raises(AssertionError, match=r"\(\d+, \d+, \d+\)"):
        check_one_commit_per_operation(tmp_path, EarlyCommit)


def killing(store: SqliteStore, when: Callable[[RunRecord, RunRecord], bool]) -> None:
    """Kill the process at the run write ``when`` picks, before it is made."""
    replace = store.runs.replace

    def dying(expected: RunRecord, new: RunRecord) -> bool:
        if when(expected, new):
            raise Killed()
        return replace(expected, new)
    store.runs.replace = dying  # type: ignore[method-assign]


def check_a_death_inside_a_resume_loses_all_of_it(tmp_path: Path,
                                                  kind: type[CountingSqlite]) -> None:
    path, ring, bank = tmp_path / "crash.db", KeyRing.generate(), Bank()
    first = engine_on(kind(path), bank, ring)
    (p1,) = first.start("agent", None, run_id="r").pauses
    store = first.deployment.store
    assert isinstance(store, SqliteStore)
    # the process dies after the consume, at the continuation's suspend at the next pause
    killing(store, lambda old, new: new.status == RunStatus.PAUSED)
    with pytest.raises(Killed):
        first.resume(p1.token, {"approved": True})
    first.close()
    fresh = kind(path)
    row = fresh.ledger.get(p1.interrupt_id)
    assert row is not None and row.state.phase == Phase.RESUMABLE, (
        f"the consume survived the death: {row and row.state.phase}")
    run = fresh.runs.get("r")
    assert run is not None and run.status == RunStatus.PAUSED
    assert [r.interrupt_id for r in fresh.ledger.by_run("r")] == [p1.interrupt_id]
    fresh.close()
    later = engine_on(kind(path), bank, ring)
    later.restart()
    # the answer's retry works as the first try: consumed once, the run goes on
    (p2,) = later.resume(p1.token, {"approved": True}).pauses
    done = later.resume(p2.token, {"approved": True})
    assert done.status == RunStatus.DONE and bank.paid == 1
    later.close()


def test_a_death_inside_a_resume_loses_all_of_it(tmp_path: Path) -> None:
    """`resume.consume.single-winner`, `durability.commit-per-change`: a death between the
    consume and the end of the resume's unit leaves the pause resumable and the run paused."""
    check_a_death_inside_a_resume_loses_all_of_it(tmp_path, CountingSqlite)


def test_an_early_commit_keeps_half_a_resume(tmp_path: Path) -> None:
    with pytest.raises(AssertionError, match="survived the death"):
        check_a_death_inside_a_resume_loses_all_of_it(tmp_path, EarlyCommit)


def test_an_effect_commits_its_journal_start_before_it_runs(tmp_path: Path) -> None:
    """`effect.journal.bracket`: when ``fn`` runs, another handle already sees the effect
    journalled started and the consume made, and the unit holds no write lock (the other
    handle can write); the effect's finish and the run's end are one more commit."""
    path = tmp_path / "effect.db"
    store = CountingSqlite(path)
    other = SqliteStore(path, busy_timeout=0.5)
    seen: dict[str, Any] = {}

    def agent(ctx: RunContext, data: Any) -> Any:
        ctx.ask("approve", {"amount": 1})

        def pay() -> int:
            seen["status"] = other.effects.status("r", "pay")
            row = other.ledger.get("r/0/0")
            seen["phase"] = None if row is None else row.state.phase
            other.payloads.record("probe", "{}")  # a write goes through: no lock is held
            seen["free"] = other.payloads.get("probe") == "{}"
            return 7
        return ctx.effect("pay", pay)

    engine = Engine.open(store, agents={"agent": agent}, interactions=INTERACTIONS,
                         clock=ManualClock(0))
    (p,) = engine.start("agent", None, run_id="r").pauses
    done, n = store.counted(lambda: engine.resume(p.token, {"approved": True}))
    assert done.output == 7 and n == 2
    assert seen == {"status": EffectStatus.STARTED, "phase": Phase.CONSUMED, "free": True}
    assert other.effects.status("r", "pay") == EffectStatus.FINISHED
    engine.close()
    other.close()


# -- the service ---------------------------------------------------------------------------------


def service_on(store: CountingSqlite) -> Any:
    return compose(store=store, signer=KeyRing.generate(), interactions=INTERACTIONS,
                   clock=ManualClock(0), ttl_ms=60_000).service


BINDING = PauseBinding(run_id="r", root_run_id="r", session_id="s", thread_id="r", scope="t")


@pytest.mark.parametrize("kind", ["units", "early"])
def test_a_pause_with_its_turn_is_one_commit(tmp_path: Path, kind: str) -> None:
    """`turn.resumable.earned`: the pause comes back resumable, in one commit (a store that
    commits every statement makes it four); the resume is one more."""
    store = STORES[kind](tmp_path / "svc.db")
    svc = service_on(store)
    rec, n_pause = store.counted(lambda: svc.pause(
        binding=BINDING, name="approve", payload={"amount": 1}, interrupt_id="i",
        checkpoint_id="r@0", turn="{}"))
    assert rec.state.phase == Phase.RESUMABLE and rec.state.turn_recorded
    assert store.checkpoints.read("r@0") == "{}"
    out, n_resume = store.counted(lambda: svc.resume(rec.token, {"approved": True},
                                                     ResumeRequest(session_id="s", scope="t")))
    assert not out.replayed and n_resume == 1
    assert (n_pause == 1) == (kind == "units"), n_pause


def test_a_pause_whose_turn_fails_is_not_taken(tmp_path: Path) -> None:
    """`turn.write-failed.stays-paused`: in one unit with its turn, a pause whose turn write
    fails is not taken at all (nothing of it committed); taken again, it is a fresh pause."""
    store = CountingSqlite(tmp_path / "svc.db")
    svc = service_on(store)
    write = store.checkpoints.write

    def failing(checkpoint_id: str, thread_id: str, turn: str) -> bool:  # the driver fails
        store.read("SELECT nope FROM nothing")
        return False
    store.checkpoints.write = failing  # type: ignore[method-assign]  # inside the unit
    with pytest.raises(Exception) as err:
        svc.pause(binding=BINDING, name="approve", payload={"amount": 1}, interrupt_id="i",
                  checkpoint_id="r@0", turn="{}")
    assert getattr(err.value, "code", None) is not None
    assert store.ledger.get("i") is None and store.payloads.get("i") is None
    store.checkpoints.write = write  # type: ignore[method-assign]
    rec = svc.pause(binding=BINDING, name="approve", payload={"amount": 1}, interrupt_id="i",
                    checkpoint_id="r@0", turn="{}")
    assert rec.state.phase == Phase.RESUMABLE


# -- the primitive -------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["sqlite", "memory"])
def test_commit_so_far_lets_others_in_and_the_rest_commits_at_the_end(
        tmp_path: Path, kind: str) -> None:
    """Inside a unit, ``commit_so_far`` commits the writes made so far (another handle sees
    them) and holds nothing until the unit's next call; what follows commits at the end, or
    -- if the unit then dies -- not at all, while what was committed stays."""
    store: Any = CountingSqlite(tmp_path / "p.db") if kind == "sqlite" else MemoryStore()
    assert isinstance(store, Units)  # both units and commit_so_far
    store = typing.cast(Any, store)
    other = SqliteStore(tmp_path / "p.db", busy_timeout=0.5) if kind == "sqlite" else store
    with pytest.raises(Killed), store.unit_of_work():
        store.payloads.record("a", "1")
        store.commit_so_far()
        assert other.payloads.get("a") == "1"
        other.payloads.record("b", "2")  # no lock is held between the two transactions
        store.payloads.record("c", "3")
        if kind == "sqlite":
            assert other.payloads.get("c") is None
        raise Killed()
    if kind == "sqlite":
        assert (other.payloads.get("a"), other.payloads.get("b"), other.payloads.get("c")) == (
            "1", "2", None)
    with store.unit_of_work():
        store.payloads.record("d", "4")
        store.commit_so_far()
        store.commit_so_far()  # nothing more to commit
        store.payloads.record("e", "5")
    assert other.payloads.get("d") == "4" and other.payloads.get("e") == "5"
    with store.unit_of_work():  # commit_so_far as the unit's last call: its end has no more
        store.payloads.record("f", "6")
        store.commit_so_far()
    assert other.payloads.get("f") == "6"
    store.commit_so_far()  # outside a unit: nothing to do
    if kind == "sqlite":
        assert store.counted(lambda: None)[1] == 0


# -- one winner ----------------------------------------------------------------------------------


@pytest.fixture(params=["sqlite", "postgres"])
def durable_spec(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    from pausepoint_conformance.faults.testbed import drop, fresh_postgres, fresh_sqlite

    if request.param == "sqlite":
        spec = fresh_sqlite(str(tmp_path), "race.db")
    else:
        import os

        dsn = os.environ.get("PAUSEPOINT_PG_DSN", "")
        if not dsn:
            pytest.skip("PAUSEPOINT_PG_DSN is not set")
        spec = fresh_postgres(dsn, "pp_units")
    yield spec
    drop(spec)


def test_racing_resumes_of_one_pause_have_one_winner(durable_spec: Any) -> None:
    """`resume.consume.single-winner`: engines (each its own connections) resume one pause at
    once with the same answer; the consume inside each resume's unit picks one winner, the
    effect after the question runs once, every racer ends seeing the run done."""
    import threading

    bank, ring = Bank(), KeyRing.generate()
    lock = threading.Lock()

    def pay() -> int:
        with lock:
            return bank.pay()

    def agent(ctx: RunContext, data: Any) -> Any:
        ctx.ask("approve", {"amount": 1})
        return ctx.effect("pay", pay)

    def engine() -> Engine:
        return Engine.open(durable_spec.open(), agents={"agent": agent},
                           interactions=INTERACTIONS, clock=ManualClock(0), signer=ring)
    first = engine()
    (p,) = first.start("agent", None, run_id="r").pauses
    racers = [engine() for _ in range(4)]
    barrier = threading.Barrier(len(racers))
    results: list[Any] = []

    def race(e: Engine) -> None:
        barrier.wait()
        results.append(e.resume(p.token, {"approved": True}).status)
    threads = [threading.Thread(target=race, args=(e,)) for e in racers]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    row = first.deployment.service.ledger.get(p.interrupt_id)
    assert row is not None and row.state.phase == Phase.CONSUMED
    assert bank.paid == 1 and len(results) == len(racers)
    assert first.status("r").value == "done"
    for e in (first, *racers):
        e.close()


def test_a_resume_racing_a_cancel_of_its_run_never_deadlocks(durable_spec: Any) -> None:
    """`cancel.distinct`, `resume.consume.single-winner`: a resume's unit locks the pause row
    (its consume) before the run row (its claim); a cancel's unit does too (its pauses first,
    then the run's take-over), so on PostgreSQL the two queue behind each other -- with the
    cancel taking the run first they deadlock and one fails ``store_unavailable`` (seen in
    about a third of such races).  Every race ends with one verdict: the answer continued the
    run, or the cancel refused it."""
    import threading

    def agent(ctx: RunContext, data: Any) -> Any:
        ctx.ask("approve", {"amount": 1})
        ctx.ask("approve", {"amount": 2})

    ring = KeyRing.generate()

    def engine() -> Engine:
        return Engine.open(durable_spec.open(), agents={"agent": agent},
                           interactions=INTERACTIONS, clock=ManualClock(0), signer=ring)
    starter, resumer, canceller = engine(), engine(), engine()
    failures: list[str] = []
    def attempt(barrier: threading.Barrier, op: Callable[[], Any]) -> None:
        barrier.wait()
        try:
            op()
        except Exception as exc:  # every failure is reported below
            if getattr(exc, "code", None) is not pausepoint.ErrorCode.PAUSE_CANCELLED:
                failures.append(f"{type(exc).__name__}: {exc}"[:300])

    for i in range(12):
        (p,) = starter.start("agent", None, run_id=f"r{i}").pauses
        barrier = threading.Barrier(2)
        threads = [
            threading.Thread(target=attempt, args=(barrier, functools.partial(
                resumer.resume, p.token, {"approved": True}))),
            threading.Thread(target=attempt, args=(barrier, functools.partial(
                canceller.cancel, f"r{i}")))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert starter.status(f"r{i}").value == "cancelled"
    assert failures == []
    for e in (starter, resumer, canceller):
        e.close()
