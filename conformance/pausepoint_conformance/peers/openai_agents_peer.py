"""The OpenAI Agents SDK behind the adapter port: the protocol's scripted runs realised with the
SDK's own human-in-the-loop primitives -- function tools that need approval, the run stopping
with ``result.interruptions`` (``ToolApprovalItem``), the run's ``RunState`` saved as JSON
(``result.to_state().to_json()``) and brought back with ``RunState.from_json``, answered with
``state.approve(item)`` / ``state.reject(item)`` and continued with ``Runner.run(agent, state)``
-- the way a careful but ordinary SDK user builds pause and resume, with no pausepoint machinery
(no ledger, no signed token, no expiry, no effect journal).  What the suite reports is what the
SDK itself guarantees (``docs/peers/openai_agents.md``)::

    pausepoint conform --adapter pausepoint_conformance.peers.openai_agents_peer:make
    pausepoint conform --adapter pausepoint_conformance.peers.openai_agents_peer:make_sqlite

``make`` keeps each run's saved state in memory, ``make_sqlite`` in a SQLite file.  Everything
runs offline: the model is :class:`ScriptModel`, a ``Model`` of the SDK's own interface
that plays the script, tracing is disabled, and nothing reaches the OpenAI API.

**A script is an agent run**: one ``Agent`` per run, whose model plays the script one model
turn per step -- a turn of function calls, then a final message.  An ``effect`` step is a call
of the tool ``effect``, which applies its key to the world; an ``interrupt`` step is a call of
the tool named like the interaction, with the payload as its arguments.  The agent has one
tool per interaction the protocol registers (``approve``, ``ask``, ``confirm``, ``choose``,
``pay``, ``restricted``), each a ``FunctionTool`` taking any JSON object with
``needs_approval=True``: the SDK's own registry of what may pause.  ``names`` are several calls
in one model turn -- parallel tool calls, each needing its own approval.  A ``gate`` step is a
call of a tool whose ``needs_approval`` is a callable asking
:class:`pausepoint.core.gate.ThresholdGate` (the script's policy): it needs approval only when
the gate says ask; a denial is the tool's
output, after which the model ends the run.  The model gives each call the script's
``tool_call_id`` when there is one, no call id at all for a ``pay`` call without one (a tool
pause without its tool call id), and otherwise a fresh ``call_<32 hex digits>`` as a real model
would.  ``checkpoint: "none"`` and ``checkpoint_write: "fail"`` are skipped: the SDK writes no
checkpoint of its own -- every interruption comes with its ``RunState`` in memory, and saving it
is the application's code.  ``handlers`` are skipped: the SDK asks for approval in its runner
before the tool function runs, so no user code sits around the pause point.  Effect faults are
skipped: the SDK has no effect journal to crash inside of.

**A published pause** is a pending ``ToolApprovalItem``: its id is the tool call id, its name the
interaction (``approve`` for a gate), its payload the call's arguments, and its token
``"<run id>:<call id>"`` -- what an integration puts behind the approve button (the run id names
the saved state).  ``expires_at`` is :data:`~.base.NO_EXPIRY`, a constant: approvals never
expire.  It is resumable: the state is saved as soon as the run stops.

**A resume** loads the state saved for the run the token names (``RunState.from_json``), finds
the pending approval with the token's call id among ``state.get_interruptions()`` -- there is
nothing else an integration can hand to ``approve`` -- approves or rejects it as the response's
``approved`` says -- the response must be ``{"approved": bool}``, else it is refused
``response_invalid`` (the SDK's answer is approve or reject; the rest of the response has
nowhere to go), continues with ``Runner.run(agent, state)`` and saves the new state over the
old. Session, scope, responder and run id are not looked at: the SDK has no such binding. The
SDK refuses a call of a tool the agent does not have (``ModelBehaviorError`` "Tool ... not
found in agent", refused ``interaction_unregistered``) and a tool call without a call id
(refused ``tool_call_id_missing``); a token naming no saved run, or a call not pending in the
saved state, is refused ``pause_unknown``; anything else is reported errored. A resume is never
a replay: every accepted one runs the approved tool or hands the rejection to the model.
``pause_state`` reads the saved state: ``resumable`` while the approval is pending,
``consumed`` once the state holds the call's output.

**Claimed groups** -- only those the SDK has a mechanism for:

* ``core``;
* ``multi-pause``: parallel tool calls, each approved or rejected on its own; the run goes on
  when none is pending;
* ``concurrency``: a ``RunState`` serialised to JSON is meant to be resumed by any process --
  that is how an SDK application scales -- so ``race_resume`` gives every request an agent of
  its own, each loading the saved state, and all approving and running together;
* ``durability`` (``make_sqlite`` only): after a restart the agents are built anew and every
  saved state loads where it stopped.

Not claimed: ``tokens`` (call ids are plain identifiers, nothing is signed), ``expiry`` (no
clock), ``lineage`` (nothing binds a state or an approval to a run or session), ``replay``
(nothing recognises a repeated answer: approving an approved item again is accepted silently,
and a finished state given to ``Runner.run`` calls the model again), ``cancel`` (the SDK cannot
cancel a paused run) and ``unknown-outcome`` (no effect journal).  ``cancel``,
``advance_clock`` and ``reconcile`` answer skipped; the optional operations (``status``,
``rotate_key``, ``retire_key``, ``wiring``) are not offered.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any, Final

import attrs
from agents import (
    Agent,
    FunctionTool,
    ModelBehaviorError,
    ModelResponse,
    ModelSettings,
    RunConfig,
    Runner,
    RunResult,
    RunState,
    ToolApprovalItem,
    Usage,
    function_tool,
    set_tracing_disabled,
)
from agents.agent_output import AgentOutputSchemaBase
from agents.handoffs import Handoff
from agents.items import TResponseInputItem, TResponseOutputItem, TResponseStreamEvent
from agents.models.interface import Model, ModelTracing
from agents.run_context import RunContextWrapper
from agents.tool import Tool
from agents.tool_context import ToolContext
from openai.types.responses import (
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
)
from openai.types.responses.response_prompt_param import ResponsePromptParam

from pausepoint.core.clauses import ErrorCode, Group
from pausepoint.core.errors import PausepointError
from pausepoint.core.gate import Decision, ThresholdGate
from pausepoint.core.ports import Claims
from pausepoint.engine.harness import MemoryWorld
from pausepoint.guards.core import Answer, Guard
from pausepoint.guards.openai_agents import FRAMEWORK as GUARD_FRAMEWORK
from pausepoint.guards.openai_agents import approved, arguments_of, call_id_of
from pausepoint.guards.openai_agents import effect as guard_effect
from pausepoint.guards.openai_agents import running as guard_running
from pausepoint_conformance.adapters.reference import INTERACTIONS
from pausepoint_conformance.peers.base import (
    DENIED,
    NO_EXPIRY,
    TOKEN_SEPARATOR,
    Framework,
    ModelScript,
    StoredPeerAdapter,
    approval,
    as_result,
    attempt,
    model_script,
    resume_in_two_steps,
)
from pausepoint_conformance.peers.base import hello as peer_hello
from pausepoint_conformance.peers.guarded import GuardedPeer
from pausepoint_conformance.protocol.wire import (
    CrashRestartArgs,
    Empty,
    GateStep,
    HelloArgs,
    HelloData,
    PauseKind,
    PauseStateArgs,
    PhaseData,
    PublishedPause,
    Refused,
    ResetArgs,
    RestartData,
    Result,
    ResumeArgs,
    ResumeData,
    ResumeResult,
    RunReport,
    RunStatus,
    StartArgs,
)

MAX_TURNS: Final[int] = 1000
"""The runs' ``max_turns``: a scripted run takes one model turn per step (the SDK's default of
10 would end long scripts)."""

RUN_CONFIG: Final[RunConfig] = RunConfig(tracing_disabled=True)

FRAMEWORK: Final = Framework(
    "the OpenAI Agents SDK", frozenset({Group.MULTI_PAUSE, Group.CONCURRENCY}),
    persistence="application", user_code_at_pause=False)
"""What the OpenAI Agents SDK documents: several approvals at once, a ``RunState`` the
application serialises (``to_json``) and saves, runs served concurrently; it asks for approval
in its runner, before the tool function runs."""


# -- the model: a script played one turn at a time ---------------------------------------------


def _get(item: object, key: str) -> Any:
    """A field of an SDK item, whether a mapping or a model."""
    return item.get(key) if isinstance(item, dict) else getattr(item, key, None)


class ScriptModel(Model):
    """A model that plays a script: turn ``k`` is the ``k``-th group of tool calls, chosen by
    how many function calls the conversation already holds (so it answers any saved state as
    a real model would, from the history alone); after the last turn, or once a gate tool
    answered ``denied``, a final message.  Never reaches a network.

    Not the SDK's ``agents.testing.ScriptedModel``: that one hands out its steps in call order,
    so a state resumed twice, or after a restart, would get the wrong turn."""

    def __init__(self, script: ModelScript) -> None:
        self.script = script

    def _next(self, history: Sequence[object]) -> list[TResponseOutputItem]:
        outputs = [_get(i, "output") for i in history if _get(i, "type") == "function_call_output"]
        k = self.script.turn(sum(1 for i in history if _get(i, "type") == "function_call"))
        denied = bool(outputs) and str(outputs[-1]).startswith(DENIED)
        if k is None or denied:
            return [ResponseOutputMessage(
                id="msg", type="message", role="assistant", status="completed",
                content=[ResponseOutputText(type="output_text", text="done", annotations=[])])]
        return [ResponseFunctionToolCall(
            type="function_call", name=c.tool, arguments=c.arguments, status="completed",
            call_id=f"call_{uuid.uuid4().hex}" if c.call_id is None else c.call_id)
            for c in self.script.turns[k]]

    async def get_response(self, system_instructions: str | None,
                           input: str | list[TResponseInputItem],  # noqa: A002 -- the SDK's Model keyword
                           model_settings: ModelSettings, tools: list[Tool],
                           output_schema: AgentOutputSchemaBase | None,
                           handoffs: list[Handoff], tracing: ModelTracing, *,
                           previous_response_id: str | None, conversation_id: str | None,
                           prompt: ResponsePromptParam | None) -> ModelResponse:
        history: list[object] = list(input) if isinstance(input, list) else []
        return ModelResponse(output=self._next(history), usage=Usage(), response_id=None)

    def stream_response(self, system_instructions: str | None,
                        input: str | list[TResponseInputItem],  # noqa: A002 -- the SDK's Model keyword
                        model_settings: ModelSettings, tools: list[Tool],
                        output_schema: AgentOutputSchemaBase | None,
                        handoffs: list[Handoff], tracing: ModelTracing, *,
                        previous_response_id: str | None, conversation_id: str | None,
                        prompt: ResponsePromptParam | None) -> AsyncIterator[TResponseStreamEvent]:
        raise NotImplementedError("the scripted runs are not streamed")


@attrs.frozen
class _Run:
    """A started run: the model's turns and tools (the user's code, redeployed after a
    restart), and the interaction each approval-needing tool asks."""

    run_id: str
    script: ModelScript


@attrs.frozen
class _Resolved:
    """A resume resolved against the saved state: the agent, the loaded state and the pending
    approval the token names."""

    run: _Run
    agent: Agent[Any]
    state: RunState[Any, Agent[Any]]
    item: ToolApprovalItem
    call_id: str


def _refusal(exc: Exception) -> Refused | None:
    """The SDK's own rejections of a tool call, before anything is asked."""
    if isinstance(exc, ModelBehaviorError):
        text = str(exc)
        if "not found in agent" in text:
            return Refused(code=ErrorCode.INTERACTION_UNREGISTERED.value,
                           message=f"the SDK refused the call: {text}",
                           clause="pause.interaction.registered")
        if "non-empty string call ID" in text:
            return Refused(code=ErrorCode.TOOL_CALL_ID_MISSING.value,
                           message=f"the SDK refused the call: {text}",
                           clause="pause.tool-call.bound")
    return None


def _payload(arguments: Any) -> Any:
    try:
        return json.loads(arguments)
    except (TypeError, ValueError):
        return arguments


def _save(result: RunResult) -> str:
    return json.dumps(result.to_state().to_json())


class OpenAIAgentsAdapter(StoredPeerAdapter):
    """The protocol's scripted runs as OpenAI Agents SDK runs; ``store`` is ``memory`` (the
    saved states in a dict) or ``sqlite`` (in a SQLite file in a private temporary directory
    made under ``scratch`` or the system's temporary directory, emptied at each reset and
    removed by :meth:`close`)."""

    framework = FRAMEWORK

    scratch_prefix = "pausepoint-openai-agents-"
    cancel_reason = ("the OpenAI Agents SDK cannot cancel a paused run (its saved state is "
                     "simply never resumed, or deleted)")
    clock_reason = "the OpenAI Agents SDK's approvals have no clock: they never expire"
    reconcile_reason = ("the OpenAI Agents SDK has no effect journal, so no outcome is ever "
                        "unknown to it")

    def __init__(self, store: str = "memory", *, scratch: str | None = None) -> None:
        super().__init__(store, scratch=scratch)
        set_tracing_disabled(True)
        self._states = self._saved_states("states.sqlite")
        self._runs: dict[str, _Run] = {}
        self._agents: dict[str, Agent[Any]] = {}

    def _close_store(self) -> None:
        self._states.close()

    # -- a script as an agent ------------------------------------------------------------------

    def _effect_tool(self, run_id: str) -> FunctionTool:
        world = self._world

        @function_tool
        def effect(key: str) -> str:
            """Apply a side effect to the world."""
            world.apply(run_id, key)
            return "applied"
        return effect

    @staticmethod
    def _question_tool(name: str, description: str) -> FunctionTool:
        async def answered(ctx: ToolContext[Any], arguments: str) -> str:
            return "approved"
        return FunctionTool(name=name, description=description,
                            params_json_schema={"type": "object"}, on_invoke_tool=answered,
                            strict_json_schema=False, needs_approval=True)

    @staticmethod
    def _gate_tool(name: str, step: GateStep) -> FunctionTool:
        policy = ThresholdGate(step.allow_up_to, step.deny_over)

        async def asks(ctx: RunContextWrapper[Any], params: dict[str, Any],
                       call_id: str) -> bool:
            return policy("gate", params).decision == Decision.ASK

        @function_tool(name_override=name, needs_approval=asks)
        def gate(amount: float) -> str:
            """Check an amount against the approval policy."""
            verdict = policy("gate", {"amount": amount})
            return f"{DENIED}: {verdict.reason}" if verdict.decision == Decision.DENY \
                else "go on"
        return gate

    def _agent(self, run: _Run, fresh: bool = False) -> Agent[Any]:
        """The run's agent (``fresh``: another one, as another server would build it)."""
        if fresh or run.run_id not in self._agents:
            agent: Agent[Any] = Agent(
                name="scripted-run", model=ScriptModel(run.script),
                tools=[*(self._question_tool(i.name, i.description) for i in INTERACTIONS),
                       self._effect_tool(run.run_id),
                       *(self._gate_tool(name, step) for name, step in run.script.gates)])
            if fresh:
                return agent
            self._agents[run.run_id] = agent
        return self._agents[run.run_id]

    # -- running and reporting -----------------------------------------------------------------

    @staticmethod
    async def _run(agent: Agent[Any], given: str | RunState[Any, Agent[Any]]) -> RunResult:
        return await Runner.run(agent, given, max_turns=MAX_TURNS, run_config=RUN_CONFIG)

    def _publish(self, run: _Run, item: ToolApprovalItem) -> PublishedPause:
        call_id = str(_get(item.raw_item, "call_id") or "")
        tool = item.tool_name or ""
        return PublishedPause(
            interrupt_id=call_id, run_id=run.run_id,
            name=run.script.questions.get(tool, tool),
            kind=PauseKind.ASK, payload=_payload(_get(item.raw_item, "arguments")),
            token=f"{run.run_id}{TOKEN_SEPARATOR}{call_id}", resumable=True,
            expires_at=NO_EXPIRY, tool_call_id=call_id)

    def _report(self, run: _Run, pending: Sequence[ToolApprovalItem]) -> RunReport:
        status = RunStatus.PAUSED if pending else RunStatus.DONE
        return RunReport(run_id=run.run_id, status=status, events=[status.value],
                         pauses=[self._publish(run, i) for i in pending])

    @staticmethod
    def _restore(agent: Agent[Any], saved: str) -> RunState[Any, Agent[Any]]:
        return asyncio.run(RunState.from_json(agent, json.loads(saved)))

    def _live(self, run: _Run) -> list[PublishedPause]:
        """The run's pending approvals, read from its saved state."""
        saved = self._states.get(run.run_id)
        return [] if saved is None else [
            self._publish(run, i) for i in self._restore(self._agent(run), saved)
            .get_interruptions()]

    # -- the operations ------------------------------------------------------------------------

    def hello(self, args: HelloArgs) -> Result[HelloData]:
        saved = "in memory" if self.store == "memory" else "in SQLite"
        return peer_hello(
            name=f"openai-agents (RunState JSON {saved})", distribution="openai-agents",
            homepage="https://github.com/openai/openai-agents-python",
            groups=self.claimed(),
            notes=f"plain OpenAI Agents SDK: function tools with needs_approval, "
                  f"RunState.to_json/from_json saved {saved}, approve/reject, "
                  "Runner.run(agent, state); offline scripted model; token = run id:call id; "
                  "no expiry")

    def reset(self, args: ResetArgs) -> Result[Empty]:
        def go() -> Empty:
            self._states.clear()
            self._world = MemoryWorld()
            self._runs, self._agents = {}, {}
            return Empty()
        return as_result(attempt(go))

    def start(self, args: StartArgs) -> Result[RunReport]:
        skipped = self.skipped(args.script)
        if skipped is not None:
            return skipped
        run = _Run(run_id=args.run_id, script=model_script(args.script))

        def go() -> RunReport:
            self._runs[run.run_id] = run
            self._agents.pop(run.run_id, None)
            result = asyncio.run(self._run(self._agent(run), "start"))
            self._states.put(run.run_id, _save(result))
            return self._report(run, result.interruptions)
        return as_result(attempt(go, _refusal))

    def _resolve(self, args: ResumeArgs, fresh: bool = False) -> _Resolved | Refused:
        """Load the state saved for the run the token names and find the approval."""
        run_id, _, call_id = args.token.rpartition(TOKEN_SEPARATOR)
        run = self._runs.get(run_id)
        saved = self._states.get(run_id) if run is not None else None
        if run is None or saved is None:
            return Refused(code=ErrorCode.PAUSE_UNKNOWN.value,
                           message=f"no saved state for a run {run_id!r}")
        agent = self._agent(run, fresh)
        state = self._restore(agent, saved)
        item = next((i for i in state.get_interruptions()
                     if _get(i.raw_item, "call_id") == call_id), None)
        if item is None:
            return Refused(code=ErrorCode.PAUSE_UNKNOWN.value,
                           message=f"the saved state of {run_id!r} has no pending approval "
                                   f"{call_id!r}")
        return _Resolved(run=run, agent=agent, state=state, item=item, call_id=call_id)

    def _answer(self, r: _Resolved, response: Any) -> ResumeData | Refused:
        """Approve or reject, continue the run, save its new state."""
        approved = approval(response)
        if isinstance(approved, Refused):
            return approved
        if approved:
            r.state.approve(r.item)
        else:
            r.state.reject(r.item)
        result = asyncio.run(self._run(r.agent, r.state))
        self._states.put(r.run.run_id, _save(result))
        return ResumeData(replayed=False, interrupt_id=r.call_id,
                          run=self._report(r.run, result.interruptions))

    def _resume(self, args: ResumeArgs, fresh: bool = False,
                together: Callable[[], None] | None = None) -> ResumeResult:
        return resume_in_two_steps(lambda: self._resolve(args, fresh),
                                   lambda r: self._answer(r, args.response), together,
                                   answer_refusal=_refusal)

    def crash_restart(self, args: CrashRestartArgs) -> Result[RestartData]:
        """The process dies: the store opened anew (an empty one for ``memory``), the agents
        built anew, and every saved state loaded to publish its pending approvals."""
        def go() -> RestartData:
            self._close_store()
            self._states, self._agents = self._saved_states("states.sqlite"), {}
            return RestartData(runs=[], pauses=[p for run in self._runs.values()
                                                for p in self._live(run)])
        return as_result(attempt(go))

    def pause_state(self, args: PauseStateArgs) -> Result[PhaseData]:
        """``resumable`` while a saved state has the approval pending, ``consumed`` once a saved
        state holds the call's output."""
        def go() -> PhaseData | Refused:
            iid = args.interrupt_id
            for run in self._runs.values():
                if any(p.interrupt_id == iid for p in self._live(run)):
                    return PhaseData(phase="resumable")
                saved = self._states.get(run.run_id)
                items = json.loads(saved).get("generated_items", []) if saved else []
                if any(i.get("type") == "tool_call_output_item"
                       and _get(i.get("raw_item"), "call_id") == iid for i in items):
                    return PhaseData(phase="consumed")
            return Refused(code=ErrorCode.PAUSE_UNKNOWN.value,
                           message=f"no saved state has a tool call {iid!r}")
        return as_result(attempt(go))


def make() -> OpenAIAgentsAdapter:
    """The OpenAI Agents SDK, each run's saved state kept in memory."""
    return OpenAIAgentsAdapter("memory")


def make_sqlite() -> OpenAIAgentsAdapter:
    """The OpenAI Agents SDK, each run's saved state in a SQLite file (claims durability)."""
    return OpenAIAgentsAdapter("sqlite")


# -- with pausepoint: the same adapter with the OpenAI Agents guard switched on ----------------


class GuardedOpenAIAgentsAdapter(GuardedPeer, OpenAIAgentsAdapter):
    """:class:`OpenAIAgentsAdapter` with :mod:`pausepoint.guards.openai_agents` switched on --
    the matrix's "with pausepoint" column.  The agents, the scripted model, the tools and the
    saved ``RunState`` are the same; in front of them the guard
    (:class:`~.guarded.GuardedPeer`) registers every pending approval (published with its
    ledger id and signed token), decides every answer (one winner; only it loads the saved
    state, approves or rejects and runs the agent on; a replay returns the first outcome; a
    different answer is a conflict) and journals the ``effect`` tool's effect under its tool
    call id (:func:`pausepoint.guards.openai_agents.effect`).  A race gives every server a
    guard of its own on the shared store (``guard_store``: the adapter's kind, or
    ``postgres``)."""

    guard_framework = GUARD_FRAMEWORK

    def hello(self, args: HelloArgs) -> Result[HelloData]:
        saved = "in memory" if self.store == "memory" else "in SQLite"
        return peer_hello(
            name=f"openai-agents + pausepoint guard (RunState JSON {saved})",
            distribution="openai-agents",
            homepage="https://github.com/openai/openai-agents-python", groups=self.claimed(),
            notes=f"OpenAI Agents SDK (RunState JSON {saved}) behind "
                  "pausepoint.guards.openai_agents: ledger, signed tokens, one winner, replay, "
                  "journalled effects")

    def _effect_tool(self, run_id: str) -> FunctionTool:
        world, box = self._world, self._box

        @function_tool
        def effect(ctx: ToolContext[Any], key: str) -> str:
            """Apply a side effect to the world."""
            def apply() -> str:
                world.apply(run_id, key)
                return "applied"
            with guard_running(box.guard, run_id):
                return guard_effect(ctx.tool_call_id, apply)
        return effect

    def _publish(self, run: _Run, item: ToolApprovalItem) -> PublishedPause:
        tool = item.tool_name or ""
        return self._guarded_pause(run.run_id, call_id_of(item),
                                   run.script.questions.get(tool, tool),
                                   arguments_of(item), call_id_of(item))

    def _report(self, run: _Run, pending: Sequence[ToolApprovalItem]) -> RunReport:
        """The plain report, or -- when the guard refused to take an approval (its payload
        off its schema or bounds) -- the refusal."""
        try:
            return super()._report(run, pending)
        except PausepointError as exc:
            return self._refused_report(run.run_id, exc)

    def _resume(self, args: ResumeArgs, fresh: bool = False,
                together: Callable[[], None] | None = None) -> ResumeResult:
        def resolve(guard: Guard, claims: Claims) -> tuple[_Run, Agent[Any], str] | Refused:
            run = self._runs.get(claims.thread_id)
            if run is None:
                return Refused(code=ErrorCode.PAUSE_UNKNOWN.value,
                               message=f"no run {claims.thread_id!r}")
            asked = guard.service.interaction(claims.name)
            if asked is not None and asked.response_fits(args.response):
                # the SDK's answer is approve or reject: an answer the interaction accepts but
                # the SDK cannot take is refused before it is consumed (one the interaction
                # refuses is the guard's to refuse, in the contract's order)
                decision = approval(args.response)
                if isinstance(decision, Refused):
                    return decision
            return run, self._agent(run, fresh), claims.interrupt_id

        def answer(guard: Guard, r: tuple[_Run, Agent[Any], str]) -> ResumeData | Refused:
            run, agent, ledger_id = r
            box: dict[str, RunResult] = {}

            def call(a: Answer) -> str:
                saved = self._states.get(run.run_id)
                assert saved is not None
                state = self._restore(agent, saved)
                item = next(i for i in state.get_interruptions()
                            if call_id_of(i) == a.interrupt_id)
                if approved(a.data):
                    state.approve(item)
                else:
                    state.reject(item)
                result = asyncio.run(self._run(agent, state))
                self._states.put(run.run_id, _save(result))
                box["result"] = result
                return "continued"
            out = guard.resume(args.token, args.response, call, session_id=args.session_id,
                               scope=args.scope, responder=args.responder, run_id=args.run_id)
            pending = (box["result"].interruptions if "result" in box
                       else self._restore(agent, self._states.get(run.run_id) or "{}")
                       .get_interruptions())
            report = self._report(run, pending)
            if out.replayed:
                report = report.model_copy(update={"events": []})
            return ResumeData(replayed=out.replayed, interrupt_id=ledger_id, run=report)
        return self._guarded_resume(args, fresh, together, resolve, answer, _refusal)


def make_guarded() -> GuardedOpenAIAgentsAdapter:
    """:func:`make` with the pausepoint guard switched on."""
    return GuardedOpenAIAgentsAdapter("memory")


def make_sqlite_guarded() -> GuardedOpenAIAgentsAdapter:
    """:func:`make_sqlite` with the pausepoint guard switched on (its ledger in a SQLite file
    beside the saved states)."""
    return GuardedOpenAIAgentsAdapter("sqlite")


def make_postgres_guarded() -> GuardedOpenAIAgentsAdapter:
    """:func:`make_sqlite` with the guard's ledger on PostgreSQL (``$PAUSEPOINT_PG_DSN``, a
    schema of its own): racing servers share it through connections of their own."""
    return GuardedOpenAIAgentsAdapter("sqlite", guard_store="postgres")
