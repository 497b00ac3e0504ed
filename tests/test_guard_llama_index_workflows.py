"""The llama-index-workflows guard: a real workflow whose step waits for a person
(``wait_for_event``), its context saved with ``to_dict`` by the application, two servers
answering one question, the step replayed by the library when the answer comes -- with the
guard off (the double charge, strict xfail) and on (one charge); tokens, replay, conflict."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel
from workflows import Context, Workflow, step
from workflows.events import (
    Event,
    HumanResponseEvent,
    InputRequiredEvent,
    StartEvent,
    StopEvent,
    WorkflowIdleEvent,
)

from doubles import Payments
from pausepoint import ErrorCode, Interaction, KeyRing, PausepointError
from pausepoint.guards import Guard
from pausepoint.guards.llama_index_workflows import FRAMEWORK, GuardedWorkflow, ask


class Approval(BaseModel):
    approved: bool


INTERACTIONS = [Interaction("approve", response=Approval)]



class Approved(Event):
    order: str
    approved: bool


class Refund(Workflow):
    """Hold the amount (a side effect before the wait: the library replays the step when the
    answer comes), ask for approval, then refund."""

    def __init__(self, payments: Payments, guard: Guard | None) -> None:
        super().__init__(timeout=None)
        self.payments = payments
        self.guard = guard

    def once(self, order: str, key: str) -> str:
        def go() -> str:
            return self.payments.do(f"{key}:{order}")
        return go() if self.guard is None else self.guard.effect(order, key, go)

    @step
    async def hold(self, ctx: Context, ev: StartEvent) -> Approved:
        order = str(ev.get("order"))
        self.once(order, "hold")
        if self.guard is None:
            got = await ctx.wait_for_event(
                HumanResponseEvent, waiter_event=InputRequiredEvent(prefix="approve?"),
                waiter_id="refund", timeout=None)
            return Approved(order=order, approved=bool(got.response))
        answer = await ask(ctx, "approve", {"order": order}, waiter_id="refund")
        return Approved(order=order, approved=bool(answer["approved"]))

    @step
    async def refund(self, ev: Approved) -> StopEvent:
        return StopEvent(result=self.once(ev.order, "refund") if ev.approved else "denied")


async def _plain_pause(wf: Refund) -> dict[str, Any]:
    handler = wf.run(order="o-7")
    async for ev in handler.stream_events(expose_internal=True):
        if isinstance(ev, WorkflowIdleEvent):
            saved = handler.ctx.to_dict()
            await handler.cancel_run()
            return saved
    raise AssertionError("the workflow did not wait")


async def _plain_answer(wf: Refund, saved: dict[str, Any]) -> Any:
    handler = wf.run(ctx=Context.from_dict(wf, saved))
    handler.ctx.send_event(HumanResponseEvent(response="yes"))
    return await asyncio.wait_for(handler, 30)


@pytest.mark.xfail(strict=True, reason="plain llama-index-workflows: two servers restoring "
                   "one saved context both refund, and the hold before the wait runs again")
def test_guard_off_refunds_twice() -> None:
    payments = Payments()

    async def go() -> None:
        saved = await _plain_pause(Refund(payments, None))
        await asyncio.gather(*[_plain_answer(Refund(payments, None), saved) for _ in range(2)])
    asyncio.run(asyncio.wait_for(go(), 60))
    assert payments.calls.count("refund:o-7") == 1
    assert payments.calls.count("hold:o-7") == 1


def _guards(tmp_path: Path, n: int = 3) -> list[Guard]:
    ring = KeyRing.generate("k1")
    return [Guard.open(f"sqlite:{tmp_path / 'pauses.db'}", framework=FRAMEWORK,
                       interactions=INTERACTIONS, signer=ring, payload_key=b"k" * 32)
            for _ in range(n)]


def test_guard_on_refunds_once(tmp_path: Path) -> None:
    payments = Payments()
    guards = _guards(tmp_path)

    async def go() -> list[Any]:
        first = await GuardedWorkflow(Refund(payments, guards[0]), guards[0]).run(
            thread_id="o-7", order="o-7")
        assert not first.done and first.context is not None
        (pause,) = first.interrupts
        assert (pause.name, pause.framework_interrupt_id) == ("approve", "refund")
        return list(await asyncio.gather(*[
            GuardedWorkflow(Refund(payments, g), g).resume(pause.token, {"approved": True},
                                                           context=first.context)
            for g in guards[1:]]))
    out = asyncio.run(asyncio.wait_for(go(), 60))
    assert sorted(r.replayed for r in out) == [False, True]
    assert payments.calls == ["hold:o-7", "refund:o-7"]
    winner = next(r for r in out if not r.replayed)
    assert winner.result is not None and winner.result.done
    assert winner.result.result == "rcpt-2"


def test_replay_conflict_and_tokens(tmp_path: Path) -> None:
    payments = Payments()
    (guard,) = _guards(tmp_path, 1)
    app = GuardedWorkflow(Refund(payments, guard), guard)

    async def go() -> None:
        first = await app.run(thread_id="o-7", order="o-7")
        (pause,) = first.interrupts
        assert first.context is not None
        saved = first.context
        with pytest.raises(PausepointError) as err:
            await app.resume(pause.token[:-2] + "xx", {"approved": True}, context=saved)
        assert err.value.code in {ErrorCode.TOKEN_INVALID, ErrorCode.TOKEN_MALFORMED}
        with pytest.raises(PausepointError) as err:
            await app.resume(pause.token, {"approved": "yes"}, context=saved)
        assert err.value.code == ErrorCode.RESPONSE_INVALID
        with pytest.raises(PausepointError) as err:
            await app.resume(pause.token, {"approved": True}, session_id="other",
                             context=saved)
        assert err.value.code == ErrorCode.BINDING_MISMATCH
        assert payments.calls == ["hold:o-7"]
        won = await app.resume(pause.token, {"approved": True}, context=saved)
        again = await app.resume(pause.token, {"approved": True}, context=saved)
        assert (won.replayed, again.replayed) == (False, True)
        assert again.outcome == won.outcome == {"done": True, "interrupts": []}
        with pytest.raises(PausepointError) as err:
            await app.resume(pause.token, {"approved": False}, context=saved)
        assert err.value.code == ErrorCode.RESPONSE_CONFLICT
    asyncio.run(asyncio.wait_for(go(), 60))
    assert payments.calls == ["hold:o-7", "refund:o-7"]
