"""The run table (:mod:`pausepoint.core.runs`): total, pure, every refusal typed; one
vocabulary of run status shared by the engine, the stores and the protocol."""

from __future__ import annotations

import itertools

import pytest

from pausepoint.core import runs
from pausepoint.core.clauses import CLAUSE_BY_ID, ErrorCode
from pausepoint.core.runs import RunState, RunStatus
from pausepoint_conformance.protocol import wire

R = RunStatus
NOW, LEASE = 100, 50


def events(epoch: int) -> list[runs.Event]:
    return [runs.Start("a", NOW, LEASE), runs.Start("a", NOW, LEASE, parent=R.CANCELLING),
            runs.Start("a", NOW, LEASE, parent_found=False),
            runs.Recover("b", NOW, LEASE), runs.Continue("b", NOW, LEASE),
            runs.Continue("b", NOW, LEASE, current_step=False),
            runs.Progress(epoch, NOW, LEASE), runs.Progress(epoch + 1, NOW, LEASE),
            runs.Suspend(epoch), runs.Finish(epoch), runs.Fail(epoch), runs.Release(epoch),
            runs.Cancel("c"), runs.Cancelled(epoch), runs.Cancelled(epoch - 1)]


STATES = [None, *(RunState(s, 3, owner, until) for s in RunStatus
                  for owner, until in (("", 0), ("a", NOW + 1), ("x", NOW + 1), ("x", NOW)))]


@pytest.mark.parametrize("state", STATES)
def test_the_run_table_is_total_and_every_refusal_is_typed(state: RunState | None) -> None:
    """`run.lifecycle.table`: every (state, event) has an outcome; a refusal carries a clause
    of the catalogue and a code of the closed set; an acceptance never lowers the epoch, and
    takes ownership only with a higher one."""
    for event in events(3):
        out = runs.step(state, event)
        if isinstance(out, runs.Refusal):
            assert out.clause in CLAUSE_BY_ID and out.code in set(ErrorCode), out
            continue
        assert out.clause in CLAUSE_BY_ID
        before = 0 if state is None else state.epoch
        assert out.state.epoch >= before
        if out.state.owner and (state is None or out.state.owner != state.owner):
            assert out.state.epoch > before, (state, event, out)


def test_owner_writes_are_fenced_by_the_epoch() -> None:
    """`run.ownership.fencing`: a write under a stale epoch is refused; a cancel or a
    take-over raises the epoch, so the driver before it is fenced."""
    started = runs.step(None, runs.Start("a", NOW, LEASE))
    assert isinstance(started, runs.Accepted)
    mine = started.state
    cancelling = runs.step(mine, runs.Cancel("c"))
    assert isinstance(cancelling, runs.Accepted) and cancelling.state.epoch == mine.epoch + 1
    for write in (runs.Progress(mine.epoch, NOW, LEASE), runs.Finish(mine.epoch)):
        out = runs.step(attrs_running(cancelling.state), write)
        assert isinstance(out, runs.Refusal) and out.clause == "run.ownership.fencing"


def attrs_running(s: RunState) -> RunState:
    return RunState(R.RUNNING, s.epoch, s.owner, s.lease_until)


def test_a_live_lease_keeps_other_restarters_out() -> None:
    """`run.ownership.lease`: a restart takes a running run only if its lease was released,
    ran out, or is the restarter's own."""
    held = RunState(R.RUNNING, 2, "a", NOW + 1)
    assert isinstance(runs.step(held, runs.Recover("b", NOW, LEASE)), runs.Refusal)
    assert isinstance(runs.step(held, runs.Recover("a", NOW, LEASE)), runs.Accepted)
    assert isinstance(runs.step(held, runs.Recover("b", NOW + 1, LEASE)), runs.Accepted)
    assert isinstance(runs.step(RunState(R.RUNNING, 2), runs.Recover("b", NOW, LEASE)),
                      runs.Accepted)


def test_a_restart_finishes_a_cancel_only_once_its_canceller_stopped() -> None:
    """`run.ownership.lease`: a run left cancelling is taken over by a restart (a new epoch:
    the canceller's last write is fenced) only once the canceller's lease ran out, or when the
    canceller is the restarter itself (from before its crash); it stays cancelling, owned by
    the restarter under a lease, until the restart's own ``Cancelled``."""
    cancelling = runs.step(RunState(R.PAUSED, 2), runs.Cancel("c", NOW, LEASE))
    assert isinstance(cancelling, runs.Accepted)
    held = cancelling.state
    assert held == RunState(R.CANCELLING, 3, "c", NOW + LEASE)
    refused = runs.step(held, runs.Recover("b", NOW + LEASE - 1, LEASE))
    assert isinstance(refused, runs.Refusal)
    assert (refused.clause, refused.code) == ("run.ownership.lease",
                                              ErrorCode.INVALID_TRANSITION)
    for taker, now in (("b", NOW + LEASE), ("c", NOW)):
        out = runs.step(held, runs.Recover(taker, now, LEASE))
        assert isinstance(out, runs.Accepted) and out.clause == "run.ownership.lease"
        assert out.state == RunState(R.CANCELLING, 4, taker, now + LEASE)
        late = runs.step(out.state, runs.Cancelled(held.epoch))  # the old canceller: fenced
        assert isinstance(late, runs.Refusal) and late.clause == "run.ownership.fencing"
        done = runs.step(out.state, runs.Cancelled(out.state.epoch))
        assert isinstance(done, runs.Accepted) and done.state == RunState(R.CANCELLED, 4)
    for ended in (R.CANCELLED, R.DONE, R.PAUSED):  # nothing else for a restart to take
        assert isinstance(runs.step(RunState(ended, 4), runs.Recover("b", NOW, LEASE)),
                          runs.Refusal)


@pytest.mark.parametrize("ended", [R.DONE, R.ERROR])
def test_a_finished_run_refuses_a_cancel(ended: RunStatus) -> None:
    """`run.cancel.finished`."""
    out = runs.step(RunState(ended, 4), runs.Cancel("c"))
    assert isinstance(out, runs.Refusal)
    assert (out.clause, out.code) == ("run.cancel.finished", ErrorCode.INVALID_TRANSITION)


def test_one_vocabulary_of_run_status() -> None:
    """`run.lifecycle.table`: the protocol's run statuses are the table's, plus the
    ``stopped`` view of a run whose process died (cancelling is reported only by the status
    query)."""
    protocol = {s.value for s in wire.RunStatus}
    assert protocol - {"stopped"} <= {s.value for s in RunStatus}
    assert {s.value for s in RunStatus} - protocol <= {"cancelling"}


def test_every_edge_is_between_run_statuses() -> None:
    edges = runs.transitions()
    assert {t for _s, _e, t in edges} == set(RunStatus)
    assert {s for s, _e, _t in edges} == {None, *RunStatus} - {R.DONE, R.ERROR}
    assert len(list(itertools.chain(edges))) == len(set(edges))
