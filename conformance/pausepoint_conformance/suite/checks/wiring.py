"""The checks of the ``wiring`` clause group."""


from __future__ import annotations

from typing import Final

from pausepoint.core.clauses import ErrorCode as E
from pausepoint_conformance.protocol.wire import Durability, TokenCodec
from pausepoint_conformance.suite.framework import (
    Ctx,
    check,
)

# == wiring (optional operation) =============================================================

Wiring = tuple[Durability, Durability, TokenCodec]
"""A trial wiring: checkpoints, ledger, token codec."""
INCONSISTENT: Final[tuple[tuple[Wiring, str], ...]] = (
    (("durable", "volatile", "none"), "durable checkpoints, volatile ledger"),
    (("durable", "durable", "encoder_only"), "a token encoder alone"),
    (("volatile", "volatile", "decoder_only"), "a token decoder alone"))
CONSISTENT: Final[tuple[tuple[Wiring, str], ...]] = (
    (("durable", "durable", "both"), "durable parts, a whole codec"),
    (("volatile", "volatile", "none"), "volatile parts"),
    (("volatile", "durable", "none"), "volatile checkpoints, durable ledger"))


@check("wiring/consistent",
       "a trial wiring of durable checkpoints with a volatile ledger, or of half a token "
       "codec, is refused with wiring_invalid; consistent wirings are accepted",
       ["wiring.consistent"])
def _wiring_consistent(ctx: Ctx) -> None:
    for parts, what in INCONSISTENT:
        ctx.expect_refused(ctx.wiring_raw(*parts), [E.WIRING_INVALID], "wiring.consistent",
                           f"wiring {what}")
    for parts, what in CONSISTENT:
        ctx._unwrap(ctx.wiring_raw(*parts, interactions=["approve"]), f"wiring {what}",
                    "wiring.consistent")


@check("wiring/no-interaction-no-tool",
       "a deployment with no interaction registered offers the model no ask-the-user tool; one "
       "with an interaction does",
       ["wiring.no-interaction-no-tool"])
def _wiring_no_tool(ctx: Ctx) -> None:
    for parts in (("durable", "durable"), ("volatile", "volatile")):
        data = ctx._unwrap(ctx.wiring_raw(*parts), "wiring with no interaction",
                           "wiring.no-interaction-no-tool")
        asking = [t.name for t in data.tools if t.asks_user]
        ctx.expect(not asking, "wiring.no-interaction-no-tool", [], asking,
                   "with no interaction registered the model was offered an ask-the-user tool")
    data = ctx._unwrap(ctx.wiring_raw("durable", "durable", interactions=["approve", "pay"]),
                       "wiring with interactions", "wiring.no-interaction-no-tool")
    ctx.expect(any(t.asks_user for t in data.tools), "wiring.no-interaction-no-tool",
               "an ask-the-user tool", [t.name for t in data.tools],
               "with interactions registered no ask-the-user tool was offered: the answer "
               "cannot tell the two wirings apart")
