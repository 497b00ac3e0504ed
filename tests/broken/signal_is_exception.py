"""Broken: the pause signal is an ordinary exception.  The pause point raises an ``Exception``
subclass that the runner translates into the pause -- which works until user code between the
two has a catch-all: it swallows the pause, and the run goes on as if nobody had been asked.
Must fail ``pause.signal.base-exception``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from _base import main

from pausepoint.engine.harness import Harness, ScriptEngine
from pausepoint.engine.run import InvocationPaused, RunEvent, RunIdentity, Runner
from pausepoint_conformance.adapters.reference import ReferenceAdapter, _RecordingRunner

MUST = ("pause.signal.base-exception",)
MAY: tuple[str, ...] = ()


class PausedError(Exception):  # the bug: an Exception, so `except Exception` catches it
    def __init__(self, interrupts: Any) -> None:
        super().__init__("paused")
        self.interrupts = interrupts


class ExceptionEngine(ScriptEngine):
    def _ask(self, *args: Any) -> None:
        try:
            super()._ask(*args)
        except InvocationPaused as signal:
            raise PausedError(signal.interrupts) from None


class ExceptionHarness(Harness):
    engine_class = ExceptionEngine


class TranslatingRunner(_RecordingRunner):
    """Turns the ordinary exception back into the pause signal at the top."""

    def invoke(self, identity: RunIdentity, body: Callable[..., Any]) -> list[RunEvent]:
        def translated(emit: Any) -> Any:
            try:
                return body(emit)
            except PausedError as exc:
                raise InvocationPaused(exc.interrupts) from None
        return super().invoke(identity, translated)


class Broken(ReferenceAdapter):
    implementation_name = "broken: the pause signal is an Exception"

    harness_class = ExceptionHarness

    def make_runner(self) -> Runner:
        return TranslatingRunner()


def make() -> Broken:
    return Broken("memory")


if __name__ == "__main__":
    main(make)
