"""Tests of the runner: one terminal event per invocation, the pause signal passing through
ordinary error handling, the event vocabulary, and the live run binding."""

from __future__ import annotations

import ast
import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import pausepoint
from pausepoint.core.clauses import ErrorCode, clause
from pausepoint.core.errors import PausepointError
from pausepoint.engine.run import (
    TERMINAL_EVENTS,
    EventKind,
    InvocationCancelled,
    InvocationPaused,
    PendingInterrupt,
    RunEvent,
    RunIdentity,
    Runner,
    current_run,
    current_run_binding,
)

ID = RunIdentity("run-1", "root-1")
PENDING = PendingInterrupt(name="ask", payload={}, token="t", interrupt_id="i-1",
                           run_id="run-1", session_id="s")
NON_TERMINAL = [k for k in EventKind if k not in TERMINAL_EVENTS]


def pause() -> None:
    raise InvocationPaused((PENDING,))


def kinds(events: list[RunEvent]) -> list[EventKind]:
    return [e.kind for e in events]


def assert_one_terminal_last(events: list[RunEvent]) -> None:
    """`run.events.single-terminal`, `run.events.vocabulary`."""
    assert all(e.kind in set(EventKind) for e in events), events
    assert [e.kind in TERMINAL_EVENTS for e in events].count(True) == 1, events
    assert events[-1].kind in TERMINAL_EVENTS


def test_the_pause_signal_is_a_base_exception_not_an_exception() -> None:
    """`pause.signal.base-exception`."""
    assert issubclass(InvocationPaused, BaseException)
    assert not issubclass(InvocationPaused, Exception)
    assert not issubclass(InvocationCancelled, Exception)


def swallow_with_except_exception(emit: Callable[[RunEvent], None]) -> str:
    try:
        pause()
    except Exception:
        return "swallowed"
    return "not reached"


def reraise_as_error(emit: Callable[[RunEvent], None]) -> None:
    try:
        pause()
    except Exception as exc:
        raise RuntimeError("wrapped") from exc


def suppress_everything_ordinary(emit: Callable[[RunEvent], None]) -> None:
    with contextlib.suppress(Exception):
        emit(RunEvent(EventKind.THINKING, "about to ask"))
        pause()


def cleanup_in_finally(emit: Callable[[RunEvent], None]) -> None:
    try:
        pause()
    finally:
        emit(RunEvent(EventKind.TEXT_DELTA, "cleaning up"))


@pytest.mark.parametrize("body", [swallow_with_except_exception, reraise_as_error,
                                  suppress_everything_ordinary, cleanup_in_finally])
def test_a_pause_passes_through_ordinary_error_handling(body: Callable[..., Any]) -> None:
    """`pause.signal.base-exception`, `run.paused.never-error`, `pause.signal.single-catch`:
    however user code handles ``Exception``, the invocation ends in one paused event carrying
    the published interrupts."""
    events = Runner().invoke(ID, body)
    assert_one_terminal_last(events)
    assert events[-1].kind == EventKind.PAUSED and events[-1].data == (PENDING,)
    assert EventKind.ERROR not in kinds(events)


@pytest.mark.parametrize(("body", "last"), [
    (lambda emit: "result", EventKind.DONE),
    (lambda emit: 1 / 0, EventKind.ERROR),
    (lambda emit: pause(), EventKind.PAUSED),
    (lambda emit: (_ for _ in ()).throw(InvocationCancelled()), EventKind.CANCELLED),
    (lambda emit: emit(RunEvent(EventKind.DONE)), EventKind.ERROR),
    (lambda emit: emit(RunEvent(EventKind.PAUSED)), EventKind.ERROR),
    (lambda emit: emit(RunEvent("weird")), EventKind.ERROR),  # type: ignore[arg-type]
    (lambda emit: emit("thinking"), EventKind.ERROR),
])
def test_every_invocation_ends_in_exactly_one_terminal_event(body: Callable[..., Any],
                                                             last: EventKind) -> None:
    """`run.events.single-terminal`, `run.events.vocabulary`: terminal events are the
    runner's alone, and nothing outside the vocabulary is published."""
    events = Runner().invoke(ID, body)
    assert_one_terminal_last(events)
    assert events[-1].kind == last
    if last == EventKind.DONE:
        assert events[-1].data == "result"


ENDINGS = ["return", "error", "pause", "cancel", "swallowed-pause", "terminal-emit",
           "foreign-emit"]


@given(st.lists(st.sampled_from(NON_TERMINAL), max_size=6), st.sampled_from(ENDINGS))
def test_any_body_ends_in_one_terminal_event(emitted: list[EventKind], ending: str) -> None:
    """`run.events.single-terminal`, `run.paused.never-error`, `run.events.vocabulary`: a body
    emitting any non-terminal events and ending in any way gives those events in order and
    exactly one terminal event; a body that paused ends paused."""
    def body(emit: Callable[[RunEvent], None]) -> str:
        for k in emitted:
            emit(RunEvent(k, "x"))
        if ending == "error":
            raise KeyError("boom")
        if ending == "pause":
            pause()
        if ending == "cancel":
            raise InvocationCancelled()
        if ending == "swallowed-pause":
            swallow_with_except_exception(emit)
        if ending == "terminal-emit":
            emit(RunEvent(EventKind.ERROR, "forged"))
        if ending == "foreign-emit":
            emit(RunEvent("tool_progress", "x"))  # type: ignore[arg-type]
        return "ok"

    events = Runner().invoke(ID, body)
    assert_one_terminal_last(events)
    assert kinds(events)[:-1] == emitted
    want = {"return": EventKind.DONE, "error": EventKind.ERROR, "pause": EventKind.PAUSED,
            "cancel": EventKind.CANCELLED, "swallowed-pause": EventKind.PAUSED,
            "terminal-emit": EventKind.ERROR, "foreign-emit": EventKind.ERROR}[ending]
    assert events[-1].kind == want


def test_signals_other_than_the_pause_are_not_caught() -> None:
    """`pause.signal.single-catch`: the runner catches its two signals and ``Exception``;
    anything else (an interpreter exit, a simulated process death) passes through."""
    def body(emit: Callable[[RunEvent], None]) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        Runner().invoke(ID, body)
    assert current_run() is None


def test_only_the_runner_catches_the_pause_signal() -> None:
    """`pause.signal.single-catch`: no handler in the reference package other than the
    runner's catches the pause signal, ``BaseException`` or everything, unless it re-raises."""
    root = Path(pausepoint.__file__).parent
    catchers: list[str] = []
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, ast.ExceptHandler):
                continue
            names = {n.id if isinstance(n, ast.Name) else getattr(n, "attr", "")
                     for n in ast.walk(node.type)} if node.type is not None else {"*"}
            if not names & {"InvocationPaused", "BaseException", "*"}:
                continue
            reraises = any(isinstance(s, ast.Raise) and s.exc is None for s in node.body)
            if not reraises:
                catchers.append(f"{path.relative_to(root)}:{node.lineno}")
    assert len(catchers) == 1 and catchers[0].startswith("engine/run.py:"), catchers


def test_current_run_binding_comes_from_the_live_run() -> None:
    """`run.binding.live`: outside a run, refused with outside_run; inside, the ids are the
    run's own (they cannot be passed in); nested runs restore the outer binding."""
    with pytest.raises(PausepointError) as info:
        current_run_binding(session_id="s", thread_id="t", scope="sc")
    assert (info.value.code, info.value.clause) == (ErrorCode.OUTSIDE_RUN,
                                                    clause("run.binding.live"))
    seen: list[tuple[str, str]] = []

    def inner(emit: Callable[[RunEvent], None]) -> None:
        b = current_run_binding(session_id="s", thread_id="t", scope="sc", parent_run_id="run-1")
        seen.append((b.run_id, b.root_run_id))
        raise ValueError("child failed")

    def outer(emit: Callable[[RunEvent], None]) -> None:
        b = current_run_binding(session_id="s", thread_id="t", scope="sc")
        seen.append((b.run_id, b.root_run_id))
        child = Runner().invoke(RunIdentity("run-2", "root-1"), inner)
        assert child[-1].kind == EventKind.ERROR
        b = current_run_binding(session_id="s", thread_id="t", scope="sc")
        seen.append((b.run_id, b.root_run_id))
        pause()

    events = Runner().invoke(ID, outer)
    assert events[-1].kind == EventKind.PAUSED
    assert seen == [("run-1", "root-1"), ("run-2", "root-1"), ("run-1", "root-1")]
    assert current_run() is None
    with pytest.raises(TypeError):
        current_run_binding(session_id="s", thread_id="t", scope="sc",  # type: ignore[call-arg]
                            run_id="run-x")


def test_checks_run_in_the_order_of_the_contracts_groups() -> None:
    """The checks are registered -- and so run and reported -- group by group in the order
    the contract states them (an import sorter reordering the check modules changed it once)."""
    import pausepoint_conformance.suite.checks  # noqa: F401 - importing registers the checks
    from pausepoint_conformance.suite.framework import CHECKS

    groups = list(dict.fromkeys(c.id.split("/")[0] for c in CHECKS))
    assert groups[:13] == ["core", "tokens", "lineage", "expiry", "replay", "cancel", "multi",
                           "unknown", "durability", "concurrency", "gate", "wiring", "status"]
