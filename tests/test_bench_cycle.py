"""bench/bench_cycle.py runs and prints every ratio of issue 15's table.  No timing is asserted:
the figures belong to the benchmark, not to a test."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
BENCH = REPO / "bench"
sys.path.insert(0, str(BENCH))

import bench_cycle  # noqa: E402
import benchkit  # noqa: E402


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(BENCH / "bench_cycle.py"), *args],
                          check=False, capture_output=True, text=True, timeout=600,
                          cwd=REPO,
                          env={**os.environ, "COLUMNS": "200"})


def test_prints_every_ratio_and_the_filesystem(tmp_path: Path) -> None:
    done = _run("--rounds", "2", "--warmup", "0", "--batch", "2", "--dir", str(tmp_path))
    assert done.returncode == 0, done.stderr
    fs = benchkit.filesystem_of(tmp_path)
    assert f"on {fs.fstype} {fs.device}" in done.stdout
    for ratio in bench_cycle.RATIOS:
        assert ratio.what in done.stdout
    assert "issue 15's Done-when ratios: " in done.stdout
    assert "embedding API: " in done.stdout or "embedding cycle" in done.stdout
    assert list(tmp_path.iterdir()) == []  # its scratch folder is gone


def test_raw_ed25519_is_the_tokens_own_primitive() -> None:
    """The floor, the raw verify and the statements alone sign and verify with the very
    functions the key ring calls: a raw verify of another library than the ring's would make
    the token's ratio, and the floor, say nothing about pausepoint's own overhead."""
    from pausepoint.core import tokens
    assert bench_cycle.crypto_sign is tokens.crypto_sign
    assert bench_cycle.crypto_sign_open is tokens.crypto_sign_open
    key = bench_cycle.RawEd25519()
    signature = key.sign(b"m")
    assert tokens.ed25519_verify(key.public, b"m", signature)
    key.verify(signature, b"m")
    ring_key = tokens.Ed25519Key.generate("k")
    assert ring_key.sign(b"m") == ring_key.private_key.sign(b"m")  # Ed25519 is deterministic


def test_json_has_every_variant_and_ratio(tmp_path: Path) -> None:
    # three rounds: the floor runs each of its three sequences once in every three rounds
    done = _run("--rounds", "3", "--warmup", "0", "--batch", "1", "--dir", str(tmp_path),
                "--json")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert [r["what"] for r in out["ratios"]] == [r.what for r in bench_cycle.RATIOS]
    for sample in ("sqlite durable commit", "ed25519 sign", "ed25519 verify", "floor",
                   "service cycle", "harness cycle", "langgraph cycle", "token verify",
                   "raw ed25519 verify", bench_cycle.OPENSSL_VERIFY):
        assert out["samples"][sample]["n"] >= 1, sample
    for r in out["ratios"]:  # what the numerator took, and the most it may take
        if r["value"] is not None:
            assert r["measured_ms"] == pytest.approx(r["value"] * r["allowed_ms"] / r["target"])
    measured = {r["what"]: r["value"] for r in out["ratios"]}
    for ratio in bench_cycle.RATIOS:
        if "embedding" not in ratio.what:
            assert measured[ratio.what] is not None, ratio.what
    assert out["samples"]["sqlite durable commit"]["n"] == 2  # two commits per floor
    for floor in ("floor", bench_cycle.SMALL_FLOOR, bench_cycle.BACK_TO_BACK_FLOOR):
        assert out["samples"][floor]["n"] == 1, floor  # each sequence in one round of three
    # every group of the Done-when measured (the embedding ratio may be missing, the harness's
    # is not): a verdict, each miss naming its ratio, its value and its target
    missed = out["done_when_missed"]
    assert isinstance(missed, list)
    assert all(" > " in line and "/" in line for line in missed)
    meets = {r["what"]: r["meets"] for r in out["ratios"]}  # each ratio's own verdict
    assert len(missed) == sum(1 for group in bench_cycle.DONE_WHEN
                              if not any(meets[r.what] for r in group))
    for alone in ("statements alone", "service statements alone"):  # diagnostics: --breakdown
        assert alone not in out["samples"]
    assert out["embedding_breakdown"] is None and out["service_breakdown"] is None


@pytest.mark.parametrize(("only", "cycle", "alone", "key", "bound"), [
    (("embedding", "langgraph"), "embedding cycle", "statements alone", "embedding_breakdown",
     lambda samples: 0.20 * samples["langgraph cycle"]),
    (("service", "floor"), "service cycle", "service statements alone", "service_breakdown",
     lambda samples: 1.5 * samples["floor"])])
def test_breakdown_replays_the_timed_cycles_statements_and_splits_them(
        tmp_path: Path, only: tuple[str, ...], cycle: str, alone: str, key: str,
        bound: Callable[[dict[str, float]], float]) -> None:
    flags = [flag for variant in only for flag in ("--only", variant)]
    done = _run("--rounds", "2", "--warmup", "0", *flags, "--breakdown", "--dir",
                str(tmp_path), "--json")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["samples"][alone]["n"] == 2
    others = {"statements alone", "service statements alone"} - {alone}
    assert not others & set(out["samples"])  # only the timed cycle's statements are replayed
    assert [k for k in ("embedding_breakdown", "service_breakdown") if out[k]] == [key]
    samples = {name: v["median_ms"] for name, v in out["samples"].items()}
    split = out[key]
    assert split["statements_alone_ms"] == pytest.approx(samples[alone])
    assert split["python_ms"] == pytest.approx(samples[cycle] - samples[alone])
    assert split["python_allowed_ms"] == pytest.approx(bound(samples) - samples[alone])


def test_breakdown_prints_the_split(tmp_path: Path) -> None:
    text = _run("--rounds", "1", "--warmup", "0", "--only", "embedding", "--breakdown",
                "--dir", str(tmp_path))
    assert text.returncode == 0, text.stderr
    printed = " ".join(text.stdout.split())
    assert "embedding cycle" in printed and "pausepoint's Python" in printed
    assert "cost of its cold caches, which bench_cold.py measures" in printed


def test_only_runs_one_variant(tmp_path: Path) -> None:
    done = _run("--rounds", "1", "--warmup", "0", "--only", "service", "--dir", str(tmp_path),
                "--json")
    assert done.returncode == 0, done.stderr
    assert set(json.loads(done.stdout)["samples"]) == {"service cycle"}


@pytest.mark.skipif(benchkit.filesystem_of("/dev/shm").fstype != "tmpfs",
                    reason="no tmpfs at /dev/shm")
def test_refuses_a_ram_disk() -> None:
    done = _run("--rounds", "1", "--only", "floor", "--dir", "/dev/shm")
    assert done.returncode != 0
    assert "RAM disk" in done.stderr and "tmpfs" in done.stderr


def test_filesystem_of_picks_the_deepest_mount() -> None:
    if not Path("/proc/self/mountinfo").exists():
        pytest.skip("no /proc/self/mountinfo")
    assert benchkit.filesystem_of("/").mount_point == "/"
    assert benchkit.filesystem_of("/proc/self").fstype == "proc"


def test_strace_summary_rows_are_counted() -> None:
    summary = """\
% time     seconds  usecs/call     calls    errors syscall
------ ----------- ----------- --------- --------- ----------------
 86.77    0.000400          36        11           fdatasync
 13.23    0.000061          30         2         1 fsync
------ ----------- ----------- --------- --------- ----------------
100.00    0.000461          35        13         1 total
"""
    assert bench_cycle.fsync_calls(summary) == 13


def test_each_round_runs_every_variant_once_after_varying_predecessors() -> None:
    """A commit right after another variant's writes costs more than after a variant that only
    computes, so no variant may always follow the same one (a rotation keeps each one's
    predecessor: this fails on it); the order is seeded, so a run can be repeated."""

    class Fake:
        def __init__(self, name: str, ran: list[str]) -> None:
            self.name, self.ran = name, ran

        def round(self) -> list[tuple[str, float]]:
            self.ran.append(self.name)
            return [(self.name, 0.0)]

        def close(self) -> None:
            pass

    names = [f"v{i}" for i in range(5)]

    def run() -> tuple[list[str], dict[str, list[float]]]:
        ran: list[str] = []
        samples = bench_cycle.run_rounds([Fake(n, ran) for n in names], rounds=60, warmup=2)
        return ran, samples

    ran, samples = run()
    assert all(len(samples[n]) == 60 for n in names)  # the warm-up rounds are not kept
    rounds = [ran[i:i + 5] for i in range(0, len(ran), 5)]
    assert len(rounds) == 62 and all(sorted(r) == names for r in rounds)  # each once a round
    for name in names:
        before = {ran[i - 1] for i in range(1, len(ran)) if ran[i] == name}
        assert len(before) >= 3, (name, before)
    assert run()[0] == ran


def _ratios(**values: float | None) -> dict[str, object]:
    """A report as :func:`bench_cycle.report` makes it, but only its ratios: ``values`` by the
    first word of each ratio's numerator (``harness``, ``embedding``, ``service``, ...)."""
    return {"ratios": [{"what": r.what, "value": values.get(r.numerator.split()[0])}
                       for r in bench_cycle.RATIOS]}


def test_the_floor_runs_its_steps_in_a_cycles_order_one_sequence_per_round(
        tmp_path: Path) -> None:
    """The floor signs, commits, verifies and commits again, in that order (a cycle's verify
    comes between its commits), as one sequence per round; its sample is the sum of the four
    steps; the same on the stores' page size, and the yardstick before (commits back to back),
    each once in every three rounds -- never two sequences in one round, so each follows
    another variant of the rotation."""
    floor = bench_cycle.Floor(str(tmp_path))
    log: list[str] = []
    try:
        names = {id(floor.conn): "commit", id(floor.small): "commit-small"}

        def commit(conn: sqlite3.Connection) -> float:
            log.append(names[id(conn)])
            return 0.001

        class Key:
            def sign(self, message: bytes) -> bytes:
                log.append("sign")
                return b"s"

            def verify(self, signature: bytes, message: bytes) -> None:
                log.append("verify")

        floor._commit = commit  # type: ignore[method-assign]
        floor.key = Key()  # type: ignore[assignment]
        rounds = []
        for _ in range(12):
            log.clear()
            samples = floor.round()
            rounds.append((list(log), samples))
        by_sample = {"floor": ["sign", "commit", "verify", "commit"],
                     bench_cycle.SMALL_FLOOR: ["sign", "commit-small", "verify",
                                               "commit-small"],
                     bench_cycle.BACK_TO_BACK_FLOOR: ["commit", "commit", "sign", "verify"]}
        kinds = []
        for steps, samples in rounds:
            kind = samples[-1][0]
            kinds.append(kind)
            assert steps == by_sample[kind], (kind, steps)
            total = samples[-1][1]
            assert total >= 0.002  # both commits are in it (0.001 each, here)
            if kind == "floor":  # each step's sample, and the floor as their sum
                assert [n for n, _ in samples] == ["ed25519 sign", "sqlite durable commit",
                                                   "ed25519 verify", "sqlite durable commit",
                                                   "floor"]
                assert total == pytest.approx(sum(v for _, v in samples[:4]))
            else:
                assert len(samples) == 1
        assert kinds[:3] == ["floor", bench_cycle.SMALL_FLOOR, bench_cycle.BACK_TO_BACK_FLOOR]
        for block in range(0, 12, 3):  # each once in every three rounds
            assert sorted(kinds[block:block + 3]) == sorted(by_sample), kinds
        assert len({tuple(kinds[b:b + 3]) for b in range(3, 12, 3)}) > 1  # shuffled
    finally:
        floor.close()


def test_over_runs_gives_each_ratios_spread_and_the_runs_meeting_it() -> None:
    outs = [_ratios(embedding=0.19, service=1.6), _ratios(embedding=0.23, service=1.4),
            _ratios(embedding=0.21, service=None)]
    spread = {r["what"]: r for r in bench_cycle.over_runs(outs)}
    emb = spread["embedding-API cycle / LangGraph SqliteSaver cycle"]
    assert (emb["min"], emb["median"], emb["max"]) == (0.19, 0.21, 0.23)
    assert (emb["met"], emb["runs"]) == (1, 3)
    service = spread["service cycle / floor"]  # a run that did not measure it is not counted
    assert (service["min"], service["median"], service["max"]) == (1.4, 1.5, 1.6)
    assert (service["met"], service["runs"]) == (1, 2)
    assert spread["token verify / raw Ed25519 verify"]["runs"] == 0
    assert spread["token verify / raw Ed25519 verify"]["median"] is None


def test_done_when_needs_one_langgraph_ratio_the_service_and_the_token_ratio() -> None:
    missed = bench_cycle.done_when_missed
    assert missed(_ratios(harness=0.30, embedding=0.19, service=1.4, token=1.2)) == []
    assert missed(_ratios(harness=0.19, embedding=0.30, service=1.4, token=1.2)) == []
    assert missed(_ratios(harness=0.20, embedding=None, service=1.5, token=1.3)) == []  # at most
    both = missed(_ratios(harness=0.30, embedding=0.21, service=1.4, token=1.2))
    assert both is not None and len(both) == 1
    assert "harness cycle / LangGraph SqliteSaver cycle 0.300 > 0.20" in both[0]
    assert "embedding-API cycle / LangGraph SqliteSaver cycle 0.210 > 0.20" in both[0]
    assert missed(_ratios(harness=0.30, embedding=0.19, service=1.51, token=1.31)) == [
        "service cycle / floor 1.510 > 1.50", "token verify / raw Ed25519 verify 1.310 > 1.30"]
    # a group with no ratio measured: no verdict (the other groups' misses notwithstanding)
    assert missed(_ratios(harness=0.30, embedding=0.30, service=None, token=1.2)) is None
    assert missed(_ratios(harness=None, embedding=None, service=1.4, token=1.2)) is None


def test_runs_repeats_the_benchmark_on_fresh_files(tmp_path: Path) -> None:
    done = _run("--runs", "2", "--rounds", "1", "--warmup", "0", "--only", "service",
                "--only", "floor", "--dir", str(tmp_path), "--json")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert len(out["runs"]) == 2 and "run 2 of 2" in done.stderr
    assert all(run["samples"]["service cycle"]["n"] == 1 for run in out["runs"])
    spread = {r["what"]: r for r in out["over_runs"]}
    assert spread["service cycle / floor"]["runs"] == 2
    assert spread["service cycle / floor"]["min"] == min(
        run["ratios"][2]["value"] for run in out["runs"])
    assert list(tmp_path.iterdir()) == []  # each run's scratch folder is gone
    text = _run("--runs", "2", "--rounds", "1", "--warmup", "0", "--only", "service",
                "--only", "floor", "--dir", str(tmp_path))
    assert text.returncode == 0, text.stderr
    assert "over 2 runs" in text.stdout and "runs meeting it" in text.stdout
    # service and floor alone measure no LangGraph nor token ratio: no Done-when verdict
    assert "runs meeting every ratio of issue 15's Done-when at once: 0 of 0 (the other 2 did " \
        "not measure them all)" in text.stdout
    assert all(run["done_when_missed"] is None for run in out["runs"])


@pytest.mark.parametrize(("args", "says"), [
    (("--runs", "0"), "--runs must be at least 1"),
    (("--runs", "two"), "invalid int value"),
    (("--fsync-rounds", "10"), "two round counts such as 10,60"),
    (("--fsync-rounds", "10,ten"), "two round counts such as 10,60"),
    (("--fsync-rounds", "10,10"), "two different round counts"),
    (("--fsync-rounds", "0,10"), "of at least 1"),
])
def test_bad_flags_are_refused_before_anything_runs(tmp_path: Path, args: tuple[str, ...],
                                                     says: str) -> None:
    done = _run(*args, "--dir", str(tmp_path))
    assert done.returncode == 2
    assert says in done.stderr, done.stderr
    assert list(tmp_path.iterdir()) == []


def test_breakdown_splits_the_embedding_cycle_into_its_statements_and_the_python() -> None:
    split = bench_cycle.breakdown({"embedding cycle": 0.001, "statements alone": 0.0006,
                                   "langgraph cycle": 0.004})
    assert split is not None
    assert split["python_ms"] == pytest.approx(0.4)
    assert split["python_share"] == pytest.approx(0.4)
    assert split["python_allowed_ms"] == pytest.approx(0.2)  # 0.20 * 4 ms - 0.6 ms
    assert bench_cycle.breakdown({"embedding cycle": 0.001}) is None
    no_peer = bench_cycle.breakdown({"embedding cycle": 0.001, "statements alone": 0.0006})
    assert no_peer is not None and no_peer["python_allowed_ms"] is None
    service = bench_cycle.breakdown(
        {"service cycle": 0.0008, "service statements alone": 0.0005, "floor": 0.0004},
        bench_cycle.SPLITS["service"])
    assert service is not None
    assert service["python_ms"] == pytest.approx(0.3)
    assert service["python_allowed_ms"] == pytest.approx(0.1)  # 1.5 * 0.4 ms - 0.5 ms


@pytest.mark.parametrize(("source", "label", "table"), [
    ("embedding", "statements alone", "pausepoint_runs"),
    ("service", "service statements alone", "pausepoint_pauses")])
def test_the_statements_replay_the_cycles_writes(tmp_path: Path, source: str, label: str,
                                                 table: str) -> None:
    cycle = bench_cycle.StatementsCycle(str(tmp_path), source)
    try:
        queries = [q for q, _p, _c in cycle.recorded]
        assert queries.count("COMMIT") == 2 and queries.count("BEGIN IMMEDIATE") == 2
        assert cycle.sign_at < cycle.verify_at
        for _ in range(3):  # each round a fresh run: every write lands again
            [(name, seconds)] = cycle.round()
            assert name == label and seconds > 0
        rows = cycle.conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
        assert rows == 3
        consumed = cycle.conn.execute(
            "SELECT count(*) FROM pausepoint_pauses WHERE phase = 'consumed'").fetchone()[0]
        assert consumed == 3  # each replayed consume landed on its own pause
        # a replay whose writes change other rows than recorded is refused, not timed
        cycle.recorded = [(q, p, 7 if q.startswith("UPDATE") else c)
                          for q, p, c in cycle.recorded]
        with pytest.raises(RuntimeError, match="did not change the rows"):
            cycle.round()
    finally:
        cycle.close()


def test_payload_bytes_grow_every_cycles_question(tmp_path: Path) -> None:
    """``--payload-bytes N``: every cycle -- LangGraph's too -- asks the issue's payload with a
    note of N characters, and the floor's row grows by as many bytes."""
    assert bench_cycle.payload_of(0) == bench_cycle.PAYLOAD
    payload = bench_cycle.payload_of(3000)
    assert bench_cycle.json_bytes(payload) == bench_cycle.json_bytes(bench_cycle.PAYLOAD) + \
        len(',"note":""') + 3000
    names = ["floor", "service", "harness", "embedding", "langgraph"]
    variants, missing = bench_cycle.make_variants(names, str(tmp_path), 1, payload)
    assert not missing
    try:
        for variant in variants:
            variant.round()  # LangGraph's round checks the value its graph interrupted with
        floor = next(v for v in variants if v.name == "floor")
        row: str = floor.row  # type: ignore[attr-defined]
        assert len(row) == bench_cycle.FLOOR_ROW + len(',"note":""') + 3000
    finally:
        for variant in variants:
            variant.close()
    for db in ("service.db", "harness.db", "embedding.db"):
        conn = sqlite3.connect(tmp_path / db)
        try:
            asked = [json.loads(text) for (text,)
                     in conn.execute("SELECT payload FROM pausepoint_pauses")]
        finally:
            conn.close()
        assert asked == [payload], db
    stored = b"".join(path.read_bytes() for path in tmp_path.glob("langgraph.db*"))
    assert b"x" * 3000 in stored  # the graph's input and its interrupt, checkpointed


def test_payload_bytes_on_the_command_line(tmp_path: Path) -> None:
    done = _run("--rounds", "1", "--warmup", "0", "--only", "service", "--payload-bytes", "100",
                "--dir", str(tmp_path), "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["payload_bytes"] == 13 + len(',"note":""') + 100
    bad = _run("--rounds", "1", "--payload-bytes", "-1", "--dir", str(tmp_path))
    assert bad.returncode == 2 and "--payload-bytes at least 0" in bad.stderr
    # a payload over the interactions' bound would be refused payload_invalid mid-run: the
    # flag is refused first, with the longest note that fits
    assert bench_cycle.note_error(65513) is None
    long = _run("--rounds", "1", "--payload-bytes", "65514", "--dir", str(tmp_path))
    assert long.returncode == 2, long.stderr
    assert "65537 bytes of JSON, over the interactions' bound of 65536 (at most 65513" \
        in long.stderr


def test_fsync_children_ask_the_same_payload(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """The fsync count's child runs (under strace) time cycles asking the run's payload."""
    calls: list[list[str]] = []

    def fake_run(argv: list[str], **_kwargs: object) -> None:
        calls.append(argv)

    monkeypatch.setattr(bench_cycle.shutil, "which", lambda _name: "/usr/bin/strace")
    monkeypatch.setattr(bench_cycle.subprocess, "run", fake_run)
    bench_cycle.fsyncs_per_cycle(["service"], str(tmp_path), 1, 2, note=100)
    assert len(calls) == 2
    for argv in calls:
        i = argv.index("--payload-bytes")
        assert argv[i + 1] == "100" and argv[argv.index("--only") + 1] == "service"
