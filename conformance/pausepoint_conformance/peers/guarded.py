"""What every guarded peer adapter shares: the framework measured with its pausepoint guard
(:mod:`pausepoint.guards`) switched on -- the "with pausepoint" column of the matrix.

A guarded adapter is the framework's own peer adapter with ``guarded=True``: the same scripts,
the same framework calls, and in front of its resume path a :class:`~pausepoint.guards.Guard`
on a store of the adapter's kind (a SQLite file in the adapter's directory, or memory), signing
with a key ring and judging expiry by a manual clock.  :class:`GuardBox` holds them and answers
the operations the guard brings (``rotate_key``, ``retire_key``, ``advance_clock``,
``pause_state`` from the ledger); :func:`guarded_claims` adds the groups the guard provides to
the framework's own.  Nothing here imports a framework.
"""

from __future__ import annotations

import os
import secrets
import threading
from collections.abc import Callable
from typing import Any, ClassVar, Final, TypeVar, cast

from pausepoint.core.clauses import ErrorCode, Group
from pausepoint.core.errors import PausepointError
from pausepoint.core.ports import Claims
from pausepoint.core.tokens import Ed25519Key, KeyRing
from pausepoint.engine.clock import ManualClock
from pausepoint.guards.core import Guard, GuardedInterrupt
from pausepoint.stores import MemoryStore
from pausepoint.stores.base import StoreBundle
from pausepoint_conformance.adapters.reference import INTERACTIONS
from pausepoint_conformance.faults.testbed import (
    DSN_ENV,
    StoreSpec,
    drop,
    fresh_postgres,
    fresh_sqlite,
)
from pausepoint_conformance.peers.base import (
    StoredPeerAdapter,
    as_result,
    attempt,
    resume_in_two_steps,
)
from pausepoint_conformance.protocol.wire import (
    AdvanceClockArgs,
    ClockData,
    CrashRestartArgs,
    Empty,
    Errored,
    KeyData,
    Ok,
    PauseKind,
    PauseStateArgs,
    PhaseData,
    PublishedPause,
    Refused,
    ResetArgs,
    RestartData,
    Result,
    ResumeArgs,
    ResumeData,
    ResumeResult,
    RetireKeyArgs,
    RotateKeyArgs,
    RunReport,
    RunStatus,
    StartArgs,
)

T = TypeVar("T")
R = TypeVar("R")

GUARD_GROUPS: Final[frozenset[Group]] = frozenset({Group.TOKENS, Group.REPLAY, Group.EXPIRY})
"""What the guard adds to a framework: signed tokens (and their rotation), replays and
conflicts, and expiry."""

GUARD_TTL_MS: Final[int] = 60_000
"""The ttl of a guarded pause (the suite's clock is the adapter's manual clock)."""


def guarded_claims(own: list[Group]) -> list[Group]:
    """The framework's own claimed groups and the guard's, in the order of :class:`Group`."""
    wanted = {*own, *GUARD_GROUPS}
    return [g for g in Group if g in wanted]


def refused(exc: Exception) -> Refused | None:
    """A guard's refusal as the protocol's: its code, message and clause."""
    if isinstance(exc, PausepointError):
        return Refused(code=exc.code.value, message=exc.message, clause=exc.clause)
    return None


def guarded_attempt(fn: Callable[[], T],
                    other: Callable[[Exception], Refused | None] = lambda _e: None,
                    ) -> T | Refused | Errored:
    """``fn()``, a guard's refusal (or ``other``'s, the framework's own) as the protocol's;
    a framework failure behind the guard is the framework's error."""
    def either(exc: Exception) -> Refused | None:
        return refused(exc) or other(exc)
    return attempt(fn, either)


def published(p: GuardedInterrupt) -> PublishedPause:
    """A guarded pause as the protocol publishes it: the ledger id, the signed token."""
    return PublishedPause(interrupt_id=p.interrupt_id, run_id=p.run_id, name=p.name,
                          kind=PauseKind.ASK, payload=p.payload, token=p.token,
                          resumable=p.resumable, expires_at=p.expires_at,
                          tool_call_id=p.tool_call_id)


SERVERS: Final[int] = 16
"""How many other servers' guards a box keeps open for races."""

GUARD_STORES: Final[tuple[str, ...]] = ("memory", "sqlite", "postgres")
"""Where a guarded adapter's guard keeps its ledger: memory, a SQLite file in the adapter's
directory, or a schema of its own on the PostgreSQL server of ``$PAUSEPOINT_PG_DSN``."""


class GuardBox:
    """The guard a guarded peer adapter runs behind, on a store of kind ``store`` (one of
    :data:`GUARD_STORES`; a SQLite file goes in ``directory``, the adapter's private
    directory).  Every reset makes a fresh store (a new file, a new schema -- the old one
    dropped), :meth:`server` opens another server's guard on the same store (new
    connections; memory: the same store object), and :meth:`restart` reopens the store after
    a crash (memory: an empty one)."""

    def __init__(self, framework: str, directory: str, *, store: str) -> None:
        if store not in GUARD_STORES:
            raise ValueError(f"a guard's store is one of {GUARD_STORES}, not {store!r}")
        self.framework = framework
        self.directory = directory
        self.store = store
        self._n = 0
        self._kid_n = 1
        self.ring = KeyRing.generate("k1")
        self.clock = ManualClock(0)
        self._payload_key = secrets.token_bytes(32)
        self._spec = StoreSpec("memory")
        self._bundle: StoreBundle = MemoryStore()
        self._servers: list[Guard] = []
        self._lock = threading.Lock()
        self._pool: list[Guard] = []
        self._turn = 0
        self.guard = self._fresh()

    @property
    def durable(self) -> bool:
        return self.store != "memory"

    def _open(self) -> StoreBundle:
        return self._spec.open() if self.durable else self._bundle

    def _guard(self, bundle: StoreBundle) -> Guard:
        g = Guard.open(bundle, framework=self.framework, interactions=INTERACTIONS,
                       signer=self.ring, clock=self.clock, ttl_ms=GUARD_TTL_MS,
                       payload_key=self._payload_key)
        self._servers.append(g)
        return g

    def _fresh(self) -> Guard:
        self._n += 1
        drop(self._spec)
        self._spec = (fresh_sqlite(self.directory, f"guard-{self._n}.sqlite")
                      if self.store == "sqlite"
                      else fresh_postgres(os.environ.get(DSN_ENV, ""), "pp_guard")
                      if self.store == "postgres" else StoreSpec("memory"))
        self._bundle = MemoryStore()
        return self._guard(self._open())

    def server(self) -> Guard:
        """Another server's guard on the same store: one of :data:`SERVERS` kept open (new
        connections each), handed out in turn -- so racers up to that many each get their
        own."""
        with self._lock:
            if len(self._pool) < SERVERS:
                self._pool.append(self._guard(self._open()))
            self._turn = (self._turn + 1) % len(self._pool)
            return self._pool[self._turn]

    def _close_servers(self) -> None:
        with self._lock:
            self._pool, self._turn = [], 0
        servers, self._servers = self._servers, []
        for g in servers:
            if self.durable:
                g.close()

    def close(self) -> None:
        self._close_servers()
        drop(self._spec)

    def reset(self) -> None:
        self._close_servers()
        self.guard = self._fresh()

    def restart(self) -> None:
        """The process died: the store opened anew (memory: lost, a fresh one)."""
        self._close_servers()
        if not self.durable:
            self._bundle = MemoryStore()
        self.guard = self._guard(self._open())

    # -- the operations the guard brings ------------------------------------------------------

    def rotate_key(self) -> Result[KeyData]:
        def go() -> KeyData:
            self._kid_n += 1
            kid = f"k{self._kid_n}"
            self.ring.rotate(Ed25519Key.generate(kid))
            return KeyData(kid=kid)
        return as_result(guarded_attempt(go))

    def retire_key(self, kid: str) -> Result[Empty]:
        def go() -> Empty:
            self.guard.service.retire_key(kid, self.ring)
            return Empty()
        return as_result(guarded_attempt(go))

    def advance(self, ms: int) -> int:
        now = self.clock.advance(ms)
        self.guard.service.expire_due()
        return now

    def phase(self, interrupt_id: str) -> PhaseData | None:
        """The pause's phase in the ledger (None: the ledger has no such pause)."""
        rec = self.guard.service.ledger.get(interrupt_id)
        return None if rec is None else PhaseData(phase=rec.state.phase.value)



class GuardedPeer(StoredPeerAdapter):
    """What a guarded peer adapter adds to its framework's adapter, whatever the framework:
    put it first among the bases (``class GuardedX(GuardedPeer, XAdapter)``) and name the
    guard's framework in :attr:`guard_framework`.  It keeps the guard (:attr:`_box`) and each
    run's binding, claims the guard's groups, and answers ``pause_state`` from the ledger and
    ``advance_clock``, ``rotate_key``, ``retire_key`` with the guard; the subclass publishes
    pauses with :meth:`_guarded_pause` and resumes through :meth:`_guarded_resume`."""

    guard_framework: ClassVar[str]

    def __init__(self, store: str = "memory", *args: Any, guard_store: str | None = None,
                 **kwargs: Any) -> None:
        super().__init__(store, *args, **kwargs)
        self._box = GuardBox(self.guard_framework, self._dir, store=guard_store or self.store)
        self._bindings: dict[str, tuple[str, str]] = {}

    def close(self) -> None:
        self._box.close()
        super().close()

    def claimed(self) -> list[Group]:
        return guarded_claims(super().claimed())

    def reset(self, args: ResetArgs) -> Result[Empty]:
        self._box.reset()
        self._bindings = {}
        done: Result[Any] = cast(Any, super()).reset(args)  # the framework adapter's own
        return done

    def start(self, args: StartArgs) -> Result[RunReport]:
        self._bindings[args.run_id] = (args.session_id, args.scope)
        done: Result[Any] = cast(Any, super()).start(args)  # the framework adapter's own
        return done

    def crash_restart(self, args: CrashRestartArgs) -> Result[RestartData]:
        self._box.restart()
        done: Result[Any] = cast(Any, super()).crash_restart(args)  # the framework adapter's own
        return done

    def pause_state(self, args: PauseStateArgs) -> Result[PhaseData]:
        found = self._box.phase(args.interrupt_id)
        if found is None:
            return Refused(code=ErrorCode.PAUSE_UNKNOWN.value,
                           message=f"the ledger has no pause {args.interrupt_id!r}")
        return Ok(data=found)

    def advance_clock(self, args: AdvanceClockArgs) -> Result[ClockData]:
        return Ok(data=ClockData(now=self._box.advance(args.ms)))

    def rotate_key(self, args: RotateKeyArgs) -> Result[KeyData]:
        return self._box.rotate_key()

    def retire_key(self, args: RetireKeyArgs) -> Result[Empty]:
        return self._box.retire_key(args.kid)

    def _guarded_pause(self, run_id: str, interrupt_id: str, name: str, payload: Any,
                       tool_call_id: str) -> PublishedPause:
        """The framework's pause registered with the guard, bound as its run was started."""
        session, scope = self._bindings.get(run_id, ("", ""))
        return published(self._box.guard.pause(
            thread_id=run_id, interrupt_id=interrupt_id, name=name, payload=payload,
            tool_call_id=tool_call_id, session_id=session, scope=scope))

    def _refused_report(self, run_id: str, exc: PausepointError, ran: bool = True) -> RunReport:
        """A run stopped because the guard refused to take one of its pauses."""
        return RunReport(run_id=run_id, status=RunStatus.ERROR,
                         events=[RunStatus.ERROR.value] if ran else [], refusal=refused(exc))

    def _guarded_resume(self, args: ResumeArgs, fresh: bool,
                        together: Callable[[], None] | None,
                        resolve: Callable[[Guard, Claims], R | Refused],
                        answer: Callable[[Guard, R], ResumeData | Refused],
                        framework_refusal: Callable[[Exception], Refused | None],
                        ) -> ResumeResult:
        """A resume through the guard (another server's when ``fresh``): ``resolve`` the run
        the verified token names, then -- once ``together`` -- ``answer`` it with the guard
        (whose refusals, and the framework's, become the protocol's)."""
        guard = self._box.server() if fresh else self._box.guard

        def either(exc: Exception) -> Refused | None:
            return refused(exc) or framework_refusal(exc)
        return resume_in_two_steps(
            lambda: resolve(guard, guard.service.signer.verify(args.token)),
            lambda r: answer(guard, r), together, resolve_refusal=either,
            answer_refusal=either)
