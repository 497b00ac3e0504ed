"""Shared plumbing of the durability tools (crash injection, races, fuzzing, benchmarks).

* :class:`StoreSpec` names a store so that another *process* can open the same data: a
  SQLite file, or a PostgreSQL database plus an optional schema (``namespace``) that isolates
  one test case from every other.  It travels between processes as JSON.
* Keys are saved to a file as the 32-byte raw Ed25519 seed so that every process of a case signs
  and verifies with the same key (:func:`save_key`, :func:`load_ring`).
* :func:`state_digest` hashes everything a store holds, to prove an operation changed nothing.
* :func:`main_on_adapter` runs a tool on any implementation named as ``pausepoint conform
  --adapter`` names it, and :func:`finish` prints a tool's report and its exit status.
"""

from __future__ import annotations

import hashlib
import json
import os
import queue
import sys
import time
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import attrs
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from pausepoint.core.tokens import Ed25519Key, KeyRing
from pausepoint.stores import MemoryStore, SqliteStore, StoreBundle
from pausepoint.stores.sql import TABLES, SqlStore

if TYPE_CHECKING:
    from pausepoint_conformance.protocol.port import Adapter

DSN_ENV = "PAUSEPOINT_PG_DSN"


class ToolReport(Protocol):
    """What a fault tool found: its lines to print, and the violations among them."""

    @property
    def violations(self) -> Sequence[str]: ...

    def lines(self) -> list[str]: ...


class NothingChecked(RuntimeError):
    """A tool could not drive the implementation at all (it does not claim what the tool
    needs, or an operation the scenario needs failed): it checked nothing."""


def finish(report: ToolReport, t0: float) -> int:
    """Print the report and the time since ``t0``; the exit status: 1 on any violation."""
    for line in report.lines():
        print(line)
    print(f"{time.monotonic() - t0:.1f} s")
    return 1 if report.violations else 0


def main_on_adapter(spec: str, tool: Callable[[Adapter, str], ToolReport]) -> int:
    """Run ``tool`` on the adapter ``spec`` names (as ``pausepoint conform --adapter``), then
    :func:`finish`; 2 when the spelling is wrong or the tool checked nothing."""
    from pausepoint_conformance.adapters.loader import AdapterSpecError, make_adapter

    t0 = time.monotonic()
    try:
        adapter, name = make_adapter(spec, timeout=120.0)
    except AdapterSpecError as exc:
        print(f"--adapter: {exc}", file=sys.stderr)
        return 2
    try:
        report = tool(adapter, name)
    except NothingChecked as exc:
        print(f"nothing checked: {exc}", file=sys.stderr)
        return 2
    finally:
        adapter.close()
    return finish(report, t0)


@attrs.frozen
class StoreSpec:
    """Where a store's data lives: ``kind`` is ``memory``, ``sqlite`` or ``postgres``;
    ``location`` is the SQLite path or the PostgreSQL DSN; ``namespace`` a PostgreSQL schema."""

    kind: str
    location: str = ""
    namespace: str | None = None

    def open(self) -> StoreBundle:
        """A new handle (new connections) on this store's data."""
        if self.kind == "memory":
            return MemoryStore()
        if self.kind == "sqlite":
            return SqliteStore(self.location)
        if self.kind == "postgres":
            from pausepoint.stores import PostgresStore

            return PostgresStore(self.location, namespace=self.namespace)
        raise ValueError(f"unknown store kind {self.kind!r}")

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "location": self.location, "namespace": self.namespace}

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> StoreSpec:
        return cls(str(obj["kind"]), str(obj.get("location", "")), obj.get("namespace"))

    @classmethod
    def from_url(cls, url: str) -> StoreSpec:
        """The spec of an :func:`pausepoint.stores.open_store` URL (no namespace)."""
        if url == "memory:":
            return cls("memory")
        if url.startswith("sqlite:"):
            return cls("sqlite", url[len("sqlite:"):])
        if url.startswith(("postgresql://", "postgres://")):
            return cls("postgres", url)
        if url.startswith("postgres:"):
            return cls("postgres", url[len("postgres:"):] or os.environ.get(DSN_ENV, ""))
        raise ValueError(f"unknown store URL {url!r}: use memory:, sqlite:PATH or "
                         "postgres:DSN / postgresql://...")

    def describe(self) -> str:
        if self.kind == "postgres":
            return f"postgres (schema {self.namespace or 'public'})"
        if self.kind == "sqlite":
            return f"sqlite ({self.location})"
        return self.kind


def fresh_postgres(dsn: str, prefix: str = "pp_test") -> StoreSpec:
    """A PostgreSQL spec in a schema of its own (created on first open)."""
    return StoreSpec("postgres", dsn, f"{prefix}_{uuid.uuid4().hex[:16]}")


def fresh_sqlite(directory: str | os.PathLike[str], name: str = "pausepoint.db") -> StoreSpec:
    return StoreSpec("sqlite", str(Path(directory) / name))


def drop(spec: StoreSpec) -> None:
    """Remove a case's data: drop its PostgreSQL schema (a SQLite file goes with its temp dir)."""
    if spec.kind == "postgres" and spec.namespace is not None:
        from pausepoint.stores import PostgresStore

        PostgresStore(spec.location, namespace=spec.namespace).drop_namespace()


# -- keys ------------------------------------------------------------------------------------


def save_key(path: str | os.PathLike[str]) -> None:
    """Write a fresh Ed25519 private key (the raw 32-byte seed) to ``path``, mode 0600."""
    raw = Ed25519PrivateKey.generate().private_bytes_raw()
    fd = os.open(os.fspath(path), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, raw)
    finally:
        os.close(fd)


def load_key(path: str | os.PathLike[str], kid: str = "k1") -> Ed25519Key:
    return Ed25519Key.from_private_bytes(kid, Path(path).read_bytes())


def load_ring(path: str | os.PathLike[str], kid: str = "k1") -> KeyRing:
    """The key ring every process of a case shares: one Ed25519 key loaded from ``path``."""
    return KeyRing(load_key(path, kid))


# -- state digest ----------------------------------------------------------------------------


def state_rows(store: StoreBundle) -> dict[str, list[list[Any]]]:
    """Every row the store holds, table by table, in a stable order."""
    if isinstance(store, SqlStore):
        out: dict[str, list[list[Any]]] = {}
        for table in TABLES:
            rows = store.read(f"SELECT * FROM {table} ORDER BY seq")
            out[table] = [list(r) for r in rows]
        return out
    if isinstance(store, MemoryStore):
        # The memory store has no "dump" port; its dicts are read under its own lock.
        with store._lock:
            return {
                "pauses": [[k, repr(v)] for k, v in store._pauses.items()],
                "checkpoints": [[k, *v] for k, v in store._checkpoints.items()],
                "payloads": [[k, v] for k, v in store._payloads.items()],
                "effects": [[*k, v[0].value, v[1]] for k, v in store._effects.items()],
                "runs": [[k, repr(v)] for k, v in store._runs.items()],
            }
    raise TypeError(f"cannot digest a {type(store).__name__}")


def state_digest(store: StoreBundle, keep: Callable[[Any], bool] | None = None) -> str:
    """SHA-256 over every row of every table (``keep``: only the rows it keeps): equal digests
    mean nothing was written."""
    rows = state_rows(store)
    if keep is not None:
        rows = {table: [r for r in table_rows if keep(r)] for table, table_rows in rows.items()}
    text = json.dumps(rows, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def next_result(results: Any, procs: Sequence[Any], timeout: float) -> Any:
    """The next item a pool of worker processes put on ``results``; a worker that died, or
    ``timeout`` seconds of silence, raise."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return results.get(timeout=0.5)
        except queue.Empty:
            dead = [p.exitcode for p in procs if not p.is_alive()]
            if dead or time.monotonic() > deadline:
                raise RuntimeError(f"race workers stopped answering (exit codes {dead})"
                                   ) from None


def stop_workers(jobs: Sequence[Any], procs: Sequence[Any]) -> None:
    """Tell every worker of a pool to stop (``None`` on its job queue) and wait for it."""
    for q in jobs:
        q.put(None)
    for p in procs:
        p.join(timeout=30)
        if p.is_alive():  # pragma: no cover
            p.kill()
