"""The system model: scripted runs, their pause points, effects, resumers, a clock, crashes.

This is the executable semantics the TLA+ spec (``tla/Pausepoint.tla``) describes and that the
reference harness must agree with.  It is pure: states are frozen, hashable values, and every
action is a function ``(Config, System) -> tuple[System, ...]`` giving the successor states
(empty when the action is not enabled).  Each pause point's own transitions go through
:func:`pausepoint.core.lifecycle.step` -- the model adds runs, effects, concurrency and crashes
around the one table, never a second copy of it.

Action names match the TLA+ actions; invariant names match the TLA+ invariants and the clause
catalogue (see ``INVARIANTS``).
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterator
from typing import Final

import attrs

from pausepoint.core import lifecycle as lc
from pausepoint.core.lifecycle import PauseState, Phase
from pausepoint.core.script import Ask as Ask  # the script steps, re-exported for the model's
from pausepoint.core.script import Effect as Effect  # users (pausepoint.core.script is their
from pausepoint.core.script import End as End  # one form)
from pausepoint.core.script import Fault as Fault
from pausepoint.core.script import ModelledStep

# -- scripts: the one script form (pausepoint.core.script), the steps the model knows ---------

ScriptStep = ModelledStep


@attrs.frozen
class Config:
    """Constants: each run's script and parent, the pause TTL, the clock, the resumers, the
    responses a person may give, the crash budget."""

    scripts: tuple[tuple[ScriptStep, ...], ...]
    parents: tuple[int | None, ...] = ()
    ttl: int = 2
    max_time: int = 3
    resumers: int = 2
    responses: tuple[str, ...] = ("yes", "no")
    max_crashes: int = 1

    def parent(self, r: int) -> int | None:
        return self.parents[r] if r < len(self.parents) else None


# -- state -----------------------------------------------------------------------------------


class RunPhase(enum.StrEnum):
    IDLE = "idle"
    RUNNING = "running"
    IN_EFFECT = "in_effect"  # journalled started, not yet applied
    APPLIED = "applied"  # applied in the world, not yet journalled finished
    PAUSED = "paused"
    STOPPED = "stopped"  # the process died while the run was executing
    DONE = "done"
    CANCELLED = "cancelled"


EXECUTING: Final[frozenset[RunPhase]] = frozenset(
    {RunPhase.RUNNING, RunPhase.IN_EFFECT, RunPhase.APPLIED})


class Journal(enum.StrEnum):
    NONE = "none"
    STARTED = "started"
    FINISHED = "finished"


class SlotKind(enum.StrEnum):
    ASK = "ask"
    RECOVERY = "recovery"


@attrs.frozen(cache_hash=True)
class Slot:
    """One pause point of a run: where it stands in the script and its lifecycle state.
    ``version`` is the ledger row's version; ``consumes`` counts accepted consumes (a history
    variable the at-most-once invariant reads)."""

    pc: int
    kind: SlotKind
    state: PauseState
    version: int = 0
    consumes: int = 0


@attrs.frozen(cache_hash=True)
class RunState:
    phase: RunPhase = RunPhase.IDLE
    pc: int = 0
    slots: tuple[Slot, ...] = ()
    journal: tuple[Journal, ...] = ()  # indexed by script position (effects only)
    counts: tuple[int, ...] = ()  # applied executions, indexed by script position
    fired: frozenset[int] = frozenset()  # script positions whose fault already fired


class ResumerPhase(enum.StrEnum):
    IDLE = "idle"
    READ = "read"


@attrs.frozen(cache_hash=True)
class Resumer:
    """A resume server handling one request: it reads the row (state and version), decides on
    what it read, then commits with a conditional update on the version.  What it answered
    is not part of the state (it would only multiply the state space);
    :func:`commit_result` computes it."""

    phase: ResumerPhase = ResumerPhase.IDLE
    run: int = 0
    slot: int = 0
    response: str = ""
    seen: PauseState = PauseState()
    seen_version: int = 0


@attrs.frozen(cache_hash=True)
class System:
    now: int
    runs: tuple[RunState, ...]
    resumers: tuple[Resumer, ...]
    crashes: int = 0


IDLE_RESUMER: Final[Resumer] = Resumer()


def initial(cfg: Config) -> System:
    runs = tuple(
        RunState(journal=tuple(Journal.NONE for _ in s), counts=tuple(0 for _ in s))
        for s in cfg.scripts)
    return System(now=0, runs=runs, resumers=tuple(IDLE_RESUMER for _ in range(cfg.resumers)))


# -- helpers ---------------------------------------------------------------------------------


def _with_run(s: System, r: int, run: RunState) -> System:
    return System(s.now, s.runs[:r] + (run,) + s.runs[r + 1:], s.resumers, s.crashes)


def _with_resumer(s: System, i: int, res: Resumer) -> System:
    return System(s.now, s.runs, s.resumers[:i] + (res,) + s.resumers[i + 1:], s.crashes)


def _with_slot(run: RunState, k: int, slot: Slot) -> RunState:
    return attrs.evolve(run, slots=run.slots[:k] + (slot,) + run.slots[k + 1:])


def _apply(slot: Slot, event: lc.Event) -> Slot | None:
    """Step one slot through the lifecycle table; None when refused."""
    out = lc.step(slot.state, event)
    if isinstance(out, lc.Refusal):
        return None
    if out.action == lc.Action.REPLAYED:
        return slot
    return Slot(slot.pc, slot.kind, out.state, slot.version + 1,
                slot.consumes + (out.action == lc.Action.CONSUMED))


def _journal(run: RunState, pc: int, j: Journal) -> RunState:
    return attrs.evolve(run, journal=run.journal[:pc] + (j,) + run.journal[pc + 1:])


def _new_pause(now: int, cfg: Config) -> PauseState:
    out = lc.step(PauseState(), lc.Pause(expires_at=now + cfg.ttl))
    assert isinstance(out, lc.Accepted)
    return out.state


# -- run actions -----------------------------------------------------------------------------


def start(cfg: Config, s: System, r: int) -> tuple[System, ...]:
    """StartRun: an idle top-level run, or a child whose parent is executing or paused."""
    run = s.runs[r]
    if run.phase != RunPhase.IDLE:
        return ()
    p = cfg.parent(r)
    if p is not None and s.runs[p].phase in (RunPhase.IDLE, RunPhase.CANCELLED):
        return ()
    return (_with_run(s, r, attrs.evolve(run, phase=RunPhase.RUNNING)),)


def execute(cfg: Config, s: System, r: int) -> tuple[System, ...]:
    """Execute: a running run takes its next script step (begin an effect, ask, or end).
    An effect already journalled finished is skipped, never re-run (effect.at-most-once)."""
    run = s.runs[r]
    if run.phase != RunPhase.RUNNING:
        return ()
    step_ = cfg.scripts[r][run.pc]
    if isinstance(step_, End):
        return (_with_run(s, r, attrs.evolve(run, phase=RunPhase.DONE)),)
    if isinstance(step_, Effect):
        if run.journal[run.pc] == Journal.FINISHED:
            return (_with_run(s, r, attrs.evolve(run, pc=run.pc + 1)),)
        run2 = _journal(run, run.pc, Journal.STARTED)
        return (_with_run(s, r, attrs.evolve(run2, phase=RunPhase.IN_EFFECT)),)
    slots = run.slots + tuple(
        Slot(pc=run.pc, kind=SlotKind.ASK, state=_new_pause(s.now, cfg), version=1)
        for _ in step_.names)
    return (_with_run(s, r, attrs.evolve(run, phase=RunPhase.PAUSED, slots=slots)),)


def apply_effect(cfg: Config, s: System, r: int) -> tuple[System, ...]:
    """ApplyEffect: the world changes (the effect's execution count goes up by one)."""
    run = s.runs[r]
    if run.phase != RunPhase.IN_EFFECT:
        return ()
    counts = run.counts[:run.pc] + (run.counts[run.pc] + 1,) + run.counts[run.pc + 1:]
    return (_with_run(s, r, attrs.evolve(run, phase=RunPhase.APPLIED, counts=counts)),)


def finish_effect(cfg: Config, s: System, r: int) -> tuple[System, ...]:
    """FinishEffect: journal the effect finished and move past it."""
    run = s.runs[r]
    if run.phase != RunPhase.APPLIED:
        return ()
    run2 = _journal(run, run.pc, Journal.FINISHED)
    return (_with_run(s, r, attrs.evolve(run2, phase=RunPhase.RUNNING, pc=run.pc + 1)),)


def record_turn(cfg: Config, s: System, r: int, k: int, written: bool) -> tuple[System, ...]:
    """RecordTurn: the turn-checkpoint write for slot k reports ``written``."""
    run = s.runs[r]
    if k >= len(run.slots):
        return ()
    slot = run.slots[k]
    if slot.state.phase != Phase.PAUSED or slot.state.turn_recorded:
        return ()
    if not written:
        return ()  # a failed write changes nothing (turn.write-failed.stays-paused)
    new = _apply(slot, lc.RecordTurn(True))
    if new is None:
        return ()
    return (_with_run(s, r, _with_slot(run, k, new)),)


# -- resume: read, then a conditional commit ---------------------------------------------------


def resume_read(cfg: Config, s: System, i: int, r: int, k: int, v: str) -> tuple[System, ...]:
    """ResumeRead: resumer i reads slot k of run r to answer it with response v."""
    res = s.resumers[i]
    if res.phase != ResumerPhase.IDLE or k >= len(s.runs[r].slots):
        return ()
    slot = s.runs[r].slots[k]
    return (_with_resumer(s, i, Resumer(ResumerPhase.READ, r, k, v, slot.state, slot.version)),)


def _continue_after(cfg: Config, run: RunState, k: int) -> RunState:
    """After slot k is consumed: continue from the recorded turn once every pause of that
    step is consumed (resume.continuation.recorded-turn, multi.independent)."""
    slot = run.slots[k]
    if run.phase != RunPhase.PAUSED:
        return run
    if slot.kind == SlotKind.RECOVERY:
        return attrs.evolve(run, phase=RunPhase.RUNNING)
    same = [x for x in run.slots if x.pc == slot.pc and x.kind == SlotKind.ASK]
    if all(x.state.phase == Phase.CONSUMED for x in same):
        return attrs.evolve(run, phase=RunPhase.RUNNING, pc=slot.pc + 1)
    return run


def resume_commit(cfg: Config, s: System, i: int) -> tuple[System, ...]:
    """ResumeCommit: decide on what was read; a consume is written only if the row still has
    the version read (resume.consume.single-winner), otherwise read again."""
    res = s.resumers[i]
    if res.phase != ResumerPhase.READ:
        return ()
    run = s.runs[res.run]
    slot = run.slots[res.slot]
    if slot.version != res.seen_version:
        again = Resumer(ResumerPhase.READ, res.run, res.slot, res.response, slot.state,
                        slot.version)
        return (_with_resumer(s, i, again),)
    out = lc.step(res.seen, lc.Resume(now=s.now, response_digest=res.response))
    s2 = _with_resumer(s, i, IDLE_RESUMER)
    if isinstance(out, lc.Refusal) or out.action != lc.Action.CONSUMED:
        return (s2,)
    new_slot = Slot(slot.pc, slot.kind, out.state, slot.version + 1, slot.consumes + 1)
    run2 = _continue_after(cfg, _with_slot(run, res.slot, new_slot), res.slot)
    return (_with_run(s2, res.run, run2),)


def commit_result(cfg: Config, s: System, i: int) -> str | None:
    """What resumer i's ResumeCommit answers in state ``s``: ``"retry"`` when the row's
    version moved (it reads again), else the lifecycle's action (``consumed``, ``replayed``)
    or refusal code; None when the resumer has read nothing."""
    res = s.resumers[i]
    if res.phase != ResumerPhase.READ:
        return None
    slot = s.runs[res.run].slots[res.slot]
    if slot.version != res.seen_version:
        return "retry"
    out = lc.step(res.seen, lc.Resume(now=s.now, response_digest=res.response))
    return out.code.value if isinstance(out, lc.Refusal) else out.action.value


# -- clock, expiry, cancel -------------------------------------------------------------------


def tick(cfg: Config, s: System) -> tuple[System, ...]:
    """Tick: the clock advances by one, up to max_time."""
    if s.now >= cfg.max_time:
        return ()
    return (System(s.now + 1, s.runs, s.resumers, s.crashes),)


def expire(cfg: Config, s: System, r: int, k: int) -> tuple[System, ...]:
    """Expire: a live pause whose expires_at has been reached becomes expired."""
    run = s.runs[r]
    if k >= len(run.slots):
        return ()
    new = _apply(run.slots[k], lc.Expire(now=s.now))
    if new is None:
        return ()
    return (_with_run(s, r, _with_slot(run, k, new)),)


def _cancel_tree(cfg: Config, s: System, r: int) -> System:
    run = s.runs[r]
    if run.phase not in (RunPhase.DONE, RunPhase.CANCELLED):
        slots = tuple(_apply(x, lc.Cancel()) or x for x in run.slots)
        s = _with_run(s, r, attrs.evolve(run, phase=RunPhase.CANCELLED, slots=slots))
    for c in range(len(cfg.scripts)):  # through a done run too: its children may still wait
        if cfg.parent(c) == r:
            s = _cancel_tree(cfg, s, c)
    return s


def cancel(cfg: Config, s: System, r: int) -> tuple[System, ...]:
    """Cancel: the run and, transitively, its child runs are cancelled with their live pauses
    (cancel.distinct, cancel.propagates)."""
    if s.runs[r].phase in (RunPhase.DONE, RunPhase.CANCELLED, RunPhase.IDLE):
        return ()
    return (_cancel_tree(cfg, s, r),)


# -- crash, restart, reconcile ---------------------------------------------------------------


def crash(cfg: Config, s: System) -> tuple[System, ...]:
    """Crash: the process dies.  Volatile state is lost -- executing runs stop where they were,
    resumers forget what they read -- and durable state (ledger, journal, counts) stays."""
    if s.crashes >= cfg.max_crashes:
        return ()
    runs = tuple(attrs.evolve(x, phase=RunPhase.STOPPED) if x.phase in EXECUTING else x
                 for x in s.runs)
    resumers = tuple(IDLE_RESUMER for _ in s.resumers)
    return (System(now=s.now, runs=runs, resumers=resumers, crashes=s.crashes + 1),)


def restart(cfg: Config, s: System, r: int) -> tuple[System, ...]:
    """Restart: a stopped run is recovered from its checkpoint.  An effect journalled started
    and not finished is an unknown outcome: a recovery pause is opened in unknown_outcome,
    never a retry (effect.unknown-outcome)."""
    run = s.runs[r]
    if run.phase != RunPhase.STOPPED:
        return ()
    if run.journal[run.pc] != Journal.STARTED:
        return (_with_run(s, r, attrs.evolve(run, phase=RunPhase.RUNNING)),)
    state = _new_pause(s.now, cfg)
    for ev in (lc.MarkUnknown(), lc.RecordTurn(True)):
        out = lc.step(state, ev)
        assert isinstance(out, lc.Accepted)
        state = out.state
    slot = Slot(pc=run.pc, kind=SlotKind.RECOVERY, state=state, version=3)
    return (_with_run(s, r, attrs.evolve(run, phase=RunPhase.PAUSED,
                                         slots=run.slots + (slot,))),)


def reconcile(cfg: Config, s: System, r: int, k: int, applied: bool) -> tuple[System, ...]:
    """Reconcile: someone checks the world and says whether the in-doubt effect was applied.
    Applied: journalled finished, so the continuation skips it.  Not applied: journal cleared,
    so the continuation runs it (once).  Only the true answer is modelled."""
    run = s.runs[r]
    if k >= len(run.slots):
        return ()
    slot = run.slots[k]
    if slot.kind != SlotKind.RECOVERY:
        return ()
    truly = run.counts[slot.pc] > 0
    if applied != truly:
        return ()
    res = lc.Resolution.APPLIED if applied else lc.Resolution.NOT_APPLIED
    new = _apply(slot, lc.Reconcile(res))
    if new is None:
        return ()
    run2 = _journal(run, slot.pc, Journal.FINISHED if applied else Journal.NONE)
    return (_with_run(s, r, _with_slot(run2, k, new)),)


# -- the next-state relation -----------------------------------------------------------------


@attrs.frozen
class Labelled:
    action: str
    args: tuple[object, ...]
    state: System


def successors(cfg: Config, s: System) -> Iterator[Labelled]:
    """Every enabled action instance and its successor states, named as in the TLA+ spec."""
    nruns = len(cfg.scripts)
    for r in range(nruns):
        for name, fn in (("StartRun", start), ("Execute", execute), ("ApplyEffect", apply_effect),
                         ("FinishEffect", finish_effect), ("Cancel", cancel),
                         ("Restart", restart)):
            for t in fn(cfg, s, r):
                yield Labelled(name, (r,), t)
        for k in range(len(s.runs[r].slots)):
            for t in record_turn(cfg, s, r, k, True):
                yield Labelled("RecordTurn", (r, k), t)
            for t in expire(cfg, s, r, k):
                yield Labelled("Expire", (r, k), t)
            for applied in (True, False):
                for t in reconcile(cfg, s, r, k, applied):
                    yield Labelled("Reconcile", (r, k, applied), t)
            for i in range(len(s.resumers)):
                for v in cfg.responses:
                    for t in resume_read(cfg, s, i, r, k, v):
                        yield Labelled("ResumeRead", (i, r, k, v), t)
    for i in range(len(s.resumers)):
        for t in resume_commit(cfg, s, i):
            yield Labelled("ResumeCommit", (i,), t)
    for t in tick(cfg, s):
        yield Labelled("Tick", (), t)
    for t in crash(cfg, s):
        yield Labelled("Crash", (), t)


# -- invariants ------------------------------------------------------------------------------


def _slots(s: System) -> Iterator[tuple[RunState, Slot]]:
    for run in s.runs:
        for slot in run.slots:
            yield run, slot


def AtMostOnceConsumption(cfg: Config, s: System) -> bool:
    """resume.consume.at-most-once"""
    return all(slot.consumes <= 1 for _, slot in _slots(s))


def NoConsumeAtOrAfterExpiry(cfg: Config, s: System) -> bool:
    """expiry.no-consume-after"""
    return all(lc.inv_consumed_before_expiry(slot.state) for _, slot in _slots(s))


def ResumableHasTurn(cfg: Config, s: System) -> bool:
    """turn.resumable.earned"""
    return all(lc.inv_resumable_has_turn(slot.state) for _, slot in _slots(s))


def EffectsAtMostOnce(cfg: Config, s: System) -> bool:
    """effect.at-most-once"""
    return all(c <= 1 for run in s.runs for c in run.counts)


def NoResumeWhileUnknown(cfg: Config, s: System) -> bool:
    """resume.unknown-outcome.blocks: a run continues (is running) only with no effect in doubt
    at its current step -- an unknown outcome is reconciled before anything resumes."""
    return all(run.journal[run.pc] != Journal.STARTED
               for run in s.runs if run.phase == RunPhase.RUNNING)


def PausedRunHasPausePoints(cfg: Config, s: System) -> bool:
    """lifecycle.states: a paused run has pause points at its current step."""
    return all(any(x.pc == run.pc for x in run.slots)
               for run in s.runs if run.phase == RunPhase.PAUSED)


def CancelPropagated(cfg: Config, s: System) -> bool:
    """cancel.propagates: no live pause under a cancelled run or any cancelled ancestor."""
    def cancelled_above(r: int) -> bool:
        p: int | None = r
        while p is not None:
            if s.runs[p].phase == RunPhase.CANCELLED:
                return True
            p = cfg.parent(p)
        return False
    return all(not (cancelled_above(r) and x.state.phase in lc.LIVE)
               for r, run in enumerate(s.runs) for x in run.slots)


Invariant = Callable[[Config, System], bool]

INVARIANTS: Final[dict[str, Invariant]] = {
    "AtMostOnceConsumption": AtMostOnceConsumption,
    "NoConsumeAtOrAfterExpiry": NoConsumeAtOrAfterExpiry,
    "ResumableHasTurn": ResumableHasTurn,
    "EffectsAtMostOnce": EffectsAtMostOnce,
    "NoResumeWhileUnknown": NoResumeWhileUnknown,
    "PausedRunHasPausePoints": PausedRunHasPausePoints,
    "CancelPropagated": CancelPropagated,
}


def terminal_absorbing(before: System, after: System) -> bool:
    """lifecycle.terminal.absorbing, as an action property: a slot in a terminal phase keeps
    its state."""
    for rb, ra in zip(before.runs, after.runs, strict=True):
        for sb, sa in zip(rb.slots, ra.slots, strict=False):  # a step may add slots
            if sb.state.phase in lc.TERMINAL and sa.state != sb.state:
                return False
    return True
