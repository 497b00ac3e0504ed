"""Trace validation of the implementation: the events the reference's service and harness
really emitted (:mod:`pausepoint.engine.tracing`) become a ``pausepoint-trace/1`` trace of the
model's actions, which :func:`pausepoint.system.trace.validate` replays against the Python
model (and ``tla/TracePausepoint.tla`` can check with TLC).

The translation is a renaming, never a repair: each event maps to at most one action line,
in the order the events happened, and the model must allow every line.  What the model does
not describe is left out and said so:

* a resume refused for a fact of the request (authenticity, binding, scope, authority, the
  response's fit) -- the model's resumers send only well-formed answers -- is dropped with
  its read;
* a read that never reached a commit (the ledger had no such row) is dropped.

Events of a unit of work (``"unit": ID``, :mod:`pausepoint.engine.tracing`) count once the
log confirms the unit (``{"op": "confirmed", "unit": ID}``) and not at all when it says
``aborted``.  A unit never confirmed -- its process was killed between the commit and the
confirmation, or inside the commit -- is *in doubt*: its lines carry ``"unit"`` and
``"in_doubt": true``, and the validator takes them all or none of them, whichever the rest of
the log fits (:func:`pausepoint.system.trace.validate`).

Runs are numbered in the order they started, pauses in the order their run created them,
resume servers (threads) by the lowest number free when they read; the clock's readings
become ``Tick`` lines (one per millisecond: trace short runs with a short TTL).  The header's
constants are what the events show: the scripts and parents of the runs started, the TTL,
the last clock reading, how many resume servers read at once, the responses' digests and the
crashes.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final

import attrs

from pausepoint.engine.tracing import load_events
from pausepoint.system import model as m
from pausepoint.system import trace as tr

REQUEST_REFUSALS: Final[frozenset[str]] = frozenset({
    "token_invalid", "token_malformed", "binding_mismatch", "scope_mismatch",
    "responder_unauthorized", "response_invalid"})
"""Refusals of a request the model never sends: such a resume is not part of the trace."""


class Untranslatable(ValueError):
    """The events describe something the model has no action for (a gate, handlers, a
    refused pause...)."""


def _script(steps: Sequence[Mapping[str, Any]]) -> tuple[m.ScriptStep, ...]:
    out: list[m.ScriptStep] = []
    for st in steps:
        op = st.get("op")
        if op == "effect":
            out.append(m.Effect(str(st["key"])))
        elif op == "interrupt" and not st.get("handlers"):
            out.append(m.Ask(tuple(st.get("names") or [st.get("name")])))
        elif op == "end":
            out.append(m.End())
        else:
            raise Untranslatable(f"the model has no script step like {dict(st)!r}")
    if not out or not isinstance(out[-1], m.End):
        out.append(m.End())  # a script that runs off its end ends there
    return tuple(out)


@attrs.define
class _Translation:
    runs: dict[str, int] = attrs.field(factory=dict)
    scripts: list[tuple[m.ScriptStep, ...]] = attrs.field(factory=list)
    parents: list[int | None] = attrs.field(factory=list)
    slots: dict[str, tuple[int, int]] = attrs.field(factory=dict)
    nslots: list[int] = attrs.field(factory=list)
    resumers: dict[int, int] = attrs.field(factory=dict)  # thread -> resumer index
    pending: dict[int, dict[str, Any]] = attrs.field(factory=dict)  # thread -> its read line
    lines: list[dict[str, Any]] = attrs.field(factory=list)
    responses: set[str] = attrs.field(factory=set)
    cancelled: set[int] = attrs.field(factory=set)
    ttl: int | None = None
    now: int = 0
    most_resumers: int = 1
    crashes: int = 0
    doubt: str | None = None  # the unit in doubt whose event is being translated

    def run(self, run_id: str) -> int:
        if run_id not in self.runs:
            raise Untranslatable(f"run {run_id!r} was never started in this trace")
        return self.runs[run_id]

    def slot(self, pause: str) -> tuple[int, int]:
        if pause not in self.slots:
            raise Untranslatable(f"pause {pause!r} was never created in this trace")
        return self.slots[pause]

    def new_slot(self, run: int, pause: str) -> None:
        if pause in self.slots:
            return  # asked again after a crash: its first asking was in doubt and not taken
        self.slots[pause] = (run, self.nslots[run])
        self.nslots[run] += 1

    def emit(self, action: str, args: Sequence[object], result: str | None = None) -> None:
        names = tr.ARG_NAMES[action]
        line: dict[str, Any] = {"action": action, "args": dict(zip(names, args, strict=True)),
                                "state": {}}  # the state is the model's to find
        if result is not None:
            line["result"] = result
        if self.doubt is not None and action != "Tick":  # time passes in any case
            line.update(unit=self.doubt, in_doubt=True)
        self.lines.append(line)

    def clock(self, now: int) -> None:
        while self.now < now:
            self.now += 1
            self.emit("Tick", ())

    def event(self, e: Mapping[str, Any]) -> None:
        op = e["op"]
        self.clock(int(e.get("now", self.now)))
        if op == "start":
            r = len(self.runs)
            self.runs[e["run"]] = r
            self.scripts.append(_script(e["script"]))
            self.parents.append(None if not e.get("parent") else self.run(e["parent"]))
            self.nslots.append(0)
            if self.ttl is None:
                self.ttl = int(e["ttl"])
            self.emit("StartRun", (r,))
        elif op == "execute":
            r = self.run(e["run"])
            for pause in e.get("pauses", ()):
                self.new_slot(r, pause)
            self.emit("Execute", (r,))
        elif op in ("apply", "finish", "restart", "continue"):
            action = {"apply": "ApplyEffect", "finish": "FinishEffect", "restart": "Restart",
                      "continue": "Continue"}[op]
            self.emit(action, (self.run(e["run"]),))
        elif op == "cancel":
            self._cancel(self.run(e["run"]))
        elif op == "recover":
            self.new_slot(self.run(e["run"]), e["pause"])  # opened by the Restart before it
        elif op == "turn":
            self.emit("RecordTurnFailed" if e.get("failed") else "RecordTurn",
                      self.slot(e["pause"]))
        elif op == "expire":
            self.emit("Expire", self.slot(e["pause"]))
        elif op == "reconcile":
            self.emit("Reconcile", (*self.slot(e["pause"]), bool(e["applied"])))
        elif op == "crash":
            self.crashes += 1
            self.pending.clear()
            self.resumers.clear()
            self.emit("Crash", ())
        elif op == "read":
            self._read(e)
        elif op == "commit":
            self._commit(e)
        else:
            raise Untranslatable(f"unknown event {op!r}")

    def _cancel(self, r: int) -> None:
        """The service's cancel loop, as the model takes it: CancelBegin of the run, then, for
        the lowest-numbered run queued, CancelScan and CancelFinish (which queues its started,
        not yet cancelled children)."""
        if r in self.cancelled:
            return  # cancelled before: the service answers, nothing happens (CancelBegin off)
        self.emit("CancelBegin", (r,))
        queued = {r}
        while queued:
            d = min(queued)
            queued.discard(d)
            self.emit("CancelScan", (d,))
            self.emit("CancelFinish", (d,))
            self.cancelled.add(d)
            queued |= {c for c, p in enumerate(self.parents)
                       if p == d and c not in self.cancelled}

    def _read(self, e: Mapping[str, Any]) -> None:
        thread = int(e["thread"])
        if e["pause"] not in self.slots:
            return  # a token for no pause of this trace: refused before any read it matters
        busy = set(self.resumers.values())
        index = self.resumers.get(thread)
        if index is None:
            index = next(i for i in range(len(busy) + 1) if i not in busy)
            self.resumers[thread] = index
        self.most_resumers = max(self.most_resumers, index + 1)
        self.pending[thread] = {"index": index, "slot": self.slot(e["pause"]),
                                "response": str(e["response"]), "at": len(self.lines),
                                "version": e.get("version")}

    def _commit(self, e: Mapping[str, Any]) -> None:
        thread = int(e["thread"])
        read = self.pending.get(thread)
        if read is None:
            return
        result = str(e["result"])
        if result in REQUEST_REFUSALS:  # never part of the model: drop the read with it
            self.pending.pop(thread)
            self.resumers.pop(thread, None)
            return
        if "line" not in read:  # the read becomes a line when its commit is kept
            line = {"action": "ResumeRead", "args": dict(zip(
                tr.ARG_NAMES["ResumeRead"],
                (read["index"], *read["slot"], read["response"], "ok"), strict=True)),
                "state": {}, "seen": read["version"]}  # the version read: see lines()
            self.lines.insert(read["at"], line)
            for other in self.pending.values():  # later reads moved down by the insertion
                if other is not read and "line" not in other and other["at"] >= read["at"]:
                    other["at"] += 1
            read["line"] = line
            self.responses.add(read["response"])
        self.emit("ResumeCommit", (read["index"],), result)
        if result != "retry":
            self.pending.pop(thread)
            self.resumers.pop(thread, None)

    def finished(self) -> list[dict[str, Any]]:
        """The lines, each read's state the version of the row it read (what pins down,
        after a crash, whether a unit in doubt happened: the restart reads its outcome)."""
        out = []
        for line in self.lines:
            seen = line.pop("seen", None)
            if seen is not None:
                resumers: list[dict[str, Any]] = [{} for _ in range(self.most_resumers)]
                resumers[line["args"]["resumer"]] = {"seen_version": int(seen)}
                out.append({**line, "state": {"resumers": resumers}})
            else:
                out.append(line)
        return out

    def header(self) -> dict[str, Any]:
        cfg = m.Config(scripts=tuple(self.scripts), parents=tuple(self.parents),
                       ttl=self.ttl if self.ttl is not None else 1, max_time=self.now,
                       resumers=self.most_resumers,
                       responses=tuple(sorted(self.responses)) or ("",),
                       max_crashes=self.crashes)
        return tr.header(cfg)


def translate(events: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The ``pausepoint-trace/1`` records (header, Init, one line per action) of ``events``;
    :class:`Untranslatable` when they describe what the model has no action for."""
    evs = list(events)
    ended = {str(e["unit"]): e["op"] for e in evs if e["op"] in ("confirmed", "aborted")}
    t = _Translation()
    for e in evs:
        if e["op"] in ("confirmed", "aborted"):
            continue
        unit = None if e.get("unit") is None else str(e["unit"])
        if unit is not None and ended.get(unit) == "aborted":
            continue  # its write did not take place
        t.doubt = unit if unit is not None and unit not in ended else None
        t.event(e)
    return [t.header(), {"action": "Init", "args": {}, "state": {}}, *t.finished()]


def validate_events(events: Iterable[Mapping[str, Any]]) -> tr.Validation:
    """Translate the implementation's events and replay them against the model."""
    return tr.validate(translate(events))


def resolved(records: Sequence[Mapping[str, Any]], v: tr.Validation) -> list[dict[str, Any]]:
    """``records`` with each unit in doubt decided as the validation found it fits: its lines
    marked ``"skip": true`` when the trace fits only without it (the input of TLC, which
    checks the decision: ``tla/TracePausepoint.tla``)."""
    return [{**r, "skip": r["unit"] in v.skipped} if r.get("in_doubt") else dict(r)
            for r in records]


def judge_events(path: str | Path) -> str:
    """An event log file against the model, in a word: ``valid``, ``INVALID: <why>`` or
    ``untranslatable: <why>`` (what the model has no action for, or not an event log)."""
    try:
        v = validate_events(load_events(Path(path).read_text(encoding="utf-8")))
    except (Untranslatable, ValueError, OSError) as exc:
        return f"untranslatable: {exc}"
    return "valid" if v.ok else f"INVALID: {v.message}"


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m pausepoint_conformance.modelcheck.impltrace EVENTS [TRACE]``: translate an
    event log (a :class:`pausepoint.engine.tracing.FileTrace` file), validate it against the
    Python model, and write the ``pausepoint-trace/1`` trace to TRACE -- the input of
    ``tla/TracePausepoint.tla`` for TLC.  Exit 0 when it validates, 1 when not, 2 on bad
    input."""
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) not in (1, 2):
        print("usage: impltrace EVENTS [TRACE]", file=sys.stderr)
        return 2
    try:
        records = translate(load_events(Path(args[0]).read_text(encoding="utf-8")))
    except (OSError, ValueError) as exc:
        print(f"impltrace: {exc}", file=sys.stderr)
        return 2
    v = tr.validate(records)
    if len(args) == 2:
        Path(args[1]).write_text("".join(json.dumps(r, separators=(",", ":")) + "\n"
                                         for r in resolved(records, v)), encoding="utf-8")
    detail = f": {v.message}" if v.message else ""
    print(f"{'valid' if v.ok else 'INVALID'}: {v.lines} lines{detail}")
    return 0 if v.ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
