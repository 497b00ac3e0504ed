"""Benchmark: the pause -> resume cycle through the embedding API (:class:`pausepoint.Engine`)
on SQLite, next to the scripted harness's cycle on the same kind of store, in one run.

Not a test: it prints medians and asserts nothing about time.  The two cycles are
``bench_cycle.py``'s **embedding** (an agent function that asks one question and returns,
started, answered, replayed to ``done``) and **harness** (the scripted run
``[interrupt approve, end]`` started and answered), interleaved (shuffled each round) on a
real disk.

Usage::

    python bench/bench_engine.py               # 200 rounds each
    python bench/bench_engine.py --rounds 500
"""

from __future__ import annotations

import sys

from bench_cycle import main


def run(argv: list[str] | None = None) -> int:
    return main(["--only", "embedding", "--only", "harness",
                 *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":
    sys.exit(run())
