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
