"""SqlStore.clear (the conformance reset): every table is empty afterwards, the file stays."""

from __future__ import annotations

from pathlib import Path

from pausepoint.engine.harness import Harness
from pausepoint.stores import SqliteStore


def test_clear_empties_every_table(tmp_path: Path) -> None:
    """lifecycle.outstanding.live: after a clear nothing is outstanding and nothing is known."""
    path = tmp_path / "db.sqlite"
    h = Harness.open(f"sqlite:{path}")
    rep = h.start([{"op": "effect", "key": "a"}, {"op": "interrupt", "name": "ask"},
                   {"op": "end"}], run_id="r")
    h.crash()
    store = SqliteStore(path)
    assert store.ledger.outstanding() and store.runs.get("r") is not None
    store.clear()
    assert list(store.ledger.outstanding()) == []
    assert store.ledger.get(rep.pauses[0].interrupt_id) is None
    assert store.runs.get("r") is None and store.effects.status("r", "0:a") is None
    assert store.checkpoints.latest("r") is None and store.payloads.get(
        rep.pauses[0].interrupt_id) is None
    store.close()
