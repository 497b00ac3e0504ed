"""Tests of the pause service over real Ed25519 keys and both the memory and SQLite stores.

Several checks are written as ``check_*`` functions taking an :class:`Env`: the tests here run
them on the real service, and ``test_broken_variants.py`` runs the same functions on services
with one piece swapped for a broken one, to show that each check can fail.  A check signals a
violation with ``AssertionError`` and nothing else.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import attrs
import pydantic
import pytest

from doubles import FailingCheckpoints, refused
from pausepoint.core import lifecycle as lc
from pausepoint.core.canonical import canonical_json, digest
from pausepoint.core.clauses import ErrorCode, clause
from pausepoint.core.errors import PausepointError
from pausepoint.core.gate import Decision, ThresholdGate
from pausepoint.core.lifecycle import PauseState, Phase
from pausepoint.core.ports import AuditEvent, Claims, PauseRecord, RunStatus
from pausepoint.core.registry import Interaction
from pausepoint.core.tokens import Ed25519Key, KeyRing, b64url_decode
from pausepoint.engine.clock import ManualClock
from pausepoint.engine.compose import AskUserTool, compose
from pausepoint.engine.run import (
    EventKind,
    InvocationPaused,
    PauseBinding,
    PendingInterrupt,
    RunEvent,
    RunIdentity,
    Runner,
    current_run_binding,
)
from pausepoint.engine.service import (
    PauseService,
    ResumeOutcome,
    ResumeRequest,
    RunView,
    run_record,
)
from pausepoint.engine.sinks import MemoryAudit
from pausepoint.stores import MemoryStore, PostgresStore, SqliteStore, StoreBundle
from pausepoint.stores.base import PortBundle
from pausepoint.stores.sql import TABLES
from pausepoint_conformance.faults.testbed import StoreSpec, drop, fresh_sqlite
from pg import pg_spec

E = ErrorCode
TTL = 10_000
T0 = 1_000
TOKEN_REFUSALS = frozenset({E.TOKEN_MALFORMED, E.TOKEN_INVALID})

# -- wiring for the tests --------------------------------------------------------------------


class RefundRequest(pydantic.BaseModel):
    amount: int
    reason: str = ""


class RefundDecision(pydantic.BaseModel):
    approve: bool
    note: str = ""


def store_snapshot(bundle: StoreBundle) -> object:
    """Everything a store holds, comparable with ``==``: the SQL dump of a SQLite file (read
    through a connection of its own), or copies of a memory store's tables."""
    if isinstance(bundle, SqliteStore):
        db = sqlite3.connect(bundle.path)
        try:
            return "\n".join(db.iterdump())
        finally:
            db.close()
    if isinstance(bundle, PostgresStore):
        return [bundle.read(f"SELECT * FROM {table} ORDER BY seq") for table in TABLES]
    assert isinstance(bundle, MemoryStore), bundle
    return (dict(bundle._pauses), dict(bundle._checkpoints), dict(bundle._payloads),
            dict(bundle._effects), dict(bundle._runs))


class SpySigner:
    """The deployment's signer, counting what it mints."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.minted: list[Claims] = []

    def mint(self, claims: Claims) -> tuple[str, str]:
        out: tuple[str, str] = self.inner.mint(claims)
        self.minted.append(claims)
        return out

    def verify(self, token: object) -> Claims:
        claims: Claims = self.inner.verify(token)
        return claims


@attrs.define
class Env:
    """One deployment under test, with handles on its clock, keys, audit and authority."""

    store: StoreBundle
    svc: PauseService
    clock: ManualClock
    ring: KeyRing
    signer: SpySigner
    audit: MemoryAudit
    allowed: set[str]
    authority_calls: list[tuple[str, str, int]]
    authority_until: list[int]

    def snapshot(self) -> object:
        return store_snapshot(self.store)


def make_env(store: StoreBundle, *, service_class: type[PauseService] = PauseService,
             ring: KeyRing | None = None, signer: Any = None,
             wrap_ledger: Callable[[Any], Any] | None = None) -> Env:
    """Compose a deployment the way production does; ``service_class``, ``signer`` and
    ``wrap_ledger`` swap one piece (the broken variants use them)."""
    ring = ring or KeyRing(Ed25519Key.generate("k1"))
    spy = SpySigner(signer or ring)
    clock = ManualClock(T0)
    audit = MemoryAudit()
    allowed = {"alice"}
    calls: list[tuple[str, str, int]] = []
    until = [2**62]

    def guard(responder: str, claims: Claims, now: int) -> bool:
        calls.append((responder, claims.interrupt_id, now))
        return responder in allowed and now < until[0]

    interactions = [
        Interaction("ask", description="a free-form question"),
        Interaction("pay", tool=True, description="approve a payment tool call"),
        Interaction("refund", payload=RefundRequest, response=RefundDecision, authority=guard),
    ]
    svc = compose(store=store, signer=spy, interactions=interactions, clock=clock, audit=audit,
                  ttl_ms=TTL).service
    ledger = svc.ledger if wrap_ledger is None else wrap_ledger(svc.ledger)
    if service_class is not PauseService or wrap_ledger is not None:
        svc = service_class(registry=svc.registry, signer=spy, ledger=ledger,
                            checkpoints=svc.checkpoints, payloads=svc.payloads,
                            effects=svc.effects, runs=svc.runs, clock=clock, audit=audit,
                            ttl_ms=TTL)
    return Env(store, svc, clock, ring, spy, audit, allowed, calls, until)


@pytest.fixture(params=["memory", "sqlite", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[StoreBundle]:
    """The shared ``store`` fixture's kinds, and PostgreSQL (a schema of its own; skipped
    without ``$PAUSEPOINT_PG_DSN``): there a resume takes the ledger's one write."""
    spec = (pg_spec("pp_service") if request.param == "postgres" else
            StoreSpec("memory") if request.param == "memory" else fresh_sqlite(tmp_path))
    bundle = spec.open()
    yield bundle
    bundle.close()
    drop(spec)


@pytest.fixture
def env(store: StoreBundle) -> Env:
    return make_env(store)


def binding(run: str = "run-1", **over: str) -> PauseBinding:
    fields = dict(run_id=run, root_run_id="root-1", session_id="sess-1", thread_id="thr-1",
                  scope="tenant-a")
    fields.update(over)
    return PauseBinding(**fields)


BINDING = binding()
REQUEST = ResumeRequest(session_id="sess-1", scope="tenant-a", responder="alice")


def take(env: Env, iid: str = "int-1", name: str = "ask", payload: object = None, *,
         tool_call_id: str = "", checkpoint_id: str | None = None, turn: bool = True,
         where: PauseBinding = BINDING) -> PauseRecord:
    """Pause (and, with ``turn``, record the turn); returns the stored record."""
    rec = env.svc.pause(binding=where, name=name, payload={} if payload is None else payload,
                        interrupt_id=iid, tool_call_id=tool_call_id,
                        checkpoint_id=checkpoint_id or f"ckpt-{iid}")
    if turn:
        rec = env.svc.record_turn(iid, f"turn of {iid}")
    return rec


def stored(env: Env, iid: str) -> PauseRecord:
    rec = env.svc.ledger.get(iid)
    assert rec is not None, f"no ledger row for {iid}"
    return rec


# -- pause -----------------------------------------------------------------------------------


def test_pause_publishes_a_token_bound_to_the_pause(env: Env) -> None:
    """`pause.published`, `token.claims`: the record carries the binding, the interaction, the
    tool call id, the payload digest and the expiry; its token verifies to exactly those claims;
    the payload is recorded; the pause is paused and not yet resumable."""
    rec = env.svc.pause(binding=BINDING, name="pay", payload={"amount": 12}, interrupt_id="i-1",
                        tool_call_id="call-7", checkpoint_id="ck-1")
    c = rec.claims
    assert (c.interrupt_id, c.run_id, c.root_run_id, c.session_id, c.thread_id, c.scope) == (
        "i-1", "run-1", "root-1", "sess-1", "thr-1", "tenant-a")
    assert (c.name, c.tool_call_id, c.checkpoint_id) == ("pay", "call-7", "ck-1")
    assert c.payload_digest == env.svc.payload_digest('{"amount":12}') != digest('{"amount":12}')
    assert rec.payload == '{"amount":12}'
    assert (c.issued_at, c.expires_at) == (T0, T0 + TTL)
    assert env.ring.verify(rec.token) == c and rec.kid == "k1"
    assert rec.state == PauseState(Phase.PAUSED, T0 + TTL)
    assert stored(env, "i-1") == rec
    assert env.svc.payloads.get("i-1") is None  # the payload is kept once: in the pause's row
    assert env.svc.outstanding() == [rec]


PAUSE_LADDER = [
    pytest.param(dict(name="nope", payload={"x": {1}}, checkpoint_id=""),
                 E.INTERACTION_UNREGISTERED, "pause.interaction.registered",
                 id="pause.interaction.registered"),
    pytest.param(dict(name="pay", payload=[1, 2], checkpoint_id=""), E.PAYLOAD_INVALID,
                 "pause.payload.schema", id="pause.payload.schema"),
    pytest.param(dict(name="refund", payload={"amount": "lots"}, checkpoint_id=""),
                 E.PAYLOAD_INVALID, "pause.payload.schema", id="pydantic-payload"),
    pytest.param(dict(name="pay", payload={"amount": 3}, checkpoint_id=None),
                 E.CHECKPOINT_MISSING, "pause.checkpoint.bound", id="pause.checkpoint.bound"),
    pytest.param(dict(name="pay", payload={"amount": 3}, checkpoint_id="ck"),
                 E.TOOL_CALL_ID_MISSING, "pause.tool-call.bound", id="pause.tool-call.bound"),
]


def check_pause_refusal(env: Env, kwargs: dict[str, Any], code: ErrorCode, cited: str) -> None:
    """A refused pause mints nothing, leaves no ledger or payload row, and the run stays
    running: the whole store is unchanged."""
    env.svc.runs.create(run_record(BINDING, RunStatus.RUNNING))
    before, minted = env.snapshot(), len(env.signer.minted)
    err = refused(env.svc.pause, binding=BINDING, interrupt_id="int-x", tool_call_id="",
                  **kwargs)
    assert (err.code, err.clause) == (code, clause(cited)), err
    assert len(env.signer.minted) == minted, "a token was minted for a refused pause"
    assert env.svc.ledger.get("int-x") is None, "a refused pause left a ledger row"
    assert env.svc.payloads.get("int-x") is None, "a refused pause left a payload row"
    run = env.svc.runs.get("run-1")
    assert run is not None and run.status == RunStatus.RUNNING
    assert env.snapshot() == before


def check_pause_refusals_before_mint(env: Env) -> None:
    """`pause.refusal.before-mint`, `pause.refusal.order`: the whole ladder, then the pause
    that passes every check mints exactly one token."""
    for p in PAUSE_LADDER:
        kwargs, code, cited = p.values
        check_pause_refusal(env, kwargs, code, cited)  # type: ignore[arg-type]
    rec = env.svc.pause(binding=BINDING, name="pay", payload={"amount": 3}, interrupt_id="int-x",
                        tool_call_id="call-1", checkpoint_id="ck")
    assert len(env.signer.minted) == 1 and rec.state.phase == Phase.PAUSED


@pytest.mark.parametrize(("kwargs", "code", "cited"), PAUSE_LADDER)
def test_pause_refusal_in_order_and_before_mint(env: Env, kwargs: dict[str, Any],
                                                code: ErrorCode, cited: str) -> None:
    """`pause.refusal.order`, `pause.refusal.before-mint`: each rung fails this check and
    every later one; this one decides the code and nothing is written."""
    check_pause_refusal(env, kwargs, code, cited)


def test_pause_refusals_before_mint_then_accepted(env: Env) -> None:
    check_pause_refusals_before_mint(env)


def test_pause_binds_the_threads_latest_checkpoint_when_none_is_given(env: Env) -> None:
    """`pause.checkpoint.bound`: with no checkpoint id, the thread's newest checkpoint."""
    env.svc.checkpoints.write("ck-old", "thr-1", "t0")
    env.svc.checkpoints.write("ck-new", "thr-1", "t1")
    rec = env.svc.pause(binding=BINDING, name="ask", payload={}, interrupt_id="i-1")
    assert rec.claims.checkpoint_id == "ck-new"


def test_pausing_again_under_the_same_id_returns_the_same_pause(env: Env) -> None:
    """`durability.token.reissue`, `durability.token.reissue`: the same interrupt id with the
    same claims gives back the issued pause and token; nothing is minted twice.  Anything
    different is refused with pause_conflict (the issue-9 change: it used to be handed out)."""
    first = take(env, "i-1", turn=False)
    again = env.svc.pause(binding=BINDING, name="ask", payload={}, interrupt_id="i-1",
                          checkpoint_id="ckpt-i-1")
    assert again == first and len(env.signer.minted) == 1
    with pytest.raises(PausepointError) as info:
        env.svc.pause(binding=BINDING, name="ask", payload={"other": 1}, interrupt_id="i-1",
                      checkpoint_id="ck-other")
    assert info.value.code is E.PAUSE_CONFLICT and first.token not in str(info.value)


def test_a_fresh_pause_under_an_issued_id_gives_the_issued_pause(env: Env) -> None:
    """``fresh`` (no read of the ledger first) changes no verdict: a pause under an interrupt
    id someone issued first gives back that pause and token (its mint is not kept) or, for
    anything different, ``pause_conflict`` with the store unchanged; with a turn, it is
    recorded on the issued pause as without ``fresh`` (``durability.token.reissue``)."""
    first = take(env, "i-1", turn=False)
    other = take(env, "i-3", turn=False)
    before = env.snapshot()
    for turn in (None, "turn of i-1"):
        with pytest.raises(PausepointError) as info:
            env.svc.pause(binding=BINDING, name="ask", payload={"other": 1},
                          interrupt_id="i-1", checkpoint_id="ckpt-i-1", fresh=True, turn=turn)
        assert info.value.code is E.PAUSE_CONFLICT and first.token not in str(info.value)
        assert env.snapshot() == before
    again = env.svc.pause(binding=BINDING, name="ask", payload={}, interrupt_id="i-1",
                          checkpoint_id="ckpt-i-1", fresh=True)
    assert again == first and env.snapshot() == before
    turned = env.svc.pause(binding=BINDING, name="ask", payload={}, interrupt_id="i-1",
                           checkpoint_id="ckpt-i-1", fresh=True, turn="t")
    read_first = env.svc.pause(binding=BINDING, name="ask", payload={}, interrupt_id="i-3",
                               checkpoint_id="ckpt-i-3", turn="t")
    assert turned.token == first.token and read_first.token == other.token
    assert (turned.state, turned.version) == (read_first.state, read_first.version)
    assert stored(env, "i-1") == turned
    fresh = env.svc.pause(binding=BINDING, name="ask", payload={}, interrupt_id="i-2",
                          checkpoint_id="ckpt-i-2", fresh=True)
    assert stored(env, "i-2") == fresh and fresh.token != first.token


# -- record turn -----------------------------------------------------------------------------


class ObservingCheckpoints(FailingCheckpoints):
    """A working checkpoint store that notes the pause's phase at the moment of each write."""

    def __init__(self, inner: Any, observe: Callable[[], Phase]) -> None:
        super().__init__(inner)
        self.observe = observe
        self.seen: list[Phase] = []

    def write(self, checkpoint_id: str, thread_id: str, turn: str) -> bool:
        self.seen.append(self.observe())
        ok: bool = self.inner.write(checkpoint_id, thread_id, turn)
        return ok


def check_failed_turn_write_stays_paused(env: Env) -> None:
    """`turn.resumable.earned`, `turn.write-failed.stays-paused`: not resumable before the turn
    write, nor after a failed one; resumable only after a write that reported success, and
    not before that write happened."""
    rec = take(env, "int-1", turn=False)
    err = refused(env.svc.resume, rec.token, {}, REQUEST)
    assert (err.code, err.clause) == (E.NOT_RESUMABLE, clause("turn.write-failed.stays-paused"))
    real = env.svc.checkpoints
    env.svc.checkpoints = FailingCheckpoints(real)
    before = env.snapshot()
    err = refused(env.svc.record_turn, "int-1", "turn-1")
    assert err.code == E.CHECKPOINT_WRITE_FAILED
    assert stored(env, "int-1").state == PauseState(Phase.PAUSED, T0 + TTL)
    assert env.snapshot() == before
    err = refused(env.svc.resume, rec.token, {}, REQUEST)
    assert err.code == E.NOT_RESUMABLE
    observing = ObservingCheckpoints(real, lambda: stored(env, "int-1").state.phase)
    env.svc.checkpoints = observing
    after = env.svc.record_turn("int-1", "turn-2")
    assert observing.seen == [Phase.PAUSED], "resumable was set before the turn was written"
    assert after.state.phase == Phase.RESUMABLE and after.state.turn_recorded
    env.svc.checkpoints = real
    out = env.svc.resume(rec.token, {}, REQUEST)
    assert not out.replayed and out.turn == "turn-2"


def test_resumable_is_earned_only_by_a_successful_turn_write(env: Env) -> None:
    check_failed_turn_write_stays_paused(env)


def test_record_turn_on_a_resumable_or_decided_pause_writes_nothing(env: Env) -> None:
    """`lifecycle.refusal.no-change`: a refused turn does not overwrite the recorded turn."""
    rec = take(env, "i-1")
    for code in (E.INVALID_TRANSITION, E.PAUSE_CANCELLED):
        before = env.snapshot()
        err = refused(env.svc.record_turn, "i-1", "another turn")
        assert err.code == code
        assert env.snapshot() == before
        assert env.svc.checkpoints.read(rec.claims.checkpoint_id) == "turn of i-1"
        if code == E.INVALID_TRANSITION:
            env.svc.cancel_pause("i-1")


# -- resume ----------------------------------------------------------------------------------


def flip(token: str, i: int) -> str:
    """``token`` with the character at ``i`` replaced by another base64url character."""
    return token[:i] + ("A" if token[i] != "A" else "B") + token[i + 1:]


def test_resume_refusal_order_and_refusal_keeps_the_pause(env: Env) -> None:
    """`resume.refusal.order`, `resume.refusal.keeps-pause`, `lifecycle.refusal.no-change`:
    start with everything wrong and put one thing right at a time; each time the next check
    in the fixed order decides, and nothing is stored -- until a valid answer is consumed."""
    rec = take(env, "i-1", "refund", {"amount": 5})
    bad_response = {"approve": "maybe"}
    ladder: list[tuple[object, ResumeRequest, ErrorCode, str]] = [
        (flip(rec.token, len(rec.token) - 20),
         ResumeRequest("sess-x", "scope-x", "mallory"), E.TOKEN_INVALID, "token.integrity"),
        (rec.token, ResumeRequest("sess-x", "scope-x", "mallory"), E.BINDING_MISMATCH,
         "resume.binding.run"),
        (rec.token, ResumeRequest("sess-1", "scope-x", "mallory"), E.SCOPE_MISMATCH,
         "resume.binding.scope"),
        (rec.token, ResumeRequest("sess-1", "tenant-a", "mallory"), E.RESPONDER_UNAUTHORIZED,
         "resume.authority"),
        (rec.token, REQUEST, E.RESPONSE_INVALID, "resume.response.schema"),
    ]
    for token, request, code, cited in ladder:
        before = env.snapshot()
        err = refused(env.svc.resume, token, bad_response, request)
        assert (err.code, err.clause) == (code, clause(cited)), err
        assert env.snapshot() == before
        assert stored(env, "i-1") == rec
    env.svc.mark_unknown("i-1")
    assert refused(env.svc.resume, rec.token, bad_response, REQUEST).code == E.RESPONSE_INVALID
    err = refused(env.svc.resume, rec.token, {"approve": True}, REQUEST)
    assert (err.code, err.clause) == (E.OUTCOME_UNKNOWN, clause("resume.unknown-outcome.blocks"))
    env.svc.reconcile("i-1", lc.Resolution.APPLIED)
    out = env.svc.resume(rec.token, {"approve": True}, REQUEST)
    assert not out.replayed and out.record.state.phase == Phase.CONSUMED
    assert out.turn == "turn of i-1"  # `resume.continuation.recorded-turn`


def test_expiry_is_checked_before_binding_and_decides_the_pause(env: Env) -> None:
    """`resume.refusal.order`, `race.decided-once`: an expired pause answered from the wrong
    session and scope is refused as expired, and becomes expired for everyone."""
    rec = take(env, "i-1")
    env.clock.advance(TTL)
    err = refused(env.svc.resume, rec.token, {}, ResumeRequest("sess-x", "scope-x"))
    assert err.code == E.PAUSE_EXPIRED
    assert stored(env, "i-1").state.phase == Phase.EXPIRED
    # `resume.binding.scope`: the cross-scope attempt is audited even though expiry refused it
    assert [e.kind for e in env.audit.events] == ["cross_scope_redemption"]


def test_binding_is_checked_before_the_decided_state(env: Env) -> None:
    """`resume.refusal.order`: a consumed pause from another session is a binding mismatch,
    not a replay; a consumed pause with an invalid response is a conflict."""
    rec = take(env, "i-1")
    env.svc.resume(rec.token, {"a": 1}, REQUEST)
    assert refused(env.svc.resume, rec.token, {"a": 1},
                   ResumeRequest("sess-x", "tenant-a")).code == E.BINDING_MISMATCH
    assert refused(env.svc.resume, rec.token, [1], REQUEST).code == E.RESPONSE_CONFLICT


def test_unknown_outcome_is_checked_before_the_turn(env: Env) -> None:
    """`resume.refusal.order`, `resume.unknown-outcome.blocks`: a pause that never recorded its
    turn and then went into doubt is refused as outcome_unknown; reconciled, it is paused again
    (not resumable)."""
    rec = take(env, "i-1", turn=False)
    env.svc.mark_unknown("i-1")
    assert refused(env.svc.resume, rec.token, {}, REQUEST).code == E.OUTCOME_UNKNOWN
    env.svc.reconcile("i-1", lc.Resolution.NOT_APPLIED)
    assert stored(env, "i-1").state.phase == Phase.PAUSED
    assert refused(env.svc.resume, rec.token, {}, REQUEST).code == E.NOT_RESUMABLE


# -- replay ----------------------------------------------------------------------------------


def check_replay_returns_the_first_result(env: Env) -> None:
    """`replay.same-response`, `effect.at-most-once`: the same response (keys in any order)
    returns the first result; nothing is written, no turn is handed out to run again."""
    rec = take(env, "i-1")
    first = env.svc.resume(rec.token, {"a": 1, "b": [2]}, REQUEST)
    assert not first.replayed and first.turn == "turn of i-1"
    env.svc.set_result("i-1", {"status": "done"})
    before = env.snapshot()
    again = env.svc.resume(rec.token, {"b": [2], "a": 1}, REQUEST)
    assert again.replayed and again.turn is None
    assert again.result == canonical_json({"status": "done"})
    assert again.record.version == first.record.version
    assert env.snapshot() == before


def check_different_response_conflicts(env: Env) -> None:
    """`replay.different-response.conflict`: a consumed pause answered differently is refused
    and keeps its first answer."""
    rec = take(env, "i-1")
    env.svc.resume(rec.token, {"approve": True}, REQUEST)
    before = env.snapshot()
    err = refused(env.svc.resume, rec.token, {"approve": False}, REQUEST)
    assert (err.code, err.clause) == (E.RESPONSE_CONFLICT,
                                      clause("replay.different-response.conflict"))
    assert env.snapshot() == before
    assert stored(env, "i-1").state.response_digest == digest(canonical_json({"approve": True}))


def test_replay_of_the_same_response_returns_the_first_result(env: Env) -> None:
    check_replay_returns_the_first_result(env)


def test_a_different_response_is_a_conflict(env: Env) -> None:
    check_different_response_conflicts(env)


# -- expiry ----------------------------------------------------------------------------------


def check_resume_at_expiry_refused(env: Env) -> None:
    """`resume.expiry`, `expiry.no-consume-after`, `expiry.transition`: one millisecond before
    expires_at a pause is consumed; at exactly expires_at it is refused and becomes expired."""
    a, b = take(env, "i-a"), take(env, "i-b")
    expires = a.claims.expires_at
    env.clock.advance(expires - 1 - env.clock.now())
    out = env.svc.resume(a.token, {"n": 1}, REQUEST)
    assert out.record.state.consumed_at == expires - 1
    env.clock.advance(1)
    assert env.clock.now() == expires
    err = refused(env.svc.resume, b.token, {"n": 1}, REQUEST)
    assert (err.code, err.clause) == (E.PAUSE_EXPIRED, clause("resume.expiry"))
    assert stored(env, "i-b").state.phase == Phase.EXPIRED
    assert refused(env.svc.resume, b.token, {"n": 1}, REQUEST).code == E.PAUSE_EXPIRED
    for rec in env.svc.ledger.by_run("run-1"):
        if rec.state.phase == Phase.CONSUMED:
            assert rec.state.consumed_at is not None
            assert rec.state.consumed_at < rec.state.expires_at
    assert env.svc.resume(a.token, {"n": 1}, REQUEST).replayed  # decided before expiry


def test_expiry_at_exactly_expires_at(env: Env) -> None:
    check_resume_at_expiry_refused(env)


def test_expire_before_due_is_refused_and_expire_due_takes_exactly_the_due(env: Env) -> None:
    """`expiry.transition`: not due before expires_at; expire_due expires what is due and
    nothing else; the ledger's outstanding set follows."""
    take(env, "i-1")
    env.clock.advance(5)
    take(env, "i-2")
    env.clock.advance(TTL - 6)
    before = env.snapshot()
    err = refused(env.svc.expire, "i-1")
    assert err.code == E.NOT_DUE and env.snapshot() == before
    env.clock.advance(1)
    assert [r.interrupt_id for r in env.svc.expire_due()] == ["i-1"]
    assert [r.interrupt_id for r in env.svc.outstanding()] == ["i-2"]
    assert env.svc.expire_due() == []


# -- decided once ----------------------------------------------------------------------------

WINNER_CODE = {Phase.CONSUMED: E.PAUSE_CONSUMED, Phase.EXPIRED: E.PAUSE_EXPIRED,
               Phase.CANCELLED: E.PAUSE_CANCELLED}


def _do(env: Env, what: str, rec: PauseRecord) -> None:
    if what == "answer":
        env.svc.resume(rec.token, {"r": 1}, REQUEST)
    elif what == "expire":
        env.clock.advance(max(0, rec.claims.expires_at - env.clock.now()))
        env.svc.expire(rec.interrupt_id)
    else:
        env.svc.cancel_pause(rec.interrupt_id)


def _try(env: Env, what: str, rec: PauseRecord) -> PausepointError:
    if what == "answer":
        return refused(env.svc.resume, rec.token, {"r": 2}, REQUEST)
    if what == "expire":
        env.clock.advance(max(0, rec.claims.expires_at - env.clock.now()))
        return refused(env.svc.expire, rec.interrupt_id)
    return refused(env.svc.cancel_pause, rec.interrupt_id)


@pytest.mark.parametrize(("first", "second", "phase"), [
    ("answer", "expire", Phase.CONSUMED), ("answer", "cancel", Phase.CONSUMED),
    ("cancel", "answer", Phase.CANCELLED), ("cancel", "expire", Phase.CANCELLED),
    ("expire", "answer", Phase.EXPIRED), ("expire", "cancel", Phase.EXPIRED),
])
def test_answer_expiry_and_cancel_are_decided_once(env: Env, first: str, second: str,
                                                   phase: Phase) -> None:
    """`race.decided-once`, `lifecycle.terminal.absorbing`: the loser is told which won."""
    rec = take(env, "i-1")
    _do(env, first, rec)
    before = env.snapshot()
    err = _try(env, second, rec)
    assert err.code == WINNER_CODE[phase], err
    assert stored(env, "i-1").state.phase == phase
    assert env.snapshot() == before


class GatedLedger:
    """Test wiring, not a broken piece: the first ``parties`` conditional updates wait for each
    other, so every racer has read the same row version before any of them writes."""

    def __init__(self, inner: Any, parties: int) -> None:
        self.inner = inner
        self.durable = inner.durable
        self._barrier = threading.Barrier(parties, timeout=10)
        self._left = parties
        self._lock = threading.Lock()

    def transition(self, interrupt_id: str, expected_version: int, new: PauseState,
                   result: str | None = None) -> bool:
        with self._lock:
            gate, self._left = self._left > 0, self._left - 1
        if gate:
            try:
                self._barrier.wait()
            except threading.BrokenBarrierError:
                pass
        ok: bool = self.inner.transition(interrupt_id, expected_version, new, result)
        return ok

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def race(calls: list[Callable[[], Any]]) -> list[Any]:
    """Run the calls in threads at once; each result is the return value or the exception."""
    results: list[Any] = [None] * len(calls)

    def go(i: int) -> None:
        try:
            results[i] = calls[i]()
        except Exception as exc:
            results[i] = exc

    threads = [threading.Thread(target=go, args=(i,)) for i in range(len(calls))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    return results


def check_racing_resumes_single_winner(env: Env, n: int = 4) -> None:
    """`resume.consume.single-winner`, `resume.consume.at-most-once`: ``n`` resumes with
    different responses race on one pause, all having read the same row version; exactly one
    consumes it and every other one is told it conflicts."""
    rec = take(env, "i-1")
    real = env.svc.ledger
    env.svc.ledger = GatedLedger(real, n)

    def answer(i: int) -> Callable[[], Any]:
        return lambda: env.svc.resume(rec.token, {"who": i}, REQUEST)

    try:
        results = race([answer(i) for i in range(n)])
    finally:
        env.svc.ledger = real
    winners = [i for i, r in enumerate(results)
               if isinstance(r, ResumeOutcome) and not r.replayed]
    assert len(winners) == 1, f"{len(winners)} resumes consumed one pause: {results}"
    losers = [r for i, r in enumerate(results) if i not in winners]
    assert all(isinstance(r, PausepointError) and r.code == E.RESPONSE_CONFLICT
               for r in losers), results
    final = stored(env, "i-1")
    assert final.state.phase == Phase.CONSUMED
    assert final.state.response_digest == digest(canonical_json({"who": winners[0]}))
    assert final.version == rec.version + 1


def test_racing_resumes_have_a_single_winner(env: Env) -> None:
    check_racing_resumes_single_winner(env)


@pytest.mark.parametrize("pair", ["answer-cancel", "expire-cancel"])
def test_racing_answer_expiry_and_cancel_decide_once(env: Env, pair: str) -> None:
    """`race.decided-once`, `resume.consume.single-winner`: two deciders race after reading the
    same version; one wins and the other is told which state won."""
    rec = take(env, "i-1")
    if pair == "expire-cancel":
        env.clock.advance(TTL)
    first: Callable[[], Any] = ((lambda: env.svc.resume(rec.token, {}, REQUEST))
                                if pair == "answer-cancel" else (lambda: env.svc.expire("i-1")))
    env.svc.ledger = GatedLedger(env.svc.ledger, 2)
    results = race([first, lambda: env.svc.cancel_pause("i-1")])
    errors = [r for r in results if isinstance(r, PausepointError)]
    assert len(errors) == 1, results
    won = stored(env, "i-1").state.phase
    assert won in WINNER_CODE and errors[0].code == WINNER_CODE[won]


# -- binding, scope, authority ---------------------------------------------------------------


@pytest.mark.parametrize("request_", [
    pytest.param(ResumeRequest("sess-x", "tenant-a", "alice"), id="session"),
    pytest.param(ResumeRequest("sess-1", "tenant-a", "alice", run_id="run-2"), id="run"),
    pytest.param(ResumeRequest("sess-1", "tenant-a", "alice", root_run_id="root-2"),
                 id="root-run"),
])
def test_binding_mismatch(env: Env, request_: ResumeRequest) -> None:
    """`resume.binding.run`: another run, root run or session is refused; nothing changes."""
    rec = take(env, "i-1")
    before = env.snapshot()
    err = refused(env.svc.resume, rec.token, {}, request_)
    assert (err.code, err.clause) == (E.BINDING_MISMATCH, clause("resume.binding.run"))
    assert env.snapshot() == before
    ok = ResumeRequest("sess-1", "tenant-a", run_id="run-1", root_run_id="root-1")
    assert not env.svc.resume(rec.token, {}, ok).replayed


def test_cross_scope_redemption_is_refused_and_audited(env: Env) -> None:
    """`resume.binding.scope`: refused with scope_mismatch, written to the audit sink."""
    rec = take(env, "i-1")
    before = env.snapshot()
    err = refused(env.svc.resume, rec.token, {}, ResumeRequest("sess-1", "tenant-b"))
    assert (err.code, err.clause) == (E.SCOPE_MISMATCH, clause("resume.binding.scope"))
    assert env.snapshot() == before
    assert [(a.kind, a.interrupt_id) for a in env.audit.events] == [
        ("cross_scope_redemption", "i-1")]
    assert "tenant-a" in env.audit.events[0].detail and "tenant-b" in env.audit.events[0].detail
    assert isinstance(env.audit.events[0], AuditEvent)


def test_authority_is_evaluated_at_resume_time(env: Env) -> None:
    """`resume.authority`: the authority is asked when the answer arrives, with the resume
    server's clock; losing authority after the pause refuses, gaining it accepts."""
    a = take(env, "i-a", "refund", {"amount": 1})
    b = take(env, "i-b", "refund", {"amount": 2})
    assert env.authority_calls == []  # nothing was decided at pause time
    env.allowed.clear()
    env.clock.advance(7)
    err = refused(env.svc.resume, a.token, {"approve": True}, REQUEST)
    assert (err.code, err.clause) == (E.RESPONDER_UNAUTHORIZED, clause("resume.authority"))
    assert env.authority_calls[-1] == ("alice", "i-a", T0 + 7)
    env.allowed.add("bob")
    bob = ResumeRequest("sess-1", "tenant-a", "bob")
    assert not env.svc.resume(a.token, {"approve": True}, bob).replayed
    env.authority_until[0] = env.clock.now() + 1  # a time-limited permission runs out
    env.clock.advance(1)
    err = refused(env.svc.resume, b.token, {"approve": True}, bob)
    assert err.code == E.RESPONDER_UNAUTHORIZED and stored(env, "i-b").state.phase == \
        Phase.RESUMABLE


# -- unknown outcome -------------------------------------------------------------------------


def test_unknown_outcome_blocks_resume_until_reconciled(env: Env) -> None:
    """`resume.unknown-outcome.blocks`, `effect.reconcile`, `effect.unknown-outcome`."""
    rec = take(env, "i-1")
    env.svc.mark_unknown("i-1")
    before = env.snapshot()
    for _ in range(2):
        err = refused(env.svc.resume, rec.token, {}, REQUEST)
        assert (err.code, err.clause) == (E.OUTCOME_UNKNOWN,
                                          clause("resume.unknown-outcome.blocks"))
    assert env.snapshot() == before
    assert [r.interrupt_id for r in env.svc.outstanding()] == ["i-1"]
    env.svc.reconcile("i-1", lc.Resolution.NOT_APPLIED)
    assert stored(env, "i-1").state.phase == Phase.RESUMABLE
    assert refused(env.svc.reconcile, "i-1", lc.Resolution.APPLIED).code == \
        E.INVALID_TRANSITION
    assert not env.svc.resume(rec.token, {}, REQUEST).replayed


# -- several pauses, cancel ------------------------------------------------------------------


def test_several_pauses_of_one_run_are_independent(env: Env) -> None:
    """`multi.independent`: answering, expiring-by-answer or cancelling one pause of a run
    leaves its siblings exactly as they were."""
    recs = [take(env, f"i-{k}") for k in range(3)]
    env.svc.resume(recs[0].token, {"k": 0}, REQUEST)
    assert stored(env, "i-1") == recs[1] and stored(env, "i-2") == recs[2]
    env.svc.cancel_pause("i-1")
    assert stored(env, "i-2") == recs[2]
    assert not env.svc.resume(recs[2].token, {"k": 2}, REQUEST).replayed


def test_cancel_run_propagates_to_child_runs(env: Env) -> None:
    """`cancel.propagates`, `cancel.distinct`: cancelling a run cancels its live pauses and
    those of its children and grandchildren; their tokens are refused with pause_cancelled; a
    pause already consumed stays consumed; unrelated runs are untouched."""
    parent = binding("run-p", root_run_id="run-p")
    child = binding("run-c", root_run_id="run-p", parent_run_id="run-p")
    grandchild = binding("run-g", root_run_id="run-p", parent_run_id="run-c")
    other = binding("run-o", root_run_id="run-o")
    for b in (parent, child, grandchild, other):
        env.svc.runs.create(run_record(b, RunStatus.PAUSED))
    p, c, g, o = (take(env, f"i-{b.run_id}", where=b) for b in (parent, child, grandchild, other))
    c2 = take(env, "i-run-c-2", where=child)
    env.svc.resume(c2.token, {}, ResumeRequest("sess-1", "tenant-a"))
    cancelled = env.svc.cancel_run("run-p")
    assert sorted(cancelled) == ["run-c", "run-g", "run-p"]
    for rec in (p, c, g):
        assert stored(env, rec.interrupt_id).state.phase == Phase.CANCELLED
        err = refused(env.svc.resume, rec.token, {}, REQUEST)
        assert (err.code, err.clause) == (E.PAUSE_CANCELLED, clause("cancel.distinct"))
        run = env.svc.runs.get(rec.run_id)
        assert run is not None and run.status == RunStatus.CANCELLED
    assert stored(env, "i-run-c-2").state.phase == Phase.CONSUMED
    assert stored(env, "i-run-o") == o
    assert [r.interrupt_id for r in env.svc.outstanding()] == ["i-run-o"]


# -- tokens: integrity, binding, drain -------------------------------------------------------


def check_flipped_bytes_refused(env: Env) -> None:
    """`token.integrity`, `resume.token.authentic`: every single-character change of a token,
    at every position, is refused by the deployment's signer and by resume; nothing changes;
    the unaltered token still resumes."""
    rec = take(env, "i-1")
    tok = rec.token
    before = env.snapshot()
    for i in range(len(tok)):
        for forged in {flip(tok, i), tok[:i] + "." + tok[i + 1:]} - {tok}:
            err = refused(env.svc.signer.verify, forged)
            assert err.code in TOKEN_REFUSALS, (i, err)
            err = refused(env.svc.resume, forged, {}, REQUEST)
            assert err.code in TOKEN_REFUSALS, (i, err)
    assert env.snapshot() == before
    assert not env.svc.resume(tok, {}, REQUEST).replayed


def test_a_token_with_any_flipped_byte_is_refused(env: Env) -> None:
    check_flipped_bytes_refused(env)


def splice(a: str, b: str) -> str:
    """Token ``a`` with its claims part replaced by that of token ``b``."""
    pa, pb = a.split("."), b.split(".")
    return ".".join([pa[0], pa[1], pb[2], pa[3]])


def check_forged_tokens_refused(env: Env) -> None:
    """`resume.token.binds-one-pause`, `token.integrity`, `token.key-id`: a token signed by
    another key under the same key id, a token whose claims were swapped for another pause's,
    and a correctly signed token whose claims differ from the pause's are all refused."""
    a, b = take(env, "i-a"), take(env, "i-b")
    impostor = KeyRing(Ed25519Key.generate("k1"))
    other_key, _ = impostor.mint(a.claims)
    swapped = splice(a.token, b.token)
    assert json.loads(b64url_decode(swapped.split(".")[2]))["interrupt_id"] == "i-b"
    resigned, _ = env.ring.mint(attrs.evolve(b.claims, scope="tenant-a", name="pay",
                                             tool_call_id="call-forged"))
    before = env.snapshot()
    for forged in (other_key, swapped):
        err = refused(env.svc.signer.verify, forged)
        assert err.code == E.TOKEN_INVALID, err
        err = refused(env.svc.resume, forged, {}, REQUEST)
        assert err.code == E.TOKEN_INVALID, err
    err = refused(env.svc.resume, resigned, {}, REQUEST)
    assert (err.code, err.clause) == (E.TOKEN_INVALID, clause("resume.token.binds-one-pause"))
    unknown, _ = env.ring.mint(attrs.evolve(a.claims, interrupt_id="i-nowhere"))
    assert refused(env.svc.resume, unknown, {}, REQUEST).code == E.PAUSE_UNKNOWN
    assert env.snapshot() == before
    assert stored(env, "i-a") == a and stored(env, "i-b") == b


def test_forged_tokens_are_refused(env: Env) -> None:
    check_forged_tokens_refused(env)


def test_drain_proof_and_retire(env: Env) -> None:
    """`token.rotation.drain`: a key is retired only when no outstanding pause carries a token
    it signed; retiring earlier is refused; after retiring, its tokens are invalid."""
    a, b = take(env, "i-a"), take(env, "i-b", turn=False)
    env.ring.rotate(Ed25519Key.generate("k2"))
    c = take(env, "i-c")
    assert (a.kid, b.kid, c.kid) == ("k1", "k1", "k2")
    assert env.svc.drain_proof("k1") == 2 and env.svc.drain_proof("k2") == 1
    err = refused(env.ring.retire, "k1", env.svc.drain_proof("k1"))
    assert (err.code, err.clause) == (E.KEY_NOT_DRAINED, clause("token.rotation.drain"))
    env.svc.resume(a.token, {}, REQUEST)
    env.svc.mark_unknown("i-b")
    assert env.svc.drain_proof("k1") == 1  # unknown_outcome is still outstanding
    assert refused(env.ring.retire, "k1", env.svc.drain_proof("k1")).code == E.KEY_NOT_DRAINED
    env.svc.cancel_pause("i-b")
    assert env.svc.drain_proof("k1") == 0
    env.ring.retire("k1", env.svc.drain_proof("k1"))
    assert refused(env.svc.resume, a.token, {}, REQUEST).code == E.TOKEN_INVALID
    assert not env.svc.resume(c.token, {}, REQUEST).replayed


# -- durability ------------------------------------------------------------------------------


def test_sqlite_store_closed_and_reopened_keeps_pauses_and_tokens(tmp_path: Path) -> None:
    """`durability.restart`, `durability.token.reissue`, `durability.commit-per-change`: after
    closing and reopening the SQLite file, every pause is there as it was, pausing again
    publishes the same token, it is answered once, and a replay after another restart returns
    the first result."""
    path = tmp_path / "p.db"
    ring = KeyRing(Ed25519Key.generate("k1"))
    env = make_env(SqliteStore(path), ring=ring)
    a, b = take(env, "i-a"), take(env, "i-b", turn=False)
    env.store.close()
    env = make_env(SqliteStore(path), ring=ring)
    assert stored(env, "i-a") == a and stored(env, "i-b") == b
    again = env.svc.pause(binding=BINDING, name="ask", payload={}, interrupt_id="i-a")
    assert again.token == a.token and env.signer.minted == []
    first = env.svc.resume(a.token, {"x": 1}, REQUEST)
    env.svc.set_result("i-a", {"ok": True})
    env.store.close()
    env = make_env(SqliteStore(path), ring=ring)
    replay = env.svc.resume(a.token, {"x": 1}, REQUEST)
    assert replay.replayed and replay.result == '{"ok":true}'
    assert stored(env, "i-a").version == first.record.version
    assert refused(env.svc.resume, a.token, {"x": 2}, REQUEST).code == E.RESPONSE_CONFLICT
    env.store.close()


# -- composition, gate, status ---------------------------------------------------------------


def test_compose_refuses_inconsistent_wiring(tmp_path: Path) -> None:
    """`wiring.consistent`: durable checkpoints with a volatile ledger, an encoder without its
    decoder (or the reverse), a required durability the store lacks, a non-positive ttl."""
    ring = KeyRing.generate()
    mem, sq = MemoryStore(), SqliteStore(tmp_path / "w.db")
    mixed = PortBundle(mem.ledger, sq.checkpoints, mem.payloads, mem.effects, mem.runs)
    bad: list[dict[str, Any]] = [
        dict(store=mixed),
        dict(store=MemoryStore(), encode_token=str.upper),
        dict(store=MemoryStore(), decode_token=str.lower),
        dict(store=MemoryStore(), require_durable=True),
        dict(store=MemoryStore(), ttl_ms=0),
    ]
    for kw in bad:
        err = refused(compose, signer=ring, **kw)
        assert (err.code, err.clause) == (E.WIRING_INVALID, clause("wiring.consistent")), kw
    compose(store=PortBundle(sq.ledger, mem.checkpoints, mem.payloads, mem.effects, mem.runs),
            signer=ring)
    compose(store=MemoryStore(), signer=ring, encode_token=str.upper, decode_token=str.lower)
    compose(store=sq, signer=ring, require_durable=True)
    sq.close()


def test_no_interaction_no_ask_user_tool() -> None:
    """`wiring.no-interaction-no-tool`."""
    ring = KeyRing.generate()
    assert compose(store=MemoryStore(), signer=ring).ask_user_tool() is None
    dep = compose(store=MemoryStore(), signer=ring,
                  interactions=[Interaction("ask"), Interaction("pay", tool=True)])
    assert dep.ask_user_tool() == AskUserTool("ask_user", ("ask", "pay"))


def gated_spend(env: Env, gate: ThresholdGate, amount: float, world: list[float]
                ) -> list[RunEvent]:
    """A run that asks the gate before spending: it spends, declines, or pauses to ask."""
    def body(emit: Callable[[RunEvent], None]) -> str:
        verdict = gate("spend", {"amount": amount})
        emit(RunEvent(EventKind.THINKING, verdict.reason))
        if verdict.decision == Decision.ALLOW:
            world.append(amount)
            return "spent"
        if verdict.decision == Decision.DENY:
            return "denied"
        rec = env.svc.pause(
            binding=current_run_binding(session_id="sess-1", thread_id="thr-g", scope="tenant-a"),
            name="ask", payload={"action": "spend", "amount": amount},
            interrupt_id=f"gate-{amount}", checkpoint_id=f"ck-{amount}")
        raise InvocationPaused((PendingInterrupt(
            name="ask", payload=amount, token=rec.token, interrupt_id=rec.interrupt_id,
            run_id=rec.run_id, session_id="sess-1", expires_at=rec.claims.expires_at),))
    return Runner().invoke(RunIdentity("run-g", "run-g"), body)


def test_gate_decides_at_once_and_only_ask_pauses(env: Env) -> None:
    """`gate.separate`: allow and deny end the run at once with no pause and no ledger row;
    only ask raises the pause signal, as the run's one terminal paused event."""
    gate = ThresholdGate(allow_up_to=100, deny_over=1000)
    world: list[float] = []
    for amount, result in ((50, "spent"), (5000, "denied")):
        events = gated_spend(env, gate, amount, world)
        assert [e.kind for e in events] == [EventKind.THINKING, EventKind.DONE]
        assert events[-1].data == result
        assert env.svc.ledger.by_run("run-g") == []
    assert world == [50]
    events = gated_spend(env, gate, 500, world)
    assert [e.kind for e in events] == [EventKind.THINKING, EventKind.PAUSED]
    (pending,) = events[-1].data
    assert [r.interrupt_id for r in env.svc.ledger.by_run("run-g")] == [pending.interrupt_id]
    assert world == [50]


def test_status_distinguishes_the_four_stopped_states(env: Env) -> None:
    """`status.distinguishes`: safely suspended (every live pause resumable), partially
    complete (a pause whose turn is not recorded), cancelling, waiting on an unknown outcome
    (a pause in doubt, or an effect left open by a stopped run) -- four different answers."""
    def run(name: str, status: RunStatus) -> PauseBinding:
        b = binding(name, thread_id=f"thr-{name}")
        env.svc.runs.create(run_record(b, status))
        return b

    take(env, "s-1", where=run("r-safe", RunStatus.PAUSED))
    take(env, "s-2", where=binding("r-safe", thread_id="thr-r-safe"))
    b = run("r-partial", RunStatus.PAUSED)
    take(env, "p-1", where=b)
    take(env, "p-2", where=b, turn=False)
    take(env, "c-1", where=run("r-cancelling", RunStatus.CANCELLING))
    take(env, "u-1", where=run("r-unknown", RunStatus.PAUSED))
    env.svc.mark_unknown("u-1")
    run("r-open", RunStatus.PAUSED)
    env.svc.effects.start("r-open", "0:charge", 0, None)
    run("r-running", RunStatus.RUNNING)
    run("r-done", RunStatus.DONE)
    views = {r: env.svc.status(r) for r in ("r-safe", "r-partial", "r-cancelling", "r-unknown",
                                             "r-open", "r-running", "r-done", "r-missing")}
    assert views == {
        "r-safe": RunView.SAFELY_SUSPENDED, "r-partial": RunView.PARTIALLY_COMPLETE,
        "r-cancelling": RunView.CANCELLING, "r-unknown": RunView.WAITING_UNKNOWN_OUTCOME,
        "r-open": RunView.WAITING_UNKNOWN_OUTCOME, "r-running": RunView.RUNNING,
        "r-done": RunView.DONE, "r-missing": RunView.ENDED}
    env.svc.cancel_run("r-safe")
    assert env.svc.status("r-safe") == RunView.CANCELLED


def test_every_refusal_raised_here_is_typed(env: Env) -> None:
    """`lifecycle.transition.table`: operations on a pause that does not exist are refused with
    pause_unknown; nothing is written."""
    before = env.snapshot()
    for fn, args in ((env.svc.record_turn, ("nope", "t")), (env.svc.expire, ("nope",)),
                     (env.svc.cancel_pause, ("nope",)), (env.svc.mark_unknown, ("nope",)),
                     (env.svc.reconcile, ("nope", lc.Resolution.APPLIED))):
        assert refused(fn, *args).code == E.PAUSE_UNKNOWN
    assert env.snapshot() == before
