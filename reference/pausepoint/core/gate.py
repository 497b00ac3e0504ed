"""Approval gates: a policy deciding whether an action needs a person (gate.separate).

A gate is not an interrupt.  It decides; only when its decision is "ask a person" does the run
raise the pause signal.  A gate that can decide at once -- allow or deny -- never pauses.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from typing import Any

import attrs


class Decision(enum.StrEnum):
    ALLOW = "allow"
    DENY = "deny"
    ASK = "ask"


@attrs.frozen
class GateVerdict:
    decision: Decision
    reason: str = ""


Policy = Callable[[str, Any], GateVerdict]


@attrs.frozen
class ThresholdGate:
    """An example policy: amounts up to ``allow_up_to`` pass, above ``deny_over`` are refused,
    and anything in between asks a person."""

    allow_up_to: float
    deny_over: float

    def __call__(self, action: str, args: Any) -> GateVerdict:
        amount = float(args.get("amount", 0)) if isinstance(args, dict) else 0.0
        if amount <= self.allow_up_to:
            return GateVerdict(Decision.ALLOW, f"{amount} is within the automatic limit")
        if amount > self.deny_over:
            return GateVerdict(Decision.DENY, f"{amount} is over the hard limit")
        return GateVerdict(Decision.ASK, f"{amount} needs a person's approval")
