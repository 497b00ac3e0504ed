"""The guard core (:mod:`pausepoint.guards`): a framework's pause registered and answered once,
replays and conflicts, typed refusals that change nothing, effects at most once -- on memory
and SQLite, with racing resumers."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest

from pausepoint import ErrorCode, Interaction, KeyRing, ManualClock, PausepointError
from pausepoint.core.ports import EffectStatus
from pausepoint.guards import Answer, FrameworkResumeFailed, Guard, Resumed
from pausepoint.stores import StoreBundle

APPROVE = Interaction("approve")
REFUND = Interaction("refund", tool=True)


@pytest.fixture
def guard(store: StoreBundle) -> Iterator[Guard]:
    yield Guard.open(store, framework="fw", interactions=[APPROVE, REFUND],
                     clock=ManualClock(0), ttl_ms=1000)


def _calls() -> tuple[list[Answer], Any]:
    seen: list[Answer] = []

    def call(a: Answer) -> dict[str, Any]:
        seen.append(a)
        return {"resumed": a.value}
    return seen, call


def test_pause_is_bound_to_the_framework_ids_and_idempotent(guard: Guard) -> None:
    p = guard.pause(thread_id="t/1", interrupt_id="i:1", name="approve", payload={"x": 1})
    assert (p.thread_id, p.framework_interrupt_id, p.interrupt_id, p.run_id) == (
        "t/1", "i:1", "fw:t/1:i:1", "t/1")
    assert p.resumable and p.token
    again = guard.pause(thread_id="t/1", interrupt_id="i:1", name="approve", payload={"x": 1})
    assert again.token == p.token
    with pytest.raises(PausepointError) as exc:
        guard.pause(thread_id="t/1", interrupt_id="i:1", name="approve", payload={"x": 2})
    assert exc.value.code is ErrorCode.PAUSE_CONFLICT
    assert [q.token for q in guard.pending("t/1")] == [p.token]


@pytest.mark.parametrize(("kw", "code"), [
    ({"name": "nope", "payload": {}}, ErrorCode.INTERACTION_UNREGISTERED),
    ({"name": "approve", "payload": [1]}, ErrorCode.PAYLOAD_INVALID),
    ({"name": "refund", "payload": {}}, ErrorCode.TOOL_CALL_ID_MISSING),
])
def test_refused_pause_writes_nothing(guard: Guard, kw: dict[str, Any],
                                      code: ErrorCode) -> None:
    with pytest.raises(PausepointError) as exc:
        guard.pause(thread_id="t", interrupt_id="i", **kw)
    assert exc.value.code is code
    assert guard.service.ledger.get(guard.ledger_id("t", "i")) is None
    assert guard.service.runs.get(guard.run_id("t")) is None


def test_one_winner_replay_and_conflict(guard: Guard) -> None:
    p = guard.pause(thread_id="t", interrupt_id="i", name="refund", payload={},
                    tool_call_id="call-1")
    seen, call = _calls()
    first = guard.resume(p.token, {"ok": True}, call)
    assert not first.replayed and first.outcome == {"resumed": {"ok": True}}
    assert [(a.thread_id, a.interrupt_id, a.tool_call_id) for a in seen] == [
        ("t", "i", "call-1")]
    again = guard.resume(p.token, {"ok": True}, call)
    assert again.replayed and again.outcome == first.outcome and len(seen) == 1
    with pytest.raises(PausepointError) as exc:
        guard.resume(p.token, {"ok": False}, call)
    assert exc.value.code is ErrorCode.RESPONSE_CONFLICT and len(seen) == 1


@pytest.mark.parametrize(("token", "answer", "kw", "code"), [
    ("garbage", {}, {}, ErrorCode.TOKEN_MALFORMED),
    (None, [1], {}, ErrorCode.RESPONSE_INVALID),
    (None, {}, {"session_id": "other"}, ErrorCode.BINDING_MISMATCH),
    (None, {}, {"scope": "other"}, ErrorCode.SCOPE_MISMATCH),
    (None, {}, {"run_id": "other"}, ErrorCode.BINDING_MISMATCH),
])
def test_refused_resume_changes_nothing(guard: Guard, token: str | None, answer: Any,
                                        kw: dict[str, Any], code: ErrorCode) -> None:
    p = guard.pause(thread_id="t", interrupt_id="i", name="approve", payload={})
    seen, call = _calls()
    with pytest.raises(PausepointError) as exc:
        guard.resume(token or p.token, answer, call, **kw)
    assert exc.value.code is code and not seen
    assert guard.resume(p.token, {}, call).replayed is False  # still answerable


def test_altered_token_and_expiry(guard: Guard) -> None:
    p = guard.pause(thread_id="t", interrupt_id="i", name="approve", payload={})
    seen, call = _calls()
    flipped = p.token[:-2] + ("A" if p.token[-2] != "A" else "B") + p.token[-1]
    with pytest.raises(PausepointError) as exc:
        guard.resume(flipped, {}, call)
    assert exc.value.code in (ErrorCode.TOKEN_INVALID, ErrorCode.TOKEN_MALFORMED)
    clock = guard.service.clock
    assert isinstance(clock, ManualClock)
    clock.advance(1000)
    with pytest.raises(PausepointError) as exc:
        guard.resume(p.token, {}, call)
    assert exc.value.code is ErrorCode.PAUSE_EXPIRED and not seen


def test_token_of_another_framework_is_refused(store: StoreBundle) -> None:
    ring = KeyRing.generate()
    a = Guard.open(store, framework="a", interactions=[APPROVE], signer=ring)
    b = Guard(a.deployment, framework="b")
    p = a.pause(thread_id="t", interrupt_id="i", name="approve", payload={})
    with pytest.raises(PausepointError) as exc:
        b.resume(p.token, {}, lambda _a: None)
    assert exc.value.code is ErrorCode.PAUSE_UNKNOWN


class _NoLedger(Guard):
    """A broken guard: it verifies the token and calls the framework, deciding nothing in the
    ledger (the plain framework's resume) -- the race test and the effect test must fail on it."""

    def resume(self, token: object, answer: object, call_framework_resume: Any,
               **kw: Any) -> Any:
        c = self.service.signer.verify(token)
        return Resumed(replayed=False, outcome=call_framework_resume(Answer(
            value=answer, framework=self.framework, thread_id=c.thread_id, interrupt_id="",
            tool_call_id=c.tool_call_id, name=c.name)))

    def effect(self, scope: str, key: str, fn: Any) -> Any:
        return fn()


BROKEN = pytest.mark.xfail(strict=True, reason="the broken guard decides nothing")


@pytest.mark.parametrize("broken", [False, pytest.param(True, marks=BROKEN)])
def test_racing_resumers_one_winner(guard: Guard, broken: bool) -> None:
    if broken:
        guard = _NoLedger(guard.deployment, framework="fw")
    p = guard.pause(thread_id="t", interrupt_id="i", name="approve", payload={})
    seen, call = _calls()
    barrier = threading.Barrier(8)
    results: list[Any] = []

    def go() -> None:
        barrier.wait()
        results.append(guard.resume(p.token, {"v": 1}, call))
    threads = [threading.Thread(target=go) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(seen) == 1
    assert sorted(r.replayed for r in results) == [False] + [True] * 7


def test_framework_failure_is_recorded(guard: Guard) -> None:
    p = guard.pause(thread_id="t", interrupt_id="i", name="approve", payload={})

    def boom(_a: Answer) -> None:
        raise RuntimeError("down")
    with pytest.raises(FrameworkResumeFailed):
        guard.resume(p.token, {}, boom)
    again = guard.resume(p.token, {}, boom)
    assert again.replayed and again.outcome == {"error": "RuntimeError: down"}


@pytest.mark.parametrize("broken", [False, pytest.param(True, marks=BROKEN)])
def test_effect_at_most_once_and_unknown_outcome(guard: Guard, broken: bool) -> None:
    if broken:
        guard = _NoLedger(guard.deployment, framework="fw")
    ran: list[int] = []

    def pay() -> dict[str, int]:
        ran.append(1)
        return {"paid": len(ran)}
    assert guard.effect("t", "pay", pay) == {"paid": 1}
    assert guard.effect("t", "pay", pay) == {"paid": 1}  # a re-run: the first result
    assert len(ran) == 1

    def dies() -> None:
        raise KeyboardInterrupt  # the process dies inside the effect
    with pytest.raises(KeyboardInterrupt):
        guard.effect("t", "ship", dies)
    assert guard.effect_status("t", "ship") is EffectStatus.STARTED
    with pytest.raises(PausepointError) as exc:
        guard.effect("t", "ship", pay)
    assert exc.value.code is ErrorCode.OUTCOME_UNKNOWN and len(ran) == 1
    guard.reconcile("t", "ship", "not_applied")
    assert guard.effect("t", "ship", pay) == {"paid": 2}
    with pytest.raises(PausepointError) as exc:
        guard.reconcile("t", "ship", "applied")
    assert exc.value.code is ErrorCode.INVALID_TRANSITION



def test_saved_state_is_kept_beside_the_effects(guard: Guard) -> None:
    assert guard.load_state("t") is None
    guard.effect("t", "pay", lambda: 1)
    guard.save_state("t", '{"turn": 1}')
    guard.save_state("t", '{"turn": 2}')
    assert guard.load_state("t") == '{"turn": 2}'
    assert guard.effect("t", "pay", lambda: 2) == 1  # the effect's result is still there
