"""The checks of the run level (``run.*``): one run, several servers and restarters.

``run.lifecycle.table`` and the plain refusals are checked with ordinary operations; the
interleavings of several servers on one store are played by the optional ``interleave``
operation (:class:`~pausepoint_conformance.protocol.wire.Interleaving` says what each is), and
what each must leave is :data:`pausepoint_conformance.faults.interleave.EXPECTED`.
"""

from __future__ import annotations

from pausepoint.core.clauses import ErrorCode as E
from pausepoint_conformance.faults.interleave import EXPECTED
from pausepoint_conformance.protocol.wire import (
    CancelArgs,
    InterleaveArgs,
    InterleaveData,
    Interleaving,
)
from pausepoint_conformance.suite.framework import Ctx, ask, check, effect, end

# == the run table ==========================================================================


@check("run/table",
       "a run started twice is refused with invalid_transition and runs nothing again",
       ["run.lifecycle.table"])
def _table(ctx: Ctx) -> None:
    ctx.start([effect("a"), end()], status="done")
    ctx.expect_refused(ctx.start_raw([effect("b"), end()]), [E.INVALID_TRANSITION],
                       "run.lifecycle.table", "starting run r1 again")
    ctx.expect_count("r1", "a", 1, "run.lifecycle.table")
    ctx.expect_count("r1", "b", 0, "run.lifecycle.table")


@check("run/cancel-done",
       "cancelling a run that ended done is refused with invalid_transition",
       ["run.cancel.finished"])
def _cancel_done(ctx: Ctx) -> None:
    ctx.start([effect("a"), end()], status="done")
    ctx.expect_refused(ctx.adapter.cancel(CancelArgs(run_id="r1")), [E.INVALID_TRANSITION],
                       "run.cancel.finished", "cancelling the finished run r1")


@check("run/child-of-cancelled",
       "a child run started under a cancelled parent is refused with pause_cancelled and "
       "runs nothing",
       ["run.child.cancelling-parent"])
def _child_of_cancelled(ctx: Ctx) -> None:
    ctx.start([ask("approve"), end()], "parent")
    ctx.cancel("parent")
    ctx.expect_refused(ctx.start_raw([effect("c"), end()], "child", parent="parent"),
                       [E.PAUSE_CANCELLED], "run.child.cancelling-parent",
                       "starting a child under a cancelled parent")
    ctx.expect_count("child", "c", 0, "run.child.cancelling-parent")


# == interleavings of several servers (optional operation) ====================================


def _interleave(ctx: Ctx, scenario: Interleaving) -> None:
    data: InterleaveData = ctx._unwrap(
        ctx.optional("interleave", InterleaveArgs(scenario=scenario)),
        f"interleave {scenario.value}", EXPECTED[scenario][0][0])
    for cid, what, holds in EXPECTED[scenario]:
        ctx.expect_also(holds(data), cid, what, data.model_dump(),
                        f"{scenario.value}: not so")
    if ctx.also:
        raise ctx.also.pop(0)


def _register(scenario: Interleaving, description: str) -> None:
    clauses = list(dict.fromkeys(cid for cid, _w, _h in EXPECTED[scenario]))

    def run(ctx: Ctx) -> None:
        _interleave(ctx, scenario)
    run.__name__ = f"_{scenario.value}"
    check(f"run/{scenario.value.replace('_', '-')}", description, clauses)(run)


_register(Interleaving.STALE_CONTINUATION,
          "a restart's continuation for a step the run has left is dropped: no payment past an "
          "unanswered approval")
_register(Interleaving.RESTART_BESIDE_LIVE,
          "a restart leaves a run whose live owner drives it; every effect once")
_register(Interleaving.LEASE_TAKEN_OVER,
          "a server whose lease ran out and whose run was taken over is fenced: every effect "
          "once")
_register(Interleaving.CONCURRENT_RESTARTS,
          "two restarts at once recover a run once: every effect once, no recovery pause")
_register(Interleaving.CANCEL_IN_FLIGHT,
          "a cancel while an effect is in flight stops the run before its next effect; it stays "
          "cancelled")
_register(Interleaving.CANCEL_FINISHED,
          "a cancel that read the run running before it finished is refused and leaves it done")
_register(Interleaving.CHILD_UNDER_CANCEL,
          "a child started while its parent is cancelled is refused or cancelled, and never "
          "pays")
_register(Interleaving.KILL_OPENING_RECOVERY,
          "a restart killed while opening a recovery pause leaves no orphan: the next one "
          "finishes the same pause")
_register(Interleaving.STORE_BLINK,
          "a store failure while a continuation asks leaves the run running for a restart, not "
          "in error")
_register(Interleaving.STALE_RECOVERY,
          "a driver whose run was taken over, finding the new owner's effect in flight, is "
          "fenced: it opens no recovery pause")
_register(Interleaving.CANCEL_OPENING_RECOVERY,
          "a recovery pause is issued only while its driver owns the run: none after a cancel")
