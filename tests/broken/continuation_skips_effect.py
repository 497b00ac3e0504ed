"""Broken: the continuation loses the first effect after the pause.  After an answer the run
goes on, but the first effect it reaches is journalled finished without being applied (the
world never sees it).  Must fail ``resume.continuation.recorded-turn``."""

from __future__ import annotations

from typing import Any

from _base import main

from pausepoint.engine.harness import Harness, Report
from pausepoint_conformance.adapters.reference import ReferenceAdapter

MUST = (
    "effect.at-most-once",
    "effect.reconcile",
    "expiry.no-consume-after",
    "input.bounded",
    "multi.independent",
    "resume.continuation.recorded-turn",
    "resume.refusal.keeps-pause",
    "resume.response.strict",
)
MAY = {
    "resume.consume.at-most-once":
        "a race: whether two racing resumes both run the continuation depends on scheduling",
}


class ForgetfulWorld:
    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.skip = False

    def apply(self, run_id: str, key: str) -> None:
        if self.skip:
            self.skip = False
            return
        self.inner.apply(run_id, key)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


class SkippingHarness(Harness):
    def resume(self, token: object, response: object, **kw: Any) -> Report:
        if not isinstance(self.world, ForgetfulWorld):
            self.world = ForgetfulWorld(self.world)  # type: ignore[assignment]
        self.world.skip = True
        try:
            return super().resume(token, response, **kw)
        finally:
            self.world.skip = False


class Broken(ReferenceAdapter):
    implementation_name = "broken: the continuation loses an effect"

    harness_class = SkippingHarness


def make() -> Broken:
    return Broken("memory")


if __name__ == "__main__":
    main(make)
