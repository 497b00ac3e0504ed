"""bench/bench_cold.py times each cycle warm (right after itself) and cold (right after a busy
spin).  No timing is asserted: the test checks the order the samples are taken in."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BENCH = REPO / "bench"
sys.path.insert(0, str(BENCH))

import bench_cold  # noqa: E402


class Fake:
    """Records, for each of its rounds, when it ran and what ran just before it."""

    def __init__(self, name: str, log: list[tuple[str, float]]) -> None:
        self.name, self.log = name, log

    def round(self) -> list[tuple[str, float]]:
        self.log.append((self.name, time.perf_counter()))
        return [(self.name, float(len(self.log)))]

    def close(self) -> None:
        pass


def test_a_warm_sample_follows_its_own_cycle_and_a_cold_one_follows_the_spin() -> None:
    log: list[tuple[str, float]] = []
    spin = 0.002
    samples = bench_cold.run([Fake("a", log), Fake("b", log)], rounds=20, warmup=1,
                             spin_s=spin)
    assert sorted(samples) == [("a", "cold"), ("a", "warm"), ("b", "cold"), ("b", "warm")]
    assert all(len(v) == 20 for v in samples.values())  # the warm-up round is not kept
    assert len(log) == 21 * 2 * 3  # per round and variant: warm-up cycle, warm, cold
    position = {}
    for i, (name, _) in enumerate(log):
        position[float(i + 1), name] = i
    for (name, mode), values in samples.items():
        for value in values:
            i = position[value, name]
            if mode == "warm":  # taken right after a cycle of the same variant, with no gap
                assert log[i - 1][0] == name
            else:  # taken after the spin, whatever ran before it
                assert log[i][1] - log[i - 1][1] >= spin if i else True
    # both modes are shuffled: a cold sample is not always first or last of its round
    firsts = {log[r * 6][0] for r in range(21)}
    assert firsts == {"a", "b"}


def test_runs_on_the_real_disk_and_refuses_bad_flags(tmp_path: Path) -> None:
    def go(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, str(BENCH / "bench_cold.py"), *args],
                              check=False, capture_output=True, text=True, timeout=600,
                              cwd=REPO, env={**os.environ, "COLUMNS": "200"})

    # the floor runs one of its three sequences per round (each once in three rounds)
    done = go("--rounds", "6", "--warmup", "0", "--spin-ms", "1", "--only", "floor",
              "--dir", str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert "floor" in done.stdout and "cold / warm" in done.stdout
    assert "ed25519 sign" in done.stdout
    # a sample not yet taken in one of the modes is shown as "-", never a crash
    few = go("--rounds", "1", "--warmup", "0", "--spin-ms", "1", "--only", "floor",
             "--dir", str(tmp_path))
    assert few.returncode == 0, few.stderr
    rows = [[cell.strip() for cell in line.split("│")[1:-1]]
            for line in few.stdout.splitlines() if line.startswith("│")]
    # (what, warm, cold, cold - warm, cold / warm): a mode not taken is "-", not a number
    assert any("-" in row[1:3] for row in rows), few.stdout
    for bad in (["--spin-ms", "0"], ["--rounds", "0"], ["--only", "nope"]):
        refused = go(*bad)
        assert refused.returncode == 2 and "error" in refused.stderr, bad
