"""effect.reconcile, lifecycle.refusal.no-change: a reconcile that loses to a cancel or an
expiry changes nothing -- not the pause, not the effect journal."""

from __future__ import annotations

import pytest

from pausepoint.core.clauses import ErrorCode
from pausepoint.core.errors import PausepointError
from pausepoint.core.ports import EffectStatus
from pausepoint.engine.harness import Harness


def _in_doubt() -> tuple[Harness, str]:
    h = Harness.open("memory:")
    h.start([{"op": "effect", "key": "wire", "fault": "crash_after_apply"}, {"op": "end"}],
            run_id="r")
    (report,) = h.restart()
    return h, report.pauses[0].interrupt_id


@pytest.mark.parametrize("decide", ["cancel", "expire"])
def test_reconcile_after_the_pause_was_decided_changes_nothing(decide: str) -> None:
    """effect.reconcile"""
    h, iid = _in_doubt()
    if decide == "cancel":
        h.cancel("r")
        code = ErrorCode.PAUSE_CANCELLED
    else:
        h.clock.advance(h.ttl_ms)  # type: ignore[attr-defined]
        h.expire_due()
        code = ErrorCode.PAUSE_EXPIRED
    before = h.service.effects.status("r", "0:wire")
    assert before == EffectStatus.STARTED
    with pytest.raises(PausepointError) as err:
        h.reconcile(iid, "applied")
    assert err.value.code == code
    assert h.service.effects.status("r", "0:wire") == EffectStatus.STARTED


def test_reconcile_settles_the_journal_when_it_wins() -> None:
    """effect.reconcile"""
    h, iid = _in_doubt()
    h.reconcile(iid, "not_applied")
    assert h.service.effects.status("r", "0:wire") == EffectStatus.NOT_APPLIED
    assert h.pause_state(iid) == "resumable"


def test_reconcile_losing_a_race_to_cancel_leaves_the_journal(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """effect.reconcile, lifecycle.refusal.no-change: the cancel lands between the reconcile's
    read and its conditional write; the journal must not have been settled."""
    h, iid = _in_doubt()
    ledger = h.service.ledger
    real = ledger.transition
    raced: list[bool] = []

    def transition(interrupt_id: str, expected_version: int, new: object,
                   result: str | None = None) -> bool:
        if not raced:
            raced.append(True)
            h.service.cancel_pause(interrupt_id)  # the competitor wins first
        return bool(real(interrupt_id, expected_version, new, result))

    monkeypatch.setattr(ledger, "transition", transition)
    with pytest.raises(PausepointError) as err:
        h.reconcile(iid, "applied")
    assert err.value.code == ErrorCode.PAUSE_CANCELLED
    assert h.service.effects.status("r", "0:wire") == EffectStatus.STARTED
