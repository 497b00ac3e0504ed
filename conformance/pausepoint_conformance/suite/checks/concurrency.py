"""The checks of the ``concurrency`` clause group."""


from __future__ import annotations

from pausepoint_conformance.suite.checks.common import _race_round
from pausepoint_conformance.suite.framework import (
    Ctx,
    check,
)


@check("concurrency/single-winner",
       "of several resumes racing with different answers exactly one consumes; the losers "
       "are told the pause was decided",
       ["resume.consume.single-winner", "resume.consume.at-most-once", "race.decided-once"])
def _race_distinct(ctx: Ctx) -> None:
    for i in range(3):
        _race_round(ctx, f"r{i}", same=False)


@check("concurrency/same-answer",
       "of several identical resumes racing, one consumes and the continuation runs once",
       ["resume.consume.single-winner", "resume.consume.at-most-once", "effect.at-most-once"])
def _race_same(ctx: Ctx) -> None:
    for i in range(3):
        _race_round(ctx, f"r{i}", same=True)



# == approval gates ==========================================================================
