"""bench/bench_postgres.py runs on PostgreSQL and its figures are consistent.  No timing is
asserted: the figures belong to the benchmark, not to a test."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from pg import pg_dsn

REPO = Path(__file__).resolve().parent.parent


def test_runs_every_point_and_its_figures_add_up(tmp_path: Path) -> None:
    pg_dsn()  # skips without a server (fails under CI)
    done = subprocess.run(
        [sys.executable, str(REPO / "bench" / "bench_postgres.py"), "--stores", "postgres",
         "--paths", "one-write,read-then-update", "--resumers", "1,2", "--per-resumer", "3",
         "--rounds", "2", "--dir", str(tmp_path), "--json"],
        check=False, capture_output=True, text=True, timeout=600, cwd=REPO, env=os.environ)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.splitlines()[-1])
    assert out["server"]["version"].startswith("PostgreSQL ")
    assert out["server"]["same_machine"] is True
    assert "on this machine" in done.stdout and "load average" in done.stdout
    counts = {c["path"]: c for c in out["counts"]}
    assert (counts["one-write"]["round_trips"], counts["one-write"]["statements"]) == (1, 1)
    assert (counts["read-then-update"]["round_trips"],
            counts["read-then-update"]["statements"]) == (3, 3)
    rows = out["rows"]
    assert [(r["path"], r["resumers"]) for r in rows] == [
        ("one-write", 1), ("one-write", 2), ("read-then-update", 1), ("read-then-update", 2)]
    cores = out["cores"]
    for r in rows:
        assert len(r["rates"]) == 2 and all(x > 0 for x in r["rates"])
        assert min(r["rates"]) <= r["rate"] <= max(r["rates"])
        assert 0 < r["p50"] <= r["p95"]
        assert r["client_us"] > 0 and r["server_us"] >= 0 and r["aux_us"] >= 0
        ms = (r["client_us"] + r["server_us"] + r["aux_us"]) / 1000
        line = (f"{r['store']}, {r['resumers']} resumers: " if r["resumers"] == 2 else None)
        if line is not None:  # the arithmetic is printed for the largest point of each path
            assert line in done.stdout
            assert f"{cores} cores x 1000 ms / {ms:.3f} ms = {cores * 1000 / ms:.0f}" \
                in done.stdout
    assert list(tmp_path.iterdir()) == []  # its scratch folder is gone


def test_a_bad_resumers_sweep_is_a_usage_error(tmp_path: Path) -> None:
    """Refused before anything runs (no server needed), naming the flag."""
    for sweep, message in (("1,x", "numbers separated by commas"),
                           ("0,2", "different numbers of at least 1"),
                           ("2,2", "different numbers of at least 1")):
        done = subprocess.run(
            [sys.executable, str(REPO / "bench" / "bench_postgres.py"), "--resumers", sweep,
             "--dir", str(tmp_path)],
            check=False, capture_output=True, text=True, timeout=120, cwd=REPO, env=os.environ)
        assert done.returncode == 2 and f"--resumers takes {message}" in done.stderr, sweep
