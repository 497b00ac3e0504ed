"""The LangGraph guard (``pip install pausepoint[langgraph]``): pausepoint's ledger, tokens and
effect journal in front of a compiled graph; the graph's checkpointer stays LangGraph's.

Adopting it (``docs/guards/langgraph.md``)::

    guard = Guard.open("sqlite:pauses.db", framework="langgraph", interactions=[...],
                       signer=ring)
    app = GuardedGraph(builder.compile(checkpointer=saver), guard)
    out = app.invoke({"order": "o-1"}, thread_id="t-1")   # out.interrupts[0].token
    app.resume(token, {"approved": True})                 # one winner; a replay; a conflict

and, inside a node, ``effect(guard, "charge", lambda: ...)`` around each side effect (the
thread comes from LangGraph's own config).  A node asks with LangGraph's ``interrupt(value)``
(the interaction is the graph's ``interaction``) or with :func:`interrupt` here, which names
the interaction and a tool call id.

What it does: every interrupt pending after an invoke is registered in the ledger under
(thread id, LangGraph's interrupt id), with a signed token; LangGraph raises the same interrupt
id again when a node re-runs, so registering is idempotent.  :meth:`GuardedGraph.resume` runs
:meth:`pausepoint.guards.Guard.resume`; only the winner sends ``Command(resume={interrupt id:
answer})`` to the graph.  LangGraph is imported when this module is.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import attrs
import pydantic_core
from langchain_core.runnables import RunnableConfig
from langgraph.config import get_config
from langgraph.types import Command
from langgraph.types import interrupt as lg_interrupt

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

FRAMEWORK = "langgraph"
MARK = "pausepoint"
"""The key of an interrupt value made by :func:`interrupt`: the interaction it asks."""


def interrupt(name: str, payload: Any = None, *, tool_call_id: str = "",
              guard: Guard | None = None) -> Any:
    """LangGraph's ``interrupt()``, naming the registered interaction ``name`` (and, for a
    tool pause, its call id); returns the answer once the guard resumed the graph.  With
    ``guard``, a pause it would refuse (unregistered, payload off its schema or bounds, a tool
    pause without its call id) raises the typed :class:`~pausepoint.PausepointError` here,
    before LangGraph raises and checkpoints its interrupt."""
    if guard is not None:
        guard.check(thread_id=thread_of(get_config()), name=name, payload=payload,
                    tool_call_id=tool_call_id)
    return lg_interrupt({MARK: name, "tool_call_id": tool_call_id, "payload": payload})


def thread_of(config: RunnableConfig) -> str:
    """The thread id of a LangGraph config (refused ``input_invalid`` when it has none)."""
    thread = config.get("configurable", {}).get("thread_id")
    if not isinstance(thread, str) or not thread:
        raise PausepointError(ErrorCode.INPUT_INVALID, "input.bounded",
                              "a guarded graph runs on a thread: config['configurable']"
                              "['thread_id'] must be non-empty text")
    return thread


def effect(guard: Guard, key: str, fn: Callable[[], T]) -> T:
    """Inside a node: ``fn()`` at most once for this thread and ``key``, however often
    LangGraph re-runs the node (:meth:`pausepoint.guards.Guard.effect`).  ``key`` must name
    this effect within the thread (add a step or item number for a node that runs in a
    loop)."""
    return guard.effect(thread_of(get_config()), key, fn)


@attrs.frozen
class GuardedOutput:
    """An invocation's output (the graph's own) and the pauses pending after it, each
    registered and carrying its token."""

    value: Any
    interrupts: tuple[GuardedInterrupt, ...]


def _jsonable(value: Any) -> Any:
    return pydantic_core.to_jsonable_python(value, fallback=repr)


def recorded(out: GuardedOutput) -> dict[str, Any]:
    """What is recorded of a resume's output, returned to a replay: the graph's output (as
    JSON, without its ``__interrupt__`` entry) and the pauses pending after it."""
    value = out.value
    if isinstance(value, Mapping):
        value = {k: v for k, v in value.items() if k != "__interrupt__"}
    return {"output": _jsonable(value),
            "interrupts": [{"interrupt_id": i.framework_interrupt_id, "name": i.name,
                            "token": i.token} for i in out.interrupts]}


class GuardedGraph:
    """A compiled LangGraph graph (with a checkpointer) behind a :class:`Guard`.  A plain
    ``interrupt(value)`` asks the interaction ``interaction``; :func:`interrupt` names its
    own."""

    def __init__(self, graph: Any, guard: Guard, *, interaction: str = "approve") -> None:
        if guard.framework != FRAMEWORK:
            raise PausepointError(ErrorCode.WIRING_INVALID, "wiring.consistent",
                                  f"a LangGraph guard is opened with framework={FRAMEWORK!r}")
        self.graph = graph
        self.guard = guard
        self.interaction = interaction

    def invoke(self, value: Any, config: RunnableConfig | None = None, *,
               thread_id: str | None = None, session_id: str = DEFAULT_SESSION,
               scope: str = DEFAULT_SCOPE, **kwargs: Any) -> GuardedOutput:
        """``graph.invoke(value, config)`` (``thread_id`` fills the config's), then register
        every interrupt pending on the thread, bound to ``session_id`` and ``scope``."""
        cfg: dict[str, Any] = dict(config or {})
        if thread_id is not None:
            cfg["configurable"] = {**cfg.get("configurable", {}), "thread_id": thread_id}
        given = RunnableConfig(**cfg)  # type: ignore[typeddict-item]
        thread = thread_of(given)
        out = self.graph.invoke(value, given, **kwargs)
        return GuardedOutput(value=out, interrupts=self.register(
            thread, given, session_id=session_id, scope=scope))

    def register(self, thread_id: str, config: RunnableConfig, *,
                 session_id: str = DEFAULT_SESSION,
                 scope: str = DEFAULT_SCOPE) -> tuple[GuardedInterrupt, ...]:
        """Register the interrupts pending on the thread (idempotent)."""
        snapshot = self.graph.get_state(config)
        found = []
        for task in snapshot.tasks:
            for i in task.interrupts:
                name, payload, call = self.interaction, i.value, ""
                if isinstance(i.value, Mapping) and MARK in i.value:
                    name, call = str(i.value[MARK]), str(i.value.get("tool_call_id") or "")
                    payload = i.value.get("payload")
                found.append(self.guard.pause(
                    thread_id=thread_id, interrupt_id=i.id, name=name, payload=payload,
                    tool_call_id=call, session_id=session_id, scope=scope,
                    turn={"checkpoint_id": snapshot.config.get("configurable", {})
                          .get("checkpoint_id"), "node": task.name}))
        return tuple(found)

    def resume(self, token: object, answer: object, *, session_id: str = DEFAULT_SESSION,
               scope: str = DEFAULT_SCOPE, responder: str = "", run_id: str | None = None,
               config: RunnableConfig | None = None,
               **kwargs: Any) -> Resumed[GuardedOutput]:
        """Answer the pause ``token`` names (:meth:`pausepoint.guards.Guard.resume`); only
        the winner sends ``Command(resume={interrupt id: answer})`` on the token's thread
        (``config`` adds to the config), the answer as JSON once the interaction's response
        model accepted it (LangGraph keeps it in its checkpoints).  A replay returns
        :func:`recorded` of the first."""
        def call(a: Answer) -> GuardedOutput:
            cfg: dict[str, Any] = dict(config or {})
            cfg["configurable"] = {**cfg.get("configurable", {}), "thread_id": a.thread_id}
            return self.invoke(Command(resume={a.interrupt_id: a.data}),
                               RunnableConfig(**cfg),  # type: ignore[typeddict-item]
                               session_id=a.session_id, scope=a.scope, **kwargs)
        return self.guard.resume(token, answer, call, session_id=session_id, scope=scope,
                                 responder=responder, run_id=run_id, outcome=recorded)
