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


@check("lineage/grandchild",
       "in a three-level lineage every pause is bound to its own run and to the root run: "
       "the grandchild's root is the first run, not its parent",
       ["run.binding.live", "resume.binding.run", "effect.refusal.no-effect"])
def _grandchild(ctx: Ctx) -> None:
    lineage = (("root", None), ("child", "root"), ("grandchild", "child"))
    pauses = {}
    for run_id, parent in lineage:
        rep = ctx.start([effect("a"), ask("approve"), effect("b"), end()], run_id,
                        parent=parent)
        p = only(rep.pauses, ctx, "run.binding.live")[0]
        ctx.expect(p.run_id == run_id, "run.binding.live", run_id, p.run_id,
                   f"{run_id}'s pause is not bound to {run_id}")
        parsed = _pp1_parts(p.token)
        if parsed is not None:
            got = (parsed[1].get("run_id"), parsed[1].get("root_run_id"))
            ctx.expect(got == (run_id, "root"), "run.binding.live", (run_id, "root"), got,
                       f"{run_id}'s token is not bound to its run and the lineage's root")
        pauses[run_id] = p
    for run_id, p in pauses.items():
        for other in pauses:
            if other != run_id:
                ctx.refuse_resume(p, [E.BINDING_MISMATCH], "resume.binding.run",
                                  f"{run_id}'s token presented for {other}", run_id=other)
        ctx.expect_count(run_id, "b", 0, "effect.refusal.no-effect")
    for run_id, p in reversed(pauses.items()):
        ctx.resume(p, YES)
        ctx.expect_count(run_id, "b", 1, "resume.continuation.recorded-turn")
