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

The harness is a thin interpreter of scripts on the embedding API
(:class:`pausepoint.engine.embed.Engine`): a script runs as the agent function
``pausepoint.script`` whose input is the script -- ``effect`` is ``ctx.effect``, ``interrupt``
is ``ctx.ask_all`` (inside a real ``try / except Exception / finally`` when it has handlers),
``gate`` is a :class:`~pausepoint.core.gate.ThresholdGate` and then ``ctx.ask`` -- each step
numbered by its index in the script.  Everything at the run level (owning and fencing, the
continuation of a step, answers kept, stalled runs, recovery pauses, cancel) is the engine's.
The harness keeps the script's mapping, its report of each operation, the world the effects
change and the simulated crash.

The harness is what the conformance suite's reference adapter drives and what the stateful
tests compare with :mod:`pausepoint.system.model`: its semantics are the model's (a run
continues from its recorded turn; an effect journalled finished is skipped; an effect
journalled started and not finished when the run stopped opens a recovery pause in
``unknown_outcome`` instead of being retried).  The model has no gates.
"""

from __future__ import annotations

import functools
import sqlite3
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

import attrs
import pydantic

from pausepoint.core import lifecycle as lc
from pausepoint.core.clauses import ErrorCode
from pausepoint.core.errors import PausepointError
from pausepoint.core.gate import Decision, ThresholdGate
from pausepoint.core.ports import Clock, PauseRecord, RunRecord, Signer
from pausepoint.core.registry import Interaction
from pausepoint.core.script import Fault, Step, from_json, to_json
from pausepoint.core.tokens import KeyRing
from pausepoint.engine.clock import ManualClock
from pausepoint.engine.compose import Deployment, compose
from pausepoint.engine.embed import Engine, RunContext, RunResult
from pausepoint.engine.owned import Ownership, published
from pausepoint.engine.run import (
    PendingInterrupt,
    Runner,
)
from pausepoint.engine.service import PauseService
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


class SimulatedCrash(BaseException):
    """The process dies here (a scripted fault).  Nothing in the run may catch it."""


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


SCRIPT_AGENT = "pausepoint.script"
"""The agent a harness runs its scripts as (its input: the script, in JSON form)."""


class ScriptEngine(Engine):
    """The engine under a :class:`Harness`: it runs scripts as the agent ``pausepoint.script``
    and reports to the harness's trace, hooks and world.  The deliberately broken variants
    refine its seams (``_recover``, ``_belongs``, ``_doubt``, ``_recovery_index``,
    ``_continue``, ``_drive``, ``_ask``, ``_recoverable``)."""

    keeps_answer_first = True  # the answer commits first (_answer_kept)
    input_inline_max = 2**62  # the script stays in the run's continuation data: read by step

    def __init__(self, harness: Harness, deployment: Deployment) -> None:
        super().__init__(deployment, {SCRIPT_AGENT: harness._interpret}, clock=harness.clock,
                         owner=harness.owner, lease_ms=harness.lease_ms, raise_errors=False)
        self.units = harness.units
        self.harness = harness
        self.trace = harness.trace
        self.runner = harness.runner
        self.answered: PauseRecord | None = None

    def _started(self, run: RunRecord, data: Any) -> None:
        self.trace.emit("start", run=run.run_id, parent=run.parent_run_id or None,
                        script=data, ttl=self.harness.ttl_ms)

    def _stalled(self) -> list[PauseRecord]:
        return super()._stalled() if self.harness.hooks.continue_stalled else []

    def _answers_kept(self, rec: PauseRecord) -> bool:
        return not self.harness.hooks.wait_for_answers or super()._answers_kept(rec)

    def _answer_kept(self, rec: PauseRecord) -> None:
        # the consume and its answer kept: one commit; the continuation's claim another (as
        # the model's Continue is a step of its own), so sibling resumers see each other's
        # answers and a death between the two leaves a stalled run a restart continues
        self.deployment.service.commit_so_far()
        self.answered = rec
        if self.harness.hooks.answer_kept is not None:
            self.harness.hooks.answer_kept(rec)

    def _drive(self, owned: RunRecord) -> RunResult:
        if self.harness.hooks.driving is not None:
            self.harness.hooks.driving(owned.run_id)
        return super()._drive(owned)

    def _publish(self, rec: PauseRecord) -> PendingInterrupt:
        return self.harness._publish(rec)

    def _outstanding(self, run_id: str, asked: tuple[PendingInterrupt, ...] | None = None
                     ) -> tuple[PendingInterrupt, ...]:
        return self.harness.published(run_id)  # read: a remint publishes new tokens

    def _script_step(self, state: dict[str, Any], n: int) -> dict[str, Any]:
        script: list[dict[str, Any]] = state["input"]
        return script[n] if n < len(script) else {}

    def _checkpoint_id(self, run: RunRecord, state: dict[str, Any], step: int) -> str | None:
        # no checkpoint named: the service binds the newest of the run's thread, or refuses
        if self._script_step(state, step).get("checkpoint") == "none":
            return None
        return super()._checkpoint_id(run, state, step)

    def _effect_finished(self) -> None:
        # the effect journalled finished and the run moved past it: one commit of its own, as
        # the model's FinishEffect is one step -- a crash before the next pause's commit then
        # finds the step done, not in doubt (and the trace's unit in doubt holds only the ask)
        self.deployment.service.commit_so_far()

    def _turn_with_pause(self, run: RunRecord, state: dict[str, Any], step: int) -> str | None:
        if self._script_step(state, step).get("checkpoint_write") == "fail":
            return None  # the scripted fault: the turn is never written
        return super()._turn_with_pause(run, state, step)

    def _record_turn(self, run: RunRecord, state: dict[str, Any], step: int,
                     rec: PauseRecord) -> PauseRecord:
        if self._script_step(state, step).get("checkpoint_write") == "fail":
            return rec  # the scripted fault: the turn is never written
        return super()._record_turn(run, state, step, rec)


class Harness:
    engine_class: type[ScriptEngine] = ScriptEngine
    """The engine the harness runs its scripts on (a broken variant may swap it)."""

    units: bool = True
    """The engine's :attr:`~pausepoint.engine.embed.Engine.units`: each operation one unit of
    work, its trace events in it.  ``False`` (a broken variant's crash run): every write its
    own commit, so a death can fall between writes a unit keeps together."""

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
        self._runner = Runner()
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
        """Report this harness's, its engine's and its service's operations to ``sink``."""
        self.trace = sink
        self.engine.trace = sink
        self.service.trace = sink
        return self

    def _compose(self, bundle: StoreBundle) -> Deployment:
        deployment = compose(store=bundle, signer=self.signer, interactions=self.interactions,
                             clock=self.clock, ttl_ms=self.ttl_ms)
        deployment.service.trace = self.trace
        return deployment

    @property
    def deployment(self) -> Deployment:
        return self.engine.deployment

    @deployment.setter
    def deployment(self, deployment: Deployment) -> None:
        self.engine = self.engine_class(self, deployment)

    @property
    def runner(self) -> Runner:
        """The runner every invocation of a run goes through."""
        return self._runner

    @runner.setter
    def runner(self, runner: Runner) -> None:
        self._runner = runner
        self.engine.runner = runner

    @property
    def service(self) -> PauseService:
        return self.deployment.service

    @property
    def owned(self) -> Ownership:
        """The run-level writes of this harness's engine as a run's driver."""
        return self.engine.owned

    # -- the script, as an agent function --------------------------------------------------

    def _interpret(self, ctx: RunContext, script: list[dict[str, Any]]) -> Any:
        """Run ``script`` as an agent function: each step by its index, ``step=pc``."""
        for pc, step in enumerate(script):
            op = step.get("op")
            if op == "end":
                return None
            if op == "effect":
                key, fault = str(step["key"]), step.get("fault")
                ctx.effect(_effect_key(pc, key),
                           functools.partial(self._apply, ctx.run_id, pc, key, fault), step=pc)
            elif op == "interrupt":
                names = step.get("names") or [step.get("name")]
                questions = [(name, step.get("payload", {})) for name in names]
                tool_call_id = str(step.get("tool_call_id", ""))
                if step.get("handlers"):
                    self._ask_in_handlers(ctx, pc, step["handlers"], questions, tool_call_id)
                else:
                    ctx.ask_all(questions, step=pc, tool_call_id=tool_call_id)
            elif op == "gate":  # a policy decision; only "ask a person" pauses (gate.separate)
                verdict = ThresholdGate(float(step["allow_up_to"]), float(step["deny_over"]))(
                    "gate", {"amount": step["amount"]})
                if verdict.decision == Decision.ASK:
                    ctx.ask("approve", {"amount": step["amount"], "reason": verdict.reason},
                            step=pc)
                if verdict.decision == Decision.DENY:  # the run ends here, done, denial kept
                    return {"denied": {"pc": pc, "reason": verdict.reason}}
            else:
                raise PausepointError(ErrorCode.INVALID_TRANSITION, "lifecycle.transition.table",
                                      f"unknown script step {step!r}")
        return None

    def _apply(self, run_id: str, pc: int, key: str, fault: object) -> None:
        """The effect itself: the world changes -- unless the scripted fault kills the process
        before or after, the first time the step executes."""
        if fault == Fault.CRASH_BEFORE_APPLY.value:
            self._fire(run_id, pc)
        # the world has no unit: the event is written before the apply and confirmed after it
        # (a crash in between leaves it in doubt), apart from the run's unit of work
        self.trace.emit("apply", run=run_id)
        self.trace.commit_so_far(lambda: self.world.apply(run_id, key))
        if fault == Fault.CRASH_AFTER_APPLY.value:
            self._fire(run_id, pc)

    def _fire(self, run_id: str, pc: int) -> None:
        """The scripted fault of step ``pc``: the process dies, once (the mark is durable)."""
        mark = f"{run_id}/{pc}#fault-fired"
        if self.service.payloads.get(mark) is None:
            self.service.payloads.record(mark, "true")
            self.service.commit_so_far()  # the mark survives the crash it fires
            raise SimulatedCrash()

    def _ask_in_handlers(self, ctx: RunContext, pc: int, handlers: dict[str, Any],
                         questions: list[tuple[Any, Any]], tool_call_id: str) -> None:
        """Ask inside user code: ``try / except Exception / finally`` around the pause point,
        each handler applying its key to the world when it runs.  The pause signal is no
        ``Exception``: it passes the catch-all and runs the cleanup on its way to the runner
        (pause.signal.base-exception, pause.signal.single-catch).  The catch-all swallows an
        ordinary error (a refused pause, say), and the run goes on.  The handlers run on the
        way out of the pause point only: when a replay passes a step an earlier drive already
        went through, neither applies its key again (a resume goes on after the pause point,
        outside the ``try``: the protocol's ``handlers`` row)."""
        catch_all, cleanup = handlers.get("catch_all"), handlers.get("cleanup")
        again = ctx.passed(pc)
        try:
            ctx.ask_all(questions, step=pc, tool_call_id=tool_call_id)
        except Exception:
            if not catch_all:
                raise
            if not again:
                self.world.apply(ctx.run_id, str(catch_all))
        finally:
            if cleanup and not again:
                self.world.apply(ctx.run_id, str(cleanup))

    # -- operations ----------------------------------------------------------------------

    def _alive(self) -> None:
        if self.crashed:
            raise PausepointError(ErrorCode.STORE_UNAVAILABLE, "durability.restart",
                                  "the harness crashed; restart it first")

    def _run(self, run_id: str, op: Callable[[], RunResult]) -> Report:
        """An engine operation as the harness reports it; the process dies in a scripted
        fault."""
        try:
            return _report(op())
        except SimulatedCrash:
            self.crash()
            return Report(run_id=run_id, status="stopped", events=())

    def start(self, script: Sequence[Step | Mapping[str, Any]], *, run_id: str,
              parent_run_id: str | None = None, session_id: str = "session",
              scope: str = "default", thread_id: str | None = None) -> Report:
        with self._lock:
            self._alive()
            steps = [_step_json(s) for s in script]
            return self._run(run_id, lambda: self.engine.start(
                SCRIPT_AGENT, steps, run_id=run_id, parent_run_id=parent_run_id,
                session_id=session_id, scope=scope, thread_id=thread_id))

    def resume(self, token: object, response: object, *, session_id: str, scope: str,
               responder: str = "", run_id: str | None = None) -> Report:
        with self._lock:
            self._alive()
            self.engine.answered = None
            try:
                return _report(self.engine.resume(token, response, session_id=session_id,
                                                  scope=scope, responder=responder,
                                                  run_id=run_id))
            except SimulatedCrash:  # the process died while continuing: nothing to replay
                self.crash()
                rec = self.engine.answered
                return Report(run_id="" if rec is None else rec.run_id, status="stopped",
                              interrupt_id="" if rec is None else rec.interrupt_id)

    def cancel(self, run_id: str) -> Report:
        with self._lock:
            self._alive()
            return _report(self.engine.cancel(run_id))

    def reconcile(self, interrupt_id: str, resolution: str) -> Report:
        with self._lock:
            self._alive()
            return _report(self.engine.reconcile(interrupt_id, resolution))

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
        """Start again from durable state (:meth:`pausepoint.engine.embed.Engine.restart`):
        runs that were executing are recovered from their checkpoint, an effect in doubt
        opening a recovery pause instead of being retried; runs stalled after a consume go
        on with the answers kept."""
        with self._lock:
            if self.crashed:
                self.deployment = self._compose(self._open_bundle())
                self.crashed = False
            try:
                return [_report(r) for r in self.engine.restart()]
            except SimulatedCrash:
                self.crash()
                return [Report(run_id="", status="stopped")]

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

    def _publish(self, rec: PauseRecord) -> PendingInterrupt:
        token = None
        if self.hooks.remint:
            token, _kid = self.signer.mint(attrs.evolve(rec.claims, issued_at=self.clock.now()))
        return published(rec, token)


def _report(result: RunResult) -> Report:
    return Report(run_id=result.run_id, status=str(result.status.value), events=result.events,
                  pauses=result.pauses, replayed=result.replayed,
                  interrupt_id=result.interrupt_id)
