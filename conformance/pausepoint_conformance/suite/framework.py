"""What a check is, and the context it runs in.

A :class:`Check` names the clauses it exercises (ids from :mod:`pausepoint.core.clauses`; a cited id
that does not exist fails at import) and a function of a :class:`Ctx`.  The function drives the
adapter through the context's helpers and states what must hold with :meth:`Ctx.expect` and
friends; the first broken expectation raises :class:`CheckFailed` naming the clause it breaks,
what was expected and what came back.

Some clauses are checked on *every* observation, whichever check made it:

* ``lifecycle.states`` -- every observed phase is one of the seven;
* ``lifecycle.transition.table`` / ``lifecycle.terminal.absorbing`` -- the phases observed for
  one pause, in order, follow the lifecycle table's edges, and never leave a terminal phase;
* ``run.events.vocabulary`` / ``run.events.single-terminal`` -- every invocation's events come
  from the closed vocabulary and end in exactly one terminal event that matches the run status;
* ``run.paused.never-error`` -- a run that paused never reports ``error``.
"""

from __future__ import annotations

import enum
import time
import traceback
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Final

import attrs

from pausepoint.core import lifecycle as lc
from pausepoint.core.clause_ids import ClauseId
from pausepoint.core.clauses import CLAUSE_BY_ID, ErrorCode, Group, clause
from pausepoint.engine.run import TERMINAL_EVENTS as RUN_TERMINAL_EVENTS
from pausepoint.engine.run import EventKind
from pausepoint_conformance.protocol.port import Adapter, optional_op
from pausepoint_conformance.protocol.wire import (
    RUN_VIEWS,
    AdvanceClockArgs,
    CancelArgs,
    CancelData,
    CheckpointBinding,
    CheckpointWrite,
    CrashRestartArgs,
    Durability,
    EffectCountArgs,
    EffectStep,
    EndStep,
    Errored,
    Fault,
    GateStep,
    Handlers,
    InterruptStep,
    Ok,
    PauseStateArgs,
    PublishedPause,
    RaceResumeArgs,
    ReconcileArgs,
    Refused,
    ResetArgs,
    Resolution,
    RestartData,
    ResumeArgs,
    ResumeData,
    ResumeResult,
    RetireKeyArgs,
    RotateKeyArgs,
    RunReport,
    Skipped,
    StartArgs,
    StatusArgs,
    Step,
    TokenCodec,
    WiringArgs,
)

TTL_MS: Final[int] = 60_000
SESSION: Final[str] = "session-1"
SCOPE: Final[str] = "scope-1"
RESPONDER: Final[str] = "person"
OPERATOR: Final[str] = "operator"
YES: Final[dict[str, Any]] = {"approved": True}
DEFAULT: Final[Any] = object()
"""The default response (``YES``) -- ``None`` is a response of its own (JSON null)."""
NO: Final[dict[str, Any]] = {"approved": False}

EVENT_VOCABULARY: Final[frozenset[str]] = frozenset(k.value for k in EventKind)
TERMINAL_EVENTS: Final[frozenset[str]] = frozenset(k.value for k in RUN_TERMINAL_EVENTS)
PHASES: Final[frozenset[str]] = frozenset(p.value for p in lc.Phase)
CLOSED_CODES: Final[frozenset[str]] = frozenset(c.value for c in ErrorCode)


def _reachable() -> dict[str, frozenset[str]]:
    edges: dict[str, set[str]] = {p.value: set() for p in lc.Phase}
    for src, _event, dst in lc.transitions():
        edges[src.value].add(dst.value)
    out: dict[str, frozenset[str]] = {}
    for start in edges:
        seen = {start}
        todo = [start]
        while todo:
            for nxt in edges[todo.pop()]:
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        out[start] = frozenset(seen)
    return out


REACHABLE: Final[dict[str, frozenset[str]]] = _reachable()
TERMINAL_PHASES: Final[frozenset[str]] = frozenset(p.value for p in lc.TERMINAL)


class CaseOutcome(enum.StrEnum):
    PASSED = "passed"
    FAILED = "failed"
    SKIPPED = "skipped"
    ERRORED = "errored"
    NOT_CLAIMED = "not_claimed"


class CheckFailed(Exception):
    def __init__(self, clause_id: ClauseId, expected: object, got: object, message: str) -> None:
        super().__init__(f"{clause_id}: {message} (expected {expected!r}, got {got!r})")
        self.clause = clause(clause_id)
        self.expected = expected
        self.got = got
        self.message = message


class CheckSkipped(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class CheckErrored(Exception):
    def __init__(self, what: str, traceback_text: str) -> None:
        super().__init__(what)
        self.what = what
        self.traceback = traceback_text


CheckFn = Callable[["Ctx"], None]


@attrs.frozen
class Check:
    """One conformance check: an id, what it shows, the clauses it cites, and its function.
    ``groups`` are the clause groups the implementation must claim for the check to run (by
    default the groups of the cited clauses, plus ``needs``)."""

    id: str
    description: str
    clauses: tuple[ClauseId, ...]
    fn: CheckFn
    groups: frozenset[Group]


@attrs.frozen
class CaseResult:
    """How one check or vector ended."""

    id: str
    kind: str  # "check" or "vector"
    description: str
    clauses: tuple[str, ...]
    groups: tuple[str, ...]
    outcome: CaseOutcome
    failed_clause: str | None = None
    expected: Any = None
    got: Any = None
    message: str = ""
    duration_s: float = 0.0
    source: str = ""
    also_failed: tuple[tuple[str, str], ...] = ()
    """Other clauses the same case saw broken, with what broke them (``Ctx.expect_also``)."""

    def failure_message(self, clause_id: str) -> str | None:
        """What broke ``clause_id`` in this case, or None when it did not fail it."""
        if self.outcome != CaseOutcome.FAILED:
            return None
        if self.failed_clause == clause_id:
            return self.message
        return next((m for c, m in self.also_failed if c == clause_id), None)

    def record(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "type": "case", "id": self.id, "kind": self.kind, "description": self.description,
            "clauses": list(self.clauses), "groups": list(self.groups),
            "outcome": self.outcome.value, "duration_s": round(self.duration_s, 6)}
        if self.source:
            out["source"] = self.source
        if self.outcome == CaseOutcome.FAILED:
            out.update(failed_clause=self.failed_clause, expected=_jsonable(self.expected),
                       got=_jsonable(self.got), message=self.message)
            if self.also_failed:
                out["also_failed"] = [{"clause": c, "message": m} for c, m in self.also_failed]
        elif self.message:
            out["reason" if self.outcome in (CaseOutcome.SKIPPED, CaseOutcome.NOT_CLAIMED)
                else "message"] = self.message
        return out


def _jsonable(value: Any) -> Any:
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json")
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        items = [_jsonable(v) for v in value]
        return sorted(items, key=repr) if isinstance(value, (set, frozenset)) else items
    return repr(value)


def describe(result: Any) -> Any:
    """A short, JSON-able picture of a result for failure reports."""
    if isinstance(result, Ok):
        return {"ok": _jsonable(result.data)}
    if isinstance(result, Refused):
        return {"refused": result.code, "message": result.message}
    if isinstance(result, Skipped):
        return {"skipped": result.reason}
    if isinstance(result, Errored):
        return {"errored": result.traceback[-500:]}
    return _jsonable(result)


# -- the registry ----------------------------------------------------------------------------

CHECKS: list[Check] = []


def check(check_id: str, description: str, clauses: Sequence[ClauseId],
          needs: Iterable[Group] = ()) -> Callable[[CheckFn], CheckFn]:
    """Register a check.  Every cited clause must exist: mypy holds the ids to
    :data:`~pausepoint.core.clause_ids.ClauseId`, and ``clause()`` raises at import otherwise."""
    cited = tuple(clause(c) for c in clauses)

    def register(fn: CheckFn) -> CheckFn:
        if any(c.id == check_id for c in CHECKS):
            raise ValueError(f"two checks named {check_id!r}")
        groups = frozenset({CLAUSE_BY_ID[c].group for c in cited} | set(needs))
        CHECKS.append(Check(id=check_id, description=description, clauses=cited, fn=fn,
                            groups=groups | {Group.CORE}))
        return fn
    return register


# -- the context ------------------------------------------------------------------------------


class Ctx:
    """What a check sees: helpers that drive the adapter, validate every observation, and
    turn surprises into :class:`CheckFailed` / :class:`CheckSkipped` / :class:`CheckErrored`."""

    def __init__(self, adapter: Adapter, check_: Check, claimed: frozenset[Group],
                 ttl_ms: int = TTL_MS) -> None:
        self.adapter = adapter
        self.check = check_
        self.claimed = claimed
        self.ttl_ms = ttl_ms
        self.now = 0
        self.phases: dict[str, list[str]] = {}
        self.paused_runs: set[str] = set()
        self.first_clause = check_.clauses[0]
        self.also: list[CheckFailed] = []

    # -- failure helpers ---------------------------------------------------------------------

    def fail(self, clause_id: ClauseId, expected: object, got: object, message: str) -> CheckFailed:
        return CheckFailed(clause_id, expected, got, message)

    def expect(self, cond: bool, clause_id: ClauseId, expected: object, got: object,
               message: str) -> None:
        if not cond:
            raise self.fail(clause_id, expected, got, message)

    def expect_also(self, cond: bool, clause_id: ClauseId, expected: object, got: object,
                    message: str) -> None:
        """Like :meth:`expect`, but a failure is recorded and the check goes on, so that one
        case can show several clauses broken (a race with four winners also ran the
        continuation four times).  The case fails at its end if nothing failed before."""
        if not cond:
            self.also.append(self.fail(clause_id, expected, got, message))

    def _unwrap(self, result: Any, what: str, clause_id: ClauseId | None) -> Any:
        """The data of an ``ok``; a refusal where success was needed fails ``clause_id``."""
        if isinstance(result, Ok):
            return result.data
        if isinstance(result, Skipped):
            raise CheckSkipped(f"the implementation skipped {what}: {result.reason}")
        if isinstance(result, Errored):
            raise CheckErrored(f"{what} errored", result.traceback)
        if isinstance(result, Refused):
            raise self.fail(clause_id or self.first_clause, f"{what} accepted",
                            describe(result), f"{what} was refused")
        raise CheckErrored(f"{what} returned {result!r}", "")

    def expect_refused(self, result: Any, codes: Iterable[str | ErrorCode], clause_id: ClauseId,
                       what: str) -> Refused:
        want = sorted(str(getattr(c, "value", c)) for c in codes)
        if isinstance(result, Skipped):
            raise CheckSkipped(f"the implementation skipped {what}: {result.reason}")
        if isinstance(result, Errored):
            raise CheckErrored(f"{what} errored", result.traceback)
        if not isinstance(result, Refused):
            raise self.fail(clause_id, {"refused": want}, describe(result),
                            f"{what} must be refused")
        if result.code not in CLOSED_CODES:
            raise self.fail(clause_id, {"refused": want}, describe(result),
                            f"{what} was refused with {result.code!r}, which is not in the "
                            "contract's closed set of error codes")
        if want and result.code not in want:
            raise self.fail(clause_id, {"refused": want}, describe(result),
                            f"{what} was refused with the wrong code")
        return result

    # -- observation validation --------------------------------------------------------------

    def _saw_phase(self, interrupt_id: str, phase: str) -> None:
        self.expect(phase in PHASES, "lifecycle.states", sorted(PHASES), phase,
                    f"pause {interrupt_id} is in a phase the contract does not have")
        seen = self.phases.setdefault(interrupt_id, [])
        if seen:
            prev = seen[-1]
            if prev in TERMINAL_PHASES:
                self.expect(phase == prev, "lifecycle.terminal.absorbing", prev, phase,
                            f"pause {interrupt_id} left the terminal phase {prev}")
            self.expect(phase in REACHABLE[prev], "lifecycle.transition.table",
                        f"a phase reachable from {prev}", phase,
                        f"pause {interrupt_id} moved {prev} -> {phase}, which the lifecycle "
                        "table has no path for")
        seen.append(phase)

    def _saw_pause(self, p: PublishedPause) -> None:
        for attr in ("interrupt_id", "token", "name"):
            self.expect(bool(getattr(p, attr)), "pause.published", f"a non-empty {attr}",
                        getattr(p, attr), f"a published pause has no {attr}")

    def _observed(self, *failures: CheckFailed | None) -> None:
        """Independent checks of one observation: every one that failed is recorded, and the
        check stops at the first (the others go to ``also``)."""
        broken = [f for f in failures if f is not None]
        if broken:
            self.also.extend(broken[1:])
            raise broken[0]

    def _run_terminal(self, rep: RunReport, events: list[str], what: str,
                      invoked: bool) -> CheckFailed | None:
        """``run.events.single-terminal`` of one report, or None when it holds."""
        if rep.status == "stopped":
            return None
        if invoked and not events:
            return self.fail("run.events.single-terminal", "one terminal event", events,
                             f"{what} ran the run but reported no events")
        if not events:
            return None
        terminals = [e for e in events if e in TERMINAL_EVENTS]
        if len(terminals) != 1 or events[-1] not in TERMINAL_EVENTS:
            return self.fail("run.events.single-terminal", "exactly one terminal event, last",
                             events, f"{what}: the invocation must end in exactly one "
                             "terminal event")
        last = events[-1]
        want = {"paused": ("paused",), "done": ("done",), "cancelled": ("cancelled",),
                "error": ("error", "running")}[last]
        if rep.status.value not in want:
            return self.fail("run.events.single-terminal",
                             f"status {' or '.join(want)} after a {last} event",
                             rep.status.value,
                             f"{what}: the run status disagrees with its terminal event")
        return None

    def _saw_run(self, rep: RunReport, what: str, invoked: bool) -> None:
        """Every report is checked for three independent clauses -- the event vocabulary, one
        terminal event matching the status, and never error after a pause -- and every one it
        breaks is recorded."""
        events = list(rep.events)
        bad = [e for e in events if e not in EVENT_VOCABULARY]
        paused_then_error = (rep.run_id in self.paused_runs or rep.status == "paused") and (
            rep.status == "error" or "error" in events) and rep.refusal is None
        self._observed(
            self.fail("run.events.vocabulary", sorted(EVENT_VOCABULARY), bad,
                      f"{what} emitted events outside the vocabulary") if bad else None,
            self._run_terminal(rep, events, what, invoked),
            self.fail("run.paused.never-error", "no error",
                      {"status": rep.status.value, "events": events},
                      f"{what}: a run that paused ended in error") if paused_then_error
            else None)
        if rep.status == "paused":
            self.paused_runs.add(rep.run_id)
        for p in rep.pauses:
            self._saw_pause(p)

    # -- operations ---------------------------------------------------------------------------

    def reset(self) -> None:
        self._unwrap(self.adapter.reset(ResetArgs(ttl_ms=self.ttl_ms)), "reset", None)

    def _answered(self, result: Any, what: str) -> Any:
        """``result`` if the implementation answered (ok or refused); a skip or an error ends
        the check as skipped or errored (after a transport failure the implementation is a
        fresh process, so the check cannot go on)."""
        if isinstance(result, Skipped):
            raise CheckSkipped(f"the implementation skipped {what}: {result.reason}")
        if isinstance(result, Errored):
            raise CheckErrored(f"{what} errored", result.traceback)
        return result

    def start_raw(self, script: Sequence[Step], run_id: str = "r1", *,
                  parent: str | None = None, session: str = SESSION,
                  scope: str = SCOPE) -> Any:
        return self._answered(self.adapter.start(StartArgs(
            run_id=run_id, parent_run_id=parent, session_id=session, scope=scope,
            script=list(script))), f"start {run_id}")

    def start(self, script: Sequence[Step], run_id: str = "r1", *, parent: str | None = None,
              session: str = SESSION, scope: str = SCOPE, clause_id: ClauseId | None = None,
              status: str | None = "paused") -> RunReport:
        """Start a run that must be accepted (and, by default, pause)."""
        rep: RunReport = self._unwrap(self.start_raw(script, run_id, parent=parent,
                                                     session=session, scope=scope),
                                      f"start {run_id}", clause_id)
        self._saw_run(rep, f"start {run_id}", invoked=True)
        if rep.refusal is not None:
            raise self.fail(clause_id or self.first_clause, "the run to start",
                            describe(rep.refusal), f"start {run_id}: a pause was refused")
        if status is not None:
            self.expect(rep.status == status, clause_id or self.first_clause, status,
                        rep.status.value, f"start {run_id} ended in the wrong status")
        for p in rep.pauses:
            self.phase(p)
        return rep

    def resume_raw(self, pause: PublishedPause | str, response: Any = DEFAULT, *,
                   token: str | None = None, run_id: str | None = None,
                   session: str = SESSION, scope: str = SCOPE,
                   responder: str = RESPONDER) -> Any:
        args = self.resume_args(pause, response, token=token, run_id=run_id, session=session,
                                scope=scope, responder=responder)
        return self._answered(self.adapter.resume(args), "resume")

    def resume_args(self, pause: PublishedPause | str, response: Any = DEFAULT, *,
                    token: str | None = None, run_id: str | None = None,
                    session: str = SESSION, scope: str = SCOPE,
                    responder: str = RESPONDER) -> ResumeArgs:
        if isinstance(pause, str):
            tok, rid = pause, run_id or "r1"
        else:
            tok, rid = pause.token, pause.run_id
        return ResumeArgs(token=token if token is not None else tok,
                          response=YES if response is DEFAULT else response,
                          run_id=run_id or rid, session_id=session, scope=scope,
                          responder=responder)

    def resume(self, pause: PublishedPause, response: Any = DEFAULT, *,
               clause_id: ClauseId | None = None, replayed: bool = False,
               **kw: Any) -> ResumeData:
        """Resume that must be accepted (a first consume unless ``replayed``)."""
        what = f"resume of {pause.interrupt_id}"
        data: ResumeData = self._unwrap(self.resume_raw(pause, response, **kw), what,
                                        clause_id)
        self._saw_run(data.run, what, invoked=not data.replayed
                      and data.run.status in ("done", "cancelled", "error"))
        self.expect(data.replayed == replayed,
                    clause_id or ("replay.same-response" if replayed
                                  else "resume.consume.at-most-once"),
                    {"replayed": replayed}, {"replayed": data.replayed},
                    f"{what}: wrong replayed flag")
        return data

    def refuse_resume(self, pause: PublishedPause, codes: Iterable[str | ErrorCode],
                      clause_id: ClauseId, what: str = "", response: Any = DEFAULT,
                      **kw: Any) -> Refused:
        return self.expect_refused(self.resume_raw(pause, response, **kw), codes, clause_id,
                                   what or f"resume of {pause.interrupt_id}")

    def cancel(self, run_id: str, clause_id: ClauseId | None = None) -> CancelData:
        data: CancelData = self._unwrap(self.adapter.cancel(CancelArgs(run_id=run_id)),
                                        f"cancel {run_id}", clause_id)
        self._saw_run(data.run, f"cancel {run_id}", invoked=False)
        return data

    def advance(self, ms: int) -> None:
        self._unwrap(self.adapter.advance_clock(AdvanceClockArgs(ms=ms)), "advance_clock",
                     None)
        self.now += ms

    def crash_restart(self, clause_id: ClauseId | None = None) -> RestartData:
        data: RestartData = self._unwrap(self.adapter.crash_restart(CrashRestartArgs()),
                                         "crash_restart", clause_id)
        for rep in data.runs:
            self._saw_run(rep, f"restart of {rep.run_id}", invoked=True)
        for p in data.pauses:
            self._saw_pause(p)
        return data

    def reconcile_raw(self, pause: PublishedPause, resolution: str) -> Any:
        return self._answered(self.adapter.reconcile(ReconcileArgs(
            interrupt_id=pause.interrupt_id, resolution=Resolution(resolution))), "reconcile")

    def reconcile(self, pause: PublishedPause, resolution: str,
                  clause_id: ClauseId = "effect.reconcile") -> str:
        data = self._unwrap(self.reconcile_raw(pause, resolution),
                            f"reconcile {pause.interrupt_id}", clause_id)
        phase: str = data.phase
        self._saw_phase(pause.interrupt_id, phase)
        return phase

    def phase(self, pause: PublishedPause | str) -> str:
        iid = pause if isinstance(pause, str) else pause.interrupt_id
        data = self._unwrap(self.adapter.pause_state(PauseStateArgs(interrupt_id=iid)),
                            f"pause_state {iid}", "lifecycle.states")
        phase: str = data.phase
        self._saw_phase(iid, phase)
        return phase

    def expect_phase(self, pause: PublishedPause, phase: str | Iterable[str], clause_id: ClauseId,
                     message: str = "") -> str:
        want = {phase} if isinstance(phase, str) else set(phase)
        got = self.phase(pause)
        self.expect(got in want, clause_id, sorted(want) if len(want) > 1 else phase, got,
                    message or f"pause {pause.interrupt_id} is in the wrong phase")
        return got

    def count(self, run_id: str, key: str) -> int:
        data = self._unwrap(self.adapter.effect_count(EffectCountArgs(run_id=run_id, key=key)),
                            f"effect_count {run_id}/{key}", None)
        n: int = data.count
        return n

    def expect_count(self, run_id: str, key: str, n: int, clause_id: ClauseId,
                     message: str = "") -> None:
        got = self.count(run_id, key)
        self.expect(got == n, clause_id, n, got,
                    message or f"effect {key} of {run_id} ran {got} time(s), not {n}")

    def race(self, args: Sequence[ResumeArgs]) -> list[ResumeResult]:
        data = self._unwrap(self.adapter.race_resume(RaceResumeArgs(requests=list(args))),
                            "race_resume", None)
        results: list[ResumeResult] = list(data.results)
        self.expect(len(results) == len(args), "resume.consume.single-winner", len(args),
                    len(results), "race_resume must answer every request")
        for r in results:
            if isinstance(r, Errored):
                raise CheckErrored("a racing resume errored", r.traceback)
            if isinstance(r, Skipped):
                raise CheckSkipped(f"the implementation skipped a racing resume: {r.reason}")
            if isinstance(r, Ok):
                self._saw_run(r.data.run, "racing resume", invoked=False)
        return results

    def optional(self, op: str, args: Any) -> Any:
        """Call the optional operation ``op``: an adapter without it, or answering
        ``skipped``, ends the check skipped (never passed)."""
        method = optional_op(self.adapter, op)
        if method is None:
            raise CheckSkipped(f"the adapter does not offer the optional operation {op}")
        return self._answered(method(args), op)

    def status(self, run_id: str) -> str:
        """The run's status view (optional operation ``status``); a view outside the
        contract's vocabulary fails ``status.distinguishes``."""
        data = self._unwrap(self.optional("status", StatusArgs(run_id=run_id)),
                            f"status {run_id}", "status.distinguishes")
        view: str = data.view
        self.expect(view in RUN_VIEWS, "status.distinguishes", sorted(RUN_VIEWS), view,
                    f"status {run_id} answered a view the contract does not have")
        return view

    def expect_status(self, run_id: str, view: str, message: str) -> None:
        got = self.status(run_id)
        self.expect(got == view, "status.distinguishes", view, got,
                    f"status {run_id}: {message}")

    def rotate_key(self) -> str:
        """A new signing key (optional operation ``rotate_key``): its key id."""
        data = self._unwrap(self.optional("rotate_key", RotateKeyArgs()), "rotate_key",
                            "token.rotation.drain")
        kid: str = data.kid
        self.expect(bool(kid), "token.rotation.drain", "a key id", kid,
                    "rotate_key answered no key id")
        return kid

    def retire_key_raw(self, kid: str) -> Any:
        return self.optional("retire_key", RetireKeyArgs(kid=kid))

    def retire_key(self, kid: str) -> None:
        """Retire ``kid``, which must be accepted (a refusal fails token.rotation.drain)."""
        self._unwrap(self.retire_key_raw(kid), f"retiring the drained key {kid}",
                     "token.rotation.drain")

    def wiring_raw(self, checkpoints: Durability, ledger: Durability,
                   token_codec: TokenCodec = "none", interactions: Sequence[str] = ()) -> Any:
        """A trial wiring (optional operation ``wiring``): the raw result."""
        return self.optional("wiring", WiringArgs(
            checkpoints=checkpoints, ledger=ledger, token_codec=token_codec,
            interactions=list(interactions)))

    def needs_claim(self, group: Group) -> bool:
        return group in self.claimed


def run_check(adapter: Adapter, chk: Check, claimed: frozenset[Group],
              ttl_ms: int = TTL_MS) -> CaseResult:
    """Run one check on a fresh instance; every ending is accounted for."""
    base = CaseResult(id=chk.id, kind="check", description=chk.description,
                      clauses=chk.clauses, groups=tuple(sorted(g.value for g in chk.groups)),
                      outcome=CaseOutcome.PASSED)
    missing = chk.groups - claimed
    if missing:
        return attrs.evolve(base, outcome=CaseOutcome.NOT_CLAIMED,
                            message="needs unclaimed group(s): "
                            + ", ".join(sorted(g.value for g in missing)))
    ctx = Ctx(adapter, chk, claimed, ttl_ms)
    t0 = time.perf_counter()
    try:
        ctx.reset()
        chk.fn(ctx)
    except CheckFailed as f:
        return _failed(base, [*ctx.also, f], time.perf_counter() - t0)
    except CheckSkipped as s:
        return attrs.evolve(base, outcome=CaseOutcome.SKIPPED, message=s.reason,
                            duration_s=time.perf_counter() - t0)
    except CheckErrored as e:
        return attrs.evolve(base, outcome=CaseOutcome.ERRORED,
                            message=f"{e.what}\n{e.traceback}".strip(),
                            duration_s=time.perf_counter() - t0)
    except Exception:
        return attrs.evolve(base, outcome=CaseOutcome.ERRORED,
                            message="the check itself raised:\n" + traceback.format_exc(),
                            duration_s=time.perf_counter() - t0)
    if ctx.also:
        return _failed(base, ctx.also, time.perf_counter() - t0)
    return attrs.evolve(base, outcome=CaseOutcome.PASSED, duration_s=time.perf_counter() - t0)


def _failed(base: CaseResult, failures: Sequence[CheckFailed], seconds: float) -> CaseResult:
    """A failed case: its first failure, and every later one as ``also_failed``."""
    first = failures[0]
    return attrs.evolve(base, outcome=CaseOutcome.FAILED,
                        failed_clause=first.clause, expected=first.expected, got=first.got,
                        message=first.message, duration_s=seconds,
                        also_failed=tuple((f.clause, f.message) for f in failures[1:]))


# -- script shorthands -----------------------------------------------------------------------


def effect(key: str, fault: Fault | None = None) -> EffectStep:
    return EffectStep(key=key, fault=fault)


def ask(name: str = "approve", payload: Any = None, *, names: Sequence[str] | None = None,
        checkpoint_write: CheckpointWrite = "ok", tool_call_id: str | None = None,
        checkpoint: CheckpointBinding = "turn", handlers: Handlers | None = None
        ) -> InterruptStep:
    return InterruptStep(name=None if names else name, names=list(names) if names else None,
                         payload={} if payload is None else payload,
                         checkpoint_write=checkpoint_write, tool_call_id=tool_call_id,
                         checkpoint=checkpoint, handlers=handlers)


def gate(amount: float, allow_up_to: float, deny_over: float) -> GateStep:
    return GateStep(amount=amount, allow_up_to=allow_up_to, deny_over=deny_over)


def end() -> EndStep:
    return EndStep()
