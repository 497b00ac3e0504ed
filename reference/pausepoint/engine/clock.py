"""Clocks (the ``Clock`` port): integer milliseconds."""

from __future__ import annotations

import threading
import time


class SystemClock:
    """The wall clock, in milliseconds since the epoch."""

    def now(self) -> int:
        return time.time_ns() // 1_000_000


class ManualClock:
    """A controllable clock for tests and conformance runs."""

    def __init__(self, start: int = 0) -> None:
        self._now = start
        self._lock = threading.Lock()

    def now(self) -> int:
        with self._lock:
            return self._now

    def advance(self, ms: int) -> int:
        if ms < 0:
            raise ValueError("a clock never goes back")
        with self._lock:
            self._now += ms
            return self._now
