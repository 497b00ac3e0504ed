"""The run level with several servers on one store: the six failures of issue 8 and the orphan
recovery the run-level race found (eleven interleavings), each forced deterministically (hooks
on store calls, effects held in flight -- no sleeps) by
:mod:`pausepoint_conformance.faults.interleave`, on SQLite, PostgreSQL and in memory.

Each interleaving is played twice: on the reference, where the contract's expectations hold,
and on the deliberately broken variant in ``tests/broken/`` that removes the guard it needs
(``run.continuation.belongs-to-step``, ``run.ownership.lease``, ``run.ownership.fencing``,
``run.restart.concurrent``, ``run.cancel.in-flight``, ``run.cancel.finished``,
``run.child.cancelling-parent``, ``run.store-failure.recoverable``), where they must not: the
test fails with the guard removed and passes with it, on every store.
"""

from __future__ import annotations

import pytest

from _registry import HERE, load
from pausepoint.engine.harness import Harness
from pausepoint.stores.base import StoreBundle
from pausepoint_conformance.faults.interleave import EXPECTED, play, problems
from pausepoint_conformance.faults.testbed import StoreSpec
from pausepoint_conformance.protocol.wire import Interleaving

GUARD_REMOVED: dict[Interleaving, tuple[str, ...]] = {
    Interleaving.STALE_CONTINUATION: ("stale_continuation",),
    Interleaving.RESTART_BESIDE_LIVE: ("lease_ignored",),
    Interleaving.LEASE_TAKEN_OVER: ("unfenced",),
    # two restarters are kept apart by the lease and, should the lease fail, by the fencing:
    # only with both removed does the effect run twice
    Interleaving.CONCURRENT_RESTARTS: ("lease_ignored", "unfenced"),
    Interleaving.CANCEL_IN_FLIGHT: ("blind_run_writes",),
    Interleaving.CANCEL_FINISHED: ("blind_run_writes",),
    Interleaving.CHILD_UNDER_CANCEL: ("child_escapes",),
    Interleaving.KILL_OPENING_RECOVERY: ("orphan_recovery",),
    Interleaving.STORE_BLINK: ("store_failure_is_error",),
    Interleaving.STALE_RECOVERY: ("unfenced_recovery",),
    Interleaving.CANCEL_OPENING_RECOVERY: ("unfenced_recovery",),
}
"""The broken implementations (``tests/broken/<name>.py``) that remove each one's guard,
combined: the harness class of the one that swaps it, the store wrappers of all."""


@pytest.mark.parametrize("scenario", list(Interleaving))
def test_the_run_level_holds_in_every_interleaving(scenario: Interleaving,
                                                   any_store_spec: StoreSpec) -> None:
    data = play(scenario, any_store_spec)
    assert problems(scenario, data) == [], data


@pytest.mark.parametrize("scenario", list(Interleaving))
def test_each_interleaving_fails_with_its_guard_removed(scenario: Interleaving,
                                                        any_store_spec: StoreSpec) -> None:
    broken = [load(HERE / f"{name}.py").make() for name in GUARD_REMOVED[scenario]]
    harness_class = next((b.harness_class for b in broken if b.harness_class is not Harness),
                         Harness)

    def wrap(bundle: StoreBundle) -> StoreBundle:
        for b in broken:
            bundle = b.wrap_bundle(bundle)
        return bundle
    data = play(scenario, any_store_spec, harness_class=harness_class, wrap=wrap)
    assert problems(scenario, data), (f"{GUARD_REMOVED[scenario]} went unnoticed", data)


def test_every_interleaving_has_expectations_and_a_broken_variant() -> None:
    assert set(EXPECTED) == set(Interleaving) == set(GUARD_REMOVED)
    assert all(EXPECTED.values())
