"""Benchmark: the time budgets the tests used to assert, reported as figures (asserting
nothing; tests assert verdicts and equalities only).

    python bench/bench_budgets.py

* ``lockstep MCPausepoint`` -- the Python model's exhaustive exploration of the main model
  (``tests/test_model_lockstep.py`` checks it reaches exactly TLC's states).  Target on an idle
  2-core machine: at most 60 s (on a loaded one it took 100-131 s).
* ``hang errored`` -- how long the suite takes to report a check errored when the
  implementation hangs, with a 1 s timeout (``tests/test_conformance.py``).  Target: under 15 s.
"""

from __future__ import annotations

import sys
import time

from pausepoint_conformance.modelcheck import lockstep as mc
from pausepoint_conformance.protocol.stdio import StdioAdapter
from pausepoint_conformance.suite.framework import CHECKS
from pausepoint_conformance.suite.runner import Plan, run_suite


def lockstep_seconds() -> float:
    spec = mc.load_manifest()["models"]["MCPausepoint"]
    return float(mc.lockstep("MCPausepoint", spec).exploration.seconds)


def hang_seconds() -> float:
    adapter = StdioAdapter([sys.executable, "-m", "pausepoint_conformance.adapters.fake",
                            "--hang-on", "resume:1"], timeout=1.0)
    t0 = time.perf_counter()
    try:
        run_suite(adapter, adapter_name="bench", plan=Plan(checks=(CHECKS[1],)))
    finally:
        adapter.close()
    return time.perf_counter() - t0


def main() -> None:
    print(f"hang errored           {hang_seconds():7.1f} s   (target < 15 s)")
    print(f"lockstep MCPausepoint  {lockstep_seconds():7.1f} s   (target <= 60 s)")


if __name__ == "__main__":
    main()
