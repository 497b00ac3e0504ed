"""Generating scenario vectors: exhaustive to a depth, random (Hypothesis) beyond it.

Each *family* fixes a set of scripted runs (started in order at the beginning of every case).
After that, a case is a sequence of operations -- resumes (valid, or with an altered token,
another scope or session, an invalid response; with the answer ``yes`` or ``no``), clock
advances, cancels, crash-and-restarts, reconciliations -- each chosen among those enabled in the
model state reached so far.  The expected outcome of every operation and the observable state
after it come from :class:`~pausepoint_conformance.vectors.driver.ModelDriver`.

``depth`` N: every enabled sequence of at most N operations after the starts (exhaustive).
``random`` M: M more cases of N+1 to N+6 operations drawn by Hypothesis, deterministic by
``seed``.  Cases are deduplicated by id.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Final

import attrs

from pausepoint.core.lifecycle import LIVE, Phase
from pausepoint.core.script import Ask, Effect, End, Fault, to_json
from pausepoint.system.model import SlotKind
from pausepoint_conformance.suite.framework import TTL_MS
from pausepoint_conformance.vectors.driver import RESPONSES, ModelDriver, RunSpec
from pausepoint_conformance.vectors.replay import (
    FLAG_NOTES,
    SCHEMA_ID,
    VectorCase,
    VectorFile,
    case_id,
    generator_info,
    write_file,
)

TTL_UNITS: Final[int] = 2


def _e(key: str, fault: str | None = None) -> Effect:
    return Effect(key, Fault(fault) if fault else None)


def _a(*names: str, fail: bool = False) -> Ask:
    return Ask(names, payload={"q": names[0] if len(names) == 1 else "several"},
               checkpoint_write="fail" if fail else "ok")


END = End()


@attrs.frozen
class Family:
    name: str
    description: str
    runs: tuple[RunSpec, ...]


FAMILIES: Final[tuple[Family, ...]] = (
    Family("basic", "an effect, a question, an effect",
           (RunSpec("r1", (_e("a"), _a("approve"), _e("b"), END)),)),
    Family("two-questions", "two questions in sequence with effects between",
           (RunSpec("r1", (_a("approve"), _e("b"), _a("confirm"), _e("c"), END)),)),
    Family("multi", "two questions at once, answered independently",
           (RunSpec("r1", (_e("a"), _a("approve", "confirm"), _e("b"), END)),)),
    Family("crash-after-apply", "the process dies after an effect applied, before it was "
           "journalled finished", (RunSpec("r1", (_e("a", "crash_after_apply"), _a("approve"),
                                                   _e("b"), END)),)),
    Family("crash-before-apply", "the process dies after an effect was journalled started, "
           "before it applied", (RunSpec("r1", (_e("a", "crash_before_apply"), _a("approve"),
                                                 END)),)),
    Family("lineage", "a parent run and its child, both paused",
           (RunSpec("r1", (_a("approve"), _e("b"), END)),
            RunSpec("r2", (_e("c"), _a("confirm"), _e("d"), END), parent_run_id="r1"))),
    Family("unrecorded", "a question whose turn-checkpoint write fails",
           (RunSpec("r1", (_a("approve", fail=True), _e("b"), END)),)),
)

Op = tuple[Any, ...]


def enabled(d: ModelDriver) -> list[Op]:
    """Operations enabled in the driver's state (after the family's starts)."""
    if d.stopped():
        return [("crash_restart",)]
    ops: list[Op] = []
    for ref in d.refs():
        slot = d.slot(ref)
        phase = slot.state.phase
        if phase in LIVE:
            ops.append(("resume", ref, "yes", "valid"))
            if slot.kind == SlotKind.ASK:
                ops.append(("resume", ref, "no", "valid"))
            for variant in ("altered_token", "other_scope", "other_session",
                            "invalid_response"):
                ops.append(("resume", ref, "yes", variant))
            if ((slot.kind == SlotKind.RECOVERY and phase == Phase.UNKNOWN_OUTCOME)
                    or (slot.kind == SlotKind.ASK and phase == Phase.RESUMABLE)):
                ops.append(("reconcile", ref))
        else:
            ops.append(("resume", ref, "yes", "valid"))
            if phase == Phase.CONSUMED:
                ops.append(("resume", ref, "no", "valid"))
    ops.append(("advance", 1))
    for spec in d.runs:
        if d.can_cancel(spec.run_id):
            ops.append(("cancel", spec.run_id))
    ops.append(("crash_restart",))
    return ops


def _describe_op(op: Op) -> str:
    kind = op[0]
    if kind == "start":
        return f"start {op[1]}"
    if kind == "resume":
        extra = "" if op[3] == "valid" else f" ({op[3].replace('_', ' ')})"
        return f"answer {op[1]} {op[2]}{extra}"
    if kind == "advance":
        return f"advance {op[1]}/{TTL_UNITS} ttl"
    if kind == "cancel":
        return f"cancel {op[1]}"
    if kind == "reconcile":
        return f"reconcile {op[1]}"
    return "crash and restart"


def build_case(family: Family, ops: Sequence[Op], ttl_ms: int = TTL_MS) -> VectorCase:
    """Play ``ops`` (after the family's starts) on the model; the case with every expectation."""
    d = ModelDriver(family.runs, ttl_units=TTL_UNITS)
    unit = ttl_ms // TTL_UNITS
    steps: list[dict[str, Any]] = []
    clauses: set[str] = {"lifecycle.states", "lifecycle.transition.table"}
    groups: set[Any] = set()
    all_ops: list[Op] = [("start", r.run_id) for r in family.runs] + list(ops)
    for op in all_ops:
        kind = op[0]
        step: dict[str, Any]
        if kind == "start":
            exp = d.start(op[1])
            step = {"op": "start", "run": op[1]}
        elif kind == "resume":
            exp = d.resume(op[1], op[2], op[3])
            step = {"op": "resume", "pause": op[1], "response": RESPONSES[op[2]],
                    "variant": op[3]}
        elif kind == "advance":
            exp = d.advance(op[1])
            step = {"op": "advance_clock", "ms": op[1] * unit}
        elif kind == "cancel":
            exp = d.cancel(op[1])
            step = {"op": "cancel", "run": op[1]}
        elif kind == "reconcile":
            resolution, exp = d.reconcile(op[1])
            step = {"op": "reconcile", "pause": op[1], "resolution": resolution}
        else:
            exp = d.crash_restart()
            step = {"op": "crash_restart"}
        step["expect"] = exp.expect
        step["clauses"] = list(exp.clauses)
        if exp.flags:
            step["flags"] = list(exp.flags)
        step["check"] = d.observe()
        steps.append(step)
        clauses.update(exp.clauses)
        groups.update(exp.groups)
    runs = [{"run_id": r.run_id, "parent_run_id": r.parent_run_id, "session_id": r.session_id,
             "scope": r.scope, "script": [to_json(s) for s in r.script]} for r in family.runs]
    for r in runs:
        if r["parent_run_id"] is None:
            del r["parent_run_id"]
    desc = f"{family.name}: " + ("; ".join(_describe_op(o) for o in ops) or "start only")
    case = VectorCase.model_validate({
        "id": "", "description": desc, "clauses": sorted(clauses),
        "groups": sorted(g.value for g in groups | {_core()}), "runs": runs, "steps": steps})
    written = case.model_dump(mode="json", by_alias=True, exclude_none=True)
    return case.model_copy(update={"id": case_id(ttl_ms, written["runs"], written["steps"])})


def _core() -> Any:
    from pausepoint.core.clauses import Group

    return Group.CORE


def _play(family: Family, ops: Sequence[Op]) -> ModelDriver:
    d = ModelDriver(family.runs, ttl_units=TTL_UNITS)
    for r in family.runs:
        d.start(r.run_id)
    for op in ops:
        _apply(d, op)
    return d


def _apply(d: ModelDriver, op: Op) -> None:
    kind = op[0]
    if kind == "resume":
        d.resume(op[1], op[2], op[3])
    elif kind == "advance":
        d.advance(op[1])
    elif kind == "cancel":
        d.cancel(op[1])
    elif kind == "reconcile":
        d.reconcile(op[1])
    elif kind == "crash_restart":
        d.crash_restart()
    else:  # pragma: no cover
        raise ValueError(op)


def exhaustive(family: Family, depth: int) -> Iterator[tuple[Op, ...]]:
    """Every enabled operation sequence of length 0..depth, depth-first."""
    def walk(d: ModelDriver, prefix: tuple[Op, ...]) -> Iterator[tuple[Op, ...]]:
        yield prefix
        if len(prefix) >= depth:
            return
        for op in enabled(d):
            nxt = d.copy()
            _apply(nxt, op)
            yield from walk(nxt, prefix + (op,))
    yield from walk(_play(family, ()), ())


def random_sequences(count: int, depth: int, seed: int) -> list[tuple[Family, tuple[Op, ...]]]:
    """``count`` sequences of depth+1 .. depth+6 operations, drawn by Hypothesis from the
    enabled operations, deterministic by ``seed``."""
    if count <= 0:
        return []
    from hypothesis import HealthCheck, given, settings
    from hypothesis import Phase as HPhase
    from hypothesis import seed as hseed
    from hypothesis import strategies as st

    out: list[tuple[Family, tuple[Op, ...]]] = []

    @hseed(seed)
    @settings(max_examples=count, database=None, deadline=None, phases=[HPhase.generate],
              suppress_health_check=list(HealthCheck))
    @given(st.data())
    def draw(data: st.DataObject) -> None:
        family = data.draw(st.sampled_from(FAMILIES), label="family")
        n = data.draw(st.integers(depth + 1, depth + 6), label="length")
        d = _play(family, ())
        ops: list[Op] = []
        for _ in range(n):
            op = data.draw(st.sampled_from(enabled(d)))
            _apply(d, op)
            ops.append(op)
        out.append((family, tuple(ops)))

    draw()
    return out


def generate(depth: int = 2, random: int = 0, seed: int = 0, ttl_ms: int = TTL_MS,
             families: Sequence[Family] = FAMILIES) -> dict[str, VectorFile]:
    """Vector files by family: exhaustive to ``depth``, plus ``random`` Hypothesis cases."""
    chosen = {f.name: f for f in families}
    cases: dict[str, dict[str, VectorCase]] = {f.name: {} for f in families}
    for f in families:
        for ops in exhaustive(f, depth):
            c = build_case(f, ops, ttl_ms)
            cases[f.name].setdefault(c.id, c)
    extra = 0
    attempt = 0
    while extra < random and attempt < 5:
        want = random - extra
        for f, ops in random_sequences(want * (attempt + 1), depth, seed + attempt):
            if f.name not in chosen or extra >= random:
                continue
            c = build_case(f, ops, ttl_ms)
            if c.id not in cases[f.name]:
                cases[f.name][c.id] = c
                extra += 1
        attempt += 1
    info = generator_info(depth, random, seed)
    out: dict[str, VectorFile] = {}
    for f in families:
        if not cases[f.name]:
            continue
        out[f.name] = VectorFile.model_validate({
            "$schema": SCHEMA_ID,
            "format_version": 1, "generator": info.model_dump(), "family": f.name,
            "description": f.description, "ttl_ms": ttl_ms, "notes": dict(FLAG_NOTES),
            "cases": [c.model_dump(mode="json", by_alias=True) for c in cases[f.name].values()],
        })
    return out


def write_all(out_dir: Path, files: dict[str, VectorFile]) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, vf in files.items():
        p = out_dir / f"{name}.json"
        write_file(p, vf)
        paths.append(p)
    return paths


__all__ = [
    "FAMILIES",
    "Family",
    "build_case",
    "enabled",
    "exhaustive",
    "generate",
    "random_sequences",
    "write_all",
]
