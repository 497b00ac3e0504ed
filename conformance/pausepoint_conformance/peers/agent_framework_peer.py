"""Microsoft Agent Framework behind the adapter port: the protocol's scripted runs realised with
the framework's own human-in-the-loop primitives -- function tools with
``approval_mode="always_require"``, the run stopping with ``response.user_input_requests``
(``function_approval_request`` contents), the ``AgentSession`` saved with ``session.to_dict()``
and brought back with ``AgentSession.from_dict``, answered with
``request.to_function_approval_response(approved)`` in a new ``agent.run(...)`` on the session
-- the way a careful but ordinary user builds pause and resume, with no pausepoint machinery (no
ledger, no signed token, no expiry, no effect journal).  What the suite reports is what the
framework itself guarantees (``docs/peers/agent_framework.md``)::

    pausepoint conform --adapter pausepoint_conformance.peers.agent_framework_peer:make
    pausepoint conform --adapter pausepoint_conformance.peers.agent_framework_peer:make_sqlite

``make`` keeps each run's saved session in memory, ``make_sqlite`` in a SQLite file.  Everything
runs offline: the chat client is :class:`ScriptClient`, a ``BaseChatClient`` with the
framework's ``FunctionInvocationLayer`` (the layer that runs tools and asks for approvals),
which plays the script; nothing reaches a model service.

**A script is an agent run** (:func:`~.base.model_script`): one ``Agent`` per run whose client
plays one turn of function calls per step, then a final message.  An ``effect`` is a call of
the tool ``effect``; a question a call of the tool named like the interaction, the payload its
arguments -- every registered interaction is a ``FunctionTool`` taking any JSON object with
``approval_mode="always_require"``; ``names`` are parallel calls, each approved on its own.  A
``gate`` is a tool ``gate_<i>`` whose approval mode the gate's policy
(:class:`pausepoint.core.gate.ThresholdGate`) picks when the agent is built: ``always_require``
when it asks, else ``never_require`` (a denial is the tool's output, after which the client ends
the run).  ``checkpoint: "none"`` / ``checkpoint_write: "fail"`` are skipped (the framework hands
the session to the application to save), a tool pause without a call id is skipped (the
framework makes one up), ``handlers`` are skipped (it asks before the tool function runs) --
all by the scoring rule.

**A published pause** is a pending ``function_approval_request``: its id the call id, its name
the interaction, its payload the call's arguments, its token ``"<run id>:<call id>"``;
``expires_at`` is :data:`~.base.NO_EXPIRY`.

**A resume** loads what the application saved for the run -- the session and the approval
requests the last run returned (``response.user_input_requests``, serialised with
``to_dict``) --, finds the request with the token's call id (none: refused ``pause_unknown``),
answers it with ``to_function_approval_response(approved)`` -- the response must be
``{"approved": bool}``, the framework's own type (:func:`~.base.approval`) -- in
``agent.run(Message("user", [response]), session=session)``, and saves the session again.
Session, scope and responder are not looked at.  Nothing is a replay.

**Claimed groups** (:data:`FRAMEWORK`): ``core``, ``multi-pause`` (parallel calls approved one
by one), ``concurrency`` (a serialised session is meant to be resumed by any process) and, with
``make_sqlite``, ``durability``.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Final

import attrs
from agent_framework import (
    Agent,
    AgentResponse,
    AgentSession,
    BaseChatClient,
    ChatResponse,
    Content,
    FunctionInvocationConfiguration,
    FunctionInvocationLayer,
    FunctionTool,
    Message,
)

from pausepoint.core.clauses import ErrorCode, Group
from pausepoint.core.gate import Decision, ThresholdGate
from pausepoint.engine.harness import MemoryWorld
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

FRAMEWORK: Final = Framework(
    "Microsoft Agent Framework", frozenset({Group.MULTI_PAUSE, Group.CONCURRENCY}),
    persistence="application", tool_call_ids=True, user_code_at_pause=False)
"""What the Microsoft Agent Framework documents: several approval requests at once, an
``AgentSession`` the application serialises (``to_dict``) and saves, sessions resumed by any
process; it makes up a call id when the model gives none, and asks for approval before the
tool function runs."""

LIMITS: Final[FunctionInvocationConfiguration] = {"max_iterations": 1000,
                                                  "max_function_calls": 1000}
"""The function-invocation loop's limits: a scripted run takes one model turn per step."""


class ScriptClient(FunctionInvocationLayer[Any], BaseChatClient[Any]):
    """A chat client that plays a script: the turn chosen by how many function calls the
    conversation holds (so it answers any saved session from the history alone); after the
    last turn, or once a gate tool answered ``denied``, a final message.  Never reaches a
    network."""

    def __init__(self, script: ModelScript) -> None:
        super().__init__(function_invocation_configuration=LIMITS)
        self.script = script

    async def _inner_get_response(self, *, messages: Sequence[Message], stream: bool,
                                  options: Any, **kwargs: Any) -> ChatResponse[Any]:
        if stream:
            raise NotImplementedError("the scripted runs are not streamed")
        contents = [c for m in messages for c in m.contents]
        results = [c for c in contents if c.type == "function_result"]
        k = self.script.turn(sum(1 for c in contents if c.type == "function_call"))
        if k is None or (results and str(results[-1].result).startswith(DENIED)):
            return ChatResponse(messages=[Message(role="assistant", contents=["done"])])
        return ChatResponse(messages=[Message(role="assistant", contents=[
            Content.from_function_call(
                call_id=f"call_{uuid.uuid4().hex}" if c.call_id is None else c.call_id,
                name=c.tool, arguments=c.arguments)
            for c in self.script.turns[k]])])


@attrs.frozen
class _Run:
    run_id: str
    script: ModelScript


@attrs.frozen
class _Saved:
    """What the application saves for a run: the session, and the approval requests the last
    run returned (``response.user_input_requests``) -- what it shows the person."""

    session: AgentSession
    pending: list[Content]

    def dumps(self) -> str:
        return json.dumps({"session": self.session.to_dict(),
                           "pending": [r.to_dict() for r in self.pending]})

    @staticmethod
    def loads(text: str) -> _Saved:
        data = json.loads(text)
        return _Saved(AgentSession.from_dict(data["session"]),
                      [Content.from_dict(r) for r in data["pending"]])


@attrs.frozen
class _Resolved:
    run: _Run
    agent: Agent[Any]
    saved: _Saved
    request: Content
    call_id: str


def _run(running: Awaitable[AgentResponse[Any]]) -> AgentResponse[Any]:
    """An agent run, to its end."""
    async def go() -> AgentResponse[Any]:
        return await running
    return asyncio.run(go())


def _called(session: AgentSession) -> set[str]:
    """The call ids of the function calls a session's history (the framework's in-memory
    history provider) holds."""
    history = session.to_dict()["state"].get("in_memory", {}).get("messages", [])
    return {str(c.get("call_id")) for m in history for c in m.get("contents", [])
            if c.get("type") == "function_call"}


def _call_id(request: Content) -> str:
    call = request.function_call
    return str(call.call_id if call is not None else "")


def _payload(request: Content) -> Any:
    call = request.function_call
    arguments = call.arguments if call is not None else None
    try:
        return json.loads(arguments) if isinstance(arguments, str) else arguments
    except ValueError:
        return arguments


class AgentFrameworkAdapter(StoredPeerAdapter):
    """The protocol's scripted runs as Microsoft Agent Framework runs; ``store`` is ``memory``
    or ``sqlite`` (the saved sessions)."""

    framework = FRAMEWORK
    scratch_prefix = "pausepoint-agent-framework-"
    cancel_reason = ("the Microsoft Agent Framework cannot cancel a paused run (its saved "
                     "session is simply never resumed)")
    clock_reason = "the Microsoft Agent Framework's approval requests never expire"
    reconcile_reason = ("the Microsoft Agent Framework has no effect journal, so no outcome is "
                        "ever unknown to it")

    def __init__(self, store: str = "memory", *, scratch: str | None = None) -> None:
        super().__init__(store, scratch=scratch)
        self._states = self._saved_states("sessions.sqlite")
        self._runs: dict[str, _Run] = {}

    def _close_store(self) -> None:
        self._states.close()

    # -- a script as an agent ------------------------------------------------------------------

    def _agent(self, run: _Run) -> Agent[Any]:
        """A new agent for the run (the user's code, as any server builds it)."""
        world = self._world

        def effect(key: str) -> str:
            """Apply a side effect to the world."""
            world.apply(run.run_id, key)
            return "applied"

        def asked(**arguments: Any) -> str:
            return "approved"

        def gate(name: str, step: GateStep) -> FunctionTool:
            verdict = ThresholdGate(step.allow_up_to, step.deny_over)(
                "gate", {"amount": step.amount})

            def check(amount: float) -> str:
                return (f"{DENIED}: {verdict.reason}" if verdict.decision == Decision.DENY
                        else "go on")
            return FunctionTool(name=name, description="the approval policy",
                                approval_mode="always_require"
                                if verdict.decision == Decision.ASK else "never_require",
                                func=check)

        tools: list[FunctionTool] = [FunctionTool(name="effect", description="an effect",
                                                  func=effect)]
        tools += [FunctionTool(name=i.name, description=i.description,
                               approval_mode="always_require", func=asked,
                               input_model={"type": "object"}) for i in INTERACTIONS]
        for name, step in run.script.gates:
            tools.append(gate(name, step))
        return Agent(client=ScriptClient(run.script), tools=tools, name="scripted-run")

    # -- running and reporting -----------------------------------------------------------------

    def _publish(self, run: _Run, request: Content) -> PublishedPause:
        call_id = _call_id(request)
        call = request.function_call
        tool = str(call.name if call is not None else "")
        return PublishedPause(
            interrupt_id=call_id, run_id=run.run_id, name=run.script.questions.get(tool, tool),
            kind=PauseKind.ASK, payload=_payload(request),
            token=f"{run.run_id}{TOKEN_SEPARATOR}{call_id}", resumable=True,
            expires_at=NO_EXPIRY, tool_call_id=call_id)

    def _report(self, run: _Run, pending: Sequence[Content]) -> RunReport:
        status = RunStatus.PAUSED if pending else RunStatus.DONE
        return RunReport(run_id=run.run_id, status=status, events=[status.value],
                         pauses=[self._publish(run, r) for r in pending])

    def _load(self, run: _Run) -> _Saved | None:
        saved = self._states.get(run.run_id)
        return None if saved is None else _Saved.loads(saved)

    def _save(self, run: _Run, saved: _Saved) -> RunReport:
        self._states.put(run.run_id, saved.dumps())
        return self._report(run, saved.pending)

    # -- the operations ------------------------------------------------------------------------

    def hello(self, args: HelloArgs) -> Result[HelloData]:
        saved = "in memory" if self.store == "memory" else "in SQLite"
        return peer_hello(
            name=f"agent-framework-core (sessions {saved})",
            distribution="agent-framework-core",
            homepage="https://github.com/microsoft/agent-framework", groups=self.claimed(),
            notes=f"plain Microsoft Agent Framework: FunctionTool approval_mode="
                  f"always_require, AgentSession.to_dict/from_dict saved {saved}, "
                  "to_function_approval_response; offline scripted chat client; token = run "
                  "id:call id; no expiry")

    def reset(self, args: ResetArgs) -> Result[Empty]:
        def go() -> Empty:
            self._states.clear()
            self._world = MemoryWorld()
            self._runs = {}
            return Empty()
        return as_result(attempt(go))

    def start(self, args: StartArgs) -> Result[RunReport]:
        skipped = self.skipped(args.script)
        if skipped is not None:
            return skipped
        run = _Run(run_id=args.run_id, script=model_script(args.script))

        def go() -> RunReport:
            self._runs[run.run_id] = run
            agent = self._agent(run)
            session = agent.create_session()
            response = _run(agent.run("start", session=session))
            return self._save(run, _Saved(session, response.user_input_requests))
        return as_result(attempt(go))

    def _resolve(self, args: ResumeArgs) -> _Resolved | Refused:
        run_id, _, call_id = args.token.rpartition(TOKEN_SEPARATOR)
        run = self._runs.get(run_id)
        saved = self._load(run) if run is not None else None
        if run is None or saved is None:
            return Refused(code=ErrorCode.PAUSE_UNKNOWN.value,
                           message=f"no saved session for a run {run_id!r}")
        request = next((r for r in saved.pending if _call_id(r) == call_id), None)
        if request is None:
            return Refused(code=ErrorCode.PAUSE_UNKNOWN.value,
                           message=f"the saved session of {run_id!r} has no pending approval "
                                   f"{call_id!r}")
        return _Resolved(run=run, agent=self._agent(run), saved=saved, request=request,
                         call_id=call_id)

    def _answer(self, r: _Resolved, response: Any) -> ResumeData | Refused:
        approved = approval(response)
        if isinstance(approved, Refused):
            return approved
        answer = r.request.to_function_approval_response(approved)
        session = r.saved.session
        response = _run(r.agent.run(Message(role="user", contents=[answer]), session=session))
        return ResumeData(replayed=False, interrupt_id=r.call_id,
                          run=self._save(r.run, _Saved(session, response.user_input_requests)))

    def _resume(self, args: ResumeArgs, fresh: bool = False,
                together: Callable[[], None] | None = None) -> ResumeResult:
        return resume_in_two_steps(lambda: self._resolve(args),
                                   lambda r: self._answer(r, args.response), together)

    def crash_restart(self, args: CrashRestartArgs) -> Result[RestartData]:
        """The process dies: the store opened anew (an empty one for ``memory``); every saved
        session loaded to publish its pending approvals."""
        def go() -> RestartData:
            self._close_store()
            self._states = self._saved_states("sessions.sqlite")
            pauses = []
            for run in self._runs.values():
                saved = self._load(run)
                if saved is not None:
                    pauses += self._report(run, saved.pending).pauses
            return RestartData(runs=[], pauses=pauses)
        return as_result(attempt(go))

    def pause_state(self, args: PauseStateArgs) -> Result[PhaseData]:
        """``resumable`` while the approval is pending, ``consumed`` once the saved session
        holds the call and it is pending no more."""
        def go() -> PhaseData | Refused:
            iid = args.interrupt_id
            for run in self._runs.values():
                saved = self._load(run)
                if saved is None:
                    continue
                if any(_call_id(r) == iid for r in saved.pending):
                    return PhaseData(phase="resumable")
                if iid in _called(saved.session):
                    return PhaseData(phase="consumed")
            return Refused(code=ErrorCode.PAUSE_UNKNOWN.value,
                           message=f"no saved session has a tool call {iid!r}")
        return as_result(attempt(go))


def make() -> AgentFrameworkAdapter:
    """The Microsoft Agent Framework, each run's saved session in memory."""
    return AgentFrameworkAdapter("memory")


def make_sqlite() -> AgentFrameworkAdapter:
    """The Microsoft Agent Framework, each run's saved session in a SQLite file (claims
    durability)."""
    return AgentFrameworkAdapter("sqlite")
