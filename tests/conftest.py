"""Shared test settings: the Hypothesis profiles, and the ``store`` fixture.

``ci`` (200 examples, 50 steps per stateful example) is the default everywhere, and the only
profile when the environment variable ``CI`` is set -- then derandomized (a fixed seed, the same
examples every run, a reproduction blob printed on failure) and without an example database.
``dev`` is a quicker profile for local runs: ``HYPOTHESIS_PROFILE=dev pytest`` (ignored under
``CI``).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from pausepoint.stores import MemoryStore, SqliteStore, StoreBundle
from pausepoint_conformance.faults.testbed import StoreSpec, drop, fresh_sqlite
from pg import pg_spec

sys.path.append(str(Path(__file__).resolve().parent / "broken"))  # tests/broken/_registry.py

_IN_CI = bool(os.environ.get("CI"))
settings.register_profile(  # under CI also Hypothesis' own CI habits: a fixed seed, no database
    "ci", max_examples=200, stateful_step_count=50, deadline=None,
    suppress_health_check=[HealthCheck.too_slow], derandomize=_IN_CI, print_blob=_IN_CI,
    **({"database": None} if _IN_CI else {}))
settings.register_profile(
    "dev", max_examples=30, stateful_step_count=25, deadline=None,
    suppress_health_check=[HealthCheck.too_slow])

PROFILE = "ci" if _IN_CI else os.environ.get("HYPOTHESIS_PROFILE", "ci")
settings.load_profile(PROFILE)


@pytest.fixture(params=["memory", "sqlite"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[StoreBundle]:
    """A fresh store: in memory, and SQLite in a file under ``tmp_path``."""
    bundle: StoreBundle = (MemoryStore() if request.param == "memory"
                           else SqliteStore(tmp_path / "pausepoint.db"))
    yield bundle
    bundle.close()


@pytest.fixture(params=["sqlite", "postgres", "memory"])
def any_store_spec(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[StoreSpec]:
    """A fresh store of each kind in turn, openable by several processes or servers: a SQLite
    file, a PostgreSQL schema of its own (see ``pg.py``), memory."""
    spec = {"sqlite": lambda: fresh_sqlite(tmp_path), "postgres": lambda: pg_spec("pp_any"),
            "memory": lambda: StoreSpec("memory")}[str(request.param)]()
    yield spec
    drop(spec)
