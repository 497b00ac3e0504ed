"""The checks of the ``status`` clause group."""


from __future__ import annotations

from pausepoint.core.clauses import Group
from pausepoint_conformance.protocol.wire import Fault
from pausepoint_conformance.suite.checks.common import _crash_in_effect, basic, only
from pausepoint_conformance.suite.framework import (
    YES,
    Ctx,
    ask,
    check,
    effect,
    end,
)

# == status query (optional operation) =======================================================


@check("status/suspended-or-partial",
       "the status query tells a safely suspended run (every live pause resumable) from a "
       "partially complete one (a pause whose turn write failed), and both from done and "
       "cancelled",
       ["status.distinguishes"])
def _status_distinguishes(ctx: Ctx) -> None:
    p = basic(ctx, "r1")
    ctx.expect_status("r1", "safely_suspended",
                      "a run paused with its turn recorded is safely suspended")
    ctx.start([effect("a"), ask("approve", checkpoint_write="fail"), effect("b"), end()], "r2")
    ctx.expect_status("r2", "partially_complete",
                      "a run whose pause's turn write failed is partially complete, not safely "
                      "suspended")
    ctx.expect_status("r1", "safely_suspended",
                      "another run's failed turn write changed this run's status")
    ctx.resume(p, YES)
    ctx.expect_status("r1", "done", "a run that ran to its end is done")
    ctx.start([effect("c"), end()], "r3", status="done")
    ctx.expect_status("r3", "done", "a run that never paused and ended is done")
    ctx.expect_status("r2", "partially_complete",
                      "answering another run changed this run's status")
    if ctx.needs_claim(Group.MULTI_PAUSE):
        rep = ctx.start([ask(names=["approve", "confirm"]), effect("m"), end()], "r4")
        ctx.resume(only(rep.pauses, ctx, "multi.independent", 2)[0], YES)
        ctx.expect_status("r4", "safely_suspended",
                          "one of two questions answered, the other resumable: the run is "
                          "still safely suspended")
    if ctx.needs_claim(Group.CANCEL):
        ctx.cancel("r2")
        ctx.expect_status("r2", "cancelled", "a cancelled run is cancelled")


@check("status/unknown-outcome",
       "a run stopped inside an effect waits on an unknown outcome until it is reconciled; "
       "then it is safely suspended, and done after its last answer",
       ["status.distinguishes"], needs=[Group.UNKNOWN_OUTCOME])
def _status_unknown(ctx: Ctx) -> None:
    p = _crash_in_effect(ctx, Fault.CRASH_AFTER_APPLY)
    ctx.expect_status("r1", "waiting_unknown_outcome",
                      "after a crash inside an effect the run waits on an unknown outcome")
    ctx.reconcile(p, "applied")
    ctx.expect_status("r1", "safely_suspended",
                      "once the outcome is reconciled the recovery pause is resumable")
    data = ctx.resume(p, {})
    q = only(data.run.pauses, ctx, "effect.reconcile")[0]
    ctx.expect_status("r1", "safely_suspended", "the run paused at its next question")
    ctx.resume(q, YES)
    ctx.expect_status("r1", "done", "a run that ran to its end is done")
