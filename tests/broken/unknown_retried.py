"""Broken: unknown outcome retried.  The effect journal forgets entries that were started and
never finished, so after a crash the in-doubt effect is simply run again.  Must fail
``effect.unknown-outcome``."""

from __future__ import annotations

from typing import Any

from _base import Bundle, Delegate, main

from pausepoint.core.ports import EffectStatus
from pausepoint_conformance.adapters.reference import ReferenceAdapter

MUST = ("effect.unknown-outcome", "run.restart.concurrent")


class ForgetfulJournal(Delegate):
    def status(self, run_id: str, key: str) -> Any:
        st = self.inner.status(run_id, key)
        return None if st == EffectStatus.STARTED else st

    def open_entries(self, run_id: str) -> Any:
        return []

    def start(self, run_id: str, key: str, epoch: int, now: int | None) -> bool:
        if self.inner.status(run_id, key) == EffectStatus.STARTED:  # forgotten: start anew
            self.inner.settle(run_id, key, EffectStatus.NOT_APPLIED)
        return bool(self.inner.start(run_id, key, epoch, now))


class Broken(ReferenceAdapter):
    implementation_name = "broken: unknown outcome retried"

    def wrap_bundle(self, bundle: Any) -> Any:
        return Bundle(bundle, effects=ForgetfulJournal(bundle.effects))


def make() -> Broken:
    return Broken("memory")


if __name__ == "__main__":
    main(make)
