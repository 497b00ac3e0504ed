"""The embedding API (``import pausepoint``): an agent written as a plain function, run by an
Engine on SQLite, PostgreSQL or in memory -- asked questions come back validated, effects run
at most once and become unknown outcomes when the process dies inside them, a finished run
refuses a cancel."""

from __future__ import annotations

from typing import Any

import pydantic
import pytest

import pausepoint
from pausepoint import Engine, Interaction, RunContext, RunStatus
from pausepoint.core import runs
from pausepoint.core.registry import RECONCILE
from pausepoint.core.tokens import KeyRing
from pausepoint.engine.clock import ManualClock
from pausepoint_conformance.faults.testbed import StoreSpec


class Quote(pydantic.BaseModel):
    order: str
    amount: int


class Decision(pydantic.BaseModel):
    approved: bool


class Killed(BaseException):
    """The process dies here."""


INTERACTIONS = [Interaction("approve_refund", payload=Quote, response=Decision)]


class Bank:
    def __init__(self) -> None:
        self.paid: list[str] = []
        self.die_in_payment = False

    def pay(self, order: str) -> int:
        self.paid.append(order)
        if self.die_in_payment:
            self.die_in_payment = False
            raise Killed()
        return len(self.paid)


def engines(spec: StoreSpec, bank: Bank) -> tuple[Engine, Any]:
    seen: list[Any] = []

    def refund(ctx: RunContext, order: dict[str, Any]) -> dict[str, Any]:
        decision = ctx.ask("approve_refund", {"order": order["id"], "amount": 120})
        seen.append(decision)
        if not decision.approved:
            return {"refunded": 0}
        receipt = ctx.effect("pay", lambda: bank.pay(order["id"]))
        return {"refunded": 120, "receipt": receipt}

    ring, clock = KeyRing.generate(), ManualClock(0)

    def open_one(owner: str = "local") -> Engine:
        where = "memory:" if spec.kind == "memory" else spec.open()  # a URL, or a store
        return Engine.open(where, agents={"refund": refund}, interactions=INTERACTIONS,
                           clock=clock, signer=ring, owner=owner)
    return open_one(), (open_one, seen)


def test_the_embedding_api_is_public() -> None:
    for name in ("Engine", "RunContext", "RunResult", "Interaction", "RunStatus", "Agent"):
        assert name in pausepoint.__all__ and hasattr(pausepoint, name)


def test_an_agent_pauses_and_goes_on_with_the_validated_answer(
        any_store_spec: StoreSpec) -> None:
    """`resume.consume.at-most-once`, `replay.same-response`, `effect.at-most-once`."""
    bank = Bank()
    engine, (_open, seen) = engines(any_store_spec, bank)
    run = engine.start("refund", {"id": "o-1"}, run_id="run-1")
    assert run.status == RunStatus.PAUSED and [p.name for p in run.pauses] == ["approve_refund"]
    assert run.pauses[0].payload == {"order": "o-1", "amount": 120}
    done = engine.resume(run.pauses[0].token, {"approved": True})
    assert done.status == RunStatus.DONE and done.output == {"refunded": 120, "receipt": 1}
    assert isinstance(seen[-1], Decision) and seen[-1].approved
    again = engine.resume(run.pauses[0].token, {"approved": True})
    assert again.status == RunStatus.DONE and bank.paid == ["o-1"]
    with pytest.raises(pausepoint.PausepointError) as err:
        engine.cancel("run-1")
    assert err.value.code == pausepoint.ErrorCode.INVALID_TRANSITION
    assert engine.status("run-1") == pausepoint.RunView.DONE
    engine.close()


def test_a_death_inside_an_effect_is_an_unknown_outcome(
        any_store_spec: StoreSpec) -> None:
    """`effect.unknown-outcome`, `effect.reconcile`: the process died inside the payment; the
    restart asks an operator instead of paying again; reconciled as applied, the run ends
    without a second payment."""
    if any_store_spec.kind == "memory":
        pytest.skip("a process death loses an in-memory store")
    bank = Bank()
    engine, (open_one, _seen) = engines(any_store_spec, bank)
    run = engine.start("refund", {"id": "o-1"}, run_id="run-1")
    bank.die_in_payment = True
    with pytest.raises(Killed):
        engine.resume(run.pauses[0].token, {"approved": True})
    engine.close()
    later = open_one()
    (recovered,) = later.restart()
    (rp,) = recovered.pauses
    assert rp.name == RECONCILE.name and recovered.status == RunStatus.PAUSED
    assert later.status("run-1") == pausepoint.RunView.WAITING_UNKNOWN_OUTCOME
    later.reconcile(rp.interrupt_id, "applied")
    done = later.resume(rp.token, {})
    assert done.status == RunStatus.DONE and bank.paid == ["o-1"]
    later.close()


def test_a_cancelled_run_never_pays(
        any_store_spec: StoreSpec) -> None:
    """`cancel.distinct`: a cancelled run's question is refused, nothing is paid."""
    bank = Bank()
    engine, _ = engines(any_store_spec, bank)
    run = engine.start("refund", {"id": "o-1"}, run_id="run-1")
    assert engine.cancel("run-1").status == RunStatus.CANCELLED
    with pytest.raises(pausepoint.PausepointError) as err:
        engine.resume(run.pauses[0].token, {"approved": True})
    assert err.value.code == pausepoint.ErrorCode.PAUSE_CANCELLED
    assert bank.paid == []
    engine.close()


def test_a_harness_and_an_engine_share_a_store(tmp_path: Any) -> None:
    """`durability.restart`: each restarts only its own runs."""
    from pausepoint.engine.harness import Harness

    url = f"sqlite:{tmp_path / 'shared.db'}"
    bank = Bank()
    engine, _ = engines(StoreSpec("sqlite", url.removeprefix("sqlite:")), bank)
    harness = Harness.open(url)
    assert engine.start("refund", {"id": "o-1"}, run_id="e-run").status == RunStatus.PAUSED
    assert harness.start([{"op": "interrupt", "name": "ask"}], run_id="h-run").status == "paused"
    assert harness.restart() == [] and engine.restart() == []
    harness.deployment.store.close()
    engine.close()


def test_a_grandchild_under_a_cancelled_run_is_refused(any_store_spec: StoreSpec) -> None:
    """`run.child.cancelling-parent`: the child ended done by itself before its parent was
    cancelled; a run started under that child is under a cancelled run, and is refused."""
    bank = Bank()
    engine, _ = engines(any_store_spec, bank)
    engine.agents["noop"] = lambda _ctx, _data: None
    engine.start("refund", {"id": "o-1"}, run_id="p")
    assert engine.start("noop", run_id="c", parent_run_id="p").status == RunStatus.DONE
    engine.cancel("p")
    with pytest.raises(pausepoint.PausepointError) as err:
        engine.start("refund", {"id": "o-2"}, run_id="g", parent_run_id="c")
    assert err.value.code == pausepoint.ErrorCode.PAUSE_CANCELLED
    assert engine.status("c") == pausepoint.RunView.DONE and bank.paid == []
    engine.close()


def test_a_question_after_a_cancel_began_is_never_asked(any_store_spec: StoreSpec) -> None:
    """`run.cancel.in-flight`: a cancel took the run over while its agent ran (the canceller
    stopped there, cancelling); the agent then asks: the pause is refused in the ledger's
    insert, so the run has no question at all."""
    bank = Bank()
    engine, _ = engines(any_store_spec, bank)
    store = engine.deployment.service.runs

    def cancel_then_ask(ctx: RunContext, _data: Any) -> Any:
        run = store.get(ctx.run_id)
        assert run is not None
        out = runs.step(run.run_state, runs.Cancel("canceller"))
        assert isinstance(out, runs.Accepted)
        assert store.replace(run, run.evolve(out.state))
        return ctx.ask("approve_refund", {"order": "o-1", "amount": 1})
    engine.agents["late"] = cancel_then_ask
    result = engine.start("late", run_id="r1")
    assert result.status == RunStatus.CANCELLING and result.pauses == ()
    assert list(engine.deployment.service.ledger.by_run("r1")) == []
    engine.close()


def test_a_retried_answer_continues_a_run_whose_winner_died_after_its_consume(
        any_store_spec: StoreSpec) -> None:
    """`resume.consume.at-most-once` with liveness (the TLA+ run level's Redeliver): the process
    that consumed the pause died before it kept the answer; the same answer sent again replays
    the consume and changes nothing while the winner may still be at work; once a restart found
    the answer lost, the retry goes on with it, paying once; a third copy changes nothing."""
    from pausepoint.engine.service import ResumeRequest

    bank = Bank()
    engine, _ = engines(any_store_spec, bank)
    run = engine.start("refund", {"id": "o-1"}, run_id="run-1")
    token = run.pauses[0].token
    # the winner's consume commits; its process dies before the continuation
    engine.deployment.service.resume(token, {"approved": True},
                                     ResumeRequest(session_id="session", scope="default"))
    assert engine.status("run-1") != pausepoint.RunView.DONE and bank.paid == []
    early = engine.resume(token, {"approved": True})
    assert early.replayed and bank.paid == []
    assert engine.restart() == []  # the answer died with the winner: only a retry has it
    done = engine.resume(token, {"approved": True})
    assert done.status == RunStatus.DONE and bank.paid == ["o-1"]
    again = engine.resume(token, {"approved": True})
    assert again.status == RunStatus.DONE and bank.paid == ["o-1"]
    engine.close()


def test_an_engine_whose_lease_ran_out_pays_nothing_and_a_restart_pays_once(
        any_store_spec: StoreSpec) -> None:
    """`run.ownership.fencing`: engine A's agent stalls before its payment until A's lease ran
    out (nobody took the run over yet); A's journal start is refused, so A stops without paying
    and the run stays A's, running; engine B's restart takes it over and pays exactly once."""
    bank, clock, ring = Bank(), ManualClock(0), KeyRing.generate()
    shared = any_store_spec.open() if any_store_spec.kind == "memory" else None
    stall = [True]

    def slow_refund(ctx: RunContext, order: dict[str, Any]) -> Any:
        if stall.pop() if stall else False:
            clock.advance(1_000)  # stalls past its lease (lease_ms below)
        return ctx.effect("pay", lambda: bank.pay(order["id"]))

    def open_one(owner: str) -> Engine:
        return Engine.open(shared or any_store_spec.open(), agents={"refund": slow_refund},
                           interactions=INTERACTIONS, clock=clock, signer=ring, owner=owner,
                           lease_ms=1_000)
    a, b = open_one("a"), open_one("b")
    stopped = a.start("refund", {"id": "o-1"}, run_id="run-1")
    assert stopped.status == RunStatus.RUNNING and bank.paid == []
    run = a.deployment.service.runs.get("run-1")
    assert run is not None and run.owner == "a" and run.epoch == 1
    assert a.deployment.service.effects.status("run-1", "pay") is None
    (recovered,) = b.restart()
    assert recovered.status == RunStatus.DONE and recovered.output == 1
    assert bank.paid == ["o-1"]
    for engine in (a, b):
        if shared is None:
            engine.close()


def test_an_engine_restart_finishes_a_cancel_whose_canceller_died(
        any_store_spec: StoreSpec) -> None:
    """`run.ownership.lease`: a canceller took the run over (cancelling, under its lease) and
    died there; a restart leaves it while that lease is live, then finishes the cancel: the
    run ends cancelled, its question cancelled, nothing paid."""
    bank = Bank()
    engine, _ = engines(any_store_spec, bank)
    svc = engine.deployment.service
    run = engine.start("refund", {"id": "o-1"}, run_id="run-1")
    held = svc.runs.get("run-1")
    assert held is not None
    out = runs.step(held.run_state, runs.Cancel("canceller", engine.clock.now(), 1_000))
    assert isinstance(out, runs.Accepted)
    assert svc.runs.replace(held, held.evolve(out.state))  # ... and the canceller dies
    assert engine.restart() == [] and engine.status("run-1") == pausepoint.RunView.CANCELLING
    assert isinstance(engine.clock, ManualClock)
    engine.clock.advance(1_000)
    (finished,) = engine.restart()
    assert finished.status == RunStatus.CANCELLED and finished.pauses == ()
    with pytest.raises(pausepoint.PausepointError) as err:
        engine.resume(run.pauses[0].token, {"approved": True})
    assert err.value.code == pausepoint.ErrorCode.PAUSE_CANCELLED
    assert bank.paid == []
    engine.close()


CHECKS = [Interaction("approve_refund", payload=Quote, response=Decision),
          Interaction("confirm_address")]


def two_questions(spec: StoreSpec, bank: Bank) -> Engine:
    def refund(ctx: RunContext, order: dict[str, Any]) -> dict[str, Any]:
        decision, address = ctx.ask_all([
            ("approve_refund", {"order": order["id"], "amount": 120}),
            ("confirm_address", {"order": order["id"]})])
        if decision.approved:
            ctx.effect("pay", lambda: bank.pay(order["id"]))
        return {"approved": decision.approved, "address": address}

    where = "memory:" if spec.kind == "memory" else spec.open()
    return Engine.open(where, agents={"refund": refund}, interactions=CHECKS,
                       clock=ManualClock(0), signer=KeyRing.generate())


def test_several_questions_at_once_go_on_when_every_one_is_answered(
        any_store_spec: StoreSpec) -> None:
    """`multi.independent`: two questions asked at once are answered on their own, in any
    order; the run goes on (and pays once) only when both are answered, with both answers."""
    bank = Bank()
    engine = two_questions(any_store_spec, bank)
    run = engine.start("refund", {"id": "o-1"}, run_id="run-1")
    first, second = run.pauses
    assert [first.name, second.name] == ["approve_refund", "confirm_address"]
    waiting = engine.resume(second.token, {"street": "Main"})
    assert waiting.status == RunStatus.PAUSED and [p.name for p in waiting.pauses] == [
        "approve_refund"] and bank.paid == []
    done = engine.resume(first.token, {"approved": True})
    assert done.status == RunStatus.DONE and bank.paid == ["o-1"]
    assert done.output == {"approved": True, "address": {"street": "Main"}}
    engine.close()


def test_several_questions_are_all_asked_or_none(any_store_spec: StoreSpec) -> None:
    """`pause.refusal.before-mint`: one bad question of two refuses both; nothing is asked."""
    def bad(ctx: RunContext, _data: Any) -> Any:
        return ctx.ask_all([("confirm_address", {}), ("approve_refund", {"order": 1})])

    engine = two_questions(any_store_spec, Bank())
    engine.agents["bad"] = bad
    with pytest.raises(pausepoint.PausepointError) as err:
        engine.start("bad", run_id="r1")
    assert err.value.code == pausepoint.ErrorCode.PAYLOAD_INVALID
    assert list(engine.deployment.service.ledger.by_run("r1")) == []
    engine.close()


def test_a_restart_continues_a_run_whose_resumer_died_after_its_consume(
        any_store_spec: StoreSpec) -> None:
    """`resume.continuation.recorded-turn`: the resumer kept the answer, then died before the
    continuation; a restart goes on with the kept answer, and pays once."""
    bank = Bank()
    engine, _ = engines(any_store_spec, bank)
    run = engine.start("refund", {"id": "o-1"}, run_id="run-1")
    rec = engine.deployment.service.resume(
        run.pauses[0].token, {"approved": True},
        pausepoint.ResumeRequest(session_id="session", scope="default")).record
    assert engine.restart() == []  # no answer kept: the run waits for the answer's retry
    engine.owned.keep_answer(rec, '{"approved":true}')  # as the dead resumer did
    (done,) = engine.restart()
    assert done.status == RunStatus.DONE and bank.paid == ["o-1"]
    assert engine.restart() == [] and bank.paid == ["o-1"]
    engine.close()


def test_an_agent_error_ends_the_run_raised_or_reported(any_store_spec: StoreSpec) -> None:
    """`run.lifecycle.table`: an ordinary error of the agent ends its run in ``error``; the
    engine raises it to the caller, or, with ``raise_errors=False``, reports it in the result
    (its events end with ``error``)."""
    def broken(ctx: RunContext, _data: Any) -> Any:
        ctx.effect("noted", lambda: None)
        raise ValueError("the agent's own bug")

    engine = two_questions(any_store_spec, Bank())
    engine.agents["broken"] = broken
    with pytest.raises(ValueError):
        engine.start("broken", run_id="r1")
    assert engine.deployment.service.runs.get("r1").status == RunStatus.ERROR  # type: ignore[union-attr]
    engine.raise_errors = False
    reported = engine.start("broken", run_id="r2")
    assert reported.status == RunStatus.ERROR
    assert reported.events == ("tool_call", "tool_result", "error")
    engine.close()


class Measure(pydantic.BaseModel):
    amount: int


@pytest.mark.parametrize("response", [dict, Measure], ids=["dict", "model"])
def test_an_answer_that_validates_to_an_inexact_integer_is_refused_before_the_consume(
        any_store_spec: StoreSpec, response: type[object]) -> None:
    """`resume.response.strict`: ``1e16`` is a JSON number whose canonical text reads back as
    an integer past 2**53 - 1, which is not exact JSON, so the validated answer cannot be kept
    as the run's answer: it is refused ``response_invalid`` before anything is written -- the
    pause stays resumable and an exact answer then goes on (it used to be consumed first and
    the engine then failed with an untyped ValueError, the answer lost and the run stuck)."""
    def ask(ctx: RunContext, _data: object) -> object:
        got = ctx.ask("measure", {"what": "length"})
        return got if isinstance(got, dict) else got.model_dump()  # type: ignore[attr-defined]
    where = "memory:" if any_store_spec.kind == "memory" else any_store_spec.open()
    engine = Engine.open(where, agents={"ask": ask},
                         interactions=[Interaction("measure", response=response)],
                         clock=ManualClock(0), signer=KeyRing.generate())
    try:
        run = engine.start("ask", None, run_id="run-1")
        token = run.pauses[0].token
        for inexact in ({"amount": 1e16}, {"amount": -2.0 ** 60}):
            with pytest.raises(pausepoint.PausepointError) as err:
                engine.resume(token, inexact)
            assert err.value.code == pausepoint.ErrorCode.RESPONSE_INVALID
            assert engine.status("run-1") == pausepoint.RunView.SAFELY_SUSPENDED
        done = engine.resume(token, {"amount": 2.0 ** 53 - 1})  # exact: goes on
        assert done.status == RunStatus.DONE and done.output == {"amount": 2 ** 53 - 1}
    finally:
        engine.close()
