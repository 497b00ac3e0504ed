"""The run level with several servers on one store: the six failures of issue 8 (nine
interleavings), each forced deterministically (hooks on store calls, effects held in flight --
no sleeps) by :mod:`pausepoint_conformance.faults.interleave`, on SQLite, PostgreSQL and in
memory.  Each broke the harness before the run table and owned runs
(``run.continuation.belongs-to-step``, ``run.ownership.lease``, ``run.ownership.fencing``,
``run.restart.concurrent``, ``run.cancel.in-flight``, ``run.cancel.finished``,
``run.child.cancelling-parent``, ``run.store-failure.recoverable``); the broken variants in
``tests/broken/`` put each guard back the old way and the ``runlevel`` checks catch them.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from pausepoint_conformance.faults.interleave import EXPECTED, play, problems
from pausepoint_conformance.faults.testbed import StoreSpec, drop, fresh_sqlite
from pausepoint_conformance.protocol.wire import Interleaving
from pg import pg_spec


@pytest.fixture(params=["sqlite", "postgres", "memory"])
def spec(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[StoreSpec]:
    s = {"sqlite": lambda: fresh_sqlite(tmp_path), "postgres": lambda: pg_spec("pp_run"),
         "memory": lambda: StoreSpec("memory")}[request.param]()
    yield s
    drop(s)


@pytest.mark.parametrize("scenario", list(Interleaving))
def test_the_run_level_holds_in_every_interleaving(scenario: Interleaving,
                                                   spec: StoreSpec) -> None:
    data = play(scenario, spec)
    assert problems(scenario, data) == [], data


def test_every_interleaving_has_expectations() -> None:
    assert set(EXPECTED) == set(Interleaving)
    assert all(EXPECTED.values())
