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

import pytest

from pausepoint_conformance.faults.interleave import EXPECTED, play, problems
from pausepoint_conformance.faults.testbed import StoreSpec
from pausepoint_conformance.protocol.wire import Interleaving


@pytest.mark.parametrize("scenario", list(Interleaving))
def test_the_run_level_holds_in_every_interleaving(scenario: Interleaving,
                                                   any_store_spec: StoreSpec) -> None:
    data = play(scenario, any_store_spec)
    assert problems(scenario, data) == [], data


def test_every_interleaving_has_expectations() -> None:
    assert set(EXPECTED) == set(Interleaving)
    assert all(EXPECTED.values())
