"""Audit sinks (the ``AuditSink`` port)."""

from __future__ import annotations

import threading

from pausepoint.core.ports import AuditEvent


class MemoryAudit:
    def __init__(self) -> None:
        self.events: list[AuditEvent] = []
        self._lock = threading.Lock()

    def record(self, event: AuditEvent) -> None:
        with self._lock:
            self.events.append(event)
