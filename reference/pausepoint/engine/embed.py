"""The embedding API: an agent written as a plain Python function, run by an :class:`Engine`
opened on any store.

An *agent* is a function ``agent(ctx, input) -> output``.  Inside it, ``ctx.ask(name, payload)``
stops the run to ask a person (a registered interaction) and returns the *validated* answer --
the instance of the interaction's response model, from a strict check -- once someone
answered; ``ctx.ask_all([(name, payload), ...])`` asks several questions at once (all taken or
none, each answered on its own, the run going on once every one is answered);
``ctx.effect(key, fn)`` runs a side effect at most once, journalled before and after,
and returns its result.

The engine executes an agent by *replay*: each time the run goes on (its start, a resume's
continuation, a restart's recovery) the function is called again from the top with the answers
and effect results recorded so far, so ``ask`` returns recorded answers and ``effect`` recorded
results until the run reaches new ground.  The function must therefore be deterministic given
its input, its answers and its effects' results (the rule of Temporal's workflows and of
LangGraph's nodes).

Asks and effects are numbered by *step*: by default each ask (or ``ask_all``) is the next step,
counted from 0; an agent may number them itself (``step=``), for instance by its own position in
a plan, as the scripted harness does with a script's step index.  A pause's interrupt id is
``{run_id}/{step}/{j}``, its checkpoint ``{run_id}@{step}``.

The run level is the reference's: the run table (:mod:`pausepoint.core.runs`), an owner with a
lease and an epoch for whoever drives a run, every run write conditional on the epoch, the
effect journal's start a conditional insert under it.  An effect whose process died inside it
is never retried: the run opens a recovery pause in ``unknown_outcome`` that an operator
reconciles (:meth:`Engine.reconcile`) before it is resumed.
"""

from __future__ import annotations

import functools
import operator
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final, NoReturn, TypeVar

import attrs

from pausepoint.core import lifecycle as lc
from pausepoint.core import runs
from pausepoint.core.canonical import built_json, canonical_json
from pausepoint.core.clauses import ErrorCode
from pausepoint.core.errors import PausepointError
from pausepoint.core.jsontext import loads, state_json
from pausepoint.core.ports import Clock, EffectStatus, PauseRecord, RunRecord, RunStatus, Signer
from pausepoint.core.registry import Interaction
from pausepoint.core.tokens import KeyRing
from pausepoint.core.values import record
from pausepoint.engine.clock import SystemClock
from pausepoint.engine.compose import Deployment, compose
from pausepoint.engine.owned import (
    Doubt,
    Lost,
    Ownership,
    fencing_refused,
    input_key,
    published,
)
from pausepoint.engine.run import (
    Emit,
    EventKind,
    InvocationCancelled,
    InvocationPaused,
    PauseBinding,
    PendingInterrupt,
    RunEvent,
    RunIdentity,
    Runner,
    current_run_binding,
)
from pausepoint.engine.service import ResumeRequest, RunView
from pausepoint.engine.tracing import NO_TRACE, TraceSink
from pausepoint.stores import open_store
from pausepoint.stores.base import StoreBundle, Units

# a run's continuation data is JSON text by state_json; not canonical JSON: it is stored and
# read back, never compared across languages or digested, and it may hold values that are not
# Unicode text (a payload the pause then refuses)

T = TypeVar("T")
Agent = Callable[["RunContext", Any], Any]
"""``agent(ctx, input) -> output``: a plain function; ``input`` and ``output`` are JSON."""


@record
class RunResult:
    """Where a run stands after an operation: its status, its output once ``done``, and the
    questions it waits on (each with the token to answer it).  ``events`` are the kinds of
    the run events of the invocation this operation made (``tool_call``, ``tool_result``, and
    how it stopped: ``paused``, ``done``, ``error``, ``cancelled``); ``replayed`` says a resume
    repeated an earlier answer (its result is the first one's), and ``interrupt_id`` names the
    pause a resume answered."""

    run_id: str
    status: RunStatus
    output: Any = None
    pauses: tuple[PendingInterrupt, ...] = ()
    events: tuple[str, ...] = ()
    replayed: bool = False
    interrupt_id: str = ""


class RunContext:
    """What an agent function sees of its run: ``ask``, ``ask_all`` and ``effect``."""

    def __init__(self, engine: Engine, run: RunRecord, state: dict[str, Any],
                 emit: Emit, validated: dict[str, tuple[Interaction, object]] | None = None
                 ) -> None:
        self._engine = engine
        self._run = run
        self._state = state
        self._emit = emit
        self._validated = validated
        self._next = 0
        self.run_id = run.run_id

    def passed(self, step: int) -> bool:
        """Whether an earlier drive of this run already went through pause point ``step``: a
        step before the one the run last paused at, or that step once every question of it
        was answered.  Replay calls the agent again from the top, so code around a pause
        point that must run once (a ``finally`` with an unjournalled side effect) asks this
        first."""
        last = int(self._state["step"])
        if step != last:
            return step < last
        prefix = f"{self.run_id}/{step}/"
        return any(i.startswith(prefix) for i in self._state["answers"])

    def ask(self, interaction: str, payload: Any, *, step: int | None = None,
            tool_call_id: str = "") -> Any:
        """Ask a person through the registered ``interaction``: the run pauses here, and once
        the question is answered, the run goes on with this call returning the answer,
        validated strictly against the interaction's response model.  ``step`` numbers this
        pause point (by default the step after the last one); ``tool_call_id`` is the tool call
        a tool interaction approves."""
        return self.ask_all([(interaction, payload)], step=step, tool_call_id=tool_call_id)[0]

    def ask_all(self, questions: Sequence[tuple[str, Any]], *, step: int | None = None,
                tool_call_id: str = "") -> list[Any]:
        """Ask several questions at once, each ``(interaction, payload)``: every one is checked
        before any is taken, so they are all asked or none is (a refusal raises
        :class:`~pausepoint.core.errors.PausepointError`); each is answered on its own, an
        answer disturbing none of the others, and the run goes on once every one is answered,
        this call returning their validated answers in order (multi.independent)."""
        if not questions:
            raise ValueError("ask_all needs at least one question")
        n = self._next if step is None else step
        self._next = n + 1
        answers: dict[str, Any] = self._state["answers"]
        # plain loops and all() of a map, not comprehensions or a generator: each of those is a
        # function of its own to run, on every ask's path.  Each question is unpacked first, so
        # a malformed one fails here, before anything is asked
        names: list[str] = []
        ids: list[str] = []
        for name, _payload in questions:
            ids.append(f"{self.run_id}/{n}/{len(names)}")
            names.append(name)
        if not all(map(answers.__contains__, ids)):
            self._engine._ask(self._run, self._state, n, questions, tool_call_id)
            raise AssertionError("unreachable: _ask raises")  # pragma: no cover
        svc = self._engine.deployment.service
        got: list[Any] = []
        for name, i in zip(names, ids, strict=True):
            # each recorded answer as the agent receives it: validated strictly against its
            # interaction's response model -- or, once, the instance the resume of this very
            # unit validated for that interaction (:attr:`_Seen.validated`), which is the same
            # value (a second ask of it validates again: a fresh instance, as before)
            registered, kept = svc.interaction(name), answers[i]
            if registered is not None:
                held = self._validated.pop(i, None) if self._validated else None
                kept = held[1] if held is not None and held[0] is registered \
                    else registered.validated_response(kept)
            got.append(kept)
        return got

    def effect(self, key: str, fn: Callable[[], T], *, step: int | None = None) -> T:
        """Run ``fn`` (a side effect) at most once for this run and ``key``; its result must be
        JSON.  Journalled started before it runs and finished after it returns: if the process
        dies inside it, the outcome is unknown and the run asks an operator to reconcile it
        (a recovery pause at ``step``, by default the next step) instead of running it
        again."""
        done: dict[str, Any] = self._state["effects"]
        if key in done:
            result: T = done[key]
            return result
        n = self._next if step is None else step
        self._run = self._engine._effect(self._run, self._state, key, fn, n, self._emit)
        out: T = done[key]
        return out


@record
class _Seen:
    """What a resume already read and wrote of its pause's step, handed to the continuation in
    the same unit instead of read again: the step's pauses (read once, after the answer was
    kept), the answers the resume kept itself (their JSON text, by interrupt id), the run
    with its continuation data as the unit read it (None: read it), and the answers the resume
    validated itself, ``{interrupt id: (interaction, instance)}``, for the drive's ask
    (:meth:`RunContext.ask_all`)."""

    pauses: Sequence[PauseRecord]
    kept: Mapping[str, str]
    run: RunRecord | None = None
    state: dict[str, Any] | None = None
    validated: Mapping[str, tuple[Interaction, object]] = attrs.field(factory=dict)


class _StoreFailed(BaseException):
    """A store failed while the run executed: no failure of the run (run.store-failure
    .recoverable)."""


class Engine:
    """Runs agent functions on a store: :meth:`start`, :meth:`resume`, :meth:`cancel`,
    :meth:`restart`, :meth:`reconcile`, :meth:`status`.  Several engines (processes, servers)
    may share one durable store; give each its own ``owner`` name.

    An agent's ordinary error ends its run in ``error`` and is raised to the caller -- or, with
    ``raise_errors=False``, reported in the result (its events end with ``error``).  A store
    failure while a run executes is no error of the run: the engine lets the run go, still
    ``running``, for a :meth:`restart` to continue (run.store-failure.recoverable).

    **One commit per operation** (``units``, on by default).  :meth:`start` (the run created and
    driven to its first pause: the pause, its turn, the run suspended) and :meth:`resume` (the
    consume, the continuation's claim of the run, the drive to the next pause or the end) each
    write in one unit of work of the store (:class:`pausepoint.stores.base.Units`): one durable
    commit, one fsync on SQLite.  The single winner is unchanged -- the consume is the ledger's
    conditional ``UPDATE`` inside the unit -- and a crash before the commit leaves nothing of
    the operation, so the answer's retry works as the first try did.  An effect is the one
    boundary that commits early: ``ctx.effect`` commits the unit so far, its journalled start
    included, before ``fn`` runs (``effect.journal.bracket``: an effect never runs
    unjournalled), and the rest -- its finish, the run's progress, the drive on -- goes on in
    the unit's next transaction.

    On a store whose unit holds the write lock to its commit (``serial_units``: SQLite,
    memory) a unit writes no row it would only overwrite: a continuation's claim of the run is
    written with the drive's first write of the run (claim and end: one conditional
    ``UPDATE``), or before the drive's first other store call; a resume's answer lives in the
    run's continuation data the claim writes, kept on its own only if the run is not taken.
    On every store an operation's result is the run as its unit's last write left it (the
    row is the unit's until it commits), not read back.

    While a unit is open it holds the store's write lock on SQLite (``BEGIN IMMEDIATE``; on
    PostgreSQL only the rows it wrote are locked): from an operation's start to its first
    effect, between two effects, and from the last effect to the pause or the end, that is
    while the agent's own code between two journal points runs.  That is acceptable because
    that code is replayed from the top on every continuation and must be deterministic -- no
    I/O, nothing slow: what talks to the world belongs in ``ctx.effect``, whose ``fn`` runs
    with no lock held (the next transaction begins only at the unit's next store call).
    Writers of other runs queue behind the lock (within the store's busy timeout).  An agent
    that must compute for long between two questions can put that work in an effect too (its
    result is then journalled and replayed, never recomputed)."""

    units: bool = True
    """Write each operation in one unit of work of the store (see above), its trace events in
    it; ``False``: every write commits on its own (a crash tool's broken variant that needs a
    death between writes a unit keeps together)."""

    keeps_answer_first: bool = False
    """Keep a resume's answer before its continuation even when the continuation takes the
    run in the same transaction, the answer then in the run's continuation data (a subclass
    that commits the answer before the continuation)."""

    trace: TraceSink = NO_TRACE
    """Where the engine reports what it does, one event per step (:mod:`pausepoint.engine
    .tracing`; off by default)."""

    input_inline_max: int = 4096
    """The longest run input (its JSON text, in characters) kept in the run's continuation
    data.  A longer one is kept once, beside the run, when the run is created
    (:meth:`~pausepoint.engine.owned.Ownership.keep_input`): the continuation data is written
    again -- and compared, as the write's condition -- at every write of the run, so an input
    kept in it would cost every step of the run its length again."""

    def __init__(self, deployment: Deployment, agents: Mapping[str, Agent], *, clock: Clock,
                 owner: str, lease_ms: int, raise_errors: bool = True) -> None:
        self.deployment = deployment
        self.agents = dict(agents)
        self.clock = clock
        self.owner = owner
        self.lease_ms = lease_ms
        self.raise_errors = raise_errors
        self.owned = Ownership(deployment.service, owner, clock, lease_ms)
        """The run-level writes of this engine as a run's driver."""
        self.runner = Runner()
        """The runner each invocation of a run goes through."""
        self._store_units = isinstance(deployment.store, Units)
        self._saved = threading.local()
        """``run``: the run as this thread's drive last wrote it (:meth:`_save`); ``claim``:
        a continuation's take-over of the run not written yet (:meth:`_continue`); ``took``:
        the resume's continuation wrote its take-over."""
        self._serial = getattr(deployment.store, "serial_units", False) is True

    @classmethod
    def open(cls, url: str | StoreBundle, *, agents: Mapping[str, Agent],
             interactions: Sequence[Interaction], clock: Clock | None = None,
             signer: Signer | None = None, ttl_ms: int = 24 * 3_600_000,
             owner: str = "local", lease_ms: int = 30_000) -> Engine:
        """An engine on the store at ``url``: ``memory:``, ``sqlite:PATH`` or a PostgreSQL DSN
        (``postgresql://...``) -- or a store bundle already open.  ``signer`` defaults to a
        fresh Ed25519 key ring (give every process of a deployment the same one)."""
        clock = clock or SystemClock()
        store = open_store(url) if isinstance(url, str) else url
        deployment = compose(store=store, signer=signer or KeyRing.generate(),
                             interactions=interactions, clock=clock, ttl_ms=ttl_ms)
        return cls(deployment, agents, clock=clock, owner=owner, lease_ms=lease_ms)

    def close(self) -> None:
        self.deployment.store.close()

    # -- operations ---------------------------------------------------------------------------

    def start(self, agent: str, data: Any = None, *, run_id: str, session_id: str = "session",
              scope: str = "default", parent_run_id: str | None = None,
              thread_id: str | None = None) -> RunResult:
        """Start ``agent`` on its input ``data`` (JSON) as the run ``run_id`` and drive it until
        it pauses or ends."""
        if agent not in self.agents:
            raise PausepointError(ErrorCode.INVALID_TRANSITION, "run.lifecycle.table",
                                  f"no agent {agent!r} is registered with this engine")
        given = state_json(data)  # JSON, or refused here as before anything is written
        state: dict[str, Any] = {"agent": agent, "answers": {}, "effects": {}, "step": 0}
        kept = len(given) > self.input_inline_max
        if kept:
            state["input_key"] = input_key(run_id, given)
        else:
            state["input"] = data
        record = RunRecord(
            run_id=run_id, root_run_id=run_id, parent_run_id=parent_run_id or "",
            session_id=session_id, thread_id=thread_id or run_id, scope=scope,
            status=RunStatus.RUNNING, state=state_json(state))

        def go() -> RunResult:
            run = self.owned.start(record)
            if kept:  # with the run, in its unit: a refused start keeps nothing
                self.owned.keep_input(state["input_key"], given)
            self._started(run, data)
            return self._drive(run)
        return self._unit(go)

    def resume(self, token: object, response: Any, *, session_id: str = "session",
               scope: str = "default", responder: str = "",
               run_id: str | None = None) -> RunResult:
        """Answer a question: exactly once per pause -- a repeat of the same answer replays,
        its result the first one's -- and the run goes on from where it asked once every
        question asked with it is answered."""
        return self._unit(functools.partial(self._resume, token, response, ResumeRequest(
            session_id=session_id, scope=scope, responder=responder, run_id=run_id)))

    def _resume(self, token: object, response: Any, request: ResumeRequest) -> RunResult:
        svc = self.deployment.service
        out = svc.resume(token, response, request)
        rec = out.record
        if out.replayed and not self.owned.answer_awaited(rec):
            # the first answer went on (or its resumer still does): tell what it found.  Only
            # when a restart found the first answer lost does its retry go on (below)
            first = loads(out.result) if out.result else {}
            return RunResult(run_id=rec.run_id, status=RunStatus(first.get("status", "running")),
                             events=tuple(first.get("events", ())), replayed=True,
                             interrupt_id=rec.interrupt_id)
        # kept until the continuation: if this process dies before it, a restart goes on with
        # the answer -- the validated one, not the raw input (resume.response.strict): its
        # canonical text, which the service made before the consume (an answer that has none
        # was refused then)
        registered = None if out.replayed else svc.interaction(rec.claims.name, reserved=True)
        plain = registered is not None and registered.answers_are_json
        text = canonical_json(response) if out.replayed else out.answer_text
        assert text is not None  # a first resume's validated answer always has its text
        # ... unless the continuation takes the run in this very transaction (a store that
        # serialises units): the answer is then in the run's continuation data it writes, and
        # kept only if it does not (below)
        late = self._serial and self._one_unit() and not out.replayed and \
            not self.keeps_answer_first
        if not late:
            self.owned.keep_answer(rec, text)
        self._answer_kept(rec)
        # the step's pauses, read once; the answer just kept and the run stay in hand when this
        # unit consumed the pause in its own transaction (nobody else can have kept one for it,
        # nor write the run before the unit commits)
        seen = self._seen(rec, text, registered if plain else None, out.answer) \
            if self._one_unit() and not out.replayed else _Seen(self.owned.step_pauses(rec), {})
        if not self.owned.answers_kept(rec, seen.pauses, seen.kept):
            # another answer of the step is still awaited
            if late:
                self.owned.keep_answer(rec, text)
            return _answering(self._result(rec.run_id), rec.interrupt_id)
        self._saved.took = False
        result = _answering(self._continue(rec, seen), rec.interrupt_id)
        if late and not self._saved.took:  # not taken (no commit since the consume)
            self.owned.keep_answer(rec, text)
        if result.status != RunStatus.RUNNING:  # a running run's invocation did not end
            # PauseService.set_result with the text made here (it would encode the value)
            svc.ledger.set_result(rec.interrupt_id, _result_text(result))
        return result

    def cancel(self, run_id: str) -> RunResult:
        """Cancel the run, its questions and its child runs; refused for a run that ended."""
        if run_id in self.owned.cancel(run_id):
            self.trace.emit("cancel", run=run_id)
        return self._result(run_id)

    def restart(self) -> list[RunResult]:
        """Go on with every run whose driver stopped (its lease released, run out, or this
        owner's own from before a crash), with every paused run whose questions were all
        answered but whose resumer died before it went on, and finish every cancel whose
        canceller stopped."""
        svc = self.deployment.service
        results = [self._result(run_id) for run_id in self.owned.finish_cancels()]
        for run in svc.runs.with_status(RunStatus.RUNNING):
            if not self._mine(run):
                continue  # not one of this engine's
            # refused while a live owner drives it (run.ownership.lease), or lost to another
            # restarter (run.restart.concurrent)
            result = self._unit(self._recovering(run))  # one unit per run
            if result is not None:
                results.append(result)
        for rec in self._stalled():
            if not self._answers_kept(rec):  # the resumer died before keeping an answer:
                self.owned.await_answers(rec)  # only its sender's retry can deliver it
                continue
            results.append(self._unit(functools.partial(self._continue, rec)))
        return results

    def _recovering(self, run: RunRecord) -> Callable[[], RunResult | None]:
        def recover() -> RunResult | None:
            taken = self.owned.take(run, self._recover(run))
            if taken is None:
                return None
            self.trace.emit("restart", run=run.run_id)
            return self._drive(taken)
        return recover

    def reconcile(self, interrupt_id: str, resolution: str) -> RunResult:
        """Settle an effect in doubt (``applied``, ``not_applied`` or ``compensated``); then
        resume its recovery pause to go on."""
        try:
            res = lc.Resolution(resolution)
        except ValueError:
            raise PausepointError(ErrorCode.INVALID_TRANSITION, "effect.reconcile",
                                  f"unknown resolution {resolution!r}") from None
        svc = self.deployment.service
        def settle() -> PauseRecord:  # the reconcile and its event: one unit (tracing)
            rec = svc.reconcile(interrupt_id, res)
            self.trace.emit("reconcile", run=rec.run_id, pause=interrupt_id,
                            applied=res == lc.Resolution.APPLIED)
            return rec
        return self._result(svc.atomically(settle).run_id)

    def status(self, run_id: str) -> RunView:
        """What a person would be told about the run (``status.distinguishes``)."""
        return self.deployment.service.status(run_id)

    # -- seams: what a subclass may refine --------------------------------------------------------

    def _mine(self, run: RunRecord) -> bool:
        """The run is one of this engine's agents' (a store may hold others')."""
        return loads(run.state).get("agent") in self.agents

    def _started(self, run: RunRecord, data: Any) -> None:
        """Told of a run just started on ``data``."""
        if self.trace is not NO_TRACE:  # (on every operation's path: no call when it is off)
            self.trace.emit("start", run=run.run_id, parent=run.parent_run_id or None,
                            ttl=self.deployment.service.ttl_ms)

    def _recover(self, run: RunRecord) -> runs.Recover:
        """The restart's take-over event for ``run`` (run.ownership.lease)."""
        return self.owned.recover()

    def _belongs(self, rec: PauseRecord, run: RunRecord, state: dict[str, Any]) -> bool:
        """The pause ``rec`` was taken at the run's current step
        (run.continuation.belongs-to-step)."""
        return rec.interrupt_id.startswith(f"{run.run_id}/{state['step']}/")

    def _stalled(self) -> list[PauseRecord]:
        """The pauses of this engine's paused runs stalled between a consume and the
        continuation (:meth:`~pausepoint.engine.owned.Ownership.stalled`)."""
        found = []
        for run in self.deployment.service.runs.with_status(RunStatus.PAUSED):
            if self._mine(run):
                rec = self.owned.stalled(run.run_id, loads(run.state)["step"])
                if rec is not None:
                    found.append(rec)
        return found

    def _answers_kept(self, rec: PauseRecord) -> bool:
        """:meth:`~pausepoint.engine.owned.Ownership.answers_kept`."""
        return self.owned.answers_kept(rec)

    def _answer_kept(self, rec: PauseRecord) -> None:
        """Told that a resume kept the answer to ``rec``, before it looks whether every answer
        of the step is kept."""

    def _doubt(self, run: RunRecord, key: str) -> Doubt:
        """:meth:`~pausepoint.engine.owned.Ownership.doubt`."""
        return self.owned.doubt(run, key)

    def _recovery_index(self, run_id: str, step: int) -> int:
        """:meth:`~pausepoint.engine.owned.Ownership.recovery_index`."""
        return self.owned.recovery_index(run_id, step)

    def _checkpoint_id(self, run: RunRecord, state: dict[str, Any], step: int) -> str | None:
        """The checkpoint the questions of ``step`` are asked at (None: the newest of the
        run's thread, as the service binds it)."""
        return f"{run.run_id}@{step}"

    def _turn_with_pause(self, run: RunRecord, state: dict[str, Any], step: int) -> str | None:
        """The turn a pause at ``step`` is taken with, in one unit with it (with :attr:`units`);
        None: the turn is written after (:meth:`_record_turn`)."""
        return built_json({"run_id": run.run_id, "step": step}) if self.units else None

    def _record_turn(self, run: RunRecord, state: dict[str, Any], step: int,
                     rec: PauseRecord) -> PauseRecord:
        """Record the turn of the pause ``rec`` just taken at ``step``; a failed write leaves
        it paused and unresumable (turn.write-failed.stays-paused)."""
        svc = self.deployment.service
        try:
            rec = svc.record_turn(rec.interrupt_id, built_json(
                {"run_id": run.run_id, "step": step}))
            self.trace.emit("turn", run=run.run_id, pause=rec.interrupt_id)
            return rec
        except PausepointError:
            self.trace.emit("turn", run=run.run_id, pause=rec.interrupt_id, failed=True)
            got: PauseRecord | None = svc.ledger.get(rec.interrupt_id)
            return rec if got is None else got

    def _publish(self, rec: PauseRecord) -> PendingInterrupt:
        """The pause ``rec`` as it is published to whoever answers it."""
        return published(rec)

    def _lost(self, run_id: str, epoch: int | None = None) -> NoReturn:
        """Stop: this driver lost the run -- cancelled, taken over, or its lease under
        ``epoch`` ran out (:meth:`~pausepoint.engine.owned.Ownership.lost`)."""
        self.owned.lost(run_id, epoch)

    def _recoverable(self, exc: BaseException) -> bool:
        """``exc``, raised while a run executed, is a store failure -- no failure of the run,
        which stays running for a restart (run.store-failure.recoverable)."""
        return isinstance(exc, PausepointError) and exc.code == ErrorCode.STORE_UNAVAILABLE

    def _outstanding(self, run_id: str, asked: tuple[PendingInterrupt, ...] | None = None
                     ) -> tuple[PendingInterrupt, ...]:
        """The questions the run waits on, as published (its live pauses); ``asked``: what
        the drive that just stopped knows them to be (:meth:`_asked`), not read again."""
        if asked is not None:
            return asked
        return tuple(self._publish(r) for r in self.deployment.service.ledger.by_run(run_id)
                     if r.state.phase in lc.LIVE)

    def _binding(self, run: RunRecord) -> PauseBinding:
        return current_run_binding(session_id=run.session_id, thread_id=run.thread_id,
                                   scope=run.scope, parent_run_id=run.parent_run_id)

    # -- internals ----------------------------------------------------------------------------

    def _unit(self, work: Callable[[], T]) -> T:
        """Run an operation in one unit of work of the store (with :attr:`units`): its writes
        -- a start's run and first pause, a resume's consume, continuation claim and next pause
        or end -- commit once, together, or not at all (a crash before the commit leaves
        nothing, and the answer's retry works as the first try).  An effect commits the unit
        so far first (see :class:`Engine`).  A verdict the operation raises -- the agent's own
        error, after the run was ended in error; a refusal, after an expiry decided on the way
        -- is raised once the unit committed what it decided; a store failure commits
        nothing.  A unit the store aborted to break a conflict before any of it committed (a
        deadlock victim on PostgreSQL) runs again from the operation's start
        (:meth:`~pausepoint.engine.service.PauseService.atomically`)."""
        if not self.units:
            return work()

        def attempt() -> tuple[T, None] | tuple[None, Exception]:
            try:
                return work(), None
            except PausepointError as exc:
                if exc.code is ErrorCode.STORE_UNAVAILABLE:
                    raise
                return None, exc
            except Exception as exc:  # the agent's own error
                return None, exc
        outcome = self.deployment.service.atomically(attempt)
        if outcome[1] is not None:
            raise outcome[1]
        return outcome[0]

    def _one_unit(self) -> bool:
        """An operation here is one unit of work of the store: what it wrote or read is the
        row's state until the unit's transaction commits (no one else writes it meanwhile)."""
        return self.units and self._store_units

    def _continue(self, rec: PauseRecord, seen: _Seen | None = None) -> RunResult:
        """Continue the run of the consumed pause ``rec`` with the answers kept for its step --
        once every question of the step is answered (multi.independent), only if the run is
        paused at that step (run.continuation.belongs-to-step), and only once (one winner
        among resumers and restarters).  ``seen``: what the resume read and kept of the step
        (None: read it)."""
        svc = self.deployment.service
        run = seen.run if seen is not None and seen.run is not None else \
            svc.runs.get(rec.run_id)
        if run is None:
            return self._result(rec.run_id)
        state: dict[str, Any] = seen.state if seen is not None and seen.state is not None \
            else loads(run.state)
        event = self.owned.continuation(self._belongs(rec, run, state))
        taken = runs.step(run.run_state, event)
        if isinstance(taken, runs.Refusal):
            return self._result(rec.run_id)  # not paused, or a step the run has left
        if seen is None:
            seen = _Seen(self.owned.step_pauses(rec), {})
        if not self.owned.step_answered(rec, seen.pauses):
            return self._result(rec.run_id)  # others still wait (multi.independent)
        as_sorted = self._deliver(rec, run, state, seen)
        if self._serial and self._one_unit():
            # the claim is written with the drive's first write, conditional on the row read
            # here: in a unit of a store that serialises units, no one writes the row between
            pending = run.evolve(taken.state, state_json(state))
            self._claim()  # an operation inside a drive's agent: the drive's claim first
            self._saved.claim = (run, pending)
            self._hand(pending, state if as_sorted else None, seen)
            try:
                return self._drive(pending)
            finally:
                self._saved.claim = None
        claimed = self.owned.take(run, event, state_json(state))
        if claimed is None:
            return self._result(rec.run_id)  # another resume continues it: one winner
        self.trace.emit("continue", run=run.run_id)
        self._hand(claimed, state if as_sorted else None, seen)
        return self._drive(claimed)

    def _hand(self, run: RunRecord, state: dict[str, Any] | None, seen: _Seen) -> None:
        """Hand the drive of ``run`` (a continuation's take-over, its continuation data just
        encoded from ``state``) what this operation holds: ``state`` -- equal to that text read
        back, orders included, when :meth:`_deliver` says so (None: read it back) -- and the
        answers the resume validated (:attr:`_Seen.validated`).  Only that drive takes them
        (:meth:`_drive`: the same record, on this thread); any other drive reads its own."""
        self._saved.handed = (run, state, dict(seen.validated))

    def _claim(self) -> None:
        """Write the continuation's take-over of the run (:meth:`_continue`) if it is not
        written yet: before the drive's first store call other than its write of the run
        (a pause fenced by its epoch, an effect's journal, a read of the run)."""
        claim: tuple[RunRecord, RunRecord] | None = getattr(self._saved, "claim", None)
        if claim is None:
            return
        stored, claimed = claim
        took = self.deployment.service.runs.replace(stored, claimed)
        self._saved.claim = None  # written, or refused (a store failure leaves it unwritten)
        if not took:
            self._lost(claimed.run_id)
        self._saved.took = True
        self.trace.emit("continue", run=claimed.run_id)

    def _seen(self, rec: PauseRecord, text: str, plain: Interaction | None,
              answer: object) -> _Seen:
        """What a resume that consumed ``rec`` and kept its answer ``text`` (validated as
        ``answer``; ``plain``: by this interaction, a ``dict`` response) in this unit knows
        of the step: the run (read now, once, for the continuation too) and the step's pauses
        -- ``rec`` alone, not read, when the run is paused at ``rec``'s step having asked it
        alone there (:meth:`_ask` notes how many questions a step asked; every pause of the
        step carries the step's checkpoint, unique to it, so no other pause has it)."""
        claims = rec.claims
        run = self.deployment.service.runs.get(claims.run_id)
        state: dict[str, Any] | None = None if run is None else loads(run.state)
        alone = (state is not None and state.get("asked") == 1
                 and claims.interrupt_id == f"{claims.run_id}/{state['step']}/0"
                 and claims.checkpoint_id == f"{claims.run_id}@{state['step']}")
        # the validated answer goes to the drive's ask as it is when validating it again could
        # only give it back: a plain ``dict`` response, whose instance is the JSON values read
        # from canonical text -- its text (``text``) is that canonical text again, so the
        # strict check of ``text`` reads back the very same values (no model, no coercion)
        validated = {} if plain is None else {claims.interrupt_id: (plain, answer)}
        return _Seen([rec] if alone else self.owned.step_pauses(rec),
                     {claims.interrupt_id: text}, run, state, validated)

    def _deliver(self, rec: PauseRecord, run: RunRecord, state: dict[str, Any],
                 seen: _Seen) -> bool:
        """Hand the kept answers of ``rec``'s step to the step the run is paused at: the
        ``j``-th answer becomes the answer of the run's current ``j``-th question (a recovery
        pause's, its own).  The continuation-belongs-to-step check made these one step.
        Returns whether ``state`` now orders every key as its sorted JSON text read back
        would (:meth:`_hand`): each answer delivered is one this operation kept, with ASCII
        text -- canonical JSON orders an object's keys by UTF-16 code units, the state's text
        by code points, which differ only beyond ASCII."""
        step, kind = rec.interrupt_id.removeprefix(f"{run.run_id}/").split("/", 1)
        if kind.startswith("recover/"):
            state["answers"][rec.interrupt_id] = self.owned.kept_answer(rec.interrupt_id,
                                                                         seen.kept)
            return False
        as_sorted = True
        answered, delivered = f"{run.run_id}/{step}/", f"{run.run_id}/{state['step']}/"
        for r in seen.pauses:
            iid = r.interrupt_id
            if iid.startswith(answered) and "/recover/" not in iid:
                j = iid.rsplit("/", 1)[1]
                state["answers"][delivered + j] = self.owned.kept_answer(iid, seen.kept)
                text = seen.kept.get(iid)
                as_sorted = as_sorted and text is not None and text.isascii()
        return as_sorted

    def _result(self, run_id: str, output: Any = None, events: Sequence[RunEvent] = (),
                run: RunRecord | None = None,
                asked: tuple[PendingInterrupt, ...] | None = None) -> RunResult:
        """Where the run ``run_id`` stands: as ``run`` says (the row as this unit last wrote
        it) and ``asked`` (the questions it waits on, as the drive knows them), or as read."""
        if run is None:
            run = self.deployment.service.runs.get(run_id)
        if run is None:
            raise PausepointError(ErrorCode.PAUSE_UNKNOWN, "lifecycle.states",
                                  f"no run {run_id!r}")
        if run.status == RunStatus.DONE and output is None:
            output = loads(run.state).get("output")
        return RunResult(run_id=run_id, status=run.status, output=output,
                         pauses=self._outstanding(run_id, asked),
                         events=tuple(map(_KIND_TEXT, events)))

    def _save(self, run: RunRecord, state: dict[str, Any], event: runs.Event) -> RunRecord:
        """Write the run's progress under the epoch it was read with: a conditional write that
        a driver who lost the run cannot make (run.ownership.fencing).  The first write of a
        continuation's drive writes its take-over with it (:meth:`_continue`)."""
        claim: tuple[RunRecord, RunRecord] | None = getattr(self._saved, "claim", None)
        stored = None
        if claim is not None:
            if claim[1] is run:
                stored = claim[0]
            else:
                self._claim()
        new = self.owned.write(run, event, state_json(state), stored)
        self._saved.claim = None
        if new is None:
            self._lost(run.run_id)
        if stored is not None:
            self._saved.took = True
            if self.trace is not NO_TRACE:
                self.trace.emit("continue", run=run.run_id)
        self._saved.run = new
        return new

    def _drive(self, owned: RunRecord) -> RunResult:
        """Execute the run this engine owns (under ``owned.epoch``) from the top, with what it
        recorded, until it pauses, ends, is cancelled -- or this engine loses it."""
        run_id = owned.run_id
        handed: tuple[RunRecord, dict[str, Any] | None, dict[str, tuple[Interaction, object]]] \
            | None = getattr(self._saved, "handed", None)
        self._saved.handed = None
        if handed is None or handed[0] is not owned:
            handed = (owned, None, {})
        state: dict[str, Any] = loads(owned.state) if handed[1] is None else handed[1]
        agent = self.agents[state["agent"]]
        box: dict[str, Any] = {}

        def body(emit: Emit) -> Any:
            ctx = RunContext(self, owned, state, emit, handed[2])
            try:
                # a long input kept beside the run is read here, in the drive: a store that
                # does not answer leaves the run running for a restart (as any store failure
                # in a drive), one that lost the input ends it in error (store_corrupt).  No
                # take-over need be written first: the input is written once, with the run,
                # and never changes
                data = state["input"] if "input_key" not in state \
                    else self.owned.kept_input(state["input_key"])
                output = agent(ctx, data)
            except Exception as exc:
                if self._recoverable(exc):
                    raise _StoreFailed() from exc
                box["error"] = exc
                raise
            state["output"] = output
            self._save(ctx._run, state, runs.Finish(owned.epoch))
            if self.trace is not NO_TRACE:
                self.trace.emit("execute", run=run_id)
            return output

        self._saved.run = None
        try:
            events = self.runner.invoke(RunIdentity(run_id, owned.root_run_id), body)
            self._claim()  # the drive stopped before any write: its take-over all the same
        except (Lost, InvocationCancelled):
            return self._result(run_id)
        except _StoreFailed as stopped:
            cause = stopped.__cause__
            if getattr(self._saved, "claim", None) is not None and cause is not None:
                raise cause from None  # it failed the take-over: as an unfused take-over's
            return self._release(owned)
        if events and events[-1].kind == EventKind.ERROR:  # it ended: not running, not re-run
            failed = self.deployment.service.runs.get(run_id)
            if failed is not None and failed.epoch == owned.epoch and \
                    failed.status == RunStatus.RUNNING:
                try:
                    self._save(failed, loads(failed.state), runs.Fail(owned.epoch))
                except (Lost, InvocationCancelled):
                    pass  # lost meanwhile: its new owner decides
            if self.raise_errors and "error" in box:
                raise box["error"]
        run = self._written(owned, events)
        if run is None:
            run = self.deployment.service.runs.get(run_id)
        return self._result(run_id, state.get("output"), events, run,
                            self._asked(owned, run, events))

    def _written(self, owned: RunRecord, events: Sequence[RunEvent]) -> RunRecord | None:
        """The run as the drive of ``owned`` that just stopped left it, known without a read:
        in one unit (no one else writes the row before it commits), once the drive paused or
        finished the run -- each of which it does with a write of the run, its last
        (:meth:`_save`), under the epoch it drove with.  None: read it."""
        saved: RunRecord | None = getattr(self._saved, "run", None)
        self._saved.run = None
        if saved is None or not events or not self._one_unit():
            return None
        ended = _ENDED_AS.get(events[-1].kind)
        if ended is None or saved.status != ended or saved.run_id != owned.run_id \
                or saved.epoch != owned.epoch:
            return None
        return saved

    def _asked(self, owned: RunRecord, run: RunRecord | None,
               events: Sequence[RunEvent]) -> tuple[PendingInterrupt, ...] | None:
        """The questions the run waits on once the drive of ``owned`` stopped, known without a
        read of its pauses -- when ``run``, as read right after the drive in the same unit,
        is as the drive's last write left it (one unit: no one else writes the row before
        it commits): none once the drive finished it; at a run's first pause (the drive of
        its start, epoch 1), those it just asked -- a run created in this unit has no other:
        every pause the engine takes for a run is fenced by an epoch the run held, and no
        earlier drive held one.  None: read them."""
        if run is None or not events or not self._one_unit() or run.epoch != owned.epoch:
            return None
        last = events[-1]
        if run.status == RunStatus.DONE and last.kind == EventKind.DONE:
            return ()
        if (run.status == RunStatus.PAUSED and run.epoch == 1 and last.kind == EventKind.PAUSED
                and isinstance(last.data, tuple)):
            return last.data
        return None

    def _release(self, owned: RunRecord) -> RunResult:
        """The store failed under the run: let it go, still running, for a restart."""
        try:
            run = self.deployment.service.runs.get(owned.run_id)
            if run is not None:
                self.owned.write(run, runs.Release(owned.epoch))
            return self._result(owned.run_id)
        except PausepointError:  # still failing: the lease runs out by itself
            return RunResult(run_id=owned.run_id, status=RunStatus.RUNNING)

    def _effect(self, run: RunRecord, state: dict[str, Any], key: str,
                fn: Callable[[], Any], step: int, emit: Emit) -> RunRecord:
        self._claim()
        svc = self.deployment.service
        current = svc.runs.get(run.run_id)
        if current is None or current.status in runs.CANCELLED_OR_CANCELLING:
            raise InvocationCancelled()
        if current.epoch != run.epoch or current.status != RunStatus.RUNNING:
            raise Lost()
        status = svc.effects.status(run.run_id, key)
        if status in (EffectStatus.FINISHED, EffectStatus.COMPENSATED):
            # finished before (or settled by an operator): never run again
            # (effect.at-most-once); its result, if it was kept
            state["effects"][key] = self.owned.kept_result(run.run_id, key)
            saved = self._save(run, state, self.owned.progress(run.epoch))
            self.trace.emit("execute", run=run.run_id)
            return saved
        if status == EffectStatus.STARTED:  # a process died inside it: never run it again
            self._recover_effect(run, state, key, step)
            return self._effect(run, state, key, fn, step, emit)  # settled meanwhile
        emit(RunEvent(EventKind.TOOL_CALL, {"effect": key}))
        if not self.owned.begin_effect(run, key):
            self._lost(run.run_id, run.epoch)  # a new epoch, or the lease ran out: never apply
        self.trace.emit("execute", run=run.run_id)  # with the journal's start, in its commit
        if self.units:
            svc.commit_so_far()  # the journal's start is durable before fn runs (bracket)
        result = fn()
        self.owned.keep_result(run.run_id, key, result)
        svc.effects.finish(run.run_id, key, run.epoch)
        self.trace.emit("finish", run=run.run_id)
        emit(RunEvent(EventKind.TOOL_RESULT, {"effect": key}))
        state["effects"][key] = result
        saved = self._save(run, state, self.owned.progress(run.epoch))
        self._effect_finished()
        return saved

    def _effect_finished(self) -> None:
        """An effect was journalled finished and the run moved past it (in the unit so far,
        with :attr:`units`); a subclass may commit it there."""

    def _recover_effect(self, run: RunRecord, state: dict[str, Any], key: str,
                        step: int) -> None:
        """The effect ``key`` journalled started and not finished: its outcome is unknown.
        Open a recovery pause in unknown_outcome at ``step``; never retry it
        (effect.unknown-outcome).  Returns only when the entry was settled meanwhile."""
        doubt = self._doubt(run, key)
        if doubt == Doubt.SETTLED:
            return
        if doubt == Doubt.FENCED:  # a new owner's effect in flight: this driver lost it
            self._lost(run.run_id)
        k = self._recovery_index(run.run_id, step)
        try:
            rec = self.owned.open_recovery(
                run, self._binding(run), interrupt_id=f"{run.run_id}/{step}/recover/{k}",
                checkpoint_id=f"{run.run_id}@{step}/recover/{k}",
                payload={"run_id": run.run_id, "effect": key},
                turn=built_json({"run_id": run.run_id, "step": step}),
                opened=lambda r: self.trace.emit("recover", run=run.run_id,
                                                 pause=r.interrupt_id))
        except PausepointError as exc:
            if fencing_refused(exc):
                self._lost(run.run_id)
            raise
        state["step"] = step
        state.pop("asked", None)  # a recovery pause is no question of the step
        self._save(run, state, runs.Suspend(run.epoch))
        raise InvocationPaused((self._publish(rec),))

    def _ask(self, run: RunRecord, state: dict[str, Any], n: int,
             questions: Sequence[tuple[str, Any]], tool_call_id: str) -> None:
        """Take the pauses of the questions asked at step ``n``, all or none, record their
        turn, let the run go and raise the pause signal."""
        self._claim()
        svc = self.deployment.service
        binding = self._binding(run)
        checkpoint_id = self._checkpoint_id(run, state, n)
        # only the engine's own recovery may name the reserved interaction (an agent asking
        # for it is refused interaction_unregistered)
        if len(questions) > 1:  # all or nothing: every question checked before any is taken
            for name, payload in questions:
                svc.check_pause(binding=binding, name=name, payload=payload,
                                tool_call_id=tool_call_id, checkpoint_id=checkpoint_id)
        if self.trace is not NO_TRACE:  # off: no event, and no list of its pauses built
            self.trace.emit("execute", run=run.run_id,
                            pauses=[f"{run.run_id}/{n}/{j}" for j in range(len(questions))])
        taken: list[PendingInterrupt] = []
        # a run's first drive, in the unit that created it: none of its pauses is issued yet
        fresh = run.epoch == 1 and self._one_unit()
        try:
            turn = self._turn_with_pause(run, state, n)
            for j in range(len(questions)):  # (enumerate's C code: entered nowhere else)
                name, payload = questions[j]
                try:  # a pause only while this driver owns the run (run.ownership.fencing)
                    rec = self.owned.pause(run, binding, name=name, payload=payload,
                                           interrupt_id=f"{run.run_id}/{n}/{j}",
                                           tool_call_id=tool_call_id,
                                           checkpoint_id=checkpoint_id, turn=turn,
                                           fresh=fresh)
                except PausepointError as exc:
                    if fencing_refused(exc):
                        self._lost(run.run_id)
                    raise
                if rec.state.phase == lc.Phase.PAUSED and not rec.state.turn_recorded:
                    rec = self._record_turn(run, state, n, rec)
                elif turn is not None and rec.state.turn_recorded and \
                        self.trace is not NO_TRACE:  # written with the pause
                    self.trace.emit("turn", run=run.run_id, pause=rec.interrupt_id)
                taken.append(self._publish(rec))
            state["step"], state["asked"] = n, len(questions)
            self._save(run, state, runs.Suspend(run.epoch))
        except InvocationCancelled:  # cancelled while asking: these pauses go with the run
            for p in taken:
                try:
                    svc.cancel_pause(p.interrupt_id)
                except PausepointError:
                    pass  # decided otherwise already
            raise
        raise InvocationPaused(tuple(taken))


def _answering(result: RunResult, interrupt_id: str) -> RunResult:
    """``result``, naming the pause a resume answered: ``attrs.evolve(result,
    interrupt_id=...)`` built directly (evolve looks up the class's fields on every call, and
    this is on every resume's path; the fields are checked below)."""
    return RunResult(result.run_id, result.status, result.output, result.pauses,
                     result.events, result.replayed, interrupt_id)


assert [f.name for f in attrs.fields(RunResult)] == [
    "run_id", "status", "output", "pauses", "events", "replayed", "interrupt_id"], \
    "_answering builds a RunResult field by field: keep it in step with the class"


def _result_text(result: RunResult) -> str:
    """The canonical text of a resume's ``result`` as the ledger keeps it for a replay of the
    answer: its status, its event kinds and the pauses it waits on.  When it waits on none (the
    run ended) every string in it is a run status or an event kind -- lowercase ASCII letters
    and ``_``, which no JSON text escapes -- so the sorted compact text of :func:`state_json`
    (warm: the run's own encoder) is the canonical text, with no proof of it to make at every
    resume as :func:`~pausepoint.core.canonical.built_json` makes for a value it does not
    know (an interrupt id is any text)."""
    value = {"status": result.status._value_, "events": list(result.events),
             "pauses": [p.interrupt_id for p in result.pauses] if result.pauses else []}
    return built_json(value) if result.pauses else state_json(value)


_KIND_TEXT: Final = operator.attrgetter("kind._value_")
"""An event's kind as its text (C's getter: a comprehension is a function of its own to run)."""

_ENDED_AS: Final = {EventKind.PAUSED: RunStatus.PAUSED, EventKind.DONE: RunStatus.DONE}
"""The run's status after a drive whose last event is this one (:meth:`Engine._written`)."""

