"""Model checking and lockstep: the Python system model against the TLA+ spec in ``tla/``.

Three pieces, all used by ``pausepoint check`` and by the tests:

* :func:`explore` -- the reference model (:mod:`pausepoint.system.model`) explored exhaustively
  (breadth first), every state checked against ``model.INVARIANTS`` and every step against
  ``model.ACTION_PROPERTIES``; it reports distinct states and depth the way TLC does, and
  stops at the first violation and at a state bound (verdict ``bound``).
* a canonical rendering of states shared by both sides: :func:`render_state` prints a model
  state in TLA+ value syntax exactly as ``tla/Pausepoint.tla`` represents it (records with
  sorted fields, 1-based indices, ``None`` as ``""`` / ``-1``), and :func:`parse_dump` reads
  TLC's ``-dump`` file back into the same canonical strings.  A 64-bit fingerprint of each
  string is what ``tla/results/*.states.gz`` records (sorted, so a diff names the states).
* :func:`run_tlc` -- TLC over every model of ``tla/manifest.json`` when a ``tla2tools.jar``
  is given, compared with the recorded results.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Final

import attrs

from pausepoint.core.lifecycle import PauseState
from pausepoint.core.script import to_tla_record
from pausepoint.system import model as m
from pausepoint.system import runmodel as rm
from pausepoint.system.trace import scripts_from_json, scripts_to_json

# The spec's folder: tla/ of a checkout, or the copy a wheel ships as package data (pyproject's
# force-include puts it next to this module).
_HERE: Final[Path] = Path(__file__).resolve()
TLA_DIR: Final[Path] = next((d for d in (_HERE.parents[3] / "tla", _HERE.parent / "tla")
                             if (d / "manifest.json").is_file()), _HERE.parents[3] / "tla")
MANIFEST: Final[str] = "manifest.json"

# -- constants ---------------------------------------------------------------------------------


def config_from_constants(c: Mapping[str, Any]) -> m.Config:
    """Build a model Config from a manifest's ``constants`` (JSON)."""
    return m.Config(scripts=scripts_from_json(c["scripts"]), parents=tuple(c["parents"]),
                    ttl=c["ttl"], max_time=c["max_time"], resumers=c["resumers"],
                    responses=tuple(c["responses"]), max_crashes=c["max_crashes"],
                    bindings=tuple(c.get("bindings", ["ok"])), keys=c.get("keys", 1),
                    seeded_bugs=frozenset(c.get("seeded_bugs", [])))


def constants_from_config(cfg: m.Config) -> dict[str, Any]:
    """The inverse of :func:`config_from_constants` (used by traces and tests)."""
    return {"scripts": scripts_to_json(cfg),
            "parents": [cfg.parent(r) for r in range(len(cfg.scripts))],
            "ttl": cfg.ttl, "max_time": cfg.max_time, "resumers": cfg.resumers,
            "responses": list(cfg.responses), "max_crashes": cfg.max_crashes,
            "bindings": list(cfg.bindings), "keys": cfg.keys,
            "seeded_bugs": sorted(cfg.seeded_bugs)}


def _tla_literal(value: object) -> str:
    """A JSON record, list or string in TLA+ syntax."""
    if isinstance(value, dict):
        return "[" + ", ".join(f"{k} |-> {_tla_literal(v)}" for k, v in value.items()) + "]"
    if isinstance(value, list):
        return "<<" + ", ".join(_tla_literal(v) for v in value) + ">>"
    return f'"{value}"'


def _tla_step(st: m.ScriptStep) -> str:
    return _tla_literal(to_tla_record(st))


def tla_constant_definitions(cfg: m.Config) -> dict[str, str]:
    """The TLA+ values of the spec's constants for ``cfg`` (what MC modules define)."""
    scripts = "<< " + ",\n     ".join(
        "<< " + ", ".join(_tla_step(st) for st in script) + " >>" for script in cfg.scripts
    ) + " >>"
    parents = "<<" + ", ".join(
        str((p + 1) if p is not None else 0)
        for p in (cfg.parent(r) for r in range(len(cfg.scripts)))) + ">>"
    return {
        "Scripts": scripts,
        "Parents": parents,
        "TTL": str(cfg.ttl),
        "MaxTime": str(cfg.max_time),
        "NResumers": str(cfg.resumers),
        "Responses": _tla_strings(cfg.responses),
        "MaxCrashes": str(cfg.max_crashes),
        "Bindings": _tla_strings(cfg.bindings),
        "NKeys": str(cfg.keys),
        "SeededBugs": _tla_strings(sorted(cfg.seeded_bugs)),
    }


def _tla_strings(xs: Iterable[str]) -> str:
    return "{" + ", ".join(f'"{x}"' for x in xs) + "}"


def normalise_ws(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def constants_problems(tla_dir: Path, name: str, spec: Mapping[str, Any]) -> list[str]:
    """Where the model's module and cfg do not define the constants the manifest records."""
    problems: list[str] = []
    want = _wanted_constants(spec)
    module = normalise_ws((tla_dir / f"{name}.tla").read_text())
    conf = normalise_ws((tla_dir / f"{name}.cfg").read_text())
    for const, mc_name in (("Scripts", "MCScripts"), ("Parents", "MCParents")):
        if f"{mc_name} == {normalise_ws(want[const])}" not in module:
            problems.append(f"{name}.tla: {mc_name} is not {want[const]}")
        if f"{const} <- {mc_name}" not in conf:
            problems.append(f"{name}.cfg: {const} is not bound to {mc_name}")
    for const in sorted(set(want) - {"Scripts", "Parents"}):
        if not re.search(rf"(^| ){const} = {re.escape(want[const])}( |$)", conf):
            problems.append(f"{name}.cfg: {const} is not {want[const]}")
    return problems


# -- the run level's constants (tla/PausepointRuns.tla, pausepoint.system.runmodel) ----------

RUN_LEVEL: Final[str] = "run"
"""A manifest model's ``level`` when it checks the run level (its constants are a
:class:`runmodel.RunConfig`'s, its spec ``PausepointRuns.tla``)."""


def is_run_level(spec: Mapping[str, Any]) -> bool:
    return spec.get("level") == RUN_LEVEL


def run_config_from_constants(c: Mapping[str, Any]) -> rm.RunConfig:
    """Build a run-level model's RunConfig from a manifest's ``constants`` (JSON)."""
    return rm.RunConfig(scripts=tuple(tuple(s) for s in c["scripts"]),
                        parents=tuple(c["parents"]), servers=c["servers"],
                        restarters=c["restarters"], max_crashes=c["max_crashes"],
                        max_store_fails=c["max_store_fails"], max_stalls=c["max_stalls"],
                        seeded_bugs=frozenset(c["seeded_bugs"]))


def run_constants_from_config(cfg: rm.RunConfig) -> dict[str, Any]:
    """The inverse of :func:`run_config_from_constants`."""
    return {"scripts": [list(s) for s in cfg.scripts], "parents": list(cfg.parents),
            "servers": cfg.servers, "restarters": cfg.restarters,
            "max_crashes": cfg.max_crashes, "max_store_fails": cfg.max_store_fails,
            "max_stalls": cfg.max_stalls, "seeded_bugs": sorted(cfg.seeded_bugs)}


def run_tla_constant_definitions(cfg: rm.RunConfig) -> dict[str, str]:
    """The TLA+ values of PausepointRuns' constants for ``cfg``."""
    return {
        "Scripts": "<< " + ", ".join(_tla_literal(list(s)) for s in cfg.scripts) + " >>",
        "Parents": "<<" + ", ".join(str(p) for p in cfg.parents) + ">>",
        "NServers": str(cfg.servers),
        "NRestarters": str(cfg.restarters),
        "MaxCrashes": str(cfg.max_crashes),
        "MaxStoreFails": str(cfg.max_store_fails),
        "MaxStalls": str(cfg.max_stalls),
        "SeededBugs": _tla_strings(sorted(cfg.seeded_bugs)),
    }


def _wanted_constants(spec: Mapping[str, Any]) -> dict[str, str]:
    if is_run_level(spec):
        return run_tla_constant_definitions(run_config_from_constants(spec["constants"]))
    return tla_constant_definitions(config_from_constants(spec["constants"]))


# -- canonical rendering ---------------------------------------------------------------------

TlaValue = Any  # int | bool | str | tuple (sequence) | dict (record) | frozenset (set)


class _Hashable(str):
    """A parsed set element kept as its canonical text (so sets of records are hashable)."""


def canon(v: TlaValue) -> str:
    """Canonical text of a TLA+ value: no spaces, record fields and set elements sorted."""
    if isinstance(v, _Hashable):
        return str(v)
    if isinstance(v, bool):
        return "TRUE" if v else "FALSE"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, str):
        return '"' + v + '"'
    if isinstance(v, tuple):
        return "<<" + ",".join(canon(x) for x in v) + ">>"
    if isinstance(v, dict):
        return "[" + ",".join(f"{k}|->{canon(v[k])}" for k in sorted(v)) + "]"
    if isinstance(v, frozenset):
        return "{" + ",".join(sorted(canon(x) for x in v)) + "}"
    raise TypeError(f"not a TLA+ value: {v!r}")


def _pause_value(ps: PauseState) -> dict[str, TlaValue]:
    return {"phase": ps.phase.value, "expires_at": ps.expires_at,
            "turn_recorded": ps.turn_recorded,
            "response_digest": "" if ps.response_digest is None else ps.response_digest,
            "consumed_at": -1 if ps.consumed_at is None else ps.consumed_at}


def _slot_value(x: m.Slot) -> dict[str, TlaValue]:
    return {"pc": x.pc + 1, "kind": x.kind.value, "state": _pause_value(x.state),
            "version": x.version, "consumes": x.consumes, "kid": x.kid, "root": x.root + 1,
            "write": x.write.value}


def _run_value(run: m.RunState) -> dict[str, TlaValue]:
    return {"phase": run.phase.value, "pc": run.pc + 1,
            "slots": tuple(_slot_value(x) for x in run.slots),
            "journal": tuple(j.value for j in run.journal), "counts": run.counts,
            "cancel": run.cancel.value}


def _resumer_value(res: m.Resumer) -> dict[str, TlaValue]:
    named = res.phase != m.ResumerPhase.IDLE
    return {"phase": res.phase.value, "run": res.run + 1 if named else 0,
            "slot": res.slot + 1 if named else 0, "response": res.response,
            "binding": res.binding, "seen": _pause_value(res.seen),
            "seen_version": res.seen_version, "told": res.told}


def _keys_value(s: m.System) -> dict[str, TlaValue]:
    return {"active": s.active_key, "retired": frozenset(s.retired)}


def state_value(s: m.System) -> dict[str, TlaValue]:
    """A model state as the TLA+ value of the spec's variables (a record of them)."""
    return {"now": s.now, "crashes": s.crashes, "keys": _keys_value(s),
            "runs": tuple(_run_value(r) for r in s.runs),
            "resumers": tuple(_resumer_value(r) for r in s.resumers)}


class Renderer:
    """:func:`canon` of :func:`state_value`, memoised per run and resumer (states share most
    of their parts, so this is what makes rendering every explored state cheap)."""

    def __init__(self) -> None:
        self._runs: dict[m.RunState, str] = {}
        self._res: dict[m.Resumer, str] = {}

    def run(self, run: m.RunState) -> str:
        got = self._runs.get(run)
        if got is None:
            got = self._runs[run] = canon(_run_value(run))
        return got

    def resumer(self, res: m.Resumer) -> str:
        got = self._res.get(res)
        if got is None:
            got = self._res[res] = canon(_resumer_value(res))
        return got

    def __call__(self, s: m.System) -> str:
        # the fields in sorted order: crashes, keys, now, resumers, runs
        return ("[crashes|->" + str(s.crashes) + ",keys|->" + canon(_keys_value(s))
                + ",now|->" + str(s.now)
                + ",resumers|-><<" + ",".join(self.resumer(r) for r in s.resumers)
                + ">>,runs|-><<" + ",".join(self.run(r) for r in s.runs) + ">>]")


def render_state(s: m.System) -> str:
    return canon(state_value(s))


def _plain(x: object) -> TlaValue:
    """A runmodel value as a TLA+ value: attrs classes become records, tuples sequences."""
    if isinstance(x, rm.Run | rm.Proc | rm.Entry | rm.World):
        return {f.name: _plain(getattr(x, f.name)) for f in attrs.fields(type(x))}
    if isinstance(x, tuple):
        return tuple(_plain(y) for y in x)
    return x


def world_value(w: rm.World) -> dict[str, TlaValue]:
    """A run-level state as the TLA+ value of PausepointRuns' variables (runmodel already
    writes its values as the spec does)."""
    value = _plain(w)
    assert isinstance(value, dict)
    return value


class WorldRenderer:
    """:func:`canon` of :func:`world_value`, memoised per run and process."""

    def __init__(self) -> None:
        self._parts: dict[rm.Run | rm.Proc, str] = {}

    def _part(self, x: rm.Run | rm.Proc) -> str:
        got = self._parts.get(x)
        if got is None:
            got = self._parts[x] = canon(_plain(x))
        return got

    def __call__(self, w: rm.World) -> str:
        # the fields in sorted order: crashes, procs, stalls, store, storefails
        return ("[crashes|->" + str(w.crashes)
                + ",procs|-><<" + ",".join(self._part(x) for x in w.procs)
                + ">>,stalls|->" + str(w.stalls)
                + ",store|-><<" + ",".join(self._part(x) for x in w.store)
                + ">>,storefails|->" + str(w.storefails) + "]")


def fingerprint(text: str) -> int:
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big")


# -- TLC value syntax ------------------------------------------------------------------------

_TOKEN = re.compile(r'<<|>>|\|->|:>|@@|[\[\](){},]|"(?:[^"\\]|\\.)*"|-?\d+|[A-Za-z_][A-Za-z0-9_]*'
                    r'|\S')


def _tokens(text: str) -> list[str]:
    out = _TOKEN.findall(text)
    for t in out:
        if len(t) == 1 and t not in "[](){}," and not (t.isalnum() or t == "_"):
            raise ValueError(f"cannot read TLA+ value: unexpected {t!r}")
    return out


def parse_value(text: str) -> TlaValue:
    """Read a value printed by TLC (records, sequences, sets, strings, integers, booleans,
    and ``(a :> x @@ b :> y)`` functions, which come back as dicts keyed by canonical text)."""
    toks = _tokens(text)
    pos = 0

    def value() -> TlaValue:
        nonlocal pos
        t = toks[pos]
        pos += 1
        if t == "<<":
            items: list[TlaValue] = []
            while toks[pos] != ">>":
                items.append(value())
                if toks[pos] == ",":
                    pos += 1
            pos += 1
            return tuple(items)
        if t == "[":
            rec: dict[str, TlaValue] = {}
            while toks[pos] != "]":
                name = toks[pos]
                assert toks[pos + 1] == "|->", toks[pos:pos + 3]
                pos += 2
                rec[name] = value()
                if toks[pos] == ",":
                    pos += 1
            pos += 1
            return rec
        if t == "{":
            elems: list[TlaValue] = []
            while toks[pos] != "}":
                elems.append(value())
                if toks[pos] == ",":
                    pos += 1
            pos += 1
            return frozenset(_Hashable(canon(e)) for e in elems)
        if t == "(":
            fn: dict[str, TlaValue] = {}
            while toks[pos] != ")":
                key = value()
                assert toks[pos] == ":>"
                pos += 1
                fn[canon(key)] = value()
                if toks[pos] == "@@":
                    pos += 1
            pos += 1
            return fn
        if t == "TRUE":
            return True
        if t == "FALSE":
            return False
        if t.startswith('"'):
            return str(json.loads(t))
        if re.fullmatch(r"-?\d+", t):
            return int(t)
        raise ValueError(f"unexpected token {t!r}")

    v = value()
    if pos != len(toks):
        raise ValueError(f"trailing input after a TLA+ value: {toks[pos:pos + 5]}")
    return v


_STATE_HEAD = re.compile(r"^State \d+:", re.MULTILINE)
_VAR_HEAD = re.compile(r"^/\\ ([A-Za-z_][A-Za-z0-9_]*) = ", re.MULTILINE)


def parse_states(text: str) -> Iterator[dict[str, TlaValue]]:
    """Each state of a TLC dump (or of an error trace) as a record of its variables."""
    blocks = _STATE_HEAD.split(text)[1:]
    for block in blocks:
        parts = _VAR_HEAD.split(block)
        rec: dict[str, TlaValue] = {}
        for name, body in zip(parts[1::2], parts[2::2], strict=True):
            rec[name] = parse_value(body)
        yield rec


def parse_dump(path: Path) -> list[str]:
    """The canonical strings of every state in a TLC ``-dump`` file."""
    text = path.read_text()
    return [canon(rec) for rec in parse_states(text)]


def write_fingerprints(path: Path, fps: Iterable[int]) -> None:
    data = b"".join(fp.to_bytes(8, "big") for fp in sorted(set(fps)))
    with gzip.GzipFile(filename="", mode="wb", fileobj=path.open("wb"), mtime=0) as f:
        f.write(data)


def read_fingerprints(path: Path) -> list[int]:
    data = gzip.decompress(path.read_bytes())
    return [int.from_bytes(data[i:i + 8], "big") for i in range(0, len(data), 8)]


# -- exhaustive exploration of the Python model ------------------------------------------------


@attrs.frozen
class Violation:
    invariant: str
    state: str
    trace: tuple[tuple[str, tuple[object, ...]], ...]


DEFAULT_MAX_STATES: Final[int] = 3_000_000
"""The explorer's default state bound: it stops there with the verdict ``bound`` (a seeded
bug can make the state space unbounded; the explorer must say so, not run out of memory)."""


@attrs.frozen
class Exploration:
    distinct: int
    generated: int
    depth: int
    seconds: float
    violations: tuple[Violation, ...]
    fingerprints: frozenset[int]
    bounded: bool = False  # stopped at the state bound before the search was complete

    @property
    def ok(self) -> bool:
        return not self.violations and not self.bounded

    @property
    def verdict(self) -> str:
        """``pass`` (complete, every property holds), ``violation`` or ``bound`` (stopped at
        the state bound: nothing is known about the rest)."""
        if self.violations:
            return "violation"
        return "bound" if self.bounded else "pass"


Successors = Callable[[Any, Any], Iterable[Any]]
"""``(config, state) -> labelled successors`` of either level's model."""


def explore(cfg: m.Config | rm.RunConfig, *, fingerprints: bool = True,
            successors: Successors | None = None,
            invariants: Mapping[str, Callable[[Any, Any], bool]] | None = None,
            action_properties: Mapping[str, Callable[[Any, Any, Any], bool]] | None = None,
            liveness: Mapping[str, Callable[[Any, Any, int], bool]] | None = None,
            stop_at_first: bool = True, max_states: int | None = DEFAULT_MAX_STATES,
            progress: Callable[[int, int], None] | None = None) -> Exploration:
    """Breadth-first search of every state reachable from the model's initial state (the
    pause level's :mod:`pausepoint.system.model` for a ``Config``, the run level's
    :mod:`pausepoint.system.runmodel` for a ``RunConfig``), checking every state against the
    model's ``INVARIANTS`` and every step against its ``ACTION_PROPERTIES``.  It stops at the
    first violation (unless ``stop_at_first`` is false) and at ``max_states`` distinct states
    (verdict ``bound``).

    The run level's ``LIVENESS`` properties (``liveness``) are checked on the complete state
    graph: from every reachable state in which run r was started, a state where the property
    holds for r must still be reachable (the spec checks them under fairness; a state from
    which no behaviour can get there violates them under any fairness).

    ``depth`` counts the initial state as depth 1 (as TLC does).  ``generated`` counts every
    successor produced (TLC's "states generated" also counts the initial states, which are
    added here too)."""
    run_level = isinstance(cfg, rm.RunConfig)
    mod: Any = rm if run_level else m
    succ: Successors = successors or mod.successors
    invs = mod.INVARIANTS if invariants is None else invariants
    acts = mod.ACTION_PROPERTIES if action_properties is None else action_properties
    lives = (rm.LIVENESS if run_level else {}) if liveness is None else liveness
    render: Callable[[Any], str] = WorldRenderer() if run_level else Renderer()
    t0 = time.perf_counter()
    init = mod.initial(cfg)
    parent: dict[Any, tuple[Any, str, tuple[object, ...]] | None] = {init: None}
    edges: dict[Any, list[Any]] = {}
    frontier = [init]
    depth = 1
    generated = 1
    violations: list[Violation] = []
    fps: set[int] = set()
    bounded = False

    def check(s: Any) -> None:
        if fingerprints:
            fps.add(fingerprint(render(s)))
        for name, inv in invs.items():
            if not inv(cfg, s):
                violations.append(Violation(name, render(s), _trace_to(parent, s)))
                if stop_at_first:
                    return

    def stop() -> bool:
        return bool(stop_at_first and violations) or bounded

    check(init)
    while frontier and not stop():
        nxt: list[Any] = []
        for s in frontier:
            out = edges.setdefault(s, []) if lives else []
            for lab in succ(cfg, s):
                generated += 1
                t = lab.state
                out.append(t)
                for name, prop in acts.items():
                    if not prop(cfg, s, t):
                        violations.append(Violation(name, render(t), _trace_to(parent, s)
                                                    + ((lab.action, lab.args),)))
                        if stop_at_first:
                            break
                if t in parent:
                    continue
                parent[t] = (s, lab.action, lab.args)
                nxt.append(t)
                check(t)
                if max_states is not None and len(parent) >= max_states:
                    bounded = True
                if stop():
                    break
            if stop():
                break
        if nxt:
            depth += 1
        frontier = nxt
        if progress is not None:
            progress(len(parent), depth)
    if lives and isinstance(cfg, rm.RunConfig) and not stop() and not frontier:
        violations += _stuck(cfg, parent, edges, lives, render, stop_at_first)
    return Exploration(distinct=len(parent), generated=generated, depth=depth,
                       seconds=time.perf_counter() - t0, violations=tuple(violations),
                       fingerprints=frozenset(fps), bounded=bounded)


def _stuck(cfg: rm.RunConfig, parent: Mapping[Any, Any], edges: Mapping[Any, list[Any]],
           lives: Mapping[str, Callable[[Any, Any, int], bool]], render: Callable[[Any], str],
           stop_at_first: bool) -> list[Violation]:
    """The liveness violations of a complete state graph: for each property and run, a
    reachable state of the started run from which no state where the property holds is
    reachable (backward search from the states where it holds)."""
    back: dict[Any, list[Any]] = {}
    for s, outs in edges.items():
        for t in outs:
            back.setdefault(t, []).append(s)
    found: list[Violation] = []
    for name, prop in lives.items():
        for r in cfg.runs:
            good = [s for s in parent if prop(cfg, s, r)]
            can = set(good)
            stack = list(good)
            while stack:
                for q in back.get(stack.pop(), ()):
                    if q not in can:
                        can.add(q)
                        stack.append(q)
            dead = [s for s in parent if s not in can and s.store[r - 1].status != rm.NONE]
            if dead:
                s = dead[0]  # the parent map is in breadth-first order: a shortest trace
                found.append(Violation(name, render(s), _trace_to(parent, s)))
                if stop_at_first:
                    return found
    return found


def _trace_to(parent: Mapping[Any, tuple[Any, str, tuple[object, ...]] | None],
              s: Any) -> tuple[tuple[str, tuple[object, ...]], ...]:
    steps: list[tuple[str, tuple[object, ...]]] = []
    cur = parent.get(s)
    while cur is not None:
        prev, action, args = cur
        steps.append((action, args))
        cur = parent.get(prev)
    return tuple(reversed(steps))


# -- the manifest ------------------------------------------------------------------------------


def load_manifest(tla_dir: Path = TLA_DIR) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((tla_dir / MANIFEST).read_text())
    return data


def lockstep_models(manifest: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    """The manifest's models that carry a recorded state-set (lockstep) file."""
    return [(name, spec) for name, spec in manifest["models"].items() if spec.get("states_file")]


@attrs.frozen
class LockstepResult:
    model: str
    exploration: Exploration
    expected_distinct: int
    expected_depth: int
    missing: int  # in TLC's set, not reached by Python
    extra: int  # reached by Python, not in TLC's set

    @property
    def ok(self) -> bool:
        return (self.exploration.ok and self.missing == 0 and self.extra == 0
                and self.exploration.distinct == self.expected_distinct
                and self.exploration.depth == self.expected_depth)


def model_config(spec: Mapping[str, Any]) -> m.Config | rm.RunConfig:
    """The Python model's constants for a manifest model, at its level."""
    if is_run_level(spec):
        return run_config_from_constants(spec["constants"])
    return config_from_constants(spec["constants"])


def lockstep(name: str, spec: Mapping[str, Any], tla_dir: Path = TLA_DIR,
             progress: Callable[[int, int], None] | None = None,
             successors: Successors | None = None) -> LockstepResult:
    ex = explore(model_config(spec), progress=progress, successors=successors)
    recorded = set(read_fingerprints(tla_dir / spec["states_file"]))
    return LockstepResult(model=name, exploration=ex,
                          expected_distinct=int(spec["tlc"]["distinct"]),
                          expected_depth=int(spec["tlc"]["depth"]),
                          missing=len(recorded - ex.fingerprints),
                          extra=len(ex.fingerprints - recorded))


# -- TLC -----------------------------------------------------------------------------------------

_RESULT_PATTERNS: Final[dict[str, re.Pattern[str]]] = {
    "generated_distinct": re.compile(
        r"^([\d,]+) states generated, ([\d,]+) distinct states found, (\d+) states left",
        re.MULTILINE),
    "depth": re.compile(r"^The depth of the complete state graph search is (\d+)\.", re.MULTILINE),
    "finished": re.compile(r"^Finished in (.*) at", re.MULTILINE),
    "violation": re.compile(r"^Error: (Invariant|Action property|Temporal properties|"
                            r"Deadlock)(.*)$", re.MULTILINE),
    "invariant": re.compile(r"^Error: Invariant (\w+) is violated", re.MULTILINE),
    "property": re.compile(r"^Error: Action property (\w+) is violated", re.MULTILINE),
}


@attrs.frozen
class TlcRun:
    model: str
    returncode: int
    generated: int | None
    distinct: int | None
    depth: int | None
    seconds: float
    violated: str | None
    output: str
    result_lines: tuple[str, ...]

    @property
    def outcome(self) -> str:
        if self.violated is not None:
            return "violation"
        return "pass" if self.returncode == 0 else "error"


def tlc_jar(explicit: str | None = None) -> str | None:
    jar = explicit or os.environ.get("TLA2TOOLS_JAR")
    return jar if jar and Path(jar).is_file() else None


def result_lines(output: str) -> tuple[str, ...]:
    keep = re.compile(r"^(Model checking completed|Error:|\d[\d,]* states generated|"
                      r"The depth of|Finished in|Progress\(|Deadlock|The number of states|"
                      r"Progress: .* traces generated|"
                      r"Temporal properties|Implied-temporal|Checking temporal)")
    return tuple(line for line in output.splitlines() if keep.match(line))


JAVA_OPTS: Final[tuple[str, ...]] = ("-Xmx4g", "-XX:+UseParallelGC")
"""TLC's JVM options: a 4 GiB heap at most (the machines that run it are shared)."""


def run_tlc(jar: str, model: str, tla_dir: Path = TLA_DIR, *, workers: int = 1,
            dump: Path | None = None, cfg: Path | None = None,
            extra: Sequence[str] = (), timeout: float | None = None) -> TlcRun:
    """Run TLC on ``tla/<model>.tla`` (with ``<model>.cfg`` or ``cfg``) in a scratch copy of
    ``tla/`` (TLC writes its states directory next to the spec)."""
    java = shutil.which("java") or "java"
    with tempfile.TemporaryDirectory(prefix="pausepoint-tlc-") as tmp:
        work = Path(tmp)
        for f in tla_dir.glob("*.tla"):
            shutil.copy(f, work / f.name)
        for f in tla_dir.glob("*.cfg"):
            shutil.copy(f, work / f.name)
        cmd = [java, *JAVA_OPTS, "-cp", jar, "tlc2.TLC", "-workers", str(workers),
               "-cleanup", "-metadir", str(work / "states")]
        if cfg is not None:
            cmd += ["-config", str(cfg)]
        if dump is not None:
            cmd += ["-dump", str(dump)]
        cmd += [*extra, f"{model}.tla"]
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, cwd=work, capture_output=True, text=True, timeout=timeout,
                              check=False)  # a failing run is reported with its return code
        secs = time.perf_counter() - t0
    out = proc.stdout + proc.stderr
    gd = _RESULT_PATTERNS["generated_distinct"].findall(out)
    dp = _RESULT_PATTERNS["depth"].findall(out)
    inv = _RESULT_PATTERNS["invariant"].search(out)
    prop = _RESULT_PATTERNS["property"].search(out)
    violated: str | None = None
    if inv:
        violated = inv.group(1)
    elif prop:
        violated = prop.group(1)
    elif (tp := re.search(r"^Error: Temporal property (\w+) was violated", out, re.MULTILINE)):
        violated = tp.group(1)
    elif "Temporal properties were violated" in out:
        violated = "temporal"
    elif re.search(r"^Error: Deadlock reached", out, re.MULTILINE):
        violated = "deadlock"
    sim = re.search(r"^The number of states generated: ([\d,]+)", out, re.MULTILINE)
    return TlcRun(
        model=model, returncode=proc.returncode,
        generated=(int(gd[-1][0].replace(",", "")) if gd
                   else int(sim.group(1).replace(",", "")) if sim else None),
        distinct=int(gd[-1][1].replace(",", "")) if gd else None,
        depth=int(dp[-1]) if dp else None, seconds=secs, violated=violated, output=out,
        result_lines=result_lines(out))


def compare_tlc(run: TlcRun, spec: Mapping[str, Any]) -> list[str]:
    """Differences between a TLC run and the manifest's record of that model."""
    problems: list[str] = []
    expect = spec["expect"]
    if expect == "pass":
        if run.outcome != "pass":
            problems.append(f"expected pass, TLC says {run.outcome}"
                            + (f" ({run.violated})" if run.violated else ""))
    else:
        want = spec.get("violates") or []
        if run.outcome != "violation":
            problems.append(f"expected a violation of {' or '.join(want)}, TLC says "
                            f"{run.outcome}")
        elif want and run.violated not in want:
            problems.append(f"expected a violation of {' or '.join(want)}, TLC reports "
                            f"{run.violated}")
    rec = spec.get("tlc", {})
    if expect == "pass":
        for key, got in (("distinct", run.distinct), ("depth", run.depth)):
            if key in rec and got != rec[key]:
                problems.append(f"{key}: TLC found {got}, the manifest records {rec[key]}")
    return problems


# -- recording -----------------------------------------------------------------------------------


def tlc_args(spec: Mapping[str, Any]) -> list[str]:
    return [str(a) for a in spec.get("tlc_args", [])]


def check_model_with_tlc(jar: str, name: str, spec: Mapping[str, Any],
                         tla_dir: Path = TLA_DIR, *, dump: Path | None = None,
                         workers: int = 1, timeout: float | None = None) -> TlcRun:
    """Run TLC over one manifest model (a Trace model: over each of its traces)."""
    if spec["kind"] == "Trace":
        return run_trace_models(jar, name, spec, tla_dir, workers=workers)
    return run_tlc(jar, name, tla_dir, workers=workers, dump=dump, extra=tlc_args(spec),
                   timeout=timeout)


def run_trace_models(jar: str, name: str, spec: Mapping[str, Any], tla_dir: Path,
                     *, workers: int = 1) -> TlcRun:
    """TLC over the Trace spec once per recorded trace (the trace file is a constant, so each
    run gets its own configuration); the runs' outputs are concatenated."""
    outputs: list[str] = []
    lines: list[str] = []
    worst: TlcRun | None = None
    total = 0.0
    base = (tla_dir / f"{name}.cfg").read_text()
    for trace in spec["traces"]:
        path = (tla_dir / trace).resolve()
        with tempfile.TemporaryDirectory(prefix="pausepoint-trace-") as tmp:
            cfg = Path(tmp) / f"{name}.cfg"
            cfg.write_text(base.replace('"TRACE_FILE"', json.dumps(str(path))))
            run = run_tlc(jar, name, tla_dir, workers=workers, cfg=cfg)
        steps = sum(1 for x in path.read_text().splitlines() if x.strip()) - 1
        if run.outcome == "pass" and run.depth != steps:
            # every line must be matched: the depth is the number of lines after the header
            run = attrs.evolve(run, violated=f"trace matched {run.depth} of {steps} lines")
        total += run.seconds
        outputs.append(f"==== {trace}\n{run.output}")
        lines.append(f"==== {trace}")
        lines.extend(run.result_lines)
        if worst is None or run.outcome != "pass":
            worst = run
    assert worst is not None
    return attrs.evolve(worst, output="\n".join(outputs), result_lines=tuple(lines),
                        seconds=total)


def record(jar: str, tla_dir: Path = TLA_DIR, names: Sequence[str] | None = None,
           *, workers: int = 1, log: Callable[[str], None] = print,
           timeout: float | None = None) -> dict[str, Any]:
    """Run TLC over the manifest's models and record what it said: the tlc figures in the
    manifest, TLC's output in results/<model>.txt, and each lockstep model's reachable state
    set (from TLC's -dump) as sorted fingerprints."""
    manifest = load_manifest(tla_dir)
    for name, spec in manifest["models"].items():
        if names and name not in names:
            continue
        log(f"TLC: {name} ...")
        with tempfile.TemporaryDirectory(prefix="pausepoint-dump-") as tmp:
            dump = Path(tmp) / "states" if spec.get("states_file") else None
            try:
                run = check_model_with_tlc(jar, name, spec, tla_dir, dump=dump,
                                           workers=workers, timeout=timeout)
            except subprocess.TimeoutExpired:
                log(f"  TLC did not finish within {timeout} s: {name} not recorded")
                continue
            if dump is not None and run.outcome == "pass":
                dumped = Path(str(dump) + ".dump")
                fps = [fingerprint(s) for s in parse_dump(dumped)]
                write_fingerprints(tla_dir / spec["states_file"], fps)
                if spec.get("dump_head_file"):
                    (tla_dir / spec["dump_head_file"]).write_text(
                        _dump_head(dumped.read_text(), DUMP_HEAD_STATES))
        if spec.get("result_file"):
            out = tla_dir / spec["result_file"]
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(_strip_volatile(run.output))
        spec["tlc"] = {"outcome": run.outcome, "violated": run.violated,
                       "generated": run.generated, "distinct": run.distinct,
                       "depth": run.depth, "seconds": round(run.seconds, 1)}
        problems = compare_tlc(run, {**spec, "tlc": {}})
        log(f"  {run.outcome} {' '.join(run.result_lines[-3:])}"
            + (f"  PROBLEM: {problems}" if problems else ""))
    manifest["sources"] = source_hashes(tla_dir)
    (tla_dir / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")
    return manifest


# -- spec files against the recorded results -------------------------------------------------


def source_hashes(tla_dir: Path = TLA_DIR) -> dict[str, str]:
    """The SHA-256 of every .tla and .cfg file of the spec directory, by file name."""
    return {f.name: hashlib.sha256(f.read_bytes()).hexdigest()
            for f in sorted([*tla_dir.glob("*.tla"), *tla_dir.glob("*.cfg")])}


def source_problems(tla_dir: Path = TLA_DIR,
                    manifest: Mapping[str, Any] | None = None) -> list[str]:
    """The spec files that changed, appeared or disappeared since TLC's results were recorded
    (the manifest's ``sources``): each needs ``pausepoint check --tlc JAR --record``."""
    recorded: Mapping[str, str] = (manifest or load_manifest(tla_dir)).get("sources", {})
    now = source_hashes(tla_dir)
    problems = [f"{n}: changed since TLC's results were recorded" for n in sorted(now)
                if n in recorded and recorded[n] != now[n]]
    problems += [f"{n}: new, no TLC results recorded with it" for n in sorted(now)
                 if n not in recorded]
    problems += [f"{n}: recorded but gone" for n in sorted(recorded) if n not in now]
    return problems


def state_set_problems(dump: Path, spec: Mapping[str, Any], tla_dir: Path = TLA_DIR
                       ) -> list[str]:
    """Compare the states of a TLC ``-dump`` with the model's recorded state set: the
    fingerprints each side has that the other lacks (not just how many there are)."""
    got = {fingerprint(x) for x in parse_dump(dump)}
    recorded = set(read_fingerprints(tla_dir / spec["states_file"]))
    problems: list[str] = []
    if got - recorded:
        problems.append(f"state set: {len(got - recorded)} states TLC reaches now are not in "
                        "the recorded set")
    if recorded - got:
        problems.append(f"state set: {len(recorded - got)} recorded states TLC no longer "
                        "reaches")
    return problems


DUMP_HEAD_STATES: Final[int] = 60


def _dump_head(text: str, n: int) -> str:
    """The first ``n`` states of a TLC dump, verbatim (kept so tests read TLC's own syntax)."""
    heads = list(_STATE_HEAD.finditer(text))
    return text if len(heads) <= n else text[:heads[n].start()]


def _strip_volatile(out: str) -> str:
    """TLC's output without the scratch directory's path."""
    return re.sub(r"/tmp/pausepoint-[\w/.-]*", "<tmp>", out)
