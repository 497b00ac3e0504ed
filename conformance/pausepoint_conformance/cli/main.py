"""The ``pausepoint`` command line: one entry point, one module per subcommand.

Each subcommand module defines ``NAME``, ``HELP``, ``add_arguments(parser)`` and
``run(args) -> int``; this file only lists them.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from types import ModuleType

from pausepoint_conformance.adapters.loader import AdapterSpecError
from pausepoint_conformance.cli.common import Parser, UsageError, err_console

SUBCOMMANDS: tuple[str, ...] = (
    "pausepoint_conformance.cli.cmd_clauses",
    "pausepoint_conformance.cli.cmd_conform",
    "pausepoint_conformance.cli.cmd_scenarios",
    "pausepoint_conformance.cli.cmd_fuzz",
    "pausepoint_conformance.cli.cmd_check",
    "pausepoint_conformance.cli.cmd_diagram",
    "pausepoint_conformance.cli.cmd_demo",
)

DESCRIPTION = """\
pausepoint: the interrupt contract for agent harnesses, made executable.

Start with `pausepoint conform`: it verifies the embedded reference implementation (SQLite)
against every clause of the contract and prints a clause table.  `pausepoint clauses` lists
the clauses themselves.
"""


def _load() -> list[ModuleType]:
    return [importlib.import_module(name) for name in SUBCOMMANDS]


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="pausepoint", description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version="pausepoint 0.1.0")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for mod in _load():
        p = sub.add_parser(mod.NAME, help=mod.HELP, description=mod.__doc__,
                           formatter_class=argparse.RawDescriptionHelpFormatter)
        mod.add_arguments(p)
        p.set_defaults(_run=mod.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "_run", None) is None:
        parser.print_help()
        return 2
    try:
        code: int = args._run(args)
    except (UsageError, AdapterSpecError) as exc:
        err_console().print(f"pausepoint {args.command}: {exc}", markup=False, soft_wrap=True)
        return 2
    return code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
