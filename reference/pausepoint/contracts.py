"""Contracts on the lifecycle transition function, for CrossHair.

Each function below is :func:`pausepoint.lifecycle.step` itself -- no second copy of the table
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

from .lifecycle import (
    Accepted,
    Cancel,
    Event,
    Expire,
    MarkUnknown,
    Outcome,
    Pause,
    PauseState,
    Reconcile,
    RecordTurn,
    Resume,
    inv_consumed_before_expiry,
    inv_resumable_has_turn,
    invariants_hold,
    step,
)

__all__ = [
    "checked_step", "checked_pause", "checked_record_turn", "checked_resume",
    "checked_expire", "checked_cancel", "checked_mark_unknown", "checked_reconcile",
    "preserved",
]


def preserved(state: PauseState, out: Outcome) -> bool:
    """The invariants hold after ``out``; a refusal leaves ``state`` as it was."""
    if isinstance(out, Accepted):
        return inv_resumable_has_turn(out.state) and inv_consumed_before_expiry(out.state)
    return invariants_hold(state)


def checked_step(state: PauseState, event: Event) -> Outcome:
    """
    pre: invariants_hold(state)
    post: preserved(state, __return__)
    """
    return step(state, event)


def checked_pause(state: PauseState, event: Pause) -> Outcome:
    """
    pre: invariants_hold(state)
    post: preserved(state, __return__)
    """
    return step(state, event)


def checked_record_turn(state: PauseState, event: RecordTurn) -> Outcome:
    """
    pre: invariants_hold(state)
    post: preserved(state, __return__)
    """
    return step(state, event)


def checked_resume(state: PauseState, event: Resume) -> Outcome:
    """
    pre: invariants_hold(state)
    post: preserved(state, __return__)
    """
    return step(state, event)


def checked_expire(state: PauseState, event: Expire) -> Outcome:
    """
    pre: invariants_hold(state)
    post: preserved(state, __return__)
    """
    return step(state, event)


def checked_cancel(state: PauseState, event: Cancel) -> Outcome:
    """
    pre: invariants_hold(state)
    post: preserved(state, __return__)
    """
    return step(state, event)


def checked_mark_unknown(state: PauseState, event: MarkUnknown) -> Outcome:
    """
    pre: invariants_hold(state)
    post: preserved(state, __return__)
    """
    return step(state, event)


def checked_reconcile(state: PauseState, event: Reconcile) -> Outcome:
    """
    pre: invariants_hold(state)
    post: preserved(state, __return__)
    """
    return step(state, event)
