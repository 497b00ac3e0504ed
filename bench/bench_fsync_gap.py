"""Benchmark: what one fsync costs after the disk has been idle for a while.  It prints figures;
it asserts nothing about time.

Some disks -- a VM's virtual disk above all, whose requests a host thread serves -- answer the
first flush after an idle stretch more slowly than one that follows another at once.  A cycle
whose two commits sit apart (the pause's, then the resume's after a verify and the Python
between) pays that on each; a floor that times two commits back to back pays it once at most;
LangGraph's seven commits, a millisecond apart, pay some of it on each.  ``bench_cold.py``'s
"cold" samples follow a spin of a few milliseconds, so their penalty holds this one too, beside
the cost of cold caches.

Each sample writes one page to a file on the real disk and ``fdatasync``s it (what a WAL
commit does, without SQLite), right after an idle gap of ``G`` ms -- a busy spin, or with
``--sleep`` a sleep -- and then does it once more at once, for comparison.  Each round takes one
sample of every gap, in an order shuffled anew each round.

Usage::

    python bench/bench_fsync_gap.py                       # gaps 0,1,2,5,20 ms; 200 rounds
    python bench/bench_fsync_gap.py --gaps 0,0.5,1,10 --rounds 400 --sleep --dir /var/tmp
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from collections.abc import Callable, Sequence

from rich.console import Console
from rich.table import Table

from benchkit import Summary, add_round_options, disk_scratch, load_average, spin

PAGE = 4096
"""Bytes written before each flush: one page (a WAL frame of the stores' 2 KB pages fits)."""


def run(path: str, gaps: Sequence[float], rounds: int, warmup: int,
        wait: Callable[[float], None] = spin, seed: int = 0
        ) -> dict[float, tuple[list[float], list[float]]]:
    """``{gap in seconds: (first flush after the gap, the flush right after it)}``, in
    seconds, over ``rounds`` shuffled rounds, on a file at ``path``."""
    rng = random.Random(seed)
    order = list(gaps)
    out: dict[float, tuple[list[float], list[float]]] = {g: ([], []) for g in gaps}
    page = b"\x5a" * PAGE
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        slot = 0
        for r in range(warmup + rounds):
            rng.shuffle(order)
            for gap in order:
                slot = (slot + 2) % 64  # a few hundred KB, rewritten: the file stays small
                if gap:
                    wait(gap)
                t0 = time.perf_counter()
                os.pwrite(fd, page, slot * PAGE)
                os.fdatasync(fd)
                t1 = time.perf_counter()
                os.pwrite(fd, page, (slot + 1) * PAGE)
                os.fdatasync(fd)
                t2 = time.perf_counter()
                if r >= warmup:
                    out[gap][0].append(t1 - t0)
                    out[gap][1].append(t2 - t1)
    finally:
        os.close(fd)
    return out


def gap_list(parser: argparse.ArgumentParser, text: str) -> list[float]:
    """``--gaps``: different numbers of milliseconds from 0 to 1000, separated by commas."""
    try:
        values = [float(x) for x in text.split(",")]
    except ValueError:
        parser.error(f"--gaps takes milliseconds separated by commas, not {text!r}")
    if any(not 0 <= v <= 1000 for v in values) or len(set(values)) != len(values):
        parser.error(f"--gaps takes different milliseconds from 0 to 1000, not {text!r}")
    return values


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    add_round_options(parser, rounds=200)
    parser.add_argument("--gaps", default="0,1,2,5,20",
                        help="idle gaps before a flush, in ms (default 0,1,2,5,20)")
    parser.add_argument("--sleep", action="store_true",
                        help="sleep through each gap instead of spinning (the CPU idles too)")
    args = parser.parse_args(argv)
    gaps_ms = gap_list(parser, args.gaps)
    if args.rounds < 1 or args.warmup < 0:
        parser.error("--rounds must be at least 1 and --warmup at least 0")
    console = Console()
    start = load_average()
    with disk_scratch(args.dir) as (directory, fs):
        samples = run(os.path.join(directory, "flush.bin"), [g / 1e3 for g in gaps_ms],
                      args.rounds, args.warmup, time.sleep if args.sleep else spin)
    console.print(f"disk: {fs.describe()}; {args.rounds} rounds, gaps "
                  f"{'slept' if args.sleep else 'spun'}; load average {start[0]:.2f} at start, "
                  f"{load_average()[0]:.2f} at end")
    table = Table(title=f"one {PAGE}-byte write + fdatasync, median (p95) in us")
    for column in ("idle gap before (ms)", "first flush after the gap", "the next, at once",
                   "first / next"):
        table.add_column(column, justify="right")
    for ms in gaps_ms:
        first, after = (Summary.of(s) for s in samples[ms / 1e3])
        table.add_row(f"{ms:g}", f"{first.median * 1e6:.0f} ({first.p95 * 1e6:.0f})",
                      f"{after.median * 1e6:.0f} ({after.p95 * 1e6:.0f})",
                      f"{first.median / after.median:.2f}")
    console.print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
