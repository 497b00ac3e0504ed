"""The in-process adapter for the reference implementation (``reference:memory``,
``reference:sqlite``): it realises the protocol's scripted runs with
:class:`pausepoint.engine.harness.Harness`.

The adapter is deliberately thin -- it translates messages, it decides nothing -- and it is
built from parts a subclass can swap (:meth:`ReferenceAdapter.wrap_bundle`,
:meth:`ReferenceAdapter.make_harness`), which is how the deliberately broken implementations in
``tests/broken/`` are made: the reference with one piece replaced.

Interactions registered (the protocol's conformance set, ``spec/adapter-protocol.md``):
``approve``, ``ask``, ``confirm``, ``choose`` (any JSON object as payload and response),
``pay`` (a tool pause: needs a tool call id) and ``restricted`` (only the responder
``operator`` may answer).
"""

from __future__ import annotations

import os
import re
import shutil
import sqlite3
import tempfile
import threading
from collections.abc import Callable
from typing import Any

from pausepoint import __version__ as reference_version
from pausepoint.core.clauses import ErrorCode, Group
from pausepoint.core.errors import PausepointError
from pausepoint.core.ports import Claims
from pausepoint.core.registry import RECONCILE, Interaction
from pausepoint.core.tokens import Ed25519Key, KeyRing
from pausepoint.engine.clock import ManualClock
from pausepoint.engine.compose import Deployment, compose
from pausepoint.engine.harness import DEFAULT_INTERACTIONS, Harness, MemoryWorld, Report, World
from pausepoint.engine.run import EventKind, PendingInterrupt, RunEvent, RunIdentity, Runner
from pausepoint.stores import MemoryStore, SqliteStore, open_store
from pausepoint.stores.base import PortBundle, StoreBundle
from pausepoint_conformance import __version__ as suite_version
from pausepoint_conformance.faults.interleave import play
from pausepoint_conformance.faults.testbed import StoreSpec, fresh_sqlite
from pausepoint_conformance.protocol.port import errored_from, run_together
from pausepoint_conformance.protocol.wire import (
    PROTOCOL_VERSION,
    AdvanceClockArgs,
    CancelArgs,
    CancelData,
    ClockData,
    CountData,
    CrashRestartArgs,
    EffectCountArgs,
    Empty,
    HelloArgs,
    HelloData,
    Implementation,
    InterleaveArgs,
    InterleaveData,
    KeyData,
    OfferedTool,
    Ok,
    PauseKind,
    PauseStateArgs,
    PhaseData,
    PublishedPause,
    RaceData,
    RaceResumeArgs,
    ReconcileArgs,
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
    StatusArgs,
    StatusData,
    WiringArgs,
    WiringData,
    to_script,
)

OPERATOR = "operator"


def operator_only(responder: str, claims: Claims, now: int) -> bool:
    """Authority of the ``restricted`` interaction, evaluated at resume time."""
    return responder == OPERATOR


INTERACTIONS: tuple[Interaction, ...] = (
    *DEFAULT_INTERACTIONS,
    Interaction("restricted", authority=operator_only,
                description="only the responder 'operator' may answer"),
)

ALL_GROUPS: tuple[Group, ...] = tuple(Group)

def _encode_token(token: str) -> str:
    """The trial token encoder of the ``wiring`` operation (any reversible wrapping will do)."""
    return f"wrapped:{token}"


def _decode_token(text: str) -> str:
    return text.removeprefix("wrapped:")


_CODE_RE = re.compile(r"\[([a-z_]+)\] (.*) \(([a-z0-9.-]+)\)$", re.DOTALL)


class _RecordingRunner(Runner):
    """The reference runner, remembering the last invocation's events with their data (the
    harness's report keeps only their kinds)."""

    def __init__(self) -> None:
        self.last: list[RunEvent] = []

    def invoke(self, identity: RunIdentity, body: Callable[..., Any]) -> list[RunEvent]:
        events = super().invoke(identity, body)
        self.last = events
        return events


def _refused(exc: PausepointError) -> Refused:
    return Refused(code=exc.code.value, message=exc.message, clause=exc.clause)


class _ResetStore(SqliteStore):
    """The adapter's own handle on the file of its resets, open for the adapter's life: it
    empties the file at each reset (one commit), and it keeps the file open, so the harness's
    stores -- closed at each simulated crash, restart and race -- are never the file's last
    connection, whose close would checkpoint the WAL into the file and delete it (a clean
    shutdown that a crash does not do, costing a WAL re-creation and four fsyncs a case).  Its
    emptying commit is written with ``synchronous = NORMAL``: not synced by itself, but by the
    reference's next commit (``FULL`` syncs the whole WAL, earlier frames included) or by the
    next checkpoint, so the reset costs no fsync of its own; the reference's own commits keep
    ``FULL`` on their own connections."""

    def _open(self) -> sqlite3.Connection:
        conn = super()._open()
        conn.execute("PRAGMA synchronous = NORMAL")
        return conn


class ReferenceAdapter:
    """The reference harness behind the adapter port.  ``store`` is ``memory`` or ``sqlite``
    (a fresh file on every reset, in a private temporary directory made under ``scratch``, or
    under the system's temporary directory; removed by :meth:`close`)."""

    implementation_name = "pausepoint-reference"

    def __init__(self, store: str = "sqlite", *, scratch: str | None = None) -> None:
        if store not in ("memory", "sqlite"):
            raise ValueError(f"store must be memory or sqlite, not {store!r}")
        self.store = store
        self._dir = tempfile.mkdtemp(prefix="pausepoint-conform-", dir=scratch)
        self._h: Harness | None = None
        self._runs: list[str] = []
        self._lock = threading.Lock()
        self._home: SqliteStore | None = None  # the store the harness of a reset starts on
        self._home_bundle: StoreBundle | None = None  # ... as the harness sees it
        self._keeper: _ResetStore | None = None

    # -- parts a broken implementation may swap ----------------------------------------------

    def groups(self) -> list[Group]:
        """Everything, except durability for the in-memory store (a real crash loses it; the
        harness only keeps it across its simulated crash)."""
        if self.store == "memory":
            return [g for g in ALL_GROUPS if g != Group.DURABILITY]
        return list(ALL_GROUPS)

    def wrap_bundle(self, bundle: StoreBundle) -> StoreBundle:
        """The store bundle the harness sees (identity here)."""
        return bundle

    harness_class: type[Harness] = Harness
    """The harness every server of this adapter runs (a broken implementation may swap it)."""

    interactions: tuple[Interaction, ...] = INTERACTIONS
    """The interactions registered (the protocol's table, unless a broken one swaps them)."""

    def make_harness(self, *, open_bundle: Callable[[], StoreBundle], signer: KeyRing,
                     clock: ManualClock, world: World, ttl_ms: int,
                     durable_restart: bool) -> Harness:
        return self.harness_class(open_bundle=open_bundle, signer=signer, clock=clock,
                                  world=world, ttl_ms=ttl_ms, interactions=self.interactions,
                                  durable_restart=durable_restart)

    def make_ring(self) -> KeyRing:
        """The key ring a reset starts with: one fresh Ed25519 key, ``k1``."""
        return KeyRing.generate("k1")

    def make_runner(self) -> Runner:
        """The runner every harness of this adapter invokes runs with."""
        return _RecordingRunner()

    def compose(self, **parts: Any) -> Deployment:
        """The composition function (:func:`pausepoint.engine.compose.compose`)."""
        return compose(**parts)

    # -- lifecycle of the adapter ------------------------------------------------------------

    @property
    def harness(self) -> Harness:
        if self._h is None:
            raise RuntimeError("reset first")
        return self._h

    def _close_harness(self) -> None:
        h, self._h = self._h, None
        if h is None:
            return
        if h.deployment.store is self._home_bundle and not h.crashed:
            return  # the reset's store, never crashed nor replaced: the next reset empties it
        self._home_bundle = None
        home, self._home = self._home, None
        for store in (h.deployment.store, home):
            try:
                if store is not None:
                    store.close()
            except Exception:
                pass

    def close(self) -> None:
        self._close_harness()
        for store in (self._home, self._keeper):
            if store is not None:
                store.close()
        self._home = self._home_bundle = self._keeper = None
        shutil.rmtree(self._dir, ignore_errors=True)

    def _opener(self) -> Callable[[], StoreBundle]:
        if self.store == "memory":
            bundle = MemoryStore()

            def same() -> StoreBundle:
                return self.wrap_bundle(bundle)
            return same
        # One file per adapter, emptied at each reset by the adapter's own handle on it (see
        # _ResetStore) -- instead of creating a file, switching it to WAL and creating the
        # schema for every case -- and the reset's store is the previous reset's when its
        # harness neither crashed nor replaced it (one connection and one schema check per
        # adapter instead of per case).  Restarts and race servers open stores of their own on
        # the file, as another process would.
        url = f"sqlite:{os.path.join(self._dir, 'reference.sqlite')}"
        if self._keeper is None:
            self._keeper = _ResetStore(url[len("sqlite:"):])
        self._keeper.clear()
        home = self._home
        if home is None:
            home = self._home = SqliteStore(url[len("sqlite:"):])
        self._home_bundle = self.wrap_bundle(home)
        pending: list[StoreBundle] = [self._home_bundle]

        def fresh() -> StoreBundle:  # the reset's store first, new handles after (restarts)
            return pending.pop() if pending else self.wrap_bundle(open_store(url))
        return fresh

    # -- the operations ----------------------------------------------------------------------

    def hello(self, args: HelloArgs) -> Result[HelloData]:
        return Ok(data=HelloData(
            implementation=Implementation(
                name=f"{self.implementation_name} ({self.store})",
                version=reference_version, language="python"),
            protocol=PROTOCOL_VERSION, groups=self.groups(),
            notes=f"the reference harness on the {self.store} store; suite {suite_version}"))

    def reset(self, args: ResetArgs) -> Result[Empty]:
        with self._lock:
            self._close_harness()
            self._runs = []
            self._world: World = MemoryWorld()
            self._ring = self.make_ring()
            self._kid_n = 1
            h = self.make_harness(open_bundle=self._opener(), signer=self._ring,
                                  clock=ManualClock(0), world=self._world, ttl_ms=args.ttl_ms,
                                  durable_restart=self.store != "memory")
            h.runner = self.make_runner()
            self._h = h
            return Ok(data=Empty())

    def _guard(self, fn: Callable[[], Any]) -> Any:
        try:
            return Ok(data=fn())
        except PausepointError as exc:
            return _refused(exc)
        except Exception as exc:
            return errored_from(exc)

    def _publish(self, p: PendingInterrupt) -> PublishedPause:
        return PublishedPause(
            interrupt_id=p.interrupt_id, run_id=p.run_id, name=p.name,
            kind=PauseKind.RECOVERY if p.name == RECONCILE.name else PauseKind.ASK,
            payload=p.payload, token=p.token, resumable=p.resumable,
            expires_at=p.expires_at, tool_call_id=p.tool_call_id)

    def _run_report(self, rep: Report, h: Harness | None = None) -> RunReport:
        h = h or self.harness
        status = {"cancelling": "cancelled"}.get(rep.status, rep.status)
        refusal = None
        runner = h.runner
        if rep.events and rep.events[-1] == EventKind.ERROR.value and isinstance(
                runner, _RecordingRunner) and runner.last:
            last = runner.last[-1]
            m = _CODE_RE.search(str(last.data)) if last.kind == EventKind.ERROR else None
            if m is not None and m.group(1) in ErrorCode.__members__.values():
                refusal = Refused(code=m.group(1), message=m.group(2), clause=m.group(3))
        return RunReport(run_id=rep.run_id, status=RunStatus(status), events=list(rep.events),
                         pauses=[self._publish(p) for p in rep.pauses], refusal=refusal)

    def start(self, args: StartArgs) -> Result[RunReport]:
        with self._lock:
            def go() -> RunReport:
                h = self.harness
                self._runs.append(args.run_id)
                rep = h.start([to_script(s) for s in args.script], run_id=args.run_id,
                              parent_run_id=args.parent_run_id, session_id=args.session_id,
                              scope=args.scope)
                return self._run_report(rep)
            result: Result[RunReport] = self._guard(go)
            return result

    def _resume_with(self, h: Harness, args: ResumeArgs) -> ResumeData:
        rep = h.resume(args.token, args.response, session_id=args.session_id, scope=args.scope,
                       responder=args.responder, run_id=args.run_id)
        return ResumeData(replayed=rep.replayed, interrupt_id=rep.interrupt_id,
                          run=self._run_report(rep, h))

    def resume(self, args: ResumeArgs) -> Result[ResumeData]:
        with self._lock:
            result: Result[ResumeData] = self._guard(
                lambda: self._resume_with(self.harness, args))
            return result

    def cancel(self, args: CancelArgs) -> Result[CancelData]:
        with self._lock:
            def go() -> CancelData:
                h = self.harness
                if h.run_status(args.run_id) == "unknown":
                    raise PausepointError(ErrorCode.PAUSE_UNKNOWN, "cancel.distinct",
                                          f"no run {args.run_id!r}")
                return CancelData(run=self._run_report(h.cancel(args.run_id)))
            result: Result[CancelData] = self._guard(go)
            return result

    def advance_clock(self, args: AdvanceClockArgs) -> Result[ClockData]:
        with self._lock:
            def go() -> ClockData:
                h = self.harness
                clock = h.clock
                assert isinstance(clock, ManualClock)
                now = clock.advance(args.ms)
                if not h.crashed:
                    h.expire_due()
                return ClockData(now=now)
            result: Result[ClockData] = self._guard(go)
            return result

    def crash_restart(self, args: CrashRestartArgs) -> Result[RestartData]:
        with self._lock:
            def go() -> RestartData:
                h = self.harness
                h.crash()
                reports = h.restart()
                pauses = [self._publish(p) for run in self._runs for p in h.published(run)]
                return RestartData(runs=[self._run_report(r) for r in reports], pauses=pauses)
            result: Result[RestartData] = self._guard(go)
            return result

    def reconcile(self, args: ReconcileArgs) -> Result[PhaseData]:
        with self._lock:
            def go() -> PhaseData:
                h = self.harness
                h.reconcile(args.interrupt_id, args.resolution.value)
                return PhaseData(phase=h.pause_state(args.interrupt_id))
            result: Result[PhaseData] = self._guard(go)
            return result

    def pause_state(self, args: PauseStateArgs) -> Result[PhaseData]:
        with self._lock:
            result: Result[PhaseData] = self._guard(
                lambda: PhaseData(phase=self.harness.pause_state(args.interrupt_id)))
            return result

    def effect_count(self, args: EffectCountArgs) -> Result[CountData]:
        with self._lock:
            result: Result[CountData] = self._guard(
                lambda: CountData(count=self.harness.effect_count(args.run_id, args.key)))
            return result

    def interleave(self, args: InterleaveArgs) -> Result[InterleaveData]:
        """Play the run-level interleaving with servers of this adapter's harness class over
        its store wrapper, on a fresh store of its kind (a new SQLite file, or a new in-memory
        store), which is discarded after."""
        with self._lock:
            def go() -> InterleaveData:
                spec = (StoreSpec("memory") if self.store == "memory"
                        else fresh_sqlite(tempfile.mkdtemp(dir=self._dir)))
                return play(args.scenario, spec, harness_class=self.harness_class,
                            wrap=self.wrap_bundle, interactions=self.interactions)
            result: Result[InterleaveData] = self._guard(go)
            return result

    def status(self, args: StatusArgs) -> Result[StatusData]:
        """The service's status query (``pausepoint.engine.service.PauseService.status``); a run id
        never started is refused with ``pause_unknown``, as by ``cancel``."""
        with self._lock:
            def go() -> StatusData:
                h = self.harness
                if h.run_status(args.run_id) == "unknown":
                    raise PausepointError(ErrorCode.PAUSE_UNKNOWN, "status.distinguishes",
                                          f"no run {args.run_id!r}")
                return StatusData(view=str(h.service.status(args.run_id).value))
            result: Result[StatusData] = self._guard(go)
            return result

    def rotate_key(self, args: RotateKeyArgs) -> Result[KeyData]:
        """A fresh Ed25519 key becomes the signing key (``KeyRing.rotate``)."""
        with self._lock:
            def go() -> KeyData:
                self._kid_n += 1
                kid = f"k{self._kid_n}"
                self._ring.rotate(Ed25519Key.generate(kid))
                return KeyData(kid=kid)
            result: Result[KeyData] = self._guard(go)
            return result

    def retire_key(self, args: RetireKeyArgs) -> Result[Empty]:
        """``PauseService.retire_key``: the drain proof and the retirement in one ledger step,
        ordered against concurrent mints (token.rotation.drain)."""
        with self._lock:
            def go() -> Empty:
                self.harness.service.retire_key(args.kid, self._ring)
                return Empty()
            result: Result[Empty] = self._guard(go)
            return result

    def wiring(self, args: WiringArgs) -> Result[WiringData]:
        """A trial deployment wired by :meth:`compose` from the named parts -- volatile ones
        from a fresh in-memory store, durable ones from a scratch SQLite file -- asked for its
        ask-the-user tool, then dropped.  The instance under test is not touched."""
        with self._lock:
            def go() -> WiringData:
                known = {i.name: i for i in self.interactions}
                unknown = sorted(set(args.interactions) - set(known))
                if unknown:
                    raise PausepointError(ErrorCode.INTERACTION_UNREGISTERED,
                                          "pause.interaction.registered",
                                          f"no interaction named {unknown}")
                volatile = MemoryStore()
                durable = SqliteStore(os.path.join(self._dir, "wiring.sqlite"))
                try:
                    def part(kind: str) -> StoreBundle:
                        return durable if kind == "durable" else volatile
                    owner = part(args.ledger)  # the ledger's store keeps the rest too
                    bundle = PortBundle(ledger=owner.ledger,
                                        checkpoints=part(args.checkpoints).checkpoints,
                                        payloads=owner.payloads, effects=owner.effects,
                                        runs=owner.runs)
                    encode = _encode_token if args.token_codec in ("both", "encoder_only") \
                        else None
                    decode = _decode_token if args.token_codec in ("both", "decoder_only") \
                        else None
                    tool = self.compose(
                        store=bundle, signer=KeyRing.generate("trial"),
                        interactions=[known[n] for n in args.interactions],
                        encode_token=encode, decode_token=decode).ask_user_tool()
                finally:
                    durable.close()
                return WiringData(tools=[OfferedTool(name=tool.name, asks_user=True)]
                                  if tool is not None else [])
            result: Result[WiringData] = self._guard(go)
            return result

    def race_resume(self, args: RaceResumeArgs) -> Result[RaceData]:
        """Each request goes to a resume server of its own -- a separate harness on the same
        store, as separate processes would be -- and they start together."""
        with self._lock:
            try:
                h = self.harness
                servers = [self.make_harness(open_bundle=h._open_bundle, signer=h.signer,  # type: ignore[arg-type]
                                             clock=h.clock, world=h.world,  # type: ignore[arg-type]
                                             ttl_ms=h.ttl_ms, durable_restart=h.durable_restart)
                           for _ in args.requests]
            except Exception as exc:
                return errored_from(exc)
            for s in servers:
                s.runner = self.make_runner()

            def server(i: int) -> Callable[[Callable[[], None]], ResumeResult]:
                def go(together: Callable[[], None]) -> ResumeResult:
                    together()
                    result: ResumeResult = self._guard(
                        lambda: self._resume_with(servers[i], args.requests[i]))
                    return result
                return go

            final: list[ResumeResult] = run_together([server(i) for i in range(len(servers))])
            if h.durable_restart:
                for s in servers:
                    s.deployment.store.close()
            return Ok(data=RaceData(results=final))


def reference_memory() -> ReferenceAdapter:
    return ReferenceAdapter("memory")


def reference_sqlite() -> ReferenceAdapter:
    return ReferenceAdapter("sqlite")
