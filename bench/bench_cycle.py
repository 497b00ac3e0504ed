"""Benchmark: the pause -> resume cycle next to its physical floor and next to LangGraph, and
the ratios issue 15 sets targets for.  It prints figures; it asserts nothing about time.

Every variant runs in this one process, on SQLite files in one directory on a real disk (a
RAM disk is refused; the filesystem and device are printed), WAL and ``synchronous=FULL`` for
all, interleaved -- each round runs one sample of every variant, in an order shuffled anew each
round -- so a noisy period hits all of them alike and no variant always follows the same one:

* **floor**: what a cycle cannot avoid, in the order it must run it -- an Ed25519 sign, a
  durable SQLite commit (the pause's), a verify (``cryptography``), a second commit (the
  resume's) -- each timed; and, for comparison, the yardstick before it: the two commits back
  to back (see :class:`Floor`);
* **service**: ``PauseService.pause`` with its turn (one unit: one commit) -> ``resume`` on a
  SQLite store;
* **harness**: ``Harness.open("sqlite:...")``: start a script with one interrupt, resume it;
* **embedding**: the same through the public embedding API (:class:`pausepoint.Engine`): an
  agent function that asks once is started, answered, and replayed to its end;
* **statements**, **service-statements** (with ``--breakdown``): the embedding and the service
  cycle's own SQL statements and commits, recorded from one cycle and replayed on a plain
  ``sqlite3`` connection with one sign and one verify -- no Python of pausepoint's: the cycle
  minus this is what its Python layers take;
* **langgraph**: a ``StateGraph`` with one node that calls ``interrupt()``, compiled with
  ``SqliteSaver`` on a file (WAL, ``synchronous=FULL`` set on its connection), invoked until it
  interrupts, then resumed with ``Command(resume=...)``;
* **token**: ``KeyRing.verify`` of a pause token against a raw Ed25519 verify of the same
  signature (``--batch`` of each per round, alternating one by one, each call a sample).

Usage::

    python bench/bench_cycle.py                    # 200 rounds on the repository's filesystem
    python bench/bench_cycle.py --rounds 500 --dir /var/tmp --json
    python bench/bench_cycle.py --fsyncs           # also fsyncs per cycle, under strace
    python bench/bench_cycle.py --only harness --rounds 100   # one variant (e.g. for strace)
    python bench/bench_cycle.py --runs 10          # 10 runs: each ratio's spread, runs meeting it
    python bench/bench_cycle.py --breakdown        # also: how much of the cycle is Python
    python bench/bench_cycle.py --payload-bytes 8000   # every cycle asks an 8 KB bigger payload

A ratio near its target meets it in some runs and not in others, as the machine's speed drifts
(a slow disk or a busy neighbour inflates LangGraph's seven commits more than a cycle's two).
``--runs N`` repeats the whole benchmark N times, each run on fresh files and with its own
shuffled order, and prints each ratio's lowest, median and highest value over the runs and in
how many of them it met its target.  Issue 15's Done-when asks them all of one run: each run
says whether it met every ratio the Done-when names (:data:`DONE_WHEN`), and ``--runs N``
counts the runs that did.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import platform
import random
import re
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Final, Protocol

import attrs
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from nacl.bindings import crypto_sign, crypto_sign_keypair, crypto_sign_open
from rich.console import Console
from rich.table import Table

import pausepoint
from benchkit import Filesystem, Summary, add_round_options, disk_scratch, load_average
from pausepoint.core.canonical import MAX_BYTES
from pausepoint.core.ports import Claims
from pausepoint.core.tokens import SIGNATURE_BYTES, Ed25519Key, KeyRing, b64url_decode
from pausepoint.engine.clock import ManualClock
from pausepoint.engine.compose import compose
from pausepoint.engine.harness import DEFAULT_INTERACTIONS, Harness
from pausepoint.engine.run import PauseBinding
from pausepoint.engine.service import ResumeRequest
from pausepoint.stores import SqliteStore, StoreBundle
from pausepoint.stores.sqlite import PAGE_SIZE as STORE_PAGE_SIZE

RESPONSE = {"approved": True}
PAYLOAD: Final[dict[str, Any]] = {"amount": 12}
"""Issue 15's question: what every cycle asks (its payload), unless ``--payload-bytes``."""
FLOOR_ROW: Final = 800
"""The floor's row, in bytes: about a pause row with :data:`PAYLOAD`."""


OPENSSL_VERIFY: Final = "raw ed25519 verify, OpenSSL"
"""A raw verify by ``cryptography`` (OpenSSL), for comparison: no target is set against it."""


class RawEd25519:
    """A raw Ed25519 key of the library the tokens sign and verify with (libsodium, through
    PyNaCl's bindings: :func:`pausepoint.core.tokens.ed25519_sign`): its sign and verify called
    directly, with nothing of pausepoint's around them -- what the floor, the raw verify and
    the statements alone time."""

    def __init__(self) -> None:
        self.public, self.secret = crypto_sign_keypair()

    def sign(self, message: bytes) -> bytes:
        return crypto_sign(message, self.secret)[:SIGNATURE_BYTES]

    def verify(self, signature: bytes, message: bytes) -> None:
        """Raises unless ``signature`` verifies (as ``cryptography``'s ``verify``)."""
        crypto_sign_open(signature + message, self.public)


def payload_of(note: int) -> dict[str, Any]:
    """:data:`PAYLOAD`, with a ``note`` of ``note`` characters (0: no note, as it is)."""
    if note < 0:
        raise ValueError(f"a note has at least 0 characters, not {note}")
    return {**PAYLOAD, "note": "x" * note} if note else dict(PAYLOAD)


def note_error(note: int) -> str | None:
    """Why a payload with a note of ``note`` characters cannot be asked (None: it can): its
    JSON text must fit the interactions' bound, :data:`~pausepoint.core.canonical.MAX_BYTES`
    (a longer payload is refused ``payload_invalid`` before any pause is taken)."""
    size = json_bytes(payload_of(note))
    if size > MAX_BYTES:
        return (f"a note of {note} characters makes a payload of {size} bytes of JSON, over "
                f"the interactions' bound of {MAX_BYTES} (at most "
                f"{note - (size - MAX_BYTES)} characters)")
    return None


def json_bytes(value: object) -> int:
    """The length of ``value``'s compact JSON text (ASCII here: characters are bytes)."""
    return len(json.dumps(value, separators=(",", ":")))


def script_of(payload: dict[str, Any]) -> list[dict[str, Any]]:
    """The harness's script: one interrupt asking ``payload``, then the end."""
    return [{"op": "interrupt", "name": "approve", "payload": payload}, {"op": "end"}]


def _extra_bytes(payload: dict[str, Any]) -> int:
    """How much longer ``payload``'s JSON text is than :data:`PAYLOAD`'s."""
    return json_bytes(payload) - json_bytes(PAYLOAD)

SMALL_FLOOR = "floor at the stores' page size"
BACK_TO_BACK_FLOOR = "floor, commits back to back"
FLOORS: Final = ("floor", SMALL_FLOOR, BACK_TO_BACK_FLOOR)
"""The floor's three sequences (:class:`Floor`), one per round."""

SIGNING_INPUT = b"x" * 600
"""What the floor and the statements sign and verify: about a pause token's signing input."""

Samples = list[tuple[str, float]]
"""What one round of a variant measured: (sample name, seconds) pairs."""


class Variant(Protocol):
    name: str

    def round(self) -> Samples: ...

    def close(self) -> None: ...


def durable_sqlite(path: str, page_size: int | None = None) -> sqlite3.Connection:
    """A connection as durable as the stores': WAL, ``synchronous=FULL``, autocommit off; on a
    new file, ``page_size`` if given, else SQLite's default."""
    conn = sqlite3.connect(path, check_same_thread=False)
    if page_size is not None:
        conn.execute(f"PRAGMA page_size = {int(page_size)}")
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = FULL")
    return conn


def page_sizes(directory: str) -> dict[str, int]:
    """Each SQLite file's page size, by file name (read-only: changes nothing)."""
    out: dict[str, int] = {}
    for path in sorted(Path(directory).glob("*.db")):
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            out[path.name] = int(conn.execute("PRAGMA page_size").fetchone()[0])
        finally:
            conn.close()
    return out


# -- the variants ------------------------------------------------------------------------------


class Floor:
    """What a cycle cannot avoid, in the order it must run them: one Ed25519 sign, a durable
    commit of a pause-sized row, one Ed25519 verify, a second durable commit -- the pause
    made durable with its token's signature, then the answer's token verified before the
    consume is made durable.

    A cycle cannot run its two commits back to back: its verify (at least) comes between, and
    its first commit follows whatever ran before.  On a disk whose first flush after an idle
    stretch is slower than one right after another (a VM's: ``bench_fsync_gap.py``), two
    commits back to back are cheaper than any cycle's two, so the floor times its four steps in
    that order, as one sequence that follows whatever variant ran before it in the round.  The
    yardstick before it -- the same two commits back to back, the sign and the verify timed
    after them -- is still timed ("floor, commits back to back") for comparison, and no target
    is set against it.  (It also ran the other file's two commits in the same round, right
    before these every other round, which spared them the gap after the variant before: the
    floor warmed the disk for itself.  Measured side by side on a 2-core VM, that floor took
    0.79-0.81 ms where this one took 1.00 ms.)

    The floor is issue 15's yardstick: its file has SQLite's default page size, as LangGraph's
    has.  The stores make their files with smaller pages (``SqliteStore.PAGE_SIZE``), which
    can make a commit cheaper, so the same sequence also runs on a file with the stores' page
    size ("floor at the stores' page size"), for that comparison too.  Each round runs one of
    the three -- each once in every three rounds, in a shuffled order (a benchmark that runs
    the floor twice in a row, as ``bench_cold.py`` does, still gets each in either place) --
    so in ``bench_cycle.py`` each follows another variant, never the floor itself."""

    name = "floor"

    def __init__(self, directory: str, payload: dict[str, Any] = PAYLOAD) -> None:
        self.conn = durable_sqlite(os.path.join(directory, "floor.db"))
        self.small = durable_sqlite(os.path.join(directory, "floor-small-pages.db"),
                                    page_size=STORE_PAGE_SIZE)
        for conn in (self.conn, self.small):
            conn.execute("CREATE TABLE IF NOT EXISTS t (k TEXT PRIMARY KEY, v TEXT)")
            conn.commit()
        self.key = RawEd25519()
        self.message = SIGNING_INPUT
        self.row = "y" * (FLOOR_ROW + _extra_bytes(payload))  # about a pause row
        self.deck = list(reversed(FLOORS))  # the first three rounds in order: "floor" first
        self.rng = random.Random(0)

    def _commit(self, conn: sqlite3.Connection) -> float:
        t0 = time.perf_counter()
        conn.execute("INSERT INTO t VALUES (?, ?)", (uuid.uuid4().hex, self.row))
        conn.commit()
        return time.perf_counter() - t0

    def _sign(self) -> tuple[bytes, float]:
        """One Ed25519 sign: the signature and its seconds."""
        t0 = time.perf_counter()
        signature = self.key.sign(self.message)
        return signature, time.perf_counter() - t0

    def _verify(self, signature: bytes) -> float:
        """One Ed25519 verify of ``signature``: its seconds."""
        t0 = time.perf_counter()
        self.key.verify(signature, self.message)
        return time.perf_counter() - t0

    def _sequence(self, conn: sqlite3.Connection) -> tuple[float, float, float, float]:
        """Sign, commit, verify, commit on ``conn``: the seconds of each."""
        signature, sign = self._sign()
        first = self._commit(conn)
        return sign, first, self._verify(signature), self._commit(conn)

    def round(self) -> Samples:
        if not self.deck:  # each of the three once in every three rounds, in a shuffled order
            self.deck = list(FLOORS)
            self.rng.shuffle(self.deck)
        which = self.deck.pop()
        if which == "floor":
            sign, first, verify, second = self._sequence(self.conn)
            return [("ed25519 sign", sign), ("sqlite durable commit", first),
                    ("ed25519 verify", verify), ("sqlite durable commit", second),
                    ("floor", sign + first + verify + second)]
        if which == SMALL_FLOOR:
            return [(SMALL_FLOOR, sum(self._sequence(self.small)))]
        commits = self._commit(self.conn) + self._commit(self.conn)
        signature, sign = self._sign()
        return [(BACK_TO_BACK_FLOOR, commits + sign + self._verify(signature))]

    def close(self) -> None:
        self.conn.close()
        self.small.close()


class ServiceCycle:
    """``PauseService.pause(..., turn=...)`` -> ``resume`` on ``store`` (closed with it)."""

    name = "service"

    def __init__(self, store: StoreBundle, label: str = "service cycle",
                 payload: dict[str, Any] = PAYLOAD) -> None:
        self.store, self.label, self.payload = store, label, payload
        self.service = compose(store=store, signer=KeyRing.generate(),
                               interactions=DEFAULT_INTERACTIONS, clock=ManualClock(0),
                               ttl_ms=3_600_000).service
        self.request = ResumeRequest(session_id="s", scope="t")

    def round(self) -> Samples:
        run = uuid.uuid4().hex
        binding = PauseBinding(run_id=run, root_run_id=run, session_id="s", thread_id=run,
                               scope="t")
        t0 = time.perf_counter()
        token = self.service.pause(binding=binding, name="approve", payload=self.payload,
                                   interrupt_id=run, checkpoint_id=f"{run}@0", turn="{}").token
        self.service.resume(token, RESPONSE, self.request)
        return [(self.label, time.perf_counter() - t0)]

    def close(self) -> None:
        self.store.close()


class HarnessCycle:
    """A scripted harness run ``[interrupt approve, end]``: start it (it runs, pauses, mints
    and publishes its token), answer the published token, and it runs to ``done``."""

    name = "harness"

    def __init__(self, harness: Harness, label: str = "harness cycle",
                 payload: dict[str, Any] = PAYLOAD) -> None:
        self.harness, self.label, self.script = harness, label, script_of(payload)

    @classmethod
    def open(cls, url: str, label: str = "harness cycle",
             payload: dict[str, Any] = PAYLOAD) -> HarnessCycle:
        """``Harness.open`` on a store URL (``sqlite:PATH``, ``memory:``)."""
        return cls(Harness.open(url, ttl_ms=3_600_000), label, payload)

    def round(self) -> Samples:
        run = uuid.uuid4().hex
        t0 = time.perf_counter()
        started = self.harness.start(self.script, run_id=run, session_id="s", scope="t")
        done = self.harness.resume(started.pauses[0].token, RESPONSE, session_id="s", scope="t")
        dt = time.perf_counter() - t0
        if done.status != "done":
            raise RuntimeError(f"the harness cycle did not finish: {done}")
        return [(self.label, dt)]

    def close(self) -> None:
        self.harness.deployment.store.close()


class LangGraphCycle:
    """A one-node ``StateGraph`` whose node calls ``interrupt()`` with the graph's input
    (``payload``), on ``SqliteSaver``."""

    name = "langgraph"

    def __init__(self, directory: str, payload: dict[str, Any] = PAYLOAD) -> None:
        from typing import TypedDict

        from langgraph.checkpoint.sqlite import SqliteSaver
        from langgraph.graph import END, START, StateGraph
        from langgraph.types import Command, interrupt

        class State(TypedDict, total=False):
            request: dict[str, Any]
            answer: dict[str, Any]

        def approve(state: State) -> State:
            return {"answer": interrupt(state["request"])}

        graph = StateGraph(State)
        graph.add_node("approve", approve)
        graph.add_edge(START, "approve")
        graph.add_edge("approve", END)
        self.conn = durable_sqlite(os.path.join(directory, "langgraph.db"))
        saver = SqliteSaver(self.conn)
        saver.setup()  # its own PRAGMA journal_mode=WAL; synchronous=FULL stays as set above
        self.app = graph.compile(checkpointer=saver)
        self.command = Command
        self.input: Any = {"request": payload}  # the graph's State (a TypedDict of __init__)

    def round(self) -> Samples:
        config: Any = {"configurable": {"thread_id": uuid.uuid4().hex}}
        t0 = time.perf_counter()
        first = self.app.invoke(self.input, config)
        done = self.app.invoke(self.command(resume=RESPONSE), config)
        dt = time.perf_counter() - t0
        asked = first.get("__interrupt__")
        if not asked or asked[0].value != self.input["request"] or \
                done.get("answer") != RESPONSE:
            raise RuntimeError(f"the LangGraph cycle did not interrupt with its payload and "
                               f"resume: {done}")
        return [("langgraph cycle", dt)]

    def close(self) -> None:
        self.conn.close()


class TokenVerify:
    """``KeyRing.verify`` of a pause token, and a raw Ed25519 verify of its signature by the
    library the ring verifies with (libsodium) -- and, for comparison, by OpenSSL's through
    ``cryptography``, which the ring verified with before (no target is set against it)."""

    name = "token"

    def __init__(self, directory: str, batch: int) -> None:
        del directory
        self.batch = batch
        private = Ed25519PrivateKey.generate()
        self.ring = KeyRing(Ed25519Key("k1", private))
        run = uuid.uuid4().hex
        claims = Claims(interrupt_id=run, run_id=run, root_run_id=run, session_id="s",
                        thread_id=run, checkpoint_id=f"{run}@0", scope="t", name="approve",
                        tool_call_id="", payload_digest="sha256:" + "0" * 64,
                        issued_at=0, expires_at=3_600_000)
        self.token, _ = self.ring.mint(claims)
        signing_input, _, signature = self.token.rpartition(".")
        self.signing_input = signing_input.encode("ascii")
        self.signature = b64url_decode(signature)
        self.public = private.public_key().public_bytes_raw()
        self.openssl = private.public_key()

    def round(self) -> Samples:
        """``batch`` of each, alternating one by one, so a noisy moment hits both alike, then
        ``batch`` of OpenSSL's raw verify; each call is a sample of its own (a call preempted on
        a busy machine is one outlier, not a batch's mean pulled up)."""
        out: Samples = []
        clock = time.perf_counter
        for _ in range(self.batch):
            t0 = clock()
            self.ring.verify(self.token)
            t1 = clock()
            crypto_sign_open(self.signature + self.signing_input, self.public)
            t2 = clock()
            out += [("token verify", t1 - t0), ("raw ed25519 verify", t2 - t1)]
        # after them, not between: each of those two follows a verify of the same library
        for _ in range(self.batch):
            t0 = clock()
            self.openssl.verify(self.signature, self.signing_input)
            out.append((OPENSSL_VERIFY, clock() - t0))
        return out

    def close(self) -> None:
        pass


class EmbeddingCycle:
    """The embedding API (:class:`pausepoint.Engine`): an agent function that asks ``approve``
    once and returns is started (it runs, takes its pause, mints and publishes the token,
    records its turn), the token is answered, and the function runs again from the top to
    ``done`` (replay)."""

    name = "embedding"

    def __init__(self, path: str, payload: dict[str, Any] = PAYLOAD,
                 page_size: int | None = None) -> None:
        """On a new SQLite file at ``path``, with ``page_size`` pages (None: the store's
        default), asking ``payload``."""
        def approve_once(ctx: pausepoint.RunContext, request: object) -> object:
            return ctx.ask("approve", request)
        self.engine = pausepoint.Engine.open(
            f"sqlite:{path}" if page_size is None else SqliteStore(path, page_size=page_size),
            agents={"approve": approve_once},
            interactions=[pausepoint.Interaction("approve")], ttl_ms=3_600_000)
        self.payload = payload

    def round(self) -> Samples:
        run = uuid.uuid4().hex
        t0 = time.perf_counter()
        started = self.engine.start("approve", self.payload, run_id=run, session_id="s",
                                    scope="t")
        done = self.engine.resume(started.pauses[0].token, RESPONSE, session_id="s", scope="t")
        dt = time.perf_counter() - t0
        if done.status != "done":
            raise RuntimeError(f"the embedding cycle did not finish: {done}")
        return [("embedding cycle", dt)]

    def close(self) -> None:
        self.engine.close()


class StatementsCycle:
    """A cycle's own SQL statements -- the embedding cycle's (``source="embedding"``) or the
    service cycle's (``"service"``) --, replayed on a plain ``sqlite3`` connection to a file
    with the stores' schema and page size (WAL, ``synchronous=FULL``), with one Ed25519 sign
    before the pause's insert and one verify before its consume -- and nothing else: no Python
    of pausepoint's.  What the cycle would cost if its Python took no time, so the cycle minus
    this is the time its Python layers take (validation, the lifecycle, tokens, rows, and for
    the embedding cycle the engine's replay).

    The statements are recorded from one cycle of the source (by wrapping its store
    connection's ``execute`` while it runs); each round replays them with a fresh run id in
    place of the recorded one, and checks that every write changed as many rows as it did when
    recorded."""

    def __init__(self, directory: str, source: str = "embedding",
                 payload: dict[str, Any] = PAYLOAD) -> None:
        split = SPLITS[source]
        self.name, self.label = split.variant, split.alone
        self.recorded, self.run_id = _record_statements(directory, source, payload)
        path = os.path.join(directory, f"{self.name}.db")
        SqliteStore(path).close()  # the stores' schema and page size
        self.conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self.conn.execute("PRAGMA synchronous = FULL")
        queries = [query for query, _params, _count in self.recorded]
        self.sign_at = next(i for i, q in enumerate(queries) if q.startswith("INSERT INTO")
                            and "_pauses " in q)
        self.verify_at = next(i for i, q in enumerate(queries) if q.startswith("UPDATE")
                              and "_pauses " in q)
        self.key = RawEd25519()
        self.message = SIGNING_INPUT

    def round(self) -> Samples:
        new = uuid.uuid4().hex
        old = self.run_id
        steps = [(query, tuple(p.replace(old, new) if isinstance(p, str) else p
                               for p in params), count)
                 for query, params, count in self.recorded]
        execute, signature = self.conn.execute, b""
        t0 = time.perf_counter()
        counts = []
        for i, (query, params, _count) in enumerate(steps):
            if i == self.sign_at:
                signature = self.key.sign(self.message)
            elif i == self.verify_at:
                self.key.verify(signature, self.message)
            cur = execute(query, params)
            cur.fetchall()
            counts.append(cur.rowcount)
        dt = time.perf_counter() - t0
        if counts != [count for _q, _p, count in steps]:
            raise RuntimeError("the replayed statements did not change the rows they changed "
                               f"when recorded: {counts}")
        return [(self.label, dt)]

    def close(self) -> None:
        self.conn.close()


def _record_statements(directory: str, source: str, payload: dict[str, Any] = PAYLOAD
                       ) -> tuple[list[tuple[str, tuple[Any, ...], int]], str]:
    """One warm cycle's statements (``source``: the embedding or the service cycle, asking
    ``payload``) on its store's connection, each with its parameters and the rows it changed
    (-1 for a read), and the cycle's run id."""
    path = os.path.join(directory, f"{source}-statements-recorded.db")
    cycle: EmbeddingCycle | ServiceCycle
    if source == "embedding":
        cycle = EmbeddingCycle(path, payload)
        store = cycle.engine.deployment.store
    else:
        cycle = ServiceCycle(SqliteStore(path), payload=payload)
        store = cycle.store
    recorded: list[tuple[str, tuple[Any, ...], int]] = []
    try:
        for _ in range(3):
            cycle.round()
        assert isinstance(store, SqliteStore)
        conn: Any = store._conn()  # this thread's connection: the one the cycle runs on
        plain = conn.execute

        def recording(sql: str, parameters: Any = (), /) -> sqlite3.Cursor:
            cur: sqlite3.Cursor = plain(sql, parameters)
            recorded.append((sql, tuple(parameters), cur.rowcount))
            return cur

        conn.execute = recording
        try:
            cycle.round()
        finally:
            conn.execute = plain
    finally:
        cycle.close()
    # the run id: the pause's run_id column (both cycles insert one pause of their run)
    run_id = next(params[1] for query, params, _count in recorded
                  if query.startswith("INSERT INTO") and "_pauses " in query)
    return recorded, str(run_id)


def embedding_variant(directory: str, payload: dict[str, Any] = PAYLOAD) -> Variant | str:
    """The embedding-API cycle (issue 8's public API for running an agent function)."""
    return EmbeddingCycle(os.path.join(directory, "embedding.db"), payload)


DEFAULT_VARIANTS = ("floor", "service", "harness", "embedding", "langgraph", "token")
"""Issue 15's variants.  Each cycle's statements replayed alone (:data:`SPLITS`) are
diagnostics, run with ``--breakdown`` (one more variant in each round changes what the others
run between)."""


def make_variants(names: Sequence[str], directory: str, batch: int,
                  payload: dict[str, Any] = PAYLOAD) -> tuple[list[Variant], dict[str, str]]:
    """The variants to run, every cycle asking ``payload``, and for each one that cannot run,
    why."""
    made: list[Variant] = []
    missing: dict[str, str] = {}
    factories: dict[str, Callable[[], Variant | str]] = {
        "floor": lambda: Floor(directory, payload),
        "service": lambda: ServiceCycle(SqliteStore(os.path.join(directory, "service.db")),
                                        payload=payload),
        "harness": lambda: HarnessCycle.open(f"sqlite:{os.path.join(directory, 'harness.db')}",
                                             payload=payload),
        "embedding": lambda: embedding_variant(directory, payload),
        **{split.variant: functools.partial(StatementsCycle, directory, source, payload)
           for source, split in SPLITS.items()},
        "langgraph": lambda: _langgraph(directory, payload),
        "token": lambda: TokenVerify(directory, batch),
    }
    for name in names:
        got = factories[name]()
        if isinstance(got, str):
            missing[name] = got
        else:
            made.append(got)
    return made, missing


def _langgraph(directory: str, payload: dict[str, Any] = PAYLOAD) -> Variant | str:
    try:
        return LangGraphCycle(directory, payload)
    except ImportError as exc:
        return f"not available ({exc}; pip install -e '.[peers]')"


def run_rounds(variants: Sequence[Variant], rounds: int, warmup: int, seed: int = 0
               ) -> dict[str, list[float]]:
    """Each round runs every variant once, in an order shuffled anew each round (``seed``), so
    that no variant always follows the same one: a commit's fsync costs more right after
    another variant's writes than after a variant that only computes, and a fixed order (a
    rotation keeps each variant's predecessor) would hand that cost to the same variants
    every round.  The first ``warmup`` rounds are discarded."""
    rng = random.Random(seed)
    samples: dict[str, list[float]] = {}
    order = list(variants)
    for r in range(warmup + rounds):
        rng.shuffle(order)
        for variant in order:
            got = variant.round()
            if r >= warmup:
                for name, seconds in got:
                    samples.setdefault(name, []).append(seconds)
    return samples


# -- the ratios --------------------------------------------------------------------------------


@attrs.frozen
class Ratio:
    what: str
    numerator: str
    denominator: str
    target: float
    note: str = ""

    def allowed(self, medians: dict[str, float]) -> float | None:
        """The most the numerator may take, at the denominator's median, to meet the target."""
        if self.denominator in medians:
            return self.target * medians[self.denominator]
        return None

    def value(self, medians: dict[str, float]) -> float | None:
        if self.numerator in medians and self.denominator in medians:
            return medians[self.numerator] / medians[self.denominator]
        return None

    def met_by(self, value: float) -> bool:
        """Whether ``value`` of this ratio meets its target (at most the target)."""
        return value <= self.target


RATIOS = (
    Ratio("harness cycle / LangGraph SqliteSaver cycle", "harness cycle", "langgraph cycle",
          0.20),
    Ratio("embedding-API cycle / LangGraph SqliteSaver cycle", "embedding cycle",
          "langgraph cycle", 0.20),
    Ratio("service cycle / floor", "service cycle", "floor", 1.5),
    Ratio("service cycle / floor at the stores' page size", "service cycle", SMALL_FLOOR, 1.5,
          "the floor's sequence on a file with the stores' smaller pages"),
    Ratio("service cycle / floor with its commits back to back", "service cycle",
          BACK_TO_BACK_FLOOR, 1.5, "for comparison: no cycle runs its commits back to back "
          "(bench_fsync_gap.py); not the Done-when's"),
    Ratio("harness cycle / floor", "harness cycle", "floor", 2.0,
          "the target is for the embedding API"),
    Ratio("embedding-API cycle / floor", "embedding cycle", "floor", 2.0),
    Ratio("token verify / raw Ed25519 verify", "token verify", "raw ed25519 verify", 1.3),
)
"""Issue 15's table: each ratio of medians, and its target (at most)."""


def ratio_of(numerator: str, denominator: str) -> Ratio:
    """The ratio of :data:`RATIOS` with this numerator and denominator."""
    return next(r for r in RATIOS if (r.numerator, r.denominator) == (numerator, denominator))


EMBEDDING_VS_LANGGRAPH = ratio_of("embedding cycle", "langgraph cycle")
SERVICE_VS_FLOOR = ratio_of("service cycle", "floor")

DONE_WHEN: Final = (
    (ratio_of("harness cycle", "langgraph cycle"), EMBEDDING_VS_LANGGRAPH),
    (SERVICE_VS_FLOOR,),
    (ratio_of("token verify", "raw ed25519 verify"),),
)
"""The ratios issue 15's Done-when names, in groups: a run meets it when each group has a ratio
that meets its target -- the harness *or* the embedding-API cycle against LangGraph's, the
service cycle against the floor, token verify against a raw verify.  (Its other figure, the
suite plus 1,000 vectors, is ``bench_conformance.py``'s.)"""


def done_when_missed(out: dict[str, Any]) -> list[str] | None:
    """What of :data:`DONE_WHEN` the run ``out`` (:func:`report`) misses, one line per group
    ([]: it meets every one), or None when it measured no ratio of some group."""
    values = {r["what"]: r["value"] for r in out["ratios"]}
    missed = []
    for group in DONE_WHEN:
        measured = [(r, v) for r in group if (v := values.get(r.what)) is not None]
        if not measured:
            return None
        if not any(r.met_by(v) for r, v in measured):
            missed.append(" and ".join(f"{r.what} {v:.3f} > {r.target:.2f}"
                                       for r, v in measured))
    return missed


def _ms(seconds: float | None) -> float | None:
    return None if seconds is None else seconds * 1e3


@attrs.frozen
class Split:
    """A cycle split by ``--breakdown``: its statements replayed alone (the variant
    ``variant``, its sample ``alone``), and the target its Python must fit (``ratio``, whose
    numerator is the cycle; ``against`` says how the target reads)."""

    variant: str
    alone: str
    ratio: Ratio
    against: str

    @property
    def key(self) -> str:
        """The report's key for this split."""
        return f"{self.ratio.numerator.split()[0]}_breakdown"


SPLITS: Final = {
    "embedding": Split("statements", "statements alone", EMBEDDING_VS_LANGGRAPH,
                       "of LangGraph's cycle"),
    "service": Split("service-statements", "service statements alone", SERVICE_VS_FLOOR,
                     "x the floor"),
}
"""The cycles ``--breakdown`` splits, by source (:class:`StatementsCycle`)."""
VARIANTS = DEFAULT_VARIANTS + tuple(split.variant for split in SPLITS.values())


def breakdown(medians: dict[str, float], split: Split = SPLITS["embedding"]
              ) -> dict[str, float | None] | None:
    """Where ``split``'s cycle's time goes (medians in seconds): its statements and crypto
    alone (:class:`StatementsCycle`), the rest -- pausepoint's Python, run with caches as cold
    as the cycle's (the statements replay touches far fewer cache lines, so most of a cold
    cache's cost lands here: ``bench_cold.py``) --, and how much that Python may take for the
    cycle to meet its target (the embedding cycle's against LangGraph's, the service cycle's
    against the floor).  None without both the cycle and its statements."""
    took, bare = medians.get(split.ratio.numerator), medians.get(split.alone)
    if took is None or bare is None:
        return None
    allowed = split.ratio.allowed(medians)
    return {"cycle_ms": took * 1e3, "statements_alone_ms": bare * 1e3,
            "python_ms": (took - bare) * 1e3, "python_share": (took - bare) / took,
            "python_allowed_ms": None if allowed is None else (allowed - bare) * 1e3}


def report(samples: dict[str, list[float]], missing: dict[str, str], *, fs: Filesystem,
           directory: str, rounds: int, started_load: tuple[float, float, float],
           fsyncs: dict[str, float | str] | None, pages: dict[str, int] | None = None,
           payload: dict[str, Any] = PAYLOAD) -> dict[str, Any]:
    summaries = {name: Summary.of(values) for name, values in samples.items()}
    medians = {name: s.median for name, s in summaries.items()}
    ratios = []
    for ratio in RATIOS:
        value = ratio.value(medians)
        ratios.append({"what": ratio.what, "value": value, "target": ratio.target,
                       "meets": None if value is None else ratio.met_by(value),
                       "measured_ms": _ms(medians.get(ratio.numerator)),
                       "allowed_ms": _ms(ratio.allowed(medians)), "note": ratio.note})
    return {
        "filesystem": attrs.asdict(fs), "directory": directory, "rounds": rounds,
        "load_average": {"start": list(started_load), "end": list(load_average())},
        "cpus": os.cpu_count(), "python": platform.python_version(),
        "sqlite": sqlite3.sqlite_version, "page_sizes": pages or {},
        "payload_bytes": json_bytes(payload),
        "samples": {name: {"n": s.n, "median_ms": s.median * 1e3, "p95_ms": s.p95 * 1e3}
                    for name, s in summaries.items()},
        "not_available": missing, "ratios": ratios,
        "done_when_missed": done_when_missed({"ratios": ratios}), "fsyncs_per_cycle": fsyncs,
        **{split.key: breakdown(medians, split) for split in SPLITS.values()},
    }


def over_runs(outs: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each ratio of issue 15 over several runs' reports (:func:`report`): its lowest, median
    and highest value, and how many of the runs that measured it met its target."""
    spread = []
    for i, ratio in enumerate(RATIOS):
        values = [v for out in outs if (v := out["ratios"][i]["value"]) is not None]
        spread.append({
            "what": ratio.what, "target": ratio.target, "runs": len(values),
            "min": min(values, default=None),
            "median": statistics.median(values) if values else None,
            "max": max(values, default=None),
            "met": sum(1 for v in values if ratio.met_by(v)), "note": ratio.note})
    return spread


def print_runs(outs: Sequence[dict[str, Any]], spread: Sequence[dict[str, Any]]) -> None:
    """What :func:`over_runs` found, after the last run's full report."""
    console = Console(width=max(170, shutil.get_terminal_size().columns), highlight=False)
    table = Table(title=f"ratios of medians over {len(outs)} runs (issue 15)")
    table.add_column("ratio")
    for label in ("min", "median", "max", "target", "runs meeting it"):
        table.add_column(label, justify="right")
    table.add_column("note")
    for r in spread:
        if not r["runs"]:
            table.add_row(r["what"], "n/a", "n/a", "n/a", f"<= {r['target']:.2f}", "-", r["note"])
            continue
        table.add_row(r["what"], *(f"{r[k]:.3f}" for k in ("min", "median", "max")),
                      f"<= {r['target']:.2f}", f"{r['met']} of {r['runs']}", r["note"])
    console.print(table)
    seconds = Table(title="each run's medians (ms)")
    names = [name for name in ("floor", "service cycle", SPLITS["service"].alone,
                               "embedding cycle", SPLITS["embedding"].alone, "harness cycle",
                               "langgraph cycle")
             if any(name in out["samples"] for out in outs)]
    seconds.add_column("run", justify="right")
    for name in names:
        seconds.add_column(name, justify="right")
    seconds.add_column("Done-when ratios all met")
    verdicts = [out["done_when_missed"] for out in outs]
    for i, (out, missed) in enumerate(zip(outs, verdicts, strict=True), 1):
        seconds.add_row(str(i), *(f"{out['samples'][n]['median_ms']:.3f}"
                                  if n in out["samples"] else "-" for n in names),
                        "-" if missed is None else "no" if missed else "yes")
    console.print(seconds)
    measured = [missed for missed in verdicts if missed is not None]
    console.print(f"runs meeting every ratio of issue 15's Done-when at once: "
                  f"{sum(1 for missed in measured if not missed)} of {len(measured)}"
                  + ("" if len(measured) == len(outs) else
                     f" (the other {len(outs) - len(measured)} did not measure them all)"))


def _done_when_line(missed: list[str] | None) -> str:
    """What :func:`done_when_missed` found, as a sentence."""
    if missed is None:
        return "issue 15's Done-when ratios: not all measured in this run"
    if not missed:
        return "issue 15's Done-when ratios: every one met in this run"
    return "issue 15's Done-when ratios: not met in this run -- " + "; ".join(missed)


def print_report(out: dict[str, Any]) -> None:
    console = Console(width=max(170, shutil.get_terminal_size().columns), highlight=False)
    fs = out["filesystem"]
    load = out["load_average"]
    console.print(f"disk: {out['directory']} on {fs['fstype']} {fs['device']} "
                  f"(mounted at {fs['mount_point']}); WAL, synchronous=FULL")
    console.print(f"{out['rounds']} rounds, interleaved in a shuffled order; {out['cpus']} CPUs; "
                  f"load average {load['start'][0]:.2f} at start, {load['end'][0]:.2f} at end; "
                  f"Python {out['python']}, SQLite {out['sqlite']}")
    size = out["payload_bytes"]
    console.print(f"every cycle asks a payload of {size} bytes of JSON" + (
        "" if size == json_bytes(PAYLOAD) else
        f" (--payload-bytes; issue 15's targets are for its {json_bytes(PAYLOAD)}-byte payload)"))
    if out["page_sizes"]:
        console.print("page size (bytes): " + ", ".join(
            f"{name} {size}" for name, size in out["page_sizes"].items()))
    table = Table(title="per sample (ms)")
    table.add_column("what")
    table.add_column("median", justify="right")
    table.add_column("p95", justify="right")
    table.add_column("n", justify="right")
    for name, s in out["samples"].items():
        table.add_row(name, f"{s['median_ms']:.3f}", f"{s['p95_ms']:.3f}", str(s["n"]))
    console.print(table)
    for name, why in out["not_available"].items():
        label = "embedding API" if name == "embedding" else name
        console.print(f"{label}: {why}")
    ratios = Table(title="ratios of medians (issue 15)")
    ratios.add_column("ratio")
    ratios.add_column("measured", justify="right")
    ratios.add_column("target", justify="right")
    ratios.add_column("meets")
    ratios.add_column("numerator (ms)", justify="right")
    ratios.add_column("allowed (ms)", justify="right")
    ratios.add_column("note")
    for r in out["ratios"]:
        value = "n/a" if r["value"] is None else f"{r['value']:.2f}"
        meets = {None: "-", True: "yes", False: "no"}[r["meets"]]
        ratios.add_row(r["what"], value, f"<= {r['target']:.2f}", meets,
                       *("-" if ms is None else f"{ms:.3f}"
                         for ms in (r["measured_ms"], r["allowed_ms"])), r["note"])
    console.print(ratios)
    console.print(_done_when_line(out["done_when_missed"]))
    for spec in SPLITS.values():
        split = out[spec.key]
        if split is None:
            continue
        allowed = split["python_allowed_ms"]
        console.print(
            f"{spec.ratio.numerator} {split['cycle_ms']:.3f} ms = its statements, commits, sign "
            f"and verify alone {split['statements_alone_ms']:.3f} ms + pausepoint's Python "
            f"{split['python_ms']:.3f} ms ({split['python_share']:.0%}; the Python with the cost "
            "of its cold caches, which bench_cold.py measures)"
            + ("" if allowed is None else
               f"; at {spec.ratio.target:.2f} {spec.against} the Python may take "
               f"{allowed:.3f} ms"))
    if out["fsyncs_per_cycle"]:
        fsyncs = Table(title="fsync + fdatasync calls per cycle (strace -c -f)")
        fsyncs.add_column("variant")
        fsyncs.add_column("per cycle", justify="right")
        for name, value in out["fsyncs_per_cycle"].items():
            fsyncs.add_row(name, value if isinstance(value, str) else f"{value:.2f}")
        console.print(fsyncs)


# -- fsyncs per cycle, under strace ------------------------------------------------------------


_SYSCALL_ROW = re.compile(r"^\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+)\s+(?:\d+\s+)?(fsync|fdatasync)\s*$")


def fsync_calls(summary: str) -> int:
    """The fsync plus fdatasync calls in a ``strace -c`` summary."""
    return sum(int(m.group(1)) for line in summary.splitlines()
               if (m := _SYSCALL_ROW.match(line)))


def _strace_calls(variant: str, rounds: int, directory: str, note: int = 0) -> int:
    with tempfile.NamedTemporaryFile("r", suffix=".strace") as summary:
        subprocess.run(
            ["strace", "-c", "-f", "-e", "trace=fsync,fdatasync", "-o", summary.name,
             sys.executable, __file__, "--only", variant, "--rounds", str(rounds),
             "--warmup", "0", "--dir", directory, "--payload-bytes", str(note), "--json"],
            check=True, stdout=subprocess.DEVNULL)
        return fsync_calls(summary.read())


def fsyncs_per_cycle(variants: Sequence[str], directory: str, small: int, large: int,
                     note: int = 0) -> dict[str, float | str]:
    """For each variant, (calls at ``large`` rounds - calls at ``small``) / (large - small):
    what one cycle costs, without the start-up's and the schema's fsyncs."""
    if shutil.which("strace") is None:
        return dict.fromkeys(variants, "strace is not installed")
    out: dict[str, float | str] = {}
    for variant in variants:
        try:
            calls = [_strace_calls(variant, n, directory, note) for n in (small, large)]
        except subprocess.CalledProcessError as exc:
            out[variant] = f"strace failed ({exc.returncode})"
            continue
        out[variant] = (calls[1] - calls[0]) / (large - small)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    add_round_options(parser, rounds=200)
    parser.add_argument("--batch", type=int, default=20,
                        help="token and raw verifies per round (default 20)")
    parser.add_argument("--only", choices=VARIANTS, action="append",
                        help="run only this variant (repeatable)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--breakdown", action="store_true",
                        help="also replay the embedding and service cycles' statements alone "
                        "and split each cycle into its statements, commits and crypto and "
                        "pausepoint's Python")
    parser.add_argument("--fsyncs", action="store_true",
                        help="also count fsyncs per cycle of the service, harness and LangGraph "
                        "cycles, each in a child process under strace -c -f")
    parser.add_argument("--fsync-rounds", default="10,60",
                        help="the two round counts the fsync count is differenced over")
    parser.add_argument("--payload-bytes", type=int, default=0, metavar="N",
                        help="add a note of N characters to the payload every cycle asks, "
                        "and LangGraph's graph interrupts with (default 0: issue 15's "
                        f"{json_bytes(PAYLOAD)}-byte payload, which its targets are for)")
    parser.add_argument("--runs", type=int, default=1,
                        help="repeat the whole benchmark this many times, each run on fresh "
                        "files, and print each ratio's spread over the runs (default 1)")
    args = parser.parse_args(argv)
    if args.rounds < 1 or args.warmup < 0 or args.batch < 1 or args.runs < 1 \
            or args.payload_bytes < 0:
        parser.error("--rounds, --batch and --runs must be at least 1, --warmup and "
                     "--payload-bytes at least 0")
    too_long = note_error(args.payload_bytes)
    if too_long is not None:
        parser.error(f"--payload-bytes: {too_long}")
    small, large = _fsync_rounds(parser, args.fsync_rounds)
    outs = []
    for run in range(args.runs):
        if args.runs > 1:
            print(f"run {run + 1} of {args.runs} ...", file=sys.stderr, flush=True)
        outs.append(_one_run(args, seed=run,
                             fsync_rounds=(small, large) if args.fsyncs and
                             run == args.runs - 1 else None))
    spread = over_runs(outs) if args.runs > 1 else None
    if args.json:
        doc = outs[0] if spread is None else {"runs": outs, "over_runs": spread}
        print(json.dumps(doc, indent=2, sort_keys=False))
    else:
        print_report(outs[-1])
        if spread is not None:
            print_runs(outs, spread)
    return 0


def _fsync_rounds(parser: argparse.ArgumentParser, text: str) -> tuple[int, int]:
    """``--fsync-rounds SMALL,LARGE``: two different round counts, each at least 1."""
    try:
        small, large = sorted(int(x) for x in text.split(","))
    except ValueError:
        parser.error(f"--fsync-rounds takes two round counts such as 10,60, not {text!r}")
    if small < 1 or small == large:
        parser.error(f"--fsync-rounds takes two different round counts of at least 1, "
                     f"not {text!r}")
    return small, large


def _one_run(args: argparse.Namespace, seed: int,
             fsync_rounds: tuple[int, int] | None) -> dict[str, Any]:
    """One run of the benchmark on fresh files: its report (:func:`report`)."""
    started_load = load_average()
    with disk_scratch(args.dir) as (directory, fs):
        names = list(args.only or DEFAULT_VARIANTS)
        if args.breakdown:  # each timed cycle's statements alone, once
            names += [split.variant for source, split in SPLITS.items()
                      if source in names and split.variant not in names]
        payload = payload_of(args.payload_bytes)
        variants, missing = make_variants(names, directory, args.batch, payload)
        try:
            samples = run_rounds(variants, args.rounds, args.warmup, seed=seed)
            pages = page_sizes(directory)
        finally:
            for variant in variants:
                variant.close()
        fsyncs = None
        if fsync_rounds is not None:
            fsyncs = fsyncs_per_cycle(
                [v for v in ("service", "harness", "embedding", "langgraph")
                 if v not in missing], os.path.dirname(directory), *fsync_rounds,
                note=args.payload_bytes)
        return report(samples, missing, fs=fs, directory=str(Path(directory).parent),
                      rounds=args.rounds, started_load=started_load, fsyncs=fsyncs,
                      pages=pages, payload=payload)


if __name__ == "__main__":
    sys.exit(main())
