"""The checks of the ``durability`` clause group."""


from __future__ import annotations

from pausepoint.core.clauses import ErrorCode as E
from pausepoint.core.clauses import Group
from pausepoint_conformance.protocol.wire import Ok
from pausepoint_conformance.suite.checks.common import basic
from pausepoint_conformance.suite.framework import (
    YES,
    Ctx,
    check,
    describe,
)

# == durability ==============================================================================


@check("durability/restart",
       "a paused run survives a crash: same pause, same token, no effect rerun, answered once",
       ["durability.restart", "durability.token.reissue", "effect.at-most-once",
        "lifecycle.outstanding.live"])
def _restart(ctx: Ctx) -> None:
    p = basic(ctx)
    data = ctx.crash_restart()
    again = [q for q in data.pauses if q.interrupt_id == p.interrupt_id]
    ctx.expect(len(again) == 1, "durability.restart", [p.interrupt_id],
               [q.interrupt_id for q in data.pauses], "the pause was lost by the restart")
    ctx.expect(again[0].token == p.token, "durability.token.reissue", p.token[-12:],
               again[0].token[-12:], "a different token was published after the restart")
    ctx.expect_phase(p, "resumable", "durability.restart")
    ctx.expect_count("r1", "a", 1, "effect.at-most-once",
                     "the restart ran an effect before the pause again")
    ctx.resume(p, YES)
    ctx.expect_count("r1", "b", 1, "durability.restart")
    data = ctx.crash_restart()
    ctx.expect(all(q.interrupt_id != p.interrupt_id for q in data.pauses),
               "lifecycle.outstanding.live", "no consumed pause re-published",
               [q.interrupt_id for q in data.pauses],
               "a restart re-published a consumed pause as outstanding")
    ctx.expect_phase(p, "consumed", "durability.restart")
    r = ctx.resume_raw(p, YES)
    ctx.expect(not (isinstance(r, Ok) and not r.data.replayed), "durability.restart",
               "a replay or a refusal", describe(r),
               "the pause was answered twice across a restart")
    ctx.expect_count("r1", "b", 1, "durability.restart")


@check("durability/restart-later",
       "a restart later in time publishes the very token published before the crash (the "
       "pause is re-published, never re-minted), and that token still redeems it once",
       ["durability.token.reissue", "durability.restart"])
def _restart_later(ctx: Ctx) -> None:
    p = basic(ctx)
    ctx.advance(ctx.ttl_ms // 3)
    data = ctx.crash_restart()
    again = [q for q in data.pauses if q.interrupt_id == p.interrupt_id]
    ctx.expect(len(again) == 1, "durability.restart", [p.interrupt_id],
               [q.interrupt_id for q in data.pauses], "the pause was lost by the restart")
    ctx.expect(again[0].token == p.token, "durability.token.reissue", p.token[-12:],
               again[0].token[-12:],
               "the restart, later in time, published a different token (re-minted?)")
    ctx.resume(p, YES)
    ctx.expect_count("r1", "b", 1, "durability.restart")


@check("durability/commit-per-change",
       "every reported change survives an immediate crash",
       ["durability.commit-per-change", "durability.restart"])
def _commit(ctx: Ctx) -> None:
    p = basic(ctx, "r1")
    q = basic(ctx, "r2")
    ctx.refuse_resume(q, [E.RESPONSE_INVALID], "resume.response.schema", response=[1])
    ctx.resume(p, YES)
    ctx.crash_restart()
    ctx.expect_phase(p, "consumed", "durability.commit-per-change")
    ctx.expect_phase(q, "resumable", "durability.commit-per-change")
    if ctx.needs_claim(Group.CANCEL):
        ctx.cancel("r2")
        ctx.crash_restart()
        ctx.expect_phase(q, "cancelled", "durability.commit-per-change")
    if ctx.needs_claim(Group.EXPIRY):
        s = basic(ctx, "r3")
        ctx.advance(ctx.ttl_ms)
        ctx.crash_restart()
        ctx.expect_phase(s, "expired", "durability.commit-per-change")


# == concurrency =============================================================================
