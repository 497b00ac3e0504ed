"""Scenario vectors: the file format, loading, and replaying a case through any adapter.

A vector file is one JSON document (schema ``spec/schemas/vector-file.json``, generated from
:class:`VectorFile`) recording its schema, format version and generator version, with notes
explaining its flags, and a list of cases.  Each case has an immutable ``id`` (a hash of its
content), a unique description, the clauses it exercises, the groups an implementation must
claim to run it, the scripted runs, and a step list: the operation, what it must return
(computed by the reference model, :mod:`pausepoint_conformance.vectors.driver`) and the observable
state after it (every pause's phase, every effect's execution count).

Where the contract allows two answers, the step says so with a flag (like Wycheproof's
``acceptable``): ``token_error`` -- an altered token may be refused as ``token_invalid`` or
``token_malformed``.

Pauses are named by *reference*: ``<run id>#<k>`` is the k-th pause point of that run, in the
order it was published.  The replayer learns each reference's interrupt id and token from the
implementation's answers.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Annotated, Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue, ValidationError

from pausepoint.core.canonical import canonical_json, digest
from pausepoint.core.clauses import Group
from pausepoint.core.lifecycle import LIVE
from pausepoint_conformance import __version__ as suite_version
from pausepoint_conformance.protocol.port import Adapter
from pausepoint_conformance.protocol.wire import (
    SCHEMA_BASE,
    AdvanceClockArgs,
    CancelArgs,
    CrashRestartArgs,
    EffectCountArgs,
    Errored,
    ModelledStep,
    Ok,
    PauseStateArgs,
    PublishedPause,
    ReconcileArgs,
    Refused,
    ResetArgs,
    Resolution,
    ResumeArgs,
    Skipped,
    StartArgs,
)
from pausepoint_conformance.suite.framework import CaseOutcome, CaseResult, describe
from pausepoint_conformance.suite.mutations import alter

FORMAT_VERSION: Final[int] = 1
SCHEMA_ID: Final[str] = SCHEMA_BASE + "vector-file.json"
GENERATOR_NAME: Final[str] = "pausepoint scenarios"

FLAG_NOTES: Final[dict[str, str]] = {
    "token_error": "an altered token may be refused as token_invalid or token_malformed (which "
                   "one depends on where the change lands); both codes are acceptable",
}


class _M(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ExpectedPause(_M):
    """A pause the operation must publish."""

    ref: str = Field(description="<run id>#<k>: the k-th pause point of the run, in the order "
                                 "it was published; later steps name the pause by it")
    kind: Literal["ask", "recovery"] = Field(
        description="ask: a question to a person (an interrupt step); recovery: the pause a "
                    "restart publishes for an effect whose outcome is unknown")
    resumable: bool = Field(description="whether the pause is already resumable (its turn "
                                        "checkpoint recorded) when published")
    name: str | None = Field(default=None, description="the interaction name (ask pauses)")


class Expect(_M):
    """What the operation must return.  ``result`` ok or refused; for refused, one of
    ``codes``; for ok, the fields given (each is compared when present)."""

    result: Literal["ok", "refused"] = Field(
        description="ok: the operation must happen; refused: it must be refused with one of "
                    "codes and change nothing")
    codes: list[str] | None = Field(
        default=None, description="refused: the acceptable error codes (the contract's closed "
                                  "set); more than one only where a flag says so")
    status: str | None = Field(
        default=None, description="start / resume: the run's status afterwards (paused, done, "
                                  "error, cancelled)")
    replayed: bool | None = Field(
        default=None, description="resume: true when the answer repeats an accepted one and "
                                  "the first result comes back without running anything")
    pauses: list[ExpectedPause] | None = Field(
        default=None, description="start / resume / crash_restart: the pauses the operation "
                                  "must publish, in order")
    phase: str | None = Field(
        default=None, description="reconcile: the pause's phase afterwards (resumable or "
                                  "paused)")


class Observed(_M):
    """The observable state after the step: ``pauses`` maps references to phases, ``effects``
    maps ``<run id>/<key>`` to execution counts."""

    pauses: dict[str, str] = Field(
        default_factory=dict, description="pause reference -> its phase after the step "
                                          "(paused, resumable, consumed, expired, ...)")
    effects: dict[str, int] = Field(
        default_factory=dict, description="<run id>/<effect key> -> how many times the effect "
                                          "has executed so far (never more than once)")


class _Step(_M):
    expect: Expect = Field(description="what the operation must return")
    clauses: list[str] = Field(description="the clauses this step exercises: a mismatch here "
                                           "fails the first of them")
    flags: list[str] = Field(default_factory=list,
                             description="where the contract allows two answers: each flag "
                                         "is explained in the file's notes")
    check: Observed = Field(description="the observable state after the step, compared with "
                                        "the implementation's pause_state and effect_count")


class StartOp(_Step):
    """Start a run and drive it until it pauses or ends."""

    op: Literal["start"] = Field(description="start a run and drive it until it pauses or ends")
    run: str = Field(description="the run id (one of the case's runs)")


class ResumeOp(_Step):
    """Answer a pause."""

    op: Literal["resume"] = Field(description="answer a pause with a response")
    pause: str = Field(description="the pause reference (<run id>#<k>) whose token is used")
    response: JsonValue = Field(description="the response sent (JSON)")
    variant: Literal["valid", "altered_token", "other_scope", "other_session",
                     "invalid_response"] = Field(
        default="valid",
        description="valid: the pause's own token and binding; altered_token: one character "
                    "of the token changed; other_scope / other_session: a request from "
                    "another scope or session; invalid_response: a response that does not fit "
                    "the interaction's schema")


class AdvanceOp(_Step):
    """Move the implementation's clock."""

    op: Literal["advance_clock"] = Field(description="move the clock forward")
    ms: int = Field(ge=0, description="milliseconds to advance")


class CancelOp(_Step):
    """Cancel a run (and its child runs)."""

    op: Literal["cancel"] = Field(description="cancel a run; cancellation reaches its children")
    run: str = Field(description="the run id to cancel")


class CrashRestartOp(_Step):
    """Lose everything volatile, then restart from the store."""

    op: Literal["crash_restart"] = Field(
        description="the process dies (everything volatile lost) and restarts from the store")


class ReconcileOp(_Step):
    """Settle an unknown outcome."""

    op: Literal["reconcile"] = Field(description="settle a pause whose effect outcome is unknown")
    pause: str = Field(description="the recovery pause's reference")
    resolution: Literal["applied", "not_applied"] = Field(
        description="what really happened to the effect: applied or not_applied")


VectorStep = Annotated[StartOp | ResumeOp | AdvanceOp | CancelOp | CrashRestartOp | ReconcileOp,
                       Field(discriminator="op")]


class VectorRun(_M):
    """One scripted run of the case."""

    run_id: str = Field(description="the run's id, used by steps and pause references")
    parent_run_id: str | None = Field(
        default=None, description="the parent run (lineage: a cancel reaches child runs)")
    session_id: str = Field(description="the session the run's pauses are bound to")
    scope: str = Field(description="the scope (tenant) the run's pauses are bound to")
    script: list[ModelledStep] = Field(
        description="the steps the run executes: effects, interrupts (questions), end")


class VectorCase(_M):
    """One scenario: runs, and the operations on them with their expected outcomes."""

    id: str = Field(description="v1- and the first 24 hex digits of the SHA-256 of the canonical "
                                "JSON of {ttl_ms, runs, steps} as written: it changes when the "
                                "case does")
    description: str = Field(description="the operations in words, unique in the file")
    clauses: list[str] = Field(description="every clause the case's steps exercise")
    groups: list[Group] = Field(description="the clause groups an implementation must claim "
                                            "for the case to run; otherwise not claimed")
    runs: list[VectorRun] = Field(description="the scripted runs")
    steps: list[VectorStep] = Field(description="the operations, in order, each with what it "
                                                "must return and the state after it")


class Generator(_M):
    """Who wrote the file, and with which settings."""

    name: str = Field(description="the generator (pausepoint scenarios)")
    version: str = Field(description="the suite version that generated the file")
    depth: int | None = Field(default=None, description="--depth: every operation sequence "
                                                        "up to this length")
    random: int | None = Field(default=None, description="--random: how many random longer "
                                                         "cases")
    seed: int | None = Field(default=None, description="--seed of the random cases")


class VectorFile(_M):
    """A file of scenario vectors."""

    schema_: str = Field(alias="$schema", default=SCHEMA_ID,
                         description="the schema's id (urn:pausepoint:schema:vector-file.json)")
    format_version: Literal[1] = Field(default=1, description="the format version: 1")
    generator: Generator = Field(description="who wrote the file, and with which settings")
    family: str = Field(description="the family of scripted runs the cases share")
    description: str = Field(description="the family in words")
    ttl_ms: int = Field(gt=0, description="the pause time-to-live every case uses, in "
                                          "milliseconds (an implementation is reset with it)")
    notes: dict[str, str] = Field(default_factory=dict,
                                  description="flag -> what it allows")
    cases: list[VectorCase] = Field(description="the cases")


def case_id(ttl_ms: int, runs: Sequence[dict[str, Any]], steps: Sequence[dict[str, Any]]) -> str:
    """The immutable id: ``v1-`` and the first 24 hex digits of the SHA-256 of the canonical
    JSON of ``{"ttl_ms", "runs", "steps"}`` exactly as the file writes them (null fields
    omitted) -- everything the case says, its expectations included."""
    body = canonical_json({"ttl_ms": ttl_ms, "runs": list(runs), "steps": list(steps)})
    return "v1-" + digest(body)[:24]


# -- loading ---------------------------------------------------------------------------------


class LoadedCase:
    """A case with the file it came from (its ttl and source)."""

    def __init__(self, case: VectorCase, ttl_ms: int, source: str) -> None:
        self.case = case
        self.ttl_ms = ttl_ms
        self.source = source

    @property
    def id(self) -> str:
        return self.case.id


class VectorFileError(ValueError):
    """A vector file that cannot be read or is not a vector file; the message names the file
    and the first problems, one line."""


def _problems(exc: ValidationError, limit: int = 3) -> str:
    errs = exc.errors(include_url=False)
    shown = [f"{'.'.join(str(x) for x in e['loc']) or '(document)'}: {e['msg']}"
             for e in errs[:limit]]
    more = f" (and {len(errs) - limit} more)" if len(errs) > limit else ""
    return "; ".join(shown) + more


def load_file(path: Path) -> VectorFile:
    """One vector file, or a :class:`VectorFileError` naming it."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise VectorFileError(f"vector file {path} cannot be read: {exc}") from None
    try:
        return VectorFile.model_validate_json(text)
    except ValidationError as exc:
        raise VectorFileError(f"vector file {path} is not a valid vector file: "
                              f"{_problems(exc)}; regenerate it with `pausepoint scenarios` "
                              "or check it against spec/schemas/vector-file.json") from None


def load_files(paths: Iterable[Path]) -> list[LoadedCase]:
    out: list[LoadedCase] = []
    for p in paths:
        vf = load_file(p)
        out.extend(LoadedCase(c, vf.ttl_ms, p.name) for c in vf.cases)
    return out


def vector_paths(where: Path) -> list[Path]:
    if where.is_file():
        return [where]
    return sorted(p for p in where.glob("*.json") if p.is_file())


# -- replay ----------------------------------------------------------------------------------


class _Mismatch(Exception):
    """A step's observation differs from the model's.  ``probe`` names what was observed (a
    pause's phase, an effect's count) when the symptom can be traced back to the step that
    caused it, and ``wrong`` is the value it had."""

    def __init__(self, clause_id: str, expected: Any, got: Any, message: str,
                 probe: tuple[str, str] | None = None, wrong: Any = None) -> None:
        super().__init__(message)
        self.clause = clause_id
        self.expected = expected
        self.got = got
        self.message = message
        self.probe = probe
        self.wrong = wrong


class _Stop(Exception):
    def __init__(self, outcome: CaseOutcome, message: str) -> None:
        super().__init__(message)
        self.outcome = outcome
        self.message = message


class _Replay:
    def __init__(self, adapter: Adapter, lc: LoadedCase) -> None:
        self.a = adapter
        self.lc = lc
        self.runs = {r.run_id: r for r in lc.case.runs}
        self.pauses: dict[str, PublishedPause] = {}

    def _data(self, result: Any, what: str) -> Any:
        if isinstance(result, Ok):
            return result.data
        if isinstance(result, Skipped):
            raise _Stop(CaseOutcome.SKIPPED, f"the implementation skipped {what}: {result.reason}")
        if isinstance(result, Errored):
            raise _Stop(CaseOutcome.ERRORED, f"{what} errored:\n{result.traceback}")
        return None

    def _compare_result(self, step: Any, result: Any, what: str) -> Any:
        exp: Expect = step.expect
        clause_id = step.clauses[0]
        if isinstance(result, (Skipped, Errored)):
            self._data(result, what)
        if exp.result == "refused":
            if not isinstance(result, Refused):
                raise _Mismatch(clause_id, {"refused": exp.codes}, describe(result),
                                f"{what} must be refused")
            if exp.codes and result.code not in exp.codes:
                raise _Mismatch(clause_id, {"refused": exp.codes}, describe(result),
                                f"{what} was refused with the wrong code")
            return None
        if not isinstance(result, Ok):
            raise _Mismatch(clause_id, "ok", describe(result), f"{what} must be accepted")
        return result.data

    def _assign(self, expected: list[ExpectedPause], actual: list[PublishedPause],
                clause_id: str, what: str) -> None:
        """Match published pauses to the expected references (known ids first, then new ones
        in order, by name and kind)."""
        by_id = {p.interrupt_id: ref for ref, p in self.pauses.items()}
        want = {e.ref: e for e in expected}
        got_refs: list[str] = []
        fresh: list[PublishedPause] = []
        for p in actual:
            ref = by_id.get(p.interrupt_id)
            if ref is None:
                fresh.append(p)
            else:
                got_refs.append(ref)
                self.pauses[ref] = p
        new_refs = [e for e in expected if e.ref not in self.pauses]
        for e in new_refs:
            match = next((p for p in fresh if p.kind == e.kind
                          and (e.name is None or p.name == e.name)), None)
            if match is None:
                break
            fresh.remove(match)
            self.pauses[e.ref] = match
            got_refs.append(e.ref)
        summary = sorted(got_refs) + [f"new {p.kind} {p.name}" for p in fresh]
        if fresh or sorted(got_refs) != sorted(want):
            raise _Mismatch(clause_id, sorted(want), summary,
                            f"{what}: the published pauses differ from the model's")
        for ref, e in want.items():
            p = self.pauses[ref]
            if p.resumable != e.resumable:
                raise _Mismatch("turn.resumable.earned", {ref: {"resumable": e.resumable}},
                                {ref: {"resumable": p.resumable}},
                                f"{what}: wrong resumable flag for {ref}")

    def _lost_change(self, expected: list[ExpectedPause], actual: list[PublishedPause],
                     what: str) -> None:
        """After a restart, a pause the model has decided (it reported so before the crash)
        published again *and live again*: the decision was reported but never committed."""
        want = {e.ref for e in expected}
        by_id = {p.interrupt_id: ref for ref, p in self.pauses.items()}
        for p in actual:
            ref = by_id.get(p.interrupt_id)
            if ref is None or ref in want:
                continue
            phase = self._data(self.a.pause_state(PauseStateArgs(interrupt_id=p.interrupt_id)),
                               f"pause_state of {ref}")
            if phase is not None and phase.phase in {p.value for p in LIVE}:
                raise _Mismatch("durability.commit-per-change", {ref: "decided"},
                                {ref: phase.phase}, f"{what}: pause {ref}, decided before the "
                                "crash, is live again after it: the change was reported "
                                "before it was committed")

    def _compare_run(self, step: Any, data: Any, what: str) -> None:
        exp: Expect = step.expect
        run = getattr(data, "run", data)
        if exp.replayed is not None and getattr(data, "replayed", None) != exp.replayed:
            raise _Mismatch("replay.same-response" if exp.replayed else
                            "resume.consume.at-most-once", {"replayed": exp.replayed},
                            {"replayed": getattr(data, "replayed", None)},
                            f"{what}: wrong replayed flag")
        if exp.status is not None and run.status.value != exp.status:
            raise _Mismatch(step.clauses[0], {"status": exp.status},
                            {"status": run.status.value}, f"{what}: wrong run status")
        if exp.pauses is not None:
            self._assign(exp.pauses, list(run.pauses), step.clauses[0], what)

    def _check(self, step: Any, what: str) -> None:
        for ref, phase in step.check.pauses.items():
            p = self.pauses.get(ref)
            if p is None:
                raise _Mismatch(step.clauses[0], {ref: phase}, "never published",
                                f"after {what}: pause {ref} was never published")
            data = self._data(self.a.pause_state(PauseStateArgs(interrupt_id=p.interrupt_id)),
                              f"pause_state {ref}")
            if data is None or data.phase != phase:
                got = data.phase if data is not None else "refused"
                raise _Mismatch(step.clauses[0], {ref: phase}, {ref: got},
                                f"after {what}: pause {ref} is in the wrong phase",
                                probe=("phase", ref), wrong=got)
        for key, n in step.check.effects.items():
            run_id, _, k = key.partition("/")
            data = self._data(self.a.effect_count(EffectCountArgs(run_id=run_id, key=k)),
                              f"effect_count {key}")
            got = data.count if data is not None else None
            if got != n:
                clause_id = ("effect.at-most-once" if got is not None and got > n
                             else "resume.continuation.recorded-turn")
                raise _Mismatch(clause_id, {key: n}, {key: got},
                                f"after {what}: effect {key} ran {got} time(s)",
                                probe=("effect", key), wrong=got)

    def observe(self, probe: tuple[str, str]) -> Any:
        """The current value of ``probe``: a pause's phase or an effect's count (None when
        the pause is not published yet, or the implementation answered otherwise)."""
        kind, name = probe
        if kind == "phase":
            p = self.pauses.get(name)
            if p is None:
                return None
            phase = self.a.pause_state(PauseStateArgs(interrupt_id=p.interrupt_id))
            return phase.data.phase if isinstance(phase, Ok) else "refused"
        run_id, _, key = name.partition("/")
        count = self.a.effect_count(EffectCountArgs(run_id=run_id, key=key))
        return count.data.count if isinstance(count, Ok) else None

    def step(self, i: int, step: Any) -> None:
        what = f"step {i + 1} ({step.op})"
        if isinstance(step, StartOp):
            spec = self.runs[step.run]
            res: Any = self.a.start(StartArgs(run_id=spec.run_id,
                                              parent_run_id=spec.parent_run_id,
                                              session_id=spec.session_id, scope=spec.scope,
                                              script=list(spec.script)))
            data = self._compare_result(step, res, what)
            if data is not None:
                self._compare_run(step, data, what)
        elif isinstance(step, ResumeOp):
            p = self.pauses[step.pause]
            spec = self.runs[p.run_id] if p.run_id in self.runs else self.runs[
                step.pause.rpartition("#")[0]]
            token, scope, session, response = p.token, spec.scope, spec.session_id, step.response
            if step.variant == "altered_token":
                token = alter(token, len(token) // 2)
            elif step.variant == "other_scope":
                scope = scope + "-other"
            elif step.variant == "other_session":
                session = session + "-other"
            elif step.variant == "invalid_response":
                response = [1]
            res = self.a.resume(ResumeArgs(token=token, response=response,
                                           run_id=step.pause.rpartition("#")[0],
                                           session_id=session, scope=scope))
            data = self._compare_result(step, res, what)
            if data is not None:
                self._compare_run(step, data, what)
        elif isinstance(step, AdvanceOp):
            self._compare_result(step, self.a.advance_clock(AdvanceClockArgs(ms=step.ms)), what)
        elif isinstance(step, CancelOp):
            data = self._compare_result(step, self.a.cancel(CancelArgs(run_id=step.run)), what)
            if data is not None:
                self._compare_run(step, data.run, what)
        elif isinstance(step, CrashRestartOp):
            before = {ref: p.token for ref, p in self.pauses.items()}
            data = self._compare_result(step, self.a.crash_restart(CrashRestartArgs()), what)
            if data is not None and step.expect.pauses is not None:
                self._lost_change(step.expect.pauses, list(data.pauses), what)
                self._assign(step.expect.pauses, list(data.pauses), step.clauses[0], what)
                for ref, tok in before.items():
                    if self.pauses[ref].token != tok:
                        raise _Mismatch("durability.token.reissue", "the same token",
                                        "another token",
                                        f"{what}: pause {ref} was published again with "
                                        "another token")
        elif isinstance(step, ReconcileOp):
            p = self.pauses[step.pause]
            data = self._compare_result(step, self.a.reconcile(ReconcileArgs(
                interrupt_id=p.interrupt_id, resolution=Resolution(step.resolution))), what)
            if data is not None and step.expect.phase is not None and \
                    data.phase != step.expect.phase:
                raise _Mismatch(step.clauses[0], {"phase": step.expect.phase},
                                {"phase": data.phase}, f"{what}: wrong phase")
        self._check(step, what)


def _cause(adapter: Adapter, lc: LoadedCase, failed_at: int, m: _Mismatch) -> str:
    """Where the failure came from: replay the case again on a fresh instance, observing
    ``m.probe`` after every step up to the failing one; the cause is the step that *changed* it
    to the wrong value it showed at the failure (which it then kept).  Empty when the failing
    step is its own cause -- it changed the value itself, or the value is wrong because
    nothing changed it (a step that should have, the failing one, did not) -- or when the
    replay does not reproduce the failure."""
    assert m.probe is not None
    r = _Replay(adapter, lc)
    seen: list[Any] = []
    try:
        if not isinstance(adapter.reset(ResetArgs(ttl_ms=lc.ttl_ms)), Ok):
            return ""
        for i, step in enumerate(lc.case.steps[:failed_at + 1]):
            try:
                r.step(i, step)
            except _Mismatch:
                if i != failed_at:
                    return ""
            seen.append(r.observe(m.probe))
    except (_Stop, Exception):
        return ""
    if not seen or seen[-1] != m.wrong:
        return ""
    first = failed_at
    while first > 0 and seen[first - 1] == m.wrong:
        first -= 1
    if first == failed_at or first == 0 or seen[first - 1] is None:
        return ""  # changed by the failing step, or never changed (merely published)
    step = lc.case.steps[first]
    return (f"; caused by step {first + 1} ({step.op}): {m.probe[0]} {m.probe[1]} was "
            f"{m.wrong!r} from that step on")


def replay_case(adapter: Adapter, lc: LoadedCase, claimed: frozenset[Group]) -> CaseResult:
    """Run one vector case on a fresh instance and compare every step with the model."""
    case = lc.case
    base: dict[str, Any] = dict(id=case.id, kind="vector", description=case.description,
                                clauses=tuple(case.clauses),
                                groups=tuple(g.value for g in case.groups), source=lc.source)
    missing = set(case.groups) - set(claimed)
    if missing:
        return CaseResult(**base, outcome=CaseOutcome.NOT_CLAIMED,
                          message="needs unclaimed group(s): "
                                  + ", ".join(sorted(g.value for g in missing)))
    t0 = time.perf_counter()
    r = _Replay(adapter, lc)
    try:
        reset = adapter.reset(ResetArgs(ttl_ms=lc.ttl_ms))
        if not isinstance(reset, Ok):
            r._data(reset, "reset")
            raise _Stop(CaseOutcome.ERRORED, f"reset was refused: {describe(reset)}")
        failed_at = -1
        for i, step in enumerate(case.steps):
            failed_at = i
            r.step(i, step)
    except _Mismatch as m:
        cause = _cause(adapter, lc, failed_at, m) if m.probe is not None else ""
        return CaseResult(**base, outcome=CaseOutcome.FAILED, failed_clause=m.clause,
                          expected=m.expected, got=m.got, message=m.message + cause,
                          duration_s=time.perf_counter() - t0)
    except _Stop as s:
        return CaseResult(**base, outcome=s.outcome, message=s.message,
                          duration_s=time.perf_counter() - t0)
    except Exception as exc:
        import traceback

        return CaseResult(**base, outcome=CaseOutcome.ERRORED,
                          message=f"replaying raised {type(exc).__name__}: {exc}\n"
                                  + traceback.format_exc(),
                          duration_s=time.perf_counter() - t0)
    return CaseResult(**base, outcome=CaseOutcome.PASSED, duration_s=time.perf_counter() - t0)


def write_file(path: Path, vf: VectorFile) -> None:
    data = vf.model_dump(mode="json", by_alias=True, exclude_none=True)
    path.write_text(json.dumps(data, indent=1, sort_keys=False) + "\n", encoding="utf-8")


def generator_info(depth: int | None, random: int | None, seed: int | None) -> Generator:
    return Generator(name=GENERATOR_NAME, version=suite_version, depth=depth, random=random,
                     seed=seed)
