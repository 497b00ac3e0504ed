"""Broken: an effect journalled finished before it runs.  To save a write, the journal marks
an effect started and finished in one step, before the effect is applied -- so a crash inside
the effect leaves a journal that says it finished, and a restart goes on past an effect that
may never have run.  Must fail ``effect.journal.bracket``, and with it
``effect.unknown-outcome`` (the effect in doubt is not surfaced) and ``run.restart.concurrent``
(a restarter killed while opening the recovery pause finds nothing in doubt to recover)."""

from __future__ import annotations

from typing import Any

from _base import Bundle, Delegate, main

from pausepoint_conformance.adapters.reference import ReferenceAdapter

MUST = ("effect.journal.bracket", "effect.unknown-outcome", "run.restart.concurrent")
MAY: tuple[str, ...] = ()


class FinishFirstJournal(Delegate):
    def start(self, run_id: str, key: str, epoch: int, now: int | None) -> bool:
        if not self.inner.start(run_id, key, epoch, now):
            return False
        return bool(self.inner.finish(run_id, key, epoch))  # BROKEN: finished before it ran

    def finish(self, run_id: str, key: str, epoch: int) -> bool:
        return True  # already journalled finished at start


class Broken(ReferenceAdapter):
    implementation_name = "broken: effects journalled finished before they run"

    def wrap_bundle(self, bundle: Any) -> Any:
        return Bundle(bundle, effects=FinishFirstJournal(bundle.effects))


def make() -> Broken:
    return Broken("memory")


if __name__ == "__main__":
    main(make)
