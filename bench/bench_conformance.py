"""Benchmark: the conformance suite plus 1,000 scenario vectors against the reference, in
process and over the stdio protocol.  It reports figures (medians of repeated runs); it asserts
nothing.

    python bench/bench_conformance.py                     # every configuration, 3 runs each
    python bench/bench_conformance.py --repeat 5 --vectors 1000 --only stdio

Configurations: the reference on SQLite with its files on a real disk (the default of
``pausepoint conform``; a RAM disk is refused there, and the filesystem is printed), on SQLite
with its files in a RAM-backed directory (``/dev/shm``: the same commits without waiting on
fsync), and on the in-memory store; each in process and over
stdio (``python -m pausepoint_conformance.adapters.stdio_reference``).  Targets on a 2-core machine:
in process at most 10 s, over stdio at most 30 s.
"""

from __future__ import annotations

import argparse
import functools
import os
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

from benchkit import disk_scratch
from pausepoint_conformance.adapters.reference import ReferenceAdapter
from pausepoint_conformance.protocol.port import Adapter
from pausepoint_conformance.protocol.stdio import StdioAdapter
from pausepoint_conformance.suite import checks as _checks  # noqa: F401 - registers the checks
from pausepoint_conformance.suite.framework import CHECKS
from pausepoint_conformance.suite.runner import Plan, run_suite
from pausepoint_conformance.vectors.generator import generate
from pausepoint_conformance.vectors.replay import LoadedCase


def vectors(n: int, seed: int = 0) -> list[LoadedCase]:
    files = generate(depth=2, random=max(0, n - 800), seed=seed)
    cases = [LoadedCase(c, vf.ttl_ms, name) for name, vf in files.items() for c in vf.cases]
    if len(cases) < n:
        raise SystemExit(f"only {len(cases)} vectors generated, wanted {n}")
    return cases[:n]


def shm() -> str | None:
    return "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None


def configurations(only: str | None, disk: str) -> list[tuple[str, Callable[[], Adapter]]]:
    """Every configuration whose label contains ``only``; SQLite's files in ``disk`` (a real
    disk) or in ``/dev/shm``."""
    ram = shm()
    out: list[tuple[str, Callable[[], Adapter]]] = []
    stores: list[tuple[str, str, str | None]] = [("sqlite (disk)", "sqlite", disk)]
    if ram:
        stores.append(("sqlite (tmpfs)", "sqlite", ram))
    stores.append(("memory", "memory", None))
    for label, store, where in stores:
        out.append((f"in-process  {label}",
                    functools.partial(ReferenceAdapter, store, scratch=where)))
        env = dict(os.environ)
        if where:
            env["TMPDIR"] = where
        out.append((f"stdio       {label}", functools.partial(
            StdioAdapter, [sys.executable, "-m", "pausepoint_conformance.adapters.stdio_reference",
                           "--store", store], timeout=60, env=env)))
    if only:
        out = [c for c in out if only in c[0]]
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--vectors", type=int, default=1000)
    parser.add_argument("--only", help="only configurations whose label contains this")
    parser.add_argument("--dir", help="where 'sqlite (disk)' keeps its files, on a real disk "
                        "(default: a temporary folder in the repository)")
    args = parser.parse_args()
    with disk_scratch(args.dir) as (disk, fs):
        print(f"sqlite (disk): {disk} on {fs.describe()}")
        run(args, disk)
    return 0


def run(args: argparse.Namespace, disk: str) -> None:
    t0 = time.perf_counter()
    cases = vectors(args.vectors)
    print(f"generated {len(cases)} vectors in {time.perf_counter() - t0:.2f} s; "
          f"{len(CHECKS)} checks; {os.cpu_count()} CPUs; {args.repeat} runs each")
    plan = Plan(vectors=tuple(cases))
    print(f"{'configuration':<28} {'median s':>9} {'min s':>7} {'max s':>7}  "
          f"{'passed':>6} {'failed':>6} {'other':>5}")
    for label, make in configurations(args.only, disk):
        times: list[float] = []
        last: Any = None
        for _ in range(args.repeat):
            adapter = make()
            t = time.perf_counter()
            try:
                last = run_suite(adapter, adapter_name=label, plan=plan)
            finally:
                adapter.close()
            times.append(time.perf_counter() - t)
        counts = last.counts()
        other = counts["skipped"] + counts["errored"] + counts["not_claimed"]
        print(f"{label:<28} {statistics.median(times):9.2f} {min(times):7.2f} "
              f"{max(times):7.2f}  {counts['passed']:6d} {counts['failed']:6d} {other:5d}",
              flush=True)


if __name__ == "__main__":
    sys.exit(main())
