"""Owned runs: the run level's writes, in one place, for the embedding engine
(:class:`pausepoint.Engine`) and the scripted harness alike.

Whoever drives a run -- its start, a resume's continuation, a restart's recovery -- first owns
it: a lease and an epoch from the run table (:mod:`pausepoint.core.runs`), every write to the run
conditional on that epoch (``run.ownership.fencing``).  :class:`Ownership` holds those writes:
taking a run (start, continuation, restart), a cancel and a restart's finishing of a cancel
whose canceller stopped, the fenced progress writes, the effect journal's
conditional start and the epoch rule for an entry left started, pauses issued only under the
driver's epoch, and the recovery pause of an effect in doubt.  A driver that finds it lost the
run stops: :class:`Lost` (taken over) or :class:`~pausepoint.engine.run.InvocationCancelled`
(cancelled); both pass every ``except Exception`` of user code.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NoReturn

import attrs

from pausepoint.core import lifecycle as lc
from pausepoint.core import runs
from pausepoint.core.canonical import digest
from pausepoint.core.clauses import ErrorCode
from pausepoint.core.errors import PausepointError
from pausepoint.core.jsontext import loads
from pausepoint.core.ports import Clock, PauseRecord, RunRecord
from pausepoint.core.registry import RECONCILE
from pausepoint.engine.run import InvocationCancelled, PauseBinding, PendingInterrupt
from pausepoint.engine.service import PauseService


class Doubt(enum.Enum):
    IN_DOUBT = "in_doubt"
    FENCED = "fenced"
    SETTLED = "settled"


class Lost(BaseException):
    """This driver lost the run: a take-over gave the run a new epoch, or its lease ran out,
    so it writes nothing more and applies no effect (run.ownership.fencing).  Nothing in the
    run may catch it.  ``refusal`` says why, as a typed refusal."""

    def __init__(self, message: str = "this driver lost the run") -> None:
        super().__init__(message)
        self.refusal = PausepointError(ErrorCode.INVALID_TRANSITION, "run.ownership.fencing",
                                       message)


def published(rec: PauseRecord, token: str | None = None) -> PendingInterrupt:
    """The pause ``rec`` as it is published to whoever answers it (``token``: another token
    to publish instead of the issued one)."""
    return PendingInterrupt(
        name=rec.claims.name, payload=loads(rec.payload),
        token=rec.token if token is None else token, interrupt_id=rec.interrupt_id,
        run_id=rec.run_id, session_id=rec.claims.session_id,
        tool_call_id=rec.claims.tool_call_id, expires_at=rec.state.expires_at,
        resumable=rec.state.phase == lc.Phase.RESUMABLE)


@attrs.define
class Ownership:
    """The run-level writes of one driver (``owner``) on ``service``'s store."""

    service: PauseService
    owner: str
    clock: Clock
    lease_ms: int

    # -- taking a run ---------------------------------------------------------------------------

    def start(self, run: RunRecord) -> RunRecord:
        """Create ``run`` (its identity and continuation data; the rest is the run table's
        start), owned by this driver.  Refused, with the run table's clause and code, when the
        run exists or its parent -- or a run above it -- is cancelled or being cancelled
        (run.child.cancelling-parent): decided on what was read, and again if the store's
        atomic create then refused."""
        svc = self.service
        # a run with no parent is first created as if no run had its id (the usual case):
        # only a refusal or the create's conflict makes it read the run, for the table's
        # verdict on what is there.  A child's is read first: its create share-locks its
        # parent and root rows (PostgreSQL), which a start refused on what it read never does
        for attempt in range(1 if run.parent_run_id else 0, 3):
            existing = None if attempt == 0 else svc.runs.get(run.run_id)
            parent, standing = svc.parent_standing(run.parent_run_id) if run.parent_run_id \
                else (None, None)  # (what it tells of no parent)
            out = runs.step(None if existing is None else existing.run_state, runs.Start(
                self.owner, self.clock.now(), self.lease_ms, parent=standing,
                parent_found=not run.parent_run_id or parent is not None))
            if isinstance(out, runs.Refusal):
                if attempt == 0:
                    continue  # an existing run's refusal comes first: read it
                raise PausepointError(out.code, out.clause, f"run {run.run_id!r}: {out.message}")
            root = parent.root_run_id if parent else run.run_id
            created = (run if run.root_run_id == root else
                       attrs.evolve(run, root_run_id=root)).evolve(out.state)
            if svc.runs.create(created):  # atomic against a cancel of the parent or the root
                return created
        raise PausepointError(ErrorCode.INVALID_TRANSITION, "run.lifecycle.table",
                              f"run {run.run_id!r} could not be created")

    def recover(self) -> runs.Recover:
        """A restart's take-over event (run.ownership.lease)."""
        return runs.Recover(self.owner, self.clock.now(), self.lease_ms)

    def cancel(self, run_id: str) -> list[str]:
        """Cancel ``run_id`` and its children as this driver, holding a lease while it cancels
        (:meth:`PauseService.cancel_run`)."""
        return self.service.cancel_run(run_id, owner=self.owner, lease_ms=self.lease_ms)

    def finish_cancels(self) -> list[str]:
        """A restart's share of the cancels: finish every cancel whose canceller stopped
        (:meth:`PauseService.finish_cancels`); the run ids cancelled."""
        return self.service.finish_cancels(self.owner, self.lease_ms)

    def take(self, run: RunRecord, event: runs.Recover | runs.Continue,
             state: str | None = None) -> RunRecord | None:
        """Take ``run`` over with ``event`` (a restart's or a continuation's), with continuation
        data ``state``; None if the run table refuses (a live owner, a step the run has left)
        or another driver took it first -- one winner."""
        return self.write(run, event, state)

    def continuation(self, current_step: bool) -> runs.Continue:
        """A continuation's take-over event, for a pause at the run's current step or not
        (run.continuation.belongs-to-step)."""
        return runs.Continue(self.owner, self.clock.now(), self.lease_ms,
                             current_step=current_step)

    # -- the owner's writes ---------------------------------------------------------------------

    def write(self, run: RunRecord, event: runs.Event, state: str | None = None,
              stored: RunRecord | None = None) -> RunRecord | None:
        """The owner's write ``event`` (progress, suspend, finish, fail, release) with
        continuation data ``state``, conditional on the epoch ``run`` was read with: None if
        this driver lost the run (run.ownership.fencing).  ``stored``: the row as the store
        still holds it, when ``run`` is a take-over not written yet (its write and this one
        made as one, conditional on the row the take-over was decided on)."""
        out = runs.step(run.run_state, event)
        if isinstance(out, runs.Refusal):
            return None
        new = run.evolve(out.state, state)
        return new if self.service.runs.replace(run if stored is None else stored, new) \
            else None

    def progress(self, epoch: int) -> runs.Progress:
        return runs.Progress(epoch, self.clock.now(), self.lease_ms)

    def lost(self, run_id: str, epoch: int | None = None) -> NoReturn:
        """Stop: the run was cancelled (:class:`InvocationCancelled`), taken over or -- still
        under this driver's ``epoch`` -- its lease ran out (:class:`Lost`)."""
        now = self.service.runs.get(run_id)
        if now is not None and now.status in runs.CANCELLED_OR_CANCELLING:
            raise InvocationCancelled()
        if now is not None and now.epoch == epoch and now.lease_until <= self.clock.now():
            raise Lost(f"run {run_id!r}: the lease of epoch {epoch} ran out at "
                       f"{now.lease_until}; a restart takes the run over")
        raise Lost(f"run {run_id!r} is no longer owned under epoch {epoch}")

    # -- effects --------------------------------------------------------------------------------

    def doubt(self, run: RunRecord, key: str) -> Doubt:
        """What the entry ``key``, read journalled started, is to this driver: in doubt when an
        earlier epoch (or this one) started it and stopped; when a later epoch started it, a
        new owner's effect in flight -- this driver lost the run (run.ownership.fencing); or
        settled, when it is no longer started (finished or reconciled meanwhile)."""
        started = self.service.effects.started_by(run.run_id, key)
        if started is None:
            return Doubt.SETTLED
        return Doubt.FENCED if started > run.epoch else Doubt.IN_DOUBT

    def keep_result(self, run_id: str, key: str, result: object) -> None:
        """Keep the result of the effect ``key`` (JSON; nothing is written for None) before it
        is journalled finished: a driver that dies between the finish and its next run write
        leaves it for the replay (:meth:`kept_result`)."""
        if result is not None:
            self.service.payloads.record(f"{run_id}#effect#{key}", json.dumps(result))

    def keep_input(self, key: str, text: str) -> None:
        """Keep a run's input (its JSON text) under ``key`` (:func:`input_key`), written once
        with the run: the run's continuation data names the key instead of holding the
        text."""
        self.service.payloads.record(key, text)

    def kept_input(self, key: str) -> Any:
        """The input kept under ``key``; ``store_corrupt`` when it is not there (it is written
        in the unit that creates the run, so a run that names it has it)."""
        text = self.service.payloads.get(key)
        if text is None:
            raise PausepointError(ErrorCode.STORE_CORRUPT, "durability.commit-per-change",
                                  f"the run's input {key!r} is missing from the store")
        return loads(text)

    def kept_result(self, run_id: str, key: str) -> Any:
        """The kept result of the effect ``key``: None if it returned None, or if an operator
        settled it (its result is unknown)."""
        text = self.service.payloads.get(f"{run_id}#effect#{key}")
        return None if text is None else loads(text)

    def begin_effect(self, run: RunRecord, key: str) -> bool:
        """Journal the effect ``key`` started under the driver's epoch and a lease still live
        now (by this driver's clock), a conditional insert (run.ownership.fencing): only if it
        did may the effect be applied.  A driver whose lease ran out starts nothing, even if no
        one took the run over yet: a restarter may be deciding right now that the run has no
        owner."""
        return self.service.effects.start(run.run_id, key, run.epoch, self.clock.now())

    # -- pauses ---------------------------------------------------------------------------------

    def pause(self, run: RunRecord, binding: PauseBinding, **pause: Any) -> PauseRecord:
        """Take a pause of ``run`` only while this driver owns it under the epoch it was read
        with: fenced in the ledger's insert itself, so a driver a cancel or a take-over fenced
        off opens no question and no recovery pause (run.ownership.fencing,
        run.cancel.in-flight).  A
        fencing refusal is :class:`~pausepoint.core.errors.PausepointError` with the clause
        ``run.ownership.fencing``."""
        rec: PauseRecord = self.service.pause(binding=binding, fence=run.epoch, **pause)
        return rec

    def open_recovery(self, run: RunRecord, binding: PauseBinding, *, interrupt_id: str,
                      checkpoint_id: str, payload: object, turn: str,
                      opened: Callable[[PauseRecord], None] = lambda _rec: None) -> PauseRecord:
        """An effect in doubt: open (or finish opening) its recovery pause in
        ``unknown_outcome`` with its turn recorded; never retry it (effect.unknown-outcome).
        ``opened`` is told of the pause once it exists."""
        svc = self.service
        rec = self.pause(run, binding, name=RECONCILE.name, payload=payload,
                         interrupt_id=interrupt_id, checkpoint_id=checkpoint_id, reserved=True)
        opened(rec)
        if rec.state.phase == lc.Phase.PAUSED:
            rec = svc.mark_unknown(rec.interrupt_id)
        if not rec.state.turn_recorded:
            rec = svc.record_turn(rec.interrupt_id, turn)
        return rec

    def recovery_index(self, run_id: str, step: object) -> int:
        """The number of the recovery pause to open at ``step`` (its interrupt id
        ``{run_id}/{step}/recover/{n}``): a recovery pause of this step still live was opened
        by a driver that stopped before it finished, so finish that one rather than open a
        second (run.restart.concurrent); else the next number of the run."""
        recoveries = [r for r in self.service.ledger.by_run(run_id)
                      if r.claims.name == RECONCILE.name]
        orphans = [r for r in recoveries if r.state.phase in lc.LIVE
                   and r.interrupt_id.startswith(f"{run_id}/{step}/recover/")]
        return int(orphans[-1].interrupt_id.rsplit("/", 1)[1]) if orphans else len(recoveries)

    # -- answers, kept until the continuation ---------------------------------------------------

    def keep_answer(self, rec: PauseRecord, answer: str) -> None:
        """Keep the answer (JSON text) of the consumed pause ``rec`` until its run's
        continuation has it: a restart continues a run whose resumer died after its consume
        with this answer (resume.continuation.recorded-turn)."""
        self.service.payloads.record(answer_key(rec.interrupt_id), answer)

    def kept_answer(self, interrupt_id: str, kept: Mapping[str, str] | None = None) -> Any:
        """The kept answer of a consumed pause (None if none was kept); ``kept``: answers this
        operation kept itself (their text, by interrupt id), not read again."""
        text = kept.get(interrupt_id) if kept else None
        if text is None:
            text = self.service.payloads.get(answer_key(interrupt_id))
        return None if text is None else loads(text)

    def step_pauses(self, rec: PauseRecord) -> list[PauseRecord]:
        """The pauses taken together with ``rec`` (the questions of its step)."""
        return [r for r in self.service.ledger.by_run(rec.run_id)
                if r.claims.checkpoint_id == rec.claims.checkpoint_id]

    def step_answered(self, rec: PauseRecord,
                      pauses: Sequence[PauseRecord] | None = None) -> bool:
        """Every question asked together with ``rec`` is answered: only then does the run go
        on; the others are not disturbed meanwhile (multi.independent).  ``pauses``: the
        step's pauses as this operation read them (:meth:`step_pauses`), not read again."""
        # a loop, not all() of a generator: on every resume's path, and a generator is a
        # function of its own (and the generator machinery) to run
        for r in self.step_pauses(rec) if pauses is None else pauses:
            if r.state.phase != lc.Phase.CONSUMED and r.claims.name != RECONCILE.name:
                return False
        return True

    def answers_kept(self, rec: PauseRecord, pauses: Sequence[PauseRecord] | None = None,
                     kept: Mapping[str, str] | None = None) -> bool:
        """Every consumed pause of ``rec``'s step has its answer kept: a run never continues
        with an answer it does not have (resume.continuation.recorded-turn).  ``pauses`` and
        ``kept``: as for :meth:`step_answered` and :meth:`kept_answer`."""
        for r in self.step_pauses(rec) if pauses is None else pauses:  # a loop: as above
            if r.state.phase == lc.Phase.CONSUMED and not (
                    (kept is not None and r.interrupt_id in kept)
                    or self.service.payloads.get(answer_key(r.interrupt_id)) is not None):
                return False
        return True

    def await_answers(self, rec: PauseRecord) -> None:
        """Mark the consumed pauses of ``rec``'s step whose answer was lost: a retry of the same
        answer (a replay of the consume) then delivers it (:meth:`answer_awaited`)."""
        for r in self.step_pauses(rec):
            if r.state.phase == lc.Phase.CONSUMED and \
                    self.service.payloads.get(answer_key(r.interrupt_id)) is None:
                self.service.payloads.record(awaiting_key(r.interrupt_id), "true")

    def answer_awaited(self, rec: PauseRecord) -> bool:
        """A replay whose first answer was lost with its process (a restart marked it): this
        retry carries the same answer and is the only place it can come from."""
        return (rec.result is None
                and self.service.payloads.get(awaiting_key(rec.interrupt_id)) is not None
                and self.service.payloads.get(answer_key(rec.interrupt_id)) is None)

    def stalled(self, run_id: str, step: object) -> PauseRecord | None:
        """The paused run ``run_id`` stalled at ``step``: every pause it waits on there (the
        step's questions, or its latest recovery pause) is consumed -- the process died between
        the consume and the continuation, so nobody continues it but a restart.  Several
        restarters may find the same run: the run table's continuation claim picks one
        (run.restart.concurrent).  The last such pause, or None."""
        rows = list(self.service.ledger.by_run(run_id))
        recoveries = [r for r in rows
                      if r.claims.checkpoint_id.startswith(f"{run_id}@{step}/recover/")]
        waiting = recoveries[-1:] or [r for r in rows
                                      if r.claims.checkpoint_id == f"{run_id}@{step}"]
        if waiting and all(r.state.phase == lc.Phase.CONSUMED for r in waiting):
            return waiting[-1]
        return None


def input_key(run_id: str, text: str) -> str:
    """Where a run's long input (its JSON ``text``) is kept: named by its digest too, so a
    start refused or retried with another input under the same run id never finds this
    one."""
    return f"{run_id}#input#{digest(text)}"


def answer_key(interrupt_id: str) -> str:
    """Where the answer of a consumed pause is kept until its run's continuation."""
    return f"{interrupt_id}#answer"


def awaiting_key(interrupt_id: str) -> str:
    """Marks a consumed pause whose answer died with the process that won it (set by restart):
    only its sender's retry can deliver it."""
    return f"{interrupt_id}#awaiting-answer"


def fencing_refused(exc: PausepointError) -> bool:
    """``exc`` is the refusal of a pause fenced by an epoch the run no longer carries."""
    return exc.clause == "run.ownership.fencing"
