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

# -- seeded design bugs ----------------------------------------------------------------------

SEEDED_BUGS: Final[dict[str, tuple[str, str]]] = {
    "no_expiry_check": ("NoConsumeAtOrAfterExpiry", "resume without the expiry check"),
    "no_version_check": ("OneWinner", "resume commit without the conditional version check"),
    "replay_recounts": ("AtMostOnceConsumption", "a replay is counted as a consume"),
    "expire_early": ("ExpiredOnlyWhenDue", "a pause expires one tick before its time"),
    "continue_after_first_answer": ("ContinuesOnlyWhenAllAnswered",
                                    "a multi-question step continues after its first answer"),
    "mint_resumable": ("TurnWrittenSeparately",
                       "a pause minted resumable, its turn flag set in the same step"),
    "failed_write_resumable": ("TurnRecordedOnlyByWrite",
                               "a failed turn write still records the turn"),
    "demote_on_failed_write": ("OnlyTableTransitions",
                               "a failed rewrite demotes a resumable pause to paused"),
    "conflict_as_replay": ("ReplayEqualsFirst", "a different response reported as a replay"),
    "replay_as_conflict": ("ConflictIsDifferent", "the same response reported as a conflict"),
    "cancel_told_expired": ("LoserToldWhoWon",
                            "a resume of a cancelled pause is told pause_expired"),
    "binding_unchecked": ("ConsumedOnlyWithMatchingBinding",
                          "resume without the run/root/session/scope binding checks"),
    "root_from_parent": ("TokenBoundToRunAndRoot",
                         "a token's root run taken from the parent, not the root"),
    "retire_undrained": ("RetiredKeyDrained", "a key retired without the drain proof"),
    "unknown_consumable": ("UnknownNeverConsumed", "a pause in unknown_outcome is consumed"),
    "cancel_skips_done": ("CancelPropagated",
                          "cancel stops at a done run, not reaching its children"),
    "pause_ignores_cancel": ("NoPauseWhileCancelling",
                             "pause() does not check the run's status during a cancel"),
    "scan_skips_unknown": ("CancelledRunHasNoLivePause",
                           "the cancel loop skips pauses in unknown_outcome"),
    "cancel_done_run": ("RunTerminalAbsorbing", "cancel marks a done run cancelled"),
    "refusal_bumps_version": ("RefusalChangesNothing", "a refused resume writes the row"),
    "answer_all_siblings": ("MultiIndependent",
                            "an answer consumes the other resumable pauses of its step"),
    "crash_loses_pauses": ("PausesSurviveCrash", "a crash expires the live pauses"),
    "apply_unjournalled": ("EffectJournalBracket", "an effect runs before it is journalled"),
    "reconcile_guess": ("ReconcileTruthful", "reconcile may say applied when it was not"),
    "binding_before_expiry": ("RefusalOrder",
                              "the binding is checked before the expiry"),
}
"""Design bugs the model can be built with (``Config.seeded_bugs``, the spec's ``SeededBugs``):
each name maps to the property that must catch it and what the bug is."""


# -- scripts: the one script form (pausepoint.core.script), the steps the model knows ---------

ScriptStep = ModelledStep


@attrs.frozen
class Config:
    """Constants: each run's script and parent, the pause TTL, the clock, the resumers, the
    responses a person may give, the crash budget, the bindings a resume request may present
    (``"ok"`` or the claim that differs: ``run``, ``root``, ``session``, ``scope``), the
    number of signing keys, and the seeded design bugs (none for the contract)."""

    scripts: tuple[tuple[ScriptStep, ...], ...]
    parents: tuple[int | None, ...] = ()
    ttl: int = 2
    max_time: int = 3
    resumers: int = 2
    responses: tuple[str, ...] = ("yes", "no")
    max_crashes: int = 1
    bindings: tuple[str, ...] = ("ok",)
    keys: int = 1
    seeded_bugs: frozenset[str] = frozenset()

    def parent(self, r: int) -> int | None:
        return self.parents[r] if r < len(self.parents) else None

    def root(self, r: int) -> int:
        p = self.parent(r)
        return r if p is None else self.root(p)

    def children(self, r: int) -> tuple[int, ...]:
        return tuple(c for c in range(len(self.scripts)) if self.parent(c) == r)

    def bug(self, name: str) -> bool:
        return name in self.seeded_bugs


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
ENDED: Final[frozenset[RunPhase]] = frozenset({RunPhase.DONE, RunPhase.CANCELLED})


class Journal(enum.StrEnum):
    NONE = "none"
    STARTED = "started"
    FINISHED = "finished"


class SlotKind(enum.StrEnum):
    ASK = "ask"
    RECOVERY = "recovery"


class Write(enum.StrEnum):
    """The outcome of a pause's turn-checkpoint write."""

    NONE = "none"
    FAILED = "failed"
    OK = "ok"


class CancelStep(enum.StrEnum):
    """Where the service's cancel loop stands for a run (its status is cancelling while not
    NONE): queued (marked cancelling), scanned (its live pauses cancelled)."""

    NONE = "none"
    QUEUED = "queued"
    SCANNED = "scanned"


@attrs.frozen(cache_hash=True)
class Slot:
    """One pause point of a run: where it stands in the script and its lifecycle state.
    ``version`` is the ledger row's version; ``consumes`` counts accepted consumes (a history
    variable the at-most-once invariant reads); ``kid`` and ``root`` are the token's key id
    and root run (its run is the run holding the slot); ``write`` the turn-checkpoint write."""

    pc: int
    kind: SlotKind
    state: PauseState
    version: int = 0
    consumes: int = 0
    kid: int = 1
    root: int = 0
    write: Write = Write.NONE


@attrs.frozen(cache_hash=True)
class RunState:
    phase: RunPhase = RunPhase.IDLE
    pc: int = 0
    slots: tuple[Slot, ...] = ()
    journal: tuple[Journal, ...] = ()  # indexed by script position (effects only)
    counts: tuple[int, ...] = ()  # applied executions, indexed by script position
    fired: frozenset[int] = frozenset()  # script positions whose fault already fired
    cancel: CancelStep = CancelStep.NONE


class ResumerPhase(enum.StrEnum):
    IDLE = "idle"
    READ = "read"
    TOLD = "told"


@attrs.frozen(cache_hash=True)
class Resumer:
    """A resume server handling one request: it reads the row (state and version), decides on
    what it read, then commits with a conditional update on the version.  After the commit it
    keeps what it was told (``told``: ``consumed``, ``replayed`` or the refusal's code) with
    the request it answered, until it reads again -- the history the told-properties read."""

    phase: ResumerPhase = ResumerPhase.IDLE
    run: int = 0
    slot: int = 0
    response: str = ""
    binding: str = "ok"
    seen: PauseState = PauseState()
    seen_version: int = 0
    told: str = ""


@attrs.frozen(cache_hash=True)
class System:
    now: int
    runs: tuple[RunState, ...]
    resumers: tuple[Resumer, ...]
    crashes: int = 0
    active_key: int = 1
    retired: frozenset[int] = frozenset()


IDLE_RESUMER: Final[Resumer] = Resumer()


def initial(cfg: Config) -> System:
    runs = tuple(
        RunState(journal=tuple(Journal.NONE for _ in s), counts=tuple(0 for _ in s))
        for s in cfg.scripts)
    return System(now=0, runs=runs, resumers=tuple(IDLE_RESUMER for _ in range(cfg.resumers)))


# -- helpers ---------------------------------------------------------------------------------


def _with_run(s: System, r: int, run: RunState) -> System:
    return attrs.evolve(s, runs=s.runs[:r] + (run,) + s.runs[r + 1:])


def _with_resumer(s: System, i: int, res: Resumer) -> System:
    return attrs.evolve(s, resumers=s.resumers[:i] + (res,) + s.resumers[i + 1:])


def _with_slot(run: RunState, k: int, slot: Slot) -> RunState:
    return attrs.evolve(run, slots=run.slots[:k] + (slot,) + run.slots[k + 1:])


def _bump(slot: Slot, state: PauseState, write: Write | None = None) -> Slot:
    return attrs.evolve(slot, state=state, version=slot.version + 1,
                        write=slot.write if write is None else write)


def _apply(slot: Slot, event: lc.Event) -> Slot | None:
    """Step one slot through the lifecycle table; None when refused."""
    out = lc.step(slot.state, event)
    if isinstance(out, lc.Refusal):
        return None
    if out.action == lc.Action.REPLAYED:
        return slot
    return attrs.evolve(slot, state=out.state, version=slot.version + 1,
                        consumes=slot.consumes + (out.action == lc.Action.CONSUMED))


def _accept(state: PauseState, *events: lc.Event) -> PauseState:
    for ev in events:
        out = lc.step(state, ev)
        assert isinstance(out, lc.Accepted), out
        state = out.state
    return state


def _journal(run: RunState, pc: int, j: Journal) -> RunState:
    return attrs.evolve(run, journal=run.journal[:pc] + (j,) + run.journal[pc + 1:])


def _new_slot(cfg: Config, s: System, r: int, pc: int, kind: SlotKind, state: PauseState,
              version: int, write: Write) -> Slot:
    """A new pause point of run r: its token signed by the active key, bound to the live run
    and its root run (run.binding.live, token.claims)."""
    p = cfg.parent(r)
    root = p if cfg.bug("root_from_parent") and p is not None else cfg.root(r)
    return Slot(pc=pc, kind=kind, state=state, version=version, kid=s.active_key, root=root,
                write=write)


# -- run actions -----------------------------------------------------------------------------


def _cancelled_above(cfg: Config, s: System, r: int | None) -> bool:
    while r is not None:
        if s.runs[r].phase == RunPhase.CANCELLED:
            return True
        r = cfg.parent(r)
    return False


def start(cfg: Config, s: System, r: int) -> tuple[System, ...]:
    """StartRun: an idle top-level run, or a child whose parent has started, with no
    cancelled ancestor (a child of a done run whose own parent was cancelled is not started:
    the cancel loop passed the done run before the child existed)."""
    run = s.runs[r]
    if run.phase != RunPhase.IDLE:
        return ()
    p = cfg.parent(r)
    if p is not None and (s.runs[p].phase == RunPhase.IDLE or _cancelled_above(cfg, s, p)):
        return ()
    return (_with_run(s, r, attrs.evolve(run, phase=RunPhase.RUNNING)),)


def execute(cfg: Config, s: System, r: int) -> tuple[System, ...]:
    """Execute: a running run takes its next script step (begin an effect, ask, or end).
    An effect already journalled finished is skipped, never re-run (effect.at-most-once).
    An ask takes no pause while a cancel of the run is under way (pause() reads the run's
    status)."""
    run = s.runs[r]
    if run.phase != RunPhase.RUNNING:
        return ()
    step_ = cfg.scripts[r][run.pc]
    if isinstance(step_, End):
        return (_with_run(s, r, attrs.evolve(run, phase=RunPhase.DONE)),)
    if isinstance(step_, Effect):
        if run.journal[run.pc] == Journal.FINISHED:
            return (_with_run(s, r, attrs.evolve(run, pc=run.pc + 1)),)
        run2 = run if cfg.bug("apply_unjournalled") else _journal(run, run.pc, Journal.STARTED)
        return (_with_run(s, r, attrs.evolve(run2, phase=RunPhase.IN_EFFECT)),)
    if run.cancel != CancelStep.NONE and not cfg.bug("pause_ignores_cancel"):
        return ()
    state = _accept(PauseState(), lc.Pause(expires_at=s.now + cfg.ttl))
    write = Write.NONE
    if cfg.bug("mint_resumable"):
        state, write = _accept(state, lc.RecordTurn(True)), Write.OK
    slots = run.slots + tuple(_new_slot(cfg, s, r, run.pc, SlotKind.ASK, state, 1, write)
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
    """RecordTurn (``written``): the turn-checkpoint write for slot k reports success, in a
    step of its own after the pause (turn.resumable.earned), a retry after a failed write too.
    RecordTurnFailed (not ``written``): the write fails; the pause stays paused and not
    resumable (turn.write-failed.stays-paused), only the write's outcome is noted."""
    run = s.runs[r]
    if k >= len(run.slots):
        return ()
    slot = run.slots[k]
    if written:
        if slot.state.phase != Phase.PAUSED or slot.state.turn_recorded:
            return ()
        new = _apply(slot, lc.RecordTurn(True))
        assert new is not None
        return (_with_run(s, r, _with_slot(run, k, attrs.evolve(new, write=Write.OK))),)
    if slot.state.phase == Phase.PAUSED and slot.write == Write.NONE:
        if cfg.bug("failed_write_resumable"):
            new = _bump(slot, _accept(slot.state, lc.RecordTurn(True)), write=Write.FAILED)
        else:
            new = attrs.evolve(slot, write=Write.FAILED)
    elif cfg.bug("demote_on_failed_write") and slot.state.phase == Phase.RESUMABLE:
        new = _bump(slot, attrs.evolve(slot.state, phase=Phase.PAUSED, turn_recorded=False),
                    write=Write.FAILED)
    else:
        return ()
    return (_with_run(s, r, _with_slot(run, k, new)),)


# -- resume: read, then a conditional commit ---------------------------------------------------


def resume_read(cfg: Config, s: System, i: int, r: int, k: int, v: str,
                b: str = "ok") -> tuple[System, ...]:
    """ResumeRead: resumer i reads slot k of run r to answer it with response v, presenting a
    request whose binding is b."""
    res = s.resumers[i]
    if res.phase == ResumerPhase.READ or k >= len(s.runs[r].slots):
        return ()
    slot = s.runs[r].slots[k]
    return (_with_resumer(s, i, Resumer(ResumerPhase.READ, r, k, v, b, slot.state,
                                        slot.version)),)


def _resume_result(cfg: Config, s: System, res: Resumer, key_ok: bool) -> str:
    """ResumeResult: the lifecycle's answer to the resume (its fixed check order), with the
    seeded bugs that change it."""
    if cfg.bug("binding_before_expiry") and key_ok and res.binding != "ok":
        return "binding_mismatch"
    binding = res.binding not in ("run", "root", "session") or cfg.bug("binding_unchecked")
    scope = res.binding != "scope" or cfg.bug("binding_unchecked")
    seen = res.seen
    now = s.now
    if cfg.bug("no_expiry_check") and seen.phase in lc.LIVE:
        now = -1  # the expiry guard never fires on a live pause
    if (cfg.bug("unknown_consumable") and seen.phase == Phase.UNKNOWN_OUTCOME and key_ok
            and now < seen.expires_at and binding and scope):
        return lc.Action.CONSUMED.value
    out = lc.step(seen, lc.Resume(now=now, response_digest=res.response, authentic=key_ok,
                                  binding_ok=binding, scope_ok=scope))
    got = out.code.value if isinstance(out, lc.Refusal) else out.action.value
    if seen.phase == Phase.CONSUMED and got in ("replayed", "response_conflict"):
        if cfg.bug("replay_as_conflict"):
            return "response_conflict"
        if cfg.bug("conflict_as_replay"):
            return "replayed"
    if got == "pause_cancelled" and cfg.bug("cancel_told_expired"):
        return "pause_expired"
    return got


def commit_result(cfg: Config, s: System, i: int) -> str | None:
    """What resumer i's ResumeCommit answers in state ``s``: ``"retry"`` when the row's
    version moved (it reads again), else the lifecycle's action (``consumed``, ``replayed``)
    or refusal code; None when the resumer has read nothing."""
    res = s.resumers[i]
    if res.phase != ResumerPhase.READ:
        return None
    slot = s.runs[res.run].slots[res.slot]
    if slot.version != res.seen_version and not cfg.bug("no_version_check"):
        return "retry"
    return _resume_result(cfg, s, res, slot.kid not in s.retired)


def resume_commit(cfg: Config, s: System, i: int) -> tuple[System, ...]:
    """ResumeCommit: decide on what was read; a consume is written only if the row still has
    the version read (resume.consume.single-winner), otherwise read again.  A refusal changes
    nothing stored, except a resume refused for expiry records the expiry it found due."""
    result = commit_result(cfg, s, i)
    if result is None:
        return ()
    res = s.resumers[i]
    run = s.runs[res.run]
    slot = run.slots[res.slot]
    if result == "retry":
        return (_with_resumer(s, i, attrs.evolve(res, seen=slot.state,
                                                 seen_version=slot.version)),)
    s2 = _with_resumer(s, i, attrs.evolve(res, phase=ResumerPhase.TOLD, told=result,
                                          seen=PauseState(), seen_version=0))
    if result == "consumed":
        state = attrs.evolve(res.seen, phase=Phase.CONSUMED, response_digest=res.response,
                             consumed_at=s.now)
        done = attrs.evolve(slot, state=state, version=slot.version + 1,
                            consumes=slot.consumes + 1)
        slots = list(run.slots)
        slots[res.slot] = done
        if cfg.bug("answer_all_siblings"):
            for j, x in enumerate(run.slots):
                if j != res.slot and x.pc == slot.pc and x.state.phase == Phase.RESUMABLE:
                    st = attrs.evolve(x.state, phase=Phase.CONSUMED,
                                      response_digest=res.response, consumed_at=s.now)
                    slots[j] = attrs.evolve(x, state=st, version=x.version + 1,
                                            consumes=x.consumes + 1)
        return (_with_run(s2, res.run, attrs.evolve(run, slots=tuple(slots))),)
    if result == "pause_expired" and slot.state.phase in lc.LIVE and (
            s.now >= slot.state.expires_at):
        new = _apply(slot, lc.Expire(now=s.now))
        assert new is not None
        return (_with_run(s2, res.run, _with_slot(run, res.slot, new)),)
    if result == "replayed" and cfg.bug("replay_recounts"):
        return (_with_run(s2, res.run, _with_slot(run, res.slot, attrs.evolve(
            slot, consumes=slot.consumes + 1))),)
    if cfg.bug("refusal_bumps_version"):
        return (_with_run(s2, res.run, _with_slot(run, res.slot, attrs.evolve(
            slot, version=slot.version + 1))),)
    return (s2,)


def _answered(cfg: Config, run: RunState) -> bool:
    """Every pause of the run's step is consumed (multi.independent), or the newest pause is
    a consumed recovery pause."""
    if not run.slots or run.slots[-1].pc != run.pc:
        return False
    last = run.slots[-1]
    if last.kind == SlotKind.RECOVERY:
        return last.state.phase == Phase.CONSUMED
    here = [x.state.phase == Phase.CONSUMED for x in run.slots if x.pc == run.pc]
    return any(here) if cfg.bug("continue_after_first_answer") else all(here)


def continue_run(cfg: Config, s: System, r: int) -> tuple[System, ...]:
    """Continue: the run continues from the recorded turn, in a step of its own after the
    consume, so a crash can fall between the two (resume.continuation.recorded-turn)."""
    run = s.runs[r]
    if run.phase != RunPhase.PAUSED or not _answered(cfg, run):
        return ()
    pc = run.pc if run.slots[-1].kind == SlotKind.RECOVERY else run.pc + 1
    return (_with_run(s, r, attrs.evolve(run, phase=RunPhase.RUNNING, pc=pc)),)


# -- clock, expiry, cancel -------------------------------------------------------------------


def tick(cfg: Config, s: System) -> tuple[System, ...]:
    """Tick: the clock advances by one, up to max_time."""
    if s.now >= cfg.max_time:
        return ()
    return (attrs.evolve(s, now=s.now + 1),)


def expire(cfg: Config, s: System, r: int, k: int) -> tuple[System, ...]:
    """Expire: a live pause whose expires_at has been reached becomes expired."""
    run = s.runs[r]
    if k >= len(run.slots):
        return ()
    new = _apply(run.slots[k], lc.Expire(now=s.now + cfg.bug("expire_early")))
    if new is None:
        return ()
    return (_with_run(s, r, _with_slot(run, k, new)),)


def cancel_begin(cfg: Config, s: System, r: int) -> tuple[System, ...]:
    """CancelBegin: the service's cancel_run marks the run cancelling (cancel.distinct)."""
    run = s.runs[r]
    if run.phase in (RunPhase.DONE, RunPhase.CANCELLED, RunPhase.IDLE):
        return ()
    if run.cancel != CancelStep.NONE:
        return ()
    return (_with_run(s, r, attrs.evolve(run, cancel=CancelStep.QUEUED)),)


def cancel_scan(cfg: Config, s: System, r: int) -> tuple[System, ...]:
    """CancelScan: the loop cancels the run's live pauses."""
    run = s.runs[r]
    if run.cancel != CancelStep.QUEUED:
        return ()
    skip = Phase.UNKNOWN_OUTCOME if cfg.bug("scan_skips_unknown") else None
    slots = tuple(x if x.state.phase == skip else _apply(x, lc.Cancel()) or x
                  for x in run.slots)
    return (_with_run(s, r, attrs.evolve(run, slots=slots, cancel=CancelStep.SCANNED)),)


def cancel_finish(cfg: Config, s: System, r: int) -> tuple[System, ...]:
    """CancelFinish: the loop marks the run cancelled and queues its children -- through a
    run already done, whose children may still wait (cancel.propagates)."""
    run = s.runs[r]
    if run.cancel != CancelStep.SCANNED:
        return ()
    ended = run.phase in ENDED and not cfg.bug("cancel_done_run")
    s = _with_run(s, r, attrs.evolve(run, cancel=CancelStep.NONE,
                                     phase=run.phase if ended else RunPhase.CANCELLED))
    for c in cfg.children(r):
        child = s.runs[c]
        if (child.cancel == CancelStep.NONE
                and child.phase not in (RunPhase.IDLE, RunPhase.CANCELLED)
                and not (cfg.bug("cancel_skips_done") and child.phase == RunPhase.DONE)):
            s = _with_run(s, c, attrs.evolve(child, cancel=CancelStep.QUEUED))
    return (s,)


def cancel(cfg: Config, s: System, r: int) -> tuple[System, ...]:
    """The whole cancel loop of run r with nothing in between (CancelBegin, then CancelScan
    and CancelFinish of every run it queues): what a caller that cancels and waits sees."""
    got = cancel_begin(cfg, s, r)
    if not got:
        return ()
    s = got[0]
    while True:
        busy = [d for d, run in enumerate(s.runs) if run.cancel != CancelStep.NONE]
        if not busy:
            return (s,)
        d = busy[0]
        (s,) = (cancel_scan if s.runs[d].cancel == CancelStep.QUEUED
                else cancel_finish)(cfg, s, d)


# -- crash, restart, reconcile ---------------------------------------------------------------


def crash(cfg: Config, s: System) -> tuple[System, ...]:
    """Crash: the process dies.  Volatile state is lost -- executing runs stop where they were,
    resumers forget what they read -- and durable state (ledger, journal, counts, a run's
    cancelling status) stays."""
    if s.crashes >= cfg.max_crashes:
        return ()
    runs = tuple(attrs.evolve(x, phase=RunPhase.STOPPED) if x.phase in EXECUTING else x
                 for x in s.runs)
    if cfg.bug("crash_loses_pauses"):
        runs = tuple(attrs.evolve(x, slots=tuple(
            _bump(y, attrs.evolve(y.state, phase=Phase.EXPIRED)) if y.state.phase in lc.LIVE
            else y for y in x.slots)) for x in runs)
    resumers = tuple(IDLE_RESUMER for _ in s.resumers)
    return (attrs.evolve(s, runs=runs, resumers=resumers, crashes=s.crashes + 1),)


def restart(cfg: Config, s: System, r: int) -> tuple[System, ...]:
    """Restart: a stopped run is recovered from its checkpoint.  An effect journalled started
    and not finished is an unknown outcome: a recovery pause is opened in unknown_outcome,
    never a retry (effect.unknown-outcome).  Not while a cancel of the run is under way."""
    run = s.runs[r]
    if run.phase != RunPhase.STOPPED or run.cancel != CancelStep.NONE:
        return ()
    if run.journal[run.pc] != Journal.STARTED:
        return (_with_run(s, r, attrs.evolve(run, phase=RunPhase.RUNNING)),)
    state = _accept(PauseState(), lc.Pause(expires_at=s.now + cfg.ttl), lc.MarkUnknown(),
                    lc.RecordTurn(True))
    slot = _new_slot(cfg, s, r, run.pc, SlotKind.RECOVERY, state, 3, Write.OK)
    return (_with_run(s, r, attrs.evolve(run, phase=RunPhase.PAUSED,
                                         slots=run.slots + (slot,))),)


def mark_unknown(cfg: Config, s: System, r: int, k: int) -> tuple[System, ...]:
    """MarkUnknown: someone marks a live ask pause as waiting on an unknown outcome
    (effect.unknown-outcome); once per pause (a model bound)."""
    run = s.runs[r]
    if k >= len(run.slots):
        return ()
    slot = run.slots[k]
    if (slot.kind != SlotKind.ASK or slot.state.phase not in (Phase.PAUSED, Phase.RESUMABLE)
            or slot.version > 2):
        return ()
    new = _apply(slot, lc.MarkUnknown())
    assert new is not None
    return (_with_run(s, r, _with_slot(run, k, new)),)


def reconcile(cfg: Config, s: System, r: int, k: int, applied: bool) -> tuple[System, ...]:
    """Reconcile: someone checks the world and says whether the in-doubt effect was applied.
    Applied: journalled finished, so the continuation skips it.  Not applied: journal cleared,
    so the continuation runs it (once).  Only the true answer is modelled.  A marked ask pause
    is reconciled (applied) back to where its turn allows."""
    run = s.runs[r]
    if k >= len(run.slots):
        return ()
    slot = run.slots[k]
    if slot.state.phase != Phase.UNKNOWN_OUTCOME:
        return ()
    res = lc.Resolution.APPLIED if applied else lc.Resolution.NOT_APPLIED
    new = _apply(slot, lc.Reconcile(res))
    assert new is not None
    if slot.kind == SlotKind.ASK:
        return (_with_run(s, r, _with_slot(run, k, new)),) if applied else ()
    truly = run.counts[slot.pc] > 0
    if applied != truly and not cfg.bug("reconcile_guess"):
        return ()
    run2 = _journal(run, slot.pc, Journal.FINISHED if applied else Journal.NONE)
    return (_with_run(s, r, _with_slot(run2, k, new)),)


# -- keys ------------------------------------------------------------------------------------


def rotate(cfg: Config, s: System) -> tuple[System, ...]:
    """Rotate: the next key becomes active; tokens already minted keep theirs."""
    if s.active_key >= cfg.keys:
        return ()
    return (attrs.evolve(s, active_key=s.active_key + 1),)


def outstanding(s: System, kid: int) -> int:
    """The drain proof: how many outstanding (live) pauses carry a token signed by ``kid``
    (lifecycle.outstanding.live)."""
    return sum(1 for _, x in _slots(s) if x.kid == kid and x.state.phase in lc.LIVE)


def retire(cfg: Config, s: System, kid: int) -> tuple[System, ...]:
    """Retire: an old key is retired only when the drain proof shows no outstanding token
    signed by it (token.rotation.drain); tokens it signed then no longer verify."""
    if kid >= s.active_key or kid in s.retired:
        return ()
    if outstanding(s, kid) and not cfg.bug("retire_undrained"):
        return ()
    return (attrs.evolve(s, retired=s.retired | {kid}),)


# -- the next-state relation -----------------------------------------------------------------


@attrs.frozen
class Labelled:
    action: str
    args: tuple[object, ...]
    state: System


_RUN_ACTIONS: Final = (
    ("StartRun", start), ("Execute", execute), ("ApplyEffect", apply_effect),
    ("FinishEffect", finish_effect), ("CancelBegin", cancel_begin),
    ("CancelScan", cancel_scan), ("CancelFinish", cancel_finish), ("Restart", restart),
    ("Continue", continue_run))


def successors(cfg: Config, s: System) -> Iterator[Labelled]:
    """Every enabled action instance and its successor states, named as in the TLA+ spec."""
    for r in range(len(cfg.scripts)):
        for name, fn in _RUN_ACTIONS:
            for t in fn(cfg, s, r):
                yield Labelled(name, (r,), t)
        for k in range(len(s.runs[r].slots)):
            for t in record_turn(cfg, s, r, k, True):
                yield Labelled("RecordTurn", (r, k), t)
            for t in record_turn(cfg, s, r, k, False):
                yield Labelled("RecordTurnFailed", (r, k), t)
            for t in expire(cfg, s, r, k):
                yield Labelled("Expire", (r, k), t)
            for t in mark_unknown(cfg, s, r, k):
                yield Labelled("MarkUnknown", (r, k), t)
            for applied in (True, False):
                for t in reconcile(cfg, s, r, k, applied):
                    yield Labelled("Reconcile", (r, k, applied), t)
            for i in range(len(s.resumers)):
                for v in cfg.responses:
                    for b in cfg.bindings:
                        for t in resume_read(cfg, s, i, r, k, v, b):
                            yield Labelled("ResumeRead", (i, r, k, v, b), t)
    for i in range(len(s.resumers)):
        for t in resume_commit(cfg, s, i):
            yield Labelled("ResumeCommit", (i,), t)
    for t in tick(cfg, s):
        yield Labelled("Tick", (), t)
    for t in crash(cfg, s):
        yield Labelled("Crash", (), t)
    for t in rotate(cfg, s):
        yield Labelled("Rotate", (), t)
    for kid in range(1, cfg.keys + 1):
        for t in retire(cfg, s, kid):
            yield Labelled("Retire", (kid,), t)


# -- invariants ------------------------------------------------------------------------------


def _slots(s: System) -> Iterator[tuple[RunState, Slot]]:
    for run in s.runs:
        for slot in run.slots:
            yield run, slot


def TypeOK(cfg: Config, s: System) -> bool:
    """lifecycle.states: every pause point is in exactly one of the lifecycle's phases."""
    return (0 <= s.now <= cfg.max_time and 0 <= s.crashes <= cfg.max_crashes
            and all(x.state.phase in lc.LIVE | lc.TERMINAL for _, x in _slots(s))
            and 1 <= s.active_key <= cfg.keys)


def AtMostOnceConsumption(cfg: Config, s: System) -> bool:
    """resume.consume.at-most-once"""
    return all(slot.consumes <= 1 for _, slot in _slots(s))


def NoConsumeAtOrAfterExpiry(cfg: Config, s: System) -> bool:
    """expiry.no-consume-after, resume.expiry"""
    return all(lc.inv_consumed_before_expiry(slot.state) for _, slot in _slots(s))


def ExpiredOnlyWhenDue(cfg: Config, s: System) -> bool:
    """expiry.transition: a pause is expired only once the clock reached its expires_at."""
    return all(s.now >= x.state.expires_at for _, x in _slots(s)
               if x.state.phase == Phase.EXPIRED)


def ResumableHasTurn(cfg: Config, s: System) -> bool:
    """turn.resumable.earned"""
    return all(lc.inv_resumable_has_turn(slot.state) for _, slot in _slots(s))


def TurnRecordedOnlyByWrite(cfg: Config, s: System) -> bool:
    """turn.resumable.earned, turn.write-failed.stays-paused: the turn is recorded only by a
    write that reported success."""
    return all(x.write == Write.OK for _, x in _slots(s) if x.state.turn_recorded)


def EffectsAtMostOnce(cfg: Config, s: System) -> bool:
    """effect.at-most-once"""
    return all(c <= 1 for run in s.runs for c in run.counts)


def EffectJournalBracket(cfg: Config, s: System) -> bool:
    """effect.journal.bracket: an effect that ran was journalled started first."""
    return all(
        all(j != Journal.NONE for j, c in zip(run.journal, run.counts, strict=True) if c > 0)
        and (run.phase not in (RunPhase.IN_EFFECT, RunPhase.APPLIED)
             or run.journal[run.pc] == Journal.STARTED)
        for run in s.runs)


def ReconcileTruthful(cfg: Config, s: System) -> bool:
    """effect.reconcile: an effect is journalled finished only if it really ran."""
    return all(c > 0 for run in s.runs for j, c in zip(run.journal, run.counts, strict=True)
               if j == Journal.FINISHED)


def NoResumeWhileUnknown(cfg: Config, s: System) -> bool:
    """resume.unknown-outcome.blocks, effect.unknown-outcome: a run continues (is running) only
    with no effect in doubt at its current step."""
    return all(run.journal[run.pc] != Journal.STARTED
               for run in s.runs if run.phase == RunPhase.RUNNING)


def PausedRunHasPausePoints(cfg: Config, s: System) -> bool:
    """lifecycle.states: a paused run has pause points at its current step, live or
    decided."""
    return all(any(x.pc == run.pc for x in run.slots)
               for run in s.runs if run.phase == RunPhase.PAUSED)


def ContinuesOnlyWhenAllAnswered(cfg: Config, s: System) -> bool:
    """resume.continuation.recorded-turn, multi.independent: a run is past an ask only when
    every pause of that ask was consumed."""
    return all(x.state.phase == Phase.CONSUMED for run in s.runs for x in run.slots
               if x.kind == SlotKind.ASK and run.pc > x.pc)


def CancelledRunHasNoLivePause(cfg: Config, s: System) -> bool:
    """cancel.distinct: a run marked cancelled has no live pause."""
    return all(x.state.phase not in lc.LIVE for run in s.runs
               if run.phase == RunPhase.CANCELLED for x in run.slots)


def CancelPropagated(cfg: Config, s: System) -> bool:
    """cancel.propagates: once no cancel is under way, no live pause under a cancelled run or
    any cancelled ancestor (the whole run tree)."""
    if any(run.cancel != CancelStep.NONE for run in s.runs):
        return True
    return all(not (_cancelled_above(cfg, s, r) and x.state.phase in lc.LIVE)
               for r, run in enumerate(s.runs) for x in run.slots)


def _told(s: System) -> Iterator[tuple[Resumer, Slot]]:
    for res in s.resumers:
        if res.phase == ResumerPhase.TOLD:
            yield res, s.runs[res.run].slots[res.slot]


def OneWinner(cfg: Config, s: System) -> bool:
    """resume.consume.single-winner, race.decided-once: one resumer is told consumed, with
    the response the pause recorded."""
    winners: dict[tuple[int, int], set[str]] = {}
    for res, x in _told(s):
        if res.told == "consumed":
            if x.state.phase != Phase.CONSUMED or x.state.response_digest != res.response:
                return False
            winners.setdefault((res.run, res.slot), set()).add(res.response)
    return all(len(v) == 1 for v in winners.values())


def ReplayEqualsFirst(cfg: Config, s: System) -> bool:
    """replay.same-response: a replay is told only for the first outcome's response."""
    return all(x.state.phase == Phase.CONSUMED and x.state.response_digest == res.response
               for res, x in _told(s) if res.told == "replayed")


def ConflictIsDifferent(cfg: Config, s: System) -> bool:
    """replay.different-response.conflict: a conflict only for a different response."""
    return all(x.state.phase == Phase.CONSUMED and x.state.response_digest != res.response
               for res, x in _told(s) if res.told == "response_conflict")


def LoserToldWhoWon(cfg: Config, s: System) -> bool:
    """race.decided-once, cancel.distinct: a loser is told which state won."""
    won = {"pause_expired": Phase.EXPIRED, "pause_cancelled": Phase.CANCELLED}
    return all(x.state.phase == won[res.told] for res, x in _told(s) if res.told in won)


def ConsumedOnlyWithMatchingBinding(cfg: Config, s: System) -> bool:
    """resume.binding.run, resume.binding.scope: consumed only by a request whose run, root
    run, session and scope match the token."""
    return all(res.binding == "ok" for res, _ in _told(s) if res.told == "consumed")


def TokenBoundToRunAndRoot(cfg: Config, s: System) -> bool:
    """run.binding.live, token.claims: every token is bound to its live run and that run's
    root run."""
    return all(x.root == cfg.root(r) for r, run in enumerate(s.runs) for x in run.slots)


def RetiredKeyDrained(cfg: Config, s: System) -> bool:
    """token.rotation.drain, token.key-id, resume.token.authentic, lifecycle.outstanding.live:
    no outstanding (live) pause's token is signed by a retired key."""
    return all(outstanding(s, kid) == 0 for kid in s.retired)


Invariant = Callable[[Config, System], bool]

INVARIANTS: Final[dict[str, Invariant]] = {f.__name__: f for f in (
    TypeOK, AtMostOnceConsumption, NoConsumeAtOrAfterExpiry, ExpiredOnlyWhenDue,
    ResumableHasTurn, TurnRecordedOnlyByWrite, EffectsAtMostOnce, EffectJournalBracket,
    ReconcileTruthful, NoResumeWhileUnknown, PausedRunHasPausePoints,
    ContinuesOnlyWhenAllAnswered, CancelledRunHasNoLivePause, CancelPropagated, OneWinner,
    ReplayEqualsFirst, ConflictIsDifferent, LoserToldWhoWon, ConsumedOnlyWithMatchingBinding,
    TokenBoundToRunAndRoot, RetiredKeyDrained)}


# -- action properties -----------------------------------------------------------------------


def _slot_pairs(before: System, after: System) -> Iterator[tuple[Slot, Slot]]:
    for rb, ra in zip(before.runs, after.runs, strict=True):
        yield from zip(rb.slots, ra.slots, strict=False)  # a step may add slots


def TerminalAbsorbing(cfg: Config, before: System, after: System) -> bool:
    """lifecycle.terminal.absorbing: a slot in a terminal phase keeps its state."""
    return all(sa.state == sb.state for sb, sa in _slot_pairs(before, after)
               if sb.state.phase in lc.TERMINAL)


TABLE_EDGES: Final[frozenset[tuple[Phase, Phase]]] = frozenset(
    {(Phase.PAUSED, Phase.RESUMABLE), (Phase.PAUSED, Phase.UNKNOWN_OUTCOME),
     (Phase.RESUMABLE, Phase.UNKNOWN_OUTCOME), (Phase.UNKNOWN_OUTCOME, Phase.RESUMABLE),
     (Phase.UNKNOWN_OUTCOME, Phase.PAUSED), (Phase.RESUMABLE, Phase.CONSUMED)}
    | {(p, q) for p in lc.LIVE for q in (Phase.EXPIRED, Phase.CANCELLED)})


def OnlyTableTransitions(cfg: Config, before: System, after: System) -> bool:
    """lifecycle.transition.table: every change of a pause's phase is a row of the table."""
    return all(sb.state.phase == sa.state.phase or (sb.state.phase, sa.state.phase)
               in TABLE_EDGES for sb, sa in _slot_pairs(before, after))


def TurnWrittenSeparately(cfg: Config, before: System, after: System) -> bool:
    """turn.resumable.earned: a new ask pause is minted paused, its turn not yet recorded;
    the write is a step of its own."""
    return all(x.state.phase == Phase.PAUSED and not x.state.turn_recorded
               and x.write == Write.NONE
               for rb, ra in zip(before.runs, after.runs, strict=True)
               for x in ra.slots[len(rb.slots):] if x.kind == SlotKind.ASK)


def UnknownNeverConsumed(cfg: Config, before: System, after: System) -> bool:
    """resume.unknown-outcome.blocks: only a resumable pause is consumed."""
    return all(sb.state.phase == Phase.RESUMABLE for sb, sa in _slot_pairs(before, after)
               if sa.state.phase == Phase.CONSUMED and sb.state.phase != Phase.CONSUMED)


def _deciding(before: System, after: System) -> Iterator[Resumer]:
    for rb, ra in zip(before.resumers, after.resumers, strict=True):
        if rb.phase == ResumerPhase.READ and ra.phase == ResumerPhase.TOLD:
            yield ra


def RefusalChangesNothing(cfg: Config, before: System, after: System) -> bool:
    """lifecycle.refusal.no-change, resume.refusal.keeps-pause, effect.refusal.no-effect: a
    commit that tells a resumer a refusal changes no stored state, except the expiry a
    refusal for expiry found due."""
    for e in _deciding(before, after):
        if e.told in ("consumed", "replayed"):
            continue
        if (before.active_key, before.retired) != (after.active_key, after.retired):
            return False
        for r, (rb, ra) in enumerate(zip(before.runs, after.runs, strict=True)):
            if (rb.phase, rb.journal, rb.counts) != (ra.phase, ra.journal, ra.counts):
                return False
            for k, (sb, sa) in enumerate(zip(rb.slots, ra.slots, strict=False)):
                if sb != sa and not (e.told == "pause_expired" and (r, k) == (e.run, e.slot)
                                     and sa.state.phase == Phase.EXPIRED):
                    return False
    return True


def MultiIndependent(cfg: Config, before: System, after: System) -> bool:
    """multi.independent, resume.token.binds-one-pause: answering one pause (with its token)
    changes no other pause."""
    for e in _deciding(before, after):
        if e.told != "consumed":
            continue
        for r, (rb, ra) in enumerate(zip(before.runs, after.runs, strict=True)):
            for k, (sb, sa) in enumerate(zip(rb.slots, ra.slots, strict=False)):
                if (r, k) != (e.run, e.slot) and sb != sa:
                    return False
    return True


def PausesSurviveCrash(cfg: Config, before: System, after: System) -> bool:
    """durability.restart, durability.token.reissue, durability.commit-per-change: a crash
    loses no pause and changes none (each keeps its state and its token: what was reported
    was durable)."""
    return after.crashes <= before.crashes or all(
        (rb.slots, rb.journal, rb.counts) == (ra.slots, ra.journal, ra.counts)
        for rb, ra in zip(before.runs, after.runs, strict=True))


def RefusalOrder(cfg: Config, before: System, after: System) -> bool:
    """resume.refusal.order: a request refused for its binding or scope was not due to be
    refused for expiry (expiry is checked first)."""
    for e in _deciding(before, after):
        if e.told in ("binding_mismatch", "scope_mismatch"):
            ps = before.runs[e.run].slots[e.slot].state
            if ps.phase == Phase.EXPIRED or (ps.phase in lc.LIVE
                                             and before.now >= ps.expires_at):
                return False
    return True


def NoPauseWhileCancelling(cfg: Config, before: System, after: System) -> bool:
    """pause.refusal.before-mint: while a cancel of a run is under way a pause is refused
    before any mint -- the run gets no new pause point."""
    return all(len(ra.slots) == len(rb.slots)
               for rb, ra in zip(before.runs, after.runs, strict=True)
               if rb.cancel != CancelStep.NONE)


def RunTerminalAbsorbing(cfg: Config, before: System, after: System) -> bool:
    """run.events.single-terminal: a run that ended (done or cancelled) stays as it ended."""
    return all(ra.phase == rb.phase for rb, ra in zip(before.runs, after.runs, strict=True)
               if rb.phase in ENDED)


ActionProperty = Callable[[Config, System, System], bool]

ACTION_PROPERTIES: Final[dict[str, ActionProperty]] = {f.__name__: f for f in (
    TerminalAbsorbing, OnlyTableTransitions, TurnWrittenSeparately, UnknownNeverConsumed,
    RefusalChangesNothing, MultiIndependent, PausesSurviveCrash, RefusalOrder,
    NoPauseWhileCancelling, RunTerminalAbsorbing)}


def terminal_absorbing(before: System, after: System) -> bool:
    """lifecycle.terminal.absorbing, as an action property (kept for callers without a
    Config)."""
    return TerminalAbsorbing(Config(scripts=()), before, after)


# -- which clauses the model checks ----------------------------------------------------------

PROPERTY_CLAUSES: Final[dict[str, tuple[str, ...]]] = {
    name: tuple(c.strip() for c in (fn.__doc__ or "").split(":")[0].split(","))
    for name, fn in {**INVARIANTS, **ACTION_PROPERTIES}.items()}
"""Each property and the clause ids it checks (the start of its docstring, as the spec's
comment above the property names them)."""


def model_checked() -> dict[str, tuple[str, ...]]:
    """Each clause the model checks and the properties (of the specs and of the models: this
    pause level and the run level, :mod:`pausepoint.system.runmodel`) that check it;
    ``pausepoint clauses`` marks these clauses model-checked."""
    from pausepoint.system.runmodel import PROPERTY_CLAUSES as RUN_PROPERTY_CLAUSES

    out: dict[str, list[str]] = {}
    for prop, clauses in {**PROPERTY_CLAUSES, **RUN_PROPERTY_CLAUSES}.items():
        for c in clauses:
            out.setdefault(c, []).append(prop)
    return {c: tuple(props) for c, props in out.items()}
