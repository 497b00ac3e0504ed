"""List every clause of the contract with its one-line summary, and whether the TLA+ model
checks it (column TLA+: a property of tla/Pausepoint.tla and of pausepoint.system.model names
the clause, and a seeded design bug shows the property bites).

Examples:
  pausepoint clauses                 # a table: id, group, level, TLA+, summary
  pausepoint clauses --group tokens  # only one clause group
  pausepoint clauses --json          # [{"id": ..., "summary": ..., "model_checked": [...]}, ...]
"""

from __future__ import annotations

import argparse
import json

from rich.table import Table

from pausepoint.core.clauses import CLAUSES, Group
from pausepoint.system.model import model_checked
from pausepoint_conformance.cli.common import console

NAME = "clauses"
HELP = "list every clause id with its one-line summary"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true",
                        help='print a JSON list of {"id": ..., "summary": ..., '
                             '"model_checked": [property, ...]} objects')
    parser.add_argument("--group", choices=[g.value for g in Group],
                        help="only the clauses of this group")


def run(args: argparse.Namespace) -> int:
    chosen = [c for c in CLAUSES if args.group is None or c.group.value == args.group]
    checked = model_checked()
    if args.json:
        print(json.dumps([{"id": c.id, "summary": c.summary,
                           "model_checked": list(checked.get(c.id, ()))} for c in chosen],
                         indent=2))
        return 0
    n = sum(1 for c in chosen if c.id in checked)
    table = Table(title=f"pausepoint contract: {len(chosen)} clauses, {n} model-checked "
                        "(TLA+)")
    # Ids are what people copy: never fold one across lines.
    table.add_column("id", no_wrap=True, min_width=max((len(c.id) for c in chosen), default=2))
    table.add_column("group", no_wrap=True)
    table.add_column("level", no_wrap=True)
    table.add_column("TLA+", no_wrap=True)
    table.add_column("summary", overflow="fold")
    for c in chosen:
        table.add_row(c.id, c.group.value, c.level.value, "yes" if c.id in checked else "",
                      c.summary)
    console().print(table)
    return 0
