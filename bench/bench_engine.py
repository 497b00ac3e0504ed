"""Benchmark: the pause -> resume cycle through the embedding API (:class:`pausepoint.Engine`)
on SQLite, next to the scripted harness's cycle on the same kind of store, in one run.

Not a test: it prints medians and asserts nothing about time.

* **engine**: an agent function that asks one question and returns is started (it runs, takes
  its pause, mints and publishes the token, records its turn), then the token is answered and
  the function runs again from the top to ``done`` (replay);
* **harness**: the scripted run ``[interrupt approve, end]`` started and answered
  (:func:`bench_pause_resume.harness_cycles`).

Usage::

    python bench/bench_engine.py               # 200 cycles each
    python bench/bench_engine.py --cycles 500
"""

from __future__ import annotations

import argparse
import tempfile
import time
import uuid
from typing import Any

import pausepoint
from bench_pause_resume import RESPONSE, _stats, harness_cycles
from pausepoint.core.tokens import KeyRing
from pausepoint.engine.clock import ManualClock
from pausepoint.stores import SqliteStore


def approve_once(ctx: pausepoint.RunContext, amount: Any) -> Any:
    return ctx.ask("approve", {"amount": amount})


def engine_cycles(path: str, n: int) -> list[float]:
    engine = pausepoint.Engine.open(f"sqlite:{path}", agents={"approve": approve_once},
                                    interactions=[pausepoint.Interaction("approve")],
                                    clock=ManualClock(0), signer=KeyRing.generate())
    out = []
    try:
        for i in range(n + 10):
            run = f"e-{i}-{uuid.uuid4().hex[:6]}"
            t0 = time.perf_counter()
            started = engine.start("approve", 12, run_id=run)
            done = engine.resume(started.pauses[0].token, RESPONSE)
            dt = time.perf_counter() - t0
            assert done.status == "done", done
            if i >= 10:  # the first few warm connections and prepared statements up
                out.append(dt)
    finally:
        engine.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cycles", type=int, default=200)
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as d:
        rows.append(("engine (embedding API)", engine_cycles(f"{d}/engine.db", args.cycles)))
        rows.append(("harness (scripted)", harness_cycles(
            lambda: SqliteStore(f"{d}/harness.db"), args.cycles)))
    print(f"pause -> resume on SQLite, {args.cycles} cycles each")
    print(f"{'cycle':<24} {'median ms':>10} {'p95 ms':>8} {'cycles/s':>9}")
    for name, samples in rows:
        median, p95, rate = _stats(samples)
        print(f"{name:<24} {median:>10.2f} {p95:>8.2f} {rate:>9.1f}")


if __name__ == "__main__":
    main()
