"""The checks of the ``core`` clause group."""


from __future__ import annotations

from typing import Any, Final

from pausepoint.core.canonical import canonical_json
from pausepoint.core.clause_ids import ClauseId
from pausepoint.core.clauses import ErrorCode as E
from pausepoint.core.clauses import Group
from pausepoint_conformance.protocol.wire import Handlers, Ok, PublishedPause, Refused
from pausepoint_conformance.suite.checks.common import (
    DEEP,
    HUGE,
    LONE_SURROGATE,
    answer_to_end,
    basic,
    only,
)
from pausepoint_conformance.suite.framework import (
    NO,
    OPERATOR,
    YES,
    Ctx,
    ask,
    check,
    describe,
    effect,
    end,
)

BOUNDS: Final[dict[str, int]] = {"depth": 32, "bytes": 65_536}
"""The bounds of payloads and responses (spec/adapter-protocol.md, `input.bounded`)."""

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
    if ctx.needs_claim(Group.EXPIRY):  # a deadline is the expiry group's: unclaimed, not failed
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
    _refused_then_answered(ctx, ([1, 2], "yes", None, 3), "resume.response.schema", "",
                           YES, "resume.refusal.keeps-pause")


def _refused_then_answered(ctx: Ctx, bads: Any, clause_id: ClauseId, note: str, answer: Any,
                           answered_clause: ClauseId) -> None:
    """Each of ``bads`` refused with response_invalid, changing nothing; then ``answer``
    accepted and the run continued once."""
    p = basic(ctx)
    for bad in bads:
        ctx.refuse_resume(p, [E.RESPONSE_INVALID], clause_id,
                          f"a resume with the response {bad!r}{note}", response=bad)
        ctx.expect_phase(p, "resumable", "lifecycle.refusal.no-change")
        ctx.expect_count("r1", "b", 0, "effect.refusal.no-effect")
    ctx.resume(p, answer, clause_id=answered_clause)
    ctx.expect_count("r1", "b", 1, answered_clause)


@check("core/response-strict",
       "a response is validated strictly: a string, number or null where approve's answer "
       "needs a boolean is refused, not coerced, and the pause stays answerable",
       ["resume.response.strict", "resume.response.schema", "lifecycle.refusal.no-change",
        "effect.refusal.no-effect"])
def _response_strict(ctx: Ctx) -> None:
    _refused_then_answered(
        ctx, ({"approved": "false"}, {"approved": "true"}, {"approved": 0}, {"approved": 1},
              {"approved": None}, {"approved": [False]}, {"note": "approved"}),
        "resume.response.strict", " (approve needs a JSON boolean)", NO,
        "resume.response.strict")


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


def nested(depth: int) -> dict[str, Any]:
    """An answer to ``approve`` (``approved`` a boolean, other keys free) nested exactly
    ``depth`` levels deep, as the protocol counts them (a scalar 0, ``[]`` and ``{}`` 1, each
    enclosing array or object one more)."""
    inner: Any = []
    for _ in range(depth - 2):
        inner = [inner]
    return {"approved": True, "deep": inner}


def sized(n: int) -> dict[str, Any]:
    """An answer to ``approve`` whose canonical text is exactly ``n`` bytes long."""
    empty = {"approved": True, "text": ""}
    return {"approved": True, "text": "x" * (n - len(canonical_json(empty).encode()))}


@check("core/input-edge",
       "a payload or response exactly at the size or depth bound is accepted, one byte or "
       "one level past it is refused",
       ["input.bounded", "pause.payload.schema", "resume.response.schema"])
def _edge(ctx: Ctx) -> None:
    depth, size = BOUNDS["depth"], BOUNDS["bytes"]
    edge = {f"{depth} levels deep": nested(depth), f"{size} bytes": sized(size)}
    past = {f"{depth + 1} levels deep": nested(depth + 1),
            f"{size + 1} bytes": sized(size + 1)}
    for i, (what, value) in enumerate(edge.items()):
        rep = ctx.start([ask("approve", value), effect("b"), end()], f"edge{i}",
                        clause_id="input.bounded")
        p = only(rep.pauses, ctx, "input.bounded", what=f"a payload {what} must pause")[0]
        for over, bad in past.items():
            ctx.refuse_resume(p, [E.RESPONSE_INVALID], "input.bounded",
                              f"a response {over}", response=bad)
        ctx.resume(p, value, clause_id="input.bounded")
        ctx.expect_count(f"edge{i}", "b", 1, "input.bounded",
                         f"the run answered with a response {what} did not go on")
    for i, (what, bad) in enumerate(past.items()):
        raw = ctx.start_raw([ask("approve", bad), end()], f"past{i}")
        _expect_pause_refused(ctx, raw, [E.PAYLOAD_INVALID], "input.bounded",
                              f"a payload {what}")


def _expect_pause_refused(ctx: Ctx, raw: Any, codes: list[E], clause_id: ClauseId,
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
