"""The embedding API: an agent written as a plain Python function, run by an :class:`Engine`
opened on any store.

An *agent* is a function ``agent(ctx, input) -> output``.  Inside it, ``ctx.ask(name, payload)``
stops the run to ask a person (a registered interaction) and returns the *validated* answer --
the instance of the interaction's response model, from a strict check -- once someone
answered; ``ctx.effect(key, fn)`` runs a side effect at most once, journalled before and after,
and returns its result.

The engine executes an agent by *replay*: each time the run goes on (its start, a resume's
continuation, a restart's recovery) the function is called again from the top with the answers
and effect results recorded so far, so ``ask`` returns recorded answers and ``effect`` recorded
results until the run reaches new ground.  The function must therefore be deterministic given
its input, its answers and its effects' results (the rule of Temporal's workflows and of
LangGraph's nodes).

The run level is the reference's: the run table (:mod:`pausepoint.core.runs`), an owner with a
lease and an epoch for whoever drives a run, every run write conditional on the epoch, the
effect journal's start a conditional insert under it.  An effect whose process died inside it
is never retried: the run opens a recovery pause in ``unknown_outcome`` that an operator
reconciles (:meth:`Engine.reconcile`) before it is resumed.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

import attrs

from pausepoint.core import lifecycle as lc
from pausepoint.core import runs
from pausepoint.core.canonical import canonical_json
from pausepoint.core.clauses import ErrorCode
from pausepoint.core.errors import PausepointError
from pausepoint.core.ports import Clock, EffectStatus, RunRecord, RunStatus, Signer
from pausepoint.core.registry import RECONCILE, Interaction
from pausepoint.core.tokens import KeyRing
from pausepoint.engine.clock import SystemClock
from pausepoint.engine.compose import Deployment, compose
from pausepoint.engine.owned import Doubt, Lost, Ownership, fencing_refused, published
from pausepoint.engine.run import (
    InvocationCancelled,
    InvocationPaused,
    PendingInterrupt,
    RunIdentity,
    Runner,
    current_run_binding,
)
from pausepoint.engine.service import ResumeRequest, RunView
from pausepoint.stores import open_store
from pausepoint.stores.base import StoreBundle

T = TypeVar("T")
Agent = Callable[["RunContext", Any], Any]
"""``agent(ctx, input) -> output``: a plain function; ``input`` and ``output`` are JSON."""


@attrs.frozen
class RunResult:
    """Where a run stands after an operation: its status, its output once ``done``, and the
    questions it waits on (each with the token to answer it)."""

    run_id: str
    status: RunStatus
    output: Any = None
    pauses: tuple[PendingInterrupt, ...] = ()


class RunContext:
    """What an agent function sees of its run: ``ask`` and ``effect``."""

    def __init__(self, engine: Engine, run: RunRecord, state: dict[str, Any]) -> None:
        self._engine = engine
        self._run = run
        self._state = state
        self._asked = 0
        self.run_id = run.run_id

    def ask(self, interaction: str, payload: Any) -> Any:
        """Ask a person through the registered ``interaction``: the run pauses here, and once
        the question is answered, the run goes on with this call returning the answer,
        validated strictly against the interaction's response model."""
        n = self._asked
        self._asked += 1
        answers: dict[str, Any] = self._state["answers"]
        registered = self._engine.deployment.service.interaction(interaction)
        if str(n) in answers and registered is not None:
            return registered.validated_response(answers[str(n)])
        self._engine._pause(self._run, self._state, n, interaction, payload)
        raise AssertionError("unreachable: _pause raises")  # pragma: no cover

    def effect(self, key: str, fn: Callable[[], T]) -> T:
        """Run ``fn`` (a side effect) at most once for this run and ``key``; its result must be
        JSON.  Journalled started before it runs and finished after it returns: if the process
        dies inside it, the outcome is unknown and the run asks an operator to reconcile it
        instead of running it again."""
        done: dict[str, Any] = self._state["effects"]
        if key in done:
            result: T = done[key]
            return result
        self._run = self._engine._effect(self._run, self._state, key, fn, self._asked)
        out: T = done[key]
        return out


class Engine:
    """Runs agent functions on a store: :meth:`start`, :meth:`resume`, :meth:`cancel`,
    :meth:`restart`, :meth:`reconcile`, :meth:`status`.  Several engines (processes, servers)
    may share one durable store; give each its own ``owner`` name.

    **One commit per operation.**  :meth:`start` (the run created and driven to its first
    pause: the pause, its turn, the run suspended) and :meth:`resume` (the consume, the
    continuation's claim of the run, the drive to the next pause or the end) each write in one
    unit of work of the store (:class:`pausepoint.stores.base.Units`): one durable commit, one
    fsync on SQLite.  The single winner is unchanged -- the consume is the ledger's conditional
    ``UPDATE`` inside the unit -- and a crash before the commit leaves nothing of the
    operation, so the answer's retry works as the first try did.  An effect is the one
    boundary that commits early: ``ctx.effect`` commits the unit so far, its journalled start
    included, before ``fn`` runs (``effect.journal.bracket``: an effect never runs unjournalled),
    and the rest -- its finish, the run's progress, the drive on -- goes on in the unit's next
    transaction.

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

    def __init__(self, deployment: Deployment, agents: Mapping[str, Agent], *, clock: Clock,
                 owner: str, lease_ms: int) -> None:
        self.deployment = deployment
        self.agents = dict(agents)
        self.clock = clock
        self.owner = owner
        self.lease_ms = lease_ms
        self.owned = Ownership(deployment.service, owner, clock, lease_ms)
        """The run-level writes of this engine as a run's driver."""
        self._runner = Runner()

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
              scope: str = "default", parent_run_id: str | None = None) -> RunResult:
        """Start ``agent`` on its input ``data`` (JSON) as the run ``run_id`` and drive it until
        it pauses or ends."""
        if agent not in self.agents:
            raise PausepointError(ErrorCode.INVALID_TRANSITION, "run.lifecycle.table",
                                  f"no agent {agent!r} is registered with this engine")
        state = {"agent": agent, "input": data, "answers": {}, "effects": {}, "step": 0}
        return self._unit(lambda: self._drive(self.owned.start(RunRecord(
            run_id=run_id, root_run_id=run_id, parent_run_id=parent_run_id or "",
            session_id=session_id, thread_id=run_id, scope=scope, status=RunStatus.RUNNING,
            state=canonical_json(state)))))

    def resume(self, token: str, response: Any, *, session_id: str = "session",
               scope: str = "default", responder: str = "") -> RunResult:
        """Answer a question: exactly once per pause (a repeat of the same answer replays), and
        the run goes on from where it asked."""
        return self._unit(lambda: self._resume(token, response, ResumeRequest(
            session_id=session_id, scope=scope, responder=responder)))

    def _resume(self, token: str, response: Any, request: ResumeRequest) -> RunResult:
        svc = self.deployment.service
        out = svc.resume(token, response, request)
        rec = out.record
        # a replay goes on too: if the winner died between its consume and its continuation,
        # the retry of the same answer is the only place the answer can come from; if the
        # winner went on (or still drives), the run table refuses the claim below
        run = svc.runs.get(rec.run_id)
        if run is None:
            return self._result(rec.run_id)
        state: dict[str, Any] = json.loads(run.state)
        step = int(state["step"])
        if rec.claims.name != RECONCILE.name:
            state["answers"][str(step)] = response
        # refused when not paused or paused at a step it has left; None also when another
        # resume continues it (one winner)
        claimed = self.owned.take(run, self.owned.continuation(
            rec.interrupt_id.startswith(f"{run.run_id}/{step}/")), canonical_json(state))
        if claimed is None:
            return self._result(rec.run_id)
        return self._drive(claimed)

    def cancel(self, run_id: str) -> RunResult:
        """Cancel the run, its questions and its child runs; refused for a run that ended."""
        self.owned.cancel(run_id)
        return self._result(run_id)

    def restart(self) -> list[RunResult]:
        """Go on with every run whose driver stopped (its lease released, run out, or this
        owner's own from before a crash), and finish every cancel whose canceller stopped."""
        svc = self.deployment.service
        results = [self._result(run_id) for run_id in self.owned.finish_cancels()]
        for run in svc.runs.with_status(RunStatus.RUNNING):
            if json.loads(run.state).get("agent") not in self.agents:
                continue  # not one of this engine's
            result = self._unit(self._recovering(run))  # one unit per run
            if result is not None:
                results.append(result)
        return results

    def _recovering(self, run: RunRecord) -> Callable[[], RunResult | None]:
        def recover() -> RunResult | None:
            taken = self.owned.take(run, self.owned.recover())
            return None if taken is None else self._drive(taken)
        return recover

    def reconcile(self, interrupt_id: str, resolution: str) -> RunResult:
        """Settle an effect in doubt (``applied``, ``not_applied`` or ``compensated``); then
        resume its recovery pause to go on."""
        rec = self.deployment.service.reconcile(interrupt_id, lc.Resolution(resolution))
        return self._result(rec.run_id)

    def status(self, run_id: str) -> RunView:
        """What a person would be told about the run (``status.distinguishes``)."""
        return self.deployment.service.status(run_id)

    # -- internals ----------------------------------------------------------------------------

    def _unit(self, work: Callable[[], T]) -> T:
        """Run an operation in one unit of work of the store: its writes -- a start's run and
        first pause, a resume's consume, continuation claim and next pause or end -- commit
        once, together, or not at all (a crash before the commit leaves nothing, and the
        answer's retry works as the first try).  An effect commits the unit so far first (see
        :class:`Engine`).  A verdict the operation raises -- the agent's own error, after the
        run was ended in error; a refusal, after an expiry decided on the way -- is raised
        once the unit committed what it decided; a store failure commits nothing."""
        failed: Exception | None = None
        with self.deployment.service.unit_of_work():
            try:
                return work()
            except PausepointError as exc:
                if exc.code is ErrorCode.STORE_UNAVAILABLE:
                    raise
                failed = exc
            except Exception as exc:  # the agent's own error
                failed = exc
        assert failed is not None
        raise failed

    def _result(self, run_id: str, output: Any = None) -> RunResult:
        svc = self.deployment.service
        run = svc.runs.get(run_id)
        if run is None:
            raise PausepointError(ErrorCode.PAUSE_UNKNOWN, "lifecycle.states",
                                  f"no run {run_id!r}")
        if run.status == RunStatus.DONE and output is None:
            output = json.loads(run.state).get("output")
        pauses = tuple(published(r) for r in svc.ledger.by_run(run_id)
                       if r.state.phase in lc.LIVE)
        return RunResult(run_id=run_id, status=run.status, output=output, pauses=pauses)

    def _save(self, run: RunRecord, state: dict[str, Any], event: runs.Event) -> RunRecord:
        new = self.owned.write(run, event, canonical_json(state))
        if new is None:
            raise Lost()
        return new

    def _drive(self, owned: RunRecord) -> RunResult:
        state: dict[str, Any] = json.loads(owned.state)
        agent = self.agents[state["agent"]]
        box: dict[str, Any] = {}

        def body(_emit: Any) -> None:
            ctx = RunContext(self, owned, state)
            try:
                box["output"] = agent(ctx, state["input"])
            except Exception as exc:
                box["error"] = exc
                raise
            box["run"] = ctx._run

        try:
            self._runner.invoke(RunIdentity(owned.run_id, owned.root_run_id), body)
        except Lost:
            return self._result(owned.run_id)
        if "run" in box:  # it returned: done
            state["output"] = box["output"]
            try:
                self._save(box["run"], state, runs.Finish(owned.epoch))
            except Lost:
                pass
            return self._result(owned.run_id, box["output"])
        if "error" in box:  # the agent failed: the run ends in error, the caller is told
            current = self.deployment.service.runs.get(owned.run_id)
            if current is not None and current.epoch == owned.epoch and \
                    current.status == RunStatus.RUNNING:
                try:
                    self._save(current, json.loads(current.state), runs.Fail(owned.epoch))
                except Lost:
                    pass
            raise box["error"]
        return self._result(owned.run_id)

    def _effect(self, run: RunRecord, state: dict[str, Any], key: str,
                fn: Callable[[], Any], asked: int) -> RunRecord:
        svc = self.deployment.service
        current = svc.runs.get(run.run_id)
        if current is None or current.status in runs.CANCELLED_OR_CANCELLING:
            raise InvocationCancelled()
        status = svc.effects.status(run.run_id, key)
        if status == EffectStatus.STARTED:  # a process died inside it: never run it again
            doubt = self.owned.doubt(run, key)
            if doubt == Doubt.SETTLED:  # finished or settled meanwhile: look again
                return self._effect(run, state, key, fn, asked)
            if doubt == Doubt.FENCED:  # a new owner's effect in flight: this driver lost it
                self.owned.lost(run.run_id)
            self._pause(run, state, asked, RECONCILE.name,
                        {"run_id": run.run_id, "effect": key}, recovering=True)
        if status in (EffectStatus.FINISHED, EffectStatus.COMPENSATED):
            state["effects"][key] = None  # settled by an operator: its result is unknown
            return self._save(run, state, self.owned.progress(run.epoch))
        if not self.owned.begin_effect(run, key):  # a new epoch, or the lease ran out
            self.owned.lost(run.run_id, run.epoch)
        svc.commit_so_far()  # the journal's start is durable before fn runs (bracket)
        result = fn()
        state["effects"][key] = result
        saved = self._save(run, state, self.owned.progress(run.epoch))
        svc.effects.finish(run.run_id, key, run.epoch)
        return saved

    def _pause(self, run: RunRecord, state: dict[str, Any], n: int, interaction: str,
               payload: Any, recovering: bool = False) -> None:
        """Take the pause for question ``n`` (or a recovery pause), record the turn, let the
        run go and raise the pause signal."""
        svc = self.deployment.service
        binding = current_run_binding(session_id=run.session_id, thread_id=run.thread_id,
                                      scope=run.scope, parent_run_id=run.parent_run_id)
        # only the engine's own recovery may name the reserved interaction (an agent asking
        # for it is refused interaction_unregistered)
        prior = [r for r in svc.ledger.by_run(run.run_id)
                 if r.interrupt_id.startswith(f"{run.run_id}/{n}/recover/")] if recovering else []
        live = [r for r in prior if r.state.phase in lc.LIVE]
        suffix = (f"recover/{len(prior) - len(live)}" if recovering else "0")
        turn = canonical_json({"step": n})
        try:  # a pause only while this driver owns the run (run.ownership.fencing)
            if recovering:
                rec = self.owned.open_recovery(
                    run, binding, interrupt_id=f"{run.run_id}/{n}/{suffix}",
                    checkpoint_id=f"{run.run_id}@{n}/{suffix}", payload=payload, turn=turn)
            else:  # the pause and its turn: one unit
                rec = self.owned.pause(run, binding, name=interaction, payload=payload,
                                       interrupt_id=f"{run.run_id}/{n}/{suffix}",
                                       checkpoint_id=f"{run.run_id}@{n}", turn=turn)
        except PausepointError as exc:
            if fencing_refused(exc):
                self.owned.lost(run.run_id)
            raise
        if not rec.state.turn_recorded:
            rec = svc.record_turn(rec.interrupt_id, turn)
        state["step"] = n
        self._save(run, state, runs.Suspend(run.epoch))
        raise InvocationPaused((published(rec),))
