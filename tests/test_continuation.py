"""One winner continues a run: the run store's conditional update, and two resume servers that
answer the two sibling pauses of one run at the same moment (resume.consume.single-winner,
multi.independent, effect.at-most-once)."""

from __future__ import annotations

import threading
from pathlib import Path

import attrs
import pytest

from pausepoint.core.ports import PauseRecord, RunRecord, RunStatus
from pausepoint.core.tokens import KeyRing
from pausepoint.engine.harness import Harness, HarnessHooks, SqliteWorld
from pausepoint.stores.base import StoreBundle


def test_replace_is_a_conditional_update(store: StoreBundle) -> None:
    """resume.consume.single-winner: a stale run record loses, the stored run is unchanged."""
    run = RunRecord(run_id="r", root_run_id="r", parent_run_id="", session_id="s",
                    thread_id="t", scope="c", status=RunStatus.PAUSED, state='{"pc":1}')
    store.runs.create(run)
    running = attrs.evolve(run, status=RunStatus.RUNNING, state='{"pc":2}')
    assert store.runs.replace(run, running)
    assert not store.runs.replace(run, attrs.evolve(run, state='{"pc":9}'))  # stale
    assert store.runs.get("r") == running


@pytest.mark.parametrize("attempt", range(5))
def test_sibling_answers_racing_continue_the_run_once(tmp_path: Path, attempt: int) -> None:
    """multi.independent, effect.at-most-once: two servers, two sibling pauses answered at once;
    the effect after the pause runs exactly once and the run ends done."""
    db = f"sqlite:{tmp_path / 'db'}"
    ring = KeyRing.generate("k1")
    world = SqliteWorld(str(tmp_path / "world.db"))
    barrier = threading.Barrier(2, timeout=30)
    both_kept = threading.Barrier(2, timeout=30)
    drives: list[str] = []
    # Hold each server after it consumed its pause and kept its answer, until the other did
    # too: then both see every answer kept and both try to continue the run -- the worst case.
    # (Holding inside the continuation instead would hang whenever one server finds the other's
    # answer not yet kept and rightly returns without continuing.)
    def held(rec: PauseRecord) -> None:
        both_kept.wait()

    hooks = HarnessHooks(answer_kept=held, driving=drives.append)
    servers = [Harness.open(db, keyring=ring, world=world, hooks=hooks,
                            owner=f"s{i}") for i in range(2)]
    first = servers[0].start([{"op": "interrupt", "names": ["ask", "confirm"]},
                              {"op": "effect", "key": "after"}, {"op": "end"}], run_id="r")
    assert drives == ["r"]  # the start
    drives.clear()
    errors: list[BaseException] = []

    def answer(h: Harness, token: str) -> None:
        try:
            barrier.wait()
            h.resume(token, {"a": 1}, session_id="session", scope="default")
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=answer, args=(h, p.token))
               for h, p in zip(servers, first.pauses, strict=True)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not any(t.is_alive() for t in threads), "a resume did not return within 60 s"
    assert errors == []
    assert drives == ["r"]  # exactly one server continued the run
    assert world.count("r", "after") == 1
    assert servers[0].run_status("r") == "done"
