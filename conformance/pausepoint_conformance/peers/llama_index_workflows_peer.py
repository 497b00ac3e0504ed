"""llama-index-workflows behind the adapter port: the protocol's scripted runs realised with the
library's own human-in-the-loop primitives -- ``ctx.wait_for_event(...)`` with an
``InputRequiredEvent`` streamed to the caller and a ``HumanResponseEvent`` sent back, the run's
``Context`` saved with ``handler.ctx.to_dict()`` and continued with ``Context.from_dict(...)`` --
the way a careful but ordinary user builds pause and resume, with no pausepoint machinery (no
ledger, no signed token, no expiry, no effect journal).  No model is involved: the steps of a
scripted run are workflow steps.  What the suite reports is what llama-index-workflows itself
guarantees (``docs/peers/llama_index_workflows.md``)::

    pausepoint conform --adapter pausepoint_conformance.peers.llama_index_workflows_peer:make
    pausepoint conform --adapter pausepoint_conformance.peers.llama_index_workflows_peer:make_sqlite

``make`` keeps each run's saved context (the JSON of ``to_dict()``) in memory, ``make_sqlite`` in
a SQLite file -- the "store it anywhere as a JSON blob" the library's documentation shows.

**A script is a workflow** (:class:`ScriptedRun`, one instance per run: the user's code,
deployed anew after a restart), one step execution per script step: ``advance`` takes a
``_Next(index)`` event and applies an ``effect``'s key to the world, asks a ``gate``'s policy
(:class:`pausepoint.core.gate.ThresholdGate`; a denial ends the run with a ``StopEvent``), or emits
one ``_Ask`` event per question of an ``interrupt`` (``names``: several sent at once with
``ctx.send_event``); ``end`` is a ``StopEvent``.  ``ask`` -- a step of its own, because
``wait_for_event`` replays its whole step when the answer comes -- calls
``ctx.wait_for_event(Answer, waiter_event=Question(...), waiter_id=<question id>,
requirements={"question": <question id>}, timeout=None)``, records the answer in the workflow's
state (``ctx.store``) and emits ``_Answered``; ``join`` collects one ``_Answered`` per question
(``ctx.collect_events``) before the next step.  :class:`Answer` is a ``HumanResponseEvent``
whose ``response`` is typed ``dict[str, JsonValue]`` -- the library's (pydantic's) own check
that an answer is a JSON object -- and whose ``question`` the waiter's ``requirements`` match,
so that an answer can only answer the question it names.  ``handlers`` are a ``try / except
Exception / finally`` around ``wait_for_event`` in the ``ask`` step.  ``checkpoint: "none"``
and ``checkpoint_write: "fail"`` are skipped by the scoring rule (saving the context is the
application's code).  Effect faults are skipped: the library has no effect journal to crash
inside of.

**A run pauses** when the workflow reports ``WorkflowIdleEvent`` (streamed with
``expose_internal=True``: nothing can advance without input): the integration saves
``handler.ctx.to_dict()`` under the run id and ends the handler with ``cancel_run()``.  The
published pauses are the waiters of the saved context (its ``collected_waiters``) -- their name
and payload are the run's script, their ``interrupt_id`` and ``token`` both
``"<run id>:<waiter id>"``, what an integration puts behind a button: which saved context to
load, which waiter to answer.  A pause is resumable (its context is saved), and
``expires_at`` is :data:`~.base.NO_EXPIRY`, a constant: ``timeout=None`` -- a
``wait_for_event`` timeout counts seconds of a live process, and the saved context carries no
deadline.

**A resume** builds the ``Answer`` (a response that is not a JSON object is refused
``response_invalid``), loads the saved context (none: refused ``pause_unknown``), and -- if
``Context.from_dict(...).is_running`` says the run has not ended (else refused
``pause_unknown``: ``run(ctx=...)`` on an ended run's context starts the workflow over) -- runs
the workflow on it, waits for it to be idle again (the waiters re-registered), sends the answer
with ``handler.ctx.send_event(...)`` and waits until the run is idle or done, then saves the
context.  When the library reports the answer unhandled (``UnhandledEvent``: no waiter took
it) the resume is refused ``pause_unknown`` and nothing is saved.  Session, scope, responder
and run id are not looked at: the library has no such binding.  Nothing is ever a replay.
``pause_state`` reads the saved context: ``resumable`` while the waiter is there, ``consumed``
once the workflow's state has the answer.

**Claimed groups** -- the scoring rule's (:func:`~.base.claims` of :data:`FRAMEWORK`):

* ``core``;
* ``multi-pause``: several waiters at once, each answered by its id;
* ``concurrency``: the saved context is a JSON value any process can restore -- how a
  deployment of stateless workers scales -- so ``race_resume`` gives every request a workflow
  instance of its own, each loading the run's saved context and all answering together;
* ``durability`` (``make_sqlite`` only): new workflow instances restore every saved context
  from the file after a restart.

Not claimed: ``replay`` (a repeated answer is refused, not recognised), ``tokens`` (waiter ids
are plain identifiers, nothing is signed), ``expiry`` (no deadline survives a save),
``lineage`` (nothing binds an answer to a run or session), ``cancel`` (``cancel_run()`` stops a
live handler; a paused run is a saved context with no handler, nothing records a cancellation,
and runs have no parents), ``unknown-outcome`` (no effect journal). ``cancel``,
``advance_clock`` and ``reconcile`` answer skipped; the optional operations (``status``,
``rotate_key``, ``retire_key``, ``wiring``) are not offered. """

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Sequence
from typing import Any, Final

import attrs
from pydantic import JsonValue, ValidationError
from workflows import Context, Workflow, step
from workflows.events import (
    Event,
    HumanResponseEvent,
    InputRequiredEvent,
    StartEvent,
    StopEvent,
    UnhandledEvent,
    WorkflowIdleEvent,
)
from workflows.handler import WorkflowHandler

from pausepoint.core.clauses import ErrorCode, Group
from pausepoint.core.errors import PausepointError
from pausepoint.core.gate import Decision, GateVerdict, ThresholdGate
from pausepoint.core.ports import Claims
from pausepoint.engine.harness import MemoryWorld
from pausepoint.guards.aio import resume_async
from pausepoint.guards.core import Answer as GuardAnswer
from pausepoint.guards.core import Guard
from pausepoint.guards.llama_index_workflows import FRAMEWORK as GUARD_FRAMEWORK
from pausepoint_conformance.peers.base import (
    NO_EXPIRY,
    TOKEN_SEPARATOR,
    Framework,
    SavedStates,
    StoredPeerAdapter,
    as_result,
    attempt,
)
from pausepoint_conformance.peers.base import hello as peer_hello
from pausepoint_conformance.peers.guarded import GuardedPeer
from pausepoint_conformance.protocol.wire import (
    CrashRestartArgs,
    EffectStep,
    Empty,
    EndStep,
    Errored,
    GateStep,
    Handlers,
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
    StartArgs,
    Step,
)

SETTLE_TIMEOUT: Final[float] = 60.0
"""Seconds an invocation may take to become idle or end before it is reported errored (a
restored context that never becomes idle would otherwise be waited on forever)."""

FRAMEWORK: Final = Framework(
    "llama-index-workflows", frozenset({Group.MULTI_PAUSE, Group.CONCURRENCY}),
    persistence="application")
"""What llama-index-workflows documents: several waiters at once, a context the application
serialises (``Context.to_dict``) and saves, workflows served concurrently
(``llama-agents-server``)."""


# -- the events of a scripted run ------------------------------------------------------------


class Question(InputRequiredEvent):
    """What the ``ask`` step streams to the caller when it starts waiting."""

    question: str
    name: str
    payload: Any = None


class Answer(HumanResponseEvent):
    """A person's answer: ``question`` is the waiter it answers (the waiter's
    ``requirements``), ``response`` any JSON object."""

    question: str
    response: dict[str, JsonValue]


class _Next(Event):
    """Go on with the script step ``index``."""

    index: int


class _Ask(Event):
    """Ask question ``branch`` of the interrupt (or gate) at script step ``index``."""

    index: int
    branch: int = 0


class _Answered(Event):
    index: int
    branch: int = 0


def _waiter_id(index: int, branch: int) -> str:
    return f"step{index}-{branch}"


def _answer_key(waiter_id: str) -> str:
    """Where the ``ask`` step records its answer in the workflow's state."""
    return f"answer-{waiter_id}"


def _gate_verdict(gate: GateStep) -> GateVerdict:
    return ThresholdGate(gate.allow_up_to, gate.deny_over)("gate", {"amount": gate.amount})


# -- a script as a workflow ------------------------------------------------------------------


@attrs.frozen
class _Question:
    """What a waiter asks: the interaction, its payload, a tool pause's call id, the user code
    around it."""

    name: str
    payload: JsonValue
    tool_call_id: str = ""
    handlers: Handlers | None = None


@attrs.frozen
class _Plan:
    """A started run: its script (up to its end) and what each waiter asks."""

    run_id: str
    steps: tuple[Step, ...]
    questions: dict[str, _Question]

    def width(self, index: int) -> int:
        step_ = self.steps[index]
        return len(step_.all_names()) if isinstance(step_, InterruptStep) else 1

    def token(self, waiter_id: str) -> str:
        return f"{self.run_id}{TOKEN_SEPARATOR}{waiter_id}"


def _plan(run_id: str, script: Sequence[Step]) -> _Plan:
    steps: list[Step] = []
    questions: dict[str, _Question] = {}
    for i, s in enumerate(script):
        if isinstance(s, EndStep):
            break
        steps.append(s)
        if isinstance(s, GateStep):
            verdict = _gate_verdict(s)
            if verdict.decision == Decision.ASK:
                questions[_waiter_id(i, 0)] = _Question(
                    "approve", {"amount": s.amount, "reason": verdict.reason})
        elif isinstance(s, InterruptStep):
            for j, name in enumerate(s.all_names()):
                questions[_waiter_id(i, j)] = _Question(name, s.payload, s.tool_call_id or "",
                                                        s.handlers)
    return _Plan(run_id=run_id, steps=tuple(steps), questions=questions)


class ScriptedRun(Workflow):
    """One run's workflow: a step execution per script step, a waiter per question."""

    def __init__(self, plan: _Plan, world: MemoryWorld,
                 effect: Callable[[str, str, Callable[[], None]], None] | None = None) -> None:
        super().__init__(timeout=None)
        self.plan = plan
        self.world = world
        self.effect = effect or (lambda _run, _key, fn: fn())
        """How an effect step's side effect runs: ``effect(run id, key, apply)``."""

    @step
    async def begin(self, ev: StartEvent) -> _Next:
        return _Next(index=0)

    @step
    async def advance(self, ctx: Context, ev: _Next) -> _Next | _Ask | StopEvent | None:
        if ev.index >= len(self.plan.steps):
            return StopEvent(result="done")
        s = self.plan.steps[ev.index]
        if isinstance(s, EffectStep):
            key, run_id = s.key, self.plan.run_id
            self.effect(run_id, f"step{ev.index}:{key}", lambda: self.world.apply(run_id, key))
        elif isinstance(s, GateStep):
            verdict = _gate_verdict(s)
            if verdict.decision == Decision.DENY:
                return StopEvent(result=verdict.reason)
            if verdict.decision == Decision.ASK:
                return _Ask(index=ev.index)
        elif isinstance(s, InterruptStep):
            if self.plan.width(ev.index) == 1:
                return _Ask(index=ev.index)
            for j in range(self.plan.width(ev.index)):
                ctx.send_event(_Ask(index=ev.index, branch=j))
            return None
        return _Next(index=ev.index + 1)

    @step
    async def ask(self, ctx: Context, ev: _Ask) -> _Answered:
        waiter = _waiter_id(ev.index, ev.branch)
        q = self.plan.questions[waiter]
        catch_all = q.handlers.catch_all if q.handlers else None
        cleanup = q.handlers.cleanup if q.handlers else None
        try:
            answer = await ctx.wait_for_event(
                Answer, waiter_event=Question(question=waiter, name=q.name, payload=q.payload),
                waiter_id=waiter, requirements={"question": waiter}, timeout=None)
        except Exception:  # the user's catch-all around the pause point
            if catch_all is None:
                raise
            self.world.apply(self.plan.run_id, catch_all)
            return _Answered(index=ev.index, branch=ev.branch)
        finally:
            if cleanup is not None:
                self.world.apply(self.plan.run_id, cleanup)
        await ctx.store.set(_answer_key(waiter), answer.response)
        return _Answered(index=ev.index, branch=ev.branch)

    @step
    async def join(self, ctx: Context, ev: _Answered) -> _Next | None:
        if ctx.collect_events(ev, [_Answered] * self.plan.width(ev.index),
                              buffer_id=f"step{ev.index}") is None:
            return None
        return _Next(index=ev.index + 1)


def _waiting(saved: dict[str, Any]) -> set[str]:
    """The waiter ids a saved context waits on (its ``collected_waiters`` not yet resolved)."""
    return {w["waiter_id"] for worker in saved.get("workers", {}).values()
            for w in worker.get("collected_waiters", []) if w.get("resolved_event") is None}


# -- running a workflow until it pauses or ends ----------------------------------------------


@attrs.frozen
class _Settled:
    """Where an invocation left the run: done, paused (idle) or error; the context it left
    (``None`` after an error); whether the library reported the answer sent unhandled, or
    never took it."""

    status: RunStatus
    context: dict[str, Any] | None
    unhandled: bool = False


async def _settle(handler: WorkflowHandler, answer: Answer | None = None,
                  together: Callable[[], None] | None = None) -> _Settled:
    """Stream the run (internal events too) until it is idle -- then take its context and end
    the handler -- or done.  ``answer`` is sent at the first idle (once a restored run's
    waiters are registered again), after ``together``."""
    unhandled = False
    async with asyncio.timeout(SETTLE_TIMEOUT):
        async for ev in handler.stream_events(expose_internal=True):
            if isinstance(ev, UnhandledEvent):
                unhandled = True
            elif isinstance(ev, WorkflowIdleEvent):
                if answer is not None:
                    if together is not None:  # every racer has loaded the run: all answer now
                        await asyncio.get_running_loop().run_in_executor(None, together)
                    handler.ctx.send_event(answer)
                    answer = None
                    continue
                context = handler.ctx.to_dict()
                await handler.cancel_run()
                return _Settled(RunStatus.PAUSED, context, unhandled)
        try:
            await handler
        except Exception:
            return _Settled(RunStatus.ERROR, None, unhandled)
    return _Settled(RunStatus.DONE, handler.ctx.to_dict(), unhandled or answer is not None)


# -- where the integration keeps each run's saved context ------------------------------------


class _Contexts:
    """Each run's saved context (the JSON of ``to_dict()``) in the adapter's
    :class:`~.base.SavedStates`."""

    def __init__(self, states: SavedStates) -> None:
        self._states = states

    def put(self, run_id: str, context: dict[str, Any]) -> None:
        self._states.put(run_id, json.dumps(context))

    def get(self, run_id: str) -> dict[str, Any] | None:
        text = self._states.get(run_id)
        loaded: dict[str, Any] | None = json.loads(text) if text is not None else None
        return loaded

    def clear(self) -> None:
        self._states.clear()

    def close(self) -> None:
        self._states.close()


def _refused(code: ErrorCode, message: str, clause: str | None = None) -> Refused:
    return Refused(code=code.value, message=message, clause=clause)


class LlamaIndexWorkflowsAdapter(StoredPeerAdapter):
    """The protocol's scripted runs as llama-index-workflows workflows; ``store`` is ``memory``
    (saved contexts in a dict) or ``sqlite`` (in a SQLite file in a private temporary directory
    made under ``scratch`` or the system's temporary directory, emptied at each reset and
    removed by :meth:`close`)."""

    framework = FRAMEWORK
    scratch_prefix = "pausepoint-llama-index-workflows-"
    cancel_reason = ("llama-index-workflows cancels a live handler (cancel_run); a paused run "
                     "is a saved context with no handler")
    clock_reason = "a saved llama-index-workflows context carries no deadline"
    reconcile_reason = ("llama-index-workflows has no effect journal, so no outcome is ever "
                        "unknown to it")

    def __init__(self, store: str = "memory", *, scratch: str | None = None) -> None:
        super().__init__(store, scratch=scratch)
        self._contexts = self._open()
        self._plans: dict[str, _Plan] = {}
        self._apps: dict[str, ScriptedRun] = {}

    def _open(self) -> _Contexts:
        return _Contexts(self._saved_states("contexts.sqlite"))

    def _close_store(self) -> None:
        self._contexts.close()

    def _app(self, plan: _Plan, fresh: bool = False) -> ScriptedRun:
        """The run's workflow (``fresh``: another instance, as another server would have)."""
        if fresh:
            return ScriptedRun(plan, self._world, self._effect)
        if plan.run_id not in self._apps:
            self._apps[plan.run_id] = ScriptedRun(plan, self._world, self._effect)
        return self._apps[plan.run_id]

    def _effect(self, run_id: str, key: str, apply: Callable[[], None]) -> None:
        """An effect step's side effect: applied."""
        apply()

    # -- publishing --------------------------------------------------------------------------

    def _publish(self, plan: _Plan, waiter: str) -> PublishedPause:
        q = plan.questions[waiter]
        return PublishedPause(
            interrupt_id=plan.token(waiter), run_id=plan.run_id, name=q.name,
            kind=PauseKind.ASK, payload=q.payload, token=plan.token(waiter),
            resumable=True, expires_at=NO_EXPIRY, tool_call_id=q.tool_call_id)

    def _live(self, plan: _Plan) -> list[PublishedPause]:
        """The run's pauses: the waiters of its saved context."""
        saved = self._contexts.get(plan.run_id)
        waiting = _waiting(saved) if saved is not None else set()
        return [self._publish(plan, w) for w in plan.questions if w in waiting]

    def _record(self, plan: _Plan, settled: _Settled) -> RunReport:
        """Save the context the invocation left and report the run."""
        if settled.context is not None:
            self._contexts.put(plan.run_id, settled.context)
        return RunReport(run_id=plan.run_id, status=settled.status,
                         events=[settled.status.value], pauses=self._live(plan))

    # -- the operations ----------------------------------------------------------------------

    def hello(self, args: HelloArgs) -> Result[HelloData]:
        where = "in memory" if self.store == "memory" else "in SQLite"
        return peer_hello(
            name=f"llama-index-workflows (contexts {where})",
            distribution="llama-index-workflows",
            homepage="https://github.com/run-llama/workflows-py",
            groups=self.claimed(),
            notes="plain llama-index-workflows: wait_for_event(HumanResponseEvent subclass, "
                  "requirements), Context.to_dict / from_dict, send_event; contexts saved "
                  f"{where}; token = run id:waiter id; no expiry")

    def reset(self, args: ResetArgs) -> Result[Empty]:
        def go() -> Empty:
            self._contexts.clear()
            self._world = MemoryWorld()
            self._plans, self._apps = {}, {}
            return Empty()
        return as_result(attempt(go))

    def start(self, args: StartArgs) -> Result[RunReport]:
        skipped = self.skipped(args.script)
        if skipped is not None:
            return skipped
        plan = _plan(args.run_id, args.script)

        def go() -> RunReport:
            self._plans[plan.run_id] = plan
            self._apps.pop(plan.run_id, None)
            app = self._app(plan)

            async def run() -> _Settled:
                return await _settle(app.run())
            return self._record(plan, asyncio.run(run()))
        return as_result(attempt(go))

    def _load(self, args: ResumeArgs) -> tuple[_Plan, Answer, dict[str, Any]] | Refused:
        """The run the token names, the answer to send, and the run's saved context."""
        run_id, _, waiter = args.token.rpartition(TOKEN_SEPARATOR)
        try:
            answer = Answer.model_validate({"question": waiter, "response": args.response})
        except ValidationError as exc:
            return _refused(ErrorCode.RESPONSE_INVALID, "the Answer event's pydantic model "
                            f"rejected the response: {str(exc).splitlines()[0]}",
                            "resume.response.schema")
        plan = self._plans.get(run_id)
        saved = self._contexts.get(run_id) if plan is not None else None
        if plan is None or saved is None:
            return _refused(ErrorCode.PAUSE_UNKNOWN, f"no saved context for run {run_id!r}")
        return plan, answer, saved

    def _resume(self, args: ResumeArgs, fresh: bool = False,
                together: Callable[[], None] | None = None) -> ResumeResult:
        """Load the run's saved context into a workflow, send the answer once it is idle, save
        what it leaves.  ``together`` is called once the context is loaded (or the resume
        refused before)."""
        waited = False

        def ready() -> None:
            nonlocal waited
            if not waited:
                waited = True
                if together is not None:
                    together()

        async def go(plan: _Plan, answer: Answer, saved: dict[str, Any]) -> ResumeData | Refused:
            app = self._app(plan, fresh)
            ctx: Context = Context.from_dict(app, saved)
            if not ctx.is_running:
                return _refused(ErrorCode.PAUSE_UNKNOWN, f"run {plan.run_id!r} has ended: its "
                                "saved context is not running")
            settled = await _settle(app.run(ctx=ctx), answer, ready)
            if settled.unhandled:
                return _refused(ErrorCode.PAUSE_UNKNOWN, "llama-index-workflows reported the "
                                f"answer to {answer.question!r} unhandled (UnhandledEvent): no "
                                "waiter took it")
            return ResumeData(replayed=False, interrupt_id=args.token,
                              run=self._record(plan, settled))

        try:
            loaded = attempt(lambda: self._load(args))
            if isinstance(loaded, (Refused, Errored)):
                return loaded
            return as_result(attempt(lambda: asyncio.run(go(*loaded))))
        finally:
            ready()

    def crash_restart(self, args: CrashRestartArgs) -> Result[RestartData]:
        """The process dies: the saved contexts are opened again (``sqlite``; none are left
        for ``memory``) and every run's workflow is deployed anew."""
        def go() -> RestartData:
            self._close_store()
            self._contexts, self._apps = self._open(), {}
            return RestartData(runs=[], pauses=[p for plan in self._plans.values()
                                                for p in self._live(plan)])
        return as_result(attempt(go))

    def pause_state(self, args: PauseStateArgs) -> Result[PhaseData]:
        """``resumable`` while the run's saved context waits on the waiter, ``consumed`` once
        the workflow's state has its answer."""
        run_id, _, waiter = args.interrupt_id.rpartition(TOKEN_SEPARATOR)
        plan = self._plans.get(run_id)
        saved = self._contexts.get(run_id) if plan is not None else None
        if plan is None or saved is None or waiter not in plan.questions:
            return _refused(ErrorCode.PAUSE_UNKNOWN, f"no saved run has a waiter {waiter!r}")
        if waiter in _waiting(saved):
            return Ok(data=PhaseData(phase="resumable"))

        async def answered() -> bool:
            ctx: Context = Context.from_dict(self._app(plan), saved)
            return await ctx.store.get(_answer_key(waiter), default=None) is not None
        res = attempt(lambda: asyncio.run(answered()))
        if isinstance(res, (Refused, Errored)):
            return res
        if res:
            return Ok(data=PhaseData(phase="consumed"))
        return _refused(ErrorCode.PAUSE_UNKNOWN, f"run {run_id!r} has no answer to {waiter!r} "
                                                 "and does not wait on it")


def make() -> LlamaIndexWorkflowsAdapter:
    """llama-index-workflows with the saved contexts in memory."""
    return LlamaIndexWorkflowsAdapter("memory")


def make_sqlite() -> LlamaIndexWorkflowsAdapter:
    """llama-index-workflows with the saved contexts in a SQLite file (claims durability)."""
    return LlamaIndexWorkflowsAdapter("sqlite")


# -- with pausepoint: the same adapter with the llama-index-workflows guard switched on --------


class GuardedLlamaIndexWorkflowsAdapter(GuardedPeer, LlamaIndexWorkflowsAdapter):
    """:class:`LlamaIndexWorkflowsAdapter` with the guard of
    :mod:`pausepoint.guards.llama_index_workflows` switched on -- the matrix's "with
    pausepoint" column.  The workflows, their events and the saved contexts are the same; in
    front of them a :class:`~.guarded.GuardBox`'s guard registers every waiter of a saved
    context (published with its ledger id and signed token), decides every answer (one winner;
    only it restores the context and sends the answer with ``ctx.send_event``, through
    :func:`pausepoint.guards.aio.resume_async`; a replay returns the first outcome; a
    different answer is a conflict) and journals each effect step's effect.  A race gives
    every server a guard of its own on the shared store."""

    guard_framework = GUARD_FRAMEWORK

    def hello(self, args: HelloArgs) -> Result[HelloData]:
        where = "in memory" if self.store == "memory" else "in SQLite"
        return peer_hello(
            name=f"llama-index-workflows + pausepoint guard (contexts {where})",
            distribution="llama-index-workflows",
            homepage="https://github.com/run-llama/workflows-py", groups=self.claimed(),
            notes=f"llama-index-workflows (contexts saved {where}) behind "
                  "pausepoint.guards.llama_index_workflows: ledger, signed tokens, one winner, "
                  "replay, journalled effects")

    def _effect(self, run_id: str, key: str, apply: Callable[[], None]) -> None:
        def once() -> str:
            apply()
            return "applied"
        self._box.guard.effect(run_id, key, once)

    def _publish(self, plan: _Plan, waiter: str) -> PublishedPause:
        q = plan.questions[waiter]
        return self._guarded_pause(plan.run_id, waiter, q.name, q.payload, q.tool_call_id)

    def _record(self, plan: _Plan, settled: _Settled) -> RunReport:
        """The plain record, or -- when the guard refused to take a pause -- the refusal."""
        try:
            return super()._record(plan, settled)
        except PausepointError as exc:
            return self._refused_report(plan.run_id, exc)

    def _resume(self, args: ResumeArgs, fresh: bool = False,
                together: Callable[[], None] | None = None) -> ResumeResult:
        def resolve(guard: Guard, claims: Claims) -> tuple[_Plan, dict[str, Any], str] | Refused:
            plan = self._plans.get(claims.thread_id)
            saved = self._contexts.get(claims.thread_id) if plan is not None else None
            if plan is None or saved is None:
                return _refused(ErrorCode.PAUSE_UNKNOWN,
                                f"no saved context for run {claims.thread_id!r}")
            return plan, saved, claims.interrupt_id

        def answer(guard: Guard, r: tuple[_Plan, dict[str, Any], str]) -> ResumeData:
            plan, saved, ledger_id = r
            box: list[RunReport] = []

            async def go(a: GuardAnswer) -> str:
                app = self._app(plan, fresh)
                ctx: Context = Context.from_dict(app, saved)
                settled = await _settle(app.run(ctx=ctx), Answer(question=a.interrupt_id,
                                                                 response=a.data))
                box.append(self._record(plan, settled))
                return settled.status.value
            out = asyncio.run(resume_async(
                guard, args.token, args.response, go, session_id=args.session_id,
                scope=args.scope, responder=args.responder, run_id=args.run_id))
            status = RunStatus(out.outcome) if isinstance(out.outcome, str) else \
                RunStatus.PAUSED
            report = box[0] if box else RunReport(run_id=plan.run_id, status=status,
                                                  events=[], pauses=self._live(plan))
            return ResumeData(replayed=out.replayed, interrupt_id=ledger_id, run=report)
        return self._guarded_resume(args, fresh, together, resolve, answer,
                                    lambda _exc: None)


def make_guarded() -> GuardedLlamaIndexWorkflowsAdapter:
    """:func:`make` with the pausepoint guard switched on (its ledger in memory)."""
    return GuardedLlamaIndexWorkflowsAdapter("memory")


def make_sqlite_guarded() -> GuardedLlamaIndexWorkflowsAdapter:
    """:func:`make_sqlite` with the pausepoint guard switched on (its ledger in a SQLite file
    beside the saved contexts)."""
    return GuardedLlamaIndexWorkflowsAdapter("sqlite")


def make_postgres_guarded() -> GuardedLlamaIndexWorkflowsAdapter:
    """:func:`make_sqlite` with the guard's ledger on PostgreSQL (``$PAUSEPOINT_PG_DSN``, a
    schema of its own): racing servers share it through connections of their own."""
    return GuardedLlamaIndexWorkflowsAdapter("sqlite", guard_store="postgres")
