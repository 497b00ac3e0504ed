"""Crash injection: SIGKILL a real process at every commit boundary of a pause and of a resume.

A *worker* process opens a :class:`pausepoint.engine.harness.Harness` on a durable store (SQLite
file or PostgreSQL schema) with a :class:`~pausepoint.engine.harness.SqliteWorld`, and drives one
scripted run to its end: an effect, a pause, the person's answer, another effect.  Every write the
harness makes -- each method of a store facet that commits, and each change of the world -- goes
through a :class:`Tap`, which numbers it, appends a line to a trace file before and after it,
and, when told to die at boundary ``N``, kills its own process with ``SIGKILL`` right *before*
the ``N``-th write or right *after* it returned (committed).  A store's unit of work (several
writes, one commit) is a write of its own, ``unit_of_work.commit``: the writes inside it are
numbered and killed at as well (the process then dies inside the open transaction), but they
count as done only once their unit's commit returned (:func:`effective`); a unit's
``commit_so_far`` (an effect's journalled start made durable before it applies) is such a commit
too, and the unit's writes after it are numbered as a new unit.  ``run --engine`` runs the same
scenario as an agent function on :class:`pausepoint.Engine` (:class:`EngineDriver`), whose
start and resume are one unit each, cut at each effect.

The orchestrator (:func:`enumerate_crashes`) first runs the scenario once without dying to count
its ``T`` writes, then for every ``N`` in ``1..T`` and both sides of it: a fresh store and world,
a worker that dies at ``N``, then a fresh worker that calls :meth:`Harness.restart`, finds the
run's published pauses by run id, reconciles unknown outcomes by looking at the world (as an
operator would), answers, retries an answer whose reply it never got (as a client would), and
finishes the run.  Then :func:`check_case` reads the durable stores, the world, the trace and the
"inbox" (every token the person was shown, every answer they sent) and checks:

* the worker really died at ``N`` (a case that did not crash tested nothing);
* no pause lost: the run ends ``done``, every pause of it is ``consumed``, none is outstanding;
* the same token for the same pause: every token published for an interrupt, before and after
  the restart, is the ledger row's token, and it verifies to the row's claims
  (``durability.token.reissue``);
* no double consumption: exactly one accepted consume and one issue per pause
  (``resume.consume.at-most-once``);
* no effect run twice: each effect applied exactly once in the world (``effect.at-most-once``);
* unknown outcomes surfaced, not retried: when the crash left an effect journalled started and
  not finished, a recovery pause for exactly that effect was opened, and the effect was not
  applied again before it was reconciled (``effect.unknown-outcome``); otherwise no recovery
  pause was opened.

**A cancel** (``scenario="cancel"``, ``run --scenario cancel``): a run and its child, both
paused at a question with an effect after it, and the run cancelled; the worker dies before
and after every write -- the starts and every write of the cancel (each run's take-over, its
pauses, its end, each unit of work's commit).  A parent stays ``cancelling`` until its child is
cancelled, so a death between the two leaves it so; the fresh worker restarts (which finishes
a cancel whose canceller stopped), starts what was never started, cancels if the cancel never
began, and
:func:`check_cancelled` checks: both runs end ``cancelled``, no pause is live (each is
cancelled), no effect was applied.

Deliberately broken variants (``broken=``) show the checks bite: ``forgetful-journal`` treats
an effect in doubt as never started (so it retries it); ``replay-only`` never continues a run
stalled between the consume and its continuation (the first bug crash injection found: the run
stays paused forever, its answer accepted and lost); ``answerless-restart`` continues such a
run without the answer when the process died before keeping it (the second one: the run goes
on with ``None``); ``reminting`` publishes, after a restart, a freshly minted token for a pause
instead of the one already issued; ``skip-cancels`` restarts without finishing a cancel whose
canceller died (the run stays ``cancelling`` forever).

Run it standalone: ``python -m pausepoint_conformance.faults.crash run --store sqlite``.

**Any implementation** (:func:`crash_adapter`, ``run --adapter SPEC``, spelled as for
``pausepoint conform``): where the protocol suffices, the same scenario through the adapter
protocol -- the process dies inside each effect, before and after it applies (the script's
``fault``), and between the operations (``crash_restart`` after the start and after the
answer); the tool restarts it, reconciles an effect in doubt by looking at the world
(``effect_count``), answers every pause published, and checks from what the protocol shows: the
run ends done, each effect applied once, an effect in doubt surfaced as a recovery pause and not
retried before it was reconciled, the same token for the same pause across restarts.  The
crashes between operations need the implementation to claim ``durability``, those inside
effects ``unknown-outcome``.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import importlib
import json
import multiprocessing
import multiprocessing.connection
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Final, cast

import attrs

from pausepoint.core.clauses import Group
from pausepoint.core.errors import PausepointError
from pausepoint.core.lifecycle import LIVE, PauseState, Phase
from pausepoint.core.ports import (
    CheckpointStore,
    EffectJournal,
    EffectStatus,
    Ledger,
    PauseRecord,
    PayloadStore,
    RunRecord,
    RunStore,
)
from pausepoint.core.registry import RECONCILE
from pausepoint.core.script import Ask, Effect, End, Fault, Step
from pausepoint.engine.clock import SystemClock
from pausepoint.engine.embed import Engine, RunContext
from pausepoint.engine.harness import (
    DEFAULT_INTERACTIONS,
    DEFAULT_LEASE_MS,
    DEFAULT_OWNER,
    Harness,
    HarnessHooks,
    SqliteWorld,
    World,
)
from pausepoint.engine.owned import published
from pausepoint.engine.run import PendingInterrupt
from pausepoint.engine.tracing import Elapsed, FileTrace
from pausepoint.stores import StoreBundle
from pausepoint_conformance import __version__ as suite_version
from pausepoint_conformance.faults.testbed import (
    NothingChecked,
    StoreSpec,
    drop,
    fresh_postgres,
    fresh_sqlite,
    load_ring,
    main_on_adapter,
    save_key,
)
from pausepoint_conformance.modelcheck.impltrace import judge_events
from pausepoint_conformance.protocol.port import Adapter
from pausepoint_conformance.protocol.wire import (
    PROTOCOL_VERSION,
    CrashRestartArgs,
    EffectCountArgs,
    HelloArgs,
    Ok,
    PauseKind,
    PauseStateArgs,
    ReconcileArgs,
    ResetArgs,
    Resolution,
    ResumeArgs,
    StartArgs,
    from_script,
)

# -- the scenario ----------------------------------------------------------------------------

RUN_ID: Final = "crash-run"
SESSION: Final = "session"
SCOPE: Final = "default"
RESPONSE: Final[dict[str, Any]] = {"approved": True}
SCRIPT: Final[tuple[Step, ...]] = (
    Effect("a"), Ask(("approve",), payload={"amount": 12}), Effect("b"), End())
EFFECT_KEYS: Final[tuple[str, ...]] = tuple(
    f"{pc}:{s.key}" for pc, s in enumerate(SCRIPT) if isinstance(s, Effect))
ASK_IDS: Final[tuple[str, ...]] = tuple(
    f"{RUN_ID}/{pc}/0" for pc, s in enumerate(SCRIPT) if isinstance(s, Ask))
ENGINE_ASK_IDS: Final[tuple[str, ...]] = (f"{RUN_ID}/0/0",)
TTL_MS: Final = 3_600_000
MAX_ROUNDS: Final = 12

READ_METHODS: Final[dict[str, frozenset[str]]] = {
    "ledger": frozenset({"get", "by_run", "outstanding", "outstanding_for_key"}),
    "checkpoints": frozenset({"read", "latest"}),
    "payloads": frozenset({"get"}),
    "effects": frozenset({"status", "started_by", "open_entries"}),
    "runs": frozenset({"get", "children", "with_status"}),
}
"""The facet methods that only read.  Every other public method of a facet commits a change and
is tapped (so a write method added to a port later is a crash boundary without a second list to
keep in step); the world's ``apply`` is tapped as well."""

BROKEN_VARIANTS: Final[tuple[str, ...]] = ("forgetful-journal", "replay-only",
                                           "answerless-restart", "reminting", "skip-cancels")
SCENARIOS: Final[tuple[str, ...]] = ("pay", "cancel")
"""``pay``: the run pauses, is answered and pays; ``cancel``: a run and its child are
cancelled while paused."""
CHILD_ID: Final = "crash-child"
ASK_PC: Final = next(pc for pc, s in enumerate(SCRIPT) if isinstance(s, Ask))
CANCEL_RUNS: Final[tuple[str, ...]] = (RUN_ID, CHILD_ID)


# -- the tap ---------------------------------------------------------------------------------


def _brief(value: object) -> object:
    """A short, JSON-able summary of a write's argument or result."""
    if value is None or isinstance(value, (bool, int, str)):
        return value.value if isinstance(value, EffectStatus) else value
    if isinstance(value, PauseRecord):
        return value.interrupt_id
    if isinstance(value, PauseState):
        return value.phase.value
    if isinstance(value, RunRecord):
        return [value.run_id, value.status.value, json.loads(value.state).get("step")]
    return type(value).__name__


class Tap:
    """Numbers every write, traces it, and SIGKILLs the process at the chosen boundary."""

    def __init__(self, trace_path: str, proc: str, die_at: int = 0, when: str = "after",
                 broken: str | None = None) -> None:
        self._fd = os.open(trace_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        self.proc = proc
        self.die_at = die_at
        self.when = when
        self.broken = broken
        self.count = 0
        self.unit: str | None = None
        """The unit of work open now (its writes take effect at its commit), if any."""

    def log(self, **entry: object) -> None:
        entry["p"] = self.proc
        os.write(self._fd, (json.dumps(entry, default=str) + "\n").encode())

    def _die(self) -> None:
        os.kill(os.getpid(), signal.SIGKILL)
        time.sleep(60)  # pragma: no cover - SIGKILL cannot be caught
        raise SystemExit(99)  # pragma: no cover

    def write(self, op: str, args: Sequence[object], call: Callable[[], object]) -> object:
        self.count += 1
        n = self.count
        self.log(n=n, at="before", op=op, args=[_brief(a) for a in args])
        if self.when == "before" and n == self.die_at:
            self._die()
        try:
            ret = call()
        except BaseException as exc:
            self.log(n=n, at="error", op=op, error=f"{type(exc).__name__}: {exc}")
            raise
        in_unit = self.unit is not None and not op.startswith("world.")  # the world's own
        self.log(n=n, at="after", op=op, args=[_brief(a) for a in args], ret=_brief(ret),
                 **({"unit": self.unit} if in_unit else {}))
        if self.when == "after" and n == self.die_at:
            self._die()
        return ret


class _TappedFacet:
    """A facet whose committing methods go through the tap; everything else passes through."""

    def __init__(self, name: str, inner: Any, tap: Tap) -> None:
        self._name = name
        self._inner = inner
        self._tap = tap
        self.durable: bool = bool(inner.durable)

    def __getattr__(self, attr: str) -> Any:
        target = getattr(self._inner, attr)
        if attr.startswith("_") or not callable(target) or attr in READ_METHODS[self._name]:
            if self._tap.broken == "forgetful-journal" and self._name == "effects" \
                    and attr == "status":
                return _forgetful(target)
            return target
        op = f"{self._name}.{attr}"
        tap = self._tap
        if tap.broken == "forgetful-journal" and op == "effects.start":
            target = _forgetful_start(self._inner, target)

        def tapped(*args: Any, **kwargs: Any) -> Any:
            return tap.write(op, (*args, *kwargs.values()), lambda: target(*args, **kwargs))
        return tapped


def _forgetful_start(journal: Any, start: Callable[..., bool]) -> Callable[..., bool]:
    """BROKEN: an effect in doubt is started again, its journal entry overwritten (a journal
    whose start is not a conditional insert)."""
    def wrapped(run_id: str, key: str, *rest: Any) -> bool:
        if journal.status(run_id, key) == EffectStatus.STARTED:
            journal.settle(run_id, key, EffectStatus.NOT_APPLIED)
        return start(run_id, key, *rest)
    return wrapped


def _forgetful(status: Callable[..., EffectStatus | None]) -> Callable[..., Any]:
    """BROKEN: an effect journalled started reads as never started, so it is retried."""
    def wrapped(*args: Any) -> EffectStatus | None:
        found = status(*args)
        return None if found == EffectStatus.STARTED else found
    return wrapped


class TappedBundle:
    """A store bundle whose facets' writes go through a :class:`Tap`."""

    def __init__(self, inner: StoreBundle, tap: Tap) -> None:
        self.inner = inner
        self.durable = inner.durable
        self.serial_units: bool = getattr(inner, "serial_units", False)  # its units are the inner's
        self.ledger = cast(Ledger, _TappedFacet("ledger", inner.ledger, tap))
        self.checkpoints = cast(CheckpointStore,
                                _TappedFacet("checkpoints", inner.checkpoints, tap))
        self.payloads = cast(PayloadStore, _TappedFacet("payloads", inner.payloads, tap))
        self.effects = cast(EffectJournal, _TappedFacet("effects", inner.effects, tap))
        self.runs = cast(RunStore, _TappedFacet("runs", inner.runs, tap))
        self._tap = tap

    def close(self) -> None:
        self.inner.close()

    @contextlib.contextmanager
    def unit_of_work(self) -> Iterator[None]:
        """The store's unit of work, its commit a tapped write (``unit_of_work.commit``); a
        nested unit joins the open one."""
        tap = self._tap
        if tap.unit is not None:
            yield
            return
        unit = f"{tap.proc}:{os.getpid()}:{tap.count + 1}"
        with contextlib.ExitStack() as stack:
            stack.enter_context(self.inner.unit_of_work())  # type: ignore[attr-defined]
            tap.unit = unit
            try:
                yield
            finally:
                unit, tap.unit = tap.unit, None  # a new one after each commit_so_far
            tap.write("unit_of_work.commit", (unit,), stack.close)

    def commit_so_far(self) -> None:
        """The store's ``commit_so_far``: inside a unit, a commit of the unit so far (a tapped
        ``unit_of_work.commit``), the writes after it numbered as a new unit."""
        tap = self._tap
        if tap.unit is None:
            return
        tap.write("unit_of_work.commit", (tap.unit,), self.inner.commit_so_far)  # type: ignore[attr-defined]
        tap.unit = f"{tap.proc}:{os.getpid()}:{tap.count + 1}"


def effective(trace: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The ``after`` entries of writes that took effect: outside a unit of work, or in one whose
    commit returned (a process killed inside a unit wrote nothing of it)."""
    committed = {e["args"][0] for e in trace
                 if e["at"] == "after" and e["op"] == "unit_of_work.commit"}
    return [e for e in trace if e["at"] == "after" and e.get("unit", None) in (None, *committed)]


class TappedWorld:
    """The world, with ``apply`` (a durable change of the outside world) tapped too."""

    def __init__(self, inner: World, tap: Tap) -> None:
        self.inner = inner
        self.tap = tap

    def apply(self, run_id: str, key: str) -> None:
        self.tap.write("world.apply", (run_id, key), lambda: self.inner.apply(run_id, key))

    def count(self, run_id: str, key: str) -> int:
        return self.inner.count(run_id, key)


# -- one case's files ------------------------------------------------------------------------


@attrs.frozen
class CaseFiles:
    """Everything a case's processes share: the store, the world, the key, the trace, the inbox
    (what the person was shown and what they sent)."""

    store: StoreSpec
    directory: str
    engine: bool = False
    """Drive the scenario through the embedding engine (:class:`pausepoint.Engine`, an agent
    function) instead of the scripted harness."""

    @property
    def world(self) -> str:
        return str(Path(self.directory) / "world.db")

    @property
    def key(self) -> str:
        return str(Path(self.directory) / "key.ed25519")

    @property
    def trace(self) -> str:
        return str(Path(self.directory) / "trace.jsonl")

    @property
    def inbox(self) -> str:
        return str(Path(self.directory) / "inbox.jsonl")

    @property
    def events(self) -> str:
        """The case's NDJSON event log (``pausepoint.engine.tracing``), when traced."""
        return str(Path(self.directory) / "events.ndjson")

    def trace_origin(self) -> int:
        """The wall-clock reading the case's event log counts from (its first process's)."""
        path = Path(self.directory) / "trace-origin"
        if not path.exists():
            path.write_text(str(SystemClock().now()))
        return int(path.read_text())

    def to_json(self) -> dict[str, Any]:
        return {"store": self.store.to_json(), "directory": self.directory,
                "engine": self.engine}

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> CaseFiles:
        return cls(StoreSpec.from_json(obj["store"]), str(obj["directory"]),
                   bool(obj.get("engine", False)))

    @property
    def ask_ids(self) -> tuple[str, ...]:
        """The interrupt ids of the scenario's questions (the engine numbers them by the
        questions asked before, the harness by the step)."""
        return ENGINE_ASK_IDS if self.engine else ASK_IDS


def read_jsonl(path: str) -> list[dict[str, Any]]:
    if not os.path.exists(path):
        return []
    out = []
    for line in Path(path).read_text().splitlines():
        if line.strip():
            out.append(json.loads(line))
    return out


class Inbox:
    """The person's side: tokens they were shown, answers they sent and the replies they got.
    Appended with one ``write`` per line, so it survives the process being killed."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)

    def add(self, **entry: object) -> None:
        os.write(self._fd, (json.dumps(entry) + "\n").encode())

    def entries(self) -> list[dict[str, Any]]:
        return read_jsonl(self.path)

    def pending(self) -> list[dict[str, Any]]:
        """Answers sent whose reply never came back (the sender died or the call failed)."""
        answered = {e["attempt"] for e in self.entries() if e["kind"] == "answered"}
        return [e for e in self.entries() if e["kind"] == "attempt" and e["id"] not in answered]


# -- the worker ------------------------------------------------------------------------------


class AheadClock(SystemClock):
    """The wall clock, ``ahead_ms`` ahead: a later owner of a take-over case, by whose clock
    every earlier owner's lease ran out -- while its own lease lasts as long as anyone's."""

    def __init__(self, ahead_ms: int) -> None:
        self.ahead_ms = ahead_ms

    def now(self) -> int:
        return super().now() + self.ahead_ms


EACH_WRITE: Final[tuple[str, ...]] = ("replay-only", "answerless-restart")
"""The broken variants run (their dry run too) on :class:`EachWriteHarness`."""


class EachWriteHarness(Harness):
    """The harness with every write its own commit (no units): the broken variants
    ``replay-only`` and ``answerless-restart`` need a death between the consume, its answer
    kept and the continuation's claim, which a unit of work keeps together."""

    units = False


def open_harness(files: CaseFiles, tap: Tap, hooks: HarnessHooks | None = None,
                 owner: str = DEFAULT_OWNER, lease_ms: int = DEFAULT_LEASE_MS,
                 ahead_ms: int = 0, each_write: bool = False) -> Harness:
    ring = load_ring(files.key)
    cls = EachWriteHarness if each_write else Harness
    return cls(open_bundle=lambda: TappedBundle(files.store.open(), tap), signer=ring,
                   clock=AheadClock(ahead_ms), world=TappedWorld(SqliteWorld(files.world), tap),
                   ttl_ms=TTL_MS, interactions=DEFAULT_INTERACTIONS, durable_restart=True,
                   hooks=hooks, owner=owner, lease_ms=lease_ms)


@attrs.frozen
class _Answered:
    status: str
    replayed: bool = False  # the engine does not say; nothing checks it


class EngineDriver:
    """The scenario on the embedding engine: an agent function with the script's effects
    (journalled under the same keys, applied to the same world) and its question; the
    operations :func:`drive` uses, as the harness names them."""

    def __init__(self, files: CaseFiles, tap: Tap, owner: str, lease_ms: int,
                 ahead_ms: int = 0) -> None:
        self.world = TappedWorld(SqliteWorld(files.world), tap)
        world = self.world

        def apply(key: str) -> Callable[[], None]:
            return lambda: world.apply(RUN_ID, key)

        def agent(ctx: RunContext, data: Any) -> Any:
            answers = []
            for pc, step in enumerate(SCRIPT):
                if isinstance(step, Effect):
                    ctx.effect(f"{pc}:{step.key}", apply(step.key))
                elif isinstance(step, Ask):
                    answers.append(ctx.ask(step.names[0], step.payload).model_dump())
            return answers

        self.engine = Engine.open(TappedBundle(files.store.open(), tap), agents={"crash": agent},
                                  interactions=DEFAULT_INTERACTIONS, clock=AheadClock(ahead_ms),
                                  signer=load_ring(files.key), ttl_ms=TTL_MS, owner=owner,
                                  lease_ms=lease_ms)
        self.deployment = self.engine.deployment

    def restart(self) -> None:
        self.engine.restart()

    def run_status(self, run_id: str) -> str:
        run = self.deployment.service.runs.get(run_id)
        return "unknown" if run is None else run.status.value

    def start(self, script: Any, *, run_id: str, session_id: str, scope: str) -> None:
        self.engine.start("crash", None, run_id=run_id, session_id=session_id, scope=scope)

    def published(self, run_id: str) -> tuple[PendingInterrupt, ...]:
        return tuple(published(r) for r in self.deployment.service.ledger.by_run(run_id)
                     if r.state.phase in LIVE)

    def pause_record(self, interrupt_id: str) -> PauseRecord | None:
        return self.deployment.service.ledger.get(interrupt_id)

    def reconcile(self, interrupt_id: str, resolution: str) -> None:
        self.engine.reconcile(interrupt_id, resolution)

    def resume(self, token: str, response: object, *, session_id: str,
               scope: str) -> _Answered:
        out = self.engine.resume(token, response, session_id=session_id, scope=scope)
        return _Answered(out.status.value)


def broken_hooks(broken: str | None, proc: str) -> HarnessHooks:
    """The harness's faults for a broken variant (see :class:`HarnessHooks`); the journal's
    (``forgetful-journal``) is the :class:`Tap`'s."""
    return HarnessHooks(
        continue_stalled=broken != "replay-only",  # BROKEN: stalled runs are never continued
        wait_for_answers=broken != "answerless-restart",  # BROKEN: continue without the answer
        remint=broken == "reminting" and proc == "recover")  # BROKEN: a restart mints anew


def _answer(h: Harness | EngineDriver, inbox: Inbox, proc: str, interrupt_id: str, token: str,
            response: object, retry_of: str | None = None) -> None:
    """Send an answer (or retry the unanswered ``retry_of``) and note the reply."""
    attempt = retry_of or f"{proc}:{time.monotonic_ns()}"
    if retry_of is None:
        inbox.add(kind="attempt", id=attempt, interrupt_id=interrupt_id, token=token,
                  response=response)
    report = h.resume(token, response, session_id=SESSION, scope=SCOPE)
    inbox.add(kind="answered", attempt=attempt, interrupt_id=interrupt_id,
              replayed=report.replayed, status=report.status)


def drive(h: Harness | EngineDriver, inbox: Inbox, proc: str, restart: bool) -> str:
    """Bring the run to its end, the way its operator and its person would."""
    if restart:
        h.restart()
    if h.run_status(RUN_ID) == "unknown":
        h.start(list(SCRIPT), run_id=RUN_ID, session_id=SESSION, scope=SCOPE)
    for _ in range(MAX_ROUNDS):
        status = h.run_status(RUN_ID)
        if status == "done":
            break
        published = h.published(RUN_ID)
        for p in published:
            inbox.add(kind="published", proc=proc, interrupt_id=p.interrupt_id, token=p.token)
        if not published:
            pending = inbox.pending()
            if not pending:
                raise AssertionError(f"run {status}, nothing published, no answer pending")
            for e in pending:  # the client retries an answer it got no reply for
                _answer(h, inbox, proc, e["interrupt_id"], e["token"], e["response"],
                        retry_of=e["id"])
            continue
        for p in published:
            if p.name == RECONCILE.name:
                rec = h.pause_record(p.interrupt_id)
                if rec is not None and rec.state.phase == Phase.UNKNOWN_OUTCOME:
                    key = str(p.payload["effect"]).split(":", 1)[1]
                    applied = h.world.count(RUN_ID, key) > 0  # the operator looks at the world
                    h.reconcile(p.interrupt_id, "applied" if applied else "not_applied")
                _answer(h, inbox, proc, p.interrupt_id, p.token, {})
            else:
                _answer(h, inbox, proc, p.interrupt_id, p.token, RESPONSE)
    for e in inbox.pending():  # an answer still without reply: its retry must replay
        _answer(h, inbox, proc, e["interrupt_id"], e["token"], e["response"], retry_of=e["id"])
    return h.run_status(RUN_ID)


def drive_cancel(h: Harness, restart: bool, mark: Callable[[], None] = lambda: None) -> str:
    """Start the run and its child (what was not started yet: a child under a run being
    cancelled is refused) and cancel the run -- after a restart, only if the cancel did not
    begin yet (one that began is the restart's to finish) -- the way its operator would after
    a crash; ``mark`` is called right before the cancel."""
    if restart:
        h.restart()
    for run_id, parent in ((RUN_ID, None), (CHILD_ID, RUN_ID)):
        if h.run_status(run_id) == "unknown":
            try:
                h.start(list(SCRIPT), run_id=run_id, parent_run_id=parent, session_id=SESSION,
                        scope=SCOPE)
            except PausepointError:
                pass  # refused under a cancelled (or cancelling) parent: nothing to cancel
    if restart and h.run_status(RUN_ID) in ("cancelling", "cancelled"):
        return h.run_status(RUN_ID)
    mark()
    h.cancel(RUN_ID)
    return h.run_status(RUN_ID)


def worker_main(spec: dict[str, Any]) -> int:
    files = CaseFiles.from_json(spec["files"])
    proc = str(spec["proc"])
    tap = Tap(files.trace, proc, int(spec.get("die_at", 0)), str(spec.get("when", "after")),
              spec.get("broken"))
    inbox = Inbox(files.inbox)
    owner = str(spec.get("owner", DEFAULT_OWNER))
    lease_ms = int(spec.get("lease_ms", DEFAULT_LEASE_MS))
    ahead_ms = int(spec.get("ahead_ms", 0))
    h: Harness | EngineDriver
    if files.engine:
        if tap.broken is not None or spec.get("trace"):
            raise ValueError("the engine's scenario runs unbroken and untraced")
        h = EngineDriver(files, tap, owner, lease_ms, ahead_ms)
    else:
        h = open_harness(files, tap, broken_hooks(tap.broken, proc), owner=owner,
                         lease_ms=lease_ms, ahead_ms=ahead_ms,
                         each_write=bool(spec.get("each_write")) or tap.broken in EACH_WRITE)
    if spec.get("trace") and isinstance(h, Harness):
        sink = FileTrace(Elapsed(SystemClock(), files.trace_origin()), files.events)
        h.traced(sink)
        if spec.get("restart"):
            sink.emit("crash")  # the log's own record of the death this process follows
    if tap.broken == "skip-cancels" and isinstance(h, Harness):  # BROKEN: no cancel finished
        h.service.finish_cancels = lambda *_args: []  # type: ignore[method-assign]
    try:
        if spec.get("scenario", "pay") == "cancel":
            if not isinstance(h, Harness):
                raise ValueError("the cancel scenario runs on the harness")
            status = drive_cancel(h, restart=bool(spec.get("restart")),
                                  mark=lambda: tap.log(at="mark", op="cancel", n=tap.count))
        else:
            status = drive(h, inbox, proc, restart=bool(spec.get("restart")))
    finally:
        h.deployment.store.close()
    print(json.dumps({"status": status, "writes": tap.count}))
    return 0


# -- the orchestrator ------------------------------------------------------------------------


@attrs.frozen
class Case:
    point: int
    when: str  # "before" | "after"
    op: str = ""  # the write at that boundary, from the dry run
    prev: str = ""  # the write before it
    first: Case | None = None  # a take-over case: where the first owner died before


@attrs.frozen
class CaseResult:
    case: Case
    store: str
    violations: tuple[str, ...]
    died: bool
    in_doubt: tuple[str, ...] = ()
    seconds: float = 0.0
    trace: str = ""
    """With ``trace_dir``: the case's event log against the model -- ``valid``, ``INVALID: ...``
    or ``untranslatable: ...``."""


_MODULE: Final = "pausepoint_conformance.faults.crash"
"""This module's importable name (also when it runs as ``__main__``): what the fork server
preloads, and where its workers' entry point is found."""

_FORKS: Final = multiprocessing.get_context("forkserver")
"""Workers are forked from a server process that has imported this module once (and with it
pausepoint): each is a process of its own that dies by ``SIGKILL`` as before, but starts in
milliseconds instead of paying the interpreter's start and the imports (about half a second)
two or three times per case.  Its spec -- which holds the store's location, a PostgreSQL DSN
with its password -- goes to it through the server's socket, never on a command line, where
``ps`` shows it to every user of the machine.  As with every start method but ``fork``, each
worker imports the calling program's main module first: a script that runs the crash tool
keeps its own work under ``if __name__ == "__main__":``."""


_POLLS: Final = threading.Lock()
"""Held to start a worker and to read a worker's exit status: ``Process.start`` polls every
running child (``multiprocessing.process._cleanup``), and two threads polling one fork-server
child both read its status pipe -- one gets the status, the other end of file, which
multiprocessing reports as exit code 255 (seen here: about 1 case in 150 with the cases run in
parallel)."""


def _forked_worker(spec: dict[str, Any], out: str, err: str) -> None:
    """A worker's process: its standard output and error into the files ``out`` and ``err``
    (the orchestrator reads them once it ended), then :func:`worker_main`; a refusal exits 3
    with it on standard error."""
    for fd, path in ((1, out), (2, err)):
        target = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(target, fd)
        os.close(target)
    try:
        code = worker_main(spec)
    except PausepointError as exc:
        print(f"refused: {exc}", file=sys.stderr)
        code = 3
    sys.exit(code)


def _run_worker(spec: dict[str, Any], timeout: float = 120.0) -> subprocess.CompletedProcess[str]:
    """One worker process with ``spec``, waited for: its exit code (negative: the signal that
    killed it), standard output and standard error; past ``timeout`` seconds it is killed and
    :class:`subprocess.TimeoutExpired` raised."""
    _FORKS.set_forkserver_preload([_MODULE])  # read only when the server first starts
    with tempfile.TemporaryDirectory(prefix="pp-worker-") as tmp:
        out, err = os.path.join(tmp, "stdout"), os.path.join(tmp, "stderr")
        proc = _FORKS.Process(target=_forked_worker, args=(spec, out, err), daemon=True)
        with _POLLS:
            proc.start()
        # wait for the exit status to arrive without reading it, then read it under the lock
        ended = bool(multiprocessing.connection.wait([proc.sentinel], timeout))
        if not ended:
            proc.kill()  # a signal: reads no status
            multiprocessing.connection.wait([proc.sentinel])
        with _POLLS:
            code = proc.exitcode
            assert code is not None  # its status arrived: the sentinel was readable
            proc.close()
        if not ended:
            raise subprocess.TimeoutExpired(f"crash worker {spec.get('proc')}", timeout)
        texts = [Path(path).read_text(encoding="utf-8", errors="replace")
                 if os.path.exists(path) else "" for path in (out, err)]
    return subprocess.CompletedProcess([_MODULE, str(spec.get("proc"))], code, texts[0],
                                       texts[1])


def prepare(store: StoreSpec, directory: str, key_from: str | None = None,
            engine: bool = False) -> CaseFiles:
    os.makedirs(directory, exist_ok=True)
    files = CaseFiles(store, directory, engine)
    if key_from is None:
        save_key(files.key)
    else:
        Path(files.key).write_bytes(Path(key_from).read_bytes())
    SqliteWorld(files.world)
    return files


def dry_run(files: CaseFiles, scenario: str = "pay",
            each_write: bool = False) -> list[dict[str, Any]]:
    """Run the scenario once without dying: its writes, in order (``after`` entries);
    ``each_write``: on :class:`EachWriteHarness`."""
    done = _run_worker({"files": files.to_json(), "proc": "dry", "scenario": scenario,
                        "each_write": each_write})
    if done.returncode != 0:
        raise RuntimeError(f"the scenario fails without a crash:\n{done.stderr}")
    entries = [e for e in read_jsonl(files.trace) if e["at"] == "after"]
    problems = (check_cancelled(files) if scenario == "cancel" else
                check_durable(files, read_jsonl(files.trace), in_doubt=()))
    if problems:
        raise RuntimeError(f"the scenario is wrong without a crash: {problems}")
    return entries


def cancel_from(trace: Sequence[dict[str, Any]]) -> int:
    """The number of the cancel's first write in a cancel scenario's trace (its worker marks
    where the cancel begins)."""
    return 1 + next(int(e["n"]) for e in trace if e["at"] == "mark" and e["op"] == "cancel")


def in_doubt_at_kill(first: list[dict[str, Any]]) -> tuple[str, ...]:
    """Effects the dead worker left journalled started and not finished."""
    last: dict[str, str] = {}
    for e in effective(first):
        if e["op"] in ("effects.start", "effects.finish", "effects.settle"):
            last[str(e["args"][1])] = e["op"]
    return tuple(sorted(k for k, op in last.items() if op == "effects.start"))


def _delivered(files: CaseFiles, run: RunRecord | None) -> dict[str, Any]:
    """The answers the run continued with, by interrupt id."""
    if run is None:
        return {}
    return dict(json.loads(run.state).get("answers", {}))  # by interrupt id, harness or engine


def check_durable(files: CaseFiles, trace: list[dict[str, Any]], in_doubt: tuple[str, ...],
                  retried_by: Mapping[str, Sequence[str]] | None = None) -> list[str]:
    """The invariants, read from the durable stores, the world, the trace and the inbox.
    ``retried_by``: for an effect in doubt, the workers whose application of it would be a
    retry (by default the one that recovered)."""
    bad: list[str] = []
    store = files.store.open()
    try:
        run = store.runs.get(RUN_ID)
        if run is None or run.status.value != "done":
            bad.append(f"run not done: {None if run is None else run.status.value}")
        rows = list(store.ledger.by_run(RUN_ID))
        for iid in files.ask_ids:
            if iid not in {r.interrupt_id for r in rows}:
                bad.append(f"pause {iid} lost: no ledger row")
        delivered = _delivered(files, run)
        for r in rows:  # the run continued with the answer the person gave, not another
            if files.engine and r.claims.name == RECONCILE.name:
                continue  # the engine hands an agent no recovery pause's answer
            sent = {} if r.claims.name == RECONCILE.name else RESPONSE
            if r.interrupt_id not in delivered:
                bad.append(f"pause {r.interrupt_id}: its answer never reached the run")
            elif delivered[r.interrupt_id] != sent:
                bad.append(f"pause {r.interrupt_id}: the run continued with the answer "
                           f"{delivered[r.interrupt_id]!r}, not the one given ({sent!r})")
        for r in rows:
            if r.state.phase != Phase.CONSUMED:
                bad.append(f"pause {r.interrupt_id} ends {r.state.phase.value}, not consumed")
        if store.ledger.outstanding():
            bad.append(f"outstanding pauses remain: "
                       f"{[r.interrupt_id for r in store.ledger.outstanding()]}")
        ring = load_ring(files.key)
        published: dict[str, set[str]] = {}
        for e in read_jsonl(files.inbox):
            if e["kind"] in ("published", "attempt"):
                published.setdefault(e["interrupt_id"], set()).add(e["token"])
        for iid, tokens in published.items():
            row = store.ledger.get(iid)
            if len(tokens) != 1:
                bad.append(f"pause {iid}: {len(tokens)} different tokens were published")
            if row is None:
                bad.append(f"pause {iid}: its token was published but it has no ledger row")
                continue
            if tokens != {row.token}:
                bad.append(f"pause {iid}: a published token is not the ledger's token")
            if ring.verify(row.token) != row.claims:
                bad.append(f"pause {iid}: the ledger's token does not verify to its claims")
        consumes: dict[str, int] = {}
        issues: dict[str, int] = {}
        for e in effective(trace):
            if e["op"] == "ledger.transition" and e["args"][2] == "consumed" and e["ret"]:
                consumes[e["args"][0]] = consumes.get(e["args"][0], 0) + 1
            if e["op"] == "ledger.issue" and e["ret"]:
                issues[e["args"][0]] = issues.get(e["args"][0], 0) + 1
        for r in rows:
            if consumes.get(r.interrupt_id, 0) != 1:
                bad.append(f"pause {r.interrupt_id} consumed {consumes.get(r.interrupt_id, 0)} "
                           "times")
            if issues.get(r.interrupt_id, 0) != 1:
                bad.append(f"pause {r.interrupt_id} issued {issues.get(r.interrupt_id, 0)} times")
        world = SqliteWorld(files.world)
        for jkey in EFFECT_KEYS:
            n = world.count(RUN_ID, jkey.split(":", 1)[1])
            if n != 1:
                bad.append(f"effect {jkey} applied {n} times")
        recovered = {json.loads(r.payload)["effect"] for r in rows
                     if r.claims.name == RECONCILE.name}
        if recovered != set(in_doubt):
            bad.append(f"recovery pauses for {sorted(recovered)}, expected for "
                       f"{sorted(in_doubt)} (the effects in doubt at the crash)")
        for jkey in in_doubt:
            key = jkey.split(":", 1)[1]
            later = (retried_by or {}).get(jkey, ("recover",))
            after = [e for e in effective(trace) if e["p"] in later]
            settled = [i for i, e in enumerate(after)
                       if e["op"] == "effects.settle" and e["args"][1] == jkey]
            applied = [i for i, e in enumerate(after)
                       if e["op"] == "world.apply" and e["args"][1] == key]
            if applied and (not settled or applied[0] < settled[0]):
                bad.append(f"effect {jkey} was retried before its unknown outcome was "
                           "reconciled")
    finally:
        store.close()
    return bad


def check_cancelled(files: CaseFiles) -> list[str]:
    """The cancel scenario's invariants, read from the durable stores and the world: the run
    and its child ended ``cancelled`` (cancel.propagates), no pause of either is live -- each
    ended cancelled, none answered -- and no effect after the question was applied, the one
    before it once at most (run.cancel.in-flight, effect.at-most-once)."""
    bad: list[str] = []
    store = files.store.open()
    try:
        world = SqliteWorld(files.world)
        for run_id in CANCEL_RUNS:
            run = store.runs.get(run_id)
            if run is None or run.status.value != "cancelled":
                bad.append(f"run {run_id} not cancelled: "
                           f"{None if run is None else run.status.value}")
            for r in store.ledger.by_run(run_id):
                if r.state.phase != Phase.CANCELLED:
                    bad.append(f"pause {r.interrupt_id} ends {r.state.phase.value}, "
                               "not cancelled")
            for jkey in EFFECT_KEYS:  # before the question: once; after it: never
                n = world.count(run_id, jkey.split(":", 1)[1])
                if n > int(int(jkey.split(":", 1)[0]) < ASK_PC):
                    bad.append(f"effect {jkey} of cancelled run {run_id} applied {n} times")
    finally:
        store.close()
    return bad


def take_over(n: int) -> dict[str, Any]:
    """The ``n``-th owner (from 0) of a take-over case: its clock is ``n`` leases ahead of the
    first's, so by its clock every earlier owner's lease ran out and its restart is a take-over
    by another owner (``run.ownership.lease``) under a new epoch -- while its own lease is a
    real one, live for its effects' journal starts (``run.ownership.fencing``)."""
    return {"ahead_ms": n * (DEFAULT_LEASE_MS + 1)}


def _died(worker: subprocess.CompletedProcess[str], case: Case, violations: list[str]) -> bool:
    died = worker.returncode == -signal.SIGKILL
    if not died:
        violations.append(f"the worker did not die at {case.when} write {case.point} "
                          f"(exit {worker.returncode}): {worker.stderr[-2000:]}")
    return died


def run_case(files: CaseFiles, case: Case, broken: str | None = None,
             traced: bool = False, scenario: str = "pay") -> CaseResult:
    """Die at one boundary, restart, finish, check.  A take-over case (``case.first``): the
    first owner dies at ``case.first``, a second owner takes the run over and dies at
    ``case``, a third takes it over and finishes."""
    t0 = time.monotonic()
    base = {"files": files.to_json(), "broken": broken, "trace": traced, "scenario": scenario}
    violations: list[str] = []
    dying = ["first"]
    if case.first is not None:
        first = _run_worker({**base, **take_over(0), "proc": "first", "owner": "first",
                             "die_at": case.first.point, "when": case.first.when})
        _died(first, case.first, violations)
        dying.append("recover")
        died = _died(_run_worker({**base, **take_over(1), "owner": "taker", "proc": "recover",
                                  "restart": True, "die_at": case.point, "when": case.when}),
                     case, violations)
        base = {**base, **take_over(2), "owner": "finisher"}
    else:
        died = _died(_run_worker({**base, "proc": "first", "die_at": case.point,
                                  "when": case.when}), case, violations)
    trace = read_jsonl(files.trace)
    # an effect left in doubt by a dead owner: any application by a later owner is a retry
    retried_by: dict[str, tuple[str, ...]] = {}
    for i in range(len(dying)):
        for jkey in in_doubt_at_kill([e for e in trace if e["p"] in dying[:i + 1]]):
            retried_by.setdefault(jkey, ("recover", "finish")[i:])
    in_doubt = tuple(sorted(retried_by))
    second = _run_worker({**base, "proc": "finish" if case.first else "recover",
                          "restart": True})
    if second.returncode != 0:
        violations.append(f"recovery failed (exit {second.returncode}): "
                          f"{second.stderr.strip().splitlines()[-1:] or second.stderr}")
    trace = read_jsonl(files.trace)
    violations.extend(check_cancelled(files) if scenario == "cancel" else
                      check_durable(files, trace, in_doubt, retried_by))
    return CaseResult(case, files.store.kind, tuple(violations), died, in_doubt,
                      time.monotonic() - t0)



StoreFactory = Callable[[str], StoreSpec]
"""Given a case directory, a fresh store for the case."""


def sqlite_factory(directory: str) -> StoreSpec:
    return fresh_sqlite(directory, "store.db")


def postgres_factory(dsn: str) -> StoreFactory:
    def make(directory: str) -> StoreSpec:
        return fresh_postgres(dsn, "pp_crash")
    return make


@attrs.frozen
class CrashReport:
    store: str
    writes: tuple[str, ...]
    results: tuple[CaseResult, ...]
    broken: str | None = None
    take_over: bool = False
    scenario: str = "pay"

    @property
    def violations(self) -> list[str]:
        return [f"{r.case.when} write {r.case.point} ({r.case.op}): {v}"
                for r in self.results for v in r.violations]

    @property
    def cases(self) -> int:
        return len(self.results)


def cases_for(writes: Sequence[str]) -> list[Case]:
    """Both sides of every write: killed right before it, and right after it returned."""
    return [Case(n, when, writes[n - 1], writes[n - 2] if n > 1 else "")
            for n in range(1, len(writes) + 1) for when in ("before", "after")]


def take_over_points(writes: Sequence[str]) -> list[Case]:
    """Where the first owner dies in the take-over cases: inside the continuation after the
    answer, right after it claimed the run (a running run to take over) and right after it
    started the last effect (an effect in doubt under the old epoch)."""
    def committed(i: int) -> int:  # the write's own commit: its unit's, when in one
        return i + 1 if i + 1 < len(writes) and writes[i + 1] == "unit_of_work.commit" else i

    last_start = max(i for i, op in enumerate(writes) if op == "effects.start")
    claim = max(i for i, op in enumerate(writes[:last_start]) if op == "runs.replace")
    return [Case(j + 1, "after", writes[j], writes[j - 1])
            for j in (committed(claim), committed(last_start))]


def take_over_cases(factory: StoreFactory, root: Path, key: str,
                    writes: Sequence[str], engine: bool = False) -> list[Case]:
    """For each of :func:`take_over_points`: both sides of every write of the owner taking
    the run over (counted by a dry take-over that does not die)."""
    cases: list[Case] = []
    for first in take_over_points(writes):
        d = str(root / f"dry-take-over-{first.point:03d}")
        files = prepare(factory(d), d, key_from=key, engine=engine)
        try:
            base = {"files": files.to_json()}
            _run_worker({**base, **take_over(0), "proc": "first", "owner": "first",
                         "die_at": first.point, "when": first.when})
            done = _run_worker({**base, **take_over(1), "proc": "recover", "owner": "taker",
                                "restart": True})
            if done.returncode != 0:
                raise RuntimeError(f"the take-over fails without a crash:\n{done.stderr}")
            taken = [e["op"] for e in read_jsonl(files.trace)
                     if e["p"] == "recover" and e["at"] == "after"]
        finally:
            drop(files.store)
        cases.extend(attrs.evolve(c, first=first) for c in cases_for(taken))
    return cases


def enumerate_crashes(factory: StoreFactory, workdir: str, *, broken: str | None = None,
                      jobs: int = 2, only: Callable[[Case], bool] | None = None,
                      progress: Callable[[CaseResult], None] | None = None,
                      take_over: bool = False, trace_dir: str | None = None,
                      engine: bool = False, scenario: str = "pay") -> CrashReport:
    """Every boundary x (before, after) -- or the cases ``only`` selects -- each in a fresh
    store; with ``take_over``, also every boundary of an owner taking the run over from one
    that died (:func:`take_over_cases`).  With ``trace_dir``, every process of a case appends
    its events to one log (:class:`pausepoint.engine.tracing.FileTrace`), copied to
    ``trace_dir/<case>.events.ndjson`` and validated against the model (``CaseResult.trace``).
    With ``engine``, the scenario runs on the embedding engine (:class:`EngineDriver`).
    ``scenario``: one of :data:`SCENARIOS` (take-over cases are the ``pay`` scenario's; the
    ``cancel`` scenario runs on the harness)."""
    if scenario != "pay" and (take_over or engine):
        raise ValueError("the take-over cases kill a run's driver, not a canceller, and the "
                         "engine runs the pay scenario: scenario 'pay' only")
    root = Path(workdir)
    dry_files = prepare(factory(str(root / "dry")), str(root / "dry"), engine=engine)
    try:
        writes = tuple(e["op"] for e in dry_run(dry_files, scenario,
                                                each_write=broken in EACH_WRITE))
    finally:
        drop(dry_files.store)
    cases = cases_for(writes)
    if take_over:
        cases += take_over_cases(factory, root, dry_files.key, writes, engine)
    cases = [c for c in cases if only is None or only(c)]

    def one(case: Case) -> CaseResult:
        d = str(root / (f"{case.when}-{case.point:03d}" if case.first is None else
                        f"take-over-{case.first.point:03d}-{case.when}-{case.point:03d}"))
        files = prepare(factory(d), d, key_from=dry_files.key, engine=engine)
        try:
            res = run_case(files, case, broken, traced=trace_dir is not None,
                           scenario=scenario)
            if trace_dir is not None:
                kept = Path(trace_dir) / f"{Path(d).name}.events.ndjson"
                shutil.copyfile(files.events, kept)
                res = attrs.evolve(res, trace=judge_events(kept))
            return res
        except Exception:
            return CaseResult(case, files.store.kind, (traceback.format_exc(),), False)
        finally:
            drop(files.store)

    results: list[CaseResult] = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        for res in pool.map(one, cases):
            results.append(res)
            if progress is not None:
                progress(res)
    return CrashReport(dry_files.store.kind, writes, tuple(results), broken, take_over,
                       scenario)


# -- any implementation, through the adapter protocol -------------------------------------------


class AdapterCrashError(NothingChecked):
    """The implementation cannot be crashed through the protocol (it does not claim durability,
    or an operation the scenario needs failed): nothing was checked."""


@attrs.frozen
class AdapterCase:
    """Where the process dies: inside effect ``key`` (``fault``), or by ``crash_restart``
    right after the operation ``after`` (``start`` or ``resume``)."""

    key: str = ""
    fault: Fault | None = None
    after: str = ""

    @property
    def name(self) -> str:
        return f"{self.fault.value} in {self.key}" if self.fault else f"restart after {self.after}"


@attrs.frozen
class AdapterCrashReport:
    implementation: str
    results: tuple[tuple[AdapterCase, tuple[str, ...]], ...]

    @property
    def violations(self) -> list[str]:
        return [f"{case.name}: {v}" for case, vs in self.results for v in vs]

    def lines(self) -> list[str]:
        out = [(f"{self.implementation}: {len(self.results)} crash cases, "
                f"{len(self.violations)} violations")]
        for case, vs in self.results:
            out.append(f"  {'BAD' if vs else 'ok '} {case.name}")
            out.extend(f"      - {v}" for v in vs)
        return out


def adapter_cases(durability: bool, unknown_outcome: bool) -> list[AdapterCase]:
    """With ``durability``, a crash after each operation; with ``unknown_outcome``, one before
    and one after each effect applies."""
    cases = [AdapterCase(after="start"), AdapterCase(after="resume")] if durability else []
    if unknown_outcome:
        cases += [AdapterCase(key=s.key, fault=f) for s in SCRIPT if isinstance(s, Effect)
                  for f in Fault]
    return cases


class _ProtocolRun:
    """One case: the scenario's run, driven through the adapter to its end."""

    def __init__(self, adapter: Adapter, case: AdapterCase, run_id: str) -> None:
        self.a, self.case, self.run_id = adapter, case, run_id
        self.tokens: dict[str, set[str]] = {}
        self.problems: list[str] = []
        self.recovered: list[str] = []

    def data(self, result: Any, what: str) -> Any:
        if not isinstance(result, Ok):
            raise AdapterCrashError(f"{what}: {result!r}"[:500])
        return result.data

    def seen(self, pauses: Sequence[Any]) -> list[Any]:
        mine = [p for p in pauses if p.run_id == self.run_id]
        for p in mine:
            self.tokens.setdefault(p.interrupt_id, set()).add(p.token)
        return mine

    def count(self, key: str) -> int:
        return int(self.data(self.a.effect_count(EffectCountArgs(run_id=self.run_id, key=key)),
                             "effect_count").count)

    def restart(self, status: str) -> tuple[list[Any], str]:
        """Crash and restart: the run's pauses published again, and its status (``status``
        unless the restart recovered the run)."""
        data = self.data(self.a.crash_restart(CrashRestartArgs()), "crash_restart")
        for run in data.runs:
            if run.run_id == self.run_id:
                status = run.status.value
        return self.seen(data.pauses), status

    def drive(self) -> None:
        script = [from_script(Effect(s.key, self.case.fault) if isinstance(s, Effect)
                              and s.key == self.case.key else s) for s in SCRIPT]
        rep = self.data(self.a.start(StartArgs(run_id=self.run_id, session_id=SESSION,
                                               scope=SCOPE, script=script)), "start")
        pauses, status = self.seen(rep.pauses), rep.status.value
        if self.case.after == "start":
            pauses, status = self.restart(status)
        restart_after_answer = self.case.after == "resume"
        for _ in range(MAX_ROUNDS):
            if status == "done":
                return
            if not pauses:  # it died (or stalled): restart it
                pauses, status = self.restart(status)
                if not pauses:
                    break  # nothing left to answer: the run ended (done or not: see below)
            p = pauses[0]
            response: dict[str, Any] = RESPONSE
            if p.kind == PauseKind.RECOVERY:
                self.recovered.append(p.interrupt_id)
                phase = self.data(self.a.pause_state(PauseStateArgs(
                    interrupt_id=p.interrupt_id)), "pause_state").phase
                if phase == "unknown_outcome":
                    applied = self.count(self.case.key) > 0  # the operator looks at the world
                    want = 1 if self.case.fault == Fault.CRASH_AFTER_APPLY else 0
                    if self.count(self.case.key) != want:
                        self.problems.append(f"effect {self.case.key} in doubt was retried "
                                             "before it was reconciled")
                    self.data(self.a.reconcile(ReconcileArgs(
                        interrupt_id=p.interrupt_id, resolution=Resolution.APPLIED if applied
                        else Resolution.NOT_APPLIED)), "reconcile")
                response = {}
            out = self.data(self.a.resume(ResumeArgs(
                token=p.token, response=response, run_id=self.run_id, session_id=SESSION,
                scope=SCOPE)), "resume")
            pauses, status = self.seen(out.run.pauses), out.run.status.value
            if restart_after_answer:  # the first answer only
                restart_after_answer = False
                pauses, status = self.restart(status)
        if status != "done":
            self.problems.append(f"the run did not end done: {status}")

    def check(self) -> tuple[str, ...]:
        try:
            self.drive()
        except AdapterCrashError as exc:
            self.problems.append(f"the protocol failed: {exc}")
        for s in SCRIPT:
            if isinstance(s, Effect) and (n := self.count(s.key)) != 1:
                self.problems.append(f"effect {s.key} applied {n} times, not once")
        for iid, tokens in self.tokens.items():
            if len(tokens) > 1:
                self.problems.append(f"{len(tokens)} different tokens were published for "
                                     f"pause {iid}")
        if self.case.fault is not None and not self.recovered:
            self.problems.append(f"no recovery pause for effect {self.case.key}, whose outcome "
                                 "the crash left unknown")
        if self.case.fault is None and self.recovered:
            self.problems.append("a recovery pause, but no effect was in doubt")
        return tuple(self.problems)


def crash_adapter(adapter: Adapter, name: str = "adapter") -> AdapterCrashReport:
    """Every crash case the protocol can name (:func:`adapter_cases`), each on a run of its
    own, through ``adapter``."""
    hello = adapter.hello(HelloArgs(protocol=PROTOCOL_VERSION, suite=f"crash {suite_version}"))
    if not isinstance(hello, Ok):
        raise AdapterCrashError(f"hello: {hello!r}")
    cases = adapter_cases(Group.DURABILITY in hello.data.groups,
                          Group.UNKNOWN_OUTCOME in hello.data.groups)
    if not cases:
        raise AdapterCrashError(f"{name} claims neither durability nor unknown-outcome: it is "
                                "not meant to survive a crash")
    if not isinstance(adapter.reset(ResetArgs(ttl_ms=TTL_MS)), Ok):
        raise AdapterCrashError("reset failed")
    return AdapterCrashReport(name, tuple(
        (case, _ProtocolRun(adapter, case, f"crash-{i}").check())
        for i, case in enumerate(cases)))


# -- command line ----------------------------------------------------------------------------


def _iter_report(report: CrashReport) -> Iterator[str]:
    taken = sum(1 for r in report.results if r.case.first is not None)
    yield (f"{report.store}: {len(report.writes)} writes in the {report.scenario} scenario, "
           f"{report.cases} crash "
           f"cases (before/after each"
           + (f"; {taken} of them killing an owner taking the run over" if report.take_over
              else "")
           + f"), {len(report.violations)} violations"
           + (f" [BROKEN: {report.broken}]" if report.broken else ""))
    for r in report.results:
        mark = "ok " if not r.violations else "BAD"
        doubt = f" in doubt: {','.join(r.in_doubt)}" if r.in_doubt else ""
        over = "" if r.case.first is None else f"take-over after {r.case.first.point:2d}: "
        yield f"  {mark} {over}{r.case.when:>6} {r.case.point:2d} {r.case.op:<22}{doubt}"
        for v in r.violations:
            yield f"      - {v}"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pausepoint_conformance.faults.crash")
    sub = parser.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="enumerate every crash point on a store")
    r.add_argument("--store", choices=("sqlite", "postgres"), default="sqlite")
    r.add_argument("--broken", choices=BROKEN_VARIANTS)
    r.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    r.add_argument("--scenario", choices=SCENARIOS, default="pay",
                   help="pay: a run pauses, is answered and pays (default); cancel: a run and "
                        "its child, paused, are cancelled (the cancel's every write)")
    r.add_argument("--take-over", action="store_true",
                   help="also kill an owner taking the run over (its lease ran out) at each "
                        "of its writes, after the first owner died inside the continuation")
    r.add_argument("--engine", action="store_true",
                   help="drive the scenario through the embedding engine (pausepoint.Engine, "
                        "an agent function) instead of the scripted harness")
    r.add_argument("--adapter", metavar="SPEC",
                   help="crash this implementation through the adapter protocol instead, "
                        "spelled as for `pausepoint conform --adapter` (reference, "
                        'cmd:"<command line>", MODULE:CALLABLE)')
    r.add_argument("--trace", metavar="DIR",
                   help="write each case's NDJSON event log (every process of the case, in "
                        "turn) to DIR/<case>.events.ndjson and validate it against the model")
    args = parser.parse_args(argv)
    if args.cmd == "run" and args.adapter is not None:
        return main_on_adapter(args.adapter, crash_adapter)
    factory: StoreFactory = sqlite_factory
    if args.store == "postgres":
        dsn = os.environ.get("PAUSEPOINT_PG_DSN", "")
        if not dsn:
            print("PAUSEPOINT_PG_DSN is not set", file=sys.stderr)
            return 2
        factory = postgres_factory(dsn)
    with tempfile.TemporaryDirectory(prefix="pp-crash-") as tmp:
        t0 = time.monotonic()
        if args.trace:
            os.makedirs(args.trace, exist_ok=True)
        report = enumerate_crashes(factory, tmp, broken=args.broken, jobs=args.jobs,
                                   take_over=args.take_over, trace_dir=args.trace,
                                   engine=args.engine, scenario=args.scenario)
        for line in _iter_report(report):
            print(line)
        bad_traces = [res for res in report.results if res.trace and res.trace != "valid"]
        if args.trace:
            print(f"traces: {len(report.results) - len(bad_traces)} of {len(report.results)} "
                  f"valid against the model, in {args.trace}")
            for res in bad_traces:
                print(f"  {res.case.when} {res.case.point} ({res.case.op}): {res.trace[:300]}")
        print(f"{time.monotonic() - t0:.1f} s")
    return 1 if report.violations or bad_traces else 0


if __name__ == "__main__":
    # run as the importable module, not as __main__: the fork server's workers find their entry
    # point there (see _FORKS)
    sys.exit(importlib.import_module(_MODULE).main())
