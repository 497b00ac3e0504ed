"""Broken: locked out after three refused answers.  Once three answers presenting a token were
refused, every later answer with it is refused too ("too many attempts"), so the person can
never answer the pause properly.  Must fail ``resume.refusal.keeps-pause``."""

from __future__ import annotations

from typing import Any, ClassVar

from _base import main

from pausepoint.core.clauses import ErrorCode
from pausepoint.core.errors import PausepointError
from pausepoint.engine.harness import Harness, Report
from pausepoint_conformance.adapters.reference import ReferenceAdapter

MUST = ("resume.refusal.keeps-pause", "resume.response.schema", "resume.response.strict")


ATTEMPTS = 3


class LockoutHarness(Harness):
    refused: ClassVar[dict[object, int]] = {}  # every server of the implementation shares it

    def resume(self, token: object, response: object, **kw: Any) -> Report:
        key = token if isinstance(token, str) else repr(token)
        if self.refused.get(key, 0) >= ATTEMPTS:
            raise PausepointError(ErrorCode.NOT_RESUMABLE, "resume.refusal.keeps-pause",
                                  "too many attempts")
        try:
            return super().resume(token, response, **kw)
        except PausepointError:
            self.refused[key] = self.refused.get(key, 0) + 1
            raise


class Broken(ReferenceAdapter):
    implementation_name = "broken: locked out after one refused answer"

    harness_class = LockoutHarness


def make() -> Broken:
    return Broken("memory")


if __name__ == "__main__":
    main(make)
