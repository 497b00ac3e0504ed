"""The conformance checks, clause group by clause group.

Each check starts from a fresh instance (``reset``), drives scripted runs, and states what the
contract requires, citing clause ids.  A check could fail: each one was seen failing on one of
the deliberately broken implementations in ``tests/broken/`` (see ``tests/test_conformance_broken.py``).

Every clause of the catalogue is cited by at least one check (a test keeps it so): the ones that
live inside an implementation -- how the pause signal travels, a pause bound to no checkpoint,
deployment wiring -- are reached through the script steps and the optional ``wiring``
operation made for them.
"""

from __future__ import annotations

import base64
import json
from typing import Any, Final

from pausepoint.core.clauses import ErrorCode as E
from pausepoint.core.clauses import Group
from pausepoint_conformance.protocol.wire import Handlers, Ok, PublishedPause, Refused
from pausepoint_conformance.suite.framework import (
    NO,
    OPERATOR,
    SCOPE,
    YES,
    CheckSkipped,
    Ctx,
    alter,
    ask,
    check,
    describe,
    effect,
    end,
    gate,
)

TOKEN_ERRORS: Final[tuple[E, ...]] = (E.TOKEN_INVALID, E.TOKEN_MALFORMED)
DEEP: Final[Any] = json.loads("[" * 40 + "]" * 40)
HUGE: Final[str] = "x" * 70_000
LONE_SURROGATE: Final[str] = json.loads('"approve \\ud800"')
"""Not Unicode text: UTF-8 cannot carry it, so no two languages need read it alike."""


def only(rep_pauses: list[PublishedPause], ctx: Ctx, clause_id: str, n: int = 1,
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


# == core ====================================================================================


@check("core/pause-published",
       "a pause is published with its name, payload, ids, expiry and token, and is resumable",
       ["pause.published", "turn.resumable.earned", "lifecycle.states",
        "run.events.vocabulary", "run.events.single-terminal"])
def _published(ctx: Ctx) -> None:
    rep = ctx.start([ask("approve", {"amount": 5, "to": "acme"}), end()])
    p = only(rep.pauses, ctx, "pause.published")[0]
    ctx.expect(p.name == "approve", "pause.published", "approve", p.name, "wrong name")
    ctx.expect(p.payload == {"amount": 5, "to": "acme"}, "pause.published",
               {"amount": 5, "to": "acme"}, p.payload, "the payload was not published as given")
    ctx.expect(p.run_id == "r1", "pause.published", "r1", p.run_id, "wrong run id")
    ctx.expect(p.kind == "ask", "pause.published", "ask", p.kind, "wrong kind")
    ctx.expect(p.expires_at == ctx.ttl_ms, "pause.published", ctx.ttl_ms, p.expires_at,
               "expires_at must be the pause time (0) plus the lifetime given at reset")
    ctx.expect(p.resumable, "turn.resumable.earned", True, p.resumable,
               "the turn checkpoint was written, so the pause must be published resumable")
    ctx.expect(rep.events[-1:] == ["paused"], "run.events.single-terminal", "... paused",
               rep.events, "a paused invocation ends with the paused event")
    ctx.expect_phase(p, "resumable", "turn.resumable.earned")


@check("core/resume-continues",
       "a resume consumes the pause and continues from the recorded turn, running what follows "
       "once and what preceded never again",
       ["resume.continuation.recorded-turn", "effect.at-most-once",
        "resume.consume.at-most-once", "run.events.single-terminal",
        "lifecycle.transition.table"])
def _continues(ctx: Ctx) -> None:
    p = basic(ctx)
    ctx.expect_count("r1", "a", 1, "effect.at-most-once")
    ctx.expect_count("r1", "b", 0, "resume.continuation.recorded-turn",
                     "nothing after the pause may run before it is answered")
    answer_to_end(ctx, p)
    ctx.expect_count("r1", "a", 1, "effect.at-most-once",
                     "the effect before the pause ran again on resume")
    ctx.expect_phase(p, "consumed", "resume.consume.at-most-once")


@check("core/resume-sequence",
       "a run pausing three times continues step by step; no effect runs twice",
       ["effect.at-most-once", "resume.continuation.recorded-turn",
        "lifecycle.terminal.absorbing"])
def _sequence(ctx: Ctx) -> None:
    rep = ctx.start([effect("a"), ask("approve"), effect("b"), ask("confirm"), effect("c"),
                     ask("choose"), effect("d"), end()])
    done: list[PublishedPause] = []
    for i, key in enumerate(("b", "c", "d")):
        p = only(rep.pauses, ctx, "resume.continuation.recorded-turn")[0]
        ctx.expect(p.name == ("approve", "confirm", "choose")[i],
                   "resume.continuation.recorded-turn", ("approve", "confirm", "choose")[i],
                   p.name, "the run continued to the wrong step")
        run = ctx.resume(p, YES).run
        done.append(p)
        for k in "abcd":
            want = 1 if k <= key else 0
            ctx.expect_count("r1", k, want, "effect.at-most-once" if want else
                             "resume.continuation.recorded-turn")
        for q in done:
            ctx.expect_phase(q, "consumed", "lifecycle.terminal.absorbing")
        rep = run
    ctx.expect(rep.status == "done", "resume.continuation.recorded-turn", "done",
               rep.status.value, "the run must end after the last answer")


@check("core/consume-at-most-once",
       "answering a consumed pause again never consumes it again nor reruns the continuation",
       ["resume.consume.at-most-once", "effect.at-most-once", "lifecycle.terminal.absorbing"])
def _at_most_once(ctx: Ctx) -> None:
    p = basic(ctx)
    ctx.resume(p, YES)
    for response in (YES, NO, YES):
        r = ctx.resume_raw(p, response)
        if isinstance(r, Ok):
            ctx.expect(r.data.replayed, "resume.consume.at-most-once", {"replayed": True},
                       describe(r), "a consumed pause was consumed a second time")
            ctx.expect(response == YES, "resume.consume.at-most-once", "a refusal",
                       describe(r), "a different answer to a consumed pause was accepted")
        else:
            ctx.expect_refused(r, (), "resume.consume.at-most-once", "a second answer")
        ctx.expect_count("r1", "b", 1, "effect.at-most-once",
                         "the continuation ran again for a second answer")
        ctx.expect_phase(p, "consumed", "lifecycle.terminal.absorbing")


@check("core/response-invalid",
       "a response that does not fit the response schema is refused, and the pause stays "
       "answerable",
       ["resume.response.schema", "resume.refusal.keeps-pause", "lifecycle.refusal.no-change",
        "effect.refusal.no-effect"])
def _response_invalid(ctx: Ctx) -> None:
    p = basic(ctx)
    for bad in ([1, 2], "yes", None, 3):
        ctx.refuse_resume(p, [E.RESPONSE_INVALID], "resume.response.schema",
                          f"a resume with the response {bad!r}", response=bad)
        ctx.expect_phase(p, "resumable", "lifecycle.refusal.no-change")
        ctx.expect_count("r1", "b", 0, "effect.refusal.no-effect")
    ctx.resume(p, YES, clause_id="resume.refusal.keeps-pause")
    ctx.expect_count("r1", "b", 1, "resume.refusal.keeps-pause")


@check("core/input-bounded",
       "oversized and deeply nested input is refused with a typed error and changes nothing",
       ["input.bounded", "resume.response.schema", "pause.payload.schema",
        "lifecycle.refusal.no-change", "effect.refusal.no-effect"])
def _bounded(ctx: Ctx) -> None:
    p = basic(ctx)
    for what, bad in (("a response nested 40 deep", {"deep": DEEP}),
                      ("a 70 kB response", {"text": HUGE}),
                      ("a response with a lone surrogate", {"text": LONE_SURROGATE})):
        ctx.refuse_resume(p, [E.RESPONSE_INVALID], "input.bounded", what, response=bad)
        ctx.expect_phase(p, "resumable", "lifecycle.refusal.no-change")
        ctx.expect_count("r1", "b", 0, "effect.refusal.no-effect")
    for i, (what, payload) in enumerate((("a payload nested 40 deep", {"deep": DEEP}),
                                         ("a 70 kB payload", {"text": HUGE}),
                                         ("a payload with a lone surrogate",
                                          {"text": LONE_SURROGATE}))):
        raw = ctx.start_raw([ask("approve", payload), end()], f"big{i}")
        _expect_pause_refused(ctx, raw, [E.PAYLOAD_INVALID], "input.bounded", what)
    ctx.resume(p, YES, clause_id="resume.refusal.keeps-pause")


def _expect_pause_refused(ctx: Ctx, raw: Any, codes: list[E], clause_id: str,
                          what: str) -> None:
    """A start whose pause must be refused: refused (as the result or as the run's refusal),
    nothing published, not paused."""
    if isinstance(raw, Refused):
        ctx.expect_refused(raw, codes, clause_id, what)
        return
    if not isinstance(raw, Ok):
        ctx.expect_refused(raw, codes, clause_id, what)  # skipped / errored
        return
    rep = raw.data
    ctx._saw_run(rep, what, invoked=True)
    ctx.expect(rep.refusal is not None, clause_id, {"refused": [c.value for c in codes]},
               describe(raw), f"{what}: the pause must be refused")
    assert rep.refusal is not None
    ctx.expect_refused(rep.refusal, codes, clause_id, what)
    ctx.expect(not rep.pauses, "pause.refusal.before-mint", [], [q.name for q in rep.pauses],
               f"{what}: a refused pause must publish nothing")
    ctx.expect(rep.status != "paused", "pause.refusal.before-mint", "not paused",
               rep.status.value, f"{what}: after a refused pause the run is not paused")


@check("core/pause-unregistered",
       "a pause naming an unregistered interaction is refused before anything is minted",
       ["pause.interaction.registered", "pause.refusal.before-mint"])
def _unregistered(ctx: Ctx) -> None:
    raw = ctx.start_raw([effect("a"), ask("not-registered", {}), effect("b"), end()])
    _expect_pause_refused(ctx, raw, [E.INTERACTION_UNREGISTERED],
                          "pause.interaction.registered", "a pause of an unregistered name")
    ctx.expect_count("r1", "b", 0, "pause.refusal.before-mint",
                     "the run went past a refused pause")


@check("core/pause-payload",
       "a pause whose payload does not fit the payload schema is refused before minting",
       ["pause.payload.schema", "pause.refusal.before-mint"])
def _payload(ctx: Ctx) -> None:
    for i, bad in enumerate(([1, 2, 3], "text", 7)):
        raw = ctx.start_raw([ask("approve", bad), end()], f"r{i}")
        _expect_pause_refused(ctx, raw, [E.PAYLOAD_INVALID], "pause.payload.schema",
                              f"a pause with the payload {bad!r}")


@check("core/pause-tool-call",
       "a tool pause needs its tool call id and is published with it",
       ["pause.tool-call.bound", "pause.published", "pause.refusal.before-mint"])
def _tool_call(ctx: Ctx) -> None:
    raw = ctx.start_raw([ask("pay", {"amount": 10}), end()], "r0")
    _expect_pause_refused(ctx, raw, [E.TOOL_CALL_ID_MISSING], "pause.tool-call.bound",
                          "a tool pause without a tool call id")
    rep = ctx.start([ask("pay", {"amount": 10}, tool_call_id="call-7"), end()], "r1")
    p = only(rep.pauses, ctx, "pause.published")[0]
    ctx.expect(p.tool_call_id == "call-7", "pause.tool-call.bound", "call-7", p.tool_call_id,
               "the tool pause was not published with its tool call id")


@check("core/pause-checkpoint",
       "a pause with no checkpoint to bind it to is refused with checkpoint_missing before "
       "anything is minted, and the run does not go past it",
       ["pause.checkpoint.bound", "pause.refusal.before-mint"])
def _checkpoint(ctx: Ctx) -> None:
    raw = ctx.start_raw([effect("a"), ask("approve", {"amount": 5}, checkpoint="none"),
                         effect("b"), end()])
    _expect_pause_refused(ctx, raw, [E.CHECKPOINT_MISSING], "pause.checkpoint.bound",
                          "a pause bound to no checkpoint")
    ctx.expect_count("r1", "b", 0, "pause.refusal.before-mint",
                     "the run went past a refused pause")
    rep = ctx.start([ask("approve", {"amount": 5}), end()], "r2")  # the same, bound: fine
    only(rep.pauses, ctx, "pause.checkpoint.bound")


@check("core/pause-refusal-order",
       "pause checks run in the order registered, payload, checkpoint, tool call id",
       ["pause.refusal.order"])
def _pause_order(ctx: Ctx) -> None:
    raw = ctx.start_raw([ask("not-registered", [1]), end()], "r0")
    _expect_pause_refused(ctx, raw, [E.INTERACTION_UNREGISTERED], "pause.refusal.order",
                          "an unregistered pause with a bad payload")
    raw = ctx.start_raw([ask("pay", [1]), end()], "r1")
    _expect_pause_refused(ctx, raw, [E.PAYLOAD_INVALID], "pause.refusal.order",
                          "a tool pause with a bad payload and no tool call id")
    raw = ctx.start_raw([ask("pay", [1], checkpoint="none"), end()], "r2")
    _expect_pause_refused(ctx, raw, [E.PAYLOAD_INVALID], "pause.refusal.order",
                          "a tool pause with a bad payload, no checkpoint, no tool call id")
    raw = ctx.start_raw([ask("pay", {}, checkpoint="none"), end()], "r3")
    _expect_pause_refused(ctx, raw, [E.CHECKPOINT_MISSING], "pause.refusal.order",
                          "a tool pause with no checkpoint and no tool call id")


# -- the pause signal: user code between the pause point and the runner ---------------------

AROUND: Final[Handlers] = Handlers(catch_all="caught", cleanup="cleanup")
"""A pause point inside ``try / except <every ordinary error> / finally`` of user code."""


@check("core/catch-all-is-real",
       "user code's catch-all around a pause point catches an ordinary error (a refused "
       "pause) and the run goes on: the handlers the signal checks rely on are realised",
       ["pause.signal.base-exception"])
def _catch_all_real(ctx: Ctx) -> None:
    rep = ctx.start([ask("not-registered", {}, handlers=AROUND), effect("b"), end()],
                    status=None)
    ctx.expect(rep.status == "done", "pause.signal.base-exception", "done", rep.status.value,
               "the catch-all around a refused pause must swallow its error and let the run "
               "go on (else the signal checks prove nothing)")
    ctx.expect_count("r1", "caught", 1, "pause.signal.base-exception",
                     "the catch-all around a refused pause did not run")
    ctx.expect_count("r1", "cleanup", 1, "pause.signal.base-exception",
                     "the finally clause around the pause point did not run")
    ctx.expect_count("r1", "b", 1, "pause.signal.base-exception",
                     "the run did not go on after its catch-all swallowed the error")


@check("core/pause-signal-passes-user-code",
       "the pause signal passes user code's catch-all untouched, runs its finally clause, and "
       "reaches the runner, which alone turns it into the run's one paused event",
       ["pause.signal.base-exception", "pause.signal.single-catch", "run.paused.never-error"])
def _signal_passes(ctx: Ctx) -> None:
    raw = ctx.start_raw([effect("a"), ask("approve", {"amount": 5}, handlers=AROUND),
                         effect("b"), end()])
    rep: Any = ctx._unwrap(raw, "start r1", "pause.signal.single-catch")
    ctx.expect_count("r1", "caught", 0, "pause.signal.base-exception",
                     "user code's catch-all (every ordinary error) caught the pause signal")
    events = list(rep.events)
    ctx.expect(rep.status == "paused" and events.count("paused") == 1
               and events[-1:] == ["paused"] and "error" not in events,
               "pause.signal.single-catch", {"status": "paused", "events": "... paused, once"},
               {"status": rep.status.value, "events": events},
               "the pause signal must reach the runner and become exactly one paused event "
               "(not an error, not caught twice)")
    ctx.expect_count("r1", "cleanup", 1, "pause.signal.single-catch",
                     "the finally clause around the pause point must run once as the signal "
                     "passes it on the way to the runner")
    ctx._saw_run(rep, "start r1", invoked=True)
    p = only(rep.pauses, ctx, "pause.published")[0]
    ctx.phase(p)
    ctx.expect_count("r1", "b", 0, "pause.signal.base-exception",
                     "the run went past its pause point before the answer")
    answer_to_end(ctx, p)
    ctx.expect_count("r1", "caught", 0, "pause.signal.base-exception",
                     "the catch-all caught something on the way to the end")


@check("core/turn-write-failed",
       "when the turn-checkpoint write fails the pause stays paused, unresumable, and nothing "
       "continues",
       ["turn.write-failed.stays-paused", "turn.resumable.earned", "effect.refusal.no-effect",
        "lifecycle.refusal.no-change"])
def _write_failed(ctx: Ctx) -> None:
    rep = ctx.start([effect("a"), ask("approve", checkpoint_write="fail"), effect("b"), end()])
    p = only(rep.pauses, ctx, "turn.write-failed.stays-paused")[0]
    ctx.expect(not p.resumable, "turn.resumable.earned", False, p.resumable,
               "a pause whose checkpoint write failed was published resumable")
    ctx.expect_phase(p, "paused", "turn.write-failed.stays-paused")
    for _ in range(2):
        ctx.refuse_resume(p, [E.NOT_RESUMABLE], "turn.write-failed.stays-paused",
                          "a resume of a pause whose turn was never recorded")
        ctx.expect_phase(p, "paused", "lifecycle.refusal.no-change")
        ctx.expect_count("r1", "b", 0, "effect.refusal.no-effect")
    ctx.refuse_resume(p, [E.RESPONSE_INVALID], "resume.refusal.order",
                      "an invalid response to an unrecorded pause", response=[1])


@check("core/authority",
       "responder authority is checked at resume time; an unauthorised answer changes nothing",
       ["resume.authority", "resume.refusal.keeps-pause", "effect.refusal.no-effect",
        "lifecycle.refusal.no-change"])
def _authority(ctx: Ctx) -> None:
    p = basic(ctx, name="restricted")
    for who in ("person", "mallory", ""):
        ctx.refuse_resume(p, [E.RESPONDER_UNAUTHORIZED], "resume.authority",
                          f"an answer from {who!r}", responder=who)
        ctx.expect_phase(p, "resumable", "lifecycle.refusal.no-change")
        ctx.expect_count("r1", "b", 0, "effect.refusal.no-effect")
    ctx.resume(p, YES, responder=OPERATOR, clause_id="resume.refusal.keeps-pause")
    ctx.expect_count("r1", "b", 1, "resume.refusal.keeps-pause")


@check("core/resume-refusal-order",
       "resume checks run in the fixed order: authority before the response schema, the "
       "schema before the decided state",
       ["resume.refusal.order"])
def _resume_order(ctx: Ctx) -> None:
    p = basic(ctx, name="restricted")
    ctx.refuse_resume(p, [E.RESPONDER_UNAUTHORIZED], "resume.refusal.order",
                      "an unauthorised, invalid answer", response=[1], responder="mallory")
    q = ctx.start([ask("approve", checkpoint_write="fail"), end()], "r2").pauses[0]
    ctx.refuse_resume(q, [E.RESPONSE_INVALID], "resume.refusal.order",
                      "an invalid answer to an unrecorded pause", response=[1])


@check("core/run-paused-never-error",
       "refused answers never turn a paused run into an error; it ends done",
       ["run.paused.never-error", "run.events.single-terminal", "resume.refusal.keeps-pause"])
def _never_error(ctx: Ctx) -> None:
    p = basic(ctx, name="restricted")
    ctx.refuse_resume(p, [E.RESPONSE_INVALID], "resume.response.schema", response="no",
                      responder=OPERATOR)
    ctx.refuse_resume(p, [E.RESPONDER_UNAUTHORIZED], "resume.authority", responder="x")
    data = ctx.resume(p, YES, responder=OPERATOR)
    ctx.expect(data.run.status == "done" and "error" not in data.run.events,
               "run.paused.never-error", "done without error",
               {"status": data.run.status.value, "events": data.run.events},
               "a paused run ended in error")


@check("core/transition-absorbing",
       "a consumed pause stays consumed whatever happens next",
       ["lifecycle.terminal.absorbing", "lifecycle.transition.table", "lifecycle.states"])
def _absorbing(ctx: Ctx) -> None:
    p = basic(ctx)
    ctx.expect_phase(p, "resumable", "lifecycle.states")
    ctx.resume(p, YES)
    for response in (YES, NO, [1]):
        ctx.resume_raw(p, response)
        ctx.expect_phase(p, "consumed", "lifecycle.terminal.absorbing")


@check("core/outstanding-live",
       "a run publishes exactly its live pauses: answered ones drop out, unrecorded ones stay",
       ["lifecycle.outstanding.live", "pause.published"])
def _outstanding(ctx: Ctx) -> None:
    rep = ctx.start([effect("a"), ask("approve"), effect("b"), ask("confirm"), effect("c"),
                     ask("choose", checkpoint_write="fail"), end()])
    first = only(rep.pauses, ctx, "lifecycle.outstanding.live")[0]
    run = ctx.resume(first, YES).run
    ids = [p.interrupt_id for p in run.pauses]
    ctx.expect(first.interrupt_id not in ids and len(ids) == 1, "lifecycle.outstanding.live",
               "only the next (live) pause", [p.name for p in run.pauses],
               "a consumed pause is still published as outstanding")
    second = run.pauses[0]
    run = ctx.resume(second, YES).run
    names = [p.name for p in run.pauses]
    ctx.expect(names == ["choose"], "lifecycle.outstanding.live", ["choose"], names,
               "a paused (unrecorded) pause is live and must be published; consumed ones not")
    ctx.expect_phase(run.pauses[0], "paused", "lifecycle.outstanding.live")


# == tokens ==================================================================================


@check("tokens/integrity",
       "a token with any character changed, removed or added is refused and changes nothing",
       ["token.integrity", "resume.token.authentic", "lifecycle.refusal.no-change",
        "effect.refusal.no-effect", "resume.refusal.keeps-pause"])
def _integrity(ctx: Ctx) -> None:
    p = basic(ctx)
    t = p.token
    variants = {f"char {i} changed": alter(t, i)
                for i in sorted({0, len(t) // 4, len(t) // 2, 3 * len(t) // 4, len(t) - 2,
                                 len(t) - 1})}
    variants.update({"last char removed": t[:-1], "a char appended": t + "A",
                     "first char removed": t[1:]})
    for what, bad in variants.items():
        if bad == t:
            continue
        ctx.refuse_resume(p, TOKEN_ERRORS, "token.integrity", f"a token with {what}",
                          token=bad)
        ctx.expect_phase(p, "resumable", "lifecycle.refusal.no-change")
        ctx.expect_count("r1", "b", 0, "effect.refusal.no-effect")
    ctx.resume(p, YES, clause_id="resume.refusal.keeps-pause")


@check("tokens/garbage",
       "garbage, empty, non-ASCII and oversized tokens are refused as malformed or invalid",
       ["token.parse.strict", "resume.token.authentic", "input.bounded",
        "lifecycle.refusal.no-change"])
def _garbage(ctx: Ctx) -> None:
    p = basic(ctx)
    for what, bad in (("an empty token", ""), ("a one-character token", "x"),
                      ("a non-ASCII token", "pp1.\u00e9t\u00e9.x.y"),
                      ("a 10 000-character token", "A" * 10_000),
                      ("a token with whitespace", " " + p.token),
                      ("a token of dots", "....")):
        ctx.refuse_resume(p, TOKEN_ERRORS, "token.parse.strict", what, token=bad)
    ctx.expect_phase(p, "resumable", "lifecycle.refusal.no-change")


@check("tokens/binds-one-pause",
       "a token redeems only the pause it was minted for; spliced tokens are refused",
       ["resume.token.binds-one-pause", "token.integrity", "lifecycle.refusal.no-change"])
def _binds_one(ctx: Ctx) -> None:
    p = basic(ctx, "r1")
    q = basic(ctx, "r2")
    a, b = p.token.split("."), q.token.split(".")
    if len(a) == len(b) >= 2:
        for i in range(len(a)):
            spliced = ".".join(a[:i] + [b[i]] + a[i + 1:])
            if spliced not in (p.token, q.token):
                ctx.refuse_resume(p, TOKEN_ERRORS + (E.BINDING_MISMATCH,),
                                  "resume.token.binds-one-pause",
                                  f"a token spliced from two tokens (part {i})",
                                  token=spliced)
    ctx.resume(p, YES)
    ctx.expect_phase(q, "resumable", "resume.token.binds-one-pause",
                     "redeeming one pause's token changed another pause")
    ctx.expect_count("r2", "b", 0, "resume.token.binds-one-pause")
    ctx.refuse_resume(q, [E.BINDING_MISMATCH] + list(TOKEN_ERRORS),
                      "resume.token.binds-one-pause",
                      "r2's token presented for run r1", run_id="r1")
    ctx.expect_phase(q, "resumable", "lifecycle.refusal.no-change")


@check("tokens/scope",
       "a token presented from another scope is refused and changes nothing",
       ["resume.binding.scope", "lifecycle.refusal.no-change", "effect.refusal.no-effect",
        "resume.refusal.keeps-pause"])
def _scope(ctx: Ctx) -> None:
    p = basic(ctx)
    for other in ("scope-2", "", SCOPE.upper()):
        ctx.refuse_resume(p, [E.SCOPE_MISMATCH], "resume.binding.scope",
                          f"a resume from scope {other!r}", scope=other)
        ctx.expect_phase(p, "resumable", "lifecycle.refusal.no-change")
        ctx.expect_count("r1", "b", 0, "effect.refusal.no-effect")
    ctx.resume(p, YES, clause_id="resume.refusal.keeps-pause")


@check("tokens/refusal-order",
       "authenticity is checked before scope, scope before authority and the response",
       ["resume.refusal.order", "resume.token.authentic", "resume.binding.scope"])
def _token_order(ctx: Ctx) -> None:
    p = basic(ctx, name="restricted")
    ctx.refuse_resume(p, TOKEN_ERRORS, "resume.refusal.order",
                      "an altered token from another scope", token=alter(p.token, -1),
                      scope="scope-2")
    ctx.refuse_resume(p, [E.SCOPE_MISMATCH], "resume.refusal.order",
                      "a cross-scope, unauthorised, invalid answer", scope="scope-2",
                      responder="mallory", response=[1])


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


def _b64(obj: dict[str, Any]) -> str:
    text = json.dumps(obj, sort_keys=True, separators=(",", ":"))
    return base64.urlsafe_b64encode(text.encode()).rstrip(b"=").decode()


@check("tokens/pp1-claims",
       "a pp1 token carries every claim of the pause it was minted for",
       ["token.claims"])
def _claims(ctx: Ctx) -> None:
    rep = ctx.start([ask("pay", {"amount": 3}, tool_call_id="call-1"), end()],
                    session="sess-9", scope="scope-9")
    p = rep.pauses[0]
    parsed = _pp1_parts(p.token)
    if parsed is None:
        raise CheckSkipped("the token is not in the pp1 format; its claims are opaque")
    claims = parsed[1]
    want = {"interrupt_id": p.interrupt_id, "run_id": "r1", "root_run_id": "r1",
            "session_id": "sess-9", "scope": "scope-9", "name": "pay",
            "tool_call_id": "call-1", "expires_at": p.expires_at, "v": 1}
    fields = {"checkpoint_id", "issued_at", "payload_digest", "thread_id", *want}
    ctx.expect(set(claims) == fields, "token.claims", sorted(fields), sorted(claims),
               "the token does not carry exactly the contract's claims")
    got = {k: claims.get(k) for k in want}
    ctx.expect(got == want, "token.claims", want, got, "a claim disagrees with the pause")


@check("tokens/pp1-key-id",
       "a pp1 token naming a key id outside the key ring is refused as invalid",
       ["token.key-id", "token.parse.strict"])
def _key_id(ctx: Ctx) -> None:
    p = basic(ctx)
    parsed = _pp1_parts(p.token)
    if parsed is None:
        raise CheckSkipped("the token is not in the pp1 format; its key id is opaque")
    header, _ = parsed
    parts = p.token.split(".")
    forged = ".".join([parts[0], _b64({**header, "kid": "no-such-key"}), *parts[2:]])
    ctx.refuse_resume(p, [E.TOKEN_INVALID], "token.key-id", "a token with an unknown key id",
                      token=forged)
    with_alg = ".".join([parts[0], _b64({**header, "alg": "none"}), parts[2], ""])
    ctx.refuse_resume(p, [E.TOKEN_MALFORMED], "token.parse.strict",
                      "a token whose header names an algorithm and has no signature",
                      token=with_alg)
    ctx.expect_phase(p, "resumable", "lifecycle.refusal.no-change")


@check("tokens/rotation-drain",
       "after a rotation older tokens still resume; a key is retired only once no outstanding "
       "pause carries a token it signed, and its tokens are refused afterwards",
       ["token.rotation.drain", "resume.token.authentic", "lifecycle.refusal.no-change"])
def _rotation_drain(ctx: Ctx) -> None:
    first = basic(ctx, "r0")  # signed by the key the instance started with
    old = ctx.rotate_key()
    p, q = basic(ctx, "r1"), basic(ctx, "r2")  # signed by old
    new = ctx.rotate_key()
    ctx.expect(new != old, "token.rotation.drain", "a new key id", new,
               "rotate_key answered the key id it had answered before")
    ctx.resume(first, YES, clause_id="token.rotation.drain")  # two rotations later

    def retire_refused(kid: str, codes: list[E], what: str) -> None:
        ctx.expect_refused(ctx.retire_key_raw(kid), codes, "token.rotation.drain", what)

    retire_refused(old, [E.KEY_NOT_DRAINED],
                   "retiring a key while two pauses it signed are outstanding")
    ctx.expect_phase(p, "resumable", "lifecycle.refusal.no-change")
    ctx.expect_phase(q, "resumable", "lifecycle.refusal.no-change")
    ctx.resume(p, YES, clause_id="token.rotation.drain")
    retire_refused(old, [E.KEY_NOT_DRAINED],
                   "retiring a key while one pause it signed is still outstanding")
    s = basic(ctx, "r3")  # signed by new: no concern of old's drain
    ctx.resume(q, YES, clause_id="token.rotation.drain")
    ctx.retire_key(old)
    ctx.refuse_resume(p, [E.TOKEN_INVALID], "token.rotation.drain",
                      "a replay presenting a token of the retired key")
    ctx.expect_phase(p, "consumed", "lifecycle.refusal.no-change")
    retire_refused(old, [E.KEY_UNKNOWN], "retiring a key already retired")
    retire_refused("no-such-key", [E.KEY_UNKNOWN], "retiring a key id never in the ring")
    retire_refused(new, [E.KEY_NOT_DRAINED],
                   "retiring the signing key while a pause it signed is outstanding")
    ctx.resume(s, YES, clause_id="token.rotation.drain")
    retire_refused(new, [E.KEY_NOT_DRAINED],
                   "retiring the signing key (it keeps signing, so it is never drained)")
    ctx.expect_count("r3", "b", 1, "resume.continuation.recorded-turn")


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
                          "an altered token for an expired pause", token=alter(p.token, -1))


# == replay ==================================================================================


@check("replay/same-response",
       "answering a consumed pause with the same response returns the first result and runs "
       "nothing",
       ["replay.same-response", "effect.at-most-once", "resume.consume.at-most-once"])
def _replay(ctx: Ctx) -> None:
    p = basic(ctx)
    first = ctx.resume(p, {"approved": True, "note": "ok"})
    for _ in range(2):
        again = ctx.resume(p, {"note": "ok", "approved": True}, replayed=True)
        ctx.expect(again.run.status == first.run.status, "replay.same-response",
                   first.run.status.value, again.run.status.value,
                   "a replay must return the first result")
        ctx.expect_count("r1", "b", 1, "effect.at-most-once",
                         "a replay ran the continuation again")
    ctx.expect_phase(p, "consumed", "replay.same-response")


@check("replay/next-question-pending",
       "a repeated answer (a double click) while the run waits on its next question is a "
       "replay: the next question stays pending, unanswered",
       ["replay.same-response", "effect.at-most-once"])
def _replay_next_pending(ctx: Ctx) -> None:
    rep = ctx.start([ask("approve"), effect("b"), ask("confirm"), effect("c"), end()])
    p = only(rep.pauses, ctx, "pause.published")[0]
    q = only(ctx.resume(p, YES).run.pauses, ctx, "resume.continuation.recorded-turn")[0]
    ctx.expect(q.name == "confirm", "resume.continuation.recorded-turn", "confirm", q.name,
               "after the first answer the run must wait on its next question")
    again = ctx.resume(p, YES, replayed=True)
    ctx.expect(not again.run.pauses or [x.interrupt_id for x in again.run.pauses]
               == [q.interrupt_id], "replay.same-response", [q.interrupt_id],
               [x.interrupt_id for x in again.run.pauses],
               "a replay must leave the run waiting on its next question")
    ctx.expect_count("r1", "c", 0, "replay.same-response",
                     "the repeated answer to the first question answered the next one")
    ctx.expect_phase(q, "resumable", "replay.same-response")
    ctx.expect_count("r1", "b", 1, "effect.at-most-once", "a replay ran the effect again")
    answer_to_end(ctx, q, after="c")


@check("replay/different-response",
       "answering a consumed pause with a different response is a conflict",
       ["replay.different-response.conflict", "lifecycle.refusal.no-change",
        "effect.at-most-once"])
def _conflict(ctx: Ctx) -> None:
    p = basic(ctx)
    ctx.resume(p, YES)
    for other in (NO, {"approved": True, "extra": 1}):
        ctx.refuse_resume(p, [E.RESPONSE_CONFLICT], "replay.different-response.conflict",
                          f"a second answer {other!r}", response=other)
        ctx.expect_count("r1", "b", 1, "effect.at-most-once")
    ctx.expect_phase(p, "consumed", "lifecycle.refusal.no-change")
    ctx.resume(p, YES, replayed=True)


@check("replay/after-expiry",
       "a pause consumed before its expiry still replays after it",
       ["replay.same-response", "resume.refusal.order", "lifecycle.terminal.absorbing"],
       needs=[Group.EXPIRY])
def _replay_after_expiry(ctx: Ctx) -> None:
    p = basic(ctx)
    ctx.resume(p, YES)
    ctx.advance(ctx.ttl_ms * 2)
    ctx.resume(p, YES, replayed=True)
    ctx.refuse_resume(p, [E.RESPONSE_CONFLICT], "replay.different-response.conflict",
                      "a different answer after expiry", response=NO)
    ctx.expect_phase(p, "consumed", "lifecycle.terminal.absorbing")


# == cancel ==================================================================================


@check("cancel/distinct",
       "a cancelled pause's token is refused with pause_cancelled and nothing continues",
       ["cancel.distinct", "effect.refusal.no-effect", "lifecycle.terminal.absorbing"])
def _cancel(ctx: Ctx) -> None:
    p = basic(ctx)
    data = ctx.cancel("r1", clause_id="cancel.distinct")
    ctx.expect(data.run.status == "cancelled", "cancel.distinct", "cancelled",
               data.run.status.value, "the run is not cancelled")
    ctx.expect(not data.run.pauses, "cancel.distinct", [],
               [q.interrupt_id for q in data.run.pauses], "a cancelled run has live pauses")
    ctx.expect_phase(p, "cancelled", "cancel.distinct")
    for response in (YES, NO):
        ctx.refuse_resume(p, [E.PAUSE_CANCELLED], "cancel.distinct",
                          "an answer to a cancelled pause", response=response)
    ctx.expect_count("r1", "b", 0, "effect.refusal.no-effect")
    ctx.expect_phase(p, "cancelled", "lifecycle.terminal.absorbing")


@check("cancel/after-consume",
       "cancelling after the answer leaves the consumed pause consumed",
       ["lifecycle.terminal.absorbing", "cancel.distinct"])
def _cancel_after(ctx: Ctx) -> None:
    rep = ctx.start([ask("approve"), ask("confirm"), end()])
    p = rep.pauses[0]
    q = ctx.resume(p, YES).run.pauses[0]
    ctx.cancel("r1")
    ctx.expect_phase(p, "consumed", "lifecycle.terminal.absorbing")
    ctx.expect_phase(q, "cancelled", "cancel.distinct")


@check("cancel/propagates",
       "cancelling a run cancels the live pauses of its children and grandchildren",
       ["cancel.propagates", "cancel.distinct", "effect.refusal.no-effect"])
def _propagates(ctx: Ctx) -> None:
    ctx.start([ask("approve"), end()], "parent")
    child = ctx.start([ask("confirm"), effect("c"), end()], "child", parent="parent").pauses[0]
    grand = ctx.start([ask("choose"), effect("g"), end()], "grandchild",
                      parent="child").pauses[0]
    other = ctx.start([ask("approve"), effect("o"), end()], "unrelated").pauses[0]
    ctx.cancel("parent")
    for p, key in ((child, "c"), (grand, "g")):
        ctx.expect_phase(p, "cancelled", "cancel.propagates",
                         f"{p.run_id}'s pause survived its ancestor's cancellation")
        ctx.refuse_resume(p, [E.PAUSE_CANCELLED], "cancel.propagates",
                          f"an answer to {p.run_id}'s pause")
        ctx.expect_count(p.run_id, key, 0, "effect.refusal.no-effect")
    ctx.expect_phase(other, "resumable", "cancel.propagates",
                     "cancelling one run cancelled an unrelated run")


@check("cancel/expiry-decided-once",
       "expiry and cancellation are decided once: the loser is told which state won",
       ["race.decided-once", "lifecycle.terminal.absorbing"],
       needs=[Group.CANCEL, Group.EXPIRY])
def _decided_once(ctx: Ctx) -> None:
    p = basic(ctx, "r1")
    ctx.advance(ctx.ttl_ms)
    ctx.cancel("r1")
    ctx.expect_phase(p, "expired", "race.decided-once",
                     "cancelling changed an already expired pause")
    ctx.refuse_resume(p, [E.PAUSE_EXPIRED], "race.decided-once", "an answer after both")
    q = basic(ctx, "r2")
    ctx.cancel("r2")
    ctx.advance(ctx.ttl_ms * 2)
    ctx.expect_phase(q, "cancelled", "race.decided-once",
                     "expiry changed an already cancelled pause")
    ctx.refuse_resume(q, [E.PAUSE_CANCELLED], "race.decided-once", "an answer after both")


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


def _crash_in_effect(ctx: Ctx, fault: str) -> PublishedPause:
    rep = ctx.start([effect("a", fault), ask("approve"), effect("b"), end()], status=None)
    ctx.expect(rep.status in ("stopped", "running"), "effect.unknown-outcome", "stopped",
               rep.status.value, "the process died inside the effect, so the run stopped")
    applied = 1 if fault == "crash_after_apply" else 0
    ctx.expect_count("r1", "a", applied, "effect.journal.bracket")
    data = ctx.crash_restart(clause_id="effect.unknown-outcome")
    rec = [p for p in data.pauses if p.run_id == "r1" and p.kind == "recovery"]
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


@check("unknown/crash-after-apply",
       "an effect that crashed after applying is surfaced, never retried, reconciled as "
       "applied, and then skipped",
       ["effect.unknown-outcome", "resume.unknown-outcome.blocks", "effect.reconcile",
        "effect.journal.bracket", "effect.at-most-once"])
def _after_apply(ctx: Ctx) -> None:
    p = _crash_in_effect(ctx, "crash_after_apply")
    for _ in range(2):
        ctx.refuse_resume(p, [E.OUTCOME_UNKNOWN], "resume.unknown-outcome.blocks",
                          "a resume over an unknown outcome")
        ctx.expect_count("r1", "a", 1, "resume.unknown-outcome.blocks")
    phase = ctx.reconcile(p, "applied")
    ctx.expect(phase == "resumable", "effect.reconcile", "resumable", phase,
               "a reconciled recovery pause becomes resumable")
    data = ctx.resume(p, {})
    ctx.expect_count("r1", "a", 1, "effect.at-most-once",
                     "an effect reconciled as applied ran again")
    ctx.expect(data.run.status == "paused", "effect.reconcile", "paused",
               data.run.status.value, "after reconciliation the run continues to its next step")
    q = only(data.run.pauses, ctx, "effect.reconcile")[0]
    ctx.resume(q, YES)
    ctx.expect_count("r1", "b", 1, "resume.continuation.recorded-turn")


@check("unknown/crash-before-apply",
       "an effect that crashed before applying is reconciled as not applied and then runs once",
       ["effect.unknown-outcome", "effect.reconcile", "effect.journal.bracket",
        "effect.at-most-once", "resume.unknown-outcome.blocks"])
def _before_apply(ctx: Ctx) -> None:
    p = _crash_in_effect(ctx, "crash_before_apply")
    ctx.refuse_resume(p, [E.OUTCOME_UNKNOWN], "resume.unknown-outcome.blocks",
                      "a resume over an unknown outcome")
    ctx.expect_count("r1", "a", 0, "resume.unknown-outcome.blocks")
    ctx.reconcile(p, "not_applied")
    ctx.resume(p, {})
    ctx.expect_count("r1", "a", 1, "effect.reconcile",
                     "an effect reconciled as not applied must run (once)")


@check("unknown/reconcile-needs-doubt",
       "reconciling a pause with no outcome in doubt is not a transition of the table",
       ["lifecycle.transition.table", "effect.reconcile", "lifecycle.refusal.no-change"])
def _reconcile_invalid(ctx: Ctx) -> None:
    p = basic(ctx)
    ctx.expect_refused(ctx.reconcile_raw(p, "applied"), [E.INVALID_TRANSITION],
                       "lifecycle.transition.table", "reconciling a resumable pause")
    ctx.expect_phase(p, "resumable", "lifecycle.refusal.no-change")
    ctx.resume(p, YES)
    ctx.expect_refused(ctx.reconcile_raw(p, "not_applied"),
                       [E.PAUSE_CONSUMED, E.INVALID_TRANSITION],
                       "lifecycle.terminal.absorbing", "reconciling a consumed pause")
    ctx.expect_phase(p, "consumed", "lifecycle.terminal.absorbing")


@check("unknown/refusal-order",
       "over an unknown outcome the response is still validated first",
       ["resume.refusal.order", "resume.unknown-outcome.blocks"])
def _unknown_order(ctx: Ctx) -> None:
    p = _crash_in_effect(ctx, "crash_after_apply")
    ctx.refuse_resume(p, [E.RESPONSE_INVALID], "resume.refusal.order",
                      "an invalid answer over an unknown outcome", response=[1])
    ctx.refuse_resume(p, [E.OUTCOME_UNKNOWN], "resume.unknown-outcome.blocks",
                      "a valid answer over an unknown outcome")


@check("unknown/expires",
       "a pause waiting on an unknown outcome still expires",
       ["expiry.transition", "effect.unknown-outcome"])
def _unknown_expires(ctx: Ctx) -> None:
    p = _crash_in_effect(ctx, "crash_after_apply")
    ctx.advance(ctx.ttl_ms)
    ctx.expect_phase(p, "expired", "expiry.transition")


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


def _race_round(ctx: Ctx, run_id: str, same: bool, n: int = 4) -> None:
    p = basic(ctx, run_id)
    responses = [YES if same else {"approved": True, "n": i} for i in range(n)]
    results = ctx.race([ctx.resume_args(p, r) for r in responses])
    firsts = [r for r in results if isinstance(r, Ok) and not r.data.replayed]
    ctx.expect_also(len(firsts) == 1, "resume.consume.single-winner", "exactly one winner",
                    [describe(r) for r in results],
                    f"{len(firsts)} of {n} racing resumes consumed the pause")
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


def _did_not_pause(ctx: Ctx, rep: Any, status: str, what: str) -> None:
    got = {"status": rep.status.value, "pauses": [p.name for p in rep.pauses],
           "events": rep.events}
    ctx.expect(rep.status == status and not rep.pauses and "paused" not in rep.events,
               "gate.separate", {"status": status, "pauses": [], "events": "no paused event"},
               got, f"{what} paused the run (or did not end it {status})")


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


# == wiring (optional operation) =============================================================


@check("wiring/consistent",
       "a trial wiring of durable checkpoints with a volatile ledger, or of half a token "
       "codec, is refused with wiring_invalid; consistent wirings are accepted",
       ["wiring.consistent"])
def _wiring_consistent(ctx: Ctx) -> None:
    for parts, what in ((("durable", "volatile", "none"), "durable checkpoints, volatile ledger"),
                        (("durable", "durable", "encoder_only"), "a token encoder alone"),
                        (("volatile", "volatile", "decoder_only"), "a token decoder alone")):
        ctx.expect_refused(ctx.wiring_raw(*parts), [E.WIRING_INVALID], "wiring.consistent",
                           f"wiring {what}")
    for parts, what in ((("durable", "durable", "both"), "durable parts, a whole codec"),
                        (("volatile", "volatile", "none"), "volatile parts"),
                        (("volatile", "durable", "none"), "volatile checkpoints, durable ledger")):
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


# == status query (optional operation) =======================================================


@check("status/suspended-or-partial",
       "the status query tells a safely suspended run (every live pause resumable) from a "
       "partially complete one (a pause whose turn write failed), and both from done and "
       "cancelled",
       ["status.distinguishes"])
def _status_distinguishes(ctx: Ctx) -> None:
    p = basic(ctx, "r1")
    ctx.expect_status("r1", "safely_suspended",
                      "a run paused with its turn recorded is safely suspended")
    ctx.start([effect("a"), ask("approve", checkpoint_write="fail"), effect("b"), end()], "r2")
    ctx.expect_status("r2", "partially_complete",
                      "a run whose pause's turn write failed is partially complete, not safely "
                      "suspended")
    ctx.expect_status("r1", "safely_suspended",
                      "another run's failed turn write changed this run's status")
    ctx.resume(p, YES)
    ctx.expect_status("r1", "done", "a run that ran to its end is done")
    ctx.start([effect("c"), end()], "r3", status="done")
    ctx.expect_status("r3", "done", "a run that never paused and ended is done")
    ctx.expect_status("r2", "partially_complete",
                      "answering another run changed this run's status")
    if ctx.needs_claim(Group.MULTI_PAUSE):
        rep = ctx.start([ask(names=["approve", "confirm"]), effect("m"), end()], "r4")
        ctx.resume(only(rep.pauses, ctx, "multi.independent", 2)[0], YES)
        ctx.expect_status("r4", "safely_suspended",
                          "one of two questions answered, the other resumable: the run is "
                          "still safely suspended")
    if ctx.needs_claim(Group.CANCEL):
        ctx.cancel("r2")
        ctx.expect_status("r2", "cancelled", "a cancelled run is cancelled")


@check("status/unknown-outcome",
       "a run stopped inside an effect waits on an unknown outcome until it is reconciled; "
       "then it is safely suspended, and done after its last answer",
       ["status.distinguishes"], needs=[Group.UNKNOWN_OUTCOME])
def _status_unknown(ctx: Ctx) -> None:
    p = _crash_in_effect(ctx, "crash_after_apply")
    ctx.expect_status("r1", "waiting_unknown_outcome",
                      "after a crash inside an effect the run waits on an unknown outcome")
    ctx.reconcile(p, "applied")
    ctx.expect_status("r1", "safely_suspended",
                      "once the outcome is reconciled the recovery pause is resumable")
    data = ctx.resume(p, {})
    q = only(data.run.pauses, ctx, "effect.reconcile")[0]
    ctx.expect_status("r1", "safely_suspended", "the run paused at its next question")
    ctx.resume(q, YES)
    ctx.expect_status("r1", "done", "a run that ran to its end is done")
