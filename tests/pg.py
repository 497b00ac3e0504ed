"""PostgreSQL for tests: the DSN from ``$PAUSEPOINT_PG_DSN``, or a skip -- or, under CI
(``$CI`` set), a failure: CI must never pass by silently running nothing.

``.ci/run`` starts a real server on loopback and exports the DSN; locally, run
``eval "$(bash .ci/postgres.sh)"`` first to include the PostgreSQL tests.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from pausepoint_conformance.faults.testbed import StoreSpec, drop, fresh_postgres

DSN_ENV = "PAUSEPOINT_PG_DSN"


def pg_dsn() -> str:
    """The PostgreSQL DSN, or skip with the reason -- or, under CI, fail."""
    dsn = os.environ.get(DSN_ENV, "")
    if not dsn:
        if os.environ.get("CI"):
            pytest.fail(f"CI is set but {DSN_ENV} is not: the PostgreSQL tests must run in CI "
                        "(source .ci/postgres.sh first)", pytrace=False)
        pytest.skip(f"{DSN_ENV} not set: no PostgreSQL to test against "
                    "(eval \"$(bash .ci/postgres.sh)\" to run these)")
    return dsn


def pg_spec(prefix: str = "pp_test") -> StoreSpec:
    """A fresh PostgreSQL schema of its own (skips/fails like :func:`pg_dsn`)."""
    return fresh_postgres(pg_dsn(), prefix)


@pytest.fixture
def pg_store_spec() -> Iterator[StoreSpec]:
    """A fresh PostgreSQL schema, dropped after the test."""
    spec = pg_spec()
    yield spec
    drop(spec)

