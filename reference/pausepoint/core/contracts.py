"""Contracts on the lifecycle transition function, for CrossHair.

Each function below is :func:`pausepoint.core.lifecycle.step` itself -- no second copy of the table
-- restricted to one kind of event, with PEP 316 docstring contracts stating that every
invariant of ``lifecycle.PAUSE_INVARIANTS`` is preserved: if they hold for the state before
(``pre``), they hold for the state after (``post``), whatever the event's facts.  That is the
inductive step of the invariants; CrossHair searches symbolically for a counterexample::

    crosshair check --analysis_kind=PEP316 --per_condition_timeout=10 \\
        reference/pausepoint/contracts.py

(tests/test_crosshair.py runs exactly this, and shows that a broken table row is caught.)
A refusal changes nothing (lifecycle.refusal.no-change), so it preserves the invariants
trivially; the ``post`` conditions also say so.
"""

from __future__ import annotations

from pausepoint.core.lifecycle import (
    Accepted,
    Cancel,
    Event,
    Expire,
    MarkUnknown,
    Pause,
    PauseState,
    Reconcile,
    RecordTurn,
    Resume,
    StepOutcome,
    inv_consumed_before_expiry,
    inv_resumable_has_turn,
    invariants_hold,
    step,
)

__all__ = [
    "checked_cancel",
    "checked_expire",
    "checked_mark_unknown",
    "checked_pause",
    "checked_reconcile",
    "checked_record_turn",
    "checked_resume",
    "checked_step",
    "preserved",
]


def preserved(state: PauseState, out: StepOutcome) -> bool:
    """The invariants hold after ``out``; a refusal leaves ``state`` as it was."""
    if isinstance(out, Accepted):
        return inv_resumable_has_turn(out.state) and inv_consumed_before_expiry(out.state)
    return invariants_hold(state)


def checked_step(state: PauseState, event: Event) -> StepOutcome:
    """
    pre: invariants_hold(state)
    post: preserved(state, __return__)
    """
    return step(state, event)


def checked_pause(state: PauseState, event: Pause) -> StepOutcome:
    """
    pre: invariants_hold(state)
    post: preserved(state, __return__)
    """
    return step(state, event)


def checked_record_turn(state: PauseState, event: RecordTurn) -> StepOutcome:
    """
    pre: invariants_hold(state)
    post: preserved(state, __return__)
    """
    return step(state, event)


def checked_resume(state: PauseState, event: Resume) -> StepOutcome:
    """
    pre: invariants_hold(state)
    post: preserved(state, __return__)
    """
    return step(state, event)


def checked_expire(state: PauseState, event: Expire) -> StepOutcome:
    """
    pre: invariants_hold(state)
    post: preserved(state, __return__)
    """
    return step(state, event)


def checked_cancel(state: PauseState, event: Cancel) -> StepOutcome:
    """
    pre: invariants_hold(state)
    post: preserved(state, __return__)
    """
    return step(state, event)


def checked_mark_unknown(state: PauseState, event: MarkUnknown) -> StepOutcome:
    """
    pre: invariants_hold(state)
    post: preserved(state, __return__)
    """
    return step(state, event)


def checked_reconcile(state: PauseState, event: Reconcile) -> StepOutcome:
    """
    pre: invariants_hold(state)
    post: preserved(state, __return__)
    """
    return step(state, event)
