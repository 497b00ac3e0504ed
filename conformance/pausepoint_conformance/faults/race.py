"""Concurrent resumers: processes racing to decide one pause, on one shared store.

A pool of worker *processes* (each its own interpreter, store handle and connections, like
separate resume servers) is started once; for every race the orchestrator creates a fresh
resumable pause, gives each worker a role -- resume with some response, expire, or cancel --
and the workers start together on a barrier.  Then it checks what came back against the
ledger's final row (clauses ``resume.consume.single-winner``, ``race.decided-once``,
``replay.same-response``, ``replay.different-response.conflict``, ``expiry.no-consume-after``,
``cancel.distinct``):

* consumed: exactly one resumer won; every other resumer got a definite answer naming the
  winning state -- a replay when it sent the winner's response, ``response_conflict`` when it
  sent another; an expirer or canceller got ``pause_consumed``;
* expired: nobody won, every resumer got ``pause_expired``;
* cancelled: nobody won, every resumer got ``pause_cancelled``;
* the row changed state once: its version is exactly one more than the resumable row's.

Race kinds: ``same`` (everyone sends the same answer), ``differ`` (two different answers),
``expiry`` (resumers whose clock is just before the expiry against a sweeper whose clock is at
it) and ``cancel`` (resumers against a canceller).

``broken="version-blind"`` wraps each worker's ledger in a deliberately broken transition that
ignores the version it read (check-then-act), to show the checks bite; ``"consume-blind"``
breaks PostgreSQL's one-statement consume (the resume's usual path there) the same way.

**Any implementation** (:func:`race_adapter`, ``--adapter``, spelled as for ``pausepoint
conform``): the same ``same`` and ``differ`` races through the adapter protocol -- a run that
pauses and then runs an effect, its pause answered by the protocol's ``race_resume`` (which
the implementation carries out as separate resume servers would) -- judged from what the
protocol shows: exactly one winner and the pause ``consumed``, every loser told the pause was
decided (a replay only for the winner's response), the effect after the pause run once.
Expiry and cancel races need a racing sweeper or canceller, which the protocol has not.
"""

from __future__ import annotations

import collections
import multiprocessing
import threading
import time
import traceback
import uuid
from collections.abc import Sequence
from multiprocessing.context import SpawnProcess
from typing import Any, Final, cast

import attrs

from pausepoint.core.canonical import canonical_json, digest
from pausepoint.core.errors import PausepointError
from pausepoint.core.lifecycle import PauseState, Phase
from pausepoint.core.ports import Ledger
from pausepoint.engine.compose import compose
from pausepoint.engine.harness import DEFAULT_INTERACTIONS
from pausepoint.engine.run import PauseBinding
from pausepoint.engine.service import PauseService, ResumeRequest
from pausepoint.engine.tracing import FileTrace
from pausepoint.stores import StoreBundle
from pausepoint_conformance import __version__ as suite_version
from pausepoint_conformance.faults.runrace import BROKEN as RUN_BROKEN
from pausepoint_conformance.faults.runrace import RunRaceReport, run_race
from pausepoint_conformance.faults.testbed import (
    NothingChecked,
    StoreSpec,
    finish,
    load_ring,
    main_on_adapter,
    next_result,
    stop_workers,
)
from pausepoint_conformance.protocol.port import Adapter
from pausepoint_conformance.protocol.wire import (
    PROTOCOL_VERSION,
    EffectCountArgs,
    EffectStep,
    EndStep,
    HelloArgs,
    InterruptStep,
    Ok,
    PauseStateArgs,
    RaceResumeArgs,
    Refused,
    ResetArgs,
    ResumeArgs,
    Skipped,
    StartArgs,
    Step,
)
from pausepoint_conformance.suite.framework import describe

KINDS: Final[tuple[str, ...]] = ("same", "differ", "expiry", "cancel")
TTL_MS: Final = 1_000
SESSION: Final = "session"
SCOPE: Final = "default"
YES: Final[dict[str, Any]] = {"approved": True}
NO: Final[dict[str, Any]] = {"approved": False}


class SetClock:
    """A clock each race sets: every worker process reads its own (servers' clocks differ)."""

    def __init__(self) -> None:
        self.value = 0

    def now(self) -> int:
        return self.value


class VersionBlindLedger:
    """DELIBERATELY BROKEN: ``transition`` checks nothing against the version it was given --
    it overwrites whatever row is current (after a short pause that widens the window)."""

    def __init__(self, inner: Ledger, delay: float = 0.02) -> None:
        self._inner = inner
        self._delay = delay

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def transition(self, interrupt_id: str, expected_version: int, new: PauseState,
                   result: str | None = None) -> bool:
        time.sleep(self._delay)
        while True:
            row = self._inner.get(interrupt_id)
            if row is None:
                return False
            if self._inner.transition(interrupt_id, row.version, new, result):
                return True


def consume_blind(ledger: Ledger) -> Ledger:
    """DELIBERATELY BROKEN: the ledger's one-statement consume (``CONSUME``, PostgreSQL's)
    without its condition on the row's state -- it lands on the token's row whatever state the
    row is in (the parameters are still bound, and ignored)."""
    cls: Any = type(ledger)
    state = cls.CONSUME_STATE
    blind = type(f"ConsumeBlind{cls.__name__}", (cls,), {
        "CONSUME": cls.CONSUME.replace(f"({state})", f"({state} OR TRUE)")})
    return cast(Ledger, blind(cast(Any, ledger)._s))


def make_service(spec: StoreSpec, key_path: str, clock: SetClock,
                 broken: str | None = None) -> tuple[PauseService, StoreBundle]:
    store = spec.open()
    service = compose(store=store, signer=load_ring(key_path), interactions=DEFAULT_INTERACTIONS,
                      clock=clock, ttl_ms=TTL_MS).service
    if broken == "version-blind":
        service.ledger = cast(Ledger, VersionBlindLedger(service.ledger))
    elif broken == "consume-blind":
        service.ledger = consume_blind(service.ledger)
    return service, store


# -- the worker process ----------------------------------------------------------------------


@attrs.frozen
class Job:
    race: int
    interrupt_id: str
    token: str
    role: str  # "resume" | "expire" | "cancel"
    now: int
    response: dict[str, Any] | None = None


def _act(service: PauseService, job: Job) -> tuple[str, str]:
    """Do the job; return (outcome, detail).  Outcomes: won, replay, expired, cancelled,
    refused:<code>, error."""
    try:
        if job.role == "resume":
            out = service.resume(job.token, job.response,
                                 ResumeRequest(session_id=SESSION, scope=SCOPE))
            return ("replay" if out.replayed else "won"), ""
        if job.role == "expire":
            service.expire(job.interrupt_id)
            return "expired", ""
        if job.role == "cancel":
            service.cancel_pause(job.interrupt_id)
            return "cancelled", ""
        return "error", f"unknown role {job.role}"
    except PausepointError as exc:
        return f"refused:{exc.code.value}", exc.message
    except Exception:
        return "error", traceback.format_exc()


def worker(index: int, spec_json: dict[str, Any], key_path: str, broken: str | None,
           jobs: Any, results: Any, barrier: Any, trace: str | None = None) -> None:
    """One racing process: its own store handle and connections, its own clock."""
    clock = SetClock()
    service, store = make_service(StoreSpec.from_json(spec_json), key_path, clock, broken)
    if trace is not None:
        service.trace = FileTrace(clock, trace)
    service.ledger.get("warm-up")  # open the connection before the first race
    results.put(("ready", index, "", ""))
    try:
        while True:
            item = jobs.get()
            if item is None:
                break
            job = Job(**item)
            clock.value = job.now
            try:
                barrier.wait(timeout=60)
            except threading.BrokenBarrierError:
                results.put((job.race, index, "error", "barrier broken"))
                continue
            outcome, detail = _act(service, job)
            results.put((job.race, index, outcome, detail))
    finally:
        store.close()


# -- the orchestrator ------------------------------------------------------------------------


@attrs.define
class KindStats:
    races: int = 0
    winners: int = 0
    decided: collections.Counter[str] = attrs.Factory(collections.Counter)
    outcomes: collections.Counter[str] = attrs.Factory(collections.Counter)


@attrs.define
class RaceReport:
    store: str
    processes: int
    stats: dict[str, KindStats] = attrs.Factory(dict)
    violations: list[str] = attrs.Factory(list)
    broken: str | None = None

    @property
    def races(self) -> int:
        return sum(s.races for s in self.stats.values())

    @property
    def winners(self) -> int:
        return sum(s.winners for s in self.stats.values())

    def lines(self) -> list[str]:
        out = [f"{self.store}: {self.races} races of {self.processes} processes, "
               f"{self.winners} winners, {len(self.violations)} violations"
               + (f" [BROKEN: {self.broken}]" if self.broken else "")]
        for kind, s in self.stats.items():
            out.append(f"  {kind:<7} races {s.races:4d}  winners {s.winners:4d}  decided "
                       f"{dict(s.decided)}  answers {dict(s.outcomes)}")
        return out + [f"  - {v}" for v in self.violations[:20]]


class RacePool:
    """``n`` worker processes on one store, reused for many races."""

    def __init__(self, spec: StoreSpec, key_path: str, n: int, broken: str | None = None,
                 trace: str | None = None):
        if n < 2:
            raise ValueError("a race needs at least two processes")
        self.spec = spec
        self.key_path = key_path
        self.n = n
        self.broken = broken
        ctx = multiprocessing.get_context("spawn")
        self._barrier = ctx.Barrier(n)
        self._results: Any = ctx.Queue()
        self._jobs: list[Any] = [ctx.Queue() for _ in range(n)]
        self._procs: list[SpawnProcess] = [
            ctx.Process(target=worker, args=(i, spec.to_json(), key_path, broken,
                                              self._jobs[i], self._results, self._barrier,
                                              trace),
                        daemon=True)
            for i in range(n)]
        for p in self._procs:
            p.start()
        self.clock = SetClock()
        self.service, self._store = make_service(spec, key_path, self.clock)  # never races
        if trace is not None:
            self.service.trace = FileTrace(self.clock, trace)
        ready = 0
        while ready < n:
            tag, _i, _o, _d = self._get(120)
            if tag == "ready":
                ready += 1
        self._next = 0
        self._prefix = uuid.uuid4().hex[:8]  # several pools may share one store

    def _get(self, timeout: float) -> tuple[Any, int, str, str]:
        item: tuple[Any, int, str, str] = next_result(self._results, self._procs, timeout)
        return item

    def close(self) -> None:
        stop_workers(self._jobs, self._procs)
        self._store.close()

    def __enter__(self) -> RacePool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # one race

    def _new_pause(self, race: int) -> tuple[str, str]:
        self.clock.value = 0
        run = f"{self._prefix}-run-{race}"
        iid = f"{self._prefix}-race-{race}"
        binding = PauseBinding(run_id=run, root_run_id=run, session_id=SESSION, thread_id=run,
                               scope=SCOPE)
        # the orchestrator plays the run's part -- its start and its ask step, which pauses
        # and records the turn -- and reports it in the harness's words
        trace = self.service.trace
        trace.emit("start", run=run, parent=None, script=[
            {"op": "interrupt", "name": "approve", "payload": {}}, {"op": "end"}], ttl=TTL_MS)
        trace.emit("execute", run=run, pauses=[iid])
        rec = self.service.pause(binding=binding, name="approve", payload={"race": race},
                                 interrupt_id=iid, checkpoint_id=f"{run}@0")
        rec = self.service.record_turn(iid, "{}")
        trace.emit("turn", run=run, pause=iid)
        assert rec.state.phase == Phase.RESUMABLE
        return iid, rec.token

    def race(self, kind: str, report: RaceReport) -> None:
        race = self._next
        self._next += 1
        iid, token = self._new_pause(race)
        before = self.service.ledger.get(iid)
        assert before is not None
        jobs: list[Job] = []
        for i in range(self.n):
            if kind in ("expiry", "cancel") and i == 0:
                role = "expire" if kind == "expiry" else "cancel"
                jobs.append(Job(race, iid, token, role, now=TTL_MS))
                continue
            now = TTL_MS - 1 if kind == "expiry" else TTL_MS // 2
            response = NO if kind == "differ" and i % 2 else YES
            jobs.append(Job(race, iid, token, "resume", now=now, response=response))
        for i, job in enumerate(jobs):
            self._jobs[i].put(attrs.asdict(job))
        answers: dict[int, tuple[str, str]] = {}
        while len(answers) < self.n:
            r, i, outcome, detail = self._get(120)
            if r == race:
                answers[i] = (outcome, detail)
        final = self.service.ledger.get(iid)
        assert final is not None
        self._judge(kind, race, jobs, answers, before.version, final.state, final.version,
                    report)

    def _judge(self, kind: str, race: int, jobs: Sequence[Job],
               answers: dict[int, tuple[str, str]], version0: int, final: PauseState,
               version: int, report: RaceReport) -> None:
        stats = report.stats.setdefault(kind, KindStats())
        stats.races += 1
        stats.decided[final.phase.value] += 1
        bad: list[str] = []
        winners = [i for i, (o, _d) in answers.items() if o == "won"]
        stats.winners += len(winners)
        for o, _d in answers.values():
            stats.outcomes[o] += 1
        if version != version0 + 1:
            bad.append(f"the row changed state {version - version0} times, not once")
        phase = final.phase
        if phase == Phase.CONSUMED:
            if len(winners) != 1:
                bad.append(f"{len(winners)} winners of a consumed pause")
        elif winners:
            bad.append(f"{len(winners)} winners, but the pause ends {phase.value}")
        for i, job in enumerate(jobs):
            outcome, detail = answers[i]
            if outcome == "error":
                bad.append(f"process {i} ({job.role}): uncaught {detail.strip()[-300:]}")
                continue
            if i in winners:
                continue
            if phase == Phase.CONSUMED:
                if job.role == "resume":
                    same = digest(canonical_json(job.response)) == final.response_digest
                    want = "replay" if same else "refused:response_conflict"
                else:
                    want = "refused:pause_consumed"
            elif phase == Phase.EXPIRED:
                want = "expired" if job.role == "expire" else "refused:pause_expired"
            elif phase == Phase.CANCELLED:
                want = "cancelled" if job.role == "cancel" else "refused:pause_cancelled"
            else:
                bad.append(f"the race left the pause {phase.value}: nothing decided it")
                break
            if outcome != want:
                bad.append(f"process {i} ({job.role}) got {outcome}, expected {want} "
                           f"(the pause was {phase.value})")
        if kind in ("same", "differ") and phase != Phase.CONSUMED:
            bad.append(f"a resume-only race ended {phase.value}")
        report.violations.extend(f"{kind} race {race}: {b}" for b in bad)


TRACED_KINDS: Final[tuple[str, ...]] = ("same", "differ")
"""The races whose event log the model describes: resumers only (the expiry race's servers
disagree on the time, which the model's one clock cannot say; the cancel race cancels a pause
alone, which the model's run-level cancel does not)."""


def run_races(spec: StoreSpec, key_path: str, *, processes: int = 4, rounds: int = 10,
              kinds: Sequence[str] = KINDS, broken: str | None = None,
              trace: str | None = None) -> RaceReport:
    """``rounds`` races of every kind, ``processes`` racers each, on one store.  With
    ``trace`` (a path), every process appends its events to that NDJSON event log
    (:class:`pausepoint.engine.tracing.FileTrace`), and only :data:`TRACED_KINDS` run."""
    if trace is not None:
        kinds = [k for k in kinds if k in TRACED_KINDS]
    report = RaceReport(spec.kind, processes, broken=broken)
    with RacePool(spec, key_path, processes, broken, trace) as pool:
        for _ in range(rounds):
            for kind in kinds:
                pool.race(kind, report)
    return report


# -- any implementation, through the adapter protocol -------------------------------------------

ADAPTER_KINDS: Final[tuple[str, ...]] = ("same", "differ")
"""The races the protocol can run: resumes only (``race_resume``)."""

RACE_SCRIPT: Final[tuple[Step, ...]] = (
    InterruptStep(name="approve", payload={"q": "race"}), EffectStep(key="after"), EndStep())


class AdapterRaceError(NothingChecked):
    """The adapter could not set a race up (or skips ``race_resume``): nothing was raced."""


def _ok(result: Any, what: str) -> Any:
    if not isinstance(result, Ok):
        raise AdapterRaceError(f"{what}: {describe(result)}")
    return result.data


def race_adapter(adapter: Adapter, *, racers: int = 4, rounds: int = 10,
                 kinds: Sequence[str] = ADAPTER_KINDS, name: str = "adapter") -> RaceReport:
    """``rounds`` races of every kind in ``kinds`` (``same``, ``differ``), ``racers`` resumes
    each, through ``adapter``'s ``race_resume``."""
    if racers < 2:
        raise ValueError("a race needs at least two racers")
    report = RaceReport(name, racers)
    _ok(adapter.hello(HelloArgs(protocol=PROTOCOL_VERSION, suite=f"race {suite_version}")),
        "hello")
    _ok(adapter.reset(ResetArgs(ttl_ms=TTL_MS * 3600)), "reset")
    race = 0
    for _ in range(rounds):
        for kind in kinds:
            run_id = f"race-{race}"
            run = _ok(adapter.start(StartArgs(run_id=run_id, session_id=SESSION, scope=SCOPE,
                                              script=list(RACE_SCRIPT))), f"start {run_id}")
            if len(run.pauses) != 1 or not run.pauses[0].resumable:
                raise AdapterRaceError(f"start {run_id}: not one resumable pause: {run}")
            pause = run.pauses[0]
            responses = [NO if kind == "differ" and i % 2 else YES for i in range(racers)]
            requests = [ResumeArgs(token=pause.token, response=r, run_id=run_id,
                                   session_id=SESSION, scope=SCOPE) for r in responses]
            data = _ok(adapter.race_resume(RaceResumeArgs(requests=requests)), "race_resume")
            phase = _ok(adapter.pause_state(PauseStateArgs(interrupt_id=pause.interrupt_id)),
                        "pause_state").phase
            count = _ok(adapter.effect_count(EffectCountArgs(run_id=run_id, key="after")),
                        "effect_count").count
            _judge_protocol(kind, race, responses, list(data.results), phase, count, report)
            race += 1
    return report


def _outcome(result: Any) -> str:
    if isinstance(result, Ok):
        return "replay" if result.data.replayed else "won"
    if isinstance(result, Refused):
        return f"refused:{result.code}"
    return "skipped" if isinstance(result, Skipped) else "error"


def _judge_protocol(kind: str, race: int, responses: Sequence[Any], results: Sequence[Any],
                    phase: str, count: int, report: RaceReport) -> None:
    stats = report.stats.setdefault(kind, KindStats())
    stats.races += 1
    stats.decided[phase] += 1
    outcomes = [_outcome(r) for r in results]
    stats.outcomes.update(outcomes)
    winners = [i for i, o in enumerate(outcomes) if o == "won"]
    stats.winners += len(winners)
    bad: list[str] = []
    if len(results) != len(responses):
        bad.append(f"{len(results)} results for {len(responses)} racing resumes")
    if len(winners) != 1:
        bad.append(f"{len(winners)} winners of a consumed pause" if phase == "consumed"
                   else f"{len(winners)} winners, but the pause ends {phase}")
    if phase != "consumed":
        bad.append(f"a resume-only race ended {phase}")
    won = responses[winners[0]] if len(winners) == 1 else None
    for i, (outcome, result) in enumerate(zip(outcomes, results, strict=False)):
        if i in winners:
            continue
        decided = ("refused:pause_consumed", "refused:response_conflict")
        if outcome == "replay" and responses[i] != won:
            bad.append(f"racer {i} sent another response and was told it won (a replay)")
        elif outcome != "replay" and outcome not in decided:
            bad.append(f"racer {i} got {outcome}, not a replay or a refusal naming the "
                       f"decision: {str(describe(result))[:300]}")
    if count != 1:
        bad.append(f"the effect after the pause ran {count} times, not once")
    report.violations.extend(f"{kind} race {race}: {b}" for b in bad)


def _run_level(spec: StoreSpec, key: str, args: Any) -> RunRaceReport:
    from pausepoint_conformance.cli.common import err_console, progress_bar

    n, m, k = (2 if args.restarters is None else args.restarters,
               2 if args.resumers is None else args.resumers,
               1 if args.cancellers is None else args.cancellers)
    with progress_bar(err_console()) as bar:
        task = bar.add_task(f"{spec.kind} run race", total=args.rounds)
        return run_race(spec, key, restarters=n, resumers=m, cancellers=k,
                        rounds=args.rounds, broken=args.broken, seed=args.seed,
                        progress=lambda done: bar.update(task, completed=done))


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m pausepoint_conformance.faults.race --store sqlite|postgres [--processes N]
    [--rounds R] [--broken version-blind]``: run the races, print the counts;
    ``--restarters N --resumers M --cancellers K [--broken unfenced|step-blind]``: the
    run-level race (:mod:`~pausepoint_conformance.faults.runrace`) instead; ``--adapter
    SPEC`` races any implementation through the adapter protocol instead."""
    import argparse
    import os
    import sys
    import tempfile

    from pausepoint_conformance.faults.testbed import drop, fresh_postgres, fresh_sqlite, save_key

    parser = argparse.ArgumentParser(prog="python -m pausepoint_conformance.faults.race")
    parser.add_argument("--store", choices=("sqlite", "postgres"), default="sqlite")
    parser.add_argument("--processes", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=25)
    parser.add_argument("--broken", choices=("version-blind", "consume-blind", *RUN_BROKEN),
                        help="a deliberately broken variant, to see the checks bite "
                             "(version-blind: the pause race; consume-blind: the pause race "
                             "through PostgreSQL's one-statement consume; unfenced, "
                             "step-blind: the run race)")
    run_level = parser.add_argument_group(
        "the run-level race (any of these selects it): restarters, resumers and cancellers "
        "on parent and child runs, see faults/runrace.py")
    run_level.add_argument("--restarters", type=int, metavar="N")
    run_level.add_argument("--resumers", type=int, metavar="M")
    run_level.add_argument("--cancellers", type=int, metavar="K")
    run_level.add_argument("--seed", type=int, default=0)
    parser.add_argument("--trace", metavar="FILE",
                        help="write every process's events to this NDJSON event log (the "
                             "same and differ races only) and validate it against the model")
    parser.add_argument("--adapter", metavar="SPEC",
                        help="race this implementation through the adapter protocol, spelled "
                             "as for `pausepoint conform --adapter` (reference, "
                             'cmd:"<command line>", MODULE:CALLABLE); --processes racers')
    args = parser.parse_args(argv)
    if args.broken == "consume-blind" and args.store != "postgres":
        parser.error("--broken consume-blind breaks PostgreSQL's one-statement consume: "
                     "--store postgres")
    if args.adapter is not None:
        return main_on_adapter(args.adapter, lambda adapter, name: race_adapter(
            adapter, racers=args.processes, rounds=args.rounds, name=name))
    with tempfile.TemporaryDirectory(prefix="pp-race-") as tmp:
        key = os.path.join(tmp, "key.ed25519")
        save_key(key)
        if args.store == "postgres":
            dsn = os.environ.get("PAUSEPOINT_PG_DSN", "")
            if not dsn:
                print("PAUSEPOINT_PG_DSN is not set", file=sys.stderr)
                return 2
            spec = fresh_postgres(dsn, "pp_race")
        else:
            spec = fresh_sqlite(tmp, "race.db")
        t0 = time.monotonic()
        if (args.restarters, args.resumers, args.cancellers) != (None, None, None) \
                or args.broken in RUN_BROKEN:
            try:
                return finish(_run_level(spec, key, args), t0)
            finally:
                drop(spec)
        try:
            report = run_races(spec, key, processes=args.processes, rounds=args.rounds,
                               broken=args.broken, trace=args.trace)
        finally:
            drop(spec)
        status = finish(report, t0)
        if args.trace:
            from pausepoint_conformance.modelcheck.impltrace import judge_events

            verdict = judge_events(args.trace)
            print(f"trace {args.trace}: {verdict[:300]}")
            status = status or int(verdict != "valid")
        return status


if __name__ == "__main__":
    raise SystemExit(main())
