"""What an Engine operation knows without reading it again -- the run as its last write left it,
the questions a drive just asked, the pauses of a step and the answer a resume just kept -- is
what the store holds: every result equals the one read back from the store, on every store,
through starts, multi-question steps, effects, errors, replays and a restart."""

from __future__ import annotations

import json
from typing import Any

import attrs
import pytest

from pausepoint import Engine, Interaction, RunContext, RunResult
from pausepoint.core.tokens import KeyRing
from pausepoint.engine.clock import ManualClock
from pausepoint_conformance.faults.testbed import StoreSpec


class Killed(BaseException):
    """The process dies here."""


def agents(log: list[str]) -> dict[str, Any]:
    def once(ctx: RunContext, data: Any) -> Any:
        return ctx.ask("ask", {"n": data})

    def pair(ctx: RunContext, data: Any) -> Any:
        a, b = ctx.ask_all([("ask", {"n": 1}), ("ask", {"n": 2})])
        return [a, b, ctx.ask("ask", {"n": 3})]

    def logged(what: str, result: int) -> Any:
        def effect() -> int:
            log.append(what)
            return result
        return effect

    def effectful(ctx: RunContext, data: Any) -> Any:
        first = ctx.effect("first", logged("first", 1))
        answer = ctx.ask("ask", {"n": first})
        return [answer, ctx.effect("second", logged("second", 2))]

    def failing(ctx: RunContext, data: Any) -> Any:
        if ctx.ask("ask", {"n": 0}) == {"fail": True}:
            raise ValueError("the agent failed")
        return "ok"

    def dying(ctx: RunContext, data: Any) -> Any:
        def die() -> None:
            raise Killed()
        return ctx.effect("never-finished", die)

    return {"once": once, "pair": pair, "effectful": effectful, "failing": failing,
            "dying": dying}


def open_engine(spec: StoreSpec, log: list[str]) -> Engine:
    where = "memory:" if spec.kind == "memory" else spec.open()
    return Engine.open(where, agents=agents(log), interactions=[Interaction("ask")],
                       clock=ManualClock(0), signer=KeyRing.generate())


def read_back(engine: Engine, result: RunResult) -> RunResult:
    """The result as the store holds it now: the run and its live pauses, read."""
    run = engine.deployment.service.runs.get(result.run_id)
    assert run is not None
    return RunResult(run_id=result.run_id, status=run.status,
                     output=result.output if run.status == "done" else None,
                     pauses=Engine._outstanding(engine, result.run_id), events=result.events,
                     replayed=result.replayed, interrupt_id=result.interrupt_id)


def drive_all(engine: Engine) -> list[tuple[RunResult, RunResult]]:
    """Every agent from its start to its end: each operation's result beside the store's,
    read right after it."""
    seen: list[tuple[RunResult, RunResult]] = []

    def note(result: RunResult) -> RunResult:
        seen.append((result, read_back(engine, result)))
        return result

    for i, agent in enumerate(("once", "pair", "effectful", "failing")):
        engine.raise_errors = False
        result = note(engine.start(agent, i, run_id=f"r{i}"))
        while result.pauses:
            pause = result.pauses[0]
            answer = {"fail": True} if agent == "failing" else {"id": pause.interrupt_id}
            result = note(engine.resume(pause.token, answer))
            note(engine.resume(pause.token, answer))  # the same answer again: a replay
    with pytest.raises(Killed):  # dies inside its effect: the run stays running
        engine.start("dying", 0, run_id="dead")
    (recovered,) = engine.restart()  # its own run: a recovery pause in doubt
    note(recovered)
    return seen


def test_every_result_is_what_the_store_holds(any_store_spec: StoreSpec) -> None:
    log: list[str] = []
    engine = open_engine(any_store_spec, log)
    try:
        results = drive_all(engine)
        assert [r.status for r, _ in results if r.run_id == "r1"][-1] == "done"
        last, _ = results[-1]
        assert last.status == "paused" and last.pauses  # the recovery pause
        assert len(results) == 17  # 4 starts, 6 answers and their replays, the restart
        for result, stores in results:
            if not result.replayed:  # a replay repeats the first result, not the store's now
                assert result == stores
        assert log == ["first", "second"]  # every effect once
    finally:
        engine.close()


def _results_now(engine: Engine) -> list[tuple[RunResult, RunResult]]:
    """Each operation's result beside the store's, taken right after it."""
    pairs = []
    result = engine.start("pair", 0, run_id="p")
    pairs.append((result, read_back(engine, result)))
    for pause in result.pauses:
        answered = engine.resume(pause.token, {"n": 1})
        pairs.append((answered, read_back(engine, answered)))
    return pairs


class ForgetsTheSecondStep(Engine):
    """Broken: any paused drive is taken to wait on nothing."""

    def _asked(self, owned: Any, run: Any, events: Any) -> Any:
        return ()


class StaleRun(Engine):
    """Broken: a drive's result tells the status the run had when the drive began."""

    def _drive(self, owned: Any) -> Any:
        return attrs.evolve(super()._drive(owned), status=owned.status)


@pytest.mark.parametrize("broken", [ForgetsTheSecondStep, StaleRun])
def test_the_comparison_catches_a_result_that_is_not_the_stores(broken: type[Engine],
                                                                tmp_path: Any) -> None:
    log: list[str] = []
    good = Engine.open(f"sqlite:{tmp_path / 'good.db'}", agents=agents(log),
                       interactions=[Interaction("ask")], clock=ManualClock(0))
    bad = broken.open(f"sqlite:{tmp_path / 'bad.db'}", agents=agents(log),
                      interactions=[Interaction("ask")], clock=ManualClock(0))
    try:
        assert all(mine == stores for mine, stores in _results_now(good))
        assert any(mine != stores for mine, stores in _results_now(bad))
    finally:
        good.close()
        bad.close()


def test_a_continuation_that_fails_before_it_writes_still_took_the_run(
        any_store_spec: StoreSpec) -> None:
    """Where the continuation's take-over is written with the drive's first write (a store
    that serialises units), a drive that writes nothing -- the agent fails first -- still takes
    the run: the run ends in error under the continuation's epoch, the answer delivered."""
    engine = open_engine(any_store_spec, [])
    engine.raise_errors = False
    try:
        started = engine.start("failing", 0, run_id="f")
        done = engine.resume(started.pauses[0].token, {"fail": True})
        run = engine.deployment.service.runs.get("f")
        assert run is not None
        assert (done.status, run.status, run.epoch) == ("error", "error", 2)
        assert json.loads(run.state)["answers"] == {"f/0/0": {"fail": True}}
    finally:
        engine.close()


def test_only_stores_that_serialise_units_say_so(any_store_spec: StoreSpec) -> None:
    """A unit of work holds the store's write lock to its commit on SQLite and in memory, not
    on PostgreSQL (row locks): only there may an engine write a take-over with the drive's
    first write, decided on a row no one else can write meanwhile."""
    engine = open_engine(any_store_spec, [])
    try:
        serial = getattr(engine.deployment.store, "serial_units", False)
        assert serial is (any_store_spec.kind in ("memory", "sqlite"))
    finally:
        engine.close()


def test_an_operation_inside_a_continuation_leaves_its_claim_alone(
        any_store_spec: StoreSpec) -> None:
    """An agent may drive another run from inside its own continuation (a resume of another
    run's question, before its own first write): both runs go on, each taken once."""
    tokens: dict[str, str] = {}

    def inner(ctx: RunContext, data: Any) -> Any:
        return ctx.ask("ask", {"n": 0})

    def outer(ctx: RunContext, data: Any) -> Any:
        answer = ctx.ask("ask", {"n": 1})
        answered = engine.resume(tokens["inner"], {"n": 2})  # inside this drive
        return [answer, answered.status.value, answered.output]

    engine = Engine.open("memory:" if any_store_spec.kind == "memory" else any_store_spec.open(),
                         agents={"inner": inner, "outer": outer},
                         interactions=[Interaction("ask")], clock=ManualClock(0),
                         signer=KeyRing.generate())
    try:
        tokens["inner"] = engine.start("inner", run_id="i").pauses[0].token
        done = engine.resume(engine.start("outer", run_id="o").pauses[0].token, {"n": 1})
        assert (done.status, done.output) == ("done", [{"n": 1}, "done", {"n": 2}])
        for run_id in ("i", "o"):
            run = engine.deployment.service.runs.get(run_id)
            assert run is not None and (run.status, run.epoch) == ("done", 2)
    finally:
        engine.close()
