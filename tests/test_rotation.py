"""Key rotation with a drain proof (clause ``token.rotation.drain``), on SQLite and PostgreSQL.

A new key signs new pauses; the old key keeps verifying the tokens it signed until the ledger's
drain proof (``ledger.outstanding_for_key`` / ``service.drain_proof``) shows none of them is
outstanding -- paused, resumable or with an unknown outcome.  Retiring it earlier is refused
with ``key_not_drained``; once retired, what it signed no longer verifies.  A second resume
server on the same database, holding only the public half of the old key, sees the same proof.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from pausepoint.core.clauses import ErrorCode
from pausepoint.core.errors import PausepointError
from pausepoint.core.lifecycle import Phase, Resolution
from pausepoint.core.ports import PauseRecord
from pausepoint.core.tokens import Ed25519Key, KeyRing, b64url_decode
from pausepoint.engine.clock import ManualClock
from pausepoint.engine.compose import compose
from pausepoint.engine.harness import DEFAULT_INTERACTIONS
from pausepoint.engine.run import PauseBinding
from pausepoint.engine.service import PauseService, ResumeRequest
from pausepoint.stores import StoreBundle
from pausepoint_conformance.faults.testbed import StoreSpec, drop, fresh_sqlite
from pg import pg_spec

TTL = 1_000
REQ = ResumeRequest(session_id="s", scope="t")


@pytest.fixture(params=["sqlite", "postgres"])
def spec(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[StoreSpec]:
    s = fresh_sqlite(tmp_path, "rot.db") if request.param == "sqlite" else pg_spec("pp_rot")
    yield s
    drop(s)


class Server:
    """One resume server: its own store handle (connections), key ring and clock."""

    def __init__(self, spec: StoreSpec, ring: KeyRing, clock: ManualClock) -> None:
        self.store: StoreBundle = spec.open()
        self.ring = ring
        self.service: PauseService = compose(
            store=self.store, signer=ring, interactions=DEFAULT_INTERACTIONS, clock=clock,
            ttl_ms=TTL).service

    def pause(self, iid: str, resumable: bool = True) -> PauseRecord:
        run = f"run-{iid}"
        binding = PauseBinding(run_id=run, root_run_id=run, session_id="s", thread_id=run,
                               scope="t")
        rec = self.service.pause(binding=binding, name="approve", payload={"iid": iid},
                                 interrupt_id=iid, checkpoint_id=f"{run}@0")
        return self.service.record_turn(iid, "{}") if resumable else rec


def _kid_of(token: str) -> str:
    import json

    return str(json.loads(b64url_decode(token.split(".")[1]))["kid"])


def _refused(code: ErrorCode, fn: object, *args: object) -> None:
    with pytest.raises(PausepointError) as info:
        fn(*args)  # type: ignore[operator]
    assert info.value.code == code, info.value


def test_rotate_then_drain_then_retire(spec: StoreSpec) -> None:
    clock = ManualClock(0)
    k1, k2 = Ed25519Key.generate("k1"), Ed25519Key.generate("k2")
    ring = KeyRing(k1)
    a = Server(spec, ring, clock)
    try:
        old = [a.pause(f"old-{i}") for i in range(4)]
        assert {r.kid for r in old} == {"k1"}

        ring.rotate(k2)  # the new key signs new pauses
        new = a.pause("new-0")
        assert new.kid == "k2" and _kid_of(new.token) == "k2"
        assert a.service.drain_proof("k1") == 4 == a.store.ledger.outstanding_for_key("k1")
        assert a.service.drain_proof("k2") == 1

        # a second server on the same database, holding only the old key's public half
        ring_b = KeyRing(k2, [k1.verify_key()])
        b = Server(spec, ring_b, clock)
        try:
            assert b.service.drain_proof("k1") == 4
            _refused(ErrorCode.KEY_NOT_DRAINED, ring.retire, "k1", a.service.drain_proof("k1"))
            _refused(ErrorCode.KEY_NOT_DRAINED, ring_b.retire, "k1", b.service.drain_proof("k1"))

            # the old key keeps verifying: its tokens are answered, on either server
            assert not a.service.resume(old[0].token, {"approved": True}, REQ).replayed
            assert not b.service.resume(old[1].token, {"approved": True}, REQ).replayed
            assert a.service.drain_proof("k1") == 2
            _refused(ErrorCode.KEY_NOT_DRAINED, ring.retire, "k1", a.service.drain_proof("k1"))

            # an unknown outcome is still outstanding: it can be answered after reconciling
            a.service.mark_unknown(old[2].interrupt_id)
            assert b.service.drain_proof("k1") == 2
            a.service.reconcile(old[2].interrupt_id, Resolution.NOT_APPLIED)
            a.service.cancel_pause(old[2].interrupt_id)  # cancelled: no longer outstanding
            assert b.service.drain_proof("k1") == 1
            _refused(ErrorCode.KEY_NOT_DRAINED, ring_b.retire, "k1", b.service.drain_proof("k1"))

            clock.advance(TTL)  # the last one expires: drained
            assert [r.interrupt_id for r in b.service.expire_due()] == [
                old[3].interrupt_id, new.interrupt_id]
            assert a.service.drain_proof("k1") == 0 == b.service.drain_proof("k1")

            ring.retire("k1", a.service.drain_proof("k1"))
            ring_b.retire("k1", b.service.drain_proof("k1"))
            assert ring.kids() == ("k2",) == ring_b.kids()
            # what the retired key signed no longer verifies, even a replay of an answer
            yes = {"approved": True}
            _refused(ErrorCode.TOKEN_INVALID, a.service.resume, old[0].token, yes, REQ)
            _refused(ErrorCode.TOKEN_INVALID, b.service.resume, old[1].token, yes, REQ)
            # the active key is never drained (it keeps signing): rotate first
            _refused(ErrorCode.KEY_NOT_DRAINED, ring.retire, "k2", 0)
            _refused(ErrorCode.KEY_UNKNOWN, ring.retire, "k1", 0)
            later = a.pause("new-1")
            assert later.kid == "k2"
            assert b.service.resume(later.token, {"approved": True}, REQ).record.state.phase \
                == Phase.CONSUMED
        finally:
            b.store.close()
    finally:
        a.store.close()


def test_a_paused_not_resumable_pause_also_holds_its_key(spec: StoreSpec) -> None:
    """``paused`` (turn not yet recorded) counts as outstanding: its token may still become
    redeemable, so its key may not go."""
    clock = ManualClock(0)
    ring = KeyRing(Ed25519Key.generate("k1"))
    a = Server(spec, ring, clock)
    try:
        rec = a.pause("p-0", resumable=False)
        assert rec.state.phase == Phase.PAUSED
        ring.rotate(Ed25519Key.generate("k2"))
        assert a.service.drain_proof("k1") == 1
        _refused(ErrorCode.KEY_NOT_DRAINED, ring.retire, "k1", a.service.drain_proof("k1"))
        a.service.record_turn("p-0", "{}")
        # verified by the old key after the rotation
        a.service.resume(rec.token, {"approved": True}, REQ)
        ring.retire("k1", a.service.drain_proof("k1"))
    finally:
        a.store.close()
