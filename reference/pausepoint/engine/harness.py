"""A scripted agent harness on the reference services.

A *script* is a list of steps a run executes (:mod:`pausepoint.core.script`, given as its step
values or in their JSON form, which the run's state keeps): ``{"op": "effect", "key": k}`` (a
side effect, journalled before and after), ``{"op": "interrupt", "name": n, "payload": p}``
(stop to ask a person; ``"names"`` asks several questions at once, answered independently;
``"checkpoint_write": "fail"`` makes their turn write fail, ``"checkpoint": "none"`` asks them
with no checkpoint), ``{"op": "end"}``,
and ``{"op": "gate", "amount": n, "allow_up_to": a, "deny_over": d}`` (an approval gate,
:class:`pausepoint.core.gate.ThresholdGate`: allowed, the run goes on without pausing; denied, the
run ends ``done`` there, the denial kept in its state, without pausing; otherwise it asks a
person with an ``approve`` pause and goes on with the next step once that is answered).
An effect may carry ``"fault": "crash_before_apply" | "crash_after_apply"``: the first time it
executes, the process "dies" at that point (the harness drops everything volatile until
:meth:`Harness.restart`).

The harness is what the conformance suite's reference adapter drives and what the stateful
tests compare with :mod:`pausepoint.system.model`: its semantics are the model's (a run
continues from its recorded turn; an effect journalled finished is skipped; an effect
journalled started and not finished when the run stopped opens a recovery pause in
``unknown_outcome`` instead of being retried).  The model has no gates.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

import attrs
import pydantic
from pydantic_core import to_jsonable_python

from pausepoint.core import lifecycle as lc
from pausepoint.core import runs
from pausepoint.core.canonical import canonical_json
from pausepoint.core.clauses import ErrorCode
from pausepoint.core.errors import PausepointError
from pausepoint.core.gate import Decision, ThresholdGate
from pausepoint.core.ports import Clock, EffectStatus, PauseRecord, RunRecord, RunStatus, Signer
from pausepoint.core.registry import RECONCILE, Interaction
from pausepoint.core.script import Fault, Step, from_json, to_json
from pausepoint.core.tokens import KeyRing
from pausepoint.engine.clock import ManualClock
from pausepoint.engine.compose import Deployment, compose
from pausepoint.engine.owned import Doubt, Lost, Ownership, fencing_refused, published
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
from pausepoint.engine.service import PauseService, ResumeRequest
from pausepoint.engine.tracing import NO_TRACE, TraceSink
from pausepoint.stores import open_store
from pausepoint.stores.base import StoreBundle


class World(Protocol):
    """The outside world the effects change: it survives crashes of the harness."""

    def apply(self, run_id: str, key: str) -> None: ...

    def count(self, run_id: str, key: str) -> int: ...


class MemoryWorld:
    def __init__(self) -> None:
        self._counts: dict[tuple[str, str], int] = {}
        self._lock = threading.Lock()

    def apply(self, run_id: str, key: str) -> None:
        with self._lock:
            self._counts[(run_id, key)] = self._counts.get((run_id, key), 0) + 1

    def count(self, run_id: str, key: str) -> int:
        with self._lock:
            return self._counts.get((run_id, key), 0)


class SqliteWorld:
    """A world in its own SQLite file, for harnesses in processes that really die."""

    def __init__(self, path: str) -> None:
        self._path = path
        with sqlite3.connect(path) as db:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("CREATE TABLE IF NOT EXISTS world (run_id TEXT, key TEXT, n INTEGER,"
                       " PRIMARY KEY (run_id, key))")

    def apply(self, run_id: str, key: str) -> None:
        with sqlite3.connect(self._path, timeout=30) as db:
            db.execute("INSERT INTO world VALUES (?, ?, 1) ON CONFLICT(run_id, key) "
                       "DO UPDATE SET n = n + 1", (run_id, key))

    def count(self, run_id: str, key: str) -> int:
        with sqlite3.connect(self._path, timeout=30) as db:
            row = db.execute("SELECT n FROM world WHERE run_id = ? AND key = ?",
                             (run_id, key)).fetchone()
        return int(row[0]) if row else 0


def _state_json(state: dict[str, Any]) -> str:
    """The harness's own continuation data as JSON text.  Not canonical JSON: it is stored and
    read back, never compared across languages or digested, and it may hold a script's values
    that are not Unicode text (a payload the pause then refuses)."""
    return json.dumps(state, sort_keys=True, separators=(",", ":"), ensure_ascii=True,
                      allow_nan=False)


class SimulatedCrash(BaseException):
    """The process dies here (a scripted fault).  Nothing in the run may catch it."""


Fenced = Lost
"""This driver lost the run (:class:`pausepoint.engine.owned.Lost`)."""


class Interrupted(BaseException):
    """A store failed while the run executed.  That is no failure of the run: it stays running,
    its lease released, for a restart to continue (run.store-failure.recoverable)."""


DEFAULT_OWNER = "local"
"""The name a harness owns runs under unless given one.  A process restarting under its name
takes back the runs it held at once; several servers on one store need distinct names."""
DEFAULT_LEASE_MS = 30_000



class Approval(pydantic.BaseModel):
    """The answer to ``approve``: ``approved`` is a JSON boolean -- validated strictly, so
    ``"false"`` is refused, not read as a truthy string (resume.response.strict).  Other keys
    are kept."""

    model_config = pydantic.ConfigDict(extra="allow")

    approved: bool


DEFAULT_INTERACTIONS: tuple[Interaction, ...] = (
    Interaction("approve", response=Approval, description="approve or reject an action"),
    Interaction("ask", description="a free-form question"),
    Interaction("confirm", description="confirm a detail"),
    Interaction("choose", description="pick one of several options"),
    Interaction("pay", tool=True, description="approve a payment tool call"),
)


@attrs.frozen
class Report:
    """What an operation did to a run: its status, the events of the invocation, and the
    pauses now published for it."""

    run_id: str
    status: str
    events: tuple[str, ...] = ()
    pauses: tuple[PendingInterrupt, ...] = ()
    replayed: bool = False
    interrupt_id: str = ""


def _effect_key(pc: int, key: str) -> str:
    return f"{pc}:{key}"


def _step_json(step: Step | Mapping[str, Any]) -> dict[str, Any]:
    """A script step in its JSON form, as the run's state keeps it; a step the harness does not
    know is kept as given and refused when the run reaches it."""
    if not isinstance(step, Mapping):
        return to_json(step)
    try:
        return to_json(from_json(step))
    except (ValueError, KeyError, TypeError):
        return dict(step)


@attrs.frozen
class HarnessHooks:
    """The harness's one public seam for the fault tools and the tests that must bend or watch
    it (rather than patch its private methods); the default changes nothing.  The three faults
    are the deliberately broken variants the crash tool proves its checks with."""

    continue_stalled: bool = True
    """``False`` (BROKEN, ``replay-only``): :meth:`Harness.restart` never continues a run
    stalled between a consume and its continuation."""

    wait_for_answers: bool = True
    """``False`` (BROKEN, ``answerless-restart``): a step counts as answered whether or not
    every answer of it was kept, so a restart continues a run without an answer that was lost."""

    remint: bool = False
    """``True`` (BROKEN, ``reminting``): every pause is published with a freshly minted token
    instead of the one issued."""

    answer_kept: Callable[[PauseRecord], None] | None = None
    """Called once a resume has kept its answer, before it looks whether every answer of the
    step is kept (a test holds racing servers here)."""

    driving: Callable[[str], None] | None = None
    """Called with the run id each time a run is executed from its checkpoint."""


class Harness:
    def __init__(self, *, open_bundle: Callable[[], StoreBundle], signer: Signer, clock: Clock,
                 world: World, ttl_ms: int, interactions: Sequence[Interaction],
                 durable_restart: bool, hooks: HarnessHooks | None = None,
                 owner: str = DEFAULT_OWNER, lease_ms: int = DEFAULT_LEASE_MS) -> None:
        self.hooks = hooks if hooks is not None else HarnessHooks()
        self._open_bundle = open_bundle
        self.signer = signer
        self.clock = clock
        self.world = world
        self.ttl_ms = ttl_ms
        self.interactions = tuple(interactions)
        self.durable_restart = durable_restart
        self.owner = owner
        self.lease_ms = lease_ms
        self.runner = Runner()
        self.crashed = False
        self._lock = threading.RLock()
        self.deployment = self._compose(open_bundle())

    @classmethod
    def open(cls, url: str = "memory:", *, clock: Clock | None = None,
             keyring: Signer | None = None, ttl_ms: int = 60_000,
             interactions: Sequence[Interaction] = DEFAULT_INTERACTIONS,
             world: World | None = None, hooks: HarnessHooks | None = None,
             owner: str = DEFAULT_OWNER, lease_ms: int = DEFAULT_LEASE_MS) -> Harness:
        """Open a harness on a store URL (``memory:``, ``sqlite:PATH``, ``postgres:DSN``).
        With ``memory:`` the same in-memory store is kept across :meth:`crash`."""
        if url == "memory:":
            bundle = open_store(url)

            def reopen() -> StoreBundle:
                return bundle
        else:
            def reopen() -> StoreBundle:
                return open_store(url)
        return cls(open_bundle=reopen, signer=keyring or KeyRing.generate(),
                   clock=clock or ManualClock(0), world=world or MemoryWorld(),
                   ttl_ms=ttl_ms, interactions=interactions,
                   durable_restart=url != "memory:", hooks=hooks, owner=owner,
                   lease_ms=lease_ms)

    trace: TraceSink = NO_TRACE
    """Where every operation is reported (:mod:`pausepoint.engine.tracing`; off by default):
    set it with :meth:`traced`."""

    def traced(self, sink: TraceSink) -> Harness:
        """Report this harness's and its service's operations to ``sink``."""
        self.trace = sink
        self.service.trace = sink
        return self

    def _compose(self, bundle: StoreBundle) -> Deployment:
        deployment = compose(store=bundle, signer=self.signer, interactions=self.interactions,
                             clock=self.clock, ttl_ms=self.ttl_ms)
        deployment.service.trace = self.trace
        return deployment

    @property
    def service(self) -> PauseService:
        return self.deployment.service

    @property
    def owned(self) -> Ownership:
        """The run-level writes of this harness as a run's driver (shared with
        :class:`pausepoint.Engine`)."""
        return Ownership(self.service, self.owner, self.clock, self.lease_ms)

    # -- operations ----------------------------------------------------------------------

    def _alive(self) -> None:
        if self.crashed:
            raise PausepointError(ErrorCode.STORE_UNAVAILABLE, "durability.restart",
                                  "the harness crashed; restart it first")

    def start(self, script: Sequence[Step | Mapping[str, Any]], *, run_id: str,
              parent_run_id: str | None = None, session_id: str = "session",
              scope: str = "default", thread_id: str | None = None) -> Report:
        with self._lock:
            self._alive()
            state = {"script": [_step_json(s) for s in script], "pc": 0, "fired": [],
                     "responses": {}}
            run = self.owned.start(RunRecord(
                run_id=run_id, root_run_id=run_id, parent_run_id=parent_run_id or "",
                session_id=session_id, thread_id=thread_id or run_id, scope=scope,
                status=RunStatus.RUNNING, state=_state_json(state)))
            self.trace.emit("start", run=run_id, parent=parent_run_id, script=state["script"],
                            ttl=self.ttl_ms)
            return self._drive(run)

    def resume(self, token: object, response: object, *, session_id: str, scope: str,
               responder: str = "", run_id: str | None = None) -> Report:
        with self._lock:
            self._alive()
            out = self.service.resume(token, response, ResumeRequest(
                session_id=session_id, scope=scope, responder=responder, run_id=run_id))
            rec: PauseRecord = out.record
            if out.replayed and not self.owned.answer_awaited(rec):
                first = json.loads(out.result) if out.result else {}
                return Report(run_id=rec.run_id, status=str(first.get("status", "running")),
                              replayed=True, interrupt_id=rec.interrupt_id,
                              events=tuple(first.get("events", ())))
            # the consume's winner -- or, after a restart found its answer lost, a retry of the
            # same answer (the ledger matched its digest): keep the answer for a restart
            self.owned.keep_answer(rec, canonical_json(response))
            if self.hooks.answer_kept is not None:
                self.hooks.answer_kept(rec)
            if not self._answers_kept(rec):  # another answer of this step is still awaited
                return attrs.evolve(self._report(rec.run_id, ()), interrupt_id=rec.interrupt_id)
            # the run receives the validated answer, not the raw input (resume.response.strict)
            answer = response if out.replayed else to_jsonable_python(out.answer)
            report = self._continue(rec, answer)
            if self.crashed or report.status == RunStatus.RUNNING:
                # the process died, or the store failed, while continuing: the invocation did
                # not end, so there is no result to replay
                return attrs.evolve(report, interrupt_id=rec.interrupt_id)
            self.service.set_result(rec.interrupt_id, {
                "status": report.status, "events": list(report.events),
                "pauses": [p.interrupt_id for p in report.pauses]})
            return attrs.evolve(report, interrupt_id=rec.interrupt_id)

    def cancel(self, run_id: str) -> Report:
        with self._lock:
            self._alive()
            if run_id in self.service.cancel_run(run_id, owner=self.owner):
                self.trace.emit("cancel", run=run_id)
            return self._report(run_id, ())

    def reconcile(self, interrupt_id: str, resolution: str) -> Report:
        with self._lock:
            self._alive()
            try:
                res = lc.Resolution(resolution)
            except ValueError:
                raise PausepointError(ErrorCode.INVALID_TRANSITION, "effect.reconcile",
                                      f"unknown resolution {resolution!r}") from None
            rec = self.service.reconcile(interrupt_id, res)
            self.trace.emit("reconcile", run=rec.run_id, pause=interrupt_id,
                            applied=res == lc.Resolution.APPLIED)
            return self._report(rec.run_id, ())

    def expire_due(self) -> list[str]:
        with self._lock:
            self._alive()
            return [r.interrupt_id for r in self.service.expire_due()]

    def crash(self) -> None:
        """The process dies: everything volatile is gone until :meth:`restart`."""
        with self._lock:
            if not self.crashed and self.durable_restart:
                self.deployment.store.close()
            if not self.crashed:
                self.trace.emit("crash")
            self.crashed = True

    def restart(self) -> list[Report]:
        """Start again from durable state: runs that were executing are recovered from their
        checkpoint; an effect in doubt opens a recovery pause instead of being retried."""
        with self._lock:
            if self.crashed:
                self.deployment = self._compose(self._open_bundle())
                self.crashed = False
            reports = []
            for run in self._executing_runs():
                # refused while a live owner drives it (run.ownership.lease), or lost to
                # another restarter (run.restart.concurrent)
                taken = self.owned.take(run, self._recover(run))
                if taken is not None:
                    self.trace.emit("restart", run=run.run_id)
                    reports.append(self._drive(taken))
            for rec in self._stalled_pauses():
                if not self._answers_kept(rec):  # the winner died before keeping an answer:
                    self.owned.await_answers(rec)  # only its sender's retry can deliver it
                    continue
                reports.append(self._continue(rec, self.owned.kept_answer(rec.interrupt_id)))
            return reports

    def _answers_kept(self, rec: PauseRecord) -> bool:
        """:meth:`~pausepoint.engine.owned.Ownership.answers_kept` (unless the broken
        ``answerless-restart`` hook says otherwise)."""
        return not self.hooks.wait_for_answers or self.owned.answers_kept(rec)

    def _stalled_pauses(self) -> list[PauseRecord]:
        """The pauses of paused runs stalled between a consume and the continuation
        (:meth:`~pausepoint.engine.owned.Ownership.stalled`)."""
        if not self.hooks.continue_stalled:
            return []
        found = (self.owned.stalled(run.run_id, int(json.loads(run.state)["pc"]))
                 for run in self._scripted(RunStatus.PAUSED))
        return [rec for rec in found if rec is not None]

    # -- observation ---------------------------------------------------------------------

    def pause_state(self, interrupt_id: str) -> str:
        self._alive()
        rec = self.service.ledger.get(interrupt_id)
        if rec is None:
            raise PausepointError(ErrorCode.PAUSE_UNKNOWN, "lifecycle.states",
                                  f"no pause {interrupt_id!r}")
        return str(rec.state.phase.value)

    def pause_record(self, interrupt_id: str) -> PauseRecord | None:
        self._alive()
        rec: PauseRecord | None = self.service.ledger.get(interrupt_id)
        return rec

    def effect_count(self, run_id: str, key: str) -> int:
        return self.world.count(run_id, key)

    def run_status(self, run_id: str) -> str:
        self._alive()
        run = self.service.runs.get(run_id)
        return "unknown" if run is None else str(run.status.value)

    def published(self, run_id: str) -> tuple[PendingInterrupt, ...]:
        """The live pauses of a run, as published (the same token after a restart)."""
        self._alive()
        return tuple(self._publish(r) for r in self.service.ledger.by_run(run_id)
                     if r.state.phase in lc.LIVE)

    # -- internals -----------------------------------------------------------------------

    def _scripted(self, status: RunStatus) -> list[RunRecord]:
        """This harness's runs in ``status`` (a store may also hold runs of an
        :class:`~pausepoint.engine.embed.Engine`, which this harness does not drive)."""
        return [r for r in self.service.runs.with_status(status) if "script" in json.loads(r.state)]

    def _executing_runs(self) -> Sequence[RunRecord]:
        return self._scripted(RunStatus.RUNNING)

    def _publish(self, rec: PauseRecord) -> PendingInterrupt:
        token = None
        if self.hooks.remint:
            token, _kid = self.signer.mint(attrs.evolve(rec.claims, issued_at=self.clock.now()))
        return published(rec, token)

    def _report(self, run_id: str, events: Sequence[RunEvent]) -> Report:
        return Report(run_id=run_id, status=self.run_status(run_id),
                      events=tuple(e.kind.value for e in events),
                      pauses=self.published(run_id))

    def _load(self, run_id: str) -> tuple[RunRecord, dict[str, Any]]:
        run = self.service.runs.get(run_id)
        if run is None:
            raise PausepointError(ErrorCode.PAUSE_UNKNOWN, "lifecycle.states",
                                  f"no run {run_id!r}")
        state: dict[str, Any] = json.loads(run.state)
        return run, state

    def _save(self, run: RunRecord, state: dict[str, Any], status: RunStatus) -> RunRecord:
        """Write the run's progress under the epoch it was read with: a conditional write
        that a driver who lost the run cannot make (run.ownership.fencing)."""
        events: dict[RunStatus, runs.Event] = {
            RunStatus.RUNNING: self.owned.progress(run.epoch),
            RunStatus.PAUSED: runs.Suspend(run.epoch), RunStatus.DONE: runs.Finish(run.epoch),
            RunStatus.ERROR: runs.Fail(run.epoch)}
        new = self.owned.write(run, events[status], _state_json(state))
        if new is None:
            self._lost(run.run_id)
        assert new is not None
        return new

    def _lost(self, run_id: str) -> None:
        """This driver no longer owns the run: cancelled, or taken over."""
        self.owned.lost(run_id)

    def _continue(self, rec: PauseRecord, response: object) -> Report:
        """Continue the run of a consumed pause from its recorded turn."""
        run, state = self._load(rec.run_id)
        pc = int(state["pc"])
        if isinstance(runs.step(run.run_state, self.owned.continuation(
                self._belongs(rec, run.run_id, pc))), runs.Refusal):
            return self._report(rec.run_id, ())  # not paused, or a step the run has left
        if not self.owned.step_answered(rec):
            return self._report(rec.run_id, ())  # others still wait (multi.independent)
        if rec.claims.name != RECONCILE.name:
            state["pc"] = pc + 1
        for r in self.owned.step_pauses(rec):  # the answers, delivered
            state["responses"][r.interrupt_id] = self.owned.kept_answer(r.interrupt_id)
        state["responses"][rec.interrupt_id] = response
        return self._claim(run, state)

    def _belongs(self, rec: PauseRecord, run_id: str, pc: int) -> bool:
        """The pause ``rec`` was taken at step ``pc`` (run.continuation.belongs-to-step)."""
        return rec.interrupt_id.startswith(f"{run_id}/{pc}/")

    def _recover(self, run: RunRecord) -> runs.Recover:
        """The restart's take-over event for ``run`` (run.ownership.lease)."""
        return self.owned.recover()

    def _claim(self, run: RunRecord, state: dict[str, Any]) -> Report:
        """Take over the paused ``run`` for a continuation with continuation data ``state``
        and drive it (for variants that decide the continuation themselves)."""
        claimed = self.owned.take(run, self.owned.continuation(True), _state_json(state))
        if claimed is None:
            return self._report(run.run_id, ())  # another resume continues it: one winner
        self.trace.emit("continue", run=run.run_id)
        return self._drive(claimed)

    def _drive(self, owned: RunRecord) -> Report:
        """Execute the run this harness owns (under ``owned.epoch``) from its checkpoint until
        it pauses, ends, is cancelled -- or this harness loses it."""
        run_id = owned.run_id
        if self.hooks.driving is not None:
            self.hooks.driving(run_id)
        identity = RunIdentity(run_id, owned.root_run_id)
        try:
            events = self.runner.invoke(identity, lambda emit: self._execute(owned, emit))
        except SimulatedCrash:
            self.crash()
            return Report(run_id=run_id, status="stopped", events=())
        except Fenced:
            return self._report(run_id, ())
        except Interrupted:
            return self._release(owned)
        if events and events[-1].kind == EventKind.ERROR:  # it ended: not running, not re-run
            failed, state = self._load(run_id)
            if failed.status == RunStatus.RUNNING and failed.epoch == owned.epoch:
                try:
                    self._save(failed, state, RunStatus.ERROR)
                except (Fenced, InvocationCancelled):
                    pass  # lost meanwhile: its new owner decides
        return self._report(run_id, events)

    def _release(self, owned: RunRecord) -> Report:
        """The store failed under the run: let it go, still running, for a restart."""
        try:
            run = self.service.runs.get(owned.run_id)
            if run is not None:
                self.owned.write(run, runs.Release(owned.epoch))
            return self._report(owned.run_id, ())
        except PausepointError:  # still failing: the lease runs out by itself
            return Report(run_id=owned.run_id, status="stopped", events=())

    def _execute(self, owned: RunRecord, emit: Emit) -> None:
        try:
            self._body(owned, emit)
        except PausepointError as exc:
            if exc.code == ErrorCode.STORE_UNAVAILABLE:
                raise Interrupted() from exc
            raise

    def _body(self, owned: RunRecord, emit: Emit) -> None:
        svc = self.service
        run_id = owned.run_id
        while True:
            run, state = self._load(run_id)
            if run.status in runs.CANCELLED_OR_CANCELLING:
                raise InvocationCancelled()
            if run.epoch != owned.epoch or run.status != RunStatus.RUNNING:
                raise Fenced()
            script: list[dict[str, Any]] = state["script"]
            pc = int(state["pc"])
            step = script[pc] if pc < len(script) else {"op": "end"}
            op = step.get("op")
            if op == "end":
                self._save(run, state, RunStatus.DONE)
                self.trace.emit("execute", run=run_id)
                return
            if op == "effect":
                key = str(step["key"])
                jkey = _effect_key(pc, key)
                status = svc.effects.status(run_id, jkey)
                if status in (EffectStatus.FINISHED, EffectStatus.COMPENSATED):
                    state["pc"] = pc + 1  # done before: never run again (effect.at-most-once)
                    self._save(run, state, RunStatus.RUNNING)
                    self.trace.emit("execute", run=run_id)
                    continue
                if status == EffectStatus.STARTED:
                    self._open_recovery(run, state, pc, key)  # raises InvocationPaused
                    continue  # the entry changed meanwhile: look again
                emit(RunEvent(EventKind.TOOL_CALL, {"effect": key}))
                if not self.owned.begin_effect(run, jkey):
                    self._lost(run_id)  # a new epoch (cancel, take-over): never apply
                self.trace.emit("execute", run=run_id)

                fault = step.get("fault")
                if fault == Fault.CRASH_BEFORE_APPLY.value and pc not in state["fired"]:
                    self._fire(run, state, pc)
                self.world.apply(run_id, key)
                self.trace.emit("apply", run=run_id)
                if fault == Fault.CRASH_AFTER_APPLY.value and pc not in state["fired"]:
                    self._fire(run, state, pc)
                svc.effects.finish(run_id, jkey, run.epoch)
                self.trace.emit("finish", run=run_id)
                emit(RunEvent(EventKind.TOOL_RESULT, {"effect": key}))
                state["pc"] = pc + 1
                self._save(run, state, RunStatus.RUNNING)
                continue
            if op == "interrupt":
                if step.get("handlers"):
                    self._ask_in_handlers(run, state, pc, step)  # returns only if swallowed
                    state["pc"] = pc + 1  # the user's catch-all swallowed an error: go on
                    self._save(run, state, RunStatus.RUNNING)
                    continue
                self._ask(run, state, pc, step)
            if op == "gate":  # a policy decision; only "ask a person" pauses (gate.separate)
                verdict = ThresholdGate(float(step["allow_up_to"]), float(step["deny_over"]))(
                    "gate", {"amount": step["amount"]})
                if verdict.decision == Decision.ASK:
                    self._ask(run, state, pc, {"name": "approve", "payload": {
                        "amount": step["amount"], "reason": verdict.reason}})
                if verdict.decision == Decision.DENY:  # the run ends here, done, denial kept
                    state["denied"] = {"pc": pc, "reason": verdict.reason}
                    self._save(run, state, RunStatus.DONE)
                    return
                state["pc"] = pc + 1
                self._save(run, state, RunStatus.RUNNING)
                continue
            raise PausepointError(ErrorCode.INVALID_TRANSITION, "lifecycle.transition.table",
                                  f"unknown script step {step!r}")

    def _fire(self, run: RunRecord, state: dict[str, Any], pc: int) -> None:
        state["fired"] = sorted(set(state["fired"]) | {pc})
        self._save(run, state, RunStatus.RUNNING)
        raise SimulatedCrash()

    def _binding(self, run: RunRecord) -> PauseBinding:
        return current_run_binding(session_id=run.session_id, thread_id=run.thread_id,
                                   scope=run.scope, parent_run_id=run.parent_run_id)

    def _ask(self, run: RunRecord, state: dict[str, Any], pc: int,
             step: dict[str, Any]) -> None:
        svc = self.service
        names = step.get("names") or [step.get("name")]
        payloads = [step.get("payload", {})] * len(names)
        binding = self._binding(run)
        # no checkpoint named: the service binds the newest of the run's thread, or refuses
        checkpoint_id = None if step.get("checkpoint") == "none" else f"{run.run_id}@{pc}"
        turn = canonical_json({"run_id": run.run_id, "pc": pc})
        if len(names) > 1:  # all or nothing: every question is checked before any is taken
            for name, payload in zip(names, payloads, strict=True):
                svc.check_pause(binding=binding, name=name, payload=payload,
                                tool_call_id=str(step.get("tool_call_id", "")),
                                checkpoint_id=checkpoint_id)
        self.trace.emit("execute", run=run.run_id,
                        pauses=[f"{run.run_id}/{pc}/{j}" for j in range(len(names))])
        published: list[PendingInterrupt] = []
        try:
            for j, (name, payload) in enumerate(zip(names, payloads, strict=True)):
                rec = self._pause_owned(run, name=name, payload=payload,
                                        interrupt_id=f"{run.run_id}/{pc}/{j}",
                                        tool_call_id=str(step.get("tool_call_id", "")),
                                        checkpoint_id=checkpoint_id)
                if rec.state.phase == lc.Phase.PAUSED and not rec.state.turn_recorded \
                        and step.get("checkpoint_write") != "fail":
                    try:
                        rec = svc.record_turn(rec.interrupt_id, turn)
                        self.trace.emit("turn", run=run.run_id, pause=rec.interrupt_id)
                    except PausepointError:
                        self.trace.emit("turn", run=run.run_id, pause=rec.interrupt_id,
                                        failed=True)
                        rec = svc.ledger.get(rec.interrupt_id) or rec
                published.append(self._publish(rec))
            self._save(run, state, RunStatus.PAUSED)
        except InvocationCancelled:  # cancelled while asking: these pauses go with the run
            for p in published:
                self._cancel_quietly(p.interrupt_id)
            raise
        raise InvocationPaused(tuple(published))

    def _pause_owned(self, run: RunRecord, **pause: Any) -> PauseRecord:
        """:meth:`pausepoint.engine.owned.Ownership.pause`, this harness losing the run when
        it is refused."""
        try:
            return self.owned.pause(run, self._binding(run), **pause)
        except PausepointError as exc:
            if fencing_refused(exc):
                self._lost(run.run_id)
            raise

    def _cancel_quietly(self, interrupt_id: str) -> None:
        try:
            self.service.cancel_pause(interrupt_id)
        except PausepointError:
            pass  # decided otherwise already

    def _ask_in_handlers(self, run: RunRecord, state: dict[str, Any], pc: int,
                         step: dict[str, Any]) -> None:
        """Ask inside user code: ``try / except Exception / finally`` around the pause point,
        each handler applying its key once to the world when it runs.  The pause signal is no
        ``Exception``: it passes the catch-all and runs the cleanup on its way to the runner
        (pause.signal.base-exception, pause.signal.single-catch).  Returns only when the
        catch-all swallowed an ordinary error (a refused pause, say)."""
        handlers: dict[str, Any] = step["handlers"]
        catch_all, cleanup = handlers.get("catch_all"), handlers.get("cleanup")
        try:
            self._ask(run, state, pc, step)
        except Exception:
            if not catch_all:
                raise
            self.world.apply(run.run_id, str(catch_all))
        finally:
            if cleanup:
                self.world.apply(run.run_id, str(cleanup))

    def _in_doubt(self, run: RunRecord, jkey: str) -> bool:
        """The entry ``jkey`` journalled started is in doubt for this driver: an earlier epoch
        started it and stopped.  Started under a later epoch, it is a new owner's effect in
        flight: this driver lost the run and stops (run.ownership.fencing).  False when the
        entry is no longer started (finished or settled meanwhile)."""
        doubt = self.owned.doubt(run, jkey)
        if doubt == Doubt.FENCED:
            self._lost(run.run_id)
        return doubt == Doubt.IN_DOUBT

    def _recovery_index(self, run_id: str, pc: int) -> int:
        """The number of the recovery pause to open at step ``pc``: a recovery pause of this
        step still live was opened by a driver that stopped before it finished, so finish that
        one rather than open a second (run.restart.concurrent); else the next number."""
        return self.owned.recovery_index(run_id, pc)

    def _open_recovery(self, run: RunRecord, state: dict[str, Any], pc: int, key: str) -> None:
        """An effect journalled started and not finished: its outcome is unknown.  Open a
        recovery pause in unknown_outcome; never retry (effect.unknown-outcome)."""
        if not self._in_doubt(run, _effect_key(pc, key)):
            return
        n = self._recovery_index(run.run_id, pc)
        try:
            rec = self.owned.open_recovery(
                run, self._binding(run), interrupt_id=f"{run.run_id}/{pc}/recover/{n}",
                checkpoint_id=f"{run.run_id}@{pc}/recover/{n}",
                payload={"run_id": run.run_id, "effect": _effect_key(pc, key)},
                turn=canonical_json({"run_id": run.run_id, "pc": pc}),
                opened=lambda r: self.trace.emit("recover", run=run.run_id,
                                                 pause=r.interrupt_id))
        except PausepointError as exc:
            if fencing_refused(exc):
                self._lost(run.run_id)
            raise
        self._save(run, state, RunStatus.PAUSED)
        raise InvocationPaused((self._publish(rec),))
