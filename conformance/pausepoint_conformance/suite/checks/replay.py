"""The checks of the ``replay`` clause group."""


from __future__ import annotations

from pausepoint.core.clauses import ErrorCode as E
from pausepoint.core.clauses import Group
from pausepoint_conformance.suite.checks.common import answer_to_end, basic, only
from pausepoint_conformance.suite.framework import (
    NO,
    YES,
    Ctx,
    ask,
    check,
    effect,
    end,
)

# == replay ==================================================================================


@check("replay/same-response",
       "answering a consumed pause with the same response returns the first result and runs "
       "nothing",
       ["replay.same-response", "effect.at-most-once", "resume.consume.at-most-once"])
def _replay(ctx: Ctx) -> None:
    p = basic(ctx)
    first = ctx.resume(p, {"approved": True, "note": "ok"})
    for _ in range(2):
        again = ctx.resume(p, {"note": "ok", "approved": True}, replayed=True)
        ctx.expect(again.run.status == first.run.status, "replay.same-response",
                   first.run.status.value, again.run.status.value,
                   "a replay must return the first result")
        ctx.expect_count("r1", "b", 1, "effect.at-most-once",
                         "a replay ran the continuation again")
    ctx.expect_phase(p, "consumed", "replay.same-response")


@check("replay/canonical",
       "a retry re-serialised by another language (1.0 for 1, -0.0 for 0, keys reordered) is "
       "the same answer: a replay, not a conflict",
       ["input.canonical", "replay.same-response", "effect.at-most-once"])
def _canonical(ctx: Ctx) -> None:
    for run_id, first, retry in (("r1", {"approved": True, "n": 1}, {"n": 1.0, "approved": True}),
                                 ("r2", {"approved": True, "z": -0.0}, {"approved": True, "z": 0}),
                                 ("r3", {"approved": True, "x": [1.5, 2]},
                                  {"x": [1.50, 2.0], "approved": True})):
        p = basic(ctx, run_id)
        ctx.resume(p, first)
        ctx.resume(p, retry, replayed=True, clause_id="input.canonical")
        ctx.expect_count(run_id, "b", 1, "effect.at-most-once", "a replay ran the effect again")


@check("replay/next-question-pending",
       "a repeated answer (a double click) while the run waits on its next question is a "
       "replay: the next question stays pending, unanswered",
       ["replay.same-response", "effect.at-most-once"])
def _replay_next_pending(ctx: Ctx) -> None:
    rep = ctx.start([ask("approve"), effect("b"), ask("confirm"), effect("c"), end()])
    p = only(rep.pauses, ctx, "pause.published")[0]
    q = only(ctx.resume(p, YES).run.pauses, ctx, "resume.continuation.recorded-turn")[0]
    ctx.expect(q.name == "confirm", "resume.continuation.recorded-turn", "confirm", q.name,
               "after the first answer the run must wait on its next question")
    again = ctx.resume(p, YES, replayed=True)
    ctx.expect(not again.run.pauses or [x.interrupt_id for x in again.run.pauses]
               == [q.interrupt_id], "replay.same-response", [q.interrupt_id],
               [x.interrupt_id for x in again.run.pauses],
               "a replay must leave the run waiting on its next question")
    ctx.expect_count("r1", "c", 0, "replay.same-response",
                     "the repeated answer to the first question answered the next one")
    ctx.expect_phase(q, "resumable", "replay.same-response")
    ctx.expect_count("r1", "b", 1, "effect.at-most-once", "a replay ran the effect again")
    answer_to_end(ctx, q, after="c")


@check("replay/different-response",
       "answering a consumed pause with a different response is a conflict",
       ["replay.different-response.conflict", "lifecycle.refusal.no-change",
        "effect.at-most-once"])
def _conflict(ctx: Ctx) -> None:
    p = basic(ctx)
    ctx.resume(p, YES)
    for other in (NO, {"approved": True, "extra": 1}):
        ctx.refuse_resume(p, [E.RESPONSE_CONFLICT], "replay.different-response.conflict",
                          f"a second answer {other!r}", response=other)
        ctx.expect_count("r1", "b", 1, "effect.at-most-once")
    ctx.expect_phase(p, "consumed", "lifecycle.refusal.no-change")
    ctx.resume(p, YES, replayed=True)


@check("replay/after-expiry",
       "a pause consumed before its expiry still replays after it",
       ["replay.same-response", "resume.refusal.order", "lifecycle.terminal.absorbing"],
       needs=[Group.EXPIRY])
def _replay_after_expiry(ctx: Ctx) -> None:
    p = basic(ctx)
    ctx.resume(p, YES)
    ctx.advance(ctx.ttl_ms * 2)
    ctx.resume(p, YES, replayed=True)
    ctx.refuse_resume(p, [E.RESPONSE_CONFLICT], "replay.different-response.conflict",
                      "a different answer after expiry", response=NO)
    ctx.expect_phase(p, "consumed", "lifecycle.terminal.absorbing")
