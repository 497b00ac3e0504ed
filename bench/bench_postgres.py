"""Benchmark: resumes per second with concurrent resumers, and the CPU each resume costs.

Not a test: it prints figures and asserts nothing about time.

Each resumer is a *process* (its own interpreter, store handle and connection -- no shared GIL),
like one of several resume servers sharing one ledger; ``--mode threads`` runs them as threads
of one process instead (a connection each, one GIL).  In every round each resumer first
creates its own share of distinct resumable pauses (not timed), all wait on a barrier, then each
resumes its pauses one after another through ``PauseService.resume``.  Throughput is all
resumes of the round over the wall time from the barrier to the last resume; latency is per
resume; the figures are the medians over the rounds.

CPU per resume, from the timed part of each round:

* client -- the resumer processes' own user + system time (``getrusage``);
* server -- the user + system time of the PostgreSQL backends serving them (``/proc/<pid>/stat``
  of each connection's ``backend_pid``: the server must run on this machine, which the
  benchmark checks and says);
* aux -- the server's other processes (WAL writer, checkpointer, ...) over the round, divided
  by the round's resumes.  They serve every client of the server, so on a shared server this
  is an upper bound.

The CPU-bound ceiling is ``cores x 1000 ms / (CPU ms per resume)``: what this machine's cores
could sustain if they did nothing else, server included.

``--paths`` picks how a resume reaches PostgreSQL: ``one-write`` (the ledger's one conditional
``UPDATE ... RETURNING``, one round trip) and ``read-then-update`` (the same service over a ledger
without it: read the row, conditional update, read the turn checkpoint -- three round trips).
Before the sweep it counts, with libpq's protocol trace, the round trips and statements of one
resume on each path.

Usage::

    eval "$(bash .ci/postgres.sh)"          # PostgreSQL on loopback, exports the DSN
    python bench/bench_postgres.py           # 1, 2, 4 and 8 resumers, 5 rounds of 250 each
    python bench/bench_postgres.py --resumers 8 --per-resumer 400 --rounds 7
    python bench/bench_postgres.py --paths one-write,read-then-update --stores postgres
    python bench/bench_postgres.py --profile # also: where one resumer spends its time
"""

from __future__ import annotations

import argparse
import collections
import cProfile
import io
import json
import multiprocessing
import os
import pstats
import queue
import resource
import statistics
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from benchkit import disk_scratch, int_list, percentile
from pausepoint.engine.clock import SystemClock
from pausepoint.engine.compose import compose
from pausepoint.engine.harness import DEFAULT_INTERACTIONS
from pausepoint.engine.run import PauseBinding
from pausepoint.engine.service import PauseService, ResumeRequest
from pausepoint.stores.sql import SqlLedger
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
PATHS = ("one-write", "read-then-update")
TARGET = 2000  # resumes/s with 8 resumers (issue 15)


def _cpu_self() -> float:
    """CPU seconds of this resumer: its process, or its thread when resumers are threads."""
    who = resource.RUSAGE_THREAD if threading.current_thread() is not threading.main_thread() \
        else resource.RUSAGE_SELF
    r = resource.getrusage(who)
    return r.ru_utime + r.ru_stime


def _stat(pid: int) -> list[str] | None:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None


def _cpu_of(pid: int | None) -> float:
    """CPU seconds of another process on this machine (the PostgreSQL backend serving us)."""
    fields = None if pid is None else _stat(pid)
    if fields is None:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return ""


def server_aux_pids() -> list[int]:
    """The PostgreSQL server's processes on this machine that serve no client connection (the
    postmaster, WAL writer, checkpointer, background writer, autovacuum, ...): a client
    backend's title names its client's address, ``host(port)``."""
    pids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/comm") as f:
                    comm = f.read().strip()
            except OSError:
                continue
            if comm.startswith("postgres") and "(" not in _cmdline(int(entry)):
                pids.append(int(entry))
    return pids


def _cpu_aux(pids: list[int]) -> dict[int, float]:
    """CPU seconds of each of ``pids`` still alive (a process gone is left out)."""
    ticks = os.sysconf("SC_CLK_TCK")
    return {p: (int(f[11]) + int(f[12])) / ticks for p in pids if (f := _stat(p)) is not None}


def _aux_delta(before: dict[int, float], after: dict[int, float]) -> float:
    """CPU spent between two readings by the processes alive at both (one that ended or was
    replaced meanwhile -- an autovacuum worker, say -- would otherwise count negative)."""
    return sum(max(0.0, after[p] - before[p]) for p in before.keys() & after.keys())


def make_service(store: Any, key_path: str, path: str) -> PauseService:
    service = compose(store=store, signer=load_ring(key_path), interactions=DEFAULT_INTERACTIONS,
                      clock=SystemClock(), ttl_ms=3_600_000).service
    if path == "read-then-update" and isinstance(service.ledger, SqlLedger):
        service.ledger = SqlLedger(service.ledger._s)  # the SQL ledger without the one write
    return service


def issue(service: PauseService, n: int, tag: str) -> list[str]:
    """``n`` fresh resumable pauses; their tokens."""
    tokens = []
    for i in range(n):
        run = f"{tag}-{i}-{uuid.uuid4().hex[:6]}"
        binding = PauseBinding(run_id=run, root_run_id=run, session_id="bench", thread_id=run,
                               scope="bench")
        service.pause(binding=binding, name="approve", payload={"i": i}, interrupt_id=run,
                      checkpoint_id=f"{run}@0")
        tokens.append(service.record_turn(run, "{}").token)
    return tokens


def _backend(store: Any) -> Any:
    """This thread's psycopg connection of a PostgresStore, or None."""
    if store.__class__.__name__ != "PostgresStore":
        return None
    with store.transaction(write=False) as conn:
        return conn


def resumer(index: int, spec_json: dict[str, Any], key_path: str, path: str, jobs: Any,
            results: Any, barrier: Any, profile: bool) -> None:
    """One resumer process: create its pauses, wait, resume them, report timings."""
    store = StoreSpec.from_json(spec_json).open()
    conn = _backend(store)
    backend: int | None = None if conn is None else int(conn.info.backend_pid)
    service = make_service(store, key_path, path)
    prof = cProfile.Profile() if profile and index == 0 else None
    try:
        while True:
            job = jobs.get()
            if job is None:
                break
            round_no, n = job
            tokens = issue(service, n, f"r{round_no}-w{index}")
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


@contextmanager
def protocol_trace(conn: Any) -> Iterator[collections.Counter[tuple[str, str]]]:
    """What a psycopg connection sends (``F``) and receives (``B``) inside the block, counted by
    protocol message (``Execute``, ``Parse``, ``ReadyForQuery``, ...) from libpq's own trace;
    the counter is filled when the block ends."""
    import psycopg

    seen: collections.Counter[tuple[str, str]] = collections.Counter()
    with tempfile.TemporaryFile("w+") as trace:
        conn.pgconn.trace(trace.fileno())
        conn.pgconn.set_trace_flags(psycopg.pq.Trace.SUPPRESS_TIMESTAMPS
                                    | psycopg.pq.Trace.REGRESS_MODE)
        try:
            yield seen
        finally:
            conn.pgconn.untrace()
            trace.seek(0)
            for line in trace:
                parts = line.split("\t")
                if len(parts) >= 3 and parts[2].split():
                    seen[(parts[0], parts[2].split()[0])] += 1


def round_trips(seen: collections.Counter[tuple[str, str]]) -> int:
    """Every simple query and every extended-protocol ``Sync`` gets one ``ReadyForQuery``."""
    return seen[("B", "ReadyForQuery")]


def statements(seen: collections.Counter[tuple[str, str]]) -> int:
    return seen[("F", "Execute")] + seen[("F", "Query")]


def protocol_counts(spec: StoreSpec, key_path: str, path: str, n: int = 10) -> dict[str, Any]:
    """Round trips, statements and parses per resume on ``path``, from libpq's protocol trace
    of ``n`` resumes after as many untraced ones (psycopg prepares a statement on its fifth
    use, so the traced ones show the steady state)."""
    store = spec.open()
    try:
        service = make_service(store, key_path, path)
        tokens = issue(service, 2 * n, f"count-{path}")
        for token in tokens[:n]:
            service.resume(token, RESPONSE, REQUEST)
        with protocol_trace(_backend(store)) as seen:
            for token in tokens[n:]:
                service.resume(token, RESPONSE, REQUEST)
    finally:
        store.close()
    return {"path": path, "round_trips": round_trips(seen) / n,
            "statements": statements(seen) / n, "parses": seen[("F", "Parse")] / n}


def server_info(spec: StoreSpec) -> dict[str, Any]:
    """The server's version, and whether it runs on this machine: the backend serving a
    connection is a process here, named postgres."""
    import psycopg

    store = spec.open()
    try:
        conn = _backend(store)
        version = str(conn.execute("SELECT version()").fetchone()[0])
        pid = int(conn.info.backend_pid)
        try:
            with open(f"/proc/{pid}/comm") as f:
                local = f.read().strip().startswith("postgres")
        except OSError:
            local = False
    finally:
        store.close()
    return {"version": version, "libpq": psycopg.pq.version(), "psycopg": psycopg.__version__,
            "same_machine": local}


def bench(spec: StoreSpec, key_path: str, resumers: int, per: int, rounds: int,
          profile: bool = False, mode: str = "processes",
          path: str = "one-write") -> dict[str, Any]:
    barrier: Any
    results: Any
    queues: list[Any]
    procs: list[Any]
    if mode == "threads":  # one process, a thread (and connection) per resumer, one GIL
        barrier, results = threading.Barrier(resumers), queue.Queue()
        queues = [queue.Queue() for _ in range(resumers)]
        procs = [threading.Thread(target=resumer, args=(i, spec.to_json(), key_path, path,
                                                        queues[i], results, barrier, profile),
                                  daemon=True)
                 for i in range(resumers)]
    else:
        ctx = multiprocessing.get_context("spawn")
        barrier, results = ctx.Barrier(resumers), ctx.Queue()
        queues = [ctx.Queue() for _ in range(resumers)]
        procs = [ctx.Process(target=resumer, args=(i, spec.to_json(), key_path, path, queues[i],
                                                   results, barrier, profile), daemon=True)
                 for i in range(resumers)]
    aux = server_aux_pids() if spec.kind == "postgres" else []
    for p in procs:
        p.start()
    rates: list[float] = []
    cpus: list[tuple[float, float, float]] = []
    p50s: list[float] = []
    p95s: list[float] = []
    loads: list[float] = []
    label = f"{spec.kind}/{path}" if spec.kind == "postgres" else spec.kind
    try:
        for r in range(rounds):
            for q in queues:
                q.put((r, per))
            # the aux processes' CPU is read around the whole round (the issuing included,
            # which is not timed), so it is an upper bound too
            aux0 = _cpu_aux(aux)
            got = [results.get(timeout=900) for _ in range(resumers)]
            aux_cpu = _aux_delta(aux0, _cpu_aux(aux))
            start = min(g[1] for g in got)
            end = max(g[2] for g in got)
            lat = [x for g in got for x in g[3]]
            rates.append(len(lat) / (end - start))
            cpus.append((sum(g[4][0] for g in got) / len(lat) * 1e6,
                         sum(g[4][1] for g in got) / len(lat) * 1e6,
                         aux_cpu / len(lat) * 1e6))
            p50s.append(percentile(lat, 0.50) * 1000)
            p95s.append(percentile(lat, 0.95) * 1000)
            loads.append(os.getloadavg()[0])
            print(f"  {label:<26} {resumers} resumer(s) round {r + 1}: "
                  f"{rates[-1]:6.0f} resumes/s  "
                  f"p50 {p50s[-1]:6.2f} ms  p95 {p95s[-1]:6.2f} ms  cpu/resume client "
                  f"{cpus[-1][0]:4.0f} us server {cpus[-1][1]:4.0f} us aux {cpus[-1][2]:4.0f} us"
                  f"  load {loads[-1]:.1f}", flush=True)
    finally:
        for q in queues:
            q.put(None)
        profile_text = ""
        if profile:
            item = results.get(timeout=60)
            profile_text = str(item[3])
        for p in procs:
            p.join(timeout=60)
    return {"store": f"{label}/{mode[0]}", "kind": spec.kind, "path": path, "mode": mode,
            "resumers": resumers, "per": per, "rounds": rounds,
            "rate": statistics.median(rates), "rates": rates, "p50": statistics.median(p50s),
            "p95": statistics.median(p95s), "profile": profile_text,
            "client_us": statistics.median(c for c, _, _ in cpus),
            "server_us": statistics.median(sv for _, sv, _ in cpus),
            "aux_us": statistics.median(a for _, _, a in cpus),
            "load": statistics.median(loads)}


def ceiling(row: dict[str, Any], cores: int) -> tuple[float, float]:
    """CPU ms per resume (client + server + aux) and the CPU-bound ceiling it allows."""
    ms = (row["client_us"] + row["server_us"] + row["aux_us"]) / 1000
    return ms, (cores * 1000 / ms if ms > 0 else float("inf"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--resumers", default="1,2,4,8",
                        help="how many concurrent resumers, a comma-separated sweep "
                        "(default 1,2,4,8)")
    parser.add_argument("--per-resumer", type=int, default=250)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--stores", default="postgres,sqlite")
    parser.add_argument("--paths", default="one-write",
                        help="PostgreSQL resume paths, comma-separated: "
                        f"{', '.join(PATHS)} (default one-write)")
    parser.add_argument("--mode", default="processes",
                        help="processes (default), threads, or both: processes,threads")
    parser.add_argument("--dir", help="where the SQLite file goes, on a real disk (default: a "
                        "temporary folder in the repository)")
    parser.add_argument("--profile", action="store_true",
                        help="cProfile resumer 0 during the timed part and print the top")
    parser.add_argument("--json", action="store_true", help="also print the figures as JSON, "
                        "on the last line")
    args = parser.parse_args(argv)
    sweep = int_list(parser, "--resumers", args.resumers, 1)
    paths = args.paths.split(",")
    if unknown := set(paths) - set(PATHS):
        parser.error(f"unknown --paths {sorted(unknown)}; known: {', '.join(PATHS)}")
    dsn = os.environ.get("PAUSEPOINT_PG_DSN", "")
    rows: list[dict[str, Any]] = []
    counts: list[dict[str, Any]] = []
    info: dict[str, Any] = {}
    cores = os.cpu_count() or 1
    load0 = os.getloadavg()
    with disk_scratch(args.dir) as (tmp, fs):
        key = os.path.join(tmp, "key.ed25519")
        save_key(key)
        for kind in args.stores.split(","):
            if kind == "postgres" and not dsn:
                print("postgres: skipped, PAUSEPOINT_PG_DSN is not set", file=sys.stderr)
                continue
            if kind == "postgres":
                spec = fresh_postgres(dsn, "pp_bench")
                try:
                    info = server_info(spec)
                    counts = [protocol_counts(spec, key, path) for path in paths]
                finally:
                    drop(spec)
            for path in (paths if kind == "postgres" else ["one-write"]):
                for mode in args.mode.split(","):
                    for resumers in sweep:
                        # a fresh store for each point, so no point resumes on a bigger ledger
                        spec = (fresh_postgres(dsn, "pp_bench") if kind == "postgres"
                                else fresh_sqlite(tmp, f"bench-{mode}-{resumers}.db"))
                        spec.open().close()  # create the schema before the resumers race to
                        try:
                            rows.append(bench(spec, key, resumers, args.per_resumer,
                                              args.rounds, args.profile, mode, path))
                        finally:
                            drop(spec)
    load1 = os.getloadavg()
    print()
    if info:
        where = ("on this machine (its backends are processes here)" if info["same_machine"]
                 else "NOT on this machine: server CPU is not measured")
        print(f"server: {info['version']}, {where}; psycopg {info['psycopg']}, "
              f"libpq {info['libpq']}")
        for c in counts:
            print(f"postgres/{c['path']}: per resume {c['round_trips']:.1f} round trip(s), "
                  f"{c['statements']:.1f} statement(s), {c['parses']:.1f} parse(s) "
                  "(libpq protocol trace)")
    print(f"resumes/s by concurrent resumers (/p processes, /t threads), {args.per_resumer} "
          f"resumes each per round, {args.rounds} rounds (median); SQLite on {fs.describe()}")
    print(f"{'store':<28} {'resumers':>8} {'resumes/s':>10} {'p50 ms':>8} {'p95 ms':>8} "
          f"{'client us':>9} {'server us':>9} {'aux us':>7} {'cpu ms':>7} {'cpu-bound/s':>11}"
          "   rounds")
    for row in rows:
        ms, top = ceiling(row, cores)
        print(f"{row['store']:<28} {row['resumers']:>8} {row['rate']:>10.0f} {row['p50']:>8.2f} "
              f"{row['p95']:>8.2f} {row['client_us']:>9.0f} {row['server_us']:>9.0f} "
              f"{row['aux_us']:>7.0f} {ms:>7.3f} {top:>11.0f}   "
              + " ".join(f"{x:.0f}" for x in row["rates"]))
    print("client us / server us: CPU time per resume in the resumer processes and in their "
          "PostgreSQL backends; aux us: the server's other processes (WAL writer, "
          "checkpointer, ...), an upper bound on a shared server; cpu ms: their sum.")
    for row in rows:
        if row["kind"] != "postgres" or row["resumers"] != max(sweep):
            continue
        ms, top = ceiling(row, cores)
        print(f"{row['store']}, {row['resumers']} resumers: {row['client_us'] / 1000:.3f} ms "
              f"client + {row['server_us'] / 1000:.3f} ms server + {row['aux_us'] / 1000:.3f} "
              f"ms aux = {ms:.3f} ms CPU per resume; {cores} cores x 1000 ms / {ms:.3f} ms = "
              f"{top:.0f} resumes/s CPU-bound ceiling on this machine (client and server share "
              f"it); measured {row['rate']:.0f}/s; {TARGET}/s needs <= {cores * 1000 / TARGET:.3f}"
              " ms per resume")
    print(f"load average before {load0[0]:.2f} {load0[1]:.2f} {load0[2]:.2f}, after "
          f"{load1[0]:.2f} {load1[1]:.2f} {load1[2]:.2f} on {cores} core(s): other work on the "
          "machine takes CPU from the resumers and the server alike")
    for row in rows:
        if row["profile"]:
            print(f"\n--- profile of one {row['store']} resumer (timed part) ---")
            print(row["profile"])
    if args.json:
        print(json.dumps({"server": info, "counts": counts, "cores": cores,
                          "rows": [{k: v for k, v in r.items() if k != "profile"}
                                   for r in rows]}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
