"""The checks of the ``cancel`` clause group."""


from __future__ import annotations

from pausepoint.core.clauses import ErrorCode as E
from pausepoint.core.clauses import Group
from pausepoint_conformance.suite.checks.common import basic
from pausepoint_conformance.suite.framework import (
    NO,
    YES,
    Ctx,
    ask,
    check,
    effect,
    end,
)

# == cancel ==================================================================================


@check("cancel/distinct",
       "a cancelled pause's token is refused with pause_cancelled and nothing continues",
       ["cancel.distinct", "effect.refusal.no-effect", "lifecycle.terminal.absorbing"])
def _cancel(ctx: Ctx) -> None:
    p = basic(ctx)
    data = ctx.cancel("r1", clause_id="cancel.distinct")
    ctx.expect(data.run.status == "cancelled", "cancel.distinct", "cancelled",
               data.run.status.value, "the run is not cancelled")
    ctx.expect(not data.run.pauses, "cancel.distinct", [],
               [q.interrupt_id for q in data.run.pauses], "a cancelled run has live pauses")
    ctx.expect_phase(p, "cancelled", "cancel.distinct")
    for response in (YES, NO):
        ctx.refuse_resume(p, [E.PAUSE_CANCELLED], "cancel.distinct",
                          "an answer to a cancelled pause", response=response)
    ctx.expect_count("r1", "b", 0, "effect.refusal.no-effect")
    ctx.expect_phase(p, "cancelled", "lifecycle.terminal.absorbing")


@check("cancel/not-yet-resumable",
       "cancelling a run whose pause is not yet resumable (its turn write failed) cancels "
       "that pause too: its token is refused with pause_cancelled",
       ["cancel.distinct", "turn.write-failed.stays-paused", "effect.refusal.no-effect"])
def _cancel_unresumable(ctx: Ctx) -> None:
    rep = ctx.start([effect("a"), ask("approve", checkpoint_write="fail"), effect("b"), end()])
    p = rep.pauses[0]
    ctx.expect_phase(p, "paused", "turn.write-failed.stays-paused")
    data = ctx.cancel("r1", clause_id="cancel.distinct")
    ctx.expect(not data.run.pauses, "cancel.distinct", [],
               [q.interrupt_id for q in data.run.pauses], "a cancelled run has live pauses")
    ctx.expect_phase(p, "cancelled", "cancel.distinct",
                     "a pause that was not yet resumable survived the cancel")
    ctx.refuse_resume(p, [E.PAUSE_CANCELLED], "cancel.distinct",
                      "an answer to a cancelled, never resumable pause")
    ctx.expect_count("r1", "b", 0, "effect.refusal.no-effect")


@check("cancel/after-consume",
       "cancelling after the answer leaves the consumed pause consumed",
       ["lifecycle.terminal.absorbing", "cancel.distinct"])
def _cancel_after(ctx: Ctx) -> None:
    rep = ctx.start([ask("approve"), ask("confirm"), end()])
    p = rep.pauses[0]
    q = ctx.resume(p, YES).run.pauses[0]
    ctx.cancel("r1")
    ctx.expect_phase(p, "consumed", "lifecycle.terminal.absorbing")
    ctx.expect_phase(q, "cancelled", "cancel.distinct")


@check("cancel/propagates",
       "cancelling a run cancels the live pauses of its children and grandchildren",
       ["cancel.propagates", "cancel.distinct", "effect.refusal.no-effect"])
def _propagates(ctx: Ctx) -> None:
    ctx.start([ask("approve"), end()], "parent")
    child = ctx.start([ask("confirm"), effect("c"), end()], "child", parent="parent").pauses[0]
    grand = ctx.start([ask("choose"), effect("g"), end()], "grandchild",
                      parent="child").pauses[0]
    other = ctx.start([ask("approve"), effect("o"), end()], "unrelated").pauses[0]
    ctx.cancel("parent")
    for p, key in ((child, "c"), (grand, "g")):
        ctx.expect_phase(p, "cancelled", "cancel.propagates",
                         f"{p.run_id}'s pause survived its ancestor's cancellation")
        ctx.refuse_resume(p, [E.PAUSE_CANCELLED], "cancel.propagates",
                          f"an answer to {p.run_id}'s pause")
        ctx.expect_count(p.run_id, key, 0, "effect.refusal.no-effect")
    ctx.expect_phase(other, "resumable", "cancel.propagates",
                     "cancelling one run cancelled an unrelated run")


@check("cancel/expiry-decided-once",
       "expiry and cancellation are decided once: the loser is told which state won",
       ["race.decided-once", "lifecycle.terminal.absorbing"],
       needs=[Group.CANCEL, Group.EXPIRY])
def _decided_once(ctx: Ctx) -> None:
    p = basic(ctx, "r1")
    ctx.advance(ctx.ttl_ms)
    ctx.cancel("r1")
    ctx.expect_phase(p, "expired", "race.decided-once",
                     "cancelling changed an already expired pause")
    ctx.refuse_resume(p, [E.PAUSE_EXPIRED], "race.decided-once", "an answer after both")
    q = basic(ctx, "r2")
    ctx.cancel("r2")
    ctx.advance(ctx.ttl_ms * 2)
    ctx.expect_phase(q, "cancelled", "race.decided-once",
                     "expiry changed an already cancelled pause")
    ctx.refuse_resume(q, [E.PAUSE_CANCELLED], "race.decided-once", "an answer after both")
