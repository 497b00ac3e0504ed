"""The pause service: pause, record turn, resume, expire, cancel, reconcile, drain.

Every operation computes the facts an event needs (does the token verify, does the payload fit,
is the responder authorised now), asks :func:`pausepoint.core.lifecycle.step` what they mean, and
writes the accepted state with the ledger's single-winner conditional update.  A refusal raises
:class:`~pausepoint.core.errors.PausepointError` and writes nothing.
"""

from __future__ import annotations

import contextlib
import enum
import functools
import json
import random
import secrets
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import ClassVar, Final, TypeVar

import attrs

from pausepoint.core import lifecycle as lc
from pausepoint.core import runs
from pausepoint.core.canonical import (
    DIGEST_KEY_MIN,
    KeyedDigest,
    built_json,
    digest,
    is_storable,
)
from pausepoint.core.clauses import ErrorCode
from pausepoint.core.errors import PausepointError, StoreConflict
from pausepoint.core.lifecycle import PauseState, Phase
from pausepoint.core.ports import (
    AuditEvent,
    AuditSink,
    CheckpointStore,
    Claims,
    Clock,
    ConsumingLedger,
    EffectJournal,
    EffectStatus,
    Ledger,
    PauseRecord,
    PayloadStore,
    RunRecord,
    RunStatus,
    RunStore,
    Signer,
)
from pausepoint.core.registry import RECONCILE, Interaction, Registry, Validated
from pausepoint.core.tokens import KeyRing
from pausepoint.core.values import record
from pausepoint.engine.run import PauseBinding
from pausepoint.engine.tracing import NO_TRACE, TraceSink
from pausepoint.stores.base import Units

MAX_CAS_ATTEMPTS = 64
MAX_MINT_ATTEMPTS = 4
"""A mint whose key was retired before its row landed is re-minted with the ring's active key
this many times at most (token.rotation.drain)."""
CONFLICT_ATTEMPTS = 6
"""How many times in all :meth:`PauseService.atomically` runs a unit of work the store aborted
to break a conflict (a deadlock victim) before its ``store_unavailable`` is raised."""
CONFLICT_BACKOFF_S = 0.004
"""The first pause before a unit the store aborted runs again: a random fraction of it,
doubling with each attempt (so that the transactions of a deadlock do not meet again)."""
T = TypeVar("T")

_NOT_PAUSED: Final = PauseState()
"""The state a pause is taken from (frozen: one instance serves every pause)."""
_TURN_WRITTEN: Final = lc.RecordTurn(True)


@record
class ResumeRequest:
    """Who is answering, from where.  Compared with the token's binding at resume time."""

    session_id: str
    scope: str
    responder: str = ""
    run_id: str | None = None
    root_run_id: str | None = None


@record
class ResumeOutcome:
    """An accepted resume: the first (``replayed=False``) or a replay of it."""

    record: PauseRecord
    replayed: bool
    turn: str | None = None
    result: str | None = None
    answer: object = None
    """The response as validated against the interaction's response schema (strict, no
    coercion): what the run receives, never the raw input (resume.response.schema).  None for
    a replay."""
    answer_text: str | None = None
    """The canonical text of :attr:`answer` as JSON values (what a run keeps as its answer).
    None for a replay."""


class RunView(enum.StrEnum):
    """What a person sees of a run (status.distinguishes)."""

    RUNNING = "running"
    SAFELY_SUSPENDED = "safely_suspended"
    PARTIALLY_COMPLETE = "partially_complete"
    CANCELLING = "cancelling"
    WAITING_UNKNOWN_OUTCOME = "waiting_unknown_outcome"
    DONE = "done"
    CANCELLED = "cancelled"
    ENDED = "ended"


def _refuse(out: lc.Refusal) -> PausepointError:
    return PausepointError(out.code, out.clause, out.message)


_JUST_STR: Final[set[type]] = {str}


def check_ids(**ids: object) -> None:
    """Refuse (``input_invalid``, clause ``input.bounded``) an identifier that is not text, or
    holds a NUL or a lone surrogate: no store can keep it as the same text (PostgreSQL refuses
    NUL, UTF-8 has no surrogates), so it is refused before anything is written."""
    values = ids.values()
    # the common case at once: every value exactly a str (their set of types, built in C),
    # and joined, all text is storable if each is
    if {*map(type, values)} == _JUST_STR and is_storable(
            "".join(values)):  # type: ignore[arg-type]  # each value is a str: just checked
        return
    for what, value in ids.items():
        if type(value) is not str or not is_storable(value):
            raise PausepointError(
                ErrorCode.INPUT_INVALID, "input.bounded",
                f"the {what} is not Unicode text without NUL (a str with no lone surrogate)")


class PauseService:
    """One deployment's pause/resume logic over its ports.  Build it with
    :func:`pausepoint.engine.compose.compose`, which refuses inconsistent wiring."""

    machine: ClassVar[lc.Machine] = lc.MACHINE
    """The lifecycle every decision is asked of (a variant is a subclass naming another)."""

    trace: TraceSink = NO_TRACE
    """Where resume reads and commits and expiries are reported (off by default)."""

    def __init__(self, *, registry: Registry, signer: Signer, ledger: Ledger,
                 checkpoints: CheckpointStore, payloads: PayloadStore, effects: EffectJournal,
                 runs: RunStore, clock: Clock, audit: AuditSink, ttl_ms: int,
                 payload_key: bytes | None = None, units: Units | None = None) -> None:
        self.registry = registry
        self.signer = signer
        self.ledger = ledger
        self.checkpoints = checkpoints
        self.payloads = payloads
        self.effects = effects
        self.runs = runs
        self.clock = clock
        self.audit = audit
        self.ttl_ms = ttl_ms
        if payload_key is None:
            payload_key = secrets.token_bytes(DIGEST_KEY_MIN)
        self._payload_key = KeyedDigest(payload_key)  # a short key: refused now
        self._units = units
        self._open = threading.local()  # this thread's depth of units (atomically)

    @contextlib.contextmanager
    def unit_of_work(self) -> Iterator[object]:
        """The store's unit of work (:class:`~pausepoint.stores.base.Units`, when the store
        bundle has one: every facet's writes inside commit together, once, or not at all); a
        no-op where the ports come from different stores.  Each operation here writes its rows
        in one; the engine wraps an operation of its own and the service calls it makes in one
        too (nested units join the outer one).  The trace's events emitted inside are the
        unit's: written right before its commit and confirmed right after
        (:meth:`~pausepoint.engine.tracing.TraceSink.unit`)."""
        store = contextlib.nullcontext() if self._units is None else self._units.unit_of_work()
        depth = getattr(self._open, "depth", 0)
        self._open.depth = depth + 1
        try:
            with self.trace.unit() as traced, store as unit:
                yield unit
                traced.prepare()
        finally:
            self._open.depth = depth

    def atomically(self, work: Callable[[], T]) -> T:
        """``work()`` in one :meth:`unit_of_work` -- run again from its start when the store
        aborted the unit to break a conflict before any of it committed
        (:class:`~pausepoint.core.errors.StoreConflict`: on PostgreSQL a deadlock victim or a
        serialization failure; nothing of it changed), after a short random pause, up to
        :data:`CONFLICT_ATTEMPTS` times in all; then that ``store_unavailable`` is raised.  A
        unit of which a part committed (:meth:`commit_so_far`) is never run again: the store
        reports its failure as plain ``store_unavailable``.  Inside another unit, ``work`` is
        that unit's part, and only the outermost unit runs again; on ports without units (each
        write its own commit) nothing runs again.  Every operation that opens a unit opens it
        here: the one place of this rule."""
        depth: int = getattr(self._open, "depth", 0)
        if depth > 0:  # a unit inside another joins it (the store's and the trace's alike)
            return work()
        if self._units is None:
            with self.unit_of_work():
                return work()
        for attempt in range(1, CONFLICT_ATTEMPTS + 1):
            try:
                if self.trace is NO_TRACE:
                    return self._untraced_unit(self._units, work)
                with self.unit_of_work():
                    return work()
            except StoreConflict:
                if attempt == CONFLICT_ATTEMPTS:
                    raise
                time.sleep(random.uniform(0, CONFLICT_BACKOFF_S * 2 ** attempt))
        raise AssertionError("unreachable")  # pragma: no cover

    def _untraced_unit(self, units: Units, work: Callable[[], T]) -> T:
        """:meth:`unit_of_work` of ``work()`` as the outermost unit, tracing off: the store's
        unit alone, this thread's depth held at 1 meanwhile -- what :meth:`unit_of_work` does
        then (:data:`NO_TRACE`'s unit and its ``prepare`` do nothing), without its generator
        (an operation opens one or two units)."""
        self._open.depth = 1
        try:
            with units.unit_of_work():
                return work()
        finally:
            self._open.depth = 0

    def commit_so_far(self) -> None:
        """Inside a unit of work, commit what it wrote so far and go on (the store's
        :meth:`~pausepoint.stores.base.Units.commit_so_far`): before a side effect runs, its
        journalled start must be durable (``effect.journal.bracket``).  The trace's events so
        far are committed with it."""
        if self._units is not None:
            self.trace.commit_so_far(self._units.commit_so_far)

    # -- pause ---------------------------------------------------------------------------

    def interaction(self, name: object, *, reserved: bool = False) -> Interaction | None:
        """The interaction ``name`` asks, or None when it is not registered.  The reserved
        ``pausepoint.reconcile`` is known only with ``reserved``: to the engine opening a
        recovery pause, and to a resume of a pause the ledger already holds."""
        if not isinstance(name, str):
            return None
        if name == RECONCILE.name:
            return RECONCILE if reserved else None
        return self.registry.get(name)

    def payload_digest(self, payload_text: str) -> str:
        """The token's payload digest: HMAC-SHA256 under this deployment's secret
        (token.discloses), so a token alone tells nothing about its payload."""
        return self._payload_key(payload_text)

    def pause(self, *, binding: PauseBinding, name: str, payload: object, interrupt_id: str,
              tool_call_id: str = "", checkpoint_id: str | None = None,
              ttl_ms: int | None = None, reserved: bool = False,
              fence: int | None = None, turn: str | None = None,
              fresh: bool = False) -> PauseRecord:
        """Take a pause.  Every refusal happens before a token is minted
        (pause.refusal.before-mint).  A pause already issued under ``interrupt_id`` with the
        same binding, name, tool call id, checkpoint and payload is returned as it is, with the
        same token (durability.token.reissue); with anything different it is refused with
        ``pause_conflict`` and nothing of it is disclosed (durability.token.reissue).

        ``reserved`` is for the engine itself: only it opens recovery pauses under the reserved
        name ``pausepoint.reconcile``; a run naming it is refused with
        ``interaction_unregistered``.

        ``fence`` (an epoch of the run) makes the pause conditional on its driver still owning
        the run under that epoch, in the ledger's insert itself: a driver that lost the run is
        refused ``invalid_transition`` and nothing is written (``run.ownership.fencing``).

        ``turn``: the turn checkpoint to record with the pause (:meth:`record_turn`), in the
        same unit of work -- one commit for the pause and its turn, and the pause comes back
        resumable.  If the turn's write fails, the unit commits nothing: the pause is not
        taken (the refusal of :meth:`record_turn`), and taking it again is a fresh start.

        ``fresh``: the caller knows that no pause is issued under ``interrupt_id`` (the
        engine's first pause of a run it created in this unit of work), so it is not read
        first; should one be there after all, the insert does not land and the pause issued
        first is returned or refused as when it is read first (durability.token.reissue)."""
        if turn is None:
            return self._take(binding=binding, name=name, payload=payload,
                              interrupt_id=interrupt_id, tool_call_id=tool_call_id,
                              checkpoint_id=checkpoint_id, ttl_ms=ttl_ms, reserved=reserved,
                              fence=fence, fresh=fresh)
        def take_with_turn() -> PauseRecord:
            rec = self._take(binding=binding, name=name, payload=payload,
                             interrupt_id=interrupt_id, tool_call_id=tool_call_id,
                             checkpoint_id=checkpoint_id, ttl_ms=ttl_ms, reserved=reserved,
                             fence=fence, turn=turn, fresh=fresh)
            if rec.state.phase == Phase.PAUSED and not rec.state.turn_recorded:
                rec = self._record_turn(rec, turn)
            return rec
        return self.atomically(take_with_turn)

    def _take(self, *, binding: PauseBinding, name: str, payload: object, interrupt_id: str,
              tool_call_id: str, checkpoint_id: str | None, ttl_ms: int | None,
              reserved: bool, fence: int | None, turn: str | None = None,
              fresh: bool = False) -> PauseRecord:
        """:meth:`pause`; with ``turn`` (inside :meth:`pause`'s unit of work, on a store whose
        unit commits nothing when it raises: ``rolls_back``), a pause it issues is written as
        :meth:`record_turn` then leaves it -- the lifecycle's verdict on its recorded turn, one
        version on -- in the same statement, with the turn's checkpoint (its write refused:
        nothing of the unit is committed).  Otherwise, and for a pause it does not issue, the
        pause is returned as issued, for :meth:`pause` to record the turn of."""
        # the name is looked up, not stored, first: anything unregistered is refused as such
        check_ids(interrupt_id=interrupt_id, tool_call_id=tool_call_id,
                  checkpoint_id="" if checkpoint_id is None else checkpoint_id,
                  run_id=binding.run_id, root_run_id=binding.root_run_id,
                  parent_run_id=binding.parent_run_id, session_id=binding.session_id,
                  thread_id=binding.thread_id, scope=binding.scope)
        interaction = self.interaction(name, reserved=reserved)
        valid = None if interaction is None else interaction.validate_payload(payload)
        payload_text = None if valid is None else valid.text
        existing = None if fresh else self.ledger.get(interrupt_id)
        if existing is not None:
            self._check_fence(binding.run_id, fence)
            return self._reissue(existing, binding, name, payload_text, tool_call_id,
                                 checkpoint_id)
        now = self.clock.now()
        expires_at = now + (self.ttl_ms if ttl_ms is None else ttl_ms)
        out, payload_text, checkpoint_id = self._pause_step(
            binding, interaction, payload, tool_call_id, checkpoint_id, expires_at, valid)
        if isinstance(out, lc.Refusal):
            raise _refuse(out)
        assert payload_text is not None and checkpoint_id is not None
        state, version = out.state, 1
        if turn is not None and getattr(self._units, "rolls_back", False):
            # the turn recorded in the same write (record_turn's verdict): only where a unit
            # that raises commits nothing, so a refused turn leaves no row behind
            recorded = self.machine.step(state, _TURN_WRITTEN)
            if isinstance(recorded, lc.Accepted) and recorded.action != lc.Action.REPLAYED:
                state, version = recorded.state, 2
            else:
                turn = None  # record_turn decides on the row as issued
        else:
            turn = None
        claims = Claims(
            interrupt_id=interrupt_id, run_id=binding.run_id, root_run_id=binding.root_run_id,
            session_id=binding.session_id, thread_id=binding.thread_id,
            checkpoint_id=checkpoint_id, scope=binding.scope, name=name,
            tool_call_id=tool_call_id, payload_digest=self.payload_digest(payload_text),
            issued_at=now, expires_at=expires_at)
        for attempt in range(MAX_MINT_ATTEMPTS):
            token, kid = self.signer.mint(claims)
            record = PauseRecord(claims=claims, kid=kid, token=token, payload=payload_text,
                                 state=state, parent_run_id=binding.parent_run_id,
                                 version=version)
            try:
                # the row with its payload (and, fused, its turn) commits as one unit
                issued = self.atomically(functools.partial(
                    self._issue, record, fence, turn, out.state))
            except PausepointError as exc:
                # the key was retired between the mint and the issue: its drain proof did not
                # count this row, so the row must not land; mint again with the active key
                if exc.code is ErrorCode.KEY_UNKNOWN and attempt + 1 < MAX_MINT_ATTEMPTS:
                    continue
                raise
            if not issued:  # someone issued it first: theirs is the pause, if it is this one
                self._check_fence(binding.run_id, fence)
                winner = self.ledger.get(interrupt_id)
                assert winner is not None
                return self._reissue(winner, binding, name, payload_text, tool_call_id,
                                     checkpoint_id)
            return record
        raise AssertionError("unreachable")  # pragma: no cover - the loop returns or raises

    def _check_fence(self, run_id: str, fence: int | None) -> None:
        """Refuse a pause fenced by an epoch the run no longer carries."""
        if fence is None:
            return
        run = self.runs.get(run_id)
        if run is None or run.epoch != fence:
            raise PausepointError(ErrorCode.INVALID_TRANSITION, "run.ownership.fencing",
                                  f"epoch {fence} no longer owns run {run_id!r}")

    def _reissue(self, existing: PauseRecord, binding: PauseBinding, name: str,
                 payload_text: str | None, tool_call_id: str,
                 checkpoint_id: str | None) -> PauseRecord:
        """The issued pause again, if the request names exactly it (durability.token.reissue);
        the refusal says nothing about the pause that holds the id."""
        c = existing.claims
        same = (c.run_id == binding.run_id and c.root_run_id == binding.root_run_id
                and c.session_id == binding.session_id and c.thread_id == binding.thread_id
                and c.scope == binding.scope and existing.parent_run_id == binding.parent_run_id
                and c.name == name and c.tool_call_id == tool_call_id
                and checkpoint_id in (None, c.checkpoint_id)
                and payload_text is not None and payload_text == existing.payload)
        if not same:
            raise PausepointError(ErrorCode.PAUSE_CONFLICT, "durability.token.reissue",
                                  "this interrupt id already names another pause")
        return existing

    def check_pause(self, *, binding: PauseBinding, name: str, payload: object,
                    tool_call_id: str = "", checkpoint_id: str | None = None) -> None:
        """Refuse as :meth:`pause` would, minting and writing nothing: several questions asked
        at once are checked first, so that they are all taken or none is
        (pause.refusal.before-mint)."""
        out, _text, _checkpoint = self._pause_step(
            binding, self.interaction(name), payload, tool_call_id, checkpoint_id,
            self.clock.now() + 1)
        if isinstance(out, lc.Refusal):
            raise _refuse(out)

    def _pause_step(self, binding: PauseBinding, interaction: Interaction | None,
                    payload: object, tool_call_id: str, checkpoint_id: str | None,
                    expires_at: int, valid: Validated | None = None,
                    ) -> tuple[lc.StepOutcome, str | None, str | None]:
        """The lifecycle's verdict on a pause asking ``interaction`` (None: not registered),
        with the payload's canonical text and the checkpoint it binds (when they exist).
        ``valid``: the payload as already validated against ``interaction``."""
        if valid is None and interaction is not None:
            valid = interaction.validate_payload(payload)
        payload_text = None if valid is None else valid.text
        if checkpoint_id is None:
            checkpoint_id = self.checkpoints.latest(binding.thread_id)
        out = self.machine.step(_NOT_PAUSED, lc.Pause(
            expires_at=expires_at,
            registered=interaction is not None,
            payload_valid=payload_text is not None,
            checkpoint_bound=bool(checkpoint_id),
            tool_call_bound=bool(tool_call_id) or (interaction is not None
                                                   and not interaction.tool)))
        return out, payload_text, checkpoint_id

    def _issue(self, record: PauseRecord, fence: int | None, turn: str | None = None,
               before: PauseState | None = None) -> bool:
        """Issue the pause's row, its payload in it (one unit of :meth:`pause`); with ``turn``,
        write the turn too (the row already holds the turn's verdict over ``before``)."""
        issued = self.ledger.issue(record, fence=fence)
        if issued and turn is not None:
            assert before is not None
            self._write_turn(record, before, turn)
        return issued

    def record_turn(self, interrupt_id: str, turn: str) -> PauseRecord:
        """Write the turn checkpoint; only a reported success makes the pause resumable
        (turn.resumable.earned)."""
        return self._record_turn(self._get(interrupt_id), turn)

    def _record_turn(self, record: PauseRecord, turn: str) -> PauseRecord:
        """:meth:`record_turn` of the pause ``record`` (as just read or written)."""
        interrupt_id = record.interrupt_id
        probe = self.machine.step(record.state, _TURN_WRITTEN)
        if isinstance(probe, lc.Refusal):  # refuse before writing (lifecycle.refusal.no-change)
            raise _refuse(probe)

        def write_turn() -> PauseRecord | None:  # the turn and the pause's state: one commit
            self._write_turn(record, record.state, turn)
            return None if probe.action == lc.Action.REPLAYED else self._write(record, probe)
        won = self.atomically(write_turn)
        if won is not None:
            return won
        # lost a race (or nothing to change): the turn is written; decide again on the row
        return self._advance(interrupt_id, lambda _r: _TURN_WRITTEN)

    def _write_turn(self, record: PauseRecord, before: PauseState, turn: str) -> None:
        """Write the turn checkpoint of ``record``; a write not reported committed is refused
        with the lifecycle's verdict on ``before`` (the pause's state without the turn), and
        the unit it is in commits nothing: the pause stays as it was (turn.resumable.earned)."""
        if not self.checkpoints.write(record.claims.checkpoint_id, record.claims.thread_id,
                                      turn):
            failed = self.machine.step(before, lc.RecordTurn(False))
            assert isinstance(failed, lc.Refusal)
            raise _refuse(failed)

    # -- resume --------------------------------------------------------------------------

    def resume(self, token: object, response: object, request: ResumeRequest) -> ResumeOutcome:
        """Answer a pause.  Checks run in the order of resume.refusal.order; the consume is the
        ledger's conditional update, so exactly one of any number of racing resumes wins."""
        claims = self.signer.verify(token)
        interaction = self.interaction(claims.name, reserved=True)  # the pause was admitted
        validated = None if interaction is None else interaction.validate_response(response)
        response_valid = validated is not None
        response_digest = "" if validated is None else digest(validated.text)
        binding_ok = (request.session_id == claims.session_id
                      and request.run_id in (None, claims.run_id)
                      and request.root_run_id in (None, claims.root_run_id))
        scope_ok = request.scope == claims.scope
        facts: tuple[int, bool] | None = None
        one_write = getattr(type(self.ledger), "consume", None)
        if callable(one_write) and isinstance(token, str) and validated is not None:
            assert interaction is not None
            facts = (now := self.clock.now(),
                     interaction.authority(request.responder, claims, now))
            at_once = self._consume_in_one_write(claims, token, lc.Resume(
                now=now, response_digest=response_digest, binding_ok=binding_ok,
                scope_ok=scope_ok, authorized=facts[1]), validated)
            if at_once is not None:
                return at_once
        with self.trace.atomic():
            record = self.ledger.get(claims.interrupt_id)
            self.trace.emit("read", pause=claims.interrupt_id, run=claims.run_id,
                            response=response_digest,
                            version=None if record is None else record.version)
        if record is None:
            raise PausepointError(ErrorCode.PAUSE_UNKNOWN, "resume.token.binds-one-pause",
                                  "no pause with this token's interrupt id is in the ledger")
        if record.claims != claims or record.token != token:
            raise PausepointError(ErrorCode.TOKEN_INVALID, "resume.token.binds-one-pause",
                                  "the token was not minted for the pause it names")
        if facts is None:
            now = self.clock.now()
            authorized = interaction is not None and interaction.authority(
                request.responder, claims, now)
        else:
            now, authorized = facts
        if not scope_ok:  # audited whatever else is wrong with the request (resume.binding.scope)
            self.audit.record(AuditEvent(
                "cross_scope_redemption", claims.interrupt_id,
                f"token of scope {claims.scope!r} presented from {request.scope!r}"))
        for _ in range(MAX_CAS_ATTEMPTS):
            event = lc.Resume(now=now, response_digest=response_digest, authentic=True,
                              binding_ok=binding_ok, scope_ok=scope_ok, authorized=authorized,
                              response_valid=response_valid)
            out = self.machine.step(record.state, event)
            if isinstance(out, lc.Refusal):
                self.trace.emit("commit", pause=claims.interrupt_id, result=out.code.value)
                if out.code == ErrorCode.PAUSE_EXPIRED and record.state.phase in lc.LIVE:
                    self.expire(claims.interrupt_id)  # decide it once, for everyone
                raise _refuse(out)
            if out.action == lc.Action.REPLAYED:
                self.trace.emit("commit", pause=claims.interrupt_id, result="replayed")
                return ResumeOutcome(record=record, replayed=True, result=record.result)
            with self.trace.atomic():
                with self.trace.writing("commit", pause=claims.interrupt_id,
                                        result="consumed") as traced:
                    won_row = self.ledger.transition(claims.interrupt_id, record.version,
                                                     out.state)
                    if not won_row:
                        traced.abort()
                if not won_row:
                    self.trace.emit("commit", pause=claims.interrupt_id, result="retry")
                    record = self._get(claims.interrupt_id)  # lost the race: decide again
            if won_row:
                won = attrs.evolve(record, state=out.state, version=record.version + 1)
                assert validated is not None
                return ResumeOutcome(record=won, replayed=False,
                                     turn=self.checkpoints.read(claims.checkpoint_id),
                                     answer=validated.value,
                                     answer_text=validated.value_text)
        raise PausepointError(ErrorCode.STORE_UNAVAILABLE, "resume.consume.single-winner",
                              "the ledger row kept changing; nothing was consumed")

    def _consume_in_one_write(self, claims: Claims, token: str, event: lc.Resume,
                              answer: Validated) -> ResumeOutcome | None:
        """The consume of a resumable pause as the ledger's one conditional write
        (:class:`~pausepoint.core.ports.ConsumingLedger`), when its own class offers it -- a
        wrapper that forwards attributes to a ledger does not pass it on, so what the wrapper
        does to ``get`` and ``transition`` is never bypassed.  The lifecycle decides on the
        state a resumable pause of these claims has; the write lands only on the row of these
        claims and this token that still has exactly that state -- the row the decision holds
        for, as after a read, and one winner among racers, as with ``transition``.  None when
        the decision is not a consume or the write did not land: nothing changed, and the
        caller reads the row and decides on what it holds."""
        expected = PauseState(phase=Phase.RESUMABLE, expires_at=claims.expires_at,
                              turn_recorded=True)
        out = self.machine.step(expected, event)
        if isinstance(out, lc.Refusal) or out.action != lc.Action.CONSUMED:
            return None
        ledger: ConsumingLedger = self.ledger  # type: ignore[assignment]  # its class has it
        if self.trace is NO_TRACE:  # tracing off: its atomic() and emit() do nothing
            won = ledger.consume(claims, token, expected, out.state, self.checkpoints)
        else:
            with self.trace.atomic():
                won = ledger.consume(claims, token, expected, out.state, self.checkpoints)
                if won is not None:  # read and committed in one statement, traced as such
                    self.trace.emit("read", pause=claims.interrupt_id, run=claims.run_id,
                                    response=event.response_digest)
                    self.trace.emit("commit", pause=claims.interrupt_id, result="consumed")
        if won is None:
            return None
        return ResumeOutcome(record=won[0], replayed=False, turn=won[1], answer=answer.value,
                             answer_text=answer.value_text)

    def set_result(self, interrupt_id: str, result: object) -> None:
        self.ledger.set_result(interrupt_id, built_json(result))

    # -- expire, cancel, reconcile -------------------------------------------------------

    def expire(self, interrupt_id: str) -> PauseRecord:
        def expire_traced() -> PauseRecord:  # the expiry and its event: one unit
            record = self._advance(interrupt_id, lambda _r: lc.Expire(self.clock.now()))
            self.trace.emit("expire", pause=interrupt_id, run=record.run_id)
            return record
        return self.atomically(expire_traced)

    def expire_due(self) -> list[PauseRecord]:
        """Expire every outstanding pause whose expiry has been reached."""
        now = self.clock.now()
        done = []
        for rec in self.ledger.outstanding():
            if rec.state.expires_at <= now:
                try:
                    done.append(self.expire(rec.interrupt_id))
                except PausepointError:
                    pass  # decided otherwise in the meantime
        return done

    def cancel_pause(self, interrupt_id: str) -> PauseRecord:
        return self._advance(interrupt_id, lambda _r: lc.Cancel())

    def cancel_run(self, run_id: str, *, owner: str = "cancel", lease_ms: int = 0) -> list[str]:
        """Cancel a run, its live pauses, and -- transitively -- its child runs
        (cancel.distinct, cancel.propagates).  Returns the run ids cancelled.

        Each run is first taken over (the run table's :class:`~pausepoint.core.runs.Cancel`: a
        new epoch, and a lease of ``lease_ms`` while the cancel goes on), so whoever drove it
        is fenced off before its next effect (``run.cancel.in-flight``).  A run that already
        ended done or error is refused with ``invalid_transition`` and nothing changes
        (``run.cancel.finished``); a child that ended by itself stays as it is.

        A run's pauses and its take-over (and its end, when it has no children) are one unit
        of work (one commit), its pauses written first: every unit locks pause rows before run
        rows, as a resume does (its consume, then its continuation's claim of the run), so on
        PostgreSQL a cancel and a resume of one run queue behind each other instead of
        deadlocking.  A run with children stays ``cancelling`` until they are cancelled, then
        ends ``cancelled``: a canceller that dies anywhere in between leaves it ``cancelling``,
        and a restart finishes the cancel (:meth:`finish_cancels`)."""
        return self._cancel_tree(run_id, runs.Cancel(owner, self.clock.now(), lease_ms))

    def finish_cancels(self, owner: str, lease_ms: int) -> list[str]:
        """A restart's share of the cancels: every run left ``cancelling`` whose canceller
        stopped -- its lease ran out, or it is ``owner`` itself from before a crash -- is taken
        over (the run table's :class:`~pausepoint.core.runs.Recover` from cancelling, a new
        epoch: ``run.ownership.lease``) and its cancel finished, idempotently: its pauses and
        children cancelled, then the run, under the new epoch.  A run whose canceller still
        holds its lease, or that ended meanwhile, is left to it.  Returns the run ids
        cancelled."""
        finished: list[str] = []
        for run in self.runs.with_status(RunStatus.CANCELLING):
            try:
                finished += self._cancel_tree(
                    run.run_id, runs.Recover(owner, self.clock.now(), lease_ms))
            except PausepointError as exc:
                if exc.code is ErrorCode.STORE_UNAVAILABLE:
                    raise
                # refused: a live canceller, or another restart took it first
        return finished

    def _cancel_tree(self, run_id: str, take: runs.Cancel | runs.Recover) -> list[str]:
        """Take ``run_id`` over with ``take`` (refused: raised, before anything is written)
        and its descendants with a cancel by the same owner; cancel each one's pauses; end
        each ``cancelled`` after its children (a run without children in the same unit of work
        as its take-over)."""
        cancelled: list[str] = []
        child_take = runs.Cancel(take.owner, take.now, take.lease_ms)
        todo: list[tuple[str, RunRecord | None]] = [(run_id, None)]
        while todo:
            rid, taken = todo.pop()
            if taken is not None:  # its children are done: end it
                self.atomically(functools.partial(self._end_cancel, taken))
                continue
            event = take if rid == run_id else child_take
            run, children = self.atomically(functools.partial(
                self._cancel_one, rid, event, refuse=rid == run_id))
            if run is not None:
                cancelled.append(rid)
                if children:
                    todo.append((rid, run))
            todo.extend((child, None) for child in children)
        return cancelled

    def _cancel_one(self, run_id: str, event: runs.Cancel | runs.Recover,
                    refuse: bool) -> tuple[RunRecord | None, list[str]]:
        """One unit of :meth:`_cancel_tree`: ``run_id``'s pauses cancelled, the run taken over
        (``refuse``: refused before anything is written) and -- without children -- ended;
        the run as taken (None: none, or it ended by itself) and its children."""
        run: RunRecord | None = self.runs.get(run_id)
        if refuse and run is not None:  # refused before anything is written
            self._cancel_step(run, event, refuse=True)
        self._cancel_pauses(run_id)
        run = self._take_for_cancel(run_id, event, refuse=refuse, read=run)
        children = [child.run_id for child in self.runs.children(run_id)]
        if run is not None:
            # a pause its driver opened between the pass above and the take-over (a fenced
            # insert that came first: PostgreSQL does not serialise the unit as SQLite's
            # write lock does); after the take-over the fence refuses any
            self._cancel_pauses(run_id)
            if not children:
                self._end_cancel(run)
        return run, children

    def _cancel_pauses(self, run_id: str) -> None:
        """Cancel every pause of ``run_id`` not yet decided (one consumed or expired first
        stays as it was decided)."""
        for rec in self.ledger.by_run(run_id):
            if rec.state.phase not in lc.TERMINAL:
                try:
                    self.cancel_pause(rec.interrupt_id)
                except PausepointError as exc:
                    if exc.code is ErrorCode.STORE_UNAVAILABLE:
                        raise

    def _end_cancel(self, run: RunRecord) -> None:
        """The canceller ends ``run`` cancelled, under the epoch it took it with (nothing if
        another canceller or a restart took it over since: it ends it)."""
        out = runs.step(run.run_state, runs.Cancelled(run.epoch))
        if isinstance(out, runs.Accepted) and out.changed:
            self.runs.replace(run, run.evolve(out.state))

    def parent_standing(self, parent_run_id: str | None) -> tuple[RunRecord | None,
                                                                   RunStatus | None]:
        """The parent of a run to start, and the status the start is judged by
        (:class:`~pausepoint.core.runs.Start`'s ``parent``): the parent's own, or cancelling
        when a run above it is cancelling or cancelled -- a child under a done child of a
        cancelled run is under a cancelled run (run.child.cancelling-parent)."""
        parent = self.runs.get(parent_run_id) if parent_run_id else None
        above, seen = parent, set()
        while above is not None and above.parent_run_id and above.run_id not in seen:
            seen.add(above.run_id)
            above = self.runs.get(above.parent_run_id)
            if above is not None and above.status in runs.CANCELLED_OR_CANCELLING:
                return parent, RunStatus.CANCELLING
        return parent, None if parent is None else parent.status

    def _cancel_step(self, run: RunRecord, take: runs.Cancel | runs.Recover,
                     refuse: bool) -> runs.Accepted | None:
        """The run table's verdict on taking ``run`` over with ``take`` for a cancel: None
        when it ended (``refuse``: then refused, with the table's clause and code)."""
        out = runs.step(run.run_state, take)
        if isinstance(out, runs.Refusal):
            if refuse:
                raise PausepointError(out.code, out.clause, out.message)
            return None
        return out

    def _take_for_cancel(self, run_id: str, take: runs.Cancel | runs.Recover, refuse: bool,
                         read: RunRecord | None = None) -> RunRecord | None:
        """The run, taken over in ``cancelling`` under a new epoch by ``take``; None if there
        is no such run or (a child) it ended by itself -- it stays so, and its children are
        still cancelled.  ``refuse``: a run the table refuses ``take`` for is refused.
        ``read``: the run as just read (the first attempt then reads nothing)."""
        for _ in range(MAX_CAS_ATTEMPTS):
            run, read = read or self.runs.get(run_id), None
            if run is None:
                return None
            out = self._cancel_step(run, take, refuse)
            if out is None:
                return None
            if not out.changed:
                return run
            taken = run.evolve(out.state)
            if self.runs.replace(run, taken):
                return taken
        raise PausepointError(ErrorCode.STORE_UNAVAILABLE, "run.ownership.fencing",
                              "the run kept changing; it was not cancelled")

    def mark_unknown(self, interrupt_id: str) -> PauseRecord:
        return self._advance(interrupt_id, lambda _r: lc.MarkUnknown())

    def reconcile(self, interrupt_id: str, resolution: lc.Resolution) -> PauseRecord:
        """Settle an unknown outcome (effect.reconcile): the pause returns to resumable (or
        paused, if its turn was never recorded), then the journal records the resolution.

        The ledger decides first, so a reconcile that loses to a cancel or an expiry changes
        nothing (lifecycle.refusal.no-change).  A stop between the two writes leaves the effect
        journalled started: the continuation then opens a new recovery pause -- asks again --
        rather than guessing (effect.unknown-outcome)."""
        def settle() -> PauseRecord:  # on a store with units, the two writes are one commit
            won = self._advance(interrupt_id, lambda _r: lc.Reconcile(resolution))
            if won.claims.name == RECONCILE.name:
                request = json.loads(won.payload)
                status = {lc.Resolution.APPLIED: EffectStatus.FINISHED,
                          lc.Resolution.NOT_APPLIED: EffectStatus.NOT_APPLIED,
                          lc.Resolution.COMPENSATED: EffectStatus.COMPENSATED}[resolution]
                self.effects.settle(request["run_id"], request["effect"], status)
            return won
        return self.atomically(settle)

    # -- keys ----------------------------------------------------------------------------

    def drain_proof(self, kid: str) -> int:
        """How many outstanding pauses carry a token signed by ``kid``."""
        return self.ledger.outstanding_for_key(kid)

    def retire_key(self, kid: str, ring: KeyRing) -> None:
        """Retire ``kid`` from ``ring`` (token.rotation.drain), ordered against every mint: the
        ledger counts the key's outstanding rows and, only when there are none, marks the key
        retired in the same transaction -- and it refuses to issue a row whose key is marked
        retired.  So a pause minted under the key either is counted (and the retirement refused
        with ``key_not_drained``) or never lands (it is minted again with the active key): no
        token outlives its key's drain proof."""
        if kid not in ring:
            raise PausepointError(ErrorCode.KEY_UNKNOWN, "token.rotation.drain",
                                  f"no key {kid!r} in the ring to retire")
        if kid == ring.active_kid:
            raise PausepointError(ErrorCode.KEY_NOT_DRAINED, "token.rotation.drain",
                                  f"key {kid!r} is the active signing key; rotate to a new "
                                  "key and drain this one before retiring it")
        ring.retire(kid, self.ledger.retire_key(kid))

    # -- queries -------------------------------------------------------------------------

    def status(self, run_id: str) -> RunView:
        run = self.runs.get(run_id)
        pauses = self.ledger.by_run(run_id)
        if run is None:
            return RunView.ENDED
        if run.status == RunStatus.CANCELLING:
            return RunView.CANCELLING
        if run.status == RunStatus.CANCELLED:
            return RunView.CANCELLED
        if run.status == RunStatus.DONE:
            return RunView.DONE
        if run.status == RunStatus.ERROR:
            return RunView.ENDED
        if any(p.state.phase == Phase.UNKNOWN_OUTCOME for p in pauses) or (
                self.effects.open_entries(run_id) and run.status != RunStatus.RUNNING):
            return RunView.WAITING_UNKNOWN_OUTCOME
        if run.status == RunStatus.PAUSED:
            live = [p for p in pauses if p.state.phase in lc.LIVE]
            if live and all(p.state.phase == Phase.RESUMABLE for p in live):
                return RunView.SAFELY_SUSPENDED
            if not live:
                return RunView.ENDED
            return RunView.PARTIALLY_COMPLETE
        return RunView.RUNNING

    # -- internals -----------------------------------------------------------------------

    def _get(self, interrupt_id: str) -> PauseRecord:
        # an id that is not text names no pause (and must not reach a store: input.bounded)
        record = self.ledger.get(interrupt_id) if isinstance(interrupt_id, str) else None
        if record is None:
            raise PausepointError(ErrorCode.PAUSE_UNKNOWN, "lifecycle.transition.table",
                                  f"no pause {interrupt_id!r} in the ledger")
        return record

    def _advance(self, interrupt_id: str, make: Callable[[PauseRecord], lc.Event],
                 record: PauseRecord | None = None) -> PauseRecord:
        """Step the stored pause with the event ``make(record)`` and write it conditionally;
        on a lost race, read again and decide again.  ``record``: the row as just read, if
        it is in hand (the first attempt then reads nothing)."""
        for _ in range(MAX_CAS_ATTEMPTS):
            if record is None:
                record = self._get(interrupt_id)
            out = self.machine.step(record.state, make(record))
            if isinstance(out, lc.Refusal):
                raise _refuse(out)
            if out.action == lc.Action.REPLAYED:
                return record
            won = self._write(record, out)
            if won is not None:
                return won
            record = None
        raise PausepointError(ErrorCode.STORE_UNAVAILABLE, "lifecycle.transition.table",
                              "the ledger row kept changing; nothing was written")

    def _write(self, record: PauseRecord, out: lc.Accepted) -> PauseRecord | None:
        """The conditional write of ``out``'s state over ``record`` (still at its version):
        the record as written, or None if the row moved on (a lost race)."""
        if self.ledger.transition(record.interrupt_id, record.version, out.state):
            return attrs.evolve(record, state=out.state, version=record.version + 1)
        return None

    def outstanding(self) -> Sequence[PauseRecord]:
        return self.ledger.outstanding()


def run_record(binding: PauseBinding, status: RunStatus, state: str = "{}") -> RunRecord:
    return RunRecord(run_id=binding.run_id, root_run_id=binding.root_run_id,
                     parent_run_id=binding.parent_run_id, session_id=binding.session_id,
                     thread_id=binding.thread_id, scope=binding.scope, status=status,
                     state=state)
