"""Run-level races: restarters, resumers and cancellers, each its own process, on one store.

Every round the orchestrator starts a parent run and a child run on the shared store, then
sets its worker processes loose together (on a barrier):

* **resumers** answer every resumable question of the round's runs, racing each other for
  every pause (the winner continues the run in its process);
* **restarters** (each under its own owner name) call :meth:`Harness.restart` again and again;
  in a *take-over* round their clock is past every live lease, so they take runs away from
  the resumers driving them, who must then be fenced off;
* **cancellers** cancel the parent or the child after a random delay, all of them at once.

The scripts have effects before and after pauses, two questions in a row and a child run.  The
effects are applied to a witness world in each process, which stamps every application with
the moment its journal start was *asked for* (``time.monotonic_ns``, one clock for every
process of the machine) and looks, at that moment, at the questions the effect comes after.
After the round the orchestrator checks (the ``run.*`` clauses):

* no effect applied twice (``effect.at-most-once``, ``run.ownership.fencing``,
  ``run.restart.concurrent``);
* no effect applied while a question before it was still unanswered
  (``run.continuation.belongs-to-step``);
* no effect whose journal start was asked for after a cancel of its run (or its parent)
  returned, and a cancelled run stays cancelled (``run.cancel.in-flight``,
  ``run.child.cancelling-parent``);
* one winner per pause, and every consumed pause has its winner
  (``resume.consume.single-winner``).

``broken="unfenced"`` wraps every worker's store in one that drops the epoch from the run's
conditional write and makes the journal's start an upsert (as ``tests/broken/unfenced.py``);
``broken="step-blind"`` continues a run with an answer for any step (as
``tests/broken/stale_continuation.py``) -- both to show that the checks bite.
"""

from __future__ import annotations

import collections
import contextlib
import multiprocessing
import random
import time
import traceback
import uuid
from collections.abc import Callable, Iterator, Sequence
from multiprocessing.context import SpawnProcess
from typing import Any, Final, NoReturn, Self, cast

import attrs

from pausepoint.core import lifecycle as lc
from pausepoint.core.errors import PausepointError
from pausepoint.core.ports import EffectStatus, Ledger, PauseRecord, RunRecord, RunStatus
from pausepoint.core.registry import RECONCILE
from pausepoint.engine.clock import ManualClock
from pausepoint.engine.harness import DEFAULT_INTERACTIONS, Harness, ScriptEngine
from pausepoint.stores.base import StoreBundle, Units
from pausepoint_conformance.faults.testbed import (
    StoreSpec,
    load_ring,
    next_result,
    stop_workers,
)

LEASE_MS: Final = 30_000
ROUND_MS: Final = 4 * LEASE_MS
"""How far every clock moves between rounds: past every lease of the round before."""
TTL_MS: Final = 10**12
S: Final[dict[str, str]] = {"session_id": "session", "scope": "default"}
ANSWER: Final[dict[str, Any]] = {"approved": True}
ROUND_TIMEOUT_S: Final = 20.0
STALL_P: Final = 0.05
STALL_X: Final = 50
BROKEN: Final[tuple[str, ...]] = ("unfenced", "step-blind")

PARENT: Final[tuple[dict[str, Any], ...]] = (
    {"op": "effect", "key": "a"}, {"op": "interrupt", "name": "ask"},
    {"op": "interrupt", "name": "approve"}, {"op": "effect", "key": "pay"},
    {"op": "effect", "key": "notify"}, {"op": "end"})
"""An effect before the first question, two questions in a row, two effects after them."""
CHILD: Final[tuple[dict[str, Any], ...]] = (
    {"op": "interrupt", "name": "confirm"}, {"op": "effect", "key": "c"}, {"op": "end"})
SCRIPTS: Final[dict[str, tuple[dict[str, Any], ...]]] = {"p": PARENT, "c": CHILD}
TERMINAL: Final = frozenset({RunStatus.DONE, RunStatus.CANCELLED, RunStatus.ERROR})


def _before(script: Sequence[dict[str, Any]], key: str) -> list[int]:
    """The step numbers of the questions ``script`` asks before its effect ``key``."""
    pcs: list[int] = []
    for pc, step in enumerate(script):
        if step.get("op") == "effect" and step.get("key") == key:
            return pcs
        if step.get("op") == "interrupt":
            pcs.append(pc)
    return pcs


# -- what each process sees ---------------------------------------------------------------------


@attrs.frozen
class Applied:
    run_id: str
    key: str
    started_ns: int  # when its journal start was asked for
    unanswered: tuple[str, ...]  # questions before it not consumed when it was applied
    process: str


class WitnessWorld:
    """The outside world of one process: it keeps every application with its witness."""

    def __init__(self, process: str) -> None:
        self.process = process
        self.ledger: Ledger | None = None
        self.applied: list[Applied] = []
        self.consumed: list[str] = []
        self.cancelled: list[tuple[str, int]] = []  # (run, when its cancel took it over)
        self.notes: list[tuple[str, str]] = []  # (run, what happened to it here)
        self.started_ns = 0
        self._depth = 0  # units of work open in this (single-threaded) process
        self._pending: list[tuple[str, Any]] = []  # (list's name, note) in the open unit

    def note(self, into: str, item: Any) -> None:
        """Add ``item`` to the list ``into`` (``consumed``, ``cancelled``) once the store
        wrote it for good: at once outside a unit of work, else when the unit commits.  A unit
        the store rolls back -- a deadlock victim, run again from its start -- won nothing and
        took nothing over, and a note taken inside it would be a false witness."""
        if self._depth:
            self._pending.append((into, item))
        else:
            getattr(self, into).append(item)

    @contextlib.contextmanager
    def unit(self, open_unit: Callable[[], contextlib.AbstractContextManager[object]]
             ) -> Iterator[object]:
        """The store's unit of work (``open_unit()``), keeping this process's notes taken
        inside it until it commits, and dropping them if it does not."""
        self._depth += 1
        try:
            with open_unit() as unit:
                yield unit
        except BaseException:
            if self._depth == 1:
                self._pending.clear()
            raise
        finally:
            self._depth -= 1
        if not self._depth:
            self.committed()

    def committed(self) -> None:
        """What the open unit noted so far is written for good (its end, or
        ``commit_so_far``)."""
        for into, item in self._pending:
            getattr(self, into).append(item)
        self._pending.clear()

    def apply(self, run_id: str, key: str) -> None:
        kind = run_id.rsplit("-", 1)[1]
        unanswered = []
        assert self.ledger is not None
        for pc in _before(SCRIPTS[kind], key):
            row = self.ledger.get(f"{run_id}/{pc}/0")
            if row is None or row.state.phase != lc.Phase.CONSUMED:
                unanswered.append(f"{run_id}/{pc}/0")
        self.applied.append(Applied(run_id, key, self.started_ns, tuple(unanswered),
                                    self.process))
        time.sleep(random.uniform(0, 0.002))  # an effect takes a while: cancels land inside

    def count(self, run_id: str, key: str) -> int:
        return sum(1 for a in self.applied if (a.run_id, a.key) == (run_id, key))


class _Facet:
    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.durable: bool = bool(inner.durable)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


class Jittered(_Facet):
    """A facet whose every call waits a random moment first: the processes' store calls
    interleave in ever new orders (a chaos scheduler, as Jepsen's)."""

    def __init__(self, inner: Any, jitter_s: float) -> None:
        super().__init__(inner)
        self.jitter_s = jitter_s

    def __getattr__(self, name: str) -> Any:
        target = getattr(self.inner, name)
        if name.startswith("_") or not callable(target) or not self.jitter_s:
            return target

        def call(*args: Any, **kwargs: Any) -> Any:
            stall = random.random() < STALL_P  # now and then a process stalls (a GC, a swap)
            time.sleep(random.uniform(0, self.jitter_s) * (STALL_X if stall else 1))
            return target(*args, **kwargs)
        return call


class StampedJournal(_Facet):
    """The journal, stamping the moment each start is asked for (after a little jitter that
    widens the windows between reading the run and starting its effect)."""

    def __init__(self, inner: Any, world: WitnessWorld) -> None:
        super().__init__(inner)
        self.world = world

    def start(self, run_id: str, key: str, epoch: int, now: int | None) -> bool:
        self.world.started_ns = time.monotonic_ns()
        return bool(self.inner.start(run_id, key, epoch, now))


class WitnessLedger(_Facet):
    """The ledger, noting every consume this process won (the single winner of a pause)."""

    def __init__(self, inner: Any, world: WitnessWorld) -> None:
        super().__init__(inner)
        self.world = world

    def transition(self, interrupt_id: str, expected_version: int, new: lc.PauseState,
                   result: str | None = None) -> bool:
        won = bool(self.inner.transition(interrupt_id, expected_version, new, result))
        if won and new.phase == lc.Phase.CONSUMED:
            self.world.note("consumed", interrupt_id)
        return won


class WitnessRuns(_Facet):
    """The run table, noting the moment a cancel's take-over of a run (its new epoch) was
    written -- kept once its unit commits (:meth:`WitnessWorld.note`): from then on no driver
    may start an effect of the run."""

    def __init__(self, inner: Any, world: WitnessWorld) -> None:
        super().__init__(inner)
        self.world = world

    def replace(self, expected: RunRecord, new: RunRecord) -> bool:
        done = bool(self.inner.replace(expected, new))
        if done and new.status == RunStatus.CANCELLING \
                and expected.status != RunStatus.CANCELLING:
            self.world.note("cancelled", (new.run_id, time.monotonic_ns()))
        return done


class EpochBlindRuns(_Facet):
    """DELIBERATELY BROKEN: the run's conditional write compares status and state, not the
    epoch (no fencing)."""

    def replace(self, expected: RunRecord, new: RunRecord) -> bool:
        stored = self.inner.get(expected.run_id)
        if stored is None or (stored.status, stored.state) != (expected.status, expected.state):
            return False
        return bool(self.inner.replace(stored, new))


class UpsertJournal(_Facet):
    """DELIBERATELY BROKEN: the journal's start is an upsert under the run's current epoch."""

    def __init__(self, inner: Any, runs: Any) -> None:
        super().__init__(inner)
        self.runs = runs

    def start(self, run_id: str, key: str, epoch: int, now: int | None) -> bool:
        if self.inner.status(run_id, key) is not None:
            self.inner.settle(run_id, key, EffectStatus.NOT_APPLIED)
        run = self.runs.get(run_id)
        return bool(self.inner.start(run_id, key, epoch if run is None else run.epoch,
                                     None))  # nor the lease


@attrs.define
class WrappedBundle:
    inner: StoreBundle
    ledger: Any
    runs: Any
    effects: Any
    payloads: Any
    checkpoints: Any

    @classmethod
    def of(cls, bundle: StoreBundle, **replaced: Any) -> Self:
        """``bundle`` with the facets named in ``replaced`` swapped for those given; the
        others are its own."""
        facets = {name: replaced.pop(name, getattr(bundle, name))
                  for name in ("ledger", "runs", "effects", "payloads", "checkpoints")}
        return cls(bundle, **facets, **replaced)

    @property
    def durable(self) -> bool:
        return self.inner.durable

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


@attrs.define
class WitnessedBundle(WrappedBundle):
    """The wrapped store whose units of work tell ``world`` when they commit, so that what
    it noted inside a unit counts only if the unit did (:meth:`WitnessWorld.note`)."""

    world: WitnessWorld

    def unit_of_work(self) -> contextlib.AbstractContextManager[object]:
        return self.world.unit(cast(Units, self.inner).unit_of_work)

    def commit_so_far(self) -> None:
        cast(Units, self.inner).commit_so_far()
        self.world.committed()

    def close(self) -> None:
        self.inner.close()


class EachWriteCommits(WrappedBundle):
    """The broken store commits every write by itself, with no unit of work: a unit holds
    SQLite's write lock through a driver's operation, which serialises the racing drivers and
    would hide the missing fence."""

    def __getattr__(self, name: str) -> Any:
        if name in ("unit_of_work", "commit_so_far"):
            raise AttributeError(name)
        return getattr(self.inner, name)


class NotingEngine(ScriptEngine):
    """The harness's engine, noting in its world when it lost a run (fenced or cancelled),
    let one go after a store failure, or opened a recovery pause: what a violation report
    shows."""

    def _note(self, what: str, run_id: str) -> None:
        world = self.harness.world
        assert isinstance(world, WitnessWorld)
        world.notes.append((run_id, f"{world.process} {what}"))

    def _lost(self, run_id: str, epoch: int | None = None) -> NoReturn:
        self._note("lost the run", run_id)
        super()._lost(run_id, epoch)

    def _release(self, owned: RunRecord) -> Any:
        self._note("released it after a store failure", owned.run_id)
        return super()._release(owned)

    def _recover_effect(self, run: RunRecord, state: dict[str, Any], key: str,
                        step: int) -> None:
        self._note(f"opens a recovery pause for {key} under epoch {run.epoch}", run.run_id)
        super()._recover_effect(run, state, key, step)


class StepBlindEngine(NotingEngine):
    """DELIBERATELY BROKEN: a continuation for any step."""

    def _belongs(self, rec: PauseRecord, run: RunRecord, state: dict[str, Any]) -> bool:
        return True


class NotingHarness(Harness):
    engine_class: type[ScriptEngine] = NotingEngine


class StepBlindHarness(NotingHarness):
    engine_class = StepBlindEngine


def open_harness(spec: StoreSpec, key_path: str, owner: str, clock: ManualClock,
                 world: WitnessWorld, broken: str | None = None,
                 jitter_ms: float = 0.0) -> Harness:
    def open_bundle() -> StoreBundle:
        bundle = spec.open()
        world.ledger = bundle.ledger

        def jit(facet: Any) -> Any:
            return Jittered(facet, jitter_ms / 1000)
        # the stamp is taken right before the store's own start: a start asked for later
        # than a cancel returned must be refused
        runs_: Any = WitnessRuns(jit(bundle.runs), world)
        effects = jit(StampedJournal(bundle.effects, world))
        if broken == "unfenced":
            runs_ = EpochBlindRuns(runs_)
            effects = UpsertJournal(effects, bundle.runs)
        facets = (bundle, WitnessLedger(jit(bundle.ledger), world), runs_, effects,
                  jit(bundle.payloads), jit(bundle.checkpoints))
        if broken == "unfenced":
            return cast(StoreBundle, EachWriteCommits(*facets))
        return cast(StoreBundle, WitnessedBundle(*facets, world=world))
    cls = StepBlindHarness if broken == "step-blind" else NotingHarness
    return cls(open_bundle=open_bundle, signer=load_ring(key_path), clock=clock, world=world,
               ttl_ms=TTL_MS, interactions=DEFAULT_INTERACTIONS, durable_restart=True,
               owner=owner, lease_ms=LEASE_MS)


def _set(clock: ManualClock, now: int) -> None:
    if now > clock.now():
        clock.advance(now - clock.now())


# -- the worker processes -----------------------------------------------------------------------


@attrs.frozen
class Job:
    round: int
    runs: tuple[str, ...]
    now: int
    take_over: bool
    cancel: str | None  # the run the cancellers cancel this round
    delays: tuple[float, ...]  # each canceller's delay


@attrs.define
class Outcome:
    applied: list[Applied] = attrs.Factory(list)
    answers: list[tuple[str, str]] = attrs.Factory(list)  # (pause, won|replay|refused:..)
    consumed: list[str] = attrs.Factory(list)  # the pauses this process won
    cancelled: list[tuple[str, int]] = attrs.Factory(list)  # run, its cancel's take-over
    notes: list[tuple[str, str]] = attrs.Factory(list)
    cancels: list[tuple[str, int | None, str]] = attrs.Factory(list)  # run, done at, refusal
    errors: list[str] = attrs.Factory(list)
    restarted: int = 0


def _resume_all(h: Harness, job: Job, out: Outcome) -> None:
    for run_id in job.runs:
        for p in h.published(run_id):
            if not p.resumable or p.name == RECONCILE.name:
                continue
            try:
                rep = h.resume(p.token, ANSWER, **S)
                out.answers.append((p.interrupt_id, "replay" if rep.replayed else "won"))
            except PausepointError as exc:
                out.answers.append((p.interrupt_id, f"refused:{exc.code.value}"))


def _play(role: str, index: int, h: Harness, job: Job, over: Any, out: Outcome) -> None:
    if role == "canceller":
        if job.cancel is not None:
            time.sleep(job.delays[index])
            try:
                h.cancel(job.cancel)
                out.cancels.append((job.cancel, time.monotonic_ns(), ""))
            except PausepointError as exc:
                out.cancels.append((job.cancel, None, exc.code.value))
        over.wait(ROUND_TIMEOUT_S * 2)
        return
    while not over.is_set():
        if role == "resumer":
            _resume_all(h, job, out)
        else:
            out.restarted += len(h.restart())
        time.sleep(0.001)


def worker(role: str, index: int, spec_json: dict[str, Any], key_path: str,
           broken: str | None, jitter_ms: float, jobs: Any, results: Any, over: Any,
           barrier: Any) -> None:
    """One racing process: its own store handle, owner name, clock and world."""
    name = f"{role}-{index}"
    clock = ManualClock(0)
    world = WitnessWorld(name)
    h = open_harness(StoreSpec.from_json(spec_json), key_path, name, clock, world, broken,
                     jitter_ms)
    results.put(("ready", name, None))
    try:
        for item in iter(jobs.get, None):  # None: stop
            job = Job(**item)
            _set(clock, job.now + (LEASE_MS + 1 if role == "restarter" and job.take_over
                                   else 0))
            world.applied, world.consumed, world.cancelled, world.notes = [], [], [], []
            out = Outcome()
            try:
                barrier.wait(timeout=60)
                _play(role, index, h, job, over, out)
            except Exception:
                out.errors.append(f"{name}: {traceback.format_exc()[-600:]}")
                over.wait(ROUND_TIMEOUT_S * 2)
            out.applied, out.consumed, out.cancelled, out.notes = (
                world.applied, world.consumed, world.cancelled, world.notes)
            results.put((job.round, name, attrs.asdict(out, recurse=False)))
    finally:
        h.deployment.store.close()


# -- the orchestrator ---------------------------------------------------------------------------


@attrs.define
class RunRaceReport:
    store: str
    restarters: int
    resumers: int
    cancellers: int
    rounds: int = 0
    effects: int = 0
    winners: int = 0
    take_overs: int = 0
    cancelled: int = 0
    unfinished: int = 0
    ends: collections.Counter[str] = attrs.Factory(collections.Counter)
    violations: list[str] = attrs.Factory(list)
    stuck: list[str] = attrs.Factory(list)
    broken: str | None = None

    def summary(self) -> str:
        return (f"{self.rounds} rounds, {self.restarters} restarters, {self.resumers} "
                f"resumers, {self.cancellers} cancellers: {self.effects} effects, "
                f"{self.winners} winners, {len(self.violations)} violations")

    def lines(self) -> list[str]:
        out = [f"{self.store}: {self.summary()}"
               + (f" [BROKEN: {self.broken}]" if self.broken else ""),
               (f"  take-over rounds {self.take_overs}, successful cancels {self.cancelled}, "
               f"runs ended {dict(self.ends)}, rounds not finished in time {self.unfinished}")]
        return out + [f"  - {v}" for v in self.violations[:20]] + [
            f"  not finished: {s}" for s in self.stuck[:5]]


def judge(job: Job, outcomes: Sequence[Outcome], finals: dict[str, RunRecord | None],
          rows: Sequence[PauseRecord], report: RunRaceReport) -> None:
    """The round's checks (see the module's docstring)."""
    bad: list[str] = []
    applied = [a for o in outcomes for a in o.applied]
    report.effects += len(applied)
    for o in outcomes:
        bad.extend(f"uncaught: {e}" for e in o.errors)
    for (run_id, key), n in collections.Counter((a.run_id, a.key) for a in applied).items():
        if n > 1:
            who = [a.process for a in applied if (a.run_id, a.key) == (run_id, key)]
            bad.append(f"effect {key} of {run_id} applied {n} times (by {who})")
    for a in applied:
        if a.unanswered:
            bad.append(f"{a.process} applied {a.key} of {a.run_id} past the unanswered "
                       f"{list(a.unanswered)}")
    cancelled_at: dict[str, int] = {}
    for o in outcomes:
        for run_id, at in o.cancelled:
            cancelled_at[run_id] = min(at, cancelled_at.get(run_id, at))
    if any(at is not None for o in outcomes for _r, at, _refusal in o.cancels):
        report.cancelled += 1
    for run_id in job.runs:
        taken = cancelled_at.get(run_id)
        if taken is None:
            continue
        for a in applied:
            if a.run_id == run_id and a.started_ns > taken:
                bad.append(f"{a.process} applied {a.key} of the cancelled {run_id}, its start "
                           f"asked for {(a.started_ns - taken) / 1e6:.1f} ms after the "
                           f"cancel took the run over")
        final = finals.get(run_id)
        if final is None or final.status != RunStatus.CANCELLED:
            bad.append(f"{run_id} was cancelled but ends "
                       f"{None if final is None else final.status.value}")
    wins = collections.Counter(i for o in outcomes for i in o.consumed)
    report.winners += sum(wins.values())
    for rec in rows:
        n = wins.get(rec.interrupt_id, 0)
        if n > 1:
            bad.append(f"{n} winners of {rec.interrupt_id}")
        if rec.state.phase == lc.Phase.CONSUMED and n == 0:
            bad.append(f"{rec.interrupt_id} consumed with no winner")
    for run_id, final in finals.items():
        if final is not None and final.status in TERMINAL:
            left = [p.interrupt_id for p in rows
                    if p.run_id == run_id and p.state.phase in lc.LIVE]
            if left:
                seen = [n for o in outcomes for r, n in o.notes if r == run_id]
                seen += [f"{a.process} applied {a.key}" for a in applied if a.run_id == run_id]
                bad.append(f"{run_id} ended {final.status.value} with live pauses {left} "
                           f"(seen: {seen})")
        recovering = any(p.run_id == run_id and p.claims.name == RECONCILE.name
                         and p.state.phase in lc.LIVE for p in rows)
        report.ends[(final.status.value if final else "missing")
                    + (" (recovery pause)" if recovering else "")] += 1
    report.violations.extend(f"round {job.round}: {b}" for b in bad)


class RunRacePool:
    """The worker processes on one store, reused for every round."""

    def __init__(self, spec: StoreSpec, key_path: str, restarters: int, resumers: int,
                 cancellers: int, broken: str | None = None, seed: int = 0,
                 jitter_ms: float = 1.0) -> None:
        self.roles = (["restarter"] * restarters + ["resumer"] * resumers
                      + ["canceller"] * cancellers)
        if not self.roles:
            raise ValueError("a race needs at least one process")
        self.cancellers = cancellers
        self.rng = random.Random(seed)
        ctx = multiprocessing.get_context("spawn")
        self._barrier = ctx.Barrier(len(self.roles))
        self._over = ctx.Event()
        self._results: Any = ctx.Queue()
        self._jobs: list[Any] = [ctx.Queue() for _ in self.roles]
        counts: collections.Counter[str] = collections.Counter()
        self._procs: list[SpawnProcess] = []
        for i, role in enumerate(self.roles):
            self._procs.append(ctx.Process(
                target=worker, args=(role, counts[role], spec.to_json(), key_path, broken,
                                     jitter_ms, self._jobs[i], self._results, self._over,
                                     self._barrier), daemon=True))
            counts[role] += 1
        for p in self._procs:
            p.start()
        self.clock = ManualClock(0)
        self.world = WitnessWorld("starter")
        self.harness = open_harness(spec, key_path, "starter", self.clock, self.world)
        for _ in self.roles:
            self._get(180)
        self._prefix = uuid.uuid4().hex[:8]

    def _get(self, timeout: float) -> tuple[Any, str, Any]:
        item: tuple[Any, str, Any] = next_result(self._results, self._procs, timeout)
        return item

    def close(self) -> None:
        stop_workers(self._jobs, self._procs)
        self.harness.deployment.store.close()

    def __enter__(self) -> RunRacePool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _settled(self, run: RunRecord | None) -> bool:
        """Ended, or waiting on an operator: a take-over found an effect in flight and opened
        a recovery pause (``effect.unknown-outcome``) -- nobody in the race reconciles it."""
        if run is None or run.status in TERMINAL:
            return True
        return run.status == RunStatus.PAUSED and any(
            p.claims.name == RECONCILE.name and p.state.phase in lc.LIVE
            for p in self.harness.service.ledger.by_run(run.run_id))

    def round(self, r: int, report: RunRaceReport) -> None:
        now = (r + 1) * ROUND_MS
        _set(self.clock, now)
        parent, child = f"{self._prefix}-{r}-p", f"{self._prefix}-{r}-c"
        self.world.applied, self.world.consumed, self.world.cancelled = [], [], []
        self.world.notes = []
        self.harness.start(PARENT, run_id=parent, **S)
        self.harness.start(CHILD, run_id=child, parent_run_id=parent, **S)
        take_over = self.rng.random() < 0.5
        cancel = (self.rng.choice([parent, parent, child]) if self.cancellers
                  and self.rng.random() < 0.6 else None)
        job = Job(r, (parent, child), now, take_over, cancel,
                  tuple(self.rng.uniform(0, 0.03) for _ in range(self.cancellers)))
        report.take_overs += take_over
        for q in self._jobs:
            q.put(attrs.asdict(job))
        svc = self.harness.service
        deadline = time.monotonic() + ROUND_TIMEOUT_S
        while True:
            finals = {run_id: svc.runs.get(run_id) for run_id in job.runs}
            if all(self._settled(f) for f in finals.values()):
                break
            if time.monotonic() > deadline:
                report.unfinished += 1
                report.stuck.append(f"round {r}: " + "; ".join(
                    f"{run_id} {f.status.value if f else None} {f.epoch if f else ''} "
                    f"{[(p.interrupt_id, p.state.phase.value) for p in svc.ledger.by_run(run_id)]}"
                    for run_id, f in finals.items()))
                break
            time.sleep(0.003)
        self._over.set()
        outcomes = [Outcome(applied=list(self.world.applied),
                            consumed=list(self.world.consumed),
                            cancelled=list(self.world.cancelled),
                            notes=list(self.world.notes))]
        for _ in self.roles:
            r_, _name, out = self._get(120)
            assert r_ == r
            outcomes.append(Outcome(**out))
        self._over.clear()
        finals = {run_id: svc.runs.get(run_id) for run_id in job.runs}
        rows = [rec for run_id in job.runs for rec in svc.ledger.by_run(run_id)]
        report.rounds += 1
        judge(job, outcomes, finals, rows, report)


def run_race(spec: StoreSpec, key_path: str, *, restarters: int = 2, resumers: int = 2,
             cancellers: int = 1, rounds: int = 10, broken: str | None = None, seed: int = 0,
             jitter_ms: float = 1.0, stop_on_violation: bool = False,
             progress: Callable[[int], None] = lambda _r: None) -> RunRaceReport:
    """``rounds`` mixed rounds of the run-level race on the store ``spec`` (fewer when
    ``stop_on_violation`` and one was found)."""
    report = RunRaceReport(spec.kind, restarters, resumers, cancellers, broken=broken)
    with RunRacePool(spec, key_path, restarters, resumers, cancellers, broken, seed,
                     jitter_ms) as pool:
        for r in range(rounds):
            pool.round(r, report)
            progress(r + 1)
            if stop_on_violation and report.violations:
                break
    return report
