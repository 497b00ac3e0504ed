"""lifecycle.outstanding.live: the ledger's outstanding rows are exactly the live pauses."""

from __future__ import annotations

from pathlib import Path

import pytest

from pausepoint.core.lifecycle import LIVE
from pausepoint.engine.harness import Harness


@pytest.mark.parametrize("url", ["memory:", "sqlite"])
def test_outstanding_rows_follow_the_phase(url: str, tmp_path: Path) -> None:
    """lifecycle.outstanding.live"""
    h = Harness.open(url if url == "memory:" else f"sqlite:{tmp_path / 'db'}")
    ledger = h.service.ledger

    def live_ids() -> set[str]:
        return {r.interrupt_id for run in ("a", "b", "c")
                for r in ledger.by_run(run) if r.state.phase in LIVE}

    def outstanding_ids() -> set[str]:
        return {r.interrupt_id for r in ledger.outstanding()}

    a = h.start([{"op": "interrupt", "names": ["ask", "confirm"]}, {"op": "end"}], run_id="a")
    b = h.start([{"op": "interrupt", "name": "approve"}, {"op": "end"}], run_id="b")
    h.start([{"op": "interrupt", "name": "approve"}, {"op": "end"}], run_id="c")
    assert outstanding_ids() == live_ids() and len(outstanding_ids()) == 4
    first = ledger.get(a.pauses[0].interrupt_id)
    assert first is not None
    kid = first.kid
    assert ledger.outstanding_for_key(kid) == 4

    h.resume(a.pauses[0].token, {}, session_id="session", scope="default")  # consumed
    h.cancel("c")                                                          # cancelled
    assert outstanding_ids() == live_ids() == {a.pauses[1].interrupt_id, b.pauses[0].interrupt_id}
    h.clock.advance(h.ttl_ms)  # type: ignore[attr-defined]
    h.expire_due()                                                         # expired
    assert outstanding_ids() == live_ids() == set()
    assert ledger.outstanding_for_key(kid) == 0
