"""The reference adapter's reset on SQLite keeps one file and, when the last case neither crashed
nor replaced it, the same store: a reset must still be a fresh, empty instance -- after a plain
case, after a simulated crash and restart, and after a race of resume servers -- and the file's
WAL must survive the stores closed in between (a kept connection, not a checkpoint per case)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from pausepoint_conformance.adapters.reference import ReferenceAdapter
from pausepoint_conformance.protocol.wire import (
    CrashRestartArgs,
    Ok,
    RaceResumeArgs,
    Refused,
    ResetArgs,
    ResumeArgs,
    StartArgs,
    StatusArgs,
)

SCRIPT: list[Any] = [{"op": "effect", "key": "pay"}, {"op": "interrupt", "name": "approve"},
                     {"op": "end"}]


def start(a: ReferenceAdapter, run_id: str = "r") -> str:
    res = a.start(StartArgs.model_validate({"run_id": run_id, "session_id": "s",
                                            "scope": "default", "script": SCRIPT}))
    assert isinstance(res, Ok), res
    assert res.data.status.value == "paused" and len(res.data.pauses) == 1, res.data
    return res.data.pauses[0].token


def assert_fresh(a: ReferenceAdapter) -> None:
    """Nothing of an earlier case is known, and the same run id starts anew."""
    unknown = a.status(StatusArgs(run_id="r"))
    assert isinstance(unknown, Refused) and unknown.code == "pause_unknown", unknown
    start(a)


def test_every_reset_is_an_empty_instance(tmp_path: Path) -> None:
    a = ReferenceAdapter("sqlite", scratch=str(tmp_path))
    try:
        assert isinstance(a.reset(ResetArgs(ttl_ms=60_000)), Ok)
        token = start(a)
        wal = os.open(os.path.join(a._dir, "reference.sqlite-wal"), os.O_RDONLY)

        assert isinstance(a.reset(ResetArgs(ttl_ms=60_000)), Ok)  # after a plain case
        assert_fresh(a)

        assert isinstance(a.crash_restart(CrashRestartArgs()), Ok)
        assert isinstance(a.reset(ResetArgs(ttl_ms=60_000)), Ok)  # after a crash and restart
        assert_fresh(a)

        assert isinstance(a.crash_restart(CrashRestartArgs()), Ok)  # crashed, then reset
        assert isinstance(a.reset(ResetArgs(ttl_ms=60_000)), Ok)
        token = start(a)
        ask = ResumeArgs.model_validate({"token": token, "response": {"ok": True},
                                         "run_id": "r", "session_id": "s", "scope": "default"})
        raced = a.race_resume(RaceResumeArgs(requests=[ask, ask]))
        assert isinstance(raced, Ok), raced
        assert isinstance(a.reset(ResetArgs(ttl_ms=60_000)), Ok)  # after a race
        assert_fresh(a)
        assert os.fstat(wal).st_nlink == 1, "a store closed between cases deleted the WAL"
    finally:
        os.close(wal)
        a.close()
    assert not os.path.exists(a._dir)
