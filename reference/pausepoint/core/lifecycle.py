"""The lifecycle of one pause point, as data.

Everything that affects the lifecycle lives in this module: the states, the events, the
ordered checks each event is subject to, and the transition table.  ``step(state, event)`` is a
pure function -- no I/O, no clock, no randomness -- returning :class:`Accepted` (the new state)
or :class:`Refusal` (a clause id, an error code and a message; the state is unchanged).

The services compute the facts an event carries (does the token verify? does the response fit
its schema? is the responder authorised *now*?) and hand them to ``step``; the machine decides,
in one fixed order, what those facts mean.  The same table renders the lifecycle diagram in the
docs and the transition list in ``spec/contract.md``.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Final

import attrs

from pausepoint.core.clause_ids import ClauseId
from pausepoint.core.clauses import ErrorCode
from pausepoint.core.values import record


class Phase(enum.StrEnum):
    """The state of one pause point (``lifecycle.states``)."""

    RUNNING = "running"
    PAUSED = "paused"
    RESUMABLE = "resumable"
    UNKNOWN_OUTCOME = "unknown_outcome"
    CONSUMED = "consumed"
    EXPIRED = "expired"
    CANCELLED = "cancelled"


TERMINAL: Final[frozenset[Phase]] = frozenset({Phase.CONSUMED, Phase.EXPIRED, Phase.CANCELLED})
LIVE: Final[frozenset[Phase]] = frozenset({Phase.PAUSED, Phase.RESUMABLE, Phase.UNKNOWN_OUTCOME})
OUTSTANDING: Final[frozenset[Phase]] = LIVE
"""Phases whose ledger row counts as outstanding (its token may still be redeemed)."""


@record
class PauseState:
    """The durable state of one pause point."""

    phase: Phase = Phase.RUNNING
    expires_at: int = 0
    turn_recorded: bool = False
    response_digest: str | None = None
    consumed_at: int | None = None


# -- events ----------------------------------------------------------------------------------


@record
class Pause:
    """Take the pause.  The facts are what the service established before minting."""

    expires_at: int
    registered: bool = True
    payload_valid: bool = True
    checkpoint_bound: bool = True
    tool_call_bound: bool = True


@attrs.frozen
class RecordTurn:
    """The turn-checkpoint write finished; ``written`` is what the store reported."""

    written: bool


@record
class Resume:
    """A person answered.  ``now`` is the resume server's clock reading."""

    now: int
    response_digest: str
    authentic: bool = True
    binding_ok: bool = True
    scope_ok: bool = True
    authorized: bool = True
    response_valid: bool = True


@attrs.frozen
class Expire:
    now: int


@attrs.frozen
class Cancel:
    pass


@attrs.frozen
class MarkUnknown:
    """The run stopped while an effect was started and not journalled finished."""


class Resolution(enum.StrEnum):
    APPLIED = "applied"
    NOT_APPLIED = "not_applied"
    COMPENSATED = "compensated"


@attrs.frozen
class Reconcile:
    resolution: Resolution


Event = Pause | RecordTurn | Resume | Expire | Cancel | MarkUnknown | Reconcile
EVENT_TYPES: Final[tuple[type[Event], ...]] = (
    Pause, RecordTurn, Resume, Expire, Cancel, MarkUnknown, Reconcile,
)

# -- outcomes --------------------------------------------------------------------------------


class Action(enum.StrEnum):
    """What an accepted event did, for the service to act on."""

    PAUSED = "paused"
    TURN_RECORDED = "turn_recorded"
    CONSUMED = "consumed"
    REPLAYED = "replayed"
    EXPIRED = "expired"
    CANCELLED = "cancelled"
    MARKED_UNKNOWN = "marked_unknown"
    RECONCILED = "reconciled"


@record
class Accepted:
    state: PauseState
    action: Action
    clause: ClauseId


@attrs.frozen
class Refusal:
    clause: ClauseId
    code: ErrorCode
    message: str


StepOutcome = Accepted | Refusal

# -- the table -------------------------------------------------------------------------------

Predicate = Callable[[PauseState, Event], bool]
Update = Callable[[PauseState, Event, Phase], PauseState]


@attrs.frozen
class Guard:
    """One ordered check: when ``holds`` is false the event is refused with ``code``."""

    name: str
    clause: ClauseId
    code: ErrorCode
    message: str
    holds: Predicate


@attrs.frozen
class Flag:
    """A check's predicate that holds when the event is a ``kind`` whose fact ``fact`` is
    true (``isinstance(e, kind) and e.fact``): most checks read one fact the service
    established.  One callable for all of them, not a function per check: each is a function
    of its own to enter on every pause's and resume's path."""

    kind: type[Event]
    fact: str

    def __call__(self, s: PauseState, e: Event) -> bool:
        return isinstance(e, self.kind) and bool(getattr(e, self.fact))


@attrs.frozen
class Choice:
    """A target decided by the state the row starts from: ``then`` when ``when`` holds of it,
    ``otherwise`` when not (reconcile returns to ``resumable`` only when the turn was
    recorded).  Both are declared in the table, so the diagram draws both arrows."""

    when: Callable[[PauseState], bool]
    then: Phase
    otherwise: Phase
    reads: str = ""

    def pick(self, s: PauseState) -> Phase:
        return self.then if self.when(s) else self.otherwise


@attrs.frozen
class Row:
    """A table row: from ``source`` on ``event``, after ``checks``, go to ``target`` --
    or, with ``refuse`` set, refuse.  ``update`` fills the new state's *other* fields, in
    the target phase :meth:`Machine.step` hands it (one state built, not one and then a copy in
    its phase); the phase is always the declared target (:meth:`Machine.step` sets it if an
    update did not), so a row cannot land anywhere its declaration does not say."""

    event: type[Event]
    source: Phase
    clause: ClauseId
    target: Phase | Choice | None = None
    action: Action | None = None
    checks: tuple[Guard, ...] = ()
    refuse: ErrorCode | None = None
    message: str = ""
    update: Update | None = None

    def targets(self) -> tuple[Phase, ...]:
        """Every phase this row may land in (none for a refusing row)."""
        if self.refuse is not None or self.target is None:
            return ()
        if isinstance(self.target, Choice):
            return (self.target.then, self.target.otherwise)
        return (self.target,)



# Checks every event of a kind passes before its row is looked up, in this order.

PAUSE_CHECKS: Final[tuple[Guard, ...]] = (
    Guard("registered", "pause.interaction.registered", ErrorCode.INTERACTION_UNREGISTERED,
          "the pause names an interaction that is not registered",
          Flag(Pause, "registered")),
    Guard("payload", "pause.payload.schema", ErrorCode.PAYLOAD_INVALID,
          "the payload does not fit the interaction's payload schema",
          Flag(Pause, "payload_valid")),
    Guard("checkpoint", "pause.checkpoint.bound", ErrorCode.CHECKPOINT_MISSING,
          "the pause is bound to no checkpoint, so it could never recover its request",
          Flag(Pause, "checkpoint_bound")),
    Guard("tool_call", "pause.tool-call.bound", ErrorCode.TOOL_CALL_ID_MISSING,
          "a tool pause must be bound to its tool call id",
          Flag(Pause, "tool_call_bound")),
)


RESUME_CHECKS: Final[tuple[Guard, ...]] = (
    Guard("authentic", "resume.token.authentic", ErrorCode.TOKEN_INVALID,
          "the token does not verify under the key ring",
          Flag(Resume, "authentic")),
)
"""What every resume passes before its row is looked up.  Expiry, binding, scope and
authority are checks of the rows (in this order), so each state decides what expiry means
for it: a live pause refuses at or after ``expires_at``, an expired one always, a consumed or
cancelled one was decided before expiry could win."""

_UNEXPIRED: Final[Guard] = Guard(
    "expiry", "resume.expiry", ErrorCode.PAUSE_EXPIRED,
    "the pause expired before this answer arrived",
    lambda s, e: isinstance(e, Resume) and e.now < s.expires_at)

_REQUEST_CHECKS: Final[tuple[Guard, ...]] = (
    Guard("binding", "resume.binding.run", ErrorCode.BINDING_MISMATCH,
          "the token is bound to another run, root run or session",
          Flag(Resume, "binding_ok")),
    Guard("scope", "resume.binding.scope", ErrorCode.SCOPE_MISMATCH,
          "the token was minted for another scope",
          Flag(Resume, "scope_ok")),
    Guard("authority", "resume.authority", ErrorCode.RESPONDER_UNAUTHORIZED,
          "the responder has no authority for this decision at resume time",
          Flag(Resume, "authorized")),
)
_LIVE_RESUME: Final[tuple[Guard, ...]] = (_UNEXPIRED, *_REQUEST_CHECKS)

_RESPONSE_CHECK: Final[Guard] = Guard(
    "response", "resume.response.schema", ErrorCode.RESPONSE_INVALID,
    "the response does not fit the interaction's response schema",
    Flag(Resume, "response_valid"))

_SAME_RESPONSE: Final[Guard] = Guard(
    "same_response", "replay.different-response.conflict", ErrorCode.RESPONSE_CONFLICT,
    "the pause was already answered with a different response",
    lambda s, e: isinstance(e, Resume) and e.response_digest == s.response_digest)

_DUE: Final[Guard] = Guard(
    "due", "expiry.transition", ErrorCode.NOT_DUE,
    "the pause's expiry time has not been reached",
    lambda s, e: isinstance(e, Expire) and e.now >= s.expires_at)

_WRITTEN: Final[Guard] = Guard(
    "written", "turn.write-failed.stays-paused", ErrorCode.CHECKPOINT_WRITE_FAILED,
    "the turn-checkpoint write did not report success, so the pause stays paused",
    Flag(RecordTurn, "written"))

COMMON_CHECKS: Final[Mapping[type[Event], tuple[Guard, ...]]] = MappingProxyType({
    Pause: PAUSE_CHECKS,
    Resume: RESUME_CHECKS,
})


# Updates fill fields other than the phase, in the phase the row's target decides.


def _paused(s: PauseState, e: Event, phase: Phase) -> PauseState:
    assert isinstance(e, Pause)
    return PauseState(phase, e.expires_at)


def _consume(s: PauseState, e: Event, phase: Phase) -> PauseState:
    assert isinstance(e, Resume)
    return PauseState(phase, s.expires_at, s.turn_recorded, e.response_digest, e.now)


def _turn(s: PauseState, e: Event, phase: Phase) -> PauseState:
    return PauseState(phase, s.expires_at, True, s.response_digest, s.consumed_at)


def _in_phase(s: PauseState, phase: Phase) -> PauseState:
    """``s`` in ``phase``: ``attrs.evolve(s, phase=phase)``, built directly (it is on every
    accepted step's path; evolve introspects the class on each call)."""
    return PauseState(phase, s.expires_at, s.turn_recorded, s.response_digest, s.consumed_at)


# the updates above build a PauseState field by field: a field added to it must be added there
assert tuple(f.name for f in attrs.fields(PauseState)) == (
    "phase", "expires_at", "turn_recorded", "response_digest", "consumed_at")


def _turn_recorded(s: PauseState) -> bool:
    return s.turn_recorded


_DECIDED: Final[Mapping[Phase, tuple[ErrorCode, str]]] = MappingProxyType({
    Phase.CONSUMED: (ErrorCode.PAUSE_CONSUMED, "the pause was already answered"),
    Phase.EXPIRED: (ErrorCode.PAUSE_EXPIRED, "the pause already expired"),
    Phase.CANCELLED: (ErrorCode.PAUSE_CANCELLED, "the pause was cancelled"),
})


def _decided_rows(event: type[Event], skip: frozenset[Phase] = frozenset()) -> tuple[Row, ...]:
    """Terminal phases are absorbing: every event on them is refused, naming what won."""
    return tuple(
        Row(event, phase, "lifecycle.terminal.absorbing", refuse=code, message=msg)
        for phase, (code, msg) in _DECIDED.items() if phase not in skip)


def _invalid(event: type[Event], *phases: Phase) -> tuple[Row, ...]:
    return tuple(
        Row(event, p, "lifecycle.transition.table", refuse=ErrorCode.INVALID_TRANSITION,
            message=f"{event.__name__} is not a transition from {p.value}")
        for p in phases)


P = Phase
A = Action

TABLE: Final[tuple[Row, ...]] = (
    # pause: running -> paused, every refusal before the mint
    Row(Pause, P.RUNNING, "pause.refusal.before-mint", P.PAUSED, A.PAUSED, update=_paused),
    *_invalid(Pause, P.PAUSED, P.RESUMABLE, P.UNKNOWN_OUTCOME),
    *_decided_rows(Pause),
    # record turn: resumable is earned by a successful write, never assumed
    Row(RecordTurn, P.PAUSED, "turn.resumable.earned", P.RESUMABLE, A.TURN_RECORDED,
        checks=(_WRITTEN,), update=_turn),
    Row(RecordTurn, P.UNKNOWN_OUTCOME, "turn.resumable.earned", P.UNKNOWN_OUTCOME,
        A.TURN_RECORDED, checks=(_WRITTEN,), update=_turn),
    *_invalid(RecordTurn, P.RUNNING, P.RESUMABLE),
    *_decided_rows(RecordTurn),
    # resume: authenticity first, then by phase -- expiry decided here, row by row
    Row(Resume, P.RESUMABLE, "resume.consume.single-winner", P.CONSUMED, A.CONSUMED,
        checks=(*_LIVE_RESUME, _RESPONSE_CHECK), update=_consume),
    Row(Resume, P.UNKNOWN_OUTCOME, "resume.unknown-outcome.blocks",
        checks=(*_LIVE_RESUME, _RESPONSE_CHECK), refuse=ErrorCode.OUTCOME_UNKNOWN,
        message="an effect's outcome is unknown; reconcile it before resuming"),
    Row(Resume, P.PAUSED, "turn.write-failed.stays-paused",
        checks=(*_LIVE_RESUME, _RESPONSE_CHECK), refuse=ErrorCode.NOT_RESUMABLE,
        message="the turn checkpoint was never recorded, so there is nothing to continue"),
    Row(Resume, P.CONSUMED, "replay.same-response", P.CONSUMED, A.REPLAYED,
        checks=(*_REQUEST_CHECKS, _SAME_RESPONSE)),
    Row(Resume, P.EXPIRED, "resume.expiry", refuse=ErrorCode.PAUSE_EXPIRED,
        message="the pause expired before this answer arrived"),
    Row(Resume, P.CANCELLED, "cancel.distinct", checks=_REQUEST_CHECKS,
        refuse=ErrorCode.PAUSE_CANCELLED, message="the pause was cancelled"),
    Row(Resume, P.RUNNING, "lifecycle.transition.table", checks=_REQUEST_CHECKS,
        refuse=ErrorCode.INVALID_TRANSITION, message="Resume is not a transition from running"),
    # expire: only once the clock has reached expires_at
    *(Row(Expire, p, "expiry.transition", P.EXPIRED, A.EXPIRED, checks=(_DUE,))
      for p in (P.PAUSED, P.RESUMABLE, P.UNKNOWN_OUTCOME)),
    *_invalid(Expire, P.RUNNING),
    *_decided_rows(Expire),
    # cancel: any non-terminal phase
    *(Row(Cancel, p, "cancel.distinct", P.CANCELLED, A.CANCELLED)
      for p in (P.RUNNING, P.PAUSED, P.RESUMABLE, P.UNKNOWN_OUTCOME)),
    *_decided_rows(Cancel),
    # an effect in doubt when the run stopped
    *(Row(MarkUnknown, p, "effect.unknown-outcome", P.UNKNOWN_OUTCOME, A.MARKED_UNKNOWN)
      for p in (P.PAUSED, P.RESUMABLE)),
    Row(MarkUnknown, P.UNKNOWN_OUTCOME, "effect.unknown-outcome", P.UNKNOWN_OUTCOME,
        A.MARKED_UNKNOWN),
    *_invalid(MarkUnknown, P.RUNNING),
    *_decided_rows(MarkUnknown),
    # reconcile: applied / not_applied / compensated, back to where the turn allows
    Row(Reconcile, P.UNKNOWN_OUTCOME, "effect.reconcile",
        Choice(_turn_recorded, P.RESUMABLE, P.PAUSED, reads="turn_recorded"), A.RECONCILED),
    *_invalid(Reconcile, P.RUNNING, P.PAUSED, P.RESUMABLE),
    *_decided_rows(Reconcile),
)


def _frozen_checks(checks: Mapping[type[Event], tuple[Guard, ...]]
                   ) -> Mapping[type[Event], tuple[Guard, ...]]:
    return MappingProxyType(dict(checks))


@attrs.frozen(eq=False)
class Machine:
    """The table and the common checks, read by :meth:`step`.  Frozen: a variant (a broken
    one in the tests, say) is a new machine built from these values (:meth:`with_row`,
    :meth:`with_common`), never an edit of this module."""

    rows: tuple[Row, ...]
    common: Mapping[type[Event], tuple[Guard, ...]] = attrs.field(converter=_frozen_checks)
    index: Mapping[tuple[type[Event], Phase], Row] = attrs.field(init=False)
    plan: Mapping[tuple[type[Event], Phase], tuple[tuple[Guard, ...], Row]] = attrs.field(
        init=False, repr=False)
    """Derived from ``common`` and ``index``: for each key, every check :meth:`step` runs
    (the event's common checks, then the row's) and the row."""

    @index.default
    def _index(self) -> Mapping[tuple[type[Event], Phase], Row]:
        out: dict[tuple[type[Event], Phase], Row] = {}
        for row in self.rows:
            key = (row.event, row.source)
            if key in out:
                raise ValueError(f"two rows for {key}")
            if (row.refuse is None) == (row.target is None):
                raise ValueError(f"the row for {key} must either refuse or have a target")
            out[key] = row
        if len(out) != len(EVENT_TYPES) * len(Phase):
            raise ValueError("the table must be total")
        return MappingProxyType(out)

    @plan.default
    def _plan(self) -> Mapping[tuple[type[Event], Phase], tuple[tuple[Guard, ...], Row]]:
        return MappingProxyType({key: ((*self.common.get(key[0], ()), *row.checks), row)
                                 for key, row in self.index.items()})

    def row_for(self, state: PauseState, event: Event) -> Row:
        return self.index[(type(event), state.phase)]

    def with_row(self, row: Row) -> Machine:
        """This machine with the row for ``(row.event, row.source)`` replaced by ``row``."""
        return Machine(tuple(row if (r.event, r.source) == (row.event, row.source) else r
                             for r in self.rows), self.common)

    def with_common(self, event: type[Event], checks: tuple[Guard, ...]) -> Machine:
        return Machine(self.rows, {**self.common, event: checks})

    def step(self, state: PauseState, event: Event) -> StepOutcome:
        """Apply ``event`` to ``state``: the new state, or a refusal that changes nothing."""
        checks, row = self.plan[(type(event), state.phase)]  # the common checks first
        for check in checks:
            if not check.holds(state, event):
                return _refuse(check)
        if row.refuse is not None:
            return Refusal(row.clause, row.refuse, row.message)
        assert row.action is not None and row.target is not None
        target = row.target.pick(state) if isinstance(row.target, Choice) else row.target
        new = row.update(state, event, target) if row.update is not None else state
        return Accepted(new if new.phase is target else _in_phase(new, target), row.action,
                        row.clause)


MACHINE: Final[Machine] = Machine(TABLE, COMMON_CHECKS)
"""The lifecycle: :data:`TABLE` with :data:`COMMON_CHECKS`."""


def row_for(state: PauseState, event: Event) -> Row:
    return MACHINE.row_for(state, event)


def _refuse(check: Guard) -> Refusal:
    return Refusal(check.clause, check.code, check.message)


def step(state: PauseState, event: Event) -> StepOutcome:
    """Apply ``event`` to ``state`` by :data:`MACHINE`: the new state, or a refusal that
    changes nothing."""
    return MACHINE.step(state, event)


# -- invariants of one pause point (checked by CrossHair, Hypothesis and the model) ------------


def inv_resumable_has_turn(s: PauseState) -> bool:
    """resumable => the turn checkpoint was durably recorded."""
    return s.phase != Phase.RESUMABLE or s.turn_recorded


def inv_consumed_before_expiry(s: PauseState) -> bool:
    """consumed => consumed_at < expires_at and a response digest is recorded."""
    if s.phase != Phase.CONSUMED:
        return s.consumed_at is None and s.response_digest is None
    return s.consumed_at is not None and s.consumed_at < s.expires_at and (
        s.response_digest is not None)


PAUSE_INVARIANTS: Final[tuple[Callable[[PauseState], bool], ...]] = (
    inv_resumable_has_turn,
    inv_consumed_before_expiry,
)


def invariants_hold(s: PauseState) -> bool:
    return all(inv(s) for inv in PAUSE_INVARIANTS)


def transitions() -> tuple[tuple[Phase, str, Phase], ...]:
    """(source, event name, target) for every accepting row: the lifecycle diagram's edges."""
    return tuple((row.source, row.event.__name__, target)
                  for row in TABLE for target in row.targets())
