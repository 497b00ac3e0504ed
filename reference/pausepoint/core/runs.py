"""The lifecycle of one run, as data: its statuses, who owns it, and the transition table.

A run is ``running`` (an owner executes it), ``paused`` (waiting on its pauses; nobody owns
it), ``done`` or ``error`` (it ended), ``cancelling`` then ``cancelled``.  Whoever drives a run
-- its first start, a resume's continuation, a restart's recovery, a cancel -- first *owns* it:
the owner's name, a lease that runs out at ``lease_until``, and an ``epoch`` that every taking
of ownership increases.  Every write to the run is conditional on the epoch its writer holds
(a fencing token, as with Chubby, ZooKeeper and etcd leases), so a driver that lost the run --
to a cancel, or to a restart after its lease ran out -- writes nothing more and applies no
effect (``run.ownership.fencing``).

``step(state, event)`` is pure and total, like :func:`pausepoint.core.lifecycle.step` for a
pause: it returns :class:`Accepted` (the new state) or :class:`Refusal` (a clause id, an error
code and a message; nothing changes).  The state before a run exists is ``None``.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from typing import Final

import attrs

from pausepoint.core.clause_ids import ClauseId
from pausepoint.core.clauses import ErrorCode
from pausepoint.core.lifecycle import Refusal as Refusal  # the pause table's, re-exported
from pausepoint.core.values import record


class RunStatus(enum.StrEnum):
    """The one vocabulary of run status (engine, stores, protocol, model, status view)."""

    RUNNING = "running"
    PAUSED = "paused"
    DONE = "done"
    ERROR = "error"
    CANCELLING = "cancelling"
    CANCELLED = "cancelled"


ENDED: Final[frozenset[RunStatus]] = frozenset({RunStatus.DONE, RunStatus.ERROR})
"""Finished by the run itself: a cancel is refused (``run.cancel.finished``)."""
TERMINAL: Final[frozenset[RunStatus]] = ENDED | {RunStatus.CANCELLED}
CANCELLED_OR_CANCELLING: Final[frozenset[RunStatus]] = frozenset(
    {RunStatus.CANCELLING, RunStatus.CANCELLED})


@record
class RunState:
    """What the table decides about a run: its status and its ownership."""

    status: RunStatus
    epoch: int = 0
    owner: str = ""
    lease_until: int = 0

    def lease_free_for(self, owner: str, now: int) -> bool:
        """No one else holds a live lease: it was released, it ran out, or it is ``owner``'s
        own (a process restarting under its name knows its earlier self is dead)."""
        return self.owner in ("", owner) or now >= self.lease_until


# -- events ----------------------------------------------------------------------------------


@record
class Start:
    """Create the run, owned by ``owner``.  ``parent`` is the parent's status (``None``: no
    parent run named, or ``parent_found`` false: the named parent does not exist)."""

    owner: str
    now: int
    lease_ms: int
    parent: RunStatus | None = None
    parent_found: bool = True


@attrs.frozen
class Recover:
    """A restart takes over a run that was executing when its driver stopped -- or a run left
    cancelling by a canceller that stopped, to finish its cancel."""

    owner: str
    now: int
    lease_ms: int


@record
class Continue:
    """A resume's continuation takes over a paused run; ``current_step`` says whether the
    answered pause belongs to the step the run is paused at."""

    owner: str
    now: int
    lease_ms: int
    current_step: bool = True


@attrs.frozen
class Progress:
    """The owner records progress (and renews its lease)."""

    epoch: int
    now: int
    lease_ms: int


@record
class Suspend:
    """The owner stops at pauses and lets the run go."""

    epoch: int


@record
class Finish:
    epoch: int


@attrs.frozen
class Fail:
    """The run's own code failed: it ends in error."""

    epoch: int


@attrs.frozen
class Release:
    """The owner could not go on (a store failure): the run stays running, its lease released
    so that a restart continues it at once (``run.store-failure.recoverable``)."""

    epoch: int


@attrs.frozen
class Cancel:
    """Cancel the run: taking it over from any driver (a new epoch), the canceller holding a
    lease until ``now + lease_ms`` while it cancels (0: none, a restart may finish the cancel
    at once)."""

    owner: str
    now: int = 0
    lease_ms: int = 0


@attrs.frozen
class Cancelled:
    """The canceller, having cancelled the run's pauses, ends it."""

    epoch: int


Event = (Start | Recover | Continue | Progress | Suspend | Finish | Fail | Release | Cancel
         | Cancelled)
EVENT_TYPES: Final[tuple[type[Event], ...]] = (
    Start, Recover, Continue, Progress, Suspend, Finish, Fail, Release, Cancel, Cancelled)
SOURCES: Final[tuple[RunStatus | None, ...]] = (None, *RunStatus)

# -- outcomes --------------------------------------------------------------------------------


@record
class Accepted:
    state: RunState
    clause: ClauseId
    changed: bool = True


StepOutcome = Accepted | Refusal
Update = Callable[[RunState | None, Event, RunStatus], RunState]
Guard = Callable[[RunState | None, Event], Refusal | None]


@attrs.frozen
class Row:
    event: type[Event]
    source: RunStatus | None
    clause: ClauseId
    target: RunStatus | None = None
    """Where an accepted event leaves the run (None: the row refuses)."""
    update: Update | None = None
    """The new state, in ``target`` with its ownership fields (None: nothing changes)."""
    guards: tuple[Guard, ...] = ()
    refuse: ErrorCode | None = None
    message: str = ""


# -- guards and updates ----------------------------------------------------------------------


def _fenced(s: RunState | None, e: Event) -> Refusal | None:
    epoch = getattr(e, "epoch", None)
    if s is not None and epoch != s.epoch:
        return Refusal("run.ownership.fencing", ErrorCode.INVALID_TRANSITION,
                       f"epoch {epoch} is stale: the run is owned under epoch {s.epoch}")
    return None


def _parent_live(s: RunState | None, e: Event) -> Refusal | None:
    assert isinstance(e, Start)
    if not e.parent_found:
        return Refusal("resume.binding.run", ErrorCode.BINDING_MISMATCH,
                       "the parent run does not exist")
    if e.parent in CANCELLED_OR_CANCELLING:
        return Refusal("run.child.cancelling-parent", ErrorCode.PAUSE_CANCELLED,
                       "the parent run is cancelled or being cancelled")
    return None


def _lease_free(s: RunState | None, e: Event) -> Refusal | None:
    """The run's driver -- or canceller -- stopped: its lease was released, ran out, or is the
    restarter's own."""
    assert s is not None and isinstance(e, Recover)
    if not s.lease_free_for(e.owner, e.now):
        return Refusal("run.ownership.lease", ErrorCode.INVALID_TRANSITION,
                       f"{s.owner!r} holds the run's lease until {s.lease_until}")
    return None


def _current_step(s: RunState | None, e: Event) -> Refusal | None:
    assert isinstance(e, Continue)
    if not e.current_step:
        return Refusal("run.continuation.belongs-to-step", ErrorCode.INVALID_TRANSITION,
                       "the answered pause belongs to a step the run has left")
    return None


_TAKERS: Final = (Start, Recover, Continue)
"""The events that take a run over (a tuple: ``Start | Recover | Continue`` would build a union
type on every take-over)."""


def _owned(s: RunState | None, e: Event, target: RunStatus) -> RunState:
    """Taken over by the event's owner: a new epoch and a fresh lease."""
    assert isinstance(e, _TAKERS)
    epoch = 0 if s is None else s.epoch
    return RunState(target, epoch + 1, e.owner, e.now + e.lease_ms)


def _renewed(s: RunState | None, e: Event, target: RunStatus) -> RunState:
    assert s is not None and isinstance(e, Progress)
    return RunState(target, s.epoch, s.owner, e.now + e.lease_ms)


def _released(s: RunState | None, e: Event, target: RunStatus) -> RunState:
    """Nobody owns the run any more; the epoch stays (it fences the writer it fenced)."""
    assert s is not None
    return RunState(target, s.epoch)


def _cancelling(s: RunState | None, e: Event, target: RunStatus) -> RunState:
    """Taken over by the canceller (or, from cancelling, by a restart finishing the cancel):
    a new epoch, and a lease while it cancels."""
    assert s is not None and isinstance(e, (Cancel, Recover))
    return RunState(target, s.epoch + 1, e.owner, e.now + e.lease_ms if e.lease_ms else 0)


def _invalid(event: type[Event], *sources: RunStatus | None) -> tuple[Row, ...]:
    return tuple(Row(event, s, "run.lifecycle.table", refuse=ErrorCode.INVALID_TRANSITION,
                     message=f"a run {s or 'that does not exist'} has no {event.__name__} "
                             "transition") for s in sources)


R = RunStatus
_NOT_RUNNING: Final = (None, R.PAUSED, R.DONE, R.ERROR, R.CANCELLING, R.CANCELLED)

TABLE: Final[tuple[Row, ...]] = (
    # start: a new run, owned; never under a cancelled parent
    Row(Start, None, "run.ownership.lease", R.RUNNING, _owned, guards=(_parent_live,)),
    *_invalid(Start, *RunStatus),
    # a restart takes over an executing run whose lease is free -- or a cancelling run whose
    # canceller's lease is free, to finish the cancel
    Row(Recover, R.RUNNING, "run.restart.concurrent", R.RUNNING, _owned, guards=(_lease_free,)),
    Row(Recover, R.CANCELLING, "run.ownership.lease", R.CANCELLING, _cancelling,
        guards=(_lease_free,)),
    *_invalid(Recover, None, R.PAUSED, R.DONE, R.ERROR, R.CANCELLED),
    # a continuation takes over a paused run, for the step it is paused at
    Row(Continue, R.PAUSED, "run.continuation.belongs-to-step", R.RUNNING, _owned,
        guards=(_current_step,)),
    *_invalid(Continue, None, R.RUNNING, R.DONE, R.ERROR, R.CANCELLING, R.CANCELLED),
    # the owner's writes, each under its epoch
    Row(Progress, R.RUNNING, "run.ownership.fencing", R.RUNNING, _renewed, guards=(_fenced,)),
    Row(Suspend, R.RUNNING, "run.ownership.fencing", R.PAUSED, _released, guards=(_fenced,)),
    Row(Finish, R.RUNNING, "run.ownership.fencing", R.DONE, _released, guards=(_fenced,)),
    Row(Fail, R.RUNNING, "run.ownership.fencing", R.ERROR, _released, guards=(_fenced,)),
    Row(Release, R.RUNNING, "run.store-failure.recoverable", R.RUNNING, _released,
        guards=(_fenced,)),
    *(row for ev in (Progress, Suspend, Finish, Fail, Release) for row in _invalid(
        ev, *_NOT_RUNNING)),
    # cancel: from any driver; refused once the run ended by itself
    Row(Cancel, R.RUNNING, "run.cancel.in-flight", R.CANCELLING, _cancelling),
    Row(Cancel, R.PAUSED, "cancel.distinct", R.CANCELLING, _cancelling),
    Row(Cancel, R.CANCELLING, "cancel.distinct", R.CANCELLING, _cancelling),
    Row(Cancel, R.CANCELLED, "cancel.distinct", R.CANCELLED),
    *(Row(Cancel, s, "run.cancel.finished", refuse=ErrorCode.INVALID_TRANSITION,
          message=f"the run already ended {s}; a cancel changes nothing") for s in ENDED),
    *_invalid(Cancel, None),
    Row(Cancelled, R.CANCELLING, "cancel.distinct", R.CANCELLED, _released, guards=(_fenced,)),
    *_invalid(Cancelled, None, R.RUNNING, R.PAUSED, R.DONE, R.ERROR, R.CANCELLED),
)

_INDEX: Final[dict[tuple[type[Event], RunStatus | None], Row]] = {}
for _row in TABLE:
    _key = (_row.event, _row.source)
    assert _key not in _INDEX, f"two rows for {_key}"
    _INDEX[_key] = _row
assert len(_INDEX) == len(EVENT_TYPES) * len(SOURCES), "the run table must be total"


def step(state: RunState | None, event: Event) -> StepOutcome:
    """Apply ``event`` to the run's ``state`` (``None``: no such run yet)."""
    row = _INDEX[(type(event), None if state is None else state.status)]
    for guard in row.guards:
        refused = guard(state, event)
        if refused is not None:
            return refused
    if row.refuse is not None:
        return Refusal(row.clause, row.refuse, row.message)
    assert row.target is not None
    if row.update is None:  # nothing to do: already so
        assert state is not None
        return Accepted(state, row.clause, changed=False)
    return Accepted(row.update(state, event, row.target), row.clause)  # built in its target


def transitions() -> tuple[tuple[RunStatus | None, str, RunStatus], ...]:
    """(source, event name, target) for every accepting row (a diagram's edges)."""
    return tuple((row.source, row.event.__name__, row.target) for row in TABLE
                 if row.target is not None)
