"""The model driver: adapter-level operations mapped onto the reference model's actions.

:mod:`pausepoint.system.model` is the executable semantics of scripted runs -- small actions
(``StartRun``, ``Execute``, ``ApplyEffect``, ``FinishEffect``, ``RecordTurn``, ``ResumeRead``,
``ResumeCommit``, ``Tick``, ``Expire``, ``Cancel``, ``Crash``, ``Restart``, ``Reconcile``).  An
adapter sees coarser operations.  :class:`ModelDriver` performs one adapter operation as the
sequence of model actions it stands for, and says what an implementation must answer:

* ``start`` = ``StartRun``, then ``Execute`` / ``ApplyEffect`` / ``FinishEffect`` / ``RecordTurn``
  until the run is quiescent (paused, done, cancelled) -- firing a scripted fault as a ``Crash``
  at its point (before ``ApplyEffect`` or before ``FinishEffect``), the first time only;
* ``resume`` = ``ResumeRead`` + ``ResumeCommit`` by one resumer, then, if it consumed, the run
  runs until quiescent again.  Variants of the request the model does not carry (an altered
  token, another scope or session, an invalid response) are decided by
  :func:`pausepoint.core.lifecycle.step` with those facts, and change nothing when refused;
* ``advance_clock`` = ``Tick`` per unit, then ``Expire`` for every pause that became due;
* ``cancel`` = ``Cancel``; ``crash_restart`` = ``Crash`` then ``Restart`` of every stopped run and
  quiescence; ``reconcile`` = ``Reconcile`` with the true answer (the model knows whether the
  effect was applied).

The driver never changes the model; it composes its actions.  Its states are immutable
:class:`pausepoint.system.model.System` values plus small bookkeeping, so the vector generator can
branch from any state (:meth:`ModelDriver.copy`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

import attrs

from pausepoint.core import lifecycle as lc
from pausepoint.core.clauses import Group
from pausepoint.core.lifecycle import Phase
from pausepoint.core.script import Ask, Effect, Step, modelled
from pausepoint.system import model as m

RESPONSES: Final[dict[str, dict[str, Any]]] = {"yes": {"approved": True},
                                               "no": {"approved": False}}
"""The model's responses and the JSON a vector sends for each."""

VARIANTS: Final[dict[str, Group]] = {
    "valid": Group.CORE,
    "altered_token": Group.TOKENS,
    "other_scope": Group.TOKENS,
    "other_session": Group.LINEAGE,
    "invalid_response": Group.CORE,
}
"""Resume request variants and the group each needs."""

RUN_STATUS: Final[dict[m.RunPhase, str]] = {
    m.RunPhase.PAUSED: "paused", m.RunPhase.DONE: "done", m.RunPhase.CANCELLED: "cancelled",
    m.RunPhase.STOPPED: "stopped", m.RunPhase.RUNNING: "running", m.RunPhase.IDLE: "idle",
    m.RunPhase.IN_EFFECT: "running", m.RunPhase.APPLIED: "running"}


@attrs.frozen
class RunSpec:
    run_id: str
    script: tuple[Step, ...]
    parent_run_id: str | None = None
    session_id: str = "session-1"
    scope: str = "scope-1"


@attrs.frozen
class Expectation:
    """What one operation must do: ``expect`` (the result), the clauses it exercises, the
    groups it needs, and flags for acceptable alternatives."""

    expect: dict[str, Any]
    clauses: tuple[str, ...]
    groups: frozenset[Group]
    flags: tuple[str, ...] = ()


class ModelDriver:
    """Adapter operations over :mod:`pausepoint.system.model`, for a fixed set of runs."""

    def __init__(self, runs: Sequence[RunSpec], ttl_units: int = 2) -> None:
        self.runs = tuple(runs)
        self.index = {r.run_id: i for i, r in enumerate(self.runs)}
        parents = tuple(self.index[r.parent_run_id] if r.parent_run_id else None
                        for r in self.runs)
        self.cfg = m.Config(
            scripts=tuple(tuple(modelled(s) for s in r.script) for r in self.runs),
            parents=parents, ttl=ttl_units, max_time=1 << 30, resumers=8,
            responses=tuple(RESPONSES), max_crashes=1 << 30)
        self.sys = m.initial(self.cfg)
        self.fired: frozenset[tuple[int, int]] = frozenset()
        self.unrecorded: frozenset[tuple[int, int]] = frozenset(
            (i, pc) for i, r in enumerate(self.runs) for pc, s in enumerate(r.script)
            if isinstance(s, Ask) and s.checkpoint_write == "fail")
        self.first_status: dict[tuple[int, int], str] = {}

    def copy(self) -> ModelDriver:
        new = object.__new__(ModelDriver)
        new.__dict__.update(self.__dict__)
        new.first_status = dict(self.first_status)
        return new

    # -- names -------------------------------------------------------------------------------

    def ref(self, r: int, k: int) -> str:
        return f"{self.runs[r].run_id}#{k}"

    def parse_ref(self, ref: str) -> tuple[int, int]:
        run_id, _, k = ref.rpartition("#")
        return self.index[run_id], int(k)

    def slot(self, ref: str) -> m.Slot:
        r, k = self.parse_ref(ref)
        return self.sys.runs[r].slots[k]

    def run_phase(self, run_id: str) -> m.RunPhase:
        return self.sys.runs[self.index[run_id]].phase

    def refs(self) -> list[str]:
        return [self.ref(r, k) for r, run in enumerate(self.sys.runs)
                for k in range(len(run.slots))]

    def observe(self) -> dict[str, Any]:
        """Observable state: every pause's phase and every effect's execution count."""
        pauses = {self.ref(r, k): slot.state.phase.value for r, run in enumerate(self.sys.runs)
                  for k, slot in enumerate(run.slots)}
        effects = {}
        for r, spec in enumerate(self.runs):
            run = self.sys.runs[r]
            if run.phase == m.RunPhase.IDLE:
                continue
            for pc, s in enumerate(spec.script):
                if isinstance(s, Effect):
                    effects[f"{spec.run_id}/{s.key}"] = run.counts[pc]
        return {"pauses": pauses, "effects": effects}

    def live_pauses(self, r: int) -> list[dict[str, Any]]:
        out = []
        for k, slot in enumerate(self.sys.runs[r].slots):
            if slot.state.phase in lc.LIVE:
                d: dict[str, Any] = {"ref": self.ref(r, k), "kind": slot.kind.value,
                                     "resumable": slot.state.phase == Phase.RESUMABLE}
                if slot.kind == m.SlotKind.ASK:
                    step = self.runs[r].script[slot.pc]
                    assert isinstance(step, Ask)
                    names = step.names
                    same = [j for j, x in enumerate(self.sys.runs[r].slots)
                            if x.pc == slot.pc and x.kind == m.SlotKind.ASK]
                    d["name"] = names[same.index(k)]
                out.append(d)
        return out

    # -- running until quiescent --------------------------------------------------------------

    def _one(self, succ: tuple[m.System, ...]) -> bool:
        if not succ:
            return False
        self.sys = succ[0]
        return True

    def _quiesce(self, r: int) -> None:
        cfg = self.cfg
        while True:
            run = self.sys.runs[r]
            if run.phase == m.RunPhase.RUNNING:
                before = len(run.slots)
                if not self._one(m.execute(cfg, self.sys, r)):
                    return
                after = self.sys.runs[r]
                if after.phase == m.RunPhase.PAUSED and (r, run.pc) not in self.unrecorded:
                    for k in range(before, len(after.slots)):
                        self._one(m.record_turn(cfg, self.sys, r, k, True))
                continue
            if run.phase in (m.RunPhase.IN_EFFECT, m.RunPhase.APPLIED):
                step = cfg.scripts[r][run.pc]
                assert isinstance(step, m.Effect)
                fault = (m.Fault.CRASH_BEFORE_APPLY if run.phase == m.RunPhase.IN_EFFECT
                         else m.Fault.CRASH_AFTER_APPLY)
                if step.fault == fault and (r, run.pc) not in self.fired:
                    self.fired = self.fired | {(r, run.pc)}
                    self._one(m.crash(cfg, self.sys))
                    return
                act = m.apply_effect if run.phase == m.RunPhase.IN_EFFECT else m.finish_effect
                self._one(act(cfg, self.sys, r))
                continue
            return

    def _report(self, r: int) -> dict[str, Any]:
        return {"result": "ok", "status": RUN_STATUS[self.sys.runs[r].phase],
                "pauses": self.live_pauses(r)}

    # -- the operations -----------------------------------------------------------------------

    def start(self, run_id: str) -> Expectation:
        r = self.index[run_id]
        if not self._one(m.start(self.cfg, self.sys, r)):
            raise ValueError(f"run {run_id} cannot start now")
        self._quiesce(r)
        spec = self.runs[r]
        groups = {Group.CORE}
        clauses = ["pause.published", "run.events.single-terminal"]
        for s in spec.script:
            if isinstance(s, Ask) and len(s.names) > 1:
                groups.add(Group.MULTI_PAUSE)
                clauses.append("multi.independent")
            if isinstance(s, Ask) and s.checkpoint_write == "fail":
                clauses.append("turn.write-failed.stays-paused")
            if isinstance(s, Effect) and s.fault is not None:
                groups.add(Group.UNKNOWN_OUTCOME)
                clauses.append("effect.journal.bracket")
        if spec.parent_run_id:
            clauses.append("run.binding.live")
        clauses.append("turn.resumable.earned")
        return Expectation(self._report(r), tuple(clauses), frozenset(groups))

    def resume(self, ref: str, response: str, variant: str = "valid") -> Expectation:
        r, k = self.parse_ref(ref)
        slot = self.sys.runs[r].slots[k]
        groups = {VARIANTS[variant]}
        if slot.kind == m.SlotKind.RECOVERY:
            groups.add(Group.UNKNOWN_OUTCOME)
        if variant != "valid":
            facts = {"altered_token": {"authentic": False},
                     "other_scope": {"scope_ok": False},
                     "other_session": {"binding_ok": False},
                     "invalid_response": {"response_valid": False}}[variant]
            digest = "" if variant == "invalid_response" else response
            out = lc.step(slot.state, lc.Resume(now=self.sys.now, response_digest=digest,
                                                **facts))
            assert isinstance(out, lc.Refusal), (variant, slot.state, out)
            codes = [out.code.value]
            flags: tuple[str, ...] = ()
            if out.code.value == "token_invalid":
                codes.append("token_malformed")
                flags = ("token_error",)
            if out.code.value == "response_conflict":
                groups.add(Group.REPLAY)
            return Expectation({"result": "refused", "codes": sorted(codes)},
                               (out.clause, "lifecycle.refusal.no-change",
                                "effect.refusal.no-effect"), frozenset(groups), flags)
        was = slot.state.phase
        # One resumer, nothing in between: its commit decides on the state it read, so what it
        # answers is the table's verdict on that state.
        decided = lc.step(slot.state, lc.Resume(now=self.sys.now, response_digest=response))
        result = (decided.code.value if isinstance(decided, lc.Refusal)
                  else decided.action.value)
        self._one(m.resume_read(self.cfg, self.sys, 0, r, k, response))
        self._one(m.resume_commit(self.cfg, self.sys, 0))
        self._one(m.continue_run(self.cfg, self.sys, r))
        self.sys = attrs.evolve(self.sys, resumers=tuple(m.Resumer() for _ in self.sys.resumers))
        if was == Phase.CONSUMED:
            groups.add(Group.REPLAY)
        if result == lc.Action.CONSUMED.value:
            self._quiesce(r)
            rep = self._report(r)
            self.first_status[(r, k)] = rep["status"]
            # the first clause is the one a wrong status, wrong pauses or a wrong phase
            # afterwards breaks
            clauses = ["resume.continuation.recorded-turn", "resume.consume.at-most-once",
                       "effect.at-most-once"]
            if slot.kind == m.SlotKind.RECOVERY:
                clauses.append("effect.reconcile")
            if sum(1 for x in self.sys.runs[r].slots if x.pc == slot.pc) > 1:
                groups.add(Group.MULTI_PAUSE)
                clauses.insert(0, "multi.independent")
            return Expectation({**rep, "replayed": False}, tuple(clauses), frozenset(groups))
        if result == lc.Action.REPLAYED.value:
            return Expectation({"result": "ok", "replayed": True,
                                "status": self.first_status.get((r, k), "done")},
                               ("replay.same-response", "effect.at-most-once"),
                               frozenset(groups))
        out = lc.step(slot.state, lc.Resume(now=self.sys.now, response_digest=response))
        assert isinstance(out, lc.Refusal) and out.code.value == result, (out, result)
        if out.code.value == "pause_expired":
            groups.add(Group.EXPIRY)
        if out.code.value == "pause_cancelled":
            groups.add(Group.CANCEL)
        if out.code.value == "outcome_unknown":
            groups.add(Group.UNKNOWN_OUTCOME)
        return Expectation({"result": "refused", "codes": [result]},
                           (out.clause, "lifecycle.refusal.no-change",
                            "effect.refusal.no-effect"), frozenset(groups))

    def advance(self, units: int) -> Expectation:
        for _ in range(units):
            self._one(m.tick(self.cfg, self.sys))
        expired = False
        for r, run in enumerate(self.sys.runs):
            for k in range(len(run.slots)):
                expired |= self._one(m.expire(self.cfg, self.sys, r, k))
        clauses = ("expiry.transition", "expiry.no-consume-after") if expired else (
            "expiry.transition",)
        return Expectation({"result": "ok"}, clauses, frozenset({Group.EXPIRY}))

    def can_cancel(self, run_id: str) -> bool:
        return self.run_phase(run_id) == m.RunPhase.PAUSED

    def cancel(self, run_id: str) -> Expectation:
        r = self.index[run_id]
        if not self._one(m.cancel(self.cfg, self.sys, r)):
            raise ValueError(f"run {run_id} cannot be cancelled now")
        clauses = ["cancel.distinct", "lifecycle.terminal.absorbing"]
        if any(self.cfg.parent(c) == r for c in range(len(self.runs))):
            clauses.append("cancel.propagates")
        return Expectation({"result": "ok", "status": "cancelled"}, tuple(clauses),
                           frozenset({Group.CANCEL}))

    def stopped(self) -> list[int]:
        return [r for r, run in enumerate(self.sys.runs) if run.phase == m.RunPhase.STOPPED]

    def crash_restart(self) -> Expectation:
        recovering = self.stopped()
        self._one(m.crash(self.cfg, self.sys))
        for r in self.stopped():
            self._one(m.restart(self.cfg, self.sys, r))
            self._quiesce(r)
        pauses = [p for r in range(len(self.runs)) for p in self.live_pauses(r)]
        if recovering:
            return Expectation({"result": "ok", "pauses": pauses},
                               ("effect.unknown-outcome", "effect.journal.bracket"),
                               frozenset({Group.UNKNOWN_OUTCOME}))
        return Expectation({"result": "ok", "pauses": pauses},
                           ("durability.restart", "durability.token.reissue",
                            "durability.commit-per-change"), frozenset({Group.DURABILITY}))

    def truth(self, ref: str) -> bool:
        """Was the effect behind recovery pause ``ref`` applied?"""
        r, k = self.parse_ref(ref)
        slot = self.sys.runs[r].slots[k]
        return self.sys.runs[r].counts[slot.pc] > 0

    def reconcile(self, ref: str) -> tuple[str, Expectation]:
        """Reconcile with the true answer; for a pause with nothing in doubt, the refusal."""
        r, k = self.parse_ref(ref)
        slot = self.sys.runs[r].slots[k]
        if slot.kind != m.SlotKind.RECOVERY:
            out = lc.step(slot.state, lc.Reconcile(lc.Resolution.APPLIED))
            assert isinstance(out, lc.Refusal)
            return "applied", Expectation({"result": "refused", "codes": [out.code.value]},
                                          (out.clause, "lifecycle.refusal.no-change"),
                                          frozenset({Group.UNKNOWN_OUTCOME}))
        applied = self.truth(ref)
        if not self._one(m.reconcile(self.cfg, self.sys, r, k, applied)):
            out = lc.step(slot.state, lc.Reconcile(lc.Resolution.APPLIED))
            assert isinstance(out, lc.Refusal)
            return ("applied" if applied else "not_applied",
                    Expectation({"result": "refused", "codes": [out.code.value]},
                                (out.clause, "lifecycle.refusal.no-change"),
                                frozenset({Group.UNKNOWN_OUTCOME})))
        phase = self.sys.runs[r].slots[k].state.phase.value
        return ("applied" if applied else "not_applied",
                Expectation({"result": "ok", "phase": phase}, ("effect.reconcile",),
                            frozenset({Group.UNKNOWN_OUTCOME})))
