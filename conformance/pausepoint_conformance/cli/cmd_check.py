"""Model-check the contract: the TLA+ spec in tla/ and the Python reference model, in lockstep.

Without TLC (the default, what CI runs) it checks, for every model of tla/manifest.json:

  lockstep   the reference model (pausepoint.system.model; for the run level's models,
             pausepoint.system.runmodel against PausepointRuns.tla) explored exhaustively,
             breadth first, with the model's constants reaches exactly the states TLC
             reached (the recorded state set tla/results/<model>.states.gz), with TLC's
             distinct-state count and depth,
             and every invariant of model.INVARIANTS (named as the spec's) holds in every
             state, lifecycle.terminal.absorbing on every step (the run level: its
             invariants, action properties, and its liveness property on the whole graph);
  constants  each MC/SIM module defines the constants the manifest records;
  sources    every .tla and .cfg file is as it was when TLC's results were recorded (the
             manifest's SHA-256 of each): a spec file changed without re-recorded results
             fails the check;
  traces     each recorded NDJSON trace (tla/traces/) replays against the Python model, line
             by line, as TLC replays it against the spec (TracePausepoint.tla).

With --tlc PATH (or TLA2TOOLS_JAR) it also runs TLC over every model of the manifest -- the
exhaustive MC models, the SIM random simulation, the seeded-bug models (which must fail with
the named property) and the trace spec over each trace -- and compares with what the manifest
records: for a lockstep model, the state set TLC reaches now (from its -dump) must equal the
recorded one, state for state.  --record rewrites those records (manifest figures, results/,
state sets, the spec files' SHA-256) from TLC.

Examples:
  pausepoint check                          # lockstep + constants + traces, no TLC
  pausepoint check --model MCPausepointLive # one model only
  pausepoint check --tlc ~/tla2tools.jar    # also run TLC over every model
  TLA2TOOLS_JAR=~/tla2tools.jar pausepoint check --record   # re-record TLC's results
  pausepoint check --trace run.ndjson       # validate your implementation's trace
  pausepoint check --model TracePausepoint --trace run.ndjson --tlc ~/tla2tools.jar
                                            # ... and have TLC check it against the spec
"""

from __future__ import annotations

import argparse
import json
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.progress import Progress, TaskID, TextColumn
from rich.table import Table

from pausepoint.system import trace as tr
from pausepoint_conformance.cli.common import (
    UsageError,
    existing_dir,
    positive_int,
    progress_bar,
    readable_file,
)
from pausepoint_conformance.cli.common import console as out_console
from pausepoint_conformance.modelcheck import lockstep as mc

NAME = "check"
HELP = "model checking: Python model vs TLA+ spec (lockstep), traces, TLC when given"


def _progress(bar: Progress, task: TaskID) -> Callable[[int, int], None]:
    """Report an exploration's states and depth on ``task`` of ``bar``."""
    def update(states: int, depth: int) -> None:
        bar.update(task, completed=states, depth=depth)
    return update


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--tlc", metavar="JAR",
                        help="path to tla2tools.jar: also run TLC over every model "
                             "(default: $TLA2TOOLS_JAR if set)")
    parser.add_argument("--record", action="store_true",
                        help="with TLC: rewrite the manifest's TLC figures, results/ and the "
                             "recorded state sets from what TLC says now")
    parser.add_argument("--model", action="append", metavar="NAME",
                        help="only this manifest model (repeatable)")
    parser.add_argument("--trace", action="append", metavar="FILE", type=Path,
                        help="validate this NDJSON trace against the Python model "
                             "(repeatable; replaces the recorded traces); with --tlc, TLC "
                             "checks it against TracePausepoint too")
    parser.add_argument("--tla-dir", type=Path, default=mc.TLA_DIR,
                        help="the directory of the spec and manifest (default: %(default)s)")
    parser.add_argument("--workers", type=positive_int, default=1, help="TLC workers (default: 1)")


def _manifest(tla_dir: Path) -> dict[str, Any]:
    """The manifest of ``tla_dir``, or a usage error naming what is wrong with it."""
    existing_dir(tla_dir, "--tla-dir")
    if not (tla_dir / mc.MANIFEST).is_file():
        raise UsageError(f"--tla-dir {tla_dir}: no {mc.MANIFEST} there; give the spec's "
                         "folder (tla/ of the repository)")
    text = readable_file(tla_dir / mc.MANIFEST, "--tla-dir")
    try:
        manifest = json.loads(text)
    except ValueError as exc:
        raise UsageError(f"--tla-dir {tla_dir}: {mc.MANIFEST} is not JSON ({exc}); restore it "
                         "from the repository") from None
    if not isinstance(manifest, dict) or not isinstance(manifest.get("models"), dict):
        raise UsageError(f"--tla-dir {tla_dir}: {mc.MANIFEST} has no \"models\" object; give "
                         "the spec's folder (tla/)")
    return manifest


def _trace(path: Path) -> list[dict[str, Any]]:
    """A trace file's records, or a usage error when it is not an NDJSON trace at all (a trace
    that is well formed but disagrees with the model is a failed check, not a usage error)."""
    try:
        records = tr.parse(readable_file(path, "--trace"))
    except ValueError as exc:
        raise UsageError(f"--trace {path}: not NDJSON ({exc}); a trace is one JSON object per "
                         f"line, the first {{\"format\": \"{tr.FORMAT}\", ...}}") from None
    if not records or not isinstance(records[0], dict) or \
            not all(isinstance(r, dict) for r in records):
        raise UsageError(f"--trace {path}: not a {tr.FORMAT} trace (its lines must be JSON "
                         f"objects, the first {{\"format\": \"{tr.FORMAT}\", ...}})")
    return records


def run(args: argparse.Namespace) -> int:
    console = out_console()
    tla_dir: Path = args.tla_dir
    # Every input is checked before the lockstep (which takes a while) starts.
    manifest = _manifest(tla_dir)
    models: dict[str, Any] = {k: v for k, v in manifest["models"].items()
                              if not args.model or k in args.model}
    if args.model and len(models) != len(set(args.model)):
        unknown = ", ".join(sorted(set(args.model) - set(models)))
        raise UsageError(f"--model: unknown model {unknown}; the models are "
                         f"{', '.join(manifest['models'])}")
    for name, spec in models.items():
        needed = [spec.get("states_file"), *spec.get("traces", [])]
        if spec.get("kind") in ("MC", "SIM"):
            needed += [f"{name}.tla", f"{name}.cfg"]
        missing = [f for f in needed if f and not (tla_dir / f).is_file()]
        if missing:
            raise UsageError(f"--tla-dir {tla_dir}: model {name} needs {', '.join(missing)}, "
                             "which is missing; give a complete copy of the spec's folder")
    given_traces = {p: _trace(p) for p in args.trace or []}
    jar = mc.tlc_jar(args.tlc)
    if args.tlc and jar is None:
        raise UsageError(f"--tlc {args.tlc}: no tla2tools.jar there; download it from "
                         "https://github.com/tlaplus/tlaplus/releases or leave --tlc out")
    if args.record and jar is None:
        raise UsageError("--record needs TLC: give --tlc JAR or set TLA2TOOLS_JAR")
    failed = False

    if args.record and jar is not None:
        mc.record(jar, tla_dir, list(models), workers=args.workers,
                  log=lambda s: console.print(s, markup=False))
        manifest = mc.load_manifest(tla_dir)
        models = {k: v for k, v in manifest["models"].items() if k in models}

    # -- constants ---------------------------------------------------------------------------
    for name, spec in models.items():
        if spec["kind"] in ("MC", "SIM"):
            for p in mc.constants_problems(tla_dir, name, spec):
                failed = True
                console.print(f"[red]constants: {p}")

    # -- sources -----------------------------------------------------------------------------
    for p in mc.source_problems(tla_dir, manifest):
        failed = True
        console.print(f"[red]sources: {p} (re-record: pausepoint check --tlc JAR --record)")

    # -- lockstep ----------------------------------------------------------------------------
    table = Table(
        title="lockstep: pausepoint.system.model / .runmodel explored exhaustively vs TLC's "
              "state set")
    for col in ("model", "distinct py/TLC", "depth py/TLC", "generated py/TLC",
                "invariants", "state sets", "s"):
        table.add_column(col)
    for name, spec in mc.lockstep_models({"models": models}):
        with progress_bar(console, TextColumn("states, depth {task.fields[depth]}")) as bar:
            task = bar.add_task(f"exploring {name}", total=spec["tlc"]["distinct"], depth=1)
            res = mc.lockstep(name, spec, tla_dir, progress=_progress(bar, task))
        ex = res.exploration
        failed |= not res.ok
        inv = ("all hold" if ex.ok else "[red]state bound reached" if ex.verdict == "bound"
               else "[red]" + ", ".join(sorted({v.invariant for v in ex.violations})))
        sets = ("equal" if res.missing == 0 and res.extra == 0
                else f"[red]{res.missing} only in TLC's, {res.extra} only in Python's")
        table.add_row(name, f"{ex.distinct:,} / {res.expected_distinct:,}",
                      f"{ex.depth} / {res.expected_depth}",
                      f"{ex.generated:,} / {spec['tlc'].get('generated') or 0:,}", inv, sets,
                      f"{ex.seconds:.1f}")
        for v in ex.violations[:3]:
            console.print(f"[red]{v.invariant} violated after {len(v.trace)} steps: "
                          + " ".join(f"{a}{list(x)}" for a, x in v.trace), markup=False)
    if table.rows:
        console.print(table)

    # -- traces against the Python model -----------------------------------------------------
    trace_files: list[Path] = list(args.trace or [])
    if not args.trace:
        for spec in models.values():
            trace_files += [tla_dir / t for t in spec.get("traces", [])]
    if trace_files:
        tt = Table(title="traces replayed against pausepoint.system.model")
        for col in ("trace", "lines", "result"):
            tt.add_column(col)
        for path in trace_files:
            val = tr.validate(given_traces.get(path) or tr.parse(path.read_text()))
            failed |= not val.ok
            shown = path.relative_to(tla_dir) if path.is_relative_to(tla_dir) else path
            tt.add_row(str(shown), str(val.lines), "ok" if val.ok else f"[red]{val.message}")
        console.print(tt)

    # -- TLC -----------------------------------------------------------------------------------
    if jar is not None and not args.record:
        tl = Table(title=f"TLC ({jar})")
        tl.add_column("model", no_wrap=True)
        tl.add_column("TLC says", overflow="fold")  # wraps on a narrow terminal
        for col in ("distinct", "depth", "s"):
            tl.add_column(col, no_wrap=True, justify="right")
        tl.add_column("as recorded", overflow="fold")
        # with --trace, TLC checks the trace spec over the given traces only (nothing recorded
        # to compare with: it must pass, every line matched)
        tlc_models = {name: {**spec, "traces": [str(p.resolve()) for p in args.trace]}
                      for name, spec in models.items()
                      if spec["kind"] == "Trace"} if args.trace else models
        for name, spec in tlc_models.items():
            with console.status(f"TLC: {name}"), tempfile.TemporaryDirectory() as tmp:
                dump = Path(tmp) / "states" if spec.get("states_file") else None
                got = mc.check_model_with_tlc(jar, name, spec, tla_dir, workers=args.workers,
                                              dump=dump)
                problems = (mc.compare_tlc(got, spec) if not args.trace else
                            [f"TLC: {got.outcome}"] * (got.outcome != "pass")
                            + ([got.violated] if got.violated else []))
                if dump is not None and got.outcome == "pass":
                    problems += mc.state_set_problems(Path(f"{dump}.dump"), spec, tla_dir)
            failed |= bool(problems)
            said = got.outcome + (f" {got.violated}" if got.violated else "")
            if got.outcome != spec["expect"]:
                said = f"[red]{said} (expected {spec['expect']})"
            tl.add_row(name, said, f"{got.distinct:,}" if got.distinct else "-",
                       "-" if got.depth is None else str(got.depth), f"{got.seconds:.1f}",
                       "yes" if not problems else "[red]" + "; ".join(problems))
            for line in got.result_lines:
                console.print(f"  {name}: {line}", markup=False, highlight=False)
        console.print(tl)
    elif jar is None:
        console.print("TLC not run (no --tlc / TLA2TOOLS_JAR): its recorded results are in "
                      f"{tla_dir / 'results'}")

    console.print("[red]check failed" if failed else "[green]check passed")
    return 1 if failed else 0
