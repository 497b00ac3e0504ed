"""Broken: a pause published without its name.  The published pause leaves out the name of
the interaction it asks.  Must fail ``pause.published``."""

from __future__ import annotations

from typing import Any

from _base import main

from pausepoint_conformance.adapters.reference import ReferenceAdapter
from pausepoint_conformance.protocol.wire import PublishedPause

MUST = ("pause.published",)
MAY: tuple[str, ...] = ()


class Broken(ReferenceAdapter):
    implementation_name = "broken: pauses published without their name"

    def _publish(self, p: Any) -> PublishedPause:
        return super()._publish(p).model_copy(update={"name": ""})


def make() -> Broken:
    return Broken("memory")


if __name__ == "__main__":
    main(make)
