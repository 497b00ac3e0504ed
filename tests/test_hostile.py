"""Issue 9: what got through, or failed untyped, when the service was tried as an attacker would.

Each test here failed on the code before the fix (run it with the old tree on ``PYTHONPATH`` to
see) and names the clause it holds the service to.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pydantic
import pytest

from pausepoint.core.canonical import canonical_json
from pausepoint.core.clauses import ErrorCode
from pausepoint.core.errors import PausepointError
from pausepoint.core.ports import Claims, PauseRecord
from pausepoint.core.registry import Interaction
from pausepoint.core.tokens import Ed25519Key, KeyRing
from pausepoint.engine.clock import ManualClock
from pausepoint.engine.compose import compose
from pausepoint.engine.run import PauseBinding
from pausepoint.engine.service import PauseService, ResumeRequest
from pausepoint.stores import MemoryStore, StoreBundle
from pausepoint_conformance.faults.testbed import StoreSpec, drop, fresh_sqlite
from pg import pg_spec

E = ErrorCode
REQ = ResumeRequest(session_id="s", scope="t")


class Approval(pydantic.BaseModel):
    approved: bool


class Amount(pydantic.BaseModel):
    amount: int


INTERACTIONS = (Interaction("approve", response=Approval), Interaction("ask"),
                Interaction("count", response=Amount))


@pytest.fixture(params=["memory", "sqlite", "postgres"])
def spec(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[StoreSpec | None]:
    if request.param == "memory":
        yield None
        return
    s = fresh_sqlite(tmp_path, "h.db") if request.param == "sqlite" else pg_spec("pp_hostile")
    yield s
    drop(s)


class Deploy:
    def __init__(self, spec: StoreSpec | None, ring: KeyRing | None = None) -> None:
        self.store: StoreBundle = MemoryStore() if spec is None else spec.open()
        self.ring = ring or KeyRing(Ed25519Key.generate("k1"))
        self.clock = ManualClock(1_000)
        self.svc: PauseService = compose(store=self.store, signer=self.ring,
                                         interactions=INTERACTIONS, clock=self.clock,
                                         ttl_ms=10_000).service

    def pause(self, iid: str = "i-1", name: str = "approve", payload: object = None,
              run: str = "run-1", turn: bool = True, **over: Any) -> PauseRecord:
        binding = PauseBinding(**{"run_id": run, "root_run_id": run, "session_id": "s",
                                  "thread_id": run, "scope": "t", **over})
        rec = self.svc.pause(binding=binding, name=name,
                             payload={"q": 1} if payload is None else payload,
                             interrupt_id=iid, checkpoint_id=f"{run}@0")
        return self.svc.record_turn(iid, "{}") if turn else rec

    def rows(self) -> object:
        from pausepoint_conformance.faults.testbed import state_rows

        if isinstance(self.store, MemoryStore):
            s = self.store
            return (dict(s._pauses), dict(s._payloads), dict(s._checkpoints))
        return state_rows(self.store)


@pytest.fixture
def d(spec: StoreSpec | None) -> Iterator[Deploy]:
    dep = Deploy(spec)
    yield dep
    dep.store.close()


def refused(code: ErrorCode, fn: Any, *args: Any, **kw: Any) -> PausepointError:
    with pytest.raises(PausepointError) as info:
        fn(*args, **kw)
    assert info.value.code is code, info.value
    return info.value


# -- strict responses ------------------------------------------------------------------------


def test_a_string_is_no_bool_and_the_run_gets_the_validated_value(d: Deploy) -> None:
    """resume.response.strict: ``{"approved": "false"}`` is refused (it used to be accepted,
    and the run got the truthy string); a real answer reaches the run as the model instance."""
    rec = d.pause()
    before = d.rows()
    for coerced in ({"approved": "false"}, {"approved": 0}, {"approved": "true"}):
        refused(E.RESPONSE_INVALID, d.svc.resume, rec.token, coerced, REQ)
    assert d.rows() == before
    out = d.svc.resume(rec.token, {"approved": False}, REQ)
    assert out.answer == Approval(approved=False) and type(out.answer) is Approval


def test_an_int_field_takes_no_string_but_one_point_zero_is_one(d: Deploy) -> None:
    """resume.response.strict, input.canonical: ``"7"`` is no int; ``7.0`` is the JSON number 7."""
    rec = d.pause(name="count")
    refused(E.RESPONSE_INVALID, d.svc.resume, rec.token, {"amount": "7"}, REQ)
    assert d.svc.resume(rec.token, {"amount": 7.0}, REQ).answer == Amount(amount=7)


# -- canonical JSON (RFC 8785) ---------------------------------------------------------------


@pytest.mark.parametrize(("first", "retry"), [({"n": 1}, {"n": 1.0}), ({"n": -0.0}, {"n": 0}),
                                              ({"a": 1, "b": "é"}, {"b": "é", "a": 1.0})])
def test_a_retry_reserialised_by_javascript_replays(d: Deploy, first: object,
                                                    retry: object) -> None:
    """input.canonical, replay.same-response: JavaScript cannot tell 1.0 from 1 (or -0 from 0);
    its retry is the same answer, not response_conflict."""
    rec = d.pause(name="ask")
    assert not d.svc.resume(rec.token, first, REQ).replayed
    assert d.svc.resume(rec.token, retry, REQ).replayed
    refused(E.RESPONSE_CONFLICT, d.svc.resume, rec.token, {"n": 2}, REQ)


# -- safe reissue ----------------------------------------------------------------------------


def test_reissue_hands_out_nothing_to_another_caller(d: Deploy) -> None:
    """durability.token.reissue: the same id with identical claims gives the same token; from
    another session, scope, run, name or with another payload it is refused and discloses
    nothing of the issued pause."""
    first = d.pause(turn=False)
    assert d.pause(turn=False) == first
    before = d.rows()
    for over in ({"session_id": "attacker"}, {"scope": "other"}, {"run": "run-2"},
                 {"payload": {"q": 2}}, {"name": "ask"}, {"parent_run_id": "p"}):
        err = refused(E.PAUSE_CONFLICT, d.pause, turn=False, **over)
        for secret in (first.token, first.payload, first.claims.payload_digest, "run-1"):
            assert secret not in str(err)
    assert d.rows() == before


# -- privacy ---------------------------------------------------------------------------------


def test_a_token_does_not_reveal_its_payload(d: Deploy) -> None:
    """token.discloses: the payload digest in a token is keyed -- the plain SHA-256 of a guessed
    payload does not match it, and another deployment digests the same payload differently."""
    payload = {"amount": 7342, "to": "acct-17"}
    rec = d.pause(payload=payload, name="ask")
    claims = d.ring.verify(rec.token)
    guess = canonical_json(payload)
    for text in (guess, guess.replace(",", ", ")):
        assert claims.payload_digest != hashlib.sha256(text.encode()).hexdigest()
    other = Deploy(None)
    assert other.pause(payload=payload, name="ask").claims.payload_digest != claims.payload_digest
    assert payload["to"] not in rec.token


# -- typed errors ----------------------------------------------------------------------------


@pytest.mark.parametrize("bad", ["a\ud800", "\udfff", "x\x00y"])
@pytest.mark.parametrize("field", ["iid", "run", "session_id", "scope"])
def test_ids_that_are_not_text_are_typed_and_write_nothing(d: Deploy, bad: str,
                                                           field: str) -> None:
    """input.bounded, input.bounded: a lone surrogate (UnicodeEncodeError on SQLite and
    PostgreSQL) or a NUL (store_unavailable on PostgreSQL) in an id is input_invalid, and no row
    is left behind."""
    before = d.rows()
    refused(E.INPUT_INVALID, d.pause, turn=False, **{field: bad})
    assert d.rows() == before


def test_the_store_refuses_what_it_cannot_keep(spec: StoreSpec | None) -> None:
    """input.bounded: below the service too, a store maps such a value to input_invalid."""
    if spec is None:
        pytest.skip("the memory store keeps any str")
    store = spec.open()
    try:
        for bad in ("a\ud800", "a\x00"):
            refused(E.INPUT_INVALID, store.ledger.get, bad)
            refused(E.INPUT_INVALID, store.payloads.record, bad, "{}")
    finally:
        store.close()


class FailingIssue:
    """A ledger whose issue fails as a store that did not answer."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def issue(self, record: PauseRecord, **kw: Any) -> bool:
        raise PausepointError(E.STORE_UNAVAILABLE, "durability.commit-per-change", "down")


def test_a_failed_pause_leaves_no_payload_row(d: Deploy) -> None:
    """pause.refusal.before-mint, input.bounded: a pause whose ledger write fails leaves
    no payload row behind."""
    d.svc.ledger = FailingIssue(d.svc.ledger)
    refused(E.STORE_UNAVAILABLE, d.pause, turn=False)
    assert d.store.payloads.get("i-1") is None


def test_a_corrupted_ledger_row_is_typed(spec: StoreSpec | None) -> None:
    """input.bounded: a row the store did not write (an unknown phase, a text where an
    integer belongs) is store_corrupt, not a bare ValueError -- whoever reads it."""
    if spec is None:
        pytest.skip("the memory store holds records, not rows")
    dep = Deploy(spec)
    try:
        rec = dep.pause("i-1")
        dep.pause("i-2", run="run-2")
        write = dep.store.write  # type: ignore[attr-defined]
        write("UPDATE pausepoint_pauses SET phase = ? WHERE interrupt_id = ?", ("bogus", "i-1"))
        refused(E.STORE_CORRUPT, dep.store.ledger.get, "i-1")
        refused(E.STORE_CORRUPT, dep.store.ledger.by_run, "run-1")
        refused(E.STORE_CORRUPT, dep.svc.resume, rec.token, {"approved": True}, REQ)
        refused(E.STORE_CORRUPT, dep.svc.cancel_run, "run-1")
        if spec.kind == "sqlite":  # SQLite keeps any type in any column
            write("UPDATE pausepoint_pauses SET issued_at = ? WHERE interrupt_id = ?",
                  ("soon", "i-2"))
            refused(E.STORE_CORRUPT, dep.store.ledger.get, "i-2")
    finally:
        dep.store.close()


def test_a_corrupted_run_row_is_typed(spec: StoreSpec | None) -> None:
    """input.bounded: a run row with a status the store never writes is store_corrupt, not a
    bare ValueError or KeyError."""
    if spec is None:
        pytest.skip("the memory store holds records, not rows")
    dep = Deploy(spec)
    try:
        dep.pause("i-1")
        dep.store.write(  # type: ignore[attr-defined]
            "INSERT INTO pausepoint_runs (run_id, root_run_id, parent_run_id, session_id, "
            "thread_id, scope, status, state, epoch, owner, lease_until) "
            "VALUES (?, ?, '', 's', 't', 'sc', ?, '{}', 0, '', 0)", ("r-x", "r-x", "bogus"))
        refused(E.STORE_CORRUPT, dep.store.runs.get, "r-x")
    finally:
        dep.store.close()


def test_the_reserved_reconcile_name_is_refused_from_a_run(d: Deploy) -> None:
    """pause.interaction.registered: ``pausepoint.reconcile`` is the engine's own; a run naming
    it is refused with interaction_unregistered (it used to be accepted, and answering it
    wedged the run)."""
    before = d.rows()
    refused(E.INTERACTION_UNREGISTERED, d.pause, name="pausepoint.reconcile",
            payload={"run_id": "run-1", "effect": "0:x"}, turn=False)
    assert d.rows() == before


# -- rotation without strands ----------------------------------------------------------------


class RetireDuringMint:
    """A signer that, between minting a token and the ledger issuing its row, lets another
    server rotate and retire the key it minted with -- the race that stranded a pause."""

    def __init__(self, ring: KeyRing, retire: Any) -> None:
        self.ring = ring
        self.retire = retire
        self.done = False

    def mint(self, claims: Claims) -> tuple[str, str]:
        out = self.ring.mint(claims)
        if not self.done:
            self.done = True
            self.retire()
        return out

    def verify(self, token: str) -> Claims:
        return self.ring.verify(token)


def test_a_key_retired_between_mint_and_issue_strands_nothing(d: Deploy) -> None:
    """token.rotation.drain: the drain proof said 0 while a pause minted under the key was on
    its way to the ledger; that pause must not land with a token no key verifies."""
    k2 = Ed25519Key.generate("k2")

    def rotate_and_retire() -> None:
        d.ring.rotate(k2)
        d.svc.retire_key("k1", d.ring)

    d.svc.signer = RetireDuringMint(d.ring, rotate_and_retire)
    rec = d.pause()
    assert "k1" not in d.ring
    assert rec.kid == "k2" and d.ring.verify(rec.token) == rec.claims
    assert not d.svc.resume(rec.token, {"approved": True}, REQ).replayed


def test_retire_refuses_a_key_with_a_pause_in_flight(d: Deploy) -> None:
    """token.rotation.drain: once a row is issued, the key's retirement is refused."""
    d.pause()
    d.ring.rotate(Ed25519Key.generate("k2"))
    refused(E.KEY_NOT_DRAINED, d.svc.retire_key, "k1", d.ring)
    refused(E.KEY_NOT_DRAINED, d.svc.retire_key, "k2", d.ring)
    refused(E.KEY_UNKNOWN, d.svc.retire_key, "k9", d.ring)


def test_rotation_races_minting_without_strands(spec: StoreSpec | None) -> None:
    """token.rotation.drain, under real concurrency: pausers on several servers sharing one
    ledger keep pausing while another server rotates and retires keys as soon as its proof
    allows; afterwards every outstanding pause's key is still in the retiring server's ring."""
    if spec is None:
        pytest.skip("needs a store shared by several servers")
    keys = [Ed25519Key.generate(f"k{i}") for i in range(6)]
    admin_ring = KeyRing(keys[0])
    admin = Deploy(spec, admin_ring)
    servers = [Deploy(spec, admin_ring) for _ in range(3)]
    stop = threading.Event()
    errors: list[BaseException] = []

    def pauser(n: int, dep: Deploy) -> None:
        i = 0
        while not stop.is_set():
            try:
                dep.pause(f"p{n}-{i}", run=f"r{n}-{i}", turn=False)
            except PausepointError as exc:
                if exc.code is not E.KEY_UNKNOWN:  # the ring moved on 4 times in a row
                    errors.append(exc)
            except BaseException as exc:
                errors.append(exc)
            i += 1

    threads = [threading.Thread(target=pauser, args=(n, s)) for n, s in enumerate(servers)]
    for t in threads:
        t.start()
    try:
        for new in keys[1:]:
            old = admin_ring.active_kid
            admin_ring.rotate(new)
            for rec in admin.store.ledger.outstanding():  # drain: expire what the old key signed
                if rec.kid == old:
                    admin.svc.cancel_pause(rec.interrupt_id)
            try:
                admin.svc.retire_key(old, admin_ring)
            except PausepointError as exc:
                assert exc.code is E.KEY_NOT_DRAINED
    finally:
        stop.set()
        for t in threads:
            t.join()
    assert not errors, errors[:3]
    for rec in admin.store.ledger.outstanding():
        assert rec.kid in admin_ring, f"{rec.interrupt_id} stranded under retired {rec.kid}"
        assert admin_ring.verify(rec.token) == rec.claims
    for dep in (admin, *servers):
        dep.store.close()


# -- stdio limits ----------------------------------------------------------------------------


def _serve(lines: list[str]) -> tuple[int, list[dict[str, Any]]]:
    import io
    import json

    from pausepoint_conformance.adapters.fake import FakeAdapter
    from pausepoint_conformance.protocol.stdio import serve

    out = io.StringIO()
    status = serve(FakeAdapter(), io.StringIO("".join(line + "\n" for line in lines)), out)
    return status, [json.loads(x) for x in out.getvalue().splitlines()]


HELLO = '{"id":1,"op":"hello","args":{"protocol":1,"suite":"t"}}'
RESET = '{"id":2,"op":"reset","args":{"ttl_ms":1000}}'


@pytest.mark.parametrize("hostile", [
    '{"id":2,"op":"reset","args":' + "[" * 100_000 + "]" * 100_000 + "}",
    "[" * 100_000,
    '{"id":2,"op":"reset","args":{"x":"' + "y" * (5 * 1024 * 1024) + '"}}',
    '{"id":2,"id":3,"op":"reset","args":{}}',
    '{"id":2,"op":"reset","args":{"ttl_ms":NaN}}',
])
def test_the_implementation_side_refuses_hostile_lines_typed(hostile: str) -> None:
    """input.bounded: a deep, long or non-strict line is a protocol_invalid refusal (it used
    to crash the adapter with RecursionError); the session goes on."""
    status, answers = _serve([HELLO, hostile, RESET])
    assert status == 0
    assert answers[1]["result"]["status"] == "refused"
    assert answers[1]["result"]["code"] == "protocol_invalid"
    assert answers[2]["result"]["status"] == "ok"


def test_nothing_runs_without_a_handshake_and_a_failed_one_ends_the_process() -> None:
    """input.bounded: a request before hello is refused and runs nothing; a hello of another
    protocol version is refused and the implementation stops reading."""
    status, answers = _serve([RESET, HELLO, RESET])
    assert answers[0]["result"]["code"] == "protocol_invalid"
    assert [a["result"]["status"] for a in answers[1:]] == ["ok", "ok"]
    status, answers = _serve(['{"id":1,"op":"hello","args":{"protocol":99,"suite":"t"}}',
                              RESET])
    assert status != 0 and len(answers) == 1
    assert answers[0]["result"]["code"] == "protocol_invalid"


FAKE_IMPL = r'''
import sys, json
hello = sys.stdin.readline()
rid = json.loads(hello)["id"]
mode = sys.argv[1]
if mode == "bad-hello":
    print(json.dumps({"id": rid, "result": {"status": "refused", "code": "wiring_invalid"}}),
          flush=True)
    import time; time.sleep(600)
ok = {"status": "ok", "data": {"implementation": {"name": "x", "version": "1",
      "language": "python"}, "protocol": 1, "groups": [], "notes": ""}}
print(json.dumps({"id": rid, "result": ok}), flush=True)
req = json.loads(sys.stdin.readline())
if mode == "deep":
    print('{"id":%d,"result":' % req["id"] + "[" * 200000 + "]" * 200000 + "}", flush=True)
else:
    print('{"id":%d,"result":{"status":"ok","data":{}},"x":"' % req["id"] + "y" * (5 << 20)
          + '"}', flush=True)
import time; time.sleep(600)
'''


@pytest.mark.parametrize("mode", ["deep", "long"])
def test_the_suite_side_survives_a_hostile_answer(tmp_path: Path, mode: str) -> None:
    """input.bounded: an adapter answering with a line nested 200 000 deep (or 5 MiB long) is
    an errored result naming protocol_invalid, and its process is killed -- it used to crash
    ``pausepoint conform`` with a RecursionError and no report."""
    import sys

    from pausepoint_conformance.protocol.stdio import StdioAdapter
    from pausepoint_conformance.protocol.wire import Errored, ResetArgs

    script = tmp_path / "impl.py"
    script.write_text(FAKE_IMPL)
    adapter = StdioAdapter([sys.executable, str(script), mode], timeout=20)
    got = adapter.reset(ResetArgs(ttl_ms=1000))
    assert isinstance(got, Errored) and "protocol_invalid" in got.traceback
    assert adapter._p is None  # killed
    adapter.close()


def test_a_failed_handshake_kills_the_adapter_process(tmp_path: Path) -> None:
    """input.bounded: after a refused hello the suite ends the process (it used to stay alive,
    and later calls went on without a handshake)."""
    import sys

    from pausepoint_conformance.protocol.stdio import StdioAdapter
    from pausepoint_conformance.protocol.wire import Errored, ResetArgs

    script = tmp_path / "impl.py"
    script.write_text(FAKE_IMPL)
    adapter = StdioAdapter([sys.executable, str(script), "bad-hello"], timeout=20)
    seen: list[Any] = []
    original = adapter._fail

    def spy(why: str) -> Any:
        seen.append(adapter._p.proc if adapter._p is not None else None)
        return original(why)

    adapter._fail = spy  # type: ignore[method-assign]
    assert isinstance(adapter.reset(ResetArgs(ttl_ms=1000)), Errored)
    assert seen and seen[0] is not None and seen[0].poll() is not None  # the process is gone
    assert adapter._p is None
