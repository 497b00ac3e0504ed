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
  2  bad arguments (an unknown adapter spelling, an unreadable vector file)
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from pausepoint_conformance.adapters.loader import AdapterSpecError, make_adapter
from pausepoint_conformance.suite.framework import CHECKS, CaseOutcome, CaseResult
from pausepoint_conformance.suite.report import print_summary, write_jsonl, write_junit
from pausepoint_conformance.suite.runner import Plan, SuiteResult, run_suite

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
    parser.add_argument("--timeout", type=float, default=30.0, metavar="SECONDS",
                        help="per-operation timeout for cmd: adapters (default 30)")
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
        paths = vector_paths(Path(where))
        if not paths:
            raise AdapterSpecError(f"no vector files (*.json) at {where}")
        vectors.extend(load_files(paths))
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
        with Progress(TextColumn("[bold]{task.description}"), BarColumn(),
                      MofNCompleteColumn(), TextColumn("{task.fields[status]}"),
                      TimeElapsedColumn(), console=console, transient=True) as bar:
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
    wide = sys.stdout.isatty() or "COLUMNS" in os.environ
    console = Console() if wide else Console(width=140)
    try:
        plan = _plan(args)
    except (AdapterSpecError, OSError, ValueError) as exc:
        console.print(f"[red]pausepoint conform: {exc}[/red]")
        return 2
    try:
        result = conform(args.adapter, plan, timeout=args.timeout, console=console,
                         progress=not args.quiet and sys.stdout.isatty(), scratch=args.scratch)
    except AdapterSpecError as exc:
        console.print(f"[red]pausepoint conform: {exc}[/red]")
        return 2
    if args.json:
        with args.json.open("w", encoding="utf-8") as f:
            write_jsonl(result, f)
    if args.junit:
        write_junit(result, args.junit)
    print_summary(result, console, show_table=not (args.no_table or args.quiet))
    return result.exit_status
