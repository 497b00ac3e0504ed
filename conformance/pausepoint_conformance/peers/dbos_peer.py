"""DBOS behind the adapter port: the protocol's scripted runs realised as DBOS durable workflows
on a SQLite system database -- ``@DBOS.workflow()`` the run, ``@DBOS.step()`` every effect, the
pause ``DBOS.recv(topic, timeout_seconds)`` with ``DBOS.set_event`` publishing what the run
waits for, the answer ``DBOS.send(workflow_id, message, topic)``, a restart ``DBOS.launch()``
recovering every pending workflow by its id -- the way DBOS's human-in-the-loop guide builds
it, with no pausepoint machinery (no ledger, no signed token, no expiry, no effect journal of
pausepoint's).  What the suite reports is what DBOS itself guarantees
(``docs/peers/dbos.md``)::

    pausepoint conform --adapter pausepoint_conformance.peers.dbos_peer:make

Everything runs offline: the system database is a SQLite file in the adapter's private
temporary directory; no model is involved (the steps of a scripted run are workflow code).

**A script is a workflow** (:func:`scripted_run`, registered once at import, as DBOS wants):
an ``effect`` is a ``@DBOS.step()`` applying its key to the world; a ``gate`` asks its policy
(:class:`pausepoint.core.gate.ThresholdGate`: a denial ends the run, an ask is a question
``approve``); an ``interrupt`` asks its questions (``names``: several at once, answered in
any order) -- the workflow checkpoints its wait (``DBOS.recv("step<i>", timeout_seconds=0)``:
an answer may be there already), publishes where it stands with ``DBOS.set_event("stand",
...)`` (the questions pending; DBOS's agent-inbox pattern) and waits with
``DBOS.recv("step<i>", timeout_seconds=...)``, one topic per script step.  A message names
the question it answers; one for a question not pending (a repeat) is dropped.  The answer
is recorded with ``DBOS.set_event("answer:<question>", ...)``.  ``handlers`` are a ``try /
except Exception / finally`` around the wait.  ``checkpoint: "none"`` runs the same code as a
plain function, not a workflow -- DBOS then refuses the pause itself (``set_event()`` /
``recv()`` must be called from within a workflow: refused ``checkpoint_missing``).
``checkpoint_write: "fail"`` makes the system database's write of that wait's durable timeout
(its checkpoint) fail, as a full disk would: the workflow ends in error before it shows the
question.  A ``start`` naming a parent run is skipped: a DBOS child workflow is started by
its parent's code, not by a caller.  Effect faults are skipped by the scoring rule.

**Adapter-supplied machinery** (disclosed on the page): ``recv`` waits in slices of
:data:`SLICE` seconds (a ``None`` at a slice's end and the workflow waits again) so that the
threads an in-process crash or a cancel leaves behind end within a slice; DBOS's internal
queue (which runs recovered workflows) and notification listener poll every 10 ms instead
of every second (speed only).

**A published pause** is a question the ``stand`` event lists: its ``interrupt_id`` and
``token`` ``"<run id>:step<i>-<j>"``, what an integration puts behind a button; its name and
payload the script's; ``resumable`` (DBOS checkpointed the wait before publishing it);
``expires_at`` :data:`~.base.NO_EXPIRY`.

**A resume** reads the workflow's status (not found: refused ``pause_unknown``; cancelled:
``pause_cancelled``) and its ``stand`` (the question not pending: ``pause_unknown``), sends
``{"question": ..., "response": ...}`` on the step's topic with ``DBOS.send`` and waits until
the workflow stands again (next pause or end).  Session, scope and responder are not looked
at.  Nothing is a replay.  ``cancel`` is ``DBOS.cancel_workflow(id, cancel_children=True)``.

**Claimed groups** -- the scoring rule's (:data:`FRAMEWORK`): ``core``, ``multi-pause``
(messages queue per topic), ``concurrency`` (many executors and clients on one system
database), ``cancel`` (``cancel_workflow``), and ``durability`` (the system database is a
file; ``launch`` recovers pending workflows).  Not claimed: ``tokens``, ``expiry`` (``recv``'s
timeout is a wall-clock deadline the suite's clock cannot move), ``lineage``, ``replay``,
``unknown-outcome``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Final

import attrs
import sqlalchemy as sa
from dbos import DBOS, DBOSConfig, SetWorkflowID
from pydantic import TypeAdapter

from pausepoint.core.clauses import ErrorCode, Group
from pausepoint.core.gate import Decision, ThresholdGate
from pausepoint.engine.harness import MemoryWorld
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
from pausepoint_conformance.protocol.wire import (
    CancelArgs,
    CancelData,
    CrashRestartArgs,
    EffectStep,
    Empty,
    EndStep,
    GateStep,
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
    Skipped,
    StartArgs,
    Step,
)

SLICE: Final[float] = 1.0
"""Seconds each ``recv`` waits before the workflow waits again."""

POLL: Final[float] = 0.01
"""Seconds between DBOS's polls of its SQLite system database (its default is 1)."""

STATUS_EVERY: Final[float] = 0.1
"""Seconds between looks at the status of a workflow that does not stand yet (it may have
ended without standing: an error, a cancel)."""

SETTLE_TIMEOUT: Final[float] = 60.0
"""Seconds a workflow may take to stand (pause or end) before the operation errors."""

STAND: Final[str] = "stand"
"""The event a workflow publishes where it stands: ``{"seq", "pending", "done"}``."""

ANSWER: Final[str] = "answer:"
"""How the event recording a question's answer is named."""

FRAMEWORK: Final = Framework(
    "DBOS", frozenset({Group.MULTI_PAUSE, Group.CONCURRENCY, Group.CANCEL}),
    persistence="framework")
"""What DBOS documents: messages queued per topic (several waits answered in any order), many
executors and clients on one system database, ``cancel_workflow``; DBOS checkpoints every
workflow step itself."""

LIVE: Final = frozenset({"PENDING", "ENQUEUED"})
"""The statuses of a workflow that can still take an answer (a recovered one is enqueued)."""

_STEPS: Final = TypeAdapter(list[Step])
_WORLDS: dict[str, MemoryWorld] = {}
"""The outside world of each live adapter (the workflows' effects land there)."""


class PauseWriteFailed(Exception):
    """The system database's write of a wait's durable timeout failed."""


# -- the user's code: one workflow plays a script ----------------------------------------------


@DBOS.step()
def _apply(world: str, run_id: str, key: str) -> None:
    _WORLDS[world].apply(run_id, key)


def question_id(index: int, branch: int) -> str:
    return f"step{index}-{branch}"


def _play(world: str, run_id: str, script: list[Any]) -> str:
    """A scripted run: what :func:`scripted_run` does as a workflow."""
    steps = _STEPS.validate_python(script)
    seq = 0

    def stand(pending: list[str], done: bool = False) -> None:
        nonlocal seq
        seq += 1
        stood = {"seq": seq, "pending": pending, "done": done}
        DBOS.set_event(STAND, stood)
        DBOS.set_event(f"{STAND}:{seq}", stood)

    for i, s in enumerate(steps):
        if isinstance(s, EndStep):
            break
        if isinstance(s, EffectStep):
            _apply(world, run_id, s.key)
            continue
        if isinstance(s, GateStep):
            verdict = ThresholdGate(s.allow_up_to, s.deny_over)("gate", {"amount": s.amount})
            if verdict.decision == Decision.DENY:
                break
            if verdict.decision == Decision.ALLOW:
                continue
            width, handlers = 1, None
        else:
            assert isinstance(s, InterruptStep)
            width, handlers = len(s.all_names()), s.handlers
        pending = [question_id(i, j) for j in range(width)]
        try:
            while pending:
                # the wait is checkpointed (an answer may be there already) before it is shown
                msg = DBOS.recv(f"step{i}", timeout_seconds=0)
                shown = False
                while not (isinstance(msg, dict) and msg.get("question") in pending):
                    if not shown:
                        stand(list(pending))
                        shown = True
                    msg = DBOS.recv(f"step{i}", timeout_seconds=SLICE)
                pending.remove(msg["question"])
                DBOS.set_event(f"{ANSWER}{msg['question']}", msg.get("response"))
        except Exception:  # the user's catch-all around the pause point
            if handlers is None or handlers.catch_all is None:
                raise
            _apply(world, run_id, handlers.catch_all)
        finally:
            if handlers is not None and handlers.cleanup is not None:
                _apply(world, run_id, handlers.cleanup)
    stand([], done=True)
    return "done"


scripted_run = DBOS.workflow(name="pausepoint_scripted_run")(_play)


# -- the integration around it -----------------------------------------------------------------


@attrs.frozen
class _Question:
    name: str
    payload: Any
    tool_call_id: str = ""


@attrs.frozen
class _Plan:
    """A started run: its workflow id, its script, what each question asks."""

    run_id: str
    workflow_id: str
    script: tuple[Step, ...]
    questions: dict[str, _Question]
    durable: bool
    failing: frozenset[str]

    def token(self, question: str) -> str:
        return f"{self.run_id}{TOKEN_SEPARATOR}{question}"


def _plan(run_id: str, workflow_id: str, script: Sequence[Step]) -> _Plan:
    questions: dict[str, _Question] = {}
    failing: set[str] = set()
    durable = True
    kept: list[Step] = []
    for i, s in enumerate(script):
        kept.append(s)
        if isinstance(s, EndStep):
            break
        if isinstance(s, GateStep):
            questions[question_id(i, 0)] = _Question("approve", {"amount": s.amount})
        elif isinstance(s, InterruptStep):
            durable = durable and s.checkpoint != "none"
            if s.checkpoint_write == "fail":
                failing.add(f"step{i}")
            for j, name in enumerate(s.all_names()):
                questions[question_id(i, j)] = _Question(name, s.payload, s.tool_call_id or "")
    return _Plan(run_id, workflow_id, tuple(kept), questions, durable, frozenset(failing))


class _FailingWaits:
    """Fails the system database's write of the durable timeout of a wait on one of the
    ``failing`` (workflow id, topic) pairs: DBOS's ``recv`` reads the topic's messages, then
    checkpoints its timeout, on one thread -- the write after a read of a failing pair fails."""

    def __init__(self, engine: sa.Engine) -> None:
        self.failing: set[tuple[str, str]] = set()
        self._last = threading.local()
        sa.event.listen(engine, "before_cursor_execute", self._check)

    def _check(self, conn: Any, cursor: Any, statement: str, params: Any, context: Any,
               executemany: bool) -> None:
        values = [str(v) for v in (params.values() if isinstance(params, dict)
                                   else params or ())]
        if "notifications" in statement and statement.lstrip().upper().startswith("SELECT"):
            self._last.read = set(values)
        elif ("operation_outputs" in statement and "DBOS.sleep" in values
              and any(w in values and t in getattr(self._last, "read", ())
                      for w, t in self.failing)):
            raise PauseWriteFailed("the system database's write of the wait failed")


_INSTANCE: list[DBOSAdapter] = []


class DBOSAdapter(StoredPeerAdapter):
    """The protocol's scripted runs as DBOS workflows on a SQLite system database in a private
    temporary directory.  DBOS is a process-wide singleton: one adapter at a time."""

    framework = FRAMEWORK
    scratch_prefix = "pausepoint-dbos-"
    clock_reason = ("DBOS's recv timeout is a wall-clock deadline kept in its system database: "
                    "the suite's clock cannot move it")
    reconcile_reason = ("DBOS records a step's output once it returns; an effect a crash "
                        "interrupts is run again, never left unknown")
    cancel_reason = ""

    def __init__(self, store: str = "sqlite", *, scratch: str | None = None) -> None:
        if store != "sqlite":
            raise ValueError("DBOS keeps its workflows in its system database: store=sqlite")
        if _INSTANCE:
            raise RuntimeError("DBOS is a process-wide singleton: close the other adapter")
        super().__init__(store, scratch=scratch)
        _INSTANCE.append(self)
        self._key = f"w{id(self)}"
        _WORLDS[self._key] = self._world
        self._url = f"sqlite:///{self._dir}/dbos.sqlite"
        self._gen = 0
        self._plans: dict[str, _Plan] = {}
        self._failing: set[tuple[str, str]] = set()
        self._launch()

    def _launch(self) -> None:
        engine = sa.create_engine(self._url)
        self._faults = _FailingWaits(engine)
        self._faults.failing = self._failing
        config: DBOSConfig = {
            "name": "pausepoint-peer", "system_database_url": self._url,
            "system_database_engine": engine, "log_level": "CRITICAL",
            "notification_listener_polling_interval_sec": POLL,
            "application_version": "pausepoint-peer"}
        dbos = DBOS(config=config)
        dbos._registry.get_internal_queue()._polling_interval_sec = POLL
        DBOS.launch()

    def _close_store(self) -> None:
        self._cancel_all()
        DBOS.destroy()
        _WORLDS.pop(self._key, None)
        if self in _INSTANCE:
            _INSTANCE.remove(self)

    def _cancel_all(self) -> None:
        for plan in self._plans.values():
            status = DBOS.get_workflow_status(plan.workflow_id) if plan.durable else None
            if status is not None and status.status in LIVE:
                DBOS.cancel_workflow(plan.workflow_id)

    # -- where a run stands ----------------------------------------------------------------------

    @staticmethod
    def _stand(plan: _Plan) -> dict[str, Any] | None:
        got: dict[str, Any] | None = DBOS.get_event(plan.workflow_id, STAND, timeout_seconds=0)
        return got

    def _settled(self, plan: _Plan, after: int) -> tuple[RunStatus, list[str]]:
        """Wait until the workflow stands for the first time after its stand ``after`` (paused
        or done), or has ended without standing (error, cancelled)."""
        deadline = time.monotonic() + SETTLE_TIMEOUT
        while time.monotonic() < deadline:
            stand = DBOS.get_event(plan.workflow_id, f"{STAND}:{after + 1}",
                                   timeout_seconds=STATUS_EVERY)
            if stand is not None:
                return (RunStatus.DONE if stand["done"] else RunStatus.PAUSED,
                        list(stand["pending"]))
            status = DBOS.get_workflow_status(plan.workflow_id)
            if status is not None and status.status in ("ERROR", "CANCELLED",
                                                         "MAX_RECOVERY_ATTEMPTS_EXCEEDED"):
                return (RunStatus.CANCELLED if status.status == "CANCELLED"
                        else RunStatus.ERROR), []
        raise TimeoutError(f"workflow {plan.workflow_id} did not stand in time")

    def _publish(self, plan: _Plan, question: str) -> PublishedPause:
        q = plan.questions[question]
        return PublishedPause(
            interrupt_id=plan.token(question), run_id=plan.run_id, name=q.name,
            kind=PauseKind.ASK, payload=q.payload, token=plan.token(question),
            resumable=True, expires_at=NO_EXPIRY, tool_call_id=q.tool_call_id)

    def _report(self, plan: _Plan, status: RunStatus, pending: list[str]) -> RunReport:
        return RunReport(run_id=plan.run_id, status=status, events=[status.value],
                         pauses=[self._publish(plan, q) for q in pending])

    # -- the operations --------------------------------------------------------------------------

    def hello(self, args: HelloArgs) -> Result[HelloData]:
        return peer_hello(
            name="dbos (SQLite system database)", distribution="dbos",
            homepage="https://github.com/dbos-inc/dbos-transact-py", groups=self.claimed(),
            notes="plain DBOS: @DBOS.workflow/@DBOS.step, set_event + recv(topic, "
                  "timeout_seconds) as the pause, send(workflow id, message, topic) as the "
                  "answer, launch() recovery; token = run id:question; no expiry")

    def reset(self, args: ResetArgs) -> Result[Empty]:
        def go() -> Empty:
            self._cancel_all()
            self._gen += 1
            self._world = _WORLDS[self._key] = MemoryWorld()
            self._plans = {}
            self._failing.clear()
            return Empty()
        return as_result(attempt(go))

    def start(self, args: StartArgs) -> Result[RunReport]:
        skipped = self.skipped(args.script)
        if skipped is not None:
            return skipped
        if args.parent_run_id is not None:
            return Skipped(reason="a DBOS child workflow is started by its parent workflow's "
                                  "code, not by a caller naming a parent")
        known = self._plans.get(args.run_id)
        plan = known or _plan(args.run_id, f"g{self._gen}-{args.run_id}", args.script)
        script = [s.model_dump(mode="json") for s in plan.script]

        def go() -> RunReport | Refused:
            self._plans[plan.run_id] = plan
            if not plan.durable:  # the same code, not as a workflow
                try:
                    _play(self._key, plan.run_id, script)
                except Exception as exc:
                    if "must be called from within a workflow" in str(exc):
                        return Refused(code=ErrorCode.CHECKPOINT_MISSING.value,
                                       message=f"DBOS refused the pause: {exc}",
                                       clause="pause.checkpoint.bound")
                    raise
                return self._report(plan, RunStatus.DONE, [])
            self._failing.update((plan.workflow_id, t) for t in plan.failing)
            # a second start of the id: DBOS hands back the workflow already there
            with SetWorkflowID(plan.workflow_id):
                DBOS.start_workflow(scripted_run, self._key, plan.run_id, script)
            stand = self._stand(plan) if known is not None else None
            if stand is not None:  # where the workflow already there stands now
                return self._report(plan, RunStatus.DONE if stand["done"] else RunStatus.PAUSED,
                                    list(stand["pending"]))
            return self._report(plan, *self._settled(plan, 0))
        return as_result(attempt(go))

    def _resolve(self, args: ResumeArgs) -> tuple[_Plan, str, int] | Refused:
        run_id, _, question = args.token.rpartition(TOKEN_SEPARATOR)
        plan = self._plans.get(run_id)
        status = DBOS.get_workflow_status(plan.workflow_id) if plan and plan.durable else None
        if plan is None or status is None:
            return Refused(code=ErrorCode.PAUSE_UNKNOWN.value,
                           message=f"no workflow for a run {run_id!r}")
        if status.status == "CANCELLED":
            return Refused(code=ErrorCode.PAUSE_CANCELLED.value,
                           message=f"workflow {plan.workflow_id} was cancelled",
                           clause="cancel.distinct")
        stand = self._stand(plan)
        if stand is None or question not in stand["pending"] or status.status not in LIVE:
            return Refused(code=ErrorCode.PAUSE_UNKNOWN.value,
                           message=f"workflow {plan.workflow_id} ({status.status}) does not "
                                   f"wait on {question!r}")
        return plan, question, int(stand["seq"])

    def _answer(self, resolved: tuple[_Plan, str, int], response: Any) -> ResumeData:
        plan, question, seq = resolved
        topic = question.rpartition("-")[0]
        DBOS.send(plan.workflow_id, {"question": question, "response": response}, topic)
        return ResumeData(replayed=False, interrupt_id=plan.token(question),
                          run=self._report(plan, *self._settled(plan, seq)))

    def _resume(self, args: ResumeArgs, fresh: bool = False,
                together: Callable[[], None] | None = None) -> ResumeResult:
        return resume_in_two_steps(lambda: self._resolve(args),
                                   lambda r: self._answer(r, args.response), together)

    def cancel(self, args: CancelArgs) -> Result[CancelData]:
        def go() -> CancelData | Refused:
            plan = self._plans.get(args.run_id)
            if plan is None or not plan.durable:
                return Refused(code=ErrorCode.PAUSE_UNKNOWN.value,
                               message=f"no workflow for a run {args.run_id!r}")
            DBOS.cancel_workflow(plan.workflow_id, cancel_children=True)
            status = DBOS.get_workflow_status(plan.workflow_id)
            done = status is not None and status.status == "SUCCESS"
            state = RunStatus.DONE if done else RunStatus.CANCELLED
            return CancelData(run=RunReport(run_id=plan.run_id, status=state,
                                            events=[state.value]))
        return as_result(attempt(go))

    def crash_restart(self, args: CrashRestartArgs) -> Result[RestartData]:
        """The process dies: DBOS is destroyed and launched anew on the same system database,
        which recovers every pending workflow; the pauses are read from their events."""
        def go() -> RestartData:
            DBOS.destroy()
            self._launch()
            return RestartData(runs=[], pauses=list(self._live()))
        return as_result(attempt(go))

    def _live(self) -> Iterator[PublishedPause]:
        for plan in self._plans.values():
            stand = self._stand(plan) if plan.durable else None
            status = DBOS.get_workflow_status(plan.workflow_id) if stand else None
            if stand and status is not None and status.status in LIVE:
                yield from (self._publish(plan, q) for q in stand["pending"])

    def pause_state(self, args: PauseStateArgs) -> Result[PhaseData]:
        """``resumable`` while the workflow waits on the question, ``consumed`` once it has
        recorded an answer, ``cancelled`` when the workflow was cancelled waiting."""
        def go() -> PhaseData | Refused:
            run_id, _, question = args.interrupt_id.rpartition(TOKEN_SEPARATOR)
            plan = self._plans.get(run_id)
            if plan is None or not plan.durable or question not in plan.questions:
                return Refused(code=ErrorCode.PAUSE_UNKNOWN.value,
                               message=f"no workflow asks {args.interrupt_id!r}")
            if DBOS.get_event(plan.workflow_id, f"{ANSWER}{question}",
                              timeout_seconds=0) is not None:
                return PhaseData(phase="consumed")
            stand = self._stand(plan)
            status = DBOS.get_workflow_status(plan.workflow_id)
            if stand is not None and question in stand["pending"] and status is not None:
                if status.status == "CANCELLED":
                    return PhaseData(phase="cancelled")
                if status.status in LIVE:
                    return PhaseData(phase="resumable")
            return Refused(code=ErrorCode.PAUSE_UNKNOWN.value,
                           message=f"workflow {plan.workflow_id} does not wait on {question!r}")
        return as_result(attempt(go))


def make() -> DBOSAdapter:
    """DBOS on a SQLite system database (claims durability)."""
    return DBOSAdapter("sqlite")
