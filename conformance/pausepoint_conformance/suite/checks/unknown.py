"""The checks of the ``unknown`` clause group."""


from __future__ import annotations

from pausepoint.core.clauses import ErrorCode as E
from pausepoint_conformance.protocol.wire import Fault
from pausepoint_conformance.suite.checks.common import _crash_in_effect, basic, only
from pausepoint_conformance.suite.framework import (
    YES,
    Ctx,
    check,
)


@check("unknown/crash-after-apply",
       "an effect that crashed after applying is surfaced, never retried, reconciled as "
       "applied, and then skipped",
       ["effect.unknown-outcome", "resume.unknown-outcome.blocks", "effect.reconcile",
        "effect.journal.bracket", "effect.at-most-once"])
def _after_apply(ctx: Ctx) -> None:
    p = _crash_in_effect(ctx, Fault.CRASH_AFTER_APPLY)
    for _ in range(2):
        ctx.refuse_resume(p, [E.OUTCOME_UNKNOWN], "resume.unknown-outcome.blocks",
                          "a resume over an unknown outcome")
        ctx.expect_count("r1", "a", 1, "resume.unknown-outcome.blocks")
    phase = ctx.reconcile(p, "applied")
    ctx.expect(phase == "resumable", "effect.reconcile", "resumable", phase,
               "a reconciled recovery pause becomes resumable")
    data = ctx.resume(p, {})
    ctx.expect_count("r1", "a", 1, "effect.at-most-once",
                     "an effect reconciled as applied ran again")
    ctx.expect(data.run.status == "paused", "effect.reconcile", "paused",
               data.run.status.value, "after reconciliation the run continues to its next step")
    q = only(data.run.pauses, ctx, "effect.reconcile")[0]
    ctx.resume(q, YES)
    ctx.expect_count("r1", "b", 1, "resume.continuation.recorded-turn")


@check("unknown/crash-before-apply",
       "an effect that crashed before applying is reconciled as not applied and then runs once",
       ["effect.unknown-outcome", "effect.reconcile", "effect.journal.bracket",
        "effect.at-most-once", "resume.unknown-outcome.blocks"])
def _before_apply(ctx: Ctx) -> None:
    p = _crash_in_effect(ctx, Fault.CRASH_BEFORE_APPLY)
    ctx.refuse_resume(p, [E.OUTCOME_UNKNOWN], "resume.unknown-outcome.blocks",
                      "a resume over an unknown outcome")
    ctx.expect_count("r1", "a", 0, "resume.unknown-outcome.blocks")
    ctx.reconcile(p, "not_applied")
    ctx.resume(p, {})
    ctx.expect_count("r1", "a", 1, "effect.reconcile",
                     "an effect reconciled as not applied must run (once)")


@check("unknown/reconcile-needs-doubt",
       "reconciling a pause with no outcome in doubt is not a transition of the table",
       ["lifecycle.transition.table", "effect.reconcile", "lifecycle.refusal.no-change"])
def _reconcile_invalid(ctx: Ctx) -> None:
    p = basic(ctx)
    ctx.expect_refused(ctx.reconcile_raw(p, "applied"), [E.INVALID_TRANSITION],
                       "lifecycle.transition.table", "reconciling a resumable pause")
    ctx.expect_phase(p, "resumable", "lifecycle.refusal.no-change")
    ctx.resume(p, YES)
    ctx.expect_refused(ctx.reconcile_raw(p, "not_applied"),
                       [E.PAUSE_CONSUMED, E.INVALID_TRANSITION],
                       "lifecycle.terminal.absorbing", "reconciling a consumed pause")
    ctx.expect_phase(p, "consumed", "lifecycle.terminal.absorbing")


@check("unknown/refusal-order",
       "over an unknown outcome the response is still validated first",
       ["resume.refusal.order", "resume.unknown-outcome.blocks"])
def _unknown_order(ctx: Ctx) -> None:
    p = _crash_in_effect(ctx, Fault.CRASH_AFTER_APPLY)
    ctx.refuse_resume(p, [E.RESPONSE_INVALID], "resume.refusal.order",
                      "an invalid answer over an unknown outcome", response=[1])
    ctx.refuse_resume(p, [E.OUTCOME_UNKNOWN], "resume.unknown-outcome.blocks",
                      "a valid answer over an unknown outcome")


@check("unknown/expires",
       "a pause waiting on an unknown outcome still expires",
       ["expiry.transition", "effect.unknown-outcome"])
def _unknown_expires(ctx: Ctx) -> None:
    p = _crash_in_effect(ctx, Fault.CRASH_AFTER_APPLY)
    ctx.advance(ctx.ttl_ms)
    ctx.expect_phase(p, "expired", "expiry.transition")
