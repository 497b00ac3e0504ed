"""Broken: a runner that catches everything in one ``except BaseException`` and reports it as a
failure -- the pause signal included.  A paused run ends in ``error``: its pause is published
and live, but whoever watches the run is told it failed.  Must fail
``pause.signal.single-catch``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from _base import main

from pausepoint.engine.run import (
    EventKind,
    InvocationCancelled,
    RunEvent,
    RunIdentity,
    Runner,
    _running,
)
from pausepoint_conformance.adapters.reference import ReferenceAdapter, _RecordingRunner

MUST = (
    "effect.unknown-outcome",
    "pause.signal.single-catch",
    "run.events.single-terminal",
    "run.paused.never-error",
)
VECTORS_MUST = ("pause.published",)


class CatchAllRunner(_RecordingRunner):
    def invoke(self, identity: RunIdentity, body: Callable[..., Any]) -> list[RunEvent]:
        events: list[RunEvent] = []
        with _running(identity):
            try:
                result = body(events.append)
            except InvocationCancelled:
                events.append(RunEvent(EventKind.CANCELLED))
            except BaseException as exc:
                events.append(RunEvent(EventKind.ERROR, f"{type(exc).__name__}: {exc}"))
            else:
                events.append(RunEvent(EventKind.DONE, result))
        self.last = events
        return events


class Broken(ReferenceAdapter):
    implementation_name = "broken: the runner reports the pause as an error"

    def make_runner(self) -> Runner:
        return CatchAllRunner()


def make() -> Broken:
    return Broken("memory")


if __name__ == "__main__":
    main(make)
