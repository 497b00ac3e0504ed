"""Hypothesis stateful test: the full pause service against the pure lifecycle machine.

The service runs with a real Ed25519 key ring, a SQLite store in a file (closed and reopened by
the ``CrashRestart`` rule) and a manual clock.  A mirror maps every interrupt id to the state the
pure machine (``pausepoint.core.lifecycle.step``) says it must be in, fed with facts the test works
out on its own (is the name registered, is the payload a dict, is the token the one minted, is
the request from the right session and scope).  After every rule each invariant below is
checked against the store itself; rules and invariants are named after the TLA+ spec's actions
and invariants where they correspond (``tla/``; ``pausepoint.system.model``):

=============================  ===============================================================
invariant                      clause
=============================  ===============================================================
MirrorMatchesLedger            `lifecycle.transition.table`
AtMostOnceConsumption          `resume.consume.at-most-once`
NoConsumeAtOrAfterExpiry       `expiry.no-consume-after`
ResumableHasTurn               `turn.resumable.earned`
LedgerOutstandingMatchesLive   `lifecycle.outstanding.live`, `token.rotation.drain`
TerminalAbsorbing              `lifecycle.terminal.absorbing`
RefusalChangesNothing          `lifecycle.refusal.no-change`
TokenRedeemsOnlyItsPause       `resume.token.binds-one-pause`, `token.integrity`
ReplayOnlyTheSameResponse      `replay.same-response`
=============================  ===============================================================

Invariants that the mirror could share a bug with (a broken table computes a broken mirror)
are stated from the stored rows and the test's own records, never from the table -- so
``test_broken_variants.py`` can run this machine on a broken service and see it fail.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from typing import Any, ClassVar

import attrs
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
)

from doubles import FailingCheckpoints
from pausepoint.core import lifecycle as lc
from pausepoint.core.canonical import canonical_json, digest
from pausepoint.core.clauses import ErrorCode
from pausepoint.core.errors import PausepointError
from pausepoint.core.lifecycle import LIVE, TERMINAL, PauseState, Phase
from pausepoint.core.ports import RunStatus
from pausepoint.core.registry import Interaction
from pausepoint.core.tokens import Ed25519Key, KeyRing
from pausepoint.engine.clock import ManualClock
from pausepoint.engine.compose import compose
from pausepoint.engine.run import PauseBinding
from pausepoint.engine.service import PauseService, ResumeOutcome, ResumeRequest, run_record
from pausepoint.engine.sinks import MemoryAudit
from pausepoint.stores import SqliteStore
from pausepoint.stores.sql import TABLES

E = ErrorCode
TTL = 100
RUNS: dict[str, PauseBinding] = {
    "r1": PauseBinding("r1", "r1", "sess", "thr-r1", "tenant-a"),
    "r2": PauseBinding("r2", "r1", "sess", "thr-r2", "tenant-a", parent_run_id="r1"),
    "r3": PauseBinding("r3", "r3", "sess", "thr-r3", "tenant-a"),
}
DESCENDANTS = {"r1": ("r1", "r2"), "r2": ("r2",), "r3": ("r3",)}
INTERACTIONS = (Interaction("ask"), Interaction("pay", tool=True))
PAYLOADS: list[tuple[object, bool]] = [
    ({}, True), ({"amount": 3}, True), ([1], False), ("text", False), ({"s": [1, {"t": 2}]}, True),
]
RESPONSES: list[object] = [{"ok": True}, {"ok": False}, {"a": 1, "b": 2}, {"b": 2, "a": 1}, [1],
                           "no"]
TOKEN_CODES = frozenset({E.TOKEN_MALFORMED, E.TOKEN_INVALID, E.PAUSE_UNKNOWN})
B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

_BASE: list[str] = []


def base_dir() -> str:
    """One temporary directory per process; each example gets a file in it."""
    if not _BASE:
        _BASE.append(tempfile.mkdtemp(prefix="pausepoint-stateful-"))
    return _BASE[0]


def splice(a: str, b: str) -> str:
    pa, pb = a.split("."), b.split(".")
    return ".".join([pa[0], pa[1], pb[2], pa[3]])


@attrs.frozen
class Refusal:
    """A refused call: the store before and after (the pause the service expired on the way
    excluded -- its change is the expiry, checked by MirrorMatchesLedger)."""

    what: str
    before: dict[str, list[tuple[Any, ...]]]
    after: dict[str, list[tuple[Any, ...]]]


class PauseMachine(RuleBasedStateMachine):
    """The pause service on SQLite against the pure machine."""

    # one piece each, swapped by the broken variants
    service_class: ClassVar[type[PauseService]] = PauseService

    def signer_for(self, ring: KeyRing) -> Any:
        return ring

    def ledger_for(self, ledger: Any) -> Any:
        return ledger

    pauses = Bundle("pauses")

    def __init__(self) -> None:
        super().__init__()
        self.path = os.path.join(base_dir(), f"{id(self)}-{time.monotonic_ns()}.db")
        self.ring = KeyRing(Ed25519Key.generate("k1"))
        self.impostor = KeyRing(Ed25519Key.generate("k1"))
        self.clock = ManualClock(0)
        self.audit = MemoryAudit()
        self.store = SqliteStore(self.path)
        self.svc = self._compose()
        self.reader = sqlite3.connect(self.path, isolation_level=None)
        for b in RUNS.values():
            self.svc.runs.create(run_record(b, RunStatus.PAUSED))
        self.n = 0
        self.mirror: dict[str, PauseState] = {}
        self.tokens: dict[str, str] = {}
        self.run_of: dict[str, str] = {}
        self.asked: dict[str, dict[str, Any]] = {}
        self.turn_of: dict[str, str] = {}
        self.consumes: Counter[str] = Counter()
        self.consumed: dict[str, tuple[object, str, int]] = {}  # response, digest, clock
        self.replays: list[tuple[str, str]] = []  # (interrupt id, digest of the replayed answer)
        self.redemptions: list[tuple[str, str]] = []  # (token, interrupt id it consumed)
        self.forgeries: list[tuple[str, str, bool, bool]] = []  # kind, iid, verified, accepted
        self.first_terminal: dict[str, Phase] = {}
        self.refusals: list[Refusal] = []
        self.extra: list[str] = []  # pauses taken by PauseRefused (not in the bundle)

    def _compose(self) -> PauseService:
        svc = compose(store=self.store, signer=self.signer_for(self.ring),
                      interactions=INTERACTIONS, clock=self.clock, audit=self.audit,
                      ttl_ms=TTL).service
        return self.service_class(
            registry=svc.registry, signer=svc.signer, ledger=self.ledger_for(svc.ledger),
            checkpoints=svc.checkpoints, payloads=svc.payloads, effects=svc.effects,
            runs=svc.runs, clock=self.clock, audit=self.audit, ttl_ms=TTL)

    def teardown(self) -> None:
        self.reader.close()
        self.store.close()
        for suffix in ("", "-wal", "-shm"):
            try:
                os.remove(self.path + suffix)
            except FileNotFoundError:
                pass

    # -- observation -------------------------------------------------------------------------

    def tables(self, skip: str | None = None) -> dict[str, list[tuple[Any, ...]]]:
        """Every row of every table, read through a connection of the test's own."""
        out = {t: self.reader.execute(f"SELECT * FROM {t} ORDER BY seq").fetchall()
               for t in TABLES}
        if skip is not None:  # the pause row the service expired while refusing
            iid_col = [d[1] for d in self.reader.execute(
                "PRAGMA table_info(pausepoint_pauses)")].index("interrupt_id")
            out["pausepoint_pauses"] = [r for r in out["pausepoint_pauses"]
                                        if r[iid_col] != skip]
        return out

    def rows(self) -> dict[str, Any]:
        return {r.interrupt_id: r for run in RUNS for r in self.svc.ledger.by_run(run)}

    def request(self, iid: str, **over: Any) -> ResumeRequest:
        b = RUNS[self.run_of[iid]]
        fields: dict[str, Any] = dict(session_id="sess", scope="tenant-a", responder="x",
                                      run_id=b.run_id, root_run_id=b.root_run_id)
        fields.update(over)
        return ResumeRequest(**fields)

    # -- the comparison ----------------------------------------------------------------------

    def call(self, what: str, iid: str, expected: lc.StepOutcome, fn: Callable[[], Any],
             expires_on_refusal: bool = False) -> Any:
        """Run ``fn`` on the service; its acceptance or refusal (and code) must be the
        machine's.  A refusal is recorded for RefusalChangesNothing."""
        before = self.tables()
        try:
            result = fn()
        except PausepointError as err:
            assert isinstance(expected, lc.Refusal), (
                f"{what} {iid}: the service refused with {err.code} where the machine "
                f"accepts: {expected}")
            assert err.code == expected.code, (
                f"{what} {iid}: the service refused with {err.code}, the machine with "
                f"{expected.code}")
            skip = None
            if (expires_on_refusal and err.code == E.PAUSE_EXPIRED
                    and self.mirror[iid].phase in LIVE):
                out = lc.step(self.mirror[iid], lc.Expire(self.clock.now()))
                assert isinstance(out, lc.Accepted)
                self.mirror[iid] = out.state  # the refusal decided the expiry for everyone
                skip = iid
                before = {t: [r for r in rows if t != "pausepoint_pauses" or iid not in r]
                          for t, rows in before.items()}
            self.refusals.append(Refusal(f"{what} {iid}", before, self.tables(skip)))
            return None
        assert isinstance(expected, lc.Accepted), (
            f"{what} {iid}: the service accepted where the machine refuses with "
            f"{expected.code} ({expected.clause})")
        self.mirror[iid] = expected.state
        return result

    def resume(self, what: str, iid: str, token: str, response: object,
               request: ResumeRequest) -> ResumeOutcome | None:
        valid = isinstance(response, dict)
        d = digest(canonical_json(response)) if valid else ""
        now = self.clock.now()
        expected = lc.step(self.mirror[iid], lc.Resume(
            now=now, response_digest=d, response_valid=valid,
            binding_ok=(request.session_id, request.run_id, request.root_run_id) == (
                "sess", RUNS[self.run_of[iid]].run_id, RUNS[self.run_of[iid]].root_run_id),
            scope_ok=request.scope == "tenant-a"))
        audits = len(self.audit.events)
        out: ResumeOutcome | None = self.call(
            what, iid, expected, lambda: self.svc.resume(token, response, request),
            expires_on_refusal=True)
        audited = [(a.kind, a.interrupt_id) for a in self.audit.events[audits:]]
        if request.scope != "tenant-a":  # audited whatever else refuses it
            assert audited == [("cross_scope_redemption", iid)], "a cross-scope attempt was " \
                "not audited"
        else:
            assert audited == []
        if out is None:
            return None
        if out.replayed:
            self.replays.append((iid, d))
            assert out.result == canonical_json({"first": self.consumed[iid][1]})
        else:
            self.consumes[iid] += 1
            self.consumed[iid] = (response, d, now)
            self.redemptions.append((token, iid))
            self.svc.set_result(iid, {"first": d})
        return out

    # -- rules -------------------------------------------------------------------------------

    @initialize()
    def start(self) -> None:
        pass

    def pause(self, run: str, name: str, payload: tuple[object, bool], checkpoint: bool,
              tool_call: bool) -> str | None:
        iid = f"i{self.n}"
        self.n += 1
        value, valid = payload
        registered = name in ("ask", "pay")
        expected = lc.step(PauseState(), lc.Pause(
            expires_at=self.clock.now() + TTL, registered=registered,
            payload_valid=registered and valid, checkpoint_bound=checkpoint,
            tool_call_bound=tool_call or name == "ask"))
        self.mirror[iid] = PauseState()
        rec = self.call("Pause", iid, expected, lambda: self.svc.pause(
            binding=RUNS[run], name=name, payload=value, interrupt_id=iid,
            tool_call_id="call-1" if tool_call else "",
            checkpoint_id=f"ck-{iid}" if checkpoint else ""))
        if rec is None:
            del self.mirror[iid]
            assert self.svc.ledger.get(iid) is None and self.svc.payloads.get(iid) is None, (
                "a refused pause changed stored state (it left a ledger or payload row)")
            return None
        self.tokens[iid] = rec.token
        self.run_of[iid] = run
        self.asked[iid] = {"name": name, "payload": value,
                           "tool_call_id": "call-1" if tool_call else "",
                           "checkpoint_id": f"ck-{iid}" if checkpoint else ""}
        return iid

    @rule(target=pauses, run=st.sampled_from(sorted(RUNS)), name=st.sampled_from(["ask", "pay"]),
          payload=st.sampled_from([p for p in PAYLOADS if p[1]]),
          turn=st.sampled_from(["written", "written", "failed", "none"]))
    def Pause(self, run: str, name: str, payload: tuple[object, bool], turn: str) -> Any:
        """Execute reaching an ask with every fact right: the pause is taken, and RecordTurn
        follows as a harness does it (the write succeeds or fails), or not yet."""
        iid = self.pause(run, name, payload, checkpoint=True, tool_call=True)
        assert iid is not None
        if turn != "none":
            self.RecordTurn(iid, turn == "written")
        return iid

    @rule(run=st.sampled_from(sorted(RUNS)), name=st.sampled_from(["ask", "pay", "nope"]),
          payload=st.sampled_from(PAYLOADS), checkpoint=st.booleans(), tool_call=st.booleans())
    def PauseRefused(self, run: str, name: str, payload: tuple[object, bool], checkpoint: bool,
                     tool_call: bool) -> None:
        """Execute reaching an ask with any facts (mostly some wrong): a refused pause mints
        nothing and stores nothing."""
        iid = self.pause(run, name, payload, checkpoint, tool_call)
        if iid is not None:  # every fact happened to be right: keep it in play
            self.extra.append(iid)

    @rule(iid=pauses, written=st.booleans())
    def RecordTurn(self, iid: str, written: bool) -> None:
        """The turn-checkpoint write reports ``written``."""
        turn = f"turn-{self.n}"
        self.n += 1
        expected = lc.step(self.mirror[iid], lc.RecordTurn(written))
        real = self.svc.checkpoints
        if not written:
            self.svc.checkpoints = FailingCheckpoints(real)
        try:
            rec = self.call("RecordTurn", iid, expected,
                            lambda: self.svc.record_turn(iid, turn))
        finally:
            self.svc.checkpoints = real
        if rec is not None:
            self.turn_of[iid] = turn

    @rule(iid=pauses, response=st.sampled_from(RESPONSES))
    def ResumeCommit(self, iid: str, response: object) -> None:
        """A person answers with the pause's own token."""
        self.resume("ResumeCommit", iid, self.tokens[iid], response, self.request(iid))

    @precondition(lambda self: bool(self.consumed))
    @rule(data=st.data())
    def Replay(self, data: st.DataObject) -> None:
        """The same answer again, to a consumed pause."""
        iid = data.draw(st.sampled_from(sorted(self.consumed)))
        self.resume("Replay", iid, self.tokens[iid], self.consumed[iid][0], self.request(iid))

    @precondition(lambda self: bool(self.consumed))
    @rule(data=st.data(), response=st.sampled_from(RESPONSES))
    def AnswerAgain(self, data: st.DataObject, response: object) -> None:
        """A second ResumeCommit on a consumed pause: a replay if the response is the same,
        else a conflict."""
        iid = data.draw(st.sampled_from(sorted(self.consumed)))
        self.resume("AnswerAgain", iid, self.tokens[iid], response, self.request(iid))

    @rule(iid=pauses, before=st.sampled_from([0, 1]))
    def ResumeAtExpiry(self, iid: str, before: int) -> None:
        """Tick to exactly a pause's expires_at (or one millisecond before), then answer."""
        target = self.mirror[iid].expires_at - before
        if target > self.clock.now():
            self.clock.advance(target - self.clock.now())
        self.resume("ResumeAtExpiry", iid, self.tokens[iid], {"ok": True}, self.request(iid))

    @rule(iid=pauses, which=st.sampled_from(["scope", "session", "run", "root"]))
    def CrossScopeResume(self, iid: str, which: str) -> None:
        """The pause's own token presented from another scope, session, run or root run."""
        over = {"scope": {"scope": "tenant-b"}, "session": {"session_id": "sess-x"},
                "run": {"run_id": "r9"}, "root": {"root_run_id": "r9"}}[which]
        self.resume("CrossScopeResume", iid, self.tokens[iid], {"ok": True},
                    self.request(iid, **over))

    @rule(iid=pauses, other=pauses, kind=st.sampled_from(["flip", "other-key", "swap",
                                                          "resigned"]),
          pos=st.integers(0, 10**6), char=st.sampled_from(B64 + ".="))
    def ForgedResume(self, iid: str, other: str, kind: str, pos: int, char: str) -> None:
        """A token with a flipped byte, signed by another key under the same key id, with
        another pause's claims spliced in, or validly signed with claims that differ from the
        pause's -- never accepted, nothing changes."""
        token = self.tokens[iid]
        claims = self.ring.verify(token)
        if kind == "flip":
            i = pos % len(token)
            repl = char if char != token[i] else ("A" if token[i] != "A" else "B")
            forged = token[:i] + repl + token[i + 1:]
        elif kind == "other-key":
            forged, _ = self.impostor.mint(claims)
        elif kind == "swap":
            forged = splice(token, self.tokens[other])
        else:
            forged, _ = self.ring.mint(attrs.evolve(claims, scope="tenant-b",
                                                    tool_call_id="forged"))
        if forged == token:
            return
        try:
            self.svc.signer.verify(forged)
            verified = True
        except PausepointError:
            verified = False
        before = self.tables()
        try:
            self.svc.resume(forged, {"ok": True}, self.request(iid))
            accepted = True
        except PausepointError as err:
            accepted = False
            assert err.code in TOKEN_CODES, err
            self.refusals.append(Refusal(f"ForgedResume {kind} {iid}", before, self.tables()))
        self.forgeries.append((kind, iid, verified, accepted))

    @rule(iid=pauses)
    def Expire(self, iid: str) -> None:
        self.call("Expire", iid, lc.step(self.mirror[iid], lc.Expire(self.clock.now())),
                  lambda: self.svc.expire(iid))

    @rule()
    def ExpireDue(self) -> None:
        """The expiry sweep: exactly the live pauses whose expires_at has been reached."""
        now = self.clock.now()
        due = set()
        for iid, s in self.mirror.items():
            out = lc.step(s, lc.Expire(now))
            if s.phase in LIVE and isinstance(out, lc.Accepted):
                self.mirror[iid] = out.state
                due.add(iid)
        assert {r.interrupt_id for r in self.svc.expire_due()} == due

    @rule(ms=st.integers(1, 60))
    def Tick(self, ms: int) -> None:
        self.clock.advance(ms)

    @rule(iid=pauses)
    def Cancel(self, iid: str) -> None:
        self.call("Cancel", iid, lc.step(self.mirror[iid], lc.Cancel()),
                  lambda: self.svc.cancel_pause(iid))

    @rule(run=st.sampled_from(sorted(RUNS)))
    def CancelRun(self, run: str) -> None:
        """Cancel a run: its live pauses and its descendants' are cancelled."""
        for iid, s in self.mirror.items():
            out = lc.step(s, lc.Cancel())
            if self.run_of[iid] in DESCENDANTS[run] and isinstance(out, lc.Accepted):
                self.mirror[iid] = out.state
        self.svc.cancel_run(run)

    @rule(iid=pauses)
    def MarkUnknown(self, iid: str) -> None:
        self.call("MarkUnknown", iid, lc.step(self.mirror[iid], lc.MarkUnknown()),
                  lambda: self.svc.mark_unknown(iid))

    @rule(iid=pauses, resolution=st.sampled_from(list(lc.Resolution)))
    def Reconcile(self, iid: str, resolution: lc.Resolution) -> None:
        self.call("Reconcile", iid, lc.step(self.mirror[iid], lc.Reconcile(resolution)),
                  lambda: self.svc.reconcile(iid, resolution))

    @rule()
    def CrashRestart(self) -> None:
        """Crash and Restart: the store is closed and the file opened again by a new service;
        every pause is still there and pausing again republishes the same token."""
        before = self.tables()
        self.store.close()
        self.store = SqliteStore(self.path)
        self.svc = self._compose()
        for iid, token in self.tokens.items():
            b = RUNS[self.run_of[iid]]
            again = self.svc.pause(binding=b, interrupt_id=iid, **self.asked[iid])
            assert again.token == token, "another token was published after a restart"
            try:  # durability.token.reissue: other claims under the id get nothing
                self.svc.pause(binding=b, name="ask", payload={"other": iid}, interrupt_id=iid)
            except PausepointError as exc:
                assert exc.code is ErrorCode.PAUSE_CONFLICT and token not in str(exc)
            else:
                raise AssertionError("a pause with other claims was handed the issued token")
        assert self.tables() == before

    # -- invariants --------------------------------------------------------------------------

    @invariant()
    def MirrorMatchesLedger(self) -> None:
        rows = self.rows()
        assert set(rows) == set(self.mirror), "ledger rows are not the pauses taken"
        for iid, s in self.mirror.items():
            assert rows[iid].state == s, f"{iid}: stored {rows[iid].state}, machine {s}"

    @invariant()
    def AtMostOnceConsumption(self) -> None:
        assert all(n <= 1 for n in self.consumes.values()), self.consumes
        for iid, rec in self.rows().items():
            if rec.state.phase == Phase.CONSUMED:
                assert self.consumes[iid] == 1, f"{iid} consumed without one winning resume"

    @invariant()
    def NoConsumeAtOrAfterExpiry(self) -> None:
        for iid, rec in self.rows().items():
            if rec.state.phase == Phase.CONSUMED:
                assert rec.state.consumed_at is not None
                assert rec.state.consumed_at < rec.claims.expires_at, (
                    f"{iid} consumed at {rec.state.consumed_at}, expires {rec.claims.expires_at}")
        for iid, (_r, _d, at) in self.consumed.items():
            assert at < self.rows()[iid].claims.expires_at, f"{iid} consumed at its expiry"

    @invariant()
    def ResumableHasTurn(self) -> None:
        for iid, rec in self.rows().items():
            if rec.state.phase == Phase.RESUMABLE:
                assert rec.state.turn_recorded
                turn = self.svc.checkpoints.read(rec.claims.checkpoint_id)
                assert turn is not None and turn == self.turn_of.get(iid), (
                    f"{iid} is resumable but its turn checkpoint is {turn!r}")

    @invariant()
    def LedgerOutstandingMatchesLive(self) -> None:
        live = {iid for iid, rec in self.rows().items() if rec.state.phase in LIVE}
        assert {r.interrupt_id for r in self.svc.ledger.outstanding()} == live
        assert {iid for iid, s in self.mirror.items() if s.phase in LIVE} == live
        assert self.svc.drain_proof("k1") == len(live)

    @invariant()
    def TerminalAbsorbing(self) -> None:
        for iid, rec in self.rows().items():
            first = self.first_terminal.get(iid)
            if first is not None:
                assert rec.state.phase == first, f"{iid} left {first} for {rec.state.phase}"
            elif rec.state.phase in TERMINAL:
                self.first_terminal[iid] = rec.state.phase

    @invariant()
    def RefusalChangesNothing(self) -> None:
        for r in self.refusals:
            assert r.before == r.after, f"the refused {r.what} changed stored state"
        self.refusals.clear()

    @invariant()
    def TokenRedeemsOnlyItsPause(self) -> None:
        for kind, iid, verified, accepted in self.forgeries:
            assert not accepted, f"a {kind} token resumed {iid}"
            assert kind == "resigned" or not verified, f"the signer accepted a {kind} token"
        for token, iid in self.redemptions:
            assert token == self.tokens[iid]
            assert self.ring.verify(token).interrupt_id == iid

    @invariant()
    def ReplayOnlyTheSameResponse(self) -> None:
        for iid, d in self.replays:
            assert d == self.consumed[iid][1], f"{iid}: a different response was replayed"


PauseMachine.TestCase.settings = settings(
    settings.default, deadline=None, suppress_health_check=[HealthCheck.too_slow])
TestPauseMachine = PauseMachine.TestCase


def test_the_ci_profile_runs_200_examples_of_50_steps() -> None:
    """The Done-when line: at least 200 examples x 50 steps in CI (the default profile)."""
    ci = settings.get_profile("ci")
    assert ci.max_examples >= 200 and ci.stateful_step_count >= 50
    default = settings.default
    assert default is not None
    if os.environ.get("CI"):
        assert default.max_examples >= 200 and default.stateful_step_count >= 50
    machine = PauseMachine.TestCase.settings
    assert machine is not None
    assert machine.max_examples == default.max_examples
    assert machine.stateful_step_count == default.stateful_step_count


def teardown_module() -> None:
    if _BASE:
        shutil.rmtree(_BASE.pop(), ignore_errors=True)
