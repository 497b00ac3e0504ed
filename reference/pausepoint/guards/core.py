"""The guard core: pausepoint's ledger, tokens and effect journal in front of a framework's own
resume path.  Framework-agnostic; no framework is imported here (see :mod:`pausepoint.guards`
for the API and the per-framework guards built on it).

A framework's pause is registered in the pause service's ledger under the ledger id
``"<framework>:<thread id>:<the framework's interrupt id>"`` and bound to the run whose id is
the thread id (one run record per thread: it holds the thread's effect journal entries and
their results; guards of several frameworks sharing one store share this namespace of thread
ids).  The token's claims carry the thread id and the tool call id, so
:meth:`Guard.resume` recovers the framework's own ids from a verified token alone.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar

import attrs

from pausepoint.core import lifecycle as lc
from pausepoint.core.canonical import canonical_json
from pausepoint.core.clauses import ErrorCode
from pausepoint.core.errors import PausepointError
from pausepoint.core.ports import Clock, EffectStatus, PauseRecord, RunRecord, RunStatus, Signer
from pausepoint.core.registry import Interaction
from pausepoint.core.tokens import KeyRing
from pausepoint.engine.clock import SystemClock
from pausepoint.engine.compose import DEFAULT_TTL_MS, Deployment, compose
from pausepoint.engine.run import PauseBinding, PendingInterrupt
from pausepoint.engine.service import MAX_CAS_ATTEMPTS, PauseService, ResumeRequest, check_ids
from pausepoint.stores import open_store
from pausepoint.stores.base import StoreBundle

R = TypeVar("R")
T = TypeVar("T")

DEFAULT_SESSION = "default"
DEFAULT_SCOPE = "default"


@attrs.frozen
class GuardedInterrupt(PendingInterrupt):
    """A framework's pause as the guard published it: :class:`PendingInterrupt`'s fields
    (``interrupt_id`` is the *ledger* id, ``token`` the signed token to answer it with) plus
    the framework's own ids and the pause's phase in the ledger."""

    framework: str = ""
    thread_id: str = ""
    framework_interrupt_id: str = ""
    phase: lc.Phase = lc.Phase.PAUSED


@attrs.frozen
class Answer:
    """What the winner's ``call_framework_resume`` receives: the answer validated strictly
    against the interaction's response model, and the framework's ids of the pause it
    answers (from the verified token)."""

    value: Any
    framework: str
    thread_id: str
    interrupt_id: str
    tool_call_id: str
    name: str
    session_id: str = DEFAULT_SESSION
    scope: str = DEFAULT_SCOPE
    """The pause's binding: a pause the framework raises next in this thread is bound alike."""
    data: Any = None
    """The answer as JSON (its canonical form, the text ``value`` was validated from): what a
    framework that keeps answers in its JSON checkpoints is given."""


@attrs.frozen
class Resumed(Generic[R]):
    """An accepted answer.  ``replayed=False``: this call won and called the framework's
    resume, which returned ``result``; ``outcome`` is what was recorded of it (JSON).
    ``replayed=True``: the same answer again -- the framework was not called, ``result`` is
    None and ``outcome`` is the first call's recorded outcome (None while the winner has not
    recorded it yet: ``pending``)."""

    replayed: bool
    outcome: Any
    result: R | None = None
    pending: bool = False
    record: PauseRecord | None = None


class FrameworkResumeFailed(Exception):
    """The winner's call of the framework's resume raised.  The pause is consumed (the answer
    was taken); the failure is recorded as its outcome, so replays see it too."""


def _identity(value: Any) -> Any:
    return value


class Guard:
    """pausepoint in front of one framework's resume path, on one store.

    Open it with :meth:`open` (a store URL or bundle, a key ring shared by every process of
    the deployment, the registered interactions).  Every process resuming the same pauses
    must open its guard on the same store with the same signer and ``payload_key``."""

    def __init__(self, deployment: Deployment, *, framework: str) -> None:
        if not framework or ":" in framework:
            raise PausepointError(ErrorCode.WIRING_INVALID, "wiring.consistent",
                                  f"a framework name is non-empty text without ':', "
                                  f"not {framework!r}")
        self.deployment = deployment
        self.framework = framework

    @classmethod
    def open(cls, store: str | StoreBundle, *, framework: str,
             interactions: Sequence[Interaction], signer: Signer | None = None,
             clock: Clock | None = None, ttl_ms: int = DEFAULT_TTL_MS,
             payload_key: bytes | None = None) -> Guard:
        """A guard on ``store`` (``memory:``, ``sqlite:PATH``, a PostgreSQL DSN, or an open
        :class:`StoreBundle`).  ``signer`` defaults to a fresh Ed25519 :class:`KeyRing`; give
        every process the same one (and the same ``payload_key``, 32+ bytes)."""
        bundle = open_store(store) if isinstance(store, str) else store
        deployment = compose(store=bundle, signer=signer or KeyRing.generate(),
                             interactions=interactions, clock=clock or SystemClock(),
                             ttl_ms=ttl_ms, payload_key=payload_key)
        return cls(deployment, framework=framework)

    def expect(self, framework: str) -> Guard:
        """This guard, refused ``wiring_invalid`` unless it was opened for ``framework`` (what a
        framework's guard class checks of the guard it is given)."""
        if self.framework != framework:
            raise PausepointError(ErrorCode.WIRING_INVALID, "wiring.consistent",
                                  f"a {framework} guard is opened with framework={framework!r},"
                                  f" not {self.framework!r}")
        return self

    @property
    def service(self) -> PauseService:
        return self.deployment.service

    def close(self) -> None:
        self.deployment.store.close()

    # -- ids -------------------------------------------------------------------------------

    def run_id(self, thread_id: str) -> str:
        """The run a thread's pauses and effects belong to (the token's ``run_id``)."""
        return thread_id

    def ledger_id(self, thread_id: str, interrupt_id: str) -> str:
        """The ledger id of the framework's interrupt ``interrupt_id`` in ``thread_id``."""
        return f"{self.framework}:{thread_id}:{interrupt_id}"

    def _run(self, thread_id: str, session_id: str, scope: str) -> RunRecord:
        """The thread's run record, created on first use (its state holds effect results)."""
        runs = self.service.runs
        run_id = self.run_id(thread_id)
        found = runs.get(run_id)
        if found is not None:
            return found
        runs.create(RunRecord(run_id=run_id, root_run_id=run_id, parent_run_id="",
                              session_id=session_id, thread_id=thread_id, scope=scope,
                              status=RunStatus.RUNNING, state='{"effects":{}}'))
        made = runs.get(run_id)
        assert made is not None  # created now, or by a racer
        return made

    # -- pause -----------------------------------------------------------------------------

    def pause(self, *, thread_id: str, interrupt_id: str, name: str, payload: Any,
              tool_call_id: str = "", session_id: str = DEFAULT_SESSION,
              scope: str = DEFAULT_SCOPE, turn: Any = None,
              ttl_ms: int | None = None) -> GuardedInterrupt:
        """Register the pause the framework raised (the interaction ``name`` asking
        ``payload``) under the framework's ids, record its turn (``turn``: JSON the guard
        keeps of where the framework stopped; the framework's checkpointer stays its own) and
        return it with its signed token.  The framework raising the same interrupt again (a
        re-run) gets the same pause and token back; anything different under the same ids is
        refused ``pause_conflict``.  Every refusal (unregistered name, payload off its schema,
        tool pause without its call id) is typed and writes nothing."""
        check_ids(thread_id=thread_id, interrupt_id=interrupt_id, tool_call_id=tool_call_id,
                  session_id=session_id, scope=scope)
        svc = self.service
        run_id = self.run_id(thread_id)
        binding = PauseBinding(run_id=run_id, root_run_id=run_id, session_id=session_id,
                               thread_id=thread_id, scope=scope)
        ledger_id = self.ledger_id(thread_id, interrupt_id)
        checkpoint_id = f"{ledger_id}@turn"
        svc.check_pause(binding=binding, name=name, payload=payload,
                        tool_call_id=tool_call_id, checkpoint_id=checkpoint_id)
        self._run(thread_id, session_id, scope)
        rec = svc.pause(binding=binding, name=name, payload=payload, interrupt_id=ledger_id,
                        tool_call_id=tool_call_id, checkpoint_id=checkpoint_id, ttl_ms=ttl_ms)
        if not rec.state.turn_recorded and rec.state.phase == lc.Phase.PAUSED:
            rec = svc.record_turn(ledger_id, canonical_json(
                {"framework": self.framework, "thread_id": thread_id,
                 "interrupt_id": interrupt_id, "turn": turn}))
        return self.published(rec)

    def check(self, *, thread_id: str, name: str, payload: Any, tool_call_id: str = "",
              session_id: str = DEFAULT_SESSION, scope: str = DEFAULT_SCOPE,
              checkpointed: bool = True) -> None:
        """Refuse, as :meth:`pause` would, a pause the framework is about to raise -- writing
        nothing: called where the framework asks (before it raises and saves its interrupt),
        so a pause the guard refuses never reaches the framework's state.  ``checkpointed``:
        whether the framework will save the paused state at all (else ``checkpoint_missing``).
        The checks run in the contract's order (pause.refusal.order)."""
        check_ids(thread_id=thread_id, tool_call_id=tool_call_id, session_id=session_id,
                  scope=scope)
        run_id = self.run_id(thread_id)
        self.service.check_pause(
            binding=PauseBinding(run_id=run_id, root_run_id=run_id, session_id=session_id,
                                 thread_id=thread_id, scope=scope),
            name=name, payload=payload, tool_call_id=tool_call_id,
            checkpoint_id=f"{self.ledger_id(thread_id, '')}@turn" if checkpointed else "")

    def published(self, rec: PauseRecord) -> GuardedInterrupt:
        """The ledger row ``rec`` as a published interrupt."""
        c = rec.claims
        return GuardedInterrupt(
            name=c.name, payload=json.loads(rec.payload), token=rec.token,
            interrupt_id=rec.interrupt_id, run_id=rec.run_id, session_id=c.session_id,
            tool_call_id=c.tool_call_id, expires_at=rec.state.expires_at,
            resumable=rec.state.phase == lc.Phase.RESUMABLE, framework=self.framework,
            thread_id=c.thread_id, framework_interrupt_id=self._framework_id(rec),
            phase=rec.state.phase)

    def _framework_id(self, rec: PauseRecord) -> str:
        return rec.interrupt_id.removeprefix(self.ledger_id(rec.claims.thread_id, ""))

    def pending(self, thread_id: str) -> list[GuardedInterrupt]:
        """The thread's live pauses (paused, resumable or waiting on an unknown outcome)."""
        return [self.published(r) for r in self.service.ledger.by_run(self.run_id(thread_id))
                if r.state.phase in lc.LIVE]

    # -- resume ----------------------------------------------------------------------------

    def resume(self, token: object, answer: object,
               call_framework_resume: Callable[[Answer], R], *,
               session_id: str = DEFAULT_SESSION, scope: str = DEFAULT_SCOPE,
               responder: str = "", outcome: Callable[[R], Any] = _identity,
               run_id: str | None = None) -> Resumed[R]:
        """Answer the pause ``token`` names with ``answer``.  In order: the token verifies
        (``token_malformed`` / ``token_invalid``), names a pause of this framework in the
        ledger (``pause_unknown``), has not expired (``pause_expired``), binds this
        ``session_id`` (and ``run_id``, the thread, when given) and ``scope``
        (``binding_mismatch`` / ``scope_mismatch``), the
        ``responder`` has authority now (``responder_unauthorized``), the answer fits the
        response model strictly (``response_invalid``), no outcome is unknown
        (``outcome_unknown``) -- then one atomic consume: of any number of racing calls,
        in any number of processes, exactly one wins.  Only the winner calls
        ``call_framework_resume`` (with the validated answer and the framework's ids), and
        ``outcome(result)`` (JSON) is recorded as the first outcome.  The same answer again
        returns that outcome (``replayed``) without calling the framework; a different answer
        is refused ``response_conflict``.  Every refusal is a :class:`PausepointError` and
        changes nothing stored."""
        svc = self.service
        claims = svc.signer.verify(token)
        if not claims.interrupt_id.startswith(self.ledger_id(claims.thread_id, "")):
            raise PausepointError(ErrorCode.PAUSE_UNKNOWN, "resume.token.binds-one-pause",
                                  f"the token names no pause of {self.framework}")
        won = svc.resume(token, answer, ResumeRequest(session_id=session_id, scope=scope,
                                                      responder=responder, run_id=run_id))
        if won.replayed:
            first = won.record.result
            return Resumed(replayed=True, outcome=None if first is None else json.loads(first),
                           pending=first is None, record=won.record)
        rec = won.record
        given = Answer(value=won.answer, framework=self.framework,
                       thread_id=rec.claims.thread_id, interrupt_id=self._framework_id(rec),
                       tool_call_id=rec.claims.tool_call_id, name=rec.claims.name,
                       session_id=rec.claims.session_id, scope=rec.claims.scope,
                       data=json.loads(canonical_json(answer)))
        try:
            result = call_framework_resume(given)
        except Exception as exc:
            svc.set_result(rec.interrupt_id, {"error": f"{type(exc).__name__}: {exc}"})
            raise FrameworkResumeFailed(
                f"{self.framework}'s resume raised {type(exc).__name__}: {exc}") from exc
        recorded = outcome(result)
        svc.set_result(rec.interrupt_id, recorded)
        return Resumed(replayed=False, outcome=json.loads(canonical_json(recorded)),
                       result=result, record=rec)

    # -- effects ---------------------------------------------------------------------------

    def effect(self, scope: str, key: str, fn: Callable[[], T]) -> T:
        """Run ``fn`` (a side effect whose result is JSON) at most once for the thread
        ``scope`` and ``key``, however often the framework re-runs the node or step around
        it, in any number of processes: journalled started (an atomic conditional insert)
        before it runs, its result kept in the thread's run record, journalled finished
        after.  A re-run gets the first result back.  Found started and never finished --
        a process died inside it, or another is inside it now -- it is not run again:
        refused ``outcome_unknown`` until :meth:`reconcile` settles it."""
        check_ids(scope=scope, key=key)
        svc = self.service
        run = self._run(scope, DEFAULT_SESSION, DEFAULT_SCOPE)
        status = svc.effects.status(run.run_id, key)
        if status in (EffectStatus.FINISHED, EffectStatus.COMPENSATED):
            first: T = self._result_of(run.run_id, key)
            return first
        # a thread's record is leased by no driver: its epoch alone fences the start
        if status == EffectStatus.STARTED or not svc.effects.start(run.run_id, key, run.epoch,
                                                                   now=None):
            raise PausepointError(
                ErrorCode.OUTCOME_UNKNOWN, "effect.unknown-outcome",
                f"effect {key!r} of {scope!r} was started and is not known to have finished; "
                "reconcile it before going on")
        result = fn()
        self._keep_result(run.run_id, key, result)
        svc.effects.finish(run.run_id, key, run.epoch)
        return result

    def effect_status(self, scope: str, key: str) -> EffectStatus | None:
        """The journal's word on the effect (None: never started)."""
        return self.service.effects.status(self.run_id(scope), key)

    def reconcile(self, scope: str, key: str, resolution: str) -> None:
        """Settle an effect whose outcome is unknown: ``applied`` (its result stays unknown:
        None), ``not_applied`` (it may run again) or ``compensated``."""
        status = {lc.Resolution.APPLIED: EffectStatus.FINISHED,
                  lc.Resolution.NOT_APPLIED: EffectStatus.NOT_APPLIED,
                  lc.Resolution.COMPENSATED: EffectStatus.COMPENSATED}[lc.Resolution(resolution)]
        if self.effect_status(scope, key) != EffectStatus.STARTED:
            raise PausepointError(ErrorCode.INVALID_TRANSITION, "effect.reconcile",
                                  f"effect {key!r} of {scope!r} has no unknown outcome")
        self.service.effects.settle(self.run_id(scope), key, status)

    # -- the framework's saved state (for frameworks that hand it to the application) ---------

    def save_state(self, thread_id: str, state: str) -> None:
        """Keep ``state`` (text: the framework's own saved state, e.g. a serialised run state)
        as the thread's latest, in the thread's run record -- for a framework that hands its
        state to the application instead of writing it itself."""
        check_ids(thread_id=thread_id)
        self._update(self._run(thread_id, DEFAULT_SESSION, DEFAULT_SCOPE).run_id,
                     lambda st: st.__setitem__("framework_state", state))

    def load_state(self, thread_id: str) -> str | None:
        """The thread's latest state kept by :meth:`save_state` (None: none)."""
        run = self.service.runs.get(self.run_id(thread_id))
        found = None if run is None else json.loads(run.state).get("framework_state")
        return None if found is None else str(found)

    def _result_of(self, run_id: str, key: str) -> Any:
        run = self.service.runs.get(run_id)
        effects: dict[str, Any] = {} if run is None else json.loads(run.state).get("effects", {})
        return effects.get(key)

    def _keep_result(self, run_id: str, key: str, result: Any) -> None:
        value = json.loads(canonical_json(result))  # refuses a result that is not JSON
        self._update(run_id, lambda st: st.setdefault("effects", {}).__setitem__(key, value))

    def _update(self, run_id: str, change: Callable[[dict[str, Any]], None]) -> None:
        """Change the thread's run record state with ``change``, conditionally (retried when
        another writer changed it in between)."""
        runs = self.service.runs
        for _ in range(MAX_CAS_ATTEMPTS):
            run = runs.get(run_id)
            assert run is not None
            state: dict[str, Any] = json.loads(run.state)
            change(state)
            if runs.replace(run, attrs.evolve(run, state=canonical_json(state))):
                return
        raise PausepointError(ErrorCode.STORE_UNAVAILABLE, "effect.at-most-once",
                              "the thread's run record kept changing; nothing was kept")
