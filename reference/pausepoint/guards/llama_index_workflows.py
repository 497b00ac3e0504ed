"""The llama-index-workflows guard (``pip install pausepoint[llama-index-workflows]``):
pausepoint's ledger, tokens and effect journal in front of a workflow's human-in-the-loop
waits; the workflow's ``Context`` and its serialisation (``to_dict`` / ``from_dict``, saved
wherever the application saves it) stay the application's.

Adopting it (``docs/guards/llama-index-workflows.md``)::

    guard = Guard.open("sqlite:pauses.db", framework="llama-index-workflows",
                       interactions=[...], signer=ring)
    app = GuardedWorkflow(workflow, guard)
    out = await app.run(thread_id="order-7", order="o-7")   # out.interrupts[0].token
    save(out.context)                                       # the application's own store
    done = await app.resume(token, {"approved": True}, context=load())

and, inside a step, ``answer = await ask(ctx, "approve", {...}, waiter_id="refund")`` where
the step waits, and ``guard.effect(thread_id, key, fn)`` around each side effect before it
(``wait_for_event`` replays the whole step when the answer comes).

What it does: every question a step asks with :func:`ask` (an :class:`Asked`, the
library's ``InputRequiredEvent``, naming the interaction and the waiter) is registered in the
ledger under (thread id, waiter id) once the run is idle, with a signed token.
:meth:`GuardedWorkflow.resume` runs :meth:`pausepoint.guards.Guard.resume`; only the winner
restores the context, sends the :class:`Answered` event (the library's
``HumanResponseEvent``) with ``ctx.send_event`` and runs until the workflow is idle or done.
llama-index-workflows is imported when this module is.
"""

from __future__ import annotations

from typing import Any, Final

import attrs
from workflows import Context, Workflow
from workflows.events import HumanResponseEvent, InputRequiredEvent, WorkflowIdleEvent
from workflows.handler import WorkflowHandler

from pausepoint.guards.aio import resume_async
from pausepoint.guards.core import (
    DEFAULT_SCOPE,
    DEFAULT_SESSION,
    Answer,
    Guard,
    GuardedInterrupt,
    Resumed,
)

FRAMEWORK: Final = "llama-index-workflows"


class Asked(InputRequiredEvent):
    """What :func:`ask` streams when its step starts waiting: the interaction ``name`` asked,
    its ``payload``, the ``waiter_id`` it waits under (and a tool pause's call id)."""

    waiter_id: str
    name: str
    payload: Any = None
    tool_call_id: str = ""


class Answered(HumanResponseEvent):
    """The answer the guard's winner sends to the waiter ``waiter_id``: the response as the
    interaction's model accepted it (JSON)."""

    waiter_id: str
    response: Any = None


async def ask(ctx: Context, name: str, payload: Any = None, *, waiter_id: str,
              tool_call_id: str = "") -> Any:
    """Inside a step: wait for a person's answer to the interaction ``name`` --
    ``ctx.wait_for_event(Answered, waiter_event=Asked(...), waiter_id=...,
    requirements={"waiter_id": ...}, timeout=None)`` -- and return the answer.  The step is
    replayed from its top when the answer comes: journal what comes before."""
    got = await ctx.wait_for_event(
        Answered, waiter_event=Asked(waiter_id=waiter_id, name=name, payload=payload,
                                     tool_call_id=tool_call_id),
        waiter_id=waiter_id, requirements={"waiter_id": waiter_id}, timeout=None)
    return got.response


@attrs.frozen
class Settled:
    """Where an invocation left the run: ``done`` with the workflow's ``result``, or idle
    (waiting) with its ``context`` -- ``to_dict()``, for the application to save -- and the
    questions pending, each registered and carrying its token."""

    done: bool
    result: Any
    context: dict[str, Any] | None
    interrupts: tuple[GuardedInterrupt, ...]


def recorded(out: Settled) -> dict[str, Any]:
    """What is recorded of a resume, returned to a replay: whether the run ended, and the
    questions pending after it."""
    return {"done": out.done,
            "interrupts": [{"waiter_id": i.framework_interrupt_id, "name": i.name,
                            "token": i.token} for i in out.interrupts]}


class GuardedWorkflow:
    """A workflow whose steps ask with :func:`ask`, behind a :class:`Guard`."""

    def __init__(self, workflow: Workflow, guard: Guard) -> None:
        self.workflow = workflow
        self.guard = guard.expect(FRAMEWORK)

    async def run(self, *, thread_id: str, session_id: str = DEFAULT_SESSION,
                  scope: str = DEFAULT_SCOPE, **start: Any) -> Settled:
        """``workflow.run(**start)`` until the workflow is idle (then its context is taken
        and the handler ended) or done; the questions it asked are registered, bound to
        ``session_id`` and ``scope``."""
        return await self._settle(self.workflow.run(**start), thread_id, session_id, scope)

    async def _settle(self, handler: WorkflowHandler, thread_id: str, session_id: str,
                      scope: str, answer: Answered | None = None) -> Settled:
        asked: list[Asked] = []
        async for ev in handler.stream_events(expose_internal=True):
            if isinstance(ev, Asked):
                asked.append(ev)
            elif isinstance(ev, WorkflowIdleEvent):
                if answer is not None:  # the restored waiters are registered again: answer
                    handler.ctx.send_event(answer)
                    answer = None
                    continue
                context = handler.ctx.to_dict()
                await handler.cancel_run()
                return Settled(False, None, context, self.register(
                    thread_id, asked, session_id=session_id, scope=scope))
        result = await handler
        return Settled(True, result, None, self.register(thread_id, asked,
                                                         session_id=session_id, scope=scope))

    def register(self, thread_id: str, asked: list[Asked], *,
                 session_id: str = DEFAULT_SESSION,
                 scope: str = DEFAULT_SCOPE) -> tuple[GuardedInterrupt, ...]:
        """Register the questions ``asked`` (idempotent); the thread's pending pauses."""
        for ev in asked:
            self.guard.pause(thread_id=thread_id, interrupt_id=ev.waiter_id, name=ev.name,
                             payload=ev.payload, tool_call_id=ev.tool_call_id,
                             session_id=session_id, scope=scope)
        return tuple(self.guard.pending(thread_id))

    async def resume(self, token: object, answer: object, *, context: dict[str, Any],
                     session_id: str = DEFAULT_SESSION, scope: str = DEFAULT_SCOPE,
                     responder: str = "", run_id: str | None = None) -> Resumed[Settled]:
        """Answer the question ``token`` names (:meth:`pausepoint.guards.Guard.resume`); only
        the winner restores ``context`` (the run's saved ``to_dict()``, loaded by the
        application), sends :class:`Answered` once the restored run is idle, and runs it until
        it is idle again or done.  A replay returns :func:`recorded` of the first."""
        async def go(a: Answer) -> Settled:
            ctx: Context = Context.from_dict(self.workflow, context)
            return await self._settle(self.workflow.run(ctx=ctx), a.thread_id, a.session_id,
                                      a.scope, Answered(waiter_id=a.interrupt_id,
                                                        response=a.data))
        return await resume_async(self.guard, token, answer, go, session_id=session_id,
                                  scope=scope, responder=responder, run_id=run_id,
                                  outcome=recorded)
