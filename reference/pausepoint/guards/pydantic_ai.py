"""The Pydantic AI guard (``pip install pausepoint[pydantic-ai]``): pausepoint's ledger, tokens
and effect journal in front of an agent's deferred tools; the message history (or conversation
store) stays the application's.

Adopting it (``docs/guards/pydantic-ai.md``)::

    guard = Guard.open("sqlite:pauses.db", framework="pydantic-ai", interactions=[...],
                       signer=ring)
    app = GuardedAgent(agent, guard)
    out = await app.run("refund order 7", conversation_id="order-7")  # out.interrupts[0].token
    done = await app.resume(token, {"approved": True}, message_history=history)

and, inside a tool, ``effect(guard, ctx, "notify", lambda: ...)`` around each side effect that
runs before the tool defers (Pydantic AI calls an approved tool again from the top).

What it does: every deferred tool call of a run's ``DeferredToolRequests`` output
(``ApprovalRequired``, ``CallDeferred``, ``requires_approval=True``) is registered in the
ledger under (conversation id, tool call id), with a signed token; the requests themselves are
kept as the conversation's state in the guard (:meth:`pausepoint.guards.Guard.save_state`), so
any server can tell an approval from a question.  :meth:`GuardedAgent.resume` runs
:meth:`pausepoint.guards.Guard.resume`; only the winner answers -- Pydantic AI takes every
result of a turn in one run, so the winner keeps its answer in the effect journal and, once
every call of the turn is answered, runs ``agent.run(deferred_tool_results=...)`` with all of
them, exactly once (itself a journalled effect).  Pydantic AI is imported when this module is.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, Final, Generic, TypeVar

import attrs
from pydantic import TypeAdapter
from pydantic_ai import Agent, RunContext
from pydantic_ai.agent import AgentRunResult
from pydantic_ai.messages import ToolCallPart
from pydantic_ai.tools import DeferredToolRequests, DeferredToolResults

from pausepoint.core.clauses import ErrorCode
from pausepoint.core.errors import PausepointError
from pausepoint.core.ports import EffectStatus
from pausepoint.guards.aio import resume_async
from pausepoint.guards.core import (
    DEFAULT_SCOPE,
    DEFAULT_SESSION,
    Answer,
    Guard,
    GuardedInterrupt,
    Resumed,
)

T = TypeVar("T")
O = TypeVar("O")  # noqa: E741 -- an agent's output type, as Pydantic AI spells it

FRAMEWORK: Final = "pydantic-ai"
_REQUESTS: Final = TypeAdapter(DeferredToolRequests)

Naming = Callable[[ToolCallPart, str], str]
"""``(deferred call, its kind: approval | question | external) -> the interaction it asks``."""


def default_name(call: ToolCallPart, kind: str) -> str:
    """An approval asks ``approve``; any other deferred call the interaction named after its
    tool."""
    return "approve" if kind == "approval" else call.tool_name


def conversation_of(ctx: RunContext[Any]) -> str:
    """The conversation a tool runs in (refused ``input_invalid`` without one: run the agent
    with ``conversation_id=``)."""
    if not ctx.conversation_id:
        raise PausepointError(ErrorCode.INPUT_INVALID, "input.bounded",
                              "a guarded agent runs in a conversation: pass conversation_id=")
    return ctx.conversation_id


def effect(guard: Guard, ctx: RunContext[Any], key: str, fn: Callable[[], T]) -> T:
    """Inside a tool: ``fn()`` at most once for this conversation, tool call and ``key``,
    however often Pydantic AI calls the tool again (an approved call runs from the top) and in
    however many processes (:meth:`pausepoint.guards.Guard.effect`)."""
    return guard.effect(conversation_of(ctx), f"{ctx.tool_call_id}:{key}", fn)


def _answer_key(tool_call_id: str) -> str:
    return f"{FRAMEWORK}:answer:{tool_call_id}"


def _never() -> Any:
    raise AssertionError("an answer is only read once it was kept")  # pragma: no cover


@attrs.frozen
class GuardedRun(Generic[O]):
    """A guarded agent run: Pydantic AI's own result (``None`` when a resume only kept its
    answer: other calls of the turn are still unanswered, or another resume runs the turn)
    and the deferred calls pending after it, each registered and carrying its token."""

    result: AgentRunResult[O] | None
    interrupts: tuple[GuardedInterrupt, ...]


def recorded(out: GuardedRun[Any]) -> dict[str, Any]:
    """What is recorded of a resume, returned to a replay: the run's output when it is text
    (None while the turn waits on other calls) and the calls pending after it."""
    output = None if out.result is None else out.result.output
    return {"output": output if isinstance(output, str) else None,
            "interrupts": [{"tool_call_id": i.tool_call_id, "name": i.name, "token": i.token}
                           for i in out.interrupts]}


class GuardedAgent(Generic[O]):
    """A Pydantic AI agent whose output type admits ``DeferredToolRequests``, behind a
    :class:`Guard`.  ``name_of`` names the interaction each deferred call asks
    (:func:`default_name`); its payload is the metadata the tool deferred with, else the
    call's arguments."""

    def __init__(self, agent: Agent[Any, O], guard: Guard, *,
                 name_of: Naming = default_name) -> None:
        self.agent = agent
        self.guard = guard.expect(FRAMEWORK)
        self.name_of = name_of

    async def run(self, user_prompt: Any = None, *, conversation_id: str,
                  session_id: str = DEFAULT_SESSION, scope: str = DEFAULT_SCOPE,
                  **kwargs: Any) -> GuardedRun[O]:
        """``agent.run(user_prompt, conversation_id=..., **kwargs)``, then register every
        deferred call of its output, bound to ``session_id`` and ``scope``."""
        result = await self.agent.run(user_prompt, conversation_id=conversation_id, **kwargs)
        return GuardedRun(result, self.register(result.output, conversation_id,
                                                session_id=session_id, scope=scope))

    def register(self, output: Any, conversation_id: str, *,
                 session_id: str = DEFAULT_SESSION,
                 scope: str = DEFAULT_SCOPE) -> tuple[GuardedInterrupt, ...]:
        """Register the deferred calls of a run's ``output`` (idempotent) and keep the requests
        as the conversation's state; nothing for an output that is not
        ``DeferredToolRequests``."""
        if not isinstance(output, DeferredToolRequests):
            return ()
        asks = [(call, output.kind(call.tool_call_id)) for call in
                [*output.approvals, *output.calls]]
        named = [(call, kind, self.name_of(call, kind),
                  output.metadata[call.tool_call_id] if call.tool_call_id in output.metadata
                  else call.args_as_dict())
                 for call, kind in asks]
        for call, _kind, name, payload in named:  # all or none (pause.refusal.before-mint)
            self.guard.check(thread_id=conversation_id, name=name, payload=payload,
                             tool_call_id=call.tool_call_id, session_id=session_id,
                             scope=scope)
        self.guard.save_state(conversation_id, _REQUESTS.dump_json(output).decode())
        return tuple(self.guard.pause(
            thread_id=conversation_id, interrupt_id=call.tool_call_id, name=name,
            payload=payload, tool_call_id=call.tool_call_id, session_id=session_id,
            scope=scope, turn={"kind": kind}) for call, kind, name, payload in named)

    def _requests(self, conversation_id: str) -> DeferredToolRequests:
        kept = self.guard.load_state(conversation_id)
        if kept is None:
            raise PausepointError(ErrorCode.PAUSE_UNKNOWN, "resume.token.binds-one-pause",
                                  f"no deferred calls kept for {conversation_id!r}")
        return _REQUESTS.validate_json(kept)

    def _results(self, a: Answer, requests: DeferredToolRequests) -> DeferredToolResults | None:
        """Keep this answer; every answer of the turn as Pydantic AI's results once all are
        kept (else None)."""
        self.guard.effect(a.thread_id, _answer_key(a.tool_call_id), lambda: a.data)
        results = DeferredToolResults()
        for call in [*requests.approvals, *requests.calls]:
            key = _answer_key(call.tool_call_id)
            if self.guard.effect_status(a.thread_id, key) != EffectStatus.FINISHED:
                return None
            data = self.guard.effect(a.thread_id, key, _never)
            if call in requests.approvals:
                results.approvals[call.tool_call_id] = bool(
                    data.get("approved") if isinstance(data, dict) else data)
            else:
                results.calls[call.tool_call_id] = data
        return results

    async def _continue(self, a: Answer, kwargs: dict[str, Any]) -> GuardedRun[O]:
        requests = self._requests(a.thread_id)
        results = self._results(a, requests)
        if results is None:  # the turn waits on other calls: this answer is kept
            return GuardedRun(None, tuple(self.guard.pending(a.thread_id)))
        loop = asyncio.get_running_loop()
        box: list[AgentRunResult[O]] = []

        def turn() -> str:  # the turn's continuation: once, whoever answered last
            given = kwargs if "conversation" in kwargs else {
                "conversation_id": a.thread_id, **kwargs}
            box.append(asyncio.run_coroutine_threadsafe(self.agent.run(
                deferred_tool_results=results, **given), loop).result())
            return "continued"
        first = min(c.tool_call_id for c in [*requests.approvals, *requests.calls])
        try:
            await asyncio.to_thread(self.guard.effect, a.thread_id,
                                    f"{FRAMEWORK}:turn:{first}", turn)
        except PausepointError as exc:  # another resume runs the turn now
            if exc.code != ErrorCode.OUTCOME_UNKNOWN or box:
                raise
        if not box:
            return GuardedRun(None, tuple(self.guard.pending(a.thread_id)))
        return GuardedRun(box[0], self.register(box[0].output, a.thread_id,
                                                session_id=a.session_id, scope=a.scope))

    async def resume(self, token: object, answer: object, *,
                     session_id: str = DEFAULT_SESSION, scope: str = DEFAULT_SCOPE,
                     responder: str = "", run_id: str | None = None,
                     **kwargs: Any) -> Resumed[GuardedRun[O]]:
        """Answer the deferred call ``token`` names (:meth:`pausepoint.guards.Guard.resume`).
        Only the winner goes on: it keeps the answer and, once every call of the turn is
        answered, runs ``agent.run(conversation_id=..., deferred_tool_results=..., **kwargs)``
        (``kwargs``: the application's ``message_history``, or its loaded ``conversation``, which
names the conversation itself) and registers
        what the run defers next.  A replay returns :func:`recorded` of the first."""
        async def go(a: Answer) -> GuardedRun[O]:
            return await self._continue(a, kwargs)
        return await resume_async(self.guard, token, answer, go, session_id=session_id,
                                  scope=scope, responder=responder, run_id=run_id,
                                  outcome=recorded)
