"""LangGraph behind the adapter port: the protocol's scripted runs realised with LangGraph's
own primitives -- ``StateGraph``, ``interrupt``, ``Command(resume=...)`` and a checkpointer --
the way a careful but ordinary LangGraph user builds pause and resume, with no pausepoint
machinery (no ledger, no signed token, no expiry, no effect journal).  What the suite reports
is what LangGraph itself guarantees (``docs/peers.md``)::

    pausepoint conform --adapter pausepoint_conformance.peers.langgraph_peer:make
    pausepoint conform --adapter pausepoint_conformance.peers.langgraph_peer:make_sqlite

``make`` keeps threads in an ``InMemorySaver``, ``make_sqlite`` in a ``SqliteSaver`` file.

**A script is a graph**, one node per step, chained: an ``effect`` node applies its key to the
world; an ``interrupt`` node calls ``interrupt(payload, response_schema=dict[str, Any])`` --
LangGraph's own check that an answer is a JSON object -- and stores the answer; ``names`` are
parallel branches, each interrupting, joined before the next step; a ``gate`` node asks
:class:`pausepoint.core.gate.ThresholdGate` (the script's policy) and interrupts only when it says
ask, a denial ending the run through a conditional edge; ``end`` is ``END``.  ``handlers``
are a ``try / except Exception / finally`` around ``interrupt()`` in the node.
``checkpoint: "none"`` compiles the run's graph with no checkpointer; ``checkpoint_write:
"fail"`` makes the checkpointer's write of that node's interrupt raise.  Effect faults
are skipped: LangGraph has no effect journal to crash inside of (a node a crash interrupts is
simply run again).

**A published pause** is an ``Interrupt`` of the thread's state: its id is the interrupt id,
its name the question the node asks, and its token ``"<thread id>:<interrupt id>"`` -- what
a LangGraph integration puts behind a button (the thread id is the run id).  It is resumable
when the graph has a checkpointer, and ``expires_at`` is :data:`~.base.NO_EXPIRY`, a
constant: LangGraph interrupts never expire.

**A resume** reads the state of the thread the token names and answers it with
``Command(resume={interrupt_id: response})`` -- the id-keyed form LangGraph's docs recommend,
the interrupt id coming from the token -- from the checkpoint it read. ``resume_form="bare"``
(``make_sqlite_bare``) answers with ``Command(resume=response)`` while one interrupt is
pending, the other documented form; the page shows where its verdicts differ. Session, scope,
responder and run id are not looked at: LangGraph has no such binding. LangGraph refuses only
an answer its ``response_schema`` rejects (refused ``response_invalid``); an unknown thread is
refused ``pause_unknown``; anything else it raises is reported errored. A resume is
``replayed`` when LangGraph ran no node to its end (a finished thread returns its final state
and runs nothing). ``pause_state`` is read from the checkpoints: ``resumable`` while the
interrupt is pending, ``consumed`` once a checkpoint no longer has it.

**Claimed groups** -- the scoring rule's (:func:`~.base.claims` of :data:`FRAMEWORK`):

* ``core``;
* ``multi-pause``: parallel branches interrupting at once, answered by interrupt id;
* ``concurrency``: many app instances share one checkpointer -- how LangGraph servers scale --
  so ``race_resume`` gives every request an app instance of its own on the shared
  checkpointer, each reading the thread's state and all invoking together;
* ``durability`` (``make_sqlite`` only): a new app on the same SQLite file (``crash_restart``)
  finds every thread where it stopped and continues, with ``invoke(None)``, a thread that
  stopped between nodes.

Not claimed: ``replay`` (nothing recognises a repeated answer), ``tokens`` (thread and
interrupt ids are plain identifiers, nothing is signed), ``expiry`` (no clock), ``lineage``
(nothing binds a resume to a run or session), ``cancel`` (the library cannot cancel a paused
thread), ``unknown-outcome`` (no effect journal). ``cancel``, ``advance_clock`` and
``reconcile`` answer skipped; the optional operations (``status``, ``rotate_key``,
``retire_key``, ``wiring``) are not offered. """

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Sequence
from typing import Annotated, Any, Final, Literal, Protocol, TypedDict, TypeVar

import attrs
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.config import get_config
from langgraph.errors import is_invalid_resume
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command, Interrupt, interrupt
from pydantic import JsonValue

from pausepoint.core.clauses import ErrorCode, Group
from pausepoint.core.errors import PausepointError
from pausepoint.core.gate import Decision, ThresholdGate
from pausepoint.core.ports import Claims
from pausepoint.engine.harness import MemoryWorld
from pausepoint.guards.core import Answer, Guard
from pausepoint.guards.langgraph import FRAMEWORK as GUARD_FRAMEWORK
from pausepoint.guards.langgraph import effect as guard_effect
from pausepoint.guards.langgraph import thread_of
from pausepoint_conformance.peers.base import (
    NO_EXPIRY,
    TOKEN_SEPARATOR,
    Framework,
    StoredPeerAdapter,
    as_result,
    attempt,
    resume_in_two_steps,
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

T = TypeVar("T")

ANY_OBJECT: Final = dict[str, Any]
"""The ``response_schema`` of every interrupt: the protocol's interactions take any JSON
object as an answer."""

FRAMEWORK: Final = Framework(
    "LangGraph", frozenset({Group.MULTI_PAUSE, Group.CONCURRENCY}), persistence="framework")
"""What LangGraph documents: several interrupts at once (answered by id), a checkpointer it
writes itself, and graphs served by many workers (the Agent Server)."""


def _merge(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    return {**old, **new}


class RunState(TypedDict, total=False):
    """A scripted run's graph state: each question's answer by node, and a gate's denial."""

    answers: Annotated[dict[str, Any], _merge]
    denied: str


class _Node(Protocol):
    """A node function of a run's graph."""

    def __call__(self, state: RunState) -> dict[str, Any]: ...


class CheckpointWriteFailed(Exception):
    """The checkpointer's write of an interrupt failed (``checkpoint_write: "fail"``)."""


class _FailingWrites(BaseCheckpointSaver[str]):
    """A checkpointer whose write of an interrupt raised by one of the ``failing`` (thread,
    node) pairs fails, as a full disk or a lost database connection would make it."""

    failing: set[tuple[str, str]]

    def put_writes(self, config: RunnableConfig, writes: Sequence[tuple[str, Any]],
                   task_id: str, task_path: str = "") -> None:
        thread = str(config.get("configurable", {}).get("thread_id", ""))
        node = task_path.rpartition(", ")[2]  # "~__pregel_pull, <node>"
        if (thread, node) in self.failing and any(
                isinstance(v, Sequence) and any(isinstance(i, Interrupt) for i in v)
                for _, v in writes):
            raise CheckpointWriteFailed(f"the write of {node}'s interrupt failed")
        super().put_writes(config, writes, task_id, task_path)


class _MemorySaver(_FailingWrites, InMemorySaver):
    pass


class _SqliteSaver(_FailingWrites, SqliteSaver):
    pass


@attrs.frozen
class _Question:
    """What an interrupting node asks: the interaction name and a tool pause's call id."""

    name: str
    tool_call_id: str = ""


@attrs.define
class _Run:
    """A started run: its graph (the user's code, redeployed after a restart), what each
    interrupting node asks, and whether the graph has a checkpointer."""

    run_id: str
    graph: StateGraph[RunState, None, RunState, RunState]
    questions: dict[str, _Question]
    checkpointed: bool

    @property
    def config(self) -> RunnableConfig:
        return {"configurable": {"thread_id": self.run_id}}


App = CompiledStateGraph[RunState, None, RunState, RunState]


Pending = tuple[tuple[str, str, Any], ...]
"""The interrupts pending in a thread's state: (node, interrupt id, value)."""


@attrs.frozen
class _Resolved:
    """A resume resolved against the thread's state: what it will send, through which handle
    (a compiled graph, or nothing for a server), from which checkpoint, and the interrupts
    pending there."""

    run: _Run
    handle: Any
    interrupt_id: str
    checkpoint: Any
    command: Command[Any]
    pending: Pending


def _refusal(exc: Exception) -> Refused | None:
    """LangGraph's rejection of an answer by the interrupt's ``response_schema`` is its one
    refusal."""
    if is_invalid_resume(exc):
        return Refused(code=ErrorCode.RESPONSE_INVALID.value,
                       message=f"LangGraph's response_schema rejected the answer: "
                               f"{str(exc).splitlines()[0]}",
                       clause="resume.response.schema")
    return None


def _attempt(fn: Callable[[], T]) -> T | Refused | Errored:
    return attempt(fn, _refusal)


class LangGraphAdapter(StoredPeerAdapter):
    """The protocol's scripted runs as LangGraph graphs; ``store`` is ``memory``
    (``InMemorySaver``) or ``sqlite`` (``SqliteSaver`` on a file in a private temporary
    directory made under ``scratch`` or the system's temporary directory, emptied of its
    threads at each reset and removed by :meth:`close`)."""

    framework = FRAMEWORK
    scratch_prefix = "pausepoint-langgraph-"
    cancel_reason = ("LangGraph cannot cancel a paused thread (a thread is never resumed, or "
                     "deleted with its checkpoints)")
    clock_reason = "LangGraph interrupts have no clock: they never expire"
    reconcile_reason = "LangGraph has no effect journal, so no outcome is ever unknown to it"

    def __init__(self, store: str = "memory", *, scratch: str | None = None,
                 resume_form: Literal["id", "bare"] = "id") -> None:
        super().__init__(store, scratch=scratch)
        self.resume_form = resume_form
        self._path = os.path.join(self._dir, "threads.sqlite")
        self._conn: sqlite3.Connection | None = None
        self._failing: set[tuple[str, str]] = set()
        self._saver: _FailingWrites = self._open_saver()
        self._runs: dict[str, _Run] = {}
        self._apps: dict[str, App] = {}

    # -- the checkpointer --------------------------------------------------------------------

    def _open_saver(self) -> _FailingWrites:
        saver: _FailingWrites
        if self.store == "memory":
            saver = _MemorySaver()
        else:
            self._conn = sqlite3.connect(self._path, check_same_thread=False)
            saver = _SqliteSaver(self._conn)
        saver.failing = self._failing
        return saver

    def _close_store(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            conn.close()

    # -- a script as a graph -----------------------------------------------------------------

    def _effect_node(self, run_id: str, key: str) -> _Node:
        def effect(state: RunState) -> dict[str, Any]:
            self._world.apply(run_id, key)
            return {}
        return effect

    def _ask_node(self, run_id: str, node: str, payload: JsonValue,
                  handlers: Handlers | None) -> _Node:
        catch_all = handlers.catch_all if handlers else None
        cleanup = handlers.cleanup if handlers else None

        def ask(state: RunState) -> dict[str, Any]:
            try:
                answer = self._interrupt(run_id, node, payload)
            except Exception:  # the user's catch-all around the pause point
                if catch_all is None:
                    raise
                self._world.apply(run_id, catch_all)
                return {}
            finally:
                if cleanup is not None:
                    self._world.apply(run_id, cleanup)
            return {"answers": {node: answer}}
        return ask

    def _interrupt(self, run_id: str, node: str, payload: JsonValue) -> Any:
        """A question node's pause point: LangGraph's ``interrupt``."""
        return interrupt(payload, response_schema=ANY_OBJECT)

    @staticmethod
    def _gate_node(node: str, step: GateStep) -> _Node:
        def gate(state: RunState) -> dict[str, Any]:
            verdict = ThresholdGate(step.allow_up_to, step.deny_over)(
                "gate", {"amount": step.amount})
            if verdict.decision == Decision.DENY:
                return {"denied": verdict.reason}
            if verdict.decision == Decision.ASK:
                answer = interrupt({"amount": step.amount, "reason": verdict.reason},
                                   response_schema=ANY_OBJECT)
                return {"answers": {node: answer}}
            return {}
        return gate

    def _define(self, run_id: str, script: Sequence[Step]) -> _Run:
        """The run's graph: one node per step (a node per name for several questions at
        once), chained; a gate's denial routes to the end."""
        graph = StateGraph(RunState)
        questions: dict[str, _Question] = {}
        failing: set[tuple[str, str]] = set()
        checkpointed = True
        layers: list[tuple[list[str], bool]] = []  # each step's nodes; is it a gate
        for i, step in enumerate(script):
            node = f"step{i}"
            if isinstance(step, EndStep):
                break
            if isinstance(step, EffectStep):
                graph.add_node(node, self._effect_node(run_id, step.key))
                layers.append(([node], False))
            elif isinstance(step, GateStep):
                graph.add_node(node, self._gate_node(node, step))
                questions[node] = _Question("approve")
                layers.append(([node], True))
            else:
                assert isinstance(step, InterruptStep)
                checkpointed = checkpointed and step.checkpoint != "none"
                nodes = []
                for j, name in enumerate(step.all_names()):
                    branch = f"{node}_{j}"
                    graph.add_node(branch, self._ask_node(run_id, branch, step.payload,
                                                          step.handlers))
                    questions[branch] = _Question(name, step.tool_call_id or "")
                    if step.checkpoint_write == "fail":
                        failing.add((run_id, branch))
                    nodes.append(branch)
                layers.append((nodes, False))
        previous, after_gate = [START], False
        for nodes, is_gate in [*layers, ([END], False)]:
            if after_gate:
                targets = list(nodes)
                graph.add_conditional_edges(
                    previous[0], lambda s, t=targets: END if "denied" in s else t)
            else:
                for n in nodes:
                    graph.add_edge(previous[0] if len(previous) == 1 else previous, n)
            previous, after_gate = nodes, is_gate
        self._failing.update(failing)
        return _Run(run_id=run_id, graph=graph, questions=questions, checkpointed=checkpointed)

    def _app(self, run: _Run, fresh: bool = False) -> App:
        """The run's compiled graph (``fresh``: another app instance on the same
        checkpointer, as another server would have)."""
        if fresh or run.run_id not in self._apps:
            app = run.graph.compile(checkpointer=self._saver if run.checkpointed else None)
            if fresh:
                return app
            self._apps[run.run_id] = app
        return self._apps[run.run_id]

    # -- invoking and reporting --------------------------------------------------------------

    @staticmethod
    def _invoke(app: App, value: Any, config: RunnableConfig) -> tuple[list[dict[str, Any]],
                                                                       bool]:
        """Run one invocation: the tasks it finished (stream mode ``tasks``) and whether it
        failed on a checkpoint write."""
        finished: list[dict[str, Any]] = []
        try:
            for event in app.stream(value, config, stream_mode="tasks"):
                if isinstance(event, dict) and "interrupts" in event:
                    finished.append(event)
        except CheckpointWriteFailed:
            return finished, True
        return finished, False

    def _publish(self, run: _Run, node: str, interrupt_id: str,
                 payload: Any) -> PublishedPause:
        q = run.questions[node]
        return PublishedPause(
            interrupt_id=interrupt_id, run_id=run.run_id, name=q.name, kind=PauseKind.ASK,
            payload=payload, token=f"{run.run_id}{TOKEN_SEPARATOR}{interrupt_id}",
            resumable=run.checkpointed, expires_at=NO_EXPIRY, tool_call_id=q.tool_call_id)

    # -- the thread, read and driven (a server adapter overrides these four) ------------------

    def _read(self, run: _Run, fresh: bool = False) -> tuple[Any, Any, Pending]:
        """The thread's state: the handle to drive it with (its compiled graph), the
        checkpoint read, and the interrupts pending there."""
        app = self._app(run, fresh)
        snap = app.get_state(run.config)
        return app, snap.config, tuple((t.name, i.id, i.value) for t in snap.tasks
                                       for i in t.interrupts)

    def _send(self, run: _Run, handle: Any, value: Any,
              checkpoint: Any = None) -> tuple[list[dict[str, Any]], bool]:
        """One invocation with ``value`` (from ``checkpoint``, else the thread's latest): the
        tasks it finished and whether it failed on a checkpoint write."""
        return self._invoke(handle, value, checkpoint or run.config)

    def _ever(self, run: _Run) -> set[str]:
        """The ids of every interrupt the thread's history holds."""
        return {i.id for snap in self._app(run).get_state_history(run.config)
                for t in snap.tasks for i in t.interrupts}

    def _stopped_between_nodes(self, run: _Run) -> bool:
        snap = self._app(run).get_state(run.config)
        return bool(snap.next) and not snap.interrupts

    def _live(self, run: _Run) -> list[PublishedPause]:
        """The run's pending interrupts, read from its checkpointed state."""
        if not run.checkpointed:
            return []
        return [self._publish(run, node, iid, value) for node, iid, value in self._read(run)[2]]

    def _report(self, run: _Run, finished: list[dict[str, Any]], failed: bool,
                ran: bool = True) -> RunReport:
        if run.checkpointed:
            pauses = self._live(run)
        else:  # no checkpointer, no state: what the invocation itself returned
            pauses = [self._publish(run, e["name"], i["id"], i["value"]) for e in finished
                      for i in e["interrupts"]]
        status = RunStatus.ERROR if failed else RunStatus.PAUSED if pauses else RunStatus.DONE
        return RunReport(run_id=run.run_id, status=status,
                         events=[status.value] if ran else [], pauses=pauses)

    # -- the operations ----------------------------------------------------------------------

    def hello(self, args: HelloArgs) -> Result[HelloData]:
        saver = "InMemorySaver" if self.store == "memory" else "SqliteSaver"
        return peer_hello(
            name=f"langgraph ({saver})", distribution="langgraph",
            homepage="https://github.com/langchain-ai/langgraph",
            groups=self.claimed(),
            notes=f"plain LangGraph: StateGraph, interrupt, Command(resume=...), {saver}; "
                  "token = thread id:interrupt id; no expiry")

    def reset(self, args: ResetArgs) -> Result[Empty]:
        def go() -> Empty:
            if self.store == "memory":
                self._saver = self._open_saver()
            else:  # one file for the adapter, emptied at each reset
                for run_id in self._runs:
                    self._saver.delete_thread(run_id)
            self._failing.clear()
            self._world = MemoryWorld()
            self._runs, self._apps = {}, {}
            return Empty()
        return as_result(_attempt(go))

    def start(self, args: StartArgs) -> Result[RunReport]:
        skipped = self.skipped(args.script)
        if skipped is not None:
            return skipped
        run = self._define(args.run_id, args.script)

        def go() -> RunReport:
            self._runs[run.run_id] = run
            self._apps.pop(run.run_id, None)
            finished, failed = self._send(run, self._app(run), {})
            return self._report(run, finished, failed)
        return as_result(_attempt(go))

    def _resolve(self, args: ResumeArgs, fresh: bool = False) -> _Resolved | Refused:
        """Read the state of the thread the token names and choose the command."""
        thread, _, interrupt_id = args.token.rpartition(TOKEN_SEPARATOR)
        run = self._runs.get(thread)
        if run is None:
            return Refused(code=ErrorCode.PAUSE_UNKNOWN.value,
                           message=f"no thread {thread!r}")
        handle, checkpoint, pending = self._read(run, fresh)
        keyed = self.resume_form == "id" or len(pending) > 1
        command: Command[Any] = Command(resume={interrupt_id: args.response} if keyed
                                        else args.response)
        return _Resolved(run=run, handle=handle, interrupt_id=interrupt_id,
                         checkpoint=checkpoint, command=command, pending=pending)

    def _answer(self, r: _Resolved) -> ResumeData:
        """Send the command from the checkpoint it was resolved against.  It answered the
        pending interrupts whose node finished, and it is a replay when no node finished."""
        finished, failed = self._send(r.run, r.handle, r.command, r.checkpoint)
        done = {e["name"] for e in finished if not e["interrupts"] and e.get("error") is None}
        answered = [iid for node, iid, _ in r.pending if node in done]
        replayed = not done and not failed
        return ResumeData(
            replayed=replayed,
            interrupt_id=r.interrupt_id if r.interrupt_id in answered or not answered
            else answered[0],
            run=self._report(r.run, finished, failed, ran=not replayed))

    def _resume(self, args: ResumeArgs, fresh: bool = False,
                together: Callable[[], None] | None = None) -> ResumeResult:
        return resume_in_two_steps(lambda: self._resolve(args, fresh), self._answer, together,
                                   resolve_refusal=self._refuse, answer_refusal=self._refuse)

    def _refuse(self, exc: Exception) -> Refused | None:
        """What the framework's exceptions refuse (the rest are errors)."""
        return _refusal(exc)

    def crash_restart(self, args: CrashRestartArgs) -> Result[RestartData]:
        """The process dies: a new checkpointer on the same file (``sqlite``; an empty one for
        ``memory``) and the graphs compiled anew; a thread stopped between nodes is
        continued with ``invoke(None)``."""
        def go() -> RestartData:
            self._close_store()
            self._saver, self._apps = self._open_saver(), {}
            reports = []
            for run in self._runs.values():
                if not run.checkpointed:
                    continue
                if self._stopped_between_nodes(run):
                    finished, failed = self._send(run, self._app(run), None)
                    reports.append(self._report(run, finished, failed))
            return RestartData(runs=reports,
                               pauses=[p for run in self._runs.values()
                                       for p in self._live(run)])
        return as_result(_attempt(go))

    def pause_state(self, args: PauseStateArgs) -> Result[PhaseData]:
        """``resumable`` while some thread has the interrupt pending, ``consumed`` once only
        its history has it."""
        def go() -> PhaseData | Refused:
            iid = args.interrupt_id
            for run in self._runs.values():
                if not run.checkpointed:
                    continue
                if any(i == iid for _, i, _ in self._read(run)[2]):
                    return PhaseData(phase="resumable")
                if iid in self._ever(run):
                    return PhaseData(phase="consumed")
            return Refused(code=ErrorCode.PAUSE_UNKNOWN.value,
                           message=f"no thread has an interrupt {iid!r}")
        return as_result(_attempt(go))


def make() -> LangGraphAdapter:
    """LangGraph with an ``InMemorySaver``."""
    return LangGraphAdapter("memory")


def make_sqlite() -> LangGraphAdapter:
    """LangGraph with a ``SqliteSaver`` (claims durability)."""
    return LangGraphAdapter("sqlite")


def make_sqlite_bare() -> LangGraphAdapter:
    """:func:`make_sqlite` resuming with the bare value, ``Command(resume=response)``, while
    one interrupt is pending (the other form LangGraph documents)."""
    return LangGraphAdapter("sqlite", resume_form="bare")


# -- with pausepoint: the same adapter with the LangGraph guard switched on --------------------


class GuardedLangGraphAdapter(GuardedPeer, LangGraphAdapter):
    """:class:`LangGraphAdapter` with :mod:`pausepoint.guards.langgraph` switched on -- the
    matrix's "with pausepoint" column.  The graphs, the checkpointer and the resume command
    are the same; in front of them the guard (:class:`~.guarded.GuardedPeer`) checks every
    question where the node asks it, registers every pending interrupt (published with its
    ledger id and signed token), decides every answer (one winner; only it sends
    ``Command(resume={interrupt id: answer})``; a replay returns the first outcome; a
    different answer is a conflict) and journals each effect node's effect
    (:func:`pausepoint.guards.langgraph.effect`).  A race gives every server a guard of its
    own on the shared store (``guard_store``: the adapter's kind, or ``postgres``)."""

    guard_framework = GUARD_FRAMEWORK

    def __init__(self, store: str = "memory", *, scratch: str | None = None,
                 resume_form: Literal["id", "bare"] = "id",
                 guard_store: str | None = None) -> None:
        super().__init__(store, scratch=scratch, resume_form=resume_form,
                         guard_store=guard_store)
        self._refusals: dict[str, PausepointError] = {}

    def hello(self, args: HelloArgs) -> Result[HelloData]:
        saver = "InMemorySaver" if self.store == "memory" else "SqliteSaver"
        return peer_hello(
            name=f"langgraph + pausepoint guard ({saver})", distribution="langgraph",
            homepage="https://github.com/langchain-ai/langgraph", groups=self.claimed(),
            notes=f"LangGraph {saver} behind pausepoint.guards.langgraph: ledger, signed "
                  "tokens, one winner, replay, journalled effects")

    def _interrupt(self, run_id: str, node: str, payload: JsonValue) -> Any:
        """The guard checks the pause where the node asks (``Guard.check``, inside the user's
        code around the pause point): refused before LangGraph raises and checkpoints it."""
        run = self._runs[run_id]
        q = run.questions[node]
        session, scope = self._bindings.get(run_id, ("", ""))
        self._box.guard.check(thread_id=run_id, name=q.name, payload=payload,
                              tool_call_id=q.tool_call_id, session_id=session, scope=scope,
                              checkpointed=run.checkpointed)
        return super()._interrupt(run_id, node, payload)

    def _invoke(self, app: App, value: Any,  # type: ignore[override]
                config: RunnableConfig) -> tuple[list[dict[str, Any]], bool]:
        """The plain invocation; a pause the guard refused stops it (kept for the report)."""
        try:
            return LangGraphAdapter._invoke(app, value, config)
        except PausepointError as exc:
            self._refusals[thread_of(config)] = exc
            return [], True

    def _effect_node(self, run_id: str, key: str) -> _Node:
        def effect(state: RunState) -> dict[str, Any]:
            node = str(get_config().get("metadata", {}).get("langgraph_node", ""))
            guard_effect(self._box.guard, f"{node}:{key}",
                         lambda: self._world.apply(run_id, key))
            return {}
        return effect

    def _publish(self, run: _Run, node: str, interrupt_id: str,
                 payload: Any) -> PublishedPause:
        q = run.questions[node]
        return self._guarded_pause(run.run_id, interrupt_id, q.name, payload, q.tool_call_id)

    def _report(self, run: _Run, finished: list[dict[str, Any]], failed: bool,
                ran: bool = True) -> RunReport:
        """The plain report, or -- when the guard refused to take a pause (unregistered, its
        payload off its schema, a tool pause without its call id) -- the refusal."""
        try:
            refused = self._refusals.pop(run.run_id, None)
            if refused is not None:
                raise refused
            return super()._report(run, finished, failed, ran)
        except PausepointError as exc:
            return self._refused_report(run.run_id, exc, ran)

    def _resume(self, args: ResumeArgs, fresh: bool = False,
                together: Callable[[], None] | None = None) -> ResumeResult:
        def resolve(guard: Guard, claims: Claims) -> tuple[_Run, App, str] | Refused:
            run = self._runs.get(claims.thread_id)
            if run is None:
                return Refused(code=ErrorCode.PAUSE_UNKNOWN.value,
                               message=f"no thread {claims.thread_id!r}")
            return run, self._app(run, fresh), claims.interrupt_id

        def answer(guard: Guard, r: tuple[_Run, App, str]) -> ResumeData:
            run, app, ledger_id = r
            box: dict[str, Any] = {}

            def call(a: Answer) -> bool:
                box["finished"], box["failed"] = self._invoke(
                    app, Command(resume={a.interrupt_id: a.data}), run.config)
                return bool(box["failed"])
            out = guard.resume(args.token, args.response, call, session_id=args.session_id,
                               scope=args.scope, responder=args.responder, run_id=args.run_id,
                               outcome=lambda failed: {"failed": failed})
            report = (self._report(run, [], False, ran=False) if out.replayed
                      else self._report(run, box["finished"], box["failed"]))
            return ResumeData(replayed=out.replayed, interrupt_id=ledger_id, run=report)
        return self._guarded_resume(args, fresh, together, resolve, answer, _refusal)


def make_guarded() -> GuardedLangGraphAdapter:
    """:func:`make` with the pausepoint guard switched on."""
    return GuardedLangGraphAdapter("memory")


def make_sqlite_guarded() -> GuardedLangGraphAdapter:
    """:func:`make_sqlite` with the pausepoint guard switched on (its ledger in a SQLite
    file beside the checkpointer's)."""
    return GuardedLangGraphAdapter("sqlite")


def make_postgres_guarded() -> GuardedLangGraphAdapter:
    """:func:`make_sqlite` with the guard's ledger on PostgreSQL (``$PAUSEPOINT_PG_DSN``, a
    schema of its own): racing servers share it through connections of their own."""
    return GuardedLangGraphAdapter("sqlite", guard_store="postgres")
