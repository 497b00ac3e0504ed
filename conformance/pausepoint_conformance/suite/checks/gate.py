"""The checks of the ``gate`` clause group."""


from __future__ import annotations

from pausepoint_conformance.suite.checks.common import _did_not_pause, only
from pausepoint_conformance.suite.framework import (
    YES,
    Ctx,
    ask,
    check,
    effect,
    end,
    gate,
)


@check("gate/allow-does-not-pause",
       "a gate that allows at once does not pause: nothing is published and the run goes on "
       "past it",
       ["gate.separate"])
def _gate_allows(ctx: Ctx) -> None:
    for i, amount in enumerate((5, 10)):  # 10 is the limit itself: still allowed
        run = f"r{i}"
        rep = ctx.start([effect("a"), gate(amount, 10, 100), effect("b"), end()], run,
                        status=None)
        _did_not_pause(ctx, rep, "done", f"a gate allowing {amount} (up to 10)")
        ctx.expect_count(run, "b", 1, "gate.separate",
                         "the effect after a gate that allowed did not run")
    rep = ctx.start([gate(1, 10, 100), effect("b"), ask("confirm"), effect("c"), end()], "r9")
    p = only(rep.pauses, ctx, "gate.separate")[0]
    ctx.expect(p.name == "confirm", "gate.separate", "confirm", p.name,
               "the run paused at the gate that allowed, not at its question")
    ctx.expect_count("r9", "b", 1, "gate.separate")


@check("gate/ask-pauses",
       "a gate that asks a person pauses with an approve pause; once answered the run goes on "
       "past the gate",
       ["gate.separate", "pause.published", "resume.continuation.recorded-turn"])
def _gate_asks(ctx: Ctx) -> None:
    rep = ctx.start([effect("a"), gate(50, 10, 100), effect("b"), end()])
    p = only(rep.pauses, ctx, "gate.separate")[0]
    ctx.expect(p.name == "approve", "gate.separate", "approve", p.name,
               "a gate asking a person must take an approve pause")
    amount = p.payload.get("amount") if isinstance(p.payload, dict) else None
    ctx.expect(amount == 50, "pause.published", 50, amount,
               "the gate's pause does not carry the amount")
    ctx.expect_count("r1", "b", 0, "gate.separate", "the run went past a gate that asked")
    data = ctx.resume(p, YES)
    ctx.expect(data.run.status == "done", "resume.continuation.recorded-turn", "done",
               data.run.status.value, "after the answer the run goes on past the gate")
    ctx.expect_count("r1", "a", 1, "effect.at-most-once")
    ctx.expect_count("r1", "b", 1, "resume.continuation.recorded-turn")
    rep = ctx.start([gate(100, 10, 100), effect("b"), end()], "r2")  # the hard limit itself
    only(rep.pauses, ctx, "gate.separate", what="a gate at its hard limit (100) must ask")


@check("gate/deny-does-not-pause",
       "a gate that denies at once does not pause: the run ends done, nothing is published and "
       "nothing after the gate runs",
       ["gate.separate", "effect.at-most-once"])
def _gate_denies(ctx: Ctx) -> None:
    rep = ctx.start([effect("a"), gate(500, 10, 100), effect("b"), ask("approve"), end()],
                    status=None)
    _did_not_pause(ctx, rep, "done", "a gate denying 500 (over 100)")
    ctx.expect_count("r1", "a", 1, "effect.at-most-once")
    ctx.expect_count("r1", "b", 0, "gate.separate", "the run went past a gate that denied")
