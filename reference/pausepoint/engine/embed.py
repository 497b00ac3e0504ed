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
from pausepoint.core.ports import Clock, EffectStatus, PauseRecord, RunRecord, RunStatus, Signer
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
        return self.ask_all([(interaction, payload)])[0]

    def ask_all(self, questions: Sequence[tuple[str, Any]]) -> list[Any]:
        """Ask several questions at once, each ``(interaction, payload)``: every one is checked
        before any is taken, so they are all asked or none is (a refusal raises
        :class:`~pausepoint.core.errors.PausepointError`); each is answered on its own, an
        answer disturbing none of the others, and the run goes on once every one is answered,
        this call returning their validated answers in order (multi.independent)."""
        if not questions:
            raise ValueError("ask_all needs at least one question")
        n = self._asked
        self._asked += 1
        answers: dict[str, Any] = self._state["answers"]
        svc = self._engine.deployment.service
        ids = [f"{self.run_id}/{n}/{j}" for j in range(len(questions))]
        registered = [svc.interaction(name) for name, _payload in questions]
        if all(i in answers for i in ids) and None not in registered:
            return [r.validated_response(answers[i])  # type: ignore[union-attr]
                    for r, i in zip(registered, ids, strict=True)]
        self._engine._pause(self._run, self._state, n, questions)
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
    may share one durable store; give each its own ``owner`` name."""

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
        return self._drive(self.owned.start(RunRecord(
            run_id=run_id, root_run_id=run_id, parent_run_id=parent_run_id or "",
            session_id=session_id, thread_id=run_id, scope=scope, status=RunStatus.RUNNING,
            state=canonical_json(state))))

    def resume(self, token: str, response: Any, *, session_id: str = "session",
               scope: str = "default", responder: str = "") -> RunResult:
        """Answer a question: exactly once per pause (a repeat of the same answer replays), and
        the run goes on from where it asked."""
        svc = self.deployment.service
        out = svc.resume(token, response, ResumeRequest(session_id=session_id, scope=scope,
                                                        responder=responder))
        rec = out.record
        # kept until the continuation: if this process dies before it, a restart goes on with
        # it.  A replay goes on too: if the winner died between its consume and its
        # continuation, the retry of the same answer is the only place the answer can come
        # from; if the winner went on (or still drives), the run table refuses the claim
        self.owned.keep_answer(rec, canonical_json(response))
        if not (self.owned.step_answered(rec) and self.owned.answers_kept(rec)):
            return self._result(rec.run_id)  # another question of the step is still awaited
        return self._continue(rec)

    def cancel(self, run_id: str) -> RunResult:
        """Cancel the run, its questions and its child runs; refused for a run that ended."""
        self.deployment.service.cancel_run(run_id, owner=self.owner)
        return self._result(run_id)

    def restart(self) -> list[RunResult]:
        """Go on with every run whose driver stopped (its lease released, run out, or this
        owner's own from before a crash)."""
        svc = self.deployment.service
        results = []
        for run in svc.runs.with_status(RunStatus.RUNNING):
            if json.loads(run.state).get("agent") not in self.agents:
                continue  # not one of this engine's
            taken = self.owned.take(run, self.owned.recover())
            if taken is not None:
                results.append(self._drive(taken))
        # paused runs whose every question was consumed, but whose resumer died before it
        # continued them: go on with the answers kept (or wait for a retry to bring one lost)
        for run in svc.runs.with_status(RunStatus.PAUSED):
            state = json.loads(run.state)
            if state.get("agent") not in self.agents:
                continue
            rec = self.owned.stalled(run.run_id, state["step"])
            if rec is None:
                continue
            if not self.owned.answers_kept(rec):
                self.owned.await_answers(rec)
                continue
            results.append(self._continue(rec))
        return results

    def reconcile(self, interrupt_id: str, resolution: str) -> RunResult:
        """Settle an effect in doubt (``applied``, ``not_applied`` or ``compensated``); then
        resume its recovery pause to go on."""
        rec = self.deployment.service.reconcile(interrupt_id, lc.Resolution(resolution))
        return self._result(rec.run_id)

    def status(self, run_id: str) -> RunView:
        """What a person would be told about the run (``status.distinguishes``)."""
        return self.deployment.service.status(run_id)

    # -- internals ----------------------------------------------------------------------------

    def _continue(self, rec: PauseRecord) -> RunResult:
        """Continue the run of the consumed pause ``rec`` with the answers kept for its step --
        only if it is paused at that step (run.continuation.belongs-to-step), and only once
        (one winner among resumers and restarters)."""
        svc = self.deployment.service
        run = svc.runs.get(rec.run_id)
        if run is None:
            return self._result(rec.run_id)
        state: dict[str, Any] = json.loads(run.state)
        for r in self.owned.step_pauses(rec):
            state["answers"][r.interrupt_id] = self.owned.kept_answer(r.interrupt_id)
        claimed = self.owned.take(run, self.owned.continuation(
            rec.interrupt_id.startswith(f"{run.run_id}/{state['step']}/")),
            canonical_json(state))
        if claimed is None:
            return self._result(rec.run_id)
        return self._drive(claimed)

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
            self._pause(run, state, asked, [(RECONCILE.name,
                                             {"run_id": run.run_id, "effect": key})],
                        recovering=True)
        if status in (EffectStatus.FINISHED, EffectStatus.COMPENSATED):
            state["effects"][key] = None  # settled by an operator: its result is unknown
            return self._save(run, state, self.owned.progress(run.epoch))
        if not self.owned.begin_effect(run, key):
            self.owned.lost(run.run_id)
        result = fn()
        state["effects"][key] = result
        saved = self._save(run, state, self.owned.progress(run.epoch))
        svc.effects.finish(run.run_id, key, run.epoch)
        return saved

    def _pause(self, run: RunRecord, state: dict[str, Any], n: int,
               questions: Sequence[tuple[str, Any]], recovering: bool = False) -> None:
        """Take the pauses of the questions asked at step ``n`` (or its recovery pause), all
        or none, record their turn, let the run go and raise the pause signal."""
        svc = self.deployment.service
        binding = current_run_binding(session_id=run.session_id, thread_id=run.thread_id,
                                      scope=run.scope, parent_run_id=run.parent_run_id)
        turn = canonical_json({"step": n})
        taken = []
        try:  # a pause only while this driver owns the run (run.ownership.fencing)
            if recovering:
                k = self.owned.recovery_index(run.run_id, n)
                taken.append(self.owned.open_recovery(
                    run, binding, interrupt_id=f"{run.run_id}/{n}/recover/{k}",
                    checkpoint_id=f"{run.run_id}@{n}/recover/{k}", payload=questions[0][1],
                    turn=turn))
            else:
                # only the engine's own recovery may name the reserved interaction (an agent
                # asking for it is refused interaction_unregistered)
                if len(questions) > 1:  # all or nothing: every one checked before any is taken
                    for name, payload in questions:
                        svc.check_pause(binding=binding, name=name, payload=payload,
                                        checkpoint_id=f"{run.run_id}@{n}")
                for j, (name, payload) in enumerate(questions):
                    taken.append(self.owned.pause(run, binding, name=name, payload=payload,
                                                  interrupt_id=f"{run.run_id}/{n}/{j}",
                                                  checkpoint_id=f"{run.run_id}@{n}"))
        except PausepointError as exc:
            if fencing_refused(exc):
                self.owned.lost(run.run_id)
            raise
        taken = [svc.record_turn(r.interrupt_id, turn) if not r.state.turn_recorded else r
                 for r in taken]
        state["step"] = n
        self._save(run, state, runs.Suspend(run.epoch))
        raise InvocationPaused(tuple(published(r) for r in taken))
