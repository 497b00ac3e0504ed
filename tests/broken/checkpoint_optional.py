"""Broken: a pause with no checkpoint gets one made up.  The checkpoint store answers "the
newest checkpoint of this thread" with a fresh id when the thread has none, so a pause bound to
nothing is minted and published -- and its answer could never find the turn it continues.
Must fail ``pause.checkpoint.bound``."""

from __future__ import annotations

from typing import Any

from _base import Bundle, Delegate, main

from pausepoint_conformance.adapters.reference import ReferenceAdapter

MUST = ("pause.checkpoint.bound", "pause.refusal.order")
MAY: tuple[str, ...] = ()


class InventiveCheckpoints(Delegate):
    def latest(self, thread_id: str) -> str | None:
        found: str | None = self.inner.latest(thread_id)
        return found or f"{thread_id}@made-up"


class Broken(ReferenceAdapter):
    implementation_name = "broken: a checkpoint made up for a pause bound to none"

    def wrap_bundle(self, bundle: Any) -> Any:
        return Bundle(bundle, checkpoints=InventiveCheckpoints(bundle.checkpoints))


def make() -> Broken:
    return Broken("memory")


if __name__ == "__main__":
    main(make)
