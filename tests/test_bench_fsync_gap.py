"""bench/bench_fsync_gap.py times a flush right after an idle gap and the next one at once.  No
timing is asserted: the tests check what each sample holds and the order the work runs in."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
BENCH = REPO / "bench"
sys.path.insert(0, str(BENCH))

import bench_fsync_gap  # noqa: E402


def test_the_gap_comes_right_before_the_first_timed_flush_and_never_inside_a_sample(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    events: list[tuple[str, object]] = []
    ticks = iter(range(10**6))

    def clock() -> float:
        events.append(("clock", None))
        return float(next(ticks))

    real_write = os.pwrite
    monkeypatch.setattr(bench_fsync_gap.time, "perf_counter", clock)
    monkeypatch.setattr(bench_fsync_gap.os, "pwrite",
                        lambda fd, data, at: events.append(("write", at)) or
                        real_write(fd, data, at))
    monkeypatch.setattr(bench_fsync_gap.os, "fdatasync", lambda fd: events.append(("sync", fd)))
    gaps = [0.0, 0.001, 0.005]
    out = bench_fsync_gap.run(str(tmp_path / "f.bin"), gaps, rounds=6, warmup=1,
                              wait=lambda s: events.append(("wait", s)))
    assert sorted(out) == gaps
    for first, after in out.values():
        # each sample is the clock read right before its write and right after its flush
        assert first == [1.0] * 6 and after == [1.0] * 6
    kinds = [k for k, _ in events]
    # a sample: [wait], clock, write, sync, clock, write, sync, clock
    sample = ["clock", "write", "sync", "clock", "write", "sync", "clock"]
    i, seen = 0, []
    while i < len(kinds):
        waited = None
        if kinds[i] == "wait":
            waited = events[i][1]
            i += 1
        assert kinds[i:i + 7] == sample, kinds[i:i + 7]
        seen.append(waited)
        i += 7
    assert len(seen) == 7 * 3  # warm-up round included
    assert sorted(s for s in seen if s is not None) == sorted([0.001] * 7 + [0.005] * 7)
    # shuffled: the rounds do not all take the gaps in one order
    orders = {tuple(seen[r * 3:r * 3 + 3]) for r in range(7)}
    assert len(orders) > 1


def test_runs_on_the_real_disk_and_refuses_bad_flags(tmp_path: Path) -> None:
    def go(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, str(BENCH / "bench_fsync_gap.py"), *args],
                              check=False, capture_output=True, text=True, timeout=600,
                              cwd=REPO, env={**os.environ, "COLUMNS": "200"})

    done = go("--rounds", "3", "--warmup", "0", "--gaps", "0,1", "--dir", str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert "disk:" in done.stdout and "first flush after the gap" in done.stdout
    rows = [line for line in done.stdout.splitlines() if line.startswith("│")]
    assert len(rows) == 2, done.stdout  # one row per gap
    for bad in (["--gaps", "1,x"], ["--gaps", "1,1"], ["--gaps", "-1"], ["--gaps", "nan"],
                ["--rounds", "0"]):
        refused = go(*bad)
        assert refused.returncode == 2 and "error" in refused.stderr, bad
    ram = go("--rounds", "1", "--dir", "/dev/shm")
    if Path("/dev/shm").is_dir():
        assert ram.returncode != 0 and "RAM disk" in ram.stderr + ram.stdout
