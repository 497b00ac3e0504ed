"""bench/bench_page_size.py times the store-backed cycles on files of each page size, for each
payload.  No timing is asserted: the figures belong to the benchmark, not to a test."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
BENCH = REPO / "bench"


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(BENCH / "bench_page_size.py"), *args],
                          check=False, capture_output=True, text=True, timeout=600, cwd=REPO,
                          env={**os.environ, "COLUMNS": "200"})


def test_every_cycle_on_every_page_size_and_payload(tmp_path: Path) -> None:
    done = _run("--rounds", "2", "--warmup", "0", "--page-sizes", "1024,4096",
                "--payload-bytes", "0,3000", "--dir", str(tmp_path), "--json")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    rows = {(r["cycle"], r["page_size"], r["note"]): r for r in out["rows"]}
    assert set(rows) == {(c, s, n) for c in ("embedding", "service") for s in (1024, 4096)
                         for n in (0, 3000)}
    # each cycle ran on a file made with its page size, and the others are measured against
    # the base page size's run with the same payload
    for (cycle, size, note), row in rows.items():
        assert out["page_sizes"][f"{cycle}-{size}-{note}.db"] == size
        assert row["payload_bytes"] == 13 + (len(',"note":""') + note if note else 0)
        base = rows[(cycle, out["base_page_size"], note)]
        assert row["vs_base"] == pytest.approx(row["median_ms"] / base["median_ms"])
        assert row["vs_langgraph"] == pytest.approx(
            row["median_ms"] / out["langgraph_ms"][str(note)])
    assert out["base_page_size"] == 1024  # the default page size (2048) is not timed: the first
    assert list(tmp_path.iterdir()) == []  # its scratch folder is gone


def test_prints_a_table(tmp_path: Path) -> None:
    done = _run("--rounds", "1", "--warmup", "0", "--page-sizes", "2048",
                "--payload-bytes", "0", "--dir", str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert "cycle medians by store page size" in done.stdout
    assert "LangGraph's cycle (ms) by payload bytes: 13:" in done.stdout


@pytest.mark.parametrize(("flags", "message"), [
    (("--page-sizes", "1000"), "1000 is not a power of two"),
    (("--page-sizes", "256"), "at least 512"),
    (("--page-sizes", "131072"), "131072 is not a power of two from 512 to 65536"),
    (("--page-sizes", "1024,1024"), "different numbers"),
    (("--payload-bytes", "-5"), "at least 0"),
    (("--payload-bytes", "lots"), "numbers separated by commas"),
    (("--payload-bytes", "0,70000"), "over the interactions' bound of 65536"),
    (("--rounds", "0"), "--rounds must be at least 1"),
])
def test_bad_flags_are_refused(tmp_path: Path, flags: tuple[str, ...], message: str) -> None:
    done = _run(*flags, "--dir", str(tmp_path))
    assert done.returncode == 2 and message in done.stderr, done.stderr
