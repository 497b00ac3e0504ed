"""The checks of the ``multi`` clause group."""


from __future__ import annotations

from pausepoint.core.clauses import ErrorCode as E
from pausepoint.core.clauses import Group
from pausepoint_conformance.suite.checks.common import only
from pausepoint_conformance.suite.checks.core import _expect_pause_refused
from pausepoint_conformance.suite.framework import (
    NO,
    OPERATOR,
    YES,
    Ctx,
    ask,
    check,
    effect,
    end,
)

# == multi-pause =============================================================================


@check("multi/independent",
       "several pauses of one step are answered independently; the run continues after the "
       "last",
       ["multi.independent", "resume.continuation.recorded-turn", "effect.at-most-once"])
def _multi(ctx: Ctx) -> None:
    rep = ctx.start([effect("a"), ask(names=["approve", "confirm", "choose"]), effect("b"),
                     end()])
    ps = only(rep.pauses, ctx, "multi.independent", 3)
    names = sorted(p.name for p in ps)
    ctx.expect(names == ["approve", "choose", "confirm"], "multi.independent",
               ["approve", "choose", "confirm"], names, "wrong pauses published")
    ctx.expect(len({p.interrupt_id for p in ps}) == 3 and len({p.token for p in ps}) == 3,
               "multi.independent", "three distinct pauses and tokens",
               [(p.interrupt_id, p.token[-8:]) for p in ps], "pauses share an id or a token")
    for i, p in enumerate(ps):
        data = ctx.resume(p, YES)
        last = i == len(ps) - 1
        for q in ps[i + 1:]:
            ctx.expect_phase(q, "resumable", "multi.independent",
                             f"answering {p.name} changed {q.name}")
        ctx.expect(data.run.status == ("done" if last else "paused"), "multi.independent",
                   "done" if last else "paused", data.run.status.value,
                   "the run must wait for every answer, then continue")
        ctx.expect_count("r1", "b", 1 if last else 0, "multi.independent")
    ctx.expect_count("r1", "a", 1, "effect.at-most-once")


@check("multi/refusal-isolated",
       "refusing, replaying or expiring one pause leaves its siblings as they were",
       ["multi.independent", "lifecycle.refusal.no-change"])
def _multi_isolated(ctx: Ctx) -> None:
    rep = ctx.start([ask(names=["approve", "restricted"]), effect("b"), end()])
    ps = {p.name: p for p in rep.pauses}
    ctx.expect(set(ps) == {"approve", "restricted"}, "multi.independent",
               ["approve", "restricted"], sorted(ps), "wrong pauses published")
    ctx.refuse_resume(ps["restricted"], [E.RESPONDER_UNAUTHORIZED], "resume.authority")
    ctx.expect_phase(ps["approve"], "resumable", "multi.independent")
    ctx.resume(ps["approve"], YES)
    ctx.expect_phase(ps["restricted"], "resumable", "multi.independent",
                     "answering one pause changed its sibling")
    ctx.expect_count("r1", "b", 0, "multi.independent",
                     "the run continued with a sibling still unanswered")
    ctx.resume(ps["restricted"], NO, responder=OPERATOR)
    ctx.expect_count("r1", "b", 1, "multi.independent")


# == unknown outcome =========================================================================


@check("multi/all-or-nothing",
       "several questions asked at once, one of them refused (an unregistered name, a payload "
       "that does not fit): none is taken -- nothing is published and nothing is minted",
       ["pause.refusal.before-mint", "pause.interaction.registered"],
       needs=[Group.MULTI_PAUSE])
def _all_or_nothing(ctx: Ctx) -> None:
    for i, names in enumerate((["approve", "not-registered"], ["not-registered", "approve"],
                               ["pay", "confirm"])):
        raw = ctx.start_raw([effect("a"), ask(names=names), effect("b"), end()], f"m{i}")
        codes = [E.TOOL_CALL_ID_MISSING] if "pay" in names else [E.INTERACTION_UNREGISTERED]
        _expect_pause_refused(ctx, raw, codes, "pause.refusal.before-mint",
                              f"the questions {names} asked at once")
        ctx.expect_count(f"m{i}", "b", 0, "pause.refusal.before-mint")
