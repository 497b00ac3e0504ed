"""The run level of the system model: owned runs driven by several processes on one store.

This is the executable semantics of ``tla/PausepointRuns.tla`` (kept in lockstep with it like
:mod:`pausepoint.system.model` with ``tla/Pausepoint.tla``).  Where that model follows one pause
point through its lifecycle, this one follows the *runs* around them, as
:mod:`pausepoint.engine.embed` drives them: servers start runs, answer their questions and
continue them, and cancel them; restarters take over runs whose driver stopped, and finish the
cancel of a run whose canceller stopped.  Whoever drives a
run owns it under a lease and an epoch, and every run write goes through the run table
(:func:`pausepoint.core.runs.step`) with the writer's epoch (``run.ownership.fencing``); the
effect journal's start is a conditional insert under the epoch.  Processes crash (their local
state is lost, their leases run out), a store write fails (the driver releases the run), a stale
or repeated continuation arrives late, a cancel races an effect in flight, and a child run's
start races its parent's cancel.

Values are written as the spec writes them: runs, processes and script steps are numbered from
1, 0 is "none", run statuses are :class:`pausepoint.core.runs.RunStatus` values (``"none"``
before the run exists).  Pure: states are frozen values, actions are functions
``(RunConfig, World) -> tuple[World, ...]``.

Modelled abstractions (the spec says the same): a pause's insert, its turn record and the
run's suspend are one fenced write (the pause id is deterministic, so a stale driver's insert
is the same pause); an effect's progress write and its journal's finish are one write; a lease
runs out only while its owner is not inside an effect (an effect runs within its lease -- a
lease that can run out between an effect's journal start and its application cannot keep it
at most once without the effect itself checking the epoch); a cancel reaches one level of
children.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Final, TypeVar

import attrs

from pausepoint.core import runs as rt

T = TypeVar("T")

# -- seeded design bugs (issue 8's six failures) ----------------------------------------------

SEEDED_BUGS: Final[dict[str, tuple[str, str]]] = {
    "stale_continuation": (
        "RunContinuesOnlyWhenAnswered",
        ("a continuation does not check that its pause belongs to the run's current step "
         "(approval bypass)")),
    "journal_upsert": (
        "RunEffectsAtMostOnce",
        ("the effect journal's start is a read then an upsert, not a conditional insert under "
         "the epoch (doubled effects beside a live driver)")),
    "unfenced_progress": (
        "RunStatusForward",
        ("the driver's write after an effect is unconditional (a cancel in flight is undone)")),
    "child_start_racy": (
        "ChildCancelledWithParent",
        ("a child's start reads its parent's status, then creates the run (it escapes the "
         "parent's cancel)")),
    "recovery_duplicates": (
        "OneRecoveryPausePerEffect",
        ("a restart opens a new recovery pause beside a live one (orphan after a crash "
         "between opening and marking)")),
    "recover_newer": (
        "NoRecoveryBesideLiveEffect",
        ("a driver opens a recovery pause for any started effect, also a newer owner's "
         "in-flight one")),
    "store_failure_errors": (
        "RunningRunMovesOn",
        ("a store failure ends the run in error instead of releasing it (dead run)")),
}
"""Design bugs the run level can be built with: each name, the property that must catch it and
what the bug is (the six failures of issue 8, one model each in ``tla/manifest.json``)."""

NONE: Final = "none"
LIVE_RECOVERY: Final[frozenset[str]] = frozenset({"paused", "unknown", "resumable"})
SETTLED: Final[frozenset[str]] = frozenset({"paused", "done", "cancelling", "cancelled"})
DRIVING: Final[frozenset[str]] = frozenset(
    {"drive", "checked", "in_effect", "applied", "recovering"})


@attrs.frozen
class RunConfig:
    """Constants: each run's script (step kinds ``"effect"``, ``"ask"``, ``"end"``), each run's
    parent (0: top level), the servers (processes ``1..servers``) and restarters (the next
    ``restarters`` processes), the budgets of crashes, store failures and stalls (a live
    owner whose lease runs out), the seeded bugs."""

    scripts: tuple[tuple[str, ...], ...]
    parents: tuple[int, ...]
    servers: int = 2
    restarters: int = 1
    max_crashes: int = 1
    max_store_fails: int = 0
    max_stalls: int = 1
    seeded_bugs: frozenset[str] = frozenset()

    @property
    def runs(self) -> range:
        return range(1, len(self.scripts) + 1)

    @property
    def procs(self) -> range:
        return range(1, self.servers + self.restarters + 1)

    def kind(self, r: int, j: int) -> str:
        return self.scripts[r - 1][j - 1]

    def bug(self, name: str) -> bool:
        return name in self.seeded_bugs


@attrs.frozen(cache_hash=True)
class Entry:
    """An effect's journal entry: ``none``, ``started`` or ``finished``, with the epoch that
    started it."""

    st: str = NONE
    ep: int = 0


@attrs.frozen(cache_hash=True)
class Run:
    """A run's stored row (status, epoch, owner, whether the owner's lease ran out, the step to
    go on from), its effect journal, its pauses (``asks``: each ask step's pause; ``recov``:
    each effect step's recovery pauses), and two history variables: ``counts`` (how often each
    effect was applied in the world) and ``late`` (an effect applied that was journalled
    started after a cancel of the run committed)."""

    status: str = NONE
    epoch: int = 0
    owner: int = 0
    expired: bool = False
    step: int = 1
    journal: tuple[Entry, ...] = ()
    counts: tuple[int, ...] = ()
    asks: tuple[str, ...] = ()
    recov: tuple[tuple[str, ...], ...] = ()
    late: bool = False


@attrs.frozen(cache_hash=True)
class Proc:
    """A process's volatile state: what it is doing (``phase``), to which run, under which
    epoch, at which step; ``late``: its effect's journal start came after a cancel."""

    phase: str = "idle"
    run: int = 0
    epoch: int = 0
    pc: int = 0
    late: bool = False


IDLE: Final[Proc] = Proc()


@attrs.frozen(cache_hash=True)
class World:
    store: tuple[Run, ...]
    procs: tuple[Proc, ...]
    crashes: int = 0
    storefails: int = 0
    stalls: int = 0


def initial(cfg: RunConfig) -> World:
    store = tuple(Run(journal=tuple(Entry() for _ in s), counts=tuple(0 for _ in s),
                      asks=tuple(NONE for _ in s), recov=tuple(() for _ in s))
                  for s in cfg.scripts)
    return World(store=store, procs=tuple(IDLE for _ in cfg.procs))


# -- helpers ---------------------------------------------------------------------------------


def _run(w: World, r: int) -> Run:
    return w.store[r - 1]


def _proc(w: World, p: int) -> Proc:
    return w.procs[p - 1]


def _set_run(w: World, r: int, run: Run) -> World:
    return attrs.evolve(w, store=w.store[:r - 1] + (run,) + w.store[r:])


def _set_proc(w: World, p: int, proc: Proc) -> World:
    return attrs.evolve(w, procs=w.procs[:p - 1] + (proc,) + w.procs[p:])


def _at(xs: tuple[T, ...], j: int, x: T) -> tuple[T, ...]:
    return xs[:j - 1] + (x,) + xs[j:]


def _table(run: Run, event: rt.Event) -> Run | None:
    """The run table's answer to ``event`` on the stored row (None: refused).  Ownership maps
    onto the table's: owner ``p`` is the name ``"p<n>"``, a lease that ran out has
    ``lease_until`` 0 and the model's clock stands at 0."""
    state = None if run.status == NONE else rt.RunState(
        rt.RunStatus(run.status), run.epoch, f"p{run.owner}" if run.owner else "",
        0 if run.expired else 1)
    out = rt.step(state, event)
    if isinstance(out, rt.Refusal):
        return None
    s = out.state
    owner = int(s.owner[1:]) if s.owner else 0
    return attrs.evolve(run, status=s.status.value, epoch=s.epoch, owner=owner,
                        expired=s.status == rt.RunStatus.RUNNING and owner != 0
                        and s.lease_until == 0)


def _take(p: int) -> tuple[str, int, int]:
    return f"p{p}", 0, 1  # owner, now, lease_ms


def _lost(w: World, p: int) -> tuple[World, ...]:
    """The driver lost the run (a refused, fenced write): it stops, writing nothing."""
    return (_set_proc(w, p, IDLE),)


# -- starting a run --------------------------------------------------------------------------


def start_run(cfg: RunConfig, w: World, p: int, r: int) -> tuple[World, ...]:
    """StartRun: server p creates run r and owns it (epoch 1) -- a child atomically with the
    check that its parent is not cancelling (run.child.cancelling-parent)."""
    if p > cfg.servers or _proc(w, p) != IDLE or _run(w, r).status != NONE:
        return ()
    par = cfg.parents[r - 1]
    if par and _run(w, par).status == NONE:
        return ()
    parent = rt.RunStatus(_run(w, par).status) if par else None
    if par and cfg.bug("child_start_racy"):  # read the parent now, create later (StartCreate)
        if isinstance(rt.step(None, rt.Start(*_take(p), parent=parent)), rt.Refusal):
            return ()
        return (_set_proc(w, p, Proc("starting", r)),)
    new = _table(_run(w, r), rt.Start(*_take(p), parent=parent))
    if new is None:
        return ()
    return (_set_proc(_set_run(w, r, new), p, Proc("drive", r, new.epoch, 1)),)


def start_create(cfg: RunConfig, w: World, p: int) -> tuple[World, ...]:
    """StartCreate (seeded bug child_start_racy only): create the run read earlier."""
    proc = _proc(w, p)
    if proc.phase != "starting":
        return ()
    new = _table(_run(w, proc.run), rt.Start(*_take(p)))
    if new is None:
        return _lost(w, p)
    return (_set_proc(_set_run(w, proc.run, new), p, Proc("drive", proc.run, new.epoch, 1)),)


# -- driving: the owner's steps, each write under its epoch ----------------------------------


def drive(cfg: RunConfig, w: World, p: int) -> tuple[World, ...]:
    """Drive: the driver p takes its run's next step.  ``end``: finish (fenced).  ``ask``:
    open the step's pause and suspend (one fenced write; the run is released).  ``effect``:
    journalled finished -> move past it (fenced); not journalled -> the journal's start, a
    conditional insert under the epoch and a live lease (run.ownership.fencing: a driver whose
    lease ran out starts no effect); journalled started by an older
    epoch -> its driver died inside it: open a recovery pause (reusing a live one) under the
    epoch (effect.unknown-outcome); started by this or a newer epoch -> the run was lost."""
    proc = _proc(w, p)
    if proc.phase != "drive":
        return ()
    r, j = proc.run, proc.pc
    run = _run(w, r)
    kind = cfg.kind(r, j)
    if kind == "end":
        new = _table(run, rt.Finish(proc.epoch))
        return _lost(w, p) if new is None else (_set_proc(_set_run(w, r, new), p, IDLE),)
    if kind == "ask":
        new = _table(run, rt.Suspend(proc.epoch))
        if new is None:
            return _lost(w, p)
        asks = run.asks if run.asks[j - 1] != NONE else _at(run.asks, j, "live")
        new = attrs.evolve(new, asks=asks, step=j)
        return (_set_proc(_set_run(w, r, new), p, IDLE),)
    entry = run.journal[j - 1]
    if entry.st == "finished":
        new = _table(run, rt.Progress(proc.epoch, 0, 1))
        if new is None:
            return _lost(w, p)
        return (_set_proc(_set_run(w, r, attrs.evolve(new, step=j + 1)), p,
                          attrs.evolve(proc, pc=j + 1)),)
    if entry.st == NONE:
        if cfg.bug("journal_upsert"):  # read the journal now, upsert it later (JournalUpsert)
            return (_set_proc(w, p, attrs.evolve(proc, phase="checked")),)
        if run.epoch != proc.epoch or run.status != "running" or run.expired:
            return _lost(w, p)
        journal = _at(run.journal, j, Entry("started", proc.epoch))
        return (_set_proc(_set_run(w, r, attrs.evolve(run, journal=journal)), p,
                          attrs.evolve(proc, phase="in_effect", late=False)),)
    # started: by a driver that died inside it, or by one that still owns the run
    if not cfg.bug("recover_newer") and (
            entry.ep >= proc.epoch or run.epoch != proc.epoch or run.status != "running"):
        return _lost(w, p)
    live = [x for x in run.recov[j - 1] if x in LIVE_RECOVERY]
    recov = run.recov[j - 1]
    if not live or cfg.bug("recovery_duplicates"):
        recov = recov + ("paused",)
    new = attrs.evolve(run, recov=_at(run.recov, j, recov))
    return (_set_proc(_set_run(w, r, new), p, attrs.evolve(proc, phase="recovering")),)


def journal_upsert(cfg: RunConfig, w: World, p: int) -> tuple[World, ...]:
    """JournalUpsert (seeded bug journal_upsert only): the journal's start written
    unconditionally, after the read that found it empty."""
    proc = _proc(w, p)
    if proc.phase != "checked":
        return ()
    run = _run(w, proc.run)
    journal = _at(run.journal, proc.pc, Entry("started", proc.epoch))
    late = run.status in rt.CANCELLED_OR_CANCELLING
    return (_set_proc(_set_run(w, proc.run, attrs.evolve(run, journal=journal)), p,
                      attrs.evolve(proc, phase="in_effect", late=late)),)


def apply_effect(cfg: RunConfig, w: World, p: int) -> tuple[World, ...]:
    """ApplyEffect: the world changes (the effect's count goes up by one)."""
    proc = _proc(w, p)
    if proc.phase != "in_effect":
        return ()
    run = _run(w, proc.run)
    counts = _at(run.counts, proc.pc, run.counts[proc.pc - 1] + 1)
    new = attrs.evolve(run, counts=counts, late=run.late or proc.late)
    return (_set_proc(_set_run(w, proc.run, new), p, attrs.evolve(proc, phase="applied")),)


def finish_effect(cfg: RunConfig, w: World, p: int) -> tuple[World, ...]:
    """FinishEffect: record the progress (fenced, renewing the lease) and journal the effect
    finished; a driver that lost the run writes nothing (its journal entry stays started)."""
    proc = _proc(w, p)
    if proc.phase != "applied":
        return ()
    r, j = proc.run, proc.pc
    run = _run(w, r)
    if cfg.bug("unfenced_progress"):  # the whole row written back, as the driver knows it
        new: Run | None = attrs.evolve(run, status="running", epoch=proc.epoch, owner=p,
                                       expired=False)
    else:
        new = _table(run, rt.Progress(proc.epoch, 0, 1))
    if new is None:
        return _lost(w, p)
    journal = _at(run.journal, j, Entry("finished", run.journal[j - 1].ep))
    new = attrs.evolve(new, journal=journal, step=j + 1)
    return (_set_proc(_set_run(w, r, new), p, Proc("drive", r, proc.epoch, j + 1)),)


def mark_recovery(cfg: RunConfig, w: World, p: int) -> tuple[World, ...]:
    """MarkRecovery: the recovery pause just opened (or found live) is marked unknown_outcome
    with its turn recorded, and the run suspends on it (fenced)."""
    proc = _proc(w, p)
    if proc.phase != "recovering":
        return ()
    r, j = proc.run, proc.pc
    run = _run(w, r)
    new = _table(run, rt.Suspend(proc.epoch))
    if new is None:
        return _lost(w, p)
    rec = run.recov[j - 1]
    live = [i for i, x in enumerate(rec) if x in LIVE_RECOVERY]
    if not live:
        return _lost(w, p)
    k = live[-1]
    rec = rec[:k] + ("unknown" if rec[k] == "paused" else rec[k],) + rec[k + 1:]
    new = attrs.evolve(new, recov=_at(run.recov, j, rec), step=j)
    return (_set_proc(_set_run(w, r, new), p, IDLE),)


def store_fail(cfg: RunConfig, w: World, p: int) -> tuple[World, ...]:
    """StoreFail: the driver's next write fails (a brief store failure); it releases the run,
    which stays running for a restart (run.store-failure.recoverable)."""
    proc = _proc(w, p)
    if proc.phase != "drive" or w.storefails >= cfg.max_store_fails:
        return ()
    w = attrs.evolve(w, storefails=w.storefails + 1)
    run = _run(w, proc.run)
    if cfg.bug("store_failure_errors"):
        new = _table(run, rt.Fail(proc.epoch))
    else:
        new = _table(run, rt.Release(proc.epoch))
    if new is None:
        return _lost(w, p)
    return (_set_proc(_set_run(w, proc.run, new), p, IDLE),)


# -- restart, leases, crashes ----------------------------------------------------------------


def recover(cfg: RunConfig, w: World, p: int, r: int) -> tuple[World, ...]:
    """Recover: restarter p takes over a running run whose lease is free -- released, run out,
    or its own from before its crash (run.ownership.lease, run.restart.concurrent) -- or a
    cancelling run whose canceller stopped (its lease runs out once it is not cancelling),
    to finish the cancel under a new epoch."""
    if p <= cfg.servers or _proc(w, p) != IDLE:
        return ()
    run = _run(w, r)
    if run.status == "cancelling":
        if _proc(w, run.owner).phase.startswith("cancel"):
            return ()  # the canceller is at work: its lease is live
        new = _table(attrs.evolve(run, expired=True), rt.Recover(*_take(p)))
        assert new is not None
        return (_set_proc(_set_run(w, r, new), p, Proc("cancel", r, new.epoch)),)
    new = _table(run, rt.Recover(*_take(p)))
    if new is None:
        return ()
    return (_set_proc(_set_run(w, r, new), p, Proc("drive", r, new.epoch, run.step)),)


def lease_expire(cfg: RunConfig, w: World, r: int) -> tuple[World, ...]:
    """LeaseExpire: the owner's lease runs out -- it died (or lost the run), or, within the
    stall budget, it stalls between writes while alive (never inside an effect: an effect
    runs within its lease)."""
    run = _run(w, r)
    if run.status != "running" or run.owner == 0 or run.expired:
        return ()
    own = _proc(w, run.owner)
    alive = own.run == r and own.epoch == run.epoch and own.phase in DRIVING
    if alive and (own.phase == "in_effect" or w.stalls >= cfg.max_stalls):
        return ()
    return (attrs.evolve(_set_run(w, r, attrs.evolve(run, expired=True)),
                         stalls=w.stalls + alive),)


def crash(cfg: RunConfig, w: World, p: int) -> tuple[World, ...]:
    """Crash: process p dies and comes back under its name with nothing in memory; what it
    owned stays owned until its lease runs out (or it takes it over again itself)."""
    if w.crashes >= cfg.max_crashes or _proc(w, p) == IDLE:
        return ()
    return (attrs.evolve(_set_proc(w, p, IDLE), crashes=w.crashes + 1),)


# -- answering, continuing -------------------------------------------------------------------


def answer(cfg: RunConfig, w: World, p: int, r: int, j: int) -> tuple[World, ...]:
    """Answer: server p consumes the live pause of ask step j (resume.consume.single-winner),
    to continue the run from it."""
    run = _run(w, r)
    if p > cfg.servers or _proc(w, p) != IDLE or run.asks[j - 1] != "live":
        return ()
    new = attrs.evolve(run, asks=_at(run.asks, j, "consumed"))
    return (_set_proc(_set_run(w, r, new), p, Proc("cont", r, 0, j)),)


def redeliver(cfg: RunConfig, w: World, p: int, r: int, j: int) -> tuple[World, ...]:
    """Redeliver: a continuation of an answered pause arrives again or late (a retried
    request, a slow server)."""
    run = _run(w, r)
    if p > cfg.servers or _proc(w, p) != IDLE or run.asks[j - 1] != "consumed":
        return ()
    return (_set_proc(w, p, Proc("cont", r, 0, j)),)


def reconcile(cfg: RunConfig, w: World, r: int, j: int, k: int) -> tuple[World, ...]:
    """Reconcile: an operator settles the effect in doubt truthfully (applied -> journalled
    finished; not applied -> journal cleared) and the recovery pause becomes resumable."""
    run = _run(w, r)
    if k > len(run.recov[j - 1]) or run.recov[j - 1][k - 1] != "unknown":
        return ()
    entry = (Entry("finished", run.journal[j - 1].ep) if run.counts[j - 1] > 0 else Entry())
    rec = _at(run.recov[j - 1], k, "resumable")
    new = attrs.evolve(run, journal=_at(run.journal, j, entry), recov=_at(run.recov, j, rec))
    return (_set_run(w, r, new),)


def answer_recovery(cfg: RunConfig, w: World, p: int, r: int, j: int,
                    k: int) -> tuple[World, ...]:
    """AnswerRecovery: server p consumes a reconciled recovery pause, to continue the run at
    the effect's step."""
    run = _run(w, r)
    if (p > cfg.servers or _proc(w, p) != IDLE or k > len(run.recov[j - 1])
            or run.recov[j - 1][k - 1] != "resumable"):
        return ()
    rec = _at(run.recov[j - 1], k, "consumed")
    return (_set_proc(_set_run(w, r, attrs.evolve(run, recov=_at(run.recov, j, rec))), p,
                      Proc("cont", r, 0, j)),)


def continue_run(cfg: RunConfig, w: World, p: int) -> tuple[World, ...]:
    """Continue: the continuation takes the paused run over, only if its pause belongs to
    the step the run is paused at (run.continuation.belongs-to-step); else it is dropped."""
    proc = _proc(w, p)
    if proc.phase != "cont":
        return ()
    r, j = proc.run, proc.pc
    run = _run(w, r)
    at = run.step if cfg.bug("stale_continuation") else j
    new = _table(run, rt.Continue(*_take(p), current_step=run.step == at))
    if new is None:
        return _lost(w, p)
    nxt = at + 1 if cfg.kind(r, at) == "ask" else at
    return (_set_proc(_set_run(w, r, attrs.evolve(new, step=nxt)), p,
                      Proc("drive", r, new.epoch, nxt)),)


# -- cancel ----------------------------------------------------------------------------------


def _cancel_pauses(run: Run) -> Run:
    return attrs.evolve(
        run, asks=tuple("cancelled" if a == "live" else a for a in run.asks),
        recov=tuple(tuple("cancelled" if x in LIVE_RECOVERY else x for x in rec)
                    for rec in run.recov))


def cancel_begin(cfg: RunConfig, w: World, p: int, r: int) -> tuple[World, ...]:
    """CancelBegin: server p takes the run over for its cancel (a new epoch: the driver is
    fenced, run.cancel.in-flight); a run that ended is refused (run.cancel.finished)."""
    run = _run(w, r)
    if p > cfg.servers or _proc(w, p) != IDLE:
        return ()
    if run.status == "cancelling" and _proc(w, run.owner).phase.startswith("cancel"):
        return ()  # a cancel is retried once its canceller stopped
    new = _table(run, rt.Cancel(f"p{p}"))
    if new is None or new.status != "cancelling":
        return ()
    return (_set_proc(_set_run(w, r, new), p, Proc("cancel", r, new.epoch)),)


def cancel_scan(cfg: RunConfig, w: World, p: int) -> tuple[World, ...]:
    """CancelScan: the canceller cancels the run's live pauses and takes over its started
    children for their cancel (cancel.propagates)."""
    proc = _proc(w, p)
    if proc.phase != "cancel":
        return ()
    r = proc.run
    if _run(w, r).epoch != proc.epoch:
        return _lost(w, p)
    w = _set_run(w, r, _cancel_pauses(_run(w, r)))
    for c in cfg.runs:
        if cfg.parents[c - 1] == r:
            child = _table(_run(w, c), rt.Cancel(f"p{p}"))
            if child is not None and child.status == "cancelling":
                w = _set_run(w, c, _cancel_pauses(child))
    return (_set_proc(w, p, attrs.evolve(proc, phase="cancel_scanned")),)


def cancel_finish(cfg: RunConfig, w: World, p: int) -> tuple[World, ...]:
    """CancelFinish: the canceller ends the run and the children it holds cancelled (each
    write under its epoch)."""
    proc = _proc(w, p)
    if proc.phase != "cancel_scanned":
        return ()
    r = proc.run
    new = _table(_run(w, r), rt.Cancelled(proc.epoch))
    if new is None:
        return _lost(w, p)
    w = _set_run(w, r, new)
    for c in cfg.runs:
        child = _run(w, c)
        if cfg.parents[c - 1] == r and child.owner == p and child.status == "cancelling":
            done = _table(child, rt.Cancelled(child.epoch))
            assert done is not None
            w = _set_run(w, c, done)
    return (_set_proc(w, p, IDLE),)


# -- the next-state relation -----------------------------------------------------------------


@attrs.frozen
class Labelled:
    action: str
    args: tuple[object, ...]
    state: World


_PROC_STEPS: Final = (
    ("StartCreate", start_create), ("Drive", drive), ("JournalUpsert", journal_upsert),
    ("ApplyEffect", apply_effect), ("FinishEffect", finish_effect),
    ("MarkRecovery", mark_recovery), ("Continue", continue_run), ("CancelScan", cancel_scan),
    ("CancelFinish", cancel_finish), ("StoreFail", store_fail), ("Crash", crash))


def successors(cfg: RunConfig, w: World) -> Iterator[Labelled]:
    """Every enabled action instance and its successor states, named as in the spec."""
    for p in cfg.procs:
        for name, fn in _PROC_STEPS:
            for t in fn(cfg, w, p):
                yield Labelled(name, (p,), t)
        for r in cfg.runs:
            for name2, fn2 in (("StartRun", start_run), ("Recover", recover),
                               ("CancelBegin", cancel_begin)):
                for t in fn2(cfg, w, p, r):
                    yield Labelled(name2, (p, r), t)
            for j in range(1, len(cfg.scripts[r - 1]) + 1):
                for name3, fn3 in (("Answer", answer), ("Redeliver", redeliver)):
                    for t in fn3(cfg, w, p, r, j):
                        yield Labelled(name3, (p, r, j), t)
                for k in range(1, len(_run(w, r).recov[j - 1]) + 1):
                    for t in answer_recovery(cfg, w, p, r, j, k):
                        yield Labelled("AnswerRecovery", (p, r, j, k), t)
    for r in cfg.runs:
        for t in lease_expire(cfg, w, r):
            yield Labelled("LeaseExpire", (r,), t)
        for j in range(1, len(cfg.scripts[r - 1]) + 1):
            for k in range(1, len(_run(w, r).recov[j - 1]) + 1):
                for t in reconcile(cfg, w, r, j, k):
                    yield Labelled("Reconcile", (r, j, k), t)


# -- invariants ------------------------------------------------------------------------------


def RunTypeOK(cfg: RunConfig, w: World) -> bool:
    """run.lifecycle.table: every run is in one status of the run table (or not yet
    created) and only a running run has a lease that can run out."""
    ok = {NONE, *(s.value for s in rt.RunStatus)}
    return (all(run.status in ok and (not run.expired or run.status == "running")
                for run in w.store)
            and w.crashes <= cfg.max_crashes and w.storefails <= cfg.max_store_fails
            and w.stalls <= cfg.max_stalls)


def RunEffectsAtMostOnce(cfg: RunConfig, w: World) -> bool:
    """effect.at-most-once, run.restart.concurrent, run.ownership.fencing: no effect is
    applied twice, whatever servers and restarters drive the run."""
    return all(c <= 1 for run in w.store for c in run.counts)


def RunContinuesOnlyWhenAnswered(cfg: RunConfig, w: World) -> bool:
    """run.continuation.belongs-to-step, resume.continuation.recorded-turn: neither the stored
    run nor any driver is past an ask whose pause was not consumed."""
    for r in cfg.runs:
        run = _run(w, r)
        past = [run.step] + [x.pc for x in w.procs if x.run == r and x.phase in DRIVING]
        for j, kind in enumerate(cfg.scripts[r - 1], start=1):
            if kind == "ask" and run.asks[j - 1] != "consumed" and any(x > j for x in past):
                return False
    return True


def NoEffectAfterCancel(cfg: RunConfig, w: World) -> bool:
    """run.cancel.in-flight: no effect is applied that was journalled started after a cancel
    of its run committed (one started before may finish)."""
    return not any(run.late for run in w.store)


def OneRecoveryPausePerEffect(cfg: RunConfig, w: World) -> bool:
    """run.restart.concurrent, effect.unknown-outcome: at most one live recovery pause per
    effect in doubt, across crashes and concurrent restarts."""
    return all(sum(x in LIVE_RECOVERY for x in rec) <= 1 for run in w.store
               for rec in run.recov)


def NoRecoveryBesideLiveEffect(cfg: RunConfig, w: World) -> bool:
    """run.ownership.fencing, effect.unknown-outcome: no live recovery pause for an effect
    whose driver is alive inside it (only a dead driver's effect is in doubt)."""
    return not any(x.phase == "in_effect" and any(
        y in LIVE_RECOVERY for y in _run(w, x.run).recov[x.pc - 1]) for x in w.procs)


def ChildCancelledWithParent(cfg: RunConfig, w: World) -> bool:
    """run.child.cancelling-parent, cancel.propagates: a cancelled run has no child that
    runs, pauses or ended in error -- every child is not started, done, or cancelled."""
    return all(_run(w, c).status in (NONE, "done", "cancelling", "cancelled")
               for c in cfg.runs if cfg.parents[c - 1]
               and _run(w, cfg.parents[c - 1]).status == "cancelled")


RunInvariant = Callable[[RunConfig, World], bool]

INVARIANTS: Final[dict[str, RunInvariant]] = {f.__name__: f for f in (
    RunTypeOK, RunEffectsAtMostOnce, RunContinuesOnlyWhenAnswered, NoEffectAfterCancel,
    OneRecoveryPausePerEffect, NoRecoveryBesideLiveEffect, ChildCancelledWithParent)}


# -- action properties -----------------------------------------------------------------------


def RunStatusForward(cfg: RunConfig, before: World, after: World) -> bool:
    """run.cancel.in-flight, run.cancel.finished, run.events.single-terminal: a run that
    ended stays as it ended, and a cancelling run only becomes cancelled."""
    for rb, ra in zip(before.store, after.store, strict=True):
        if rb.status in ("done", "error", "cancelled") and ra.status != rb.status:
            return False
        if rb.status == "cancelling" and ra.status not in ("cancelling", "cancelled"):
            return False
    return True


def EpochNeverDecreases(cfg: RunConfig, before: World, after: World) -> bool:
    """run.ownership.fencing: a run's epoch never goes back (a fenced writer cannot restore
    its own)."""
    return all(ra.epoch >= rb.epoch for rb, ra in zip(before.store, after.store, strict=True))


RunActionProperty = Callable[[RunConfig, World, World], bool]

ACTION_PROPERTIES: Final[dict[str, RunActionProperty]] = {f.__name__: f for f in (
    RunStatusForward, EpochNeverDecreases)}


# -- liveness, as the Python explorer checks it ----------------------------------------------


def RunningRunMovesOn(cfg: RunConfig, w: World, r: int) -> bool:
    """run.store-failure.recoverable, run.ownership.lease: every started run moves on -- it
    pauses for a person, ends done or is cancelled; a driver that stops releases it or its
    lease runs out, and a restart takes it on.  (The spec's temporal property, under
    fairness; the Python explorer checks that from every reachable state of a started run
    such a state is still reachable.)"""
    return _run(w, r).status in SETTLED


def CancellingRunEnds(cfg: RunConfig, w: World, r: int) -> bool:
    """run.ownership.lease, cancel.propagates: every cancel ends -- a canceller that stops
    leaves its run cancelling, and a restart finishes the cancel.  (As above: from every
    reachable state a state where the run is not cancelling -- from cancelling, only cancelled
    -- is still reachable.)"""
    return _run(w, r).status != "cancelling"


LIVENESS: Final[dict[str, Callable[[RunConfig, World, int], bool]]] = {
    "RunningRunMovesOn": RunningRunMovesOn, "CancellingRunEnds": CancellingRunEnds}

PROPERTY_CLAUSES: Final[dict[str, tuple[str, ...]]] = {
    name: tuple(c.strip() for c in (fn.__doc__ or "").split(":")[0].split(","))
    for name, fn in {**INVARIANTS, **ACTION_PROPERTIES, **LIVENESS}.items()}
"""Each run-level property and the clause ids it checks (the start of its docstring)."""
