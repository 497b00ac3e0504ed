"""What every subcommand shares: the usage error, the consoles, argument checks, progress bars.

A subcommand raises :class:`UsageError` (or the loader's
:class:`~pausepoint_conformance.adapters.loader.AdapterSpecError`) for bad input; ``main``
prints it as one line on stderr -- the input, what is wrong, what to do -- and exits 2.
Inputs that decide where results go (``--json``, ``--junit``, ``--out``, ``--scratch``) are
checked *before* the run starts, so a long run's results are never lost to a typo.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import NoReturn

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    TextColumn,
    TimeElapsedColumn,
)

# Wide enough that no table column (model names, clause ids) is cut in a pipe or a CI log;
# rich only uses what a table needs, so nothing is padded to this width.
PIPE_WIDTH = 200


class UsageError(Exception):
    """Bad input on the command line: exit status 2, one line on stderr."""


class Parser(argparse.ArgumentParser):
    """argparse, with its errors on one line (``pausepoint conform: --timeout: ...``)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {message} (see {self.prog} --help)\n")


def console() -> Console:
    """The console for results: full width on a terminal, :data:`PIPE_WIDTH` in files and
    pipes (unless ``COLUMNS`` says otherwise)."""
    if sys.stdout.isatty() or "COLUMNS" in os.environ:
        return Console()
    return Console(width=PIPE_WIDTH)


def err_console() -> Console:
    """The console for errors and warnings: stderr."""
    return Console(stderr=True, highlight=False)


def show_progress(out: Console, quiet: bool = False) -> bool:
    """Draw progress bars only on a terminal (a bar in a log file is noise)."""
    return not quiet and out.is_terminal


@contextmanager
def progress_bar(out: Console, *extra: ProgressColumn | str,
                 enabled: bool = True) -> Iterator[Progress]:
    """A transient rich progress bar (description, bar, n/total, extra columns, elapsed time),
    disabled when ``enabled`` is false or ``out`` is not a terminal."""
    columns: list[ProgressColumn | str] = [TextColumn("[bold]{task.description}"), BarColumn(),
                                           MofNCompleteColumn(), *extra, TimeElapsedColumn()]
    with Progress(*columns, console=out, transient=True,
                  disable=not (enabled and out.is_terminal)) as bar:
        yield bar


# -- argument types ----------------------------------------------------------------------------


def _positive(text: str, convert: Callable[[str], float], kind: str, floor: str) -> float:
    try:
        value = convert(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not {kind}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be {floor}, got {text}")
    return value


def positive_int(text: str) -> int:
    """An argparse type: a whole number of at least 1."""
    return int(_positive(text, int, "a whole number", "at least 1"))


def positive_float(text: str) -> float:
    """An argparse type: a number of seconds above 0."""
    return _positive(text, float, "a number", "a number of seconds above 0")


# -- paths, checked before a run -----------------------------------------------------------------


def _fail(option: str, path: Path, why: str, todo: str) -> NoReturn:
    raise UsageError(f"{option} {path}: {why}; {todo}")


def writable_file(path: Path, option: str) -> None:
    """``path`` can be written: its folder exists and is writable, and it is not a folder."""
    parent = path.parent if str(path.parent) else Path(".")
    if path.is_dir():
        _fail(option, path, "is a folder", "give a file name")
    if not parent.exists():
        _fail(option, path, f"the folder {parent} does not exist", "create it first")
    if not parent.is_dir():
        _fail(option, path, f"{parent} is not a folder", "give a path inside a folder")
    if not os.access(parent, os.W_OK | os.X_OK) or (path.exists()
                                                    and not os.access(path, os.W_OK)):
        _fail(option, path, "cannot be written", "choose a writable place")


def existing_dir(path: Path, option: str) -> None:
    if not path.exists():
        _fail(option, path, "does not exist", "create the folder or give another")
    if not path.is_dir():
        _fail(option, path, "is not a folder", "give a folder")


def output_dir(path: Path, option: str) -> None:
    """``path`` is a folder, or can be created as one."""
    if path.exists() and not path.is_dir():
        _fail(option, path, "exists and is not a folder", "give a folder (created if missing)")
    probe = path
    while not probe.exists():
        probe = probe.parent
    if not probe.is_dir() or not os.access(probe, os.W_OK | os.X_OK):
        _fail(option, path, f"cannot be created in {probe}", "choose a writable place")


def readable_file(path: Path, option: str) -> str:
    """The text of ``path``, or a usage error naming it."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        _fail(option, path, "does not exist", "check the path")
    except IsADirectoryError:
        _fail(option, path, "is a folder", "give a file")
    except (OSError, UnicodeDecodeError) as exc:
        _fail(option, path, f"cannot be read ({exc})", "check the file")


def one_line(exc: BaseException) -> str:
    """An exception as one line: its type and its first line."""
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


__all__ = ["PIPE_WIDTH", "Parser", "UsageError", "console", "err_console", "existing_dir",
           "one_line", "output_dir", "positive_float", "positive_int", "progress_bar",
           "readable_file", "show_progress", "writable_file"]
