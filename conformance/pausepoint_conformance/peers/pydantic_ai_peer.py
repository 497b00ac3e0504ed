"""Pydantic AI behind the adapter port: the protocol's scripted runs realised with Pydantic AI's
own human-in-the-loop primitives -- deferred tools (``CallDeferred`` questions and
``ApprovalRequired`` approvals), a run ending with ``DeferredToolRequests`` as its output, and a
later run continued with the saved conversation and ``DeferredToolResults`` -- the way a careful
but ordinary Pydantic AI user builds pause and resume, with no pausepoint machinery (no ledger,
no signed token, no expiry, no effect journal).  What the suite reports is what Pydantic AI
itself guarantees (``docs/peers/pydantic_ai.md``)::

    pausepoint conform --adapter pausepoint_conformance.peers.pydantic_ai_peer:make

It runs offline: the model is a ``FunctionModel`` playing the script, no network, no API key.

**A script is an agent's conversation**: the scripted model emits one model turn per step --
one tool call, or several at once for ``names`` -- and ends the run with a text answer at
``end``.  An ``effect`` is a call of the ``effect`` tool, which applies its key to the world.
An ``interrupt`` is a call of the ``ask`` tool, ``ask(question: Literal[<the registered
interactions>], payload: dict[str, Any])``, which raises ``CallDeferred(metadata=payload,
kind="question")``: Pydantic AI validates the arguments against that signature -- its own
check of the question's name and payload -- and a call that fails it goes back to the model
as a retry; the scripted model asks the same again, and Pydantic AI ends the run with
``UnexpectedModelBehavior`` (reported as a run stopped in ``error`` with the refusal,
``interaction_unregistered`` or ``payload_invalid`` after the first field Pydantic AI found
wrong).  ``handlers`` are a ``try / except Exception / finally`` around the ``raise
CallDeferred`` in the tool.  A ``gate`` is a call of the ``gate`` tool, which asks
:class:`pausepoint.core.gate.ThresholdGate` (the script's policy) and raises
``ApprovalRequired(metadata={"amount", "reason"})`` unless the call was approved, or returns a
denial the model then ends the run on.  Every tool call has an id, as a model provider sends
one: the script's ``tool_call_id``, else a UUID (Pydantic AI makes one up for a model that
sends none), so a tool pause always has one.

**State** is Pydantic AI's: each run is a ``Conversation`` (its id is the run id) kept in an
``InMemoryConversationStore`` that every server shares, saved with the run's scope after each
agent run (``store.save(result, scope=...)``), carrying the ``DeferredToolRequests`` it waits
on.  ``checkpoint: "none"`` and ``checkpoint_write: "fail"`` are skipped by the scoring rule
(saving the conversation is the application's code).  The store's conditional write (a save
must present the revision it loaded) is made atomic across threads, as a database's
conditional update is.  Effect faults are skipped:
Pydantic AI has no effect journal to crash inside of.

**A published pause** is a deferred tool call: its id is the tool call id, its name the
question asked (``approve`` for a gate), its payload the call's metadata, and its token
``"<conversation id>:<tool call id>"`` -- what an integration hands the person to answer with.
It is resumable (its conversation is saved), and ``expires_at`` is
:data:`~.base.NO_EXPIRY`, a constant: deferred tool calls never expire.

**A resume** loads the conversation the token names (with the resume's scope), asks its
``DeferredToolRequests.remaining(...)`` the ``kind`` of the pending call -- a call no longer
pending is refused ``pause_unknown`` -- validates the answer with Pydantic AI's own
``DeferredToolResults`` type (a question's answer is any value; an approval's is the
response's ``approved`` flag and must be a bool, else ``response_invalid``), and records who
answered in ``answered_by`` (Pydantic AI does not check it).  While other calls of the same
turn are still unanswered the answer is only kept (the integration's own list of answers so
far); with every call answered it runs ``agent.run(conversation=..., deferred_tool_results=...)``
and saves the result, so a save that finds the conversation changed since it was loaded raises
``ConversationConflict`` -- refused ``pause_consumed``, after that run's tools have run.
Session, run id and responder are not checked: Pydantic AI has no such binding.
``pause_state`` reads the store: ``resumable`` while the call is pending there, ``consumed``
once it is answered, ``paused`` for a published call no saved conversation has.

**Claimed groups** -- only those Pydantic AI has a mechanism for:

* ``core``;
* ``multi-pause``: several deferred tool calls in one model turn, answered by tool call id
  (``DeferredToolRequests.remaining`` / ``build_results``);
* ``concurrency``: the conversation store's revision check exists so that concurrent writers
  cannot overwrite each other unnoticed, so ``race_resume`` gives every request an agent of its
  own on the shared store, each loading the conversation and all running together.

Not claimed: ``replay`` (a repeated answer is not recognised: the call is no longer pending),
``tokens`` (a conversation id and a tool call id; nothing is signed), ``expiry`` (no clock),
``lineage`` (nothing binds an answer to a run or session), ``cancel`` (a paused conversation
cannot be cancelled; ``AgentRun.cancel`` stops a running run), ``unknown-outcome`` (no effect
journal), ``durability`` (pydantic-ai-slim ships only the in-memory store; durable execution
needs Temporal, DBOS or Prefect).  ``cancel``, ``advance_clock``, ``reconcile`` and
``crash_restart`` answer skipped; the optional operations (``status``, ``rotate_key``,
``retire_key``, ``wiring``) are not offered.
"""

from __future__ import annotations

import asyncio
import threading
import uuid
from collections.abc import Callable, Coroutine, Sequence
from typing import Any, Final, Literal, TypeVar

import attrs
from pydantic import TypeAdapter, ValidationError
from pydantic_ai import Agent, RunContext, capture_run_messages
from pydantic_ai.agent import AgentRunResult
from pydantic_ai.conversation import Conversation
from pydantic_ai.conversation_store import (
    ConversationConflict,
    ConversationEntry,
    ConversationRecord,
    InMemoryConversationStore,
)
from pydantic_ai.exceptions import ApprovalRequired, CallDeferred, UnexpectedModelBehavior
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.tools import DeferredToolRequests, DeferredToolResults

from pausepoint.core.clauses import ErrorCode, Group
from pausepoint.core.errors import PausepointError
from pausepoint.core.gate import Decision, ThresholdGate
from pausepoint.core.ports import Claims
from pausepoint.engine.harness import MemoryWorld
from pausepoint.guards.core import Guard
from pausepoint.guards.pydantic_ai import FRAMEWORK as GUARD_FRAMEWORK
from pausepoint.guards.pydantic_ai import GuardedAgent
from pausepoint.guards.pydantic_ai import effect as guard_effect
from pausepoint_conformance.peers.base import (
    NO_EXPIRY,
    TOKEN_SEPARATOR,
    Framework,
    PeerAdapter,
    as_result,
    attempt,
    resume_in_two_steps,
)
from pausepoint_conformance.peers.base import hello as peer_hello
from pausepoint_conformance.peers.guarded import GuardedPeer
from pausepoint_conformance.peers.guarded import published as guarded_published
from pausepoint_conformance.protocol.wire import (
    CrashRestartArgs,
    EffectStep,
    Empty,
    EndStep,
    Errored,
    GateStep,
    HelloArgs,
    HelloData,
    InterruptStep,
    Ok,
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
    Skipped,
    StartArgs,
    Step,
)

T = TypeVar("T")

FRAMEWORK: Final = Framework(
    "Pydantic AI", frozenset({Group.MULTI_PAUSE, Group.CONCURRENCY}),
    persistence="application", tool_call_ids=True)
"""What Pydantic AI documents: several deferred tool calls at once, a message history the
application keeps (or a conversation store it picks), agents run concurrently; every tool call
has an id, made up by Pydantic AI when the model gives none."""

Interaction = Literal["approve", "ask", "confirm", "choose", "pay", "restricted"]
"""The questions the agent's ``ask`` tool may ask: the interactions the protocol registers."""

PROMPT: Final[str] = "Carry out the task; ask a person where it needs one."
DENIED: Final[str] = "denied: "
"""How the ``gate`` tool's return starts when the policy denies: the model ends the run."""

Output = str | DeferredToolRequests
_RESULTS: Final = TypeAdapter(DeferredToolResults)


class _Store(InMemoryConversationStore):
    """The conversations every server shares: Pydantic AI's in-memory store, its conditional
    write atomic across threads (as a database's conditional update is)."""

    def __init__(self) -> None:
        super().__init__()
        self._lock = threading.Lock()

    async def write_record(self, record: ConversationRecord, *,
                           new_entries: Sequence[ConversationEntry] = (),
                           expected_revision: str | None) -> None:
        with self._lock:  # the in-memory write awaits nothing: it runs whole under the lock
            await super().write_record(record, new_entries=new_entries,
                                       expected_revision=expected_revision)


@attrs.define
class _Run:
    """A started run: its script, which script step made each tool call, the pauses
    published, and the answers given so far to the calls its conversation waits on."""

    run_id: str
    scope: str
    script: tuple[Step, ...]
    steps: dict[str, int] = attrs.Factory(dict)
    published: dict[str, PublishedPause] = attrs.Factory(dict)
    answers: DeferredToolResults = attrs.Factory(DeferredToolResults)

    def step(self, tool_call_id: str | None) -> Step:
        return self.script[self.steps[tool_call_id or ""]]


@attrs.frozen
class _Resolved:
    """A resume resolved against the stored conversation: the answers it brings the pending
    calls to, and whether they are all answered now."""

    run: _Run
    conversation: Conversation
    tool_call_id: str
    results: DeferredToolResults
    remaining: DeferredToolRequests | None


def _call(tool: str, args: dict[str, Any], tool_call_id: str | None = None) -> ToolCallPart:
    """A tool call as a model provider sends it: with an id (a UUID, unless the script names
    one)."""
    return ToolCallPart(tool, args, tool_call_id=tool_call_id or str(uuid.uuid4()))


def _pending(requests: DeferredToolRequests | None) -> list[ToolCallPart]:
    return [] if requests is None else [*requests.calls, *requests.approvals]


def _answered(messages: Sequence[ModelMessage], tool_call_id: str) -> bool:
    return any(isinstance(p, ToolReturnPart) and p.tool_call_id == tool_call_id
               for m in messages if isinstance(m, ModelRequest) for p in m.parts)


def _pause_refusal(messages: Sequence[ModelMessage]) -> Refused | None:
    """The refusal behind a run Pydantic AI ended for an ``ask`` call whose arguments failed
    validation: the first field it found wrong decides the code."""
    for m in reversed(messages):
        for p in m.parts if isinstance(m, ModelRequest) else []:
            if isinstance(p, ToolReturnPart) and p.tool_name == "ask" and p.outcome == "retried" \
                    and isinstance(p.content, list) and p.content:
                error = p.content[0] if isinstance(p.content[0], dict) else {}
                field = (error.get("loc") or [""])[0]
                code, clause = ((ErrorCode.INTERACTION_UNREGISTERED, "pause.interaction.registered")
                                if field == "question" else
                                (ErrorCode.PAYLOAD_INVALID, "pause.payload.schema"))
                return Refused(code=code.value, clause=clause,
                               message=f"Pydantic AI rejected the ask call's {field}: "
                                       f"{error.get('msg', '')}")
    return None


def _refusal(exc: Exception) -> Refused | None:
    """The store's revision check is Pydantic AI's one refusal after a resume has run."""
    if isinstance(exc, ConversationConflict):
        return Refused(code=ErrorCode.PAUSE_CONSUMED.value,
                       message=f"{exc} (the resume's tools had already run)",
                       clause="race.decided-once")
    return None


def _attempt(fn: Callable[[], T]) -> T | Refused | Errored:
    return attempt(fn, _refusal)


def _sync(coro: Coroutine[Any, Any, T]) -> Callable[[], T]:
    return lambda: asyncio.run(coro)


class PydanticAIAdapter(PeerAdapter):
    """The protocol's scripted runs as Pydantic AI agents played by a scripted
    ``FunctionModel``, their conversations in a shared ``InMemoryConversationStore``."""

    framework = FRAMEWORK

    cancel_reason = ("Pydantic AI cannot cancel a paused conversation (AgentRun.cancel stops a "
                     "running run; a conversation is never resumed, or deleted)")
    clock_reason = "Pydantic AI deferred tool calls have no clock: they never expire"
    reconcile_reason = "Pydantic AI has no effect journal, so no outcome is ever unknown to it"

    def __init__(self) -> None:
        super().__init__()
        self._store = _Store()
        self._runs: dict[str, _Run] = {}

    # -- a script as an agent ----------------------------------------------------------------

    def _model(self, run: _Run) -> FunctionModel:
        """The scripted model: the next step's tool call(s) each turn, the same again after a
        call Pydantic AI sent back for a retry, a text answer at the end or after a denial."""
        def turn(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            returns = [p for m in messages if isinstance(m, ModelRequest) for p in m.parts
                       if isinstance(p, ToolReturnPart)]
            denials = [p.content for p in returns[-1:] if p.tool_name == "gate"
                       and isinstance(p.content, str) and p.content.startswith(DENIED)]
            retried = sum(p.outcome == "retried" for p in returns)
            i = sum(isinstance(m, ModelResponse) for m in messages) - retried
            step = run.script[i] if i < len(run.script) else EndStep()
            if denials or isinstance(step, EndStep):
                return ModelResponse(parts=[TextPart(denials[0] if denials else "done")])
            if isinstance(step, EffectStep):
                calls = [_call("effect", {"key": step.key})]
            elif isinstance(step, GateStep):
                calls = [_call("gate", {"amount": step.amount})]
            else:
                assert isinstance(step, InterruptStep)
                calls = [_call("ask", {"question": name, "payload": step.payload},
                               step.tool_call_id) for name in step.all_names()]
            run.steps.update((c.tool_call_id, i) for c in calls)
            return ModelResponse(parts=list(calls))
        return FunctionModel(turn)

    def _agent(self, run: _Run) -> Agent[None, Output]:
        """The run's agent (the user's code; a fresh one for every invocation, as on another
        server)."""
        agent: Agent[None, Output] = Agent(self._model(run), output_type=[str,
                                                                          DeferredToolRequests])
        world, run_id = self._world, run.run_id

        @agent.tool
        def effect(ctx: RunContext[None], key: str) -> str:
            """Carry out an action."""
            return self._apply(ctx, run_id, key)

        @agent.tool
        def ask(ctx: RunContext[None], question: Interaction, payload: dict[str, Any]) -> Any:
            """Ask a person a question and wait for the answer."""
            step = run.step(ctx.tool_call_id)
            handlers = step.handlers if isinstance(step, InterruptStep) else None
            catch_all = handlers.catch_all if handlers else None
            cleanup = handlers.cleanup if handlers else None
            try:
                raise CallDeferred(metadata=payload, kind="question")
            except Exception:  # the user's catch-all around the pause point
                if catch_all is None:
                    raise
                world.apply(run_id, catch_all)
                return {}
            finally:
                if cleanup is not None:
                    world.apply(run_id, cleanup)

        @agent.tool
        def gate(ctx: RunContext[None], amount: float) -> str:
            """Spend an amount, with approval where the policy wants one."""
            step = run.step(ctx.tool_call_id)
            assert isinstance(step, GateStep)
            verdict = ThresholdGate(step.allow_up_to, step.deny_over)(
                "gate", {"amount": step.amount})
            if verdict.decision == Decision.DENY:
                return f"{DENIED}{verdict.reason}"
            if verdict.decision == Decision.ASK and not ctx.tool_call_approved:
                raise ApprovalRequired(metadata={"amount": step.amount,
                                                 "reason": verdict.reason})
            return "allowed"

        return agent

    def _apply(self, ctx: RunContext[None], run_id: str, key: str) -> str:
        """The ``effect`` tool's side effect: ``key`` applied to the world."""
        self._world.apply(run_id, key)
        return "applied"

    @staticmethod
    def _define(args: StartArgs) -> _Run:
        return _Run(run_id=args.run_id, scope=args.scope, script=tuple(args.script))

    # -- running and reporting ---------------------------------------------------------------

    def _publish(self, run: _Run, call: ToolCallPart,
                 requests: DeferredToolRequests) -> PublishedPause:
        name = "approve" if isinstance(run.step(call.tool_call_id), GateStep) else str(
            call.args_as_dict().get("question", ""))
        pause = PublishedPause(
            interrupt_id=call.tool_call_id, run_id=run.run_id, name=name, kind=PauseKind.ASK,
            payload=requests.metadata.get(call.tool_call_id, {}),
            token=f"{run.run_id}{TOKEN_SEPARATOR}{call.tool_call_id}", resumable=True,
            expires_at=NO_EXPIRY, tool_call_id=call.tool_call_id)
        run.published[call.tool_call_id] = pause
        return pause

    async def _invoke(self, run: _Run, **kwargs: Any) -> RunReport:
        """One agent run and the save of its conversation: paused on deferred tool calls, done,
        or stopped in error (a refused ``ask`` call)."""
        with capture_run_messages() as messages:
            try:
                result: AgentRunResult[Output] = await self._agent(run).run(**kwargs)
            except UnexpectedModelBehavior:
                refusal = _pause_refusal(messages)
                if refusal is None:
                    raise
                return RunReport(run_id=run.run_id, status=RunStatus.ERROR, events=["error"],
                                 refusal=refusal)
        await self._store.save(result, scope=run.scope)
        run.answers = DeferredToolResults()
        output = result.output
        if isinstance(output, DeferredToolRequests):
            pauses = [self._publish(run, c, output) for c in _pending(output)]
            return RunReport(run_id=run.run_id, status=RunStatus.PAUSED, events=["paused"],
                             pauses=pauses)
        return RunReport(run_id=run.run_id, status=RunStatus.DONE, events=["done"])

    # -- the operations ----------------------------------------------------------------------

    def hello(self, args: HelloArgs) -> Result[HelloData]:
        return peer_hello(
            name="pydantic-ai (InMemoryConversationStore)", distribution="pydantic-ai-slim",
            homepage="https://github.com/pydantic/pydantic-ai", groups=self.claimed(),
            notes="plain Pydantic AI: deferred tools (CallDeferred, ApprovalRequired), "
                  "DeferredToolResults, a FunctionModel playing the script, "
                  "InMemoryConversationStore; token = conversation id:tool call id; no expiry")

    def reset(self, args: ResetArgs) -> Result[Empty]:
        self._store = _Store()
        self._world = MemoryWorld()
        self._runs = {}
        return Ok(data=Empty())

    def start(self, args: StartArgs) -> Result[RunReport]:
        skipped = self.skipped(args.script)
        if skipped is not None:
            return skipped
        run = self._define(args)
        self._runs[run.run_id] = run
        return as_result(_attempt(_sync(self._invoke(run, user_prompt=PROMPT,
                                                      conversation_id=run.run_id))))

    async def _resolve(self, args: ResumeArgs) -> _Resolved | Refused:
        """Load the conversation the token names and fit the answer to the call it waits on."""
        run_id, _, tool_call_id = args.token.rpartition(TOKEN_SEPARATOR)
        run = self._runs.get(run_id)
        conversation = None if run is None else await self._store.load(run_id,
                                                                       scope=args.scope)
        if run is None or conversation is None:
            return Refused(code=ErrorCode.PAUSE_UNKNOWN.value,
                           message=f"the store has no conversation {run_id!r} in scope "
                                   f"{args.scope!r}")
        requests = conversation.deferred_tool_requests or DeferredToolRequests()
        pending = requests.remaining(run.answers) or DeferredToolRequests()
        try:
            kind = pending.kind(tool_call_id)
        except ValueError as exc:
            return Refused(code=ErrorCode.PAUSE_UNKNOWN.value, message=str(exc))
        response = args.response
        if kind == "approval":
            answer = {"approvals": {tool_call_id: response.get("approved", response)
                                    if isinstance(response, dict) else response}}
        else:
            answer = {"calls": {tool_call_id: response}}
        try:
            new = _RESULTS.validate_python({**answer,
                                            "answered_by": {tool_call_id: args.responder}})
        except ValidationError as exc:
            return Refused(code=ErrorCode.RESPONSE_INVALID.value,
                           message=f"Pydantic AI's DeferredToolResults rejected the answer: "
                                   f"{exc.errors()[0]['msg']}",
                           clause="resume.response.schema")
        results = DeferredToolResults()
        results.update(run.answers)
        results.update(new)
        return _Resolved(run=run, conversation=conversation, tool_call_id=tool_call_id,
                         results=results, remaining=requests.remaining(results))

    async def _answer(self, r: _Resolved) -> ResumeData:
        """Keep the answer while other calls of the turn are unanswered; else run the agent on
        the conversation with every answer."""
        if r.remaining is not None:
            r.run.answers = r.results
            report = RunReport(run_id=r.run.run_id, status=RunStatus.PAUSED, events=[],
                               pauses=[r.run.published[c.tool_call_id]
                                       for c in _pending(r.remaining)])
        else:
            report = await self._invoke(r.run, conversation=r.conversation,
                                        deferred_tool_results=r.results)
        return ResumeData(replayed=False, interrupt_id=r.tool_call_id, run=report)

    def _resume(self, args: ResumeArgs, fresh: bool = False,
                together: Callable[[], None] | None = None) -> ResumeResult:
        """``fresh`` changes nothing: every agent run builds an agent of its own already."""
        return resume_in_two_steps(_sync(self._resolve(args)),
                                   lambda r: asyncio.run(self._answer(r)), together,
                                   resolve_refusal=_refusal, answer_refusal=_refusal)

    def crash_restart(self, args: CrashRestartArgs) -> Result[RestartData]:
        return Skipped(reason="pydantic-ai-slim ships only an in-memory conversation store, "
                              "which does not survive the process")

    def pause_state(self, args: PauseStateArgs) -> Result[PhaseData]:
        """``resumable`` while the stored conversation waits on the call, ``consumed`` once it
        is answered, ``paused`` for a published call no saved conversation has."""
        async def go() -> PhaseData | Refused:
            iid = args.interrupt_id
            for run in self._runs.values():
                if iid not in run.published:
                    continue
                if iid in run.answers.calls or iid in run.answers.approvals:
                    return PhaseData(phase="consumed")
                conv = await self._store.load(run.run_id, scope=run.scope)
                if conv is not None and any(c.tool_call_id == iid for c in
                                            _pending(conv.deferred_tool_requests)):
                    return PhaseData(phase="resumable")
                if conv is not None and _answered(conv.messages, iid):
                    return PhaseData(phase="consumed")
                return PhaseData(phase="paused")
            return Refused(code=ErrorCode.PAUSE_UNKNOWN.value,
                           message=f"no run published a tool call {iid!r}")
        return as_result(_attempt(_sync(go())))


def make() -> PydanticAIAdapter:
    """Pydantic AI with an ``InMemoryConversationStore``."""
    return PydanticAIAdapter()


# -- with pausepoint: the same adapter with the Pydantic AI guard switched on ------------------


class GuardedPydanticAIAdapter(GuardedPeer, PydanticAIAdapter):
    """:class:`PydanticAIAdapter` with :mod:`pausepoint.guards.pydantic_ai` switched on -- the
    matrix's "with pausepoint" column.  The agents, the scripted model, the tools and the
    conversation store are the same; in front of them a :class:`~.guarded.GuardBox`'s guard
    registers every deferred call (:meth:`GuardedAgent.register`: published with its ledger id
    and signed token), decides every answer (:meth:`GuardedAgent.resume`: one winner; only it
    runs the agent on the loaded conversation, once every call of the turn is answered; a
    replay returns the first outcome; a different answer is a conflict) and journals the
    ``effect`` tool's effect under its conversation and tool call id
    (:func:`pausepoint.guards.pydantic_ai.effect`).  A race gives every server a guard of its
    own on the shared store.  The conversations stay in memory (``guard_store`` is where the
    guard's ledger is)."""

    guard_framework = GUARD_FRAMEWORK
    scratch_prefix = "pausepoint-pydantic-ai-guarded-"

    def __init__(self, guard_store: str = "memory") -> None:
        super().__init__("memory", guard_store=guard_store)

    def hello(self, args: HelloArgs) -> Result[HelloData]:
        return peer_hello(
            name="pydantic-ai + pausepoint guard (InMemoryConversationStore)",
            distribution="pydantic-ai-slim",
            homepage="https://github.com/pydantic/pydantic-ai", groups=self.claimed(),
            notes="Pydantic AI deferred tools behind pausepoint.guards.pydantic_ai: ledger, "
                  "signed tokens, one winner, replay, a turn's answers kept until all are in, "
                  "journalled effects")

    def _guarded(self, run: _Run, guard: Guard) -> GuardedAgent[Output]:
        def name_of(call: ToolCallPart, kind: str) -> str:
            if isinstance(run.step(call.tool_call_id), GateStep):
                return "approve"
            return str(call.args_as_dict().get("question", ""))
        return GuardedAgent(self._agent(run), guard, name_of=name_of)

    def _apply(self, ctx: RunContext[None], run_id: str, key: str) -> str:
        return guard_effect(self._box.guard, ctx, key, lambda: super(
            GuardedPydanticAIAdapter, self)._apply(ctx, run_id, key))

    def _publish(self, run: _Run, call: ToolCallPart,
                 requests: DeferredToolRequests) -> PublishedPause:
        session, scope = self._bindings.get(run.run_id, ("", ""))
        pauses = self._guarded(run, self._box.guard).register(requests, run.run_id,
                                                              session_id=session, scope=scope)
        pause = guarded_published(next(p for p in pauses if p.tool_call_id == call.tool_call_id))
        run.published[pause.interrupt_id] = pause
        return pause

    async def _invoke(self, run: _Run, **kwargs: Any) -> RunReport:
        """The plain invocation; a pause the guard refused to take is the run's refusal."""
        try:
            return await super()._invoke(run, **kwargs)
        except PausepointError as exc:
            return self._refused_report(run.run_id, exc)

    def _resume(self, args: ResumeArgs, fresh: bool = False,
                together: Callable[[], None] | None = None) -> ResumeResult:
        def resolve(guard: Guard, claims: Claims) -> tuple[_Run, Conversation | None] | Refused:
            run = self._runs.get(claims.thread_id)
            if run is None:
                return Refused(code=ErrorCode.PAUSE_UNKNOWN.value,
                               message=f"no conversation {claims.thread_id!r}")
            return run, asyncio.run(self._store.load(run.run_id, scope=run.scope))

        def answer(guard: Guard, r: tuple[_Run, Conversation | None]) -> ResumeData:
            run, conversation = r
            given: dict[str, Any] = ({"message_history": []} if conversation is None
                                     else {"conversation": conversation})
            out = asyncio.run(self._guarded(run, guard).resume(
                args.token, args.response, session_id=args.session_id, scope=args.scope,
                responder=args.responder, run_id=args.run_id, **given))
            done = None if out.result is None else out.result.result
            if done is not None:
                asyncio.run(self._store.save(done, scope=run.scope))
            first = out.outcome if isinstance(out.outcome, dict) else {}
            status = (RunStatus.DONE if first.get("output") is not None
                      and not first.get("interrupts") else RunStatus.PAUSED)
            report = RunReport(
                run_id=run.run_id, status=status,
                events=[status.value] if done is not None else [],
                pauses=[guarded_published(p) for p in guard.pending(run.run_id)])
            ledger_id = guard.service.signer.verify(args.token).interrupt_id
            return ResumeData(replayed=out.replayed, interrupt_id=ledger_id, run=report)
        return self._guarded_resume(args, fresh, together, resolve, answer, _refusal)


def make_guarded() -> GuardedPydanticAIAdapter:
    """:func:`make` with the pausepoint guard switched on (its ledger in memory)."""
    return GuardedPydanticAIAdapter("memory")


def make_sqlite_guarded() -> GuardedPydanticAIAdapter:
    """:func:`make` with the pausepoint guard switched on, its ledger in a SQLite file."""
    return GuardedPydanticAIAdapter("sqlite")


def make_postgres_guarded() -> GuardedPydanticAIAdapter:
    """:func:`make` with the guard's ledger on PostgreSQL (``$PAUSEPOINT_PG_DSN``, a schema
    of its own): racing servers share it through connections of their own."""
    return GuardedPydanticAIAdapter("postgres")
