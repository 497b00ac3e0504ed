"""What several clause groups' checks share: scripted runs, answers, hostile inputs."""


from __future__ import annotations

import base64
import json
from typing import Any, Final

from pausepoint.core.clause_ids import ClauseId
from pausepoint.core.clauses import ErrorCode as E
from pausepoint_conformance.protocol.wire import Fault, Ok, PublishedPause, Refused
from pausepoint_conformance.suite.framework import (
    YES,
    Ctx,
    ask,
    describe,
    effect,
    end,
)

TOKEN_ERRORS: Final[tuple[E, ...]] = (E.TOKEN_INVALID, E.TOKEN_MALFORMED)
DEEP: Final[Any] = json.loads("[" * 40 + "]" * 40)
HUGE: Final[str] = "x" * 70_000
LONE_SURROGATE: Final[str] = json.loads('"approve \\ud800"')
"""Not Unicode text: UTF-8 cannot carry it, so no two languages need read it alike."""


def only(rep_pauses: list[PublishedPause], ctx: Ctx, clause_id: ClauseId, n: int = 1,
         what: str = "") -> list[PublishedPause]:
    ctx.expect(len(rep_pauses) == n, clause_id, f"{n} published pause(s)",
               [p.name for p in rep_pauses], what or "wrong number of published pauses")
    return rep_pauses


def answer_to_end(ctx: Ctx, p: PublishedPause, after: str = "b") -> None:
    """Answer ``p``: its run must go on to its end, running the effect ``after`` once."""
    data = ctx.resume(p, YES)
    ctx.expect(data.run.status == "done", "resume.continuation.recorded-turn", "done",
               data.run.status.value, "the run must continue to its end")
    ctx.expect_count(p.run_id, after, 1, "resume.continuation.recorded-turn",
                     "the effect after the pause must run once")


def basic(ctx: Ctx, run_id: str = "r1", name: str = "approve", **kw: Any) -> PublishedPause:
    """[effect a, ask, effect b, end] started and paused: its one pause."""
    rep = ctx.start([effect("a"), ask(name, {"amount": 5}), effect("b"), end()], run_id, **kw)
    return only(rep.pauses, ctx, "pause.published")[0]
def _pp1_parts(token: str) -> tuple[dict[str, Any], dict[str, Any]] | None:
    parts = token.split(".")
    if len(parts) != 4 or parts[0] != "pp1":
        return None
    try:
        dec = [json.loads(base64.urlsafe_b64decode(x + "=" * (-len(x) % 4)))
               for x in parts[1:3]]
    except ValueError:
        return None
    if not all(isinstance(d, dict) for d in dec):
        return None
    return dec[0], dec[1]


def _crash_in_effect(ctx: Ctx, fault: Fault) -> PublishedPause:
    rep = ctx.start([effect("a", fault), ask("approve"), effect("b"), end()], status=None)
    ctx.expect(rep.status in ("stopped", "running"), "effect.unknown-outcome", "stopped",
               rep.status.value, "the process died inside the effect, so the run stopped")
    applied = 1 if fault == Fault.CRASH_AFTER_APPLY else 0
    ctx.expect_count("r1", "a", applied, "effect.journal.bracket")
    data = ctx.crash_restart(clause_id="effect.unknown-outcome")
    rec = [p for p in data.pauses if p.run_id == "r1" and p.kind == "recovery"]
    went_on = [p.name for p in data.pauses if p.run_id == "r1" and p.kind == "ask"]
    ctx.expect_also(bool(rec) or not went_on or ctx.count("r1", "a") != applied,
               "effect.journal.bracket", "a recovery pause for the effect in doubt",
               {"pauses": went_on, "effect a ran": applied},
               "after a crash inside an effect the restart went on past it without running it "
               "again, as if the journal said it had finished: it was journalled finished "
               "before it returned")
    ctx.expect(len(rec) == 1, "effect.unknown-outcome", "one recovery pause for r1",
               [(p.name, p.kind) for p in data.pauses],
               "an effect in doubt after a crash must be surfaced as a recovery pause")
    p = rec[0]
    ctx.expect(not p.resumable, "resume.unknown-outcome.blocks", False, p.resumable,
               "a recovery pause is not resumable before reconciliation")
    ctx.expect_phase(p, "unknown_outcome", "effect.unknown-outcome")
    ctx.expect_count("r1", "a", applied, "effect.unknown-outcome",
                     "an effect whose outcome was unknown was retried")
    return p


def _race_round(ctx: Ctx, run_id: str, same: bool, n: int = 4) -> None:
    p = basic(ctx, run_id)
    responses = [YES if same else {"approved": True, "n": i} for i in range(n)]
    results = ctx.race([ctx.resume_args(p, r) for r in responses])
    firsts = [r for r in results if isinstance(r, Ok) and not r.data.replayed]
    ctx.expect_also(len(firsts) == 1, "resume.consume.single-winner", "exactly one winner",
                    [describe(r) for r in results],
                    f"{len(firsts)} of {n} racing resumes consumed the pause")
    ctx.expect_also(len(firsts) <= 1, "resume.consume.at-most-once", "at most one consume",
                    len(firsts), f"one pause was consumed {len(firsts)} times")
    for r in results:
        if isinstance(r, Ok) and r.data.replayed:
            ctx.expect(same, "race.decided-once", "a refusal", describe(r),
                       "a losing resume with a different response was told it won")
        elif isinstance(r, Refused):
            codes = [E.RESPONSE_CONFLICT, E.PAUSE_CONSUMED] if not same else [
                E.PAUSE_CONSUMED, E.RESPONSE_CONFLICT]
            ctx.expect_refused(r, codes, "race.decided-once", "a losing resume")
    ctx.expect_count(run_id, "b", 1, "effect.at-most-once" if same
                     else "resume.consume.at-most-once",
                     "racing resumes ran the continuation more than once")
    ctx.expect_phase(p, "consumed", "resume.consume.single-winner")


def _did_not_pause(ctx: Ctx, rep: Any, status: str, what: str) -> None:
    got = {"status": rep.status.value, "pauses": [p.name for p in rep.pauses],
           "events": rep.events}
    ctx.expect(rep.status == status and not rep.pauses and "paused" not in rep.events,
               "gate.separate", {"status": status, "pauses": [], "events": "no paused event"},
               got, f"{what} paused the run (or did not end it {status})")
