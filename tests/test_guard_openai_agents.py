"""The OpenAI Agents SDK guard: a real agent (offline model) whose refund tool needs approval,
two servers approving one call -- with the guard off (the double refund, strict xfail) and on
(one refund) -- and the guard's refusals, replay and conflict."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path
from typing import Any

import pydantic
import pytest
from agents import Agent, RunConfig, Runner, RunState, function_tool, set_tracing_disabled
from agents.tool_context import ToolContext

from pausepoint import ErrorCode, Interaction, KeyRing, PausepointError
from pausepoint.guards import Guard
from pausepoint.guards.openai_agents import GuardedRunner, call_id_of, effect
from pausepoint_conformance.peers.base import ModelScript, ToolCall
from pausepoint_conformance.peers.openai_agents_peer import ScriptModel
from test_guard_langgraph import race

set_tracing_disabled(True)
RUN = RunConfig(tracing_disabled=True)
RING = KeyRing.generate()


class Approval(pydantic.BaseModel):
    approved: bool


REFUND = Interaction("refund", payload=dict, response=Approval, tool=True)


class Bank:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.refunds: list[str] = []

    def refund(self, order: str) -> str:
        with self.lock:
            self.refunds.append(order)
            return f"refunded {order}"


def agent(bank: Bank, guarded: bool) -> Agent[Any]:
    @function_tool(needs_approval=True)
    def refund(ctx: ToolContext[Any], order: str) -> str:
        """Refund an order."""
        if not guarded:
            return bank.refund(order)
        return effect(ctx.tool_call_id, lambda: bank.refund(order))
    call = ToolCall("refund", json.dumps({"order": "o-1"}), "call-1")
    model = ScriptModel(ModelScript(turns=((call,),), gates=(), questions={}))
    return Agent(name="support", model=model, tools=[refund])


def _guard(path: Path) -> Guard:
    return Guard.open(f"sqlite:{path / 'pauses.db'}", framework="openai-agents",
                      interactions=[REFUND], signer=RING, payload_key=b"k" * 32)


@pytest.mark.parametrize("guarded", [
    pytest.param(False, marks=pytest.mark.xfail(
        strict=True, reason="without the guard both servers approve and run the refund")),
    True])
def test_two_servers_approve_one_call_refund_once(tmp_path: Path, guarded: bool) -> None:
    bank = Bank()
    if guarded:
        first = GuardedRunner(_guard(tmp_path), agent(bank, True))
        out = asyncio.run(first.run("refund o-1", thread_id="c-1", run_config=RUN))
        [p] = out.interrupts
        assert (p.tool_call_id, p.name, p.payload) == ("call-1", "refund", {"order": "o-1"})
        servers = [GuardedRunner(_guard(tmp_path), agent(bank, True)) for _ in range(2)]
        race([lambda s=s: s.resume_sync(p.token, {"approved": True}, run_config=RUN)
               for s in servers])
    else:
        result = Runner.run_sync(agent(bank, False), "refund o-1", run_config=RUN)
        saved = result.to_state().to_json()

        def server() -> None:
            a = agent(bank, False)
            state = asyncio.run(RunState.from_json(a, saved))
            [item] = state.get_interruptions()
            state.approve(item)
            Runner.run_sync(a, state, run_config=RUN)
        race([server, server])
    assert bank.refunds == ["o-1"]


def test_refusals_replay_and_conflict(tmp_path: Path) -> None:
    bank = Bank()
    runner = GuardedRunner(_guard(tmp_path), agent(bank, True))
    out = asyncio.run(runner.run("refund o-1", thread_id="c-2", session_id="s", scope="shop",
                                 run_config=RUN))
    [p] = out.interrupts
    assert call_id_of(out.result.interruptions[0]) == "call-1"
    for session, scope, given, code in (
            ("s", "other", {"approved": True}, ErrorCode.SCOPE_MISMATCH),
            ("x", "shop", {"approved": True}, ErrorCode.BINDING_MISMATCH),
            ("s", "shop", {"approved": "yes"}, ErrorCode.RESPONSE_INVALID)):
        with pytest.raises(PausepointError) as exc:
            runner.resume_sync(p.token, given, session_id=session, scope=scope,
                               run_config=RUN)
        assert exc.value.code is code
    assert bank.refunds == []

    async def answer() -> Any:
        return await runner.resume(p.token, {"approved": True}, session_id="s", scope="shop",
                                   run_config=RUN)
    first = asyncio.run(answer())
    assert not first.replayed and first.outcome["interrupts"] == []
    assert first.result is not None and first.result.result.final_output == "done"
    again = asyncio.run(answer())
    assert again.replayed and again.outcome == first.outcome
    with pytest.raises(PausepointError) as exc:
        runner.resume_sync(p.token, {"approved": False}, session_id="s", scope="shop",
                           run_config=RUN)
    assert exc.value.code is ErrorCode.RESPONSE_CONFLICT
    assert bank.refunds == ["o-1"]


def test_a_rejection_runs_nothing(tmp_path: Path) -> None:
    bank = Bank()
    runner = GuardedRunner(_guard(tmp_path), agent(bank, True))
    [p] = asyncio.run(runner.run("refund o-1", thread_id="c-3", run_config=RUN)).interrupts
    done = runner.resume_sync(p.token, {"approved": False}, run_config=RUN)
    assert not done.replayed and bank.refunds == []


def test_effect_outside_a_guarded_run_is_refused() -> None:
    with pytest.raises(PausepointError) as exc:
        effect("k", lambda: 1)
    assert exc.value.code is ErrorCode.OUTSIDE_RUN
