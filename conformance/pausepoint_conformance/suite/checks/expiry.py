"""The checks of the ``expiry`` clause group."""


from __future__ import annotations

from pausepoint.core.clauses import ErrorCode as E
from pausepoint.core.clauses import Group
from pausepoint_conformance.protocol.wire import Ok
from pausepoint_conformance.suite.checks.common import TOKEN_ERRORS, basic
from pausepoint_conformance.suite.framework import (
    NO,
    YES,
    Ctx,
    ask,
    check,
    describe,
    effect,
    end,
)
from pausepoint_conformance.suite.mutations import alter

# == expiry ==================================================================================


@check("expiry/boundary",
       "a pause is answerable until just before expires_at and expired at it",
       ["expiry.transition", "resume.expiry", "expiry.no-consume-after",
        "effect.refusal.no-effect", "lifecycle.terminal.absorbing"])
def _expiry(ctx: Ctx) -> None:
    p = basic(ctx)
    ctx.advance(ctx.ttl_ms - 1)
    ctx.expect_phase(p, "resumable", "expiry.transition",
                     "the pause expired before its expires_at")
    ctx.advance(1)
    for response in (YES, NO):
        ctx.refuse_resume(p, [E.PAUSE_EXPIRED], "resume.expiry",
                          "a resume at expires_at", response=response)
    ctx.expect_count("r1", "b", 0, "expiry.no-consume-after")
    ctx.expect_phase(p, "expired", "expiry.transition",
                     "the clock reached expires_at but the pause is not expired")
    ctx.expect_phase(p, "expired", "lifecycle.terminal.absorbing")


@check("expiry/just-in-time",
       "an answer one millisecond before expiry wins, and stays consumed after expires_at",
       ["expiry.no-consume-after", "lifecycle.terminal.absorbing", "resume.expiry"])
def _just_in_time(ctx: Ctx) -> None:
    p = basic(ctx)
    ctx.advance(ctx.ttl_ms - 1)
    ctx.resume(p, YES, clause_id="resume.expiry")
    ctx.advance(ctx.ttl_ms)
    ctx.expect_phase(p, "consumed", "lifecycle.terminal.absorbing")
    ctx.expect_count("r1", "b", 1, "expiry.no-consume-after")


@check("expiry/across-restart",
       "a restart does not move a pause's expiry: at its expires_at, restart or not, it is "
       "expired and an answer consumes nothing",
       ["expiry.no-consume-after", "resume.expiry", "expiry.transition", "durability.restart",
        "durability.token.reissue"])
def _across_restart(ctx: Ctx) -> None:
    p = basic(ctx)
    ctx.advance(ctx.ttl_ms // 2)
    data = ctx.crash_restart()
    ctx.expect([q.interrupt_id for q in data.pauses] == [p.interrupt_id], "durability.restart",
               [p.interrupt_id], [q.interrupt_id for q in data.pauses],
               "the pause was lost by the restart")
    ctx.expect(data.pauses[0].token == p.token, "durability.token.reissue", p.token[-12:],
               data.pauses[0].token[-12:], "a different token was published after the restart")
    ctx.advance(ctx.ttl_ms - ctx.ttl_ms // 2)
    r = ctx.resume_raw(p, YES)
    ctx.expect_also(not isinstance(r, Ok) or r.data.replayed, "expiry.no-consume-after",
                    "no consume", describe(r),
                    "an answer at expires_at (a restart in between) consumed the pause")
    ctx.expect_refused(r, [E.PAUSE_EXPIRED], "resume.expiry",
                       "a resume at expires_at, a restart in between")
    ctx.expect_count("r1", "b", 0, "expiry.no-consume-after")
    ctx.expect_phase(p, "expired", "expiry.transition",
                     "the clock reached expires_at (a restart in between) but the pause is not "
                     "expired")


@check("expiry/every-live-phase",
       "unresumable and unrecorded pauses expire too",
       ["expiry.transition"])
def _expire_paused(ctx: Ctx) -> None:
    rep = ctx.start([ask("approve", checkpoint_write="fail"), effect("b"), end()])
    p = rep.pauses[0]
    ctx.advance(ctx.ttl_ms)
    ctx.expect_phase(p, "expired", "expiry.transition")
    ctx.refuse_resume(p, [E.PAUSE_EXPIRED], "resume.expiry", "an answer after expiry")


@check("expiry/refusal-order",
       "expiry is checked before binding, scope, authority and the response",
       ["resume.refusal.order", "resume.expiry"])
def _expiry_order(ctx: Ctx) -> None:
    p = basic(ctx, name="restricted")
    ctx.advance(ctx.ttl_ms)
    ctx.refuse_resume(p, [E.PAUSE_EXPIRED], "resume.refusal.order",
                      "an expired, unauthorised, invalid answer", responder="mallory",
                      response=[1])
    if ctx.needs_claim(Group.TOKENS):
        ctx.refuse_resume(p, TOKEN_ERRORS, "resume.refusal.order",
                          "an altered token for an expired pause",
                          token=alter(p.token, len(p.token) // 2))
