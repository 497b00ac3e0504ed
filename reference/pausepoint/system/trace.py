"""NDJSON traces of the system model, one line per action, named as the TLA+ actions.

A trace is what an implementation (or :mod:`pausepoint.system.model` itself) emits so that it can be
validated against the spec: by TLC with ``tla/TracePausepoint.tla``, and without TLC against the
Python model by :func:`validate`.  The format, ``pausepoint-trace/1``:

* line 1, the header: ``{"format": "pausepoint-trace/1", "constants": {...}}`` -- the spec's
  constants, ready for TLA+: ``Scripts`` (a list per run of steps ``{"kind": "effect", "key"}``,
  ``{"kind": "ask", "names": [...]}`` or ``{"kind": "end"}``), ``Parents`` (1-based parent run,
  0 for none), ``TTL``, ``MaxTime``, ``NResumers``, ``Responses``, ``MaxCrashes``,
  ``Bindings``, ``NKeys``, ``SeededBugs``;
* line 2: ``{"action": "Init", "args": {}, "state": {...}}``;
* then one line per step: ``{"action": NAME, "args": {...}, "state": {...}}`` where NAME is a TLA+
  action (the keys of :data:`ARG_NAMES`), ``args`` its arguments by name (``run``, ``slot``,
  ``resumer``, ``response``, ``binding``, ``applied``, ``key``; indices 0-based, as an
  implementation numbers its runs in script order) and ``state`` the observable post-state.
  ``ResumeCommit`` lines may carry ``"result"``: what the resume server answered
  (``consumed``, ``replayed``, an error code, or ``retry`` when the row's version had moved and
  it read again).

A line may also carry ``"unit": ID`` with ``"in_doubt": true``: it reports a write of a unit
of work whose commit the implementation's log never confirmed (the process was killed in
between).  Such a unit's lines happened all or none of them: the validator tries both, and the
rest of the trace must fit one.  ``"skip": true`` on them records the decision (every line of
the unit alike): TLC checks a trace so decided (``tla/TracePausepoint.tla``), skipping a
unit's lines only when they are in doubt.

Every field of ``state`` is optional: a validator checks the fields present and nothing else, so
an implementation emits what it can observe.  ``None`` is written as ``""`` (a response) and
``-1`` (a time), as in the spec.  The mapping of each field to the spec's variables and to the
Python attributes is the table in ``tla/TracePausepoint.tla``'s header.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, Final

import attrs

from pausepoint.core import script
from pausepoint.core.lifecycle import PauseState
from pausepoint.system import model as m

FORMAT: Final[str] = "pausepoint-trace/1"

ARG_NAMES: Final[dict[str, tuple[str, ...]]] = {
    "StartRun": ("run",), "Execute": ("run",), "ApplyEffect": ("run",),
    "FinishEffect": ("run",), "CancelBegin": ("run",), "CancelScan": ("run",),
    "CancelFinish": ("run",), "Restart": ("run",), "Continue": ("run",),
    "RecordTurn": ("run", "slot"), "RecordTurnFailed": ("run", "slot"),
    "Expire": ("run", "slot"), "MarkUnknown": ("run", "slot"),
    "Reconcile": ("run", "slot", "applied"),
    "ResumeRead": ("resumer", "run", "slot", "response", "binding"),
    "ResumeCommit": ("resumer",), "Tick": (), "Crash": (), "Rotate": (), "Retire": ("key",),
}
"""Each action's arguments, by name, in the order of ``model.Labelled.args``."""


def scripts_to_json(cfg: m.Config) -> list[list[dict[str, Any]]]:
    """The model's scripts as the TLA+ spec's records (shared by trace headers and the TLA+
    manifest): :func:`pausepoint.core.script.to_tla_record`."""
    return [[script.to_tla_record(st) for st in steps] for steps in cfg.scripts]


def scripts_from_json(scripts: Sequence[Sequence[Mapping[str, Any]]]
                      ) -> tuple[tuple[m.ScriptStep, ...], ...]:
    """The inverse of :func:`scripts_to_json`; an unknown step kind is a ``ValueError``."""
    return tuple(tuple(script.from_tla_record(st) for st in steps) for steps in scripts)


def header(cfg: m.Config) -> dict[str, Any]:
    parents = [0 if (p := cfg.parent(r)) is None else p + 1 for r in range(len(cfg.scripts))]
    return {"format": FORMAT, "constants": {
        "Scripts": scripts_to_json(cfg), "Parents": parents, "TTL": cfg.ttl,
        "MaxTime": cfg.max_time, "NResumers": cfg.resumers, "Responses": list(cfg.responses),
        "MaxCrashes": cfg.max_crashes, "Bindings": list(cfg.bindings), "NKeys": cfg.keys,
        "SeededBugs": sorted(cfg.seeded_bugs)}}


def config_from_header(h: Mapping[str, Any]) -> m.Config:
    if h.get("format") != FORMAT:
        raise ValueError(f"not a {FORMAT} trace header: {h!r}")
    c = h["constants"]
    parents = tuple(None if p == 0 else p - 1 for p in c["Parents"])
    return m.Config(scripts=scripts_from_json(c["Scripts"]), parents=parents, ttl=c["TTL"],
                    max_time=c["MaxTime"], resumers=c["NResumers"],
                    responses=tuple(c["Responses"]), max_crashes=c["MaxCrashes"],
                    bindings=tuple(c.get("Bindings", ["ok"])), keys=c.get("NKeys", 1),
                    seeded_bugs=frozenset(c.get("SeededBugs", [])))


def _pause(ps: PauseState) -> dict[str, Any]:
    return {"phase": ps.phase.value, "expires_at": ps.expires_at,
            "turn_recorded": ps.turn_recorded,
            "response": "" if ps.response_digest is None else ps.response_digest,
            "consumed_at": -1 if ps.consumed_at is None else ps.consumed_at}


def observe(s: m.System) -> dict[str, Any]:
    """The observable fields of a model state, as a trace line's ``state``."""
    return {
        "now": s.now, "crashes": s.crashes, "active_key": s.active_key,
        "retired": sorted(s.retired),
        "runs": [{"phase": run.phase.value, "pc": run.pc, "cancel": run.cancel.value,
                  "journal": [j.value for j in run.journal], "counts": list(run.counts),
                  "slots": [{"kind": x.kind.value, "pc": x.pc, "version": x.version,
                             "consumes": x.consumes, "kid": x.kid, "root": x.root,
                             "write": x.write.value, **_pause(x.state)} for x in run.slots]}
                 for run in s.runs],
        "resumers": [{"phase": res.phase.value,
                      "run": res.run, "slot": res.slot, "response": res.response,
                      "binding": res.binding, "told": res.told,
                      "seen_version": res.seen_version} for res in s.resumers],
    }


def line(action: str, args: Sequence[object], post: m.System,
         result: str | None = None) -> dict[str, Any]:
    names = ARG_NAMES[action] if action != "Init" else ()
    rec: dict[str, Any] = {"action": action, "args": dict(zip(names, args, strict=True)),
                           "state": observe(post)}
    if result is not None:
        rec["result"] = result
    return rec


@attrs.define
class TraceWriter:
    """Collects trace lines (as dicts); :meth:`dumps` renders NDJSON."""

    cfg: m.Config
    lines: list[dict[str, Any]] = attrs.field(factory=list)

    def __attrs_post_init__(self) -> None:
        self.lines.append(header(self.cfg))

    def init(self, s: m.System) -> None:
        self.lines.append(line("Init", (), s))

    def step(self, action: str, args: Sequence[object], post: m.System,
             result: str | None = None) -> None:
        self.lines.append(line(action, args, post, result))

    def dumps(self) -> str:
        return "".join(json.dumps(x, separators=(",", ":")) + "\n" for x in self.lines)


RARE: Final[dict[str, float]] = {"CancelBegin": 0.05, "Crash": 0.15, "Tick": 0.3,
                                 "Retire": 0.3, "Rotate": 0.3}
"""Default walk weights: actions that end or reset a run are drawn less often, so a walk
gets somewhere before it is cut short (every other action weighs 1)."""


def random_walk(cfg: m.Config, steps: int, seed: int,
                weights: Mapping[str, float] = RARE) -> TraceWriter:
    """A trace of a random walk through the model (deterministic by seed), stopping early
    when nothing is enabled."""
    rng = random.Random(seed)
    w = TraceWriter(cfg)
    s = m.initial(cfg)
    w.init(s)
    for _ in range(steps):
        succ = list(m.successors(cfg, s))
        if not succ:
            break
        lab = rng.choices(succ, [weights.get(x.action, 1.0) for x in succ])[0]
        result = (m.commit_result(cfg, s, int(str(lab.args[0])))
                  if lab.action == "ResumeCommit" else None)
        w.step(lab.action, lab.args, lab.state, result)
        s = lab.state
    return w


# -- validation against the Python model ---------------------------------------------------------


def matches(recorded: Any, observed: Any) -> bool:
    """Every field present in ``recorded`` equals ``observed``'s (lists: same length, each
    element matching)."""
    if isinstance(recorded, dict):
        return isinstance(observed, dict) and all(
            k in observed and matches(v, observed[k]) for k, v in recorded.items())
    if isinstance(recorded, list):
        return (isinstance(observed, list) and len(recorded) == len(observed)
                and all(matches(a, b) for a, b in zip(recorded, observed, strict=True)))
    return bool(recorded == observed) and type(recorded) is type(observed)


@attrs.frozen
class Validation:
    ok: bool
    lines: int
    message: str = ""
    skipped: frozenset[str] = frozenset()
    """The units in doubt the trace fits without (their lines did not happen)."""


def parse(text: str) -> list[dict[str, Any]]:
    return [json.loads(x) for x in text.splitlines() if x.strip()]


def validate(records: Iterable[Mapping[str, Any]]) -> Validation:
    """Replay a trace against the Python model: each line's action, with its arguments, must
    be an enabled successor of a state the previous lines allow, leading to a state that
    matches the line's recorded fields (and, for ``ResumeCommit``, its ``result``)."""
    recs = list(records)
    if not recs:
        return Validation(False, 0, "empty trace")
    try:
        cfg = config_from_header(recs[0])
    except (KeyError, ValueError, TypeError) as exc:
        return Validation(False, 1, f"bad header: {exc}")
    if len(recs) < 2 or recs[1].get("action") != "Init":
        return Validation(False, 1, "line 2 must be the Init line")
    init = m.initial(cfg)
    if not matches(recs[1].get("state", {}), observe(init)):
        return Validation(False, 2, "the Init line does not match model.initial")
    problem = _skip_problem(recs[2:])
    if problem:
        return Validation(False, 2, problem)
    # each state the lines so far allow, with the decisions taken on the units in doubt
    # (unit -> its lines happened)
    current: set[tuple[m.System, frozenset[tuple[str, bool]]]] = {(init, frozenset())}
    for n, rec in enumerate(recs[2:], start=3):
        action = rec.get("action")
        if action not in ARG_NAMES:
            return Validation(False, n, f"line {n}: unknown action {action!r}")
        try:
            args = tuple(rec.get("args", {})[a] for a in ARG_NAMES[action])
        except KeyError as exc:
            return Validation(False, n, f"line {n}: {action} lacks argument {exc}")
        unit = str(rec["unit"]) if rec.get("in_doubt") else None
        nxt: set[tuple[m.System, frozenset[tuple[str, bool]]]] = set()
        for s, decided in current:
            taken = dict(decided).get(unit) if unit is not None else True
            options: tuple[bool, ...] = (True, False) if taken is None else (taken,)
            if "skip" in rec:
                options = tuple(o for o in options if o != bool(rec["skip"]))
            for happened in options:
                now = decided if taken is not None else decided | {(str(unit), happened)}
                if not happened:
                    nxt.add((s, now))
                    continue
                for t in _steps(cfg, s, rec, action, args):
                    nxt.add((t, now))
        if not nxt:
            return Validation(False, n, f"line {n}: {action}{list(args)} is not an enabled "
                              "step leading to the recorded state")
        current = nxt
    _s, decided = min(current, key=lambda x: sorted(x[1]))
    return Validation(True, len(recs),
                      skipped=frozenset(u for u, happened in decided if not happened))


def _steps(cfg: m.Config, s: m.System, rec: Mapping[str, Any], action: str,
           args: tuple[Any, ...]) -> Iterator[m.System]:
    """The successors of ``s`` by the line ``rec``'s action and arguments, matching its
    result and recorded state."""
    for lab in m.successors(cfg, s):
        if lab.action != action or lab.args != args:
            continue
        if ("result" in rec and action == "ResumeCommit"
                and m.commit_result(cfg, s, int(str(args[0]))) != rec["result"]):
            continue
        if matches(rec.get("state", {}), observe(lab.state)):
            yield lab.state


def _skip_problem(lines: Sequence[Mapping[str, Any]]) -> str:
    """A decided trace's ``skip`` marks, checked as TLC checks them: only on lines in doubt,
    and alike on every line of a unit."""
    marks: dict[str, set[bool]] = {}
    for n, rec in enumerate(lines, start=3):
        if rec.get("skip") and not rec.get("in_doubt"):
            return f"line {n}: skipped, but not in doubt"
        if rec.get("in_doubt"):
            marks.setdefault(str(rec.get("unit")), set()).add(bool(rec.get("skip", False)))
    split = sorted(u for u, v in marks.items() if len(v) > 1)
    return f"unit {split[0]}: some of its lines skipped, not all" if split else ""
