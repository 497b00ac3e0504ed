"""Benchmark: each framework's pause->resume cycle with and without its pausepoint guard, side by
side in one run (medians, and the ratio guarded / plain).  Reports figures, asserts nothing.

    python bench/bench_guards.py [--rounds N] [--warmup N] [--only NAME ...] [--dir DIR] [--json]

A cycle starts a run that pauses once and answers it once, on durable SQLite files in a scratch
directory on a real disk (``--dir``, default: the repository root):

* **langgraph**: a one-node ``StateGraph`` whose node calls ``interrupt()``, on ``SqliteSaver``;
  plain: ``invoke`` then ``invoke(Command(resume={id: answer}))``; guarded: the same graph in a
  :class:`~pausepoint.guards.langgraph.GuardedGraph` (the interrupt registered with a signed
  token, the resume decided in the ledger), the guard's store a SQLite file beside the saver's.
* **openai-agents**: an agent (offline scripted model) whose one tool needs approval; plain:
  ``Runner.run``, ``RunState`` saved as JSON, loaded, approved, ``Runner.run`` again; guarded:
  :class:`~pausepoint.guards.openai_agents.GuardedRunner` ``run`` and ``resume_sync``.
* **pydantic-ai**: an agent (a ``FunctionModel``) whose one tool ``requires_approval``;
  plain: ``agent.run``, the history saved as JSON, loaded, ``agent.run(message_history=...,
  deferred_tool_results=...)``; guarded: :class:`~pausepoint.guards.pydantic_ai.GuardedAgent`
  ``run`` and ``resume`` (the history saved and loaded alike).
* **llama-index-workflows**: a one-step workflow waiting with ``wait_for_event``; plain: run
  until idle, ``to_dict`` saved as JSON, ``from_dict``, ``send_event``; guarded:
  :class:`~pausepoint.guards.llama_index_workflows.GuardedWorkflow` ``run`` and ``resume``
  (the context saved and loaded alike).

Rounds alternate plain and guarded, so a load that comes and goes hits both alike.  A framework
is one entry of :data:`FRAMEWORKS`: a factory of a :class:`Pair` (``plain()`` and ``guarded()``
each time one cycle) -- add one line there to bench another.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

sys.path.insert(0, str(Path(__file__).resolve().parent))

from benchkit import Summary, disk_scratch, load_average
from pausepoint import Interaction, KeyRing
from pausepoint.guards import Guard


class Pair(Protocol):
    """One framework's cycle, plain and guarded: each call runs one pause->resume cycle and
    returns its duration in seconds."""

    def plain(self) -> float: ...

    def guarded(self) -> float: ...

    def close(self) -> None: ...


def _guard(directory: str, framework: str, interactions: list[Interaction]) -> Guard:
    return Guard.open(f"sqlite:{os.path.join(directory, framework + '-guard.db')}",
                      framework=framework, interactions=interactions, signer=KeyRing.generate())


class LangGraphPair:
    def __init__(self, directory: str) -> None:
        import sqlite3
        from typing import TypedDict

        from langgraph.checkpoint.sqlite import SqliteSaver
        from langgraph.graph import END, START, StateGraph
        from langgraph.types import Command, interrupt

        from pausepoint.guards.langgraph import GuardedGraph

        class State(TypedDict, total=False):
            answer: Any

        graph = StateGraph(State)
        graph.add_node("approve", lambda s: {"answer": interrupt({"amount": 12})})
        graph.add_edge(START, "approve")
        graph.add_edge("approve", END)
        self.conn = sqlite3.connect(os.path.join(directory, "langgraph.db"),
                                    check_same_thread=False)
        self.app = graph.compile(checkpointer=SqliteSaver(self.conn))
        self.guard = _guard(directory, "langgraph", [Interaction("approve")])
        self.guarded_app = GuardedGraph(self.app, self.guard)
        self.command = Command

    def plain(self) -> float:
        config: Any = {"configurable": {"thread_id": uuid.uuid4().hex}}
        t0 = time.perf_counter()
        (asked,) = self.app.invoke({}, config)["__interrupt__"]
        self.app.invoke(self.command(resume={asked.id: {"approved": True}}), config)
        return time.perf_counter() - t0

    def guarded(self) -> float:
        t0 = time.perf_counter()
        (asked,) = self.guarded_app.invoke({}, thread_id=uuid.uuid4().hex).interrupts
        done = self.guarded_app.resume(asked.token, {"approved": True})
        dt = time.perf_counter() - t0
        if done.replayed or done.outcome["output"] != {"answer": {"approved": True}}:
            raise RuntimeError(f"the guarded LangGraph cycle did not resume: {done.outcome}")
        return dt

    def close(self) -> None:
        self.guard.close()
        self.conn.close()


class OpenAIAgentsPair:
    def __init__(self, directory: str) -> None:
        from agents import Agent, RunConfig, Runner, RunState, function_tool, set_tracing_disabled

        from pausepoint.guards.openai_agents import GuardedRunner
        from pausepoint_conformance.peers.base import ModelScript, ToolCall
        from pausepoint_conformance.peers.openai_agents_peer import ScriptModel

        set_tracing_disabled(True)

        @function_tool(needs_approval=True)
        def refund(order: str) -> str:
            """Refund an order."""
            return f"refunded {order}"

        call = ToolCall("refund", json.dumps({"order": "o-1"}))
        self.agent: Any = Agent(name="support", tools=[refund], model=ScriptModel(
            ModelScript(turns=((call,),), gates=(), questions={})))
        self.run_config = RunConfig(tracing_disabled=True)
        self.runner_cls, self.state_cls = Runner, RunState
        self.saved: dict[str, str] = {}  # the application's saved states, as plain SDK users
        self.guard = _guard(directory, "openai-agents", [Interaction("refund", tool=True)])
        self.guarded_runner = GuardedRunner(self.guard, self.agent)

    def plain(self) -> float:
        t0 = time.perf_counter()
        first = self.runner_cls.run_sync(self.agent, "refund o-1", run_config=self.run_config)
        key = uuid.uuid4().hex
        self.saved[key] = json.dumps(first.to_state().to_json())
        state = asyncio.run(self.state_cls.from_json(self.agent, json.loads(self.saved[key])))
        (item,) = state.get_interruptions()
        state.approve(item)
        done = self.runner_cls.run_sync(self.agent, state, run_config=self.run_config)
        self.saved[key] = json.dumps(done.to_state().to_json())
        return time.perf_counter() - t0

    def guarded(self) -> float:
        t0 = time.perf_counter()
        out = asyncio.run(self.guarded_runner.run("refund o-1", thread_id=uuid.uuid4().hex,
                                                  run_config=self.run_config))
        (asked,) = out.interrupts
        done = self.guarded_runner.resume_sync(asked.token, {"approved": True},
                                               run_config=self.run_config)
        dt = time.perf_counter() - t0
        if done.replayed or done.outcome["interrupts"]:
            raise RuntimeError(f"the guarded OpenAI Agents cycle did not resume: {done}")
        return dt

    def close(self) -> None:
        self.guard.close()


class PydanticAIPair:
    def __init__(self, directory: str) -> None:
        from pydantic_ai import Agent
        from pydantic_ai.messages import (
            ModelMessagesTypeAdapter,
            ModelResponse,
            TextPart,
            ToolCallPart,
        )
        from pydantic_ai.models.function import FunctionModel
        from pydantic_ai.tools import DeferredToolRequests, DeferredToolResults

        from pausepoint.guards.pydantic_ai import GuardedAgent

        def model(messages: list[Any], info: Any) -> ModelResponse:
            if sum(isinstance(m, ModelResponse) for m in messages) == 0:
                return ModelResponse(parts=[ToolCallPart("refund", {"order": "o-1"})])
            return ModelResponse(parts=[TextPart("refunded")])
        self.agent: Any = Agent(FunctionModel(model), output_type=[str, DeferredToolRequests])

        @self.agent.tool_plain(requires_approval=True)
        def refund(order: str) -> str:
            return f"refunded {order}"
        self.history, self.results = ModelMessagesTypeAdapter, DeferredToolResults
        self.saved: dict[str, bytes] = {}  # the application's saved histories
        self.guard = _guard(directory, "pydantic-ai", [Interaction("approve")])
        self.guarded_agent = GuardedAgent(self.agent, self.guard)

    def plain(self) -> float:
        async def cycle() -> None:
            first = await self.agent.run("refund o-1")
            key = uuid.uuid4().hex
            self.saved[key] = self.history.dump_json(first.all_messages())
            (call,) = first.output.approvals
            done = await self.agent.run(
                message_history=self.history.validate_json(self.saved[key]),
                deferred_tool_results=self.results(approvals={call.tool_call_id: True}))
            self.saved[key] = self.history.dump_json(done.all_messages())
        t0 = time.perf_counter()
        asyncio.run(cycle())
        return time.perf_counter() - t0

    def guarded(self) -> float:
        async def cycle() -> Any:
            out = await self.guarded_agent.run("refund o-1", conversation_id=uuid.uuid4().hex)
            (asked,) = out.interrupts
            key = uuid.uuid4().hex
            if out.result is None:
                raise RuntimeError(f"the guarded Pydantic AI run kept no result: {out}")
            self.saved[key] = self.history.dump_json(out.result.all_messages())
            done = await self.guarded_agent.resume(
                asked.token, {"approved": True},
                message_history=self.history.validate_json(self.saved[key]))
            went_on = done.result.result if done.result is not None else None
            if went_on is None:
                raise RuntimeError(f"the guarded Pydantic AI cycle did not go on: {done}")
            self.saved[key] = self.history.dump_json(went_on.all_messages())
            return done
        t0 = time.perf_counter()
        done = asyncio.run(cycle())
        dt = time.perf_counter() - t0
        if done.replayed or done.outcome["output"] != "refunded":
            raise RuntimeError(f"the guarded Pydantic AI cycle did not resume: {done}")
        return dt

    def close(self) -> None:
        self.guard.close()


class LlamaIndexWorkflowsPair:
    def __init__(self, directory: str) -> None:
        from workflows import Context, Workflow, step
        from workflows.events import (
            HumanResponseEvent,
            InputRequiredEvent,
            StartEvent,
            StopEvent,
            WorkflowIdleEvent,
        )

        from pausepoint.guards.llama_index_workflows import GuardedWorkflow, ask

        class Plain(Workflow):
            @step
            async def wait(self, ctx: Context, ev: StartEvent) -> StopEvent:
                # an Event takes any field as a keyword (its **params); its typing names none
                asked = InputRequiredEvent(prefix="refund?")  # type: ignore[call-arg]
                got = await ctx.wait_for_event(
                    HumanResponseEvent, waiter_event=asked,
                    waiter_id="refund", timeout=None)
                return StopEvent(result=got.response)

        class Guarded(Workflow):
            @step
            async def wait(self, ctx: Context, ev: StartEvent) -> StopEvent:
                return StopEvent(result=await ask(ctx, "approve", {"order": "o-1"},
                                                  waiter_id="refund"))
        self.context, self.human, self.idle = Context, HumanResponseEvent, WorkflowIdleEvent
        self.plain_wf = Plain(timeout=None)
        self.saved: dict[str, str] = {}  # the application's saved contexts
        self.guard = _guard(directory, "llama-index-workflows", [Interaction("approve")])
        self.guarded_wf = GuardedWorkflow(Guarded(timeout=None), self.guard)

    def plain(self) -> float:
        async def cycle() -> None:
            handler = self.plain_wf.run()
            key = uuid.uuid4().hex
            async for ev in handler.stream_events(expose_internal=True):
                if isinstance(ev, self.idle):
                    self.saved[key] = json.dumps(handler.ctx.to_dict())
                    await handler.cancel_run()
                    break
            again = self.plain_wf.run(ctx=self.context.from_dict(
                self.plain_wf, json.loads(self.saved[key])))
            again.ctx.send_event(self.human(response="yes"))  # type: ignore[call-arg]  # as above
            await again
        t0 = time.perf_counter()
        asyncio.run(cycle())
        return time.perf_counter() - t0

    def guarded(self) -> float:
        async def cycle() -> Any:
            out = await self.guarded_wf.run(thread_id=uuid.uuid4().hex)
            (asked,) = out.interrupts
            key = uuid.uuid4().hex
            self.saved[key] = json.dumps(out.context)
            return await self.guarded_wf.resume(asked.token, {"approved": True},
                                                context=json.loads(self.saved[key]))
        t0 = time.perf_counter()
        done = asyncio.run(cycle())
        dt = time.perf_counter() - t0
        if done.replayed or not done.outcome["done"]:
            raise RuntimeError(f"the guarded llama-index-workflows cycle did not end: {done}")
        return dt

    def close(self) -> None:
        self.guard.close()


FRAMEWORKS: dict[str, Callable[[str], Pair]] = {
    "langgraph": LangGraphPair,
    "openai-agents": OpenAIAgentsPair,
    "pydantic-ai": PydanticAIPair,
    "llama-index-workflows": LlamaIndexWorkflowsPair,
}
"""Every framework benched: its name and the factory of its :class:`Pair` (given the scratch
directory).  One line per framework."""


def bench(name: str, directory: str, rounds: int, warmup: int) -> dict[str, Any]:
    pair = FRAMEWORKS[name](directory)
    try:
        for _ in range(warmup):
            pair.plain()
            pair.guarded()
        plain, guarded = [], []
        for _ in range(rounds):
            plain.append(pair.plain())
            guarded.append(pair.guarded())
    finally:
        pair.close()
    p, g = Summary.of(plain), Summary.of(guarded)
    return {"framework": name, "plain_median_ms": p.median * 1e3, "plain_p95_ms": p.p95 * 1e3,
            "guarded_median_ms": g.median * 1e3, "guarded_p95_ms": g.p95 * 1e3,
            "ratio": g.median / p.median, "rounds": rounds}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--rounds", type=int, default=50)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--only", nargs="*", choices=sorted(FRAMEWORKS))
    parser.add_argument("--dir", default=None, help="scratch directory on a real disk")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    names = args.only or list(FRAMEWORKS)
    with disk_scratch(args.dir) as (tmp, fs):
        rows = [bench(n, tmp, args.rounds, args.warmup) for n in names]
    load = load_average()
    if args.json:
        print(json.dumps({"filesystem": fs.describe(), "load": load, "rows": rows}, indent=2))
        return 0
    print(f"pause->resume cycle, {args.rounds} rounds each (plain and guarded alternating), on "
          f"{fs.describe()}; load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    print(f"{'framework':<16}{'plain median':>14}{'guarded median':>16}{'ratio':>8}"
          f"{'plain p95':>12}{'guarded p95':>13}")
    for r in rows:
        print(f"{r['framework']:<16}{r['plain_median_ms']:>11.2f} ms{r['guarded_median_ms']:>13.2f}"
              f" ms{r['ratio']:>7.2f}x{r['plain_p95_ms']:>9.2f} ms{r['guarded_p95_ms']:>10.2f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
