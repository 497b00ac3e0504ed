"""Reports, data first: JSON Lines records, from which the terminal table and JUnit XML are
rendered.

JSON Lines (``--json FILE``), one object per line:

* ``{"type": "header", ...}`` -- suite, protocol, adapter, implementation, claimed groups;
* ``{"type": "case", "id": ..., "kind": "check"|"vector", "clauses": [...],
  "outcome": "passed|failed|skipped|errored|not_claimed", ...}`` -- one per check and vector; a
  failure carries ``failed_clause``, ``expected``, ``got`` and ``message``;
* ``{"type": "clause", "id": ..., "verdict": ..., "why": ...}`` -- one per clause of the
  catalogue;
* ``{"type": "footer", "passed": N, "failed": N, "skipped": N, "errored": N,
  "not_claimed": N, "clauses": {...}, "exit_status": 0|1}``.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from pathlib import Path
from typing import IO, Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from pausepoint_conformance.suite.framework import CaseOutcome
from pausepoint_conformance.suite.runner import SuiteResult, Verdict

STYLE = {
    Verdict.PASSED: "green", Verdict.FAILED: "bold red", Verdict.ERRORED: "bold magenta",
    Verdict.SKIPPED: "yellow", Verdict.INCONCLUSIVE: "yellow", Verdict.NOT_CLAIMED: "dim",
    Verdict.UNTESTED: "yellow",
}
LABEL = {
    Verdict.PASSED: "pass", Verdict.FAILED: "FAIL", Verdict.ERRORED: "ERROR",
    Verdict.SKIPPED: "skipped", Verdict.INCONCLUSIVE: "inconclusive",
    Verdict.NOT_CLAIMED: "not claimed",
    Verdict.UNTESTED: "untested",
}


def write_jsonl(result: SuiteResult, out: IO[str]) -> None:
    for rec in result.records():
        out.write(json.dumps(rec, sort_keys=False, separators=(",", ":")) + "\n")


def read_jsonl(lines: Iterable[str]) -> list[dict[str, Any]]:
    return [json.loads(line) for line in lines if line.strip()]


def junit_xml(result: SuiteResult) -> str:
    counts = result.counts()
    suite = ET.Element("testsuite", {
        "name": "pausepoint-conformance",
        "tests": str(len(result.cases)),
        "failures": str(counts["failed"]),
        "errors": str(counts["errored"]),
        "skipped": str(counts["skipped"] + counts["not_claimed"]),
        "time": f"{result.duration_s:.3f}",
    })
    props = ET.SubElement(suite, "properties")
    impl = result.header.get("implementation") or {}
    for k, v in (("adapter", result.header.get("adapter", "")),
                 ("implementation", f"{impl.get('name', '?')} {impl.get('version', '')}"),
                 ("claimed", ",".join(result.header.get("claimed", [])))):
        ET.SubElement(props, "property", {"name": k, "value": str(v)})
    for c in result.cases:
        group = c.groups[-1] if c.groups else "core"
        tc = ET.SubElement(suite, "testcase", {
            "classname": f"pausepoint.{c.kind}.{c.source.removesuffix('.json') or group}",
            "name": f"{c.id}: {c.description}",
            "time": f"{c.duration_s:.4f}"})
        tcp = ET.SubElement(tc, "properties")
        ET.SubElement(tcp, "property", {"name": "clauses", "value": " ".join(c.clauses)})
        if c.outcome == CaseOutcome.FAILED:
            f = ET.SubElement(tc, "failure", {
                "message": f"{c.failed_clause}: {c.message}", "type": c.failed_clause or ""})
            f.text = (f"clause: {c.failed_clause}\n"
                      f"expected: {json.dumps(c.record().get('expected'))}\n"
                      f"got: {json.dumps(c.record().get('got'))}\n")
        elif c.outcome == CaseOutcome.ERRORED:
            e = ET.SubElement(tc, "error", {"message": c.message.splitlines()[0]
                                            if c.message else "errored"})
            e.text = c.message
        elif c.outcome in (CaseOutcome.SKIPPED, CaseOutcome.NOT_CLAIMED):
            ET.SubElement(tc, "skipped", {"message": f"{c.outcome.value}: {c.message}"})
    root = ET.Element("testsuites")
    root.append(suite)
    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def write_junit(result: SuiteResult, path: Path) -> None:
    path.write_text(junit_xml(result), encoding="utf-8")


def clause_table(result: SuiteResult) -> Table:
    impl = result.header.get("implementation") or {}
    title = (f"pausepoint conformance: {impl.get('name', result.header.get('adapter'))} "
             f"{impl.get('version', '')}".strip())
    table = Table(title=title, show_lines=False, expand=False)
    table.add_column("clause", overflow="fold", no_wrap=True)
    table.add_column("group", style="dim")
    table.add_column("verdict")
    table.add_column("why", overflow="fold")
    for v in result.clauses:
        table.add_row(v.id, v.group, Text(LABEL.get(v.verdict, v.verdict),
                                          style=STYLE.get(v.verdict, "")), v.why)
    return table


def print_summary(result: SuiteResult, console: Console, *, show_table: bool = True,
                  max_failures: int = 10) -> None:
    if result.header.get("error"):
        console.print(Text(f"handshake failed: {result.header['error']}", style="bold red"))
    if show_table:
        console.print(clause_table(result))
    failures = [c for c in result.cases if c.outcome in (CaseOutcome.FAILED, CaseOutcome.ERRORED)]
    for c in failures[:max_failures]:
        head = Text(f"{c.outcome.value.upper()} {c.kind} {c.id}", style="bold red")
        head.append(f"  {c.description}", style="")
        console.print(head)
        if c.outcome == CaseOutcome.FAILED:
            rec = c.record()
            console.print(f"  clause:   {c.failed_clause}\n  what:     {c.message}\n"
                          f"  expected: {json.dumps(rec['expected'])[:400]}\n"
                          f"  got:      {json.dumps(rec['got'])[:400]}", markup=False,
                          highlight=False)
            for clause_id, message in c.also_failed:
                console.print(f"  also:     {clause_id}: {message}", markup=False,
                              highlight=False)
        else:
            console.print("  " + "\n  ".join(c.message.strip().splitlines()[-8:]),
                          markup=False, highlight=False)
    if len(failures) > max_failures:
        console.print(f"... and {len(failures) - max_failures} more (see --json)")
    counts = result.counts()
    verdicts: dict[str, int] = {}
    for v in result.clauses:
        verdicts[v.verdict] = verdicts.get(v.verdict, 0) + 1
    status = result.exit_status
    line = Text("cases: " + ", ".join(f"{n} {k}" for k, n in counts.items() if n)
                + " | clauses: " + ", ".join(f"{n} {LABEL.get(k, k)}"
                                              for k, n in verdicts.items())
                + f" | {result.duration_s:.2f} s", style="bold")
    console.print(line)
    console.print(Text("every claimed clause passed" if status == 0 else
                       "NOT CONFORMANT: some claimed clause did not pass (exit status 1)",
                       style="bold green" if status == 0 else "bold red"))
