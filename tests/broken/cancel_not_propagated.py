"""Broken: cancellation does not reach child runs.  Cancelling a run cancels its own pauses
only.  Must fail ``cancel.propagates``."""

from __future__ import annotations

from typing import Any

from _base import Bundle, Delegate, main

from pausepoint_conformance.adapters.reference import ReferenceAdapter

MUST = ("cancel.propagates",)
VECTORS_MUST = ("cancel.distinct",)


class ChildlessRuns(Delegate):
    def children(self, run_id: str) -> Any:
        return []


class Broken(ReferenceAdapter):
    implementation_name = "broken: cancellation does not reach child runs"

    def wrap_bundle(self, bundle: Any) -> Any:
        return Bundle(bundle, runs=ChildlessRuns(bundle.runs))


def make() -> Broken:
    return Broken("memory")


if __name__ == "__main__":
    main(make)
