"""Test helpers shared by several test files: expecting a typed refusal, and a checkpoint
store whose writes fail, and a payment system that counts its calls."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from pausepoint.core.clauses import CLAUSE_BY_ID, ErrorCode
from pausepoint.core.errors import PausepointError


def refused(fn: Callable[..., Any], *args: Any, **kw: Any) -> PausepointError:
    """Call ``fn`` expecting a typed refusal; an acceptance is an AssertionError."""
    try:
        out = fn(*args, **kw)
    except PausepointError as err:
        assert err.code in set(ErrorCode) and err.clause in CLAUSE_BY_ID, err
        return err
    raise AssertionError(f"accepted, expected a refusal: {out!r}")


class FailingCheckpoints:
    """A checkpoint store whose writes report failure (and write nothing); reads go through."""

    durable = True

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def write(self, checkpoint_id: str, thread_id: str, turn: str) -> bool:
        return False

    def read(self, checkpoint_id: str) -> str | None:
        out: str | None = self.inner.read(checkpoint_id)
        return out

    def latest(self, thread_id: str) -> str | None:
        out: str | None = self.inner.latest(thread_id)
        return out


class Payments:
    """A payment system shared by racing servers (threads): every call it receives, in order,
    each answered with a receipt numbered by its place."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.calls: list[str] = []

    def do(self, what: str) -> str:
        with self.lock:
            self.calls.append(what)
            return f"rcpt-{len(self.calls)}"
