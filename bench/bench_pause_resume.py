"""Benchmark: one pause -> resume cycle in memory, on SQLite and on PostgreSQL, side by side.

Not a test: it prints medians and asserts nothing about time.  For the ratios to the floor and
to LangGraph, see ``bench/bench_cycle.py``; this one compares the stores.

The two cycles of ``bench_cycle.py`` -- **harness** (start a scripted run
``[interrupt approve, end]``, answer its published token, it runs to ``done``) and **service**
(``PauseService.pause`` + ``record_turn`` + ``resume``) -- on every store, interleaved
in one process (shuffled each round).  The SQLite file is on a real disk (a RAM disk is
refused; the filesystem is printed).

Usage::

    eval "$(bash .ci/postgres.sh)"      # to include PostgreSQL
    python bench/bench_pause_resume.py  # 300 rounds
    python bench/bench_pause_resume.py --rounds 500 --dir /var/tmp
"""

from __future__ import annotations

import argparse
import os
import sys

from bench_cycle import HarnessCycle, ServiceCycle, Variant, run_rounds
from benchkit import Summary, disk_scratch
from pausepoint.core.tokens import KeyRing
from pausepoint.engine.clock import ManualClock
from pausepoint.engine.harness import DEFAULT_INTERACTIONS, Harness, MemoryWorld
from pausepoint_conformance.faults.testbed import StoreSpec, drop, fresh_postgres, fresh_sqlite


def harness_on(spec: StoreSpec) -> Harness:
    """A harness on ``spec``'s data (the same in-memory store across a restart)."""
    memory = spec.open() if spec.kind == "memory" else None
    return Harness(open_bundle=(lambda: memory) if memory is not None else spec.open,
                   signer=KeyRing.generate(), clock=ManualClock(0), world=MemoryWorld(),
                   ttl_ms=3_600_000, interactions=DEFAULT_INTERACTIONS,
                   durable_restart=memory is None)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=300)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--dir", help="where the SQLite file goes, on a real disk")
    args = parser.parse_args(argv)
    dsn = os.environ.get("PAUSEPOINT_PG_DSN", "")
    with disk_scratch(args.dir) as (tmp, fs):
        print(f"SQLite on {fs.describe()}")
        specs = [StoreSpec("memory"), fresh_sqlite(tmp, "cycle.db")]
        if dsn:
            specs.append(fresh_postgres(dsn, "pp_bench"))
        else:
            print("postgres: skipped, PAUSEPOINT_PG_DSN is not set", file=sys.stderr)
        variants: list[Variant] = []
        try:
            for spec in specs:
                variants.append(HarnessCycle(harness_on(spec), f"{spec.kind} harness"))
                variants.append(ServiceCycle(spec.open(), f"{spec.kind} service"))
            samples = run_rounds(variants, args.rounds, args.warmup)
        finally:
            for variant in variants:
                variant.close()
            for spec in specs:
                drop(spec)
    print(f"pause -> resume cycle, one at a time, interleaved ({args.rounds} rounds)")
    print(f"{'store':<10} {'cycle':<8} {'median ms':>10} {'p95 ms':>8} {'cycles/s':>9} {'N':>6}")
    for label in [f"{spec.kind} {what}" for spec in specs for what in ("harness", "service")]:
        kind, what = label.split(" ")
        values = samples[label]
        s = Summary.of(values)
        print(f"{kind:<10} {what:<8} {s.median * 1e3:>10.3f} {s.p95 * 1e3:>8.3f} "
              f"{len(values) / sum(values):>9.0f} {s.n:>6}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
