"""Benchmark: one pause -> resume cycle, in memory, on SQLite and on PostgreSQL, side by side.

Not a test: it prints medians and asserts nothing about time.

Two cycles are timed, one at a time in one process:

* **harness**: a scripted run ``[interrupt approve, end]`` is started (it runs, pauses, mints and
  publishes its token, records its turn), then the published token is answered and the run
  continues to ``done`` -- what an agent harness user sees;
* **service**: ``PauseService.pause`` + ``record_turn`` + ``resume`` -- the pause point alone.

Usage::

    eval "$(bash .ci/postgres.sh)"      # to include PostgreSQL
    python bench/bench_pause_resume.py  # 300 cycles per store (3000 in memory)
    python bench/bench_pause_resume.py --cycles 500
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable

from pausepoint.core.tokens import KeyRing
from pausepoint.engine.clock import ManualClock
from pausepoint.engine.compose import compose
from pausepoint.engine.harness import DEFAULT_INTERACTIONS, Harness, MemoryWorld
from pausepoint.engine.run import PauseBinding
from pausepoint.engine.service import ResumeRequest
from pausepoint.stores import MemoryStore, StoreBundle
from pausepoint_conformance.faults.testbed import StoreSpec, drop, fresh_postgres, fresh_sqlite

SCRIPT = [{"op": "interrupt", "name": "approve", "payload": {"amount": 12}}, {"op": "end"}]
RESPONSE = {"approved": True}


def _stats(samples: list[float]) -> tuple[float, float, float]:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return statistics.median(ordered) * 1000, p95 * 1000, len(ordered) / sum(ordered)


def harness_cycles(open_bundle: Callable[[], StoreBundle], n: int) -> list[float]:
    h = Harness(open_bundle=open_bundle, signer=KeyRing.generate(), clock=ManualClock(0),
                world=MemoryWorld(), ttl_ms=3_600_000, interactions=DEFAULT_INTERACTIONS,
                durable_restart=True)
    out = []
    try:
        for i in range(n + 10):
            run = f"h-{i}-{uuid.uuid4().hex[:6]}"
            t0 = time.perf_counter()
            started = h.start(SCRIPT, run_id=run, session_id="s", scope="t")
            done = h.resume(started.pauses[0].token, RESPONSE, session_id="s", scope="t")
            dt = time.perf_counter() - t0
            assert done.status == "done", done
            if i >= 10:  # the first few warm connections and prepared statements up
                out.append(dt)
    finally:
        h.deployment.store.close()
    return out


def service_cycles(bundle: StoreBundle, n: int) -> list[float]:
    svc = compose(store=bundle, signer=KeyRing.generate(), interactions=DEFAULT_INTERACTIONS,
                  clock=ManualClock(0), ttl_ms=3_600_000).service
    req = ResumeRequest(session_id="s", scope="t")
    out = []
    for i in range(n + 10):
        run = f"s-{i}-{uuid.uuid4().hex[:6]}"
        binding = PauseBinding(run_id=run, root_run_id=run, session_id="s", thread_id=run,
                               scope="t")
        t0 = time.perf_counter()
        svc.pause(binding=binding, name="approve", payload={"amount": 12}, interrupt_id=run,
                  checkpoint_id=f"{run}@0")
        rec = svc.record_turn(run, "{}")
        svc.resume(rec.token, RESPONSE, req)
        dt = time.perf_counter() - t0
        if i >= 10:
            out.append(dt)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cycles", type=int, default=300, help="per durable store")
    parser.add_argument("--memory-cycles", type=int, default=3000)
    args = parser.parse_args(argv)
    dsn = os.environ.get("PAUSEPOINT_PG_DSN", "")
    rows: list[tuple[str, str, tuple[float, float, float], int]] = []
    with tempfile.TemporaryDirectory(prefix="pp-bench-") as tmp:
        specs: list[StoreSpec] = [StoreSpec("memory"), fresh_sqlite(tmp, "cycle.db")]
        if dsn:
            specs.append(fresh_postgres(dsn, "pp_bench"))
        else:
            print("postgres: skipped, PAUSEPOINT_PG_DSN is not set", file=sys.stderr)
        for spec in specs:
            n = args.memory_cycles if spec.kind == "memory" else args.cycles
            memory = MemoryStore() if spec.kind == "memory" else None

            def opener(spec: StoreSpec = spec, memory: StoreBundle | None = memory
                       ) -> StoreBundle:
                return memory if memory is not None else spec.open()

            try:
                rows.append((spec.kind, "harness", _stats(harness_cycles(opener, n)), n))
                bundle = opener()
                try:
                    rows.append((spec.kind, "service", _stats(service_cycles(bundle, n)), n))
                finally:
                    bundle.close()
            finally:
                drop(spec)
    print("pause -> resume cycle, one at a time (median of N cycles)")
    print(f"{'store':<10} {'cycle':<8} {'median ms':>10} {'p95 ms':>8} {'cycles/s':>9} {'N':>6}")
    for kind, what, (p50, p95, rate), n in rows:
        print(f"{kind:<10} {what:<8} {p50:>10.3f} {p95:>8.3f} {rate:>9.0f} {n:>6}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
