"""List every clause of the contract with its one-line summary.

Examples:
  pausepoint clauses                 # a table: id, group, level, summary
  pausepoint clauses --group tokens  # only one clause group
  pausepoint clauses --json          # [{"id": ..., "summary": ...}, ...]
"""

from __future__ import annotations

import argparse
import json

from rich.table import Table

from pausepoint.core.clauses import CLAUSES, Group
from pausepoint_conformance.cli.common import console

NAME = "clauses"
HELP = "list every clause id with its one-line summary"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true",
                        help='print a JSON list of {"id": ..., "summary": ...} objects')
    parser.add_argument("--group", choices=[g.value for g in Group],
                        help="only the clauses of this group")


def run(args: argparse.Namespace) -> int:
    chosen = [c for c in CLAUSES if args.group is None or c.group.value == args.group]
    if args.json:
        print(json.dumps([{"id": c.id, "summary": c.summary} for c in chosen], indent=2))
        return 0
    table = Table(title=f"pausepoint contract: {len(chosen)} clauses")
    # Ids are what people copy: never fold one across lines.
    table.add_column("id", no_wrap=True, min_width=max((len(c.id) for c in chosen), default=2))
    table.add_column("group", no_wrap=True)
    table.add_column("level", no_wrap=True)
    table.add_column("summary", overflow="fold")
    for c in chosen:
        table.add_row(c.id, c.group.value, c.level.value, c.summary)
    console().print(table)
    return 0
