"""The OpenAI Agents SDK guard (``pip install pausepoint[openai-agents]``): pausepoint's ledger,
tokens and effect journal in front of the SDK's approval path -- function tools with
``needs_approval``, the run stopping with ``result.interruptions``, its ``RunState`` saved as
JSON, ``state.approve(item)`` / ``state.reject(item)`` and ``Runner.run(agent, state)``.

Adopting it (``docs/guards/openai-agents.md``)::

    guard = Guard.open("sqlite:pauses.db", framework="openai-agents", interactions=[
        Interaction("refund", response=Approval, tool=True)], signer=ring)
    runner = GuardedRunner(guard, agent)
    out = await runner.run("refund order o-1", thread_id="c-1")   # out.interrupts[0].token
    await runner.resume(token, {"approved": True})               # one winner; replay; conflict

and, inside a tool, ``effect(key, fn)`` around its side effect.  Each approval is registered
under (thread id, the tool call id), asking the interaction named like the tool (or
``interactions={tool: name}``); the run's ``RunState`` JSON is kept beside it
(:meth:`pausepoint.guards.Guard.save_state`: the SDK hands its state to the application, and
the guard is that application).  Only the winner of a resume loads the state, approves or
rejects the call (``decide(answer)``, by default the answer's ``approved``) and runs the
agent on.  The SDK is imported when this module is.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, TypeVar

import attrs
import pydantic_core
from agents import Agent, Runner, RunResult, RunState, ToolApprovalItem

from pausepoint.core.clauses import ErrorCode
from pausepoint.core.errors import PausepointError
from pausepoint.guards.core import (
    DEFAULT_SCOPE,
    DEFAULT_SESSION,
    Answer,
    Guard,
    GuardedInterrupt,
    Resumed,
)

T = TypeVar("T")

FRAMEWORK = "openai-agents"

_ACTIVE: contextvars.ContextVar[tuple[Guard, str] | None] = contextvars.ContextVar(
    "pausepoint_openai_agents_run", default=None)


@contextmanager
def running(guard: Guard, thread_id: str) -> Iterator[None]:
    """Make ``guard`` and ``thread_id`` the ones :func:`effect` journals under, in this
    context (:class:`GuardedRunner` does it around every run)."""
    token = _ACTIVE.set((guard, thread_id))
    try:
        yield
    finally:
        _ACTIVE.reset(token)


def effect(key: str, fn: Callable[[], T]) -> T:
    """Inside a tool of a guarded run: ``fn()`` at most once for the run's thread and ``key``
    (:meth:`pausepoint.guards.Guard.effect`) -- use the tool call id
    (``ctx.tool_call_id``) or a business key.  Outside a guarded run it is refused
    ``outside_run``."""
    active = _ACTIVE.get()
    if active is None:
        raise PausepointError(ErrorCode.OUTSIDE_RUN, "run.binding.live",
                              "effect() was called outside a GuardedRunner's run")
    guard, thread = active
    return guard.effect(thread, key, fn)


def call_id_of(item: ToolApprovalItem) -> str:
    """The tool call id of a pending approval."""
    raw = item.raw_item
    found = raw.get("call_id") if isinstance(raw, dict) else getattr(raw, "call_id", None)
    return str(found or "")


def arguments_of(item: ToolApprovalItem) -> Any:
    """The arguments of a pending approval's call (parsed JSON, or the text)."""
    raw = item.raw_item
    text = raw.get("arguments") if isinstance(raw, dict) else getattr(raw, "arguments", None)
    try:
        return json.loads(text) if isinstance(text, str) else text
    except ValueError:
        return text


def approved(answer: Any) -> bool:
    """The default decision: the answer's ``approved`` (a JSON object with a boolean)."""
    return isinstance(answer, Mapping) and answer.get("approved") is True


@attrs.frozen
class GuardedResult:
    """A run's result (the SDK's own) and its pending approvals, each registered and
    carrying its token."""

    result: RunResult
    interrupts: tuple[GuardedInterrupt, ...]


def recorded(out: GuardedResult) -> dict[str, Any]:
    """What is recorded of a resume's result, returned to a replay: the final output (as
    JSON; None while approvals are pending) and the approvals pending after it."""
    return {"final_output": pydantic_core.to_jsonable_python(
                None if out.interrupts else out.result.final_output, fallback=repr),
            "interrupts": [{"tool_call_id": i.tool_call_id, "name": i.name, "token": i.token}
                           for i in out.interrupts]}


class GuardedRunner:
    """``Runner.run`` for one agent behind a :class:`Guard`.  ``interactions`` maps a tool
    name to the interaction its approval asks (default: the tool's own name); ``decide``
    turns an accepted answer (JSON) into approve (True) or reject."""

    def __init__(self, guard: Guard, agent: Agent[Any], *,
                 interactions: Mapping[str, str] | None = None,
                 decide: Callable[[Any], bool] = approved) -> None:
        if guard.framework != FRAMEWORK:
            raise PausepointError(ErrorCode.WIRING_INVALID, "wiring.consistent",
                                  f"an OpenAI Agents guard is opened with "
                                  f"framework={FRAMEWORK!r}")
        self.guard = guard
        self.agent = agent
        self.interactions = dict(interactions or {})
        self.decide = decide

    def register(self, thread_id: str, result: RunResult, *,
                 session_id: str = DEFAULT_SESSION,
                 scope: str = DEFAULT_SCOPE) -> GuardedResult:
        """Keep the run's state and register its pending approvals (idempotent)."""
        self.guard.save_state(thread_id, json.dumps(result.to_state().to_json()))
        found = tuple(self.guard.pause(
            thread_id=thread_id, interrupt_id=call_id_of(item),
            name=self.interactions.get(item.tool_name or "", item.tool_name or ""),
            payload=arguments_of(item), tool_call_id=call_id_of(item),
            session_id=session_id, scope=scope) for item in result.interruptions)
        return GuardedResult(result=result, interrupts=found)

    async def run(self, given: Any, *, thread_id: str, session_id: str = DEFAULT_SESSION,
                  scope: str = DEFAULT_SCOPE, **kwargs: Any) -> GuardedResult:
        """``Runner.run(agent, given)`` on the thread ``thread_id``; its approvals are
        registered, bound to ``session_id`` and ``scope``."""
        with running(self.guard, thread_id):
            result = await Runner.run(self.agent, given, **kwargs)
        return self.register(thread_id, result, session_id=session_id, scope=scope)

    async def _continue(self, a: Answer, kwargs: Mapping[str, Any]) -> GuardedResult:
        saved = self.guard.load_state(a.thread_id)
        if saved is None:
            raise PausepointError(ErrorCode.PAUSE_UNKNOWN, "resume.token.binds-one-pause",
                                  f"no run state is kept for thread {a.thread_id!r}")
        state: RunState[Any, Agent[Any]] = await RunState.from_json(self.agent,
                                                                     json.loads(saved))
        item = next((i for i in state.get_interruptions() if call_id_of(i) == a.interrupt_id),
                    None)
        if item is None:
            raise PausepointError(ErrorCode.PAUSE_UNKNOWN, "resume.token.binds-one-pause",
                                  f"the run state has no pending approval {a.interrupt_id!r}")
        if self.decide(a.data):
            state.approve(item)
        else:
            state.reject(item)
        return await self.run(state, thread_id=a.thread_id, session_id=a.session_id,
                              scope=a.scope, **kwargs)

    async def resume(self, token: object, answer: object, *,
                     session_id: str = DEFAULT_SESSION, scope: str = DEFAULT_SCOPE,
                     responder: str = "", run_id: str | None = None,
                     **kwargs: Any) -> Resumed[GuardedResult]:
        """Answer the approval ``token`` names (:meth:`pausepoint.guards.Guard.resume`, in a
        worker thread); only the winner loads the kept state, approves or rejects and runs
        the agent on (on this event loop).  A replay returns :func:`recorded` of the
        first."""
        loop = asyncio.get_running_loop()

        def call(a: Answer) -> GuardedResult:
            return asyncio.run_coroutine_threadsafe(self._continue(a, kwargs), loop).result()
        return await asyncio.to_thread(
            self.guard.resume, token, answer, call, session_id=session_id, scope=scope,
            responder=responder, run_id=run_id, outcome=recorded)

    def resume_sync(self, token: object, answer: object, *,
                    session_id: str = DEFAULT_SESSION, scope: str = DEFAULT_SCOPE,
                    responder: str = "", run_id: str | None = None,
                    **kwargs: Any) -> Resumed[GuardedResult]:
        """:meth:`resume` with no event loop running (the winner runs the agent with
        ``asyncio.run``)."""
        return self.guard.resume(
            token, answer, lambda a: asyncio.run(self._continue(a, kwargs)),
            session_id=session_id, scope=scope, responder=responder, run_id=run_id,
            outcome=recorded)
