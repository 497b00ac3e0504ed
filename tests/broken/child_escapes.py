"""Broken: a child run created without looking at its parent again.  The start checks the
parent when it reads it, then inserts the child unconditionally: a child started while its
parent is being cancelled escapes the cancel and pays.  Must fail
``run.child.cancelling-parent``."""

from __future__ import annotations

from typing import Any

from _base import Bundle, Delegate, main

from pausepoint.core.ports import RunRecord
from pausepoint.stores.sql import RUN_COLUMNS, RUNS, SqlStore, run_to_row
from pausepoint_conformance.adapters.reference import ReferenceAdapter

MUST = ("run.child.cancelling-parent",)
MAY: tuple[str, ...] = ()


class ParentBlindRuns(Delegate):
    def create(self, run: RunRecord) -> bool:
        """An insert that checks nothing but the id: the in-memory store's dict, written
        directly under its lock, or a plain SQL insert."""
        store = self.inner._s
        if not isinstance(store, SqlStore):
            with store._lock:
                if run.run_id in store._runs:
                    return False
                store._runs[run.run_id] = run
                return True
        names = [c for c, _t in RUN_COLUMNS]
        return bool(store.write(
            f"INSERT INTO {RUNS} ({', '.join(names)}) VALUES ({', '.join('?' * len(names))}) "
            "ON CONFLICT (run_id) DO NOTHING", run_to_row(run)) == 1)


class Broken(ReferenceAdapter):
    implementation_name = "broken: a child created without its parent's check"

    def wrap_bundle(self, bundle: Any) -> Any:
        return Bundle(bundle, runs=ParentBlindRuns(bundle.runs))


def make() -> Broken:
    return Broken("memory")


if __name__ == "__main__":
    main(make)
