"""The checks of the ``lineage`` clause group."""


from __future__ import annotations

from pausepoint.core.clauses import ErrorCode as E
from pausepoint_conformance.suite.checks.common import _pp1_parts, basic, only
from pausepoint_conformance.suite.framework import (
    YES,
    Ctx,
    ask,
    check,
    effect,
    end,
)

# == lineage =================================================================================


@check("lineage/binding",
       "a token is redeemed only from its own run and session",
       ["resume.binding.run", "lifecycle.refusal.no-change", "effect.refusal.no-effect"])
def _binding(ctx: Ctx) -> None:
    p = basic(ctx)
    ctx.refuse_resume(p, [E.BINDING_MISMATCH], "resume.binding.run",
                      "a resume from another session", session="session-2")
    ctx.refuse_resume(p, [E.BINDING_MISMATCH], "resume.binding.run",
                      "a resume for another run", run_id="r9")
    ctx.expect_phase(p, "resumable", "lifecycle.refusal.no-change")
    ctx.expect_count("r1", "b", 0, "effect.refusal.no-effect")
    ctx.resume(p, YES)


@check("lineage/child",
       "a child run's pause is bound to the child (the live run), not to its parent",
       ["run.binding.live", "resume.binding.run"])
def _child(ctx: Ctx) -> None:
    ctx.start([ask("approve"), end()], "parent")
    rep = ctx.start([effect("c"), ask("confirm"), effect("d"), end()], "child",
                    parent="parent")
    p = only(rep.pauses, ctx, "run.binding.live")[0]
    ctx.expect(p.run_id == "child", "run.binding.live", "child", p.run_id,
               "the child's pause is not bound to the child run")
    parsed = _pp1_parts(p.token)
    if parsed is not None:
        claims = parsed[1]
        got = (claims.get("run_id"), claims.get("root_run_id"))
        ctx.expect(got == ("child", "parent"), "run.binding.live", ("child", "parent"), got,
                   "the token's run and root run are not the live run's")
    ctx.refuse_resume(p, [E.BINDING_MISMATCH], "resume.binding.run",
                      "the child's token presented for the parent run", run_id="parent")
    ctx.resume(p, YES)
    ctx.expect_count("child", "d", 1, "resume.continuation.recorded-turn")


@check("lineage/refusal-order",
       "binding is checked before scope and authority",
       ["resume.refusal.order", "resume.binding.run"])
def _lineage_order(ctx: Ctx) -> None:
    p = basic(ctx, name="restricted")
    ctx.refuse_resume(p, [E.BINDING_MISMATCH], "resume.refusal.order",
                      "a wrong-session, wrong-scope, unauthorised answer",
                      session="session-2", scope="scope-2", responder="mallory")
