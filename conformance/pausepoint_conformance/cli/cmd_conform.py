"""Verify an implementation of the pausepoint contract, clause by clause.

With no arguments it verifies the embedded reference implementation on SQLite (files in a
temporary directory) and prints a table of every clause: pass, FAIL, not claimed (the
implementation does not claim the clause's group), skipped (the implementation skipped the
optional operation or script step its checks need) -- and why.

Adapters (--adapter):
  reference | reference:sqlite   the embedded reference on SQLite (default)
  reference:memory               the embedded reference on the in-memory store
  cmd:"<command line>"           an implementation in any language, speaking the stdio
                                 protocol (spec/adapter-protocol.md) as a subprocess; a crash,
                                 a hang (--timeout) or garbage output is reported as errored
  MODULE:CALLABLE                an in-process Python adapter factory (see
                                 pausepoint_conformance.protocol.port.Adapter)
  path/to/file.py:CALLABLE       the same, loaded from a file

The framework peers (LangGraph, Pydantic AI, the OpenAI Agents SDK, llama-index-workflows,
in pausepoint_conformance.peers) need the peers extra: pip install 'pausepoint[peers]'.
The same suite runs inside pytest (pip install pytest): pytest --pausepoint-adapter=SPEC.

Examples:
  pausepoint conform
  pausepoint conform --adapter reference:memory --json report.jsonl --junit report.xml
  pausepoint conform --adapter cmd:"python -m pausepoint_conformance.adapters.stdio_reference"
  pausepoint conform --adapter cmd:"node my-adapter.js" --timeout 5
  pausepoint scenarios --out vectors && pausepoint conform --vectors vectors
  pausepoint conform --only tokens/ --only expiry/
  pausepoint conform --vectors vectors --no-checks

Exit status:
  0  every clause the implementation claims passed, and at least one check or vector ran
     and passed; with --only or
     --no-checks, clauses that nothing selected cites are reported untested instead
  1  some claimed clause failed, errored or was only skipped; or nothing ran
  2  bad input, reported in one line on stderr before anything runs: an unknown adapter
     spelling, an adapter that cannot be loaded or started, an unreadable vector file, an
     output path that cannot be written, a selection that selects nothing
"""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console
from rich.progress import TextColumn

from pausepoint_conformance.adapters.loader import make_adapter
from pausepoint_conformance.cli.common import (
    UsageError,
    console,
    existing_dir,
    positive_float,
    progress_bar,
    show_progress,
    writable_file,
)
from pausepoint_conformance.suite.framework import CHECKS, CaseOutcome, CaseResult
from pausepoint_conformance.suite.report import print_summary, write_jsonl, write_junit
from pausepoint_conformance.suite.runner import Plan, SuiteResult, run_suite
from pausepoint_conformance.vectors.replay import VectorFileError

NAME = "conform"
HELP = "verify an implementation against every clause (default: the embedded reference)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--adapter", default="reference:sqlite", metavar="SPEC",
                        help="what to verify (default reference:sqlite; see Adapters above)")
    parser.add_argument("--vectors", action="append", default=[], metavar="PATH",
                        help="also replay scenario vectors from this file or directory "
                             "(repeatable); made by `pausepoint scenarios`")
    parser.add_argument("--no-checks", action="store_true",
                        help="run only the vectors, not the built-in checks")
    parser.add_argument("--only", action="append", default=[], metavar="TEXT",
                        help="run only checks whose id contains TEXT (e.g. tokens, "
                             "concurrency/); repeatable")
    parser.add_argument("--json", type=Path, metavar="FILE",
                        help="write the report as JSON Lines (header, cases, clauses, footer)")
    parser.add_argument("--junit", type=Path, metavar="FILE", help="write JUnit XML")
    parser.add_argument("--timeout", type=positive_float, default=30.0, metavar="SECONDS",
                        help="timeout of every exchange with a cmd: adapter, the hello "
                             "handshake included (default 30)")
    parser.add_argument("--scratch", metavar="DIR",
                        help="where the embedded reference keeps its SQLite files (default: "
                             "the system's temporary directory; they are removed afterwards)")
    parser.add_argument("--no-table", action="store_true",
                        help="do not print the clause table (failures and the summary still "
                             "print)")
    parser.add_argument("--quiet", "-q", action="store_true",
                        help="no progress bar, no table: just failures and the summary")


def _plan(args: argparse.Namespace) -> Plan:
    from pausepoint_conformance.vectors.replay import load_files, vector_paths

    checks = [] if args.no_checks else [
        c for c in CHECKS if not args.only or any(t in c.id for t in args.only)]
    vectors = []
    for where in args.vectors:
        if not Path(where).exists():
            raise UsageError(f"--vectors {where}: does not exist; give a vector file or a "
                             "folder made by `pausepoint scenarios --out`")
        paths = vector_paths(Path(where))
        if not paths:
            raise UsageError(f"--vectors {where}: no vector files (*.json) there; make some "
                             "with `pausepoint scenarios --out`")
        vectors.extend(load_files(paths))
    if not checks and not vectors:
        what = f"--only {' '.join(args.only)}" if args.only else "--no-checks without --vectors"
        raise UsageError(f"nothing selected: {what} selects no check or vector; "
                         "`pausepoint clauses` lists the clause ids, check ids start with "
                         "their group (tokens/, expiry/, ...)")
    return Plan(checks=tuple(checks), vectors=tuple(vectors),
                selection=bool(args.only or args.no_checks))


def conform(adapter_spec: str, plan: Plan, *, timeout: float = 30.0,
            console: Console | None = None, progress: bool = True,
            scratch: str | None = None) -> SuiteResult:
    """Run the plan against the adapter the spelling names, with an optional progress bar."""
    adapter, name = make_adapter(adapter_spec, timeout=timeout, scratch=scratch)
    try:
        if not progress or console is None:
            return run_suite(adapter, adapter_name=name, plan=plan)
        with progress_bar(console, TextColumn("{task.fields[status]}")) as bar:
            task = bar.add_task(f"conform {name}", total=plan.size, status="")
            bad = 0

            def on_case(case: CaseResult) -> None:
                nonlocal bad
                if case.outcome in (CaseOutcome.FAILED, CaseOutcome.ERRORED):
                    bad += 1
                bar.update(task, advance=1,
                           status=f"[red]{bad} failed[/red]" if bad else "[green]ok[/green]")
            return run_suite(adapter, adapter_name=name, plan=plan, on_case=on_case)
    finally:
        adapter.close()


def run(args: argparse.Namespace) -> int:
    out = console()
    # Everything that could make the run's results unusable is checked before it starts.
    if args.json:
        writable_file(args.json, "--json")
    if args.junit:
        writable_file(args.junit, "--junit")
    if args.scratch is not None:
        existing_dir(Path(args.scratch), "--scratch")
    try:
        plan = _plan(args)
    except VectorFileError as exc:
        raise UsageError(str(exc)) from None
    result = conform(args.adapter, plan, timeout=args.timeout, console=out,
                     progress=show_progress(out, args.quiet), scratch=args.scratch)
    if args.json:
        with args.json.open("w", encoding="utf-8") as f:
            write_jsonl(result, f)
    if args.junit:
        write_junit(result, args.junit)
    # A failed handshake already says why, once: a table of every clause errored adds nothing.
    handshake_failed = bool(result.header.get("error"))
    print_summary(result, out,
                  show_table=not (args.no_table or args.quiet or handshake_failed))
    return result.exit_status
