"""Benchmark: resumes per second with concurrent resumers, PostgreSQL and SQLite side by side.

Not a test: it prints figures and asserts nothing about time.

Each resumer is a *process* (its own interpreter, store handle and connection -- no shared GIL),
like one of several resume servers sharing one ledger; ``--mode threads`` runs them as threads
of one process instead (a connection each, one GIL).  In every round each resumer first
creates its own share of distinct resumable pauses (not timed), all wait on a barrier, then each
resumes its pauses one after another through ``PauseService.resume`` (verify the Ed25519 token,
read the ledger row, the single-winner conditional update, read the turn checkpoint).
Throughput is all resumes of the round over the wall time from the barrier to the last resume;
latency is per resume.  The figures are the median over rounds (throughput) and the median of
the rounds' p50 / p95 (latency).

Usage::

    eval "$(bash .ci/postgres.sh)"          # PostgreSQL on loopback, exports the DSN
    python bench/bench_postgres.py           # 1, 2, 4 and 8 resumers, 5 rounds of 250 each
    python bench/bench_postgres.py --resumers 8 --per-resumer 400 --rounds 7
    python bench/bench_postgres.py --profile # also: where one resumer spends its time
"""

from __future__ import annotations

import argparse
import cProfile
import io
import multiprocessing
import os
import pstats
import queue
import resource
import statistics
import sys
import threading
import time
import uuid
from typing import Any

from benchkit import disk_scratch, percentile
from pausepoint.engine.clock import SystemClock
from pausepoint.engine.compose import compose
from pausepoint.engine.harness import DEFAULT_INTERACTIONS
from pausepoint.engine.run import PauseBinding
from pausepoint.engine.service import ResumeRequest
from pausepoint_conformance.faults.testbed import (
    StoreSpec,
    drop,
    fresh_postgres,
    fresh_sqlite,
    load_ring,
    save_key,
)

RESPONSE = {"approved": True}
REQUEST = ResumeRequest(session_id="bench", scope="bench")


def _cpu_self() -> float:
    """CPU seconds of this resumer: its process, or its thread when resumers are threads."""
    who = resource.RUSAGE_THREAD if threading.current_thread() is not threading.main_thread() \
        else resource.RUSAGE_SELF
    r = resource.getrusage(who)
    return r.ru_utime + r.ru_stime


def _cpu_of(pid: int | None) -> float:
    """CPU seconds of another process on this machine (the PostgreSQL backend serving us)."""
    if pid is None:
        return 0.0
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def resumer(index: int, spec_json: dict[str, Any], key_path: str, jobs: Any, results: Any,
            barrier: Any, profile: bool) -> None:
    """One resumer process: create its pauses, wait, resume them, report timings."""
    store = StoreSpec.from_json(spec_json).open()
    backend: int | None = None
    if store.__class__.__name__ == "PostgresStore":
        with store.transaction(write=False) as conn:  # type: ignore[attr-defined]
            backend = int(conn.info.backend_pid)
    service = compose(store=store, signer=load_ring(key_path), interactions=DEFAULT_INTERACTIONS,
                      clock=SystemClock(), ttl_ms=3_600_000).service
    prof = cProfile.Profile() if profile and index == 0 else None
    try:
        while True:
            job = jobs.get()
            if job is None:
                break
            round_no, n = job
            tokens = []
            for i in range(n):
                run = f"r{round_no}-w{index}-{i}-{uuid.uuid4().hex[:6]}"
                binding = PauseBinding(run_id=run, root_run_id=run, session_id="bench",
                                       thread_id=run, scope="bench")
                service.pause(binding=binding, name="approve", payload={"i": i},
                              interrupt_id=run, checkpoint_id=f"{run}@0")
                tokens.append(service.record_turn(run, "{}").token)
            barrier.wait(timeout=600)
            latencies = []
            if prof is not None:
                prof.enable()
            cpu0, server0 = _cpu_self(), _cpu_of(backend)
            start = time.perf_counter()
            for token in tokens:
                t0 = time.perf_counter()
                out = service.resume(token, RESPONSE, REQUEST)
                latencies.append(time.perf_counter() - t0)
                assert not out.replayed
            end = time.perf_counter()
            cpu = (_cpu_self() - cpu0, _cpu_of(backend) - server0)
            if prof is not None:
                prof.disable()
            results.put((index, start, end, latencies, cpu))
    finally:
        if prof is not None:
            s = io.StringIO()
            pstats.Stats(prof, stream=s).sort_stats("tottime").print_stats(18)
            results.put((index, -1.0, -1.0, s.getvalue(), (0.0, 0.0)))
        store.close()


def bench(spec: StoreSpec, key_path: str, resumers: int, per: int, rounds: int,
          profile: bool = False, mode: str = "processes") -> dict[str, Any]:
    barrier: Any
    results: Any
    queues: list[Any]
    procs: list[Any]
    if mode == "threads":  # one process, a thread (and connection) per resumer, one GIL
        barrier, results = threading.Barrier(resumers), queue.Queue()
        queues = [queue.Queue() for _ in range(resumers)]
        procs = [threading.Thread(target=resumer, args=(i, spec.to_json(), key_path, queues[i],
                                                        results, barrier, profile), daemon=True)
                 for i in range(resumers)]
    else:
        ctx = multiprocessing.get_context("spawn")
        barrier, results = ctx.Barrier(resumers), ctx.Queue()
        queues = [ctx.Queue() for _ in range(resumers)]
        procs = [ctx.Process(target=resumer, args=(i, spec.to_json(), key_path, queues[i],
                                                   results, barrier, profile), daemon=True)
                 for i in range(resumers)]
    for p in procs:
        p.start()
    rates: list[float] = []
    cpus: list[tuple[float, float]] = []
    p50s: list[float] = []
    p95s: list[float] = []
    try:
        for r in range(rounds):
            for q in queues:
                q.put((r, per))
            got = [results.get(timeout=900) for _ in range(resumers)]
            start = min(g[1] for g in got)
            end = max(g[2] for g in got)
            lat = [x for g in got for x in g[3]]
            rates.append(len(lat) / (end - start))
            cpus.append((sum(g[4][0] for g in got) / len(lat) * 1e6,
                         sum(g[4][1] for g in got) / len(lat) * 1e6))
            p50s.append(percentile(lat, 0.50) * 1000)
            p95s.append(percentile(lat, 0.95) * 1000)
            print(f"  {spec.kind:<8} {resumers} resumer(s) round {r + 1}: "
                  f"{rates[-1]:6.0f} resumes/s  "
                  f"p50 {p50s[-1]:6.2f} ms  p95 {p95s[-1]:6.2f} ms  cpu/resume client "
                  f"{cpus[-1][0]:4.0f} us server {cpus[-1][1]:4.0f} us  "
                  f"load {os.getloadavg()[0]:.1f}", flush=True)
    finally:
        for q in queues:
            q.put(None)
        profile_text = ""
        if profile:
            item = results.get(timeout=60)
            profile_text = str(item[3])
        for p in procs:
            p.join(timeout=60)
    return {"store": f"{spec.kind}/{mode[0]}", "resumers": resumers, "per": per, "rounds": rounds,
            "rate": statistics.median(rates), "rates": rates, "p50": statistics.median(p50s),
            "p95": statistics.median(p95s), "profile": profile_text,
            "client_us": statistics.median(c for c, _ in cpus),
            "server_us": statistics.median(sv for _, sv in cpus)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--resumers", default="1,2,4,8",
                        help="how many concurrent resumers, a comma-separated sweep "
                        "(default 1,2,4,8)")
    parser.add_argument("--per-resumer", type=int, default=250)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--stores", default="postgres,sqlite")
    parser.add_argument("--mode", default="processes",
                        help="processes (default), threads, or both: processes,threads")
    parser.add_argument("--dir", help="where the SQLite file goes, on a real disk (default: a "
                        "temporary folder in the repository)")
    parser.add_argument("--profile", action="store_true",
                        help="cProfile resumer 0 during the timed part and print the top")
    args = parser.parse_args(argv)
    sweep = [int(n) for n in args.resumers.split(",")]
    dsn = os.environ.get("PAUSEPOINT_PG_DSN", "")
    rows = []
    with disk_scratch(args.dir) as (tmp, fs):
        key = os.path.join(tmp, "key.ed25519")
        save_key(key)
        for kind in args.stores.split(","):
            if kind == "postgres" and not dsn:
                print("postgres: skipped, PAUSEPOINT_PG_DSN is not set", file=sys.stderr)
                continue
            for mode in args.mode.split(","):
                for resumers in sweep:
                    # a fresh store for each point, so no point resumes on a bigger ledger
                    spec = (fresh_postgres(dsn, "pp_bench") if kind == "postgres"
                            else fresh_sqlite(tmp, f"bench-{mode}-{resumers}.db"))
                    spec.open().close()  # create the schema before the resumers race to
                    try:
                        rows.append(bench(spec, key, resumers, args.per_resumer, args.rounds,
                                          args.profile, mode))
                    finally:
                        drop(spec)
    print()
    print(f"resumes/s by concurrent resumers (/p processes, /t threads), {args.per_resumer} "
          f"resumes each per round, {args.rounds} rounds (median); SQLite on {fs.describe()}")
    print(f"{'store':<10} {'resumers':>8} {'resumes/s':>10} {'p50 ms':>8} {'p95 ms':>8} "
          f"{'client us':>9} {'server us':>9} {'cpu-bound/s':>11}   rounds")
    cores = os.cpu_count() or 1
    for row in rows:
        cpu = row["client_us"] + row["server_us"]
        print(f"{row['store']:<10} {row['resumers']:>8} {row['rate']:>10.0f} {row['p50']:>8.2f} "
              f"{row['p95']:>8.2f} {row['client_us']:>9.0f} {row['server_us']:>9.0f} "
              f"{cores / cpu * 1e6:>11.0f}   " + " ".join(f"{x:.0f}" for x in row["rates"]))
    print(f"client us / server us: CPU time per resume in the resumer processes and in their "
          f"PostgreSQL backends; cpu-bound/s: what {cores} otherwise idle core(s) would sustain "
          f"at that cost (load average now {os.getloadavg()[0]:.1f})")
    for row in rows:
        if row["profile"]:
            print(f"\n--- profile of one {row['store']} resumer (timed part) ---")
            print(row["profile"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
