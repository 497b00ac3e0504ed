"""Bad input gets a typed refusal and changes no stored state (`input.bounded`,
`lifecycle.refusal.no-change`).

A deployment is set up with pauses in every phase; then malformed, oversized, non-text and
non-ASCII tokens, wrongly typed, oversized and deeply nested payloads and responses, unknown
interactions and unknown interrupt ids are thrown at it.  Each must raise a
:class:`~pausepoint.core.errors.PausepointError` whose code is in the closed set and whose clause is
in the catalogue -- never anything else -- and the store (every table of the SQLite file,
dumped) must be byte-for-byte what it was.
"""

from __future__ import annotations

import enum
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pausepoint.core import lifecycle as lc
from pausepoint.core.canonical import MAX_BYTES, MAX_DEPTH
from pausepoint.core.clauses import CLAUSE_BY_ID, ErrorCode, clause
from pausepoint.core.errors import PausepointError
from pausepoint.core.lifecycle import Phase
from pausepoint.core.ports import PauseRecord
from pausepoint.core.tokens import MAX_TOKEN_LENGTH
from pausepoint.engine.service import ResumeRequest
from pausepoint.stores import SqliteStore, StoreBundle
from test_service import BINDING, REQUEST, Env, make_env, stored, take

E = ErrorCode
TOKEN_CODES = frozenset({E.TOKEN_MALFORMED, E.TOKEN_INVALID})


def nested(depth: int) -> object:
    """A value of exactly ``depth`` levels of nesting (``[]`` has depth 1)."""
    value: object = []
    for i in range(depth - 1):
        value = [value] if i % 2 else {"k": value}
    return value


def cyclic() -> list[object]:
    loop: list[object] = []
    loop.append(loop)
    return loop


class Colour(enum.Enum):
    RED = 1


class Opaque:
    pass


def bad_values() -> list[Any]:
    """Values that are not bounded JSON of Unicode text: wrong types, non-finite numbers,
    non-text keys, lone surrogates, too long, too deep, cyclic."""
    return [
        pytest.param({1, 2}, id="set"), pytest.param({"a": {1}}, id="nested-set"),
        pytest.param(b"bytes", id="bytes"), pytest.param({"b": bytearray(b"x")}, id="bytearray"),
        pytest.param(Opaque(), id="object"), pytest.param({"o": Opaque()}, id="nested-object"),
        pytest.param((1, 2), id="tuple"), pytest.param({"t": (1,)}, id="nested-tuple"),
        pytest.param(float("nan"), id="nan"), pytest.param({"x": float("inf")}, id="inf"),
        pytest.param({1: "a"}, id="int-key"), pytest.param({"c": Colour.RED}, id="enum"),
        pytest.param(OrderedDict(a=1), id="dict-subclass"),
        pytest.param({"n": 10**5000}, id="huge-int"),
        pytest.param({"s": "ok \ud800"}, id="lone-high-surrogate"),
        pytest.param(["\udfff"], id="lone-low-surrogate"),
        pytest.param({"\udc80": 1}, id="surrogate-key"),
        pytest.param({"s": "x" * 10_000_000}, id="ten-megabyte-string"),
        pytest.param({"s": "x" * (MAX_BYTES - 7)}, id="oversized-by-one"),
        pytest.param(["y" * 1000] * 100, id="oversized-list"),
        pytest.param(nested(MAX_DEPTH + 1), id="nested-too-deep"),
        pytest.param(nested(100_000), id="nested-far-too-deep"),
        pytest.param(cyclic(), id="cycle"),
        pytest.param(print, id="function"),
    ]


def assert_typed(err: PausepointError, codes: frozenset[ErrorCode] | ErrorCode) -> None:
    wanted = codes if isinstance(codes, frozenset) else frozenset({codes})
    assert err.code in wanted, err
    assert err.code in set(ErrorCode) and err.clause in CLAUSE_BY_ID and err.message


def refusal(fn: Callable[..., Any], *args: Any, **kw: Any) -> PausepointError:
    """Call ``fn``; it must raise a PausepointError (anything else escaping fails the test)."""
    try:
        out = fn(*args, **kw)
    except PausepointError as err:
        return err
    raise AssertionError(f"bad input accepted: {out!r}")


class World:
    """A deployment with a pause in every phase, and a way to say nothing changed."""

    def __init__(self, store: StoreBundle) -> None:
        self.env: Env = make_env(store)
        env = self.env
        self.live: PauseRecord = take(env, "i-res", "refund", {"amount": 3})
        self.paused = take(env, "i-paused", turn=False)
        self.done = take(env, "i-done")
        env.svc.resume(self.done.token, {"ok": 1}, REQUEST)
        self.cancelled = take(env, "i-cancel")
        env.svc.cancel_pause("i-cancel")
        self.unknown = take(env, "i-unknown")
        env.svc.mark_unknown("i-unknown")
        self.records = [self.live, self.paused, self.done, self.cancelled, self.unknown]
        self.before = env.snapshot()
        self.audit = list(env.audit.events)
        self.minted = len(env.signer.minted)

    def unchanged(self) -> None:
        assert self.env.snapshot() == self.before, "bad input changed stored state"
        assert self.env.audit.events == self.audit
        assert len(self.env.signer.minted) == self.minted

    def still_answerable(self) -> None:
        """`resume.refusal.keeps-pause`: after all that, a valid answer still works."""
        out = self.env.svc.resume(self.live.token, {"approve": True}, REQUEST)
        assert not out.replayed and out.record.state.phase == Phase.CONSUMED


@pytest.fixture
def world(store: StoreBundle) -> World:
    return World(store)


# -- tokens ----------------------------------------------------------------------------------


def bad_tokens(valid: str) -> list[object]:
    head, _claims, _sig = valid.rsplit(".", 2)
    return [
        "", " ", "garbage", "pp1", "pp1...", "pp1.a.b.c", "pp2" + valid[3:], valid + "=",
        valid + ".", valid + " ", " " + valid, valid[:-1], valid + valid, valid.upper(),
        valid[:10] + "é" + valid[11:], "é" * 20, "\x00" * 10, "x" * (MAX_TOKEN_LENGTH + 1),
        valid + "A" * (MAX_TOKEN_LENGTH + 1 - len(valid)), head + ".." + _sig,
        valid.replace(".", ".=", 1), "pp1." + "A" * 4000,
        None, 123, 1.5, True, b"bytes", valid.encode(), bytearray(b"x"), [valid], {"t": valid},
        (valid,), Opaque(), {valid},
    ]


def test_malformed_and_wrongly_typed_tokens(world: World) -> None:
    """`input.bounded`, `token.parse.strict`, `resume.token.authentic`: malformed, oversized,
    non-ASCII and non-text tokens are refused with a token code, for every pause, and nothing
    is stored (no audit record either)."""
    n = 0
    for rec in world.records:
        for token in bad_tokens(rec.token):
            err = refusal(world.env.svc.resume, token, {"approve": True}, REQUEST)
            assert_typed(err, TOKEN_CODES)
            err = refusal(world.env.svc.signer.verify, token)
            assert_typed(err, TOKEN_CODES)
            n += 1
    assert n > 100
    world.unchanged()
    world.still_answerable()


def test_token_fuzz(tmp_path: Path) -> None:
    """`input.bounded`: arbitrary text, bytes, numbers and mutations of a real token are refused
    with a token code and change nothing (SQLite store, dumped before and after)."""
    w = World(SqliteStore(tmp_path / "fuzz.db"))
    valid = w.live.token

    mutated = st.tuples(st.integers(0, len(valid) - 1), st.text(min_size=0, max_size=3)).map(
        lambda t: valid[:t[0]] + t[1] + valid[t[0] + 1:]).filter(lambda s: s != valid)

    @settings(max_examples=300, deadline=None)
    @given(st.one_of(st.text(), st.binary(), st.integers(), st.none(), mutated,
                     st.text(alphabet="pp1.ABCxyz-_=", max_size=200)))
    def check(token: object) -> None:
        err = refusal(w.env.svc.resume, token, {"approve": True}, REQUEST)
        assert_typed(err, TOKEN_CODES)

    check()
    w.unchanged()
    w.still_answerable()
    w.env.store.close()


# -- responses -------------------------------------------------------------------------------


@pytest.mark.parametrize("response", bad_values())
def test_bad_responses_are_refused_and_change_nothing(world: World, response: object) -> None:
    """`input.bounded`, `resume.response.schema`: a wrongly typed, oversized, too deeply nested
    or cyclic response is refused with response_invalid on a resumable pause (for the pydantic
    and the plain-dict interaction alike); nothing changes; a valid answer then works."""
    ask = take(world.env, "i-ask")
    world.before, world.minted = world.env.snapshot(), len(world.env.signer.minted)
    for rec in (world.live, ask):
        err = refusal(world.env.svc.resume, rec.token, response, REQUEST)
        assert_typed(err, E.RESPONSE_INVALID)
        assert err.clause == clause("resume.response.schema")
    world.unchanged()
    world.still_answerable()


def test_bad_responses_to_decided_pauses_are_refused_by_their_state(world: World) -> None:
    """`input.bounded`, `race.decided-once`, `resume.unknown-outcome.blocks`: on the other
    phases the decided state (or the response check before the unknown-outcome and turn
    checks) refuses, always with a typed code, and nothing changes."""
    expected = {"i-done": E.RESPONSE_CONFLICT, "i-cancel": E.PAUSE_CANCELLED,
                "i-unknown": E.RESPONSE_INVALID, "i-paused": E.RESPONSE_INVALID}
    for rec in world.records[1:]:
        for p in bad_values():
            (response,) = p.values
            err = refusal(world.env.svc.resume, rec.token, response, REQUEST)
            assert_typed(err, expected[rec.interrupt_id])
    world.unchanged()


def test_response_bounds_are_exactly_the_documented_ones(world: World) -> None:
    """`input.bounded`: a response of exactly MAX_BYTES of canonical JSON and exactly MAX_DEPTH
    levels is accepted; one more byte or level is refused (see the parametrised cases)."""
    at_size = take(world.env, "i-size")
    at_depth = take(world.env, "i-depth")
    big = {"s": "x" * (MAX_BYTES - 8)}
    assert not world.env.svc.resume(at_size.token, big, REQUEST).replayed
    assert not world.env.svc.resume(at_depth.token, {"d": nested(MAX_DEPTH - 1)},
                                    REQUEST).replayed


@settings(max_examples=100, deadline=None)
@given(st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=5),
              st.binary(max_size=3), st.sets(st.integers(), max_size=2),
              st.floats(allow_nan=True), st.builds(Opaque)),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.tuples(inner),
                            st.dictionaries(st.one_of(st.text(max_size=3), st.integers()),
                                            inner, max_size=3)),
    max_leaves=8))
def test_response_fuzz_never_escapes_untyped(response: object) -> None:
    """`input.bounded`: any mixture of JSON and non-JSON values as a response is either a
    valid answer or refused with response_invalid -- never another exception."""
    from pausepoint.stores import MemoryStore

    env = make_env(MemoryStore())
    rec = take(env, "i-1")
    before = env.snapshot()
    try:
        out = env.svc.resume(rec.token, response, REQUEST)
    except PausepointError as err:
        assert_typed(err, E.RESPONSE_INVALID)
        assert env.snapshot() == before
    else:
        assert out.record.state.phase == Phase.CONSUMED


# -- payloads and interactions ---------------------------------------------------------------


@pytest.mark.parametrize("payload", bad_values())
def test_bad_payloads_are_refused_before_mint(world: World, payload: object) -> None:
    """`input.bounded`, `pause.payload.schema`, `pause.refusal.before-mint`: refused with
    payload_invalid, nothing minted, nothing stored."""
    for name in ("ask", "refund"):
        err = refusal(world.env.svc.pause, binding=BINDING, name=name, payload=payload,
                      interrupt_id="i-new", checkpoint_id="ck")
        assert_typed(err, E.PAYLOAD_INVALID)
        assert err.clause == clause("pause.payload.schema")
    world.unchanged()


@pytest.mark.parametrize("name", ["nope", "", "ASK", "ask ", "é", None, 123, b"ask", ["ask"],
                                  Opaque(), "x" * 100_000])
def test_unknown_interactions_are_refused(world: World, name: object) -> None:
    """`input.bounded`, `pause.interaction.registered`: refused with interaction_unregistered,
    nothing minted, nothing stored."""
    err = refusal(world.env.svc.pause, binding=BINDING, name=name, payload={},
                  interrupt_id="i-new", checkpoint_id="ck")
    assert_typed(err, E.INTERACTION_UNREGISTERED)
    world.unchanged()


@pytest.mark.parametrize("iid", ["nope", "", "é" * 10, "x" * 100_000, None, 123, b"i-res",
                                 ["i-res"], {"i": 1}, Opaque()])
def test_unknown_interrupt_ids_are_refused(world: World, iid: object) -> None:
    """`input.bounded`: operations naming a pause that does not exist -- or naming it with
    something that is not text -- are refused with pause_unknown on every store."""
    svc = world.env.svc
    calls: list[tuple[Callable[..., Any], tuple[Any, ...]]] = [
        (svc.record_turn, (iid, "turn")), (svc.expire, (iid,)), (svc.cancel_pause, (iid,)),
        (svc.mark_unknown, (iid,)), (svc.reconcile, (iid, lc.Resolution.APPLIED))]
    for fn, args in calls:
        assert_typed(refusal(fn, *args), E.PAUSE_UNKNOWN)
    world.unchanged()
    world.still_answerable()


def test_wrongly_typed_requests_are_binding_mismatches(world: World) -> None:
    """`input.bounded`, `resume.binding.run`: a request whose session or run ids are not text
    matches no binding."""
    for req in (ResumeRequest(None, "tenant-a"),  # type: ignore[arg-type]
                ResumeRequest(b"sess-1", "tenant-a"),  # type: ignore[arg-type]
                ResumeRequest("sess-1", "tenant-a", run_id=1)):  # type: ignore[arg-type]
        err = refusal(world.env.svc.resume, world.live.token, {"approve": True}, req)
        assert_typed(err, E.BINDING_MISMATCH)
    world.unchanged()
    assert stored(world.env, "i-res") == world.live
    world.still_answerable()
