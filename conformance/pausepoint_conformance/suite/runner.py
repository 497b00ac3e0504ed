"""Running the suite: handshake, checks, vectors, and a verdict for every clause.

Every case ends ``passed``, ``failed``, ``skipped`` (with the implementation's reason),
``errored`` or ``not_claimed`` -- nothing is silently dropped.  Every clause of the catalogue
gets a verdict:

* ``not_claimed`` -- its group is not claimed by the implementation;
* ``failed`` -- some case failed *on this clause* (a failure names the clause it breaks);
* ``errored`` -- no failure, but a case citing it errored (a crash, a hang, garbage);
* ``passed`` -- no failure or error, and at least one case citing it passed;
* ``inconclusive`` -- every case citing it that ran failed first on another clause;
* ``skipped`` -- every case citing it was skipped or needs another, unclaimed group.

The exit status is 0 only when every claimed clause is ``passed`` and at
least one case passed -- when the user selected a subset (``--only``, ``--no-checks``), clauses
nothing selected cites are ``untested`` and left out.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable, Sequence
from typing import Any

import attrs

from pausepoint.core.clauses import CLAUSES, Group
from pausepoint_conformance import __version__ as suite_version
from pausepoint_conformance.protocol.port import Adapter
from pausepoint_conformance.protocol.wire import (
    PROTOCOL_VERSION,
    Errored,
    HelloArgs,
    HelloData,
    Ok,
    Refused,
    Skipped,
)
from pausepoint_conformance.suite import checks as _checks  # noqa: F401 - registers the checks
from pausepoint_conformance.suite.framework import (
    CHECKS,
    TTL_MS,
    CaseOutcome,
    CaseResult,
    Check,
    run_check,
)


class Verdict:
    PASSED = "passed"
    FAILED = "failed"
    ERRORED = "errored"
    SKIPPED = "skipped"
    INCONCLUSIVE = "inconclusive"
    NOT_CLAIMED = "not_claimed"
    UNTESTED = "untested"


@attrs.frozen
class ClauseVerdict:
    id: str
    group: str
    level: str
    verdict: str
    why: str
    cases: tuple[str, ...] = ()

    def record(self) -> dict[str, Any]:
        return {"type": "clause", "id": self.id, "group": self.group, "level": self.level,
                "verdict": self.verdict, "why": self.why, "cases": list(self.cases)}


@attrs.define
class SuiteResult:
    header: dict[str, Any]
    cases: list[CaseResult] = attrs.field(factory=list)
    clauses: list[ClauseVerdict] = attrs.field(factory=list)
    duration_s: float = 0.0

    def counts(self) -> dict[str, int]:
        out = {o.value: 0 for o in CaseOutcome}
        for c in self.cases:
            out[c.outcome.value] += 1
        return out

    @property
    def exit_status(self) -> int:
        claimed = set(self.header.get("claimed", []))
        if not claimed:
            return 1
        if not any(c.outcome == CaseOutcome.PASSED for c in self.cases):
            return 1
        selection = bool(self.header.get("selection"))
        for v in self.clauses:
            if v.group not in claimed or v.verdict == Verdict.PASSED:
                continue
            if selection and v.verdict == Verdict.UNTESTED:
                continue  # outside the checks and vectors the user selected
            return 1
        return 0

    def footer(self) -> dict[str, Any]:
        verdicts: dict[str, int] = {}
        for v in self.clauses:
            verdicts[v.verdict] = verdicts.get(v.verdict, 0) + 1
        return {"type": "footer", **self.counts(), "clauses": verdicts,
                "exit_status": self.exit_status, "duration_s": round(self.duration_s, 3)}

    def records(self) -> list[dict[str, Any]]:
        return [self.header, *(c.record() for c in self.cases),
                *(v.record() for v in self.clauses), self.footer()]


def clause_verdicts(cases: Sequence[CaseResult], claimed: frozenset[Group]) -> list[ClauseVerdict]:
    out: list[ClauseVerdict] = []
    for c in CLAUSES:
        citing = [r for r in cases if c.id in r.clauses]
        failed = [r for r in cases if r.failure_message(c.id) is not None]
        ids = tuple(r.id for r in citing)
        base: dict[str, Any] = dict(id=c.id, group=c.group.value, level=c.level.value)
        if c.group not in claimed:
            out.append(ClauseVerdict(**base, verdict=Verdict.NOT_CLAIMED,
                                     why=f"the implementation does not claim the "
                                         f"{c.group.value} group", cases=ids))
            continue
        if failed:
            f = failed[0]
            more = f" (and {len(failed) - 1} more)" if len(failed) > 1 else ""
            out.append(ClauseVerdict(**base, verdict=Verdict.FAILED,
                                     why=f"{f.id}: {f.failure_message(c.id)}{more}",
                                     cases=tuple(r.id for r in failed)))
            continue
        errored = [r for r in citing if r.outcome == CaseOutcome.ERRORED]
        if errored:
            first = errored[0].message.strip().splitlines()[:1]
            out.append(ClauseVerdict(**base, verdict=Verdict.ERRORED,
                                     why=f"{errored[0].id} errored: "
                                         f"{first[0] if first else ''}",
                                     cases=tuple(r.id for r in errored)))
            continue
        passed = [r for r in citing if r.outcome == CaseOutcome.PASSED]
        if passed:
            nchk = sum(1 for r in passed if r.kind == "check")
            nvec = len(passed) - nchk
            parts = [f"{nchk} check{'s' if nchk != 1 else ''}"] if nchk else []
            if nvec:
                parts.append(f"{nvec} vector{'s' if nvec != 1 else ''}")
            out.append(ClauseVerdict(**base, verdict=Verdict.PASSED,
                                     why=" and ".join(parts) + " passed", cases=ids))
            continue
        stopped = [r for r in citing if r.outcome == CaseOutcome.FAILED]
        if stopped:
            r = stopped[0]
            out.append(ClauseVerdict(**base, verdict=Verdict.INCONCLUSIVE,
                                     why=f"every case citing it stopped at an earlier failure "
                                         f"({r.id} failed on {r.failed_clause})",
                                     cases=ids))
            continue
        if citing and all(r.outcome == CaseOutcome.NOT_CLAIMED for r in citing):
            out.append(ClauseVerdict(**base, verdict=Verdict.UNTESTED,
                                     why="only cases needing unclaimed groups cite it ("
                                         f"{citing[0].message})", cases=ids))
            continue
        if citing:
            r = citing[0]
            out.append(ClauseVerdict(**base, verdict=Verdict.SKIPPED,
                                     why=f"{r.id} {r.outcome.value}: {r.message}".strip(),
                                     cases=ids))
            continue
        out.append(ClauseVerdict(**base, verdict=Verdict.UNTESTED,
                                 why="no check or vector that ran cites this clause"))
    return out


CaseCallback = Callable[[CaseResult], None]


@attrs.frozen
class Plan:
    """What to run: the checks (by default all) and prepared vector cases."""

    checks: tuple[Check, ...] = attrs.field(factory=lambda: tuple(CHECKS))
    vectors: tuple[Any, ...] = ()  # pausepoint_conformance.vectors.replay.VectorCase
    ttl_ms: int = TTL_MS
    selection: bool = False
    """A subset chosen by the user (``--only``, ``--no-checks``): clauses that nothing selected
    cites are reported untested and do not fail the exit status."""

    @property
    def size(self) -> int:
        return len(self.checks) + len(self.vectors)


def handshake(adapter: Adapter) -> HelloData | str:
    """The implementation's hello, or why it failed."""
    try:
        res = adapter.hello(HelloArgs(protocol=PROTOCOL_VERSION,
                                      suite=f"pausepoint-conformance {suite_version}"))
    except Exception as exc:
        return f"hello raised {type(exc).__name__}: {exc}"
    if isinstance(res, Ok):
        data: HelloData = res.data
        if data.protocol != PROTOCOL_VERSION:
            return (f"the implementation speaks protocol {data.protocol}; the suite speaks "
                    f"{PROTOCOL_VERSION}")
        return data
    if isinstance(res, Errored):
        return f"hello errored:\n{res.traceback}"
    if isinstance(res, (Refused, Skipped)):
        return f"hello was {res.status}: {res!r}"
    return f"hello returned {res!r}"


def run_suite(adapter: Adapter, *, adapter_name: str, plan: Plan | None = None,
              on_case: CaseCallback | None = None) -> SuiteResult:
    """Run ``plan`` (by default every check) against ``adapter`` and judge every clause."""
    from pausepoint_conformance.vectors.replay import replay_case

    plan = plan or Plan()
    t0 = time.perf_counter()
    hello = handshake(adapter)
    header: dict[str, Any] = {
        "type": "header", "suite": {"name": "pausepoint-conformance", "version": suite_version},
        "protocol": PROTOCOL_VERSION, "adapter": adapter_name,
        "started_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "checks": len(plan.checks), "vectors": len(plan.vectors),
        "selection": plan.selection,
    }
    result = SuiteResult(header=header)
    if isinstance(hello, str):
        header.update(implementation=None, claimed=[], error=hello)
        case = CaseResult(id="hello", kind="handshake", description="the hello handshake",
                          clauses=(), groups=(), outcome=CaseOutcome.ERRORED, message=hello)
        result.cases.append(case)
        if on_case:
            on_case(case)
        result.clauses = [ClauseVerdict(id=c.id, group=c.group.value, level=c.level.value,
                                        verdict=Verdict.ERRORED,
                                        why="the hello handshake failed")
                          for c in CLAUSES]
        result.duration_s = time.perf_counter() - t0
        return result
    claimed = frozenset(hello.groups) | {Group.CORE}
    header.update(implementation=hello.implementation.model_dump(mode="json"),
                  claimed=sorted(g.value for g in claimed), notes=hello.notes)
    for chk in plan.checks:
        case = run_check(adapter, chk, claimed, plan.ttl_ms)
        result.cases.append(case)
        if on_case:
            on_case(case)
    for vec in plan.vectors:
        case = replay_case(adapter, vec, claimed)
        result.cases.append(case)
        if on_case:
            on_case(case)
    result.clauses = clause_verdicts(result.cases, claimed)
    result.duration_s = time.perf_counter() - t0
    return result
